// One case of the GPU-vs-CPU check of shaders/shared/geometry_queries_mesh.h: every per-cell function
// on one triangle (or its first edge, or the tetrahedron it makes with d) against one sphere, capsule
// and point. Compiled as GLSL by geometry_queries_mesh_check.comp and as C++ by the tests.
#ifndef VKC_TESTS_GEOMETRY_QUERIES_MESH_CHECK_H
#define VKC_TESTS_GEOMETRY_QUERIES_MESH_CHECK_H
#include "shared/geometry_queries_mesh.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kMeshQueryCheckGroupSize, 64u);
VKC_CONSTANT(uint, kMeshQueryCheckFunctions, 6u);

struct MeshQueryCheckCase {
  vec4 a, b, c, d;  // the cell's corners (triangle a, b, c; segment a, b; tetrahedron a, b, c, d)
  vec4 p0;          // sphere centre / capsule end 0 xyz, radius w
  vec4 p1;          // capsule end 1
  vec4 x;           // the point against the tetrahedron
  uvec4 ids;        // the corners' vertex numbers; the cell index is ids.w + 1
};
VKC_CHECK_LAYOUT(MeshQueryCheckCase, 128);

// Per function (triangle-ball, triangle-capsule slot 0 and 1, segment-ball, segment-capsule,
// tetrahedron-point) the mesh's element and the other's; hits.x bit k: function k hit.
struct MeshQueryCheckResult {
  GeomElement mesh[6];
  GeomElement other[6];
  uvec4 hits;
};
VKC_CHECK_LAYOUT(MeshQueryCheckResult, 12 * 48 + 16);

VKC_FN MeshQueryCheckResult meshQueryCheckRun(MeshQueryCheckCase k) {
  MeshQueryCheckResult r;
  vec3 a = vec3(k.a), b = vec3(k.b), c = vec3(k.c), d = vec3(k.d);
  vec3 p0 = vec3(k.p0), p1 = vec3(k.p1);
  float radius = k.p0.w;
  uint cell = k.ids.w + 1u;
  uint hits = 0u;
  if (geomTriangleBall(a, b, c, k.ids, cell, p0, radius, r.mesh[0], r.other[0])) hits |= 1u;
  if (geomTriangleCapsule(a, b, c, k.ids, cell, p0, p1, radius, 0u, r.mesh[1], r.other[1])) hits |= 2u;
  if (geomTriangleCapsule(a, b, c, k.ids, cell, p0, p1, radius, 1u, r.mesh[2], r.other[2])) hits |= 4u;
  if (geomSegmentBall(a, b, k.ids, cell, p0, radius, r.mesh[3], r.other[3])) hits |= 8u;
  if (geomSegmentCapsule(a, b, k.ids, cell, p0, p1, radius, r.mesh[4], r.other[4])) hits |= 16u;
  if (geomTetraPoint(a, b, c, d, k.ids, cell, vec3(k.x), 7u, r.mesh[5], r.other[5])) hits |= 32u;
  r.hits = uvec4(hits, 0u, 0u, 0u);
  return r;
}

VKC_NAMESPACE_END

#endif  // VKC_TESTS_GEOMETRY_QUERIES_MESH_CHECK_H
