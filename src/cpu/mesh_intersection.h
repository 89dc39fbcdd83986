// Private: the implementation of vkc::intersectMeshes (include/vkcollide/mesh_intersection.h), with the
// pair search selectable for the tests (the brute force is the BVH walk's reference).
#pragma once

#include "vkcollide/mesh_intersection.h"

namespace vkc::cpu {

enum class PairSearch : uint32_t {
  kBvh,         // a BVH over mesh B (buildBvhCpu), traversed per triangle of A
  kBruteForce,  // every box pair: the reference the BVH path is tested against
};

// executor: null runs on the calling thread.
Result<MeshIntersection> intersectMeshes(const TriangleMeshView& meshA, const TriangleMeshView& meshB, Backend backend,
                                         const CpuExecutor* executor, const MeshIntersectionSettings& settings,
                                         PairSearch search = PairSearch::kBvh);

}  // namespace vkc::cpu
