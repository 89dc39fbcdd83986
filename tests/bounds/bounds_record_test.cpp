// Recording the bounds stage into the host's command buffer with the host's buffers, the barrier
// plan it derives, its buffer checks, its device limit, GPU timings and determinism.
#include <gtest/gtest.h>

#include <cstring>

#include "support/bounds_reference.h"
#include "support/vulkan_fixture.h"
#include "vulkan/bounds_stage.h"
#include "vulkan/memory.h"

namespace vkc::test {
namespace {

using BoundsRecordVulkan = VulkanTest;
using detail::MemoryUsage;

std::vector<Float4> particles(size_t n, uint32_t seed) {
  return randomParticles(n, seed, -3.0f, 3.0f);
}

TEST_F(BoundsRecordVulkan, RecordsIntoHostCommandBufferWithHostBuffers) {
  const uint32_t n = 10'000;
  const auto p = particles(n, 1);
  const auto q = particles(n, 2);
  const std::vector<ClothRange> cloths = {{0, 4000}, {4000, 0}, {4000, 6000}};
  // The host's buffers: particles and previous positions in one buffer at different offsets, and
  // the boxes written into the host's own buffer at an offset.
  const VkDeviceSize align = std::max<VkDeviceSize>(ctx().deviceInfo().minStorageBufferOffsetAlignment, 16);
  const VkDeviceSize bytes = n * sizeof(Float4);
  const VkDeviceSize prevOffset = (bytes + align - 1) / align * align;
  auto host = impl().allocator->createBuffer(prevOffset + bytes, MemoryUsage::kUpload);
  auto out = impl().allocator->createBuffer(align + cloths.size() * sizeof(Aabb), MemoryUsage::kReadback);
  ASSERT_TRUE(host.ok() && out.ok());
  std::memcpy(host->mapped(), p.data(), bytes);
  std::memcpy(static_cast<char*>(host->mapped()) + prevOffset, q.data(), bytes);

  auto stage = BoundsStage::create(ctx(), {cloths, n, true});
  ASSERT_TRUE(stage.ok()) << stage.message();
  BoundsRecordInfo info;
  info.particles = {host->handle(), 0, bytes};
  info.prevParticles = {host->handle(), prevOffset, bytes};
  info.boxes = {out->handle(), align, cloths.size() * sizeof(Aabb)};
  info.sync.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT;
  info.sync.dstAccess = VK_ACCESS_2_HOST_READ_BIT;
  submit([&](VkCommandBuffer cmd) { ASSERT_TRUE((*stage)->record(cmd, info).ok()); });
  const auto* boxes = reinterpret_cast<const Aabb*>(static_cast<const char*>(out->mapped()) + align);
  for (size_t c = 0; c < cloths.size(); ++c) {
    EXPECT_TRUE(bitwiseEqual(boxes[c], referenceBounds(p, q, cloths[c], true))) << "cloth " << c;
  }
}

TEST_F(BoundsRecordVulkan, BarrierPlanOrdersMergeAfterTiles) {
  const std::vector<ClothRange> cloths = {{0, 5000}};
  auto stage = BoundsStage::create(ctx(), {cloths, 5000, false});
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto host = impl().allocator->createBuffer(5000 * sizeof(Float4), MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(host.ok());
  BoundsRecordInfo info;
  info.particles = host->range();
  auto plan = detail::boundsBarrierPlan(**stage, info);
  ASSERT_TRUE(plan.ok()) << plan.message();
  ASSERT_EQ(plan->size(), 2u);  // tiles, merge
  EXPECT_FALSE((*plan)[0].needed);
  EXPECT_TRUE((*plan)[1].needed);
  EXPECT_NE((*plan)[1].reason.find("read-after-write"), std::string::npos) << (*plan)[1].reason;
}

TEST_F(BoundsRecordVulkan, RejectsBadBuffersBeforeRecording) {
  const std::vector<ClothRange> cloths = {{0, 100}};
  auto stage = BoundsStage::create(ctx(), {cloths, 100, true});
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto buf = impl().allocator->createBuffer(100 * sizeof(Float4), MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(buf.ok());
  VkCommandBuffer cmd = beginCommandBuffer();
  BoundsRecordInfo info;
  info.particles = buf->range();
  info.prevParticles = buf->range();

  BoundsRecordInfo small = info;
  small.particles.size = 99 * sizeof(Float4);
  Status s = (*stage)->record(cmd, small);
  EXPECT_EQ(s.error().code, ErrorCode::kBufferTooSmall);
  EXPECT_NE(s.message().find("particles holds 1584 bytes; the stage needs 1600"), std::string::npos) << s.message();

  BoundsRecordInfo noPrev = info;
  noPrev.prevParticles = {};
  s = (*stage)->record(cmd, noPrev);
  EXPECT_NE(s.message().find("prevParticles.buffer is null"), std::string::npos) << s.message();

  BoundsRecordInfo smallOut = info;
  smallOut.boxes = {buf->handle(), 0, 16};
  s = (*stage)->record(cmd, smallOut);
  EXPECT_EQ(s.error().code, ErrorCode::kBufferTooSmall);
  EXPECT_NE(s.message().find("boxes"), std::string::npos) << s.message();

  ASSERT_GT(ctx().deviceInfo().minStorageBufferOffsetAlignment, 1u);
  BoundsRecordInfo misaligned = info;
  misaligned.particles.offset = 1;
  s = (*stage)->record(cmd, misaligned);
  EXPECT_NE(s.message().find("minStorageBufferOffsetAlignment"), std::string::npos) << s.message();

  EXPECT_FALSE((*stage)->record(VK_NULL_HANDLE, info).ok());
  freeCommandBuffer(cmd);
}

TEST_F(BoundsRecordVulkan, MoreParticlesThanTheStorageBufferRangeIsAnErrorNamingTheLimit) {
  const uint64_t maxParticles = ctx().deviceInfo().maxStorageBufferRange / sizeof(Float4);
  ASSERT_LT(maxParticles, uint64_t{UINT32_MAX});
  const uint32_t n = static_cast<uint32_t>(maxParticles + 1);
  const std::vector<ClothRange> cloths = {{0, n}};
  auto stage = BoundsStage::create(ctx(), {cloths, n, false});
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(stage.message().find("maxStorageBufferRange = " + std::to_string(ctx().deviceInfo().maxStorageBufferRange)),
            std::string::npos)
      << stage.message();
  // Exactly at the limit is fine.
  const std::vector<ClothRange> atLimit = {{0, n - 1}};
  EXPECT_TRUE(BoundsStage::create(ctx(), {atLimit, n - 1, false}).ok());
}

TEST_F(BoundsRecordVulkan, RunReportsGpuTimingsPerPass) {
  const auto p = particles(50'000, 3);
  const std::vector<ClothRange> cloths = {{0, 50'000}};
  auto stage = BoundsStage::create(ctx(), {cloths, 50'000, false});
  ASSERT_TRUE(stage.ok());
  std::vector<Aabb> boxes(1);
  ASSERT_TRUE((*stage)->run({p, {}, cloths, false, boxes}).ok());
  const auto& t = (*stage)->timings();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_STREQ(t[0].name, "vkc.bounds.tiles");
  EXPECT_STREQ(t[1].name, "vkc.bounds.merge");
  EXPECT_GT(t[0].ns, 0.0);
}

TEST_F(BoundsRecordVulkan, HundredRerunsAreBitwiseIdentical) {
  const auto p = particles(200'003, 4);
  const auto q = particles(200'003, 5);
  std::vector<ClothRange> cloths;
  for (uint32_t c = 0; c < 13; ++c) cloths.push_back({c * 15000u, c == 12 ? 200003u - 12u * 15000u : 15000u});
  auto stage = BoundsStage::create(ctx(), {cloths, 200'003, true});
  ASSERT_TRUE(stage.ok());
  std::vector<Aabb> first(cloths.size()), again(cloths.size());
  const Status st = (*stage)->run({p, q, cloths, true, first});
  ASSERT_TRUE(st.ok()) << st.message();
  for (int i = 0; i < 100; ++i) {
    const Status r = (*stage)->run({p, q, cloths, true, again});
    ASSERT_TRUE(r.ok()) << r.message();
    ASSERT_EQ(std::memcmp(again.data(), first.data(), first.size() * sizeof(Aabb)), 0) << "rerun " << i;
  }
}

TEST_F(BoundsRecordVulkan, RunRejectsInputOfAnotherLayoutAndLeavesTheStageUsable) {
  const auto p = particles(100, 6);
  const std::vector<ClothRange> cloths = {{0, 100}};
  auto stage = BoundsStage::create(ctx(), {cloths, 100, false});
  ASSERT_TRUE(stage.ok());
  const std::vector<ClothRange> other = {{0, 50}};
  std::vector<Aabb> boxes(1);
  EXPECT_FALSE((*stage)->run({p, {}, other, false, boxes}).ok());
  auto bad = p;
  bad[3].x = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE((*stage)->run({bad, {}, cloths, false, boxes}).ok());
  ASSERT_TRUE((*stage)->run({p, {}, cloths, false, boxes}).ok());
  EXPECT_TRUE(bitwiseEqual(boxes[0], referenceBounds(p, {}, cloths[0], false)));
}

}  // namespace
}  // namespace vkc::test
