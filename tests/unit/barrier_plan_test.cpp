// The recorder's barrier plan: barriers exactly where a later pass touches what an earlier one wrote
// (or writes what an earlier one read), and nowhere else.
#include <gtest/gtest.h>

#include "vulkan/recorder.h"

namespace vkc::detail {
namespace {

constexpr uint64_t A = 0xA, B = 0xB;
BufferUse use(uint64_t buf, VkDeviceSize off, VkDeviceSize size, Access a) { return {buf, off, size, a}; }

std::vector<bool> needed(const std::vector<std::vector<BufferUse>>& passes) {
  std::vector<bool> out;
  for (const BarrierDecision& d : planBarriers(passes)) out.push_back(d.needed);
  return out;
}

TEST(BarrierPlan, ReadAfterWrite) {
  const auto plan = planBarriers(std::vector<std::vector<BufferUse>>{{use(A, 0, 64, Access::kWrite)}, {use(A, 0, 64, Access::kRead)}});
  EXPECT_FALSE(plan[0].needed);
  EXPECT_TRUE(plan[1].needed);
  EXPECT_NE(plan[1].reason.find("read-after-write"), std::string::npos) << plan[1].reason;
}

TEST(BarrierPlan, WriteAfterReadAndWriteAfterWrite) {
  EXPECT_EQ(needed({{use(A, 0, 64, Access::kRead)}, {use(A, 32, 64, Access::kWrite)}}), (std::vector<bool>{false, true}));
  EXPECT_EQ(needed({{use(A, 0, 64, Access::kWrite)}, {use(A, 63, 1, Access::kWrite)}}), (std::vector<bool>{false, true}));
  EXPECT_EQ(needed({{use(A, 0, 64, Access::kReadWrite)}, {use(A, 0, 64, Access::kReadWrite)}}),
            (std::vector<bool>{false, true}));
}

TEST(BarrierPlan, NoBarrierForReadsOrDisjointRanges) {
  EXPECT_EQ(needed({{use(A, 0, 64, Access::kRead)}, {use(A, 0, 64, Access::kRead)}}), (std::vector<bool>{false, false}));
  EXPECT_EQ(needed({{use(A, 0, 64, Access::kWrite)}, {use(A, 64, 64, Access::kRead)}}), (std::vector<bool>{false, false}));
  EXPECT_EQ(needed({{use(A, 0, 64, Access::kWrite)}, {use(B, 0, 64, Access::kRead)}}), (std::vector<bool>{false, false}));
}

TEST(BarrierPlan, ConcurrentGroupNeedsNoBarrierWithinItself) {
  auto grouped = [](BufferUse u, uint32_t group) {
    u.group = group;
    return u;
  };
  // Two passes of group 1 writing the same range (disjoint elements, the stage's guarantee): no barrier.
  EXPECT_EQ(needed({{grouped(use(A, 0, 64, Access::kWrite), 1)}, {grouped(use(A, 0, 64, Access::kWrite), 1)}}),
            (std::vector<bool>{false, false}));
  // Another group, or no group, still meets the hazard.
  EXPECT_EQ(needed({{grouped(use(A, 0, 64, Access::kWrite), 1)}, {grouped(use(A, 0, 64, Access::kRead), 2)}}),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(needed({{grouped(use(A, 0, 64, Access::kWrite), 1)}, {use(A, 0, 64, Access::kRead)}}),
            (std::vector<bool>{false, true}));
  // Group 0 is no group.
  EXPECT_EQ(needed({{use(A, 0, 64, Access::kWrite)}, {use(A, 0, 64, Access::kWrite)}}), (std::vector<bool>{false, true}));
  // A group's writes are still ordered before a later pass outside it (the barrier comes before that pass).
  EXPECT_EQ(needed({{grouped(use(A, 0, 64, Access::kWrite), 3)},
                    {grouped(use(B, 0, 64, Access::kWrite), 3)},
                    {use(B, 0, 64, Access::kRead)}}),
            (std::vector<bool>{false, false, true}));
}

TEST(BarrierPlan, HazardAcrossAnUnrelatedPass) {
  // write A; read B (no barrier); read A (barrier: A was written before the last barrier).
  EXPECT_EQ(needed({{use(A, 0, 16, Access::kWrite)}, {use(B, 0, 16, Access::kRead)}, {use(A, 0, 16, Access::kRead)}}),
            (std::vector<bool>{false, false, true}));
}

TEST(BarrierPlan, ABarrierOrdersEverythingBeforeIt) {
  // write A; write B, read A (barrier); read A again (no barrier: the pending write to A was ordered,
  // and only reads of A came since); read B (barrier: B written after the last barrier).
  EXPECT_EQ(needed({{use(A, 0, 16, Access::kWrite)},
                    {use(B, 0, 16, Access::kWrite), use(A, 0, 16, Access::kRead)},
                    {use(A, 0, 16, Access::kRead)},
                    {use(B, 0, 16, Access::kRead)}}),
            (std::vector<bool>{false, true, false, true}));
}

TEST(BarrierPlan, IndirectArgumentsAreARead) {
  // A pass that writes the dispatch arguments, then a pass dispatched indirectly from them: the
  // indirect range is one of its uses, so the plan puts a barrier between the two.
  Pass writer;
  writer.extraUses = {use(A, 16, 16, Access::kWrite)};
  Pass indirect;
  indirect.indirect = BufferRange{reinterpret_cast<VkBuffer>(A), 16, 16};
  const std::vector<BufferUse> uses = usesOf(indirect);
  ASSERT_EQ(uses.size(), 1u);
  EXPECT_EQ(uses[0].offset, 16u);
  EXPECT_EQ(uses[0].size, sizeof(VkDispatchIndirectCommand));
  EXPECT_EQ(uses[0].access, Access::kRead);
  EXPECT_EQ(needed({usesOf(writer), usesOf(indirect)}), (std::vector<bool>{false, true}));
  // Arguments elsewhere in the same buffer: no hazard.
  indirect.indirect.offset = 64;
  EXPECT_EQ(needed({usesOf(writer), usesOf(indirect)}), (std::vector<bool>{false, false}));
}

}  // namespace
}  // namespace vkc::detail
