// Which embedded shaders can give a different result at another subgroup size: only those that declare
// a subgroup capability (OpCapability GroupNonUniform*, the KHR ballot/vote ones or Groups) can use a
// subgroup operation or read SubgroupSize / SubgroupLocalInvocationId. The geometry-query shaders
// declare none, so `scripts/test.sh --lp128` (lavapipe at subgroup size 4) leaves their tests out: the
// default run (subgroup size 8) already runs them, and at size 4 they would compute the same thing. The
// device BVH those tests build is the bvh stage's, whose own tests do run at size 4. CPU only.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "spirv/spirv_access.h"
#include "vulkan/pipelines.h"

namespace vkc {
namespace {

constexpr uint32_t kOpCapability = 17;
// Groups, GroupNonUniform .. GroupNonUniformQuad, SubgroupBallotKHR, SubgroupVoteKHR,
// GroupNonUniformPartitionedNV, GroupNonUniformRotateKHR.
const std::set<uint32_t> kSubgroupCapabilities = {18, 61, 62, 63, 64, 65, 66, 67, 68, 4423, 4431, 5297, 6026};

// The subgroup capabilities a module declares.
std::vector<uint32_t> subgroupCapabilities(std::span<const uint32_t> span) {
  std::vector<uint32_t> found;
  const bool ok = spirv::forEachInstruction({span.begin(), span.end()}, [&](uint32_t opcode, const uint32_t* w, uint32_t n) {
    if (opcode == kOpCapability && n >= 2 && kSubgroupCapabilities.count(w[1]) != 0) found.push_back(w[1]);
  });
  EXPECT_TRUE(ok) << "malformed SPIR-V";
  return found;
}

TEST(SpirvSubgroups, GeometryQueryShadersUseNoSubgroupOperation) {
  size_t checked = 0;
  for (const std::string& name : spirv::shaderNames()) {
    if (name.rfind("geometry_queries", 0) != 0) continue;
    const std::span<const uint32_t> span = detail::embeddedShader(name.c_str());
    ASSERT_FALSE(span.empty()) << "shaders/" << name << ".comp is not embedded";
    const std::vector<uint32_t> caps = subgroupCapabilities(span);
    EXPECT_TRUE(caps.empty()) << name << " declares subgroup capability " << caps.front()
                              << ": scripts/test.sh --lp128 must run its tests at subgroup size 4";
    ++checked;
  }
  EXPECT_GE(checked, 10u);
}

// The check sees a capability where there is one: the radix sort and the bounds reduction use
// subgroup operations (and their tests run at subgroup size 4).
TEST(SpirvSubgroups, CheckSeesTheStagesThatUseThem) {
  for (const char* name : {"radix_sort", "bounds"}) {
    const std::span<const uint32_t> span = detail::embeddedShader(name);
    ASSERT_FALSE(span.empty()) << name;
    EXPECT_FALSE(subgroupCapabilities(span).empty()) << name;
  }
}

}  // namespace
}  // namespace vkc
