// Inter collision on Vulkan: the bounds stage's passes, then shaders/inter_collision.comp (broad
// phase, marking with a two-level compaction, narrow phase over the marked particles) and the radix
// sort stage, all on one Recorder so that every barrier comes from the declared buffer uses. The
// marked count never leaves the GPU: the passes over marked particles are dispatched indirectly from
// InterState (and the sort reads its count from there). The cloth table (ranges, filters, tiles, and
// the step's transforms) and the settings travel with each record(): the table by vkCmdUpdateBuffer
// into the frame's own copy, the settings in push constants; create() never touches a queue.
//
// Fused path (InterCollisionPath::kFused): each narrow-phase iteration is one workgroup (keys, a
// bitonic sort in shared memory, gather, apply) instead of keys + radix sort + gather + apply. The
// marked count is only known on the GPU, so the host decides from the layout: when all the cloths'
// particles fit the shared sort, the marked ones do.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "bounds_stage.h"
#include "buffer_check.h"
#include "context_impl.h"
#include "inter_collision_stage.h"
#include "radix_sort_stage.h"
#include "recorder.h"
#include "scene/inter_collision.h"
#include "shared/inter_collision.h"
#include "shared/inter_collision_passes.h"
#include "stage_common.h"
#include "util/try.h"
#include "vkcollide/bounds.h"
#include "vkcollide/inter_collision.h"
#include "vkcollide/radix_sort.h"

namespace vkc {

using detail::Buffer;
using detail::MemoryUsage;

struct InterCollisionStage::Impl {
  // The stage's buffers (StageBuffers ids), all per frame in flight: the cloth table is written by
  // each record(), the rest is the passes' scratch. (No static table of its own: the embedded bounds
  // stage has one.)
  enum : uint32_t {
    kClothTable, kWorld, kSorted, kPartners, kState, kTiles, kMarked, kKeys, kValues, kDelta, kContacts, kBufferCount
  };

  // What one record() brings: the particle range, the frame and the settings.
  struct Step {
    BufferRange parts;
    uint32_t frame = 0;
    InterCollisionSettings settings;
  };

  // Sizes derived from the create info alone (create() and memoryRequirements()).
  struct Sizes {
    uint32_t capacity = 1;       // marked slots (every particle may be marked)
    uint64_t partnerSlots = 1;
    bool fused = false;          // InterCollisionPath::kFused: no radix sort, no key / value buffers
  };

  detail::ContextImpl& ctx;
  std::vector<InterClothDesc> cloths;         // the ranges (transforms come with each step)
  std::vector<InterCollisionFilter> filters;
  std::vector<gpu::InterCloth> table;         // ranges, filters, tiles; each step fills in the transforms
  uint32_t particleCount = 0;
  uint32_t tileCount = 0;
  uint32_t capacity = 1;
  uint64_t partnerSlots = 1;
  uint32_t frames = 1;
  bool fused = false;
  std::unique_ptr<BoundsStage> bounds;
  std::vector<std::unique_ptr<RadixSortStage>> sorts;  // general path: one per frame in flight (each has its scratch)
  const detail::Pipeline* pipes[gpu::kInterPassCount] = {};
  detail::StageBuffers buffers;
  Buffer particles, upload, readback;  // convenience path, made on first use
  detail::TimestampPool queries{ctx};
  uint32_t queryCount = 0;
  std::vector<PassTiming> timings;
  RecordStats lastStats;  // of the last record() or run()

  explicit Impl(detail::ContextImpl& c) : ctx(c) {}

  // Every buffer of a stage (memoryRequirements() and create() both use this). The sizes do not
  // depend on the settings: iterations only repeat passes over the same scratch.
  static std::array<detail::BufferSpec, kBufferCount> plan(uint64_t clothCount, uint32_t tiles, const Sizes& z) {
    using detail::BufferSpec;
    const VkDeviceSize n = std::max<VkDeviceSize>(clothCount, 1), cap = z.capacity;
    std::array<BufferSpec, kBufferCount> p{};
    p[kClothTable] = BufferSpec{n * sizeof(gpu::InterCloth), MemoryUsage::kDeviceLocal, true};
    p[kWorld] = BufferSpec{n * sizeof(gpu::InterClothWorld), MemoryUsage::kDeviceLocal, true};
    p[kSorted] = BufferSpec{2 * n * sizeof(uint32_t), MemoryUsage::kDeviceLocal, true};
    p[kPartners] = BufferSpec{z.partnerSlots * sizeof(uint32_t), MemoryUsage::kDeviceLocal, true};
    p[kState] = BufferSpec{sizeof(gpu::InterState), MemoryUsage::kDeviceLocal, true, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
    p[kTiles] = BufferSpec{2 * std::max<VkDeviceSize>(tiles, 1) * sizeof(uint32_t), MemoryUsage::kDeviceLocal, true};
    p[kMarked] = BufferSpec{cap * sizeof(gpu::InterMarked), MemoryUsage::kDeviceLocal, true};
    const VkDeviceSize sorted = z.fused ? 1 : cap;  // the fused pass sorts in shared memory
    p[kKeys] = BufferSpec{sorted * sizeof(uint32_t), MemoryUsage::kDeviceLocal, true};
    p[kValues] = BufferSpec{sorted * sizeof(uint32_t), MemoryUsage::kDeviceLocal, true};
    p[kDelta] = BufferSpec{2 * cap * sizeof(gpu::vec4), MemoryUsage::kDeviceLocal, true};
    p[kContacts] = BufferSpec{cap * sizeof(uint32_t), MemoryUsage::kDeviceLocal, true};
    return p;
  }

  // The stage's cloth table with a step's transforms (validated) filled in.
  std::vector<gpu::InterCloth> stepTable(std::span<const InterClothDesc> step) const {
    std::vector<gpu::InterCloth> t = table;
    for (size_t c = 0; c < t.size(); ++c) {
      const InterClothDesc& d = step[c];
      t[c].rotation = gpu::vec4(d.rotation.x, d.rotation.y, d.rotation.z, d.rotation.w);
      t[c].translation = gpu::vec4(d.translation.x, d.translation.y, d.translation.z, 0.0f);
    }
    return t;
  }

  // Records the copy of a step's cloth table into the frame's table (after earlier compute reads of
  // it) and adds the copy to `sync`'s sources, so that the Recorder's opening barrier orders it
  // before the passes.
  void recordTable(VkCommandBuffer cmd, uint32_t frame, std::span<const InterClothDesc> step, RecordSync& sync,
                   RecordStats& stats) const {
    const std::vector<gpu::InterCloth> t = stepTable(step);
    detail::recordUpdate(ctx, cmd, buffers.get(kClothTable, frame).handle(), t.data(), t.size() * sizeof(gpu::InterCloth),
                         sync, stats);
  }

  // The pass `kind` over the step's particle range and frame, at its declared access.
  detail::Pass pass(uint32_t kind, const Step& step, uint32_t firstIteration = 0) const {
    const VkDeviceSize clothCount = table.size();
    const uint32_t f = step.frame;
    const BufferRange ranges[gpu::kInterBindingCount] = {
        step.parts,
        {buffers.get(kClothTable, f).handle(), 0, clothCount * sizeof(gpu::InterCloth)},
        bounds->outputBuffer(f),
        {buffers.get(kWorld, f).handle(), 0, clothCount * sizeof(gpu::InterClothWorld)},
        buffers.range(kSorted, f),
        buffers.range(kPartners, f),
        buffers.range(kState, f),
        buffers.range(kTiles, f),
        buffers.range(kMarked, f),
        buffers.range(kKeys, f),
        buffers.range(kValues, f),
        buffers.range(kDelta, f),
        buffers.range(kContacts, f),
    };
    detail::Pass p = detail::passFromDecl(gpu::kInterPasses[kind], pipes[kind], ranges);
    const gpu::InterPush push{static_cast<uint32_t>(clothCount), tileCount, particleCount, capacity,
                              step.settings.distance, step.settings.stiffness, firstIteration, 0u};
    p.setPush(push);
    return p;
  }

  detail::Pass indirectPass(uint32_t kind, const Step& step, uint32_t firstIteration = 0) const {
    detail::Pass p = pass(kind, step, firstIteration);
    p.indirect = BufferRange{buffers.get(kState, step.frame).handle(), offsetof(gpu::InterState, dispatchX),
                             sizeof(VkDispatchIndirectCommand)};
    return p;
  }

  // Every pass of one step over the validated particle range step.parts.
  void appendPasses(detail::Recorder& rec, const Step& step) const {
    const BufferRange& parts = step.parts;
    detail::appendBoundsPasses(*bounds, rec, parts, parts, false, step.frame);
    detail::Pass broad = pass(gpu::kInterPassBroad, step);
    broad.groupCount = 1;
    rec.add(std::move(broad));
    if (tileCount > 0) {
      detail::Pass count = pass(gpu::kInterPassMarkCount, step);
      count.groupCount = tileCount;
      rec.add(std::move(count));
    }
    detail::Pass scan = pass(gpu::kInterPassMarkScan, step);
    scan.groupCount = 1;
    rec.add(std::move(scan));
    if (tileCount > 0) {
      detail::Pass write = pass(gpu::kInterPassMarkWrite, step);
      write.groupCount = tileCount;
      rec.add(std::move(write));
    }
    if (fused) {
      for (uint32_t it = 0; it < step.settings.iterations; ++it) {
        detail::Pass p = pass(gpu::kInterPassFused, step, it == 0 ? 1u : 0u);
        p.groupCount = 1;
        rec.add(std::move(p));
      }
      rec.add(indirectPass(gpu::kInterPassWriteBack, step));
      return;
    }
    const BufferRange countRange{buffers.get(kState, step.frame).handle(), offsetof(gpu::InterState, markedCount),
                                 sizeof(uint32_t)};
    RadixSortStage& sort = *sorts[step.frame];
    for (uint32_t it = 0; it < step.settings.iterations; ++it) {
      rec.add(indirectPass(gpu::kInterPassKeys, step));
      detail::appendRadixSortPassesGpuCount(sort, rec, buffers.range(kKeys, step.frame),
                                            buffers.range(kValues, step.frame), countRange, capacity,
                                            gpu::kInterKeyBits, 0);
      rec.add(indirectPass(gpu::kInterPassGather, step, it == 0 ? 1u : 0u));
      rec.add(indirectPass(gpu::kInterPassApply, step));
    }
    rec.add(indirectPass(gpu::kInterPassWriteBack, step));
  }
};

InterCollisionStage::InterCollisionStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
InterCollisionStage::~InterCollisionStage() = default;

// A bound on the loop iterations of one invocation of the fused pass over `m` marked particles (all
// its loops together, as llvmpipe counts them, a vector of lanes iterating while any lane does; see
// kLlvmpipeLoopLimit): the keys, the bitonic sort (with the search of its width), and per slot of the
// invocation the slot loop, the gather's nine columns (two gallops and a binary search of at most
// log2(m) + 1 steps each, a scan of at most m + 1 steps: the lanes of a vector scan different
// columns) and the apply.
static uint64_t fusedLoopTrips(uint64_t m) {
  const uint64_t G = gpu::kInterGroupSize;
  const detail::BitonicTrips sort = detail::bitonicSortTrips(m, G);
  uint64_t log2 = 0;
  while ((uint64_t{1} << log2) < m) ++log2;
  const uint64_t perSlot = 1 + 9 * (1 + 3 * (log2 + 1) + m + 1) + 1;
  return (sort.width + G - 1) / G + sort.trips + (m + G - 1) / G * perSlot;
}

uint32_t fusedInterCollisionCapacity(const Context& context) {
  const detail::ContextImpl& ctx = detail::Internals::of(context);
  uint32_t capacity = detail::fusedSortCapacity(ctx, gpu::kInterSharedBytes, gpu::kSelfFusedMinCapacity,
                                                gpu::kSelfFusedMaxCapacity);
  if (detail::limitsLoopIterations(ctx)) {
    while (capacity >= gpu::kSelfFusedMinCapacity && fusedLoopTrips(capacity) > detail::kLlvmpipeLoopLimit) capacity /= 2;
    if (capacity < gpu::kSelfFusedMinCapacity) capacity = 0;
  }
  return capacity;
}

// Whether the stage takes the fused path (the rule of InterCollisionPath::kAuto); an error for
// kFused when the cloths' particles do not fit, or for a path that is not one of the enum's.
static Result<bool> takesFusedPath(const detail::ContextImpl& ctx, const Context& context,
                                   const InterCollisionStageCreateInfo& info) {
  VKC_TRY(detail::checkPathValue(info.path, "InterCollisionStageCreateInfo"));
  if (info.path == InterCollisionPath::kGeneral) return false;
  const uint32_t capacity = fusedInterCollisionCapacity(context);
  VKC_TRY(detail::checkFusedSortFits(ctx, info.path, capacity, "InterCollisionStageCreateInfo"));
  if (capacity == 0) return false;  // (kAuto)
  uint64_t particles = 0;  // every marked particle is a particle of a cloth
  for (const InterClothDesc& c : info.cloths) particles += c.range.count;
  if (particles <= capacity) return true;
  if (info.path == InterCollisionPath::kAuto) return false;
  return Error{ErrorCode::kLimitExceeded, "InterCollisionStageCreateInfo::cloths hold " + std::to_string(particles) +
                                              " particles in all; path kFused takes at most " +
                                              std::to_string(capacity) + " on device '" + ctx.info.name +
                                              "' (fusedInterCollisionCapacity); use kAuto or kGeneral"};
}

// The checks create() and memoryRequirements() share: the description and the device's limits.
static Result<InterCollisionStage::Impl::Sizes> checkCreateInfo(const detail::ContextImpl& ctx, const Context& context,
                                                               const InterCollisionStageCreateInfo& info) {
  VKC_TRY(detail::validateInterLayout(info.cloths, info.filters, info.particleCount, "InterCollisionStageCreateInfo"));
  VKC_TRY(detail::checkFramesInFlight(info.framesInFlight, "InterCollisionStageCreateInfo"));
  InterCollisionStage::Impl::Sizes z;
  const uint64_t maxRange = ctx.info.maxStorageBufferRange;
  const uint64_t n = info.cloths.size();
  z.partnerSlots = std::max<uint64_t>(1, n * (n > 0 ? n - 1 : 0));
  if (z.partnerSlots * sizeof(uint32_t) > maxRange) {
    return Error{ErrorCode::kLimitExceeded, "InterCollisionStageCreateInfo::cloths: " + std::to_string(n) +
                                                " cloths need " + std::to_string(z.partnerSlots * 4) +
                                                " bytes of partner slots; the device allows maxStorageBufferRange = " +
                                                std::to_string(maxRange)};
  }
  z.capacity = std::max<uint32_t>(1, info.particleCount);
  if (uint64_t{z.capacity} * 2 * sizeof(gpu::vec4) > maxRange) {
    return Error{ErrorCode::kLimitExceeded, "InterCollisionStageCreateInfo::particleCount " +
                                                std::to_string(info.particleCount) +
                                                " is too large: the narrow phase needs 32 bytes per particle in one "
                                                "binding; the device allows maxStorageBufferRange = " +
                                                std::to_string(maxRange)};
  }
  if ((z.capacity + gpu::kInterGroupSize - 1) / gpu::kInterGroupSize > ctx.info.maxComputeWorkGroupCount[0]) {
    return Error{ErrorCode::kLimitExceeded, "InterCollisionStageCreateInfo::particleCount " +
                                                std::to_string(info.particleCount) +
                                                " exceeds what one indirect dispatch (maxComputeWorkGroupCount[0] = " +
                                                std::to_string(ctx.info.maxComputeWorkGroupCount[0]) + ") can cover"};
  }
  auto fused = takesFusedPath(ctx, context, info);
  if (!fused) return fused.error();
  z.fused = *fused;
  return z;
}

static BoundsStageCreateInfo boundsInfo(const InterCollisionStageCreateInfo& info, std::span<const ClothRange> ranges) {
  BoundsStageCreateInfo bci;
  bci.cloths = ranges;
  bci.particleCount = info.particleCount;
  bci.framesInFlight = info.framesInFlight;
  return bci;
}

Result<MemoryRequirements> InterCollisionStage::memoryRequirements(const Context& context,
                                                                   const InterCollisionStageCreateInfo& info) {
  const detail::ContextImpl& ctx = detail::Internals::of(context);
  auto sizes = checkCreateInfo(ctx, context, info);
  if (!sizes) return sizes.error();
  const std::vector<ClothRange> ranges = detail::interClothRanges(info.cloths);
  auto need = BoundsStage::memoryRequirements(context, boundsInfo(info, ranges));
  if (!need) return need.error();
  MemoryRequirements total = *need;
  if (!sizes->fused) detail::addRequirements(total, detail::radixSortRequirements(sizes->capacity), info.framesInFlight);
  std::vector<gpu::InterCloth> table;
  const uint32_t tiles = detail::makeInterClothTable(info.cloths, info.filters, table);
  detail::addRequirements(total, detail::requirementsOf(Impl::plan(info.cloths.size(), tiles, *sizes), info.framesInFlight));
  return total;
}

Result<std::unique_ptr<InterCollisionStage>> InterCollisionStage::create(Context& context,
                                                                         const InterCollisionStageCreateInfo& info) {
  detail::ContextImpl& ctx = detail::Internals::of(context);
  auto sizes = checkCreateInfo(ctx, context, info);
  if (!sizes) return sizes.error();
  auto impl = std::make_unique<Impl>(ctx);
  impl->capacity = sizes->capacity;
  impl->partnerSlots = sizes->partnerSlots;
  impl->frames = info.framesInFlight;
  impl->fused = sizes->fused;
  impl->cloths.assign(info.cloths.begin(), info.cloths.end());
  impl->filters.assign(info.filters.begin(), info.filters.end());
  impl->particleCount = info.particleCount;
  impl->tileCount = detail::makeInterClothTable(impl->cloths, impl->filters, impl->table);

  const std::vector<ClothRange> ranges = detail::interClothRanges(info.cloths);
  auto bounds = BoundsStage::create(context, boundsInfo(info, ranges));
  if (!bounds) return bounds.error();
  impl->bounds = std::move(bounds.value());
  for (uint32_t f = 0; f < impl->frames && !impl->fused; ++f) {
    auto sort = RadixSortStage::create(context, RadixSortStageCreateInfo{impl->capacity});
    if (!sort) return sort.error();
    impl->sorts.push_back(std::move(sort.value()));
  }

  VKC_TRY(detail::getPassPipelines(ctx, "inter_collision", gpu::kInterBindingCount, sizeof(gpu::InterPush),
                                    std::span(impl->pipes, gpu::kInterPassFused)));
  if (impl->fused) {
    auto p = ctx.pipelines->get({"inter_collision", gpu::kInterBindingCount, sizeof(gpu::InterPush),
                                 {gpu::kInterPassFused, fusedInterCollisionCapacity(context)}});
    if (!p) return p.error();
    impl->pipes[gpu::kInterPassFused] = *p;
  }
  VKC_TRY(impl->buffers.create(ctx, Impl::plan(impl->table.size(), impl->tileCount, *sizes), impl->frames));
  impl->queryCount = 2 * (8 + 4 * kMaxInterIterations + 8 * 4 * kMaxInterIterations);
  VKC_TRY(impl->queries.create(impl->queryCount));
  return std::unique_ptr<InterCollisionStage>(new InterCollisionStage(std::move(impl)));
}

const std::vector<PassTiming>& InterCollisionStage::timings() const { return impl_->timings; }
const RecordStats& InterCollisionStage::lastRecordStats() const { return impl_->lastStats; }
InterCollisionPath InterCollisionStage::path() const {
  return impl_->fused ? InterCollisionPath::kFused : InterCollisionPath::kGeneral;
}

Status InterCollisionStage::recordUpload(VkCommandBuffer commandBuffer) {
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "InterCollisionStage", "recordUpload"));
  return impl_->bounds->recordUpload(commandBuffer);
}

// Validates the record info and returns the recorder for one step; empty without cloths or particles.
static Result<detail::Recorder> recorderFor(InterCollisionStage::Impl& s, const InterCollisionRecordInfo& info) {
  VKC_TRY(detail::checkFrame(info.frame, s.frames, "InterCollisionRecordInfo"));
  VKC_TRY(detail::validateInterStepCloths(info.cloths, s.cloths, "InterCollisionRecordInfo::"));
  VKC_TRY(detail::validateInterSettings(info.settings, "InterCollisionRecordInfo::settings"));
  detail::Recorder rec(s.ctx);
  if (s.table.empty() || s.particleCount == 0) return rec;
  const VkDeviceSize bytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
  VKC_TRY(detail::checkBufferRange(s.ctx, info.particles, "InterCollisionRecordInfo", "particles", bytes));
  BufferRange parts = info.particles;
  parts.size = bytes;
  s.appendPasses(rec, {parts, info.frame, info.settings});
  return rec;
}

Status InterCollisionStage::record(VkCommandBuffer commandBuffer, const InterCollisionRecordInfo& info) {
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "InterCollisionStage"));
  Impl& s = *impl_;
  s.lastStats = {};
  auto rec = recorderFor(s, info);
  if (!rec) return rec.error();
  if (rec->passes().empty()) return {};
  RecordSync sync = info.sync;
  s.recordTable(commandBuffer, info.frame, info.cloths, sync, s.lastStats);
  return rec->record(commandBuffer, sync, VK_NULL_HANDLE, &s.lastStats);
}

Result<std::vector<detail::PlannedPass>> detail::interCollisionBarrierPlan(InterCollisionStage& stage,
                                                                           const InterCollisionRecordInfo& info) {
  auto rec = recorderFor(detail::Internals::of(stage), info);
  if (!rec) return rec.error();
  const std::vector<BarrierDecision> plan = rec->plan();
  std::vector<PlannedPass> out;
  for (size_t i = 0; i < plan.size(); ++i) {
    const Pass& p = rec->passes()[i];
    PlannedPass planned{p.name, p.indirect.buffer != VK_NULL_HANDLE, plan[i], {}};
    for (const Binding& b : p.bindings) {
      if (b.access == Access::kWrite || b.access == Access::kReadWrite) planned.written.push_back(b.range.buffer);
    }
    out.push_back(std::move(planned));
  }
  return out;
}

Status InterCollisionStage::run(const InterCollisionInput& input, InterCollisionDebug* debug) {
  Impl& s = *impl_;
  VKC_TRY(validate(input));
  auto sameRange = [](const InterClothDesc& a, const InterClothDesc& b) {
    return a.range.first == b.range.first && a.range.count == b.range.count;
  };
  auto sameFilter = [](const InterCollisionFilter& a, const InterCollisionFilter& b) {
    return a.cloth == b.cloth && a.group == b.group && a.mask == b.mask;
  };
  if (input.particles.size() != s.particleCount ||
      !std::equal(input.cloths.begin(), input.cloths.end(), s.cloths.begin(), s.cloths.end(), sameRange) ||
      !std::equal(input.filters.begin(), input.filters.end(), s.filters.begin(), s.filters.end(), sameFilter)) {
    return Error{ErrorCode::kInvalidArgument,
                 "InterCollisionStage::run: the input's cloth ranges, filters or particle count differ from the stage's"};
  }
  InterCollisionDebug r;
  r.contacts.assign(input.particles.size(), 0);
  const float inf = std::numeric_limits<float>::infinity();
  r.gridBounds.lo = Float4{inf, inf, inf, 0};
  r.gridBounds.hi = Float4{-inf, -inf, -inf, 0};
  s.lastStats = {};
  if (s.table.empty() || s.particleCount == 0) {
    s.timings.clear();
    if (debug != nullptr) *debug = std::move(r);
    return {};
  }
  auto& alloc = *s.ctx.allocator;
  const VkDeviceSize bytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
  const VkDeviceSize worldBytes = s.table.size() * sizeof(gpu::InterClothWorld);
  const VkDeviceSize partnerBytes = s.partnerSlots * sizeof(uint32_t);
  const VkDeviceSize markedBytes = VkDeviceSize{s.capacity} * sizeof(gpu::InterMarked);
  const VkDeviceSize contactBytes = VkDeviceSize{s.capacity} * sizeof(uint32_t);
  // Readback layout: particles | state | world | partners | marked | contacts.
  const VkDeviceSize oState = bytes, oWorld = oState + sizeof(gpu::InterState), oPartners = oWorld + worldBytes,
                     oMarked = oPartners + partnerBytes, oContacts = oMarked + markedBytes,
                     total = debug != nullptr ? oContacts + contactBytes : bytes;
  VKC_TRY(alloc.ensureBuffer(s.particles, bytes, MemoryUsage::kDeviceLocal));
  VKC_TRY(alloc.ensureBuffer(s.upload, bytes, MemoryUsage::kUpload));
  VKC_TRY(alloc.ensureBuffer(s.readback, total, MemoryUsage::kReadback));
  std::memcpy(s.upload.mapped(), input.particles.data(), bytes);
  detail::Recorder rec(s.ctx);
  s.appendPasses(rec, {BufferRange{s.particles.handle(), 0, bytes}, 0, input.settings});
  const bool timed = 2 * rec.passes().size() <= s.queryCount;
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    const VkBufferCopy up{0, 0, bytes};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.upload.handle(), s.particles.handle(), 1, &up);
    RecordSync sync = detail::copyInCopyOutSync();
    s.recordTable(cmd, 0, input.cloths, sync, s.lastStats);
    VKC_TRY(rec.record(cmd, sync, timed ? VkQueryPool{s.queries} : VK_NULL_HANDLE, &s.lastStats));
    auto copy = [&](uint32_t id, VkDeviceSize dst, VkDeviceSize size) {
      const VkBufferCopy region{0, dst, size};
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.buffers.get(id, 0).handle(), s.readback.handle(), 1, &region);
    };
    const VkBufferCopy region{0, 0, bytes};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.particles.handle(), s.readback.handle(), 1, &region);
    if (debug != nullptr) {
      copy(Impl::kState, oState, sizeof(gpu::InterState));
      copy(Impl::kWorld, oWorld, worldBytes);
      copy(Impl::kPartners, oPartners, partnerBytes);
      copy(Impl::kMarked, oMarked, markedBytes);
      copy(Impl::kContacts, oContacts, contactBytes);
    }
    return {};
  }));
  // Everything that can fail is done before the outputs are written.
  if (timed) {
    VKC_TRY(detail::storeTimings(rec, s.queries, s.timings));
  } else {
    s.timings.clear();
  }
  const char* base = static_cast<const char*>(s.readback.mapped());
  std::memcpy(input.particles.data(), base, bytes);
  if (debug != nullptr) {
    gpu::InterState st;
    std::memcpy(&st, base + oState, sizeof st);
    std::vector<gpu::InterClothWorld> world(s.table.size());
    std::memcpy(world.data(), base + oWorld, worldBytes);
    std::vector<uint32_t> partners(s.partnerSlots);
    std::memcpy(partners.data(), base + oPartners, partnerBytes);
    for (uint32_t c = 0; c < world.size(); ++c) {
      for (uint32_t k = 0; k < world[c].partnerCount && world[c].partnerOffset + k < partners.size(); ++k) {
        const uint32_t b = partners[world[c].partnerOffset + k];
        if (c < b) r.clothPairs.push_back({c, b});
      }
    }
    std::sort(r.clothPairs.begin(), r.clothPairs.end());
    const uint32_t m = std::min(st.markedCount, s.capacity);
    std::vector<gpu::InterMarked> marked(m);
    std::memcpy(marked.data(), base + oMarked, m * sizeof(gpu::InterMarked));
    std::vector<uint32_t> contacts(m);
    std::memcpy(contacts.data(), base + oContacts, m * sizeof(uint32_t));
    for (uint32_t i = 0; i < m; ++i) {
      r.marked.push_back(marked[i].particle);
      if (marked[i].particle < r.contacts.size()) r.contacts[marked[i].particle] = contacts[i];
    }
    std::sort(r.marked.begin(), r.marked.end());
    r.gridBounds.lo = Float4{st.gridLo.x, st.gridLo.y, st.gridLo.z, 0};
    r.gridBounds.hi = Float4{st.gridHi.x, st.gridHi.y, st.gridHi.z, 0};
    *debug = std::move(r);
  }
  return {};
}

Status collideInter(Backend backend, Context* context, const InterCollisionInput& input, InterCollisionDebug* debug) {
  if (backend != Backend::kVulkan) return collideInterCpu(input, backend, debug);
  if (context == nullptr) return Error{ErrorCode::kInvalidArgument, "collideInter: the Vulkan backend needs a context"};
  VKC_TRY(validate(input));
  InterCollisionStageCreateInfo ci;
  ci.cloths = input.cloths;
  ci.filters = input.filters;
  ci.particleCount = static_cast<uint32_t>(input.particles.size());
  auto stage = InterCollisionStage::create(*context, ci);
  if (!stage) return stage.error();
  return (*stage)->run(input, debug);
}

}  // namespace vkc
