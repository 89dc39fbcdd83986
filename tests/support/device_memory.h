// Device memory for tests through DeviceMemoryCallbacks: one vkAllocateMemory per buffer, counted, and
// an allocation that can be made to fail (the k-th call returns VK_ERROR_OUT_OF_DEVICE_MEMORY), so
// that tests can check that every failure is reported and that nothing leaks.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "vkcollide/vkcollide.h"
#include "vulkan/context_impl.h"

namespace vkc::test {

class TestDeviceMemory {
 public:
  TestDeviceMemory(const detail::ContextImpl& ctx) : ctx_(ctx) {}  // NOLINT: the device's memory
  DeviceMemoryCallbacks callbacks() { return {this, &allocate, &release}; }

  // The call (0-based) that fails; -1: none.
  void failAt(int64_t call) { failAt_ = call; }
  // What the failing call returns (default VK_ERROR_OUT_OF_DEVICE_MEMORY; e.g. VK_ERROR_DEVICE_LOST).
  void failWith(VkResult result) { failWith_ = result; }
  int64_t calls() const { return calls_; }
  int64_t live() const { return live_; }
  VkDeviceSize liveBytes() const { return liveBytes_; }

 private:
  static VkResult allocate(void* user, const VkMemoryRequirements& req, VkMemoryPropertyFlags required,
                           VkMemoryPropertyFlags preferred, DeviceMemoryAllocation* out);
  static void release(void* user, const DeviceMemoryAllocation& a);

  const detail::ContextImpl& ctx_;
  std::mutex mutex_;
  int64_t failAt_ = -1;
  VkResult failWith_ = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  int64_t calls_ = 0;
  int64_t live_ = 0;
  VkDeviceSize liveBytes_ = 0;
};

// The import info of the test context's device: its handles, no queue (VK_NULL_HANDLE) unless
// `withQueue`, nothing else set.
ContextImportInfo testImportInfo(const detail::ContextImpl& ctx, bool withQueue);

// An imported view of the test context's device: no queue (VK_NULL_HANDLE) unless `withQueue`, and
// the given memory callbacks.
Result<std::unique_ptr<Context>> importTestContext(const detail::ContextImpl& ctx, bool withQueue,
                                                   const DeviceMemoryCallbacks& memory = {});

}  // namespace vkc::test
