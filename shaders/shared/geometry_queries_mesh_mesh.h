// The mesh-against-mesh pairs of the geometry queries (issue 17): per pair of cells, the contact of
// a triangle against a triangle, a triangle against a segment, a segment against a tetrahedron, and a
// triangle or a tetrahedron against a tetrahedron.
// Written in the style of the shared headers (GLSL and C++, common.h: no recursion, no pointers,
// bounded loops) for the CPU driver (src/cpu/geometry_queries_mesh_mesh.cpp); the Vulkan path of
// the mesh queries is not built yet. Elements as in geometry_queries_mesh.h (cell words in pad).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_H
#include "geometry_queries_mesh.h"
#include "geometry_queries_mesh_tetra.h"
#include "tri_tri.h"

VKC_NAMESPACE_BEGIN

// The kind of a triangle-triangle contact (geomTriTriContact's return).
VKC_CONSTANT(uint, kGeomTriTriNone, 0u);
VKC_CONSTANT(uint, kGeomTriTriVertexTriangle, 1u);  // a corner of X pierces Y
VKC_CONSTANT(uint, kGeomTriTriTriangleVertex, 2u);  // a corner of Y pierces X
VKC_CONSTANT(uint, kGeomTriTriEdgeEdge, 3u);  // an edge of X and an edge of Y cross each other's triangle

// The corner of a triangle (heights h over the other's plane) that pierces the other: the one alone
// on its side of the plane (the other two on the other side, or one on the plane: then the nearer of
// the two off it, the first on a tie). 3: none (all on one side).
VKC_FN uint geomTriTriLoneCorner(vec3 h) {
  uint pos = 0u;
  uint neg = 0u;
  for (uint k = 0u; k < 3u; ++k) {
    if (h[k] > 0.0f) ++pos;
    if (h[k] < 0.0f) ++neg;
  }
  if (pos + neg == 3u && (pos == 1u || neg == 1u)) {
    bool alonePositive = pos == 1u;
    for (uint k = 0u; k < 3u; ++k) {
      if ((h[k] > 0.0f) == alonePositive) return k;
    }
  }
  if (pos == 1u && neg == 1u) {
    uint best = 3u;
    for (uint k = 0u; k < 3u; ++k) {
      if (h[k] != 0.0f && (best == 3u || abs(h[k]) < abs(h[best]))) best = k;
    }
    return best;
  }
  return 3u;
}

// A corner v of one triangle through the plane (point o, unit normal n) of the other: that corner's
// element moves back across the plane (to the side of its triangle's other corners) by its height;
// the other's element is its projection on the plane.
VKC_FN void geomTriTriPierce(vec3 v, vec3 o, vec3 n, uint vertexCorner, uint vertexCell, uvec4 vertexIds,
                             uint cell, uvec4 ids, VKC_OUT(GeomElement) vertexSide,
                             VKC_OUT(GeomElement) triSide) {
  float s = dot(v - o, n);
  vec3 m = s > 0.0f ? -n : n;
  float depth = abs(s);
  vertexSide = geomMeshElement(v, depth, m, vertexCell, vertexIds, 1u << vertexCorner);
  triSide = geomMeshElement(v - n * s, depth, -m, cell, ids, 7u);
}

// geomTriTriContact's answer from the features (TriTriResult::features) of triTriIntersect's plain
// crossing segment (count 2, none of the coplanar, within-band and degenerate flags); any other answer
// of triTriIntersect as features kTriTriNoFeature | (kTriTriNoFeature << 4) (no contact). The CPU's
// SIMD pre-test knows the features of most crossing pairs (src/cpu/geometry_queries_mesh_mesh_simd.h).
// Each triangle's unit normal is computed only where the answer reads it.
VKC_FN uint geomTriTriContactFromFeatures(vec3 x0, vec3 x1, vec3 x2, uvec4 ix, uint cx, vec3 y0, vec3 y1, vec3 y2,
                                          uvec4 iy, uint cy, uint features, VKC_OUT(GeomElement) ex,
                                          VKC_OUT(GeomElement) ey, VKC_OUT(uint) edgeKey) {
  edgeKey = 0u;
  ex = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  ey = ex;
  uint f0 = features & 15u;
  uint f1 = (features >> 4u) & 15u;
  if (f0 != kTriTriNoFeature && f1 != kTriTriNoFeature) {
    // Relative codes: X's features 0..2 edge, 3..5 vertex; Y's the same.
    bool x0f = f0 < 3u || (f0 >= 6u && f0 < 9u);
    bool x1f = f1 < 3u || (f1 >= 6u && f1 < 9u);
    uint g0 = f0 < 3u ? f0 : (f0 < 6u ? f0 - 3u : (f0 < 9u ? f0 - 3u : f0 - 6u));
    uint g1 = f1 < 3u ? f1 : (f1 < 6u ? f1 - 3u : (f1 < 9u ? f1 - 3u : f1 - 6u));
    // Which case: both ends on X's features, a corner of X alone on its side of Y's plane pierces Y;
    // both on Y's, the reverse; one on each, X's corner feature, else Y's, pierces the other, and two
    // edges give the edge-edge contact. Each case reads one triangle's unit normal (the edge-edge one
    // only where the edges meet), computed in one place (one call of geomTriangleNormal, and one of
    // geomTriTriPierce below: a driver inlines every call, docs/integration.md, "Exact arithmetic").
    bool mixed = x0f != x1f;
    uint gx = x0f ? g0 : g1;
    uint gy = x0f ? g1 : g0;
    bool edgeEdge = mixed && gx < 3u && gy < 3u;
    bool vertexOfX = mixed ? gx >= 3u : x0f;
    vec3 p = vec3(0.0f), q = vec3(0.0f), d = vec3(0.0f);
    float dist = 0.0f;
    if (edgeEdge) {
      vec3 a0 = gx == 0u ? x0 : (gx == 1u ? x1 : x2);
      vec3 a1 = gx == 0u ? x1 : (gx == 1u ? x2 : x0);
      vec3 b0 = gy == 0u ? y0 : (gy == 1u ? y1 : y2);
      vec3 b1 = gy == 0u ? y1 : (gy == 1u ? y2 : y0);
      vec2 st = geomSegmentSegmentParams(a0, a1, b0, b1);
      p = lerp3(a0, a1, st.x);
      q = lerp3(b0, b1, st.y);
      d = q - p;
      dist = sqrt(dot(d, d));
    }
    bool ofY = edgeEdge || vertexOfX;
    vec3 n = vec3(0.0f);
    if (!edgeEdge || !(dist > 0.0f)) n = geomTriangleNormal(ofY ? y0 : x0, ofY ? y1 : x1, ofY ? y2 : x2);
    if (edgeEdge) {
      vec3 m = dist > 0.0f ? d / dist : n;
      uint mx = (1u << gx) | (gx == 2u ? 1u : (2u << gx));
      uint my = (1u << gy) | (gy == 2u ? 1u : (2u << gy));
      ex = geomMeshElement(p, dist, m, cx, ix, mx);
      ey = geomMeshElement(q, dist, -m, cy, iy, my);
      edgeKey = mx | (my << 4u);
      return dist > 0.0f ? kGeomTriTriEdgeEdge : kGeomTriTriNone;
    }
    vec3 v0 = vertexOfX ? x0 : y0;
    vec3 v1 = vertexOfX ? x1 : y1;
    vec3 v2 = vertexOfX ? x2 : y2;
    vec3 o = vertexOfX ? y0 : x0;
    uint k = mixed ? (vertexOfX ? gx : gy) - 3u
                   : geomTriTriLoneCorner(vec3(dot(v0 - o, n), dot(v1 - o, n), dot(v2 - o, n)));
    if (k < 3u) {
      GeomElement ev, et;
      geomTriTriPierce(k == 0u ? v0 : (k == 1u ? v1 : v2), o, n, k, vertexOfX ? cx : cy, vertexOfX ? ix : iy,
                       vertexOfX ? cy : cx, vertexOfX ? iy : ix, ev, et);
      ex = vertexOfX ? ev : et;
      ey = vertexOfX ? et : ev;
      if (!(ex.point.w > 0.0f)) return kGeomTriTriNone;
      return vertexOfX ? kGeomTriTriVertexTriangle : kGeomTriTriTriangleVertex;
    }
  }
  return kGeomTriTriNone;
}

// Triangle X (x0, x1, x2; cell cx, vertex numbers ix) against triangle Y (cell cy, iy): tri_tri.h's
// intersection (the UCSD seed's method), then the seed's element kinds as iMSTK's
// SurfaceMeshToSurfaceMeshCD reports them, from the features of the intersection segment's ends
// (geomTriTriContactFromFeatures):
//   - both ends on X's features (two edges of X crossing Y, or a corner of X on Y): the corner of X
//     alone on its side of Y's plane (geomTriTriLoneCorner) pierces Y (vertex-triangle); the vertex
//     moves back across Y's plane by its height;
//   - both on Y's: triangle-vertex, the same the other way;
//   - an edge of X and an edge of Y: edge-edge; X's element is its edge's point closest to Y's edge,
//     moving towards Y's (unlinking the edges) by their distance, Y's the other way;
//   - anything else (a coplanar overlap, touching within tri_tri.h's band, a degenerate pair), and a
//     contact whose depth would be 0 (a corner exactly on the other's plane, edges meeting exactly):
//     no contact, as touching is none (iMSTK reports none for coplanar pairs either).
// Returns the kind (kGeomTriTriNone: no contact); edgeKey: for an edge-edge contact, X's edge
// (corner mask) in bits 0..3 and Y's in bits 4..7 (the driver keeps one contact per pair of edges).
VKC_FN uint geomTriTriContact(vec3 x0, vec3 x1, vec3 x2, uvec4 ix, uint cx, vec3 y0, vec3 y1, vec3 y2,
                              uvec4 iy, uint cy, VKC_OUT(GeomElement) ex, VKC_OUT(GeomElement) ey,
                              VKC_OUT(uint) edgeKey) {
  TriTriResult r;
  bool hit = triTriIntersect(x0, x1, x2, y0, y1, y2, r);
  bool plain = hit && r.count == 2u && (r.flags & (kTriTriCoplanar | kTriTriWithinBand | kTriTriDegenerate)) == 0u;
  return geomTriTriContactFromFeatures(x0, x1, x2, ix, cx, y0, y1, y2, iy, cy,
                                       plain ? r.features : (kTriTriNoFeature | (kTriTriNoFeature << 4u)), ex, ey,
                                       edgeKey);
}

// Segment (p0, p1; cell cs, vertex numbers is) crossing triangle (a, b, c; cell ct, it): the seed's
// "Line Segment vs. Triangle" (segmentTriangle) at x. The segment leaves along the triangle's normal
// to the side that needs the shorter move (the lower end's depth below the plane, or the upper end's
// height): the triangle's element at x, the segment's (an edge element) at x moved by that depth.
// An end on the plane (depth 0) is no contact.
VKC_FN bool geomTriangleSegment(vec3 a, vec3 b, vec3 c, uvec4 it, uint ct, vec3 p0, vec3 p1, uvec4 is,
                                uint cs, VKC_OUT(GeomElement) tri, VKC_OUT(GeomElement) seg) {
  float t;
  vec3 bary;
  tri = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  seg = tri;
  if (!segmentTriangle(p0, p1, a, b, c, t, bary)) return false;
  vec3 n = geomTriangleNormal(a, b, c);
  float s0 = dot(p0 - a, n);
  float s1 = dot(p1 - a, n);
  float up = -min(s0, s1);   // the segment moving along +n
  float down = max(s0, s1);  // along -n
  vec3 m = up <= down ? n : -n;
  float depth = min(up, down);
  vec3 x = lerp3(p0, p1, t);
  tri = geomMeshElement(x, depth, -m, ct, it, 7u);
  seg = geomMeshElement(x - m * depth, depth, m, cs, is, 3u);
  return depth > 0.0f;
}

// Segment (p0, p1; cell cs, is) against tetrahedron (a, b, c, d; cell ct, it): the segment clipped
// to the tetrahedron's four inward half-spaces (a segment wholly inside keeps [0, 1]: the case issue
// 17 says iMSTK misses); a contact when the clipped part has positive length. At the middle of that part the
// point test of geomTetraPoint decides the contact: the segment leaves through the face nearest to
// that point (its outward normal, the height as depth); the segment's element is an edge element.
VKC_FN bool geomSegmentTetra(vec3 p0, vec3 p1, uvec4 is, uint cs, vec3 a, vec3 b, vec3 c, vec3 d, uvec4 it,
                             uint ct, VKC_OUT(GeomElement) seg, VKC_OUT(GeomElement) tet) {
  vec2 span = geomTetraClip(p0, p1, a, b, c, d);
  float lo = span.x;
  float hi = span.y;
  GeomElement point;
  vec3 x = lerp3(p0, p1, 0.5f * (lo + hi));
  bool inside = geomTetraPoint(a, b, c, d, it, ct, x, 0u, tet, point);
  seg = geomMeshElement(x, point.point.w, vec3(point.direction), cs, is, 3u);
  return lo < hi && inside;
}

// x (each component of v) with -0 made +0, by its bits (a device compiler need not keep the sign of a zero:
// lavapipe's cross product gives -0 where the CPU's gives +0; a comparison of the bits cannot be
// folded away as x + 0 can).
VKC_FN float geomPositiveZero(float x) {
  return floatBitsToUint(x) == 0x80000000u ? 0.0f : x;
}
VKC_FN vec3 geomPositiveZeros(vec3 v) {
  return vec3(geomPositiveZero(v.x), geomPositiveZero(v.y), geomPositiveZero(v.z));
}

// Segment X (p0, p1; cell cx, vertex numbers ix) against segment Y (q0, q1; cy, iy) of two line
// meshes (static LineMesh vs LineMesh), each segment a tube of its mesh's thickness; `thickness` the
// sum of the two (a mesh against itself: twice its own). Their closest points p, q
// (geomSegmentSegmentParams: parallel segments meet at the middle of their overlap) closer than the
// thickness are a contact, in the continuous method's convention (geometry_queries_mesh_ccd.cpp):
// both elements edge elements (kGeomCellEdge, corners 0 and 1, index the segment); X's at p, moving
// along n = (p - q) / |p - q| by depth = thickness - |p - q|, Y's at p + n * depth moving along -n.
// Crossing segments (|p - q| = 0) move along their common perpendicular (X's direction cross Y's;
// parallel ones: a perpendicular of X; its zero components +0). Thickness 0 gives no contact
// (touching is none).
VKC_FN bool geomSegmentSegment(vec3 p0, vec3 p1, uvec4 ix, uint cx, vec3 q0, vec3 q1, uvec4 iy, uint cy,
                               float thickness, VKC_OUT(GeomElement) ex, VKC_OUT(GeomElement) ey) {
  vec2 st = geomSegmentSegmentParams(p0, p1, q0, q1);
  vec3 p = lerp3(p0, p1, st.x);
  vec3 q = lerp3(q0, q1, st.y);
  vec3 e = p - q;
  float dist = sqrt(dot(e, e));
  vec3 n;
  if (dist > 0.0f) {
    n = e / dist;
  } else {
    vec3 x = cross(p1 - p0, q1 - q0);
    n = geomPositiveZeros(dot(x, x) > 0.0f ? geomUnit(x) : anyPerpendicular(geomUnit(p1 - p0)));
  }
  float depth = thickness - dist;
  ex = geomMeshElement(p, depth, n, cx, ix, 3u);
  ey = geomMeshElement(p + n * depth, depth, -n, cy, iy, 3u);
  return depth > 0.0f;
}

// --- A triangle or a tetrahedron X against a tetrahedron Y (surface vs tetrahedral mesh, tetrahedral
// vs tetrahedral mesh; not in iMSTK's table: ours): one contact per overlapping pair of cells, by the
// separating axis test, exact for two convex polytopes (the faces of their Minkowski difference have
// X's face normals (a triangle's one, a tetrahedron's four), Y's four, and the cross products of
// their edges (3 or 6 times 6)). The axis of least overlap gives the direction n in which X moves
// and the depth; a cross-product axis only when it beats the best face axis by more than
// kGeomBoxEdgeBias, relative (near-ties go to faces, as geomTetraBox). X's element: its deepest
// feature along -n (corners within kGeomCellTie of its longest edge, as the primitives' rows) at its
// point closest to the middle of Y's feature highest along n; Y's element: that feature (a vertex,
// edge or face of Y), at X's point moved by the depth. Touching (depth 0) is no contact: two meshes
// sharing a face give none.

// Up to four corners (n = 3 a triangle, 4 a tetrahedron; v[3] = v[2] for a triangle).
struct GeomHull {
  vec3 v[4];
  uint n;
};

VKC_FN GeomHull geomMakeHull(vec3 a, vec3 b, vec3 c, vec3 d, uint n) {
  GeomHull h;
  h.v[0] = a;
  h.v[1] = b;
  h.v[2] = c;
  h.v[3] = n == 4u ? d : c;
  h.n = n;
  return h;
}

// Edge k of a hull: a triangle's (k < 3) v0-v1, v1-v2, v2-v0; a tetrahedron's (k < 6) v0-v1, v0-v2,
// v0-v3, v1-v2, v1-v3, v2-v3.
VKC_FN vec3 geomHullEdge(GeomHull h, uint k) {
  if (h.n == 3u) return k == 0u ? h.v[1] - h.v[0] : (k == 1u ? h.v[2] - h.v[1] : h.v[0] - h.v[2]);
  uint i = k < 3u ? 0u : (k < 5u ? 1u : 2u);
  uint j = k < 3u ? k + 1u : (k < 5u ? k - 1u : 3u);
  return h.v[j] - h.v[i];
}

// Face k's normal (any length): a triangle's one; a tetrahedron's face opposite corner k.
VKC_FN vec3 geomHullFaceNormal(GeomHull h, uint k) {
  vec3 f0 = k == 0u ? h.v[1] : h.v[0];
  vec3 f1 = k <= 1u ? h.v[2] : h.v[1];
  vec3 f2 = k <= 2u ? h.v[3] : h.v[2];
  if (h.n == 3u) {
    f0 = h.v[0];
    f1 = h.v[1];
    f2 = h.v[2];
  }
  return cross(f1 - f0, f2 - f0);
}

// The least and greatest height of the hull's corners along u.
VKC_FN vec2 geomHullRange(GeomHull h, vec3 u) {
  float lo = dot(h.v[0], u);
  float hi = lo;
  for (uint k = 1u; k < h.n; ++k) {
    float t = dot(h.v[k], u);
    lo = min(lo, t);
    hi = max(hi, t);
  }
  return vec2(lo, hi);
}

// Axis L (any length; skipped when shorter than kGeomParallelEps times sqrt(scale2)) of the separating
// axis test of X and Y: false when it separates; else the least of X's two overlaps (moving along +L
// or -L) replaces (best, dir) when below best * bias.
VKC_FN bool geomHullAxis(GeomHull x, GeomHull y, vec3 L, float scale2, float bias, VKC_INOUT(float) best,
                         VKC_INOUT(vec3) dir) {
  float l2 = dot(L, L);
  if (l2 <= kGeomParallelEps * kGeomParallelEps * scale2) return true;
  vec3 u = L / sqrt(l2);
  vec2 rx = geomHullRange(x, u);
  vec2 ry = geomHullRange(y, u);
  return geomKeepLeastOverlap(ry.y - rx.x, rx.y - ry.x, u, bias, best, dir);  // X along +u, -u
}

// The corners of the hull lowest along n (unit): a mask, those within kGeomCellTie times its longest
// edge of the lowest.
VKC_FN uint geomHullLowest(GeomHull h, vec3 n) {
  float size2 = 0.0f;
  for (uint k = 0u; k < 6u; ++k) {
    if (h.n == 3u && k >= 3u) break;
    vec3 e = geomHullEdge(h, k);
    size2 = max(size2, dot(e, e));
  }
  float low = geomHullRange(h, n).x;
  float tol = kGeomCellTie * sqrt(size2);
  uint mask = 0u;
  for (uint k = 0u; k < h.n; ++k) {
    if (dot(h.v[k], n) <= low + tol) mask |= 1u << k;
  }
  return mask;
}

// The point of the hull's feature `corners` closest to `target` (all four corners of a tetrahedron, a
// tie of a flat one: their centroid).
VKC_FN vec3 geomHullFeaturePoint(GeomHull h, uint corners, vec3 target) {
  return geomTetraFeaturePoint(h.v[0], h.v[1], h.v[2], h.v[3], corners, target);
}

// X (cell cx, vertex numbers ix: a triangle or a tetrahedron) against tetrahedron Y (cy, iy).
VKC_FN bool geomHullTetra(GeomHull xw, uvec4 ix, uint cx, GeomHull yw, uvec4 iy, uint cy,
                          VKC_OUT(GeomElement) ex, VKC_OUT(GeomElement) ey) {
  ex = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  ey = ex;
  // Both relative to Y's first corner (smaller numbers, less rounding).
  vec3 o = yw.v[0];
  GeomHull x = xw;
  GeomHull y = yw;
  for (uint k = 0u; k < 4u; ++k) {
    x.v[k] = xw.v[k] - o;
    y.v[k] = yw.v[k] - o;
  }
  float best = 3.0e38f;
  vec3 dir = vec3(0.0f, 0.0f, 1.0f);
  uint xFaces = x.n == 3u ? 1u : 4u;
  uint xEdges = x.n == 3u ? 3u : 6u;
  for (uint k = 0u; k < 4u; ++k) {
    if (k < xFaces) {
      vec3 e = geomHullEdge(x, k == 0u ? 0u : k - 1u);
      if (!geomHullAxis(x, y, geomHullFaceNormal(x, k), dot(e, e) * dot(e, e), 1.0f, best, dir)) return false;
    }
  }
  for (uint k = 0u; k < 4u; ++k) {
    vec3 e = geomHullEdge(y, k);
    if (!geomHullAxis(x, y, geomHullFaceNormal(y, k), dot(e, e) * dot(e, e), 1.0f, best, dir)) return false;
  }
  for (uint i = 0u; i < 6u; ++i) {
    if (i >= xEdges) break;
    vec3 ex0 = geomHullEdge(x, i);
    for (uint j = 0u; j < 6u; ++j) {
      vec3 ey0 = geomHullEdge(y, j);
      if (!geomHullAxis(x, y, cross(ex0, ey0), dot(ex0, ex0) * dot(ey0, ey0), 1.0f - kGeomBoxEdgeBias, best, dir))
        return false;
    }
  }
  uint cyMask = geomHullLowest(y, -dir);  // Y's corners highest along dir
  vec3 sum = vec3(0.0f);
  float count = 0.0f;
  for (uint k = 0u; k < 4u; ++k) {
    if ((cyMask & (1u << k)) != 0u) {
      sum += yw.v[k];
      count += 1.0f;
    }
  }
  uint cxMask = geomHullLowest(x, dir);
  vec3 p = geomHullFeaturePoint(xw, cxMask, sum / count);
  ex = geomMeshElement(p, best, dir, cx, ix, cxMask);
  ey = geomMeshElement(p + dir * best, best, -dir, cy, iy, cyMask);
  return best > 0.0f;
}

// Triangle (a, b, c; cell ct, it) against tetrahedron (d0..d3; cell cd, id).
VKC_FN bool geomTriangleTetra(vec3 a, vec3 b, vec3 c, uvec4 it, uint ct, vec3 d0, vec3 d1, vec3 d2, vec3 d3,
                              uvec4 id, uint cd, VKC_OUT(GeomElement) tri, VKC_OUT(GeomElement) tet) {
  return geomHullTetra(geomMakeHull(a, b, c, c, 3u), it, ct, geomMakeHull(d0, d1, d2, d3, 4u), id, cd, tri, tet);
}

// Tetrahedron X (a0..a3; cx, ix) against tetrahedron Y (b0..b3; cy, iy).
VKC_FN bool geomTetraTetra(vec3 a0, vec3 a1, vec3 a2, vec3 a3, uvec4 ix, uint cx, vec3 b0, vec3 b1, vec3 b2,
                           vec3 b3, uvec4 iy, uint cy, VKC_OUT(GeomElement) ex, VKC_OUT(GeomElement) ey) {
  return geomHullTetra(geomMakeHull(a0, a1, a2, a3, 4u), ix, cx, geomMakeHull(b0, b1, b2, b3, 4u), iy, cy, ex, ey);
}

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_H
