// Brute-force references for the mesh stage: the earliest hit of one particle over every triangle
// of a mesh, with the functions of shaders/shared/collide_meshes_math.h. The BVH traversal must give
// the same (triangle, hit) as these.
#pragma once

#include <cstdint>
#include <span>

#include "shared/collide_meshes_math.h"

namespace vkc::test {

// The earliest hit of a query over triangles 0..count-1: testTriangle(i, hit) -> bool.
// Tie rule (gpu::meshHitEarlier): the smallest time, then the smallest triangle index. Returns the
// triangle index, or UINT32_MAX for no hit.
template <class TestTriangle>
uint32_t earliestHitBruteForce(uint32_t count, TestTriangle&& testTriangle, gpu::MeshHit& best) {
  uint32_t bestTriangle = UINT32_MAX;
  best = gpu::meshNoHit();
  for (uint32_t i = 0; i < count; ++i) {
    gpu::MeshHit hit = gpu::meshNoHit();
    if (!testTriangle(i, hit)) continue;
    if (gpu::meshHitEarlier(hit, i, best, bestTriangle)) {
      best = hit;
      bestTriangle = i;
    }
  }
  return bestTriangle;
}

// A mesh: vertex positions at the iteration's start and end (equal spans for a static mesh) and
// indexed triangles (3 indices each).
struct MeshRef {
  std::span<const glm::vec3> start;
  std::span<const glm::vec3> end;
  std::span<const uint32_t> indices;
};

// Static (start only) or deforming (start -> end) mesh: earliest hit of the particle's path from
// pStart (time tStart) to pEnd (time 1) at minimum separation `thickness`.
uint32_t earliestHitStatic(const MeshRef& mesh, float tStart, glm::vec3 pStart, glm::vec3 pEnd, float thickness,
                           uint32_t flags, gpu::MeshHit& best);
uint32_t earliestHitDeforming(const MeshRef& mesh, float tStart, glm::vec3 pStart, glm::vec3 pEnd,
                              float thickness, uint32_t flags, gpu::MeshHit& best);
// Rigid mesh: mesh.start holds the mesh-space vertices.
uint32_t earliestHitRigid(const MeshRef& mesh, const gpu::RigidSweep& sweep, float tStart, glm::vec3 pStart,
                          glm::vec3 pEnd, float thickness, uint32_t flags, gpu::MeshHit& best);

}  // namespace vkc::test
