// GLSL only: one slot of the mesh CCD family of the geometry query stage
// (shaders/geometry_queries_mesh_ccd.comp through shared/geometry_queries_family.h), the continuous
// mesh queries (issue 17) with the per-pair functions of geometry_queries_mesh_ccd.h, in the CPU
// driver's order (src/cpu/geometry_queries_mesh_ccd.cpp), bit for bit (lavapipe). Slot k of a query
// is its candidate pair k (shared/geometry_queries_mesh_pairs.h: found through the device tree over
// the swept cells, shared/geometry_queries_mesh_ccd_pairs.h; by cell of X, then cell of Y; no
// contact past the query's candidates):
//   - line mesh vs line mesh (X the mesh of the smaller geometry index; a line mesh against itself:
//     X = Y, each pair once, X's segment before Y's, never two sharing a vertex): the pair's
//     edge-edge CCD, at most one contact per slot;
//   - point set vs surface mesh (X the point set): a point's first candidate slot evaluates all of
//     its candidates (consecutive, ascending triangles) and keeps the earliest hit (meshHitEarlier),
//     as the CPU; the point's other slots are no contact.
// Reads the cells through the includer's geomCellEntryAt(i), the vertices through geomPointAt(i) and
// geomPreviousPointAt(i) (all clamp to their arrays: a vertex number out of range reads the mesh's last
// vertex, never out of bounds).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_SLOT_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_SLOT_H
#ifdef __cplusplus
#error "geometry_queries_mesh_ccd_slot.h is GLSL only"
#endif
#include "geometry_queries_mesh_ccd.h"
#include "geometry_queries_mesh_ccd_pairs.h"

// Segment cx of line mesh X vs segment cy of line mesh Y (self: the same mesh): elements ex, ey.
bool geomEdgeCcdPair(GeomShape x, GeomShape y, bool self, uint cx, uint cy, out GeomElement ex, out GeomElement ey) {
  ex = geomCcdElement(vec3(0.0f), 0.0f, vec3(0.0f), 0.0f, kElementPointDirection, kGeomNoIndex, 0u);
  ey = ex;
  uvec4 ix = geomMeshMeshIds(x, cx);
  uvec4 iy = geomMeshMeshIds(y, cy);
  if (self && !geomMeshMeshSelfPair(cx, ix, cy, iy, 2u)) return false;
  uint u0 = x.info.y + ix.x;
  uint u1 = x.info.y + ix.y;
  uint w0 = y.info.y + iy.x;
  uint w1 = y.info.y + iy.y;
  return geomEdgeCcdContact(geomPreviousPointAt(u0), geomPreviousPointAt(u1), geomPointAt(u0), geomPointAt(u1), cx,
                            geomPreviousPointAt(w0), geomPreviousPointAt(w1), geomPointAt(w0), geomPointAt(w1), cy,
                            x.p2.w + y.p2.w, ex, ey);
}

// Point k of point set p vs surface mesh m, its candidates at slots [first, end) of the stage (those
// of point k first, each holding (k, triangle)): elements ep (the point's), em (the mesh's) of the
// earliest hit.
bool geomPointCcdCandidates(GeomShape p, GeomShape m, uint k, uint first, uint end, out GeomElement ep,
                            out GeomElement em) {
  ep = geomCcdElement(vec3(0.0f), 0.0f, vec3(0.0f), 0.0f, kElementPointDirection, kGeomNoIndex, 0u);
  em = ep;
  uint at = p.info.y + k;
  vec3 p0 = geomPreviousPointAt(at);
  vec3 p1 = geomPointAt(at);
  float thickness = m.p2.w;
  uint lastCell = max(uint(m.p2.y), 1u) - 1u;
  MeshHit best = meshNoHit();
  uint bestCell = 0xFFFFFFFFu;
  uint n = end - min(first, end);
  bool more = true;
  for (uint outer = 0u; outer * kGeomMeshPairChunk < n && more; ++outer) {
    uint chunk = min(n - outer * kGeomMeshPairChunk, kGeomMeshPairChunk);
    for (uint inner = 0u; inner < chunk; ++inner) {
      uvec2 pair = candidates[clampIndex(first + outer * kGeomMeshPairChunk + inner, pc.slotCount)];
      if (pair.x != k) {
        more = false;
        break;
      }
      uint c = min(pair.y, lastCell);
      uvec4 ids = geomMeshMeshIds(m, c);
      uint v0 = m.info.y + ids.x;
      uint v1 = m.info.y + ids.y;
      uint v2 = m.info.y + ids.z;
      geomPointCcdCandidate(geomPreviousPointAt(v0), geomPreviousPointAt(v1), geomPreviousPointAt(v2),
                            geomPointAt(v0), geomPointAt(v1), geomPointAt(v2), c, p0, p1, thickness, best,
                            bestCell);
    }
  }
  if (bestCell == 0xFFFFFFFFu) return false;
  uvec4 ids = geomMeshMeshIds(m, bestCell);
  geomPointCcdContact(best, bestCell, geomPointAt(m.info.y + ids.x), geomPointAt(m.info.y + ids.y),
                      geomPointAt(m.info.y + ids.z), k, p1, thickness, ep, em);
  return true;
}

// Query q = (a, b) (geometry indices ia, ib) in the caller's order, its slots `range`, slot `slot`:
// elements ea (side a) and eb (side b).
bool geomMeshCcdSlot(GeomShape a, GeomShape b, uint q, uint ia, uint ib, uvec2 range, uint slot, out GeomElement ea,
                     out GeomElement eb) {
  ea = geomCcdElement(vec3(0.0f), 0.0f, vec3(0.0f), 0.0f, kElementPointDirection, kGeomNoIndex, 0u);
  eb = ea;
  bool lines = a.info.x == kGeomLineMesh && b.info.x == kGeomLineMesh;
  bool aFirst = lines ? ia <= ib : a.info.x == kGeomPointSet;
  GeomShape x = aFirst ? a : b;
  GeomShape y = aFirst ? b : a;
  if (!lines && (x.info.x != kGeomPointSet || y.info.x != kGeomSurfaceMesh)) return false;
  uvec4 row0, row1;
  if (!geomMeshPairOfQuery(q, row0, row1)) return false;
  uint found = xCells[row0.w + row1.z] - xCells[row0.w];
  if (slot >= found) return false;
  uint at = range.x + slot;
  uvec2 pair = candidates[clampIndex(at, pc.slotCount)];
  uint cx = min(pair.x, max(row1.z, 1u) - 1u);
  GeomElement e0, e1;
  bool hit;
  if (lines) {
    hit = geomEdgeCcdPair(x, y, ia == ib, cx, min(pair.y, max(row1.w, 1u) - 1u), e0, e1);
  } else {
    // The point's first candidate evaluates them all.
    if (slot > 0u && candidates[clampIndex(at - 1u, pc.slotCount)].x == pair.x) return false;
    hit = geomPointCcdCandidates(x, y, cx, at, min(range.x + found, range.y), e0, e1);
  }
  ea = aFirst ? e0 : e1;
  eb = aFirst ? e1 : e0;
  return hit;
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_SLOT_H
