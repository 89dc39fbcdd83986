// Private: what every stage's Impl shares: the timestamp pool it owns, its device buffers, the
// pipelines of its shader, and the tails of record() and of the convenience path run().
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "context_impl.h"
#include "recorder.h"

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

// A device-local (or `usage`) buffer of at least 16 bytes (one vec4: empty tables still bind) into `b`.
inline Status makeBuffer(ContextImpl& ctx, Buffer& b, VkDeviceSize bytes, MemoryUsage usage = MemoryUsage::kDeviceLocal,
                         VkBufferUsageFlags extraUsage = 0) {
  auto r = ctx.allocator->createBuffer(std::max<VkDeviceSize>(bytes, 16), usage, extraUsage);
  if (!r) return r.error();
  b = std::move(r.value());
  return {};
}

// The pipelines of `shader` whose first specialization constant (the pass) is 0..out.size()-1.
inline Status getPassPipelines(ContextImpl& ctx, const char* shader, uint32_t bindingCount, uint32_t pushConstantSize,
                               std::span<const Pipeline*> out) {
  for (uint32_t pass = 0; pass < out.size(); ++pass) {
    auto p = ctx.pipelines->get({shader, bindingCount, pushConstantSize, {pass}});
    if (!p) return p.error();
    out[pass] = *p;
  }
  return {};
}

// record()'s first check; the message reads "<stage>::record: commandBuffer is null".
inline Status checkCommandBuffer(VkCommandBuffer commandBuffer, const char* stage) {
  if (commandBuffer != VK_NULL_HANDLE) return {};
  return Error{ErrorCode::kInvalidArgument, std::string(stage) + "::record: commandBuffer is null"};
}

// record()'s tail: the validation error, nothing for no passes, else the passes into the host's buffer.
inline Status recordPasses(const Result<Recorder>& rec, VkCommandBuffer commandBuffer, const RecordSync& sync) {
  if (!rec) return rec.error();
  if (rec->passes().empty()) return {};
  return rec->record(commandBuffer, sync);
}

// The convenience path's sync: uploads are copied in before the passes, results copied out after.
inline RecordSync copyInCopyOutSync() {
  return RecordSync{.srcStage = VK_PIPELINE_STAGE_2_COPY_BIT,
                    .srcAccess = VK_ACCESS_2_TRANSFER_WRITE_BIT,
                    .dstStage = VK_PIPELINE_STAGE_2_COPY_BIT,
                    .dstAccess = VK_ACCESS_2_TRANSFER_READ_BIT};
}

// After the submission that recorded `rec` with `pool` completed: each pass's GPU time into `timings`.
inline Status storeTimings(const Recorder& rec, VkQueryPool pool, std::vector<PassTiming>& timings) {
  auto t = rec.readTimings(pool);
  if (!t) return t.error();
  timings = std::move(t.value());
  return {};
}

}  // namespace vkc::detail
