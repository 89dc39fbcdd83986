// The fused self-collision path (SelfCollisionPath::kFused: one workgroup per cloth computes the
// cloth's box and keys, sorts (key, item) in shared memory and gathers; then the collide pass)
// against the general path (bounds, keys, radix sorts, gather, collide) on the same device: bitwise
// equal particles and debug results (sorted keys and particles, neighbour counts, pairs) on scenes of
// many cloths of different sizes, empty ones, subsets, rest positions; the dispatch counts; the
// automatic choice and the refusal of a forced fused path that does not fit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "self_collision/self_collision_support.h"
#include "support/integration.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using SelfFusedVulkan = VulkanTest;

// `sizes.size()` cloths side by side, each a random cloud (some particles coincident, some with zero
// inverse mass); every third cloth self-collides through a subset of every other particle.
SelfScene manyCloths(const std::vector<uint32_t>& sizes, uint32_t seed, bool rest) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  SelfScene s;
  s.settings = {.distance = 0.08f, .stiffness = 0.8f};
  for (size_t c = 0; c < sizes.size(); ++c) {
    const uint32_t first = static_cast<uint32_t>(s.particles.size());
    const float x0 = 3.0f * static_cast<float>(c);
    const float extent = 0.3f + 0.002f * std::sqrt(static_cast<float>(sizes[c]));
    for (uint32_t i = 0; i < sizes[c]; ++i) {
      Float4 p{x0 + extent * u(rng), extent * u(rng), 0.2f * extent * u(rng), i % 11 == 0 ? 0.0f : 1.0f};
      if (i % 97 == 5 && i > 0) p = s.particles.back();  // coincident with the one before
      s.particles.push_back(p);
      s.rest.push_back({p.x + 0.05f * u(rng), p.y + 0.05f * u(rng), p.z, 0.0f});
    }
    s.cloths.push_back({first, sizes[c]});
    std::vector<uint32_t> subset;
    if (c % 3 == 2) {
      for (uint32_t i = 0; i < sizes[c]; i += 2) subset.push_back(i);
    }
    s.subsets.push_back(subset);
  }
  if (!rest) s.rest.clear();
  return s;
}

struct Outcome {
  std::vector<Float4> particles;
  SelfCollisionDebug debug;
  RecordStats stats;
};

Outcome runPath(Context& ctx, const SelfScene& scene, SelfCollisionPath path) {
  SelfScene s = scene;
  Outcome out;
  runSelfStage(ctx, s, path, &out.debug, &out.stats);
  out.particles = s.particles;
  return out;
}

void expectBitwiseEqual(const Outcome& general, const Outcome& fused) {
  expectParticlesBitwiseEqual(general.particles, fused.particles, "general", "fused");
  EXPECT_EQ(general.debug.sortedKeys, fused.debug.sortedKeys);
  EXPECT_EQ(general.debug.sortedParticles, fused.debug.sortedParticles);
  EXPECT_EQ(general.debug.clothFirstItem, fused.debug.clothFirstItem);
  EXPECT_EQ(general.debug.neighbourCounts, fused.debug.neighbourCounts);
  EXPECT_EQ(general.debug.pairs, fused.debug.pairs);
  EXPECT_EQ(general.debug.directedPairs, fused.debug.directedPairs);
}

TEST_F(SelfFusedVulkan, CapacityFollowsTheDeviceSharedMemory) {
  const uint32_t shared = ctx().deviceInfo().maxComputeSharedMemorySize;
  const uint32_t cap = fusedSelfCollisionCapacity(ctx());
  ASSERT_GE(cap, 512u) << "maxComputeSharedMemorySize " << shared;
  EXPECT_EQ(cap & (cap - 1), 0u);
  EXPECT_LE(uint64_t{cap} * 8, shared);
  EXPECT_TRUE(cap == 16384u || uint64_t{cap} * 16 > shared);
}

TEST_F(SelfFusedVulkan, FusedEqualsGeneralBitwise) {
  const uint32_t cap = fusedSelfCollisionCapacity(ctx());
  for (const bool rest : {false, true}) {
    SCOPED_TRACE(rest ? "rest positions" : "no rest positions");
    const SelfScene s = manyCloths({0, 1, 2, 63, 64, 65, 1000, cap, 7, 0, cap - 1, 2 * cap, 300, 129}, 71, rest);
    const Outcome general = runPath(ctx(), s, SelfCollisionPath::kGeneral);
    // The largest cloth (2 x capacity, index 11: a subset of half its particles) still fits.
    const Outcome fused = runPath(ctx(), s, SelfCollisionPath::kFused);
    expectBitwiseEqual(general, fused);
    EXPECT_GT(general.debug.pairs.size(), 1000u);  // the scenes do collide
  }
}

TEST_F(SelfFusedVulkan, DispatchCounts) {
  // One cloth and 256 cloths of 1024 particles: 2 dispatches on the fused path; the general path 17
  // for one cloth, 22 for several.
  for (const size_t cloths : {size_t{1}, size_t{256}}) {
    SCOPED_TRACE(std::to_string(cloths) + " cloths");
    SelfScene s = manyCloths(std::vector<uint32_t>(cloths, 1024), 72, false);
    for (auto& sub : s.subsets) sub.clear();
    const Outcome fused = runPath(ctx(), s, SelfCollisionPath::kFused);
    EXPECT_EQ(fused.stats.dispatches, 2u);
    EXPECT_EQ(fused.stats.dependentDispatches, 2u);
    EXPECT_EQ(fused.stats.workgroups, cloths + cloths * 1024 / 64);
    const Outcome general = runPath(ctx(), s, SelfCollisionPath::kGeneral);
    // Several cloths: + cloth keys + a one-digit sort by cloth (3) and its copy back (an odd pass count).
    EXPECT_EQ(general.stats.dependentDispatches, cloths == 1 ? 17u : 17u + 1u + 3u + 1u);
    expectBitwiseEqual(general, fused);
  }
}

TEST_F(SelfFusedVulkan, AutomaticChoiceAndRefusal) {
  const uint32_t cap = fusedSelfCollisionCapacity(ctx());
  for (const uint32_t largest : {cap, cap + 1}) {
    SelfScene s = manyCloths({100, largest}, 73, false);
    for (auto& sub : s.subsets) sub.clear();
    SelfCollisionStageCreateInfo ci;
    ci.cloths = s.cloths;
    ci.particleCount = static_cast<uint32_t>(s.particles.size());
    auto stage = SelfCollisionStage::create(ctx(), ci);
    ASSERT_TRUE(stage.ok()) << stage.message();
    EXPECT_EQ((*stage)->path(), largest <= cap ? SelfCollisionPath::kFused : SelfCollisionPath::kGeneral);
    if (largest > cap) {
      ci.path = SelfCollisionPath::kFused;
      auto refused = SelfCollisionStage::create(ctx(), ci);
      ASSERT_FALSE(refused.ok());
      expectErrorNaming(refused.error(), "cloths[1]");
      EXPECT_EQ(refused.error().code, ErrorCode::kLimitExceeded);
      auto need = SelfCollisionStage::memoryRequirements(ctx(), ci);
      EXPECT_FALSE(need.ok());
    }
  }
  SelfCollisionStageCreateInfo bad;
  bad.path = static_cast<SelfCollisionPath>(7);
  auto refused = SelfCollisionStage::create(ctx(), bad);
  ASSERT_FALSE(refused.ok());
  expectErrorNaming(refused.error(), "path");
}

}  // namespace
}  // namespace vkc::test
