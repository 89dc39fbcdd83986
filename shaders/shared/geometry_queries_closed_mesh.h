// The vertex pass of a closed surface mesh (the seed's ClosedSurfaceMeshToMeshCD, issue 17): per
// point, the closest point of the triangles within the search radius, the angle-weighted
// pseudonormal of its feature, inside or not. The pieces written once for the CPU driver
// (src/cpu/geometry_queries_mesh.cpp: insidePoints and the pseudonormals, over its BVH's candidates in
// cell order) and the Vulkan stage (geometry_queries_closed_mesh_slot.h: every triangle in cell
// order through the same box test), so that both pick the same triangle and the same normal bit for
// bit: the search box, the tie rule, the radius test, the angle at a corner (with an arccosine of
// its own: a device's acos is not the CPU's) and the feature numbering. GLSL and C++ (common.h).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_CLOSED_MESH_H
#define VKC_SHARED_GEOMETRY_QUERIES_CLOSED_MESH_H
#include "geometry_queries_mesh.h"

VKC_NAMESPACE_BEGIN

// arccos x for x in [-1, 1] (clamped), within 2e-7 of the true value (the polynomial of Abramowitz
// and Stegun 4.4.46, |error| <= 2e-8, plus float rounding): additions, multiplications and a
// square root only, which both sides round alike.
VKC_FN float geomAcos(float x) {
  float a = min(abs(x), 1.0f);
  float p = -0.0012624911f;
  p = p * a + 0.0066700901f;
  p = p * a - 0.0170881256f;
  p = p * a + 0.0308918810f;
  p = p * a - 0.0501743046f;
  p = p * a + 0.0889789874f;
  p = p * a - 0.2145988016f;
  p = p * a + 1.5707963050f;
  float r = sqrt(1.0f - a) * p;
  return x < 0.0f ? 3.14159265f - r : r;
}

// The angle of a triangle at corner p, between its edges to q and r (the pseudonormal's weight).
VKC_FN float geomCornerAngle(vec3 p, vec3 q, vec3 r) {
  vec3 e1 = q - p;
  vec3 e2 = r - p;
  float cosine = dot(e1, e2) / sqrt(dot(e1, e1) * dot(e2, e2));
  return geomAcos(clamp(cosine, -1.0f, 1.0f));
}

// The box [lo, hi] in which point x looks for the triangles of a closed surface mesh of search
// radius `radius` (0: unbounded, the whole space): a triangle is a candidate when its corners' box
// overlaps it (closed boxes).
VKC_FN void geomClosedMeshReach(vec3 x, float radius, VKC_OUT(vec3) lo, VKC_OUT(vec3) hi) {
  float reach = radius > 0.0f ? radius : uintBitsToFloat(0x7F800000u);
  lo = x - reach;
  hi = x + reach;
}

// The tie rule: the candidates are visited in cell order and a closer one (strictly) replaces the
// best so far: the first of equal distances in cell order wins.
VKC_FN bool geomClosedMeshCloser(bool any, float dist2, float bestDist2) {
  return !any || dist2 < bestDist2;
}

// Whether the closest point (squared distance dist2) is within the search radius (0: any).
VKC_FN bool geomClosedMeshWithin(float dist2, float radius) {
  return !(radius > 0.0f && dist2 > radius * radius);
}

// The feature of a closest point (geomTriCorners: 1, 2, 4 a vertex, 3, 6, 5 an edge, 7 the face):
// the corner of a vertex (0, 1, 2), the edge k of an edge (corners k, k + 1 mod 3: 0-1, 1-2, 2-0).
VKC_FN uint geomClosedMeshVertexCorner(uint corners) {
  return corners == 1u ? 0u : (corners == 2u ? 1u : 2u);
}
VKC_FN uint geomClosedMeshEdgeOf(uint corners) {
  return corners == 3u ? 0u : (corners == 6u ? 1u : 2u);
}

// The most triangles of a closed surface mesh with an unbounded search radius (p2.z 0) whose vertex
// pass the Vulkan stage runs (geometry_queries_closed_mesh_slot.h): a point walks the device tree,
// pruned by its best distance so far, and may still visit every triangle (the centre of a sphere is
// as far from each); llvmpipe stops an invocation after 65 535 loop iterations in all, which would
// cut a larger mesh short without a word. The host refuses a larger one on kVulkan
// (cpu::refuseClosedMeshesPastTheDeviceLoop); a bounded search radius takes any size (its search
// box prunes the walk), and so do the CPU backends.
VKC_CONSTANT(uint, kGeomClosedMeshDeviceMaxTriangles, 32000u);

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_CLOSED_MESH_H
