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
#include "self_collision_stage.h"
#include "stage_common.h"
#include "vkcollide/bounds.h"
#include "vkcollide/self_collision.h"

namespace vkc {

using detail::Access;
using detail::Buffer;
using detail::MemoryUsage;

struct SelfCollisionStage::Impl {
  // The stage's buffers (StageBuffers ids). The cloth and item tables are static (staged at create,
  // copied by recordUpload() or the first record()); keys, values and the sorted copies are written
  // by the passes, so there is one of each per frame in flight. Without rest positions, kSortedRest
  // is never bound (one small shared buffer).
  enum : uint32_t { kClothTable, kItems, kKeys, kValues, kSortedPos, kSortedRest, kDummy, kStaging, kBufferCount };

  detail::ContextImpl& ctx;
  std::vector<ClothRange> cloths;
  uint32_t particleCount = 0;
  std::vector<std::vector<uint32_t>> subsets;
  bool useRest = false;
  uint32_t frames = 1;
  detail::SelfLayout layout;
  uint32_t itemCount = 0;
  std::unique_ptr<BoundsStage> bounds;
  bool fused = false;  // SelfCollisionPath::kFused: FUSED_SORT + COLLIDE
  const detail::Pipeline* pipelines[gpu::kSelfPassCount] = {};
  std::unique_ptr<RadixSortStage> sort;
  detail::StageBuffers buffers;
  mutable detail::TableUpload upload;  // recorded by the first Recorder that records these passes
  // Convenience path (run): device copies of the particles, staging, the debug lists; made on first use.
  Buffer particles, rest, runUpload, readback, debug;
  detail::TimestampPool queries{ctx};
  std::vector<PassTiming> timings;
  RecordStats lastStats;  // of the last record() or run()
  std::optional<detail::Recorder> last;

  explicit Impl(detail::ContextImpl& c) : ctx(c) {}

  // The static tables of `layout`, as TableUpload copies them.
  static std::array<detail::TableCopy, 2> tables(const detail::SelfLayout& layout) {
    return {detail::TableCopy{layout.cloths.data(), layout.cloths.size() * sizeof(gpu::SelfCloth), kClothTable},
            detail::TableCopy{layout.itemParticles.data(), layout.itemParticles.size() * sizeof(uint32_t), kItems}};
  }

  // Every buffer of a stage over `layout` (memoryRequirements() and create() both use this; the
  // embedded bounds and sort stages count their own).
  static std::array<detail::BufferSpec, kBufferCount> plan(const detail::SelfLayout& layout, bool rest) {
    const VkDeviceSize n = layout.itemParticles.size();
    std::array<detail::BufferSpec, kBufferCount> p{};
    p[kClothTable] = {layout.cloths.size() * sizeof(gpu::SelfCloth)};
    p[kItems] = {n * 4};
    p[kKeys] = {n * 4, MemoryUsage::kDeviceLocal, true};
    p[kValues] = {n * 4, MemoryUsage::kDeviceLocal, true};
    p[kSortedPos] = {n * 16, MemoryUsage::kDeviceLocal, true};
    p[kSortedRest] = {rest ? n * 16 : 0, MemoryUsage::kDeviceLocal, rest};
    p[kDummy] = {16};
    p[kStaging] = {detail::TableUpload::stagingBytes(tables(layout)), MemoryUsage::kUpload};
    return p;
  }

  BufferRange slots(const Buffer& b, VkDeviceSize elementSize) const {
    return {b.handle(), 0, VkDeviceSize{itemCount} * elementSize};
  }
  // The range of itemCount elements of buffer `id` of `frame`.
  BufferRange slots(uint32_t id, VkDeviceSize elementSize, uint32_t frame = 0) const {
    return slots(buffers.get(id, frame), elementSize);
  }
  BufferRange dummy() const { return buffers.range(kDummy); }

  // Stable sort of keys/values (itemCount elements) by their low keyBits bits: the radix sort's passes.
  void appendSort(detail::Recorder& rec, uint32_t keyBits, uint32_t frame) const {
    detail::appendRadixSortPasses(*sort, rec, slots(kKeys, 4, frame), slots(kValues, 4, frame), itemCount, keyBits,
                                  frame);
  }

  // The pass `kind` of `frame` at its declared access; without rest positions, rest and sortedRest untouched.
  detail::Pass selfPass(uint32_t kind, const gpu::SelfPush& push, BufferRange parts, BufferRange restRange,
                        BufferRange debugRange, uint32_t frame) const {
    const BufferRange boundsOut = bounds->outputBuffer(frame);
    const BufferRange ranges[gpu::kSelfBindingCount] = {
        parts,
        restRange,
        buffers.range(kClothTable),
        slots(kItems, 4),
        boundsOut,
        slots(kKeys, 4, frame),
        slots(kValues, 4, frame),
        slots(kSortedPos, 16, frame),
        useRest ? slots(kSortedRest, 16, frame) : dummy(),
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

  // The passes of one validated record. Precondition: itemCount > 0 (so particleCount > 0).
  detail::Recorder makeRecorder(const BufferRange& parts, BufferRange restRange, const SelfCollisionSettings& settings,
                                uint32_t frame, bool counts) const {
    if (!useRest) restRange = dummy();
    const BufferRange dbg = counts ? slots(debug, 4) : dummy();
    const gpu::SelfPush push = pushFor(settings, counts);
    detail::Recorder rec(ctx);
    rec.addUpload(upload);
    const uint32_t f = frame;
    if (fused) {
      detail::Pass sortPass = selfPass(gpu::kSelfPassFusedSort, push, parts, restRange, dbg, f);
      sortPass.groupCount = static_cast<uint32_t>(cloths.size());
      rec.add(std::move(sortPass));
      detail::Pass collide = selfPass(gpu::kSelfPassCollide, push, parts, restRange, dbg, f);
      if (!counts) collide.narrow(gpu::kSelfBindingDebug, Access::kNone);
      rec.add(std::move(collide));
      return rec;
    }
    detail::appendBoundsPasses(*bounds, rec, parts, dummy(), false, frame);
    rec.add(selfPass(gpu::kSelfPassKeys, push, parts, restRange, dbg, f));
    appendSort(rec, 32, f);
    const uint32_t clothBits = detail::clothKeyBits(cloths.size());
    if (clothBits > 0) {
      rec.add(selfPass(gpu::kSelfPassClothKeys, push, parts, restRange, dbg, f));
      appendSort(rec, clothBits, f);
    }
    rec.add(selfPass(gpu::kSelfPassGather, push, parts, restRange, dbg, f));
    detail::Pass collide = selfPass(gpu::kSelfPassCollide, push, parts, restRange, dbg, f);
    if (!counts) collide.narrow(gpu::kSelfBindingDebug, Access::kNone);
    rec.add(std::move(collide));
    return rec;
  }

  // Validated record of one pass (see makeRecorder); the recorder is kept for the timings.
  Status recordValidated(VkCommandBuffer cmd, const BufferRange& parts, const BufferRange& restRange,
                         const SelfCollisionSettings& settings, uint32_t frame, const RecordSync& sync,
                         VkQueryPool pool, bool counts) {
    detail::Recorder rec = makeRecorder(parts, restRange, settings, frame, counts);
    lastStats = {};
    const Status st = rec.record(cmd, sync, pool, &lastStats);
    last.emplace(std::move(rec));
    return st;
  }
};

SelfCollisionStage::SelfCollisionStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SelfCollisionStage::~SelfCollisionStage() = default;
const std::vector<PassTiming>& SelfCollisionStage::timings() const { return impl_->timings; }
const RecordStats& SelfCollisionStage::lastRecordStats() const { return impl_->lastStats; }
SelfCollisionPath SelfCollisionStage::path() const {
  return impl_->fused ? SelfCollisionPath::kFused : SelfCollisionPath::kGeneral;
}

// The checks create() and memoryRequirements() share: the description and the device's limits.
static Status checkCreateInfo(const detail::ContextImpl& ctx, const SelfCollisionStageCreateInfo& info) {
  VKC_TRY(detail::validateSelfLayout(info.cloths, info.particleCount, info.subsets,
                                     info.restPositions ? info.particleCount : 0, "SelfCollisionStageCreateInfo"));
  VKC_TRY(detail::checkFramesInFlight(info.framesInFlight, "SelfCollisionStageCreateInfo"));
  uint64_t items = 0;
  for (size_t c = 0; c < info.cloths.size(); ++c) {
    items += info.subsets.empty() || info.subsets[c].empty() ? info.cloths[c].count : info.subsets[c].size();
  }
  const uint64_t maxRange = ctx.info.maxStorageBufferRange;
  const uint64_t needs[] = {uint64_t{info.particleCount} * 16, items * 16};
  for (const uint64_t bytes : needs) {
    if (bytes > maxRange) {
      return Error{ErrorCode::kLimitExceeded, "SelfCollisionStageCreateInfo::particleCount " +
                                                  std::to_string(info.particleCount) + " needs " + std::to_string(bytes) +
                                                  " bytes in one storage buffer; the device '" + ctx.info.name +
                                                  "' allows maxStorageBufferRange = " + std::to_string(maxRange)};
    }
  }
  return {};
}

uint32_t fusedSelfCollisionCapacity(const Context& context) {
  return detail::fusedSortCapacity(detail::Internals::of(context), 0, gpu::kSelfFusedMinCapacity,
                                   gpu::kSelfFusedMaxCapacity);
}

// The loop iterations of one invocation of FUSED_SORT for a cloth of `particles` particles and `items`
// items (all its loops together, as llvmpipe counts them; see kLlvmpipeLoopLimit): the box, the
// reduction, keys, the bitonic stages and their compare-exchanges, the gather.
static uint64_t fusedLoopTrips(uint64_t particles, uint64_t items) {
  const uint64_t G = gpu::kSelfGroupSize;
  const detail::BitonicTrips sort = detail::bitonicSortTrips(items, G);
  return (particles + G - 1) / G + G + (sort.width + G - 1) / G + sort.trips + (items + G - 1) / G;
}

// Whether the stage takes the fused path; an error for kFused with a cloth that does not fit, or for
// a path that is not one of the enum's.
static Result<bool> takesFusedPath(const detail::ContextImpl& ctx, const Context& context,
                                   const SelfCollisionStageCreateInfo& info) {
  VKC_TRY(detail::checkPathValue(info.path, "SelfCollisionStageCreateInfo"));
  if (info.path == SelfCollisionPath::kGeneral) return false;
  const uint32_t capacity = fusedSelfCollisionCapacity(context);
  VKC_TRY(detail::checkFusedSortFits(ctx, info.path, capacity, "SelfCollisionStageCreateInfo"));
  if (capacity == 0) return false;  // (kAuto) below kSelfFusedMinCapacity items of shared memory
  for (size_t c = 0; c < info.cloths.size(); ++c) {
    const uint64_t items = info.subsets.empty() || info.subsets[c].empty() ? info.cloths[c].count : info.subsets[c].size();
    const bool fits = items <= capacity;
    const bool loops = !detail::limitsLoopIterations(ctx) ||
                       fusedLoopTrips(info.cloths[c].count, items) <= detail::kLlvmpipeLoopLimit;
    if (fits && loops) continue;
    if (info.path == SelfCollisionPath::kAuto) return false;
    return Error{ErrorCode::kLimitExceeded,
                 "SelfCollisionStageCreateInfo::cloths[" + std::to_string(c) + "] has " + std::to_string(items) +
                     " self-colliding particles; path kFused " +
                     (fits ? "would exceed llvmpipe's loop guard (docs/integration.md)"
                           : "takes at most " + std::to_string(capacity) + " per cloth on device '" + ctx.info.name +
                                 "' (fusedSelfCollisionCapacity)") +
                     "; use kAuto or kGeneral"};
  }
  return true;
}

static BoundsStageCreateInfo boundsInfo(const SelfCollisionStageCreateInfo& info) {
  return {.cloths = info.cloths, .particleCount = info.particleCount, .framesInFlight = info.framesInFlight};
}

Result<MemoryRequirements> SelfCollisionStage::memoryRequirements(const Context& context,
                                                                  const SelfCollisionStageCreateInfo& info) {
  VKC_TRY(checkCreateInfo(detail::Internals::of(context), info));
  auto fused = takesFusedPath(detail::Internals::of(context), context, info);
  if (!fused) return fused.error();
  const detail::SelfLayout layout = detail::makeSelfLayout(info.cloths, info.subsets);
  MemoryRequirements need = detail::requirementsOf(Impl::plan(layout, info.restPositions), info.framesInFlight);
  auto bounds = BoundsStage::memoryRequirements(context, boundsInfo(info));
  if (!bounds) return bounds.error();
  detail::addRequirements(need, *bounds);
  if (!layout.itemParticles.empty() && !*fused) {
    auto sort = RadixSortStage::memoryRequirements(
        context, {.maxCount = static_cast<uint32_t>(layout.itemParticles.size()), .framesInFlight = info.framesInFlight});
    if (!sort) return sort.error();
    detail::addRequirements(need, *sort);
  }
  return need;
}

Result<std::unique_ptr<SelfCollisionStage>> SelfCollisionStage::create(Context& context,
                                                                       const SelfCollisionStageCreateInfo& info) {
  detail::ContextImpl& ctx = detail::Internals::of(context);
  VKC_TRY(checkCreateInfo(ctx, info));
  auto fused = takesFusedPath(ctx, context, info);
  if (!fused) return fused.error();
  auto impl = std::make_unique<Impl>(ctx);
  impl->fused = *fused;
  impl->cloths.assign(info.cloths.begin(), info.cloths.end());
  impl->particleCount = info.particleCount;
  for (const auto& s : info.subsets) impl->subsets.emplace_back(s.begin(), s.end());
  impl->useRest = info.restPositions;
  impl->frames = info.framesInFlight;
  impl->layout = detail::makeSelfLayout(info.cloths, info.subsets);
  impl->itemCount = static_cast<uint32_t>(impl->layout.itemParticles.size());
  const uint32_t n = impl->itemCount;

  auto boundsStage = BoundsStage::create(context, boundsInfo(info));
  if (!boundsStage) return boundsStage.error();
  impl->bounds = std::move(boundsStage.value());
  VKC_TRY(detail::getPassPipelines(ctx, "self_collision", gpu::kSelfBindingCount, sizeof(gpu::SelfPush),
                                    std::span(impl->pipelines, gpu::kSelfPassFusedSort)));
  if (impl->fused) {
    auto p = ctx.pipelines->get({"self_collision", gpu::kSelfBindingCount, sizeof(gpu::SelfPush),
                                 {gpu::kSelfPassFusedSort, fusedSelfCollisionCapacity(context)}});
    if (!p) return p.error();
    impl->pipelines[gpu::kSelfPassFusedSort] = *p;
  }
  if (n > 0 && !impl->fused) {
    auto sortStage = RadixSortStage::create(context, {.maxCount = n, .framesInFlight = info.framesInFlight});
    if (!sortStage) return sortStage.error();
    impl->sort = std::move(sortStage.value());
  }
  VKC_TRY(impl->buffers.create(ctx, Impl::plan(impl->layout, impl->useRest), info.framesInFlight));
  impl->upload.write(impl->buffers, Impl::kStaging, Impl::tables(impl->layout));
  VKC_TRY(impl->queries.create(64));
  return std::unique_ptr<SelfCollisionStage>(new SelfCollisionStage(std::move(impl)));
}

Status SelfCollisionStage::recordUpload(VkCommandBuffer commandBuffer) {
  Impl& s = *impl_;
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "SelfCollisionStage", "recordUpload"));
  s.upload.record(s.ctx, commandBuffer);
  VKC_TRY(s.bounds->recordUpload(commandBuffer));
  if (s.sort) VKC_TRY(s.sort->recordUpload(commandBuffer));
  return {};
}

// record()'s checks of `info`; `parts` and `rest` get the ranges the passes bind. false with no error:
// nothing to record (no self-colliding particles).
static Result<bool> checkRecordInfo(const SelfCollisionStage::Impl& s, const SelfCollisionRecordInfo& info,
                                    BufferRange& parts, BufferRange& rest) {
  VKC_TRY(detail::validateSelfSettings(info.settings, "SelfCollisionRecordInfo"));
  VKC_TRY(detail::checkFrame(info.frame, s.frames, "SelfCollisionRecordInfo"));
  if (s.itemCount == 0) return false;
  const VkDeviceSize bytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
  parts = info.particles;
  rest = info.restPositions;
  VKC_TRY(detail::checkBufferRange(s.ctx, parts, "SelfCollisionRecordInfo", "particles", bytes));
  parts.size = bytes;
  if (s.useRest) {
    VKC_TRY(detail::checkBufferRange(s.ctx, rest, "SelfCollisionRecordInfo", "restPositions", bytes));
    rest.size = bytes;
  }
  return true;
}

Status SelfCollisionStage::record(VkCommandBuffer commandBuffer, const SelfCollisionRecordInfo& info) {
  Impl& s = *impl_;
  s.lastStats = {};
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "SelfCollisionStage"));
  BufferRange parts, rest;
  auto any = checkRecordInfo(s, info, parts, rest);
  if (!any) return any.error();
  if (!*any) return {};
  return s.recordValidated(commandBuffer, parts, rest, info.settings, info.frame, info.sync, VK_NULL_HANDLE, false);
}

Result<std::vector<uint64_t>> detail::selfCollisionWrites(SelfCollisionStage& stage, const SelfCollisionRecordInfo& info) {
  const SelfCollisionStage::Impl& s = Internals::of(stage);
  BufferRange parts, rest;
  auto any = checkRecordInfo(s, info, parts, rest);
  if (!any) return any.error();
  std::vector<uint64_t> written;
  if (!*any) return written;
  const Recorder rec = s.makeRecorder(parts, rest, info.settings, info.frame, false);
  for (const Pass& p : rec.passes()) {
    for (const BufferUse& u : usesOf(p)) {
      if (u.access == Access::kWrite || u.access == Access::kReadWrite) written.push_back(u.buffer);
    }
  }
  std::sort(written.begin(), written.end());
  written.erase(std::unique(written.begin(), written.end()), written.end());
  return written;
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
  s.lastStats = {};
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
  VKC_TRY(alloc.ensureBuffer(s.runUpload, bytes + restBytes, MemoryUsage::kUpload));
  VKC_TRY(alloc.ensureBuffer(s.readback, bytes + 3 * slotWords, MemoryUsage::kReadback));
  if (debug != nullptr) VKC_TRY(alloc.ensureBuffer(s.debug, slotWords, MemoryUsage::kDeviceLocal));
  std::memcpy(s.runUpload.mapped(), input.particles.data(), bytes);
  if (s.useRest) std::memcpy(static_cast<char*>(s.runUpload.mapped()) + bytes, input.restPositions.data(), bytes);
  const RecordSync sync = detail::copyInCopyOutSync();
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    VkBufferCopy region{0, 0, bytes};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.runUpload.handle(), s.particles.handle(), 1, &region);
    if (s.useRest) {
      region.srcOffset = bytes;
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.runUpload.handle(), s.rest.handle(), 1, &region);
    }
    VKC_TRY(s.recordValidated(cmd, {s.particles.handle(), 0, bytes}, {s.rest.handle(), 0, bytes}, input.settings, 0,
                              sync, s.queries, debug != nullptr));
    region = {0, 0, bytes};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.particles.handle(), s.readback.handle(), 1, &region);
    if (debug != nullptr) {
      const VkBufferCopy k{0, bytes, slotWords}, v{0, bytes + slotWords, slotWords}, c{0, bytes + 2 * slotWords, slotWords};
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.buffers.get(Impl::kKeys, 0).handle(), s.readback.handle(), 1, &k);
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.buffers.get(Impl::kValues, 0).handle(), s.readback.handle(), 1, &v);
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
  // Each slot's first entry in the list: copied in by the same submission (the first one is done, so
  // the staging buffer is free).
  VKC_TRY(alloc.ensureBuffer(s.runUpload, slotWords, MemoryUsage::kUpload));
  std::memcpy(s.runUpload.mapped(), offsets.data(), slotWords);
  gpu::SelfPush push = s.pushFor(input.settings, false);
  push.debugBase = n;
  detail::Recorder rec(s.ctx);
  rec.add(s.selfPass(gpu::kSelfPassPairs, push, {s.particles.handle(), 0, bytes},
                     s.useRest ? BufferRange{s.rest.handle(), 0, bytes} : s.dummy(), {s.debug.handle(), 0, debugBytes}, 0));
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    const VkBufferCopy in{0, 0, slotWords};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.runUpload.handle(), s.debug.handle(), 1, &in);
    VKC_TRY(rec.record(cmd, sync));  // (sync: the copy above is written before the pass reads)
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
  SelfCollisionStageCreateInfo ci;
  ci.cloths = input.cloths;
  ci.particleCount = static_cast<uint32_t>(input.particles.size());
  ci.subsets = input.subsets;
  ci.restPositions = !input.restPositions.empty();
  auto stage = SelfCollisionStage::create(*context, ci);
  if (!stage) return stage.error();
  return (*stage)->run(input, debug);
}

}  // namespace vkc
