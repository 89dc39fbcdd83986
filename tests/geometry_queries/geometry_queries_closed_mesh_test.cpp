// Closed surface mesh vs point set (issue 17, the seed's ClosedSurfaceMeshToMeshCD vertex pass,
// src/cpu/geometry_queries_mesh.cpp): a cube and an icosphere at known depths, points near edges and
// vertices, the search radius, random points on convex and non-convex closed meshes against a
// winding-number inside test and every triangle's closest point, BVH vs brute force, the swap rule,
// and bad input (an open mesh or an inconsistently oriented one declared closed). On every backend
// (kVulkan: shaders/shared/geometry_queries_closed_mesh_slot.h in the mesh and mesh-mesh families):
// point sets and the vertex pass against surface and line meshes, deep points and ties, kCpuScalar's
// contacts bit for bit (lavapipe), bad input refused alike; the stage: 100 reruns bitwise identical,
// fixed dispatch counts.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numbers>
#include <random>

#include "geometry_queries/geometry_queries_mesh_test_support.h"
#include "shared/geometry_queries_closed_mesh.h"
#include "support/vulkan_fixture.h"

namespace vkc::test::geometry {
namespace {

struct Mesh {
  std::vector<Float4> vertices;
  std::vector<uint32_t> cells;
};

// The cube [0, 1]^3, 12 triangles, normals outward (faces -x, +x, -y, +y, -z, +z: triangles 2f, 2f + 1).
Mesh cube() {
  Mesh m;
  for (uint32_t i = 0; i < 8; ++i) {
    m.vertices.push_back(
        v3(static_cast<float>(i & 1u), static_cast<float>((i >> 1) & 1u), static_cast<float>((i >> 2) & 1u)));
  }
  m.cells = {0, 4, 6, 0, 6, 2,   // -x
             1, 3, 7, 1, 7, 5,   // +x
             0, 1, 5, 0, 5, 4,   // -y
             2, 6, 7, 2, 7, 3,   // +y
             0, 2, 3, 0, 3, 1,   // -z
             4, 5, 7, 4, 7, 6};  // +z
  return m;
}

// An icosahedron subdivided `levels` times, vertices on the sphere of radius r at centre c; with
// `bumps`, each vertex's radius scaled by a random factor in [0.6, 1.4] (closed, not convex).
Mesh icosphere(uint32_t levels, float r, Float4 c, uint32_t bumps = 0) {
  const float t = (1.0f + std::sqrt(5.0f)) / 2.0f;
  std::vector<std::array<float, 3>> v = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0},
                                         {0, -1, t}, {0, 1, t}, {0, -1, -t}, {0, 1, -t},
                                         {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
  std::vector<uint32_t> f = {0, 11, 5,  0, 5,  1, 0, 1, 7, 0, 7,  10, 0, 10, 11, 1, 5, 9, 5, 11,
                             4, 11, 10, 2, 10, 7, 6, 7, 1, 8, 3,  9,  4, 3,  4,  2, 3, 2, 6, 3,
                             6, 8,  3,  8, 9,  4, 9, 5, 2, 4, 11, 6,  2, 10, 8,  6, 7, 9, 8, 1};
  for (uint32_t l = 0; l < levels; ++l) {
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> mid;
    const auto middle = [&](uint32_t a, uint32_t b) {
      const auto key = std::minmax(a, b);
      auto it = mid.find(key);
      if (it != mid.end()) return it->second;
      v.push_back({(v[a][0] + v[b][0]) / 2, (v[a][1] + v[b][1]) / 2, (v[a][2] + v[b][2]) / 2});
      return mid[key] = static_cast<uint32_t>(v.size() - 1);
    };
    std::vector<uint32_t> g;
    for (size_t i = 0; i < f.size(); i += 3) {
      const uint32_t a = f[i], b = f[i + 1], d = f[i + 2];
      const uint32_t ab = middle(a, b), bd = middle(b, d), da = middle(d, a);
      g.insert(g.end(), {a, ab, da, b, bd, ab, d, da, bd, ab, bd, da});
    }
    f = g;
  }
  std::mt19937 rng(bumps);
  std::uniform_real_distribution<float> scale(0.6f, 1.4f);
  Mesh m;
  for (const auto& p : v) {
    const float len = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    const float s = r / len * (bumps != 0 ? scale(rng) : 1.0f);
    m.vertices.push_back(v3(c.x + p[0] * s, c.y + p[1] * s, c.z + p[2] * s));
  }
  m.cells = f;
  return m;
}

// The winding number of a closed mesh around x (solid angles, Van Oosterom and Strackee): 1 inside,
// 0 outside.
double winding(const Mesh& m, const Float4& x) {
  double sum = 0.0;
  for (size_t i = 0; i < m.cells.size(); i += 3) {
    double a[3][3];
    for (int k = 0; k < 3; ++k) {
      const Float4& p = m.vertices[m.cells[i + k]];
      a[k][0] = p.x - x.x;
      a[k][1] = p.y - x.y;
      a[k][2] = p.z - x.z;
    }
    const auto len = [](const double* u) { return std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]); };
    const auto dot = [](const double* u, const double* w) { return u[0] * w[0] + u[1] * w[1] + u[2] * w[2]; };
    const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                       a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                       a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    const double la = len(a[0]), lb = len(a[1]), lc = len(a[2]);
    const double den = la * lb * lc + dot(a[0], a[1]) * lc + dot(a[0], a[2]) * lb + dot(a[1], a[2]) * la;
    sum += 2.0 * std::atan2(det, den);
  }
  return sum / (4.0 * std::numbers::pi);
}

// The distance from x to the mesh's surface (every triangle, in double).
double surfaceDistance(const Mesh& m, const Float4& x) {
  double best = 1e300;
  for (size_t i = 0; i < m.cells.size(); i += 3) {
    const Float4 &a = m.vertices[m.cells[i]], &b = m.vertices[m.cells[i + 1]],
                 &c = m.vertices[m.cells[i + 2]];
    const double p[3] = {x.x, x.y, x.z}, A[3] = {a.x, a.y, a.z}, B[3] = {b.x, b.y, b.z},
                 C[3] = {c.x, c.y, c.z};
    const auto sub = [](const double* u, const double* w, double* o) {
      for (int k = 0; k < 3; ++k) o[k] = u[k] - w[k];
    };
    const auto dot = [](const double* u, const double* w) { return u[0] * w[0] + u[1] * w[1] + u[2] * w[2]; };
    double ab[3], ac[3], ap[3];
    sub(B, A, ab);
    sub(C, A, ac);
    sub(p, A, ap);
    // Minimize over the triangle by its face (if the projection is inside) and its three edges.
    const double d00 = dot(ab, ab), d01 = dot(ab, ac), d11 = dot(ac, ac), d20 = dot(ap, ab),
                 d21 = dot(ap, ac);
    const double den = d00 * d11 - d01 * d01;
    const double v = (d11 * d20 - d01 * d21) / den, w = (d00 * d21 - d01 * d20) / den;
    if (v >= 0 && w >= 0 && v + w <= 1) {
      double q[3];
      for (int k = 0; k < 3; ++k) q[k] = A[k] + v * ab[k] + w * ac[k] - p[k];
      best = std::min(best, std::sqrt(dot(q, q)));
    }
    const double* ends[3][2] = {{A, B}, {B, C}, {C, A}};
    for (auto& e : ends) {
      double u[3], pu[3];
      sub(e[1], e[0], u);
      sub(p, e[0], pu);
      const double s = std::clamp(dot(pu, u) / dot(u, u), 0.0, 1.0);
      double q[3];
      for (int k = 0; k < 3; ++k) q[k] = e[0][k] + s * u[k] - p[k];
      best = std::min(best, std::sqrt(dot(q, q)));
    }
  }
  return best;
}

TEST(GeometryQueriesClosedMesh, CubeInsidePointsMoveToTheNearestFace) {
  const Mesh m = cube();
  for (Backend backend : kCpuBackends) {
    Batch b;
    b.points = m.vertices;
    b.cells = m.cells;
    const uint32_t mesh = b.add(Geometry::closedSurfaceMesh(0, 8, 0, 12, 0.0f));
    // Inside: 0.2 above the bottom face; 0.1 inside the +x face; the centre (0.5 from every face).
    // Outside: beyond a face, an edge and a corner; on a face (depth 0): no contact.
    const uint32_t set =
        b.addPoints({v3(0.5f, 0.4f, 0.2f), v3(0.9f, 0.5f, 0.45f), v3(0.5f, 0.5f, 0.5f), v3(0.5f, 0.5f, 1.3f),
                     v3(1.1f, 1.2f, 0.5f), v3(-0.1f, -0.1f, -0.1f), v3(0.5f, 0.5f, 0.0f)});
    b.query(set, mesh);
    b.query(mesh, set);
    auto counts = b.run(backend);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(b.ranges[0].count, 3u);
    expectElement(b.elementsA[0], ContactElementType::kPointIndexDirection,
                  {v3(0.5f, 0.4f, 0.2f), v3(0, 0, -1), 0.2f}, 1e-6f, "above the bottom");
    EXPECT_EQ(b.elementsA[0].index, 0u);
    EXPECT_EQ(contactCellType(b.elementsB[0]), CellType::kTriangle);
    EXPECT_TRUE(b.elementsB[0].index == 8u || b.elementsB[0].index == 9u);  // the -z face
    expectElement(b.elementsA[1], ContactElementType::kPointIndexDirection,
                  {v3(0.9f, 0.5f, 0.45f), v3(1, 0, 0), 0.1f}, 1e-6f, "inside +x");
    EXPECT_TRUE(b.elementsB[1].index == 2u || b.elementsB[1].index == 3u);
    EXPECT_EQ(b.elementsA[2].index, 2u);
    EXPECT_NEAR(b.elementsA[2].point.w, 0.5f, 1e-6f);
    for (uint32_t k = 0; k < 3; ++k) expectContactInvariants(b.elementsA[k], b.elementsB[k], 1e-6f);
    expectSwappedPairs(b, 2);
  }
}

// Points just inside, near an edge or a corner: the closest feature is an edge or a vertex (the
// pseudonormal decides); the depth is the distance to it.
TEST(GeometryQueriesClosedMesh, NearEdgesAndVerticesThePseudonormalDecides) {
  const Mesh m = cube();
  Batch b;
  b.points = m.vertices;
  b.cells = m.cells;
  const uint32_t mesh = b.add(Geometry::closedSurfaceMesh(0, 8, 0, 12, 0.0f));
  // On the diagonal plane of the edge x = 1, y = 1 but inside: equidistant from two faces (the closest
  // point is on a face; the face's feature is the edge only at depth 0). Points outside beyond the
  // edge and the vertex: closest features an edge and a vertex, pseudonormals outward: no contact.
  const uint32_t set =
      b.addPoints({v3(0.95f, 0.95f, 0.5f), v3(1.05f, 1.05f, 0.5f), v3(1.01f, 1.2f, 1.03f),
                   v3(1.0f + 1e-3f, 1.0f + 1e-3f, 1.0f + 1e-3f), v3(0.5f, 1.0f + 1e-4f, 1.0f)});
  b.query(set, mesh);
  for (Backend backend : kCpuBackends) {
    auto counts = b.run(backend);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(b.ranges[0].count, 1u);
    EXPECT_EQ(b.elementsA[0].index, 0u);
    EXPECT_NEAR(b.elementsA[0].point.w, 0.05f, 1e-6f);
  }
  // A sharp wedge (a tetrahedron with a 2-degree dihedral angle at the edge x = 0, z = 0) and a point
  // outside near that edge, on the side where one face's own normal would call it inside: the edge's
  // pseudonormal says outside.
  Batch w;
  const float h = 0.035f;  // the apex height over 1: tan(2 degrees)
  const uint32_t wedge = w.add(Geometry::closedSurfaceMesh(0, 4, 0, 4, 0.0f));
  w.points = {v3(0, -1, 0), v3(0, 1, 0), v3(1, 0, 0), v3(1, 0, h)};
  // Bottom (z = 0), top (z = h x), the two far faces; consistently oriented (validation checks it),
  // flipped all together when the bottom's normal points up: outward.
  w.cells = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
  {
    const Float4 a = w.points[0], bb = w.points[2], c = w.points[1];
    const float nz = (bb.x - a.x) * (c.y - a.y) - (bb.y - a.y) * (c.x - a.x);
    if (nz > 0) {
      for (size_t i = 0; i < w.cells.size(); i += 3) std::swap(w.cells[i + 1], w.cells[i + 2]);
    }
  }
  // Outside, beyond the edge x = 0 (its closest point on the edge): slightly below the bottom's
  // plane; slightly above it, where the bottom's own normal (-z) would say inside and the top's
  // outside (the seed's pseudonormal problem). Inside: 0.001 above the bottom at x = 0.5.
  const uint32_t near =
      w.addPoints({v3(-0.01f, 0.0f, -0.0002f), v3(-0.01f, 0.0f, 0.0005f), v3(0.5f, 0.0f, 0.001f)});
  w.query(near, wedge);
  for (Backend backend : kCpuBackends) {
    auto counts = w.run(backend);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(w.ranges[0].count, 1u) << "only the point inside the wedge";
    EXPECT_EQ(w.elementsA[0].index, 2u);
  }
}

// Random points against closed meshes (the cube, an icosphere, a bumpy icosphere: not convex): a
// contact exactly for the points inside (winding number, points within 1e-4 of the surface aside),
// its depth the distance to the surface; with a search radius, only those no deeper than it; the
// BVH's contacts equal every cell's (brute force) bit for bit; both orders swap exactly.
TEST(GeometryQueriesClosedMesh, RandomPointsAgainstWindingNumbersAndBruteForce) {
  const std::vector<Mesh> meshes = {cube(), icosphere(2, 0.6f, v3(0.5f, 0.5f, 0.5f)),
                                    icosphere(2, 0.6f, v3(0.5f, 0.5f, 0.5f), 7)};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-0.4f, 1.4f);
  for (size_t mi = 0; mi < meshes.size(); ++mi) {
    const Mesh& m = meshes[mi];
    for (float radius : {0.0f, 0.15f}) {
      Batch b;
      b.points = m.vertices;
      b.cells = m.cells;
      const uint32_t mesh = b.add(Geometry::closedSurfaceMesh(
          0, static_cast<uint32_t>(m.vertices.size()), 0, static_cast<uint32_t>(m.cells.size() / 3), radius));
      std::vector<Float4> pts;
      for (int i = 0; i < 3000; ++i) pts.push_back(v3(u(rng), u(rng), u(rng)));
      const uint32_t set = b.addPoints(pts);
      b.query(set, mesh);
      b.query(mesh, set);
      auto counts = b.run(Backend::kCpuScalar, 10000);
      ASSERT_TRUE(counts.ok()) << counts.message();
      expectSwappedPairs(b, 100);
      // The oracle for each point.
      uint32_t next = 0, checked = 0;
      for (uint32_t k = 0; k < pts.size(); ++k) {
        const double d = surfaceDistance(m, pts[k]);
        const bool inside = winding(m, pts[k]) > 0.5;
        const bool hit = next < b.ranges[0].count && b.elementsA[next].index == k;
        if (d > 1e-4 && !(radius > 0.0f && std::abs(d - static_cast<double>(radius)) < 1e-4)) {
          ++checked;
          ASSERT_EQ(hit, inside && (radius == 0.0f || d <= static_cast<double>(radius)))
              << "mesh " << mi << " point " << k << " d " << d;
        }
        if (hit) {
          EXPECT_NEAR(b.elementsA[next].point.w, d, 1e-5) << "mesh " << mi << " point " << k;
          expectContactInvariants(b.elementsA[next], b.elementsB[next], 2e-5f);
          ++next;
        }
      }
      EXPECT_EQ(next, b.ranges[0].count);
      EXPECT_GT(checked, 2900u);
      // Brute force: every cell through the same driver; kCpuSimd.
      expectBruteForceAndSimdEqual(b, counts->contacts, 10000, 2e-5f);
    }
  }
}

TEST(GeometryQueriesClosedMesh, BadInputNamesTheGeometry) {
  const Mesh m = cube();
  {  // Open: the last triangle missing.
    Batch b;
    b.points = m.vertices;
    b.cells = m.cells;
    const uint32_t set = b.addPoints({v3(0.5f, 0.5f, 0.5f)});
    b.query(set, b.add(Geometry::closedSurfaceMesh(0, 8, 0, 11, 0.0f)));
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[1] (surface mesh) is declared closed");
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "no opposite triangle (an open boundary edge)");
  }
  {  // iMSTK's ClosedSurfaceMeshToMeshCD point-set tests (VertexToTriangle, VertexToEdge,
     // VertexToVertex) run on one open triangle, which iMSTK treats as one-sided: declared closed here
     // it is refused (an open surface has no inside).
    Batch b;
    b.points = {v3(0.5f, 0.0f, -0.5f), v3(-0.5f, 0.0f, -0.5f), v3(0.0f, 0.0f, 0.5f)};
    b.cells = {0, 1, 2};
    const uint32_t mesh = b.add(Geometry::closedSurfaceMesh(0, 3, 0, 1, 0.0f));
    b.query(mesh, b.addPoints({v3(0.0f, -1.0f, 0.0f)}));
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0] (surface mesh) is declared closed");
  }
  {  // One triangle flipped.
    Batch b;
    b.points = m.vertices;
    b.cells = m.cells;
    std::swap(b.cells[1], b.cells[2]);
    const uint32_t set = b.addPoints({v3(0.5f, 0.5f, 0.5f)});
    b.query(set, b.add(Geometry::closedSurfaceMesh(0, 8, 0, 12, 0.0f)));
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "in the same direction");
  }
  {  // A negative search radius; NaN.
    for (float r : {-1.0f, std::nanf("")}) {
      Batch b;
      b.points = m.vertices;
      b.cells = m.cells;
      const uint32_t set = b.addPoints({v3(0.5f, 0.5f, 0.5f)});
      b.query(set, b.add(Geometry::closedSurfaceMesh(0, 8, 0, 12, r)));
      expectRefusedUnwritten(b, ErrorCode::kInvalidArgument,
                             "geometries[1] (surface mesh).p2.z (search radius)");
    }
  }
  {  // Not declared closed: the pair is refused; the flag on a line mesh is refused.
    Batch b;
    b.points = m.vertices;
    b.cells = m.cells;
    const uint32_t set = b.addPoints({v3(0.5f, 0.5f, 0.5f)});
    b.query(set, b.add(Geometry::surfaceMesh(0, 8, 0, 12)));
    expectRefusedUnwritten(b, ErrorCode::kUnsupported,
                           "queries[0]: point set vs surface mesh needs a closed");
    Batch l;
    l.points = {v3(0, 0, 0), v3(1, 0, 0)};
    l.cells = {0, 1};
    Geometry g = Geometry::lineMesh(0, 2, 0, 1);
    g.flags = kGeometryFlagClosed;
    const uint32_t sphere = l.add(Geometry::sphere(Float4{0, 0, 0, 1}));
    l.query(sphere, l.add(g));
    expectRefusedUnwritten(l, ErrorCode::kInvalidArgument, "a mesh takes no flags but a surface mesh's");
  }
}

// --- Every backend: kCpuScalar's contacts (bit for bit on the CPU backends and lavapipe).

class GeometryQueriesClosedMeshConformance : public MeshBackendTest {};

// Closed mesh m as a geometry of b (its vertices and cells appended), search radius `radius`.
uint32_t addClosed(Batch& b, const Mesh& m, float radius) {
  const uint32_t g = b.addMesh(GeometryType::kSurfaceMesh, m.vertices, m.cells);
  b.geometries[g].flags |= kGeometryFlagClosed;
  b.geometries[g].p2.z = radius;
  return g;
}

// Mesh m moved by d.
Mesh moved(Mesh m, Float4 d) {
  for (Float4& p : m.vertices) p = v3(p.x + d.x, p.y + d.y, p.z + d.z);
  return m;
}

// Point sets against the cube, an icosphere and a bumpy one (without and with a search radius), in
// both orders, a primitive pair between them: random points, deep points (the centres: every face
// of the cube at the same depth, the tie rule picks the first triangle), points inside equidistant
// from two faces, points exactly on a face, an edge and a vertex (depth 0: no contact), points just
// outside an edge and a vertex (the pseudonormal decides).
TEST_P(GeometryQueriesClosedMeshConformance, PointSetsMatchCpuScalar) {
  const std::vector<Mesh> meshes = {cube(), icosphere(2, 0.6f, v3(0.5f, 0.5f, 0.5f)),
                                    icosphere(2, 0.6f, v3(0.5f, 0.5f, 0.5f), 7)};
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(-0.4f, 1.4f);
  std::vector<Float4> pts = {v3(0.5f, 0.5f, 0.5f),         v3(0.9f, 0.9f, 0.5f),   v3(0.5f, 0.1f, 0.1f),
                             v3(0.5f, 0.5f, 0.0f),         v3(1.0f, 1.0f, 0.5f),   v3(1.0f, 1.0f, 1.0f),
                             v3(0.0f, 0.0f, 0.0f),         v3(1.0f, 0.5f, 0.0f),   v3(1.01f, 1.01f, 0.5f),
                             v3(1.001f, 1.001f, 1.001f),   v3(0.5f, 0.5f, 0.45f), v3(0.25f, 0.25f, 0.25f)};
  for (int i = 0; i < 300; ++i) pts.push_back(v3(u(rng), u(rng), u(rng)));
  Batch b;
  const uint32_t set = b.addPoints(pts);
  for (const Mesh& m : meshes) {
    for (float radius : {0.0f, 0.15f}) {
      const uint32_t mesh = addClosed(b, m, radius);
      b.query(set, mesh);
      b.query(b.add(Geometry::sphere({0, 0, 0, 1})), b.add(Geometry::sphere({1.5f, 0, 0, 1})));
      b.query(mesh, set);
    }
  }
  runHere(b, 4096);
  uint64_t contacts = 0;
  for (size_t q = 0; q < b.queries.size(); q += 3) contacts += b.ranges[q].count;
  EXPECT_GT(contacts, 200u);
  EXPECT_EQ(b.ranges[0].count, b.ranges[2].count);
  // The cube without a search radius: its first contacts are the deep points (the centre 0.5 deep,
  // the tie among the six faces to the first triangle holding the closest point), then the point
  // equidistant from two faces; none for the points on the surface.
  ASSERT_GE(b.ranges[0].count, 2u);
  EXPECT_EQ(b.elementsA[0].index, 0u);
  EXPECT_EQ(b.elementsA[0].point.w, 0.5f);
  EXPECT_EQ(b.elementsA[1].index, 1u);
  for (uint32_t k = 0; k < b.ranges[0].count; ++k) EXPECT_FALSE(b.elementsA[k].index >= 3u && b.elementsA[k].index <= 9u);
}

// The vertex pass against other meshes, in both orders: two overlapping closed icospheres (both
// passes, after the surface-surface candidates), a closed cube against an open jittered grid through
// it and against a soup of segments, a closed icosphere with a search radius against a line mesh, a
// closed cube against a tetrahedral mesh (no vertex pass).
TEST_P(GeometryQueriesClosedMeshConformance, MeshVertexPassMatchesCpuScalar) {
  std::mt19937 rng(13);
  Batch b;
  const uint32_t s0 = addClosed(b, icosphere(1, 0.6f, v3(0.5f, 0.5f, 0.5f), 3), 0.0f);
  const uint32_t s1 = addClosed(b, icosphere(1, 0.5f, v3(0.9f, 0.6f, 0.4f)), 0.0f);
  const uint32_t c = addClosed(b, moved(cube(), v3(-0.2f, 0.1f, 0.0f)), 0.0f);
  const uint32_t r = addClosed(b, icosphere(1, 0.7f, v3(0.4f, 0.5f, 0.5f)), 0.2f);
  const uint32_t grid = addJitteredGrid(b, rng, 8, v3(-0.5f, 0.5f, -0.5f), v3(2, 0, 0), v3(0, 0.1f, 2), 0.03f);
  const uint32_t lines = addRandomSoup(b, rng, GeometryType::kLineMesh, 60, 0.8f, 0.3f);
  const uint32_t tets = addRandomSoup(b, rng, GeometryType::kTetrahedralMesh, 20, 0.8f, 0.3f);
  for (uint32_t g : {lines, tets}) {  // the soups about the meshes' centres
    const uint32_t first = b.geometries[g].first;
    for (uint32_t k = 0; k < b.geometries[g].count; ++k) {
      Float4& p = b.points[first + k];
      p = v3(p.x + 0.5f, p.y + 0.5f, p.z + 0.5f);
    }
  }
  const auto pair = [&](uint32_t x, uint32_t y) {
    b.query(x, y);
    b.query(y, x);
  };
  pair(s0, s1);
  pair(c, grid);
  pair(c, lines);
  pair(r, lines);
  pair(c, tets);
  runHere(b, 20000);
  for (size_t q = 0; q + 1 < b.queries.size(); q += 2) EXPECT_EQ(b.ranges[q].count, b.ranges[q + 1].count);
  // The vertex pass's contacts: a vertex element on the point side.
  uint32_t vertices = 0;
  for (uint32_t k = 0; k < b.ranges[0].count; ++k) {
    vertices += b.elementsA[k].type == ContactElementType::kPointIndexDirection ||
                b.elementsB[k].type == ContactElementType::kPointIndexDirection;
  }
  EXPECT_GT(vertices, 0u);
  EXPECT_GT(b.ranges[2].count, 0u);
  EXPECT_GT(b.ranges[4].count, 0u);
}

// Bad input is refused on every backend, naming the field, nothing written.
TEST_P(GeometryQueriesClosedMeshConformance, BadInputIsRefusedAndNothingIsWritten) {
  const Mesh m = cube();
  {  // Open: the last triangle missing.
    Batch b;
    const uint32_t mesh = addClosed(b, m, 0.0f);
    b.geometries[mesh].p2.y = 11;
    b.query(b.addPoints({v3(0.5f, 0.5f, 0.5f)}), mesh);
    expectRefused(b, ErrorCode::kInvalidArgument, "no opposite triangle (an open boundary edge)");
  }
  {  // One triangle flipped, against a line mesh.
    Batch b;
    const uint32_t mesh = addClosed(b, m, 0.0f);
    std::swap(b.cells[1], b.cells[2]);
    b.query(mesh, b.addMesh(GeometryType::kLineMesh, {v3(0.5f, 0.5f, 0.5f), v3(2, 2, 2)}, {0, 1}));
    expectRefused(b, ErrorCode::kInvalidArgument, "in the same direction");
  }
  {  // A negative search radius, against a surface mesh.
    Batch b;
    const uint32_t mesh = addClosed(b, m, -1.0f);
    b.query(b.addMesh(GeometryType::kSurfaceMesh, {v3(0, 0, 0.5f), v3(2, 0, 0.5f), v3(0, 2, 0.5f)}, {0, 1, 2}),
            mesh);
    expectRefused(b, ErrorCode::kInvalidArgument, "p2.z (search radius)");
  }
  {  // Not declared closed: a point set against it has no inside.
    Batch b;
    const uint32_t mesh = b.addMesh(GeometryType::kSurfaceMesh, m.vertices, m.cells);
    b.query(b.addPoints({v3(0.5f, 0.5f, 0.5f)}), mesh);
    expectRefused(b, ErrorCode::kUnsupported, "queries[0]: point set vs surface mesh needs a closed");
  }
}

// The device's vertex pass walks the device tree with each point's search box: with a search
// radius a closed mesh of any size runs on kVulkan as on the CPU (an icosphere of 81 920 triangles,
// above the old per-point loop's 32 000, against points near its surface and random ones, and its
// vertex pass against a surface grid through it, both orders). With an unbounded radius a point may
// still visit every triangle: kVulkan takes up to kGeomClosedMeshDeviceMaxTriangles triangles (an
// icosphere of 20 480 runs there as on the CPU) and refuses a larger one (81 920) naming the query's
// side and the geometry, on either side of the query, against a point set or a mesh's vertices; the
// CPU backends run every size.
TEST_P(GeometryQueriesClosedMeshConformance, LargestClosedMeshOnTheDevice) {
  const Mesh below = icosphere(5, 0.6f, v3(0.5f, 0.5f, 0.5f));
  const Mesh above = icosphere(6, 0.6f, v3(0.5f, 0.5f, 0.5f));
  ASSERT_LE(below.cells.size() / 3, size_t{gpu::kGeomClosedMeshDeviceMaxTriangles});
  ASSERT_GT(above.cells.size() / 3, size_t{gpu::kGeomClosedMeshDeviceMaxTriangles});
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> u(-0.2f, 1.2f);
  std::vector<Float4> pts;
  for (int i = 0; i < 64; ++i) pts.push_back(v3(u(rng), u(rng), u(rng)));
  {
    Batch b;
    const uint32_t mesh = addClosed(b, below, 0.0f);
    b.query(b.addPoints(pts), mesh);
    runHere(b, 256);
    EXPECT_GT(b.ranges[0].count, 5u);
  }
  {  // 81 920 triangles with a search radius: every point on the device, and the vertex pass.
    std::vector<Float4> near = pts;
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::uniform_real_distribution<float> depth(-0.12f, 0.12f);
    for (int i = 0; i < 192; ++i) {  // within 0.12 of the sphere (the radius is 0.1: some deeper)
      const Float4 d = v3(g(rng), g(rng), g(rng));
      const float s = (0.6f + depth(rng)) / std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
      near.push_back(v3(0.5f + d.x * s, 0.5f + d.y * s, 0.5f + d.z * s));
    }
    Batch b;
    const uint32_t mesh = addClosed(b, above, 0.1f);
    const uint32_t set = b.addPoints(near);
    const uint32_t grid = addJitteredGrid(b, rng, 8, v3(-0.5f, 0.45f, -0.5f), v3(2, 0, 0), v3(0, 0.1f, 2), 0.03f);
    b.query(set, mesh);
    b.query(mesh, set);
    b.query(mesh, grid);
    b.query(grid, mesh);
    runHere(b, 40000);
    EXPECT_GT(b.ranges[0].count, 60u);
    EXPECT_EQ(b.ranges[0].count, b.ranges[1].count);
    EXPECT_GT(b.ranges[2].count, 100u);
    EXPECT_EQ(b.ranges[2].count, b.ranges[3].count);
    uint32_t vertices = 0;  // the grid's vertices inside (a vertex element on the grid's side)
    for (uint32_t k = 0; k < b.ranges[2].count; ++k) {
      vertices += b.elementsB[b.ranges[2].first + k].type == ContactElementType::kPointIndexDirection;
    }
    EXPECT_GT(vertices, 0u);
  }
  for (const bool meshFirst : {false, true}) {
    Batch b;
    const uint32_t mesh = addClosed(b, above, 0.0f);
    const uint32_t other = meshFirst ? b.addMesh(GeometryType::kLineMesh, {v3(0.5f, 0.5f, 0.5f), v3(2, 2, 2)}, {0, 1})
                                     : b.addPoints(pts);
    b.query(b.add(Geometry::sphere({0, 0, 0, 1})), b.add(Geometry::sphere({1.5f, 0, 0, 1})));
    if (meshFirst) {
      b.query(mesh, other);
    } else {
      b.query(other, mesh);
    }
    if (backend() == Backend::kVulkan) {
      expectRefused(b, ErrorCode::kUnsupported,
                    std::string("queries[1].") + (meshFirst ? "a" : "b") + ": geometries[" + std::to_string(mesh) +
                        "] is a closed surface mesh of 81920 triangles with an unbounded search radius");
    } else {
      runHere(b, 256);
      if (!meshFirst) {
        EXPECT_GT(b.ranges[1].count, 5u);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GeometryQueriesClosedMeshConformance, VKC_ALL_BACKENDS);

// --- The stage on its own (Vulkan only).

class GeometryQueryStageClosedMeshVulkan : public MeshStageVulkanTest {};

// A point set against a bumpy closed icosphere and the vertex pass of a closed icosphere against a
// line mesh.
Batch closedMeshBatch(uint32_t points) {
  std::mt19937 rng(14);
  std::uniform_real_distribution<float> u(-0.4f, 1.4f);
  Batch b;
  std::vector<Float4> pts;
  for (uint32_t i = 0; i < points; ++i) pts.push_back(v3(u(rng), u(rng), u(rng)));
  const uint32_t bumpy = addClosed(b, icosphere(2, 0.6f, v3(0.5f, 0.5f, 0.5f), 7), 0.0f);
  b.query(b.addPoints(pts), bumpy);
  const uint32_t shell = addClosed(b, icosphere(1, 0.6f, v3(0.5f, 0.5f, 0.5f)), 0.0f);
  b.query(shell, addRandomSoup(b, rng, GeometryType::kLineMesh, 100, 1.0f, 0.3f));
  return b;
}

TEST_F(GeometryQueryStageClosedMeshVulkan, HundredRerunsAreBitwiseIdentical) {
  expectHundredRerunsIdentical(closedMeshBatch(500),
                               {.maxQueries = 8, .maxGeometries = 8, .maxPoints = 8192, .maxContacts = 4096,
                                .maxSlots = 100000, .maxCells = 8192, .maxCandidates = 4000},
                               50);
}

// Point sets of 10, 1000 and 20000 points against a closed mesh: the same dispatches and barriers
// (recorded, not run): the device tree's GATHER, its build (18 passes) and the candidate passes
// COUNT, SUMS, BLOCKS, PREFIX and WRITE (24, none with X cells here), then the mesh family's COUNT
// and WRITE, SCAN and RANGES; all dependent but the first.
TEST_F(GeometryQueryStageClosedMeshVulkan, DispatchAndBarrierCountsDoNotDependOnThePoints) {
  std::mt19937 rng(15);
  std::uniform_real_distribution<float> u(-0.4f, 1.4f);
  const Mesh m = icosphere(2, 0.6f, v3(0.5f, 0.5f, 0.5f));
  std::vector<Batch> batches(3);
  const uint32_t sizes[3] = {10, 1000, 20000};
  for (int i = 0; i < 3; ++i) {
    std::vector<Float4> pts;
    for (uint32_t k = 0; k < sizes[i]; ++k) pts.push_back(v3(u(rng), u(rng), u(rng)));
    batches[i].query(batches[i].addPoints(pts), addClosed(batches[i], m, 0.0f));
  }
  const std::vector<RecordStats> stats =
      recordStats({.maxQueries = 4, .maxGeometries = 4, .maxPoints = 30000, .maxContacts = 1000,
                   .maxSlots = 100000, .maxCells = 4096},
                  {&batches[0], &batches[1], &batches[2]});
  expectFixedDispatchesGrowingWork(stats, 28u, 27u);
}

}  // namespace
}  // namespace vkc::test::geometry
