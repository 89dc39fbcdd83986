// A tetrahedral mesh against a point set (the seed's TetraToPointSet, issue 17) on every backend: on
// Vulkan the mesh-mesh family's candidate pairs (point, tetrahedron) from the device tree (the
// candidate passes, shared/geometry_queries_mesh_pairs.h; X the points, each point's reach
// geomPointReach; geomMeshMeshPointTetraSlot), no longer a slot per point and tetrahedron. One body per
// backend: overlapping tetrahedra against brute force over every (point, tetrahedron), a Kuhn-split
// grid of 82 944 tetrahedra against 65 536 points (P * T above 2^32 slots: the old layout could not
// address it) against the analytic tetrahedron of each point, bad input refused; the stage on its
// own: dispatches and barriers whatever the points and tetrahedra, 100 reruns bitwise identical. The
// fixed cases and random soups of geometry_queries_mesh_backends_test.cpp run this path too.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "geometry_queries/geometry_queries_mesh_test_support.h"
#include "scene/geometry_queries_layout.h"
#include "support/vulkan_fixture.h"

namespace vkc::test::geometry {
namespace {

class GeometryQueriesTetraPoints : public MeshBackendTest {};

// `count` points uniform in [lo, hi]^3.
std::vector<Float4> randomCloud(std::mt19937& rng, uint32_t count, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<Float4> cloud(count);
  for (Float4& p : cloud) p = v3(u(rng), u(rng), u(rng));
  return cloud;
}

// The (point, tetrahedron) pairs whose barycentric test holds, by point then tetrahedron, every pair
// tried (no tree): the host's copy of the shared function.
std::vector<std::array<uint32_t, 2>> bruteForceInside(const Batch& b, uint32_t tets, uint32_t set) {
  const Geometry& m = b.geometries[tets];
  const Geometry& s = b.geometries[set];
  const auto at = [&](uint32_t i) {
    const Float4& p = b.points[i];
    return gpu::vec3(p.x, p.y, p.z);
  };
  std::vector<std::array<uint32_t, 2>> pairs;
  for (uint32_t i = 0; i < s.count; ++i) {
    const gpu::vec3 x = at(s.first + i);
    for (uint32_t c = 0; c < static_cast<uint32_t>(m.p2.y); ++c) {
      gpu::uvec4 ids(0u);
      for (uint32_t k = 0; k < 4; ++k) ids[k] = b.cells[static_cast<uint32_t>(m.p2.x) + 4 * c + k];
      gpu::GeomElement em, ep;
      if (gpu::geomTetraPoint(at(m.first + ids.x), at(m.first + ids.y), at(m.first + ids.z), at(m.first + ids.w), ids,
                              c, x, i, em, ep)) {
        pairs.push_back({i, c});
      }
    }
  }
  return pairs;
}

// Overlapping tetrahedra (a soup: a point may be inside several) against points, both orders, between
// primitive pairs: every (point, tetrahedron) of the brute force, in its order, and kCpuScalar's bits.
TEST_P(GeometryQueriesTetraPoints, OverlappingTetrahedraMatchBruteForceAndCpuScalar) {
  std::mt19937 rng(41);
  Batch b;
  b.query(b.add(Geometry::sphere({0, 0, 0, 1})), b.add(Geometry::sphere({1.5f, 0, 0, 1})));
  const uint32_t tets = addRandomSoup(b, rng, GeometryType::kTetrahedralMesh, 3000, 1.0f, 0.5f);
  const uint32_t set = b.addPoints(randomCloud(rng, 2000, -1.2f, 1.2f));
  b.query(set, tets);
  b.query(b.add(Geometry::sphere({3, 0, 0, 0.5f})), b.add(Geometry::sphere({3.4f, 0, 0, 0.5f})));
  b.query(tets, set);
  runHere(b, 60000);
  const std::vector<std::array<uint32_t, 2>> want = bruteForceInside(b, tets, set);
  ASSERT_GT(want.size(), 4000u);  // points inside several tetrahedra
  for (uint32_t q : {1u, 3u}) {
    const ContactRange r = b.ranges[q];
    ASSERT_EQ(r.count, want.size()) << "query " << q;
    const std::vector<ContactElement>& points = q == 1 ? b.elementsA : b.elementsB;
    const std::vector<ContactElement>& cells = q == 1 ? b.elementsB : b.elementsA;
    for (uint32_t k = 0; k < r.count; ++k) {
      ASSERT_EQ(points[r.first + k].index, want[k][0]) << "query " << q << " contact " << k;
      ASSERT_EQ(cells[r.first + k].index, want[k][1]) << "query " << q << " contact " << k;
      ASSERT_EQ(contactCellType(cells[r.first + k]), CellType::kTetrahedron);
    }
  }
}

// An n^3 grid of unit cubes from the origin, each split into the 6 tetrahedra of the Kuhn (Freudenthal)
// split along its diagonal: tetrahedron 6 * cube + s is the path from the cube's least corner through
// the axes in the order kKuhnOrders[s].
constexpr std::array<std::array<uint32_t, 3>, 6> kKuhnOrders = {
    {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};

uint32_t addKuhnGrid(Batch& b, uint32_t n) {
  std::vector<Float4> vertices;
  for (uint32_t k = 0; k <= n; ++k)
    for (uint32_t j = 0; j <= n; ++j)
      for (uint32_t i = 0; i <= n; ++i)
        vertices.push_back(v3(static_cast<float>(i), static_cast<float>(j), static_cast<float>(k)));
  const auto vertex = [&](std::array<uint32_t, 3> c) { return (c[2] * (n + 1) + c[1]) * (n + 1) + c[0]; };
  std::vector<uint32_t> cells;
  for (uint32_t k = 0; k < n; ++k) {
    for (uint32_t j = 0; j < n; ++j) {
      for (uint32_t i = 0; i < n; ++i) {
        for (const std::array<uint32_t, 3>& order : kKuhnOrders) {
          std::array<uint32_t, 3> c = {i, j, k};
          cells.push_back(vertex(c));
          for (uint32_t axis : order) {
            ++c[axis];
            cells.push_back(vertex(c));
          }
        }
      }
    }
  }
  return b.addMesh(GeometryType::kTetrahedralMesh, vertices, cells);
}

// The tetrahedron of the Kuhn grid holding x (its fractions within the cube strictly ordered): the
// order of the axes by decreasing fraction. UINT32_MAX when x is within `band` of a face.
uint32_t kuhnTetrahedron(Float4 x, uint32_t n, float band) {
  const float p[3] = {x.x, x.y, x.z};
  uint32_t cube[3];
  float f[3];
  for (int a = 0; a < 3; ++a) {
    cube[a] = std::min(static_cast<uint32_t>(p[a]), n - 1);
    f[a] = p[a] - static_cast<float>(cube[a]);
    if (f[a] < band || f[a] > 1.0f - band) return UINT32_MAX;
  }
  if (std::abs(f[0] - f[1]) < band || std::abs(f[1] - f[2]) < band || std::abs(f[0] - f[2]) < band) return UINT32_MAX;
  std::array<uint32_t, 3> order = {0, 1, 2};
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return f[a] > f[b]; });
  const uint32_t s = static_cast<uint32_t>(std::find(kKuhnOrders.begin(), kKuhnOrders.end(), order) - kKuhnOrders.begin());
  return 6 * ((cube[2] * n + cube[1]) * n + cube[0]) + s;
}

// 82 944 tetrahedra filling a 24^3 box against 65 536 points in it: P * T = 5.4e9 slots, past the
// 2^32 - 1 that a slot per (point, tetrahedron) needs and a stage can hold (maxSlots), so the old
// layout refused it on Vulkan. Each point away from the faces is in the tetrahedron its fractions'
// order names, once; kCpuScalar's contacts bit for bit.
TEST_P(GeometryQueriesTetraPoints, KuhnGridOfEightyThousandTetrahedraAgainstSixtyFiveThousandPoints) {
  constexpr uint32_t kN = 24, kPoints = 65536;
  std::mt19937 rng(42);
  Batch b;
  const uint32_t tets = addKuhnGrid(b, kN);
  const uint32_t set = b.addPoints(randomCloud(rng, kPoints, 0.0f, static_cast<float>(kN)));
  b.query(tets, set);
  EXPECT_GT(detail::geometrySlotLayout(b.geometries, b.queries, 0).slotCount, uint64_t{UINT32_MAX});
  auto counts = run(b, 2 * kPoints);
  ASSERT_TRUE(counts.ok()) << counts.message();
  EXPECT_EQ(counts->candidatesMissing, 0u);
  const ContactRange r = b.ranges[0];
  std::vector<uint32_t> hits(kPoints, 0), cellOf(kPoints, UINT32_MAX);
  for (uint32_t k = 0; k < r.count; ++k) {
    const uint32_t i = b.elementsB[r.first + k].index;
    ASSERT_LT(i, kPoints);
    ++hits[i];
    cellOf[i] = b.elementsA[r.first + k].index;
  }
  uint32_t checked = 0;
  for (uint32_t i = 0; i < kPoints; ++i) {
    const uint32_t want = kuhnTetrahedron(b.points[b.geometries[set].first + i], kN, 1e-4f);
    if (want == UINT32_MAX) continue;
    ++checked;
    ASSERT_EQ(hits[i], 1u) << "point " << i;
    ASSERT_EQ(cellOf[i], want) << "point " << i;
  }
  EXPECT_GT(checked, kPoints * 99 / 100);
  expectSameAsCpuScalar(b, 2 * kPoints);
}

// Bad input of a tetrahedral mesh against a point set is refused naming the field, nothing written.
TEST_P(GeometryQueriesTetraPoints, BadInputIsRefusedAndNothingIsWritten) {
  const auto batch = [] {
    Batch b;
    const uint32_t tets = b.addMesh(GeometryType::kTetrahedralMesh,
                                    {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1), v3(1, 1, 1)},
                                    {0, 1, 2, 3, 1, 2, 3, 4});
    b.query(b.addPoints({v3(0.1f, 0.1f, 0.1f), v3(0.5f, 0.5f, 0.4f)}), tets);
    return b;
  };
  {
    Batch b = batch();
    b.cells[6] = 9;  // tetrahedron 1, corner 2
    expectRefused(b, ErrorCode::kInvalidArgument, "cells[6] (tetrahedron 1, corner 2) is 9: the mesh has 5 vertices");
  }
  {
    Batch b = batch();
    b.points[4] = v3(0.5f, 0.5f, 0);  // tetrahedron 1's corner 3 in the plane x + y + z = 1 of the others
    expectRefused(b, ErrorCode::kInvalidArgument, "tetrahedron 1 (cells[4, 8)) has zero volume");
  }
  {
    Batch b = batch();
    b.points[6].z = std::nanf("");  // the second point of the set
    expectRefused(b, ErrorCode::kInvalidArgument, "points[6]");
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GeometryQueriesTetraPoints, VKC_ALL_BACKENDS);

// --- The stage on its own (Vulkan only).

class GeometryQueryStageTetraPointsVulkan : public MeshStageVulkanTest {};

// A tetrahedral mesh against a point set, 10 points and 8 tetrahedra, 1 000 and 1 000, 20 000 and
// 20 000: the same dispatches (the candidate passes, the tree's build, SPANS and the mesh-mesh
// family's span dispatches) and barriers.
TEST_F(GeometryQueryStageTetraPointsVulkan, DispatchAndBarrierCountsDoNotDependOnThePointsOrTetrahedra) {
  std::mt19937 rng(43);
  std::vector<Batch> batches(3);
  const uint32_t sizes[3][2] = {{10, 8}, {1000, 1000}, {20000, 20000}};
  for (int i = 0; i < 3; ++i) {
    const uint32_t tets = addRandomSoup(batches[i], rng, GeometryType::kTetrahedralMesh, sizes[i][1], 1.0f, 0.2f);
    batches[i].query(batches[i].addPoints(randomCloud(rng, sizes[i][0], -1.0f, 1.0f)), tets);
  }
  const std::vector<RecordStats> stats =
      recordStats({.maxQueries = 4, .maxGeometries = 4, .maxPoints = 120000, .maxContacts = 1000,
                   .maxSlots = 200000, .maxCells = 80000, .maxCandidates = 100000},
                  {&batches[0], &batches[1], &batches[2]});
  expectFixedDispatchesGrowingWork(stats, 29u, 28u);  // as a mesh-mesh record's
  for (const RecordStats& st : stats) EXPECT_EQ(st.indirectDispatches, 2u);  // the family's COUNT and WRITE
}

TEST_F(GeometryQueryStageTetraPointsVulkan, HundredRerunsAreBitwiseIdentical) {
  std::mt19937 rng(44);
  Batch b;
  const uint32_t tets = addRandomSoup(b, rng, GeometryType::kTetrahedralMesh, 200, 1.0f, 0.4f);
  const uint32_t set = b.addPoints(randomCloud(rng, 300, -1.1f, 1.1f));
  b.query(tets, set);
  b.query(set, tets);
  expectHundredRerunsIdentical(b,
                               {.maxQueries = 2, .maxGeometries = 2, .maxPoints = 2000, .maxContacts = 4000,
                                .maxSlots = 8000, .maxCells = 800, .maxCandidates = 3000},
                               50);
}

}  // namespace
}  // namespace vkc::test::geometry
