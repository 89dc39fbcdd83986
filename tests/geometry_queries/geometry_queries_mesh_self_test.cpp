// Mesh self collision (a surface or tetrahedral mesh queried against itself, a == b) on every backend
// (one test body per backend): every pair of cells cx < cy sharing no vertex whose boxes overlap,
// through the function of two meshes (geomTriTriContact, one edge-edge contact per unordered pair of
// edges; geomHullTetra), by cx then cy, elementsA the cx side; no vertex pass for a closed surface
// mesh. Oracles: a mesh made of two components that touch only each other gives the contacts of the
// two as separate meshes (renumbered); an independent brute force over every pair of cells
// (kCpuScalar bit for bit, the other backends through expectSameAsCpuScalar); neighbours (triangles
// sharing a vertex) never in contact; bad input refused as for two meshes, nothing written; the CPU
// backends with kept trees (GeometryQueryTrees) give the same contacts. kVulkan
// alone: overflow keeps the counts; a closed mesh above the device's vertex-pass limit against itself
// is not refused (no vertex pass).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <set>

#include "cpu/geometry_queries.h"  // toContactElement
#include "geometry_queries/geometry_queries_mesh_test_support.h"
#include "shared/geometry_queries_closed_mesh.h"
#include "support/obj_mesh.h"
#include "support/vulkan_fixture.h"

namespace vkc::test::geometry {
namespace {

// A mesh's vertices and cells (vertex numbers), apart from any batch.
struct MeshData {
  GeometryType type = GeometryType::kSurfaceMesh;
  std::vector<Float4> vertices;
  std::vector<uint32_t> cells;

  uint32_t corners() const { return type == GeometryType::kTetrahedralMesh ? 4u : 3u; }
  uint32_t cellCount() const { return static_cast<uint32_t>(cells.size() / corners()); }
  uint32_t vertexCount() const { return static_cast<uint32_t>(vertices.size()); }
  uint32_t add(Batch& b) const { return b.addMesh(type, vertices, cells); }
};

// Mesh geometry gi of b as MeshData.
MeshData meshOf(const Batch& b, uint32_t gi) {
  const Geometry& g = b.geometries[gi];
  MeshData m;
  m.type = g.type;
  m.vertices.assign(b.points.begin() + g.first, b.points.begin() + g.first + g.count);
  const auto first = static_cast<size_t>(g.p2.x);
  m.cells.assign(b.cells.begin() + static_cast<ptrdiff_t>(first),
                 b.cells.begin() + static_cast<ptrdiff_t>(first + m.corners() * static_cast<size_t>(g.p2.y)));
  return m;
}

// One mesh of a's cells, then b's (b's vertex numbers after a's vertices): the disjoint union.
MeshData join(const MeshData& a, const MeshData& b) {
  MeshData u = a;
  u.vertices.insert(u.vertices.end(), b.vertices.begin(), b.vertices.end());
  for (const uint32_t v : b.cells) u.cells.push_back(v + a.vertexCount());
  return u;
}

// m with its cells in a random order (each cell's corners kept): neighbours and the two sides of a
// crossing then interleave in cell order, so that one pair of edges meets with X and Y swapped.
MeshData shuffledCells(const MeshData& m, std::mt19937& rng) {
  const uint32_t n = m.corners();
  std::vector<uint32_t> order(m.cellCount());
  for (uint32_t c = 0; c < order.size(); ++c) order[c] = c;
  for (uint32_t c = m.cellCount(); c > 1; --c) std::swap(order[c - 1], order[rng() % c]);  // not std::shuffle: its draws are the library's
  MeshData s = m;
  for (uint32_t c = 0; c < order.size(); ++c) {
    std::copy_n(m.cells.begin() + n * order[c], n, s.cells.begin() + n * c);
  }
  return s;
}

MeshData jitteredGrid(std::mt19937& rng, uint32_t n, Float4 origin, Float4 u, Float4 v, float jitter) {
  Batch scratch;
  return meshOf(scratch, addJitteredGrid(scratch, rng, n, origin, u, v, jitter));
}

// meshMeshBatch's two crossing grids (geometry_queries_mesh_mesh_backends_test.cpp): each flat but for
// its jitter (no contact of its own), crossing the other along a line.
std::array<MeshData, 2> crossingGrids(uint32_t seed, uint32_t n = 10) {
  std::mt19937 rng(seed);
  return {jitteredGrid(rng, n, v3(-1, 0, -1), v3(2, 0, 0), v3(0, 0, 2), 0.04f),
          jitteredGrid(rng, n, v3(-1.1f, -1, -0.2f), v3(2, 0, 0.3f), v3(0.1f, 2, 0.2f), 0.04f)};
}

// An n^3 block of cubes spanning origin + [0, 1]^3 (u, v, w), each cube cut into the 6 tetrahedra
// around its diagonal (the same cut in every cube: faces match, a conforming mesh whose tetrahedra
// touch only those sharing a vertex), each vertex moved by a uniform offset in [-jitter, jitter]^3.
MeshData tetraBlock(std::mt19937& rng, uint32_t n, Float4 origin, Float4 u, Float4 v, Float4 w, float jitter) {
  std::uniform_real_distribution<float> off(-jitter, jitter);
  MeshData m;
  m.type = GeometryType::kTetrahedralMesh;
  const uint32_t side = n + 1;
  for (uint32_t k = 0; k <= n; ++k) {
    for (uint32_t j = 0; j <= n; ++j) {
      for (uint32_t i = 0; i <= n; ++i) {
        const float s = static_cast<float>(i) / static_cast<float>(n), t = static_cast<float>(j) / static_cast<float>(n),
                    r = static_cast<float>(k) / static_cast<float>(n);
        m.vertices.push_back(v3(origin.x + u.x * s + v.x * t + w.x * r + off(rng),
                                origin.y + u.y * s + v.y * t + w.y * r + off(rng),
                                origin.z + u.z * s + v.z * t + w.z * r + off(rng)));
      }
    }
  }
  const uint32_t step[3] = {1, side, side * side};
  const uint32_t perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (uint32_t k = 0; k < n; ++k) {
    for (uint32_t j = 0; j < n; ++j) {
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t c0 = i + side * (j + side * k);
        for (const auto& p : perms) {
          const uint32_t c1 = c0 + step[p[0]], c2 = c1 + step[p[1]], c3 = c2 + step[p[2]];
          m.cells.insert(m.cells.end(), {c0, c1, c2, c3});
        }
      }
    }
  }
  return m;
}

// Two overlapping blocks of 6 n^3 tetrahedra each: the second turned by about 35 degrees and shifted.
std::array<MeshData, 2> overlappingBlocks(uint32_t seed, uint32_t n = 3) {
  std::mt19937 rng(seed);
  const float c = std::cos(0.6f), s = std::sin(0.6f);
  return {tetraBlock(rng, n, v3(-0.5f, -0.5f, -0.5f), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1), 0.01f),
          tetraBlock(rng, n, v3(0.05f, -0.3f, -0.2f), v3(c, s, 0), v3(-s * c, c * c, s), v3(s * s, -s * c, c), 0.01f)};
}

// A strip swept along y from a looped curve (a prolate trochoid: x = a - d sin a, z = -d cos a for a
// in [-2.5, 2.5], its loop crossing itself near a = +-1.9), the loop widening along the strip: one
// connected grid of 2 nu nv triangles that passes through itself; jittered.
MeshData loopedStrip(std::mt19937& rng, uint32_t nu, uint32_t nv, float jitter) {
  std::uniform_real_distribution<float> off(-jitter, jitter);
  MeshData m;
  for (uint32_t j = 0; j <= nv; ++j) {
    for (uint32_t i = 0; i <= nu; ++i) {
      const float t = static_cast<float>(j) / static_cast<float>(nv);
      const float a = -2.5f + 5.0f * static_cast<float>(i) / static_cast<float>(nu), d = 2.0f + 0.4f * t;
      m.vertices.push_back(v3(a - d * std::sin(a) + off(rng), 2.0f * t + off(rng), -d * std::cos(a) + off(rng)));
    }
  }
  for (uint32_t j = 0; j < nv; ++j) {
    for (uint32_t i = 0; i < nu; ++i) {
      const uint32_t a = j * (nu + 1) + i, c = a + nu + 1;
      m.cells.insert(m.cells.end(), {a, c, a + 1, a + 1, c, c + 1});
    }
  }
  return m;
}

// An n x n grid on a cylinder of radius 1 about the y axis (the angle spanning `span` radians, y in
// [-0.5, 0.5]): curved, every triangle touching only its neighbours.
MeshData curvedGrid(uint32_t n, float span) {
  MeshData m;
  for (uint32_t j = 0; j <= n; ++j) {
    for (uint32_t i = 0; i <= n; ++i) {
      const float a = span * (static_cast<float>(i) / static_cast<float>(n) - 0.5f);
      m.vertices.push_back(v3(std::sin(a), static_cast<float>(j) / static_cast<float>(n) - 0.5f, std::cos(a)));
    }
  }
  for (uint32_t j = 0; j < n; ++j) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t a = j * (n + 1) + i, c = a + n + 1;
      m.cells.insert(m.cells.end(), {a, c, a + 1, a + 1, c, c + 1});
    }
  }
  return m;
}

// The unit octahedron subdivided `levels` times onto the unit sphere: closed, normals outward.
MeshData closedSphere(uint32_t levels) {
  Mesh o = octahedron();
  for (uint32_t l = 0; l < levels; ++l) o = subdivide(o);
  MeshData m;
  for (const Float4& v : o.vertices) {
    const float r = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
    m.vertices.push_back(v3(v.x / r, v.y / r, v.z / r));
  }
  m.cells = o.indices;
  return m;
}

// A box of half extent h at centre c, turned by the rotation matrix rows r: 8 corners (corner i at
// +-h along x, y, z by its bits 0, 1, 2), two triangles a face, normals outward.
MeshData box(Float4 c, float h, const float r[3][3]) {
  MeshData m;
  for (uint32_t i = 0; i < 8; ++i) {
    const float p[3] = {(i & 1u) ? h : -h, (i & 2u) ? h : -h, (i & 4u) ? h : -h};
    m.vertices.push_back(v3(c.x + r[0][0] * p[0] + r[0][1] * p[1] + r[0][2] * p[2],
                            c.y + r[1][0] * p[0] + r[1][1] * p[1] + r[1][2] * p[2],
                            c.z + r[2][0] * p[0] + r[2][1] * p[1] + r[2][2] * p[2]));
  }
  m.cells = {0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5, 0, 1, 5, 0, 5, 4, 2, 6, 7, 2, 7, 3, 0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6};
  return m;
}

// iMSTK's two boxes of ClosedSurfaceMeshToMeshCD (geometry_queries_mesh_mesh_test.cpp): the second
// turned by 45 degrees about z, then about x, one of its edges through an edge of the first (several
// pairs of triangles give that pair of edges).
std::array<MeshData, 2> edgeThroughEdgeBoxes() {
  const float s = std::sqrt(0.5f);
  const float rz[3][3] = {{s, -s, 0}, {s, s, 0}, {0, 0, 1}};
  const float rx[3][3] = {{1, 0, 0}, {0, s, -s}, {0, s, s}};
  const float identity[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  float r[3][3];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) r[i][j] = rx[i][0] * rz[0][j] + rx[i][1] * rz[1][j] + rx[i][2] * rz[2][j];
  }
  return {box(v3(0, 0, 0), 0.5f, identity), box(v3(0, 0.8f, 0.8f), 0.4f, r)};
}

uint32_t addClosed(Batch& b, const MeshData& m) {
  const uint32_t g = m.add(b);
  b.geometries[g] = Geometry::closedSurfaceMesh(b.geometries[g].first, m.vertexCount(),
                                                static_cast<uint32_t>(b.geometries[g].p2.x), m.cellCount(), 0.0f);
  return g;
}

// An edge as its two vertex numbers, least first.
using Edge = std::array<uint32_t, 2>;
Edge edgeOf(const gpu::uvec4& ids, uint32_t cornerMask) {
  uint32_t v[2] = {0, 0}, n = 0;
  for (uint32_t k = 0; k < 3; ++k) {
    if (cornerMask & (1u << k)) v[n++] = ids[k];
  }
  return {std::min(v[0], v[1]), std::max(v[0], v[1])};
}
// An unordered pair of edges: the lesser edge first.
std::array<uint32_t, 4> edgePairKey(Edge a, Edge b) {
  if (b < a) std::swap(a, b);
  return {a[0], a[1], b[0], b[1]};
}

struct BruteForce {
  std::vector<ContactElement> a, b;
  uint32_t edgeEdge = 0;         // edge-edge contacts kept
  uint32_t edgeEdgeRaw = 0;      // edge-edge contacts of the pairs before keeping one per pair of edges
  uint32_t edgeEdgeSwapped = 0;  // dropped repeats whose first had the two edges in the other roles
};

// Mesh m against itself, written out apart from the library's driver: every pair of cells cx < cy
// (in that order) sharing no vertex whose boxes overlap (geomMeshMeshReach's margin, as the drivers'
// candidates) through geomTriTriContact (one edge-edge contact per unordered pair of edges, the
// first) or geomHullTetra; the elements of query `query`.
BruteForce bruteForceSelf(const MeshData& m, uint32_t query) {
  const uint32_t n = m.corners();
  const auto ids = [&](uint32_t c) {
    gpu::uvec4 r(0u);
    for (uint32_t k = 0; k < n; ++k) r[k] = m.cells[n * c + k];
    return r;
  };
  const auto at = [&](uint32_t v) { return gpu::vec3(m.vertices[v].x, m.vertices[v].y, m.vertices[v].z); };
  BruteForce out;
  std::set<std::array<uint32_t, 4>> edgePairs;     // the unordered pairs of edges kept (edgePairKey)
  std::set<std::array<uint32_t, 4>> firstOrdered;  // the same, X's edge first (to count swapped repeats)
  for (uint32_t cx = 0; cx < m.cellCount(); ++cx) {
    const gpu::uvec4 ix = ids(cx);
    gpu::vec3 p[4];
    for (uint32_t k = 0; k < n; ++k) p[k] = at(ix[k]);
    gpu::vec3 lo, hi;
    gpu::geomMeshMeshReach(p[0], p[1], p[2], p[n - 1], n, 0.0f, lo, hi);
    for (uint32_t cy = cx + 1; cy < m.cellCount(); ++cy) {
      const gpu::uvec4 iy = ids(cy);
      bool shared = false;
      for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < n; ++j) shared = shared || ix[i] == iy[j];
      }
      if (shared) continue;
      gpu::vec3 q[4];
      for (uint32_t k = 0; k < n; ++k) q[k] = at(iy[k]);
      gpu::vec3 qlo = q[0], qhi = q[0];
      for (uint32_t k = 1; k < n; ++k) qlo = glm::min(qlo, q[k]), qhi = glm::max(qhi, q[k]);
      if (!gpu::geomMeshMeshBoxesOverlap(qlo, qhi, lo, hi)) continue;
      gpu::GeomElement ex, ey;
      if (m.type == GeometryType::kTetrahedralMesh) {
        if (!gpu::geomHullTetra(gpu::geomMakeHull(p[0], p[1], p[2], p[3], 4u), ix, cx,
                                gpu::geomMakeHull(q[0], q[1], q[2], q[3], 4u), iy, cy, ex, ey))
          continue;
      } else {
        uint32_t key = 0;
        const uint32_t kind = gpu::geomTriTriContact(p[0], p[1], p[2], ix, cx, q[0], q[1], q[2], iy, cy, ex, ey, key);
        if (kind == gpu::kGeomTriTriNone) continue;
        if (kind == gpu::kGeomTriTriEdgeEdge) {
          ++out.edgeEdgeRaw;
          const Edge x = edgeOf(ix, key & 15u), y = edgeOf(iy, key >> 4);
          if (!edgePairs.insert(edgePairKey(x, y)).second) {
            out.edgeEdgeSwapped += firstOrdered.contains({y[0], y[1], x[0], x[1]}) ? 1 : 0;
            continue;
          }
          firstOrdered.insert({x[0], x[1], y[0], y[1]});
          ++out.edgeEdge;
        }
      }
      out.a.push_back(cpu::toContactElement(ex, query));
      out.b.push_back(cpu::toContactElement(ey, query));
    }
  }
  return out;
}

// Query q of b (which ran) is the brute force's contacts, bit for bit.
void expectBruteForce(const Batch& b, size_t q, const BruteForce& want) {
  const ContactRange r = b.ranges[q];
  ASSERT_EQ(r.count, want.a.size()) << "query " << q;
  for (uint32_t i = 0; i < r.count; ++i) {
    ASSERT_TRUE(bitwiseEqual(b.elementsA[r.first + i], want.a[i])) << "query " << q << " contact " << i;
    ASSERT_TRUE(bitwiseEqual(b.elementsB[r.first + i], want.b[i])) << "query " << q << " contact " << i;
  }
}

// Query q of b (which ran, surface mesh geometry gi against itself): its edge-edge contacts, each
// unordered pair of edges at most once.
uint32_t expectEdgePairsOnce(const Batch& b, size_t q, uint32_t gi) {
  const GeometryQueryInput in = b.input();
  std::set<std::array<uint32_t, 4>> seen;
  uint32_t n = 0;
  const ContactRange r = b.ranges[q];
  for (uint32_t k = r.first; k < r.first + r.count; ++k) {
    if (contactCellType(b.elementsA[k]) != CellType::kEdge || contactCellType(b.elementsB[k]) != CellType::kEdge) continue;
    uint32_t x[4], y[4];
    EXPECT_EQ(contactCellIds(in, b.geometries[gi], b.elementsA[k], x), 2u);
    EXPECT_EQ(contactCellIds(in, b.geometries[gi], b.elementsB[k], y), 2u);
    EXPECT_TRUE(seen.insert(edgePairKey({std::min(x[0], x[1]), std::max(x[0], x[1])},
                                        {std::min(y[0], y[1]), std::max(y[0], y[1])}))
                    .second)
        << "query " << q << " contact " << k - r.first << ": a pair of edges twice";
    ++n;
  }
  return n;
}

// The meshes that pass through themselves (MatchesBruteForce, KeptTreesGiveTheSameContacts).
struct SelfCase {
  const char* name;
  MeshData mesh;
  bool closed = false;
  uint32_t minContacts = 0;
};
std::vector<SelfCase> selfIntersectingMeshes() {
  std::mt19937 rng(41);
  std::vector<SelfCase> cases;
  {
    // Edges through edges: six copies of iMSTK's two boxes (the crossing of their edges in four pairs
    // of triangles) and two crossing grids, in one mesh, its cells shuffled: the same two edges met
    // in both roles.
    MeshData m;
    for (uint32_t k = 0; k < 6; ++k) {
      auto boxes = edgeThroughEdgeBoxes();
      for (MeshData& box : boxes) {
        for (Float4& v : box.vertices) v.x += 3.0f * static_cast<float>(k);
      }
      m = join(join(m, boxes[0]), boxes[1]);
    }
    auto grids = crossingGrids(42, 12);
    for (MeshData& grid : grids) {
      for (Float4& v : grid.vertices) v.x -= 4.0f;
    }
    cases.push_back({"boxes and grids, shuffled", shuffledCells(join(join(m, grids[0]), grids[1]), rng), false, 20});
  }
  // One connected strip passing through itself.
  cases.push_back({"looped strip", loopedStrip(rng, 60, 8, 0.01f), false, 10});
  {
    // A soup of separate triangles through a grid (its triangles sharing vertices).
    Batch scratch;
    const MeshData soup = meshOf(scratch, addRandomSoup(scratch, rng, GeometryType::kSurfaceMesh, 200, 1.0f, 0.3f));
    cases.push_back({"soup through a grid",
                     join(jitteredGrid(rng, 12, v3(-1, 0, -1), v3(2, 0.2f, 0), v3(0, 0.1f, 2), 0.03f), soup), false, 20});
  }
  {
    // A closed sphere whose north pole is pulled through its south side: the pole's fan crosses the
    // far side. A closed mesh against itself has no vertex pass: the brute force's pairs only.
    MeshData m = closedSphere(2);
    for (Float4& v : m.vertices) {
      if (v.z > 0.99f) v = v3(0.05f, 0.03f, -1.4f);
    }
    cases.push_back({"closed sphere pulled through itself", m, true, 3});
  }
  {
    // Tetrahedra: a soup (overlapping each other) through a block (sharing vertices).
    Batch scratch;
    const MeshData soup = meshOf(scratch, addRandomSoup(scratch, rng, GeometryType::kTetrahedralMesh, 80, 0.8f, 0.3f));
    cases.push_back({"tetrahedral soup through a block",
                     join(tetraBlock(rng, 3, v3(-0.5f, -0.5f, -0.5f), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1), 0.01f), soup),
                     false, 20});
  }
  return cases;
}

class GeometryQueriesMeshSelfConformance : public MeshBackendTest {
 protected:
  // x and y, each without a contact of its own, as separate meshes and as one (x's cells, then y's):
  // the one against itself gives the contacts of (x, y) (more than minContacts), y's cells and vertices
  // renumbered after x's, bit for bit, and the brute force's; each alone against itself none.
  void expectUnionAsPair(const MeshData& x, const MeshData& y, uint32_t minContacts, size_t capacity) {
    Batch b;
    const uint32_t gx = x.add(b), gy = y.add(b), gu = join(x, y).add(b);
    b.query(gx, gy);
    b.query(gu, gu);
    b.query(gx, gx);
    b.query(gy, gy);
    // Other families in the batch (kVulkan: tile gaps): a sphere pair and a line mesh against itself.
    b.query(b.add(Geometry::sphere({0, 0, 0, 1})), b.add(Geometry::sphere({1.5f, 0, 0, 1})));
    const uint32_t rope = b.addMesh(GeometryType::kLineMesh, {v3(0, 0, 0), v3(1, 0, 0), v3(1, 0.05f, 0), v3(0, 0.05f, 0)},
                                    {0, 1, 1, 2, 2, 3});
    b.geometries[rope].p2.w = 0.04f;
    b.query(rope, rope);
    auto counts = run(b, capacity);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_FALSE(counts->overflow);
    const ContactRange pair = b.ranges[0], self = b.ranges[1];
    ASSERT_GT(pair.count, minContacts);
    EXPECT_EQ(b.ranges[2].count, 0u) << "x against itself";
    EXPECT_EQ(b.ranges[3].count, 0u) << "y against itself";
    EXPECT_EQ(b.ranges[5].count, 1u) << "the rope's first and last segments";
    ASSERT_EQ(self.count, pair.count);
    for (uint32_t i = 0; i < pair.count; ++i) {
      ContactElement wa = b.elementsA[pair.first + i], wb = b.elementsB[pair.first + i];
      wa.query = wb.query = 1;
      if (wb.type == ContactElementType::kPointIndexDirection) {
        wb.index += x.vertexCount();
      } else {
        ASSERT_EQ(wb.type, ContactElementType::kCellIndex);
        wb.index += x.cellCount();
      }
      ASSERT_TRUE(bitwiseEqual(b.elementsA[self.first + i], wa)) << "contact " << i;
      ASSERT_TRUE(bitwiseEqual(b.elementsB[self.first + i], wb)) << "contact " << i;
    }
    expectSameAsCpuScalar(b, capacity);
    if (bitwise()) expectBruteForce(b, 1, bruteForceSelf(join(x, y), 1));
    if (x.type == GeometryType::kSurfaceMesh) {
      EXPECT_GT(expectEdgePairsOnce(b, 1, gu), 3u);
    }
  }

  // m against itself here, then kCpuScalar's contacts against the brute force (bit for bit); returns
  // the brute force's.
  BruteForce expectSelfAsBruteForce(Batch& b, uint32_t g, const MeshData& m, uint32_t minContacts, size_t capacity) {
    b.query(g, g);
    const auto q = static_cast<uint32_t>(b.queries.size() - 1);
    runHere(b, capacity);
    Batch s = b;
    EXPECT_TRUE(s.run(Backend::kCpuScalar, capacity).ok());
    const BruteForce want = bruteForceSelf(m, q);
    EXPECT_GT(want.a.size(), minContacts);
    expectBruteForce(s, q, want);
    if (m.type == GeometryType::kSurfaceMesh) {
      EXPECT_EQ(expectEdgePairsOnce(b, q, g), want.edgeEdge);
    }
    return want;
  }
};

TEST_P(GeometryQueriesMeshSelfConformance, TwoComponentsAgainstThemselvesAreTheirPair) {
  for (const uint32_t seed : {31u, 32u}) {
    SCOPED_TRACE(seed);
    const auto grids = crossingGrids(seed);
    expectUnionAsPair(grids[0], grids[1], 20, 4000);
    expectUnionAsPair(grids[1], grids[0], 20, 4000);
  }
  const auto blocks = overlappingBlocks(33);
  expectUnionAsPair(blocks[0], blocks[1], 20, 8000);
  expectUnionAsPair(blocks[1], blocks[0], 20, 8000);
}

TEST_P(GeometryQueriesMeshSelfConformance, MatchesBruteForce) {
  const std::vector<SelfCase> cases = selfIntersectingMeshes();
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].name);
    Batch b;
    const uint32_t g = cases[i].closed ? addClosed(b, cases[i].mesh) : cases[i].mesh.add(b);
    const BruteForce want = expectSelfAsBruteForce(b, g, cases[i].mesh, cases[i].minContacts, 8000);
    if (i == 0) {  // edges through edges
      EXPECT_GT(want.edgeEdge, 20u);
      EXPECT_GE(want.edgeEdgeRaw, want.edgeEdge + 18);  // three dropped a pair of boxes
      EXPECT_GT(want.edgeEdgeSwapped, 0u) << "no pair of edges met in both roles";
    } else if (cases[i].mesh.type == GeometryType::kSurfaceMesh) {
      EXPECT_GT(want.edgeEdge, 0u);
    }
  }
}

TEST_P(GeometryQueriesMeshSelfConformance, NeighboursAreNotContacts) {
  std::mt19937 rng(51);
  Batch b;
  const uint32_t flat = jitteredGrid(rng, 12, v3(-1, 0, -1), v3(2, 0, 0), v3(0, 0, 2), 0.0f).add(b);
  const uint32_t jittered = jitteredGrid(rng, 12, v3(-1, 2, -1), v3(2, 0, 0), v3(0, 0, 2), 0.03f).add(b);
  const uint32_t curved = curvedGrid(16, 5.5f).add(b);  // nearly a tube: 315 degrees
  const uint32_t closed = addClosed(b, closedSphere(3));
  const uint32_t block = tetraBlock(rng, 3, v3(3, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1), 0.02f).add(b);
  for (const uint32_t g : {flat, jittered, curved, closed, block}) b.query(g, g);
  // Controls: the flat grid crossing the curved one, a rod through the closed sphere (its vertex pass).
  b.query(flat, curved);
  const uint32_t rod = b.addMesh(GeometryType::kLineMesh, {v3(0.1f, 0.2f, 0.1f), v3(0.1f, 0.2f, 3)}, {0, 1});
  b.query(closed, rod);
  runHere(b, 2000);
  for (size_t q = 0; q < 5; ++q) EXPECT_EQ(b.ranges[q].count, 0u) << "query " << q;
  EXPECT_GT(b.ranges[5].count, 3u);
  EXPECT_GE(b.ranges[6].count, 2u);  // through the sphere, then the rod's inner end inside
}

TEST_P(GeometryQueriesMeshSelfConformance, BadInputIsRefusedAndNothingIsWritten) {
  const auto one = [](GeometryType type) {
    Batch b;
    if (type == GeometryType::kTetrahedralMesh) {
      b.addMesh(type, {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1), v3(3, 0, 0)}, {0, 1, 2, 3, 1, 4, 2, 3});
    } else {
      b.addMesh(type, {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(3, 0, 0)}, {0, 1, 2, 1, 3, 2});
    }
    b.query(0, 0);
    return b;
  };
  {
    Batch b = one(GeometryType::kSurfaceMesh);
    b.cells[4] = 4;
    expectRefused(b, ErrorCode::kInvalidArgument,
                  "geometries[0] (surface mesh): cells[4] (triangle 1, corner 1) is 4: the mesh has 4 vertices");
  }
  {
    Batch b = one(GeometryType::kSurfaceMesh);
    b.points[3].y = std::nanf("");
    expectRefused(b, ErrorCode::kInvalidArgument, "points[3].y is nan");
  }
  {
    Batch b = one(GeometryType::kSurfaceMesh);
    b.cells[2] = b.cells[1];
    expectRefused(b, ErrorCode::kInvalidArgument, "triangle 0 (cells[0, 3)) has zero area");
  }
  {
    Batch b = one(GeometryType::kTetrahedralMesh);
    b.points[4] = v3(0.5f, 0.5f, 0);  // tetrahedron 1's corner 1 in the plane of its others
    expectRefused(b, ErrorCode::kInvalidArgument, "tetrahedron 1 (cells[4, 8)) has zero volume");
  }
  for (const GeometryType type : {GeometryType::kSurfaceMesh, GeometryType::kTetrahedralMesh}) {
    Batch b = one(type);
    b.queries[0].method = GeometryMethod::kContinuous;
    const std::string pair = type == GeometryType::kSurfaceMesh ? "surface mesh vs surface mesh"
                                                                : "tetrahedral mesh vs tetrahedral mesh";
    expectRefused(b, ErrorCode::kInvalidArgument, "queries[0].method is kContinuous: " + pair + " has no continuous method");
  }
}


INSTANTIATE_TEST_SUITE_P(Backends, GeometryQueriesMeshSelfConformance, VKC_ALL_BACKENDS);

// The CPU backends with the meshes' trees kept (GeometryQueryTrees: the tandem walk of a mesh's tree
// with itself; on kCpuSimd the plane pre-test's carried corners and features): the contacts without
// them, bit for bit.
TEST(GeometryQueriesMeshSelf, KeptTreesGiveTheSameContacts) {
  Batch b;
  for (const SelfCase& c : selfIntersectingMeshes()) {
    const uint32_t g = c.closed ? addClosed(b, c.mesh) : c.mesh.add(b);
    b.query(g, g);
  }
  constexpr size_t kCapacity = 8000;
  auto reference = b.run(Backend::kCpuScalar, kCapacity);
  ASSERT_TRUE(reference.ok()) << reference.message();
  ASSERT_GT(reference->contacts, 100u);
  const Batch expected = b;
  auto trees = GeometryQueryTrees::build(b.input());
  ASSERT_TRUE(trees.ok()) << trees.message();
  for (const Backend backend : kCpuBackends) {
    Batch k = expected;
    std::fill(k.elementsA.begin(), k.elementsA.end(), ContactElement{});
    std::fill(k.elementsB.begin(), k.elementsB.end(), ContactElement{});
    GeometryQueryInput in = k.input();
    in.trees = &*trees;
    auto counts = queryGeometries(backend, nullptr, in, {k.elementsA, k.elementsB, k.ranges, k.state});
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(counts->contacts, reference->contacts);
    for (size_t q = 0; q < b.queries.size(); ++q) {
      EXPECT_EQ(k.ranges[q].first, expected.ranges[q].first) << "query " << q;
      EXPECT_EQ(k.ranges[q].count, expected.ranges[q].count) << "query " << q;
    }
    for (uint64_t i = 0; i < counts->written; ++i) {
      ASSERT_TRUE(bitwiseEqual(k.elementsA[i], expected.elementsA[i]) && bitwiseEqual(k.elementsB[i], expected.elementsB[i]))
          << toString(backend) << " contact " << i;
    }
  }
}

// --- kVulkan only.

class GeometryQueriesMeshSelfVulkan : public VulkanTest {};

TEST_F(GeometryQueriesMeshSelfVulkan, OverflowKeepsTheCountAndWritesNothingPastTheCapacity) {
  const auto grids = crossingGrids(61);
  const MeshData m = join(grids[0], grids[1]);
  Batch full;
  const uint32_t g = m.add(full);
  full.query(g, g);
  full.query(g, g);
  ASSERT_TRUE(full.run(Backend::kCpuScalar, 4000).ok());
  ASSERT_GT(full.ranges[0].count, 20u);
  for (const size_t capacity : {size_t{11}, size_t{full.ranges[0].count + 3}}) {
    Batch b = full;
    auto counts = b.run(Backend::kVulkan, capacity, &ctx());
    ASSERT_TRUE(counts.ok()) << counts.message();
    EXPECT_TRUE(counts->overflow);
    EXPECT_EQ(counts->written, capacity);
    EXPECT_EQ(counts->contacts, 2u * full.ranges[0].count);
    for (size_t q = 0; q < 2; ++q) {
      EXPECT_EQ(b.ranges[q].first, full.ranges[q].first) << q;
      EXPECT_EQ(b.ranges[q].count, full.ranges[q].count) << q;
    }
    for (size_t k = 0; k < capacity; ++k) {
      EXPECT_TRUE(bitwiseEqual(b.elementsA[k], full.elementsA[k]) && bitwiseEqual(b.elementsB[k], full.elementsB[k]))
          << k;
    }
  }
}

// A closed surface mesh of more triangles than the device's vertex pass takes with an unbounded
// search radius (kGeomClosedMeshDeviceMaxTriangles): against another mesh refused on kVulkan, but
// against itself there is no vertex pass, so nothing to refuse.
TEST_F(GeometryQueriesMeshSelfVulkan, LargeClosedMeshAgainstItselfIsNotRefused) {
  const MeshData m = closedSphere(6);  // 32768 triangles
  ASSERT_GT(m.cellCount(), gpu::kGeomClosedMeshDeviceMaxTriangles);
  Batch b;
  const uint32_t g = addClosed(b, m);
  b.query(g, g);
  auto counts = b.run(Backend::kVulkan, 16, &ctx());
  ASSERT_TRUE(counts.ok()) << counts.message();
  EXPECT_EQ(counts->contacts, 0u);
}

}  // namespace
}  // namespace vkc::test::geometry
