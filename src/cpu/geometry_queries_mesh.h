// Private interface of the mesh rows of the geometry queries (src/cpu/geometry_queries_mesh.cpp):
// validation of the mesh geometries and queries, and the CPU driver (a BVH per mesh, the per-cell
// arithmetic of shaders/shared/geometry_queries_mesh.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shared/geometry_queries_mesh.h"
#include "vkcollide/geometry_queries.h"
#include "vkcollide/result.h"

namespace vkc::cpu {

bool isMeshType(GeometryType type);

// Every mesh geometry of the input (and its previous pose, which must equal it): fields, ranges, cell
// indices, degenerate cells. Errors name the field.
Status validateMeshGeometries(const GeometryQueryInput& input);

// A query with a mesh on either side (lo <= hi: the types in order; closed: the mesh carries
// kGeometryFlagClosed; name: "queries[3]"): static only, a pair built so far (kUnsupported otherwise)
// or an N/A pair of the seed's table (kInvalidArgument). A mesh against itself (a == b) is a pair like
// any other (self collision: meshMeshContacts).
Status validateMeshQuery(uint32_t lo, uint32_t hi, bool closed, GeometryMethod method,
                         const std::string& name);

// kVulkan: a static query whose closed surface mesh runs its vertex pass on the device (against a
// point set, a surface mesh or a line mesh) is refused (kUnsupported, naming the query and the
// geometry) when that mesh has an unbounded search radius (p2.z 0) and more than
// gpu::kGeomClosedMeshDeviceMaxTriangles triangles: a point's walk of the device tree may visit
// every triangle then (shaders/shared/geometry_queries_closed_mesh.h).
// Validated input.
Status refuseClosedMeshesPastTheDeviceLoop(const GeometryQueryInput& input);

// A surface or line mesh against a plane, an oriented box, a cylinder or an implicit geometry
// (src/cpu/geometry_queries_mesh_prims.cpp): the primitive's reach (a plane: its origin lo, its
// normal and sidedness; a box or cylinder: its bounding box [lo, hi] widened by a rounding margin; an
// implicit geometry: its grid's box, widened where the field is negative on it),
// whether cells in box [lo, hi] may touch it, and one cell's contact (corners: n = 3 a triangle, 2 a
// segment).
bool meshPrimitivePair(uint32_t meshType, uint32_t otherType);
struct PrimitiveReach {
  const GeometryQueryInput* in = nullptr;
  gpu::GeomShape shape{};
  bool plane = false;
  bool twoSided = false;
  gpu::vec3 normal{0.0f};
  gpu::vec3 lo{0.0f};
  gpu::vec3 hi{0.0f};
};
PrimitiveReach primitiveReach(const GeometryQueryInput& in, const gpu::GeomShape& s);
bool primitiveMayTouch(const PrimitiveReach& r, const gpu::vec3& lo, const gpu::vec3& hi);
bool meshPrimitiveCell(const PrimitiveReach& r, const gpu::vec3 corners[3], uint32_t n, const gpu::uvec4& ids,
                       uint32_t cell, gpu::GeomElement& mesh, gpu::GeomElement& prim);

// A tetrahedron (corners[0..3]) against the implicit geometry of r (primitiveReach):
// shaders/shared/geometry_queries_mesh_tetra_implicit.h.
bool tetraImplicitCell(const PrimitiveReach& r, const gpu::vec3 corners[4], const gpu::uvec4& ids, uint32_t cell,
                       gpu::GeomElement& tet, gpu::GeomElement& prim);

// The contacts of the queries with a mesh (validated input), in one call: a BVH per mesh geometry,
// built on first use and kept for the call's other queries.
// A contact's two elements.
struct MeshElementPair {
  gpu::GeomElement x;
  gpu::GeomElement y;
};

// What the mesh-against-mesh driver (src/cpu/geometry_queries_mesh_mesh.cpp) uses of the per-call
// mesh state of MeshQueries.
struct PairWalkTree;  // src/cpu/mesh_pair_walk.h

struct MeshPairAccess {
  const GeometryQueryInput* in = nullptr;
  bool bruteForce = false;  // the tests' oracle: every cell against every cell (through `cells`)
  bool simd = false;        // kCpuSimd: the SIMD tandem walk (the same candidate pairs) and triangle plane pre-test
  // The cells of mesh gi whose boxes overlap [lo, hi] (xyz), in cell order (the BVH's candidates,
  // or every cell with bruteForce: the same list).
  std::function<void(uint32_t gi, const float lo[3], const float hi[3], std::vector<uint32_t>& cells)> cells;
  // The self walk's layout (pairWalkLayout with the cells' vertex numbers) of mesh gi's tree, built in
  // the call on first use: a mesh against itself without a kept tree walks it (not with bruteForce).
  std::function<const PairWalkTree&(uint32_t gi)> selfLayout;
  // The points [first, first + count) inside closed surface mesh gi (the vertex pass of
  // ClosedSurfaceMeshToMesh), by point: pairs (mesh side, point side); meshVertices: the points are
  // another mesh's vertices (their elements are vertex elements of that mesh).
  std::function<void(uint32_t gi, uint32_t first, uint32_t count, bool meshVertices,
                     std::vector<MeshElementPair>& out)>
      insidePoints;
};

// Mesh x against mesh y (x before y in the canonical order: surface before line before tetrahedral
// mesh, two meshes of one type by geometry index): their contacts in order, (x side, y side), into out.
// Surface-surface, surface-line, line-line, line-tetrahedral, surface-tetrahedral,
// tetrahedral-tetrahedral (two tetrahedral meshes by geometry index). x == y (a surface, line or
// tetrahedral mesh against itself): each pair of cells once (x's cell before y's), never two cells
// sharing a vertex; a surface mesh's edge-edge contacts once per unordered pair of edges; no vertex
// pass (a closed mesh's own vertices lie on it).
void meshMeshContacts(const MeshPairAccess& access, uint32_t x, uint32_t y,
                      std::vector<MeshElementPair>& out);

class MeshQueries {
 public:
  // backend: kCpuSimd walks two meshes' trees with the SIMD twin of the walk (the same contacts).
  explicit MeshQueries(const GeometryQueryInput& input, Backend backend = Backend::kCpuScalar);
  ~MeshQueries();
  MeshQueries(const MeshQueries&) = delete;
  MeshQueries& operator=(const MeshQueries&) = delete;

  // Whether query qi has a mesh on either side.
  bool handles(size_t qi) const;
  // Query qi's contacts, elements total, total + 1, ... of the output (written below capacity), in
  // order: by cell, then slot (a tetrahedral mesh against a point set: by point, then cell; a closed
  // surface mesh against a point set: by point; mesh against mesh: meshMeshContacts' order). Returns
  // the number found. bruteForce: every cell instead of the BVH's candidates (the tests' oracle; the
  // same contacts bit for bit).
  uint64_t contacts(size_t qi, const GeometryQueryOutput& output, uint64_t total, uint64_t capacity,
                    bool bruteForce = false);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace vkc::cpu
