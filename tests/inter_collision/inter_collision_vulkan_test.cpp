// Vulkan-only: determinism over reruns, recording into the host's command buffer with its own
// particle buffer (indirect dispatch, barriers from the declared uses).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "inter_scene.h"
#include "support/vulkan_fixture.h"
#include "vulkan/inter_collision_stage.h"

namespace vkc::test {
namespace {

class InterCollisionVulkan : public VulkanTest {};

InterScene denseScene() {
  InterScene s;
  std::mt19937 rng(4);
  for (uint32_t c = 0; c < 6; ++c) {
    const float f = static_cast<float>(c);
    addRandomCloth(s, 130 + 13 * c, 0.4f, {0.25f * f, 0.05f * f, 0, 0}, quatAxisAngle(1, f, 2, 0.9f * f), rng);
  }
  s.settings = {0.06f, 0.9f, 2};
  return s;
}

TEST_F(InterCollisionVulkan, HundredRerunsAreBitwiseIdentical) {
  const InterScene s = denseScene();
  const InterCollisionStageCreateInfo ci = stageInfo(s);
  auto stage = InterCollisionStage::create(ctx(), ci);
  ASSERT_TRUE(stage.ok()) << stage.message();
  InterCollisionDebug first;
  auto ref = stageStep(**stage, s, &first);
  ASSERT_TRUE(ref.ok()) << ref.message();
  ASSERT_GT(first.marked.size(), 50u);
  size_t moved = 0;
  for (size_t i = 0; i < ref->size(); ++i) moved += !((*ref)[i] == s.particles[i]);
  ASSERT_GT(moved, 20u);
  for (int run = 1; run < 100; ++run) {
    auto out = stageStep(**stage, s);
    ASSERT_TRUE(out.ok()) << out.message();
    ASSERT_EQ(std::memcmp(out->data(), ref->data(), ref->size() * sizeof(Float4)), 0) << "run " << run;
  }
}

TEST_F(InterCollisionVulkan, RecordsIntoTheHostsCommandBuffer) {
  // The host owns the particle buffer (at an offset) and records two steps in one command buffer:
  // the result equals two run() calls.
  const InterScene s = denseScene();
  const InterCollisionStageCreateInfo ci = stageInfo(s);
  auto stage = InterCollisionStage::create(ctx(), ci);
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto once = stageStep(**stage, s);
  ASSERT_TRUE(once.ok());
  InterScene s2 = s;
  s2.particles = *once;
  auto twice = stageStep(**stage, s2);
  ASSERT_TRUE(twice.ok());

  const VkDeviceSize offset = 256, bytes = s.particles.size() * sizeof(Float4);
  auto& alloc = *impl().allocator;
  auto buf = alloc.createBuffer(offset + bytes, detail::MemoryUsage::kUpload);
  ASSERT_TRUE(buf.ok());
  std::memcpy(static_cast<char*>(buf->mapped()) + offset, s.particles.data(), bytes);
  submit([&](VkCommandBuffer cmd) {
    InterCollisionRecordInfo ri;
    ri.particles = {buf->handle(), offset, bytes};
    ri.cloths = s.cloths;
    ri.settings = s.settings;
    ASSERT_TRUE((*stage)->record(cmd, ri).ok());
    ASSERT_TRUE((*stage)->record(cmd, ri).ok());
  });
  std::vector<Float4> got(s.particles.size());
  std::memcpy(got.data(), static_cast<char*>(buf->mapped()) + offset, bytes);
  EXPECT_EQ(std::memcmp(got.data(), twice->data(), bytes), 0);
}

TEST_F(InterCollisionVulkan, BarrierPlanOrdersEveryIndirectDispatch) {
  // mark_scan writes the marked count and the dispatch arguments; every pass over marked particles is
  // dispatched indirectly from them (general path), and the plan puts a barrier between each writer
  // and its readers; the fused path's passes too.
  const InterScene s = denseScene();
  const InterCollisionStageCreateInfo ci = stageInfo(s, 1, InterCollisionPath::kGeneral);
  auto stage = InterCollisionStage::create(ctx(), ci);
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto buf = impl().allocator->createBuffer(s.particles.size() * sizeof(Float4), detail::MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(buf.ok());
  InterCollisionRecordInfo ri;
  ri.particles = buf->range();
  ri.cloths = s.cloths;
  ri.settings = s.settings;
  auto plan = detail::interCollisionBarrierPlan(**stage, ri);
  ASSERT_TRUE(plan.ok()) << plan.message();
  std::vector<std::string> names;
  size_t indirect = 0;
  for (size_t i = 0; i < plan->size(); ++i) {
    const detail::PlannedPass& p = (*plan)[i];
    names.push_back(p.name);
    if (!p.indirect) continue;
    ++indirect;
    EXPECT_TRUE(p.name.rfind("vkc.inter.", 0) == 0) << p.name;
    // Each indirect pass reads what the pass before it wrote (keys after apply or mark_write, the
    // sort's output, gather's new positions, apply's totals).
    EXPECT_TRUE(p.barrier.needed) << i << " " << p.name;
  }
  // keys, gather, apply per iteration, then write_back.
  EXPECT_EQ(indirect, 3u * s.settings.iterations + 1u);
  ASSERT_GE(names.size(), 6u);
  EXPECT_EQ(names[0], "vkc.bounds.tiles");
  EXPECT_EQ(names.back(), "vkc.inter.write_back");
  const auto scan = std::find(names.begin(), names.end(), "vkc.inter.mark_scan");
  ASSERT_NE(scan, names.end());
  const auto firstKeys = std::find(scan, names.end(), "vkc.inter.keys");
  ASSERT_NE(firstKeys, names.end());
  EXPECT_TRUE((*plan)[static_cast<size_t>(firstKeys - names.begin())].barrier.needed);

  // The fused path: one direct dispatch per iteration (it reads the marked count and the grid from the
  // state mark_scan and broad wrote, and the positions the iteration before moved), then write_back.
  auto fused = InterCollisionStage::create(ctx(), stageInfo(s, 1, InterCollisionPath::kFused));
  ASSERT_TRUE(fused.ok()) << fused.message();
  auto fusedPlan = detail::interCollisionBarrierPlan(**fused, ri);
  ASSERT_TRUE(fusedPlan.ok()) << fusedPlan.message();
  std::vector<std::string> fusedNames;
  for (const detail::PlannedPass& p : *fusedPlan) fusedNames.push_back(p.name);
  const std::vector<std::string> want = {"vkc.bounds.tiles",     "vkc.bounds.merge",    "vkc.inter.broad",
                                         "vkc.inter.mark_count", "vkc.inter.mark_scan", "vkc.inter.mark_write",
                                         "vkc.inter.fused",      "vkc.inter.fused",     "vkc.inter.write_back"};
  ASSERT_EQ(s.settings.iterations, 2u);
  EXPECT_EQ(fusedNames, want);
  for (size_t i = 6; i < fusedPlan->size(); ++i) {
    EXPECT_TRUE((*fusedPlan)[i].barrier.needed) << i << " " << fusedNames[i];
    EXPECT_EQ((*fusedPlan)[i].indirect, fusedNames[i] == "vkc.inter.write_back") << fusedNames[i];
  }

  // Bad buffer: nothing planned, the field is named.
  ri.particles.size = 16;
  auto bad = detail::interCollisionBarrierPlan(**stage, ri);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("InterCollisionRecordInfo::particles"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace vkc::test
