// GeometryQueryTrees (include/vkcollide/geometry_queries.h, issue 17): mesh trees kept between calls.
// Contacts with the trees equal those without, bit for bit, on kCpuScalar and kCpuSimd, after a build
// and after refits of moved vertices; trees that do not match the input are refused with the field
// named, nothing written; a stated generation (treesGeneration) skips the cells' and vertices' comparison.
#include <limits>
#include <random>

#include "geometry_queries/geometry_queries_mesh_test_support.h"

namespace vkc::test::geometry {
namespace {

// Batch::run with input.trees = trees (and input.treesGeneration = generation).
Result<GeometryQueryCounts> runWith(Batch& b, Backend backend, const GeometryQueryTrees* trees,
                                    size_t capacity, uint64_t generation = 0) {
  ContactElement sentinel;
  sentinel.point = Float4{-7, -7, -7, -7};
  sentinel.query = 0xDEADu;
  b.elementsA.assign(capacity, sentinel);
  b.elementsB.assign(capacity, sentinel);
  b.ranges.assign(b.queries.size(), ContactRange{0xDEADu, 0xDEADu});
  GeometryQueryInput in = b.input();
  in.trees = trees;
  in.treesGeneration = generation;
  return queryGeometries(backend, nullptr, in, {b.elementsA, b.elementsB, b.ranges, b.state});
}

// Random soups of every mesh type, a closed box and a sphere, with the mesh pairs in both orders.
Batch randomMeshes(uint32_t seed) {
  std::mt19937 rng(seed);
  Batch b;
  const auto soup = [&](GeometryType type, uint32_t cells) {
    return addRandomSoup(b, rng, type, cells, 3.0f, 0.5f);
  };
  const uint32_t s0 = soup(GeometryType::kSurfaceMesh, 1200), s1 = soup(GeometryType::kSurfaceMesh, 900);
  const uint32_t l0 = soup(GeometryType::kLineMesh, 1000), t0 = soup(GeometryType::kTetrahedralMesh, 600);
  const uint32_t l1 = soup(GeometryType::kLineMesh, 700);
  b.geometries[l1].p2.w = 0.05f;  // thick segments: static line-line
  const uint32_t first = static_cast<uint32_t>(b.points.size()),
                 entry = static_cast<uint32_t>(b.cells.size());
  const float h = 1.6f;
  for (uint32_t i = 0; i < 8; ++i)
    b.points.push_back(v3((i & 1u) ? h : -h, (i & 2u) ? h : -h, (i & 4u) ? h : -h));
  const std::vector<uint32_t> box = {0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5, 0, 1, 5, 0, 5, 4,
                                     2, 6, 7, 2, 7, 3, 0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6};
  b.cells.insert(b.cells.end(), box.begin(), box.end());
  const uint32_t closed = b.add(Geometry::closedSurfaceMesh(first, 8, entry, 12, 0.0f));
  const uint32_t ball = b.add(Geometry::sphere(v3(0.5f, 0.2f, -0.3f)));
  b.geometries[ball].p0.w = 1.2f;
  for (auto [x, y] :
       {std::pair{s0, s1}, {s0, l0}, {l0, t0}, {l1, l1}, {l0, l1}, {closed, s1}, {s0, ball}, {t0, ball}}) {
    b.query(x, y);
    if (x != y) b.query(y, x);
  }
  return b;
}

// Runs b without trees (kCpuScalar: the reference) and with `trees` on both CPU backends: the same
// ranges and contacts bit for bit. Returns the contacts.
uint64_t expectTreesGiveTheSameBits(Batch& b, const GeometryQueryTrees& trees, uint64_t generation = 0) {
  constexpr size_t kCapacity = 200000;
  auto reference = b.run(Backend::kCpuScalar, kCapacity);
  EXPECT_TRUE(reference.ok()) << reference.message();
  if (!reference.ok()) return 0;
  const Batch expected = b;
  for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
    auto counts = runWith(b, backend, &trees, kCapacity, generation);
    EXPECT_TRUE(counts.ok()) << counts.message();
    if (!counts.ok()) return 0;
    EXPECT_EQ(counts->contacts, reference->contacts);
    for (size_t q = 0; q < b.queries.size(); ++q) {
      EXPECT_EQ(b.ranges[q].first, expected.ranges[q].first) << "query " << q;
      EXPECT_EQ(b.ranges[q].count, expected.ranges[q].count) << "query " << q;
    }
    for (uint32_t k = 0; k < reference->written; ++k) {
      if (!bitwiseEqual(b.elementsA[k], expected.elementsA[k]) ||
          !bitwiseEqual(b.elementsB[k], expected.elementsB[k])) {
        ADD_FAILURE() << "contact " << k << " differs";
        return 0;
      }
    }
  }
  return reference->contacts;
}

TEST(GeometryQueriesMeshTrees, KeptTreesGiveTheSameBitsAfterBuildAndRefits) {
  for (uint32_t seed : {21u, 22u}) {
    Batch b = randomMeshes(seed);
    auto trees = GeometryQueryTrees::build(b.input());
    ASSERT_TRUE(trees.ok()) << trees.message();
    // Every mesh of a static query has a tree; the sphere none.
    EXPECT_EQ(trees->geometries(), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
    EXPECT_GT(expectTreesGiveTheSameBits(b, *trees), 500u);
    expectBruteForceAndSimdEqual(b, b.ranges.back().first + b.ranges.back().count, 200000, 2e-5f);
    // The vertices move (each by up to 0.3, a tree refit far from its build's positions), twice.
    std::mt19937 rng(seed + 100);
    std::uniform_real_distribution<float> step(-0.3f, 0.3f);
    for (int frame = 0; frame < 2; ++frame) {
      const std::vector<Float4> before = b.points;
      for (uint32_t v = 0; v + 8 < b.points.size(); ++v) {  // the closed box stays closed and still
        b.points[v].x += step(rng);
        b.points[v].y += step(rng);
        b.points[v].z += step(rng);
      }
      // Not refit yet: refused, naming the first moved point.
      {
        std::fill(b.elementsA.begin(), b.elementsA.end(), ContactElement{});
        auto stale = runWith(b, Backend::kCpuScalar, &*trees, 64);
        ASSERT_FALSE(stale.ok());
        EXPECT_EQ(stale.error().code, ErrorCode::kInvalidArgument);
        EXPECT_NE(
            stale.message().find("trees: points[0] (vertex 0 of geometries[0]) moved since the trees were "
                                 "built or refit"),
            std::string::npos)
            << stale.message();
        for (const ContactRange& r : b.ranges) EXPECT_EQ(r.first, 0xDEADu) << "a range was written";
      }
      ASSERT_TRUE(trees->refit(b.input()).ok());
      EXPECT_GT(expectTreesGiveTheSameBits(b, *trees), 500u);
      ASSERT_NE(before[0].x, b.points[0].x);
    }
  }
}

// A mesh of the input without a tree (a query added after the build) gets one built in the call.
TEST(GeometryQueriesMeshTrees, AMeshWithoutATreeIsBuiltInTheCall) {
  Batch b = randomMeshes(23);
  Batch first = b;
  first.queries.resize(2);  // s0 against s1 only
  auto trees = GeometryQueryTrees::build(first.input());
  ASSERT_TRUE(trees.ok()) << trees.message();
  EXPECT_EQ(trees->geometries(), (std::vector<uint32_t>{0, 1}));
  EXPECT_GT(expectTreesGiveTheSameBits(b, *trees), 500u);
}

// The comparison reads the input's cells and vertices once, against the trees' fingerprints of 4 KB
// blocks (1 024 cell entries, 256 vertices; src/cpu/geometry_query_trees.cpp): a cell entry changed or a
// vertex moved in any block of a mesh of 6 000 triangles (18 cell blocks, 71 vertex blocks: the four
// streams, the whole blocks after them and the shorter last one) is refused, naming it; a change of the
// vertices' w alone is not a move (the contacts those of the call without trees).
TEST(GeometryQueriesMeshTrees, AChangeInAnyBlockOfALargeMeshIsFound) {
  std::mt19937 rng(31);
  Batch b;
  const uint32_t big = addRandomSoup(b, rng, GeometryType::kSurfaceMesh, 6000, 3.0f, 0.5f);
  const uint32_t small = addRandomSoup(b, rng, GeometryType::kSurfaceMesh, 300, 3.0f, 0.5f);
  b.query(big, small);
  b.query(small, big);
  auto built = GeometryQueryTrees::build(b.input());
  ASSERT_TRUE(built.ok()) << built.message();
  const Geometry g = b.geometries[big];
  const uint32_t firstEntry = static_cast<uint32_t>(g.p2.x), entries = 3 * static_cast<uint32_t>(g.p2.y);
  for (uint32_t v = 0; v < g.count; v = v + 37 < g.count || v + 1 == g.count ? v + 37 : g.count - 1) {
    Batch c = b;
    c.points[g.first + v].y += 1.0f;
    auto counts = runWith(c, v % 2 ? Backend::kCpuSimd : Backend::kCpuScalar, &*built, 16);
    ASSERT_FALSE(counts.ok()) << v;
    EXPECT_NE(counts.message().find("trees: points[" + std::to_string(g.first + v) + "] (vertex " +
                                    std::to_string(v) + " of geometries[0]) moved"),
              std::string::npos)
        << counts.message();
  }
  for (uint32_t e = 0; e < entries; e = e + 29 < entries || e + 1 == entries ? e + 29 : entries - 1) {
    Batch c = b;
    c.cells[firstEntry + e] = (c.cells[firstEntry + e] + 1) % g.count;
    auto counts = runWith(c, e % 2 ? Backend::kCpuSimd : Backend::kCpuScalar, &*built, 16);
    ASSERT_FALSE(counts.ok()) << e;
    EXPECT_NE(counts.message().find("trees: cells[" + std::to_string(firstEntry + e) + "] (geometries[0]'s cell " +
                                    std::to_string(e / 3) + ", corner " + std::to_string(e % 3) + ") is " +
                                    std::to_string(c.cells[firstEntry + e])),
              std::string::npos)
        << counts.message();
  }
  Batch w = b;
  for (Float4& p : w.points) p.w = 7.0f;
  EXPECT_GT(expectTreesGiveTheSameBits(w, *built), 100u);
}

// GeometryQueryInput::treesGeneration: the caller states the meshes unchanged since the trees' last
// build or refit. The contacts are those of the compared call; a generation that is not the trees'
// current one is refused, the geometries are still compared, the cells and vertices are not.
TEST(GeometryQueriesMeshTrees, StatedGenerationSkipsTheCellAndVertexComparison) {
  Batch b = randomMeshes(25);
  auto trees = GeometryQueryTrees::build(b.input());
  ASSERT_TRUE(trees.ok()) << trees.message();
  const uint64_t built = trees->generation();
  EXPECT_NE(built, 0u);
  auto other = GeometryQueryTrees::build(b.input());
  ASSERT_TRUE(other.ok()) << other.message();
  EXPECT_NE(other->generation(), built);  // unique in the process
  EXPECT_GT(expectTreesGiveTheSameBits(b, *trees, built), 500u);
  const auto refusedWith = [&](Batch c, const GeometryQueryTrees* t, uint64_t generation, const std::string& mentions) {
    for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      auto counts = runWith(c, backend, t, 16, generation);
      ASSERT_FALSE(counts.ok()) << mentions;
      EXPECT_EQ(counts.error().code, ErrorCode::kInvalidArgument);
      EXPECT_NE(counts.message().find(mentions), std::string::npos) << counts.message();
      for (const ContactRange& r : c.ranges) EXPECT_EQ(r.first, 0xDEADu) << "a range was written";
    }
  };
  refusedWith(b, nullptr, 5, "treesGeneration is 5 without trees: must be 0");
  refusedWith(b, &*trees, other->generation(),
              "treesGeneration is " + std::to_string(other->generation()) + ", the trees' generation is " +
                  std::to_string(built));
  {
    Batch c = b;
    c.geometries[1].p2.y -= 1.0f;  // geometries are compared with a stated generation too
    refusedWith(c, &*trees, built, "trees: geometries[1].p2.y (cell count) is 899.000000");
  }
  // What keeps the call in bounds is still checked: entries below the vertex count, finite vertices,
  // a closed mesh's cells (geometries[5], the box) compared.
  {
    Batch c = b;
    c.cells[7] = 1u << 30;
    refusedWith(c, &*trees, built, "trees: cells[7] (geometries[0]'s cell 2, corner 1) is 1073741824: the mesh has");
  }
  {
    Batch c = b;
    c.points[c.geometries[1].first + 5].y = std::nanf("");
    refusedWith(c, &*trees, built, "points[" + std::to_string(c.geometries[1].first + 5) + "].y is nan");
    const uint32_t last = c.geometries[1].first + c.geometries[1].count - 1;  // the SIMD loop's tail too
    c.points[c.geometries[1].first + 5].y = 0.0f;
    c.points[last].z = std::numeric_limits<float>::infinity();
    refusedWith(c, &*trees, built, "points[" + std::to_string(last) + "].z is inf");
  }
  {
    Batch c = b;
    const uint32_t box = static_cast<uint32_t>(c.geometries[5].p2.x);
    ASSERT_EQ(c.geometries[5].flags, kGeometryFlagClosed);
    std::swap(c.cells[box + 1], c.cells[box + 2]);
    refusedWith(c, &*trees, built, "trees: cells[" + std::to_string(box + 1) + "] (geometries[5]'s cell 0, corner 1)");
  }
  // A moved vertex and a changed cell are the caller's error, not detected (the call runs).
  Batch moved = b;
  moved.points[moved.geometries[1].first + 5].y += 1e-3f;
  std::swap(moved.cells[7], moved.cells[8]);
  moved.points[moved.geometries[1].first + 6].w = std::nanf("");  // w is not a coordinate
  for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
    auto counts = runWith(moved, backend, &*trees, 200000, built);
    EXPECT_TRUE(counts.ok()) << counts.message();
    EXPECT_FALSE(runWith(moved, backend, &*trees, 200000).ok());  // compared (the default): refused
  }
  // A refit makes a new generation; the old one is refused, the new one runs.
  ASSERT_FALSE(trees->refit(moved.input()).ok());  // the cells changed: build again
  moved.cells = b.cells;
  ASSERT_TRUE(trees->refit(moved.input()).ok());
  const uint64_t refit = trees->generation();
  EXPECT_NE(refit, built);
  refusedWith(moved, &*trees, built, "treesGeneration is " + std::to_string(built));
  EXPECT_GT(expectTreesGiveTheSameBits(moved, *trees, refit), 500u);
}

TEST(GeometryQueriesMeshTrees, TreesThatDoNotMatchTheInputNameTheField) {
  const Batch good = randomMeshes(24);
  auto built = GeometryQueryTrees::build(good.input());
  ASSERT_TRUE(built.ok()) << built.message();
  const GeometryQueryTrees& trees = *built;
  const auto refused = [&](Batch b, const std::string& mentions) {
    for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      auto counts = runWith(b, backend, &trees, 16);
      ASSERT_FALSE(counts.ok()) << mentions;
      EXPECT_EQ(counts.error().code, ErrorCode::kInvalidArgument);
      EXPECT_NE(counts.message().find(mentions), std::string::npos) << counts.message();
      for (const ContactElement& e : b.elementsA) EXPECT_EQ(e.query, 0xDEADu) << "an element was written";
      for (const ContactRange& r : b.ranges) EXPECT_EQ(r.first, 0xDEADu) << "a range was written";
    }
    // A refit refuses the same change of geometry or cells (points are what a refit takes).
    if (mentions.find("points[") == std::string::npos) {
      GeometryQueryTrees copy = GeometryQueryTrees::build(good.input()).value();
      const Status st = copy.refit(b.input());
      ASSERT_FALSE(st.ok()) << mentions;
      EXPECT_NE(st.message().find(mentions), std::string::npos) << st.message();
      // Unchanged by the refused refit: the good input still runs with it.
      Batch g = good;
      EXPECT_TRUE(runWith(g, Backend::kCpuScalar, &copy, 200000).ok());
    }
  };
  {
    Batch b = good;
    std::swap(b.cells[7], b.cells[8]);  // triangle 2 of geometries[0]: corners 1 and 2 swapped
    refused(b, "trees: cells[7] (geometries[0]'s cell 2, corner 1) is " + std::to_string(b.cells[7]) +
                   ", the tree was built with " + std::to_string(b.cells[8]));
  }
  {
    // An index out of range: the mesh's own checks are skipped for a kept geometry, the cells'
    // comparison with the tree's refuses it before any cell is read (a refit: validate's own message).
    Batch b = good;
    const uint32_t before = b.cells[7];
    b.cells[7] = 1u << 30;
    for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      auto counts = runWith(b, backend, &trees, 16);
      ASSERT_FALSE(counts.ok());
      EXPECT_NE(counts.message().find("trees: cells[7] (geometries[0]'s cell 2, corner 1) is 1073741824, the "
                                      "tree was built with " + std::to_string(before)),
                std::string::npos)
          << counts.message();
    }
  }
  {
    Batch b = good;
    b.geometries[1].p2.y -= 1.0f;  // one triangle fewer
    refused(b, "trees: geometries[1].p2.y (cell count) is 899.000000, the tree's mesh had 900.000000");
  }
  {
    Batch b = good;
    b.geometries[2].first += 2;  // the line mesh's vertices shifted (still in range)
    refused(b, "trees: geometries[2].first (first vertex) is ");
  }
  {
    Batch b = good;
    b.geometries[3].p2.w = 0.0f;
    b.geometries[4].p2.w = 0.25f;  // the thickness changed
    refused(
        b,
        "trees: geometries[4] (its p0, p1, p2.z or p2.w) differs from the geometry the tree was built with");
  }
  {
    Batch b = good;
    b.points[good.geometries[1].first + 5].y += 1e-6f;
    refused(b, "trees: points[" + std::to_string(good.geometries[1].first + 5) +
                   "] (vertex 5 of geometries[1]) moved since the trees were built or refit");
  }
  {
    // An input of fewer geometries: the trees of geometries[5] has no geometry.
    Batch b;
    b.addMesh(GeometryType::kSurfaceMesh, {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0)}, {0, 1, 2});
    b.addMesh(GeometryType::kLineMesh, {v3(0, 0, -1), v3(0, 0, 1)}, {0, 1});
    b.query(0, 1);
    refused(b, "trees: geometries[0].");  // geometries[0] first: its cell count differs
  }
  {
    // The build validates its input (the field named, as validate does).
    Batch b = good;
    b.points[3].z = std::nanf("");
    auto bad = GeometryQueryTrees::build(b.input());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("points[3].z is nan"), std::string::npos) << bad.message();
    GeometryQueryTrees copy = GeometryQueryTrees::build(good.input()).value();
    const Status st = copy.refit(b.input());
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("points[3].z is nan"), std::string::npos) << st.message();
    // A call with the trees: the kept mesh's vertices are not skipped by the finiteness check once
    // one differs from the tree's copy (the NaN named, not "moved").
    for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      auto counts = runWith(b, backend, &trees, 16);
      ASSERT_FALSE(counts.ok());
      EXPECT_NE(counts.message().find("points[3].z is nan"), std::string::npos) << counts.message();
    }
  }
}

}  // namespace
}  // namespace vkc::test::geometry
