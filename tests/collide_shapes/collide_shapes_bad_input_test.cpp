// Bad input to shape collision (spheres, capsules, planes, convexes): every backend (collideShapes), the Vulkan stage's create(),
// run() and record() reject it with an error that names the field, and change nothing: particles,
// previous positions, debug output and the host's buffers stay as they were, and a rejected record()
// leaves the command buffer empty; framesInFlight and the record's frame are checked too. (tests/vulkan/collide_shapes_stage_test.cpp has the record()
// buffer-size, layout-change and device-limit-by-sphere-count cases.)
#include <gtest/gtest.h>

#include <functional>

#include "collide_shapes/shapes_test_support.h"
#include "support/vulkan_fixture.h"
#include "vulkan/memory.h"

namespace vkc::test {
namespace {

using namespace shapes;

// Two cloths, the first with 4 spheres and 2 capsules, the second with 2 spheres; particles inside
// the shapes, so that an accepted run would change them.
Scene validScene() {
  std::vector<Float4> p, q;
  for (int i = 0; i < 50; ++i) {
    const float x = -1.0f + 0.04f * static_cast<float>(i);
    p.push_back({x, 0.05f, 0.0f, 1.0f});
    q.push_back({x + 0.1f, 0.0f, 0.0f, 1.0f});
  }
  Scene s;
  s.addCloth(p, q, {{-1, 0, 0, 0.3f}, {0, 0, 0, 0.3f}, {1, 0, 0, 0.2f}, {5, 5, 5, 0.1f}}, {{0, 1}, {1, 2}});
  s.addCloth(p, q, {{0, 0, 0, 0.5f}, {0.5f, 0, 0, 0.4f}}, {{0, 1}});
  // A box around the first cloth's particles and a ground plane under both (unnormalized normals).
  s.setConvexes(0,
                {{1, 0, 0, -1.5f}, {-1, 0, 0, -1.5f}, {0, 1, 0, -0.5f}, {0, -1, 0, -0.5f}, {0, 0, 2, -1}, {0, 0, -2, -1},
                 {0, 3, 0, 0.3f}},
                {{0, 1, 2, 3, 4, 5}, {6}});
  s.setConvexes(1, {{0, 1, 0, 0.1f}}, {{0}});
  s.settings = {.continuous = true, .friction = 0.5f, .collisionMassScale = 1.0f};
  return s;
}

struct Case {
  const char* name;
  std::function<void(Scene&)> spoil;
  const char* field;  // the message names it
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"NaN sphere centre", [](Scene& s) { s.spheres[0][2].y = NAN; }, "colliders[0].spheres[2].y"},
      {"Inf sphere centre", [](Scene& s) { s.spheres[1][0].z = -INFINITY; }, "colliders[1].spheres[0].z"},
      {"NaN radius", [](Scene& s) { s.spheres[0][1].w = NAN; }, "colliders[0].spheres[1].w"},
      {"Inf radius", [](Scene& s) { s.spheres[1][1].w = INFINITY; }, "colliders[1].spheres[1].w"},
      {"negative radius", [](Scene& s) { s.spheres[0][3].w = -0.5f; }, "colliders[0].spheres[3].w (radius)"},
      {"NaN previous sphere",
       [](Scene& s) {
         s.prevSpheres[0] = s.spheres[0];
         s.prevSpheres[0][0].x = NAN;
       },
       "colliders[0].prevSpheres[0].x"},
      {"negative previous radius",
       [](Scene& s) {
         s.prevSpheres[1] = s.spheres[1];
         s.prevSpheres[1][1].w = -1.0f;
       },
       "colliders[1].prevSpheres[1].w"},
      {"previous spheres count", [](Scene& s) { s.prevSpheres[0] = {s.spheres[0][0]}; },
       "colliders[0].prevSpheres has 1 elements"},
      {"capsule sphere0 out of range", [](Scene& s) { s.capsules[0][1].sphere0 = 4; },
       "colliders[0].capsules[1].sphere0 is 4"},
      {"capsule sphere1 out of range", [](Scene& s) { s.capsules[1][0].sphere1 = 0xFFFFFFFFu; },
       "colliders[1].capsules[0].sphere1 is 4294967295"},
      {"capsule of a sphere with itself",
       [](Scene& s) {
         s.capsules[0][0] = {1, 1};
       },
       "colliders[0].capsules[0]: sphere0 and sphere1"},
      {"zero plane normal", [](Scene& s) { s.planes[0][1] = {0, 0, 0, 1}; },
       "colliders[0].planes[1] normal (0, 0, 0) is zero"},
      {"denormal plane normal", [](Scene& s) { s.planes[0][2] = {1e-30f, 0, 0, 0}; }, "colliders[0].planes[2] normal"},
      {"NaN plane normal", [](Scene& s) { s.planes[1][0].y = NAN; }, "colliders[1].planes[0].y is nan"},
      {"infinite plane offset", [](Scene& s) { s.planes[0][6].w = INFINITY; }, "colliders[0].planes[6].w is inf"},
      {"NaN previous plane",
       [](Scene& s) {
         s.prevPlanes[0] = s.planes[0];
         s.prevPlanes[0][3].x = NAN;
       },
       "colliders[0].prevPlanes[3].x"},
      {"previous planes count", [](Scene& s) { s.prevPlanes[1] = {s.planes[1][0], s.planes[1][0]}; },
       "colliders[1].prevPlanes has 2 elements"},
      {"plane turning over within the frame",
       [](Scene& s) {
         s.prevPlanes[1] = s.planes[1];
         s.prevPlanes[1][0] = {0, -2, 0, 0.1f};
       },
       "colliders[1].planes[0]: its normal turns over"},
      {"convex plane index out of range", [](Scene& s) { s.convexPlaneLists[0][0][2] = 7; },
       "colliders[0].convexes[0].planes[2] is 7; the cloth has 7 planes"},
      {"empty convex", [](Scene& s) { s.convexPlaneLists[1][0].clear(); },
       "colliders[1].convexes[0].planes is empty"},
      {"alphaBegin negative", [](Scene& s) { s.settings.alphaBegin = -0.1f; }, "alphaBegin"},
      {"alphaEnd above 1", [](Scene& s) { s.settings.alphaEnd = 1.5f; }, "alphaEnd"},
      {"alphaEnd before alphaBegin",
       [](Scene& s) {
         s.settings.alphaBegin = 0.6f;
         s.settings.alphaEnd = 0.5f;
       },
       "alphaEnd"},
      {"alpha NaN", [](Scene& s) { s.settings.alphaBegin = NAN; }, "alphaBegin"},
      {"negative friction", [](Scene& s) { s.settings.friction = -0.1f; }, "friction"},
      {"infinite friction", [](Scene& s) { s.settings.friction = INFINITY; }, "friction"},
      {"negative mass scale", [](Scene& s) { s.settings.collisionMassScale = -1.0f; }, "collisionMassScale"},
      {"NaN particle", [](Scene& s) { s.particles[60].x = NAN; }, "cloths[1].particles[10].x"},
      {"negative inverse mass", [](Scene& s) { s.prev[3].w = -1.0f; }, "cloths[0].prevParticles[3].w"},
  };
  return all;
}

// The layout-changing cases the colliders-count check catches: one colliders entry too few/many.
ShapeCollisionInput withColliderCount(Scene& s, size_t count, std::vector<ClothColliders>& storage) {
  ShapeCollisionInput in = s.input();
  storage.assign(in.colliders.begin(), in.colliders.end());
  storage.resize(count, storage.back());
  in.colliders = storage;
  return in;
}

using ShapeBadInput = BackendTest;

TEST_P(ShapeBadInput, EveryCaseNamesTheFieldAndChangesNothing) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Scene s = validScene();
    c.spoil(s);
    const Scene before = s;
    ShapeCollisionDebug debug{{7u, 7u}, {9u}};
    const Status st = collideShapes(backend(), ctx(), s.input(), &debug);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(st.message().find(c.field), std::string::npos) << st.message();
    EXPECT_EQ(std::memcmp(s.particles.data(), before.particles.data(), s.particles.size() * sizeof(Float4)),
              0);
    EXPECT_EQ(std::memcmp(s.prev.data(), before.prev.data(), s.prev.size() * sizeof(Float4)), 0);
    EXPECT_EQ(debug.masks, (std::vector<uint32_t>{7u, 7u}));
    EXPECT_EQ(debug.maskWords, (std::vector<uint32_t>{9u}));
  }
  // The same scene, unspoilt, is accepted and collides (so the cases above fail for their reason).
  Scene s = validScene();
  const Scene before = s;
  collide(backend(), ctx(), s);
  EXPECT_NE(std::memcmp(s.particles.data(), before.particles.data(), s.particles.size() * sizeof(Float4)), 0);
}

TEST_P(ShapeBadInput, CollidersCountMustMatchTheCloths) {
  for (size_t count : {size_t{1}, size_t{3}}) {
    Scene s = validScene();
    const Scene before = s;
    std::vector<ClothColliders> storage;
    const Status st = collideShapes(backend(), ctx(), withColliderCount(s, count, storage));
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("colliders has " + std::to_string(count) + " entries"), std::string::npos)
        << st.message();
    EXPECT_EQ(std::memcmp(s.particles.data(), before.particles.data(), s.particles.size() * sizeof(Float4)),
              0);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ShapeBadInput, VKC_ALL_BACKENDS);

class ShapeBadInputVulkan : public VulkanTest {
 protected:
  std::unique_ptr<ShapeCollisionStage> makeStage(Scene& s) {
    ShapeCollisionInput in = s.input();
    auto stage = ShapeCollisionStage::create(
        ctx(), {s.cloths, static_cast<uint32_t>(s.particles.size()), in.colliders});
    EXPECT_TRUE(stage.ok()) << stage.message();
    return stage.ok() ? std::move(stage.value()) : nullptr;
  }
};

TEST_F(ShapeBadInputVulkan, StageRunRejectsEveryCaseAndChangesNothing) {
  Scene good = validScene();
  auto stage = makeStage(good);
  ASSERT_NE(stage, nullptr);
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Scene s = validScene();
    c.spoil(s);
    const Scene before = s;
    ShapeCollisionDebug debug{{7u}, {9u}};
    const Status st = stage->run(s.input(), &debug);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(c.field), std::string::npos) << st.message();
    EXPECT_EQ(std::memcmp(s.particles.data(), before.particles.data(), s.particles.size() * sizeof(Float4)),
              0);
    EXPECT_EQ(std::memcmp(s.prev.data(), before.prev.data(), s.prev.size() * sizeof(Float4)), 0);
    EXPECT_EQ(debug.masks, (std::vector<uint32_t>{7u}));
  }
  std::vector<ClothColliders> storage;
  Scene s = validScene();
  EXPECT_NE(stage->run(withColliderCount(s, 1, storage)).message().find("colliders has 1 entries"),
            std::string::npos);
  // The stage still works after all those rejections, and equals the CPU.
  Scene cpu = validScene();
  ASSERT_TRUE(stage->run(good.input()).ok());
  collide(Backend::kCpuScalar, nullptr, cpu);
  for (size_t i = 0; i < cpu.particles.size(); ++i) {
    EXPECT_NEAR(good.particles[i].x, cpu.particles[i].x, 1e-4f) << i;
    EXPECT_NEAR(good.particles[i].y, cpu.particles[i].y, 1e-4f) << i;
  }
}

TEST_F(ShapeBadInputVulkan, CreateRejectsBadColliders) {
  for (const Case& c : cases()) {
    const std::string field = c.field;
    if (field.rfind("colliders", 0) != 0) continue;  // create() reads only the layout and the colliders
    SCOPED_TRACE(c.name);
    Scene s = validScene();
    c.spoil(s);
    ShapeCollisionInput in = s.input();
    auto stage = ShapeCollisionStage::create(
        ctx(), {s.cloths, static_cast<uint32_t>(s.particles.size()), in.colliders});
    ASSERT_FALSE(stage.ok());
    EXPECT_NE(stage.message().find(c.field), std::string::npos) << stage.message();
  }
}

TEST_F(ShapeBadInputVulkan, RecordRejectsBadCollidersAndSettingsAndRecordsNothing) {
  Scene s = validScene();
  auto stage = makeStage(s);
  ASSERT_NE(stage, nullptr);
  const uint32_t n = static_cast<uint32_t>(s.particles.size());
  const VkDeviceSize bytes = n * sizeof(Float4);
  auto host = impl().allocator->createBuffer(2 * bytes, detail::MemoryUsage::kUpload);
  ASSERT_TRUE(host.ok());
  std::memcpy(host->mapped(), s.particles.data(), bytes);
  std::memcpy(static_cast<char*>(host->mapped()) + bytes, s.prev.data(), bytes);
  std::vector<char> original(2 * bytes);
  std::memcpy(original.data(), host->mapped(), 2 * bytes);

  for (const Case& c : cases()) {
    const std::string field = c.field;
    if (field.rfind("cloths[", 0) == 0)
      continue;  // particle values live in the device buffers: not checked by record()
    SCOPED_TRACE(c.name);
    Scene bad = validScene();
    c.spoil(bad);
    ShapeCollisionRecordInfo info;
    info.particles = {host->handle(), 0, bytes};
    info.prevParticles = {host->handle(), bytes, bytes};
    info.colliders = bad.input().colliders;
    info.settings = bad.settings;
    // Submitted after the rejected record(): had anything been recorded, the buffer would change.
    submit([&](VkCommandBuffer cmd) {
      const Status st = stage->record(cmd, info);
      ASSERT_FALSE(st.ok());
      EXPECT_NE(st.message().find(c.field), std::string::npos) << st.message();
    });
    ASSERT_EQ(std::memcmp(host->mapped(), original.data(), 2 * bytes), 0);
  }
  // A good record() changes the buffer.
  ShapeCollisionRecordInfo info;
  info.particles = {host->handle(), 0, bytes};
  info.prevParticles = {host->handle(), bytes, bytes};
  info.colliders = s.input().colliders;
  info.settings = s.settings;
  info.sync.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT;
  info.sync.dstAccess = VK_ACCESS_2_HOST_READ_BIT;
  submit([&](VkCommandBuffer cmd) { ASSERT_TRUE(stage->record(cmd, info).ok()); });
  EXPECT_NE(std::memcmp(host->mapped(), original.data(), 2 * bytes), 0);
}

TEST_F(ShapeBadInputVulkan, FramesInFlightOutOfRangeIsRejectedByCreateAndMemoryRequirements) {
  Scene s = validScene();
  ShapeCollisionInput in = s.input();
  for (uint32_t frames : {0u, kMaxFramesInFlight + 1}) {
    SCOPED_TRACE(frames);
    const ShapeCollisionStageCreateInfo info{.cloths = s.cloths,
                                             .particleCount = static_cast<uint32_t>(s.particles.size()),
                                             .colliders = in.colliders,
                                             .framesInFlight = frames};
    const std::string field = "ShapeCollisionStageCreateInfo::framesInFlight is " + std::to_string(frames);
    auto stage = ShapeCollisionStage::create(ctx(), info);
    ASSERT_FALSE(stage.ok());
    EXPECT_NE(stage.message().find(field), std::string::npos) << stage.message();
    auto need = ShapeCollisionStage::memoryRequirements(ctx(), info);
    ASSERT_FALSE(need.ok());
    EXPECT_NE(need.message().find(field), std::string::npos) << need.message();
  }
}

TEST_F(ShapeBadInputVulkan, RecordRejectsAFrameBeyondFramesInFlightAndRecordsNothing) {
  Scene s = validScene();
  ShapeCollisionInput in = s.input();
  const uint32_t n = static_cast<uint32_t>(s.particles.size());
  auto stage = ShapeCollisionStage::create(
      ctx(), {.cloths = s.cloths, .particleCount = n, .colliders = in.colliders, .framesInFlight = 2});
  ASSERT_TRUE(stage.ok()) << stage.message();
  const VkDeviceSize bytes = n * sizeof(Float4);
  detail::Buffer host = hostBuffer(2 * bytes);
  std::memcpy(host.mapped(), s.particles.data(), bytes);
  std::memcpy(static_cast<char*>(host.mapped()) + bytes, s.prev.data(), bytes);
  ShapeCollisionRecordInfo info;
  info.particles = {host.handle(), 0, bytes};
  info.prevParticles = {host.handle(), bytes, bytes};
  info.colliders = in.colliders;
  info.settings = s.settings;
  info.frame = 2;
  submit([&](VkCommandBuffer cmd) {
    const Status st = (*stage)->record(cmd, info);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(st.message().find("ShapeCollisionRecordInfo::frame is 2"), std::string::npos) << st.message();
  });
  EXPECT_EQ(std::memcmp(host.mapped(), s.particles.data(), bytes), 0);
  EXPECT_FALSE((*stage)->recordUpload(VK_NULL_HANDLE).ok());
}

TEST_F(ShapeBadInputVulkan, MoreCapsulesThanTheDeviceAllowsIsAnError) {
  // Each capsule takes 6 vec4 of prepared cones (start and end): this many exceed maxStorageBufferRange.
  const uint64_t tooMany = ctx().deviceInfo().maxStorageBufferRange / 96 + 1;
  ASSERT_LT(tooMany, 64u << 20) << "the device's limit is too large to test cheaply";
  Scene s;
  s.addCloth({{0, 0, 0, 1}}, {}, {{0, 0, 0, 1}, {1, 0, 0, 1}}, std::vector<Capsule>(tooMany, Capsule{0, 1}));
  const Scene before = s;
  ShapeCollisionInput in = s.input();
  auto stage = ShapeCollisionStage::create(ctx(), {s.cloths, 1, in.colliders});
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(stage.message().find("colliders (spheres, capsules and planes"), std::string::npos) << stage.message();
  EXPECT_NE(stage.message().find("maxStorageBufferRange"), std::string::npos) << stage.message();
  // Through collideShapes: the same error, nothing changed.
  const Status st = collideShapes(Backend::kVulkan, &ctx(), in);
  EXPECT_EQ(st.error().code, ErrorCode::kLimitExceeded);
  EXPECT_TRUE(bitwiseEqual(s.particles[0], before.particles[0]));
}

TEST_F(ShapeBadInputVulkan, MorePlanesThanTheDeviceAllowsIsAnError) {
  // Each plane takes 2 vec4 of prepared planes (start and end): this many exceed maxStorageBufferRange.
  // 4M planes (64 MiB) on lavapipe; 128M (2 GiB of host memory) where the range is 4 GiB (NVIDIA).
  const uint64_t tooMany = ctx().deviceInfo().maxStorageBufferRange / 32 + 1;
  ASSERT_LT(tooMany, 160u << 20) << "the device's limit is too large to test cheaply";
  Scene s;
  s.addCloth({{0, -1, 0, 1}}, {}, {});
  s.setConvexes(0, std::vector<Float4>(tooMany, Float4{0, 1, 0, 0}), {{0, 1}});
  const Scene before = s;
  ShapeCollisionInput in = s.input();
  auto need = ShapeCollisionStage::memoryRequirements(ctx(), {s.cloths, 1, in.colliders});
  ASSERT_FALSE(need.ok());
  EXPECT_EQ(need.error().code, ErrorCode::kLimitExceeded);
  auto stage = ShapeCollisionStage::create(ctx(), {s.cloths, 1, in.colliders});
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(stage.message().find("colliders (spheres, capsules and planes"), std::string::npos) << stage.message();
  EXPECT_NE(stage.message().find("maxStorageBufferRange"), std::string::npos) << stage.message();
  const Status st = collideShapes(Backend::kVulkan, &ctx(), in);
  EXPECT_EQ(st.error().code, ErrorCode::kLimitExceeded);
  EXPECT_TRUE(bitwiseEqual(s.particles[0], before.particles[0]));
}

TEST_F(ShapeBadInputVulkan, RecordRejectsChangedConvexesAndRecordsNothing) {
  // The stage's layout includes every convex's plane list: a record() whose convexes differ is refused.
  Scene s = validScene();
  auto stage = makeStage(s);
  ASSERT_NE(stage, nullptr);
  const VkDeviceSize bytes = s.particles.size() * sizeof(Float4);
  auto host = impl().allocator->createBuffer(2 * bytes, detail::MemoryUsage::kUpload);
  ASSERT_TRUE(host.ok());
  std::memcpy(host->mapped(), s.particles.data(), bytes);
  std::memcpy(static_cast<char*>(host->mapped()) + bytes, s.prev.data(), bytes);
  for (int change = 0; change < 3; ++change) {
    Scene bad = validScene();
    if (change == 0) bad.convexPlaneLists[0][0][1] = 2;        // another plane
    if (change == 1) bad.convexPlaneLists[1][0].push_back(0);  // one more index
    if (change == 2) bad.planes[1].push_back({0, 1, 0, 0});    // one more plane
    ShapeCollisionRecordInfo info;
    info.particles = {host->handle(), 0, bytes};
    info.prevParticles = {host->handle(), bytes, bytes};
    info.colliders = bad.input().colliders;
    submit([&](VkCommandBuffer cmd) {
      const Status st = stage->record(cmd, info);
      ASSERT_FALSE(st.ok());
      EXPECT_NE(st.message().find("capsules or convexes differ from the stage's layout"), std::string::npos)
          << st.message();
    });
    EXPECT_EQ(std::memcmp(host->mapped(), s.particles.data(), bytes), 0);
  }
}

}  // namespace
}  // namespace vkc::test
