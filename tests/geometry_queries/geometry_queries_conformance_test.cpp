// One test body per backend (Vulkan, CPU scalar, CPU SIMD) for the geometry queries: the closed-form
// and iMSTK configurations and random mixed batches against kCpuScalar: the same counts, ranges,
// types, indices and order, and the same bits on the CPU backends and on lavapipe (measured so; another
// device's square roots and divisions may round differently: there floats within
// kGeometryQueryTolerance, the non-bitwise ones counted and printed); a large batch against the same
// queries one by one, overflow, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include <random>

#include "cpu/geometry_queries.h"  // everySampleContacts
#include "geometry_queries/geometry_queries_test_support.h"
#include "scene/geometry_queries_layout.h"  // geometrySlotLayout
#include "support/vulkan_fixture.h"

namespace vkc::test::geometry {
namespace {

void expectSameAsScalar(bool bitwise, Batch& b, Result<GeometryQueryCounts>& counts, size_t capacity);

class GeometryQueriesConformance : public BackendTest {
 protected:
  Result<GeometryQueryCounts> run(Batch& b, size_t capacity) { return b.run(backend(), capacity, ctx()); }
  // The CPU backends, lavapipe (whose sqrt and division round as the CPU's) and any device with
  // exact arithmetic give kCpuScalar's bits.
  bool bitwise() { return test::bitwiseDevice(ctx()); }
  // The batch of primitive pairs as it is (on Vulkan the QUERY passes), then with a point set's query
  // added (the slot passes: a thread per slot, each evaluating its query's contacts or skipping a
  // slot that geomCylinderBoxSlotMayHit or geomCylinderCylinderSlotMayHit rules out). Up to
  // `perQuery` contacts a query, more than `atLeast` in all.
  void expectBothPathsAsScalar(Batch b, uint32_t perQuery, uint32_t atLeast) {
    for (int withPoints = 0; withPoints < 2; ++withPoints) {
      if (withPoints == 1)
        b.query(b.add(Geometry::sphere({0, 0, 0, 1})), b.addPoints({v3(0, 0, 0), v3(0.5f, 0.5f, 0.5f)}));
      const uint32_t capacity = perQuery * static_cast<uint32_t>(b.queries.size());
      auto counts = run(b, capacity);
      EXPECT_GT(counts.ok() ? counts->contacts : 0u, atLeast) << withPoints;
      expectSameAsScalar(bitwise(), b, counts, capacity);
    }
  }
};

// The configurations of the analytic and iMSTK tests (each pair in both orders).
Batch fixedCases() {
  Batch b;
  auto pair = [&](const Geometry& x, const Geometry& y) {
    const uint32_t i = b.add(x), j = b.add(y);
    b.query(i, j);
    b.query(j, i);
  };
  const Geometry plane = Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false);
  const Geometry plane2 = Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), true);
  const Geometry box = Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 2, 3));
  pair(Geometry::sphere({0.5f, 0.25f, 0.5f, 1.0f}), plane2);
  pair(Geometry::sphere({0.5f, -0.25f, 0.5f, 1.0f}), plane2);
  pair(Geometry::sphere({0.5f, -0.25f, 0.5f, 1.0f}), plane);
  pair(Geometry::sphere({1.3f, 0, 0, 0.5f}), box);
  pair(Geometry::sphere({1.1f, 2.1f, 3.1f, 0.5f}), box);
  pair(Geometry::sphere({0.8f, 0, 0, 0.5f}), box);
  pair(Geometry::sphere({0, 0, 0, 1}), Geometry::sphere({1.5f, 0, 0, 1}));
  pair(Geometry::sphere({0.2f, 0.9f, 0, 0.5f}), imstkCylinder(v3(0, 0, 0), 1, 1));
  pair(Geometry::sphere({0.3f, 0.3f, 0, 0.5f}), imstkCapsule(v3(0, 0, 0), 0.5f, 1));
  pair(imstkCapsule(v3(0, 0.3f, 0), 0.5f, 1), Geometry::capsule(v3(-1, 0.3f, 0.2f), v3(1, 0.3f, 0.2f), 0.25f));
  pair(Geometry::capsule(v3(-1, 0.2f, 0), v3(1, 0.2f, 0), 0.5f), plane);
  pair(Geometry::capsule(v3(-1, 2.6f, 0), v3(1, 2.2f, 0), 0.5f), box);
  pair(Geometry::capsule(v3(-1, 0.8f, 0), v3(1, 1.2f, 0.1f), 0.3f), imstkCylinder(v3(0, 0, 0), 1, 2));
  pair(Geometry::orientedBox(v3(0, 0.3f, 0), quatAxisAngle(0.70710678f, 0.70710678f, 0, 0.4f), v3(0.5f, 0.5f, 0.5f)), plane);
  pair(Geometry::orientedBox(v3(0, 0.6f, 0), quatAxisAngle(0, 0, 1, 0.7853982f), v3(0.5f, 0.5f, 0.5f)), plane2);
  pair(Geometry::orientedBox(v3(0, 0, 0), quatAxisAngle(1, 0, 0, 0.7853982f), v3(0.5f, 0.5f, 0.5f)),
       Geometry::orientedBox(v3(0, 1.3f, 0), quatAxisAngle(0, 0, 1, 0.7853982f), v3(0.5f, 0.5f, 0.5f)));
  pair(box, Geometry::orientedBox(v3(1.8f, 0.5f, 0), identityQuat(), v3(1, 1, 1)));
  pair(imstkCylinder(v3(0, -0.2f, 0), 1, 1), plane);
  pair(Geometry::cylinder(v3(0, 0.5f, 0), v3(1, 0, 0), 0.6f, 1), plane);
  pair(imstkCylinder(v3(0, 0, 0), 1, 1), Geometry::cylinder(v3(1.7f, 0.1f, 0), v3(0, 0, 1), 0.8f, 1));
  // Parallel axes (the closed form): side by side with opposite axes, and stacked off-centre.
  pair(imstkCylinder(v3(0, 0, 0), 1, 1), Geometry::cylinder(v3(1.7f, 0.5f, 0.2f), v3(0, -1, 0), 0.8f, 1));
  pair(imstkCylinder(v3(0, 0, 0), 1, 1), Geometry::cylinder(v3(0.4f, 1.9f, 0.3f), v3(0, 1, 0), 0.5f, 1));
  pair(imstkCylinder(v3(0, 0, 0), 1, 1), Geometry::orientedBox(v3(1.5f, 0.2f, 0), quatAxisAngle(0, 1, 0, 0.3f),
                                                                v3(0.6f, 0.6f, 0.6f)));
  const uint32_t pts = b.addPoints({v3(0, 0.5f, 0), v3(0, 3, 0), v3(0, -0.5f, 0), v3(0.2f, 0, 0), v3(0.9f, 1.9f, 2.9f)});
  for (const Geometry& g : {Geometry::sphere({0, 0, 0, 1}), plane, plane2, box, imstkCylinder(v3(0, 0, 0), 1, 1),
                            imstkCapsule(v3(0, 0, 0), 0.5f, 1)}) {
    const uint32_t i = b.add(g);
    b.query(i, pts);
    b.query(pts, i);
  }
  return b;
}

// Implicit geometries (static pairs with every type) and the continuous method (a point set against a
// grid and against static and moving primitives): the implicit and continuous pair families.
Batch implicitAndContinuousCases() {
  Batch b;
  const uint32_t grid = b.addGrid(v3(-1.5f, -1.5f, -1.5f), 0.25f, 13, [](float x, float y, float z) {
    return std::sqrt(x * x + y * y + z * z) - 1.0f;
  });
  const uint32_t grid2 = b.addGrid(v3(-0.25f, -1.0f, -1.0f), 0.25f, 9, [](float x, float y, float z) {
    return std::sqrt((x - 0.75f) * (x - 0.75f) + y * y + z * z) - 0.6f;
  });
  std::vector<Float4> cloud, previous;
  for (uint32_t i = 0; i < 600; ++i) {
    const float t = static_cast<float>(i);
    const Float4 p = v3(1.6f * std::sin(t * 0.37f), 1.6f * std::sin(t * 0.71f + 1.0f), 1.6f * std::sin(t * 1.13f + 2.0f));
    cloud.push_back(p);
    previous.push_back(v3(p.x * 1.3f + 0.05f, p.y * 1.3f - 0.02f, p.z * 1.3f));  // moving inwards
  }
  const uint32_t set = b.addPoints(cloud);
  const uint32_t set2 = b.addPoints(std::vector<Float4>(cloud.begin(), cloud.begin() + 200));
  b.previousPoints = previous;
  b.previousPoints.insert(b.previousPoints.end(), previous.begin(), previous.begin() + 200);
  const uint32_t sphere = b.add(Geometry::sphere({0.3f, 0.2f, 0.0f, 0.5f}));
  const uint32_t capsule = b.add(Geometry::capsule(v3(-1.2f, 0.1f, 0), v3(0.2f, 0.4f, 0.1f), 0.3f));
  const uint32_t box = b.add(Geometry::orientedBox(v3(0.9f, 0, 0), quatAxisAngle(0, 0, 1, 0.5f), v3(0.4f, 0.3f, 0.5f)));
  const uint32_t cylinder = b.add(Geometry::cylinder(v3(0, 0.9f, 0), v3(1, 0, 0), 0.3f, 0.5f));
  const uint32_t plane = b.add(Geometry::plane(v3(0, -0.7f, 0), v3(0, 1, 0), false));
  for (uint32_t g : {set, sphere, capsule, box, cylinder, plane, grid2}) {
    b.query(g, grid);
    b.query(grid, g);
  }
  uint32_t state = 0;
  for (uint32_t g : {grid, sphere, capsule, box, cylinder, plane}) {
    b.continuous(set, g, state);
    state += 600;
    b.continuous(g, set2, state);
    state += 200;
  }
  // The primitives move (their previous poses translated, the box also turned); the grids stay.
  b.previousGeometries = b.geometries;
  for (uint32_t g : {sphere, capsule, box, cylinder, plane}) {
    Geometry& prev = b.previousGeometries[g];
    prev.p0.x -= 0.2f;
    prev.p0.y += 0.1f;
    if (prev.type == GeometryType::kCapsule) prev.p1.x -= 0.2f, prev.p1.y += 0.1f;
  }
  b.previousGeometries[box].p1 = quatAxisAngle(0, 0, 1, 0.3f);
  return b;
}

std::string pairName(const Batch& b, uint32_t q) {
  static const char* const kNames[] = {"sphere", "capsule", "cylinder", "box", "plane", "points", "implicit"};
  uint32_t ta = static_cast<uint32_t>(b.geometries[b.queries[q].a].type);
  uint32_t tb = static_cast<uint32_t>(b.geometries[b.queries[q].b].type);
  if (ta > tb) std::swap(ta, tb);
  return std::string(kNames[ta]) + "-" + kNames[tb];
}

bool floatsNear(const Float4& x, const Float4& y, float& worst) {
  const float a[4] = {x.x, x.y, x.z, x.w}, c[4] = {y.x, y.y, y.z, y.w};
  bool ok = true;
  for (int k = 0; k < 4; ++k) {
    const float err = std::abs(a[k] - c[k]) / (1.0f + std::abs(c[k]));
    worst = std::max(worst, err);
    ok = ok && err <= kGeometryQueryTolerance;
  }
  return ok;
}

// `got` (this backend) against `ref` (kCpuScalar): counts, ranges and integer fields equal; floats
// bitwise on the CPU backends, within the tolerance on Vulkan (non-bitwise elements counted per pair).
void expectConformant(bool bitwise, const Batch& got, const GeometryQueryCounts& gc, const Batch& ref,
                      const GeometryQueryCounts& rc) {
  ASSERT_EQ(gc.contacts, rc.contacts);
  ASSERT_EQ(gc.written, rc.written);
  ASSERT_EQ(gc.overflow, rc.overflow);
  for (size_t q = 0; q < ref.queries.size(); ++q) {
    ASSERT_EQ(got.ranges[q].first, ref.ranges[q].first) << "query " << q;
    ASSERT_EQ(got.ranges[q].count, ref.ranges[q].count) << "query " << q << " " << pairName(ref, uint32_t(q));
  }
  std::map<std::string, std::pair<uint32_t, float>> inexact;  // pair -> (non-bitwise contacts, worst error)
  for (uint32_t k = 0; k < rc.written; ++k) {
    for (int side = 0; side < 2; ++side) {
      const ContactElement& g = side == 0 ? got.elementsA[k] : got.elementsB[k];
      const ContactElement& r = side == 0 ? ref.elementsA[k] : ref.elementsB[k];
      ASSERT_EQ(g.type, r.type) << k;
      ASSERT_EQ(g.index, r.index) << k;
      ASSERT_EQ(g.query, r.query) << k;
      ASSERT_EQ(g.cell, r.cell) << k;
      if (bitwiseEqual(g, r)) continue;
      EXPECT_FALSE(bitwise) << "contact " << k << " (" << pairName(ref, r.query) << ") is not bitwise kCpuScalar's";
      float worst = 0;
      EXPECT_TRUE(floatsNear(g.point, r.point, worst) & floatsNear(g.direction, r.direction, worst))
          << "contact " << k << " (" << pairName(ref, r.query) << ") differs by " << worst;
      auto& e = inexact[pairName(ref, r.query)];
      e.first += side == 0 ? 1 : 0;
      e.second = std::max(e.second, worst);
    }
  }
  for (const auto& [pair, e] : inexact) {
    std::printf("  %s: %u of the contacts not bitwise equal to kCpuScalar, worst relative error %.3g\n", pair.c_str(),
                e.first, static_cast<double>(e.second));
  }
}

void expectSameAsScalar(bool bitwise, Batch& b, Result<GeometryQueryCounts>& counts, size_t capacity) {
  ASSERT_TRUE(counts.ok()) << counts.message();
  Batch ref = b;
  auto rc = ref.run(Backend::kCpuScalar, capacity);
  ASSERT_TRUE(rc.ok()) << rc.message();
  expectConformant(bitwise, b, *counts, ref, *rc);
}

TEST_P(GeometryQueriesConformance, FixedCasesMatchCpuScalar) {
  Batch b = fixedCases();
  auto counts = run(b, 256);
  EXPECT_GT(counts.ok() ? counts->contacts : 0u, 60u);
  expectSameAsScalar(bitwise(), b, counts, 256);
}

// Cylinders standing or lying on planes (up to four contacts a query, geomCylinderPlanePoint): every
// backend as kCpuScalar.
TEST_P(GeometryQueriesConformance, RestingCylindersMatchCpuScalar) {
  Batch b = restingCylinderBatch(7u, 1500);
  auto counts = run(b, 4 * 1500);
  EXPECT_GT(counts.ok() ? counts->contacts : 0u, 2500u);
  expectSameAsScalar(bitwise(), b, counts, 4 * 1500);
}

// Capsules lying on cylinders' caps and along their walls (up to two contacts a query,
// geomCapsuleCylinderSpan): every backend as kCpuScalar.
TEST_P(GeometryQueriesConformance, RestingCapsulesMatchCpuScalar) {
  Batch b = restingCapsuleBatch(11u, 1500);
  auto counts = run(b, 2 * 1500);
  EXPECT_GT(counts.ok() ? counts->contacts : 0u, 1500u);
  expectSameAsScalar(bitwise(), b, counts, 2 * 1500);
}

// Cylinders standing or lying on box faces and small boxes on wide caps (up to eight contacts a
// query, geomCylinderBoxPatch): every backend as kCpuScalar, on Vulkan by both paths.
TEST_P(GeometryQueriesConformance, RestingCylindersOnBoxesMatchCpuScalar) {
  expectBothPathsAsScalar(restingCylinderBoxBatch(13u, 1500), 8, 2500);
}

// Cylinders stacked, side by side, lying on caps and standing on walls (up to six contacts a query,
// geomCylinderCylinderPatch): every backend as kCpuScalar, on Vulkan by both paths.
TEST_P(GeometryQueriesConformance, RestingCylinderPairsMatchCpuScalar) {
  expectBothPathsAsScalar(restingCylinderPairBatch(17u, 1500), 6, 2000);
}

// Run twice: the second run starts from the state the first wrote (the points that stayed inside keep
// their last outside point). Contacts and state as kCpuScalar's after each run.
TEST_P(GeometryQueriesConformance, ImplicitAndContinuousMatchCpuScalarAndKeepTheirState) {
  Batch b = implicitAndContinuousCases();
  Batch ref = b;
  for (int round = 0; round < 2; ++round) {
    auto counts = run(b, 20000);
    auto rc = ref.run(Backend::kCpuScalar, 20000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_TRUE(rc.ok()) << rc.message();
    EXPECT_GT(rc->contacts, 500u) << "round " << round;
    expectConformant(bitwise(), b, *counts, ref, *rc);
    ASSERT_EQ(b.state.size(), ref.state.size());
    uint32_t inside = 0, differ = 0;
    for (size_t i = 0; i < ref.state.size(); ++i) {
      inside += ref.state[i].w == 1.0f ? 1 : 0;
      differ += std::memcmp(&b.state[i], &ref.state[i], sizeof(Float4)) != 0 ? 1 : 0;
    }
    EXPECT_GT(inside, 20u) << "round " << round << ": points staying inside since a traced entry";
    EXPECT_TRUE(bitwise() ? differ == 0 : differ < ref.state.size() / 100) << differ << " state entries differ";
  }
}

// Boxes and cylinders resting on and sunk into a sampled terrain (40^3 samples), turned, a few larger
// than the grid or outside it, and two planes, in both orders: a query's slots past a box's or
// cylinder's own points are its sample box's (geomShapeSampleBox), a plane's the samples up to half a
// cell diagonal above it (their bounding box), about 4% of a slot per sample here (most of them the
// six shapes larger than the grid and the planes), the layout counts them alike on the host
// and in the device's LAYOUT pass, and every backend gives every sample's contacts (the reference:
// each sample of the grid evaluated, cpu::everySampleContacts), on Vulkan bit for bit.
TEST_P(GeometryQueriesConformance, ShapesOnATerrainGetEverySamplesContactsFromTheirSampleBoxes) {
  const uint32_t n = 40;
  Batch b = terrainShapesBatch(41, n, 240);
  const detail::GeometrySlotLayout layout = detail::geometrySlotLayout(b.geometries, b.queries);
  const uint64_t everySlot = uint64_t{b.queries.size()} * (gpu::kGeomImplicitShapeSlots + n * n * n);
  EXPECT_LT(layout.slotCount * 20, everySlot) << layout.slotCount << " slots";
  // The floor (z = -0.2, up; the grid's z from -2 by 4/39): the samples up to 1.001 times half the
  // spacings' sum above it, and one layer more: 21 of 40 layers.
  const size_t floor = b.queries.size() - 2;
  EXPECT_EQ(layout.slotRange[floor].end - layout.slotRange[floor].first, uint64_t{n} * n * 21);
  std::vector<std::pair<ContactElement, ContactElement>> every;
  for (uint32_t q = 0; q < b.queries.size(); ++q) {
    const auto c = cpu::everySampleContacts(b.input(), q);
    every.insert(every.end(), c.begin(), c.end());
  }
  ASSERT_GT(every.size(), 3000u);
  const size_t capacity = every.size() + 16;
  auto counts = run(b, capacity);
  ASSERT_TRUE(counts.ok()) << counts.message();
  ASSERT_EQ(counts->contacts, every.size());
  for (size_t k = 0; k < every.size(); ++k) {
    if (bitwise()) {
      ASSERT_TRUE(bitwiseEqual(every[k].first, b.elementsA[k]) &&
                  bitwiseEqual(every[k].second, b.elementsB[k]))
          << "contact " << k;
    } else {
      ASSERT_EQ(every[k].first.query, b.elementsA[k].query) << "contact " << k;
    }
  }
  expectSameAsScalar(bitwise(), b, counts, capacity);
}

TEST_P(GeometryQueriesConformance, RandomMixedBatchMatchesCpuScalar) {
  Batch b = randomBatch(21, 3000);
  auto counts = run(b, 100000);
  EXPECT_GT(counts.ok() ? counts->contacts : 0u, 1000u);
  expectSameAsScalar(bitwise(), b, counts, 100000);
}

// 10k mixed queries in one batch give what each query gives alone (kCpuScalar, each query with only
// its own geometries).
TEST_P(GeometryQueriesConformance, TenThousandQueriesInOneBatchEqualThemOneByOne) {
  Batch b = randomBatch(23, 10000);
  auto counts = run(b, 400000);
  ASSERT_TRUE(counts.ok()) << counts.message();
  ASSERT_FALSE(counts->overflow);
  for (size_t q = 0; q < b.queries.size(); ++q) {
    Batch one;
    one.points = b.points;
    one.query(one.add(b.geometries[b.queries[q].a]), one.add(b.geometries[b.queries[q].b]));
    auto c = one.run(Backend::kCpuScalar, 300);
    ASSERT_TRUE(c.ok());
    ASSERT_EQ(one.ranges[0].count, b.ranges[q].count) << "query " << q;
    for (uint32_t k = 0; k < one.ranges[0].count; ++k) {
      const ContactElement& ga = b.elementsA[b.ranges[q].first + k];
      const ContactElement& gb = b.elementsB[b.ranges[q].first + k];
      ASSERT_EQ(ga.query, q);
      ASSERT_EQ(ga.index, one.elementsA[k].index);
      ASSERT_EQ(gb.index, one.elementsB[k].index);
      float worst = 0;
      EXPECT_TRUE(floatsNear(ga.point, one.elementsA[k].point, worst) &
                  floatsNear(gb.direction, one.elementsB[k].direction, worst))
          << "query " << q << " contact " << k;
      if (bitwise()) {
        ContactElement a = one.elementsA[k];
        a.query = static_cast<uint32_t>(q);
        EXPECT_TRUE(bitwiseEqual(a, ga)) << "query " << q;
      }
    }
  }
}

TEST_P(GeometryQueriesConformance, OverflowIsReportedAndNothingIsWrittenPastTheCapacity) {
  Batch b = randomBatch(13, 300);
  auto full = run(b, 100000);
  ASSERT_TRUE(full.ok()) << full.message();
  ASSERT_GT(full->contacts, 20u);
  const Batch fullBatch = b;
  const uint32_t capacity = full->contacts / 2;
  ContactElement sentinel;
  sentinel.query = 0xBEEFu;
  std::vector<ContactElement> a(capacity + 8, sentinel), e(capacity + 8, sentinel);
  std::vector<ContactRange> ranges(b.queries.size());
  auto counts = queryGeometries(backend(), ctx(), b.input(),
                                {std::span(a).first(capacity), std::span(e).first(capacity), ranges});
  ASSERT_TRUE(counts.ok()) << counts.message();
  EXPECT_TRUE(counts->overflow);
  EXPECT_EQ(counts->contacts, full->contacts);
  EXPECT_EQ(counts->written, capacity);
  for (uint32_t k = 0; k < capacity; ++k) {
    EXPECT_TRUE(bitwiseEqual(a[k], fullBatch.elementsA[k]) && bitwiseEqual(e[k], fullBatch.elementsB[k])) << k;
  }
  for (uint32_t k = capacity; k < capacity + 8; ++k) EXPECT_TRUE(a[k].query == 0xBEEFu && e[k].query == 0xBEEFu);
  for (size_t q = 0; q < ranges.size(); ++q) {
    EXPECT_EQ(ranges[q].first, fullBatch.ranges[q].first);
    EXPECT_EQ(ranges[q].count, fullBatch.ranges[q].count);
  }
}

TEST_P(GeometryQueriesConformance, BadInputIsRefusedAndNothingIsWritten) {
  Batch b = fixedCases();
  b.geometries[3].p0.w = std::nanf("");
  auto counts = run(b, 64);
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.message().find("geometries[3]"), std::string::npos) << counts.message();
  for (const ContactElement& x : b.elementsA) EXPECT_EQ(x.query, 0xDEADu);
  for (const ContactRange& r : b.ranges) EXPECT_EQ(r.first, 0xDEADu);
  Batch n = fixedCases();
  n.points.resize(2);  // the point set now runs past the points
  counts = run(n, 64);
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.message().find("point set"), std::string::npos) << counts.message();
  for (const ContactElement& x : n.elementsA) EXPECT_EQ(x.query, 0xDEADu);
}

// No query; a query of an empty point set; contacts with no room for any.
TEST_P(GeometryQueriesConformance, EmptyBatchesEmptyPointSetsAndZeroCapacity) {
  Batch empty;
  auto counts = run(empty, 0);
  ASSERT_TRUE(counts.ok()) << counts.message();
  EXPECT_EQ(counts->contacts, 0u);
  EXPECT_FALSE(counts->overflow);
  Batch b;
  const uint32_t none = b.add(Geometry::pointSet(0, 0));
  const uint32_t sphere = b.add(Geometry::sphere({0, 0, 0, 1}));
  b.query(none, sphere);
  b.query(sphere, b.add(Geometry::sphere({0.5f, 0, 0, 1})));
  b.query(sphere, none);
  counts = run(b, 0);
  ASSERT_TRUE(counts.ok()) << counts.message();
  EXPECT_EQ(counts->contacts, 1u);
  EXPECT_EQ(counts->written, 0u);
  EXPECT_TRUE(counts->overflow);
  EXPECT_EQ(b.ranges[0].first, 0u);
  EXPECT_EQ(b.ranges[0].count, 0u);
  EXPECT_EQ(b.ranges[1].first, 0u);
  EXPECT_EQ(b.ranges[1].count, 1u);
  EXPECT_EQ(b.ranges[2].first, 1u);
  EXPECT_EQ(b.ranges[2].count, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, GeometryQueriesConformance, VKC_ALL_BACKENDS);

// Exact arithmetic (ContextCreateInfo::exactArithmetic): every family's divisions and square roots
// through the correctly rounded helpers give kCpuScalar's bits on any device (on lavapipe, whose own
// are the CPU's, this checks that the build's rewrite of each division and root kept its operands).
using GeometryQueriesExactArithmeticVulkan = ExactVulkanTest;

// (The fixed cases hold every pair type and method in both orders; the random batch of the tests
// above adds no family, and a minute of lavapipe's time.)
TEST_F(GeometryQueriesExactArithmeticVulkan, FixedImplicitAndContinuousCasesAreCpuScalarsBits) {
  ASSERT_TRUE(ctx().exactArithmetic());
  for (Batch b : {fixedCases(), implicitAndContinuousCases()}) {
    Batch ref = b;  // before the run: a continuous query's state is its input too
    auto counts = b.run(Backend::kVulkan, 100000, &ctx());
    auto rc = ref.run(Backend::kCpuScalar, 100000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_TRUE(rc.ok()) << rc.message();
    EXPECT_GT(rc->contacts, 60u);
    expectConformant(true, b, *counts, ref, *rc);
    EXPECT_EQ(std::memcmp(b.state.data(), ref.state.data(), ref.state.size() * sizeof(Float4)), 0) << "state";
  }
}

}  // namespace
}  // namespace vkc::test::geometry
