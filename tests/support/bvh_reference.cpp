#include "support/bvh_reference.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <random>
#include <string>

#include "shared/bvh.h"

namespace vkc::test {

BvhMesh randomSoup(uint32_t primitiveCount, uint32_t vertexCount, uint32_t seed, float scale,
                   uint32_t verticesPerPrimitive) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  BvhMesh m;
  m.verticesPerPrimitive = verticesPerPrimitive;
  m.vertices.resize(vertexCount);
  for (Float4& v : m.vertices) v = {u(rng), u(rng), u(rng), 1.0f};
  m.indices.resize(size_t{primitiveCount} * verticesPerPrimitive);
  for (uint32_t& i : m.indices) i = static_cast<uint32_t>(rng() % vertexCount);
  return m;
}

BvhMesh randomSmallTriangles(uint32_t primitiveCount, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-50.0f, 50.0f), e(-0.3f, 0.3f);
  BvhMesh m;
  for (uint32_t t = 0; t < primitiveCount; ++t) {
    const float cx = u(rng), cy = u(rng), cz = u(rng);
    for (int k = 0; k < 3; ++k) {
      m.indices.push_back(static_cast<uint32_t>(m.vertices.size()));
      m.vertices.push_back({cx + e(rng), cy + e(rng), cz + e(rng), 0.0f});
    }
  }
  return m;
}

::testing::AssertionResult sameTree(const BvhTree& a, const BvhTree& b) {
  if (a.nodes.size() != b.nodes.size() || a.primitiveBoxes.size() != b.primitiveBoxes.size() ||
      a.leafParents.size() != b.leafParents.size()) {
    return ::testing::AssertionFailure() << "array sizes differ";
  }
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    if (std::memcmp(&a.nodes[i], &b.nodes[i], sizeof(BvhNode)) != 0) {
      const BvhNode &x = a.nodes[i], &y = b.nodes[i];
      return ::testing::AssertionFailure() << "nodes[" << i << "] differ: left " << x.left << "/" << y.left << " right "
                                           << x.right << "/" << y.right << " parent " << x.parent << "/" << y.parent
                                           << " lo.x " << x.lo.x << "/" << y.lo.x << " hi.z " << x.hi.z << "/" << y.hi.z;
    }
  }
  for (size_t i = 0; i < a.primitiveBoxes.size(); ++i) {
    if (std::memcmp(&a.primitiveBoxes[i], &b.primitiveBoxes[i], sizeof(Aabb)) != 0) {
      return ::testing::AssertionFailure() << "primitiveBoxes[" << i << "] differ";
    }
  }
  if (a.leafParents != b.leafParents) return ::testing::AssertionFailure() << "leafParents differ";
  return ::testing::AssertionSuccess();
}

namespace {

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
bool sameBits(const Float4& a, const Float4& b) { return std::memcmp(&a, &b, sizeof(Float4)) == 0; }

float lessKey(float a, float b, bool wantMin) {
  const uint32_t ka = gpu::floatKeyFromBits(bits(a)), kb = gpu::floatKeyFromBits(bits(b));
  return wantMin ? (kb < ka ? b : a) : (kb > ka ? b : a);
}
Float4 fold(const Float4& a, const Float4& b, bool wantMin) {
  return {lessKey(a.x, b.x, wantMin), lessKey(a.y, b.y, wantMin), lessKey(a.z, b.z, wantMin), 0.0f};
}

}  // namespace

::testing::AssertionResult validTree(const BvhMesh& mesh, const BvhTree& tree, bool checkOrder) {
  const uint32_t n = mesh.primitiveCount();
  const uint32_t vpp = mesh.verticesPerPrimitive;
  if (n == 0) return ::testing::AssertionFailure() << "empty mesh";
  if (tree.nodes.size() != bvhNodeCount(n) || tree.primitiveBoxes.size() != n || tree.leafParents.size() != n) {
    return ::testing::AssertionFailure() << "array sizes";
  }
  // Primitive boxes, from scratch.
  for (uint32_t p = 0; p < n; ++p) {
    Float4 lo{}, hi{};
    for (uint32_t k = 0; k < vpp; ++k) {
      const uint32_t v = mesh.indices[size_t{p} * vpp + k];
      for (int s = 0; s < (mesh.prevVertices.empty() ? 1 : 2); ++s) {
        const Float4 q = s == 0 ? mesh.vertices[v] : mesh.prevVertices[v];
        const Float4 q0{q.x, q.y, q.z, 0.0f};
        lo = (k == 0 && s == 0) ? q0 : fold(lo, q0, true);
        hi = (k == 0 && s == 0) ? q0 : fold(hi, q0, false);
      }
    }
    if (!sameBits(lo, tree.primitiveBoxes[p].lo) || !sameBits(hi, tree.primitiveBoxes[p].hi)) {
      return ::testing::AssertionFailure() << "primitiveBoxes[" << p << "] is not its vertices' box";
    }
  }
  // Links and boxes.
  const uint32_t nodeCount = bvhNodeCount(n);
  std::vector<int> leafSeen(n, 0), nodeSeen(nodeCount, 0);
  if (tree.nodes[0].parent != kBvhNone) return ::testing::AssertionFailure() << "root has a parent";
  std::vector<uint32_t> leafOrder;
  // In-order walk (left subtree, then right), with depth.
  struct Item {
    uint32_t ref, depth;
  };
  std::vector<Item> stack{{0, 1}};
  nodeSeen[0] = 1;
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    if ((it.ref & kBvhLeafBit) != 0) {
      leafOrder.push_back(it.ref & ~kBvhLeafBit);
      continue;
    }
    if (it.depth > kBvhMaxDepth) return ::testing::AssertionFailure() << "node " << it.ref << " deeper than kBvhMaxDepth";
    const BvhNode& nd = tree.nodes[it.ref];
    if (nd.pad != 0 || nd.lo.w != 0.0f || nd.hi.w != 0.0f) return ::testing::AssertionFailure() << "node " << it.ref << " pad/w";
    const uint32_t children[2] = {nd.left, nd.right};
    Float4 lo{}, hi{};
    int count = 0;
    for (int c = 0; c < 2; ++c) {
      const uint32_t r = children[c];
      if (r == kBvhNone && c == 1 && n == 1) continue;
      Float4 clo, chi;
      if ((r & kBvhLeafBit) != 0) {
        const uint32_t p = r & ~kBvhLeafBit;
        if (p >= n) return ::testing::AssertionFailure() << "node " << it.ref << " child " << r << " out of range";
        if (leafSeen[p]++ != 0) return ::testing::AssertionFailure() << "primitive " << p << " in two leaves";
        if (tree.leafParents[p] != it.ref) return ::testing::AssertionFailure() << "leafParents[" << p << "] wrong";
        clo = tree.primitiveBoxes[p].lo;
        chi = tree.primitiveBoxes[p].hi;
      } else {
        if (r == 0 || r >= nodeCount) return ::testing::AssertionFailure() << "node " << it.ref << " child " << r << " out of range";
        if (nodeSeen[r]++ != 0) return ::testing::AssertionFailure() << "node " << r << " has two parents";
        if (tree.nodes[r].parent != it.ref) return ::testing::AssertionFailure() << "nodes[" << r << "].parent wrong";
        clo = tree.nodes[r].lo;
        chi = tree.nodes[r].hi;
      }
      lo = count == 0 ? clo : fold(lo, clo, true);
      hi = count == 0 ? chi : fold(hi, chi, false);
      ++count;
    }
    if (count == 0) return ::testing::AssertionFailure() << "node " << it.ref << " has no children";
    lo.w = hi.w = 0.0f;
    if (!sameBits(lo, nd.lo) || !sameBits(hi, nd.hi)) {
      return ::testing::AssertionFailure() << "node " << it.ref << "'s box is not the union of its children's";
    }
    // Push right first: the left subtree comes out first.
    for (int c = 1; c >= 0; --c) {
      if (children[c] != kBvhNone) stack.push_back({children[c], it.depth + 1});
    }
  }
  if (leafOrder.size() != n) return ::testing::AssertionFailure() << leafOrder.size() << " leaves for " << n << " primitives";
  for (uint32_t i = 0; i < nodeCount; ++i) {
    if (nodeSeen[i] != 1) return ::testing::AssertionFailure() << "node " << i << " unreachable";
  }
  if (checkOrder) {
    // Codes from the boxes, by the shared functions (the specification of the quantization).
    float cmin[3], cmax[3];
    std::vector<std::array<float, 3>> c(n);
    for (uint32_t p = 0; p < n; ++p) {
      const Aabb& b = tree.primitiveBoxes[p];
      c[p] = {gpu::bvhCentroid(b.lo.x, b.hi.x), gpu::bvhCentroid(b.lo.y, b.hi.y), gpu::bvhCentroid(b.lo.z, b.hi.z)};
      for (int a = 0; a < 3; ++a) {
        cmin[a] = p == 0 ? c[p][a] : std::min(cmin[a], c[p][a]);
        cmax[a] = p == 0 ? c[p][a] : std::max(cmax[a], c[p][a]);
      }
    }
    auto code = [&](uint32_t p) {
      uint32_t q[3];
      for (int a = 0; a < 3; ++a) q[a] = gpu::bvhQuantize(c[p][a], cmin[a], gpu::bvhAxisScale(cmin[a], cmax[a]));
      return gpu::bvhMorton(q[0], q[1], q[2]);
    };
    for (uint32_t i = 1; i < n; ++i) {
      const uint32_t a = leafOrder[i - 1], b = leafOrder[i];
      const uint32_t ca = code(a), cb = code(b);
      if (ca > cb || (ca == cb && a > b)) {
        return ::testing::AssertionFailure() << "leaves " << i - 1 << " and " << i << " (primitives " << a << ", " << b
                                             << ", codes " << ca << ", " << cb << ") out of (code, index) order";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace vkc::test
