// GLSL only: one slot of a mesh query of the geometry query stage, in the family shaders that hold
// mesh pairs (shared/geometry_queries_family.h; geometry_queries.h: geomQueryFamily):
//   MESH      a surface, line or tetrahedral mesh against a sphere, capsule, plane or oriented box;
//             a closed surface mesh against a point set (one slot per point, a walk of the device
//             tree: geometry_queries_closed_mesh_slot.h; a tetrahedral mesh against a point set is
//             the mesh-mesh family's, geometry_queries_mesh_mesh_slot.h);
//   CONVEX    a surface, line or tetrahedral mesh against a cylinder (GJK/EPA);
//   IMPLICIT  a surface, line or tetrahedral mesh against an implicit geometry.
// Each family compiles only its own pairs' per-cell functions (VKC_GEOM_WITH). Slot s of the query =
// cell s / k, sub-slot s mod k (k = geomMeshSlotsPerCell: 2 for a triangle against a capsule, else
// 1). The CPU driver
// (src/cpu/geometry_queries_mesh.cpp) walks a BVH for the cells whose boxes pass
// geomMeshReachTouches and runs the same per-cell function on each, in cell order; here every cell's
// box is tested and the cell evaluated where it passes, so both keep the same cells and the slots'
// order is the CPU's (cell, then sub-slot): the same contacts in the same order, bit for bit.
// Against an implicit geometry every cell is evaluated: the CPU's reach (the grid's box widened by
// minus its least sample, src/cpu/geometry_queries_mesh_prims.cpp) needs every sample, and a cell
// outside it has a positive field at every point, so no contact either way.
// Reads the cells through the includer's geomCellEntryAt(i) and the vertices through geomPointAt(i)
// (both clamp to their arrays: a vertex number out of range reads the mesh's last vertex, never out
// of bounds).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_SLOT_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_SLOT_H
#ifdef __cplusplus
#error "geometry_queries_mesh_slot.h is GLSL only"
#endif
#include "geometry_queries_mesh.h"
#include "geometry_queries_mesh_prims.h"
#include "geometry_queries_mesh_reach.h"
#include "geometry_queries_mesh_tetra.h"
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_MESH)
#include "geometry_queries_closed_mesh_slot.h"
#endif
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_IMPLICIT)
// After geometry_queries_implicit.h (the includer's), as the CPU's src/cpu/geometry_queries_mesh_prims.cpp.
#include "geometry_queries_mesh_implicit.h"
#include "geometry_queries_mesh_tetra_implicit.h"
#endif

// One cell (n corners: 2 a segment, 3 a triangle, 4 a tetrahedron; p2 = p1 for a segment) against
// `other`, sub-slot `sub`: this family's per-cell functions, those the CPU driver calls.
bool geomMeshCell(vec3 p0, vec3 p1, vec3 p2, vec3 p3, uint n, uvec4 ids, uint cell, uint sub, GeomShape other,
                  out GeomElement em, out GeomElement eo) {
  em = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  eo = em;
  uint otherType = other.info.x;
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_CONVEX)
  if (otherType == kGeomCylinder) {
    // geomTetraCylinder and geomCellCylinder (the CPU's) with one call of geomConvexPenetration for
    // both kinds of cell: a shader inlines every call, and this one holds GJK, EPA and the search.
    GeomMeshCell c = geomMakeCell(p0, p1, p2, min(n, 3u));
    GeomConvex t = geomMakeConvex(other);
    float depth;
    vec3 u;
    if (!geomConvexPenetration(n == 4u ? geomTetraConvex(p0, p1, p2, p3) : geomCellConvex(c), t, true, depth,
                               u)) {
      return false;
    }
    if (n == 4u) return geomTetraCylinderContact(p0, p1, p2, p3, ids, cell, t, depth, u, em, eo);
    return geomCellConvexContact(c, t, -u, depth, ids, cell, em, eo);  // the cell moves along -u
  }
#endif
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_IMPLICIT)
  if (otherType == kGeomImplicit) {
    if (n == 4u) return geomTetraImplicit(p0, p1, p2, p3, ids, cell, other, em, eo);
    return geomCellImplicit(p0, p1, p2, n, ids, cell, other, em, eo);
  }
#endif
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_MESH)
  if (n == 4u) return geomTetraPrimitive(p0, p1, p2, p3, ids, cell, other, em, eo);
  vec3 c0 = vec3(other.p0);
  float radius = other.p0.w;
  if (otherType == kGeomSphere) {
    if (n == 3u) return geomTriangleBall(p0, p1, p2, ids, cell, c0, radius, em, eo);
    return geomSegmentBall(p0, p1, ids, cell, c0, radius, em, eo);
  }
  if (otherType == kGeomCapsule) {
    if (n == 3u) return geomTriangleCapsule(p0, p1, p2, ids, cell, c0, vec3(other.p1), radius, sub, em, eo);
    return geomSegmentCapsule(p0, p1, ids, cell, c0, vec3(other.p1), radius, em, eo);
  }
  if (otherType == kGeomPlane) return geomCellPlane(geomMakeCell(p0, p1, p2, n), ids, cell, other, em, eo);
  if (otherType == kGeomOrientedBox) return geomCellBox(geomMakeCell(p0, p1, p2, n), ids, cell, other, em, eo);
#endif
  return false;
}

// Query q = (a, b) in the caller's order, slot `slot`: elements ea (side a) and eb (side b).
bool geomMeshSlot(GeomShape a, GeomShape b, uint q, uint slot, out GeomElement ea, out GeomElement eb) {
  ea = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  eb = ea;
  bool meshIsA = geomIsMesh(a.info.x);
  GeomShape mesh = meshIsA ? a : b;
  GeomShape other = meshIsA ? b : a;
  uint meshType = mesh.info.x;
  uint otherType = other.info.x;
  if (!geomMeshPairOnDevice(otherType, meshType)) return false;
  uint lastVertex = max(mesh.info.z, 1u) - 1u;
  GeomElement em = ea;
  GeomElement eo = ea;
  bool hit = false;
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_MESH)
  if (otherType == kGeomPointSet && meshType == kGeomSurfaceMesh) {  // closed (validated): slot = point
    uvec4 row0, row1;  // the query's row of the mesh pairs table: the mesh's first tree cell
    hit = geomMeshPairOfQuery(q, row0, row1) &&
          geomClosedMeshPointSlot(mesh, row1.y, geomPointAt(other.info.y + slot), slot, false, em, eo);
    ea = meshIsA ? em : eo;
    eb = meshIsA ? eo : em;
    return hit;
  }
  // A tetrahedral mesh against a point set runs in the mesh-mesh family (candidate pairs from the
  // device tree: geometry_queries_mesh_mesh_slot.h).
  if (otherType == kGeomPointSet) return false;
#endif
  uint per = geomMeshSlotsPerCell(meshType, otherType);
  uint cell = slot / per;
  uint sub = slot - cell * per;
  uint n = geomMeshCorners(meshType);
  uint entry = uint(mesh.p2.x) + cell * n;
  uvec4 ids = uvec4(0u);
  for (uint k = 0u; k < n; ++k) ids[k] = min(geomCellEntryAt(entry + k), lastVertex);
  vec3 p0 = geomPointAt(mesh.info.y + ids.x);
  vec3 p1 = geomPointAt(mesh.info.y + ids.y);
  vec3 p2 = n >= 3u ? geomPointAt(mesh.info.y + ids.z) : p1;
  vec3 p3 = n == 4u ? geomPointAt(mesh.info.y + ids.w) : p2;
  // The cell's box, as the CPU's BVH builds it (the corners' least and greatest coordinates).
  vec3 lo = min(min(p0, p1), min(p2, p3));
  vec3 hi = max(max(p0, p1), max(p2, p3));
  if (otherType != kGeomImplicit && !geomMeshReachTouches(geomMeshReach(other), lo, hi)) return false;
  hit = geomMeshCell(p0, p1, p2, p3, n, ids, cell, sub, other, em, eo);
  ea = meshIsA ? em : eo;
  eb = meshIsA ? eo : em;
  return hit;
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_SLOT_H
