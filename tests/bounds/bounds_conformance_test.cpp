// Bounds conformance: one test body per backend (Vulkan on the test device, CPU scalar, CPU SIMD),
// each compared bit for bit with the brute-force reference (min/max are exact).
#include <gtest/gtest.h>

#include <random>

#include "support/bounds_reference.h"
#include "support/executors.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using BoundsConformance = BackendTest;

std::vector<Float4> randomParticles(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Float4> p(n);
  for (auto& x : p) x = {u(rng) * scale, u(rng) * scale, u(rng) * scale, 1.0f};
  return p;
}

void expectMatchesReference(Backend backend, Context* ctx, const BoundsInput& in) {
  auto boxes = boundsOf(backend, ctx, in);
  ASSERT_TRUE(boxes.ok()) << boxes.message();
  ASSERT_EQ(boxes->size(), in.cloths.size());
  if (backend != Backend::kVulkan) {
    // The threaded CPU backend: the same boxes, bit for bit, on every test executor.
    for (const TestExecutor& e : testExecutors()) {
      std::vector<Aabb> threaded(in.cloths.size());
      BoundsInput t = in;
      t.boxes = threaded;
      const Status s = computeBoundsCpu(t, backend, *e.executor);
      ASSERT_TRUE(s.ok()) << e.name << ": " << s.message();
      for (size_t c = 0; c < threaded.size(); ++c) {
        EXPECT_TRUE(bitwiseEqual(threaded[c], (*boxes)[c])) << e.name << ": cloth " << c;
      }
    }
  }
  for (size_t c = 0; c < in.cloths.size(); ++c) {
    const Aabb want = referenceBounds(in.particles, in.prevParticles, in.cloths[c], in.includePrevious);
    const Aabb& got = (*boxes)[c];
    EXPECT_TRUE(bitwiseEqual(got, want)) << "cloth " << c << " (" << in.cloths[c].count << " particles): got ["
                                         << got.lo.x << " " << got.lo.y << " " << got.lo.z << "] .. [" << got.hi.x
                                         << " " << got.hi.y << " " << got.hi.z << "], want [" << want.lo.x << " "
                                         << want.lo.y << " " << want.lo.z << "] .. [" << want.hi.x << " " << want.hi.y
                                         << " " << want.hi.z << "]";
  }
}

TEST_P(BoundsConformance, OneClothOfEachCount) {
  for (uint32_t n : {0u, 1u, 7u, 63u, 64u, 65u, 1000u, 2047u, 2048u, 2049u, 1'000'003u}) {
    SCOPED_TRACE("count " + std::to_string(n));
    const auto p = randomParticles(n, n, 50.0f);
    const ClothRange cloth{0, n};
    expectMatchesReference(backend(), ctx(), {p, {}, {&cloth, 1}, false});
  }
}

TEST_P(BoundsConformance, ManyClothsOfDifferentSizesInOneScene) {
  const std::vector<uint32_t> sizes = {5, 0, 1, 4096, 63, 0, 0, 2049, 65, 100'000, 7, 0};
  std::vector<ClothRange> cloths;
  uint32_t total = 3;  // leading particles that belong to no cloth
  for (uint32_t s : sizes) {
    cloths.push_back({total, s});
    total += s + 1;  // a gap between cloths, never read
  }
  auto p = randomParticles(total, 7, 10.0f);
  // Make each cloth's box distinct: offset cloth c by c * 100 on x.
  for (size_t c = 0; c < cloths.size(); ++c) {
    for (uint32_t i = 0; i < cloths[c].count; ++i) p[cloths[c].first + i].x += 100.0f * static_cast<float>(c);
  }
  expectMatchesReference(backend(), ctx(), {p, {}, cloths, false});
}

TEST_P(BoundsConformance, MixedSignsLargeMagnitudesSignedZerosAndDenormals) {
  std::vector<Float4> p = randomParticles(5000, 3, 1.0f);
  const float specials[] = {0.0f, -0.0f, 1e30f, -1e30f, 3.4e38f, -3.4e38f, 1e-40f, -1e-40f, 1e-30f, -1e-30f};
  std::mt19937 rng(11);
  for (size_t i = 0; i < p.size(); ++i) {
    const float s = specials[rng() % 10];
    switch (i % 3) {
      case 0: p[i].x = s; break;
      case 1: p[i].y = s; break;
      default: p[i].z = s; break;
    }
  }
  // A cloth whose only coordinates on an axis are -0 and +0: the box is [-0, +0] exactly.
  std::vector<Float4> zeros = {{0.0f, -0.0f, 0.0f, 1}, {-0.0f, 0.0f, -0.0f, 1}, {0.0f, 0.0f, 0.0f, 1}};
  p.insert(p.end(), zeros.begin(), zeros.end());
  const std::vector<ClothRange> cloths = {{0, 5000}, {5000, 3}, {0, 1}};
  expectMatchesReference(backend(), ctx(), {p, {}, cloths, false});
}

TEST_P(BoundsConformance, IncludesPreviousPositions) {
  for (uint32_t n : {1u, 65u, 4097u, 300'001u}) {
    SCOPED_TRACE("count " + std::to_string(n));
    const auto p = randomParticles(n, n, 5.0f);
    auto q = randomParticles(n, n + 1, 5.0f);
    q[n / 2].y = 1000.0f;  // only the previous positions reach this far
    const std::vector<ClothRange> cloths = {{0, n / 2}, {n / 2, n - n / 2}};
    expectMatchesReference(backend(), ctx(), {p, q, cloths, true});
  }
}

TEST_P(BoundsConformance, EmptyClothGivesTheEmptyBox) {
  const std::vector<Float4> p = {{1, 2, 3, 1}};
  const std::vector<ClothRange> cloths = {{0, 0}, {0, 1}, {1, 0}};
  auto boxes = boundsOf(backend(), ctx(), {p, {}, cloths, false});
  ASSERT_TRUE(boxes.ok()) << boxes.message();
  EXPECT_TRUE((*boxes)[0].empty());
  EXPECT_EQ((*boxes)[0].lo.x, std::numeric_limits<float>::infinity());
  EXPECT_EQ((*boxes)[0].hi.z, -std::numeric_limits<float>::infinity());
  EXPECT_FALSE((*boxes)[1].empty());
  EXPECT_EQ((*boxes)[1].lo, (Float4{1, 2, 3, 0}));
  EXPECT_EQ((*boxes)[1].hi, (Float4{1, 2, 3, 0}));
  EXPECT_TRUE((*boxes)[2].empty());
}

TEST_P(BoundsConformance, NoClothsGiveNoBoxes) {
  const std::vector<Float4> p = {{1, 2, 3, 1}};
  auto boxes = boundsOf(backend(), ctx(), {p, {}, {}, false});
  ASSERT_TRUE(boxes.ok()) << boxes.message();
  EXPECT_TRUE(boxes->empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, BoundsConformance, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
