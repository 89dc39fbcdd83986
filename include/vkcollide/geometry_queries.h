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
// point; the point moves to that closest point however deep, within the search radius), SurfaceMesh
// against SurfaceMesh (intersecting triangle pairs: vertex-triangle and edge-edge elements, as iMSTK's
// SurfaceMeshToSurfaceMeshCD) and against LineMesh (segments crossing triangles), LineMesh against
// TetrahedralMesh (segments meeting tetrahedra, a segment inside one included), a closed SurfaceMesh
// adding the other mesh's vertices inside it; LineMesh against LineMesh or itself (segments closer
// than the sum of the thicknesses: edge-edge elements; a mesh against itself skips segments sharing a
// vertex); TetrahedralMesh against Sphere, Capsule, Cylinder (GJK/EPA), Plane, OrientedBox and
// ImplicitGeometry (one contact per touching tetrahedron: the closest vertex, edge or face, or the
// whole tetrahedron when the shape reaches its inside); SurfaceMesh and TetrahedralMesh against
// TetrahedralMesh (one contact per overlapping pair of cells, by separating axes: the penetration
// depth, the first cell's deepest feature and the tetrahedron's); a SurfaceMesh or TetrahedralMesh
// against itself (self collision, query a == b: each pair of its cells once, the lower cell as the
// first mesh's, never two cells sharing a vertex, so a cell's neighbours are not tested against it;
// a surface mesh's edge-edge contacts once per unordered pair of edges; no vertex pass against
// itself); SurfaceMesh and LineMesh against Plane (the cell's
// deepest corner, an edge or face when parallel), OrientedBox (separating axes), Cylinder (GJK/EPA)
// and ImplicitGeometry (the cell's point of least field), one contact per touching cell; on the CPU
// through a BVH per mesh (built per call, or kept between calls: GeometryQueryTrees; two meshes'
// kept trees walked together, the candidate pairs sorted into cell order); on Vulkan (surface, line
// and tetrahedral meshes against a sphere, capsule, cylinder, plane, oriented box or implicit
// geometry) one work item per cell, the same contacts in the same order. Mesh against mesh on Vulkan
// (static surface-surface, surface-line, line-line, line-tetrahedral, surface-tetrahedral,
// tetrahedral-tetrahedral, a surface, line or tetrahedral mesh against itself, and a tetrahedral mesh against a point set, X its
// points): the candidate pairs of cells (the CPU's candidate box, a point's reach box) found
// through one device BVH over the meshes' cells, one work item per candidate pair, so the
// same contacts in the same order; the work grows with the candidates, not the product of the cell
// counts. A closed surface mesh's vertex pass on Vulkan (against a point set, or after a mesh-mesh
// query's candidate pairs): one work item per point or vertex walks that device BVH with the CPU's
// search box (the same contacts in the same order); with an unbounded search radius a closed mesh of
// more than 32 000 triangles is refused there (kUnsupported; CPU backends: any size). Candidates past a
// query's room are counted in GeometryQueryCounts::candidatesMissing (see
// GeometryQueryStageCreateInfo::maxCandidates); this function then reruns with room for them.
// Continuous (kContinuous, "Continuous mesh queries" in docs/geometry-queries.md): LineMesh vs
// LineMesh (two meshes or one against itself: segments sharing a vertex skipped) and SurfaceMesh vs
// PointSet, every vertex and point moving from input.previousPoints to input.points, conservative (no
// false negatives), candidates from a BVH of swept boxes: one contact per segment pair at its
// earliest time of impact (both sides the segment's CellIndex), one per point at its earliest hit
// (the point's PointIndexDirection and the triangle's CellIndex); direction.w the time of impact. On
// Vulkan the candidate pairs come from a device BVH over the swept cells (the CPU's candidate boxes):
// one work item per candidate pair, the same contacts in the same order.
// Other pairs with a mesh are refused (kUnsupported: not built yet; point
// set vs line mesh: N/A). Contacts: a contact is a pair of elements at the same position of elementsA and
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
// to 2), capsule-cylinder (the same on a cap, or along the wall when the axes are within about 2
// degrees of parallel, up to 2) and cylinder-plane (the lowest rim point; a cylinder standing on its
// cap within about 2 degrees adds three more of the cap's rim, a quarter turn apart, one lying on its
// side the other cap's lowest point; each below the plane, up to 4) and cylinder-box (a cylinder
// resting on a face within about 2 degrees: its rim's square, standing, or its lowest line, lying,
// clipped by the face's sides, each point behind the face; up to 8) and cylinder-cylinder (stacked:
// a rim square over the wider cap and where the rims cross, up to 6; side by side, lying on a cap or
// standing on a wall: a line's clipped ends, 2); a point set gives one per point
// inside the other geometry; a surface or line mesh one per touching cell (two for a capsule lying
// along a triangle's face), in cell order; a tetrahedral mesh one per (point, tetrahedron holding
// it), by point then tetrahedron, and one per touching tetrahedron against a sphere, capsule, plane,
// box or implicit geometry, in cell order; a closed surface mesh one per point inside it, by point (the mesh's element: the closest feature, vertex, edge or triangle); mesh
// against mesh one per pair of cells in contact (two surface meshes: one per pair of crossing edges)
// by cell of the first mesh in the canonical order (lower type first, two meshes of one type by
// geometry index), then cell of the second, then a closed mesh's inside vertices by vertex. Order: by
// query, then by slot (box corners in the order x fastest with - before +; capsule ends 0 then 1; a
// span's ends in axis order; a cylinder's lowest point, then its square's next corners or the other
// cap's point; a manifold's points in the clipped face's order; points in the set's order):
// deterministic.
//
// Backends: the CPU twin (queryGeometriesCpu) and the Vulkan stage (GeometryQueryStage, below) share
// the data layouts (shaders/shared/geometry_queries.h) and the per-slot arithmetic
// (shaders/shared/geometry_queries_math.h, geometry_queries_implicit.h). queryGeometries() runs a
// batch on any backend.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "vkcollide/context.h"
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
//                 p2.w of a surface or line mesh: its thickness, finite, >= 0, used by the continuous
//                 method (two line meshes touch within the sum of theirs, a point within the surface
//                 mesh's) and by static LineMesh vs LineMesh (the radius of its segments); a
//                 tetrahedral mesh's is 0.
// Unit vectors must have length within 1e-3 of 1; they are renormalized before use.
// Planes: one-sided (the seed's UnidirectionalPlane*): the inside is below the normal and a shape
// is always pushed along the normal, however deep. Two-sided (Bidirectional*): a shape is pushed to
// the side of its centre (a capsule's: its segment's middle), so a shape whose centre crosses the
// plane comes out on the other side (the seed's known weakness). A point has no centre apart from
// itself: point sets always see a plane as one-sided; implicit geometries too.
// Implicit geometry pairs (static): a point set: each point with a negative field (normal: the
// gradient, depth: minus the field, the seed's ImplicitGeometryToPointSetCD); a sphere: the ball at
// its centre; a capsule: the ball at its axis point of least field (sampled, refined), then its end
// balls, each unless its centre is within the radius of that point (up to 3 contacts); a cylinder or
// box: first its own points with a negative field (a box's 8 corners, a cylinder's 4 rim points a
// quarter turn apart on each cap), then the grid's surface points (each sample within half a cell
// diagonal of the zero level moved onto it along the gradient) inside it, one contact each; a plane:
// the surface points inside it; two implicit geometries: both grids' surface points. A shape deep
// inside the field thus has its points' contacts; two fields, one deep inside the other with no
// surface point inside it, none (the method's limit).
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
  // thickness: p2.w, the continuous method's (see "Continuous mesh queries" below).
  static Geometry surfaceMesh(uint32_t firstVertex, uint32_t vertexCount, uint32_t firstCellEntry,
                              uint32_t cellCount, float thickness = 0.0f);
  static Geometry lineMesh(uint32_t firstVertex, uint32_t vertexCount, uint32_t firstCellEntry,
                           uint32_t cellCount, float thickness = 0.0f);
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
// static query and for a continuous query with a mesh (stateless; see the file comment).
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
  Float4 direction;  // xyz: unit direction in which this side moves; w: 0 (a continuous mesh query: the time of impact)
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

class GeometryQueryTrees;  // below

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
  // Optional: the static mesh queries' trees kept between calls (GeometryQueryTrees, below), built
  // from this input's meshes and refit to its points; null: each call builds the trees it needs.
  const GeometryQueryTrees* trees = nullptr;
  // Optional, with trees: the caller's statement that this input's mesh geometries, cells and vertices
  // are bitwise those of the trees' last build or refit, given as its trees->generation(). validate()
  // then checks the meshes' geometries (64 bytes each) and the generation (a different one is an error)
  // but does not compare the kept meshes' vertices and open meshes' cells with the trees' (two meshes
  // of 1.5M triangles: 59 MB read a call either way; stated, no fingerprints): it checks what keeps the call in
  // bounds (the vertices finite, an open mesh's cell entries below its vertex count; a closed mesh's
  // cells are compared). A vertex or cell changed since is then the caller's error, not detected, and
  // the contacts are unspecified (as with FCL's kept models). 0 (the default): every call compares them
  // (see GeometryQueryTrees).
  uint64_t treesGeneration = 0;
};

// The BVHs of a batch's meshes, kept between calls as FCL keeps its models (issue 17): built once
// from an input's mesh geometries, refit when their vertices move, and passed with the input
// (GeometryQueryInput::trees). The CPU's static mesh queries then walk these trees instead of building
// their own; the contacts are the same bit for bit. The object keeps a copy of each mesh's geometry,
// cells and vertices (xyz) as of its last build or refit, and validate() checks them against the input's
// (geometries bitwise; cells and vertices by keyed fingerprints of 4 KB blocks, a change missed with
// probability at most 2^-64 a block, a block that differs compared bitwise): a geometry or cell that
// changed is an error naming the field (build again), a vertex that moved names the point (refit first);
// unless the input states the trees' generation (treesGeneration). Mesh geometries a static query uses
// without a tree get one built in the call. kVulkan ignores the trees (they are still validated).
// Continuous queries build their swept-box trees per call.
class GeometryQueryTrees {
 public:
  // Validates `input` (validate, its own trees field ignored) and builds a tree for each mesh
  // geometry that a static query of input.queries uses.
  static Result<GeometryQueryTrees> build(const GeometryQueryInput& input);
  // The vertices moved: refits every tree to input.points (the same geometries and cells as at
  // build, checked: an error names the field; input validated, its trees field ignored). On error
  // the trees are unchanged.
  Status refit(const GeometryQueryInput& input);
  // The mesh geometries that have a tree, in geometry order.
  std::vector<uint32_t> geometries() const;
  // This object's last successful build or refit (nonzero, unique in the process): the value that
  // GeometryQueryInput::treesGeneration states to skip the comparison of cells and vertices.
  uint64_t generation() const;

  GeometryQueryTrees(GeometryQueryTrees&&) noexcept;
  GeometryQueryTrees& operator=(GeometryQueryTrees&&) noexcept;
  ~GeometryQueryTrees();

  struct Impl;  // opaque
  const Impl& impl() const { return *impl_; }

 private:
  explicit GeometryQueryTrees(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
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
  // Vulkan only: mesh-mesh and continuous mesh candidate pairs that did not fit their queries' slots
  // (GeometryQueryStageCreateInfo::maxCandidates) and were not evaluated; their contacts are missing.
  // queryGeometries sizes its own stage again and reruns when it is not 0: it returns 0.
  uint32_t candidatesMissing = 0;
};

// Checks everything queryGeometries* reads (input.trees included, see GeometryQueryTrees). Errors
// (kInvalidArgument) name the field, e.g.
// "geometries[3].p0.w (radius) is -1: must be >= 0", or the query of an N/A pair
// ("queries[2]: plane vs plane is not collidable (N/A in the seed's table)").
Status validate(const GeometryQueryInput& input);

// Checks the output against the input (validated first): elementsA and elementsB of equal sizes, one
// range per query, each continuous query's state entries inside output.state (no two continuous
// queries sharing an entry) with finite xyz and w 0 or 1. queryGeometries* run both checks before
// writing anything.
Status validateOutput(const GeometryQueryInput& input, const GeometryQueryOutput& output);

// Runs the batch on the CPU. kCpuSimd runs the static point-set pairs with the analytic primitives
// with SIMD lanes across the points, runs of consecutive static queries of one closed-form primitive
// pair (sphere against sphere, capsule, cylinder, box or plane; capsule-capsule; capsule-cylinder;
// capsule, cylinder or box against a plane; capsule-box and box-box, whose clipping stays per query)
// with SIMD lanes across the queries, two kept meshes' tree walk in lanes and a triangle pre-test in
// lanes (mesh vs mesh: it drops only pairs the exact triangle test rejects, by the same operations),
// the rest scalar code: the
// same results as kCpuScalar, bit for bit. kVulkan is refused here (kUnsupported: use queryGeometries
// or GeometryQueryStage). Validates the input and the output
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

// --- Vulkan ---
//
// GeometryQueryStage runs batches on a Vulkan device in three dependent dispatches whatever the
// numbers of queries, slots, points or pair families (one query of 1M points and 10k small queries
// alike). The pairs are compiled into one shader per pair family (basic closed forms and point sets,
// manifolds, GJK/EPA, implicit geometries, continuous, a mesh against a primitive, mesh against
// mesh), so that each pipeline holds only its own
// pairs' code; a record runs only the families its batch holds:
//   count  a dispatch per family present, one invocation per slot of its queries (a query's slots: see
//          the file comment): evaluates it and ranks the hits within its tile of 64 slots;
//   scan   one workgroup: the prefix over the tiles; writes the counts (GeometryQueryDeviceCounts);
//   write  a dispatch per family present, evaluating the hit slots again and writing their elements
//          at their (query, slot)-ordered positions below the capacity (and the continuous queries'
//          new state), and a dispatch writing every query's range.
// The dispatches of one level touch disjoint elements and have no barrier between them; barriers:
// one before the uploads' copies, one before the first pass, one between the levels, one after. The
// slot layout (each query's slots, a new tile where the pair family changes) is computed by the host
// when record() uploads the batch. docs/geometry-queries.md lists the buffers.
//
// Contacts of a Vulkan record agree with kCpuScalar's: same count, ranges, types, indices and order,
// and the same bits where the device rounds square roots and divisions as the CPU does (lavapipe:
// measured so on every test batch; every floating-point operation of the shaders is decorated
// NoContraction at build time, dot, cross and mix are spelled out as GLM computes them, and the shared
// math uses no sin, cos or vec4 dot). On other devices point, direction and depth are expected within this
// tolerance times (1 + |value|), except that an iterative pair (GJK/EPA, the capsule axis search)
// may settle on another answer when its steps round differently (docs/geometry-queries.md).
inline constexpr float kGeometryQueryTolerance = 1e-4f;

// What the device writes after the contacts (48 bytes, at the counts buffer's offset): the counts of
// GeometryQueryCounts, then a VkDispatchIndirectCommand for the host's next pass over the written
// contacts: {ceil(written / indirectGroupSize), 1, 1}, at byte offset 16 (kGeometryQueryIndirectOffset).
// A device-resident batch (GeometryQueryRecordInfo::queryBuffer) also reports what its device layout
// found: invalidQueries and slots (0 for a batch given in host memory).
struct GeometryQueryDeviceCounts {
  uint32_t contacts = 0;
  uint32_t written = 0;
  uint32_t overflow = 0;  // 1 when contacts > capacity
  uint32_t candidatesMissing = 0;  // mesh-mesh and mesh CCD candidate pairs past their queries' slots (maxCandidates)
  uint32_t dispatchX = 0;
  uint32_t dispatchY = 0;
  uint32_t dispatchZ = 0;
  // Device-resident batch: the slots its valid queries need (saturating at 2^31 - 1). More than the
  // stage's maxSlots: the queries whose slots end past maxSlots were dropped whole (no contact,
  // range {first, 0}); the queries before them are complete.
  uint32_t slots = 0;
  // Device-resident batch: the queries refused on the device (no slots, no contact, range {first, 0}):
  // a geometry index >= geometryCount, an unknown method, a static query with a state entry, a
  // geometry of a mesh or unknown type or with a value validate() would refuse (a NaN or infinity, a
  // negative radius, a unit vector off by more than 1e-3, a point set or grid past pointCount or
  // gridSampleCount, ...), a pair that is N/A or has no such method, a pair family not in
  // deviceFamilies, a continuous query without previous points, with a previous pose of another
  // type, flags or range, or with state entries past stateCount.
  uint32_t invalidQueries = 0;
  uint32_t pad[3] = {};
};
static_assert(sizeof(GeometryQueryDeviceCounts) == 48);
inline constexpr VkDeviceSize kGeometryQueryIndirectOffset = 16;

struct GeometryQueryStageCreateInfo {
  uint32_t maxQueries = 0;      // queries per record
  uint32_t maxGeometries = 0;   // geometries per record (and previous poses)
  uint32_t maxPoints = 0;       // points per record in the stage's own point buffers (a host's buffer may hold more)
  uint32_t maxGridSamples = 0;  // grid samples per record in the stage's own sample buffer (likewise)
  uint32_t maxStates = 0;       // state entries of run()'s own state buffer (record() uses the host's)
  uint32_t maxContacts = 0;     // capacity of the stage's own element buffers (a host's may differ)
  // Slots per record, the layout's gaps included: the sum of every query's slot count (1 for most
  // pairs, up to 8 for a manifold, the point count for a point set; an implicit geometry against a
  // cylinder, box or plane the samples near the shape (its sample box, at most the grid's sample
  // count) plus 8 for a box or cylinder, both grids' sample counts for two implicit geometries) plus up
  // to 63 per change of pair family between
  // consecutive queries; a query of a mesh against a primitive has one slot per cell (two per triangle
  // against a capsule), a tetrahedral mesh against a point set one per candidate pair (maxCandidates). 0:
  // maxPoints + 2 * maxGridSamples + 72 * maxQueries + maxCells, enough when every point set, grid and
  // mesh is in at most one query and no mesh meets a mesh or a point set (set maxSlots for those). A
  // batch of static primitive pairs only uses no slots (GeometryQueryRecordInfo::devicePrimitivePairs).
  uint32_t maxSlots = 0;
  uint32_t framesInFlight = 1;  // 1..kMaxFramesInFlight sets of buffers
  uint32_t maxCells = 0;        // mesh cell entries (uint32 vertex numbers) per record in the stage's own cell buffer
  // Static mesh-mesh queries (surface, line and tetrahedral meshes against each other) find their
  // candidate pairs of cells (boxes overlapping) through one tree built on the device over the cells
  // of the record's meshes of such queries and closed meshes against point sets, each mesh once: maxMeshPairCells bounds those cells (0:
  // maxCells / 2, every mesh cell). A mesh-mesh query has one slot per candidate pair: min(nX * nY,
  // max(maxCandidates, nX)) slots (nX, nY: its meshes' cells, X the first of the canonical order; a tetrahedral mesh
  // against a point set too, nX its points), counted in maxSlots; 0: nX * nY (every pair of cells fits). Candidates
  // past a query's slots are not evaluated: GeometryQueryCounts::candidatesMissing (GeometryQueryDeviceCounts) counts them.
  // Continuous mesh queries (line-line, point set vs surface mesh) share the tree (then built over the
  // cells' swept boxes, previous and current vertices) and the rule, nX a point set's points.
  uint32_t maxMeshPairCells = 0;
  uint32_t maxCandidates = 0;
};

// Where a record writes. A null buffer: the stage's own (elementsABuffer() etc.), of maxContacts
// elements. The host's element buffers: the capacity in contacts is min(elementsA.size,
// elementsB.size) / sizeof(ContactElement) (sizes in bytes, not VK_WHOLE_SIZE); both must be given or
// neither. Ranges: one ContactRange per query. Counts: GeometryQueryDeviceCounts; to dispatch from
// it, the buffer needs VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT (the stage's own has it). All need
// STORAGE_BUFFER usage.
struct GeometryQueryOutputBuffers {
  BufferRange elementsA;
  BufferRange elementsB;
  BufferRange ranges;
  BufferRange counts;
};

// Pair families of a device-resident batch (GeometryQueryRecordInfo::deviceFamilies): a bit per
// family shader the record dispatches (docs/geometry-queries.md, "Device-resident batches").
inline constexpr uint32_t kGeometryQueryFamilyBasic = 1u << 0;     // closed forms, capsule axis search, point sets
inline constexpr uint32_t kGeometryQueryFamilyManifold = 1u << 1;  // box-box, capsule-box
inline constexpr uint32_t kGeometryQueryFamilyConvex = 1u << 2;    // cylinder-cylinder, cylinder-box (GJK/EPA)
inline constexpr uint32_t kGeometryQueryFamilyImplicit = 1u << 3;  // static pairs with an implicit geometry
inline constexpr uint32_t kGeometryQueryFamilyContinuous = 1u << 4;  // the continuous method
inline constexpr uint32_t kGeometryQueryFamiliesDevice = 31u;      // all of the above
// The mesh families, which a device-resident batch cannot hold (GeometryQueryStage::createPipelines).
inline constexpr uint32_t kGeometryQueryFamilyMesh = 1u << 5;            // a mesh against a primitive or point set
inline constexpr uint32_t kGeometryQueryFamilyMeshMesh = 1u << 6;        // static mesh against mesh
inline constexpr uint32_t kGeometryQueryFamilyMeshContinuous = 1u << 7;  // continuous mesh queries
inline constexpr uint32_t kGeometryQueryFamiliesAll = 255u;
// The families of the primitive pairs (GeometryQueryRecordInfo::devicePrimitivePairs).
inline constexpr uint32_t kGeometryQueryFamiliesPrimitive =
    kGeometryQueryFamilyBasic | kGeometryQueryFamilyManifold | kGeometryQueryFamilyConvex;

// One batch for record(). Arrays the device reads come either from the host's device buffers (read in
// place; their values are not checked on the host: a NaN gives no contact, never an out-of-bounds
// access) or from host memory (copied into the stage's buffers at record time, values validated).
//
// Device-resident batch (queryBuffer and geometryBuffer non-null; docs/geometry-queries.md): the
// geometries, previous poses and queries are read in place from the host's buffers, written by its
// own passes, and the record copies nothing from host memory but what the other fields give. The
// host cannot see them, so the slot layout is computed on the device: four more dependent dispatches
// (seven in all, whatever the batch), and each family of deviceFamilies runs its COUNT and WRITE as
// an indirect dispatch over the tiles of its own queries' slots. A batch of primitive pairs only
// (devicePrimitivePairs) needs no slot layout: three dependent dispatches, one invocation per query.
// The device checks every query and geometry (GeometryQueryDeviceCounts::
// invalidQueries lists the checks): a bad one gives no contact, never an out-of-bounds access or an
// endless loop; slots past maxSlots are reported (GeometryQueryDeviceCounts::slots). The contacts,
// ranges and counts of valid queries are those of the same batch given in host memory, bit for bit.
// First version: primitive, point set and implicit geometry pairs, static and continuous; a mesh
// geometry is an invalid query (mesh pairs keep the host path). Continuous queries' state entries are
// checked against stateCount, not for overlaps: two queries sharing entries read each other's
// updates (in bounds, order undefined).
struct GeometryQueryRecordInfo {
  std::span<const Geometry> geometries;          // copied into the upload at record time
  std::span<const Geometry> previousGeometries;  // empty, or one per geometry (GeometryQueryInput); copied
  std::span<const GeometryQuery> queries;        // copied
  // Device-resident batch: geometryCount Geometry (64 bytes each, the same layout) read in place, and
  // queryCount GeometryQuery (16 bytes). Both buffers or neither; with them, geometries, queries and
  // previousGeometries must be empty. geometryCount <= maxGeometries, queryCount <= maxQueries.
  BufferRange geometryBuffer;
  uint32_t geometryCount = 0;
  BufferRange queryBuffer;
  uint32_t queryCount = 0;
  // Device-resident batch, continuous queries against moving geometries: geometryCount previous
  // poses (GeometryQueryInput::previousGeometries), or null (every geometry static).
  BufferRange previousGeometryBuffer;
  // Device-resident batch: the pair families dispatched (kGeometryQueryFamily* bits, nonzero, within
  // kGeometryQueryFamiliesDevice); a query of another family counts as invalid. Fewer families,
  // fewer dispatches: a batch of sphere-sphere pairs needs only kGeometryQueryFamilyBasic.
  uint32_t deviceFamilies = kGeometryQueryFamiliesDevice;
  // Device-resident batch of primitive pairs only: every query a static pair of two of sphere,
  // capsule, cylinder, oriented box and plane (any other query counts as invalid, point sets and
  // continuous queries included). No slot layout: each query is one invocation that evaluates its
  // slots (at most 8) in order, so a record is three dependent dispatches (QUERY COUNT per family,
  // the blocks' prefix and the queries' prefixes within their blocks, QUERY WRITE per family)
  // instead of seven. Each family dispatched reads every query and its geometries' types; the
  // query's own family reads its geometries whole, and again only when it has contacts (the general
  // path reads them in three passes). maxSlots does not apply and GeometryQueryDeviceCounts::slots
  // is 0. The families dispatched are deviceFamilies & kGeometryQueryFamiliesPrimitive (nonzero).
  // For a batch of primitive pairs, the contacts, ranges and counts are the general device path's,
  // bit for bit. A batch from host memory (geometries, queries) needs no flag: when all its queries
  // are static primitive pairs, record() takes these passes by itself (the families its queries hold;
  // no slot layout computed or uploaded, maxSlots does not apply), unless the device failed to create
  // a family's pipelines for them: such a batch then keeps the slot passes (maxSlots applies), where
  // a device-resident batch with this flag gets the error.
  bool devicePrimitivePairs = false;
  // The points: the host's buffer (pointBuffer non-null: pointCount Float4 read in place), or `points`
  // copied into the stage's point buffer (pointCount 0 or points.size()).
  BufferRange pointBuffer;
  uint32_t pointCount = 0;
  std::span<const Float4> points;
  // Continuous queries: the points' previous positions, one per point, the same way: the host's
  // buffer (pointCount Float4) or copied from `previousPoints`; neither without continuous queries.
  BufferRange previousPointBuffer;
  std::span<const Float4> previousPoints;
  // Implicit geometries' samples: the host's buffer (gridSampleCount floats) or copied from `gridSamples`.
  BufferRange gridSampleBuffer;
  uint32_t gridSampleCount = 0;
  std::span<const float> gridSamples;
  // The meshes' cells (GeometryQueryInput::cells): the host's buffer (cellCount uint32 entries, read in
  // place) or copied from `cells`. A batch with a mesh geometry takes its points and cells from host
  // memory (points, cells: validated at record time; kUnsupported with pointBuffer or cellBuffer).
  BufferRange cellBuffer;
  uint32_t cellCount = 0;
  std::span<const uint32_t> cells;
  // Continuous queries' persistent state (GeometryQueryOutput::state): the host's buffer of stateCount
  // Float4, read and written in place; required when the batch has continuous queries (but those with
  // a mesh, which keep no state).
  BufferRange stateBuffer;
  uint32_t stateCount = 0;
  GeometryQueryOutputBuffers outputs;
  uint32_t indirectGroupSize = 64;  // the workgroup size of the host's next pass (counts' dispatch)
  uint32_t frame = 0;               // < framesInFlight
  RecordSync sync;
  // GPU timestamps around each pass, into the stage's one timestamp pool (reset in this command
  // buffer): after the submission completed, readRecordTimings() makes them timings(). One such
  // record in flight at a time.
  bool timestamps = false;
};

// The geometry queries on a Vulkan device. create() does no queue work (its pipelines come from the
// context's cache). Per frame in flight: a host-visible upload buffer that record() writes (the
// geometries, previous poses, queries, the slot layout and the arrays given in host memory) and copies
// into device buffers inside the host's command buffer, scratch (slot ranks, tile sums) and the
// stage's own outputs. A frame's upload buffer is rewritten by its next record(): record a frame
// again only after its previous submission completed (the usual frames-in-flight rule). A record with
// static or continuous mesh-mesh queries also builds a BVH over their meshes' cells (maxMeshPairCells) and writes
// each query's candidate pairs of cells into its slots (maxCandidates) before evaluating them: a
// fixed number of dispatches more, whatever the queries and cells.
class GeometryQueryStage {
 public:
  static Result<std::unique_ptr<GeometryQueryStage>> create(Context& context, const GeometryQueryStageCreateInfo& info);
  static Result<MemoryRequirements> memoryRequirements(const Context& context, const GeometryQueryStageCreateInfo& info);
  ~GeometryQueryStage();

  // The stage has no static tables: nothing to record (kept for the stages' common shape; it records
  // the embedded BVH stage's, which has none either).
  Status recordUpload(VkCommandBuffer commandBuffer);
  // create() makes only the pipelines every batch uses; a pair family's are made by the first
  // record() whose batch holds that family, and so is their compile, inside that record (on lavapipe
  // 10-25 s for the heaviest; on a GPU driver without a filled pipeline cache, a frame's hitch). Call
  // this at load time with the kGeometryQueryFamily* bits the scene will use to make them now: every
  // pass of those families, on every path a record may take (slots, primitive pairs,
  // device-resident). Idempotent; no queue work. Where the device cannot create a family's
  // primitive-pair passes, records keep that family on the slot passes, as they would have anyway.
  // Bits outside kGeometryQueryFamiliesAll are an error naming `families`.
  Status createPipelines(uint32_t families = kGeometryQueryFamiliesAll);
  // Records one batch: the upload's copies, then the passes. Validates first (geometries, previous
  // poses, queries, ranges against the arrays' counts, state entries, sizes against the stage's
  // maxima, buffers, frame): on error nothing is recorded and the error names the field.
  Status record(VkCommandBuffer commandBuffer, const GeometryQueryRecordInfo& info);

  // Convenience path (frame 0, the stage's own buffers): validates like queryGeometriesCpu (output
  // capacity at most maxContacts, state entries at most maxStates), records, submits, waits and writes
  // the results back: counts, every range, elements [0, written) and the continuous queries' state
  // entries. Nothing is written on error.
  Result<GeometryQueryCounts> run(const GeometryQueryInput& input, const GeometryQueryOutput& output);
  const std::vector<PassTiming>& timings() const;  // run(), or readRecordTimings(): GPU time per pass
  // The GPU time per pass of the last record() with timestamps (its submission completed) into
  // timings(); an error when that record had none.
  Status readRecordTimings();
  const RecordStats& lastRecordStats() const;

  // The stage's own outputs of `frame` (what a record with null output buffers writes).
  BufferRange elementsABuffer(uint32_t frame = 0) const;
  BufferRange elementsBBuffer(uint32_t frame = 0) const;
  BufferRange rangesBuffer(uint32_t frame = 0) const;
  BufferRange countsBuffer(uint32_t frame = 0) const;  // GeometryQueryDeviceCounts; INDIRECT_BUFFER usage

  struct Impl;  // opaque

 private:
  friend struct detail::Internals;
  explicit GeometryQueryStage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Runs the batch on any backend: kCpuScalar and kCpuSimd as queryGeometriesCpu; kVulkan on `context`
// (required for kVulkan, ignored otherwise) through a GeometryQueryStage made for the batch.
// Validated first on every backend (nothing written on error). The results agree across backends
// (kGeometryQueryTolerance; bit for bit on lavapipe). kVulkan runs the static surface, line and
// tetrahedral mesh queries against a sphere, capsule, cylinder, plane, oriented box or implicit
// geometry (one work item per cell), tetrahedral mesh against point set (one per point and
// tetrahedron), the static mesh-mesh pairs surface-surface, surface-line, line-line,
// line-tetrahedral, surface-tetrahedral and tetrahedral-tetrahedral (one per candidate pair of cells,
// from a device BVH), a closed surface mesh's vertex pass against a point set or after those pairs
// (one per point or vertex) and the continuous line-line and point set vs surface mesh pairs (one per
// candidate pair, from the same BVH over swept cells): every mesh query the CPU backends run, none
// refused.
Result<GeometryQueryCounts> queryGeometries(Backend backend, Context* context, const GeometryQueryInput& input,
                                            const GeometryQueryOutput& output);

VKC_API_END
}  // namespace vkc
