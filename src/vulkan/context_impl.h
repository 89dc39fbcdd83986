// Private: what a Context holds. Function pointers come from volk: instance-level ones are loaded
// globally by volk, device-level ones into a per-context table (so an imported device and a created
// one can live side by side).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <span>

#include "memory.h"
#include "pipelines.h"
#include "vk_common.h"
#include "vkcollide/context.h"

namespace vkc::detail {

struct ContextImpl {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physicalDevice = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queueFamily = 0;
  VkQueue queue = VK_NULL_HANDLE;
  bool ownsInstance = false;
  bool ownsDevice = false;
  VolkDeviceTable vk{};
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  bool debugLabels = false;  // VK_EXT_debug_utils is enabled on the instance

  DeviceInfo info;
  VkPhysicalDeviceProperties properties{};
  std::atomic<uint64_t> validationMessages{0};
  ValidationCallback onValidationMessage;

  DeviceMemoryCallbacks memoryCallbacks;  // the host's, or none
  bool exactArithmetic = false;           // ContextCreateInfo::exactArithmetic: the shaders' variant
  std::unique_ptr<Allocator> allocator;
  std::unique_ptr<PipelineCache> pipelines;
  // The VkPipelineCache every pipeline is created through: the host's (ContextImportInfo::pipelineCache)
  // or our own, made from the creation's pipelineCacheData where it was for this device.
  VkPipelineCache pipelineCache = VK_NULL_HANDLE;
  bool ownsPipelineCache = false;
  bool pipelineCacheDataUsed = false;

  // Convenience submissions (upload, run, download): one pool and fence, serialized.
  std::mutex submitMutex;
  VkCommandPool commandPool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;

  ~ContextImpl();
  // Device table, allocator, pipeline cache, pipelines, pool: shared by create and import.
  // `hostCache`: ContextImportInfo::pipelineCache (or null); `cacheData`: the creation's pipelineCacheData.
  Status finishSetup(VkPipelineCache hostCache, std::span<const uint8_t> cacheData);
  // Records `fn` into a fresh primary command buffer, submits it on the queue and waits. Only the
  // convenience paths (run(), the one-call functions) call this: create() and record() never submit.
  Status submitAndWait(const std::function<Status(VkCommandBuffer)>& fn);

  // A timestamp query pool of `count` queries, or VK_NULL_HANDLE where the queue has no timestamps.
  Result<VkQueryPool> createTimestampPool(uint32_t count);

  // Nanoseconds between two timestamps of the queue (wrap-around within timestampValidBits).
  double timestampDeltaNs(uint64_t begin, uint64_t end) const {
    const uint32_t bits = info.timestampValidBits;
    const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    return static_cast<double>((end - begin) & mask) * static_cast<double>(info.timestampPeriodNs);
  }

  void beginLabel(VkCommandBuffer cmd, const char* name) const;
  void endLabel(VkCommandBuffer cmd) const;
};

// How vkcollide's own code reaches the private state behind the public classes (friend of each).
struct Internals {
  static ContextImpl& of(Context& c) { return *c.impl_; }
  static const ContextImpl& of(const Context& c) { return *c.impl_; }
  template <class Stage>
  static typename Stage::Impl& of(Stage& s) {
    return *s.impl_;
  }
  // The Impl of an object that may have none (a moved-from CpuExecutor): null then.
  template <class T>
  static typename T::Impl* ptr(const T& t) {
    return t.impl_.get();
  }
};

// Whether the physical device offers the device extension `name`.
bool hasExtension(VkPhysicalDevice device, const char* name);
// Fills a DeviceInfo, including the list of unmet requirements.
DeviceInfo queryDeviceInfo(VkPhysicalDevice device, uint32_t index);

}  // namespace vkc::detail
