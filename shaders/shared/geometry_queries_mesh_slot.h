// GLSL only: one slot of the mesh pair family of the geometry query stage
// (shaders/geometry_queries_mesh.comp through shared/geometry_queries_family.h): a surface or line mesh
// against a sphere, capsule, plane or oriented box, slot s of the query = cell s / k, sub-slot s mod k
// (k = geomMeshSlotsPerCell: 2 for a triangle against a capsule, else 1); a tetrahedral mesh against a
// point set, slot s = point s / T, tetrahedron s mod T (T tetrahedra: the CPU's order, by point then
// tetrahedron). The CPU driver
// (src/cpu/geometry_queries_mesh.cpp) walks a BVH for the cells whose boxes pass
// geomMeshReachTouches and runs the same per-cell function on each, in cell order; here every cell's
// box is tested and the cell evaluated where it passes, so both keep the same cells and the slots'
// order is the CPU's (cell, then sub-slot): the same contacts in the same order, bit for bit.
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

// Query (a, b) in the caller's order, slot `slot`: elements ea (side a) and eb (side b).
bool geomMeshSlot(GeomShape a, GeomShape b, uint slot, out GeomElement ea, out GeomElement eb) {
  ea = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  eb = ea;
  bool meshIsA = geomIsMesh(a.info.x);
  GeomShape mesh = meshIsA ? a : b;
  GeomShape other = meshIsA ? b : a;
  uint meshType = mesh.info.x;
  uint otherType = other.info.x;
  if (!geomMeshPairOnDevice(otherType, meshType)) return false;
  uint lastVertex = max(mesh.info.z, 1u) - 1u;
  if (meshType == kGeomTetrahedralMesh) {  // against a point set: slot = point * tetrahedra + tetrahedron
    uint tetrahedra = max(uint(mesh.p2.y), 1u);
    uint point = slot / tetrahedra;
    uint tet = slot - point * tetrahedra;
    uint first = uint(mesh.p2.x) + tet * 4u;
    uvec4 tid = uvec4(0u);
    for (uint k = 0u; k < 4u; ++k) tid[k] = min(geomCellEntryAt(first + k), lastVertex);
    vec3 t0 = geomPointAt(mesh.info.y + tid.x);
    vec3 t1 = geomPointAt(mesh.info.y + tid.y);
    vec3 t2 = geomPointAt(mesh.info.y + tid.z);
    vec3 t3 = geomPointAt(mesh.info.y + tid.w);
    vec3 x = geomPointAt(other.info.y + point);
    GeomElement tm = ea;
    GeomElement tp = ea;
    bool inside = false;
    if (geomMeshReachTouches(geomPointReach(x), min(min(t0, t1), min(t2, t3)), max(max(t0, t1), max(t2, t3)))) {
      inside = geomTetraPoint(t0, t1, t2, t3, tid, tet, x, point, tm, tp);
    }
    ea = meshIsA ? tm : tp;
    eb = meshIsA ? tp : tm;
    return inside;
  }
  uint per = geomMeshSlotsPerCell(meshType, otherType);
  uint cell = slot / per;
  uint sub = slot - cell * per;
  uint n = geomMeshCorners(meshType);
  uint entry = uint(mesh.p2.x) + cell * n;
  uvec4 ids = uvec4(0u);
  for (uint k = 0u; k < n; ++k) ids[k] = min(geomCellEntryAt(entry + k), lastVertex);
  vec3 p0 = geomPointAt(mesh.info.y + ids.x);
  vec3 p1 = geomPointAt(mesh.info.y + ids.y);
  vec3 p2 = n == 3u ? geomPointAt(mesh.info.y + ids.z) : p1;
  // The cell's box, as the CPU's BVH builds it (the corners' least and greatest coordinates).
  vec3 lo = min(p0, min(p1, p2));
  vec3 hi = max(p0, max(p1, p2));
  if (!geomMeshReachTouches(geomMeshReach(other), lo, hi)) return false;
  GeomElement em = ea;
  GeomElement eo = ea;
  bool hit = false;
  vec3 c0 = vec3(other.p0);
  float radius = other.p0.w;
  if (otherType == kGeomSphere) {
    if (n == 3u) {
      hit = geomTriangleBall(p0, p1, p2, ids, cell, c0, radius, em, eo);
    } else {
      hit = geomSegmentBall(p0, p1, ids, cell, c0, radius, em, eo);
    }
  } else if (otherType == kGeomCapsule) {
    if (n == 3u) {
      hit = geomTriangleCapsule(p0, p1, p2, ids, cell, c0, vec3(other.p1), radius, sub, em, eo);
    } else {
      hit = geomSegmentCapsule(p0, p1, ids, cell, c0, vec3(other.p1), radius, em, eo);
    }
  } else if (otherType == kGeomPlane) {
    hit = geomCellPlane(geomMakeCell(p0, p1, p2, n), ids, cell, other, em, eo);
  } else {
    hit = geomCellBox(geomMakeCell(p0, p1, p2, n), ids, cell, other, em, eo);
  }
  ea = meshIsA ? em : eo;
  eb = meshIsA ? eo : em;
  return hit;
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_SLOT_H
