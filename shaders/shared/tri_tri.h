// Triangle vs triangle, written once for GLSL and C++ (issue 17; the method of
// ../shared/seeds/ucsd-cse169-collision-detection.txt, "Triangle vs. Triangle"):
//  1. the signed distances of one triangle's vertices to the other's plane; all on one side: no
//     intersection;
//  2. otherwise the edges that cross the plane (and the vertices on it) give the segment where the
//     first triangle meets the second one's plane;
//  3. that segment clipped to the second triangle in its plane (its three edge half-planes) is the
//     intersection segment (P meets Q only on Q's plane, and there only inside Q).
// The plane used is the fatter triangle's (larger twice-area / longest edge^2; Q on a tie), so a
// sliver against a well-shaped triangle is measured against the well-shaped one's plane; the
// results' P/Q roles (features) stay the caller's. When all of the other triangle's vertices are
// within the band of the plane the pair is coplanar: the other triangle clipped to the plane
// triangle's three edge half-planes (Sutherland-Hodgman) is the overlap polygon, up to 6 points. When both triangles are degenerate (twice the area <= kTriTriSliver * longest edge^2)
// each is its span (farthest vertex pair) and the answer is the midpoint of their closest points.
//
// Tolerance band. With S the largest absolute coordinate of the six vertices, l the plane triangle's
// longest edge, A2 twice its area and R the largest distance of the other's vertices from its first
// vertex, the band is
//   band = kTriTriTolerance * (S + l^2 * R / A2)
// (the first term: rounding of the inputs' differences; the second: the error of the plane's
// direction, which grows as the triangle gets thin). The crossing segment uses the exact signs of the
// computed distances. The band is used (0) in clipping that segment: an end within `band` outside an
// edge of the plane triangle counts as on it (a segment along an edge stays whole); (1) to call a
// pair coplanar (every vertex of the other triangle within `band` of the plane); (2) for touching:
// when nothing crossing survives the clipping but a vertex is within `band` of the plane (or the
// crossing missed the plane triangle by at most `band`) and the triangles' float distance is at most
// `band`, the midpoint of a closest pair is reported with kTriTriWithinBand (no features). So
// triangles closer than about `band` may be reported touching, and exact intersections are found
// unless rounding exceeds the band; tests/mesh_pairs/tri_tri_cgal_test.cpp measures both against
// CGAL's exact answer. For two degenerate triangles the band also holds the larger thickness (twice
// the area / longest edge).
#ifndef VKC_SHARED_TRI_TRI_H
#define VKC_SHARED_TRI_TRI_H
#include "ccd_edge_edge.h"
#include "collide_meshes_math.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(float, kTriTriTolerance, 4.0e-6f);  // relative band (about 34 float ulps), see above
VKC_CONSTANT(float, kTriTriSliver, 1.0e-4f);     // degenerate when twice the area <= this * longest edge^2

VKC_CONSTANT(uint, kTriTriCoplanar, 1u);     // TriTriResult::flags: points[0..count) is the overlap polygon
VKC_CONSTANT(uint, kTriTriSwapped, 2u);      // the plane used was P's (P is the fatter); informative
VKC_CONSTANT(uint, kTriTriDegenerate, 4u);   // both triangles degenerate: span against span
VKC_CONSTANT(uint, kTriTriWithinBand, 8u);   // they meet only within the band (touching; no exact overlap found)

// Feature codes of a segment's endpoints (TriTriResult::features): where each endpoint came from.
VKC_CONSTANT(uint, kTriTriEdgeP, 0u);     // + k: edge k of P (p_k to p_(k+1)%3) crossing Q
VKC_CONSTANT(uint, kTriTriEdgeQ, 3u);     // + k: edge k of Q crossing P
VKC_CONSTANT(uint, kTriTriVertexP, 6u);   // + k: vertex k of P on Q
VKC_CONSTANT(uint, kTriTriVertexQ, 9u);   // + k: vertex k of Q on P
VKC_CONSTANT(uint, kTriTriNoFeature, 15u);

// count: 0 no intersection; 1 a point (touching); 2 a segment points[0]-points[1] (maybe of zero
// length); with kTriTriCoplanar, 1..6 the vertices of the overlap polygon (in order around it).
// features: for count 1 and 2 without kTriTriCoplanar, endpoint 0's code in bits 0..3 and endpoint
// 1's in bits 4..7 (equal for count 1).
struct TriTriResult {
  vec4 points[6];   // xyz; w is 0
  uint count;
  uint flags;
  uint features;
  float band;       // the tolerance band used (absolute length)
};

VKC_FN uint triTriSwapFeature(uint f) {
  if (f == kTriTriNoFeature) return f;
  if (f < 3u) return f + 3u;
  if (f < 6u) return f - 3u;
  if (f < 9u) return f + 3u;
  return f - 3u;
}

// A convex polygon being clipped (a triangle by 3 half-planes: at most 6 vertices; room for 8).
struct TriTriPoly {
  vec3 v[8];
  int n;
};

// Keeps the part of `poly` where dot(normal, x - origin) >= 0 (Sutherland-Hodgman).
VKC_FN void triTriClip(VKC_INOUT(TriTriPoly) poly, vec3 normal, vec3 origin) {
  TriTriPoly next;
  next.n = 0;
  for (int i = 0; i < poly.n; ++i) {
    vec3 u = poly.v[i];
    vec3 v = poly.v[(i + 1) % poly.n];
    VKC_PRECISE float su = dot(normal, u - origin);
    VKC_PRECISE float sv = dot(normal, v - origin);
    if (su >= 0.0f && next.n < 8) next.v[next.n++] = u;
    if ((su >= 0.0f) != (sv >= 0.0f) && next.n < 8) next.v[next.n++] = u + (v - u) * (su / (su - sv));
  }
  poly = next;
}

// a clipped to b's prism (its three edge half-planes, inward unit normals m).
VKC_FN void triTriClipPrism(VKC_INOUT(TriTriPoly) poly, vec3 m0, vec3 m1, vec3 m2, vec3 b0, vec3 b1, vec3 b2) {
  triTriClip(poly, m0, b0);
  triTriClip(poly, m1, b1);
  triTriClip(poly, m2, b2);
}

// A triangle's vertices, indexable.
struct TriTriVerts {
  vec3 v[3];
};

VKC_FN TriTriVerts triTriVerts(vec3 a, vec3 b, vec3 c) {
  TriTriVerts t;
  t.v[0] = a;
  t.v[1] = b;
  t.v[2] = c;
  return t;
}

// The distance between two triangles that do not cross (any shape, zero-area included): the least
// of the vertices' distances to the other triangle and of the nine edge pairs'. x and y: a closest pair.
VKC_FN float triTriDistance(vec3 a0, vec3 a1, vec3 a2, vec3 b0, vec3 b1, vec3 b2, VKC_OUT(vec3) x, VKC_OUT(vec3) y) {
  TriTriVerts a = triTriVerts(a0, a1, a2);
  TriTriVerts b = triTriVerts(b0, b1, b2);
  float best = 3.4e38f;
  x = a0;
  y = b0;
  for (int i = 0; i < 3; ++i) {
    TriClosest ca = triClosestPoint(a.v[i], b0, b1, b2);
    if (ca.dist2 < best) { best = ca.dist2; x = a.v[i]; y = ca.point; }
    TriClosest cb = triClosestPoint(b.v[i], a0, a1, a2);
    if (cb.dist2 < best) { best = cb.dist2; x = cb.point; y = b.v[i]; }
    for (int j = 0; j < 3; ++j) {
      vec2 st = edgeClosestParams(a.v[i], a.v[(i + 1) % 3], b.v[j], b.v[(j + 1) % 3]);
      float d2 = edgeDist2(a.v[i], a.v[(i + 1) % 3], b.v[j], b.v[(j + 1) % 3], st);
      if (d2 < best) {
        best = d2;
        x = lerp3(a.v[i], a.v[(i + 1) % 3], st.x);
        y = lerp3(b.v[j], b.v[(j + 1) % 3], st.y);
      }
    }
  }
  return sqrt(best);
}

// Touching within the band: when the triangles are at most `band` apart, the midpoint of a closest
// pair, with kTriTriWithinBand.
VKC_FN void triTriTouching(vec3 a0, vec3 a1, vec3 a2, vec3 b0, vec3 b1, vec3 b2, float band, VKC_INOUT(TriTriResult) r) {
  vec3 x;
  vec3 y;
  if (triTriDistance(a0, a1, a2, b0, b1, b2, x, y) > band) return;
  r.points[0] = vec4(0.5f * (x + y), 0.0f);
  r.points[1] = r.points[0];
  r.count = 1u;
  r.flags |= kTriTriWithinBand;
}

// The core: the plane of (b0, b1, b2) (not degenerate, unit normal nb), (a0, a1, a2) any. Features
// are written with a as P and b as Q. Coordinates are relative to b0 (the caller adds it back).
//  - all of a within `band` of the plane: coplanar, a clipped to b's three edge half-planes;
//  - else the segment where a crosses the plane (exact signs of the computed distances), clipped to
//    b; when not empty, the answer;
//  - otherwise (or when the coplanar clip is empty), when some vertex of a is within `band` of the
//    plane or the crossing segment missed b by at most `band`, and the triangles are at most `band`
//    apart: a touching point (triTriTouching).
VKC_FN void triTriCore(vec3 a0, vec3 a1, vec3 a2, vec3 b0, vec3 b1, vec3 b2, vec3 nb, float band,
                       VKC_INOUT(TriTriResult) r) {
  r.count = 0u;
  r.features = kTriTriNoFeature | (kTriTriNoFeature << 4u);
  TriTriVerts a = triTriVerts(a0, a1, a2);
  TriTriVerts b = triTriVerts(b0, b1, b2);
  float d[3];
  int pos = 0;
  int neg = 0;
  int nearCount = 0;
  for (int i = 0; i < 3; ++i) {
    VKC_PRECISE float di = dot(nb, a.v[i] - b0);
    d[i] = di;
    if (di > 0.0f) ++pos;
    if (di < 0.0f) ++neg;
    if (abs(di) <= band) ++nearCount;
  }
  if (nearCount == 0 && (pos == 3 || neg == 3)) return;
  // The edges' inward unit normals in b's plane: m_k . (x - b_k) >= 0 inside.
  vec3 m[3];
  for (int k = 0; k < 3; ++k) {
    vec3 mk = cross(nb, b.v[(k + 1) % 3] - b.v[k]);
    float len = sqrt(dot(mk, mk));
    m[k] = len > 0.0f ? mk / len : vec3(0.0f);
  }
  TriTriPoly poly;
  if (nearCount == 3) {
    r.flags |= kTriTriCoplanar;
    poly.n = 3;
    poly.v[0] = a0;
    poly.v[1] = a1;
    poly.v[2] = a2;
    triTriClipPrism(poly, m[0], m[1], m[2], b0, b1, b2);
    if (poly.n == 0) {
      r.flags &= ~kTriTriCoplanar;
      triTriTouching(a0, a1, a2, b0, b1, b2, band, r);
      return;
    }
    // Drop consecutive duplicates (clipping through a vertex emits it twice), keep at most 6.
    int kept = 0;
    for (int i = 0; i < poly.n; ++i) {
      if (kept > 0 && vec3(r.points[kept - 1]) == poly.v[i]) continue;
      if (kept < 6) r.points[kept++] = vec4(poly.v[i], 0.0f);
    }
    if (kept > 1 && vec3(r.points[kept - 1]) == vec3(r.points[0])) --kept;
    r.count = uint(kept);
    return;
  }
  bool crossingFar = false;  // a crossing segment more than `band` outside one of b's edges
  if (pos < 3 && neg < 3) {
    // a's segment on b's plane: the vertices on it and the crossing edges (at most two points).
    vec3 s0 = vec3(0.0f);
    vec3 s1 = vec3(0.0f);
    uint f0 = kTriTriNoFeature;
    uint f1 = kTriTriNoFeature;
    int found = 0;
    for (int i = 0; i < 3; ++i) {
      int j = (i + 1) % 3;
      if (d[i] == 0.0f) {
        if (found == 0) { s0 = a.v[i]; f0 = kTriTriVertexP + uint(i); } else { s1 = a.v[i]; f1 = kTriTriVertexP + uint(i); }
        ++found;
      }
      if ((d[i] < 0.0f && d[j] > 0.0f) || (d[i] > 0.0f && d[j] < 0.0f)) {
        VKC_PRECISE float t = d[i] / (d[i] - d[j]);
        vec3 p = a.v[i] + (a.v[j] - a.v[i]) * t;
        if (found == 0) { s0 = p; f0 = kTriTriEdgeP + uint(i); } else { s1 = p; f1 = kTriTriEdgeP + uint(i); }
        ++found;
      }
    }
    if (found == 1) {
      s1 = s0;
      f1 = f0;
    }
    // Clip [s0, s1] to b in its plane (parameters t0..t1 along it).
    float t0 = 0.0f;
    float t1 = 1.0f;
    vec3 e = s1 - s0;
    bool empty = false;
    for (int k = 0; k < 3; ++k) {
      VKC_PRECISE float sa = dot(m[k], s0 - b.v[k]);
      VKC_PRECISE float sb = dot(m[k], s1 - b.v[k]);
      // Within `band` of the edge counts as on it (a segment along an edge of b stays whole).
      if (sa < -band && sb < -band) {
        empty = true;
        crossingFar = true;
      }
      if (empty || (sa >= -band && sb >= -band)) continue;
      float t = sa / (sa - sb);
      if (sa < sb) {  // entering b's side along the segment
        if (t > t0) { t0 = t; f0 = kTriTriEdgeQ + uint(k); }
      } else {
        if (t < t1) { t1 = t; f1 = kTriTriEdgeQ + uint(k); }
      }
    }
    if (t0 > t1) empty = true;
    if (!empty) {
      r.points[0] = vec4(s0 + e * t0, 0.0f);
      r.points[1] = vec4(s0 + e * t1, 0.0f);
      r.count = found == 1 ? 1u : 2u;
      if (found == 1) f1 = f0;
      r.features = f0 | (f1 << 4u);
      return;
    }
  }
  // Touching: a vertex near the plane, or a crossing that missed b by at most the band (rounding).
  if (nearCount == 0 && (crossingFar || pos == 3 || neg == 3)) return;
  triTriTouching(a0, a1, a2, b0, b1, b2, band, r);
}

// Longest edge squared and twice the area of a triangle (relative coordinates).
VKC_FN vec2 triTriShape(vec3 a, vec3 b, vec3 c) {
  vec3 n = cross(b - a, c - a);
  float l2 = max(max(dot(b - a, b - a), dot(c - b, c - b)), dot(a - c, a - c));
  return vec2(l2, sqrt(dot(n, n)));
}

// The farthest vertex pair of a (degenerate) triangle.
VKC_FN void triTriSpan(vec3 a, vec3 b, vec3 c, VKC_OUT(vec3) s0, VKC_OUT(vec3) s1) {
  float ab = dot(b - a, b - a);
  float bc = dot(c - b, c - b);
  float ca = dot(a - c, a - c);
  s0 = a;
  s1 = b;
  if (bc > ab && bc >= ca) {
    s0 = b;
    s1 = c;
  } else if (ca > ab && ca > bc) {
    s0 = c;
    s1 = a;
  }
}

// Triangle P = (p0, p1, p2) against triangle Q = (q0, q1, q2). See the header comment for the
// method, the band and what each field holds. Returns r.count > 0.
VKC_FN bool triTriIntersect(vec3 p0, vec3 p1, vec3 p2, vec3 q0, vec3 q1, vec3 q2, VKC_OUT(TriTriResult) r) {
  for (int i = 0; i < 6; ++i) r.points[i] = vec4(0.0f);
  r.count = 0u;
  r.flags = 0u;
  r.features = kTriTriNoFeature | (kTriTriNoFeature << 4u);
  float S = max(max(max(maxAbs3(p0), maxAbs3(p1)), max(maxAbs3(p2), maxAbs3(q0))), max(maxAbs3(q1), maxAbs3(q2)));
  if (!(S <= 3.0e38f)) return false;  // NaN or infinite input: no answer
  vec2 shapeP = triTriShape(p0, p1, p2);
  vec2 shapeQ = triTriShape(q0, q1, q2);
  // Fatness (twice the area over longest edge^2) picks the plane triangle; ties keep Q's.
  float fatP = shapeP.x > 0.0f ? shapeP.y / shapeP.x : 0.0f;
  float fatQ = shapeQ.x > 0.0f ? shapeQ.y / shapeQ.x : 0.0f;
  bool swap = fatP > fatQ;
  vec3 a0 = swap ? q0 : p0;
  vec3 a1 = swap ? q1 : p1;
  vec3 a2 = swap ? q2 : p2;
  vec3 o = swap ? p0 : q0;
  vec3 b1 = (swap ? p1 : q1) - o;
  vec3 b2 = (swap ? p2 : q2) - o;
  a0 -= o;
  a1 -= o;
  a2 -= o;
  float fat = swap ? fatP : fatQ;
  vec2 shapeB = swap ? shapeP : shapeQ;
  if (fat <= kTriTriSliver) {
    // Both degenerate: span against span.
    vec3 u0;
    vec3 u1;
    vec3 v0;
    vec3 v1;
    triTriSpan(a0, a1, a2, u0, u1);
    triTriSpan(vec3(0.0f), b1, b2, v0, v1);
    vec2 shapeA = swap ? shapeQ : shapeP;
    float thick = max(shapeA.x > 0.0f ? shapeA.y / sqrt(shapeA.x) : 0.0f, shapeB.x > 0.0f ? shapeB.y / sqrt(shapeB.x) : 0.0f);
    r.band = kTriTriTolerance * S + thick;
    r.flags = kTriTriDegenerate;
    vec2 st = edgeClosestParams(u0, u1, v0, v1);
    vec3 x = lerp3(u0, u1, st.x);
    vec3 y = lerp3(v0, v1, st.y);
    if (sqrt(dot(x - y, x - y)) > r.band) return false;
    r.points[0] = vec4(0.5f * (x + y) + o, 0.0f);
    r.count = 1u;
    return true;
  }
  vec3 nb = cross(b1, b2) / shapeB.y;
  float R = sqrt(max(max(dot(a0, a0), dot(a1, a1)), dot(a2, a2)));
  r.band = kTriTriTolerance * (S + shapeB.x * R / shapeB.y);
  triTriCore(a0, a1, a2, vec3(0.0f), b1, b2, nb, r.band, r);
  for (int i = 0; i < 6; ++i) {
    if (uint(i) < r.count) r.points[i] = vec4(vec3(r.points[i]) + o, 0.0f);
  }
  if (swap) {
    r.flags |= kTriTriSwapped;
    r.features = triTriSwapFeature(r.features & 15u) | (triTriSwapFeature(r.features >> 4u) << 4u);
  }
  return r.count > 0u;
}

VKC_NAMESPACE_END

#endif  // VKC_SHARED_TRI_TRI_H
