#include "support/device_memory.h"

namespace vkc::test {

VkResult TestDeviceMemory::allocate(void* user, const VkMemoryRequirements& req, VkMemoryPropertyFlags required,
                                    VkMemoryPropertyFlags preferred, DeviceMemoryAllocation* out) {
  auto& self = *static_cast<TestDeviceMemory*>(user);
  std::lock_guard lock(self.mutex_);
  if (self.calls_++ == self.failAt_) return self.failWith_;
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(self.ctx_.physicalDevice, &props);
  int type = -1;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags f = props.memoryTypes[i].propertyFlags;
    if ((req.memoryTypeBits & (1u << i)) == 0 || (f & required) != required) continue;
    if (type < 0 || (f & preferred) == preferred) type = static_cast<int>(i);
    if ((f & preferred) == preferred) break;
  }
  if (type < 0) return VK_ERROR_OUT_OF_DEVICE_MEMORY;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  const auto& vk = self.ctx_.vk;
  if (VkResult r = vk.vkAllocateMemory(self.ctx_.device, &mai, nullptr, &out->memory); r != VK_SUCCESS) return r;
  out->offset = 0;
  out->mapped = nullptr;
  if (props.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    if (VkResult r = vk.vkMapMemory(self.ctx_.device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped); r != VK_SUCCESS) {
      vk.vkFreeMemory(self.ctx_.device, out->memory, nullptr);
      return r;
    }
  }
  out->userHandle = req.size;
  ++self.live_;
  self.liveBytes_ += req.size;
  return VK_SUCCESS;
}

void TestDeviceMemory::release(void* user, const DeviceMemoryAllocation& a) {
  auto& self = *static_cast<TestDeviceMemory*>(user);
  std::lock_guard lock(self.mutex_);
  self.ctx_.vk.vkFreeMemory(self.ctx_.device, a.memory, nullptr);  // unmaps too
  --self.live_;
  self.liveBytes_ -= a.userHandle;
}

ContextImportInfo testImportInfo(const detail::ContextImpl& ctx, bool withQueue) {
  ContextImportInfo ii;
  ii.instance = ctx.instance;
  ii.physicalDevice = ctx.physicalDevice;
  ii.device = ctx.device;
  ii.queueFamilyIndex = ctx.queueFamily;
  ii.queue = withQueue ? ctx.queue : VK_NULL_HANDLE;
  ii.getInstanceProcAddr = vkGetInstanceProcAddr;
  return ii;
}

Result<std::unique_ptr<Context>> importTestContext(const detail::ContextImpl& ctx, bool withQueue,
                                                   const DeviceMemoryCallbacks& memory) {
  ContextImportInfo ii = testImportInfo(ctx, withQueue);
  ii.memory = memory;
  return Context::import(ii);
}

}  // namespace vkc::test
