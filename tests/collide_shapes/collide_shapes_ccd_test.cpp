// Continuous collision, one body per backend. Random fast trajectories through thin spheres and
// capsules, static, moving and tapered (10k each, all in one run: one dispatch on Vulkan) must end
// on the side they came from; a sphere sweeping over resting particles pushes them along; a growing
// sphere pushes out a particle it reaches. Each case also runs without CCD to show the tunnelling
// the test would catch.
//
// Trajectories come no closer to the shape's centre (axis) than 0.7 of its radius: CCD ignores paths
// that stay in the outer 20% skin (kCcdSkinFraction; their end position is left to the discrete test).
#include <gtest/gtest.h>

#include "collide_shapes/shapes_test_support.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using namespace shapes;
using ShapeCcd = BackendTest;

constexpr int kTrajectories = 10000;
constexpr double kMaxOffset = 0.7;  // of the radius: deeper than the CCD skin
constexpr double kEndOffset = 0.6;  // through a capsule's end
constexpr double kEndDepth = 0.25;  // see onEntrySide

struct Crossing {
  V3 shapeEnd;  // the shape's centre (sphere) or a point on its axis (capsule) at the end
  V3 side;      // the direction the particle came from, relative to the shape, perpendicular to any axis
  V3 axis;      // capsules: the unit axis (the shapes do not rotate); spheres: 0
  bool throughEnd = false;  // through a capsule's end sphere, any direction: see onEntrySide
};

constexpr int kCloths = 7;
const char* const kClothNames[kCloths] = {"static sphere",          "moving sphere",  "static capsule",
                                          "static tapered capsule", "moving capsule", "capsule ends",
                                          "tapered capsule ends"};

struct CrossingScene {
  Scene scene;
  std::vector<Crossing> crossings;  // per particle
  std::vector<uint32_t> clothOf;
};

// Cloth 0: a static sphere; 1: a sphere moving 0.3; 2: a static cylinder capsule; 3: a static
// tapered capsule (radius 0.06 -> 0.03); 4: a cylinder capsule moving 0.3. Radii 0.05 otherwise;
// paths 0.06 .. 1 on each side of the closest approach (up to 40 radii per iteration).
CrossingScene crossingScene() {
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double r = 0.05;
  CrossingScene cs;
  auto length = [&] { return r * (1.2 + 18.8 * u(rng)); };
  auto offset = [&](V3 perpTo) {
    return randomPerpendicular(perpTo, rng) * (r * kMaxOffset * std::sqrt(u(rng)));
  };
  const V3 move{0.2, 0.2, -0.1};

  for (int moving = 0; moving < 2; ++moving) {
    const V3 c0{0.3, -0.2, 0.1};
    const V3 c1 = moving ? c0 + move : c0;
    std::vector<Float4> p, q;
    for (int i = 0; i < kTrajectories; ++i) {
      const V3 d = randomUnit(rng);
      const V3 b = offset(d);
      q.push_back(toFloat4(c0 + b - d * length(), 1.0f));
      p.push_back(toFloat4(c1 + b + d * length(), 1.0f));
      cs.crossings.push_back({c1, d * -1.0, {}});
      cs.clothOf.push_back(static_cast<uint32_t>(cs.scene.cloths.size()));
    }
    std::vector<Float4> prevSpheres;
    if (moving) prevSpheres = {toFloat4(c0, static_cast<float>(r))};
    cs.scene.addCloth(p, q, {toFloat4(c1, static_cast<float>(r))}, {}, prevSpheres);
  }

  for (int kind = 0; kind < 3; ++kind) {
    const bool tapered = kind == 1, moving = kind == 2;
    const Float4 s0{-0.4f, 0.1f, 0.2f, static_cast<float>(tapered ? 0.06 : r)};
    const Float4 s1{0.3f, 0.5f, -0.3f, static_cast<float>(tapered ? 0.03 : r)};
    const Hull h{xyz(s0), xyz(s1), static_cast<double>(s0.w), static_cast<double>(s1.w)};
    const V3 shift = moving ? move : V3{};
    const Hull hEnd{h.c0 + shift, h.c1 + shift, h.r0, h.r1};
    const V3 axis = normalize(h.c1 - h.c0);
    const double len = shapes::length(h.c1 - h.c0);
    const double sb = (h.r0 - h.r1) / len, cb = std::sqrt(1 - sb * sb);
    std::vector<Float4> p, q;
    while (p.size() < kTrajectories) {
      const double x = len * (0.2 + 0.6 * u(rng));
      const double radius = (h.r0 - x * sb) / cb;  // distance from the axis to the surface at x
      const V3 onAxis = h.c0 + axis * x;
      const V3 across = randomPerpendicular(axis, rng);
      const V3 d = normalize(across + axis * (0.4 * u(rng) - 0.2));  // mostly across the axis
      const V3 b = randomPerpendicular(axis, rng);
      const V3 off = normalize(b - across * dot(b, across)) * (radius * kMaxOffset * std::sqrt(u(rng)));
      const Float4 from = toFloat4(onAxis + off - d * length(), 1.0f);
      const Float4 to = toFloat4(onAxis + shift + off + d * length(), 1.0f);
      if (h.distance(xyz(from)) < 0.01 * r || hEnd.distance(xyz(to)) < 0.01 * r) continue;
      q.push_back(from);
      p.push_back(to);
      const V3 dPerp = d - axis * dot(d, axis);
      cs.crossings.push_back({onAxis + shift, dPerp * -1.0, axis});
      cs.clothOf.push_back(static_cast<uint32_t>(cs.scene.cloths.size()));
    }
    std::vector<Float4> prevSpheres;
    if (moving) prevSpheres = {s0, s1};
    cs.scene.addCloth(p, q, {toFloat4(h.c0 + shift, s0.w), toFloat4(h.c1 + shift, s1.w)}, {{0, 1}},
                      prevSpheres);
  }
  // Through the end spheres of a capsule in any direction, from outside that end's cap (a point
  // nearer to that sphere's cap than to the rest of the surface).
  for (int tapered = 0; tapered < 2; ++tapered) {
    const Float4 s0{-0.4f, 0.1f, 0.2f, static_cast<float>(tapered ? 0.08 : r)};
    const Float4 s1{0.3f, 0.5f, -0.3f, static_cast<float>(r)};
    const Hull h{xyz(s0), xyz(s1), static_cast<double>(s0.w), static_cast<double>(s1.w)};
    std::vector<Float4> p, q;
    while (p.size() < kTrajectories) {
      const bool end0 = u(rng) < 0.5;
      const V3 c = end0 ? h.c0 : h.c1;
      const double radius = end0 ? h.r0 : h.r1;
      const V3 d = randomUnit(rng);
      const V3 off = randomPerpendicular(d, rng) * (radius * kEndOffset * std::sqrt(u(rng)));
      const Float4 from = toFloat4(c + off - d * (radius * (1.2 + 18.8 * u(rng))), 1.0f);
      const Float4 to = toFloat4(c + off + d * (radius * (1.2 + 18.8 * u(rng))), 1.0f);
      V3 nearest;
      if (h.distance(xyz(from), &nearest) < 0.01 * r || h.distance(xyz(to)) < 0.01 * r) continue;
      if (Hull::sphere(c, radius, nearest, nullptr) > 1e-9) continue;  // not from this end's cap
      q.push_back(from);
      p.push_back(to);
      cs.crossings.push_back({{}, {}, {}, true});
      cs.clothOf.push_back(static_cast<uint32_t>(cs.scene.cloths.size()));
    }
    cs.scene.addCloth(p, q, {s0, s1}, {{0, 1}});
  }
  return cs;
}

// The particle's position relative to the shape at the end, without its component along the axis
// (capsules), projected on the side it came from: > 0 on that side.
// Through an end: the straight segment from the start to the end position must not reach deeper
// into the capsule than kEndDepth radii (> 0 when it does not).
double onEntrySide(const CrossingScene& cs, size_t i, const Float4& f) {
  const Crossing& c = cs.crossings[i];
  if (c.throughEnd) {
    const Scene& s = cs.scene;
    const uint32_t cloth = cs.clothOf[i];
    const Hull h = hullOf(s.spheres[cloth], s.capsules[cloth][0]);
    const V3 a = xyz(s.prev[i]), b = xyz(f);
    double worst = 1.0;
    for (int k = 0; k <= 200; ++k)
      worst = std::min(worst, h.distance(a + (b - a) * (k / 200.0)) / std::min(h.r0, h.r1));
    return worst + kEndDepth;
  }
  V3 rel = xyz(f) - c.shapeEnd;
  rel = rel - c.axis * dot(rel, c.axis);
  return dot(rel, normalize(c.side));
}

double endDistance(const Scene& s, uint32_t cloth, const Float4& f) {
  const auto& sp = s.spheres[cloth];
  if (!s.capsules[cloth].empty()) return hullOf(sp, s.capsules[cloth][0]).distance(xyz(f));
  return sphereDistance(sp[0], xyz(f));
}

TEST_P(ShapeCcd, FastTrajectoriesThroughThinShapesEndOnTheSideTheyCameFrom) {
  CrossingScene cs = crossingScene();
  cs.scene.settings.continuous = true;
  Scene& s = cs.scene;
  collide(backend(), ctx(), s);
  int wrongSide[kCloths] = {}, inside[kCloths] = {};
  for (size_t i = 0; i < s.particles.size(); ++i) {
    const uint32_t c = cs.clothOf[i];
    const Float4& f = s.particles[i];
    const bool bad = !(onEntrySide(cs, i, f) > 0.0);
    const bool in = !(endDistance(s, c, f) >= -1e-5 * 0.06);
    if ((bad || in) && wrongSide[c] + inside[c] < 3) {
      ADD_FAILURE() << kClothNames[c] << " particle " << i << ": from " << str(s.prev[i]) << " ends at "
                    << str(f) << " (entry side " << onEntrySide(cs, i, f) << ", distance "
                    << endDistance(s, c, f) << ")";
    }
    wrongSide[c] += bad;
    inside[c] += in;
  }
  for (int c = 0; c < kCloths; ++c) {
    EXPECT_EQ(wrongSide[c], 0) << kClothNames[c] << ": tunnelled of " << kTrajectories;
    EXPECT_EQ(inside[c], 0) << kClothNames[c] << ": left inside of " << kTrajectories;
  }
}

TEST_P(ShapeCcd, WithoutCcdTheSameTrajectoriesTunnel) {
  CrossingScene cs = crossingScene();
  Scene& s = cs.scene;
  const Scene before = s;
  collide(backend(), ctx(), s);
  int tunnelled[kCloths] = {};
  for (size_t i = 0; i < s.particles.size(); ++i) {
    tunnelled[cs.clothOf[i]] +=
        bitwiseEqual(s.particles[i], before.particles[i]) && onEntrySide(cs, i, s.particles[i]) < 0;
  }
  for (int c = 0; c < kCloths; ++c) EXPECT_EQ(tunnelled[c], kTrajectories) << kClothNames[c];
}

// Particles at rest near the x axis; a sphere of radius 0.2 moves from x = -1 to x = 1 (the whole
// move within this iteration: alpha 0.5 .. 1 of a frame that starts at x = -3).
Scene sweepScene() {
  std::mt19937 rng(22);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Float4> p;
  for (int i = 0; i < 500; ++i) {
    const double x = 0.6 * u(rng), rho = 0.12 * std::abs(u(rng)), phi = 3.14159 * u(rng);
    p.push_back(toFloat4({x, rho * std::cos(phi), rho * std::sin(phi)}, 1.0f));
  }
  Scene s;
  s.addCloth(p, p, {{1.0f, 0, 0, 0.2f}}, {}, {{-3.0f, 0, 0, 0.2f}});
  s.settings.alphaBegin = 0.5f;
  s.settings.alphaEnd = 1.0f;
  return s;
}

TEST_P(ShapeCcd, ASphereSweepingOverRestingParticlesPushesThemAlong) {
  Scene s = sweepScene();
  s.settings.continuous = true;
  collide(backend(), ctx(), s);
  for (size_t i = 0; i < s.particles.size(); ++i) {
    const Float4& f = s.particles[i];
    EXPECT_GE(sphereDistance(s.spheres[0][0], xyz(f)), -1e-5 * 0.2) << i << ": " << str(f);
    EXPECT_GT(f.x, 1.0f) << i << ": from " << str(s.prev[i]) << " ends behind the sphere at " << str(f);
  }
}

TEST_P(ShapeCcd, WithoutCcdASweepingSphereLeavesRestingParticlesBehind) {
  Scene s = sweepScene();
  const Scene before = s;
  collide(backend(), ctx(), s);
  for (size_t i = 0; i < s.particles.size(); ++i) {
    ASSERT_TRUE(bitwiseEqual(s.particles[i], before.particles[i])) << i;
    ASSERT_LT(s.particles[i].x, 1.0f);
  }
}

TEST_P(ShapeCcd, AGrowingSpherePushesOutAParticleThatWasOutside) {
  // Centre fixed, radius 0.2 -> 0.8; resting particles at distance 0.3 .. 0.7 in every direction.
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> u(0.3, 0.7);
  const V3 c{0.1, 0.2, -0.3};
  std::vector<Float4> p;
  for (int i = 0; i < 300; ++i) p.push_back(toFloat4(c + randomUnit(rng) * u(rng), 1.0f));
  for (bool ccd : {true, false}) {
    SCOPED_TRACE(ccd ? "continuous" : "discrete");
    Scene s;
    s.addCloth(p, p, {toFloat4(c, 0.8f)}, {}, {toFloat4(c, 0.2f)});
    s.settings.continuous = ccd;
    collide(backend(), ctx(), s);
    for (size_t i = 0; i < p.size(); ++i) {
      const V3 f = xyz(s.particles[i]);
      const V3 want = c + normalize(xyz(p[i]) - c) * 0.8;
      EXPECT_LE(shapes::length(f - want), 1e-5) << i << ": " << str(s.particles[i]);
    }
  }
}

// A sphere that moves (x: 0 -> 1.4) and grows (radius 0.2 -> 1) sweeps over resting particles in
// front of it (x 0.3 .. 0.6): they must end ahead of it, not pushed out of its back. Without CCD they
// end behind it (left behind, or pushed out of the back).
Scene growingSweepScene() {
  std::mt19937 rng(24);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Float4> p;
  for (int i = 0; i < 300; ++i) {
    const double rho = 0.1 * u(rng), phi = 6.28318 * u(rng);
    p.push_back(toFloat4({0.3 + 0.3 * u(rng), rho * std::cos(phi), rho * std::sin(phi)}, 1.0f));
  }
  Scene s;
  s.addCloth(p, p, {{1.4f, 0, 0, 1.0f}}, {}, {{0, 0, 0, 0.2f}});
  return s;
}

TEST_P(ShapeCcd, AGrowingSphereSweepingOverParticlesPushesThemAhead) {
  Scene s = growingSweepScene();
  s.settings.continuous = true;
  collide(backend(), ctx(), s);
  int behind = 0;
  for (size_t i = 0; i < s.particles.size(); ++i) {
    const Float4& f = s.particles[i];
    EXPECT_GE(sphereDistance(s.spheres[0][0], xyz(f)), -1e-5) << i << ": " << str(f);
    if (!(f.x > 1.4f) && behind++ < 3)
      ADD_FAILURE() << i << ": from " << str(s.prev[i]) << " ends behind at " << str(f);
  }
  EXPECT_EQ(behind, 0);
}

TEST_P(ShapeCcd, WithoutCcdAGrowingSweepingSphereLeavesParticlesBehind) {
  Scene s = growingSweepScene();
  collide(backend(), ctx(), s);
  for (size_t i = 0; i < s.particles.size(); ++i) EXPECT_LT(s.particles[i].x, 1.4f) << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, ShapeCcd, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
