// The self-collision grid and keys against analytic answers (shared/self_collision.h, the functions
// every backend runs): sweep axis, cell sizes, reach, clamping to the sentinels, column ranges.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "shared/self_collision.h"

namespace vkc::gpu {
namespace {

TEST(SelfCollisionGrid, SweepAxisIsTheLongestEdgeAndCellsFollowNvCloth) {
  // Box 1 x 3 x 2: sweep y; hash axes z (2 m) and x (1 m).
  const SelfGrid g = makeSelfGrid({0, 0, 0}, {1, 3, 2}, 0.001f);
  EXPECT_EQ(g.axes.x, 1u);
  EXPECT_EQ(g.axes.y, 2u);
  EXPECT_EQ(g.axes.z, 0u);
  EXPECT_FLOAT_EQ(g.scale.y, 65533.0f / 3.0f);
  // d is small: hash cells are edge / 253 (times the rounding margin).
  EXPECT_FLOAT_EQ(g.scale.z, 1.0f / (2.0f / 253.0f * kSelfCellMargin));
  EXPECT_FLOAT_EQ(g.scale.x, 1.0f / (1.0f / 253.0f * kSelfCellMargin));
  EXPECT_EQ(g.axes.w, 2u + static_cast<uint32_t>(std::floor(0.001f * 65533.0f / 3.0f)));
  // A large d: hash cells are d.
  const SelfGrid h = makeSelfGrid({0, 0, 0}, {1, 3, 2}, 0.5f);
  EXPECT_FLOAT_EQ(h.scale.z, 1.0f / (0.5f * kSelfCellMargin));
  EXPECT_FLOAT_EQ(h.scale.x, 1.0f / (0.5f * kSelfCellMargin));
  // Ties go to the first axis.
  EXPECT_EQ(makeSelfGrid({0, 0, 0}, {2, 2, 2}, 0.1f).axes.x, 0u);
  EXPECT_EQ(makeSelfGrid({0, 0, 0}, {1, 2, 2}, 0.1f).axes.x, 1u);
}

TEST(SelfCollisionGrid, DegenerateBoxesGiveFiniteGrids) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const SelfGrid& g : {makeSelfGrid({1, 1, 1}, {1, 1, 1}, 0.1f),      // one particle
                            makeSelfGrid({inf, inf, inf}, {-inf, -inf, -inf}, 0.1f)}) {  // empty cloth
    for (int a = 0; a < 3; ++a) EXPECT_TRUE(std::isfinite(g.scale[a]) && g.scale[a] > 0.0f) << a;
    EXPECT_EQ(g.axes.w, 2u + 65533u);  // the sweep spans d: the reach covers it all
    const uint32_t key = selfCellKey(g, {1, 1, 1});
    EXPECT_GE(key & 0xFFFFu, 1u);
  }
}

TEST(SelfCollisionGrid, KeysStayInsideTheSentinels) {
  const SelfGrid g = makeSelfGrid({-1, -1, -1}, {3, 1, 2}, 0.001f);  // sweep x; hash cells edge / 253
  const float nan = std::nanf("");
  struct Case {
    vec3 p;
    uint32_t sweep, h0, h1;
  } cases[] = {
      {{-1, -1, -1}, 1, 1, 1},             // the lower corner: the first cells
      {{3, 1, 2}, 65534, 253, 253},        // the upper corner: the sweep's last cell; hash cells < 254 (margin)
      {{-50, -50, -50}, 1, 1, 1},          // moved out of the box (shape collision ran since the bounds)
      {{50, 50, 50}, 65534, 254, 254},     // clamped to the last cells, never a sentinel
      {{nan, nan, nan}, 1, 1, 1},          // NaN clamps to the first cell
  };
  for (const Case& c : cases) {
    const uint32_t key = selfCellKey(g, c.p);
    EXPECT_EQ(key & 0xFFFFu, c.sweep) << c.p.x;
    EXPECT_EQ((key >> 16) & 0xFFu, c.h0) << c.p.x;
    EXPECT_EQ(key >> 24, c.h1) << c.p.x;
  }
}

TEST(SelfCollisionGrid, ColumnRangesCoverTheNeighbourCellsWithoutWrapping) {
  const uint32_t key = 100u | (5u << 16) | (9u << 24);
  for (uint32_t c = 0; c < 9; ++c) {
    const uvec2 r = selfColumnRange(key, c, 30);
    EXPECT_EQ(r.x >> 16, r.y >> 16) << c;  // one column
    EXPECT_EQ((r.x >> 16) & 0xFFu, 5u + c % 3u - 1u) << c;
    EXPECT_EQ(r.x >> 24, 9u + c / 3u - 1u) << c;
    EXPECT_EQ(r.x & 0xFFFFu, 70u);
    EXPECT_EQ(r.y & 0xFFFFu, 130u);
  }
  // The sweep range clamps at 0 and 0xFFFF; hash cells 1 and 254 reach the sentinels 0 and 255.
  const uvec2 low = selfColumnRange(3u | (1u << 16) | (1u << 24), 0, 30);
  EXPECT_EQ(low.x, 0u);
  EXPECT_EQ(low.y, 33u);
  const uvec2 high = selfColumnRange(65530u | (254u << 16) | (254u << 24), 8, 30);
  EXPECT_EQ(high.x, 65500u | (255u << 16) | (255u << 24));
  EXPECT_EQ(high.y, 0xFFFFFFFFu);
}

TEST(SelfCollisionGrid, PairCorrectionIsNvClothsDelta) {
  // diff = (0.06, 0, 0), d = 0.1, stiffness 0.5, w = 1 and 3: delta = 0.5 / (eps + 4) * 0.06 * (1 - 0.1 / 0.06).
  const vec3 c = selfPairCorrection({0, 0, 0, 1}, {0.06f, 0, 0, 3}, 0, 1, 0, 0.1f, 0.5f);
  EXPECT_NEAR(c.x, 0.5f / 4.0f * 0.06f * (1.0f - 0.1f / 0.06f), 1e-7f);
  EXPECT_EQ(c.y, 0.0f);
  // The same pair seen from the other side: the opposite correction.
  const vec3 o = selfPairCorrection({0.06f, 0, 0, 3}, {0, 0, 0, 1}, 1, 0, 0, 0.1f, 0.5f);
  EXPECT_FLOAT_EQ(o.x, -c.x);
  // Coincident: along the sweep axis, opposite for the two slots, d * scale long.
  const vec3 a = selfPairCorrection({1, 1, 1, 1}, {1, 1, 1, 1}, 3, 7, 2, 0.1f, 1.0f);
  const vec3 b = selfPairCorrection({1, 1, 1, 1}, {1, 1, 1, 1}, 7, 3, 2, 0.1f, 1.0f);
  EXPECT_EQ(a.x, 0.0f);
  EXPECT_NEAR(a.z, -0.05f, 1e-7f);
  EXPECT_EQ(b.z, -a.z);
}

}  // namespace
}  // namespace vkc::gpu
