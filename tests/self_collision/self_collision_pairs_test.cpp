// Self collision against the O(N^2) reference, on every backend: the set of pairs the engine treats
// (SelfCollisionDebug::pairs) equals the brute-force set of pairs closer than the distance (minus the
// pairs culled by rest positions), for particles away from the exact threshold. Random clouds,
// crumpled cloths, particles on cell boundaries and at the sweep axis' ends, flat and very long sets.
#include <gtest/gtest.h>

#include <algorithm>

#include "self_collision_support.h"
#include "shared/self_collision.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using SelfCollisionPairs = BackendTest;

// Runs one pass and checks the pair set, its symmetry and the per-particle counts.
void expectReferencePairs(Backend backend, Context* ctx, SelfScene& scene) {
  std::set<std::array<uint32_t, 2>> ambiguous;
  const auto want = referencePairs(scene, &ambiguous);
  SelfCollisionDebug debug;
  const Status st = collideSelf(backend, ctx, scene.input(), &debug);
  ASSERT_TRUE(st.ok()) << st.message();
  std::set<std::array<uint32_t, 2>> got;
  for (const auto& p : debug.pairs) {
    if (ambiguous.count(p) == 0) got.insert(p);
  }
  std::vector<std::array<uint32_t, 2>> missing, extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  EXPECT_TRUE(missing.empty()) << missing.size() << " reference pairs missing, first (" << missing[0][0] << ", "
                               << missing[0][1] << ")";
  EXPECT_TRUE(extra.empty()) << extra.size() << " pairs beyond the reference, first (" << extra[0][0] << ", "
                             << extra[0][1] << ")";
  EXPECT_EQ(debug.directedPairs, 2 * debug.pairs.size()) << "every pair must be gathered from both sides";
  uint64_t countSum = 0;
  for (uint32_t c : debug.neighbourCounts) countSum += c;
  EXPECT_EQ(countSum, debug.directedPairs);
  EXPECT_GT(want.size(), 0u) << "the scene should have pairs";
}

TEST_P(SelfCollisionPairs, RandomClouds) {
  for (uint32_t n : {1u, 2u, 63u, 65u, 700u, 3000u}) {
    SCOPED_TRACE("n " + std::to_string(n));
    SelfScene s;
    s.particles = randomCloud(n, n + 1, {-1, -2, -0.5f, 0}, {1, 2, 0.5f, 0});
    s.cloths = {{0, n}};
    s.settings = {0.12f, 1.0f};
    if (n < 3) {  // too few for pairs: only check that it runs
      SelfCollisionDebug debug;
      ASSERT_TRUE(collideSelf(backend(), ctx(), s.input(), &debug).ok());
      continue;
    }
    expectReferencePairs(backend(), ctx(), s);
  }
}

TEST_P(SelfCollisionPairs, CrumpledClothsWithRestPositions) {
  for (float ratio : {0.8f, 1.2f}) {  // 1.2: direct mesh neighbours are culled at rest, diagonals are not
    SCOPED_TRACE("distance / spacing " + std::to_string(ratio));
    SelfScene s;
    crumpledCloth(40, 0.05f, 3, s.particles, s.rest);
    s.cloths = {{0, static_cast<uint32_t>(s.particles.size())}};
    s.settings = {0.05f * ratio, 0.9f};
    expectReferencePairs(backend(), ctx(), s);
  }
}

TEST_P(SelfCollisionPairs, ManyClothsNeverCollideWithEachOther) {
  SelfScene s;
  // Three overlapping clouds as three cloths, an empty cloth and a single-particle cloth; a subset on one.
  uint32_t first = 0;
  for (uint32_t c = 0; c < 5; ++c) {
    const uint32_t n = c == 1 ? 0 : (c == 3 ? 1 : 500 + 37 * c);
    const auto p = randomCloud(n, 10 + c, {0, 0, 0, 0}, {1, 1, 1, 0});
    s.particles.insert(s.particles.end(), p.begin(), p.end());
    s.cloths.push_back({first, n});
    first += n;
  }
  s.subsets.resize(5);
  for (uint32_t i = 0; i < 574; i += 2) s.subsets[2].push_back(573 - i);  // every other particle, reversed
  s.settings = {0.09f, 0.5f};
  expectReferencePairs(backend(), ctx(), s);
}

// Pairs straddling hash-cell boundaries and sweep-cell boundaries, and at both ends of the sweep axis.
TEST_P(SelfCollisionPairs, CellBoundariesAndSweepEnds) {
  const float d = 0.1f;
  const gpu::SelfGrid g = gpu::makeSelfGrid({0, 0, 0}, {4, 1, 2}, d);  // sweep x; hash y (1 m), z (2 m)
  ASSERT_EQ(g.axes.x, 0u);
  SelfScene s;
  s.settings = {d, 1.0f};
  // The box's corners fix the grid (they are particles too).
  s.particles = {{0, 0, 0, 1}, {4, 1, 2, 1}};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int k = 0; k < 300; ++k) {
    // A hash-cell boundary on y and one on z (cell coordinate = (p - lower) * scale + 1).
    const float by = float(1 + rng() % 9) / g.scale.y, bz = float(1 + rng() % 19) / g.scale.z;
    const float x = 0.2f + 3.6f * u(rng);
    const float off = d * (0.05f + 0.4f * u(rng));
    s.particles.push_back({x, by - off, bz, 1});
    s.particles.push_back({x, by + off, bz + (u(rng) - 0.5f) * 0.2f * d, 1});
    s.particles.push_back({x + 0.3f * d, by, bz - off, 1});
    s.particles.push_back({x, by + 0.5f * off, bz + off, 1});
  }
  // Particles on the sweep axis' ends (cells 1 and 65534, clamped) and their neighbours.
  for (float end : {0.0f, 4.0f}) {
    const float in = end == 0.0f ? 1.0f : -1.0f;
    for (int k = 0; k < 20; ++k) {
      const float y = 0.05f + 0.9f * u(rng), z = 0.05f + 1.9f * u(rng);
      s.particles.push_back({end, y, z, 1});
      s.particles.push_back({end + in * d * 0.6f * u(rng), y + 0.3f * d, z, 1});
      s.particles.push_back({end + in * d * (0.95f + 0.04f * u(rng)), y, z, 1});
    }
  }
  s.cloths = {{0, static_cast<uint32_t>(s.particles.size())}};
  expectReferencePairs(backend(), ctx(), s);
}

// A very long set (the sweep axis 20000 d long: each of its 65533 cells is ~0.3 d) and a flat one (no
// extent at all on one axis, tiny on another).
TEST_P(SelfCollisionPairs, VeryLongAndVeryFlatSets) {
  const float d = 0.01f;
  {
    SCOPED_TRACE("long");
    SelfScene s;
    s.settings = {d, 1.0f};
    std::mt19937 rng(8);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (int i = 0; i < 4000; ++i) {
      const float x = 200.0f * u(rng);  // 20000 d
      s.particles.push_back({x, 0.02f * u(rng), 0.02f * u(rng), 1});
      s.particles.push_back({x + d * 0.9f * (u(rng) - 0.5f), 0.02f * u(rng), 0.02f * u(rng), 1});
    }
    s.cloths = {{0, static_cast<uint32_t>(s.particles.size())}};
    expectReferencePairs(backend(), ctx(), s);
  }
  {
    SCOPED_TRACE("flat");
    SelfScene s;
    s.settings = {d, 1.0f};
    auto p = randomCloud(5000, 9, {0, 0, 0, 0}, {0.5f, 0.0f, 0.3f, 0});  // y = 0 exactly
    for (size_t i = 0; i < p.size(); i += 3) p[i].z = p[i].z * 1e-3f;  // a third squeezed onto a thin strip
    s.particles = p;
    s.cloths = {{0, static_cast<uint32_t>(s.particles.size())}};
    expectReferencePairs(backend(), ctx(), s);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SelfCollisionPairs, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
