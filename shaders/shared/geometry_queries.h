// Pairwise geometry queries (include/vkcollide/geometry_queries.h): the geometry, query and contact
// element layouts and their constants, written once for the CPU twin (src/cpu/geometry_queries.cpp)
// and the future compute shader. The per-pair arithmetic is in geometry_queries_math.h.
// Compiled as GLSL and as C++ (common.h).
//
// Execution model (both backends): a query (A, B, method) has a fixed number of *slots*
// (geomSlotCount): 1 for most primitive pairs, 2 for capsule-plane (one per end sphere) and
// capsule-cylinder, 4 for cylinder-plane (its rim points), 8 for box-plane (one per corner), the
// point count for a point set. Each slot is evaluated on its own (geomSlotContact) and yields zero or
// one contact (a pair of elements, one per side). Contacts are stored in (query, slot) order: on the
// GPU a count pass, a prefix sum and a write pass give the same order as the CPU's loop, with no
// atomics in the output order.
#ifndef VKC_SHARED_GEOMETRY_QUERIES_H
#define VKC_SHARED_GEOMETRY_QUERIES_H
#include "common.h"

VKC_NAMESPACE_BEGIN

// Geometry types (GeomShape::info.x). The numbering is also the canonical order of a pair: a query
// is evaluated with the lower type first and its elements swapped back when the caller's order differs.
VKC_CONSTANT(uint, kGeomSphere, 0u);
VKC_CONSTANT(uint, kGeomCapsule, 1u);
VKC_CONSTANT(uint, kGeomCylinder, 2u);
VKC_CONSTANT(uint, kGeomOrientedBox, 3u);
VKC_CONSTANT(uint, kGeomPlane, 4u);
VKC_CONSTANT(uint, kGeomPointSet, 5u);
VKC_CONSTANT(uint, kGeomImplicit, 6u);  // a signed distance field sampled on a regular grid
VKC_CONSTANT(uint, kGeomTypeCount, 7u);

// GeomShape::info.w flags.
VKC_CONSTANT(uint, kGeomFlagBidirectional, 1u);  // planes: two-sided (the side of the other shape's centre)

// Query methods (GeomQuery::method). Continuous: a point set against an implicit geometry or an
// analytic primitive, each point moving from its previous position (the previousPoints array) to its
// current one (geometry_queries_implicit.h), with a persistent per-point state (GeomQuery::state).
VKC_CONSTANT(uint, kGeomMethodStatic, 0u);
VKC_CONSTANT(uint, kGeomMethodContinuous, 1u);
VKC_CONSTANT(uint, kGeomMethodCount, 2u);

// Element types (GeomElement::type), the seed's names.
VKC_CONSTANT(uint, kElementPointDirection, 0u);
VKC_CONSTANT(uint, kElementPointIndexDirection, 1u);
VKC_CONSTANT(uint, kGeomNoIndex, 0xFFFFFFFFu);

// Slots of the non-point-set pairs that give several contacts.
VKC_CONSTANT(uint, kGeomBoxPlaneSlots, 8u);      // one per box corner
VKC_CONSTANT(uint, kGeomBoxBoxSlots, 8u);        // a face's manifold: a box face clipped by another's sides
VKC_CONSTANT(uint, kGeomCapsuleBoxSlots, 2u);    // the ends of the axis' span over a face
VKC_CONSTANT(uint, kGeomCapsulePlaneSlots, 2u);  // one per end sphere
VKC_CONSTANT(uint, kGeomCylinderPlaneSlots, 4u);  // rim points: the lowest; a flat cap's square
VKC_CONSTANT(uint, kGeomCapsuleCylinderSlots, 2u);  // the ends of the axis' span over a cap or wall
VKC_CONSTANT(uint, kGeomCylinderBoxSlots, 8u);  // resting on a face: the rim's square or lowest line, clipped
VKC_CONSTANT(uint, kGeomCylinderCylinderSlots, 6u);  // stacked: a rim's square and the rims' crossings
// A box or cylinder against an implicit geometry: its own points first (a box's corners, a cylinder's
// rim squares), then the grid's samples as surface points (geomImplicitCanonicalContact): those of
// the shape's sample box only (geomShapeSampleBox), in grid order.
VKC_CONSTANT(uint, kGeomImplicitShapeSlots, 8u);
// A capsule against an implicit geometry: the ball at its axis point of least field, then its end
// balls (each unless within the radius of that point).
VKC_CONSTANT(uint, kGeomCapsuleImplicitSlots, 3u);
// A cylinder-plane or cylinder-box pair's manifold (geomCylinderPlanePoint; the box's face as the
// plane): a cylinder counts as standing on its cap where the sine of the angle between its axis and
// the plane's normal is at most this (about 2 degrees), and as lying on its side where the sine of its
// axis' angle with the plane is. A box face counts as flat against the cylinder where the sine of its
// normal's angle with the deepest contact's direction is.
VKC_CONSTANT(float, kGeomCylinderFlatSine, 0.0349f);

// A capsule's deepest point along its axis against a box or a cylinder is found by a golden-section
// search of the (convex) signed distance along the segment, this many steps: the bracket shrinks by
// 0.618^steps, below 2^-24 of the segment for 36 steps.
VKC_CONSTANT(uint, kGeomSegmentSearchSteps, 36u);
// The search's inner points sit this fraction of the bracket from its ends ((sqrt 5 - 1) / 2).
VKC_CONSTANT(float, kGeomGoldenSection, 0.6180339887f);

// Implicit geometry grids: each dimension in [2, kGeomGridMaxDim] samples. A segment crosses at most
// 3 * (kGeomGridMaxDim - 1) + 1 cells, the bound of the continuous trace's cell walk.
VKC_CONSTANT(uint, kGeomGridMaxDim, 2048u);
VKC_CONSTANT(uint, kGeomTraceMaxCells, 6144u);
// Bisection steps of a root bracket (continuous method): the bracket shrinks by 2^-kGeomRootSteps.
VKC_CONSTANT(uint, kGeomRootSteps, 24u);

// A capsule's axis against an implicit geometry: sampled at this many + 1 evenly spaced points.
VKC_CONSTANT(uint, kGeomAxisSamples, 16u);

// Pair families: the Vulkan stage compiles one shader per family (shaders/geometry_queries_<family>.comp),
// each holding only its own pairs' code, so that no device compiler meets every pair at once (lavapipe's
// did not finish a shader holding them all). A query's family (geomQueryFamily):
//   BASIC       static pairs of primitives with closed forms or a search along a capsule's axis, and
//               point sets against primitives (static);
//   MANIFOLD    box-box and capsule-box (contact manifolds, polygon clipping);
//   CONVEX      cylinder-cylinder and cylinder-box (GJK/EPA, local search fallback), and a surface,
//               line or tetrahedral mesh against a cylinder (one slot per cell);
//   IMPLICIT    static pairs with an implicit geometry, a mesh's included (one slot per cell);
//   CONTINUOUS  the continuous method;
//   MESH        static pairs of a surface, line or tetrahedral mesh with a sphere, capsule, plane or
//               oriented box (one slot per cell) and of a closed surface mesh with a point set (one
//               per point). The mesh slots of MESH, CONVEX and IMPLICIT: geometry_queries_mesh_slot.h;
//   MESH_MESH   static pairs of two meshes (geomMeshMeshOnDevice: surface-surface, surface-line,
//               line-line, line-, surface- and tetrahedral-tetrahedral; one slot per pair of cells)
//               and of a tetrahedral mesh with a point set (one per candidate pair of a point and a
//               tetrahedron, from the same device tree): geometry_queries_mesh_mesh_slot.h;
//   MESH_CCD    the continuous method with a mesh (line mesh vs line mesh, a point set vs a surface
//               mesh; one slot per pair of segments, per point): geometry_queries_mesh_ccd_slot.h.
//               The other mesh pairs have no device path and no slots.
// The numbers are macros too, for the preprocessor's `#if VKC_GEOM_WITH(family)`: a shader defines
// VKC_GEOM_FAMILIES (a bit per family) before including the math; C++ compiles every family.
#define VKC_GEOM_FAMILY_BASIC 0
#define VKC_GEOM_FAMILY_MANIFOLD 1
#define VKC_GEOM_FAMILY_CONVEX 2
#define VKC_GEOM_FAMILY_IMPLICIT 3
#define VKC_GEOM_FAMILY_CONTINUOUS 4
#define VKC_GEOM_FAMILY_MESH 5
#define VKC_GEOM_FAMILY_MESH_MESH 6
#define VKC_GEOM_FAMILY_MESH_CCD 7
#ifndef VKC_GEOM_FAMILIES
#define VKC_GEOM_FAMILIES 255
#endif
#define VKC_GEOM_WITH(family) (((VKC_GEOM_FAMILIES) >> (family)) & 1)
VKC_CONSTANT(uint, kGeomFamilyBasic, 0u);
VKC_CONSTANT(uint, kGeomFamilyManifold, 1u);
VKC_CONSTANT(uint, kGeomFamilyConvex, 2u);
VKC_CONSTANT(uint, kGeomFamilyImplicit, 3u);
VKC_CONSTANT(uint, kGeomFamilyContinuous, 4u);
VKC_CONSTANT(uint, kGeomFamilyMesh, 5u);
VKC_CONSTANT(uint, kGeomFamilyMeshMesh, 6u);
VKC_CONSTANT(uint, kGeomFamilyMeshCcd, 7u);
VKC_CONSTANT(uint, kGeomFamilyCount, 8u);

// The family of a query of types ta, tb with `method` (a supported pair).
VKC_FN uint geomQueryFamily(uint ta, uint tb, uint method) {
  uint lo = min(ta, tb);
  uint hi = max(ta, tb);
  if (method == kGeomMethodContinuous) return hi > kGeomImplicit ? kGeomFamilyMeshCcd : kGeomFamilyContinuous;
  if (lo > kGeomImplicit) return kGeomFamilyMeshMesh;  // two meshes (geometry_queries_mesh.h's types)
  // A point set's points against a tetrahedral mesh's cells (type kGeomTypeCount + 2,
  // geometry_queries_mesh.h): candidate pairs from the device tree.
  if (lo == kGeomPointSet && hi == kGeomTypeCount + 2u) return kGeomFamilyMeshMesh;
  if (hi > kGeomImplicit) {  // a mesh type (geometry_queries_mesh.h) against another type
    // A mesh against a cylinder runs with the other GJK/EPA pairs, against an implicit geometry with
    // the other grid readers: no family shader holds both, nor either with the mesh family's code.
    if (lo == kGeomCylinder) return kGeomFamilyConvex;
    if (lo == kGeomImplicit) return kGeomFamilyImplicit;
    return kGeomFamilyMesh;
  }
  if (hi == kGeomImplicit) return kGeomFamilyImplicit;
  if (hi == kGeomOrientedBox && (lo == kGeomOrientedBox || lo == kGeomCapsule)) return kGeomFamilyManifold;
  if (lo == kGeomCylinder && (hi == kGeomCylinder || hi == kGeomOrientedBox)) return kGeomFamilyConvex;
  return kGeomFamilyBasic;
}

// Unit vectors (rotation quaternion, cylinder axis, plane normal) must have length within this of 1.
VKC_CONSTANT(float, kGeomUnitTolerance, 1e-3f);

// One geometry (64 bytes), its fields by type:
//   sphere:   p0 = centre xyz, radius w
//   capsule:  p0 = end 0 xyz, radius w; p1 = end 1 xyz (the segment's ends: the centres of the end spheres)
//   cylinder: p0 = centre xyz, radius w; p1 = unit axis xyz, half height w
//   box:      p0 = centre xyz; p1 = unit rotation quaternion (x, y, z, w: local -> world); p2 = half extents xyz
//   plane:    p0 = a point xyz; p1 = unit normal xyz (the outside); info.w kGeomFlagBidirectional
//   pointset: info.y = first point in the points array, info.z = point count
//   implicit: p0 = origin xyz (the position of sample (0, 0, 0)); p1 = spacing xyz (> 0);
//             p2 = dimensions xyz (sample counts nx, ny, nz, whole numbers in [2, kGeomGridMaxDim], as
//             floats); info.y = first sample in the grid sample array, info.z = nx * ny * nz.
//             Sample (i, j, k), at origin + (i, j, k) * spacing, is gridSamples[info.y + i + nx * (j + ny * k)]:
//             the signed distance there (negative inside). Between samples: trilinear; outside the
//             grid's box: the value at the clamped point plus the distance to the box; gradient:
//             central differences of that function, one spacing apart (geometry_queries_implicit.h).
// info.x is the type. Unused fields are 0.
struct GeomShape {
  vec4 p0;
  vec4 p1;
  vec4 p2;
  uvec4 info;  // type, first point, point count, flags
};
VKC_CHECK_LAYOUT(GeomShape, 64);
VKC_CHECK_OFFSET(GeomShape, info, 48);

// One query: geometries a and b (indices into the geometry array) and the method. state: for a
// continuous query, the first entry of its persistent state (one vec4 per point of its point set, in
// the set's order, in the host's state array: xyz the point's last position outside the other
// geometry, w 1 while the point stays inside since a traced entry, else 0); 0 for a static query.
struct GeomQuery {
  uint a;
  uint b;
  uint method;
  uint state;
};
VKC_CHECK_LAYOUT(GeomQuery, 16);

// One side of a contact (48 bytes).
//   point.xyz: this side's point deepest inside the other side (PointIndexDirection: the point itself);
//   point.w: penetration depth (> 0);
//   direction.xyz: unit direction in which this side moves to separate (the other side's is its opposite);
//   type: kElementPointDirection, or kElementPointIndexDirection for a point set's side;
//   index: the point's index within its point set (0 .. count - 1), kGeomNoIndex otherwise;
//   query: the query that produced it.
// The two sides of one contact satisfy pointB = pointA + directionA * depth.
struct GeomElement {
  vec4 point;
  vec4 direction;
  uint type;
  uint index;
  uint query;
  uint pad;
};
VKC_CHECK_LAYOUT(GeomElement, 48);
VKC_CHECK_OFFSET(GeomElement, type, 32);

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_H
