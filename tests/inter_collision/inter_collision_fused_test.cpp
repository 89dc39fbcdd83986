// The fused inter-collision narrow phase (InterCollisionPath::kFused: each iteration's keys, a bitonic
// sort in shared memory, gather and apply in one workgroup) against the general one (keys, radix
// sort, gather, apply, dispatched indirectly) on the same device: bitwise equal particles and debug
// results on scenes with filters, empty cloths, particles in no cloth, several iterations, nothing
// marked, and exactly the fused capacity; both against the CPU scalar twin (integers equal,
// positions within 1e-5, as the conformance test); the dispatch counts; the automatic choice and the
// refusal of a forced fused path that does not fit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "inter_scene.h"
#include "shared/inter_collision.h"
#include "support/integration.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using InterFusedVulkan = VulkanTest;

// Random cloths of the given sizes along x, each overlapping its neighbours, turned differently; a
// particle in no cloth first; two filters.
InterScene clothsOfSizes(const std::vector<uint32_t>& sizes, uint32_t seed, uint32_t iterations) {
  InterScene s;
  std::mt19937 rng(seed);
  s.particles.push_back({9, 9, 9, 1});  // in no cloth
  for (uint32_t c = 0; c < sizes.size(); ++c) {
    const float f = static_cast<float>(c);
    addRandomCloth(s, sizes[c], 0.5f, {0.35f * f, 0.1f * static_cast<float>(c % 3), -0.2f * static_cast<float>(c % 2), 0},
                   quatAxisAngle(f + 1, 1, -1, 0.5f * f), rng);
  }
  if (sizes.size() > 6) s.filters = {{3, 0x2, ~0x8u}, {6, 0x8, ~0u}};
  s.settings = {0.05f, 0.7f, iterations};
  return s;
}

struct Outcome {
  std::vector<Float4> particles;
  InterCollisionDebug debug;
  RecordStats stats;
};

Outcome runPath(Context& ctx, const InterScene& s, InterCollisionPath path) {
  Outcome out;
  auto stage = InterCollisionStage::create(ctx, stageInfo(s, 1, path));
  EXPECT_TRUE(stage.ok()) << stage.message();
  if (!stage.ok()) return out;
  EXPECT_EQ((*stage)->path(), path);
  auto p = stageStep(**stage, s, &out.debug);
  EXPECT_TRUE(p.ok()) << p.message();
  if (p.ok()) out.particles = *p;
  out.stats = (*stage)->lastRecordStats();
  return out;
}

void expectBitwiseEqual(const Outcome& general, const Outcome& fused) {
  expectParticlesBitwiseEqual(general.particles, fused.particles, "general", "fused");
  EXPECT_EQ(general.debug.clothPairs, fused.debug.clothPairs);
  EXPECT_EQ(general.debug.marked, fused.debug.marked);
  EXPECT_EQ(general.debug.contacts, fused.debug.contacts);
  EXPECT_EQ(std::memcmp(&general.debug.gridBounds, &fused.debug.gridBounds, sizeof(Aabb)), 0);
}

// The CPU scalar twin's step: equal integer results, positions within 1e-5 (the GPU rounds alike but
// not always bitwise: inter_collision_test's conformance test). Returns how many particles moved.
size_t expectCpuStep(const InterScene& s, const Outcome& got) {
  InterCollisionDebug want;
  auto ref = interStep(Backend::kCpuScalar, nullptr, s, &want);
  EXPECT_TRUE(ref.ok()) << ref.message();
  if (!ref.ok() || got.particles.size() != ref->size()) {
    ADD_FAILURE() << "no CPU result to compare";
    return 0;
  }
  EXPECT_EQ(got.debug.clothPairs, want.clothPairs);
  EXPECT_EQ(got.debug.marked, want.marked);
  EXPECT_EQ(got.debug.contacts, want.contacts);
  size_t moved = 0;
  for (size_t i = 0; i < ref->size(); ++i) {
    EXPECT_NEAR(got.particles[i].x, (*ref)[i].x, 1e-5f) << i;
    EXPECT_NEAR(got.particles[i].y, (*ref)[i].y, 1e-5f) << i;
    EXPECT_NEAR(got.particles[i].z, (*ref)[i].z, 1e-5f) << i;
    EXPECT_EQ(got.particles[i].w, (*ref)[i].w) << i;
    moved += !(got.particles[i] == s.particles[i]);
  }
  return moved;
}

TEST_F(InterFusedVulkan, CapacityFollowsTheDeviceSharedMemory) {
  const uint64_t shared = ctx().deviceInfo().maxComputeSharedMemorySize;
  const uint32_t cap = fusedInterCollisionCapacity(ctx());
  ASSERT_GE(cap, 512u) << "maxComputeSharedMemorySize " << shared;
  EXPECT_EQ(cap & (cap - 1), 0u);
  EXPECT_LE(uint64_t{cap} * 8 + gpu::kInterSharedBytes, shared);
  if (ctx().deviceInfo().driverName == "llvmpipe") {
    // Its loop guard: 2048 particles would bound an invocation's loops by about 150,000 iterations.
    EXPECT_EQ(cap, 1024u);
  } else {
    EXPECT_TRUE(cap == 16384u || uint64_t{cap} * 16 + gpu::kInterSharedBytes > shared);
  }
  EXPECT_EQ(gpu::kInterSharedBytes, 9228u);  // the figure the public header documents
}

TEST_F(InterFusedVulkan, FusedEqualsGeneralBitwise) {
  const uint32_t cap = fusedInterCollisionCapacity(ctx());
  struct Case {
    const char* name;
    InterScene scene;
    size_t minMoved;
  };
  InterScene far = clothsOfSizes({100, 200}, 5, 1);
  far.cloths[1].translation.x += 10.0f;  // no pair of cloths: nothing marked
  const std::vector<Case> cases = {
      {"awkward sizes, filters, 4 iterations", clothsOfSizes({0, 1, 255, 257, 7, 300, 0, 150}, 21, 4), 30},
      {"one iteration", clothsOfSizes({0, 1, 255, 257, 7, 300, 0, 150}, 22, 1), 30},
      {"exactly the capacity", clothsOfSizes({cap / 2, cap / 4, cap / 4}, 23, 3), 100},
      {"nothing marked", far, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Outcome general = runPath(ctx(), c.scene, InterCollisionPath::kGeneral);
    const Outcome fused = runPath(ctx(), c.scene, InterCollisionPath::kFused);
    expectBitwiseEqual(general, fused);
    const size_t moved = expectCpuStep(c.scene, fused);
    EXPECT_GE(moved, c.minMoved);
    if (c.minMoved == 0) {
      EXPECT_TRUE(fused.debug.marked.empty());
      EXPECT_EQ(moved, 0u);
    }
  }
}

TEST_F(InterFusedVulkan, DispatchCounts) {
  // General: bounds 2, broad 1, mark count/scan/write 3, per iteration keys 1 + the radix sort's 4
  // digit passes of 3 + gather 1 + apply 1 = 15, write_back 1. Fused: 1 per iteration.
  for (const uint32_t iterations : {1u, 4u}) {
    SCOPED_TRACE(std::to_string(iterations) + " iterations");
    const InterScene s = clothsOfSizes({250, 250, 250, 250}, 31, iterations);
    const Outcome general = runPath(ctx(), s, InterCollisionPath::kGeneral);
    const Outcome fused = runPath(ctx(), s, InterCollisionPath::kFused);
    expectBitwiseEqual(general, fused);
    EXPECT_EQ(general.stats.dispatches, 7u + 15u * iterations);
    EXPECT_EQ(general.stats.dependentDispatches, 7u + 15u * iterations);
    EXPECT_EQ(fused.stats.dispatches, 7u + iterations);
    EXPECT_EQ(fused.stats.dependentDispatches, 7u + iterations);
    // Indirect: keys, gather and apply per iteration and write_back (the radix sort reads the marked
    // count from the state but dispatches its workgroups directly); on the fused path write_back only.
    EXPECT_EQ(general.stats.indirectDispatches, 1u + 3u * iterations);
    EXPECT_EQ(fused.stats.indirectDispatches, 1u);
    EXPECT_LT(fused.stats.barriers, general.stats.barriers);
  }
}

TEST_F(InterFusedVulkan, AutomaticChoiceAndRefusal) {
  const uint32_t cap = fusedInterCollisionCapacity(ctx());
  for (const uint32_t total : {cap, cap + 1}) {
    SCOPED_TRACE(std::to_string(total) + " particles in cloths");
    const InterScene s = clothsOfSizes({100, total - 100}, 41, 2);
    auto stage = InterCollisionStage::create(ctx(), stageInfo(s));
    ASSERT_TRUE(stage.ok()) << stage.message();
    EXPECT_EQ((*stage)->path(), total <= cap ? InterCollisionPath::kFused : InterCollisionPath::kGeneral);
    auto general = InterCollisionStage::create(ctx(), stageInfo(s, 1, InterCollisionPath::kGeneral));
    ASSERT_TRUE(general.ok()) << general.message();
    EXPECT_EQ((*general)->path(), InterCollisionPath::kGeneral);
    if (total > cap) {
      auto refused = InterCollisionStage::create(ctx(), stageInfo(s, 1, InterCollisionPath::kFused));
      ASSERT_FALSE(refused.ok());
      expectErrorNaming(refused.error(), "InterCollisionStageCreateInfo::cloths");
      EXPECT_EQ(refused.error().code, ErrorCode::kLimitExceeded);
      auto need = InterCollisionStage::memoryRequirements(ctx(), stageInfo(s, 1, InterCollisionPath::kFused));
      ASSERT_FALSE(need.ok());
      expectErrorNaming(need.error(), "InterCollisionStageCreateInfo::cloths");
    }
  }
  // The particle in no cloth does not count: only cloths' particles can be marked.
  InterScene s = clothsOfSizes({cap / 2, cap / 2}, 42, 1);
  s.particles.resize(s.particles.size() + 100, Float4{5, 5, 5, 1});
  auto stage = InterCollisionStage::create(ctx(), stageInfo(s));
  ASSERT_TRUE(stage.ok()) << stage.message();
  EXPECT_EQ((*stage)->path(), InterCollisionPath::kFused);
  InterCollisionStageCreateInfo bad = stageInfo(s);
  bad.path = static_cast<InterCollisionPath>(7);
  auto refused = InterCollisionStage::create(ctx(), bad);
  ASSERT_FALSE(refused.ok());
  expectErrorNaming(refused.error(), "InterCollisionStageCreateInfo::path");
}

TEST_F(InterFusedVulkan, FusedPathNeedsLessMemory) {
  // No radix sort and no key / value scratch: memoryRequirements() is still what create() takes.
  const InterScene s = clothsOfSizes({200, 300, 400}, 51, 1);
  for (const uint32_t frames : {1u, 2u}) {
    const auto fused = expectMemoryRequirementsMatchCreate<InterCollisionStage>(
        ctx(), impl(), stageInfo(s, frames, InterCollisionPath::kFused), "fused");
    const auto general = expectMemoryRequirementsMatchCreate<InterCollisionStage>(
        ctx(), impl(), stageInfo(s, frames, InterCollisionPath::kGeneral), "general");
    ASSERT_TRUE(fused && general);
    EXPECT_LT(fused->deviceLocalBytes, general->deviceLocalBytes);
  }
}

}  // namespace
}  // namespace vkc::test
