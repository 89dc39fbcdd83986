// The continuous mesh queries (issue 17): line mesh vs line mesh edge-edge CCD (a line mesh against
// itself too) and point set vs surface mesh vertex-triangle CCD, per candidate pair: the box filter
// and the elements around the conservative primitives edgeEdgeCcd (ccd_edge_edge.h) and triCcdCore
// (collide_meshes_math.h). Written once for the CPU driver (src/cpu/geometry_queries_mesh_ccd.cpp:
// candidates from a BVH of the swept cells) and the Vulkan stage's mesh CCD family
// (geometry_queries_mesh_ccd_slot.h: candidates from the device tree over the swept cells through
// the same box test, geometry_queries_mesh_ccd_pairs.h), so that both keep the same candidates and
// the same elements bit for bit. GLSL and C++ (common.h).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_H
#include "ccd_edge_edge.h"
#include "geometry_queries_mesh.h"

VKC_NAMESPACE_BEGIN

// How far a query box reaches past the swept box of a moving segment or point of coordinates up to
// `scale`: the contact distance plus far more than the CCD's tolerance (max(2^-16 scale, 2^-10
// thickness), over coordinates within reach of the box, shared/collide_meshes.h), so that the filter
// drops only pairs the CCD cannot report.
VKC_FN float geomCcdBoxReach(float thickness, float scale) {
  return thickness * 1.00390625f + 1.220703125e-4f * (scale + thickness) + 1e-30f;
}

// The box [lo, hi] in which a segment moving from (a0, a1) to (a0e, a1e) looks for the other mesh's
// segments (their swept boxes), `thickness` the sum of the meshes' thicknesses.
VKC_FN void geomCcdSegmentReach(vec3 a0, vec3 a1, vec3 a0e, vec3 a1e, float thickness, VKC_OUT(vec3) lo,
                                VKC_OUT(vec3) hi) {
  float reach =
      geomCcdBoxReach(thickness, max(max(maxAbs3(a0), maxAbs3(a1)), max(maxAbs3(a0e), maxAbs3(a1e))));
  lo = min(min(a0, a1), min(a0e, a1e)) - reach;
  hi = max(max(a0, a1), max(a0e, a1e)) + reach;
}

// The box [lo, hi] in which a point moving from p0 to p1 looks for the surface mesh's triangles (their
// swept boxes), `thickness` the mesh's.
VKC_FN void geomCcdPointReach(vec3 p0, vec3 p1, float thickness, VKC_OUT(vec3) lo, VKC_OUT(vec3) hi) {
  float reach = geomCcdBoxReach(thickness, max(maxAbs3(p0), maxAbs3(p1)));
  lo = min(p0, p1) - reach;
  hi = max(p0, p1) + reach;
}

// Whether a cell's swept box [clo, chi] overlaps the query box [lo, hi] (closed boxes).
VKC_FN bool geomCcdBoxesOverlap(vec3 clo, vec3 chi, vec3 lo, vec3 hi) {
  return !(chi.x < lo.x || chi.y < lo.y || chi.z < lo.z || hi.x < clo.x || hi.y < clo.y || hi.z < clo.z);
}

// A contact element of the continuous mesh queries: the time of impact in direction.w, the cell word
// in pad (0 for a point).
VKC_FN GeomElement geomCcdElement(vec3 point, float depth, vec3 direction, float time, uint type, uint index,
                                  uint cell) {
  GeomElement e;
  e.point = vec4(point, depth);
  e.direction = vec4(direction, time);
  e.type = type;
  e.index = index;
  e.query = 0u;
  e.pad = cell;
  return e;
}

// a if it is not below b, else b (std::max's choice, written out so that both sides pick the same).
VKC_FN float geomCcdMax(float a, float b) {
  return a < b ? b : a;
}

// Segment i of the first mesh, moving from (a0, a1) to (a0e, a1e), against segment j of the second,
// from (b0, b1) to (b0e, b1e), `thickness` the sum of the meshes' thicknesses: edgeEdgeCcd's hit as
// two edge elements. The first's at its closest point pa at the end of the step, moving along the
// hit's direction n by depth = max(thickness - n.(pa - pb), the CCD's tolerance); the second's at
// pa + n * depth moving along -n; both with the time of impact.
VKC_FN bool geomEdgeCcdContact(vec3 a0, vec3 a1, vec3 a0e, vec3 a1e, uint i, vec3 b0, vec3 b1, vec3 b0e,
                               vec3 b1e, uint j, float thickness, VKC_OUT(GeomElement) first,
                               VKC_OUT(GeomElement) second) {
  first = geomCcdElement(vec3(0.0f), 0.0f, vec3(0.0f), 0.0f, kElementPointDirection, kGeomNoIndex, 0u);
  second = first;
  EdgeCcdHit hit;
  if (!edgeEdgeCcd(a0, a1, b0, b1, a0e, a1e, b0e, b1e, thickness, hit)) return false;
  vec3 n = vec3(hit.normalTime);
  float time = hit.normalTime.w;
  vec3 pa = lerp3(a0e, a1e, hit.paramsDist.x);
  vec3 pb = lerp3(b0e, b1e, hit.paramsDist.y);
  float depth = geomCcdMax(thickness - dot(n, pa - pb), hit.paramsDist.w);
  uint edge = geomCellWord(kGeomCellEdge, 3u);
  first = geomCcdElement(pa, depth, n, time, kElementCellIndex, i, edge);
  second = geomCcdElement(pa + n * depth, depth, -n, time, kElementCellIndex, j, edge);
  return true;
}

// A point moving from p0 to p1 against triangle c, moving from (a0, b0, c0) to (a1, b1, c1): its
// triCcdCore hit replaces (best, bestCell) when earlier (meshHitEarlier: the smaller triangle at equal
// times). bestCell 0xFFFFFFFF: none yet.
VKC_FN void geomPointCcdCandidate(vec3 a0, vec3 b0, vec3 c0, vec3 a1, vec3 b1, vec3 c1, uint c, vec3 p0,
                                  vec3 p1, float thickness, VKC_INOUT(MeshHit) best,
                                  VKC_INOUT(uint) bestCell) {
  MeshHit hit;
  if (!triCcdCore(a0, b0, c0, a1, b1, c1, p0, p1, thickness, 0u, hit)) return;
  if (meshHitEarlier(hit, c, best, bestCell)) {
    best = hit;
    bestCell = c;
  }
}

// Point k (ending at p1) and its earliest hit `best` on triangle bestCell (whose corners end at a1, b1,
// c1): the point's element at p1 moving along the hit's direction n by depth = max(thickness -
// n.(p1 - s), the CCD's tolerance), s the hit's point on the triangle at the end of the step; the
// triangle's element at p1 + n * depth moving along -n; both with the time of impact.
VKC_FN void geomPointCcdContact(MeshHit best, uint bestCell, vec3 a1, vec3 b1, vec3 c1, uint k, vec3 p1,
                                float thickness, VKC_OUT(GeomElement) first, VKC_OUT(GeomElement) second) {
  vec3 n = vec3(best.normalTime);
  float time = best.normalTime.w;
  vec3 surface = baryCombine(a1, b1, c1, vec3(best.bary));
  float depth = geomCcdMax(thickness - dot(n, p1 - surface), best.point.w);
  first = geomCcdElement(p1, depth, n, time, kElementPointIndexDirection, k, 0u);
  second = geomCcdElement(p1 + n * depth, depth, -n, time, kElementCellIndex, bestCell,
                          geomCellWord(kGeomCellTriangle, 7u));
}

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_H
