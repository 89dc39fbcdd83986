// The SIMD twins (src/cpu/geometry_queries_simd.cpp) against the scalar loop: the same contacts bit
// for bit, on every Highway target this build has.
//  - Point-set pairs (lanes across points): random and degenerate primitives and points (centres,
//    axes, surfaces, corners, signed zeros), sets whose size is not a multiple of the lane count,
//    both query orders, and an output that overflows.
//  - Closed-form primitive pairs (lanes across queries): long runs of one pair type and mixed runs
//    (runs of every length, broken by other pairs), random and degenerate shapes (zero radius, zero
//    length or height, flat boxes, coincident centres, touching, quantized ties, not quite unit
//    axes), both query orders and a geometry against itself, and overflow inside a run.
//  - The fused pass (cpu::fusedPrimitivePairs: validation and lanes in one pass over the geometries,
//    the output from staging) on the same runs, queries in any order over the geometries and
//    geometries no query reads; its bad inputs report validate()'s error and write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <initializer_list>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cpu/collide_shapes.h"  // forEachSimdTarget
#include "cpu/geometry_queries.h"  // fusedPrimitivePairs
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

// Point sets of 1, 3 and 17 random points and the set `big` (their sizes not multiples of the lane
// count): their geometries.
std::vector<uint32_t> addPointSets(Batch& batch, std::mt19937& rng, const std::vector<Float4>& big) {
  std::vector<uint32_t> sets;
  for (size_t n : {size_t{1}, size_t{3}, size_t{17}}) {
    std::vector<Float4> p = points(rng, n);
    p.resize(n);
    sets.push_back(batch.addPoints(p));
  }
  sets.push_back(batch.addPoints(big));
  return sets;
}

struct Outcome {
  Result<GeometryQueryCounts> counts;
  std::vector<ContactElement> a, b;
  std::vector<ContactRange> ranges;
};

// Runs the batch with room for `capacity` contacts (the output filled with a sentinel first); a batch
// with continuous queries passes `state` (updated).
Outcome run(const Batch& batch, Backend backend, size_t capacity, std::span<Float4> state = {}) {
  Outcome r{GeometryQueryCounts{}, {}, {}, {}};
  ContactElement sentinel;
  sentinel.point = Float4{-7, -7, -7, -7};
  r.a.assign(capacity, sentinel);
  r.b.assign(capacity, sentinel);
  r.ranges.assign(batch.queries.size(), ContactRange{0xDEADu, 0xDEADu});
  r.counts = queryGeometriesCpu(batch.input(), {r.a, r.b, r.ranges, state}, backend);
  return r;
}

Outcome runWithState(Batch& batch, Backend backend, size_t capacity) {
  return run(batch, backend, capacity, batch.state);
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

// kCpuSimd against the scalar loop on every SIMD target: at `capacity` against `scalar` (the scalar
// loop's run at that capacity), and at each of `cuts` (capacities ending inside the contacts) against
// the scalar loop at the same capacity. `what` prefixes the messages.
void expectScalarsOnEveryTarget(const Batch& batch, const Outcome& scalar, size_t capacity,
                                std::initializer_list<size_t> cuts = {}, const std::string& what = "") {
  size_t targets = 0;
  cpu::forEachSimdTarget([&](const char* target) {
    ++targets;
    expectSame(scalar, run(batch, Backend::kCpuSimd, capacity),
               what + "target " + target + ", capacity " + std::to_string(capacity));
    for (size_t cut : cuts) {
      expectSame(run(batch, Backend::kCpuScalar, cut), run(batch, Backend::kCpuSimd, cut),
                 what + "target " + target + ", capacity " + std::to_string(cut));
    }
  });
  EXPECT_GE(targets, 1u);
}

// Static queries of each set against each of `others`, both orders (set k against other g: query
// 2 (g sets.size() + k)), run on kCpuScalar with room for 40 000 contacts.
Outcome queryEachBothOrders(Batch& batch, const std::vector<uint32_t>& sets,
                            const std::vector<uint32_t>& others) {
  for (uint32_t g : others) {
    for (uint32_t s : sets) {
      batch.query(s, g);
      batch.query(g, s);
    }
  }
  Outcome scalar = run(batch, Backend::kCpuScalar, 40000);
  EXPECT_TRUE(scalar.counts.ok()) << scalar.counts.error().message;
  return scalar;
}

TEST(GeometryQueriesSimd, PointSetPairsEqualTheScalarLoopOnEveryTarget) {
  std::mt19937 rng(20261125u);
  Batch batch;
  const std::vector<Geometry> prims = primitives(rng);
  // Sets of 1, 3, 17 and 1000 random points (+ 343 special ones in the big set).
  const std::vector<uint32_t> sets = addPointSets(batch, rng, points(rng, 1000));
  std::vector<uint32_t> others;
  for (const Geometry& g : prims) others.push_back(batch.add(g));
  const Outcome scalar = queryEachBothOrders(batch, sets, others);
  ASSERT_TRUE(scalar.counts.ok() && !scalar.counts->overflow);
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
  expectScalarsOnEveryTarget(batch, scalar, 40000);
}

// Implicit geometries for the SIMD tests: a sampled sphere, a box field on an anisotropic grid of
// unequal dimensions, a constant field (zero gradient: the fallback normal), the smallest grid (2^3),
// each at its own first sample.
std::vector<uint32_t> addTestGrids(Batch& batch) {
  std::vector<uint32_t> grids;
  grids.push_back(batch.addGrid(v3(-1.0f, -1.0f, -1.0f), 0.1f, 21, [](float x, float y, float z) {
    return std::sqrt(x * x + y * y + z * z) - 0.8f;
  }));
  {
    const uint32_t nx = 9, ny = 6, nz = 4;
    const Float4 origin = v3(-1.2f, -0.75f, -0.5f);
    const Float4 spacing = v3(0.3f, 0.3f, 1.0f / 3.0f);
    const uint32_t first = static_cast<uint32_t>(batch.gridSamples.size());
    for (uint32_t k = 0; k < nz; ++k) {
      for (uint32_t j = 0; j < ny; ++j) {
        for (uint32_t i = 0; i < nx; ++i) {
          const float x = std::abs(origin.x + static_cast<float>(i) * spacing.x) - 0.9f;
          const float y = std::abs(origin.y + static_cast<float>(j) * spacing.y) - 0.45f;
          const float z = std::abs(origin.z + static_cast<float>(k) * spacing.z) - 0.3f;
          batch.gridSamples.push_back(std::max(x, std::max(y, z)));
        }
      }
    }
    grids.push_back(batch.add(Geometry::implicitGrid(origin, spacing, nx, ny, nz, first)));
  }
  grids.push_back(
      batch.addGrid(v3(-0.5f, -0.5f, -0.5f), 0.5f, 4, [](float, float, float) { return -0.25f; }));
  grids.push_back(batch.addGrid(v3(0.0f, 0.0f, 0.0f), 1.0f, 2,
                                [](float x, float y, float z) { return x + 0.5f * y - 0.25f * z - 0.5f; }));
  return grids;
}

// Point sets against implicit geometries (lanes across points, the samples gathered): a sampled
// sphere, a box field on an anisotropic grid of unequal dimensions, a constant field (zero gradient:
// the fallback normal), the smallest grid (2^3), each at its own first sample; points inside, on the
// grid's nodes and far faces, outside its box, signed zeros; sets of every tail length, both orders.
TEST(GeometryQueriesSimd, PointSetImplicitPairsEqualTheScalarLoopOnEveryTarget) {
  std::mt19937 rng(20261129u);
  Batch batch;
  const std::vector<uint32_t> grids = addTestGrids(batch);
  std::vector<Float4> big = points(rng, 1500);
  for (uint32_t i = 0; i <= 20; i += 4) {  // on the sphere grid's nodes and far faces
    for (uint32_t j = 0; j <= 20; j += 5) {
      big.push_back(v3(-1.0f + 0.1f * static_cast<float>(i), -1.0f + 0.1f * static_cast<float>(j), 1.0f));
    }
  }
  const std::vector<uint32_t> sets = addPointSets(batch, rng, big);
  const Outcome scalar = queryEachBothOrders(batch, sets, grids);
  ASSERT_TRUE(scalar.counts.ok() && !scalar.counts->overflow);
  for (size_t g = 0; g < grids.size(); ++g) {  // every field has points inside it in the big set
    EXPECT_GT(scalar.ranges[8 * g + 6].count, 0u) << "grid " << g << " has no point inside";
  }
  // An output that overflows inside the big set's contacts writes the same prefix.
  expectScalarsOnEveryTarget(batch, scalar, 40000, {scalar.ranges[6].first + scalar.ranges[6].count / 2});
}

// Boxes, cylinders and planes against implicit geometries (lanes across each row of the shape's
// sample box): the test grids (anisotropic, constant, 2^3) and the SampleBoxes shapes' kinds (turned,
// tiny, larger than the grid, flat, of radius or height 0, far outside, across the faces; one-sided
// planes through the fields, axis-aligned floors), the test grids against each other, rows of every
// tail length, both orders, an output that overflows inside a query's contacts; every SIMD target
// against the scalar loop.
TEST(GeometryQueriesSimd, ShapeImplicitPairsEqualTheScalarLoopOnEveryTarget) {
  std::mt19937 rng(20261130u);
  Batch batch;
  const std::vector<uint32_t> grids = addTestGrids(batch);
  std::vector<uint32_t> shapes;
  for (uint32_t n = 0; n < 60; ++n) {
    const TurnedShapes t =
        addTurnedBoxAndCylinder(batch, rng, static_cast<uint32_t>(rng() % 12), 4.0f, 1.2f, 0.8f);
    shapes.push_back(t.box);
    shapes.push_back(t.cylinder);
    if (n % 6 == 0) shapes.push_back(batch.add(Geometry::plane(t.centre, t.axis, false)));
  }
  shapes.push_back(batch.add(Geometry::plane(v3(0, -0.3f, 0), v3(0, 1, 0), false)));
  shapes.push_back(batch.add(Geometry::plane(v3(0, 0, 0.2f), v3(0, 0, -1), true)));
  for (uint32_t shape : shapes) {
    queryEitherWay(batch, grids[rng() % grids.size()], shape, rng);
  }
  for (uint32_t g : grids) {  // two implicit geometries: each grid's rows against the other's field
    for (uint32_t other : grids) {
      if (g != other) batch.query(g, other);
    }
  }
  const Outcome scalar = run(batch, Backend::kCpuScalar, 400000);
  ASSERT_TRUE(scalar.counts.ok() && !scalar.counts->overflow) << scalar.counts.error().message;
  EXPECT_GT(scalar.counts->contacts, 2000u);
  expectScalarsOnEveryTarget(batch, scalar, 400000, {scalar.counts->contacts / 2});  // inside a query's
}

// Spheres against implicit geometries (lanes across a run of queries with the same grid): runs of
// every length 1 to 40 against each test grid, broken by a box or another grid, both orders, radii
// 0 to 0.5 (centres inside, near the surface, outside the grid's box), at full capacity and at
// capacities ending inside a run; every SIMD target against the scalar loop.
TEST(GeometryQueriesSimd, SphereImplicitRunsEqualTheScalarLoopOnEveryTarget) {
  std::mt19937 rng(20261131u);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_real_distribution<float> radius(0.0f, 0.5f);
  Batch batch;
  const std::vector<uint32_t> grids = addTestGrids(batch);
  const uint32_t box = batch.add(Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(0.3f, 0.3f, 0.3f)));
  for (uint32_t length = 1; length <= 40; ++length) {
    const uint32_t grid = grids[length % grids.size()];
    for (uint32_t k = 0; k < length; ++k) {
      const float reach = k % 7 == 0 ? 2.5f : 1.1f;
      const uint32_t sphere = batch.add(Geometry::sphere(
          {reach * u(rng), reach * u(rng), reach * u(rng), k % 9 == 0 ? 0.0f : radius(rng)}));
      queryEitherWay(batch, grid, sphere, rng);
    }
    batch.query(length % 2 == 0 ? box : grids[(length + 1) % grids.size()], grid);  // ends the run
  }
  const Outcome scalar = run(batch, Backend::kCpuScalar, 40000);
  ASSERT_TRUE(scalar.counts.ok()) << scalar.counts.error().message;
  ASSERT_FALSE(scalar.counts->overflow);
  uint32_t sphereContacts = 0;
  for (size_t q = 0; q < batch.queries.size(); ++q) {
    const GeometryQuery& query = batch.queries[q];
    const bool sphere = batch.geometries[query.a].type == GeometryType::kSphere ||
                        batch.geometries[query.b].type == GeometryType::kSphere;
    sphereContacts += sphere ? scalar.ranges[q].count : 0;
  }
  EXPECT_GT(sphereContacts, 150u);
  expectScalarsOnEveryTarget(batch, scalar, 40000, {0, 1, scalar.counts->contacts / 3});
}

// Capsules against implicit geometries (lanes across a run of queries with the same grid: the axis
// point of least field in lanes, then its ball and the end balls): runs of every length 1 to 40
// against each test grid, broken by a sphere on the same grid (a run of the other kind), a box or
// another grid, both orders; random capsules, capsules lying on the sampled sphere (three contacts),
// of length 0, of radius 0, reaching outside the grid's box; at full capacity and at capacities
// ending inside a run and inside a query's contacts; every SIMD target against the scalar loop.
TEST(GeometryQueriesSimd, CapsuleImplicitRunsEqualTheScalarLoopOnEveryTarget) {
  std::mt19937 rng(20261132u);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_real_distribution<float> radius(0.0f, 0.4f);
  Batch batch;
  const std::vector<uint32_t> grids = addTestGrids(batch);
  const uint32_t box = batch.add(Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(0.3f, 0.3f, 0.3f)));
  const uint32_t sphere = batch.add(Geometry::sphere({0.1f, 0.2f, -0.7f, 0.3f}));
  for (uint32_t length = 1; length <= 40; ++length) {
    const uint32_t grid = grids[length % grids.size()];
    for (uint32_t k = 0; k < length; ++k) {
      const float reach = k % 7 == 0 ? 2.5f : 1.1f;
      const Float4 p0 = v3(reach * u(rng), reach * u(rng), reach * u(rng));
      Float4 p1 = v3(p0.x + u(rng), p0.y + u(rng), p0.z + u(rng));
      float r = k % 9 == 0 ? 0.0f : radius(rng);
      if (k % 5 == 1) {  // lying on the sampled sphere (radius 0.8) along a tangent: three contacts there
        const Float4 n = nudgedUnit(rng);
        const Float4 t = nudgedUnit(rng);
        const float along = t.x * n.x + t.y * n.y + t.z * n.z;
        const Float4 tangent = v3(t.x - along * n.x, t.y - along * n.y, t.z - along * n.z);
        r = 0.1f;
        const Float4 c = v3(0.85f * n.x, 0.85f * n.y, 0.85f * n.z);
        const Float4 p0t = v3(c.x - 0.2f * tangent.x, c.y - 0.2f * tangent.y, c.z - 0.2f * tangent.z);
        p1 = v3(c.x + 0.2f * tangent.x, c.y + 0.2f * tangent.y, c.z + 0.2f * tangent.z);
        queryEitherWay(batch, grid, batch.add(Geometry::capsule(p0t, p1, r)), rng);
        continue;
      }
      if (k % 11 == 3) p1 = p0;  // length 0
      queryEitherWay(batch, grid, batch.add(Geometry::capsule(p0, p1, r)), rng);
    }
    const uint32_t breaker =
        length % 3 == 0 ? sphere : (length % 3 == 1 ? box : grids[(length + 1) % grids.size()]);
    batch.query(breaker, grid);  // ends the run
  }
  const Outcome scalar = run(batch, Backend::kCpuScalar, 40000);
  ASSERT_TRUE(scalar.counts.ok()) << scalar.counts.error().message;
  ASSERT_FALSE(scalar.counts->overflow);
  uint32_t capsuleContacts = 0;
  uint32_t threeContacts = 0;
  size_t threeAt = 0;
  for (size_t q = 0; q < batch.queries.size(); ++q) {
    const GeometryQuery& query = batch.queries[q];
    const bool capsule = batch.geometries[query.a].type == GeometryType::kCapsule ||
                         batch.geometries[query.b].type == GeometryType::kCapsule;
    if (!capsule) continue;
    capsuleContacts += scalar.ranges[q].count;
    if (scalar.ranges[q].count == 3) {
      ++threeContacts;
      threeAt = scalar.ranges[q].first;
    }
  }
  EXPECT_GT(capsuleContacts, 150u);
  EXPECT_GT(threeContacts, 10u);
  expectScalarsOnEveryTarget(batch, scalar, 40000,
                             {0, 1, scalar.counts->contacts / 3, static_cast<uint32_t>(threeAt + 1)});
}

// Point sets of 1, 3, 17 and 1 200 random and special points, previous positions a step back (one
// point in eight jumping 6x farther: 1.5 per axis), continuous queries against each of `others` in
// both orders; returns the big set's first query.
size_t addMovingSets(Batch& batch, std::mt19937& rng, const std::vector<Geometry>& others) {
  std::uniform_real_distribution<float> step(-0.25f, 0.25f);
  const std::vector<uint32_t> sets = addPointSets(batch, rng, points(rng, 857));  // 857 + 343 special points
  for (const Float4& p : batch.points) {
    const float scale = rng() % 8 == 0 ? 6.0f : 1.0f;
    batch.previousPoints.push_back(
        v3(p.x - scale * step(rng), p.y - scale * step(rng), p.z - scale * step(rng)));
  }
  uint32_t stateAt = 0;
  for (const Geometry& g : others) {
    const uint32_t gi =
        g.type == GeometryType::kImplicitGeometry ? static_cast<uint32_t>(&g - others.data()) : batch.add(g);
    for (uint32_t s : sets) {
      batch.continuous(s, gi, stateAt);
      stateAt += batch.geometries[s].count;
      batch.continuous(gi, s, stateAt);
      stateAt += batch.geometries[s].count;
    }
  }
  return 6;  // the big set's first query against the first geometry
}

// Three chained steps of `batch`'s continuous queries (each step's points moving on from the last, so
// that saved points, the persistent contact, are in the later steps' states): kCpuSimd equals
// kCpuScalar in contacts, ranges and states on every target, at full capacity and overflowing inside
// query `bigQuery`'s contacts.
void expectContinuousStepsAsScalar(Batch& batch, std::mt19937& rng, size_t bigQuery,
                                   const std::string& label) {
  std::uniform_real_distribution<float> step(-0.25f, 0.25f);
  for (uint32_t stepIndex = 0; stepIndex < 3; ++stepIndex) {
    const std::vector<Float4> start = batch.state;
    const Outcome scalar = runWithState(batch, Backend::kCpuScalar, 80000);
    ASSERT_TRUE(scalar.counts.ok()) << scalar.counts.error().message;
    ASSERT_FALSE(scalar.counts->overflow);
    EXPECT_GT(scalar.counts->contacts, 1000u) << label;
    const std::vector<Float4> scalarState = batch.state;
    size_t saved = 0;
    for (const Float4& s : scalarState) saved += s.w != 0.0f ? 1u : 0u;
    if (stepIndex > 0) {
      EXPECT_GT(saved, 100u) << label << ", step " << stepIndex << ": no saved points";
    }
    cpu::forEachSimdTarget([&](const char* target) {
      const std::string what = label + ", step " + std::to_string(stepIndex) + ", target " + target;
      batch.state = start;
      expectSame(scalar, runWithState(batch, Backend::kCpuSimd, 80000), what);
      EXPECT_EQ(std::memcmp(batch.state.data(), scalarState.data(), scalarState.size() * sizeof(Float4)), 0)
          << what << ": states differ";
      const size_t capacity = scalar.ranges[bigQuery].first + scalar.ranges[bigQuery].count / 2;
      batch.state = start;
      const Outcome scalarCut = runWithState(batch, Backend::kCpuScalar, capacity);
      batch.state = start;
      expectSame(scalarCut, runWithState(batch, Backend::kCpuSimd, capacity), "overflow, " + what);
      EXPECT_EQ(std::memcmp(batch.state.data(), scalarState.data(), scalarState.size() * sizeof(Float4)), 0)
          << "overflow, " << what << ": states differ";
    });
    batch.state = scalarState;
    for (size_t i = 0; i < batch.points.size(); ++i) {  // the next step: the points move on
      batch.previousPoints[i] = batch.points[i];
      const float scale = rng() % 8 == 0 ? 6.0f : 1.0f;
      batch.points[i] = v3(batch.points[i].x + scale * step(rng), batch.points[i].y + scale * step(rng),
                           batch.points[i].z + scale * step(rng));
    }
  }
}

// Continuous point sets against every analytic primitive (lanes across the points, the traces in
// lanes): static, translating and turning primitives (geomPoseMap). A perturbed rotation, a wrong
// pose or an ignored saved point fails it.
TEST(GeometryQueriesSimd, ContinuousPointSetsEqualTheScalarLoopOnEveryTarget) {
  for (const uint32_t motion : {0u, 1u, 2u}) {  // static, translating, turning primitives
    std::mt19937 rng(20261130u + motion);
    Batch batch;
    const size_t big = addMovingSets(batch, rng, primitives(rng));
    if (motion != 0u) {
      batch.previousGeometries = batch.geometries;
      for (Geometry& g : batch.previousGeometries) {
        if (g.type == GeometryType::kPointSet) continue;
        if (motion == 1u || g.type == GeometryType::kSphere) {
          g.p0.x -= 0.1f;  // each translates; a capsule's both ends
          if (g.type == GeometryType::kCapsule) g.p1.x -= 0.1f;
          continue;
        }
        // Turning: a box's other rotation, a cylinder's or plane's other axis, a capsule's segment
        // turned a quarter turn about z around its middle (the same length).
        if (g.type == GeometryType::kOrientedBox) g.p1 = quat(rng);
        if (g.type == GeometryType::kCylinder || g.type == GeometryType::kPlane) {
          const Float4 a = unit(rng);
          g.p1 = Float4{a.x, a.y, a.z, g.p1.w};
        }
        if (g.type == GeometryType::kCapsule) {
          const Float4 m = v3(0.5f * (g.p0.x + g.p1.x), 0.5f * (g.p0.y + g.p1.y), 0.5f * (g.p0.z + g.p1.z));
          const Float4 d = v3(0.5f * (g.p1.x - g.p0.x), 0.5f * (g.p1.y - g.p0.y), 0.5f * (g.p1.z - g.p0.z));
          g.p0 = Float4{m.x + d.y, m.y - d.x, m.z - d.z, g.p0.w};
          g.p1 = Float4{m.x - d.y, m.y + d.x, m.z + d.z, g.p1.w};
        }
      }
    }
    expectContinuousStepsAsScalar(batch, rng, big,
                                  motion == 0u ? "static" : (motion == 1u ? "translating" : "turning"));
  }
}

// Continuous point sets against implicit geometries (lanes across the points: each lane's cell walk,
// its cells' cubic roots, the gradient at the root): addTestGrids' fields, static and translating
// (an implicit geometry's origin may move), with jumps of up to 45 cells (the trace list reordered by
// walk length).
TEST(GeometryQueriesSimd, ContinuousPointSetsAgainstGridsEqualTheScalarLoopOnEveryTarget) {
  for (const uint32_t motion : {0u, 1u}) {
    std::mt19937 rng(20261131u + motion);
    Batch batch;
    const std::vector<uint32_t> grids = addTestGrids(batch);
    const std::vector<Geometry> fields(batch.geometries.begin(), batch.geometries.end());
    ASSERT_EQ(grids.size(), fields.size());
    const size_t big = addMovingSets(batch, rng, fields);
    if (motion == 1u) {
      batch.previousGeometries = batch.geometries;
      for (Geometry& g : batch.previousGeometries) {
        if (g.type == GeometryType::kImplicitGeometry) g.p0 = v3(g.p0.x - 0.15f, g.p0.y + 0.05f, g.p0.z);
      }
    }
    expectContinuousStepsAsScalar(batch, rng, big, motion == 0u ? "static grids" : "translating grids");
  }
}

// Continuous and static point sets against a grid whose negative samples are few (kCpuSimd marks the
// bricks of 4^3 cells holding one, traces only the points whose segments reach a marked brick and
// evaluates only the static points in a marked brick's cells): a 48^3 grid
// with a small sampled ball, a slab one cell thick and single negative samples on bricks' borders
// (each marks the cells on both sides of it), 30 000 points near them and far from them, moving up
// to three cells a step (one in twenty jumps 20 cells: more than two bricks an axis), three steps
// with the states carried, static and translating grids; both orders; every SIMD target against the
// scalar loop, contacts and states bit for bit.
TEST(GeometryQueriesSimd, ContinuousPointSetsAgainstSparseGridsEqualTheScalarLoopOnEveryTarget) {
  for (const uint32_t motion : {0u, 1u}) {
    std::mt19937 rng(20261133u + motion);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    Batch batch;
    constexpr uint32_t kN = 48;
    const float h = 2.0f / static_cast<float>(kN - 1);
    const uint32_t grid = batch.addGrid(v3(-1, -1, -1), h, kN, [](float x, float y, float z) {
      const float ball =
          std::sqrt((x - 0.3f) * (x - 0.3f) + (y + 0.2f) * (y + 0.2f) + (z - 0.1f) * (z - 0.1f)) - 0.15f;
      const float slab = std::abs(z + 0.5f) - 0.02f;
      return std::min(ball, std::max(slab, std::abs(x) - 0.4f));
    });
    const uint32_t first = batch.geometries[grid].first;
    // Single negative samples at indices 8, 20, 36 (bricks' borders: cells 4m - 1 and 4m), at 11, 27,
    // 43 (cells 4m + 2 and 4m + 3: one brick) and on the grid's last layer.
    const uint32_t singles[][3] = {{8, 20, 36},     {20, 8, 8},   {36, 36, 20}, {kN - 1, 12, 4},
                                   {24, 0, kN - 1}, {11, 27, 43}, {43, 11, 27}, {27, 43, 11}};
    std::vector<Float4> near;
    for (const auto& at : singles) {
      batch.gridSamples[first + at[0] + kN * (at[1] + kN * at[2])] = -0.3f;
      near.push_back(v3(-1 + h * static_cast<float>(at[0]), -1 + h * static_cast<float>(at[1]),
                        -1 + h * static_cast<float>(at[2])));
    }
    near.push_back(v3(0.3f, -0.2f, 0.1f));
    near.push_back(v3(0.0f, 0.0f, -0.5f));
    std::vector<Float4> pts;
    for (uint32_t i = 0; i < 30000; ++i) {
      if (i % 2 == 0) {  // anywhere in and around the grid
        pts.push_back(v3(1.1f * u(rng), 1.1f * u(rng), 1.1f * u(rng)));
      } else {  // within 3 cells of a feature
        const Float4& c = near[rng() % near.size()];
        pts.push_back(v3(c.x + 3 * h * u(rng), c.y + 3 * h * u(rng), c.z + 3 * h * u(rng)));
      }
    }
    const uint32_t set = batch.addPoints(pts);
    const auto moveAll = [&](std::vector<Float4>& from, const std::vector<Float4>& to) {
      from.resize(to.size());
      for (size_t i = 0; i < to.size(); ++i) {
        // One in twenty jumps 20 cells; a few come from 10^3 or 10^6 units away (past 2^20 cells).
        const float scale =
            (i % 997 == 5 ? (i % 2 == 0 ? 1e3f : 1e6f) : (i % 20 == 7 ? 20.0f * h : 3.0f * h));
        from[i] = v3(to[i].x - scale * u(rng), to[i].y - scale * u(rng), to[i].z - scale * u(rng));
      }
    };
    moveAll(batch.previousPoints, batch.points);
    batch.continuous(set, grid, 0);
    batch.continuous(grid, set, static_cast<uint32_t>(pts.size()));
    batch.query(set, grid);  // static: only the points in cells with a negative sample evaluated
    batch.query(grid, set);
    if (motion == 1u) {
      batch.previousGeometries = batch.geometries;
      Geometry& g = batch.previousGeometries[grid];
      g.p0 = v3(g.p0.x - 2.5f * h, g.p0.y + 0.5f * h, g.p0.z);
    }
    for (uint32_t step = 0; step < 3; ++step) {
      const std::vector<Float4> start = batch.state;
      const Outcome scalar = runWithState(batch, Backend::kCpuScalar, 200000);
      ASSERT_TRUE(scalar.counts.ok()) << scalar.counts.error().message;
      ASSERT_FALSE(scalar.counts->overflow);
      EXPECT_GT(scalar.counts->contacts, 2000u);
      const std::vector<Float4> scalarState = batch.state;
      cpu::forEachSimdTarget([&](const char* target) {
        const std::string what = std::string(motion == 0u ? "static" : "translating") + ", step " +
                                 std::to_string(step) + ", target " + target;
        batch.state = start;
        expectSame(scalar, runWithState(batch, Backend::kCpuSimd, 200000), what);
        EXPECT_EQ(std::memcmp(batch.state.data(), scalarState.data(), scalarState.size() * sizeof(Float4)), 0)
            << what << ": states differ";
        // An output that overflows inside the first query's listed points writes the same prefix.
        const size_t capacity = scalar.ranges[0].count / 2;
        batch.state = start;
        const Outcome scalarCut = runWithState(batch, Backend::kCpuScalar, capacity);
        batch.state = start;
        expectSame(scalarCut, runWithState(batch, Backend::kCpuSimd, capacity), "overflow, " + what);
      });
      batch.state = scalarState;
      const std::vector<Float4> now = batch.points;
      batch.previousPoints = now;
      moveAll(batch.points, now);  // the next step: each point moves on from where it is
      for (size_t i = 0; i < now.size(); ++i) {
        batch.points[i] = v3(2 * now[i].x - batch.points[i].x, 2 * now[i].y - batch.points[i].y,
                             2 * now[i].z - batch.points[i].z);
      }
    }
  }
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

// ---- Closed-form primitive pairs: lanes across queries ----------------------------------------

uint32_t draw(std::mt19937& rng, uint32_t n) { return static_cast<uint32_t>(rng() % n); }

// A random primitive of `type`, one time in two a degenerate or quantized one.
Geometry randomPrimitive(GeometryType type, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_real_distribution<float> size(0.05f, 1.2f);
  const uint32_t pick = draw(rng, 10u);
  // Quantized coordinates (multiples of 0.5): exact ties and touching pairs.
  const auto q = [&](float v) { return pick == 9u ? std::round(v * 2.0f) * 0.5f : v; };
  const Float4 c = pick == 1u ? v3(0, 0, 0) : v3(q(u(rng)), q(u(rng)), q(u(rng)));
  const float r = pick == 0u ? 0.0f : q(size(rng));
  switch (type) {
    case GeometryType::kSphere: return Geometry::sphere(Float4{c.x, c.y, c.z, r});
    case GeometryType::kCapsule: {
      if (pick == 2u) return Geometry::capsule(c, c, r);                                // length 0
      if (pick == 3u) return Geometry::capsule(v3(-0.5f, c.y, 0), v3(0.5f, c.y, 0), r);  // parallel to x
      if (pick == 4u) return Geometry::capsule(v3(0, 0, 0), v3(0, q(u(rng)), 0), r);    // from the origin
      return Geometry::capsule(c, v3(q(u(rng)), q(u(rng)), q(u(rng))), r);
    }
    case GeometryType::kCylinder: {
      Float4 axis = pick == 2u ? v3(0, 0, 1) : (pick == 3u ? v3(1, 0, 0) : unit(rng));
      if (pick == 5u) axis = Float4{axis.x * 1.0005f, axis.y * 1.0005f, axis.z * 1.0005f, 0.0f};  // not quite unit
      const float halfHeight = pick == 4u ? 0.0f : q(size(rng));
      return Geometry::cylinder(c, axis, r, halfHeight);
    }
    case GeometryType::kOrientedBox: {
      Float4 rot = pick == 2u || pick == 9u ? identityQuat() : quat(rng);
      if (pick == 5u) rot = Float4{rot.x * 0.9995f, rot.y * 0.9995f, rot.z * 0.9995f, rot.w * 0.9995f};
      Float4 h{q(size(rng)), q(size(rng)), q(size(rng)), 0.0f};
      if (pick == 3u) h.z = 0.0f;                 // flat
      if (pick == 4u) h = Float4{0, 0, 0, 0};     // a point
      if (pick == 6u) h = Float4{0.5f, 0.5f, 0.5f, 0};  // a cube: face ties
      return Geometry::orientedBox(c, rot, h);
    }
    default: {
      Float4 n = pick == 2u ? v3(0, 1, 0) : (pick == 3u ? v3(0, 0, -1) : unit(rng));
      if (pick == 5u) n = Float4{n.x * 0.9995f, n.y * 0.9995f, n.z * 0.9995f, 0.0f};
      return Geometry::plane(c, n, draw(rng, 2u) != 0u);
    }
  }
}

struct PairType {
  GeometryType a;
  GeometryType b;
  const char* name;
};

// The pairs kCpuSimd runs with lanes across queries.
const PairType kLanePairs[] = {
    {GeometryType::kSphere, GeometryType::kSphere, "sphere-sphere"},
    {GeometryType::kSphere, GeometryType::kCapsule, "sphere-capsule"},
    {GeometryType::kSphere, GeometryType::kCylinder, "sphere-cylinder"},
    {GeometryType::kSphere, GeometryType::kOrientedBox, "sphere-box"},
    {GeometryType::kSphere, GeometryType::kPlane, "sphere-plane"},
    {GeometryType::kCapsule, GeometryType::kCapsule, "capsule-capsule"},
    {GeometryType::kCapsule, GeometryType::kCylinder, "capsule-cylinder"},
    {GeometryType::kCylinder, GeometryType::kPlane, "cylinder-plane"},
    {GeometryType::kCapsule, GeometryType::kPlane, "capsule-plane"},
    {GeometryType::kOrientedBox, GeometryType::kPlane, "box-plane"},
    {GeometryType::kCapsule, GeometryType::kOrientedBox, "capsule-box"},
    {GeometryType::kOrientedBox, GeometryType::kOrientedBox, "box-box"},
    {GeometryType::kCylinder, GeometryType::kOrientedBox, "cylinder-box"},
    {GeometryType::kCylinder, GeometryType::kCylinder, "cylinder-cylinder"},
};

// A query of a and b in a random order (either order gives the same contacts, sides flipped).
void queryEitherOrder(Batch& batch, uint32_t a, uint32_t b, std::mt19937& rng) {
  if (draw(rng, 2u) != 0u) {
    batch.query(a, b);
  } else {
    batch.query(b, a);
  }
}

// One query of pair type p: random order; a same-type pair sometimes a geometry against itself or
// against a copy at the same place (coincident centres).
void addPairQuery(Batch& batch, const PairType& p, std::mt19937& rng) {
  const uint32_t a = batch.add(randomPrimitive(p.a, rng));
  uint32_t b = 0;
  const uint32_t pick = draw(rng, 16u);
  if (p.a == p.b && pick == 0u) {
    b = a;
  } else if (p.a == p.b && pick == 1u) {
    Geometry copy = batch.geometries[a];
    copy.p0.w = randomPrimitive(p.a, rng).p0.w;  // another radius, the same centre / axis
    b = batch.add(copy);
  } else {
    b = batch.add(randomPrimitive(p.b, rng));
  }
  queryEitherOrder(batch, a, b, rng);
}

// The scalar run, then every SIMD target at the full capacity and at capacities that end inside
// lane batches of a run (and 0).
void expectSimdRunsEqualScalar(const Batch& batch, const std::string& what, uint32_t minContacts,
                               uint32_t maxContacts) {
  const Outcome scalar = run(batch, Backend::kCpuScalar, 8 * batch.queries.size() + 4096);
  ASSERT_TRUE(scalar.counts.ok()) << scalar.counts.error().message;
  ASSERT_FALSE(scalar.counts->overflow);
  const uint32_t contacts = scalar.counts->contacts;
  EXPECT_GE(contacts, minContacts) << what;
  EXPECT_LT(contacts, maxContacts) << what << ": queries without a contact are part of the test";
  EXPECT_LT(std::count_if(scalar.ranges.begin(), scalar.ranges.end(), [](ContactRange r) { return r.count > 0; }),
            static_cast<std::ptrdiff_t>(scalar.ranges.size()))
      << what;
  expectScalarsOnEveryTarget(batch, scalar, 8 * batch.queries.size() + 4096,
                             {contacts / 2 + 3, contacts / 3, 1, 0}, what + ", ");
}

// Runs of 1 to 5 queries (addQuery's), each ended by a sphere-sphere query.
template <class AddQuery>
void expectShortRunsEqualScalar(AddQuery&& addQuery, const std::string& what) {
  Batch runs;
  const uint32_t sphere = runs.add(Geometry::sphere({0, 0, 0, 1}));
  for (uint32_t length = 1; length <= 5; ++length) {
    for (int round = 0; round < 8; ++round) {
      for (uint32_t i = 0; i < length; ++i) addQuery(runs);
      runs.query(sphere, sphere);
    }
  }
  expectSimdRunsEqualScalar(runs, what, 40, 8 * 200);
}

TEST(GeometryQueriesSimd, PrimitivePairRunsEqualTheScalarLoopOnEveryTarget) {
  std::mt19937 rng(20261126u);
  for (const PairType& p : kLanePairs) {
    Batch batch;
    for (int i = 0; i < 1037; ++i) addPairQuery(batch, p, rng);  // not a multiple of any lane count
    expectSimdRunsEqualScalar(batch, p.name, 150, 8 * 1037);
  }
}

// Box-plane writes an output over 32 MiB (capacity 8 per query + 4096, 96 bytes a contact) with
// non-temporal stores: 45 000 queries' full capacity takes that path, the smaller capacities the
// ordinary one.
TEST(GeometryQueriesSimd, BoxPlaneStreamedOutputEqualsTheScalarLoop) {
  std::mt19937 rng(20261127u);
  const PairType boxPlane{GeometryType::kOrientedBox, GeometryType::kPlane, "box-plane (streamed)"};
  Batch batch;
  for (int i = 0; i < 45000; ++i) addPairQuery(batch, boxPlane, rng);
  ASSERT_GT((8 * batch.queries.size() + 4096) * 2 * sizeof(ContactElement), size_t{32} << 20);
  expectSimdRunsEqualScalar(batch, boxPlane.name, 6000, 8 * 45000);
}

// Box-box clips each lane's own polygon in lanes: boxes resting on a box, turned about the normal and
// tilted a little (clipped polygons of 4 to 8 points, some of them above the face), boxes standing
// on an edge crossing the other's top edge (edge axes), and random pairs (apart ones too), in a run
// long enough for full compacted lane batches; then runs of 1 to 5 such queries (the scalar clipping
// of a last batch of few lanes).
TEST(GeometryQueriesSimd, BoxBoxLanesEqualTheScalarLoopOnStacksAndEdges) {
  std::mt19937 rng(20261128u);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const auto about = [](float angle, Float4 axis) {
    const float s = std::sin(0.5f * angle);
    return Float4{axis.x * s, axis.y * s, axis.z * s, std::cos(0.5f * angle)};
  };
  const PairType boxBox{GeometryType::kOrientedBox, GeometryType::kOrientedBox, "box-box"};
  const auto addQuery = [&](Batch& batch) {
    const float jitter = 0.02f * u(rng);
    switch (draw(rng, 3u)) {
      case 0: {  // on top, turned about y and tilted about x
        const Float4 turn = about(3.14159265f * u(rng), v3(0, 1, 0));
        const Float4 tilt = about(0.05f * u(rng), v3(1, 0, 0));
        const Float4 q{tilt.w * turn.x + tilt.x * turn.w, tilt.w * turn.y - tilt.x * turn.z,
                       tilt.w * turn.z + tilt.x * turn.y, tilt.w * turn.w - tilt.x * turn.x};
        const uint32_t a = batch.add(Geometry::orientedBox({0, 0, 0, 0}, identityQuat(), {0.5f, 0.5f, 0.5f, 0}));
        // The same square as a's top face (turned: an octagon) or a smaller one.
        const Float4 h = draw(rng, 2u) != 0u ? Float4{0.5f, 0.25f, 0.5f, 0} : Float4{0.4f, 0.25f, 0.3f, 0};
        const uint32_t b = batch.add(Geometry::orientedBox({0.3f * u(rng), 0.7f + jitter, 0.3f * u(rng), 0}, q, h));
        queryEitherOrder(batch, a, b, rng);
        break;
      }
      case 1: {  // an edge along z up, an edge along x down: crossing edges
        const uint32_t a =
            batch.add(Geometry::orientedBox({0, 0, 0, 0}, about(0.785398f, v3(0, 0, 1)), {0.5f, 0.5f, 0.5f, 0}));
        const uint32_t b = batch.add(Geometry::orientedBox({0.1f * u(rng), 1.4f + jitter, 0.1f * u(rng), 0},
                                                           about(0.785398f + 0.1f * u(rng), v3(1, 0, 0)),
                                                           {0.5f, 0.5f, 0.5f, 0}));
        batch.query(a, b);
        break;
      }
      default: addPairQuery(batch, boxBox, rng); break;
    }
  };
  Batch batch;
  for (int i = 0; i < 3000; ++i) addQuery(batch);
  expectSimdRunsEqualScalar(batch, "box-box stacks and edges", 3000, 8 * 3000);
  expectShortRunsEqualScalar(addQuery, "box-box short runs");
}

// Cylinder-box (src/cpu/geometry_queries_cylinder_box_simd.cpp): the candidates, the inscribed boxes'
// bound and the critical points' enumeration in lanes, the pairs with a box edge within 1e-3 of the
// axis by the scalar code (GJK and EPA). Boxes around the cylinder's rim and side at random turns
// (rim + edge: the ellipse's near and far halves), deep, touching and apart; boxes whose axis is
// along the cylinder's, off it by 1e-4 (the scalar lanes) or by 2e-3 (the enumeration); degenerate
// shapes (a disc, a needle, a flat box, a point, coincident centres); runs of 1 to 5 queries and a
// run over several chunks of lanes.
TEST(GeometryQueriesSimd, CylinderBoxLanesEqualTheScalarLoopOnRimsSidesAndNearParallelEdges) {
  std::mt19937 rng(20261129u);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_real_distribution<float> size(0.1f, 1.0f);
  const PairType cylinderBox{GeometryType::kCylinder, GeometryType::kOrientedBox, "cylinder-box"};
  // The unit quaternion of angle about unit axis.
  const auto about = [](float angle, Float4 axis) {
    const float s = std::sin(0.5f * angle);
    return Float4{axis.x * s, axis.y * s, axis.z * s, std::cos(0.5f * angle)};
  };
  const auto addQuery = [&](Batch& batch) {
    const Float4 axis = unit(rng);
    const Float4 c = v3(u(rng), u(rng), u(rng));
    const float r = size(rng), h = size(rng);
    Geometry cylinder = Geometry::cylinder(c, axis, r, h);
    Geometry box = Geometry::orientedBox(c, quat(rng), v3(size(rng), size(rng), size(rng)));
    const uint32_t pick = draw(rng, 8u);
    if (pick <= 2u) {  // near a rim point or the side, a little in or out
      const Float4 w = unit(rng);
      const float wa = w.x * axis.x + w.y * axis.y + w.z * axis.z;
      Float4 radial{w.x - axis.x * wa, w.y - axis.y * wa, w.z - axis.z * wa, 0.0f};
      const float lr = std::sqrt(radial.x * radial.x + radial.y * radial.y + radial.z * radial.z);
      const float along = pick == 2u ? h * u(rng) : (draw(rng, 2u) != 0u ? h : -h);
      const float reach = r + 0.3f * (1.0f + u(rng)) * box.p2.x;
      box.p0 = v3(c.x + axis.x * along + radial.x / lr * reach, c.y + axis.y * along + radial.y / lr * reach,
                  c.z + axis.z * along + radial.z / lr * reach);
    } else if (pick == 3u) {  // a box axis along the cylinder's, exactly or off by 1e-4 or 2e-3
      cylinder = Geometry::cylinder(c, v3(0, 1, 0), r, h);
      const float tilt = draw(rng, 3u) == 0u ? 0.0f : (draw(rng, 2u) != 0u ? 1e-4f : 2e-3f);
      box.p1 = about(tilt, v3(1, 0, 0));
      box.p0 = v3(c.x + (r + box.p2.x) * 0.9f * u(rng), c.y + (h + box.p2.y) * u(rng), c.z + 0.2f * u(rng));
    } else if (pick == 4u) {  // deep: the centres close
      box.p0 = v3(c.x + 0.1f * u(rng), c.y + 0.1f * u(rng), c.z + 0.1f * u(rng));
    } else if (pick == 5u) {  // degenerate
      switch (draw(rng, 4u)) {
        case 0: cylinder = Geometry::cylinder(c, axis, r, 0.0f); break;  // a disc
        case 1: cylinder = Geometry::cylinder(c, axis, 0.0f, h); break;  // a needle
        case 2: box.p2.z = 0.0f; break;                                  // a flat box
        default: box.p2 = v3(0, 0, 0); break;                            // a point
      }
      box.p0 = v3(c.x + 0.8f * u(rng), c.y + 0.8f * u(rng), c.z + 0.8f * u(rng));
    } else {  // anywhere near
      box.p0 = v3(c.x + 1.5f * u(rng), c.y + 1.5f * u(rng), c.z + 1.5f * u(rng));
    }
    const uint32_t a = batch.add(cylinder);
    const uint32_t b = batch.add(box);
    queryEitherOrder(batch, a, b, rng);
  };
  Batch batch;
  for (int i = 0; i < 3001; ++i) addQuery(batch);
  for (int i = 0; i < 500; ++i) addPairQuery(batch, cylinderBox, rng);
  expectSimdRunsEqualScalar(batch, "cylinder-box rims, sides and near-parallel edges", 500, 8 * 3501);
  expectShortRunsEqualScalar(addQuery, "cylinder-box short runs");
}

// Cylinder-cylinder (src/cpu/geometry_queries_cylinder_cylinder_simd.cpp): the rim + rim search of
// geomCylinderCylinderCritical in lanes, the rest by the scalar code. Cylinders around the other's
// rims and side at random turns, deep, touching and apart; axes parallel (the closed form), off by
// 1e-4 (GJK and EPA: the scalar lanes) or by 2e-3 (the critical points), perpendicular and off that
// by 1e-5 (flat ellipses); equal radii (either circle searched); degenerate shapes (a disc, a needle,
// coincident centres); runs of 1 to 5 queries and a run over several chunks of lanes.
TEST(GeometryQueriesSimd, CylinderCylinderLanesEqualTheScalarLoopOnRimsSidesAndNearParallelAxes) {
  std::mt19937 rng(20261130u);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_real_distribution<float> size(0.1f, 1.0f);
  const PairType cylinderCylinder{GeometryType::kCylinder, GeometryType::kCylinder, "cylinder-cylinder"};
  const auto turned = [](Float4 a, Float4 b, float angle) {  // a turned towards unit b (across a) by angle
    const float c = std::cos(angle), s = std::sin(angle);
    return v3(a.x * c + b.x * s, a.y * c + b.y * s, a.z * c + b.z * s);
  };
  const auto keepW = [](Float4& to, Float4 v) { to = Float4{v.x, v.y, v.z, to.w}; };  // radius, half height
  const auto addQuery = [&](Batch& batch) {
    const Float4 axis = unit(rng);
    const Float4 c = v3(u(rng), u(rng), u(rng));
    const float r = size(rng), h = size(rng);
    Geometry s = Geometry::cylinder(c, axis, r, h);
    Geometry t = Geometry::cylinder(c, unit(rng), size(rng), size(rng));
    // A unit direction across the axis.
    const Float4 w = unit(rng);
    const float wa = w.x * axis.x + w.y * axis.y + w.z * axis.z;
    Float4 radial{w.x - axis.x * wa, w.y - axis.y * wa, w.z - axis.z * wa, 0.0f};
    const float lr = std::sqrt(radial.x * radial.x + radial.y * radial.y + radial.z * radial.z);
    radial = v3(radial.x / lr, radial.y / lr, radial.z / lr);
    const uint32_t pick = draw(rng, 9u);
    if (pick <= 2u) {  // near a rim point or the side, a little in or out
      const float along = pick == 2u ? h * u(rng) : (draw(rng, 2u) != 0u ? h : -h);
      const float reach = r + 0.3f * (1.0f + u(rng)) * t.p0.w;
      keepW(t.p0, v3(c.x + axis.x * along + radial.x * reach, c.y + axis.y * along + radial.y * reach,
                     c.z + axis.z * along + radial.z * reach));
    } else if (pick == 3u) {  // axes parallel, off by 1e-7, 1e-4 or 2e-3
      const float tilts[] = {0.0f, 1e-7f, 1e-4f, 2e-3f};
      keepW(t.p1, turned(axis, radial, tilts[draw(rng, 4u)]));
      const float out = (r + t.p0.w) * 0.9f * u(rng);
      const float along = (h + t.p1.w) * u(rng);
      keepW(t.p0, v3(c.x + radial.x * out + axis.x * along, c.y + radial.y * out + axis.y * along,
                     c.z + radial.z * out + axis.z * along));
    } else if (pick == 4u) {  // axes perpendicular, or off that by 1e-5
      keepW(t.p1, turned(radial, axis, draw(rng, 2u) != 0u ? 0.0f : 1e-5f));
      keepW(t.p0, v3(c.x + 1.2f * u(rng), c.y + 1.2f * u(rng), c.z + 1.2f * u(rng)));
    } else if (pick == 5u) {  // deep: the centres close
      keepW(t.p0, v3(c.x + 0.1f * u(rng), c.y + 0.1f * u(rng), c.z + 0.1f * u(rng)));
    } else if (pick == 6u) {  // degenerate or equal radii
      switch (draw(rng, 4u)) {
        case 0: s = Geometry::cylinder(c, axis, r, 0.0f); break;  // a disc
        case 1: s = Geometry::cylinder(c, axis, 0.0f, h); break;  // a needle
        case 2: t.p0.w = r; break;                                 // equal radii
        default: break;                                            // coincident centres
      }
      if (draw(rng, 4u) != 0u) keepW(t.p0, v3(c.x + 0.8f * u(rng), c.y + 0.8f * u(rng), c.z + 0.8f * u(rng)));
    } else {  // anywhere near
      keepW(t.p0, v3(c.x + 1.5f * u(rng), c.y + 1.5f * u(rng), c.z + 1.5f * u(rng)));
    }
    const uint32_t a = batch.add(s);
    const uint32_t b = batch.add(t);
    queryEitherOrder(batch, a, b, rng);
  };
  Batch batch;
  for (int i = 0; i < 3001; ++i) addQuery(batch);
  for (int i = 0; i < 500; ++i) addPairQuery(batch, cylinderCylinder, rng);
  expectSimdRunsEqualScalar(batch, "cylinder-cylinder rims, sides and near-parallel axes", 500, 8 * 3501);
  expectShortRunsEqualScalar(addQuery, "cylinder-cylinder short runs");
}

TEST(GeometryQueriesSimd, MixedPrimitivePairRunsEqualTheScalarLoop) {
  std::mt19937 rng(99u);
  Batch batch;
  const uint32_t set = batch.addPoints(points(rng, 20));
  const uint32_t box = batch.add(Geometry::orientedBox({0, 0, 0, 0}, quat(rng), {0.75f, 0.5f, 0.25f, 0}));
  const uint32_t box2 = batch.add(Geometry::orientedBox({0.5f, 0.25f, 0, 0}, quat(rng), {0.5f, 0.5f, 0.5f, 0}));
  const uint32_t cylinder = batch.add(Geometry::cylinder({0.25f, 0, 0.25f, 0}, unit(rng), 0.5f, 0.5f));
  // Runs of every length from 1 to 40 of random lane pairs, separated by a query the scalar loop runs
  // (cylinder-box, a point set) or directly followed by a run of another lane pair.
  for (uint32_t length = 1; length <= 40; ++length) {
    const PairType& p = kLanePairs[draw(rng, static_cast<uint32_t>(std::size(kLanePairs)))];
    for (uint32_t i = 0; i < length; ++i) addPairQuery(batch, p, rng);
    switch (draw(rng, 3u)) {
      case 0: batch.query(cylinder, box); break;
      case 1: batch.query(set, box); break;
      default: break;
    }
  }
  // Single queries of random pairs, lane pairs and others interleaved.
  for (int i = 0; i < 300; ++i) {
    if (draw(rng, 4u) == 0u) {
      batch.query(box2, box);
    } else {
      addPairQuery(batch, kLanePairs[draw(rng, static_cast<uint32_t>(std::size(kLanePairs)))], rng);
    }
  }
  expectSimdRunsEqualScalar(batch, "mixed", 200, 20000);
}


// ---- The fused pass: validation and lanes in one pass (cpu::fusedPrimitivePairs) ---------------

// Runs the fused pass on batches of any size while alive.
struct FusedOnSmallBatches {
  FusedOnSmallBatches() { cpu::setFusedMinQueries(1); }
  ~FusedOnSmallBatches() { cpu::setFusedMinQueries(cpu::kFusedMinQueries); }
  FusedOnSmallBatches(const FusedOnSmallBatches&) = delete;
  FusedOnSmallBatches& operator=(const FusedOnSmallBatches&) = delete;
};

// The fused pass writes its stash, contacts and ranges with streaming stores whatever their size while
// alive (cpu::setFusedStreamBytes).
struct FusedStreamingStores {
  FusedStreamingStores() { cpu::setFusedStreamBytes(0); }
  ~FusedStreamingStores() { cpu::setFusedStreamBytes(cpu::kFusedStreamBytes); }
  FusedStreamingStores(const FusedStreamingStores&) = delete;
  FusedStreamingStores& operator=(const FusedStreamingStores&) = delete;
};

bool simdBuild() { return cpu::primitivePairSimdKind(0, 0) != cpu::kNoPrimitivePairSimd; }

// Whether the fused pass takes the batch (the output at full capacity, left as it writes it).
bool fusedTakes(const Batch& batch) {
  std::vector<ContactElement> a(8 * batch.queries.size() + 16), b(a.size());
  std::vector<ContactRange> ranges(batch.queries.size());
  return cpu::fusedPrimitivePairs(batch.input(), {a, b, ranges}).has_value();
}

TEST(GeometryQueriesSimd, FusedPassEqualsTheScalarLoopOnEveryTarget) {
  const FusedOnSmallBatches fused;
  std::mt19937 rng(20261127u);
  for (const PairType& p : kLanePairs) {
    Batch batch;
    for (int i = 0; i < 1037; ++i) addPairQuery(batch, p, rng);
    // The fused pass takes the pairs with one ball per query (not the box pairs but sphere-box, not
    // cylinder-cylinder).
    const bool lanePair = (p.b != GeometryType::kOrientedBox || p.a == GeometryType::kSphere) &&
                          !(p.a == GeometryType::kCylinder && p.b == GeometryType::kCylinder);
    const bool takes = simdBuild() && lanePair && !(p.a == GeometryType::kOrientedBox && p.b == GeometryType::kPlane);
    EXPECT_EQ(fusedTakes(batch), takes) << p.name;
    expectSimdRunsEqualScalar(batch, std::string("fused ") + p.name, 150, 8 * 1037);
  }
}

// The lane loop, then the fused pass and its streaming stores on the batch, each against the scalar
// loop (expectSimdRunsEqualScalar), the fused pass taking it where the build has SIMD.
void expectLanesAndFusedEqualScalar(const Batch& batch, const std::string& what, uint32_t minContacts,
                                    uint32_t maxContacts) {
  expectSimdRunsEqualScalar(batch, what, minContacts, maxContacts);
  const FusedOnSmallBatches fused;
  EXPECT_EQ(fusedTakes(batch), simdBuild()) << what;
  expectSimdRunsEqualScalar(batch, what + ", fused", minContacts, maxContacts);
  const FusedStreamingStores streaming;
  expectSimdRunsEqualScalar(batch, what + ", fused, streamed", minContacts, maxContacts);
}

// The scalar run's queries by contact count (the last entry: that many or more), printed under `what`.
template <size_t kCounts>
std::array<uint32_t, kCounts> queriesByContacts(const Batch& batch, const char* what) {
  std::array<uint32_t, kCounts> perQuery{};
  const Outcome scalar = run(batch, Backend::kCpuScalar, 8 * batch.queries.size());
  EXPECT_TRUE(scalar.counts.ok()) << scalar.counts.error().message;
  if (!scalar.counts.ok()) return perQuery;
  for (const ContactRange& r : scalar.ranges) ++perQuery[std::min<uint32_t>(r.count, kCounts - 1)];
  std::printf("%s: %u queries with 0 .. %zu contacts:", what, static_cast<uint32_t>(batch.queries.size()),
              kCounts - 1);
  for (uint32_t n : perQuery) std::printf(" %u", n);
  std::printf("\n");
  return perQuery;
}

// Cylinders standing or lying on planes, within and past kGeomCylinderFlatSine (their slots 1-3 in a
// few lanes of a batch): the lane loop, the fused pass and its streaming stores equal the scalar loop.
TEST(GeometryQueriesSimd, RestingCylinderManifoldsEqualTheScalarLoop) {
  const Batch batch = restingCylinderBatch(20261128u, 3001);
  const std::array<uint32_t, 5> perQuery = queriesByContacts<5>(batch, "resting cylinders");
  EXPECT_GT(perQuery[2], 300u) << "lying cylinders rest on two contacts";
  EXPECT_GT(perQuery[4], 300u) << "standing ones on four";
  EXPECT_GT(perQuery[3], 10u) << "a leaning one's far point above the plane";
  expectLanesAndFusedEqualScalar(batch, "resting cylinders", 3000, 8 * 3001);
}

// Capsules lying on cylinders' caps and along their walls (slot 1 in some lanes of a batch): the lane
// loop, the fused pass and its streaming stores equal the scalar loop.
TEST(GeometryQueriesSimd, RestingCapsuleManifoldsEqualTheScalarLoop) {
  const Batch batch = restingCapsuleBatch(20261129u, 3001);
  const std::array<uint32_t, 3> perQuery = queriesByContacts<3>(batch, "resting capsules");
  EXPECT_GT(perQuery[2], 600u) << "capsules lying on a cap or along the wall rest on two contacts";
  EXPECT_GT(perQuery[1], 300u);
  expectLanesAndFusedEqualScalar(batch, "resting capsules", 2000, 8 * 3001);
}

// Cylinders standing or lying on box faces, within and past kGeomCylinderFlatSine, over the face or
// its edges (geomCylinderBoxPatch from the lanes' deepest contact): the lane loop equals the scalar
// loop.
TEST(GeometryQueriesSimd, RestingCylinderBoxManifoldsEqualTheScalarLoop) {
  const Batch batch = restingCylinderBoxBatch(20261129u, 3001);
  const std::array<uint32_t, 6> perQuery = queriesByContacts<6>(batch, "cylinders resting on boxes");
  EXPECT_GT(perQuery[1], 300u) << "tilted past the flat angle: the single deepest contact";
  EXPECT_GT(perQuery[2], 300u) << "lying cylinders rest on two contacts";
  EXPECT_GT(perQuery[4], 200u) << "standing ones on four";
  EXPECT_GT(perQuery[5], 50u) << "a square clipped by a face's edge";
  expectSimdRunsEqualScalar(batch, "cylinders resting on boxes", 3000, 8 * 3001);
}

// Cylinders stacked, side by side, lying on a cap or standing on a wall, within and past
// kGeomCylinderFlatSine (geomCylinderCylinderPatch from the lanes' deepest contact, or the scalar
// code's closed form for parallel axes): the lane loop equals the scalar loop.
TEST(GeometryQueriesSimd, RestingCylinderPairManifoldsEqualTheScalarLoop) {
  const Batch batch = restingCylinderPairBatch(20261130u, 3001);
  const std::array<uint32_t, 6> perQuery = queriesByContacts<6>(batch, "cylinders resting on cylinders");
  EXPECT_GT(perQuery[1], 300u) << "tilted past the flat angle: the single deepest contact";
  EXPECT_GT(perQuery[2], 300u) << "lines on lines and caps rest on two contacts";
  EXPECT_GT(perQuery[4], 50u) << "a stack's rim square";
  EXPECT_GT(perQuery[3] + perQuery[5], 50u) << "a stack's square in part and the rims' crossings";
  expectSimdRunsEqualScalar(batch, "cylinders resting on cylinders", 3000, 8 * 3001);
}

TEST(GeometryQueriesSimd, FusedPassStreamingStoresEqualTheScalarLoop) {
  // The stores a batch past the caches takes (the stash, then the contacts and ranges streamed),
  // on small batches: every fused pair, an odd number of queries (the ranges' last one alone), every
  // capacity of expectSimdRunsEqualScalar.
  const FusedOnSmallBatches fused;
  const FusedStreamingStores streaming;
  std::mt19937 rng(20261128u);
  size_t taken = 0;
  for (const PairType& p : kLanePairs) {
    Batch batch;
    for (int i = 0; i < 1037; ++i) addPairQuery(batch, p, rng);
    if (!fusedTakes(batch)) continue;
    ++taken;
    expectSimdRunsEqualScalar(batch, std::string("fused, streaming stores, ") + p.name, 150, 8 * 1037);
  }
  EXPECT_EQ(taken, simdBuild() ? 9u : 0u);  // the pairs with one ball per query
}

TEST(GeometryQueriesSimd, FusedPassTakesQueriesInAnyOrderAndUnreadGeometries) {
  const FusedOnSmallBatches fused;
  std::mt19937 rng(7u);
  // 5000 spheres and capsules (beyond the pass's prefetch distance of 2048 and many of its validation
  // steps of 64), queries from the last geometries to the first, some geometries no query reads
  // (among them the last 300).
  Batch batch;
  for (int i = 0; i < 5000; ++i) {
    batch.add(randomPrimitive(i % 2 == 0 ? GeometryType::kSphere : GeometryType::kCapsule, rng));
  }
  for (uint32_t i = 4698; i >= 2; i -= 2) {
    if (i % 14 == 0) continue;  // unread
    if (i % 4 == 0) {
      batch.query(i, i + 1);  // sphere, capsule
    } else {
      batch.query(i - 1, i);  // capsule, sphere
    }
  }
  for (const GeometryQuery& q : batch.queries) {
    ASSERT_NE(batch.geometries[q.a].type, batch.geometries[q.b].type);
  }
  EXPECT_EQ(fusedTakes(batch), simdBuild());
  expectSimdRunsEqualScalar(batch, "fused, queries in reverse order", 100, 5000);
}

// A bad input through the fused pass: validate()'s error and code, on every backend, and nothing
// written (the output keeps its sentinels).
void expectFusedRefuses(const Batch& batch, const std::string& what, const std::string& field,
                        size_t capacity = 64) {
  const Status expected = validate(batch.input());
  ASSERT_FALSE(expected) << what;
  EXPECT_NE(expected.message().find(field), std::string::npos) << what << ": " << expected.message();
  for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
    const Outcome r = run(batch, backend, capacity);
    ASSERT_FALSE(r.counts.ok()) << what;
    EXPECT_EQ(r.counts.error().message, expected.message()) << what;
    EXPECT_EQ(r.counts.error().code, expected.error().code) << what;
    for (const ContactRange& range : r.ranges) EXPECT_EQ(range.first, 0xDEADu) << what;
    for (const ContactElement& e : r.a) EXPECT_EQ(e.point.x, -7.0f) << what;
  }
}

TEST(GeometryQueriesSimd, FusedPassBadInputsReportValidatesErrorAndWriteNothing) {
  const FusedOnSmallBatches fused;
  std::mt19937 rng(3u);
  Batch good;
  for (int i = 0; i < 3000; ++i) addPairQuery(good, kLanePairs[0], rng);  // sphere-sphere, 6000 spheres
  const uint32_t unread = good.add(Geometry::sphere({0, 0, 0, 1}));
  const uint32_t late = unread - 1000;  // read by a query late in the batch
  ASSERT_TRUE(std::any_of(good.queries.end() - 600, good.queries.end(),
                          [&](const GeometryQuery& q) { return q.a == late || q.b == late; }));
  EXPECT_EQ(fusedTakes(good), simdBuild());
  const auto name = [](uint32_t g) { return "geometries[" + std::to_string(g) + "]"; };
  {
    Batch bad = good;  // a late query's geometry
    bad.geometries[late].p0.w = -1.0f;
    expectFusedRefuses(bad, "a negative radius", name(late));
  }
  {
    Batch bad = good;  // the geometry no query reads
    bad.geometries[unread].p0.x = std::nanf("");
    expectFusedRefuses(bad, "NaN in the unread geometry", name(unread));
  }
  {
    Batch bad = good;  // a geometry error comes before a query error
    bad.geometries[unread - 1].p1.x = 1.0f;
    bad.queries[10].state = 3;
    expectFusedRefuses(bad, "geometry before query", name(unread - 1));
  }
  {
    Batch bad = good;
    bad.queries[2500].state = 3;
    expectFusedRefuses(bad, "a static query's state", "queries[2500].state");
  }
  {
    Batch bad = good;
    bad.queries[2999].b = unread + 5;
    expectFusedRefuses(bad, "an index past the geometries", "queries[2999].b");
  }
  {
    Batch bad = good;  // a plane-plane query late in the batch
    const uint32_t p = bad.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false));
    bad.query(p, p);
    expectFusedRefuses(bad, "plane-plane", "queries[3000]");
  }
  {
    Batch bad = good;  // the output's sizes: refused after the input checks, by every backend
    std::vector<ContactElement> a(8), b(8);
    std::vector<ContactRange> ranges(bad.queries.size() - 1);
    for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      const Result<GeometryQueryCounts> r = queryGeometriesCpu(bad.input(), {a, b, ranges}, backend);
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error().code, ErrorCode::kBufferTooSmall);
    }
  }
  // Valid batches the pass hands back to the usual path: another pair last or early in the batch, a
  // normal within the unit tolerance but outside the clear band (primitiveUnitClear).
  {
    Batch mixed = good;
    const uint32_t box = mixed.add(Geometry::orientedBox({0, 0, 0, 0}, identityQuat(), {1, 1, 1, 0}));
    mixed.query(0, box);
    EXPECT_FALSE(fusedTakes(mixed));
    expectSimdRunsEqualScalar(mixed, "a sphere-box query after the sphere pairs", 100, 6000);
  }
  {
    Batch mixed = good;  // the pass stops at the other pair, past its start and before the middle
    const uint32_t box = mixed.add(Geometry::orientedBox({0, 0, 0, 0}, identityQuat(), {1, 1, 1, 0}));
    mixed.queries[100] = GeometryQuery{box, mixed.queries[100].a, GeometryMethod::kStatic, 0};
    EXPECT_FALSE(fusedTakes(mixed));
    expectSimdRunsEqualScalar(mixed, "a box-sphere query among the sphere pairs", 100, 6000);
  }
  {
    Batch planes;
    for (int i = 0; i < 200; ++i) addPairQuery(planes, kLanePairs[4], rng);  // sphere-plane
    // The longest normal below 1 that the clear band refuses (its squared length under 0.998002):
    // within the unit tolerance (1e-3), so valid, and the usual path's detailed check accepts it.
    float y = 0.999f;
    while (y * y >= 0.998002f) y = std::nextafter(y, 0.0f);
    for (Geometry& g : planes.geometries) {
      if (g.type == GeometryType::kPlane) {
        g.p1 = Float4{0, y, 0, 0};
        break;
      }
    }
    ASSERT_TRUE(validate(planes.input()));
    EXPECT_FALSE(fusedTakes(planes));
    expectSimdRunsEqualScalar(planes, "a plane normal outside the clear band", 20, 400);
  }
}

TEST(GeometryQueriesSimd, FusedPassCapsulePlanePastTheCachesWritesNothingOnALateBadGeometry) {
  // 70 000 capsule-plane queries at the pass's own thresholds (none lowered): about 1.4 contacts a
  // query, so the staging copy (each lane batch's entries streamed from an L1 copy) and the output
  // are past kFusedStreamBytes. A bad geometry read by one of the last queries, or one no query
  // reads, is found after most of the staging copy was written: the output keeps its sentinels.
  std::mt19937 rng(16u);
  Batch good;
  for (int i = 0; i < 70000; ++i) addPairQuery(good, kLanePairs[8], rng);
  ASSERT_STREQ(kLanePairs[8].name, "capsule-plane");
  const uint32_t unread = good.add(Geometry::sphere({0, 0, 0, 1}));
  const size_t capacity = 2 * good.queries.size();
  ASSERT_GE(uint64_t{capacity} * 48, cpu::kFusedStreamBytes);  // 48 bytes per staged contact: streamed
  EXPECT_EQ(fusedTakes(good), simdBuild());
  expectSimdRunsEqualScalar(good, "capsule-plane past the caches", 70000, 140000);
  const uint32_t late = good.queries[good.queries.size() - 20].b;
  const auto name = [](uint32_t g) { return "geometries[" + std::to_string(g) + "]"; };
  {
    Batch bad = good;
    bad.geometries[late].p1.x = std::nanf("");
    expectFusedRefuses(bad, "NaN in a late query's geometry", name(late), capacity);
  }
  {
    Batch bad = good;
    bad.geometries[unread].p0.w = -1.0f;
    expectFusedRefuses(bad, "a negative radius in the unread geometry", name(unread), capacity);
  }
}

}  // namespace
}  // namespace vkc::test::geometry
