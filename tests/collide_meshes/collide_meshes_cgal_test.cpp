// CGAL as an exact oracle (Debian libcgal-dev, optional, tests only: tests/CMakeLists.txt defines
// VKC_HAVE_CGAL when it is found). Random and degenerate segment-triangle cases: the exact answer
// of CGAL::do_intersect (exact predicates on the float inputs) against
//  - triCcdStatic at thickness 0 (conservative: must report every exact intersection), and
//  - the seed's segmentTriangle (a float test: may disagree only at the boundary, counted).
#if VKC_HAVE_CGAL
#include <gtest/gtest.h>

#include <CGAL/Exact_predicates_exact_constructions_kernel.h>

#include <random>

#include "collide_meshes/mesh_test_support.h"

namespace vkc::test {
namespace {

using namespace meshes;
using K = CGAL::Exact_predicates_exact_constructions_kernel;

K::Point_3 point(vec3 v) { return {double(v.x), double(v.y), double(v.z)}; }

TEST(MeshCgal, SegmentTriangleExactOracle) {
  std::mt19937 rng(169);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  int exactHits = 0, ccdMissed = 0, seedDisagree = 0, cases = 0, degenerateCases = 0;
  for (int i = 0; i < 200000; ++i) {
    // Coordinates on a 1/4 grid half of the time: exact touching, endpoints on the plane, segments
    // in the plane and through edges and vertices happen often.
    const bool grid = i % 2 == 0;
    auto pick = [&](float lo, float hi) {
      vec3 v = randomVec(rng, lo, hi);
      return grid ? glm::round(v * 4.0f) / 4.0f : v;
    };
    const vec3 a = pick(-1, 1), b = pick(-1, 1), c = pick(-1, 1);
    vec3 p0 = pick(-2, 2), p1 = pick(-2, 2);
    if (i % 7 == 0) p1 = a + (b - a) * 0.5f + (c - a) * (u(rng) < 0.5f ? 0.0f : 0.25f);  // ends on an edge / inside
    if (i % 11 == 0) p0 = a;                                                           // starts at a vertex
    const K::Triangle_3 tri(point(a), point(b), point(c));
    if (tri.is_degenerate()) continue;  // CGAL's precondition; our degenerate cases are tested elsewhere
    const K::Segment_3 seg(point(p0), point(p1));
    if (seg.is_degenerate()) continue;
    ++cases;
    const bool exact = CGAL::do_intersect(seg, tri);
    exactHits += exact;
    gpu::MeshHit hit;
    const bool ccd = gpu::triCcdStatic(a, b, c, 0.0f, p0, p1, 0.0f, 0u, hit);
    if (exact && !ccd) {
      ++ccdMissed;
      ADD_FAILURE() << "case " << i << ": exact intersection missed by triCcdStatic";
    }
    float t;
    vec3 bary;
    const bool seed = gpu::segmentTriangle(p0, p1, a, b, c, t, bary);
    if (seed != exact) ++seedDisagree;
    if (CGAL::coplanar(point(p0), point(p1), point(a), point(b))) ++degenerateCases;
  }
  std::printf("CGAL oracle: %d segment-triangle cases (%d with the segment in the triangle's plane), %d intersect "
              "exactly: triCcdStatic (thickness 0) missed %d; the seed's float segment-triangle test disagrees on %d "
              "(boundary and in-plane cases)\n",
              cases, degenerateCases, exactHits, ccdMissed, seedDisagree);
  EXPECT_EQ(ccdMissed, 0);
  EXPECT_GT(exactHits, cases / 20);
}

}  // namespace
}  // namespace vkc::test
#endif
