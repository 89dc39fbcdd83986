// The last static mesh rows (issue 17): LineMesh vs LineMesh (two meshes and a mesh against itself,
// shaders/shared/geometry_queries_mesh_mesh.h geomSegmentSegment) and a TetrahedralMesh against a
// sphere, capsule, plane and oriented box (shaders/shared/geometry_queries_mesh_tetra.h). Analytic
// cases with their expected elements, an independent double-precision distance oracle, random meshes
// (the BVH's contacts equal every cell's bit for bit, the swap rule, kCpuSimd), bad input and the query
// file's thickness. The analytic line-line cases have one body per backend
// (GeometryQueriesMeshStaticBackends: kVulkan included, each run compared with kCpuScalar).
#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

#include "geometry_queries/geometry_queries_mesh_test_support.h"
#include "vkcollide/query_file.h"

namespace vkc::test::geometry {
namespace {

uint32_t addLines(Batch& b, const std::vector<Float4>& v, const std::vector<uint32_t>& cells,
                  float thickness) {
  const uint32_t g = b.addMesh(GeometryType::kLineMesh, v, cells);
  b.geometries[g].p2.w = thickness;
  return g;
}

Geometry ball(float x, float y, float z, float r) {
  return Geometry::sphere(Float4{x, y, z, r});
}

// The tests with one body per backend (VKC_ALL_BACKENDS, Vulkan included): each batch runs on the
// backend and gives kCpuScalar's contacts (MeshBackendTest::runHere).
class GeometryQueriesMeshStaticBackends : public MeshBackendTest {};

// --- LineMesh vs LineMesh ---

// Two rods of thickness 0.1 each (contact within 0.2): X along x, Y along y at heights 0.15 (depth
// 0.05), 0 (crossing: the common perpendicular, depth 0.2) and 0.25 (apart).
TEST_P(GeometryQueriesMeshStaticBackends, LineLineClosestPointsAndCrossing) {
  struct Case {
    float z;
    uint32_t contacts;
    float depth;
    float dirZ;  // X's direction
  };
  for (const Case& c : {Case{0.15f, 1, 0.05f, -1.0f}, Case{0.0f, 1, 0.2f, 1.0f}, Case{0.25f, 0, 0, 0}}) {
    Batch b;
    const uint32_t x = addLines(b, {v3(0, 0, 0), v3(2, 0, 0)}, {0, 1}, 0.1f);
    const uint32_t y = addLines(b, {v3(1, -1, c.z), v3(1, 1, c.z)}, {0, 1}, 0.1f);
    b.query(x, y);
    b.query(y, x);
    runHere(b);
    ASSERT_EQ(b.ranges[0].count, c.contacts) << c.z;
    if (c.contacts == 0) continue;
    const ContactElement& ex = b.elementsA[0];
    const ContactElement& ey = b.elementsB[0];
    expectElement(ex, ContactElementType::kCellIndex, {v3(1, 0, 0), v3(0, 0, c.dirZ), c.depth}, 1e-6f, "X");
    expectElement(ey, ContactElementType::kCellIndex,
                  {v3(1, 0, c.dirZ * c.depth), v3(0, 0, -c.dirZ), c.depth}, 1e-6f, "Y");
    EXPECT_EQ(contactCellType(ex), CellType::kEdge);
    EXPECT_EQ(contactCellType(ey), CellType::kEdge);
    EXPECT_EQ(meshElementIds(b, x, ex), (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(meshElementIds(b, y, ey), (std::vector<uint32_t>{0, 1}));
    expectContactInvariants(ex, ey, 1e-6f);
    expectSwappedPairs(b, 0);
  }
  // Thickness 0: even crossing segments touch with depth 0, which is no contact.
  Batch b;
  const uint32_t x = addLines(b, {v3(0, 0, 0), v3(2, 0, 0)}, {0, 1}, 0.0f);
  const uint32_t y = addLines(b, {v3(1, -1, 0), v3(1, 1, 0)}, {0, 1}, 0.0f);
  b.query(x, y);
  runHere(b);
  EXPECT_EQ(b.ranges[0].count, 0u);
}

// A polyline folded back on itself (a hairpin: 0.1 apart, thickness 0.06): self collision finds the
// two parallel legs (segments 0 and 2, once, A's segment the smaller) and skips neighbours, which
// share a vertex; the same polyline as two geometries finds every pair, neighbours included.
TEST_P(GeometryQueriesMeshStaticBackends, LineMeshSelfCollisionSkipsNeighbours) {
  Batch b;
  const std::vector<Float4> v = {v3(0, 0, 0), v3(1, 0, 0), v3(1, 0.1f, 0), v3(0, 0.1f, 0)};
  const std::vector<uint32_t> cells = {0, 1, 1, 2, 2, 3};
  const uint32_t g = addLines(b, v, cells, 0.06f);
  const uint32_t h = addLines(b, v, cells, 0.06f);
  b.query(g, g);
  b.query(g, h);
  runHere(b);
  ASSERT_EQ(b.ranges[0].count, 1u);
  const ContactElement& a = b.elementsA[0];
  const ContactElement& o = b.elementsB[0];
  EXPECT_EQ(a.index, 0u);
  EXPECT_EQ(o.index, 2u);
  // Parallel legs: the middle of their overlap, 0.12 - 0.1 deep, leg 0 moving along -y.
  expectElement(a, ContactElementType::kCellIndex, {v3(0.5f, 0, 0), v3(0, -1, 0), 0.02f}, 1e-6f, "leg 0");
  expectElement(o, ContactElementType::kCellIndex, {v3(0.5f, -0.02f, 0), v3(0, 1, 0), 0.02f}, 1e-6f, "leg 2");
  // Two geometries: 3 x 3 segment pairs, each within 0.12 (the shared vertices at distance 0).
  EXPECT_EQ(b.ranges[1].count, 9u);
}

// The distance of two segments in double (the oracle, written apart from geomSegmentSegmentParams):
// the squared distance is a convex quadratic in (s, t) on [0, 1]^2: its interior minimum when that
// lies inside, else the least over the square's four sides (a point against a segment, clamped).
double pointSegmentDistance2(const double x[3], const double a[3], const double b[3]) {
  double ab[3], ax[3], l2 = 0, dot = 0;
  for (int k = 0; k < 3; ++k)
    ab[k] = b[k] - a[k], ax[k] = x[k] - a[k], l2 += ab[k] * ab[k], dot += ab[k] * ax[k];
  const double t = l2 > 0 ? std::clamp(dot / l2, 0.0, 1.0) : 0.0;
  double d = 0;
  for (int k = 0; k < 3; ++k) d += (ax[k] - ab[k] * t) * (ax[k] - ab[k] * t);
  return d;
}

double segmentDistance(const Float4& p0f, const Float4& p1f, const Float4& q0f, const Float4& q1f) {
  const double p0[3] = {p0f.x, p0f.y, p0f.z}, p1[3] = {p1f.x, p1f.y, p1f.z};
  const double q0[3] = {q0f.x, q0f.y, q0f.z}, q1[3] = {q1f.x, q1f.y, q1f.z};
  double u[3], v[3], w[3];
  for (int k = 0; k < 3; ++k) u[k] = p1[k] - p0[k], v[k] = q1[k] - q0[k], w[k] = p0[k] - q0[k];
  const auto dot = [](const double* x, const double* y) { return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]; };
  const double a = dot(u, u), b = dot(u, v), c = dot(v, v), d = dot(u, w), e = dot(v, w);
  const double det = a * c - b * b;
  double best = 1e300;
  if (det > 1e-12 * a * c) {
    const double s = (b * e - c * d) / det, t = (a * e - b * d) / det;
    if (s >= 0 && s <= 1 && t >= 0 && t <= 1) {
      double r = 0;
      for (int k = 0; k < 3; ++k) r += std::pow(w[k] + u[k] * s - v[k] * t, 2);
      best = r;
    }
  }
  best = std::min({best, pointSegmentDistance2(p0, q0, q1), pointSegmentDistance2(p1, q0, q1),
                   pointSegmentDistance2(q0, p0, p1), pointSegmentDistance2(q1, p0, p1)});
  return std::sqrt(best);
}

// Random line soups (thickness 0.02 and 0.03) against each other and themselves: contacts exactly
// where the exact distance is below the thickness (away from a 1e-4 band), depths to 1e-5; the BVH
// equals every cell bit for bit; swapped pairs; kCpuSimd.
TEST(GeometryQueriesMeshStatic, LineLineRandomAgainstExactDistanceAndBruteForce) {
  std::mt19937 rng(1725);
  Batch b;
  const uint32_t x = addRandomSoup(b, rng, GeometryType::kLineMesh, 600, 1.0f, 0.2f);
  const uint32_t y = addRandomSoup(b, rng, GeometryType::kLineMesh, 600, 1.0f, 0.2f);
  b.geometries[x].p2.w = 0.02f;
  b.geometries[y].p2.w = 0.03f;
  b.query(x, y);
  b.query(y, x);
  b.query(x, x);
  b.query(y, y);
  auto counts = b.run(Backend::kCpuScalar, 100000);
  ASSERT_TRUE(counts.ok()) << counts.message();
  Batch swapped = b;  // (x, y) and (y, x) only: a self query is its own swap
  swapped.queries.resize(2);
  ASSERT_TRUE(swapped.run(Backend::kCpuScalar, 100000).ok());
  expectSwappedPairs(swapped, 50);
  expectBruteForceAndSimdEqual(b, counts->contacts, 100000, 1e-5f);
  // Oracle for query 0 and query 2 (self: pairs i < j not sharing a vertex; a soup shares none).
  for (const auto& [q, g1, g2] : {std::tuple{0u, x, y}, std::tuple{2u, x, x}}) {
    const Geometry& a = b.geometries[g1];
    const Geometry& c = b.geometries[g2];
    const double thickness = double(a.p2.w) + double(c.p2.w);
    std::vector<std::pair<uint32_t, uint32_t>> got;
    for (uint32_t k = 0; k < b.ranges[q].count; ++k) {
      const ContactElement& ea = b.elementsA[b.ranges[q].first + k];
      const ContactElement& eb = b.elementsB[b.ranges[q].first + k];
      got.emplace_back(ea.index, eb.index);
    }
    int exact = 0, band = 0;
    const auto vertex = [&](const Geometry& g, uint32_t cell, uint32_t k) {
      return b.points[g.first + b.cells[static_cast<size_t>(g.p2.x) + cell * 2u + k]];
    };
    for (uint32_t i = 0; i < 600; ++i) {
      for (uint32_t j = g1 == g2 ? i + 1 : 0; j < 600; ++j) {
        const double d = segmentDistance(vertex(a, i, 0), vertex(a, i, 1), vertex(c, j, 0), vertex(c, j, 1));
        const bool ours = std::binary_search(got.begin(), got.end(), std::pair{i, j});
        if (std::abs(d - thickness) < 1e-4) {
          ++band;
          continue;
        }
        EXPECT_EQ(ours, d < thickness)
            << "query " << q << " segments " << i << ", " << j << " distance " << d;
        exact += d < thickness;
      }
    }
    EXPECT_GT(exact, 50) << "query " << q;
    std::printf(
        "line-line query %u: %d exact contacts, %zu reported, %d pairs within 1e-4 of the thickness\n", q,
        exact, got.size(), band);
    for (uint32_t k = 0; k < b.ranges[q].count; ++k) {
      const ContactElement& ea = b.elementsA[b.ranges[q].first + k];
      const ContactElement& eb = b.elementsB[b.ranges[q].first + k];
      const double d = segmentDistance(vertex(a, ea.index, 0), vertex(a, ea.index, 1), vertex(c, eb.index, 0),
                                       vertex(c, eb.index, 1));
      EXPECT_NEAR(double(ea.point.w), thickness - d, 1e-5) << "query " << q << " contact " << k;
    }
  }
}

TEST(GeometryQueriesMeshStatic, LineLineBadInput) {
  Batch b;
  const uint32_t x = addLines(b, {v3(0, 0, 0), v3(2, 0, 0)}, {0, 1}, 0.1f);
  b.query(x, x);
  b.geometries[x].p2.w = -0.1f;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument,
                         "geometries[0] (line mesh).p2.w (thickness) is -0.1");
  b.geometries[x].p2.w = std::nanf("");
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0] (line mesh).p2.w (thickness) is nan");
  b.geometries[x].p2.w = 0.1f;
  b.cells[1] = 0;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "segment 0 (cells[0, 2)) has zero length");
}

// --- TetrahedralMesh vs sphere, capsule, plane, box ---

// The tetrahedron (0,0,0), (4,0,0), (0,4,0), (0,0,4): face 3 (corners 0, 1, 2) is z = 0.
uint32_t addTet(Batch& b) {
  return b.addMesh(GeometryType::kTetrahedralMesh, {v3(0, 0, 0), v3(4, 0, 0), v3(0, 4, 0), v3(0, 0, 4)},
                   {0, 1, 2, 3});
}

struct TetCase {
  const char* name;
  Geometry other;
  Expect tet;                 // the tetrahedron's element
  std::vector<uint32_t> ids;  // its seed's ids
  CellType cell;
};

TEST(GeometryQueriesMeshStatic, TetrahedronAgainstPrimitivesAnalytic) {
  const float i3 = 1.0f / std::sqrt(3.0f);
  const std::vector<TetCase> cases = {
      // Centre under face z = 0: the face's point, the tetrahedron moves up.
      {"sphere under a face",
       ball(1, 1, -0.5f, 1.0f),
       {v3(1, 1, 0), v3(0, 0, 1), 0.5f},
       {0, 1, 2},
       CellType::kTriangle},
      // Centre inside, nearest face z = 0 at 0.3: depth 0.3 + r, the whole tetrahedron.
      {"sphere inside",
       ball(1, 1, 0.3f, 0.1f),
       {v3(1, 1, 0), v3(0, 0, 1), 0.4f},
       {0, 1, 2, 3},
       CellType::kTetrahedron},
      // Near corner 0: a vertex element.
      {"sphere at a corner",
       ball(-0.3f, -0.3f, -0.3f, 1.0f),
       {v3(0, 0, 0), v3(i3, i3, i3), 1.0f - 0.3f * std::sqrt(3.0f)},
       {0},
       CellType::kVertex},
      // Near the edge of corners 0 and 1 (the x axis).
      {"sphere at an edge",
       ball(2, -0.3f, -0.4f, 1.0f),
       {v3(2, 0, 0), v3(0, 0.6f, 0.8f), 0.5f},
       {0, 1},
       CellType::kEdge},
      // Capsule below face z = 0, its upper end 0.5 under it.
      {"capsule under a face",
       Geometry::capsule(v3(1, 1, -2), v3(1, 1, -0.5f), 1.0f),
       {v3(1, 1, 0), v3(0, 0, 1), 0.5f},
       {0, 1, 2},
       CellType::kTriangle},
      // Capsule through the tetrahedron: its axis inside for z in [0, 0.6], the middle z = 0.3 (x = y =
      // 1: face z = 0 the nearest), depth 0.3 + 0.2.
      {"capsule through",
       Geometry::capsule(v3(1, 1, -1), v3(1, 1, 0.6f), 0.2f),
       {v3(1, 1, 0), v3(0, 0, 1), 0.5f},
       {0, 1, 2, 3},
       CellType::kTetrahedron},
      // One-sided plane z = 1 (outside above): the face z = 0 is the deepest, 1 below, at its centroid.
      {"plane",
       Geometry::plane(v3(0, 0, 1), v3(0, 0, 1), false),
       {v3(4.0f / 3, 4.0f / 3, 0), v3(0, 0, 1), 1.0f},
       {0, 1, 2},
       CellType::kTriangle},
      // Plane z = 3.5 facing down (outside below): corner 3 is the only one above, 0.5.
      {"plane at a corner",
       Geometry::plane(v3(0, 0, 3.5f), v3(0, 0, -1), false),
       {v3(0, 0, 4), v3(0, 0, -1), 0.5f},
       {3},
       CellType::kVertex},
      // Box under face z = 0, its top at z = 0.1: the tetrahedron moves up by 0.1, on its face.
      {"box",
       Geometry::orientedBox(v3(1, 1, -0.4f), identityQuat(), v3(0.5f, 0.5f, 0.5f)),
       {v3(1, 1, 0), v3(0, 0, 1), 0.1f},
       {0, 1, 2},
       CellType::kTriangle},
      // Box around corner 3 (its lower face at z = 3.8): the corner is 0.2 deep, moving down.
      {"box at a corner",
       Geometry::orientedBox(v3(0, 0, 4.5f), identityQuat(), v3(1, 1, 0.7f)),
       {v3(0, 0, 4), v3(0, 0, -1), 0.2f},
       {3},
       CellType::kVertex},
  };
  for (const TetCase& c : cases) {
    Batch b;
    const uint32_t tet = addTet(b);
    const uint32_t other = b.add(c.other);
    b.query(tet, other);
    b.query(other, tet);
    runScalarAndSimd(b);
    ASSERT_EQ(b.ranges[0].count, 1u) << c.name;
    const ContactElement& t = b.elementsA[0];
    const ContactElement& o = b.elementsB[0];
    const ContactElementType type = c.cell == CellType::kVertex ? ContactElementType::kPointIndexDirection
                                                                : ContactElementType::kCellIndex;
    expectElement(t, type, c.tet, 1e-5f, c.name);
    EXPECT_EQ(contactCellType(t), c.cell) << c.name;
    EXPECT_EQ(meshElementIds(b, tet, t), c.ids) << c.name;
    EXPECT_EQ(o.type, ContactElementType::kPointDirection) << c.name;
    expectContactInvariants(t, o, 1e-5f);
    expectSwappedPairs(b, 0);
  }
  // Apart: none.
  for (const Geometry& g : {ball(1, 1, -1.2f, 1.0f), Geometry::capsule(v3(5, 5, 5), v3(6, 6, 6), 1),
                            Geometry::plane(v3(0, 0, -0.1f), v3(0, 0, 1), false),
                            Geometry::orientedBox(v3(3, 3, 3), identityQuat(), v3(0.5f, 0.5f, 0.5f))}) {
    Batch b;
    b.query(addTet(b), b.add(g));
    runScalarAndSimd(b);
    EXPECT_EQ(b.ranges[0].count, 0u);
  }
}

// A tetrahedron against an implicit geometry: the half space z < 0.5 sampled on a grid (linear:
// trilinear interpolation is exact). The least field over the tetrahedron's lattice is on its face z =
// 0; the first such lattice point is corner 0: a vertex element moving up by 0.5. Lifted by 0.6: none.
TEST(GeometryQueriesMeshStatic, TetrahedronAgainstImplicitGeometry) {
  for (const float lift : {0.0f, 0.6f}) {
    Batch b;
    const uint32_t tet = b.addMesh(GeometryType::kTetrahedralMesh,
                                   {v3(0, 0, lift), v3(4, 0, lift), v3(0, 4, lift), v3(0, 0, 4 + lift)}, {0, 1, 2, 3});
    const uint32_t grid = b.addGrid(v3(-1, -1, -1), 0.5f, 13, [](float, float, float z) { return z - 0.5f; });
    b.query(tet, grid);
    b.query(grid, tet);
    runScalarAndSimd(b);
    if (lift > 0.5f) {
      EXPECT_EQ(b.ranges[0].count, 0u);
      continue;
    }
    ASSERT_EQ(b.ranges[0].count, 1u);
    expectElement(b.elementsA[0], ContactElementType::kPointIndexDirection, {v3(0, 0, 0), v3(0, 0, 1), 0.5f}, 1e-5f,
                  "tetrahedron");
    EXPECT_EQ(contactCellType(b.elementsA[0]), CellType::kVertex);
    EXPECT_EQ(b.elementsA[0].index, 0u);
    expectContactInvariants(b.elementsA[0], b.elementsB[0], 1e-5f);
    expectSwappedPairs(b, 0);
  }
}

// The double-precision oracle of a point against a tetrahedron: inside by the signs of four
// orientations; outside, the least distance to its four faces.
bool insideTet(const double p[4][3], const double x[3]) {
  const auto orient = [](const double* a, const double* b, const double* c, const double* d) {
    const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]},
                 v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]},
                 w[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
    return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
           u[2] * (v[0] * w[1] - v[1] * w[0]);
  };
  const double s = orient(p[0], p[1], p[2], p[3]);
  return orient(x, p[1], p[2], p[3]) * s > 0 && orient(p[0], x, p[2], p[3]) * s > 0 &&
         orient(p[0], p[1], x, p[3]) * s > 0 && orient(p[0], p[1], p[2], x) * s > 0;
}

double pointTriangleDistance(const double a[3], const double b[3], const double c[3], const double x[3]) {
  // The projection on the plane when it falls inside (barycentrics by the 2x2 normal equations), else
  // the least of the three edges.
  double u[3], v[3], w[3];
  for (int k = 0; k < 3; ++k) u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = x[k] - a[k];
  const auto dot = [](const double* p, const double* q) { return p[0] * q[0] + p[1] * q[1] + p[2] * q[2]; };
  const double uu = dot(u, u), uv = dot(u, v), vv = dot(v, v), wu = dot(w, u), wv = dot(w, v);
  const double det = uu * vv - uv * uv;
  const double s = (vv * wu - uv * wv) / det, t = (uu * wv - uv * wu) / det;
  if (s >= 0 && t >= 0 && s + t <= 1) {
    double d = 0;
    for (int k = 0; k < 3; ++k) d += std::pow(w[k] - u[k] * s - v[k] * t, 2);
    return std::sqrt(d);
  }
  return std::sqrt(std::min(
      {pointSegmentDistance2(x, a, b), pointSegmentDistance2(x, b, c), pointSegmentDistance2(x, c, a)}));
}

// Random tetrahedra (a soup in [-3, 3]^3) against spheres, capsules, one- and two-sided planes,
// turned boxes and a sampled ball: every pair in both orders, BVH vs every cell bit for bit, swap rule, kCpuSimd, the
// contact invariants; and for the spheres, a contact exactly where the tetrahedron is within the
// radius of the centre (double-precision distance, away from a 1e-3 band).
TEST(GeometryQueriesMeshStatic, TetrahedraRandomAgainstPrimitives) {
  std::mt19937 rng(1726);
  Batch b;
  const uint32_t tet = addRandomSoup(b, rng, GeometryType::kTetrahedralMesh, 900, 3.0f, 0.5f);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<uint32_t> others;
  for (int k = 0; k < 6; ++k) others.push_back(b.add(ball(u(rng), u(rng), u(rng), 0.8f)));
  for (int k = 0; k < 4; ++k)
    others.push_back(b.add(Geometry::capsule(v3(u(rng), u(rng), u(rng)), v3(u(rng), u(rng), u(rng)), 0.4f)));
  others.push_back(b.add(Geometry::plane(v3(0, 0.5f, 0), v3(0.6f, 0.8f, 0), false)));
  others.push_back(b.add(Geometry::plane(v3(0.2f, 0, 0), v3(0, 0.6f, 0.8f), true)));
  for (int k = 0; k < 4; ++k) {
    const float qx = u(rng), qy = u(rng), qz = u(rng), qw = u(rng);
    const float n = std::sqrt(qx * qx + qy * qy + qz * qz + qw * qw);
    others.push_back(b.add(Geometry::orientedBox(
        v3(u(rng), u(rng), u(rng)), Float4{qx / n, qy / n, qz / n, qw / n}, v3(0.9f, 0.5f, 0.7f))));
  }
  // A ball of radius 1.5 as a sampled distance field.
  others.push_back(b.addGrid(v3(-2.5f, -2.5f, -2.5f), 0.25f, 21, [](float x, float y, float z) {
    return std::sqrt(x * x + y * y + z * z) - 1.5f;
  }));
  for (uint32_t o : others) {
    b.query(tet, o);
    b.query(o, tet);
  }
  auto counts = b.run(Backend::kCpuScalar, 200000);
  ASSERT_TRUE(counts.ok()) << counts.message();
  expectSwappedPairs(b, 3);
  expectBruteForceAndSimdEqual(b, counts->contacts, 200000, 2e-5f);
  const Geometry& g = b.geometries[tet];
  int checked = 0, hits = 0;
  for (uint32_t q = 0; q < 12; q += 2) {  // the spheres
    const Geometry& s = b.geometries[b.queries[q].b];
    const double x[3] = {s.p0.x, s.p0.y, s.p0.z};
    std::vector<uint32_t> got;
    for (uint32_t k = 0; k < b.ranges[q].count; ++k) {
      // A vertex element names the vertex: in a soup, vertex v belongs to tetrahedron v / 4.
      const ContactElement& e = b.elementsA[b.ranges[q].first + k];
      got.push_back(e.type == ContactElementType::kPointIndexDirection ? e.index / 4 : e.index);
    }
    for (uint32_t c = 0; c < 900; ++c) {
      double p[4][3];
      for (uint32_t k = 0; k < 4; ++k) {
        const Float4& v = b.points[g.first + b.cells[static_cast<size_t>(g.p2.x) + c * 4u + k]];
        p[k][0] = v.x, p[k][1] = v.y, p[k][2] = v.z;
      }
      double d = insideTet(p, x) ? 0.0 : 1e300;
      if (d > 0) {
        for (uint32_t f = 0; f < 4; ++f) {
          const double* fa = p[f == 0 ? 1 : 0];
          const double* fb = p[f <= 1 ? 2 : 1];
          const double* fc = p[f <= 2 ? 3 : 2];
          d = std::min(d, pointTriangleDistance(fa, fb, fc, x));
        }
      }
      if (std::abs(d - double(s.p0.w)) < 1e-3) continue;
      ++checked;
      const bool ours = std::find(got.begin(), got.end(), c) != got.end();
      EXPECT_EQ(ours, d < double(s.p0.w))
          << "sphere query " << q << " tetrahedron " << c << " distance " << d;
      hits += d < double(s.p0.w);
    }
  }
  EXPECT_GT(hits, 30);
  std::printf("tetrahedra vs spheres: %d pairs checked against the double distance, %d in contact\n", checked,
              hits);
}

TEST(GeometryQueriesMeshStatic, TetrahedronBadInputAndPairsStillRefused) {
  {
    Batch b;
    const uint32_t t = b.addMesh(GeometryType::kTetrahedralMesh,
                                 {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(1, 1, 0)}, {0, 1, 2, 3});
    b.query(t, b.add(ball(0, 0, 0, 1)));
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "tetrahedron 0 (cells[0, 4)) has zero volume");
  }
  {
    Batch b;
    const uint32_t t = addTet(b);
    b.query(t, b.add(ball(0, 0, 0, 1)));
    b.points[2].y = std::nanf("");
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "points[2].y is nan");
  }
  {
    Batch b;
    b.query(addTet(b), b.add(ball(0, 0, 0, 1)));
    b.queries[0].method = GeometryMethod::kContinuous;
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument,
                           "queries[0].method is kContinuous: sphere vs tetrahedral mesh");
  }
}

// The query file carries a line mesh's thickness (and a surface mesh's): a static line-line query and
// a tetrahedron against a box read, run, written and read back with the same contacts bit for bit.
TEST(GeometryQueriesMeshStatic, QueryFileCarriesThickness) {
  const char* kFile = R"({
  "format": "vkcollide-queries", "version": 1,
  "points": [[0, 0, 0], [2, 0, 0], [1, -1, 0.15], [1, 1, 0.15], [0, 0, 0], [4, 0, 0], [0, 4, 0], [0, 0, 4]],
  "cells": [0, 1, 0, 1, 0, 1, 2, 3],
  "geometries": [
    {"name": "x", "type": "lineMesh", "count": 2, "cellCount": 1, "thickness": 0.1},
    {"name": "y", "type": "lineMesh", "first": 2, "count": 2, "cellFirst": 2, "cellCount": 1, "thickness": 0.1},
    {"name": "tet", "type": "tetrahedralMesh", "first": 4, "count": 4, "cellFirst": 4, "cellCount": 1},
    {"name": "box", "type": "box", "centre": [1, 1, -0.4], "rotation": [0, 0, 0, 1], "halfExtents": [0.5, 0.5, 0.5]},
    {"name": "skin", "type": "surfaceMesh", "first": 4, "count": 4, "cellFirst": 4, "cellCount": 1, "thickness": 0.25}
  ],
  "queries": [{"a": "x", "b": "y"}, {"a": "box", "b": "tet"}]
})";
  Result<GeometryQueryFile> f = parseGeometryQueries(kFile);
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ(f->geometries[0].p2.w, 0.1f);
  EXPECT_EQ(f->geometries[4].p2.w, 0.25f);
  const std::string written = writeGeometryQueries(*f);
  EXPECT_NE(written.find("\"thickness\""), std::string::npos);
  Result<GeometryQueryFile> back = parseGeometryQueries(written);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->geometries[0].p2.w, 0.1f);
  EXPECT_EQ(back->geometries[4].p2.w, 0.25f);
  std::vector<ContactElement> a(4), b(4), a2(4), b2(4);
  std::vector<ContactRange> ranges(2), ranges2(2);
  ASSERT_TRUE(queryGeometriesCpu(f->input(), {a, b, ranges}, Backend::kCpuScalar));
  ASSERT_TRUE(queryGeometriesCpu(back->input(), {a2, b2, ranges2}, Backend::kCpuScalar));
  ASSERT_EQ(ranges[0].count, 1u);
  ASSERT_EQ(ranges[1].count, 1u);
  EXPECT_NEAR(a[0].point.w, 0.05f, 1e-6f);
  EXPECT_NEAR(a[1].point.w, 0.1f, 1e-6f);
  for (size_t k = 0; k < 2; ++k) EXPECT_TRUE(bitwiseEqual(a[k], a2[k]) && bitwiseEqual(b[k], b2[k])) << k;
}

INSTANTIATE_TEST_SUITE_P(Backends, GeometryQueriesMeshStaticBackends, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test::geometry
