#include "support/vulkan_fixture.h"

#include <cstdlib>
#include <cstring>

#include "vulkan/recorder.h"

namespace vkc::test {
namespace {
std::mutex gMutex;
std::vector<std::string> gMessages;
}  // namespace

Result<std::unique_ptr<Context>> createTestContext(bool exactArithmetic, std::span<const uint8_t> pipelineCacheData) {
  ContextCreateInfo ci;
  ci.enableValidation = true;
  ci.exactArithmetic = exactArithmetic;
  ci.pipelineCacheData = pipelineCacheData;
  ci.onValidationMessage = [](const char* msg) {
    std::lock_guard lock(gMutex);
    gMessages.emplace_back(msg);
  };
  return Context::create(ci);
}

Context* sharedContext(std::string* error) {
  static std::string creationError;
  static std::unique_ptr<Context> context = [] {
    // Not on lavapipe unless asked: its own division and square root are the CPU's already
    // (tests/vulkan/rounding_vulkan_test.cpp), and the CI's many pipelines then compile without the
    // correction code; ExactArithmeticVulkan and GeometryQueriesExactArithmeticVulkan run lavapipe with it.
    const char* env = std::getenv("VKC_TEST_EXACT_ARITHMETIC");
    auto r = createTestContext(env != nullptr && std::strcmp(env, "1") == 0);
    if (r && env == nullptr && !isLavapipe(r.value()->deviceInfo())) r = createTestContext(true);
    if (!r) {
      creationError = r.message();
      return std::unique_ptr<Context>();
    }
    return std::move(r.value());
  }();
  if (!context && error != nullptr) *error = creationError;
  return context.get();
}

std::vector<std::string> takeValidationMessages() {
  std::lock_guard lock(gMutex);
  return std::exchange(gMessages, {});
}

Context* exactContext(std::string* error) {
  static std::string creationError;
  static std::unique_ptr<Context> context = [] {
    auto r = createTestContext(true);
    if (!r) creationError = r.message();
    return r ? std::move(r.value()) : std::unique_ptr<Context>();
  }();
  if (!context && error != nullptr) *error = creationError;
  return context.get();
}

void VulkanTest::SetUp() {
  std::string error;
  ctx_ = context(&error);
  ASSERT_NE(ctx_, nullptr) << "no Vulkan context with validation (the Vulkan tests need "
                              "mesa-vulkan-drivers and vulkan-validationlayers): "
                           << error;
  // Messages already there came from creating the shared context (the first test reports them) or
  // from outside any test's body: they fail this test too rather than vanish.
  expectNoValidationMessages();
}

void VulkanTest::expectNoValidationMessages() {
  const std::vector<std::string> messages = takeValidationMessages();
  if (messages.empty()) return;
  std::string all;
  for (const std::string& m : messages) all += "\n  " + m;
  ADD_FAILURE() << messages.size() << " validation message(s):" << all;
}

void VulkanTest::TearDown() {
  if (ctx_ != nullptr) expectNoValidationMessages();
}

void VulkanTest::submit(const std::function<void(VkCommandBuffer)>& fn) {
  const Status s = impl().submitAndWait([&](VkCommandBuffer cmd) -> Status {
    fn(cmd);
    return {};
  });
  ASSERT_TRUE(s.ok()) << s.message();
}

void BackendTest::SetUp() {
  if (backend() != Backend::kVulkan) return;
  std::string error;
  ctx_ = sharedContext(&error);
  ASSERT_NE(ctx_, nullptr) << "no Vulkan context with validation: " << error;
  VulkanTest::expectNoValidationMessages();  // (as in VulkanTest::SetUp)
}

void VulkanTest_expectNoValidationMessagesIf(bool check) {
  if (check) VulkanTest::expectNoValidationMessages();
}

VkCommandBuffer VulkanTest::beginCommandBuffer() {
  VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cbai.commandPool = impl().commandPool;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  EXPECT_EQ(impl().vk.vkAllocateCommandBuffers(impl().device, &cbai, &cmd), VK_SUCCESS);
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  EXPECT_EQ(impl().vk.vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
  return cmd;
}

void VulkanTest::freeCommandBuffer(VkCommandBuffer cmd) {
  impl().vk.vkEndCommandBuffer(cmd);
  impl().vk.vkFreeCommandBuffers(impl().device, impl().commandPool, 1, &cmd);
}

void VulkanTest::submitRecorded(std::span<const VkCommandBuffer> cmds) {
  const auto& vk = impl().vk;
  std::lock_guard lock(impl().submitMutex);
  for (size_t i = 0; i < cmds.size(); ++i) {
    ASSERT_EQ(vk.vkEndCommandBuffer(cmds[i]), VK_SUCCESS);
    VkCommandBufferSubmitInfo cbsi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    cbsi.commandBuffer = cmds[i];
    VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    si.commandBufferInfoCount = 1;
    si.pCommandBufferInfos = &cbsi;
    ASSERT_EQ(vk.vkQueueSubmit2(impl().queue, 1, &si, i + 1 == cmds.size() ? impl().fence : VK_NULL_HANDLE), VK_SUCCESS);
  }
  ASSERT_EQ(vk.vkWaitForFences(impl().device, 1, &impl().fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
  ASSERT_EQ(vk.vkResetFences(impl().device, 1, &impl().fence), VK_SUCCESS);
  for (VkCommandBuffer cmd : cmds) vk.vkFreeCommandBuffers(impl().device, impl().commandPool, 1, &cmd);
}

detail::Buffer VulkanTest::hostBuffer(VkDeviceSize bytes) {
  auto b = impl().allocator->createBuffer(bytes, detail::MemoryUsage::kReadback);
  EXPECT_TRUE(b.ok()) << b.message();
  return b ? std::move(b.value()) : detail::Buffer{};
}

std::vector<unsigned char> VulkanTest::runCheckShader(const CheckShader& shader, const void* cases,
                                                      size_t caseBytes, size_t resultBytes, uint32_t count,
                                                      uint32_t groupSize) {
  auto& c = impl();
  auto& vk = c.vk;
  std::vector<unsigned char> results;
  // As the library's pipelines: the variant of the context's arithmetic.
  const std::span<const uint32_t> spirv = ctx_->exactArithmetic() ? shader.exact : shader.plain;
  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = spirv.size_bytes();
  smci.pCode = spirv.data();
  VkShaderModule module = VK_NULL_HANDLE;
  if (vk.vkCreateShaderModule(c.device, &smci, nullptr, &module) != VK_SUCCESS) {
    ADD_FAILURE() << "vkCreateShaderModule failed";
    return results;
  }
  VkDescriptorSetLayoutBinding bindings[2] = {};
  for (uint32_t i = 0; i < 2; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dslci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  dslci.bindingCount = 2;
  dslci.pBindings = bindings;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  EXPECT_EQ(vk.vkCreateDescriptorSetLayout(c.device, &dslci, nullptr, &setLayout), VK_SUCCESS);
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint32_t)};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &setLayout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  EXPECT_EQ(vk.vkCreatePipelineLayout(c.device, &plci, nullptr, &layout), VK_SUCCESS);
  VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = module;
  cpci.stage.pName = "main";
  cpci.layout = layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  EXPECT_EQ(vk.vkCreateComputePipelines(c.device, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline), VK_SUCCESS);
  {
    detail::Buffer in = hostBuffer(caseBytes * count);
    detail::Buffer out = hostBuffer(resultBytes * count);
    if (pipeline != VK_NULL_HANDLE && in.mapped() != nullptr && out.mapped() != nullptr) {
      std::memcpy(in.mapped(), cases, caseBytes * count);
      std::memset(out.mapped(), 0xFF, resultBytes * count);
      submit([&](VkCommandBuffer cmd) {
        VkDescriptorBufferInfo infos[2] = {{in.handle(), 0, VK_WHOLE_SIZE}, {out.handle(), 0, VK_WHOLE_SIZE}};
        VkWriteDescriptorSet writes[2] = {};
        for (uint32_t i = 0; i < 2; ++i) {
          writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
          writes[i].dstBinding = i;
          writes[i].descriptorCount = 1;
          writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
          writes[i].pBufferInfo = &infos[i];
        }
        vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        vk.vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 2, writes);
        vk.vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint32_t), &count);
        vk.vkCmdDispatch(cmd, (count + groupSize - 1) / groupSize, 1, 1);
        detail::globalBarrier(c, cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_WRITE_BIT,
                              VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
      });
      const auto* bytes = static_cast<const unsigned char*>(out.mapped());
      results.assign(bytes, bytes + resultBytes * count);
    } else {
      ADD_FAILURE() << "runCheckShader: no pipeline or no mapped buffers";
    }
  }
  vk.vkDestroyPipeline(c.device, pipeline, nullptr);
  vk.vkDestroyPipelineLayout(c.device, layout, nullptr);
  vk.vkDestroyDescriptorSetLayout(c.device, setLayout, nullptr);
  vk.vkDestroyShaderModule(c.device, module, nullptr);
  return results;
}

std::string firstDifference(const void* cpu, const void* device, size_t bytes) {
  const auto* x = static_cast<const unsigned char*>(cpu);
  const auto* y = static_cast<const unsigned char*>(device);
  for (size_t w = 0; w + 4 <= bytes; w += 4) {
    if (std::memcmp(x + w, y + w, 4) == 0) continue;
    float a = 0, b = 0;
    std::memcpy(&a, x + w, 4);
    std::memcpy(&b, y + w, 4);
    return "at byte " + std::to_string(w) + ": " + std::to_string(a) + " vs " + std::to_string(b);
  }
  return {};
}

std::string backendName(const ::testing::TestParamInfo<Backend>& info) {
  switch (info.param) {
    case Backend::kVulkan: return "Vulkan";
    case Backend::kCpuScalar: return "CpuScalar";
    case Backend::kCpuSimd: return "CpuSimd";
  }
  return "Unknown";
}

}  // namespace vkc::test
