// Scene files: the NvCloth benchmark scenes load (plain and gzipped), and a scene survives
// parse -> write -> parse bitwise.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "vkcollide/scene.h"

namespace vkc {
namespace {

const std::string kBench = std::string(VKC_SOURCE_DIR) + "/bench/scenes/";

bool sameBits(const std::vector<Float4>& a, const std::vector<Float4>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(Float4)) == 0);
}

TEST(SceneLoad, NvClothDrape64) {
  Result<Scene> s = loadScene(kBench + "nvcloth-drape-64.json");
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(s->cloths.size(), 1u);
  const SceneCloth& c = s->cloths[0];
  EXPECT_EQ(c.name, "nvcloth-drape-64");
  EXPECT_EQ(c.particles.size(), 4096u);
  EXPECT_EQ(c.prevParticles.size(), 4096u);
  EXPECT_EQ(c.spheres.size(), c.prevSpheres.size());
  EXPECT_GE(c.spheres.size(), 3u);  // a sphere and a tapered capsule's two spheres
  EXPECT_GE(c.capsules.size(), 1u);
  EXPECT_TRUE(s->settings.continuousCollision);
  EXPECT_FLOAT_EQ(s->settings.friction, 0.3f);
  ASSERT_TRUE(s->settings.selfCollision.has_value());
  EXPECT_FLOAT_EQ(s->settings.selfCollision->stiffness, 0.9f);
  EXPECT_FALSE(s->settings.interCollision.has_value());
}

TEST(SceneLoad, NvClothDrape255Gzipped) {
  Result<Scene> s = loadScene(kBench + "nvcloth-drape-255.json.gz");
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(s->cloths.size(), 1u);
  EXPECT_EQ(s->cloths[0].particles.size(), 65025u);
  EXPECT_EQ(s->cloths[0].prevParticles.size(), 65025u);
}

TEST(SceneLoad, RoundTripIsBitwise) {
  Result<Scene> s = loadScene(kBench + "nvcloth-drape-64.json");
  ASSERT_TRUE(s) << s.message();
  const std::string text = writeScene(*s);
  Result<Scene> again = parseScene(text);
  ASSERT_TRUE(again) << again.message();
  EXPECT_TRUE(*again == *s);
  const SceneCloth& a = s->cloths[0];
  const SceneCloth& b = again->cloths[0];
  EXPECT_TRUE(sameBits(a.particles, b.particles));
  EXPECT_TRUE(sameBits(a.prevParticles, b.prevParticles));
  EXPECT_TRUE(sameBits(a.spheres, b.spheres));
  EXPECT_EQ(writeScene(*again), text);  // writing is deterministic too
}

}  // namespace
}  // namespace vkc
