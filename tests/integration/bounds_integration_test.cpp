// The integration contract, on the bounds stage (the other stages have the same tests in their own
// files): create() and record() never touch a queue, several frames in flight each use their own
// scratch, memoryRequirements() is what create() allocates, and a failing device allocation at any
// point is reported, leaves nothing allocated and leaves the context usable.
#include <gtest/gtest.h>

#include <cstring>

#include "support/bounds_reference.h"
#include "support/device_memory.h"
#include "support/integration.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

class BoundsIntegrationVulkan : public VulkanTest {};

std::vector<Float4> particles(uint32_t n, uint32_t seed) { return randomParticles(n, seed, -10.0f, 10.0f); }

TEST_F(BoundsIntegrationVulkan, CreateAndRecordNeedNoQueue) {
  TestDeviceMemory memory(impl());
  auto noQueue = importTestContext(impl(), false, memory.callbacks());
  ASSERT_TRUE(noQueue.ok()) << noQueue.message();
  const uint32_t n = 5000;
  const auto p = particles(n, 1);
  const std::vector<ClothRange> cloths = {{0, 3000}, {3000, 2000}};
  auto stage = BoundsStage::create(**noQueue, {.cloths = cloths, .particleCount = n});
  ASSERT_TRUE(stage.ok()) << stage.message();
  EXPECT_GT(memory.live(), 0);

  // The host's buffers and command buffer; the submission is the host's (here: the test's queue).
  detail::Buffer host = hostBuffer(n * sizeof(Float4) + cloths.size() * sizeof(Aabb));
  std::memcpy(host.mapped(), p.data(), n * sizeof(Float4));
  const BufferRange parts{host.handle(), 0, n * sizeof(Float4)};
  const BufferRange boxes{host.handle(), n * sizeof(Float4), cloths.size() * sizeof(Aabb)};
  VkCommandBuffer cmd = beginCommandBuffer();
  ASSERT_TRUE((*stage)->recordUpload(cmd).ok());
  const Status st = (*stage)->record(cmd, {.particles = parts, .boxes = boxes});
  ASSERT_TRUE(st.ok()) << st.message();
  submitRecorded({&cmd, 1});
  for (size_t c = 0; c < cloths.size(); ++c) {
    Aabb got;
    std::memcpy(&got, static_cast<const char*>(host.mapped()) + boxes.offset + c * sizeof(Aabb), sizeof got);
    EXPECT_TRUE(bitwiseEqual(got, referenceBounds(p, {}, cloths[c], false))) << "cloth " << c;
  }
  // Only the convenience path needs a queue, and it says so.
  std::vector<Aabb> out(cloths.size());
  expectErrorNaming((*stage)->run({p, {}, cloths, false, out}), "queue");
  stage->reset();
  EXPECT_EQ(memory.live(), 0);
}

TEST_F(BoundsIntegrationVulkan, ThreeFramesInFlightUseTheirOwnScratchAndOutput) {
  const uint32_t n = 4099, frames = 3;
  const std::vector<ClothRange> cloths = {{0, 4000}, {4000, 99}};
  auto stage = BoundsStage::create(ctx(), {.cloths = cloths, .particleCount = n, .framesInFlight = frames});
  ASSERT_TRUE(stage.ok()) << stage.message();
  const VkDeviceSize bytes = n * sizeof(Float4), boxBytes = cloths.size() * sizeof(Aabb);
  std::vector<std::vector<Float4>> p;
  detail::Buffer host = hostBuffer(frames * (bytes + boxBytes));
  std::vector<VkCommandBuffer> cmds;
  for (uint32_t f = 0; f < frames; ++f) {
    p.push_back(particles(n, 10 + f));
    std::memcpy(static_cast<char*>(host.mapped()) + f * bytes, p[f].data(), bytes);
    for (uint32_t g = 0; g < f; ++g) EXPECT_NE((*stage)->outputBuffer(f).buffer, (*stage)->outputBuffer(g).buffer);
    // Recorded before any frame is submitted: each frame's output stays in the stage's own buffer of
    // that frame until the copy at the frame's end.
    cmds.push_back(beginCommandBuffer());
    const Status st = (*stage)->record(cmds.back(), {.particles = {host.handle(), f * bytes, bytes},
                                                     .frame = f,
                                                     .sync = {.dstStage = VK_PIPELINE_STAGE_2_COPY_BIT,
                                                              .dstAccess = VK_ACCESS_2_TRANSFER_READ_BIT}});
    ASSERT_TRUE(st.ok()) << st.message();
    const VkBufferCopy region{0, frames * bytes + f * boxBytes, boxBytes};
    impl().vk.vkCmdCopyBuffer(cmds.back(), (*stage)->outputBuffer(f).buffer, host.handle(), 1, &region);
  }
  submitRecorded(cmds);
  for (uint32_t f = 0; f < frames; ++f) {
    for (size_t c = 0; c < cloths.size(); ++c) {
      Aabb got;
      std::memcpy(&got, static_cast<const char*>(host.mapped()) + frames * bytes + f * boxBytes + c * sizeof(Aabb),
                  sizeof got);
      EXPECT_TRUE(bitwiseEqual(got, referenceBounds(p[f], {}, cloths[c], false))) << "frame " << f << " cloth " << c;
    }
  }
  VkCommandBuffer cmd = beginCommandBuffer();
  expectErrorNaming((*stage)->record(cmd, {.particles = {host.handle(), 0, bytes}, .frame = frames}),
                    "BoundsRecordInfo::frame is 3");
  freeCommandBuffer(cmd);
  EXPECT_FALSE(BoundsStage::create(ctx(), {.cloths = cloths, .particleCount = n, .framesInFlight = 0}).ok());
  EXPECT_FALSE(
      BoundsStage::create(ctx(), {.cloths = cloths, .particleCount = n, .framesInFlight = kMaxFramesInFlight + 1}).ok());
}

TEST_F(BoundsIntegrationVulkan, MemoryRequirementsAreWhatCreateAllocates) {
  const std::vector<ClothRange> cloths = {{0, 100'000}, {100'000, 5}, {100'005, 0}};
  for (uint32_t frames : {1u, 2u, 4u}) {
    const BoundsStageCreateInfo info{.cloths = cloths, .particleCount = 100'005, .framesInFlight = frames};
    const auto need =
        expectMemoryRequirementsMatchCreate<BoundsStage>(ctx(), impl(), info, std::to_string(frames) + " frames");
    ASSERT_TRUE(need);
    EXPECT_GT(need->deviceLocalBytes, 0u);
  }
  expectErrorNaming(BoundsStage::memoryRequirements(ctx(), {.cloths = cloths, .particleCount = 10}).status(),
                    "BoundsStageCreateInfo");
}

TEST_F(BoundsIntegrationVulkan, EveryFailingAllocationIsReportedAndLeaksNothing) {
  const uint32_t n = 3000;
  const auto p = particles(n, 7);
  const auto q = particles(n, 8);
  const std::vector<ClothRange> cloths = {{0, 1000}, {1000, 2000}};
  forEachFailingAllocation(impl(), [&](Context& c, TestDeviceMemory& memory) {
    std::vector<Aabb> out(cloths.size(), Aabb{{7, 7, 7, 7}, {7, 7, 7, 7}});
    auto stage = BoundsStage::create(c, {.cloths = cloths, .particleCount = n, .includePrevious = true});
    Status st = stage.ok() ? (*stage)->run({p, q, cloths, true, out}) : stage.status();
    if (st.ok()) {
    for (size_t i = 0; i < cloths.size(); ++i) EXPECT_TRUE(bitwiseEqual(out[i], referenceBounds(p, q, cloths[i], true)));
      return true;
    }
    EXPECT_EQ(st.error().code, ErrorCode::kOutOfMemory) << st.message();
    EXPECT_EQ(out[0].lo.x, 7.0f) << "output written on error";
    // The stage (when created) stays usable once memory is back.
    if (stage.ok()) {
      memory.failAt(-1);
      const Status again = (*stage)->run({p, q, cloths, true, out});
      EXPECT_TRUE(again.ok()) << again.message();
    }
    return false;
  });
}

TEST_F(BoundsIntegrationVulkan, ADeviceLostDuringCreateIsReportedAsSuch) {
  TestDeviceMemory memory(impl());
  {
    auto c = importTestContext(impl(), true, memory.callbacks());
    ASSERT_TRUE(c.ok()) << c.message();
    memory.failAt(1);
    memory.failWith(VK_ERROR_DEVICE_LOST);
    const std::vector<ClothRange> cloths = {{0, 10}};
    auto stage = BoundsStage::create(**c, {.cloths = cloths, .particleCount = 10});
    ASSERT_FALSE(stage.ok());
    EXPECT_EQ(stage.error().code, ErrorCode::kDeviceLost) << stage.message();
    EXPECT_NE(stage.message().find("VK_ERROR_DEVICE_LOST"), std::string::npos) << stage.message();
  }
  EXPECT_EQ(memory.live(), 0);
}

}  // namespace
}  // namespace vkc::test
