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

bool PairWalk(const PairWalkTree& x, const PairWalkTree& y, float thickness, std::vector<uint64_t>& stack,
              std::vector<uint64_t>& pairs) {
  const hn::CappedTag<float, 16> d;
  const size_t lanes = hn::Lanes(d);
  if (lanes < 4 || x.wide.empty() || y.wide.empty()) return false;
  const size_t chunks = 16 / lanes;  // vectors per step: 1, 2 or 4
  // X's child of lane l in chunk c: (c * lanes + l) / 4, from a node's four boxes duplicated into every
  // 128-bit block (LoadDup128), where Y's child l % 4 already sits.
  HWY_ALIGN int32_t xIdx[16];
  for (int l = 0; l < 16; ++l) xIdx[l] = l >> 2;
  // Lanes of the child pairs that exist with nx children of X and ny of Y: valid[nx - 1][ny - 1].
  uint32_t valid[4][4];
  for (uint32_t nx = 1; nx <= 4; ++nx) {
    for (uint32_t ny = 1; ny <= 4; ++ny) {
      uint32_t m = 0;
      for (uint32_t l = 0; l < 16; ++l) m |= ((l >> 2) < nx && (l & 3) < ny) ? 1u << l : 0u;
      valid[nx - 1][ny - 1] = m;
    }
  }
  const auto key = [](uint32_t a, uint32_t b) { return (static_cast<uint64_t>(a) << 32) | b; };
  const auto t = hn::Set(d, thickness), eps = hn::Set(d, 1e-5f);
  stack.assign(1, key(0, 0));  // the wide roots
  while (!stack.empty()) {
    const uint64_t top = stack.back();
    stack.pop_back();
    const uint32_t a = static_cast<uint32_t>(top >> 32), b = static_cast<uint32_t>(top);
    const bool aCell = (a & kBvhLeafBit) != 0, bCell = (b & kBvhLeafBit) != 0;  // not both
    // Y's side, the same in every chunk.
    decltype(hn::Zero(d)) yl[3], yh[3];
    uint32_t ny = 1;
    const uint32_t* yRefs = &b;
    if (bCell) {
      const float* c = &y.cells[6 * static_cast<size_t>(b & ~kBvhLeafBit)];
      for (int k = 0; k < 3; ++k) yl[k] = hn::Set(d, c[k]), yh[k] = hn::Set(d, c[3 + k]);
    } else {
      const PairWalkNode4& n = y.wide[b];
      for (int k = 0; k < 3; ++k) yl[k] = hn::LoadDup128(d, n.lo[k]), yh[k] = hn::LoadDup128(d, n.hi[k]);
      ny = n.count;
      yRefs = n.child;
    }
    uint32_t nx = 1;
    const uint32_t* xRefs = &a;
    const PairWalkNode4* xn = nullptr;
    if (!aCell) {
      xn = &x.wide[a];
      nx = xn->count;
      xRefs = xn->child;
    }
    uint32_t keep = 0;
    for (size_t c = 0; c < chunks && c * lanes < 4 * nx; ++c) {
      decltype(hn::Zero(d)) xl[3], xh[3];
      if (aCell) {
        const float* cb = &x.cells[6 * static_cast<size_t>(a & ~kBvhLeafBit)];
        for (int k = 0; k < 3; ++k) xl[k] = hn::Set(d, cb[k]), xh[k] = hn::Set(d, cb[3 + k]);
      } else {
        const auto idx = hn::SetTableIndices(d, xIdx + c * lanes);
        for (int k = 0; k < 3; ++k) {
          xl[k] = hn::TableLookupLanes(hn::LoadDup128(d, xn->lo[k]), idx);
          xh[k] = hn::TableLookupLanes(hn::LoadDup128(d, xn->hi[k]), idx);
        }
      }
      // X's reach per lane (pairWalkReach), then apart where one box ends before the other starts.
      auto scale = t;
      for (int k = 0; k < 3; ++k) {
        scale = hn::Max(scale, hn::Abs(xl[k]));
        scale = hn::Max(scale, hn::Abs(xh[k]));
      }
      const auto r = hn::Add(t, hn::Mul(eps, scale));
      auto apart = hn::Lt(hn::Add(xh[0], r), yl[0]);
      apart = hn::Or(apart, hn::Lt(yh[0], hn::Sub(xl[0], r)));
      for (int k = 1; k < 3; ++k) {
        apart = hn::Or(apart, hn::Lt(hn::Add(xh[k], r), yl[k]));
        apart = hn::Or(apart, hn::Lt(yh[k], hn::Sub(xl[k], r)));
      }
      uint8_t bits[8] = {};
      hn::StoreMaskBits(d, hn::Not(apart), bits);
      const uint32_t m = static_cast<uint32_t>(bits[0]) | (static_cast<uint32_t>(bits[1]) << 8);
      keep |= (m & ((lanes == 16 ? 0x10000u : 1u << lanes) - 1u)) << (c * lanes);
    }
    keep &= valid[nx - 1][ny - 1];
    while (keep != 0) {
      const uint32_t l = static_cast<uint32_t>(__builtin_ctz(keep));
      keep &= keep - 1u;
      const uint32_t xr = xRefs[l >> 2], yr = yRefs[l & 3];
      if ((xr & yr & kBvhLeafBit) != 0) {  // two cells: a result
        pairs.push_back(key(xr & ~kBvhLeafBit, yr & ~kBvhLeafBit));
      } else {
        stack.push_back(key(xr, yr));
      }
    }
  }
  return true;
}

}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vkc::cpu {
HWY_EXPORT(PairWalk);

void pairWalkSimd(const PairWalkTree& x, const PairWalkTree& y, float thickness, std::vector<uint64_t>& stack,
                  std::vector<uint64_t>& pairs) {
  if (x.empty() || y.empty()) return;
  if (!HWY_DYNAMIC_DISPATCH(PairWalk)(x, y, thickness, stack, pairs)) pairWalk(x, y, thickness, stack, pairs);
}
}  // namespace vkc::cpu
#endif

#else  // scalar-only build

namespace vkc::cpu {
void pairWalkSimd(const PairWalkTree& x, const PairWalkTree& y, float thickness, std::vector<uint64_t>& stack,
                  std::vector<uint64_t>& pairs) {
  pairWalk(x, y, thickness, stack, pairs);
}
}  // namespace vkc::cpu
#endif
