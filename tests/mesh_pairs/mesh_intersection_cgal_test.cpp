// CGAL as the oracle of the collision manifold (vkc::intersectMeshes): Spot (tests/data/meshes,
// 1 654 triangles, closed, genus 0) against rotated and moved copies of itself (and once subdivided),
// our curves against CGAL::Polygon_mesh_processing::surface_intersection's polylines (exact predicates;
// its intersection points are constructed in double). Debian libcgal-dev, optional, tests only.
//  - the same number of curves, every one closed, and the same number of points in the matched
//    curves (both have one point per edge of one mesh crossing a face of the other);
//  - every point of ours within 1e-5 (the mesh is about 2 across, floats; our band is about 34 ulps)
//    of CGAL's polylines, and every CGAL point within 1e-5 of ours;
//  - the curves' lengths agree to 1e-5 relative.
#if VKC_HAVE_CGAL
#include <gtest/gtest.h>

#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Polygon_mesh_processing/intersection.h>
#include <CGAL/Surface_mesh.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "shared/common.h"
#include "support/obj_mesh.h"
#include "vkcollide/mesh_intersection.h"

namespace vkc::test {
namespace {

using glm::dvec3;
using K = CGAL::Exact_predicates_inexact_constructions_kernel;
using SurfaceMesh = CGAL::Surface_mesh<K::Point_3>;
using Polyline = std::vector<dvec3>;

SurfaceMesh toCgal(const Mesh& m) {
  SurfaceMesh s;
  std::vector<SurfaceMesh::Vertex_index> v;
  for (const Float4& p : m.vertices) v.push_back(s.add_vertex(K::Point_3(p.x, p.y, p.z)));
  for (size_t i = 0; i < m.indices.size(); i += 3) s.add_face(v[m.indices[i]], v[m.indices[i + 1]], v[m.indices[i + 2]]);
  return s;
}

// m rotated about the unit axis, then moved (support/obj_mesh.h).
Mesh moved(const Mesh& m, glm::vec3 axis, float angle, glm::vec3 shift) {
  const float a[3] = {axis.x, axis.y, axis.z}, t[3] = {shift.x, shift.y, shift.z};
  return rotatedAndMoved(m, a, angle, t);
}

double segmentDistance(dvec3 p, dvec3 a, dvec3 b) {
  const dvec3 ab = b - a;
  const double len2 = glm::dot(ab, ab);
  const double t = len2 > 0 ? std::clamp(glm::dot(p - a, ab) / len2, 0.0, 1.0) : 0.0;
  return glm::length(p - (a + ab * t));
}

// Distance of p to a closed polyline.
double loopDistance(dvec3 p, const Polyline& loop) {
  double best = INFINITY;
  for (size_t i = 0; i < loop.size(); ++i) best = std::min(best, segmentDistance(p, loop[i], loop[(i + 1) % loop.size()]));
  return best;
}

double loopLength(const Polyline& loop) {
  double s = 0;
  for (size_t i = 0; i < loop.size(); ++i) s += glm::length(loop[(i + 1) % loop.size()] - loop[i]);
  return s;
}

void compareWithCgal(const Mesh& a, const Mesh& b, const char* name) {
  SCOPED_TRACE(name);
  std::vector<std::vector<K::Point_3>> cgalLines;
  const SurfaceMesh ca = toCgal(a), cb = toCgal(b);
  CGAL::Polygon_mesh_processing::surface_intersection(ca, cb, std::back_inserter(cgalLines));
  // CGAL's closed polylines repeat their first point at the end.
  std::vector<Polyline> theirs;
  for (const auto& line : cgalLines) {
    Polyline l;
    for (const K::Point_3& p : line) l.emplace_back(p.x(), p.y(), p.z());
    ASSERT_GE(l.size(), 4u);
    ASSERT_EQ(l.front(), l.back()) << "CGAL's polyline is open";
    l.pop_back();
    theirs.push_back(std::move(l));
  }
  for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
    auto r = intersectMeshes({a.vertices, a.indices}, {b.vertices, b.indices}, backend);
    ASSERT_TRUE(r.ok()) << r.message();
    std::vector<Polyline> ours;
    for (const IntersectionCurve& c : r->curves) {
      EXPECT_TRUE(c.closed);
      Polyline l;
      for (uint32_t i = 0; i < c.pointCount; ++i) {
        const Float4& p = r->curvePoints[c.firstPoint + i];
        l.emplace_back(p.x, p.y, p.z);
      }
      ours.push_back(std::move(l));
    }
    EXPECT_TRUE(r->touchingPoints.empty());
    EXPECT_EQ(r->coplanarPairs, 0u);
    ASSERT_EQ(ours.size(), theirs.size());
    ASSERT_GT(ours.size(), 0u);
    double worst = 0;
    size_t points = 0;
    for (const Polyline& o : ours) {
      // The CGAL loop nearest to this one's first point.
      size_t match = 0;
      for (size_t k = 1; k < theirs.size(); ++k)
        if (loopDistance(o[0], theirs[k]) < loopDistance(o[0], theirs[match])) match = k;
      const Polyline& t = theirs[match];
      EXPECT_EQ(o.size(), t.size());
      for (dvec3 p : o) worst = std::max(worst, loopDistance(p, t));
      for (dvec3 p : t) worst = std::max(worst, loopDistance(p, o));
      EXPECT_NEAR(loopLength(o), loopLength(t), 1e-5 * loopLength(t));
      points += o.size();
    }
    EXPECT_LT(worst, 1e-5);
    std::printf("%s, %s: %zu loops, %zu points (CGAL the same), worst distance to CGAL's polylines %.2e\n", name,
                toString(backend), ours.size(), points, worst);
  }
}

TEST(MeshIntersectionCgal, SpotAgainstMovedCopiesMatchesCgalPolylines) {
  Mesh spot;
  ASSERT_TRUE(readObj(std::string(VKC_SOURCE_DIR) + "/tests/data/meshes/spot_low_resolution.obj", spot));
  compareWithCgal(spot, moved(spot, glm::normalize(glm::vec3(0.3f, 1.0f, 0.2f)), 0.7f, {0.31f, 0.05f, -0.12f}),
                  "spot vs rotated, moved spot");
  compareWithCgal(spot, moved(spot, glm::vec3(0, 0, 1), 1.9f, {0.0f, -0.2f, 0.1f}), "spot vs spot turned 1.9 rad");
  const Mesh fine = subdivide(spot);
  compareWithCgal(fine, moved(fine, glm::normalize(glm::vec3(-0.4f, 0.2f, 1.0f)), 0.35f, {0.12f, 0.3f, 0.07f}),
                  "subdivided spot (6 616 triangles) vs moved copy");
}

}  // namespace
}  // namespace vkc::test
#endif  // VKC_HAVE_CGAL
