// Highway SIMD twin of the cylinder-box queries (shaders/shared/geometry_queries_math.h,
// geomConvexSearchDeepest with a cylinder s and an oriented box t), with the lanes across queries.
// Compiled once per target and chosen at run time.
//
// A chunk of queries at a time, in passes, each on the lanes the one before left open, compacted
// into full lane batches. First: the shapes' frames (geomMakeConvex) and geomConvexCandidates'
// directions (the centres' line, the axis, the box's axes and the axis' cross products with them);
// a lane whose least overlap is <= 0 is apart (the scalar code stops at its first such direction;
// the later ones only lower the least, so the verdict is the same). Second, on the touching lanes:
// the inscribed boxes' bound (geomBoxesDepthReaches of geomCylinderInnerBox); the lanes whose box
// has an edge within kGeomCritParallel of the axis (GJK and EPA there) are marked for the scalar
// code. Third, on the lanes the bound does not prove: geomCylinderBoxCritical's enumeration, the
// box's 8 vertices against the side and the rims, then the 12 edges against the rims, whose ellipse
// problems (geomEllipseNormal) are compacted across pieces and lanes and solved with each lane taking
// the next problem as soon as its own loops end (each step the scalar loops' step), then tried in
// the scalar order. Last, the chunk's queries in order: apart ones no contact, marked ones
// geomQueryContacts one by one, the others the lanes' contact (geomSupportPoint along the
// direction, the depth), from which geomCylinderBoxPatch builds the manifold where the lanes find
// that the cylinder may rest on a face (cylinderBoxMayRestLanes). Every operation is the scalar code's, in
// its order (GLM's dot, cross, min, max, abs; no fused multiply-adds), so the contacts are the scalar twin's
// bit for bit (tests/geometry_queries/geometry_queries_simd_test.cpp: CylinderBoxLanesEqualTheScalarLoop...).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu/geometry_queries.h"
#include "shared/geometry_queries_math.h"

#ifdef VKC_HAVE_SIMD
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/geometry_queries_cylinder_box_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "cpu/simd_vec3.h"
#include "cpu/geometry_queries_cylinder_simd.h"

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE {
namespace {
using namespace cylinder_lanes;  // NOLINT(google-build-using-namespace)

constexpr size_t kCbChunk = 16 * kLaneMax;  // queries per chunk

// One lane batch of cylinder-box pairs in geomMakeConvex's frames: the cylinder's centre c, unit
// axis a, radius r, half height h; the box's centre, rotated axes B and half extents e; d = the box's
// centre less the cylinder's.
struct CylBoxLanes {
  V3 c;
  V3 a;
  VF r;
  VF h;
  V3 bc;
  V3 B[3];
  V3 e;
  V3 d;
};

// geomRotate(q, v) with u = q.xyz and w = q.w: v + t w + cross(u, t), t = cross(u, v) 2.
HWY_INLINE V3 rotateLanes(const V3& u, VF w, const V3& v) {
  const V3 t = mul(cross(u, v), hn::Set(DF(), 2.0f));
  return add(add(v, mul(t, w)), cross(u, t));
}

// geomMakeConvex of the gathered records (Float4 per lane at 4 k): the cylinder's p0, p1, the box's
// p0, p1, p2.
HWY_INLINE CylBoxLanes makeLanes(const float* s0, const float* s1, const float* t0, const float* t1,
                                 const float* t2) {
  const DF df;
  CylBoxLanes x;
  VF w;
  hn::LoadInterleaved4(df, s0, x.c.x, x.c.y, x.c.z, x.r);
  V3 p;
  hn::LoadInterleaved4(df, s1, p.x, p.y, p.z, x.h);
  x.a = div(p, hn::Sqrt(dot(p, p)));
  hn::LoadInterleaved4(df, t0, x.bc.x, x.bc.y, x.bc.z, w);
  V3 q;
  hn::LoadInterleaved4(df, t1, q.x, q.y, q.z, w);
  const VF qq = hn::Add(hn::Add(hn::Add(hn::Mul(q.x, q.x), hn::Mul(q.y, q.y)), hn::Mul(q.z, q.z)), hn::Mul(w, w));
  const VF qLen = hn::Sqrt(qq);
  const V3 u = div(q, qLen);
  const VF uw = hn::Div(w, qLen);
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  x.B[0] = rotateLanes(u, uw, V3{one, zero, zero});
  x.B[1] = rotateLanes(u, uw, V3{zero, one, zero});
  x.B[2] = rotateLanes(u, uw, V3{zero, zero, one});
  hn::LoadInterleaved4(df, t2, x.e.x, x.e.y, x.e.z, w);
  x.d = sub(x.bc, x.c);
  return x;
}

// geomTryCandidate where `use`: u turned towards the box, its overlap (geomOverlapAlong of the
// cylinder and the box) lowering least and leastDir.
HWY_INLINE void tryLanes(const CylBoxLanes& x, const V3& u, MF use, VF& least, V3& leastDir) {
  const DF df;
  const MF flip = hn::Lt(dot(x.d, u), hn::Zero(df));
  const V3 v = select(flip, neg3(u), u);
  const VF gs = cylinderSupportLanes(x.a, x.r, x.h, v);
  const VF gt = hn::Add(hn::Add(hn::Mul(x.e.x, glmAbs(dot(x.B[0], v))), hn::Mul(x.e.y, glmAbs(dot(x.B[1], v)))),
                        hn::Mul(x.e.z, glmAbs(dot(x.B[2], v))));
  const VF f = hn::Sub(hn::Add(gs, gt), dot(x.d, v));
  const MF lower = hn::And(use, hn::Lt(f, least));
  least = hn::IfThenElse(lower, f, least);
  leastDir = select(lower, v, leastDir);
}

// geomConvexCandidates.
HWY_INLINE void candidatesLanes(const CylBoxLanes& x, VF& least, V3& leastDir) {
  const DF df;
  const VF zero = hn::Zero(df);
  least = hn::Set(df, 3.0e38f);
  leastDir = V3{zero, zero, hn::Set(df, 1.0f)};
  const VF dd = dot(x.d, x.d);
  tryLanes(x, div(x.d, hn::Sqrt(dd)), hn::Gt(dd, zero), least, leastDir);
  const MF all = hn::FirstN(df, hn::Lanes(df));
  tryLanes(x, x.a, all, least, leastDir);
  for (int i = 0; i < 3; ++i) {
    tryLanes(x, x.B[i], all, least, leastDir);
    // geomAxisCross: the unit cross product, or 0 where |a x B_i| <= 1e-3.
    const V3 c = cross(x.a, x.B[i]);
    const VF len = hn::Sqrt(dot(c, c));
    const V3 cu = selectOrZero(hn::Gt(len, hn::Set(df, 1e-3f)), div(c, len));
    tryLanes(x, cu, hn::Gt(dot(cu, cu), zero), least, leastDir);
  }
}

// Where a touching lane may rest on a box face (geomCylinderBoxPatch gives more than its deepest
// contact only there): the box axis most along u within 1.5 kGeomCylinderFlatSine of it, and the
// cylinder's axis within that of the axis or across it; or u within that of the cylinder's axis and
// a box axis within it of across (an edge on the cap), or u across the axis and a box axis along it
// (an edge along the wall). The scalar tests' sines with half their size
// again as a margin, so that no lane the scalar code finds flat is left out by rounding; the others go
// to geomCylinderBoxPatch, which decides.
HWY_INLINE MF cylinderBoxMayRestLanes(const CylBoxLanes& x, const V3& u) {
  const DF df;
  const VF sine = hn::Set(df, 1.5f * gpu::kGeomCylinderFlatSine);
  const VF cosSq = hn::Set(df, 1.0f - 2.25f * gpu::kGeomCylinderFlatSine * gpu::kGeomCylinderFlatSine);
  VF best = glmAbs(dot(x.B[0], u));
  VF an = dot(x.a, x.B[0]);
  for (int k = 1; k < 3; ++k) {
    const VF bk = glmAbs(dot(x.B[k], u));
    const MF more = hn::Gt(bk, best);
    best = hn::IfThenElse(more, bk, best);
    an = hn::IfThenElse(more, dot(x.a, x.B[k]), an);
  }
  const MF flat = hn::Ge(hn::Mul(best, best), cosSq);
  const MF rests = hn::And(flat, hn::Or(hn::Ge(hn::Mul(an, an), cosSq), hn::Le(glmAbs(an), sine)));
  // A box's edge on the cap (geomBoxEdgeOnCapPatch): u along the cylinder's axis, a box axis across it.
  const VF au = dot(x.a, u);
  MF across = hn::Le(glmAbs(dot(x.a, x.B[0])), sine);
  for (int k = 1; k < 3; ++k) across = hn::Or(across, hn::Le(glmAbs(dot(x.a, x.B[k])), sine));
  const MF onCap = hn::And(hn::Ge(hn::Mul(au, au), cosSq), across);
  // A box's edge along the wall (geomBoxEdgeOnWallPatch): u across the axis, a box axis along it.
  MF along = hn::Not(hn::FirstN(df, hn::Lanes(df)));
  for (int k = 0; k < 3; ++k) {
    const VF ak = dot(x.a, x.B[k]);
    along = hn::Or(along, hn::Ge(hn::Mul(ak, ak), cosSq));
  }
  return hn::Or(hn::Or(rests, onCap), hn::And(hn::Le(glmAbs(au), sine), along));
}

constexpr size_t kPieces = 24;  // rim + edge pieces: 3 edge directions x 8 sign choices

// geomCylinderBoxCritical's enumeration (after its parallel-edge test) for the lanes `live`. The
// candidates are tried in the scalar code's order; each one's overlap does not depend on the least
// so far, so the rim + edge pieces' normals are solved first (all of them, compacted), then tried in
// order: the same least overlap and direction (the first of the least).
HWY_INLINE void criticalLanes(const CylBoxLanes& x, MF live, VF& least, V3& leastDir, EllipseTasks<kPieces>& et) {
  const DF df;
  const DU du;
  const VF zero = hn::Zero(df);
  const VF one = hn::Set(df, 1.0f);
  const VF minusOne = hn::Set(df, -1.0f);
  const VF fitTol = hn::Set(df, -1e-4f);
  const V3 perp = perpendicularLanes(x.a);
  const VF hs[2] = {x.h, hn::Neg(x.h)};
  // Side + vertex and rim + vertex.
  for (uint32_t vtx = 0; vtx < 8u; ++vtx) {
    const float sx = (vtx & 1u) != 0u ? -1.0f : 1.0f;
    const float sy = (vtx & 2u) != 0u ? -1.0f : 1.0f;
    const float sz = (vtx & 4u) != 0u ? -1.0f : 1.0f;
    const V3 q = add(add(mul(x.B[0], hn::Mul(hn::Set(df, sx), x.e.x)), mul(x.B[1], hn::Mul(hn::Set(df, sy), x.e.y))),
                     mul(x.B[2], hn::Mul(hn::Set(df, sz), x.e.z)));
    const V3 ev = sub(x.d, q);
    const V3 w = acrossLanes(x.a, ev, dot(x.a, ev));
    const VF lw = hn::Sqrt(dot(w, w));
    const V3 m = select(hn::Gt(lw, zero), div(w, lw), perp);
    for (uint32_t z = 0; z < 3u; ++z) {
      V3 n = m;
      MF use = live;
      if (z > 0u) {
        n = sub(add(add(q, mul(x.a, hs[z - 1u])), mul(m, x.r)), x.d);
        const VF nn = dot(n, n);
        use = hn::And(use, hn::Gt(nn, zero));
        n = div(n, hn::Sqrt(nn));
      }
      // geomCritVertexFits.
      const VF flip = hn::IfThenElse(hn::Lt(dot(n, x.d), zero), minusOne, one);
      const VF fx = hn::Mul(hn::Mul(dot(n, x.B[0]), hn::Set(df, sx)), flip);
      const VF fy = hn::Mul(hn::Mul(dot(n, x.B[1]), hn::Set(df, sy)), flip);
      const VF fz = hn::Mul(hn::Mul(dot(n, x.B[2]), hn::Set(df, sz)), flip);
      use = hn::And(use, hn::Ge(glmMin(glmMin(fx, fy), fz), fitTol));
      tryLanes(x, n, use, least, leastDir);
    }
  }
  // Rim + edge: the pieces' ellipse problems, compacted. Lanes already apart (least <= 0) have none
  // (the scalar code stopped at its first separating direction; the verdict is the same).
  V3 b1[3], e2[3];
  size_t tasks = 0;
  std::memset(et.ok, 0, sizeof et.ok);
  const auto laneIndex = hn::Iota(du, 0u);
  for (int k = 0; k < 3; ++k) {
    const V3& u = x.B[k];
    const VF cu = dot(x.a, u);
    const MF edgeOk = hn::And(hn::And(live, hn::Gt(least, zero)),
                              hn::Not(hn::Lt(glmAbs(cu), hn::Set(df, gpu::kGeomCritThin))));
    const V3 ax = cross(x.a, u);
    const VF sk = hn::Sqrt(dot(ax, ax));
    b1[k] = div(ax, sk);
    e2[k] = div(sub(x.a, mul(u, cu)), sk);
    if (hn::AllFalse(df, edgeOk)) continue;
    const VF ca = glmAbs(cu);
    const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    for (uint32_t vtx = 0; vtx < 8u; ++vtx) {
      const uint32_t piece = static_cast<uint32_t>(k) * 8u + vtx;
      const V3 u1 = mul(x.B[k1], hn::Set(df, (vtx & 1u) != 0u ? -1.0f : 1.0f));
      const V3 u2 = mul(x.B[k2], hn::Set(df, (vtx & 2u) != 0u ? -1.0f : 1.0f));
      const VF zeta = hn::Set(df, (vtx & 4u) != 0u ? -1.0f : 1.0f);
      const VF p1 = dot(u1, x.d), p2 = dot(u2, x.d);
      const MF p1Ge = hn::Ge(p1, zero), p2Ge = hn::Ge(p2, zero);
      const VF ray0x = hn::IfThenElse(p1Ge, one, p2), ray0y = hn::IfThenElse(p1Ge, zero, hn::Neg(p1));
      const VF ray1x = hn::IfThenElse(p2Ge, zero, hn::Neg(p2)), ray1y = hn::IfThenElse(p2Ge, one, p1);
      const VF za0 = hn::Mul(dot(u1, x.a), zeta), za1 = hn::Mul(dot(u2, x.a), zeta);
      const MF faces = hn::Or(hn::Gt(hn::Add(hn::Mul(ray0x, za0), hn::Mul(ray0y, za1)), zero),
                              hn::Gt(hn::Add(hn::Mul(ray1x, za0), hn::Mul(ray1y, za1)), zero));
      const MF use = hn::AndNot(hn::And(hn::Lt(p1, zero), hn::Lt(p2, zero)), hn::And(edgeOk, faces));
      if (hn::AllFalse(df, use)) continue;
      const V3 qe = add(mul(u1, at(x.e, k1)), mul(u2, at(x.e, k2)));
      const V3 p = div(sub(sub(x.d, qe), mul(x.a, hn::Mul(zeta, x.h))), x.r);
      const VF y0 = dot(p, b1[k]);
      const VF y1 = hn::Mul(dot(p, e2[k]), zeta);
      hn::Store(y0, df, et.y0[piece]);
      const VU id = hn::Add(laneIndex, hn::Set(du, piece * static_cast<uint32_t>(kLaneMax)));
      hn::CompressStore(glmAbs(y0), use, df, et.ty0 + tasks);
      hn::CompressStore(y1, use, df, et.ty1 + tasks);
      hn::CompressStore(ca, use, df, et.tc + tasks);
      tasks += hn::CompressStore(id, hn::RebindMask(du, use), du, et.tid + tasks);
    }
  }
  solveEllipses(et, tasks);
  // Their candidates in the scalar code's order.
  for (uint32_t piece = 0; piece < kPieces; ++piece) {
    const MF use = hn::RebindMask(df, hn::Ne(hn::Load(du, et.ok + piece * kLaneMax), hn::Zero(du)));
    if (hn::AllFalse(df, use)) continue;
    const uint32_t k = piece / 8u;
    const VF zeta = hn::Set(df, (piece & 4u) != 0u ? -1.0f : 1.0f);
    const VF n0 = hn::Load(df, et.n0 + piece * kLaneMax);
    const VF n1 = hn::Load(df, et.n1 + piece * kLaneMax);
    const VF sx = hn::IfThenElse(hn::Lt(hn::Load(df, et.y0[piece]), zero), hn::Neg(n0), n0);
    const V3 n = add(mul(b1[k], sx), mul(e2[k], hn::Mul(zeta, n1)));
    tryLanes(x, n, use, least, leastDir);
  }
}

// Per chunk: the gathered records of a lane batch; the touching queries (chunk-local index, least
// overlap, its direction) and their results (kind 0: apart, 1: the lanes' contact, 3: the same where
// the cylinder may rest on a face, 2: the scalar code; the point of s, the depth, the direction); the
// touching ones the inscribed boxes do not prove (their touching slot, least overlap and direction); the
// ellipse problems.
struct CylBoxChunk {
  HWY_ALIGN float s0[4 * kLaneMax];
  HWY_ALIGN float s1[4 * kLaneMax];
  HWY_ALIGN float t0[4 * kLaneMax];
  HWY_ALIGN float t1[4 * kLaneMax];
  HWY_ALIGN float t2[4 * kLaneMax];
  HWY_ALIGN uint32_t index[kCbChunk + kLaneMax];
  HWY_ALIGN float least[kCbChunk + kLaneMax];
  HWY_ALIGN float dir[3][kCbChunk + kLaneMax];
  HWY_ALIGN float point[3][kCbChunk + kLaneMax];
  HWY_ALIGN float direction[3][kCbChunk + kLaneMax];
  HWY_ALIGN float depth[kCbChunk + kLaneMax];
  HWY_ALIGN uint32_t kind[kCbChunk + kLaneMax];
  HWY_ALIGN uint32_t open[kCbChunk + kLaneMax];
  HWY_ALIGN float openLeast[kCbChunk + kLaneMax];
  HWY_ALIGN float openDir[3][kCbChunk + kLaneMax];
  EllipseTasks<kPieces> ellipse;
  bool swapped[kCbChunk];
};

HWY_INLINE void gatherLane(const Geometry& s, const Geometry& t, size_t k, CylBoxChunk& w) {
  std::memcpy(w.s0 + 4 * k, &s.p0, sizeof(Float4));
  std::memcpy(w.s1 + 4 * k, &s.p1, sizeof(Float4));
  std::memcpy(w.t0 + 4 * k, &t.p0, sizeof(Float4));
  std::memcpy(w.t1 + 4 * k, &t.p1, sizeof(Float4));
  std::memcpy(w.t2 + 4 * k, &t.p2, sizeof(Float4));
}

HWY_INLINE const Geometry& pick(bool second, const Geometry& a, const Geometry& b) { return second ? b : a; }

// Gathers the chunk's queries at chunk-local indices local[0, valid) (swapped: w.swapped).
HWY_INLINE CylBoxLanes gatherLanes(const Geometry* geometries, const GeometryQuery* queries, const uint32_t* local,
                                   size_t valid, CylBoxChunk& w) {
  for (size_t k = 0; k < valid; ++k) {
    const GeometryQuery& q = queries[local[k]];
    const Geometry& a = geometries[q.a];
    const Geometry& b = geometries[q.b];
    gatherLane(pick(w.swapped[local[k]], a, b), pick(w.swapped[local[k]], b, a), k, w);
  }
  return makeLanes(w.s0, w.s1, w.t0, w.t1, w.t2);
}

uint64_t CylinderBoxRun(const GeometryQueryInput& input, size_t begin, size_t end, ContactElement* outA,
                        ContactElement* outB, ContactRange* ranges, uint64_t total, uint64_t capacity) {
  const DF df;
  const DU du;
  const size_t lanes = hn::Lanes(df);
  const VF zero = hn::Zero(df);
  static thread_local CylBoxChunk w;
  std::memset(w.s0, 0, sizeof w.s0);
  std::memset(w.s1, 0, sizeof w.s1);
  std::memset(w.t0, 0, sizeof w.t0);
  std::memset(w.t1, 0, sizeof w.t1);
  std::memset(w.t2, 0, sizeof w.t2);
  const Geometry* geometries = input.geometries.data();
  const float tolerance = gpu::kGeomEpaBoundTolerance;
  HWY_ALIGN float px[kLaneMax], py[kLaneMax], pz[kLaneMax];
  HWY_ALIGN float ux[kLaneMax], uy[kLaneMax], uz[kLaneMax], dl[kLaneMax];
  HWY_ALIGN uint32_t kinds[kLaneMax];
  for (size_t chunk = begin; chunk < end; chunk += kCbChunk) {
    const size_t count = end - chunk < kCbChunk ? end - chunk : kCbChunk;
    const GeometryQuery* queries = input.queries.data() + chunk;
    // First pass: the candidates; the touching lanes compacted.
    size_t touching = 0;
    for (size_t i = 0; i < count; i += lanes) {
      const size_t valid = count - i < lanes ? count - i : lanes;
      for (size_t k = 0; k < valid; ++k) {
        const GeometryQuery& q = queries[i + k];
        const Geometry& a = geometries[q.a];
        const Geometry& b = geometries[q.b];
        const bool swapped = a.type != GeometryType::kCylinder;
        w.swapped[i + k] = swapped;
        gatherLane(pick(swapped, a, b), pick(swapped, b, a), k, w);
      }
      const CylBoxLanes x = makeLanes(w.s0, w.s1, w.t0, w.t1, w.t2);
      VF least;
      V3 leastDir;
      candidatesLanes(x, least, leastDir);
      const MF keep = hn::And(hn::FirstN(df, valid), hn::Gt(least, zero));
      const auto index = hn::Iota(du, static_cast<uint32_t>(i));
      hn::CompressStore(index, hn::RebindMask(du, keep), du, w.index + touching);
      hn::CompressStore(least, keep, df, w.least + touching);
      hn::CompressStore(leastDir.x, keep, df, w.dir[0] + touching);
      hn::CompressStore(leastDir.y, keep, df, w.dir[1] + touching);
      touching += hn::CompressStore(leastDir.z, keep, df, w.dir[2] + touching);
    }
    // Second pass: the inscribed boxes' bound; the lanes it does not prove (and that GJK and EPA do not
    // answer) compacted.
    size_t open = 0;
    for (size_t i = 0; i < touching; i += lanes) {
      const size_t valid = touching - i < lanes ? touching - i : lanes;
      const CylBoxLanes x = gatherLanes(geometries, queries, w.index + i, valid, w);
      const VF least = hn::LoadU(df, w.least + i);
      const V3 leastDir{hn::LoadU(df, w.dir[0] + i), hn::LoadU(df, w.dir[1] + i), hn::LoadU(df, w.dir[2] + i)};
      // geomConvexScale of each: the largest of its sizes (a cylinder's third is 0).
      const VF scaleS = glmMax(glmMax(x.r, x.h), zero);
      const VF scaleT = glmMax(glmMax(x.e.x, x.e.y), x.e.z);
      const VF reach = hn::Sub(least, hn::Mul(hn::Set(df, tolerance), hn::Add(scaleS, scaleT)));
      V3 A[3];
      V3 aSize;
      innerBoxLanes(x.a, x.r, x.h, leastDir, x.d, A, aSize);
      const MF proven = boxesReachLanes(A, aSize, x.B, x.e, x.d, reach);
      // geomCylinderBoxCritical's test: an edge within kGeomCritParallel of the axis goes to GJK/EPA.
      MF parallel = hn::Not(hn::FirstN(df, hn::Lanes(df)));
      const VF parallelSq = hn::Set(df, gpu::kGeomCritParallel * gpu::kGeomCritParallel);
      for (int k = 0; k < 3; ++k) {
        const V3 c = cross(x.a, x.B[k]);
        parallel = hn::Or(parallel, hn::Lt(dot(c, c), parallelSq));
      }
      const MF scalar = hn::AndNot(proven, parallel);
      const MF live = hn::AndNot(parallel, hn::AndNot(proven, hn::FirstN(df, valid)));
      const V3 pS = cylinderSupportPointLanes(x.c, x.a, x.r, x.h, leastDir);
      // Kind 1 the lanes' contact, 3 where it may rest on a face, 2 the scalar code's, 0 none.
      const VU contactKind = hn::IfThenElse(hn::RebindMask(du, cylinderBoxMayRestLanes(x, leastDir)),
                                            hn::Set(du, 3u), hn::Set(du, 1u));
      const VU lanesKind =
          hn::IfThenElse(hn::RebindMask(du, scalar), hn::Set(du, 2u),
                         hn::IfThenElseZero(hn::RebindMask(du, hn::Gt(least, zero)), contactKind));
      hn::StoreU(lanesKind, du, w.kind + i);
      hn::StoreU(least, df, w.depth + i);
      hn::StoreU(pS.x, df, w.point[0] + i);
      hn::StoreU(pS.y, df, w.point[1] + i);
      hn::StoreU(pS.z, df, w.point[2] + i);
      hn::StoreU(leastDir.x, df, w.direction[0] + i);
      hn::StoreU(leastDir.y, df, w.direction[1] + i);
      hn::StoreU(leastDir.z, df, w.direction[2] + i);
      hn::CompressStore(hn::Iota(du, static_cast<uint32_t>(i)), hn::RebindMask(du, live), du, w.open + open);
      hn::CompressStore(least, live, df, w.openLeast + open);
      hn::CompressStore(leastDir.x, live, df, w.openDir[0] + open);
      hn::CompressStore(leastDir.y, live, df, w.openDir[1] + open);
      open += hn::CompressStore(leastDir.z, live, df, w.openDir[2] + open);
    }
    // Third pass: the critical points of the open lanes, their contacts back to their touching slots.
    HWY_ALIGN uint32_t local[kLaneMax];
    for (size_t i = 0; i < open; i += lanes) {
      const size_t valid = open - i < lanes ? open - i : lanes;
      for (size_t k = 0; k < valid; ++k) local[k] = w.index[w.open[i + k]];
      const CylBoxLanes x = gatherLanes(geometries, queries, local, valid, w);
      VF least = hn::LoadU(df, w.openLeast + i);
      V3 leastDir{hn::LoadU(df, w.openDir[0] + i), hn::LoadU(df, w.openDir[1] + i), hn::LoadU(df, w.openDir[2] + i)};
      criticalLanes(x, hn::FirstN(df, valid), least, leastDir, w.ellipse);
      const V3 pS = cylinderSupportPointLanes(x.c, x.a, x.r, x.h, leastDir);
      const VU contactKind = hn::IfThenElse(hn::RebindMask(du, cylinderBoxMayRestLanes(x, leastDir)),
                                            hn::Set(du, 3u), hn::Set(du, 1u));
      hn::Store(hn::IfThenElseZero(hn::RebindMask(du, hn::Gt(least, zero)), contactKind), du, kinds);
      hn::Store(least, df, dl);
      hn::Store(pS.x, df, px);
      hn::Store(pS.y, df, py);
      hn::Store(pS.z, df, pz);
      hn::Store(leastDir.x, df, ux);
      hn::Store(leastDir.y, df, uy);
      hn::Store(leastDir.z, df, uz);
      for (size_t k = 0; k < valid; ++k) {
        const uint32_t slot = w.open[i + k];
        w.kind[slot] = kinds[k];
        w.depth[slot] = dl[k];
        w.point[0][slot] = px[k];
        w.point[1][slot] = py[k];
        w.point[2][slot] = pz[k];
        w.direction[0][slot] = ux[k];
        w.direction[1][slot] = uy[k];
        w.direction[2][slot] = uz[k];
      }
    }
    // Last: the chunk's queries in order.
    size_t next = 0;
    for (size_t i = 0; i < count; ++i) {
      const uint32_t query = static_cast<uint32_t>(chunk + i);
      const uint64_t first = total;
      uint32_t kind = 0u;
      size_t slot = 0;
      if (next < touching && w.index[next] == i) {
        slot = next++;
        kind = w.kind[slot];
      }
      const GeometryQuery& q = queries[i];
      const gpu::vec3 pS(w.point[0][slot], w.point[1][slot], w.point[2][slot]);
      const gpu::vec3 u(w.direction[0][slot], w.direction[1][slot], w.direction[2][slot]);
      total = writeQueryContacts(kind, pS, w.depth[slot], u, w.swapped[i], geometries[q.a], geometries[q.b],
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
HWY_EXPORT(CylinderBoxRun);

uint64_t cylinderBoxPairsSimd(const GeometryQueryInput& input, size_t begin, size_t end, ContactElement* outA,
                              ContactElement* outB, ContactRange* ranges, uint64_t total, uint64_t capacity) {
  return HWY_DYNAMIC_DISPATCH(CylinderBoxRun)(input, begin, end, outA, outB, ranges, total, capacity);
}
}  // namespace vkc::cpu
#endif
#endif  // VKC_HAVE_SIMD
