// Proves that the Vulkan test fixture fails a test on a validation message: each test provokes one
// on purpose (a core-validation VUID, and a synchronization hazard that only synchronization
// validation reports) and checks that the fixture's check turns it into a test failure.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "support/vulkan_fixture.h"
#include "vulkan/memory.h"

namespace vkc::test {
namespace {

using ValidationFixtureVulkan = VulkanTest;

TEST_F(ValidationFixtureVulkan, FailsOnPushConstantStageMismatch) {
  auto pipeline = impl().pipelines->get({"copy", 2, 4, {}});
  ASSERT_TRUE(pipeline.ok()) << pipeline.message();
  VkCommandBuffer cmd = beginCommandBuffer();
  const uint32_t data = 0;
  // The layout's range is for the compute stage only: VUID-vkCmdPushConstants-offset-01796. (An
  // overrun of the range would be the classic case, but lavapipe corrupts its heap executing it.)
  impl().vk.vkCmdPushConstants(cmd, (*pipeline)->layout, VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof data, &data);
  freeCommandBuffer(cmd);
  EXPECT_NONFATAL_FAILURE(VulkanTest::expectNoValidationMessages(), "VUID-vkCmdPushConstants");
}

TEST_F(ValidationFixtureVulkan, FailsOnFillThenDispatchWithoutBarrier) {
  const std::vector<ClothRange> cloths = {{0, 1024}};
  auto stage = BoundsStage::create(ctx(), {cloths, 1024, false});
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto particles = impl().allocator->createBuffer(1024 * sizeof(Float4), detail::MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(particles.ok()) << particles.message();

  // Control: with vkcollide's default RecordSync the fill is ordered before the dispatch.
  VkCommandBuffer cmd = beginCommandBuffer();
  impl().vk.vkCmdFillBuffer(cmd, particles->handle(), 0, VK_WHOLE_SIZE, 0);
  BoundsRecordInfo info;
  info.particles = particles->range();
  ASSERT_TRUE((*stage)->record(cmd, info).ok());
  freeCommandBuffer(cmd);
  VulkanTest::expectNoValidationMessages();

  // The host claims nothing came before (no source stage): a read-after-write hazard.
  cmd = beginCommandBuffer();
  impl().vk.vkCmdFillBuffer(cmd, particles->handle(), 0, VK_WHOLE_SIZE, 0);
  info.sync.srcStage = VK_PIPELINE_STAGE_2_NONE;
  info.sync.srcAccess = VK_ACCESS_2_NONE;
  ASSERT_TRUE((*stage)->record(cmd, info).ok());
  freeCommandBuffer(cmd);
  EXPECT_NONFATAL_FAILURE(VulkanTest::expectNoValidationMessages(), "SYNC-HAZARD");
}

}  // namespace
}  // namespace vkc::test
