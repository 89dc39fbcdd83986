// The integration contract on the shape stage (see bounds_integration_test.cpp): create()
// and record() never touch a queue, several frames in flight each use their own spheres and scratch,
// memoryRequirements() is what create() allocates (the embedded bounds stage included), and a failing
// device allocation at any point is reported, leaves nothing allocated and the outputs untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "collide_shapes/shapes_test_support.h"
#include "support/device_memory.h"
#include "support/integration.h"
#include "support/vulkan_fixture.h"
#include "vulkan/collide_shapes_stage.h"

namespace vkc::test {
namespace {

using shapes::Scene;

// Every test runs on both paths (ShapeCollisionPath: general and fused).
ShapeCollisionPath gPath = ShapeCollisionPath::kGeneral;

class ShapesIntegrationVulkan : public VulkanTest, public ::testing::WithParamInterface<ShapeCollisionPath> {
 protected:
  void SetUp() override {
    VulkanTest::SetUp();
    gPath = GetParam();
  }
};

// Two cloths of particles scattered around moving spheres, capsules, a moving box (a convex of 6
// planes) and a ground plane. The layout (counts, capsules, convexes) does not depend on `seed`; the
// positions do (so that frames in flight with different seeds need their own spheres and planes).
Scene scene(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Scene s;
  for (uint32_t c = 0; c < 2; ++c) {
    std::vector<Float4> p, q;
    for (uint32_t i = 0; i < 1500 + 700 * c; ++i) {
      p.push_back({u(rng) * 2, u(rng) * 2, u(rng) * 2, i % 40 == 0 ? 0.0f : 1.0f});
      q.push_back({p.back().x - 0.05f * u(rng), p.back().y + 0.05f * u(rng), p.back().z, p.back().w});
    }
    std::vector<Float4> spheres, prevSpheres;
    std::vector<Capsule> capsules;
    for (uint32_t k = 0; k < 12; ++k) {
      spheres.push_back({u(rng) * 1.5f, u(rng) * 1.5f, u(rng) * 1.5f, 0.2f + 0.3f * std::abs(u(rng))});
      prevSpheres.push_back({spheres.back().x + 0.1f * u(rng), spheres.back().y, spheres.back().z, spheres.back().w});
      if (k % 3 == 1) capsules.push_back({k - 1, k});
    }
    const uint32_t cloth = s.addCloth(p, q, spheres, capsules, prevSpheres);
    const float bx = u(rng), by = u(rng), h = 0.4f + 0.3f * std::abs(u(rng));
    std::vector<Float4> planes = {{1, 0, 0, -(bx + h)}, {-1, 0, 0, bx - h}, {0, 1, 0, -(by + h)},
                                  {0, -1, 0, by - h},   {0, 0, 1, -h},      {0, 0, -1, -h},
                                  {0, 1, 0, 1.5f + 0.2f * u(rng)}};
    std::vector<Float4> prevPlanes = planes;
    for (Float4& f : prevPlanes) f.w += 0.2f * u(rng);
    s.setConvexes(cloth, planes, {{0, 1, 2, 3, 4, 5}, {6}}, prevPlanes);
  }
  s.settings = {.continuous = true, .friction = 0.3f, .collisionMassScale = 1.0f};
  return s;
}

uint32_t particleCount(const Scene& s) { return static_cast<uint32_t>(s.particles.size()); }

ShapeCollisionStageCreateInfo createInfo(Scene& s, uint32_t frames = 1) {
  return {.cloths = s.cloths,
          .particleCount = particleCount(s),
          .colliders = s.input().colliders,
          .framesInFlight = frames,
          .path = gPath};
}

// `got` (particles then previous positions, as in a host buffer) against the CPU twin's result.
void expectCpuResult(Scene s, const void* got, const char* what) {
  const std::vector<Float4> before = s.particles;
  ASSERT_TRUE(collideShapesCpu(s.input(), Backend::kCpuScalar).ok());
  const size_t n = s.particles.size();
  std::vector<Float4> gpu(2 * n);
  std::memcpy(gpu.data(), got, 2 * n * sizeof(Float4));
  size_t moved = 0, bad = 0;
  for (size_t i = 0; i < 2 * n; ++i) {
    const Float4 want = i < n ? s.particles[i] : s.prev[i - n];
    const float a[4] = {gpu[i].x, gpu[i].y, gpu[i].z, gpu[i].w}, b[4] = {want.x, want.y, want.z, want.w};
    for (int k = 0; k < 4; ++k) {
      if (!(std::abs(a[k] - b[k]) <= kShapeCollisionTolerance * (1.0f + std::abs(b[k]))) && bad++ < 5) {
        ADD_FAILURE() << what << ": element " << i << "." << "xyzw"[k] << ": vulkan " << a[k] << ", cpu " << b[k];
      }
    }
    if (i < n) moved += std::memcmp(&before[i], &s.particles[i], sizeof(Float4)) != 0;
  }
  EXPECT_GT(moved, n / 25) << what << ": the scene should collide";
}

TEST_P(ShapesIntegrationVulkan, CreateAndRecordNeedNoQueue) {
  TestDeviceMemory memory(impl());
  auto noQueue = importTestContext(impl(), false, memory.callbacks());
  ASSERT_TRUE(noQueue.ok()) << noQueue.message();
  Scene s = scene(1);
  auto stage = ShapeCollisionStage::create(**noQueue, createInfo(s));
  ASSERT_TRUE(stage.ok()) << stage.message();
  EXPECT_GT(memory.live(), 0);

  // The host's buffers and command buffer; the submission is the host's (here: the test's queue).
  const VkDeviceSize bytes = particleCount(s) * sizeof(Float4);
  detail::Buffer host = hostBuffer(2 * bytes);
  std::memcpy(host.mapped(), s.particles.data(), bytes);
  std::memcpy(static_cast<char*>(host.mapped()) + bytes, s.prev.data(), bytes);
  VkCommandBuffer cmd = beginCommandBuffer();
  ASSERT_TRUE((*stage)->recordUpload(cmd).ok());
  const Status st = (*stage)->record(cmd, {.particles = {host.handle(), 0, bytes},
                                           .prevParticles = {host.handle(), bytes, bytes},
                                           .colliders = s.input().colliders,
                                           .settings = s.settings,
                                           .sync = {.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT,
                                                    .dstAccess = VK_ACCESS_2_HOST_READ_BIT}});
  ASSERT_TRUE(st.ok()) << st.message();
  submitRecorded({&cmd, 1});
  expectCpuResult(s, host.mapped(), "recorded");

  // Only the convenience path needs a queue, and it says so without touching the particles.
  Scene r = s;
  expectErrorNaming((*stage)->run(r.input()), "queue");
  EXPECT_EQ(std::memcmp(r.particles.data(), s.particles.data(), bytes), 0);
  stage->reset();
  EXPECT_EQ(memory.live(), 0);
}

TEST_P(ShapesIntegrationVulkan, ThreeFramesInFlightUseTheirOwnSpheresAndScratch) {
  const uint32_t frames = 3;
  std::vector<Scene> scenes;
  for (uint32_t f = 0; f < frames; ++f) scenes.push_back(scene(20 + f));
  auto stage = ShapeCollisionStage::create(ctx(), createInfo(scenes[0], frames));
  ASSERT_TRUE(stage.ok()) << stage.message();

  // No buffer that a frame writes is shared with another frame.
  std::vector<std::vector<uint64_t>> writes;
  for (uint32_t f = 0; f < frames; ++f) {
    writes.push_back(detail::shapeFrameWrites(**stage, f));
    // General: spheres and planes, prepared, grids, masks, convex bits, bounds tiles and output; fused:
    // the same without the bounds stage's.
    EXPECT_GE(writes.back().size(), gPath == ShapeCollisionPath::kGeneral ? 7u : 5u);
    for (uint32_t g = 0; g < f; ++g) {
      std::vector<uint64_t> common;
      std::set_intersection(writes[f].begin(), writes[f].end(), writes[g].begin(), writes[g].end(),
                            std::back_inserter(common));
      EXPECT_TRUE(common.empty()) << "frames " << g << " and " << f << " share " << common.size() << " buffer(s)";
    }
  }

  // Three frames recorded before any is submitted, each with its own particles and spheres; the
  // host's sphere arrays of a frame are overwritten once it is recorded (record() copied them).
  const VkDeviceSize bytes = particleCount(scenes[0]) * sizeof(Float4);
  detail::Buffer host = hostBuffer(frames * 2 * bytes);
  std::vector<VkCommandBuffer> cmds;
  std::vector<Scene> recorded = scenes;
  for (uint32_t f = 0; f < frames; ++f) {
    char* base = static_cast<char*>(host.mapped()) + f * 2 * bytes;
    std::memcpy(base, scenes[f].particles.data(), bytes);
    std::memcpy(base + bytes, scenes[f].prev.data(), bytes);
    cmds.push_back(beginCommandBuffer());
    const Status st = (*stage)->record(cmds.back(), {.particles = {host.handle(), f * 2 * bytes, bytes},
                                                     .prevParticles = {host.handle(), f * 2 * bytes + bytes, bytes},
                                                     .colliders = recorded[f].input().colliders,
                                                     .settings = scenes[f].settings,
                                                     .frame = f,
                                                     .sync = {.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT,
                                                              .dstAccess = VK_ACCESS_2_HOST_READ_BIT}});
    ASSERT_TRUE(st.ok()) << st.message();
    for (auto& sph : recorded[f].spheres) std::fill(sph.begin(), sph.end(), Float4{0, 0, 0, 100});
  }
  submitRecorded(cmds);
  for (uint32_t f = 0; f < frames; ++f) {
    expectCpuResult(scenes[f], static_cast<const char*>(host.mapped()) + f * 2 * bytes,
                    ("frame " + std::to_string(f)).c_str());
  }

  VkCommandBuffer cmd = beginCommandBuffer();
  expectErrorNaming((*stage)->record(cmd, {.particles = {host.handle(), 0, bytes},
                                           .prevParticles = {host.handle(), bytes, bytes},
                                           .colliders = scenes[0].input().colliders,
                                           .frame = frames}),
                    "ShapeCollisionRecordInfo::frame is 3");
  freeCommandBuffer(cmd);
  EXPECT_FALSE(ShapeCollisionStage::create(ctx(), createInfo(scenes[0], 0)).ok());
  EXPECT_FALSE(ShapeCollisionStage::create(ctx(), createInfo(scenes[0], kMaxFramesInFlight + 1)).ok());
}

TEST_P(ShapesIntegrationVulkan, MemoryRequirementsAreWhatCreateAllocates) {
  Scene s = scene(3);
  for (uint32_t frames : {1u, 2u, 4u}) {
    const ShapeCollisionStageCreateInfo info = createInfo(s, frames);
    const auto need = expectMemoryRequirementsMatchCreate<ShapeCollisionStage>(ctx(), impl(), info,
                                                                               std::to_string(frames) + " frames");
    ASSERT_TRUE(need);
    EXPECT_GT(need->hostVisibleBytes, 0u);
  }
  // Bad create infos are rejected as create() rejects them.
  ShapeCollisionStageCreateInfo bad = createInfo(s);
  bad.particleCount = 10;
  expectErrorNaming(ShapeCollisionStage::memoryRequirements(ctx(), bad).status(), "ShapeCollisionStageCreateInfo");
  Scene nan = scene(3);
  nan.spheres[1][4].x = NAN;
  expectErrorNaming(ShapeCollisionStage::memoryRequirements(ctx(), createInfo(nan)).status(),
                    "colliders[1].spheres[4].x");
}

TEST_P(ShapesIntegrationVulkan, EveryFailingAllocationIsReportedAndLeaksNothing) {
  const Scene original = scene(7);
  forEachFailingAllocation(impl(), [&](Context& c, TestDeviceMemory& memory) {
    Scene s = original;
    auto stage = ShapeCollisionStage::create(c, createInfo(s));
    ShapeCollisionDebug debug{{7u}, {9u}};
    Status st = stage.ok() ? (*stage)->run(s.input(), &debug) : stage.status();
    if (st.ok()) {
    std::vector<Float4> got = s.particles;
    got.insert(got.end(), s.prev.begin(), s.prev.end());
    expectCpuResult(original, got.data(), "after the failures");
      return true;
    }
    EXPECT_EQ(st.error().code, ErrorCode::kOutOfMemory) << st.message();
    EXPECT_EQ(std::memcmp(s.particles.data(), original.particles.data(), s.particles.size() * sizeof(Float4)), 0)
        << "particles written on error";
    EXPECT_EQ(std::memcmp(s.prev.data(), original.prev.data(), s.prev.size() * sizeof(Float4)), 0)
        << "previous positions written on error";
    EXPECT_EQ(debug.masks, (std::vector<uint32_t>{7u})) << "debug output written on error";
    // The stage (when created) stays usable once memory is back.
    if (stage.ok()) {
      memory.failAt(-1);
      const Status again = (*stage)->run(s.input());
      EXPECT_TRUE(again.ok()) << again.message();
    }
    return false;
  });
}

INSTANTIATE_TEST_SUITE_P(Paths, ShapesIntegrationVulkan,
                         ::testing::Values(ShapeCollisionPath::kGeneral, ShapeCollisionPath::kFused),
                         [](const auto& param) { return param.param == ShapeCollisionPath::kFused ? "Fused" : "General"; });

}  // namespace
}  // namespace vkc::test
