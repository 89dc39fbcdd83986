// Private: validation of shape-collision input and the tables every backend builds from it (cloth
// table with grid and workgroup offsets, global capsule indices, the sphere -> capsules CSR, the
// convexes' global plane indices).
#pragma once

#include <vector>

#include "shared/collide_shapes.h"
#include "vkcollide/collide_shapes.h"

namespace vkc::detail {

struct ShapesLayout {
  std::vector<gpu::ShapeCloth> cloths;
  std::vector<gpu::CapsuleSpheres> capsules;  // global sphere indices
  std::vector<uint32_t> sphereCapsules;       // per cloth: sphereCount + 1 offsets, then local capsule indices
  uint32_t sphereCount = 0;                   // in all cloths
  uint32_t capsuleCount = 0;
  uint32_t maskWordCount = 0;
  uint32_t groupCount = 0;  // collide workgroups of kShapesGroupSize particles
  std::vector<gpu::ShapeConvex> convexes;  // global
  std::vector<uint32_t> convexPlanes;      // global plane indices
  uint32_t planeCount = 0;                 // in all cloths
  uint32_t convexWordCount = 0;            // convex bits of all cloths
};

// The tables of validated colliders (counts, capsules and convexes; not the values).
ShapesLayout makeShapesLayout(std::span<const ClothRange> cloths, std::span<const ClothColliders> colliders);

// What a stage keeps of its colliders' layout, to check each record()'s colliders against.
struct ColliderLayout {
  uint32_t spheres = 0;
  uint32_t planes = 0;
  std::vector<Capsule> capsules;
  std::vector<std::vector<uint32_t>> convexes;
};
std::vector<ColliderLayout> colliderLayout(std::span<const ClothColliders> colliders);
// Whether `colliders` have this layout (counts, capsules, convexes' plane indices).
bool sameColliderLayout(std::span<const ColliderLayout> layout, std::span<const ClothColliders> colliders);

// Planes of all cloths, normalized (normal and offset divided by the normal's length), at the
// frame's start (prevPlanes, or planes when empty: first planeCount) and end (next planeCount).
void packRawPlanes(std::span<const ClothColliders> colliders, std::vector<gpu::vec4>& out);
// Planes of all cloths at the iteration's start (first planeCount) and end (next planeCount).
void interpolatePlanes(std::span<const ClothColliders> colliders, float alphaBegin, float alphaEnd,
                       std::vector<gpu::vec4>& out);

// Spheres of all cloths at the iteration's start (first sphereCount) and end (next sphereCount).
void interpolateSpheres(std::span<const ClothColliders> colliders, float alphaBegin, float alphaEnd,
                        std::vector<gpu::vec4>& out);

// The frame's raw spheres of all cloths as the GPU takes them: starts (prevSpheres, or spheres when
// empty), then ends.
void packRawSpheres(std::span<const ClothColliders> colliders, std::vector<gpu::vec4>& out);

uint32_t shapeFlags(const ShapeCollisionSettings& s);

Status validateShapeSettings(const ShapeCollisionSettings& s);
// validate(ShapeCollisionInput) without reading the particles' values: settings, sizes, cloth ranges,
// colliders (validate() then checks particles and prevParticles with validateParticles).
Status validateShapeLayout(const ShapeCollisionInput& in);
// Colliders of `clothCount` cloths: finite spheres, radii >= 0, capsule indices, finite planes with
// non-zero normals that do not turn over within the frame, non-empty convexes of valid plane indices.
Status validateColliders(std::span<const ClothColliders> colliders, size_t clothCount);

}  // namespace vkc::detail
