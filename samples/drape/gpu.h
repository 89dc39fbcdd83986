// The drape sample's Vulkan scaffolding, as a renderer has it: its own instance and device (with what
// vkcollide needs), buffers, images, its compute and graphics pipelines, barriers. Nothing here
// calls vkcollide.
#pragma once

#include <volk.h>

#include <cstdint>
#include <functional>
#include <string>

#include <glm/glm.hpp>

#include "options.h"

#define DRAPE_VK(expr)                                                                                      \
  do {                                                                                                      \
    const VkResult drape_r_ = (expr);                                                                       \
    if (drape_r_ != VK_SUCCESS) fail(std::string(#expr) + " failed: VkResult " + std::to_string(drape_r_)); \
  } while (0)

namespace drape {

// The renderer's own device.
struct Gpu {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t timestampBits = 0;
  uint32_t subgroupSize = 0;
  std::string driver;  // driver name and info (VkPhysicalDeviceDriverProperties)
};

// A device with one queue family that does graphics and compute, Vulkan 1.3 (synchronization2,
// maintenance4, dynamicRendering) and VK_KHR_push_descriptor; --validate adds the validation layer
// with synchronization validation. Exits on failure.
Gpu createGpu(const Options& o);
// Messages the validation layer reported so far.
uint64_t validationMessages();

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
};

// A buffer with its own memory: device-local, or host-visible, coherent and mapped (`host`).
Buffer createBuffer(const Gpu& g, VkDeviceSize size, VkBufferUsageFlags usage, bool host);
void destroy(const Gpu& g, Buffer& b);

struct Image {
  VkImage image = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
};

Image createImage(const Gpu& g, uint32_t w, uint32_t h, VkFormat format, VkImageUsageFlags usage,
                  VkImageAspectFlags aspect);
void destroy(const Gpu& g, Image& im);

struct ComputePipeline {
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

// The sample's solver passes (shaders/integrate.comp: particles, prev; shaders/constraints.comp:
// particles), each with its push constants (cloth_shared.h).
ComputePipeline integratePipeline(const Gpu& g);
ComputePipeline constraintsPipeline(const Gpu& g);
void destroy(const Gpu& g, ComputePipeline& p);
// Binds `p` and pushes its storage buffers (b1 only where the pipeline has two).
void pushBuffers(VkCommandBuffer cmd, const ComputePipeline& p, VkBuffer b0, VkBuffer b1 = VK_NULL_HANDLE);

// The cloth and collider render (cloth_vs.vert, cloth_fs.frag).
struct RenderPush {
  glm::mat4 viewProj;
  glm::vec4 frontColor;
  glm::vec4 backColor;
  uint32_t gridSize;
  uint32_t pad[3];
};
static_assert(sizeof(RenderPush) == 112);

constexpr VkFormat kColorFormat = VK_FORMAT_R8G8B8A8_UNORM;
constexpr VkFormat kDepthFormat = VK_FORMAT_D32_SFLOAT;

struct GraphicsPipeline {
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};
GraphicsPipeline graphicsPipeline(const Gpu& g);

// A command buffer (resettable, recorded for one submit at a time) with its pool and a fence.
struct Commands {
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
};
Commands createCommands(const Gpu& g);
void destroy(const Gpu& g, Commands& c);
// Begins recording c.cmd (one-time submit).
void beginCommands(const Commands& c);
// Ends c.cmd, submits it to the queue and waits for its fence (reset again afterwards).
void submitAndWait(const Gpu& g, const Commands& c);
// Records `record` into a command buffer of its own, submits it and waits (uploads at start-up).
void submitOnce(const Gpu& g, const std::function<void(VkCommandBuffer)>& record);

// The particle buffers the sample's solver, vkcollide and the render share (vec4: xyz + inverse mass).
struct ParticleBuffers {
  VkBuffer particles = VK_NULL_HANDLE;  // also the render's vertex buffer
  VkBuffer prev = VK_NULL_HANDLE;       // positions at the substep's start (Verlet)
  VkDeviceSize bytes = 0;               // of each
};

void memoryBarrier(VkCommandBuffer cmd, VkPipelineStageFlags2 srcStage, VkAccessFlags2 srcAccess,
                   VkPipelineStageFlags2 dstStage, VkAccessFlags2 dstAccess);
VkImageMemoryBarrier2 imageBarrier(VkImage image, VkImageAspectFlags aspect, VkPipelineStageFlags2 srcStage,
                                   VkAccessFlags2 srcAccess, VkPipelineStageFlags2 dstStage,
                                   VkAccessFlags2 dstAccess, VkImageLayout from, VkImageLayout to);

}  // namespace drape
