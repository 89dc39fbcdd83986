// The fused small-cloth path (ShapeCollisionPath::kFused: one dispatch, one workgroup per cloth)
// against the general path (6 dependent dispatches) on the same device: bitwise equal particles,
// previous positions, grid masks and convex bits, on scenes with many cloths of different sizes
// (empty ones too), spheres, capsules, planes and convexes, discrete and continuous, friction and
// mass scaling; and the dispatch counts each path records.
#include <gtest/gtest.h>

#include <cstring>

#include "collide_shapes/shapes_test_support.h"
#include "support/vulkan_fixture.h"
#include "vulkan/collide_shapes_stage.h"

namespace vkc::test {
namespace {

using namespace shapes;
using ShapeFusedVulkan = VulkanTest;

// A scene of `sizes.size()` cloths side by side, each with particles around random spheres, capsules
// and convexes (a box and a ground plane).
Scene manyCloths(const std::vector<uint32_t>& sizes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Scene s;
  for (size_t c = 0; c < sizes.size(); ++c) {
    const V3 origin{4.0 * static_cast<double>(c), 0, 0};
    std::vector<Float4> p, q, sp, prevSp;
    for (uint32_t i = 0; i < sizes[c]; ++i) {
      const V3 x = origin + V3{u(rng), u(rng), u(rng)} * 1.2;
      const float w = i % 9 == 0 ? 0.0f : 1.0f;
      p.push_back(toFloat4(x, w));
      q.push_back(toFloat4(x + V3{u(rng), u(rng), u(rng)} * 0.1, w));
    }
    const uint32_t spheres = c % 4 == 3 ? 0u : 3u + static_cast<uint32_t>(c % 7) * 6u;
    for (uint32_t k = 0; k < spheres; ++k) {
      const V3 centre = origin + V3{u(rng), u(rng), u(rng)};
      sp.push_back(toFloat4(centre, static_cast<float>(0.15 + 0.3 * std::abs(u(rng)))));
      prevSp.push_back(toFloat4(centre + V3{u(rng), u(rng), u(rng)} * 0.05, sp.back().w));
    }
    std::vector<Capsule> caps;
    for (uint32_t k = 0; k + 1 < spheres; k += 3) caps.push_back({k, k + 1});
    const uint32_t cloth = s.addCloth(p, q, sp, caps, prevSp);
    const double bx = origin.x + 0.5 * u(rng), h = 0.3 + 0.2 * std::abs(u(rng));
    std::vector<Float4> planes = {{1, 0, 0, static_cast<float>(-(bx + h))},
                                  {-1, 0, 0, static_cast<float>(bx - h)},
                                  {0, 1, 0, static_cast<float>(-h)},
                                  {0, -1, 0, static_cast<float>(-h)},
                                  {0, 0, 1, static_cast<float>(-h)},
                                  {0, 0, -1, static_cast<float>(-h)},
                                  {0, 1, 0, 0.9f}};
    if (c % 5 != 4) s.setConvexes(cloth, planes, {{0, 1, 2, 3, 4, 5}, {6}});
  }
  return s;
}

struct Outcome {
  std::vector<Float4> particles, prev;
  ShapeCollisionDebug debug;
  size_t dispatches = 0;
};

Outcome runPath(Context& ctx, const Scene& scene, ShapeCollisionPath path) {
  Scene s = scene;
  ShapeCollisionInput in = s.input();
  auto stage = ShapeCollisionStage::create(ctx, {.cloths = s.cloths,
                                                 .particleCount = static_cast<uint32_t>(s.particles.size()),
                                                 .colliders = in.colliders,
                                                 .path = path});
  Outcome out;
  EXPECT_TRUE(stage.ok()) << stage.message();
  if (!stage.ok()) return out;
  EXPECT_EQ((*stage)->path(), path);
  const Status st = (*stage)->run(in, &out.debug);
  EXPECT_TRUE(st.ok()) << st.message();
  out.particles = s.particles;
  out.prev = s.prev;
  out.dispatches = (*stage)->timings().size();
  return out;
}

void expectBitwiseEqual(const Outcome& a, const Outcome& b) {
  ASSERT_EQ(a.particles.size(), b.particles.size());
  size_t diffs = 0;
  for (size_t i = 0; i < a.particles.size(); ++i) {
    if ((!bitwiseEqual(a.particles[i], b.particles[i]) || !bitwiseEqual(a.prev[i], b.prev[i])) && diffs++ < 5) {
      ADD_FAILURE() << "particle " << i << ": general " << str(a.particles[i]) << " prev " << str(a.prev[i])
                    << ", fused " << str(b.particles[i]) << " prev " << str(b.prev[i]);
    }
  }
  EXPECT_EQ(diffs, 0u);
  EXPECT_EQ(a.debug.masks, b.debug.masks);
  EXPECT_EQ(a.debug.convexBits, b.debug.convexBits);
}

const ShapeCollisionSettings kVariants[] = {
    {},
    {.friction = 0.6f, .collisionMassScale = 4.0f},
    {.continuous = true, .alphaBegin = 0.25f, .alphaEnd = 0.5f},
    {.continuous = true, .friction = 0.3f, .collisionMassScale = 1.5f, .alphaBegin = 0.5f, .alphaEnd = 1.0f},
};

TEST_F(ShapeFusedVulkan, FusedEqualsGeneralBitwise) {
  Scene s = manyCloths({0, 1, 63, 64, 65, 1000, 4096, 7, 0, 2049, 300, 17}, 51);
  size_t moved = 0;
  for (const ShapeCollisionSettings& v : kVariants) {
    SCOPED_TRACE(std::string(v.continuous ? "continuous" : "discrete") + " friction " + std::to_string(v.friction));
    s.settings = v;
    const Outcome general = runPath(ctx(), s, ShapeCollisionPath::kGeneral);
    const Outcome fused = runPath(ctx(), s, ShapeCollisionPath::kFused);
    expectBitwiseEqual(general, fused);
    moved = 0;
    for (size_t i = 0; i < s.particles.size(); ++i) moved += !bitwiseEqual(s.particles[i], fused.particles[i]);
    EXPECT_GT(moved, 1000u);
  }
}

// One cloth of n particles with 40 spheres, 20 capsules (2 mask words) and 300 random convexes of
// 4-12 planes (10 convex words, thousands of planes: more than the workgroup's invocations in every
// loop of the fused pass).
Scene heavyCloth(uint32_t n) {
  std::mt19937 rng(54);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Scene s = manyCloths({n}, 54);
  for (uint32_t k = 0; k < 40; ++k) {
    s.spheres[0].push_back(toFloat4(V3{u(rng), u(rng), u(rng)} * 1.3, static_cast<float>(0.1 + 0.2 * std::abs(u(rng)))));
  }
  s.prevSpheres[0].clear();
  s.capsules[0].clear();
  for (uint32_t k = 0; k < 20; ++k) s.capsules[0].push_back({2 * k, 2 * k + 1});
  std::vector<Float4> planes;
  std::vector<std::vector<uint32_t>> lists;
  for (uint32_t k = 0; k < 300; ++k) {
    const V3 c = V3{u(rng), u(rng), u(rng)} * 1.3;
    const double r = 0.1 + 0.2 * std::abs(u(rng));
    std::vector<uint32_t> list;
    for (uint32_t j = 0, m = 4 + static_cast<uint32_t>(rng() % 9); j < m; ++j) {
      const V3 n3 = randomUnit(rng);
      planes.push_back(toFloat4(n3, static_cast<float>(-(dot(n3, c) + r))));
      list.push_back(static_cast<uint32_t>(planes.size() - 1));
    }
    lists.push_back(list);
  }
  s.setConvexes(0, planes, lists);
  return s;
}

TEST_F(ShapeFusedVulkan, HundredsOfConvexesAndMultiWordMasksEqualGeneral) {
  Scene s = heavyCloth(300);  // 5 particles per invocation: within llvmpipe's loop limit
  for (const ShapeCollisionSettings& v : kVariants) {
    SCOPED_TRACE(std::string(v.continuous ? "continuous" : "discrete") + " friction " + std::to_string(v.friction));
    s.settings = v;
    expectBitwiseEqual(runPath(ctx(), s, ShapeCollisionPath::kGeneral), runPath(ctx(), s, ShapeCollisionPath::kFused));
  }
}

TEST_F(ShapeFusedVulkan, LoopLimitOfLlvmpipeIsChecked) {
  // lavapipe stops a shader loop after 65535 iterations per invocation: 4000 particles x ~2400
  // convex plane indices is beyond that on the fused path (63 particles per invocation). There the
  // forced fused path is refused naming the cloth and kAuto takes the general path; elsewhere the
  // fused path runs and equals the general one.
  Scene s = heavyCloth(4000);
  ShapeCollisionInput in = s.input();
  const ShapeCollisionStageCreateInfo info{.cloths = s.cloths,
                                           .particleCount = static_cast<uint32_t>(s.particles.size()),
                                           .colliders = in.colliders,
                                           .path = ShapeCollisionPath::kFused};
  auto fused = ShapeCollisionStage::create(ctx(), info);
  auto autoInfo = info;
  autoInfo.path = ShapeCollisionPath::kAuto;
  auto automatic = ShapeCollisionStage::create(ctx(), autoInfo);
  ASSERT_TRUE(automatic.ok()) << automatic.message();
  if (ctx().deviceInfo().driverName == "llvmpipe") {
    ASSERT_FALSE(fused.ok());
    EXPECT_EQ(fused.error().code, ErrorCode::kLimitExceeded);
    EXPECT_NE(fused.message().find("colliders[0]: the fused path needs up to"), std::string::npos) << fused.message();
    EXPECT_FALSE(ShapeCollisionStage::memoryRequirements(ctx(), info).ok());
    EXPECT_EQ((*automatic)->path(), ShapeCollisionPath::kGeneral);
  } else {
    ASSERT_TRUE(fused.ok()) << fused.message();
    EXPECT_EQ((*automatic)->path(), ShapeCollisionPath::kFused);
    expectBitwiseEqual(runPath(ctx(), s, ShapeCollisionPath::kGeneral), runPath(ctx(), s, ShapeCollisionPath::kFused));
  }
  // The general path's results agree with the CPU twin (no loop cut short).
  Scene got = s, ref = s;
  ASSERT_TRUE((*automatic)->run(got.input()).ok());
  ASSERT_TRUE(collideShapesCpu(ref.input(), Backend::kCpuScalar).ok());
  for (size_t i = 0; i < s.particles.size(); ++i) {
    ASSERT_NEAR(got.particles[i].x, ref.particles[i].x, 1e-4f) << i;
    ASSERT_NEAR(got.particles[i].y, ref.particles[i].y, 1e-4f) << i;
  }
}

TEST_F(ShapeFusedVulkan, DispatchCounts) {
  // One iteration: the general path records 6 dispatches (bounds tiles and merge, prepare, grid,
  // masks, collide), the fused path 1, for one cloth and for 256 cloths alike.
  for (const size_t cloths : {size_t{1}, size_t{256}}) {
    SCOPED_TRACE(std::to_string(cloths) + " cloths");
    Scene s = manyCloths(std::vector<uint32_t>(cloths, 1024), 52);
    EXPECT_EQ(runPath(ctx(), s, ShapeCollisionPath::kGeneral).dispatches, 6u);
    EXPECT_EQ(runPath(ctx(), s, ShapeCollisionPath::kFused).dispatches, 1u);
  }
}

TEST_F(ShapeFusedVulkan, AutomaticChoice) {
  // kAuto: fused while no cloth has more than 16384 particles.
  for (const uint32_t largest : {16384u, 16385u}) {
    Scene s = manyCloths({100, largest}, 53);
    ShapeCollisionInput in = s.input();
    auto stage = ShapeCollisionStage::create(
        ctx(), {.cloths = s.cloths, .particleCount = static_cast<uint32_t>(s.particles.size()), .colliders = in.colliders});
    ASSERT_TRUE(stage.ok()) << stage.message();
    EXPECT_EQ((*stage)->path(), largest <= 16384u ? ShapeCollisionPath::kFused : ShapeCollisionPath::kGeneral);
  }
}

}  // namespace
}  // namespace vkc::test
