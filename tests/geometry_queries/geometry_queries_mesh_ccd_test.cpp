// The continuous mesh queries (src/cpu/geometry_queries_mesh_ccd.cpp; on Vulkan the mesh CCD family,
// shaders/shared/geometry_queries_mesh_ccd_slot.h; issue 17), one test body per backend: iMSTK's
// LineMeshToLineMeshCCD unit tests re-expressed (same inputs, same expected elements), the public
// edge-edge and vertex-face CCD queries with exact labels through this API in one batch each (no false
// negative, false positives printed), fast random points through a thin closed mesh (never tunnel; the
// static method misses them), random meshes, the swap rule, bad input; every run compared with
// kCpuScalar (bit for bit on the CPU backends and lavapipe), brute force vs BVH and kCpuSimd bit for
// bit. The stage's own checks (reruns, fixed dispatches) are the GeometryQueryStageMeshCcdVulkan
// tests.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "collide_meshes/mesh_test_support.h"
#include "geometry_queries/geometry_queries_mesh_test_support.h"
#include "shared/geometry_queries_bindings.h"
#include "vulkan/context_impl.h"

namespace vkc::test::geometry {
namespace {

// A batch whose points all have previous positions.
struct CcdBatch : Batch {
  // A mesh of `type` over `previous` -> `current` vertices and the cells.
  uint32_t addMoving(GeometryType type, const std::vector<Float4>& previous, const std::vector<Float4>& current,
                     const std::vector<uint32_t>& cellIndices, float thickness = 0.0f) {
    previousPoints.insert(previousPoints.end(), previous.begin(), previous.end());
    const uint32_t g = addMesh(type, current, cellIndices);
    geometries[g].p2.w = thickness;
    return g;
  }
  uint32_t addMovingPoints(const std::vector<Float4>& previous, const std::vector<Float4>& current) {
    previousPoints.insert(previousPoints.end(), previous.begin(), previous.end());
    return addPoints(current);
  }
  void ccd(uint32_t a, uint32_t b) { queries.push_back(GeometryQuery{a, b, GeometryMethod::kContinuous, 0}); }
};

// iMSTK's makeOneSegmentLineMesh / makeLineMesh: a polyline through the points.
std::vector<uint32_t> polyline(size_t points) {
  std::vector<uint32_t> cells;
  for (uint32_t i = 1; i < points; ++i) {
    cells.push_back(i - 1);
    cells.push_back(i);
  }
  return cells;
}

class GeometryQueriesMeshCcd : public MeshBackendTest {
 public:
  // Runs b here (room for `capacity` contacts), then expectSameAsCpuScalar.
  void runChecked(Batch& b, size_t capacity) { runHere(b, capacity); }

 protected:
  // Runs b here (room for `capacity` contacts): the same as kCpuScalar, and where that is bit for bit
  // the brute force and kCpuSimd too (expectBruteForceAndSimdEqual, contact invariants within
  // `tolerance`).
  void runAndCompare(Batch& b, size_t capacity, float tolerance) {
    auto c = run(b, capacity);
    ASSERT_TRUE(c.ok()) << c.message();
    expectSameAsCpuScalar(b, capacity);
    if (bitwise()) expectBruteForceAndSimdEqual(b, c->contacts, capacity, tolerance);
  }
};

void expectEdge(const GeometryQueryInput& in, const Geometry& mesh, const ContactElement& e, uint32_t parent,
                uint32_t id0, uint32_t id1) {
  EXPECT_EQ(e.type, ContactElementType::kCellIndex);
  EXPECT_EQ(contactCellType(e), CellType::kEdge);
  EXPECT_EQ(e.index, parent);
  uint32_t ids[4] = {};
  ASSERT_EQ(contactCellIds(in, mesh, e, ids), 2u);  // iMSTK's idCount
  EXPECT_EQ(ids[0], id0);
  EXPECT_EQ(ids[1], id1);
  EXPECT_GE(e.direction.w, 0.0f);  // the time of impact
  EXPECT_LE(e.direction.w, 1.0f);
}

// iMSTK's intersectionTest: A and B one segment each, previous and current; one contact, both sides
// the edge (0, 1) of segment 0. Also run swapped (B, A): the elements swapped bit for bit.
class GeometryQueriesMeshCcdImstk : public GeometryQueriesMeshCcd {
 protected:
  void imstkIntersection(Float4 a0p, Float4 a1p, Float4 b0p, Float4 b1p, Float4 a0, Float4 a1, Float4 b0,
                         Float4 b1) {
    CcdBatch b;
    const uint32_t ma = b.addMoving(GeometryType::kLineMesh, {a0p, a1p}, {a0, a1}, polyline(2));
    const uint32_t mb = b.addMoving(GeometryType::kLineMesh, {b0p, b1p}, {b0, b1}, polyline(2));
    b.ccd(ma, mb);
    b.ccd(mb, ma);
    runAndCompare(b, 64, 1e-5f);
    ASSERT_EQ(b.ranges[0].count + b.ranges[1].count, 2u);
    ASSERT_EQ(b.ranges[0].count, 1u);
    const GeometryQueryInput in = b.input();
    expectEdge(in, b.geometries[ma], b.elementsA[0], 0, 0, 1);
    expectEdge(in, b.geometries[mb], b.elementsB[0], 0, 0, 1);
    expectSwappedPairs(b, 0);
  }
};

TEST_P(GeometryQueriesMeshCcdImstk, EdgeEdgeCrossing) {
  imstkIntersection(v3(0, 0, -0.01f), v3(0, 0, 0.01f), v3(-0.01f, 0.01f, 0), v3(0.01f, 0.01f, 0), v3(0, 0, -0.01f),
                    v3(0, 0, 0.01f), v3(-0.01f, -0.01f, 0), v3(0.01f, -0.01f, 0));
}
TEST_P(GeometryQueriesMeshCcdImstk, VertexVertexCrossing) {
  imstkIntersection(v3(0, 0, -0.01f), v3(0, 0, 0.01f), v3(-0.01f, 0.01f, -0.01f), v3(0, 0.01f, -0.01f),
                    v3(0, 0, -0.01f), v3(0, 0, 0.01f), v3(-0.01f, -0.01f, -0.01f), v3(0, -0.01f, -0.01f));
}
TEST_P(GeometryQueriesMeshCcdImstk, EdgeVertexCrossing) {
  imstkIntersection(v3(0, 0, -0.01f), v3(0, 0, 0.01f), v3(-0.01f, 0.01f, 0), v3(0, 0.01f, 0), v3(0, 0, -0.01f),
                    v3(0, 0, 0.01f), v3(-0.01f, -0.01f, 0), v3(0, -0.01f, 0));
}
TEST_P(GeometryQueriesMeshCcdImstk, EdgeEdgeOverlap) {
  imstkIntersection(v3(0, 0, -0.01f), v3(0, 0, 0.01f), v3(-0.01f, 0.01f, 0), v3(0.01f, 0.01f, 0), v3(0, 0, -0.01f),
                    v3(0, 0, 0.01f), v3(-0.01f, 0, 0), v3(0.01f, 0, 0));
}
TEST_P(GeometryQueriesMeshCcdImstk, VertexVertexOverlap) {
  imstkIntersection(v3(0, 0, -0.01f), v3(0, 0, 0.01f), v3(-0.01f, 0.01f, -0.01f), v3(0, 0.01f, -0.01f),
                    v3(0, 0, -0.01f), v3(0, 0, 0.01f), v3(-0.01f, 0, -0.01f), v3(0, 0, -0.01f));
}
TEST_P(GeometryQueriesMeshCcdImstk, EdgeVertexOverlap) {
  imstkIntersection(v3(0, 0, -0.01f), v3(0, 0, 0.01f), v3(-0.01f, 0.01f, 0), v3(0, 0.01f, 0), v3(0, 0, -0.01f),
                    v3(0, 0, 0.01f), v3(-0.01f, 0, 0), v3(0, 0, 0));
}

// iMSTK's IntersectionTestAA_self: a polyline of 3 segments whose last vertex sweeps through the first
// segment: one contact, A the edge (0, 1) (segment 0), B the edge (2, 3) (segment 2).
TEST_P(GeometryQueriesMeshCcdImstk, SelfIntersection) {
  CcdBatch b;
  const std::vector<Float4> prev{v3(1, 0, 1), v3(1, 0, -1), v3(0, 0, 0), v3(2, 1, 0)};
  const std::vector<Float4> cur{v3(1, 0, 1), v3(1, 0, -1), v3(0, 0, 0), v3(2, -1, 0)};
  const uint32_t m = b.addMoving(GeometryType::kLineMesh, prev, cur, polyline(4));
  b.ccd(m, m);
  runAndCompare(b, 64, 1e-5f);
  ASSERT_EQ(b.ranges[0].count, 1u);
  const GeometryQueryInput in = b.input();
  expectEdge(in, b.geometries[m], b.elementsA[0], 0, 0, 1);
  expectEdge(in, b.geometries[m], b.elementsB[0], 2, 2, 3);
  // Vertex 3 crosses segment 0 at (1, 0, 0) halfway: the time of impact.
  EXPECT_NEAR(b.elementsA[0].direction.w, 0.5f, 1e-3f);
}

// iMSTK's NonIntersectionTestAB: B moves away from A: no contact.
TEST_P(GeometryQueriesMeshCcdImstk, NoIntersection) {
  CcdBatch b;
  const uint32_t ma = b.addMoving(GeometryType::kLineMesh, {v3(0, 0, -0.01f), v3(0, 0, 0.01f)},
                                  {v3(0, 0, -0.01f), v3(0, 0, 0.01f)}, polyline(2));
  const uint32_t mb = b.addMoving(GeometryType::kLineMesh, {v3(-0.01f, 0.01f, 0), v3(0.01f, 0.01f, 0)},
                                  {v3(-0.01f, 0.02f, 0), v3(0.01f, 0.02f, 0)}, polyline(2));
  b.ccd(ma, mb);
  const auto r = run(b, 64);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().contacts, 0u);
  EXPECT_EQ(b.ranges[0].count, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, GeometryQueriesMeshCcdImstk, VKC_ALL_BACKENDS);

// Thickness: segment B sweeps past the short segment A (z in [-0.01, 0.01]) 0.05 away at its closest:
// a hit with thickness 0.03 + 0.03 (the sum of the meshes') where the distance first reaches 0.06
// (B at z = 0.01 + sqrt(0.06^2 - 0.05^2)), none with 0.02 + 0.02.
TEST_P(GeometryQueriesMeshCcd, LineThicknessIsTheSumOfTheMeshes) {
  for (const float t : {0.03f, 0.02f}) {
    CcdBatch b;
    const uint32_t ma = b.addMoving(GeometryType::kLineMesh, {v3(0, 0, -0.01f), v3(0, 0, 0.01f)},
                                    {v3(0, 0, -0.01f), v3(0, 0, 0.01f)}, polyline(2), t);
    const uint32_t mb = b.addMoving(GeometryType::kLineMesh, {v3(-1, 0.05f, 1), v3(1, 0.05f, 1)},
                                    {v3(-1, 0.05f, -1), v3(1, 0.05f, -1)}, polyline(2), t);
    b.ccd(ma, mb);
    const auto r = run(b, 64);
    ASSERT_TRUE(r.ok()) << r.error().message;
    expectSameAsCpuScalar(b, 64);
    EXPECT_EQ(r.value().contacts, t == 0.03f ? 1u : 0u) << t;
    if (t == 0.03f && r.value().contacts == 1) {
      const double z = 0.01 + std::sqrt(0.06 * 0.06 - 0.05 * 0.05);
      EXPECT_NEAR(b.elementsA[0].direction.w, (1.0 - z) / 2.0, 1e-3);
      EXPECT_LT(b.elementsA[0].direction.y, -0.8f);  // A moves away from B: -y (and -z)
      expectContactInvariants(b.elementsA[0], b.elementsB[0], 1e-5f);
    }
  }
}

// --- The public CCD queries with exact labels (tests/data/ccd-queries) through the query API -------

// Every public query of `kind` as one query of one batch (add(b, q) adds its geometries and its
// query), run here and compared with kCpuScalar: per query whether it found a contact, in the files'
// order.
template <class Add>
std::vector<bool> publicQueryHits(GeometryQueriesMeshCcd& t, const char* kind, Add add) {
  CcdBatch b;
  for (const auto& f : meshes::ccdQueryFiles(kind)) {
    for (const meshes::Query& q : meshes::readQueries(f)) add(b, q);
  }
  const size_t capacity = b.queries.size() + 1;
  t.runChecked(b, capacity);
  std::vector<bool> hits;
  for (const ContactRange& r : b.ranges) hits.push_back(r.count == 1);
  return hits;
}

Float4 f4(glm::vec3 v) {
  return Float4{v.x, v.y, v.z, 0.0f};
}

TEST_P(GeometryQueriesMeshCcd, PublicEdgeEdgeQueriesNoFalseNegative) {
  const std::vector<bool> hits = publicQueryHits(*this, "edge-edge", [](CcdBatch& b, const meshes::Query& q) {
    const uint32_t ma =
        b.addMoving(GeometryType::kLineMesh, {f4(q.v[0]), f4(q.v[1])}, {f4(q.v[4]), f4(q.v[5])}, polyline(2));
    const uint32_t mb =
        b.addMoving(GeometryType::kLineMesh, {f4(q.v[2]), f4(q.v[3])}, {f4(q.v[6]), f4(q.v[7])}, polyline(2));
    b.ccd(ma, mb);
  });
  if (HasFatalFailure()) return;
  size_t k = 0;
  const meshes::PublicCcdTally t = meshes::runPublicCcdQueries(
      "edge-edge", [&](const meshes::Query&, bool*) { return k < hits.size() && hits[k++]; });
  EXPECT_EQ(t.total, 1574);
  EXPECT_EQ(hits.size(), 1574u);
  EXPECT_EQ(t.fn, 0);
  EXPECT_LE(t.fp, 240);  // the primitive's near misses within its float margin (tests/collide_meshes)
}

TEST_P(GeometryQueriesMeshCcd, PublicVertexFaceQueriesNoFalseNegative) {
  const std::vector<bool> hits =
      publicQueryHits(*this, "vertex-face", [](CcdBatch& b, const meshes::Query& q) {
        const uint32_t p = b.addMovingPoints({f4(q.v[0])}, {f4(q.v[4])});
        const uint32_t m = b.addMoving(GeometryType::kSurfaceMesh, {f4(q.v[1]), f4(q.v[2]), f4(q.v[3])},
                                       {f4(q.v[5]), f4(q.v[6]), f4(q.v[7])}, {0, 1, 2});
        b.ccd(m, p);
      });
  if (HasFatalFailure()) return;
  size_t k = 0;
  const meshes::PublicCcdTally t = meshes::runPublicCcdQueries(
      "vertex-face", [&](const meshes::Query&, bool*) { return k < hits.size() && hits[k++]; });
  EXPECT_EQ(t.total, 1750);
  EXPECT_EQ(hits.size(), 1750u);
  EXPECT_EQ(t.fn, 0);
}

// --- Fast points through a thin closed mesh ---------------------------------------------------------

// A closed box [-1, 1]^2 x [-h, h] (12 triangles, outward normals).
void addSlab(CcdBatch& b, float h, float lift, uint32_t* closed, uint32_t* open) {
  std::vector<Float4> v;
  for (int i = 0; i < 8; ++i) v.push_back(v3(i & 1 ? 1.0f : -1.0f, i & 2 ? 1.0f : -1.0f, i & 4 ? h : -h));
  std::vector<Float4> prev = v;
  for (Float4& p : prev) p.z -= lift;  // the slab moves up by `lift` during the step
  const std::vector<uint32_t> tris{0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                                   2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5};
  *open = b.addMoving(GeometryType::kSurfaceMesh, prev, v, tris);
  const uint32_t first = b.geometries[*open].first;
  b.geometries.push_back(Geometry::closedSurfaceMesh(first, 8, static_cast<uint32_t>(b.geometries[*open].p2.x), 12, 0.0f));
  *closed = static_cast<uint32_t>(b.geometries.size() - 1);
}

TEST_P(GeometryQueriesMeshCcd, FastPointsNeverTunnelThroughAThinClosedMesh) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> xy(-0.95f, 0.95f), z(0.3f, 2.0f);
  for (const float lift : {0.0f, 0.25f}) {
    CcdBatch b;
    uint32_t closed = 0, open = 0;
    addSlab(b, 0.005f, lift, &closed, &open);
    std::vector<Float4> prev, cur;
    for (int i = 0; i < 2000; ++i) {  // from above to below, both ends over the slab: through it
      prev.push_back(v3(xy(rng), xy(rng), z(rng)));
      cur.push_back(v3(xy(rng), xy(rng), -z(rng)));
    }
    const uint32_t pts = b.addMovingPoints(prev, cur);
    b.ccd(pts, closed);
    b.ccd(closed, pts);
    b.ccd(pts, open);  // the flag does not matter to the continuous method
    // The static method (a closed surface mesh's vertex pass; on Vulkan it walks the same device tree,
    // here built over swept boxes for the continuous queries) misses most of them.
    b.queries.push_back(GeometryQuery{closed, pts, GeometryMethod::kStatic, 0});
    // And points resting inside the slab now: the static vertex pass finds each of them (its walk in
    // the swept tree keeps the CPU's candidates: runChecked compares with kCpuScalar bit for bit).
    std::vector<Float4> resting;
    for (int i = 0; i < 200; ++i) resting.push_back(v3(xy(rng), xy(rng), 0.004f * (xy(rng) / 0.95f)));
    const uint32_t inside = b.addMovingPoints(resting, resting);
    b.queries.push_back(GeometryQuery{closed, inside, GeometryMethod::kStatic, 0});
    runChecked(b, 7500);
    if (HasFatalFailure()) return;
    EXPECT_EQ(b.ranges[0].count, 2000u) << "lift " << lift;  // every point hits: none tunnels
    EXPECT_EQ(b.ranges[2].count, 2000u);
    EXPECT_LT(b.ranges[3].count, 100u) << "the static method must miss most of them";
    EXPECT_EQ(b.ranges[4].count, 200u) << "every resting point inside the slab is a static contact";
    std::printf("lift %.2f: static %u of 2000\n", static_cast<double>(lift), b.ranges[3].count);
    const GeometryQueryInput in = b.input();
    for (uint32_t k = 0; k < b.ranges[0].count; ++k) {
      const ContactElement& p = b.elementsA[k];
      const ContactElement& m = b.elementsB[k];
      ASSERT_EQ(p.type, ContactElementType::kPointIndexDirection);
      ASSERT_EQ(p.index, k);
      ASSERT_EQ(m.type, ContactElementType::kCellIndex);
      ASSERT_EQ(contactCellType(m), CellType::kTriangle);
      uint32_t ids[4];
      ASSERT_EQ(contactCellIds(in, b.geometries[closed], m, ids), 3u);
      // From above: the top face (triangles 2, 3), pushed back up.
      EXPECT_TRUE(m.index == 2 || m.index == 3) << k;
      EXPECT_GT(p.direction.z, 0.99f) << k;
      // Depth: back to the top face at its current height.
      EXPECT_NEAR(p.point.w, 0.005f - cur[k].z, 1e-4f) << k;
      expectContactInvariants(p, m, 1e-5f);
    }
    Batch swapped = b;
    swapped.queries = {b.queries[0], b.queries[1]};
    ASSERT_TRUE(run(swapped, 5000).ok());
    expectSwappedPairs(swapped, 1999);
  }
}

// --- Brute force vs BVH, SIMD, swap on random meshes -------------------------------------------------

// Two random moving polylines (hair, 400 and 300 segments), a random moving triangle soup (200) and
// 4000 moving points: line-line in both orders, the soup vs the points in both orders, the first
// polyline against itself.
CcdBatch randomCcdBatch() {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> pos(-1.0f, 1.0f), step(-0.15f, 0.15f);
  CcdBatch b;
  const auto moving = [&](size_t n, float spread) {
    std::vector<Float4> prev, cur;
    Float4 p = v3(0.2f * pos(rng), 0.2f * pos(rng), 0.2f * pos(rng));
    for (size_t i = 0; i < n; ++i) {
      p = v3(p.x + spread * step(rng), p.y + spread * step(rng), p.z + spread * step(rng));
      prev.push_back(p);
      cur.push_back(v3(p.x + step(rng), p.y + step(rng), p.z + step(rng)));
    }
    return std::make_pair(prev, cur);
  };
  // Two random polylines (hair) and a random triangle soup with points.
  const auto [p1, c1] = moving(400, 0.5f);
  const auto [p2, c2] = moving(300, 0.5f);
  const uint32_t l1 = b.addMoving(GeometryType::kLineMesh, p1, c1, polyline(400), 0.04f);
  const uint32_t l2 = b.addMoving(GeometryType::kLineMesh, p2, c2, polyline(300), 0.03f);
  std::vector<Float4> tp, tc;
  std::vector<uint32_t> tris;
  for (uint32_t t = 0; t < 200; ++t) {
    const Float4 c = v3(0.5f * pos(rng), 0.5f * pos(rng), 0.5f * pos(rng));
    for (int k = 0; k < 3; ++k) {
      const Float4 v = v3(c.x + 0.3f * pos(rng), c.y + 0.3f * pos(rng), c.z + 0.3f * pos(rng));
      tp.push_back(v);
      tc.push_back(v3(v.x + 0.3f * step(rng), v.y + 0.3f * step(rng), v.z + 0.3f * step(rng)));
      tris.push_back(3 * t + static_cast<uint32_t>(k));
    }
  }
  const uint32_t s = b.addMoving(GeometryType::kSurfaceMesh, tp, tc, tris, 0.01f);
  const auto [pp, pc] = moving(4000, 2.0f);
  const uint32_t pts = b.addMovingPoints(pp, pc);
  b.ccd(l1, l2);
  b.ccd(l2, l1);
  b.ccd(s, pts);
  b.ccd(pts, s);
  b.ccd(l1, l1);
  return b;
}

TEST_P(GeometryQueriesMeshCcd, RandomMeshesMatchCpuScalarBruteForceSimdAndSwap) {
  CcdBatch b = randomCcdBatch();
  runAndCompare(b, 100000, 1e-4f);
  if (HasFatalFailure()) return;
  std::printf("contacts: lines %u, points %u, self %u\n", b.ranges[0].count, b.ranges[2].count, b.ranges[4].count);
  EXPECT_GT(b.ranges[4].count, 10u);
  const uint32_t contacts = b.ranges[4].first + b.ranges[4].count;
  Batch pairs = b;
  pairs.queries.pop_back();
  ASSERT_TRUE(run(pairs, 100000).ok());
  expectSwappedPairs(pairs, 10);
  // Deterministic: a second run gives the same bits.
  Batch again = b;
  ASSERT_TRUE(run(again, 100000).ok());
  for (uint32_t k = 0; k < contacts; ++k) ASSERT_TRUE(bitwiseEqual(again.elementsA[k], b.elementsA[k]));
  // Self collision: every pair once (A's segment below B's), no two segments sharing a vertex.
  for (uint32_t k = b.ranges[4].first; k < b.ranges[4].first + b.ranges[4].count; ++k) {
    EXPECT_LT(b.elementsA[k].index + 1, b.elementsB[k].index);
  }
}

// A line mesh against itself whose segments lie at very different scales (a tangle of 1 500 segments
// about the origin, another about (1000, 0, 0), a few at 1e5): each segment's reach grows with its
// coordinates, and the CPU's self walk widens each swept box by its own (src/cpu/mesh_pair_walk.h),
// so it finds the brute force's contacts, bit for bit, in the near and in the far tangle.
TEST_P(GeometryQueriesMeshCcd, SelfQueryAtMixedScalesMatchesBruteForce) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> step(-0.05f, 0.05f);
  std::vector<Float4> prev, cur;
  const auto tangle = [&](size_t n, Float4 at, float spread) {
    Float4 p = at;
    for (size_t i = 0; i < n; ++i) {
      p = v3(p.x + spread * step(rng), p.y + spread * step(rng), p.z + spread * step(rng));
      prev.push_back(p);
      cur.push_back(v3(p.x + spread * step(rng), p.y + spread * step(rng), p.z + spread * step(rng)));
    }
  };
  tangle(1500, v3(0.0f, 0.0f, 0.0f), 1.0f);
  tangle(1500, v3(1000.0f, 0.0f, 0.0f), 1.0f);
  tangle(4, v3(1e5f, 1e5f, 0.0f), 100.0f);
  CcdBatch b;
  const uint32_t m = b.addMoving(GeometryType::kLineMesh, prev, cur, polyline(prev.size()), 0.01f);
  b.ccd(m, m);
  runAndCompare(b, 200000, 1e-3f);
  if (HasFatalFailure()) return;
  uint32_t near = 0, far = 0;
  for (uint32_t k = 0; k < b.ranges[0].count; ++k) {
    (b.elementsA[k].index < 1499 ? near : far) += 1;
  }
  std::printf("contacts: near the origin %u, far %u\n", near, far);
  EXPECT_GT(near, 20u);
  EXPECT_GT(far, 20u);
}

// --- Bad input ------------------------------------------------------------------------------------

TEST_P(GeometryQueriesMeshCcd, BadInputNamesTheField) {
  const auto make = [] {
    CcdBatch b;
    const uint32_t ma = b.addMoving(GeometryType::kLineMesh, {v3(0, 0, -1), v3(0, 0, 1)}, {v3(0, 0, -1), v3(0, 0, 1)},
                                    polyline(2));
    const uint32_t mb = b.addMoving(GeometryType::kLineMesh, {v3(-1, 1, 0), v3(1, 1, 0)}, {v3(-1, -1, 0), v3(1, -1, 0)},
                                    polyline(2));
    b.ccd(ma, mb);
    return b;
  };
  const auto expectError = [this](CcdBatch b, const char* needle) {
    const auto r = run(b, 64);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
    EXPECT_EQ(b.ranges[0].count, 0xDEADu) << "nothing written on error";
  };
  {
    CcdBatch b = make();
    ASSERT_TRUE(run(b, 64).ok());
  }
  {
    CcdBatch b = make();
    b.previousPoints[3].y = std::nanf("");
    expectError(b, "previousPoints[3]");
  }
  {
    CcdBatch b = make();
    b.previousPoints.clear();
    expectError(b, "previousPoints is empty");
  }
  {
    CcdBatch b = make();
    b.previousPoints.pop_back();
    expectError(b, "previousPoints holds 3");
  }
  {
    CcdBatch b = make();
    b.geometries[1].p2.w = -0.1f;
    expectError(b, "geometries[1] (line mesh).p2.w (thickness)");
  }
  {
    CcdBatch b = make();
    b.geometries[0].p2.w = std::numeric_limits<float>::infinity();
    expectError(b, "geometries[0] (line mesh).p2.w (thickness)");
  }
  {
    CcdBatch b = make();
    b.queries[0].state = 2;
    b.state.resize(8);
    expectError(b, "queries[0].state is 2");
  }
  {
    CcdBatch b = make();
    b.queries[0].method = GeometryMethod::kStatic;  // static line-line: geometry_queries_mesh_static_test.cpp
    b.queries[0].state = 0;
    const auto r = run(b, 64);
    EXPECT_TRUE(r.ok()) << r.message();
  }
  {
    CcdBatch b = make();
    b.previousPoints.push_back(v3(0, 0, 0));
    b.previousPoints.push_back(v3(1, 0, 0));
    b.previousPoints.push_back(v3(0, 1, 0));
    b.previousPoints.push_back(v3(0, 0, 1));
    const uint32_t t = b.addMesh(GeometryType::kTetrahedralMesh, {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1)},
                                 {0, 1, 2, 3});
    b.ccd(t, 0);
    expectError(b, "queries[1].method is kContinuous: line mesh vs tetrahedral mesh has no continuous method");
  }
  if (backend() == Backend::kVulkan) {
    CcdBatch b = make();
    Context* none = nullptr;
    const auto r = b.run(Backend::kVulkan, 64, none);
    ASSERT_FALSE(r.ok());
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GeometryQueriesMeshCcd, VKC_ALL_BACKENDS);

// --- The stage on its own (Vulkan only).

class GeometryQueryStageMeshCcdVulkan : public MeshStageVulkanTest {};

TEST_F(GeometryQueryStageMeshCcdVulkan, HundredRerunsAreBitwiseIdentical) {
  expectHundredRerunsIdentical(randomCcdBatch(),
                               {.maxQueries = 16,
                                .maxGeometries = 16,
                                .maxPoints = 8192,
                                .maxContacts = 20000,
                                .maxSlots = 500000,
                                .maxCells = 4096,
                                .maxCandidates = 50000},
                               100);
}

// One continuous mesh query or many (and larger meshes): the same dispatches and barriers.
TEST_F(GeometryQueryStageMeshCcdVulkan, DispatchAndBarrierCountsDoNotDependOnTheMeshCcdQueries) {
  const auto lines = [](CcdBatch& b, uint32_t segments, float shift) {
    std::vector<Float4> prev, cur;
    for (uint32_t i = 0; i <= segments; ++i) {
      prev.push_back(v3(static_cast<float>(i) * 0.1f, shift, 1));
      cur.push_back(v3(static_cast<float>(i) * 0.1f, shift, -1));
    }
    return b.addMoving(GeometryType::kLineMesh, prev, cur, polyline(segments + 1));
  };
  CcdBatch one;
  one.ccd(lines(one, 2, 0), lines(one, 2, 0.5f));
  CcdBatch some = one;
  some.ccd(lines(some, 100, 0), lines(some, 100, 0.5f));
  CcdBatch many = some;
  for (uint32_t k = 0; k < 20; ++k) many.ccd(lines(many, 50, static_cast<float>(k)), lines(many, 50, 0.5f));
  const auto stats = recordStats({.maxQueries = 64,
                                  .maxGeometries = 64,
                                  .maxPoints = 8192,
                                  .maxContacts = 1024,
                                  .maxSlots = 100000,
                                  .maxCells = 8192},
                                 {&one, &some, &many});
  // The mesh CCD family's COUNT and WRITE, SCAN, RANGES; before them the candidates' GATHER, COUNT,
  // SUMS, BLOCKS, PREFIX, WRITE, the swept tree's build (18 passes) and the SPANS pass, all dependent
  // but the last level's two. The family's COUNT and WRITE are indirect, over the slots holding
  // candidates (shared/geometry_queries_spans.h).
  expectFixedDispatchesGrowingWork(stats, 29u, 28u);
  for (const RecordStats& st : stats) EXPECT_EQ(st.indirectDispatches, 2u);
}

// The continuous queries of randomCcdBatch interleaved with static mesh-mesh queries of the same
// meshes, on a stage whose maxCandidates (200 000) leaves most slots empty: the SPANS pass writes a
// span list per family (each pair's at its family's rank), each family's COUNT and WRITE run over
// its own list, and the contacts are kCpuScalar's bit for bit. Both families' COUNT and WRITE are
// indirect: 31 dispatches, 4 indirect, the same for the continuous queries alone with one static
// query.
TEST_F(GeometryQueryStageMeshCcdVulkan, InterleavedWithMeshMeshQueriesEachFamilyRunsItsOwnSpans) {
  CcdBatch b = randomCcdBatch();
  const std::vector<GeometryQuery> ccd = b.queries;  // l1-l2, l2-l1, soup-points, points-soup, l1-l1
  const uint32_t l1 = ccd[0].a, l2 = ccd[0].b, soup = ccd[2].a;
  const auto fixed = [](uint32_t x, uint32_t y) { return GeometryQuery{x, y, GeometryMethod::kStatic, 0}; };
  b.queries = {fixed(l1, l2), ccd[0], ccd[1], fixed(soup, l1), ccd[2], fixed(l2, soup), ccd[3], ccd[4], fixed(l1, l1)};
  CcdBatch cpu = b;
  auto want = cpu.run(Backend::kCpuScalar, 200000);
  ASSERT_TRUE(want.ok()) << want.message();
  for (const size_t q : {0u, 1u, 3u, 4u, 5u, 7u, 8u}) EXPECT_GT(cpu.ranges[q].count, 0u) << "query " << q;
  const GeometryQueryStageCreateInfo info{.maxQueries = 16, .maxGeometries = 16, .maxPoints = 8192,
                                          .maxContacts = 200000, .maxSlots = 2000000, .maxCells = 4096,
                                          .maxCandidates = 200000};
  auto stage = GeometryQueryStage::create(ctx(), info);
  ASSERT_TRUE(stage.ok()) << stage.message();
  std::vector<ContactElement> ea(200000), eb(200000);
  std::vector<ContactRange> ranges(b.queries.size());
  auto got = (*stage)->run(b.input(), {ea, eb, ranges});
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(got->candidatesMissing, 0u);
  ASSERT_EQ(got->contacts, want->contacts);
  for (size_t q = 0; q < b.queries.size(); ++q) {
    ASSERT_EQ(ranges[q].first, cpu.ranges[q].first) << "query " << q;
    ASSERT_EQ(ranges[q].count, cpu.ranges[q].count) << "query " << q;
  }
  for (uint32_t k = 0; k < got->written; ++k) {
    ASSERT_TRUE(bitwiseEqual(ea[k], cpu.elementsA[k])) << "contact " << k;
    ASSERT_TRUE(bitwiseEqual(eb[k], cpu.elementsB[k])) << "contact " << k;
  }
  CcdBatch one = b;
  one.queries = {ccd[0], ccd[1], ccd[2], fixed(l1, l2), ccd[3], ccd[4]};
  const auto stats = recordStats(info, {&b, &one});
  for (const RecordStats& st : stats) {
    EXPECT_EQ(st.dispatches, 31u);
    EXPECT_EQ(st.indirectDispatches, 4u);
    EXPECT_EQ(st.barriers, stats[0].barriers);
  }
}


// --- Through the device tree over the swept cells (shared/geometry_queries_mesh_ccd_pairs.h).

class GeometryQueriesMeshCcdTreeVulkan : public GeometryQueriesMeshCcd {};

// A jittered grid of n x n squares (2 n^2 triangles) over [0, 1]^2 in the plane z = 0, moving down
// from z = 0.002, and `points` random points falling through it from z = 0.05 to z = -0.05.
CcdBatch fallingPointsOnGrid(uint32_t n, uint32_t points, float thickness) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> jitter(-0.2f, 0.2f), unit(0.0f, 1.0f);
  CcdBatch b;
  std::vector<Float4> previous, current;
  const float h = 1.0f / static_cast<float>(n);
  for (uint32_t j = 0; j <= n; ++j) {
    for (uint32_t i = 0; i <= n; ++i) {
      const bool inside = i > 0 && j > 0 && i < n && j < n;  // the border straight: the grid covers [0, 1]^2
      const float x = (static_cast<float>(i) + (inside ? jitter(rng) : 0.0f)) * h;
      const float y = (static_cast<float>(j) + (inside ? jitter(rng) : 0.0f)) * h;
      previous.push_back(v3(x, y, 0.002f));
      current.push_back(v3(x, y, 0.0f));
    }
  }
  std::vector<uint32_t> cells;
  for (uint32_t j = 0; j < n; ++j) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t v = j * (n + 1) + i;
      cells.insert(cells.end(), {v, v + 1, v + n + 2, v, v + n + 2, v + n + 1});
    }
  }
  const uint32_t mesh = b.addMoving(GeometryType::kSurfaceMesh, previous, current, cells, thickness);
  std::vector<Float4> from, to;
  for (uint32_t k = 0; k < points; ++k) {
    const float x = 0.05f + 0.9f * unit(rng), y = 0.05f + 0.9f * unit(rng);
    from.push_back(v3(x, y, 0.05f));
    to.push_back(v3(x + 0.01f * jitter(rng), y + 0.01f * jitter(rng), -0.05f));
  }
  b.ccd(b.addMovingPoints(from, to), mesh);
  return b;
}

// 72 200 triangles against 20 000 points (the last triangles past llvmpipe's 65 535 loop iterations
// per invocation, where a point's loop over every triangle was cut short): kCpuScalar's contacts, one
// per point, bit for bit on lavapipe.
TEST_P(GeometryQueriesMeshCcdTreeVulkan, PointsAgainstSeventyTwoThousandTrianglesMatchCpuScalar) {
  CcdBatch b = fallingPointsOnGrid(190, 20000, 0.001f);
  ASSERT_GT(b.geometries[0].p2.y, 65535.0f);
  auto counts = run(b, 25000);
  ASSERT_TRUE(counts.ok()) << counts.message();
  ASSERT_FALSE(counts->overflow);
  EXPECT_EQ(counts->candidatesMissing, 0u);
  EXPECT_EQ(counts->contacts, 20000u);  // every point crosses the grid
  // Points hit triangles past the 65 535th.
  uint32_t late = 0;
  for (uint32_t k = 0; k < counts->written; ++k) late += b.elementsB[k].index > 65535u ? 1u : 0u;
  EXPECT_GT(late, 500u);
  expectSameAsCpuScalar(b, 25000);
}

// A helix of 72 000 segments (64 a turn, pitch 0.005) against itself, moving by a small translation,
// its neighbouring turns within twice the thickness: edge-edge CCD past llvmpipe's 65 535 loop
// iterations per invocation (the old slot per pair of segments: 5e9 slots).
TEST_P(GeometryQueriesMeshCcdTreeVulkan, LineMeshOfSeventyTwoThousandSegmentsAgainstItselfMatchesCpuScalar) {
  CcdBatch b;
  constexpr uint32_t kSegments = 72000, kPerTurn = 64;
  std::vector<Float4> previous, current;
  for (uint32_t i = 0; i <= kSegments; ++i) {
    const float t = 6.2831853f * static_cast<float>(i) / static_cast<float>(kPerTurn);
    const float y = 0.005f * t / 6.2831853f;
    previous.push_back(v3(std::cos(t) - 0.003f, y - 0.001f, std::sin(t) + 0.002f));
    current.push_back(v3(std::cos(t), y, std::sin(t)));
  }
  b.addMoving(GeometryType::kLineMesh, previous, current, polyline(kSegments + 1), 0.003f);
  b.ccd(0, 0);
  auto counts = run(b, 400000);
  ASSERT_TRUE(counts.ok()) << counts.message();
  ASSERT_FALSE(counts->overflow);
  EXPECT_EQ(counts->candidatesMissing, 0u);
  EXPECT_GT(b.ranges[0].count, kSegments / 2);
  expectSameAsCpuScalar(b, 400000);
}

INSTANTIATE_TEST_SUITE_P(Vulkan, GeometryQueriesMeshCcdTreeVulkan, ::testing::Values(Backend::kVulkan),
                         ::vkc::test::backendName);

class GeometryQueryStageMeshCcdTreeVulkan : public MeshStageVulkanTest {};

// A dense tangle of segments (far more candidate pairs than segments) then a query of two crossing
// segments. A stage with maxCandidates 1 (a query's slots: X's cells) reports the candidates it could
// not evaluate and finds fewer contacts in the first query; the second query's contact and every
// element past the written ones are untouched by the first's missing candidates; queryGeometries
// (its own stage, rerun with room) gives kCpuScalar's.
TEST_F(GeometryQueryStageMeshCcdTreeVulkan, CandidatesPastTheSlotsAreReported) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.0f, 0.3f), d(-0.05f, 0.05f);
  CcdBatch b;
  std::vector<Float4> previous, current;
  std::vector<uint32_t> cells;
  for (uint32_t k = 0; k < 400; ++k) {
    const Float4 p = v3(u(rng), u(rng), u(rng)), q = v3(u(rng), u(rng), u(rng));
    previous.push_back(p);
    previous.push_back(q);
    current.push_back(v3(p.x + d(rng), p.y + d(rng), p.z + d(rng)));
    current.push_back(v3(q.x + d(rng), q.y + d(rng), q.z + d(rng)));
    cells.insert(cells.end(), {2 * k, 2 * k + 1});
  }
  const uint32_t tangle = b.addMoving(GeometryType::kLineMesh, previous, current, cells, 0.002f);
  b.ccd(tangle, tangle);
  const uint32_t s0 = b.addMoving(GeometryType::kLineMesh, {v3(5, 0, 1), v3(5, 0, -1)}, {v3(5, 0, 1), v3(5, 0, -1)},
                                  polyline(2));
  const uint32_t s1 = b.addMoving(GeometryType::kLineMesh, {v3(4, -1, 0), v3(6, -1, 0)}, {v3(4, 1, 0), v3(6, 1, 0)},
                                  polyline(2));
  b.ccd(s0, s1);
  CcdBatch cpu = b;
  auto want = cpu.run(Backend::kCpuScalar, 100000);
  ASSERT_TRUE(want.ok()) << want.message();
  ASSERT_GT(cpu.ranges[0].count, 400u);
  ASSERT_EQ(cpu.ranges[1].count, 1u);

  auto stage = GeometryQueryStage::create(ctx(), {.maxQueries = 2, .maxGeometries = 3, .maxPoints = 1000,
                                                  .maxContacts = 100000, .maxSlots = 2000, .maxCells = 1000,
                                                  .maxCandidates = 1});
  ASSERT_TRUE(stage.ok()) << stage.message();
  const ContactElement sentinel{.query = 0xDEADu};
  std::vector<ContactElement> ea(100000, sentinel), eb(100000, sentinel);
  std::vector<ContactRange> ranges(2);
  auto got = (*stage)->run(b.input(), {ea, eb, ranges});
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_GT(got->candidatesMissing, 0u);
  EXPECT_LT(ranges[0].count, cpu.ranges[0].count);
  ASSERT_EQ(ranges[1].count, 1u);
  EXPECT_EQ(got->contacts, ranges[0].count + 1u);
  EXPECT_TRUE(bitwiseEqual(ea[ranges[1].first], cpu.elementsA[cpu.ranges[1].first]));
  EXPECT_TRUE(bitwiseEqual(eb[ranges[1].first], cpu.elementsB[cpu.ranges[1].first]));
  for (size_t k = got->written; k < ea.size(); ++k) {
    ASSERT_EQ(ea[k].query, 0xDEADu) << "element " << k << " written past the contacts";
    ASSERT_EQ(eb[k].query, 0xDEADu) << "element " << k << " written past the contacts";
  }

  expectQueryGeometriesAsCpuScalar(b, cpu, want->contacts, 100000);
}

// The mesh CCD family's span of more tiles than one row of workgroups holds (the device's
// maxComputeWorkGroupCount[0]): its indirect dispatch is split over x and y (as the device
// families', GeometryQueryDeviceVulkan.SpanDispatchSplitsOverTheWorkgroupCountLimit), and the
// second row's tiles are evaluated. A line mesh of maxX + 400 short static segments across 64 long
// ones (the other mesh, rising along x): each short segment's swept box overlaps all 64 (its 64
// candidates fill one tile: segment i is workgroup i), all pass 0.25 above them but the last 100,
// which cross all 64 during the step: their contacts lie in the second row only. Skipped where the
// candidates would need over 128 MiB.
TEST_F(GeometryQueryStageMeshCcdTreeVulkan, SpanDispatchSplitsOverTheWorkgroupCountLimit) {
  const uint64_t maxX = detail::Internals::of(ctx()).info.maxComputeWorkGroupCount[0];
  constexpr uint32_t kLong = gpu::kGeomGroupSize;
  const uint64_t n = maxX + 400;
  if (n * kLong * sizeof(gpu::uvec2) > (uint64_t{128} << 20)) GTEST_SKIP() << "maxComputeWorkGroupCount[0] = " << maxX;
  constexpr float kLength = 2000.0f;
  CcdBatch b;
  std::vector<Float4> previous, current;
  std::vector<uint32_t> cells;
  for (uint32_t i = 0; i < n; ++i) {
    const float x = 0.02f * static_cast<float>(i + 1), z = x / kLength;  // the long segments' height at x
    const bool crossing = i >= n - 100;
    const float before = crossing ? z + 0.01f : z + 0.25f, after = crossing ? z - 0.01f : z + 0.25f;
    previous.insert(previous.end(), {v3(x, -1, before), v3(x, 2, before)});
    current.insert(current.end(), {v3(x, -1, after), v3(x, 2, after)});
    cells.insert(cells.end(), {2 * i, 2 * i + 1});
  }
  const uint32_t shorts = b.addMoving(GeometryType::kLineMesh, previous, current, cells, 0.001f);
  std::vector<Float4> ends;
  for (uint32_t k = 0; k < kLong; ++k) {
    const float y = 0.01f * static_cast<float>(k);
    ends.insert(ends.end(), {v3(0, y, 0), v3(kLength, y, 1)});
  }
  std::vector<uint32_t> longCells;
  for (uint32_t k = 0; k < kLong; ++k) longCells.insert(longCells.end(), {2 * k, 2 * k + 1});
  b.ccd(shorts, b.addMoving(GeometryType::kLineMesh, ends, ends, longCells, 0.001f));
  CcdBatch cpu = b;
  auto want = cpu.run(Backend::kCpuScalar, 20000);
  ASSERT_TRUE(want.ok()) << want.message();
  ASSERT_EQ(want->contacts, 100u * kLong);
  const uint32_t slots = static_cast<uint32_t>(n * kLong);
  const uint32_t points = static_cast<uint32_t>(b.points.size());
  auto stage = GeometryQueryStage::create(ctx(), {.maxQueries = 1, .maxGeometries = 2, .maxPoints = points,
                                                  .maxContacts = 20000, .maxSlots = slots,
                                                  .maxCells = static_cast<uint32_t>(b.cells.size()),
                                                  .maxCandidates = slots});
  ASSERT_TRUE(stage.ok()) << stage.message();
  std::vector<ContactElement> ea(20000), eb(20000);
  std::vector<ContactRange> ranges(1);
  auto got = (*stage)->run(b.input(), {ea, eb, ranges});
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(got->candidatesMissing, 0u);
  ASSERT_EQ(got->contacts, want->contacts);
  for (uint32_t k = 0; k < got->written; ++k) {
    ASSERT_GE(ea[k].index, maxX) << "contact " << k << ": not in the second row";
    ASSERT_TRUE(bitwiseEqual(ea[k], cpu.elementsA[k])) << "contact " << k;
    ASSERT_TRUE(bitwiseEqual(eb[k], cpu.elementsB[k])) << "contact " << k;
  }
  EXPECT_EQ((*stage)->lastRecordStats().indirectDispatches, 2u);
}

}  // namespace
}  // namespace vkc::test::geometry
