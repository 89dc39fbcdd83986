// Lane helpers shared by the cylinder pairs' SIMD twins (geometry_queries_cylinder_box_simd.cpp,
// geometry_queries_cylinder_cylinder_simd.cpp): geomAcross, geomPerpendicularTo, a cylinder's
// support and negation in lanes, and geomEllipseNormal's problems compacted across pieces and lanes
// (each lane taking the next problem as its own loop ends), and a query's contacts written out, with
// the scalar code's operation order. Per-target header (see simd_vec3.h): included after simd_vec3.h,
// once per Highway target, outside its includer's namespaces.
#if defined(VKC_CPU_GEOMETRY_QUERIES_CYLINDER_SIMD_H_) == defined(HWY_TARGET_TOGGLE)  // NOLINT
#ifdef VKC_CPU_GEOMETRY_QUERIES_CYLINDER_SIMD_H_
#undef VKC_CPU_GEOMETRY_QUERIES_CYLINDER_SIMD_H_
#else
#define VKC_CPU_GEOMETRY_QUERIES_CYLINDER_SIMD_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu/geometry_queries.h"
#include "cpu/simd_vec3.h"
#include "shared/geometry_queries_math.h"

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

// geomSupportPoint of a cylinder (centre c, unit axis a, radius r, half height h) along unit u: its
// point farthest along u (the middle of a cap or side line on ties).
HWY_INLINE V3 cylinderSupportPointLanes(const V3& c, const V3& a, VF r, VF h, const V3& u) {
  const DF df;
  const VF zero = hn::Zero(df);
  const VF au = dot(a, u);
  const V3 w = acrossLanes(a, u, au);
  const VF lw = hn::Sqrt(dot(w, w));
  const VF eps = hn::Set(df, gpu::kGeomParallelEps);
  const V3 radial = selectOrZero(hn::Gt(lw, eps), mul(div(w, lw), r));
  // geomSignOrZero(au): 0 where |au| <= eps, else its sign.
  const VF sign = hn::IfThenElse(hn::Le(glmAbs(au), eps), zero,
                                 hn::IfThenElse(hn::Gt(au, zero), hn::Set(df, 1.0f), hn::Set(df, -1.0f)));
  return add(add(c, mul(a, hn::Mul(h, sign))), radial);
}

HWY_INLINE VF at(const V3& v, int i) { return i == 0 ? v.x : (i == 1 ? v.y : v.z); }

// geomCylinderInnerBox of the cylinder (unit axis a, radius r, half height h) for the direction u and
// the centres' line d: the box's axes A and half extents aSize (its centre the cylinder's).
HWY_INLINE void innerBoxLanes(const V3& a, VF r, VF h, const V3& u, const V3& d, V3 (&A)[3], V3& aSize) {
  const DF df;
  // The inscribed box: axis a, and two axes at 45 degrees to the radial direction w of u (of
  // d where u is nearly along the axis).
  const V3 w0 = acrossLanes(a, u, dot(a, u));
  const VF ww0 = dot(w0, w0);
  const MF useD = hn::Not(hn::Gt(ww0, hn::Set(df, 1e-6f)));
  const V3 wd = acrossLanes(a, d, dot(a, d));
  const V3 w1 = select(useD, wd, w0);
  const VF ww = hn::IfThenElse(useD, dot(wd, wd), ww0);
  const V3 w = select(hn::Gt(ww, hn::Set(df, 1e-12f)), div(w1, hn::Sqrt(ww)), perpendicularLanes(a));
  const V3 v = cross(a, w);
  const VF half = hn::Set(df, 0.70710678f);
  A[0] = a;
  A[1] = mul(add(w, v), half);
  A[2] = mul(sub(w, v), half);
  const VF eIn = hn::Mul(r, hn::Set(df, 0.7071061f));
  aSize = V3{h, eIn, eIn};
}

// geomBoxesDepthReaches of box A (axes A, half extents aSize) and box B (axes B, half extents e), d =
// B's centre less A's.
HWY_INLINE MF boxesReachLanes(const V3 (&A)[3], const V3& aSize, const V3 (&B)[3], const V3& e, const V3& d,
                              VF reach) {
  const DF df;
  const VF zero = hn::Zero(df);
  // Separating-axis overlaps in A's frame.
  const V3 t{dot(d, A[0]), dot(d, A[1]), dot(d, A[2])};
  V3 R[3];
  V3 Q[3];
  for (int i = 0; i < 3; ++i) {
    R[i] = V3{dot(A[i], B[0]), dot(A[i], B[1]), dot(A[i], B[2])};
    Q[i] = V3{glmAbs(R[i].x), glmAbs(R[i].y), glmAbs(R[i].z)};
  }
  MF fail = hn::Not(hn::Gt(reach, zero));
  for (int i = 0; i < 3; ++i) {
    fail = hn::Or(fail, hn::Lt(hn::Sub(hn::Add(at(aSize, i), dot(e, Q[i])), glmAbs(at(t, i))), reach));
  }
  for (int j = 0; j < 3; ++j) {
    const VF ra = hn::Add(hn::Add(hn::Mul(aSize.x, at(Q[0], j)), hn::Mul(aSize.y, at(Q[1], j))),
                          hn::Mul(aSize.z, at(Q[2], j)));
    fail = hn::Or(fail, hn::Lt(hn::Sub(hn::Add(ra, at(e, j)), glmAbs(dot(d, B[j]))), reach));
  }
  const VF thin = hn::Set(df, 1e-4f);
  for (int i = 0; i < 3; ++i) {
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) {
      const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      const V3 c = cross(A[i], B[j]);
      const VF cc = dot(c, c);
      const MF facet = hn::Not(hn::Eq(cc, zero));
      const VF ra = hn::Add(hn::Mul(at(aSize, i1), at(Q[i2], j)), hn::Mul(at(aSize, i2), at(Q[i1], j)));
      const VF rb = hn::Add(hn::Mul(at(e, j1), at(Q[i], j2)), hn::Mul(at(e, j2), at(Q[i], j1)));
      const VF sep = glmAbs(hn::Sub(hn::Mul(at(t, i2), at(R[i1], j)), hn::Mul(at(t, i1), at(R[i2], j))));
      const MF short_ = hn::Or(hn::Lt(cc, thin), hn::Lt(hn::Sub(hn::Add(ra, rb), sep), hn::Mul(reach, hn::Sqrt(cc))));
      fail = hn::Or(fail, hn::And(facet, short_));
    }
  }
  return hn::Not(fail);
}


constexpr size_t kLaneMax = HWY_MAX_BYTES / sizeof(float);

// The ellipse problems of a lane batch (geomEllipseNormal), compacted across pieces and lanes: per
// piece (cylinder-box: a rim + edge piece, edge k and signs vtx; cylinder-cylinder: a side + rim)
// and lane the signed y0 (the normal's side along b1); per task (a piece and lane that passes the
// pruning) |y0|, y1, c (|a . u_k|, |a . b|) and its piece * kLaneMax + lane; the tasks' state (r0 = 1 / c^2, a0 = r0 z0, z1, the bracket lo, hi,
// the phase: 0 the far half's bisection, 1 Newton's method, 2 none: outside the evolute) and result
// (the root s, whether it was reached); the tasks to run (not phase 2); per piece and lane the
// normal and whether there is one.
template <size_t kPieces>
struct EllipseTasks {
  static constexpr size_t kTaskSlots = (kPieces + 1) * kLaneMax;
  HWY_ALIGN float y0[kPieces][kLaneMax];
  HWY_ALIGN float ty0[kTaskSlots];
  HWY_ALIGN float ty1[kTaskSlots];
  HWY_ALIGN float tc[kTaskSlots];
  HWY_ALIGN uint32_t tid[kTaskSlots];
  HWY_ALIGN float r0[kTaskSlots];
  HWY_ALIGN float a0[kTaskSlots];
  HWY_ALIGN float z1[kTaskSlots];
  HWY_ALIGN float lo[kTaskSlots];
  HWY_ALIGN float hi[kTaskSlots];
  HWY_ALIGN float phase[kTaskSlots];
  HWY_ALIGN float s[kTaskSlots];
  HWY_ALIGN uint32_t found[kTaskSlots];
  HWY_ALIGN uint32_t work[kTaskSlots];
  HWY_ALIGN float n0[kPieces * kLaneMax];
  HWY_ALIGN float n1[kPieces * kLaneMax];
  HWY_ALIGN uint32_t ok[kPieces * kLaneMax];
};

// geomEllipseNormal's set-up of tasks [t, t + Lanes): r0, z0, z1 (clamped on the near half), a0, the
// bracket (the near half: [z1 - 1, hi]; the far half: [-r0, -1]) and the phase.
template <class Tasks>
HWY_INLINE void ellipseSetUp(Tasks& et, size_t t) {
  const DF df;
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  const VF c = hn::Load(df, et.tc + t);
  const VF r0 = hn::Div(one, hn::Mul(c, c));
  const VF z0 = glmMax(hn::Load(df, et.ty0 + t), hn::Set(df, 1e-20f));
  const VF z1In = hn::Div(hn::Load(df, et.ty1 + t), c);
  const VF a0 = hn::Mul(r0, z0);
  const MF near = hn::Ge(z1In, zero);
  const VF z1n = glmMax(z1In, hn::Set(df, 1e-20f));
  const VF g = hn::Sub(hn::Add(hn::Mul(z0, z0), hn::Mul(z1n, z1n)), one);
  const VF hiNear =
      hn::IfThenElse(hn::Lt(g, zero), zero, hn::Sub(hn::Sqrt(hn::Add(hn::Mul(a0, a0), hn::Mul(z1n, z1n))), one));
  // The far half's two stationary points lie inside the evolute only.
  const VF e = hn::Sub(one, hn::Mul(c, c));
  const MF inside = hn::And(hn::Lt(z0, e), hn::Lt(hn::Neg(z1In), hn::Mul(e, r0)));
  const VF lo = hn::IfThenElse(near, hn::Sub(z1n, one), hn::Neg(r0));
  hn::Store(r0, df, et.r0 + t);
  hn::Store(a0, df, et.a0 + t);
  hn::Store(hn::IfThenElse(near, z1n, z1In), df, et.z1 + t);
  hn::Store(lo, df, et.lo + t);
  hn::Store(hn::IfThenElse(near, hiNear, hn::Set(df, -1.0f)), df, et.hi + t);
  hn::Store(hn::IfThenElse(near, one, hn::IfThenElse(inside, zero, hn::Set(df, 2.0f))), df, et.phase + t);
  hn::Store(lo, df, et.s + t);
}

// A lane batch of ellipse problems in flight: each lane's task and state (phase 3: no task).
constexpr uint32_t kNoTask = 0xFFFFFFFFu;
struct RootLanes {
  HWY_ALIGN uint32_t task[kLaneMax];
  HWY_ALIGN float s[kLaneMax], lo[kLaneMax], hi[kLaneMax], r0[kLaneMax], a0[kLaneMax],
      z1[kLaneMax], phase[kLaneMax], itB[kLaneMax], itN[kLaneMax];
  size_t running;
};

// Gives lane j the next task of et.work[next, count), or none (phase 3) when there is none left.
template <class Tasks>
HWY_INLINE void takeTask(RootLanes& m, size_t j, const Tasks& et, size_t& next, size_t count) {
  if (next == count) {
    m.task[j] = kNoTask;
    m.phase[j] = 3.0f;
    --m.running;
    return;
  }
  const uint32_t t = et.work[next++];
  m.task[j] = t;
  m.s[j] = et.s[t];
  m.lo[j] = et.lo[t];
  m.hi[j] = et.hi[t];
  m.r0[j] = et.r0[t];
  m.a0[j] = et.a0[t];
  m.z1[j] = et.z1[t];
  m.phase[j] = et.phase[t];
  m.itB[j] = 0.0f;
  m.itN[j] = 0.0f;
}

// One step of every lane with a task: a bisection step (phase 0) or a Newton step (phase 1), each the
// scalar code's; the lanes whose loops end write their root (et.s) and whether it was reached
// (et.found) and take the next task.
template <class Tasks>
HWY_INLINE void stepRoots(RootLanes& m, Tasks& et, size_t& next, size_t count) {
  const DF df;
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  const VF halfV = hn::Set(df, 0.5f);
  VF s = hn::Load(df, m.s), lo = hn::Load(df, m.lo), hi = hn::Load(df, m.hi);
  const VF r0 = hn::Load(df, m.r0), a0 = hn::Load(df, m.a0), z1 = hn::Load(df, m.z1);
  VF phase = hn::Load(df, m.phase), itB = hn::Load(df, m.itB), itN = hn::Load(df, m.itN);
  const MF bis = hn::Eq(phase, zero);
  const MF newton = hn::Eq(phase, one);
  // One step at s (Newton) or at the bracket's middle (bisection): the same terms.
  const VF sEval = hn::IfThenElse(bis, hn::Mul(halfV, hn::Add(lo, hi)), s);
  const VF p = hn::Add(sEval, r0), q = hn::Add(sEval, one);
  const VF ra = hn::Div(a0, p), rb = hn::Div(z1, q);
  const VF ra2 = hn::Mul(ra, ra), rb2 = hn::Mul(rb, rb);
  const VF rr = hn::Add(ra2, rb2);
  const VF tA = hn::Div(ra2, p), tB = hn::Div(rb2, q);
  // Bisection: g < 0 found, else towards g's least point (rb^2 / -q is -(rb^2 / q) exactly).
  const MF hit = hn::And(bis, hn::Lt(rr, one));
  const MF left = hn::Gt(hn::Sub(hn::Neg(tB), tA), zero);
  itB = hn::IfThenElse(bis, hn::Add(itB, one), itB);
  hi = hn::IfThenElse(hn::And(bis, left), sEval, hi);
  lo = hn::IfThenElse(hn::AndNot(left, bis), sEval, lo);
  const MF bisFail = hn::AndNot(hit, hn::And(bis, hn::Ge(itB, hn::Set(df, static_cast<float>(gpu::kGeomCritSteps)))));
  // Newton: lo or hi moves to s (g decreasing on the near half, increasing on the far one).
  const MF brk = hn::And(newton, hn::Eq(rr, one));
  const MF go = hn::AndNot(brk, newton);
  const MF moveLo = hn::Not(hn::Xor(hn::Gt(rr, one), hn::Ge(z1, zero)));
  lo = hn::IfThenElse(hn::And(go, moveLo), s, lo);
  hi = hn::IfThenElse(hn::AndNot(moveLo, go), s, hi);
  const VF big = hn::Sqrt(rr);
  VF nextS = hn::Add(s, hn::Div(hn::Sub(hn::Mul(rr, big), rr), hn::Add(tA, tB)));
  nextS = hn::IfThenElse(hn::And(hn::Ge(nextS, lo), hn::Le(nextS, hi)), nextS, hn::Mul(halfV, hn::Add(lo, hi)));
  const MF done = hn::Le(glmAbs(hn::Sub(nextS, s)), hn::Mul(hn::Set(df, 1e-6f), glmMax(one, glmAbs(s))));
  s = hn::IfThenElse(go, nextS, s);
  itN = hn::IfThenElse(go, hn::Add(itN, one), itN);
  const MF newtonEnd = hn::Or(
      brk, hn::And(go, hn::Or(done, hn::Ge(itN, hn::Set(df, static_cast<float>(gpu::kGeomCritNewton))))));
  // A bisection that met g < 0: Newton in [max(s, -1 + z1 / sqrt(1 - ra^2)), -1], from its left end.
  const VF farLo = glmMax(sEval, hn::Add(hn::Set(df, -1.0f), hn::Div(z1, hn::Sqrt(hn::Sub(one, ra2)))));
  s = hn::IfThenElse(hit, farLo, s);
  lo = hn::IfThenElse(hit, farLo, lo);
  hi = hn::IfThenElse(hit, hn::Set(df, -1.0f), hi);
  phase = hn::IfThenElse(hit, one, phase);
  itN = hn::IfThenElse(hit, zero, itN);
  const MF end = hn::Or(newtonEnd, bisFail);
  phase = hn::IfThenElse(end, hn::Set(df, 3.0f), phase);
  hn::Store(s, df, m.s);
  hn::Store(lo, df, m.lo);
  hn::Store(hi, df, m.hi);
  hn::Store(phase, df, m.phase);
  hn::Store(itB, df, m.itB);
  hn::Store(itN, df, m.itN);
  if (hn::AllFalse(df, end)) return;
  uint8_t endBytes[8] = {};
  hn::StoreMaskBits(df, end, endBytes);
  uint8_t reachedBytes[8] = {};
  hn::StoreMaskBits(df, newtonEnd, reachedBytes);
  uint64_t endBits = 0, reachedBits = 0;
  std::memcpy(&endBits, endBytes, sizeof endBits);
  std::memcpy(&reachedBits, reachedBytes, sizeof reachedBits);
  for (; endBits != 0u; endBits &= endBits - 1u) {
    const size_t j = hwy::Num0BitsBelowLS1Bit_Nonzero64(endBits);
    et.s[m.task[j]] = m.s[j];
    et.found[m.task[j]] = static_cast<uint32_t>((reachedBits >> j) & 1u);
    takeTask(m, j, et, next, count);
  }
}

// geomEllipseNormal's loops for the tasks et.work[0, count), each lane taking the next task as soon
// as its own ends: the far half's bisection on g' until g < 0 (at most kGeomCritSteps steps; none: no
// normal), then Newton's method on 1 / sqrt(g + 1) - 1 in the bracket (at most kGeomCritNewton steps,
// until rr == 1 or a step below 1e-6 of s). Two lane batches in flight, their steps independent:
// each step is a chain of divisions and a square root, which the other's overlaps.
template <class Tasks>
HWY_INLINE void ellipseRoots(Tasks& et, size_t count) {
  const size_t lanes = hn::Lanes(DF());
  RootLanes m[2];
  size_t next = 0;
  for (RootLanes& x : m) {
    x.running = lanes;
    for (size_t j = 0; j < lanes; ++j) {
      x.s[j] = x.lo[j] = x.hi[j] = x.r0[j] = x.a0[j] = x.z1[j] = x.itB[j] = x.itN[j] = 0.0f;
      takeTask(x, j, et, next, count);
    }
  }
  while (m[0].running + m[1].running != 0) {
    if (m[0].running != 0) stepRoots(m[0], et, next, count);
    if (m[1].running != 0) stepRoots(m[1], et, next, count);
  }
}

// geomEllipseNormal's end for tasks [t, t + Lanes): the normal (x0, x1 / c^2) of the point at the
// root, times c^2, normalized; none where the root was not reached or the normal is 0.
template <class Tasks>
HWY_INLINE MF ellipseNormalAt(const Tasks& et, size_t t, VF& n0, VF& n1) {
  const DF df;
  const DU du;
  const VF s = hn::Load(df, et.s + t);
  const VF nx = hn::Div(hn::Load(df, et.ty0 + t), hn::Add(s, hn::Load(df, et.r0 + t)));
  const VF ny = hn::Div(hn::Mul(hn::Load(df, et.tc + t), hn::Load(df, et.z1 + t)), hn::Add(s, hn::Set(df, 1.0f)));
  const VF l2 = hn::Add(hn::Mul(nx, nx), hn::Mul(ny, ny));
  const MF reached = hn::RebindMask(df, hn::Ne(hn::Load(du, et.found + t), hn::Zero(du)));
  const VF len = hn::Sqrt(l2);
  n0 = hn::Div(nx, len);
  n1 = hn::Div(ny, len);
  return hn::And(reached, hn::Gt(l2, hn::Zero(df)));
}

// The ellipse problems et.t*[0, tasks): set up on full lane batches, the roots with each lane taking
// the next task as its own ends, the normals on full lane batches, back to their pieces (n0, n1, ok;
// the caller zeroes ok).
template <class Tasks>
HWY_INLINE void solveEllipses(Tasks& et, size_t tasks) {
  if (tasks == 0) return;
  const DF df;
  const DU du;
  const size_t lanes = hn::Lanes(df);
  size_t work = 0;
  for (size_t t = 0; t < tasks; t += lanes) {
    ellipseSetUp(et, t);
    const MF run = hn::And(hn::FirstN(df, tasks - t), hn::Lt(hn::Load(df, et.phase + t), hn::Set(df, 2.0f)));
    hn::Store(hn::Zero(du), du, et.found + t);
    work += hn::CompressStore(hn::Iota(du, static_cast<uint32_t>(t)), hn::RebindMask(du, run), du, et.work + work);
  }
  ellipseRoots(et, work);
  HWY_ALIGN float n0s[kLaneMax], n1s[kLaneMax];
  HWY_ALIGN uint32_t oks[kLaneMax];
  for (size_t t = 0; t < tasks; t += lanes) {
    const size_t valid = tasks - t < lanes ? tasks - t : lanes;
    VF n0, n1;
    const MF ok = ellipseNormalAt(et, t, n0, n1);
    hn::Store(n0, df, n0s);
    hn::Store(n1, df, n1s);
    hn::Store(hn::VecFromMask(du, hn::RebindMask(du, ok)), du, oks);
    for (size_t j = 0; j < valid; ++j) {
      const uint32_t id = et.tid[t + j];
      et.n0[id] = n0s[j];
      et.n1[id] = n1s[j];
      et.ok[id] = oks[j];
    }
  }
}

// Query `query`'s contacts, written from element `total` (only below capacity): kind 1 the contact
// of depth `depth` along u from s's support point pS (geomConvexSearchDeepest's end; swapped: the
// query's a is t); kind 3 (a pair that may rest on a box face or the other cylinder: the lanes'
// margins) geomConvexRestingContacts from that contact; kind 2 geomQueryContacts of the query's geometries
// (the scalar code), else none. Returns total plus the contacts.
HWY_INLINE uint64_t writeQueryContacts(uint32_t kind, gpu::vec3 pS, float depth, gpu::vec3 u, bool swapped,
                                       const Geometry& a, const Geometry& b, uint32_t query,
                                       ContactElement* outA, ContactElement* outB, uint64_t total,
                                       uint64_t capacity) {
  if (kind == 3u) {
    gpu::GeomShape sa, sb;
    std::memcpy(&sa, &a, sizeof sa);
    std::memcpy(&sb, &b, sizeof sb);
    const gpu::GeomManifold m =
        gpu::geomConvexRestingContacts(swapped ? sb : sa, swapped ? sa : sb, pS, depth, u);
    for (uint32_t c = 0; c < m.count; ++c, ++total) {
      if (total < capacity) {
        outA[total] = toContactElement(swapped ? m.t[c] : m.s[c], query);
        outB[total] = toContactElement(swapped ? m.s[c] : m.t[c], query);
      }
    }
    return total;
  }
  if (kind == 1u) {
    if (total < capacity) {
      gpu::GeomElement es, et;
      gpu::geomConvexElements(pS, depth, u, es, et);
      outA[total] = toContactElement(swapped ? et : es, query);
      outB[total] = toContactElement(swapped ? es : et, query);
    }
    return total + 1u;
  }
  if (kind == 2u) {
    gpu::GeomShape sa, sb;
    std::memcpy(&sa, &a, sizeof sa);
    std::memcpy(&sb, &b, sizeof sb);
    const gpu::GeomManifold m = gpu::geomQueryContacts(sa, sb);
    for (uint32_t c = 0; c < m.count; ++c, ++total) {
      if (total < capacity) {
        outA[total] = toContactElement(m.s[c], query);
        outB[total] = toContactElement(m.t[c], query);
      }
    }
  }
  return total;
}

}  // namespace vkc::cpu::HWY_NAMESPACE::cylinder_lanes
HWY_AFTER_NAMESPACE();

#endif  // VKC_CPU_GEOMETRY_QUERIES_CYLINDER_SIMD_H_
