#include "pipelines.h"

#include <cstring>

#include "shader_registry.h"

namespace vkc::detail {

std::span<const uint32_t> embeddedShader(const char* name, bool exactArithmetic) {
  for (const EmbeddedShader& s : kEmbeddedShaders) {
    if (std::strcmp(s.name, name) != 0) continue;
    return exactArithmetic ? std::span<const uint32_t>{s.exactWords, s.exactWordCount}
                           : std::span<const uint32_t>{s.words, s.wordCount};
  }
  return {};
}

PipelineCache::~PipelineCache() {
  for (auto& [key, p] : pipelines_) {
    vk_.vkDestroyPipeline(device_, p->pipeline, nullptr);
    vk_.vkDestroyPipelineLayout(device_, p->layout, nullptr);
    vk_.vkDestroyDescriptorSetLayout(device_, p->setLayout, nullptr);
  }
  for (auto& [name, m] : modules_) vk_.vkDestroyShaderModule(device_, m, nullptr);
}

Result<const Pipeline*> PipelineCache::get(const PipelineDesc& desc) {
  std::string key = desc.shader;
  for (uint32_t v : desc.specialization) key += ":" + std::to_string(v);
  std::lock_guard lock(mutex_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second.get();

  VkShaderModule module = VK_NULL_HANDLE;
  if (auto it = modules_.find(desc.shader); it != modules_.end()) {
    module = it->second;
  } else {
    const std::span<const uint32_t> words = embeddedShader(desc.shader, exactArithmetic_);
    if (words.empty()) return Error{ErrorCode::kInvalidArgument, std::string("no shader named ") + desc.shader};
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = words.size() * sizeof(uint32_t);
    smci.pCode = words.data();
    VKC_VK_TRY(vk_.vkCreateShaderModule(device_, &smci, nullptr, &module));
    modules_.emplace(desc.shader, module);
  }

  auto p = std::make_unique<Pipeline>();
  p->name = key;
  p->bindingCount = desc.bindingCount;
  p->pushConstantSize = desc.pushConstantSize;
  std::vector<VkDescriptorSetLayoutBinding> bindings(desc.bindingCount);
  for (uint32_t i = 0; i < desc.bindingCount; ++i) {
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo dslci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  dslci.bindingCount = desc.bindingCount;
  dslci.pBindings = bindings.data();
  VKC_VK_TRY(vk_.vkCreateDescriptorSetLayout(device_, &dslci, nullptr, &p->setLayout));

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, desc.pushConstantSize};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &p->setLayout;
  plci.pushConstantRangeCount = desc.pushConstantSize > 0 ? 1u : 0u;
  plci.pPushConstantRanges = &range;
  if (const VkResult r = vk_.vkCreatePipelineLayout(device_, &plci, nullptr, &p->layout); r != VK_SUCCESS) {
    vk_.vkDestroyDescriptorSetLayout(device_, p->setLayout, nullptr);
    return vkError(r, "vkCreatePipelineLayout");
  }

  std::vector<VkSpecializationMapEntry> entries(desc.specialization.size());
  for (uint32_t i = 0; i < entries.size(); ++i) {
    entries[i] = {i, static_cast<uint32_t>(i * sizeof(uint32_t)), sizeof(uint32_t)};
  }
  VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()), entries.data(),
                            desc.specialization.size() * sizeof(uint32_t), desc.specialization.data()};
  VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = module;
  cpci.stage.pName = "main";
  cpci.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
  cpci.layout = p->layout;
  if (const VkResult r = vk_.vkCreateComputePipelines(device_, vkCache_, 1, &cpci, nullptr, &p->pipeline);
      r != VK_SUCCESS) {
    vk_.vkDestroyPipelineLayout(device_, p->layout, nullptr);
    vk_.vkDestroyDescriptorSetLayout(device_, p->setLayout, nullptr);
    return vkError(r, "vkCreateComputePipelines");
  }
  const Pipeline* raw = p.get();
  pipelines_.emplace(std::move(key), std::move(p));
  return raw;
}

}  // namespace vkc::detail
