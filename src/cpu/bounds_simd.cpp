// Highway SIMD kernel of the bounds stage, compiled once per target and chosen at run time.
// Particles are xyzw AoS; with a vector width that is a multiple of 4 floats, lane i always holds
// component i % 4, so a flat min/max over the keys and a final fold by lane % 4 gives the box.
#include "cpu/bounds.h"

#ifdef VKC_HAVE_SIMD
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/bounds_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

bool BoundsKeys(const float* xyzw, size_t count, uint32_t* lo, uint32_t* hi) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::RebindToSigned<decltype(df)> di;
  const size_t lanes = hn::Lanes(df);
  if (lanes % 4 != 0) return false;
  const size_t n = count * 4;
  auto vlo = hn::Set(du, ~0u);
  auto vhi = hn::Zero(du);
  const auto signBit = hn::Set(du, 0x80000000u);
  // key = bits ^ (negative ? 0xFFFFFFFF : 0x80000000), as in shaders/shared/float_order.h
  const auto keyAt = [&](size_t i) HWY_ATTR {
    const auto bits = hn::BitCast(di, hn::LoadU(df, xyzw + i));
    return hn::Xor(hn::BitCast(du, bits), hn::Or(hn::BitCast(du, hn::ShiftRight<31>(bits)), signBit));
  };
  size_t i = 0;
  // Four vectors a step into two pairs of running bounds (min and max are exact: any grouping gives
  // the same keys). At 4 lanes this loop is a tenth of a discrete shape pass on a 4 096-particle
  // drape; one pair of bounds a vector was 3-4% slower there.
  auto vlo1 = vlo, vhi1 = vhi;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    const auto k0 = keyAt(i), k1 = keyAt(i + lanes), k2 = keyAt(i + 2 * lanes), k3 = keyAt(i + 3 * lanes);
    vlo = hn::Min(vlo, hn::Min(k0, k1));
    vhi = hn::Max(vhi, hn::Max(k0, k1));
    vlo1 = hn::Min(vlo1, hn::Min(k2, k3));
    vhi1 = hn::Max(vhi1, hn::Max(k2, k3));
  }
  for (; i + lanes <= n; i += lanes) {
    const auto key = keyAt(i);
    vlo = hn::Min(vlo, key);
    vhi = hn::Max(vhi, key);
  }
  vlo = hn::Min(vlo, vlo1);
  vhi = hn::Max(vhi, vhi1);
  HWY_ALIGN uint32_t los[hn::MaxLanes(du)];
  HWY_ALIGN uint32_t his[hn::MaxLanes(du)];
  hn::Store(vlo, du, los);
  hn::Store(vhi, du, his);
  for (size_t l = 0; l < lanes; ++l) {
    lo[l & 3] = los[l] < lo[l & 3] ? los[l] : lo[l & 3];
    hi[l & 3] = his[l] > hi[l & 3] ? his[l] : hi[l & 3];
  }
  boundsKeysScalar(xyzw + i, (n - i) / 4, lo, hi);  // i is a multiple of 4: whole particles remain
  return true;
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vkc::cpu {
HWY_EXPORT(BoundsKeys);
HWY_EXPORT(TargetName);

void boundsKeysSimd(const float* xyzw, size_t count, uint32_t lo[4], uint32_t hi[4]) {
  if (!HWY_DYNAMIC_DISPATCH(BoundsKeys)(xyzw, count, lo, hi)) boundsKeysScalar(xyzw, count, lo, hi);
}
const char* simdTargetName() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }
}  // namespace vkc::cpu
#endif

#else  // scalar-only build

namespace vkc::cpu {
void boundsKeysSimd(const float* xyzw, size_t count, uint32_t lo[4], uint32_t hi[4]) {
  boundsKeysScalar(xyzw, count, lo, hi);
}
const char* simdTargetName() { return "none (VKC_SIMD=OFF)"; }
}  // namespace vkc::cpu
#endif
