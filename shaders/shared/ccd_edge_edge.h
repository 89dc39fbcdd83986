// Edge-edge continuous collision, written once for GLSL and C++ (for the line-mesh and mesh-pair
// queries; issue 17): two segments whose end points move linearly over one time interval (local time
// 0..1), with a minimum separation `thickness`. Conservative: no false negatives (tests/ccd: the
// public edge-edge queries with exact labels, and a brute-force reference in double).
//
// The method is the one of the vertex-face query (triCcdCore in collide_meshes_math.h): conservative
// advancement along a separating direction, with its float margins (kMeshCcdMarginScale,
// kMeshCcdRelTolerance, kMeshCcdMaxSteps; see there). At time t let n be the unit direction between
// the segments' closest points. Every point of segment A at any time s is a convex combination of its
// ends, and so is every point of B, so for any unit n
//   dist(s) >= min_ij n.(a_i(s) - b_j(s)) = min_ij g_ij(s),   g_ij(s) = g_ij(t) + (s - t) n.(va_i - vb_j),
// linear in s: the distance stays above `reach` until the earliest time at which some g_ij with a
// negative slope reaches reach + margin. That bound holds for the rounded n (any unit n), but proves
// anything only while every g_ij(t) is above reach + margin. The step is at least the Lipschitz one,
// (min_ij g_ij(t) - reach - margin) / max_ij |va_i - vb_j|: min_ij g_ij is a lower bound of the
// distance whatever the closest-point routine's rounding (nearly parallel segments), and the
// distance changes no faster than the largest relative speed of two end points. A hit is reported
// where the computed distance is within reach + tol, or where no time can be proven free (then at
// the first time not proven free; at kMeshCcdMaxSteps with kEdgeCcdAtStepCap).
#ifndef VKC_SHARED_CCD_EDGE_EDGE_H
#define VKC_SHARED_CCD_EDGE_EDGE_H
#include "collide_meshes_math.h"  // lerp3, maxAbs3 (precise as the vertex-face query), the CCD constants

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kEdgeCcdAtStepCap, 1u);   // EdgeCcdHit::flags: the loop ended at kMeshCcdMaxSteps
VKC_CONSTANT(uint, kEdgeCcdUnproven, 2u);    // EdgeCcdHit::flags: no time could be proven free (hit kept)

// An edge-edge hit: time (local 0..1), the closest points' parameters on A and B, the unit
// direction from B's point to A's (A moves along it to separate), the distance there.
struct EdgeCcdHit {
  vec4 normalTime;   // xyz: unit direction from B to A; w: time of impact
  vec4 paramsDist;   // x: parameter on A, y: parameter on B, z: distance at the hit, w: the tolerance
  uint flags;
  uint pad0;
  uint pad1;
  uint pad2;
};

// VKC_PRECISE on every product that meets a sum (here and in lerp3): the device must not fuse them
// into a multiply-add where the CPU (-ffp-contract=off) does not, so that both round alike
// (tests/collide_meshes: collide_meshes_check.comp, bitwise).

// The parameter in [0, 1] of the point of segment [a, b] closest to p (0 for a zero-length segment).
VKC_FN float edgePointParam(vec3 p, vec3 a, vec3 b) {
  vec3 e = b - a;
  float ee = dot(e, e);
  return ee > 0.0f ? clamp(dot(p - a, e) / ee, 0.0f, 1.0f) : 0.0f;
}

VKC_FN float edgeDist2(vec3 p0, vec3 p1, vec3 q0, vec3 q1, vec2 st) {
  vec3 d = lerp3(p0, p1, st.x) - lerp3(q0, q1, st.y);
  return dot(d, d);
}

// Closest points of segments [p0, p1] and [q0, q1]: parameters (s, t) in [0, 1]. The minimum of the
// squared distance (a convex quadratic over the unit square) is its stationary point when that lies
// inside, else on the square's border: one of the four end points against the other segment. All
// five candidates are compared (the first of equals wins), so parallel and nearly parallel segments
// get a true closest pair too: the separating direction below then bounds every end point pair.
VKC_FN vec2 edgeClosestParams(vec3 p0, vec3 p1, vec3 q0, vec3 q1) {
  vec2 best = vec2(0.0f, edgePointParam(p0, q0, q1));
  float bestD2 = edgeDist2(p0, p1, q0, q1, best);
  vec2 c = vec2(1.0f, edgePointParam(p1, q0, q1));
  float cD2 = edgeDist2(p0, p1, q0, q1, c);
  if (cD2 < bestD2) {
    best = c;
    bestD2 = cD2;
  }
  c = vec2(edgePointParam(q0, p0, p1), 0.0f);
  cD2 = edgeDist2(p0, p1, q0, q1, c);
  if (cD2 < bestD2) {
    best = c;
    bestD2 = cD2;
  }
  c = vec2(edgePointParam(q1, p0, p1), 1.0f);
  cD2 = edgeDist2(p0, p1, q0, q1, c);
  if (cD2 < bestD2) {
    best = c;
    bestD2 = cD2;
  }
  vec3 d1 = p1 - p0;
  vec3 d2 = q1 - q0;
  vec3 r = p0 - q0;
  float a = dot(d1, d1);
  float e = dot(d2, d2);
  float b = dot(d1, d2);
  VKC_PRECISE float denom = a * e - b * b;
  if (denom > 1e-7f * a * e) {
    float f = dot(d2, r);
    float cc = dot(d1, r);
    VKC_PRECISE float sNum = b * f - cc * e;
    VKC_PRECISE float tNum = a * f - b * cc;
    c = vec2(sNum / denom, tNum / denom);
    if (c.x > 0.0f && c.x < 1.0f && c.y > 0.0f && c.y < 1.0f) {
      cD2 = edgeDist2(p0, p1, q0, q1, c);
      if (cD2 < bestD2) best = c;
    }
  }
  return best;
}

// v without its component along d (d != 0).
VKC_FN vec3 edgeWithout(vec3 v, vec3 d) {
  VKC_PRECISE vec3 r = v - d * (dot(v, d) / dot(d, d));
  return r;
}

// The unit direction from B's closest point to A's (diff = their difference, st their parameters),
// made exactly normal to each segment whose closest point is interior: so it is in exact
// arithmetic, and rounding in a short diff (segments nearly touching) would otherwise tilt it by
// about float epsilon over |diff|, enough for a far end point to seem behind the other segment.
// Both interior: their cross product (sign of diff) unless they are parallel.
VKC_FN vec3 edgeSeparatingDirection(vec3 p0, vec3 p1, vec3 q0, vec3 q1, vec2 st, vec3 diff) {
  vec3 d1 = p1 - p0;
  vec3 d2 = q1 - q0;
  bool inS = st.x > 0.0f && st.x < 1.0f && dot(d1, d1) > 0.0f;
  bool inT = st.y > 0.0f && st.y < 1.0f && dot(d2, d2) > 0.0f;
  vec3 n = diff;
  if (inS && inT) {
    vec3 c = cross(d1, d2);
    float c2 = dot(c, c);
    if (c2 > 1e-10f * dot(d1, d1) * dot(d2, d2)) {
      n = dot(c, diff) >= 0.0f ? c : -c;
    } else {
      n = edgeWithout(n, d1);
    }
  } else if (inS) {
    n = edgeWithout(n, d1);
  } else if (inT) {
    n = edgeWithout(n, d2);
  }
  float n2 = dot(n, n);
  return n2 > 0.0f ? n / sqrt(n2) : diff / sqrt(dot(diff, diff));
}

// Edge A: a0 -> a1 (its ends at the interval's start), moving to a0e, a1e at its end; edge B likewise.
// True with the earliest time the segments come within `thickness` (up to the tolerance), false when
// the whole interval is proven free.
VKC_FN bool edgeEdgeCcd(vec3 a0, vec3 a1, vec3 b0, vec3 b1, vec3 a0e, vec3 a1e, vec3 b0e, vec3 b1e, float thickness,
                        VKC_OUT(EdgeCcdHit) hit) {
  hit.normalTime = vec4(0.0f, 0.0f, 1.0f, 0.0f);
  hit.paramsDist = vec4(0.0f);
  hit.flags = 0u;
  hit.pad0 = 0u;
  hit.pad1 = 0u;
  hit.pad2 = 0u;
  float scale = max(max(max(maxAbs3(a0), maxAbs3(a1)), max(maxAbs3(b0), maxAbs3(b1))),
                    max(max(maxAbs3(a0e), maxAbs3(a1e)), max(maxAbs3(b0e), maxAbs3(b1e))));
  float margin = kMeshCcdMarginScale * scale;
  float tol = max(2.0f * margin, thickness * kMeshCcdRelTolerance);
  vec3 va0 = a0e - a0, va1 = a1e - a1, vb0 = b0e - b0, vb1 = b1e - b1;
  float speed2 = max(max(dot(va0 - vb0, va0 - vb0), dot(va0 - vb1, va0 - vb1)),
                     max(dot(va1 - vb0, va1 - vb0), dot(va1 - vb1, va1 - vb1)));
  float speed = sqrt(speed2);
  VKC_PRECISE float floorG = thickness + margin;
  float t = 0.0f;
  bool capped = true;
  bool unproven = false;
  vec2 st = vec2(0.0f);
  vec3 n = vec3(0.0f, 0.0f, 1.0f);
  float d = 0.0f;
  for (uint iter = 0u; iter < kMeshCcdMaxSteps; ++iter) {
    vec3 pa0 = lerp3(a0, a0e, t), pa1 = lerp3(a1, a1e, t);
    vec3 pb0 = lerp3(b0, b0e, t), pb1 = lerp3(b1, b1e, t);
    st = edgeClosestParams(pa0, pa1, pb0, pb1);
    vec3 diff = lerp3(pa0, pa1, st.x) - lerp3(pb0, pb1, st.y);
    d = sqrt(dot(diff, diff));
    if (d <= thickness + tol) {
      if (d > 0.0f) n = diff / d;
      capped = false;
      break;
    }
    n = edgeSeparatingDirection(pa0, pa1, pb0, pb1, st, diff);
    float g00 = dot(n, pa0 - pb0), s00 = dot(n, va0 - vb0);
    float g01 = dot(n, pa0 - pb1), s01 = dot(n, va0 - vb1);
    float g10 = dot(n, pa1 - pb0), s10 = dot(n, va1 - vb0);
    float g11 = dot(n, pa1 - pb1), s11 = dot(n, va1 - vb1);
    float gMin = min(min(g00, g01), min(g10, g11));
    float dt = 0.0f;
    if (gMin > floorG) {
      dt = 2.0f;
      if (s00 < 0.0f) dt = min(dt, (g00 - floorG) / -s00);
      if (s01 < 0.0f) dt = min(dt, (g01 - floorG) / -s01);
      if (s10 < 0.0f) dt = min(dt, (g10 - floorG) / -s10);
      if (s11 < 0.0f) dt = min(dt, (g11 - floorG) / -s11);
      if (dt >= 2.0f) return false;  // never closer along n
    }
    if (speed > 0.0f) dt = max(dt, (gMin - floorG) / speed);
    if (!(dt > 0.0f)) {  // no time can be proven free: a (conservative) hit now, or NaN input
      capped = false;
      unproven = true;
      break;
    }
    t = t + dt;
    if (t > 1.0f) return false;
  }
  if (d > 0.0f && capped) {
    vec3 pa0 = lerp3(a0, a0e, t), pa1 = lerp3(a1, a1e, t);
    vec3 pb0 = lerp3(b0, b0e, t), pb1 = lerp3(b1, b1e, t);
    st = edgeClosestParams(pa0, pa1, pb0, pb1);
    vec3 diff = lerp3(pa0, pa1, st.x) - lerp3(pb0, pb1, st.y);
    d = sqrt(dot(diff, diff));
    if (d > 0.0f) n = diff / d;
  }
  hit.normalTime = vec4(n, t);
  hit.paramsDist = vec4(st, d, tol);
  hit.flags = (capped ? kEdgeCcdAtStepCap : 0u) | (unproven ? kEdgeCcdUnproven : 0u);
  return true;
}

VKC_NAMESPACE_END

#endif  // VKC_SHARED_CCD_EDGE_EDGE_H
