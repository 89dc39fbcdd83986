// Golden results (in the spirit of box2d's determinism test): a 64-bit hash of every stage's output on
// the NvCloth drape scenes (and the inter-collision sample scene), per backend, checked in at
// tests/golden/golden.txt. The conformance tests compare the backends with each other; this test
// catches a change that moves every backend the same way. After an intended change of results, run
// `VKC_UPDATE_GOLDEN=1 build-test/tests/vkc_tests --gtest_filter='Golden*'` and commit the file (say why
// in the commit). Vulkan results are keyed by the device and driver (a GPU rounds sqrt and division
// its own way): a device without entries fails with the same instruction.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "support/vulkan_fixture.h"
#include "vkcollide/scene.h"

namespace vkc::test {
namespace {

const std::string kGoldenPath = std::string(VKC_SOURCE_DIR) + "/tests/golden/golden.txt";

// FNV-1a over the bytes.
uint64_t hashBytes(const void* data, size_t bytes, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}
template <class T>
uint64_t hashOf(const std::vector<T>& v, uint64_t h = 0xcbf29ce484222325ull) {
  return hashBytes(v.data(), v.size() * sizeof(T), h);
}

std::map<std::string, std::string> readGolden() {
  std::map<std::string, std::string> out;
  std::ifstream f(kGoldenPath);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.rfind(' ');
    if (sp != std::string::npos) out[line.substr(0, sp)] = line.substr(sp + 1);
  }
  return out;
}

void writeGolden(const std::map<std::string, std::string>& entries) {
  std::ofstream f(kGoldenPath);
  f << "# Golden result hashes (tests/golden/golden_test.cpp): <scene> <stage> <backend> <hash>.\n"
       "# Regenerate on purpose: VKC_UPDATE_GOLDEN=1 build-test/tests/vkc_tests --gtest_filter='Golden*'\n";
  for (const auto& [k, v] : entries) f << k << ' ' << v << '\n';
}

std::string hex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// A scene and its buffers (whose collider and subset spans point into the scene, so it stays alive).
struct Loaded {
  std::unique_ptr<Scene> scene;
  SceneBuffers buffers;
};

Loaded load(const std::string& relative) {
  auto scene = loadScene(std::string(VKC_SOURCE_DIR) + "/" + relative);
  if (!scene.ok()) ADD_FAILURE() << scene.message();
  Loaded out{std::make_unique<Scene>(scene.ok() ? std::move(scene.value()) : Scene{}), {}};
  auto buffers = makeSceneBuffers(*out.scene);
  if (!buffers.ok()) ADD_FAILURE() << buffers.message();
  if (buffers.ok()) out.buffers = std::move(buffers.value());
  return out;
}

// One (scene, stage) -> hash for the backend under test.
using Hashes = std::map<std::string, uint64_t>;

Hashes runAll(Backend backend, Context* ctx) {
  Hashes out;
  for (const char* name : {"nvcloth-drape-64.json", "nvcloth-drape-255.json.gz"}) {
    const std::string scene = name;
    const Loaded loaded = load("bench/scenes/" + scene);
    const SceneBuffers& base = loaded.buffers;
    {  // bounds, with the previous positions
      std::vector<Aabb> boxes(base.cloths.size());
      const Status st = computeBounds(backend, ctx, {base.particles, base.prevParticles, base.cloths, true, boxes});
      EXPECT_TRUE(st.ok()) << st.message();
      out[scene + " bounds"] = hashOf(boxes);
    }
    for (const bool ccd : {false, true}) {  // shapes: discrete; CCD with friction and mass scaling
      SceneBuffers b = base;
      ShapeCollisionSettings set;
      set.continuous = ccd;
      set.friction = ccd ? 0.3f : 0.0f;
      set.collisionMassScale = ccd ? 0.5f : 0.0f;
      ShapeCollisionDebug debug;
      const Status st = collideShapes(backend, ctx, b.shapeInput(set), &debug);
      EXPECT_TRUE(st.ok()) << st.message();
      out[scene + (ccd ? " shapes-ccd-friction" : " shapes-discrete")] =
          hashOf(b.prevParticles, hashOf(b.particles, hashOf(debug.masks)));
    }
    {  // self collision (the scene's settings)
      SceneBuffers b = base;
      SelfCollisionDebug debug;
      const Status st = collideSelf(backend, ctx, b.selfInput({.distance = 0.0253968276f, .stiffness = 0.9f}), &debug);
      EXPECT_TRUE(st.ok()) << st.message();
      out[scene + " self"] = hashOf(b.particles, hashOf(debug.sortedKeys, hashOf(debug.sortedParticles)));
      // The radix sort on the self-collision keys in particle order (payload: the particle index).
      std::vector<uint32_t> keys(debug.sortedKeys.size()), values(debug.sortedParticles.size());
      for (size_t i = 0; i < keys.size(); ++i) {
        keys[debug.sortedParticles[i]] = debug.sortedKeys[i];
        values[i] = static_cast<uint32_t>(i);
      }
      const Status sorted = radixSort(backend, ctx, {keys, values, 32});
      EXPECT_TRUE(sorted.ok()) << sorted.message();
      out[scene + " radix"] = hashOf(values, hashOf(keys));
    }
  }
  {  // inter collision: three cloths of the sample scene, the scene's settings
    Loaded loaded = load("samples/scenes/inter-collision-cloths.json");
    SceneBuffers& b = loaded.buffers;
    InterCollisionDebug debug;
    const Status st =
        collideInter(backend, ctx, b.interInput({.distance = 0.05f, .stiffness = 1.0f, .iterations = 2}), &debug);
    EXPECT_TRUE(st.ok()) << st.message();
    out["inter-collision-cloths.json inter"] = hashOf(b.particles, hashOf(debug.marked, hashOf(debug.contacts)));
  }
  return out;
}

std::string backendKey(Backend backend, Context* ctx) {
  if (backend != Backend::kVulkan) return toString(backend);
  std::string key = "vulkan:" + ctx->deviceInfo().driverName + ":" + ctx->deviceInfo().name;
  for (char& c : key) c = c == ' ' ? '_' : c;
  return key;
}

class Golden : public BackendTest {};

TEST_P(Golden, EveryStageOutputMatchesItsCheckedInHash) {
  const std::string key = backendKey(backend(), ctx());
  const Hashes got = runAll(backend(), ctx());
  std::map<std::string, std::string> golden = readGolden();
  const bool update = std::getenv("VKC_UPDATE_GOLDEN") != nullptr;
  for (const auto& [what, h] : got) {
    const std::string entry = what + " " + key;
    if (update) {
      golden[entry] = hex(h);
      continue;
    }
    const auto it = golden.find(entry);
    if (it == golden.end()) {
      ADD_FAILURE() << "no golden hash for '" << entry << "' in " << kGoldenPath
                    << " (a new device or stage: run with VKC_UPDATE_GOLDEN=1 and commit the file)";
      continue;
    }
    EXPECT_EQ(it->second, hex(h)) << entry << ": the output changed; if intended, run with VKC_UPDATE_GOLDEN=1 "
                                  << "and commit tests/golden/golden.txt saying why";
  }
  if (update) writeGolden(golden);
}

INSTANTIATE_TEST_SUITE_P(Backends, Golden, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
