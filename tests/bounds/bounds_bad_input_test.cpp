// Bad input to the bounds stage: every backend rejects it with an error that names the field, and
// leaves its outputs untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "support/bounds_reference.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using BoundsBadInput = BackendTest;

// Runs `in` on the backend and expects an error containing `field`. On the CPU, also checks that
// the output array is untouched.
void expectRejected(Backend backend, Context* ctx, const BoundsInput& in, const std::string& field) {
  if (backend == Backend::kVulkan) {
    auto r = boundsOf(backend, ctx, in);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find(field), std::string::npos) << r.message();
    return;
  }
  const Aabb sentinel{{7, 7, 7, 7}, {7, 7, 7, 7}};
  std::vector<Aabb> out(in.cloths.size(), sentinel);
  BoundsInput withOut = in;
  withOut.boxes = out;
  const Status s = computeBoundsCpu(withOut, backend);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
  for (const Aabb& b : out) EXPECT_EQ(std::memcmp(&b, &sentinel, sizeof b), 0) << "output changed on error";
}

std::vector<Float4> grid(uint32_t n) {
  std::vector<Float4> p(n);
  for (uint32_t i = 0; i < n; ++i) p[i] = {float(i), float(i % 7), -float(i), 1.0f};
  return p;
}

TEST_P(BoundsBadInput, NonFinitePositionNamesClothAndParticle) {
  auto p = grid(20);
  const std::vector<ClothRange> cloths = {{0, 10}, {10, 10}};
  p[15].y = std::numeric_limits<float>::quiet_NaN();
  expectRejected(backend(), ctx(), {p, {}, cloths, false}, "cloths[1].particles[5].y (scene particle 15) is nan");
  p[15].y = 0;
  p[3].z = -std::numeric_limits<float>::infinity();
  expectRejected(backend(), ctx(), {p, {}, cloths, false}, "cloths[0].particles[3].z (scene particle 3) is -inf");
}

TEST_P(BoundsBadInput, NonFinitePreviousPositionIsRejectedOnlyWhenUsed) {
  auto p = grid(20);
  auto q = grid(20);
  const std::vector<ClothRange> cloths = {{0, 20}};
  q[19].x = std::numeric_limits<float>::infinity();
  expectRejected(backend(), ctx(), {p, q, cloths, true}, "cloths[0].prevParticles[19].x");
}

TEST_P(BoundsBadInput, NegativeOrNonFiniteInverseMass) {
  auto p = grid(8);
  const std::vector<ClothRange> cloths = {{0, 8}};
  p[2].w = -1.0f;
  expectRejected(backend(), ctx(), {p, {}, cloths, false}, "cloths[0].particles[2].w");
}

TEST_P(BoundsBadInput, ClothRangeOutsideParticles) {
  auto p = grid(8);
  const std::vector<ClothRange> cloths = {{0, 4}, {6, 3}};
  expectRejected(backend(), ctx(), {p, {}, cloths, false}, "cloths[1]: particles [6, 9) extend past the 8");
  const std::vector<ClothRange> overflow = {{0xFFFFFFF0u, 0x20u}};
  expectRejected(backend(), ctx(), {p, {}, overflow, false}, "cloths[0]");
}

TEST_P(BoundsBadInput, PreviousPositionsOfTheWrongCount) {
  auto p = grid(8);
  auto q = grid(7);
  const std::vector<ClothRange> cloths = {{0, 7}};
  expectRejected(backend(), ctx(), {p, q, cloths, true}, "prevParticles has 7 elements");
  expectRejected(backend(), ctx(), {p, {}, cloths, true}, "prevParticles has 0 elements");
}

INSTANTIATE_TEST_SUITE_P(Backends, BoundsBadInput, VKC_ALL_BACKENDS);

TEST(BoundsCpuApi, RejectsWrongOutputSizeAndVulkanBackend) {
  const std::vector<Float4> p = {{0, 0, 0, 1}};
  const std::vector<ClothRange> cloths = {{0, 1}};
  std::vector<Aabb> out(2);
  const Status tooMany = computeBoundsCpu({p, {}, cloths, false, out}, Backend::kCpuScalar);
  EXPECT_EQ(tooMany.error().code, ErrorCode::kBufferTooSmall);
  EXPECT_NE(tooMany.message().find("BoundsInput::boxes"), std::string::npos) << tooMany.message();
  out.resize(1);
  EXPECT_FALSE(computeBoundsCpu({p, {}, cloths, false, out}, Backend::kVulkan).ok());
  EXPECT_FALSE(computeBounds(Backend::kVulkan, nullptr, {p, {}, cloths, false, out}).ok());
}

}  // namespace
}  // namespace vkc::test
