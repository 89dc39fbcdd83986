// The mesh queries' brute-force oracle for tests: every cell of each query's mesh through the same
// driver (cpu::MeshQueries with bruteForce), compared bit for bit with a batch that ran.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <random>

#include "cpu/geometry_queries_mesh.h"
#include "shared/geometry_queries_mesh_mesh.h"
#include "shared/geometry_queries_mesh_mesh_device.h"
#include "geometry_queries/geometry_queries_test_support.h"
#include "support/vulkan_fixture.h"

namespace vkc::test::geometry {

// b ran (kCpuScalar, capacity above `contacts`) and found `contacts`: the brute force finds the same
// contacts, bit for bit, each satisfying the contact invariants within tolerance; kCpuSimd (which
// runs the same code) too.
inline void expectBruteForceAndSimdEqual(const Batch& b, uint64_t contacts, size_t capacity,
                                         float tolerance) {
  const GeometryQueryInput in = b.input();
  std::vector<ContactElement> ea(contacts + 1), eb(contacts + 1);
  std::vector<ContactRange> ranges(b.queries.size());
  const GeometryQueryOutput out{ea, eb, ranges, {}};
  cpu::MeshQueries oracle(in);
  uint64_t total = 0;
  for (size_t q = 0; q < b.queries.size(); ++q) {
    const uint64_t found = oracle.contacts(q, out, total, ea.size(), /*bruteForce=*/true);
    ASSERT_EQ(found, b.ranges[q].count) << "query " << q;
    total += found;
  }
  ASSERT_EQ(total, contacts);
  for (uint64_t k = 0; k < total; ++k) {
    ASSERT_TRUE(bitwiseEqual(ea[k], b.elementsA[k]) && bitwiseEqual(eb[k], b.elementsB[k]))
        << "contact " << k;
    expectContactInvariants(b.elementsA[k], b.elementsB[k], tolerance);
  }
  Batch s = b;
  ASSERT_TRUE(s.run(Backend::kCpuSimd, capacity).ok());
  for (uint64_t k = 0; k < total; ++k) ASSERT_TRUE(bitwiseEqual(s.elementsA[k], b.elementsA[k]));
}

// Queries 2k and 2k + 1 of b (which ran) are one pair in both orders: their elements swapped bit for
// bit (the query field aside).
inline void expectPairsSwappedBitwise(const Batch& b) {
  for (size_t q = 0; q < b.queries.size(); q += 2) {
    ASSERT_EQ(b.ranges[q].count, b.ranges[q + 1].count) << "query " << q;
    for (uint32_t i = 0; i < b.ranges[q].count; ++i) {
      ContactElement a0 = b.elementsA[b.ranges[q].first + i], b0 = b.elementsB[b.ranges[q].first + i];
      ContactElement a1 = b.elementsA[b.ranges[q + 1].first + i], b1 = b.elementsB[b.ranges[q + 1].first + i];
      a0.query = b0.query = a1.query = b1.query = 0;
      ASSERT_TRUE(bitwiseEqual(a0, b1) && bitwiseEqual(b0, a1)) << "query " << q << " contact " << i;
    }
  }
}

// The seed's ids of element e of mesh geometry gi of b (contactCellIds), as a vector.
inline std::vector<uint32_t> meshElementIds(const Batch& b, uint32_t gi, const ContactElement& e) {
  const GeometryQueryInput in = b.input();
  uint32_t v[4];
  const uint32_t n = contactCellIds(in, b.geometries[gi], e, v);
  return std::vector<uint32_t>(v, v + n);
}

// Runs b on both CPU backends (room for `capacity` contacts); both must give the same elements bit
// for bit.
inline void runScalarAndSimd(Batch& b, size_t capacity = 64) {
  ASSERT_TRUE(b.run(Backend::kCpuScalar, capacity).ok());
  Batch s = b;
  ASSERT_TRUE(s.run(Backend::kCpuSimd, capacity).ok());
  for (size_t k = 0; k < b.elementsA.size(); ++k) {
    ASSERT_TRUE(bitwiseEqual(b.elementsA[k], s.elementsA[k]) && bitwiseEqual(b.elementsB[k], s.elementsB[k]));
  }
}

// Runs b on `stage` (room for `capacity` contacts) once, then 100 times more: more than
// `minContacts`, and every rerun's counts, elements and ranges bit for bit the first run's.
inline void expectHundredRerunsBitwise(GeometryQueryStage& stage, const Batch& b, size_t capacity,
                                       uint64_t minContacts) {
  std::vector<ContactElement> a0(capacity), b0(capacity), a(capacity), e(capacity);
  std::vector<ContactRange> r0(b.queries.size()), r(b.queries.size());
  auto first = stage.run(b.input(), {a0, b0, r0});
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_GT(first->contacts, minContacts);
  ASSERT_EQ(first->candidatesMissing, 0u) << "the stage's maxCandidates is too small for the batch";
  for (int rep = 0; rep < 100; ++rep) {
    auto c = stage.run(b.input(), {a, e, r});
    ASSERT_TRUE(c.ok()) << c.message();
    ASSERT_EQ(c->contacts, first->contacts);
    ASSERT_EQ(std::memcmp(a.data(), a0.data(), first->written * sizeof(ContactElement)), 0) << "rep " << rep;
    ASSERT_EQ(std::memcmp(e.data(), b0.data(), first->written * sizeof(ContactElement)), 0) << "rep " << rep;
    ASSERT_EQ(std::memcmp(r.data(), r0.data(), r.size() * sizeof(ContactRange)), 0) << "rep " << rep;
  }
}

// Adds a mesh of `cellCount` separate cells of `type` (a soup): per cell a centre uniform in
// [-extent, extent]^3, then each corner that centre plus offsets uniform in [-spread, spread]
// (drawn from rng in that order). Returns the geometry.
inline uint32_t addRandomSoup(Batch& b, std::mt19937& rng, GeometryType type, uint32_t cellCount,
                              float extent, float spread) {
  std::uniform_real_distribution<float> pos(-extent, extent), off(-spread, spread);
  const uint32_t n = type == GeometryType::kLineMesh ? 2 : (type == GeometryType::kTetrahedralMesh ? 4 : 3);
  std::vector<Float4> vertices;
  std::vector<uint32_t> cells;
  for (uint32_t c = 0; c < cellCount; ++c) {
    const Float4 centre = v3(pos(rng), pos(rng), pos(rng));
    for (uint32_t k = 0; k < n; ++k) {
      cells.push_back(static_cast<uint32_t>(vertices.size()));
      vertices.push_back(v3(centre.x + off(rng), centre.y + off(rng), centre.z + off(rng)));
    }
  }
  return b.addMesh(type, vertices, cells);
}

// The edge-edge contacts of two surface meshes before keeping one per pair of edges: every pair of
// triangles whose boxes are candidates, through the shared function (host side).
inline uint32_t rawEdgeEdgeContacts(const Batch& b, uint32_t xi, uint32_t yi) {
  const Geometry& x = b.geometries[xi];
  const Geometry& y = b.geometries[yi];
  const auto corners = [&](const Geometry& g, uint32_t c, gpu::uvec4& ids, gpu::vec3 p[3]) {
    for (uint32_t k = 0; k < 3; ++k) {
      ids[k] = b.cells[static_cast<uint32_t>(g.p2.x) + 3 * c + k];
      const Float4& v = b.points[g.first + ids[k]];
      p[k] = gpu::vec3(v.x, v.y, v.z);
    }
  };
  uint32_t n = 0;
  for (uint32_t cx = 0; cx < static_cast<uint32_t>(x.p2.y); ++cx) {
    gpu::uvec4 ix(0u);
    gpu::vec3 p[3];
    corners(x, cx, ix, p);
    gpu::vec3 lo, hi;
    gpu::geomMeshMeshReach(p[0], p[1], p[2], p[0], 3, 0.0f, lo, hi);
    for (uint32_t cy = 0; cy < static_cast<uint32_t>(y.p2.y); ++cy) {
      gpu::uvec4 iy(0u);
      gpu::vec3 q[3];
      corners(y, cy, iy, q);
      if (!gpu::geomMeshMeshBoxesOverlap(glm::min(q[0], glm::min(q[1], q[2])), glm::max(q[0], glm::max(q[1], q[2])),
                                         lo, hi))
        continue;
      gpu::GeomElement e0, e1;
      uint32_t key = 0;
      n += gpu::geomTriTriContact(p[0], p[1], p[2], ix, cx, q[0], q[1], q[2], iy, cy, e0, e1, key) ==
           gpu::kGeomTriTriEdgeEdge;
    }
  }
  return n;
}

// An n x n grid of jittered squares (two triangles each) spanning origin + [0, 1]^2 (u, v): vertex
// (i, j) at origin + u i / n + v j / n plus a uniform offset in [-jitter, jitter]^3 from rng.
inline uint32_t addJitteredGrid(Batch& b, std::mt19937& rng, uint32_t n, Float4 origin, Float4 u, Float4 v, float jitter) {
  std::uniform_real_distribution<float> off(-jitter, jitter);
  std::vector<Float4> vertices;
  std::vector<uint32_t> triangles;
  for (uint32_t j = 0; j <= n; ++j) {
    for (uint32_t i = 0; i <= n; ++i) {
      const float s = static_cast<float>(i) / static_cast<float>(n), t = static_cast<float>(j) / static_cast<float>(n);
      vertices.push_back(v3(origin.x + u.x * s + v.x * t + off(rng), origin.y + u.y * s + v.y * t + off(rng),
                            origin.z + u.z * s + v.z * t + off(rng)));
    }
  }
  for (uint32_t j = 0; j < n; ++j) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t a = j * (n + 1) + i, c = a + n + 1;
      triangles.insert(triangles.end(), {a, c, a + 1, a + 1, c, c + 1});
    }
  }
  return b.addMesh(GeometryType::kSurfaceMesh, vertices, triangles);
}

// One test body per backend (VKC_ALL_BACKENDS) for mesh queries: run on this backend, compare with
// kCpuScalar (bit for bit on the CPU backends and lavapipe, within kGeometryQueryTolerance on other
// devices).
class MeshBackendTest : public BackendTest {
 protected:
  Result<GeometryQueryCounts> run(Batch& b, size_t capacity) { return b.run(backend(), capacity, ctx()); }
  // Runs b here (room for `capacity` contacts), then expectSameAsCpuScalar.
  void runHere(Batch& b, size_t capacity = 64) {
    auto c = run(b, capacity);
    ASSERT_TRUE(c.ok()) << c.message();
    expectSameAsCpuScalar(b, capacity);
  }
  // b is refused here with `code`, the message mentioning `mentions`, and nothing written.
  void expectRefused(Batch& b, ErrorCode code, const std::string& mentions) {
    auto counts = run(b, 8);
    ASSERT_FALSE(counts.ok());
    EXPECT_EQ(counts.error().code, code) << counts.message();
    EXPECT_NE(counts.message().find(mentions), std::string::npos) << counts.message();
    for (const ContactElement& e : b.elementsA) EXPECT_EQ(e.query, 0xDEADu) << "an element was written";
    for (const ContactRange& r : b.ranges) EXPECT_EQ(r.first, 0xDEADu) << "a range was written";
  }
  // The CPU backends, lavapipe and any device with exact arithmetic give kCpuScalar's bits.
  bool bitwise() { return test::bitwiseDevice(ctx()); }

  // b ran on this backend (capacity above its contacts): kCpuScalar finds the same ranges and elements,
  // bit for bit where bitwise(), else within kGeometryQueryTolerance (the element kinds, indices, cells
  // and queries exact); the elements that differ are counted and printed.
  void expectSameAsCpuScalar(const Batch& b, size_t capacity) {
    Batch s = b;
    auto c = s.run(Backend::kCpuScalar, capacity);
    ASSERT_TRUE(c.ok()) << c.message();
    for (size_t q = 0; q < b.queries.size(); ++q) {
      ASSERT_EQ(b.ranges[q].first, s.ranges[q].first) << "query " << q;
      ASSERT_EQ(b.ranges[q].count, s.ranges[q].count) << "query " << q;
    }
    uint32_t differ = 0;
    for (size_t k = 0; k < c->written; ++k) {
      const ContactElement* got[2] = {&b.elementsA[k], &b.elementsB[k]};
      const ContactElement* want[2] = {&s.elementsA[k], &s.elementsB[k]};
      for (int side = 0; side < 2; ++side) {
        ASSERT_EQ(got[side]->type, want[side]->type) << "contact " << k;
        ASSERT_EQ(got[side]->index, want[side]->index) << "contact " << k;
        ASSERT_EQ(got[side]->cell, want[side]->cell) << "contact " << k;
        ASSERT_EQ(got[side]->query, want[side]->query) << "contact " << k;
        if (bitwise()) {
          ASSERT_TRUE(bitwiseEqual(*got[side], *want[side]))
              << "contact " << k << " side " << side << ": "
              << firstDifference(want[side], got[side], sizeof(ContactElement));
        } else if (!bitwiseEqual(*got[side], *want[side])) {
          ++differ;
          const float* x = &got[side]->point.x;
          const float* y = &want[side]->point.x;
          for (int i = 0; i < 8; ++i) {
            EXPECT_NEAR(x[i], y[i], kGeometryQueryTolerance * (1.0f + std::abs(y[i]))) << "contact " << k;
          }
        }
      }
    }
    if (differ > 0) std::printf("  %u elements not bitwise equal to kCpuScalar's\n", differ);
  }
};

// The stage on its own (Vulkan only): reruns and record statistics of mesh batches.
class MeshStageVulkanTest : public VulkanTest {
 protected:
  // b runs on a stage created with `info` 101 times (more than minContacts contacts): every rerun
  // gives the first run's counts, ranges and elements bit for bit.
  void expectHundredRerunsIdentical(const Batch& b, const GeometryQueryStageCreateInfo& info, uint64_t minContacts) {
    auto stage = GeometryQueryStage::create(ctx(), info);
    ASSERT_TRUE(stage.ok()) << stage.message();
    expectHundredRerunsBitwise(**stage, b, info.maxContacts, minContacts);
  }

  // b through queryGeometries on kVulkan (its own stage, rerun with room for missing candidates;
  // `capacity` contacts): none missing, and kCpuScalar's contacts (cpu: b run there) bit for bit.
  void expectQueryGeometriesAsCpuScalar(Batch& b, const Batch& cpu, uint64_t cpuContacts, size_t capacity) {
    auto again = b.run(Backend::kVulkan, capacity, &ctx());
    ASSERT_TRUE(again.ok()) << again.message();
    EXPECT_EQ(again->candidatesMissing, 0u);
    ASSERT_EQ(again->contacts, cpuContacts);
    for (uint32_t k = 0; k < again->written; ++k) {
      ASSERT_TRUE(bitwiseEqual(b.elementsA[k], cpu.elementsA[k])) << "contact " << k;
      ASSERT_TRUE(bitwiseEqual(b.elementsB[k], cpu.elementsB[k])) << "contact " << k;
    }
  }

  // stats of three growing batches (recordStats): each `dispatches` dispatches, `dependent` of them
  // dependent, and the first's barriers; more workgroups for each larger batch.
  void expectFixedDispatchesGrowingWork(const std::vector<RecordStats>& stats, uint32_t dispatches,
                                        uint32_t dependent = 3) {
    ASSERT_EQ(stats.size(), 3u);
    for (const RecordStats& s : stats) {
      EXPECT_EQ(s.dispatches, dispatches);
      EXPECT_EQ(s.dependentDispatches, dependent);
      EXPECT_EQ(s.barriers, stats[0].barriers);
    }
    EXPECT_GT(stats[2].workgroups, stats[1].workgroups);
    EXPECT_GT(stats[1].workgroups, stats[0].workgroups);
  }

  // Each batch recorded (not run) on a stage created with `info` (host-memory points and cells): the
  // record's statistics, in order.
  std::vector<RecordStats> recordStats(const GeometryQueryStageCreateInfo& info, std::initializer_list<const Batch*> batches) {
    std::vector<RecordStats> stats;
    auto stage = GeometryQueryStage::create(ctx(), info);
    EXPECT_TRUE(stage.ok()) << stage.message();
    if (!stage.ok()) return stats;
    for (const Batch* b : batches) {
      VkCommandBuffer cmd = beginCommandBuffer();
      GeometryQueryRecordInfo record;
      record.geometries = b->geometries;
      record.queries = b->queries;
      record.points = b->points;
      record.previousPoints = b->previousPoints;
      record.cells = b->cells;
      record.gridSamples = b->gridSamples;
      const Status st = (*stage)->record(cmd, record);
      EXPECT_TRUE(st.ok()) << st.message();
      stats.push_back((*stage)->lastRecordStats());
      freeCommandBuffer(cmd);
    }
    return stats;
  }
};

}  // namespace vkc::test::geometry
