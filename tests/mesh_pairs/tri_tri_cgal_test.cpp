// CGAL as the exact oracle for triangle vs triangle (shaders/shared/tri_tri.h). Debian libcgal-dev,
// optional, tests only (tests/CMakeLists.txt defines VKC_HAVE_CGAL). On random and degenerate pairs
// (coplanar, shared edge, shared vertex, touching at a vertex, slivers, near-coplanar) of float
// triangles, CGAL's exact do_intersect against triTriIntersect:
//  - a pair we report touching but CGAL finds disjoint must be closer than our band (CGAL's exact
//    squared_distance), and a pair we miss must be one CGAL finds intersecting only within the band
//    (its exact intersection is within `band` of both triangles' boundaries, see below);
//  - our segment's end points: within the band of both triangles (exact distances), and their
//    distance to CGAL's exact intersection (CGAL::intersection) measured and printed.
#if VKC_HAVE_CGAL
#include <gtest/gtest.h>

#include <CGAL/Exact_predicates_exact_constructions_kernel.h>
#include <CGAL/intersections.h>
#include <CGAL/squared_distance_3.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "cpu/mesh_intersection.h"
#include "shared/tri_tri.h"

namespace vkc::test {
namespace {

using glm::vec3;
using K = CGAL::Exact_predicates_exact_constructions_kernel;

K::Point_3 point(vec3 v) { return {double(v.x), double(v.y), double(v.z)}; }
glm::dvec3 dvec(const K::Point_3& p) {
  return {CGAL::to_double(p.x()), CGAL::to_double(p.y()), CGAL::to_double(p.z())};
}

// Generic helper: the CGAL object of a float triangle (a triangle, or its span when degenerate).
struct Shape {
  int kind = 0;  // 0 triangle, 1 segment, 2 point
  K::Triangle_3 tri;
  K::Segment_3 seg;
  K::Point_3 pt;
};

Shape shape(vec3 a, vec3 b, vec3 c) {
  Shape s;
  const K::Point_3 A = point(a), B = point(b), C = point(c);
  if (!CGAL::collinear(A, B, C)) {
    s.tri = K::Triangle_3(A, B, C);
    return s;
  }
  // Collinear: the span between the two extreme points.
  K::Point_3 lo = A, hi = A;
  for (const K::Point_3& p : {B, C}) {
    if (CGAL::compare_xyz(p, lo) == CGAL::SMALLER) lo = p;
    if (CGAL::compare_xyz(p, hi) == CGAL::LARGER) hi = p;
  }
  if (lo == hi) {
    s.kind = 2;
    s.pt = lo;
  } else {
    s.kind = 1;
    s.seg = K::Segment_3(lo, hi);
  }
  return s;
}

template <class F>
auto visit2(const Shape& p, const Shape& q, F&& f) {
  auto inner = [&](const auto& x) {
    if (q.kind == 0) return f(x, q.tri);
    if (q.kind == 1) return f(x, q.seg);
    return f(x, q.pt);
  };
  if (p.kind == 0) return inner(p.tri);
  if (p.kind == 1) return inner(p.seg);
  return inner(p.pt);
}

bool exactIntersect(const Shape& p, const Shape& q) {
  return visit2(p, q, [](const auto& x, const auto& y) { return CGAL::do_intersect(x, y); });
}
// CGAL 5.5 has no segment-triangle distance: for disjoint ones it is the least of the end points'
// distances to the triangle and the segment's to the triangle's edges.
K::FT sqDist(const K::Segment_3& s, const K::Triangle_3& t) {
  if (CGAL::do_intersect(s, t)) return 0;
  K::FT best = std::min(CGAL::squared_distance(s.source(), t), CGAL::squared_distance(s.target(), t));
  for (int k = 0; k < 3; ++k) best = std::min(best, CGAL::squared_distance(s, K::Segment_3(t.vertex(k), t.vertex((k + 1) % 3))));
  return best;
}
K::FT sqDist(const K::Triangle_3& t, const K::Segment_3& s) { return sqDist(s, t); }
template <class A, class B>
K::FT sqDist(const A& a, const B& b) {
  return CGAL::squared_distance(a, b);
}
double exactDistance(const Shape& p, const Shape& q) {
  return std::sqrt(CGAL::to_double(visit2(p, q, [](const auto& x, const auto& y) { return sqDist(x, y); })));
}

// Distance from x to the boundary of a (non-degenerate) triangle: its nearest edge.
double boundaryDistance(const K::Point_3& x, const K::Triangle_3& t) {
  double best = 1e300;
  for (int k = 0; k < 3; ++k)
    best = std::min(best, std::sqrt(CGAL::to_double(CGAL::squared_distance(x, K::Segment_3(t.vertex(k), t.vertex((k + 1) % 3))))));
  return best;
}

enum Family { kRandom, kGrid, kCoplanar, kSharedEdge, kSharedVertex, kTouchVertex, kSliver, kNearCoplanar, kFamilies };
const char* kFamilyNames[kFamilies] = {"random", "grid 1/4", "coplanar", "shared edge", "shared vertex",
                                       "vertex touching", "sliver", "near-coplanar"};

struct Stats {
  int cases = 0, exactHits = 0, falsePositive = 0, falseNegative = 0, outsideBand = 0;
  double worstFpRatio = 0;  // exact distance / band over false positives
};

TEST(TriTriCgal, ExactOracleRandomAndDegenerate) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto rv = [&] { return vec3(u(rng), u(rng), u(rng)); };
  auto grid = [&] { return glm::round(rv() * 4.0f) / 4.0f; };
  Stats stats[kFamilies];
  double worstEndpoint = 0, worstEndpointRatio = 0;  // absolute, and / (band / sin(angle between planes))
  int endpointChecks = 0, coplanarPolygonChecks = 0, endpointsBeyond = 0;
  double worstEndpointOff = 0;  // / band: an end point's exact distance to the farther triangle
  double worstPolygonOutside = 0;
  for (int i = 0; i < 80000; ++i) {
    const Family fam = Family(i % kFamilies);
    vec3 p0 = rv(), p1 = rv(), p2 = rv(), q0 = rv(), q1 = rv(), q2 = rv();
    switch (fam) {
      case kRandom: break;
      case kGrid: p0 = grid(), p1 = grid(), p2 = grid(), q0 = grid(), q1 = grid(), q2 = grid(); break;
      case kCoplanar: {  // both in the plane z = c (exactly), on the 1/4 grid half of the time
        const float c = glm::round(u(rng) * 4.0f) / 4.0f;
        vec3* vs[6] = {&p0, &p1, &p2, &q0, &q1, &q2};
        for (vec3* v : vs) {
          if (i % 2 == 0) *v = grid();
          v->z = c;
        }
        break;
      }
      case kSharedEdge: q0 = p0, q1 = p1; if (i % 2 == 0) p2 = grid(), q2 = grid(), q0 = p0 = grid(), q1 = p1 = grid(); break;
      case kSharedVertex: q0 = p0; break;
      case kTouchVertex: {  // q0 on P (rounded to float: exactly on, or just off P's plane)
        const float s = 0.5f * (u(rng) + 1.0f), t = 0.5f * (u(rng) + 1.0f) * (1.0f - s);
        q0 = p0 + (p1 - p0) * s + (p2 - p0) * t;
        break;
      }
      case kSliver:  // P collinear (a segment) or nearly; Q a sliver half of the time
        p2 = p0 + (p1 - p0) * 0.5f + (i % 3 == 0 ? rv() * 1e-6f : vec3(0.0f));
        if (i % 2 == 0) q2 = q0 + (q1 - q0) * 0.25f;
        if (i % 5 == 0) q0 = p0 + (p1 - p0) * 0.375f;  // Q's vertex on P's span
        break;
      case kNearCoplanar: {  // Q's vertices moved off P's plane by up to 1e-6..1e-3
        const vec3 n = glm::normalize(glm::cross(p1 - p0, p2 - p0));
        const float scale = std::pow(10.0f, -6.0f + 3.0f * 0.5f * (u(rng) + 1.0f));
        auto inPlane = [&](vec3 v) { return v - n * glm::dot(n, v - p0); };
        q0 = inPlane(q0) + n * (u(rng) * scale);
        q1 = inPlane(q1) + n * (u(rng) * scale);
        q2 = inPlane(q2) + n * (u(rng) * scale);
        break;
      }
      default: break;
    }
    const Shape P = shape(p0, p1, p2), Q = shape(q0, q1, q2);
    const bool exact = exactIntersect(P, Q);
    gpu::TriTriResult r;
    const bool ours = gpu::triTriIntersect(p0, p1, p2, q0, q1, q2, r);
    Stats& st = stats[fam];
    auto dump = [&] {
      char buf[600];
      std::snprintf(buf, sizeof buf, " P (%a %a %a) (%a %a %a) (%a %a %a) Q (%a %a %a) (%a %a %a) (%a %a %a) count %u flags %u features %x",
                    double(p0.x), double(p0.y), double(p0.z), double(p1.x), double(p1.y), double(p1.z), double(p2.x), double(p2.y), double(p2.z), double(q0.x), double(q0.y), double(q0.z), double(q1.x), double(q1.y), double(q1.z), double(q2.x), double(q2.y), double(q2.z),
                    r.count, r.flags, r.features);
      return std::string(buf);
    };
    ++st.cases;
    st.exactHits += exact;
    if (ours && !exact) {
      ++st.falsePositive;
      const double d = exactDistance(P, Q);
      st.worstFpRatio = std::max(st.worstFpRatio, d / double(r.band));
      if (d > double(r.band)) {
        ++st.outsideBand;
        ADD_FAILURE() << kFamilyNames[fam] << " case " << i << ": reported touching at exact distance " << d
                      << " > band " << r.band << dump();
      }
    }
    if (!ours && exact) {
      ++st.falseNegative;
      // Within the band when the exact intersection lies within `band` of both triangles' boundaries
      // (a graze: moving the triangles apart by the band removes it).
      double depth = 0;
      if (P.kind == 0 && Q.kind == 0) {
        auto inter = CGAL::intersection(P.tri, Q.tri);
        std::vector<K::Point_3> pts;
        if (inter) {
          if (const K::Point_3* pt = boost::get<K::Point_3>(&*inter)) pts.push_back(*pt);
          if (const K::Segment_3* sg = boost::get<K::Segment_3>(&*inter)) pts = {sg->source(), sg->target(), CGAL::midpoint(sg->source(), sg->target())};
          if (const K::Triangle_3* tr = boost::get<K::Triangle_3>(&*inter)) pts = {tr->vertex(0), tr->vertex(1), tr->vertex(2), CGAL::centroid(*tr)};
          if (const auto* poly = boost::get<std::vector<K::Point_3>>(&*inter)) pts = *poly;
        }
        for (const K::Point_3& x : pts) depth = std::max(depth, std::min(boundaryDistance(x, P.tri), boundaryDistance(x, Q.tri)));
      }
      if (depth > double(r.band) || P.kind != 0 || Q.kind != 0) {
        ++st.outsideBand;
        ADD_FAILURE() << kFamilyNames[fam] << " case " << i << ": exact intersection missed, depth " << depth
                      << ", band " << r.band << dump();
      }
    }
    if (ours && exact && !(r.flags & (gpu::kTriTriCoplanar | gpu::kTriTriDegenerate | gpu::kTriTriWithinBand)) && P.kind == 0 && Q.kind == 0 &&
        !CGAL::coplanar(P.tri.vertex(0), P.tri.vertex(1), P.tri.vertex(2), Q.tri.vertex(0))) {
      auto inter = CGAL::intersection(P.tri, Q.tri);
      glm::dvec3 e0, e1;
      bool have = true;
      if (const K::Point_3* pt = boost::get<K::Point_3>(&*inter)) e0 = e1 = dvec(*pt);
      else if (const K::Segment_3* sg = boost::get<K::Segment_3>(&*inter)) e0 = dvec(sg->source()), e1 = dvec(sg->target());
      else have = false;
      if (have) {
        const glm::dvec3 a(r.points[0]), b(r.points[r.count > 1 ? 1 : 0]);
        const double err = std::min(std::max(glm::length(a - e0), glm::length(b - e1)),
                                    std::max(glm::length(a - e1), glm::length(b - e0)));
        const glm::dvec3 np = glm::cross(glm::dvec3(p1 - p0), glm::dvec3(p2 - p0));
        const glm::dvec3 nq = glm::cross(glm::dvec3(q1 - q0), glm::dvec3(q2 - q0));
        const double nn = glm::length(np) * glm::length(nq);
        // Zero in double: a float sliver that CGAL still calls a triangle; the line is then P's span.
        const double sinAngle = nn > 0 ? std::max(glm::length(glm::cross(np, nq)) / nn, 1e-12) : 1.0;
        const double allowed = double(r.band) / sinAngle;
        ++endpointChecks;
        worstEndpoint = std::max(worstEndpoint, err);
        worstEndpointRatio = std::max(worstEndpointRatio, err / allowed);
        if (err > allowed) ++endpointsBeyond;
        // What the band promises: each end point is within the band of both triangles (exact distances).
        // Along the line the error can be larger where the segment runs nearly along an edge.
        for (const glm::dvec3& x : {a, b}) {
          const K::Point_3 px(x.x, x.y, x.z);
          const double off = std::max(std::sqrt(CGAL::to_double(CGAL::squared_distance(px, P.tri))),
                                      std::sqrt(CGAL::to_double(CGAL::squared_distance(px, Q.tri))));
          worstEndpointOff = std::max(worstEndpointOff, off / double(r.band));
          EXPECT_LE(off, 2.0 * double(r.band)) << kFamilyNames[fam] << " case " << i << dump();
        }
      }
    }
    if (ours && (r.flags & gpu::kTriTriCoplanar) && !(r.flags & gpu::kTriTriWithinBand) && P.kind == 0 && Q.kind == 0) {
      // Every point of an exactly clipped polygon is within the band of both triangles.
      for (uint32_t k = 0; k < r.count; ++k) {
        const K::Point_3 x = point(vec3(r.points[k]));
        const double out = std::max(std::sqrt(CGAL::to_double(CGAL::squared_distance(x, P.tri))),
                                    std::sqrt(CGAL::to_double(CGAL::squared_distance(x, Q.tri))));
        worstPolygonOutside = std::max(worstPolygonOutside, out / double(r.band));
        EXPECT_LE(out, 2.0 * double(r.band)) << kFamilyNames[fam] << " case " << i << dump();
        ++coplanarPolygonChecks;
      }
    }
  }
  for (int f = 0; f < kFamilies; ++f) {
    const Stats& s = stats[f];
    std::printf("tri-tri vs CGAL, %-15s: %5d cases, %5d intersect exactly, %4d reported touching but disjoint "
                "(worst exact distance %.3f band), %d missed, %d outside the band\n",
                kFamilyNames[f], s.cases, s.exactHits, s.falsePositive, s.worstFpRatio, s.falseNegative, s.outsideBand);
    EXPECT_EQ(s.outsideBand, 0);
    EXPECT_GT(s.exactHits, 0) << kFamilyNames[f];
  }
  std::printf("tri-tri segment end points vs CGAL::intersection: %d checks, worst error %.3g, %d beyond band/sin(angle "
              "between the planes) (worst %.3f of it); worst end point distance to either triangle %.3f band; coplanar "
              "polygon points: %d checks, worst distance outside either triangle %.3f band\n",
              endpointChecks, worstEndpoint, endpointsBeyond, worstEndpointRatio, worstEndpointOff, coplanarPolygonChecks,
              worstPolygonOutside);
  EXPECT_GT(endpointChecks, 1000);
}

// Mesh level: every pair of two random, jittered triangle soups (40 x 40 triangles in overlapping
// boxes, so that many pairs cross and many boxes overlap) against CGAL: intersectMeshes' pairs (with
// its box rejection) are the exact ones, up to pairs closer than the band.
TEST(TriTriCgal, MeshPairsMatchExactPairs) {
  std::mt19937 rng(1717);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int exactPairs = 0, ourPairs = 0, disagree = 0;
  for (int round = 0; round < 20; ++round) {
    std::vector<Float4> pa, pb;
    std::vector<uint32_t> ia, ib;
    for (int t = 0; t < 40; ++t) {
      const vec3 ca = vec3(u(rng), u(rng), u(rng)) * 0.5f, cb = vec3(u(rng) + 0.2f, u(rng), u(rng)) * 0.5f;
      for (int k = 0; k < 3; ++k) {
        const vec3 a = ca + vec3(u(rng), u(rng), u(rng)) * 0.5f, b = cb + vec3(u(rng), u(rng), u(rng)) * 0.5f;
        pa.push_back({a.x, a.y, a.z, 0}), pb.push_back({b.x, b.y, b.z, 0});
        ia.push_back(uint32_t(3 * t + k)), ib.push_back(uint32_t(3 * t + k));
      }
    }
    auto result = intersectMeshes({pa, ia}, {pb, ib}, Backend::kCpuSimd);
    ASSERT_TRUE(result.ok()) << result.message();
    std::vector<bool> ours(40 * 40, false);
    for (const TrianglePairIntersection& h : result->pairs) ours[h.triangleA * 40 + h.triangleB] = true;
    auto v = [](const std::vector<Float4>& p, uint32_t i) { return vec3(p[i].x, p[i].y, p[i].z); };
    for (uint32_t ta = 0; ta < 40; ++ta)
      for (uint32_t tb = 0; tb < 40; ++tb) {
        const Shape P = shape(v(pa, 3 * ta), v(pa, 3 * ta + 1), v(pa, 3 * ta + 2));
        const Shape Q = shape(v(pb, 3 * tb), v(pb, 3 * tb + 1), v(pb, 3 * tb + 2));
        const bool exact = exactIntersect(P, Q);
        exactPairs += exact;
        ourPairs += ours[ta * 40 + tb];
        if (exact != ours[ta * 40 + tb]) {
          ++disagree;
          gpu::TriTriResult r;
          gpu::triTriIntersect(v(pa, 3 * ta), v(pa, 3 * ta + 1), v(pa, 3 * ta + 2), v(pb, 3 * tb), v(pb, 3 * tb + 1),
                               v(pb, 3 * tb + 2), r);
          EXPECT_LE(exactDistance(P, Q), double(r.band)) << "round " << round << " pair " << ta << ", " << tb;
        }
      }
  }
  std::printf("mesh pairs vs CGAL: 20 x 1600 triangle pairs, %d intersect exactly, %d reported, %d disagree (all within "
              "the band)\n",
              exactPairs, ourPairs, disagree);
  EXPECT_GT(exactPairs, 1000);
}

}  // namespace
}  // namespace vkc::test
#endif
