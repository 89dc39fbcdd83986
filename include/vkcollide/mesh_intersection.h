// Mesh vs mesh intersection and its collision manifold, on the CPU (the method of
// ../shared/seeds/ucsd-cse169-collision-detection.txt, "Triangle vs. Triangle" and "Mesh vs. Mesh").
//
//   vkc::TriangleMeshView a{positionsA, indicesA}, b{positionsB, indicesB};
//   vkc::Result<vkc::MeshIntersection> r = vkc::intersectMeshes(a, b, vkc::Backend::kCpuSimd);
//   if (!r) { /* r.error().message names the field, e.g. "meshB.indices[7] = 9 is out of range ..." */ }
//   for (const vkc::IntersectionCurve& c : r->curves)
//     draw(std::span(r->curvePoints).subspan(c.firstPoint, c.pointCount), c.closed);
//
// What it computes:
//  - every pair (triangle of A, triangle of B) that meets (`pairs`, by triangle of A, then of B):
//    the candidates are the pairs whose boxes overlap, each widened by 64 * 4e-6 * the largest
//    absolute coordinate of both meshes (found through a BVH over B); each is tested by the seed's
//    method (signed distances of one triangle's vertices to the other's plane, the crossing
//    segment, its clip to the other triangle in that plane; coplanar pairs give their overlap
//    polygon), with a tolerance band of about 34 float ulps of the inputs (the band of each pair is
//    reported; docs/mesh-collision.md, "Triangle vs triangle", measures it against CGAL's exact
//    answers);
//  - the collision manifold: the segments joined into polylines and closed loops (`curves`) by the
//    features that produced their ends, not by distance: an end where edge {u, v} of A crosses
//    triangle t of B is the same point for both of A's triangles around that edge, where the mesh is
//    welded (neighbouring triangles share vertex indices; an unwelded soup's ends are all joined by
//    distance instead, which gives the same loops within the bands but costs a sort). Ends the
//    features leave open (an end on an edge of both meshes at once) and touching pairs are merged
//    with each other within their bands; open ends left within 8 times their bands of each other (a
//    piece of curve lost between pairs computed on different planes) are joined by a segment; a
//    segment shorter than its ends' bands is a point (docs/mesh-collision.md has the details);
//  - touching points (`touchingPoints`: pairs that meet in one point only, away from every curve)
//    and the number of coplanar pairs (their polygons are in `pairs`);
//  - the manifold's classification by the spread (principal components) of all its points:
//    point-like, line-like or plane-like, with the plane's normal.
//
// Backends: kCpuScalar (the reference) and kCpuSimd (the candidate pairs rejected in SIMD lanes
// where the exact test would find nothing; the rest by the same scalar code): the results are equal,
// bit for bit. kVulkan is not available for this query (kUnsupported): joining segments into curves
// is a walk over a graph that the GPU pipelines of this library do not have yet.
//
// Results are deterministic: the same inputs give the same output, bit for bit, on every run and
// with any executor (threads only split the pair search by triangles of A).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vkcollide/cpu_executor.h"
#include "vkcollide/result.h"
#include "vkcollide/types.h"

namespace vkc {
#include "vkcollide/export.h"
VKC_API_BEGIN

// An indexed triangle mesh in the host's memory: xyz of each position used (w ignored), 3 indices per
// triangle, each < positions.size(). Positions must be finite. Empty meshes are allowed (no pairs).
struct TriangleMeshView {
  std::span<const Float4> positions;
  std::span<const uint32_t> indices;
};

// TrianglePairIntersection::flags.
inline constexpr uint32_t kTrianglePairCoplanar = 1u;    // points[0..pointCount) is the overlap polygon
inline constexpr uint32_t kTrianglePairDegenerate = 4u;  // both triangles degenerate (zero area): span vs span
inline constexpr uint32_t kTrianglePairTouching = 8u;    // they meet only within the band (one point)

// One pair of triangles that meet.
struct TrianglePairIntersection {
  uint32_t triangleA = 0;   // triangle index in mesh A (its indices at 3 * triangleA)
  uint32_t triangleB = 0;
  uint32_t pointCount = 0;  // 1: a point; 2: a segment points[0]-points[1]; coplanar: 1..6 polygon vertices
  uint32_t flags = 0;       // kTrianglePair*
  float band = 0;           // the tolerance band of this pair (absolute length)
  Float4 points[6];         // xyz, w = 0
};

// A polyline of the manifold: curvePoints[firstPoint, firstPoint + pointCount) in order along it; when
// closed the last point joins the first (which is not repeated).
struct IntersectionCurve {
  uint32_t firstPoint = 0;
  uint32_t pointCount = 0;
  bool closed = false;
};

enum class IntersectionShape : uint32_t {
  kNone,   // the meshes do not meet
  kPoint,  // every point within pointFraction * the meshes' box diagonal of their mean
  kLine,   // second spread <= lineRatio * the largest: the manifold lies along a line
  kPlane,  // otherwise; `normal` is the plane's (the direction of least spread)
};

struct MeshIntersection {
  std::vector<TrianglePairIntersection> pairs;  // by (triangleA, triangleB)
  std::vector<Float4> curvePoints;              // the curves' points (xyz, w = 0)
  std::vector<IntersectionCurve> curves;        // in the order of their first end's key (deterministic)
  std::vector<Float4> touchingPoints;           // pairs meeting in one point (or a segment within its band) off the curves
  uint32_t coplanarPairs = 0;                   // pairs whose overlap is a polygon
  IntersectionShape shape = IntersectionShape::kNone;
  Float4 spread;  // xyz: square roots of the points' covariance eigenvalues, largest first
  Float4 normal;  // xyz: the unit direction of least spread (plane-like: the plane's normal); 0 for kNone
};

struct MeshIntersectionSettings {
  // Point-like when the largest spread is at most this times the diagonal of the meshes' joint box.
  float pointFraction = 1.0e-4f;
  // Line-like when the second spread is at most this times the largest; else plane-like.
  float lineRatio = 0.02f;
};

// Validates both meshes (the message names the field: "meshA.indices: size 7 is not a multiple of 3",
// "meshB.indices[7] = 9 is out of range (8 positions)", "meshA.positions[3] is not finite",
// "settings.pointFraction ...") and computes their intersection. backend: kCpuScalar or kCpuSimd
// (kVulkan: kUnsupported).
Result<MeshIntersection> intersectMeshes(const TriangleMeshView& meshA, const TriangleMeshView& meshB, Backend backend,
                                         const MeshIntersectionSettings& settings = {});
// The same on an executor's threads (the pair search split by triangles of A): bitwise the result of
// one thread.
Result<MeshIntersection> intersectMeshes(const TriangleMeshView& meshA, const TriangleMeshView& meshB, Backend backend,
                                         const CpuExecutor& executor, const MeshIntersectionSettings& settings = {});

const char* toString(IntersectionShape shape);

// Where two results differ bit for bit: "" when every field of `got` has the bits of `want`'s (the
// pairs, curves, curve and touching points, coplanar count, shape, spread and normal; floats
// compared as bits, so 0 and -0 differ where operator== would not), else the first difference, e.g.
// "curvePoints[12]: (0.5, 1, 2, 0) vs (0.50000006, 1, 2, 0)". The check behind "the results are
// equal, bit for bit" (backends, executors, runs): `vkcollide intersect --compare`, the tests, the
// benchmark.
std::string firstBitwiseDifference(const MeshIntersection& got, const MeshIntersection& want);

VKC_API_END
}  // namespace vkc
