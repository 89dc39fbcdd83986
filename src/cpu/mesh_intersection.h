// Private (issue 17 groundwork): mesh vs mesh intersection on the CPU, and its collision manifold
// (../shared/seeds/ucsd-cse169-collision-detection.txt, "Mesh vs. Mesh"). Every triangle of A is
// tested against every triangle of B whose box overlaps its own, widened by a margin of 64 *
// kTriTriTolerance * the largest coordinate (found through a BVH over B, or by brute force; the same
// pairs in the same order either way); each intersecting pair gives a segment (shaders/shared/tri_tri.h), a point
// or a coplanar overlap polygon. Segments are joined into polylines and closed loops by the
// features that produced their endpoints, not by distance: an endpoint where edge (u, v) of A
// crosses triangle t of B is the same point for both of A's triangles around that edge, so it gets
// the key (A edge {u, v}, B triangle t); likewise (B edge, A triangle), (A vertex, B triangle) and
// (B vertex, A triangle). This needs welded meshes (shared vertices by index). Where an endpoint lies
// on an edge of both meshes at once the two sides may key it differently: ends the keys leave open
// are then merged with other open ends within their segments' bands (in node order), and a segment
// shorter than its ends' bands is a point of the curve, not a piece of it. The manifold is classified by the spread (principal components) of
// all its points. Results are deterministic (input order).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "shared/tri_tri.h"
#include "vkcollide/result.h"
#include "vkcollide/types.h"

namespace vkc::cpu {

struct TriMeshView {
  std::span<const Float4> positions;  // xyz used
  std::span<const uint32_t> indices;  // 3 per triangle, each < positions.size()
};

// One intersecting triangle pair.
struct TriPairHit {
  uint32_t triA = 0;
  uint32_t triB = 0;
  gpu::TriTriResult result{};
};

enum class ManifoldKind : uint32_t { kNone, kPoint, kLine, kPlane };

// A polyline of the manifold: points in order; closed when the last joins the first (not repeated).
struct ManifoldCurve {
  std::vector<gpu::vec3> points;
  bool closed = false;
};

struct MeshIntersection {
  std::vector<TriPairHit> pairs;      // by (triA, triB)
  std::vector<ManifoldCurve> curves;  // the joined segments, in the order of their first key
  std::vector<gpu::vec3> isolated;    // touching points (count-1 results)
  uint32_t coplanarPairs = 0;         // pairs whose overlap is a polygon (points in `pairs`)
  ManifoldKind kind = ManifoldKind::kNone;
  gpu::vec3 spread{0.0f};             // square roots of the points' covariance eigenvalues, largest first
  gpu::vec3 normal{0.0f};             // the direction of least spread (plane-like: the plane's normal)
};

enum class PairSearch : uint32_t {
  kBvh,         // a BVH over mesh B (buildBvhCpu, kCpuScalar), traversed per triangle of A
  kBruteForce,  // every box pair: the reference the BVH path is tested against
};

struct ManifoldSettings {
  PairSearch search = PairSearch::kBvh;  // both give the same pairs in the same order
  // Point-like when the largest spread is at most this times the diagonal of the meshes' joint box.
  float pointFraction = 1.0e-4f;
  // Line-like when the second spread is at most this times the largest; else plane-like.
  float lineRatio = 0.02f;
};

// Validates both meshes (indices count a multiple of 3, every index in range, positions finite;
// the message names the field, e.g. "meshB.indices[7]") and computes the intersection.
Result<MeshIntersection> intersectMeshes(const TriMeshView& meshA, const TriMeshView& meshB,
                                         const ManifoldSettings& settings = {});

const char* toString(ManifoldKind kind);

}  // namespace vkc::cpu
