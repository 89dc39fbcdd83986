// Highway helpers for the SIMD twins: lanes of floats and of 3-vectors (SoA), with GLM's operation
// order (dot, cross, mix, min, max, abs), so that a SIMD twin written with them computes what the
// shared scalar code computes, bit for bit. Per-target header: included by a *_simd.cpp file after
// <hwy/highway.h>, once per Highway target (foreach_target), outside its own namespaces.
#if defined(VKC_CPU_SIMD_VEC3_H_) == defined(HWY_TARGET_TOGGLE)  // NOLINT
#ifdef VKC_CPU_SIMD_VEC3_H_
#undef VKC_CPU_SIMD_VEC3_H_
#else
#define VKC_CPU_SIMD_VEC3_H_
#endif

#include <hwy/highway.h>

#include <type_traits>

#include "shared/common.h"

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DU = hn::RebindToUnsigned<DF>;
using DI = hn::RebindToSigned<DF>;
using VF = hn::Vec<DF>;
using VU = hn::Vec<DU>;
using VI = hn::Vec<DI>;
using MF = hn::Mask<DF>;

struct V3 {
  VF x, y, z;
};

HWY_INLINE V3 splat(gpu::vec3 v) {
  const DF df;
  return {hn::Set(df, v.x), hn::Set(df, v.y), hn::Set(df, v.z)};
}
HWY_INLINE V3 add(const V3& a, const V3& b) { return {hn::Add(a.x, b.x), hn::Add(a.y, b.y), hn::Add(a.z, b.z)}; }
HWY_INLINE V3 sub(const V3& a, const V3& b) { return {hn::Sub(a.x, b.x), hn::Sub(a.y, b.y), hn::Sub(a.z, b.z)}; }
HWY_INLINE V3 mul(const V3& a, VF s) { return {hn::Mul(a.x, s), hn::Mul(a.y, s), hn::Mul(a.z, s)}; }
HWY_INLINE V3 mul(VF s, const V3& a) { return {hn::Mul(s, a.x), hn::Mul(s, a.y), hn::Mul(s, a.z)}; }
HWY_INLINE V3 div(const V3& a, VF s) { return {hn::Div(a.x, s), hn::Div(a.y, s), hn::Div(a.z, s)}; }
// GLM: tmp = a * b; tmp.x + tmp.y + tmp.z.
HWY_INLINE VF dot(const V3& a, const V3& b) {
  return hn::Add(hn::Add(hn::Mul(a.x, b.x), hn::Mul(a.y, b.y)), hn::Mul(a.z, b.z));
}
// GLM: (x.y y.z - y.y x.z, x.z y.x - y.z x.x, x.x y.y - y.x x.y).
HWY_INLINE V3 cross(const V3& a, const V3& b) {
  return {hn::Sub(hn::Mul(a.y, b.z), hn::Mul(b.y, a.z)), hn::Sub(hn::Mul(a.z, b.x), hn::Mul(b.z, a.x)),
          hn::Sub(hn::Mul(a.x, b.y), hn::Mul(b.x, a.y))};
}
// GLM mix: a (1 - t) + b t.
HWY_INLINE VF mix(VF a, VF b, VF t) {
  const VF one = hn::Set(DF(), 1.0f);
  return hn::Add(hn::Mul(a, hn::Sub(one, t)), hn::Mul(b, t));
}
HWY_INLINE V3 mix(const V3& a, const V3& b, VF t) {
  const VF oneMinusT = hn::Sub(hn::Set(DF(), 1.0f), t);
  return {hn::Add(hn::Mul(a.x, oneMinusT), hn::Mul(b.x, t)), hn::Add(hn::Mul(a.y, oneMinusT), hn::Mul(b.y, t)),
          hn::Add(hn::Mul(a.z, oneMinusT), hn::Mul(b.z, t))};
}
HWY_INLINE V3 select(MF m, const V3& yes, const V3& no) {
  return {hn::IfThenElse(m, yes.x, no.x), hn::IfThenElse(m, yes.y, no.y), hn::IfThenElse(m, yes.z, no.z)};
}
HWY_INLINE V3 selectOrZero(MF m, const V3& yes) {
  return {hn::IfThenElseZero(m, yes.x), hn::IfThenElseZero(m, yes.y), hn::IfThenElseZero(m, yes.z)};
}
HWY_INLINE MF notEqual(const V3& a, const V3& b) {
  return hn::Or(hn::Or(hn::Ne(a.x, b.x), hn::Ne(a.y, b.y)), hn::Ne(a.z, b.z));
}
// GLM max(x, y) = x < y ? y : x and min(x, y) = y < x ? y : x (exact, signs of zero included). On
// x86, maxps(a, b) = a > b ? a : b and minps(a, b) = a < b ? a : b (the second operand where the
// comparison is false: NaN, equal zeros), so max(y, x) and min(y, x) are GLM's exactly, in one op.
#if HWY_ARCH_X86 && (HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_SSE4 || HWY_TARGET <= HWY_AVX2)
HWY_INLINE VF glmMax(VF x, VF y) { return hn::Max(y, x); }
HWY_INLINE VF glmMin(VF x, VF y) { return hn::Min(y, x); }
#else
HWY_INLINE VF glmMax(VF x, VF y) { return hn::IfThenElse(hn::Lt(x, y), y, x); }
HWY_INLINE VF glmMin(VF x, VF y) { return hn::IfThenElse(hn::Lt(y, x), y, x); }
#endif
// GLM abs(x) = x >= 0 ? x : -x (keeps -0).
HWY_INLINE VF glmAbs(VF x) { return hn::IfThenElse(hn::Ge(x, hn::Zero(DF())), x, hn::Neg(x)); }
// GLM clamp(x, lo, hi) = min(max(x, lo), hi).
HWY_INLINE VF glmClamp(VF x, VF lo, VF hi) { return glmMin(glmMax(x, lo), hi); }

// hn::ConvertTo (float to int32, truncating) for lanes known to lie inside int32's range: x86's plain
// conversion (ConvertTo also maps positive overflow to INT_MAX: the same results where it cannot
// happen, a few operations less).
template <class V>
HWY_INLINE auto truncateInRange(V v) {
  const hn::DFromV<V> d;
  const hn::RebindToSigned<decltype(d)> di;
#if HWY_ARCH_X86 && (HWY_TARGET == HWY_SSSE3 || HWY_TARGET == HWY_SSE4 || HWY_TARGET <= HWY_AVX2)
  using VI = decltype(hn::Zero(di));
  if constexpr (std::is_same_v<decltype(v.raw), __m128>) return VI{_mm_cvttps_epi32(v.raw)};
#if HWY_TARGET <= HWY_AVX2
  else if constexpr (std::is_same_v<decltype(v.raw), __m256>) return VI{_mm256_cvttps_epi32(v.raw)};
#endif
#if HWY_TARGET <= HWY_AVX3
  else if constexpr (std::is_same_v<decltype(v.raw), __m512>) return VI{_mm512_cvttps_epi32(v.raw)};
#endif
  else return hn::ConvertTo(di, v);
#else
  return hn::ConvertTo(di, v);
#endif
}

}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // VKC_CPU_SIMD_VEC3_H_
