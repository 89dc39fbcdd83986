// Inter collision on every backend (one body per backend): broad phase and narrow phase against brute
// force, the filter, same-cloth pairs, isolated pairs landing at the distance, a scene of many small
// cloths against the same cloths run pair by pair, and conformance with the CPU scalar reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "inter_scene.h"
#include "shared/inter_collision.h"
#include "support/bounds_reference.h"
#include "support/executors.h"
#include "support/vulkan_fixture.h"
#include "vkcollide/bounds.h"

namespace vkc::test {
namespace {

using InterCollision = BackendTest;

// The threaded CPU backend: the scene on every test executor gives `want` (this backend's
// single-threaded particles and debug), bit for bit.
void expectThreadedEqual(Backend backend, const InterScene& s, const std::vector<Float4>& want,
                         const InterCollisionDebug& wantDebug) {
  if (backend == Backend::kVulkan) return;
  for (const TestExecutor& e : testExecutors()) {
    std::vector<Float4> p = s.particles;
    InterCollisionDebug debug;
    const Status st = collideInterCpu({p, s.cloths, s.filters, s.settings}, backend, *e.executor, &debug);
    ASSERT_TRUE(st.ok()) << e.name << ": " << st.message();
    EXPECT_EQ(std::memcmp(p.data(), want.data(), want.size() * sizeof(Float4)), 0) << e.name;
    EXPECT_EQ(debug.clothPairs, wantDebug.clothPairs) << e.name;
    EXPECT_EQ(debug.marked, wantDebug.marked) << e.name;
    EXPECT_EQ(debug.contacts, wantDebug.contacts) << e.name;
    EXPECT_TRUE(bitwiseEqual(debug.gridBounds, wantDebug.gridBounds)) << e.name;
  }
}

// Two random cloths, rotated and translated so that about half of each overlaps the other.
InterScene twoOverlappingCloths(uint32_t countA, uint32_t countB, uint32_t seed) {
  std::mt19937 rng(seed);
  InterScene s;
  addRandomCloth(s, countA, 1.0f, {0.3f, -0.2f, 0.1f, 0}, quatAxisAngle(1, 2, 3, 0.7f), rng);
  addRandomCloth(s, countB, 1.0f, {1.2f, 0.4f, -0.3f, 0}, quatAxisAngle(-2, 1, 0.5f, 2.1f), rng);
  s.settings = {0.12f, 1.0f, 1};
  return s;
}

TEST_P(InterCollision, TwoRotatedClothsTreatExactlyTheBruteForcePairs) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const InterScene s = twoOverlappingCloths(1500 + 37 * seed, 2100 - 53 * seed, seed);
    std::vector<bool> ambiguous;
    const std::vector<uint32_t> want = bruteForceContacts(s, &ambiguous);
    const size_t skipped = static_cast<size_t>(std::count(ambiguous.begin(), ambiguous.end(), true));
    EXPECT_LT(skipped, 10u);
    InterCollisionDebug report;
    auto out = interStep(backend(), ctx(), s, &report);
    ASSERT_TRUE(out.ok()) << out.message();
    ASSERT_EQ(report.clothPairs, (std::vector<InterClothPair>{{0, 1}}));
    size_t touched = 0, withContacts = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      if (ambiguous[i]) continue;  // a pair on the distance: either answer is right
      EXPECT_EQ(report.contacts[i], want[i]) << "particle " << i;
      withContacts += want[i] > 0;
      const bool marked = std::binary_search(report.marked.begin(), report.marked.end(), static_cast<uint32_t>(i));
      if (want[i] > 0) {
        EXPECT_TRUE(marked) << "particle " << i << " has contacts but was not marked";
      }
      const bool moved = !((*out)[i] == s.particles[i]);
      touched += moved;
      if (want[i] == 0) {
        EXPECT_FALSE(moved) << "particle " << i << " has no contact but moved";
      }
    }
    EXPECT_GT(withContacts, 50u);
    EXPECT_GT(touched, 0u);
    // Marking culls: not every particle reaches the narrow phase.
    EXPECT_LT(report.marked.size(), s.particles.size());
  }
}

TEST_P(InterCollision, SameClothPairsAreNeverTouched) {
  // Cloth 0 has particle pairs far closer than the distance; cloth 1 is near only one of its corners.
  InterScene s;
  addGridCloth(s, 8, 0.01f, {0, 0, 0, 0}, quatAxisAngle(0, 0, 1, 0.3f));
  addGridCloth(s, 3, 0.5f, {0.02f, 0.02f, 0.03f, 0}, quatAxisAngle(1, 0, 0, 0.5f));
  s.settings = {0.05f, 1.0f, 3};
  InterCollisionDebug report;
  auto out = interStep(backend(), ctx(), s, &report);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(report.contacts, bruteForceContacts(s));
  for (uint32_t i = 0; i < s.particles.size(); ++i) {
    if (report.contacts[i] == 0) {
      EXPECT_EQ((*out)[i], s.particles[i]) << "particle " << i;
    }
  }
  // Alone, the dense cloth is left exactly as it is.
  InterScene alone;
  addGridCloth(alone, 8, 0.01f, {0, 0, 0, 0}, quatAxisAngle(0, 0, 1, 0.3f));
  alone.settings = s.settings;
  auto out2 = interStep(backend(), ctx(), alone, &report);
  ASSERT_TRUE(out2.ok()) << out2.message();
  EXPECT_EQ(*out2, alone.particles);
  EXPECT_TRUE(report.marked.empty());
  EXPECT_TRUE(report.clothPairs.empty());
}

TEST_P(InterCollision, FilterIsRespectedBothWays) {
  // Three cloths at the same place. Cloth 0's mask excludes cloth 1's group (a blocks b); cloth 2's
  // mask excludes cloth 0's group (b blocks a); cloths 1 and 2 collide.
  InterScene s;
  std::mt19937 rng(9);
  for (int c = 0; c < 3; ++c) {
    const float f = static_cast<float>(c);
    addRandomCloth(s, 300, 0.5f, {0.1f * f, 0, 0, 0}, quatAxisAngle(1, 1, f, 0.4f * f), rng);
  }
  s.filters = {{0, 0x1, 0x1 | 0x4}, {1, 0x2, ~0u}, {2, 0x4, ~0x1u}};
  s.settings = {0.08f, 1.0f, 1};
  InterCollisionDebug report;
  auto out = interStep(backend(), ctx(), s, &report);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(report.clothPairs, (std::vector<InterClothPair>{{1, 2}}));
  const std::vector<uint32_t> want = bruteForceContacts(s);
  EXPECT_EQ(report.contacts, want);
  for (uint32_t i = 0; i < 300; ++i) {
    EXPECT_EQ(report.contacts[i], 0u);
    EXPECT_EQ((*out)[i], s.particles[i]) << "cloth 0 collides with nothing";
  }
  // Without filters every pair collides.
  s.filters.clear();
  ASSERT_TRUE(interStep(backend(), ctx(), s, &report).ok());
  EXPECT_EQ(report.clothPairs, (std::vector<InterClothPair>{{0, 1}, {0, 2}, {1, 2}}));
  EXPECT_EQ(report.contacts, bruteForceContacts(s));
}

TEST_P(InterCollision, IsolatedPairsEndExactlyAtTheDistance) {
  // Cloth A and B, rotated and translated; particle k of A and particle k of B are 0.2 .. 0.9 of the
  // distance apart in world space, and every pair is far from every other.
  const float d = 0.1f;
  InterScene s;
  const InterClothDesc a{{0, 0}, {1.0f, 2.0f, -1.0f, 0}, quatAxisAngle(1, -1, 2, 1.1f)};
  const InterClothDesc b{{0, 0}, {-0.5f, 0.25f, 3.0f, 0}, quatAxisAngle(0, 3, 1, -2.3f)};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), f(0.2f, 0.9f);
  const uint32_t n = 300;
  std::vector<D3> worldA;
  for (uint32_t k = 0; k < n; ++k) {
    // Pairs on a 3D lattice of spacing 1 (>> d), jittered.
    worldA.push_back({(k % 7) * 1.0 + 0.2 * static_cast<double>(u(rng)), ((k / 7) % 7) * 1.0 + 0.2 * static_cast<double>(u(rng)),
                      (k / 49) * 1.0 + 0.2 * static_cast<double>(u(rng))});
  }
  // Local positions: invert the transforms in double.
  auto toLocal = [](const InterClothDesc& c, D3 w) {
    const double qx = -c.rotation.x, qy = -c.rotation.y, qz = -c.rotation.z, qw = c.rotation.w;
    const double px = w.x - static_cast<double>(c.translation.x), py = w.y - static_cast<double>(c.translation.y),
                 pz = w.z - static_cast<double>(c.translation.z);
    const double tx = 2 * (qy * pz - qz * py), ty = 2 * (qz * px - qx * pz), tz = 2 * (qx * py - qy * px);
    return Float4{static_cast<float>(px + qw * tx + (qy * tz - qz * ty)),
                  static_cast<float>(py + qw * ty + (qz * tx - qx * tz)),
                  static_cast<float>(pz + qw * tz + (qx * ty - qy * tx)), 1.0f};
  };
  s.cloths = {a, b};
  s.cloths[0].range = {0, n};
  s.cloths[1].range = {n, n};
  for (uint32_t k = 0; k < n; ++k) s.particles.push_back(toLocal(a, worldA[k]));
  for (uint32_t k = 0; k < n; ++k) {
    const double dx = u(rng), dy = u(rng), dz = u(rng);
    const double l = std::sqrt(dx * dx + dy * dy + dz * dz) / static_cast<double>(f(rng) * d);
    s.particles.push_back(toLocal(b, {worldA[k].x + dx / l, worldA[k].y + dy / l, worldA[k].z + dz / l}));
  }
  s.settings = {d, 1.0f, 1};
  InterCollisionDebug report;
  auto out = interStep(backend(), ctx(), s, &report);
  ASSERT_TRUE(out.ok()) << out.message();
  ASSERT_EQ(report.marked.size(), 2 * n);
  for (uint32_t k = 0; k < n; ++k) {
    ASSERT_EQ(report.contacts[k], 1u) << "pair " << k;
    const double l = dist(toWorld(s.cloths[0], (*out)[k]), toWorld(s.cloths[1], (*out)[n + k]));
    EXPECT_NEAR(l, static_cast<double>(d), 4e-6) << "pair " << k;
  }
}

TEST_P(InterCollision, ThousandSmallClothsMatchRunningThemPairwise) {
  // 1000 cloths of 16 particles: 500 pairs, each pair overlapping only its partner (pairs 3 units
  // apart), with various rotations. The scene in one call must equal each pair run alone.
  InterScene scene;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> ang(-3.0f, 3.0f);
  for (uint32_t p = 0; p < 500; ++p) {
    const float x = 3.0f * static_cast<float>(p % 25), y = 3.0f * static_cast<float>(p / 25);
    addRandomCloth(scene, 16, 0.3f, {x, y, 0, 0}, quatAxisAngle(1, ang(rng), 0.5f, ang(rng)), rng);
    addRandomCloth(scene, 16, 0.3f, {x + 0.2f, y + 0.1f, 0.05f, 0}, quatAxisAngle(ang(rng), 1, 0.2f, ang(rng)), rng);
  }
  scene.settings = {0.1f, 0.8f, 2};
  InterCollisionDebug report;
  auto out = interStep(backend(), ctx(), scene, &report);
  ASSERT_TRUE(out.ok()) << out.message();
  ASSERT_EQ(report.clothPairs.size(), 500u);
  expectThreadedEqual(backend(), scene, *out, report);
  size_t moved = 0;
  for (uint32_t p = 0; p < 500; ++p) {
    InterScene pair;
    pair.settings = scene.settings;
    pair.cloths = {scene.cloths[2 * p], scene.cloths[2 * p + 1]};
    const uint32_t first = scene.cloths[2 * p].range.first;
    pair.cloths[0].range.first = 0;
    pair.cloths[1].range.first = 16;
    pair.particles.assign(scene.particles.begin() + first, scene.particles.begin() + first + 32);
    auto alone = interStep(Backend::kCpuScalar, nullptr, pair);
    ASSERT_TRUE(alone.ok()) << alone.message();
    for (uint32_t i = 0; i < 32; ++i) {
      const Float4& g = (*out)[first + i];
      const Float4& w = (*alone)[i];
      moved += !(w == pair.particles[i]);
      EXPECT_NEAR(g.x, w.x, 1e-6f) << "pair " << p << " particle " << i;
      EXPECT_NEAR(g.y, w.y, 1e-6f) << "pair " << p << " particle " << i;
      EXPECT_NEAR(g.z, w.z, 1e-6f) << "pair " << p << " particle " << i;
    }
  }
  EXPECT_GT(moved, 500u);
}

TEST_P(InterCollision, ConformsToTheScalarReference) {
  // Several cloths of awkward sizes (empty, single particle, not multiples of the group or tile
  // size), filters, several iterations; integer results equal, positions within 1e-5.
  InterScene s;
  std::mt19937 rng(21);
  s.particles.push_back({9, 9, 9, 1});  // a particle in no cloth
  const uint32_t sizes[] = {0, 1, 255, 257, 2049, 7, 600, 0, 3000};
  for (uint32_t c = 0; c < std::size(sizes); ++c) {
    const float f = static_cast<float>(c);
    addRandomCloth(s, sizes[c], 0.8f, {0.35f * f, 0.1f * static_cast<float>(c % 3), -0.2f * static_cast<float>(c % 2), 0},
                   quatAxisAngle(f + 1, 1, -1, 0.5f * f), rng);
  }
  s.filters = {{3, 0x2, ~0x8u}, {6, 0x8, ~0u}};
  s.settings = {0.05f, 0.7f, 4};
  InterCollisionDebug want, got;
  auto ref = interStep(Backend::kCpuScalar, nullptr, s, &want);
  ASSERT_TRUE(ref.ok()) << ref.message();
  auto out = interStep(backend(), ctx(), s, &got);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(got.clothPairs, want.clothPairs);
  EXPECT_EQ(got.marked, want.marked);
  EXPECT_EQ(got.contacts, want.contacts);
  EXPECT_EQ(want.contacts, bruteForceContacts(s));
  EXPECT_GT(want.clothPairs.size(), 5u);
  ASSERT_EQ(out->size(), ref->size());
  size_t exact = 0;
  for (size_t i = 0; i < out->size(); ++i) {
    exact += (*out)[i] == (*ref)[i];
    EXPECT_NEAR((*out)[i].x, (*ref)[i].x, 1e-5f) << i;
    EXPECT_NEAR((*out)[i].y, (*ref)[i].y, 1e-5f) << i;
    EXPECT_NEAR((*out)[i].z, (*ref)[i].z, 1e-5f) << i;
    EXPECT_EQ((*out)[i].w, (*ref)[i].w) << i;
  }
  std::printf("[          ] %s: %zu of %zu particles bitwise equal to the scalar reference\n", toString(backend()),
              exact, out->size());  expectThreadedEqual(backend(), s, *out, got);
}

TEST_P(InterCollision, BroadPhaseMatchesAllPairsOfBoxes) {
  // 300 cloths scattered with random sizes: the sweep with its early exit finds exactly the pairs an
  // all-pairs test of the same world boxes finds (boxes from the bounds stage, through the shared
  // world-box function, so the test checks the sweep, sort and early exit).
  InterScene s;
  std::mt19937 rng(33);
  std::uniform_real_distribution<float> pos(0.0f, 20.0f), size(0.1f, 2.5f), ang(-3.0f, 3.0f);
  for (uint32_t c = 0; c < 300; ++c) {
    addRandomCloth(s, c % 17 == 0 ? 0 : 1 + c % 5, size(rng), {pos(rng), pos(rng) * 0.3f, pos(rng) * 0.1f, 0},
                   quatAxisAngle(ang(rng), 1, ang(rng), ang(rng)), rng);
  }
  s.settings = {0.2f, 1.0f, 1};
  InterCollisionDebug report;
  ASSERT_TRUE(interStep(backend(), ctx(), s, &report).ok());
  std::vector<ClothRange> ranges;
  for (const auto& c : s.cloths) ranges.push_back(c.range);
  std::vector<Aabb> local(ranges.size());
  ASSERT_TRUE(computeBoundsCpu({s.particles, {}, ranges, false, local}, Backend::kCpuScalar).ok());
  std::vector<gpu::vec3> lo(ranges.size()), hi(ranges.size());
  for (size_t c = 0; c < ranges.size(); ++c) {
    gpu::vec3 c0, c1, c2;
    const Float4 q = s.cloths[c].rotation;
    gpu::interRotationColumns(gpu::vec4(q.x, q.y, q.z, q.w), c0, c1, c2);
    if (local[c].empty()) continue;
    gpu::interWorldBox(c0, c1, c2, {s.cloths[c].translation.x, s.cloths[c].translation.y, s.cloths[c].translation.z},
                       {local[c].lo.x, local[c].lo.y, local[c].lo.z}, {local[c].hi.x, local[c].hi.y, local[c].hi.z},
                       s.settings.distance, lo[c], hi[c]);
  }
  std::vector<InterClothPair> want;
  for (uint32_t a = 0; a < ranges.size(); ++a) {
    for (uint32_t b = a + 1; b < ranges.size(); ++b) {
      if (local[a].empty() || local[b].empty()) continue;
      if (gpu::interBoxesOverlap(lo[a], hi[a], lo[b], hi[b])) want.push_back({a, b});
    }
  }
  EXPECT_GT(want.size(), 100u);
  EXPECT_EQ(report.clothPairs, want);
}

TEST_P(InterCollision, EmptyScenesAndEmptyClothsChangeNothing) {
  InterScene none;
  none.settings = {0.1f, 1.0f, 1};
  InterCollisionDebug report;
  auto out = interStep(backend(), ctx(), none, &report);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_TRUE(out->empty());
  EXPECT_TRUE(report.clothPairs.empty());
  // Cloths without particles, a single particle each, and particles outside every cloth.
  InterScene s;
  s.particles = {{0, 0, 0, 1}, {0.01f, 0, 0, 1}, {0.02f, 0, 0, 1}};
  s.cloths = {{{0, 0}, {}, {0, 0, 0, 1}}, {{1, 1}, {}, {0, 0, 0, 1}}, {{3, 0}, {}, {0, 0, 0, 1}}};
  s.settings = {0.1f, 1.0f, 2};
  out = interStep(backend(), ctx(), s, &report);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(*out, s.particles);
  EXPECT_TRUE(report.marked.empty());
  // Two single-particle cloths at the same place (coincident): pushed apart along the sweep axis,
  // symmetric, to the distance.
  s.cloths = {InterClothDesc{{0, 1}, {}, {0, 0, 0, 1}}, InterClothDesc{{2, 1}, Float4{-0.02f, 0, 0, 0}, {0, 0, 0, 1}}};
  out = interStep(backend(), ctx(), s, &report);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(report.clothPairs, (std::vector<InterClothPair>{{0, 1}}));
  EXPECT_EQ(report.contacts, (std::vector<uint32_t>{1, 0, 1}));
  const float gap = std::fabs(((*out)[2].x - 0.02f) - (*out)[0].x) + std::fabs((*out)[2].y - (*out)[0].y) +
                    std::fabs((*out)[2].z - (*out)[0].z);
  EXPECT_NEAR(gap, 0.1f, 1e-6f);
  EXPECT_EQ((*out)[1], s.particles[1]);
}

TEST_P(InterCollision, StiffnessZeroFindsTheContactsAndMovesNothing) {
  // Stiffness 0 is valid (validateSeparation, as in self collision): the pairs are found, every
  // correction is zero, the particles keep their bits; in place, the input array is the output.
  InterScene s = twoOverlappingCloths(900, 1100, 7);
  s.settings = {0.12f, 0.0f, 3};
  const std::vector<Float4> before = s.particles;
  InterCollisionDebug report;
  const Status st = collideInter(backend(), ctx(), s.input(), &report);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(report.clothPairs, (std::vector<InterClothPair>{{0, 1}}));
  size_t withContacts = 0;
  for (uint32_t c : report.contacts) withContacts += c > 0;
  EXPECT_GT(withContacts, 20u);
  ASSERT_EQ(s.particles.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(s.particles[i], before[i]) << "particle " << i;
  // The same scene with stiffness 1 moves them, in the input's own array.
  s.settings.stiffness = 1.0f;
  ASSERT_TRUE(collideInter(backend(), ctx(), s.input()).ok());
  EXPECT_NE(s.particles, before);
}

INSTANTIATE_TEST_SUITE_P(Backends, InterCollision, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
