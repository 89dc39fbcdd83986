// Highway SIMD twin of the tandem walk (src/cpu/mesh_pair_walk.h), compiled once per target and
// chosen at run time: a tandem walk of the trees collapsed to four children a node (PairWalkNode4),
// each step testing up to 4 x 4 child pairs in float lanes (lane l: X's child l / 4 against Y's child
// l % 4; 16, 8 or 4 lanes a vector; a cell stands alone on its side), widening X's boxes in the lanes
// with the scalar walk's operations in the same order (pairWalkReach: the same values). A wide node's
// children are nodes or cells of the binary tree, so the walk meets each pair of cells whose boxes
// overlap exactly once, as the scalar walk. Targets with fewer than four float lanes run the scalar walk.
#include "cpu/mesh_pair_walk.h"

#ifdef VKC_HAVE_SIMD
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/mesh_pair_walk_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A stack entry's side: a wide node's index in bits 0..27 and, in bits 28..31, the mask of its children
// taken (0: all).
constexpr uint32_t kWideMaskShift = 28;
constexpr uint32_t kWideIndexMask = (1u << kWideMaskShift) - 1u;

// kSelf: x and y are one tree (pairWalkSelf's walk): an entry (n, n) is a node against itself (its
// children's pairs above the diagonal, and each child node against itself), any other entry two
// different subtrees; a pair of children is kept when either box widened overlaps the other, a pair
// of cells by the lower cell's widening, the key lower cell first.
template <bool kSelf>
bool Walk(const PairWalkTree& x, const PairWalkTree& y, float thickness, std::vector<uint64_t>& stack,
          std::vector<uint64_t>& pairs, float relative = 1e-5f) {
  const hn::CappedTag<float, 16> d;
  const size_t lanes = hn::Lanes(d);
  if (lanes < 4 || x.wide.empty() || y.wide.empty() || x.wide.size() > kWideIndexMask ||
      y.wide.size() > kWideIndexMask) {
    return false;
  }
  const size_t chunks = 16 / lanes;  // vectors per step: 1, 2 or 4
  // X's child of lane l in chunk c: (c * lanes + l) / 4, from a node's four boxes duplicated into every
  // 128-bit block (LoadDup128), where Y's child l % 4 already sits.
  HWY_ALIGN int32_t xIdx[16];
  for (int l = 0; l < 16; ++l) xIdx[l] = l >> 2;
  // Lanes of X's children in mask m (rows) and of Y's (columns).
  uint32_t rows[16], cols[16];
  for (uint32_t m = 0; m < 16; ++m) {
    rows[m] = cols[m] = 0;
    for (uint32_t l = 0; l < 16; ++l) {
      rows[m] |= ((m >> (l >> 2)) & 1u) << l;
      cols[m] |= ((m >> (l & 3)) & 1u) << l;
    }
  }
  uint32_t upper = 0;  // lanes of X's child i against Y's child j > i (a node against itself)
  for (uint32_t l = 0; l < 16; ++l) upper |= static_cast<uint32_t>((l >> 2) < (l & 3)) << l;
  const auto key = [](uint32_t a, uint32_t b) { return (static_cast<uint64_t>(a) << 32) | b; };
  // A node about to be walked: both of its cache lines.
  const auto prefetch = [](const PairWalkNode4& n) {
    __builtin_prefetch(&n);
    __builtin_prefetch(reinterpret_cast<const char*>(&n) + 64);
  };
  const auto t = hn::Set(d, thickness), eps = hn::Set(d, relative);
  // Entries leave the stack into a ring of kAhead (their nodes requested then) and are walked kAhead
  // entries later: the nodes are scattered over the trees (2 x 112 bytes an entry), and an entry pushed
  // last is popped next, too soon for its prefetch. The keys do not depend on the walk's order.
  constexpr uint32_t kAhead = 8;
  uint64_t ring[kAhead];
  uint32_t ringFirst = 0, ringCount = 0;
  // A self walk over a layout with the cells' vertex numbers drops the pairs sharing a vertex.
  const bool selfIds = kSelf && !x.wideIds.empty();
  stack.assign(1, key(0, 0));  // the wide roots, every child
  while (true) {
    while (ringCount < kAhead && !stack.empty()) {
      const uint64_t next = stack.back();
      stack.pop_back();
      prefetch(x.wide[static_cast<uint32_t>(next >> 32) & kWideIndexMask]);
      prefetch(y.wide[static_cast<uint32_t>(next) & kWideIndexMask]);
      if (selfIds) {  // the children's vertex numbers, a line a node
        __builtin_prefetch(
            &x.wideIds[16 * static_cast<size_t>(static_cast<uint32_t>(next >> 32) & kWideIndexMask)]);
        __builtin_prefetch(
            &x.wideIds[16 * static_cast<size_t>(static_cast<uint32_t>(next) & kWideIndexMask)]);
      }
      ring[(ringFirst + ringCount++) % kAhead] = next;
    }
    if (ringCount == 0) break;
    const uint64_t top = ring[ringFirst];
    ringFirst = (ringFirst + 1) % kAhead, --ringCount;
    const uint32_t a = static_cast<uint32_t>(top >> 32), b = static_cast<uint32_t>(top);
    const PairWalkNode4& xn = x.wide[a & kWideIndexMask];
    const PairWalkNode4& yn = y.wide[b & kWideIndexMask];
    // The children taken on each side: those in the entry's mask (none: every child).
    const uint32_t xAll = (1u << xn.count) - 1u, yAll = (1u << yn.count) - 1u;
    const uint32_t xm = (a >> kWideMaskShift) != 0 ? (a >> kWideMaskShift) : xAll;
    const uint32_t ym = (b >> kWideMaskShift) != 0 ? (b >> kWideMaskShift) : yAll;
    using V = decltype(hn::Zero(d));
    // The reach per lane of boxes (lo, hi) (pairWalkReach, its operations in its order).
    const auto reach = [&](const V lo[3], const V hi[3]) {
      V scale = t;
      for (int k = 0; k < 3; ++k) {
        scale = hn::Max(scale, hn::Abs(lo[k]));
        scale = hn::Max(scale, hn::Abs(hi[k]));
      }
      return hn::Add(t, hn::Mul(eps, scale));
    };
    // Where box w widened by r and box e lie apart: one ends before the other starts.
    const auto apart = [](const V wl[3], const V wh[3], V r, const V el[3], const V eh[3]) {
      auto m = hn::Lt(hn::Add(wh[0], r), el[0]);
      m = hn::Or(m, hn::Lt(eh[0], hn::Sub(wl[0], r)));
      for (int k = 1; k < 3; ++k) {
        m = hn::Or(m, hn::Lt(hn::Add(wh[k], r), el[k]));
        m = hn::Or(m, hn::Lt(eh[k], hn::Sub(wl[k], r)));
      }
      return m;
    };
    V yl[3], yh[3];  // Y's side, the same in every chunk
    for (int k = 0; k < 3; ++k) yl[k] = hn::LoadDup128(d, yn.lo[k]), yh[k] = hn::LoadDup128(d, yn.hi[k]);
    // The reach of Y's children (a self walk's other direction), the same in every chunk.
    V ry = t;
    if constexpr (kSelf) ry = reach(yl, yh);
    uint32_t keep = 0, keepRev = 0;
    for (size_t c = 0; c < chunks; ++c) {
      if (((xm >> (c * lanes / 4)) & ((1u << (lanes / 4)) - 1u)) == 0) continue;  // no X child taken here
      const auto idx = hn::SetTableIndices(d, xIdx + c * lanes);
      V xl[3], xh[3];
      for (int k = 0; k < 3; ++k) {
        xl[k] = hn::TableLookupLanes(hn::LoadDup128(d, xn.lo[k]), idx);
        xh[k] = hn::TableLookupLanes(hn::LoadDup128(d, xn.hi[k]), idx);
      }
      const auto laneBits = [&](auto overlap) {
        uint8_t bits[8] = {};
        hn::StoreMaskBits(d, overlap, bits);
        const uint32_t m = static_cast<uint32_t>(bits[0]) | (static_cast<uint32_t>(bits[1]) << 8);
        return (m & ((lanes == 16 ? 0x10000u : 1u << lanes) - 1u)) << (c * lanes);
      };
      keep |= laneBits(hn::Not(apart(xl, xh, reach(xl, xh), yl, yh)));  // X's child widened against Y's
      if constexpr (kSelf) keepRev |= laneBits(hn::Not(apart(yl, yh, ry, xl, xh)));  // and the reverse
    }
    if constexpr (kSelf) {
      // Two cells by the lower one's widening, else either way; a node against itself: above the
      // diagonal only, and each child node against itself.
      uint32_t xCells = 0, yCells = 0;
      for (uint32_t i = 0; i < 4; ++i) {
        xCells |= static_cast<uint32_t>((xn.child[i] & kBvhLeafBit) != 0 && i < xn.count) << i;
        yCells |= static_cast<uint32_t>((yn.child[i] & kBvhLeafBit) != 0 && i < yn.count) << i;
      }
      const uint32_t cellPairs = rows[xCells] & cols[yCells];
      uint32_t lowerX = 0;  // cell pairs whose lower cell is X's
      for (uint32_t cp = cellPairs; cp != 0; cp &= cp - 1u) {
        const uint32_t l = static_cast<uint32_t>(__builtin_ctz(cp));
        lowerX |= static_cast<uint32_t>(xn.child[l >> 2] < yn.child[l & 3]) << l;
      }
      keep = (keep & (~cellPairs | lowerX)) | (keepRev & (~cellPairs | (cellPairs & ~lowerX)));
      if (a == b) {
        keep &= upper;
        for (uint32_t i = 0; i < xn.count; ++i) {
          if ((xn.child[i] & kBvhLeafBit) == 0) stack.push_back(key(xn.child[i], xn.child[i]));
        }
      }
    }
    keep &= rows[xm] & cols[ym];
    // Overlapping child pairs: two cells a result, two nodes a pair to walk; a cell of X against a
    // node of Y is walked as X's node restricted to its cells that overlap that node (one entry per
    // node of Y), and a node of X against cells of Y the same way.
    uint32_t cellsOfX[4] = {0, 0, 0, 0}, cellsOfY[4] = {0, 0, 0, 0};
    while (keep != 0) {
      const uint32_t l = static_cast<uint32_t>(__builtin_ctz(keep));
      keep &= keep - 1u;
      const uint32_t i = l >> 2, j = l & 3;
      const uint32_t xr = xn.child[i], yr = yn.child[j];
      const bool xCell = (xr & kBvhLeafBit) != 0, yCell = (yr & kBvhLeafBit) != 0;
      if (xCell && yCell) {
        const uint32_t cx = xr & ~kBvhLeafBit, cy = yr & ~kBvhLeafBit;
        if (!kSelf) {
          pairs.push_back(key(cx, cy));
        } else if (!selfIds) {
          pairs.push_back(cx < cy ? key(cx, cy) : key(cy, cx));
        } else {
          const uint32_t* ix = &x.wideIds[16 * static_cast<size_t>(a & kWideIndexMask) + 4 * i];
          const uint32_t* iy = &x.wideIds[16 * static_cast<size_t>(b & kWideIndexMask) + 4 * j];
          if (cx < cy ? pairWalkSelfPair(cx, ix, cy, iy, x.corners)
                      : pairWalkSelfPair(cy, iy, cx, ix, x.corners)) {
            pairs.push_back(cx < cy ? key(cx, cy) : key(cy, cx));
          }
        }
      } else if (xCell) {
        cellsOfX[j] |= 1u << i;
      } else if (yCell) {
        cellsOfY[i] |= 1u << j;
      } else {
        stack.push_back(key(xr, yr));
      }
    }
    for (uint32_t j = 0; j < 4; ++j) {
      if (cellsOfX[j] == 0) continue;
      stack.push_back(key((a & kWideIndexMask) | (cellsOfX[j] << kWideMaskShift), yn.child[j]));
    }
    for (uint32_t i = 0; i < 4; ++i) {
      if (cellsOfY[i] == 0) continue;
      stack.push_back(key(xn.child[i], (b & kWideIndexMask) | (cellsOfY[i] << kWideMaskShift)));
    }
  }
  return true;
}

bool PairWalk(const PairWalkTree& x, const PairWalkTree& y, float thickness, std::vector<uint64_t>& stack,
              std::vector<uint64_t>& pairs) {
  return Walk<false>(x, y, thickness, stack, pairs);
}

bool PairWalkSelf(const PairWalkTree& t, float thickness, std::vector<uint64_t>& stack,
                  std::vector<uint64_t>& pairs, float relative) {
  return Walk<true>(t, t, thickness, stack, pairs, relative);
}

}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vkc::cpu {
HWY_EXPORT(PairWalk);
HWY_EXPORT(PairWalkSelf);

void pairWalkSimd(const PairWalkTree& x, const PairWalkTree& y, float thickness, std::vector<uint64_t>& stack,
                  std::vector<uint64_t>& pairs) {
  if (x.empty() || y.empty()) return;
  if (!HWY_DYNAMIC_DISPATCH(PairWalk)(x, y, thickness, stack, pairs)) pairWalk(x, y, thickness, stack, pairs);
}

void pairWalkSelfSimd(const PairWalkTree& t, float thickness, std::vector<uint64_t>& stack,
                      std::vector<uint64_t>& pairs, float relative) {
  if (t.empty()) return;
  if (!HWY_DYNAMIC_DISPATCH(PairWalkSelf)(t, thickness, stack, pairs, relative)) {
    pairWalkSelf(t, thickness, stack, pairs, relative);
  }
}
}  // namespace vkc::cpu
#endif

#else  // scalar-only build

namespace vkc::cpu {
void pairWalkSimd(const PairWalkTree& x, const PairWalkTree& y, float thickness, std::vector<uint64_t>& stack,
                  std::vector<uint64_t>& pairs) {
  pairWalk(x, y, thickness, stack, pairs);
}
void pairWalkSelfSimd(const PairWalkTree& t, float thickness, std::vector<uint64_t>& stack,
                      std::vector<uint64_t>& pairs, float relative) {
  pairWalkSelf(t, thickness, stack, pairs, relative);
}
}  // namespace vkc::cpu
#endif
