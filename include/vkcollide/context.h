// The Vulkan side of vkcollide: a Context is one VkDevice and one queue that vkcollide records
// work for. Engines import the device they already have (vkcollide owns nothing it imports);
// tools, tests and samples let vkcollide create one.
//
// Requirements on the device: Vulkan 1.3 with the synchronization2 and maintenance4 features, subgroup basic and
// arithmetic operations in compute shaders, and VK_KHR_push_descriptor. Context creation checks them
// and returns kUnsupported listing everything that is missing. The radix sort (and so self and inter
// collision) also needs subgroup ballot, subgroups of at least 4 invocations and 21 508 bytes of
// shared memory: DeviceInfo::missingForSort lists what a device lacks of those.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vkcollide/result.h"

namespace vkc {
#include "vkcollide/export.h"

namespace detail {
struct ContextImpl;
struct Internals;  // how vkcollide's own code reaches the Impl of the public classes
}
VKC_API_BEGIN  // after detail's forward declarations: a type's visibility is fixed where first declared

// What matters to vkcollide about a Vulkan device.
struct DeviceInfo {
  uint32_t index = 0;  // position in vkEnumeratePhysicalDevices
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t vendorId = 0;
  uint32_t deviceId = 0;
  std::string vendorName;  // "NVIDIA", "AMD", "Intel", "Mesa (CPU)", ...
  std::string driverName;  // VkPhysicalDeviceDriverProperties
  std::string driverInfo;
  uint32_t apiVersion = 0;
  uint32_t subgroupSize = 0;
  uint64_t maxStorageBufferRange = 0;
  uint32_t maxComputeSharedMemorySize = 0;
  uint32_t maxComputeWorkGroupInvocations = 0;
  uint32_t maxComputeWorkGroupCount[3] = {};
  uint32_t maxPushConstantsSize = 0;
  uint64_t minStorageBufferOffsetAlignment = 0;
  float timestampPeriodNs = 0;  // 0: the queue family has no timestamps
  uint32_t timestampValidBits = 0;
  uint64_t deviceLocalBytes = 0;
  std::vector<std::string> missing;  // requirements this device does not meet (empty: usable)
  // What the radix sort, and so self and inter collision, need beyond `missing`: subgroup ballot,
  // subgroups of at least 4 invocations, 21 508 bytes of compute shared memory (empty: every stage
  // works; otherwise bounds and shape collision still do, and those stages' create() says what lacks).
  std::vector<std::string> missingForSort;
  uint32_t minSubgroupSize = 0;  // the smallest subgroup the device may run (Vulkan 1.3), else subgroupSize

  bool usable() const { return missing.empty(); }
};

// Device memory from the host's own allocator (VMA-style). When `allocate` is set, every buffer
// vkcollide creates gets its memory from these callbacks (one call per buffer; vkcollide does no
// suballocation of its own then) and `free` gives it back; both may be called from any thread that
// calls vkcollide, never concurrently for the same context. Without them vkcollide suballocates 64 MiB
// blocks from vkAllocateMemory itself.
struct DeviceMemoryAllocation {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;  // where the buffer starts in `memory` (a multiple of the alignment asked for)
  void* mapped = nullptr;   // host-visible memory: the host address of `offset`; else null
  uint64_t userHandle = 0;  // the host's own id for the allocation, handed back to `free`
};

struct DeviceMemoryCallbacks {
  void* userData = nullptr;
  // Fills `out` with memory of a type in requirements.memoryTypeBits that has every flag of
  // `requiredFlags` (and preferably those of `preferredFlags`), at least requirements.size bytes at
  // an offset aligned to requirements.alignment, mapped when the type is host-visible. Returns
  // VK_SUCCESS, or the error (e.g. VK_ERROR_OUT_OF_DEVICE_MEMORY), which vkcollide reports as
  // ErrorCode::kOutOfMemory and after which it leaves nothing allocated for that call.
  VkResult (*allocate)(void* userData, const VkMemoryRequirements& requirements, VkMemoryPropertyFlags requiredFlags,
                       VkMemoryPropertyFlags preferredFlags, DeviceMemoryAllocation* out) = nullptr;
  void (*free)(void* userData, const DeviceMemoryAllocation& allocation) = nullptr;
};

// What a stage allocates in device memory, before it is created (XStage::memoryRequirements): the
// sum of its buffers' sizes (each buffer may take up to its memory alignment more), per kind of
// memory. The convenience path run() allocates its copies of the inputs on first use, not counted.
struct MemoryRequirements {
  VkDeviceSize deviceLocalBytes = 0;  // scratch, tables and outputs read by the GPU
  VkDeviceSize hostVisibleBytes = 0;  // staging of the static tables (written by create(), copied by recordUpload())
  uint32_t bufferCount = 0;
  friend bool operator==(const MemoryRequirements&, const MemoryRequirements&) = default;
};

// Stages keep one set of scratch buffers per frame in flight (their create info's framesInFlight),
// chosen by each record()'s `frame`: the host may record frame f + 1 while frame f still runs.
inline constexpr uint32_t kMaxFramesInFlight = 8;

// Called for every validation-layer message of a context created with validation. The default
// (empty function) prints the message to stderr; every message is also counted.
using ValidationCallback = std::function<void(const char* message)>;

struct ContextCreateInfo {
  // Which device: an index into vkEnumeratePhysicalDevices or a case-insensitive substring of the
  // device name. Null or empty: the environment variable VKC_DEVICE, and if that is unset the first
  // discrete GPU, else the first integrated GPU, else any usable device (lavapipe).
  const char* deviceSelector = nullptr;
  // Enable VK_LAYER_KHRONOS_validation with synchronization validation. Creation fails with
  // kUnsupported if the layer is not installed (it never silently runs without it).
  bool enableValidation = false;
  ValidationCallback onValidationMessage;
  DeviceMemoryCallbacks memory;  // optional: the host's device-memory allocator
  // Exact arithmetic: every division and square root in the stages' shaders correctly rounded, as the
  // CPU twins' (IEEE 754), where a device may approximate them (Vulkan allows 2.5 ULP for a / b and
  // more for sqrt; an NVIDIA H100 differs from the CPU in 29% of quotients and 17% of roots). With
  // it, and the build's NoContraction on every other operation, a conformant device gives CPU
  // scalar's results bit for bit (the conformance suite runs with it). Its pipelines come from the
  // shaders' exact-arithmetic variants, which spend a few dozen integer operations per division and
  // root (the benchmarks' --exact-arithmetic); without it the results match the CPU twins within the
  // documented tolerances (docs/integration.md, Rounding). Fixed for the context's life.
  bool exactArithmetic = false;
  // A pipeline cache's contents from an earlier run (Context::pipelineCacheData(), saved by the host):
  // the stages' pipelines are created through a VkPipelineCache made from them, so that a driver that
  // keeps compiled pipelines there skips compiling them again. Data from another device, driver or
  // cache format (its header says which) is ignored and the cache starts empty
  // (Context::pipelineCacheDataUsed() says which happened); empty: an empty cache. Read at creation only.
  std::span<const uint8_t> pipelineCacheData;
};

// A device the host already owns. vkcollide never destroys any of these handles. The device must
// have been created with the requirements above enabled (see the file comment).
struct ContextImportInfo {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physicalDevice = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queueFamilyIndex = 0;  // must support compute
  // Used only by the convenience paths (XStage::run and the one-call functions): create(),
  // recordUpload() and record() never touch a queue, so a renderer may leave this null.
  VkQueue queue = VK_NULL_HANDLE;
  PFN_vkGetInstanceProcAddr getInstanceProcAddr = nullptr;
  DeviceMemoryCallbacks memory;  // optional: the host's device-memory allocator
  bool exactArithmetic = false;  // as ContextCreateInfo::exactArithmetic
  // The host's pipeline cache on `device` (optional): vkcollide creates every pipeline through it, so
  // they are saved and loaded with the renderer's own. It must stay valid for the context's life, and
  // be internally synchronized (created without VK_PIPELINE_CACHE_CREATE_EXTERNALLY_SYNCHRONIZED_BIT),
  // because vkcollide creates pipelines from whichever thread creates a stage. vkcollide never destroys
  // it. Null: vkcollide makes its own, from `pipelineCacheData` (as ContextCreateInfo's); giving both
  // is an error.
  VkPipelineCache pipelineCache = VK_NULL_HANDLE;
  std::span<const uint8_t> pipelineCacheData;
};

// A range of a VkBuffer, in bytes. The size is needed because Vulkan cannot tell it.
struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
};

// Synchronization around recorded work. vkcollide inserts one barrier before its first pass (from
// `srcStage/srcAccess`, the host's last writes of the particle buffers) and one after its last pass
// (to `dstStage/dstAccess`, the host's next use of the outputs). Defaults are conservative.
struct RecordSync {
  VkPipelineStageFlags2 srcStage = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
  VkAccessFlags2 srcAccess = VK_ACCESS_2_MEMORY_WRITE_BIT;
  VkPipelineStageFlags2 dstStage = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
  VkAccessFlags2 dstAccess = VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT;
};

// GPU per-pass times of the last run(), in nanoseconds.
struct PassTiming {
  const char* name = "";
  double ns = 0;
};

// What one record() put into the command buffer, counted as it was recorded: the figures that bound
// the work's cost on any GPU without timing it (every stage's lastRecordStats()). On a real GPU a
// record of small cloths is bound by its dependent dispatches (each waits for the barrier before it:
// launch + drain latency), a record of large ones by its bytes. The byte counts are *declared*
// traffic: for every dispatch, the sizes of the buffer ranges its pass declares as read and as
// written (shaders/shared/<stage>_passes.h; a read-write range counts in both; a range bound but not
// touched by the pass counts in neither). They bound what the shaders touch; caches and skipped
// work make real traffic lower. README ("Cost figures") projects them to a named GPU with a
// documented model.
struct RecordStats {
  uint32_t dispatches = 0;          // vkCmdDispatch and vkCmdDispatchIndirect calls
  uint32_t indirectDispatches = 0;  // of which indirect (their workgroups are known only on the device)
  // Dispatches that must wait for an earlier dispatch of the same record: the first dispatch and
  // every dispatch with a barrier before it. The length of the record's critical path in dispatches.
  uint32_t dependentDispatches = 0;
  uint32_t barriers = 0;      // vkCmdPipelineBarrier2 calls: opening, between passes, around copies, closing
  uint32_t transfers = 0;     // vkCmdUpdateBuffer / vkCmdCopyBuffer calls (static tables, per-record data)
  uint64_t workgroups = 0;    // workgroups of the direct dispatches
  uint64_t bytesRead = 0;     // declared buffer reads of all dispatches
  uint64_t bytesWritten = 0;  // declared buffer writes of all dispatches
  uint64_t transferBytes = 0; // bytes written by the transfers

  RecordStats& operator+=(const RecordStats& o) {
    dispatches += o.dispatches;
    indirectDispatches += o.indirectDispatches;
    dependentDispatches += o.dependentDispatches;
    barriers += o.barriers;
    transfers += o.transfers;
    workgroups += o.workgroups;
    bytesRead += o.bytesRead;
    bytesWritten += o.bytesWritten;
    transferBytes += o.transferBytes;
    return *this;
  }
  bool operator==(const RecordStats&) const = default;
};

class Context {
 public:
  // Creates an instance, picks a device (see ContextCreateInfo) and creates a device and queue.
  static Result<std::unique_ptr<Context>> create(const ContextCreateInfo& info = {});
  // Wraps a host's device without taking ownership.
  static Result<std::unique_ptr<Context>> import(const ContextImportInfo& info);
  // Lists every Vulkan device with what vkcollide needs to know about it (for `vkcollide devices`).
  static Result<std::vector<DeviceInfo>> enumerateDevices();

  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& deviceInfo() const;
  VkDevice device() const;
  bool imported() const;
  bool exactArithmetic() const;  // ContextCreateInfo::exactArithmetic
  // Validation messages seen so far (0 unless created with enableValidation).
  uint64_t validationMessageCount() const;
  // The contents of the pipeline cache the stages' pipelines were created through (the host's, where
  // ContextImportInfo::pipelineCache was given), as vkGetPipelineCacheData returns them: save them and
  // pass them as pipelineCacheData next time. Pipelines are created by the stages' create(), so ask
  // after creating the stages. Some drivers keep nothing there (Mesa's lavapipe 22.3 returns only the
  // 32-byte header; it keeps compiled shaders in its own disk cache instead).
  Result<std::vector<uint8_t>> pipelineCacheData() const;
  // Whether the creation's pipelineCacheData was for this device and driver and so seeded the cache
  // (false where none was given or it was ignored).
  bool pipelineCacheDataUsed() const;

 private:
  friend struct detail::Internals;
  explicit Context(std::unique_ptr<detail::ContextImpl> impl);
  std::unique_ptr<detail::ContextImpl> impl_;
};

VKC_API_END
}  // namespace vkc
