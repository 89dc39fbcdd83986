// Bad input: every backend rejects it with a message naming the field and changes nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "inter_scene.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using InterCollisionBadInput = BackendTest;

InterScene goodScene() {
  InterScene s;
  addGridCloth(s, 4, 0.1f, {0, 0, 0, 0}, quatAxisAngle(0, 1, 0, 0.3f));
  addGridCloth(s, 4, 0.1f, {0.05f, 0, 0.02f, 0}, quatAxisAngle(1, 0, 0, 0.2f));
  s.settings = {0.08f, 1.0f, 2};
  return s;
}

struct Case {
  const char* field;
  std::function<void(InterScene&)> spoil;
};

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

std::vector<Case> cases() {
  return {
      {"cloths[1].rotation.y", [](InterScene& s) { s.cloths[1].rotation.y = kNan; }},
      {"cloths[0].rotation.w", [](InterScene& s) { s.cloths[0].rotation.w = kInf; }},
      {"cloths[1].rotation has length", [](InterScene& s) { s.cloths[1].rotation = {0, 0, 0, 1.1f}; }},
      {"cloths[0].rotation has length", [](InterScene& s) { s.cloths[0].rotation = {0, 0, 0, 0}; }},
      {"cloths[1].translation.z", [](InterScene& s) { s.cloths[1].translation.z = kNan; }},
      {"settings.distance", [](InterScene& s) { s.settings.distance = 0.0f; }},
      {"settings.distance", [](InterScene& s) { s.settings.distance = -1.0f; }},
      {"settings.distance", [](InterScene& s) { s.settings.distance = kNan; }},
      {"settings.distance", [](InterScene& s) { s.settings.distance = kInf; }},
      {"settings.stiffness", [](InterScene& s) { s.settings.stiffness = 0.0f; }},
      {"settings.stiffness", [](InterScene& s) { s.settings.stiffness = 1.5f; }},
      {"settings.iterations", [](InterScene& s) { s.settings.iterations = 0; }},
      {"settings.iterations", [](InterScene& s) { s.settings.iterations = 65; }},
      {"settings.iterations", [](InterScene& s) { s.settings.iterations = 1u << 30; }},
      {"filters[0].cloth = 2 refers to a missing cloth", [](InterScene& s) { s.filters = {{2, 1, 1}}; }},
      {"filters[1].cloth = 7", [](InterScene& s) { s.filters = {{0, 1, 1}, {7, 1, 1}}; }},
      {"filters[1].cloth = 0 has a filter already", [](InterScene& s) { s.filters = {{0, 1, 1}, {0, 2, 2}}; }},
      {"cloths[1]", [](InterScene& s) { s.cloths[1].range.count = 100; }},
      {"cloths[0].particles[3].x", [](InterScene& s) { s.particles[3].x = kNan; }},
      {"cloths[1].particles[2].w", [](InterScene& s) { s.particles[18].w = -1.0f; }},
  };
}

TEST_P(InterCollisionBadInput, EveryFieldIsNamedAndNothingChanges) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.field);
    InterScene s = goodScene();
    c.spoil(s);
    InterCollisionReport report;
    report.marked = {12345};
    auto out = interCollide(backend(), ctx(), s.input(), &report);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(out.message().find(c.field), std::string::npos) << out.message();
    EXPECT_EQ(report.marked, std::vector<uint32_t>{12345}) << "the report must be untouched";
    if (backend() != Backend::kVulkan) {
      std::vector<Float4> dst(s.particles.size(), Float4{7, 7, 7, 7});
      EXPECT_FALSE(interCollideCpu(s.input(), dst, backend()).ok());
      for (const Float4& p : dst) EXPECT_EQ(p, (Float4{7, 7, 7, 7}));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, InterCollisionBadInput, VKC_ALL_BACKENDS);

// The stage keeps its state when given bad transforms: the next run equals the run before.
class InterCollisionStageVulkan : public VulkanTest {};

TEST_F(InterCollisionStageVulkan, BadTransformsLeaveTheStageUnchanged) {
  InterScene s = goodScene();
  InterCollisionStageCreateInfo ci{s.cloths, s.filters, static_cast<uint32_t>(s.particles.size()), s.settings};
  auto stage = InterCollisionStage::create(ctx(), ci);
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto before = (*stage)->run(s.input());
  ASSERT_TRUE(before.ok()) << before.message();
  std::vector<InterClothDesc> bad = s.cloths;
  bad[1].rotation = {0.5f, 0.5f, 0.5f, 0.9f};
  const Status st = (*stage)->setTransforms(bad);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cloths[1].rotation"), std::string::npos) << st.message();
  EXPECT_FALSE((*stage)->setTransforms(std::span(s.cloths).first(1)).ok());
  // record() cannot take a bad buffer either.
  VkCommandBuffer cmd = beginCommandBuffer();
  const Status rs = (*stage)->record(cmd, InterCollisionRecordInfo{});
  EXPECT_FALSE(rs.ok());
  EXPECT_NE(rs.message().find("InterCollisionRecordInfo::particles"), std::string::npos) << rs.message();
  freeCommandBuffer(cmd);
  // A stage whose settings differ from the input's is an error for run().
  InterScene other = s;
  other.settings.iterations = 3;
  EXPECT_FALSE((*stage)->run(other.input()).ok());
  // Bad description at creation.
  InterCollisionStageCreateInfo badCi = ci;
  badCi.settings.distance = -2.0f;
  auto badStage = InterCollisionStage::create(ctx(), badCi);
  ASSERT_FALSE(badStage.ok());
  EXPECT_NE(badStage.message().find("settings.distance"), std::string::npos);
  auto after = (*stage)->run(s.input());
  ASSERT_TRUE(after.ok()) << after.message();
  EXPECT_EQ(*after, *before);
  // Each run takes its input's transforms: cloth 1 moved away collides with nothing, moved back
  // gives the first answer again.
  EXPECT_NE(*before, s.particles);
  InterScene moved = s;
  moved.cloths[1].translation.x += 10.0f;
  InterCollisionReport report;
  auto far = (*stage)->run(moved.input(), &report);
  ASSERT_TRUE(far.ok()) << far.message();
  EXPECT_TRUE(report.clothPairs.empty());
  EXPECT_EQ(*far, moved.particles);
  auto back = (*stage)->run(s.input());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(*back, *before);
}

}  // namespace
}  // namespace vkc::test
