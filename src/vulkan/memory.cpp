#include "memory.h"

#include <algorithm>

namespace vkc::detail {

RangeAllocator::RangeAllocator(VkDeviceSize capacity) : capacity_(capacity) {
  if (capacity > 0) free_.emplace(0, capacity);
}

std::optional<VkDeviceSize> RangeAllocator::allocate(VkDeviceSize size, VkDeviceSize alignment) {
  if (size == 0) size = 1;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const VkDeviceSize start = it->first, rangeSize = it->second;
    const VkDeviceSize aligned = (start + alignment - 1) & ~(alignment - 1);
    if (aligned - start + size > rangeSize) continue;
    const VkDeviceSize end = start + rangeSize;
    free_.erase(it);
    if (aligned > start) free_.emplace(start, aligned - start);
    if (aligned + size < end) free_.emplace(aligned + size, end - (aligned + size));
    return aligned;
  }
  return std::nullopt;
}

void RangeAllocator::free(VkDeviceSize offset, VkDeviceSize size) {
  if (size == 0) size = 1;
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && offset + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += size;
      return;
    }
  }
  free_.emplace(offset, size);
}

VkDeviceSize RangeAllocator::freeBytes() const {
  VkDeviceSize total = 0;
  for (const auto& [offset, size] : free_) total += size;
  return total;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    owner_ = std::exchange(o.owner_, nullptr);
    buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, nullptr);
    block_ = o.block_;
    offset_ = o.offset_;
    allocSize_ = o.allocSize_;
    hostVisible_ = o.hostVisible_;
    external_ = o.external_;
    hostAlloc_ = o.hostAlloc_;
  }
  return *this;
}

void Buffer::reset() {
  if (owner_ != nullptr && buffer_ != VK_NULL_HANDLE) owner_->release(*this);
  owner_ = nullptr;
  buffer_ = VK_NULL_HANDLE;
  size_ = 0;
  mapped_ = nullptr;
}

Allocator::Allocator(const VolkDeviceTable& vk, VkDevice device, const VkPhysicalDeviceMemoryProperties& props,
                     const DeviceMemoryCallbacks& callbacks)
    : vk_(vk), device_(device), props_(props), callbacks_(callbacks) {}

MemoryRequirements Allocator::inUse() const {
  std::lock_guard lock(mutex_);
  return inUse_;
}

// Property flags a usage needs (required) and would like (preferred).
static void usageFlags(MemoryUsage usage, VkMemoryPropertyFlags& required, VkMemoryPropertyFlags& preferred) {
  required = preferred = 0;
  switch (usage) {
    case MemoryUsage::kDeviceLocal: required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT; break;
    case MemoryUsage::kUpload:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      break;
    case MemoryUsage::kReadback:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
      break;
  }
}

Allocator::~Allocator() {
  for (Block& b : blocks_) {
    if (b.memory != VK_NULL_HANDLE) vk_.vkFreeMemory(device_, b.memory, nullptr);
  }
}

std::optional<uint32_t> Allocator::findMemoryType(uint32_t typeBits, MemoryUsage usage) const {
  VkMemoryPropertyFlags required = 0, preferred = 0;
  usageFlags(usage, required, preferred);
  std::optional<uint32_t> fallback;
  for (uint32_t i = 0; i < props_.memoryTypeCount; ++i) {
    if ((typeBits & (1u << i)) == 0) continue;
    const VkMemoryPropertyFlags flags = props_.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (!fallback) fallback = i;
  }
  return fallback;
}

Result<Buffer> Allocator::createBuffer(VkDeviceSize size, MemoryUsage usage, VkBufferUsageFlags extraUsage) {
  if (size == 0) return Error{ErrorCode::kInvalidArgument, "buffer size must be > 0"};
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
              VK_BUFFER_USAGE_TRANSFER_DST_BIT | extraUsage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  Buffer out;
  VKC_VK_TRY(vk_.vkCreateBuffer(device_, &bci, nullptr, &out.buffer_));
  out.owner_ = this;  // from here on, `out` destroys the buffer (and frees what was bound) when it goes
  out.size_ = size;
  out.hostVisible_ = usage != MemoryUsage::kDeviceLocal;
  VkMemoryRequirements req;
  vk_.vkGetBufferMemoryRequirements(device_, out.buffer_, &req);
  VKC_TRY(callbacks_.allocate != nullptr ? bindFromHost(out, req, usage) : bindFromBlocks(out, req, usage));
  std::lock_guard lock(mutex_);
  (out.hostVisible_ ? inUse_.hostVisibleBytes : inUse_.deviceLocalBytes) += size;
  ++inUse_.bufferCount;
  return out;
}

Status Allocator::bindFromHost(Buffer& out, const VkMemoryRequirements& req, MemoryUsage usage) {
  VkMemoryPropertyFlags required = 0, preferred = 0;
  usageFlags(usage, required, preferred);
  DeviceMemoryAllocation a;
  if (const VkResult r = callbacks_.allocate(callbacks_.userData, req, required, preferred, &a); r != VK_SUCCESS) {
    return vkError(r, "DeviceMemoryCallbacks::allocate");
  }
  if (a.memory == VK_NULL_HANDLE || (usage != MemoryUsage::kDeviceLocal && a.mapped == nullptr)) {
    callbacks_.free(callbacks_.userData, a);
    return Error{ErrorCode::kInvalidArgument, usage != MemoryUsage::kDeviceLocal && a.memory != VK_NULL_HANDLE
                                                  ? "DeviceMemoryCallbacks::allocate returned host-visible memory without a mapping"
                                                  : "DeviceMemoryCallbacks::allocate returned VK_SUCCESS without memory"};
  }
  if (const VkResult r = vk_.vkBindBufferMemory(device_, out.buffer_, a.memory, a.offset); r != VK_SUCCESS) {
    callbacks_.free(callbacks_.userData, a);
    return vkError(r, "vkBindBufferMemory");
  }
  out.external_ = true;
  out.hostAlloc_ = a;
  out.allocSize_ = req.size;
  out.mapped_ = a.mapped;
  return {};
}

Status Allocator::bindFromBlocks(Buffer& out, const VkMemoryRequirements& req, MemoryUsage usage) {
  const auto type = findMemoryType(req.memoryTypeBits, usage);
  if (!type) return Error{ErrorCode::kUnsupported, "no memory type fits the buffer's usage"};

  std::lock_guard lock(mutex_);
  std::optional<VkDeviceSize> offset;
  uint32_t blockIndex = 0;
  for (; blockIndex < blocks_.size(); ++blockIndex) {
    Block& b = blocks_[blockIndex];
    if (b.memoryType != *type || !b.ranges) continue;
    if ((offset = b.ranges->allocate(req.size, req.alignment))) break;
  }
  if (!offset) {
    Block block;
    block.memoryType = *type;
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = std::max(kBlockSize, req.size);
    mai.memoryTypeIndex = *type;
    VKC_VK_TRY(vk_.vkAllocateMemory(device_, &mai, nullptr, &block.memory));
    if (props_.memoryTypes[*type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
      const VkResult r = vk_.vkMapMemory(device_, block.memory, 0, VK_WHOLE_SIZE, 0, &block.mapped);
      if (r != VK_SUCCESS) {
        vk_.vkFreeMemory(device_, block.memory, nullptr);
        return vkError(r, "vkMapMemory");
      }
    }
    block.ranges = std::make_unique<RangeAllocator>(mai.allocationSize);
    offset = block.ranges->allocate(req.size, req.alignment);
    blockIndex = static_cast<uint32_t>(blocks_.size());
    blocks_.push_back(std::move(block));
  }
  Block& b = blocks_[blockIndex];
  if (const VkResult r = vk_.vkBindBufferMemory(device_, out.buffer_, b.memory, *offset); r != VK_SUCCESS) {
    b.ranges->free(*offset, req.size);
    return vkError(r, "vkBindBufferMemory");
  }
  out.block_ = blockIndex;
  out.offset_ = *offset;
  out.allocSize_ = req.size;
  if (b.mapped != nullptr) out.mapped_ = static_cast<char*>(b.mapped) + *offset;
  return {};
}

Status Allocator::ensureBuffer(Buffer& b, VkDeviceSize size, MemoryUsage usage) {
  if (b && b.size() >= size) return {};
  auto r = createBuffer(size, usage);
  if (!r) return r.error();
  b = std::move(r.value());
  return {};
}

void Allocator::release(Buffer& b) {
  vk_.vkDestroyBuffer(device_, b.buffer_, nullptr);
  if (b.allocSize_ == 0) return;  // creation failed before memory was bound
  if (b.external_) {
    callbacks_.free(callbacks_.userData, b.hostAlloc_);
  }
  std::lock_guard lock(mutex_);
  if (!b.external_) blocks_[b.block_].ranges->free(b.offset_, b.allocSize_);
  (b.hostVisible_ ? inUse_.hostVisibleBytes : inUse_.deviceLocalBytes) -= b.size_;
  --inUse_.bufferCount;
}

}  // namespace vkc::detail
