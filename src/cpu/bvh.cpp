// The CPU twin of the BVH stage (shaders/bvh.comp): the shader's own functions (shared/bvh.h,
// shared/bvh_kernel.h) over host arrays, pass by pass, and the project's radix sort in between. The
// node boxes come bottom-up with arrival counters (the second child to arrive writes the union of
// both), leaf after leaf; the shader stores the nodes inside a workgroup's leaves from shared memory
// and folds the others with atomics instead (see shaders/bvh.comp; cpu::modelBvhClimb counts them). Both are exact min / max selections over the same leaves, so the boxes do
// not depend on the order or the method and equal the shader's bit for bit.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <vector>

#include "cpu/bvh.h"
#include "cpu/radix_sort.h"
#include "shared/bvh.h"
#include "util/try.h"
#include "vkcollide/bvh.h"
#include "vkcollide/radix_sort.h"

namespace vkc {

static_assert(sizeof(BvhNode) == sizeof(gpu::BvhNode) && offsetof(BvhNode, hi) == offsetof(gpu::BvhNode, hi) &&
              offsetof(BvhNode, left) == offsetof(gpu::BvhNode, left) &&
              offsetof(BvhNode, right) == offsetof(gpu::BvhNode, right) &&
              offsetof(BvhNode, parent) == offsetof(gpu::BvhNode, parent));
static_assert(kBvhLeafBit == gpu::kBvhLeafBit && kBvhNone == gpu::kBvhNone && kBvhMaxDepth == gpu::kBvhMaxDepth &&
              kBvhMaxPrimitives == gpu::kBvhMaxPrimitives);

namespace gpu {
namespace {

// The kernel's accessors over host arrays; the kernel's functions become members.
struct BvhKernel {
  const Float4* verts = nullptr;
  const Float4* prev = nullptr;
  const uint32_t* idx = nullptr;
  const uint32_t* codes = nullptr;
  const uint32_t* order = nullptr;

  vec4 vertexAt(uint v) const { return vec4(verts[v].x, verts[v].y, verts[v].z, verts[v].w); }
  vec4 prevVertexAt(uint v) const { return vec4(prev[v].x, prev[v].y, prev[v].z, prev[v].w); }
  uint indexAt(uint k) const { return idx[k]; }
  uint sortedCode(uint i) const { return codes[i]; }
  uint sortedPrim(uint i) const { return order[i]; }

#include "shared/bvh_kernel.h"
};

}  // namespace
}  // namespace gpu

namespace {

Float4 toFloat4(const gpu::vec4& v) { return {v.x, v.y, v.z, v.w}; }

// The kernel over `in`'s vertices and indices, after the primitive boxes (the boxes pass) are
// written: what a build and a refit both start with. `in` is validated.
gpu::BvhKernel primitiveBoxes(const BvhInput& in, uint32_t n) {
  gpu::BvhKernel k;
  k.verts = in.vertices.data();
  k.prev = in.prevVertices.empty() ? nullptr : in.prevVertices.data();
  k.idx = in.indices.data();
  const bool swept = !in.prevVertices.empty();
  const uint32_t vertexCount = static_cast<uint32_t>(in.vertices.size());
  for (uint32_t p = 0; p < n; ++p) {
    gpu::vec4 lo, hi;
    k.bvhPrimitiveBox(p, in.verticesPerPrimitive, vertexCount, swept, lo, hi);
    in.primitiveBoxes[p] = Aabb{toFloat4(lo), toFloat4(hi)};
  }
  return k;
}

gpu::vec4 toVec4(const Float4& f) { return gpu::vec4(f.x, f.y, f.z, f.w); }

// Node boxes bottom-up, as the climb pass: each leaf walks up while it is the last child of its node
// to arrive, writing that node's box as the union of its children's.
void climb(const BvhInput& in, uint32_t n) {
  const uint32_t nodeCount = bvhNodeCount(n);
  std::vector<uint8_t> arrivals(nodeCount, 0);
  auto childBox = [&](uint32_t r, gpu::vec4& lo, gpu::vec4& hi) {
    const bool leaf = (r & kBvhLeafBit) != 0;
    lo = toVec4(leaf ? in.primitiveBoxes[r & ~kBvhLeafBit].lo : in.nodes[r].lo);
    hi = toVec4(leaf ? in.primitiveBoxes[r & ~kBvhLeafBit].hi : in.nodes[r].hi);
  };
  for (uint32_t p = 0; p < n; ++p) {
    uint32_t node = in.leafParents[p];
    for (uint32_t step = 0; step < kBvhMaxDepth && node != kBvhNone; ++step) {
      BvhNode& nd = in.nodes[node];
      const uint32_t need = nd.right == kBvhNone ? 1 : 2;
      if (++arrivals[node] < need) break;
      gpu::vec4 lo, hi;
      childBox(nd.left, lo, hi);
      if (nd.right != kBvhNone) {
        gpu::vec4 lo2, hi2;
        childBox(nd.right, lo2, hi2);
        lo = gpu::bvhMin4(lo, lo2);
        hi = gpu::bvhMax4(hi, hi2);
      }
      nd.lo = toFloat4(lo);
      nd.hi = toFloat4(hi);
      node = nd.parent;
    }
  }
}

}  // namespace

namespace {

// buildBvhCpu after its checks. order: the sorted leaves' primitives; ranges (when not null): each
// node's range of sorted positions, first and last.
Status build(const BvhInput& in, Backend backend, std::vector<uint32_t>& order,
             std::vector<std::array<uint32_t, 2>>* ranges) {
  const uint32_t n = in.primitiveCount();
  gpu::BvhKernel k = primitiveBoxes(in, n);

  // Centroid box (keys: exact), then Morton codes of the centroids quantized in it.
  uint32_t cLo[3] = {~0u, ~0u, ~0u}, cHi[3] = {0, 0, 0};
  std::vector<uint32_t> codes(n);
  order.assign(n, 0);
  auto centroid = [&](const Aabb& b, int a) {
    const float lo[3] = {b.lo.x, b.lo.y, b.lo.z}, hi[3] = {b.hi.x, b.hi.y, b.hi.z};
    return gpu::bvhCentroid(lo[a], hi[a]);
  };
  for (uint32_t p = 0; p < n; ++p) {
    for (int a = 0; a < 3; ++a) {
      const uint32_t key = gpu::floatKeyFromBits(std::bit_cast<uint32_t>(centroid(in.primitiveBoxes[p], a)));
      cLo[a] = std::min(cLo[a], key);
      cHi[a] = std::max(cHi[a], key);
    }
  }
  float cMin[3], scale[3];
  for (int a = 0; a < 3; ++a) {
    cMin[a] = std::bit_cast<float>(gpu::floatBitsFromKey(cLo[a]));
    scale[a] = gpu::bvhAxisScale(cMin[a], std::bit_cast<float>(gpu::floatBitsFromKey(cHi[a])));
  }
  for (uint32_t p = 0; p < n; ++p) {
    uint32_t q[3];
    for (int a = 0; a < 3; ++a) q[a] = gpu::bvhQuantize(centroid(in.primitiveBoxes[p], a), cMin[a], scale[a]);
    codes[p] = gpu::bvhMorton(q[0], q[1], q[2]);
    order[p] = p;
  }
  VKC_TRY(radixSortCpu({codes, order, gpu::kBvhMortonBits}, backend));

  // Hierarchy.
  k.codes = codes.data();
  k.order = order.data();
  if (n == 1) {
    in.nodes[0] = BvhNode{{}, {}, kBvhLeafBit | order[0], kBvhNone, kBvhNone, 0};
    in.leafParents[order[0]] = 0;
    if (ranges != nullptr) ranges->push_back({0, 0});
  } else {
    in.nodes[0].parent = kBvhNone;
    for (uint32_t i = 0; i + 1 < n; ++i) {
      uint32_t children[2], first, last;
      k.bvhSplit(static_cast<int>(i), static_cast<int>(n), children[0], children[1], first, last);
      if (ranges != nullptr) ranges->push_back({first, last});
      BvhNode& nd = in.nodes[i];
      nd.left = children[0];
      nd.right = children[1];
      nd.pad = 0;
      for (uint32_t c : children) {
        if ((c & kBvhLeafBit) != 0) {
          in.leafParents[c & ~kBvhLeafBit] = i;
        } else {
          in.nodes[c].parent = i;
        }
      }
    }
  }
  climb(in, n);
  return {};
}

}  // namespace

Status buildBvhCpu(const BvhInput& in, Backend backend) {
  if (backend == Backend::kVulkan) {
    return Error{ErrorCode::kInvalidArgument, "buildBvhCpu: backend must be kCpuScalar or kCpuSimd"};
  }
  VKC_TRY(validate(in));
  std::vector<uint32_t> order;
  return build(in, backend, order, nullptr);
}

Result<cpu::BvhClimbAtomics> cpu::modelBvhClimb(const BvhInput& in, uint32_t groupSize) {
  if (groupSize == 0) return Error{ErrorCode::kInvalidArgument, "modelBvhClimb: groupSize is 0"};
  VKC_TRY(validate(in));
  std::vector<uint32_t> order;
  std::vector<std::array<uint32_t, 2>> ranges;
  VKC_TRY(build(in, Backend::kCpuScalar, order, &ranges));
  const uint32_t n = in.primitiveCount(), nodeCount = bvhNodeCount(n);

  // Node keys as the climb pass folds them (lo xyz, hi xyz).
  using Keys = std::array<uint32_t, 6>;
  const Keys empty = {~0u, ~0u, ~0u, 0u, 0u, 0u};
  std::vector<Keys> keys;
  auto leafKeys = [&](uint32_t p) {
    const Aabb& b = in.primitiveBoxes[p];
    const float f[6] = {b.lo.x, b.lo.y, b.lo.z, b.hi.x, b.hi.y, b.hi.z};
    Keys r;
    for (int c = 0; c < 6; ++c) r[c] = gpu::floatKeyFromBits(std::bit_cast<uint32_t>(f[c]));
    return r;
  };
  auto exact = [&] {
    for (uint32_t i = 0; i < nodeCount; ++i) {
      const BvhNode& nd = in.nodes[i];
      const float f[6] = {nd.lo.x, nd.lo.y, nd.lo.z, nd.hi.x, nd.hi.y, nd.hi.z};
      for (int c = 0; c < 6; ++c) {
        if (keys[i][c] != gpu::floatKeyFromBits(std::bit_cast<uint32_t>(f[c]))) return false;
      }
    }
    return true;
  };

  // One climb of shaders/bvh.comp's climbFrom, from `node` to the root.
  struct Climb {
    uint32_t node;
    Keys key;
    std::array<bool, 6> on = {true, true, true, true, true, true};
    uint32_t steps = 0;
  };
  auto alive = [&](const Climb& c) { return c.steps < kBvhMaxDepth && c.node < nodeCount; };
  // Bound: 6 per node climbed through. Issued: the climbs start together and go up one node per
  // step; at a step, one node's atomics run in the climbs' order, each climb's early stop seeing the
  // atomics before its own.
  auto simulate = [&](std::vector<Climb>& climbs, uint64_t& bound, uint64_t& issued) {
    for (Climb c : climbs) {
      for (; alive(c); ++c.steps) {
        bound += 6;
        c.node = in.nodes[c.node].parent;
      }
    }
    std::vector<Climb*> active, next;
    for (Climb& c : climbs) {
      if (alive(c)) active.push_back(&c);
    }
    while (!active.empty()) {
      next.clear();
      for (Climb* c : active) {
        bool on = false;
        for (int a = 0; a < 6; ++a) {
          if (!c->on[a]) continue;
          ++issued;
          uint32_t& v = keys[c->node][a];
          c->on[a] = a < 3 ? v > c->key[a] : v < c->key[a];
          v = a < 3 ? std::min(v, c->key[a]) : std::max(v, c->key[a]);
          on = on || c->on[a];
        }
        c->node = in.nodes[c->node].parent;
        ++c->steps;
        if (on && alive(*c)) next.push_back(c);
      }
      active.swap(next);
    }
  };

  cpu::BvhClimbAtomics r;
  std::vector<Climb> climbs;
  // Leaf by leaf in primitive order (the refit's climb).
  for (uint32_t p = 0; p < n; ++p) climbs.push_back({in.leafParents[p], leafKeys(p)});
  keys.assign(nodeCount, empty);
  simulate(climbs, r.leafBound, r.leafIssued);
  r.leafExact = exact();

  // The build's climb: workgroups of groupSize sorted leaves [s, e]. Node i inside [s, e] is stored
  // by invocation i (its box from the leaves); climbs from the parents of the largest inside nodes
  // and of the leaves whose parent is not inside.
  climbs.clear();
  keys.assign(nodeCount, empty);
  std::vector<std::pair<uint32_t, Keys>> stores;
  for (uint32_t s = 0; s < n; s += groupSize) {
    const uint32_t e = std::min(n - 1, s + (groupSize - 1));
    auto inside = [&](uint32_t node) { return node < nodeCount && ranges[node][0] >= s && ranges[node][1] <= e; };
    for (uint32_t i = s; i <= e; ++i) {
      if (inside(i)) {
        Keys box = empty;
        for (uint32_t q = ranges[i][0]; q <= ranges[i][1]; ++q) {
          const Keys leaf = leafKeys(order[q]);
          for (int c = 0; c < 6; ++c) box[c] = c < 3 ? std::min(box[c], leaf[c]) : std::max(box[c], leaf[c]);
        }
        stores.push_back({i, box});
        if (!inside(in.nodes[i].parent)) climbs.push_back({in.nodes[i].parent, box});
      }
      const uint32_t leafParent = in.leafParents[order[i]];
      if (!inside(leafParent)) climbs.push_back({leafParent, leafKeys(order[i])});
    }
  }
  simulate(climbs, r.groupBound, r.groupIssued);
  for (const auto& [node, box] : stores) keys[node] = box;
  r.groupStores = stores.size();
  r.groupExact = exact();
  return r;
}

Status refitBvhCpu(const BvhInput& in, Backend backend) {
  if (backend == Backend::kVulkan) {
    return Error{ErrorCode::kInvalidArgument, "refitBvhCpu: backend must be kCpuScalar or kCpuSimd"};
  }
  VKC_TRY(validateRefit(in));
  cpu::refitBvhValidated(in);
  return {};
}

void cpu::refitBvhValidated(const BvhInput& in) {
  const uint32_t n = in.primitiveCount();
  primitiveBoxes(in, n);
  climb(in, n);
}

double bvhSahCost(std::span<const BvhNode> nodes, std::span<const Aabb> primitiveBoxes, double traversalCost,
                  double intersectionCost) {
  auto area = [](const Float4& lo, const Float4& hi) {
    const double dx = static_cast<double>(hi.x) - static_cast<double>(lo.x);
    const double dy = static_cast<double>(hi.y) - static_cast<double>(lo.y);
    const double dz = static_cast<double>(hi.z) - static_cast<double>(lo.z);
    return 2.0 * (dx * dy + dy * dz + dz * dx);
  };
  if (nodes.empty()) return 0.0;
  const double root = area(nodes[0].lo, nodes[0].hi);
  auto relative = [&](double a) { return root > 0 ? a / root : 1.0; };
  double internal = 0, leaves = 0;
  for (const BvhNode& b : nodes) {
    internal += relative(area(b.lo, b.hi));
    for (uint32_t c : {b.left, b.right}) {
      if (c == kBvhNone || (c & kBvhLeafBit) == 0) continue;
      const uint32_t p = c & ~kBvhLeafBit;
      if (p < primitiveBoxes.size()) leaves += relative(area(primitiveBoxes[p].lo, primitiveBoxes[p].hi));
    }
  }
  return internal * traversalCost + leaves * intersectionCost;
}

}  // namespace vkc
