// The static mesh rows' per-cell functions (a tetrahedron against a sphere, capsule, plane and box,
// shaders/shared/geometry_queries_mesh_tetra.h; segment against segment, geomSegmentSegment) run in a
// compute shader (geometry_queries_mesh_static_check.comp, one invocation per case) on the test device
// and as C++ here: every output bitwise equal. Proves the headers compile as GLSL and round alike, for
// the device stage that will call them.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "geometry_queries/geometry_queries_mesh_static_check.h"
#include "geometry_queries/geometry_queries_test_support.h"
#include "geometry_queries_mesh_static_check.spv.h"
#include "scene/geometry_queries_layout.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using gpu::MeshStaticCheckCase;
using gpu::MeshStaticCheckResult;
using GeometryQueriesMeshStaticVulkan = VulkanTest;

std::vector<MeshStaticCheckCase> checkCases(uint32_t n) {
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), thick(0.0f, 0.4f);
  const auto vec = [&] { return glm::vec4(u(rng), u(rng), u(rng), 0.0f); };
  std::vector<MeshStaticCheckCase> cases(n);
  for (uint32_t i = 0; i < n; ++i) {
    MeshStaticCheckCase& k = cases[i];
    for (glm::vec4& c : k.corners) c = vec();
    if (i % 7 == 3) k.corners[2].z = k.corners[1].z = k.corners[0].z;  // a face parallel to z = const
    k.segment[0] = vec();
    k.segment[1] = i % 5 == 2 ? k.segment[0] + (k.corners[1] - k.corners[0]) : vec();  // parallel segments
    k.segment[0].w = thick(rng);
    const uint32_t types[4] = {0, 1, 4, 3};  // sphere, capsule, plane, box
    for (uint32_t s = 0; s < 4; ++s) k.shapes[s] = detail::toGeomShape(geometry::randomGeometry(rng, types[s], 0));
    if (i % 7 == 3) k.shapes[2].p1 = glm::vec4(0, 0, 1, 0);
    k.ids = glm::uvec4(4 * i, 4 * i + 1, 4 * i + 2, i);
  }
  return cases;
}

TEST_F(GeometryQueriesMeshStaticVulkan, SharedFunctionsBitwiseEqualToCpu) {
  const std::vector<MeshStaticCheckCase> cases = checkCases(2000 - 7);  // not a multiple of the group size
  const uint32_t n = uint32_t(cases.size());
  const std::vector<unsigned char> bytes =
      runCheckShader(VKC_CHECK_SHADER(geometry_queries_mesh_static_check), cases.data(), sizeof(MeshStaticCheckCase),
                     sizeof(MeshStaticCheckResult), n, gpu::kMeshStaticCheckGroupSize);
  ASSERT_EQ(bytes.size(), sizeof(MeshStaticCheckResult) * n);
  std::vector<MeshStaticCheckResult> gpuResults(n);
  std::memcpy(gpuResults.data(), bytes.data(), bytes.size());
  uint32_t differ = 0;
  uint32_t hits[gpu::kMeshStaticCheckFunctions] = {};
  for (uint32_t i = 0; i < n; ++i) {
    const MeshStaticCheckResult cpu = gpu::meshStaticCheckRun(cases[i]);
    for (uint32_t f = 0; f < gpu::kMeshStaticCheckFunctions; ++f) hits[f] += (cpu.hits.x >> f) & 1u;
    const std::string where = firstDifference(&cpu, &gpuResults[i], sizeof(MeshStaticCheckResult));
    if (!where.empty() && ++differ <= 5)
      ADD_FAILURE() << "case " << i << " differs between the CPU and the device " << where;
  }
  std::printf("static mesh functions on the device: %u cases, hits (sphere, capsule, plane, box, segment) %u %u %u "
              "%u %u, %u differ from the CPU bitwise\n",
              n, hits[0], hits[1], hits[2], hits[3], hits[4], differ);
  EXPECT_EQ(differ, 0u);
  for (uint32_t f = 0; f < gpu::kMeshStaticCheckFunctions; ++f) EXPECT_GT(hits[f], n / 50) << "function " << f;
}

}  // namespace
}  // namespace vkc::test
