// One case of the GPU-vs-CPU check of shaders/shared/geometry_queries_mesh_prims.h: one triangle and
// its first edge as a segment against one plane, box and cylinder. Compiled as GLSL by
// geometry_queries_mesh_prims_check.comp and as C++ by the tests.
#ifndef VKC_TESTS_GEOMETRY_QUERIES_MESH_PRIMS_CHECK_H
#define VKC_TESTS_GEOMETRY_QUERIES_MESH_PRIMS_CHECK_H
#include "shared/geometry_queries_mesh_prims.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kMeshPrimsCheckGroupSize, 64u);
VKC_CONSTANT(uint, kMeshPrimsCheckFunctions, 6u);

struct MeshPrimsCheckCase {
  vec4 a, b, c;         // the triangle (the segment: a, b)
  GeomShape shapes[3];  // plane, box, cylinder
  uvec4 ids;            // the corners' vertex numbers; the cell index is ids.w
};
VKC_CHECK_LAYOUT(MeshPrimsCheckCase, 3 * 16 + 3 * 64 + 16);

// Function f = 2 * shape + (0: triangle, 1: segment): the mesh's element and the primitive's; hits.x
// bit f: a contact.
struct MeshPrimsCheckResult {
  GeomElement mesh[6];
  GeomElement other[6];
  uvec4 hits;
};
VKC_CHECK_LAYOUT(MeshPrimsCheckResult, 12 * 48 + 16);

VKC_FN MeshPrimsCheckResult meshPrimsCheckRun(MeshPrimsCheckCase k) {
  MeshPrimsCheckResult r;
  uint hits = 0u;
  for (uint s = 0u; s < 3u; ++s) {
    for (uint n = 2u; n <= 3u; ++n) {
      uint f = 2u * s + (3u - n);
      GeomElement m;
      GeomElement o;
      if (geomCellPrimitive(vec3(k.a), vec3(k.b), vec3(k.c), n, k.ids, k.ids.w, k.shapes[s], m, o))
        hits |= 1u << f;
      r.mesh[f] = m;
      r.other[f] = o;
    }
  }
  r.hits = uvec4(hits, 0u, 0u, 0u);
  return r;
}

VKC_NAMESPACE_END

#endif  // VKC_TESTS_GEOMETRY_QUERIES_MESH_PRIMS_CHECK_H
