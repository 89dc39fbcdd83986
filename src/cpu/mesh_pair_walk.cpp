// The tandem walk of two meshes' BVHs (src/cpu/mesh_pair_walk.h): a stack of node pairs, each step
// testing the child pairs of the pair it pops (both nodes' children when both are nodes, else the
// node's children against the cell) and pushing those that overlap, but a pair of two cells: a result.
#include "cpu/mesh_pair_walk.h"

#include <algorithm>

namespace vkc::cpu {

namespace {

// Box (lo xyz, hi xyz) of X widened by its reach.
inline void widened(const float* box, float thickness, float lo[3], float hi[3], float relative = 1e-5f) {
  const float r = pairWalkReach(box, box + 3, thickness, relative);
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

namespace {

// Half the surface area of a box (lo xyz, hi xyz).
float halfArea(const float box[6]) {
  const float x = box[3] - box[0], y = box[4] - box[1], z = box[5] - box[2];
  return x * y + y * z + z * x;
}

void emptyBox(float box[6]) {
  for (int k = 0; k < 3; ++k) box[k] = 3.4e38f, box[3 + k] = -3.4e38f;
}

inline void growBox(float box[6], const float* b) {
  for (int k = 0; k < 3; ++k) {
    box[k] = b[k] < box[k] ? b[k] : box[k];
    box[3 + k] = b[3 + k] > box[3 + k] ? b[3 + k] : box[3 + k];
  }
}

// A cell during the wide tree's build: its box (lo xyz, hi xyz) and number, moved with the partitions.
struct BuildCell {
  float box[6];
  uint32_t id;
};

// Splits cells[begin, end) (at least two) in two, returns the first of the second half: on the
// axis where the cells' centres spread most, the plane of least binned surface-area cost (kBins bins
// of the centres); a group whose centres coincide, or whose best plane leaves a side empty, is halved
// by its order.
uint32_t splitCells(std::vector<BuildCell>& cells, uint32_t begin, uint32_t end) {
  constexpr int kBins = 16;
  float clo[3] = {3.4e38f, 3.4e38f, 3.4e38f}, chi[3] = {-3.4e38f, -3.4e38f, -3.4e38f};
  for (uint32_t i = begin; i < end; ++i) {
    const float* b = cells[i].box;
    for (int k = 0; k < 3; ++k) {
      const float c = b[k] + b[3 + k];
      clo[k] = c < clo[k] ? c : clo[k];
      chi[k] = c > chi[k] ? c : chi[k];
    }
  }
  int axis = 0;
  for (int k = 1; k < 3; ++k) {
    if (chi[k] - clo[k] > chi[axis] - clo[axis]) axis = k;
  }
  int bestAxis = -1, bestBin = 0;
  float bestCost = 3.4e38f;
  for (int k = axis; k == axis; ++k) {
    if (!(chi[k] > clo[k])) continue;
    const float scale = kBins / (chi[k] - clo[k]);
    float boxes[kBins][6];
    uint32_t counts[kBins] = {};
    for (auto& b : boxes) emptyBox(b);
    for (uint32_t i = begin; i < end; ++i) {
      const float* b = cells[i].box;
      const int bin = std::min(kBins - 1, static_cast<int>((b[k] + b[3 + k] - clo[k]) * scale));
      ++counts[bin];
      growBox(boxes[bin], b);
    }
    float right[kBins][6];  // right[j]: bins j.. together
    uint32_t rightCount[kBins];
    emptyBox(right[kBins - 1]);
    growBox(right[kBins - 1], boxes[kBins - 1]);
    rightCount[kBins - 1] = counts[kBins - 1];
    for (int j = kBins - 2; j >= 0; --j) {
      std::copy(right[j + 1], right[j + 1] + 6, right[j]);
      growBox(right[j], boxes[j]);
      rightCount[j] = rightCount[j + 1] + counts[j];
    }
    float left[6];
    emptyBox(left);
    uint32_t leftCount = 0;
    for (int j = 0; j + 1 < kBins; ++j) {  // bins 0..j left
      growBox(left, boxes[j]);
      leftCount += counts[j];
      if (leftCount == 0 || rightCount[j + 1] == 0) continue;
      const float cost = static_cast<float>(leftCount) * halfArea(left) +
                         static_cast<float>(rightCount[j + 1]) * halfArea(right[j + 1]);
      if (cost < bestCost) bestCost = cost, bestAxis = k, bestBin = j;
    }
  }
  if (bestAxis >= 0) {
    const int k = bestAxis;
    const float scale = kBins / (chi[k] - clo[k]);
    const auto mid = std::partition(cells.begin() + begin, cells.begin() + end, [&](const BuildCell& c) {
      const float* b = c.box;
      return std::min(kBins - 1, static_cast<int>((b[k] + b[3 + k] - clo[k]) * scale)) <= bestBin;
    });
    const auto m = static_cast<uint32_t>(mid - cells.begin());
    if (m > begin && m < end) return m;
  }
  return begin + (end - begin) / 2;
}

// The wide tree (PairWalkNode4) built top down over the cells' boxes: a node of up to four cells has
// them as its children; a larger node's cells are split in two (splitCells), each half of two or more
// than four cells split once more, its up to four groups its children (a group of one cell: that cell). Its boxes are the unions of its cells' boxes: a node's box covers
// every cell below it, as the binary tree's.
void buildWide(PairWalkTree& t, uint32_t cellCount) {
  std::vector<BuildCell> cells(cellCount);
  for (uint32_t c = 0; c < cellCount; ++c) {
    std::copy(&t.cells[6 * static_cast<size_t>(c)], &t.cells[6 * static_cast<size_t>(c)] + 6, cells[c].box);
    cells[c].id = c;
  }
  t.wide.assign(1, PairWalkNode4{});
  struct Task {
    uint32_t begin, end, node;
  };
  std::vector<Task> todo = {{0, cellCount, 0}};
  while (!todo.empty()) {
    const Task task = todo.back();
    todo.pop_back();
    uint32_t groups[5] = {task.begin, task.end, 0, 0, 0};
    uint32_t n = 1;
    // A half is split once more unless it has one, three or four cells (kept whole: one child, a node
    // of three or four cells, its cells then its children), so that few nodes hold only two.
    const auto splitAgain = [](uint32_t count) { return count == 2 || count > 4; };
    if (task.end - task.begin <= 4) {  // every cell a child (the root of one cell too)
      n = task.end - task.begin;
      for (uint32_t k = 0; k <= n; ++k) groups[k] = task.begin + k;
    } else {
      const uint32_t m = splitCells(cells, task.begin, task.end);
      uint32_t g[5];
      uint32_t k = 0;
      g[k++] = task.begin;
      if (splitAgain(m - task.begin)) g[k++] = splitCells(cells, task.begin, m);
      g[k++] = m;
      if (splitAgain(task.end - m)) g[k++] = splitCells(cells, m, task.end);
      g[k] = task.end;
      n = k;
      std::copy(g, g + k + 1, groups);
    }
    PairWalkNode4 node{};
    node.count = n;
    for (uint32_t i = 0; i < 4; ++i) {
      float box[6] = {0, 0, 0, 0, 0, 0};
      node.child[i] = kBvhNone;
      if (i < n) {
        emptyBox(box);
        for (uint32_t j = groups[i]; j < groups[i + 1]; ++j) growBox(box, cells[j].box);
        if (groups[i + 1] - groups[i] == 1) {
          node.child[i] = kBvhLeafBit | cells[groups[i]].id;
        } else {
          node.child[i] = static_cast<uint32_t>(t.wide.size());
          todo.push_back({groups[i], groups[i + 1], node.child[i]});
          t.wide.emplace_back();
        }
      }
      for (int k = 0; k < 3; ++k) {
        node.lo[k][i] = box[k];
        node.hi[k][i] = box[3 + k];
      }
    }
    t.wide[task.node] = node;
  }
}

}  // namespace

PairWalkTree pairWalkLayout(std::span<const BvhNode> nodes, std::span<const Aabb> boxes,
                            std::span<const uint32_t> ids, uint32_t corners) {
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
  if (!t.nodes.empty()) buildWide(t, static_cast<uint32_t>(boxes.size()));
  if (!ids.empty() && !t.nodes.empty()) {
    t.corners = corners;
    t.cellIds.assign(4 * boxes.size(), kBvhNone);
    for (size_t c = 0; c < boxes.size(); ++c) {
      for (uint32_t k = 0; k < corners; ++k) t.cellIds[4 * c + k] = ids[corners * c + k];
    }
    t.wideIds.assign(16 * t.wide.size(), 0u);
    for (size_t n = 0; n < t.wide.size(); ++n) {
      for (uint32_t i = 0; i < t.wide[n].count; ++i) {
        const uint32_t ref = t.wide[n].child[i];
        if ((ref & kBvhLeafBit) == 0) continue;
        std::copy_n(&t.cellIds[4 * static_cast<size_t>(ref & ~kBvhLeafBit)], 4, &t.wideIds[16 * n + 4 * i]);
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

namespace {

// A box of the self walk (lo xyz, hi xyz) and its reference.
struct SelfBox {
  float lo[3], hi[3];
  uint32_t ref;
};

// Whether the self walk keeps the pair of a and b (two different subtrees of one tree): two cells by
// the lower cell's widening, else either box widened (the lower cell of a pair below them may lie on
// either side; a node's widened box covers each of its cells' widened boxes).
inline bool selfOverlaps(const SelfBox& a, const SelfBox& b, float thickness, float relative) {
  const auto widenedOverlaps = [thickness, relative](const SelfBox& w, const SelfBox& e) {
    float lo[3], hi[3];
    const float box[6] = {w.lo[0], w.lo[1], w.lo[2], w.hi[0], w.hi[1], w.hi[2]};
    widened(box, thickness, lo, hi, relative);
    return overlaps(lo, hi, e.lo, e.hi);
  };
  if ((a.ref & b.ref & kBvhLeafBit) != 0) {
    return a.ref < b.ref ? widenedOverlaps(a, b) : widenedOverlaps(b, a);
  }
  return widenedOverlaps(a, b) || widenedOverlaps(b, a);
}

// A kept pair of the self walk: two cells a result (lower cell first; with t's vertex numbers, unless
// they share a vertex), else a pair to walk.
inline void foundSelf(const PairWalkTree& t, uint32_t a, uint32_t b, std::vector<uint64_t>& stack,
                      std::vector<uint64_t>& pairs) {
  if ((a & b & kBvhLeafBit) != 0) {
    uint32_t ca = a & ~kBvhLeafBit, cb = b & ~kBvhLeafBit;
    if (cb < ca) std::swap(ca, cb);
    if (!t.cellIds.empty() && !pairWalkSelfPair(ca, &t.cellIds[4 * static_cast<size_t>(ca)], cb,
                                                &t.cellIds[4 * static_cast<size_t>(cb)], t.corners)) {
      return;
    }
    pairs.push_back(key(ca, cb));
  } else {
    stack.push_back(key(a, b));
  }
}

}  // namespace

void pairWalkSelf(const PairWalkTree& t, float thickness, std::vector<uint64_t>& stack,
                  std::vector<uint64_t>& pairs, float relative) {
  if (t.empty()) return;
  // Entries: (n, n) a node against itself, else two different subtrees (a node, or a cell against a node).
  stack.assign(1, key(0, 0));
  const auto cellBox = [&](uint32_t ref) {
    SelfBox s{};
    const float* c = &t.cells[6 * static_cast<size_t>(ref & ~kBvhLeafBit)];
    for (int k = 0; k < 3; ++k) s.lo[k] = c[k], s.hi[k] = c[3 + k];
    s.ref = ref;
    return s;
  };
  // The sides of a pair entry: a node's children, or a cell itself.
  const auto side = [&](uint32_t ref, SelfBox out[2]) {
    if ((ref & kBvhLeafBit) != 0) {
      out[0] = cellBox(ref);
      return 1;
    }
    const PairWalkNode& n = t.nodes[ref];
    int count = 0;
    for (int c = 0; c < 2; ++c) {
      if (n.child[c] == kBvhNone) continue;
      childBox(n, c, out[count].lo, out[count].hi);
      out[count++].ref = n.child[c];
    }
    return count;
  };
  while (!stack.empty()) {
    const uint64_t top = stack.back();
    stack.pop_back();
    const uint32_t a = static_cast<uint32_t>(top >> 32), b = static_cast<uint32_t>(top);
    SelfBox sa[2], sb[2];
    const int na = side(a, sa);
    if (a == b) {
      // A node against itself: each child node against itself, the two children against each other.
      for (int i = 0; i < na; ++i) {
        if ((sa[i].ref & kBvhLeafBit) == 0) stack.push_back(key(sa[i].ref, sa[i].ref));
      }
      if (na == 2 && selfOverlaps(sa[0], sa[1], thickness, relative)) {
        foundSelf(t, sa[0].ref, sa[1].ref, stack, pairs);
      }
      continue;
    }
    // Two different subtrees: a node against a node (both sides' children), or a cell against a
    // node's children.
    const bool aCell = (a & kBvhLeafBit) != 0, bCell = (b & kBvhLeafBit) != 0;  // not both
    int nb;
    if (aCell || bCell) {
      nb = side(aCell ? b : a, sb);
      sa[0] = cellBox(aCell ? a : b);
      for (int j = 0; j < nb; ++j) {
        if (selfOverlaps(sa[0], sb[j], thickness, relative)) foundSelf(t, sa[0].ref, sb[j].ref, stack, pairs);
      }
      continue;
    }
    nb = side(b, sb);
    for (int j = 0; j < nb; ++j) {
      for (int i = 0; i < na; ++i) {
        if (selfOverlaps(sa[i], sb[j], thickness, relative)) foundSelf(t, sa[i].ref, sb[j].ref, stack, pairs);
      }
    }
  }
}

}  // namespace vkc::cpu
