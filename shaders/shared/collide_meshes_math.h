// Particle vs triangle geometry of the mesh stage, written once: compiled as GLSL (the mesh stage's
// shader, tests/collide_meshes/collide_meshes_check.comp) and as C++ (the CPU twins, the tests).
// Specification: shared/seeds/ucsd-cse169-collision-detection.txt ("the seed") and issue 14. float32,
// no recursion, every loop bounded by a constant; VKC_PRECISE keeps the GPU from contracting a * b + c
// into a fused multiply-add where the CPU (-ffp-contract=off) does not.
//
// Contents (the stage calls these from its BVH traversal, one particle against one triangle):
//   triClosestPoint      closest point, region (vertex / edge / face) and squared distance
//   triProximityPush     discrete push to `thickness`, two-sided or one-sided (NvCloth's rule)
//   segmentTriangle      the seed's segment vs triangle (thickness 0, static), exact crossing test
//   triCcdStatic         continuous: static triangle, particle moving linearly, min separation
//   triCcdDeforming      continuous: each vertex and the particle moving linearly (conservative)
//   rigidSweepPrepare    per rigid mesh and iteration: transforms at 1/16 steps, rotation bound
//   triCcdRigid          continuous: rigid mesh (translation + unit quaternion at start and end)
//   meshBounce*          the seed's response (restitution, Coulomb friction) and the bounce loop
#ifndef VKC_SHARED_COLLIDE_MESHES_MATH_H
#define VKC_SHARED_COLLIDE_MESHES_MATH_H
#include "collide_meshes.h"
#include "collide_shapes_math.h"  // anyPerpendicular

VKC_NAMESPACE_BEGIN

// Closest point of a triangle to a particle. bary: weights of a, b, c; region: kTriRegion*.
struct TriClosest {
  vec3 point;
  vec3 bary;
  float dist2;
  uint region;
};

VKC_FN vec3 lerp3(vec3 x0, vec3 x1, float t) {
  VKC_PRECISE vec3 r = x0 + (x1 - x0) * t;
  return r;
}

// x * w.x + y * w.y + z * w.z (a point or velocity from barycentrics). The GLSL `precise` sits in
// this small function on purpose: glslang's precise propagation through the closest-point struct
// inside triCcdCore's loop takes minutes and gigabytes.
VKC_FN vec3 baryCombine(vec3 x, vec3 y, vec3 z, vec3 w) {
  VKC_PRECISE vec3 r = x * w.x + y * w.y + z * w.z;
  return r;
}

VKC_FN float maxAbs3(vec3 v) { return max(max(abs(v.x), abs(v.y)), abs(v.z)); }

// Parameter in [0, 1] of the point of segment e0 -> e1 closest to p (0 for a zero-length segment).
VKC_FN float segmentClosestParam(vec3 p, vec3 e0, vec3 e1) {
  vec3 e = e1 - e0;
  float ee = dot(e, e);
  if (!(ee > 0.0f)) return 0.0f;
  return clamp(dot(p - e0, e) / ee, 0.0f, 1.0f);
}

// Whether the triangle has a usable plane (not zero-area nor a sliver, see kTriDegenerateSin2).
VKC_FN bool triHasPlane(vec3 u, vec3 v, vec3 n) {
  VKC_PRECISE float uv = dot(u, u) * dot(v, v);
  return dot(n, n) > kTriDegenerateSin2 * uv;
}

// The seed's barycentric test ("Point Inside Triangle"): x's projection onto the plane is
// a + alpha u + beta v with u = b - a, v = c - a, w = x - a and
//   alpha = ((u.v)(w.v) - (v.v)(w.u)) / ((u.v)^2 - (u.u)(v.v)),
//   beta  = ((u.v)(w.u) - (u.u)(w.v)) / ((u.v)^2 - (u.u)(v.v)).
// By Lagrange's identity (p x q).(r x s) = (p.r)(q.s) - (p.s)(q.r) these are alpha = (w x v).n / n.n
// and beta = (u x w).n / n.n with n = u x v, which we evaluate: the same numbers without the
// cancellation of the dot-product form on slivers. Inside when alpha >= 0, beta >= 0, alpha + beta <= 1.
VKC_FN vec2 triBarycentric(vec3 u, vec3 v, vec3 w, vec3 n) {
  VKC_PRECISE float nn = dot(n, n);
  VKC_PRECISE float alpha = dot(cross(w, v), n) / nn;
  VKC_PRECISE float beta = dot(cross(u, w), n) / nn;
  return vec2(alpha, beta);
}

// Closest point on triangle (a, b, c) to p. Face region when the triangle has a plane and the
// seed's test puts p's projection inside; otherwise the closest of the three edges' closest points
// (ab, bc, ca; a tie keeps the first), an end of an edge being a vertex region. Zero-area and
// sliver triangles therefore get their edge / vertex distance: finite for any finite input.
VKC_FN TriClosest triClosestPoint(vec3 p, vec3 a, vec3 b, vec3 c) {
  TriClosest r;
  vec3 u = b - a, v = c - a, w = p - a;
  vec3 n = cross(u, v);
  if (triHasPlane(u, v, n)) {
    vec2 ab = triBarycentric(u, v, w, n);
    VKC_PRECISE float s = ab.x + ab.y;
    if (ab.x >= 0.0f && ab.y >= 0.0f && s <= 1.0f) {
      VKC_PRECISE vec3 q = a + u * ab.x + v * ab.y;
      vec3 d = p - q;
      r.point = q;
      r.bary = vec3(1.0f - s, ab.x, ab.y);
      r.dist2 = dot(d, d);
      r.region = kTriRegionFace;
      return r;
    }
  }
  float sab = segmentClosestParam(p, a, b);
  float sbc = segmentClosestParam(p, b, c);
  float sca = segmentClosestParam(p, c, a);
  vec3 qab = lerp3(a, b, sab), qbc = lerp3(b, c, sbc), qca = lerp3(c, a, sca);
  vec3 dab = p - qab, dbc = p - qbc, dca = p - qca;
  float d2ab = dot(dab, dab), d2bc = dot(dbc, dbc), d2ca = dot(dca, dca);
  r.point = qab;
  r.bary = vec3(1.0f - sab, sab, 0.0f);
  r.dist2 = d2ab;
  r.region = sab == 0.0f ? kTriRegionA : (sab == 1.0f ? kTriRegionB : kTriRegionAB);
  if (d2bc < r.dist2) {
    r.point = qbc;
    r.bary = vec3(0.0f, 1.0f - sbc, sbc);
    r.dist2 = d2bc;
    r.region = sbc == 0.0f ? kTriRegionB : (sbc == 1.0f ? kTriRegionC : kTriRegionBC);
  }
  if (d2ca < r.dist2) {
    r.point = qca;
    r.bary = vec3(sca, 0.0f, 1.0f - sca);
    r.dist2 = d2ca;
    r.region = sca == 0.0f ? kTriRegionC : (sca == 1.0f ? kTriRegionA : kTriRegionCA);
  }
  return r;
}

// Discrete proximity (issue 14): when p is closer than `thickness` to the triangle, returns true,
// `pushed` = closest point + thickness * `normal` (unit push direction). Otherwise returns false and
// leaves pushed = p bitwise.
// Direction:
// - two-sided (oneSided false): to the side of the plane that the particle came from: the side of
//   `prev` (its position at the iteration's start); prev exactly on the plane -> the side of p; both
//   on the plane -> the front (normal (b - a) x (c - a)). When p is on that side the direction is the
//   one from the closest point to p (face region: the plane's normal); when p has crossed the plane
//   the offset from the closest point is mirrored through the plane, so that the particle goes back
//   (face region: closest point + thickness * side normal).
// - one-sided (NvCloth's triangle rule, NVCLOTH-NOTES.md): always to the front face, as two-sided
//   with the side fixed to the front.
// - degenerate triangles (no plane, see triHasPlane): away from the closest point of the edges;
//   p on the triangle -> a deterministic perpendicular of the longest edge (+y if all vertices meet).
VKC_FN bool triProximityPush(vec3 a, vec3 b, vec3 c, vec3 prev, vec3 p, float thickness, bool oneSided,
                             VKC_OUT(vec3) pushed, VKC_OUT(vec3) normal) {
  pushed = p;
  normal = vec3(0.0f);
  TriClosest cp = triClosestPoint(p, a, b, c);
  if (!(cp.dist2 < thickness * thickness)) return false;
  vec3 u = b - a, v = c - a;
  vec3 n = cross(u, v);
  vec3 off = p - cp.point;
  if (triHasPlane(u, v, n)) {
    vec3 nHat = n / sqrt(dot(n, n));
    float side = 1.0f;
    if (!oneSided) {
      float sPrev = dot(prev - a, n);
      float sCur = dot(p - a, n);
      side = sPrev != 0.0f ? (sPrev < 0.0f ? -1.0f : 1.0f) : (sCur < 0.0f ? -1.0f : 1.0f);
    }
    float along = dot(off, nHat);
    if (along * side < 0.0f) {
      VKC_PRECISE vec3 mirrored = off - nHat * (2.0f * along);
      off = mirrored;
    }
    float len2 = dot(off, off);
    normal = (len2 > 0.0f && cp.region != kTriRegionFace) ? off / sqrt(len2) : nHat * side;
  } else {
    float len2 = dot(off, off);
    if (len2 > 0.0f) {
      normal = off / sqrt(len2);
    } else {
      vec3 w = c - b;
      vec3 e = dot(u, u) >= dot(v, v) ? u : v;
      e = dot(e, e) >= dot(w, w) ? e : w;
      normal = dot(e, e) > 0.0f ? anyPerpendicular(e / sqrt(dot(e, e))) : vec3(0.0f, 1.0f, 0.0f);
    }
  }
  VKC_PRECISE vec3 target = cp.point + normal * thickness;
  pushed = target;
  return true;
}

// The seed's "Line Segment vs. Triangle": signed distances d0 = (p0 - a).n, d1 = (p1 - a).n; reject
// when both are on one side (or the segment lies in the plane: no single crossing point);
// x = (d0 p1 - d1 p0) / (d0 - d1), which is p0 + t (p1 - p0) with t = d0 / (d0 - d1); then the seed's
// barycentric test on x. n need not be unit (the ratios do not change). Returns true with the time t
// in [0, 1] and the barycentrics of x. Thickness 0, static triangle; for a triangle without a
// plane (triHasPlane) there is no crossing.
VKC_FN bool segmentTriangle(vec3 p0, vec3 p1, vec3 a, vec3 b, vec3 c, VKC_OUT(float) t, VKC_OUT(vec3) bary) {
  t = 1.0f;
  bary = vec3(0.0f);
  vec3 u = b - a, v = c - a;
  vec3 n = cross(u, v);
  if (!triHasPlane(u, v, n)) return false;
  float d0 = dot(p0 - a, n), d1 = dot(p1 - a, n);
  if ((d0 > 0.0f && d1 > 0.0f) || (d0 < 0.0f && d1 < 0.0f) || d0 == d1) return false;
  float tt = d0 / (d0 - d1);
  vec3 x = lerp3(p0, p1, tt);
  vec2 ab = triBarycentric(u, v, x - a, n);
  VKC_PRECISE float s = ab.x + ab.y;
  if (!(ab.x >= 0.0f && ab.y >= 0.0f && s <= 1.0f)) return false;
  t = tt;
  bary = vec3(1.0f - s, ab.x, ab.y);
  return true;
}

// The contact normal at a hit: from the surface point to the particle when they are apart by more
// than `margin`; otherwise (touching, thickness 0) the triangle's normal turned against the relative
// velocity `vrel` (the side the particle comes from), or -vrel for a degenerate triangle, or +y.
VKC_FN vec3 triContactNormal(vec3 p, TriClosest cp, vec3 a, vec3 b, vec3 c, vec3 vrel, float margin) {
  float d = sqrt(cp.dist2);
  vec3 u = b - a, v = c - a;
  vec3 n = cross(u, v);
  bool plane = triHasPlane(u, v, n);
  vec3 nHat = plane ? n / sqrt(dot(n, n)) : vec3(0.0f);
  if (d > margin) {
    // Face region: the plane's normal (more accurate than the offset from the rounded foot point).
    if (plane && cp.region == kTriRegionFace) return dot(p - cp.point, n) < 0.0f ? -nHat : nHat;
    return (p - cp.point) / d;
  }
  if (plane) return dot(nHat, vrel) > 0.0f ? -nHat : nHat;
  float vv = dot(vrel, vrel);
  return vv > 0.0f ? -vrel / sqrt(vv) : vec3(0.0f, 1.0f, 0.0f);
}

VKC_FN MeshHit meshNoHit() {
  MeshHit h;
  h.normalTime = vec4(0.0f, 0.0f, 0.0f, 1.0f);
  h.bary = vec4(0.0f);
  h.point = vec4(0.0f);
  h.surfaceVelocity = vec4(0.0f);
  h.region = 0u;
  h.flags = 0u;
  h.pad0 = 0u;
  h.pad1 = 0u;
  return h;
}

VKC_FN float triCcdScale(vec3 a0, vec3 b0, vec3 c0, vec3 a1, vec3 b1, vec3 c1, vec3 p0, vec3 p1) {
  float m = max(max(maxAbs3(a0), maxAbs3(b0)), max(maxAbs3(c0), maxAbs3(p0)));
  return max(m, max(max(maxAbs3(a1), maxAbs3(b1)), max(maxAbs3(c1), maxAbs3(p1))));
}

// Continuous collision over one time interval (local time 0..1) of a particle p0 -> p1 and a
// triangle whose vertices move linearly a0 -> a1, b0 -> b1, c0 -> c1 (static: a1 = a0 ...):
// conservative advancement along a separating direction (our design; in the spirit of Mirtich's
// conservative advancement and of Tang et al.'s C2A, with our own bound and float margins).
//
// At time t (start: 0) let q be the triangle's point closest to the particle p(t), d = |p - q| and
// n = (p - q) / d. For any unit n and any time s, every point x of the triangle at s is a convex
// combination of its vertices, so
//   dist(s) >= min_i n.(p(s) - x_i(s)) = min_i g_i(s),   g_i(s) = g_i(t) + (s - t) n.(v_p - v_i),
// linear in s (v: the velocities, x1 - x0). So dist stays above `reach` until the earliest time
// at which some g_i with a negative slope reaches reach + margin; we advance t there and repeat.
// (Exactly, g_i(t) >= d; with n rounded from a short p - q a far vertex's g_i can be smaller, so the
// directional step is taken only when every g_i(t) > reach + margin. The step is at least the
// Lipschitz one, (d - reach - margin) / max_i |v_p - v_i|, also a proof: found by the CGAL oracle
// test, where a path grazing an edge was skipped by the directional step alone.)
// A hit is reported when d <= reach + tol (tol = max(2 margin, thickness * kMeshCcdRelTolerance));
// a negative slope nowhere (or t past 1) proves the rest of the interval free.
// Float: margin = kMeshCcdMarginScale * M (M: the largest coordinate magnitude of the inputs) bounds
// the rounding of the interpolated positions (about 7 units of the last place of M per coordinate),
// of the dot products and of the step's division and addition, with room for the rounding of inputs
// given as exact rationals (each at most half a unit of the last place). Every time skipped is
// therefore proven free of distance <= thickness in exact arithmetic: no false negative. The loop
// runs at most kMeshCcdMaxSteps times (typical: 1-3; many only for paths that graze the triangle's
// thickness shell); at the cap the query reports a hit at the first time not proven free, with
// kMeshHitAtStepCap set (conservative). With kMeshCcdApproachOnly, see collide_meshes.h.
// The face region's distance is exact in one step for a particle approaching a static face: the
// step then lands on the plane offset by the thickness, where the seed's segment-triangle test
// (signed distances, barycentrics) would put the crossing for thickness 0.
VKC_FN bool triCcdCore(vec3 a0, vec3 b0, vec3 c0, vec3 a1, vec3 b1, vec3 c1, vec3 p0, vec3 p1, float thickness,
                       uint flags, VKC_OUT(MeshHit) hit) {
  hit = meshNoHit();
  float margin = kMeshCcdMarginScale * triCcdScale(a0, b0, c0, a1, b1, c1, p0, p1);
  float tol = max(2.0f * margin, thickness * kMeshCcdRelTolerance);
  vec3 va = a1 - a0, vb = b1 - b0, vc = c1 - c0, vp = p1 - p0;
  float reach = thickness;
  float t = 0.0f;
  bool capped = true;
  // The state at time t; `current`: the loop ended on a contact at t, so a .. n are the hit's
  // (otherwise they are computed again below at the final t).
  bool current = false;
  vec3 a, b, c, p, surf, n;
  TriClosest cp;
  uint iter = 0u;
  for (; iter < kMeshCcdMaxSteps; ++iter) {
    a = lerp3(a0, a1, t);
    b = lerp3(b0, b1, t);
    c = lerp3(c0, c1, t);
    p = lerp3(p0, p1, t);
    cp = triClosestPoint(p, a, b, c);
    float d = sqrt(cp.dist2);
    surf = baryCombine(va, vb, vc, cp.bary);
    vec3 dir;
    if (d <= reach + tol) {
      dir = triContactNormal(p, cp, a, b, c, vp - surf, margin);
      if ((flags & kMeshCcdApproachOnly) == 0u || dot(vp - surf, dir) < 0.0f) {
        capped = false;
        current = true;
        n = dir;
        break;
      }
      reach = d - tol;  // approach-only: keep it from coming closer than now
    } else {
      dir = (p - cp.point) / d;
    }
    // The directional bound holds for the rounded dir too, but only proves anything when every
    // g_i is above reach + margin now (with dir rounded, a far vertex can fall below).
    float ga = dot(dir, p - a), sa = dot(dir, vp - va);
    float gb = dot(dir, p - b), sb = dot(dir, vp - vb);
    float gc = dot(dir, p - c), sc = dot(dir, vp - vc);
    float floorG = reach + margin;
    float dt = 0.0f;
    if (ga > floorG && gb > floorG && gc > floorG) {
      dt = 2.0f;
      if (sa < 0.0f) dt = min(dt, (ga - floorG) / -sa);
      if (sb < 0.0f) dt = min(dt, (gb - floorG) / -sb);
      if (sc < 0.0f) dt = min(dt, (gc - floorG) / -sc);
      if (dt >= 2.0f) {  // never closer along dir
        hit.pad0 = iter + 1u;
        return false;
      }
    }
    // The Lipschitz bound: the distance changes no faster than the largest relative speed of the
    // particle and a vertex (every triangle point is a convex combination of the vertices).
    float speed = sqrt(max(max(dot(vp - va, vp - va), dot(vp - vb, vp - vb)), dot(vp - vc, vp - vc)));
    if (speed > 0.0f) dt = max(dt, (d - floorG) / speed);
    if (!(dt > 0.0f)) break;  // cannot prove any time free: conservative hit now (or NaN input)
    t = t + dt;
    if (t > 1.0f) {
      hit.pad0 = iter + 1u;
      return false;
    }
  }
  if (!current) {
    a = lerp3(a0, a1, t);
    b = lerp3(b0, b1, t);
    c = lerp3(c0, c1, t);
    p = lerp3(p0, p1, t);
    cp = triClosestPoint(p, a, b, c);
    surf = baryCombine(va, vb, vc, cp.bary);
    n = triContactNormal(p, cp, a, b, c, vp - surf, margin);
  }
  hit.normalTime = vec4(n, t);
  hit.bary = vec4(cp.bary, sqrt(cp.dist2));
  hit.point = vec4(cp.point, tol);
  hit.surfaceVelocity = vec4(surf, 0.0f);
  hit.region = cp.region;
  hit.flags = capped ? kMeshHitAtStepCap : 0u;
  hit.pad0 = min(iter + 1u, kMeshCcdMaxSteps);
  return true;
}

// The earliest-hit rule over candidate triangles (BVH traversal and brute force alike): (hit, tri)
// replaces the best so far when there is none (bestTri = 0xFFFFFFFF), when its time is smaller, or
// at the same time when its triangle index is smaller. Order-independent, so any traversal order
// gives the same answer.
VKC_FN bool meshHitEarlier(MeshHit hit, uint tri, MeshHit best, uint bestTri) {
  if (bestTri == 0xFFFFFFFFu) return true;
  if (hit.normalTime.w != best.normalTime.w) return hit.normalTime.w < best.normalTime.w;
  return tri < bestTri;
}

// Maps a hit of a query over global times [t0, t1] (local 0..1) to global time.
VKC_FN void meshHitToGlobal(VKC_INOUT(MeshHit) hit, float t0, float t1) {
  VKC_PRECISE float span = t1 - t0;
  VKC_PRECISE float t = t0 + hit.normalTime.w * span;
  hit.normalTime.w = min(t, t1);
  hit.surfaceVelocity = vec4(vec3(hit.surfaceVelocity) / span, 0.0f);
}

// Continuous collision, deforming triangle: vertices a0 -> a1 ... linearly over the iteration
// (global time 0 -> 1); the particle from pStart at global time tStart in [0, 1) to pEnd at 1 (the
// bounce loop starts later segments at the previous hit). Earliest hit with distance <= thickness
// (or the approach-only rule), conservative: see triCcdCore. hit.time is global,
// hit.surfaceVelocity per unit of global time. tStart >= 1 (nothing left): no hit.
VKC_FN bool triCcdDeforming(vec3 a0, vec3 b0, vec3 c0, vec3 a1, vec3 b1, vec3 c1, float tStart, vec3 pStart,
                            vec3 pEnd, float thickness, uint flags, VKC_OUT(MeshHit) hit) {
  hit = meshNoHit();
  if (!(tStart < 1.0f)) return false;
  vec3 sa = lerp3(a0, a1, tStart), sb = lerp3(b0, b1, tStart), sc = lerp3(c0, c1, tStart);
  if (!triCcdCore(sa, sb, sc, a1, b1, c1, pStart, pEnd, thickness, flags, hit)) return false;
  meshHitToGlobal(hit, tStart, 1.0f);
  return true;
}

// Continuous collision, static triangle: the particle from pStart (global time tStart) to pEnd (1).
// The swept sphere of radius thickness against the triangle (face slab and edge / vertex capsules
// at once: the distance to the closest point), by triCcdCore with zero vertex velocity.
VKC_FN bool triCcdStatic(vec3 a, vec3 b, vec3 c, float tStart, vec3 pStart, vec3 pEnd, float thickness, uint flags,
                         VKC_OUT(MeshHit) hit) {
  hit = meshNoHit();
  if (!(tStart < 1.0f)) return false;
  if (!triCcdCore(a, b, c, a, b, c, pStart, pEnd, thickness, flags, hit)) return false;
  meshHitToGlobal(hit, tStart, 1.0f);
  return true;
}

// Quaternions (x, y, z, w), unit, rotating mesh space into world space: world = rotate(q, m) + c.
VKC_FN vec4 quatMul(vec4 p, vec4 q) {
  VKC_PRECISE vec3 xyz = vec3(q) * p.w + vec3(p) * q.w + cross(vec3(p), vec3(q));
  VKC_PRECISE float w = p.w * q.w - dot(vec3(p), vec3(q));
  return vec4(xyz, w);
}

// x^2 + y^2 + z^2 + w^2 in this order: GLM's dot of two vec4 sums (x + y) + (z + w), the shader's
// from x to w, which differ in the last bit.
VKC_FN float quatNorm2(vec4 q) {
  VKC_PRECISE float r = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
  return r;
}

VKC_FN vec4 quatConj(vec4 q) { return vec4(-q.x, -q.y, -q.z, q.w); }

VKC_FN vec3 quatRotate(vec4 q, vec3 v) {
  vec3 u = vec3(q);
  VKC_PRECISE vec3 t = cross(u, v) * 2.0f;
  VKC_PRECISE vec3 r = v + t * q.w + cross(u, t);
  return r;
}

// The rotation by half the angle of q (w >= 0) about the same axis, without trigonometry:
// normalize(q + 1) (half-angle formulas cos(a/2) = sqrt((1 + cos a) / 2), sin a = 2 sin(a/2) cos(a/2)).
VKC_FN vec4 quatHalf(vec4 q) {
  VKC_PRECISE vec4 h = vec4(q.x, q.y, q.z, q.w + 1.0f);
  VKC_PRECISE vec4 r = h / sqrt(quatNorm2(h));
  return r;
}

// A rigid mesh's motion over the iteration: mesh space -> world by (q0, c0) at the start and
// (q1, c1) at the end (unit quaternions; the caller validates them). The motion between is the
// screw-like interpolation: translation linear in time, rotation q(t) = q0 (q0^-1 q1)^t (slerp, the
// shorter way: constant angular velocity about a fixed axis). The table holds q(j/16) for j = 0..16
// built from repeated half-angle roots of q0^-1 q1 (no trigonometry, so CPU and GPU agree), and the
// translation at j/16. angle.x bounds the rotation angle theta from above: with s = |xyz|, w of
// q0^-1 q1 (w >= 0), theta/2 = asin(s) <= min(s pi/2, s/w) (asin s <= s pi/2 on [0, 1], asin s <=
// tan(asin s) = s/w); rounded up.
VKC_FN RigidSweep rigidSweepPrepare(vec4 q0, vec3 c0, vec4 q1, vec3 c1) {
  RigidSweep sweep;
  vec4 rel = quatMul(quatConj(q0), q1);
  if (rel.w < 0.0f) rel = -rel;
  vec4 h1 = quatHalf(rel), h2 = quatHalf(h1), h3 = quatHalf(h2), h4 = quatHalf(h3);
  for (uint j = 0u; j <= kRigidMaxSteps; ++j) {
    vec4 r = vec4(0.0f, 0.0f, 0.0f, 1.0f);
    if ((j & 8u) != 0u) r = quatMul(r, h1);
    if ((j & 4u) != 0u) r = quatMul(r, h2);
    if ((j & 2u) != 0u) r = quatMul(r, h3);
    if ((j & 1u) != 0u) r = quatMul(r, h4);
    vec4 q = j == 0u ? q0 : (j == kRigidMaxSteps ? q1 : quatMul(q0, r));
    VKC_PRECISE vec4 unit = q / sqrt(quatNorm2(q));
    VKC_PRECISE float tj = float(j) / float(kRigidMaxSteps);
    sweep.rotation[j] = unit;
    sweep.translation[j] = vec4(lerp3(c0, c1, tj), 0.0f);
  }
  VKC_PRECISE float s = min(sqrt(dot(vec3(rel), vec3(rel))), 1.0f);
  VKC_PRECISE float half1 = s * 1.57079637f;
  VKC_PRECISE float halfAngle = rel.w > 0.0f ? min(half1, s / rel.w) : half1;
  VKC_PRECISE float angle = 2.0f * halfAngle * 1.0000010f;
  sweep.angle = vec4(angle, 0.0f, 0.0f, 0.0f);
  return sweep;
}

// The chord error of a rigid sub-step: over a sub-step that rotates by phi, a mesh point m follows an
// arc x(tau) = R(tau) m + c(tau) (c linear) and the sub-step lerps its ends. e = x - lerp vanishes
// at both ends and |e''| = |R'' m| <= phi^2 |m| (|m|: distance from the rotation centre, the mesh
// origin), so |e| <= phi^2 |m| tau (1 - tau) / 2 <= phi^2 |m| / 8. Every point of the triangle being
// a convex combination of its vertices, the lerped triangle is within E = phi^2 rho / 8,
// rho = max |m_i|, of the true one at every time.
// This is what we do better than the seed's delta matrix: M_delta maps the particle's start into
// the end frame, i.e. tests the mesh-space chord m(0) -> m(1) of the particle's mesh-space path
// m(t) = T(t)^-1 p(t), which is a curve: with y(t) = R0^-1 (p(t) - c(t)) = y0 + t D (linear),
// m(t) = Rot(-theta t) y(t) and the chord's error is <= theta^2 |y|max / 8 + theta |D| / 4
// (the same second-derivative bound), i.e. for a quarter turn about 31% of the particle's distance
// from the centre plus 39% of its relative travel, unbounded by the thickness. We instead split the
// iteration into S = 2^k sub-steps (the smallest with theta^2 rho / (8 S^2) <= kRigidErrorFraction *
// thickness, at most kRigidMaxSteps) and test each as a deforming triangle (world space, exact ends)
// with the thickness inflated by the bound E_S: conservative whatever S, error quadratic in 1/S.
VKC_FN uint rigidSubSteps(float angleBound, float rho, float thickness, VKC_OUT(float) inflation) {
  uint steps = 1u;
  VKC_PRECISE float e = angleBound * angleBound * rho * 0.125f * 1.000001f;
  for (uint k = 0u; k < kRigidMaxLevels; ++k) {
    if (e <= kRigidErrorFraction * thickness) break;
    steps = steps * 2u;
    e = e * 0.25f;
  }
  inflation = e;
  return steps;
}

// Continuous collision, rigid mesh: triangle (ma, mb, mc) in mesh space moving with `sweep`; the
// particle from pStart (world, global time tStart) to pEnd (world, time 1). Sub-steps and inflation
// as above (rigidSubSteps); each sub-step is triCcdCore on the world-space triangle lerped between
// the sub-step's exact end transforms. Returns the earliest hit (world normal, world point, global
// time, the surface velocity of the sub-step's lerp per unit of global time). hit.bary.w is the
// distance at the hit, which may be below thickness by at most the inflation. Loop: at most
// kRigidMaxSteps sub-steps of kMeshCcdMaxSteps advancement steps each.
VKC_FN bool triCcdRigid(RigidSweep sweep, vec3 ma, vec3 mb, vec3 mc, float tStart, vec3 pStart, vec3 pEnd,
                        float thickness, uint flags, VKC_OUT(MeshHit) hit) {
  hit = meshNoHit();
  if (!(tStart < 1.0f)) return false;
  float rho = sqrt(max(max(dot(ma, ma), dot(mb, mb)), dot(mc, mc)));
  float inflation;
  uint steps = rigidSubSteps(sweep.angle.x, rho, thickness, inflation);
  uint stride = kRigidMaxSteps / steps;
  float reach = thickness + inflation;
  VKC_PRECISE float span = 1.0f - tStart;
  for (uint k = 0u; k < kRigidMaxSteps; ++k) {
    if (k >= steps) break;
    VKC_PRECISE float tk0 = float(k) / float(steps);
    VKC_PRECISE float tk1 = float(k + 1u) / float(steps);
    if (tk1 <= tStart) continue;
    uint j0 = k * stride, j1 = (k + 1u) * stride;
    vec4 r0 = sweep.rotation[j0], r1 = sweep.rotation[j1];
    vec3 c0 = vec3(sweep.translation[j0]), c1 = vec3(sweep.translation[j1]);
    VKC_PRECISE vec3 a0 = quatRotate(r0, ma) + c0;
    VKC_PRECISE vec3 b0 = quatRotate(r0, mb) + c0;
    VKC_PRECISE vec3 cc0 = quatRotate(r0, mc) + c0;
    VKC_PRECISE vec3 a1 = quatRotate(r1, ma) + c1;
    VKC_PRECISE vec3 b1 = quatRotate(r1, mb) + c1;
    VKC_PRECISE vec3 cc1 = quatRotate(r1, mc) + c1;
    float lo = max(tk0, tStart);
    VKC_PRECISE float u = (lo - tk0) * float(steps);
    vec3 sa = lerp3(a0, a1, u), sb = lerp3(b0, b1, u), sc = lerp3(cc0, cc1, u);
    VKC_PRECISE float f0 = (lo - tStart) / span;
    VKC_PRECISE float f1 = (tk1 - tStart) / span;
    vec3 q0 = lo == tStart ? pStart : lerp3(pStart, pEnd, f0);
    vec3 q1 = tk1 >= 1.0f ? pEnd : lerp3(pStart, pEnd, f1);
    if (triCcdCore(sa, sb, sc, a1, b1, cc1, q0, q1, reach, flags, hit)) {
      meshHitToGlobal(hit, lo, tk1);
      return true;
    }
  }
  return false;
}

// The mesh stage's broad phase for rigid meshes: its tree holds the world vertices at the
// iteration's ends, and a vertex m (mesh space) strays from the chord between them by at most
// angle^2 |m| / 8 (the bound above with S = 1), rounded up here. The stage's query boxes grow by twice
// the largest of these (sub-steps lerp between points of the arc, themselves within it of the chord).
VKC_FN float rigidChordBound(float angle, vec3 m) {
  VKC_PRECISE float e = angle * angle * sqrt(dot(m, m)) * 0.125f;
  return e * 1.0001f;
}

// --- Response (the seed's "Collision Response", position form; issue 14's Response bullet) ---
// At a hit with unit normal n and surface velocity u (per iteration), the particle's velocity v
// relative to the surface, w = v - u, splits into w_n = (w.n) n and w_t = w - w_n. When approaching
// (w.n < 0): the normal part becomes -eps (w.n) n (the impulse j = -(1 + eps) m v_close n, so
// |dv_n| = (1 + eps) |w.n|); static friction: w_t = 0 when |w_t| <= mu_s |dv_n|; else dynamic
// friction removes mu_d |dv_n| of |w_t| but never more than all of it (the seed's cap, so friction
// never reverses the tangential velocity). New velocity u + that. Not approaching: unchanged.
VKC_FN vec3 meshResponseVelocity(vec3 v, vec3 n, vec3 u, float restitution, float friction, float staticFriction) {
  vec3 w = v - u;
  float wn = dot(w, n);
  if (!(wn < 0.0f)) return v;
  VKC_PRECISE float dvn = -(1.0f + restitution) * wn;
  VKC_PRECISE vec3 wt = w - n * wn;
  float lt = sqrt(dot(wt, wt));
  if (lt <= staticFriction * dvn) {
    wt = vec3(0.0f);
  } else {
    VKC_PRECISE float keep = max(0.0f, 1.0f - friction * dvn / lt);
    wt = wt * keep;
  }
  VKC_PRECISE vec3 r = u + n * (-restitution * wn) + wt;
  return r;
}

// The bounce loop of one particle (the seed's "Bouncing"), in a form the GPU can loop:
//   MeshBounceState s = meshBounceBegin(previous, current);
//   for (uint b = 0u; b <= maxBounces; ++b) {          // bounded: maxBounces + 1 queries
//     MeshHit hit;                                     // earliest hit over the candidate triangles
//     if (!earliestHit(meshBounceFrom(s), s.positionTime.w, meshBounceTo(s), kMeshCcdApproachOnly, hit))
//       break;                                         //   (smallest time, then smallest triangle)
//     if (b == maxBounces) { meshBounceStop(s, hit, material.thickness); break; }
//     meshBounceApply(s, hit, material);
//   }
//   if (meshBounceFinish(s, previous, current, newPrevious, newCurrent)) write them back;
// The query for the remaining path is: from meshBounceFrom(s) at global time s.positionTime.w to
// meshBounceTo(s) at time 1, i.e. the tStart / pStart / pEnd of the triCcd* functions.
// meshBounceApply: the particle moves to the surface point + (thickness + 2 tol) * normal at the
// hit time (meshLegalPosition: a legal position at thickness, outside the hit band), and its
// velocity becomes meshResponseVelocity.
// meshBounceStop (a hit after maxBounces bounces): the particle stays at that legal position and
// moves on with the surface (velocity = surface velocity; at rest on a static mesh).
// meshBounceFinish: the new current position = position + (1 - time) velocity and previous =
// current - velocity (so current - previous is the new velocity for the host's integrator);
// returns false (write nothing, the particle is untouched bitwise) when nothing was hit.
VKC_FN MeshBounceState meshBounceBegin(vec3 previous, vec3 current) {
  MeshBounceState s;
  s.positionTime = vec4(previous, 0.0f);
  s.velocity = vec4(current - previous, 0.0f);
  s.bounces = 0u;
  s.stopped = 0u;
  s.pad0 = 0u;
  s.pad1 = 0u;
  return s;
}

VKC_FN vec3 meshBounceFrom(MeshBounceState s) { return vec3(s.positionTime); }

VKC_FN vec3 meshBounceTo(MeshBounceState s) {
  VKC_PRECISE vec3 r = vec3(s.positionTime) + vec3(s.velocity) * (1.0f - s.positionTime.w);
  return r;
}

// The legal position after a hit: thickness + twice the query's hit tolerance from the surface,
// so that a particle sliding on from there is outside the next queries' hit band (at thickness +
// tol): without this a particle sliding over the shared edge of two coplanar triangles would hit
// that edge of the second triangle, at a tilted normal, and hop.
VKC_FN vec3 meshLegalPosition(MeshHit hit, float thickness) {
  VKC_PRECISE float offset = thickness + 2.0f * hit.point.w;
  VKC_PRECISE vec3 legal = vec3(hit.point) + vec3(hit.normalTime) * offset;
  return legal;
}

VKC_FN void meshBounceApply(VKC_INOUT(MeshBounceState) s, MeshHit hit, MeshMaterial material) {
  vec3 n = vec3(hit.normalTime);
  vec3 legal = meshLegalPosition(hit, material.thickness);
  vec3 v = meshResponseVelocity(vec3(s.velocity), n, vec3(hit.surfaceVelocity), material.restitution,
                                material.friction, material.staticFriction);
  s.positionTime = vec4(legal, hit.normalTime.w);
  s.velocity = vec4(v, 0.0f);
  s.bounces = s.bounces + 1u;
}

VKC_FN void meshBounceStop(VKC_INOUT(MeshBounceState) s, MeshHit hit, float thickness) {
  vec3 legal = meshLegalPosition(hit, thickness);
  s.positionTime = vec4(legal, hit.normalTime.w);
  s.velocity = vec4(vec3(hit.surfaceVelocity), 0.0f);
  s.stopped = 1u;
}

VKC_FN bool meshBounceFinish(MeshBounceState s, vec3 previous, vec3 current, VKC_OUT(vec3) newPrevious,
                             VKC_OUT(vec3) newCurrent) {
  newPrevious = previous;
  newCurrent = current;
  if (s.bounces == 0u && s.stopped == 0u) return false;
  newCurrent = meshBounceTo(s);
  VKC_PRECISE vec3 prev = newCurrent - vec3(s.velocity);
  newPrevious = prev;
  return true;
}

VKC_NAMESPACE_END

#ifdef __cplusplus
namespace vkc::gpu {
// The bounce loop above for C++ callers: earliestHit(from, tStart, to, flags, MeshHit& hit) -> bool
// is the caller's query over its candidate triangles. Returns whether the particle was changed.
template <class EarliestHit>
bool meshBounceLoop(vec3 previous, vec3 current, MeshMaterial material, uint maxBounces, EarliestHit&& earliestHit,
                    vec3& newPrevious, vec3& newCurrent) {
  MeshBounceState s = meshBounceBegin(previous, current);
  for (uint b = 0u; b <= maxBounces; ++b) {
    MeshHit hit = meshNoHit();
    if (!earliestHit(meshBounceFrom(s), s.positionTime.w, meshBounceTo(s), kMeshCcdApproachOnly, hit)) break;
    if (b == maxBounces) {
      meshBounceStop(s, hit, material.thickness);
      break;
    }
    meshBounceApply(s, hit, material);
  }
  return meshBounceFinish(s, previous, current, newPrevious, newCurrent);
}
}  // namespace vkc::gpu
#endif

#endif  // VKC_SHARED_COLLIDE_MESHES_MATH_H
