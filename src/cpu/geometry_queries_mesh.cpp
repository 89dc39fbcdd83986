// The mesh rows of the geometry queries on the CPU (include/vkcollide/geometry_queries.h, issue 17):
// validation of the mesh geometries, the Geometry builders of the mesh types, and the driver: per
// mesh geometry a BVH over its cells (the BVH stage's CPU builder, src/cpu/bvh.cpp), built on first
// use in a call; per query the cells whose boxes overlap the other geometry's box, in cell order,
// each through the shared per-cell arithmetic (shaders/shared/geometry_queries_mesh.h). kCpuSimd runs
// this scalar code too.
#include "cpu/geometry_queries_mesh.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpu/bvh.h"
#include "cpu/geometry_queries.h"
#include "cpu/geometry_queries_mesh_ccd.h"
#include "cpu/geometry_query_trees.h"
#include "cpu/mesh_pair_walk.h"
#include "scene/geometry_queries_layout.h"
#include "shared/geometry_queries_closed_mesh.h"
#include "shared/geometry_queries_mesh.h"
#include "shared/geometry_queries_mesh_reach.h"
#include "shared/geometry_queries_mesh_tetra.h"
#include "util/try.h"
#include "vkcollide/bvh.h"

namespace vkc {

namespace {

using gpu::uvec4;
using gpu::vec3;

Error invalid(const std::string& message) {
  return Error{ErrorCode::kInvalidArgument, message};
}

const char* meshTypeName(uint32_t type) {
  if (type == gpu::kGeomSurfaceMesh) return "surface mesh";
  if (type == gpu::kGeomLineMesh) return "line mesh";
  return "tetrahedral mesh";
}

const char* cellName(uint32_t type) {
  if (type == gpu::kGeomSurfaceMesh) return "triangle";
  if (type == gpu::kGeomLineMesh) return "segment";
  return "tetrahedron";
}

// "sphere vs surface mesh" (types lo <= hi).
std::string pairName(uint32_t lo, uint32_t hi) {
  static const char* const kNames[] = {"sphere",    "capsule",         "cylinder",          "oriented box",
                                       "plane",     "point set",       "implicit geometry", "surface mesh",
                                       "line mesh", "tetrahedral mesh"};
  return std::string(kNames[lo]) + " vs " + kNames[hi];
}

Geometry makeMesh(GeometryType type, uint32_t firstVertex, uint32_t vertexCount, uint32_t firstCellEntry,
                  uint32_t cellCount) {
  Geometry g;
  g.type = type;
  g.first = firstVertex;
  g.count = vertexCount;
  g.p2 = Float4{static_cast<float>(firstCellEntry), static_cast<float>(cellCount), 0.0f, 0.0f};
  return g;
}

// A mesh's cell range (validated: whole numbers below 2^24).
struct CellRange {
  uint32_t first = 0;  // entry in input.cells
  uint32_t count = 0;  // cells
  uint32_t corners = 3;
};

CellRange cellRange(const Geometry& g) {
  return CellRange{static_cast<uint32_t>(g.p2.x), static_cast<uint32_t>(g.p2.y),
                   gpu::geomMeshCorners(static_cast<uint32_t>(g.type))};
}

vec3 vertexAt(const GeometryQueryInput& in, const Geometry& g, uint32_t v) {
  const Float4& p = in.points[g.first + v];
  return vec3(p.x, p.y, p.z);
}

bool isWhole(float v) {
  return v >= 0.0f && v <= static_cast<float>(gpu::kGeomMeshMaxEntries) && std::floor(v) == v;
}

// A surface mesh's directed edges (from, to, triangle), sorted: triangle c's edge k runs from corner
// k to corner k + 1 mod 3.
struct DirectedEdge {
  uint64_t key = 0;  // from << 32 | to
  uint32_t cell = 0;
};

std::vector<DirectedEdge> directedEdges(const GeometryQueryInput& in, const CellRange& r) {
  std::vector<DirectedEdge> edges;
  edges.reserve(static_cast<size_t>(r.count) * 3);
  for (uint32_t c = 0; c < r.count; ++c) {
    const size_t e0 = r.first + static_cast<size_t>(c) * 3;
    for (uint32_t k = 0; k < 3; ++k) {
      const uint64_t from = in.cells[e0 + k], to = in.cells[e0 + (k + 1) % 3];
      edges.push_back(DirectedEdge{from << 32 | to, c});
    }
  }
  std::sort(edges.begin(), edges.end(), [](const DirectedEdge& a, const DirectedEdge& b) {
    return a.key < b.key || (a.key == b.key && a.cell < b.cell);
  });
  return edges;
}

// The directed edge opposite `key` (to -> from), or nullptr.
const DirectedEdge* findEdge(const std::vector<DirectedEdge>& edges, uint64_t key) {
  const auto it = std::lower_bound(edges.begin(), edges.end(), key,
                                   [](const DirectedEdge& e, uint64_t k) { return e.key < k; });
  return it != edges.end() && it->key == key ? &*it : nullptr;
}

uint64_t reversed(uint64_t key) {
  return (key << 32) | (key >> 32);
}

// kGeometryFlagClosed: every edge in exactly two triangles, used in opposite directions: each
// directed edge once, and its reverse present.
Status validateClosed(const GeometryQueryInput& in, const Geometry& g, const std::string& f) {
  const std::vector<DirectedEdge> edges = directedEdges(in, cellRange(g));
  const auto edgeName = [](uint64_t key) {
    return "edge (" + std::to_string(key >> 32) + ", " + std::to_string(key & 0xFFFFFFFFu) + ")";
  };
  for (size_t i = 0; i < edges.size(); ++i) {
    if (i + 1 < edges.size() && edges[i + 1].key == edges[i].key) {
      return invalid(
          f + " is declared closed (kGeometryFlagClosed) but triangles " + std::to_string(edges[i].cell) +
          " and " + std::to_string(edges[i + 1].cell) + " both run along " + edgeName(edges[i].key) +
          " in the same direction (inconsistent orientation, or an edge in more than two triangles)");
    }
    if (findEdge(edges, reversed(edges[i].key)) == nullptr) {
      return invalid(f + " is declared closed (kGeometryFlagClosed) but " + edgeName(edges[i].key) +
                     " of triangle " + std::to_string(edges[i].cell) +
                     " has no opposite triangle (an open boundary edge)");
    }
  }
  return {};
}

Status validateMesh(const GeometryQueryInput& in, const Geometry& g, size_t gi) {
  const std::string f =
      "geometries[" + std::to_string(gi) + "] (" + meshTypeName(static_cast<uint32_t>(g.type)) + ")";
  const auto zero = [](const Float4& v) { return v.x == 0.0f && v.y == 0.0f && v.z == 0.0f && v.w == 0.0f; };
  const bool closed = g.flags == kGeometryFlagClosed;
  if (g.flags != 0 && !(closed && g.type == GeometryType::kSurfaceMesh)) {
    return invalid(f + ".flags is " + std::to_string(g.flags) +
                   ": a mesh takes no flags but a surface mesh's kGeometryFlagClosed");
  }
  const bool thick = g.type != GeometryType::kTetrahedralMesh;  // p2.w: the continuous queries' thickness
  if (!zero(g.p0) || !zero(g.p1) || (!closed && g.p2.z != 0.0f) || (!thick && g.p2.w != 0.0f)) {
    return invalid(f +
                   ": p0, p1, p2.z and p2.w are unused by a mesh (p2.z: but a closed surface mesh's search "
                   "radius; p2.w: but a surface or line mesh's thickness), must be 0");
  }
  if (thick && !(std::isfinite(g.p2.w) && g.p2.w >= 0.0f)) {
    return invalid(f + ".p2.w (thickness) is " + std::to_string(g.p2.w) + ": must be finite and >= 0");
  }
  if (closed && !(std::isfinite(g.p2.z) && g.p2.z >= 0.0f)) {
    return invalid(f + ".p2.z (search radius) is " + std::to_string(g.p2.z) + ": must be finite and >= 0");
  }
  if (!isWhole(g.p2.x)) {
    return invalid(f + ".p2.x (first cell entry) is " + std::to_string(g.p2.x) +
                   ": must be a whole number in [0, 2^24]");
  }
  if (!isWhole(g.p2.y)) {
    return invalid(f + ".p2.y (cell count) is " + std::to_string(g.p2.y) +
                   ": must be a whole number in [0, 2^24]");
  }
  if (g.count > gpu::kGeomMeshMaxEntries) {
    return invalid(f + ".count (vertex count) is " + std::to_string(g.count) + ": at most 2^24");
  }
  if (g.first > in.points.size() || g.count > in.points.size() - g.first) {
    return invalid(f + " covers points [" + std::to_string(g.first) + ", " +
                   std::to_string(static_cast<uint64_t>(g.first) + g.count) + "): points holds " +
                   std::to_string(in.points.size()));
  }
  const CellRange r = cellRange(g);
  const uint64_t entries = static_cast<uint64_t>(r.count) * r.corners;
  if (r.first > in.cells.size() || entries > in.cells.size() - r.first) {
    return invalid(f + " covers cells [" + std::to_string(r.first) + ", " +
                   std::to_string(r.first + entries) + ") (" + std::to_string(r.count) + " " +
                   cellName(static_cast<uint32_t>(g.type)) + "s): cells holds " +
                   std::to_string(in.cells.size()));
  }
  for (uint32_t c = 0; c < r.count; ++c) {
    const size_t e0 = r.first + static_cast<size_t>(c) * r.corners;
    double p[4][3];
    for (uint32_t k = 0; k < r.corners; ++k) {
      const uint32_t v = in.cells[e0 + k];
      if (v >= g.count) {
        return invalid(f + ": cells[" + std::to_string(e0 + k) + "] (" +
                       cellName(static_cast<uint32_t>(g.type)) + " " + std::to_string(c) + ", corner " +
                       std::to_string(k) + ") is " + std::to_string(v) + ": the mesh has " +
                       std::to_string(g.count) + " vertices");
      }
      const Float4& x = in.points[g.first + v];
      p[k][0] = x.x;
      p[k][1] = x.y;
      p[k][2] = x.z;
    }
    double u[3], w[3], s[3];
    for (int i = 0; i < 3; ++i) {
      u[i] = p[1][i] - p[0][i];
      w[i] = r.corners > 2 ? p[2][i] - p[0][i] : 0.0;
      s[i] = r.corners > 3 ? p[3][i] - p[0][i] : 0.0;
    }
    const double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    // (The cell's name is built only for a message: a valid mesh of a million cells builds none.)
    const auto cell = [&] {
      return std::string(cellName(static_cast<uint32_t>(g.type))) + " " + std::to_string(c) + " (cells[" +
             std::to_string(e0) + ", " + std::to_string(e0 + r.corners) + "))";
    };
    if (r.corners == 2 && u[0] == 0.0 && u[1] == 0.0 && u[2] == 0.0) {
      return invalid(f + ": " + cell() + " has zero length (degenerate cell)");
    }
    if (r.corners == 3 && n[0] == 0.0 && n[1] == 0.0 && n[2] == 0.0) {
      return invalid(f + ": " + cell() + " has zero area (degenerate cell)");
    }
    if (r.corners == 4 && n[0] * s[0] + n[1] * s[1] + n[2] * s[2] == 0.0) {
      return invalid(f + ": " + cell() + " has zero volume (degenerate cell)");
    }
  }
  if (closed) VKC_TRY(validateClosed(in, g, f));
  return {};
}

struct Tree {
  bool built = false;
  std::span<const BvhNode> nodes;  // own* below, or the input's GeometryQueryTrees'
  std::span<const Aabb> boxes;
  std::vector<BvhNode> ownNodes;
  std::vector<Aabb> ownBoxes;
  std::vector<uint32_t> parents;
  // The walk layout of the tree with the cells' vertex numbers (built on first use, by a self query).
  cpu::PairWalkTree walk;
  // A closed surface mesh's angle-weighted pseudonormals (built on first use): per triangle its
  // face's and its three edges' (edge k: corners k, k + 1 mod 3), per vertex its own.
  bool normalsBuilt = false;
  std::vector<vec3> faceNormals;
  std::vector<vec3> edgeNormals;
  std::vector<vec3> vertexNormals;
};

bool overlaps(const Aabb& a, const vec3& lo, const vec3& hi) {
  return !(a.hi.x < lo.x || a.hi.y < lo.y || a.hi.z < lo.z || hi.x < a.lo.x || hi.y < a.lo.y ||
           hi.z < a.lo.z);
}

}  // namespace

static_assert(static_cast<uint32_t>(GeometryType::kSurfaceMesh) == gpu::kGeomSurfaceMesh);
static_assert(static_cast<uint32_t>(GeometryType::kLineMesh) == gpu::kGeomLineMesh);
static_assert(static_cast<uint32_t>(GeometryType::kTetrahedralMesh) == gpu::kGeomTetrahedralMesh);
static_assert(static_cast<uint32_t>(ContactElementType::kCellIndex) == gpu::kElementCellIndex);
static_assert(static_cast<uint32_t>(CellType::kTetrahedron) == gpu::kGeomCellTetrahedron);
static_assert(offsetof(ContactElement, cell) == offsetof(gpu::GeomElement, pad));

Geometry Geometry::surfaceMesh(uint32_t firstVertex, uint32_t vertexCount, uint32_t firstCellEntry,
                               uint32_t cellCount, float thickness) {
  Geometry g = makeMesh(GeometryType::kSurfaceMesh, firstVertex, vertexCount, firstCellEntry, cellCount);
  g.p2.w = thickness;
  return g;
}
Geometry Geometry::lineMesh(uint32_t firstVertex, uint32_t vertexCount, uint32_t firstCellEntry,
                            uint32_t cellCount, float thickness) {
  Geometry g = makeMesh(GeometryType::kLineMesh, firstVertex, vertexCount, firstCellEntry, cellCount);
  g.p2.w = thickness;
  return g;
}
Geometry Geometry::closedSurfaceMesh(uint32_t firstVertex, uint32_t vertexCount, uint32_t firstCellEntry,
                                     uint32_t cellCount, float searchRadius) {
  Geometry g = makeMesh(GeometryType::kSurfaceMesh, firstVertex, vertexCount, firstCellEntry, cellCount);
  g.flags = kGeometryFlagClosed;
  g.p2.z = searchRadius;
  return g;
}
Geometry Geometry::tetrahedralMesh(uint32_t firstVertex, uint32_t vertexCount, uint32_t firstCellEntry,
                                   uint32_t cellCount) {
  return makeMesh(GeometryType::kTetrahedralMesh, firstVertex, vertexCount, firstCellEntry, cellCount);
}

uint32_t contactCellIds(const GeometryQueryInput& input, const Geometry& mesh, const ContactElement& e,
                        uint32_t ids[4]) {
  if (!cpu::isMeshType(mesh.type) || e.cell == 0) return 0;
  if (e.type == ContactElementType::kPointIndexDirection) {
    ids[0] = e.index;
    return 1;
  }
  const CellRange r = cellRange(mesh);
  const uint32_t corners = contactCellCorners(e);
  uint32_t n = 0;
  for (uint32_t k = 0; k < r.corners; ++k) {
    if (corners & (1u << k)) ids[n++] = input.cells[r.first + static_cast<size_t>(e.index) * r.corners + k];
  }
  return n;
}

namespace cpu {

bool isMeshType(GeometryType type) {
  return gpu::geomIsMesh(static_cast<uint32_t>(type));
}

Status validateMeshGeometries(const GeometryQueryInput& in) {
  for (size_t i = 0; i < in.geometries.size(); ++i) {
    const Geometry& g = in.geometries[i];
    if (!isMeshType(g.type)) continue;
    // A mesh the input's GeometryQueryTrees hold as this geometry was validated by their build or
    // refit (validate() refuses it next if its cells or vertices changed since: validateGeometryQueryTrees).
    if (!keptMeshGeometryUnchanged(in, static_cast<uint32_t>(i))) VKC_TRY(validateMesh(in, g, i));
    if (!in.previousGeometries.empty() && std::memcmp(&in.previousGeometries[i], &g, sizeof g) != 0) {
      return invalid("previousGeometries[" + std::to_string(i) + "]: geometries[" + std::to_string(i) +
                     "] is a mesh: its previous pose must equal it (a mesh moves by its vertices)");
    }
  }
  return {};
}

Status validateMeshQuery(uint32_t lo, uint32_t hi, bool closed, GeometryMethod method,
                         const std::string& name) {
  const std::string pair = pairName(lo, hi);
  // N/A in the seed's table: a point set against a line mesh (a point has nothing to hit on a line).
  if (lo == gpu::kGeomPointSet && hi == gpu::kGeomLineMesh) {
    return invalid(name + ": " + pair + " is not collidable (N/A in the seed's table)");
  }
  if (method == GeometryMethod::kContinuous) {  // src/cpu/geometry_queries_mesh_ccd.cpp
    if (meshCcdPairSupported(lo, hi)) return {};
    return invalid(name + ".method is kContinuous: " + pair +
                   " has no continuous method (with a mesh: line mesh vs line mesh, point set vs surface mesh)");
  }
  if (!gpu::geomMeshPairSupported(lo, hi, closed)) {
    if (lo == gpu::kGeomPointSet && hi == gpu::kGeomSurfaceMesh) {
      return Error{ErrorCode::kUnsupported, name + ": " + pair +
                                                " needs a closed surface mesh (kGeometryFlagClosed): an open "
                                                "one has no inside (not built yet, issue 17)"};
    }
    return Error{ErrorCode::kUnsupported, name + ": " + pair + " is not built yet (issue 17)"};
  }
  if (method != GeometryMethod::kStatic) {
    return invalid(name + ".method is kContinuous: " + pair + " has no continuous method (static only)");
  }
  return {};
}

Status refuseClosedMeshesPastTheDeviceLoop(const GeometryQueryInput& in) {
  const auto closed = [&](uint32_t g) {
    return in.geometries[g].type == GeometryType::kSurfaceMesh && (in.geometries[g].flags & kGeometryFlagClosed) != 0;
  };
  for (size_t i = 0; i < in.queries.size(); ++i) {
    const GeometryQuery& q = in.queries[i];
    if (q.method != GeometryMethod::kStatic) continue;
    for (const bool aSide : {true, false}) {
      const uint32_t m = aSide ? q.a : q.b, other = aSide ? q.b : q.a;
      const GeometryType t = in.geometries[other].type;
      // A mesh against itself runs no vertex pass (its vertices lie on it).
      const bool vertexPass = other != m && (t == GeometryType::kPointSet || t == GeometryType::kSurfaceMesh ||
                                             t == GeometryType::kLineMesh);
      const uint32_t triangles = static_cast<uint32_t>(in.geometries[m].p2.y);
      const bool unbounded = in.geometries[m].p2.z == 0.0f;
      if (!closed(m) || !vertexPass || !unbounded || triangles <= gpu::kGeomClosedMeshDeviceMaxTriangles) continue;
      return Error{ErrorCode::kUnsupported,
                   "queries[" + std::to_string(i) + "]." + (aSide ? "a" : "b") + ": geometries[" +
                       std::to_string(m) + "] is a closed surface mesh of " + std::to_string(triangles) +
                       " triangles with an unbounded search radius (p2.z 0); kVulkan runs such a vertex pass for at "
                       "most " + std::to_string(gpu::kGeomClosedMeshDeviceMaxTriangles) +
                       " (a point's walk of the device tree may visit every triangle; give a search radius, or use "
                       "kCpuScalar or kCpuSimd, which take any size)"};
    }
  }
  return {};
}

struct MeshQueries::State {
  const GeometryQueryInput* in = nullptr;
  // Per mesh geometry that a query uses, built on first use (keyed by geometry: a batch of a million
  // primitives must not pay for a tree slot per geometry).
  std::unordered_map<uint32_t, Tree> trees;
  std::vector<uint32_t> candidates;
  std::vector<uint32_t> stack;
  bool simd = false;  // kCpuSimd

  const Tree& tree(uint32_t gi) {
    Tree& t = trees[gi];
    if (t.built) return t;
    const Geometry& g = in->geometries[gi];
    const CellRange r = cellRange(g);
    t.built = true;
    // The host's tree (validated: built or refit from these very vertices and cells).
    if (const GeometryQueryTrees::Impl::Mesh* kept = in->trees ? in->trees->impl().find(gi) : nullptr) {
      t.nodes = kept->nodes;
      t.boxes = kept->boxes;
      return t;
    }
    if (r.count == 0) return t;
    t.ownNodes.resize(bvhNodeCount(r.count));
    t.ownBoxes.resize(r.count);
    t.parents.resize(r.count);
    const BvhInput b{.vertices = in->points.subspan(g.first, g.count),
                     .indices = in->cells.subspan(r.first, static_cast<size_t>(r.count) * r.corners),
                     .verticesPerPrimitive = r.corners,
                     .nodes = t.ownNodes,
                     .primitiveBoxes = t.ownBoxes,
                     .leafParents = t.parents};
    // The input is validated (ranges, indices, finite points): the build cannot fail.
    (void)buildBvhCpu(b, Backend::kCpuScalar);
    t.nodes = t.ownNodes;
    t.boxes = t.ownBoxes;
    return t;
  }

  // The pseudonormals of closed surface mesh gi (validated closed: every edge has its opposite).
  const Tree& normals(uint32_t gi) {
    Tree& t = trees[gi];
    if (t.normalsBuilt) return t;
    t.normalsBuilt = true;
    const Geometry& g = in->geometries[gi];
    const CellRange r = cellRange(g);
    const auto at = [&](uint32_t c, uint32_t k) {
      return in->cells[r.first + static_cast<size_t>(c) * 3 + k];
    };
    t.faceNormals.resize(r.count);
    t.edgeNormals.resize(static_cast<size_t>(r.count) * 3);
    t.vertexNormals.assign(g.count, vec3(0.0f));
    for (uint32_t c = 0; c < r.count; ++c) {
      vec3 p[3];
      for (uint32_t k = 0; k < 3; ++k) p[k] = vertexAt(*in, g, at(c, k));
      const vec3 n = gpu::geomTriangleNormal(p[0], p[1], p[2]);
      t.faceNormals[c] = n;
      for (uint32_t k = 0; k < 3; ++k) {
        t.vertexNormals[at(c, k)] += n * gpu::geomCornerAngle(p[k], p[(k + 1) % 3], p[(k + 2) % 3]);
      }
    }
    const std::vector<DirectedEdge> edges = directedEdges(*in, r);
    for (const DirectedEdge& e : edges) {
      const DirectedEdge* o = findEdge(edges, reversed(e.key));
      for (uint32_t k = 0; k < 3; ++k) {
        if (at(e.cell, k) == (e.key >> 32) && at(e.cell, (k + 1) % 3) == (e.key & 0xFFFFFFFFu)) {
          t.edgeNormals[static_cast<size_t>(e.cell) * 3 + k] = t.faceNormals[e.cell] + t.faceNormals[o->cell];
        }
      }
    }
    return t;
  }

  // The cells of mesh gi whose boxes pass `test` (of an Aabb), in cell order, into candidates.
  template <class BoxTest>
  void select(uint32_t gi, bool bruteForce, const BoxTest& test) {
    candidates.clear();
    const uint32_t count = cellRange(in->geometries[gi]).count;
    if (count == 0) return;
    const Tree& t = tree(gi);
    if (bruteForce) {
      for (uint32_t c = 0; c < count; ++c) {
        if (test(t.boxes[c])) candidates.push_back(c);
      }
      return;
    }
    walkBvh(
        t.nodes, stack, [&](const BvhNode& n) { return test(Aabb{n.lo, n.hi}); },
        [&](uint32_t c) {
          if (test(t.boxes[c])) candidates.push_back(c);
        });
    std::sort(candidates.begin(), candidates.end());
  }

  // The cells of mesh gi whose boxes overlap [lo, hi].
  void overlapping(uint32_t gi, vec3 lo, vec3 hi, bool bruteForce) {
    select(gi, bruteForce, [&](const Aabb& b) { return overlaps(b, lo, hi); });
  }

  // The points [first, first + count) inside closed surface mesh gi, by point (pairs: mesh side,
  // point side). Per point: the closest point of the triangles within the search radius (the first
  // of equal ones in cell order), its feature's pseudonormal decides inside. meshVertices: the
  // point's element is a vertex element of its mesh (cell word kGeomCellVertex).
  void insidePoints(uint32_t meshIndex, uint32_t first, uint32_t count, bool meshVertices, bool bruteForce,
                    std::vector<MeshElementPair>& out) {
    const Geometry& mesh = in->geometries[meshIndex];
    const CellRange r = cellRange(mesh);
    const auto cellIds = [&](uint32_t c) {
      uvec4 ids(0u);
      for (uint32_t k = 0; k < 3; ++k) ids[k] = in->cells[r.first + static_cast<size_t>(c) * 3 + k];
      return ids;
    };
    const auto at = [&](uint32_t v) { return vertexAt(*in, mesh, v); };
    const Tree& t = normals(meshIndex);
    const float radius = mesh.p2.z;
    gpu::GeomElement em, eo;
    for (uint32_t k = 0; k < count; ++k) {
      const Float4& p = in->points[first + k];
      const vec3 x(p.x, p.y, p.z);
      vec3 lo, hi;
      gpu::geomClosedMeshReach(x, radius, lo, hi);  // the Vulkan stage's (geometry_queries_closed_mesh.h)
      overlapping(meshIndex, lo, hi, bruteForce);
      bool any = false;
      gpu::TriClosest best{};
      uint32_t bestCell = 0;
      for (uint32_t c : candidates) {  // in cell order
        const uvec4 ids = cellIds(c);
        const gpu::TriClosest cp = gpu::triClosestPoint(x, at(ids.x), at(ids.y), at(ids.z));
        if (gpu::geomClosedMeshCloser(any, cp.dist2, best.dist2)) {
          any = true;
          best = cp;
          bestCell = c;
        }
      }
      if (!any || !gpu::geomClosedMeshWithin(best.dist2, radius)) continue;
      const uvec4 ids = cellIds(bestCell);
      const uint32_t corners = gpu::geomTriCorners(best);
      vec3 pn = t.faceNormals[bestCell];
      if (corners == 1u || corners == 2u || corners == 4u) {
        pn = t.vertexNormals[ids[gpu::geomClosedMeshVertexCorner(corners)]];
      } else if (corners != 7u) {  // an edge: corners 0-1 (3), 1-2 (6), 2-0 (5)
        pn = t.edgeNormals[static_cast<size_t>(bestCell) * 3 + gpu::geomClosedMeshEdgeOf(corners)];
      }
      if (gpu::geomClosedMeshPoint(x, best.point, pn, ids, bestCell, corners, k, em, eo)) {
        if (meshVertices) eo.pad = gpu::geomCellWord(gpu::kGeomCellVertex, 0u);
        out.push_back(MeshElementPair{em, eo});
      }
    }
  }

  // The self walk's layout of mesh gi's tree (built on first use).
  const PairWalkTree& selfLayout(uint32_t gi) {
    Tree& t = trees[gi];
    (void)tree(gi);
    if (t.walk.empty()) {  // (a mesh without cells: an empty layout again, at no cost)
      const CellRange r = cellRange(in->geometries[gi]);
      t.walk = pairWalkLayout(
          t.nodes, t.boxes, in->cells.subspan(r.first, static_cast<size_t>(r.count) * r.corners), r.corners);
    }
    return t.walk;
  }

  // The view of this state that meshMeshContacts uses.
  MeshPairAccess access(bool bruteForce) {
    MeshPairAccess a;
    a.in = in;
    a.bruteForce = bruteForce;
    a.simd = simd;
    a.cells = [this, bruteForce](uint32_t gi, const float lo[3], const float hi[3],
                                 std::vector<uint32_t>& cells) {
      overlapping(gi, vec3(lo[0], lo[1], lo[2]), vec3(hi[0], hi[1], hi[2]), bruteForce);
      cells = candidates;
    };
    a.selfLayout = [this](uint32_t gi) -> const PairWalkTree& { return selfLayout(gi); };
    a.insidePoints = [this, bruteForce](uint32_t gi, uint32_t first, uint32_t count, bool meshVertices,
                                        std::vector<MeshElementPair>& out) {
      insidePoints(gi, first, count, meshVertices, bruteForce, out);
    };
    return a;
  }
};

MeshQueries::MeshQueries(const GeometryQueryInput& input, Backend backend) : state_(std::make_unique<State>()) {
  state_->in = &input;
  state_->simd = backend == Backend::kCpuSimd;
}

MeshQueries::~MeshQueries() = default;

bool MeshQueries::handles(size_t qi) const {
  const GeometryQuery& q = state_->in->queries[qi];
  return isMeshType(state_->in->geometries[q.a].type) || isMeshType(state_->in->geometries[q.b].type);
}

uint64_t MeshQueries::contacts(size_t qi, const GeometryQueryOutput& output, uint64_t total,
                               uint64_t capacity, bool bruteForce) {
  State& st = *state_;
  const GeometryQueryInput& in = *st.in;
  const GeometryQuery& q = in.queries[qi];
  const bool meshIsA = isMeshType(in.geometries[q.a].type);
  const uint32_t meshIndex = meshIsA ? q.a : q.b;
  const Geometry& mesh = in.geometries[meshIndex];
  const Geometry& other = in.geometries[meshIsA ? q.b : q.a];
  const uint32_t meshType = static_cast<uint32_t>(mesh.type);
  const uint32_t otherType = static_cast<uint32_t>(other.type);
  const CellRange r = cellRange(mesh);
  const uint32_t query = static_cast<uint32_t>(qi);
  uint64_t found = 0;
  const auto emit = [&](const gpu::GeomElement& m, const gpu::GeomElement& o) {
    const uint64_t at = total + found++;
    if (at >= capacity) return;
    output.elementsA[at] = cpu::toContactElement(meshIsA ? m : o, query);
    output.elementsB[at] = cpu::toContactElement(meshIsA ? o : m, query);
  };
  const auto cellIds = [&](uint32_t c) {
    uvec4 ids(0u);
    for (uint32_t k = 0; k < r.corners; ++k)
      ids[k] = in.cells[r.first + static_cast<size_t>(c) * r.corners + k];
    return ids;
  };
  const auto at = [&](uint32_t v) { return vertexAt(in, mesh, v); };
  if (q.method == GeometryMethod::kContinuous) {
    return meshCcdContacts(in, qi, output, total, capacity, bruteForce, st.simd);
  }
  gpu::GeomElement em, eo;
  if (gpu::geomIsMesh(otherType)) {  // mesh against mesh: src/cpu/geometry_queries_mesh_mesh.cpp
    // Canonical order: the lower type first, two meshes of one type by geometry index (the swap rule).
    const bool aFirst = in.geometries[q.a].type != in.geometries[q.b].type
                            ? in.geometries[q.a].type < in.geometries[q.b].type
                            : q.a <= q.b;
    const uint32_t x = aFirst ? q.a : q.b, y = aFirst ? q.b : q.a;
    std::vector<MeshElementPair> pairs;
    meshMeshContacts(st.access(bruteForce), x, y, pairs);
    for (const MeshElementPair& p : pairs) {
      const uint64_t slot = total + found++;
      if (slot >= capacity) continue;
      output.elementsA[slot] = cpu::toContactElement(aFirst ? p.x : p.y, query);
      output.elementsB[slot] = cpu::toContactElement(aFirst ? p.y : p.x, query);
    }
    return found;
  }
  if (meshType == gpu::kGeomSurfaceMesh && otherType == gpu::kGeomPointSet) {
    std::vector<MeshElementPair> pairs;
    st.insidePoints(meshIndex, other.first, other.count, false, bruteForce, pairs);
    for (const MeshElementPair& p : pairs) emit(p.x, p.y);
    return found;
  }
  // A sphere or a capsule (the other fields unused otherwise): its box, widened by a relative margin
  // above float rounding.
  const vec3 p0(other.p0.x, other.p0.y, other.p0.z);
  const vec3 p1 = otherType == gpu::kGeomCapsule ? vec3(other.p1.x, other.p1.y, other.p1.z) : p0;
  const float radius = other.p0.w;
  const float scale = std::max({std::abs(p0.x), std::abs(p0.y), std::abs(p0.z), std::abs(p1.x),
                                std::abs(p1.y), std::abs(p1.z), radius});
  const float ballReach = radius + 1e-5f * scale;
  if (meshType == gpu::kGeomTetrahedralMesh && otherType == gpu::kGeomPointSet) {
    // Per point, the tetrahedra holding it.
    for (uint32_t k = 0; k < other.count; ++k) {
      const Float4& p = in.points[other.first + k];
      const vec3 x(p.x, p.y, p.z);
      const gpu::GeomMeshReach reach = gpu::geomPointReach(x);  // shared with the Vulkan stage
      st.overlapping(meshIndex, reach.lo, reach.hi, bruteForce);
      for (uint32_t c : st.candidates) {
        const uvec4 ids = cellIds(c);
        if (gpu::geomTetraPoint(at(ids.x), at(ids.y), at(ids.z), at(ids.w), ids, c, x, k, em, eo))
          emit(em, eo);
      }
    }
    return found;
  }
  if (meshType == gpu::kGeomTetrahedralMesh) {  // a primitive or implicit geometry: one per tetrahedron
    const gpu::GeomShape shape = detail::toGeomShape(other);
    const bool ball = otherType == gpu::kGeomSphere || otherType == gpu::kGeomCapsule;
    const PrimitiveReach prim = ball ? PrimitiveReach{} : primitiveReach(in, shape);
    st.select(meshIndex, bruteForce, [&](const Aabb& b) {
      if (ball) return overlaps(b, glm::min(p0, p1) - ballReach, glm::max(p0, p1) + ballReach);
      return primitiveMayTouch(prim, vec3(b.lo.x, b.lo.y, b.lo.z), vec3(b.hi.x, b.hi.y, b.hi.z));
    });
    for (uint32_t c : st.candidates) {
      const uvec4 ids = cellIds(c);
      const vec3 corners[4] = {at(ids.x), at(ids.y), at(ids.z), at(ids.w)};
      bool hit = false;
      if (otherType == gpu::kGeomImplicit) {
        hit = tetraImplicitCell(prim, corners, ids, c, em, eo);
      } else if (otherType == gpu::kGeomCylinder) {
        hit = gpu::geomTetraCylinder(corners[0], corners[1], corners[2], corners[3], ids, c, shape, em, eo);
      } else {
        hit = gpu::geomTetraPrimitive(corners[0], corners[1], corners[2], corners[3], ids, c, shape, em, eo);
      }
      if (hit) emit(em, eo);
    }
    return found;
  }
  if (meshPrimitivePair(meshType, otherType)) {  // a plane, box, cylinder or implicit: one contact per cell
    const PrimitiveReach reach = primitiveReach(in, detail::toGeomShape(other));
    st.select(meshIndex, bruteForce, [&](const Aabb& b) {
      return primitiveMayTouch(reach, vec3(b.lo.x, b.lo.y, b.lo.z), vec3(b.hi.x, b.hi.y, b.hi.z));
    });
    for (uint32_t c : st.candidates) {
      const uvec4 ids = cellIds(c);
      const vec3 corners[3] = {at(ids.x), at(ids.y), r.corners == 3 ? at(ids.z) : at(ids.y)};
      if (meshPrimitiveCell(reach, corners, r.corners, ids, c, em, eo)) emit(em, eo);
    }
    return found;
  }
  // A sphere or a capsule: its box widened by the radius and a rounding margin (the reach shared with
  // the Vulkan stage, shared/geometry_queries_mesh_reach.h).
  const gpu::GeomMeshReach reach = gpu::geomMeshReach(detail::toGeomShape(other));
  st.select(meshIndex, bruteForce, [&](const Aabb& b) {
    return gpu::geomMeshReachTouches(reach, vec3(b.lo.x, b.lo.y, b.lo.z), vec3(b.hi.x, b.hi.y, b.hi.z));
  });
  const uint32_t slots = gpu::geomMeshSlotsPerCell(meshType, otherType);
  for (uint32_t c : st.candidates) {
    const uvec4 ids = cellIds(c);
    for (uint32_t slot = 0; slot < slots; ++slot) {
      bool hit = false;
      if (meshType == gpu::kGeomSurfaceMesh && otherType == gpu::kGeomSphere) {
        hit = gpu::geomTriangleBall(at(ids.x), at(ids.y), at(ids.z), ids, c, p0, radius, em, eo);
      } else if (meshType == gpu::kGeomSurfaceMesh) {
        hit = gpu::geomTriangleCapsule(at(ids.x), at(ids.y), at(ids.z), ids, c, p0, p1, radius, slot, em, eo);
      } else if (otherType == gpu::kGeomSphere) {
        hit = gpu::geomSegmentBall(at(ids.x), at(ids.y), ids, c, p0, radius, em, eo);
      } else {
        hit = gpu::geomSegmentCapsule(at(ids.x), at(ids.y), ids, c, p0, p1, radius, em, eo);
      }
      if (hit) emit(em, eo);
    }
  }
  return found;
}

}  // namespace cpu
}  // namespace vkc
