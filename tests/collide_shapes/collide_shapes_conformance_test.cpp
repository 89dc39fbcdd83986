// Conformance, one body per backend: grid masks bitwise equal to the CPU scalar reference, positions
// and previous positions within kShapeCollisionTolerance (1 + |x|), for particle counts around the
// workgroup size, many cloths of different sizes (empty ones too), cloths with more than 32 shapes
// (several mask words), discrete and continuous, with and without friction and mass scaling.
#include <gtest/gtest.h>

#include <cstring>

#include "collide_shapes/shapes_test_support.h"
#include "support/executors.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using namespace shapes;
using ShapeConformance = BackendTest;

// A cloth of n particles in a box around `origin`, with `spheres` spheres (moving) and `capsules`
// capsules around it; some spheres far from the particles.
void addRandomCloth(Scene& s, std::mt19937& rng, V3 origin, uint32_t n, uint32_t spheres, uint32_t capsules) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Float4> p, q, sp, prevSp;
  for (uint32_t i = 0; i < n; ++i) {
    const V3 x = origin + V3{u(rng), u(rng), u(rng)} * 1.5;
    const float w = i % 11 == 0 ? 0.0f : static_cast<float>(0.5 + std::abs(u(rng)));
    p.push_back(toFloat4(x, w));
    q.push_back(toFloat4(x + V3{u(rng), u(rng), u(rng)} * 0.08, w));
  }
  for (uint32_t k = 0; k < spheres; ++k) {
    const double spread = k % 6 == 0 ? 5.0 : 1.6;
    const V3 c = origin + V3{u(rng), u(rng), u(rng)} * spread;
    const double r = 0.08 + 0.3 * std::abs(u(rng));
    sp.push_back(toFloat4(c, static_cast<float>(r)));
    prevSp.push_back(toFloat4(c + V3{u(rng), u(rng), u(rng)} * 0.15,
                              static_cast<float>(r * (0.8 + 0.4 * std::abs(u(rng))))));
  }
  std::vector<Capsule> caps;
  for (uint32_t k = 0; k < capsules && spheres > 1; ++k) {
    const uint32_t a = static_cast<uint32_t>(rng() % spheres);
    caps.push_back({a, static_cast<uint32_t>((a + 1 + rng() % (spheres - 1)) % spheres)});
  }
  s.addCloth(p, q, sp, caps, prevSp);
}

struct Variant {
  const char* name;
  ShapeCollisionSettings settings;
};
const Variant kVariants[] = {
    {"discrete", {}},
    {"discrete, friction, mass scaling", {.friction = 0.6f, .collisionMassScale = 4.0f}},
    {"continuous", {.continuous = true, .alphaBegin = 0.25f, .alphaEnd = 0.5f}},
    {"continuous, friction, mass scaling",
     {.continuous = true,
      .friction = 0.3f,
      .collisionMassScale = 1.5f,
      .alphaBegin = 0.5f,
      .alphaEnd = 1.0f}},
};

void expectClose(const std::vector<Float4>& got, const std::vector<Float4>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const float g[4] = {got[i].x, got[i].y, got[i].z, got[i].w},
                w[4] = {want[i].x, want[i].y, want[i].z, want[i].w};
    for (int k = 0; k < 4; ++k) {
      const float tol = kShapeCollisionTolerance * (1.0f + std::abs(w[k]));
      if (!(std::abs(g[k] - w[k]) <= tol) && reported++ < 5) {
        ADD_FAILURE() << what << "[" << i << "]."
                      << "xyzw"[k] << ": got " << g[k] << ", reference " << w[k];
      }
    }
  }
}

// Runs `scene` on the backend under test and on the CPU scalar reference and compares; returns the
// number of particles the reference moved.
size_t expectConforms(Backend backend, Context* ctx, const Scene& scene) {
  Scene got = scene, ref = scene;
  ShapeCollisionDebug gotDebug, refDebug;
  const Status g = collideShapes(backend, ctx, got.input(), &gotDebug);
  EXPECT_TRUE(g.ok()) << g.message();
  const Status r = collideShapesCpu(ref.input(), Backend::kCpuScalar, &refDebug);
  EXPECT_TRUE(r.ok()) << r.message();
  if (!g.ok() || !r.ok()) return 0;
  EXPECT_EQ(gotDebug.maskWords, refDebug.maskWords);
  EXPECT_EQ(gotDebug.masks.size(), refDebug.masks.size());
  size_t diffs = 0, firstDiff = 0;
  for (size_t i = 0; i < std::min(gotDebug.masks.size(), refDebug.masks.size()); ++i) {
    if (gotDebug.masks[i] != refDebug.masks[i] && diffs++ == 0) firstDiff = i;
  }
  EXPECT_EQ(diffs, 0u) << "mask words differ from the reference, first at " << firstDiff;
  expectClose(got.particles, ref.particles, "particles");
  expectClose(got.prev, ref.prev, "prevParticles");
  if (backend != Backend::kVulkan) {
    // The threaded CPU backend: the same particles, masks and convex bits as this backend's single
    // thread, bit for bit, on every test executor.
    for (const TestExecutor& e : testExecutors()) {
      Scene threaded = scene;
      ShapeCollisionDebug threadedDebug;
      const Status t = collideShapesCpu(threaded.input(), backend, *e.executor, &threadedDebug);
      EXPECT_TRUE(t.ok()) << e.name << ": " << t.message();
      // Bitwise (memcmp is not called on the empty arrays of a 0-particle scene: null data()).
      auto sameBits = [](const std::vector<Float4>& a, const std::vector<Float4>& b) {
        return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(Float4)) == 0);
      };
      EXPECT_TRUE(sameBits(threaded.particles, got.particles)) << e.name;
      EXPECT_TRUE(sameBits(threaded.prev, got.prev)) << e.name;
      EXPECT_EQ(threadedDebug.masks, gotDebug.masks) << e.name;
      EXPECT_EQ(threadedDebug.maskWords, gotDebug.maskWords) << e.name;
      EXPECT_EQ(threadedDebug.convexBits, gotDebug.convexBits) << e.name;
    }
  }
  size_t moved = 0;
  for (size_t i = 0; i < scene.particles.size(); ++i)
    moved += !bitwiseEqual(scene.particles[i], ref.particles[i]);
  return moved;
}

TEST_P(ShapeConformance, OneClothOfEachCount) {
  for (uint32_t n : {0u, 1u, 63u, 64u, 65u, 1000u}) {
    std::mt19937 rng(40 + n);
    Scene s;
    addRandomCloth(s, rng, {0, 0, 0}, n, 40, 30);  // 70 shapes: 3 mask words
    for (const Variant& v : kVariants) {
      SCOPED_TRACE(std::to_string(n) + " particles, " + v.name);
      s.settings = v.settings;
      const size_t moved = expectConforms(backend(), ctx(), s);
      if (n == 1000) {
        EXPECT_GT(moved, 100u);
      }
    }
  }
}

TEST_P(ShapeConformance, ManyClothsOfDifferentSizesAndShapeCounts) {
  struct C {
    uint32_t particles, spheres, capsules;
  };
  const C cloths[] = {{5, 3, 1},     {0, 8, 4},  {1, 1, 0},    {4096, 33, 0}, {63, 0, 0},      {0, 0, 0},
                      {2049, 31, 1}, {65, 2, 1}, {700, 64, 0}, {7, 20, 30},   {1000, 100, 60}, {0, 40, 40}};
  std::mt19937 rng(41);
  Scene s;
  for (size_t c = 0; c < std::size(cloths); ++c) {
    // Cloths side by side (each one's shapes near its own particles), with an unused particle between.
    addRandomCloth(s, rng, {6.0 * static_cast<double>(c), 0, 0}, cloths[c].particles, cloths[c].spheres,
                   cloths[c].capsules);
    s.particles.push_back({1e3f, 1e3f, 1e3f, 1.0f});
    s.prev.push_back({1e3f, 1e3f, 1e3f, 1.0f});
  }
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(v.name);
    s.settings = v.settings;
    EXPECT_GT(expectConforms(backend(), ctx(), s), 500u);
  }
}

TEST_P(ShapeConformance, HundredsOfShapesInOneCloth) {
  std::mt19937 rng(42);
  Scene s;
  addRandomCloth(s, rng, {1, -2, 3}, 3000, 250, 180);  // 14 mask words
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(v.name);
    s.settings = v.settings;
    EXPECT_GT(expectConforms(backend(), ctx(), s), 1000u);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ShapeConformance, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
