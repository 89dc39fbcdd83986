// Every embedded shader module, plain and exact-arithmetic variant, is valid SPIR-V for Vulkan 1.3 by
// spirv-val (CPU only, no device). The build rewrites both (tools/spirv_embed.cpp: NoContraction
// decorations; in the exact variant, removed functions and divisions and square roots turned into
// calls), and the device tests create only the pipelines their batches need, so a module the rewrite
// broke could otherwise first meet a driver on a user's machine (the validation layer checks a module
// only when a test creates it: no test creates the mesh families' exact variants, for one).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "spirv/spirv_access.h"
#include "vulkan/pipelines.h"

namespace vkc {
namespace {

// spirv-val's verdict on `words`: empty when valid, else its complaint.
std::string validate(const std::vector<uint32_t>& words, const std::string& tag) {
  std::string log;
  spirv::runTool(VKC_SPIRV_VAL, "--target-env vulkan1.3", words, tag, log);
  return log;
}

TEST(SpirvValid, EveryEmbeddedModuleInBothVariants) {
  ASSERT_TRUE(std::string(VKC_SPIRV_VAL).size() > 0) << "spirv-val was not found when configuring (Debian: "
                                                        "spirv-tools, scripts/setup.sh installs it)";
  size_t modules = 0;
  for (const std::string& name : spirv::shaderNames()) {
    for (const bool exact : {false, true}) {
      const std::span<const uint32_t> words = detail::embeddedShader(name.c_str(), exact);
      ASSERT_FALSE(words.empty()) << "shaders/" << name << ".comp is not embedded";
      const std::string tag = name + (exact ? "_exact" : "");
      const std::string message = validate({words.begin(), words.end()}, tag);
      EXPECT_TRUE(message.empty()) << tag << ": " << message;
      ++modules;
    }
  }
  EXPECT_GE(modules, 40u);  // 21 shaders in shaders/ on 2026-11-28
}

// The check fails on a broken module: the last instruction (the entry point's OpFunctionEnd) removed
// from a real one.
TEST(SpirvValid, CatchesABrokenModule) {
  ASSERT_TRUE(std::string(VKC_SPIRV_VAL).size() > 0);
  const std::span<const uint32_t> words = detail::embeddedShader("copy", true);
  ASSERT_GT(words.size(), 6u);
  std::vector<uint32_t> broken(words.begin(), words.end());
  ASSERT_EQ(broken.back(), (1u << 16) | 56u) << "the module should end with OpFunctionEnd";
  EXPECT_TRUE(validate(broken, "copy_whole").empty());
  broken.pop_back();
  EXPECT_FALSE(validate(broken, "copy_broken").empty());
}

}  // namespace
}  // namespace vkc
