// The drape sample's Vulkan scaffolding (see gpu.h).
#include "gpu.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cloth_fs.spv.h"
#include "cloth_vs.spv.h"
#include "constraints.spv.h"
#include "integrate.spv.h"

namespace drape {

namespace {

uint64_t gValidationMessages = 0;

VKAPI_ATTR VkBool32 VKAPI_CALL onValidation(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                            VkDebugUtilsMessageTypeFlagsEXT,
                                            const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  ++gValidationMessages;
  std::fprintf(stderr, "drape: validation: %s\n",
               data != nullptr && data->pMessage != nullptr ? data->pMessage : "?");
  return VK_FALSE;
}

bool hasLayer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& l) { return std::strcmp(l.layerName, name) == 0; });
}

}  // namespace

uint64_t validationMessages() {
  return gValidationMessages;
}

Gpu createGpu(const Options& o) {
  Gpu g;
  DRAPE_VK(volkInitialize());
  std::vector<const char*> layers, extensions;
  if (o.validate) {
    if (!hasLayer("VK_LAYER_KHRONOS_validation")) {
      fail("--validate: VK_LAYER_KHRONOS_validation is not installed (Debian: vulkan-validationlayers)");
    }
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkcollide drape sample";
  app.apiVersion = VK_API_VERSION_1_3;
  const VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pNext = o.validate ? &features : nullptr;
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  ici.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ici.ppEnabledExtensionNames = extensions.data();
  DRAPE_VK(vkCreateInstance(&ici, nullptr, &g.instance));
  volkLoadInstance(g.instance);
  if (o.validate) {
    VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mci.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType =
        VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mci.pfnUserCallback = onValidation;
    DRAPE_VK(vkCreateDebugUtilsMessengerEXT(g.instance, &mci, nullptr, &g.messenger));
  }

  // A device with one queue family that does graphics and compute (render and simulate in one
  // command buffer), Vulkan 1.3 and timestamps; --device picks by name substring.
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(g.instance, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(g.instance, &n, devices.data());
  int bestRank = 1 << 30;
  for (VkPhysicalDevice d : devices) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(d, &p);
    if (p.apiVersion < VK_API_VERSION_1_3) continue;
    if (!o.device.empty() && std::string(p.deviceName).find(o.device) == std::string::npos) continue;
    uint32_t fc = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d, &fc, nullptr);
    std::vector<VkQueueFamilyProperties> fams(fc);
    vkGetPhysicalDeviceQueueFamilyProperties(d, &fc, fams.data());
    for (uint32_t f = 0; f < fc; ++f) {
      const VkQueueFlags need = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
      if ((fams[f].queueFlags & need) != need) continue;
      const int rank = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 0
                       : p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 1
                                                                                : 2;
      if (rank < bestRank) {
        bestRank = rank;
        g.physical = d;
        g.family = f;
        g.timestampBits = fams[f].timestampValidBits;
      }
      break;
    }
  }
  if (g.physical == VK_NULL_HANDLE)
    fail("no Vulkan 1.3 device with a graphics+compute queue" +
         (o.device.empty() ? std::string() : " matching '" + o.device + "'"));
  vkGetPhysicalDeviceProperties(g.physical, &g.props);
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &driver};
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &subgroup};
  vkGetPhysicalDeviceProperties2(g.physical, &props2);
  g.subgroupSize = subgroup.subgroupSize;
  g.driver = std::string(driver.driverName) + " " + driver.driverInfo;
  vkGetPhysicalDeviceMemoryProperties(g.physical, &g.memory);

  // What vkcollide needs (vkcollide/context.h): Vulkan 1.3 with synchronization2 and maintenance4,
  // VK_KHR_push_descriptor. The sample adds dynamicRendering for its own render.
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = g.family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  f13.synchronization2 = VK_TRUE;
  f13.maintenance4 = VK_TRUE;
  f13.dynamicRendering = VK_TRUE;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f13};
  const char* deviceExtensions[] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = 1;
  dci.ppEnabledExtensionNames = deviceExtensions;
  DRAPE_VK(vkCreateDevice(g.physical, &dci, nullptr, &g.device));
  volkLoadDevice(g.device);
  vkGetDeviceQueue(g.device, g.family, 0, &g.queue);
  return g;
}

namespace {

uint32_t memoryType(const Gpu& g, uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) {
  for (VkMemoryPropertyFlags flags : {want, fallback}) {
    for (uint32_t i = 0; i < g.memory.memoryTypeCount; ++i) {
      if ((bits & (1u << i)) != 0 && (g.memory.memoryTypes[i].propertyFlags & flags) == flags) return i;
    }
  }
  fail("no suitable memory type");
}

VkDeviceMemory allocate(const Gpu& g, const VkMemoryRequirements& req, bool host) {
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex =
      host ? memoryType(g, req.memoryTypeBits,
                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                            VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
           : memoryType(g, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  VkDeviceMemory mem = VK_NULL_HANDLE;
  DRAPE_VK(vkAllocateMemory(g.device, &mai, nullptr, &mem));
  return mem;
}

}  // namespace

Buffer createBuffer(const Gpu& g, VkDeviceSize size, VkBufferUsageFlags usage, bool host) {
  Buffer b;
  b.size = size;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = usage;
  DRAPE_VK(vkCreateBuffer(g.device, &bci, nullptr, &b.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(g.device, b.buffer, &req);
  b.memory = allocate(g, req, host);
  DRAPE_VK(vkBindBufferMemory(g.device, b.buffer, b.memory, 0));
  if (host) DRAPE_VK(vkMapMemory(g.device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

void destroy(const Gpu& g, Buffer& b) {
  if (b.buffer != VK_NULL_HANDLE) vkDestroyBuffer(g.device, b.buffer, nullptr);
  if (b.memory != VK_NULL_HANDLE) vkFreeMemory(g.device, b.memory, nullptr);
  b = {};
}

Image createImage(const Gpu& g, uint32_t w, uint32_t h, VkFormat format, VkImageUsageFlags usage,
                  VkImageAspectFlags aspect) {
  Image im;
  VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ici.imageType = VK_IMAGE_TYPE_2D;
  ici.format = format;
  ici.extent = {w, h, 1};
  ici.mipLevels = 1;
  ici.arrayLayers = 1;
  ici.samples = VK_SAMPLE_COUNT_1_BIT;
  ici.tiling = VK_IMAGE_TILING_OPTIMAL;
  ici.usage = usage;
  ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  DRAPE_VK(vkCreateImage(g.device, &ici, nullptr, &im.image));
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(g.device, im.image, &req);
  im.memory = allocate(g, req, false);
  DRAPE_VK(vkBindImageMemory(g.device, im.image, im.memory, 0));
  VkImageViewCreateInfo vci{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vci.image = im.image;
  vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vci.format = format;
  vci.subresourceRange = {aspect, 0, 1, 0, 1};
  DRAPE_VK(vkCreateImageView(g.device, &vci, nullptr, &im.view));
  return im;
}

void destroy(const Gpu& g, Image& im) {
  vkDestroyImageView(g.device, im.view, nullptr);
  vkDestroyImage(g.device, im.image, nullptr);
  vkFreeMemory(g.device, im.memory, nullptr);
  im = {};
}

namespace {

VkShaderModule shaderModule(const Gpu& g, const uint32_t* words, size_t bytes) {
  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = bytes;
  smci.pCode = words;
  VkShaderModule m = VK_NULL_HANDLE;
  DRAPE_VK(vkCreateShaderModule(g.device, &smci, nullptr, &m));
  return m;
}

// `bindingCount` storage buffers (push descriptors) and a 32-byte push constant block.
ComputePipeline computePipeline(const Gpu& g, const uint32_t* words, size_t bytes, uint32_t bindingCount) {
  ComputePipeline p;
  VkDescriptorSetLayoutBinding bindings[2] = {};
  for (uint32_t b = 0; b < bindingCount; ++b) {
    bindings[b].binding = b;
    bindings[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[b].descriptorCount = 1;
    bindings[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dslci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  dslci.bindingCount = bindingCount;
  dslci.pBindings = bindings;
  DRAPE_VK(vkCreateDescriptorSetLayout(g.device, &dslci, nullptr, &p.setLayout));
  const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 32};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &p.setLayout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  DRAPE_VK(vkCreatePipelineLayout(g.device, &plci, nullptr, &p.layout));
  VkShaderModule module = shaderModule(g, words, bytes);
  VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = module;
  cpci.stage.pName = "main";
  cpci.layout = p.layout;
  DRAPE_VK(vkCreateComputePipelines(g.device, VK_NULL_HANDLE, 1, &cpci, nullptr, &p.pipeline));
  vkDestroyShaderModule(g.device, module, nullptr);
  return p;
}

}  // namespace

ComputePipeline integratePipeline(const Gpu& g) {
  return computePipeline(g, vkc_spv_integrate, sizeof(vkc_spv_integrate), 2);
}

ComputePipeline constraintsPipeline(const Gpu& g) {
  return computePipeline(g, vkc_spv_constraints, sizeof(vkc_spv_constraints), 1);
}

void destroy(const Gpu& g, ComputePipeline& p) {
  vkDestroyPipeline(g.device, p.pipeline, nullptr);
  vkDestroyPipelineLayout(g.device, p.layout, nullptr);
  vkDestroyDescriptorSetLayout(g.device, p.setLayout, nullptr);
  p = {};
}

GraphicsPipeline graphicsPipeline(const Gpu& g) {
  GraphicsPipeline p;
  // The particle buffer again, as a storage buffer for the vertex shader's normals.
  VkDescriptorSetLayoutBinding binding0{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_VERTEX_BIT,
                                        nullptr};
  VkDescriptorSetLayoutCreateInfo dslci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  dslci.bindingCount = 1;
  dslci.pBindings = &binding0;
  DRAPE_VK(vkCreateDescriptorSetLayout(g.device, &dslci, nullptr, &p.setLayout));
  const VkPushConstantRange range{VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                                  sizeof(RenderPush)};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &p.setLayout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  DRAPE_VK(vkCreatePipelineLayout(g.device, &plci, nullptr, &p.layout));
  VkShaderModule vs = shaderModule(g, vkc_spv_cloth_vs, sizeof(vkc_spv_cloth_vs));
  VkShaderModule fs = shaderModule(g, vkc_spv_cloth_fs, sizeof(vkc_spv_cloth_fs));
  VkPipelineShaderStageCreateInfo stages[2] = {{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO},
                                               {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO}};
  stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
  stages[0].module = vs;
  stages[0].pName = "main";
  stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
  stages[1].module = fs;
  stages[1].pName = "main";
  // The particle buffer's layout: vec4 per vertex (xyz position, w inverse mass, ignored).
  const VkVertexInputBindingDescription binding{0, sizeof(vkc::Float4), VK_VERTEX_INPUT_RATE_VERTEX};
  const VkVertexInputAttributeDescription attribute{0, 0, VK_FORMAT_R32G32B32A32_SFLOAT, 0};
  VkPipelineVertexInputStateCreateInfo vi{VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  vi.vertexBindingDescriptionCount = 1;
  vi.pVertexBindingDescriptions = &binding;
  vi.vertexAttributeDescriptionCount = 1;
  vi.pVertexAttributeDescriptions = &attribute;
  VkPipelineInputAssemblyStateCreateInfo ia{VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  ia.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPipelineViewportStateCreateInfo vp{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  vp.viewportCount = 1;
  vp.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo rs{VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  rs.polygonMode = VK_POLYGON_MODE_FILL;
  rs.cullMode = VK_CULL_MODE_NONE;
  rs.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
  rs.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo ms{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  ms.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineDepthStencilStateCreateInfo ds{VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
  ds.depthTestEnable = VK_TRUE;
  ds.depthWriteEnable = VK_TRUE;
  ds.depthCompareOp = VK_COMPARE_OP_LESS;
  VkPipelineColorBlendAttachmentState blendAttachment{};
  blendAttachment.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                                   VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  VkPipelineColorBlendStateCreateInfo cb{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  cb.attachmentCount = 1;
  cb.pAttachments = &blendAttachment;
  const VkDynamicState dynamics[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dyn{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
  dyn.dynamicStateCount = 2;
  dyn.pDynamicStates = dynamics;
  VkPipelineRenderingCreateInfo rendering{VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
  rendering.colorAttachmentCount = 1;
  rendering.pColorAttachmentFormats = &kColorFormat;
  rendering.depthAttachmentFormat = kDepthFormat;
  VkGraphicsPipelineCreateInfo gpci{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, &rendering};
  gpci.stageCount = 2;
  gpci.pStages = stages;
  gpci.pVertexInputState = &vi;
  gpci.pInputAssemblyState = &ia;
  gpci.pViewportState = &vp;
  gpci.pRasterizationState = &rs;
  gpci.pMultisampleState = &ms;
  gpci.pDepthStencilState = &ds;
  gpci.pColorBlendState = &cb;
  gpci.pDynamicState = &dyn;
  gpci.layout = p.layout;
  DRAPE_VK(vkCreateGraphicsPipelines(g.device, VK_NULL_HANDLE, 1, &gpci, nullptr, &p.pipeline));
  vkDestroyShaderModule(g.device, vs, nullptr);
  vkDestroyShaderModule(g.device, fs, nullptr);
  return p;
}

Commands createCommands(const Gpu& g) {
  Commands c;
  VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpci.queueFamilyIndex = g.family;
  DRAPE_VK(vkCreateCommandPool(g.device, &cpci, nullptr, &c.pool));
  VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cbai.commandPool = c.pool;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  DRAPE_VK(vkAllocateCommandBuffers(g.device, &cbai, &c.cmd));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  DRAPE_VK(vkCreateFence(g.device, &fci, nullptr, &c.fence));
  return c;
}

void destroy(const Gpu& g, Commands& c) {
  vkDestroyFence(g.device, c.fence, nullptr);
  vkDestroyCommandPool(g.device, c.pool, nullptr);
  c = {};
}

void beginCommands(const Commands& c) {
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  DRAPE_VK(vkBeginCommandBuffer(c.cmd, &begin));
}

void submitAndWait(const Gpu& g, const Commands& c) {
  DRAPE_VK(vkEndCommandBuffer(c.cmd));
  VkCommandBufferSubmitInfo cbsi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
  cbsi.commandBuffer = c.cmd;
  VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
  si.commandBufferInfoCount = 1;
  si.pCommandBufferInfos = &cbsi;
  DRAPE_VK(vkQueueSubmit2(g.queue, 1, &si, c.fence));
  DRAPE_VK(vkWaitForFences(g.device, 1, &c.fence, VK_TRUE, UINT64_MAX));
  DRAPE_VK(vkResetFences(g.device, 1, &c.fence));
}

void submitOnce(const Gpu& g, const std::function<void(VkCommandBuffer)>& record) {
  Commands c = createCommands(g);
  beginCommands(c);
  record(c.cmd);
  submitAndWait(g, c);
  destroy(g, c);
}

void memoryBarrier(VkCommandBuffer cmd, VkPipelineStageFlags2 srcStage, VkAccessFlags2 srcAccess,
                   VkPipelineStageFlags2 dstStage, VkAccessFlags2 dstAccess) {
  VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  mb.srcStageMask = srcStage;
  mb.srcAccessMask = srcAccess;
  mb.dstStageMask = dstStage;
  mb.dstAccessMask = dstAccess;
  VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  di.memoryBarrierCount = 1;
  di.pMemoryBarriers = &mb;
  vkCmdPipelineBarrier2(cmd, &di);
}

VkImageMemoryBarrier2 imageBarrier(VkImage image, VkImageAspectFlags aspect, VkPipelineStageFlags2 srcStage,
                                   VkAccessFlags2 srcAccess, VkPipelineStageFlags2 dstStage,
                                   VkAccessFlags2 dstAccess, VkImageLayout from, VkImageLayout to) {
  VkImageMemoryBarrier2 b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
  b.srcStageMask = srcStage;
  b.srcAccessMask = srcAccess;
  b.dstStageMask = dstStage;
  b.dstAccessMask = dstAccess;
  b.oldLayout = from;
  b.newLayout = to;
  b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = {aspect, 0, 1, 0, 1};
  return b;
}

void pushBuffers(VkCommandBuffer cmd, const ComputePipeline& p, VkBuffer b0, VkBuffer b1) {
  VkDescriptorBufferInfo infos[2] = {{b0, 0, VK_WHOLE_SIZE}, {b1, 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet writes[2] = {{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET},
                                    {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET}};
  for (uint32_t b = 0; b < 2; ++b) {
    writes[b].dstBinding = b;
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[b].pBufferInfo = &infos[b];
  }
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, b1 == VK_NULL_HANDLE ? 1 : 2,
                            writes);
}

}  // namespace drape
