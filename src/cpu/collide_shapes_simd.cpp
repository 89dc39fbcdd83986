// Highway SIMD twin of the collide pass of shape collision (shaders/collide_shapes.comp,
// collideParticle in shaders/shared/collide_shapes_kernel.h), compiled once per target and chosen at
// run time. The prepared tables (spheres, cones, grid, masks) are the scalar twin's (prepareShapes).
//
// Lanes are particles: a batch of Lanes(df) particles is loaded as SoA (LoadInterleaved4 of xyzw).
// Each lane's grid cells give its candidate mask words (the same words the scalar kernel reads, looked
// up by lane permutations in a per-call copy of the cloth's mask rows with their 8 cells contiguous,
// or at 4 lanes, for at most 8 shapes, by one byte shuffle; not gathered); the batch walks the union (OR over lanes) of the candidate bits in
// the scalar kernel's order (capsules first, each as one shape: the hull of its spheres, then the
// spheres that belong to no capsule) and applies each shape to the lanes whose own candidate bit is
// set. Where the kernel branches per particle (a capsule's region: cone or end sphere; which of the
// cone and end-sphere sweeps enters first) the lanes take masks. A shape's data is uniform across
// lanes, so it is broadcast: once per call, into per-thread tables of the cloth's spheres and capsules
// at both ends of the iteration (products of uniform values, r * r and the like, computed there by the
// same float multiplication), which the batches load. Before a capsule's square roots, the lanes
// farther from its axis than any of its contacts reach are dropped (a bound with margins far above the
// rounding: they would not be touched). The arithmetic is the shared kernel's, operation by operation in the same
// order (GLM's dot is (x + y) + z, mix is a (1 - t) + b t), without fused multiply-adds, so the
// results match the scalar twin (bitwise, up to the sign of zeros). Lanes without a particle (the
// tail, padded) or with inverse mass 0 are inactive; a batch stores back only the arrays it changed.
// Costs on one core (bench_collide_shapes, thread CPU time): the NvCloth 65k drape, CCD and
// friction, 7.5x the scalar twin with AVX-512 (16 lanes), 5.2x with AVX2; synthetic scenes 4-11x.
#include "cpu/collide_shapes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "shared/collide_shapes_math.h"

#ifdef VKC_HAVE_SIMD
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/collide_shapes_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/aligned_allocator.h>
#include <hwy/highway.h>

#include "cpu/simd_vec3.h"

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE {
namespace {

// A sphere's values broadcast, as the contact tests use them (prepared once per call for the
// cloth's shapes: the batches load them instead of broadcasting each value anew). Products of
// uniform values are the kernel's own, computed once (the same float multiplication).
struct SphereLanes {
  V3 center;
  VF radius, radius2, epsRadius;  // r, r * r, kCollideEpsilon * r
};
HWY_INLINE SphereLanes splatSphere(gpu::vec4 s) {
  const DF df;
  return {splat(gpu::vec3(s)), hn::Set(df, s.w), hn::Set(df, s.w * s.w), hn::Set(df, gpu::kCollideEpsilon * s.w)};
}

// A cone's values broadcast (meaningful where valid: dims.z != 0), likewise.
struct ConeLanes {
  V3 center, axis, slopeAxis, perpendicular;  // slopeAxis = axis.w * axis, perpendicular = anyPerpendicular(axis)
  V3 halfAxis;                                // axis * dims.x
  VF centerW, slope, halfLength, minusHalfLength, dimsY;  // center.w, axis.w, dims.x, -dims.x, dims.y
};
HWY_INLINE ConeLanes splatCone(const gpu::Cone& cone) {
  const DF df;
  const gpu::vec3 axis3 = gpu::vec3(cone.axis);
  return {splat(gpu::vec3(cone.center)), splat(axis3), splat(cone.axis.w * axis3), splat(gpu::anyPerpendicular(axis3)),
          splat(axis3 * cone.dims.x), hn::Set(df, cone.center.w), hn::Set(df, cone.axis.w), hn::Set(df, cone.dims.x), hn::Set(df, -cone.dims.x),
          hn::Set(df, cone.dims.y)};
}

// sweptContact (collide_shapes_math.h), per lane. Returns the lanes (of `lanes`) that hit; toi and
// back as there (meaningful on those lanes only).
HWY_INLINE MF sweptContact(MF lanes, const V3& q0, const V3& q1, VF r0, VF r1, VF& toi, VF& back) {
  const DF df;
  const VF zero = hn::Zero(df), one = hn::Set(df, 1.0f);
  const VF eps = hn::Set(df, gpu::kCollideEpsilon);
  const VF m00 = hn::Sub(dot(q0, q0), hn::Mul(r0, r0));
  const VF m01 = hn::Sub(dot(q0, q1), hn::Mul(r0, r1));
  const VF m11 = hn::Sub(dot(q1, q1), hn::Mul(r1, r1));
  const VF disc = hn::Sub(hn::Mul(m01, m01), hn::Mul(m00, m11));
  const VF halfB = hn::Sub(m01, m00);
  const VF minusA = hn::Add(hn::Sub(m01, m11), halfB);
  toi = one;
  back = zero;
  MF ok = hn::And(lanes, hn::And(hn::Lt(minusA, hn::Neg(eps)), hn::Gt(disc, zero)));
  if (hn::AllFalse(df, ok)) return ok;  // the common case: no lane's path meets the shape
  const VF sqrtD = hn::Sqrt(hn::Max(disc, zero));  // disc <= 0 lanes are already out
  ok = hn::And(ok, hn::Lt(halfB, sqrtD));
  if (hn::AllFalse(df, ok)) return ok;
  toi = hn::Div(glmMin(zero, hn::Add(halfB, sqrtD)), minusA);
  ok = hn::And(ok, hn::Lt(toi, one));
  const VF tc = glmMin(glmMax(hn::Div(halfB, minusA), zero), one);
  const V3 qc = mix(q0, q1, tc);
  const VF rc = mix(r0, r1, tc);
  const VF deep = hn::Mul(hn::Set(df, 1.0f - gpu::kCcdSkinFraction), rc);
  ok = hn::And(ok, hn::Lt(dot(qc, qc), hn::Mul(deep, deep)));
  const VF oneMinusToi = hn::Sub(one, toi);
  ok = hn::And(ok, hn::Gt(oneMinusToi, eps));
  if (hn::AllFalse(df, ok)) return ok;
  VF minusK = hn::Div(sqrtD, hn::Mul(minusA, oneMinusToi));
  // k at most (tPass - toi) / (1 - toi), tPass = -q0.dq / |dq|^2.
  const V3 dq = sub(q1, q0);
  const VF g = hn::Div(hn::Sub(hn::Div(hn::Neg(dot(q0, dq)), dot(dq, dq)), toi), oneMinusToi);
  minusK = glmMax(minusK, hn::Neg(glmMax(g, zero)));
  back = hn::Div(oneMinusToi, hn::Sub(one, minusK));
  return ok;
}

// sphereSweep: the lanes (of `lanes`) that hit, their time of entry and corrected end position
// (target = p1 on the other lanes).
HWY_INLINE MF sphereSweep(MF lanes, const SphereLanes& s0, const SphereLanes& s1, const V3& p0, const V3& p1, VF& toi,
                          V3& target) {
  const DF df;
  const V3 q0 = sub(p0, s0.center), q1 = sub(p1, s1.center);
  VF back;
  const MF hit = sweptContact(lanes, q0, q1, s0.radius, s1.radius, toi, back);
  target = hn::AllFalse(df, hit) ? p1 : select(hit, add(p1, mul(sub(q0, q1), back)), p1);
  return hit;
}

// coneRegion per lane from d = p - center, t = dot(d, axis) and dd = dot(d, d): the lanes beyond
// sphere0's end and those beyond sphere1's end.
HWY_INLINE void coneRegion(const ConeLanes& cone, VF t, VF dd, MF& beyond0, MF& beyond1) {
  const DF df;
  const VF dPerp = hn::Sqrt(glmMax(hn::Sub(dd, hn::Mul(t, t)), hn::Zero(df)));
  const VF base = hn::Add(t, hn::Mul(cone.slope, dPerp));
  beyond0 = hn::Lt(base, cone.minusHalfLength);
  beyond1 = hn::AndNot(beyond0, hn::Gt(base, cone.halfLength));
}
HWY_INLINE void coneRegion(const ConeLanes& cone, const V3& p, MF& beyond0, MF& beyond1) {
  const V3 d = sub(p, cone.center);
  coneRegion(cone, dot(d, cone.axis), dot(d, d), beyond0, beyond1);
}

// coneSweep, the same contract as sphereSweep; both cones must be valid (the caller checks: an
// invalid one gives no hit).
HWY_INLINE MF coneSweep(MF lanes, const ConeLanes& c0, const ConeLanes& c1, const V3& p0, const V3& p1, VF& toi,
                        V3& target) {
  const DF df;
  const VF zero = hn::Zero(df);
  target = p1;
  const V3 d0 = sub(p0, c0.center), d1 = sub(p1, c1.center);
  const V3& a0 = c0.axis;
  const V3& a1 = c1.axis;
  const V3 q0 = cross(d0, a0), q1 = cross(d1, a1);
  const VF r0 = glmMax(hn::Add(hn::Mul(dot(d0, a0), c0.slope), c0.centerW), zero);
  const VF r1 = glmMax(hn::Add(hn::Mul(dot(d1, a1), c1.slope), c1.centerW), zero);
  VF back;
  MF ok = sweptContact(lanes, q0, q1, r0, r1, toi, back);
  if (hn::AllFalse(df, ok)) return ok;
  const V3 d = mix(d0, d1, toi);
  const V3 h = mix(c0.halfAxis, c1.halfAxis, toi);
  const VF la = hn::Sqrt(dot(h, h));
  ok = hn::And(ok, hn::Gt(la, zero));
  const V3 axis = div(h, la);
  const VF slope = mix(c0.slope, c1.slope, toi);
  const VF t = dot(d, axis);
  const VF dPerp = hn::Sqrt(glmMax(hn::Sub(dot(d, d), hn::Mul(t, t)), zero));
  ok = hn::And(ok, hn::Lt(hn::Abs(hn::Add(t, hn::Mul(slope, dPerp))), la));
  if (hn::AllFalse(df, ok)) return ok;
  const V3 dd = sub(d0, d1);
  const V3 reduced = add(p1, mul(dd, back));
  // A reduced point outside the section falls back to the point of entry.
  MF beyond0, beyond1;
  coneRegion(c1, reduced, beyond0, beyond1);
  const MF outside = hn::And(ok, hn::Or(beyond0, beyond1));
  const V3 entry = hn::AllFalse(df, outside) ? reduced : add(p1, mul(dd, hn::Sub(hn::Set(df, 1.0f), toi)));
  target = select(ok, select(outside, entry, reduced), p1);
  return ok;
}

// A capsule's cone and spheres broadcast, at the iteration's start [0] and end [1].
struct CapsuleLanes {
  ConeLanes cone[2];
  SphereLanes sphere0[2], sphere1[2];
  bool valid[2];     // cone.dims.z != 0
  bool firstBigger;  // at the end: sphere0's radius >= sphere1's
  // At the end, for a valid cone: capsuleContact's cull (capsuleReach2): a lane whose
  // dot(d, d) * kReachShrink - t * t exceeds it is farther from the axis than any contact reaches.
  VF reach2;
};

// dot(d, d) shrunk by 1e-5 before t * t is taken off: the difference then lies below the true squared
// distance from the axis despite rounding (the error of each product is a few 1e-8 of dot(d, d)).
constexpr float kReachShrink = 1.0f - 1e-5f;

// A bound on the distance from a valid cone's axis of every point that capsuleContact can touch (the
// cone's section or either sphere), squared and rounded up; +inf where no useful bound holds. A
// sphere's points lie within its radius of the axis (its centre is on it, up to rounding); a section
// contact has dPerp < rp = s t + w and |t + s dPerp| <= h, so (t at most h - s dPerp for s >= 0, at
// least -h + |s| dPerp for s < 0) dPerp (1 + s^2) < w + |s| h. The margins (relative 1e-3, and 1e-5
// of the coordinates' magnitude for the rounding of d = p - center and of the axis) dwarf the float
// rounding, so the cull only drops lanes the full test would not touch: the same bits
// (CollideShapesSimd.CapsuleSurfacesMatchScalarExactly fails with a bound 1e-4 too small).
inline float capsuleReach2(const gpu::Cone& cone, gpu::vec4 s0, gpu::vec4 s1) {
  const double s = std::fabs(double(cone.axis.w)), h = cone.dims.x, w = cone.center.w;
  if (!std::isfinite(s) || !(h >= 0.0) || !std::isfinite(w)) return std::numeric_limits<float>::infinity();
  const double section = (std::max(w, 0.0) + s * h) / (1.0 + s * s);
  const double reach = std::max({section, double(s0.w), double(s1.w)});
  const double scale = std::max({std::fabs(double(cone.center.x)), std::fabs(double(cone.center.y)),
                                 std::fabs(double(cone.center.z))}) + h + reach;
  const double bound = reach * 1.001 + 1e-5 * scale;
  const double bound2 = bound * bound;
  if (!std::isfinite(bound2) || bound2 >= double(std::numeric_limits<float>::max())) {
    return std::numeric_limits<float>::infinity();
  }
  return std::nextafter(static_cast<float>(bound2), std::numeric_limits<float>::infinity());
}

// capsuleSweep: the earliest entry over the cone's section and both spheres (the first in this
// order on ties), per lane of `lanes`; p1 where none hits.
HWY_INLINE V3 capsuleSweep(MF lanes, const CapsuleLanes& caps, const V3& p0, const V3& p1) {
  const DF df;
  V3 best = p1, target;
  VF first = hn::Set(df, 2.0f), toi;
  auto take = [&](MF hit) {
    if (hn::AllFalse(df, hit)) return;
    const MF earlier = hn::And(hit, hn::Lt(toi, first));
    first = hn::IfThenElse(earlier, toi, first);
    best = select(earlier, target, best);
  };
  if (caps.valid[0] && caps.valid[1]) take(coneSweep(lanes, caps.cone[0], caps.cone[1], p0, p1, toi, target));
  take(sphereSweep(lanes, caps.sphere0[0], caps.sphere0[1], p0, p1, toi, target));
  take(sphereSweep(lanes, caps.sphere1[0], caps.sphere1[1], p0, p1, toi, target));
  return best;
}

// coneContact on a valid cone: the lanes (of `lanes`) inside the cone's section, and their deltas
// (zero elsewhere); d = p - center and t = dot(d, axis) as the caller computed them.
HWY_INLINE MF coneContact(MF lanes, const ConeLanes& cone, const V3& d, VF t, V3& delta) {
  const DF df;
  const VF zero = hn::Zero(df);
  if (hn::AllFalse(df, lanes)) {
    delta = splat(gpu::vec3(0.0f));
    return lanes;
  }
  const V3 radial = sub(d, mul(t, cone.axis));
  const VF dPerp = hn::Sqrt(glmMax(dot(radial, radial), zero));
  const VF base = hn::Add(t, hn::Mul(cone.slope, dPerp));
  MF hit = hn::AndNot(hn::Gt(hn::Abs(base), cone.halfLength), lanes);
  const VF rp = glmMax(hn::Add(hn::Mul(t, cone.slope), cone.centerW), zero);
  hit = hn::And(hit, hn::Gt(rp, dPerp));
  if (hn::AllFalse(df, hit)) {
    delta = splat(gpu::vec3(0.0f));
    return hit;
  }
  const MF useRadial = hn::Gt(dPerp, hn::Mul(hn::Set(df, gpu::kCollideEpsilon), rp));
  const V3 n = select(useRadial, div(radial, dPerp), cone.perpendicular);
  const V3 dir = sub(n, cone.slopeAxis);
  delta = selectOrZero(hit, mul(dir, hn::Mul(cone.dimsY, hn::Sub(rp, dPerp))));
  return hit;
}

// sphereContact: the lanes (of `lanes`) inside the sphere, and their deltas (zero elsewhere).
HWY_INLINE MF sphereContact(MF lanes, const SphereLanes& sphere, const V3& p, V3& delta) {
  const DF df;
  const V3 d = sub(p, sphere.center);
  const VF d2 = dot(d, d);
  const VF r = sphere.radius;
  const MF hit = hn::And(lanes, hn::Lt(d2, sphere.radius2));
  if (hn::AllFalse(df, hit)) {
    delta = splat(gpu::vec3(0.0f));
    return hit;
  }
  const VF len = hn::Sqrt(d2);
  const MF far = hn::Gt(len, sphere.epsRadius);
  const VF scale = hn::Sub(hn::Div(r, len), hn::Set(df, 1.0f));
  const V3 radial = mul(d, scale);
  if (hn::AllFalse(df, hn::AndNot(far, hit))) {  // no lane at the centre (nearly always)
    delta = selectOrZero(hit, radial);
    return hit;
  }
  const V3 centre = {hn::Sub(hn::Zero(df), d.x), hn::Sub(r, d.y), hn::Sub(hn::Zero(df), d.z)};
  delta = selectOrZero(hit, select(far, radial, centre));
  return hit;
}

// capsuleContact: per lane, the cone within its section, else the sphere at that end; an invalid
// cone: the bigger sphere. The lanes (of `lanes`) touched and their deltas (zero elsewhere).
HWY_INLINE MF capsuleContact(MF lanes, const CapsuleLanes& caps, const V3& p, V3& delta) {
  if (!caps.valid[1]) return sphereContact(lanes, caps.firstBigger ? caps.sphere0[1] : caps.sphere1[1], p, delta);
  const ConeLanes& cone = caps.cone[1];
  const SphereLanes &s0 = caps.sphere0[1], &s1 = caps.sphere1[1];
  const DF df;
  const V3 d = sub(p, cone.center);
  const VF t = dot(d, cone.axis);
  const VF dd = dot(d, d);
  // Lanes beyond every contact's reach from the axis are dropped first (capsuleReach2: none of them
  // would be touched); most batches of a draped cloth near a capsule skip the square roots here.
  lanes = hn::And(lanes, hn::Le(hn::Sub(hn::Mul(dd, hn::Set(df, kReachShrink)), hn::Mul(t, t)), caps.reach2));
  if (hn::AllFalse(df, lanes)) {
    delta = splat(gpu::vec3(0.0f));
    return lanes;
  }
  MF beyond0, beyond1;
  coneRegion(cone, t, dd, beyond0, beyond1);
  MF hit = coneContact(hn::AndNot(hn::Or(beyond0, beyond1), lanes), cone, d, t, delta);
  // The three sets of lanes are disjoint; each delta is zero outside its own hits. Most batches
  // have no lane beyond either end: those sphere tests are skipped.
  const MF in0 = hn::And(beyond0, lanes), in1 = hn::And(beyond1, lanes);
  if (!hn::AllFalse(df, in0)) {
    V3 d0;
    const MF hit0 = sphereContact(in0, s0, p, d0);
    delta = select(hit0, d0, delta);
    hit = hn::Or(hit, hit0);
  }
  if (!hn::AllFalse(df, in1)) {
    V3 d1;
    const MF hit1 = sphereContact(in1, s1, p, d1);
    delta = select(hit1, d1, delta);
    hit = hn::Or(hit, hit1);
  }
  return hit;
}

// Held by value, and copied into each collideBatches call: a local copy that the batch loop's stores
// (through float and uint32_t pointers) cannot alias, so its fields stay in registers.
struct ClothView {
  const ShapesState& s;
  gpu::ShapeCloth c;
  gpu::ShapeGrid g;
  VF gridLower[3], gridScale[3];  // g's lower and scale, broadcast
  uint32_t flags;
  float friction;
  float massScale;
  uint32_t* cand;  // maskWords x Lanes: each lane's candidate bits of each word
  uint32_t* any;   // maskWords: the union over the batch's lanes
  const uint32_t* freeSpheres;  // maskWords: the bits of the spheres that belong to no capsule
  const uint32_t* capsuleBits;  // maskWords: the bits of the capsules
  const uint32_t* rows;  // the grid's mask words, row by row: rows[((word * 2 + set) * 3 + axis) * rowStride + cell]
  size_t rowStride;      // max(kGridCells, Lanes): a row can be loaded as one vector
  const uint8_t* rowBytes;  // at 4 lanes, where every row word is below 256: the rows as bytes, 16 a row
  VU rowMask;               // 0xFF with rowBytes (lookupRow's bytes 1-3 are arbitrary then), else ~0
  const SphereLanes* sphereLanes;    // the cloth's spheres at the iteration's end, broadcast
  const CapsuleLanes* capsuleLanes;  // the cloth's capsules likewise
};

// The words of mask row `index` (its kGridCells cells, contiguous) at each lane's cell (in [0,
// kGridCells)): a lane permutation where a vector holds the row; at 4 lanes one byte shuffle where the
// row's words fit bytes (byte 0 of each lane is the word; bytes 1-3 are arbitrary: the caller masks them
// off with v.rowMask), else two permutations and a blend; a gather below 4 lanes.
HWY_INLINE VU lookupRow(const ClothView& v, size_t index, VI cell) {
  const DU du;
  const DI di;
  static_assert(gpu::kGridCells == 8u);
  const uint32_t* row = v.rows + index * v.rowStride;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (hn::MaxLanes(du) == 4) {
    if (v.rowBytes != nullptr) {
      const hn::Repartition<uint8_t, DU> d8;
      // Byte 0 of each lane picks the cell's byte (the cell is below 256).
      return hn::BitCast(du, hn::TableLookupBytesOr0(hn::Load(d8, v.rowBytes + index * 16u), hn::BitCast(d8, cell)));
    }
  }
#endif
  if constexpr (hn::MaxLanes(du) >= 8) {
    return hn::TableLookupLanes(hn::Load(du, row), hn::IndicesFromVec(du, cell));
  } else if constexpr (hn::MaxLanes(du) == 4) {
    const auto idx = hn::IndicesFromVec(du, hn::And(cell, hn::Set(di, 3)));
    const VU lower = hn::TableLookupLanes(hn::Load(du, row), idx);
    const VU upper = hn::TableLookupLanes(hn::Load(du, row + 4), idx);
    return hn::IfThenElse(hn::RebindMask(du, hn::Gt(cell, hn::Set(di, 3))), upper, lower);
  } else {
    return hn::GatherIndex(du, row, cell);
  }
}

// The OR of v's lanes: halves folded down to 4 lanes, then two shuffles.
template <class D>
HWY_INLINE uint32_t orOfLanes(D d, hn::Vec<D> v) {
#if HWY_TARGET == HWY_SCALAR
  (void)d;
  return hn::GetLane(v);
#else
  if constexpr (hn::MaxLanes(d) > 4) {
    const hn::Half<D> dh;
    return orOfLanes(dh, hn::Or(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  } else if constexpr (hn::MaxLanes(d) == 4) {
    v = hn::Or(v, hn::Shuffle2301(v));
    return hn::GetLane(hn::Or(v, hn::Shuffle1032(v)));
  } else {
    HWY_ALIGN uint32_t lanes[hn::MaxLanes(d)];
    hn::Store(v, d, lanes);
    uint32_t u = 0;
    for (size_t l = 0; l < hn::Lanes(d); ++l) u |= lanes[l];
    return u;
  }
#endif
}

// Each lane's candidate bit of `shape`: from the words stored in v.cand, or with one mask word, from
// `word0` (that word, kept in a register).
template <bool kOneWord>
HWY_INLINE MF candidateBit(const ClothView& v, VU word0, uint32_t shape) {
  const DU du;
  const VU word = kOneWord || v.c.maskWords == 1u ? word0 : hn::Load(du, v.cand + (shape / 32u) * hn::Lanes(du));
  return hn::RebindMask(DF(), hn::TestBit(word, hn::Set(du, 1u << (shape % 32u))));
}

// The scalar kernel's bitsBelow.
inline uint32_t bitsBelow(uint32_t word, uint32_t n) {
  const uint32_t first = word * 32u;
  if (n >= first + 32u) return 0xFFFFFFFFu;
  if (n <= first) return 0u;
  return (1u << (n - first)) - 1u;
}

struct Sum {
  V3 delta, velocity;
  VF count;
};

HWY_INLINE void accumulate(Sum& sum, MF contrib, const V3& target, const V3& delta, const V3& pos) {
  sum.delta = add(sum.delta, selectOrZero(contrib, sub(add(target, delta), pos)));
  sum.count = hn::Add(sum.count, hn::IfThenElseZero(contrib, hn::Set(DF(), 1.0f)));
}
// The same for a discrete contact (target = pos) whose delta is +0 outside contrib: there (pos + 0) -
// pos is +0 (pos is finite: validated), and the sum (never -0: it starts at +0) stays as it is, so the
// select is not needed.
HWY_INLINE void accumulateDiscrete(Sum& sum, MF contrib, const V3& delta, const V3& pos) {
  sum.delta = add(sum.delta, sub(add(pos, delta), pos));
  sum.count = hn::Add(sum.count, hn::IfThenElseZero(contrib, hn::Set(DF(), 1.0f)));
}

// What a batch changed: positions (kMovedPositions) and previous positions (kMovedPrevious, friction).
constexpr uint32_t kMovedPositions = 1u, kMovedPrevious = 2u;

// collideRoundShapes for one batch: the spheres and capsules that are candidates in the grid, into
// `sum`. Candidate words are computed here into v.cand / any.
// One axis of the grid test: the lanes of `active` whose span [lo, hi] meets the grid, and each
// lane's cells of lo and hi, clamped into [0, 7] on every lane (lookups stay in range); on the active
// lanes these are the scalar kernel's a < 0 ? 0 : uint(a) and min(uint(b), 7). kSpan false: lo = hi.
template <bool kSpan>
HWY_INLINE MF gridAxis(MF active, VF lo, VF hi, VF lower, VF scale, VI& cellLo, VI& cellHi) {
  const DF df;
  const VF zero = hn::Zero(df);
  const VF maxCell = hn::Set(df, float(gpu::kGridCells - 1u));
  const VF a = hn::Mul(hn::Sub(lo, lower), scale);
  const VF b = kSpan ? hn::Mul(hn::Sub(hi, lower), scale) : a;
  active = hn::And(active, hn::And(hn::Ge(b, zero), hn::Lt(a, hn::Set(df, float(gpu::kGridCells)))));
  cellLo = truncateInRange(hn::Min(hn::Max(a, zero), maxCell));
  cellHi = kSpan ? truncateInRange(hn::Min(hn::Max(b, zero), maxCell)) : cellLo;
  return active;
}

// gridAxis on all three axes for discrete collision where rows are looked up as bytes (lookupRow at 4
// lanes): only the lanes below the grid on some axis are dropped (one test of the least of the three
// scaled coordinates, finite: the particles are validated, the grid's scale a power of two); a lane
// at or past its top gets cell 8, whose bytes are 0 in every row, so its candidate bits are 0 as the
// scalar kernel's range test makes them. Cells below 0 are left unclamped (on dropped lanes only; the
// byte shuffle reads any index safely).
HWY_INLINE MF gridCellsBytes(const ClothView& v, MF active, const V3& p, VI cell[3]) {
  const DF df;
  const VF top = hn::Set(df, float(gpu::kGridCells));
  const VF ax = hn::Mul(hn::Sub(p.x, v.gridLower[0]), v.gridScale[0]);
  const VF ay = hn::Mul(hn::Sub(p.y, v.gridLower[1]), v.gridScale[1]);
  const VF az = hn::Mul(hn::Sub(p.z, v.gridLower[2]), v.gridScale[2]);
  cell[0] = truncateInRange(hn::Min(ax, top));
  cell[1] = truncateInRange(hn::Min(ay, top));
  cell[2] = truncateInRange(hn::Min(az, top));
  return hn::And(active, hn::Ge(hn::Min(ax, hn::Min(ay, az)), hn::Zero(df)));
}

template <bool kCcd, bool kFriction, bool kOneWord>
HWY_INLINE void collideRoundShapes(ClothView& v, uint32_t* cand, uint32_t* any, MF active, const V3& pos,
                                   const V3& old, Sum& sum) {
  const DF df;
  const DU du;
  const size_t lanes = hn::Lanes(df);
  const gpu::ShapeCloth& c = v.c;
  constexpr bool ccd = kCcd;
  const VF zero = hn::Zero(df);
  const V3 lo = ccd ? V3{glmMin(pos.x, old.x), glmMin(pos.y, old.y), glmMin(pos.z, old.z)} : pos;
  const V3 hi = ccd ? V3{glmMax(pos.x, old.x), glmMax(pos.y, old.y), glmMax(pos.z, old.z)} : pos;
  VI cellsLo[3], cellsHi[3];
  if (!ccd && hn::MaxLanes(df) == 4 && v.rowBytes != nullptr) {
    active = gridCellsBytes(v, active, pos, cellsHi);
  } else {
    active = gridAxis<ccd>(active, lo.x, hi.x, v.gridLower[0], v.gridScale[0], cellsLo[0], cellsHi[0]);
    active = gridAxis<ccd>(active, lo.y, hi.y, v.gridLower[1], v.gridScale[1], cellsLo[1], cellsHi[1]);
    active = gridAxis<ccd>(active, lo.z, hi.z, v.gridLower[2], v.gridScale[2], cellsLo[2], cellsHi[2]);
  }
  if (hn::AllFalse(df, active)) return;
  const auto activeU = hn::RebindMask(du, active);
  VU word0 = hn::Zero(du);
  // kOneWord: c.maskWords == 1 (at most 32 shapes), the loops over words run once.
  const uint32_t maskWords = kOneWord ? 1u : c.maskWords;
  for (uint32_t w = 0; w < maskWords; ++w) {
    VU bits = hn::IfThenElseZero(activeU, v.rowMask);
    if constexpr (ccd) {
      for (uint32_t axis = 0; axis < 3; ++axis) {
        bits = hn::And(bits, lookupRow(v, w * 6u + axis, cellsHi[axis]));       // set 0 ("first") at cellHi
        bits = hn::And(bits, lookupRow(v, w * 6u + 3u + axis, cellsLo[axis]));  // set 1 ("last") at cellLo
      }
    } else {  // cellLo = cellHi: the rows hold both sets' words ANDed
      for (uint32_t axis = 0; axis < 3; ++axis) bits = hn::And(bits, lookupRow(v, w * 3u + axis, cellsHi[axis]));
    }
    if (!kOneWord) hn::Store(bits, du, cand + w * lanes);
    any[w] = orOfLanes(du, bits);
    if (w == 0) word0 = bits;
  }

  constexpr bool wantVelocity = kFriction;
  const uint32_t S = v.s.layout.sphereCount, C = v.s.layout.capsuleCount;
  const gpu::vec4* spheres = v.s.spheres.data();
  // Capsules first.
  for (uint32_t word = kOneWord ? 0u : c.sphereCount / 32u; word < maskWords; ++word) {
    uint32_t bits = any[word] & v.capsuleBits[word];
    while (bits != 0u) {
      const uint32_t bit = static_cast<uint32_t>(__builtin_ctz(bits));
      bits &= bits - 1u;
      const uint32_t capsule = c.firstCapsule + word * 32u + bit - c.sphereCount;
      const MF lanesIn = candidateBit<kOneWord>(v, word0, word * 32u + bit);
      const gpu::Cone& cone = v.s.cones[C + capsule];
      const gpu::CapsuleSpheres caps = v.s.layout.capsules[capsule];
      const gpu::vec4 a1 = spheres[S + caps.sphere0], b1 = spheres[S + caps.sphere1];
      const gpu::vec4 a0 = spheres[caps.sphere0], b0 = spheres[caps.sphere1];
      const CapsuleLanes& lanesOf = v.capsuleLanes[capsule - c.firstCapsule];
      const V3 target = ccd ? capsuleSweep(lanesIn, lanesOf, old, pos) : pos;
      V3 delta;
      const MF touched = capsuleContact(lanesIn, lanesOf, target, delta);
      const MF contrib = ccd ? hn::And(lanesIn, hn::Or(touched, notEqual(target, pos))) : touched;
      if (hn::AllFalse(df, contrib)) continue;
      if constexpr (ccd) {
        accumulate(sum, contrib, target, delta, pos);
      } else {
        accumulateDiscrete(sum, contrib, delta, pos);
      }
      if (wantVelocity) {
        const gpu::vec3 v0 = gpu::vec3(a1) - gpu::vec3(a0);
        const gpu::vec3 v1 = gpu::vec3(b1) - gpu::vec3(b0);
        V3 vel;
        if (cone.dims.z != 0.0f) {  // along the axis
          const VF along = dot(sub(pos, splat(gpu::vec3(cone.center))), splat(gpu::vec3(cone.axis)));
          const VF half = hn::Set(df, 0.5f);
          VF u = hn::Add(half, hn::Div(hn::Mul(half, along), hn::Set(df, cone.dims.x)));
          u = glmMin(glmMax(u, zero), hn::Set(df, 1.0f));
          vel = mix(splat(v0), splat(v1), u);
        } else {  // an invalid cone: the bigger sphere's (the scalar kernel's mix, uniform)
          vel = splat(gpu::mix(v0, v1, a1.w >= b1.w ? 0.0f : 1.0f));
        }
        sum.velocity = add(sum.velocity, selectOrZero(contrib, vel));
      }
    }
  }
  // Then the spheres of no capsule.
  for (uint32_t word = 0; kOneWord ? word == 0u : word * 32u < c.sphereCount; ++word) {
    uint32_t bits = any[word] & v.freeSpheres[word];
    while (bits != 0u) {
      const uint32_t bit = static_cast<uint32_t>(__builtin_ctz(bits));
      bits &= bits - 1u;
      const uint32_t local = word * 32u + bit;
      const MF lanesIn = candidateBit<kOneWord>(v, word0, local);
      const uint32_t sphere = c.firstSphere + local;
      const gpu::vec4 s1 = spheres[S + sphere];
      const gpu::vec4 s0 = spheres[sphere];
      V3 target = pos;
      if constexpr (ccd) {
        VF toi;
        sphereSweep(lanesIn, v.sphereLanes[c.sphereCount + local], v.sphereLanes[local], old, pos, toi, target);
      }
      V3 delta;
      const MF touched = sphereContact(lanesIn, v.sphereLanes[local], target, delta);
      const MF contrib = ccd ? hn::And(lanesIn, hn::Or(touched, notEqual(target, pos))) : touched;
      if (hn::AllFalse(df, contrib)) continue;
      if constexpr (ccd) {
        accumulate(sum, contrib, target, delta, pos);
      } else {
        accumulateDiscrete(sum, contrib, delta, pos);
      }
      if (wantVelocity) sum.velocity = add(sum.velocity, selectOrZero(contrib, splat(gpu::vec3(s1) - gpu::vec3(s0))));
    }
  }

}

// A plane (broadcast) per lane: normal and offset.
struct VPlane {
  V3 n;
  VF w;
};
HWY_INLINE VPlane splatPlane(gpu::vec4 e) { return {splat(gpu::vec3(e)), hn::Set(DF(), e.w)}; }
HWY_INLINE VPlane select(MF m, const VPlane& yes, const VPlane& no) {
  return {select(m, yes.n, no.n), hn::IfThenElse(m, yes.w, no.w)};
}
// planeDistance: dot(n, p) + w.
HWY_INLINE VF planeDistance(const VPlane& e, const V3& p) { return hn::Add(dot(e.n, p), e.w); }

// A plane at both ends of the iteration, per lane (the plane that pushed or that was entered).
struct VPlanes {
  VPlane start, end;
};
HWY_INLINE VPlanes select(MF m, const VPlanes& yes, const VPlanes& no) {
  return {select(m, yes.start, no.start), select(m, yes.end, no.end)};
}

// convexContact per lane: the lanes (of `lanes`) inside every plane of x, their push (zero
// elsewhere) and the plane with the largest signed distance (the first on ties).
HWY_INLINE MF convexContact(const ClothView& v, MF lanes, const gpu::ShapeConvex& x, const V3& p, V3& delta,
                            VPlanes& pushed) {
  const DF df;
  const uint32_t P = v.s.layout.planeCount;
  const gpu::vec4* planes = v.s.planes.data();
  const uint32_t* index = v.s.layout.convexPlanes.data() + x.firstIndex;
  MF inside = lanes;
  VF best = hn::Zero(df);
  for (uint32_t k = 0; k < x.planeCount; ++k) {
    const uint32_t plane = index[k];
    const VPlane e1 = splatPlane(planes[P + plane]);
    const VF distance = planeDistance(e1, p);
    inside = hn::And(inside, hn::Lt(distance, hn::Zero(df)));
    if (hn::AllFalse(df, inside)) break;
    if (k == 0) {  // the first plane is every inside lane's best so far: no selects
      best = distance;
      pushed = VPlanes{splatPlane(planes[plane]), e1};
      continue;
    }
    const MF better = hn::And(inside, hn::Gt(distance, best));
    best = hn::IfThenElse(better, distance, best);
    if (!hn::AllFalse(df, better)) pushed = select(better, VPlanes{splatPlane(planes[plane]), e1}, pushed);
  }
  delta = selectOrZero(inside, mul(pushed.end.n, hn::Neg(best)));
  return inside;
}

// convexSweep per lane: the lanes (of `lanes`) whose path enters x during the iteration, the plane
// they enter through (the first on ties) and their target (p1 on the other lanes).
HWY_INLINE MF convexSweep(const ClothView& v, MF lanes, const gpu::ShapeConvex& x, const V3& p0, const V3& p1,
                          V3& target, VPlanes& entered) {
  const DF df;
  const VF zero = hn::Zero(df);
  const uint32_t P = v.s.layout.planeCount;
  const gpu::vec4* planes = v.s.planes.data();
  const uint32_t* index = v.s.layout.convexPlanes.data() + x.firstIndex;
  MF alive = lanes, hasEntry = hn::FirstN(df, 0);
  VF tIn = zero, tOut = hn::Set(df, 1.0f), entryDistance = zero;
  target = p1;
  for (uint32_t k = 0; k < x.planeCount; ++k) {
    const uint32_t plane = index[k];
    const VPlane e0 = splatPlane(planes[plane]), e1 = splatPlane(planes[P + plane]);
    const VF a = planeDistance(e0, p0);
    const VF b = planeDistance(e1, p1);
    const MF aInside = hn::Lt(a, zero), bInside = hn::Lt(b, zero);
    alive = hn::AndNot(hn::AndNot(aInside, hn::Not(bInside)), alive);  // outside at both ends: no hit
    if (hn::AllFalse(df, alive)) return alive;
    const MF leaving = hn::And(alive, hn::AndNot(bInside, aInside));
    const MF entering = hn::And(alive, hn::AndNot(aInside, bInside));
    if (hn::AllFalse(df, hn::Or(leaving, entering))) continue;  // inside throughout on every live lane
    const VF t = hn::Div(a, hn::Sub(a, b));  // only used where the signs differ
    tOut = hn::IfThenElse(leaving, glmMin(tOut, t), tOut);
    const MF take = hn::And(entering, hn::Or(hn::Not(hasEntry), hn::Gt(t, tIn)));
    if (hn::AllFalse(df, take)) continue;
    tIn = hn::IfThenElse(take, t, tIn);
    entryDistance = hn::IfThenElse(take, b, entryDistance);
    // The entry plane: only read on lanes that took one, so the first taken plane may be stored whole.
    entered = hn::AllFalse(df, hasEntry) ? VPlanes{e0, e1} : select(take, VPlanes{e0, e1}, entered);
    hasEntry = hn::Or(hasEntry, take);
  }
  const MF hit = hn::And(hn::And(alive, hasEntry), hn::Lt(tIn, tOut));
  if (!hn::AllFalse(df, hit)) target = select(hit, sub(p1, mul(entered.end.n, entryDistance)), p1);
  return hit;
}

// collideConvexes for one batch: the convexes the grid pass kept, after the round shapes.
template <bool kCcd, bool kFriction>
HWY_INLINE void collideConvexes(const ClothView& v, MF active, const V3& pos, const V3& old, Sum& sum) {
  const DF df;
  const gpu::ShapeCloth& c = v.c;
  constexpr bool ccd = kCcd;
  constexpr bool wantVelocity = kFriction;
  const uint32_t words = (c.convexCount + 31u) / 32u;
  for (uint32_t word = 0; word < words; ++word) {
    uint32_t bits = v.s.convexBits[c.firstConvexWord + word];
    while (bits != 0u) {
      const uint32_t bit = static_cast<uint32_t>(__builtin_ctz(bits));
      bits &= bits - 1u;
      const gpu::ShapeConvex& x = v.s.layout.convexes[c.firstConvex + word * 32u + bit];
      V3 target = pos;
      const VPlane none = splatPlane(gpu::vec4(0.0f));
      VPlanes entered{none, none}, pushed{none, none};
      const MF in = ccd ? convexSweep(v, active, x, old, pos, target, entered) : hn::FirstN(df, 0);
      V3 delta;
      const MF push = convexContact(v, active, x, target, delta, pushed);
      const MF contrib = hn::Or(in, push);
      if (hn::AllFalse(df, contrib)) continue;
      accumulate(sum, contrib, target, delta, pos);
      if (wantVelocity) {
        // One plane: whichever of pushed and entered was set holds it for every lane.
        const VPlanes e = x.planeCount == 1 ? (hn::AllFalse(df, push) ? entered : pushed) : select(push, pushed, entered);
        const V3 vel = sub(mul(e.start.n, planeDistance(e.start, pos)), mul(e.end.n, planeDistance(e.end, pos)));
        sum.velocity = add(sum.velocity, selectOrZero(contrib, vel));
      }
    }
  }
}

// collideParticle for one batch of Lanes(df) particles in SoA form; `active` are the lanes with a
// particle of non-zero inverse mass. Returns kMoved* flags (pw is always reset to qw).
template <bool kCcd, bool kFriction, bool kOneWord>
HWY_INLINE uint32_t collideBatch(ClothView& v, uint32_t* cand, uint32_t* any, MF active, V3& pos, VF& pw, V3& old,
                                 const VF& qw) {
  const DF df;
  const VF zero = hn::Zero(df);
  pw = qw;
  if (hn::AllFalse(df, active)) return 0u;
  constexpr bool wantVelocity = kFriction;
  Sum sum{splat(gpu::vec3(0.0f)), splat(gpu::vec3(0.0f)), zero};
  if (v.g.lower.w != 0.0f) collideRoundShapes<kCcd, kFriction, kOneWord>(v, cand, any, active, pos, old, sum);
  if (v.c.convexCount != 0u) collideConvexes<kCcd, kFriction>(v, active, pos, old, sum);

  // applyContacts.
  const MF has = hn::Gt(sum.count, zero);
  if (hn::AllFalse(df, has)) return 0u;
  uint32_t moved = kMovedPositions;
  // 1 / count; where no lane has more than one contact (most batches), the division by 1 and the
  // product by 1 are exact: the sums as they are.
  const bool single = hn::AllTrue(df, hn::Le(sum.count, hn::Set(df, 1.0f)));
  const VF invCount = single ? hn::Set(df, 1.0f) : hn::Div(hn::Set(df, 1.0f), hn::IfThenElse(has, sum.count, hn::Set(df, 1.0f)));
  const V3 avg = single ? sum.delta : mul(sum.delta, invCount);
  const VF avgLen2 = dot(avg, avg);
  if (wantVelocity) {
    MF fr = hn::And(has, hn::Gt(avgLen2, zero));
    const V3 n = div(avg, hn::Sqrt(avgLen2));
    const V3 vel = sub(sub(pos, old), mul(sum.velocity, invCount));
    const V3 vt = sub(vel, mul(dot(vel, n), n));
    const VF vt2 = dot(vt, vt);
    fr = hn::And(fr, hn::Gt(vt2, zero));
    const VF j = glmMax(hn::Mul(hn::Set(df, -v.friction), hn::Sqrt(hn::Div(avgLen2, vt2))), hn::Set(df, -1.0f));
    if (!hn::AllFalse(df, fr)) {
      old = select(fr, sub(old, mul(j, vt)), old);
      moved |= kMovedPrevious;
    }
  }
  if ((v.flags & gpu::kCollideFlagMassScale) != 0u) {
    pw = hn::IfThenElse(has, hn::Div(pw, hn::Add(hn::Set(df, 1.0f), hn::Mul(hn::Set(df, v.massScale), avgLen2))), pw);
  }
  pos = select(has, add(pos, avg), pos);
  return moved;
}

// The batches of particles [0, n) of p / q (n > 0), with the flags' modes fixed at compile time.
template <bool kCcd, bool kFriction, bool kOneWord>
HWY_NOINLINE void collideBatches(const ClothView& view, Float4* p, Float4* q, uint32_t n) {
  ClothView v = view;
  const DF df;
  const DU du;
  const size_t lanes = hn::Lanes(df);
  uint32_t* cand = v.cand;
  uint32_t* any = v.any;
  HWY_ALIGN float tailP[4 * hn::MaxLanes(df)];
  HWY_ALIGN float tailQ[4 * hn::MaxLanes(df)];
  const VF zero = hn::Zero(df);
  for (uint32_t i = 0; i < n; i += static_cast<uint32_t>(lanes)) {
    const size_t count = std::min<size_t>(lanes, n - i);
    float* pp = &p[i].x;
    float* qq = &q[i].x;
    if (count < lanes) {
      // The tail: padded with inverse mass 0 (inactive lanes), copied back afterwards.
      std::memset(tailP, 0, sizeof tailP);
      std::memset(tailQ, 0, sizeof tailQ);
      std::memcpy(tailP, pp, count * sizeof(Float4));
      std::memcpy(tailQ, qq, count * sizeof(Float4));
      pp = tailP;
      qq = tailQ;
    }
    VF px, py, pz, pw, qx, qy, qz, qw;
    hn::LoadInterleaved4(df, pp, px, py, pz, pw);
    hn::LoadInterleaved4(df, qq, qx, qy, qz, qw);
    V3 pos{px, py, pz}, old{qx, qy, qz};
    const VU pwBefore = hn::BitCast(du, pw);
    const uint32_t moved = collideBatch<kCcd, kFriction, kOneWord>(v, cand, any, hn::Ne(qw, zero), pos, pw, old, qw);
    // Stores only what changed (most batches touch no shape): the same memory afterwards, less
    // write traffic. p.w is reset to prev.w, compared bitwise.
    if ((moved & kMovedPositions) != 0u || !hn::AllTrue(du, hn::Eq(hn::BitCast(du, pw), pwBefore))) {
      hn::StoreInterleaved4(pos.x, pos.y, pos.z, pw, df, pp);
    }
    if ((moved & kMovedPrevious) != 0u) hn::StoreInterleaved4(old.x, old.y, old.z, qw, df, qq);
    if (count < lanes) {
      std::memcpy(&p[i].x, tailP, count * sizeof(Float4));
      std::memcpy(&q[i].x, tailQ, count * sizeof(Float4));
    }
  }
}

}  // namespace

// Whether xyzw values (count float4) may hold a non-finite value or a negative inverse mass (w): the
// largest of |x|, |y|, |z| and w's own bits, as unsigned integers, reaches +inf's bits (a negative w,
// -0 included, has its sign bit set). -1 where the vectors are not a multiple of 4 lanes.
int ValuesSuspicious(const float* xyzw, size_t count) {
  const DU du;
  const size_t lanes = hn::Lanes(du);
  if (lanes % 4 != 0) return -1;
  const uint32_t* bits = reinterpret_cast<const uint32_t*>(xyzw);
  const size_t n = count * 4;
  // Lane i holds component i % 4: w keeps its sign bit.
  const VU keep = hn::IfThenElse(hn::Eq(hn::And(hn::Iota(du, 0), hn::Set(du, 3u)), hn::Set(du, 3u)),
                                 hn::Set(du, 0xFFFFFFFFu), hn::Set(du, 0x7FFFFFFFu));
  VU m0 = hn::Zero(du), m1 = hn::Zero(du);
  size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    m0 = hn::Max(m0, hn::And(hn::LoadU(du, bits + i), keep));
    m1 = hn::Max(m1, hn::And(hn::LoadU(du, bits + i + lanes), keep));
  }
  for (; i + lanes <= n; i += lanes) m0 = hn::Max(m0, hn::And(hn::LoadU(du, bits + i), keep));
  bool suspicious = !hn::AllFalse(du, hn::Gt(hn::Max(m0, m1), hn::Set(du, 0x7F7FFFFFu)));
  for (; i < n; ++i) suspicious |= (bits[i] & ((i & 3u) == 3u ? 0xFFFFFFFFu : 0x7FFFFFFFu)) >= 0x7F800000u;
  return suspicious ? 1 : 0;
}

void CollideCloth(const ShapesState& s, uint32_t cloth, float friction, float massScale, Float4* particles,
                  Float4* prevParticles, uint32_t begin, uint32_t end) {
  const DF df;
  const size_t lanes = hn::Lanes(df);
  const gpu::ShapeCloth& c = s.layout.cloths[cloth];
  const gpu::ShapeGrid& g = s.grids[cloth];
  end = std::min(end, c.particleCount);
  if (begin >= end) return;
  Float4* p = particles + c.firstParticle + begin;
  Float4* q = prevParticles + c.firstParticle + begin;
  const uint32_t n = end - begin;
  bool anyConvex = false;
  for (uint32_t w = 0; w * 32u < c.convexCount; ++w) anyConvex |= s.convexBits[c.firstConvexWord + w] != 0u;
  if (g.lower.w == 0.0f && !anyConvex) {  // no shape can be touched: the kernel only resets the inverse masses
    for (uint32_t i = 0; i < n; ++i) p[i].w = q[i].w;
    return;
  }
  // The call's tables, carved from one per-thread block that is kept between calls (grown to the
  // largest cloth's tables): a small cloth's call allocates nothing.
  const size_t words = std::max<size_t>(c.maskWords, 1);
  const size_t rowStride = std::max<size_t>(gpu::kGridCells, lanes);
  const uint32_t rowsPerWord = (s.flags & gpu::kCollideFlagContinuous) != 0u ? 6u : 3u;
  const size_t rowCount = size_t{c.maskWords} * rowsPerWord;
  const auto rounded = [](size_t bytes) { return (bytes + HWY_ALIGNMENT - 1) / HWY_ALIGNMENT * HWY_ALIGNMENT; };
  const size_t sizes[] = {rounded(words * lanes * 4), rounded(words * 4), rounded(words * 4 * 2),
                          rounded(words * rowsPerWord * rowStride * 4), rounded(rowCount * 16u),
                          rounded(std::max<size_t>(2 * c.sphereCount, 1) * sizeof(SphereLanes)),
                          rounded(std::max<size_t>(c.capsuleCount, 1) * sizeof(CapsuleLanes))};
  size_t total = 0;
  for (const size_t size : sizes) total += size;
  thread_local hwy::AlignedFreeUniquePtr<uint8_t[]> scratch;
  thread_local size_t scratchSize = 0;
  if (total > scratchSize) {
    scratch = hwy::AllocateAligned<uint8_t>(total);
    scratchSize = total;
  }
  uint8_t* next = scratch.get();
  const auto carve = [&](size_t index) {
    uint8_t* at = next;
    next += sizes[index];
    return at;
  };
  uint32_t* cand = reinterpret_cast<uint32_t*>(carve(0));
  uint32_t* any = reinterpret_cast<uint32_t*>(carve(1));
  // The spheres that collide on their own (sphereInCapsule: a capsule's spheres do not).
  uint32_t* freeSpheres = reinterpret_cast<uint32_t*>(carve(2));
  // After them, each word's capsule bits (shapes [sphereCount, sphereCount + capsuleCount)).
  uint32_t* capsuleBits = freeSpheres + words;
  for (uint32_t w = 0; w < words; ++w) {
    freeSpheres[w] = bitsBelow(w, c.sphereCount);
    capsuleBits[w] = ~bitsBelow(w, c.sphereCount) & bitsBelow(w, c.sphereCount + c.capsuleCount);
  }
  if (c.capsuleCount != 0u) {
    const uint32_t* csr = s.layout.sphereCapsules.data() + c.firstSphereCapsule;
    for (uint32_t k = 0; k < c.sphereCount; ++k) {
      if (csr[k + 1u] != csr[k]) freeSpheres[k / 32u] &= ~(1u << (k % 32u));
    }
  }
  // The cloth's mask rows (maskIndex: firstMaskWord + ((set * 3 + axis) * 8 + cell) * maskWords + word)
  // with their cells contiguous.
  // Discrete collision looks both sets up at the same cell: there, row axis holds set 0 AND set 1.
  uint32_t* rows = reinterpret_cast<uint32_t*>(carve(3));
  if (g.lower.w != 0.0f) {
    const auto mask = [&](uint32_t row, uint32_t cell, uint32_t w) {
      return s.masks[c.firstMaskWord + (row * gpu::kGridCells + cell) * c.maskWords + w];
    };
    for (uint32_t w = 0; w < c.maskWords; ++w) {
      for (uint32_t row = 0; row < rowsPerWord; ++row) {
        uint32_t* dst = rows + (w * rowsPerWord + row) * rowStride;
        for (uint32_t cell = 0; cell < rowStride; ++cell) {
          if (cell >= gpu::kGridCells) dst[cell] = 0u;
          else dst[cell] = rowsPerWord == 6u ? mask(row, cell, w) : mask(row, cell, w) & mask(3u + row, cell, w);
        }
      }
    }
  }
  // At 4 lanes, rows whose words all fit bytes (at most 8 shapes) are looked up by one byte shuffle.
  uint8_t* rowBytes = carve(4);
  if (lanes == 4 && g.lower.w != 0.0f && rowCount != 0 &&
      std::all_of(rows, rows + rowCount * rowStride, [](uint32_t word) { return word < 256u; })) {
    for (size_t r = 0; r < rowCount; ++r) {
      for (uint32_t k = 0; k < 16u; ++k) rowBytes[r * 16u + k] = k < gpu::kGridCells ? static_cast<uint8_t>(rows[r * rowStride + k]) : 0u;
    }
  } else {
    rowBytes = nullptr;
  }
  // The shapes' values broadcast once for every batch: the spheres at the iteration's end, then (with
  // CCD) at its start; the capsules at both.
  const bool ccd = (s.flags & gpu::kCollideFlagContinuous) != 0u;
  SphereLanes* sphereLanes = reinterpret_cast<SphereLanes*>(carve(5));
  CapsuleLanes* capsuleLanes = reinterpret_cast<CapsuleLanes*>(carve(6));
  if (g.lower.w != 0.0f) {
    const uint32_t S = s.layout.sphereCount, C = s.layout.capsuleCount;
    for (uint32_t atEnd = ccd ? 0u : 1u; atEnd < 2u; ++atEnd) {
      for (uint32_t k = 0; k < c.sphereCount; ++k) {
        sphereLanes[(1u - atEnd) * c.sphereCount + k] = splatSphere(s.spheres[atEnd * S + c.firstSphere + k]);
      }
    }
    for (uint32_t k = 0; k < c.capsuleCount; ++k) {
      const gpu::CapsuleSpheres caps = s.layout.capsules[c.firstCapsule + k];
      CapsuleLanes& lanesOf = capsuleLanes[k];
      for (uint32_t atEnd = ccd ? 0u : 1u; atEnd < 2u; ++atEnd) {
        const gpu::Cone& cone = s.cones[atEnd * C + c.firstCapsule + k];
        lanesOf.cone[atEnd] = splatCone(cone);
        lanesOf.valid[atEnd] = cone.dims.z != 0.0f;
        lanesOf.sphere0[atEnd] = splatSphere(s.spheres[atEnd * S + caps.sphere0]);
        lanesOf.sphere1[atEnd] = splatSphere(s.spheres[atEnd * S + caps.sphere1]);
      }
      lanesOf.firstBigger = s.spheres[S + caps.sphere0].w >= s.spheres[S + caps.sphere1].w;
      lanesOf.reach2 = hn::Set(df, capsuleReach2(s.cones[C + c.firstCapsule + k], s.spheres[S + caps.sphere0],
                                                 s.spheres[S + caps.sphere1]));
    }
  }
  ClothView v{s,
              c,
              g,
              {hn::Set(df, g.lower.x), hn::Set(df, g.lower.y), hn::Set(df, g.lower.z)},
              {hn::Set(df, g.scale.x), hn::Set(df, g.scale.y), hn::Set(df, g.scale.z)},
              s.flags,
              friction,
              massScale,
              cand,
              any,
              freeSpheres,
              capsuleBits,
              rows,
              rowStride,
              rowBytes,
              hn::Set(hn::DFromV<VU>(), rowBytes != nullptr ? 0xFFu : 0xFFFFFFFFu),
              sphereLanes,
              capsuleLanes};
  if (c.maskWords == 1u) {
    if ((s.flags & gpu::kCollideFlagFriction) != 0u) {
      ccd ? collideBatches<true, true, true>(v, p, q, n) : collideBatches<false, true, true>(v, p, q, n);
    } else {
      ccd ? collideBatches<true, false, true>(v, p, q, n) : collideBatches<false, false, true>(v, p, q, n);
    }
  } else if ((s.flags & gpu::kCollideFlagFriction) != 0u) {
    ccd ? collideBatches<true, true, false>(v, p, q, n) : collideBatches<false, true, false>(v, p, q, n);
  } else {
    ccd ? collideBatches<true, false, false>(v, p, q, n) : collideBatches<false, false, false>(v, p, q, n);
  }
}

}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vkc::cpu {
HWY_EXPORT(CollideCloth);
HWY_EXPORT(ValuesSuspicious);

int valuesSuspiciousSimd(const Float4* values, size_t count) {
  // Not &values->x: values may be null when count is 0.
  return HWY_DYNAMIC_DISPATCH(ValuesSuspicious)(reinterpret_cast<const float*>(values), count);
}

void collideClothSimd(const ShapesState& state, uint32_t cloth, const ShapeCollisionSettings& settings,
                      Float4* particles, Float4* prevParticles, uint32_t begin, uint32_t end) {
  HWY_DYNAMIC_DISPATCH(CollideCloth)(state, cloth, settings.friction, settings.collisionMassScale, particles,
                                     prevParticles, begin, end);
}

void forEachSimdTarget(const std::function<void(const char* target)>& fn) {
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    fn(hwy::TargetName(target));
  }
  hwy::SetSupportedTargetsForTest(0);
}
}  // namespace vkc::cpu
#endif

#else  // scalar-only build

namespace vkc::cpu {
void collideClothSimd(const ShapesState& state, uint32_t cloth, const ShapeCollisionSettings& settings,
                      Float4* particles, Float4* prevParticles, uint32_t begin, uint32_t end) {
  collideClothScalar(state, cloth, settings, particles, prevParticles, begin, end);
}

void forEachSimdTarget(const std::function<void(const char* target)>& fn) { fn("none (VKC_SIMD=OFF)"); }

int valuesSuspiciousSimd(const Float4*, size_t) { return -1; }
}  // namespace vkc::cpu
#endif
