// The bounds stage on Vulkan: two passes of shaders/bounds.comp (tiles, then merge), recorded by the
// Recorder, which derives the barrier between them from their declared buffer uses.
#include <array>
#include <cstring>

#include "bounds_stage.h"
#include "buffer_check.h"
#include "context_impl.h"
#include "recorder.h"
#include "scene/validate.h"
#include "shared/bounds.h"
#include "shared/bounds_passes.h"
#include "stage_common.h"
#include "vkcollide/bounds.h"

namespace vkc {

static_assert(sizeof(Float4) == sizeof(gpu::vec4) && sizeof(Aabb) == sizeof(gpu::Aabb));
static_assert(offsetof(Aabb, hi) == offsetof(gpu::Aabb, hi));

using detail::Access;
using detail::Buffer;
using detail::MemoryUsage;

struct BoundsStage::Impl {
  // The stage's buffers (StageBuffers ids); tile boxes and output are per frame in flight.
  enum : uint32_t { kClothTable, kTileBoxes, kOutput, kDummy, kStaging, kBufferCount };

  detail::ContextImpl& ctx;
  std::vector<ClothRange> cloths;
  std::vector<gpu::ClothRange> table;
  uint32_t particleCount = 0;
  uint32_t tileCount = 0;
  uint32_t frames = 1;
  bool includePrevious = false;
  const detail::Pipeline* tilesPipeline = nullptr;
  const detail::Pipeline* mergePipeline = nullptr;
  detail::StageBuffers buffers;
  mutable detail::TableUpload upload;  // recorded by the first Recorder that records these passes
  // Convenience path (run): device copies of the particles and staging, made on first use.
  Buffer particles, prevParticles, runUpload, readback;
  detail::TimestampPool queries{ctx};
  std::vector<PassTiming> timings;
  RecordStats lastStats;  // of the last record() or run()

  explicit Impl(detail::ContextImpl& c) : ctx(c) {}

  // Every buffer of a stage over `table` (memoryRequirements() and create() both use this).
  static std::array<detail::BufferSpec, kBufferCount> plan(std::span<const gpu::ClothRange> table, uint32_t tiles) {
    std::array<detail::BufferSpec, kBufferCount> p{};
    p[kClothTable] = {table.size() * sizeof(gpu::ClothRange)};
    p[kTileBoxes] = {std::max<VkDeviceSize>(tiles, 1) * sizeof(gpu::BoundsTileBox), MemoryUsage::kDeviceLocal, true};
    p[kOutput] = {table.size() * sizeof(gpu::Aabb), MemoryUsage::kDeviceLocal, true};
    p[kDummy] = {sizeof(gpu::vec4)};
    p[kStaging] = {table.size() * sizeof(gpu::ClothRange), MemoryUsage::kUpload};
    return p;
  }

  BufferRange outputRange(uint32_t frame) const {
    return {buffers.get(kOutput, frame).handle(), 0, table.size() * sizeof(gpu::Aabb)};
  }

  Status checkRange(const BufferRange& r, const char* field, VkDeviceSize needed) const {
    return detail::checkBufferRange(ctx, r, "BoundsRecordInfo", field, needed);
  }

  // Builds the passes for one record. particle/prev ranges are validated by the caller.
  detail::Recorder makeRecorder(const BufferRange& parts, const BufferRange& prev, const BufferRange& boxes,
                                uint32_t frame) const {
    detail::Recorder rec(ctx);
    appendPasses(rec, parts, prev, boxes, includePrevious, frame);
    return rec;
  }

  void appendPasses(detail::Recorder& rec, const BufferRange& parts, const BufferRange& prev, const BufferRange& boxes,
                    bool withPrevious, uint32_t frame) const {
    if (table.empty()) return;
    rec.addUpload(upload);
    const gpu::BoundsPush push{static_cast<uint32_t>(table.size()), tileCount, particleCount, withPrevious ? 1u : 0u};
    const BufferRange tileRange{buffers.get(kTileBoxes, frame).handle(), 0,
                                std::max<VkDeviceSize>(tileCount, 1) * sizeof(gpu::BoundsTileBox)};
    const BufferRange tableRange{buffers.get(kClothTable).handle(), 0, table.size() * sizeof(gpu::ClothRange)};
    const BufferRange dummyRange = buffers.range(kDummy);
    if (tileCount > 0) {
      const BufferRange ranges[] = {parts, withPrevious ? prev : dummyRange, tableRange, tileRange, dummyRange};
      detail::Pass tiles = detail::passFromDecl(gpu::kBoundsPasses[gpu::kBoundsPassTiles], tilesPipeline, ranges);
      tiles.setPush(push);
      tiles.groupCount = tileCount;
      rec.add(std::move(tiles));
    }
    const BufferRange ranges[] = {dummyRange, dummyRange, tableRange, tileRange, boxes};
    detail::Pass merge = detail::passFromDecl(gpu::kBoundsPasses[gpu::kBoundsPassMerge], mergePipeline, ranges);
    merge.setPush(push);
    merge.groupCount = static_cast<uint32_t>(table.size());
    rec.add(std::move(merge));
  }
};

BoundsStage::BoundsStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BoundsStage::~BoundsStage() = default;

// The checks create() and memoryRequirements() share: the description and the device's limits.
static Status checkCreateInfo(const detail::ContextImpl& ctx, const BoundsStageCreateInfo& info) {
  VKC_TRY(detail::validateClothRanges(info.cloths, info.particleCount, "BoundsStageCreateInfo"));
  VKC_TRY(detail::checkFramesInFlight(info.framesInFlight, "BoundsStageCreateInfo"));
  const uint64_t maxRange = ctx.info.maxStorageBufferRange;
  const uint64_t particleBytes = uint64_t{info.particleCount} * sizeof(Float4);
  if (particleBytes > maxRange) {
    return Error{ErrorCode::kLimitExceeded,
                 "BoundsStageCreateInfo::particleCount " + std::to_string(info.particleCount) + " needs " +
                     std::to_string(particleBytes) + " bytes in one storage buffer binding; the device '" +
                     ctx.info.name + "' allows maxStorageBufferRange = " + std::to_string(maxRange) + " bytes (" +
                     std::to_string(maxRange / sizeof(Float4)) + " particles)"};
  }
  if (uint64_t{info.cloths.size()} * sizeof(gpu::Aabb) > maxRange) {
    return Error{ErrorCode::kLimitExceeded, "BoundsStageCreateInfo::cloths: too many cloths for maxStorageBufferRange"};
  }
  return {};
}

Result<MemoryRequirements> BoundsStage::memoryRequirements(const Context& context, const BoundsStageCreateInfo& info) {
  VKC_TRY(checkCreateInfo(detail::Internals::of(context), info));
  std::vector<gpu::ClothRange> table;
  const uint32_t tiles = detail::makeClothTable(info.cloths, table);
  return detail::requirementsOf(Impl::plan(table, tiles), info.framesInFlight);
}

Result<std::unique_ptr<BoundsStage>> BoundsStage::create(Context& context, const BoundsStageCreateInfo& info) {
  detail::ContextImpl& ctx = detail::Internals::of(context);
  VKC_TRY(checkCreateInfo(ctx, info));
  auto impl = std::make_unique<Impl>(ctx);
  impl->cloths.assign(info.cloths.begin(), info.cloths.end());
  impl->particleCount = info.particleCount;
  impl->includePrevious = info.includePrevious;
  impl->frames = info.framesInFlight;
  impl->tileCount = detail::makeClothTable(info.cloths, impl->table);

  static_assert(gpu::kBoundsPassTiles == 0 && gpu::kBoundsPassMerge == 1);
  const detail::Pipeline* passes[2] = {};
  VKC_TRY(detail::getPassPipelines(ctx, "bounds", gpu::kBoundsBindingCount, sizeof(gpu::BoundsPush), passes));
  impl->tilesPipeline = passes[gpu::kBoundsPassTiles];
  impl->mergePipeline = passes[gpu::kBoundsPassMerge];

  VKC_TRY(impl->buffers.create(ctx, Impl::plan(impl->table, impl->tileCount), impl->frames));
  const detail::TableCopy tables[] = {
      {impl->table.data(), impl->table.size() * sizeof(gpu::ClothRange), Impl::kClothTable}};
  impl->upload.write(impl->buffers, Impl::kStaging, tables);
  VKC_TRY(impl->queries.create(4));
  return std::unique_ptr<BoundsStage>(new BoundsStage(std::move(impl)));
}

BufferRange BoundsStage::outputBuffer(uint32_t frame) const {
  return impl_->outputRange(std::min(frame, impl_->frames - 1));
}

const std::vector<PassTiming>& BoundsStage::timings() const { return impl_->timings; }
const RecordStats& BoundsStage::lastRecordStats() const { return impl_->lastStats; }

Status BoundsStage::recordUpload(VkCommandBuffer commandBuffer) {
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "BoundsStage", "recordUpload"));
  impl_->upload.record(impl_->ctx, commandBuffer);
  return {};
}

// Validates the host's buffers and returns the recorder for them; an empty recorder for no cloths.
static Result<detail::Recorder> recorderFor(BoundsStage::Impl& s, const BoundsRecordInfo& info) {
  VKC_TRY(detail::checkFrame(info.frame, s.frames, "BoundsRecordInfo"));
  if (s.table.empty()) return detail::Recorder(s.ctx);  // no cloths: nothing to do
  const VkDeviceSize particleBytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
  BufferRange parts = info.particles, prev = info.prevParticles, boxes = info.boxes;
  if (s.particleCount == 0) {
    parts = s.buffers.range(BoundsStage::Impl::kDummy);
    prev = parts;
  } else {
    VKC_TRY(s.checkRange(parts, "particles", particleBytes));
    parts.size = particleBytes;
    if (s.includePrevious) {
      VKC_TRY(s.checkRange(prev, "prevParticles", particleBytes));
      prev.size = particleBytes;
    }
  }
  const VkDeviceSize boxBytes = s.table.size() * sizeof(gpu::Aabb);
  if (boxes.buffer == VK_NULL_HANDLE) {
    boxes = s.outputRange(info.frame);
  } else {
    VKC_TRY(s.checkRange(boxes, "boxes", boxBytes));
    boxes.size = boxBytes;
  }
  return s.makeRecorder(parts, prev, boxes, info.frame);
}

Status BoundsStage::record(VkCommandBuffer commandBuffer, const BoundsRecordInfo& info) {
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "BoundsStage"));
  return detail::recordPasses(recorderFor(*impl_, info), commandBuffer, info.sync, impl_->lastStats);
}

void detail::appendBoundsPasses(BoundsStage& stage, Recorder& rec, const BufferRange& particles,
                                const BufferRange& prevParticles, bool includePrevious, uint32_t frame) {
  Internals::of(stage).appendPasses(rec, particles, prevParticles, stage.outputBuffer(frame), includePrevious, frame);
}

Result<std::vector<detail::BarrierDecision>> detail::boundsBarrierPlan(BoundsStage& stage, const BoundsRecordInfo& info) {
  auto rec = recorderFor(Internals::of(stage), info);
  if (!rec) return rec.error();
  return rec->plan();
}

Status BoundsStage::run(const BoundsInput& input) {
  Impl& s = *impl_;
  VKC_TRY(validate(input));
  if (input.particles.size() != s.particleCount || input.includePrevious != s.includePrevious ||
      !std::equal(input.cloths.begin(), input.cloths.end(), s.cloths.begin(), s.cloths.end(),
                  [](const ClothRange& a, const ClothRange& b) { return a.first == b.first && a.count == b.count; })) {
    return Error{ErrorCode::kInvalidArgument,
                 "BoundsStage::run: the input's cloths, particle count or includePrevious differ from the stage's"};
  }
  s.lastStats = {};
  if (s.table.empty()) return {};
  auto& alloc = *s.ctx.allocator;
  const VkDeviceSize particleBytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
  const VkDeviceSize uploadBytes = particleBytes * (s.includePrevious ? 2 : 1);
  const VkDeviceSize boxBytes = input.boxes.size() * sizeof(Aabb);
  auto ensure = [&](Buffer& b, VkDeviceSize size, MemoryUsage usage) { return alloc.ensureBuffer(b, size, usage); };
  if (particleBytes > 0) {
    VKC_TRY(ensure(s.particles, particleBytes, MemoryUsage::kDeviceLocal));
    if (s.includePrevious) VKC_TRY(ensure(s.prevParticles, particleBytes, MemoryUsage::kDeviceLocal));
    VKC_TRY(ensure(s.runUpload, uploadBytes, MemoryUsage::kUpload));
    std::memcpy(s.runUpload.mapped(), input.particles.data(), particleBytes);
    if (s.includePrevious) {
      std::memcpy(static_cast<char*>(s.runUpload.mapped()) + particleBytes, input.prevParticles.data(), particleBytes);
    }
  }
  VKC_TRY(ensure(s.readback, boxBytes, MemoryUsage::kReadback));

  const BufferRange dummy = s.buffers.range(Impl::kDummy);
  const BufferRange parts{s.particles.handle(), 0, particleBytes};
  const BufferRange prev{s.prevParticles.handle(), 0, particleBytes};
  const detail::Recorder rec = s.makeRecorder(particleBytes > 0 ? parts : dummy,
                                              s.includePrevious && particleBytes > 0 ? prev : dummy,
                                              s.outputRange(0), 0);
  const RecordSync sync = detail::copyInCopyOutSync();
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    if (particleBytes > 0) {
      VkBufferCopy region{0, 0, particleBytes};
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.runUpload.handle(), s.particles.handle(), 1, &region);
      if (s.includePrevious) {
        region.srcOffset = particleBytes;
        s.ctx.vk.vkCmdCopyBuffer(cmd, s.runUpload.handle(), s.prevParticles.handle(), 1, &region);
      }
    }
    VKC_TRY(rec.record(cmd, sync, s.queries, &s.lastStats));
    const VkBufferCopy region{0, 0, boxBytes};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.buffers.get(Impl::kOutput, 0).handle(), s.readback.handle(), 1, &region);
    return {};
  }));
  std::memcpy(input.boxes.data(), s.readback.mapped(), boxBytes);
  return detail::storeTimings(rec, s.queries, s.timings);
}

Status computeBounds(Backend backend, Context* context, const BoundsInput& input) {
  if (backend != Backend::kVulkan) return computeBoundsCpu(input, backend);
  if (context == nullptr) return Error{ErrorCode::kInvalidArgument, "computeBounds: the Vulkan backend needs a context"};
  VKC_TRY(validate(input));
  BoundsStageCreateInfo ci;
  ci.cloths = input.cloths;
  ci.particleCount = static_cast<uint32_t>(input.particles.size());
  ci.includePrevious = input.includePrevious;
  auto stage = BoundsStage::create(*context, ci);
  if (!stage) return stage.error();
  return (*stage)->run(input);
}

}  // namespace vkc
