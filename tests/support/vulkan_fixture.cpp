#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {
std::mutex gMutex;
std::vector<std::string> gMessages;
}  // namespace

Context* sharedContext(std::string* error) {
  static std::string creationError;
  static std::unique_ptr<Context> context = [] {
    ContextCreateInfo ci;
    ci.enableValidation = true;
    ci.onValidationMessage = [](const char* msg) {
      std::lock_guard lock(gMutex);
      gMessages.emplace_back(msg);
    };
    auto r = Context::create(ci);
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

void VulkanTest::SetUp() {
  std::string error;
  ctx_ = sharedContext(&error);
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

std::string backendName(const ::testing::TestParamInfo<Backend>& info) {
  switch (info.param) {
    case Backend::kVulkan: return "Vulkan";
    case Backend::kCpuScalar: return "CpuScalar";
    case Backend::kCpuSimd: return "CpuSimd";
  }
  return "Unknown";
}

}  // namespace vkc::test
