// GLSL only: one slot of the mesh-mesh pair family of the geometry query stage
// (shaders/geometry_queries_mesh_mesh.comp through shared/geometry_queries_family.h): two meshes in
// the canonical order (geomMeshMeshFirstIsA: X, then Y); slot k of the query is its candidate pair k
// (shared/geometry_queries_mesh_pairs.h: the pairs of cells whose boxes overlap, found through the
// device tree, by cell of X, then cell of Y), so the slots' order is the CPU driver's
// (src/cpu/geometry_queries_mesh_mesh.cpp). Each candidate is tested again with the CPU's box
// (geomMeshMeshReach) and evaluated with the per-pair functions of geometry_queries_mesh_mesh.h: the
// same contacts in the same order, bit for bit (lavapipe). Surface-surface keeps one edge-edge
// contact per pair of edges, the first in that order, as the CPU: a slot with an edge-edge contact
// looks, among the candidates of the cells of X holding X's edge (a walk of the tree with the edge's
// box), for an earlier pair holding both edges with the same contact (geomMeshMeshEdgePairSeen). A
// mesh against itself: each pair of cells once (X's cell before Y's), never two sharing a vertex
// (geomMeshMeshSelfPair); a surface mesh's edge-edge contacts once per unordered pair of edges. After the candidates, a closed surface mesh's vertex pass: a slot per vertex of the other
// mesh (geomMeshMeshVertexSlots, geometry_queries_closed_mesh_slot.h: a walk of the device tree per
// vertex), as the CPU driver appends it. A point set against a tetrahedral mesh: X the points, a slot
// per candidate pair (point, tetrahedron) (geomMeshMeshPointTetraSlot).
// Reads the cells through the includer's geomCellEntryAt(i) and the vertices through geomPointAt(i)
// (both clamp to their arrays: a vertex number out of range reads the mesh's last vertex, never out
// of bounds).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_SLOT_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_SLOT_H
#ifdef __cplusplus
#error "geometry_queries_mesh_mesh_slot.h is GLSL only"
#endif
#include "geometry_queries_closed_mesh_slot.h"
#include "geometry_queries_mesh_mesh.h"
#include "geometry_queries_mesh_mesh_device.h"
#include "geometry_queries_mesh_pairs_walk.h"
#include "geometry_queries_mesh_reach.h"

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

// Surface-surface: whether an edge-edge contact of edges ex (of X) and ey (of Y) comes from a
// candidate pair before (cx, cy) in slot order: the cells of X holding ex (a walk of the tree with
// ex's box: a cell holding it has a box holding the edge's), then each one's candidates (ascending
// cells of Y, of its range of the query's slots) holding ey. row0, row1: the query's pair rows;
// range: its slots.
bool geomMeshMeshEdgePairSeen(GeomShape x, GeomShape y, uvec4 row0, uvec4 row1, uvec2 range, uint cx, uint cy,
                              uvec2 ex, uvec2 ey) {
  vec3 e0 = geomPointAt(x.info.y + ex.x);
  vec3 e1 = geomPointAt(x.info.y + ex.y);
  vec3 elo = min(e0, e1);
  vec3 ehi = max(e0, e1);
  uint slots = range.y - min(range.x, range.y);
  uint xFirst = row0.w;
  uint first = row1.x;
  geomWalkBegin();
  uint leaf;
  for (uint outer = 0u; outer < 65535u; ++outer) {
    for (uint inner = 0u; inner < kGeomMeshPairChunk; ++inner) {
      if (!geomWalkNext(elo, ehi, first, first + row1.z, leaf)) return false;
      uint c = leaf - first;
      if (c > cx) continue;
      uvec4 jx = geomMeshMeshIds(x, c);
      if (!geomMeshMeshHasEdge(jx, ex)) continue;
      vec3 p0, p1, p2, p3;
      geomMeshMeshCorners(x, jx, p0, p1, p2, p3);
      vec3 lo, hi;
      geomMeshMeshReach(p0, p1, p2, p3, 3u, 0.0f, lo, hi);
      uint base = xCells[xFirst + c] - xCells[xFirst];
      uint n = min(xCells[xFirst + c + 1u] - xCells[xFirst + c], slots - min(base, slots));
      for (uint ko = 0u; ko * kGeomMeshPairChunk < n; ++ko) {
        uint kend = min(n - ko * kGeomMeshPairChunk, kGeomMeshPairChunk);
        for (uint ki = 0u; ki < kend; ++ki) {
          uint d = candidates[clampIndex(range.x + base + ko * kGeomMeshPairChunk + ki, pc.slotCount)].y;
          if (c == cx && d >= cy) break;
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
    }
  }
  return false;
}

// A point set x against a tetrahedral mesh y (the seed's TetraToPointSet), query q, its slots `range`,
// slot `slot`: candidate pair k = (point, tetrahedron) of the candidate passes (the tetrahedra whose
// corners' box overlaps the point's reach, geomPointReach: the CPU driver's BVH test), by point then
// tetrahedron as the CPU's; the box tested again, then the barycentric test (geomTetraPoint). aFirst:
// x is the query's a. No contact past the query's candidates.
bool geomMeshMeshPointTetraSlot(GeomShape x, GeomShape y, uint q, uvec2 range, uint slot, bool aFirst,
                                out GeomElement ea, out GeomElement eb) {
  ea = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  eb = ea;
  uvec4 row0, row1;
  if (!geomMeshPairOfQuery(q, row0, row1)) return false;
  if (slot >= xCells[row0.w + row1.z] - xCells[row0.w]) return false;
  uvec2 pair = candidates[clampIndex(range.x + slot, pc.slotCount)];
  uint point = min(pair.x, max(x.info.z, 1u) - 1u);
  uint tet = min(pair.y, max(row1.w, 1u) - 1u);
  uvec4 ids = geomMeshMeshIds(y, tet);
  vec3 t0, t1, t2, t3;
  geomMeshMeshCorners(y, ids, t0, t1, t2, t3);
  vec3 p = geomPointAt(x.info.y + point);
  if (!geomMeshReachTouches(geomPointReach(p), min(min(t0, t1), min(t2, t3)), max(max(t0, t1), max(t2, t3)))) {
    return false;
  }
  GeomElement em, ep;
  bool hit = geomTetraPoint(t0, t1, t2, t3, ids, tet, p, point, em, ep);
  ea = aFirst ? ep : em;
  eb = aFirst ? em : ep;
  return hit;
}

// Query q = (a, b) (geometry indices ia, ib) in the caller's order, its slots `range`, slot `slot`:
// elements ea (side a) and eb (side b). No contact past the query's candidates.
bool geomMeshMeshSlot(GeomShape a, GeomShape b, uint q, uint ia, uint ib, uvec2 range, uint slot, out GeomElement ea,
                      out GeomElement eb) {
  ea = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  eb = ea;
  bool aFirst = geomMeshMeshFirstIsA(a.info.x, b.info.x, ia, ib);
  GeomShape x = aFirst ? a : b;
  GeomShape y = aFirst ? b : a;
  uint tx = x.info.x;
  uint ty = y.info.x;
  if (tx == kGeomPointSet && ty == kGeomTetrahedralMesh) return geomMeshMeshPointTetraSlot(x, y, q, range, slot, aFirst, ea, eb);
  if (!geomMeshMeshOnDevice(tx, ty)) return false;
  // After the candidate pairs, a closed surface mesh's vertex pass (geomMeshMeshVertexSlots): a slot
  // per vertex of Y inside X (X closed), then of X inside Y (Y closed).
  uint slots = range.y - min(range.x, range.y);
  uint candidateSlots = slots - min(geomMeshMeshVertexSlots(x, y, ia == ib), slots);
  uvec4 row0, row1;  // the query's rows of the mesh pairs table (the meshes' first tree cells)
  if (!geomMeshPairOfQuery(q, row0, row1)) return false;
  if (slot >= candidateSlots) {
    uint v = slot - candidateSlots;
    bool yInX = geomIsClosedSurface(x) && ty != kGeomTetrahedralMesh && v < y.info.z;
    if (!yInX && geomIsClosedSurface(x) && ty != kGeomTetrahedralMesh) v -= y.info.z;
    GeomElement ec, ep;
    bool inside = yInX ? geomClosedMeshPointSlot(x, row1.x, geomPointAt(y.info.y + v), v, true, ec, ep)
                       : geomClosedMeshPointSlot(y, row1.y, geomPointAt(x.info.y + v), v, true, ec, ep);
    ea = aFirst == yInX ? ec : ep;
    eb = aFirst == yInX ? ep : ec;
    return inside;
  }
  range = uvec2(range.x, range.x + candidateSlots);
  uint xEnd = row0.w + row1.z;
  if (slot >= xCells[xEnd] - xCells[row0.w]) return false;
  uvec2 pair = candidates[clampIndex(range.x + slot, pc.slotCount)];
  uint cx = min(pair.x, max(row1.z, 1u) - 1u);
  uint cy = min(pair.y, max(row1.w, 1u) - 1u);
  uvec4 ix = geomMeshMeshIds(x, cx);
  uvec4 iy = geomMeshMeshIds(y, cy);
  if (ia == ib && !geomMeshMeshSelfPair(cx, ix, cy, iy, geomMeshCorners(tx))) return false;  // a mesh against itself
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
  } else if (ty == kGeomTetrahedralMesh) {  // a triangle or a tetrahedron against a tetrahedron
    uint n = geomMeshCorners(tx);
    hit = geomHullTetra(geomMakeHull(p0, p1, p2, n == 4u ? p3 : p2, n), ix, cx,
                        geomMakeHull(q0, q1, q2, q3, 4u), iy, cy, ex, ey);
  } else {
    uint key;
    uint kind = geomTriTriContact(p0, p1, p2, ix, cx, q0, q1, q2, iy, cy, ex, ey, key);
    hit = kind != kGeomTriTriNone;
    if (kind == kGeomTriTriEdgeEdge) {
      // A mesh against itself: once per unordered pair of edges (an earlier pair may hold them with
      // the roles of X and Y swapped), as the CPU.
      uvec2 ex0 = geomMeshMeshEdge(ix, key & 15u);
      uvec2 ey0 = geomMeshMeshEdge(iy, key >> 4u);
      // The two orders in one loop over one call: a driver inlines every call (the walk and
      // geomTriTriContact), docs/integration.md, "Exact arithmetic".
      for (uint order = 0u; order < (ia == ib ? 2u : 1u) && hit; ++order) {
        hit = !geomMeshMeshEdgePairSeen(x, y, row0, row1, range, cx, cy, order == 0u ? ex0 : ey0,
                                        order == 0u ? ey0 : ex0);
      }
    }
  }
  ea = aFirst ? ex : ey;
  eb = aFirst ? ey : ex;
  return hit;
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_SLOT_H
