// Continuous collision of shaders/shared/collide_meshes_math.h (CPU scalar compile of the shared
// kernel): the public vertex-face queries with exact labels (zero false negatives at thickness 0),
// random fast particles against static and deforming triangles against a fine-step double
// reference (zero false negatives at thickness > 0), and a rigid paddle rotating a quarter turn
// through resting particles (every particle hit; the chord error bound checked against the true
// rotation). False-positive counts are printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "collide_meshes/mesh_test_support.h"
#include "support/mesh_reference.h"
#include "support/test_scale.h"

namespace vkc::test {
namespace {

using namespace meshes;
using gpu::MeshHit;

TEST(MeshCcd, PublicVertexFaceQueriesNoFalseNegative) {
  const PublicCcdTally t = runPublicCcdQueries("vertex-face", [](const Query& q, bool* capped) {
    MeshHit hit;
    const bool h =
        gpu::triCcdDeforming(q.v[1], q.v[2], q.v[3], q.v[5], q.v[6], q.v[7], 0.0f, q.v[0], q.v[4], 0.0f, 0u, hit);
    *capped = (hit.flags & gpu::kMeshHitAtStepCap) != 0;
    return h;
  });
  EXPECT_EQ(t.total, 1750);
  EXPECT_EQ(t.positives, 200);
  EXPECT_EQ(t.fn, 0);
}

// --- Random fast particles ------------------------------------------------------------------
struct RandomCase {
  vec3 a0, b0, c0, a1, b1, c1, p0, p1;
  float thickness;
};

RandomCase randomCase(std::mt19937& rng, bool moving) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  RandomCase k;
  k.a0 = randomVec(rng, -1, 1);
  k.b0 = randomVec(rng, -1, 1);
  k.c0 = randomVec(rng, -1, 1);
  const float sel = u(rng);
  if (sel < 0.05f) k.c0 = k.a0 + (k.b0 - k.a0) * u(rng);  // zero area
  k.a1 = k.a0, k.b1 = k.b0, k.c1 = k.c0;
  if (moving) {
    const vec3 drift = randomVec(rng, -1, 1);
    k.a1 = k.a0 + drift + randomVec(rng, -0.5f, 0.5f);
    k.b1 = k.b0 + drift + randomVec(rng, -0.5f, 0.5f);
    k.c1 = k.c0 + drift + randomVec(rng, -0.5f, 0.5f);
  }
  k.thickness = u(rng) < 0.1f ? 0.0f : 0.2f * u(rng);
  // Aim at a point near the triangle halfway through the iteration, and overshoot: fast paths that
  // cross, graze or just miss the thickness shell.
  const float s = u(rng) * 1.6f - 0.3f, t = u(rng) * 1.6f - 0.3f;
  const vec3 mid = (k.a0 + k.a1) * 0.5f + ((k.b0 + k.b1) * 0.5f - (k.a0 + k.a1) * 0.5f) * s +
                   ((k.c0 + k.c1) * 0.5f - (k.a0 + k.a1) * 0.5f) * t;
  const vec3 aim = mid + randomVec(rng, -0.3f, 0.3f);
  k.p0 = aim + randomVec(rng, -3, 3);
  k.p1 = k.p0 + (aim - k.p0) * (1.5f + u(rng));
  return k;
}

void runRandom(bool moving, const char* name) {
  std::mt19937 rng(moving ? 1402 : 1401);
  constexpr int kCases = heavyCases(10000), kSteps = 10000;
  int dips = 0, fn = 0, fp = 0, late = 0, capped = 0;
  for (int i = 0; i < kCases; ++i) {
    const RandomCase k = randomCase(rng, moving);
    MeshHit hit;
    const bool h = gpu::triCcdDeforming(k.a0, k.b0, k.c0, k.a1, k.b1, k.c1, 0.0f, k.p0, k.p1, k.thickness, 0u, hit);
    const FineResult ref = fineSteps(kSteps, double(k.thickness), [&](double t, D3& p, D3& a, D3& b, D3& c) {
      p = lerpD(d3(k.p0), d3(k.p1), t);
      a = lerpD(d3(k.a0), d3(k.a1), t);
      b = lerpD(d3(k.b0), d3(k.b1), t);
      c = lerpD(d3(k.c0), d3(k.c1), t);
    });
    const bool dip = ref.firstDip <= 1.0;
    dips += dip;
    if (dip && !h) {
      ++fn;
      ADD_FAILURE() << name << " case " << i << ": the reference dips below thickness at t = " << ref.firstDip;
    }
    if (h && hit.flags & gpu::kMeshHitAtStepCap) ++capped;
    // A hit is never later than the first sampled dip (up to one sample).
    if (dip && h && double(hit.normalTime.w) > ref.firstDip + 1.0 / kSteps) ++late;
    // False positive: a hit although the path stays farther than thickness + the hit tolerance.
    if (h && !dip && ref.minDistance > double(k.thickness) + double(hit.point.w)) ++fp;
  }
  std::printf("%s: %d cases, %d dip below thickness (fine-step double, %d steps): false negatives %d, hits later "
              "than the dip %d, false positives (never within thickness + tol) %d, hits at the step cap %d\n",
              name, kCases, dips, kSteps, fn, late, fp, capped);
  EXPECT_EQ(fn, 0);
  EXPECT_EQ(late, 0);
  EXPECT_GT(dips, kCases / 10);  // the cases do test something
}

TEST(MeshCcd, RandomFastParticlesStaticTriangleNoFalseNegative) { runRandom(false, "static triangle"); }
TEST(MeshCcd, RandomFastParticlesMovingTriangleNoFalseNegative) { runRandom(true, "moving triangle"); }

// --- Rigid meshes ---------------------------------------------------------------------------
glm::vec4 quatAxisAngle(D3 axis, double angle) {
  axis = glm::normalize(axis);
  const double s = std::sin(angle / 2);
  return {float(axis.x * s), float(axis.y * s), float(axis.z * s), float(std::cos(angle / 2))};
}

// The true rigid motion in double: slerp rotation, linear translation.
struct TrueMotion {
  glm::dquat q0, q1;
  D3 c0, c1;
  D3 world(D3 m, double t) const {
    return glm::slerp(q0, q1, t) * m + lerpD(c0, c1, t);
  }
};

TrueMotion trueMotion(glm::vec4 q0, vec3 c0, glm::vec4 q1, vec3 c1) {
  TrueMotion m;
  m.q0 = glm::dquat(q0.w, q0.x, q0.y, q0.z);
  m.q1 = glm::dquat(q1.w, q1.x, q1.y, q1.z);
  if (glm::dot(m.q0, m.q1) < 0) m.q1 = -m.q1;
  m.c0 = d3(c0);
  m.c1 = d3(c1);
  return m;
}

TEST(MeshCcd, RotatingPaddleHitsEveryRestingParticle) {
  // A paddle in mesh space (two triangles in the xz-plane, x from 0.1 to 1) turning a quarter turn
  // about z in one iteration sweeps the quadrant x > 0, y > 0.
  std::vector<vec3> v{{0.1f, 0, -0.5f}, {1, 0, -0.5f}, {1, 0, 0.5f}, {0.1f, 0, 0.5f}};
  std::vector<uint32_t> ix{0, 1, 2, 0, 2, 3};
  const glm::vec4 q0(0, 0, 0, 1), q1 = quatAxisAngle({0, 0, 1}, M_PI / 2);
  const vec3 c0(0.0f), c1(0.0f);
  const gpu::RigidSweep sweep = gpu::rigidSweepPrepare(q0, c0, q1, c1);
  EXPECT_GE(sweep.angle.x, float(M_PI / 2));
  EXPECT_LE(sweep.angle.x, float(M_PI / 2) * 1.3f);  // the trig-free bound: 2 for a quarter turn
  std::mt19937 rng(90);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const float thickness = 0.01f;
  int missed = 0, early = 0;
  double worstEarly = 0;
  for (int i = 0; i < 2000; ++i) {
    const float angle = float(M_PI / 2) * (0.03f + 0.94f * u(rng)), radius = 0.12f + 0.86f * u(rng);
    const vec3 p(radius * std::cos(angle), radius * std::sin(angle), -0.45f + 0.9f * u(rng));
    MeshHit hit;
    if (earliestHitRigid({v, v, ix}, sweep, 0.0f, p, p, thickness, 0u, hit) == UINT32_MAX) {
      ++missed;
      continue;
    }
    // The paddle's plane reaches the particle's distance at t = (angle - asin(thickness / radius)) / 90 deg.
    // (0 when it starts within thickness of the paddle).
    const double truth = std::max(0.0, (double(angle) - std::asin(double(thickness) / double(radius))) / (M_PI / 2));
    const double t = double(hit.normalTime.w);
    if (t > truth + 1e-4) ADD_FAILURE() << "late hit " << i << " " << t << " vs " << truth;
    if (truth - t > 1e-3) ++early;
    worstEarly = std::max(worstEarly, truth - t);
  }
  std::printf("paddle: 2000 resting particles, missed %d, hits earlier than the true contact by > 1e-3 of the "
              "iteration %d (largest %.4f)\n",
              missed, early, worstEarly);
  EXPECT_EQ(missed, 0);
}

TEST(MeshCcd, RigidRandomNoFalseNegativeAndChordErrorWithinBound) {
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  constexpr int kCases = heavyCases(3000), kSteps = 4000;
  int dips = 0, fn = 0, fp = 0, boundViolations = 0;
  double worstRatio = 0, worstExcess = -1;
  for (int i = 0; i < kCases; ++i) {
    const D3 axis = d3(randomVec(rng, -1, 1)) + D3(0, 0, 1e-3);
    const glm::vec4 q0 = quatAxisAngle(d3(randomVec(rng, -1, 1)) + D3(1e-3, 0, 0), 2 * M_PI * double(u(rng)));
    const glm::vec4 q1 = quatAxisAngle(axis, M_PI * 0.6 * double(u(rng))) * 1.0f;
    glm::vec4 q1w;  // q1 = q0 * rotation about axis
    {
      const glm::quat a(q0.w, q0.x, q0.y, q0.z), b(q1.w, q1.x, q1.y, q1.z);
      const glm::quat r = a * b;
      q1w = {r.x, r.y, r.z, r.w};
    }
    const vec3 c0 = randomVec(rng, -1, 1), c1 = c0 + randomVec(rng, -1, 1);
    const gpu::RigidSweep sweep = gpu::rigidSweepPrepare(q0, c0, q1w, c1);
    const TrueMotion truth = trueMotion(q0, c0, q1w, c1);
    const vec3 ma = randomVec(rng, -1.5f, 1.5f), mb = randomVec(rng, -1.5f, 1.5f), mc = randomVec(rng, -1.5f, 1.5f);
    const float thickness = u(rng) < 0.1f ? 0.0f : 0.1f * u(rng);
    // Aim at the triangle's world position halfway through.
    const D3 mid = (truth.world(d3(ma), 0.5) + truth.world(d3(mb), 0.5) + truth.world(d3(mc), 0.5)) / 3.0;
    const vec3 aim = vec3(mid) + randomVec(rng, -0.8f, 0.8f);
    const vec3 p0 = aim + randomVec(rng, -2, 2);
    const vec3 p1 = p0 + (aim - p0) * (1.2f + u(rng));
    MeshHit hit;
    const bool h = gpu::triCcdRigid(sweep, ma, mb, mc, 0.0f, p0, p1, thickness, 0u, hit);
    const FineResult ref = fineSteps(kSteps, double(thickness), [&](double t, D3& p, D3& a, D3& b, D3& c) {
      p = lerpD(d3(p0), d3(p1), t);
      a = truth.world(d3(ma), t);
      b = truth.world(d3(mb), t);
      c = truth.world(d3(mc), t);
    });
    const bool dip = ref.firstDip <= 1.0;
    dips += dip;
    if (dip && !h) {
      ++fn;
      ADD_FAILURE() << "rigid case " << i << " dips at " << ref.firstDip;
    }
    if (h && !dip && ref.minDistance > double(thickness) * 1.5 + 1e-4) ++fp;
    // The chord error bound: the sub-steps' lerped vertices stay within the inflation of the truth.
    const float rho = std::sqrt(std::max({glm::dot(ma, ma), glm::dot(mb, mb), glm::dot(mc, mc)}));
    float inflation;
    const uint32_t steps = gpu::rigidSubSteps(sweep.angle.x, rho, thickness, inflation);
    const uint32_t stride = gpu::kRigidMaxSteps / steps;
    double worst = 0;
    for (uint32_t k = 0; k < steps; ++k) {
      for (int s = 0; s <= 64; ++s) {
        const double tau = s / 64.0, t = (k + tau) / steps;
        for (vec3 m : {ma, mb, mc}) {
          const vec3 w0 = gpu::quatRotate(sweep.rotation[k * stride], m) + vec3(sweep.translation[k * stride]);
          const vec3 w1 =
              gpu::quatRotate(sweep.rotation[(k + 1) * stride], m) + vec3(sweep.translation[(k + 1) * stride]);
          worst = std::max(worst, glm::length(lerpD(d3(w0), d3(w1), tau) - truth.world(d3(m), t)));
        }
      }
    }
    // Beyond the bound only by the float rounding of the table's transforms (~1e-7 here), which
    // triCcdCore's margin covers.
    if (worst > double(inflation) + 1e-6) ++boundViolations;
    worstExcess = std::max(worstExcess, worst - double(inflation));
    if (inflation > 1e-4f) worstRatio = std::max(worstRatio, worst / double(inflation));
  }
  std::printf("rigid: %d cases, %d dip below thickness (true slerp motion, %d steps): false negatives %d, false "
              "positives (never within 1.5 thickness) %d; chord error / bound at most %.3f (bounds > 1e-4), "
              "largest excess over the bound %.3g, violations %d\n",
              kCases, dips, kSteps, fn, fp, worstRatio, worstExcess, boundViolations);
  EXPECT_EQ(fn, 0);
  EXPECT_EQ(boundViolations, 0);
  EXPECT_GT(dips, kCases / 10);
}

}  // namespace
}  // namespace vkc::test
