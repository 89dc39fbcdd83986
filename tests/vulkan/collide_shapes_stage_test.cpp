// The sphere/capsule stage on Vulkan: agreement with the CPU twin on random scenes (masks bitwise,
// positions within tolerance), recording into host buffers, determinism, layout and buffer checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "support/vulkan_fixture.h"
#include "vulkan/memory.h"

namespace vkc::test {
namespace {

using ShapeStageVulkan = VulkanTest;

struct Scene {
  std::vector<Float4> particles, prev;
  std::vector<ClothRange> cloths;
  std::vector<std::vector<Float4>> spheres, prevSpheres;
  std::vector<std::vector<Capsule>> capsules;
  std::vector<ClothColliders> colliders;
  ShapeCollisionSettings settings;

  ShapeCollisionInput input() {
    colliders.clear();
    for (size_t c = 0; c < cloths.size(); ++c) colliders.push_back({spheres[c], prevSpheres[c], capsules[c]});
    return {particles, prev, cloths, colliders, settings};
  }
};

Scene randomScene(uint32_t seed, uint32_t clothCount, uint32_t particlesPerCloth, uint32_t spheresPerCloth,
                  uint32_t capsulesPerCloth) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Scene s;
  for (uint32_t c = 0; c < clothCount; ++c) {
    const uint32_t n = particlesPerCloth + (c % 3) * 17;
    s.cloths.push_back({static_cast<uint32_t>(s.particles.size()), n});
    for (uint32_t i = 0; i < n; ++i) {
      const Float4 p{u(rng) * 2, u(rng) * 2, u(rng) * 2, i % 50 == 0 ? 0.0f : 1.0f};
      s.particles.push_back(p);
      s.prev.push_back({p.x - 0.05f * u(rng), p.y + 0.05f * u(rng), p.z - 0.05f * u(rng), p.w});
    }
    std::vector<Float4> sp, pp;
    for (uint32_t k = 0; k < spheresPerCloth; ++k) {
      const float spread = k % 7 == 0 ? 6.0f : 2.0f;  // some spheres far outside the particles
      sp.push_back({u(rng) * spread, u(rng) * spread, u(rng) * spread, 0.05f + 0.3f * std::abs(u(rng))});
      pp.push_back({sp.back().x + 0.1f * u(rng), sp.back().y + 0.1f * u(rng), sp.back().z, sp.back().w * 0.9f});
    }
    std::vector<Capsule> caps;
    for (uint32_t k = 0; k < capsulesPerCloth && spheresPerCloth > 1; ++k) {
      const uint32_t a = static_cast<uint32_t>(rng() % spheresPerCloth);
      caps.push_back({a, (a + 1 + static_cast<uint32_t>(rng() % (spheresPerCloth - 1))) % spheresPerCloth});
    }
    s.spheres.push_back(sp);
    s.prevSpheres.push_back(pp);
    s.capsules.push_back(caps);
  }
  return s;
}

void expectClose(const std::vector<Float4>& a, const std::vector<Float4>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size());
  int reported = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float va[4] = {a[i].x, a[i].y, a[i].z, a[i].w}, vb[4] = {b[i].x, b[i].y, b[i].z, b[i].w};
    for (int k = 0; k < 4; ++k) {
      const float tol = kShapeCollisionTolerance * (1.0f + std::abs(vb[k]));
      if (!(std::abs(va[k] - vb[k]) <= tol) && reported++ < 5) {
        ADD_FAILURE() << what << "[" << i << "]." << "xyzw"[k] << ": vulkan " << va[k] << ", cpu " << vb[k];
      }
    }
  }
}

void compareWithCpu(Context& ctx, Scene scene, size_t minMoved) {
  Scene gpu = scene, cpu = scene;
  ShapeCollisionDebug gpuDebug, cpuDebug;
  const Status g = collideShapes(Backend::kVulkan, &ctx, gpu.input(), &gpuDebug);
  ASSERT_TRUE(g.ok()) << g.message();
  const Status c = collideShapesCpu(cpu.input(), Backend::kCpuScalar, &cpuDebug);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(gpuDebug.maskWords, cpuDebug.maskWords);
  ASSERT_EQ(gpuDebug.masks.size(), cpuDebug.masks.size());
  size_t maskDiffs = 0;
  for (size_t i = 0; i < gpuDebug.masks.size(); ++i) maskDiffs += gpuDebug.masks[i] != cpuDebug.masks[i];
  EXPECT_EQ(maskDiffs, 0u) << "grid mask words differ between Vulkan and the CPU";
  expectClose(gpu.particles, cpu.particles, "particles");
  expectClose(gpu.prev, cpu.prev, "prevParticles");
  size_t moved = 0;
  for (size_t i = 0; i < scene.particles.size(); ++i) moved += std::memcmp(&scene.particles[i], &cpu.particles[i], 16) != 0;
  EXPECT_GE(moved, minMoved) << "the scene should collide";
}

TEST_F(ShapeStageVulkan, MatchesCpuDiscrete) {
  compareWithCpu(ctx(), randomScene(1, 5, 3000, 120, 60), 1000);
}

TEST_F(ShapeStageVulkan, MatchesCpuContinuousWithFrictionAndMassScaling) {
  Scene s = randomScene(2, 3, 2000, 40, 70);
  s.settings = {.continuous = true, .friction = 0.4f, .collisionMassScale = 2.0f, .alphaBegin = 0.25f, .alphaEnd = 0.5f};
  compareWithCpu(ctx(), s, 500);
}

TEST_F(ShapeStageVulkan, EmptyClothsAndClothsWithoutShapes) {
  Scene s = randomScene(3, 4, 500, 10, 4);
  s.cloths[1].count = 0;
  s.spheres[2].clear();
  s.prevSpheres[2].clear();
  s.capsules[2].clear();
  compareWithCpu(ctx(), s, 10);
}

TEST_F(ShapeStageVulkan, HundredRerunsAreBitwiseIdentical) {
  Scene s = randomScene(4, 2, 4000, 50, 30);
  s.settings = {.continuous = true, .friction = 0.3f, .collisionMassScale = 0.5f};
  auto in = s.input();
  auto stage = ShapeCollisionStage::create(ctx(), {.cloths = s.cloths,
                                                   .particleCount = static_cast<uint32_t>(s.particles.size()),
                                                   .colliders = in.colliders,
                                                   .path = ShapeCollisionPath::kGeneral});
  ASSERT_TRUE(stage.ok()) << stage.message();
  std::vector<Float4> firstP, firstQ;
  for (int run = 0; run < 100; ++run) {
    Scene r = s;
    const Status st = (*stage)->run(r.input());
    ASSERT_TRUE(st.ok()) << st.message();
    if (run == 0) {
      firstP = r.particles;
      firstQ = r.prev;
      continue;
    }
    ASSERT_EQ(std::memcmp(r.particles.data(), firstP.data(), firstP.size() * sizeof(Float4)), 0) << "run " << run;
    ASSERT_EQ(std::memcmp(r.prev.data(), firstQ.data(), firstQ.size() * sizeof(Float4)), 0) << "run " << run;
  }
  const auto& t = (*stage)->timings();
  ASSERT_EQ(t.size(), 6u);
  EXPECT_STREQ(t[5].name, "vkc.shapes.collide");
}

TEST_F(ShapeStageVulkan, RecordsIntoHostBuffersAndRejectsBadRecords) {
  Scene s = randomScene(5, 1, 1000, 8, 3);
  auto in = s.input();
  const uint32_t n = static_cast<uint32_t>(s.particles.size());
  auto stage = ShapeCollisionStage::create(ctx(), {s.cloths, n, in.colliders});
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto host = impl().allocator->createBuffer(2 * n * sizeof(Float4), detail::MemoryUsage::kUpload);
  ASSERT_TRUE(host.ok());
  std::memcpy(host->mapped(), s.particles.data(), n * sizeof(Float4));
  std::memcpy(static_cast<char*>(host->mapped()) + n * sizeof(Float4), s.prev.data(), n * sizeof(Float4));
  ShapeCollisionRecordInfo info;
  info.particles = {host->handle(), 0, n * sizeof(Float4)};
  info.prevParticles = {host->handle(), n * sizeof(Float4), n * sizeof(Float4)};
  info.colliders = in.colliders;
  info.sync.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT;
  info.sync.dstAccess = VK_ACCESS_2_HOST_READ_BIT;

  VkCommandBuffer cmd = beginCommandBuffer();
  ShapeCollisionRecordInfo bad = info;
  bad.particles.size -= 16;
  EXPECT_EQ((*stage)->record(cmd, bad).error().code, ErrorCode::kBufferTooSmall);
  std::vector<ClothColliders> otherLayout(in.colliders.begin(), in.colliders.end());
  otherLayout[0].capsules = otherLayout[0].capsules.subspan(1);
  bad = info;
  bad.colliders = otherLayout;
  EXPECT_NE((*stage)->record(cmd, bad).message().find("differ from the stage's layout"), std::string::npos);
  std::vector<Float4> nanSpheres = s.spheres[0];
  nanSpheres[2].y = NAN;
  std::vector<ClothColliders> nanColliders(in.colliders.begin(), in.colliders.end());
  nanColliders[0].spheres = nanSpheres;
  bad = info;
  bad.colliders = nanColliders;
  EXPECT_NE((*stage)->record(cmd, bad).message().find("colliders[0].spheres[2].y"), std::string::npos);
  freeCommandBuffer(cmd);

  submit([&](VkCommandBuffer c) { ASSERT_TRUE((*stage)->record(c, info).ok()); });
  Scene cpu = s;
  ASSERT_TRUE(collideShapesCpu(cpu.input(), Backend::kCpuScalar).ok());
  std::vector<Float4> got(n);
  std::memcpy(got.data(), host->mapped(), n * sizeof(Float4));
  expectClose(got, cpu.particles, "particles");
}

TEST_F(ShapeStageVulkan, MoreShapesThanTheDeviceAllowsIsAnError) {
  // Sphere counts only matter for the layout; this many spheres need more than maxStorageBufferRange.
  const uint64_t tooMany = ctx().deviceInfo().maxStorageBufferRange / 32 + 1;
  std::vector<Float4> spheres(tooMany, Float4{0, 0, 0, 1});
  const std::vector<ClothRange> cloths = {{0, 1}};
  const ClothColliders colliders[] = {{spheres, {}, {}}};
  auto stage = ShapeCollisionStage::create(ctx(), {cloths, 1, colliders});
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(stage.message().find("maxStorageBufferRange"), std::string::npos) << stage.message();
}

}  // namespace
}  // namespace vkc::test
