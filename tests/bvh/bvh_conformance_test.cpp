// BVH conformance: one test body per backend (Vulkan on the test device, CPU scalar, CPU SIMD). Every
// tree is checked structurally (tests/support/bvh_reference.h: boxes exact unions, each primitive in
// one leaf, links, depth, leaf order) and compared byte for byte with the CPU scalar reference.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "support/bvh_reference.h"
#include "support/bvh_sah_builder.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using BvhConformance = BackendTest;

// Builds on `backend`, checks the structure and equality with the scalar reference; returns the tree.
BvhTree buildChecked(Backend backend, Context* ctx, const BvhMesh& mesh) {
  BvhTree tree(mesh.primitiveCount()), reference(mesh.primitiveCount());
  const Status s = buildBvh(backend, ctx, tree.input(mesh));
  EXPECT_TRUE(s.ok()) << s.message();
  const Status r = buildBvhCpu(reference.input(mesh), Backend::kCpuScalar);
  EXPECT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(validTree(mesh, tree));
  EXPECT_TRUE(sameTree(tree, reference));
  return tree;
}

TEST_P(BvhConformance, RandomSoupsOfEveryCount) {
  for (uint32_t n : {1u, 2u, 3u, 7u, 255u, 256u, 257u, 1000u, 4097u, 100'003u}) {
    SCOPED_TRACE("primitives " + std::to_string(n));
    buildChecked(backend(), ctx(), randomSoup(n, std::max(3u, n / 2), n));
  }
}

TEST_P(BvhConformance, SmallTrianglesAndTwoTriangles) {
  buildChecked(backend(), ctx(), randomSmallTriangles(50'000, 5));
  // A two-triangle quad: the root's children are the two leaves.
  BvhMesh quad;
  quad.vertices = {{0, 0, 0, 1}, {1, 0, 0, 1}, {1, 0, 1, 1}, {0, 0, 1, 1}};
  quad.indices = {0, 1, 2, 0, 2, 3};
  const BvhTree t = buildChecked(backend(), ctx(), quad);
  EXPECT_EQ(t.nodes[0].lo, (Float4{0, 0, 0, 0}));
  EXPECT_EQ(t.nodes[0].hi, (Float4{1, 0, 1, 0}));
  EXPECT_TRUE((t.nodes[0].left & kBvhLeafBit) && (t.nodes[0].right & kBvhLeafBit));
}

TEST_P(BvhConformance, OneTriangle) {
  BvhMesh m;
  m.vertices = {{1, 2, 3, 0}, {-1, 5, 3, 9}, {0, 0, 7, 0}};
  m.indices = {2, 1, 0};
  const BvhTree t = buildChecked(backend(), ctx(), m);
  EXPECT_EQ(t.nodes[0].left, kBvhLeafBit | 0u);
  EXPECT_EQ(t.nodes[0].right, kBvhNone);
  EXPECT_EQ(t.nodes[0].parent, kBvhNone);
  EXPECT_EQ(t.nodes[0].lo, (Float4{-1, 0, 3, 0}));
  EXPECT_EQ(t.nodes[0].hi, (Float4{1, 5, 7, 0}));
  EXPECT_EQ(t.leafParents[0], 0u);
}

TEST_P(BvhConformance, AllEqualCentroidsGiveABalancedTree) {
  // 10k copies of one triangle: every code is equal; Karras splits by sorted position, so the depth
  // is ceil(log2(n)) + 1 levels of nodes at most.
  BvhMesh m;
  m.vertices = {{1, 1, 1, 0}, {2, 1, 1, 0}, {1, 3, 1, 0}};
  for (int i = 0; i < 10'000; ++i) m.indices.insert(m.indices.end(), {0, 1, 2});
  const BvhTree t = buildChecked(backend(), ctx(), m);
  uint32_t deepest = 0;
  for (uint32_t p = 0; p < m.primitiveCount(); ++p) {
    uint32_t d = 1;
    for (uint32_t node = t.leafParents[p]; node != 0; node = t.nodes[node].parent) ++d;
    deepest = std::max(deepest, d);
  }
  EXPECT_LE(deepest, 15u);
}

TEST_P(BvhConformance, SliversDuplicatesDegenerateAndExtremeCoordinates) {
  BvhMesh m = randomSoup(3000, 500, 9);
  std::mt19937 rng(4);
  // Slivers: long thin triangles; zero-area triangles (a repeated vertex); duplicate vertices.
  for (int i = 0; i < 500; ++i) {
    const float x = static_cast<float>(rng() % 1000) * 0.01f;
    const uint32_t b = static_cast<uint32_t>(m.vertices.size());
    m.vertices.push_back({x, 0, 0, 0});
    m.vertices.push_back({x + 100.0f, 1e-6f, 0, 0});
    m.vertices.push_back({x + 200.0f, 0, 1e-7f, 0});
    m.vertices.push_back({x, 0, 0, 0});  // duplicate of b
    m.indices.insert(m.indices.end(), {b, b + 1, b + 2, b, b + 3, b + 1, b + 2, b + 2, b + 2});
  }
  // Signed zeros, denormals and huge coordinates: the quantization flushes and scales alike everywhere.
  const uint32_t b = static_cast<uint32_t>(m.vertices.size());
  m.vertices.push_back({-0.0f, 0.0f, 1e-40f, 0});
  m.vertices.push_back({1e-42f, -1e-39f, -0.0f, 0});
  m.vertices.push_back({3.0e38f, -3.0e38f, 1e30f, 0});
  m.vertices.push_back({-3.0e38f, 3.0e38f, -1e30f, 0});
  m.indices.insert(m.indices.end(), {b, b + 1, b, b + 2, b + 3, b + 2, b, b + 1, b + 3});
  buildChecked(backend(), ctx(), m);
  // Only denormals and zeros: every centroid flushes to 0.
  BvhMesh tiny;
  tiny.vertices = {{1e-40f, 0, 0, 0}, {0, -1e-39f, 0, 0}, {0, 0, 1e-45f, 0}, {-0.0f, 0, 0, 0}};
  tiny.indices = {0, 1, 2, 1, 2, 3, 3, 0, 1};
  buildChecked(backend(), ctx(), tiny);
}

TEST_P(BvhConformance, SegmentsAndTetrahedra) {
  for (uint32_t vpp : {2u, 4u}) {
    SCOPED_TRACE("verticesPerPrimitive " + std::to_string(vpp));
    buildChecked(backend(), ctx(), randomSoup(5000, 2000, vpp, 3.0f, vpp));
  }
}

TEST_P(BvhConformance, SweptBoxesCoverBothPositions) {
  BvhMesh m = randomSoup(20'000, 10'000, 21);
  m.prevVertices = m.vertices;
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (Float4& v : m.prevVertices) v = {v.x + d(rng), v.y + d(rng), v.z + d(rng), 0};
  const BvhTree t = buildChecked(backend(), ctx(), m);  // validTree checks the swept boxes exactly
  for (uint32_t p = 0; p < m.primitiveCount(); ++p) {
    const Aabb& b = t.primitiveBoxes[p];
    for (uint32_t k = 0; k < 3; ++k) {
      for (const Float4& q : {m.vertices[m.indices[3 * p + k]], m.prevVertices[m.indices[3 * p + k]]}) {
        ASSERT_TRUE(q.x >= b.lo.x && q.x <= b.hi.x && q.y >= b.lo.y && q.y <= b.hi.y && q.z >= b.lo.z && q.z <= b.hi.z);
      }
    }
  }
}

TEST_P(BvhConformance, RefitEqualsAFreshBuildWithTheSameTopology) {
  BvhMesh m = randomSmallTriangles(30'000, 8);
  BvhTree built(m.primitiveCount());
  ASSERT_TRUE(buildBvh(backend(), ctx(), built.input(m)).ok());
  // Scale the mesh by 2 (exact in float): centroids, their box and the power-of-two quantization
  // scale all scale exactly, so the Morton order, and so a fresh build's topology, stay the same.
  BvhMesh moved = m;
  for (Float4& v : moved.vertices) v = {v.x * 2.0f, v.y * 2.0f, v.z * 2.0f, v.w};
  BvhTree refit = built;
  const Status s = refitBvh(backend(), ctx(), refit.input(moved));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(validTree(moved, refit, false));
  BvhTree fresh(m.primitiveCount());
  ASSERT_TRUE(buildBvhCpu(fresh.input(moved), Backend::kCpuScalar).ok());
  EXPECT_TRUE(sameTree(refit, fresh));
  // A deforming mesh with swept boxes: refit gives the exact unions on the old topology, equal to the
  // scalar refit.
  BvhMesh deformed = m;
  deformed.prevVertices = m.vertices;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (Float4& v : deformed.vertices) v = {v.x + d(rng), v.y + d(rng), v.z + d(rng), 0};
  BvhTree swept = built, sweptRef = built;
  ASSERT_TRUE(refitBvh(backend(), ctx(), swept.input(deformed)).ok());
  ASSERT_TRUE(refitBvhCpu(sweptRef.input(deformed), Backend::kCpuScalar).ok());
  EXPECT_TRUE(validTree(deformed, swept, false));
  EXPECT_TRUE(sameTree(swept, sweptRef));
  for (size_t i = 0; i < built.nodes.size(); ++i) {
    ASSERT_EQ(swept.nodes[i].left, built.nodes[i].left);
    ASSERT_EQ(swept.nodes[i].right, built.nodes[i].right);
  }
}

TEST_P(BvhConformance, SahCostIsReportedAgainstATopDownBuild) {
  const BvhMesh m = randomSmallTriangles(20'000, 12);
  const BvhTree t = buildChecked(backend(), ctx(), m);
  const std::vector<BvhNode> topDown = buildTopDownSah(t.primitiveBoxes);
  const double lbvh = bvhSahCost(t.nodes, t.primitiveBoxes);
  const double sah = bvhSahCost(topDown, t.primitiveBoxes);
  std::printf("[bvh] SAH cost, 20k small random triangles: LBVH %.1f, top-down binned SAH %.1f (ratio %.3f)\n", lbvh, sah,
              lbvh / sah);
  // The top-down tree is a valid tree over the same boxes (no Morton order), and the LBVH is worse but
  // not far off (random uniform centroids suit Morton codes).
  BvhTree td(m.primitiveCount());
  td.nodes = topDown;
  td.primitiveBoxes = t.primitiveBoxes;
  for (uint32_t i = 0; i < topDown.size(); ++i) {
    for (uint32_t c : {topDown[i].left, topDown[i].right}) {
      if (c != kBvhNone && (c & kBvhLeafBit)) td.leafParents[c & ~kBvhLeafBit] = i;
    }
  }
  EXPECT_TRUE(validTree(m, td, false));
  EXPECT_GT(lbvh, sah * 0.99);
  EXPECT_LT(lbvh, sah * 1.6);
  // The leaf term is the same for both trees (same leaves): only the internal nodes differ.
  const double leafTerm = bvhSahCost(t.nodes, t.primitiveBoxes, 0.0, 1.0);
  EXPECT_NEAR(leafTerm, bvhSahCost(topDown, t.primitiveBoxes, 0.0, 1.0), leafTerm * 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Backends, BvhConformance, VKC_ALL_BACKENDS);

TEST(BvhSahCost, MatchesAHandComputedTree) {
  // Root [0,2]x[0,1]x[0,1] (area 2*(2+1+2) = 10) with one child node [0,1]^3 (area 6) and a leaf;
  // leaves: a unit cube (6), a flat unit square (2), a point (0).
  // cost = (10/10 + 6/10) * Ct + (6/10 + 2/10 + 0) * Ci.
  std::vector<BvhNode> nodes(2);
  nodes[0] = {{0, 0, 0, 0}, {2, 1, 1, 0}, 1u, kBvhLeafBit | 2u, kBvhNone, 0};
  nodes[1] = {{0, 0, 0, 0}, {1, 1, 1, 0}, kBvhLeafBit | 0u, kBvhLeafBit | 1u, 0, 0};
  const std::vector<Aabb> leaves = {{{0, 0, 0, 0}, {1, 1, 1, 0}}, {{0, 0, 0, 0}, {1, 1, 0, 0}}, {{2, 1, 1, 0}, {2, 1, 1, 0}}};
  EXPECT_DOUBLE_EQ(bvhSahCost(nodes, leaves), 1.6 + 0.8);
  EXPECT_DOUBLE_EQ(bvhSahCost(nodes, leaves, 2.0, 0.5), 3.2 + 0.4);
}

}  // namespace
}  // namespace vkc::test
