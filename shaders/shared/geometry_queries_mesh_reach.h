// The reach of the primitive of a mesh-vs-primitive query (issue 17): the box or half space outside
// which no cell of the mesh can touch a sphere, capsule, plane, oriented box or cylinder, and the
// test of a cell's box against it. Written once for the CPU driver (src/cpu/geometry_queries_mesh.cpp,
// geometry_queries_mesh_prims.cpp: the BVH walk's node and cell test) and the Vulkan stage's mesh
// family (shared/geometry_queries_family.h: every cell's box tested, then the per-cell function), so
// that both keep exactly the same cells. GLSL and C++ (common.h).
//
// Sphere and capsule: the box of the segment widened by the radius and by a relative margin above
// float rounding (1e-5 of the largest coordinate). Box and cylinder: their bounding box widened the
// same way. Plane: the cell's box must reach below it (one-sided) or straddle it (two-sided: a cell
// wholly on one side is pushed to that side, no contact), within a relative margin.
// Also which mesh pairs the Vulkan stage runs and their slots (geomMeshPairOnDevice).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_REACH_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_REACH_H
#include "geometry_queries_mesh.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kGeomReachBox, 0u);
VKC_CONSTANT(uint, kGeomReachPlane, 1u);
VKC_CONSTANT(uint, kGeomReachTwoSidedPlane, 2u);

// kind: kGeomReach*; a box: [lo, hi]; a plane: its point lo (= hi) and unit normal.
struct GeomMeshReach {
  vec3 lo;
  vec3 hi;
  vec3 normal;
  uint kind;
};

VKC_FN float geomMaxAbs3(vec3 v) {
  return max(abs(v.x), max(abs(v.y), abs(v.z)));
}

// The reach of a sphere, capsule, plane, oriented box or cylinder (validated).
VKC_FN GeomMeshReach geomMeshReach(GeomShape s) {
  GeomMeshReach r;
  vec3 c = vec3(s.p0);
  r.kind = kGeomReachBox;
  r.normal = vec3(0.0f);
  if (s.info.x == kGeomSphere || s.info.x == kGeomCapsule) {
    vec3 p1 = s.info.x == kGeomCapsule ? vec3(s.p1) : c;
    float radius = s.p0.w;
    float scale = max(geomMaxAbs3(c), max(geomMaxAbs3(p1), radius));
    float reach = radius + 1e-5f * scale;
    r.lo = min(c, p1) - reach;
    r.hi = max(c, p1) + reach;
    return r;
  }
  if (s.info.x == kGeomPlane) {
    r.kind = (s.info.w & kGeomFlagBidirectional) != 0u ? kGeomReachTwoSidedPlane : kGeomReachPlane;
    r.normal = geomUnit(vec3(s.p1));
    r.lo = c;
    r.hi = c;
    return r;
  }
  GeomConvex t = geomMakeConvex(s);
  vec3 halfSize;
  if (s.info.x == kGeomOrientedBox) {
    halfSize = abs(t.axis0) * t.size.x + abs(t.axis1) * t.size.y + abs(t.axis2) * t.size.z;
  } else {
    vec3 a = t.axis0;
    vec3 across = sqrt(max(vec3(1.0f) - a * a, vec3(0.0f)));
    halfSize = abs(a) * t.size.y + across * t.size.x;
  }
  float margin = 1e-5f * max(geomMaxAbs3(c), geomMaxAbs3(halfSize));
  r.lo = c - halfSize - margin;
  r.hi = c + halfSize + margin;
  return r;
}

// Whether a cell (or a BVH node) with box [lo, hi] may touch the primitive of reach r.
VKC_FN bool geomMeshReachTouches(GeomMeshReach r, vec3 lo, vec3 hi) {
  if (r.kind == kGeomReachBox) {
    return !(hi.x < r.lo.x || hi.y < r.lo.y || hi.z < r.lo.z || r.hi.x < lo.x || r.hi.y < lo.y || r.hi.z < lo.z);
  }
  // The box's heights over the plane: centre s, halfSize range e.
  vec3 mid = (lo + hi) * 0.5f;
  vec3 halfSize = (hi - lo) * 0.5f;
  float s = dot(mid - r.lo, r.normal);
  float e = dot(halfSize, abs(r.normal));
  float margin = 1e-5f * (abs(s) + e + geomMaxAbs3(r.lo));
  if (s - e > margin) return false;
  return r.kind == kGeomReachPlane || s + e >= -margin;
}

// The reach of a point x (of a point set against a tetrahedral mesh): x widened by 1e-5 of its
// largest coordinate.
VKC_FN GeomMeshReach geomPointReach(vec3 x) {
  GeomMeshReach r;
  float margin = 1e-5f * max(geomMaxAbs3(x), 1e-30f);
  r.lo = x - margin;
  r.hi = x + margin;
  r.normal = vec3(0.0f);
  r.kind = kGeomReachBox;
  return r;
}

// The static pairs of a mesh and another type that the Vulkan stage runs (lo, hi in type order, hi
// the mesh): a surface, line or tetrahedral mesh against a sphere, capsule, cylinder, oriented box,
// plane or implicit geometry, a tetrahedral or (closed: validated) surface mesh against a point set
// (two meshes: geomMeshMeshOnDevice). Its slots per query: the mesh's cells times
// geomMeshSlotsPerCell; a tetrahedral mesh against a point set, its candidate pairs (point,
// tetrahedron) from the device tree, by point then tetrahedron (the mesh-mesh family,
// geometry_queries_mesh_mesh_slot.h); a closed surface mesh against a point set, its points (the
// vertex pass, geometry_queries_closed_mesh_slot.h).
VKC_FN bool geomMeshPairOnDevice(uint lo, uint hi) {
  if (hi != kGeomSurfaceMesh && hi != kGeomLineMesh && hi != kGeomTetrahedralMesh) return false;
  if (lo == kGeomPointSet) return hi == kGeomTetrahedralMesh || hi == kGeomSurfaceMesh;
  return lo <= kGeomPlane || lo == kGeomImplicit;
}

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_REACH_H
