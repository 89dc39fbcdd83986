// Private: what every stage's Impl shares: the timestamp pool it owns, its device buffers, the
// pipelines of its shader, and the tails of record() and of the convenience path run().
#pragma once

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "context_impl.h"
#include "recorder.h"
#include "util/try.h"

namespace vkc::detail {

// The stage's timestamp query pool (VK_NULL_HANDLE where the queue has no timestamps), destroyed
// with the stage.
class TimestampPool {
 public:
  explicit TimestampPool(ContextImpl& ctx) : ctx_(ctx) {}
  ~TimestampPool() {
    if (pool_ != VK_NULL_HANDLE) ctx_.vk.vkDestroyQueryPool(ctx_.device, pool_, nullptr);
  }
  TimestampPool(const TimestampPool&) = delete;
  TimestampPool& operator=(const TimestampPool&) = delete;

  // Creates the pool of `count` queries. Called once, from the stage's create().
  Status create(uint32_t count) {
    auto pool = ctx_.createTimestampPool(count);
    if (!pool) return pool.error();
    pool_ = *pool;
    return {};
  }
  operator VkQueryPool() const { return pool_; }

 private:
  ContextImpl& ctx_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
};

// A buffer a stage owns, planned from its create info alone, so that memoryRequirements() (before
// creation) and create() count the same buffers. perFrame: one copy per frame in flight.
struct BufferSpec {
  VkDeviceSize bytes = 0;  // as requested; a buffer holds at least 16 bytes (one vec4: empty tables still bind)
  MemoryUsage usage = MemoryUsage::kDeviceLocal;
  bool perFrame = false;
  VkBufferUsageFlags extraUsage = 0;
};

inline VkDeviceSize specBytes(const BufferSpec& s) { return std::max<VkDeviceSize>(s.bytes, 16); }

// What creating buffers from `specs` with `frames` frames in flight allocates (Allocator::inUse counts alike).
inline MemoryRequirements requirementsOf(std::span<const BufferSpec> specs, uint32_t frames) {
  MemoryRequirements r;
  for (const BufferSpec& s : specs) {
    const uint32_t copies = s.perFrame ? frames : 1;
    (s.usage == MemoryUsage::kDeviceLocal ? r.deviceLocalBytes : r.hostVisibleBytes) += copies * specBytes(s);
    r.bufferCount += copies;
  }
  return r;
}

// Adds `copies` times `r` to `total` (a stage's requirements include those of the stages it embeds).
inline void addRequirements(MemoryRequirements& total, const MemoryRequirements& r, uint32_t copies = 1) {
  total.deviceLocalBytes += copies * r.deviceLocalBytes;
  total.hostVisibleBytes += copies * r.hostVisibleBytes;
  total.bufferCount += copies * r.bufferCount;
}

// The buffers of a stage, indexed by the stage's own enum and the frame.
class StageBuffers {
 public:
  Status create(ContextImpl& ctx, std::span<const BufferSpec> specs, uint32_t frames) {
    buffers_.clear();
    buffers_.resize(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      buffers_[i].resize(specs[i].perFrame ? frames : 1);
      for (Buffer& b : buffers_[i]) {
        auto r = ctx.allocator->createBuffer(specBytes(specs[i]), specs[i].usage, specs[i].extraUsage);
        if (!r) return r.error();
        b = std::move(r.value());
      }
    }
    return {};
  }
  // A shared buffer ignores `frame`.
  const Buffer& get(uint32_t id, uint32_t frame = 0) const {
    const std::vector<Buffer>& copies = buffers_[id];
    return copies[copies.size() == 1 ? 0 : frame];
  }
  BufferRange range(uint32_t id, uint32_t frame = 0) const { return get(id, frame).range(); }

 private:
  std::vector<std::vector<Buffer>> buffers_;
};

// Static tables (cloth tables, capsule lists, subsets, ...): create() writes them into a host-visible
// staging buffer (a memcpy: no queue, no submission) and the copies into their device buffers are
// recorded into the host's command buffer by recordUpload(), or by the first record() when the host
// did not call it. The staging buffer lives as long as the stage, so recordUpload() may run again.
struct TableCopy {
  const void* data = nullptr;
  VkDeviceSize bytes = 0;
  uint32_t dst = 0;  // the destination's id in the stage's StageBuffers (a shared buffer)
};

class TableUpload {
 public:
  static VkDeviceSize stagingBytes(std::span<const TableCopy> tables) {
    VkDeviceSize total = 0;
    for (const TableCopy& t : tables) total += t.bytes;
    return total;
  }
  // Writes every table into `staging` (host-visible, at least stagingBytes(tables)) and keeps the copies.
  void write(const StageBuffers& buffers, uint32_t stagingId, std::span<const TableCopy> tables) {
    staging_ = buffers.get(stagingId).handle();
    copies_.clear();
    VkDeviceSize offset = 0;
    for (const TableCopy& t : tables) {
      if (t.bytes == 0) continue;
      std::memcpy(static_cast<char*>(buffers.get(stagingId).mapped()) + offset, t.data, t.bytes);
      copies_.push_back({buffers.get(t.dst).handle(), VkBufferCopy{offset, 0, t.bytes}});
      offset += t.bytes;
    }
  }
  bool recorded() const { return recorded_; }
  // Records the copies between two barriers: earlier compute reads of the tables finish first (a
  // repeated upload), and the compute passes recorded next see the new contents.
  // With `stats`, the barriers and copies are added to it.
  void record(const ContextImpl& ctx, VkCommandBuffer cmd, RecordStats* stats = nullptr) {
    recorded_ = true;
    if (copies_.empty()) return;
    globalBarrier(ctx, cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT,
                  VK_ACCESS_2_TRANSFER_WRITE_BIT);
    for (const auto& [dst, region] : copies_) {
      ctx.vk.vkCmdCopyBuffer(cmd, staging_, dst, 1, &region);
      if (stats != nullptr) {
        stats->transfers += 1;
        stats->transferBytes += region.size;
      }
    }
    globalBarrier(ctx, cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_READ_BIT);
    if (stats != nullptr) stats->barriers += 2;
  }

 private:
  VkBuffer staging_ = VK_NULL_HANDLE;
  std::vector<std::pair<VkBuffer, VkBufferCopy>> copies_;
  bool recorded_ = false;
};

// Per-record data (this frame's spheres, a step's cloth table): `bytes` of `data` copied into `dst`
// inside the command buffer (vkCmdUpdateBuffer, at most 65536 bytes a call), after earlier compute
// reads of `dst`; the copy is added to `sync`'s sources so that the Recorder's opening barrier orders
// it before the passes. The host's array may change as soon as this returns.
// The vkCmdUpdateBuffer calls alone (no barrier, no sync): for a stage that orders several transfers
// with one barrier of its own.
inline void recordUpdateChunks(const ContextImpl& ctx, VkCommandBuffer cmd, VkBuffer dst, const void* data,
                               VkDeviceSize bytes, RecordStats& stats) {
  const auto* src = static_cast<const uint8_t*>(data);
  for (VkDeviceSize off = 0; off < bytes; off += 65536) {
    ctx.vk.vkCmdUpdateBuffer(cmd, dst, off, std::min<VkDeviceSize>(65536, bytes - off), src + off);
    stats.transfers += 1;
  }
  stats.transferBytes += bytes;
}

inline void recordUpdate(const ContextImpl& ctx, VkCommandBuffer cmd, VkBuffer dst, const void* data, VkDeviceSize bytes,
                         RecordSync& sync, RecordStats& stats) {
  if (bytes == 0) return;
  globalBarrier(ctx, cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COPY_BIT,
                VK_ACCESS_2_TRANSFER_WRITE_BIT);
  stats.barriers += 1;
  recordUpdateChunks(ctx, cmd, dst, data, bytes, stats);
  sync.srcStage |= VK_PIPELINE_STAGE_2_COPY_BIT;
  sync.srcAccess |= VK_ACCESS_2_TRANSFER_WRITE_BIT;
}

// create()'s check of framesInFlight: "<owner>::framesInFlight is 0: ...".
inline Status checkFramesInFlight(uint32_t frames, const char* owner) {
  if (frames >= 1 && frames <= kMaxFramesInFlight) return {};
  return Error{ErrorCode::kInvalidArgument, std::string(owner) + "::framesInFlight is " + std::to_string(frames) +
                                                ": must be in 1.." + std::to_string(kMaxFramesInFlight)};
}

// record()'s check of the frame index against the stage's framesInFlight.
inline Status checkFrame(uint32_t frame, uint32_t frames, const char* owner) {
  if (frame < frames) return {};
  return Error{ErrorCode::kInvalidArgument, std::string(owner) + "::frame is " + std::to_string(frame) +
                                                "; the stage was created with framesInFlight = " + std::to_string(frames)};
}

// A device-local (or `usage`) buffer of at least 16 bytes (one vec4: empty tables still bind) into `b`.
inline Status makeBuffer(ContextImpl& ctx, Buffer& b, VkDeviceSize bytes, MemoryUsage usage = MemoryUsage::kDeviceLocal,
                         VkBufferUsageFlags extraUsage = 0) {
  auto r = ctx.allocator->createBuffer(std::max<VkDeviceSize>(bytes, 16), usage, extraUsage);
  if (!r) return r.error();
  b = std::move(r.value());
  return {};
}

// Mesa's llvmpipe (lavapipe) ends the loops of a shader invocation once it has run 65535 loop
// iterations (a guard against endless loops; measured here to count the iterations of all of an
// invocation's loops together, each vector of lanes iterating while any lane does): on that driver,
// stages bound their shaders' loop iterations and refuse layouts that would exceed it.
inline constexpr uint64_t kLlvmpipeLoopLimit = 65535;
inline bool limitsLoopIterations(const ContextImpl& ctx) { return ctx.info.driverName == "llvmpipe"; }

// A stage's path (an enum with kAuto, kGeneral and kFused): an error naming `createInfo`::path for any
// other value.
template <typename Path>
Status checkPathValue(Path path, const char* createInfo) {
  if (path == Path::kAuto || path == Path::kGeneral || path == Path::kFused) return {};
  return Error{ErrorCode::kInvalidArgument, std::string(createInfo) + "::path is " +
                                                std::to_string(static_cast<int>(path)) +
                                                "; it must be kAuto, kGeneral or kFused"};
}

// A forced kFused on a device whose shared memory holds no fused sort (`capacity` 0): kUnsupported.
template <typename Path>
Status checkFusedSortFits(const ContextImpl& ctx, Path path, uint32_t capacity, const char* createInfo) {
  if (path != Path::kFused || capacity > 0) return {};
  return Error{ErrorCode::kUnsupported, std::string(createInfo) + "::path kFused: the device '" + ctx.info.name +
                                            "' has " + std::to_string(ctx.info.maxComputeSharedMemorySize) +
                                            " bytes of compute shared memory, fewer than the fused sort needs"};
}

// For llvmpipe's loop guard: the loop iterations one invocation of `groupSize` runs to find the
// sort's width (the power of two >= items) and in bitonicSortShared (shaders/shared/bitonic_sort.h):
// the size loop, and per stage one stride step and at most ceil(width / 2 / groupSize)
// compare-exchanges.
struct BitonicTrips {
  uint64_t width = 1;  // the power of two >= items
  uint64_t trips = 0;
};
inline BitonicTrips bitonicSortTrips(uint64_t items, uint64_t groupSize) {
  BitonicTrips b;
  uint64_t log2 = 0;
  while (b.width < items) {
    b.width *= 2;
    ++log2;
  }
  const uint64_t stages = log2 * (log2 + 1) / 2;
  b.trips = log2 + log2 + stages * (1 + (b.width / 2 + groupSize - 1) / groupSize);
  return b;
}

// The capacity of a fused path's shared-memory sort (shaders/shared/bitonic_sort.h, 8 bytes per
// item): the largest power of two in [minCapacity, maxCapacity] whose items fit the device's
// maxComputeSharedMemorySize beside the `reservedBytes` of the shader's other shared variables; 0
// when not even minCapacity fits.
inline uint32_t fusedSortCapacity(const ContextImpl& ctx, uint32_t reservedBytes, uint32_t minCapacity,
                                  uint32_t maxCapacity) {
  const uint64_t shared = ctx.info.maxComputeSharedMemorySize;
  uint32_t capacity = 0;
  for (uint32_t c = minCapacity; c <= maxCapacity && uint64_t{c} * 8 + reservedBytes <= shared; c *= 2) capacity = c;
  return capacity;
}

// The pipelines of `shader` whose first specialization constant (the pass) is firstPass ..
// firstPass + out.size() - 1.
inline Status getPassPipelines(ContextImpl& ctx, const char* shader, uint32_t bindingCount, uint32_t pushConstantSize,
                               std::span<const Pipeline*> out, uint32_t firstPass = 0) {
  for (uint32_t i = 0; i < out.size(); ++i) {
    auto p = ctx.pipelines->get({shader, bindingCount, pushConstantSize, {firstPass + i}});
    if (!p) return p.error();
    out[i] = *p;
  }
  return {};
}

// record()'s (or recordUpload()'s) first check; the message reads "<stage>::<method>: commandBuffer is null".
inline Status checkCommandBuffer(VkCommandBuffer commandBuffer, const char* stage, const char* method = "record") {
  if (commandBuffer != VK_NULL_HANDLE) return {};
  return Error{ErrorCode::kInvalidArgument, std::string(stage) + "::" + method + ": commandBuffer is null"};
}

// record()'s tail: the validation error, nothing for no passes, else the passes into the host's buffer.
// `stats` is reset, then holds what was recorded.
inline Status recordPasses(const Result<Recorder>& rec, VkCommandBuffer commandBuffer, const RecordSync& sync,
                           RecordStats& stats) {
  stats = {};
  if (!rec) return rec.error();
  if (rec->passes().empty()) return {};
  return rec->record(commandBuffer, sync, VK_NULL_HANDLE, &stats);
}

// The convenience path's sync: uploads are copied in before the passes, results copied out after.
inline RecordSync copyInCopyOutSync() {
  return RecordSync{.srcStage = VK_PIPELINE_STAGE_2_COPY_BIT,
                    .srcAccess = VK_ACCESS_2_TRANSFER_WRITE_BIT,
                    .dstStage = VK_PIPELINE_STAGE_2_COPY_BIT,
                    .dstAccess = VK_ACCESS_2_TRANSFER_READ_BIT};
}

// The convenience path's particles: device copies of the two particle arrays, their staging and a
// read-back buffer holding them (at 0 and bytes()) and `extraReadback` bytes of the stage's own outputs
// after them (at extraOffset()). Made or grown on first use; the stage keeps it between runs.
class RunParticles {
 public:
  // Sizes the buffers and writes the particles into the staging buffer.
  Status prepare(ContextImpl& ctx, std::span<const Float4> particles, std::span<const Float4> prevParticles,
                 VkDeviceSize extraReadback) {
    bytes_ = particles.size_bytes();
    auto ensure = [&](Buffer& b, VkDeviceSize size, MemoryUsage usage) {
      return ctx.allocator->ensureBuffer(b, std::max<VkDeviceSize>(size, 16), usage);
    };
    VKC_TRY(ensure(particles_, bytes_, MemoryUsage::kDeviceLocal));
    VKC_TRY(ensure(prevParticles_, bytes_, MemoryUsage::kDeviceLocal));
    VKC_TRY(ensure(upload_, 2 * bytes_, MemoryUsage::kUpload));
    VKC_TRY(ensure(readback_, 2 * bytes_ + extraReadback, MemoryUsage::kReadback));
    if (bytes_ > 0) {
      std::memcpy(upload_.mapped(), particles.data(), bytes_);
      std::memcpy(static_cast<char*>(upload_.mapped()) + bytes_, prevParticles.data(), bytes_);
    }
    return {};
  }
  BufferRange particles() const { return {particles_.handle(), 0, bytes_}; }
  BufferRange prevParticles() const { return {prevParticles_.handle(), 0, bytes_}; }
  VkBuffer readback() const { return readback_.handle(); }
  VkDeviceSize extraOffset() const { return 2 * bytes_; }
  const char* extra() const { return static_cast<const char*>(readback_.mapped()) + 2 * bytes_; }
  // The copies from the staging buffer into the device copies, and from those into the read-back buffer.
  void copyIn(const ContextImpl& ctx, VkCommandBuffer cmd) const {
    copy(ctx, cmd, upload_, 0, particles_, 0);
    copy(ctx, cmd, upload_, bytes_, prevParticles_, 0);
  }
  void copyOut(const ContextImpl& ctx, VkCommandBuffer cmd) const {
    copy(ctx, cmd, particles_, 0, readback_, 0);
    copy(ctx, cmd, prevParticles_, 0, readback_, bytes_);
  }
  // After the submission: the particles into the host's arrays.
  void readBack(std::span<Float4> particles, std::span<Float4> prevParticles) const {
    if (bytes_ == 0) return;
    std::memcpy(particles.data(), readback_.mapped(), bytes_);
    std::memcpy(prevParticles.data(), static_cast<const char*>(readback_.mapped()) + bytes_, bytes_);
  }

 private:
  void copy(const ContextImpl& ctx, VkCommandBuffer cmd, const Buffer& src, VkDeviceSize srcOffset, const Buffer& dst,
            VkDeviceSize dstOffset) const {
    if (bytes_ == 0) return;
    const VkBufferCopy region{srcOffset, dstOffset, bytes_};
    ctx.vk.vkCmdCopyBuffer(cmd, src.handle(), dst.handle(), 1, &region);
  }

  Buffer particles_, prevParticles_, upload_, readback_;
  VkDeviceSize bytes_ = 0;
};

// After the submission that recorded `rec` with `pool` completed: each pass's GPU time into `timings`.
inline Status storeTimings(const Recorder& rec, VkQueryPool pool, std::vector<PassTiming>& timings) {
  auto t = rec.readTimings(pool);
  if (!t) return t.error();
  timings = std::move(t.value());
  return {};
}

}  // namespace vkc::detail
