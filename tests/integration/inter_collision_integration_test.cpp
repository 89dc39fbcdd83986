// The integration contract on the inter-collision stage (see bounds_integration_test.cpp): create() and
// record() never touch a queue, the transforms and settings travel with each record(), several frames
// in flight each use their own scratch (the embedded bounds and radix sort stages' included),
// memoryRequirements() is what create() allocates, and a failing device allocation at any point is
// reported, changes no particle, and leaks nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "../inter_collision/inter_scene.h"
#include "support/device_memory.h"
#include "support/integration.h"
#include "support/vulkan_fixture.h"
#include "vulkan/inter_collision_stage.h"

namespace vkc::test {
namespace {

class InterCollisionIntegrationVulkan : public VulkanTest {};

// Five random cloths of different sizes (from `base` particles up) overlapping their neighbours
// (seeded), with a filter. The fused path's scenes are smaller: all their particles must fit
// fusedInterCollisionCapacity (1024 on lavapipe).
InterScene scene(uint32_t seed, uint32_t base = 300) {
  InterScene s;
  std::mt19937 rng(seed);
  for (uint32_t c = 0; c < 5; ++c) {
    const float f = static_cast<float>(c);
    addRandomCloth(s, base + 41 * c + seed, 0.4f, {0.3f * f, 0.04f * f, 0.02f * static_cast<float>(seed), 0},
                   quatAxisAngle(1, f + static_cast<float>(seed), 2, 0.4f * f + 0.1f * static_cast<float>(seed)), rng);
  }
  s.filters = {{3, 0x2, ~0x1u}};
  s.settings = {0.06f, 0.9f, 2};
  return s;
}

// Every particle within 1e-5 of the CPU scalar twin's step (the GPU rounds alike but not always
// bitwise: inter_collision_test's conformance test), at least `moved` of them moved by the step.
void expectCpuStep(const InterScene& s, std::span<const Float4> got, size_t moved) {
  auto want = interStep(Backend::kCpuScalar, nullptr, s);
  ASSERT_TRUE(want.ok()) << want.message();
  ASSERT_EQ(got.size(), want->size());
  size_t changed = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].x, (*want)[i].x, 1e-5f) << i;
    EXPECT_NEAR(got[i].y, (*want)[i].y, 1e-5f) << i;
    EXPECT_NEAR(got[i].z, (*want)[i].z, 1e-5f) << i;
    EXPECT_EQ(got[i].w, (*want)[i].w) << i;
    changed += !(got[i] == s.particles[i]);
  }
  EXPECT_GE(changed, moved);
}

TEST_F(InterCollisionIntegrationVulkan, CreateAndRecordNeedNoQueue) {
  TestDeviceMemory memory(impl());
  auto noQueue = importTestContext(impl(), false, memory.callbacks());
  ASSERT_TRUE(noQueue.ok()) << noQueue.message();
  const InterScene s = scene(1);
  const uint32_t n = static_cast<uint32_t>(s.particles.size());
  // Created with transforms that keep the cloths apart: record() brings the real ones.
  std::vector<InterClothDesc> apart = s.cloths;
  for (size_t c = 0; c < apart.size(); ++c) apart[c].translation.x = 100.0f * static_cast<float>(c);
  auto stage = InterCollisionStage::create(**noQueue, {apart, s.filters, n});
  ASSERT_TRUE(stage.ok()) << stage.message();
  EXPECT_GT(memory.live(), 0);

  // The host's particle buffer (at an offset) and command buffer; the submission is the host's.
  const VkDeviceSize offset = 256, bytes = n * sizeof(Float4);
  detail::Buffer host = hostBuffer(offset + bytes);
  std::memcpy(static_cast<char*>(host.mapped()) + offset, s.particles.data(), bytes);
  VkCommandBuffer cmd = beginCommandBuffer();
  ASSERT_TRUE((*stage)->recordUpload(cmd).ok());
  const Status st = (*stage)->record(
      cmd, {.particles = {host.handle(), offset, bytes}, .cloths = s.cloths, .settings = s.settings});
  ASSERT_TRUE(st.ok()) << st.message();
  submitRecorded({&cmd, 1});
  std::vector<Float4> got(n);
  std::memcpy(got.data(), static_cast<const char*>(host.mapped()) + offset, bytes);
  expectCpuStep(s, got, 50);

  // Only the convenience path needs a queue, and it says so (changing nothing).
  std::vector<Float4> p = s.particles;
  expectErrorNaming((*stage)->run({p, s.cloths, s.filters, s.settings}), "queue");
  EXPECT_EQ(p, s.particles);
  stage->reset();
  EXPECT_EQ(memory.live(), 0);
}

TEST_F(InterCollisionIntegrationVulkan, ThreeFramesInFlightUseTheirOwnScratch) {
  for (const InterCollisionPath path : {InterCollisionPath::kGeneral, InterCollisionPath::kFused}) {
    SCOPED_TRACE(path == InterCollisionPath::kFused ? "fused path" : "general path");
    const uint32_t frames = 3;
    // Three inputs of one layout: other particles, transforms and settings per frame.
    const InterScene base = scene(2, path == InterCollisionPath::kFused ? 100 : 300);
    std::vector<InterScene> in(frames, base);
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> jitter(-0.02f, 0.02f);
    for (uint32_t f = 0; f < frames; ++f) {
      for (Float4& q : in[f].particles) q = {q.x + jitter(rng), q.y + jitter(rng), q.z + jitter(rng), q.w};
      for (InterClothDesc& c : in[f].cloths) c.translation.y += 0.01f * static_cast<float>(f);
      in[f].settings = {0.05f + 0.01f * static_cast<float>(f), 1.0f - 0.2f * static_cast<float>(f), f + 1};
    }
    const uint32_t n = static_cast<uint32_t>(base.particles.size());
    auto stage = InterCollisionStage::create(ctx(), stageInfo(base, frames, path));
    ASSERT_TRUE(stage.ok()) << stage.message();
    const VkDeviceSize bytes = n * sizeof(Float4);
    detail::Buffer host = hostBuffer(frames * bytes);
    std::vector<VkCommandBuffer> cmds;
    std::vector<std::set<VkBuffer>> written(frames);
    for (uint32_t f = 0; f < frames; ++f) {
      std::memcpy(static_cast<char*>(host.mapped()) + f * bytes, in[f].particles.data(), bytes);
      const InterCollisionRecordInfo ri{
          .particles = {host.handle(), f * bytes, bytes}, .cloths = in[f].cloths, .settings = in[f].settings, .frame = f};
      // What each frame's passes write, besides the host's particles: disjoint between frames.
      auto plan = detail::interCollisionBarrierPlan(**stage, ri);
      ASSERT_TRUE(plan.ok()) << plan.message();
      for (const detail::PlannedPass& p : *plan) {
        for (VkBuffer b : p.written) {
          if (b != host.handle()) written[f].insert(b);
        }
      }
      EXPECT_GE(written[f].size(), 10u);
      for (uint32_t g = 0; g < f; ++g) {
        for (VkBuffer b : written[f]) EXPECT_EQ(written[g].count(b), 0u) << "frames " << g << " and " << f << " share scratch";
      }
      cmds.push_back(beginCommandBuffer());
      const Status st = (*stage)->record(cmds.back(), ri);
      ASSERT_TRUE(st.ok()) << st.message();
    }
    submitRecorded(cmds);
    std::vector<std::vector<Float4>> got(frames, std::vector<Float4>(n));
    for (uint32_t f = 0; f < frames; ++f) {
      SCOPED_TRACE("frame " + std::to_string(f));
      std::memcpy(got[f].data(), static_cast<const char*>(host.mapped()) + f * bytes, bytes);
      expectCpuStep(in[f], got[f], 20);
    }
    VkCommandBuffer cmd = beginCommandBuffer();
    expectErrorNaming(
        (*stage)->record(cmd, {.particles = {host.handle(), 0, bytes}, .cloths = base.cloths, .settings = base.settings,
                               .frame = frames}),
        "InterCollisionRecordInfo::frame is 3");
    freeCommandBuffer(cmd);
    EXPECT_FALSE(InterCollisionStage::create(ctx(), stageInfo(base, 0, path)).ok());
    EXPECT_FALSE(InterCollisionStage::create(ctx(), stageInfo(base, kMaxFramesInFlight + 1, path)).ok());
  }
}

TEST_F(InterCollisionIntegrationVulkan, MemoryRequirementsAreWhatCreateAllocates) {
  const InterScene s = scene(3);
  for (uint32_t frames : {1u, 2u, 4u}) {
    const InterCollisionStageCreateInfo info = stageInfo(s, frames);
    const auto need = expectMemoryRequirementsMatchCreate<InterCollisionStage>(ctx(), impl(), info,
                                                                               std::to_string(frames) + " frames");
    ASSERT_TRUE(need);
    // Per frame: the particle-sized scratch at least (marked 32, delta 32, keys/values/contacts 4 bytes each).
    EXPECT_GT(need->deviceLocalBytes, frames * s.particles.size() * 64u);
    EXPECT_GT(need->hostVisibleBytes, 0u);  // the bounds stage's staged cloth table
  }
  const std::vector<InterCollisionFilter> bad = {{9, 1, 1}};
  const uint32_t n = static_cast<uint32_t>(s.particles.size());
  expectErrorNaming(InterCollisionStage::memoryRequirements(ctx(), {s.cloths, bad, n}).status(), "filters[0].cloth");
  expectErrorNaming(InterCollisionStage::memoryRequirements(ctx(), {s.cloths, {}, 10}).status(),
                    "InterCollisionStageCreateInfo");
}

TEST_F(InterCollisionIntegrationVulkan, EveryFailingAllocationIsReportedAndLeaksNothing) {
  const InterScene s = scene(4, 100);  // small enough for both paths
  auto want = interStep(Backend::kVulkan, &ctx(), s);
  ASSERT_TRUE(want.ok()) << want.message();
  ASSERT_NE(*want, s.particles);
  // One context for every k (its pipelines are compiled once): allocation number k after the
  // context's own fails.
  TestDeviceMemory memory(impl());
  auto c = importTestContext(impl(), true, memory.callbacks());
  ASSERT_TRUE(c.ok()) << c.message();
  InterCollisionPath path = InterCollisionPath::kGeneral;
  const auto attempt = [&](Context& cc, TestDeviceMemory& mem) {
    std::vector<Float4> p = s.particles;
    InterCollisionDebug debug;
    debug.marked = {12345};
    auto stage = InterCollisionStage::create(cc, stageInfo(s, 2, path));
    const Status st = stage.ok() ? (*stage)->run({p, s.cloths, s.filters, s.settings}, &debug) : stage.status();
    if (st.ok()) {
      EXPECT_EQ(p, *want);
      EXPECT_FALSE(debug.marked.empty());
      return true;
    }
    EXPECT_EQ(st.error().code, ErrorCode::kOutOfMemory) << st.message();
    EXPECT_EQ(p, s.particles) << "particles written on error";
    EXPECT_EQ(debug.marked, std::vector<uint32_t>{12345}) << "debug written on error";
    // The stage (when created) stays usable once memory is back.
    if (stage.ok()) {
      mem.failAt(-1);
      const Status again = (*stage)->run({p, s.cloths, s.filters, s.settings});
      EXPECT_TRUE(again.ok()) << again.message();
      EXPECT_EQ(p, *want);
    }
    return false;
  };
  for (const InterCollisionPath p : {InterCollisionPath::kGeneral, InterCollisionPath::kFused}) {
    SCOPED_TRACE(p == InterCollisionPath::kFused ? "fused path" : "general path");
    path = p;
    forEachFailingAllocationIn(**c, memory, attempt, 96);
  }
  c->reset();
  EXPECT_EQ(memory.live(), 0);
}

}  // namespace
}  // namespace vkc::test
