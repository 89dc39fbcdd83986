// The SIMD twin of the point-set pairs (src/cpu/geometry_queries_simd.cpp) against the scalar loop:
// the same contacts bit for bit, on every Highway target this build has, for random and degenerate
// primitives and points (centres, axes, surfaces, corners, signed zeros), sets whose size is not a
// multiple of the lane count, both query orders, and an output that overflows.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cpu/collide_shapes.h"  // forEachSimdTarget
#include "geometry_queries_test_support.h"

namespace vkc::test::geometry {
namespace {

Float4 quat(std::mt19937& rng) {
  std::normal_distribution<float> n(0.0f, 1.0f);
  Float4 q{n(rng), n(rng), n(rng), n(rng)};
  const float len = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  return Float4{q.x / len, q.y / len, q.z / len, q.w / len};
}

Float4 unit(std::mt19937& rng) {
  std::normal_distribution<float> n(0.0f, 1.0f);
  Float4 v{n(rng), n(rng), n(rng), 0.0f};
  const float len = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
  return Float4{v.x / len, v.y / len, v.z / len, 0.0f};
}

// Primitives of every type the SIMD twin handles, random and degenerate.
std::vector<Geometry> primitives(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_real_distribution<float> size(0.2f, 1.5f);
  std::vector<Geometry> g;
  g.push_back(Geometry::sphere({0, 0, 0, 1}));
  g.push_back(Geometry::sphere({u(rng), u(rng), u(rng), size(rng)}));
  g.push_back(Geometry::sphere({0.5f, 0, 0, 0}));  // radius 0
  g.push_back(Geometry::capsule(v3(0, -1, 0), v3(0, 1, 0), 0.5f));
  g.push_back(Geometry::capsule(v3(u(rng), u(rng), u(rng)), v3(u(rng), u(rng), u(rng)), size(rng)));
  g.push_back(Geometry::capsule(v3(0.25f, 0, 0), v3(0.25f, 0, 0), 0.75f));  // length 0
  g.push_back(Geometry::cylinder({0, 0, 0, 1}, v3(0, 1, 0), 1.0f, 0.5f));
  g.push_back(Geometry::cylinder({u(rng), u(rng), u(rng), 0}, unit(rng), size(rng), size(rng)));
  g.push_back(Geometry::cylinder({0, 0, 0, 0}, v3(0, 0, 1), 0.5f, 0.0f));  // a disc
  g.push_back(Geometry::orientedBox({0, 0, 0, 0}, identityQuat(), {1, 0.5f, 0.25f, 0}));
  g.push_back(Geometry::orientedBox({u(rng), u(rng), u(rng), 0}, quat(rng), {size(rng), size(rng), size(rng), 0}));
  g.push_back(Geometry::orientedBox({0, 0, 0, 0}, quat(rng), {1, 1, 0, 0}));  // flat
  g.push_back(Geometry::orientedBox({0, 0, 0, 0}, identityQuat(), {0.5f, 0.5f, 0.5f, 0}));  // a cube: ties
  g.push_back(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false));
  g.push_back(Geometry::plane(v3(u(rng), u(rng), u(rng)), unit(rng), true));
  return g;
}

// Random points around the primitives plus the special ones.
std::vector<Float4> points(std::mt19937& rng, size_t randomCount) {
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<Float4> p;
  for (size_t i = 0; i < randomCount; ++i) p.push_back(Float4{u(rng), u(rng), u(rng), u(rng)});
  const float special[] = {0.0f, -0.0f, 0.25f, 0.5f, -0.5f, 1.0f, -1.0f};
  for (float x : special) {
    for (float y : special) {
      for (float z : special) p.push_back(Float4{x, y, z, 0.0f});
    }
  }
  return p;
}

struct Outcome {
  Result<GeometryQueryCounts> counts;
  std::vector<ContactElement> a, b;
  std::vector<ContactRange> ranges;
};

Outcome run(const Batch& batch, Backend backend, size_t capacity) {
  Outcome r{GeometryQueryCounts{}, {}, {}, {}};
  ContactElement sentinel;
  sentinel.point = Float4{-7, -7, -7, -7};
  r.a.assign(capacity, sentinel);
  r.b.assign(capacity, sentinel);
  r.ranges.assign(batch.queries.size(), ContactRange{0xDEADu, 0xDEADu});
  r.counts = queryGeometriesCpu(batch.input(), {r.a, r.b, r.ranges}, backend);
  return r;
}

void expectSame(const Outcome& scalar, const Outcome& simd, const std::string& what) {
  ASSERT_TRUE(scalar.counts.ok()) << scalar.counts.error().message;
  ASSERT_TRUE(simd.counts.ok()) << simd.counts.error().message;
  EXPECT_EQ(scalar.counts->contacts, simd.counts->contacts) << what;
  EXPECT_EQ(scalar.counts->written, simd.counts->written) << what;
  EXPECT_EQ(scalar.counts->overflow, simd.counts->overflow) << what;
  for (size_t q = 0; q < scalar.ranges.size(); ++q) {
    EXPECT_EQ(scalar.ranges[q].first, simd.ranges[q].first) << what << " query " << q;
    EXPECT_EQ(scalar.ranges[q].count, simd.ranges[q].count) << what << " query " << q;
  }
  size_t differing = 0;
  for (size_t i = 0; i < scalar.a.size(); ++i) {
    if (!bitwiseEqual(scalar.a[i], simd.a[i]) || !bitwiseEqual(scalar.b[i], simd.b[i])) {
      if (++differing <= 3) {
        ADD_FAILURE() << what << ": contact " << i << " of query " << scalar.a[i].query << " differs: scalar A ("
                      << scalar.a[i].point.x << ", " << scalar.a[i].point.y << ", " << scalar.a[i].point.z
                      << ") depth " << scalar.a[i].point.w << ", SIMD A (" << simd.a[i].point.x << ", "
                      << simd.a[i].point.y << ", " << simd.a[i].point.z << ") depth " << simd.a[i].point.w;
      }
    }
  }
  EXPECT_EQ(differing, 0u) << what;
}

TEST(GeometryQueriesSimd, PointSetPairsEqualTheScalarLoopOnEveryTarget) {
  std::mt19937 rng(20261125u);
  Batch batch;
  const std::vector<Geometry> prims = primitives(rng);
  // Sets of 1, 3, 17 and 1000 random points (+ 343 special ones in the big set).
  std::vector<uint32_t> sets;
  for (size_t n : {size_t{1}, size_t{3}, size_t{17}}) {
    std::vector<Float4> p = points(rng, n);
    p.resize(n);
    sets.push_back(batch.addPoints(p));
  }
  sets.push_back(batch.addPoints(points(rng, 1000)));
  for (const Geometry& g : prims) {
    const uint32_t gi = batch.add(g);
    for (uint32_t s : sets) {
      batch.query(s, gi);
      batch.query(gi, s);
    }
  }
  const Outcome scalar = run(batch, Backend::kCpuScalar, 40000);
  ASSERT_TRUE(scalar.counts.ok()) << scalar.counts.error().message;
  ASSERT_FALSE(scalar.counts->overflow);
  // Every primitive with a volume has points inside it (the test compares real contacts, not empty
  // outputs); the degenerate ones (radius 0, a disc, a flat box) have none.
  for (size_t i = 0; i < prims.size(); ++i) {
    const Geometry& g = prims[i];
    const bool degenerate = (g.type == GeometryType::kSphere && g.p0.w == 0.0f) ||
                            (g.type == GeometryType::kCylinder && g.p1.w == 0.0f) ||
                            (g.type == GeometryType::kOrientedBox && g.p2.z == 0.0f);
    if (!degenerate) {
      EXPECT_GT(scalar.ranges[8 * i + 6].count, 0u) << "primitive " << i << " has no point inside";
    }
  }
  size_t targets = 0;
  cpu::forEachSimdTarget([&](const char* target) {
    ++targets;
    expectSame(scalar, run(batch, Backend::kCpuSimd, 40000), std::string("target ") + target);
  });
  EXPECT_GE(targets, 1u);
}

TEST(GeometryQueriesSimd, OverflowWritesTheSamePrefix) {
  std::mt19937 rng(7u);
  Batch batch;
  const uint32_t set = batch.addPoints(points(rng, 500));
  const uint32_t box = batch.add(Geometry::orientedBox({0, 0, 0, 0}, quat(rng), {1.5f, 1.0f, 0.5f, 0}));
  const uint32_t sphere = batch.add(Geometry::sphere({0.5f, 0, 0, 1.25f}));
  batch.query(set, box);
  batch.query(sphere, set);
  const size_t capacity = 97;  // inside the first query's contacts
  const Outcome scalar = run(batch, Backend::kCpuScalar, capacity);
  ASSERT_TRUE(scalar.counts.ok());
  ASSERT_TRUE(scalar.counts->overflow);
  ASSERT_GT(scalar.ranges[0].count, capacity);
  cpu::forEachSimdTarget([&](const char* target) {
    const Outcome simd = run(batch, Backend::kCpuSimd, capacity);
    expectSame(scalar, simd, std::string("target ") + target);
  });
}

}  // namespace
}  // namespace vkc::test::geometry
