// Inter collision on Vulkan: the bounds stage's passes, then shaders/inter_collision.comp (broad
// phase, marking with a two-level compaction, narrow phase over the marked particles) and the radix
// sort stage, all on one Recorder so that every barrier comes from the declared buffer uses. The
// marked count never leaves the GPU: the passes over marked particles are dispatched indirectly from
// InterState (and the sort reads its count from there).
#include <algorithm>
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
  detail::ContextImpl& ctx;
  std::vector<InterClothDesc> cloths;
  std::vector<InterCollisionFilter> filters;
  std::vector<gpu::InterCloth> table;
  InterCollisionSettings settings;
  uint32_t particleCount = 0;
  uint32_t tileCount = 0;
  uint32_t capacity = 1;       // marked slots
  uint64_t partnerSlots = 1;
  std::unique_ptr<BoundsStage> bounds;
  std::unique_ptr<RadixSortStage> sort;
  const detail::Pipeline* pipes[8] = {};
  Buffer clothTable, world, sorted, partners, state, tiles, marked, keys, values, delta, contacts, dummy;
  Buffer particles, upload, readback;  // convenience path
  detail::TimestampPool queries{ctx};
  uint32_t queryCount = 0;
  std::vector<PassTiming> timings;

  explicit Impl(detail::ContextImpl& c) : ctx(c) {}

  // The pass `kind` over the particle range `parts`, at its declared access.
  detail::Pass pass(uint32_t kind, const BufferRange& parts, uint32_t firstIteration = 0) const {
    const VkDeviceSize clothCount = table.size();
    const BufferRange ranges[gpu::kInterBindingCount] = {
        parts,
        {clothTable.handle(), 0, clothCount * sizeof(gpu::InterCloth)},
        bounds->outputBuffer(),
        {world.handle(), 0, clothCount * sizeof(gpu::InterClothWorld)},
        sorted.range(),
        partners.range(),
        state.range(),
        tiles.range(),
        marked.range(),
        keys.range(),
        values.range(),
        delta.range(),
        contacts.range(),
    };
    detail::Pass p = detail::passFromDecl(gpu::kInterPasses[kind], pipes[kind], ranges);
    const gpu::InterPush push{static_cast<uint32_t>(clothCount), tileCount, particleCount, capacity,
                              settings.distance, settings.stiffness, firstIteration, 0u};
    p.setPush(push);
    return p;
  }

  detail::Pass indirectPass(uint32_t kind, const BufferRange& parts, uint32_t firstIteration = 0) const {
    detail::Pass p = pass(kind, parts, firstIteration);
    p.indirect = BufferRange{state.handle(), offsetof(gpu::InterState, dispatchX), sizeof(VkDispatchIndirectCommand)};
    return p;
  }

  // Every pass of one step over the validated particle range `parts`.
  void appendPasses(detail::Recorder& rec, const BufferRange& parts) const {
    detail::appendBoundsPasses(*bounds, rec, parts, parts, false, 0);
    detail::Pass broad = pass(gpu::kInterPassBroad, parts);
    broad.groupCount = 1;
    rec.add(std::move(broad));
    if (tileCount > 0) {
      detail::Pass count = pass(gpu::kInterPassMarkCount, parts);
      count.groupCount = tileCount;
      rec.add(std::move(count));
    }
    detail::Pass scan = pass(gpu::kInterPassMarkScan, parts);
    scan.groupCount = 1;
    rec.add(std::move(scan));
    if (tileCount > 0) {
      detail::Pass write = pass(gpu::kInterPassMarkWrite, parts);
      write.groupCount = tileCount;
      rec.add(std::move(write));
    }
    const BufferRange countRange{state.handle(), offsetof(gpu::InterState, markedCount), sizeof(uint32_t)};
    for (uint32_t it = 0; it < settings.iterations; ++it) {
      rec.add(indirectPass(gpu::kInterPassKeys, parts));
      detail::appendRadixSortPassesGpuCount(*sort, rec, keys.range(), values.range(), countRange, capacity,
                                            gpu::kInterKeyBits, 0);
      rec.add(indirectPass(gpu::kInterPassGather, parts, it == 0 ? 1u : 0u));
      rec.add(indirectPass(gpu::kInterPassApply, parts));
    }
    rec.add(indirectPass(gpu::kInterPassWriteBack, parts));
  }

  Status uploadTable() {
    detail::makeInterClothTable(cloths, filters, table);
    if (table.empty()) return {};
    const detail::ContextImpl::Upload up{table.data(), table.size() * sizeof(gpu::InterCloth), clothTable.handle()};
    return ctx.uploadNow({&up, 1});
  }
};

InterCollisionStage::InterCollisionStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
InterCollisionStage::~InterCollisionStage() = default;

Result<std::unique_ptr<InterCollisionStage>> InterCollisionStage::create(Context& context,
                                                                         const InterCollisionStageCreateInfo& info) {
  detail::ContextImpl& ctx = detail::Internals::of(context);
  VKC_TRY(detail::validateInterLayout(info.cloths, info.filters, info.settings, info.particleCount,
                                      "InterCollisionStageCreateInfo"));
  auto impl = std::make_unique<Impl>(ctx);
  const uint64_t maxRange = ctx.info.maxStorageBufferRange;
  const uint64_t n = info.cloths.size();
  impl->partnerSlots = std::max<uint64_t>(1, n * (n > 0 ? n - 1 : 0));
  if (impl->partnerSlots * sizeof(uint32_t) > maxRange) {
    return Error{ErrorCode::kLimitExceeded, "InterCollisionStageCreateInfo::cloths: " + std::to_string(n) +
                                                " cloths need " + std::to_string(impl->partnerSlots * 4) +
                                                " bytes of partner slots; the device allows maxStorageBufferRange = " +
                                                std::to_string(maxRange)};
  }
  impl->capacity = std::max<uint32_t>(1, info.particleCount);
  if (uint64_t{impl->capacity} * 2 * sizeof(gpu::vec4) > maxRange) {
    return Error{ErrorCode::kLimitExceeded, "InterCollisionStageCreateInfo::particleCount " +
                                                std::to_string(info.particleCount) +
                                                " is too large: the narrow phase needs 32 bytes per particle in one "
                                                "binding; the device allows maxStorageBufferRange = " +
                                                std::to_string(maxRange)};
  }
  if ((impl->capacity + gpu::kInterGroupSize - 1) / gpu::kInterGroupSize > ctx.info.maxComputeWorkGroupCount[0]) {
    return Error{ErrorCode::kLimitExceeded, "InterCollisionStageCreateInfo::particleCount " +
                                                std::to_string(info.particleCount) +
                                                " exceeds what one indirect dispatch (maxComputeWorkGroupCount[0] = " +
                                                std::to_string(ctx.info.maxComputeWorkGroupCount[0]) + ") can cover"};
  }
  impl->cloths.assign(info.cloths.begin(), info.cloths.end());
  impl->filters.assign(info.filters.begin(), info.filters.end());
  impl->settings = info.settings;
  impl->particleCount = info.particleCount;
  impl->tileCount = detail::makeInterClothTable(impl->cloths, impl->filters, impl->table);

  const std::vector<ClothRange> ranges = detail::interClothRanges(info.cloths);
  BoundsStageCreateInfo bci;
  bci.cloths = ranges;
  bci.particleCount = info.particleCount;
  auto bounds = BoundsStage::create(context, bci);
  if (!bounds) return bounds.error();
  impl->bounds = std::move(bounds.value());
  auto sort = RadixSortStage::create(context, RadixSortStageCreateInfo{impl->capacity});
  if (!sort) return sort.error();
  impl->sort = std::move(sort.value());

  VKC_TRY(detail::getPassPipelines(ctx, "inter_collision", gpu::kInterBindingCount, sizeof(gpu::InterPush),
                                    impl->pipes));
  auto make = [&](Buffer& b, VkDeviceSize bytes, VkBufferUsageFlags extra = 0) {
    return detail::makeBuffer(ctx, b, bytes, MemoryUsage::kDeviceLocal, extra);
  };
  const VkDeviceSize clothCount = std::max<VkDeviceSize>(n, 1);
  const VkDeviceSize cap = impl->capacity;
  VKC_TRY(make(impl->clothTable, clothCount * sizeof(gpu::InterCloth)));
  VKC_TRY(make(impl->world, clothCount * sizeof(gpu::InterClothWorld)));
  VKC_TRY(make(impl->sorted, 2 * clothCount * sizeof(uint32_t)));
  VKC_TRY(make(impl->partners, impl->partnerSlots * sizeof(uint32_t)));
  VKC_TRY(make(impl->state, sizeof(gpu::InterState), VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT));
  VKC_TRY(make(impl->tiles, 2 * std::max<VkDeviceSize>(impl->tileCount, 1) * sizeof(uint32_t)));
  VKC_TRY(make(impl->marked, cap * sizeof(gpu::InterMarked)));
  VKC_TRY(make(impl->keys, cap * sizeof(uint32_t)));
  VKC_TRY(make(impl->values, cap * sizeof(uint32_t)));
  VKC_TRY(make(impl->delta, 2 * cap * sizeof(gpu::vec4)));
  VKC_TRY(make(impl->contacts, cap * sizeof(uint32_t)));
  VKC_TRY(make(impl->dummy, sizeof(gpu::vec4)));
  VKC_TRY(impl->uploadTable());
  impl->queryCount = 2 * (8 + 4 * kMaxInterIterations + 8 * 4 * kMaxInterIterations);
  VKC_TRY(impl->queries.create(impl->queryCount));
  return std::unique_ptr<InterCollisionStage>(new InterCollisionStage(std::move(impl)));
}

Status InterCollisionStage::setTransforms(std::span<const InterClothDesc> cloths) {
  Impl& s = *impl_;
  if (cloths.size() != s.cloths.size()) {
    return Error{ErrorCode::kInvalidArgument, "InterCollisionStage::setTransforms: cloths holds " +
                                                  std::to_string(cloths.size()) + " cloths, the stage " +
                                                  std::to_string(s.cloths.size())};
  }
  VKC_TRY(detail::validateInterTransforms(cloths));
  const bool same = std::equal(cloths.begin(), cloths.end(), s.cloths.begin(), [](const InterClothDesc& a, const InterClothDesc& b) {
    return a.translation == b.translation && a.rotation == b.rotation;
  });
  if (same) return {};  // the table on the device is current
  for (size_t c = 0; c < cloths.size(); ++c) {
    s.cloths[c].translation = cloths[c].translation;
    s.cloths[c].rotation = cloths[c].rotation;
  }
  return s.uploadTable();
}

const std::vector<PassTiming>& InterCollisionStage::timings() const { return impl_->timings; }

// Validates the host's buffer and returns the recorder for one step; empty without cloths or particles.
static Result<detail::Recorder> recorderFor(InterCollisionStage::Impl& s, const InterCollisionRecordInfo& info) {
  detail::Recorder rec(s.ctx);
  if (s.table.empty() || s.particleCount == 0) return rec;
  const VkDeviceSize bytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
  VKC_TRY(detail::checkBufferRange(s.ctx, info.particles, "InterCollisionRecordInfo", "particles", bytes));
  BufferRange parts = info.particles;
  parts.size = bytes;
  s.appendPasses(rec, parts);
  return rec;
}

Status InterCollisionStage::record(VkCommandBuffer commandBuffer, const InterCollisionRecordInfo& info) {
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "InterCollisionStage"));
  return detail::recordPasses(recorderFor(*impl_, info), commandBuffer, info.sync);
}

Result<std::vector<detail::PlannedPass>> detail::interCollisionBarrierPlan(InterCollisionStage& stage,
                                                                           const InterCollisionRecordInfo& info) {
  auto rec = recorderFor(detail::Internals::of(stage), info);
  if (!rec) return rec.error();
  const std::vector<BarrierDecision> plan = rec->plan();
  std::vector<PlannedPass> out;
  for (size_t i = 0; i < plan.size(); ++i) {
    const Pass& p = rec->passes()[i];
    out.push_back({p.name, p.indirect.buffer != VK_NULL_HANDLE, plan[i]});
  }
  return out;
}

Result<std::vector<Float4>> InterCollisionStage::run(const InterCollisionInput& input, InterCollisionReport* report) {
  Impl& s = *impl_;
  VKC_TRY(validate(input));
  auto same = [](const InterClothDesc& a, const InterClothDesc& b) {
    return a.range.first == b.range.first && a.range.count == b.range.count;
  };
  auto sameFilter = [](const InterCollisionFilter& a, const InterCollisionFilter& b) {
    return a.cloth == b.cloth && a.group == b.group && a.mask == b.mask;
  };
  if (input.particles.size() != s.particleCount ||
      !std::equal(input.cloths.begin(), input.cloths.end(), s.cloths.begin(), s.cloths.end(), same) ||
      !std::equal(input.filters.begin(), input.filters.end(), s.filters.begin(), s.filters.end(), sameFilter) ||
      input.settings.distance != s.settings.distance || input.settings.stiffness != s.settings.stiffness ||
      input.settings.iterations != s.settings.iterations) {
    return Error{ErrorCode::kInvalidArgument,
                 "InterCollisionStage::run: the input's cloth ranges, filters, settings or particle count differ "
                 "from the stage's"};
  }
  VKC_TRY(setTransforms(input.cloths));
  std::vector<Float4> out(input.particles.begin(), input.particles.end());
  InterCollisionReport r;
  r.contacts.assign(out.size(), 0);
  const float inf = std::numeric_limits<float>::infinity();
  r.gridBounds.lo = Float4{inf, inf, inf, 0};
  r.gridBounds.hi = Float4{-inf, -inf, -inf, 0};
  if (s.table.empty() || s.particleCount == 0) {
    s.timings.clear();
    if (report != nullptr) *report = std::move(r);
    return out;
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
                     total = report != nullptr ? oContacts + contactBytes : bytes;
  VKC_TRY(alloc.ensureBuffer(s.particles, bytes, MemoryUsage::kDeviceLocal));
  VKC_TRY(alloc.ensureBuffer(s.upload, bytes, MemoryUsage::kUpload));
  VKC_TRY(alloc.ensureBuffer(s.readback, total, MemoryUsage::kReadback));
  std::memcpy(s.upload.mapped(), input.particles.data(), bytes);
  detail::Recorder rec(s.ctx);
  s.appendPasses(rec, BufferRange{s.particles.handle(), 0, bytes});
  const bool timed = 2 * rec.passes().size() <= s.queryCount;
  const RecordSync sync = detail::copyInCopyOutSync();
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    const VkBufferCopy up{0, 0, bytes};
    s.ctx.vk.vkCmdCopyBuffer(cmd, s.upload.handle(), s.particles.handle(), 1, &up);
    VKC_TRY(rec.record(cmd, sync, timed ? VkQueryPool{s.queries} : VK_NULL_HANDLE));
    auto copy = [&](const Buffer& src, VkDeviceSize dst, VkDeviceSize size) {
      const VkBufferCopy region{0, dst, size};
      s.ctx.vk.vkCmdCopyBuffer(cmd, src.handle(), s.readback.handle(), 1, &region);
    };
    copy(s.particles, 0, bytes);
    if (report != nullptr) {
      copy(s.state, oState, sizeof(gpu::InterState));
      copy(s.world, oWorld, worldBytes);
      copy(s.partners, oPartners, partnerBytes);
      copy(s.marked, oMarked, markedBytes);
      copy(s.contacts, oContacts, contactBytes);
    }
    return {};
  }));
  const char* base = static_cast<const char*>(s.readback.mapped());
  std::memcpy(out.data(), base, bytes);
  if (report != nullptr) {
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
    *report = std::move(r);
  }
  if (timed) {
    VKC_TRY(detail::storeTimings(rec, s.queries, s.timings));
  } else {
    s.timings.clear();
  }
  return out;
}

Result<std::vector<Float4>> interCollide(Backend backend, Context* context, const InterCollisionInput& input,
                                         InterCollisionReport* report) {
  if (backend != Backend::kVulkan) {
    std::vector<Float4> out(input.particles.size());
    VKC_TRY(interCollideCpu(input, out, backend, report));
    return out;
  }
  if (context == nullptr) return Error{ErrorCode::kInvalidArgument, "interCollide: the Vulkan backend needs a context"};
  VKC_TRY(validate(input));
  InterCollisionStageCreateInfo ci;
  ci.cloths = input.cloths;
  ci.filters = input.filters;
  ci.particleCount = static_cast<uint32_t>(input.particles.size());
  ci.settings = input.settings;
  auto stage = InterCollisionStage::create(*context, ci);
  if (!stage) return stage.error();
  return (*stage)->run(input, report);
}

}  // namespace vkc
