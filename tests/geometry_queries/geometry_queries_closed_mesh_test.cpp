// Closed surface mesh vs point set (issue 17, the seed's ClosedSurfaceMeshToMeshCD vertex pass,
// src/cpu/geometry_queries_mesh.cpp): a cube and an icosphere at known depths, points near edges and
// vertices, the search radius, random points on convex and non-convex closed meshes against a
// winding-number inside test and every triangle's closest point, BVH vs brute force, the swap rule,
// and bad input (an open mesh or an inconsistently oriented one declared closed).
#include <cmath>
#include <map>
#include <numbers>
#include <random>

#include "geometry_queries/geometry_queries_mesh_test_support.h"

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

}  // namespace
}  // namespace vkc::test::geometry
