// Private: compute pipelines, built once per (shader, specialization constants) and cached. Every
// pipeline uses one push-descriptor set of storage buffers (bindings 0..bindingCount-1) and one
// push-constant range, so recording needs no descriptor pools.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "vk_common.h"

namespace vkc::detail {

// The SPIR-V of the embedded shader `name` (shaders/<name>.comp), its exact-arithmetic variant where
// asked (ContextCreateInfo::exactArithmetic), or an empty span. The table itself
// (the generated shader_registry.h) is included by pipelines.cpp alone: its arrays have internal
// linkage, so a second includer would make a second, different definition of the table.
std::span<const uint32_t> embeddedShader(const char* name, bool exactArithmetic = false);

struct PipelineDesc {
  const char* shader = "";  // name of shaders/<name>.comp
  uint32_t bindingCount = 0;
  uint32_t pushConstantSize = 0;
  std::vector<uint32_t> specialization;  // constant_id i = specialization[i]
};

struct Pipeline {
  std::string name;  // shader name and specialization, for labels and errors
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  uint32_t bindingCount = 0;
  uint32_t pushConstantSize = 0;
};

class PipelineCache {
 public:
  // exactArithmetic: the pipelines come from the shaders' exact-arithmetic variants
  // (ContextCreateInfo::exactArithmetic). vkCache: the VkPipelineCache they are created through (the
  // context's, which owns it; may be null).
  PipelineCache(const VolkDeviceTable& vk, VkDevice device, bool exactArithmetic, VkPipelineCache vkCache)
      : vk_(vk), device_(device), exactArithmetic_(exactArithmetic), vkCache_(vkCache) {}
  ~PipelineCache();
  // The pipeline for `desc`, created on first use. The pointer stays valid for the cache's life.
  Result<const Pipeline*> get(const PipelineDesc& desc);
  size_t size() const { return pipelines_.size(); }

 private:
  const VolkDeviceTable& vk_;
  VkDevice device_;
  bool exactArithmetic_;
  VkPipelineCache vkCache_;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::map<std::string, VkShaderModule> modules_;
  std::mutex mutex_;
};

}  // namespace vkc::detail
