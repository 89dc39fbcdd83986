// The per-cell functions of the mesh queries (shaders/shared/geometry_queries_mesh.h) run in a
// compute shader (geometry_queries_mesh_check.comp, one invocation per case) on the test device and
// as C++ here: every output bitwise equal. Proves the header compiles as GLSL and rounds alike, for
// the device stage that will call it.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "geometry_queries/geometry_queries_mesh_check.h"
#include "geometry_queries_mesh_check.spv.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using gpu::MeshQueryCheckCase;
using gpu::MeshQueryCheckResult;
using GeometryQueriesMeshVulkan = VulkanTest;

std::vector<MeshQueryCheckCase> checkCases(uint32_t n) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), r(0.05f, 0.8f);
  const auto vec = [&] { return glm::vec4(u(rng), u(rng), u(rng), 0.0f); };
  std::vector<MeshQueryCheckCase> cases(n);
  for (uint32_t i = 0; i < n; ++i) {
    MeshQueryCheckCase& k = cases[i];
    k.a = vec();
    k.b = vec();
    k.c = vec();
    k.d = vec();
    const glm::vec4 centroid = (k.a + k.b + k.c) / 3.0f;
    k.p0 = centroid + vec() * 0.6f;
    k.p1 = k.p0 + vec();
    if (i % 5 == 1) {  // a capsule parallel to the triangle, over it
      const glm::vec3 normal = glm::normalize(glm::cross(glm::vec3(k.b - k.a), glm::vec3(k.c - k.a)));
      const glm::vec3 along = glm::vec3(k.b - k.a) * 0.4f;
      k.p0 = glm::vec4(glm::vec3(centroid) + normal * 0.1f - along, 0.0f);
      k.p1 = glm::vec4(glm::vec3(centroid) + normal * 0.1f + along, 0.0f);
    }
    if (i % 7 == 3) k.p1 = centroid * 2.0f - k.p0;  // through the centroid: piercing
    k.p0.w = r(rng);
    k.p1.w = 0.0f;
    k.x = (k.a + k.b + k.c + k.d) * 0.25f + vec() * 0.3f;
    k.ids = glm::uvec4(3 * i, 3 * i + 1, 3 * i + 2, i);
  }
  return cases;
}

TEST_F(GeometryQueriesMeshVulkan, SharedFunctionsBitwiseEqualToCpu) {
  const std::vector<MeshQueryCheckCase> cases = checkCases(3000 - 7);  // not a multiple of the group size
  const uint32_t n = uint32_t(cases.size());
  const std::vector<unsigned char> bytes =
      runCheckShader(VKC_CHECK_SHADER(geometry_queries_mesh_check), cases.data(), sizeof(MeshQueryCheckCase),
                     sizeof(MeshQueryCheckResult), n, gpu::kMeshQueryCheckGroupSize);
  ASSERT_EQ(bytes.size(), sizeof(MeshQueryCheckResult) * n);
  std::vector<MeshQueryCheckResult> gpuResults(n);
  std::memcpy(gpuResults.data(), bytes.data(), bytes.size());
  uint32_t differ = 0;
  uint32_t hits[gpu::kMeshQueryCheckFunctions] = {};
  for (uint32_t i = 0; i < n; ++i) {
    const MeshQueryCheckResult cpu = gpu::meshQueryCheckRun(cases[i]);
    for (uint32_t f = 0; f < gpu::kMeshQueryCheckFunctions; ++f) hits[f] += (cpu.hits.x >> f) & 1u;
    const std::string where = firstDifference(&cpu, &gpuResults[i], sizeof(MeshQueryCheckResult));
    if (!where.empty() && ++differ <= 5)
      ADD_FAILURE() << "case " << i << " differs between the CPU and the device " << where;
  }
  std::printf(
      "mesh query functions on the device: %u cases, hits %u %u %u %u %u %u, %u differ from the CPU "
      "bitwise\n",
      n, hits[0], hits[1], hits[2], hits[3], hits[4], hits[5], differ);
  EXPECT_EQ(differ, 0u);
  for (uint32_t f = 0; f < gpu::kMeshQueryCheckFunctions; ++f) EXPECT_GT(hits[f], n / 50) << "function " << f;
}

}  // namespace
}  // namespace vkc::test
