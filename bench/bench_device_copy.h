// The device's memory roofline for the benchmarks: a plain buffer copy (shaders/copy.comp) of n vec4,
// timed by a GPU timestamp pair. Used by bench_bounds and bench_collide_shapes (GB/s rooflines).
#pragma once

#include <cstdint>
#include <memory>

#include "shared/copy_passes.h"
#include "vkcollide/vkcollide.h"
#include "vulkan/context_impl.h"
#include "vulkan/recorder.h"

namespace vkc::bench {

// The device's copy roofline: shaders/copy.comp over n vec4, timed by a timestamp pair.
class DeviceCopy {
 public:
  static Result<std::unique_ptr<DeviceCopy>> create(detail::ContextImpl& ctx, uint32_t maxN) {
    auto c = std::unique_ptr<DeviceCopy>(new DeviceCopy(ctx));
    auto pipe = ctx.pipelines->get({gpu::kCopyStage.shader, gpu::kCopyBindingCount, sizeof(uint32_t), {}});
    if (!pipe) return pipe.error();
    c->pipeline_ = *pipe;
    const VkDeviceSize bytes = VkDeviceSize{maxN} * sizeof(Float4);
    for (detail::Buffer* b : {&c->src_, &c->dst_}) {
      auto r = ctx.allocator->createBuffer(bytes, detail::MemoryUsage::kDeviceLocal);
      if (!r) return r.error();
      *b = std::move(r.value());
    }
    // Touch both buffers once so that no timed copy pays for first-touch page faults (CPU drivers)
    // or reads never-written memory.
    VKC_TRY(ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
      ctx.vk.vkCmdFillBuffer(cmd, c->src_.handle(), 0, VK_WHOLE_SIZE, 0x3F800000u);
      ctx.vk.vkCmdFillBuffer(cmd, c->dst_.handle(), 0, VK_WHOLE_SIZE, 0u);
      return {};
    }));
    VkQueryPoolCreateInfo qpci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qpci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpci.queryCount = 2;
    VKC_VK_TRY(ctx.vk.vkCreateQueryPool(ctx.device, &qpci, nullptr, &c->queries_));
    return c;
  }

  ~DeviceCopy() {
    if (queries_ != VK_NULL_HANDLE) ctx_.vk.vkDestroyQueryPool(ctx_.device, queries_, nullptr);
  }

  // One copy of n vec4: GPU time in ms.
  Result<double> run(uint32_t n) {
    detail::Recorder rec(ctx_);
    const VkDeviceSize bytes = VkDeviceSize{n} * sizeof(Float4);
    const BufferRange ranges[] = {{src_.handle(), 0, bytes}, {dst_.handle(), 0, bytes}};
    detail::Pass p = detail::passFromDecl(gpu::kCopyPasses[0], pipeline_, ranges);
    p.setPush(n);
    // The Recorder splits the groups over x and y above the device limit.
    p.groupCount = (n + gpu::kCopyGroupSize - 1) / gpu::kCopyGroupSize;
    rec.add(std::move(p));
    VKC_TRY(ctx_.submitAndWait([&](VkCommandBuffer cmd) { return rec.record(cmd, RecordSync{}, queries_); }));
    uint64_t stamps[2] = {};
    VKC_VK_TRY(ctx_.vk.vkGetQueryPoolResults(ctx_.device, queries_, 0, 2, sizeof stamps, stamps, sizeof(uint64_t),
                                             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    return ctx_.timestampDeltaNs(stamps[0], stamps[1]) * 1e-6;
  }

 private:
  explicit DeviceCopy(detail::ContextImpl& ctx) : ctx_(ctx) {}
  detail::ContextImpl& ctx_;
  const detail::Pipeline* pipeline_ = nullptr;
  detail::Buffer src_, dst_;
  VkQueryPool queries_ = VK_NULL_HANDLE;
};

}  // namespace vkc::bench
