// The mesh rows of the geometry queries (include/vkcollide/geometry_queries.h, issue 17): the mesh
// geometry types, the cell element encoding and the per-cell arithmetic, written once for the CPU
// twin (src/cpu/geometry_queries_mesh.cpp) and the future compute shader. Compiled as GLSL and as C++
// (common.h): no recursion, no pointers, structs by value, every loop bounded by a constant.
//
// A mesh geometry (GeomShape):
//   info.y, info.z: its vertices are the points [info.y, info.y + info.z) of the points array (the
//                   array the point sets use: a point set and a mesh may share vertices);
//   p2.x: the first entry of its cells in the cells array; p2.y: its cell count (whole numbers below
//         2^24, as floats, like an implicit geometry's dimensions); every other field 0.
//   A cell is kGeomMeshCorners(type) consecutive uint entries: vertex numbers relative to info.y
//   (triangle a, b, c; segment a, b; tetrahedron a, b, c, d).
// The per-cell functions below take the cell's vertex positions and its vertex numbers; the driver
// (a BVH over the cells on the CPU) calls them for the cells whose boxes overlap the other geometry's
// and keeps the contacts in cell order.
//
// Contact elements of a mesh's side (GeomElement, 48 bytes, unchanged): the seed's CellIndexElement
// packed into the existing fields, every vertex id recoverable.
//   - a vertex of a cell (the closest feature is a corner): kElementPointIndexDirection, index = the
//     vertex number (relative to the mesh's first vertex), as iMSTK's PointIndexDirectionElement;
//   - an edge, a triangle, a segment or a tetrahedron: kElementCellIndex, index = the parent cell (the
//     triangle, segment or tetrahedron in the mesh's cell order: the seed's parentId);
//   - pad (the "cell word" of a mesh element): bits 0..7 the cell type (kGeomCell*), bits 8..11 the
//     corners of the parent cell that make up the feature (bit k: corner k; the seed's ids are those
//     corners' vertex numbers, in corner order, and idCount their number). 0 for other elements.
// point, direction and depth are filled as for every element (the contact point on the mesh, the
// direction in which the mesh side moves to separate, the depth).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_H
#include "collide_meshes_math.h"
#include "geometry_queries_math.h"

VKC_NAMESPACE_BEGIN

// Mesh geometry types (GeomShape::info.x), after the analytic ones (kGeomTypeCount): in the canonical
// pair order a mesh therefore always comes after the other geometry.
VKC_CONSTANT(uint, kGeomSurfaceMesh, 7u);
VKC_CONSTANT(uint, kGeomLineMesh, 8u);
VKC_CONSTANT(uint, kGeomTetrahedralMesh, 9u);
VKC_CONSTANT(uint, kGeomMeshTypeEnd, 10u);
#ifdef __cplusplus
static_assert(kGeomTetrahedralMesh == kGeomTypeCount + 2u);  // geomQueryFamily's number for it
#endif

// The element type of a cell (GeomElement::type).
VKC_CONSTANT(uint, kElementCellIndex, 2u);

// Cell types of the cell word (GeomElement::pad of a mesh element), the seed's IMSTK_VERTEX ... .
VKC_CONSTANT(uint, kGeomCellVertex, 1u);
VKC_CONSTANT(uint, kGeomCellEdge, 2u);
VKC_CONSTANT(uint, kGeomCellTriangle, 3u);
VKC_CONSTANT(uint, kGeomCellTetrahedron, 4u);

// Cell entries and vertex numbers: at most 2^24 (exact as floats in p2).
VKC_CONSTANT(uint, kGeomMeshMaxEntries, 16777216u);

VKC_FN bool geomIsMesh(uint type) {
  return type >= kGeomSurfaceMesh && type < kGeomMeshTypeEnd;
}

// Vertices per cell of a mesh type.
VKC_FN uint geomMeshCorners(uint type) {
  if (type == kGeomLineMesh) return 2u;
  if (type == kGeomTetrahedralMesh) return 4u;
  return 3u;
}

// The static pairs with a mesh built so far (lo <= hi in type order; the mesh is hi): surface mesh
// or line mesh against a sphere, capsule, cylinder, oriented box, plane or implicit geometry (the last
// four: geometry_queries_mesh_prims.h, geometry_queries_mesh_implicit.h); tetrahedral mesh against a
// point set; a closed surface
// mesh (the geometry's flags: closed) against a point set; mesh against mesh (CPU,
// geometry_queries_mesh_mesh.h): surface-surface, surface-line, line-tetrahedral, line-line; a
// tetrahedral mesh against a sphere, capsule, plane, oriented box (geometry_queries_mesh_tetra.h) or
// implicit geometry (geometry_queries_mesh_tetra_implicit.h).
VKC_FN bool geomMeshPairSupported(uint lo, uint hi, bool closed) {
  if (hi == kGeomSurfaceMesh && lo == kGeomPointSet) return closed;
  if (hi == kGeomSurfaceMesh && lo == kGeomSurfaceMesh) return true;
  if (hi == kGeomLineMesh && lo == kGeomSurfaceMesh) return true;
  if (hi == kGeomTetrahedralMesh && geomIsMesh(lo)) return true;  // surface, line, tetrahedral
  if (hi == kGeomLineMesh && lo == kGeomLineMesh) return true;
  if (hi == kGeomSurfaceMesh || hi == kGeomLineMesh) return lo <= kGeomPlane || lo == kGeomImplicit;
  if (hi == kGeomTetrahedralMesh) {
    return lo == kGeomPointSet || lo <= kGeomPlane || lo == kGeomImplicit;
  }
  return false;
}

// Slots (contacts at most) per cell: 2 for a surface mesh against a capsule (a capsule lying along a
// face: the ends of the axis' span over it), else 1.
VKC_FN uint geomMeshSlotsPerCell(uint meshType, uint otherType) {
  return meshType == kGeomSurfaceMesh && otherType == kGeomCapsule ? 2u : 1u;
}

VKC_FN uint geomCellWord(uint cellType, uint corners) {
  return cellType | (corners << 8u);
}

// The mesh side's element of a feature given by its corners (a bit mask of the parent cell's
// corners: one corner a vertex, two an edge, three a triangle, four a tetrahedron) and the vertex
// numbers of the parent's corners.
VKC_FN GeomElement geomMeshElement(vec3 point, float depth, vec3 direction, uint cell, uvec4 ids,
                                   uint corners) {
  uint count = 0u;
  uint corner = 0u;
  for (uint k = 0u; k < 4u; ++k) {
    if ((corners & (1u << k)) != 0u) {
      if (count == 0u) corner = k;
      ++count;
    }
  }
  GeomElement e;
  if (count == 1u) {
    e = geomMakeElement(point, depth, direction, kElementPointIndexDirection, ids[corner]);
    e.pad = geomCellWord(kGeomCellVertex, corners);
  } else {
    e = geomMakeElement(point, depth, direction, kElementCellIndex, cell);
    uint type = count == 2u ? kGeomCellEdge : (count == 3u ? kGeomCellTriangle : kGeomCellTetrahedron);
    e.pad = geomCellWord(type, corners);
  }
  return e;
}

// The feature of a triangle's closest point: the corners with a nonzero barycentric weight (a point
// of the face region on an edge or at a corner counts as that edge or vertex, as iMSTK's cases).
VKC_FN uint geomTriCorners(TriClosest cp) {
  return (cp.bary.x != 0.0f ? 1u : 0u) | (cp.bary.y != 0.0f ? 2u : 0u) | (cp.bary.z != 0.0f ? 4u : 0u);
}

// The unit normal (b - a) x (c - a) of a triangle, or a perpendicular of its longest edge when it has
// no usable plane (a sliver).
VKC_FN vec3 geomTriangleNormal(vec3 a, vec3 b, vec3 c) {
  vec3 u = b - a, v = c - a;
  vec3 n = cross(u, v);
  if (triHasPlane(u, v, n)) return geomUnit(n);
  vec3 w = c - b;
  vec3 e = u;
  if (dot(v, v) > dot(e, e)) e = v;
  if (dot(w, w) > dot(e, e)) e = w;
  return anyPerpendicular(geomUnit(e));
}

// A ball (centre c, radius r) against a mesh feature whose closest point to c is q; fallback: the
// direction used when c lies on the feature. The ball's element (its deepest point, pushed away
// from the feature) and the mesh's (q, pushed back); a contact when the distance is below r.
VKC_FN bool geomBallFeature(vec3 c, float r, vec3 q, vec3 fallback, VKC_OUT(vec3) n, VKC_OUT(float) depth) {
  vec3 d = c - q;
  float dd = dot(d, d);
  float dist = sqrt(dd);
  n = dist > 0.0f ? d / dist : fallback;
  depth = r - dist;
  return depth > 0.0f;
}

// Sphere (centre c, radius r) against triangle `cell` (a, b, c2; vertex numbers ids.xyz): the seed's
// BidirectionalSurfaceMeshToSphereCD, the closest point of the triangle in its three cases (vertex,
// edge, face). The sphere moves away from the closest point; a centre on the triangle moves along
// the triangle's normal.
VKC_FN bool geomTriangleBall(vec3 a, vec3 b, vec3 c2, uvec4 ids, uint cell, vec3 c, float r,
                             VKC_OUT(GeomElement) mesh, VKC_OUT(GeomElement) ball) {
  TriClosest cp = triClosestPoint(c, a, b, c2);
  vec3 n;
  float depth;
  bool hit = geomBallFeature(c, r, cp.point, geomTriangleNormal(a, b, c2), n, depth);
  mesh = geomMeshElement(cp.point, depth, -n, cell, ids, geomTriCorners(cp));
  ball = geomMakeElement(c - n * r, depth, n, kElementPointDirection, kGeomNoIndex);
  return hit;
}

// Sphere against segment `cell` (a, b; vertex numbers ids.xy): the closest point of the segment (an
// end: a vertex element; inside: the edge). A centre on the segment moves along a perpendicular.
VKC_FN bool geomSegmentBall(vec3 a, vec3 b, uvec4 ids, uint cell, vec3 c, float r, VKC_OUT(GeomElement) mesh,
                            VKC_OUT(GeomElement) ball) {
  float t = segmentClosestParam(c, a, b);
  vec3 q = lerp3(a, b, t);
  vec3 n;
  float depth;
  bool hit = geomBallFeature(c, r, q, anyPerpendicular(geomUnit(b - a)), n, depth);
  uint corners = t == 0.0f ? 1u : (t == 1.0f ? 2u : 3u);
  mesh = geomMeshElement(q, depth, -n, cell, ids, corners);
  ball = geomMakeElement(c - n * r, depth, n, kElementPointDirection, kGeomNoIndex);
  return hit;
}

// Capsule (axis p0 -> p1, radius r) against segment `cell` (a, b): the seed's LineMeshToCapsuleCD,
// the closest points of the segment and the axis (geomSegmentSegmentParams: parallel segments meet
// at the middle of their overlap), then the ball of the capsule there. Crossing segments move the
// capsule along their common perpendicular.
VKC_FN bool geomSegmentCapsule(vec3 a, vec3 b, uvec4 ids, uint cell, vec3 p0, vec3 p1, float r,
                               VKC_OUT(GeomElement) mesh, VKC_OUT(GeomElement) capsule) {
  vec2 st = geomSegmentSegmentParams(a, b, p0, p1);
  vec3 q = lerp3(a, b, st.x);
  vec3 c = lerp3(p0, p1, st.y);
  vec3 e = geomUnit(b - a);
  vec3 x = cross(e, p1 - p0);
  vec3 fallback = dot(x, x) > 0.0f ? geomUnit(x) : anyPerpendicular(e);
  vec3 n;
  float depth;
  bool hit = geomBallFeature(c, r, q, fallback, n, depth);
  uint corners = st.x == 0.0f ? 1u : (st.x == 1.0f ? 2u : 3u);
  mesh = geomMeshElement(q, depth, -n, cell, ids, corners);
  capsule = geomMakeElement(c - n * r, depth, n, kElementPointDirection, kGeomNoIndex);
  return hit;
}

// Closest points of the capsule's axis p0 -> p1 and triangle (a, b, c2) when the axis does not pierce
// it: the least distance of the five candidates (each end against the triangle, the axis against
// each edge; the first of equal ones in that order). Returns the axis parameter; q, corners: the
// triangle's point and its feature (geomTriCorners).
VKC_FN float geomAxisTriangleClosest(vec3 a, vec3 b, vec3 c2, vec3 p0, vec3 p1, VKC_OUT(vec3) q,
                                     VKC_OUT(uint) corners) {
  TriClosest e0 = triClosestPoint(p0, a, b, c2);
  TriClosest e1 = triClosestPoint(p1, a, b, c2);
  float best = e0.dist2;
  float t = 0.0f;
  q = e0.point;
  corners = geomTriCorners(e0);
  if (e1.dist2 < best) {
    best = e1.dist2;
    t = 1.0f;
    q = e1.point;
    corners = geomTriCorners(e1);
  }
  for (uint k = 0u; k < 3u; ++k) {
    vec3 u = k == 0u ? a : (k == 1u ? b : c2);
    vec3 v = k == 0u ? b : (k == 1u ? c2 : a);
    vec2 st = geomSegmentSegmentParams(p0, p1, u, v);
    vec3 x = lerp3(p0, p1, st.x);
    vec3 y = lerp3(u, v, st.y);
    vec3 d = x - y;
    float dd = dot(d, d);
    if (dd < best) {
      best = dd;
      t = st.x;
      q = y;
      // Edge k of the triangle: AB, BC, CA (corners k and k + 1 mod 3); an end of it is a vertex.
      uint first = 1u << k;
      uint second = k == 2u ? 1u : (2u << k);
      corners = st.y == 0.0f ? first : (st.y == 1.0f ? second : (first | second));
    }
  }
  return t;
}

// A capsule lies along a face when its axis is parallel to the triangle's plane within this sine.
VKC_CONSTANT(float, kGeomCapsuleFaceParallelSin, 1e-4f);

// Capsule (axis p0 -> p1, radius r) against triangle `cell`, slot 0 or 1 (geomMeshSlotsPerCell):
// the seed's SurfaceMeshToCapsuleCD (the "virtual sphere" at the axis point closest to the triangle,
// then sphere against triangle), with the two cases iMSTK handles poorly:
//   - an axis piercing the triangle (an embedded triangle): one contact along the triangle's normal,
//     to the side that needs the shorter move (r minus the lower end's height, or r plus the upper
//     end's), at the piercing point;
//   - an axis parallel to the face over its inside: two contacts, at the ends of the axis' span over
//     the triangle (slot 0, slot 1), each a ball against the triangle (a span end on the triangle's
//     border is an edge or vertex element); a span of one point falls to the general case.
// Otherwise slot 0 only.
VKC_FN bool geomTriangleCapsule(vec3 a, vec3 b, vec3 c2, uvec4 ids, uint cell, vec3 p0, vec3 p1, float r,
                                uint slot, VKC_OUT(GeomElement) mesh, VKC_OUT(GeomElement) capsule) {
  mesh = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  capsule = mesh;
  vec3 u = b - a, v = c2 - a;
  vec3 nRaw = cross(u, v);
  bool hasPlane = triHasPlane(u, v, nRaw);
  vec3 axis = p1 - p0;
  float len2 = dot(axis, axis);
  if (hasPlane) {
    vec3 nf = geomUnit(nRaw);
    float s0 = dot(p0 - a, nf);
    float s1 = dot(p1 - a, nf);
    // Embedded: the axis crosses the plane (or touches it) inside the triangle.
    if ((s0 <= 0.0f && s1 >= 0.0f) || (s0 >= 0.0f && s1 <= 0.0f)) {
      float ds = s0 - s1;
      float t = ds != 0.0f ? clamp(s0 / ds, 0.0f, 1.0f) : 0.5f;
      vec3 x = lerp3(p0, p1, t);
      vec2 ab = triBarycentric(u, v, x - a, nRaw);
      if (ab.x >= 0.0f && ab.y >= 0.0f && ab.x + ab.y <= 1.0f) {
        if (slot != 0u) return false;
        float up = r - min(s0, s1);    // moving along +nf
        float down = r + max(s0, s1);  // moving along -nf
        vec3 m = up <= down ? nf : -nf;
        float depth = min(up, down);
        vec3 onPlane = x - nf * dot(x - a, nf);
        mesh = geomMeshElement(onPlane, depth, -m, cell, ids, 7u);
        capsule = geomMakeElement(onPlane - m * depth, depth, m, kElementPointDirection, kGeomNoIndex);
        return depth > 0.0f;
      }
    }
    // Parallel to the face: the axis' span over the triangle, clipped by its three edge planes.
    if (len2 > 0.0f && abs(s1 - s0) <= kGeomCapsuleFaceParallelSin * sqrt(len2)) {
      float lo = 0.0f, hi = 1.0f;
      for (uint k = 0u; k < 3u; ++k) {
        vec3 e0 = k == 0u ? a : (k == 1u ? b : c2);
        vec3 e1 = k == 0u ? b : (k == 1u ? c2 : a);
        vec3 inward = cross(nf, e1 - e0);  // points into the triangle
        float f0 = dot(p0 - e0, inward);
        float f1 = dot(p1 - e0, inward);
        if (f0 < 0.0f && f1 < 0.0f) {
          lo = 1.0f;
          hi = 0.0f;
        } else if (f0 < 0.0f) {
          lo = max(lo, f0 / (f0 - f1));
        } else if (f1 < 0.0f) {
          hi = min(hi, f0 / (f0 - f1));
        }
      }
      if (lo < hi) {
        float t = slot == 0u ? lo : hi;
        vec3 c = lerp3(p0, p1, t);
        TriClosest cp = triClosestPoint(c, a, b, c2);
        vec3 n;
        float depth;
        bool hit = geomBallFeature(c, r, cp.point, nf, n, depth);
        mesh = geomMeshElement(cp.point, depth, -n, cell, ids, geomTriCorners(cp));
        capsule = geomMakeElement(c - n * r, depth, n, kElementPointDirection, kGeomNoIndex);
        return hit;
      }
    }
  }
  if (slot != 0u) return false;
  vec3 q;
  uint corners;
  float t = geomAxisTriangleClosest(a, b, c2, p0, p1, q, corners);
  vec3 c = lerp3(p0, p1, t);
  vec3 n;
  float depth;
  bool hit = geomBallFeature(c, r, q, geomTriangleNormal(a, b, c2), n, depth);
  mesh = geomMeshElement(q, depth, -n, cell, ids, corners);
  capsule = geomMakeElement(c - n * r, depth, n, kElementPointDirection, kGeomNoIndex);
  return hit;
}

// A point x against tetrahedron `cell` (a, b, c, d): the seed's TetraToPointSetCD, the barycentric
// inside test. Barycentric k is x's height over the face opposite corner k divided by corner k's;
// x is inside when all four are > 0. The contact: x leaves through the nearest face (the smallest
// height h over the faces): the point moves along that face's outward normal by h, the tetrahedron's
// element is the projection of x on that face's plane (the whole tetrahedron: kElementCellIndex).
// pointIndex: the point's index in its set. A point on the boundary (a height 0) is no contact.
VKC_FN bool geomTetraPoint(vec3 a, vec3 b, vec3 c, vec3 d, uvec4 ids, uint cell, vec3 x, uint pointIndex,
                           VKC_OUT(GeomElement) tet, VKC_OUT(GeomElement) point) {
  float best = 0.0f;
  vec3 bestN = vec3(0.0f, 0.0f, 1.0f);
  bool inside = true;
  for (uint k = 0u; k < 4u; ++k) {
    // The face opposite corner k and that corner.
    vec3 f0 = k == 0u ? b : a;
    vec3 f1 = k <= 1u ? c : b;
    vec3 f2 = k <= 2u ? d : c;
    vec3 opposite = k == 0u ? a : (k == 1u ? b : (k == 2u ? c : d));
    vec3 n = geomUnit(cross(f1 - f0, f2 - f0));
    float hk = dot(opposite - f0, n);
    if (hk > 0.0f) {
      n = -n;
      hk = -hk;
    }
    // n: outward; hk = -(corner k's height); x's height over the face: -(x - f0).n.
    float h = -dot(x - f0, n);
    float bary = h / -hk;
    if (!(bary > 0.0f)) inside = false;
    if (k == 0u || h < best) {
      best = h;
      bestN = n;
    }
  }
  tet = geomMeshElement(x + bestN * best, best, -bestN, cell, ids, 15u);
  point = geomMakeElement(x, best, bestN, kElementPointIndexDirection, pointIndex);
  return inside && best > 0.0f;
}

// A point x (index pointIndex in its set) against a closed surface mesh (the seed's
// ClosedSurfaceMeshToMeshCD, vertex pass): q is the mesh's closest point to x, the feature `corners`
// of triangle `cell` (vertex numbers ids), pn that feature's angle-weighted pseudonormal (a face: its
// normal; an edge: the sum of its two faces' normals; a vertex: its faces' normals weighted by their
// angles at it). x is inside when (x - q).pn < 0: the contact moves x to q (depth |q - x|, however
// deep) and the mesh the opposite way. A point on the surface (depth 0) is no contact.
VKC_FN bool geomClosedMeshPoint(vec3 x, vec3 q, vec3 pn, uvec4 ids, uint cell, uint corners, uint pointIndex,
                                VKC_OUT(GeomElement) mesh, VKC_OUT(GeomElement) point) {
  vec3 d = q - x;
  float dist = sqrt(dot(d, d));
  vec3 n = dist > 0.0f ? d / dist : -geomUnit(pn);
  mesh = geomMeshElement(q, dist, -n, cell, ids, corners);
  point = geomMakeElement(x, dist, n, kElementPointIndexDirection, pointIndex);
  return dist > 0.0f && dot(x - q, pn) < 0.0f;
}

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_H
