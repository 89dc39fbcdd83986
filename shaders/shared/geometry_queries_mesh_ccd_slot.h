// GLSL only: one slot of the mesh CCD family of the geometry query stage
// (shaders/geometry_queries_mesh_ccd.comp through shared/geometry_queries_family.h), the continuous
// mesh queries (issue 17) with the per-pair functions of geometry_queries_mesh_ccd.h, in the CPU
// driver's order (src/cpu/geometry_queries_mesh_ccd.cpp), bit for bit (lavapipe):
//   - line mesh vs line mesh: the mesh of the smaller geometry index X first (a line mesh against
//     itself: X = Y); slot s = segment s / nY of X and segment s mod nY of Y (nY: Y's segments), as the
//     CPU's pairs (per segment of X in order, Y's segments whose swept boxes overlap its reach, in
//     order); a pair is evaluated where Y's swept box overlaps X's segment's reach; against itself each
//     pair once (X's segment before Y's), never two sharing a vertex. At most one contact per slot;
//   - point set vs surface mesh: slot k = point k; every triangle whose swept box overlaps the point's
//     reach in order, the earliest hit kept (meshHitEarlier: order-independent), as the CPU.
// Reads the cells through the includer's geomCellEntryAt(i), the vertices through geomPointAt(i) and
// geomPreviousPointAt(i) (all clamp to their arrays: a vertex number out of range reads the mesh's last
// vertex, never out of bounds).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_SLOT_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_SLOT_H
#ifdef __cplusplus
#error "geometry_queries_mesh_ccd_slot.h is GLSL only"
#endif
#include "geometry_queries_mesh_ccd.h"

// Vertex k of cell c of mesh m (clamped to its vertices): its number in the points arrays.
uint geomCcdVertex(GeomShape m, uint c, uint k) {
  uint n = geomMeshCorners(m.info.x);
  uint lastVertex = max(m.info.z, 1u) - 1u;
  return m.info.y + min(geomCellEntryAt(uint(m.p2.x) + c * n + k), lastVertex);
}

// The swept box [lo, hi] of cell c of mesh m (n corners): its corners now and before.
void geomCcdSweptBox(GeomShape m, uint c, uint n, out vec3 lo, out vec3 hi) {
  uint v = geomCcdVertex(m, c, 0u);
  lo = min(geomPointAt(v), geomPreviousPointAt(v));
  hi = max(geomPointAt(v), geomPreviousPointAt(v));
  for (uint k = 1u; k < n; ++k) {
    v = geomCcdVertex(m, c, k);
    lo = min(lo, min(geomPointAt(v), geomPreviousPointAt(v)));
    hi = max(hi, max(geomPointAt(v), geomPreviousPointAt(v)));
  }
}

// Line mesh X (geometry ix) vs line mesh Y (iy), slot `slot`: elements ex (X's), ey (Y's).
bool geomEdgeCcdSlot(GeomShape x, GeomShape y, uint ix, uint iy, uint slot, out GeomElement ex,
                     out GeomElement ey) {
  ex = geomCcdElement(vec3(0.0f), 0.0f, vec3(0.0f), 0.0f, kElementPointDirection, kGeomNoIndex, 0u);
  ey = ex;
  uint ny = max(uint(y.p2.y), 1u);
  uint i = slot / ny;
  uint j = slot - i * ny;
  uint u0 = geomCcdVertex(x, i, 0u);
  uint u1 = geomCcdVertex(x, i, 1u);
  uint w0 = geomCcdVertex(y, j, 0u);
  uint w1 = geomCcdVertex(y, j, 1u);
  if (ix == iy && (j <= i || u0 == w0 || u0 == w1 || u1 == w0 || u1 == w1)) return false;
  float thickness = x.p2.w + y.p2.w;
  vec3 a0 = geomPreviousPointAt(u0);
  vec3 a1 = geomPreviousPointAt(u1);
  vec3 a0e = geomPointAt(u0);
  vec3 a1e = geomPointAt(u1);
  vec3 lo, hi, clo, chi;
  geomCcdSegmentReach(a0, a1, a0e, a1e, thickness, lo, hi);
  geomCcdSweptBox(y, j, 2u, clo, chi);
  if (!geomCcdBoxesOverlap(clo, chi, lo, hi)) return false;
  return geomEdgeCcdContact(a0, a1, a0e, a1e, i, geomPreviousPointAt(w0), geomPreviousPointAt(w1),
                            geomPointAt(w0), geomPointAt(w1), j, thickness, ex, ey);
}

// Point k of point set p vs surface mesh m: elements ep (the point's), em (the mesh's).
bool geomPointCcdSlot(GeomShape p, GeomShape m, uint k, out GeomElement ep, out GeomElement em) {
  ep = geomCcdElement(vec3(0.0f), 0.0f, vec3(0.0f), 0.0f, kElementPointDirection, kGeomNoIndex, 0u);
  em = ep;
  uint at = p.info.y + k;
  vec3 p0 = geomPreviousPointAt(at);
  vec3 p1 = geomPointAt(at);
  float thickness = m.p2.w;
  vec3 lo, hi;
  geomCcdPointReach(p0, p1, thickness, lo, hi);
  MeshHit best = meshNoHit();
  uint bestCell = 0xFFFFFFFFu;
  uint count = uint(m.p2.y);
  for (uint c = 0u; c < count; ++c) {
    vec3 clo, chi;
    geomCcdSweptBox(m, c, 3u, clo, chi);
    if (!geomCcdBoxesOverlap(clo, chi, lo, hi)) continue;
    uint v0 = geomCcdVertex(m, c, 0u);
    uint v1 = geomCcdVertex(m, c, 1u);
    uint v2 = geomCcdVertex(m, c, 2u);
    geomPointCcdCandidate(geomPreviousPointAt(v0), geomPreviousPointAt(v1), geomPreviousPointAt(v2),
                          geomPointAt(v0), geomPointAt(v1), geomPointAt(v2), c, p0, p1, thickness, best,
                          bestCell);
  }
  if (bestCell == 0xFFFFFFFFu) return false;
  geomPointCcdContact(best, bestCell, geomPointAt(geomCcdVertex(m, bestCell, 0u)),
                      geomPointAt(geomCcdVertex(m, bestCell, 1u)),
                      geomPointAt(geomCcdVertex(m, bestCell, 2u)), k, p1, thickness, ep, em);
  return true;
}

// Query (a, b) (geometry indices ia, ib) in the caller's order, slot `slot`: elements ea (side a) and
// eb (side b).
bool geomMeshCcdSlot(GeomShape a, GeomShape b, uint ia, uint ib, uint slot, out GeomElement ea,
                     out GeomElement eb) {
  GeomElement e0, e1;
  bool hit;
  bool aFirst;
  if (a.info.x == kGeomLineMesh && b.info.x == kGeomLineMesh) {
    aFirst = ia <= ib;
    if (aFirst) {
      hit = geomEdgeCcdSlot(a, b, ia, ib, slot, e0, e1);
    } else {
      hit = geomEdgeCcdSlot(b, a, ib, ia, slot, e0, e1);
    }
  } else {
    aFirst = a.info.x == kGeomPointSet;
    if (aFirst) {
      hit = geomPointCcdSlot(a, b, slot, e0, e1);
    } else {
      hit = geomPointCcdSlot(b, a, slot, e0, e1);
    }
  }
  ea = aFirst ? e0 : e1;
  eb = aFirst ? e1 : e0;
  return hit;
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_SLOT_H
