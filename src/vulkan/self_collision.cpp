// Self collision on Vulkan: the bounds passes, then shaders/self_collision.comp's passes around the
// sort(s), in one Recorder so that every barrier comes from the passes' declared buffer uses.
//
// Segmentation: all cloths' items are sorted together by cell key, then, with several cloths, sorted
// again (stably) by cloth index over ceil(log2(clothCount)) bits. Items are numbered cloth by cloth, so
// each cloth's items end in the cloth's own slots, in (key, item) order: exactly the order of the CPU
// twin's per-cloth sort. One cloth costs one sort; any number of cloths costs two.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>

#include "bounds_stage.h"
#include "buffer_check.h"
#include "context_impl.h"
#include "radix_sort_stage.h"
#include "recorder.h"
#include "scene/self_collision_layout.h"
#include "shared/self_collision_passes.h"
#include "stage_common.h"
#include "vkcollide/bounds.h"
#include "vkcollide/self_collision.h"

namespace vkc {

using detail::Access;
using detail::Buffer;
using detail::MemoryUsage;

struct SelfCollisionStage::Impl {
  detail::ContextImpl& ctx;
  std::vector<ClothRange> cloths;
  uint32_t particleCount = 0;
  std::vector<std::vector<uint32_t>> subsets;
  bool useRest = false;
  detail::SelfLayout layout;
  uint32_t itemCount = 0;
  std::unique_ptr<BoundsStage> bounds;
  const detail::Pipeline* pipelines[5] = {};
  std::unique_ptr<RadixSortStage> sort;
  Buffer clothTable, items, keys, values, sortedPos, sortedRest, debug, dummy;
  // Convenience path.
  Buffer particles, rest, upload, readback;
  detail::TimestampPool queries{ctx};
  std::vector<PassTiming> timings;
  std::optional<detail::Recorder> last;

  explicit Impl(detail::ContextImpl& c) : ctx(c) {}

  BufferRange slots(const Buffer& b, VkDeviceSize elementSize) const {
    return {b.handle(), 0, VkDeviceSize{itemCount} * elementSize};
  }

  // Stable sort of keys/values (itemCount elements) by their low keyBits bits: the radix sort's passes.
  void appendSort(detail::Recorder& rec, uint32_t keyBits) const {
    detail::appendRadixSortPasses(*sort, rec, slots(keys, 4), slots(values, 4), itemCount, keyBits, 0);
  }

  // The pass `kind` at its declared access; without rest positions, rest and sortedRest untouched.
  detail::Pass selfPass(uint32_t kind, const gpu::SelfPush& push, BufferRange parts, BufferRange restRange,
                        BufferRange debugRange) const {
    const BufferRange boundsOut = bounds->outputBuffer();
    const BufferRange ranges[gpu::kSelfBindingCount] = {
        parts,
        restRange,
        clothTable.range(),
        slots(items, 4),
        boundsOut,
        slots(keys, 4),
        slots(values, 4),
        slots(sortedPos, 16),
        useRest ? slots(sortedRest, 16) : dummy.range(),
        debugRange};
    detail::Pass p = detail::passFromDecl(gpu::kSelfPasses[kind], pipelines[kind], ranges);
    if (!useRest) {
      p.narrow(gpu::kSelfBindingRest, Access::kNone);
      p.narrow(gpu::kSelfBindingSortedRest, Access::kNone);
    }
    p.setPush(push);
    p.groupCount = (itemCount + gpu::kSelfGroupSize - 1) / gpu::kSelfGroupSize;
    return p;
  }

  gpu::SelfPush pushFor(const SelfCollisionSettings& settings, bool counts) const {
    return gpu::SelfPush{static_cast<uint32_t>(cloths.size()),
                         itemCount,
                         particleCount,
                         (useRest ? gpu::kSelfFlagRest : 0u) | (counts ? gpu::kSelfFlagCounts : 0u),
                         settings.distance,
                         settings.stiffness,
                         0,
                         0};
  }

  // Validated record of one pass. Precondition: itemCount > 0 (so particleCount > 0).
  Status recordValidated(VkCommandBuffer cmd, BufferRange parts, BufferRange restRange,
                         const SelfCollisionSettings& settings, const RecordSync& sync, VkQueryPool pool,
                         bool counts) {
    if (!useRest) restRange = dummy.range();
    const BufferRange dbg = counts ? slots(debug, 4) : dummy.range();
    const gpu::SelfPush push = pushFor(settings, counts);
    detail::Recorder rec(ctx);
    detail::appendBoundsPasses(*bounds, rec, parts, dummy.range(), false, 0);
    rec.add(selfPass(gpu::kSelfPassKeys, push, parts, restRange, dbg));
    appendSort(rec, 32);
    const uint32_t clothBits = detail::clothKeyBits(cloths.size());
    if (clothBits > 0) {
      rec.add(selfPass(gpu::kSelfPassClothKeys, push, parts, restRange, dbg));
      appendSort(rec, clothBits);
    }
    rec.add(selfPass(gpu::kSelfPassGather, push, parts, restRange, dbg));
    detail::Pass collide = selfPass(gpu::kSelfPassCollide, push, parts, restRange, dbg);
    if (!counts) collide.narrow(gpu::kSelfBindingDebug, Access::kNone);
    rec.add(std::move(collide));
    const Status st = rec.record(cmd, sync, pool);
    last.emplace(std::move(rec));
    return st;
  }
};

SelfCollisionStage::SelfCollisionStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SelfCollisionStage::~SelfCollisionStage() = default;
const std::vector<PassTiming>& SelfCollisionStage::timings() const { return impl_->timings; }

Result<std::unique_ptr<SelfCollisionStage>> SelfCollisionStage::create(Context& context, const SelfStageCreateInfo& info) {
  detail::ContextImpl& ctx = detail::Internals::of(context);
  VKC_TRY(detail::validateSelfLayout(info.cloths, info.particleCount, info.subsets,
                                     info.restPositions ? info.particleCount : 0, "SelfStageCreateInfo"));
  auto impl = std::make_unique<Impl>(ctx);
  impl->cloths.assign(info.cloths.begin(), info.cloths.end());
  impl->particleCount = info.particleCount;
  for (const auto& s : info.subsets) impl->subsets.emplace_back(s.begin(), s.end());
  impl->useRest = info.restPositions;
  impl->layout = detail::makeSelfLayout(info.cloths, info.subsets);
  impl->itemCount = static_cast<uint32_t>(impl->layout.itemParticles.size());
  const uint32_t n = impl->itemCount;

  const uint64_t maxRange = ctx.info.maxStorageBufferRange;
  const uint64_t needs[] = {uint64_t{info.particleCount} * 16, uint64_t{n} * 16};
  for (const uint64_t bytes : needs) {
    if (bytes > maxRange) {
      return Error{ErrorCode::kLimitExceeded, "SelfStageCreateInfo::particleCount " + std::to_string(info.particleCount) +
                                                  " needs " + std::to_string(bytes) +
                                                  " bytes in one storage buffer; the device '" + ctx.info.name +
                                                  "' allows maxStorageBufferRange = " + std::to_string(maxRange)};
    }
  }
  auto boundsStage = BoundsStage::create(context, {info.cloths, info.particleCount, false});
  if (!boundsStage) return boundsStage.error();
  impl->bounds = std::move(boundsStage.value());
  VKC_TRY(detail::getPassPipelines(ctx, "self_collision", gpu::kSelfBindingCount, sizeof(gpu::SelfPush),
                                    impl->pipelines));
  if (n > 0) {
    auto sortStage = RadixSortStage::create(context, {n});
    if (!sortStage) return sortStage.error();
    impl->sort = std::move(sortStage.value());
  }
  auto make = [&](Buffer& b, VkDeviceSize bytes) { return detail::makeBuffer(ctx, b, bytes); };
  VKC_TRY(make(impl->clothTable, impl->layout.cloths.size() * sizeof(gpu::SelfCloth)));
  VKC_TRY(make(impl->items, VkDeviceSize{n} * 4));
  VKC_TRY(make(impl->keys, VkDeviceSize{n} * 4));
  VKC_TRY(make(impl->values, VkDeviceSize{n} * 4));
  VKC_TRY(make(impl->sortedPos, VkDeviceSize{n} * 16));
  VKC_TRY(make(impl->sortedRest, impl->useRest ? VkDeviceSize{n} * 16 : 16));
  VKC_TRY(make(impl->dummy, 16));
  const detail::ContextImpl::Upload uploads[] = {
      {impl->layout.cloths.data(), impl->layout.cloths.size() * sizeof(gpu::SelfCloth), impl->clothTable.handle()},
      {impl->layout.itemParticles.data(), impl->layout.itemParticles.size() * 4, impl->items.handle()}};
  VKC_TRY(ctx.uploadNow(uploads));
  VKC_TRY(impl->queries.create(64));
  return std::unique_ptr<SelfCollisionStage>(new SelfCollisionStage(std::move(impl)));
}

Status SelfCollisionStage::record(VkCommandBuffer commandBuffer, const SelfRecordInfo& info) {
  Impl& s = *impl_;
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "SelfCollisionStage"));
  VKC_TRY(detail::validateSelfSettings(info.settings, "SelfRecordInfo"));
  if (s.itemCount == 0) return {};
  const VkDeviceSize bytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
  BufferRange parts = info.particles, rest = info.restPositions;
  VKC_TRY(detail::checkBufferRange(s.ctx, parts, "SelfRecordInfo", "particles", bytes));
  parts.size = bytes;
  if (s.useRest) {
    VKC_TRY(detail::checkBufferRange(s.ctx, rest, "SelfRecordInfo", "restPositions", bytes));
    rest.size = bytes;
  }
  return s.recordValidated(commandBuffer, parts, rest, info.settings, info.sync, VK_NULL_HANDLE, false);
}

Status SelfCollisionStage::run(const SelfCollisionInput& input, SelfCollisionDebug* debug) {
  Impl& s = *impl_;
  VKC_TRY(validate(input));
  bool same = input.particles.size() == s.particleCount && input.restPositions.empty() != s.useRest &&
              std::equal(input.cloths.begin(), input.cloths.end(), s.cloths.begin(), s.cloths.end(),
                         [](const ClothRange& a, const ClothRange& b) { return a.first == b.first && a.count == b.count; });
  // Subsets compared per cloth, where no subsets and an empty one both mean all the cloth's particles.
  for (size_t c = 0; same && c < s.cloths.size(); ++c) {
    const std::span<const uint32_t> in = input.subsets.empty() ? std::span<const uint32_t>() : input.subsets[c];
    const std::span<const uint32_t> st = s.subsets.empty() ? std::span<const uint32_t>() : std::span<const uint32_t>(s.subsets[c]);
    same = std::equal(in.begin(), in.end(), st.begin(), st.end());
  }
  if (!same) {
    return Error{ErrorCode::kInvalidArgument, "SelfCollisionStage::run: the input's cloths, particle count, subsets "
                                              "or rest positions differ from the stage's"};
  }
  const uint32_t n = s.itemCount;
  // The debug results are built here and the particles kept aside: the caller's outputs are written
  // only once nothing can fail any more.
  SelfCollisionDebug result;
  result.neighbourCounts.assign(s.particleCount, 0);
  for (const gpu::SelfCloth& sc : s.layout.cloths) result.clothFirstItem.push_back(sc.firstItem);
  s.timings.clear();
  if (n == 0) {
    if (debug != nullptr) *debug = std::move(result);
    return {};
  }
  auto& alloc = *s.ctx.allocator;
  const VkDeviceSize bytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
  const VkDeviceSize restBytes = s.useRest ? bytes : 0;
  const VkDeviceSize slotWords = VkDeviceSize{n} * 4;
  VKC_TRY(alloc.ensureBuffer(s.particles, bytes, MemoryUsage::kDeviceLocal));
  if (s.useRest) VKC_TRY(alloc.ensureBuffer(s.rest, bytes, MemoryUsage::kDeviceLocal));
  VKC_TRY(alloc.ensureBuffer(s.upload, bytes + restBytes, MemoryUsage::kUpload));
  VKC_TRY(alloc.ensureBuffer(s.readback, bytes + 3 * slotWords, MemoryUsage::kReadback));
  if (debug != nullptr) VKC_TRY(alloc.ensureBuffer(s.debug, slotWords, MemoryUsage::kDeviceLocal));
  std::memcpy(s.upload.mapped(), input.particles.data(), bytes);
  if (s.useRest) std::memcpy(static_cast<char*>(s.upload.mapped()) + bytes, input.restPositions.data(), bytes);
  const RecordSync sync = detail::copyInCopyOutSync();
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    VkBufferCopy region{0, 0, bytes};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.upload.handle(), s.particles.handle(), 1, &region);
    if (s.useRest) {
      region.srcOffset = bytes;
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.upload.handle(), s.rest.handle(), 1, &region);
    }
    VKC_TRY(s.recordValidated(cmd, {s.particles.handle(), 0, bytes}, {s.rest.handle(), 0, bytes}, input.settings, sync,
                              s.queries, debug != nullptr));
    region = {0, 0, bytes};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.particles.handle(), s.readback.handle(), 1, &region);
    if (debug != nullptr) {
      const VkBufferCopy k{0, bytes, slotWords}, v{0, bytes + slotWords, slotWords}, c{0, bytes + 2 * slotWords, slotWords};
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.keys.handle(), s.readback.handle(), 1, &k);
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.values.handle(), s.readback.handle(), 1, &v);
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.debug.handle(), s.readback.handle(), 1, &c);
    }
    return {};
  }));
  VKC_TRY(detail::storeTimings(*s.last, s.queries, s.timings));
  if (debug == nullptr) {
    std::memcpy(input.particles.data(), s.readback.mapped(), bytes);
    return {};
  }
  std::vector<Float4> moved(s.particleCount);
  std::memcpy(moved.data(), s.readback.mapped(), bytes);

  // Debug: the sorted keys and items, the counts, then a second submission lists each slot's neighbours.
  const auto* words = reinterpret_cast<const uint32_t*>(static_cast<const char*>(s.readback.mapped()) + bytes);
  result.sortedKeys.assign(words, words + n);
  std::vector<uint32_t> counts(words + 2 * n, words + 3 * n);
  result.sortedParticles.resize(n);
  for (uint32_t k = 0; k < n; ++k) {
    result.sortedParticles[k] = s.layout.itemParticles[std::min(words[n + k], n - 1)];
    result.neighbourCounts[result.sortedParticles[k]] = counts[k];
  }
  std::vector<uint32_t> offsets(n);
  uint64_t total = 0;
  for (uint32_t k = 0; k < n; ++k) {
    offsets[k] = static_cast<uint32_t>(total);
    total += counts[k];
  }
  result.directedPairs = total;
  const VkDeviceSize debugBytes = (VkDeviceSize{n} + total) * 4;
  if (debugBytes > s.ctx.info.maxStorageBufferRange || n + total > UINT32_MAX) {
    return Error{ErrorCode::kLimitExceeded, "SelfCollisionStage::run: the debug pair list needs " +
                                                std::to_string(debugBytes) + " bytes, more than one storage buffer holds"};
  }
  VKC_TRY(alloc.ensureBuffer(s.debug, debugBytes, MemoryUsage::kDeviceLocal));
  VKC_TRY(alloc.ensureBuffer(s.readback, debugBytes, MemoryUsage::kReadback));
  const detail::ContextImpl::Upload up{offsets.data(), slotWords, s.debug.handle()};
  VKC_TRY(s.ctx.uploadNow({&up, 1}));
  gpu::SelfPush push = s.pushFor(input.settings, false);
  push.debugBase = n;
  detail::Recorder rec(s.ctx);
  rec.add(s.selfPass(gpu::kSelfPassPairs, push, {s.particles.handle(), 0, bytes},
                     s.useRest ? BufferRange{s.rest.handle(), 0, bytes} : s.dummy.range(), {s.debug.handle(), 0, debugBytes}));
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    VKC_TRY(rec.record(cmd, sync));
    const VkBufferCopy region{0, 0, debugBytes};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.debug.handle(), s.readback.handle(), 1, &region);
    return {};
  }));
  const auto* d = static_cast<const uint32_t*>(s.readback.mapped());
  for (uint32_t k = 0; k < n; ++k) {
    for (uint32_t e = 0; e < counts[k]; ++e) {
      const uint32_t m = std::min(d[n + offsets[k] + e], n - 1);
      const uint32_t i = result.sortedParticles[k], j = result.sortedParticles[m];
      result.pairs.push_back({std::min(i, j), std::max(i, j)});
    }
  }
  std::sort(result.pairs.begin(), result.pairs.end());
  result.pairs.erase(std::unique(result.pairs.begin(), result.pairs.end()), result.pairs.end());
  std::memcpy(input.particles.data(), moved.data(), bytes);
  *debug = std::move(result);
  return {};
}

Status collideSelf(Backend backend, Context* context, const SelfCollisionInput& input, SelfCollisionDebug* debug) {
  if (backend != Backend::kVulkan) return collideSelfCpu(input, backend, debug);
  if (context == nullptr) return Error{ErrorCode::kInvalidArgument, "collideSelf: the Vulkan backend needs a context"};
  VKC_TRY(validate(input));
  SelfStageCreateInfo ci;
  ci.cloths = input.cloths;
  ci.particleCount = static_cast<uint32_t>(input.particles.size());
  ci.subsets = input.subsets;
  ci.restPositions = !input.restPositions.empty();
  auto stage = SelfCollisionStage::create(*context, ci);
  if (!stage) return stage.error();
  return (*stage)->run(input, debug);
}

}  // namespace vkc
