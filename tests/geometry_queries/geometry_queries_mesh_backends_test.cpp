// One test body per backend (Vulkan, CPU scalar, CPU SIMD) for the mesh rows that run on every
// backend: a surface or line mesh against a sphere, capsule, plane or oriented box, a tetrahedral mesh
// against a point set (issue 17; the other per-cell pairs: geometry_queries_mesh_cells_test.cpp). Fixed
// cases with known contacts, random meshes mixed with primitive pairs (the pair families' tile gaps),
// in both orders: the same counts, ranges and elements as kCpuScalar, bit for bit on the CPU backends
// and on lavapipe (elsewhere within kGeometryQueryTolerance); overflow; bad input refused with nothing
// written; a closed surface mesh against a point set. The stage's own checks (reruns, dispatch and barrier counts whatever the number of mesh queries) are
// the GeometryQueryStageMeshVulkan tests below.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "geometry_queries/geometry_queries_mesh_test_support.h"
#include "support/vulkan_fixture.h"

namespace vkc::test::geometry {
namespace {

class GeometryQueriesMeshConformance : public MeshBackendTest {};

// A 4 x 4 grid of unit squares in y = 0, two triangles each (normal +y), as a surface mesh, and its
// rows' edges as a line mesh.
struct Grid {
  std::vector<Float4> vertices;
  std::vector<uint32_t> triangles, segments;
  Grid() {
    for (uint32_t j = 0; j <= 4; ++j)
      for (uint32_t i = 0; i <= 4; ++i) vertices.push_back(v3(static_cast<float>(i), 0, static_cast<float>(j)));
    for (uint32_t j = 0; j < 4; ++j) {
      for (uint32_t i = 0; i < 4; ++i) {
        const uint32_t a = j * 5 + i, b = a + 1, c = a + 5, d = c + 1;
        triangles.insert(triangles.end(), {a, c, b, b, c, d});
        segments.insert(segments.end(), {a, b});
      }
    }
  }
};

// Known contacts (each query in both orders).
Batch fixedMeshCases() {
  const Grid g;
  Batch b;
  const uint32_t surface = b.addMesh(GeometryType::kSurfaceMesh, g.vertices, g.triangles);
  const uint32_t line = b.addMesh(GeometryType::kLineMesh, g.vertices, g.segments);
  auto pair = [&](uint32_t mesh, const Geometry& other) {
    const uint32_t o = b.add(other);
    b.query(mesh, o);
    b.query(o, mesh);
  };
  pair(surface, Geometry::sphere({1.3f, 0.3f, 1.3f, 0.35f}));  // 1: inside triangle 10
  pair(surface, Geometry::sphere({1.5f, 0.3f, 1.5f, 0.35f}));  // 2: on the diagonal of square (1, 1)
  pair(surface, Geometry::capsule(v3(0.3f, 0.1f, 0.15f), v3(0.3f, 0.1f, 0.5f), 0.15f));  // lying on a face
  pair(surface, Geometry::capsule(v3(2.3f, -0.2f, 2.2f), v3(2.3f, 0.6f, 2.2f), 0.1f));  // piercing a triangle
  pair(surface, Geometry::plane(v3(0, 0.1f, 0), v3(0, 1, 0), false));                    // every triangle below
  pair(surface, Geometry::orientedBox(v3(2, 0.4f, 2), identityQuat(), v3(0.6f, 0.5f, 0.6f)));
  pair(line, Geometry::sphere({1.5f, 0.2f, 1.0f, 0.3f}));                               // the middle of a segment
  pair(line, Geometry::sphere({2.0f, 0.1f, 2.0f, 0.3f}));                               // a shared vertex
  pair(line, Geometry::capsule(v3(0.2f, 0.1f, 3.0f), v3(3.8f, 0.1f, 3.0f), 0.2f));      // along a row
  pair(line, Geometry::plane(v3(0, 0, 2.5f), v3(0, 0.6f, 0.8f), false));  // rows 0, 1, 2 below
  pair(line, Geometry::orientedBox(v3(1, 0, 1), quatAxisAngle(0, 1, 0, 0.3f), v3(0.4f, 0.2f, 0.4f)));
  // Plain primitive pairs between the mesh queries: another pair family, its own tiles.
  pair(b.add(Geometry::sphere({0, 0, 0, 1})), Geometry::sphere({1.5f, 0, 0, 1}));
  // Two tetrahedra sharing a face, and points: inside the first, inside the second, outside.
  const uint32_t tets = b.addMesh(GeometryType::kTetrahedralMesh,
                                  {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1), v3(1, 1, 1)},
                                  {0, 1, 2, 3, 1, 2, 3, 4});
  const uint32_t points = b.addPoints({v3(0.1f, 0.1f, 0.1f), v3(2, 2, 2), v3(0.5f, 0.5f, 0.4f), v3(0.2f, 0.2f, 0.3f)});
  b.query(tets, points);
  b.query(points, tets);
  return b;
}

TEST_P(GeometryQueriesMeshConformance, FixedCasesGiveTheKnownContactsAndMatchCpuScalar) {
  Batch b = fixedMeshCases();
  auto counts = run(b, 256);
  ASSERT_TRUE(counts.ok()) << counts.message();
  ASSERT_FALSE(counts->overflow);
  // Query pairs in order: sphere 1 and 2 contacts, the capsule on a face 2, piercing 1, the plane all
  // 32 triangles, the box its 2 x 2 squares' 8 triangles.
  const uint32_t expected[] = {1, 2, 2, 1, 32, 8};
  for (uint32_t k = 0; k < 6; ++k) {
    EXPECT_EQ(b.ranges[2 * k].count, expected[k]) << "pair " << k;
    EXPECT_EQ(b.ranges[2 * k + 1].count, expected[k]) << "pair " << k;
  }
  EXPECT_EQ(b.elementsA[b.ranges[0].first].index, 10u);
  EXPECT_EQ(contactCellType(b.elementsA[b.ranges[0].first]), CellType::kTriangle);
  // The line mesh: a sphere over a segment's middle touches that segment (an edge element); one over
  // a shared vertex touches both segments at it (vertex elements of vertex 12).
  const ContactRange mid = b.ranges[12], shared = b.ranges[14];
  ASSERT_EQ(mid.count, 1u);
  EXPECT_EQ(contactCellType(b.elementsA[mid.first]), CellType::kEdge);
  ASSERT_EQ(shared.count, 2u);
  for (uint32_t i = 0; i < 2; ++i) {
    EXPECT_EQ(b.elementsA[shared.first + i].type, ContactElementType::kPointIndexDirection);
    EXPECT_EQ(b.elementsA[shared.first + i].index, 12u);
  }
  EXPECT_EQ(b.ranges[16].count, 4u);  // the capsule along row 3: its four segments
  EXPECT_EQ(b.ranges[18].count, 12u);  // the plane: rows 0, 1 and 2
  // The tetrahedra: points 0 and 3 in the first, point 2 in the second, by point.
  const ContactRange tet = b.ranges[24];
  ASSERT_EQ(tet.count, 3u);
  const uint32_t points[] = {0, 2, 3}, cells[] = {0, 1, 0};
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(b.elementsB[tet.first + i].index, points[i]);
    EXPECT_EQ(b.elementsA[tet.first + i].index, cells[i]);
    EXPECT_EQ(contactCellType(b.elementsA[tet.first + i]), CellType::kTetrahedron);
  }
  expectSwappedPairs(b, 0);
  for (uint64_t k = 0; k < counts->written; ++k) expectContactInvariants(b.elementsA[k], b.elementsB[k], 2e-5f);
  expectSameAsCpuScalar(b, 256);
}

// Random triangle and segment soups against random spheres, capsules, planes and boxes, each pair in
// both orders, between random primitive pairs.
Batch randomMeshBatch(uint32_t seed, uint32_t cells, uint32_t pairs) {
  std::mt19937 rng(seed);
  Batch b = randomBatch(seed, 64);
  const uint32_t surface = addRandomSoup(b, rng, GeometryType::kSurfaceMesh, cells, 1.5f, 0.3f);
  const uint32_t line = addRandomSoup(b, rng, GeometryType::kLineMesh, cells, 1.5f, 0.3f);
  const uint32_t tets = addRandomSoup(b, rng, GeometryType::kTetrahedralMesh, cells / 4, 1.5f, 0.4f);
  std::uniform_real_distribution<float> u(-1.5f, 1.5f);
  std::vector<Float4> cloud(200);
  for (Float4& p : cloud) p = v3(u(rng), u(rng), u(rng));
  const uint32_t set = b.addPoints(cloud);
  b.query(tets, set);
  b.query(set, tets);
  const uint32_t types[] = {0, 1, 4, 3};  // sphere, capsule, plane, box
  for (uint32_t k = 0; k < pairs; ++k) {
    const uint32_t o = b.add(randomGeometry(rng, types[k % 4], 0));
    const uint32_t mesh = (k / 4) % 2 == 0 ? surface : line;
    b.query(mesh, o);
    b.query(o, mesh);
  }
  return b;
}

TEST_P(GeometryQueriesMeshConformance, RandomMeshesMatchCpuScalar) {
  for (uint32_t seed : {5u, 6u}) {
    Batch b = randomMeshBatch(seed, 600, 32);
    auto counts = run(b, 40000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_FALSE(counts->overflow);
    EXPECT_GT(counts->contacts, 500u) << "seed " << seed;
    expectSameAsCpuScalar(b, 40000);
  }
}

TEST_P(GeometryQueriesMeshConformance, OverflowKeepsTheCountAndWritesNothingPastTheCapacity) {
  Batch full = fixedMeshCases();
  ASSERT_TRUE(run(full, 256).ok());
  Batch b = fixedMeshCases();
  auto counts = run(b, 7);
  ASSERT_TRUE(counts.ok()) << counts.message();
  EXPECT_TRUE(counts->overflow);
  EXPECT_EQ(counts->written, 7u);
  EXPECT_GT(counts->contacts, 7u);
  for (size_t q = 0; q < b.queries.size(); ++q) EXPECT_EQ(b.ranges[q].count, full.ranges[q].count) << q;
  for (size_t k = 0; k < 7; ++k) EXPECT_TRUE(bitwiseEqual(b.elementsA[k], full.elementsA[k])) << k;
}

TEST_P(GeometryQueriesMeshConformance, BadInputIsRefusedAndNothingIsWritten) {
  {
    Batch b = fixedMeshCases();
    b.cells[7] = 99;  // triangle 2, corner 1
    expectRefused(b, ErrorCode::kInvalidArgument, "cells[7] (triangle 2, corner 1) is 99: the mesh has 25 vertices");
  }
  {
    Batch b = fixedMeshCases();
    b.cells[5] = b.cells[4];  // triangle 1: two equal corners
    expectRefused(b, ErrorCode::kInvalidArgument, "triangle 1 (cells[3, 6)) has zero area");
  }
  {
    Batch b = fixedMeshCases();
    b.points[3].y = std::nanf("");
    expectRefused(b, ErrorCode::kInvalidArgument, "points[3]");
  }
  {
    Batch b = fixedMeshCases();
    b.geometries[1].p2.y = 40;  // the line mesh: 40 segments, cells holds 96 + 32 entries
    expectRefused(b, ErrorCode::kInvalidArgument, "geometries[1] (line mesh) covers cells [96, 176)");
  }
}

// A closed surface mesh against a point set (its vertex pass, shared/geometry_queries_closed_mesh_slot.h
// on kVulkan) mixed with a mesh-sphere pair: kCpuScalar's contacts (more cases:
// geometry_queries_closed_mesh_test.cpp).
TEST_P(GeometryQueriesMeshConformance, ClosedSurfaceMeshAgainstAPointSetMatchesCpuScalar) {
  const Grid g;
  Batch b;
  const uint32_t surface = b.addMesh(GeometryType::kSurfaceMesh, g.vertices, g.triangles);
  b.query(b.add(Geometry::sphere({1, 0, 1, 0.5f})), surface);
  // The boundary of the corner tetrahedron (outward faces) as a closed surface mesh.
  const uint32_t closed =
      b.addMesh(GeometryType::kSurfaceMesh, {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1)},
                {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3});
  b.geometries[closed].flags |= kGeometryFlagClosed;
  b.query(b.addPoints({v3(0.1f, 0.1f, 0.1f), v3(1, 1, 1)}), closed);
  runHere(b, 64);
  EXPECT_EQ(b.ranges[1].count, 1u);  // the point inside
}

INSTANTIATE_TEST_SUITE_P(Backends, GeometryQueriesMeshConformance, VKC_ALL_BACKENDS);

// --- The stage on its own (Vulkan only).

class GeometryQueryStageMeshVulkan : public MeshStageVulkanTest {};

TEST_F(GeometryQueryStageMeshVulkan, HundredRerunsAreBitwiseIdentical) {
  expectHundredRerunsIdentical(randomMeshBatch(9, 400, 16),
                               {.maxQueries = 256, .maxGeometries = 256, .maxPoints = 8192, .maxContacts = 20000,
                                .maxSlots = 100000, .maxCells = 4096},
                               200);
}

// One mesh query or a thousand (and a 100k-cell mesh): the same dispatches and barriers.
TEST_F(GeometryQueryStageMeshVulkan, DispatchAndBarrierCountsDoNotDependOnTheMeshQueries) {
  const Grid g;
  Batch one;
  one.query(one.addMesh(GeometryType::kSurfaceMesh, g.vertices, g.triangles),
            one.add(Geometry::sphere({1, 0, 1, 0.5f})));
  Batch many;
  const uint32_t mesh = many.addMesh(GeometryType::kSurfaceMesh, g.vertices, g.triangles);
  for (uint32_t k = 0; k < 1000; ++k) {
    many.query(mesh, many.add(Geometry::sphere({static_cast<float>(k % 5), 0, 1, 0.5f})));
  }
  Batch big;
  std::mt19937 rng(3);
  const uint32_t soup = addRandomSoup(big, rng, GeometryType::kSurfaceMesh, 100000, 10.0f, 0.2f);
  big.query(big.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false)), soup);
  const std::vector<RecordStats> stats =
      recordStats({.maxQueries = 1000, .maxGeometries = 1001, .maxPoints = 300000, .maxContacts = 1000,
                   .maxSlots = 200000, .maxCells = 300000},
                  {&one, &many, &big});
  expectFixedDispatchesGrowingWork(stats, 4u);  // the mesh family's COUNT and WRITE, SCAN, RANGES
}

// A batch with a mesh takes its vertices from host memory: a point buffer is refused, nothing recorded.
TEST_F(GeometryQueryStageMeshVulkan, MeshVerticesFromADeviceBufferAreRefused) {
  const Grid g;
  Batch b;
  const uint32_t mesh = b.addMesh(GeometryType::kSurfaceMesh, g.vertices, g.triangles);
  b.query(mesh, b.add(Geometry::sphere({1, 0, 1, 0.5f})));
  auto stage = GeometryQueryStage::create(ctx(), {.maxQueries = 1, .maxGeometries = 2, .maxPoints = 25,
                                                  .maxContacts = 16, .maxCells = 96});
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto pointBuffer = GeometryQueryStage::create(ctx(), {.maxQueries = 1, .maxGeometries = 2, .maxPoints = 25,
                                                        .maxContacts = 16});  // any storage buffer of 25 points
  ASSERT_TRUE(pointBuffer.ok());
  VkCommandBuffer cmd = beginCommandBuffer();
  GeometryQueryRecordInfo info;
  info.geometries = b.geometries;
  info.queries = b.queries;
  info.pointBuffer = (*pointBuffer)->elementsABuffer();
  info.pointCount = 25;
  info.cells = b.cells;
  const Status st = (*stage)->record(cmd, info);
  freeCommandBuffer(cmd);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(st.message().find("geometries[0] is a mesh: its vertices and cells must come from host memory"),
            std::string::npos)
      << st.message();
  EXPECT_EQ((*stage)->lastRecordStats(), RecordStats{});
}

}  // namespace
}  // namespace vkc::test::geometry
