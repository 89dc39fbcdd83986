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
  const std::vector<unsigned char> bytes =
      runCheckShader(VKC_CHECK_SHADER(collide_meshes_check), cases.data(), sizeof(MeshCheckCase),
                     sizeof(MeshCheckResult), n, gpu::kMeshCheckGroupSize);
  ASSERT_EQ(bytes.size(), sizeof(MeshCheckResult) * n);
  std::vector<MeshCheckResult> gpuResults(n);
  std::memcpy(gpuResults.data(), bytes.data(), bytes.size());
  uint32_t differ = 0, hits = 0, edgeHits = 0, triTriHits = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const MeshCheckResult cpu = gpu::meshCheckRun(cases[i]);
    hits += (cpu.regions.y != 0) + (cpu.regions.z != 0) + (cpu.regions.w != 0);
    edgeHits += cpu.edgeFlags.x;
    triTriHits += cpu.triTri.count > 0;
    const std::string where = firstDifference(&cpu, &gpuResults[i], sizeof(MeshCheckResult));
    if (!where.empty() && ++differ <= 5)
      ADD_FAILURE() << "case " << i << " differs between the CPU and the device " << where;
  }
  std::printf("mesh functions on the device: %u cases, %u vertex-face and %u edge-edge CCD hits, %u triangle-triangle "
              "intersections, %u differ from the CPU bitwise\n",
              n, hits, edgeHits, triTriHits, differ);
  EXPECT_EQ(differ, 0u);
  EXPECT_GT(hits, n / 4);
  EXPECT_GT(triTriHits, n / 40);
  EXPECT_GT(edgeHits, n / 20);
}

}  // namespace
}  // namespace vkc::test
