// The BVH stage on Vulkan: init, boxes, morton, the radix sort, hierarchy, climb and finalize passes
// of shaders/bvh.comp (a refit: boxes, climb, finalize), recorded by the Recorder, which derives every
// barrier from the passes' declared buffer uses.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "buffer_check.h"
#include "bvh_stage.h"
#include "context_impl.h"
#include "radix_sort_stage.h"
#include "recorder.h"
#include "shared/bvh.h"
#include "shared/bvh_passes.h"
#include "stage_common.h"
#include "util/try.h"
#include "vkcollide/bvh.h"
#include "vkcollide/radix_sort.h"

namespace vkc {

static_assert(sizeof(BvhNode) == sizeof(gpu::BvhNode) && sizeof(Aabb) == sizeof(gpu::Aabb));

using detail::Buffer;
using detail::MemoryUsage;

namespace {
uint32_t groupsFor(uint32_t items) { return (items + gpu::kBvhGroupSize - 1) / gpu::kBvhGroupSize; }
VkDeviceSize nodeBytes(uint32_t n) { return VkDeviceSize{bvhNodeCount(n)} * sizeof(gpu::BvhNode); }
}  // namespace

struct BvhStage::Impl {
  // The stage's buffers (StageBuffers ids): scratch and outputs per frame in flight.
  enum : uint32_t { kCodes, kOrder, kNodeKeys, kCentroid, kNodes, kPrimBoxes, kLeafParents, kDummy, kBufferCount };

  detail::ContextImpl& ctx;
  uint32_t maxPrims = 0;
  uint32_t vpp = 3;
  uint32_t frames = 1;
  const detail::Pipeline* pipelines[6] = {};
  std::unique_ptr<RadixSortStage> sort;
  detail::StageBuffers buffers;
  std::array<uint32_t, kMaxFramesInFlight> builtCount{};  // own outputs: primitives of the last recorded build
  // Convenience path (run): device copies of the inputs and staging, made on first use.
  Buffer vertices, prevVertices, indices, upload, readback;
  detail::TimestampPool queries{ctx};
  std::vector<PassTiming> timings;
  RecordStats lastStats;  // of the last record() or run()

  explicit Impl(detail::ContextImpl& c) : ctx(c) {}

  static std::array<detail::BufferSpec, kBufferCount> plan(uint32_t maxPrims) {
    const VkDeviceSize perPrim = VkDeviceSize{maxPrims} * sizeof(uint32_t);
    std::array<detail::BufferSpec, kBufferCount> p{};
    p[kCodes] = {perPrim, MemoryUsage::kDeviceLocal, true};
    p[kOrder] = {perPrim, MemoryUsage::kDeviceLocal, true};
    p[kNodeKeys] = {VkDeviceSize{bvhNodeCount(maxPrims)} * sizeof(gpu::BvhNodeKeys), MemoryUsage::kDeviceLocal, true};
    p[kCentroid] = {8 * sizeof(uint32_t), MemoryUsage::kDeviceLocal, true};
    p[kNodes] = {nodeBytes(maxPrims), MemoryUsage::kDeviceLocal, true};
    p[kPrimBoxes] = {VkDeviceSize{maxPrims} * sizeof(gpu::Aabb), MemoryUsage::kDeviceLocal, true};
    p[kLeafParents] = {perPrim, MemoryUsage::kDeviceLocal, true};
    p[kDummy] = {16};
    return p;
  }

  BufferRange own(uint32_t id, uint32_t frame, VkDeviceSize bytes) const {
    return {buffers.get(id, frame).handle(), 0, bytes};
  }

  Status checkRange(const BufferRange& r, const char* field, VkDeviceSize needed) const {
    return detail::checkBufferRange(ctx, r, "BvhRecordInfo", field, needed);
  }

  // record()'s checks; `info` gets the ranges the passes bind (own outputs where null, sizes trimmed).
  Status resolve(BvhRecordInfo& info) const {
    VKC_TRY(detail::checkFrame(info.frame, frames, "BvhRecordInfo"));
    const uint32_t n = info.primitiveCount;
    if (n == 0 || n > maxPrims) {
      return Error{n == 0 ? ErrorCode::kInvalidArgument : ErrorCode::kLimitExceeded,
                   "BvhRecordInfo::primitiveCount is " + std::to_string(n) + ": must be in 1..maxPrimitives (" +
                       std::to_string(maxPrims) + ")"};
    }
    if (info.vertexCount == 0) return Error{ErrorCode::kInvalidArgument, "BvhRecordInfo::vertexCount is 0"};
    const VkDeviceSize vertexBytes = VkDeviceSize{info.vertexCount} * sizeof(gpu::vec4);
    VKC_TRY(checkRange(info.vertices, "vertices", vertexBytes));
    info.vertices.size = vertexBytes;
    if (info.prevVertices.buffer != VK_NULL_HANDLE) {
      VKC_TRY(checkRange(info.prevVertices, "prevVertices", vertexBytes));
      info.prevVertices.size = vertexBytes;
    }
    const VkDeviceSize indexBytes = VkDeviceSize{n} * vpp * sizeof(uint32_t);
    VKC_TRY(checkRange(info.indices, "indices", indexBytes));
    info.indices.size = indexBytes;
    struct Out {
      BufferRange& range;
      const char* field;
      uint32_t id;
      VkDeviceSize bytes;
    };
    const Out outs[] = {{info.nodes, "nodes", kNodes, nodeBytes(n)},
                        {info.primitiveBoxes, "primitiveBoxes", kPrimBoxes, VkDeviceSize{n} * sizeof(gpu::Aabb)},
                        {info.leafParents, "leafParents", kLeafParents, VkDeviceSize{n} * sizeof(uint32_t)}};
    bool ownNodes = false;
    for (const Out& o : outs) {
      if (o.range.buffer == VK_NULL_HANDLE) {
        o.range = own(o.id, info.frame, o.bytes);
        ownNodes |= o.id == kNodes;
      } else {
        VKC_TRY(checkRange(o.range, o.field, o.bytes));
        o.range.size = o.bytes;
      }
    }
    if (info.update == BvhUpdate::kRefit && ownNodes && builtCount[info.frame] != n) {
      return Error{ErrorCode::kInvalidArgument,
                   "BvhRecordInfo::update is kRefit with primitiveCount " + std::to_string(n) + ", but frame " +
                       std::to_string(info.frame) + "'s own tree was " +
                       (builtCount[info.frame] == 0 ? std::string("never built")
                                                    : "built with " + std::to_string(builtCount[info.frame]) +
                                                          " primitives")};
    }
    return {};
  }

  // Appends the passes for a resolved `info`.
  void appendPasses(detail::Recorder& rec, const BvhRecordInfo& info) const {
    const uint32_t n = info.primitiveCount;
    const bool build = info.update == BvhUpdate::kBuild;
    const bool swept = info.prevVertices.buffer != VK_NULL_HANDLE;
    const gpu::BvhPush push{n, info.vertexCount, vpp, (swept ? gpu::kBvhFlagSwept : 0u) | (build ? gpu::kBvhFlagBuild : 0u)};
    const BufferRange dummy = buffers.range(kDummy);
    const VkDeviceSize perPrim = VkDeviceSize{n} * sizeof(uint32_t);
    const BufferRange codes = own(kCodes, info.frame, perPrim), order = own(kOrder, info.frame, perPrim);
    const BufferRange nodeKeys = own(kNodeKeys, info.frame, VkDeviceSize{bvhNodeCount(n)} * sizeof(gpu::BvhNodeKeys));
    const BufferRange centroid = own(kCentroid, info.frame, 8 * sizeof(uint32_t));
    const BufferRange ranges[gpu::kBvhBindingCount] = {info.vertices,  swept ? info.prevVertices : dummy,
                                                       info.indices,   info.primitiveBoxes,
                                                       centroid,       codes,
                                                       order,          info.nodes,
                                                       info.leafParents, nodeKeys};
    auto add = [&](uint32_t pass, uint32_t items) {
      detail::Pass p = detail::passFromDecl(gpu::kBvhPasses[pass], pipelines[pass], ranges);
      p.setPush(push);
      p.groupCount = groupsFor(items);
      if (pass == gpu::kBvhPassBoxes && !build) p.narrow(gpu::kBvhBindingCentroid, detail::Access::kNone);
      if (pass == gpu::kBvhPassBoxes && !swept) p.narrow(gpu::kBvhBindingPrevVertices, detail::Access::kNone);
      if (pass == gpu::kBvhPassClimb && !build) p.narrow(gpu::kBvhBindingOrder, detail::Access::kNone);  // leaf by leaf
      rec.add(std::move(p));
    };
    if (build) add(gpu::kBvhPassInit, 1);  // the centroid box; BOXES sets the node keys
    add(gpu::kBvhPassBoxes, n);
    if (build) {
      add(gpu::kBvhPassMorton, n);
      detail::appendRadixSortPasses(*sort, rec, codes, order, n, gpu::kBvhMortonBits, info.frame);
      add(gpu::kBvhPassHierarchy, bvhNodeCount(n));
    }
    add(gpu::kBvhPassClimb, n);
    add(gpu::kBvhPassFinalize, bvhNodeCount(n));
  }
};

BvhStage::BvhStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BvhStage::~BvhStage() = default;

static Status checkCreateInfo(const detail::ContextImpl& ctx, const BvhStageCreateInfo& info) {
  VKC_TRY(detail::checkFramesInFlight(info.framesInFlight, "BvhStageCreateInfo"));
  if (info.verticesPerPrimitive < gpu::kBvhMinVerticesPerPrimitive ||
      info.verticesPerPrimitive > gpu::kBvhMaxVerticesPerPrimitive) {
    return Error{ErrorCode::kInvalidArgument, "BvhStageCreateInfo::verticesPerPrimitive is " +
                                                  std::to_string(info.verticesPerPrimitive) + ": must be 2, 3 or 4"};
  }
  if (info.maxPrimitives == 0 || info.maxPrimitives > kBvhMaxPrimitives) {
    return Error{info.maxPrimitives == 0 ? ErrorCode::kInvalidArgument : ErrorCode::kLimitExceeded,
                 "BvhStageCreateInfo::maxPrimitives is " + std::to_string(info.maxPrimitives) + ": must be in 1.." +
                     std::to_string(kBvhMaxPrimitives)};
  }
  // The largest binding: the nodes (48 bytes each), or the index buffer (4 * verticesPerPrimitive).
  const uint64_t maxRange = ctx.info.maxStorageBufferRange;
  const uint64_t need = std::max<uint64_t>(nodeBytes(info.maxPrimitives),
                                           uint64_t{info.maxPrimitives} * info.verticesPerPrimitive * sizeof(uint32_t));
  if (need > maxRange) {
    return Error{ErrorCode::kLimitExceeded,
                 "BvhStageCreateInfo::maxPrimitives " + std::to_string(info.maxPrimitives) + " needs " +
                     std::to_string(need) + " bytes in one storage buffer binding; the device '" + ctx.info.name +
                     "' allows maxStorageBufferRange = " + std::to_string(maxRange) + " bytes"};
  }
  return {};
}

Result<MemoryRequirements> BvhStage::memoryRequirements(const Context& context, const BvhStageCreateInfo& info) {
  VKC_TRY(checkCreateInfo(detail::Internals::of(context), info));
  MemoryRequirements need = detail::requirementsOf(Impl::plan(info.maxPrimitives), info.framesInFlight);
  auto sort = RadixSortStage::memoryRequirements(
      context, {.maxCount = info.maxPrimitives, .framesInFlight = info.framesInFlight});
  if (!sort) return sort.error();
  detail::addRequirements(need, *sort);
  return need;
}

Result<std::unique_ptr<BvhStage>> BvhStage::create(Context& context, const BvhStageCreateInfo& info) {
  detail::ContextImpl& ctx = detail::Internals::of(context);
  VKC_TRY(checkCreateInfo(ctx, info));
  auto impl = std::make_unique<Impl>(ctx);
  impl->maxPrims = info.maxPrimitives;
  impl->vpp = info.verticesPerPrimitive;
  impl->frames = info.framesInFlight;
  auto sortStage = RadixSortStage::create(context, {.maxCount = info.maxPrimitives, .framesInFlight = info.framesInFlight});
  if (!sortStage) return sortStage.error();
  impl->sort = std::move(sortStage.value());
  VKC_TRY(detail::getPassPipelines(ctx, "bvh", gpu::kBvhBindingCount, sizeof(gpu::BvhPush), impl->pipelines));
  VKC_TRY(impl->buffers.create(ctx, Impl::plan(impl->maxPrims), impl->frames));
  VKC_TRY(impl->queries.create(64));
  return std::unique_ptr<BvhStage>(new BvhStage(std::move(impl)));
}

uint32_t BvhStage::maxPrimitives() const { return impl_->maxPrims; }
const std::vector<PassTiming>& BvhStage::timings() const { return impl_->timings; }
const RecordStats& BvhStage::lastRecordStats() const { return impl_->lastStats; }

BufferRange BvhStage::nodesBuffer(uint32_t frame) const {
  return impl_->own(Impl::kNodes, std::min(frame, impl_->frames - 1), nodeBytes(impl_->maxPrims));
}
BufferRange BvhStage::primitiveBoxesBuffer(uint32_t frame) const {
  return impl_->own(Impl::kPrimBoxes, std::min(frame, impl_->frames - 1),
                    VkDeviceSize{impl_->maxPrims} * sizeof(gpu::Aabb));
}
BufferRange BvhStage::leafParentsBuffer(uint32_t frame) const {
  return impl_->own(Impl::kLeafParents, std::min(frame, impl_->frames - 1),
                    VkDeviceSize{impl_->maxPrims} * sizeof(uint32_t));
}

Status BvhStage::recordUpload(VkCommandBuffer commandBuffer) {
  return detail::checkCommandBuffer(commandBuffer, "BvhStage", "recordUpload");
}

static Result<detail::Recorder> recorderFor(BvhStage::Impl& s, BvhRecordInfo info) {
  VKC_TRY(s.resolve(info));
  detail::Recorder rec(s.ctx);
  s.appendPasses(rec, info);
  return rec;
}

Status BvhStage::record(VkCommandBuffer commandBuffer, const BvhRecordInfo& info) {
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "BvhStage"));
  Impl& s = *impl_;
  auto rec = recorderFor(s, info);
  VKC_TRY(detail::recordPasses(rec, commandBuffer, info.sync, s.lastStats));
  if (info.update == BvhUpdate::kBuild && info.nodes.buffer == VK_NULL_HANDLE) s.builtCount[info.frame] = info.primitiveCount;
  return {};
}

void detail::appendBvhPasses(BvhStage& stage, Recorder& rec, const BvhRecordInfo& info) {
  BvhStage::Impl& s = Internals::of(stage);
  BvhRecordInfo resolved = info;
  if (!s.resolve(resolved).ok()) return;  // the caller validated; nothing is appended for bad input
  s.appendPasses(rec, resolved);
  if (info.update == BvhUpdate::kBuild && info.nodes.buffer == VK_NULL_HANDLE) {
    s.builtCount[info.frame] = info.primitiveCount;
  }
}

Result<std::vector<detail::BarrierDecision>> detail::bvhBarrierPlan(BvhStage& stage, const BvhRecordInfo& info) {
  auto rec = recorderFor(Internals::of(stage), info);
  if (!rec) return rec.error();
  return rec->plan();
}

Status BvhStage::run(const BvhInput& input, BvhUpdate update) {
  Impl& s = *impl_;
  s.lastStats = {};
  VKC_TRY(update == BvhUpdate::kBuild ? validate(input) : validateRefit(input));
  const uint32_t n = input.primitiveCount();
  if (input.verticesPerPrimitive != s.vpp) {
    return Error{ErrorCode::kInvalidArgument, "BvhStage::run: input.verticesPerPrimitive " +
                                                  std::to_string(input.verticesPerPrimitive) + " differs from the stage's " +
                                                  std::to_string(s.vpp)};
  }
  if (n > s.maxPrims) {
    return Error{ErrorCode::kLimitExceeded, "BvhStage::run: " + std::to_string(n) +
                                                " primitives exceed the stage's maxPrimitives " + std::to_string(s.maxPrims)};
  }
  const bool swept = !input.prevVertices.empty();
  const bool refit = update == BvhUpdate::kRefit;
  const VkDeviceSize vertexBytes = input.vertices.size() * sizeof(Float4);
  const VkDeviceSize indexBytes = input.indices.size() * sizeof(uint32_t);
  const VkDeviceSize nBytes = nodeBytes(n), boxBytes = VkDeviceSize{n} * sizeof(Aabb),
                     parentBytes = VkDeviceSize{n} * sizeof(uint32_t);
  auto& alloc = *s.ctx.allocator;
  VKC_TRY(alloc.ensureBuffer(s.vertices, vertexBytes, MemoryUsage::kDeviceLocal));
  if (swept) VKC_TRY(alloc.ensureBuffer(s.prevVertices, vertexBytes, MemoryUsage::kDeviceLocal));
  VKC_TRY(alloc.ensureBuffer(s.indices, indexBytes, MemoryUsage::kDeviceLocal));
  // Staging: vertices, prev, indices, (refit) nodes and leaf parents, one after another.
  const VkDeviceSize offPrev = vertexBytes, offIdx = offPrev + (swept ? vertexBytes : 0), offNodes = offIdx + indexBytes,
                     offParents = offNodes + (refit ? nBytes : 0), uploadBytes = offParents + (refit ? parentBytes : 0);
  VKC_TRY(alloc.ensureBuffer(s.upload, uploadBytes, MemoryUsage::kUpload));
  VKC_TRY(alloc.ensureBuffer(s.readback, nBytes + boxBytes + parentBytes, MemoryUsage::kReadback));
  char* up = static_cast<char*>(s.upload.mapped());
  std::memcpy(up, input.vertices.data(), vertexBytes);
  if (swept) std::memcpy(up + offPrev, input.prevVertices.data(), vertexBytes);
  std::memcpy(up + offIdx, input.indices.data(), indexBytes);
  if (refit) {
    std::memcpy(up + offNodes, input.nodes.data(), nBytes);
    std::memcpy(up + offParents, input.leafParents.data(), parentBytes);
  }

  BvhRecordInfo info;
  info.update = update;
  info.primitiveCount = n;
  info.vertexCount = static_cast<uint32_t>(input.vertices.size());
  info.vertices = {s.vertices.handle(), 0, vertexBytes};
  if (swept) info.prevVertices = {s.prevVertices.handle(), 0, vertexBytes};
  info.indices = {s.indices.handle(), 0, indexBytes};
  info.nodes = nodesBuffer(0);
  info.primitiveBoxes = primitiveBoxesBuffer(0);
  info.leafParents = leafParentsBuffer(0);
  auto rec = recorderFor(s, info);
  if (!rec) return rec.error();
  const RecordSync sync = detail::copyInCopyOutSync();
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    auto copy = [&](const Buffer& src, VkBuffer dst, VkDeviceSize srcOff, VkDeviceSize dstOff, VkDeviceSize bytes) {
      const VkBufferCopy region{srcOff, dstOff, bytes};
      s.ctx.vk.vkCmdCopyBuffer(cmd, src.handle(), dst, 1, &region);
    };
    copy(s.upload, s.vertices.handle(), 0, 0, vertexBytes);
    if (swept) copy(s.upload, s.prevVertices.handle(), offPrev, 0, vertexBytes);
    copy(s.upload, s.indices.handle(), offIdx, 0, indexBytes);
    if (refit) {
      copy(s.upload, info.nodes.buffer, offNodes, 0, nBytes);
      copy(s.upload, info.leafParents.buffer, offParents, 0, parentBytes);
    }
    VKC_TRY(rec->record(cmd, sync, s.queries, &s.lastStats));
    copy(s.buffers.get(Impl::kNodes, 0), s.readback.handle(), 0, 0, nBytes);
    copy(s.buffers.get(Impl::kPrimBoxes, 0), s.readback.handle(), 0, nBytes, boxBytes);
    copy(s.buffers.get(Impl::kLeafParents, 0), s.readback.handle(), 0, nBytes + boxBytes, parentBytes);
    return {};
  }));
  if (!refit) s.builtCount[0] = n;
  const char* back = static_cast<const char*>(s.readback.mapped());
  std::memcpy(input.nodes.data(), back, nBytes);
  std::memcpy(input.primitiveBoxes.data(), back + nBytes, boxBytes);
  std::memcpy(input.leafParents.data(), back + nBytes + boxBytes, parentBytes);
  return detail::storeTimings(*rec, s.queries, s.timings);
}

static Status runOnVulkan(Context* context, const BvhInput& input, BvhUpdate update) {
  if (context == nullptr) return Error{ErrorCode::kInvalidArgument, "buildBvh/refitBvh: the Vulkan backend needs a context"};
  VKC_TRY(update == BvhUpdate::kBuild ? validate(input) : validateRefit(input));
  auto stage = BvhStage::create(*context, {.maxPrimitives = input.primitiveCount(),
                                           .verticesPerPrimitive = input.verticesPerPrimitive});
  if (!stage) return stage.error();
  return (*stage)->run(input, update);
}

Status buildBvh(Backend backend, Context* context, const BvhInput& input) {
  if (backend != Backend::kVulkan) return buildBvhCpu(input, backend);
  return runOnVulkan(context, input, BvhUpdate::kBuild);
}

Status refitBvh(Backend backend, Context* context, const BvhInput& input) {
  if (backend != Backend::kVulkan) return refitBvhCpu(input, backend);
  return runOnVulkan(context, input, BvhUpdate::kRefit);
}

}  // namespace vkc
