// The mesh rows of the geometry queries against a plane, an oriented box and a cylinder (issue 17):
// a surface mesh's triangle or a line mesh's segment (a "cell") against one primitive, one contact
// per touching cell. Written once for the CPU twin (src/cpu/geometry_queries_mesh.cpp) and the
// future compute shader, like geometry_queries_mesh.h (GLSL and C++: no recursion, no pointers,
// every loop bounded by a constant).
//
// Every pair reports, as the mesh-sphere pairs do: the mesh's element (geomMeshElement: the cell's
// feature as a vertex, edge or triangle in the cell word, its point on the cell, direction n the way
// the mesh moves to separate, depth d) and the primitive's kElementPointDirection element (point = the
// mesh's point + n d, direction -n, depth d). Touching (d <= 0) is no contact.
//
// The feature: the corners of the cell deepest along -n, those within kGeomCellTie times the cell's
// longest edge of the deepest one (one corner: a vertex; two: the edge between them; three: the
// triangle). A cell parallel to the plane or to a box face thus gives one contact on its edge or face,
// not one per corner.
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_PRIMS_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_PRIMS_H
#include "geometry_queries_mesh.h"

VKC_NAMESPACE_BEGIN

// A triangle (n = 3) or a segment (n = 2, v2 = v1) of a mesh.
struct GeomMeshCell {
  vec3 v0;
  vec3 v1;
  vec3 v2;
  uint n;
};

VKC_CONSTANT(float, kGeomCellTie, 1e-5f);

// A triangle against an implicit geometry: its barycentric lattice's order
// (geometry_queries_mesh_implicit.h).
VKC_CONSTANT(uint, kGeomCellImplicitOrder, 8u);

VKC_FN GeomMeshCell geomMakeCell(vec3 a, vec3 b, vec3 c, uint n) {
  GeomMeshCell cell;
  cell.v0 = a;
  cell.v1 = b;
  cell.v2 = n == 3u ? c : b;
  cell.n = n;
  return cell;
}

VKC_FN vec3 geomCellCorner(GeomMeshCell c, uint k) {
  return k == 0u ? c.v0 : (k == 1u ? c.v1 : c.v2);
}

// The length of the cell's longest edge.
VKC_FN float geomCellSize(GeomMeshCell c) {
  vec3 u = c.v1 - c.v0, v = c.v2 - c.v0, w = c.v2 - c.v1;
  return sqrt(max(dot(u, u), max(dot(v, v), dot(w, w))));
}

// The corners of the cell deepest along -n (unit): a corner mask (bit k: corner k), the corners whose
// height dot(v - v0, n) is within kGeomCellTie * size of the lowest; low: the lowest height.
VKC_FN uint geomCellLowest(GeomMeshCell c, vec3 n, VKC_OUT(float) low) {
  float h0 = 0.0f;
  float h1 = dot(c.v1 - c.v0, n);
  float h2 = c.n == 3u ? dot(c.v2 - c.v0, n) : 3.0e38f;
  low = min(h0, min(h1, h2));
  float tol = kGeomCellTie * geomCellSize(c);
  return (h0 <= low + tol ? 1u : 0u) | (h1 <= low + tol ? 2u : 0u) | (h2 <= low + tol ? 4u : 0u);
}

// The point of the cell's feature `corners` closest to `target` (a corner; the edge's closest point;
// the triangle's closest point).
VKC_FN vec3 geomCellFeaturePoint(GeomMeshCell c, uint corners, vec3 target) {
  if (corners == 7u) return triClosestPoint(target, c.v0, c.v1, c.v2).point;
  if (corners == 1u || corners == 2u || corners == 4u)
    return geomCellCorner(c, corners == 1u ? 0u : (corners == 2u ? 1u : 2u));
  vec3 e0 = corners == 6u ? c.v1 : c.v0;
  vec3 e1 = corners == 3u ? c.v1 : c.v2;
  return lerp3(e0, e1, segmentClosestParam(target, e0, e1));
}

// The two elements of a contact: the mesh's at `point` (feature `corners`), the primitive's at
// point + n d; true when d > 0.
VKC_FN bool geomCellContact(vec3 point, vec3 n, float depth, uint corners, uint cell, uvec4 ids,
                            VKC_OUT(GeomElement) mesh, VKC_OUT(GeomElement) prim) {
  mesh = geomMeshElement(point, depth, n, cell, ids, corners);
  prim = geomMakeElement(point + n * depth, depth, -n, kElementPointDirection, kGeomNoIndex);
  return depth > 0.0f;
}

// --- Plane: the seed's PointSet-Plane rule on the cell's corners, as one contact. n: the plane's
// normal (geomPlaneNormalFor at the cell's centroid: a two-sided plane pushes the cell to the side of
// its centroid; one-sided: always along the normal). The cell's deepest feature below the plane (the
// middle of its tied corners: a vertex, an edge's middle, a triangle's centroid), depth the deepest
// corner's depth below the plane.
VKC_FN bool geomCellPlane(GeomMeshCell c, uvec4 ids, uint cell, GeomShape plane, VKC_OUT(GeomElement) mesh,
                          VKC_OUT(GeomElement) prim) {
  vec3 mid = c.n == 3u ? (c.v0 + c.v1 + c.v2) / 3.0f : (c.v0 + c.v1) * 0.5f;
  vec3 n = geomPlaneNormalFor(plane, mid);
  float low;
  uint corners = geomCellLowest(c, n, low);
  float depth = -(dot(c.v0 - vec3(plane.p0), n) + low);
  vec3 sum = vec3(0.0f);
  float count = 0.0f;
  for (uint k = 0u; k < 3u; ++k) {
    if ((corners & (1u << k)) != 0u) {
      sum += geomCellCorner(c, k);
      count += 1.0f;
    }
  }
  return geomCellContact(sum / count, n, depth, corners, cell, ids, mesh, prim);
}

// The contact of a cell and a box or cylinder t along the mesh's direction n (unit) with depth d:
// the cell's deepest feature along -n, its point closest to t's point farthest along n
// (geomSupportPoint: the middle of a face or line on ties).
VKC_FN bool geomCellConvexContact(GeomMeshCell c, GeomConvex t, vec3 n, float depth, uvec4 ids, uint cell,
                                  VKC_OUT(GeomElement) mesh, VKC_OUT(GeomElement) prim) {
  float low;
  uint corners = geomCellLowest(c, n, low);
  vec3 q = geomCellFeaturePoint(c, corners, geomSupportPoint(t, n));
  return geomCellContact(q, n, depth, corners, cell, ids, mesh, prim);
}

// The cell as a GeomConvex of type kGeomConvexCell: the shared math's overlap (geomOverlapAlong),
// GJK, EPA and search take it as their first shape.
VKC_FN GeomConvex geomCellConvex(GeomMeshCell c) {
  GeomConvex s;
  s.centre = c.v0;
  s.axis0 = c.v1 - c.v0;
  s.axis1 = c.v2 - c.v0;
  s.axis2 = c.n == 3u ? cross(s.axis0, s.axis1) : vec3(0.0f);
  s.size = vec3(sqrt(dot(s.axis0, s.axis0)), sqrt(dot(s.axis1, s.axis1)), 0.0f);
  s.type = kGeomConvexCell;
  return s;
}

// One axis (unit u) of a separating axis test, with the overlaps of the mesh's cell moving along +u
// (up) and -u (down): false when either is <= 0 (the axis separates); else the lesser replaces
// (best, dir) when below best * bias.
VKC_FN bool geomKeepLeastOverlap(float up, float down, vec3 u, float bias, VKC_INOUT(float) best,
                                 VKC_INOUT(vec3) dir) {
  if (up <= 0.0f || down <= 0.0f) return false;
  float o = min(up, down);
  if (o < best * bias) {
    best = o;
    dir = up <= down ? u : -u;
  }
  return true;
}

// Axis L (any length; skipped when shorter than kGeomParallelEps times `scale`) of the separating
// axis test of cell s and box t: false when it separates; else the least of its two overlaps (the
// mesh moving along +L or -L) replaces (best, dir) when below best * bias.
VKC_FN bool geomCellBoxAxis(GeomConvex s, GeomConvex t, vec3 L, float scale, float bias,
                            VKC_INOUT(float) best, VKC_INOUT(vec3) dir) {
  float l2 = dot(L, L);
  if (l2 <= kGeomParallelEps * kGeomParallelEps * scale * scale) return true;
  vec3 u = L / sqrt(l2);
  // geomOverlapAlong(s, t, v): s moving along -v.
  return geomKeepLeastOverlap(geomOverlapAlong(s, t, -u), geomOverlapAlong(s, t, u), u, bias, best, dir);
}

// --- Oriented box: the separating axis test, exact (the faces of the Minkowski difference of a
// triangle and a box have the box's 3 face normals, the triangle's normal and the 9 cross products
// of their edges; a segment's: the box's 3 normals and its 3 cross products). The axis of least
// overlap gives n and the depth (the penetration depth); a cross-product axis only when it beats the
// best face axis by more than kGeomBoxEdgeBias, relative (near-ties go to faces, as box-box).
VKC_FN bool geomCellBox(GeomMeshCell c, uvec4 ids, uint cell, GeomShape box, VKC_OUT(GeomElement) mesh,
                        VKC_OUT(GeomElement) prim) {
  GeomConvex t = geomMakeConvex(box);
  GeomConvex s = geomCellConvex(c);
  float best = 3.0e38f;
  vec3 dir = vec3(0.0f, 0.0f, 1.0f);
  mesh = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  prim = mesh;
  float size = geomCellSize(c);
  for (uint i = 0u; i < 3u; ++i) {
    if (!geomCellBoxAxis(s, t, geomAxis(t, i), 1.0f, 1.0f, best, dir)) return false;
  }
  if (c.n == 3u && !geomCellBoxAxis(s, t, s.axis2, size * size, 1.0f, best, dir)) return false;
  for (uint k = 0u; k < c.n; ++k) {
    if (k == 1u && c.n == 2u) break;
    vec3 e = k == 0u ? s.axis0 : (k == 1u ? c.v2 - c.v1 : c.v0 - c.v2);
    float el = sqrt(dot(e, e));
    for (uint i = 0u; i < 3u; ++i) {
      if (!geomCellBoxAxis(s, t, cross(e, geomAxis(t, i)), el, 1.0f - kGeomBoxEdgeBias, best, dir))
        return false;
    }
  }
  return geomCellConvexContact(c, t, dir, best, ids, cell, mesh, prim);
}

// --- Cylinder: no closed form (the rim curves the Minkowski difference). GJK on the cell and the
// cylinder decides overlap, as cylinder-cylinder (geomConvexSearchDeepest). EPA's polytope lies
// inside the curved difference, so its depth falls short of the true one (by some 1e-5 relative) and
// its direction is off by as much: that direction is one more candidate of cylinder-cylinder's search
// (geomConvexSearch: the cell's edges and normal, their cross products with the axis, the axis, the
// centres' difference and the Fibonacci directions, the least refined by the pattern search), which
// evaluates the exact overlap. Where GJK or EPA cannot finish, the search alone answers.
VKC_FN bool geomCellCylinder(GeomMeshCell c, uvec4 ids, uint cell, GeomShape cylinder,
                             VKC_OUT(GeomElement) mesh, VKC_OUT(GeomElement) prim) {
  GeomConvex t = geomMakeConvex(cylinder);
  mesh = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  prim = mesh;
  GeomConvex s = geomCellConvex(c);
  float depth;
  vec3 u;
  if (!geomConvexPenetration(s, t, true, depth, u)) return false;
  return geomCellConvexContact(c, t, -u, depth, ids, cell, mesh, prim);  // s moves along -u
}

// One cell (corners a, b, c2 of a triangle; a, b of a segment: n = 2) against a plane, box or
// cylinder.
VKC_FN bool geomCellPrimitive(vec3 a, vec3 b, vec3 c2, uint n, uvec4 ids, uint cell, GeomShape s,
                              VKC_OUT(GeomElement) mesh, VKC_OUT(GeomElement) prim) {
  GeomMeshCell c = geomMakeCell(a, b, c2, n);
  if (s.info.x == kGeomPlane) return geomCellPlane(c, ids, cell, s, mesh, prim);
  if (s.info.x == kGeomOrientedBox) return geomCellBox(c, ids, cell, s, mesh, prim);
  return geomCellCylinder(c, ids, cell, s, mesh, prim);
}

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_PRIMS_H
