// What the radix sort needs of a device beyond the context's requirements (subgroup ballot, subgroups
// of at least 4 invocations, its shared memory), as DeviceInfo::missingForSort reports it and
// RadixSortStage::create refuses; and that the test device meets it.
#include <gtest/gtest.h>

#include "support/vulkan_fixture.h"
#include "vulkan/radix_sort_stage.h"

namespace vkc::test {
namespace {

constexpr VkSubgroupFeatureFlags kAllOps = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
                                           VK_SUBGROUP_FEATURE_BALLOT_BIT;

TEST(RadixSortRequirements, EachMissingRequirementIsNamed) {
  EXPECT_TRUE(detail::radixSortMissing(kAllOps, 4, 32768).empty());
  EXPECT_TRUE(detail::radixSortMissing(kAllOps, 128, detail::kRadixSortSharedBytes).empty());

  auto noBallot = detail::radixSortMissing(kAllOps & ~VkSubgroupFeatureFlags{VK_SUBGROUP_FEATURE_BALLOT_BIT}, 32, 49152);
  ASSERT_EQ(noBallot.size(), 1u);
  EXPECT_NE(noBallot[0].find("ballot"), std::string::npos) << noBallot[0];

  auto tiny = detail::radixSortMissing(kAllOps, 2, 49152);
  ASSERT_EQ(tiny.size(), 1u);
  EXPECT_NE(tiny[0].find("at least 4 invocations"), std::string::npos) << tiny[0];
  EXPECT_NE(tiny[0].find("may run 2"), std::string::npos) << tiny[0];

  // The 16 KiB every Vulkan device guarantees is not enough for the scatter's counts.
  EXPECT_GT(detail::kRadixSortSharedBytes, 16384u);
  auto small = detail::radixSortMissing(kAllOps, 32, 16384);
  ASSERT_EQ(small.size(), 1u);
  EXPECT_NE(small[0].find(std::to_string(detail::kRadixSortSharedBytes) + " bytes of compute shared memory"),
            std::string::npos)
      << small[0];

  EXPECT_EQ(detail::radixSortMissing(VK_SUBGROUP_FEATURE_BASIC_BIT, 1, 1024).size(), 3u);
}

class RadixSortRequirementsVulkan : public VulkanTest {};

TEST_F(RadixSortRequirementsVulkan, TheTestDeviceMeetsThem) {
  const DeviceInfo& info = ctx().deviceInfo();
  EXPECT_TRUE(info.missingForSort.empty()) << info.missingForSort.front();
  EXPECT_GE(info.minSubgroupSize, 4u);
  EXPECT_LE(info.minSubgroupSize, info.subgroupSize);
  EXPECT_GE(info.maxComputeSharedMemorySize, detail::kRadixSortSharedBytes);
}

}  // namespace
}  // namespace vkc::test
