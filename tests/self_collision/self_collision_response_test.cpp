// Self-collision response on every backend: isolated pairs end exactly at the distance, coincident
// particles stay finite, fixed particles never move, subsets; and bad input is rejected with the
// field's name and nothing changed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "self_collision_support.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using SelfCollisionResponse = BackendTest;
using SelfCollisionBadInput = BackendTest;

float distance(const Float4& a, const Float4& b) {
  const float x = a.x - b.x, y = a.y - b.y, z = a.z - b.z;
  return std::sqrt(x * x + y * y + z * z);
}

TEST_P(SelfCollisionResponse, IsolatedPairsEndAtTheDistanceAfterOnePass) {
  const float d = 0.05f;
  SelfScene s;
  s.settings = {d, 1.0f};
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int k = 0; k < 50; ++k) {
    // Pairs 10 d apart from each other on a line, each with a random direction and separation.
    const Float4 c{10 * d * float(k), 0.3f * u(rng), 0.2f * u(rng), 1};
    float dx = u(rng), dy = u(rng), dz = u(rng);
    const float len = std::sqrt(dx * dx + dy * dy + dz * dz);
    const float sep = d * (0.1f + 0.85f * (u(rng) * 0.5f + 0.5f));
    dx *= sep / (2 * len), dy *= sep / (2 * len), dz *= sep / (2 * len);
    s.particles.push_back({c.x - dx, c.y - dy, c.z - dz, 0.7f});
    s.particles.push_back({c.x + dx, c.y + dy, c.z + dz, 0.7f});
  }
  s.cloths = {{0, static_cast<uint32_t>(s.particles.size())}};
  const std::vector<Float4> before = s.particles;
  ASSERT_TRUE(collideSelf(backend(), ctx(), s.input()).ok());
  for (size_t i = 0; i < s.particles.size(); i += 2) {
    EXPECT_NEAR(distance(s.particles[i], s.particles[i + 1]), d, 2e-6f) << "pair " << i / 2;
    // Equal masses: the midpoint stays.
    EXPECT_NEAR(s.particles[i].x + s.particles[i + 1].x, before[i].x + before[i + 1].x, 1e-6f);
    EXPECT_EQ(s.particles[i].w, 0.7f);
  }
}

TEST_P(SelfCollisionResponse, StiffnessScalesTheCorrectionAndMassesSplitIt) {
  const float d = 0.1f;
  SelfScene s;
  s.settings = {d, 0.5f};
  s.particles = {{0, 0, 0, 1.0f}, {0.04f, 0, 0, 3.0f}};
  s.cloths = {{0, 2}};
  ASSERT_TRUE(collideSelf(backend(), ctx(), s.input()).ok());
  // Violation 0.06, half of it corrected, split 1 : 3 by inverse mass.
  EXPECT_NEAR(s.particles[0].x, -0.0075f, 1e-6f);
  EXPECT_NEAR(s.particles[1].x, 0.04f + 0.0225f, 1e-6f);
}

TEST_P(SelfCollisionResponse, CoincidentParticlesSeparateWithoutNaN) {
  SelfScene s;
  s.settings = {0.1f, 1.0f};
  s.particles = {{1, 2, 3, 1}, {1, 2, 3, 1}, {5, 5, 5, 1}, {5, 5, 5, 1}, {5, 5, 5, 1}};
  s.cloths = {{0, 5}};
  ASSERT_TRUE(collideSelf(backend(), ctx(), s.input()).ok());
  for (const Float4& p : s.particles) {
    EXPECT_TRUE(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z)) << p.x << " " << p.y << " " << p.z;
  }
  EXPECT_NEAR(distance(s.particles[0], s.particles[1]), 0.1f, 1e-6f);
}

TEST_P(SelfCollisionResponse, ZeroInverseMassParticlesNeverMove) {
  SelfScene s;
  s.settings = {0.1f, 1.0f};
  s.particles = {{0, 0, 0, 0}, {0.03f, 0.01f, 0, 1}, {0.2f, 0, 0, 0}, {0.2f, 0, 0, 0}, {0.25f, 0, 0, 0}};
  s.cloths = {{0, 5}};
  const std::vector<Float4> before = s.particles;
  ASSERT_TRUE(collideSelf(backend(), ctx(), s.input()).ok());
  for (size_t i : {0u, 2u, 3u, 4u}) EXPECT_EQ(s.particles[i], before[i]) << i;
  EXPECT_NEAR(distance(s.particles[0], s.particles[1]), 0.1f, 1e-6f);  // the free one moves all the way
}

TEST_P(SelfCollisionResponse, OnlyTheSubsetCollides) {
  SelfScene s;
  s.settings = {0.1f, 1.0f};
  s.particles = {{0, 0, 0, 1}, {0.05f, 0, 0, 1}, {0, 0.05f, 0, 1}, {3, 0, 0, 1}, {3.05f, 0, 0, 1}};
  s.cloths = {{0, 3}, {3, 2}};
  s.subsets = {{2, 0}, {}};  // cloth 0: particles 0 and 2 only; cloth 1: all
  const std::vector<Float4> before = s.particles;
  SelfCollisionDebug debug;
  ASSERT_TRUE(collideSelf(backend(), ctx(), s.input(), &debug).ok());
  const std::vector<std::array<uint32_t, 2>> want = {{0, 2}, {3, 4}};
  EXPECT_EQ(debug.pairs, want);
  EXPECT_EQ(s.particles[1], before[1]);
  EXPECT_EQ(debug.neighbourCounts[1], 0u);
  EXPECT_NEAR(distance(s.particles[0], s.particles[2]), 0.1f, 1e-6f);
  EXPECT_NEAR(distance(s.particles[3], s.particles[4]), 0.1f, 1e-6f);
}

TEST_P(SelfCollisionResponse, EmptyScenesAndClothsAreFine) {
  SelfScene s;
  s.settings = {0.1f, 1.0f};
  ASSERT_TRUE(collideSelf(backend(), ctx(), s.input()).ok());
  s.particles = {{0, 0, 0, 1}};
  s.cloths = {{0, 0}, {0, 1}, {1, 0}};
  ASSERT_TRUE(collideSelf(backend(), ctx(), s.input()).ok());
  EXPECT_EQ(s.particles[0], (Float4{0, 0, 0, 1}));
}

// Bad input: an error naming the field, particles unchanged.
TEST_P(SelfCollisionBadInput, RejectedWithTheFieldNamedAndNothingChanged) {
  struct Case {
    const char* field;
    std::function<void(SelfScene&)> spoil;
  };
  const float nan = std::nanf("");
  const std::vector<Case> cases = {
      {"settings.distance", [](SelfScene& s) { s.settings.distance = 0; }},
      {"settings.distance", [](SelfScene& s) { s.settings.distance = -1; }},
      {"settings.distance", [nan](SelfScene& s) { s.settings.distance = nan; }},
      {"settings.distance", [](SelfScene& s) { s.settings.distance = INFINITY; }},
      {"settings.stiffness", [](SelfScene& s) { s.settings.stiffness = 1.5f; }},
      {"settings.stiffness", [](SelfScene& s) { s.settings.stiffness = -0.1f; }},
      {"settings.stiffness", [nan](SelfScene& s) { s.settings.stiffness = nan; }},
      {"subsets[1][1]", [](SelfScene& s) { s.subsets = {{}, {0, 7}}; }},
      {"subsets[0][2]", [](SelfScene& s) { s.subsets = {{1, 2, 1}, {}}; }},
      {"subsets has 1", [](SelfScene& s) { s.subsets = {{1}}; }},
      {"restPositions has 3", [](SelfScene& s) { s.rest.resize(3); }},
      {"restPositions[2]", [nan](SelfScene& s) {
         s.rest.assign(s.particles.size(), Float4{});
         s.rest[2].y = nan;
       }},
      {"particles[1].x", [nan](SelfScene& s) { s.particles[1].x = nan; }},
      {"particles[0].w", [](SelfScene& s) { s.particles[0].w = -1; }},
      {"cloths[1]", [](SelfScene& s) { s.cloths[1].count = 9; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.field);
    SelfScene s;
    s.particles = {{0, 0, 0, 1}, {0.01f, 0, 0, 1}, {0, 0.01f, 0, 1}, {1, 1, 1, 1}, {1.01f, 1, 1, 1}, {1, 1.01f, 1, 1}};
    s.cloths = {{0, 3}, {3, 3}};
    s.settings = {0.1f, 1.0f};
    c.spoil(s);
    const std::vector<Float4> before = s.particles;
    SelfCollisionDebug debug;
    const Status st = collideSelf(backend(), ctx(), s.input(), &debug);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(c.field), std::string::npos) << st.message();
    EXPECT_EQ(std::memcmp(before.data(), s.particles.data(), before.size() * sizeof(Float4)), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SelfCollisionResponse, VKC_ALL_BACKENDS);
INSTANTIATE_TEST_SUITE_P(Backends, SelfCollisionBadInput, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
