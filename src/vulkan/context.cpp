#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "context_impl.h"
#include "radix_sort_stage.h"

namespace vkc {
namespace detail {

const char* vkResultName(VkResult r) {
  switch (r) {
#define VKC_CASE(x) \
  case x: return #x;
    VKC_CASE(VK_SUCCESS)
    VKC_CASE(VK_NOT_READY)
    VKC_CASE(VK_TIMEOUT)
    VKC_CASE(VK_INCOMPLETE)
    VKC_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    VKC_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    VKC_CASE(VK_ERROR_INITIALIZATION_FAILED)
    VKC_CASE(VK_ERROR_DEVICE_LOST)
    VKC_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    VKC_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    VKC_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    VKC_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    VKC_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    VKC_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    VKC_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    VKC_CASE(VK_ERROR_UNKNOWN)
#undef VKC_CASE
    default: return "VkResult(other)";
  }
}

namespace {

// volk's global loader state: initialised once per process.
Status initLoader(PFN_vkGetInstanceProcAddr gipa) {
  static std::once_flag once;
  static VkResult result = VK_SUCCESS;
  std::call_once(once, [&] {
    if (gipa != nullptr) {
      volkInitializeCustom(gipa);
    } else {
      result = volkInitialize();
    }
  });
  if (result != VK_SUCCESS) {
    return Error{ErrorCode::kUnsupported,
                 "no Vulkan loader found (libvulkan.so.1); install libvulkan1 and a driver "
                 "(mesa-vulkan-drivers for the CPU driver lavapipe)"};
  }
  return {};
}

std::string vendorName(uint32_t id) {
  switch (id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x106B: return "Apple";
    case 0x10005: return "Mesa (CPU)";
    default: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%04X", id);
      return buf;
    }
  }
}

// A queue family with compute; graphics+compute preferred (samples render in the same command buffer).
std::optional<uint32_t> pickQueueFamily(VkPhysicalDevice device) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &n, families.data());
  std::optional<uint32_t> computeOnly;
  for (uint32_t i = 0; i < n; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) == 0) continue;
    if (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) return i;
    if (!computeOnly) computeOnly = i;
  }
  return computeOnly;
}

bool hasInstanceLayer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  return std::any_of(layers.begin(), layers.end(), [&](auto& l) { return std::strcmp(l.layerName, name) == 0; });
}

bool hasInstanceExtension(const char* name, const char* layer = nullptr) {
  uint32_t n = 0;
  vkEnumerateInstanceExtensionProperties(layer, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateInstanceExtensionProperties(layer, &n, exts.data());
  return std::any_of(exts.begin(), exts.end(), [&](auto& e) { return std::strcmp(e.extensionName, name) == 0; });
}

VKAPI_ATTR VkBool32 VKAPI_CALL debugCallback(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                             VkDebugUtilsMessageTypeFlagsEXT,
                                             const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* impl = static_cast<ContextImpl*>(user);
  impl->validationMessages.fetch_add(1);
  const char* msg = data != nullptr && data->pMessage != nullptr ? data->pMessage : "(no message)";
  if (impl->onValidationMessage) {
    impl->onValidationMessage(msg);
  } else {
    std::fprintf(stderr, "vkcollide: validation: %s\n", msg);
  }
  return VK_FALSE;
}

struct InstanceSetup {
  VkInstance instance = VK_NULL_HANDLE;
  bool debugUtils = false;
};

Result<InstanceSetup> createInstance(bool validation) {
  VKC_TRY(initLoader(nullptr));
  uint32_t loaderVersion = 0;
  if (vkEnumerateInstanceVersion == nullptr || vkEnumerateInstanceVersion(&loaderVersion) != VK_SUCCESS ||
      loaderVersion < VK_API_VERSION_1_3) {
    return Error{ErrorCode::kUnsupported, "the Vulkan loader does not support Vulkan 1.3"};
  }
  std::vector<const char*> layers, extensions;
  InstanceSetup out;
  if (validation) {
    if (!hasInstanceLayer("VK_LAYER_KHRONOS_validation")) {
      return Error{ErrorCode::kUnsupported,
                   "validation was requested but VK_LAYER_KHRONOS_validation is not installed "
                   "(Debian: apt-get install vulkan-validationlayers)"};
    }
    layers.push_back("VK_LAYER_KHRONOS_validation");
    if (!hasInstanceExtension(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME, "VK_LAYER_KHRONOS_validation")) {
      return Error{ErrorCode::kUnsupported, "the validation layer lacks VK_EXT_validation_features"};
    }
    extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
  }
  if (hasInstanceExtension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
      (validation && hasInstanceExtension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME, "VK_LAYER_KHRONOS_validation"))) {
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    out.debugUtils = true;
  } else if (validation) {
    return Error{ErrorCode::kUnsupported, "validation needs VK_EXT_debug_utils, which is not available"};
  }
  VkInstanceCreateFlags flags = 0;
  if (hasInstanceExtension(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {  // MoltenVK
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkcollide";
  app.pEngineName = "vkcollide";
  app.apiVersion = VK_API_VERSION_1_3;
  const VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pNext = validation ? &features : nullptr;
  ici.flags = flags;
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  ici.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ici.ppEnabledExtensionNames = extensions.data();
  VKC_VK_TRY(vkCreateInstance(&ici, nullptr, &out.instance));
  volkLoadInstanceOnly(out.instance);
  return out;
}

std::vector<VkPhysicalDevice> physicalDevices(VkInstance instance) {
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(instance, &n, devices.data());
  devices.resize(n);
  return devices;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int typeRank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

std::string describe(const std::vector<DeviceInfo>& infos) {
  std::string s;
  for (const DeviceInfo& d : infos) s += "\n  [" + std::to_string(d.index) + "] " + d.name;
  return s;
}

Result<uint32_t> selectDevice(const std::vector<DeviceInfo>& infos, const char* selector) {
  if (infos.empty()) return Error{ErrorCode::kUnsupported, "no Vulkan device found"};
  std::string sel = selector != nullptr ? selector : "";
  if (sel.empty()) {
    if (const char* env = std::getenv("VKC_DEVICE")) sel = env;
  }
  if (!sel.empty()) {
    const bool numeric = std::all_of(sel.begin(), sel.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    for (const DeviceInfo& d : infos) {
      const bool match = numeric ? std::to_string(d.index) == sel : lower(d.name).find(lower(sel)) != std::string::npos;
      if (!match) continue;
      if (!d.usable()) {
        std::string why;
        for (const std::string& m : d.missing) why += "\n  missing: " + m;
        return Error{ErrorCode::kUnsupported, "device '" + d.name + "' (selected by '" + sel +
                                                  "') does not meet vkcollide's requirements:" + why};
      }
      return d.index;
    }
    return Error{ErrorCode::kInvalidArgument,
                 "no Vulkan device matches selector '" + sel + "' (VKC_DEVICE or --device); devices:" + describe(infos)};
  }
  const DeviceInfo* best = nullptr;
  for (const DeviceInfo& d : infos) {
    if (d.usable() && (best == nullptr || typeRank(d.type) < typeRank(best->type))) best = &d;
  }
  if (best == nullptr) {
    std::string why;
    for (const DeviceInfo& d : infos) {
      for (const std::string& m : d.missing) why += "\n  " + d.name + " is missing: " + m;
    }
    return Error{ErrorCode::kUnsupported, "no Vulkan device meets vkcollide's requirements:" + why};
  }
  return best->index;
}

}  // namespace

bool hasExtension(VkPhysicalDevice device, const char* name) {
  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(device, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(device, nullptr, &n, exts.data());
  return std::any_of(exts.begin(), exts.end(), [&](auto& e) { return std::strcmp(e.extensionName, name) == 0; });
}

DeviceInfo queryDeviceInfo(VkPhysicalDevice device, uint32_t index) {
  DeviceInfo info;
  info.index = index;
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &driver};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &subgroup};
  vkGetPhysicalDeviceProperties2(device, &props);
  const VkPhysicalDeviceLimits& lim = props.properties.limits;
  info.name = props.properties.deviceName;
  info.type = props.properties.deviceType;
  info.vendorId = props.properties.vendorID;
  info.deviceId = props.properties.deviceID;
  info.vendorName = vendorName(info.vendorId);
  info.driverName = driver.driverName;
  info.driverInfo = driver.driverInfo;
  info.apiVersion = props.properties.apiVersion;
  info.subgroupSize = subgroup.subgroupSize;
  info.maxStorageBufferRange = lim.maxStorageBufferRange;
  info.maxComputeSharedMemorySize = lim.maxComputeSharedMemorySize;
  info.maxComputeWorkGroupInvocations = lim.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) info.maxComputeWorkGroupCount[i] = lim.maxComputeWorkGroupCount[i];
  info.maxPushConstantsSize = lim.maxPushConstantsSize;
  info.minStorageBufferOffsetAlignment = lim.minStorageBufferOffsetAlignment;

  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(device, &mem);
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i) {
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) info.deviceLocalBytes += mem.memoryHeaps[i].size;
  }

  if (info.apiVersion < VK_API_VERSION_1_3) info.missing.push_back("Vulkan 1.3");
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f13};
  if (info.apiVersion >= VK_API_VERSION_1_3) {
    vkGetPhysicalDeviceFeatures2(device, &f2);
    if (!f13.synchronization2) info.missing.push_back("feature synchronization2");
    // glslang's vulkan1.3 target declares workgroup sizes with LocalSizeId, which needs maintenance4.
    if (!f13.maintenance4) info.missing.push_back("feature maintenance4");
  }
  const VkSubgroupFeatureFlags ops = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  if ((subgroup.supportedOperations & ops) != ops) info.missing.push_back("subgroup basic + arithmetic operations");
  if ((subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) == 0) info.missing.push_back("subgroup operations in compute");
  if (!hasExtension(device, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME)) info.missing.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  info.minSubgroupSize = subgroup.subgroupSize;
  if (info.apiVersion >= VK_API_VERSION_1_3) {  // (the 1.3 properties struct may be chained only then)
    VkPhysicalDeviceVulkan13Properties props13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
    VkPhysicalDeviceProperties2 p13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &props13};
    vkGetPhysicalDeviceProperties2(device, &p13);
    if (props13.minSubgroupSize != 0) info.minSubgroupSize = std::min(props13.minSubgroupSize, subgroup.subgroupSize);
  }
  info.missingForSort =
      radixSortMissing(subgroup.supportedOperations, info.minSubgroupSize, info.maxComputeSharedMemorySize);
  const auto family = pickQueueFamily(device);
  if (!family) {
    info.missing.push_back("a queue family with compute");
  } else {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(device, &n, nullptr);
    std::vector<VkQueueFamilyProperties> families(n);
    vkGetPhysicalDeviceQueueFamilyProperties(device, &n, families.data());
    if (families[*family].timestampValidBits > 0) {
      info.timestampPeriodNs = lim.timestampPeriod;
      info.timestampValidBits = families[*family].timestampValidBits;
    }
  }
  return info;
}

ContextImpl::~ContextImpl() {
  if (device != VK_NULL_HANDLE && vk.vkDeviceWaitIdle != nullptr && ownsDevice) vk.vkDeviceWaitIdle(device);
  pipelines.reset();
  if (ownsPipelineCache) vk.vkDestroyPipelineCache(device, pipelineCache, nullptr);
  allocator.reset();
  if (fence != VK_NULL_HANDLE) vk.vkDestroyFence(device, fence, nullptr);
  if (commandPool != VK_NULL_HANDLE) vk.vkDestroyCommandPool(device, commandPool, nullptr);
  if (ownsDevice && device != VK_NULL_HANDLE) vk.vkDestroyDevice(device, nullptr);
  if (messenger != VK_NULL_HANDLE) vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
  if (ownsInstance && instance != VK_NULL_HANDLE) vkDestroyInstance(instance, nullptr);
}

// Whether `data` starts with the header vkGetPipelineCacheData writes for this device (Vulkan spec,
// "Pipeline Cache Header": every field least significant byte first): a header version we know, this
// vendor and device, and this driver's pipelineCacheUUID. Data failing it (another GPU, a driver update,
// a truncated file) must not reach vkCreatePipelineCache, whose pInitialData must come from
// vkGetPipelineCacheData of a compatible device.
static bool pipelineCacheDataMatches(std::span<const uint8_t> data, const VkPhysicalDeviceProperties& props) {
  constexpr size_t kHeaderOneSize = 16 + VK_UUID_SIZE;
  if (data.size() < kHeaderOneSize) return false;
  auto u32 = [&](size_t at) {
    return uint32_t{data[at]} | uint32_t{data[at + 1]} << 8 | uint32_t{data[at + 2]} << 16 | uint32_t{data[at + 3]} << 24;
  };
  const uint32_t headerSize = u32(0);
  return headerSize >= kHeaderOneSize && headerSize <= data.size() && u32(4) == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
         u32(8) == props.vendorID && u32(12) == props.deviceID &&
         std::memcmp(data.data() + 16, props.pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

Status ContextImpl::finishSetup(VkPipelineCache hostCache, std::span<const uint8_t> cacheData) {
  volkLoadDeviceTable(&vk, device);
  if (vk.vkCmdPushDescriptorSetKHR == nullptr) {
    return Error{ErrorCode::kUnsupported, "the device was not created with VK_KHR_push_descriptor enabled"};
  }
  if (vk.vkCmdPipelineBarrier2 == nullptr) {
    return Error{ErrorCode::kUnsupported, "the device does not expose Vulkan 1.3 (vkCmdPipelineBarrier2)"};
  }
  vkGetPhysicalDeviceProperties(physicalDevice, &properties);
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(physicalDevice, &mem);
  allocator = std::make_unique<Allocator>(vk, device, mem, memoryCallbacks);
  if (hostCache != VK_NULL_HANDLE) {
    pipelineCache = hostCache;
  } else {
    pipelineCacheDataUsed = pipelineCacheDataMatches(cacheData, properties);
    VkPipelineCacheCreateInfo pcci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    if (pipelineCacheDataUsed) {
      pcci.initialDataSize = cacheData.size();
      pcci.pInitialData = cacheData.data();
    }
    VKC_VK_TRY(vk.vkCreatePipelineCache(device, &pcci, nullptr, &pipelineCache));
    ownsPipelineCache = true;
  }
  pipelines = std::make_unique<PipelineCache>(vk, device, exactArithmetic, pipelineCache);
  VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  cpci.queueFamilyIndex = queueFamily;
  VKC_VK_TRY(vk.vkCreateCommandPool(device, &cpci, nullptr, &commandPool));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VKC_VK_TRY(vk.vkCreateFence(device, &fci, nullptr, &fence));
  return {};
}

Status ContextImpl::submitAndWait(const std::function<Status(VkCommandBuffer)>& fn) {
  if (queue == VK_NULL_HANDLE) return Error{ErrorCode::kInvalidArgument, "the context has no queue (ContextImportInfo::queue)"};
  std::lock_guard lock(submitMutex);
  VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cbai.commandPool = commandPool;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VKC_VK_TRY(vk.vkAllocateCommandBuffers(device, &cbai, &cmd));
  struct Free {
    ContextImpl* c;
    VkCommandBuffer cmd;
    ~Free() { c->vk.vkFreeCommandBuffers(c->device, c->commandPool, 1, &cmd); }
  } freeLater{this, cmd};
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VKC_VK_TRY(vk.vkBeginCommandBuffer(cmd, &bi));
  VKC_TRY(fn(cmd));
  VKC_VK_TRY(vk.vkEndCommandBuffer(cmd));
  VkCommandBufferSubmitInfo cbsi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
  cbsi.commandBuffer = cmd;
  VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
  si.commandBufferInfoCount = 1;
  si.pCommandBufferInfos = &cbsi;
  VKC_VK_TRY(vk.vkQueueSubmit2(queue, 1, &si, fence));
  VKC_VK_TRY(vk.vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
  VKC_VK_TRY(vk.vkResetFences(device, 1, &fence));
  return {};
}

Result<VkQueryPool> ContextImpl::createTimestampPool(uint32_t count) {
  VkQueryPool pool = VK_NULL_HANDLE;
  if (info.timestampPeriodNs <= 0) return pool;
  VkQueryPoolCreateInfo qpci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qpci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qpci.queryCount = count;
  VKC_VK_TRY(vk.vkCreateQueryPool(device, &qpci, nullptr, &pool));
  return pool;
}

void ContextImpl::beginLabel(VkCommandBuffer cmd, const char* name) const {
  if (!debugLabels || vkCmdBeginDebugUtilsLabelEXT == nullptr) return;
  VkDebugUtilsLabelEXT label{VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT};
  label.pLabelName = name;
  vkCmdBeginDebugUtilsLabelEXT(cmd, &label);
}

void ContextImpl::endLabel(VkCommandBuffer cmd) const {
  if (!debugLabels || vkCmdEndDebugUtilsLabelEXT == nullptr) return;
  vkCmdEndDebugUtilsLabelEXT(cmd);
}

}  // namespace detail

using detail::ContextImpl;

const char* toString(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kBufferTooSmall: return "buffer too small";
    case ErrorCode::kLimitExceeded: return "limit exceeded";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kVulkan: return "Vulkan error";
    case ErrorCode::kOutOfMemory: return "out of memory";
    case ErrorCode::kDeviceLost: return "device lost";
    case ErrorCode::kValidation: return "validation message";
    case ErrorCode::kIo: return "I/O error";
  }
  return "unknown";
}

const char* toString(Backend backend) {
  switch (backend) {
    case Backend::kVulkan: return "vulkan";
    case Backend::kCpuScalar: return "cpu-scalar";
    case Backend::kCpuSimd: return "cpu-simd";
  }
  return "unknown";
}

Context::Context(std::unique_ptr<ContextImpl> impl) : impl_(std::move(impl)) {}
Context::~Context() = default;
const DeviceInfo& Context::deviceInfo() const { return impl_->info; }
VkDevice Context::device() const { return impl_->device; }
bool Context::imported() const { return !impl_->ownsDevice; }
bool Context::exactArithmetic() const { return impl_->exactArithmetic; }
uint64_t Context::validationMessageCount() const { return impl_->validationMessages.load(); }
bool Context::pipelineCacheDataUsed() const { return impl_->pipelineCacheDataUsed; }

Result<std::vector<uint8_t>> Context::pipelineCacheData() const {
  const ContextImpl& c = *impl_;
  // The cache may grow between the two calls (another thread creating a stage): ask again then.
  for (;;) {
    size_t size = 0;
    VKC_VK_TRY(c.vk.vkGetPipelineCacheData(c.device, c.pipelineCache, &size, nullptr));
    std::vector<uint8_t> data(size);
    const VkResult r = c.vk.vkGetPipelineCacheData(c.device, c.pipelineCache, &size, data.data());
    if (r == VK_INCOMPLETE) continue;
    if (r != VK_SUCCESS) return detail::vkError(r, "vkGetPipelineCacheData");
    data.resize(size);
    return data;
  }
}

Result<std::vector<DeviceInfo>> Context::enumerateDevices() {
  auto inst = detail::createInstance(false);
  if (!inst) return inst.error();
  std::vector<DeviceInfo> infos;
  const auto devices = detail::physicalDevices(inst->instance);
  for (uint32_t i = 0; i < devices.size(); ++i) infos.push_back(detail::queryDeviceInfo(devices[i], i));
  vkDestroyInstance(inst->instance, nullptr);
  return infos;
}

// Both callbacks or neither.
static Status checkMemoryCallbacks(const DeviceMemoryCallbacks& m, const char* owner) {
  if ((m.allocate == nullptr) == (m.free == nullptr)) return {};
  return Error{ErrorCode::kInvalidArgument, std::string(owner) + "::memory: allocate and free must both be set or both be null"};
}

Result<std::unique_ptr<Context>> Context::create(const ContextCreateInfo& info) {
  VKC_TRY(checkMemoryCallbacks(info.memory, "ContextCreateInfo"));
  auto impl = std::make_unique<ContextImpl>();
  impl->memoryCallbacks = info.memory;
  impl->exactArithmetic = info.exactArithmetic;
  impl->onValidationMessage = info.onValidationMessage;
  auto inst = detail::createInstance(info.enableValidation);
  if (!inst) return inst.error();
  impl->instance = inst->instance;
  impl->ownsInstance = true;
  impl->debugLabels = inst->debugUtils;
  if (info.enableValidation) {
    VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mci.pfnUserCallback = detail::debugCallback;
    mci.pUserData = impl.get();
    VKC_VK_TRY(vkCreateDebugUtilsMessengerEXT(impl->instance, &mci, nullptr, &impl->messenger));
  }

  const auto devices = detail::physicalDevices(impl->instance);
  std::vector<DeviceInfo> infos;
  for (uint32_t i = 0; i < devices.size(); ++i) infos.push_back(detail::queryDeviceInfo(devices[i], i));
  auto chosen = detail::selectDevice(infos, info.deviceSelector);
  if (!chosen) return chosen.error();
  impl->physicalDevice = devices[*chosen];
  impl->info = infos[*chosen];
  impl->queueFamily = *detail::pickQueueFamily(impl->physicalDevice);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = impl->queueFamily;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  f13.synchronization2 = VK_TRUE;
  f13.maintenance4 = VK_TRUE;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f13};
  const char* extensions[] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = 1;
  dci.ppEnabledExtensionNames = extensions;
  VKC_VK_TRY(vkCreateDevice(impl->physicalDevice, &dci, nullptr, &impl->device));
  impl->ownsDevice = true;
  VKC_TRY(impl->finishSetup(VK_NULL_HANDLE, info.pipelineCacheData));
  impl->vk.vkGetDeviceQueue(impl->device, impl->queueFamily, 0, &impl->queue);
  return std::unique_ptr<Context>(new Context(std::move(impl)));
}

Result<std::unique_ptr<Context>> Context::import(const ContextImportInfo& info) {
  if (info.instance == VK_NULL_HANDLE) return Error{ErrorCode::kInvalidArgument, "ContextImportInfo::instance is null"};
  if (info.physicalDevice == VK_NULL_HANDLE) return Error{ErrorCode::kInvalidArgument, "ContextImportInfo::physicalDevice is null"};
  if (info.device == VK_NULL_HANDLE) return Error{ErrorCode::kInvalidArgument, "ContextImportInfo::device is null"};
  if (info.getInstanceProcAddr == nullptr) {
    return Error{ErrorCode::kInvalidArgument, "ContextImportInfo::getInstanceProcAddr is null"};
  }
  VKC_TRY(checkMemoryCallbacks(info.memory, "ContextImportInfo"));
  if (info.pipelineCache != VK_NULL_HANDLE && !info.pipelineCacheData.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 "ContextImportInfo::pipelineCacheData: give either the host's pipelineCache or data for vkcollide's own, not both"};
  }
  VKC_TRY(detail::initLoader(info.getInstanceProcAddr));
  volkLoadInstanceOnly(info.instance);
  auto impl = std::make_unique<ContextImpl>();
  impl->memoryCallbacks = info.memory;
  impl->exactArithmetic = info.exactArithmetic;
  impl->instance = info.instance;
  impl->physicalDevice = info.physicalDevice;
  impl->device = info.device;
  impl->queue = info.queue;
  impl->queueFamily = info.queueFamilyIndex;
  impl->debugLabels = vkCmdBeginDebugUtilsLabelEXT != nullptr;
  impl->info = detail::queryDeviceInfo(info.physicalDevice, 0);
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(info.physicalDevice, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(info.physicalDevice, &n, families.data());
  if (info.queueFamilyIndex >= n || (families[info.queueFamilyIndex].queueFlags & VK_QUEUE_COMPUTE_BIT) == 0) {
    return Error{ErrorCode::kInvalidArgument, "ContextImportInfo::queueFamilyIndex " +
                                                  std::to_string(info.queueFamilyIndex) + " has no compute queue"};
  }
  if (!impl->info.usable()) {
    std::string why;
    for (const std::string& m : impl->info.missing) why += "\n  missing: " + m;
    return Error{ErrorCode::kUnsupported, "the imported device does not meet vkcollide's requirements:" + why};
  }
  VKC_TRY(impl->finishSetup(info.pipelineCache, info.pipelineCacheData));
  return std::unique_ptr<Context>(new Context(std::move(impl)));
}

}  // namespace vkc
