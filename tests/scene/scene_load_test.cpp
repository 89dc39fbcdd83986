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
  // NvCloth's ground plane at y = -0.5, added to the files (bench/scenes/README.md).
  ASSERT_EQ(c.planes.size(), 1u);
  EXPECT_EQ(c.planes[0], (Float4{0, 1, 0, 0.5f}));
  EXPECT_EQ(c.prevPlanes, c.planes);
  ASSERT_EQ(c.convexes.size(), 1u);
  EXPECT_EQ(c.convexes[0], (std::vector<uint32_t>{0}));
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
  ASSERT_EQ(s->cloths[0].planes.size(), 1u);
  EXPECT_EQ(s->cloths[0].planes[0], (Float4{0, 1, 0, 0.5f}));
  ASSERT_EQ(s->cloths[0].convexes.size(), 1u);
  EXPECT_EQ(s->cloths[0].convexes[0], (std::vector<uint32_t>{0}));
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
  EXPECT_TRUE(sameBits(a.planes, b.planes));
  EXPECT_EQ(a.convexes, b.convexes);
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
  EXPECT_EQ(s->cloths[0].planes.size(), 1u);  // the ground
  EXPECT_EQ(s->cloths[0].convexes.size(), 1u);
  for (const char* sample :
       {"sphere-and-capsule.json", "two-cloths.json", "ccd-fast-strip.json", "self-collision-pairs.json",
        "inter-collision-cloths.json", "planes-and-convexes.json"}) {
    Result<Scene> sc = loadScene(std::string(VKC_SOURCE_DIR) + "/samples/scenes/" + sample);
    ASSERT_TRUE(sc) << sc.message();
    Result<SceneBuffers> b = makeSceneBuffers(*sc);
    ASSERT_TRUE(b) << b.message();
    EXPECT_TRUE(validate(b->shapeInput(shapeCollisionSettings(sc->settings))).ok()) << sample;
    if (sc->settings.selfCollision) {
      const Status st = validate(b->selfInput(selfCollisionSettings(sc->settings)));
      EXPECT_TRUE(st.ok()) << sample << ": " << st.message();
    }
    if (sc->settings.interCollision) {
      const Status st = validate(b->interInput(interCollisionSettings(sc->settings)));
      EXPECT_TRUE(st.ok()) << sample << ": " << st.message();
    }
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

// Planes and convexes: each cloth's colliders hold its planes (pointing into the scene) and its
// convexes (views into the buffers' own `convexes`, each pointing into the scene's index lists); a
// copy's views point into the copy; the shape stage collides with them through the buffers.
TEST(SceneLoad, BuffersGivePlanesAndConvexes) {
  Scene scene;
  scene.cloths.resize(3);
  scene.cloths[0].particles = {{0, -0.1f, 0, 1}, {3, -0.1f, 0, 1}};
  scene.cloths[0].prevParticles = {{0, 0.5f, 0, 1}, {3, 0.5f, 0, 1}};
  scene.cloths[0].planes = {{0, 2, 0, 0}};  // the ground y = 0, normal of length 2
  scene.cloths[0].convexes = {{0}};
  // Cloth 1 has no convexes; cloth 2 a unit box around its particle and the ground of cloth 0's kind.
  scene.cloths[1].particles = {{0, -1, 0, 1}};
  scene.cloths[2].particles = {{0.1f, 0.25f, 0, 1}};
  scene.cloths[2].planes = {{1, 0, 0, -0.5f}, {-1, 0, 0, -0.5f}, {0, 1, 0, -0.5f}, {0, -1, 0, -0.5f},
                            {0, 0, 1, -0.5f}, {0, 0, -1, -0.5f}, {0, 1, 0, 0}};
  scene.cloths[2].prevPlanes = scene.cloths[2].planes;
  scene.cloths[2].convexes = {{0, 1, 2, 3, 4, 5}, {6}};
  Result<SceneBuffers> b = makeSceneBuffers(scene);
  ASSERT_TRUE(b) << b.message();
  ASSERT_EQ(b->convexes.size(), 3u);
  EXPECT_EQ(b->colliders[0].planes.data(), scene.cloths[0].planes.data());
  EXPECT_TRUE(b->colliders[0].prevPlanes.empty());  // built in code without prevPlanes: the same as planes
  ASSERT_EQ(b->colliders[0].convexes.size(), 1u);
  EXPECT_EQ(b->colliders[0].convexes.data(), b->convexes.data());
  EXPECT_EQ(b->colliders[0].convexes[0].planes.data(), scene.cloths[0].convexes[0].data());
  EXPECT_TRUE(b->colliders[1].convexes.empty());
  ASSERT_EQ(b->colliders[2].convexes.size(), 2u);
  EXPECT_EQ(b->colliders[2].convexes.data(), b->convexes.data() + 1);
  EXPECT_EQ(b->colliders[2].convexes[1].planes.size(), 1u);
  EXPECT_EQ(b->colliders[2].prevPlanes.size(), 7u);

  // Copies (construction and assignment) point into their own convexes, moves keep the views.
  SceneBuffers copy = *b;
  EXPECT_EQ(copy.colliders[0].convexes.data(), copy.convexes.data());
  EXPECT_EQ(copy.colliders[2].convexes.data(), copy.convexes.data() + 1);
  SceneBuffers assigned;
  assigned = copy;
  EXPECT_EQ(assigned.colliders[2].convexes.data(), assigned.convexes.data() + 1);
  const Convex* before = copy.convexes.data();
  SceneBuffers moved = std::move(copy);
  EXPECT_EQ(moved.colliders[2].convexes.data(), before + 1);
  EXPECT_EQ(moved.convexes.data(), before);

  // The stage on the copy, with the original gone: cloth 0's first particle stops on the ground
  // (continuous), its second too; cloth 2's particle is pushed out of the box through its top face.
  { const SceneBuffers gone = std::move(*b); }  // the original's convexes freed
  ShapeCollisionSettings st;
  st.continuous = true;
  ASSERT_TRUE(validate(assigned.shapeInput(st)).ok()) << validate(assigned.shapeInput(st)).message();
  ASSERT_TRUE(collideShapesCpu(assigned.shapeInput(st), Backend::kCpuScalar).ok());
  EXPECT_EQ(assigned.particles[0].y, 0.0f);
  EXPECT_EQ(assigned.particles[1].y, 0.0f);
  EXPECT_EQ(assigned.particles[2].y, -1.0f);  // cloth 1: nothing to collide with
  EXPECT_NEAR(assigned.particles[3].y, 0.5f, 1e-6f);
  EXPECT_EQ(assigned.particles[3].x, 0.1f);
}

// The self-collision view: concatenated rest positions, one subset per cloth pointing into the scene,
// the settings; rest positions for only some cloths are refused when self collision is on.
TEST(SceneLoad, BuffersGiveTheSelfCollisionInput) {
  Scene scene;
  scene.cloths.resize(3);
  scene.cloths[0].particles = {{0, 0, 0, 1}, {0.01f, 0, 0, 1}, {1, 0, 0, 1}};
  scene.cloths[0].restPositions = {{0, 0, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}};
  scene.cloths[0].selfCollisionIndices = {0, 2};
  // Cloth 1 is empty (needs no rest positions); cloth 2 has all its particles self-colliding.
  scene.cloths[2].particles = {{5, 5, 5, 1}, {5, 5, 5.01f, 1}};
  scene.cloths[2].restPositions = {{5, 5, 5, 0}, {6, 5, 5, 0}};
  scene.settings.selfCollision = SceneSelfCollision{0.05f, 0.75f};
  Result<SceneBuffers> b = makeSceneBuffers(scene);
  ASSERT_TRUE(b) << b.message();
  const SelfCollisionSettings st = selfCollisionSettings(scene.settings);
  EXPECT_EQ(st.distance, 0.05f);
  EXPECT_EQ(st.stiffness, 0.75f);
  const SelfCollisionInput in = b->selfInput(st);
  ASSERT_EQ(in.particles.size(), 5u);
  EXPECT_EQ(in.particles.data(), b->particles.data());
  ASSERT_EQ(in.restPositions.size(), 5u);
  EXPECT_EQ(in.restPositions[4], (Float4{6, 5, 5, 0}));
  ASSERT_EQ(in.cloths.size(), 3u);
  ASSERT_EQ(in.subsets.size(), 3u);
  EXPECT_EQ(in.subsets[0].data(), scene.cloths[0].selfCollisionIndices.data());
  EXPECT_EQ(in.subsets[0].size(), 2u);
  EXPECT_TRUE(in.subsets[1].empty());
  EXPECT_TRUE(in.subsets[2].empty());
  EXPECT_TRUE(validate(in).ok()) << validate(in).message();
  // Runs: cloth 2's pair separates; cloth 0's close pair (0, 1) is not, as particle 1 is outside the subset.
  ASSERT_TRUE(collideSelfCpu(in, Backend::kCpuScalar).ok());
  EXPECT_EQ(b->particles[1], scene.cloths[0].particles[1]);
  EXPECT_NE(b->particles[4], scene.cloths[2].particles[1]);

  // Rest positions for cloth 0 only: refused with self collision on, dropped with it off.
  scene.cloths[2].restPositions.clear();
  Result<SceneBuffers> partial = makeSceneBuffers(scene);
  ASSERT_FALSE(partial);
  EXPECT_NE(partial.message().find("cloths[2].restPositions: absent, but cloths[0] has them"), std::string::npos)
      << partial.message();
  scene.settings.selfCollision.reset();
  partial = makeSceneBuffers(scene);
  ASSERT_TRUE(partial) << partial.message();
  EXPECT_TRUE(partial->restPositions.empty());
  EXPECT_EQ(selfCollisionSettings(scene.settings).distance, 0.0f);  // validate() refuses it
  EXPECT_FALSE(validate(partial->selfInput(selfCollisionSettings(scene.settings))).ok());
  // A wrong length names the cloth.
  scene.cloths[0].restPositions.pop_back();
  partial = makeSceneBuffers(scene);
  ASSERT_FALSE(partial);
  EXPECT_NE(partial.message().find("cloths[0].restPositions has 2 elements; particles has 3"), std::string::npos)
      << partial.message();
}

// The inter-collision view: one cloth description per cloth (range, translation, rotation) and one
// filter per cloth (group, mask), over the concatenated particles; the settings as given.
TEST(SceneLoad, BuffersGiveTheInterCollisionInput) {
  Scene scene;
  scene.cloths.resize(3);
  scene.cloths[0].particles = {{0, 0, 0, 1}, {1, 0, 0, 1}};
  scene.cloths[0].translation = {0, 0, 0.01f};  // cloth 0's particle 0 lies 0.01 from cloth 2's
  scene.cloths[1].particles = {{0, 0, 0.01f, 1}};
  scene.cloths[1].collisionGroup = 2;  // mask 0xFFFFFFFF, but cloth 0's group 1 & mask 4 == 0
  scene.cloths[1].collisionMask = 4;
  scene.cloths[2].particles = {{0, 0, 0, 1}};
  scene.cloths[2].rotation = {0, 0, 1, 0};  // 180 degrees about z: (0, 0, 0) stays put
  scene.settings.interCollision = SceneInterCollision{0.05f, 1.0f, 2};
  Result<SceneBuffers> b = makeSceneBuffers(scene);
  ASSERT_TRUE(b) << b.message();
  const InterCollisionSettings st = interCollisionSettings(scene.settings);
  EXPECT_EQ(st.distance, 0.05f);
  EXPECT_EQ(st.stiffness, 1.0f);
  EXPECT_EQ(st.iterations, 2u);
  const InterCollisionInput in = b->interInput(st);
  ASSERT_EQ(in.particles.size(), 4u);
  EXPECT_EQ(in.particles.data(), b->particles.data());
  ASSERT_EQ(in.cloths.size(), 3u);
  EXPECT_EQ(in.cloths[1].range.first, 2u);
  EXPECT_EQ(in.cloths[1].range.count, 1u);
  EXPECT_EQ(in.cloths[0].translation.z, 0.01f);
  EXPECT_EQ(in.cloths[2].rotation, (Float4{0, 0, 1, 0}));
  ASSERT_EQ(in.filters.size(), 3u);
  for (uint32_t c = 0; c < 3; ++c) EXPECT_EQ(in.filters[c].cloth, c);
  EXPECT_EQ(in.filters[0].group, 1u);
  EXPECT_EQ(in.filters[0].mask, 0xFFFFFFFFu);
  EXPECT_EQ(in.filters[1].group, 2u);
  EXPECT_EQ(in.filters[1].mask, 4u);
  ASSERT_TRUE(validate(in).ok()) << validate(in).message();
  // Runs: cloths 0 and 2 (world (0, 0, 0.01) and (0, 0, 0)) end 0.05 apart; cloth 1 (world
  // (0, 0, 0.01) too) is filtered out and keeps its bits.
  const std::vector<Float4> was = b->particles;
  InterCollisionDebug debug;
  ASSERT_TRUE(collideInterCpu(in, Backend::kCpuScalar, &debug).ok());  // in place: into b->particles
  const std::vector<Float4>& out = b->particles;
  EXPECT_EQ(debug.clothPairs, (std::vector<InterClothPair>{{0, 2}}));
  EXPECT_EQ(out[2], was[2]);
  EXPECT_EQ(out[1], was[1]);
  EXPECT_NEAR(out[0].z + 0.01f - out[3].z, 0.05f, 1e-6f);  // cloth 2 is rotated about z: z unchanged

  // Without settings.interCollision: distance 0, refused by validate().
  scene.settings.interCollision.reset();
  EXPECT_EQ(interCollisionSettings(scene.settings).distance, 0.0f);
  EXPECT_FALSE(validate(b->interInput(interCollisionSettings(scene.settings))).ok());
}

}  // namespace
}  // namespace vkc
