// Private (issue 17): the tandem walk of two meshes' BVHs (src/cpu/geometry_queries_mesh_mesh.cpp)
// over a layout of each tree (built with the tree: kept in GeometryQueryTrees, or made in the call):
// per node its two children's boxes side by side, so that one step tests the 2 x 2 child pairs of a
// node pair. X's boxes are widened as the walk reads them, each by its own reach (pairWalkReach: the
// driver's per-cell reach for a cell's box; a node's box covers every cell below it, and the reach
// grows with the box, so a node's widened box covers its cells' widened boxes); Y's are exact. A
// missing child (kBvhNone) is skipped. The walk's result, every (cell of X, cell of Y) whose widened
// and exact cell boxes overlap, depends on the cell boxes only, never on the trees' shapes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vkcollide/bvh.h"

namespace vkc::cpu {

struct PairWalkNode {
  float lo[3][2];  // per axis, child 0's and child 1's
  float hi[3][2];
  uint32_t child[2];  // BVH references (kBvhLeafBit | cell, a node, or kBvhNone)
};

// A node of the tree collapsed to four children (the SIMD walk's): the binary tree's node and, while
// it has fewer than four, the children of its child with the largest box (half surface area) in place
// of that child. Its children's boxes per axis side by side; child: kBvhLeafBit | cell, a wide node's
// index, or kBvhNone past `count`. 112 bytes padded to two whole cache lines (aligned to 64: half the
// nodes of 112 at 16 spanned three lines, the third not prefetched).
struct alignas(64) PairWalkNode4 {
  float lo[3][4];
  float hi[3][4];
  uint32_t child[4];
  uint32_t count;  // children 1..4
};

struct PairWalkTree {
  std::vector<PairWalkNode> nodes;   // one per BVH node (node 0 the root)
  std::vector<PairWalkNode4> wide;   // the tree collapsed to four children a node (wide node 0 the root)
  std::vector<float> cells;          // per cell its box: lo xyz, hi xyz
  // With the cells' vertex numbers (pairWalkLayout's `ids`; else both empty), for the self walks:
  std::vector<uint32_t> cellIds;  // per cell its `corners` vertex numbers, then kBvhNone (4 a cell)
  std::vector<uint32_t> wideIds;  // per wide node 16: its child i's cellIds at 4 i (a cell child; else 0)
  uint32_t corners = 0;
  bool empty() const { return nodes.empty(); }
};

// The layout of a tree (buildBvhCpu's nodes, the cells' boxes), both the binary and the wide one; with
// `ids` (the cells' vertex numbers, `corners` a cell) also the cells' vertex numbers for the self walks.
PairWalkTree pairWalkLayout(std::span<const BvhNode> nodes, std::span<const Aabb> boxes,
                            std::span<const uint32_t> ids = {}, uint32_t corners = 0);

// The reach by which a box (lo, hi) of X is widened: thickness + 1e-5 * max(the box's largest
// coordinate magnitude, thickness), a margin above float rounding (the driver's).
// `relative`: the margin's factor (the self walks take another; every other walk 1e-5).
inline float pairWalkReach(const float lo[3], const float hi[3], float thickness, float relative = 1e-5f) {
  float scale = thickness;
  for (int a = 0; a < 3; ++a) {
    const float l = lo[a] < 0.0f ? -lo[a] : lo[a], h = hi[a] < 0.0f ? -hi[a] : hi[a];
    scale = scale < l ? l : scale;
    scale = scale < h ? h : scale;
  }
  return thickness + relative * scale;
}

// Keys (cell of X << 32 | cell of Y) of every cell pair whose boxes overlap (X's widened by
// pairWalkReach with `thickness`), in walk order, appended to pairs; `stack` scratch.
void pairWalk(const PairWalkTree& x, const PairWalkTree& y, float thickness, std::vector<uint64_t>& stack,
              std::vector<uint64_t>& pairs);
// Its SIMD twin (src/cpu/mesh_pair_walk_simd.cpp, kCpuSimd): the same keys, in its own walk order
// (a tandem walk of the wide trees, up to 4 x 4 child pairs a step; the keys do not depend on the
// trees' shapes, see the top of this file).
void pairWalkSimd(const PairWalkTree& x, const PairWalkTree& y, float thickness, std::vector<uint64_t>& stack,
                  std::vector<uint64_t>& pairs);

// The self walks' rule for two cells cx < cy with vertex numbers ix and iy (4 each: `corners`, then
// kBvhNone, never a vertex number): geomMeshMeshSelfPair, the rule of every self query, without its
// branches (the walks meet about 50 pairs of neighbours for each pair kept on a surface; tested against
// the rule in tests/mesh_pairs/mesh_mesh_simd_test.cpp).
inline bool pairWalkSelfPair(uint32_t cx, const uint32_t* ix, uint32_t cy, const uint32_t* iy,
                             uint32_t corners) {
  bool shared = false;
  for (uint32_t i = 0; i < 4; ++i) {
    const bool corner = i < corners;
    shared |= corner & ((ix[i] == iy[0]) | (ix[i] == iy[1]) | (ix[i] == iy[2]) | (ix[i] == iy[3]));
  }
  return cx < cy && !shared;
}

// A tree against itself (a mesh's self query): the keys (lower cell << 32 | higher cell) of every pair
// of two cells whose boxes overlap, the lower cell's widened by pairWalkReach with `thickness` (the
// pairs cx < cy of pairWalk(t, t, ...)), each pair met once, in walk order, appended to pairs; `stack`
// scratch. A self walk visits a node against itself once (its children against each other, each
// unordered pair of children once, and each child against itself) and two different nodes once, in
// one order: about half of pairWalk(t, t)'s steps. Both sides come from one tree, so a node pair is
// tested both ways (either node widened: a pair of cells below them is kept by the lower cell's
// widening, which may be on either side) and a cell pair by its lower cell's widening alone. A layout
// with the cells' vertex numbers: the pairs of cells sharing a vertex are dropped as they are met
// (geomMeshMeshSelfPair: a mesh's self query never pairs neighbours, nearly all of the overlapping
// pairs of a surface), not appended.
// `relative`: pairWalkReach's margin factor (a caller that filters the pairs with a reach of its own
// takes a wider one: the mesh CCD's).
void pairWalkSelf(const PairWalkTree& t, float thickness, std::vector<uint64_t>& stack,
                  std::vector<uint64_t>& pairs, float relative = 1e-5f);
// Its SIMD twin (src/cpu/mesh_pair_walk_simd.cpp, kCpuSimd): the same keys, in its own walk order.
void pairWalkSelfSimd(const PairWalkTree& t, float thickness, std::vector<uint64_t>& stack,
                      std::vector<uint64_t>& pairs, float relative = 1e-5f);

}  // namespace vkc::cpu
