// CGAL as the exact oracle for the geometry queries' segment-triangle cell test (issue 17:
// geomTriangleSegment, shaders/shared/geometry_queries_mesh_mesh.h, on the seed's segmentTriangle),
// the test of the static SurfaceMesh vs LineMesh row. Debian libcgal-dev, optional, tests only
// (tests/CMakeLists.txt defines VKC_HAVE_CGAL). tests/collide_meshes/collide_meshes_cgal_test.cpp
// counts the seed test's disagreements; this one bounds them by a measured band, on random and
// degenerate families (grid coordinates, the segment in the triangle's plane, along an edge, from a
// shared vertex, through a vertex, through an edge, slivers, nearly parallel to the plane).
//
// The contract: a contact exactly when the segment crosses the triangle's plane with its two ends
// strictly on opposite sides (exact orientations) and the crossing lies in the triangle (an end on
// the plane, a segment in the plane: touching, no contact). A disagreement with CGAL's exact answer
// must be within the band of that decision's boundary: a missed crossing has its exact crossing point
// within band / sin(the segment's angle to the plane) of the triangle's border (the crossing point's
// rounding grows as the segment nears the plane) or an end within the band of the plane; a reported one
// that CGAL rejects has the exact segment-triangle distance, or an end's distance to the plane,
// within the band. The band is tri_tri.h's, band = kTriTriTolerance * (S + l^2 R / A2) (S the largest
// coordinate, l the triangle's longest edge, A2 twice its area, R the largest distance of the
// segment's ends from the triangle's first corner): the same scale of rounding, measured here.
#if VKC_HAVE_CGAL
#include <gtest/gtest.h>

#include <CGAL/Exact_predicates_exact_constructions_kernel.h>
#include <CGAL/intersections.h>
#include <CGAL/squared_distance_3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "shared/geometry_queries_mesh_mesh.h"

namespace vkc::test {
namespace {

using glm::vec3;
using K = CGAL::Exact_predicates_exact_constructions_kernel;

K::Point_3 point(vec3 v) {
  return {double(v.x), double(v.y), double(v.z)};
}

double dist(const K::FT& squared) {
  return std::sqrt(CGAL::to_double(squared));
}

// The exact distance of a segment and a triangle (CGAL 5.5 has none for this pair): 0 when they
// intersect, else the least of the ends' distances to the triangle and the segment's to its edges.
double segmentTriangleDistance(const K::Segment_3& s, const K::Triangle_3& t) {
  if (CGAL::do_intersect(s, t)) return 0.0;
  K::FT best = std::min(CGAL::squared_distance(s.source(), t), CGAL::squared_distance(s.target(), t));
  for (int k = 0; k < 3; ++k)
    best = std::min(best, CGAL::squared_distance(s, K::Segment_3(t.vertex(k), t.vertex((k + 1) % 3))));
  return dist(best);
}

double boundaryDistance(const K::Point_3& x, const K::Triangle_3& t) {
  double best = 1e300;
  for (int k = 0; k < 3; ++k)
    best = std::min(best, dist(CGAL::squared_distance(x, K::Segment_3(t.vertex(k), t.vertex((k + 1) % 3)))));
  return best;
}

float maxAbs(vec3 v) {
  return std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)});
}

float band(vec3 a, vec3 b, vec3 c, vec3 p0, vec3 p1) {
  const float S = std::max({maxAbs(a), maxAbs(b), maxAbs(c), maxAbs(p0), maxAbs(p1)});
  const float l2 = std::max({glm::dot(b - a, b - a), glm::dot(c - b, c - b), glm::dot(a - c, a - c)});
  const float A2 = glm::length(glm::cross(b - a, c - a));
  const float R = std::max(glm::length(p0 - a), glm::length(p1 - a));
  return gpu::kTriTriTolerance * (S + l2 * R / A2);
}

enum Family {
  kRandom,
  kGrid,
  kInPlane,
  kAlongEdge,
  kFromVertex,
  kThroughVertex,
  kThroughEdge,
  kSliver,
  kNearParallel,
  kFamilies
};
const char* kNames[kFamilies] = {"random",          "grid 1/4",      "in the plane",
                                 "along an edge",   "from a vertex", "through a vertex",
                                 "through an edge", "sliver",        "nearly parallel"};

TEST(SegmentTriangleCgal, GeometryQueryCellTestWithinTheBand) {
  std::mt19937 rng(1727);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), t01(0.0f, 1.0f);
  auto rv = [&] { return vec3(u(rng), u(rng), u(rng)); };
  auto grid = [](vec3 v) { return glm::round(v * 4.0f) / 4.0f; };
  int cases[kFamilies] = {}, crossings[kFamilies] = {}, missed[kFamilies] = {}, extra[kFamilies] = {};
  double worst = 0.0;  // the largest disagreement distance over its band
  for (int i = 0; i < 90000; ++i) {
    const Family fam = static_cast<Family>(i % kFamilies);
    vec3 a = rv(), b = rv(), c = rv(), p0 = rv() * 1.5f, p1 = rv() * 1.5f;
    switch (fam) {
      case kRandom:
        break;
      case kGrid:
        a = grid(a), b = grid(b), c = grid(c), p0 = grid(p0), p1 = grid(p1);
        break;
      case kInPlane: {  // ends as affine combinations of the corners (on the plane up to rounding; on a grid
                        // exactly)
        a = grid(a), b = grid(b), c = grid(c);
        const float s0 = u(rng), s1 = u(rng);
        p0 = a + (b - a) * s0 + (c - a) * (0.5f - s0);
        p1 = a + (b - a) * (0.5f * s1) + (c - a) * s1;
        break;
      }
      case kAlongEdge:
        p0 = a + (b - a) * (i % 2 ? 0.0f : 0.25f), p1 = a + (b - a) * (i % 2 ? 1.0f : 0.75f);
        break;
      case kFromVertex:
        p0 = i % 2 ? a : c;
        break;
      case kThroughVertex: {
        const vec3 d = rv();
        p0 = b + d, p1 = b - d * (0.5f + t01(rng));
        break;
      }
      case kThroughEdge: {
        const vec3 d = rv(), x = b + (c - b) * t01(rng);
        p0 = x + d, p1 = x - d * (0.5f + t01(rng));
        break;
      }
      case kSliver: {  // c nearly on the line of a and b; the segment through a point of the sliver
        c = a + (b - a) * (0.2f + t01(rng)) + rv() * (i % 3 == 0 ? 1e-5f : 1e-3f);
        const vec3 d = rv(), x = a + (b - a) * (0.3f * t01(rng)) + (c - a) * (0.3f * t01(rng));
        p0 = x + d, p1 = x - d * (0.5f + t01(rng));
        break;
      }
      case kNearParallel: {  // the segment nearly parallel to the plane, close to it
        const vec3 n = glm::normalize(glm::cross(b - a, c - a));
        const vec3 x = a + (b - a) * t01(rng) * 0.5f + (c - a) * t01(rng) * 0.5f;
        const vec3 e = glm::cross(n, rv());
        p0 = x + e + n * (u(rng) * 1e-4f), p1 = x - e + n * (u(rng) * 1e-4f);
        break;
      }
      default:
        break;
    }
    const K::Point_3 A = point(a), B = point(b), C = point(c), P0 = point(p0), P1 = point(p1);
    if (CGAL::collinear(A, B, C) || P0 == P1) continue;  // refused by validation (zero area, length)
    const K::Triangle_3 tri(A, B, C);
    const K::Segment_3 seg(P0, P1);
    ++cases[fam];
    const CGAL::Orientation o0 = CGAL::orientation(A, B, C, P0), o1 = CGAL::orientation(A, B, C, P1);
    const bool transversal = o0 != CGAL::COPLANAR && o1 != CGAL::COPLANAR && o0 != o1;
    const bool exact = transversal && CGAL::do_intersect(seg, tri);
    crossings[fam] += exact;
    gpu::GeomElement et, es;
    const bool ours = gpu::geomTriangleSegment(a, b, c, gpu::uvec4(0u, 1u, 2u, 0u), 0u, p0, p1,
                                               gpu::uvec4(0u, 1u, 0u, 0u), 0u, et, es);
    if (ours == exact) continue;
    const K::Plane_3 plane(A, B, C);
    double d = std::min(dist(CGAL::squared_distance(P0, plane)), dist(CGAL::squared_distance(P1, plane)));
    if (exact) {  // missed: the crossing near the triangle's border, or an end near the plane
      ++missed[fam];
      const auto x = CGAL::intersection(seg, plane);
      const K::Point_3* px = x ? boost::get<K::Point_3>(&*x) : nullptr;
      ASSERT_NE(px, nullptr) << "case " << i;
      // The crossing point's rounding grows as the segment nears the plane: its distance to the
      // border is measured against band / sin(the segment's angle to the plane).
      const double h0 = dist(CGAL::squared_distance(P0, plane)), h1 = dist(CGAL::squared_distance(P1, plane));
      const double sine = (h0 + h1) / dist(CGAL::squared_distance(P0, P1));  // the ends on opposite sides
      d = std::min(d, boundaryDistance(*px, tri) * std::min(1.0, sine));
    } else {  // reported: the segment within the band of the triangle, or an end within it of the plane
      ++extra[fam];
      d = std::min(d, segmentTriangleDistance(seg, tri));
    }
    const double ratio = d / double(band(a, b, c, p0, p1));
    worst = std::max(worst, ratio);
    EXPECT_LE(ratio, 1.0) << kNames[fam] << " case " << i << (exact ? ": missed" : ": reported")
                          << ", distance " << d;
  }
  int total = 0, totalCrossings = 0;
  for (int f = 0; f < kFamilies; ++f) {
    std::printf("segment-triangle %-16s %6d cases, %6d exact crossings, missed %4d, extra %4d\n", kNames[f],
                cases[f], crossings[f], missed[f], extra[f]);
    total += cases[f];
    totalCrossings += crossings[f];
  }
  std::printf("segment-triangle vs CGAL: %d cases, %d exact crossings, worst disagreement %.3g of the band\n",
              total, totalCrossings, worst);
  EXPECT_GT(totalCrossings, total / 10);
  EXPECT_GT(crossings[kThroughEdge] + crossings[kThroughVertex], 100);
  EXPECT_GT(crossings[kSliver], 100);
}

}  // namespace
}  // namespace vkc::test
#endif
