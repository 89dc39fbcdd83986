// Mesh against mesh (issue 17, src/cpu/geometry_queries_mesh_mesh.cpp): surface-surface,
// surface-line and line-tetrahedral. iMSTK's unit tests of these pairs (TetraToLineMeshCD,
// ClosedSurfaceMeshToMeshCD's two boxes) with their inputs and expected elements, analytic cases of
// each element kind, random meshes (the BVH's contacts equal every cell's bit for bit, the swap
// rule, kCpuSimd), and bad input. The fixed cases have one body per backend
// (GeometryQueriesMeshMeshBackends: kVulkan's mesh-mesh family included, each run compared with
// kCpuScalar), the closed meshes' vertex pass included.
#include <cmath>
#include <functional>
#include <random>

#include "geometry_queries/geometry_queries_mesh_test_support.h"
#include "vkcollide/query_file.h"

namespace vkc::test::geometry {
namespace {

// A box of half extents h at centre c, turned by the rotation matrix rows r (12 triangles, normals
// outward, as iMSTK's GeometryUtils::toSurfaceMesh of an OrientedBox: 8 corners, two triangles a face).
std::vector<Float4> boxCorners(Float4 c, float h, const float r[3][3]) {
  std::vector<Float4> v;
  for (uint32_t i = 0; i < 8; ++i) {
    const float p[3] = {(i & 1u) ? h : -h, (i & 2u) ? h : -h, (i & 4u) ? h : -h};
    v.push_back(v3(c.x + r[0][0] * p[0] + r[0][1] * p[1] + r[0][2] * p[2],
                   c.y + r[1][0] * p[0] + r[1][1] * p[1] + r[1][2] * p[2],
                   c.z + r[2][0] * p[0] + r[2][1] * p[1] + r[2][2] * p[2]));
  }
  return v;
}
const std::vector<uint32_t> kBoxCells = {0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5, 0, 1, 5, 0, 5, 4,
                                         2, 6, 7, 2, 7, 3, 0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6};

// closed: flagged kGeometryFlagClosed (a vertex pass); else a plain surface mesh of the same triangles.
uint32_t addClosedBox(Batch& b, Float4 c, float h, const float r[3][3], bool closed = true) {
  const uint32_t first = static_cast<uint32_t>(b.points.size());
  const uint32_t entry = static_cast<uint32_t>(b.cells.size());
  const std::vector<Float4> v = boxCorners(c, h, r);
  b.points.insert(b.points.end(), v.begin(), v.end());
  b.cells.insert(b.cells.end(), kBoxCells.begin(), kBoxCells.end());
  return b.add(closed ? Geometry::closedSurfaceMesh(first, 8, entry, 12, 0.0f) : Geometry::surfaceMesh(first, 8, entry, 12));
}

constexpr float kIdentity[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

// The tests with one body per backend (VKC_ALL_BACKENDS, Vulkan included): each batch runs on the
// backend and gives kCpuScalar's contacts (MeshBackendTest::runHere).
class GeometryQueriesMeshMeshBackends : public MeshBackendTest {};

// iMSTK's TetraToLineMeshCD tests: the unit tetrahedron against one segment (input 0 the line mesh,
// input 1 the tetrahedron): enclosed and crossing give one (edge, tetrahedron) contact with ids 0,
// apart gives none.
TEST_P(GeometryQueriesMeshMeshBackends, ImstkTetraToLineMesh) {
  struct Case {
    Float4 p0, p1;
    uint32_t contacts;
  };
  for (const Case& c :
       {Case{v3(0.05f, 0.05f, 0.05f), v3(0.07f, 0.07f, 0.07f), 1},  // IntersectionTestAB_enclosed
        Case{v3(-1, -1, -1), v3(1, 1, 1), 1},                       // _intersecting
        Case{v3(1, 1, 1), v3(2, 2, 2), 0}}) {                       // NonIntersectionTestAB
    Batch b;
    const uint32_t tet = b.addMesh(GeometryType::kTetrahedralMesh,
                                   {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1)}, {0, 1, 2, 3});
    const uint32_t line = b.addMesh(GeometryType::kLineMesh, {c.p0, c.p1}, {0, 1});
    b.query(line, tet);
    b.query(tet, line);
    runHere(b);
    ASSERT_EQ(b.ranges[0].count, c.contacts);
    if (c.contacts == 0) continue;
    const ContactElement& a = b.elementsA[0];
    const ContactElement& t = b.elementsB[0];
    EXPECT_EQ(a.type, ContactElementType::kCellIndex);
    EXPECT_EQ(t.type, ContactElementType::kCellIndex);
    EXPECT_EQ(contactCellType(a), CellType::kEdge);
    EXPECT_EQ(contactCellType(t), CellType::kTetrahedron);
    EXPECT_EQ(a.index, 0u);
    EXPECT_EQ(t.index, 0u);
    EXPECT_EQ(meshElementIds(b, line, a), (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(meshElementIds(b, tet, t), (std::vector<uint32_t>{0, 1, 2, 3}));
    expectContactInvariants(a, t, 1e-6f);
    expectSwappedPairs(b, 0);
  }
}

// A segment wholly inside a tetrahedron (the case issue 17 says iMSTK misses): the contact at the
// segment's middle leaves through the nearest face.
TEST_P(GeometryQueriesMeshMeshBackends, SegmentInsideATetrahedronLeavesThroughTheNearestFace) {
  Batch b;
  const uint32_t tet = b.addMesh(GeometryType::kTetrahedralMesh,
                                 {v3(0, 0, 0), v3(4, 0, 0), v3(0, 4, 0), v3(0, 0, 4)}, {0, 1, 2, 3});
  const uint32_t line =
      b.addMesh(GeometryType::kLineMesh, {v3(0.5f, 0.5f, 0.2f), v3(1.5f, 0.5f, 0.2f)}, {0, 1});
  b.query(line, tet);
  runHere(b);
  ASSERT_EQ(b.ranges[0].count, 1u);
  // Middle (1, 0.5, 0.2): the face z = 0 is nearest (0.2); the segment moves along -z.
  expectElement(b.elementsA[0], ContactElementType::kCellIndex, {v3(1, 0.5f, 0.2f), v3(0, 0, -1), 0.2f},
                1e-6f, "segment");
  expectElement(b.elementsB[0], ContactElementType::kCellIndex, {v3(1, 0.5f, 0), v3(0, 0, 1), 0.2f}, 1e-6f,
                "tetrahedron");
}

// iMSTK's ClosedSurfaceMeshToMeshCD IntersectionTestAB_EdgeToEdge: box 1 (half 0.5) and box 2 (half
// 0.4, turned 45 degrees about z, then 45 degrees about x, moved by (0, 0.8, 0.8)); an edge of box 2
// crosses the edge of box 1 at y = z = 0.5. iMSTK expects one edge-edge contact; the triangle pairs
// here see that edge pair once (one contact per pair of edges) and no vertex is inside the other box.
void imstkBoxesEdgeToEdge(bool closed, const std::function<void(Batch&)>& runBatch) {
  const float s = std::sqrt(0.5f);
  const float rz[3][3] = {{s, -s, 0}, {s, s, 0}, {0, 0, 1}};
  const float rx[3][3] = {{1, 0, 0}, {0, s, -s}, {0, s, s}};
  float r[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[i][j] = rx[i][0] * rz[0][j] + rx[i][1] * rz[1][j] + rx[i][2] * rz[2][j];
  Batch b;
  const uint32_t box1 = addClosedBox(b, v3(0, 0, 0), 0.5f, kIdentity, closed);
  const uint32_t box2 = addClosedBox(b, v3(0, 0.8f, 0.8f), 0.4f, r, closed);
  b.query(box1, box2);
  b.query(box2, box1);
  runBatch(b);
  ASSERT_EQ(b.ranges[0].count, 1u);
  const ContactElement& a = b.elementsA[0];
  const ContactElement& e = b.elementsB[0];
  EXPECT_EQ(a.type, ContactElementType::kCellIndex);
  EXPECT_EQ(e.type, ContactElementType::kCellIndex);
  EXPECT_EQ(contactCellType(a), CellType::kEdge);
  EXPECT_EQ(contactCellType(e), CellType::kEdge);
  const std::vector<uint32_t> ea = meshElementIds(b, box1, a), eb = meshElementIds(b, box2, e);
  ASSERT_EQ(ea.size(), 2u);
  ASSERT_EQ(eb.size(), 2u);
  // Box 1's edge at y = z = 0.5: corners 6 (-x) and 7 (+x).
  EXPECT_EQ(std::min(ea[0], ea[1]), 6u);
  EXPECT_EQ(std::max(ea[0], ea[1]), 7u);
  expectContactInvariants(a, e, 1e-6f);
  expectSwappedPairs(b, 0);
}

TEST_P(GeometryQueriesMeshMeshBackends, ImstkClosedBoxesEdgeToEdge) {
  imstkBoxesEdgeToEdge(true, [this](Batch& b) { runHere(b); });
}

// The same boxes as plain surface meshes (no vertex pass, which finds nothing here): the same single
// edge-edge contact on every backend (one contact per pair of edges on the device too).
// The edge of box 2 passes through the edge of box 1: several triangle pairs give that edge pair
// (rawEdgeEdgeContacts), one is kept.
TEST_P(GeometryQueriesMeshMeshBackends, ImstkBoxesEdgeToEdgeWithoutVertexPass) {
  imstkBoxesEdgeToEdge(false, [this](Batch& b) {
    runHere(b);
    EXPECT_GT(rawEdgeEdgeContacts(b, 0, 1), 1u);
  });
}

// Two triangles, each kind: a corner of X through Y (vertex-triangle), a corner of Y through X
// (the same swapped), two triangles linked through each other's edges (edge-edge).
TEST_P(GeometryQueriesMeshMeshBackends, TriangleTriangleElementKinds) {
  Batch b;
  // Y: a large triangle in z = 0.
  const uint32_t flat =
      b.addMesh(GeometryType::kSurfaceMesh, {v3(-2, -2, 0), v3(4, -2, 0), v3(-2, 4, 0)}, {0, 1, 2});
  // X: a triangle whose corner 2 dips 0.25 below the plane, the others above.
  const uint32_t dip =
      b.addMesh(GeometryType::kSurfaceMesh, {v3(0, 0, 1), v3(1, 0, 1), v3(0.3f, 0.3f, -0.25f)}, {0, 1, 2});
  b.query(dip, flat);
  b.query(flat, dip);
  runHere(b);
  ASSERT_EQ(b.ranges[0].count, 1u);
  EXPECT_EQ(b.elementsA[0].type, ContactElementType::kPointIndexDirection);
  EXPECT_EQ(contactCellType(b.elementsA[0]), CellType::kVertex);
  EXPECT_EQ(b.elementsA[0].index, 2u);  // the vertex
  EXPECT_EQ(contactCellType(b.elementsB[0]), CellType::kTriangle);
  EXPECT_EQ(b.elementsB[0].index, 0u);  // the parent triangle
  expectElement(b.elementsA[0], ContactElementType::kPointIndexDirection,
                {v3(0.3f, 0.3f, -0.25f), v3(0, 0, 1), 0.25f}, 1e-6f, "vertex");
  expectElement(b.elementsB[0], ContactElementType::kCellIndex, {v3(0.3f, 0.3f, 0), v3(0, 0, -1), 0.25f},
                1e-6f, "triangle");
  expectSwappedPairs(b, 0);

  // A corner exactly on Y's plane, the opposite edge through Y: the nearer of that edge's ends (0.2
  // below) pierces.
  Batch o;
  const uint32_t onPlane =
      o.addMesh(GeometryType::kSurfaceMesh, {v3(0, 0, 0), v3(1, 0, 0.5f), v3(1, 0.5f, -0.2f)}, {0, 1, 2});
  const uint32_t flat2 =
      o.addMesh(GeometryType::kSurfaceMesh, {v3(-2, -2, 0), v3(4, -2, 0), v3(-2, 4, 0)}, {0, 1, 2});
  o.query(onPlane, flat2);
  o.query(flat2, onPlane);
  runHere(o);
  ASSERT_EQ(o.ranges[0].count, 1u);
  EXPECT_EQ(o.elementsA[0].index, 2u);
  expectElement(o.elementsA[0], ContactElementType::kPointIndexDirection,
                {v3(1, 0.5f, -0.2f), v3(0, 0, 1), 0.2f}, 1e-6f, "vertex");
  expectSwappedPairs(o, 0);

  // Linked: X in the plane y = 0 spanning z in [-1, 1] with its edge 1-2 at x = 1; Y in the plane
  // z = 0 crossing X's edge, with its edge at x = 0.
  Batch l;
  const uint32_t x =
      l.addMesh(GeometryType::kSurfaceMesh, {v3(-3, 0, 0), v3(1, 0, -1), v3(1, 0, 1)}, {0, 1, 2});
  const uint32_t y =
      l.addMesh(GeometryType::kSurfaceMesh, {v3(0, -1, 0), v3(0, 1, 0), v3(3, 0, 0)}, {0, 1, 2});
  l.query(x, y);
  l.query(y, x);
  runHere(l);
  ASSERT_EQ(l.ranges[0].count, 1u);
  EXPECT_EQ(contactCellType(l.elementsA[0]), CellType::kEdge);
  EXPECT_EQ(contactCellType(l.elementsB[0]), CellType::kEdge);
  EXPECT_EQ(meshElementIds(l, x, l.elementsA[0]), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(meshElementIds(l, y, l.elementsB[0]), (std::vector<uint32_t>{0, 1}));
  // Closest points of the edges: (1, 0, 0) and (0, 0, 0): X moves by 1 along -x.
  expectElement(l.elementsA[0], ContactElementType::kCellIndex, {v3(1, 0, 0), v3(-1, 0, 0), 1.0f}, 1e-6f,
                "X edge");
  expectElement(l.elementsB[0], ContactElementType::kCellIndex, {v3(0, 0, 0), v3(1, 0, 0), 1.0f}, 1e-6f,
                "Y edge");
  expectSwappedPairs(l, 0);

  // Apart, and coplanar overlapping (no single way out: no contact, as iMSTK).
  Batch n;
  const uint32_t p =
      n.addMesh(GeometryType::kSurfaceMesh, {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0)}, {0, 1, 2});
  const uint32_t q =
      n.addMesh(GeometryType::kSurfaceMesh, {v3(0, 0, 2), v3(1, 0, 2), v3(0, 1, 2)}, {0, 1, 2});
  const uint32_t c =
      n.addMesh(GeometryType::kSurfaceMesh, {v3(0.2f, 0.2f, 0), v3(2, 0, 0), v3(0, 2, 0)}, {0, 1, 2});
  n.query(p, q);
  n.query(p, c);
  runHere(n);
  EXPECT_EQ(n.ranges[0].count, 0u);
  EXPECT_EQ(n.ranges[1].count, 0u);
}

// A segment through a triangle: the triangle's element and the segment's (an edge), the segment
// leaving by its shorter end.
TEST_P(GeometryQueriesMeshMeshBackends, SurfaceMeshAgainstLineMesh) {
  Batch b;
  const uint32_t tri =
      b.addMesh(GeometryType::kSurfaceMesh, {v3(0, 0, 0), v3(2, 0, 0), v3(0, 2, 0)}, {0, 1, 2});
  const uint32_t line = b.addMesh(GeometryType::kLineMesh,
                                  {v3(0.5f, 0.5f, -0.1f), v3(0.5f, 0.5f, 1), v3(5, 5, 5)}, {0, 1, 1, 2});
  b.query(tri, line);
  b.query(line, tri);
  runHere(b);
  ASSERT_EQ(b.ranges[0].count, 1u);
  expectElement(b.elementsA[0], ContactElementType::kCellIndex, {v3(0.5f, 0.5f, 0), v3(0, 0, -1), 0.1f},
                1e-6f, "triangle");
  expectElement(b.elementsB[0], ContactElementType::kCellIndex, {v3(0.5f, 0.5f, -0.1f), v3(0, 0, 1), 0.1f},
                1e-6f, "segment");
  EXPECT_EQ(contactCellType(b.elementsB[0]), CellType::kEdge);
  EXPECT_EQ(meshElementIds(b, line, b.elementsB[0]), (std::vector<uint32_t>{0, 1}));
  expectSwappedPairs(b, 0);
}

// A closed box adds the line mesh's vertices inside it (vertex pass).
TEST_P(GeometryQueriesMeshMeshBackends, ClosedSurfaceMeshAgainstLineMesh) {
  // The unit box (closed) against a polyline: vertex 1 inside (0.1 under the +z face), segments 0-1
  // and 1-2 through the +z face (its triangle 10, below the face's diagonal), vertex 0 and 2 outside.
  Batch c;
  const uint32_t box = addClosedBox(c, v3(0, 0, 0), 0.5f, kIdentity);
  const uint32_t poly = c.addMesh(GeometryType::kLineMesh,
                                  {v3(0.2f, 0.1f, 2), v3(0.2f, 0.1f, 0.4f), v3(0.3f, 0.1f, 3)}, {0, 1, 1, 2});
  c.query(box, poly);
  c.query(poly, box);
  runHere(c);
  ASSERT_EQ(c.ranges[0].count, 3u);
  // Crossings first (by triangle, then segment), then the vertex pass.
  EXPECT_EQ(contactCellType(c.elementsB[0]), CellType::kEdge);
  EXPECT_EQ(contactCellType(c.elementsB[1]), CellType::kEdge);
  EXPECT_EQ(c.elementsB[2].type, ContactElementType::kPointIndexDirection);
  EXPECT_EQ(contactCellType(c.elementsB[2]), CellType::kVertex);
  EXPECT_EQ(c.elementsB[2].index, 1u);
  expectElement(c.elementsB[2], ContactElementType::kPointIndexDirection,
                {v3(0.2f, 0.1f, 0.4f), v3(0, 0, 1), 0.1f}, 1e-6f, "vertex");
  EXPECT_EQ(contactCellType(c.elementsA[2]), CellType::kTriangle);
  for (uint32_t k = 0; k < 3; ++k) expectContactInvariants(c.elementsA[k], c.elementsB[k], 1e-6f);
  expectSwappedPairs(c, 0);
}

// A closed box pushed into another: the vertices of each inside the other (the vertex pass, both
// ways) after the triangle pairs.
TEST_P(GeometryQueriesMeshMeshBackends, ClosedBoxesVertexPassBothWays) {
  Batch b;
  const uint32_t big = addClosedBox(b, v3(0, 0, 0), 0.5f, kIdentity);
  const uint32_t small = addClosedBox(b, v3(0.55f, 0.05f, 0.05f), 0.1f, kIdentity);
  b.query(big, small);
  b.query(small, big);
  runHere(b);
  const ContactRange r = b.ranges[0];
  // The vertex pass's elements of a vertex carry no corner of a parent cell.
  uint32_t smallInsideBig = 0, bigInsideSmall = 0;
  for (uint32_t k = r.first; k < r.first + r.count; ++k) {
    const ContactElement& a = b.elementsA[k];
    const ContactElement& e = b.elementsB[k];
    if (e.type == ContactElementType::kPointIndexDirection && contactCellCorners(e) == 0) {
      ++smallInsideBig;
      EXPECT_NEAR(e.point.x, 0.45f, 1e-6f);
      EXPECT_NEAR(e.point.w, 0.05f, 1e-6f);
    }
    if (a.type == ContactElementType::kPointIndexDirection && contactCellCorners(a) == 0) ++bigInsideSmall;
    expectContactInvariants(a, e, 1e-6f);
  }
  // The small box's four corners at x = 0.45 are inside the big one (0.05 deep); no big corner is in
  // the small box.
  EXPECT_EQ(smallInsideBig, 4u);
  EXPECT_EQ(bigInsideSmall, 0u);
  expectSwappedPairs(b, 4);
}

// Random triangle soups and line meshes: each pair in both orders, the BVH's contacts equal every
// cell's bit for bit, the swap rule, kCpuSimd.
TEST(GeometryQueriesMeshMesh, BvhEqualsBruteForceOnRandomMeshes) {
  for (uint32_t seed : {11u, 12u}) {
    std::mt19937 rng(seed);
    Batch b;
    const auto soup = [&](GeometryType type, uint32_t cells) {
      return addRandomSoup(b, rng, type, cells, 3.0f, 0.5f);
    };
    const uint32_t s0 = soup(GeometryType::kSurfaceMesh, 1500), s1 = soup(GeometryType::kSurfaceMesh, 1500);
    const uint32_t l0 = soup(GeometryType::kLineMesh, 1500), t0 = soup(GeometryType::kTetrahedralMesh, 800);
    const uint32_t box = addClosedBox(b, v3(0.3f, -0.2f, 0.1f), 1.7f, kIdentity);
    for (auto [x, y] : {std::pair{s0, s1}, {s0, l0}, {l0, t0}, {box, s1}, {box, l0}}) {
      b.query(x, y);
      b.query(y, x);
    }
    auto counts = b.run(Backend::kCpuScalar, 400000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    for (size_t q = 0; q < b.queries.size(); q += 2) EXPECT_GT(b.ranges[q].count, 20u) << "query " << q;
    expectSwappedPairs(b, 20);
    expectBruteForceAndSimdEqual(b, counts->contacts, 400000, 2e-5f);
  }
}

TEST(GeometryQueriesMeshMesh, BadInputNamesTheField) {
  const auto two = [] {
    Batch b;
    const uint32_t x =
        b.addMesh(GeometryType::kSurfaceMesh, {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0)}, {0, 1, 2});
    const uint32_t y = b.addMesh(GeometryType::kLineMesh, {v3(0, 0, -1), v3(0, 0, 1)}, {0, 1});
    b.query(x, y);
    return b;
  };
  {
    Batch b = two();
    b.cells[4] = 2;
    expectRefusedUnwritten(
        b, ErrorCode::kInvalidArgument,
        "geometries[1] (line mesh): cells[4] (segment 0, corner 1) is 2: the mesh has 2 vertices");
  }
  {
    Batch b = two();
    b.points[4].z = std::nanf("");
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "points[4].z is nan");
  }
  {
    Batch b = two();
    b.queries[0].method = GeometryMethod::kContinuous;
    expectRefusedUnwritten(
        b, ErrorCode::kInvalidArgument,
        "queries[0].method is kContinuous: surface mesh vs line mesh has no continuous method");
  }
  {
    // A surface mesh against itself is self collision (its one triangle: no pair, no contact), but
    // static only.
    Batch b = two();
    b.queries[0].b = 0;
    auto counts = b.run(Backend::kCpuScalar, 16);
    ASSERT_TRUE(counts.ok()) << counts.message();
    EXPECT_EQ(b.ranges[0].count, 0u);
    b.queries[0].method = GeometryMethod::kContinuous;
    expectRefusedUnwritten(
        b, ErrorCode::kInvalidArgument,
        "queries[0].method is kContinuous: surface mesh vs surface mesh has no continuous method");
  }
}

// The query file needs nothing new for mesh-mesh queries: a file with a segment through a
// tetrahedron and through a closed tetrahedron's surface (with its inside vertex) is read, run,
// written and read back; the contacts file (vertex elements of the vertex pass included) round
// trips bitwise.
TEST(GeometryQueriesMeshMesh, QueryAndContactsFilesRoundTrip) {
  const char* kFile = R"({
  "format": "vkcollide-queries", "version": 1,
  "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.1, 0.2, 0.1], [0.1, 0.2, 2]],
  "cells": [0, 1, 2, 3, 0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3, 0, 1],
  "geometries": [
    {"name": "tet", "type": "tetrahedralMesh", "count": 4, "cellCount": 1},
    {"name": "shell", "type": "surfaceMesh", "count": 4, "cellFirst": 4, "cellCount": 4, "closed": true},
    {"name": "rod", "type": "lineMesh", "first": 4, "count": 2, "cellFirst": 16, "cellCount": 1}
  ],
  "queries": [{"a": "rod", "b": "tet"}, {"a": "shell", "b": "rod"}]
})";
  Result<GeometryQueryFile> f = parseGeometryQueries(kFile);
  ASSERT_TRUE(f) << f.message();
  Result<GeometryQueryFile> back = parseGeometryQueries(writeGeometryQueries(*f));
  ASSERT_TRUE(back) << back.message();
  std::vector<ContactElement> a(8), b(8), a2(8), b2(8);
  std::vector<ContactRange> ranges(2), ranges2(2);
  Result<GeometryQueryCounts> counts = queryGeometriesCpu(f->input(), {a, b, ranges}, Backend::kCpuScalar);
  ASSERT_TRUE(counts) << counts.message();
  ASSERT_TRUE(queryGeometriesCpu(back->input(), {a2, b2, ranges2}, Backend::kCpuScalar));
  ASSERT_EQ(ranges[0].count, 1u);  // the rod through the tetrahedron
  ASSERT_EQ(ranges[1].count, 2u);  // through the shell's face x + y + z = 1, then vertex 0 inside
  EXPECT_EQ(contactCellType(b[2]), CellType::kVertex);
  EXPECT_EQ(b[2].index, 0u);
  GeometryContacts c{"cpu-scalar", *counts, f->queries, ranges, a, b};
  c.elementsA.resize(counts->written);
  c.elementsB.resize(counts->written);
  Result<GeometryContacts> read = parseContacts(writeContacts(c));
  ASSERT_TRUE(read) << read.message();
  for (size_t k = 0; k < counts->written; ++k) {
    EXPECT_TRUE(bitwiseEqual(a[k], a2[k]) && bitwiseEqual(b[k], b2[k])) << k;
    EXPECT_TRUE(bitwiseEqual(read->elementsA[k], a[k]) && bitwiseEqual(read->elementsB[k], b[k])) << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GeometryQueriesMeshMeshBackends, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test::geometry
