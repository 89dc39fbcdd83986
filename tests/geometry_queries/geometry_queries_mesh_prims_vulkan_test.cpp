// The per-cell functions of the mesh queries against a plane, a box and a cylinder
// (shaders/shared/geometry_queries_mesh_prims.h) run in a compute shader
// (geometry_queries_mesh_prims_check.comp, one invocation per case) on the test device and as C++
// here: every output bitwise equal. Proves the header compiles as GLSL and rounds alike, for the
// device stage that will call it.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "geometry_queries/geometry_queries_mesh_prims_check.h"
#include "geometry_queries/geometry_queries_test_support.h"
#include "geometry_queries_mesh_prims_check.spv.h"
#include "scene/geometry_queries_layout.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using gpu::MeshPrimsCheckCase;
using gpu::MeshPrimsCheckResult;
using GeometryQueriesMeshPrimsVulkan = VulkanTest;

std::vector<MeshPrimsCheckCase> checkCases(uint32_t n) {
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const auto vec = [&] { return glm::vec4(u(rng), u(rng), u(rng), 0.0f); };
  std::vector<MeshPrimsCheckCase> cases(n);
  for (uint32_t i = 0; i < n; ++i) {
    MeshPrimsCheckCase& k = cases[i];
    k.a = vec();
    k.b = vec();
    k.c = vec();
    if (i % 5 == 1) k.b.y = k.c.y = k.a.y;  // parallel to a plane y = const: edge and face features
    for (uint32_t s = 0; s < 3; ++s) {
      k.shapes[s] = detail::toGeomShape(geometry::randomGeometry(rng, s == 0 ? 4 : (s == 1 ? 3 : 2), 0));
    }
    if (i % 5 == 1) k.shapes[0].p1 = glm::vec4(0, 1, 0, 0);
    k.ids = glm::uvec4(3 * i, 3 * i + 1, 3 * i + 2, i);
  }
  return cases;
}

TEST_F(GeometryQueriesMeshPrimsVulkan, SharedFunctionsBitwiseEqualToCpu) {
  const std::vector<MeshPrimsCheckCase> cases = checkCases(2000 - 7);  // not a multiple of the group size
  const uint32_t n = uint32_t(cases.size());
  const std::vector<unsigned char> bytes =
      runCheckShader(VKC_CHECK_SHADER(geometry_queries_mesh_prims_check), cases.data(), sizeof(MeshPrimsCheckCase),
                     sizeof(MeshPrimsCheckResult), n, gpu::kMeshPrimsCheckGroupSize);
  ASSERT_EQ(bytes.size(), sizeof(MeshPrimsCheckResult) * n);
  std::vector<MeshPrimsCheckResult> gpuResults(n);
  std::memcpy(gpuResults.data(), bytes.data(), bytes.size());
  uint32_t differ = 0;
  uint32_t hits[gpu::kMeshPrimsCheckFunctions] = {};
  uint32_t perFunction[gpu::kMeshPrimsCheckFunctions] = {};
  for (uint32_t i = 0; i < n; ++i) {
    const MeshPrimsCheckResult cpu = gpu::meshPrimsCheckRun(cases[i]);
    for (uint32_t f = 0; f < gpu::kMeshPrimsCheckFunctions; ++f) hits[f] += (cpu.hits.x >> f) & 1u;
    for (uint32_t f = 0; f < gpu::kMeshPrimsCheckFunctions; ++f) {
      if (!firstDifference(&cpu.mesh[f], &gpuResults[i].mesh[f], 48).empty() ||
          !firstDifference(&cpu.other[f], &gpuResults[i].other[f], 48).empty())
        ++perFunction[f];
    }
    const std::string where = firstDifference(&cpu, &gpuResults[i], sizeof(MeshPrimsCheckResult));
    if (!where.empty() && ++differ <= 5)
      ADD_FAILURE() << "case " << i << " differs between the CPU and the device " << where;
  }
  std::printf(
      "mesh-primitive functions on the device: %u cases, hits %u %u %u %u %u %u, %u differ from the CPU "
      "bitwise\n",
      n, hits[0], hits[1], hits[2], hits[3], hits[4], hits[5], differ);
  std::printf("  differing per function (plane, box, cylinder; triangle, segment): %u %u %u %u %u %u\n",
              perFunction[0], perFunction[1], perFunction[2], perFunction[3], perFunction[4], perFunction[5]);
  EXPECT_EQ(differ, 0u);
  for (uint32_t f = 0; f < gpu::kMeshPrimsCheckFunctions; ++f) EXPECT_GT(hits[f], n / 50) << "function " << f;
}

}  // namespace
}  // namespace vkc::test
