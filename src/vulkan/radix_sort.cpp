// The radix sort on Vulkan: per digit pass, HISTOGRAM, SCAN and SCATTER dispatches of
// shaders/radix_sort.comp, ping-ponging between the host's buffers and the stage's scratch (a COPY
// pass after an odd number of digit passes), recorded by the Recorder, which derives every barrier
// from the passes' declared buffer uses.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "buffer_check.h"
#include "context_impl.h"
#include "radix_sort_stage.h"
#include "recorder.h"
#include "shared/radix_sort.h"
#include "shared/radix_sort_passes.h"
#include "stage_common.h"
#include "util/try.h"
#include "vkcollide/radix_sort.h"

namespace vkc {

static_assert(gpu::kRadixTileSize == gpu::kRadixGroupSize * gpu::kRadixItemsPerThread);
static_assert(gpu::kRadixBins == (1u << gpu::kRadixDigitBits) && gpu::kRadixBins == gpu::kRadixGroupSize,
              "the histogram pass clears and writes one bin per invocation");
static_assert(radixSortPassCount(32) == 32 / gpu::kRadixDigitBits);
static_assert(gpu::kRadixGroupSize <= 256u, "8-bit per-subgroup counts: a chunk holds at most 256 keys of one digit");

using detail::Buffer;
using detail::MemoryUsage;

namespace {
// Digit passes plus the copy: the most passes one sort appends.
constexpr uint32_t kMaxPasses = 3 * radixSortPassCount(32) + 1;

uint32_t tilesFor(uint32_t count) { return (count + gpu::kRadixTileSize - 1) / gpu::kRadixTileSize; }

}  // namespace

struct RadixSortStage::Impl {
  // The stage's buffers (StageBuffers ids): all scratch is per frame in flight; no static tables.
  enum : uint32_t { kKeysScratch, kValuesScratch, kTileHist, kDigitTotals, kDummy, kBufferCount };

  detail::ContextImpl& ctx;
  uint32_t maxCount = 0;
  uint32_t frames = 1;
  const detail::Pipeline* pipelines[4] = {};
  const detail::Pipeline* wideScatter = nullptr;  // the scatter with 128-bit ballots on any subgroup size
  bool forceWideBallot = false;
  detail::StageBuffers buffers;
  // Convenience path (run): device copies and staging, made on first use.
  Buffer keys, values, upload, readback;
  detail::TimestampPool queries{ctx};
  std::vector<PassTiming> timings;
  RecordStats lastStats;  // of the last record() or run()

  explicit Impl(detail::ContextImpl& c) : ctx(c) {}

  // Every buffer of a stage sorting up to `maxCount` pairs (memoryRequirements() and create() both use this).
  static std::array<detail::BufferSpec, kBufferCount> plan(uint32_t maxCount) {
    const VkDeviceSize bytes = VkDeviceSize{maxCount} * sizeof(uint32_t);
    std::array<detail::BufferSpec, kBufferCount> p{};
    p[kKeysScratch] = {bytes, MemoryUsage::kDeviceLocal, true};
    p[kValuesScratch] = {bytes, MemoryUsage::kDeviceLocal, true};
    p[kTileHist] = {VkDeviceSize{tilesFor(maxCount)} * gpu::kRadixBins * sizeof(uint32_t), MemoryUsage::kDeviceLocal,
                    true};
    p[kDigitTotals] = {gpu::kRadixBins * sizeof(uint32_t), MemoryUsage::kDeviceLocal, true};
    p[kDummy] = {16};  // bound in place of a count buffer, never written
    return p;
  }

  // Appends the passes for validated ranges. `count` is the exact count, or with a count buffer the
  // upper bound that sizes the dispatches. `frame` < frames picks the scratch.
  void appendPasses(detail::Recorder& rec, const BufferRange& hostKeys, const BufferRange& hostValues,
                    const BufferRange* countBuffer, uint32_t count, uint32_t keyBits, uint32_t frame) const {
    if (count == 0) return;
    const uint32_t tileCount = tilesFor(count);
    const VkDeviceSize bytes = VkDeviceSize{count} * sizeof(uint32_t);
    const BufferRange scratchKeys{buffers.get(kKeysScratch, frame).handle(), 0, bytes};
    const BufferRange scratchValues{buffers.get(kValuesScratch, frame).handle(), 0, bytes};
    const BufferRange hist{buffers.get(kTileHist, frame).handle(), 0,
                           VkDeviceSize{tileCount} * gpu::kRadixBins * sizeof(uint32_t)};
    const BufferRange totals{buffers.get(kDigitTotals, frame).handle(), 0, gpu::kRadixBins * sizeof(uint32_t)};
    const BufferRange countRange = countBuffer != nullptr ? *countBuffer : buffers.range(kDummy);
    const BufferRange keysA = {hostKeys.buffer, hostKeys.offset, bytes};
    const BufferRange valuesA = {hostValues.buffer, hostValues.offset, bytes};
    const uint32_t passCount = radixSortPassCount(keyBits);

    auto add = [&](uint32_t pass, uint32_t groups, const gpu::RadixSortPush& push,
                   std::initializer_list<BufferRange> ranges) {
      const detail::Pipeline* pipeline = pass == gpu::kRadixPassScatter && forceWideBallot ? wideScatter : pipelines[pass];
      detail::Pass p = detail::passFromDecl(gpu::kRadixPasses[pass], pipeline, {ranges.begin(), ranges.size()});
      p.setPush(push);
      p.groupCount = groups;
      rec.add(std::move(p));
    };
    for (uint32_t d = 0; d < passCount; ++d) {
      const bool fromHost = d % 2 == 0;
      const BufferRange& kIn = fromHost ? keysA : scratchKeys;
      const BufferRange& vIn = fromHost ? valuesA : scratchValues;
      const BufferRange& kOut = fromHost ? scratchKeys : keysA;
      const BufferRange& vOut = fromHost ? scratchValues : valuesA;
      gpu::RadixSortPush push{};
      push.count = count;
      push.shift = d * gpu::kRadixDigitBits;
      push.bits = std::min(gpu::kRadixDigitBits, keyBits - push.shift);
      push.tileCount = tileCount;
      push.countFromBuffer = countBuffer != nullptr ? 1u : 0u;
      push.smallScan = tileCount <= gpu::kRadixSmallScanTiles ? 1u : 0u;
      add(gpu::kRadixPassHistogram, tileCount, push, {kIn, vIn, kOut, vOut, hist, totals, countRange});
      add(gpu::kRadixPassScan, push.smallScan != 0 ? 1u : 1u << push.bits, push,
          {kIn, vIn, kOut, vOut, hist, totals, countRange});
      add(gpu::kRadixPassScatter, tileCount, push, {kIn, vIn, kOut, vOut, hist, totals, countRange});
    }
    if (passCount % 2 == 1) {
      gpu::RadixSortPush push{};
      push.count = count;
      push.bits = 1;
      push.tileCount = tileCount;
      push.countFromBuffer = countBuffer != nullptr ? 1u : 0u;
      add(gpu::kRadixPassCopy, tileCount, push,
          {scratchKeys, scratchValues, keysA, valuesA, hist, totals, countRange});
    }
  }

  Status checkRange(const BufferRange& r, const char* field, VkDeviceSize needed) const {
    return detail::checkBufferRange(ctx, r, "RadixSortRecordInfo", field, needed);
  }

  // Validates `info` and returns its passes (none for count 0 without a count buffer).
  Result<detail::Recorder> recorderFor(const RadixSortRecordInfo& info) const {
    if (info.keyBits == 0 || info.keyBits > 32) {
      return Error{ErrorCode::kInvalidArgument,
                   "RadixSortRecordInfo::keyBits is " + std::to_string(info.keyBits) + "; it must be 1..32"};
    }
    if (info.count > maxCount) {
      return Error{ErrorCode::kLimitExceeded, "RadixSortRecordInfo::count " + std::to_string(info.count) +
                                                  " exceeds the stage's maxCount " + std::to_string(maxCount)};
    }
    VKC_TRY(detail::checkFrame(info.frame, frames, "RadixSortRecordInfo"));
    detail::Recorder rec(ctx);
    const bool hasCountBuffer = info.countBuffer.buffer != VK_NULL_HANDLE;
    if (info.count == 0) return rec;  // nothing to sort (with a count buffer: at most 0 pairs)
    const VkDeviceSize bytes = VkDeviceSize{info.count} * sizeof(uint32_t);
    VKC_TRY(checkRange(info.keys, "keys", bytes));
    VKC_TRY(checkRange(info.values, "values", bytes));
    if (info.keys.buffer == info.values.buffer && info.keys.offset < info.values.offset + bytes &&
        info.values.offset < info.keys.offset + bytes) {
      return Error{ErrorCode::kInvalidArgument, "RadixSortRecordInfo::keys and RadixSortRecordInfo::values overlap"};
    }
    BufferRange countRange = info.countBuffer;
    if (hasCountBuffer) {
      VKC_TRY(checkRange(countRange, "countBuffer", sizeof(uint32_t)));
      countRange.size = sizeof(uint32_t);
    }
    appendPasses(rec, info.keys, info.values, hasCountBuffer ? &countRange : nullptr, info.count, info.keyBits,
                 info.frame);
    return rec;
  }
};

MemoryRequirements detail::radixSortRequirements(uint32_t maxCount) {
  return requirementsOf(RadixSortStage::Impl::plan(maxCount), 1);
}

RadixSortStage::RadixSortStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RadixSortStage::~RadixSortStage() = default;

// The checks create() and memoryRequirements() share: the description and the device's limits.
static Status checkCreateInfo(const detail::ContextImpl& ctx, const RadixSortStageCreateInfo& info) {
  const uint64_t maxRange = ctx.info.maxStorageBufferRange;
  if (info.maxCount == 0) {
    return Error{ErrorCode::kInvalidArgument, "RadixSortStageCreateInfo::maxCount is 0; it must be at least 1"};
  }
  if (uint64_t{info.maxCount} * sizeof(uint32_t) > maxRange) {
    return Error{ErrorCode::kLimitExceeded,
                 "RadixSortStageCreateInfo::maxCount " + std::to_string(info.maxCount) + " needs " +
                     std::to_string(uint64_t{info.maxCount} * 4) + " bytes in one storage buffer binding; the device '" +
                     ctx.info.name + "' allows maxStorageBufferRange = " + std::to_string(maxRange) + " bytes (" +
                     std::to_string(maxRange / 4) + " keys)"};
  }
  VKC_TRY(detail::checkFramesInFlight(info.framesInFlight, "RadixSortStageCreateInfo"));
  if (!ctx.info.missingForSort.empty()) {  // (queried with the device: ballot, subgroup size, shared memory)
    std::string list;
    for (const std::string& m : ctx.info.missingForSort) list += (list.empty() ? "" : ", ") + m;
    return Error{ErrorCode::kUnsupported, "RadixSortStage: the device '" + ctx.info.name + "' lacks " + list};
  }
  return {};
}

Result<MemoryRequirements> RadixSortStage::memoryRequirements(const Context& context,
                                                              const RadixSortStageCreateInfo& info) {
  VKC_TRY(checkCreateInfo(detail::Internals::of(context), info));
  return detail::requirementsOf(Impl::plan(info.maxCount), info.framesInFlight);
}

Result<std::unique_ptr<RadixSortStage>> RadixSortStage::create(Context& context, const RadixSortStageCreateInfo& info) {
  detail::ContextImpl& ctx = detail::Internals::of(context);
  VKC_TRY(checkCreateInfo(ctx, info));
  auto impl = std::make_unique<Impl>(ctx);
  impl->maxCount = info.maxCount;
  impl->frames = info.framesInFlight;
  for (uint32_t pass = 0; pass < 5; ++pass) {
    const uint32_t kind = pass < 4 ? pass : gpu::kRadixPassScatter;
    auto p = ctx.pipelines->get(
        {"radix_sort", gpu::kRadixBindingTotal, sizeof(gpu::RadixSortPush), {kind, pass < 4 ? 0u : 1u}});
    if (!p) return p.error();
    (pass < 4 ? impl->pipelines[pass] : impl->wideScatter) = *p;
  }
  VKC_TRY(impl->buffers.create(ctx, Impl::plan(info.maxCount), info.framesInFlight));
  VKC_TRY(impl->queries.create(2 * kMaxPasses));
  return std::unique_ptr<RadixSortStage>(new RadixSortStage(std::move(impl)));
}

uint32_t RadixSortStage::maxCount() const { return impl_->maxCount; }
const std::vector<PassTiming>& RadixSortStage::timings() const { return impl_->timings; }
const RecordStats& RadixSortStage::lastRecordStats() const { return impl_->lastStats; }

Status RadixSortStage::recordUpload(VkCommandBuffer commandBuffer) {
  return detail::checkCommandBuffer(commandBuffer, "RadixSortStage", "recordUpload");
}

Status RadixSortStage::record(VkCommandBuffer commandBuffer, const RadixSortRecordInfo& info) {
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "RadixSortStage"));
  return detail::recordPasses(impl_->recorderFor(info), commandBuffer, info.sync, impl_->lastStats);
}

void detail::appendRadixSortPasses(RadixSortStage& stage, Recorder& rec, const BufferRange& keys,
                                   const BufferRange& values, uint32_t count, uint32_t keyBits, uint32_t frame) {
  detail::Internals::of(stage).appendPasses(rec, keys, values, nullptr, count, keyBits, frame);
}

void detail::appendRadixSortPassesGpuCount(RadixSortStage& stage, Recorder& rec, const BufferRange& keys,
                                           const BufferRange& values, const BufferRange& countBuffer,
                                           uint32_t maxCount, uint32_t keyBits, uint32_t frame) {
  const BufferRange count{countBuffer.buffer, countBuffer.offset, sizeof(uint32_t)};
  detail::Internals::of(stage).appendPasses(rec, keys, values, &count, maxCount, keyBits, frame);
}

void detail::forceRadixSortWideBallot(RadixSortStage& stage, bool wide) { detail::Internals::of(stage).forceWideBallot = wide; }

std::vector<std::string> detail::radixSortMissing(VkSubgroupFeatureFlags subgroupOperations, uint32_t minSubgroupSize,
                                                  uint32_t maxSharedBytes) {
  std::vector<std::string> missing;
  if ((subgroupOperations & VK_SUBGROUP_FEATURE_BALLOT_BIT) == 0) {
    missing.push_back("subgroup ballot operations (VK_SUBGROUP_FEATURE_BALLOT_BIT)");
  }
  // The scatter keeps 8-bit counts for at most kRadixMaxSubgroups subgroups of a workgroup.
  if (uint64_t{minSubgroupSize} * gpu::kRadixMaxSubgroups < gpu::kRadixGroupSize) {
    missing.push_back("subgroups of at least " + std::to_string(gpu::kRadixGroupSize / gpu::kRadixMaxSubgroups) +
                      " invocations (the device may run " + std::to_string(minSubgroupSize) + ")");
  }
  if (maxSharedBytes < kRadixSortSharedBytes) {
    missing.push_back(std::to_string(kRadixSortSharedBytes) + " bytes of compute shared memory (maxComputeSharedMemorySize " +
                      std::to_string(maxSharedBytes) + ")");
  }
  return missing;
}

Result<std::vector<detail::BarrierDecision>> detail::radixSortBarrierPlan(RadixSortStage& stage,
                                                                          const RadixSortRecordInfo& info) {
  auto rec = detail::Internals::of(stage).recorderFor(info);
  if (!rec) return rec.error();
  return rec->plan();
}

Status RadixSortStage::run(const RadixSortInput& input) {
  Impl& s = *impl_;
  VKC_TRY(validateRadixSort(input, "RadixSortStage::run"));
  if (input.keys.size() > s.maxCount) {
    return Error{ErrorCode::kLimitExceeded, "RadixSortStage::run: keys.size() " + std::to_string(input.keys.size()) +
                                                " exceeds the stage's maxCount " + std::to_string(s.maxCount)};
  }
  s.timings.clear();
  s.lastStats = {};
  if (input.keys.empty()) return {};
  const uint32_t count = static_cast<uint32_t>(input.keys.size());
  const VkDeviceSize bytes = VkDeviceSize{count} * sizeof(uint32_t);
  auto& alloc = *s.ctx.allocator;
  VKC_TRY(alloc.ensureBuffer(s.keys, bytes, MemoryUsage::kDeviceLocal));
  VKC_TRY(alloc.ensureBuffer(s.values, bytes, MemoryUsage::kDeviceLocal));
  VKC_TRY(alloc.ensureBuffer(s.upload, 2 * bytes, MemoryUsage::kUpload));
  VKC_TRY(alloc.ensureBuffer(s.readback, 2 * bytes, MemoryUsage::kReadback));
  std::memcpy(s.upload.mapped(), input.keys.data(), bytes);
  std::memcpy(static_cast<char*>(s.upload.mapped()) + bytes, input.values.data(), bytes);

  RadixSortRecordInfo info;
  info.keys = {s.keys.handle(), 0, bytes};
  info.values = {s.values.handle(), 0, bytes};
  info.count = count;
  info.keyBits = input.keyBits;
  auto rec = s.recorderFor(info);
  if (!rec) return rec.error();
  const RecordSync sync = detail::copyInCopyOutSync();
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    VkBufferCopy region{0, 0, bytes};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.upload.handle(), s.keys.handle(), 1, &region);
    region.srcOffset = bytes;
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.upload.handle(), s.values.handle(), 1, &region);
    VKC_TRY(rec->record(cmd, sync, s.queries, &s.lastStats));
    region = {0, 0, bytes};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.keys.handle(), s.readback.handle(), 1, &region);
    region.dstOffset = bytes;
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.values.handle(), s.readback.handle(), 1, &region);
    return {};
  }));
  VKC_TRY(detail::storeTimings(*rec, s.queries, s.timings));
  std::memcpy(input.keys.data(), s.readback.mapped(), bytes);
  std::memcpy(input.values.data(), static_cast<const char*>(s.readback.mapped()) + bytes, bytes);
  return {};
}

Status radixSort(Backend backend, Context* context, const RadixSortInput& input) {
  if (backend != Backend::kVulkan) return radixSortCpu(input, backend);
  if (context == nullptr) return Error{ErrorCode::kInvalidArgument, "radixSort: the Vulkan backend needs a context"};
  VKC_TRY(validateRadixSort(input, "radixSort"));
  if (input.keys.empty()) return {};
  if (input.keys.size() > UINT32_MAX) return Error{ErrorCode::kLimitExceeded, "radixSort: keys.size() exceeds 2^32 - 1"};
  auto stage = RadixSortStage::create(*context, {.maxCount = static_cast<uint32_t>(input.keys.size())});
  if (!stage) return stage.error();
  return (*stage)->run(input);
}

}  // namespace vkc
