#include <gtest/gtest.h>

#include <random>

#include "vulkan/memory.h"

namespace vkc::detail {
namespace {

TEST(RangeAllocator, AlignsAndFillsExactly) {
  RangeAllocator a(1024);
  auto x = a.allocate(10, 1);
  auto y = a.allocate(100, 256);
  ASSERT_TRUE(x && y);
  EXPECT_EQ(*x, 0u);
  EXPECT_EQ(*y, 256u);
  EXPECT_FALSE(a.allocate(1024, 1));
  auto z = a.allocate(1024 - 356, 1);  // exactly the rest: [10,256) and [356,1024) -> fits only in the second
  EXPECT_TRUE(z);
  EXPECT_EQ(*z, 356u);
}

TEST(RangeAllocator, FreeCoalescesNeighbours) {
  RangeAllocator a(300);
  auto x = a.allocate(100, 1), y = a.allocate(100, 1), z = a.allocate(100, 1);
  ASSERT_TRUE(x && y && z);
  EXPECT_EQ(a.freeBytes(), 0u);
  a.free(*x, 100);
  a.free(*z, 100);
  EXPECT_EQ(a.freeRangeCount(), 2u);
  a.free(*y, 100);
  EXPECT_EQ(a.freeRangeCount(), 1u);
  EXPECT_EQ(a.freeBytes(), 300u);
  EXPECT_TRUE(a.allocate(300, 1));
}

TEST(RangeAllocator, RandomAllocFreeNeverOverlaps) {
  RangeAllocator a(1 << 20);
  std::mt19937 rng(5);
  std::vector<std::pair<VkDeviceSize, VkDeviceSize>> live;
  for (int step = 0; step < 5000; ++step) {
    if (!live.empty() && rng() % 2 == 0) {
      const size_t k = rng() % live.size();
      a.free(live[k].first, live[k].second);
      live.erase(live.begin() + static_cast<long>(k));
      continue;
    }
    const VkDeviceSize size = 1 + rng() % 5000, align = VkDeviceSize{1} << (rng() % 9);
    auto off = a.allocate(size, align);
    if (!off) continue;
    EXPECT_EQ(*off % align, 0u);
    for (const auto& [o, s] : live) ASSERT_TRUE(*off + size <= o || o + s <= *off) << "overlap";
    live.emplace_back(*off, size);
  }
  for (const auto& [o, s] : live) a.free(o, s);
  EXPECT_EQ(a.freeBytes(), VkDeviceSize{1} << 20);
  EXPECT_EQ(a.freeRangeCount(), 1u);
}

}  // namespace
}  // namespace vkc::detail
