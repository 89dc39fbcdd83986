// Pairwise collision detection between geometries (shared/seeds/imstk-collision-detection.md, issue
// 16): a batch of queries (geometry A, geometry B, method), each giving contact elements for a
// solver, elementsA for A and elementsB for B, as iMSTK's CollisionDetectionAlgorithm does.
//
// Geometries: Sphere, Capsule, Cylinder, OrientedBox, Plane (one-sided or two-sided), PointSet (a
// range of points in the input's point array), ImplicitGeometry (a signed distance field sampled
// on a grid, in the input's grid sample array) and the meshes SurfaceMesh, LineMesh and
// TetrahedralMesh (vertices: a range of the point array; cells: a range of the input's cells).
// Pairs with a static method (docs/geometry-queries.md has the table): every pair of the types
// before the meshes except plane-plane and point set-point set (N/A); the mesh pairs below.
// Cylinder-cylinder and cylinder-box are GJK/EPA (docs/geometry-queries.md: its measured error
// against FCL). The continuous method (kContinuous): a point set, each point moving from its
// previous position, against an implicit geometry or an analytic primitive (sphere, capsule,
// cylinder, box, plane), with a persistent per-point state the host keeps between calls.
//
// Meshes (static; docs/geometry-queries.md, "Meshes"): SurfaceMesh and LineMesh against Sphere and
// Capsule, TetrahedralMesh against PointSet, a closed SurfaceMesh (kGeometryFlagClosed) against
// PointSet (the seed's ClosedSurfaceMeshToMeshCD vertex pass: each point's closest point on the
// mesh, inside when the angle-weighted pseudonormal of the closest feature faces away from the
// point; the point moves to that closest point however deep, within the search radius), on the CPU through a
// BVH per mesh (built per call); other pairs with a mesh are refused (kUnsupported: not built yet; point set
// vs line mesh: N/A). Contacts: a contact is a pair of elements at the same position of elementsA and
// elementsB. Each element is a PointDirection (point, unit direction, depth) or, for a point set's side, a
// PointIndexDirection (the point's index within its set, with its position, direction, depth), or,
// for a mesh's side, a PointIndexDirection of a vertex or a CellIndex of a cell (ContactElement):
//   - point: this side's point deepest inside the other side (a point set: the point itself);
//   - direction: the unit direction in which this side moves to separate (the sides' are opposite);
//   - depth > 0: how far (touching, depth 0, is no contact); pointB = pointA + directionA * depth.
// Swapping a query's A and B swaps its elementsA and elementsB exactly (bit for bit).
// Contacts per query: 1 for the primitive pairs, except box-plane (one per box corner below the
// plane, up to 8), capsule-plane (one per end sphere below the plane, up to 2), box-box (a face's
// manifold, up to 8: the incident face clipped by the reference face; an edge pair gives 1) and
// capsule-box (a capsule resting along a face: one at each end of its axis' span over the face, up
// to 2); a point set gives one per point inside the other geometry; a surface or line mesh one per
// touching cell (two for a capsule lying along a triangle's face), in cell order; a tetrahedral mesh
// one per (point, tetrahedron holding it), by point then tetrahedron; a closed surface mesh one per
// point inside it, by point (the mesh's element: the closest feature, vertex, edge or triangle). Order: by
// query, then by slot (box corners in the order x fastest with - before +; capsule ends 0 then 1; a
// manifold's points in the clipped face's order; points in the set's order): deterministic.
//
// Only the CPU twin exists so far (queryGeometriesCpu); the data layouts are those the Vulkan path
// will use (shaders/shared/geometry_queries.h) and the per-pair arithmetic is written once for both
// (shaders/shared/geometry_queries_math.h).
#pragma once

#include <cstdint>
#include <span>

#include "vkcollide/result.h"
#include "vkcollide/types.h"

namespace vkc {
#include "vkcollide/export.h"
VKC_API_BEGIN

enum class GeometryType : uint32_t {
  kSphere = 0,
  kCapsule = 1,
  kCylinder = 2,
  kOrientedBox = 3,
  kPlane = 4,
  kPointSet = 5,
  kImplicitGeometry = 6,
  kSurfaceMesh = 7,      // triangles (see Geometry and "Meshes" below)
  kLineMesh = 8,         // segments
  kTetrahedralMesh = 9,  // tetrahedra
};

enum class GeometryMethod : uint32_t {
  kStatic = 0,      // discrete: the overlap of the geometries as given
  kContinuous = 1,  // a point set's points moving from GeometryQueryInput::previousPoints (see GeometryQuery)
};

enum class ContactElementType : uint32_t {
  kPointDirection = 0,
  kPointIndexDirection = 1,
  kCellIndex = 2,  // a mesh's edge, triangle, segment or tetrahedron (the seed's CellIndexElement)
};

// Cell types of a mesh element (ContactElement::cell, bits 0..7), the seed's IMSTK_VERTEX ... .
enum class CellType : uint32_t {
  kNone = 0,  // not a mesh element
  kVertex = 1,
  kEdge = 2,
  kTriangle = 3,
  kTetrahedron = 4,
};

inline constexpr uint32_t kGeometryFlagBidirectional = 1;  // Geometry::flags of a plane: two-sided
// Geometry::flags of a surface mesh: closed (a watertight, consistently oriented surface with an
// inside; validated, see "Meshes" below and docs/geometry-queries.md).
inline constexpr uint32_t kGeometryFlagClosed = 2;
inline constexpr uint32_t kNoPointIndex = 0xFFFFFFFFu;     // ContactElement::index of a PointDirection

// One geometry; the same 64-byte layout as the device's (GeomShape). Fields by type (vectors in
// xyz; w as noted; fields not listed must be 0). Build them with the functions below.
//   kSphere:      p0 = centre, p0.w = radius >= 0
//   kCapsule:     p0, p1 = the ends of its axis segment (the centres of its end spheres), p0.w = radius >= 0
//   kCylinder:    p0 = centre, p0.w = radius >= 0; p1 = unit axis, p1.w = half height >= 0
//   kOrientedBox: p0 = centre; p1 = unit rotation quaternion (x, y, z, w), local to world;
//                 p2 = half extents >= 0
//   kPlane:       p0 = a point on it; p1 = unit normal (the outside); flags kGeometryFlagBidirectional:
//                 two-sided (see below)
//   kPointSet:    first, count: the points input.points[first, first + count)
//   kImplicitGeometry: a signed distance field (negative inside) sampled on a regular grid:
//                 p0 = origin (the position of sample (0, 0, 0)); p1 = spacing per axis (> 0);
//                 p2 = dimensions nx, ny, nz (whole numbers in [2, 2048], as floats); first: its first
//                 sample in input.gridSamples, count = nx * ny * nz. Sample (i, j, k) is at
//                 origin + (i, j, k) * spacing, gridSamples[first + i + nx * (j + ny * k)].
//                 Between samples the field is trilinear; outside the grid's box it is the value at
//                 the clamped point plus the distance to the box (continuous; positive outside when
//                 the samples on the grid's faces are, the usual padded field); its normal is the
//                 gradient by central differences one spacing apart, normalized.
//   kSurfaceMesh, kLineMesh, kTetrahedralMesh: first, count: its vertices, the points
//                 input.points[first, first + count) (the array the point sets use: a point set and a
//                 mesh may share vertices); p2.x: its first entry in input.cells, p2.y: its cell count
//                 (whole numbers, as floats; entries and vertex counts below 2^24). A cell is 3
//                 (triangle), 2 (segment) or 4 (tetrahedron) consecutive entries of input.cells: vertex
//                 numbers relative to `first` (< count). Cells may not be degenerate: no zero-area
//                 triangle, zero-length segment or zero-volume tetrahedron.
//                 A surface mesh with flags kGeometryFlagClosed is a closed surface: every edge is
//                 shared by exactly two triangles that use it in opposite directions (validated, an
//                 error names the geometry and the edge); its outside is where the triangles' normals
//                 (b - a) x (c - a) point. p2.z: its search radius, finite, >= 0 (0: unbounded): the
//                 greatest depth at which a point is found inside (the seed's bound, the BVH's box).
// Unit vectors must have length within 1e-3 of 1; they are renormalized before use.
// Planes: one-sided (the seed's UnidirectionalPlane*): the inside is below the normal and a shape
// is always pushed along the normal, however deep. Two-sided (Bidirectional*): a shape is pushed to
// the side of its centre (a capsule's: its segment's middle), so a shape whose centre crosses the
// plane comes out on the other side (the seed's known weakness). A point has no centre apart from
// itself: point sets always see a plane as one-sided; implicit geometries too.
// Implicit geometry pairs (static): a point set: each point with a negative field (normal: the
// gradient, depth: minus the field, the seed's ImplicitGeometryToPointSetCD); a sphere: the ball at
// its centre; a capsule: the ball at its axis point of least field (sampled, refined); a cylinder,
// box, plane or implicit geometry: the grid's surface points (each sample within half a cell
// diagonal of the zero level moved onto it along the gradient) inside the other geometry, one contact
// each (both grids' for two implicit geometries); a shape deep inside the field with no surface point
// of the grid inside it gives no contact (the method's limit).
// The analytic primitives serve as implicit functions too: the continuous method and these pairs use
// the same signed distance for them (their exact one: the closest point of the static methods).
struct Geometry {
  Float4 p0;
  Float4 p1;
  Float4 p2;
  GeometryType type = GeometryType::kSphere;
  uint32_t first = 0;
  uint32_t count = 0;
  uint32_t flags = 0;

  static Geometry sphere(Float4 centreRadius);
  static Geometry capsule(Float4 end0, Float4 end1, float radius);  // end0.w, end1.w ignored
  static Geometry cylinder(Float4 centre, Float4 axis, float radius, float halfHeight);
  static Geometry orientedBox(Float4 centre, Float4 rotation, Float4 halfExtents);
  static Geometry plane(Float4 point, Float4 normal, bool bidirectional);
  static Geometry pointSet(uint32_t first, uint32_t count);
  // An implicit geometry of nx * ny * nz samples from gridSamples[firstSample].
  static Geometry implicitGrid(Float4 origin, Float4 spacing, uint32_t nx, uint32_t ny, uint32_t nz,
                               uint32_t firstSample);
  // A mesh of the vertices points[firstVertex, firstVertex + vertexCount) and the cellCount cells
  // from cells[firstCellEntry] (3, 2 or 4 entries each).
  static Geometry surfaceMesh(uint32_t firstVertex, uint32_t vertexCount, uint32_t firstCellEntry,
                              uint32_t cellCount);
  static Geometry lineMesh(uint32_t firstVertex, uint32_t vertexCount, uint32_t firstCellEntry,
                           uint32_t cellCount);
  // A closed surface mesh (flags kGeometryFlagClosed, p2.z = searchRadius; 0: unbounded).
  static Geometry closedSurfaceMesh(uint32_t firstVertex, uint32_t vertexCount, uint32_t firstCellEntry,
                                    uint32_t cellCount, float searchRadius);
  static Geometry tetrahedralMesh(uint32_t firstVertex, uint32_t vertexCount, uint32_t firstCellEntry,
                                  uint32_t cellCount);
};
static_assert(sizeof(Geometry) == 64);

// One query: indices of its two geometries in GeometryQueryInput::geometries (they may be equal only
// for types whose pair is supported) and the method.
// kContinuous (a point set against an implicit geometry or an analytic primitive): each point moves
// along the segment from input.previousPoints[i] to input.points[i]; the first entry of the segment
// into the other geometry (the field's first sign change, found exactly per grid cell for an implicit
// geometry and by the convexity of a primitive: fast points through thin walls are not missed) gives
// the contact: normal at the entry point xc, depth (xc - current).normal (the seed's projection), the
// point pushed back to xc's tangent plane (when that depth is <= 0, a normal not facing the motion:
// back along the motion to xc, depth |xc - current|). Persistent contact: state[this.state + k] for the set's
// point k, xyz the point's last outside position, w 1 while it stays inside since a traced entry:
// then the next call traces from that point instead of the previous position (the seed's
// ImplicitGeometryToPointSetCCD). A point ending inside with no traced entry (it started inside)
// gets the static contact. A moving primitive or implicit geometry (input.previousGeometries): the
// point is traced in its frame, the point's start carried by the geometry's motion from its previous
// pose to its current one (exact for translation; a rotating primitive sees the chord of the point's
// relative arc); the saved outside point is carried likewise. `state` is the query's first entry in GeometryQueryOutput::state; 0 for a
// static query.
struct GeometryQuery {
  uint32_t a = 0;
  uint32_t b = 0;
  GeometryMethod method = GeometryMethod::kStatic;
  uint32_t state = 0;
};
static_assert(sizeof(GeometryQuery) == 16);

// One side of a contact; the same 48-byte layout as the device's (GeomElement).
// A mesh's side (see "Meshes" below): a vertex is a PointIndexDirection (index: the vertex number,
// relative to the mesh's first vertex); an edge, triangle, segment or tetrahedron a CellIndex (index:
// the parent cell, the triangle, segment or tetrahedron in the mesh's cell order). `cell` tells the
// feature: bits 0..7 its CellType, bits 8..11 the corners of the parent cell that make it up (bit k:
// corner k); contactCellIds gives the seed's ids (the corners' vertex numbers). 0 for other elements.
struct ContactElement {
  Float4 point;      // xyz: see the file comment; w: the depth (> 0)
  Float4 direction;  // xyz: unit direction in which this side moves; w: 0
  ContactElementType type = ContactElementType::kPointDirection;
  uint32_t index = kNoPointIndex;  // PointIndexDirection: the point's index within its set (0 .. count - 1)
  uint32_t query = 0;              // the query that produced it
  uint32_t cell = 0;               // a mesh element's cell word (above); 0 otherwise
};
static_assert(sizeof(ContactElement) == 48);

// Where a query's contacts are: elementsA[first, first + count) and elementsB likewise. count is the
// number of contacts found, even when the output overflowed: then only the elements below the
// output's capacity are written.
struct ContactRange {
  uint32_t first = 0;
  uint32_t count = 0;
};

struct GeometryQueryInput {
  std::span<const Geometry> geometries;
  std::span<const Float4> points;  // the point sets' points (xyz; w ignored)
  std::span<const GeometryQuery> queries;
  std::span<const float> gridSamples;      // the implicit geometries' samples (finite)
  std::span<const Float4> previousPoints;  // continuous queries: points' previous positions (empty, or one per point)
  // Continuous queries against a moving primitive: empty (every geometry static), or one per
  // geometry: its pose at the step's start, with the same type and shape (radius, half height, half
  // extents, capsule length within 1e-5 relative, plane flags; an implicit geometry: the same grid
  // but its origin; a point set: the same range). See GeometryQuery.
  std::span<const Geometry> previousGeometries;
  std::span<const uint32_t> cells;  // the meshes' cells: vertex numbers (see Geometry)
};

// The host's output arrays. elementsA and elementsB must have the same size: the capacity in
// contacts. ranges: one per query.
// state: the continuous queries' persistent per-point state, read and written (see GeometryQuery);
// owned by the host, kept between calls (a query keeps its entries from frame to frame), all zero
// before the first call. Entries of static queries are not touched; may be empty without continuous
// queries.
struct GeometryQueryOutput {
  std::span<ContactElement> elementsA;
  std::span<ContactElement> elementsB;
  std::span<ContactRange> ranges;
  std::span<Float4> state;
};

struct GeometryQueryCounts {
  uint32_t contacts = 0;  // contacts found (all queries)
  uint32_t written = 0;   // contacts written: min(contacts, capacity)
  bool overflow = false;  // contacts > capacity: the output holds the first `written` contacts in order
};

// Checks everything queryGeometries* reads. Errors (kInvalidArgument) name the field, e.g.
// "geometries[3].p0.w (radius) is -1: must be >= 0", or the query of an N/A pair
// ("queries[2]: plane vs plane is not collidable (N/A in the seed's table)").
Status validate(const GeometryQueryInput& input);

// Checks the output against the input (validated first): elementsA and elementsB of equal sizes, one
// range per query, each continuous query's state entries inside output.state with finite xyz and w
// 0 or 1. queryGeometries* run both checks before writing anything.
Status validateOutput(const GeometryQueryInput& input, const GeometryQueryOutput& output);

// Runs the batch on the CPU. kCpuSimd runs the static point-set pairs with the analytic primitives
// with SIMD lanes across the points, runs of consecutive static queries of one closed-form primitive
// pair (sphere against sphere, capsule, cylinder, box or plane; capsule-capsule; capsule, cylinder or
// box against a plane) with SIMD lanes across the queries, and the rest with the scalar code: the
// same results as kCpuScalar, bit for bit. kVulkan is refused (kUnsupported). Validates the input and the output
// first (validate, validateOutput): on error nothing is written, the state included. Elements of the
// output past `written`, and those of queries with no contact, are left as they were; continuous
// queries write their state entries.
Result<GeometryQueryCounts> queryGeometriesCpu(const GeometryQueryInput& input, const GeometryQueryOutput& output,
                                               Backend backend);

// A mesh element's feature (ContactElement::cell): its cell type and its corners of the parent cell.
inline CellType contactCellType(const ContactElement& e) {
  return static_cast<CellType>(e.cell & 0xFFu);
}
inline uint32_t contactCellCorners(const ContactElement& e) {
  return (e.cell >> 8) & 0xFu;
}
// The seed's ids of a mesh element of a query of `input` on `mesh` (the query's mesh geometry): the
// vertex numbers (relative to mesh.first) of its feature's corners, in corner order, into ids;
// returns their count (the seed's idCount: 1 vertex, 2 edge, 3 triangle, 4 tetrahedron), 0 for an
// element that is not a mesh's.
uint32_t contactCellIds(const GeometryQueryInput& input, const Geometry& mesh, const ContactElement& e,
                        uint32_t ids[4]);

class Context;

// Runs the batch on any backend: kCpuScalar and kCpuSimd as queryGeometriesCpu; kVulkan on `context`
// (required for kVulkan, ignored otherwise). The results are the same on every backend. kVulkan
// refuses a batch with a mesh query (kUnsupported, naming the query): its mesh path is not built yet.
Result<GeometryQueryCounts> queryGeometries(Backend backend, Context* context, const GeometryQueryInput& input,
                                            const GeometryQueryOutput& output);

VKC_API_END
}  // namespace vkc
