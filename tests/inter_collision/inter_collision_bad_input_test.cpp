// Bad input: every backend rejects it with a message naming the field and changes nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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
      {"settings.distance", [](InterScene& s) { s.settings.distance = 1e-31f; }},
      {"settings.stiffness", [](InterScene& s) { s.settings.stiffness = -0.1f; }},
      {"settings.stiffness", [](InterScene& s) { s.settings.stiffness = 1.5f; }},
      {"settings.stiffness", [](InterScene& s) { s.settings.stiffness = kNan; }},
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
    const std::vector<Float4> before = s.particles;
    InterCollisionDebug debug;
    debug.marked = {12345};
    const Status st = collideInter(backend(), ctx(), s.input(), &debug);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(st.message().find(c.field), std::string::npos) << st.message();
    EXPECT_EQ(debug.marked, std::vector<uint32_t>{12345}) << "the debug output must be untouched";
    EXPECT_EQ(0, std::memcmp(s.particles.data(), before.data(), before.size() * sizeof(Float4))) << "particles changed";
  }
}

// The limits of the shared separation check hold on every backend: distance 1e-30 and stiffness 0
// and 1 are valid.
TEST_P(InterCollisionBadInput, SeparationLimitsAreValid) {
  for (const InterCollisionSettings settings : {InterCollisionSettings{1e-30f, 0.0f, 1}, InterCollisionSettings{0.08f, 0.0f, 64},
                                               InterCollisionSettings{0.08f, 1.0f, 1}}) {
    InterScene s = goodScene();
    s.settings = settings;
    const Status st = collideInter(backend(), ctx(), s.input());
    EXPECT_TRUE(st.ok()) << st.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, InterCollisionBadInput, VKC_ALL_BACKENDS);

// The stage keeps its state when given bad transforms: the next run equals the run before.
class InterCollisionStageVulkan : public VulkanTest {};

// record() names every bad field of its record info and records nothing; create() names the bad
// description; run() takes the input's transforms and settings and refuses other ranges or filters,
// changing nothing.
TEST_F(InterCollisionStageVulkan, BadRecordInfoIsNamedAndTheStageStaysUsable) {
  InterScene s = goodScene();
  const InterCollisionStageCreateInfo ci{s.cloths, s.filters, static_cast<uint32_t>(s.particles.size()), 2};
  auto stage = InterCollisionStage::create(ctx(), ci);
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto before = interStep(Backend::kVulkan, &ctx(), s);  // a stage of its own
  ASSERT_TRUE(before.ok()) << before.message();

  auto buf = impl().allocator->createBuffer(s.particles.size() * sizeof(Float4), detail::MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(buf.ok());
  const InterCollisionRecordInfo good{.particles = buf->range(), .cloths = s.cloths, .settings = s.settings};
  std::vector<InterClothDesc> rotated = s.cloths, moved = s.cloths;
  rotated[1].rotation = {0.5f, 0.5f, 0.5f, 0.9f};
  moved[1].range.first -= 1;
  const std::span<const InterClothDesc> one = std::span(s.cloths).first(1);
  struct RecordCase {
    const char* field;
    std::function<void(InterCollisionRecordInfo&)> spoil;
  };
  const std::vector<RecordCase> recordCases = {
      {"InterCollisionRecordInfo::particles", [](InterCollisionRecordInfo& r) { r.particles = {}; }},
      {"InterCollisionRecordInfo::particles", [](InterCollisionRecordInfo& r) { r.particles.size = 16; }},
      {"InterCollisionRecordInfo::cloths holds 1 cloths", [&](InterCollisionRecordInfo& r) { r.cloths = one; }},
      {"InterCollisionRecordInfo::cloths[1].range", [&](InterCollisionRecordInfo& r) { r.cloths = moved; }},
      {"InterCollisionRecordInfo::cloths[1].rotation", [&](InterCollisionRecordInfo& r) { r.cloths = rotated; }},
      {"InterCollisionRecordInfo::settings.distance", [](InterCollisionRecordInfo& r) { r.settings.distance = -2; }},
      {"InterCollisionRecordInfo::settings.distance", [](InterCollisionRecordInfo& r) { r.settings.distance = kInf; }},
      {"InterCollisionRecordInfo::settings.stiffness", [](InterCollisionRecordInfo& r) { r.settings.stiffness = 2; }},
      {"InterCollisionRecordInfo::settings.iterations", [](InterCollisionRecordInfo& r) { r.settings.iterations = 0; }},
      {"InterCollisionRecordInfo::settings.iterations", [](InterCollisionRecordInfo& r) { r.settings.iterations = 65; }},
      {"InterCollisionRecordInfo::frame is 2", [](InterCollisionRecordInfo& r) { r.frame = 2; }},
  };
  for (const RecordCase& c : recordCases) {
    SCOPED_TRACE(c.field);
    InterCollisionRecordInfo ri = good;
    c.spoil(ri);
    VkCommandBuffer cmd = beginCommandBuffer();
    const Status rs = (*stage)->record(cmd, ri);
    ASSERT_FALSE(rs.ok());
    EXPECT_NE(rs.message().find(c.field), std::string::npos) << rs.message();
    freeCommandBuffer(cmd);
  }
  // The good record info records (the first record() also records the bounds table's upload, so
  // that command buffer is submitted).
  submit([&](VkCommandBuffer cmd) { EXPECT_TRUE((*stage)->record(cmd, good).ok()); });

  // Bad descriptions at creation (the settings are not part of it any more).
  InterCollisionStageCreateInfo badCi = ci;
  const std::vector<InterCollisionFilter> badFilters = {{5, 1, 1}};
  badCi.filters = badFilters;
  auto badStage = InterCollisionStage::create(ctx(), badCi);
  ASSERT_FALSE(badStage.ok());
  EXPECT_NE(badStage.message().find("filters[0].cloth"), std::string::npos) << badStage.message();
  for (uint32_t frames : {0u, kMaxFramesInFlight + 1}) {
    badCi = ci;
    badCi.framesInFlight = frames;
    auto bad = InterCollisionStage::create(ctx(), badCi);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.message().find("InterCollisionStageCreateInfo::framesInFlight"), std::string::npos) << bad.message();
    EXPECT_FALSE(InterCollisionStage::memoryRequirements(ctx(), badCi).ok());
  }

  // run(): other ranges or filters are refused and change nothing; transforms and settings come
  // from the input.
  InterScene other = s;
  other.filters = {{0, 2, 2}};
  const std::vector<Float4> untouched = other.particles;
  EXPECT_FALSE((*stage)->run(other.input()).ok());
  EXPECT_EQ(other.particles, untouched);
  other = s;
  other.settings.stiffness = -1.0f;
  InterCollisionDebug debug;
  debug.marked = {99};
  const Status badRun = (*stage)->run(other.input(), &debug);
  ASSERT_FALSE(badRun.ok());
  EXPECT_NE(badRun.message().find("settings.stiffness"), std::string::npos) << badRun.message();
  EXPECT_EQ(other.particles, untouched);
  EXPECT_EQ(debug.marked, std::vector<uint32_t>{99});

  InterScene step = s;
  ASSERT_TRUE((*stage)->run(step.input()).ok());
  EXPECT_EQ(step.particles, *before);
  EXPECT_NE(*before, s.particles);
  // Each run takes its input's transforms: cloth 1 moved away collides with nothing.
  InterScene far = s;
  far.cloths[1].translation.x += 10.0f;
  ASSERT_TRUE((*stage)->run(far.input(), &debug).ok());
  EXPECT_TRUE(debug.clothPairs.empty());
  EXPECT_EQ(far.particles, s.particles);
  // ... and its settings: more iterations give what a stage made for them gives.
  InterScene more = s;
  more.settings.iterations = 5;
  auto want = interStep(Backend::kVulkan, &ctx(), more);
  ASSERT_TRUE(want.ok());
  ASSERT_TRUE((*stage)->run(more.input()).ok());
  EXPECT_EQ(more.particles, *want);
  EXPECT_NE(more.particles, *before);
}

}  // namespace
}  // namespace vkc::test
