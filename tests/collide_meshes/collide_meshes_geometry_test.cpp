// Particle vs triangle geometry and response (shaders/shared/collide_meshes_math.h compiled as C++,
// the CPU scalar twin of the mesh stage's kernel): closest-point regions, the proximity push, the
// seed's segment-triangle test, and the bounce loop's response on a two-triangle floor and in a
// narrow V-shaped crack.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "collide_meshes/mesh_test_support.h"
#include "support/mesh_reference.h"

namespace vkc::test {
namespace {

using namespace meshes;
using gpu::MeshHit;
using gpu::MeshMaterial;
using gpu::TriClosest;

bool sameBits(vec3 x, vec3 y) { return std::memcmp(&x, &y, sizeof(vec3)) == 0; }

const vec3 kA(0, 0, 0), kB(1, 0, 0), kC(0, 1, 0);

TEST(MeshGeometry, ClosestPointRegions) {
  struct Case {
    vec3 p;
    uint32_t region;
    vec3 point;
  };
  const Case cases[] = {
      {{0.25f, 0.25f, 1.0f}, gpu::kTriRegionFace, {0.25f, 0.25f, 0.0f}},
      {{-1.0f, -1.0f, 0.5f}, gpu::kTriRegionA, kA},
      {{2.0f, -0.5f, 0.0f}, gpu::kTriRegionB, kB},
      {{-0.5f, 2.0f, -3.0f}, gpu::kTriRegionC, kC},
      {{0.5f, -1.0f, 0.0f}, gpu::kTriRegionAB, {0.5f, 0.0f, 0.0f}},
      {{1.0f, 1.0f, 0.25f}, gpu::kTriRegionBC, {0.5f, 0.5f, 0.0f}},
      {{-1.0f, 0.5f, 0.0f}, gpu::kTriRegionCA, {0.0f, 0.5f, 0.0f}},
  };
  for (const Case& c : cases) {
    const TriClosest r = gpu::triClosestPoint(c.p, kA, kB, kC);
    EXPECT_EQ(r.region, c.region) << c.p.x << " " << c.p.y << " " << c.p.z;
    EXPECT_NEAR(glm::length(r.point - c.point), 0.0f, 1e-6f);
    const vec3 fromBary = kA * r.bary.x + kB * r.bary.y + kC * r.bary.z;
    EXPECT_NEAR(glm::length(fromBary - r.point), 0.0f, 1e-6f);
    EXPECT_NEAR(r.dist2, glm::dot(c.p - c.point, c.p - c.point), 1e-5f);
  }
}

TEST(MeshGeometry, ClosestPointMatchesDoubleReferenceIncludingDegenerate) {
  std::mt19937 rng(14);
  int degenerate = 0;
  double worst = 0;
  for (int i = 0; i < 20000; ++i) {
    vec3 a = randomVec(rng, -1, 1), b = randomVec(rng, -1, 1), c = randomVec(rng, -1, 1);
    switch (i % 5) {
      case 1: c = a + (b - a) * 0.37f; break;                     // collinear (zero area)
      case 2: c = b; break;                                        // duplicate vertex
      case 3: b = a; c = a; break;                                 // a point
      case 4: c = a + (b - a) * 0.5f + randomVec(rng, -1e-4f, 1e-4f); break;  // sliver
      default: break;
    }
    if (i % 5 != 0) ++degenerate;
    const vec3 p = randomVec(rng, -2, 2);
    const TriClosest r = gpu::triClosestPoint(p, a, b, c);
    ASSERT_TRUE(std::isfinite(r.dist2) && std::isfinite(r.point.x) && std::isfinite(r.bary.x)) << i;
    const double ref = triangleDistance(d3(p), d3(a), d3(b), d3(c));
    const double got = std::sqrt(double(r.dist2));
    // Slivers use the edges (kTriDegenerateSin2): within half the sliver's height of the face answer.
    const double allowed = 1e-5 + (i % 5 == 4 ? 2e-4 : 0.0);
    worst = std::max(worst, std::abs(got - ref));
    EXPECT_NEAR(got, ref, allowed) << i;
    // The reported point is on the triangle and at the reported distance.
    const vec3 fromBary = a * r.bary.x + b * r.bary.y + c * r.bary.z;
    EXPECT_NEAR(glm::length(fromBary - r.point), 0.0f, 1e-5f) << i;
  }
  std::printf("closest point: %d degenerate of 20000, largest |distance - double reference| %.3g\n", degenerate,
              worst);
}

TEST(MeshGeometry, ProximityPushTwoSidedOneSidedAndUntouched) {
  const float r = 0.1f;
  vec3 pushed, normal;
  // Above the face, within thickness: pushed to thickness along +z.
  ASSERT_TRUE(gpu::triProximityPush(kA, kB, kC, {0.2f, 0.2f, 0.5f}, {0.2f, 0.2f, 0.05f}, r, false, pushed, normal));
  EXPECT_NEAR(pushed.z, r, 1e-7f);
  EXPECT_EQ(normal, vec3(0, 0, 1));
  // Came from above, crossed to just below: back above (two-sided, side of prev).
  ASSERT_TRUE(gpu::triProximityPush(kA, kB, kC, {0.2f, 0.2f, 0.5f}, {0.2f, 0.2f, -0.03f}, r, false, pushed, normal));
  EXPECT_NEAR(pushed.z, r, 1e-7f);
  EXPECT_NEAR(pushed.x, 0.2f, 1e-7f);
  // Came from below: pushed below.
  ASSERT_TRUE(gpu::triProximityPush(kA, kB, kC, {0.2f, 0.2f, -0.5f}, {0.2f, 0.2f, 0.03f}, r, false, pushed, normal));
  EXPECT_NEAR(pushed.z, -r, 1e-7f);
  // prev exactly on the plane: the side of the current position.
  ASSERT_TRUE(gpu::triProximityPush(kA, kB, kC, {0.3f, 0.3f, 0.0f}, {0.2f, 0.2f, -0.03f}, r, false, pushed, normal));
  EXPECT_NEAR(pushed.z, -r, 1e-7f);
  // Both on the plane: the front.
  ASSERT_TRUE(gpu::triProximityPush(kA, kB, kC, {0.3f, 0.3f, 0.0f}, {0.2f, 0.2f, 0.0f}, r, false, pushed, normal));
  EXPECT_NEAR(pushed.z, r, 1e-7f);
  // One-sided: always to the front face ((b - a) x (c - a) = +z), even coming from below.
  ASSERT_TRUE(gpu::triProximityPush(kA, kB, kC, {0.2f, 0.2f, -0.5f}, {0.2f, 0.2f, -0.03f}, r, true, pushed, normal));
  EXPECT_NEAR(pushed.z, r, 1e-7f);
  // Edge region: along the direction from the closest point, to the side of prev (mirrored here).
  ASSERT_TRUE(gpu::triProximityPush(kA, kB, kC, {0.5f, -0.05f, 0.5f}, {0.5f, -0.05f, -0.05f}, r, false, pushed,
                                    normal));
  EXPECT_NEAR(glm::length(pushed - vec3(0.5f, 0.0f, 0.0f)), r, 1e-6f);
  EXPECT_GT(pushed.z, 0.0f);
  // Outside thickness: untouched, bitwise.
  const vec3 far(0.2f, 0.2f, 0.1f);
  EXPECT_FALSE(gpu::triProximityPush(kA, kB, kC, far, far, r, false, pushed, normal));
  EXPECT_TRUE(sameBits(pushed, far));
  // Degenerate triangles: finite, at thickness from the closest point.
  const vec3 p(0.5f, 0.0f, 0.0f);
  ASSERT_TRUE(gpu::triProximityPush(kA, kB, vec3(2, 0, 0), p, p, r, false, pushed, normal));
  EXPECT_NEAR(glm::length(pushed - p), r, 1e-6f);
  ASSERT_TRUE(gpu::triProximityPush(kA, kA, kA, kA, kA, r, true, pushed, normal));
  EXPECT_NEAR(glm::length(pushed), r, 1e-6f);
}

TEST(MeshGeometry, SegmentTriangleSeedTest) {
  float t;
  vec3 bary;
  ASSERT_TRUE(gpu::segmentTriangle({0.2f, 0.3f, 1.0f}, {0.2f, 0.3f, -3.0f}, kA, kB, kC, t, bary));
  EXPECT_NEAR(t, 0.25f, 1e-7f);
  EXPECT_NEAR(bary.y, 0.2f, 1e-6f);
  EXPECT_NEAR(bary.z, 0.3f, 1e-6f);
  EXPECT_FALSE(gpu::segmentTriangle({0.2f, 0.3f, 1.0f}, {0.2f, 0.3f, 0.5f}, kA, kB, kC, t, bary));  // one side
  EXPECT_FALSE(gpu::segmentTriangle({0.9f, 0.9f, 1.0f}, {0.9f, 0.9f, -1.0f}, kA, kB, kC, t, bary));  // outside
  EXPECT_FALSE(gpu::segmentTriangle({0.1f, 0.1f, 0.0f}, {0.2f, 0.1f, 0.0f}, kA, kB, kC, t, bary));  // in plane
  EXPECT_FALSE(gpu::segmentTriangle({0.5f, 0, 1}, {0.5f, 0, -1}, kA, kB, vec3(2, 0, 0), t, bary));   // no plane
}

// A 4 x 4 floor at y = 0 made of two triangles.
struct Floor {
  std::vector<vec3> v{{-2, 0, -2}, {2, 0, -2}, {2, 0, 2}, {-2, 0, 2}};
  std::vector<uint32_t> ix{0, 1, 2, 0, 2, 3};
  MeshRef ref() const { return {v, v, ix}; }
};

// The bounce loop of one particle against a static mesh (brute force over its triangles).
bool bounce(const MeshRef& mesh, vec3 prev, vec3 cur, MeshMaterial m, uint32_t maxBounces, vec3& newPrev,
            vec3& newCur) {
  return gpu::meshBounceLoop(
      prev, cur, m, maxBounces,
      [&](vec3 from, float tStart, vec3 to, uint32_t flags, MeshHit& hit) {
        return earliestHitStatic(mesh, tStart, from, to, m.thickness, flags, hit) != UINT32_MAX;
      },
      newPrev, newCur);
}

MeshMaterial material(float eps, float mu, float muStatic, float thickness) {
  MeshMaterial m{};
  m.restitution = eps;
  m.friction = mu;
  m.staticFriction = muStatic;
  m.thickness = thickness;
  return m;
}

TEST(MeshResponse, FallingOntoFloorInelasticFrictionlessKeepsTangentialVelocity) {
  const Floor floor;
  const vec3 prev(0.0f, 0.5f, 0.0f), cur(0.3f, -0.5f, 0.1f);
  vec3 np, nc;
  ASSERT_TRUE(bounce(floor.ref(), prev, cur, material(0, 0, 0, 0.05f), 4, np, nc));
  // At thickness above the floor, plus twice the hit tolerance (thickness * 2^-10 each).
  EXPECT_GE(nc.y, 0.05f);
  EXPECT_NEAR(nc.y, 0.05f, 0.05f * 2.5f / 1024.0f);
  const vec3 v = nc - np;
  EXPECT_NEAR(v.x, 0.3f, 1e-6f);
  EXPECT_NEAR(v.y, 0.0f, 1e-6f);
  EXPECT_NEAR(v.z, 0.1f, 1e-6f);
  EXPECT_NEAR(nc.x, 0.3f, 1e-5f);  // it travelled the whole iteration's tangential path
}

TEST(MeshResponse, ElasticBounceMirrorsNormalVelocity) {
  const Floor floor;
  vec3 np, nc;
  ASSERT_TRUE(bounce(floor.ref(), {0.0f, 0.5f, 0.0f}, {0.3f, -0.5f, 0.1f}, material(1, 0, 0, 0.05f), 4, np, nc));
  const vec3 v = nc - np;
  EXPECT_NEAR(v.y, 1.0f, 1e-6f);
  EXPECT_NEAR(v.x, 0.3f, 1e-6f);
  EXPECT_NEAR(nc.y, 0.05f + 0.55f, 2e-4f);  // hit at t = 0.45, then up for 0.55
}

// One big triangle: a particle hitting next to the shared edge of two coplanar triangles may hit
// that edge's rounded shell first, with a normal tilted by up to about sqrt(2 tol / thickness)
// (see meshLegalPosition), which this exact friction check would count against the formula.
TEST(MeshResponse, FrictionReducesNeverReversesAndStaticFrictionSticks) {
  Floor floor;
  floor.v = {{-8, 0, -8}, {8, 0, -8}, {0, 0, 8}};
  floor.ix = {0, 1, 2};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int i = 0; i < 2000; ++i) {
    const vec3 vt(u(rng) * 2 - 1, 0.0f, u(rng) * 2 - 1);
    const float vy = -0.3f - u(rng);
    const vec3 prev(0.1f, 0.3f, -0.2f);
    const vec3 cur = prev + vec3(vt.x, vy, vt.z);
    const float mu = 2.0f * u(rng), muS = i % 3 == 0 ? 0.0f : 2.0f * u(rng);
    vec3 np, nc;
    ASSERT_TRUE(bounce(floor.ref(), prev, cur, material(0, mu, muS, 0.05f), 4, np, nc));
    const vec3 v = nc - np;
    const vec3 out(v.x, 0.0f, v.z);
    const float dvn = -vy;
    EXPECT_NEAR(v.y, 0.0f, 1e-6f) << i << " " << vt.x << " " << vy << " " << vt.z << " mu " << mu << " " << muS;
    EXPECT_LE(glm::length(out), glm::length(vt) + 1e-6f);        // reduced
    EXPECT_GE(glm::dot(out, vt), -1e-7f);                         // never reversed
    if (glm::length(vt) <= muS * dvn * 0.999f) {
      EXPECT_EQ(glm::length(out), 0.0f) << "static friction sticks";
    } else if (glm::length(vt) > muS * dvn * 1.001f) {
      const float expect = std::max(0.0f, glm::length(vt) - mu * dvn);
      EXPECT_NEAR(glm::length(out), expect, 2e-5f);
    }
  }
}

TEST(MeshResponse, ParticlesOutsideThicknessUntouchedBitwise) {
  const Floor floor;
  std::mt19937 rng(3);
  for (int i = 0; i < 1000; ++i) {
    const vec3 prev = randomVec(rng, -1.5f, 1.5f) + vec3(0, 2.0f, 0);
    const vec3 cur = prev + randomVec(rng, -0.4f, 0.4f);
    vec3 np = vec3(-7), nc = vec3(-7);
    EXPECT_FALSE(bounce(floor.ref(), prev, cur, material(0.5f, 0.5f, 0.5f, 0.05f), 4, np, nc));
    EXPECT_TRUE(sameBits(np, prev) && sameBits(nc, cur));
  }
}

TEST(MeshResponse, NarrowCrackEndsLegalWithinBounceCap) {
  // A V-shaped crack along z: two walls meeting at the origin, 3 degrees either side of +y.
  const float s = std::sin(0.0523599f), c = std::cos(0.0523599f);
  std::vector<vec3> v{{0, 0, -5}, {0, 0, 5}, {-2 * s, 2 * c, 5}, {-2 * s, 2 * c, -5}, {2 * s, 2 * c, 5}, {2 * s, 2 * c, -5}};
  std::vector<uint32_t> ix{0, 1, 2, 0, 2, 3, 0, 4, 1, 0, 5, 4};
  const MeshRef mesh{v, v, ix};
  const float thickness = 0.01f;
  std::mt19937 rng(5);
  int stopped = 0;
  for (int i = 0; i < 200; ++i) {
    const vec3 prev(0.02f * (std::uniform_real_distribution<float>(-1, 1)(rng)), 1.5f, 0.0f);
    const vec3 cur = prev + vec3(std::uniform_real_distribution<float>(-0.3f, 0.3f)(rng), -3.0f, 0.2f);
    vec3 np, nc;
    ASSERT_TRUE(bounce(mesh, prev, cur, material(0.3f, 0.2f, 0.2f, thickness), 4, np, nc));
    // Legal: no closer than thickness to any wall (the hit tolerance allows thickness * 2^-10 less on
    // the other wall), and not through either wall.
    for (size_t t = 0; t < ix.size(); t += 3) {
      const double d = triangleDistance(d3(nc), d3(v[ix[t]]), d3(v[ix[t + 1]]), d3(v[ix[t + 2]]));
      EXPECT_GE(d, double(thickness) * (1.0 - 2e-3)) << i;
    }
    EXPECT_GT(nc.y, 0.0f);
    if (std::abs(nc.x) / nc.y > s / c) ADD_FAILURE() << "outside the crack " << i;
    if (glm::length(nc - np) == 0.0f) ++stopped;
  }
  std::printf("crack: %d of 200 stopped by the bounce cap\n", stopped);
}

TEST(MeshReference, BruteForceTieRuleSmallestTimeThenSmallestIndex) {
  // Triangle 0 is far, 1 and 2 coincide nearer: the earliest is 1 (same time as 2, smaller index).
  std::vector<vec3> v{{-1, -2, -1}, {1, -2, -1}, {0, -2, 1}, {-1, -1, -1}, {1, -1, -1}, {0, -1, 1}};
  std::vector<uint32_t> ix{0, 1, 2, 3, 4, 5, 3, 4, 5};
  MeshHit hit;
  EXPECT_EQ(earliestHitStatic({v, v, ix}, 0.0f, {0, 1, 0}, {0, -3, 0}, 0.1f, 0, hit), 1u);
  EXPECT_NEAR(hit.normalTime.w, 1.9f / 4.0f, 1e-5f);
  std::vector<uint32_t> reversed{3, 4, 5, 3, 4, 5, 0, 1, 2};
  EXPECT_EQ(earliestHitStatic({v, v, reversed}, 0.0f, {0, 1, 0}, {0, -3, 0}, 0.1f, 0, hit), 0u);
  EXPECT_EQ(earliestHitStatic({v, v, ix}, 0.0f, {5, 1, 0}, {5, -3, 0}, 0.1f, 0, hit), UINT32_MAX);
}

}  // namespace
}  // namespace vkc::test
