// The mesh pairs of the geometry queries (issue 17, src/cpu/geometry_queries_mesh.cpp): analytic
// cases, the BVH's contacts against every cell's (brute force) on random meshes, the swap rule,
// contact invariants, shared vertices with a point set, bad input, and kVulkan's refusal.
#include <random>

#include "geometry_queries/geometry_queries_mesh_test_support.h"
#include "shared/collide_meshes_math.h"

namespace vkc::test::geometry {
namespace {

// An n x n grid of unit squares in the plane y = 0 from (0, 0, 0), two triangles each (normal +y).
void gridMesh(uint32_t n, float size, std::vector<Float4>& vertices, std::vector<uint32_t>& cells) {
  for (uint32_t j = 0; j <= n; ++j)
    for (uint32_t i = 0; i <= n; ++i)
      vertices.push_back(v3(size * static_cast<float>(i) / static_cast<float>(n), 0,
                            size * static_cast<float>(j) / static_cast<float>(n)));
  for (uint32_t j = 0; j < n; ++j) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t a = j * (n + 1) + i, b = a + 1, c = a + n + 1, d = c + 1;
      cells.insert(cells.end(), {a, c, b, b, c, d});  // (c - a) x (b - a) = +y
    }
  }
}

TEST(GeometryQueriesMesh, SphereOnAGridGivesOneContactPerTouchingTriangle) {
  std::vector<Float4> vertices;
  std::vector<uint32_t> cells;
  gridMesh(4, 4.0f, vertices, cells);  // squares of 1; square (i, j) holds triangles 2 (4 j + i) and + 1
  for (Backend backend : kCpuBackends) {
    Batch b;
    const uint32_t mesh = b.addMesh(GeometryType::kSurfaceMesh, vertices, cells);
    // 0.3 above the plane, radius 0.35: the disc of radius sqrt(0.35^2 - 0.3^2) = 0.18 in the plane.
    // Around (1.3, 1.3) it stays inside square (1, 1)'s first triangle (0.28 from its diagonal).
    b.query(mesh, b.add(Geometry::sphere(Float4{1.3f, 0.3f, 1.3f, 0.35f})));
    // Around (1.5, 1.5), the square's centre: on the diagonal, both triangles of the square.
    b.query(mesh, b.add(Geometry::sphere(Float4{1.5f, 0.3f, 1.5f, 0.35f})));
    auto counts = b.run(backend);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(b.ranges[0].count, 1u);
    ASSERT_EQ(b.ranges[1].count, 2u);
    EXPECT_EQ(b.elementsA[0].index, 10u);
    EXPECT_EQ(contactCellType(b.elementsA[0]), CellType::kTriangle);
    expectElement(b.elementsB[0], ContactElementType::kPointDirection,
                  {v3(1.3f, -0.05f, 1.3f), v3(0, 1, 0), 0.05f}, 1e-6f, "sphere");
    EXPECT_EQ(b.elementsA[1].index, 10u);
    EXPECT_EQ(b.elementsA[2].index, 11u);
    for (uint32_t k = 0; k < 3; ++k) {
      expectContactInvariants(b.elementsA[k], b.elementsB[k], 1e-6f);
      EXPECT_NEAR(b.elementsA[k].point.w, 0.05f, 1e-6f);
    }
  }
}

TEST(GeometryQueriesMesh, CapsuleLyingOnAFaceGetsTwoContacts) {
  for (Backend backend : kCpuBackends) {
    Batch b;
    const uint32_t mesh =
        b.addMesh(GeometryType::kSurfaceMesh, {v3(-10, 0, -10), v3(-10, 0, 10), v3(10, 0, 0)}, {0, 1, 2});
    const uint32_t capsule = b.add(Geometry::capsule(v3(-2, 0.1f, 0), v3(2, 0.1f, 0), 0.25f));
    b.query(mesh, capsule);
    auto counts = b.run(backend);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(counts->contacts, 2u);
    expectElement(b.elementsB[0], ContactElementType::kPointDirection,
                  {v3(-2, -0.15f, 0), v3(0, 1, 0), 0.15f}, 1e-6f, "end 0");
    expectElement(b.elementsB[1], ContactElementType::kPointDirection, {v3(2, -0.15f, 0), v3(0, 1, 0), 0.15f},
                  1e-6f, "end 1");
    // Hanging over the edge x = 10 - ...: the span is clipped to the triangle.
    Batch c;
    const uint32_t m2 =
        c.addMesh(GeometryType::kSurfaceMesh, {v3(-1, 0, -10), v3(-1, 0, 10), v3(1, 0, -10)}, {0, 1, 2});
    const uint32_t cap2 = c.add(Geometry::capsule(v3(-3, 0.1f, 0), v3(3, 0.1f, 0), 0.25f));
    c.query(m2, cap2);
    ASSERT_TRUE(c.run(backend).ok());
    ASSERT_EQ(c.ranges[0].count, 2u);
    EXPECT_NEAR(c.elementsA[0].point.x, -1.0f, 1e-5f);  // the span over the triangle: x in [-1, 0]
    EXPECT_NEAR(c.elementsA[1].point.x, 0.0f, 1e-5f);
    for (uint32_t k = 0; k < 2; ++k) expectContactInvariants(c.elementsA[k], c.elementsB[k], 1e-6f);
  }
}

TEST(GeometryQueriesMesh, CapsulePiercingATriangleTakesTheShorterWayOut) {
  for (Backend backend : kCpuBackends) {
    Batch b;
    const uint32_t mesh =
        b.addMesh(GeometryType::kSurfaceMesh, {v3(-10, 0, -10), v3(-10, 0, 10), v3(10, 0, 0)}, {0, 1, 2});
    // Axis from y = -0.3 to y = 2 (normal +y up): leaving upwards needs 0.3 + r, downwards 2 + r.
    const uint32_t capsule = b.add(Geometry::capsule(v3(0, -0.3f, 0), v3(0, 2, 0), 0.1f));
    b.query(capsule, mesh);  // the capsule as A
    auto counts = b.run(backend);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(counts->contacts, 1u);
    expectElement(b.elementsA[0], ContactElementType::kPointDirection, {v3(0, -0.4f, 0), v3(0, 1, 0), 0.4f},
                  1e-6f, "capsule");
    EXPECT_EQ(b.elementsB[0].type, ContactElementType::kCellIndex);
    EXPECT_EQ(contactCellType(b.elementsB[0]), CellType::kTriangle);
    expectContactInvariants(b.elementsA[0], b.elementsB[0], 1e-6f);
  }
}

TEST(GeometryQueriesMesh, TetrahedralMeshSharesVerticesWithAPointSet) {
  // Two tetrahedra sharing the face (1, 2, 3); the point set is the mesh's own vertices plus two
  // points: one inside each tetrahedron. Vertices lie on the boundary: no contact.
  Batch b;
  b.points = {v3(0, 0, 0), v3(1, 0, 0),          v3(0, 1, 0),         v3(0, 0, 1),
              v3(1, 1, 1), v3(0.1f, 0.1f, 0.1f), v3(0.6f, 0.6f, 0.6f)};
  b.cells = {0, 1, 2, 3, 1, 2, 3, 4};
  const uint32_t mesh = b.add(Geometry::tetrahedralMesh(0, 5, 0, 2));
  const uint32_t set = b.add(Geometry::pointSet(0, 7));
  b.query(mesh, set);
  b.query(set, mesh);
  for (Backend backend : kCpuBackends) {
    auto counts = b.run(backend);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(b.ranges[0].count, 2u);
    EXPECT_EQ(b.elementsB[0].index, 5u);  // point 5 in tetrahedron 0
    EXPECT_EQ(b.elementsA[0].index, 0u);
    EXPECT_EQ(b.elementsB[1].index, 6u);  // point 6 in tetrahedron 1
    EXPECT_EQ(b.elementsA[1].index, 1u);
    EXPECT_NEAR(b.elementsA[0].point.w, 0.1f, 1e-6f);
    expectSwappedPairs(b, 1);
  }
}

// Random meshes (triangles, segments, tetrahedra scattered in a box) against random spheres,
// capsules and point sets, each query in both orders: the BVH's contacts equal every cell's, bit
// for bit, and both backends agree.
struct RandomMeshes {
  Batch batch;
  uint32_t surface = 0, line = 0, tetra = 0;
};

RandomMeshes randomMeshes(uint32_t seed, uint32_t cellCount) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-4.0f, 4.0f), off(-0.6f, 0.6f), rad(0.05f, 1.2f);
  RandomMeshes r;
  Batch& b = r.batch;
  for (GeometryType type :
       {GeometryType::kSurfaceMesh, GeometryType::kLineMesh, GeometryType::kTetrahedralMesh}) {
    const uint32_t g = addRandomSoup(b, rng, type, cellCount, 4.0f, 0.6f);
    if (type == GeometryType::kSurfaceMesh) r.surface = g;
    if (type == GeometryType::kLineMesh) r.line = g;
    if (type == GeometryType::kTetrahedralMesh) r.tetra = g;
  }
  for (uint32_t k = 0; k < 12; ++k) {
    const uint32_t sphere = b.add(Geometry::sphere(Float4{pos(rng), pos(rng), pos(rng), rad(rng)}));
    const Float4 e0 = v3(pos(rng), pos(rng), pos(rng));
    const uint32_t capsule =
        b.add(Geometry::capsule(e0, v3(e0.x + off(rng) * 3, e0.y + off(rng) * 3, e0.z), rad(rng)));
    std::vector<Float4> points;
    for (uint32_t p = 0; p < 200; ++p) points.push_back(v3(pos(rng), pos(rng), pos(rng)));
    const uint32_t set = b.addPoints(points);
    for (auto [x, y] : {std::pair{r.surface, sphere},
                        {r.surface, capsule},
                        {r.line, sphere},
                        {r.line, capsule},
                        {r.tetra, set}}) {
      b.query(x, y);
      b.query(y, x);
    }
  }
  return r;
}

TEST(GeometryQueriesMesh, BvhEqualsBruteForceOnRandomMeshes) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    RandomMeshes r = randomMeshes(seed, 3000);
    Batch& b = r.batch;
    auto counts = b.run(Backend::kCpuScalar, 200000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    EXPECT_GT(counts->contacts, 100u) << "seed " << seed;
    // Queries 2k and 2k + 1: one pair in both orders, the elements swapped bit for bit.
    expectPairsSwappedBitwise(b);
    // The oracle: every cell of the mesh, through the same driver; kCpuSimd runs the same code.
    expectBruteForceAndSimdEqual(b, counts->contacts, 200000, 2e-5f);
  }
}

// A 100k-triangle grid against 20 spheres: each query's contact count equals a count over every
// triangle here (the same closest-point function, no tree), so the BVH walk misses none.
TEST(GeometryQueriesMesh, LargeGridAgainstSpheres) {
  std::vector<Float4> vertices;
  std::vector<uint32_t> cells;
  gridMesh(224, 224.0f, vertices, cells);  // 100352 triangles
  Batch b;
  const uint32_t mesh = b.addMesh(GeometryType::kSurfaceMesh, vertices, cells);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> xz(0.0f, 224.0f), y(-0.5f, 0.5f), rad(0.1f, 3.0f);
  std::vector<Float4> spheres;
  for (int k = 0; k < 20; ++k) {
    spheres.push_back(Float4{xz(rng), y(rng), xz(rng), rad(rng)});
    b.query(mesh, b.add(Geometry::sphere(spheres.back())));
  }
  auto counts = b.run(Backend::kCpuScalar, 4096);
  ASSERT_TRUE(counts.ok()) << counts.message();
  for (int k = 0; k < 20; ++k) {
    const Float4 s = spheres[k];
    uint32_t expected = 0;
    for (size_t t = 0; t < cells.size() / 3; ++t) {
      // Triangles of the grid within the sphere: the distance from the centre to the triangle.
      const auto at = [&](size_t c) {
        const Float4 p = vertices[cells[t * 3 + c]];
        return gpu::vec3(p.x, p.y, p.z);
      };
      const gpu::TriClosest cp = gpu::triClosestPoint(gpu::vec3(s.x, s.y, s.z), at(0), at(1), at(2));
      if (std::sqrt(cp.dist2) < s.w) ++expected;
    }
    EXPECT_EQ(b.ranges[k].count, expected) << "sphere " << k;
  }
}

TEST(GeometryQueriesMesh, OverflowKeepsTheCount) {
  std::vector<Float4> vertices;
  std::vector<uint32_t> cells;
  gridMesh(4, 4.0f, vertices, cells);
  Batch b;
  const uint32_t mesh = b.addMesh(GeometryType::kSurfaceMesh, vertices, cells);
  b.query(b.add(Geometry::sphere(Float4{2, 0, 2, 1.5f})), mesh);
  auto counts = b.run(Backend::kCpuScalar, 3);
  ASSERT_TRUE(counts.ok());
  EXPECT_TRUE(counts->overflow);
  EXPECT_GT(counts->contacts, 3u);
  EXPECT_EQ(counts->written, 3u);
  EXPECT_EQ(b.ranges[0].count, counts->contacts);
}

// --- Bad input: errors name the field, nothing is written.

Batch oneTriangle() {
  Batch b;
  const uint32_t mesh =
      b.addMesh(GeometryType::kSurfaceMesh, {v3(0, 0, 0), v3(1, 0, 0), v3(0, 0, 1)}, {0, 1, 2});
  b.query(mesh, b.add(Geometry::sphere(Float4{0, 0, 0, 1})));
  return b;
}

TEST(GeometryQueriesMesh, BadInputNamesTheField) {
  {
    Batch b = oneTriangle();
    b.cells[2] = 3;
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument,
                           "cells[2] (triangle 0, corner 2) is 3: the mesh has 3 vertices");
  }
  {
    Batch b = oneTriangle();
    b.points[1].y = std::nanf("");
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "points[1].y is nan");
  }
  {
    Batch b = oneTriangle();
    b.points[2] = v3(2, 0, 0);  // collinear
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "triangle 0 (cells[0, 3)) has zero area");
  }
  {
    Batch b;
    b.query(b.addMesh(GeometryType::kLineMesh, {v3(1, 2, 3), v3(1, 2, 3)}, {0, 1}),
            b.add(Geometry::sphere(Float4{0, 0, 0, 1})));
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "segment 0 (cells[0, 2)) has zero length");
  }
  {
    Batch b;
    b.query(b.addMesh(GeometryType::kTetrahedralMesh, {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(1, 1, 0)},
                      {0, 1, 2, 3}),
            b.addPoints({v3(0, 0, 0)}));
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "tetrahedron 0 (cells[0, 4)) has zero volume");
  }
  {
    Batch b = oneTriangle();
    b.geometries[0].p2.y = 2;  // two triangles, cells holds one
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument,
                           "geometries[0] (surface mesh) covers cells [0, 6)");
  }
  {
    Batch b = oneTriangle();
    b.geometries[0].p2.x = 0.5f;
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument,
                           "geometries[0] (surface mesh).p2.x (first cell entry)");
  }
  {
    Batch b = oneTriangle();
    b.geometries[0].count = 9;
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument,
                           "geometries[0] (surface mesh) covers points [0, 9)");
  }
  {
    Batch b = oneTriangle();
    b.geometries[0].p0.x = 1;
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "p0, p1, p2.z and p2.w are unused by a mesh");
  }
}

TEST(GeometryQueriesMesh, PairsNotBuiltAreRefused) {
  {
    Batch b;
    b.query(b.addPoints({v3(0, 0, 0)}),
            b.addMesh(GeometryType::kLineMesh, {v3(0, 0, 0), v3(1, 0, 0)}, {0, 1}));
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "point set vs line mesh is not collidable (N/A");
  }
  {
    Batch b = oneTriangle();
    b.queries[0].method = GeometryMethod::kContinuous;
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument,
                           "queries[0].method is kContinuous: sphere vs surface mesh");
  }
}

}  // namespace
}  // namespace vkc::test::geometry
