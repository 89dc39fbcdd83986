// bench_geometry_queries' device-resident rows (issue 16): the batch's geometries, queries and points
// copied once into device-local buffers (where an engine's own passes would have written them), one
// GeometryQueryStage::record() of the device-resident batch (GeometryQueryRecordInfo::geometryBuffer,
// queryBuffer, pointBuffer; the slot layout on the device) into a command buffer that is kept and
// submitted again and again: per submission the wall time of submit + wait and the GPU time of the
// passes (timestamps, readRecordTimings). No host upload and no read-back in the timed loop; the
// contacts are read back once afterwards, for the bitwise check against cpu-scalar. Also the
// primitive-pair path (devicePrimitivePairs: no slot layout).
#pragma once

#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "bench_queries.h"
#include "shared/geometry_queries_math.h"
#include "util/try.h"
#include "vkcollide/vkcollide.h"
#include "vulkan/context_impl.h"
#include "vulkan/memory.h"

namespace vkc::bench {

class ResidentGeometryBatch {
 public:
  // The pair families of `in`'s queries (the deviceFamilies a record needs).
  static uint32_t familiesOf(const GeometryQueryInput& in) {
    uint32_t bits = 0;
    for (const GeometryQuery& q : in.queries) {
      bits |= 1u << gpu::geomQueryFamily(static_cast<uint32_t>(in.geometries[q.a].type),
                                         static_cast<uint32_t>(in.geometries[q.b].type),
                                         static_cast<uint32_t>(q.method));
    }
    return bits;
  }

  // Uploads `in` (no meshes) once and records it; capacity: the stage's own element buffers.
  // headroom > 0: the stage's maxSlots `headroom` times the batch's slots and every device family
  // asked for (a stage made once for larger frames); 0: the batch's slots and families.
  // primitivePairs: recorded with GeometryQueryRecordInfo::devicePrimitivePairs (every query a static
  // pair of primitives; with headroom, the three primitive families asked for).
  static Result<std::unique_ptr<ResidentGeometryBatch>> create(Context& context, const GeometryQueryInput& in,
                                                               uint32_t capacity, uint32_t headroom = 0,
                                                               bool primitivePairs = false) {
    detail::ContextImpl& ctx = detail::Internals::of(context);
    auto r = std::unique_ptr<ResidentGeometryBatch>(new ResidentGeometryBatch(ctx));
    r->queryCount_ = static_cast<uint32_t>(in.queries.size());
    uint64_t slots = 0;
    for (const GeometryQuery& q : in.queries) {
      const Geometry& a = in.geometries[q.a];
      const Geometry& b = in.geometries[q.b];
      gpu::GeomShape sa, sb;
      std::memcpy(&sa, &a, sizeof sa);
      std::memcpy(&sb, &b, sizeof sb);
      slots += gpu::geomSlotCount(sa, sb);
    }
    GeometryQueryStageCreateInfo ci;
    ci.maxQueries = r->queryCount_;
    ci.maxGeometries = static_cast<uint32_t>(in.geometries.size());
    ci.maxContacts = std::max(capacity, 1u);
    ci.maxSlots = static_cast<uint32_t>(std::min<uint64_t>(std::max<uint64_t>(slots, 1) * std::max(headroom, 1u), UINT32_MAX / 2));
    auto stage = GeometryQueryStage::create(context, ci);
    if (!stage) return stage.error();
    r->stage_ = std::move(stage.value());
    // Device-local copies of the arrays, through one staging buffer.
    const VkDeviceSize gBytes = in.geometries.size() * sizeof(Geometry), qBytes = in.queries.size() * sizeof(GeometryQuery),
                       pBytes = in.points.size() * sizeof(Float4);
    const VkDeviceSize sizes[3] = {gBytes, qBytes, pBytes};
    detail::Buffer* dst[3] = {&r->geometries_, &r->queries_, &r->points_};
    const void* src[3] = {in.geometries.data(), in.queries.data(), in.points.data()};
    auto staging = ctx.allocator->createBuffer(std::max<VkDeviceSize>(gBytes + qBytes + pBytes, 16), detail::MemoryUsage::kUpload);
    if (!staging) return staging.error();
    VkDeviceSize at = 0;
    for (int i = 0; i < 3; ++i) {
      auto b = ctx.allocator->createBuffer(std::max<VkDeviceSize>(sizes[i], 16), detail::MemoryUsage::kDeviceLocal);
      if (!b) return b.error();
      *dst[i] = std::move(b.value());
      if (sizes[i] > 0) std::memcpy(static_cast<char*>(staging->mapped()) + at, src[i], sizes[i]);
      at += sizes[i];
    }
    VKC_TRY(ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
      VkDeviceSize from = 0;
      for (int i = 0; i < 3; ++i) {
        if (sizes[i] == 0) continue;
        const VkBufferCopy region{from, 0, sizes[i]};
        ctx.vk.vkCmdCopyBuffer(cmd, staging->handle(), dst[i]->handle(), 1, &region);
        from += sizes[i];
      }
      return {};
    }));
    GeometryQueryRecordInfo info;
    info.geometryBuffer = {r->geometries_.handle(), 0, gBytes};
    info.geometryCount = static_cast<uint32_t>(in.geometries.size());
    info.queryBuffer = {r->queries_.handle(), 0, qBytes};
    info.queryCount = r->queryCount_;
    if (pBytes > 0) {
      info.pointBuffer = {r->points_.handle(), 0, pBytes};
      info.pointCount = static_cast<uint32_t>(in.points.size());
    }
    info.deviceFamilies = headroom == 0       ? familiesOf(in)
                          : primitivePairs ? kGeometryQueryFamiliesPrimitive
                                           : kGeometryQueryFamiliesDevice;
    info.devicePrimitivePairs = primitivePairs;
    info.timestamps = true;
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = ctx.commandPool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VKC_VK_TRY(ctx.vk.vkAllocateCommandBuffers(ctx.device, &ai, &r->cmd_));
    const VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VKC_VK_TRY(ctx.vk.vkBeginCommandBuffer(r->cmd_, &bi));
    VKC_TRY(r->stage_->record(r->cmd_, info));
    r->stats_ = r->stage_->lastRecordStats();
    VKC_VK_TRY(ctx.vk.vkEndCommandBuffer(r->cmd_));
    const VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VKC_VK_TRY(ctx.vk.vkCreateFence(ctx.device, &fi, nullptr, &r->fence_));
    return r;
  }

  ~ResidentGeometryBatch() {
    if (fence_ != VK_NULL_HANDLE) ctx_.vk.vkDestroyFence(ctx_.device, fence_, nullptr);
    if (cmd_ != VK_NULL_HANDLE) ctx_.vk.vkFreeCommandBuffers(ctx_.device, ctx_.commandPool, 1, &cmd_);
  }

  // One submission of the recorded command buffer, waited for: its wall time (submit + wait) and the
  // passes' GPU time (the sum of the per-pass timestamps, timings()).
  Status submit(double& wallMs, double& gpuMs) {
    const auto t0 = std::chrono::steady_clock::now();
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd_;
    {
      std::lock_guard<std::mutex> lock(ctx_.submitMutex);
      VKC_VK_TRY(ctx_.vk.vkQueueSubmit(ctx_.queue, 1, &si, fence_));
    }
    VKC_VK_TRY(ctx_.vk.vkWaitForFences(ctx_.device, 1, &fence_, VK_TRUE, UINT64_MAX));
    wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    VKC_VK_TRY(ctx_.vk.vkResetFences(ctx_.device, 1, &fence_));
    VKC_TRY(stage_->readRecordTimings());
    double ns = 0;
    for (const PassTiming& t : stage_->timings()) ns += t.ns;
    gpuMs = ns * 1e-6;
    return {};
  }

  // The last submission's counts, ranges and contacts (from the stage's own buffers).
  Status readBack(QueryOutput& out) {
    const VkDeviceSize rangeBytes = VkDeviceSize{queryCount_} * sizeof(ContactRange);
    const BufferRange a = stage_->elementsABuffer(), b = stage_->elementsBBuffer();
    const VkDeviceSize atRanges = sizeof(GeometryQueryDeviceCounts), atA = (atRanges + rangeBytes + 15) / 16 * 16,
                       atB = atA + a.size, total = atB + b.size;
    auto back = ctx_.allocator->createBuffer(total, detail::MemoryUsage::kReadback);
    if (!back) return back.error();
    VKC_TRY(ctx_.submitAndWait([&](VkCommandBuffer cmd) -> Status {
      const BufferRange from[4] = {stage_->countsBuffer(), stage_->rangesBuffer(), a, b};
      const VkDeviceSize to[4] = {0, atRanges, atA, atB};
      const VkDeviceSize n[4] = {sizeof(GeometryQueryDeviceCounts), rangeBytes, a.size, b.size};
      for (int i = 0; i < 4; ++i) {
        if (n[i] == 0) continue;
        const VkBufferCopy region{from[i].offset, to[i], n[i]};
        ctx_.vk.vkCmdCopyBuffer(cmd, from[i].buffer, back->handle(), 1, &region);
      }
      return {};
    }));
    const char* p = static_cast<const char*>(back->mapped());
    GeometryQueryDeviceCounts c;
    std::memcpy(&c, p, sizeof c);
    out.counts = {c.contacts, c.written, c.overflow != 0};
    out.ranges.resize(queryCount_);
    if (rangeBytes > 0) std::memcpy(out.ranges.data(), p + atRanges, rangeBytes);
    out.a.resize(c.written);
    out.b.resize(c.written);
    if (c.written > 0) {
      std::memcpy(out.a.data(), p + atA, c.written * sizeof(ContactElement));
      std::memcpy(out.b.data(), p + atB, c.written * sizeof(ContactElement));
    }
    invalidQueries_ = c.invalidQueries;
    return {};
  }

  const RecordStats& stats() const { return stats_; }
  const std::vector<PassTiming>& timings() const { return stage_->timings(); }
  uint32_t invalidQueries() const { return invalidQueries_; }

 private:
  explicit ResidentGeometryBatch(detail::ContextImpl& ctx) : ctx_(ctx) {}
  detail::ContextImpl& ctx_;
  std::unique_ptr<GeometryQueryStage> stage_;
  detail::Buffer geometries_, queries_, points_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  RecordStats stats_;
  uint32_t queryCount_ = 0;
  uint32_t invalidQueries_ = 0;
};

}  // namespace vkc::bench
