// The CPU SIMD backend's gather of self collision (Highway, runtime dispatch). It finds the same
// column ranges as the shader's binary searches with nine running pointers (a column's key range only
// moves forward as the slot's key grows, see below), tests the candidates of a range several at a time,
// and applies each neighbour's correction with the shared scalar function in the shader's order: the
// results are bitwise equal to the scalar backend's.
#include "cpu/self_collision.h"

#include <algorithm>
#include <cstring>

#ifdef VKC_HAVE_SIMD
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/self_collision_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// pairBitsScalar with vectors: candidates of [a, z) lanes at a time (SoA arrays padded with NaN, so
// loads past z read NaN, whose comparisons are false; lanes past z are masked off as well).
uint64_t PairBits(const SelfSorted& s, uint32_t k, uint32_t a, uint32_t z, float d2, bool useRest) {
  const hn::ScalableTag<float> df;
  const size_t N = hn::Lanes(df);
  const auto px = hn::Set(df, s.x[k]), py = hn::Set(df, s.y[k]), pz = hn::Set(df, s.z[k]);
  const auto vd2 = hn::Set(df, d2);
  uint64_t bits = 0;
  for (uint32_t i = a; i < z; i += static_cast<uint32_t>(N)) {
    const auto dx = hn::Sub(hn::LoadU(df, s.x.data() + i), px);
    const auto dy = hn::Sub(hn::LoadU(df, s.y.data() + i), py);
    const auto dz = hn::Sub(hn::LoadU(df, s.z.data() + i), pz);
    // dist2 = dx*dx + dy*dy + dz*dz, left to right, without fusing (as selfIsPair).
    const auto dist2 = hn::Add(hn::Add(hn::Mul(dx, dx), hn::Mul(dy, dy)), hn::Mul(dz, dz));
    auto mask = hn::And(hn::Lt(dist2, vd2), hn::FirstN(df, z - i));
    if (useRest) {
      const auto rx = hn::Sub(hn::LoadU(df, s.rx.data() + i), hn::Set(df, s.rx[k]));
      const auto ry = hn::Sub(hn::LoadU(df, s.ry.data() + i), hn::Set(df, s.ry[k]));
      const auto rz = hn::Sub(hn::LoadU(df, s.rz.data() + i), hn::Set(df, s.rz[k]));
      const auto rest2 = hn::Add(hn::Add(hn::Mul(rx, rx), hn::Mul(ry, ry)), hn::Mul(rz, rz));
      mask = hn::AndNot(hn::Lt(rest2, vd2), mask);
    }
    uint8_t maskBytes[8] = {};
    hn::StoreMaskBits(df, mask, maskBytes);
    uint64_t m = 0;
    std::memcpy(&m, maskBytes, (N + 7) / 8 < 8 ? (N + 7) / 8 : 8);
    if (N < 64) m &= (uint64_t{1} << N) - 1;
    bits |= m << (i - a);
  }
  return bits;
}

size_t Lanes() { return hn::Lanes(hn::ScalableTag<float>()); }

}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vkc::cpu {
HWY_EXPORT(PairBits);
HWY_EXPORT(Lanes);
}  // namespace vkc::cpu
#endif
#endif  // VKC_HAVE_SIMD

#if !defined(VKC_HAVE_SIMD) || HWY_ONCE
namespace vkc::cpu {
namespace {

// Applies the neighbours of slot k whose bits are set in `bits` (candidates base + b), in order.
inline void applyBits(const SelfSorted& s, uint32_t k, uint32_t base, uint64_t bits, const gpu::SelfGrid& grid,
                      float d, float stiffness, uint32_t& count, gpu::vec3& acc,
                      std::vector<std::array<uint32_t, 2>>* pairs, const SelfPairFilter* filter) {
  while (bits != 0) {
    const uint32_t m = base + static_cast<uint32_t>(__builtin_ctzll(bits));
    bits &= bits - 1;
    if (m == k) continue;
    if (filter != nullptr && (filter->cloth[m] == filter->cloth[k] || (filter->group[k] & filter->mask[m]) == 0 ||
                              (filter->group[m] & filter->mask[k]) == 0)) {
      continue;
    }
    acc += gpu::selfPairCorrection(s.pos[k], s.pos[m], k, m, grid.axes.x, d, stiffness);
    ++count;
    if (pairs != nullptr) pairs->push_back({k, m});
  }
}

// Candidates [a, z) of slot k: bit i set where candidate a + i is a pair (z - a <= 64). The same
// arithmetic as selfIsPair (no fused multiply-add), scalar.
uint64_t pairBitsScalar(const SelfSorted& s, uint32_t k, uint32_t a, uint32_t z, float d2, bool useRest) {
  uint64_t bits = 0;
  const gpu::vec4 pi = s.pos[k];
  const gpu::vec4 ri = useRest ? s.rest[k] : gpu::vec4(0.0f);
  for (uint32_t m = a; m < z; ++m) {
    if (gpu::selfIsPair(pi, s.pos[m], ri, useRest ? s.rest[m] : gpu::vec4(0.0f), d2, useRest)) {
      bits |= uint64_t{1} << (m - a);
    }
  }
  return bits;
}

}  // namespace


void selfSweepSimd(const SelfSorted& s, uint32_t begin, uint32_t end, const gpu::SelfGrid& grid, float d,
                   float stiffness, bool useRest, uint32_t* counts, gpu::vec3* sums,
                   std::vector<std::array<uint32_t, 2>>* pairs, const SelfPairFilter* filter) {
#ifdef VKC_HAVE_SIMD
  const auto pairBits = HWY_DYNAMIC_DISPATCH(PairBits);
  // Vectors of up to 32 lanes fit the 64-bit chunks below (and the NaN padding).
  const bool vector = HWY_DYNAMIC_DISPATCH(Lanes)() <= 32;
#else
  const bool vector = false;
  uint64_t (*pairBits)(const SelfSorted&, uint32_t, uint32_t, uint32_t, float, bool) = nullptr;
#endif
  const float d2 = d * d;
  const uint32_t* keys = s.keys.data();
  // Column c's range [lo, hi] (selfColumnRange) is key + const - min(reach, sweep) .. key + const +
  // min(reach, 0xFFFF - sweep): both bounds are non-decreasing in the key, so over the sorted slots the
  // first slot >= lo and the first slot > hi only move forward.
  uint32_t first[9], last[9];
  for (int c = 0; c < 9; ++c) first[c] = last[c] = begin;
  for (uint32_t k = begin; k < end; ++k) {
    const uint32_t key = keys[k];
    uint32_t count = 0;
    gpu::vec3 acc(0.0f);
    for (uint32_t c = 0; c < 9; ++c) {
      const gpu::uvec2 r = gpu::selfColumnRange(key, c, grid.axes.w);
      uint32_t a = first[c];
      while (a < end && keys[a] < r.x) ++a;
      first[c] = a;
      uint32_t z = std::max(last[c], a);
      while (z < end && keys[z] <= r.y) ++z;
      last[c] = z;
      for (uint32_t base = a; base < z; base += 64) {
        const uint32_t top = std::min(z, base + 64);
        const uint64_t bits = vector && top - base >= 4 ? pairBits(s, k, base, top, d2, useRest)
                                                        : pairBitsScalar(s, k, base, top, d2, useRest);
        applyBits(s, k, base, bits, grid, d, stiffness, count, acc, pairs, filter);
      }
    }
    counts[k] = count;
    sums[k] = acc;
  }
}

}  // namespace vkc::cpu
#endif
