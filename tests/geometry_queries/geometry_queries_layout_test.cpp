// The Vulkan stage's slot layout (src/scene/geometry_queries_layout.h), on the host: every query's
// slots in query order, one pair family per tile, each family's tiles listed once, and gaps only
// where the family changes.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "geometry_queries/geometry_queries_test_support.h"
#include "scene/geometry_queries_layout.h"

namespace vkc::test::geometry {
namespace {

constexpr uint64_t kTile = gpu::kGeomGroupSize;

uint32_t familyOf(const Batch& b, size_t q) {
  return gpu::geomQueryFamily(static_cast<uint32_t>(b.geometries[b.queries[q].a].type),
                              static_cast<uint32_t>(b.geometries[b.queries[q].b].type),
                              static_cast<uint32_t>(b.queries[q].method));
}

void expectValidLayout(const Batch& b) {
  const detail::GeometrySlotLayout l = detail::geometrySlotLayout(b.geometries, b.queries);
  ASSERT_EQ(l.slotRange.size(), b.queries.size());
  std::vector<int> tileFamily((l.slotCount + kTile - 1) / kTile, -1);
  uint64_t cursor = 0;
  int previousFamily = -1;
  for (size_t q = 0; q < b.queries.size(); ++q) {
    const auto& r = l.slotRange[q];
    const uint64_t n = gpu::geomSlotCount(detail::toGeomShape(b.geometries[b.queries[q].a]),
                                          detail::toGeomShape(b.geometries[b.queries[q].b]));
    ASSERT_EQ(r.end - r.first, n) << "query " << q;
    ASSERT_GE(r.first, cursor) << "query " << q << ": slots out of query order";
    const int f = static_cast<int>(familyOf(b, q));
    // A gap only where the family changes, and never a whole tile.
    if (r.first != cursor) {
      EXPECT_NE(f, previousFamily) << "query " << q;
      EXPECT_LT(r.first - cursor, kTile) << "query " << q;
      EXPECT_EQ(r.first % kTile, 0u) << "query " << q;
    }
    for (uint64_t t = r.first / kTile; n > 0 && t <= (r.end - 1) / kTile; ++t) {
      ASSERT_TRUE(tileFamily[t] == -1 || tileFamily[t] == f) << "tile " << t << " holds two families";
      tileFamily[t] = f;
    }
    if (n > 0) previousFamily = f;
    cursor = r.end;
  }
  EXPECT_EQ(l.slotCount, cursor);
  // Each tile listed once, under its family, ascending within the family.
  std::vector<int> listed(tileFamily.size(), 0);
  for (uint32_t f = 0; f < gpu::kGeomFamilyCount; ++f) {
    for (uint64_t i = 0; i < l.familyCount[f]; ++i) {
      const uint32_t t = l.tiles[l.familyFirst[f] + i];
      ASSERT_LT(t, tileFamily.size());
      EXPECT_EQ(tileFamily[t], static_cast<int>(f)) << "tile " << t;
      if (i > 0) {
        EXPECT_LT(l.tiles[l.familyFirst[f] + i - 1], t);
      }
      listed[t] += 1;
    }
  }
  for (size_t t = 0; t < listed.size(); ++t) EXPECT_EQ(listed[t], 1) << "tile " << t;
}

TEST(GeometrySlotLayout, RandomMixedBatchesKeepOneFamilyPerTile) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    expectValidLayout(randomBatch(seed, 500));
  }
}

TEST(GeometrySlotLayout, AlternatingFamiliesEmptyQueriesAndLongRuns) {
  Batch b;
  const uint32_t sphere = b.add(Geometry::sphere({0, 0, 0, 1}));
  const uint32_t box = b.add(Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1)));
  const uint32_t cyl = b.add(Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1, 1));
  const uint32_t empty = b.add(Geometry::pointSet(0, 0));
  b.points.assign(300, v3(0, 0, 0));
  const uint32_t big = b.add(Geometry::pointSet(0, 300));
  for (int i = 0; i < 70; ++i) {
    b.query(sphere, box);  // basic
    b.query(box, box);     // manifold
    b.query(empty, box);   // basic, no slot: no gap of its own
    b.query(cyl, box);     // convex
  }
  for (int i = 0; i < 100; ++i) b.query(sphere, sphere);
  b.query(big, cyl);
  b.query(empty, sphere);  // no slot at the end
  expectValidLayout(b);
  const detail::GeometrySlotLayout l = detail::geometrySlotLayout(b.geometries, b.queries);
  // Each of the 210 one-query runs starts a tile (the empty queries start none); the 100 sphere pairs
  // start tile 210 and the 300 points follow them in the same family.
  EXPECT_EQ(l.slotRange[1].first, kTile);
  EXPECT_EQ(l.slotRange[2].first, kTile + 8);  // the empty query takes no slot and starts no tile
  EXPECT_EQ(l.slotRange[3].first, 2 * kTile);
  EXPECT_EQ(l.slotRange[280].first, 210 * kTile);
  EXPECT_EQ(l.slotCount, 210 * kTile + 400);
  EXPECT_EQ(l.familyCount[gpu::kGeomFamilyBasic], 70u + 7u);
  EXPECT_EQ(l.familyCount[gpu::kGeomFamilyManifold], 70u);
  EXPECT_EQ(l.familyCount[gpu::kGeomFamilyConvex], 70u);
  EXPECT_EQ(l.familyCount[gpu::kGeomFamilyImplicit] + l.familyCount[gpu::kGeomFamilyContinuous], 0u);
}

TEST(GeometrySlotLayout, EmptyBatch) {
  Batch b;
  const detail::GeometrySlotLayout l = detail::geometrySlotLayout(b.geometries, b.queries);
  EXPECT_EQ(l.slotCount, 0u);
  EXPECT_TRUE(l.tiles.empty());
}

// Every static pair of two primitives has at most kGeomPrimitiveMaxSlots slots (the QUERY passes'
// loop, and the 4 bits of a primitive entry's count). In the convex family cylinder-cylinder has
// kGeomCylinderCylinderSlots and cylinder-box kGeomCylinderBoxSlots: the family shader evaluates a query's
// manifold once and its loop only picks the contacts (shared/geometry_queries_family.h, evaluateConvex).
TEST(GeometryQueriesLayout, PrimitivePairSlotsFitTheQueryPasses) {
  uint32_t convexPairs = 0;
  for (uint32_t ta = gpu::kGeomSphere; ta <= gpu::kGeomPlane; ++ta) {
    for (uint32_t tb = gpu::kGeomSphere; tb <= gpu::kGeomPlane; ++tb) {
      gpu::GeomShape a{}, b{};
      a.info.x = ta;
      b.info.x = tb;
      const uint32_t slots = gpu::geomSlotCount(a, b);
      const uint32_t family = gpu::geomQueryFamily(ta, tb, gpu::kGeomMethodStatic);
      EXPECT_LE(slots, gpu::kGeomPrimitiveMaxSlots) << ta << " " << tb;
      if (family == gpu::kGeomFamilyConvex) {
        const bool box = ta == gpu::kGeomOrientedBox || tb == gpu::kGeomOrientedBox;
        EXPECT_EQ(slots, box ? gpu::kGeomCylinderBoxSlots : gpu::kGeomCylinderCylinderSlots)
            << ta << " " << tb;
        ++convexPairs;
      }
    }
  }
  EXPECT_EQ(convexPairs, 3u);  // cylinder-cylinder, cylinder-box, box-cylinder
}

}  // namespace
}  // namespace vkc::test::geometry
