// The device algorithm of shaders/shared/rounding.h run on the CPU: from a candidate up to 3 ULP away
// (a device's approximate sqrt or quotient) vkcSqrtExact and vkcDivExact give the correctly rounded
// result, bit for bit with the CPU's std::sqrt and a / b. Every 61st normal float for the square root
// (34.9M of them, every exponent; all of them were run once while writing it), 10^6 random quotients
// with normal operands and results, a third of the divisors with all-ones significands.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "shared/common.h"
#include "support/float_bits.h"

namespace vkc::test {
namespace {

// y moved k units in the last place (within its sign).
float ulpsAway(float y, int k) { return fromBits(toBits(y) + static_cast<uint32_t>(k)); }

TEST(Rounding, SqrtExactIsCorrectlyRoundedFromCandidatesWithin3Ulp) {
  uint64_t bad = 0, checked = 0;
  for (uint64_t u = 0x00800000u; u < 0x7F800000u; u += 61) {
    const float x = fromBits(static_cast<uint32_t>(u));
    const float want = std::sqrt(x);
    for (int k = -3; k <= 3; ++k) {
      ++checked;
      if (toBits(gpu::vkcSqrtExact(x, ulpsAway(want, k))) != toBits(want) && ++bad <= 5) {
        ADD_FAILURE() << "sqrt(" << x << ") from " << k << " ULP away";
      }
    }
  }
  EXPECT_EQ(bad, 0u) << "of " << checked;
}

TEST(Rounding, DivExactIsCorrectlyRoundedFromCandidatesWithin3Ulp) {
  std::mt19937 gen(7);
  const auto rng = [&] { return static_cast<uint32_t>(gen()); };
  uint64_t bad = 0, checked = 0;
  while (checked < 7'000'000) {
    const float a = fromBits((rng() & 0x807FFFFFu) | ((1u + rng() % 254u) << 23));
    uint32_t ub = (rng() & 0x807FFFFFu) | ((1u + rng() % 254u) << 23);
    if (rng() % 3 == 0) ub |= 0x007FFFFFu;
    const float b = fromBits(ub);
    const float want = a / b;
    // The promise (vkcDiv: a candidate at least 7 units above the smallest normal, at most the largest
    // float, so a quotient at least 4 units above it); the device's own division outside it.
    if (!(std::abs(want) >= fromBits(toBits(std::numeric_limits<float>::min()) + 4u) &&
          std::abs(want) <= std::numeric_limits<float>::max())) {
      continue;
    }
    for (int k = -3; k <= 3; ++k) {
      const float candidate = ulpsAway(want, k);
      if (!std::isfinite(candidate)) continue;  // vkcDiv returns an infinite candidate as it is
      ++checked;
      if (toBits(gpu::vkcDivExact(a, b, candidate)) != toBits(want) && ++bad <= 5) {
        ADD_FAILURE() << a << " / " << b << " from " << k << " ULP away";
      }
    }
  }
  EXPECT_EQ(bad, 0u) << "of " << checked;
}

TEST(Rounding, AWildCandidateIsClampedNotTrusted) {
  // A NaN or far-off candidate is clamped to the significand range: a finite answer within about a factor 2, never a wrapped integer (without the clamp uint(NaN) and uint(1e30) are
  // garbage). Only a candidate near the answer gives the correctly rounded one.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const float c : {nan, 1e30f, -5.0f, 0.0f}) {
    const float s = gpu::vkcSqrtExact(4.0f, c), q = gpu::vkcDivExact(1.0f, 3.0f, c);
    EXPECT_TRUE(std::isfinite(s) && s > 2.0f / 2.1f && s < 2.0f * 2.1f) << c << " -> " << s;
    EXPECT_TRUE(std::isfinite(q) && q > (1.0f / 3.0f) / 2.1f && q < (1.0f / 3.0f) * 2.1f) << c << " -> " << q;
  }
}

}  // namespace
}  // namespace vkc::test
