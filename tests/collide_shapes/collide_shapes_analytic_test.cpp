// Sphere and capsule collision against closed-form answers (shapes_test_support.h), one body per
// backend: a particle inside a sphere lands on its surface along the radial direction, inside a
// capsule's cylinder along the normal, inside a tapered capsule on or outside the surface next to
// the nearest surface point; particles outside and particles of zero inverse mass never move.
// Each cloth has one shape, so no contact is averaged with another.
#include <gtest/gtest.h>

#include "collide_shapes/shapes_test_support.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using namespace shapes;
using ShapeAnalytic = BackendTest;

// A point uniformly inside the ball (c, r), at least `minFraction` r from the centre.
V3 pointInBall(V3 c, double r, double minFraction, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double rho = r * (minFraction + (0.999 - minFraction) * std::cbrt(u(rng)));
  return c + randomUnit(rng) * rho;
}

void expectNear(const Float4& got, V3 want, double tol, const std::string& what) {
  const double err = length(xyz(got) - want);
  EXPECT_LE(err, tol) << what << ": got " << str(got) << ", want (" << want.x << ", " << want.y << ", "
                      << want.z << "), error " << err;
}

TEST_P(ShapeAnalytic, ParticleInsideASphereEndsOnTheSurfaceAlongTheRadius) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Scene s;
  std::vector<std::vector<V3>> want;
  for (int c = 0; c < 6; ++c) {
    const V3 centre{u(rng) * 10, u(rng) * 10, u(rng) * 10};
    const double r = static_cast<float>(std::pow(10.0, c / 2.0 - 1));  // 0.1 .. 31.6, a float
    std::vector<Float4> p;
    std::vector<V3> w;
    for (int i = 0; i < 200 + 37 * c; ++i) {
      const V3 q = pointInBall(centre, r, 0.01, rng);
      p.push_back(toFloat4(q, 1.0f + static_cast<float>(i % 3)));
      const V3 f = xyz(p.back());  // the float input, exactly
      w.push_back(centre + (f - centre) * (r / length(f - centre)));
    }
    s.addCloth(p, {}, {toFloat4(centre, static_cast<float>(r))});
    want.push_back(w);
  }
  const Scene before = s;
  collide(backend(), ctx(), s);
  for (size_t c = 0; c < s.cloths.size(); ++c) {
    const double r = static_cast<double>(s.spheres[c][0].w), tol = 4e-6 * (r + length(xyz(s.spheres[c][0])));
    for (uint32_t i = 0; i < s.cloths[c].count; ++i) {
      const uint32_t k = s.cloths[c].first + i;
      expectNear(s.particles[k], want[c][i], tol,
                 "cloth " + std::to_string(c) + " particle " + std::to_string(i));
      EXPECT_EQ(s.particles[k].w, before.particles[k].w);    // no mass scaling
      EXPECT_TRUE(bitwiseEqual(s.prev[k], before.prev[k]));  // no friction
    }
  }
}

TEST_P(ShapeAnalytic, ParticleInsideACapsuleCylinderEndsOnTheSurfaceAlongTheNormal) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Scene s;
  std::vector<std::vector<V3>> want;
  for (int c = 0; c < 5; ++c) {
    const V3 c0{u(rng) * 4 - 2, u(rng) * 4 - 2, u(rng) * 4 - 2};
    const V3 axis = randomUnit(rng);
    const double len = 0.5 + 3 * u(rng);
    const double r = static_cast<float>(0.05 + 0.5 * u(rng));
    const Float4 s0 = toFloat4(c0, static_cast<float>(r)),
                 s1 = toFloat4(c0 + axis * len, static_cast<float>(r));
    // The axis as the engine sees it (float centres).
    const V3 f0 = xyz(s0), f1 = xyz(s1);
    const V3 a = normalize(f1 - f0);
    const double flen = length(f1 - f0);
    std::vector<Float4> p;
    std::vector<V3> w;
    for (int i = 0; i < 300; ++i) {
      const double t = flen * (0.02 + 0.96 * u(rng));
      const double rho = r * (0.02 + 0.97 * std::sqrt(u(rng)));
      const V3 n = randomPerpendicular(a, rng);
      p.push_back(toFloat4(f0 + a * t + n * rho, 1.0f));
      const V3 d = xyz(p.back()) - f0;
      const V3 radial = d - a * dot(d, a);
      w.push_back(f0 + a * dot(d, a) + radial * (r / length(radial)));
    }
    // Sphere order, and spheres not used by the capsule, must not matter.
    if (c % 2 == 0) {
      s.addCloth(p, {}, {s0, s1}, {{0, 1}});
    } else {
      s.addCloth(p, {}, {toFloat4({100, 100, 100}, 1.0f), s1, s0}, {{2, 1}});
    }
    want.push_back(w);
  }
  collide(backend(), ctx(), s);
  for (size_t c = 0; c < s.cloths.size(); ++c) {
    const double tol = 1e-5 * (1.0 + length(xyz(s.spheres[c][0])) + 4.0);
    for (uint32_t i = 0; i < s.cloths[c].count; ++i) {
      expectNear(s.particles[s.cloths[c].first + i], want[c][i], tol,
                 "cloth " + std::to_string(c) + " particle " + std::to_string(i));
    }
  }
}

TEST_P(ShapeAnalytic, ParticleInsideATaperedCapsuleEndsOnTheSurfaceNextToTheNearestPoint) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Scene s;
  std::vector<Hull> hulls;
  std::vector<std::vector<V3>> want;
  for (int c = 0; c < 8; ++c) {
    const V3 c0{u(rng) * 4 - 2, u(rng) * 4 - 2, u(rng) * 4 - 2};
    const double len = 0.3 + 2 * u(rng);
    const double r0 = 0.1 + 0.6 * u(rng);
    // Radii from strongly tapered (r1 close to r0 - len) to widening.
    const double r1 = std::max(0.02, r0 + (2 * u(rng) - 1) * 0.9 * len);
    const Float4 s0 = toFloat4(c0, static_cast<float>(r0)),
                 s1 = toFloat4(c0 + randomUnit(rng) * len, static_cast<float>(r1));
    const Hull h{xyz(s0), xyz(s1), static_cast<double>(s0.w), static_cast<double>(s1.w)};
    std::vector<Float4> p;
    std::vector<V3> w;
    const double rMax = std::max(h.r0, h.r1);
    while (p.size() < 400) {
      // Rejection sampling in the capsule's box; keep points clearly inside (not on the surface).
      const V3 lo{std::min(h.c0.x, h.c1.x) - rMax, std::min(h.c0.y, h.c1.y) - rMax,
                  std::min(h.c0.z, h.c1.z) - rMax};
      const V3 hi{std::max(h.c0.x, h.c1.x) + rMax, std::max(h.c0.y, h.c1.y) + rMax,
                  std::max(h.c0.z, h.c1.z) + rMax};
      const V3 q{lo.x + (hi.x - lo.x) * u(rng), lo.y + (hi.y - lo.y) * u(rng), lo.z + (hi.z - lo.z) * u(rng)};
      const Float4 f = toFloat4(q, 1.0f);
      V3 nearest;
      const double d = h.distance(xyz(f), &nearest);
      if (d > -1e-3 * rMax) continue;
      // Points on the axis have no unique nearest surface point (the medial axis): stay off it.
      const V3 a = normalize(h.c1 - h.c0), rel = xyz(f) - h.c0;
      if (length(rel - a * dot(rel, a)) < 0.02 * rMax) continue;
      p.push_back(f);
      w.push_back(nearest);
    }
    s.addCloth(p, {}, {s0, s1}, {{0, 1}});
    hulls.push_back(h);
    want.push_back(w);
  }
  collide(backend(), ctx(), s);
  for (size_t c = 0; c < s.cloths.size(); ++c) {
    const Hull& h = hulls[c];
    const double rMax = std::max(h.r0, h.r1);
    for (uint32_t i = 0; i < s.cloths[c].count; ++i) {
      const Float4& got = s.particles[s.cloths[c].first + i];
      const std::string what = "cloth " + std::to_string(c) + " (r0 " + std::to_string(h.r0) + ", r1 " +
                               std::to_string(h.r1) + ", length " + std::to_string(length(h.c1 - h.c0)) +
                               ") particle " + std::to_string(i);
      EXPECT_GE(h.distance(xyz(got)), -1e-5 * rMax) << what << " ends inside: " << str(got);
      expectNear(got, want[c][i], 2e-5 * (1.0 + rMax + length(h.c0)), what);
    }
  }
}

TEST_P(ShapeAnalytic, ACapsuleWhoseSphereHoldsTheOtherIsTheBiggerSphere) {
  // The hull is the big sphere: a particle inside the small one (so inside both) lands on the big
  // one's surface, not between the two surfaces.
  std::mt19937 rng(16);
  const V3 big{0.3, -0.2, 0.1}, small = big + V3{0.2, 0.1, -0.05};
  const Float4 sBig = toFloat4(big, 0.6f), sSmall = toFloat4(small, 0.25f);
  std::vector<Float4> p;
  std::vector<V3> want;
  for (int i = 0; i < 500; ++i) {
    const V3 x = i % 2 == 0 ? pointInBall(small, 0.25, 0.05, rng) : pointInBall(big, 0.6, 0.05, rng);
    p.push_back(toFloat4(x, 1.0f));
    want.push_back(big + (xyz(p.back()) - big) * (0.6 / length(xyz(p.back()) - big)));
  }
  for (bool ccd : {false, true}) {
    for (bool bigFirst : {true, false}) {
      SCOPED_TRACE(std::string(ccd ? "continuous" : "discrete") +
                   (bigFirst ? ", big sphere first" : ", small sphere first"));
      Scene s;
      s.addCloth(p, p, bigFirst ? std::vector<Float4>{sBig, sSmall} : std::vector<Float4>{sSmall, sBig},
                 {{0, 1}});
      s.settings.continuous = ccd;
      collide(backend(), ctx(), s);
      int bad = 0;
      for (size_t i = 0; i < p.size(); ++i) {
        const double err = length(xyz(s.particles[i]) - want[i]);
        if (!(err <= 1e-5) && bad++ < 3)
          ADD_FAILURE() << i << ": " << str(p[i]) << " -> " << str(s.particles[i]);
      }
      EXPECT_EQ(bad, 0);
    }
  }
}

TEST_P(ShapeAnalytic, ParticlesOutsideEveryShapeAreUntouched) {
  std::mt19937 rng(14);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<Float4> spheres = {
      {0, 0, 0, 1.0f}, {1.5f, 0.2f, 0, 0.5f}, {-1, 1, 1, 0.3f}, {0.5f, -1, 0.5f, 0.7f}};
  std::vector<Capsule> caps = {{0, 1}, {2, 3}, {1, 2}};
  std::vector<Hull> shapes;
  for (const Float4& sp : spheres)
    shapes.push_back({xyz(sp), xyz(sp), static_cast<double>(sp.w), static_cast<double>(sp.w)});
  for (const Capsule& c : caps) shapes.push_back(hullOf(spheres, c));
  std::vector<Float4> p, q;
  while (p.size() < 3000) {
    const V3 x{u(rng), u(rng), u(rng)};
    double d = 1e30;
    for (const Hull& h : shapes) d = std::min(d, h.distance(x));
    if (d < 1e-3) continue;
    p.push_back(toFloat4(x, 1.0f));
    q.push_back(toFloat4(x + V3{0.01, -0.02, 0.005}, 1.0f));  // would feel friction, were it touched
  }
  for (bool ccd : {false, true}) {
    SCOPED_TRACE(ccd ? "continuous" : "discrete");
    Scene s;
    // Discrete: only the end positions matter. CCD: the paths must stay outside as well, so the
    // particles rest (prev = current).
    s.addCloth(p, ccd ? p : q, spheres, caps);
    s.settings = {.continuous = ccd, .friction = 0.5f, .collisionMassScale = 3.0f};
    const Scene before = s;
    collide(backend(), ctx(), s);
    for (size_t i = 0; i < p.size(); ++i) {
      ASSERT_TRUE(bitwiseEqual(s.particles[i], before.particles[i])) << i << ": " << str(s.particles[i]);
      ASSERT_TRUE(bitwiseEqual(s.prev[i], before.prev[i])) << i << ": " << str(s.prev[i]);
    }
  }
}

TEST_P(ShapeAnalytic, ZeroInverseMassParticlesNeverMove) {
  std::mt19937 rng(15);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::vector<Float4> spheres = {{0, 0, 0, 1.0f}, {1, 0, 0, 0.6f}, {-0.3f, 0.4f, 0, 0.8f}};
  const std::vector<Capsule> caps = {{0, 1}, {1, 2}};
  std::vector<Float4> p, q;
  for (int i = 0; i < 1000; ++i) {
    const V3 x{u(rng) * 1.5, u(rng), u(rng)};  // most of them inside some shape
    p.push_back(toFloat4(x, i % 2 == 0 ? 0.0f : 1.0f));
    q.push_back(toFloat4(x - V3{0.3, 0.1, 0.0}, p.back().w));
  }
  for (bool ccd : {false, true}) {
    SCOPED_TRACE(ccd ? "continuous" : "discrete");
    Scene s;
    s.addCloth(p, q, spheres, caps, {{-0.5f, 0, 0, 0.5f}, {1.2f, 0.1f, 0, 0.5f}, {-0.3f, 0.4f, 0.2f, 0.7f}});
    s.settings = {.continuous = ccd, .friction = 0.8f, .collisionMassScale = 5.0f};
    const Scene before = s;
    collide(backend(), ctx(), s);
    size_t moved = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i].w == 0.0f) {
        ASSERT_TRUE(bitwiseEqual(s.particles[i], before.particles[i])) << i << ": " << str(s.particles[i]);
        ASSERT_TRUE(bitwiseEqual(s.prev[i], before.prev[i])) << i << ": " << str(s.prev[i]);
      } else {
        moved += !bitwiseEqual(s.particles[i], before.particles[i]);
      }
    }
    EXPECT_GT(moved, 150u) << "the massive particles should collide (else the test proves nothing)";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ShapeAnalytic, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
