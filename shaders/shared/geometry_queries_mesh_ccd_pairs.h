// GLSL only: the continuous mesh queries' candidate pairs on the device tree (issue 17), shared by
// the candidate passes (shaders/geometry_queries_mesh_pairs.comp, which run them with the static
// mesh-mesh queries' in one table, shared/geometry_queries_mesh_pairs.h) and the mesh CCD family
// (shared/geometry_queries_mesh_ccd_slot.h). The CPU driver's candidates
// (src/cpu/geometry_queries_mesh_ccd.cpp): X is a line mesh's segment (the mesh of the smaller
// geometry index; a line mesh against itself: X = Y) or a point of a point set, Y's cells are a line
// mesh's segments or a surface mesh's triangles; a cell of Y is a candidate of X's when its swept box
// (its corners now and before) overlaps X's reach (geomCcdSegmentReach / geomCcdPointReach of
// geometry_queries_mesh_ccd.h, widened by the thickness). The tree's boxes are swept too (built with
// the previous points) and only prune. The includer declares geomPointAt(i) and
// geomPreviousPointAt(i) (clamping to the points).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_PAIRS_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_PAIRS_H
#ifdef __cplusplus
#error "geometry_queries_mesh_ccd_pairs.h is GLSL only"
#endif
#include "geometry_queries_mesh_ccd.h"
#include "geometry_queries_mesh_pairs_walk.h"

// Whether X (of a continuous pair) is a point set: then its cells are its points.
bool geomCcdXIsPoints(GeomShape x) {
  return x.info.x == kGeomPointSet;
}

// X's cell cx (vertex numbers ix, for a segment) looks for Y's cells in [lo, hi]: a segment's reach
// with the sum of the meshes' thicknesses, a point's with the surface mesh's.
void geomCcdReachOf(GeomShape x, GeomShape y, uvec4 ix, uint cx, out vec3 lo, out vec3 hi) {
  if (geomCcdXIsPoints(x)) {
    uint at = x.info.y + min(cx, max(x.info.z, 1u) - 1u);
    geomCcdPointReach(geomPreviousPointAt(at), geomPointAt(at), y.p2.w, lo, hi);
    return;
  }
  uint u0 = x.info.y + ix.x;
  uint u1 = x.info.y + ix.y;
  geomCcdSegmentReach(geomPreviousPointAt(u0), geomPreviousPointAt(u1), geomPointAt(u0), geomPointAt(u1),
                      x.p2.w + y.p2.w, lo, hi);
}

// Whether cell iy (vertex numbers) of mesh y is a candidate of reach [lo, hi]: its swept box overlaps.
bool geomCcdCandidate(GeomShape y, uvec4 iy, vec3 lo, vec3 hi) {
  uint n = geomMeshCorners(y.info.x);
  vec3 clo = vec3(0.0f);
  vec3 chi = vec3(0.0f);
  for (uint k = 0u; k < n; ++k) {
    uint v = y.info.y + iy[k];
    vec3 now = geomPointAt(v);
    vec3 before = geomPreviousPointAt(v);
    clo = k == 0u ? min(now, before) : min(clo, min(now, before));
    chi = k == 0u ? max(now, before) : max(chi, max(now, before));
  }
  return geomCcdBoxesOverlap(clo, chi, lo, hi);
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_CCD_PAIRS_H
