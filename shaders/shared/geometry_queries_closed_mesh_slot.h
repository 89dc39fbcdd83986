// GLSL only: the vertex pass of a closed surface mesh on the Vulkan stage (issue 17), one slot per
// point: a point set's points against a closed surface mesh (the mesh family,
// geometry_queries_mesh_slot.h), and the other mesh's vertices after a mesh-mesh query's candidate
// pairs (the mesh-mesh family, geometry_queries_mesh_mesh_slot.h). Per point: every triangle of the
// mesh in cell order whose corners' box overlaps the point's search box, the closest point kept by
// the CPU's tie rule (geometry_queries_closed_mesh.h), so the same triangle as the CPU driver's BVH
// candidates in cell order (src/cpu/geometry_queries_mesh.cpp, insidePoints); then its feature's
// angle-weighted pseudonormal summed as the CPU sums it (a vertex: its triangles' normals times their
// angles at it, in cell order; an edge: the triangle's normal plus its neighbour's across the edge;
// the face: its normal), and geomClosedMeshPoint: the same contact bit for bit (lavapipe).
// Loops: per point two passes over the mesh's triangles (closest point, then the pseudonormal's
// triangles): on llvmpipe, whose invocations stop after 65 535 loop iterations in all, a mesh of up
// to about 32 000 triangles; the host refuses larger ones (kGeomClosedMeshDeviceMaxTriangles).
// Reads the cells through the includer's geomCellEntryAt(i) and the vertices through geomPointAt(i)
// (both clamp to their arrays: a vertex number out of range reads the mesh's last vertex).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_CLOSED_MESH_SLOT_H
#define VKC_SHARED_GEOMETRY_QUERIES_CLOSED_MESH_SLOT_H
#ifdef __cplusplus
#error "geometry_queries_closed_mesh_slot.h is GLSL only"
#endif
#include "geometry_queries_closed_mesh.h"
#include "geometry_queries_mesh_mesh_device.h"

// Triangle c of closed surface mesh m: its vertex numbers and corners.
uvec4 geomClosedMeshIds(GeomShape m, uint c) {
  uint lastVertex = max(m.info.z, 1u) - 1u;
  uint entry = uint(m.p2.x) + c * 3u;
  return uvec4(min(geomCellEntryAt(entry), lastVertex), min(geomCellEntryAt(entry + 1u), lastVertex),
               min(geomCellEntryAt(entry + 2u), lastVertex), 0u);
}

void geomClosedMeshCorners(GeomShape m, uvec4 ids, out vec3 p0, out vec3 p1, out vec3 p2) {
  p0 = geomPointAt(m.info.y + ids.x);
  p1 = geomPointAt(m.info.y + ids.y);
  p2 = geomPointAt(m.info.y + ids.z);
}

// The pseudonormal of feature `corners` (geomTriCorners) of triangle `cell` (vertex numbers ids) of
// closed surface mesh m, as the CPU driver's (MeshQueries::State::normals).
vec3 geomClosedMeshPseudonormal(GeomShape m, uint cell, uvec4 ids, uint corners) {
  vec3 p0, p1, p2;
  geomClosedMeshCorners(m, ids, p0, p1, p2);
  vec3 face = geomTriangleNormal(p0, p1, p2);
  if (corners == 7u) return face;
  uint count = uint(m.p2.y);
  bool vertex = corners == 1u || corners == 2u || corners == 4u;
  uint v = ids[geomClosedMeshVertexCorner(corners)];
  uint k = geomClosedMeshEdgeOf(corners);
  uint from = ids[k];
  uint to = ids[(k + 1u) % 3u];
  vec3 sum = vec3(0.0f);
  for (uint c = 0u; c < count; ++c) {
    uvec4 j = geomClosedMeshIds(m, c);
    if (vertex) {
      if (j.x != v && j.y != v && j.z != v) continue;
      vec3 q[3];
      geomClosedMeshCorners(m, j, q[0], q[1], q[2]);
      vec3 n = geomTriangleNormal(q[0], q[1], q[2]);
      for (uint i = 0u; i < 3u; ++i) {
        if (j[i] == v) sum += n * geomCornerAngle(q[i], q[(i + 1u) % 3u], q[(i + 2u) % 3u]);
      }
    } else if ((j.x == to && j.y == from) || (j.y == to && j.z == from) || (j.z == to && j.x == from)) {
      vec3 q0, q1, q2;
      geomClosedMeshCorners(m, j, q0, q1, q2);
      return face + geomTriangleNormal(q0, q1, q2);  // the neighbour across the edge (one: validated closed)
    }
  }
  return vertex ? sum : face;
}

// Point x (index pointIndex in its set, or a vertex of another mesh: meshVertex) against closed
// surface mesh m: elements em (the mesh's) and ep (the point's) when x is inside.
bool geomClosedMeshPointSlot(GeomShape m, vec3 x, uint pointIndex, bool meshVertex, out GeomElement em,
                             out GeomElement ep) {
  em = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  ep = em;
  float radius = m.p2.z;
  vec3 lo, hi;
  geomClosedMeshReach(x, radius, lo, hi);
  uint count = uint(m.p2.y);
  bool any = false;
  TriClosest best;
  best.point = vec3(0.0f);
  best.bary = vec3(0.0f);
  best.dist2 = 0.0f;
  best.region = 0u;
  uint bestCell = 0u;
  for (uint c = 0u; c < count; ++c) {
    uvec4 ids = geomClosedMeshIds(m, c);
    vec3 p0, p1, p2;
    geomClosedMeshCorners(m, ids, p0, p1, p2);
    // The triangle's box, as the CPU's BVH builds it (the corners' least and greatest coordinates).
    if (!geomMeshMeshBoxesOverlap(min(min(p0, p1), p2), max(max(p0, p1), p2), lo, hi)) continue;
    TriClosest cp = triClosestPoint(x, p0, p1, p2);
    if (geomClosedMeshCloser(any, cp.dist2, best.dist2)) {
      any = true;
      best = cp;
      bestCell = c;
    }
  }
  if (!any || !geomClosedMeshWithin(best.dist2, radius)) return false;
  uvec4 ids = geomClosedMeshIds(m, bestCell);
  uint corners = geomTriCorners(best);
  vec3 pn = geomClosedMeshPseudonormal(m, bestCell, ids, corners);
  bool hit = geomClosedMeshPoint(x, best.point, pn, ids, bestCell, corners, pointIndex, em, ep);
  if (meshVertex) ep.pad = geomCellWord(kGeomCellVertex, 0u);
  return hit;
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_CLOSED_MESH_SLOT_H
