// Determinism on Vulkan: 100 recorded reruns of one CCD + friction + mass-scaling iteration on the
// same input give bitwise identical particles and previous positions, equal to the convenience
// run()'s output and masks. (tests/vulkan/collide_shapes_stage_test.cpp reruns run() alone.)
#include <gtest/gtest.h>

#include "collide_shapes/shapes_test_support.h"
#include "support/vulkan_fixture.h"
#include "vulkan/memory.h"

namespace vkc::test {
namespace {

using namespace shapes;
using ShapeDeterminismVulkan = VulkanTest;

// Moderate (lavapipe): 3 cloths, 3000 particles, 70 spheres and 45 capsules, overlapping shapes so
// that many particles average several contacts (the order of summation matters to the bits).
Scene moderateScene() {
  std::mt19937 rng(61);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Scene s;
  const uint32_t sizes[3][3] = {{1500, 40, 25}, {1000, 20, 20}, {500, 10, 0}};
  for (const auto& sz : sizes) {
    std::vector<Float4> p, q, sp, prevSp;
    for (uint32_t i = 0; i < sz[0]; ++i) {
      const V3 x{u(rng), u(rng), u(rng)};
      p.push_back(toFloat4(x, 1.0f));
      q.push_back(toFloat4(x + V3{u(rng), u(rng), u(rng)} * 0.1, 1.0f));
    }
    for (uint32_t k = 0; k < sz[1]; ++k) {
      const V3 c{u(rng), u(rng), u(rng)};
      sp.push_back(toFloat4(c, static_cast<float>(0.1 + 0.3 * std::abs(u(rng)))));
      prevSp.push_back(toFloat4(c + V3{u(rng), u(rng), u(rng)} * 0.2, sp.back().w));
    }
    std::vector<Capsule> caps;
    for (uint32_t k = 0; k < sz[2]; ++k)
      caps.push_back({k, (3 * k + 1) % sz[1]});  // even counts: never k itself
    s.addCloth(p, q, sp, caps, prevSp);
  }
  s.settings = {.continuous = true,
                .friction = 0.4f,
                .collisionMassScale = 2.0f,
                .alphaBegin = 0.25f,
                .alphaEnd = 0.75f};
  return s;
}

TEST_F(ShapeDeterminismVulkan, HundredRecordedRerunsAreBitwiseIdenticalAndEqualRun) {
  Scene s = moderateScene();
  ShapeCollisionInput in = s.input();
  const uint32_t n = static_cast<uint32_t>(s.particles.size());
  auto stage = ShapeCollisionStage::create(ctx(), {s.cloths, n, in.colliders});
  ASSERT_TRUE(stage.ok()) << stage.message();

  const VkDeviceSize bytes = n * sizeof(Float4);
  auto host = impl().allocator->createBuffer(2 * bytes, detail::MemoryUsage::kUpload);
  ASSERT_TRUE(host.ok());
  ShapeCollisionRecordInfo info;
  info.particles = {host->handle(), 0, bytes};
  info.prevParticles = {host->handle(), bytes, bytes};
  info.colliders = in.colliders;
  info.settings = s.settings;
  info.sync.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT;
  info.sync.dstAccess = VK_ACCESS_2_HOST_READ_BIT;

  std::vector<char> first(2 * bytes);
  for (int run = 0; run < 100; ++run) {
    std::memcpy(host->mapped(), s.particles.data(), bytes);
    std::memcpy(static_cast<char*>(host->mapped()) + bytes, s.prev.data(), bytes);
    submit([&](VkCommandBuffer cmd) { ASSERT_TRUE((*stage)->record(cmd, info).ok()); });
    if (run == 0) {
      std::memcpy(first.data(), host->mapped(), 2 * bytes);
      continue;
    }
    ASSERT_EQ(std::memcmp(host->mapped(), first.data(), 2 * bytes), 0) << "run " << run;
  }

  // The convenience path gives the same bits, and its masks equal the CPU's.
  Scene viaRun = s, cpu = s;
  ShapeCollisionDebug runDebug, cpuDebug;
  ASSERT_TRUE((*stage)->run(viaRun.input(), &runDebug).ok());
  EXPECT_EQ(std::memcmp(viaRun.particles.data(), first.data(), bytes), 0);
  EXPECT_EQ(std::memcmp(viaRun.prev.data(), first.data() + bytes, bytes), 0);
  collide(Backend::kCpuScalar, nullptr, cpu, &cpuDebug);
  EXPECT_EQ(runDebug.masks, cpuDebug.masks);
  // Several contacts per particle occur (else the summation order would not be exercised).
  size_t moved = 0;
  for (size_t i = 0; i < n; ++i) moved += !bitwiseEqual(viaRun.particles[i], s.particles[i]);
  EXPECT_GT(moved, n / 4);
}

}  // namespace
}  // namespace vkc::test
