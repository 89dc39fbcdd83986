// Highway SIMD twin of the tandem walk (src/cpu/mesh_pair_walk.h), compiled once per target and
// chosen at run time: each step tests its child pairs in four lanes at once (X's side in lanes 0, 0,
// 1, 1 against Y's 0, 1, 0, 1; a cell fills all four lanes of its side), widening X's boxes in the
// lanes with the scalar walk's operations in the same order (pairWalkReach: the same values), so
// both walks find the same cell pairs. Targets with fewer than four float lanes run the scalar walk.
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
  const hn::CappedTag<float, 4> d;
  if (hn::Lanes(d) != 4) return false;
  const auto key = [](uint32_t a, uint32_t b) { return (static_cast<uint64_t>(a) << 32) | b; };
  const auto t = hn::Set(d, thickness), eps = hn::Set(d, 1e-5f);
  HWY_ALIGN float xl[3][4], xh[3][4], yl[3][4], yh[3][4];
  uint32_t xr[4], yr[4];
  stack.assign(1, key(0, 0));
  while (!stack.empty()) {
    const uint64_t top = stack.back();
    stack.pop_back();
    const uint32_t a = static_cast<uint32_t>(top >> 32), b = static_cast<uint32_t>(top);
    const bool aCell = (a & kBvhLeafBit) != 0, bCell = (b & kBvhLeafBit) != 0;  // not both: see below
    if (aCell) {
      const float* c = &x.cells[6 * static_cast<size_t>(a & ~kBvhLeafBit)];
      for (int k = 0; k < 3; ++k) {
        for (int l = 0; l < 4; ++l) xl[k][l] = c[k], xh[k][l] = c[3 + k];
      }
      for (int l = 0; l < 4; ++l) xr[l] = a;
    } else {
      const PairWalkNode& n = x.nodes[a];
      for (int k = 0; k < 3; ++k) {
        for (int l = 0; l < 4; ++l) xl[k][l] = n.lo[k][l >> 1], xh[k][l] = n.hi[k][l >> 1];
      }
      for (int l = 0; l < 4; ++l) xr[l] = n.child[l >> 1];
    }
    if (bCell) {
      const float* c = &y.cells[6 * static_cast<size_t>(b & ~kBvhLeafBit)];
      for (int k = 0; k < 3; ++k) {
        for (int l = 0; l < 4; ++l) yl[k][l] = c[k], yh[k][l] = c[3 + k];
      }
      for (int l = 0; l < 4; ++l) yr[l] = b;
    } else {
      const PairWalkNode& n = y.nodes[b];
      for (int k = 0; k < 3; ++k) {
        for (int l = 0; l < 4; ++l) yl[k][l] = n.lo[k][l & 1], yh[k][l] = n.hi[k][l & 1];
      }
      for (int l = 0; l < 4; ++l) yr[l] = n.child[l & 1];
    }
    // X's reach per lane (pairWalkReach), then apart where one box ends before the other starts.
    auto scale = t;
    for (int k = 0; k < 3; ++k) {
      scale = hn::Max(scale, hn::Abs(hn::Load(d, xl[k])));
      scale = hn::Max(scale, hn::Abs(hn::Load(d, xh[k])));
    }
    const auto r = hn::Add(t, hn::Mul(eps, scale));
    auto apart = hn::Lt(hn::Add(hn::Load(d, xh[0]), r), hn::Load(d, yl[0]));
    apart = hn::Or(apart, hn::Lt(hn::Load(d, yh[0]), hn::Sub(hn::Load(d, xl[0]), r)));
    for (int k = 1; k < 3; ++k) {
      apart = hn::Or(apart, hn::Lt(hn::Add(hn::Load(d, xh[k]), r), hn::Load(d, yl[k])));
      apart = hn::Or(apart, hn::Lt(hn::Load(d, yh[k]), hn::Sub(hn::Load(d, xl[k]), r)));
    }
    uint8_t bits[8] = {};
    hn::StoreMaskBits(d, hn::Not(apart), bits);
    // The distinct lanes: a cell's side repeats itself (X a cell: lanes 0, 1; Y a cell: lanes 0, 2).
    const unsigned keep = bits[0] & (aCell ? 0x3u : (bCell ? 0x5u : 0xFu));
    for (int l = 0; l < 4; ++l) {
      if (!((keep >> l) & 1u) || xr[l] == kBvhNone || yr[l] == kBvhNone) continue;
      if ((xr[l] & yr[l] & kBvhLeafBit) != 0) {  // two cells: a result
        pairs.push_back(key(xr[l] & ~kBvhLeafBit, yr[l] & ~kBvhLeafBit));
      } else {
        stack.push_back(key(xr[l], yr[l]));
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
