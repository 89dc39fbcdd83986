// The mesh rows of the geometry queries against a plane, an oriented box, a cylinder or an implicit
// geometry on the CPU (issue 17): which cells of the mesh's BVH may touch the primitive (the node and
// cell test of the driver in src/cpu/geometry_queries_mesh.cpp), then per cell the shared arithmetic
// of shaders/shared/geometry_queries_mesh_prims.h and geometry_queries_mesh_implicit.h.
#include <algorithm>
#include <cmath>

#include "cpu/geometry_queries_mesh.h"
#include "shared/geometry_queries_mesh_prims.h"
#include "shared/geometry_queries_mesh_reach.h"

namespace vkc::cpu {

namespace {

using namespace gpu;

// The implicit geometries' shared code (geometry_queries_implicit.h) and the cell against the field
// (geometry_queries_mesh_implicit.h), over the caller's validated arrays.
struct ImplicitCellKernel {
  const GeometryQueryInput* in = nullptr;

  static vec3 xyz(const Float4& f) { return vec3(f.x, f.y, f.z); }
  vec3 geomPointAt(uint i) const { return xyz(in->points[i]); }
  vec3 geomPreviousPointAt(uint i) const { return xyz(in->previousPoints[i]); }
  float geomGridSampleAt(uint i) const { return in->gridSamples[i]; }
  vec4 geomStateAt(uint) const { return vec4(0.0f); }  // no continuous method here

#include "shared/geometry_queries_implicit.h"
#include "shared/geometry_queries_mesh_implicit.h"
#include "shared/geometry_queries_mesh_tetra_implicit.h"
};

float maxAbs(const gpu::vec3& v) {
  return std::max({std::abs(v.x), std::abs(v.y), std::abs(v.z)});
}

}  // namespace

bool meshPrimitivePair(uint32_t meshType, uint32_t otherType) {
  return (meshType == gpu::kGeomSurfaceMesh || meshType == gpu::kGeomLineMesh) &&
         (otherType == gpu::kGeomPlane || otherType == gpu::kGeomOrientedBox ||
          otherType == gpu::kGeomCylinder || otherType == gpu::kGeomImplicit);
}

PrimitiveReach primitiveReach(const GeometryQueryInput& in, const gpu::GeomShape& s) {
  PrimitiveReach r;
  r.in = &in;
  r.shape = s;
  const gpu::vec3 c(s.p0);
  if (s.info.x == gpu::kGeomImplicit) {
    // The grid's box; outside it the field is its value on the box plus the distance to the box, so a
    // negative sample on the box reaches out by minus that sample.
    const gpu::vec3 far = c + gpu::vec3(s.p1) * (gpu::vec3(s.p2) - 1.0f);
    float least = 0.0f;
    for (uint32_t k = 0; k < s.info.z; ++k) least = std::min(least, in.gridSamples[s.info.y + k]);
    const float margin = 1e-5f * std::max(maxAbs(c), maxAbs(far)) - least;
    r.lo = c - margin;
    r.hi = far + margin;
    return r;
  }
  // A plane, box or cylinder: the reach shared with the Vulkan stage (geometry_queries_mesh_reach.h).
  const gpu::GeomMeshReach m = gpu::geomMeshReach(s);
  r.plane = m.kind != gpu::kGeomReachBox;
  r.twoSided = m.kind == gpu::kGeomReachTwoSidedPlane;
  r.normal = m.normal;
  r.lo = m.lo;
  r.hi = m.hi;
  return r;
}

bool primitiveMayTouch(const PrimitiveReach& r, const gpu::vec3& lo, const gpu::vec3& hi) {
  gpu::GeomMeshReach m;
  m.lo = r.lo;
  m.hi = r.hi;
  m.normal = r.normal;
  m.kind = !r.plane ? gpu::kGeomReachBox : (r.twoSided ? gpu::kGeomReachTwoSidedPlane : gpu::kGeomReachPlane);
  return gpu::geomMeshReachTouches(m, lo, hi);
}

bool meshPrimitiveCell(const PrimitiveReach& r, const gpu::vec3 corners[3], uint32_t n, const gpu::uvec4& ids,
                       uint32_t cell, gpu::GeomElement& mesh, gpu::GeomElement& prim) {
  if (r.shape.info.x == gpu::kGeomImplicit) {
    ImplicitCellKernel kernel{r.in};
    return kernel.geomCellImplicit(corners[0], corners[1], corners[2], n, ids, cell, r.shape, mesh, prim);
  }
  return gpu::geomCellPrimitive(corners[0], corners[1], corners[2], n, ids, cell, r.shape, mesh, prim);
}

bool tetraImplicitCell(const PrimitiveReach& r, const gpu::vec3 corners[4], const gpu::uvec4& ids, uint32_t cell,
                       gpu::GeomElement& tet, gpu::GeomElement& prim) {
  ImplicitCellKernel kernel{r.in};
  return kernel.geomTetraImplicit(corners[0], corners[1], corners[2], corners[3], ids, cell, r.shape, tet, prim);
}

}  // namespace vkc::cpu
