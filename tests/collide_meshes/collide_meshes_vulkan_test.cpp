// The shared mesh-collision functions (shaders/shared/collide_meshes_math.h) run in a compute
// shader (collide_meshes_check.comp, one invocation per case) on the test device and as C++ here:
// every output bitwise equal. Proves the header compiles as GLSL and rounds alike (no contraction).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "collide_meshes/collide_meshes_check.h"
#include "collide_meshes/mesh_test_support.h"
#include "collide_meshes_check.spv.h"
#include "support/vulkan_fixture.h"
#include "vulkan/recorder.h"

namespace vkc::test {
namespace {

using namespace meshes;
using gpu::MeshCheckCase;
using gpu::MeshCheckResult;
using MeshVulkan = VulkanTest;

std::vector<MeshCheckCase> checkCases(uint32_t n) {
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<MeshCheckCase> cases(n);
  for (uint32_t i = 0; i < n; ++i) {
    MeshCheckCase& k = cases[i];
    const vec3 a = randomVec(rng, -1, 1), b = randomVec(rng, -1, 1);
    const vec3 c = i % 7 == 3 ? a + (b - a) * 0.3f : randomVec(rng, -1, 1);  // some zero-area
    const vec3 drift = randomVec(rng, -0.5f, 0.5f);
    const vec3 aim = (a + b + c) / 3.0f + randomVec(rng, -0.6f, 0.6f);
    const vec3 p0 = aim + randomVec(rng, -2, 2);
    const vec3 p1 = p0 + (aim - p0) * (1.0f + u(rng));
    k.p0 = glm::vec4(p0, 0);
    k.p1 = glm::vec4(p1, 0);
    k.a0 = glm::vec4(a, 0);
    k.b0 = glm::vec4(b, 0);
    k.c0 = glm::vec4(c, 0);
    k.a1 = glm::vec4(a + drift + randomVec(rng, -0.2f, 0.2f), 0);
    k.b1 = glm::vec4(b + drift, 0);
    k.c1 = glm::vec4(c + drift, 0);
    const vec3 axis = glm::normalize(randomVec(rng, -1, 1) + vec3(0, 0, 1e-3f));
    const float half = 0.8f * u(rng);
    k.q0 = glm::vec4(0, 0, 0, 1);
    k.q1 = glm::vec4(axis * std::sin(half), std::cos(half));
    k.t0 = glm::vec4(0);
    k.t1 = glm::vec4(randomVec(rng, -0.3f, 0.3f), 0);
    k.params = glm::vec4(i % 5 == 0 ? 0.0f : 0.2f * u(rng), i % 4 == 1 ? 0.3f * u(rng) : 0.0f, u(rng), u(rng));
    k.mode = glm::uvec4(i % 3 == 0 ? gpu::kMeshCcdApproachOnly : 0u, i % 2, 4u, 0u);
  }
  return cases;
}

TEST_F(MeshVulkan, SharedFunctionsBitwiseEqualToCpu) {
  constexpr uint32_t kCases = 4000;  // not a multiple of the group size
  const std::vector<MeshCheckCase> cases = checkCases(kCases - 13);
  const uint32_t n = uint32_t(cases.size());
  auto& c = impl();
  auto& vk = c.vk;
  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = sizeof(vkc_test_spv_collide_meshes_check);
  smci.pCode = vkc_test_spv_collide_meshes_check;
  VkShaderModule module = VK_NULL_HANDLE;
  ASSERT_EQ(vk.vkCreateShaderModule(c.device, &smci, nullptr, &module), VK_SUCCESS);
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
  ASSERT_EQ(vk.vkCreateDescriptorSetLayout(c.device, &dslci, nullptr, &setLayout), VK_SUCCESS);
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint32_t)};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &setLayout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  ASSERT_EQ(vk.vkCreatePipelineLayout(c.device, &plci, nullptr, &layout), VK_SUCCESS);
  VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = module;
  cpci.stage.pName = "main";
  cpci.layout = layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  ASSERT_EQ(vk.vkCreateComputePipelines(c.device, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline), VK_SUCCESS);

  detail::Buffer in = hostBuffer(sizeof(MeshCheckCase) * n);
  detail::Buffer out = hostBuffer(sizeof(MeshCheckResult) * n);
  ASSERT_NE(in.mapped(), nullptr);
  ASSERT_NE(out.mapped(), nullptr);
  std::memcpy(in.mapped(), cases.data(), sizeof(MeshCheckCase) * n);
  std::memset(out.mapped(), 0xFF, sizeof(MeshCheckResult) * n);
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
    vk.vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint32_t), &n);
    vk.vkCmdDispatch(cmd, (n + gpu::kMeshCheckGroupSize - 1) / gpu::kMeshCheckGroupSize, 1, 1);
    detail::globalBarrier(c, cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
  });
  const auto* gpuResults = static_cast<const MeshCheckResult*>(out.mapped());
  uint32_t differ = 0, hits = 0, edgeHits = 0, triTriHits = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const MeshCheckResult cpu = gpu::meshCheckRun(cases[i]);
    hits += (cpu.regions.y != 0) + (cpu.regions.z != 0) + (cpu.regions.w != 0);
    edgeHits += cpu.edgeFlags.x;
    triTriHits += cpu.triTri.count > 0;
    if (std::memcmp(&cpu, &gpuResults[i], sizeof(MeshCheckResult)) != 0 && ++differ <= 5) {
      // The first differing 32-bit word, by offset in MeshCheckResult.
      const auto* x = reinterpret_cast<const float*>(&cpu);
      const auto* y = reinterpret_cast<const float*>(&gpuResults[i]);
      size_t w = 0;
      while (std::memcmp(x + w, y + w, sizeof(float)) == 0) ++w;
      ADD_FAILURE() << "case " << i << " differs between the CPU and the device at byte " << w * 4 << ": " << x[w]
                    << " vs " << y[w];
    }
  }
  std::printf("mesh functions on the device: %u cases, %u vertex-face and %u edge-edge CCD hits, %u triangle-triangle "
              "intersections, %u differ from the CPU bitwise\n",
              n, hits, edgeHits, triTriHits, differ);
  EXPECT_EQ(differ, 0u);
  EXPECT_GT(hits, n / 4);
  EXPECT_GT(triTriHits, n / 40);
  EXPECT_GT(edgeHits, n / 20);
  vk.vkDestroyPipeline(c.device, pipeline, nullptr);
  vk.vkDestroyPipelineLayout(c.device, layout, nullptr);
  vk.vkDestroyDescriptorSetLayout(c.device, setLayout, nullptr);
  vk.vkDestroyShaderModule(c.device, module, nullptr);
}

}  // namespace
}  // namespace vkc::test
