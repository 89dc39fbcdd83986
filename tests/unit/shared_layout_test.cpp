// The shared headers compile as C++ with the sizes std430 gives them in GLSL (static_asserts in the
// headers), and the order-preserving float keys order floats as the reference comparison does.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "shared/bounds.h"
#include "shared/float_order.h"
#include "vkcollide/types.h"

namespace vkc {
namespace {

uint32_t key(float f) { return gpu::floatKeyFromBits(std::bit_cast<uint32_t>(f)); }

TEST(FloatOrder, KeysOrderLikeFloats) {
  const float inf = std::numeric_limits<float>::infinity();
  const float ordered[] = {-inf, -3.4e38f, -1.0f, -1e-40f, -0.0f, 0.0f, 1e-40f, 1.0f, 3.4e38f, inf};
  for (size_t i = 0; i + 1 < std::size(ordered); ++i) EXPECT_LT(key(ordered[i]), key(ordered[i + 1])) << i;
  EXPECT_EQ(key(inf), gpu::kKeyPosInf);
  EXPECT_EQ(key(-inf), gpu::kKeyNegInf);
  std::mt19937 rng(1);
  for (int i = 0; i < 100000; ++i) {
    const float a = std::bit_cast<float>(static_cast<uint32_t>(rng())), b = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(a) || std::isnan(b)) continue;
    if (a < b) {
      EXPECT_LT(key(a), key(b));
    }
    EXPECT_EQ(std::bit_cast<uint32_t>(a), gpu::floatBitsFromKey(key(a)));
  }
}

TEST(SharedLayout, PublicTypesMatchGpuStructs) {
  EXPECT_EQ(sizeof(Float4), sizeof(gpu::vec4));
  EXPECT_EQ(sizeof(Aabb), sizeof(gpu::Aabb));
  EXPECT_EQ(sizeof(gpu::ClothRange), 16u);
  EXPECT_EQ(sizeof(gpu::BoundsPush), 16u);
  EXPECT_EQ(gpu::kBoundsTileSize % gpu::kBoundsGroupSize, 0u);
}

}  // namespace
}  // namespace vkc
