#include "support/mesh_reference.h"

namespace vkc::test {

uint32_t earliestHitStatic(const MeshRef& mesh, float tStart, glm::vec3 pStart, glm::vec3 pEnd, float thickness,
                           uint32_t flags, gpu::MeshHit& best) {
  const auto& v = mesh.start;
  const auto& ix = mesh.indices;
  return earliestHitBruteForce(
      uint32_t(ix.size() / 3),
      [&](uint32_t i, gpu::MeshHit& hit) {
        return gpu::triCcdStatic(v[ix[3 * i]], v[ix[3 * i + 1]], v[ix[3 * i + 2]], tStart, pStart, pEnd, thickness,
                                 flags, hit);
      },
      best);
}

uint32_t earliestHitDeforming(const MeshRef& mesh, float tStart, glm::vec3 pStart, glm::vec3 pEnd,
                              float thickness, uint32_t flags, gpu::MeshHit& best) {
  const auto& s = mesh.start;
  const auto& e = mesh.end;
  const auto& ix = mesh.indices;
  return earliestHitBruteForce(
      uint32_t(ix.size() / 3),
      [&](uint32_t i, gpu::MeshHit& hit) {
        const uint32_t a = ix[3 * i], b = ix[3 * i + 1], c = ix[3 * i + 2];
        return gpu::triCcdDeforming(s[a], s[b], s[c], e[a], e[b], e[c], tStart, pStart, pEnd, thickness, flags, hit);
      },
      best);
}

uint32_t earliestHitRigid(const MeshRef& mesh, const gpu::RigidSweep& sweep, float tStart, glm::vec3 pStart,
                          glm::vec3 pEnd, float thickness, uint32_t flags, gpu::MeshHit& best) {
  const auto& v = mesh.start;
  const auto& ix = mesh.indices;
  return earliestHitBruteForce(
      uint32_t(ix.size() / 3),
      [&](uint32_t i, gpu::MeshHit& hit) {
        return gpu::triCcdRigid(sweep, v[ix[3 * i]], v[ix[3 * i + 1]], v[ix[3 * i + 2]], tStart, pStart, pEnd,
                                thickness, flags, hit);
      },
      best);
}

}  // namespace vkc::test
