// A top-down binned SAH builder (tests and benchmarks only, not the library): the quality yardstick
// for the LBVH. Binary tree, one primitive per leaf, written in the BVH stage's node layout
// (vkcollide/bvh.h: root 0, child references with kBvhLeafBit), so that bvhSahCost() scores both alike.
// Per node: the centroids' box; on each axis kBins equal bins; the split between bins with the least
// left count * left area + right count * right area; where every centroid falls in one bin (or all are
// equal), the range is halved by position.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "vkcollide/bvh.h"

namespace vkc::test {

inline std::vector<BvhNode> buildTopDownSah(std::span<const Aabb> boxes) {
  constexpr int kBins = 16;
  const uint32_t n = static_cast<uint32_t>(boxes.size());
  std::vector<BvhNode> nodes;
  if (n == 0) return nodes;
  nodes.reserve(bvhNodeCount(n));
  auto grow = [](Aabb& a, const Aabb& b) {
    a.lo = {std::min(a.lo.x, b.lo.x), std::min(a.lo.y, b.lo.y), std::min(a.lo.z, b.lo.z), 0};
    a.hi = {std::max(a.hi.x, b.hi.x), std::max(a.hi.y, b.hi.y), std::max(a.hi.z, b.hi.z), 0};
  };
  auto area = [](const Aabb& a) {
    if (a.empty()) return 0.0f;
    const float dx = a.hi.x - a.lo.x, dy = a.hi.y - a.lo.y, dz = a.hi.z - a.lo.z;
    return dx * dy + dy * dz + dz * dx;
  };
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Aabb empty{{kInf, kInf, kInf, 0}, {-kInf, -kInf, -kInf, 0}};
  std::vector<uint32_t> prims(n);
  std::iota(prims.begin(), prims.end(), 0u);
  std::vector<Float4> centroid(n);
  for (uint32_t p = 0; p < n; ++p) {
    const Aabb& b = boxes[p];
    centroid[p] = {(b.lo.x + b.hi.x) * 0.5f, (b.lo.y + b.hi.y) * 0.5f, (b.lo.z + b.hi.z) * 0.5f, 0};
  }
  auto axis = [](const Float4& v, int a) { return a == 0 ? v.x : a == 1 ? v.y : v.z; };
  if (n == 1) {
    nodes.push_back(BvhNode{boxes[0].lo, boxes[0].hi, kBvhLeafBit, kBvhNone, kBvhNone, 0});
    return nodes;
  }
  struct Task {
    uint32_t begin, end, node;
  };
  std::vector<Task> stack{{0, n, 0}};
  nodes.push_back(BvhNode{});
  while (!stack.empty()) {
    const Task t = stack.back();
    stack.pop_back();
    Aabb box = empty, cbox = empty;
    for (uint32_t i = t.begin; i < t.end; ++i) {
      grow(box, boxes[prims[i]]);
      const Float4& c = centroid[prims[i]];
      grow(cbox, Aabb{c, c});
    }
    nodes[t.node].lo = box.lo;
    nodes[t.node].hi = box.hi;
    int bestAxis = -1, bestSplit = 0;
    float bestCost = 0;
    for (int a = 0; a < 3; ++a) {
      const float lo = axis(cbox.lo, a), extent = axis(cbox.hi, a) - lo;
      if (!(extent > 0)) continue;
      uint32_t count[kBins] = {};
      Aabb bin[kBins];
      std::fill(std::begin(bin), std::end(bin), empty);
      auto binOf = [&](uint32_t p) {
        return std::min(kBins - 1, static_cast<int>((axis(centroid[p], a) - lo) / extent * kBins));
      };
      for (uint32_t i = t.begin; i < t.end; ++i) {
        const int b = binOf(prims[i]);
        ++count[b];
        grow(bin[b], boxes[prims[i]]);
      }
      float rightArea[kBins];
      uint32_t rightCount[kBins];
      Aabb acc = empty;
      uint32_t cnt = 0;
      for (int b = kBins - 1; b > 0; --b) {
        grow(acc, bin[b]);
        cnt += count[b];
        rightArea[b] = area(acc);
        rightCount[b] = cnt;
      }
      acc = empty;
      cnt = 0;
      for (int s = 1; s < kBins; ++s) {  // split before bin s
        grow(acc, bin[s - 1]);
        cnt += count[s - 1];
        if (cnt == 0 || rightCount[s] == 0) continue;
        const float cost = static_cast<float>(cnt) * area(acc) + static_cast<float>(rightCount[s]) * rightArea[s];
        if (bestAxis < 0 || cost < bestCost) bestAxis = a, bestSplit = s, bestCost = cost;
      }
    }
    uint32_t mid = t.begin + (t.end - t.begin) / 2;
    if (bestAxis >= 0) {
      const float lo = axis(cbox.lo, bestAxis), extent = axis(cbox.hi, bestAxis) - lo;
      auto* m = std::partition(prims.data() + t.begin, prims.data() + t.end, [&](uint32_t p) {
        return std::min(kBins - 1, static_cast<int>((axis(centroid[p], bestAxis) - lo) / extent * kBins)) < bestSplit;
      });
      const uint32_t split = static_cast<uint32_t>(m - prims.data());
      if (split > t.begin && split < t.end) mid = split;
    }
    const uint32_t ranges[2][2] = {{t.begin, mid}, {mid, t.end}};
    uint32_t refs[2];
    for (int c = 0; c < 2; ++c) {
      if (ranges[c][1] - ranges[c][0] == 1) {
        refs[c] = kBvhLeafBit | prims[ranges[c][0]];
      } else {
        refs[c] = static_cast<uint32_t>(nodes.size());
        nodes.push_back(BvhNode{{}, {}, 0, 0, t.node, 0});
        stack.push_back({ranges[c][0], ranges[c][1], refs[c]});
      }
    }
    nodes[t.node].left = refs[0];
    nodes[t.node].right = refs[1];
  }
  return nodes;
}

}  // namespace vkc::test
