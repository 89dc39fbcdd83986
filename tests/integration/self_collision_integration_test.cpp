// The integration contract on self collision (see bounds_integration_test.cpp): create() and record()
// never touch a queue, frames in flight each use their own scratch (the stage's, its bounds stage's and
// its radix sort's), memoryRequirements() is what create() allocates (embedded stages included), and
// a failing device allocation at any point of create() or run() is reported, leaves nothing allocated
// and leaves the stage usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <string>

#include "self_collision/self_collision_support.h"
#include "support/device_memory.h"
#include "support/integration.h"
#include "support/vulkan_fixture.h"
#include "vulkan/self_collision_stage.h"

namespace vkc::test {
namespace {

class SelfCollisionIntegrationVulkan : public VulkanTest {};

// Two crumpled cloths (rest positions given), the second self-colliding through a subset.
SelfScene twoCloths(uint32_t seed) {
  SelfScene s;
  crumpledCloth(14, 0.05f, seed, s.particles, s.rest);
  crumpledCloth(10, 0.05f, seed + 100, s.particles, s.rest);
  s.cloths = {{0, 196}, {196, 100}};
  s.subsets = {{}, {}};
  for (uint32_t i = 0; i < 100; i += 3) s.subsets[1].push_back(i);
  s.settings = {0.06f, 0.9f};
  return s;
}

SelfCollisionStageCreateInfo createInfoOf(SelfScene& s, uint32_t frames = 1) {
  const SelfCollisionInput in = s.input();  // (fills s.subsetSpans, which the create info refers to)
  return {.cloths = s.cloths,
          .particleCount = static_cast<uint32_t>(s.particles.size()),
          .subsets = in.subsets,
          .restPositions = !s.rest.empty(),
          .framesInFlight = frames};
}

// The CPU twin's result for `s` (the scalar reference).
std::vector<Float4> cpuResult(SelfScene s) {
  EXPECT_TRUE(collideSelfCpu(s.input(), Backend::kCpuScalar).ok());
  return s.particles;
}

void expectNear(const Float4* got, const std::vector<Float4>& want, const std::string& what) {
  size_t bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    const float tol = kSelfCollisionTolerance * (1.0f + std::max({std::abs(want[i].x), std::abs(want[i].y),
                                                                 std::abs(want[i].z)}));
    const bool ok = std::abs(got[i].x - want[i].x) <= tol && std::abs(got[i].y - want[i].y) <= tol &&
                    std::abs(got[i].z - want[i].z) <= tol && got[i].w == want[i].w;
    if (!ok) ++bad;
    EXPECT_TRUE(ok) << what << " particle " << i << ": (" << got[i].x << ", " << got[i].y << ", " << got[i].z
                    << ") vs (" << want[i].x << ", " << want[i].y << ", " << want[i].z << ")";
  }
}

bool moved(const Float4* got, const std::vector<Float4>& before) {
  return std::memcmp(got, before.data(), before.size() * sizeof(Float4)) != 0;
}

TEST_F(SelfCollisionIntegrationVulkan, CreateAndRecordNeedNoQueue) {
  TestDeviceMemory memory(impl());
  auto noQueue = importTestContext(impl(), false, memory.callbacks());
  ASSERT_TRUE(noQueue.ok()) << noQueue.message();
  SelfScene s = twoCloths(1);
  const std::vector<Float4> want = cpuResult(s);
  ASSERT_TRUE(moved(want.data(), s.particles)) << "the scene must have colliding pairs";
  auto stage = SelfCollisionStage::create(**noQueue, createInfoOf(s));
  ASSERT_TRUE(stage.ok()) << stage.message();
  EXPECT_GT(memory.live(), 0);

  // The host's buffers and command buffer; the submission is the host's (here: the test's queue).
  const VkDeviceSize bytes = s.particles.size() * sizeof(Float4);
  detail::Buffer host = hostBuffer(2 * bytes);
  std::memcpy(host.mapped(), s.particles.data(), bytes);
  std::memcpy(static_cast<char*>(host.mapped()) + bytes, s.rest.data(), bytes);
  VkCommandBuffer cmd = beginCommandBuffer();
  ASSERT_TRUE((*stage)->recordUpload(cmd).ok());
  EXPECT_FALSE((*stage)->recordUpload(VK_NULL_HANDLE).ok());
  const Status st = (*stage)->record(cmd, {.particles = {host.handle(), 0, bytes},
                                           .restPositions = {host.handle(), bytes, bytes},
                                           .settings = s.settings,
                                           .sync = {.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT,
                                                    .dstAccess = VK_ACCESS_2_HOST_READ_BIT}});
  ASSERT_TRUE(st.ok()) << st.message();
  submitRecorded({&cmd, 1});
  expectNear(static_cast<const Float4*>(host.mapped()), want, "recorded");

  // Only the convenience path needs a queue, and it says so (and changes nothing).
  SelfScene r = s;
  expectErrorNaming((*stage)->run(r.input()), "queue");
  EXPECT_FALSE(moved(r.particles.data(), s.particles));
  stage->reset();
  EXPECT_EQ(memory.live(), 0);
}

TEST_F(SelfCollisionIntegrationVulkan, ThreeFramesInFlightUseTheirOwnScratch) {
  const uint32_t frames = 3;
  std::vector<SelfScene> scenes;
  for (uint32_t f = 0; f < frames; ++f) scenes.push_back(twoCloths(10 + f));
  auto stage = SelfCollisionStage::create(ctx(), createInfoOf(scenes[0], frames));
  ASSERT_TRUE(stage.ok()) << stage.message();
  const VkDeviceSize bytes = scenes[0].particles.size() * sizeof(Float4);
  detail::Buffer host = hostBuffer(frames * 2 * bytes);  // per frame: particles, rest positions
  auto* base = static_cast<char*>(host.mapped());
  std::vector<VkCommandBuffer> cmds;
  std::vector<std::vector<uint64_t>> writes;
  for (uint32_t f = 0; f < frames; ++f) {
    std::memcpy(base + 2 * f * bytes, scenes[f].particles.data(), bytes);
    std::memcpy(base + (2 * f + 1) * bytes, scenes[f].rest.data(), bytes);
    const SelfCollisionRecordInfo info{.particles = {host.handle(), 2 * f * bytes, bytes},
                                       .restPositions = {host.handle(), (2 * f + 1) * bytes, bytes},
                                       .settings = scenes[f].settings,
                                       .frame = f,
                                       .sync = {.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT,
                                                .dstAccess = VK_ACCESS_2_HOST_READ_BIT}};
    // Recorded before any frame is submitted.
    cmds.push_back(beginCommandBuffer());
    const Status st = (*stage)->record(cmds.back(), info);
    ASSERT_TRUE(st.ok()) << st.message();
    auto w = detail::selfCollisionWrites(**stage, info);
    ASSERT_TRUE(w.ok()) << w.message();
    std::erase(*w, reinterpret_cast<uint64_t>(host.handle()));  // the host's particles
    EXPECT_GE(w->size(), 4u);  // at least keys, values, sorted positions, the sort's scratch
    writes.push_back(std::move(*w));
  }
  submitRecorded(cmds);
  for (uint32_t f = 0; f < frames; ++f) {
    const std::vector<Float4> want = cpuResult(scenes[f]);
    ASSERT_TRUE(moved(want.data(), scenes[f].particles));
    expectNear(reinterpret_cast<const Float4*>(base + 2 * f * bytes), want, "frame " + std::to_string(f));
  }
  // No buffer that one frame's passes write is written by another frame's.
  for (uint32_t f = 0; f < frames; ++f) {
    for (uint32_t g = f + 1; g < frames; ++g) {
      std::vector<uint64_t> common;
      std::set_intersection(writes[f].begin(), writes[f].end(), writes[g].begin(), writes[g].end(),
                            std::back_inserter(common));
      EXPECT_TRUE(common.empty()) << "frames " << f << " and " << g << " write " << common.size() << " common buffers";
    }
  }

  VkCommandBuffer cmd = beginCommandBuffer();
  expectErrorNaming((*stage)->record(cmd, {.particles = {host.handle(), 0, bytes},
                                           .restPositions = {host.handle(), bytes, bytes},
                                           .settings = scenes[0].settings,
                                           .frame = frames}),
                    "SelfCollisionRecordInfo::frame is 3");
  freeCommandBuffer(cmd);
  EXPECT_FALSE(SelfCollisionStage::create(ctx(), createInfoOf(scenes[0], 0)).ok());
  EXPECT_FALSE(SelfCollisionStage::create(ctx(), createInfoOf(scenes[0], kMaxFramesInFlight + 1)).ok());
}

TEST_F(SelfCollisionIntegrationVulkan, MemoryRequirementsAreWhatCreateAllocates) {
  SelfScene s = twoCloths(3);
  SelfScene plain = s;  // one cloth's worth of layout, no rest positions, no subsets
  plain.rest.clear();
  plain.subsets.clear();
  for (SelfScene* scene : {&s, &plain}) {
    for (uint32_t frames : {1u, 2u, 4u}) {
      const SelfCollisionStageCreateInfo info = createInfoOf(*scene, frames);
      const std::string what = std::to_string(frames) + " frames" + (scene == &s ? ", rest + subsets" : "");
      const auto need = expectMemoryRequirementsMatchCreate<SelfCollisionStage>(ctx(), impl(), info, what);
      ASSERT_TRUE(need);
      EXPECT_GT(need->hostVisibleBytes, 0u);  // the staged tables
    }
  }
  SelfCollisionStageCreateInfo bad = createInfoOf(s);
  bad.particleCount = 10;
  expectErrorNaming(SelfCollisionStage::memoryRequirements(ctx(), bad).status(), "SelfCollisionStageCreateInfo");
  bad = createInfoOf(s, 0);
  expectErrorNaming(SelfCollisionStage::memoryRequirements(ctx(), bad).status(),
                    "SelfCollisionStageCreateInfo::framesInFlight");
}

TEST_F(SelfCollisionIntegrationVulkan, EveryFailingAllocationIsReportedAndLeaksNothing) {
  SelfScene s = twoCloths(5);
  const std::vector<Float4> want = cpuResult(s);
  forEachFailingAllocation(impl(), [&](Context& c, TestDeviceMemory& memory) {
    SelfScene r = s;
    SelfCollisionDebug debug;
    debug.directedPairs = 12345;  // a mark: run() must not touch debug on error
    auto stage = SelfCollisionStage::create(c, createInfoOf(r, 2));
    // With debug: run()'s second submission (the pair lists) allocates too.
    Status st = stage.ok() ? (*stage)->run(r.input(), &debug) : stage.status();
    if (st.ok()) {
    expectNear(r.particles.data(), want, "run");
    EXPECT_FALSE(debug.pairs.empty());
      return true;
    }
    EXPECT_EQ(st.error().code, ErrorCode::kOutOfMemory) << st.message();
    EXPECT_FALSE(moved(r.particles.data(), s.particles)) << "particles written on error";
    EXPECT_EQ(debug.directedPairs, 12345u) << "debug written on error";
    // The stage (when created) stays usable once memory is back.
    if (stage.ok()) {
      memory.failAt(-1);
      const Status again = (*stage)->run(r.input(), &debug);
      EXPECT_TRUE(again.ok()) << again.message();
      expectNear(r.particles.data(), want, "run after the failure");
    }
    return false;
  });
}

}  // namespace
}  // namespace vkc::test
