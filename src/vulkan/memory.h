// Private: device memory. Buffers are suballocated from a few large VkDeviceMemory blocks per memory
// type (first fit over an ordered free list, neighbours coalesced on free). Small and explicit: VMA is
// not in Debian, and vkcollide needs only buffers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "vk_common.h"
#include "vkcollide/context.h"

namespace vkc::detail {

// Offsets within one block: first fit, aligned, coalescing. Pure bookkeeping (unit-tested alone).
class RangeAllocator {
 public:
  explicit RangeAllocator(VkDeviceSize capacity);
  // Returns the offset of `size` bytes aligned to `alignment` (a power of two), or nullopt.
  std::optional<VkDeviceSize> allocate(VkDeviceSize size, VkDeviceSize alignment);
  // Precondition: (offset, size) was returned by allocate() and not yet freed.
  void free(VkDeviceSize offset, VkDeviceSize size);
  VkDeviceSize capacity() const { return capacity_; }
  VkDeviceSize freeBytes() const;
  size_t freeRangeCount() const { return free_.size(); }

 private:
  VkDeviceSize capacity_;
  std::map<VkDeviceSize, VkDeviceSize> free_;  // offset -> size, disjoint and never adjacent
};

enum class MemoryUsage {
  kDeviceLocal,  // GPU-only scratch and tables
  kUpload,       // host-visible, coherent: staging for uploads
  kReadback,     // host-visible, cached if possible: staging for downloads
};

class Allocator;

// A buffer with its memory. Move-only; returns its memory to the allocator when destroyed.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  ~Buffer() { reset(); }
  void reset();

  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  void* mapped() const { return mapped_; }  // host-visible buffers only
  BufferRange range() const { return BufferRange{buffer_, 0, size_}; }
  explicit operator bool() const { return buffer_ != VK_NULL_HANDLE; }

 private:
  friend class Allocator;
  Allocator* owner_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  void* mapped_ = nullptr;
  uint32_t block_ = 0;
  VkDeviceSize offset_ = 0;
  VkDeviceSize allocSize_ = 0;
  bool hostVisible_ = false;
  bool external_ = false;            // memory from the host's DeviceMemoryCallbacks
  DeviceMemoryAllocation hostAlloc_;  // when external_
};

class Allocator {
 public:
  static constexpr VkDeviceSize kBlockSize = 64ull << 20;

  // With callbacks.allocate set, every buffer's memory comes from the host's callbacks.
  Allocator(const VolkDeviceTable& vk, VkDevice device, const VkPhysicalDeviceMemoryProperties& props,
            const DeviceMemoryCallbacks& callbacks = {});
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // Creates a buffer of `size` bytes (> 0). STORAGE and TRANSFER_SRC/DST usages are always added.
  Result<Buffer> createBuffer(VkDeviceSize size, MemoryUsage usage, VkBufferUsageFlags extraUsage = 0);
  // Keeps `b` if it already holds `size` bytes, else replaces it with a new buffer of that size.
  Status ensureBuffer(Buffer& b, VkDeviceSize size, MemoryUsage usage);
  size_t blockCount() const { return blocks_.size(); }
  // Buffers alive now and their requested sizes, by kind of memory (what MemoryRequirements counts).
  MemoryRequirements inUse() const;

 private:
  friend class Buffer;
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint32_t memoryType = 0;
    void* mapped = nullptr;
    std::unique_ptr<RangeAllocator> ranges;
  };
  void release(Buffer& b);
  std::optional<uint32_t> findMemoryType(uint32_t typeBits, MemoryUsage usage) const;
  Status bindFromBlocks(Buffer& out, const VkMemoryRequirements& req, MemoryUsage usage);
  Status bindFromHost(Buffer& out, const VkMemoryRequirements& req, MemoryUsage usage);

  const VolkDeviceTable& vk_;
  VkDevice device_;
  VkPhysicalDeviceMemoryProperties props_;
  DeviceMemoryCallbacks callbacks_;
  std::vector<Block> blocks_;
  MemoryRequirements inUse_;
  mutable std::mutex mutex_;
};

}  // namespace vkc::detail
