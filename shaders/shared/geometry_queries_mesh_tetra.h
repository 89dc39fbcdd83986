// A tetrahedral mesh's tetrahedron against a sphere, a capsule, a plane, an oriented box and a
// cylinder (issue 17; not in iMSTK's table: ours). Written once for the CPU twin
// (src/cpu/geometry_queries_mesh.cpp) and the Vulkan stage (geometry_queries_mesh_slot.h), like
// geometry_queries_mesh.h (GLSL and C++: no recursion, no pointers, every loop bounded by a constant).
// One contact per touching tetrahedron, as the surface-mesh rows: the tetrahedron's element is the
// feature of the tetrahedron the contact is on (geomMeshElement with the tetrahedron's corners: a
// vertex, an edge or a face of it; index the tetrahedron, the seed's parentId), or the whole
// tetrahedron (corners 15) when the other shape reaches its inside (the tetrahedral mesh vs point set
// rule: it leaves through the nearest face); the other's element is kElementPointDirection at its
// deepest point. pointB = pointA + directionA * depth as everywhere; touching (depth 0) is no contact.
//
// Corners a, b, c, d are corners 0..3; face k is the face opposite corner k (geomTetraPoint's order:
// face 0 = (b, c, d), 1 = (a, c, d), 2 = (a, b, d), 3 = (a, b, c)).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_TETRA_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_TETRA_H
#include "geometry_queries_mesh_prims.h"

VKC_NAMESPACE_BEGIN

VKC_FN vec3 geomTetraCorner(vec3 a, vec3 b, vec3 c, vec3 d, uint k) {
  return k == 0u ? a : (k == 1u ? b : (k == 2u ? c : d));
}

// The part [lo, hi] (parameters) of segment p0 -> p1 inside the tetrahedron: the segment clipped to
// its four inward half-spaces (a point on a face counts as outside). lo >= hi: none.
VKC_FN vec2 geomTetraClip(vec3 p0, vec3 p1, vec3 a, vec3 b, vec3 c, vec3 d) {
  float lo = 0.0f;
  float hi = 1.0f;
  for (uint k = 0u; k < 4u; ++k) {
    vec3 f0 = k == 0u ? b : a;
    vec3 f1 = k <= 1u ? c : b;
    vec3 f2 = k <= 2u ? d : c;
    vec3 n = cross(f1 - f0, f2 - f0);
    if (dot(geomTetraCorner(a, b, c, d, k) - f0, n) > 0.0f) n = -n;  // outward
    float h0 = dot(p0 - f0, n);
    float h1 = dot(p1 - f0, n);
    if (h0 >= 0.0f && h1 >= 0.0f) {
      lo = 1.0f;
      hi = 0.0f;
    } else if (h0 > 0.0f) {
      lo = max(lo, h0 / (h0 - h1));
    } else if (h1 > 0.0f) {
      hi = min(hi, h0 / (h0 - h1));
    }
  }
  return vec2(lo, hi);
}

// A corner mask of face k's triangle (bit j: its corner j) as corners of the tetrahedron.
VKC_FN uint geomTetraFaceCorners(uint k, uint triCorners) {
  uint mask = 0u;
  for (uint j = 0u; j < 3u; ++j) {
    if ((triCorners & (1u << j)) != 0u) mask |= 1u << (j + (j >= k ? 1u : 0u));
  }
  return mask;
}

// Capsule (axis p0 -> p1, radius r; a sphere: p0 = p1) against tetrahedron `cell` (a, b, c, d; vertex
// numbers ids):
//   - the axis enters the tetrahedron (geomTetraClip: a part of positive length inside): at the middle
//     x of that part the point rule of geomTetraPoint (the nearest face, its outward normal n, x's
//     height h under it): the capsule leaves along n by h + r, its element at x - n r; the
//     tetrahedron's element (corners 15) at x + n h;
//   - otherwise the closest points of the axis and the tetrahedron's four faces (geomAxisTriangleClosest
//     per face, the first of equal distances in face order): the ball of the capsule there against
//     that feature (a vertex, edge or face of the tetrahedron), as the surface-mesh capsule pair; an
//     axis touching the boundary leaves along that face's outward normal.
VKC_FN bool geomTetraCapsule(vec3 a, vec3 b, vec3 c, vec3 d, uvec4 ids, uint cell, vec3 p0, vec3 p1, float r,
                             VKC_OUT(GeomElement) tet, VKC_OUT(GeomElement) prim) {
  vec2 span = geomTetraClip(p0, p1, a, b, c, d);
  if (span.x < span.y) {
    vec3 x = lerp3(p0, p1, 0.5f * (span.x + span.y));
    GeomElement point;
    if (geomTetraPoint(a, b, c, d, ids, cell, x, 0u, tet, point)) {
      vec3 n = vec3(point.direction);
      float depth = point.point.w + r;
      tet.point.w = depth;
      prim = geomMakeElement(x - n * r, depth, n, kElementPointDirection, kGeomNoIndex);
      return true;
    }
  }
  float best = 3.4e38f;
  vec3 bestQ = a;
  vec3 bestC = p0;
  vec3 bestN = vec3(0.0f, 0.0f, 1.0f);
  uint bestCorners = 1u;
  for (uint k = 0u; k < 4u; ++k) {
    vec3 f0 = k == 0u ? b : a;
    vec3 f1 = k <= 1u ? c : b;
    vec3 f2 = k <= 2u ? d : c;
    vec3 q;
    uint corners;
    float t = geomAxisTriangleClosest(f0, f1, f2, p0, p1, q, corners);
    vec3 x = lerp3(p0, p1, t);
    vec3 e = x - q;
    float dd = dot(e, e);
    if (dd < best) {
      best = dd;
      bestQ = q;
      bestC = x;
      bestCorners = geomTetraFaceCorners(k, corners);
      vec3 n = geomTriangleNormal(f0, f1, f2);
      bestN = dot(geomTetraCorner(a, b, c, d, k) - f0, n) > 0.0f ? -n : n;
    }
  }
  vec3 n;
  float depth;
  bool hit = geomBallFeature(bestC, r, bestQ, bestN, n, depth);
  tet = geomMeshElement(bestQ, depth, -n, cell, ids, bestCorners);
  prim = geomMakeElement(bestC - n * r, depth, n, kElementPointDirection, kGeomNoIndex);
  return hit;
}

// The corners of the tetrahedron deepest along -n (unit): a corner mask, those within kGeomCellTie
// times the longest edge of the lowest; low: the lowest height dot(corner, n).
VKC_FN uint geomTetraLowest(vec3 a, vec3 b, vec3 c, vec3 d, vec3 n, VKC_OUT(float) low) {
  float size2 = 0.0f;
  low = 3.4e38f;
  for (uint i = 0u; i < 4u; ++i) {
    vec3 vi = geomTetraCorner(a, b, c, d, i);
    low = min(low, dot(vi, n));
    for (uint j = i + 1u; j < 4u; ++j) {
      vec3 e = geomTetraCorner(a, b, c, d, j) - vi;
      size2 = max(size2, dot(e, e));
    }
  }
  float tol = kGeomCellTie * sqrt(size2);
  uint mask = 0u;
  for (uint k = 0u; k < 4u; ++k) {
    if (dot(geomTetraCorner(a, b, c, d, k), n) <= low + tol) mask |= 1u << k;
  }
  return mask;
}

// The point of the tetrahedron's feature `corners` closest to `target` (a corner, an edge's closest
// point, a face's closest point; all four corners, a tie of a flat tetrahedron: their centroid).
VKC_FN vec3 geomTetraFeaturePoint(vec3 a, vec3 b, vec3 c, vec3 d, uint corners, vec3 target) {
  vec3 v[3];
  v[0] = a;
  v[1] = a;
  v[2] = a;
  uint n = 0u;
  for (uint k = 0u; k < 4u; ++k) {
    if ((corners & (1u << k)) != 0u && n < 3u) v[n++] = geomTetraCorner(a, b, c, d, k);
  }
  if (corners == 15u) return (a + b + c + d) * 0.25f;
  if (n == 3u) return triClosestPoint(target, v[0], v[1], v[2]).point;
  if (n == 2u) return lerp3(v[0], v[1], segmentClosestParam(target, v[0], v[1]));
  return v[0];
}

// Plane against tetrahedron `cell`: the PointSet-Plane rule on its corners as one contact, as the
// surface-mesh plane pair (geomCellPlane): n the plane's normal (geomPlaneNormalFor at the centroid:
// a two-sided plane pushes the tetrahedron to the side of its centroid), the deepest corners below the
// plane (ties within kGeomCellTie of the longest edge: a vertex, an edge or a face of the
// tetrahedron), the element at their middle, depth the deepest corner's.
VKC_FN bool geomTetraPlane(vec3 a, vec3 b, vec3 c, vec3 d, uvec4 ids, uint cell, GeomShape plane,
                           VKC_OUT(GeomElement) tet, VKC_OUT(GeomElement) prim) {
  vec3 n = geomPlaneNormalFor(plane, (a + b + c + d) * 0.25f);
  float low;
  uint corners =
      geomTetraLowest(a - vec3(plane.p0), b - vec3(plane.p0), c - vec3(plane.p0), d - vec3(plane.p0), n, low);
  vec3 sum = vec3(0.0f);
  float count = 0.0f;
  for (uint k = 0u; k < 4u; ++k) {
    if ((corners & (1u << k)) != 0u) {
      sum += geomTetraCorner(a, b, c, d, k);
      count += 1.0f;
    }
  }
  return geomCellContact(sum / count, n, -low, corners, cell, ids, tet, prim);
}

// Axis L (any length; skipped when shorter than kGeomParallelEps times `scale`) of the separating
// axis test of the tetrahedron (corners relative to the box's centre) and box t: false when it
// separates; else the least of the two overlaps (the tetrahedron moving along +L or -L) replaces
// (best, dir) when below best * bias.
VKC_FN bool geomTetraBoxAxis(vec3 a, vec3 b, vec3 c, vec3 d, GeomConvex t, vec3 L, float scale, float bias,
                             VKC_INOUT(float) best, VKC_INOUT(vec3) dir) {
  float l2 = dot(L, L);
  if (l2 <= kGeomParallelEps * kGeomParallelEps * scale * scale) return true;
  vec3 u = L / sqrt(l2);
  float lo = min(min(dot(a, u), dot(b, u)), min(dot(c, u), dot(d, u)));
  float hi = max(max(dot(a, u), dot(b, u)), max(dot(c, u), dot(d, u)));
  float e = geomCentredSupport(t, u);
  return geomKeepLeastOverlap(e - lo, hi + e, u, bias, best, dir);  // moving along +u, -u
}

// Oriented box against tetrahedron `cell`: the separating axis test, exact (the Minkowski
// difference's faces have the box's 3 face normals, the tetrahedron's 4 and the 18 cross products of
// their edges). The axis of least overlap gives the direction n and the depth; a cross-product axis
// only when it beats the best face axis by more than kGeomBoxEdgeBias, relative (as geomCellBox). The
// tetrahedron's element: its deepest feature along -n (geomTetraLowest), at its point closest to the
// box's support point along n.
VKC_FN bool geomTetraBox(vec3 a, vec3 b, vec3 c, vec3 d, uvec4 ids, uint cell, GeomShape box,
                         VKC_OUT(GeomElement) tet, VKC_OUT(GeomElement) prim) {
  GeomConvex t = geomMakeConvex(box);
  tet = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  prim = tet;
  vec3 o = t.centre;
  vec3 ra = a - o, rb = b - o, rc = c - o, rd = d - o;
  float best = 3.0e38f;
  vec3 dir = vec3(0.0f, 0.0f, 1.0f);
  for (uint i = 0u; i < 3u; ++i) {
    if (!geomTetraBoxAxis(ra, rb, rc, rd, t, geomAxis(t, i), 1.0f, 1.0f, best, dir)) return false;
  }
  for (uint k = 0u; k < 4u; ++k) {
    vec3 f0 = k == 0u ? b : a;
    vec3 f1 = k <= 1u ? c : b;
    vec3 f2 = k <= 2u ? d : c;
    vec3 e = f1 - f0;
    if (!geomTetraBoxAxis(ra, rb, rc, rd, t, cross(f1 - f0, f2 - f0), dot(e, e) + dot(f2 - f0, f2 - f0), 1.0f,
                          best, dir))
      return false;
  }
  for (uint i = 0u; i < 3u; ++i) {
    for (uint j = i + 1u; j < 4u; ++j) {
      vec3 e = geomTetraCorner(a, b, c, d, j) - geomTetraCorner(a, b, c, d, i);
      float el = sqrt(dot(e, e));
      for (uint k = 0u; k < 3u; ++k) {
        if (!geomTetraBoxAxis(ra, rb, rc, rd, t, cross(e, geomAxis(t, k)), el, 1.0f - kGeomBoxEdgeBias, best,
                              dir))
          return false;
      }
    }
  }
  float low;
  uint corners = geomTetraLowest(ra, rb, rc, rd, dir, low);
  vec3 q = geomTetraFeaturePoint(a, b, c, d, corners, geomSupportPoint(t, dir));
  return geomCellContact(q, dir, best, corners, cell, ids, tet, prim);
}

// The tetrahedron as the first shape of GJK, EPA and the search (kGeomConvexTetra).
VKC_FN GeomConvex geomTetraConvex(vec3 a, vec3 b, vec3 c, vec3 d) {
  GeomConvex s;
  s.centre = a;
  s.axis0 = b - a;
  s.axis1 = c - a;
  s.axis2 = d - a;
  s.size = vec3(sqrt(dot(s.axis0, s.axis0)), sqrt(dot(s.axis1, s.axis1)), sqrt(dot(s.axis2, s.axis2)));
  s.type = kGeomConvexTetra;
  return s;
}

// geomTetraCylinder's contact (below) from the penetration (depth, u) of the tetrahedron (GJK's s)
// and the cylinder t.
VKC_FN bool geomTetraCylinderContact(vec3 a, vec3 b, vec3 c, vec3 d, uvec4 ids, uint cell, GeomConvex t,
                                     float depth, vec3 u, VKC_OUT(GeomElement) tet,
                                     VKC_OUT(GeomElement) prim) {
  vec3 n = -u;  // the tetrahedron (GJK's s) moves along -u
  vec3 o = t.centre;
  float low;
  uint corners = geomTetraLowest(a - o, b - o, c - o, d - o, n, low);
  vec3 q = geomTetraFeaturePoint(a, b, c, d, corners, geomSupportPoint(t, n));
  return geomCellContact(q, n, depth, corners, cell, ids, tet, prim);
}

// Cylinder against tetrahedron `cell`, as a triangle against a cylinder (geomCellCylinder): GJK on
// the tetrahedron and the cylinder decides overlap, EPA's direction is one more candidate of the
// search, which evaluates the exact overlap (the search alone where GJK or EPA cannot finish). The
// depth and direction n (the way the tetrahedron moves) give the contact: the tetrahedron's deepest
// feature along -n (geomTetraLowest), at its point closest to the cylinder's support point along n.
// A cylinder wholly inside the tetrahedron, or the reverse, is covered: the depth is the penetration
// depth either way.
VKC_FN bool geomTetraCylinder(vec3 a, vec3 b, vec3 c, vec3 d, uvec4 ids, uint cell, GeomShape cylinder,
                              VKC_OUT(GeomElement) tet, VKC_OUT(GeomElement) prim) {
  GeomConvex t = geomMakeConvex(cylinder);
  tet = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  prim = tet;
  float depth;
  vec3 u;
  if (!geomConvexPenetration(geomTetraConvex(a, b, c, d), t, true, depth, u)) return false;
  return geomTetraCylinderContact(a, b, c, d, ids, cell, t, depth, u, tet, prim);
}

// One tetrahedron against a sphere, capsule, plane or oriented box s (a cylinder: geomTetraCylinder,
// apart: the family shaders that hold these have no GJK).
VKC_FN bool geomTetraPrimitive(vec3 a, vec3 b, vec3 c, vec3 d, uvec4 ids, uint cell, GeomShape s,
                               VKC_OUT(GeomElement) tet, VKC_OUT(GeomElement) prim) {
  if (s.info.x == kGeomPlane) return geomTetraPlane(a, b, c, d, ids, cell, s, tet, prim);
  if (s.info.x == kGeomOrientedBox) return geomTetraBox(a, b, c, d, ids, cell, s, tet, prim);
  vec3 p0 = vec3(s.p0);
  vec3 p1 = s.info.x == kGeomCapsule ? vec3(s.p1) : p0;
  return geomTetraCapsule(a, b, c, d, ids, cell, p0, p1, s.p0.w, tet, prim);
}

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_TETRA_H
