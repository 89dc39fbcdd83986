// The tandem walk of two meshes' BVHs (src/cpu/mesh_pair_walk.h): a stack of node pairs, each step
// testing the child pairs of the pair it pops (both nodes' children when both are nodes, else the
// node's children against the cell) and pushing those that overlap, but a pair of two cells: a result.
#include "cpu/mesh_pair_walk.h"

namespace vkc::cpu {

namespace {

// Box (lo xyz, hi xyz) of X widened by its reach.
inline void widened(const float* box, float thickness, float lo[3], float hi[3]) {
  const float r = pairWalkReach(box, box + 3, thickness);
  for (int k = 0; k < 3; ++k) {
    lo[k] = box[k] - r;
    hi[k] = box[3 + k] + r;
  }
}

// A widened box of X against a box of Y (the driver's test: apart when one ends before the other starts).
inline bool overlaps(const float alo[3], const float ahi[3], const float blo[3], const float bhi[3]) {
  return !(ahi[0] < blo[0] || ahi[1] < blo[1] || ahi[2] < blo[2] || bhi[0] < alo[0] || bhi[1] < alo[1] ||
           bhi[2] < alo[2]);
}

inline void childBox(const PairWalkNode& n, int c, float lo[3], float hi[3]) {
  for (int k = 0; k < 3; ++k) {
    lo[k] = n.lo[k][c];
    hi[k] = n.hi[k][c];
  }
}

inline uint64_t key(uint32_t a, uint32_t b) {
  return (static_cast<uint64_t>(a) << 32) | b;
}

// An overlapping pair: two cells are a result, else a pair to walk.
inline void found(uint32_t a, uint32_t b, std::vector<uint64_t>& stack, std::vector<uint64_t>& pairs) {
  if ((a & b & kBvhLeafBit) != 0) {
    pairs.push_back(key(a & ~kBvhLeafBit, b & ~kBvhLeafBit));
  } else {
    stack.push_back(key(a, b));
  }
}

}  // namespace

PairWalkTree pairWalkLayout(std::span<const BvhNode> nodes, std::span<const Aabb> boxes) {
  PairWalkTree t;
  t.cells.resize(boxes.size() * 6);
  for (size_t c = 0; c < boxes.size(); ++c) {
    const Aabb& b = boxes[c];
    const float v[6] = {b.lo.x, b.lo.y, b.lo.z, b.hi.x, b.hi.y, b.hi.z};
    for (int k = 0; k < 6; ++k) t.cells[6 * c + k] = v[k];
  }
  t.nodes.resize(boxes.empty() ? 0 : nodes.size());
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    PairWalkNode& w = t.nodes[i];
    const uint32_t refs[2] = {nodes[i].left, nodes[i].right};
    for (int c = 0; c < 2; ++c) {
      w.child[c] = refs[c];
      float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
      if (refs[c] == kBvhNone) {
        // never read (the walk skips a missing child)
      } else if (refs[c] & kBvhLeafBit) {
        const float* b = &t.cells[6 * static_cast<size_t>(refs[c] & ~kBvhLeafBit)];
        for (int k = 0; k < 3; ++k) {
          lo[k] = b[k];
          hi[k] = b[3 + k];
        }
      } else {
        const BvhNode& n = nodes[refs[c]];
        lo[0] = n.lo.x, lo[1] = n.lo.y, lo[2] = n.lo.z;
        hi[0] = n.hi.x, hi[1] = n.hi.y, hi[2] = n.hi.z;
      }
      for (int k = 0; k < 3; ++k) {
        w.lo[k][c] = lo[k];
        w.hi[k][c] = hi[k];
      }
    }
  }
  return t;
}

void pairWalk(const PairWalkTree& x, const PairWalkTree& y, float thickness, std::vector<uint64_t>& stack,
              std::vector<uint64_t>& pairs) {
  if (x.empty() || y.empty()) return;
  stack.assign(1, key(0, 0));  // the roots (node 0 of a tree of one cell too)
  while (!stack.empty()) {
    const uint64_t top = stack.back();
    stack.pop_back();
    const uint32_t a = static_cast<uint32_t>(top >> 32), b = static_cast<uint32_t>(top);
    const bool aCell = (a & kBvhLeafBit) != 0, bCell = (b & kBvhLeafBit) != 0;  // not both
    // X's side: its children (a node) or itself (a cell), widened once for the tests below.
    float wlo[2][3], whi[2][3];
    uint32_t refs[2] = {a, kBvhNone};
    if (aCell) {
      widened(&x.cells[6 * static_cast<size_t>(a & ~kBvhLeafBit)], thickness, wlo[0], whi[0]);
    } else {
      const PairWalkNode& na = x.nodes[a];
      for (int i = 0; i < 2; ++i) {
        refs[i] = na.child[i];
        if (refs[i] == kBvhNone) continue;
        float box[6];
        childBox(na, i, box, box + 3);
        widened(box, thickness, wlo[i], whi[i]);
      }
    }
    if (bCell) {  // a is a node
      const float* c = &y.cells[6 * static_cast<size_t>(b & ~kBvhLeafBit)];
      for (int i = 0; i < 2; ++i) {
        if (refs[i] != kBvhNone && overlaps(wlo[i], whi[i], c, c + 3)) found(refs[i], b, stack, pairs);
      }
      continue;
    }
    const PairWalkNode& nb = y.nodes[b];
    for (int j = 0; j < 2; ++j) {
      if (nb.child[j] == kBvhNone) continue;
      float blo[3], bhi[3];
      childBox(nb, j, blo, bhi);
      for (int i = 0; i < 2; ++i) {
        if (refs[i] != kBvhNone && overlaps(wlo[i], whi[i], blo, bhi))
          found(refs[i], nb.child[j], stack, pairs);
      }
    }
  }
}

}  // namespace vkc::cpu
