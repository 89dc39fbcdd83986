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

#include <CGAL/Polygon_mesh_processing/intersection.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "shared/common.h"
#include "support/cgal_mesh.h"
#include "support/obj_mesh.h"
#include "vkcollide/mesh_intersection.h"

namespace vkc::test {
namespace {

using glm::dvec3;
using K = CgalKernel;
using SurfaceMesh = CgalSurfaceMesh;
using Polyline = std::vector<dvec3>;

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

// pointSlack: how many points a loop of ours may have fewer than CGAL's (a piece of curve shorter than
// its band is a point to us, two to CGAL); returns the points we have fewer in all.
size_t compareWithCgal(const Mesh& a, const Mesh& b, const char* name, bool quiet = false, size_t pointSlack = 0) {
  SCOPED_TRACE(name);
  std::vector<std::vector<K::Point_3>> cgalLines;
  const SurfaceMesh ca = toCgalSurfaceMesh(a), cb = toCgalSurfaceMesh(b);
  CGAL::Polygon_mesh_processing::surface_intersection(ca, cb, std::back_inserter(cgalLines));
  // CGAL's closed polylines repeat their first point at the end.
  std::vector<Polyline> theirs;
  for (const auto& line : cgalLines) {
    Polyline l;
    for (const K::Point_3& p : line) l.emplace_back(p.x(), p.y(), p.z());
    EXPECT_GE(l.size(), 4u);
    EXPECT_EQ(l.front(), l.back()) << "CGAL's polyline is open";
    if (l.size() < 4 || l.front() != l.back()) return 0;
    l.pop_back();
    theirs.push_back(std::move(l));
  }
  size_t fewer = 0;
  for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
    auto r = intersectMeshes({a.vertices, a.indices}, {b.vertices, b.indices}, backend);
    EXPECT_TRUE(r.ok()) << r.message();
    if (!r.ok()) return fewer;
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
    EXPECT_EQ(ours.size(), theirs.size());
    EXPECT_GT(ours.size(), 0u);
    if (ours.size() != theirs.size() || ours.empty()) return fewer;
    double worst = 0;
    size_t points = 0;
    for (const Polyline& o : ours) {
      // The CGAL loop nearest to this one's first point.
      size_t match = 0;
      for (size_t k = 1; k < theirs.size(); ++k)
        if (loopDistance(o[0], theirs[k]) < loopDistance(o[0], theirs[match])) match = k;
      const Polyline& t = theirs[match];
      EXPECT_LE(o.size(), t.size());
      EXPECT_LE(t.size() - std::min(t.size(), o.size()), pointSlack);
      if (backend == Backend::kCpuScalar) fewer += t.size() - std::min(t.size(), o.size());
      for (dvec3 p : o) worst = std::max(worst, loopDistance(p, t));
      for (dvec3 p : t) worst = std::max(worst, loopDistance(p, o));
      EXPECT_NEAR(loopLength(o), loopLength(t), 1e-5 * loopLength(t));
      points += o.size();
    }
    EXPECT_LT(worst, 1e-5);
    if (!quiet)
      std::printf("%s, %s: %zu loops, %zu points (CGAL the same), worst distance to CGAL's polylines %.2e\n", name,
                  toString(backend), ours.size(), points, worst);
  }
  return fewer;
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

// A sphere-like mesh: the octahedron subdivided 4 times (2 048 triangles) on a sphere of `radius`
// around `center`, turned by `angle` about `axis`.
Mesh sphereMesh(float radius, glm::vec3 center, glm::vec3 axis, float angle) {
  Mesh m = octahedron();
  for (int i = 0; i < 4; ++i) m = subdivide(m);
  for (Float4& v : m.vertices) {
    const glm::vec3 p = glm::normalize(glm::vec3(v.x, v.y, v.z)) * radius;
    v = {p.x, p.y, p.z, 0};
  }
  return moved(m, axis, angle, center);
}

// 40 random pairs of crossing sphere meshes (radii 0.4-1.2 against 1, centres so that the surfaces
// cross, random turns): the same loops as CGAL's, all closed, every point of each side within 1e-5
// of the other's polylines, lengths within 1e-5 (compareWithCgal); a loop may have up to 2 points
// fewer than CGAL's (seen: 1 point in 1 of the 40 rounds).
TEST(MeshIntersectionCgal, RandomCrossingSpheresMatchCgalPolylines) {
  std::mt19937 rng(4242);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  auto direction = [&] {
    const float z = 2 * u(rng) - 1, phi = 6.2831853f * u(rng), r = std::sqrt(std::max(0.0f, 1 - z * z));
    return glm::vec3(r * std::cos(phi), r * std::sin(phi), z);
  };
  size_t fewer = 0;
  for (int round = 0; round < 40; ++round) {
    const float rb = 0.4f + 0.8f * u(rng);
    const float lo = std::abs(1.0f - rb) + 0.05f, hi = 1.0f + rb - 0.05f;
    const Mesh a = sphereMesh(1.0f, {0, 0, 0}, direction(), 6.2831853f * u(rng));
    const Mesh b = sphereMesh(rb, direction() * (lo + (hi - lo) * u(rng)), direction(), 6.2831853f * u(rng));
    fewer += compareWithCgal(a, b, ("random spheres, round " + std::to_string(round)).c_str(), /*quiet=*/true,
                             /*pointSlack=*/2);
  }
  std::printf("40 random pairs of crossing sphere meshes: the loops of CGAL's surface_intersection, %zu point(s) fewer "
              "in all\n", fewer);
}

}  // namespace
}  // namespace vkc::test
#endif  // VKC_HAVE_CGAL
