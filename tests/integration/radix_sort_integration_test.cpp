// The integration contract on the radix sort (see bounds_integration_test.cpp): create() and
// record() never touch a queue, frames in flight each use their own scratch, memoryRequirements() is
// what create() allocates, and a failing device allocation at any point is reported, leaves nothing
// allocated and leaves the stage usable.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "radix_sort/radix_sort_reference.h"
#include "support/device_memory.h"
#include "support/integration.h"
#include "support/vulkan_fixture.h"
#include "vulkan/radix_sort_stage.h"

namespace vkc::test {
namespace {

class RadixSortIntegrationVulkan : public VulkanTest {};

// The CPU twin's answer (the scalar reference).
Pairs cpuSorted(const Pairs& in, uint32_t keyBits) {
  Pairs out = in;
  EXPECT_TRUE(radixSortCpu({out.keys, out.values, keyBits}, Backend::kCpuScalar).ok());
  return out;
}

// `p`'s keys then values, read back from a host buffer at `offset` (keys) and `offset + bytes` (values).
Pairs readPairs(const detail::Buffer& host, VkDeviceSize offset, size_t n) {
  Pairs p{std::vector<uint32_t>(n), std::vector<uint32_t>(n)};
  const char* base = static_cast<const char*>(host.mapped()) + offset;
  std::memcpy(p.keys.data(), base, n * 4);
  std::memcpy(p.values.data(), base + n * 4, n * 4);
  return p;
}

void writePairs(detail::Buffer& host, VkDeviceSize offset, const Pairs& p) {
  char* base = static_cast<char*>(host.mapped()) + offset;
  std::memcpy(base, p.keys.data(), p.keys.size() * 4);
  std::memcpy(base + p.keys.size() * 4, p.values.data(), p.values.size() * 4);
}

TEST_F(RadixSortIntegrationVulkan, CreateAndRecordNeedNoQueue) {
  TestDeviceMemory memory(impl());
  auto noQueue = importTestContext(impl(), false, memory.callbacks());
  ASSERT_TRUE(noQueue.ok()) << noQueue.message();
  const uint32_t n = 50'004;  // (n * 4 keeps the values' offset aligned); 24 bits: 3 passes and the copy back
  const Pairs in = randomPairs(n, 1, 1u << 24);
  auto stage = RadixSortStage::create(**noQueue, {.maxCount = n});
  ASSERT_TRUE(stage.ok()) << stage.message();
  EXPECT_GT(memory.live(), 0);

  detail::Buffer host = hostBuffer(2 * n * 4);
  writePairs(host, 0, in);
  VkCommandBuffer cmd = beginCommandBuffer();
  ASSERT_TRUE((*stage)->recordUpload(cmd).ok());
  EXPECT_FALSE((*stage)->recordUpload(VK_NULL_HANDLE).ok());
  const Status st = (*stage)->record(cmd, {.keys = {host.handle(), 0, n * 4},
                                           .values = {host.handle(), n * 4, n * 4},
                                           .count = n,
                                           .keyBits = 24,
                                           .sync = {.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT,
                                                    .dstAccess = VK_ACCESS_2_HOST_READ_BIT}});
  ASSERT_TRUE(st.ok()) << st.message();
  submitRecorded({&cmd, 1});
  const Pairs got = readPairs(host, 0, n), want = cpuSorted(in, 24);
  EXPECT_EQ(firstDifference(got.keys, want.keys), -1);
  EXPECT_EQ(firstDifference(got.values, want.values), -1);

  // Only the convenience path needs a queue, and it says so (and changes nothing).
  Pairs p = in;
  expectErrorNaming((*stage)->run({p.keys, p.values, 24}), "queue");
  EXPECT_EQ(p.keys, in.keys);
  stage->reset();
  EXPECT_EQ(memory.live(), 0);
}

TEST_F(RadixSortIntegrationVulkan, ThreeFramesInFlightUseTheirOwnScratch) {
  const uint32_t n = 20'000, frames = 3;
  auto stage = RadixSortStage::create(ctx(), {.maxCount = n, .framesInFlight = frames});
  ASSERT_TRUE(stage.ok()) << stage.message();
  const VkDeviceSize bytes = 2 * n * 4;  // one frame's keys and values
  detail::Buffer host = hostBuffer(frames * bytes);
  std::vector<Pairs> in;
  std::vector<VkCommandBuffer> cmds;
  const uint32_t bits[frames] = {32, 24, 9};  // even and odd pass counts
  for (uint32_t f = 0; f < frames; ++f) {
    in.push_back(randomPairs(n - 1000 * f, 20 + f));
    const uint32_t m = static_cast<uint32_t>(in[f].keys.size());
    writePairs(host, f * bytes, in[f]);
    cmds.push_back(beginCommandBuffer());
    const Status st = (*stage)->record(cmds.back(), {.keys = {host.handle(), f * bytes, m * 4},
                                                     .values = {host.handle(), f * bytes + m * 4, m * 4},
                                                     .count = m,
                                                     .keyBits = bits[f],
                                                     .frame = f,
                                                     .sync = {.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT,
                                                              .dstAccess = VK_ACCESS_2_HOST_READ_BIT}});
    ASSERT_TRUE(st.ok()) << st.message();
  }
  submitRecorded(cmds);
  for (uint32_t f = 0; f < frames; ++f) {
    const Pairs got = readPairs(host, f * bytes, in[f].keys.size()), want = cpuSorted(in[f], bits[f]);
    EXPECT_EQ(firstDifference(got.keys, want.keys), -1) << "frame " << f;
    EXPECT_EQ(firstDifference(got.values, want.values), -1) << "frame " << f;
  }

  // Two frames share no scratch: in one recorder, the second frame's sort of other buffers needs no
  // barrier against the first's (the same frame twice does: its scratch is rewritten).
  for (const uint32_t second : {1u, 0u}) {
    detail::Recorder rec(impl());
    detail::appendRadixSortPasses(**stage, rec, {host.handle(), 0, n * 4}, {host.handle(), n * 4, n * 4}, n, 8, 0);
    const size_t first = rec.passes().size();
    detail::appendRadixSortPasses(**stage, rec, {host.handle(), bytes, n * 4}, {host.handle(), bytes + n * 4, n * 4},
                                  n, 8, second);
    const auto plan = rec.plan();
    EXPECT_EQ(plan[first].needed, second == 0) << "second sort in frame " << second << ": " << plan[first].reason;
  }

  VkCommandBuffer cmd = beginCommandBuffer();
  expectErrorNaming((*stage)->record(cmd, {.keys = {host.handle(), 0, n * 4},
                                           .values = {host.handle(), n * 4, n * 4},
                                           .count = n,
                                           .frame = frames}),
                    "RadixSortRecordInfo::frame is 3");
  freeCommandBuffer(cmd);
  EXPECT_FALSE(RadixSortStage::create(ctx(), {.maxCount = n, .framesInFlight = 0}).ok());
  EXPECT_FALSE(RadixSortStage::create(ctx(), {.maxCount = n, .framesInFlight = kMaxFramesInFlight + 1}).ok());
}

TEST_F(RadixSortIntegrationVulkan, MemoryRequirementsAreWhatCreateAllocates) {
  for (uint32_t frames : {1u, 2u, 4u}) {
    const RadixSortStageCreateInfo info{.maxCount = 100'003, .framesInFlight = frames};
    const auto need =
        expectMemoryRequirementsMatchCreate<RadixSortStage>(ctx(), impl(), info, std::to_string(frames) + " frames");
    ASSERT_TRUE(need);
    // Two ping-pong arrays of 4-byte words per frame at least.
    EXPECT_GE(need->deviceLocalBytes, frames * 2 * 100'003ull * 4);
  }
  for (const RadixSortStageCreateInfo bad : {RadixSortStageCreateInfo{.maxCount = 0},
                                             RadixSortStageCreateInfo{.maxCount = 5, .framesInFlight = 0}}) {
    expectErrorNaming(RadixSortStage::memoryRequirements(ctx(), bad).status(), "RadixSortStageCreateInfo");
  }
}

TEST_F(RadixSortIntegrationVulkan, EveryFailingAllocationIsReportedAndLeaksNothing) {
  const Pairs in = randomPairs(9'000, 7);
  const Pairs want = cpuSorted(in, 32);
  forEachFailingAllocation(impl(), [&](Context& c, TestDeviceMemory& memory) {
    Pairs p = in;
    auto stage = RadixSortStage::create(c, {.maxCount = 10'000, .framesInFlight = 2});
    Status st = stage.ok() ? (*stage)->run({p.keys, p.values}) : stage.status();
    if (st.ok()) {
    EXPECT_EQ(p.keys, want.keys);
    EXPECT_EQ(p.values, want.values);
      return true;
    }
    EXPECT_EQ(st.error().code, ErrorCode::kOutOfMemory) << st.message();
    EXPECT_EQ(p.keys, in.keys) << "keys written on error";
    EXPECT_EQ(p.values, in.values) << "values written on error";
    // The stage (when created) stays usable once memory is back.
    if (stage.ok()) {
      memory.failAt(-1);
      const Status again = (*stage)->run({p.keys, p.values});
      EXPECT_TRUE(again.ok()) << again.message();
      EXPECT_EQ(p.keys, want.keys);
    }
    return false;
  });
}

}  // namespace
}  // namespace vkc::test
