// Rounding on the test device against the CPU, bit for bit (tests/vulkan/rounding_check.comp):
// - vkcDiv and vkcSqrt (shaders/shared/rounding.h) equal the CPU's a / b and sqrt(x) for every normal
//   operand and result, over random operands of every exponent, significands of all ones, powers of
//   two and the special values (asserted);
// - sums of products written out under `precise` equal GLM's (asserted: the shared headers rely on it);
// - the shader's own `/`, `sqrt`, dot() and cross() are measured on the same cases and printed, not
//   asserted (Vulkan lets them approximate or fuse; lavapipe: all equal to the CPU's); with exact
//   arithmetic (ContextCreateInfo::exactArithmetic: the build routes that `/` and `sqrt` through
//   vkcDiv and vkcSqrt) the `/` and `sqrt` are asserted equal to the CPU's too (ExactArithmeticVulkan,
//   lavapipe with exact arithmetic; RoundingVulkan wherever the test context has it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "rounding_check.spv.h"
#include "shared/common.h"
#include "support/float_bits.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

bool normal(float f) { return std::isnormal(f); }
// Same bits, or both NaN (a NaN's payload is the device's).
bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || toBits(a) == toBits(b); }

struct Case {
  glm::vec4 s, u, v;
};
struct Outcome {
  glm::vec4 r0, r1;
};

std::vector<Case> cases() {
  std::mt19937 gen(2026);
  const auto rng = [&] { return static_cast<uint32_t>(gen()); };
  std::vector<Case> out;
  std::uniform_real_distribution<float> unit(-2.0f, 2.0f);
  const auto vec = [&] { return glm::vec4(unit(gen), unit(gen), unit(gen), 0.0f); };
  const auto any = [&](uint32_t expLo, uint32_t expHi) {  // random sign and mantissa, biased exponent in range
    return fromBits((rng() & 0x807FFFFFu) | ((expLo + rng() % (expHi - expLo + 1)) << 23));
  };
  for (uint32_t i = 0; i < 400000; ++i) {
    float a = any(1, 254), b = any(1, 254), x = std::abs(any(1, 254));
    if (i % 2 == 0) {  // operands in the common range, quotients far from overflow
      a = any(64, 190);
      b = any(64, 190);
    }
    if (i % 5 == 1) b = fromBits(toBits(b) | 0x007FFFFFu);  // all-ones mantissa
    if (i % 7 == 2) a = fromBits(toBits(a) & 0xFF800000u);  // a power of two
    out.push_back({glm::vec4(a, b, x, 0.0f), vec(), vec()});
  }
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, nan, 3.0f, std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::min(), 0.1f, 1e-30f, 1e30f};
  for (float a : specials) {
    for (float b : specials) out.push_back({glm::vec4(a, b, std::abs(a), 0.0f), vec(), vec()});
  }
  return out;
}

template <class Fixture>
class RoundingCheck : public Fixture {
 protected:
  void check();
};
using RoundingVulkan = RoundingCheck<VulkanTest>;
using ExactArithmeticVulkan = RoundingCheck<ExactVulkanTest>;

TEST_F(RoundingVulkan, DivisionAndSquareRootAreTheCpusBits) { check(); }

TEST_F(ExactArithmeticVulkan, TheShadersDivisionAndSquareRootAreTheCpusBits) {
  ASSERT_TRUE(ctx().exactArithmetic());
  check();
}

template <class Fixture>
void RoundingCheck<Fixture>::check() {
  const std::vector<Case> in = cases();
  const uint32_t n = static_cast<uint32_t>(in.size());
  const std::vector<unsigned char> bytes =
      this->runCheckShader(VKC_CHECK_SHADER(rounding_check), in.data(), sizeof(Case), sizeof(Outcome), n, 64);
  ASSERT_EQ(bytes.size(), sizeof(Outcome) * n);
  std::vector<Outcome> got(n);
  std::memcpy(got.data(), bytes.data(), bytes.size());
  uint32_t dotOff = 0, crossOff = 0, explicitBad = 0;
  uint32_t divChecked = 0, sqrtChecked = 0, divBad = 0, sqrtBad = 0, builtinDivOff = 0, builtinSqrtOff = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const float a = in[i].s.x, b = in[i].s.y, x = in[i].s.z;
    const glm::vec3 u(in[i].u), v(in[i].v);
    const float d = glm::dot(u, v), cx = glm::cross(u, v).x;  // GLM: (x x' + y y') + z z'; y z' - y' z
    dotOff += same(got[i].r1.x, d) ? 0 : 1;
    crossOff += same(got[i].r1.z, cx) ? 0 : 1;
    if ((!same(got[i].r1.y, d) || !same(got[i].r1.w, cx)) && ++explicitBad <= 5) {
      ADD_FAILURE() << "explicit precise dot / cross of case " << i << " differ from GLM's";
    }
    const float q = a / b, s = std::sqrt(x);
    // The promise: normal operands and a normal (or infinite, or zero from a zero) result; and the
    // special values of IEEE division.
    const bool divCase = (normal(a) && normal(b) && (normal(q) || std::isinf(q))) ||
                         ((a == 0.0f || std::isinf(a) || std::isnan(a)) && !std::isnan(b) && b != 0.0f) ||
                         (std::isinf(b) && normal(a)) || std::isnan(b);
    if (divCase) {
      ++divChecked;
      builtinDivOff += same(got[i].r0.x, q) ? 0 : 1;
      if (!same(got[i].r0.y, q) && ++divBad <= 5) {
        ADD_FAILURE() << "vkcDiv(" << a << ", " << b << ") = " << got[i].r0.y << " on the device, " << q
                      << " on the CPU (bits " << std::hex << toBits(got[i].r0.y) << " vs " << toBits(q) << std::dec << ")";
      }
    }
    if (normal(x) || x == 0.0f || std::isinf(x) || std::isnan(x)) {
      ++sqrtChecked;
      builtinSqrtOff += same(got[i].r0.z, s) ? 0 : 1;
      if (!same(got[i].r0.w, s) && ++sqrtBad <= 5) {
        ADD_FAILURE() << "vkcSqrt(" << x << ") = " << got[i].r0.w << " on the device, " << s << " on the CPU";
      }
    }
  }
  std::printf(
      "rounding on the device: vkcDiv %u of %u cases differ from the CPU, vkcSqrt %u of %u; the shader's "
      "a / b (exact arithmetic %s) differs in %u cases, its sqrt in %u; of %u, its dot() differs from GLM's in %u, "
      "its cross() in %u, the explicit precise sums in %u\n",
      divBad, divChecked, sqrtBad, sqrtChecked, this->ctx().exactArithmetic() ? "on" : "off", builtinDivOff,
      builtinSqrtOff, n, dotOff, crossOff, explicitBad);
  if (this->ctx().exactArithmetic()) {
    EXPECT_EQ(builtinDivOff, 0u);
    EXPECT_EQ(builtinSqrtOff, 0u);
  }
  EXPECT_EQ(divBad, 0u);
  EXPECT_EQ(sqrtBad, 0u);
  EXPECT_EQ(explicitBad, 0u);
  EXPECT_GT(divChecked, n / 2);
  EXPECT_GT(sqrtChecked, n / 2);
}

}  // namespace
}  // namespace vkc::test
