// The CPU SIMD self collision on every SIMD target this build has and this CPU runs (AVX-512: 16
// float lanes, AVX2: 8, SSE4/SSSE3: 4, ...): lane counts change which slots take the short-block
// sweep and which the dense per-column windows, so each target is compared with the scalar backend,
// bit for bit, on scenes that exercise both: the NvCloth drape, the drape squashed flat (long
// columns), a crumpled cloth with rest positions (rest culling), and several cloths with a subset.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "cpu/collide_shapes.h"  // forEachSimdTarget
#include "self_collision_support.h"

namespace vkc::test {
namespace {

void expectEveryTargetMatchesScalar(const SelfScene& scene, size_t minPairs) {
  SelfScene scalar = scene;
  SelfCollisionDebug want;
  ASSERT_TRUE(collideSelfCpu(scalar.input(), Backend::kCpuScalar, &want).ok());
  EXPECT_GE(want.pairs.size(), minPairs);
  cpu::forEachSimdTarget([&](const char* target) {
    SCOPED_TRACE(target);
    SelfScene simd = scene;
    SelfCollisionDebug got;
    const Status st = collideSelfCpu(simd.input(), Backend::kCpuSimd, &got);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(got.sortedKeys, want.sortedKeys);
    EXPECT_EQ(got.neighbourCounts, want.neighbourCounts);
    EXPECT_EQ(got.pairs, want.pairs);
    EXPECT_EQ(std::memcmp(simd.particles.data(), scalar.particles.data(), scalar.particles.size() * sizeof(Float4)), 0);
  });
}

TEST(SelfCollisionSimdTargets, NvClothDrape) {
  expectEveryTargetMatchesScalar(benchSceneForSelf("nvcloth-drape-64.json"), 40);
}

TEST(SelfCollisionSimdTargets, DrapeSquashedFlat) {
  // The 255² drape pressed to 5% of its height: long columns (the dense path) and many pairs.
  SelfScene s = benchSceneForSelf("nvcloth-drape-255.json.gz");
  for (Float4& p : s.particles) p.y *= 0.05f;
  expectEveryTargetMatchesScalar(s, 1000);
}

TEST(SelfCollisionSimdTargets, CrumpledWithRestPositionsAndSubsets) {
  SelfScene s;
  crumpledCloth(40, 0.04f, 5, s.particles, s.rest);
  const uint32_t first = static_cast<uint32_t>(s.particles.size());
  s.cloths.push_back({0, first});
  std::vector<Float4> more, moreRest;
  crumpledCloth(25, 0.04f, 6, more, moreRest);
  s.particles.insert(s.particles.end(), more.begin(), more.end());
  s.rest.insert(s.rest.end(), moreRest.begin(), moreRest.end());
  s.cloths.push_back({first, static_cast<uint32_t>(more.size())});
  s.subsets.resize(2);
  for (uint32_t i = 0; i < more.size(); i += 2) s.subsets[1].push_back(i);
  s.settings = {0.045f, 0.8f};
  expectEveryTargetMatchesScalar(s, 100);
}

}  // namespace
}  // namespace vkc::test
