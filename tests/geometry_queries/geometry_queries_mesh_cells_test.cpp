// One test body per backend (Vulkan, CPU scalar, CPU SIMD) for the per-cell mesh pairs that the
// Vulkan stage runs in the convex and implicit families and the tetrahedral mesh's rows in the mesh
// family (issue 17): a surface, line or tetrahedral mesh against a cylinder (GJK/EPA) and against an
// implicit geometry, a tetrahedral mesh against a sphere, capsule, plane and oriented box. Fixed cases
// with known contacts, random soups mixed with primitive pairs (every family's tiles), both orders:
// the same counts, ranges and elements as kCpuScalar, bit for bit on the CPU backends and on lavapipe;
// bad input (a tetrahedron out of range or of zero volume) refused on every backend with nothing
// written. The stage's own checks (dispatches fixed, reruns) are the GeometryQueryStageMeshCellsVulkan
// tests below.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>

#include "geometry_queries/geometry_queries_mesh_test_support.h"
#include "shared/geometry_queries_mesh_mesh.h"
#include "support/vulkan_fixture.h"

namespace vkc::test::geometry {
namespace {

class GeometryQueriesMeshCellsConformance : public MeshBackendTest {};

// Two tetrahedra sharing the face (1, 0, 0), (0, 1, 0), (0, 0, 1): the corner tetrahedron 0 and
// tetrahedron 1 above it.
uint32_t addTwoTetrahedra(Batch& b) {
  return b.addMesh(GeometryType::kTetrahedralMesh,
                   {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1), v3(1, 1, 1)},
                   {0, 1, 2, 3, 1, 2, 3, 4});
}

// A 3 x 3 grid of unit squares in y = 0 (two triangles each) and its rows' edges as a line mesh.
struct Sheet {
  std::vector<Float4> vertices;
  std::vector<uint32_t> triangles, segments;
  Sheet() {
    for (uint32_t j = 0; j <= 3; ++j)
      for (uint32_t i = 0; i <= 3; ++i)
        vertices.push_back(v3(static_cast<float>(i), 0, static_cast<float>(j)));
    for (uint32_t j = 0; j < 3; ++j) {
      for (uint32_t i = 0; i < 3; ++i) {
        const uint32_t a = j * 4 + i, b = a + 1, c = a + 4, d = c + 1;
        triangles.insert(triangles.end(), {a, c, b, b, c, d});
        segments.insert(segments.end(), {a, b});
      }
    }
  }
};

// The half space below `level` along axis `axis` (0 x, 1 y, 2 z) as an implicit geometry: a 15^3 grid
// of spacing 0.375 from (-1.5, -1.5, -1.5) to 3.75, a spacing beyond the meshes below, so that the
// central differences stay inside (trilinear interpolation of a linear field is exact up to rounding).
uint32_t addHalfSpaceGrid(Batch& b, int axis, float level) {
  return b.addGrid(v3(-1.5f, -1.5f, -1.5f), 0.375f, 15, [axis, level](float x, float y, float z) {
    return (axis == 0 ? x : (axis == 1 ? y : z)) - level;
  });
}

// Known contacts, each query in both orders (queries 2k, 2k + 1).
Batch fixedCases() {
  Batch b;
  const uint32_t tets = addTwoTetrahedra(b);
  const Sheet s;
  const uint32_t surface = b.addMesh(GeometryType::kSurfaceMesh, s.vertices, s.triangles);
  const uint32_t line = b.addMesh(GeometryType::kLineMesh, s.vertices, s.segments);
  auto pair = [&](uint32_t mesh, uint32_t other) {
    b.query(mesh, other);
    b.query(other, mesh);
  };
  // 0: a sphere under tetrahedron 0's face z = 0, 0.1 deep.
  pair(tets, b.add(Geometry::sphere({0.2f, 0.2f, -0.1f, 0.2f})));
  // 1: a capsule standing under that face, 0.05 deep.
  pair(tets, b.add(Geometry::capsule(v3(0.2f, 0.2f, -0.5f), v3(0.2f, 0.2f, -0.05f), 0.1f)));
  // 2: the plane y = 0.5 (outside +y): tetrahedron 0's face y = 0 and tetrahedron 1's edge (1, 0, 0) -
  // (0, 0, 1), both 0.5 deep.
  pair(tets, b.add(Geometry::plane(v3(0, 0.5f, 0), v3(0, 1, 0), false)));
  // 3: a box whose top z = 0.05 reaches tetrahedron 0's face and tetrahedron 1's edge (1, 0, 0) -
  // (0, 1, 0), both 0.05 deep.
  pair(tets, b.add(Geometry::orientedBox(v3(0.5f, 0.5f, -0.2f), identityQuat(), v3(1, 1, 0.25f))));
  // 4: a thin cylinder along z whose cap z = 0.05 enters tetrahedron 0 only (tetrahedron 1 is 0.35 away).
  pair(tets, b.add(Geometry::cylinder(v3(0.25f, 0.25f, -0.2f), v3(0, 0, 1), 0.1f, 0.25f)));
  // 5: the implicit half space z < 0.1: both tetrahedra's corners at z = 0, 0.1 deep.
  pair(tets, addHalfSpaceGrid(b, 2, 0.1f));
  // 6: the sheet against a cylinder along y whose cap y = 0.05 covers the middle of triangle 8
  // (square (1, 1)'s first triangle, corners (1, 0, 1), (1, 0, 2), (2, 0, 1)) and no other.
  pair(surface, b.add(Geometry::cylinder(v3(1.25f, -0.2f, 1.25f), v3(0, 1, 0), 0.1f, 0.25f)));
  // 7: the sheet against the implicit half space y < 0.1: every triangle, 0.1 deep.
  pair(surface, addHalfSpaceGrid(b, 1, 0.1f));
  // 8: the rows' segments against a cylinder lying along x over row 1 (z = 1), 0.05 deep.
  pair(line, b.add(Geometry::cylinder(v3(1.5f, 0.2f, 1.0f), v3(1, 0, 0), 0.25f, 1.0f)));
  // 9: the segments against the implicit half space z < 1.5: rows 0 and 1 (z = 0 and 1).
  pair(line, addHalfSpaceGrid(b, 2, 1.5f));
  // Plain primitive pairs between them: the basic and convex families' own tiles.
  pair(b.add(Geometry::sphere({0, 0, 0, 1})), b.add(Geometry::sphere({1.5f, 0, 0, 1})));
  pair(b.add(Geometry::cylinder(v3(5, 0, 0), v3(0, 1, 0), 0.5f, 0.5f)),
       b.add(Geometry::cylinder(v3(5.8f, 0, 0), v3(0, 1, 0), 0.5f, 0.5f)));
  return b;
}

TEST_P(GeometryQueriesMeshCellsConformance, FixedCasesGiveTheKnownContactsAndMatchCpuScalar) {
  Batch b = fixedCases();
  auto counts = run(b, 256);
  ASSERT_TRUE(counts.ok()) << counts.message();
  ASSERT_FALSE(counts->overflow);
  const uint32_t expected[] = {1, 1, 2, 2, 1, 2, 1, 18, 3, 6};
  for (uint32_t k = 0; k < 10; ++k) {
    EXPECT_EQ(b.ranges[2 * k].count, expected[k]) << "pair " << k;
  }
  // Depths and directions of the mesh side (query 2k: the mesh is a): the tetrahedra move up (+z) off
  // the sphere, capsule, box, cylinder and field, and to the plane's outside (+y); the sheet up off
  // the cylinder and field; the segments down off the cylinder lying over them, up out of the field.
  const struct {
    uint32_t pair;
    float depth, tol;
    Float4 dir;
  } known[] = {{0, 0.1f, 1e-5f, v3(0, 0, 1)},   {1, 0.05f, 1e-5f, v3(0, 0, 1)},
               {2, 0.5f, 1e-6f, v3(0, 1, 0)},   {3, 0.05f, 1e-5f, v3(0, 0, 1)},
               {4, 0.05f, 1e-4f, v3(0, 0, 1)},  {5, 0.1f, 1e-5f, v3(0, 0, 1)},
               {6, 0.05f, 1e-4f, v3(0, 1, 0)},  {7, 0.1f, 1e-5f, v3(0, 1, 0)},
               {8, 0.05f, 1e-4f, v3(0, -1, 0)}, {9, 0.5f, 1e-5f, v3(0, 0, 1)}};
  for (const auto& k : known) {
    const ContactRange r = b.ranges[2 * k.pair];
    for (uint32_t i = 0; i < r.count; ++i) {
      const ContactElement& e = b.elementsA[r.first + i];
      if (k.pair == 9) {  // row 0 is 1.5 deep, row 1 0.5
        EXPECT_NEAR(e.point.w, e.point.z == 0.0f ? 1.5f : 0.5f, k.tol) << "pair 9 contact " << i;
      } else {
        EXPECT_NEAR(e.point.w, k.depth, k.tol) << "pair " << k.pair << " contact " << i;
      }
      expectNear3(e.direction, k.dir.x, k.dir.y, k.dir.z, 10 * k.tol + 1e-5f, "direction");
    }
  }
  // The elements: the sphere, capsule and cylinder touch tetrahedron 0's face z = 0 (corners 0, 1, 2);
  // the plane tetrahedron 0's face y = 0 and tetrahedron 1's edge (vertices 1, 3).
  EXPECT_EQ(meshElementIds(b, 0, b.elementsA[b.ranges[0].first]), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(b.elementsA[b.ranges[0].first].index, 0u);
  EXPECT_EQ(meshElementIds(b, 0, b.elementsA[b.ranges[8].first]), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(meshElementIds(b, 0, b.elementsA[b.ranges[4].first]), (std::vector<uint32_t>{0, 1, 3}));
  EXPECT_EQ(meshElementIds(b, 0, b.elementsA[b.ranges[4].first + 1]), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(b.elementsA[b.ranges[4].first + 1].index, 1u);
  EXPECT_EQ(b.elementsA[b.ranges[12].first].index, 8u);  // the sheet's triangle 8 under the cylinder
  EXPECT_EQ(contactCellType(b.elementsA[b.ranges[12].first]), CellType::kTriangle);
  expectPairsSwappedBitwise(b);
  for (uint64_t k = 0; k < counts->written; ++k)
    expectContactInvariants(b.elementsA[k], b.elementsB[k], 2e-5f);
  expectSameAsCpuScalar(b, 256);
}

// Random triangle, segment and tetrahedron soups against random cylinders, sampled balls and (the
// tetrahedra) every primitive, each pair in both orders, between random primitive pairs (none with
// mixed = false: the mesh driver's brute force takes mesh queries only).
Batch randomCellsBatch(uint32_t seed, uint32_t cells, uint32_t pairs, bool mixed = true) {
  std::mt19937 rng(seed);
  Batch b = mixed ? randomBatch(seed, 64) : Batch{};
  const uint32_t surface = addRandomSoup(b, rng, GeometryType::kSurfaceMesh, cells, 1.5f, 0.3f);
  const uint32_t line = addRandomSoup(b, rng, GeometryType::kLineMesh, cells, 1.5f, 0.3f);
  const uint32_t tets = addRandomSoup(b, rng, GeometryType::kTetrahedralMesh, cells / 4, 1.5f, 0.4f);
  std::uniform_real_distribution<float> u(-0.8f, 0.8f), r(0.3f, 0.9f);
  const uint32_t meshes[] = {surface, line, tets};
  for (uint32_t k = 0; k < pairs; ++k) {
    const uint32_t mesh = meshes[k % 3];
    uint32_t other = 0;
    if (k % 4 == 1) {  // a ball of the field, sampled on a 17^3 grid of spacing 0.25 from -2
      const float cx = u(rng), cy = u(rng), cz = u(rng), radius = r(rng);
      other = b.addGrid(v3(-2, -2, -2), 0.25f, 17, [=](float x, float y, float z) {
        return std::sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz)) - radius;
      });
    } else if (mesh == tets && k % 4 != 3) {
      const uint32_t types[] = {0, 1, 3, 4};  // sphere, capsule, box, plane
      other = b.add(randomGeometry(rng, types[(k / 3) % 4], 0));
    } else {
      other = b.add(randomGeometry(rng, 2, 0));  // a cylinder
    }
    b.query(mesh, other);
    b.query(other, mesh);
  }
  return b;
}

TEST_P(GeometryQueriesMeshCellsConformance, RandomSoupsMatchCpuScalar) {
  for (uint32_t seed : {11u, 12u}) {
    Batch b = randomCellsBatch(seed, 400, 36);
    auto counts = run(b, 40000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_FALSE(counts->overflow);
    EXPECT_GT(counts->contacts, 500u) << "seed " << seed;
    expectSameAsCpuScalar(b, 40000);
  }
}

TEST_P(GeometryQueriesMeshCellsConformance, BadTetrahedraAreRefusedAndNothingIsWritten) {
  {
    Batch b = fixedCases();
    b.cells[6] = 17;  // tetrahedron 1, corner 2
    expectRefused(b, ErrorCode::kInvalidArgument,
                  "geometries[0] (tetrahedral mesh): cells[6] (tetrahedron 1, corner 2) is 17: the mesh has 5 "
                  "vertices");
  }
  {
    Batch b = fixedCases();
    b.points[4] = v3(0.5f, 0.5f, 0.0f);  // vertex 4 on the line through vertices 1 and 2: zero volume
    expectRefused(b, ErrorCode::kInvalidArgument,
                  "geometries[0] (tetrahedral mesh): tetrahedron 1 (cells[4, 8)) has zero volume");
  }
}

// --- Surface vs tetrahedral and tetrahedral vs tetrahedral mesh: the separating axis test per pair of
// cells (geomHullTetra; on Vulkan the mesh-mesh family, a slot per pair of cells).

// A big triangle in the plane z = 0.1 across the corner tetrahedron, and the corner tetrahedron
// mirrored to below z = 0.1 (its face z = 0.1 over the other's face z = 0): both 0.1 deep along z.
TEST_P(GeometryQueriesMeshCellsConformance, SurfaceAndTetrahedraAgainstTetrahedraKnownContacts) {
  Batch b;
  const uint32_t tet = b.addMesh(GeometryType::kTetrahedralMesh,
                                 {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1)}, {0, 1, 2, 3});
  const uint32_t sheet =
      b.addMesh(GeometryType::kSurfaceMesh, {v3(-5, -5, 0.1f), v3(5, -5, 0.1f), v3(0, 5, 0.1f)}, {0, 1, 2});
  const uint32_t mirrored =
      b.addMesh(GeometryType::kTetrahedralMesh,
                {v3(0, 0, 0.1f), v3(1, 0, 0.1f), v3(0, 1, 0.1f), v3(0, 0, -0.9f)}, {0, 1, 2, 3});
  // The two tetrahedra sharing a face, as two meshes: touching, no contact.
  const uint32_t lower = b.addMesh(GeometryType::kTetrahedralMesh,
                                   {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1)}, {0, 1, 2, 3});
  const uint32_t upper = b.addMesh(GeometryType::kTetrahedralMesh,
                                   {v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1), v3(1, 1, 1)}, {0, 1, 2, 3});
  for (const auto& [x, y] : {std::pair{sheet, tet}, std::pair{tet, mirrored}, std::pair{lower, upper}}) {
    b.query(x, y);
    b.query(y, x);
  }
  runHere(b, 16);
  ASSERT_EQ(b.ranges[0].count, 1u);
  ASSERT_EQ(b.ranges[2].count, 1u);
  EXPECT_EQ(b.ranges[4].count, 0u);
  EXPECT_EQ(b.ranges[5].count, 0u);
  // The sheet moves down (-z) by 0.1, as a triangle element; the tetrahedron's face z = 0 up.
  const ContactElement& s = b.elementsA[b.ranges[0].first];
  EXPECT_NEAR(s.point.w, 0.1f, 1e-6f);
  expectNear3(s.direction, 0, 0, -1, 1e-6f, "sheet direction");
  EXPECT_EQ(contactCellType(s), CellType::kTriangle);
  EXPECT_EQ(meshElementIds(b, tet, b.elementsB[b.ranges[0].first]), (std::vector<uint32_t>{0, 1, 2}));
  // The corner tetrahedron (geometry 0, before the mirrored one) moves up by 0.1 off the mirrored
  // one's face z = 0.1, its own face z = 0 the element.
  const ContactElement& t = b.elementsA[b.ranges[2].first];
  EXPECT_NEAR(t.point.w, 0.1f, 1e-6f);
  expectNear3(t.direction, 0, 0, 1, 1e-6f, "tetrahedron direction");
  EXPECT_EQ(meshElementIds(b, tet, t), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(meshElementIds(b, mirrored, b.elementsB[b.ranges[2].first]), (std::vector<uint32_t>{0, 1, 2}));
  expectPairsSwappedBitwise(b);
  for (uint32_t q : {0u, 2u}) {
    expectContactInvariants(b.elementsA[b.ranges[q].first], b.elementsB[b.ranges[q].first], 1e-6f);
  }
}

// Random triangle and tetrahedron soups against tetrahedron soups in both orders, with primitive pairs
// between them (other families' tiles): the same counts, ranges and elements as kCpuScalar.
Batch randomTetraPairsBatch(uint32_t seed, uint32_t cells) {
  std::mt19937 rng(seed);
  Batch b = randomBatch(seed, 16);
  const uint32_t surface = addRandomSoup(b, rng, GeometryType::kSurfaceMesh, cells, 1.5f, 0.4f);
  const uint32_t tets = addRandomSoup(b, rng, GeometryType::kTetrahedralMesh, cells, 1.5f, 0.4f);
  const uint32_t others = addRandomSoup(b, rng, GeometryType::kTetrahedralMesh, cells * 2 / 3, 1.5f, 0.4f);
  for (const auto& [x, y] : {std::pair{surface, tets}, std::pair{tets, others}, std::pair{surface, others}}) {
    b.query(x, y);
    b.query(y, x);
  }
  return b;
}

TEST_P(GeometryQueriesMeshCellsConformance, RandomSoupsAgainstTetrahedraMatchCpuScalar) {
  for (uint32_t seed : {15u, 16u}) {
    Batch b = randomTetraPairsBatch(seed, 200);
    auto counts = run(b, 40000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_FALSE(counts->overflow);
    EXPECT_GT(counts->contacts, 100u) << "seed " << seed;
    expectSameAsCpuScalar(b, 40000);
  }
}

// Random triangle and tetrahedron soups against a tetrahedron soup in both orders: the BVH keeps the
// brute force's cells, kCpuSimd the same bits, the swap rule; every contact's depth is the least
// overlap, checked by moving the first cell along its direction by the depth and a little less (still
// overlapping) or more (apart) through the same test.
TEST(GeometryQueriesMeshCells, RandomSoupsAgainstTetrahedra) {
  std::mt19937 rng(15);
  Batch b;
  const uint32_t surface = addRandomSoup(b, rng, GeometryType::kSurfaceMesh, 300, 1.5f, 0.4f);
  const uint32_t tets = addRandomSoup(b, rng, GeometryType::kTetrahedralMesh, 300, 1.5f, 0.4f);
  const uint32_t others = addRandomSoup(b, rng, GeometryType::kTetrahedralMesh, 200, 1.5f, 0.4f);
  b.query(surface, tets);
  b.query(tets, surface);
  b.query(tets, others);
  b.query(others, tets);
  auto counts = b.run(Backend::kCpuScalar, 20000);
  ASSERT_TRUE(counts.ok()) << counts.message();
  EXPECT_GT(b.ranges[0].count, 50u);
  EXPECT_GT(b.ranges[2].count, 50u);
  expectBruteForceAndSimdEqual(b, counts->contacts, 20000, 2e-5f);
  expectPairsSwappedBitwise(b);
  const GeometryQueryInput in = b.input();
  int checked = 0;
  for (uint32_t q : {0u, 2u}) {
    const Geometry& gx = b.geometries[b.queries[q].a];
    const Geometry& gy = b.geometries[b.queries[q].b];
    const uint32_t nx = gx.type == GeometryType::kSurfaceMesh ? 3 : 4;
    for (uint32_t i = 0; i < b.ranges[q].count; ++i) {
      const ContactElement& ex = b.elementsA[b.ranges[q].first + i];
      const ContactElement& ey = b.elementsB[b.ranges[q].first + i];
      // A vertex element's index is its vertex; a soup's vertex v belongs to cell v / n.
      const auto cellOf = [](const ContactElement& e, uint32_t n) {
        return e.type == ContactElementType::kPointIndexDirection ? e.index / n : e.index;
      };
      const uint32_t cx = cellOf(ex, nx), cy = cellOf(ey, 4);
      const auto corner = [&](const Geometry& g, uint32_t cell, uint32_t n, uint32_t k, float shift) {
        const Float4 p = in.points[g.first + in.cells[static_cast<uint32_t>(g.p2.x) + cell * n + k]];
        return gpu::vec3(p.x + ex.direction.x * shift, p.y + ex.direction.y * shift,
                         p.z + ex.direction.z * shift);
      };
      const auto overlaps = [&](float shift) {
        gpu::GeomElement a, c;
        return gpu::geomHullTetra(
            gpu::geomMakeHull(corner(gx, cx, nx, 0, shift), corner(gx, cx, nx, 1, shift),
                              corner(gx, cx, nx, 2, shift), corner(gx, cx, nx, nx - 1, shift), nx),
            gpu::uvec4(0u), 0u,
            gpu::geomMakeHull(corner(gy, cy, 4, 0, 0), corner(gy, cy, 4, 1, 0), corner(gy, cy, 4, 2, 0),
                              corner(gy, cy, 4, 3, 0), 4u),
            gpu::uvec4(0u), 0u, a, c);
      };
      const float depth = ex.point.w;
      EXPECT_FALSE(overlaps(depth * 1.001f + 1e-5f)) << "query " << q << " contact " << i;
      if (depth > 1e-3f) {
        EXPECT_TRUE(overlaps(depth * 0.99f)) << "query " << q << " contact " << i;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

INSTANTIATE_TEST_SUITE_P(Backends, GeometryQueriesMeshCellsConformance, VKC_ALL_BACKENDS);

// The CPU driver's BVH walk keeps exactly the cells of the brute force (every cell), the new pairs
// included; kCpuSimd the same bits.
TEST(GeometryQueriesMeshCells, BvhMatchesBruteForce) {
  Batch b = randomCellsBatch(14, 400, 36, /*mixed=*/false);
  auto counts = b.run(Backend::kCpuScalar, 40000);
  ASSERT_TRUE(counts.ok()) << counts.message();
  EXPECT_GT(counts->contacts, 500u);
  expectBruteForceAndSimdEqual(b, counts->contacts, 40000, 1e-4f);
}

// --- The stage on its own (Vulkan only).

class GeometryQueryStageMeshCellsVulkan : public MeshStageVulkanTest {};

TEST_F(GeometryQueryStageMeshCellsVulkan, HundredRerunsAreBitwiseIdentical) {
  expectHundredRerunsIdentical(randomCellsBatch(13, 200, 12),
                               {.maxQueries = 256,
                                .maxGeometries = 256,
                                .maxPoints = 8192,
                                .maxGridSamples = 70000,
                                .maxContacts = 20000,
                                .maxSlots = 100000,
                                .maxCells = 4096},
                               100);
}

TEST_F(GeometryQueryStageMeshCellsVulkan, TetrahedralPairsHundredRerunsAreBitwiseIdentical) {
  expectHundredRerunsIdentical(randomTetraPairsBatch(17, 120),
                               {.maxQueries = 64,
                                .maxGeometries = 64,
                                .maxPoints = 8192,
                                .maxContacts = 20000,
                                .maxSlots = 200000,
                                .maxCells = 4096},
                               100);
}

// One query of each new pair or many (and a large tetrahedral mesh): the same dispatches and barriers,
// the mesh, convex and implicit families' COUNT and WRITE, SCAN and RANGES.
TEST_F(GeometryQueryStageMeshCellsVulkan, DispatchAndBarrierCountsDoNotDependOnTheMeshQueries) {
  const auto batch = [](uint32_t repeats, uint32_t tetrahedra) {
    Batch b;
    std::mt19937 rng(4);
    const uint32_t tets = addRandomSoup(b, rng, GeometryType::kTetrahedralMesh, tetrahedra, 3.0f, 0.3f);
    const uint32_t grid = addHalfSpaceGrid(b, 1, 0.0f);
    for (uint32_t k = 0; k < repeats; ++k) {
      b.query(tets, b.add(Geometry::sphere({static_cast<float>(k % 5) * 0.5f, 0, 0, 0.5f})));
      b.query(b.add(Geometry::cylinder(v3(0, static_cast<float>(k % 3) * 0.5f, 0), v3(0, 1, 0), 0.5f, 0.5f)),
              tets);
      b.query(tets, grid);
    }
    return b;
  };
  const Batch one = batch(1, 10), many = batch(300, 10), big = batch(1, 20000);
  const std::vector<RecordStats> stats = recordStats({.maxQueries = 1000,
                                                      .maxGeometries = 1000,
                                                      .maxPoints = 100000,
                                                      .maxGridSamples = 4000,
                                                      .maxContacts = 1000,
                                                      .maxSlots = 200000,
                                                      .maxCells = 100000},
                                                     {&one, &many, &big});
  expectFixedDispatchesGrowingWork(stats, 8u);  // three families' COUNT and WRITE, SCAN, RANGES
}

}  // namespace
}  // namespace vkc::test::geometry
