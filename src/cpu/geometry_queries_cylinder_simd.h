// Lane helpers shared by the cylinder pairs' SIMD twins (geometry_queries_cylinder_box_simd.cpp,
// geometry_queries_cylinder_cylinder_simd.cpp): geomAcross, geomPerpendicularTo and negation in
// lanes, with the scalar code's operation order. Per-target header (see simd_vec3.h): included after
// simd_vec3.h, once per Highway target, outside its includer's namespaces.
#if defined(VKC_CPU_GEOMETRY_QUERIES_CYLINDER_SIMD_H_) == defined(HWY_TARGET_TOGGLE)  // NOLINT
#ifdef VKC_CPU_GEOMETRY_QUERIES_CYLINDER_SIMD_H_
#undef VKC_CPU_GEOMETRY_QUERIES_CYLINDER_SIMD_H_
#else
#define VKC_CPU_GEOMETRY_QUERIES_CYLINDER_SIMD_H_
#endif

#include <hwy/highway.h>

#include "cpu/simd_vec3.h"

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE::cylinder_lanes {

HWY_INLINE V3 neg3(const V3& v) { return V3{hn::Neg(v.x), hn::Neg(v.y), hn::Neg(v.z)}; }

// geomAcross(a, u, au): u - a au, less its component along a once more.
HWY_INLINE V3 acrossLanes(const V3& a, const V3& u, VF au) {
  const V3 w = sub(u, mul(a, au));
  return sub(w, mul(a, dot(w, a)));
}

// geomPerpendicularTo(a).
HWY_INLINE V3 perpendicularLanes(const V3& a) {
  const DF df;
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  const MF zMost = hn::And(hn::Gt(glmAbs(a.z), glmAbs(a.x)), hn::Gt(glmAbs(a.z), glmAbs(a.y)));
  const V3 helper{hn::IfThenElse(zMost, one, zero), zero, hn::IfThenElse(zMost, zero, one)};
  const V3 c = cross(helper, a);
  return div(c, hn::Sqrt(dot(c, c)));
}

// geomCentredSupport of a cylinder (unit axis a, radius r, half height h) along unit u.
HWY_INLINE VF cylinderSupportLanes(const V3& a, VF r, VF h, const V3& u) {
  const VF au = dot(a, u);
  const V3 w = acrossLanes(a, u, au);
  return hn::Add(hn::Mul(r, hn::Sqrt(dot(w, w))), hn::Mul(h, glmAbs(au)));
}

}  // namespace vkc::cpu::HWY_NAMESPACE::cylinder_lanes
HWY_AFTER_NAMESPACE();

#endif  // VKC_CPU_GEOMETRY_QUERIES_CYLINDER_SIMD_H_
