// Scene files: the NvCloth benchmark scenes load (plain and gzipped), and a scene survives
// parse -> write -> parse bitwise.
#include <gtest/gtest.h>

#include <unistd.h>

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

std::string tempPath(const std::string& name) {
  return ::testing::TempDir() + "vkc_scene_" + std::to_string(::getpid()) + "_" + name;
}

bool fileExists(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f) std::fclose(f);
  return f != nullptr;
}

TEST(SceneLoad, SaveAndLoadGzipAndPlain) {
  Result<Scene> s = loadScene(kBench + "nvcloth-drape-64.json");
  ASSERT_TRUE(s) << s.message();
  for (const char* name : {"a.json", "a.json.gz"}) {
    const std::string path = tempPath(name);
    ASSERT_TRUE(saveScene(*s, path).ok());
    EXPECT_FALSE(fileExists(path + ".tmp"));
    Result<Scene> back = loadScene(path);
    ASSERT_TRUE(back) << back.message();
    EXPECT_TRUE(*back == *s) << name;
    EXPECT_TRUE(sameBits(back->cloths[0].particles, s->cloths[0].particles));
    std::remove(path.c_str());
  }
  // The gzipped file really is gzip: its first bytes are the gzip magic.
  const std::string gz = tempPath("b.json.gz");
  ASSERT_TRUE(saveScene(*s, gz).ok());
  std::FILE* f = std::fopen(gz.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  unsigned char magic[2] = {0, 0};
  EXPECT_EQ(std::fread(magic, 1, 2, f), 2u);
  std::fclose(f);
  EXPECT_EQ(magic[0], 0x1f);
  EXPECT_EQ(magic[1], 0x8b);
  std::remove(gz.c_str());
}

TEST(SceneLoad, FileErrors) {
  Result<Scene> missing = loadScene(tempPath("does-not-exist.json"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kIo);
  EXPECT_NE(missing.message().find("does-not-exist.json"), std::string::npos) << missing.message();

  // A truncated gzip stream is an error, not a short scene.
  Result<Scene> s = loadScene(kBench + "nvcloth-drape-64.json");
  ASSERT_TRUE(s) << s.message();
  const std::string gz = tempPath("t.json.gz");
  ASSERT_TRUE(saveScene(*s, gz).ok());
  ASSERT_EQ(::truncate(gz.c_str(), 4000), 0);
  Result<Scene> truncated = loadScene(gz);
  ASSERT_FALSE(truncated);
  EXPECT_EQ(truncated.error().code, ErrorCode::kIo) << truncated.message();
  std::remove(gz.c_str());

  // A parse error names the file and the JSON path.
  const std::string bad = tempPath("bad.json");
  std::FILE* f = std::fopen(bad.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs(R"({"format": "vkcollide-scene", "version": 1, "cloths": [{"particles": [[0, 0, 0]]}]})", f);
  std::fclose(f);
  Result<Scene> parsed = loadScene(bad);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(parsed.message().find(bad + ": cloths[0].particles[0]: expected 4 numbers"), std::string::npos)
      << parsed.message();
  std::remove(bad.c_str());

  // Saving into a missing directory fails and leaves no file behind.
  const std::string nowhere = tempPath("no-such-dir") + "/x.json";
  const Status st = saveScene(*s, nowhere);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kIo);
  EXPECT_FALSE(fileExists(nowhere));
}

// The example in docs/scene-format.md is a valid scene, and the sample scenes load.
TEST(SceneLoad, DocumentedExampleAndSamplesParse) {
  std::FILE* f = std::fopen((std::string(VKC_SOURCE_DIR) + "/docs/scene-format.md").c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string doc;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) doc.append(buf, n);
  std::fclose(f);
  const size_t begin = doc.find("```json\n");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = doc.find("```", begin + 8);
  ASSERT_NE(end, std::string::npos);
  Result<Scene> s = parseScene(std::string_view(doc).substr(begin + 8, end - begin - 8));
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(s->cloths.size(), 1u);
  EXPECT_EQ(s->cloths[0].capsules.size(), 1u);
  for (const char* sample : {"sphere-and-capsule.json", "two-cloths.json", "ccd-fast-strip.json"}) {
    Result<Scene> sc = loadScene(std::string(VKC_SOURCE_DIR) + "/samples/scenes/" + sample);
    ASSERT_TRUE(sc) << sc.message();
    Result<SceneBuffers> b = makeSceneBuffers(*sc);
    ASSERT_TRUE(b) << b.message();
    EXPECT_TRUE(validate(b->shapeInput(shapeCollisionSettings(sc->settings))).ok()) << sample;
  }
}

TEST(SceneLoad, BuffersConcatenateCloths) {
  Scene scene;
  scene.cloths.resize(3);
  scene.cloths[0].particles = {{0, 0, 0, 1}, {1, 0, 0, 1}};
  scene.cloths[0].prevParticles = {{0, 1, 0, 1}, {1, 1, 0, 1}};
  scene.cloths[0].spheres = {{0, 0, 0, 1}};
  scene.cloths[0].prevSpheres = scene.cloths[0].spheres;
  // Cloth 1 is empty; cloth 2 leaves prevParticles empty (= particles).
  scene.cloths[2].particles = {{5, 5, 5, 0}};
  scene.settings.friction = 0.5f;
  scene.settings.continuousCollision = true;
  Result<SceneBuffers> b = makeSceneBuffers(scene);
  ASSERT_TRUE(b) << b.message();
  ASSERT_EQ(b->cloths.size(), 3u);
  EXPECT_EQ(b->cloths[0].first, 0u);
  EXPECT_EQ(b->cloths[0].count, 2u);
  EXPECT_EQ(b->cloths[1].first, 2u);
  EXPECT_EQ(b->cloths[1].count, 0u);
  EXPECT_EQ(b->cloths[2].first, 2u);
  EXPECT_EQ(b->cloths[2].count, 1u);
  ASSERT_EQ(b->particles.size(), 3u);
  EXPECT_EQ(b->prevParticles[1], (Float4{1, 1, 0, 1}));
  EXPECT_EQ(b->prevParticles[2], (Float4{5, 5, 5, 0}));
  EXPECT_EQ(b->colliders[0].spheres.size(), 1u);
  EXPECT_EQ(b->colliders[0].spheres.data(), scene.cloths[0].spheres.data());
  const ShapeCollisionSettings st = shapeCollisionSettings(scene.settings);
  EXPECT_TRUE(st.continuous);
  EXPECT_EQ(st.friction, 0.5f);
  EXPECT_EQ(st.alphaBegin, 0.0f);
  EXPECT_EQ(st.alphaEnd, 1.0f);
  const ShapeCollisionInput in = b->shapeInput(st);
  EXPECT_EQ(in.particles.size(), 3u);
  EXPECT_EQ(in.cloths.size(), 3u);
  EXPECT_TRUE(validate(in).ok()) << validate(in).message();

  b->particles[2].y = 7;
  b->prevParticles[0].x = -1;
  storeSceneBuffers(*b, scene);
  EXPECT_EQ(scene.cloths[2].particles[0].y, 7.0f);
  EXPECT_EQ(scene.cloths[2].prevParticles.size(), 1u);
  EXPECT_EQ(scene.cloths[0].prevParticles[0].x, -1.0f);
}

}  // namespace
}  // namespace vkc
