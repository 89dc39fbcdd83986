// Mesh against mesh on every backend (issue 17): surface-surface, surface-line, line-line,
// line-tetrahedral and tetrahedral-tetrahedral (a line, surface and tetrahedral mesh against itself
// too) on kVulkan (the mesh-mesh pair family,
// shaders/shared/geometry_queries_mesh_mesh_slot.h), kCpuScalar and kCpuSimd with one test body per
// backend: random soups and two crossing jittered grids (edges shared by two triangles, so that one
// edge-edge contact per pair of edges matters) mixed with other pair families, in both orders, the
// same counts, ranges and elements as kCpuScalar (bit for bit on the CPU backends and lavapipe);
// overflow; bad input refused with nothing written; a closed surface mesh (its vertex pass). The stage on its own: 100 reruns bitwise identical, dispatch and barrier counts
// whatever the number and size of the mesh-mesh queries.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "geometry_queries/geometry_queries_mesh_test_support.h"
#include "support/vulkan_fixture.h"

namespace vkc::test::geometry {
namespace {

class GeometryQueriesMeshMeshConformance : public MeshBackendTest {};

struct MeshMeshBatch {
  Batch b;
  uint32_t gridA = 0, gridB = 0;
  size_t gridQuery = 0;  // the query (gridA, gridB)
};

// Soups of every mesh type and two crossing grids; each pair in both orders, with a primitive pair
// and a mesh-sphere pair between them (other families: tile gaps).
MeshMeshBatch meshMeshBatch(uint32_t seed, uint32_t cells) {
  std::mt19937 rng(seed);
  MeshMeshBatch m;
  Batch& b = m.b;
  const auto soup = [&](GeometryType type, uint32_t n) { return addRandomSoup(b, rng, type, n, 1.5f, 0.3f); };
  const uint32_t s0 = soup(GeometryType::kSurfaceMesh, cells), s1 = soup(GeometryType::kSurfaceMesh, cells);
  const uint32_t l0 = soup(GeometryType::kLineMesh, cells), l1 = soup(GeometryType::kLineMesh, cells);
  const uint32_t t0 = soup(GeometryType::kTetrahedralMesh, cells / 2);
  b.geometries[l0].p2.w = 0.02f;  // thicknesses: line-line contacts within their sum
  b.geometries[l1].p2.w = 0.03f;
  m.gridA = addJitteredGrid(b, rng, 10, v3(-1, 0, -1), v3(2, 0, 0), v3(0, 0, 2), 0.04f);
  m.gridB = addJitteredGrid(b, rng, 10, v3(-1.1f, -1, -0.2f), v3(2, 0, 0.3f), v3(0.1f, 2, 0.2f), 0.04f);
  const auto pair = [&](uint32_t x, uint32_t y) {
    b.query(x, y);
    b.query(y, x);
  };
  pair(s0, s1);
  pair(b.add(Geometry::sphere({0, 0, 0, 1})), b.add(Geometry::sphere({1.5f, 0, 0, 1})));
  pair(s0, l0);
  pair(l0, l1);
  pair(s1, b.add(Geometry::sphere({0.2f, 0.1f, 0, 0.7f})));
  pair(l0, t0);
  m.gridQuery = b.queries.size();
  pair(m.gridA, m.gridB);
  // Self collision, last: a line, a surface and a tetrahedral mesh against itself.
  b.query(l1, l1);
  b.query(s0, s0);
  b.query(t0, t0);
  return m;
}

TEST_P(GeometryQueriesMeshMeshConformance, RandomMeshesMatchCpuScalar) {
  for (uint32_t seed : {21u, 22u}) {
    MeshMeshBatch m = meshMeshBatch(seed, 300);
    Batch& b = m.b;
    auto counts = run(b, 60000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_FALSE(counts->overflow);
    for (size_t q = 0; q < b.queries.size(); ++q) {
      if (q == 2 || q == 3) continue;  // two spheres
      EXPECT_GT(b.ranges[q].count, 3u) << "query " << q;
    }
    Batch pairs = b;
    pairs.queries.resize(pairs.queries.size() - 3);  // not the self queries
    pairs.ranges.resize(pairs.queries.size());
    expectSwappedPairs(pairs, 0);
    for (uint64_t k = 0; k < counts->written; ++k) expectContactInvariants(b.elementsA[k], b.elementsB[k], 2e-5f);
    expectSameAsCpuScalar(b, 60000);
    // The grids: edge-edge contacts, at most one per pair of edges (crossing surfaces in general
    // position give each pair once; ImstkBoxesEdgeToEdgeWithoutVertexPass has edges through edges).
    const ContactRange r = b.ranges[m.gridQuery];
    uint32_t edgeEdge = 0;
    for (uint32_t k = r.first; k < r.first + r.count; ++k) {
      edgeEdge += contactCellType(b.elementsA[k]) == CellType::kEdge && contactCellType(b.elementsB[k]) == CellType::kEdge;
    }
    EXPECT_GT(edgeEdge, 3u) << "seed " << seed;
    EXPECT_LE(edgeEdge, rawEdgeEdgeContacts(b, m.gridA, m.gridB)) << "seed " << seed;
  }
}

TEST_P(GeometryQueriesMeshMeshConformance, OverflowKeepsTheCountAndWritesNothingPastTheCapacity) {
  MeshMeshBatch full = meshMeshBatch(23, 200);
  ASSERT_TRUE(run(full.b, 60000).ok());
  MeshMeshBatch m = meshMeshBatch(23, 200);
  auto counts = run(m.b, 11);
  ASSERT_TRUE(counts.ok()) << counts.message();
  EXPECT_TRUE(counts->overflow);
  EXPECT_EQ(counts->written, 11u);
  EXPECT_GT(counts->contacts, 11u);
  for (size_t q = 0; q < m.b.queries.size(); ++q) EXPECT_EQ(m.b.ranges[q].count, full.b.ranges[q].count) << q;
  for (size_t k = 0; k < 11; ++k) {
    EXPECT_TRUE(bitwiseEqual(m.b.elementsA[k], full.b.elementsA[k]) && bitwiseEqual(m.b.elementsB[k], full.b.elementsB[k]))
        << k;
  }
}

TEST_P(GeometryQueriesMeshMeshConformance, BadInputIsRefusedAndNothingIsWritten) {
  const auto two = [] {
    Batch b;
    const uint32_t x = b.addMesh(GeometryType::kSurfaceMesh, {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0)}, {0, 1, 2});
    const uint32_t y = b.addMesh(GeometryType::kLineMesh, {v3(0, 0, -1), v3(0, 0, 1)}, {0, 1});
    const uint32_t t = b.addMesh(GeometryType::kTetrahedralMesh, {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1)},
                                 {0, 1, 2, 3});
    b.query(x, y);
    b.query(y, t);
    return b;
  };
  {
    Batch b = two();
    b.cells[4] = 2;
    expectRefused(b, ErrorCode::kInvalidArgument,
            "geometries[1] (line mesh): cells[4] (segment 0, corner 1) is 2: the mesh has 2 vertices");
  }
  {
    Batch b = two();
    b.points[4].z = std::nanf("");
    expectRefused(b, ErrorCode::kInvalidArgument, "points[4].z is nan");
  }
  {
    Batch b = two();
    b.cells[2] = b.cells[1];  // the triangle: two equal corners
    expectRefused(b, ErrorCode::kInvalidArgument, "triangle 0 (cells[0, 3)) has zero area");
  }
  {
    Batch b = two();
    b.points[8] = v3(0.5f, 0.5f, 0);  // the tetrahedron's corner 3 in the plane of the others
    expectRefused(b, ErrorCode::kInvalidArgument, "tetrahedron 0 (cells[5, 9)) has zero volume");
  }
  {
    Batch b = two();
    b.queries[0].method = GeometryMethod::kContinuous;
    expectRefused(b, ErrorCode::kInvalidArgument,
            "queries[0].method is kContinuous: surface mesh vs line mesh has no continuous method");
  }
}

// A closed surface mesh against a mesh: after the candidate pairs, its vertex pass (pseudonormals;
// on kVulkan shared/geometry_queries_closed_mesh_slot.h): kCpuScalar's contacts (more cases:
// geometry_queries_closed_mesh_test.cpp).
TEST_P(GeometryQueriesMeshMeshConformance, ClosedSurfaceMeshVertexPassMatchesCpuScalar) {
  Batch b;
  const uint32_t first = static_cast<uint32_t>(b.points.size());
  // A tetrahedron's closed surface (outward normals) and a rod through it.
  b.points.insert(b.points.end(), {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1)});
  b.cells.insert(b.cells.end(), {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3});
  const uint32_t shell = b.add(Geometry::closedSurfaceMesh(first, 4, 0, 4, 0.0f));
  const uint32_t rod = b.addMesh(GeometryType::kLineMesh, {v3(0.1f, 0.2f, 0.1f), v3(0.1f, 0.2f, 2)}, {0, 1});
  const uint32_t tri = b.addMesh(GeometryType::kSurfaceMesh, {v3(-1, -1, 0.5f), v3(3, -1, 0.5f), v3(-1, 3, 0.5f)}, {0, 1, 2});
  b.query(rod, tri);
  b.query(rod, shell);
  b.query(shell, rod);
  runHere(b, 16);
  EXPECT_EQ(b.ranges[1].count, 2u);  // through the face x + y + z = 1, then vertex 0 inside
  EXPECT_EQ(b.ranges[2].count, 2u);
}

INSTANTIATE_TEST_SUITE_P(Backends, GeometryQueriesMeshMeshConformance, VKC_ALL_BACKENDS);

// --- The stage on its own (Vulkan only).

class GeometryQueryStageMeshMeshVulkan : public MeshStageVulkanTest {};

// Room for 3000 candidate pairs per query (fewer are found: expectHundredRerunsBitwise checks that
// none is missing): without maxCandidates every query would get the product of its cell counts as
// slots, and on lavapipe an empty slot costs about as much as an evaluated pair (minutes for the
// hundred runs).
TEST_F(GeometryQueryStageMeshMeshVulkan, HundredRerunsAreBitwiseIdentical) {
  expectHundredRerunsIdentical(meshMeshBatch(24, 120).b,
                               {.maxQueries = 64, .maxGeometries = 64, .maxPoints = 8192, .maxContacts = 20000,
                                .maxSlots = 600000, .maxCells = 8192, .maxCandidates = 3000},
                               100);
}

// One mesh-mesh query, a hundred, or two meshes of 3000 cells (9M pairs of cells): the same
// dispatches and barriers (recorded, not run).
TEST_F(GeometryQueryStageMeshMeshVulkan, DispatchAndBarrierCountsDoNotDependOnTheMeshMeshQueries) {
  std::mt19937 rng(5);
  Batch one;
  const uint32_t s = addRandomSoup(one, rng, GeometryType::kSurfaceMesh, 20, 1.0f, 0.3f);
  one.query(s, addRandomSoup(one, rng, GeometryType::kLineMesh, 20, 1.0f, 0.3f));
  Batch many;
  const uint32_t l = addRandomSoup(many, rng, GeometryType::kLineMesh, 20, 1.0f, 0.3f);
  for (uint32_t k = 0; k < 100; ++k) many.query(l, addRandomSoup(many, rng, GeometryType::kTetrahedralMesh, 20, 1.0f, 0.3f));
  Batch big;
  const uint32_t x = addRandomSoup(big, rng, GeometryType::kSurfaceMesh, 3000, 10.0f, 0.2f);
  big.query(addRandomSoup(big, rng, GeometryType::kSurfaceMesh, 3000, 10.0f, 0.2f), x);
  const std::vector<RecordStats> stats =
      recordStats({.maxQueries = 100, .maxGeometries = 101, .maxPoints = 20000, .maxContacts = 1000,
                   .maxSlots = 10000000, .maxCells = 20000},
                  {&one, &many, &big});
  // The mesh-mesh family's COUNT and WRITE, SCAN, RANGES; before them the candidates' GATHER, COUNT,
  // SUMS, BLOCKS, PREFIX, WRITE, the tree's build (18 passes: init, boxes, Morton codes, the radix
  // sort's 4 x 3 passes, hierarchy, climb, finalize) and the SPANS pass, all dependent but the last
  // level's two. The family's COUNT and WRITE are indirect, over the slots holding candidates
  // (shared/geometry_queries_spans.h).
  expectFixedDispatchesGrowingWork(stats, 29u, 28u);
  for (const RecordStats& st : stats) EXPECT_EQ(st.indirectDispatches, 2u);
}

}  // namespace
}  // namespace vkc::test::geometry
