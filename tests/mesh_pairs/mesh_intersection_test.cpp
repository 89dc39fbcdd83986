// Triangle vs triangle on cases with known answers, and mesh vs mesh intersection (the collision
// manifold of include/vkcollide/mesh_intersection.h, on both CPU backends) on analytic meshes: overlapping boxes and tetrahedra
// (closed loops on both surfaces), stacked boxes (plane-like), a vertex poke (point-like), an edge on
// a plane (line-like), an icosphere cutting a plane (one closed loop: a circle of the right radius).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <map>
#include <utility>
#include <vector>

#include "cpu/executor.h"
#include "cpu/mesh_intersection.h"
#include "shared/tri_tri.h"

namespace vkc::test {
namespace {

using glm::vec3;

struct Mesh {
  std::vector<Float4> positions;
  std::vector<uint32_t> indices;
  TriangleMeshView view() const { return {positions, indices}; }
  uint32_t add(vec3 p) {
    positions.push_back({p.x, p.y, p.z, 0.0f});
    return uint32_t(positions.size() - 1);
  }
  void tri(uint32_t a, uint32_t b, uint32_t c) { indices.insert(indices.end(), {a, b, c}); }
};

Mesh boxMesh(vec3 lo, vec3 hi) {
  Mesh m;
  for (int i = 0; i < 8; ++i) m.add({i & 1 ? hi.x : lo.x, i & 2 ? hi.y : lo.y, i & 4 ? hi.z : lo.z});
  const uint32_t faces[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (const auto& f : faces) {
    m.tri(f[0], f[1], f[2]);
    m.tri(f[0], f[2], f[3]);
  }
  return m;
}

Mesh tetraMesh(vec3 a, vec3 b, vec3 c, vec3 d) {
  Mesh m;
  m.add(a), m.add(b), m.add(c), m.add(d);
  m.tri(0, 2, 1), m.tri(0, 1, 3), m.tri(1, 2, 3), m.tri(2, 0, 3);
  return m;
}

// n x n quads over [-half, half]^2 at height z, each split along its (x0,y0)-(x1,y1) diagonal.
Mesh gridMesh(int n, float half, float z) {
  Mesh m;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) m.add({-half + 2 * half * float(i) / float(n), -half + 2 * half * float(j) / float(n), z});
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const uint32_t v = uint32_t(j * (n + 1) + i);
      m.tri(v, v + 1, v + uint32_t(n) + 2);
      m.tri(v, v + uint32_t(n) + 2, v + uint32_t(n) + 1);
    }
  return m;
}

Mesh icosphere(int subdivisions, float radius, vec3 center) {
  const float t = (1.0f + std::sqrt(5.0f)) / 2.0f;
  std::vector<vec3> v = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                         {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
  for (vec3& p : v) p = glm::normalize(p);
  std::vector<uint32_t> f = {0, 11, 5, 0, 5, 1, 0, 1, 7, 0, 7, 10, 0, 10, 11, 1, 5, 9, 5, 11, 4, 11, 10, 2, 10, 7, 6,
                             7, 1, 8, 3, 9, 4, 3, 4, 2, 3, 2, 6, 3, 6, 8, 3, 8, 9, 4, 9, 5, 2, 4, 11, 6, 2, 10, 8, 6, 7, 9, 8, 1};
  for (int s = 0; s < subdivisions; ++s) {
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> mid;
    auto midpoint = [&](uint32_t a, uint32_t b) {
      const auto key = std::minmax(a, b);
      auto [it, added] = mid.emplace(key, uint32_t(v.size()));
      if (added) v.push_back(glm::normalize(v[a] + v[b]));
      return it->second;
    };
    std::vector<uint32_t> next;
    for (size_t i = 0; i < f.size(); i += 3) {
      const uint32_t a = f[i], b = f[i + 1], c = f[i + 2];
      const uint32_t ab = midpoint(a, b), bc = midpoint(b, c), ca = midpoint(c, a);
      next.insert(next.end(), {a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca});
    }
    f = std::move(next);
  }
  Mesh m;
  for (vec3 p : v) m.add(center + p * radius);
  m.indices = f;
  return m;
}

// Distance of p to the surface of box [lo, hi].
float boxSurfaceDistance(vec3 p, vec3 lo, vec3 hi) {
  const vec3 outside = glm::max(glm::max(lo - p, p - hi), vec3(0.0f));
  if (glm::length(outside) > 0.0f) return glm::length(outside);
  const vec3 in = glm::min(p - lo, hi - p);
  return std::min({in.x, in.y, in.z});
}

// A curve's points.
std::vector<vec3> points(const MeshIntersection& m, const IntersectionCurve& c) {
  std::vector<vec3> out;
  for (uint32_t i = 0; i < c.pointCount; ++i) {
    const Float4& p = m.curvePoints[c.firstPoint + i];
    out.emplace_back(p.x, p.y, p.z);
  }
  return out;
}

// The intersection on kCpuScalar, checked equal (bit for bit) to kCpuSimd's.
MeshIntersection intersect(const Mesh& a, const Mesh& b) {
  auto r = intersectMeshes(a.view(), b.view(), Backend::kCpuScalar);
  EXPECT_TRUE(r.ok()) << r.message();
  if (!r.ok()) return {};
  auto simd = intersectMeshes(a.view(), b.view(), Backend::kCpuSimd);
  EXPECT_TRUE(simd.ok()) << simd.message();
  if (simd.ok()) {
    EXPECT_EQ(firstBitwiseDifference(*simd, *r), "");
  }
  return std::move(r.value());
}

TEST(TriTri, KnownAnswers) {
  gpu::TriTriResult r;
  // A vertical triangle crossing a horizontal one: the segment (0.75, 0.5, 0)-(1.25, 0.5, 0), ends on Q's edges 0 and 1.
  ASSERT_TRUE(gpu::triTriIntersect({0, 0, 0}, {2, 0, 0}, {0, 2, 0}, {0.5f, 0.5f, -1}, {1, 0.5f, 1}, {1.5f, 0.5f, -1}, r));
  ASSERT_EQ(r.count, 2u);
  EXPECT_EQ(r.flags & (gpu::kTriTriCoplanar | gpu::kTriTriWithinBand), 0u);
  const vec3 a(r.points[0]), b(r.points[1]);
  const float err = std::min(std::max(glm::length(a - vec3(0.75f, 0.5f, 0)), glm::length(b - vec3(1.25f, 0.5f, 0))),
                             std::max(glm::length(b - vec3(0.75f, 0.5f, 0)), glm::length(a - vec3(1.25f, 0.5f, 0))));
  EXPECT_LT(err, 1e-6f);
  const uint32_t f0 = r.features & 15u, f1 = r.features >> 4;
  EXPECT_EQ(std::min(f0, f1), gpu::kTriTriEdgeQ + 0u);
  EXPECT_EQ(std::max(f0, f1), gpu::kTriTriEdgeQ + 1u);
  // Shared edge, not coplanar: the edge itself.
  ASSERT_TRUE(gpu::triTriIntersect({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 0}, {1, 0, 0}, {0, 0, 1}, r));
  ASSERT_EQ(r.count, 2u);
  EXPECT_LT(std::min(glm::length(vec3(r.points[0])) + glm::length(vec3(r.points[1]) - vec3(1, 0, 0)),
                     glm::length(vec3(r.points[1])) + glm::length(vec3(r.points[0]) - vec3(1, 0, 0))),
            1e-6f);
  // Shared vertex only: a touching point at it.
  ASSERT_TRUE(gpu::triTriIntersect({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 0}, {-1, 0, 1}, {0, -1, 1}, r));
  EXPECT_EQ(r.count, 1u);
  EXPECT_LT(glm::length(vec3(r.points[0])), 1e-6f);
  // Coplanar overlap: the triangle (0.5,0.5) (1.5,0.5) (0.5,1.5), area 0.5.
  ASSERT_TRUE(gpu::triTriIntersect({0, 0, 0}, {2, 0, 0}, {0, 2, 0}, {0.5f, 0.5f, 0}, {3, 0.5f, 0}, {0.5f, 3, 0}, r));
  EXPECT_TRUE(r.flags & gpu::kTriTriCoplanar);
  float area = 0;
  for (uint32_t i = 0; i < r.count; ++i) {
    const vec3 u(r.points[i]), v(r.points[(i + 1) % r.count]);
    area += 0.5f * (u.x * v.y - v.x * u.y);
  }
  EXPECT_NEAR(std::abs(area), 0.5f, 1e-5f);
  // Parallel planes 1e-3 apart: none; 1e-7 apart (inside the band): coplanar.
  EXPECT_FALSE(gpu::triTriIntersect({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1e-3f}, {1, 0, 1e-3f}, {0, 1, 1e-3f}, r));
  EXPECT_TRUE(gpu::triTriIntersect({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1e-7f}, {1, 0, 1e-7f}, {0, 1, 1e-7f}, r));
  EXPECT_TRUE(r.flags & gpu::kTriTriCoplanar);
  // Two zero-area triangles crossing at (1, 0, 0).
  ASSERT_TRUE(gpu::triTriIntersect({0, 0, 0}, {2, 0, 0}, {1, 0, 0}, {1, -1, 0}, {1, 1, 0}, {1, 0.5f, 0}, r));
  EXPECT_TRUE(r.flags & gpu::kTriTriDegenerate);
  EXPECT_LT(glm::length(vec3(r.points[0]) - vec3(1, 0, 0)), 1e-6f);
  // A sliver (zero area) piercing a triangle: the point where it crosses.
  ASSERT_TRUE(gpu::triTriIntersect({0.2f, 0.2f, -1}, {0.2f, 0.2f, 1}, {0.2f, 0.2f, 0.5f}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, r));
  EXPECT_LT(glm::length(vec3(r.points[0]) - vec3(0.2f, 0.2f, 0)), 1e-6f);
  // Not finite: no answer.
  EXPECT_FALSE(gpu::triTriIntersect({NAN, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 0}, {1, 0, 0}, {0, 0, 1}, r));
}

void expectLoopsOnBoxes(const MeshIntersection& m, vec3 loA, vec3 hiA, vec3 loB, vec3 hiB) {
  for (const IntersectionCurve& c : m.curves) {
    EXPECT_TRUE(c.closed);
    for (vec3 p : points(m, c)) {
      EXPECT_LT(boxSurfaceDistance(p, loA, hiA), 1e-5f);
      EXPECT_LT(boxSurfaceDistance(p, loB, hiB), 1e-5f);
    }
  }
}

TEST(MeshIntersection, OverlappingBoxesGiveOneClosedLoopOnBothSurfaces) {
  const vec3 loA(0, 0, 0), hiA(1, 1, 1), loB(0.5f, 0.3f, 0.2f), hiB(1.5f, 1.3f, 1.2f);
  const MeshIntersection m = intersect(boxMesh(loA, hiA), boxMesh(loB, hiB));
  ASSERT_EQ(m.curves.size(), 1u);
  EXPECT_GE(m.curves[0].pointCount, 6u);  // the two surfaces meet along a hexagon-like loop
  expectLoopsOnBoxes(m, loA, hiA, loB, hiB);
  EXPECT_EQ(m.coplanarPairs, 0u);
  // A box through another (a slab crossing a tall box): two separate loops.
  const vec3 loC(-0.5f, 0.2f, 0.3f), hiC(1.5f, 0.7f, 0.6f);
  const MeshIntersection two = intersect(boxMesh(loA, hiA), boxMesh(loC, hiC));
  EXPECT_EQ(two.curves.size(), 2u);
  expectLoopsOnBoxes(two, loA, hiA, loC, hiC);
}

// Degenerate contacts: B's edges pierce A's faces exactly on their diagonals and A's edges cross B's
// faces on theirs (ends on an edge of both meshes, keyed differently by the two sides; pairs touching
// at a corner): still one closed loop, the exact hexagon.
TEST(MeshIntersection, EndsOnEdgesOfBothMeshes) {
  const vec3 loA(0, 0, 0), hiA(1, 1, 1), loB(0.5f, 0.5f, -0.5f), hiB(1.5f, 1.5f, 0.5f);
  const MeshIntersection m = intersect(boxMesh(loA, hiA), boxMesh(loB, hiB));
  ASSERT_EQ(m.curves.size(), 1u);
  EXPECT_EQ(m.curves[0].pointCount, 6u);  // (0.5,0.5,0) (1,0.5,0) (1,0.5,0.5) (1,1,0.5) (0.5,1,0.5) (0.5,1,0)
  expectLoopsOnBoxes(m, loA, hiA, loB, hiB);
}

TEST(MeshIntersection, OverlappingTetrahedraGiveClosedLoops) {
  const Mesh a = tetraMesh({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1});
  const Mesh b = tetraMesh({0.3f, 0.2f, 0.15f}, {1.2f, 0.35f, 0.1f}, {0.25f, 1.1f, 0.2f}, {0.2f, 0.3f, 1.05f});
  const MeshIntersection m = intersect(a, b);
  ASSERT_GE(m.curves.size(), 1u);
  for (const IntersectionCurve& c : m.curves) {
    EXPECT_TRUE(c.closed);
    EXPECT_GE(c.pointCount, 3u);
  }
  // Every point is on a face of both: distance to the nearest face plane (within that face) tiny.
  auto onSurface = [](const Mesh& t, vec3 p) {
    float best = 1e30f;
    for (size_t i = 0; i < t.indices.size(); i += 3) {
      const vec3 v0(t.positions[t.indices[i]].x, t.positions[t.indices[i]].y, t.positions[t.indices[i]].z);
      const vec3 v1(t.positions[t.indices[i + 1]].x, t.positions[t.indices[i + 1]].y, t.positions[t.indices[i + 1]].z);
      const vec3 v2(t.positions[t.indices[i + 2]].x, t.positions[t.indices[i + 2]].y, t.positions[t.indices[i + 2]].z);
      best = std::min(best, std::sqrt(gpu::triClosestPoint(p, v0, v1, v2).dist2));
    }
    return best;
  };
  for (const IntersectionCurve& c : m.curves)
    for (vec3 p : points(m, c)) {
      EXPECT_LT(onSurface(a, p), 1e-5f);
      EXPECT_LT(onSurface(b, p), 1e-5f);
    }
}

TEST(MeshIntersection, StackedBoxesArePlaneLike) {
  const MeshIntersection m = intersect(boxMesh({0, 0, 0}, {1, 1, 1}), boxMesh({0.25f, 0.25f, 1}, {0.75f, 0.75f, 2}));
  EXPECT_GT(m.coplanarPairs, 0u);
  EXPECT_EQ(m.shape, IntersectionShape::kPlane) << toString(m.shape);
  EXPECT_GT(std::abs(m.normal.z), 0.99f);
}

TEST(MeshIntersection, VertexPokeIsPointLike) {
  const Mesh plane = gridMesh(2, 1.0f, 0.0f);
  const Mesh tet = tetraMesh({0.3f, -0.2f, -2e-4f}, {0.0f, 0.3f, 0.5f}, {0.6f, 0.1f, 0.5f}, {0.4f, -0.6f, 0.5f});
  const MeshIntersection m = intersect(tet, plane);
  ASSERT_EQ(m.curves.size(), 1u);
  EXPECT_TRUE(m.curves[0].closed);
  EXPECT_EQ(m.curves[0].pointCount, 3u);  // the three edges at the apex cross the plane
  EXPECT_EQ(m.shape, IntersectionShape::kPoint) << toString(m.shape) << " spread " << m.spread.x;
  for (vec3 p : points(m, m.curves[0])) EXPECT_LT(glm::length(p - vec3(0.3f, -0.2f, 0)), 1e-3f);
}

TEST(MeshIntersection, EdgeOnPlaneIsLineLike) {
  const Mesh plane = gridMesh(4, 1.0f, 0.0f);
  const Mesh tet = tetraMesh({-0.6f, 0.3f, 0}, {0.7f, 0.35f, 0}, {0.1f, 0.8f, 0.6f}, {0.0f, -0.1f, 0.5f});
  const MeshIntersection m = intersect(tet, plane);
  EXPECT_EQ(m.shape, IntersectionShape::kLine) << toString(m.shape) << " spread " << m.spread.x << " " << m.spread.y;
  EXPECT_GT(m.spread.x, 0.3f);
}

TEST(MeshIntersection, SphereCuttingPlaneIsOneCircle) {
  const vec3 center(0.013f, 0.021f, 0.3f);
  const Mesh sphere = icosphere(3, 1.0f, center);
  const Mesh plane = gridMesh(8, 2.0f, 0.0f);
  const MeshIntersection m = intersect(sphere, plane);
  ASSERT_EQ(m.curves.size(), 1u);
  const IntersectionCurve& c = m.curves[0];
  EXPECT_TRUE(c.closed);
  EXPECT_GT(c.pointCount, 40u);
  const float radius = std::sqrt(1.0f - center.z * center.z);
  float lo = 1e30f, hi = 0;
  for (vec3 p : points(m, c)) {
    EXPECT_LT(std::abs(p.z), 1e-6f);
    const float r = glm::length(vec3(p.x - center.x, p.y - center.y, 0));
    lo = std::min(lo, r);
    hi = std::max(hi, r);
  }
  // The icosphere is inscribed in the sphere: its section lies inside the circle, by at most the
  // sagitta of its edges (about 0.1 long after 3 subdivisions).
  EXPECT_LE(hi, radius + 1e-5f);
  EXPECT_GE(lo, radius - 0.01f);
  std::printf("icosphere (1280 triangles) cut by a plane: %zu loop points, radius %.5f..%.5f (circle %.5f)\n",
              size_t{c.pointCount}, double(lo), double(hi), double(radius));
  EXPECT_EQ(m.shape, IntersectionShape::kPlane);
  EXPECT_GT(std::abs(m.normal.z), 0.999f);
  // Deterministic, and the same loop with the meshes swapped.
  const MeshIntersection again = intersect(sphere, plane);
  ASSERT_EQ(again.curves.size(), 1u);
  EXPECT_EQ(again.curvePoints, m.curvePoints);
  const MeshIntersection swapped = intersect(plane, sphere);
  ASSERT_EQ(swapped.curves.size(), 1u);
  EXPECT_EQ(swapped.curves[0].pointCount, c.pointCount);
}

// The BVH path (the default) and the brute force give the same pairs, results and curves.
TEST(MeshIntersection, BvhMatchesBruteForce) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Mesh soupA, soupB;
  for (int t = 0; t < 300; ++t) {
    const vec3 ca(u(rng), u(rng), u(rng)), cb(u(rng), u(rng), u(rng));
    const uint32_t a0 = soupA.add(ca + vec3(u(rng), u(rng), u(rng)) * 0.2f), a1 = soupA.add(ca + vec3(u(rng), u(rng), u(rng)) * 0.2f),
                   a2 = soupA.add(ca + vec3(u(rng), u(rng), u(rng)) * 0.2f);
    const uint32_t b0 = soupB.add(cb + vec3(u(rng), u(rng), u(rng)) * 0.2f), b1 = soupB.add(cb + vec3(u(rng), u(rng), u(rng)) * 0.2f),
                   b2 = soupB.add(cb + vec3(u(rng), u(rng), u(rng)) * 0.2f);
    soupA.tri(a0, a1, a2), soupB.tri(b0, b1, b2);
  }
  const std::pair<Mesh, Mesh> cases[] = {{soupA, soupB},
                                         {icosphere(3, 1.0f, {0.013f, 0.021f, 0.3f}), gridMesh(8, 2.0f, 0.0f)},
                                         {boxMesh({0, 0, 0}, {1, 1, 1}), boxMesh({0.25f, 0.25f, 1}, {0.75f, 0.75f, 2})}};
  for (const auto& [a, b] : cases) {
    for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      auto bvh = cpu::intersectMeshes(a.view(), b.view(), backend, nullptr, {}, cpu::PairSearch::kBvh);
      auto brute = cpu::intersectMeshes(a.view(), b.view(), backend, nullptr, {}, cpu::PairSearch::kBruteForce);
      ASSERT_TRUE(bvh.ok() && brute.ok());
      EXPECT_GT(bvh->pairs.size(), 10u);
      EXPECT_EQ(firstBitwiseDifference(*bvh, *brute), "");
    }
  }
}

// Random pairs of jittered icospheres (welded, closed) and random soups: kCpuSimd's pairs, curves and
// classification are kCpuScalar's, bit for bit (the pre-test drops only pairs triTriIntersect finds
// empty), and an executor's threads give the one-thread result.
TEST(MeshIntersection, SimdAndThreadsEqualTheScalarReference) {
  auto pool = CpuExecutor::create(3);
  ASSERT_TRUE(pool.ok()) << pool.message();
  detail::setMinChunkForTesting(*pool, 64);
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  size_t pairs = 0, curves = 0;
  for (int round = 0; round < 12; ++round) {
    Mesh a = icosphere(3, 1.0f, {0, 0, 0});
    Mesh b = round % 3 == 2 ? gridMesh(12, 1.5f, 0.3f * u(rng)) : icosphere(2, 0.4f + 0.5f * (u(rng) + 1.0f), vec3(u(rng), u(rng), u(rng)) * 0.8f);
    for (Float4& p : a.positions) p.x += 0.01f * u(rng), p.y += 0.01f * u(rng), p.z += 0.01f * u(rng);
    if (round % 4 == 3) {  // exact coordinates on a coarse grid: touching, coplanar and shared-edge cases
      for (Mesh* m : {&a, &b})
        for (Float4& p : m->positions) p = {std::round(p.x * 8) / 8, std::round(p.y * 8) / 8, std::round(p.z * 8) / 8, 0};
    }
    const MeshIntersection scalar = intersect(a, b);  // checks kCpuSimd too
    pairs += scalar.pairs.size();
    curves += scalar.curves.size();
    for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      auto threaded = intersectMeshes(a.view(), b.view(), backend, *pool);
      ASSERT_TRUE(threaded.ok()) << threaded.message();
      EXPECT_EQ(firstBitwiseDifference(*threaded, scalar), "");
    }
  }
  EXPECT_GT(pairs, 2000u);
  EXPECT_GT(curves, 10u);
}

// m unwelded: every triangle its own three vertices.
Mesh unwelded(const Mesh& m) {
  Mesh soup;
  for (uint32_t i : m.indices) {
    const Float4& p = m.positions[i];
    soup.indices.push_back(soup.add({p.x, p.y, p.z}));
  }
  return soup;
}

// An unwelded copy of a mesh joins into the same closed loop: its ends are all left open by the keys
// and merged by distance (within the bands).
TEST(MeshIntersection, UnweldedSoupJoinsIntoTheWeldedLoop) {
  const Mesh sphere = icosphere(3, 1.0f, {0.013f, 0.021f, 0.3f});
  const Mesh soup = unwelded(sphere);
  const Mesh plane = gridMesh(8, 2.0f, 0.0f);
  const MeshIntersection welded = intersect(sphere, plane), unwelded = intersect(soup, plane);
  ASSERT_EQ(welded.curves.size(), 1u);
  ASSERT_EQ(unwelded.curves.size(), 1u);
  EXPECT_TRUE(unwelded.curves[0].closed);
  EXPECT_EQ(unwelded.curves[0].pointCount, welded.curves[0].pointCount);
  EXPECT_EQ(unwelded.pairs.size(), welded.pairs.size());
  for (vec3 p : points(unwelded, unwelded.curves[0])) {
    float best = 1e30f;
    for (vec3 q : points(welded, welded.curves[0])) best = std::min(best, glm::length(p - q));
    EXPECT_LT(best, 1e-6f);
  }
}

// A larger unwelded soup (20 480 triangles, every end open: the sweep's many close pairs) still joins
// into one closed loop.
TEST(MeshIntersection, LargeSoupJoinsIntoOneLoop) {
  const MeshIntersection m = intersect(unwelded(icosphere(5, 1.0f, {0.013f, 0.021f, 0.3f})), gridMesh(16, 2.0f, 0.0f));
  ASSERT_EQ(m.curves.size(), 1u);
  EXPECT_TRUE(m.curves[0].closed);
  EXPECT_GT(m.curves[0].pointCount, 300u);
}

TEST(MeshIntersection, EmptyMeshesAndBackendsAndSettings) {
  const Mesh box = boxMesh({0, 0, 0}, {1, 1, 1});
  const Mesh empty;
  for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
    for (const auto& [x, y] : {std::pair{&box, &empty}, std::pair{&empty, &box}, std::pair{&empty, &empty}}) {
      auto r = intersectMeshes(x->view(), y->view(), backend);
      ASSERT_TRUE(r.ok()) << r.message();
      EXPECT_TRUE(r->pairs.empty() && r->curves.empty() && r->touchingPoints.empty());
      EXPECT_EQ(r->shape, IntersectionShape::kNone);
    }
    // Apart: nothing.
    auto apart = intersectMeshes(box.view(), boxMesh({2, 2, 2}, {3, 3, 3}).view(), backend);
    ASSERT_TRUE(apart.ok());
    EXPECT_EQ(apart->shape, IntersectionShape::kNone);
    EXPECT_TRUE(apart->pairs.empty());
  }
  auto gpu = intersectMeshes(box.view(), box.view(), Backend::kVulkan);
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(gpu.message().find("kVulkan"), std::string::npos) << gpu.message();
  for (auto [settings, field] : {std::pair{MeshIntersectionSettings{.pointFraction = -1.0f}, "settings.pointFraction"},
                                 std::pair{MeshIntersectionSettings{.pointFraction = NAN}, "settings.pointFraction"},
                                 std::pair{MeshIntersectionSettings{.lineRatio = INFINITY}, "settings.lineRatio"}}) {
    auto r = intersectMeshes(box.view(), box.view(), Backend::kCpuSimd, settings);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find(field), std::string::npos) << r.message();
  }
}

// firstBitwiseDifference: "" for a result and its copy; a flipped bit, a sign of zero or a count names
// the field and index.
TEST(MeshIntersection, FirstBitwiseDifferenceNamesTheField) {
  const MeshIntersection m = intersect(boxMesh({0, 0, 0}, {1, 1, 1}), boxMesh({0.5f, 0.5f, 0.5f}, {1.5f, 1.5f, 1.5f}));
  ASSERT_GT(m.pairs.size(), 2u);
  ASSERT_GT(m.curvePoints.size(), 3u);
  EXPECT_EQ(firstBitwiseDifference(m, m), "");
  auto expectDifference = [&](auto change, const std::string& expected) {
    MeshIntersection other = m;
    change(other);
    const std::string d = firstBitwiseDifference(other, m);
    EXPECT_EQ(d.rfind(expected, 0), 0u) << d;
  };
  expectDifference([](MeshIntersection& x) { x.pairs.pop_back(); }, "pairs: ");
  expectDifference([](MeshIntersection& x) { x.pairs[2].band = std::nextafter(x.pairs[2].band, 1.0f); }, "pairs[2]: band ");
  expectDifference([](MeshIntersection& x) { x.pairs[1].triangleB += 1; }, "pairs[1]: triangles ");
  expectDifference([](MeshIntersection& x) { x.curves[0].closed = !x.curves[0].closed; }, "curves[0]: ");
  expectDifference([](MeshIntersection& x) { x.curvePoints[3].w = -0.0f; }, "curvePoints[3]: (");
  expectDifference([](MeshIntersection& x) { x.touchingPoints.push_back({}); }, "touchingPoints: ");
  expectDifference([](MeshIntersection& x) { x.coplanarPairs += 1; }, "coplanarPairs: ");
  expectDifference([](MeshIntersection& x) { x.shape = IntersectionShape::kNone; }, "shape: none vs ");
  expectDifference([](MeshIntersection& x) { x.normal.x = -x.normal.x; }, "normal: ");
}

TEST(MeshIntersection, BadInputNamesTheField) {
  Mesh a = boxMesh({0, 0, 0}, {1, 1, 1});
  const Mesh b = boxMesh({0.5f, 0.5f, 0.5f}, {2, 2, 2});
  Mesh badIndex = b;
  badIndex.indices[7] = 99;
  auto r = intersectMeshes(a.view(), badIndex.view(), Backend::kCpuSimd);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("meshB.indices[7]"), std::string::npos) << r.message();
  Mesh nan = a;
  nan.positions[3].y = NAN;
  r = intersectMeshes(nan.view(), b.view(), Backend::kCpuScalar);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("meshA.positions[3]"), std::string::npos) << r.message();
  a.indices.pop_back();
  r = intersectMeshes(a.view(), b.view(), Backend::kCpuSimd);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("meshA.indices"), std::string::npos) << r.message();
}

}  // namespace
}  // namespace vkc::test
