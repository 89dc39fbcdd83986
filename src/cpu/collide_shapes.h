// Private: the CPU twin of shaders/collide_shapes.comp, pass by pass, on prepared tables. The Vulkan
// stage and the tests use the pieces; collideShapesCpu runs them all.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "scene/shapes_layout.h"
#include "shared/collide_shapes.h"

namespace vkc::cpu {

// Everything the passes share, prepared from a validated input.
struct ShapesState {
  detail::ShapesLayout layout;
  std::vector<gpu::vec4> spheres;  // 2 * sphereCount: the iteration's start, then its end
  std::vector<gpu::Cone> cones;    // 2 * capsuleCount: likewise
  std::vector<gpu::vec4> planes;   // 2 * planeCount: likewise (normalized)
  std::vector<gpu::ShapeGrid> grids;
  std::vector<uint32_t> masks;
  std::vector<uint32_t> convexBits;  // per cloth, its convexes that can reach its particles' box
  uint32_t flags = 0;
};

// Checks the values of particles (finite, inverse mass >= 0) through valuesSuspiciousSimd (kCpuSimd)
// or the bounds stage's keys; where a cloth's values are suspicious, detail::validateParticles names
// the first bad value (`array`: the field name in the message).
Status checkParticleValues(std::span<const Float4> particles, std::span<const ClothRange> cloths, Backend backend,
                           const char* array);

// Whether count float4 values may hold a non-finite coordinate or a negative inverse mass (w; -0
// counts as suspicious here), with Highway SIMD: 1 or 0, -1 where no SIMD target can tell (a
// scalar-only build, vectors not a multiple of 4 lanes). One AND and one MAX a vector: cheaper than
// the bounds keys where no box is wanted.
int valuesSuspiciousSimd(const Float4* values, size_t count);

// Prepares spheres, cones, planes, grids, masks and convex bits. `particleBounds[c]` is cloth c's box (with the previous
// positions when continuous).
void prepareShapes(const ShapeCollisionInput& in, std::span<const Aabb> particleBounds, ShapesState& state);
// The same in two steps (the threaded backend prepares each cloth on the task that collides it): what
// every cloth shares (layout, spheres, cones, planes; grids, masks and convex bits sized and zeroed),
// then cloth c's grid, mask words and convex bits from its box (disjoint from every other cloth's).
void prepareShapesShared(const ShapeCollisionInput& in, ShapesState& state);
void prepareShapeCloth(ShapesState& state, uint32_t cloth, const Aabb& particleBounds);

// Collides the particles of cloth c (scalar reference): its cloth-local particles [begin, min(end,
// count)) (the whole cloth by default; the threaded backend passes chunks).
void collideClothScalar(const ShapesState& state, uint32_t cloth, const ShapeCollisionSettings& settings,
                        Float4* particles, Float4* prevParticles, uint32_t begin = 0, uint32_t end = UINT32_MAX);

// The same with Highway SIMD across particles (src/cpu/collide_shapes_simd.cpp; runtime dispatch):
// positions within kShapeCollisionTolerance of the scalar twin. The scalar loop where the build has
// no SIMD (VKC_SIMD=OFF). A chunk [begin, end) must start at a multiple of 64 (of every vector
// width), so that its batches are the whole cloth's: the same lanes, the same bits.
void collideClothSimd(const ShapesState& state, uint32_t cloth, const ShapeCollisionSettings& settings,
                      Float4* particles, Float4* prevParticles, uint32_t begin = 0, uint32_t end = UINT32_MAX);

// For tests: calls fn(target name) once per SIMD target that this build compiled and this CPU runs,
// with Highway's runtime dispatch forced to that target meanwhile (collideClothSimd then runs it);
// restores normal dispatch afterwards. A scalar-only build calls fn once ("none (VKC_SIMD=OFF)").
void forEachSimdTarget(const std::function<void(const char* target)>& fn);

}  // namespace vkc::cpu
