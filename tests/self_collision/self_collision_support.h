// Scenes and the O(N^2) reference for the self-collision tests.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "vkcollide/scene.h"
#include "vkcollide/self_collision.h"

namespace vkc::test {

struct SelfScene {
  std::vector<Float4> particles;
  std::vector<Float4> rest;
  std::vector<ClothRange> cloths;
  std::vector<std::vector<uint32_t>> subsets;  // empty, or one per cloth
  std::vector<std::span<const uint32_t>> subsetSpans;
  SelfCollisionSettings settings;

  SelfCollisionInput input() {
    subsetSpans.clear();
    for (const auto& s : subsets) subsetSpans.emplace_back(s);
    return {particles, rest, cloths, subsetSpans, settings};
  }
};

// The reference pair set: pairs of the same cloth (both in its subset) closer than d (in double), not
// closer than d at rest. Pairs within `margin` (relative) of either threshold are "ambiguous": they go
// to `ambiguous` instead, and the comparison ignores them.
inline std::set<std::array<uint32_t, 2>> referencePairs(const SelfScene& s, std::set<std::array<uint32_t, 2>>* ambiguous,
                                                        double margin = 1e-4) {
  std::set<std::array<uint32_t, 2>> out;
  const double d2 = double(s.settings.distance) * double(s.settings.distance);
  auto dist2 = [](const Float4& a, const Float4& b) {
    const double x = double(a.x) - double(b.x), y = double(a.y) - double(b.y), z = double(a.z) - double(b.z);
    return x * x + y * y + z * z;
  };
  for (size_t c = 0; c < s.cloths.size(); ++c) {
    std::vector<uint32_t> members;
    if (!s.subsets.empty() && !s.subsets[c].empty()) {
      for (uint32_t l : s.subsets[c]) members.push_back(s.cloths[c].first + l);
    } else {
      for (uint32_t i = 0; i < s.cloths[c].count; ++i) members.push_back(s.cloths[c].first + i);
    }
    for (size_t a = 0; a < members.size(); ++a) {
      for (size_t b = a + 1; b < members.size(); ++b) {
        const uint32_t i = std::min(members[a], members[b]), j = std::max(members[a], members[b]);
        const double now = dist2(s.particles[i], s.particles[j]);
        bool amb = std::abs(now - d2) < margin * d2;
        bool pair = now < d2;
        if (!s.rest.empty()) {
          const double r = dist2(s.rest[i], s.rest[j]);
          amb = amb || (pair && std::abs(r - d2) < margin * d2);
          pair = pair && r >= d2;
        }
        if (amb) {
          if (ambiguous != nullptr) ambiguous->insert({i, j});
        } else if (pair) {
          out.insert({i, j});
        }
      }
    }
  }
  return out;
}

inline std::vector<Float4> randomCloud(size_t n, uint32_t seed, Float4 lo, Float4 hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<Float4> p(n);
  for (auto& v : p) {
    v = {lo.x + (hi.x - lo.x) * u(rng), lo.y + (hi.y - lo.y) * u(rng), lo.z + (hi.z - lo.z) * u(rng), 1.0f};
  }
  return p;
}

// An n x n cloth of spacing h (rest positions flat in xz), crumpled: folded over itself by a few
// sinusoidal waves and jittered, so that particles far apart in the mesh come close.
inline void crumpledCloth(uint32_t n, float h, uint32_t seed, std::vector<Float4>& particles, std::vector<Float4>& rest) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float L = h * float(n);
  for (uint32_t r = 0; r < n; ++r) {
    for (uint32_t c = 0; c < n; ++c) {
      const float x = h * float(c), z = h * float(r);
      rest.push_back({x, 0.0f, z, 1.0f});
      // Fold along x: the cloth's second half comes back over the first, 0.3 h above it, plus waves.
      const float t = x / L;
      const float fx = t < 0.5f ? x : L - x;
      const float fy = (t < 0.5f ? 0.0f : 0.3f * h) + 0.2f * h * std::sin(7.0f * z / L + 3.0f * t);
      particles.push_back({fx + 0.25f * h * u(rng), fy + 0.25f * h * u(rng), z + 0.25f * h * u(rng), 1.0f});
    }
  }
}

// A scene file of bench/scenes/ (the NvCloth drapes) as a self-collision scene: its cloths, particles
// and selfCollision settings. A file that does not load (or has no selfCollision) fails the test and
// gives an empty scene.
inline SelfScene benchSceneForSelf(const std::string& file) {
  SelfScene s;
  Result<Scene> scene = loadScene(std::string(VKC_SOURCE_DIR) + "/bench/scenes/" + file);
  if (!scene.ok() || !scene->settings.selfCollision.has_value()) {
    ADD_FAILURE() << file << ": " << (scene.ok() ? "no selfCollision settings" : scene.message());
    return s;
  }
  for (const SceneCloth& c : scene->cloths) {
    s.cloths.push_back({static_cast<uint32_t>(s.particles.size()), static_cast<uint32_t>(c.particles.size())});
    s.particles.insert(s.particles.end(), c.particles.begin(), c.particles.end());
  }
  s.settings = {scene->settings.selfCollision->distance, scene->settings.selfCollision->stiffness};
  return s;
}

// Runs `s` (particles updated in place) on a SelfCollisionStage created for it with `path` on `ctx`;
// `stats` gets the record's figures. Fails the test on error; checks the stage took `path`.
inline void runSelfStage(Context& ctx, SelfScene& s, SelfCollisionPath path, SelfCollisionDebug* debug,
                         RecordStats* stats = nullptr) {
  const SelfCollisionInput in = s.input();
  SelfCollisionStageCreateInfo ci;
  ci.cloths = s.cloths;
  ci.particleCount = static_cast<uint32_t>(s.particles.size());
  ci.subsets = in.subsets;
  ci.restPositions = !s.rest.empty();
  ci.path = path;
  auto stage = SelfCollisionStage::create(ctx, ci);
  ASSERT_TRUE(stage.ok()) << stage.message();
  EXPECT_EQ((*stage)->path(), path);
  const Status st = (*stage)->run(in, debug);
  ASSERT_TRUE(st.ok()) << st.message();
  if (stats != nullptr) *stats = (*stage)->lastRecordStats();
}

}  // namespace vkc::test
