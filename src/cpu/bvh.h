// Private interface of the BVH stage's CPU twin (src/cpu/bvh.cpp) for other stages' CPU twins.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vkcollide/bvh.h"

namespace vkc::cpu {

// refitBvhCpu without its validation: for a caller that has validated the same input already (the
// mesh stage's explicit kRefit validates the tree's topology in its own validate()).
void refitBvhValidated(const BvhInput& input);

// The CLIMB pass's atomic operations, counted by a model of shaders/bvh.comp over the tree that
// buildBvhCpu writes into `input` (which it builds, scalar): the refit's climb (leaf*: each leaf from
// its parent to the root) and the build's (group*: workgroups of `groupSize` consecutive sorted
// leaves; the nodes inside a workgroup's range stored, groupStores of them; climbs from the parents
// of the largest inside nodes and of the leaves whose parent is not inside). *Bound: 6 per node
// climbed through (no early stop); *Issued: with the early stop, the climbs starting together and
// going up one node per step (at a step, one node's atomics in the climbs' order). *Exact: the node
// keys the model writes equal the tree's boxes.
struct BvhClimbAtomics {
  uint64_t leafBound = 0, leafIssued = 0;
  uint64_t groupBound = 0, groupIssued = 0, groupStores = 0;
  bool leafExact = false, groupExact = false;
};
Result<BvhClimbAtomics> modelBvhClimb(const BvhInput& input, uint32_t groupSize);

// Depth-first walk of a tree (nodes as buildBvhCpu writes them): enters a node when
// nodeOverlaps(node) holds and calls leaf(primitive) for each leaf reached (left before right).
// stack: scratch, reused between walks.
template <class NodeOverlaps, class Leaf>
void walkBvh(std::span<const BvhNode> nodes, std::vector<uint32_t>& stack, NodeOverlaps nodeOverlaps,
             Leaf leaf) {
  stack.assign(1, 0u);
  while (!stack.empty()) {
    const uint32_t child = stack.back();
    stack.pop_back();
    if (child == kBvhNone) continue;
    if (child & kBvhLeafBit) {
      leaf(child & ~kBvhLeafBit);
      continue;
    }
    const BvhNode& n = nodes[child];
    if (!nodeOverlaps(n)) continue;
    stack.push_back(n.right);
    stack.push_back(n.left);
  }
}

}  // namespace vkc::cpu
