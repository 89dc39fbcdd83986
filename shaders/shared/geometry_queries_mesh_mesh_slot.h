// GLSL only: one slot of the mesh-mesh pair family of the geometry query stage
// (shaders/geometry_queries_mesh_mesh.comp through shared/geometry_queries_family.h): two meshes in
// the canonical order (geomMeshMeshFirstIsA: X, then Y), slot s of the query = cell s / nY of X and
// cell s mod nY of Y (nY: Y's cells), so the slots' order is the CPU driver's
// (src/cpu/geometry_queries_mesh_mesh.cpp: per cell of X in order, the cells of Y whose boxes overlap
// its reach, in order). Here every pair of cells is a slot: Y's cell is evaluated where its corners'
// box overlaps X's cell's reach (geomMeshMeshReach, the CPU's box), with the per-pair functions of
// geometry_queries_mesh_mesh.h, so both keep the same pairs: the same contacts in the same order, bit
// for bit (lavapipe). Surface-surface keeps one edge-edge contact per pair of edges, the first in that
// order, as the CPU: a slot with an edge-edge contact looks for an earlier pair of triangles holding
// both edges with the same contact (geomMeshMeshEdgePairSeen). A line mesh against itself: each pair
// of segments once (X's cell before Y's), never two sharing a vertex.
// Reads the cells through the includer's geomCellEntryAt(i) and the vertices through geomPointAt(i)
// (both clamp to their arrays: a vertex number out of range reads the mesh's last vertex, never out
// of bounds).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_SLOT_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_SLOT_H
#ifdef __cplusplus
#error "geometry_queries_mesh_mesh_slot.h is GLSL only"
#endif
#include "geometry_queries_mesh_mesh.h"
#include "geometry_queries_mesh_mesh_device.h"

// The vertex numbers of cell c of mesh m (clamped to its vertices).
uvec4 geomMeshMeshIds(GeomShape m, uint c) {
  uint n = geomMeshCorners(m.info.x);
  uint lastVertex = max(m.info.z, 1u) - 1u;
  uint entry = uint(m.p2.x) + c * n;
  uvec4 ids = uvec4(0u);
  for (uint k = 0u; k < n; ++k) ids[k] = min(geomCellEntryAt(entry + k), lastVertex);
  return ids;
}

// The corners of a cell of mesh m (vertex numbers ids; unused corners repeat the first).
void geomMeshMeshCorners(GeomShape m, uvec4 ids, out vec3 p0, out vec3 p1, out vec3 p2, out vec3 p3) {
  uint n = geomMeshCorners(m.info.x);
  p0 = geomPointAt(m.info.y + ids.x);
  p1 = geomPointAt(m.info.y + ids.y);
  p2 = n >= 3u ? geomPointAt(m.info.y + ids.z) : p0;
  p3 = n >= 4u ? geomPointAt(m.info.y + ids.w) : p0;
}

// Whether cell (q0 .. q3) of Y is a candidate of the cell of X with reach [lo, hi].
bool geomMeshMeshCandidate(vec3 q0, vec3 q1, vec3 q2, vec3 q3, vec3 lo, vec3 hi) {
  return geomMeshMeshBoxesOverlap(min(min(q0, q1), min(q2, q3)), max(max(q0, q1), max(q2, q3)), lo, hi);
}

// The undirected vertex pair (least first) of a triangle's edge given by a corner mask of two corners.
uvec2 geomMeshMeshEdge(uvec4 ids, uint mask) {
  uvec2 v = uvec2(0u);
  uint n = 0u;
  for (uint k = 0u; k < 3u; ++k) {
    if ((mask & (1u << k)) != 0u) {
      if (n == 0u) v.x = ids[k]; else v.y = ids[k];
      ++n;
    }
  }
  return uvec2(min(v.x, v.y), max(v.x, v.y));
}

bool geomMeshMeshHasEdge(uvec4 ids, uvec2 e) {
  bool a = ids.x == e.x || ids.y == e.x || ids.z == e.x;
  bool b = ids.x == e.y || ids.y == e.y || ids.z == e.y;
  return a && b;
}

// Surface-surface: whether an edge-edge contact of edges ex (of X) and ey (of Y) comes from a pair of
// triangles before (cx, cy) in slot order that is a candidate pair: then (cx, cy)'s repeats it.
bool geomMeshMeshEdgePairSeen(GeomShape x, GeomShape y, uint cx, uint cy, uvec2 ex, uvec2 ey) {
  uint ny = uint(y.p2.y);
  for (uint c = 0u; c <= cx; ++c) {
    uvec4 jx = geomMeshMeshIds(x, c);
    if (!geomMeshMeshHasEdge(jx, ex)) continue;
    vec3 p0, p1, p2, p3;
    geomMeshMeshCorners(x, jx, p0, p1, p2, p3);
    vec3 lo, hi;
    geomMeshMeshReach(p0, p1, p2, p3, 3u, 0.0f, lo, hi);
    uint end = c == cx ? cy : ny;
    for (uint d = 0u; d < end; ++d) {
      uvec4 jy = geomMeshMeshIds(y, d);
      if (!geomMeshMeshHasEdge(jy, ey)) continue;
      vec3 q0, q1, q2, q3;
      geomMeshMeshCorners(y, jy, q0, q1, q2, q3);
      if (!geomMeshMeshCandidate(q0, q1, q2, q3, lo, hi)) continue;
      GeomElement e0, e1;
      uint key;
      if (geomTriTriContact(p0, p1, p2, jx, c, q0, q1, q2, jy, d, e0, e1, key) == kGeomTriTriEdgeEdge &&
          geomMeshMeshEdge(jx, key & 15u) == ex && geomMeshMeshEdge(jy, key >> 4u) == ey) {
        return true;
      }
    }
  }
  return false;
}

// Query (a, b) (geometry indices ia, ib) in the caller's order, slot `slot`: elements ea (side a) and
// eb (side b).
bool geomMeshMeshSlot(GeomShape a, GeomShape b, uint ia, uint ib, uint slot, out GeomElement ea,
                      out GeomElement eb) {
  ea = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  eb = ea;
  bool aFirst = geomMeshMeshFirstIsA(a.info.x, b.info.x, ia, ib);
  GeomShape x = aFirst ? a : b;
  GeomShape y = aFirst ? b : a;
  uint tx = x.info.x;
  uint ty = y.info.x;
  if (!geomMeshMeshOnDevice(tx, ty, false)) return false;
  uint ny = max(uint(y.p2.y), 1u);
  uint cx = slot / ny;
  uint cy = slot - cx * ny;
  uvec4 ix = geomMeshMeshIds(x, cx);
  uvec4 iy = geomMeshMeshIds(y, cy);
  if (ia == ib) {  // a line mesh against itself
    if (cy <= cx || ix.x == iy.x || ix.x == iy.y || ix.y == iy.x || ix.y == iy.y) return false;
  }
  vec3 p0, p1, p2, p3, q0, q1, q2, q3;
  geomMeshMeshCorners(x, ix, p0, p1, p2, p3);
  geomMeshMeshCorners(y, iy, q0, q1, q2, q3);
  bool lines = tx == kGeomLineMesh && ty == kGeomLineMesh;
  float thickness = lines ? x.p2.w + y.p2.w : 0.0f;
  vec3 lo, hi;
  geomMeshMeshReach(p0, p1, p2, p3, geomMeshCorners(tx), thickness, lo, hi);
  if (!geomMeshMeshCandidate(q0, q1, q2, q3, lo, hi)) return false;
  GeomElement ex = ea;
  GeomElement ey = ea;
  bool hit = false;
  if (lines) {
    hit = geomSegmentSegment(p0, p1, ix, cx, q0, q1, iy, cy, thickness, ex, ey);
  } else if (tx == kGeomLineMesh) {
    hit = geomSegmentTetra(p0, p1, ix, cx, q0, q1, q2, q3, iy, cy, ex, ey);
  } else if (ty == kGeomLineMesh) {
    hit = geomTriangleSegment(p0, p1, p2, ix, cx, q0, q1, iy, cy, ex, ey);
  } else {
    uint key;
    uint kind = geomTriTriContact(p0, p1, p2, ix, cx, q0, q1, q2, iy, cy, ex, ey, key);
    hit = kind != kGeomTriTriNone;
    if (kind == kGeomTriTriEdgeEdge) {
      hit = !geomMeshMeshEdgePairSeen(x, y, cx, cy, geomMeshMeshEdge(ix, key & 15u), geomMeshMeshEdge(iy, key >> 4u));
    }
  }
  ea = aFirst ? ex : ey;
  eb = aFirst ? ey : ex;
  return hit;
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_SLOT_H
