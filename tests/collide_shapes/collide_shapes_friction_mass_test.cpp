// Friction and collision mass scaling against the documented formulas (include/vkcollide/
// collide_shapes.h, shared/collide_shapes_math.h applyContacts), one body per backend. Each cloth has
// one shape, static or translating, so a colliding particle has one contact with a known shape
// velocity; the correction Δ = p' - p is read from the output.
//  - Friction only moves the previous position, along the tangential relative velocity
//    vt = v - (v.n) n, v = (p - prev) - shape displacement, n = Δ / |Δ|, by
//    min(μ |Δ| / |vt|, 1) vt: never more than the whole tangential velocity. Friction 0: prev unchanged.
//  - Mass scaling: output w = prev.w / (1 + k |Δ|^2); prev.w is the user's inverse mass, never changed;
//    a particle without contact gets w = prev.w (last iteration's scaling undone).
#include <gtest/gtest.h>

#include "collide_shapes/shapes_test_support.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using namespace shapes;
using ShapeFrictionMass = BackendTest;

struct FrictionScene {
  Scene scene;
  std::vector<V3> shapeVelocity;  // per particle: its cloth's shape displacement over the iteration
};

// Cloth 0: static sphere; 1: static capsule; 2: translating sphere; 3: translating tapered capsule.
// Particles inside (mostly) with random velocities; input w = 0.3 prev.w (as if scaled last iteration).
FrictionScene frictionScene(bool continuous) {
  std::mt19937 rng(51);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const V3 move{0.1, -0.05, 0.02};
  FrictionScene fs;
  const std::vector<Float4> sphere = {{0, 0, 0, 1.0f}};
  const std::vector<Float4> caps = {{-1, 0, 0, 0.6f}, {1, 0.2f, 0, 0.4f}};
  auto moved = [&](const std::vector<Float4>& sp) {
    std::vector<Float4> prev;
    for (const Float4& f : sp) prev.push_back(toFloat4(xyz(f) - move, f.w));
    return prev;
  };
  for (int c = 0; c < 4; ++c) {
    const bool translating = c >= 2, capsule = c % 2 == 1;
    std::vector<Float4> p, q;
    for (int i = 0; i < 400; ++i) {
      const V3 x = capsule ? V3{u(rng) * 1.3, u(rng) * 0.6, u(rng) * 0.6} : V3{u(rng), u(rng), u(rng)};
      const V3 v = V3{u(rng), u(rng), u(rng)} * (continuous ? 0.05 : 0.2);
      const float w = static_cast<float>(0.5 + std::abs(u(rng)));
      p.push_back(toFloat4(x, 0.3f * w));
      q.push_back(toFloat4(x - v, w));
      fs.shapeVelocity.push_back(translating ? move : V3{});
    }
    const auto& sp = capsule ? caps : sphere;
    fs.scene.addCloth(p, q, sp, capsule ? std::vector<Capsule>{{0, 1}} : std::vector<Capsule>{},
                      translating ? moved(sp) : std::vector<Float4>{});
  }
  fs.scene.settings.continuous = continuous;
  return fs;
}

void checkFriction(Backend backend, Context* ctx, bool continuous, float mu) {
  FrictionScene fs = frictionScene(continuous);
  Scene& s = fs.scene;
  s.settings.friction = mu;
  const Scene before = s;
  collide(backend, ctx, s);
  size_t contacts = 0, clamped = 0, bad = 0;
  for (size_t i = 0; i < s.particles.size(); ++i) {
    const V3 p = xyz(before.particles[i]), prev = xyz(before.prev[i]);
    const V3 delta = xyz(s.particles[i]) - p, dPrev = xyz(s.prev[i]) - prev;
    EXPECT_EQ(s.prev[i].w, before.prev[i].w);
    if (length(delta) == 0.0) {
      EXPECT_TRUE(bitwiseEqual(s.prev[i], before.prev[i])) << i << ": no contact, but prev moved";
      continue;
    }
    ++contacts;
    const V3 n = normalize(delta);
    const V3 v = (p - prev) - fs.shapeVelocity[i];
    const V3 vt = v - n * dot(v, n);
    const double lambda = std::min(static_cast<double>(mu) * length(delta) / length(vt), 1.0);
    clamped += lambda == 1.0;
    const V3 want = prev + vt * lambda;
    const double tol = 2e-5 * (1.0 + length(prev));
    // After: the tangential relative velocity is (1 - lambda) vt, never reversed.
    const V3 vAfter = (xyz(s.particles[i]) - xyz(s.prev[i])) - fs.shapeVelocity[i];
    const V3 vtAfter = vAfter - n * dot(vAfter, n);
    const bool ok = length(xyz(s.prev[i]) - want) <= tol && std::abs(dot(dPrev, n)) <= tol &&
                    dot(vtAfter, vt) >= -tol * length(vt) && length(vtAfter) <= length(vt) + tol;
    if (!ok && bad++ < 5) {
      ADD_FAILURE() << "particle " << i << ": prev " << str(before.prev[i]) << " -> " << str(s.prev[i])
                    << ", want (" << want.x << ", " << want.y << ", " << want.z << "); |vt| " << length(vt)
                    << " -> " << length(vtAfter) << ", normal part of the prev change " << dot(dPrev, n);
    }
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(contacts, 600u);
  if (mu > 10.0f) {
    EXPECT_GT(clamped, contacts * 9 / 10) << "a large coefficient stops the whole tangential velocity";
  } else {
    EXPECT_LT(clamped, contacts / 2) << "a small coefficient leaves some tangential velocity";
  }
}

TEST_P(ShapeFrictionMass, FrictionRemovesAtMostTheTangentialVelocity) {
  for (bool ccd : {false, true}) {
    for (float mu : {0.3f, 50.0f}) {
      SCOPED_TRACE(std::string(ccd ? "continuous" : "discrete") + ", friction " + std::to_string(mu));
      checkFriction(backend(), ctx(), ccd, mu);
    }
  }
}

TEST_P(ShapeFrictionMass, WithoutFrictionPreviousPositionsAreUnchanged) {
  for (bool ccd : {false, true}) {
    SCOPED_TRACE(ccd ? "continuous" : "discrete");
    Scene s = frictionScene(ccd).scene;
    s.settings.collisionMassScale = 2.0f;
    const Scene before = s;
    collide(backend(), ctx(), s);
    ASSERT_EQ(std::memcmp(s.prev.data(), before.prev.data(), s.prev.size() * sizeof(Float4)), 0);
    ASSERT_NE(std::memcmp(s.particles.data(), before.particles.data(), s.particles.size() * sizeof(Float4)),
              0);
  }
}

void checkMassScaling(const Scene& before, const Scene& after, float k, size_t* contacts) {
  size_t bad = 0;
  for (size_t i = 0; i < after.particles.size(); ++i) {
    const V3 delta = xyz(after.particles[i]) - xyz(before.particles[i]);
    const float userW = before.prev[i].w;
    EXPECT_EQ(after.prev[i].w, userW) << i << ": prev.w must stay the user's inverse mass";
    if (length(delta) == 0.0) {
      if (!(after.particles[i].w == userW) && bad++ < 5)
        ADD_FAILURE() << i << ": no contact, w " << after.particles[i].w;
      continue;
    }
    ++*contacts;
    const double want = static_cast<double>(userW) / (1.0 + static_cast<double>(k) * dot(delta, delta));
    if (!(std::abs(static_cast<double>(after.particles[i].w) - want) <= 2e-6 * want) && bad++ < 5) {
      ADD_FAILURE() << i << ": w " << after.particles[i].w << ", want " << want << " (|delta| "
                    << length(delta) << ")";
    }
  }
  EXPECT_EQ(bad, 0u);
}

TEST_P(ShapeFrictionMass, MassScalingFollowsTheDocumentedFormulaAndKeepsTheUsersInverseMass) {
  for (bool ccd : {false, true}) {
    SCOPED_TRACE(ccd ? "continuous" : "discrete");
    Scene s = frictionScene(ccd).scene;
    s.settings.collisionMassScale = 2.5f;
    s.settings.friction = 0.4f;
    const Scene first = s;
    collide(backend(), ctx(), s);
    size_t contacts = 0;
    checkMassScaling(first, s, 2.5f, &contacts);
    EXPECT_GT(contacts, 600u);
    // The next iteration starts again from prev.w, not from the scaled w.
    const Scene second = s;
    collide(backend(), ctx(), s);
    size_t again = 0;
    checkMassScaling(second, s, 2.5f, &again);
  }
}

TEST_P(ShapeFrictionMass, WithoutMassScalingTheInverseMassIsTheUsers) {
  Scene s = frictionScene(false).scene;
  const Scene before = s;
  collide(backend(), ctx(), s);
  for (size_t i = 0; i < s.particles.size(); ++i) ASSERT_EQ(s.particles[i].w, before.prev[i].w) << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, ShapeFrictionMass, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
