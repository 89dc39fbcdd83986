// One case of the GPU-vs-CPU check of the static mesh rows' per-cell functions
// (shaders/shared/geometry_queries_mesh_tetra.h: a tetrahedron against a sphere, capsule, plane and
// box; geometry_queries_mesh_mesh.h's geomSegmentSegment: two segments of line meshes). Compiled as
// GLSL by geometry_queries_mesh_static_check.comp and as C++ by the tests.
#ifndef VKC_TESTS_GEOMETRY_QUERIES_MESH_STATIC_CHECK_H
#define VKC_TESTS_GEOMETRY_QUERIES_MESH_STATIC_CHECK_H
#include "shared/geometry_queries_mesh_mesh.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kMeshStaticCheckGroupSize, 64u);
VKC_CONSTANT(uint, kMeshStaticCheckFunctions, 5u);

struct MeshStaticCheckCase {
  vec4 corners[4];      // the tetrahedron; corners[0], corners[1]: the first segment
  vec4 segment[2];      // the second segment; segment[0].w: the pair's thickness
  GeomShape shapes[4];  // sphere, capsule, plane, box
  uvec4 ids;            // the corners' vertex numbers; the cell index is ids.w
};
VKC_CHECK_LAYOUT(MeshStaticCheckCase, 6 * 16 + 4 * 64 + 16);

// Function f < 4: the tetrahedron against shapes[f] (elements first[f], second[f]); f = 4: segment
// against segment (first[4], second[4]). hits.x bit f: a contact.
struct MeshStaticCheckResult {
  GeomElement first[5];
  GeomElement second[5];
  uvec4 hits;
};
VKC_CHECK_LAYOUT(MeshStaticCheckResult, 10 * 48 + 16);

VKC_FN MeshStaticCheckResult meshStaticCheckRun(MeshStaticCheckCase k) {
  MeshStaticCheckResult r;
  uint hits = 0u;
  vec3 a = vec3(k.corners[0]);
  vec3 b = vec3(k.corners[1]);
  for (uint f = 0u; f < 4u; ++f) {
    GeomElement t;
    GeomElement o;
    if (geomTetraPrimitive(a, b, vec3(k.corners[2]), vec3(k.corners[3]), k.ids, k.ids.w, k.shapes[f], t, o))
      hits |= 1u << f;
    r.first[f] = t;
    r.second[f] = o;
  }
  GeomElement x;
  GeomElement y;
  if (geomSegmentSegment(a, b, k.ids, k.ids.w, vec3(k.segment[0]), vec3(k.segment[1]), k.ids, k.ids.w + 1u,
                         k.segment[0].w, x, y))
    hits |= 16u;
  r.first[4] = x;
  r.second[4] = y;
  r.hits = uvec4(hits, 0u, 0u, 0u);
  return r;
}

VKC_NAMESPACE_END

#endif  // VKC_TESTS_GEOMETRY_QUERIES_MESH_STATIC_CHECK_H
