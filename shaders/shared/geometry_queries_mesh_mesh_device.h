// The mesh-against-mesh pairs on the Vulkan stage (issue 17): which pairs it runs, their canonical
// order, their slots, and the box a cell of the first mesh looks for cells of the second in. Written
// once for the host's slot layout (src/scene/geometry_queries_validate.cpp), its refusal
// (cpu::refuseMeshQueriesOnVulkan) and the mesh-mesh family's shader
// (geometry_queries_mesh_mesh_slot.h); the box is the CPU driver's
// (src/cpu/geometry_queries_mesh_mesh.cpp: candidates, lineLine), so that both keep the same pairs of
// cells. GLSL and C++ (common.h).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_DEVICE_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_DEVICE_H
#include "geometry_queries_mesh.h"

VKC_NAMESPACE_BEGIN

// Whether the stage runs the static pair of meshes of types lo <= hi: surface-surface, surface-line,
// line-line, line-tetrahedral, surface-tetrahedral and tetrahedral-tetrahedral (a surface, line or
// tetrahedral mesh against itself too: geomMeshMeshSelfPair), a closed surface mesh's too (its vertex
// pass: geomMeshMeshVertexSlots).
VKC_FN bool geomMeshMeshOnDevice(uint lo, uint hi) {
  if (hi == kGeomTetrahedralMesh)
    return lo == kGeomSurfaceMesh || lo == kGeomLineMesh || lo == kGeomTetrahedralMesh;
  if (lo == kGeomSurfaceMesh) return hi == kGeomSurfaceMesh || hi == kGeomLineMesh;
  if (lo == kGeomLineMesh) return hi == kGeomLineMesh;
  return false;
}

// GeomShape::info.w of a surface mesh: closed (the public kGeometryFlagClosed).
VKC_CONSTANT(uint, kGeomFlagClosed, 2u);

VKC_FN bool geomIsClosedSurface(GeomShape m) {
  return m.info.x == kGeomSurfaceMesh && (m.info.w & kGeomFlagClosed) != 0u;
}

// The slots of a mesh-mesh query's vertex pass (the seed's ClosedSurfaceMeshToMesh), after its
// candidate pairs, X and Y in the canonical order: Y's vertices when X is a closed surface mesh and Y
// a surface or line mesh, then X's vertices when both are surface meshes and Y is closed (the CPU
// driver's order, src/cpu/geometry_queries_mesh_mesh.cpp; against a tetrahedral mesh no vertex pass).
// self (a mesh against itself): none, a closed mesh's own vertices lie on it.
VKC_FN uint geomMeshMeshVertexSlots(GeomShape x, GeomShape y, bool self) {
  if (self) return 0u;
  uint n = 0u;
  if (geomIsClosedSurface(x) && y.info.x != kGeomTetrahedralMesh) n += y.info.z;
  if (x.info.x == kGeomSurfaceMesh && geomIsClosedSurface(y)) n += x.info.z;
  return n;
}

// A mesh against itself (n corners a cell): whether the pair of its cells cx (X's) and cy (Y's, with
// vertex numbers ix and iy) is one of the pairs: each pair once (cx < cy) and never two cells sharing a
// vertex (neighbours always touch there, so a triangle's 1-ring is never paired with it).
VKC_FN bool geomMeshMeshSelfPair(uint cx, uvec4 ix, uint cy, uvec4 iy, uint n) {
  if (cy <= cx) return false;
  for (uint i = 0u; i < n; ++i) {
    for (uint j = 0u; j < n; ++j) {
      if (ix[i] == iy[j]) return false;
    }
  }
  return true;
}

// Whether the query's a (type ta, geometry index ia) is the first mesh X of the canonical order
// (the lower type first, two meshes of one type by geometry index): the CPU's swap rule.
VKC_FN bool geomMeshMeshFirstIsA(uint ta, uint tb, uint ia, uint ib) {
  return ta != tb ? ta < tb : ia <= ib;
}

// The box [lo, hi] in which cell (p0 .. p3, n corners) of X looks for the cells of Y: its corners'
// box widened by `thickness` (line-line: the sum of the meshes' thicknesses; else 0) and a relative
// margin above float rounding (1e-5 of the largest coordinate, or of the thickness). A cell of Y is a
// candidate when its corners' box overlaps it (geomMeshMeshBoxesOverlap).
VKC_FN void geomMeshMeshReach(vec3 p0, vec3 p1, vec3 p2, vec3 p3, uint n, float thickness, VKC_OUT(vec3) lo,
                              VKC_OUT(vec3) hi) {
  vec3 l = p0;
  vec3 h = p0;
  float scale = thickness;
  for (uint k = 0u; k < n; ++k) {
    vec3 p = k == 0u ? p0 : (k == 1u ? p1 : (k == 2u ? p2 : p3));
    l = min(l, p);
    h = max(h, p);
    scale = max(scale, max(abs(p.x), max(abs(p.y), abs(p.z))));
  }
  float reach = thickness + 1e-5f * scale;
  lo = l - reach;
  hi = h + reach;
}

// Whether box [alo, ahi] (a cell's corners' box) overlaps [lo, hi] (closed boxes).
VKC_FN bool geomMeshMeshBoxesOverlap(vec3 alo, vec3 ahi, vec3 lo, vec3 hi) {
  return !(ahi.x < lo.x || ahi.y < lo.y || ahi.z < lo.z || hi.x < alo.x || hi.y < alo.y || hi.z < alo.z);
}

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_MESH_DEVICE_H
