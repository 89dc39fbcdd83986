// Validation of the BVH stage's host input (every backend: the CPU twins, and BvhStage::run).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "util/try.h"
#include "vkcollide/bvh.h"

namespace vkc {
namespace {

Error invalid(const std::string& message) { return Error{ErrorCode::kInvalidArgument, "BvhInput::" + message}; }

Status checkFinite(std::span<const Float4> v, const char* array) {
  for (size_t i = 0; i < v.size(); ++i) {
    const float c[3] = {v[i].x, v[i].y, v[i].z};
    for (int k = 0; k < 3; ++k) {
      if (std::isfinite(c[k])) continue;
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s[%zu].%c is %g: vertex positions must be finite", array, i, "xyz"[k],
                    static_cast<double>(c[k]));
      return invalid(buf);
    }
  }
  return {};
}

std::string ref(uint32_t r) {
  if (r == kBvhNone) return "kBvhNone";
  if ((r & kBvhLeafBit) != 0) return "leaf " + std::to_string(r & ~kBvhLeafBit);
  return "node " + std::to_string(r);
}

}  // namespace

Status validate(const BvhInput& in) {
  const uint32_t vpp = in.verticesPerPrimitive;
  if (vpp < 2 || vpp > 4) {
    return invalid("verticesPerPrimitive is " + std::to_string(vpp) + ": must be 2 (segments), 3 (triangles) or 4 "
                   "(tetrahedra)");
  }
  if (in.indices.empty()) return invalid("indices is empty: a BVH needs at least one primitive");
  if (in.indices.size() % vpp != 0) {
    return invalid("indices holds " + std::to_string(in.indices.size()) + " elements: not a multiple of "
                   "verticesPerPrimitive " + std::to_string(vpp));
  }
  if (in.indices.size() / vpp > kBvhMaxPrimitives) {
    return Error{ErrorCode::kLimitExceeded, "BvhInput::indices: " + std::to_string(in.indices.size() / vpp) +
                                                " primitives; at most kBvhMaxPrimitives = " +
                                                std::to_string(kBvhMaxPrimitives)};
  }
  const uint32_t n = in.primitiveCount();
  if (in.vertices.empty()) return invalid("vertices is empty");
  if (!in.prevVertices.empty() && in.prevVertices.size() != in.vertices.size()) {
    return invalid("prevVertices holds " + std::to_string(in.prevVertices.size()) + " elements: must be empty or as "
                   "many as vertices (" + std::to_string(in.vertices.size()) + ")");
  }
  for (size_t k = 0; k < in.indices.size(); ++k) {
    if (in.indices[k] >= in.vertices.size()) {
      return invalid("indices[" + std::to_string(k) + "] (primitive " + std::to_string(k / vpp) + ") is " +
                     std::to_string(in.indices[k]) + "; vertices holds " + std::to_string(in.vertices.size()));
    }
  }
  VKC_TRY(checkFinite(in.vertices, "vertices"));
  VKC_TRY(checkFinite(in.prevVertices, "prevVertices"));
  auto size = [&](size_t got, size_t want, const char* field) -> Status {
    if (got == want) return {};
    return invalid(std::string(field) + " holds " + std::to_string(got) + " elements; a tree of " + std::to_string(n) +
                   " primitives needs " + std::to_string(want));
  };
  VKC_TRY(size(in.nodes.size(), bvhNodeCount(n), "nodes"));
  VKC_TRY(size(in.primitiveBoxes.size(), n, "primitiveBoxes"));
  VKC_TRY(size(in.leafParents.size(), n, "leafParents"));
  return {};
}

Status validateRefit(const BvhInput& in) {
  VKC_TRY(validate(in));
  const uint32_t n = in.primitiveCount();
  const uint32_t nodeCount = bvhNodeCount(n);
  std::vector<uint8_t> seenLeaf(n, 0), seenNode(nodeCount, 0);
  if (in.nodes[0].parent != kBvhNone) return invalid("nodes[0].parent is " + ref(in.nodes[0].parent) + ": the root has none");
  for (uint32_t i = 0; i < nodeCount; ++i) {
    const uint32_t children[2] = {in.nodes[i].left, in.nodes[i].right};
    for (int c = 0; c < 2; ++c) {
      const uint32_t r = children[c];
      auto field = [&] { return "nodes[" + std::to_string(i) + "]." + (c == 0 ? "left" : "right"); };
      if (n == 1 && c == 1) {
        if (r != kBvhNone) return invalid(field() + " is " + ref(r) + ": a 1-primitive tree's root has kBvhNone there");
        continue;
      }
      if ((r & kBvhLeafBit) != 0) {
        const uint32_t p = r & ~kBvhLeafBit;
        if (r == kBvhNone || p >= n) return invalid(field() + " is " + ref(r) + ": not a leaf of a " + std::to_string(n) + "-primitive tree");
        if (seenLeaf[p]++ != 0) return invalid(field() + " is " + ref(r) + ": that primitive is in another leaf too");
        if (in.leafParents[p] != i) {
          return invalid("leafParents[" + std::to_string(p) + "] is " + std::to_string(in.leafParents[p]) + "; " + field() +
                         " says " + std::to_string(i));
        }
      } else {
        if (r == 0 || r >= nodeCount) return invalid(field() + " is " + ref(r) + ": not a child node of a " + std::to_string(n) + "-primitive tree");
        if (seenNode[r]++ != 0) return invalid(field() + " is " + ref(r) + ": that node has another parent too");
        if (in.nodes[r].parent != i) {
          return invalid("nodes[" + std::to_string(r) + "].parent is " + ref(in.nodes[r].parent) + "; " + field() + " says " +
                         std::to_string(i));
        }
      }
    }
  }
  // Every child has one parent (above): the walk from the root must reach every node (no cycle apart
  // from the root), no deeper than kBvhMaxDepth.
  std::vector<std::pair<uint32_t, uint32_t>> stack{{0u, 1u}};
  uint32_t reached = 0;
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    ++reached;
    if (depth > kBvhMaxDepth) {
      return invalid("nodes[" + std::to_string(node) + "] is " + std::to_string(depth) +
                     " levels deep: more than kBvhMaxDepth = " + std::to_string(kBvhMaxDepth));
    }
    for (uint32_t r : {in.nodes[node].left, in.nodes[node].right}) {
      if ((r & kBvhLeafBit) == 0) stack.push_back({r, depth + 1});
    }
  }
  if (reached != nodeCount) {
    return invalid("nodes: " + std::to_string(nodeCount - reached) + " nodes are not reachable from the root (a cycle)");
  }
  return {};
}

}  // namespace vkc
