// Recording the radix sort into the host's command buffer with the host's buffers, the device-side
// count, appending into another stage's Recorder, the derived barrier plan, bad input (nothing
// recorded), GPU timings and determinism.
#include <gtest/gtest.h>

#include <cstring>

#include "radix_sort/radix_sort_reference.h"
#include "support/vulkan_fixture.h"
#include "vulkan/memory.h"
#include "vulkan/radix_sort_stage.h"

namespace vkc::test {
namespace {

using detail::MemoryUsage;

VkDeviceSize alignUp(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

// One host-visible buffer holding keys at `keysOffset` and values at `valuesOffset`.
struct HostPairs {
  detail::Buffer buffer;
  VkDeviceSize keysOffset = 0, valuesOffset = 0;
  size_t count = 0;

  uint32_t* keys() const { return reinterpret_cast<uint32_t*>(static_cast<char*>(buffer.mapped()) + keysOffset); }
  uint32_t* values() const { return reinterpret_cast<uint32_t*>(static_cast<char*>(buffer.mapped()) + valuesOffset); }
  BufferRange keysRange() const { return {buffer.handle(), keysOffset, count * sizeof(uint32_t)}; }
  BufferRange valuesRange() const { return {buffer.handle(), valuesOffset, count * sizeof(uint32_t)}; }
  Pairs read() const {
    return {std::vector<uint32_t>(keys(), keys() + count), std::vector<uint32_t>(values(), values() + count)};
  }
};

class RadixSortRecordVulkan : public VulkanTest {
 protected:
  VkDeviceSize align() { return std::max<VkDeviceSize>(ctx().deviceInfo().minStorageBufferOffsetAlignment, 16); }

  // Keys after a leading gap of one alignment unit, values after the keys (both aligned).
  HostPairs upload(const Pairs& p) {
    HostPairs h;
    h.count = p.keys.size();
    const VkDeviceSize bytes = h.count * sizeof(uint32_t);
    h.keysOffset = align();
    h.valuesOffset = alignUp(h.keysOffset + bytes, align());
    auto b = impl().allocator->createBuffer(h.valuesOffset + std::max<VkDeviceSize>(bytes, 4), MemoryUsage::kUpload);
    EXPECT_TRUE(b.ok()) << b.message();
    if (!b.ok()) return h;
    h.buffer = std::move(b.value());
    if (bytes > 0) {
      std::memcpy(h.keys(), p.keys.data(), bytes);
      std::memcpy(h.values(), p.values.data(), bytes);
    }
    return h;
  }

  RecordSync toHost() {
    RecordSync s;
    s.srcStage = VK_PIPELINE_STAGE_2_HOST_BIT;
    s.srcAccess = VK_ACCESS_2_HOST_WRITE_BIT;
    s.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT;
    s.dstAccess = VK_ACCESS_2_HOST_READ_BIT;
    return s;
  }
};

void expectEqualPairs(const Pairs& got, const Pairs& want) {
  EXPECT_EQ(firstDifference(got.keys, want.keys), -1);
  EXPECT_EQ(firstDifference(got.values, want.values), -1);
}

TEST_F(RadixSortRecordVulkan, SortsTheHostsBuffersInPlaceAtOffsets) {
  for (uint32_t bits : {32u, 24u}) {  // even and odd pass counts
    const Pairs in = randomPairs(77'777, bits, bits == 32 ? 0u : 1u << 24);
    HostPairs h = upload(in);
    auto stage = RadixSortStage::create(ctx(), {100'000});
    ASSERT_TRUE(stage.ok()) << stage.message();
    RadixSortRecordInfo info;
    info.keys = h.keysRange();
    info.values = h.valuesRange();
    info.count = static_cast<uint32_t>(in.keys.size());
    info.keyBits = bits;
    info.sync = toHost();
    submit([&](VkCommandBuffer cmd) { ASSERT_TRUE((*stage)->record(cmd, info).ok()); });
    expectEqualPairs(h.read(), stableSorted(in, bits));
  }
}

TEST_F(RadixSortRecordVulkan, CountFromADeviceBufferSortsThatManyAndLeavesTheRest) {
  const uint32_t maxCount = 20'000;
  const Pairs in = randomPairs(maxCount, 3);
  auto stage = RadixSortStage::create(ctx(), {maxCount});
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto countBuffer = impl().allocator->createBuffer(16, MemoryUsage::kUpload);
  ASSERT_TRUE(countBuffer.ok());
  // The device count below, equal to and above the bound (clamped), 0, and odd pass counts.
  for (uint32_t deviceCount : {0u, 1u, 4097u, 13'001u, maxCount, maxCount + 5u}) {
    for (uint32_t bits : {32u, 8u}) {
      SCOPED_TRACE("device count " + std::to_string(deviceCount) + ", keyBits " + std::to_string(bits));
      HostPairs h = upload(in);
      *static_cast<uint32_t*>(countBuffer->mapped()) = deviceCount;
      RadixSortRecordInfo info;
      info.keys = h.keysRange();
      info.values = h.valuesRange();
      info.count = maxCount;
      info.keyBits = bits;
      info.countBuffer = countBuffer->range();
      info.sync = toHost();
      submit([&](VkCommandBuffer cmd) { ASSERT_TRUE((*stage)->record(cmd, info).ok()); });
      const uint32_t n = std::min(deviceCount, maxCount);
      Pairs head{{in.keys.begin(), in.keys.begin() + n}, {in.values.begin(), in.values.begin() + n}};
      Pairs want = stableSorted(head, bits);
      want.keys.insert(want.keys.end(), in.keys.begin() + n, in.keys.end());
      want.values.insert(want.values.end(), in.values.begin() + n, in.values.end());
      expectEqualPairs(h.read(), want);
    }
  }
}

TEST_F(RadixSortRecordVulkan, AppendsIntoAnotherStagesRecorder) {
  // Two sorts and a device-count sort in one recorder, sharing the stage's scratch: the recorder's
  // barriers (from declared uses) order them.
  const Pairs a = randomPairs(30'000, 1), b = randomPairs(5'000, 2, 1000), c = randomPairs(9'000, 3);
  HostPairs ha = upload(a), hb = upload(b), hc = upload(c);
  auto countBuffer = impl().allocator->createBuffer(4, MemoryUsage::kUpload);
  ASSERT_TRUE(countBuffer.ok());
  *static_cast<uint32_t*>(countBuffer->mapped()) = 6'000;
  auto stage = RadixSortStage::create(ctx(), {30'000});
  ASSERT_TRUE(stage.ok()) << stage.message();
  detail::Recorder rec(impl());
  detail::appendRadixSortPasses(**stage, rec, ha.keysRange(), ha.valuesRange(), 30'000, 32, 0);
  detail::appendRadixSortPasses(**stage, rec, hb.keysRange(), hb.valuesRange(), 5'000, 10, 0);
  detail::appendRadixSortPassesGpuCount(**stage, rec, hc.keysRange(), hc.valuesRange(), countBuffer->range(), 9'000, 32, 0);
  EXPECT_EQ(rec.passes().size(), 12u + 6u + 12u);  // 4 digit passes; 2; 4
  submit([&](VkCommandBuffer cmd) { ASSERT_TRUE(rec.record(cmd, toHost()).ok()); });
  expectEqualPairs(ha.read(), stableSorted(a, 32));
  expectEqualPairs(hb.read(), stableSorted(b, 10));
  Pairs head{{c.keys.begin(), c.keys.begin() + 6000}, {c.values.begin(), c.values.begin() + 6000}};
  Pairs want = stableSorted(head, 32);
  want.keys.insert(want.keys.end(), c.keys.begin() + 6000, c.keys.end());
  want.values.insert(want.values.end(), c.values.begin() + 6000, c.values.end());
  expectEqualPairs(hc.read(), want);
}

TEST_F(RadixSortRecordVulkan, BarrierPlanOrdersEveryPassAfterTheOneBefore) {
  auto stage = RadixSortStage::create(ctx(), {10'000});
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto buf = impl().allocator->createBuffer(2 * align() + 2 * 40'000, MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(buf.ok());
  RadixSortRecordInfo info;
  info.keys = {buf->handle(), 0, 40'000};
  info.values = {buf->handle(), alignUp(40'000, align()), 40'000};
  info.count = 10'000;
  for (uint32_t bits : {32u, 8u, 20u}) {
    info.keyBits = bits;
    auto plan = detail::radixSortBarrierPlan(**stage, info);
    ASSERT_TRUE(plan.ok()) << plan.message();
    const uint32_t digitPasses = radixSortPassCount(bits);
    ASSERT_EQ(plan->size(), 3 * digitPasses + digitPasses % 2) << "keyBits " << bits;
    EXPECT_FALSE((*plan)[0].needed);
    // histogram -> scan -> scatter -> next histogram (or copy): each depends on the one before.
    for (size_t i = 1; i < plan->size(); ++i) EXPECT_TRUE((*plan)[i].needed) << "pass " << i;
    EXPECT_NE((*plan)[1].reason.find("after-write"), std::string::npos) << (*plan)[1].reason;
  }
  info.count = 0;
  auto empty = detail::radixSortBarrierPlan(**stage, info);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST_F(RadixSortRecordVulkan, RejectsBadInputBeforeRecordingAnything) {
  const Pairs in = randomPairs(1000, 4);
  HostPairs h = upload(in);
  auto stage = RadixSortStage::create(ctx(), {1000});
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto tiny = impl().allocator->createBuffer(4, MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(tiny.ok());
  RadixSortRecordInfo good;
  good.keys = h.keysRange();
  good.values = h.valuesRange();
  good.count = 1000;
  good.sync = toHost();

  auto expectError = [&](VkCommandBuffer cmd, const RadixSortRecordInfo& info, ErrorCode code, const std::string& text) {
    const Status s = (*stage)->record(cmd, info);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.error().code, code) << s.message();
    EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
  };
  submit([&](VkCommandBuffer cmd) {
    RadixSortRecordInfo i = good;
    i.count = 1001;
    expectError(cmd, i, ErrorCode::kLimitExceeded, "RadixSortRecordInfo::count 1001 exceeds the stage's maxCount 1000");
    i = good;
    i.keyBits = 0;
    expectError(cmd, i, ErrorCode::kInvalidArgument, "RadixSortRecordInfo::keyBits is 0");
    i.keyBits = 33;
    expectError(cmd, i, ErrorCode::kInvalidArgument, "RadixSortRecordInfo::keyBits is 33");
    i = good;
    i.keys = {};
    expectError(cmd, i, ErrorCode::kInvalidArgument, "RadixSortRecordInfo::keys.buffer is null");
    i = good;
    i.values.size = 3996;
    expectError(cmd, i, ErrorCode::kBufferTooSmall, "RadixSortRecordInfo::values holds 3996 bytes; the stage needs 4000");
    i = good;
    i.values.offset = good.keys.offset;
    expectError(cmd, i, ErrorCode::kInvalidArgument, "keys and RadixSortRecordInfo::values overlap");
    if (ctx().deviceInfo().minStorageBufferOffsetAlignment > 1) {
      i = good;
      i.keys.offset += 4;
      expectError(cmd, i, ErrorCode::kInvalidArgument, "minStorageBufferOffsetAlignment");
    }
    i = good;
    i.countBuffer = {tiny->handle(), 0, 2};
    expectError(cmd, i, ErrorCode::kBufferTooSmall, "RadixSortRecordInfo::countBuffer holds 2 bytes");
    i = good;
    i.frame = 1;
    expectError(cmd, i, ErrorCode::kInvalidArgument, "RadixSortRecordInfo::frame is 1");
    i.count = 0;
    expectError(cmd, i, ErrorCode::kInvalidArgument, "RadixSortRecordInfo::frame is 1");  // checked before count 0
    i = good;
    i.count = 0;
    EXPECT_TRUE((*stage)->record(cmd, i).ok());  // nothing to sort, nothing recorded
    EXPECT_FALSE((*stage)->record(VK_NULL_HANDLE, good).ok());
  });
  // Nothing was recorded: the host's pairs are as uploaded.
  expectEqualPairs(h.read(), in);
}

TEST_F(RadixSortRecordVulkan, CreateRejectsZeroAndTooLargeMaxCountAndBadFramesInFlight) {
  auto zero = RadixSortStage::create(ctx(), {0});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.message().find("RadixSortStageCreateInfo::maxCount is 0"), std::string::npos) << zero.message();
  for (uint32_t frames : {0u, kMaxFramesInFlight + 1}) {
    auto bad = RadixSortStage::create(ctx(), {.maxCount = 10, .framesInFlight = frames});
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("RadixSortStageCreateInfo::framesInFlight is " + std::to_string(frames)),
              std::string::npos)
        << bad.message();
  }
  const uint64_t limit = ctx().deviceInfo().maxStorageBufferRange / sizeof(uint32_t);
  if (limit < UINT32_MAX) {
    auto big = RadixSortStage::create(ctx(), {static_cast<uint32_t>(limit + 1)});
    ASSERT_FALSE(big.ok());
    EXPECT_EQ(big.error().code, ErrorCode::kLimitExceeded);
    EXPECT_NE(big.message().find("RadixSortStageCreateInfo::maxCount"), std::string::npos) << big.message();
    EXPECT_NE(big.message().find("maxStorageBufferRange"), std::string::npos) << big.message();
  }
}

TEST_F(RadixSortRecordVulkan, RunRejectsMoreThanMaxCountAndStaysUsable) {
  auto stage = RadixSortStage::create(ctx(), {100});
  ASSERT_TRUE(stage.ok()) << stage.message();
  Pairs p = randomPairs(101, 5);
  const Pairs before = p;
  const Status s = (*stage)->run({p.keys, p.values});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("exceeds the stage's maxCount 100"), std::string::npos) << s.message();
  EXPECT_EQ(p.keys, before.keys);
  Pairs q = randomPairs(100, 6);
  const Pairs want = stableSorted(q, 32);
  ASSERT_TRUE((*stage)->run({q.keys, q.values}).ok());
  expectEqualPairs(q, want);
}

TEST_F(RadixSortRecordVulkan, WideBallotPathSortsLikeStableSort) {
  // The 128-bit ballot path that subgroups above 32 take (AMD wave64, 128-wide devices), forced here.
  auto stage = RadixSortStage::create(ctx(), {200'000});
  ASSERT_TRUE(stage.ok()) << stage.message();
  detail::forceRadixSortWideBallot(**stage, true);
  for (uint32_t bits : {32u, 13u}) {
    SCOPED_TRACE("keyBits " + std::to_string(bits));
    const Pairs in = randomPairs(150'001, bits, bits == 32 ? 4096u : 0u);
    Pairs got = in;
    ASSERT_TRUE((*stage)->run({got.keys, got.values, bits}).ok());
    expectEqualPairs(got, stableSorted(in, bits));
  }
}

TEST_F(RadixSortRecordVulkan, RepeatedRunsAreBitwiseIdenticalAndTimed) {
  // Many ties (keys < 64) and a count that is not a multiple of any workgroup size.
  const Pairs in = randomPairs(250'001, 8, 64);
  auto stage = RadixSortStage::create(ctx(), {250'001});
  ASSERT_TRUE(stage.ok()) << stage.message();
  Pairs first = in;
  ASSERT_TRUE((*stage)->run({first.keys, first.values, 32}).ok());
  expectEqualPairs(first, stableSorted(in, 32));
  for (int r = 0; r < 10; ++r) {
    Pairs again = in;
    ASSERT_TRUE((*stage)->run({again.keys, again.values, 32}).ok());
    ASSERT_EQ(again.keys, first.keys) << "run " << r;
    ASSERT_EQ(again.values, first.values) << "run " << r;
  }
  const auto& t = (*stage)->timings();
  if (ctx().deviceInfo().timestampPeriodNs > 0) {
    ASSERT_EQ(t.size(), 12u);
    EXPECT_STREQ(t[0].name, "vkc.radix_sort.histogram");
    EXPECT_STREQ(t[1].name, "vkc.radix_sort.scan");
    EXPECT_STREQ(t[2].name, "vkc.radix_sort.scatter");
    for (const PassTiming& p : t) EXPECT_GE(p.ns, 0.0);
  }
}

}  // namespace
}  // namespace vkc::test
