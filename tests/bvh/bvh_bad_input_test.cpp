// Bad BVH input on every backend: a clear error naming the field, and nothing written.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "support/bvh_reference.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using BvhBadInput = BackendTest;

// Runs `update` on a tree whose outputs hold a sentinel; expects an error containing `needle` and
// the outputs untouched.
void expectRejected(Backend backend, Context* ctx, const BvhMesh& mesh, BvhTree tree, const std::string& needle,
                    bool refit = false) {
  for (BvhNode& n : tree.nodes) n = BvhNode{{1, 2, 3, 4}, {5, 6, 7, 8}, 9, 10, 11, 12};
  for (Aabb& b : tree.primitiveBoxes) b = Aabb{{-1, -2, -3, -4}, {-5, -6, -7, -8}};
  for (uint32_t& p : tree.leafParents) p = 0xEEEEEEEEu;
  if (refit && !tree.nodes.empty()) tree.nodes[0].parent = kBvhNone;  // get past the first check
  const BvhTree before = tree;
  const Status s = refit ? refitBvh(backend, ctx, tree.input(mesh)) : buildBvh(backend, ctx, tree.input(mesh));
  ASSERT_FALSE(s.ok()) << "expected an error about " << needle;
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
  EXPECT_TRUE(sameTree(tree, before)) << "outputs were written";
}

TEST_P(BvhBadInput, IndexOutOfRange) {
  BvhMesh m = randomSoup(100, 50, 1);
  m.indices[3 * 17 + 2] = 50;
  expectRejected(backend(), ctx(), m, BvhTree(100), "BvhInput::indices[53] (primitive 17) is 50; vertices holds 50");
}

TEST_P(BvhBadInput, NonFiniteVertices) {
  BvhMesh m = randomSoup(100, 50, 2);
  m.vertices[7].y = std::numeric_limits<float>::quiet_NaN();
  expectRejected(backend(), ctx(), m, BvhTree(100), "BvhInput::vertices[7].y is nan");
  m = randomSoup(100, 50, 2);
  m.prevVertices = m.vertices;
  m.prevVertices[9].z = -std::numeric_limits<float>::infinity();
  expectRejected(backend(), ctx(), m, BvhTree(100), "BvhInput::prevVertices[9].z is -inf");
}

TEST_P(BvhBadInput, EmptyMeshIsAnError) {
  BvhMesh m = randomSoup(0, 5, 3);
  expectRejected(backend(), ctx(), m, BvhTree(0), "BvhInput::indices is empty");
}

TEST_P(BvhBadInput, CountsAndSizes) {
  BvhMesh m = randomSoup(10, 20, 4);
  m.indices.pop_back();
  expectRejected(backend(), ctx(), m, BvhTree(10), "not a multiple of verticesPerPrimitive 3");
  m = randomSoup(10, 20, 4);
  m.verticesPerPrimitive = 5;
  expectRejected(backend(), ctx(), m, BvhTree(6), "verticesPerPrimitive is 5");
  m = randomSoup(10, 20, 4);
  m.prevVertices.resize(19);
  expectRejected(backend(), ctx(), m, BvhTree(10), "prevVertices holds 19 elements");
  m = randomSoup(10, 20, 4);
  expectRejected(backend(), ctx(), m, BvhTree(11), "nodes holds 10 elements; a tree of 10 primitives needs 9");
  m.vertices.clear();
  m.indices.assign(3, 0);
  expectRejected(backend(), ctx(), m, BvhTree(1), "BvhInput::vertices is empty");
}

TEST_P(BvhBadInput, RefitOfABrokenTree) {
  const BvhMesh m = randomSoup(64, 40, 5);
  BvhTree good(64);
  ASSERT_TRUE(buildBvhCpu(good.input(m), Backend::kCpuScalar).ok());
  // A child out of range, a primitive in two leaves, a wrong parent link.
  BvhTree t = good;
  t.nodes[5].left = kBvhLeafBit | 64u;
  BvhTree before = t;
  Status s = refitBvh(backend(), ctx(), t.input(m));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("nodes[5].left is leaf 64: not a leaf of a 64-primitive tree"), std::string::npos) << s.message();
  EXPECT_TRUE(sameTree(t, before));
  t = good;
  uint32_t leafNode = 0;
  while ((t.nodes[leafNode].left & kBvhLeafBit) == 0) ++leafNode;
  t.nodes[leafNode].right = t.nodes[leafNode].left;
  s = refitBvh(backend(), ctx(), t.input(m));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("that primitive is in another leaf too"), std::string::npos) << s.message();
  // A cycle whose links are all consistent: node a's parent slot goes to its internal child c, and a
  // becomes its own child (and parent). Only the walk from the root finds a unreachable.
  t = good;
  uint32_t a = 1;
  while ((t.nodes[a].left & kBvhLeafBit) != 0 && (t.nodes[a].right & kBvhLeafBit) != 0) ++a;
  ASSERT_LT(a, t.nodes.size());
  uint32_t& slot = (t.nodes[a].left & kBvhLeafBit) == 0 ? t.nodes[a].left : t.nodes[a].right;
  const uint32_t c = slot, parent = t.nodes[a].parent;
  (t.nodes[parent].left == a ? t.nodes[parent].left : t.nodes[parent].right) = c;
  t.nodes[c].parent = parent;
  slot = a;
  t.nodes[a].parent = a;
  s = refitBvh(backend(), ctx(), t.input(m));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not reachable from the root"), std::string::npos) << s.message();
  t = good;
  t.leafParents[3] ^= 1u;
  s = refitBvh(backend(), ctx(), t.input(m));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("leafParents[3]"), std::string::npos) << s.message();
}

TEST_P(BvhBadInput, DegeneratePrimitivesAreValid) {
  BvhMesh m;
  m.vertices = {{1, 1, 1, 0}, {1, 1, 1, 0}};
  m.indices = {0, 0, 0, 0, 1, 1, 1, 1, 0};
  BvhTree t(3);
  const Status s = buildBvh(backend(), ctx(), t.input(m));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(validTree(m, t));
  EXPECT_EQ(t.nodes[0].lo, (Float4{1, 1, 1, 0}));
}

INSTANTIATE_TEST_SUITE_P(Backends, BvhBadInput, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
