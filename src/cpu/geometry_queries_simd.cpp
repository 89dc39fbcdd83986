// Highway SIMD twin of the geometry queries' point-set pairs (shaders/shared/geometry_queries_math.h,
// geomCanonicalContact with a point set; geometry_queries_implicit.h): a static or continuous query
// of a point set against a sphere, capsule, cylinder, oriented box, plane or implicit geometry, with
// the lanes across the set's points; and runs of closed-form primitive pairs with the lanes across
// the queries (below). Compiled once per target and chosen at run time.
//
// A batch of Lanes(df) points is loaded as SoA (LoadInterleaved4 of xyzw). The primitive is uniform
// across lanes: its renormalized axis, rotation or normal comes from the scalar code and is broadcast.
// Each closest-point rule (geomClosestSphere/Capsule/Cylinder/Box/Plane) is computed on every lane
// with its branches as masks, operation by operation in the scalar code's order (GLM's dot is
// (x + y) + z, mix is a (1 - t) + b t, min/max/abs/clamp as GLM writes them; no fused multiply-adds),
// so the contacts are the scalar twin's bit for bit. The lanes with a contact are written in the
// set's order, as the scalar loop writes them.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "cpu/geometry_queries.h"
#include "shared/geometry_queries_math.h"

#ifdef VKC_HAVE_SIMD
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/geometry_queries_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/cache_control.h>
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

// geomClosestCylinder: inside (the nearer of wall and cap, the wall on a tie), wall, cap, rim; with
// its unit axis, and geomPerpendicularTo(axis) for points on the axis, per lane.
HWY_INLINE ClosestLanes closestCylinderLanes(const V3& centre, const V3& axis, const V3& perpendicular, VF radius,
                                             VF halfHeight, const V3& p) {
  const DF df;
  const VF zero = hn::Zero(df);
  const V3 d = sub(p, centre);
  const VF y = dot(d, axis);
  const V3 radial = sub(d, mul(axis, y));
  const VF rho = hn::Sqrt(dot(radial, radial));
  const V3 u = select(hn::Gt(rho, zero), div(radial, rho), perpendicular);
  const VF ay = glmAbs(y);
  const V3 capNormal = select(hn::Ge(y, zero), axis, V3{hn::Neg(axis.x), hn::Neg(axis.y), hn::Neg(axis.z)});
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

HWY_INLINE ClosestLanes closestCylinder(const gpu::GeomShape& s, const V3& p) {
  const DF df;
  const gpu::vec3 axis = gpu::geomUnit(gpu::vec3(s.p1));
  return closestCylinderLanes(splat(gpu::vec3(s.p0)), splat(axis), splat(gpu::geomPerpendicularTo(axis)),
                              hn::Set(df, s.p0.w), hn::Set(df, s.p1.w), p);
}

// geomClosestBox: outside, the clamped point; inside, the nearest face (x, then y, then z on ties);
// the unit rotation (u, w) = (q.xyz, q.w), centre and half extents h per lane.
HWY_INLINE ClosestLanes closestBoxLanes(const V3& centre, const V3& u, VF w, const V3& h, const V3& p) {
  const DF df;
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  const V3 uInverse{hn::Neg(u.x), hn::Neg(u.y), hn::Neg(u.z)};
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

HWY_INLINE ClosestLanes closestBox(const gpu::GeomShape& s, const V3& p) {
  const gpu::vec4 q = gpu::geomQuatUnit(s.p1);
  return closestBoxLanes(splat(gpu::vec3(s.p0)), splat(gpu::vec3(q)), hn::Set(DF(), q.w), splat(gpu::vec3(s.p2)), p);
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

// ---- An implicit geometry in lanes (geometry_queries_implicit.h): its grid uniform across the lanes,
// the samples gathered per lane. geomGridCellOf's and geomGridSample's index arithmetic in unsigned
// 32-bit lanes (it wraps as the shader's uint does), the gather's index as a signed one: callers keep
// the grid's samples below 2^31 (pointSetSimdHandles).
struct GridLanes {
  const float* samples;
  VU first;
  VU n[3];          // the dimensions
  VU sampleMax[3];  // n - 1: geomGridSample's clamp
  VU cellMax[3];    // n - 2 (wrapping): geomGridCellOf's
  V3 origin, spacing, hi;
};

HWY_INLINE GridLanes gridLanes(const gpu::GeomShape& g, const float* samples) {
  const DU du;
  // geomGridDims (geometry_queries_implicit.h is a member of the scalar kernel, not free functions)
  const gpu::uvec4 n(uint32_t(g.p2.x), uint32_t(g.p2.y), uint32_t(g.p2.z), 0u);
  GridLanes l;
  l.samples = samples;
  l.first = hn::Set(du, g.info.y);
  for (uint32_t k = 0; k < 3; ++k) {
    l.n[k] = hn::Set(du, n[k]);
    l.sampleMax[k] = hn::Set(du, n[k] - 1u);
    l.cellMax[k] = hn::Set(du, n[k] - 2u);
  }
  l.origin = splat(gpu::vec3(g.p0));
  l.spacing = splat(gpu::vec3(g.p1));
  l.hi = splat(gpu::vec3(float(n.x - 1u), float(n.y - 1u), float(n.z - 1u)));
  return l;
}

// geomGridCellOf per lane: the cell holding grid coordinate u (in [0, n - 1] per axis).
HWY_INLINE void gridCellOfLanes(const GridLanes& g, const VF u[3], VU c[3]) {
  const DU du;
  const VF zero = hn::Zero(DF());
  for (uint32_t k = 0; k < 3; ++k) {
    c[k] = hn::Min(hn::BitCast(du, truncateInRange(glmMax(hn::Floor(u[k]), zero))), g.cellMax[k]);
  }
}

// geomGridCell per lane: the 8 samples of cell c, v[i + 2j + 4k] (geomGridSample's clamps); lanes
// outside `active` read the grid's first sample.
HWY_INLINE void gridCellLanes(const GridLanes& g, const VU c[3], MF active, VF v[8]) {
  const DF df;
  const DU du;
  const DI di;
  VU lo[3];
  VU up[3];
  for (uint32_t k = 0; k < 3; ++k) {
    lo[k] = hn::Min(c[k], g.sampleMax[k]);
    up[k] = hn::Min(hn::Add(c[k], hn::Set(du, 1u)), g.sampleMax[k]);
  }
  const auto activeU = hn::RebindMask(du, active);
  for (uint32_t k = 0; k < 8; ++k) {
    const VU i = (k & 1u) != 0u ? up[0] : lo[0];
    const VU j = (k & 2u) != 0u ? up[1] : lo[1];
    const VU z = (k & 4u) != 0u ? up[2] : lo[2];
    const VU offset =
        hn::IfThenElseZero(activeU, hn::Add(i, hn::Mul(g.n[0], hn::Add(j, hn::Mul(g.n[1], z)))));
    v[k] = hn::GatherIndex(df, g.samples, hn::BitCast(di, hn::Add(g.first, offset)));
  }
}

// geomGridDistance's clamped grid coordinates of p per lane, and the cell holding them.
HWY_INLINE void gridClampedCellLanes(const GridLanes& g, const V3& p, VF u[3], VU c[3]) {
  const VF zero = hn::Zero(DF());
  const VF pv[3] = {p.x, p.y, p.z};
  const VF origin[3] = {g.origin.x, g.origin.y, g.origin.z};
  const VF spacing[3] = {g.spacing.x, g.spacing.y, g.spacing.z};
  const VF hi[3] = {g.hi.x, g.hi.y, g.hi.z};
  for (uint32_t k = 0; k < 3; ++k)
    u[k] = glmClamp(hn::Div(hn::Sub(pv[k], origin[k]), spacing[k]), zero, hi[k]);
  gridCellOfLanes(g, u, c);
}

// geomGridDistance per lane.
HWY_INLINE VF gridDistanceLanes(const GridLanes& g, const V3& p) {
  const DF df;
  const DI di;
  VF u[3];
  VU c[3];
  VF f[3];
  gridClampedCellLanes(g, p, u, c);
  for (uint32_t k = 0; k < 3; ++k) f[k] = hn::Sub(u[k], hn::ConvertTo(df, hn::BitCast(di, c[k])));
  VF v[8];
  gridCellLanes(g, c, hn::FirstN(df, hn::Lanes(df)), v);
  // geomTrilinear
  const VF x00 = mix(v[0], v[1], f[0]);
  const VF x10 = mix(v[2], v[3], f[0]);
  const VF x01 = mix(v[4], v[5], f[0]);
  const VF x11 = mix(v[6], v[7], f[0]);
  const VF inside = mix(mix(x00, x10, f[1]), mix(x01, x11, f[1]), f[2]);
  const V3 off{hn::Sub(p.x, hn::Add(g.origin.x, hn::Mul(u[0], g.spacing.x))),
               hn::Sub(p.y, hn::Add(g.origin.y, hn::Mul(u[1], g.spacing.y))),
               hn::Sub(p.z, hn::Add(g.origin.z, hn::Mul(u[2], g.spacing.z)))};
  return hn::Add(inside, hn::Sqrt(dot(off, off)));
}

// geomGridNormal per lane: central differences one spacing apart (p + e adds e's zeros too, as the
// vec3 sum does: -0 + 0 is +0).
HWY_INLINE V3 gridNormalLanes(const GridLanes& g, const gpu::GeomShape& s, const V3& p) {
  const DF df;
  const VF zero = hn::Zero(df);
  const gpu::vec3 h = gpu::vec3(s.p1);
  VF grad[3];
  for (uint32_t k = 0; k < 3; ++k) {
    const VF hk = hn::Set(df, h[k]);
    const V3 e{k == 0u ? hk : zero, k == 1u ? hk : zero, k == 2u ? hk : zero};
    grad[k] = hn::Div(hn::Sub(gridDistanceLanes(g, add(p, e)), gridDistanceLanes(g, sub(p, e))),
                      hn::Set(df, 2.0f * h[k]));
  }
  const V3 gv{grad[0], grad[1], grad[2]};
  const VF len2 = dot(gv, gv);
  const V3 fallback = splat(gpu::vec3(gpu::kGeomFallbackX, gpu::kGeomFallbackY, gpu::kGeomFallbackZ));
  return select(hn::Gt(len2, zero), div(gv, hn::Sqrt(len2)), fallback);
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

// A contact as geomBallContact writes it: the ball's element at `ball` (its centre moved back by n
// times its radius), direction n, of type ballType and index ballIndex, and the other geometry's at
// `surface`, direction -n, both with `depth`; outA holds the ball's side when ballIsA.
HWY_INLINE void storeBallContact(ContactElement* outA, ContactElement* outB, uint64_t at, bool ballIsA,
                                 gpu::vec3 ball, gpu::vec3 surface, gpu::vec3 n, float depth,
                                 ContactElementType ballType, uint32_t ballIndex, uint32_t query) {
  const ContactElement ballSide = makeElement(ball, depth, n, ballType, ballIndex, query);
  const ContactElement otherSide =
      makeElement(surface, depth, -n, ContactElementType::kPointDirection, kNoPointIndex, query);
  outA[at] = ballIsA ? ballSide : otherSide;
  outB[at] = ballIsA ? otherSide : ballSide;
}

// A point set's contact (a ball of radius 0): point `index` at p.
HWY_INLINE void storePointContact(ContactElement* outA, ContactElement* outB, uint64_t at, bool pointSetIsA,
                                  gpu::vec3 p, gpu::vec3 surface, gpu::vec3 n, float depth, uint32_t index,
                                  uint32_t query) {
  storeBallContact(outA, outB, at, pointSetIsA, p - n * 0.0f, surface, n, depth,
                   ContactElementType::kPointIndexDirection, index, query);
}

// A vector's lanes to three aligned arrays (x, y, z).
HWY_INLINE void storeLanes(const V3& v, float* x, float* y, float* z) {
  const DF df;
  hn::Store(v.x, df, x);
  hn::Store(v.y, df, y);
  hn::Store(v.z, df, z);
}

// Points per chunk of the point-set loops (a chunk's lists and contacts in the caches).
constexpr uint32_t kTraceChunk = 256;

// An implicit geometry's cells in bricks of kCells^3, each marked where one of its cells has a negative
// sample. geomTraceGrid solves only such cells (the others' fields are non-negative and the walk
// passes them), and every cell it visits holds a point of the segment clipped to the grid's box (the
// middle of a piece, up to rounding far below a cell within 2^20 cells of the origin; a segment
// reaching farther is traced): a segment whose cells, widened by one each way, lie in unmarked bricks
// has no root, and its trace is -1. Its end's cell is among them, so the field there (a mix of
// non-negative samples plus a distance) is not negative either: no static contact. Built in one pass
// over the samples (a negative sample marks the cells on both sides of it; with the widening, the
// cell above would do).
struct GridBricks {
  static constexpr uint32_t kCells = 4;
  std::vector<int32_t> negative;  // per brick, x fastest: 1 where marked (int32 for the lanes' gathers)
  uint32_t bricks[3] = {};
  int32_t cellMax[3] = {};  // the last cell's index per axis (n - 2)

  void build(const gpu::GeomShape& g, const float* samples) {
    const uint32_t n[3] = {static_cast<uint32_t>(g.p2.x), static_cast<uint32_t>(g.p2.y),
                           static_cast<uint32_t>(g.p2.z)};
    for (uint32_t k = 0; k < 3; ++k) {
      cellMax[k] = static_cast<int32_t>(n[k]) - 2;
      bricks[k] = (n[k] - 2) / kCells + 1;
    }
    negative.assign(size_t{bricks[0]} * bricks[1] * bricks[2], 0);
    const float* v = samples + g.info.y;
    for (uint32_t k = 0; k < n[2]; ++k) {
      for (uint32_t j = 0; j < n[1]; ++j) {
        for (uint32_t i = 0; i < n[0]; ++i, ++v) {
          if (!(*v < 0.0f)) continue;
          // The sample's cells: i - 1 and i per axis, within [0, n - 2].
          const uint32_t at[3] = {i, j, k};
          uint32_t lo[3], hi[3];
          for (uint32_t a = 0; a < 3; ++a) {
            lo[a] = (at[a] > 0u ? at[a] - 1u : 0u) / kCells;
            hi[a] = std::min(at[a], n[a] - 2u) / kCells;
          }
          for (uint32_t bz = lo[2]; bz <= hi[2]; ++bz) {
            for (uint32_t by = lo[1]; by <= hi[1]; ++by) {
              for (uint32_t bx = lo[0]; bx <= hi[0]; ++bx)
                negative[bx + bricks[0] * (by + size_t{bricks[1]} * bz)] = 1;
            }
          }
        }
      }
    }
  }

  // Per lane, whether the trace of the segment from grid coordinates u0 to u1 ((x - origin) /
  // spacing, as the walk computes them) may find a root: one of the bricks of its cells, widened by
  // one each way, is marked. A segment whose widened cells span at most two bricks per axis reads
  // its up to 8 bricks' marks; a longer one, or one with an end past 2^20 cells (where the walk's
  // rounding reaches a fraction of a cell), is taken as may (traced: its trace decides).
  HWY_INLINE MF mayRootLanes(const V3& u0, const V3& u1) const {
    const DF df;
    const DI di;
    const VF a[3] = {u0.x, u0.y, u0.z};
    const VF b[3] = {u1.x, u1.y, u1.z};
    VI lo[3], hi[3];
    MF wide = hn::FirstN(df, 0);
    for (uint32_t k = 0; k < 3; ++k) {
      const VF limitLo = hn::Set(df, -2.0f);
      const VF limitHi = hn::Set(df, static_cast<float>(cellMax[k] + 2));
      const VF from = hn::Floor(hn::Min(hn::Max(hn::Min(a[k], b[k]), limitLo), limitHi));
      const VF to = hn::Floor(hn::Min(hn::Max(hn::Max(a[k], b[k]), limitLo), limitHi));
      const VI zeroI = hn::Zero(di);
      const VI last = hn::Set(di, cellMax[k]);
      const VI one = hn::Set(di, 1);
      const VI cLo = hn::Min(hn::Max(hn::Sub(hn::ConvertTo(di, from), one), zeroI), last);
      const VI cHi = hn::Min(hn::Max(hn::Add(hn::ConvertTo(di, to), one), zeroI), last);
      lo[k] = hn::ShiftRight<2>(cLo);
      hi[k] = hn::ShiftRight<2>(cHi);
      wide = hn::Or(wide, hn::RebindMask(df, hn::Gt(hi[k], hn::Add(lo[k], one))));
      // An end farther than 2^20 cells from the grid's origin: the walk's u0 + d t may err by more
      // than a fraction of a cell there, so such a segment is listed (its trace decides).
      const VF far = hn::Set(df, 1048576.0f);
      wide = hn::Or(wide, hn::Or(hn::Gt(hn::Abs(a[k]), far), hn::Gt(hn::Abs(b[k]), far)));
    }
    static_assert(kCells == 4, "the shifts above divide by kCells");
    VI any = hn::Zero(di);
    for (uint32_t corner = 0; corner < 8; ++corner) {
      const VI x = (corner & 1u) != 0u ? hi[0] : lo[0];
      const VI y = (corner & 2u) != 0u ? hi[1] : lo[1];
      const VI z = (corner & 4u) != 0u ? hi[2] : lo[2];
      any = hn::Or(any, markLanes(x, y, z));
    }
    return hn::Or(wide, hn::RebindMask(df, hn::Ne(any, hn::Zero(di))));
  }

  // The marks of bricks (x, y, z) per lane (1 where marked).
  HWY_INLINE VI markLanes(VI x, VI y, VI z) const {
    const DI di;
    const VI at = hn::Add(hn::Add(x, hn::Mul(y, hn::Set(di, static_cast<int32_t>(bricks[0])))),
                          hn::Mul(z, hn::Set(di, static_cast<int32_t>(bricks[0] * bricks[1]))));
    return hn::GatherIndex(di, negative.data(), at);
  }

  // Per lane, whether the cell geomGridDistance reads at p (its clamped grid coordinates, as
  // gridDistanceLanes computes them) is in a marked brick: where not, the field at p is not negative.
  HWY_INLINE MF mayBeInside(const GridLanes& g, const V3& p) const {
    const DF df;
    const DI di;
    VF u[3];
    VU c[3];
    gridClampedCellLanes(g, p, u, c);
    const VI mark =
        markLanes(hn::ShiftRight<2>(hn::BitCast(di, c[0])), hn::ShiftRight<2>(hn::BitCast(di, c[1])),
                  hn::ShiftRight<2>(hn::BitCast(di, c[2])));
    return hn::RebindMask(df, hn::Ne(mark, hn::Zero(di)));
  }
};

uint64_t PointSetContacts(const gpu::GeomShape& primitive, const float* samples, bool pointSetIsA,
                          const Float4* points, uint32_t count, uint32_t query, ContactElement* outA,
                          ContactElement* outB, uint64_t total, uint64_t capacity) {
  const DF df;
  const DI di;
  const size_t lanes = hn::Lanes(df);
  HWY_ALIGN float tail[4 * kMaxLanes];
  HWY_ALIGN float sx[kMaxLanes], sy[kMaxLanes], sz[kMaxLanes];
  HWY_ALIGN float nx[kMaxLanes], ny[kMaxLanes], nz[kMaxLanes];
  HWY_ALIGN float px[kMaxLanes], py[kMaxLanes], pz[kMaxLanes], depths[kMaxLanes];
  HWY_ALIGN int32_t listed[kTraceChunk + kMaxLanes];
  const bool implicit = primitive.info.x == gpu::kGeomImplicit;
  const GridLanes grid = implicit ? gridLanes(primitive, samples) : GridLanes{};
  // A grid's bricks (for a set of at least a 16th of its samples: their pass over the samples costs
  // about what a 16th of that many points would; on the torus field a set of 4 096 points took 0.18
  // ms without them and 0.27 ms with them, one of 16 384 0.52 and 0.38): only the points in cells
  // with a negative sample are evaluated (the field is not negative in the others), listed in chunks.
  GridBricks bricks;
  // (The gathers below index the points' floats with int32 lanes: fewer than 2^29 points.)
  if (implicit && uint64_t{count} * 16u >= primitive.info.z && count < (1u << 29))
    bricks.build(primitive, samples);
  uint64_t found = 0;
  // Lanes p of the points first + k (k < valid; index: first + k, or listed[first + k] when list).
  const auto evaluate = [&](const V3& p, size_t valid, const int32_t* list, uint32_t first)
      __attribute__((always_inline)) {
    // An implicit geometry (geomImplicitClosest): the field first, its gradient only in a batch with
    // a point inside.
    ClosestLanes cl;
    if (implicit) {
      cl.dist = gridDistanceLanes(grid, p);
    } else {
      cl = closestPrimitive(primitive, p);
    }
    const VF depth = hn::Sub(hn::Zero(df), cl.dist);  // geomBallContact with radius 0
    const MF hit = hn::And(hn::Gt(depth, hn::Zero(df)), hn::FirstN(df, valid));
    if (hn::AllFalse(df, hit)) return;
    if (implicit) {
      cl.normal = gridNormalLanes(grid, primitive, p);
      cl.surface = sub(p, mul(cl.normal, cl.dist));
    }
    storeLanes(cl.surface, sx, sy, sz);
    storeLanes(cl.normal, nx, ny, nz);
    storeLanes(p, px, py, pz);
    hn::Store(depth, df, depths);
    for (size_t k = 0; k < valid; ++k) {
      if (!(depths[k] > 0.0f)) continue;
      const uint64_t slotOut = total + found++;
      if (slotOut >= capacity) continue;
      const uint32_t index =
          list != nullptr ? static_cast<uint32_t>(list[first + k]) : first + static_cast<uint32_t>(k);
      storePointContact(outA, outB, slotOut, pointSetIsA, gpu::vec3(px[k], py[k], pz[k]),
                        gpu::vec3(sx[k], sy[k], sz[k]), gpu::vec3(nx[k], ny[k], nz[k]), depths[k], index,
                        query);
    }
  };
  // Lanes across the points [i, i + lanes) (the last batch: up to count, the rest zeros).
  const auto load = [&](uint32_t i, uint32_t end, size_t & valid) __attribute__((always_inline)) {
    valid = end - i < lanes ? end - i : lanes;
    const float* src = &points[i].x;
    if (valid < lanes) {
      std::memset(tail, 0, sizeof tail);
      std::memcpy(tail, src, valid * sizeof(Float4));
      src = tail;
    }
    V3 p;
    VF pw;
    hn::LoadInterleaved4(df, src, p.x, p.y, p.z, pw);
    return p;
  };
  if (bricks.negative.empty()) {
    for (uint32_t i = 0; i < count; i += static_cast<uint32_t>(lanes)) {
      size_t valid;
      const V3 p = load(i, count, valid);
      evaluate(p, valid, nullptr, i);
    }
    return found;
  }
  for (uint32_t chunk = 0; chunk < count; chunk += kTraceChunk) {
    const uint32_t chunkEnd = count - chunk < kTraceChunk ? count : chunk + kTraceChunk;
    uint32_t listCount = 0;
    for (uint32_t i = chunk; i < chunkEnd; i += static_cast<uint32_t>(lanes)) {
      size_t valid;
      const V3 p = load(i, chunkEnd, valid);
      const MF keep = hn::And(bricks.mayBeInside(grid, p), hn::FirstN(df, valid));
      listCount += static_cast<uint32_t>(hn::CompressStore(hn::Iota(di, static_cast<int32_t>(i)),
                                                           hn::RebindMask(di, keep), di, listed + listCount));
    }
    // The listed points in full lane batches, gathered (in the set's order: their contacts too).
    const float* base = &points[0].x;
    for (uint32_t j = 0; j < listCount; j += static_cast<uint32_t>(lanes)) {
      const size_t valid = listCount - j < lanes ? listCount - j : lanes;
      for (size_t k = listCount; k < j + lanes; ++k) listed[k] = listed[j];  // a real point past the list
      const VI at = hn::ShiftLeft<2>(hn::Load(di, listed + j));
      const V3 p{hn::GatherIndex(df, base, at), hn::GatherIndex(df, base + 1, at),
                 hn::GatherIndex(df, base + 2, at)};
      evaluate(p, valid, listed, j);
    }
  }
  return found;
}

// A box's, cylinder's or plane's sample box against an implicit geometry (geomShapeGridSampleContact
// per sample, geometry_queries_implicit.h), lanes across each row of the box (consecutive samples,
// read with one load): the sample's position and value, the half-diagonal test and the 1-Lipschitz
// skip, then only in a batch with a lane left the gradient (6 trilinear evaluations), the surface
// point and the shape's closest point there; the hits written in the box's order. `shape` may be a
// second implicit geometry (its samples in the same array): no skip then (a field need not be
// 1-Lipschitz), its field at the surface point, and its gradient only in a batch with a lane inside.
uint64_t ShapeGridContacts(const gpu::GeomShape& shape, const gpu::GeomShape& grid, const float* samples,
                           bool shapeIsA, gpu::uvec4 lo, gpu::uvec4 size, uint32_t query,
                           ContactElement* outA, ContactElement* outB, uint64_t total, uint64_t capacity) {
  const DF df;
  const DI di;
  const size_t lanes = hn::Lanes(df);
  const GridLanes g = gridLanes(grid, samples);
  const gpu::vec3 h = gpu::vec3(grid.p1);
  const VF halfDiagonal = hn::Set(df, 0.5f * std::sqrt(gpu::dot(h, h)));  // geomGridSurfaceFrom's test
  // geomGridSampleContact's size: the lane's max |x_k| plus the shape's terms.
  const float shapeAbs = std::max(std::max(std::abs(shape.p0.x), std::abs(shape.p0.y)), std::abs(shape.p0.z));
  const VF shapeAbsV = hn::Set(df, shapeAbs);
  const VF shapeWs = hn::Set(df, std::abs(shape.p0.w) + std::abs(shape.p1.w));
  const VF shapeExt = hn::Set(df, (shape.p2.x + shape.p2.y) + shape.p2.z);
  const VF slack = hn::Set(df, 1.001f);
  const VF relative = hn::Set(df, 1e-4f);
  const VF zero = hn::Zero(df);
  const uint32_t nx = static_cast<uint32_t>(grid.p2.x), ny = static_cast<uint32_t>(grid.p2.y);
  const bool implicitShape = shape.info.x == gpu::kGeomImplicit;
  const GridLanes shapeGrid = implicitShape ? gridLanes(shape, samples) : GridLanes{};
  HWY_ALIGN float sx[kMaxLanes], sy[kMaxLanes], sz[kMaxLanes];
  HWY_ALIGN float cx[kMaxLanes], cy[kMaxLanes], cz[kMaxLanes];
  HWY_ALIGN float nxs[kMaxLanes], nys[kMaxLanes], nzs[kMaxLanes], depths[kMaxLanes];
  HWY_ALIGN float tail[kMaxLanes];
  uint64_t found = 0;
  for (uint32_t l = 0; l < size.z; ++l) {
    for (uint32_t j = 0; j < size.y; ++j) {
      const uint32_t row = grid.info.y + lo.x + nx * ((lo.y + j) + ny * (lo.z + l));
      const VF y = hn::Add(g.origin.y, hn::Mul(hn::Set(df, static_cast<float>(lo.y + j)), g.spacing.y));
      const VF z = hn::Add(g.origin.z, hn::Mul(hn::Set(df, static_cast<float>(lo.z + l)), g.spacing.z));
      for (uint32_t i = 0; i < size.x; i += static_cast<uint32_t>(lanes)) {
        const size_t valid = size.x - i < lanes ? size.x - i : lanes;
        const MF inRow = hn::FirstN(df, valid);
        const VF index =
            hn::ConvertTo(df, hn::Add(hn::Iota(di, static_cast<int32_t>(lo.x + i)), hn::Zero(di)));
        const V3 x{hn::Add(g.origin.x, hn::Mul(index, g.spacing.x)), y, z};
        const float* src = samples + row + i;
        if (valid < lanes) {  // the row's last batch: no read past it
          std::memset(tail, 0, sizeof tail);
          std::memcpy(tail, src, valid * sizeof(float));
          src = tail;
        }
        const VF v = hn::LoadU(df, src);
        const VF av = glmAbs(v);
        MF live = hn::And(inRow, hn::Le(av, halfDiagonal));
        if (hn::AllFalse(df, live)) continue;
        if (!implicitShape) {
          const VF xAbs = glmMax(glmMax(glmAbs(x.x), glmAbs(x.y)), glmAbs(x.z));
          const VF sizeV = hn::Add(hn::Add(hn::Add(xAbs, shapeAbsV), shapeWs), shapeExt);
          const VF bound = hn::Add(hn::Mul(av, slack), hn::Mul(relative, sizeV));
          live = hn::AndNot(hn::Gt(closestPrimitive(shape, x).dist, bound), live);
          if (hn::AllFalse(df, live)) continue;
        }
        const V3 n = gridNormalLanes(g, grid, x);
        const V3 surface = sub(x, mul(n, v));
        ClosestLanes cl;
        if (implicitShape) {  // geomImplicitClosest: the field, then its gradient where a lane is inside
          cl.dist = gridDistanceLanes(shapeGrid, surface);
        } else {
          cl = closestPrimitive(shape, surface);
        }
        const VF depth = hn::Sub(zero, cl.dist);  // geomBallContact with radius 0
        const MF hit = hn::And(live, hn::Gt(depth, zero));
        if (hn::AllFalse(df, hit)) continue;
        if (implicitShape) {
          cl.normal = gridNormalLanes(shapeGrid, shape, surface);
          cl.surface = sub(surface, mul(cl.normal, cl.dist));
        }
        storeLanes(surface, sx, sy, sz);
        storeLanes(cl.surface, cx, cy, cz);
        storeLanes(cl.normal, nxs, nys, nzs);
        hn::Store(hn::IfThenElseZero(hit, depth), df, depths);
        for (size_t k = 0; k < valid; ++k) {
          if (!(depths[k] > 0.0f)) continue;
          const uint64_t at = total + found++;
          if (at >= capacity) continue;
          // The grid's side is the ball (the surface point, radius 0), the shape's its closest point.
          const gpu::vec3 normal(nxs[k], nys[k], nzs[k]);
          storeBallContact(outA, outB, at, !shapeIsA, gpu::vec3(sx[k], sy[k], sz[k]) - normal * 0.0f,
                           gpu::vec3(cx[k], cy[k], cz[k]), normal, depths[k],
                           ContactElementType::kPointDirection, kNoPointIndex, query);
        }
      }
    }
  }
  return found;
}

// Balls (centres c, radius r) against one implicit geometry in lanes (geomBallContact with
// geomImplicitClosest): the field at the centres, the gradient only where a lane of `live` is inside;
// each lane's ball point, the field's surface point, the normal and the depth (0 where no contact)
// in the arrays. False when no lane has a contact.
struct BallGridLanes {
  HWY_ALIGN float bx[kMaxLanes], by[kMaxLanes], bz[kMaxLanes];
  HWY_ALIGN float sx[kMaxLanes], sy[kMaxLanes], sz[kMaxLanes];
  HWY_ALIGN float nx[kMaxLanes], ny[kMaxLanes], nz[kMaxLanes], depths[kMaxLanes];

  bool contact(size_t k) const { return depths[k] > 0.0f; }
  // Lane k's contact written at `at`: the ball on side a when ballIsA.
  void store(size_t k, ContactElement* outA, ContactElement* outB, uint64_t at, bool ballIsA,
             uint32_t query) const {
    storeBallContact(outA, outB, at, ballIsA, gpu::vec3(bx[k], by[k], bz[k]), gpu::vec3(sx[k], sy[k], sz[k]),
                     gpu::vec3(nx[k], ny[k], nz[k]), depths[k], ContactElementType::kPointDirection,
                     kNoPointIndex, query);
  }
};

HWY_INLINE bool ballGridLanes(const GridLanes& g, const gpu::GeomShape& grid, const V3& c, VF r, MF live,
                              BallGridLanes& out) {
  const DF df;
  const VF d = gridDistanceLanes(g, c);
  const VF depth = hn::Sub(r, d);  // geomBallContact
  const MF hit = hn::And(hn::Gt(depth, hn::Zero(df)), live);
  hn::Store(hn::IfThenElseZero(hit, depth), df, out.depths);
  if (hn::AllFalse(df, hit)) return false;
  const V3 n = gridNormalLanes(g, grid, c);
  storeLanes(sub(c, mul(n, r)), out.bx, out.by, out.bz);  // the ball's point
  storeLanes(sub(c, mul(n, d)), out.sx, out.sy, out.sz);  // the field's surface point (geomImplicitClosest)
  storeLanes(n, out.nx, out.ny, out.nz);
  return true;
}

// The ball geometries (spheres or capsules, `ballType`) of a run of queries [i, i + valid) against
// one implicit geometry: p0 and p1 (w: the radius; a sphere's p1 unused) in lanes, ballIsA per query.
struct BallRunBatch {
  V3 p0, p1;
  VF r;
  bool ballIsA[kMaxLanes];
};

HWY_INLINE BallRunBatch gatherBallRun(const GeometryQueryInput& input, size_t i, size_t valid,
                                      GeometryType ballType) {
  const DF df;
  HWY_ALIGN float ends[2][4 * kMaxLanes];
  std::memset(ends, 0, sizeof ends);
  BallRunBatch b;
  for (size_t k = 0; k < valid; ++k) {
    const GeometryQuery& q = input.queries[i + k];
    b.ballIsA[k] = input.geometries[q.a].type == ballType;
    const Geometry& ball = input.geometries[b.ballIsA[k] ? q.a : q.b];
    std::memcpy(ends[0] + 4 * k, &ball.p0, sizeof(Float4));
    std::memcpy(ends[1] + 4 * k, &ball.p1, sizeof(Float4));
  }
  VF w;
  hn::LoadInterleaved4(df, ends[0], b.p0.x, b.p0.y, b.p0.z, b.r);
  hn::LoadInterleaved4(df, ends[1], b.p1.x, b.p1.y, b.p1.z, w);
  return b;
}

// Static spheres against one implicit geometry, lanes across a run of queries (each a sphere and the
// same grid, either order; geomImplicitCanonicalContact's sphere: the ball at the centre against the
// field, geomImplicitClosest); the hits written in query order, the sides swapped back per lane.
uint64_t SphereGridRun(const GeometryQueryInput& input, size_t begin, size_t end, const gpu::GeomShape& grid,
                       ContactElement* outA, ContactElement* outB, ContactRange* ranges, uint64_t total,
                       uint64_t capacity) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  const GridLanes g = gridLanes(grid, input.gridSamples.data());
  BallGridLanes hits;
  for (size_t i = begin; i < end; i += lanes) {
    const size_t valid = end - i < lanes ? end - i : lanes;
    const BallRunBatch b = gatherBallRun(input, i, valid, GeometryType::kSphere);
    const bool any = ballGridLanes(g, grid, b.p0, b.r, hn::FirstN(df, valid), hits);
    for (size_t k = 0; k < valid; ++k) {
      const uint32_t query = static_cast<uint32_t>(i + k);
      const bool hit = any && hits.contact(k);
      ranges[query] = ContactRange{static_cast<uint32_t>(total), hit ? 1u : 0u};
      if (!hit) continue;
      if (total < capacity) hits.store(k, outA, outB, total, b.ballIsA[k], query);
      ++total;
    }
  }
  return total;
}

// The golden-section search of geomSegmentDeepestParam and geomGridSegmentDeepestParam per lane:
// kGeomSegmentSearchSteps steps over f(x) narrowing the bracket [lo, hi], one new evaluation a step.
template <class Distance>
HWY_INLINE void goldenSectionLanes(const Distance& f, VF& lo, VF& hi) {
  const DF df;
  const VF gold = hn::Set(df, gpu::kGeomGoldenSection);
  VF x1 = hn::Sub(hi, hn::Mul(gold, hn::Sub(hi, lo)));
  VF x2 = hn::Add(lo, hn::Mul(gold, hn::Sub(hi, lo)));
  VF f1 = f(x1);
  VF f2 = f(x2);
  for (uint32_t i = 0; i < gpu::kGeomSegmentSearchSteps; ++i) {
    // f1 <= f2: hi = x2, x2 = x1, f2 = f1, x1 = hi - g (hi - lo), f1 at x1; else lo = x1, x1 = x2,
    // f1 = f2, x2 = lo + g (hi - lo), f2 at x2.
    const MF left = hn::Le(f1, f2);
    hi = hn::IfThenElse(left, x2, hi);
    lo = hn::IfThenElse(left, lo, x1);
    const VF step = hn::Mul(gold, hn::Sub(hi, lo));
    const VF xNew = hn::IfThenElse(left, hn::Sub(hi, step), hn::Add(lo, step));
    const VF fNew = f(xNew);
    const VF x1Old = x1;
    const VF f1Old = f1;
    x1 = hn::IfThenElse(left, xNew, x2);
    f1 = hn::IfThenElse(left, fNew, f2);
    x2 = hn::IfThenElse(left, x1Old, xNew);
    f2 = hn::IfThenElse(left, f1Old, fNew);
  }
}

// geomGridSegmentDeepestParam per lane: the field at kGeomAxisSamples + 1 points of [p0, p1], then
// the golden-section search around the least (one new evaluation a step, as the scalar's).
HWY_INLINE VF gridSegmentDeepestLanes(const GridLanes& g, const V3& p0, const V3& p1) {
  const DF df;
  const auto f = [&](VF x) { return gridDistanceLanes(g, mix(p0, p1, x)); };
  const float samples = static_cast<float>(gpu::kGeomAxisSamples);
  VF best = hn::Zero(df);  // the least sample's number, as a float
  VF fBest = gridDistanceLanes(g, p0);
  for (uint32_t k = 1; k <= gpu::kGeomAxisSamples; ++k) {
    const VF fk = f(hn::Set(df, static_cast<float>(k) / samples));
    const MF less = hn::Lt(fk, fBest);
    fBest = hn::IfThenElse(less, fk, fBest);
    best = hn::IfThenElse(less, hn::Set(df, static_cast<float>(k)), best);
  }
  const VF one = hn::Set(df, 1.0f);
  const VF count = hn::Set(df, samples);
  VF lo = hn::Div(hn::Sub(hn::Max(best, one), one), count);
  VF hi = hn::Div(hn::Min(hn::Add(best, one), count), count);
  goldenSectionLanes(f, lo, hi);
  const VF mid = hn::Mul(hn::Add(lo, hi), hn::Set(df, 0.5f));
  return hn::IfThenElse(hn::Lt(f(mid), fBest), mid, hn::Div(best, count));
}

// Static capsules against one implicit geometry, lanes across a run of queries (each a capsule and
// the same grid, either order): geomImplicitCanonicalContact's capsule, the axis point of least field
// in lanes, then its ball and the end balls (geomCapsuleGridContact's slots 0-2); the hits written in
// query then slot order, the sides swapped back per lane.
uint64_t CapsuleGridRun(const GeometryQueryInput& input, size_t begin, size_t end, const gpu::GeomShape& grid,
                        ContactElement* outA, ContactElement* outB, ContactRange* ranges, uint64_t total,
                        uint64_t capacity) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  const GridLanes g = gridLanes(grid, input.gridSamples.data());
  BallGridLanes hits[gpu::kGeomCapsuleImplicitSlots];
  for (size_t i = begin; i < end; i += lanes) {
    const size_t valid = end - i < lanes ? end - i : lanes;
    const MF inRun = hn::FirstN(df, valid);
    const BallRunBatch b = gatherBallRun(input, i, valid, GeometryType::kCapsule);
    const V3 c = mix(b.p0, b.p1, gridSegmentDeepestLanes(g, b.p0, b.p1));
    bool any[gpu::kGeomCapsuleImplicitSlots];
    any[0] = ballGridLanes(g, grid, c, b.r, inRun, hits[0]);
    // An end ball unless its centre lies within the radius of c (geomCapsuleGridContact).
    const VF apartMin = glmMax(b.r, hn::Set(df, 1e-30f));
    for (uint32_t slot = 1; slot < gpu::kGeomCapsuleImplicitSlots; ++slot) {
      const V3& e = slot == 1 ? b.p0 : b.p1;
      const V3 apart = sub(e, c);
      const MF live = hn::And(inRun, hn::Ge(hn::Sqrt(dot(apart, apart)), apartMin));
      any[slot] = !hn::AllFalse(df, live) && ballGridLanes(g, grid, e, b.r, live, hits[slot]);
    }
    for (size_t k = 0; k < valid; ++k) {
      const uint32_t query = static_cast<uint32_t>(i + k);
      const uint64_t first = total;
      for (uint32_t slot = 0; slot < gpu::kGeomCapsuleImplicitSlots; ++slot) {
        if (!any[slot] || !hits[slot].contact(k)) continue;
        if (total < capacity) hits[slot].store(k, outA, outB, total, b.ballIsA[k], query);
        ++total;
      }
      ranges[query] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
    }
  }
  return total;
}

// A ContactElement as 48 bytes: point, direction, then the words type, index, query, cell.
static_assert(offsetof(ContactElement, point) == 0 && offsetof(ContactElement, direction) == 16 &&
              offsetof(ContactElement, type) == 32 && offsetof(ContactElement, index) == 36 &&
              offsetof(ContactElement, query) == 40 && offsetof(ContactElement, cell) == 44 &&
              sizeof(ContactElementType) == 4 && sizeof(ContactElement) == 48);

// ---- Primitive pairs: lanes across queries ----------------------------------------------------
// A run of static queries of one closed-form pair type: each lane one query, its two geometries in
// canonical order (geomSwapped: the lower type first, geomShapeLess for one type) gathered to SoA,
// the pair's ball and closest surface point computed in lanes (geomCanonicalContact's rule for the
// pair, operation by operation), the hits written in query order with the sides swapped back.

// geomUnit per lane: v / sqrt(dot(v, v)).
HWY_INLINE V3 unitLanes(const V3& v) { return div(v, hn::Sqrt(dot(v, v))); }

HWY_INLINE V3 negLanes(const V3& v) { return {hn::Neg(v.x), hn::Neg(v.y), hn::Neg(v.z)}; }

// geomPerpendicularTo per lane: the helper (1, 0, 0) where |a.z| exceeds |a.x| and |a.y|, else
// (0, 0, 1); unit(cross(helper, a)).
HWY_INLINE V3 perpendicularLanes(const V3& a) {
  const DF df;
  const VF az = glmAbs(a.z);
  const MF useX = hn::And(hn::Gt(az, glmAbs(a.x)), hn::Gt(az, glmAbs(a.y)));
  const VF one = hn::Set(df, 1.0f);
  const V3 helper{hn::IfThenElseZero(useX, one), hn::Zero(df), hn::IfThenZeroElse(useX, one)};
  return unitLanes(cross(helper, a));
}

// geomPlaneNormalFor per lane: the unit normal, flipped for a two-sided plane when c is below it.
HWY_INLINE V3 planeNormalLanes(const V3& origin, const V3& normal, MF bidirectional, const V3& c) {
  const V3 n = unitLanes(normal);
  const MF below = hn::And(bidirectional, hn::Lt(dot(sub(c, origin), n), hn::Zero(DF())));
  return select(below, negLanes(n), n);
}

// geomClosestPlane per lane.
HWY_INLINE ClosestLanes closestPlaneLanes(const V3& origin, const V3& n, const V3& p) {
  const VF d = dot(sub(p, origin), n);
  return {sub(p, mul(n, d)), n, d};
}

// geomSegmentParam then geomClosestCapsule per lane.
HWY_INLINE ClosestLanes closestCapsuleLanes(const V3& p0, const V3& p1, VF radius, const V3& p) {
  const DF df;
  const V3 e = sub(p1, p0);
  const VF ee = dot(e, e);
  const VF t = hn::IfThenZeroElse(hn::Le(ee, hn::Zero(df)),
                                  glmClamp(hn::Div(dot(sub(p, p0), e), ee), hn::Zero(df), hn::Set(df, 1.0f)));
  return closestSphere(mix(p0, p1, t), radius, p);
}

// geomSegmentSegmentParams per lane: (s, t) of the closest points of [p0, p1] and [q0, q1].
HWY_INLINE void segmentSegmentLanes(const V3& p0, const V3& p1, const V3& q0, const V3& q1, VF& sOut, VF& tOut) {
  const DF df;
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  const V3 d1 = sub(p1, p0);
  const V3 d2 = sub(q1, q0);
  const V3 r = sub(p0, q0);
  const VF a = dot(d1, d1);
  const VF e = dot(d2, d2);
  const VF f = dot(d2, r);
  const VF c = dot(d1, r);
  const VF b = dot(d1, d2);
  const VF denom = hn::Sub(hn::Mul(a, e), hn::Mul(b, b));
  const MF general = hn::Gt(denom, hn::Mul(hn::Mul(hn::Set(df, 1e-6f), a), e));
  const VF sGeneral = glmClamp(hn::Div(hn::Sub(hn::Mul(b, f), hn::Mul(c, e)), denom), zero, one);
  const VF sq0 = hn::Div(hn::Neg(c), a);
  const VF sq1 = hn::Div(hn::Sub(b, c), a);
  const VF lo = glmMax(glmMin(sq0, sq1), zero);
  const VF hi = glmMin(glmMax(sq0, sq1), one);
  const VF sApart = hn::IfThenElse(hn::Lt(glmMax(sq0, sq1), zero), zero, one);
  const VF sParallel = hn::IfThenElse(hn::Le(lo, hi), hn::Mul(hn::Add(lo, hi), hn::Set(df, 0.5f)), sApart);
  VF s = hn::IfThenElse(general, sGeneral, sParallel);
  VF t = hn::Div(hn::Add(hn::Mul(b, s), f), e);
  const MF below = hn::Lt(t, zero);
  const MF above = hn::AndNot(below, hn::Gt(t, one));
  const VF sAtT0 = glmClamp(sq0, zero, one);  // clamp(-c / a, 0, 1)
  const VF sAtT1 = glmClamp(sq1, zero, one);  // clamp((b - c) / a, 0, 1)
  s = hn::IfThenElse(below, sAtT0, hn::IfThenElse(above, sAtT1, s));
  t = hn::IfThenElse(below, zero, hn::IfThenElse(above, one, t));
  // The degenerate segments: a point against a segment, or two points.
  const MF aZero = hn::Le(a, zero);
  const MF eZero = hn::Le(e, zero);
  s = hn::IfThenElse(eZero, sAtT0, s);
  t = hn::IfThenElseZero(hn::Not(eZero), t);
  s = hn::IfThenZeroElse(aZero, s);
  t = hn::IfThenElse(aZero, hn::IfThenZeroElse(eZero, glmClamp(hn::Div(f, e), zero, one)), t);
  sOut = s;
  tOut = t;
}

// geomSegmentDeepestParam per lane, over f(x), the signed distance of the segment's point at
// parameter x (geomSegmentLocalDistance's branch for the shape).
template <class Distance>
HWY_INLINE VF segmentDeepestLanes(const Distance& f) {
  const DF df;
  VF lo = hn::Zero(df);
  VF hi = hn::Set(df, 1.0f);
  goldenSectionLanes(f, lo, hi);
  const VF best = hn::Mul(hn::Add(lo, hi), hn::Set(df, 0.5f));
  const VF fBest = f(best);
  const VF f0 = f(hn::Zero(df));
  const VF fEnd = f(hn::Set(df, 1.0f));
  const MF atStart = hn::And(hn::Le(f0, fBest), hn::Le(f0, fEnd));
  return hn::IfThenZeroElse(atStart, hn::IfThenElse(hn::Lt(fEnd, fBest), hn::Set(df, 1.0f), best));
}

// geomSegmentLocalDistance's cylinder branch: the ends d0, d1 relative to the centre, the unit axis,
// the radius r and half height hh.
HWY_INLINE VF cylinderSegmentDistanceLanes(const V3& d0, const V3& d1, const V3& axis, VF r, VF hh, VF x) {
  const DF df;
  const VF zero = hn::Zero(df);
  const V3 d = mix(d0, d1, x);
  const VF y = dot(d, axis);
  const V3 radial = sub(d, mul(axis, y));
  const VF rho = hn::Sqrt(dot(radial, radial));
  const VF outR = hn::Sub(rho, r);
  const VF outY = hn::Sub(glmAbs(y), hh);
  const MF inR = hn::Le(outR, zero);
  const MF inY = hn::Le(outY, zero);
  const VF rim = hn::Sqrt(hn::Add(hn::Mul(outR, outR), hn::Mul(outY, outY)));
  const VF oneSide = hn::IfThenElse(inY, outR, hn::IfThenElse(inR, outY, rim));
  return hn::IfThenElse(hn::And(inR, inY), glmMax(outR, outY), oneSide);
}

// One lane batch's geometries: side s (the lower type) and t, p0, p1, p2 as AoS Float4 per lane, and
// t's plane flag (1: two-sided).
struct PairGather {
  HWY_ALIGN float s0[4 * kMaxLanes];
  HWY_ALIGN float s1[4 * kMaxLanes];
  HWY_ALIGN float s2[4 * kMaxLanes];
  HWY_ALIGN float t0[4 * kMaxLanes];
  HWY_ALIGN float t1[4 * kMaxLanes];
  HWY_ALIGN float t2[4 * kMaxLanes];
  HWY_ALIGN float tTwoSided[kMaxLanes];
  bool swapped[kMaxLanes];
};

struct Lanes4 {
  V3 v;
  VF w;
};

HWY_INLINE Lanes4 load4(const float* aos) {
  Lanes4 l;
  hn::LoadInterleaved4(DF(), aos, l.v.x, l.v.y, l.v.z, l.w);
  return l;
}

// The ball (centre c, radius r) and the closest surface point of the other side for one pair type.
struct BallLanes {
  V3 c;
  VF r;
  ClosestLanes cl;
};

// Slots of a pair: 2 capsule-plane (its end spheres) and capsule-cylinder (the ends of a span), 4
// cylinder-plane (its rim points), else 1 (box-plane: BoxPlaneRun).
template <uint32_t kLo, uint32_t kHi>
constexpr size_t kPairSlots = (kLo == gpu::kGeomCapsule && kHi == gpu::kGeomCylinder)
                                  ? gpu::kGeomCapsuleCylinderSlots
                              : kHi != gpu::kGeomPlane    ? 1
                              : kLo == gpu::kGeomCapsule  ? gpu::kGeomCapsulePlaneSlots
                              : kLo == gpu::kGeomCylinder ? gpu::kGeomCylinderPlaneSlots
                                                          : 1;

// Capsule-plane (geomCanonicalContact's plane branch): each end sphere against the normal the plane
// shows to the axis' middle; end 1 of a capsule of length 0 is no slot.
HWY_INLINE void capsulePlaneBalls(const PairGather& g, BallLanes* balls, MF* slotOk) {
  const DF df;
  const Lanes4 s0 = load4(g.s0);
  const V3 p1 = load4(g.s1).v;
  const V3 origin = load4(g.t0).v;
  const MF twoSided = hn::Ne(hn::Load(df, g.tTwoSided), hn::Zero(df));
  const V3 middle = mul(add(s0.v, p1), hn::Set(df, 0.5f));
  const V3 n = planeNormalLanes(origin, load4(g.t1).v, twoSided, middle);
  balls[0] = {s0.v, s0.w, closestPlaneLanes(origin, n, s0.v)};
  balls[1] = {p1, s0.w, closestPlaneLanes(origin, n, p1)};
  slotOk[0] = hn::FirstN(df, hn::Lanes(df));
  slotOk[1] = notEqual(p1, s0.v);
}

// Cylinder-plane (geomCylinderPlanePoint's slots): balls of radius 0 at the rim points, against the
// normal the plane shows to the cylinder's centre; slots 1-3 only in the lanes standing or lying.
HWY_INLINE void cylinderPlaneBalls(const PairGather& g, BallLanes* balls, MF* slotOk) {
  const DF df;
  const Lanes4 s0 = load4(g.s0);
  const Lanes4 s1 = load4(g.s1);
  const V3 origin = load4(g.t0).v;
  const MF twoSided = hn::Ne(hn::Load(df, g.tTwoSided), hn::Zero(df));
  const V3 n = planeNormalLanes(origin, load4(g.t1).v, twoSided, s0.v);
  const VF zero = hn::Zero(df);
  const V3 axis = unitLanes(s1.v);
  const VF an = dot(axis, n);
  const VF axial = hn::IfThenElse(hn::Lt(an, zero), s1.w, hn::Neg(s1.w));
  const V3 w = sub(n, mul(axis, an));
  const VF lw = hn::Sqrt(dot(w, w));
  const MF tilted = hn::Gt(lw, hn::Set(df, 1e-6f));
  const V3 perpendicular = perpendicularLanes(axis);
  const V3 towards = div(negLanes(w), lw);
  const V3 down = select(tilted, towards, perpendicular);
  const V3 radial = mul(down, s0.w);
  const VF sine = hn::Set(df, gpu::kGeomCylinderFlatSine);
  const MF lying = hn::Le(glmAbs(an), sine);
  const MF standing = hn::And(hn::Not(hn::Gt(lw, sine)), hn::Ne(s0.w, zero));
  const V3 cap = add(s0.v, mul(axis, axial));
  const V3 lowest = add(cap, radial);
  balls[0] = {lowest, zero, closestPlaneLanes(origin, n, lowest)};
  slotOk[0] = hn::FirstN(df, hn::Lanes(df));
  slotOk[1] = hn::Or(hn::And(lying, hn::Ne(s1.w, zero)), hn::AndNot(lying, standing));
  slotOk[2] = standing;
  slotOk[3] = standing;
  // Slots 1-3 only where a lane stands or lies (batchHits reads no ball of a slot without a lane).
  if (hn::AllFalse(df, slotOk[1])) return;
  const V3 side = mul(cross(axis, down), s0.w);
  const V3 far = add(add(s0.v, mul(axis, hn::Neg(axial))), radial);
  const V3 quarter = add(cap, side);
  const V3 points[3] = {select(lying, far, quarter), add(cap, negLanes(radial)), add(cap, negLanes(side))};
  for (size_t slot = 1; slot < 4; ++slot) {
    balls[slot] = {points[slot - 1], zero, closestPlaneLanes(origin, n, points[slot - 1])};
  }
}

// Capsule-cylinder (geomCapsuleCylinderSpan and geomCapsuleCylinderSlot): the deepest axis parameter
// by the golden-section search in lanes, then the span over a cap or along the wall in lanes; slot 0
// the ball at the span's first end (the deepest point where there is no span), slot 1 at its second
// end only in the lanes with a span.
HWY_INLINE void capsuleCylinderBalls(const PairGather& g, BallLanes* balls, MF* slotOk) {
  const DF df;
  const Lanes4 s0 = load4(g.s0);
  const Lanes4 t0 = load4(g.t0);
  const V3 p1 = load4(g.s1).v;
  const Lanes4 t1 = load4(g.t1);
  const V3 axis = unitLanes(t1.v);
  const V3 perpendicular = perpendicularLanes(axis);
  const V3 d0 = sub(s0.v, t0.v);
  const V3 d1 = sub(p1, t0.v);
  const VF x =
      segmentDeepestLanes([&](VF at) { return cylinderSegmentDistanceLanes(d0, d1, axis, t0.w, t1.w, at); });
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  const VF rr = hn::Mul(t0.w, t0.w);
  const VF h = t1.w;
  const V3 deep = mix(d0, d1, x);
  const VF yDeep = dot(deep, axis);
  const V3 qDeep = sub(deep, mul(axis, yDeep));
  const MF overDisc = hn::Le(dot(qDeep, qDeep), rr);
  const MF cap = hn::And(hn::Gt(glmAbs(yDeep), h), overDisc);
  const MF wall = hn::AndNot(overDisc, hn::Le(glmAbs(yDeep), h));
  slotOk[0] = hn::FirstN(df, hn::Lanes(df));
  MF two = hn::Or(cap, wall);
  VF x0 = x;
  VF x1 = x;
  if (!hn::AllFalse(df, two)) {
    const VF y0d = dot(d0, axis);
    const V3 q0 = sub(d0, mul(axis, y0d));
    const V3 q1 = sub(d1, mul(axis, dot(d1, axis)));
    const V3 qd = sub(q1, q0);
    // Over a cap: the roots of a t^2 + 2 b t + c (a > 0; else the whole axis or none).
    const VF a = dot(qd, qd);
    const VF b = dot(q0, qd);
    const VF c = hn::Sub(dot(q0, q0), rr);
    const MF positive = hn::Gt(a, zero);
    const VF disc = hn::Sub(hn::Mul(b, b), hn::Mul(a, c));
    const VF root = hn::Sqrt(glmMax(disc, zero));
    const VF safeA = hn::IfThenElse(positive, a, one);
    const VF capT0 = hn::IfThenElse(positive, glmMax(zero, hn::Div(hn::Sub(hn::Neg(b), root), safeA)), zero);
    const VF capT1 = hn::IfThenElse(positive, glmMin(one, hn::Div(hn::Add(hn::Neg(b), root), safeA)), one);
    const MF capOk =
        hn::Or(hn::And(positive, hn::Gt(disc, zero)), hn::AndNot(positive, hn::Not(hn::Gt(c, zero))));
    // Along the wall: the axis within the height, where it is parallel to the cylinder's.
    const V3 dd = sub(d1, d0);
    const VF along = dot(dd, axis);
    const VF sine2 = hn::Set(df, gpu::kGeomCylinderFlatSine * gpu::kGeomCylinderFlatSine);
    const MF wallOk = hn::And(hn::Le(dot(qd, qd), hn::Mul(sine2, dot(dd, dd))), hn::Ne(along, zero));
    const VF safeAlong = hn::IfThenElse(hn::Ne(along, zero), along, one);
    const VF ta = hn::Div(hn::Sub(hn::Neg(h), y0d), safeAlong);
    const VF tb = hn::Div(hn::Sub(h, y0d), safeAlong);
    const VF t0s = hn::IfThenElse(cap, capT0, glmMax(zero, glmMin(ta, tb)));
    const VF t1s = hn::IfThenElse(cap, capT1, glmMin(one, glmMax(ta, tb)));
    two = hn::Or(hn::And(cap, capOk), hn::And(wall, wallOk));
    two = hn::And(two, hn::Gt(hn::Sub(t1s, t0s), hn::Set(df, 1e-6f)));
    const V3 e0 = mix(d0, d1, t0s);
    const V3 e1 = mix(d0, d1, t1s);
    const VF y0 = dot(e0, axis);
    const VF y1 = dot(e1, axis);
    const VF side = hn::IfThenElse(hn::Gt(yDeep, zero), one, hn::Neg(one));
    const MF capEnds = hn::And(hn::Gt(hn::Mul(y0, side), h), hn::Gt(hn::Mul(y1, side), h));
    const V3 r0 = sub(e0, mul(axis, y0));
    const V3 r1 = sub(e1, mul(axis, y1));
    const MF wallEnds = hn::And(hn::Gt(dot(r0, r0), rr), hn::Gt(dot(r1, r1), rr));
    two = hn::And(two, hn::Or(hn::And(cap, capEnds), hn::AndNot(cap, wallEnds)));
    x0 = hn::IfThenElse(two, glmMin(t0s, x), x);
    x1 = hn::IfThenElse(two, glmMax(t1s, x), x);
  }
  const V3 ball0 = mix(s0.v, p1, x0);
  balls[0] = {ball0, s0.w, closestCylinderLanes(t0.v, axis, perpendicular, t0.w, t1.w, ball0)};
  slotOk[1] = two;
  if (hn::AllFalse(df, two)) return;
  const V3 ball1 = mix(s0.v, p1, x1);
  balls[1] = {ball1, s0.w, closestCylinderLanes(t0.v, axis, perpendicular, t0.w, t1.w, ball1)};
}

template <uint32_t kLo, uint32_t kHi>
HWY_INLINE BallLanes pairBall(const PairGather& g) {
  const DF df;
  const Lanes4 s0 = load4(g.s0);
  const Lanes4 t0 = load4(g.t0);
  if constexpr (kLo == gpu::kGeomSphere) {
    if constexpr (kHi == gpu::kGeomSphere) {
      return {s0.v, s0.w, closestSphere(t0.v, t0.w, s0.v)};
    } else if constexpr (kHi == gpu::kGeomCapsule) {
      return {s0.v, s0.w, closestCapsuleLanes(t0.v, load4(g.t1).v, t0.w, s0.v)};
    } else if constexpr (kHi == gpu::kGeomCylinder) {
      const Lanes4 t1 = load4(g.t1);
      const V3 axis = unitLanes(t1.v);
      return {s0.v, s0.w, closestCylinderLanes(t0.v, axis, perpendicularLanes(axis), t0.w, t1.w, s0.v)};
    } else if constexpr (kHi == gpu::kGeomOrientedBox) {
      const Lanes4 q = load4(g.t1);
      // geomQuatUnit: q / sqrt(((x x + y y) + z z) + w w).
      const VF qq = hn::Add(hn::Add(hn::Add(hn::Mul(q.v.x, q.v.x), hn::Mul(q.v.y, q.v.y)), hn::Mul(q.v.z, q.v.z)),
                            hn::Mul(q.w, q.w));
      const VF qLen = hn::Sqrt(qq);
      return {s0.v, s0.w, closestBoxLanes(t0.v, div(q.v, qLen), hn::Div(q.w, qLen), load4(g.t2).v, s0.v)};
    } else {  // plane
      const MF twoSided = hn::Ne(hn::Load(df, g.tTwoSided), hn::Zero(df));
      const V3 n = planeNormalLanes(t0.v, load4(g.t1).v, twoSided, s0.v);
      return {s0.v, s0.w, closestPlaneLanes(t0.v, n, s0.v)};
    }
  } else {
    static_assert(kLo == gpu::kGeomCapsule && kHi == gpu::kGeomCapsule, "pairBall: the pairs of one ball");
    const V3 p1 = load4(g.s1).v;
    const V3 q1 = load4(g.t1).v;
    VF s;
    VF t;
    segmentSegmentLanes(s0.v, p1, t0.v, q1, s, t);
    const V3 ballT = mix(t0.v, q1, t);
    const V3 ballS = mix(s0.v, p1, s);
    return {ballS, s0.w, closestSphere(ballT, t0.w, ballS)};
  }
}

// Copies the vectors a side of type kType uses (a sphere p0; a capsule, cylinder or plane p0, p1; a
// box p0, p1, p2) into lane k of the gather.
template <uint32_t kType>
HWY_INLINE void gatherSide(const Geometry& g, size_t k, float* p0, float* p1, float* p2) {
  std::memcpy(p0 + 4 * k, &g.p0, sizeof(Float4));
  if constexpr (kType != gpu::kGeomSphere) std::memcpy(p1 + 4 * k, &g.p1, sizeof(Float4));
  if constexpr (kType == gpu::kGeomOrientedBox) std::memcpy(p2 + 4 * k, &g.p2, sizeof(Float4));
}

gpu::GeomShape shapeOf(const Geometry& g) {
  gpu::GeomShape s;
  std::memcpy(&s, &g, sizeof s);
  return s;
}

// gpu::geomShapeLess(a, b) for two geometries of one type, without a branch on the first differing
// component (random pairs mispredict it half the time): the comparisons of p0, p1, p2 as bit masks,
// the lowest differing component deciding; equal vectors fall back to the scalar rule (info). Only
// the first kWords words: the type's words past them are zero (+0 or -0: validated), equal under
// < and >, as the scalar rule sees them.
template <uint32_t kType>
constexpr uint32_t kShapeWords = kType == gpu::kGeomSphere ? 4u : (kType == gpu::kGeomOrientedBox ? 12u : 8u);

template <uint32_t kType>
HWY_INLINE bool shapeLess(const Geometry& a, const Geometry& b) {
  constexpr uint32_t kWords = kShapeWords<kType>;
  float fa[kWords];
  float fb[kWords];
  std::memcpy(fa, &a.p0, sizeof fa);
  std::memcpy(fb, &b.p0, sizeof fb);
  uint32_t lt = 0;
  uint32_t gt = 0;
  for (uint32_t k = 0; k < kWords; ++k) {
    lt |= static_cast<uint32_t>(fa[k] < fb[k]) << k;
    gt |= static_cast<uint32_t>(fa[k] > fb[k]) << k;
  }
  const uint32_t differ = lt | gt;
  if (differ == 0u) [[unlikely]] return gpu::geomShapeLess(shapeOf(a), shapeOf(b));
  return (lt & (differ & (0u - differ))) != 0u;
}

// `pick ? b : a` without a branch (the sides' order is random across queries).
HWY_INLINE const Geometry& pickGeometry(bool pick, const Geometry& a, const Geometry& b) {
  const uintptr_t pa = reinterpret_cast<uintptr_t>(&a);
  const uintptr_t pb = reinterpret_cast<uintptr_t>(&b);
  return *reinterpret_cast<const Geometry*>(pa ^ ((pa ^ pb) & (uintptr_t{0} - static_cast<uintptr_t>(pick))));
}

// Writes one contact element from the lanes' stores: its point (16 bytes, w included) and direction
// (16) as Float4 of one lane, then the words after them (ContactElement: type, index, query, cell), as
// makeElement writes them.
HWY_INLINE void storeElement(ContactElement* to, const float* point, const float* direction,
                             const uint32_t* tail) {
  unsigned char* bytes = reinterpret_cast<unsigned char*>(to);
  std::memcpy(bytes, point, 16);
  std::memcpy(bytes + 16, direction, 16);
  std::memcpy(bytes + 32, tail, 16);
}

// Gathers queries[0, valid) of a lane batch into `g` (each query's sides in canonical order).
template <uint32_t kLo, uint32_t kHi>
HWY_INLINE bool gatherBatch(const Geometry* geometries, const GeometryQuery* queries, size_t valid,
                            PairGather& g) {
  bool pairs = true;  // every query's types are the pair's (kLo, kHi) in either order
  for (size_t k = 0; k < valid; ++k) {
    const Geometry& a = geometries[queries[k].a];
    const Geometry& b = geometries[queries[k].b];
    const uint32_t ta = static_cast<uint32_t>(a.type);
    const uint32_t tb = static_cast<uint32_t>(b.type);
    pairs &= (ta == kLo && tb == kHi) || (ta == kHi && tb == kLo);
    bool swapped;
    if constexpr (kLo == kHi) {
      swapped = shapeLess<kLo>(b, a);
    } else {
      swapped = a.type != static_cast<GeometryType>(kLo);
    }
    g.swapped[k] = swapped;
    const Geometry& s = pickGeometry(swapped, a, b);
    const Geometry& t = pickGeometry(swapped, b, a);
    gatherSide<kLo>(s, k, g.s0, g.s1, g.s2);
    gatherSide<kHi>(t, k, g.t0, g.t1, g.t2);
    if constexpr (kHi == gpu::kGeomPlane) g.tTwoSided[k] = (t.flags & kGeometryFlagBidirectional) != 0 ? 1.0f : 0.0f;
  }
  return pairs;
}

// The balls of a gathered lane batch, per slot, and the slots that exist (slotOk).
template <uint32_t kLo, uint32_t kHi>
HWY_INLINE void batchBalls(const PairGather& g, BallLanes* balls, MF* slotOk) {
  if constexpr (kLo == gpu::kGeomCapsule && kHi == gpu::kGeomPlane) {
    capsulePlaneBalls(g, balls, slotOk);
  } else if constexpr (kLo == gpu::kGeomCylinder && kHi == gpu::kGeomPlane) {
    cylinderPlaneBalls(g, balls, slotOk);
  } else if constexpr (kLo == gpu::kGeomCapsule && kHi == gpu::kGeomCylinder) {
    capsuleCylinderBalls(g, balls, slotOk);
  } else {
    const DF df;
    balls[0] = pairBall<kLo, kHi>(g);
    slotOk[0] = hn::FirstN(df, hn::Lanes(df));
  }
}

// The contacts of a lane batch's balls (geomBallContact: depth r - distance; the ball's point c - n r,
// the other's the surface point): per slot, lane k's ball point (w: the depth), normal (w: 0), other
// side's surface point (w: the depth) and, where otherDirection is given, the negated normal (w: 0)
// as Float4 at 4 k; per lane (below `valid`), its contacts (counts) and the slots holding them (bit
// slot of slotMasks).
template <size_t kSlots>
HWY_INLINE void batchHits(const BallLanes* balls, const MF* slotOk, size_t valid, float (*ballPoint)[4 * kMaxLanes],
                          float (*ballDirection)[4 * kMaxLanes], float (*otherPoint)[4 * kMaxLanes],
                          float (*otherDirection)[4 * kMaxLanes], uint32_t* counts, uint32_t* slotMasks) {
  const DF df;
  const DU du;
  const MF inBatch = hn::FirstN(df, valid);
  VU laneCount = hn::Zero(du);
  VU laneSlots = hn::Zero(du);
  for (size_t slot = 0; slot < kSlots; ++slot) {
    // A slot no lane has is not read (its ball may be unset: cylinderPlaneBalls), one no lane hits
    // not stored (the lanes' stores are most of a batch's work; cylinder-plane's slots 1-3 are rare).
    const MF live = hn::And(slotOk[slot], inBatch);
    if (slot != 0 && hn::AllFalse(df, live)) continue;
    const BallLanes& ball = balls[slot];
    const VF depth = hn::Sub(ball.r, ball.cl.dist);
    const MF hit = hn::And(hn::Gt(depth, hn::Zero(df)), live);
    if (slot != 0 && hn::AllFalse(df, hit)) continue;
    const auto hitU = hn::RebindMask(du, hit);
    laneCount = hn::Add(laneCount, hn::IfThenElseZero(hitU, hn::Set(du, 1u)));
    laneSlots = hn::Or(laneSlots, hn::IfThenElseZero(hitU, hn::Set(du, 1u << slot)));
    const V3 onBall = sub(ball.c, mul(ball.cl.normal, ball.r));
    const V3& n = ball.cl.normal;
    hn::StoreInterleaved4(onBall.x, onBall.y, onBall.z, depth, df, ballPoint[slot]);
    hn::StoreInterleaved4(n.x, n.y, n.z, hn::Zero(df), df, ballDirection[slot]);
    hn::StoreInterleaved4(ball.cl.surface.x, ball.cl.surface.y, ball.cl.surface.z, depth, df, otherPoint[slot]);
    if (otherDirection != nullptr) {
      hn::StoreInterleaved4(hn::Neg(n.x), hn::Neg(n.y), hn::Neg(n.z), hn::Zero(df), df, otherDirection[slot]);
    }
  }
  hn::Store(laneCount, du, counts);
  hn::Store(laneSlots, du, slotMasks);
}

template <uint32_t kLo, uint32_t kHi>
uint64_t PairRun(const GeometryQueryInput& input, size_t begin, size_t end, ContactElement* outA, ContactElement* outB,
                 ContactRange* ranges, uint64_t total, uint64_t capacity) {
  constexpr size_t kSlots = kPairSlots<kLo, kHi>;
  const DF df;
  const size_t lanes = hn::Lanes(df);
  PairGather g;
  std::memset(&g, 0, sizeof g);
  // Per slot, lane k's two elements' point and direction as Float4 (at 4 k): the ball's point (w: the
  // depth) and the normal, the other side's surface point (w: the depth) and the negated normal (w 0),
  // read where a contact is. Per lane: its contacts and the slots that hold them (bit slot).
  static_assert(kMaxLanes <= 64, "a lane batch's hits are the bits of a 64-bit word");
  HWY_ALIGN float ballPoint[kSlots][4 * kMaxLanes], ballDirection[kSlots][4 * kMaxLanes];
  HWY_ALIGN float otherPoint[kSlots][4 * kMaxLanes], otherDirection[kSlots][4 * kMaxLanes];
  HWY_ALIGN uint32_t counts[kMaxLanes];
  HWY_ALIGN uint32_t slotMasks[kMaxLanes];
  const Geometry* geometries = input.geometries.data();
  const GeometryQuery* queries = input.queries.data();
  for (size_t i = begin; i < end; i += lanes) {
    const size_t valid = end - i < lanes ? end - i : lanes;
    gatherBatch<kLo, kHi>(geometries, queries + i, valid, g);
    BallLanes balls[kSlots];
    MF slotOk[kSlots];
    batchBalls<kLo, kHi>(g, balls, slotOk);
    batchHits<kSlots>(balls, slotOk, valid, ballPoint, ballDirection, otherPoint, otherDirection, counts, slotMasks);
    // The ranges without a branch per query (where a third touch, one mispredicts often): each
    // query's first contact is the run's total so far.
    uint64_t firstOf[kMaxLanes];
    for (size_t k = 0; k < valid; ++k) {
      firstOf[k] = total;
      ranges[i + k] = ContactRange{static_cast<uint32_t>(total), counts[k]};
      total += counts[k];
    }
    // Then the contacts of the queries that have some (their lanes' bits), in slot order.
    uint8_t hitBytes[8] = {};
    const DU du;
    hn::StoreMaskBits(du, hn::Ne(hn::Load(du, counts), hn::Zero(du)), hitBytes);
    uint64_t hitLanes;
    std::memcpy(&hitLanes, hitBytes, sizeof hitLanes);
    for (; hitLanes != 0u; hitLanes &= hitLanes - 1u) {
      const size_t k = hwy::Num0BitsBelowLS1Bit_Nonzero64(hitLanes);
      uint32_t slots = slotMasks[k];
      // The words after point and direction (ContactElement: type, index, query, cell), as
      // makeElement writes them.
      const uint32_t tail[4] = {static_cast<uint32_t>(ContactElementType::kPointDirection), kNoPointIndex,
                                static_cast<uint32_t>(i + k), 0u};
      ContactElement* ballOut = g.swapped[k] ? outB : outA;
      ContactElement* otherOut = g.swapped[k] ? outA : outB;
      for (uint64_t at = firstOf[k]; slots != 0u; slots &= slots - 1u, ++at) {
        if (at >= capacity) break;
        const size_t slot = static_cast<size_t>(hwy::Num0BitsBelowLS1Bit_Nonzero32(slots));
        storeElement(ballOut + at, ballPoint[slot] + 4 * k, ballDirection[slot] + 4 * k, tail);
        storeElement(otherOut + at, otherPoint[slot] + 4 * k, otherDirection[slot] + 4 * k, tail);
      }
    }
  }
  return total;
}

// ---- Capsule-box: the deepest parameter in lanes, the manifold per query --------------------------
// geomQueryContacts' capsule-box branch: geomSegmentDeepestParam's golden-section search (its 36
// steps and 3 end evaluations of geomSegmentLocalDistance, both branches' updates selected per lane)
// in lanes, then geomCapsuleBoxManifoldAt per query with that parameter. The same operations: the
// same bits. (Box-box: BoxBoxRun below.)

// geomQuatUnit per lane: q / sqrt(((x x + y y) + z z) + w w).
HWY_INLINE void quatUnitLanes(const Lanes4& q, V3& u, VF& w) {
  const VF qq = hn::Add(hn::Add(hn::Add(hn::Mul(q.v.x, q.v.x), hn::Mul(q.v.y, q.v.y)), hn::Mul(q.v.z, q.v.z)),
                        hn::Mul(q.w, q.w));
  const VF qLen = hn::Sqrt(qq);
  u = div(q.v, qLen);
  w = hn::Div(q.w, qLen);
}

// A box's rotated x, y and z axes (geomRotate of the unit vectors).
HWY_INLINE void boxAxesLanes(const Lanes4& q, V3* axes) {
  V3 u;
  VF w;
  quatUnitLanes(q, u, w);
  axes[0] = rotate(u, w, splat(gpu::vec3(1.0f, 0.0f, 0.0f)));
  axes[1] = rotate(u, w, splat(gpu::vec3(0.0f, 1.0f, 0.0f)));
  axes[2] = rotate(u, w, splat(gpu::vec3(0.0f, 0.0f, 1.0f)));
}

// geomBoxRadius: ((e.x |ax.L| + e.y |ay.L|) + e.z |az.L|).
HWY_INLINE VF boxRadiusLanes(const V3* axes, const V3& e, const V3& L) {
  return hn::Add(hn::Add(hn::Mul(e.x, glmAbs(dot(axes[0], L))), hn::Mul(e.y, glmAbs(dot(axes[1], L)))),
                 hn::Mul(e.z, glmAbs(dot(axes[2], L))));
}

// geomBoxBoxBestAxis per lane in two halves, with the scalar code's choices as masks (the first face
// axis taken, a later one on a smaller overlap, an edge axis only below the best and the biased best
// face): the 6 face axes' overlaps, then the 9 edge axes' (only for the lanes no face axis
// separates); kind 3 where some axis separates.
struct BoxBoxAxisLanes {
  V3 A[3];
  V3 B[3];
  V3 bestAxis;
  VF best;
  VF kind;  // 0, 1, 2 or 3 (as floats)
  VF bi;
  VF bj;
};

// The overlap of the boxes' projections on L (less the centres' distance d along it).
HWY_INLINE VF boxBoxOverlapLanes(const V3* A, const V3* B, const V3& eA, const V3& eB, const V3& d, const V3& L) {
  return hn::Sub(hn::Add(boxRadiusLanes(A, eA, L), boxRadiusLanes(B, eB, L)), glmAbs(dot(d, L)));
}

// The face axes (x.A and x.B set): the lanes some face axis separates.
HWY_INLINE MF boxBoxFaceAxesLanes(const V3& eA, const V3& eB, const V3& d, BoxBoxAxisLanes& x) {
  const DF df;
  const VF zero = hn::Zero(df);
  MF separated = hn::FirstN(df, 0);
  x.best = zero;
  x.bestAxis = V3{zero, zero, zero};
  x.kind = zero;
  x.bi = zero;
  x.bj = zero;
  for (uint32_t k = 0; k < 6; ++k) {
    const V3& L = k < 3 ? x.A[k] : x.B[k - 3];
    const VF overlap = boxBoxOverlapLanes(x.A, x.B, eA, eB, d, L);
    separated = hn::Or(separated, hn::Le(overlap, zero));
    const MF take = k == 0 ? hn::FirstN(df, hn::Lanes(df)) : hn::Lt(overlap, x.best);
    x.best = hn::IfThenElse(take, overlap, x.best);
    x.bestAxis = select(take, L, x.bestAxis);
    x.kind = hn::IfThenElse(take, hn::Set(df, k < 3 ? 0.0f : 1.0f), x.kind);
    x.bi = hn::IfThenElse(take, hn::Set(df, static_cast<float>(k % 3)), x.bi);
  }
  return separated;
}

// The edge axes after the face axes: x.kind 3 where one separates the boxes.
HWY_INLINE void boxBoxEdgeAxesLanes(const V3& eA, const V3& eB, const V3& d, BoxBoxAxisLanes& x) {
  const DF df;
  const VF zero = hn::Zero(df);
  MF separated = hn::FirstN(df, 0);
  const VF faceLimit = hn::Mul(x.best, hn::Set(df, 1.0f - gpu::kGeomBoxEdgeBias));
  const VF minLength = hn::Set(df, 1e-5f);
  for (uint32_t i = 0; i < 3; ++i) {
    for (uint32_t j = 0; j < 3; ++j) {
      const V3 c = cross(x.A[i], x.B[j]);
      const VF len = hn::Sqrt(dot(c, c));
      const MF used = hn::Not(hn::Le(len, minLength));  // parallel edges skipped
      const V3 L = div(c, len);
      const VF overlap = boxBoxOverlapLanes(x.A, x.B, eA, eB, d, L);
      separated = hn::Or(separated, hn::And(used, hn::Le(overlap, zero)));
      const MF take = hn::And(used, hn::And(hn::Lt(overlap, x.best), hn::Lt(overlap, faceLimit)));
      x.best = hn::IfThenElse(take, overlap, x.best);
      x.bestAxis = select(take, L, x.bestAxis);
      x.kind = hn::IfThenElse(take, hn::Set(df, 2.0f), x.kind);
      x.bi = hn::IfThenElse(take, hn::Set(df, static_cast<float>(i)), x.bi);
      x.bj = hn::IfThenElse(take, hn::Set(df, static_cast<float>(j)), x.bj);
    }
  }
  x.kind = hn::IfThenElse(separated, hn::Set(df, 3.0f), x.kind);
}

// Stores lanes of a vector (SoA) at 3 consecutive rows of kMaxLanes floats.
HWY_INLINE void store3(const V3& v, float* rows) {
  const DF df;
  hn::Store(v.x, df, rows);
  hn::Store(v.y, df, rows + kMaxLanes);
  hn::Store(v.z, df, rows + 2 * kMaxLanes);
}

// geomSegmentLocalDistance's box branch: the ends d0, d1 in the box's axes, half extents h.
HWY_INLINE VF boxSegmentDistanceLanes(const V3& d0, const V3& d1, const V3& h, VF x) {
  const DF df;
  const V3 d = mix(d0, d1, x);
  const V3 off = sub(d, V3{glmClamp(d.x, hn::Neg(h.x), h.x), glmClamp(d.y, hn::Neg(h.y), h.y),
                           glmClamp(d.z, hn::Neg(h.z), h.z)});
  const VF len2 = dot(off, off);
  const V3 faceDepth = sub(h, V3{glmAbs(d.x), glmAbs(d.y), glmAbs(d.z)});
  const VF inside = hn::Neg(glmMin(glmMin(faceDepth.x, faceDepth.y), faceDepth.z));
  return hn::IfThenElse(hn::Gt(len2, hn::Zero(df)), hn::Sqrt(len2), inside);
}

// |x| + |y| + |z| per lane.
HWY_INLINE VF sumAbs(const V3& v) { return hn::Add(hn::Add(hn::Abs(v.x), hn::Abs(v.y)), hn::Abs(v.z)); }

// Lanes whose capsule is clearly apart from its box: both axis ends beyond one of the box's face
// slabs (in the box's axes) by more than the radius and a margin (1e-4 of the coordinates' sizes,
// far above the rounding of geomClosestBox's own local point on the axis). No ball on the axis then
// reaches the box (its distance is at least that excess), so geomCapsuleBoxManifoldAt has no contact:
// those lanes skip it (the separated two thirds of random pairs).
HWY_INLINE MF capsuleBoxApartLanes(const V3& p0, const V3& p1, const V3& c, const V3& h, VF r, const V3& d0,
                                   const V3& d1) {
  const DF df;
  const VF size = hn::Add(hn::Add(hn::Add(sumAbs(p0), sumAbs(p1)), hn::Add(sumAbs(c), sumAbs(h))), r);
  const VF reach = hn::Add(r, hn::Mul(size, hn::Set(df, 1e-4f)));
  MF apart = hn::FirstN(df, 0);
  const VF lo[3] = {d0.x, d0.y, d0.z};
  const VF hi[3] = {d1.x, d1.y, d1.z};
  const VF ext[3] = {h.x, h.y, h.z};
  for (uint32_t j = 0; j < 3; ++j) {
    const VF limit = hn::Add(ext[j], reach);
    apart = hn::Or(apart, hn::Gt(hn::Min(lo[j], hi[j]), limit));
    apart = hn::Or(apart, hn::Lt(hn::Max(lo[j], hi[j]), hn::Neg(limit)));
  }
  return apart;
}

// geomSegmentDeepestParam of the capsule's axis (s) in the box (t), per lane; `apart`: the lanes
// capsuleBoxApartLanes finds clearly apart.
HWY_INLINE VF capsuleBoxDeepestLanes(const PairGather& g, MF& apart) {
  const Lanes4 s0 = load4(g.s0);
  const V3 p0 = s0.v;
  const V3 p1 = load4(g.s1).v;
  const V3 c = load4(g.t0).v;
  const V3 h = load4(g.t2).v;
  V3 u;
  VF w;
  quatUnitLanes(load4(g.t1), u, w);
  const V3 uInverse = negLanes(u);  // geomRotateInverse: (-q.xyz, q.w)
  const V3 d0 = rotate(uInverse, w, sub(p0, c));
  const V3 d1 = rotate(uInverse, w, sub(p1, c));
  apart = capsuleBoxApartLanes(p0, p1, c, h, s0.w, d0, d1);
  return segmentDeepestLanes([&](VF x) { return boxSegmentDistanceLanes(d0, d1, h, x); });
}

uint64_t CapsuleBoxRun(const GeometryQueryInput& input, size_t begin, size_t end, ContactElement* outA,
                       ContactElement* outB, ContactRange* ranges, uint64_t total, uint64_t capacity) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  PairGather g;
  std::memset(&g, 0, sizeof g);
  HWY_ALIGN float lane[kMaxLanes];  // the deepest parameter
  uint64_t apartLanes = 0u;         // the lanes clearly apart (bit k)
  const Geometry* geometries = input.geometries.data();
  const GeometryQuery* queries = input.queries.data();
  for (size_t i = begin; i < end; i += lanes) {
    const size_t valid = end - i < lanes ? end - i : lanes;
    for (size_t k = 0; k < valid; ++k) {
      const Geometry& a = geometries[queries[i + k].a];
      const Geometry& b = geometries[queries[i + k].b];
      const bool swapped = a.type != GeometryType::kCapsule;
      g.swapped[k] = swapped;
      gatherSide<gpu::kGeomCapsule>(pickGeometry(swapped, a, b), k, g.s0, g.s1, g.s2);
      gatherSide<gpu::kGeomOrientedBox>(pickGeometry(swapped, b, a), k, g.t0, g.t1, g.t2);
    }
    MF apart;
    hn::Store(capsuleBoxDeepestLanes(g, apart), df, lane);
    uint8_t apartBytes[8] = {};
    hn::StoreMaskBits(df, apart, apartBytes);
    std::memcpy(&apartLanes, apartBytes, sizeof apartLanes);
    for (size_t k = 0; k < valid; ++k) {
      const uint32_t query = static_cast<uint32_t>(i + k);
      const uint64_t first = total;
      if (((apartLanes >> k) & 1u) != 0u) {  // clearly apart, no contact
        ranges[query] = ContactRange{static_cast<uint32_t>(first), 0u};
        continue;
      }
      // The shapes in the canonical order (s the capsule), read again for this query only.
      const Geometry& a = geometries[queries[query].a];
      const Geometry& b = geometries[queries[query].b];
      const gpu::GeomShape sk = shapeOf(pickGeometry(g.swapped[k], a, b));
      const gpu::GeomShape tk = shapeOf(pickGeometry(g.swapped[k], b, a));
      // Built in place (no copy of the 800-byte manifold).
      const gpu::GeomManifold m = gpu::geomCapsuleBoxManifoldAt(sk, tk, lane[k]);
      for (uint32_t c = 0; c < m.count; ++c, ++total) {
        if (total < capacity) {
          outA[total] = toContactElement(g.swapped[k] ? m.t[c] : m.s[c], query);
          outB[total] = toContactElement(g.swapped[k] ? m.s[c] : m.t[c], query);
        }
      }
      ranges[query] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
    }
  }
  return total;
}

// ---- Box-box: the axis test and the face clipping in lanes ---------------------------------------
// A chunk of queries at a time: geomBoxBoxBestAxis's face axes in lanes per lane batch; the lanes no
// face axis separates compacted into full lane batches for the edge axes; of those, the ones whose
// best axis is an edge axis (kind 2) get its contact there too (geomBoxBoxAxisManifold's edge branch),
// the ones whose best axis is a face axis (kind 0 or 1) are compacted again and clipped in lanes
// (geomBoxFaceManifold: the incident face, its 4 corners, the 4 side planes' Sutherland-Hodgman clips
// with each lane's own polygon, the points below the reference face); then the chunk's queries in
// order: apart ones no contact, the others their lanes' contacts, but face axes whose clipping left
// no point below the face: geomBoxBoxAxisManifold per query (rare). The same operations: the same
// bits.

// A polygon per lane (up to 8 points, its size n).
struct PolygonLanes {
  V3 p[8];
  VI n;
};

// geomPolygonPush where `push`: the lanes' point at slot n (nothing past 8); n is below `slots`.
HWY_INLINE void pushLanes(PolygonLanes& poly, MF push, const V3& v, int slots) {
  const DI di;
  const auto pushI = hn::RebindMask(di, push);
  for (int s = 0; s < slots; ++s) {
    const MF at = hn::RebindMask(DF(), hn::And(pushI, hn::Eq(poly.n, hn::Set(di, s))));
    poly.p[s] = select(at, v, poly.p[s]);
  }
  poly.n = hn::Add(poly.n, hn::IfThenElseZero(hn::And(pushI, hn::Lt(poly.n, hn::Set(di, 8))), hn::Set(di, 1)));
}

// The largest polygon size of the lanes.
HWY_INLINE int maxSize(const PolygonLanes& poly) {
  const DI di;
  return static_cast<int>(hn::GetLane(hn::MaxOfLanes(di, poly.n)));
}

// geomClipPolygon per lane: the part of the polygon with dot(p, axis) <= offset.
HWY_INLINE PolygonLanes clipLanes(const PolygonLanes& poly, const V3& axis, VF offset) {
  const DF df;
  const DI di;
  const VF zero = hn::Zero(df);
  const int size = maxSize(poly);
  VF dist[8];
  for (int i = 0; i < size; ++i) dist[i] = hn::Sub(dot(poly.p[i], axis), offset);
  PolygonLanes clipped;
  for (V3& p : clipped.p) p = V3{zero, zero, zero};
  clipped.n = hn::Zero(di);
  for (int i = 0; i < size; ++i) {
    const MF active = hn::RebindMask(df, hn::Lt(hn::Set(di, i), poly.n));
    const V3& a = poly.p[i];
    const VF da = dist[i];
    V3 b = poly.p[0];
    VF db = dist[0];
    if (i + 1 < size) {
      const MF next = hn::RebindMask(df, hn::Lt(hn::Set(di, i + 1), poly.n));
      b = select(next, poly.p[i + 1], b);
      db = hn::IfThenElse(next, dist[i + 1], db);
    }
    // Before point i, at most 2 i points were pushed.
    pushLanes(clipped, hn::And(active, hn::Le(da, zero)), a, std::min(8, 2 * i + 1));
    const MF crosses = hn::And(active, hn::Or(hn::And(hn::Lt(da, zero), hn::Gt(db, zero)),
                                              hn::And(hn::Gt(da, zero), hn::Lt(db, zero))));
    if (!hn::AllFalse(df, crosses)) {
      pushLanes(clipped, crosses, add(a, mul(sub(b, a), hn::Div(da, hn::Sub(da, db)))), std::min(8, 2 * i + 2));
    }
  }
  return clipped;
}

// Compacted rows (kBoxChunk + kMaxLanes floats each) of a chunk's queries. After the face axes, of
// the lanes no face axis separates: both boxes' axes (9 + 9), half extents (3 + 3) and centres (3 +
// 3), the best face axis (3), its overlap, kind and index. After the edge axes, of the lanes whose best
// axis is a face axis: the reference box's axes (9), the incident box's (9), their half extents (3 +
// 3) and centres (3 + 3), the reference face's outward normal nRef (3), the reference axis.
enum AxisRow : uint32_t {
  kRowA = 0,
  kRowB = 9,
  kRowEA = 18,
  kRowEB = 21,
  kRowCA = 24,
  kRowCB = 27,
  kRowBestAxis = 30,
  kRowBest = 33,
  kRowKind = 34,
  kRowBi = 35,
  kAxisRows = 36,
};

enum FaceRow : uint32_t {
  kRowR = 0,
  kRowI = 9,
  kRowER = 18,
  kRowEI = 21,
  kRowCR = 24,
  kRowCI = 27,
  kRowN = 30,
  kRowAxis = 33,
  kFaceRows = 34,
};

// A chunk is kBoxChunkBatches lane batches (Lanes(df) may be below kMaxLanes: HWY_SCALAR's 1).
constexpr size_t kBoxChunkBatches = 16;
constexpr size_t kBoxChunk = kBoxChunkBatches * kMaxLanes;
constexpr size_t kRowStride = kBoxChunk + kMaxLanes;

// One chunk's working rows: the axis rows; per compacted lane batch of them the axis test's result
// (A 9, B 9, bestAxis 3, best, kind, bi, bj; kMaxLanes floats each) and an edge axis' contact (s's and
// t's point, w: the overlap, and direction, w: 0, as Float4 per lane); the face rows; per compacted
// lane batch of those the clipped contacts: per point slot the incident side's point (w: the depth)
// and the reference side's (p + nRef depth, w: the depth) as Float4 per lane, the directions nRef and
// -nRef (w: 0), each lane's points below the face (bit slot) and their count. Per query of the chunk:
// whether its sides were swapped, whether no face axis separates them (bit q % 64 of word q / 64).
struct BoxBoxChunk {
  HWY_ALIGN float axisRows[kAxisRows][kRowStride];
  HWY_ALIGN float axis[kBoxChunkBatches][25 * kMaxLanes];
  HWY_ALIGN float face[kFaceRows][kRowStride];
  HWY_ALIGN float incident[kBoxChunkBatches][8][4 * kMaxLanes];
  HWY_ALIGN float reference[kBoxChunkBatches][8][4 * kMaxLanes];
  HWY_ALIGN float incidentDirection[kBoxChunkBatches][4 * kMaxLanes];
  HWY_ALIGN float referenceDirection[kBoxChunkBatches][4 * kMaxLanes];
  HWY_ALIGN float edgePoint[2][kBoxChunkBatches][4 * kMaxLanes];
  HWY_ALIGN float edgeDirection[2][kBoxChunkBatches][4 * kMaxLanes];
  HWY_ALIGN uint32_t slots[kRowStride];
  HWY_ALIGN uint32_t counts[kRowStride];
  uint64_t overlapping[(kBoxChunk + 63) / 64];
  bool swapped[kBoxChunk];
};

HWY_INLINE V3 loadRows(const float* rows, size_t stride, size_t at) {
  const DF df;
  return V3{hn::LoadU(df, rows + at), hn::LoadU(df, rows + stride + at), hn::LoadU(df, rows + 2 * stride + at)};
}

// geomBoxFaceManifold for the compacted face rows [at, at + Lanes): the lanes' contacts into batch
// `batch` of the chunk's clipped contacts.
HWY_INLINE void boxFaceManifoldLanes(BoxBoxChunk& w, size_t at, size_t batch) {
  const DF df;
  const DI di;
  const DU du;
  const VF zero = hn::Zero(df);
  const auto row = [&](uint32_t r) { return loadRows(w.face[r], kRowStride, at); };
  const V3 R[3] = {row(kRowR), row(kRowR + 3), row(kRowR + 6)};
  const V3 I[3] = {row(kRowI), row(kRowI + 3), row(kRowI + 6)};
  const V3 eR = row(kRowER);
  const V3 eI = row(kRowEI);
  const V3 cR = row(kRowCR);
  const V3 cI = row(kRowCI);
  const V3 nRef = row(kRowN);
  const VF axis = hn::LoadU(df, w.face[kRowAxis] + at);
  // The incident face: the axis of I most opposed to nRef (the first on ties), u and v the next two.
  const VF d0 = glmAbs(dot(I[0], nRef));
  const VF d1 = glmAbs(dot(I[1], nRef));
  const VF d2 = glmAbs(dot(I[2], nRef));
  const MF k1 = hn::Gt(d1, d0);
  const MF k2 = hn::Gt(d2, hn::IfThenElse(k1, d1, d0));
  const V3 Ik = select(k2, I[2], select(k1, I[1], I[0]));
  const V3 Iu = select(k2, I[0], select(k1, I[2], I[1]));
  const V3 Iv = select(k2, I[1], select(k1, I[0], I[2]));
  const VF eIk = hn::IfThenElse(k2, eI.z, hn::IfThenElse(k1, eI.y, eI.x));
  const VF eIu = hn::IfThenElse(k2, eI.x, hn::IfThenElse(k1, eI.z, eI.y));
  const VF eIv = hn::IfThenElse(k2, eI.y, hn::IfThenElse(k1, eI.x, eI.z));
  const VF sk = hn::IfThenElse(hn::Gt(dot(Ik, nRef), zero), hn::Set(df, -1.0f), hn::Set(df, 1.0f));
  const V3 centre = add(cI, mul(Ik, hn::Mul(eIk, sk)));
  const V3 du3 = mul(Iu, eIu);
  const V3 dv3 = mul(Iv, eIv);
  PolygonLanes poly;
  poly.p[0] = sub(sub(centre, du3), dv3);
  poly.p[1] = sub(add(centre, du3), dv3);
  poly.p[2] = add(add(centre, du3), dv3);
  poly.p[3] = add(sub(centre, du3), dv3);
  for (int s = 4; s < 8; ++s) poly.p[s] = V3{zero, zero, zero};
  poly.n = hn::Set(di, 4);
  // The side planes: the two other axes in increasing order (j0, j1), each + then -.
  const MF axis0 = hn::Eq(axis, zero);
  const MF axis2 = hn::Eq(axis, hn::Set(df, 2.0f));
  const V3 Rj[2] = {select(axis0, R[1], R[0]), select(axis2, R[1], R[2])};
  const VF eRj[2] = {hn::IfThenElse(axis0, eR.y, eR.x), hn::IfThenElse(axis2, eR.y, eR.z)};
  for (uint32_t c = 0; c < 4; ++c) {
    const V3& r = Rj[c / 2];
    const VF along = dot(cR, r);
    poly = (c & 1u) == 0u ? clipLanes(poly, r, hn::Add(along, eRj[c / 2]))
                          : clipLanes(poly, negLanes(r), hn::Sub(eRj[c / 2], along));
  }
  const VF eRaxis = hn::IfThenElse(axis0, eR.x, hn::IfThenElse(axis2, eR.z, eR.y));
  const VF faceOffset = hn::Add(dot(cR, nRef), eRaxis);
  VU laneCount = hn::Zero(du);
  VU laneSlots = hn::Zero(du);
  const int size = maxSize(poly);
  for (int s = 0; s < size; ++s) {
    const V3& p = poly.p[s];
    const VF depth = hn::Sub(faceOffset, dot(p, nRef));
    const MF hit = hn::And(hn::RebindMask(df, hn::Lt(hn::Set(di, s), poly.n)), hn::Gt(depth, zero));
    const auto hitU = hn::RebindMask(du, hit);
    laneCount = hn::Add(laneCount, hn::IfThenElseZero(hitU, hn::Set(du, 1u)));
    laneSlots = hn::Or(laneSlots, hn::IfThenElseZero(hitU, hn::Set(du, 1u << s)));
    const V3 onReference = add(p, mul(nRef, depth));
    hn::StoreInterleaved4(p.x, p.y, p.z, depth, df, w.incident[batch][s]);
    hn::StoreInterleaved4(onReference.x, onReference.y, onReference.z, depth, df, w.reference[batch][s]);
  }
  hn::StoreInterleaved4(nRef.x, nRef.y, nRef.z, zero, df, w.incidentDirection[batch]);
  hn::StoreInterleaved4(hn::Neg(nRef.x), hn::Neg(nRef.y), hn::Neg(nRef.z), zero, df, w.referenceDirection[batch]);
  hn::StoreU(laneCount, du, w.counts + at);
  hn::StoreU(laneSlots, du, w.slots + at);
}

// geomBoxBoxAxisManifold's contact of an edge axis (kind 2) per lane: the edge of s along A[bi]
// farthest along n and the edge of t along B[bj] farthest along -n, the closest points of the two;
// s's element pA (w: the overlap) with direction -n, t's pA - n best with n, into lane batch `batch`.
HWY_INLINE void boxBoxEdgeContactLanes(const BoxBoxAxisLanes& x, const V3& eA, const V3& eB, const V3& cA,
                                       const V3& cB, const V3& n, BoxBoxChunk& w, size_t batch) {
  const DF df;
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  const VF minusOne = hn::Set(df, -1.0f);
  const VF eAk[3] = {eA.x, eA.y, eA.z};
  const VF eBk[3] = {eB.x, eB.y, eB.z};
  V3 midA = cA;
  V3 midB = cB;
  V3 halfA = V3{zero, zero, zero};
  V3 halfB = halfA;
  for (uint32_t k = 0; k < 3; ++k) {
    const VF index = hn::Set(df, static_cast<float>(k));
    const MF isI = hn::Eq(x.bi, index);
    const MF isJ = hn::Eq(x.bj, index);
    const VF signA = hn::IfThenElse(hn::Ge(dot(x.A[k], n), zero), one, minusOne);
    const VF signB = hn::IfThenElse(hn::Le(dot(x.B[k], n), zero), one, minusOne);
    midA = select(isI, midA, add(midA, mul(x.A[k], hn::Mul(eAk[k], signA))));
    midB = select(isJ, midB, add(midB, mul(x.B[k], hn::Mul(eBk[k], signB))));
    halfA = select(isI, mul(x.A[k], eAk[k]), halfA);
    halfB = select(isJ, mul(x.B[k], eBk[k]), halfB);
  }
  const V3 a0 = sub(midA, halfA);
  const V3 a1 = add(midA, halfA);
  VF s;
  VF t;
  segmentSegmentLanes(a0, a1, sub(midB, halfB), add(midB, halfB), s, t);
  const V3 pA = mix(a0, a1, s);
  const V3 pB = sub(pA, mul(n, x.best));
  hn::StoreInterleaved4(pA.x, pA.y, pA.z, x.best, df, w.edgePoint[0][batch]);
  hn::StoreInterleaved4(pB.x, pB.y, pB.z, x.best, df, w.edgePoint[1][batch]);
  hn::StoreInterleaved4(hn::Neg(n.x), hn::Neg(n.y), hn::Neg(n.z), zero, df, w.edgeDirection[0][batch]);
  hn::StoreInterleaved4(n.x, n.y, n.z, zero, df, w.edgeDirection[1][batch]);
}

// Compacts the lanes `keep` of a V3 into three rows from `at`.
HWY_INLINE void compressRows(const V3& v, MF keep, float* rows, size_t at) {
  const DF df;
  hn::CompressStore(v.x, keep, df, rows + at);
  hn::CompressStore(v.y, keep, df, rows + kRowStride + at);
  hn::CompressStore(v.z, keep, df, rows + 2 * kRowStride + at);
}

uint64_t BoxBoxRun(const GeometryQueryInput& input, size_t begin, size_t end, ContactElement* outA,
                   ContactElement* outB, ContactRange* ranges, uint64_t total, uint64_t capacity) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  static_assert(kMaxLanes <= 64 && 64 % kMaxLanes == 0, "a lane batch's bits lie in one 64-bit word");
  PairGather g;
  std::memset(&g, 0, sizeof g);
  // Not zeroed (a run of one query would clear it all): the rows past a compacted count are cleared
  // up to the next lane batch where the count ends.
  const std::unique_ptr<BoxBoxChunk> work(new BoxBoxChunk);
  BoxBoxChunk& w = *work;
  const Geometry* geometries = input.geometries.data();
  const GeometryQuery* queries = input.queries.data();
  const size_t chunkSize = kBoxChunkBatches * lanes;
  for (size_t chunk = begin; chunk < end; chunk += chunkSize) {
    const size_t chunkEnd = end - chunk < chunkSize ? end : chunk + chunkSize;
    // The face axes per lane batch; the lanes no face axis separates compacted.
    size_t overlapping = 0;
    for (size_t i = chunk; i < chunkEnd; i += lanes) {
      const size_t valid = chunkEnd - i < lanes ? chunkEnd - i : lanes;
      for (size_t k = 0; k < valid; ++k) {
        const Geometry& a = geometries[queries[i + k].a];
        const Geometry& b = geometries[queries[i + k].b];
        const bool swapped = shapeLess<gpu::kGeomOrientedBox>(b, a);
        w.swapped[i - chunk + k] = swapped;
        gatherSide<gpu::kGeomOrientedBox>(pickGeometry(swapped, a, b), k, g.s0, g.s1, g.s2);
        gatherSide<gpu::kGeomOrientedBox>(pickGeometry(swapped, b, a), k, g.t0, g.t1, g.t2);
      }
      BoxBoxAxisLanes x;
      boxAxesLanes(load4(g.s1), x.A);
      boxAxesLanes(load4(g.t1), x.B);
      const V3 eA = load4(g.s2).v;
      const V3 eB = load4(g.t2).v;
      const V3 cA = load4(g.s0).v;
      const V3 cB = load4(g.t0).v;
      const MF keep = hn::AndNot(boxBoxFaceAxesLanes(eA, eB, sub(cB, cA), x), hn::FirstN(df, valid));
      uint8_t keepBytes[8] = {};
      hn::StoreMaskBits(df, keep, keepBytes);
      uint64_t keepBits;
      std::memcpy(&keepBits, keepBytes, sizeof keepBits);
      const size_t c = i - chunk;  // a multiple of lanes: its bits within one word
      if (c % 64 == 0) w.overlapping[c / 64] = 0u;
      w.overlapping[c / 64] |= keepBits << (c % 64);
      if (keepBits == 0u) continue;
      for (uint32_t r = 0; r < 3; ++r) {
        compressRows(x.A[r], keep, w.axisRows[kRowA + 3 * r], overlapping);
        compressRows(x.B[r], keep, w.axisRows[kRowB + 3 * r], overlapping);
      }
      compressRows(eA, keep, w.axisRows[kRowEA], overlapping);
      compressRows(eB, keep, w.axisRows[kRowEB], overlapping);
      compressRows(cA, keep, w.axisRows[kRowCA], overlapping);
      compressRows(cB, keep, w.axisRows[kRowCB], overlapping);
      compressRows(x.bestAxis, keep, w.axisRows[kRowBestAxis], overlapping);
      hn::CompressStore(x.best, keep, df, w.axisRows[kRowBest] + overlapping);
      hn::CompressStore(x.kind, keep, df, w.axisRows[kRowKind] + overlapping);
      hn::CompressStore(x.bi, keep, df, w.axisRows[kRowBi] + overlapping);
      overlapping += hn::CountTrue(df, keep);
    }
    for (float* row : w.axisRows) hn::StoreU(hn::Zero(df), df, row + overlapping);
    // The edge axes of those, full lane batches; the face-axis lanes' reference and incident boxes
    // (geomBoxBoxAxisManifold's choice) compacted.
    size_t faces = 0;
    for (size_t at = 0; at < overlapping; at += lanes) {
      const size_t valid = overlapping - at < lanes ? overlapping - at : lanes;
      const auto row3 = [&](uint32_t r) { return loadRows(w.axisRows[r], kRowStride, at); };
      const auto row = [&](uint32_t r) { return hn::LoadU(df, w.axisRows[r] + at); };
      BoxBoxAxisLanes x;
      for (uint32_t r = 0; r < 3; ++r) {
        x.A[r] = row3(kRowA + 3 * r);
        x.B[r] = row3(kRowB + 3 * r);
      }
      const V3 eA = row3(kRowEA);
      const V3 eB = row3(kRowEB);
      const V3 cA = row3(kRowCA);
      const V3 cB = row3(kRowCB);
      const V3 d = sub(cB, cA);
      x.bestAxis = row3(kRowBestAxis);
      x.best = row(kRowBest);
      x.kind = row(kRowKind);
      x.bi = row(kRowBi);
      x.bj = hn::Zero(df);
      boxBoxEdgeAxesLanes(eA, eB, d, x);
      float* axis = w.axis[at / lanes];
      for (uint32_t r = 0; r < 3; ++r) {
        store3(x.A[r], axis + 3 * r * kMaxLanes);
        store3(x.B[r], axis + (9 + 3 * r) * kMaxLanes);
      }
      store3(x.bestAxis, axis + 18 * kMaxLanes);
      hn::Store(x.best, df, axis + 21 * kMaxLanes);
      hn::Store(x.kind, df, axis + 22 * kMaxLanes);
      hn::Store(x.bi, df, axis + 23 * kMaxLanes);
      hn::Store(x.bj, df, axis + 24 * kMaxLanes);
      const VF zero = hn::Zero(df);
      const V3 n = select(hn::Lt(dot(d, x.bestAxis), zero), negLanes(x.bestAxis), x.bestAxis);
      const MF inBatch = hn::FirstN(df, valid);
      if (!hn::AllFalse(df, hn::And(hn::Eq(x.kind, hn::Set(df, 2.0f)), inBatch))) {
        boxBoxEdgeContactLanes(x, eA, eB, cA, cB, n, w, at / lanes);
      }
      const MF face = hn::And(hn::Lt(x.kind, hn::Set(df, 2.0f)), inBatch);
      if (hn::AllFalse(df, face)) continue;
      const MF sRef = hn::Eq(x.kind, zero);
      for (uint32_t r = 0; r < 3; ++r) {
        compressRows(select(sRef, x.A[r], x.B[r]), face, w.face[kRowR + 3 * r], faces);
        compressRows(select(sRef, x.B[r], x.A[r]), face, w.face[kRowI + 3 * r], faces);
      }
      compressRows(select(sRef, eA, eB), face, w.face[kRowER], faces);
      compressRows(select(sRef, eB, eA), face, w.face[kRowEI], faces);
      compressRows(select(sRef, cA, cB), face, w.face[kRowCR], faces);
      compressRows(select(sRef, cB, cA), face, w.face[kRowCI], faces);
      compressRows(select(sRef, n, negLanes(n)), face, w.face[kRowN], faces);
      hn::CompressStore(x.bi, face, df, w.face[kRowAxis] + faces);
      faces += hn::CountTrue(df, face);
    }
    for (float* row : w.face) hn::StoreU(hn::Zero(df), df, row + faces);
    // The clipping in lanes costs about as much as 4 scalar clips: a last batch of fewer lanes (a
    // small run) takes the scalar code (count 0).
    for (size_t at = 0; at < faces; at += lanes) {
      if (4 * (faces - at) >= lanes) {
        boxFaceManifoldLanes(w, at, at / lanes);
      } else {
        std::fill(w.counts + at, w.counts + faces, 0u);
      }
    }
    // The chunk's queries in order.
    size_t overlapAt = 0;
    size_t faceAt = 0;
    for (size_t i = chunk; i < chunkEnd; ++i) {
      const size_t c = i - chunk;
      const uint32_t query = static_cast<uint32_t>(i);
      const uint64_t first = total;
      if (((w.overlapping[c / 64] >> (c % 64)) & 1u) == 0u) {  // a face axis separates the boxes
        ranges[query] = ContactRange{static_cast<uint32_t>(first), 0u};
        continue;
      }
      const size_t o = overlapAt++;
      const float* axis = w.axis[o / lanes];
      const size_t k = o % lanes;
      const float kind = axis[22 * kMaxLanes + k];
      if (kind == 3.0f) {  // an edge axis separates them
        ranges[query] = ContactRange{static_cast<uint32_t>(first), 0u};
        continue;
      }
      const bool swapped = w.swapped[c];
      const uint32_t tail[4] = {static_cast<uint32_t>(ContactElementType::kPointDirection), kNoPointIndex, query, 0u};
      if (kind == 2.0f) {  // an edge axis: one contact, from the lanes
        if (total < capacity) {
          const size_t batch = o / lanes;
          ContactElement* out[2] = {outA + total, outB + total};
          for (size_t side = 0; side < 2; ++side) {  // s's element to outA unless swapped
            storeElement(out[side ^ (swapped ? 1u : 0u)], w.edgePoint[side][batch] + 4 * k,
                         w.edgeDirection[side][batch] + 4 * k, tail);
          }
        }
        ++total;
        ranges[query] = ContactRange{static_cast<uint32_t>(first), 1u};
        continue;
      }
      if (kind < 2.0f) {
        const size_t f = faceAt++;
        if (w.counts[f] != 0u) {
          const size_t batch = f / lanes;
          const size_t lane = f % lanes;
          // The incident box is s where t's face is the reference (kind 1); outA holds s's side.
          const bool incidentIsA = (kind == 1.0f) != swapped;
          ContactElement* incidentOut = incidentIsA ? outA : outB;
          ContactElement* referenceOut = incidentIsA ? outB : outA;
          for (uint32_t slots = w.slots[f]; slots != 0u; slots &= slots - 1u, ++total) {
            if (total >= capacity) continue;
            const size_t s = static_cast<size_t>(hwy::Num0BitsBelowLS1Bit_Nonzero32(slots));
            storeElement(incidentOut + total, w.incident[batch][s] + 4 * lane,
                         w.incidentDirection[batch] + 4 * lane, tail);
            storeElement(referenceOut + total, w.reference[batch][s] + 4 * lane,
                         w.referenceDirection[batch] + 4 * lane, tail);
          }
          ranges[query] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
          continue;
        }
      }
      // A face axis whose clipping left no point below the face: the scalar code.
      const Geometry& a = geometries[queries[query].a];
      const Geometry& b = geometries[queries[query].b];
      const auto row = [&](uint32_t r) { return axis[r * kMaxLanes + k]; };
      const auto vec = [&](uint32_t r) { return gpu::vec3(row(r), row(r + 1), row(r + 2)); };
      gpu::GeomBoxBoxAxis x;
      for (uint32_t r = 0; r < 3; ++r) {
        x.A[r] = vec(3 * r);
        x.B[r] = vec(9 + 3 * r);
      }
      x.bestAxis = vec(18);
      x.best = row(21);
      x.kind = static_cast<uint32_t>(kind);
      x.bi = static_cast<uint32_t>(row(23));
      x.bj = static_cast<uint32_t>(row(24));
      // Built in place (no copy of the 800-byte manifold; the axis passed by reference).
      const gpu::GeomManifold m = gpu::geomBoxBoxAxisManifold(shapeOf(pickGeometry(swapped, a, b)),
                                                              shapeOf(pickGeometry(swapped, b, a)), x);
      for (uint32_t s = 0; s < m.count; ++s, ++total) {
        if (total < capacity) {
          outA[total] = toContactElement(swapped ? m.t[s] : m.s[s], query);
          outB[total] = toContactElement(swapped ? m.s[s] : m.t[s], query);
        }
      }
      ranges[query] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
    }
  }
  return total;
}

// ---- Box-plane: the corners in lanes ------------------------------------------------------------
// geomQueryContacts' box-plane loop, lanes across queries: each distinct corner (x fastest, - before
// +) is a ball of radius 0 against the normal the plane shows to the box's centre
// (geomPlaneNormalFor), the same operations as geomBoxCornerRotated, geomClosestPlane and
// geomBallContact. A query's contacts share its lane's normal: the box's direction (n, 0) and the
// plane's (-n, 0) are interleaved once per lane batch, per corner only the points (the ball's
// corner - n 0 and the plane's corner - n d, w: the depth -d).

// One lane batch's contacts as the lanes left them, written to the output in parts while the next
// batch runs (BoxPlaneRun's kPerCorner).
struct BoxPlaneBatch {
  HWY_ALIGN float boxPoint[gpu::kGeomBoxPlaneSlots][4 * kMaxLanes];
  HWY_ALIGN float planePoint[gpu::kGeomBoxPlaneSlots][4 * kMaxLanes];
  HWY_ALIGN float boxDirection[4 * kMaxLanes];
  HWY_ALIGN float planeDirection[4 * kMaxLanes];
  // Per lane, ContactElement's words after point and direction: type, index, query, cell (as
  // makeElement writes them), stored whole (four words stored apart and then read as one 16-byte
  // copy stalled on store forwarding).
  HWY_ALIGN uint32_t tails[4 * kMaxLanes];
  // The contacts in output order: bit 8 k + c where lane k touches with corner c (one loop over them;
  // a loop per lane, whose trip count is random, mispredicts at its end about once per query).
  uint64_t touching[(kMaxLanes + 7) / 8];
  bool swapped[kMaxLanes];
  uint64_t first;  // the output position of the batch's first contact
  uint64_t stop;   // of its last + 1, capped at the capacity
};

// Where the writing of a batch stands: its next contact's bit (in touching[word] and above) and position.
struct BoxPlaneCursor {
  const BoxPlaneBatch* batch = nullptr;
  size_t word = 0;
  uint64_t bits = 0;
  uint64_t at = 0;
};

// Writes the batch's next `most` contacts (those it has left, if fewer).
template <class Store>
HWY_INLINE void writeBoxPlaneContacts(BoxPlaneCursor& c, size_t most, ContactElement* outA, ContactElement* outB,
                                      const Store& store) {
  const BoxPlaneBatch& b = *c.batch;
  for (; most != 0u && c.at < b.stop; --most, ++c.at) {
    while (c.bits == 0u) c.bits = b.touching[++c.word];  // a bit is left: one per contact
    const size_t bit = c.word * 64 + hwy::Num0BitsBelowLS1Bit_Nonzero64(c.bits);
    c.bits &= c.bits - 1u;
    const size_t k = bit / 8;
    const size_t corner = bit % 8;
    const bool swapped = b.swapped[k];
    store((swapped ? outB : outA) + c.at, b.boxPoint[corner] + 4 * k, b.boxDirection + 4 * k, b.tails + 4 * k);
    store((swapped ? outA : outB) + c.at, b.planePoint[corner] + 4 * k, b.planeDirection + 4 * k, b.tails + 4 * k);
  }
}

uint64_t BoxPlaneRun(const GeometryQueryInput& input, size_t begin, size_t end, ContactElement* outA,
                     ContactElement* outB, ContactRange* ranges, uint64_t total, uint64_t capacity) {
  constexpr uint32_t kCorners = gpu::kGeomBoxPlaneSlots;
  const DF df;
  const DU du;
  const hn::Rebind<uint8_t, DI> du8;
  const size_t lanes = hn::Lanes(df);
  PairGather g;
  std::memset(&g, 0, sizeof g);
  static_assert(kCorners == 8, "a lane's corners are the bits of a byte of BoxPlaneBatch::touching");
  BoxPlaneBatch batches[2];
  const Geometry* geometries = input.geometries.data();
  const GeometryQuery* queries = input.queries.data();
  // An output larger than the caches (both sides' elements over kStreamBytes; up to 8 contacts per
  // query, 96 bytes each) is written with non-temporal stores where its elements are 16-byte aligned:
  // no read for ownership of lines the run overwrites whole, half the memory traffic of the writes.
  constexpr uint64_t kStreamBytes = uint64_t{32} << 20;
  const bool stream = HWY_TARGET != HWY_SCALAR && capacity * 2 * sizeof(ContactElement) > kStreamBytes &&
                      ((reinterpret_cast<uintptr_t>(outA) | reinterpret_cast<uintptr_t>(outB)) & 15u) == 0u;
  BoxPlaneCursor cursor;
  const auto write = [&](size_t most) {
    if (cursor.batch == nullptr) return;
#if HWY_TARGET != HWY_SCALAR
    if (stream) {
      writeBoxPlaneContacts(cursor, most, outA, outB,
                            [](ContactElement* to, const float* point, const float* direction, const uint32_t* tail) {
                              const hn::FixedTag<float, 4> d4;
                              float* floats = reinterpret_cast<float*>(to);
                              hn::Stream(hn::Load(d4, point), d4, floats);
                              hn::Stream(hn::Load(d4, direction), d4, floats + 4);
                              hn::Stream(hn::BitCast(d4, hn::Load(hn::RebindToUnsigned<decltype(d4)>(), tail)), d4,
                                         floats + 8);
                            });
      return;
    }
#endif
    writeBoxPlaneContacts(cursor, most, outA, outB, storeElement);
  };
  // The batch before's contacts (about 64 at 10k random pairs) go out kPerCorner before each of this
  // batch's corners, the rest after them: the output's stores overlap the arithmetic. Written in one
  // go after each batch, the same loop took 1.02x the time of the per-lane loops before it, in parts
  // 0.90x (10k pairs, alternated in one process). Streamed (1M pairs), a batch's contacts go out in one
  // go after it, each lane's lines in one burst of streaming stores.
  constexpr size_t kPerCorner = 8;
  for (size_t i = begin; i < end; i += lanes) {
    BoxPlaneBatch& b = batches[cursor.batch == &batches[0] ? 1 : 0];
    const size_t valid = end - i < lanes ? end - i : lanes;
    for (size_t k = 0; k < valid; ++k) {
      const Geometry& a = geometries[queries[i + k].a];
      const Geometry& bq = geometries[queries[i + k].b];
      const bool swapped = a.type != GeometryType::kOrientedBox;
      b.swapped[k] = swapped;
      const Geometry& plane = pickGeometry(swapped, bq, a);
      gatherSide<gpu::kGeomOrientedBox>(pickGeometry(swapped, a, bq), k, g.s0, g.s1, g.s2);
      gatherSide<gpu::kGeomPlane>(plane, k, g.t0, g.t1, g.t2);
      g.tTwoSided[k] = (plane.flags & kGeometryFlagBidirectional) != 0 ? 1.0f : 0.0f;
    }
    const VF zero = hn::Zero(df);
    const V3 centre = load4(g.s0).v;
    V3 u;
    VF w;
    quatUnitLanes(load4(g.s1), u, w);
    const V3 e = load4(g.s2).v;
    const V3 origin = load4(g.t0).v;
    const V3 n = planeNormalLanes(origin, load4(g.t1).v, hn::Ne(hn::Load(df, g.tTwoSided), zero), centre);
    const V3 nr = mul(n, zero);  // geomBallContact's n r with r = 0
    hn::StoreInterleaved4(n.x, n.y, n.z, zero, df, b.boxDirection);
    hn::StoreInterleaved4(hn::Neg(n.x), hn::Neg(n.y), hn::Neg(n.z), zero, df, b.planeDirection);
    const MF inBatch = hn::FirstN(df, valid);
    // geomBoxCornerDistinct: a zero extent has only its - corners.
    const MF flat[3] = {hn::Eq(e.x, zero), hn::Eq(e.y, zero), hn::Eq(e.z, zero)};
    VU laneCount = hn::Zero(du);
    VU laneCorners = hn::Zero(du);
    for (uint32_t k = 0; k < kCorners; ++k) {
      if (!stream) write(kPerCorner);
      const V3 local{(k & 1u) != 0u ? e.x : hn::Neg(e.x), (k & 2u) != 0u ? e.y : hn::Neg(e.y),
                     (k & 4u) != 0u ? e.z : hn::Neg(e.z)};
      const V3 corner = add(centre, rotate(u, w, local));
      const VF d = dot(sub(corner, origin), n);  // geomClosestPlane's signed distance
      const VF depth = hn::Sub(zero, d);
      MF hit = hn::And(hn::Gt(depth, zero), inBatch);
      for (uint32_t axis = 0; axis < 3; ++axis) {
        if (((k >> axis) & 1u) != 0u) hit = hn::AndNot(flat[axis], hit);
      }
      if (hn::AllFalse(df, hit)) continue;  // the corner's points are not read
      const auto hitU = hn::RebindMask(du, hit);
      laneCount = hn::Add(laneCount, hn::IfThenElseZero(hitU, hn::Set(du, 1u)));
      laneCorners = hn::Or(laneCorners, hn::IfThenElseZero(hitU, hn::Set(du, 1u << k)));
      const V3 onBox = sub(corner, nr);
      const V3 onPlane = sub(corner, mul(n, d));
      hn::StoreInterleaved4(onBox.x, onBox.y, onBox.z, depth, df, b.boxPoint[k]);
      hn::StoreInterleaved4(onPlane.x, onPlane.y, onPlane.z, depth, df, b.planePoint[k]);
    }
    HWY_ALIGN uint32_t counts[kMaxLanes];
    hn::Store(laneCount, du, counts);
    b.first = total;
    for (size_t k = 0; k < valid; ++k) {
      ranges[i + k] = ContactRange{static_cast<uint32_t>(total), counts[k]};
      total += counts[k];
    }
    b.stop = total < capacity ? total : capacity;
    hn::StoreInterleaved4(hn::Set(du, static_cast<uint32_t>(ContactElementType::kPointDirection)),
                          hn::Set(du, kNoPointIndex), hn::Iota(du, static_cast<uint32_t>(i)), hn::Zero(du), du,
                          b.tails);
    HWY_ALIGN uint8_t cornerBytes[kMaxLanes];
    hn::Store(hn::DemoteTo(du8, hn::BitCast(DI(), laneCorners)), du8, cornerBytes);
    std::memset(b.touching, 0, sizeof b.touching);
    std::memcpy(b.touching, cornerBytes, valid);  // little-endian: lane k's byte is bits 8 k .. 8 k + 7
    write(SIZE_MAX);
    cursor = BoxPlaneCursor{&b, 0, b.touching[0], b.first};
  }
  write(SIZE_MAX);
  if (stream) hwy::FlushStream();
  return total;
}

// The run's pair type (primitivePairSimdKind: lo * kGeomTypeCount + hi) picks its instantiation.
uint64_t PrimitivePairs(const GeometryQueryInput& input, size_t begin, size_t end, uint32_t pair,
                        ContactElement* outA, ContactElement* outB, ContactRange* ranges, uint64_t total,
                        uint64_t capacity) {
  using namespace gpu;
  using Run = uint64_t (*)(const GeometryQueryInput&, size_t, size_t, ContactElement*, ContactElement*,
                           ContactRange*, uint64_t, uint64_t);
  constexpr uint32_t n = kGeomTypeCount;
  Run run = PairRun<kGeomCylinder, kGeomPlane>;
  switch (pair) {
    case kGeomSphere * n + kGeomSphere: run = PairRun<kGeomSphere, kGeomSphere>; break;
    case kGeomSphere * n + kGeomCapsule: run = PairRun<kGeomSphere, kGeomCapsule>; break;
    case kGeomSphere * n + kGeomCylinder: run = PairRun<kGeomSphere, kGeomCylinder>; break;
    case kGeomSphere * n + kGeomOrientedBox: run = PairRun<kGeomSphere, kGeomOrientedBox>; break;
    case kGeomSphere * n + kGeomPlane: run = PairRun<kGeomSphere, kGeomPlane>; break;
    case kGeomCapsule * n + kGeomCapsule: run = PairRun<kGeomCapsule, kGeomCapsule>; break;
    case kGeomCapsule * n + kGeomCylinder: run = PairRun<kGeomCapsule, kGeomCylinder>; break;
    case kGeomCapsule * n + kGeomPlane: run = PairRun<kGeomCapsule, kGeomPlane>; break;
    case kGeomOrientedBox * n + kGeomPlane: run = BoxPlaneRun; break;
    case kGeomCapsule * n + kGeomOrientedBox: run = CapsuleBoxRun; break;
    case kGeomOrientedBox * n + kGeomOrientedBox: run = BoxBoxRun; break;
    default: break;  // kGeomCylinder * n + kGeomPlane
  }
  return run(input, begin, end, outA, outB, ranges, total, capacity);
}

// ---- Continuous point sets against an analytic primitive or an implicit geometry ---------------
// geomContinuousPoint with the lanes across the set's points, in chunks of kTraceChunk points:
//  1. per lane the start (the saved point while state.w != 0, else the previous position) carried by
//     the other geometry's motion (geomPoseMap), both ends' fields and a primitive's 1-Lipschitz skip;
//     a lane not skipped that starts outside (or from a saved point) is compacted into the chunk's
//     trace list; the others get the state (cur, 0) and, ending inside, the static contact at cur
//     (geomImplicitClosest);
//  2. the trace list in full lane batches: a primitive's geomTraceShape (geomSegmentDeepestParam's
//     golden-section search over geomSegmentLocalDistance, a plane's end; the check at the deepest
//     point; the bisection of geomBisectShape) or a grid's geomTraceGrid (the cell walk, each cell's
//     cubic root), then the contact of geomContinuousPoint (the normal at the root, the depth of its
//     tangent plane or back along the motion, the new state);
//  3. the chunk's contacts in point order.

struct ContinuousChunk {
  // Per point of the chunk: the contact (hit 1), its primitive-side point, the normal and the depth;
  // entry kTraceChunk takes the scatters of a last trace batch's lanes past the list.
  HWY_ALIGN float hit[kTraceChunk + 1];
  HWY_ALIGN float sx[kTraceChunk + 1], sy[kTraceChunk + 1], sz[kTraceChunk + 1];
  HWY_ALIGN float nx[kTraceChunk + 1], ny[kTraceChunk + 1], nz[kTraceChunk + 1];
  HWY_ALIGN float depth[kTraceChunk + 1];
  // The trace list (compacted; room for a vector's stores past its end): the point's place in the
  // chunk, its start, end and end distance.
  HWY_ALIGN int32_t index[kTraceChunk + kMaxLanes];
  HWY_ALIGN float x0[kTraceChunk + kMaxLanes], y0[kTraceChunk + kMaxLanes], z0[kTraceChunk + kMaxLanes];
  HWY_ALIGN float x1[kTraceChunk + kMaxLanes], y1[kTraceChunk + kMaxLanes], z1[kTraceChunk + kMaxLanes];
  HWY_ALIGN float fEnd[kTraceChunk + kMaxLanes];
  HWY_ALIGN float walk[kTraceChunk + kMaxLanes];  // a grid trace's cells, about (sortTracesByWalk)
  uint32_t traces = 0;
};

// geomRotateBetween(u, v, w) per lane w (u, v uniform unit vectors).
HWY_INLINE V3 rotateBetweenLanes(gpu::vec3 u, gpu::vec3 v, const V3& w) {
  const DF df;
  const float c = gpu::dot(u, v);
  if (c <= -1.0f + 1e-6f) {
    const V3 p = splat(gpu::geomPerpendicularTo(u));
    return sub(mul(p, hn::Mul(hn::Set(df, 2.0f), dot(p, w))), w);
  }
  const V3 k = splat(gpu::cross(u, v));
  return add(add(mul(w, hn::Set(df, c)), cross(k, w)), mul(k, hn::Div(dot(k, w), hn::Set(df, 1.0f + c))));
}

// geomPoseMap(prev, cur, x) per lane x: x carried by the primitive's motion from prev to cur.
HWY_INLINE V3 poseMapLanes(const gpu::GeomShape& prev, const gpu::GeomShape& cur, const V3& x) {
  const DF df;
  if (prev.p0 == cur.p0 && prev.p1 == cur.p1 && prev.p2 == cur.p2) return x;  // a static geometry
  const uint32_t type = cur.info.x;
  if (type == gpu::kGeomOrientedBox) {
    const gpu::vec4 q0 = prev.p1 / std::sqrt(gpu::dot(prev.p1, prev.p1));
    const gpu::vec4 q1 = cur.p1 / std::sqrt(gpu::dot(cur.p1, cur.p1));
    const V3 local = rotate(splat(-gpu::vec3(q0)), hn::Set(df, q0.w), sub(x, splat(gpu::vec3(prev.p0))));
    return add(rotate(splat(gpu::vec3(q1)), hn::Set(df, q1.w), local), splat(gpu::vec3(cur.p0)));
  }
  if (type == gpu::kGeomCapsule) {
    const gpu::vec3 c0 = (gpu::vec3(prev.p0) + gpu::vec3(prev.p1)) * 0.5f;
    const gpu::vec3 c1 = (gpu::vec3(cur.p0) + gpu::vec3(cur.p1)) * 0.5f;
    const gpu::vec3 a0 = gpu::vec3(prev.p1) - gpu::vec3(prev.p0);
    const gpu::vec3 a1 = gpu::vec3(cur.p1) - gpu::vec3(cur.p0);
    if (gpu::dot(a0, a0) <= 0.0f || gpu::dot(a1, a1) <= 0.0f) return add(sub(x, splat(c0)), splat(c1));
    return add(rotateBetweenLanes(gpu::geomUnit(a0), gpu::geomUnit(a1), sub(x, splat(c0))), splat(c1));
  }
  if (type == gpu::kGeomCylinder || type == gpu::kGeomPlane) {
    return add(rotateBetweenLanes(gpu::geomUnit(gpu::vec3(prev.p1)), gpu::geomUnit(gpu::vec3(cur.p1)),
                                  sub(x, splat(gpu::vec3(prev.p0)))),
               splat(gpu::vec3(cur.p0)));
  }
  return add(sub(x, splat(gpu::vec3(prev.p0))), splat(gpu::vec3(cur.p0)));  // a sphere
}

// geomImplicitDistance of a primitive per lane.
HWY_INLINE VF primitiveDistanceLanes(const gpu::GeomShape& s, const V3& p) {
  return closestPrimitive(s, p).dist;
}

// geomTraceShape per lane: the first parameter where x0 -> x1 enters s (the outside end of the final
// bracket), or -1.
HWY_INLINE VF traceShapeLanes(const gpu::GeomShape& s, const V3& x0, const V3& x1) {
  const DF df;
  const VF zero = hn::Zero(df);
  VF tMin = hn::Set(df, 1.0f);
  if (s.info.x == gpu::kGeomOrientedBox) {  // geomSegmentLocal: the ends in the box's axes
    const gpu::vec4 q = gpu::geomQuatUnit(s.p1);
    const V3 uInverse = splat(-gpu::vec3(q));
    const VF w = hn::Set(df, q.w);
    const V3 c = splat(gpu::vec3(s.p0));
    const V3 d0 = rotate(uInverse, w, sub(x0, c));
    const V3 d1 = rotate(uInverse, w, sub(x1, c));
    const V3 h = splat(gpu::vec3(s.p2));
    tMin = segmentDeepestLanes([&](VF x) { return boxSegmentDistanceLanes(d0, d1, h, x); });
  } else if (s.info.x == gpu::kGeomCylinder) {
    const V3 c = splat(gpu::vec3(s.p0));
    const V3 axis = splat(gpu::geomUnit(gpu::vec3(s.p1)));
    const VF r = hn::Set(df, s.p0.w);
    const VF hh = hn::Set(df, s.p1.w);
    const V3 d0 = sub(x0, c);
    const V3 d1 = sub(x1, c);
    tMin = segmentDeepestLanes([&](VF x) { return cylinderSegmentDistanceLanes(d0, d1, axis, r, hh, x); });
  } else if (s.info.x != gpu::kGeomPlane) {  // sphere, capsule: geomClosestShape along the segment
    tMin = segmentDeepestLanes([&](VF x) { return primitiveDistanceLanes(s, mix(x0, x1, x)); });
  }
  const MF enters = hn::And(hn::Gt(tMin, zero), hn::Lt(primitiveDistanceLanes(s, mix(x0, x1, tMin)), zero));
  // geomBisectShape on [0, tMin]
  VF lo = zero;
  VF hi = tMin;
  const VF half = hn::Set(df, 0.5f);
  for (uint32_t i = 0; i < gpu::kGeomRootSteps; ++i) {
    const VF mid = hn::Mul(hn::Add(lo, hi), half);
    const MF inside = hn::Lt(primitiveDistanceLanes(s, mix(x0, x1, mid)), zero);
    hi = hn::IfThenElse(inside, mid, hi);
    lo = hn::IfThenElse(inside, lo, mid);
  }
  return hn::IfThenElse(enters, lo, hn::Set(df, -1.0f));
}

// geomCellCubic per lane: the trilinear field of the cell's samples v along a + b s as a cubic
// k[0] + k[1] s + k[2] s^2 + k[3] s^3 (the vec3 / vec4 sums in their order, 0 + x included).
HWY_INLINE void cellCubicLanes(const VF v[8], const V3& a, const V3& b, VF k[4]) {
  const VF zero = hn::Zero(DF());
  const VF c000 = v[0];
  const VF c100 = hn::Sub(v[1], v[0]);
  const VF c010 = hn::Sub(v[2], v[0]);
  const VF c001 = hn::Sub(v[4], v[0]);
  const VF c110 = hn::Add(hn::Sub(hn::Sub(v[3], v[1]), v[2]), v[0]);
  const VF c101 = hn::Add(hn::Sub(hn::Sub(v[5], v[1]), v[4]), v[0]);
  const VF c011 = hn::Add(hn::Sub(hn::Sub(v[6], v[2]), v[4]), v[0]);
  const VF c111 = hn::Sub(
      hn::Add(hn::Add(hn::Add(hn::Sub(hn::Sub(hn::Sub(v[7], v[3]), v[5]), v[6]), v[1]), v[2]), v[4]), v[0]);
  const auto pair = [](VF p, VF q, VF r, VF t) { return hn::Add(hn::Mul(p, q), hn::Mul(r, t)); };
  const VF xy[3] = {hn::Mul(a.x, a.y), pair(a.x, b.y, b.x, a.y), hn::Mul(b.x, b.y)};
  const VF xz[3] = {hn::Mul(a.x, a.z), pair(a.x, b.z, b.x, a.z), hn::Mul(b.x, b.z)};
  const VF yz[3] = {hn::Mul(a.y, a.z), pair(a.y, b.z, b.y, a.z), hn::Mul(b.y, b.z)};
  const VF xyz[4] = {hn::Mul(xy[0], a.z), pair(xy[0], b.z, xy[1], a.z), pair(xy[1], b.z, xy[2], a.z),
                     hn::Mul(xy[2], b.z)};
  const VF base[4] = {
      hn::Add(hn::Add(hn::Add(c000, hn::Mul(c100, a.x)), hn::Mul(c010, a.y)), hn::Mul(c001, a.z)),
      hn::Add(hn::Add(hn::Mul(c100, b.x), hn::Mul(c010, b.y)), hn::Mul(c001, b.z)), zero, zero};
  for (uint32_t i = 0; i < 4; ++i) {
    const VF p3 = i < 3u ? hn::Mul(c110, xy[i]) : zero;
    const VF q3 = i < 3u ? hn::Mul(c101, xz[i]) : zero;
    const VF r3 = i < 3u ? hn::Mul(c011, yz[i]) : zero;
    k[i] = hn::Add(base[i], hn::Add(hn::Add(hn::Add(p3, q3), r3), hn::Mul(c111, xyz[i])));
  }
}

// geomCubic per lane.
HWY_INLINE VF cubicLanes(const VF k[4], VF s) {
  return hn::Add(k[0], hn::Mul(s, hn::Add(k[1], hn::Mul(s, hn::Add(k[2], hn::Mul(s, k[3]))))));
}

// geomCubicFirstRoot per lane: the bracket's non-negative end, or -1.
HWY_INLINE VF cubicFirstRootLanes(const VF k[4]) {
  const DF df;
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  const VF qa = hn::Mul(hn::Set(df, 3.0f), k[3]);
  const VF qb = hn::Mul(hn::Set(df, 2.0f), k[2]);
  const VF qc = k[1];
  const MF quadratic = hn::Ne(qa, zero);
  const VF disc = hn::Sub(hn::Mul(qb, qb), hn::Mul(hn::Mul(hn::Set(df, 4.0f), qa), qc));
  const MF real = hn::And(quadratic, hn::Ge(disc, zero));
  const VF root = hn::Sqrt(hn::IfThenElseZero(real, disc));
  const VF q =
      hn::Mul(hn::Set(df, -0.5f), hn::Add(qb, hn::IfThenElse(hn::Ge(qb, zero), root, hn::Neg(root))));
  const VF r0 = hn::Div(q, qa);
  const VF r1 = hn::IfThenElse(hn::Ne(q, zero), hn::Div(qc, q), r0);
  VF cand1 = hn::IfThenElse(real, glmClamp(glmMin(r0, r1), zero, one), one);
  const VF cand2 = hn::IfThenElse(real, glmClamp(glmMax(r0, r1), zero, one), one);
  const MF linear = hn::AndNot(quadratic, hn::Ne(qb, zero));
  cand1 = hn::IfThenElse(linear, glmClamp(hn::Div(hn::Neg(qc), qb), zero, one), cand1);
  const MF neg1 = hn::Lt(cubicLanes(k, cand1), zero);
  const MF neg2 = hn::Lt(cubicLanes(k, cand2), zero);
  const MF neg3 = hn::Lt(cubicLanes(k, one), zero);
  // The first negative candidate's piece: [0, cand1], [cand1, cand2] or [cand2, 1].
  VF lo = hn::IfThenElse(neg1, zero, hn::IfThenElse(neg2, cand1, cand2));
  VF hi = hn::IfThenElse(neg1, cand1, hn::IfThenElse(neg2, cand2, one));
  const VF half = hn::Set(df, 0.5f);
  for (uint32_t it = 0; it < gpu::kGeomRootSteps; ++it) {
    const VF mid = hn::Mul(hn::Add(lo, hi), half);
    const MF inside = hn::Lt(cubicLanes(k, mid), zero);
    hi = hn::IfThenElse(inside, mid, hi);
    lo = hn::IfThenElse(inside, lo, mid);
  }
  return hn::IfThenElse(hn::Or(hn::Or(neg1, neg2), neg3), lo, hn::Set(df, -1.0f));
}

// geomTraceGrid per lane (lanes outside `active` give -1): the segment clipped to the grid's box,
// walked cell by cell while any lane walks, each lane's cells with a negative sample solved.
HWY_INLINE VF traceGridLanes(const GridLanes& g, const V3& x0, const V3& x1, MF active) {
  const DF df;
  const DI di;
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  const V3 u0v =
      V3{hn::Div(hn::Sub(x0.x, g.origin.x), g.spacing.x), hn::Div(hn::Sub(x0.y, g.origin.y), g.spacing.y),
         hn::Div(hn::Sub(x0.z, g.origin.z), g.spacing.z)};
  const V3 u1v =
      V3{hn::Div(hn::Sub(x1.x, g.origin.x), g.spacing.x), hn::Div(hn::Sub(x1.y, g.origin.y), g.spacing.y),
         hn::Div(hn::Sub(x1.z, g.origin.z), g.spacing.z)};
  const VF u0[3] = {u0v.x, u0v.y, u0v.z};
  const VF d[3] = {hn::Sub(u1v.x, u0v.x), hn::Sub(u1v.y, u0v.y), hn::Sub(u1v.z, u0v.z)};
  const VF hi[3] = {g.hi.x, g.hi.y, g.hi.z};
  VF tA = zero;
  VF tB = one;
  MF alive = active;
  MF still[3];
  for (uint32_t k = 0; k < 3; ++k) {
    still[k] = hn::Eq(d[k], zero);
    alive = hn::AndNot(hn::And(still[k], hn::Or(hn::Lt(u0[k], zero), hn::Gt(u0[k], hi[k]))), alive);
    const VF ta = hn::Div(hn::Sub(zero, u0[k]), d[k]);
    const VF tb = hn::Div(hn::Sub(hi[k], u0[k]), d[k]);
    tA = hn::IfThenElse(still[k], tA, glmMax(tA, glmMin(ta, tb)));
    tB = hn::IfThenElse(still[k], tB, glmMin(tB, glmMax(ta, tb)));
  }
  alive = hn::And(alive, hn::Le(tA, tB));
  VF t = tA;
  VF result = hn::Set(df, -1.0f);
  const VF half = hn::Set(df, 0.5f);
  for (uint32_t it = 0; it < gpu::kGeomTraceMaxCells; ++it) {
    alive = hn::And(alive, hn::Lt(t, tB));
    if (hn::AllFalse(df, alive)) break;
    VF tn = tB;
    VF ut[3];
    for (uint32_t k = 0; k < 3; ++k) ut[k] = hn::Add(u0[k], hn::Mul(d[k], t));
    for (uint32_t k = 0; k < 3; ++k) {
      const MF forward = hn::Gt(d[k], zero);
      const VF face = hn::IfThenElse(forward, hn::Add(hn::Floor(ut[k]), one), hn::Sub(hn::Ceil(ut[k]), one));
      VF tk = hn::Div(hn::Sub(face, u0[k]), d[k]);
      const VF next =
          hn::Div(hn::Sub(hn::Add(face, hn::IfThenElse(forward, one, hn::Neg(one))), u0[k]), d[k]);
      tk = hn::IfThenElse(hn::Le(tk, t), next, tk);
      tn = hn::IfThenElse(still[k], tn, glmMin(tn, tk));
    }
    const VF midT = hn::Mul(hn::Add(t, tn), half);
    VF um[3];
    for (uint32_t k = 0; k < 3; ++k) um[k] = glmClamp(hn::Add(u0[k], hn::Mul(d[k], midT)), zero, hi[k]);
    VU c[3];
    gridCellOfLanes(g, um, c);
    VF v[8];
    gridCellLanes(g, c, alive, v);
    const VF lowest = glmMin(glmMin(glmMin(v[0], v[1]), glmMin(v[2], v[3])),
                             glmMin(glmMin(v[4], v[5]), glmMin(v[6], v[7])));
    const MF solve = hn::And(alive, hn::Lt(lowest, zero));
    if (!hn::AllFalse(df, solve)) {
      const V3 a{hn::Sub(ut[0], hn::ConvertTo(df, hn::BitCast(di, c[0]))),
                 hn::Sub(ut[1], hn::ConvertTo(df, hn::BitCast(di, c[1]))),
                 hn::Sub(ut[2], hn::ConvertTo(df, hn::BitCast(di, c[2])))};
      const VF span = hn::Sub(tn, t);
      const V3 b{hn::Mul(d[0], span), hn::Mul(d[1], span), hn::Mul(d[2], span)};
      VF k[4];
      cellCubicLanes(v, a, b, k);
      const VF sRoot = cubicFirstRootLanes(k);
      const MF found = hn::And(solve, hn::Ge(sRoot, zero));
      result = hn::IfThenElse(found, hn::Add(t, hn::Mul(sRoot, span)), result);
      alive = hn::AndNot(found, alive);
    }
    t = tn;
  }
  return result;
}

// The geometry a continuous point set meets, as geomContinuousPoint sees it: its signed distance
// (geomImplicitDistance), normal and closest point (geomImplicitClosest) and trace (geomTrace).
// An analytic primitive: 1-Lipschitz (the skip applies), its closest point cheap.
struct PrimitiveField {
  static constexpr bool kLipschitz = true;
  static constexpr bool kWalks = false;
  const gpu::GeomShape& s;
  HWY_INLINE VF distance(const V3& p) const { return primitiveDistanceLanes(s, p); }
  HWY_INLINE V3 normal(const V3& p) const { return closestPrimitive(s, p).normal; }
  HWY_INLINE ClosestLanes closest(const V3& p) const { return closestPrimitive(s, p); }
  HWY_INLINE VF trace(const V3& x0, const V3& x1, MF) const { return traceShapeLanes(s, x0, x1); }
};

// An implicit geometry: the field and its gradient (geomGridDistance, geomGridNormal: 6 more fields),
// the cell walk.
struct GridField {
  static constexpr bool kLipschitz = false;
  static constexpr bool kWalks = true;  // a trace's cost grows with the cells its segment crosses
  const gpu::GeomShape& s;
  GridLanes g;
  V3 inverseSpacing;  // for the walks' lengths only
  const GridBricks* bricks = nullptr;  // where built: the traces that cannot find a root skipped
  HWY_INLINE VF distance(const V3& p) const { return gridDistanceLanes(g, p); }
  HWY_INLINE V3 normal(const V3& p) const { return gridNormalLanes(g, s, p); }
  HWY_INLINE ClosestLanes closest(const V3& p) const {
    const VF d = distance(p);
    const V3 n = normal(p);
    return {sub(p, mul(n, d)), n, d};
  }
  HWY_INLINE VF trace(const V3& x0, const V3& x1, MF active) const {
    return traceGridLanes(g, x0, x1, active);
  }
};

// The chunk's trace list reordered by the cells each segment crosses (about |d|_1 in grid units;
// buckets of powers of two, stable), so that a lane batch's walks end together: a batch walks until
// its longest lane is done (1M points moving 5x farther one time in eight: 198 -> 165 ms). The
// results go back by each entry's index: the order does not matter.
HWY_INLINE void sortTracesByWalk(ContinuousChunk& c) {
  constexpr uint32_t kBuckets = 8;
  // Only a list with a long walk (past 16 cells: a point that jumped) is reordered; walks of a few
  // cells each (a cloth's step) cost less than the reordering saves.
  bool longWalk = false;
  for (uint32_t e = 0; e < c.traces; ++e) longWalk |= c.walk[e] > 16.0f;
  if (!longWalk) return;
  uint8_t bucket[kTraceChunk];
  uint32_t start[kBuckets + 1] = {};
  for (uint32_t e = 0; e < c.traces; ++e) {
    uint32_t b = 0;
    for (float limit = 2.0f; b + 1 < kBuckets && !(c.walk[e] < limit); limit *= 2.0f) ++b;
    bucket[e] = static_cast<uint8_t>(b);
    ++start[b + 1];
  }
  for (uint32_t b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
  uint32_t order[kTraceChunk];  // order[to] = the entry that goes there
  for (uint32_t e = 0; e < c.traces; ++e) order[start[bucket[e]]++] = e;
  const auto permute = [&](auto* values) {
    std::remove_reference_t<decltype(values[0])> copy[kTraceChunk];
    for (uint32_t to = 0; to < c.traces; ++to) copy[to] = values[order[to]];
    std::memcpy(values, copy, c.traces * sizeof copy[0]);
  };
  permute(c.index);
  permute(c.x0);
  permute(c.y0);
  permute(c.z0);
  permute(c.x1);
  permute(c.y1);
  permute(c.z1);
  permute(c.fEnd);
}

// Step 2 for the chunk's trace list: each traced point's contact (into the chunk) and state.
template <class Field>
HWY_INLINE void traceChunk(const Field& f, ContinuousChunk& c, Float4* state) {
  const DF df;
  const DI di;
  const size_t lanes = hn::Lanes(df);
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  HWY_ALIGN float newState[4 * kMaxLanes];
  for (uint32_t j = 0; j < c.traces; j += static_cast<uint32_t>(lanes)) {
    const size_t valid = c.traces - j < lanes ? c.traces - j : lanes;
    const MF inList = hn::FirstN(df, valid);
    const V3 x0{hn::Load(df, c.x0 + j), hn::Load(df, c.y0 + j), hn::Load(df, c.z0 + j)};
    const V3 cur{hn::Load(df, c.x1 + j), hn::Load(df, c.y1 + j), hn::Load(df, c.z1 + j)};
    const VF fCur = hn::Load(df, c.fEnd + j);
    const VF t = f.trace(x0, cur, inList);
    // geomContinuousPoint after the trace.
    const MF root = hn::And(hn::Ge(t, zero), inList);
    const V3 xc = mix(x0, cur, t);
    V3 n{zero, zero, zero};
    if (!hn::AllFalse(df, root)) n = f.normal(xc);
    VF depth = dot(sub(xc, cur), n);
    const MF endsInside = hn::Lt(fCur, zero);
    const V3 back = sub(xc, cur);
    const VF backLen = hn::Sqrt(dot(back, back));
    const MF turn = hn::AndNot(hn::Gt(depth, zero), hn::Gt(backLen, zero));
    n = select(turn, div(back, backLen), n);
    depth = hn::IfThenElse(turn, backLen, depth);
    const MF traced = hn::And(root, hn::Gt(depth, zero));  // the traced contact
    // Otherwise a point ending inside gets the static contact at cur.
    ClosestLanes at{V3{zero, zero, zero}, V3{zero, zero, zero}, zero};
    if (!hn::AllFalse(df, hn::And(hn::AndNot(traced, endsInside), inList))) at = f.closest(cur);
    const VF clDist = hn::IfThenElse(traced, hn::Neg(depth), at.dist);
    const V3 clNormal = select(traced, n, at.normal);
    const V3 clPoint = select(traced, add(cur, mul(n, depth)), at.surface);
    const MF hit = hn::Or(traced, endsInside);
    const MF saved = hn::And(root, endsInside);  // (xc, 1) while inside after a traced entry
    hn::StoreInterleaved4(hn::IfThenElse(saved, xc.x, cur.x), hn::IfThenElse(saved, xc.y, cur.y),
                          hn::IfThenElse(saved, xc.z, cur.z), hn::IfThenElseZero(saved, one), df, newState);
    const VI index = hn::Load(di, c.index + j);
    hn::ScatterIndex(hn::IfThenElseZero(hit, one), df, c.hit, index);
    hn::ScatterIndex(clPoint.x, df, c.sx, index);
    hn::ScatterIndex(clPoint.y, df, c.sy, index);
    hn::ScatterIndex(clPoint.z, df, c.sz, index);
    hn::ScatterIndex(clNormal.x, df, c.nx, index);
    hn::ScatterIndex(clNormal.y, df, c.ny, index);
    hn::ScatterIndex(clNormal.z, df, c.nz, index);
    hn::ScatterIndex(hn::Sub(zero, clDist), df, c.depth, index);  // geomBallContact with radius 0
    HWY_ALIGN int32_t at32[kMaxLanes];
    hn::Store(index, di, at32);
    for (size_t k = 0; k < valid; ++k) {
      std::memcpy(static_cast<void*>(&state[at32[k]]), newState + 4 * k, sizeof(Float4));
    }
  }
}

// Step 1 for one lane batch of the chunk's points (start: carried by the geometry's motion; isSaved:
// the start is the saved point): both ends' fields, a primitive's skip, the static contact of an
// untraced point ending inside, the traced points appended to the trace list. `at` gives the
// points' places in the chunk: contiguous from at.first, or one per lane (a list of the points
// whose traces may find a root: listed).
struct ChunkPlaces {
  bool listed = false;
  size_t first = 0;  // contiguous: the batch's first point
  VI index;          // listed: each lane's point
};

template <class Field>
HWY_INLINE void stepLanes(const Field& f, const V3& start, const V3& cur, MF isSaved, MF inBatch,
                          const ChunkPlaces& at, ContinuousChunk& c) {
  const DF df;
  const DI di;
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  ClosestLanes cl{V3{zero, zero, zero}, V3{zero, zero, zero}, zero};
  if constexpr (Field::kLipschitz) {
    cl = f.closest(cur);
  } else {
    cl.dist = f.distance(cur);  // the normal only where a point gets the static contact (below)
  }
  const VF fCur = cl.dist;
  const VF fStart = hn::IfThenZeroElse(isSaved, f.distance(start));
  MF skip = hn::FirstN(df, 0);
  if constexpr (Field::kLipschitz) {
    const V3 move = sub(cur, start);
    skip = hn::AndNot(isSaved,
                      hn::And(hn::Ge(fCur, zero), hn::Gt(hn::Add(fStart, fCur), hn::Sqrt(dot(move, move)))));
  }
  const MF traceLane = hn::And(hn::AndNot(skip, hn::Or(isSaved, hn::Ge(fStart, zero))), inBatch);
  const VF depth = hn::Sub(zero, fCur);  // geomBallContact with radius 0
  const MF staticHit = hn::And(hn::AndNot(traceLane, hn::Gt(depth, zero)), inBatch);
  if constexpr (!Field::kLipschitz) {
    if (!hn::AllFalse(df, staticHit)) {
      cl.normal = f.normal(cur);
      cl.surface = sub(cur, mul(cl.normal, fCur));
    }
  }
  const VF hit = hn::IfThenElseZero(staticHit, one);
  if (at.listed) {
    hn::ScatterIndex(hit, df, c.hit, at.index);
    if (!hn::AllFalse(df, staticHit)) {
      hn::ScatterIndex(cl.surface.x, df, c.sx, at.index);
      hn::ScatterIndex(cl.surface.y, df, c.sy, at.index);
      hn::ScatterIndex(cl.surface.z, df, c.sz, at.index);
      hn::ScatterIndex(cl.normal.x, df, c.nx, at.index);
      hn::ScatterIndex(cl.normal.y, df, c.ny, at.index);
      hn::ScatterIndex(cl.normal.z, df, c.nz, at.index);
      hn::ScatterIndex(depth, df, c.depth, at.index);
    }
  } else {
    const size_t k = at.first;
    hn::Store(hit, df, c.hit + k);
    hn::Store(cl.surface.x, df, c.sx + k);
    hn::Store(cl.surface.y, df, c.sy + k);
    hn::Store(cl.surface.z, df, c.sz + k);
    hn::Store(cl.normal.x, df, c.nx + k);
    hn::Store(cl.normal.y, df, c.ny + k);
    hn::Store(cl.normal.z, df, c.nz + k);
    hn::Store(depth, df, c.depth + k);
  }
  if (hn::AllFalse(df, traceLane)) return;
  const size_t n = c.traces;
  const VI index = at.listed ? at.index : hn::Iota(di, static_cast<int32_t>(at.first));
  hn::CompressStore(index, hn::RebindMask(di, traceLane), di, c.index + n);
  hn::CompressStore(start.x, traceLane, df, c.x0 + n);
  hn::CompressStore(start.y, traceLane, df, c.y0 + n);
  hn::CompressStore(start.z, traceLane, df, c.z0 + n);
  hn::CompressStore(cur.x, traceLane, df, c.x1 + n);
  hn::CompressStore(cur.y, traceLane, df, c.y1 + n);
  hn::CompressStore(cur.z, traceLane, df, c.z1 + n);
  if constexpr (Field::kWalks) {  // |d|_1 in grid units, about
    const V3 d = sub(cur, start);
    const VF cells =
        hn::Add(hn::Add(hn::Mul(hn::Abs(d.x), f.inverseSpacing.x), hn::Mul(hn::Abs(d.y), f.inverseSpacing.y)),
                hn::Mul(hn::Abs(d.z), f.inverseSpacing.z));
    hn::CompressStore(cells, traceLane, df, c.walk + n);
  }
  c.traces += static_cast<uint32_t>(hn::CompressStore(fCur, traceLane, df, c.fEnd + n));
}

template <class Field>
uint64_t continuousContacts(const Field& f, const gpu::GeomShape& previousPose, bool pointSetIsA,
                            const Float4* points, const Float4* previous, Float4* state, uint32_t count,
                            uint32_t query, ContactElement* outA, ContactElement* outB, uint64_t total,
                            uint64_t capacity) {
  const gpu::GeomShape& primitive = f.s;
  const DF df;
  const DI di;
  const size_t lanes = hn::Lanes(df);
  const VF zero = hn::Zero(df);
  HWY_ALIGN float tail[3][4 * kMaxLanes];
  HWY_ALIGN float newState[4 * kMaxLanes];
  // A grid with bricks (GridBricks): the points whose traces may find a root, listed in step 1's
  // first pass; the others need neither field (their cells' samples are non-negative: no static
  // contact either), only the state (cur, 0).
  HWY_ALIGN int32_t listIndex[kTraceChunk + kMaxLanes];
  HWY_ALIGN float listStart[3][kTraceChunk + kMaxLanes], listCur[3][kTraceChunk + kMaxLanes];
  HWY_ALIGN float listSaved[kTraceChunk + kMaxLanes];
  bool bricks = false;
  if constexpr (Field::kWalks) bricks = f.bricks != nullptr;
  ContinuousChunk c;
  uint64_t found = 0;
  for (uint32_t chunk = 0; chunk < count; chunk += kTraceChunk) {
    const uint32_t chunkEnd = count - chunk < kTraceChunk ? count : chunk + kTraceChunk;
    c.traces = 0;
    uint32_t listed = 0;
    for (uint32_t i = chunk; i < chunkEnd; i += static_cast<uint32_t>(lanes)) {
      const size_t valid = chunkEnd - i < lanes ? chunkEnd - i : lanes;
      const float* src[3] = {&points[i].x, &previous[i].x, &state[i].x};
      if (valid < lanes) {
        for (int k = 0; k < 3; ++k) {
          std::memset(tail[k], 0, sizeof tail[k]);
          std::memcpy(tail[k], src[k], valid * sizeof(Float4));
          src[k] = tail[k];
        }
      }
      V3 cur, prev, saved;
      VF w, savedW;
      hn::LoadInterleaved4(df, src[0], cur.x, cur.y, cur.z, w);
      hn::LoadInterleaved4(df, src[1], prev.x, prev.y, prev.z, w);
      hn::LoadInterleaved4(df, src[2], saved.x, saved.y, saved.z, savedW);
      const MF isSaved = hn::Ne(savedW, zero);
      const V3 start = poseMapLanes(previousPose, primitive, select(isSaved, saved, prev));
      const MF inBatch = hn::FirstN(df, valid);
      const size_t at = i - chunk;
      // The states (cur, 0); a traced point's is stored by traceChunk (after its start was read here).
      hn::StoreInterleaved4(cur.x, cur.y, cur.z, zero, df, newState);
      std::memcpy(static_cast<void*>(&state[i]), newState, valid * sizeof(Float4));
      if (!bricks) {
        stepLanes(f, start, cur, isSaved, inBatch, ChunkPlaces{false, at, hn::Zero(di)}, c);
        continue;
      }
      if constexpr (Field::kWalks) {
        // Listed: the points whose segment's cells may hold a negative sample (GridBricks::mayRoot,
        // with the walk's grid coordinates); the others have no contact.
        hn::Store(hn::Zero(df), df, c.hit + at);
        const V3 u0{hn::Div(hn::Sub(start.x, f.g.origin.x), f.g.spacing.x),
                    hn::Div(hn::Sub(start.y, f.g.origin.y), f.g.spacing.y),
                    hn::Div(hn::Sub(start.z, f.g.origin.z), f.g.spacing.z)};
        const V3 u1{hn::Div(hn::Sub(cur.x, f.g.origin.x), f.g.spacing.x),
                    hn::Div(hn::Sub(cur.y, f.g.origin.y), f.g.spacing.y),
                    hn::Div(hn::Sub(cur.z, f.g.origin.z), f.g.spacing.z)};
        const MF keep = hn::And(f.bricks->mayRootLanes(u0, u1), inBatch);
        if (hn::AllFalse(df, keep)) continue;
        hn::CompressStore(hn::Iota(di, static_cast<int32_t>(at)), hn::RebindMask(di, keep), di,
                          listIndex + listed);
        hn::CompressStore(start.x, keep, df, listStart[0] + listed);
        hn::CompressStore(start.y, keep, df, listStart[1] + listed);
        hn::CompressStore(start.z, keep, df, listStart[2] + listed);
        hn::CompressStore(cur.x, keep, df, listCur[0] + listed);
        hn::CompressStore(cur.y, keep, df, listCur[1] + listed);
        hn::CompressStore(cur.z, keep, df, listCur[2] + listed);
        listed += static_cast<uint32_t>(hn::CompressStore(savedW, keep, df, listSaved + listed));
      }
    }
    // Step 1 for the listed points, in full lane batches.
    for (uint32_t j = 0; j < listed; j += static_cast<uint32_t>(lanes)) {
      const size_t valid = listed - j < lanes ? listed - j : lanes;
      // Past the list: the spare entry kTraceChunk, whose scatters nothing reads, with the list's
      // first point's values (written, finite; masked off by `valid`).
      for (size_t k = listed; k < j + lanes; ++k) {
        listIndex[k] = static_cast<int32_t>(kTraceChunk);
        for (uint32_t a = 0; a < 3; ++a) {
          listStart[a][k] = listStart[a][0];
          listCur[a][k] = listCur[a][0];
        }
        listSaved[k] = listSaved[0];
      }
      const V3 start{hn::Load(df, listStart[0] + j), hn::Load(df, listStart[1] + j),
                     hn::Load(df, listStart[2] + j)};
      const V3 cur{hn::Load(df, listCur[0] + j), hn::Load(df, listCur[1] + j), hn::Load(df, listCur[2] + j)};
      const MF isSaved = hn::Ne(hn::Load(df, listSaved + j), zero);
      stepLanes(f, start, cur, isSaved, hn::FirstN(df, valid),
                ChunkPlaces{true, 0, hn::Load(di, listIndex + j)}, c);
    }
    if (c.traces != 0u) {
      // The last batch's lanes past the list (what the compressing stores left there) scatter to the
      // spare entry and store no state.
      for (size_t k = c.traces; k < c.traces + lanes; ++k) c.index[k] = static_cast<int32_t>(kTraceChunk);
      if constexpr (Field::kWalks) {
        if (c.traces > lanes) sortTracesByWalk(c);
      }
      traceChunk(f, c, state + chunk);
    }
    for (uint32_t k = 0; k < chunkEnd - chunk; ++k) {
      if (c.hit[k] == 0.0f) continue;
      const uint64_t slotOut = total + found++;
      if (slotOut >= capacity) continue;
      const uint32_t i = chunk + k;
      storePointContact(outA, outB, slotOut, pointSetIsA, gpu::vec3(points[i].x, points[i].y, points[i].z),
                        gpu::vec3(c.sx[k], c.sy[k], c.sz[k]), gpu::vec3(c.nx[k], c.ny[k], c.nz[k]),
                        c.depth[k], i, query);
    }
  }
  return found;
}

uint64_t ContinuousPointSetContacts(const gpu::GeomShape& shape, const gpu::GeomShape& previousPose,
                                    const float* samples, bool pointSetIsA, const Float4* points,
                                    const Float4* previous, Float4* state, uint32_t count, uint32_t query,
                                    ContactElement* outA, ContactElement* outB, uint64_t total,
                                    uint64_t capacity) {
  if (shape.info.x == gpu::kGeomImplicit) {
    const gpu::vec3 h = gpu::vec3(shape.p1);
    // The bricks cost a pass over the samples: built for a set of at least a 64th of their count.
    GridBricks bricks;
    if (uint64_t{count} * 64u >= shape.info.z) bricks.build(shape, samples);
    const GridField field{shape, gridLanes(shape, samples),
                          splat(gpu::vec3(1.0f / h.x, 1.0f / h.y, 1.0f / h.z)),
                          bricks.negative.empty() ? nullptr : &bricks};
    return continuousContacts(field, previousPose, pointSetIsA, points, previous, state, count, query, outA,
                              outB, total, capacity);
  }
  return continuousContacts(PrimitiveField{shape}, previousPose, pointSetIsA, points, previous, state, count,
                            query, outA, outB, total, capacity);
}

// ---- validate()'s first pass: primitiveClearlyValid with the lanes over a geometry's 16 words -----
// Per type, two word masks (kPrimitiveRules with the header folded in): a word is bad where
// (word & keep) > limit as unsigned. Must be zero: keep the magnitude, limit 0 (+0 or -0 pass). Must be
// finite: keep the magnitude, limit the largest finite float's bits. Must be finite and >= 0: keep
// every bit, limit the largest finite float's (a set sign bit fails, -0 too: the detailed check then
// accepts it). First and count: every bit, limit 0; flags: every bit but a plane's
// kGeometryFlagBidirectional; the type word and words without a rule: keep nothing. One AND and one
// compare per vector of words; the type word indexes the table.
struct PrimitiveWordMasks {
  alignas(64) uint32_t keep[16];
  alignas(64) uint32_t limit[16];
};

constexpr uint32_t kLargestFiniteBits = 0x7F7FFFFFu;

constexpr PrimitiveWordMasks primitiveWordMasks(uint32_t type) {
  const PrimitiveRule& rule = kPrimitiveRules[type];
  PrimitiveWordMasks m{};
  for (int k = 0; k < 12; ++k) {
    if (rule.zero[k] != 0u) {
      m.keep[k] = 0x7FFFFFFFu;
      m.limit[k] = 0u;
    } else if (rule.nonNegative[k] != 0u) {
      m.keep[k] = kRuleAll;
      m.limit[k] = kLargestFiniteBits;
    } else if (rule.finite[k] != 0u) {
      m.keep[k] = 0x7FFFFFFFu;
      m.limit[k] = kLargestFiniteBits;
    }
  }
  m.keep[13] = kRuleAll;  // first
  m.keep[14] = kRuleAll;  // count
  m.keep[15] = type == gpu::kGeomPlane ? ~kGeometryFlagBidirectional : kRuleAll;  // flags
  return m;
}

// One entry per rule (the types up to kGeomPlane: FirstUnclearGeometry's bound).
static_assert(std::size(kPrimitiveRules) == gpu::kGeomPlane + 1, "one rule per primitive type");
constexpr auto kPrimitiveWordMasks = [] {
  std::array<PrimitiveWordMasks, std::size(kPrimitiveRules)> table{};
  for (uint32_t type = 0; type < table.size(); ++type) table[type] = primitiveWordMasks(type);
  return table;
}();

constexpr size_t kValidatePrefetchAhead = 96;
constexpr size_t kValidatePrefetchMin = size_t{1} << 15;  // 2 MB of records: fewer are read from the caches
constexpr size_t kValidateGroup = 4;  // geometries tested together (one branch on their masks)
static_assert(kValidateGroup == 4, "FirstUnclearGeometry spells the group's four geometries out");

// The words of geometry g (of a primitive type) that break its type's rule, as lanes (none: clear
// but for the unit vector).
HWY_INLINE auto badWords(const Geometry& g, uint32_t type) {
  const DU du;
  const size_t lanes = hn::Lanes(du);
  const PrimitiveWordMasks& m = kPrimitiveWordMasks[type];
  const uint32_t* words = reinterpret_cast<const uint32_t*>(&g);
  auto bad = hn::FirstN(du, 0);
  for (size_t k = 0; k < 16; k += lanes) {
    const VU w = hn::LoadU(du, words + k);
    bad = hn::Or(bad, hn::Gt(hn::And(w, hn::Load(du, m.keep + k)), hn::Load(du, m.limit + k)));
  }
  return bad;
}

// Writes each clearly valid geometry's type to types[i] on the way (the caller's later passes read
// the bytes, not the geometries). Groups of kValidateGroup geometries take one branch on their words'
// masks; a group with anything unclear is taken again one geometry at a time.
size_t FirstUnclearGeometry(const Geometry* geometries, size_t begin, size_t end, uint8_t* types) {
  const DU du;
  static_assert(sizeof(Geometry) == 64, "a geometry is 16 words");
  size_t i = begin;
  const bool far = end - begin > kValidatePrefetchMin;
  for (; i + kValidateGroup <= end; i += kValidateGroup) {
    // The records stream in order: ask for the group's kValidatePrefetchAhead geometries (6 KB) ahead,
    // a line each, into L2 (the loads below wait on memory otherwise; the hardware's own prefetch keeps
    // up poorly on a busy machine; 96 ahead read 2M geometries 14% faster than 32 ahead into L1).
    if (far) {
      const size_t ahead = i + kValidatePrefetchAhead + kValidateGroup <= end ? i + kValidatePrefetchAhead : i;
      for (size_t j = 0; j < kValidateGroup; ++j) __builtin_prefetch(geometries + ahead + j, 0, 2);
    }
    const Geometry* group = geometries + i;
    const uint32_t t0 = static_cast<uint32_t>(group[0].type), t1 = static_cast<uint32_t>(group[1].type);
    const uint32_t t2 = static_cast<uint32_t>(group[2].type), t3 = static_cast<uint32_t>(group[3].type);
    if (std::max(std::max(t0, t1), std::max(t2, t3)) > gpu::kGeomPlane) break;
    const auto bad = hn::Or(hn::Or(badWords(group[0], t0), badWords(group[1], t1)),
                            hn::Or(badWords(group[2], t2), badWords(group[3], t3)));
    const bool unit = primitiveUnitClear(group[0], kPrimitiveRules[t0].unitComponents) &
                      primitiveUnitClear(group[1], kPrimitiveRules[t1].unitComponents) &
                      primitiveUnitClear(group[2], kPrimitiveRules[t2].unitComponents) &
                      primitiveUnitClear(group[3], kPrimitiveRules[t3].unitComponents);
    if (!hn::AllFalse(du, bad) || !unit) break;
    if (types != nullptr) {
      types[i] = static_cast<uint8_t>(t0);
      types[i + 1] = static_cast<uint8_t>(t1);
      types[i + 2] = static_cast<uint8_t>(t2);
      types[i + 3] = static_cast<uint8_t>(t3);
    }
  }
  for (; i < end; ++i) {
    const Geometry& g = geometries[i];
    const uint32_t type = static_cast<uint32_t>(g.type);
    if (type > gpu::kGeomPlane) return i;
    if (!hn::AllFalse(du, badWords(g, type))) return i;
    if (!primitiveUnitClear(g, kPrimitiveRules[type].unitComponents)) return i;
    if (types != nullptr) types[i] = static_cast<uint8_t>(type);
  }
  return end;
}

// validate()'s pass over the queries (firstQueryToCheck): a vector of words holds Lanes / 4 queries
// (a, b, method, state), bad where a word exceeds its limit (a and b: geometryCount - 1; method and
// state: 0), one compare; then their types. A vector with anything to check is taken again one query
// at a time.
size_t FirstQueryToCheck(const GeometryQuery* queries, size_t count, size_t geometryCount, const uint8_t* types,
                         size_t begin) {
  static_assert(sizeof(GeometryQuery) == 16, "a query is 4 words: a, b, method, state");
  const DU du;
  const size_t lanes = hn::Lanes(du);
  if (lanes >= 4 && geometryCount != 0) {
    const uint32_t last = geometryCount - 1 > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(geometryCount - 1);
    const VU word = hn::And(hn::Iota(du, 0), hn::Set(du, 3u));
    const VU limit = hn::IfThenElseZero(hn::Lt(word, hn::Set(du, 2u)), hn::Set(du, last));
    const size_t perVector = lanes / 4;
    for (; begin + perVector <= count; begin += perVector) {
      const VU w = hn::LoadU(du, reinterpret_cast<const uint32_t*>(queries + begin));
      if (!hn::AllFalse(du, hn::Gt(w, limit))) break;
      bool pairs = true;
      for (size_t k = 0; k < perVector; ++k) pairs &= staticPrimitiveTypes(queries[begin + k], types);
      if (!pairs) break;
    }
  }
  while (begin < count && staticPrimitiveQuery(queries[begin], geometryCount, types)) ++begin;
  return begin;
}

// ---- A batch of one closed-form pair type in one pass over its geometries (fusedPrimitivePairs) ----
// The lanes run query batch by query batch; before a batch, the geometries up to the highest it reads
// are validated (FirstUnclearGeometry, kFusedValidateStep at a time: the gather then finds them in
// L1; 64 read 1M sphere pairs 7-12% faster than 2048, whose 128 KB the gather read from L2), and each query
// is checked as validate() checks it (indices, static, state 0, the pair's two types). Nothing goes to the
// output: each query's contact count goes to staging.counts and its contacts (below the output's capacity) to
// staging.stash, 12 words each: the ball side's point (w: the depth), normal (w: the query), the other side's
// surface point (w: 1 where the ball side is the query's b). False (the caller runs the usual path, which
// names the error) at the first geometry that is not clearly valid or query that is not of the pair, the
// geometries no query reads included.
constexpr size_t kFusedPrefetchAhead = 2048;
constexpr size_t kFusedValidateStep = 64;
constexpr size_t kStashWords = 12;

// The stash's entries (48 bytes) are written with aligned 16-byte stores: new[] gives 16-byte alignment.
static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= 16 && kStashWords * sizeof(float) % 16 == 0,
              "stash entries are 16-byte aligned");

void growStash(FusedStaging& st, size_t entries, size_t keep) {
  if (entries <= st.stashEntries) return;
  const size_t grown = entries > 2 * st.stashEntries ? entries : 2 * st.stashEntries;
  std::unique_ptr<float[]> next(new float[grown * kStashWords]);
  if (keep != 0) std::memcpy(next.get(), st.stash.get(), keep * kStashWords * sizeof(float));
  st.stash = std::move(next);
  st.stashEntries = grown;
}

template <uint32_t kLo, uint32_t kHi>
bool FusedRun(const GeometryQueryInput& input, uint64_t capacity, uint64_t streamBytes, FusedStaging& st,
              uint64_t* totalOut) {
  constexpr size_t kSlots = kPairSlots<kLo, kHi>;
  const DF df;
  const size_t lanes = hn::Lanes(df);
  const Geometry* geometries = input.geometries.data();
  const size_t n = input.geometries.size();
  const GeometryQuery* queries = input.queries.data();
  const size_t count = input.queries.size();
  if (n == 0) return false;
  PairGather g;
  std::memset(&g, 0, sizeof g);
  // Zeroed: the loop below copies every slot of a lane (capsule-plane), also one that batchHits left
  // unstored in a batch where no lane hits it (the copy is then overwritten or past the capacity).
  HWY_ALIGN float ballPoint[kSlots][4 * kMaxLanes] = {};
  HWY_ALIGN float ballDirection[kSlots][4 * kMaxLanes] = {};
  HWY_ALIGN float otherPoint[kSlots][4 * kMaxLanes] = {};
  HWY_ALIGN uint32_t counts[kMaxLanes];
  HWY_ALIGN uint32_t slotMasks[kMaxLanes];
#if HWY_TARGET != HWY_SCALAR
  // A lane batch's stash entries (a streamed stash's: below) and the spare entry past them.
  HWY_ALIGN float batchEntries[(kMaxLanes * kSlots + 1) * kStashWords];
#endif
  uint8_t* queryCounts = st.counts.get();
  size_t validated = 0;  // geometries [0, validated) are clearly valid
  // Geometries [0, prefetched) were asked for. Each lane batch asks for the next 2 lanes (as many as
  // it reads, two per query), kFusedPrefetchAhead geometries ahead of what the batch reads, and for
  // the queries as far ahead: the memory reads overlap the lanes' arithmetic instead of stalling the
  // validation (into L2: 128 KB ahead is larger than L1).
  size_t prefetched = std::min(n, kFusedPrefetchAhead);
  uint64_t total = 0;
  // A stash past the caches is written with streaming stores (no line is read before it is written;
  // WriteFused reads it back once, in order).
#if HWY_TARGET != HWY_SCALAR
  // The query words' limits (a, b: n - 1; method, state: 0), the index words' mask.
  const DU du;
  const uint32_t lastGeometry = n - 1 > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(n - 1);
  const VU queryIndexWords =
      hn::VecFromMask(du, hn::Lt(hn::And(hn::Iota(du, 0), hn::Set(du, 3u)), hn::Set(du, 2u)));
  const VU queryLimit = hn::And(queryIndexWords, hn::Set(du, lastGeometry));
#endif
  const bool streamStash =
      HWY_TARGET != HWY_SCALAR &&
      std::min<uint64_t>(capacity, uint64_t{count} * kSlots) * kStashWords * sizeof(float) >= streamBytes;
  for (size_t i = 0; i < count; i += lanes) {
    const size_t valid = count - i < lanes ? count - i : lanes;
    const GeometryQuery* batch = queries + i;
    // The batch's prefetches in four parts spread over its work (all at once, they stall on the
    // line-fill buffers while no arithmetic runs).
    const size_t upTo = std::min(n, prefetched + 2 * lanes);
    const size_t quarter = (2 * lanes + 3) / 4;
    const auto prefetchSome = [&] {
      for (const size_t to = std::min(upTo, prefetched + quarter); prefetched < to; ++prefetched) {
        __builtin_prefetch(geometries + prefetched, 0, 2);
      }
    };
    prefetchSome();
    if (i + kFusedPrefetchAhead < count) {
      for (size_t k = 0; k < lanes; k += 64 / sizeof(GeometryQuery)) {
        __builtin_prefetch(batch + kFusedPrefetchAhead + k, 0, 2);
      }
    }
    uint32_t highest = 0;
    bool checked = true;
#if HWY_TARGET != HWY_SCALAR
    if (valid == lanes) {
      // A full batch's 4 lanes of words: a vector holds lanes / 4 queries (a, b, method, state); one
      // compare against the limits (a, b: n - 1; method, state: 0) and the highest index.
      VU over = hn::Zero(du);
      VU top = hn::Zero(du);
      for (size_t w = 0; w < 4 * lanes; w += lanes) {
        const VU words = hn::LoadU(du, reinterpret_cast<const uint32_t*>(batch) + w);
        over = hn::Or(over, hn::VecFromMask(du, hn::Gt(words, queryLimit)));
        top = hn::Max(top, hn::And(words, queryIndexWords));
      }
      checked = hn::AllTrue(du, hn::Eq(over, hn::Zero(du)));
      highest = hn::GetLane(hn::MaxOfLanes(du, top));
    } else
#endif
    {
      for (size_t k = 0; k < valid; ++k) {
        const GeometryQuery& q = batch[k];
        checked &= q.method == GeometryMethod::kStatic && q.state == 0 && q.a < n && q.b < n;
        highest = q.a > highest ? q.a : highest;
        highest = q.b > highest ? q.b : highest;
      }
    }
    if (!checked) return false;
    if (highest >= validated) {
      const size_t ahead = validated + kFusedValidateStep;
      const size_t until = std::min(n, std::max(size_t{highest} + 1, ahead));
      if (FirstUnclearGeometry(geometries, validated, until, nullptr) != until) return false;
      validated = until;
    }
    prefetchSome();
    if (!gatherBatch<kLo, kHi>(geometries, batch, valid, g)) return false;
    prefetchSome();
    BallLanes balls[kSlots];
    MF slotOk[kSlots];
    batchBalls<kLo, kHi>(g, balls, slotOk);
    prefetchSome();
    batchHits<kSlots>(balls, slotOk, valid, ballPoint, ballDirection, otherPoint, nullptr, counts, slotMasks);
    const uint64_t first = total;
    for (size_t k = 0; k < valid; ++k) {
      queryCounts[i + k] = static_cast<uint8_t>(counts[k]);
      total += counts[k];
    }
    if (first >= capacity || total == first) continue;
    const size_t stashed = static_cast<size_t>(first);
    growStash(st, std::min<uint64_t>(capacity, first + lanes * kSlots) + 1, stashed);
    float* entry = st.stash.get() + stashed * kStashWords;
    float* const stashEnd = st.stash.get() + std::min<uint64_t>(capacity, total) * kStashWords;
#if HWY_TARGET != HWY_SCALAR
    {
      // Every lane's slots are written, the entry advancing past the hits only (no branch per query
      // where a third touch); past the capacity they land on the spare entry. A stash past the
      // caches gets the batch's entries from an L1 copy, each of its bytes streamed once, in order
      // (written in place, each miss is written again by the next entry: 1M sphere-sphere and
      // capsule-plane pairs took 1.05-1.08x longer); there, a batch with contacts in at most half its
      // lanes visits only those (their mask bits, as PairRun does: 1M sphere-sphere pairs, a third
      // touching, 1.02-1.03x; the plane pairs, three quarters touching, keep the loop without a branch).
      const hn::FixedTag<float, 4> d4;
      const hn::FixedTag<uint32_t, 4> du4;
      const auto last = hn::Eq(hn::Iota(du4, 0), hn::Set(du4, 3u));
      const auto writeEntry = [&](size_t k, size_t slot, float* to) {
        const auto query = hn::Set(du4, static_cast<uint32_t>(i + k));
        const auto swapped = hn::Set(du4, g.swapped[k] ? 1u : 0u);
        const auto point = hn::Load(d4, ballPoint[slot] + 4 * k);
        const auto direction = hn::BitCast(
            d4, hn::IfThenElse(last, query, hn::BitCast(du4, hn::Load(d4, ballDirection[slot] + 4 * k))));
        const auto other = hn::BitCast(
            d4, hn::IfThenElse(last, swapped, hn::BitCast(du4, hn::Load(d4, otherPoint[slot] + 4 * k))));
        hn::Store(point, d4, to);
        hn::Store(direction, d4, to + 4);
        hn::Store(other, d4, to + 8);
      };
      float* const stashAt = entry;
      float* const toEnd = streamStash ? batchEntries + lanes * kSlots * kStashWords : stashEnd;
      if (streamStash) entry = batchEntries;
      static_assert(kMaxLanes <= 64, "a lane batch's hits are the bits of a 64-bit word");
      uint8_t hitBytes[8] = {};
      hn::StoreMaskBits(du, hn::Ne(hn::Load(du, counts), hn::Zero(du)), hitBytes);
      uint64_t hitLanes;
      std::memcpy(&hitLanes, hitBytes, sizeof hitLanes);
      if (streamStash && 2 * static_cast<size_t>(hwy::PopCount(hitLanes)) <= valid) {
        for (; hitLanes != 0u; hitLanes &= hitLanes - 1u) {
          const size_t k = hwy::Num0BitsBelowLS1Bit_Nonzero64(hitLanes);
          for (uint32_t slots = slotMasks[k]; slots != 0u; slots &= slots - 1u, entry += kStashWords) {
            writeEntry(k, static_cast<size_t>(hwy::Num0BitsBelowLS1Bit_Nonzero32(slots)), entry);
          }
        }
      } else {
        // The slots past 0 of cylinder-plane and capsule-cylinder are rare (a cylinder standing or
        // lying on the plane, a capsule lying on a cylinder): those by their bits, after slot 0 (1M
        // random cylinder-plane pairs: 18.0 ms with every slot written, 1.2x the pass with one slot).
        constexpr size_t kEvery = kLo == gpu::kGeomCapsule && kHi == gpu::kGeomPlane ? kSlots : 1;
        for (size_t k = 0; k < valid; ++k) {
          for (size_t slot = 0; slot < kEvery; ++slot) {
            writeEntry(k, slot, entry);
            float* const next = entry + ((slotMasks[k] >> slot) & 1u) * kStashWords;
            entry = next < toEnd ? next : toEnd;
          }
          if constexpr (kSlots > kEvery) {
            for (uint32_t rest = slotMasks[k] & ~1u; rest != 0u; rest &= rest - 1u) {
              writeEntry(k, static_cast<size_t>(hwy::Num0BitsBelowLS1Bit_Nonzero32(rest)), entry);
              float* const next = entry + kStashWords;
              entry = next < toEnd ? next : toEnd;
            }
          }
        }
      }
      if (streamStash) {
        for (size_t w = 0; stashAt + w != stashEnd; w += 4) {
          hn::Stream(hn::Load(d4, batchEntries + w), d4, stashAt + w);
        }
      }
    }
#else
    for (size_t k = 0; k < valid && entry != stashEnd; ++k) {
      const uint32_t query = static_cast<uint32_t>(i + k);
      const uint32_t swapped = g.swapped[k] ? 1u : 0u;
      for (uint32_t slots = slotMasks[k]; slots != 0u && entry != stashEnd; slots &= slots - 1u) {
        const size_t slot = static_cast<size_t>(hwy::Num0BitsBelowLS1Bit_Nonzero32(slots));
        std::memcpy(entry, ballPoint[slot] + 4 * k, 16);
        std::memcpy(entry + 4, ballDirection[slot] + 4 * k, 12);
        std::memcpy(entry + 7, &query, 4);
        std::memcpy(entry + 8, otherPoint[slot] + 4 * k, 12);
        std::memcpy(entry + 11, &swapped, 4);
        entry += kStashWords;
      }
    }
#endif
  }
  if (streamStash) hwy::FlushStream();
  if (validated < n && FirstUnclearGeometry(geometries, validated, n, nullptr) != n) return false;
  *totalOut = total;
  return true;
}

// FusedRun's output once the batch is valid: the ranges (from the counts), then the contacts (the
// ball side's element and the other's), the first `written` of the stash.
void WriteFused(const FusedStaging& st, size_t count, uint64_t written, uint64_t streamBytes,
                const GeometryQueryOutput& output) {
  const uint8_t* counts = st.counts.get();
  ContactRange* ranges = output.ranges.data();
  ContactElement* outs[2] = {output.elementsA.data(), output.elementsB.data()};
  // Past the caches, the ranges and contacts are written with streaming stores (16 bytes each).
  static_assert(sizeof(ContactRange) == 8, "a range is first, count: one 64-bit word (little-endian)");
  [[maybe_unused]] const bool streamRanges =
      HWY_TARGET != HWY_SCALAR && std::endian::native == std::endian::little &&
      count * sizeof(ContactRange) >= streamBytes && (reinterpret_cast<uintptr_t>(ranges) & 15u) == 0;
  const bool stream = HWY_TARGET != HWY_SCALAR && written * 2 * sizeof(ContactElement) >= streamBytes &&
                      (reinterpret_cast<uintptr_t>(outs[0]) & 15u) == 0 &&
                      (reinterpret_cast<uintptr_t>(outs[1]) & 15u) == 0;
  size_t q = 0;
  uint64_t first = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::FixedTag<float, 4> d4;
  const hn::FixedTag<uint32_t, 4> du4;
  if (streamRanges) {
    const hn::FixedTag<uint64_t, 2> d64;
    for (; q + 2 <= count; q += 2) {  // two ranges (first, count) at a time
      const uint64_t c0 = counts[q];
      const uint64_t c1 = counts[q + 1];
      const uint64_t r0 = (first & 0xFFFFFFFFu) | (c0 << 32);
      const uint64_t r1 = ((first + c0) & 0xFFFFFFFFu) | (c1 << 32);
      hn::Stream(hn::InterleaveLower(d64, hn::Set(d64, r0), hn::Set(d64, r1)), d64,
                 reinterpret_cast<uint64_t*>(ranges + q));
      first += c0 + c1;
    }
  }
#endif
  for (; q < count; ++q) {
    ranges[q] = ContactRange{static_cast<uint32_t>(first), counts[q]};
    first += counts[q];
  }
  const float* entry = st.stash.get();
#if HWY_TARGET != HWY_SCALAR
  if (stream) {
    // The stash entry's three vectors: ball point (w: the depth), normal (w: the query), other point
    // (w: 1 where the ball side is b).
    const auto last = hn::Eq(hn::Iota(du4, 0), hn::Set(du4, 3u));
    const auto queryWord = hn::Eq(hn::Iota(du4, 0), hn::Set(du4, 2u));
    const uint32_t tailWords[4] = {static_cast<uint32_t>(ContactElementType::kPointDirection), kNoPointIndex,
                                   0u, 0u};
    const auto tailBase = hn::LoadU(du4, tailWords);
    for (uint64_t at = 0; at < written; ++at, entry += kStashWords) {
      const auto point = hn::LoadU(d4, entry);
      const auto normalQuery = hn::BitCast(du4, hn::LoadU(d4, entry + 4));
      const auto otherSwapped = hn::BitCast(du4, hn::LoadU(d4, entry + 8));
      const uint32_t swapped = hn::GetLane(hn::Broadcast<3>(otherSwapped));
      const auto tail = hn::BitCast(d4, hn::IfThenElse(queryWord, hn::Broadcast<3>(normalQuery), tailBase));
      const auto normal = hn::BitCast(d4, hn::IfThenZeroElse(last, normalQuery));
      const auto otherPoint = hn::BitCast(d4, hn::IfThenElse(last, hn::BitCast(du4, point), otherSwapped));
      const auto negated =
          hn::BitCast(d4, hn::IfThenZeroElse(last, hn::BitCast(du4, hn::Neg(hn::BitCast(d4, normalQuery)))));
      float* ballOut = reinterpret_cast<float*>(outs[swapped] + at);
      float* otherOut = reinterpret_cast<float*>(outs[swapped ^ 1u] + at);
      hn::Stream(point, d4, ballOut);
      hn::Stream(normal, d4, ballOut + 4);
      hn::Stream(tail, d4, ballOut + 8);
      hn::Stream(otherPoint, d4, otherOut);
      hn::Stream(negated, d4, otherOut + 4);
      hn::Stream(tail, d4, otherOut + 8);
    }
    hwy::FlushStream();
    return;
  }
#endif
  for (uint64_t at = 0; at < written; ++at, entry += kStashWords) {
    // The ball side: point (w: the depth), normal (w: 0); the other: surface point (w: the depth),
    // the negated normal (w: 0); both then type, index, query, cell.
    uint32_t query;
    uint32_t swapped;
    std::memcpy(&query, entry + 7, 4);
    std::memcpy(&swapped, entry + 11, 4);
    const uint32_t tail[4] = {static_cast<uint32_t>(ContactElementType::kPointDirection), kNoPointIndex, query, 0u};
    HWY_ALIGN float ball[12] = {entry[0], entry[1], entry[2], entry[3], entry[4], entry[5], entry[6], 0.0f};
    HWY_ALIGN float other[12] = {entry[8], entry[9], entry[10], entry[3], -entry[4], -entry[5], -entry[6], 0.0f};
    std::memcpy(ball + 8, tail, 16);
    std::memcpy(other + 8, tail, 16);
    float* ballOut = reinterpret_cast<float*>(outs[swapped] + at);
    float* otherOut = reinterpret_cast<float*>(outs[swapped ^ 1u] + at);
#if HWY_TARGET != HWY_SCALAR
    if (stream) {
      for (size_t k = 0; k < 12; k += 4) {
        hn::Stream(hn::Load(d4, ball + k), d4, ballOut + k);
        hn::Stream(hn::Load(d4, other + k), d4, otherOut + k);
      }
      continue;
    }
#endif
    std::memcpy(ballOut, ball, sizeof ball);
    std::memcpy(otherOut, other, sizeof other);
  }
  if (stream) hwy::FlushStream();
}

// The pair (primitivePairSimdKind) picks FusedRun's instantiation: the closed forms with one ball per
// query and capsule-plane (box-plane and the manifold pairs keep the usual path).
bool FusedPairs(const GeometryQueryInput& input, uint32_t pair, uint64_t capacity, uint64_t streamBytes,
                FusedStaging& st, uint64_t* total) {
  using namespace gpu;
  constexpr uint32_t n = kGeomTypeCount;
  using Run = bool (*)(const GeometryQueryInput&, uint64_t, uint64_t, FusedStaging&, uint64_t*);
  Run run = nullptr;
  switch (pair) {
    case kGeomSphere * n + kGeomSphere: run = FusedRun<kGeomSphere, kGeomSphere>; break;
    case kGeomSphere * n + kGeomCapsule: run = FusedRun<kGeomSphere, kGeomCapsule>; break;
    case kGeomSphere * n + kGeomCylinder: run = FusedRun<kGeomSphere, kGeomCylinder>; break;
    case kGeomSphere * n + kGeomOrientedBox: run = FusedRun<kGeomSphere, kGeomOrientedBox>; break;
    case kGeomSphere * n + kGeomPlane: run = FusedRun<kGeomSphere, kGeomPlane>; break;
    case kGeomCapsule * n + kGeomCapsule: run = FusedRun<kGeomCapsule, kGeomCapsule>; break;
    case kGeomCapsule * n + kGeomCylinder: run = FusedRun<kGeomCapsule, kGeomCylinder>; break;
    case kGeomCapsule * n + kGeomPlane: run = FusedRun<kGeomCapsule, kGeomPlane>; break;
    case kGeomCylinder * n + kGeomPlane: run = FusedRun<kGeomCylinder, kGeomPlane>; break;
    default: return false;
  }
  return run(input, capacity, streamBytes, st, total);
}

}  // namespace
}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vkc::cpu {
HWY_EXPORT(PointSetContacts);
HWY_EXPORT(ShapeGridContacts);
HWY_EXPORT(SphereGridRun);
HWY_EXPORT(CapsuleGridRun);
HWY_EXPORT(ContinuousPointSetContacts);
HWY_EXPORT(PrimitivePairs);
HWY_EXPORT(FirstUnclearGeometry);
HWY_EXPORT(FirstQueryToCheck);
HWY_EXPORT(FusedPairs);
HWY_EXPORT(WriteFused);

namespace {
// Atomic so that a test setting it while other threads query is not a data race (relaxed: a call
// sees the old or the new threshold, and either gives the same results).
std::atomic<size_t> gFusedMinQueries{kFusedMinQueries};
std::atomic<uint64_t> gFusedStreamBytes{kFusedStreamBytes};
}  // namespace
size_t fusedMinQueries() { return gFusedMinQueries.load(std::memory_order_relaxed); }
void setFusedMinQueries(size_t queries) { gFusedMinQueries.store(queries, std::memory_order_relaxed); }
uint64_t fusedStreamBytes() {
  return gFusedStreamBytes.load(std::memory_order_relaxed);
}
void setFusedStreamBytes(uint64_t bytes) {
  gFusedStreamBytes.store(bytes, std::memory_order_relaxed);
}

std::optional<GeometryQueryCounts> fusedPrimitivePairs(const GeometryQueryInput& input,
                                                       const GeometryQueryOutput& output) {
  const size_t count = input.queries.size();
  const size_t n = input.geometries.size();
  if (count == 0 || count < fusedMinQueries() || !input.points.empty() || !input.previousPoints.empty() ||
      !input.gridSamples.empty() || !input.previousGeometries.empty() || input.trees != nullptr ||
      output.ranges.size() != count || output.elementsA.size() != output.elementsB.size()) {
    return std::nullopt;
  }
  // The pair of the first query; the middle and last queries' must be the same (a batch sorted by
  // pair type would otherwise run the pass up to its second type, then again on the usual path).
  const auto pairOf = [&](const GeometryQuery& q) -> uint32_t {
    if (q.a >= n || q.b >= n) return kNoPrimitivePairSimd;
    const uint32_t ta = static_cast<uint32_t>(input.geometries[q.a].type);
    const uint32_t tb = static_cast<uint32_t>(input.geometries[q.b].type);
    if (ta > gpu::kGeomPlane || tb > gpu::kGeomPlane) return kNoPrimitivePairSimd;
    return std::min(ta, tb) * gpu::kGeomTypeCount + std::max(ta, tb);
  };
  const uint32_t first = pairOf(input.queries[0]);
  if (first == kNoPrimitivePairSimd || pairOf(input.queries[count / 2]) != first ||
      pairOf(input.queries[count - 1]) != first) {
    return std::nullopt;
  }
  const uint32_t lo = first / gpu::kGeomTypeCount;
  const uint32_t hi = first % gpu::kGeomTypeCount;
  if (lo == gpu::kGeomOrientedBox && hi == gpu::kGeomPlane) return std::nullopt;
  const uint32_t pair = primitivePairSimdKind(lo, hi);
  if (pair == kNoPrimitivePairSimd) return std::nullopt;
  thread_local FusedStaging staging;
  if (staging.countEntries < count) {
    staging.counts.reset(new uint8_t[count]);
    staging.countEntries = count;
  }
  const uint64_t capacity = output.elementsA.size();
  uint64_t total = 0;
  const uint64_t streamBytes = fusedStreamBytes();
  if (!HWY_DYNAMIC_DISPATCH(FusedPairs)(input, pair, capacity, streamBytes, staging, &total))
    return std::nullopt;
  // Validated: the ranges, then the contacts.
  const uint64_t written = std::min(total, capacity);
  HWY_DYNAMIC_DISPATCH(WriteFused)(staging, count, written, streamBytes, output);
  GeometryQueryCounts result;
  result.contacts = static_cast<uint32_t>(total);
  result.written = static_cast<uint32_t>(written);
  result.overflow = total > capacity;
  return result;
}

size_t firstUnclearGeometry(std::span<const Geometry> geometries, size_t begin, uint8_t* types) {
  if (begin >= geometries.size()) return geometries.size();
  return HWY_DYNAMIC_DISPATCH(FirstUnclearGeometry)(geometries.data(), begin, geometries.size(), types);
}

size_t firstQueryToCheck(std::span<const GeometryQuery> queries, size_t geometryCount, const uint8_t* types,
                         size_t begin) {
  if (begin >= queries.size()) return queries.size();
  return HWY_DYNAMIC_DISPATCH(FirstQueryToCheck)(queries.data(), queries.size(), geometryCount, types, begin);
}

bool pointSetSimdHandles(const gpu::GeomShape& primitive, size_t sampleCount) {
  // An implicit geometry's gather indexes the samples with signed 32-bit lanes.
  return primitive.info.x <= gpu::kGeomPlane ||
         (primitive.info.x == gpu::kGeomImplicit && sampleCount <= size_t{0x7FFFFFFF});
}

uint32_t primitivePairSimdKind(uint32_t lo, uint32_t hi) {
  using namespace gpu;
  const bool handled = (lo == kGeomSphere && hi <= kGeomPlane) ||
                       (lo == kGeomCapsule && (hi == kGeomCapsule || hi == kGeomCylinder)) ||
                       (lo == kGeomCylinder && hi == kGeomCylinder) ||
                       (lo <= kGeomOrientedBox && hi == kGeomPlane) ||
                       ((lo == kGeomCapsule || lo == kGeomCylinder || lo == kGeomOrientedBox) && hi == kGeomOrientedBox);
  return handled ? lo * kGeomTypeCount + hi : kNoPrimitivePairSimd;
}

uint64_t pointSetContactsSimd(const gpu::GeomShape& primitive, const float* samples, bool pointSetIsA,
                              const Float4* points, uint32_t count, uint32_t query, ContactElement* outA,
                              ContactElement* outB, uint64_t total, uint64_t capacity) {
  return HWY_DYNAMIC_DISPATCH(PointSetContacts)(primitive, samples, pointSetIsA, points, count, query, outA,
                                                outB, total, capacity);
}

uint64_t shapeGridContactsSimd(const gpu::GeomShape& shape, const gpu::GeomShape& grid, const float* samples,
                               bool shapeIsA, gpu::uvec4 lo, gpu::uvec4 size, uint32_t query,
                               ContactElement* outA, ContactElement* outB, uint64_t total,
                               uint64_t capacity) {
  return HWY_DYNAMIC_DISPATCH(ShapeGridContacts)(shape, grid, samples, shapeIsA, lo, size, query, outA, outB,
                                                 total, capacity);
}

uint64_t sphereGridRunSimd(const GeometryQueryInput& input, size_t begin, size_t end,
                           const gpu::GeomShape& grid, ContactElement* outA, ContactElement* outB,
                           ContactRange* ranges, uint64_t total, uint64_t capacity) {
  return HWY_DYNAMIC_DISPATCH(SphereGridRun)(input, begin, end, grid, outA, outB, ranges, total, capacity);
}

uint64_t capsuleGridRunSimd(const GeometryQueryInput& input, size_t begin, size_t end,
                            const gpu::GeomShape& grid, ContactElement* outA, ContactElement* outB,
                            ContactRange* ranges, uint64_t total, uint64_t capacity) {
  return HWY_DYNAMIC_DISPATCH(CapsuleGridRun)(input, begin, end, grid, outA, outB, ranges, total, capacity);
}

uint64_t continuousPointSetContactsSimd(const gpu::GeomShape& shape, const gpu::GeomShape& previousPose,
                                        const float* samples, bool pointSetIsA, const Float4* points,
                                        const Float4* previous, Float4* state, uint32_t count, uint32_t query,
                                        ContactElement* outA, ContactElement* outB, uint64_t total,
                                        uint64_t capacity) {
  return HWY_DYNAMIC_DISPATCH(ContinuousPointSetContacts)(shape, previousPose, samples, pointSetIsA, points,
                                                          previous, state, count, query, outA, outB, total,
                                                          capacity);
}

uint64_t primitivePairsSimd(const GeometryQueryInput& input, size_t begin, size_t end, uint32_t pair,
                            ContactElement* outA, ContactElement* outB, ContactRange* ranges, uint64_t total,
                            uint64_t capacity) {
  if (pair == gpu::kGeomCylinder * gpu::kGeomTypeCount + gpu::kGeomOrientedBox) {  // its own file
    return cylinderBoxPairsSimd(input, begin, end, outA, outB, ranges, total, capacity);
  }
  if (pair == gpu::kGeomCylinder * gpu::kGeomTypeCount + gpu::kGeomCylinder) {  // its own file
    return cylinderCylinderPairsSimd(input, begin, end, outA, outB, ranges, total, capacity);
  }
  return HWY_DYNAMIC_DISPATCH(PrimitivePairs)(input, begin, end, pair, outA, outB, ranges, total, capacity);
}
}  // namespace vkc::cpu
#endif

#else  // scalar-only build: the scalar loop handles every query

namespace vkc::cpu {
std::optional<GeometryQueryCounts> fusedPrimitivePairs(const GeometryQueryInput&, const GeometryQueryOutput&) {
  return std::nullopt;
}
size_t fusedMinQueries() { return kFusedMinQueries; }
void setFusedMinQueries(size_t) {}
uint64_t fusedStreamBytes() {
  return kFusedStreamBytes;
}
void setFusedStreamBytes(uint64_t) {}
bool pointSetSimdHandles(const gpu::GeomShape&, size_t) {
  return false;
}
uint32_t primitivePairSimdKind(uint32_t, uint32_t) { return kNoPrimitivePairSimd; }
size_t firstQueryToCheck(std::span<const GeometryQuery> queries, size_t geometryCount, const uint8_t* types,
                         size_t begin) {
  while (begin < queries.size() && staticPrimitiveQuery(queries[begin], geometryCount, types)) ++begin;
  return begin;
}
size_t firstUnclearGeometry(std::span<const Geometry> geometries, size_t begin, uint8_t* types) {
  for (; begin < geometries.size() && primitiveClearlyValid(geometries[begin]); ++begin) {
    types[begin] = static_cast<uint8_t>(geometries[begin].type);
  }
  return begin < geometries.size() ? begin : geometries.size();
}
uint64_t pointSetContactsSimd(const gpu::GeomShape&, const float*, bool, const Float4*, uint32_t, uint32_t,
                              ContactElement*, ContactElement*, uint64_t, uint64_t) {
  return 0;
}
uint64_t shapeGridContactsSimd(const gpu::GeomShape&, const gpu::GeomShape&, const float*, bool, gpu::uvec4,
                               gpu::uvec4, uint32_t, ContactElement*, ContactElement*, uint64_t, uint64_t) {
  return 0;
}
uint64_t sphereGridRunSimd(const GeometryQueryInput&, size_t, size_t, const gpu::GeomShape&, ContactElement*,
                           ContactElement*, ContactRange*, uint64_t total, uint64_t) {
  return total;
}
uint64_t capsuleGridRunSimd(const GeometryQueryInput&, size_t, size_t, const gpu::GeomShape&, ContactElement*,
                            ContactElement*, ContactRange*, uint64_t total, uint64_t) {
  return total;
}
uint64_t continuousPointSetContactsSimd(const gpu::GeomShape&, const gpu::GeomShape&, const float*, bool,
                                        const Float4*, const Float4*, Float4*, uint32_t, uint32_t,
                                        ContactElement*, ContactElement*, uint64_t, uint64_t) {
  return 0;
}
uint64_t primitivePairsSimd(const GeometryQueryInput&, size_t, size_t, uint32_t, ContactElement*, ContactElement*,
                            ContactRange*, uint64_t total, uint64_t) {
  return total;
}
}  // namespace vkc::cpu
#endif
