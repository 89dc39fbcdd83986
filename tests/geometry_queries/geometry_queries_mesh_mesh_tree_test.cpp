// The static mesh-mesh queries on kVulkan through the device tree (issue 17,
// shaders/shared/geometry_queries_mesh_pairs.h): meshes too big for a slot per pair of cells (two
// grids of 20 000 triangles, a line mesh of 72 000 segments against itself) give kCpuScalar's
// contacts bit for bit on lavapipe; candidate pairs past a query's slots (maxCandidates) are counted
// in candidatesMissing and queryGeometries reruns with room for them.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "geometry_queries/geometry_queries_mesh_test_support.h"
#include "support/vulkan_fixture.h"

namespace vkc::test::geometry {
namespace {

class GeometryQueriesMeshMeshTreeVulkan : public MeshBackendTest {};

// Two crossing jittered grids of 100 x 100 squares (20 000 triangles each): 4e8 pairs of cells.
TEST_P(GeometryQueriesMeshMeshTreeVulkan, TwentyThousandTrianglesEachMatchCpuScalar) {
  std::mt19937 rng(7);
  Batch b;
  const uint32_t x = addJitteredGrid(b, rng, 100, v3(-1, 0, -1), v3(2, 0, 0), v3(0, 0, 2), 0.004f);
  const uint32_t y = addJitteredGrid(b, rng, 100, v3(-1.1f, -1, -0.2f), v3(2, 0, 0.3f), v3(0.1f, 2, 0.2f), 0.004f);
  b.query(x, y);
  b.query(y, x);
  auto counts = run(b, 100000);
  ASSERT_TRUE(counts.ok()) << counts.message();
  ASSERT_FALSE(counts->overflow);
  EXPECT_EQ(counts->candidatesMissing, 0u);
  EXPECT_GT(b.ranges[0].count, 200u);
  expectSameAsCpuScalar(b, 100000);
}

// A helix of 72 000 segments (64 a turn) whose neighbouring turns are closer than twice the
// thickness: a line mesh against itself past llvmpipe's 65 535 loop iterations per invocation.
TEST_P(GeometryQueriesMeshMeshTreeVulkan, LineMeshOfSeventyTwoThousandSegmentsAgainstItselfMatchesCpuScalar) {
  Batch b;
  constexpr uint32_t kSegments = 72000, kPerTurn = 64;
  std::vector<Float4> vertices;
  std::vector<uint32_t> segments;
  for (uint32_t i = 0; i <= kSegments; ++i) {
    const float t = 6.2831853f * static_cast<float>(i) / static_cast<float>(kPerTurn);
    vertices.push_back(v3(std::cos(t), 0.01f * t / 6.2831853f, std::sin(t)));
    if (i > 0) segments.insert(segments.end(), {i - 1, i});
  }
  const uint32_t helix = b.addMesh(GeometryType::kLineMesh, vertices, segments);
  b.geometries[helix].p2.w = 0.0052f;  // 2 x 0.0052 above the pitch 0.01
  b.query(helix, helix);
  auto counts = run(b, 400000);
  ASSERT_TRUE(counts.ok()) << counts.message();
  ASSERT_FALSE(counts->overflow);
  EXPECT_GT(b.ranges[0].count, kSegments);
  expectSameAsCpuScalar(b, 400000);
}

INSTANTIATE_TEST_SUITE_P(Vulkan, GeometryQueriesMeshMeshTreeVulkan, ::testing::Values(Backend::kVulkan),
                         ::vkc::test::backendName);

class GeometryQueryStageMeshMeshTreeVulkan : public MeshStageVulkanTest {};

// Two dense soups: far more candidate pairs than X's cells. A stage with maxCandidates 1 (a query's
// slots: X's cells) reports the pairs it could not evaluate and finds fewer contacts; queryGeometries
// (its own stage, rerun with room) gives kCpuScalar's.
TEST_F(GeometryQueryStageMeshMeshTreeVulkan, CandidatesPastTheSlotsAreReported) {
  std::mt19937 rng(3);
  Batch b;
  const uint32_t s0 = addRandomSoup(b, rng, GeometryType::kSurfaceMesh, 300, 0.5f, 0.3f);
  const uint32_t s1 = addRandomSoup(b, rng, GeometryType::kSurfaceMesh, 300, 0.5f, 0.3f);
  b.query(s0, s1);
  Batch cpu = b;
  auto want = cpu.run(Backend::kCpuScalar, 100000);
  ASSERT_TRUE(want.ok()) << want.message();
  ASSERT_GT(want->contacts, 300u);

  auto stage = GeometryQueryStage::create(ctx(), {.maxQueries = 1, .maxGeometries = 2, .maxPoints = 2000,
                                                  .maxContacts = 100000, .maxSlots = 1000, .maxCells = 2000,
                                                  .maxCandidates = 1});
  ASSERT_TRUE(stage.ok()) << stage.message();
  std::vector<ContactElement> ea(100000), eb(100000);
  std::vector<ContactRange> ranges(1);
  auto got = (*stage)->run(b.input(), {ea, eb, ranges});
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_GT(got->candidatesMissing, 0u);
  EXPECT_LT(got->contacts, want->contacts);
  EXPECT_EQ(ranges[0].count, got->contacts);

  expectQueryGeometriesAsCpuScalar(b, cpu, want->contacts, 100000);
}

}  // namespace
}  // namespace vkc::test::geometry
