// The SIMD twin of shape collision against the scalar twin, on every SIMD target this build has and
// this CPU runs: random scenes with many contacts (discrete and CCD, friction, mass scaling, moving
// and tapered shapes, nested capsules, multi-word masks, several cloths, moving convexes alone and
// mixed with spheres and capsules), particle counts that
// are not multiples of any lane count, and 0 and 1 particles. Masks must be bitwise equal; positions,
// previous positions and inverse masses within kShapeCollisionTolerance (1 + |value|), and exactly
// equal on particles at capsules' surfaces (CapsuleSurfacesMatchScalarExactly).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/collide_shapes.h"
#include "vkcollide/collide_shapes.h"

namespace vkc::test {
namespace {

struct SimdScene {
  std::vector<Float4> particles, prev;
  std::vector<ClothRange> cloths;
  std::vector<std::vector<Float4>> spheres, prevSpheres;
  std::vector<std::vector<Capsule>> capsules;
  std::vector<std::vector<Float4>> planes, prevPlanes;
  std::vector<std::vector<std::vector<uint32_t>>> convexLists;
  std::vector<std::vector<Convex>> convexes;
  std::vector<ClothColliders> colliders;
  ShapeCollisionSettings settings;

  // One cloth's spheres (at the frame's end and start) and capsules, no planes or convexes yet.
  void addRoundShapes(const std::vector<Float4>& sp, const std::vector<Float4>& pp, const std::vector<Capsule>& caps) {
    spheres.push_back(sp);
    prevSpheres.push_back(pp);
    capsules.push_back(caps);
    planes.emplace_back();
    prevPlanes.emplace_back();
    convexLists.emplace_back();
  }

  ShapeCollisionInput input() {
    colliders.clear();
    convexes.assign(cloths.size(), {});
    for (size_t c = 0; c < cloths.size(); ++c) {
      for (const std::vector<uint32_t>& list : convexLists[c]) convexes[c].push_back({list});
      colliders.push_back({spheres[c], prevSpheres[c], capsules[c], planes[c], prevPlanes[c], convexes[c]});
    }
    return {particles, prev, cloths, colliders, settings};
  }
};

struct SceneSpec {
  std::vector<uint32_t> particleCounts;  // per cloth
  uint32_t spheres = 8;
  uint32_t capsules = 4;
  bool continuous = false;
  float friction = 0;
  float massScale = 0;
  float alphaBegin = 0;
  float alphaEnd = 1;
  bool nested = false;  // also capsules whose one sphere holds the other (no cone)
  uint32_t convexes = 0;  // random moving convexes of 4-12 planes (plus a ground plane when > 0)
};

// Convexes tangent to balls around random points in [-2, 2]^3, each plane moving and tilting a little
// between the frame's start and end, some planes shared; and a ground plane at y = -1.5 (a convex of
// one plane). Returns the planes' lists.
void addConvexes(SimdScene& s, std::mt19937& rng, uint32_t count) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Float4> pl, prevPl;
  std::vector<std::vector<uint32_t>> lists;
  for (uint32_t k = 0; k < count; ++k) {
    const float cx = 2 * u(rng), cy = 2 * u(rng), cz = 2 * u(rng), r = 0.2f + 0.4f * std::abs(u(rng));
    std::vector<uint32_t> list;
    const uint32_t planes = 4 + static_cast<uint32_t>(rng() % 9);
    for (uint32_t j = 0; j < planes; ++j) {
      if (!pl.empty() && rng() % 10 == 0) {
        list.push_back(static_cast<uint32_t>(rng() % pl.size()));
        continue;
      }
      float nx = u(rng), ny = u(rng), nz = u(rng);
      const float len = std::sqrt(nx * nx + ny * ny + nz * nz) + 1e-3f;
      nx /= len, ny /= len, nz /= len;
      pl.push_back({nx, ny, nz, -(nx * cx + ny * cy + nz * cz + r)});
      prevPl.push_back({nx + 0.05f * u(rng), ny, nz, pl.back().w + 0.2f * u(rng)});
      list.push_back(static_cast<uint32_t>(pl.size() - 1));
    }
    lists.push_back(list);
  }
  pl.push_back({0, 2, 0, 3});  // y < -1.5, unnormalized
  prevPl.push_back({0, 1, 0, 1.4f});
  lists.push_back({static_cast<uint32_t>(pl.size() - 1)});
  s.planes.back() = pl;
  s.prevPlanes.back() = prevPl;
  s.convexLists.back() = lists;
}

// Spheres in [-2, 2]^3 (some moving and growing between the frame's start and end), capsules between
// random pairs, and particles placed around the spheres' surfaces (inside and outside), with a
// velocity large enough for CCD to matter; every 13th particle has inverse mass 0, every 7th a
// current inverse mass that is half its previous one (to be reset).
SimdScene makeScene(uint32_t seed, const SceneSpec& spec) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  SimdScene s;
  s.settings.continuous = spec.continuous;
  s.settings.friction = spec.friction;
  s.settings.collisionMassScale = spec.massScale;
  s.settings.alphaBegin = spec.alphaBegin;
  s.settings.alphaEnd = spec.alphaEnd;
  for (const uint32_t n : spec.particleCounts) {
    std::vector<Float4> sp, pp;
    for (uint32_t k = 0; k < spec.spheres; ++k) {
      sp.push_back({u(rng) * 2, u(rng) * 2, u(rng) * 2, 0.1f + 0.4f * std::abs(u(rng))});
      const bool moves = k % 3 != 0;
      pp.push_back({sp.back().x + (moves ? 0.2f * u(rng) : 0.0f), sp.back().y + (moves ? 0.2f * u(rng) : 0.0f),
                    sp.back().z, sp.back().w * (moves ? 0.8f : 1.0f)});
    }
    std::vector<Capsule> caps;
    for (uint32_t k = 0; k < spec.capsules && spec.spheres > 1; ++k) {
      const uint32_t a = static_cast<uint32_t>(rng() % spec.spheres);
      const uint32_t b = (a + 1 + static_cast<uint32_t>(rng() % (spec.spheres - 1))) % spec.spheres;
      caps.push_back({a, b});
      if (spec.nested && k % 4 == 1) {  // sphere b inside sphere a: an invalid cone at both ends
        sp[b] = {sp[a].x + 0.01f, sp[a].y, sp[a].z, sp[a].w * 0.5f};
        pp[b] = {pp[a].x + 0.01f, pp[a].y, pp[a].z, pp[a].w * 0.5f};
      }
    }
    s.cloths.push_back({static_cast<uint32_t>(s.particles.size()), n});
    for (uint32_t i = 0; i < n; ++i) {
      Float4 p;
      if (spec.spheres > 0 && i % 5 != 0) {
        const Float4& c = sp[rng() % spec.spheres];
        float dx = u(rng), dy = u(rng), dz = u(rng);
        const float len = std::sqrt(dx * dx + dy * dy + dz * dz) + 1e-3f;
        const float r = c.w * (0.6f + 0.7f * std::abs(u(rng))) / len;
        p = {c.x + dx * r, c.y + dy * r, c.z + dz * r, 1.0f};
      } else {
        p = {u(rng) * 2.5f, u(rng) * 2.5f, u(rng) * 2.5f, 1.0f};
      }
      if (i % 13 == 0) p.w = 0.0f;
      s.particles.push_back(p);
      const float speed = spec.continuous ? 0.4f : 0.05f;
      s.prev.push_back({p.x + speed * u(rng), p.y + speed * u(rng), p.z + speed * u(rng), p.w});
      // As after a mass-scaled iteration: the kernel resets particles[i].w from prevParticles[i].w.
      if (i % 7 == 3) s.particles.back().w *= 0.5f;
    }
    s.addRoundShapes(sp, pp, caps);
    if (spec.convexes > 0) addConvexes(s, rng, spec.convexes);
  }
  return s;
}

bool near(float a, float b) { return std::abs(a - b) <= kShapeCollisionTolerance * (1.0f + std::abs(b)); }

struct Counts {
  uint32_t moved = 0, frictioned = 0, scaled = 0;
  float maxDiff = 0;
};

// Runs scalar and SIMD (every target) on copies of the scene and compares them.
Counts compareSimdScalar(SimdScene scene) {
  Counts counts;
  SimdScene scalar = scene;
  ShapeCollisionDebug scalarDebug;
  const Status s = collideShapesCpu(scalar.input(), Backend::kCpuScalar, &scalarDebug);
  EXPECT_TRUE(s.ok()) << s.message();
  for (size_t i = 0; i < scene.particles.size(); ++i) {
    const Float4 &a = scene.particles[i], &b = scalar.particles[i];
    if (a.x != b.x || a.y != b.y || a.z != b.z) ++counts.moved;
    const Float4 &c = scene.prev[i], &d = scalar.prev[i];
    if (c.x != d.x || c.y != d.y || c.z != d.z) ++counts.frictioned;
    if (b.w != d.w) ++counts.scaled;
  }
  cpu::forEachSimdTarget([&](const char* target) {
    SCOPED_TRACE(target);
    SimdScene simd = scene;
    ShapeCollisionDebug simdDebug;
    const Status t = collideShapesCpu(simd.input(), Backend::kCpuSimd, &simdDebug);
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_EQ(simdDebug.masks, scalarDebug.masks);
    EXPECT_EQ(simdDebug.maskWords, scalarDebug.maskWords);
    EXPECT_EQ(simdDebug.convexBits, scalarDebug.convexBits);
    uint32_t bad = 0;
    for (size_t i = 0; i < scene.particles.size(); ++i) {
      const Float4 &p = simd.particles[i], &q = scalar.particles[i];
      const Float4 &pp = simd.prev[i], &qq = scalar.prev[i];
      const float xs[8] = {p.x, p.y, p.z, p.w, pp.x, pp.y, pp.z, pp.w};
      const float ys[8] = {q.x, q.y, q.z, q.w, qq.x, qq.y, qq.z, qq.w};
      for (int k = 0; k < 8; ++k) {
        counts.maxDiff = std::max(counts.maxDiff, std::abs(xs[k] - ys[k]));
        if (!near(xs[k], ys[k]) && bad++ < 5) {
          ADD_FAILURE() << "particle " << i << " component " << k << ": simd " << xs[k] << ", scalar " << ys[k];
        }
      }
    }
    EXPECT_EQ(bad, 0u);
  });
  return counts;
}

TEST(CollideShapesSimd, RunsEverySimdTarget) {
  std::vector<std::string> targets;
  cpu::forEachSimdTarget([&](const char* target) { targets.push_back(target); });
  ASSERT_FALSE(targets.empty());
  std::string list;
  for (const std::string& t : targets) list += " " + t;
  std::printf("[ info ] SIMD targets compared with scalar:%s\n", list.c_str());
}

TEST(CollideShapesSimd, DiscreteMatchesScalar) {
  SceneSpec spec;
  spec.particleCounts = {3001};
  const Counts c = compareSimdScalar(makeScene(1, spec));
  EXPECT_GT(c.moved, 1000u);  // the scene has contacts to compare
  EXPECT_EQ(c.frictioned, 0u);
  EXPECT_EQ(c.scaled, 0u);
  std::printf("[ info ] discrete: %u of 3001 moved, max |simd - scalar| %g\n", c.moved, static_cast<double>(c.maxDiff));
}

TEST(CollideShapesSimd, ContinuousMatchesScalar) {
  SceneSpec spec;
  spec.particleCounts = {2999};
  spec.continuous = true;
  spec.alphaBegin = 0.25f;
  spec.alphaEnd = 0.5f;
  const Counts c = compareSimdScalar(makeScene(2, spec));
  EXPECT_GT(c.moved, 1000u);
  std::printf("[ info ] continuous: %u of 2999 moved, max |simd - scalar| %g\n", c.moved, static_cast<double>(c.maxDiff));
}

TEST(CollideShapesSimd, FrictionAndMassScaleMatchScalar) {
  for (const bool continuous : {false, true}) {
    SCOPED_TRACE(continuous ? "continuous" : "discrete");
    SceneSpec spec;
    spec.particleCounts = {2053};
    spec.continuous = continuous;
    spec.friction = 0.4f;
    spec.massScale = 3.0f;
    const Counts c = compareSimdScalar(makeScene(3 + (continuous ? 1u : 0u), spec));
    EXPECT_GT(c.moved, 500u);
    EXPECT_GT(c.frictioned, 200u);  // friction changed previous positions
    EXPECT_GT(c.scaled, 500u);      // and mass scaling the inverse masses
  }
}

TEST(CollideShapesSimd, ConvexesMatchScalar) {
  // Convexes alone (no sphere grid), and with spheres and capsules; 40 convexes: 2 convex words.
  for (const uint32_t spheres : {0u, 12u}) {
    for (const bool continuous : {false, true}) {
      for (const float friction : {0.0f, 0.5f}) {
        SCOPED_TRACE(std::to_string(spheres) + " spheres, " + (continuous ? "continuous" : "discrete") +
                     (friction > 0 ? ", friction and mass scaling" : ""));
        SceneSpec spec;
        spec.particleCounts = {2531, 17};
        spec.spheres = spheres;
        spec.capsules = spheres / 2;
        spec.convexes = 40;
        spec.continuous = continuous;
        spec.friction = friction;
        spec.massScale = friction > 0 ? 2.0f : 0.0f;
        spec.alphaBegin = 0.25f;
        spec.alphaEnd = 0.75f;
        const Counts c = compareSimdScalar(makeScene(30 + spheres + (continuous ? 1u : 0u), spec));
        EXPECT_GT(c.moved, 400u);
        if (friction > 0) {
          EXPECT_GT(c.frictioned, 100u);
        }
      }
    }
  }
}

TEST(CollideShapesSimd, MultiWordMasksMatchScalar) {
  // 50 spheres + 40 capsules = 90 shapes: 3 mask words, capsules starting inside word 1.
  for (const bool continuous : {false, true}) {
    SCOPED_TRACE(continuous ? "continuous" : "discrete");
    SceneSpec spec;
    spec.particleCounts = {4001};
    spec.spheres = 50;
    spec.capsules = 40;
    spec.continuous = continuous;
    spec.friction = 0.2f;
    spec.massScale = 1.0f;
    const Counts c = compareSimdScalar(makeScene(5 + (continuous ? 1u : 0u), spec));
    EXPECT_GT(c.moved, 1000u);
  }
}

TEST(CollideShapesSimd, NestedCapsulesAndSpheresOnlyMatchScalar) {
  for (const uint32_t capsules : {0u, 12u}) {
    SCOPED_TRACE(capsules);
    SceneSpec spec;
    spec.particleCounts = {1500};
    spec.spheres = 12;
    spec.capsules = capsules;
    spec.nested = true;
    spec.continuous = true;
    spec.friction = 0.3f;
    const Counts c = compareSimdScalar(makeScene(7 + capsules, spec));
    EXPECT_GT(c.moved, 300u);
  }
}

TEST(CollideShapesSimd, ClothsWithOddCountsMatchScalar) {
  // Cloth sizes around every lane count (1, 4, 8, 16), empty cloths, and a last cloth whose shapes are
  // out of reach (no grid: only the inverse masses are reset).
  SceneSpec spec;
  spec.particleCounts = {0, 1, 3, 5, 7, 9, 15, 17, 31, 33, 0, 63, 65, 257, 100};
  spec.spheres = 20;
  spec.capsules = 15;
  spec.continuous = true;
  spec.friction = 0.3f;
  spec.massScale = 0.5f;
  SimdScene scene = makeScene(9, spec);
  for (Float4& sphere : scene.spheres.back()) sphere.x += 100.0f;
  for (Float4& sphere : scene.prevSpheres.back()) sphere.x += 100.0f;
  const Counts c = compareSimdScalar(scene);
  EXPECT_GT(c.moved, 100u);
  SimdScene out = scene;
  ASSERT_TRUE(collideShapesCpu(out.input(), Backend::kCpuSimd).ok());
  const ClothRange far = scene.cloths.back();
  for (uint32_t i = far.first; i < far.first + far.count; ++i) {
    EXPECT_EQ(out.particles[i].x, scene.particles[i].x);
    EXPECT_EQ(out.particles[i].w, scene.prev[i].w);
  }
}

// Particles on the surfaces of tapered capsules (the cone's section and both end spheres), a few
// rounding steps to a few percent inside and outside, near the origin and 1000 m away: the SIMD
// twin's cull of the lanes a capsule cannot touch (before its square roots) must keep every contact,
// so that the results are exactly the scalar twin's (== on every component: equal up to the sign of
// zeros), on every target, discrete and continuous.
TEST(CollideShapesSimd, CapsuleSurfacesMatchScalarExactly) {
  struct Taper {
    float r0, r1, halfLength;
  };
  const Taper tapers[] = {{0.15f, 0.25f, 0.6f}, {0.3f, 0.05f, 0.4f}, {0.2f, 0.2f, 0.5f}, {0.05f, 0.6f, 0.7f}};
  const float offsets[] = {-1.0f, -1e-2f, -1e-4f, -1e-6f, -1e-7f, 0.0f, 1e-7f, 1e-6f, 1e-4f, 1e-2f};
  for (const float origin : {0.0f, 1000.0f}) {
    for (const bool continuous : {false, true}) {
      SCOPED_TRACE(std::string(continuous ? "continuous" : "discrete") + ", origin " + std::to_string(origin));
      std::mt19937 rng(77);
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      SimdScene s;
      s.settings.continuous = continuous;
      std::vector<Float4> sp;
      std::vector<Capsule> caps;
      for (size_t k = 0; k < std::size(tapers); ++k) {
        const Taper& tp = tapers[k];
        // Axis direction: a random unit vector; centre spread along x.
        float ax = u(rng), ay = u(rng), az = u(rng);
        const float len = std::sqrt(ax * ax + ay * ay + az * az) + 1e-3f;
        ax /= len, ay /= len, az /= len;
        const float cx = origin + 2.0f * static_cast<float>(k), cy = origin, cz = origin;
        sp.push_back({cx - ax * tp.halfLength, cy - ay * tp.halfLength, cz - az * tp.halfLength, tp.r0});
        sp.push_back({cx + ax * tp.halfLength, cy + ay * tp.halfLength, cz + az * tp.halfLength, tp.r1});
        caps.push_back({static_cast<uint32_t>(2 * k), static_cast<uint32_t>(2 * k + 1)});
      }
      for (uint32_t i = 0; i < 4000; ++i) {
        const size_t k = i % std::size(tapers);
        const Float4 a = sp[2 * k], b = sp[2 * k + 1];
        // A point at fraction f along the axis (beyond both ends too), pushed out radially to the
        // interpolated radius, or around an end sphere; then scaled by 1 + offset.
        const float f = 0.5f + 0.75f * u(rng);
        const float mx = a.x + (b.x - a.x) * f, my = a.y + (b.y - a.y) * f, mz = a.z + (b.z - a.z) * f;
        float dx = u(rng), dy = u(rng), dz = u(rng);
        const float dl = std::sqrt(dx * dx + dy * dy + dz * dz) + 1e-3f;
        const float offset = offsets[rng() % std::size(offsets)];
        Float4 p;
        if (i % 3 == 0) {  // around an end sphere
          const Float4& c = (i / 3) % 2 == 0 ? a : b;
          const float r = c.w * (1.0f + offset) / dl;
          p = {c.x + dx * r, c.y + dy * r, c.z + dz * r, 1.0f};
        } else {
          const float ex = b.x - a.x, ey = b.y - a.y, ez = b.z - a.z;
          const float e2 = ex * ex + ey * ey + ez * ez;
          const float along = (dx * ex + dy * ey + dz * ez) / e2;  // remove the axial part of d
          dx -= along * ex, dy -= along * ey, dz -= along * ez;
          const float pl = std::sqrt(dx * dx + dy * dy + dz * dz) + 1e-12f;
          const float r = (a.w + (b.w - a.w) * std::clamp(f, 0.0f, 1.0f)) * (1.0f + offset) / pl;
          p = {mx + dx * r, my + dy * r, mz + dz * r, 1.0f};
        }
        s.particles.push_back(p);
        const float speed = continuous ? 0.05f : 0.0f;
        s.prev.push_back({p.x + speed * u(rng), p.y + speed * u(rng), p.z + speed * u(rng), 1.0f});
      }
      s.cloths.push_back({0, static_cast<uint32_t>(s.particles.size())});
      s.addRoundShapes(sp, sp, caps);

      SimdScene scalar = s;
      ASSERT_TRUE(collideShapesCpu(scalar.input(), Backend::kCpuScalar).ok());
      uint32_t moved = 0;
      for (size_t i = 0; i < s.particles.size(); ++i) moved += scalar.particles[i].x != s.particles[i].x;
      EXPECT_GT(moved, 1000u);  // many contacts, many of them at the surfaces
      cpu::forEachSimdTarget([&](const char* target) {
        SCOPED_TRACE(target);
        SimdScene simd = s;
        ASSERT_TRUE(collideShapesCpu(simd.input(), Backend::kCpuSimd).ok());
        uint32_t bad = 0;
        for (size_t i = 0; i < s.particles.size(); ++i) {
          const Float4 &p = simd.particles[i], &q = scalar.particles[i];
          const Float4 &pp = simd.prev[i], &qq = scalar.prev[i];
          const bool same = p.x == q.x && p.y == q.y && p.z == q.z && p.w == q.w && pp.x == qq.x && pp.y == qq.y &&
                            pp.z == qq.z && pp.w == qq.w;
          if (!same && bad++ < 5) ADD_FAILURE() << "particle " << i << ": simd (" << p.x << ", " << p.y << ", " << p.z
                                                << "), scalar (" << q.x << ", " << q.y << ", " << q.z << ")";
        }
        EXPECT_EQ(bad, 0u);
      });
    }
  }
}

TEST(CollideShapesSimd, ZeroAndOneParticle) {
  for (const uint32_t n : {0u, 1u}) {
    SCOPED_TRACE(n);
    SceneSpec spec;
    spec.particleCounts = {n};
    SimdScene scene = makeScene(11, spec);
    if (n == 1) {  // put the particle inside sphere 0 so that it moves
      const Float4 c = scene.spheres[0][0];
      scene.particles[0] = {c.x + 0.1f * c.w, c.y, c.z, 1.0f};
      scene.prev[0] = scene.particles[0];
    }
    const Counts c = compareSimdScalar(scene);
    EXPECT_EQ(c.moved, n);
  }
}

TEST(CollideShapesSimd, RandomScenesMatchScalar) {
  std::mt19937 rng(1234);
  for (uint32_t trial = 0; trial < 12; ++trial) {
    SCOPED_TRACE(trial);
    SceneSpec spec;
    const uint32_t cloths = 1 + static_cast<uint32_t>(rng() % 3);
    for (uint32_t c = 0; c < cloths; ++c) spec.particleCounts.push_back(static_cast<uint32_t>(rng() % 700));
    spec.spheres = static_cast<uint32_t>(rng() % 40);
    spec.capsules = spec.spheres > 1 ? static_cast<uint32_t>(rng() % 30) : 0u;
    spec.continuous = rng() % 2 == 0;
    spec.friction = rng() % 2 == 0 ? 0.0f : 0.5f;
    spec.massScale = rng() % 2 == 0 ? 0.0f : 2.0f;
    spec.nested = rng() % 2 == 0;
    spec.alphaBegin = 0.1f * static_cast<float>(rng() % 5);
    spec.alphaEnd = spec.alphaBegin + 0.1f * static_cast<float>(rng() % 6);
    compareSimdScalar(makeScene(100 + trial, spec));
  }
}

// collideShapesCpu checks particle values through the bounds keys rather than validate()'s scan
// (cpu::checkParticleValues): its errors must still be validate()'s, and nothing may change.
TEST(CollideShapesSimd, ParticleValueErrorsAreValidates) {
  const float nan = std::nanf("");
  struct Bad {
    bool prev;
    uint32_t index;
    int component;
    float value;
  };
  const Bad bads[] = {{false, 40, 0, nan}, {false, 77, 3, -1.0f}, {true, 5, 1, INFINITY}, {true, 120, 3, -0.5f},
                      {true, 130, 2, -INFINITY}};
  for (const bool continuous : {false, true}) {
    for (const Bad& bad : bads) {
      for (const Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
        SCOPED_TRACE(std::string(continuous ? "ccd " : "discrete ") + toString(backend) + " " +
                     (bad.prev ? "prev " : "particles ") + std::to_string(bad.index));
        SceneSpec spec;
        spec.particleCounts = {100, 50};
        spec.continuous = continuous;
        SimdScene scene = makeScene(21, spec);
        Float4& p = bad.prev ? scene.prev[bad.index] : scene.particles[bad.index];
        float* components[4] = {&p.x, &p.y, &p.z, &p.w};
        *components[bad.component] = bad.value;
        const SimdScene before = scene;
        const Status expected = validate(scene.input());
        ASSERT_FALSE(expected.ok());
        const Status got = collideShapesCpu(scene.input(), backend);
        ASSERT_FALSE(got.ok());
        EXPECT_EQ(got.message(), expected.message());
        EXPECT_EQ(std::memcmp(scene.particles.data(), before.particles.data(), scene.particles.size() * sizeof(Float4)), 0);
        EXPECT_EQ(std::memcmp(scene.prev.data(), before.prev.data(), scene.prev.size() * sizeof(Float4)), 0);
      }
    }
  }
}

// The quick check behind checkParticleValues on the SIMD backend, on every target: clean values
// (negative coordinates, inverse mass +0, counts that are not multiples of any lane count) are not
// suspicious; a NaN or an infinity in any component, a negative inverse mass and -0 are, wherever
// they sit (-1: the target cannot tell, and the caller folds the bounds keys instead).
TEST(CollideShapesSimd, QuickValueCheckOnEveryTarget) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> coord(-3.0f, 3.0f);
  const float bads[] = {std::nanf(""), INFINITY, -INFINITY, -std::nanf("")};
  cpu::forEachSimdTarget([&](const char* target) {
    SCOPED_TRACE(target);
    for (const uint32_t count : {0u, 1u, 3u, 4u, 5u, 16u, 37u, 64u, 67u}) {
      std::vector<Float4> values(count);
      for (Float4& v : values) v = {coord(rng), coord(rng), coord(rng), std::abs(coord(rng))};
      if (count > 2) values[2].w = 0.0f;
      const int clean = cpu::valuesSuspiciousSimd(values.data(), count);
      EXPECT_NE(clean, 1) << count;
      if (clean == -1) continue;
      for (uint32_t i = 0; i < count; ++i) {
        for (int component = 0; component < 4; ++component) {
          std::vector<Float4> bad = values;
          float* f = &bad[i].x + component;
          for (const float value : bads) {
            *f = value;
            EXPECT_EQ(cpu::valuesSuspiciousSimd(bad.data(), count), 1) << count << " " << i << " " << component;
          }
          if (component == 3) {
            for (const float value : {-1.0f, -0.0f, -1e-30f}) {
              *f = value;
              EXPECT_EQ(cpu::valuesSuspiciousSimd(bad.data(), count), 1) << count << " " << i << " w " << value;
            }
          }
        }
      }
    }
  });
}

}  // namespace
}  // namespace vkc::test
