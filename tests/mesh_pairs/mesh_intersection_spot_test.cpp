// The collision manifold on fine meshes: Spot (tests/data/meshes, 1 654 triangles) subdivided 1-to-4
// (the new vertices on the old triangles: the same surface) 0, 2 and 4 times (to 423 424 triangles)
// against a turned and moved copy subdivided alike. The surfaces, and so their intersection, do not
// change with the subdivision: every level must give the same number of loops, all closed, no
// touching points (the meshes only cross), and the same total length. At the finer levels the curve
// passes within its band of edges of both meshes more often; there, before the join bridged touching
// pairs and closed gaps of a few bands, one loop came out open and 33 touching points beside it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "support/obj_mesh.h"
#include "vkcollide/mesh_intersection.h"

namespace vkc::test {
namespace {

double totalLength(const MeshIntersection& m) {
  double s = 0;
  for (const IntersectionCurve& c : m.curves)
    for (uint32_t i = 0; i < c.pointCount; ++i) {
      if (i + 1 == c.pointCount && !c.closed) break;
      const Float4& p = m.curvePoints[c.firstPoint + i];
      const Float4& q = m.curvePoints[c.firstPoint + (i + 1) % c.pointCount];
      const double dx = double(p.x) - double(q.x), dy = double(p.y) - double(q.y), dz = double(p.z) - double(q.z);
      s += std::sqrt(dx * dx + dy * dy + dz * dz);
    }
  return s;
}

TEST(MeshIntersectionSpot, SubdividedSpotGivesTheSameClosedLoops) {
  Mesh spot;
  ASSERT_TRUE(readObj(std::string(VKC_SOURCE_DIR) + "/tests/data/meshes/spot_low_resolution.obj", spot));
  float lo = INFINITY, hi = -INFINITY;
  for (const Float4& v : spot.vertices) lo = std::min(lo, v.x), hi = std::max(hi, v.x);
  const float axis[3] = {0, 1, 0}, shift[3] = {0.25f * (hi - lo), 0, 0};
  Mesh a = spot;
  size_t loops = 0;
  double length = 0;
  for (int level = 0; level <= 4; ++level) {
    if (level > 0) a = subdivide(a);
    if (level % 2 == 1) continue;
    const Mesh b = rotatedAndMoved(a, axis, 0.5235988f, shift);
    for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      SCOPED_TRACE(std::string(toString(backend)) + ", level " + std::to_string(level));
      auto r = intersectMeshes({a.vertices, a.indices}, {b.vertices, b.indices}, backend);
      ASSERT_TRUE(r.ok()) << r.message();
      for (const IntersectionCurve& c : r->curves) EXPECT_TRUE(c.closed) << c.pointCount << " points";
      EXPECT_EQ(r->touchingPoints.size(), 0u);
      const double l = totalLength(*r);
      if (level == 0) {
        loops = r->curves.size();
        length = l;
        EXPECT_GE(loops, 2u);
      }
      EXPECT_EQ(r->curves.size(), loops);
      EXPECT_NEAR(l, length, 1e-5 * length);
      std::printf("spot subdivided %d times (%u triangles): %zu loops, %zu points, length %.7f, %zu pairs\n", level,
                  a.triangles(), r->curves.size(), r->curvePoints.size(), l, r->pairs.size());
    }
  }
}

}  // namespace
}  // namespace vkc::test
