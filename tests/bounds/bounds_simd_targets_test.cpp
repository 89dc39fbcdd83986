// The bounds stage's SIMD fold (cpu::boundsKeysSimd) on every SIMD target this build has and this CPU
// runs, against the scalar fold, bit for bit: every sign pattern a lane can see (only positive values,
// only negative ones, both, signed zeros), and counts that leave the unrolled loop, the loop of single
// vectors and the scalar tail each something to do (or nothing).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cpu/bounds.h"
#include "cpu/collide_shapes.h"  // forEachSimdTarget

namespace vkc::cpu {
namespace {

struct Keys {
  uint32_t lo[4] = {~0u, ~0u, ~0u, ~0u};
  uint32_t hi[4] = {0u, 0u, 0u, 0u};
};

// xyzw values of `count` particles: per component c, values drawn from pattern[c].
std::vector<float> particles(size_t count, const int (&pattern)[4], std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0.0f, 100.0f);
  const float specials[] = {0.0f, 1e-40f, 1e-30f, 3.4e38f, std::numeric_limits<float>::infinity()};
  std::vector<float> v(count * 4);
  for (size_t i = 0; i < v.size(); ++i) {
    float x = rng() % 4 == 0 ? specials[rng() % 5] : u(rng);
    switch (pattern[i % 4]) {
      case 0: break;                                   // only non-negative (+0 included)
      case 1: x = -x; break;                           // only negative (-0 included)
      default: x = rng() % 2 == 0 ? x : -x; break;     // both signs
    }
    v[i] = x;
  }
  return v;
}

TEST(BoundsSimdTargets, EveryTargetFoldsTheKeysOfEverySignPatternLikeTheScalarFold) {
  const int patterns[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {0, 1, 2, 0}, {1, 2, 0, 1}};
  const size_t counts[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 1000};
  std::mt19937 rng(7);
  size_t cases = 0;
  for (const auto& pattern : patterns) {
    for (const size_t count : counts) {
      const std::vector<float> v = particles(count, pattern, rng);
      // Start values as a caller folding a second array would pass them (previous positions).
      Keys start;
      start.lo[1] = 0x90000000u, start.hi[2] = 0x70000000u;
      Keys want = start;
      boundsKeysScalar(v.data(), count, want.lo, want.hi);
      forEachSimdTarget([&](const char* target) {
        Keys got = start;
        boundsKeysSimd(v.data(), count, got.lo, got.hi);
        for (int c = 0; c < 4; ++c) {
          EXPECT_EQ(got.lo[c], want.lo[c]) << target << ": " << count << " particles, component " << c;
          EXPECT_EQ(got.hi[c], want.hi[c]) << target << ": " << count << " particles, component " << c;
        }
      });
      ++cases;
    }
  }
  EXPECT_EQ(cases, std::size(patterns) * std::size(counts));
}

}  // namespace
}  // namespace vkc::cpu
