// Highway SIMD twin of the cylinder-cylinder queries (shaders/shared/geometry_queries_math.h,
// geomConvexSearchDeepest with two cylinders), with the lanes across queries. Compiled once per
// target and chosen at run time.
//
// A chunk of queries at a time. First, per query: the canonical order (geomSwapped), the frames
// (geomMakeConvex); the parallel axes' closed form by the scalar code (geomQueryContacts). The others
// gathered into lanes: the candidate directions (apart: no contact), the inscribed boxes' bound
// (proven: the contact), the axes within kGeomCritParallel of parallel marked for the scalar code
// (GJK and EPA). The queries still open are compacted into lane batches for
// geomCylinderCylinderCritical: the two side + rim pieces (geomCylinderSideRim), whose ellipse
// problems are compacted across pieces and lanes and solved with each lane taking the next problem
// as its own loop ends (as cylinder-box's; a flat ellipse by its major axis), tried in the scalar
// order; then the rim + rim search: per rim of the smaller circle, f at
// its 16 sampled angles (geomRimRimAlong), the two lowest local minima (per lane), then each one's
// refinement by Brent's rule (kGeomRimSteps steps, the parabola or golden-section step chosen per
// lane): fixed counts, so every lane runs the same steps; lanes already apart (least <= 0) run on
// (their least only falls: the verdict is the scalar code's, which stopped). Two lane batches in
// flight, and their two minima's refinements as four chains (each step waits for the f before it),
// each with its own least, merged in the scalar code's order. Last, the chunk's queries in
// order. Every operation is the scalar code's, in its order (GLM's dot, cross, abs; no fused
// multiply-adds), so the contacts are the scalar twin's bit for bit
// (tests/geometry_queries/geometry_queries_simd_test.cpp: CylinderCylinderLanesEqualTheScalarLoop...).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu/geometry_queries.h"
#include "shared/geometry_queries_math.h"

#ifdef VKC_HAVE_SIMD
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/geometry_queries_cylinder_cylinder_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "cpu/simd_vec3.h"
#include "cpu/geometry_queries_cylinder_simd.h"

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE {
namespace {
using namespace cylinder_lanes;  // NOLINT(google-build-using-namespace)

constexpr size_t kCcChunk = 16 * kLaneMax;  // queries per chunk

// One lane batch of open pairs in geomMakeConvex's frames: d = t's centre less s's, each cylinder's
// unit axis, radius and half height; the searched circle's axis a0 (the smaller radius' cylinder),
// radius r0, half height h0, its frame e1, e2; the other's axis a1.
struct CcLanes {
  V3 d;
  V3 sa;
  VF sr, sh;
  V3 ta;
  VF tr, th;
  V3 a0, a1, e1, e2;
  VF r0, h0;
};

// geomCylinderSupportAt: r |a x n| + h |a.n|.
HWY_INLINE VF supportAtLanes(const V3& a, VF r, VF h, const V3& n) {
  const V3 c = cross(a, n);
  return hn::Add(hn::Mul(r, hn::Sqrt(dot(c, c))), hn::Mul(h, glmAbs(dot(a, n))));
}

// geomRimRimAlong where `use`: the normal across both circles' tangents at the searched circle's
// radial direction w, unnormalised, f there scaled once by 1 / |n|, lowering least and leastDir;
// returns f (3e38 where the tangents are parallel or q lies on a1).
HWY_INLINE VF rimRimLanes(const CcLanes& x, const V3& base0, const V3& w, MF use, VF& least, V3& leastDir) {
  const DF df;
  const V3 q = sub(base0, mul(w, x.r0));
  const V3 n = cross(cross(x.a0, w), cross(x.a1, q));
  const VF nn = dot(n, n);
  const MF ok = hn::Gt(nn, hn::Set(df, 1e-12f));
  const VF inv = hn::Div(hn::Set(df, 1.0f), hn::Sqrt(nn));
  const VF dn = dot(x.d, n);
  const VF f = hn::Mul(
      hn::Sub(hn::Add(supportAtLanes(x.sa, x.sr, x.sh, n), supportAtLanes(x.ta, x.tr, x.th, n)), glmAbs(dn)), inv);
  const MF lower = hn::And(hn::And(use, ok), hn::Lt(f, least));
  least = hn::IfThenElse(lower, f, least);
  leastDir = select(lower, mul(n, hn::IfThenElse(hn::Lt(dn, hn::Zero(df)), hn::Neg(inv), inv)), leastDir);
  return hn::IfThenElse(ok, f, hn::Set(df, 3.0e38f));
}

// geomTryCandidate where `use`: u turned towards t, its overlap lowering least and leastDir.
HWY_INLINE void tryLanes(const CcLanes& x, const V3& u, MF use, VF& least, V3& leastDir) {
  const MF flip = hn::Lt(dot(x.d, u), hn::Zero(DF()));
  const V3 v = select(flip, neg3(u), u);
  const VF f = hn::Sub(hn::Add(cylinderSupportLanes(x.sa, x.sr, x.sh, v), cylinderSupportLanes(x.ta, x.tr, x.th, v)),
                       dot(x.d, v));
  const MF lower = hn::And(use, hn::Lt(f, least));
  least = hn::IfThenElse(lower, f, least);
  leastDir = select(lower, v, leastDir);
}

// geomCylinderSideRim's frame of the side of axis a against the rim of (b, rb, hb) seen from p: the
// ellipse's axes b1, e2, the rim's side zeta, the point (y0, y1) in the ellipse's frame, |a . b| and
// whether the ellipse is flat (|a . b| < kGeomCritThin).
struct SideRim {
  V3 b1, e2;
  VF zeta, y0, y1, c;
  MF flat;
};

HWY_INLINE SideRim sideRimLanes(const V3& a, const V3& b, VF rb, VF hb, const V3& p) {
  const DF df;
  SideRim r;
  const VF cu = dot(a, b);
  const V3 ax = cross(b, a);
  const VF sk = hn::Sqrt(dot(ax, ax));
  r.b1 = div(ax, sk);
  r.e2 = div(sub(b, mul(a, cu)), sk);
  r.zeta = hn::IfThenElse(hn::Lt(dot(p, r.e2), hn::Zero(df)), hn::Set(df, -1.0f), hn::Set(df, 1.0f));
  const V3 y = div(sub(p, mul(b, hn::Mul(r.zeta, hb))), rb);
  r.y0 = dot(y, r.b1);
  r.y1 = hn::Mul(dot(y, r.e2), r.zeta);
  r.c = glmAbs(cu);
  r.flat = hn::Lt(r.c, hn::Set(df, gpu::kGeomCritThin));
  return r;
}

// The side + rim pieces of two lane batches (4 pieces: batch 2 j + side), their ellipse problems
// compacted across pieces and lanes and solved, then tried in the scalar code's order (s's side,
// then t's); a flat ellipse by its major axis' nearest point.
HWY_INLINE void sideRimBatches(const CcLanes (&x)[2], size_t valid0, size_t valid1, VF (&least)[2],
                               V3 (&leastDir)[2], EllipseTasks<4>& et) {
  const DF df;
  const DU du;
  SideRim r[4];
  for (size_t j = 0; j < 2; ++j) {
    r[2 * j] = sideRimLanes(x[j].sa, x[j].ta, x[j].tr, x[j].th, x[j].d);
    r[2 * j + 1] = sideRimLanes(x[j].ta, x[j].sa, x[j].sr, x[j].sh, neg3(x[j].d));
  }
  std::memset(et.ok, 0, sizeof et.ok);
  size_t tasks = 0;
  const auto laneIndex = hn::Iota(du, 0u);
  for (uint32_t piece = 0; piece < 4u; ++piece) {
    const MF use = hn::AndNot(r[piece].flat, hn::FirstN(df, piece < 2u ? valid0 : valid1));
    hn::Store(r[piece].y0, df, et.y0[piece]);
    const VU id = hn::Add(laneIndex, hn::Set(du, piece * static_cast<uint32_t>(kLaneMax)));
    hn::CompressStore(glmAbs(r[piece].y0), use, df, et.ty0 + tasks);
    hn::CompressStore(r[piece].y1, use, df, et.ty1 + tasks);
    hn::CompressStore(r[piece].c, use, df, et.tc + tasks);
    tasks += hn::CompressStore(id, hn::RebindMask(du, use), du, et.tid + tasks);
  }
  solveEllipses(et, tasks);
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  for (uint32_t piece = 0; piece < 4u; ++piece) {
    const SideRim& p = r[piece];
    const VF n0 = hn::Load(df, et.n0 + piece * kLaneMax);
    const VF n1 = hn::Load(df, et.n1 + piece * kLaneMax);
    const MF useEllipse = hn::RebindMask(df, hn::Ne(hn::Load(du, et.ok + piece * kLaneMax), hn::Zero(du)));
    const VF sx = hn::IfThenElse(hn::Lt(p.y0, zero), hn::Neg(n0), n0);
    const V3 nEllipse = add(mul(p.b1, sx), mul(p.e2, hn::Mul(p.zeta, n1)));
    V3 nFlat = add(mul(p.b1, hn::Sub(p.y0, glmClamp(p.y0, hn::Neg(one), one))), mul(p.e2, hn::Mul(p.zeta, p.y1)));
    const VF nn = dot(nFlat, nFlat);
    nFlat = div(nFlat, hn::Sqrt(nn));
    const MF useFlat = hn::And(p.flat, hn::Gt(nn, zero));
    const size_t j = piece / 2u;
    tryLanes(x[j], select(p.flat, nFlat, nEllipse), hn::Or(useFlat, hn::AndNot(p.flat, useEllipse)), least[j],
             leastDir[j]);
  }
}

// (cos, sin) of the kGeomRimSamples sampled angles (geomRimSample).
struct RimTable {
  HWY_ALIGN float c[gpu::kGeomRimSamples];
  HWY_ALIGN float s[gpu::kGeomRimSamples];
  RimTable() {
    for (uint32_t k = 0; k < gpu::kGeomRimSamples; ++k) {
      const gpu::vec2 cs = gpu::geomRimSample(k);
      c[k] = cs.x;
      s[k] = cs.y;
    }
  }
};

// One rim's search state of a lane batch between its steps.
struct RimSearch {
  V3 base0;
  VF first, second, prev, cur, low1, low2, k1, k2;
  VF m1, p1, m2, p2;  // f at the two minima's neighbouring samples (k - 1, k + 1)
};

// Sample k's step of geomCylinderCylinderCritical's loop over the samples (k <= kGeomRimSamples + 1):
// f at sample k (the first two again past the last), sample k - 1 kept when it is a local minimum
// among the two lowest.
HWY_INLINE void sampleStep(const CcLanes& x, const RimTable& table, uint32_t k, RimSearch& r, VF& least,
                           V3& leastDir) {
  const DF df;
  const uint32_t samples = gpu::kGeomRimSamples;
  VF next = k == samples ? r.first : r.second;
  if (k < samples) {
    const V3 w = add(mul(x.e1, hn::Set(df, table.c[k])), mul(x.e2, hn::Set(df, table.s[k])));
    next = rimRimLanes(x, r.base0, w, hn::FirstN(df, hn::Lanes(df)), least, leastDir);
  }
  if (k == 0u) r.first = next;
  if (k == 1u) r.second = next;
  if (k >= 2u) {
    const MF minimum = hn::And(hn::Le(r.cur, r.prev), hn::Lt(r.cur, next));
    const VF km = hn::Set(df, static_cast<float>((k - 1u) % samples));
    const MF m1 = hn::And(minimum, hn::Lt(r.cur, r.low1));
    const MF m2 = hn::AndNot(m1, hn::And(minimum, hn::Lt(r.cur, r.low2)));
    r.low2 = hn::IfThenElse(m1, r.low1, hn::IfThenElse(m2, r.cur, r.low2));
    r.k2 = hn::IfThenElse(m1, r.k1, hn::IfThenElse(m2, km, r.k2));
    r.m2 = hn::IfThenElse(m1, r.m1, hn::IfThenElse(m2, r.prev, r.m2));
    r.p2 = hn::IfThenElse(m1, r.p1, hn::IfThenElse(m2, next, r.p2));
    r.low1 = hn::IfThenElse(m1, r.cur, r.low1);
    r.k1 = hn::IfThenElse(m1, km, r.k1);
    r.m1 = hn::IfThenElse(m1, r.prev, r.m1);
    r.p1 = hn::IfThenElse(m1, next, r.p1);
  }
  r.prev = r.cur;
  r.cur = next;
}

// geomRimRimRefine's state of a lane batch: the sample's direction wk and tangent tk, the bracket
// [lo, hi], the best three points x, w, v and their f, the last two steps d, e; the lanes whose
// sample exists (use); their own least and its direction (merged in the scalar code's order).
struct Refine {
  V3 wk, tk;
  VF lo, hi, x, fx, w, fw, v, fv, e, d;
  MF use;
  VF least;
  V3 leastDir;
};

HWY_INLINE V3 curvePoint(const Refine& g, VF at) {
  return div(add(g.wk, mul(g.tk, at)), hn::Sqrt(hn::Add(hn::Set(DF(), 1.0f), hn::Mul(at, at))));
}

// The refinement's start about sample k (per lane; kGeomRimSamples: none) whose neighbours' f are
// fm and fp (f0 its own): the sample's direction and tangent, the bracket [-kGeomRimTan, kGeomRimTan],
// x = 0, w the lower neighbour, v the other.
HWY_INLINE void refineStart(const RimTable& table, const CcLanes& x, VF k, VF fm, VF f0, VF fp, Refine& g) {
  const DF df;
  const DI di;
  const VF last = hn::Set(df, static_cast<float>(gpu::kGeomRimSamples - 1u));
  g.use = hn::Lt(k, hn::Set(df, static_cast<float>(gpu::kGeomRimSamples)));
  const VI index = hn::ConvertTo(di, glmMin(k, last));
  const VF c = hn::GatherIndex(df, table.c, index);
  const VF s = hn::GatherIndex(df, table.s, index);
  g.wk = add(mul(x.e1, c), mul(x.e2, s));
  g.tk = sub(mul(x.e2, c), mul(x.e1, s));
  g.lo = hn::Set(df, -gpu::kGeomRimTan);
  g.hi = hn::Set(df, gpu::kGeomRimTan);
  g.x = hn::Zero(df);
  g.fx = f0;
  const MF leftLower = hn::Le(fm, fp);
  g.w = hn::IfThenElse(leftLower, g.lo, g.hi);
  g.fw = hn::IfThenElse(leftLower, fm, fp);
  g.v = hn::IfThenElse(leftLower, g.hi, g.lo);
  g.fv = hn::IfThenElse(leftLower, fp, fm);
  g.e = g.d = hn::Sub(g.hi, g.lo);
  g.least = hn::Set(df, 3.0e38f);
  const VF zero = hn::Zero(df);
  g.leastDir = V3{zero, zero, zero};
}

// One step of geomRimRimRefine's Brent rule per lane (the parabola's vertex or a golden-section
// step), f at its new point lowering the refinement's own least.
HWY_INLINE void refineStep(const CcLanes& x, const RimSearch& r, Refine& g) {
  const DF df;
  const VF zero = hn::Zero(df);
  const VF tol = hn::Set(df, gpu::kGeomRimTol);
  const VF tol2 = hn::Set(df, 2.0f * gpu::kGeomRimTol);
  const VF rr = hn::Mul(hn::Sub(g.x, g.w), hn::Sub(g.fx, g.fv));
  VF q = hn::Mul(hn::Sub(g.x, g.v), hn::Sub(g.fx, g.fw));
  VF p = hn::Sub(hn::Mul(hn::Sub(g.x, g.v), q), hn::Mul(hn::Sub(g.x, g.w), rr));
  q = hn::Mul(hn::Set(df, 2.0f), hn::Sub(q, rr));
  p = hn::IfThenElse(hn::Gt(q, zero), hn::Neg(p), p);
  q = glmAbs(q);
  const VF before = g.e;
  const VF mid = hn::Mul(hn::Set(df, 0.5f), hn::Add(g.lo, g.hi));
  const MF leftOfMid = hn::Lt(g.x, mid);
  const MF para = hn::And(hn::Lt(glmAbs(p), glmAbs(hn::Mul(hn::Mul(hn::Set(df, 0.5f), q), before))),
                          hn::And(hn::Gt(p, hn::Mul(q, hn::Sub(g.lo, g.x))), hn::Lt(p, hn::Mul(q, hn::Sub(g.hi, g.x)))));
  const VF dPara = hn::Div(p, q);
  const VF uPara = hn::Add(g.x, dPara);
  const MF nearEnd = hn::Or(hn::Lt(hn::Sub(uPara, g.lo), tol2), hn::Lt(hn::Sub(g.hi, uPara), tol2));
  const VF towardMid = hn::IfThenElse(leftOfMid, tol, hn::Neg(tol));
  const VF eGolden = hn::IfThenElse(leftOfMid, hn::Sub(g.hi, g.x), hn::Sub(g.lo, g.x));
  g.e = hn::IfThenElse(para, g.d, eGolden);
  VF d = hn::IfThenElse(para, hn::IfThenElse(nearEnd, towardMid, dPara), hn::Mul(hn::Set(df, 0.38196601f), eGolden));
  d = hn::IfThenElse(hn::Lt(glmAbs(d), tol), hn::IfThenElse(hn::Lt(d, zero), hn::Neg(tol), tol), d);
  g.d = d;
  const VF u = hn::Add(g.x, d);
  const VF fu = rimRimLanes(x, r.base0, curvePoint(g, u), g.use, g.least, g.leastDir);
  const MF better = hn::Le(fu, g.fx);
  const MF uLeft = hn::Lt(u, g.x);
  // fu <= fx: the bracket's side beyond x moves to x, u becomes the best; else the side at u moves to u.
  const VF loB = hn::IfThenElse(uLeft, g.lo, g.x), hiB = hn::IfThenElse(uLeft, g.x, g.hi);
  const VF loW = hn::IfThenElse(uLeft, u, g.lo), hiW = hn::IfThenElse(uLeft, g.hi, u);
  const MF wMove = hn::AndNot(better, hn::Or(hn::Le(fu, g.fw), hn::Eq(g.w, g.x)));
  const MF vMove = hn::AndNot(hn::Or(better, wMove),
                              hn::Or(hn::Le(fu, g.fv), hn::Or(hn::Eq(g.v, g.x), hn::Eq(g.v, g.w))));
  const MF shift = hn::Or(better, wMove);  // v takes w's place
  g.lo = hn::IfThenElse(better, loB, loW);
  g.hi = hn::IfThenElse(better, hiB, hiW);
  g.v = hn::IfThenElse(shift, g.w, hn::IfThenElse(vMove, u, g.v));
  g.fv = hn::IfThenElse(shift, g.fw, hn::IfThenElse(vMove, fu, g.fv));
  g.w = hn::IfThenElse(better, g.x, hn::IfThenElse(wMove, u, g.w));
  g.fw = hn::IfThenElse(better, g.fx, hn::IfThenElse(wMove, fu, g.fw));
  g.x = hn::IfThenElse(better, u, g.x);
  g.fx = hn::IfThenElse(better, fu, g.fx);
}

// least and leastDir lowered by a refinement's own (strictly: the scalar code's order).
HWY_INLINE void mergeLeast(const Refine& g, VF& least, V3& leastDir) {
  const MF lower = hn::Lt(g.least, least);
  least = hn::IfThenElse(lower, g.least, least);
  leastDir = select(lower, g.leastDir, leastDir);
}

// The searched circle's rim `rim` (0: +h0, 1: -h0) of a lane batch.
HWY_INLINE RimSearch rimStart(const CcLanes& x, uint32_t rim) {
  const DF df;
  RimSearch r;
  r.base0 = sub(x.d, mul(x.a0, hn::Mul(hn::Set(df, rim == 0u ? 1.0f : -1.0f), x.h0)));
  const VF zero = hn::Zero(df);
  const VF none = hn::Set(df, static_cast<float>(gpu::kGeomRimSamples));
  r.first = r.second = r.prev = r.cur = zero;
  r.low1 = r.low2 = hn::Set(df, 3.0e38f);
  r.k1 = r.k2 = none;
  r.m1 = r.p1 = r.m2 = r.p2 = zero;
  return r;
}

// geomCylinderCylinderCritical's rim + rim search for two lane batches at once (their steps
// interleaved: independent chains).
HWY_INLINE void rimRimBatches(const CcLanes (&x)[2], const RimTable& table, VF (&least)[2], V3 (&leastDir)[2]) {
  for (uint32_t rim = 0; rim < 2u; ++rim) {
    RimSearch r[2] = {rimStart(x[0], rim), rimStart(x[1], rim)};
    for (uint32_t k = 0; k <= gpu::kGeomRimSamples + 1u; ++k) {
      sampleStep(x[0], table, k, r[0], least[0], leastDir[0]);
      sampleStep(x[1], table, k, r[1], least[1], leastDir[1]);
    }
    // The two minima of both batches: four independent chains (each with its own least, merged
    // in the scalar order: the first minimum's, then the second's).
    Refine g[4];
    for (uint32_t j = 0; j < 2u; ++j) {
      const RimSearch& rs = r[j];
      refineStart(table, x[j], rs.k1, rs.m1, rs.low1, rs.p1, g[2 * j]);
      refineStart(table, x[j], rs.k2, rs.m2, rs.low2, rs.p2, g[2 * j + 1]);
    }
    for (uint32_t it = 0; it < gpu::kGeomRimSteps; ++it) {
      for (uint32_t c = 0; c < 4u; ++c) refineStep(x[c / 2u], r[c / 2u], g[c]);
    }
    for (uint32_t c = 0; c < 4u; ++c) mergeLeast(g[c], least[c / 2u], leastDir[c / 2u]);
  }
}

// Cylinders in columns (one per query or open pair): unit axis (a query's as given until made unit),
// radius and half height.
template <size_t N>
struct CylinderColumns {
  HWY_ALIGN float a[3][N];
  HWY_ALIGN float r[N];
  HWY_ALIGN float h[N];

  void set(size_t i, const Geometry& g) {
    a[0][i] = g.p1.x;
    a[1][i] = g.p1.y;
    a[2][i] = g.p1.z;
    r[i] = g.p0.w;
    h[i] = g.p1.w;
  }
  template <size_t M>
  void copy(size_t i, const CylinderColumns<M>& from, size_t j) {
    for (int c = 0; c < 3; ++c) a[c][i] = from.a[c][j];
    r[i] = from.r[j];
    h[i] = from.h[j];
  }
};

// Per chunk: each query's kind (0: apart, 1: a contact of depth `least` along `dir`, 2: the scalar
// code, 3: open), whether it is swapped (geomSwapped), its pair in geomMakeConvex's frames (padded by
// a lane batch) and s's support point along dir; the open queries (chunk-local index) and their
// pairs' data in lanes' order.
struct CcWork {
  static constexpr size_t kQuery = kCcChunk + kLaneMax;
  HWY_ALIGN float least[kQuery];
  HWY_ALIGN float dir[3][kQuery];
  HWY_ALIGN uint32_t lanesKind[kQuery];
  uint8_t kind[kCcChunk];
  bool swapped[kCcChunk];
  // Per query: s's and t's centre, axis (as given, then unit), radius and half height; d; s's
  // support point along dir.
  HWY_ALIGN float qsc[3][kQuery];
  HWY_ALIGN float qtc[3][kQuery];
  CylinderColumns<kQuery> qs, qt;
  HWY_ALIGN float qd[3][kQuery];
  HWY_ALIGN float ps[3][kQuery];
  // The open queries, padded to two lane batches past the last.
  static constexpr size_t kOpen = kCcChunk + 2 * kLaneMax;
  HWY_ALIGN uint32_t open[kOpen];
  HWY_ALIGN float d[3][kOpen];
  CylinderColumns<kOpen> s, t;
  HWY_ALIGN float oLeast[kOpen];
  HWY_ALIGN float oDir[3][kOpen];
  EllipseTasks<4> ellipse;
};

template <size_t N>
HWY_INLINE V3 load3(const float (&v)[3][N], size_t i) {
  const DF df;
  return V3{hn::Load(df, v[0] + i), hn::Load(df, v[1] + i), hn::Load(df, v[2] + i)};
}

template <size_t N>
HWY_INLINE void store3(const V3& v, float (&out)[3][N], size_t i) {
  const DF df;
  hn::Store(v.x, df, out[0] + i);
  hn::Store(v.y, df, out[1] + i);
  hn::Store(v.z, df, out[2] + i);
}

// The open pairs [i, i + Lanes) in lanes: the searched circle is s's where r_s <= r_t.
HWY_INLINE CcLanes loadLanes(const CcWork& w, size_t i) {
  const DF df;
  CcLanes x;
  x.d = load3(w.d, i);
  x.sa = load3(w.s.a, i);
  x.sr = hn::Load(df, w.s.r + i);
  x.sh = hn::Load(df, w.s.h + i);
  x.ta = load3(w.t.a, i);
  x.tr = hn::Load(df, w.t.r + i);
  x.th = hn::Load(df, w.t.h + i);
  const MF sSearched = hn::Le(x.sr, x.tr);
  x.a0 = select(sSearched, x.sa, x.ta);
  x.a1 = select(sSearched, x.ta, x.sa);
  x.r0 = hn::IfThenElse(sSearched, x.sr, x.tr);
  x.h0 = hn::IfThenElse(sSearched, x.sh, x.th);
  x.e1 = perpendicularLanes(x.a0);
  x.e2 = cross(x.a0, x.e1);
  return x;
}

HWY_INLINE void putVec(float (&out)[3][CcWork::kQuery], size_t i, const Float4& v) {
  out[0][i] = v.x;
  out[1][i] = v.y;
  out[2][i] = v.z;
}

// geomConvexSearchDeepest between the candidates (least, leastDir) and geomCylinderCylinderCritical's
// pieces: kind 0 (apart: least <= 0), 1 (the inscribed boxes prove least: the contact), 2 (axes
// within kGeomCritParallel of parallel: the scalar code's GJK and EPA) or 3 (open: the pieces decide).
HWY_INLINE VU afterCandidatesLanes(const CcLanes& x, VF least, const V3& leastDir) {
  const DF df;
  const DU du;
  const VF zero = hn::Zero(df);
  // geomConvexScale of each: the largest of its sizes (a cylinder's third is 0).
  const VF scaleS = glmMax(glmMax(x.sr, x.sh), zero);
  const VF scaleT = glmMax(glmMax(x.tr, x.th), zero);
  const VF reach = hn::Sub(least, hn::Mul(hn::Set(df, gpu::kGeomEpaBoundTolerance), hn::Add(scaleS, scaleT)));
  V3 A[3], B[3];
  V3 aSize, bSize;
  innerBoxLanes(x.sa, x.sr, x.sh, leastDir, x.d, A, aSize);
  innerBoxLanes(x.ta, x.tr, x.th, neg3(leastDir), neg3(x.d), B, bSize);
  const MF proven = boxesReachLanes(A, aSize, B, bSize, x.d, reach);
  const V3 c = cross(x.sa, x.ta);
  const MF parallel = hn::Lt(dot(c, c), hn::Set(df, gpu::kGeomCritParallel * gpu::kGeomCritParallel));
  const VU kind = hn::IfThenElse(hn::RebindMask(du, proven), hn::Set(du, 1u),
                                 hn::IfThenElse(hn::RebindMask(du, parallel), hn::Set(du, 2u), hn::Set(du, 3u)));
  return hn::IfThenElseZero(hn::RebindMask(du, hn::Gt(least, zero)), kind);
}

// geomConvexCandidates of lane batch x (the centres' line, s's axis, t's axis, their unit cross
// product where not nearly parallel). A lane whose least falls to <= 0 is apart (the scalar code
// stops at its first such direction; the later ones only lower the least: the same verdict).
HWY_INLINE void candidatesLanes(const CcLanes& x, VF& least, V3& leastDir) {
  const DF df;
  const VF zero = hn::Zero(df);
  least = hn::Set(df, 3.0e38f);
  leastDir = V3{zero, zero, hn::Set(df, 1.0f)};
  const VF dd = dot(x.d, x.d);
  tryLanes(x, div(x.d, hn::Sqrt(dd)), hn::Gt(dd, zero), least, leastDir);
  const MF all = hn::FirstN(df, hn::Lanes(df));
  tryLanes(x, x.sa, all, least, leastDir);
  tryLanes(x, x.ta, all, least, leastDir);
  // geomAxisCross: the unit cross product, or 0 where |a x b| <= 1e-3.
  const V3 c = cross(x.sa, x.ta);
  const VF len = hn::Sqrt(dot(c, c));
  const V3 cu = selectOrZero(hn::Gt(len, hn::Set(df, 1e-3f)), div(c, len));
  tryLanes(x, cu, hn::Gt(dot(cu, cu), zero), least, leastDir);
}

HWY_INLINE gpu::GeomShape shapeOf(const Geometry& g) {
  gpu::GeomShape s;
  std::memcpy(&s, &g, sizeof s);
  return s;
}

uint64_t CylinderCylinderRun(const GeometryQueryInput& input, size_t begin, size_t end, ContactElement* outA,
                             ContactElement* outB, ContactRange* ranges, uint64_t total, uint64_t capacity) {
  const DF df;
  const DU du;
  const size_t lanes = hn::Lanes(df);
  static thread_local CcWork w;
  static const RimTable table;
  const Geometry* geometries = input.geometries.data();
  for (size_t chunk = begin; chunk < end; chunk += kCcChunk) {
    const size_t count = end - chunk < kCcChunk ? end - chunk : kCcChunk;
    const GeometryQuery* queries = input.queries.data() + chunk;
    // Per query: the canonical order; the pair as given.
    for (size_t i = 0; i < count; ++i) {
      const Geometry& a = geometries[queries[i].a];
      const Geometry& b = geometries[queries[i].b];
      const bool swapped = gpu::geomSwapped(shapeOf(a), shapeOf(b));
      w.swapped[i] = swapped;
      const Geometry& gs = swapped ? b : a;
      const Geometry& gt = swapped ? a : b;
      putVec(w.qsc, i, gs.p0);
      w.qs.set(i, gs);
      putVec(w.qtc, i, gt.p0);
      w.qt.set(i, gt);
    }
    // In lanes: geomMakeConvex's unit axes (geomUnit), the parallel axes (kind 2: the scalar code's
    // closed form), the candidates and the inscribed boxes' bound. (Lanes past the chunk's last
    // query compute on stale values; nothing reads them.)
    for (size_t k = 0; k < count; k += lanes) {
      CcLanes x;
      const V3 sp = load3(w.qs.a, k);
      const V3 tp = load3(w.qt.a, k);
      x.sa = div(sp, hn::Sqrt(dot(sp, sp)));
      x.ta = div(tp, hn::Sqrt(dot(tp, tp)));
      x.d = sub(load3(w.qtc, k), load3(w.qsc, k));
      x.sr = hn::Load(df, w.qs.r + k);
      x.sh = hn::Load(df, w.qs.h + k);
      x.tr = hn::Load(df, w.qt.r + k);
      x.th = hn::Load(df, w.qt.h + k);
      store3(x.sa, w.qs.a, k);
      store3(x.ta, w.qt.a, k);
      store3(x.d, w.qd, k);
      VF least;
      V3 leastDir;
      candidatesLanes(x, least, leastDir);
      const V3 c = cross(x.sa, x.ta);
      const MF parallel = hn::Le(dot(c, c), hn::Set(df, gpu::kGeomCylinderParallel * gpu::kGeomCylinderParallel));
      hn::Store(hn::IfThenElse(hn::RebindMask(du, parallel), hn::Set(du, 2u), afterCandidatesLanes(x, least, leastDir)),
                du, w.lanesKind + k);
      hn::Store(least, df, w.least + k);
      store3(leastDir, w.dir, k);
    }
    // The queries' kinds; the open ones compacted.
    size_t open = 0;
    for (size_t i = 0; i < count; ++i) {
      w.kind[i] = static_cast<uint8_t>(w.lanesKind[i]);
      if (w.kind[i] != 3u) continue;
      w.open[open] = static_cast<uint32_t>(i);
      for (int c = 0; c < 3; ++c) {
        w.d[c][open] = w.qd[c][i];
        w.oDir[c][open] = w.dir[c][i];
      }
      w.s.copy(open, w.qs, i);
      w.t.copy(open, w.qt, i);
      w.oLeast[open] = w.least[i];
      ++open;
    }
    // Padding lanes: a copy of the first open pair (their results are not read).
    for (size_t k = open; k < open + 2 * lanes && open != 0; ++k) {
      for (int c = 0; c < 3; ++c) {
        w.d[c][k] = w.d[c][0];
        w.oDir[c][k] = w.oDir[c][0];
      }
      w.s.copy(k, w.s, 0);
      w.t.copy(k, w.t, 0);
      w.oLeast[k] = w.oLeast[0];
    }
    // The side + rim pieces, then the rim + rim search, two lane batches at a time.
    for (size_t i = 0; i < open; i += 2 * lanes) {
      const CcLanes x[2] = {loadLanes(w, i), loadLanes(w, i + lanes)};
      VF least[2] = {hn::Load(df, w.oLeast + i), hn::Load(df, w.oLeast + i + lanes)};
      V3 leastDir[2] = {load3(w.oDir, i), load3(w.oDir, i + lanes)};
      const size_t valid0 = open - i < lanes ? open - i : lanes;
      const size_t valid1 = open - i > lanes ? (open - i - lanes < lanes ? open - i - lanes : lanes) : 0;
      sideRimBatches(x, valid0, valid1, least, leastDir, w.ellipse);
      rimRimBatches(x, table, least, leastDir);
      hn::Store(least[0], df, w.oLeast + i);
      hn::Store(least[1], df, w.oLeast + i + lanes);
      store3(leastDir[0], w.oDir, i);
      store3(leastDir[1], w.oDir, i + lanes);
    }
    for (size_t k = 0; k < open; ++k) {
      const uint32_t i = w.open[k];
      w.kind[i] = w.oLeast[k] > 0.0f ? 1u : 0u;
      w.least[i] = w.oLeast[k];
      for (int c = 0; c < 3; ++c) w.dir[c][i] = w.oDir[c][k];
    }
    // s's support point along dir in lanes (read for the contacts: kind 1).
    for (size_t k = 0; k < count; k += lanes) {
      store3(cylinderSupportPointLanes(load3(w.qsc, k), load3(w.qs.a, k), hn::Load(df, w.qs.r + k), hn::Load(df, w.qs.h + k),
                               load3(w.dir, k)),
             w.ps, k);
    }
    // The chunk's queries in order.
    for (size_t i = 0; i < count; ++i) {
      const uint32_t query = static_cast<uint32_t>(chunk + i);
      const uint64_t first = total;
      const GeometryQuery& q = queries[i];
      const gpu::vec3 pS(w.ps[0][i], w.ps[1][i], w.ps[2][i]);
      const gpu::vec3 u(w.dir[0][i], w.dir[1][i], w.dir[2][i]);
      // A contact of axes within 1.5 kGeomCylinderFlatSine of parallel or perpendicular may rest (kind
      // 3: geomCylinderCylinderPatch decides; the margin covers the lanes' rounding of the axes).
      uint32_t kind = w.kind[i];
      if (kind == 1u) {
        const gpu::vec3 as(w.qs.a[0][i], w.qs.a[1][i], w.qs.a[2][i]);
        const gpu::vec3 at(w.qt.a[0][i], w.qt.a[1][i], w.qt.a[2][i]);
        const gpu::vec3 c = glm::cross(as, at);
        const float sine = 1.5f * gpu::kGeomCylinderFlatSine;
        if (std::abs(glm::dot(as, at)) <= sine || glm::dot(c, c) <= sine * sine) kind = 3u;
      }
      total = writeQueryContacts(kind, pS, w.least[i], u, w.swapped[i], geometries[q.a], geometries[q.b],
                                 query, outA, outB, total, capacity);
      ranges[query] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
    }
  }
  return total;
}

}  // namespace
}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vkc::cpu {
HWY_EXPORT(CylinderCylinderRun);

uint64_t cylinderCylinderPairsSimd(const GeometryQueryInput& input, size_t begin, size_t end, ContactElement* outA,
                                   ContactElement* outB, ContactRange* ranges, uint64_t total, uint64_t capacity) {
  return HWY_DYNAMIC_DISPATCH(CylinderCylinderRun)(input, begin, end, outA, outB, ranges, total, capacity);
}
}  // namespace vkc::cpu
#endif
#endif  // VKC_HAVE_SIMD
