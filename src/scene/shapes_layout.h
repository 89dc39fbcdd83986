// Private: validation of shape-collision input and the tables every backend builds from it (cloth
// table with grid and workgroup offsets, global capsule indices, the sphere -> capsules CSR).
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
};

// `sphereCounts[c]` and `capsules[c]` of cloth c.
ShapesLayout makeShapesLayout(std::span<const ClothRange> cloths, std::span<const ClothColliders> colliders);

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
// Colliders of `clothCount` cloths: finite spheres, radii >= 0, capsule indices.
Status validateColliders(std::span<const ClothColliders> colliders, size_t clothCount);
// Whether b has a's sphere counts and capsules (the layout a stage was created with).
bool sameColliderLayout(std::span<const ClothColliders> a, std::span<const ClothColliders> b);

}  // namespace vkc::detail
