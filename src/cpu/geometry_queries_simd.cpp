// Highway SIMD twin of the geometry queries' point-set pairs (shaders/shared/geometry_queries_math.h,
// geomCanonicalContact with a point set): a static query of a point set against a sphere, capsule,
// cylinder, oriented box or plane, with the lanes across the set's points. Compiled once per target
// and chosen at run time.
//
// A batch of Lanes(df) points is loaded as SoA (LoadInterleaved4 of xyzw). The primitive is uniform
// across lanes: its renormalized axis, rotation or normal comes from the scalar code and is broadcast.
// Each closest-point rule (geomClosestSphere/Capsule/Cylinder/Box/Plane) is computed on every lane
// with its branches as masks, operation by operation in the scalar code's order (GLM's dot is
// (x + y) + z, mix is a (1 - t) + b t, min/max/abs/clamp as GLM writes them; no fused multiply-adds),
// so the contacts are the scalar twin's bit for bit. The lanes with a contact are written in the
// set's order, as the scalar loop writes them.
#include <cstring>

#include "cpu/geometry_queries.h"
#include "shared/geometry_queries_math.h"

#ifdef VKC_HAVE_SIMD
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/geometry_queries_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "cpu/simd_vec3.h"

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE {
namespace {

constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

// A closest-point answer per lane: the surface point, the outward unit normal there and the signed
// distance of the query point (gpu::GeomClosest in SoA).
struct ClosestLanes {
  V3 surface;
  V3 normal;
  VF dist;
};

// geomRotate(q, v) with u = q.xyz and w = q.w broadcast: v + t w + cross(u, t), t = cross(u, v) 2.
HWY_INLINE V3 rotate(const V3& u, VF w, const V3& v) {
  const V3 t = mul(cross(u, v), hn::Set(DF(), 2.0f));
  return add(add(v, mul(t, w)), cross(u, t));
}

// geomClosestSphere with a per-lane centre.
HWY_INLINE ClosestLanes closestSphere(const V3& centre, VF radius, const V3& p) {
  const DF df;
  const V3 d = sub(p, centre);
  const VF len = hn::Sqrt(dot(d, d));
  const V3 fallback = splat(gpu::vec3(gpu::kGeomFallbackX, gpu::kGeomFallbackY, gpu::kGeomFallbackZ));
  const V3 n = select(hn::Gt(len, hn::Zero(df)), div(d, len), fallback);
  return {add(centre, mul(n, radius)), n, hn::Sub(len, radius)};
}

// geomClosestCapsule: the sphere at the closest point of the segment (geomSegmentParam).
HWY_INLINE ClosestLanes closestCapsule(const gpu::GeomShape& s, const V3& p) {
  const DF df;
  const gpu::vec3 p0(s.p0);
  const gpu::vec3 p1(s.p1);
  const gpu::vec3 e = p1 - p0;
  const float ee = gpu::dot(e, e);
  VF t = hn::Zero(df);
  if (ee > 0.0f) {
    t = glmClamp(hn::Div(dot(sub(p, splat(p0)), splat(e)), hn::Set(df, ee)), hn::Zero(df), hn::Set(df, 1.0f));
  }
  return closestSphere(mix(splat(p0), splat(p1), t), hn::Set(df, s.p0.w), p);
}

// geomClosestCylinder: inside (the nearer of wall and cap, the wall on a tie), wall, cap, rim.
HWY_INLINE ClosestLanes closestCylinder(const gpu::GeomShape& s, const V3& p) {
  const DF df;
  const VF zero = hn::Zero(df);
  const gpu::vec3 axisScalar = gpu::geomUnit(gpu::vec3(s.p1));
  const V3 centre = splat(gpu::vec3(s.p0));
  const V3 axis = splat(axisScalar);
  const VF radius = hn::Set(df, s.p0.w);
  const VF halfHeight = hn::Set(df, s.p1.w);
  const V3 d = sub(p, centre);
  const VF y = dot(d, axis);
  const V3 radial = sub(d, mul(axis, y));
  const VF rho = hn::Sqrt(dot(radial, radial));
  const V3 u = select(hn::Gt(rho, zero), div(radial, rho), splat(gpu::geomPerpendicularTo(axisScalar)));
  const VF ay = glmAbs(y);
  const V3 capNormal = select(hn::Ge(y, zero), axis, splat(-axisScalar));
  const MF withinHeight = hn::Le(ay, halfHeight);
  const MF withinRadius = hn::Le(rho, radius);

  const V3 wallSurface = add(add(centre, mul(axis, y)), mul(u, radius));
  // Outside in both directions: the rim.
  const V3 rim = add(add(centre, mul(capNormal, halfHeight)), mul(u, radius));
  const V3 off = sub(p, rim);
  const VF offLen = hn::Sqrt(dot(off, off));
  ClosestLanes out{rim, div(off, offLen), offLen};
  // Beyond a cap, within the radius: the cap.
  const MF cap = hn::AndNot(withinHeight, withinRadius);
  out.surface = select(cap, add(add(centre, mul(capNormal, halfHeight)), radial), out.surface);
  out.normal = select(cap, capNormal, out.normal);
  out.dist = hn::IfThenElse(cap, hn::Sub(ay, halfHeight), out.dist);
  // Beside the wall (within the height): the wall.
  out.surface = select(withinHeight, wallSurface, out.surface);
  out.normal = select(withinHeight, u, out.normal);
  out.dist = hn::IfThenElse(withinHeight, hn::Sub(rho, radius), out.dist);
  // Inside: the nearer of wall and cap.
  const MF inside = hn::And(withinHeight, withinRadius);
  const VF wallDepth = hn::Sub(radius, rho);
  const VF capDepth = hn::Sub(halfHeight, ay);
  const MF insideCap = hn::And(inside, hn::Not(hn::Le(wallDepth, capDepth)));
  out.surface = select(insideCap, add(p, mul(capNormal, capDepth)), out.surface);
  out.normal = select(insideCap, capNormal, out.normal);
  out.dist = hn::IfThenElse(inside, hn::Neg(hn::IfThenElse(insideCap, capDepth, wallDepth)), out.dist);
  return out;
}

// geomClosestBox: outside, the clamped point; inside, the nearest face (x, then y, then z on ties).
HWY_INLINE ClosestLanes closestBox(const gpu::GeomShape& s, const V3& p) {
  const DF df;
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  const gpu::vec4 q = s.p1 / gpu::sqrt(gpu::dot(s.p1, s.p1));
  const V3 u = splat(gpu::vec3(q));
  const V3 uInverse = splat(gpu::vec3(-q.x, -q.y, -q.z));
  const VF w = hn::Set(df, q.w);
  const V3 centre = splat(gpu::vec3(s.p0));
  const V3 h = splat(gpu::vec3(s.p2));
  const V3 local = rotate(uInverse, w, sub(p, centre));

  const V3 clamped{glmClamp(local.x, hn::Neg(h.x), h.x), glmClamp(local.y, hn::Neg(h.y), h.y),
                   glmClamp(local.z, hn::Neg(h.z), h.z)};
  const V3 off = sub(local, clamped);
  const VF len2 = dot(off, off);
  const VF len = hn::Sqrt(len2);
  const MF outside = hn::Gt(len2, zero);

  const V3 faceDepth = sub(h, V3{glmAbs(local.x), glmAbs(local.y), glmAbs(local.z)});
  const MF kIsY = hn::Lt(faceDepth.y, faceDepth.x);
  const VF depthXY = hn::IfThenElse(kIsY, faceDepth.y, faceDepth.x);
  const MF kIsZ = hn::Lt(faceDepth.z, depthXY);
  const MF kIsX = hn::Not(hn::Or(kIsY, kIsZ));
  const MF kIsOnlyY = hn::AndNot(kIsZ, kIsY);
  const VF depthK = hn::IfThenElse(kIsZ, faceDepth.z, depthXY);
  const VF localK = hn::IfThenElse(kIsZ, local.z, hn::IfThenElse(kIsY, local.y, local.x));
  const VF side = hn::IfThenElse(hn::Ge(localK, zero), one, hn::Neg(one));
  const V3 nLocal{hn::IfThenElseZero(kIsX, side), hn::IfThenElseZero(kIsOnlyY, side), hn::IfThenElseZero(kIsZ, side)};
  const V3 face{hn::IfThenElse(kIsX, hn::Mul(side, h.x), local.x), hn::IfThenElse(kIsOnlyY, hn::Mul(side, h.y), local.y),
                hn::IfThenElse(kIsZ, hn::Mul(side, h.z), local.z)};

  const V3 surfaceLocal = select(outside, clamped, face);
  const V3 normalLocal = select(outside, div(off, len), nLocal);
  return {add(centre, rotate(u, w, surfaceLocal)), rotate(u, w, normalLocal),
          hn::IfThenElse(outside, len, hn::Neg(depthK))};
}

// geomClosestPlane, one-sided (points always see a plane as one-sided).
HWY_INLINE ClosestLanes closestPlane(const gpu::GeomShape& s, const V3& p) {
  const V3 n = splat(gpu::geomUnit(gpu::vec3(s.p1)));
  const VF d = dot(sub(p, splat(gpu::vec3(s.p0))), n);
  return {sub(p, mul(n, d)), n, d};
}

HWY_INLINE ClosestLanes closestPrimitive(const gpu::GeomShape& s, const V3& p) {
  switch (s.info.x) {
    case gpu::kGeomSphere: return closestSphere(splat(gpu::vec3(s.p0)), hn::Set(DF(), s.p0.w), p);
    case gpu::kGeomCapsule: return closestCapsule(s, p);
    case gpu::kGeomCylinder: return closestCylinder(s, p);
    case gpu::kGeomOrientedBox: return closestBox(s, p);
    default: return closestPlane(s, p);
  }
}

ContactElement makeElement(gpu::vec3 point, float depth, gpu::vec3 direction, ContactElementType type, uint32_t index,
                           uint32_t query) {
  ContactElement e;
  e.point = Float4{point.x, point.y, point.z, depth};
  e.direction = Float4{direction.x, direction.y, direction.z, 0.0f};
  e.type = type;
  e.index = index;
  e.query = query;
  return e;
}

uint64_t PointSetContacts(const gpu::GeomShape& primitive, bool pointSetIsA, const Float4* points, uint32_t count,
                          uint32_t query, ContactElement* outA, ContactElement* outB, uint64_t total,
                          uint64_t capacity) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  HWY_ALIGN float tail[4 * kMaxLanes];
  HWY_ALIGN float sx[kMaxLanes], sy[kMaxLanes], sz[kMaxLanes];
  HWY_ALIGN float nx[kMaxLanes], ny[kMaxLanes], nz[kMaxLanes];
  HWY_ALIGN float px[kMaxLanes], py[kMaxLanes], pz[kMaxLanes], depths[kMaxLanes];
  uint64_t found = 0;
  for (uint32_t i = 0; i < count; i += static_cast<uint32_t>(lanes)) {
    const size_t valid = count - i < lanes ? count - i : lanes;
    const float* src = &points[i].x;
    if (valid < lanes) {
      std::memset(tail, 0, sizeof tail);
      std::memcpy(tail, src, valid * sizeof(Float4));
      src = tail;
    }
    V3 p;
    VF pw;
    hn::LoadInterleaved4(df, src, p.x, p.y, p.z, pw);
    const ClosestLanes cl = closestPrimitive(primitive, p);
    const VF depth = hn::Sub(hn::Zero(df), cl.dist);  // geomBallContact with radius 0
    const MF hit = hn::And(hn::Gt(depth, hn::Zero(df)), hn::FirstN(df, valid));
    if (hn::AllFalse(df, hit)) continue;
    hn::Store(cl.surface.x, df, sx);
    hn::Store(cl.surface.y, df, sy);
    hn::Store(cl.surface.z, df, sz);
    hn::Store(cl.normal.x, df, nx);
    hn::Store(cl.normal.y, df, ny);
    hn::Store(cl.normal.z, df, nz);
    hn::Store(p.x, df, px);
    hn::Store(p.y, df, py);
    hn::Store(p.z, df, pz);
    hn::Store(depth, df, depths);
    for (size_t k = 0; k < valid; ++k) {
      if (!(depths[k] > 0.0f)) continue;
      const uint64_t slotOut = total + found++;
      if (slotOut >= capacity) continue;
      const gpu::vec3 n(nx[k], ny[k], nz[k]);
      const gpu::vec3 point = gpu::vec3(px[k], py[k], pz[k]) - n * 0.0f;  // the ball's point, radius 0
      const ContactElement pointSide = makeElement(point, depths[k], n, ContactElementType::kPointIndexDirection,
                                                   i + static_cast<uint32_t>(k), query);
      const ContactElement primitiveSide = makeElement(gpu::vec3(sx[k], sy[k], sz[k]), depths[k], -n,
                                                       ContactElementType::kPointDirection, kNoPointIndex, query);
      outA[slotOut] = pointSetIsA ? pointSide : primitiveSide;
      outB[slotOut] = pointSetIsA ? primitiveSide : pointSide;
    }
  }
  return found;
}

}  // namespace
}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vkc::cpu {
HWY_EXPORT(PointSetContacts);

bool pointSetSimdHandles(const gpu::GeomShape& primitive) { return primitive.info.x <= gpu::kGeomPlane; }

uint64_t pointSetContactsSimd(const gpu::GeomShape& primitive, bool pointSetIsA, const Float4* points, uint32_t count,
                              uint32_t query, ContactElement* outA, ContactElement* outB, uint64_t total,
                              uint64_t capacity) {
  return HWY_DYNAMIC_DISPATCH(PointSetContacts)(primitive, pointSetIsA, points, count, query, outA, outB, total,
                                                capacity);
}
}  // namespace vkc::cpu
#endif

#else  // scalar-only build: the scalar loop handles every query

namespace vkc::cpu {
bool pointSetSimdHandles(const gpu::GeomShape&) { return false; }
uint64_t pointSetContactsSimd(const gpu::GeomShape&, bool, const Float4*, uint32_t, uint32_t, ContactElement*,
                              ContactElement*, uint64_t, uint64_t) {
  return 0;
}
}  // namespace vkc::cpu
#endif
