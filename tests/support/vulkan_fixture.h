// The Vulkan test fixture: one context per test process, created with VK_LAYER_KHRONOS_validation
// and synchronization validation. Any validation message fails the test that caused it. If the layer
// or a usable device is missing, the test fails with the reason: Vulkan tests never skip.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "vkcollide/vkcollide.h"
#include "vulkan/context_impl.h"

namespace vkc::test {

// The process-wide validated context, or null with `error` set. Exact arithmetic
// (ContextCreateInfo::exactArithmetic) as the environment variable VKC_TEST_EXACT_ARITHMETIC says (1
// or 0); unset: on every device but lavapipe.
Context* sharedContext(std::string* error);

// A validated context of its own (its messages reported as the shared one's), or the error.
Result<std::unique_ptr<Context>> createTestContext(bool exactArithmetic,
                                                   std::span<const uint8_t> pipelineCacheData = {});

// lavapipe (Mesa's llvmpipe driver), whose division and square root round as the CPU's.
inline bool isLavapipe(const DeviceInfo& info) { return info.driverName == "llvmpipe"; }

// Whether a backend's results must equal kCpuScalar's bit for bit: the CPU backends (null context),
// lavapipe, and any device with exact arithmetic; else within the documented tolerances.
inline bool bitwiseDevice(const Context* ctx) {
  return ctx == nullptr || isLavapipe(ctx->deviceInfo()) || ctx->exactArithmetic();
}

// Validation messages received since the last takeValidationMessages().
std::vector<std::string> takeValidationMessages();

// A test shader's two variants: tests/*/*.comp compiled into vkc_test_spv_<name> and, with exact
// arithmetic (ContextCreateInfo::exactArithmetic), vkc_test_spv_<name>_exact.
struct CheckShader {
  std::span<const uint32_t> plain;
  std::span<const uint32_t> exact;
};
#define VKC_CHECK_SHADER(name) ::vkc::test::CheckShader{vkc_test_spv_##name, vkc_test_spv_##name##_exact}

class VulkanTest : public ::testing::Test {
 public:
  // Adds a non-fatal failure for every validation message received since the last check (static so
  // that EXPECT_NONFATAL_FAILURE can call it: this is the check that fails every Vulkan test).
  static void expectNoValidationMessages();

 protected:
  void SetUp() override;
  void TearDown() override;
  // The context the test runs on: sharedContext() unless a fixture says otherwise.
  virtual Context* context(std::string* error) { return sharedContext(error); }
  Context& ctx() { return *ctx_; }
  detail::ContextImpl& impl() { return detail::Internals::of(*ctx_); }
  // A primary command buffer in the recording state, for tests that record without submitting.
  VkCommandBuffer beginCommandBuffer();
  void freeCommandBuffer(VkCommandBuffer cmd);
  // Ends each command buffer (from beginCommandBuffer), submits them in order, one submission each,
  // waits for all, and frees them: the frames-in-flight pattern of a renderer.
  void submitRecorded(std::span<const VkCommandBuffer> cmds);
  // A host-visible buffer of `bytes` (usage: storage, transfer), from the test context's allocator.
  detail::Buffer hostBuffer(VkDeviceSize bytes);
  // Records with fn, submits on the context's queue and waits; fails the test on error.
  void submit(const std::function<void(VkCommandBuffer)>& fn);
  // Runs a test shader (tests/*/*.comp: VKC_CHECK_SHADER(name); the variant of the context's
  // arithmetic) over `count` cases of caseBytes each, one
  // invocation per case in groups of groupSize: binding 0 the cases, binding 1 the results
  // (resultBytes each, filled with 0xFF first), push constant the case count. Returns the results'
  // bytes (empty on failure, which fails the test).
  std::vector<unsigned char> runCheckShader(const CheckShader& shader, const void* cases,
                                            size_t caseBytes, size_t resultBytes, uint32_t count,
                                            uint32_t groupSize);

 private:
  Context* ctx_ = nullptr;
};

void VulkanTest_expectNoValidationMessagesIf(bool check);

// The process-wide validated context with exact arithmetic, or null with `error` set.
Context* exactContext(std::string* error);

// A Vulkan test on exactContext().
class ExactVulkanTest : public VulkanTest {
 protected:
  Context* context(std::string* error) override { return exactContext(error); }
};

// Where two results of a check shader (runCheckShader) differ: "at byte B: x vs y", the first
// differing 32-bit word read as floats; "" when they are bitwise equal.
std::string firstDifference(const void* cpu, const void* device, size_t bytes);

// One test body for every backend: TEST_P on this fixture, instantiated with VKC_ALL_BACKENDS.
// For the Vulkan parameter it behaves like VulkanTest (validated context, messages fail the test).
class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override;
  void TearDown() override { VulkanTest_expectNoValidationMessagesIf(ctx_ != nullptr); }
  Backend backend() const { return GetParam(); }
  Context* ctx() { return ctx_; }  // null for the CPU backends

 private:
  Context* ctx_ = nullptr;
};

std::string backendName(const ::testing::TestParamInfo<Backend>& info);
}  // namespace vkc::test
namespace vkc {
inline void PrintTo(Backend b, std::ostream* os) { *os << toString(b); }
}  // namespace vkc
namespace vkc::test {

#define VKC_ALL_BACKENDS \
  ::testing::Values(::vkc::Backend::kVulkan, ::vkc::Backend::kCpuScalar, ::vkc::Backend::kCpuSimd), ::vkc::test::backendName

}  // namespace vkc::test
