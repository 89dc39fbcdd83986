// The mesh rows of the geometry queries against a plane, an oriented box, a cylinder or an implicit
// geometry on the CPU (issue 17): which cells of the mesh's BVH may touch the primitive (the node and
// cell test of the driver in src/cpu/geometry_queries_mesh.cpp), then per cell the shared arithmetic
// of shaders/shared/geometry_queries_mesh_prims.h and geometry_queries_mesh_implicit.h.
#include <algorithm>
#include <cmath>

#include "cpu/geometry_queries_mesh.h"
#include "shared/geometry_queries_mesh_prims.h"

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
  if (s.info.x == gpu::kGeomPlane) {
    r.plane = true;
    r.twoSided = (s.info.w & gpu::kGeomFlagBidirectional) != 0u;
    r.normal = gpu::geomUnit(gpu::vec3(s.p1));
    r.lo = r.hi = c;
    return r;
  }
  const gpu::GeomConvex t = gpu::geomMakeConvex(s);
  gpu::vec3 half(0.0f);
  if (s.info.x == gpu::kGeomOrientedBox) {
    half = glm::abs(t.axis0) * t.size.x + glm::abs(t.axis1) * t.size.y + glm::abs(t.axis2) * t.size.z;
  } else {
    const gpu::vec3 a = t.axis0;
    const gpu::vec3 across = glm::sqrt(glm::max(gpu::vec3(1.0f) - a * a, gpu::vec3(0.0f)));
    half = glm::abs(a) * t.size.y + across * t.size.x;
  }
  // Widened by a relative margin above float rounding, as the sphere and capsule boxes.
  const float margin = 1e-5f * std::max(maxAbs(c), maxAbs(half));
  r.lo = c - half - margin;
  r.hi = c + half + margin;
  return r;
}

bool primitiveMayTouch(const PrimitiveReach& r, const gpu::vec3& lo, const gpu::vec3& hi) {
  if (!r.plane) {
    return !(hi.x < r.lo.x || hi.y < r.lo.y || hi.z < r.lo.z || r.hi.x < lo.x || r.hi.y < lo.y ||
             r.hi.z < lo.z);
  }
  // The box's heights over the plane: centre s, half range e. One-sided: some point below; two-sided:
  // the box straddles the plane (a cell wholly on one side is pushed to that side: no contact).
  const gpu::vec3 mid = (lo + hi) * 0.5f, half = (hi - lo) * 0.5f;
  const float s = glm::dot(mid - r.lo, r.normal);
  const float e = glm::dot(half, glm::abs(r.normal));
  const float margin = 1e-5f * (std::abs(s) + e + maxAbs(r.lo));
  if (s - e > margin) return false;
  return !r.twoSided || s + e >= -margin;
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
