// The vkcollide tool's scene commands, run as a user would: `step` on every backend (results checked
// against the geometry and against the library), `compare` (agreement, a doctored result, bad
// scenes) and the exit codes. Built only where the tool is (VKC_TOOL_PATH).
#ifdef VKC_TOOL_PATH

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

#include "support/tool_run.h"
#include "vkcollide/scene.h"

namespace vkc {
namespace {

const std::string kSamples = std::string(VKC_SOURCE_DIR) + "/samples/scenes/";

using test::fileExists;
using test::readText;
using test::runTool;
using test::tempPath;
using test::ToolRun;
using test::writeText;

// Signed distance from p to the convex hull of spheres a and b (a tapered capsule). The hull is the
// union of the balls centred at mix(a, b, t) with radius mix(ra, rb, t), t in [0, 1], and the
// distance to that ball is convex in t: ternary search.
double hullDistance(const Float4& pf, const Float4& af, const Float4& bf) {
  const double p[3] = {pf.x, pf.y, pf.z}, a[4] = {af.x, af.y, af.z, af.w}, b[4] = {bf.x, bf.y, bf.z, bf.w};
  auto d = [&](double t) {
    double sq = 0;
    for (int k = 0; k < 3; ++k) {
      const double e = p[k] - (a[k] + (b[k] - a[k]) * t);
      sq += e * e;
    }
    return std::sqrt(sq) - (a[3] + (b[3] - a[3]) * t);
  };
  double lo = 0, hi = 1;
  for (int i = 0; i < 200; ++i) {
    const double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (d(m1) < d(m2)) {
      hi = m2;
    } else {
      lo = m1;
    }
  }
  return std::min({d(0), d(1), d(0.5 * (lo + hi))});
}

// The smallest signed distance from p to the cloth's shapes at the iteration's end.
double shapeDistance(const Float4& p, const SceneCloth& c) {
  double best = 1e30;
  for (const Float4& s : c.spheres) best = std::min(best, hullDistance(p, s, s));
  for (const Capsule& cap : c.capsules) best = std::min(best, hullDistance(p, c.spheres[cap.sphere0], c.spheres[cap.sphere1]));
  return best;
}

class SceneStep : public ::testing::TestWithParam<const char*> {
 protected:
  // `step` of `in` into `out` on the test's backend, two iterations (--repeat 2), Vulkan under validation.
  ToolRun stepTwice(const std::string& in, const std::string& out) const {
    const std::string backend = GetParam();
    return runTool("step '" + in + "' --backend " + backend + " --repeat 2 --out '" + out + "'" +
                   (backend == "vulkan" ? " --validation" : ""));
  }
};

// Discrete collision: every movable particle ends outside every shape (on its surface if it was
// inside), particles that were outside are not moved, and the file holds exactly what the library
// computes for the same scene.
TEST_P(SceneStep, ParticlesEndOutsideEveryShape) {
  for (const char* sample : {"sphere-and-capsule.json", "two-cloths.json"}) {
    SCOPED_TRACE(sample);
    const std::string in = kSamples + sample;
    const std::string out = tempPath(std::string(GetParam()) + "_" + sample);
    const ToolRun r = stepTwice(in, out);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    Result<Scene> before = loadScene(in);
    Result<Scene> after = loadScene(out);
    ASSERT_TRUE(before) << before.message();
    ASSERT_TRUE(after) << after.message();
    ASSERT_FALSE(before->settings.continuousCollision);
    ASSERT_EQ(after->cloths.size(), before->cloths.size());
    size_t pushed = 0;
    for (size_t c = 0; c < before->cloths.size(); ++c) {
      const SceneCloth& b = before->cloths[c];
      const SceneCloth& a = after->cloths[c];
      ASSERT_EQ(a.particles.size(), b.particles.size());
      EXPECT_EQ(a.spheres, b.spheres);
      EXPECT_EQ(a.name, b.name);
      for (size_t i = 0; i < b.particles.size(); ++i) {
        const Float4& p = a.particles[i];
        const double scale = 1e-4 * (1 + double{std::abs(p.x)} + double{std::abs(p.y)} + double{std::abs(p.z)});
        const double dBefore = shapeDistance(b.particles[i], b);
        const double dAfter = shapeDistance(p, a);
        if (b.particles[i].w == 0) {
          EXPECT_EQ(p.x, b.particles[i].x);  // fixed particles never move
          continue;
        }
        EXPECT_GE(dAfter, -scale) << "cloth " << c << " particle " << i << " is inside a shape";
        if (dBefore < 0) {
          ++pushed;
          EXPECT_LE(dAfter, scale) << "cloth " << c << " particle " << i << " was pushed beyond the surface";
        } else {
          EXPECT_TRUE(p.x == b.particles[i].x && p.y == b.particles[i].y && p.z == b.particles[i].z)
              << "cloth " << c << " particle " << i << " was outside and moved";
        }
      }
    }
    EXPECT_GE(pushed, 10u) << "the sample should push particles out";

    // The file holds what the library computes (bitwise on the CPU; within tolerance on Vulkan).
    Result<SceneBuffers> buffers = makeSceneBuffers(*before);
    ASSERT_TRUE(buffers) << buffers.message();
    ASSERT_TRUE(collideShapesCpu(buffers->shapeInput(shapeCollisionSettings(before->settings)), Backend::kCpuScalar).ok());
    Scene expected = *before;
    storeSceneBuffers(*buffers, expected);
    for (size_t c = 0; c < expected.cloths.size(); ++c) {
      for (size_t i = 0; i < expected.cloths[c].particles.size(); ++i) {
        const Float4 e[2] = {expected.cloths[c].particles[i], expected.cloths[c].prevParticles[i]};
        const Float4 g[2] = {after->cloths[c].particles[i], after->cloths[c].prevParticles[i]};
        for (int k = 0; k < 2; ++k) {
          const float ev[4] = {e[k].x, e[k].y, e[k].z, e[k].w}, gv[4] = {g[k].x, g[k].y, g[k].z, g[k].w};
          for (int q = 0; q < 4; ++q) {
            EXPECT_NEAR(gv[q], ev[q], kShapeCollisionTolerance * (1 + std::abs(ev[q])))
                << "cloth " << c << (k ? " prevParticles[" : " particles[") << i << "][" << q << "]";
          }
        }
      }
    }
    if (std::string(GetParam()) == "cpu-scalar") {
      EXPECT_TRUE(*after == expected);
    }
    std::remove(out.c_str());
  }
}

// Continuous collision and a gzipped output: a strip that passes through a capsule within the
// iteration is caught (a discrete test would leave it below the capsule).
TEST_P(SceneStep, ContinuousCollisionCatchesTunnelling) {
  const std::string out = tempPath(std::string(GetParam()) + "_ccd.json.gz");
  const ToolRun r = runTool("step '" + kSamples + "ccd-fast-strip.json' --backend " + GetParam() + " --out '" + out + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  Result<Scene> before = loadScene(kSamples + "ccd-fast-strip.json");
  Result<Scene> after = loadScene(out);
  ASSERT_TRUE(before && after);
  ASSERT_TRUE(before->settings.continuousCollision);
  size_t caught = 0;
  const SceneCloth& c = after->cloths[0];
  for (size_t i = 0; i < c.particles.size(); ++i) {
    if (c.particles[i].y > before->cloths[0].particles[i].y + 0.1f) ++caught;  // stopped above the capsule
  }
  EXPECT_GE(caught, 4u) << r.output;
  std::remove(out.c_str());
}

// The signed distance from p to a convex (the largest of its planes' normalized signed distances,
// in double): negative inside.
double convexDistance(const Float4& p, const SceneCloth& c, const std::vector<uint32_t>& convex) {
  double best = -1e30;
  for (uint32_t k : convex) {
    const double q[4] = {c.planes[k].x, c.planes[k].y, c.planes[k].z, c.planes[k].w};
    const double x[3] = {p.x, p.y, p.z};
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    best = std::max(best, (q[0] * x[0] + q[1] * x[1] + q[2] * x[2] + q[3]) / n);
  }
  return best;
}

// Planes and convexes with continuous collision: the sheet of planes-and-convexes.json stops on the
// top of the box it ended inside, of the thin slab it passed through within the iteration, and of the
// ground that rose into it; its motion along the planes is kept (x and z unchanged, no friction); the
// column that misses every convex and the pinned particle do not move; no particle ends inside a
// convex; the output names the colliders; the file holds what the library computes. With continuous
// collision off, the slab is tunnelled through.
TEST_P(SceneStep, PlanesAndConvexesStopTheSheet) {
  const std::string in = kSamples + "planes-and-convexes.json";
  const std::string out = tempPath(std::string(GetParam()) + "_planes.json");
  const ToolRun r = stepTwice(in, out);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("stages: shapes;"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("colliders: 0 spheres, 0 capsules, 11 planes (1 moving) in 3 convexes"), std::string::npos)
      << r.output;
  Result<Scene> before = loadScene(in);
  Result<Scene> after = loadScene(out);
  ASSERT_TRUE(before) << before.message();
  ASSERT_TRUE(after) << after.message();
  ASSERT_TRUE(before->settings.continuousCollision);
  const SceneCloth& b = before->cloths[0];
  const SceneCloth& a = after->cloths[0];
  EXPECT_EQ(a.planes, b.planes);
  EXPECT_EQ(a.prevPlanes, b.prevPlanes);
  EXPECT_EQ(a.convexes, b.convexes);
  ASSERT_EQ(a.particles.size(), 55u);
  size_t onBox = 0, onSlab = 0, onGround = 0, still = 0;
  for (size_t i = 0; i < a.particles.size(); ++i) {
    SCOPED_TRACE("particle " + std::to_string(i));
    const Float4& p = a.particles[i];
    const Float4& e = b.particles[i];
    for (const std::vector<uint32_t>& convex : a.convexes) EXPECT_GE(convexDistance(p, a, convex), -1e-5);
    EXPECT_EQ(p.x, e.x);
    EXPECT_EQ(p.z, e.z);
    const double tol = 1e-5;
    if (e.w == 0 || (e.x > -0.45f && e.x < -0.3f)) {
      EXPECT_EQ(p.y, e.y);  // pinned, or the column that misses every convex
      ++still;
    } else if (e.x < -0.45f) {
      EXPECT_NEAR(p.y, 0.1, tol);  // the box's top
      ++onBox;
    } else if (e.x < 0.3f) {
      EXPECT_NEAR(p.y, 0.02, tol);  // the slab's top
      ++onSlab;
    } else {
      EXPECT_NEAR(p.y, -0.2, tol);  // the ground, where it ends the iteration
      ++onGround;
    }
  }
  EXPECT_EQ(onBox, 15u);
  EXPECT_EQ(onSlab, 15u);
  EXPECT_EQ(onGround, 19u);
  EXPECT_EQ(still, 6u);
  Result<SceneBuffers> buffers = makeSceneBuffers(*before);
  ASSERT_TRUE(buffers) << buffers.message();
  ASSERT_TRUE(collideShapesCpu(buffers->shapeInput(shapeCollisionSettings(before->settings)), Backend::kCpuScalar).ok());
  Scene expected = *before;
  storeSceneBuffers(*buffers, expected);
  if (std::string(GetParam()) == "cpu-scalar") {
    EXPECT_TRUE(*after == expected);
  }
  for (size_t i = 0; i < a.particles.size(); ++i) {
    EXPECT_NEAR(a.particles[i].y, expected.cloths[0].particles[i].y, kShapeCollisionTolerance) << i;
  }

  // Discrete: the slab's particles end below it, outside it, and stay there.
  std::string text = readText(in);
  const std::string ccd = "\"continuousCollision\": true";
  ASSERT_NE(text.find(ccd), std::string::npos);
  text.replace(text.find(ccd), ccd.size(), "\"continuousCollision\": false");
  const std::string discreteIn = tempPath(std::string(GetParam()) + "_planes_discrete.json");
  writeText(discreteIn, text);
  const ToolRun d = stepTwice(discreteIn, out);
  ASSERT_EQ(d.exitCode, 0) << d.output;
  Result<Scene> discrete = loadScene(out);
  ASSERT_TRUE(discrete) << discrete.message();
  size_t tunnelled = 0;
  for (size_t i = 0; i < b.particles.size(); ++i) {
    const Float4& e = b.particles[i];
    if (e.w != 0 && e.x > -0.3f && e.x < 0.3f) tunnelled += discrete->cloths[0].particles[i].y == e.y;
  }
  EXPECT_EQ(tunnelled, 15u);
  std::remove(discreteIn.c_str());
  std::remove(out.c_str());
}

double distance(const Float4& a, const Float4& b) {
  const double dx = double{a.x} - double{b.x}, dy = double{a.y} - double{b.y}, dz = double{a.z} - double{b.z};
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

bool samePosition(const Float4& a, const Float4& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }

// Shapes, then self collision. The invariant: isolated pairs closer than the distance end at the
// distance (stiffness 1), each particle moving by its share of the inverse mass; pinned particles and
// every particle in no such pair stay where they were (pairs close at rest, pairs outside the subset,
// close particles of different cloths), but for those the shape stage pushed out of a ball. The pairs
// are found here by brute force from the file, not by the engine. And the file holds what the library
// computes (shapeInput, then selfInput).
TEST_P(SceneStep, SelfCollisionLeavesIsolatedPairsAtTheDistance) {
  const std::string in = kSamples + "self-collision-pairs.json";
  const std::string out = tempPath(std::string(GetParam()) + "_self.json");
  const ToolRun r = stepTwice(in, out);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("stages: shapes, self;"), std::string::npos) << r.output;
  Result<Scene> before = loadScene(in);
  Result<Scene> after = loadScene(out);
  ASSERT_TRUE(before) << before.message();
  ASSERT_TRUE(after) << after.message();
  ASSERT_TRUE(before->settings.selfCollision.has_value());
  ASSERT_EQ(before->settings.selfCollision->stiffness, 1.0f);
  const double d = before->settings.selfCollision->distance;
  ASSERT_EQ(after->cloths.size(), before->cloths.size());

  size_t collided = 0, restCulled = 0, subsetCulled = 0, crossCloth = 0, pushedByShapes = 0;
  for (size_t c = 0; c < before->cloths.size(); ++c) {
    SCOPED_TRACE("cloth " + std::to_string(c));
    const SceneCloth& b = before->cloths[c];
    const SceneCloth& a = after->cloths[c];
    const size_t n = b.particles.size();
    ASSERT_EQ(a.particles.size(), n);
    std::vector<bool> inSubset(n, b.selfCollisionIndices.empty());
    for (uint32_t i : b.selfCollisionIndices) inSubset[i] = true;
    std::vector<int> partner(n, -1);
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = i + 1; j < n; ++j) {
        if (distance(b.particles[i], b.particles[j]) >= d) continue;
        if (!inSubset[i] || !inSubset[j]) {
          ++subsetCulled;
        } else if (!b.restPositions.empty() && distance(b.restPositions[i], b.restPositions[j]) < d) {
          ++restCulled;
        } else {
          ASSERT_EQ(partner[i], -1) << "particle " << i << " is in two pairs: the sample's pairs must be isolated";
          ASSERT_EQ(partner[j], -1) << "particle " << j << " is in two pairs";
          partner[i] = static_cast<int>(j);
          partner[j] = static_cast<int>(i);
        }
      }
    }
    for (size_t i = 0; i < n; ++i) {
      const Float4& p0 = b.particles[i];
      const Float4& p1 = a.particles[i];
      const double scale = 1 + std::max({std::abs(p0.x), std::abs(p0.y), std::abs(p0.z)});
      if (partner[i] < 0) {
        if (shapeDistance(p0, b) < 0) {  // pushed out by the shape stage, then alone
          ++pushedByShapes;
          EXPECT_NEAR(shapeDistance(p1, a), 0.0, 1e-4 * scale) << "particle " << i;
        } else {
          EXPECT_TRUE(samePosition(p1, p0)) << "particle " << i << " collides with nothing and moved";
        }
        continue;
      }
      const size_t j = static_cast<size_t>(partner[i]);
      if (j < i) continue;
      const Float4& q0 = b.particles[j];
      const Float4& q1 = a.particles[j];
      if (p0.w == 0) {
        EXPECT_TRUE(samePosition(p1, p0)) << "pinned particle " << i << " moved";
      }
      if (q0.w == 0) {
        EXPECT_TRUE(samePosition(q1, q0)) << "pinned particle " << j << " moved";
      }
      if (p0.w == 0 && q0.w == 0) continue;
      ++collided;
      // At the distance, within the stage's tolerance on each of the two particles.
      const double tol = double{kSelfCollisionTolerance} * scale;
      EXPECT_NEAR(distance(p1, q1), d, 2 * tol) << "pair " << i << ", " << j;
      // Each moves by its share w / (w_i + w_j) of the correction, in opposite directions.
      const double mi = distance(p1, p0), mj = distance(q1, q0);
      EXPECT_NEAR(mi * double{q0.w}, mj * double{p0.w}, 4 * tol) << "pair " << i << ", " << j;
      EXPECT_NEAR(mi + mj, d - distance(p0, q0), 2 * tol) << "pair " << i << ", " << j;
    }
    // Particles of other cloths as close as a pair (same local coordinates) collide with nothing here.
    for (size_t o = 0; o < before->cloths.size(); ++o) {
      if (o == c) continue;
      for (const Float4& p : b.particles) {
        for (const Float4& q : before->cloths[o].particles) crossCloth += distance(p, q) < d;
      }
    }
  }
  // The sample covers every case.
  EXPECT_GE(collided, 5u);
  EXPECT_GE(restCulled, 1u);
  EXPECT_GE(subsetCulled, 1u);
  EXPECT_GE(crossCloth, 2u);
  EXPECT_GE(pushedByShapes, 1u);

  // The file holds what the library computes: bitwise on the scalar backend.
  Result<SceneBuffers> buffers = makeSceneBuffers(*before);
  ASSERT_TRUE(buffers) << buffers.message();
  ASSERT_TRUE(collideShapesCpu(buffers->shapeInput(shapeCollisionSettings(before->settings)), Backend::kCpuScalar).ok());
  ASSERT_TRUE(collideSelfCpu(buffers->selfInput(selfCollisionSettings(before->settings)), Backend::kCpuScalar).ok());
  Scene expected = *before;
  storeSceneBuffers(*buffers, expected);
  if (std::string(GetParam()) != "vulkan") {
    EXPECT_TRUE(*after == expected);  // the CPU backends are bitwise equal
  }
  std::remove(out.c_str());
}

// World position of a cloth's local point, in double: world = q * p * q^-1 + translation (an
// evaluation independent of the engine's).
struct World {
  double x, y, z;
};
World toWorld(const SceneCloth& c, const Float4& p) {
  const double qx = c.rotation.x, qy = c.rotation.y, qz = c.rotation.z, qw = c.rotation.w;
  const double px = p.x, py = p.y, pz = p.z;
  const double tx = 2 * (qy * pz - qz * py), ty = 2 * (qz * px - qx * pz), tz = 2 * (qx * py - qy * px);
  const double ox = c.translation[0], oy = c.translation[1], oz = c.translation[2];
  return {px + qw * tx + (qy * tz - qz * ty) + ox, py + qw * ty + (qz * tx - qx * tz) + oy,
          pz + qw * tz + (qx * ty - qy * tx) + oz};
}
double distance(const World& a, const World& b) {
  return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) + (a.z - b.z) * (a.z - b.z));
}

// Inter collision (distance d, stiffness 1, 2 iterations) on three rotated and translated cloths:
// every isolated pair of particles of different cloths that the filter allows and that is closer
// than d in world space (found here by brute force from the file, in double) ends d apart, each
// particle moving by its share w / (w_i + w_j) of the correction, pinned particles not at all.
// Every other particle keeps its exact bits: same-cloth close pairs, and close particles of a cloth
// the collision filter (collisionGroup / collisionMask) keeps out. And the file holds what the
// library computes (interInput).
TEST_P(SceneStep, InterCollisionLeavesIsolatedCrossClothPairsAtTheDistance) {
  const std::string in = kSamples + "inter-collision-cloths.json";
  const std::string out = tempPath(std::string(GetParam()) + "_inter.json");
  const ToolRun r = stepTwice(in, out);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("stages: inter;"), std::string::npos) << r.output;
  Result<Scene> before = loadScene(in);
  Result<Scene> after = loadScene(out);
  ASSERT_TRUE(before) << before.message();
  ASSERT_TRUE(after) << after.message();
  ASSERT_TRUE(before->settings.interCollision.has_value());
  ASSERT_EQ(before->settings.interCollision->stiffness, 1.0f);
  const double d = before->settings.interCollision->distance;
  ASSERT_EQ(after->cloths.size(), before->cloths.size());
  EXPECT_EQ(after->settings, before->settings);

  struct Ref {
    size_t cloth, index;
  };
  std::vector<Ref> all;
  std::vector<World> world;
  for (size_t c = 0; c < before->cloths.size(); ++c) {
    ASSERT_EQ(after->cloths[c].particles.size(), before->cloths[c].particles.size());
    EXPECT_EQ(after->cloths[c].translation, before->cloths[c].translation);
    EXPECT_EQ(after->cloths[c].rotation, before->cloths[c].rotation);
    EXPECT_EQ(after->cloths[c].collisionGroup, before->cloths[c].collisionGroup);
    EXPECT_EQ(after->cloths[c].collisionMask, before->cloths[c].collisionMask);
    for (size_t i = 0; i < before->cloths[c].particles.size(); ++i) {
      all.push_back({c, i});
      world.push_back(toWorld(before->cloths[c], before->cloths[c].particles[i]));
    }
  }
  auto allowed = [&](size_t a, size_t b) {
    const SceneCloth& ca = before->cloths[a];
    const SceneCloth& cb = before->cloths[b];
    return (ca.collisionGroup & cb.collisionMask) != 0 && (cb.collisionGroup & ca.collisionMask) != 0;
  };
  std::vector<int> partner(all.size(), -1);
  size_t sameCloth = 0, filtered = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = i + 1; j < all.size(); ++j) {
      if (distance(world[i], world[j]) >= d) continue;
      if (all[i].cloth == all[j].cloth) {
        ++sameCloth;
      } else if (!allowed(all[i].cloth, all[j].cloth)) {
        ++filtered;
      } else {
        ASSERT_EQ(partner[i], -1) << "particle " << i << " is in two pairs: the sample's pairs must be isolated";
        ASSERT_EQ(partner[j], -1) << "particle " << j << " is in two pairs";
        partner[i] = static_cast<int>(j);
        partner[j] = static_cast<int>(i);
      }
    }
  }
  auto particleOf = [&](const Scene& s, size_t k) { return s.cloths[all[k].cloth].particles[all[k].index]; };
  size_t collided = 0, pinnedPartner = 0, unequalMasses = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const Float4 p0 = particleOf(*before, i), p1 = particleOf(*after, i);
    if (partner[i] < 0) {
      EXPECT_TRUE(samePosition(p1, p0)) << "cloth " << all[i].cloth << " particle " << all[i].index
                                        << " collides with no other cloth and moved";
      continue;
    }
    const size_t j = static_cast<size_t>(partner[i]);
    if (j < i) continue;
    const Float4 q0 = particleOf(*before, j), q1 = particleOf(*after, j);
    if (p0.w == 0) {
      EXPECT_TRUE(samePosition(p1, p0)) << "pinned particle " << i << " moved";
    }
    if (q0.w == 0) {
      EXPECT_TRUE(samePosition(q1, q0)) << "pinned particle " << j << " moved";
    }
    if (p0.w == 0 && q0.w == 0) continue;
    ++collided;
    pinnedPartner += p0.w == 0 || q0.w == 0;
    unequalMasses += p0.w != 0 && q0.w != 0 && p0.w != q0.w;
    const World a = toWorld(before->cloths[all[i].cloth], p1), b = toWorld(before->cloths[all[j].cloth], q1);
    const double scale = 1 + std::max({std::abs(a.x), std::abs(a.y), std::abs(a.z), std::abs(b.x), std::abs(b.y), std::abs(b.z)});
    const double tol = double{kSelfCollisionTolerance} * scale;
    EXPECT_NEAR(distance(a, b), d, 2 * tol) << "pair " << i << ", " << j;
    // Rigid transforms keep lengths: the local displacements are the world ones.
    const double mi = distance(p1, p0), mj = distance(q1, q0);
    EXPECT_NEAR(mi * double{q0.w}, mj * double{p0.w}, 4 * tol) << "pair " << i << ", " << j;
    EXPECT_NEAR(mi + mj, d - distance(world[i], world[j]), 2 * tol) << "pair " << i << ", " << j;
  }
  // The sample covers every case.
  EXPECT_GE(collided, 10u);
  EXPECT_GE(pinnedPartner, 1u);
  EXPECT_GE(unequalMasses, 1u);
  EXPECT_GE(sameCloth, 2u);
  EXPECT_GE(filtered, 1u);

  // The file holds what the library computes: bitwise on the scalar backend.
  Result<SceneBuffers> buffers = makeSceneBuffers(*before);
  ASSERT_TRUE(buffers) << buffers.message();
  ASSERT_TRUE(collideInterCpu(buffers->interInput(interCollisionSettings(before->settings)), Backend::kCpuScalar).ok());
  Scene expected = *before;
  storeSceneBuffers(*buffers, expected);
  if (std::string(GetParam()) == "cpu-scalar") {
    EXPECT_TRUE(*after == expected);
  }
  std::remove(out.c_str());
}

// A scene enabling all three stages: step chains shapes, self, inter in that order, each on what the
// one before left; the file is bitwise the library's chain on the scalar backend, and inter
// collision changed something there (the self-collision sample, its second cloth moved next to the
// first and inter collision switched on).
TEST(SceneStepChain, ShapesThenSelfThenInter) {
  std::string text = readText(kSamples + "self-collision-pairs.json");
  const std::string fromT = "\"translation\": [2.0, 0.0, 0.0]", fromS = "\"selfCollision\": {";
  ASSERT_NE(text.find(fromT), std::string::npos);
  text.replace(text.find(fromT), fromT.size(), "\"translation\": [0.02, 0.0, 0.0]");
  ASSERT_NE(text.find(fromS), std::string::npos);
  text.insert(text.find(fromS), "\"interCollision\": {\"distance\": 0.05, \"stiffness\": 0.8, \"iterations\": 3}, ");
  const std::string in = tempPath("chain.json"), out = tempPath("chain-out.json");
  writeText(in, text);
  const ToolRun r = runTool("step '" + in + "' --backend cpu-scalar --out '" + out + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("stages: shapes, self, inter;"), std::string::npos) << r.output;
  Result<Scene> before = loadScene(in);
  Result<Scene> after = loadScene(out);
  ASSERT_TRUE(before && after);
  Result<SceneBuffers> b = makeSceneBuffers(*before);
  ASSERT_TRUE(b) << b.message();
  ASSERT_TRUE(collideShapesCpu(b->shapeInput(shapeCollisionSettings(before->settings)), Backend::kCpuScalar).ok());
  ASSERT_TRUE(collideSelfCpu(b->selfInput(selfCollisionSettings(before->settings)), Backend::kCpuScalar).ok());
  const std::vector<Float4> withoutInter = b->particles;
  InterCollisionDebug debug;
  ASSERT_TRUE(collideInterCpu(b->interInput(interCollisionSettings(before->settings)), Backend::kCpuScalar, &debug).ok());
  EXPECT_EQ(debug.clothPairs.size(), 1u);
  size_t changedByInter = 0;
  for (size_t i = 0; i < b->particles.size(); ++i) changedByInter += !samePosition(b->particles[i], withoutInter[i]);
  EXPECT_GT(changedByInter, 2u);
  Scene expected = *before;
  storeSceneBuffers(*b, expected);
  EXPECT_TRUE(*after == expected);
  std::remove(in.c_str());
  std::remove(out.c_str());
}

INSTANTIATE_TEST_SUITE_P(Cpu, SceneStep, ::testing::Values("cpu", "cpu-scalar"),
                         [](const auto& p) { return std::string(p.param) == "cpu" ? "Simd" : "Scalar"; });
INSTANTIATE_TEST_SUITE_P(Vulkan, SceneStep, ::testing::Values("vulkan"), [](const auto&) { return "Vulkan"; });

// ---- Mesh collision (scene version 2) --------------------------------------------------------

// Double-precision geometry of a closed mesh placed by a rigid transform: distance to the surface
// and inside (ray parity along a fixed, slightly skewed direction).
struct PlacedMesh {
  std::vector<std::array<double, 3>> v;  // world positions
  std::vector<uint32_t> idx;

  PlacedMesh(const SceneMesh& m, const SceneTransform& t) : idx(m.indices) {
    const double q[4] = {t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w};
    for (const Float4& p : m.vertices) {
      const double u[3] = {q[0], q[1], q[2]}, x[3] = {p.x, p.y, p.z};
      const double c[3] = {2 * (u[1] * x[2] - u[2] * x[1]), 2 * (u[2] * x[0] - u[0] * x[2]), 2 * (u[0] * x[1] - u[1] * x[0])};
      std::array<double, 3> w{};
      for (int k = 0; k < 3; ++k) {
        const double d = u[(k + 1) % 3] * c[(k + 2) % 3] - u[(k + 2) % 3] * c[(k + 1) % 3];
        w[k] = x[k] + q[3] * c[k] + d + double{t.translation[k]};
      }
      v.push_back(w);
    }
  }

  static double dot(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

  // Distance from p to triangle (a, b, c): the closest point by regions (Ericson's method).
  static double triDistance(const double* p, const double* a, const double* b, const double* c) {
    double ab[3], ac[3], ap[3], q[3];
    for (int k = 0; k < 3; ++k) ab[k] = b[k] - a[k], ac[k] = c[k] - a[k], ap[k] = p[k] - a[k];
    const double d1 = dot(ab, ap), d2 = dot(ac, ap);
    auto at = [&](double s, double t) {
      double e = 0;
      for (int k = 0; k < 3; ++k) {
        q[k] = a[k] + s * ab[k] + t * ac[k];
        e += (p[k] - q[k]) * (p[k] - q[k]);
      }
      return std::sqrt(e);
    };
    if (d1 <= 0 && d2 <= 0) return at(0, 0);
    double bp[3], cp[3];
    for (int k = 0; k < 3; ++k) bp[k] = p[k] - b[k], cp[k] = p[k] - c[k];
    const double d3 = dot(ab, bp), d4 = dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) return at(1, 0);
    const double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) return at(d1 / (d1 - d3), 0);
    const double d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) return at(0, 1);
    const double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) return at(0, d2 / (d2 - d6));
    const double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
      const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
      return at(1 - w, w);
    }
    const double den = 1 / (va + vb + vc);
    return at(vb * den, vc * den);
  }

  double distance(const double* p) const {
    double best = 1e30;
    for (size_t t = 0; t + 2 < idx.size(); t += 3) {
      best = std::min(best, triDistance(p, v[idx[t]].data(), v[idx[t + 1]].data(), v[idx[t + 2]].data()));
    }
    return best;
  }

  // Moller-Trumbore crossings of the ray p + s d, s > 0.
  bool inside(const double* p) const {
    const double d[3] = {0.5773, 0.5812, 0.5735};
    int crossings = 0;
    for (size_t t = 0; t + 2 < idx.size(); t += 3) {
      const double *a = v[idx[t]].data(), *b = v[idx[t + 1]].data(), *c = v[idx[t + 2]].data();
      double e1[3], e2[3], s[3];
      for (int k = 0; k < 3; ++k) e1[k] = b[k] - a[k], e2[k] = c[k] - a[k], s[k] = p[k] - a[k];
      const double h[3] = {d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0]};
      const double det = dot(e1, h);
      if (std::abs(det) < 1e-15) continue;
      const double u = dot(s, h) / det;
      if (u < 0 || u > 1) continue;
      const double qv[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0]};
      const double w = dot(d, qv) / det;
      if (w < 0 || u + w > 1) continue;
      crossings += dot(e2, qv) / det > 0;
    }
    return crossings % 2 == 1;
  }
};

// World position of a cloth-local particle (the cloth's translation and rotation).
std::array<double, 3> clothToWorld(const SceneCloth& c, const Float4& p) {
  SceneMesh one;
  one.vertices = {p};
  SceneTransform t;
  t.translation = c.translation;
  t.rotation = c.rotation;
  return PlacedMesh(one, t).v[0];
}

// The spot sample with its "obj" path made absolute (so that a copy elsewhere reads the same mesh),
// optionally edited: `edit` gets the parsed text to change.
std::string spotSceneCopy(const std::string& name, const std::function<void(std::string&)>& edit) {
  std::string text = readText(kSamples + "spot-drape.json");
  const std::string rel = "\"../../tests/data/meshes/spot_low_resolution.obj\"";
  const size_t obj = text.find(rel);
  EXPECT_NE(obj, std::string::npos);
  if (obj != std::string::npos) text.replace(obj, rel.size(), "\"" + kSamples + rel.substr(1));
  edit(text);
  const std::string path = tempPath(name);
  writeText(path, text);
  return path;
}

// `step` on the spot sample (a sheet in its own rotated, lifted frame falls 0.7 m in one iteration
// onto Spot the cow; continuous mesh collision): on both CPU backends every particle ends outside
// the cow (at its end transform), the particles over it were stopped (their local y rose) and the
// others fell the whole way bitwise unchanged. The distance to the surface: at least the thickness
// when the cow is static; when it turns (the sample: 6 degrees about y, and 3 cm up), at least 0.8
// of it (measured here: 0.0188 for thickness 0.02; a translation alone keeps >= 0.02: the rigid
// sweep's rotation leaves up to ~6% less, reported to the mesh stage). With continuous collision off,
// the same scene tunnels (particles end inside: the check can fail).
TEST(SceneStepMeshes, ParticlesEndOutsideSpot) {
  const std::string sample = kSamples + "spot-drape.json";
  const std::string staticCopy = spotSceneCopy("spot_static_in.json", [](std::string& text) {
    const size_t a = text.find("\"prevTransform\"");
    const size_t b = text.rfind("\n    }\n  ]");  // the end of the mesh object (the last array)
    ASSERT_TRUE(a != std::string::npos && b != std::string::npos && a < b);
    text.erase(a, b - a);
    const size_t comma = text.rfind(',', a);  // the comma before "prevTransform"
    text.erase(comma, 1);
  });
  const struct {
    std::string in;
    double minFraction;  // of the thickness
    bool rigid;
  } cases[] = {{sample, 0.8, true}, {staticCopy, 1.0 - 1e-3, false}};
  for (const auto& c : cases) {
    Result<Scene> before = loadScene(c.in);
    ASSERT_TRUE(before) << before.message();
    ASSERT_EQ(before->meshes.size(), 1u);
    const SceneMesh& spot = before->meshes[0];
    ASSERT_EQ(spot.motion() == MeshMotion::kRigid, c.rigid);
    const PlacedMesh placed(spot, c.rigid ? *spot.transform : SceneTransform{});
    const double thickness = spot.surface.thickness;
    for (const char* backend : {"cpu", "cpu-scalar"}) {
      SCOPED_TRACE(std::string(backend) + (c.rigid ? " rigid" : " static"));
      const std::string out = tempPath(std::string("spot_") + backend + ".json");
      const ToolRun r = runTool("step '" + c.in + "' --backend " + backend + " --repeat 2 --out '" + out + "'");
      ASSERT_EQ(r.exitCode, 0) << r.output;
      EXPECT_NE(r.output.find("stages: meshes;"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find(c.rigid ? "1 mesh (1654 triangles, 1 rigid)" : "1 mesh (1654 triangles)"),
                std::string::npos)
          << r.output;
      Result<Scene> after = loadScene(out);
      ASSERT_TRUE(after) << after.message();
      ASSERT_EQ(after->meshes.size(), 1u);
      EXPECT_TRUE(after->meshes[0] == spot);  // written inline, read back equal
      const SceneCloth& b = before->cloths[0];
      const SceneCloth& a = after->cloths[0];
      size_t stopped = 0;
      double closest = 1e30;
      for (size_t i = 0; i < b.particles.size(); ++i) {
        const std::array<double, 3> w = clothToWorld(a, a.particles[i]);
        EXPECT_FALSE(placed.inside(w.data())) << "particle " << i;
        const double d = placed.distance(w.data());
        closest = std::min(closest, d);
        EXPECT_GE(d, thickness * c.minFraction) << "particle " << i;
        if (std::memcmp(&a.particles[i], &b.particles[i], sizeof(Float4)) != 0) {
          ++stopped;
          EXPECT_GT(a.particles[i].y, b.particles[i].y) << "particle " << i;
        } else {
          EXPECT_EQ(std::memcmp(&a.prevParticles[i], &b.prevParticles[i], sizeof(Float4)), 0) << i;
        }
      }
      EXPECT_GT(stopped, 20u);
      EXPECT_LT(stopped, b.particles.size());
      RecordProperty(std::string("closest_") + backend + (c.rigid ? "_rigid" : "_static"), std::to_string(closest));
      RecordProperty(std::string("stopped_") + backend + (c.rigid ? "_rigid" : "_static"), static_cast<int>(stopped));
      std::remove(out.c_str());
    }
  }
  std::remove(staticCopy.c_str());
  // Continuous collision off: the discrete test sees only the end positions, deep inside or below
  // the cow, and some particles end inside it.
  const std::string discreteIn = spotSceneCopy("spot_discrete_in.json", [](std::string& text) {
    const size_t at = text.find("\"continuous\": true");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 18, "\"continuous\": false");
  });
  const std::string out = tempPath("spot_discrete.json");
  const ToolRun r = runTool("step '" + discreteIn + "' --backend cpu --out '" + out + "'");
  std::remove(discreteIn.c_str());
  ASSERT_EQ(r.exitCode, 0) << r.output;
  Result<Scene> after = loadScene(out);
  ASSERT_TRUE(after) << after.message();
  const SceneMesh& spot = after->meshes[0];
  const PlacedMesh placed(spot, *spot.transform);
  size_t inside = 0;
  for (const Float4& p : after->cloths[0].particles) {
    const std::array<double, 3> w = clothToWorld(after->cloths[0], p);
    inside += placed.inside(w.data());
  }
  EXPECT_GT(inside, 0u);
  RecordProperty("inside_without_ccd", static_cast<int>(inside));
  std::remove(out.c_str());
}

// compare covers the mesh stage: every backend (lavapipe too: hence "Vulkan" in the name) agrees
// with the CPU scalar reference within kMeshCollisionTolerance; a doctored result fails.
TEST(SceneStepMeshesVulkan, CompareAgreesAndCatchesADoctoredResult) {
  const std::string in = "'" + kSamples + "spot-drape.json'";
  ToolRun r = runTool("compare " + in);
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("0.0001 (meshes)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("meshes  0     sheet falling onto spot  cpu-simd"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("contacts equal"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("every backend agrees with cpu-scalar"), std::string::npos) << r.output;
  r = runTool("compare " + in + " --perturb-backend cpu 0.01");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("BEYOND TOLERANCE"), std::string::npos) << r.output;
  const ToolRun stages = runTool("stages");
  EXPECT_NE(stages.output.find("meshes  available"), std::string::npos) << stages.output;
}

// The mesh stage on Vulkan (lavapipe here): compare agrees within kMeshCollisionTolerance with equal
// contacts under the validation layer, and `step --stats` prints the stage's record.
TEST(SceneCompareVulkan, SpotMeshes) {
  const std::string in = "'" + kSamples + "spot-drape.json'";
  ToolRun r = runTool("compare " + in + " --validation --repeat 2");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("meshes  0     sheet falling onto spot  vulkan"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("DIFFER"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("every backend agrees with cpu-scalar"), std::string::npos) << r.output;
  r = runTool("compare " + in + " --perturb-backend vulkan 0.01");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  const std::string out = tempPath("spot_vulkan_stats.json");
  r = runTool("step " + in + " --backend vulkan --stats --validation --out '" + out + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("ms GPU"), std::string::npos) << r.output;
  const size_t row = r.output.find("\n  meshes  ", r.output.find("record stats"));
  ASSERT_NE(row, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("meshes           0 ", row), std::string::npos) << r.output;  // it dispatched
  std::remove(out.c_str());
}

// Bad scenes and usage errors: exit 2, a message naming the problem, no output file.
TEST(SceneStepErrors, BadScenesExit2WithoutOutput) {
  const std::string good = readText(kSamples + "sphere-and-capsule.json");
  ASSERT_FALSE(good.empty());
  struct Case {
    const char* what;
    std::string from, to, message;
  };
  const Case cases[] = {
      {"non-finite", "0.3]", "1e99]", "cloths[0].spheres[0][3]: expected a finite number"},
      {"unknown key", "\"capsules\"", "\"capsule\"", "cloths[0].capsule: unknown key"},
      {"capsule index", "[1, 2]", "[1, 3]", "cloths[0].capsules[0][1]: sphere index 3 is out of range"},
      {"negative radius (validate)", "0.3]", "-0.3]", "spheres"},
      {"negative inverse mass (validate)", "[-0.8571, 0.32, -0.5, 1.0]", "[-0.8571, 0.32, -0.5, -1.0]",
       "inverse mass"},
      {"negative friction (validate)", "\"friction\": 0.2", "\"friction\": -0.2", "friction"},
      {"zero plane normal", "\"capsules\": [",
       "\"planes\": [[0, 0, 0, 1]], \"convexes\": [[0]], \"capsules\": [",
       "cloths[0].planes[0]: normal (0, 0, 0) is zero"},
      {"plane index", "\"capsules\": [",
       "\"planes\": [[0, 1, 0, 1]], \"convexes\": [[0, 1]], \"capsules\": [",
       "cloths[0].convexes[0][1]: plane index 1 is out of range; the cloth has 1 planes"},
      {"empty convex", "\"capsules\": [",
       "\"planes\": [[0, 1, 0, 1]], \"convexes\": [[0], []], \"capsules\": [",
       "cloths[0].convexes[1]: is empty"},
      {"prevPlanes size", "\"capsules\": [",
       "\"planes\": [[0, 1, 0, 1]], \"prevPlanes\": [], \"capsules\": [",
       "cloths[0].prevPlanes: has 0 elements; planes has 1"},
      {"plane turning over (validate)", "\"capsules\": [",
       "\"planes\": [[0, 1, 0, 1]], \"prevPlanes\": [[0, -1, 0, 1]], \"convexes\": [[0]], \"capsules\": [",
       "colliders[0].planes[0]: its normal turns over"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::string text = good;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    const std::string in = tempPath("bad.json");
    const std::string out = tempPath("bad-out.json");
    writeText(in, text);
    std::remove(out.c_str());
    const ToolRun r = runTool("step '" + in + "' --backend cpu-scalar --out '" + out + "'");
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
    EXPECT_FALSE(fileExists(out));
    EXPECT_FALSE(fileExists(out + ".tmp"));
    const ToolRun cmp = runTool("compare '" + in + "'");
    EXPECT_EQ(cmp.exitCode, 2) << cmp.output;
    std::remove(in.c_str());
  }
  const std::string out = tempPath("usage-out.json");
  EXPECT_EQ(runTool("step '" + kSamples + "two-cloths.json' --backend gpu --out '" + out + "'").exitCode, 2);
  EXPECT_EQ(runTool("step '" + kSamples + "two-cloths.json' --out '" + out + "'").exitCode, 2);
  EXPECT_EQ(runTool("step '" + kSamples + "two-cloths.json' --backend cpu").exitCode, 2);
  EXPECT_EQ(runTool("step '" + kSamples + "two-cloths.json' --backend cpu --repeat 0 --out '" + out + "'").exitCode, 2);
  EXPECT_EQ(runTool("step '" + tempPath("missing.json") + "' --backend cpu --out '" + out + "'").exitCode, 2);
  EXPECT_EQ(runTool("compare").exitCode, 2);
  // --stats counts recorded Vulkan commands: refused on the CPU backends.
  EXPECT_EQ(runTool("step '" + kSamples + "two-cloths.json' --backend cpu --stats --out '" + out + "'").exitCode, 2);
  EXPECT_FALSE(fileExists(out));
}

// `step --stats` prints each stage's record figures and the H100 model's projection, one line per
// stage: the fused shape path records 1 dispatch for the scene's cloths.
TEST(SceneStepStatsVulkan, PrintsRecordStatsPerStage) {
  const std::string out = tempPath("stats-out.json");
  const ToolRun r = runTool("step '" + kSamples + "two-cloths.json' --backend vulkan --validation --stats --out '" + out + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("record stats"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("H100 model us"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("model, not a measurement"), std::string::npos) << r.output;
  const size_t line = r.output.find("\n  shapes  ", r.output.find("record stats"));
  ASSERT_NE(line, std::string::npos) << r.output;
  std::istringstream fields(r.output.substr(line + 1));
  std::string name;
  unsigned dispatches = 0, dependent = 0;
  fields >> name >> dispatches >> dependent;
  EXPECT_EQ(dispatches, 1u) << r.output;
  EXPECT_EQ(dependent, 1u) << r.output;
  std::remove(out.c_str());
}

// `--pipeline-cache FILE`: the file is created with the device's pipeline cache (a Vulkan pipeline
// cache header naming this device), read back by the next run, and a file of another device or of
// garbage is ignored and replaced; a path that cannot be read fails the run.
TEST(SceneStepPipelineCacheVulkan, CacheFileIsWrittenReadAndReplaced) {
  const std::string cache = tempPath("pipelines.bin");
  const std::string out = tempPath("cache-out.json");
  std::remove(cache.c_str());
  const std::string step = "step '" + kSamples + "two-cloths.json' --backend vulkan --validation --out '" + out +
                           "' --pipeline-cache '" + cache + "'";
  auto headerOf = [](const std::string& bytes) {
    std::vector<uint32_t> words(4, 0);
    for (size_t w = 0; w < 4 && bytes.size() >= 16; ++w) {
      for (int b = 3; b >= 0; --b) words[w] = words[w] << 8 | static_cast<unsigned char>(bytes[w * 4 + b]);
    }
    return words;
  };
  ToolRun r = runTool(step);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const std::string first = readText(cache);
  ASSERT_GE(first.size(), 32u);
  const std::vector<uint32_t> header = headerOf(first);
  EXPECT_GE(header[0], 32u);
  EXPECT_EQ(header[1], uint32_t{VK_PIPELINE_CACHE_HEADER_VERSION_ONE});
  const std::string result = readText(out);

  r = runTool(step);  // the file as it was written
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(readText(out), result);
  EXPECT_EQ(headerOf(readText(cache)), header);

  writeText(cache, "not a pipeline cache");
  r = runTool(step);
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(readText(out), result);
  EXPECT_EQ(headerOf(readText(cache)), header);  // replaced by this device's
  EXPECT_FALSE(fileExists(cache + ".tmp"));

  r = runTool("step '" + kSamples + "two-cloths.json' --backend vulkan --out '" + out + "' --pipeline-cache '" +
              ::testing::TempDir() + "'");  // a directory
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("--pipeline-cache: cannot read"), std::string::npos) << r.output;
  std::remove(cache.c_str());
  std::remove(out.c_str());
}

// Bad self- and inter-collision input is refused before anything runs (exit 2, the field named, no
// output).
TEST(SceneStepErrors, BadSelfCollisionInputExit2) {
  const struct {
    const char* sample;
    const char* what;
    std::string from, to, message;
  } cases[] = {
      {"self-collision-pairs.json", "negative distance", "\"distance\": 0.05", "\"distance\": -0.05", "distance"},
      {"self-collision-pairs.json", "stiffness above 1", "\"stiffness\": 1.0", "\"stiffness\": 1.5", "stiffness"},
      {"self-collision-pairs.json", "duplicate subset index", "\"selfCollisionIndices\": [0, 1,",
       "\"selfCollisionIndices\": [1, 1,", "subsets[0]"},
      {"self-collision-pairs.json", "rest positions for one cloth only", "\"restPositions\": [\n        [-0.49",
       "\"prevParticles\": [\n        [-0.49", "cloths[1].restPositions: absent, but cloths[0] has them"},
      {"inter-collision-cloths.json", "inter: zero distance", "\"distance\": 0.05", "\"distance\": 0",
       "inter collision: settings.distance"},
      {"inter-collision-cloths.json", "inter: stiffness above 1", "\"stiffness\": 1.0", "\"stiffness\": 1.5",
       "inter collision: settings.stiffness"},
      {"inter-collision-cloths.json", "inter: too many iterations", "\"iterations\": 2", "\"iterations\": 65",
       "inter collision: settings.iterations"},
      {"inter-collision-cloths.json", "inter: rotation not unit", "[0.0, 0.258819, 0.0, 0.9659258]",
       "[0.0, 0.5, 0.0, 0.9659258]", "inter collision: cloths[0].rotation has length"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    std::string text = readText(kSamples + c.sample);
    ASSERT_FALSE(text.empty()) << c.sample;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    const std::string in = tempPath("badself.json");
    const std::string out = tempPath("badself-out.json");
    writeText(in, text);
    std::remove(out.c_str());
    const ToolRun r = runTool("step '" + in + "' --backend cpu-scalar --out '" + out + "'");
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
    EXPECT_FALSE(fileExists(out));
    std::remove(in.c_str());
  }
}

// A stage the scene enables but this build lacks is refused, never skipped; stages the build has run.
TEST(SceneStepErrors, StagesThisBuildLacksAreRefused) {
  const ToolRun stages = runTool("stages");
  ASSERT_EQ(stages.exitCode, 0) << stages.output;
  ASSERT_NE(stages.output.find("shapes  available"), std::string::npos) << stages.output;
  EXPECT_NE(stages.output.find("inter   available"), std::string::npos) << stages.output;
  const std::string good = readText(kSamples + "two-cloths.json");
  const struct {
    const char* stage;
    const char* settings;
  } cases[] = {
      {"self", "\"selfCollision\": {\"distance\": 0.01, \"stiffness\": 0.5}, "},
      {"inter", "\"interCollision\": {\"distance\": 0.01, \"stiffness\": 0.5}, "},
  };
  int refused = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.stage);
    std::string text = good;
    const size_t at = text.find("\"continuousCollision\"");
    ASSERT_NE(at, std::string::npos);
    text.insert(at, c.settings);
    const std::string in = tempPath("stage.json");
    const std::string out = tempPath("stage-out.json");
    writeText(in, text);
    std::remove(out.c_str());
    const bool built = stages.output.find(std::string(c.stage) + std::string(7 - std::strlen(c.stage), ' ') +
                                          " available") != std::string::npos;
    const ToolRun r = runTool("step '" + in + "' --backend cpu --out '" + out + "'");
    if (built) {
      EXPECT_EQ(r.exitCode, 0) << r.output;
    } else {
      ++refused;
      EXPECT_EQ(r.exitCode, 2) << r.output;
      EXPECT_NE(r.output.find("enables the " + std::string(c.stage) + " collision stage"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("does not have yet"), std::string::npos) << r.output;
      EXPECT_FALSE(fileExists(out));
    }
    std::remove(in.c_str());
    std::remove(out.c_str());
  }
  RecordProperty("refused", refused);
}

// compare runs Vulkan too where a device exists (lavapipe here), hence "Vulkan" in the name.
TEST(SceneCompareVulkan, SamplesAgree) {
  for (const char* sample :
       {"sphere-and-capsule.json", "two-cloths.json", "ccd-fast-strip.json", "self-collision-pairs.json",
        "inter-collision-cloths.json", "planes-and-convexes.json"}) {
    SCOPED_TRACE(sample);
    const ToolRun r = runTool("compare '" + kSamples + sample + "' --repeat 2 --validation");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("every backend agrees with cpu-scalar"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("cpu-simd"), std::string::npos) << r.output;
    const bool inter = std::string(sample) == "inter-collision-cloths.json";  // no shapes: no masks
    EXPECT_NE(r.output.find(inter ? "vulkan device" : "masks equal"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("BEYOND"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("DIFFER"), std::string::npos) << r.output;
    if (std::string(sample) == "self-collision-pairs.json") {
      // Both cloths, on both other backends: keys, pairs and counts equal.
      size_t rows = 0;
      for (size_t at = 0; (at = r.output.find("keys equal, pairs equal (", at)) != std::string::npos; ++at) ++rows;
      EXPECT_EQ(rows, 4u) << r.output;
    }
    if (std::string(sample) == "planes-and-convexes.json") {
      // Every convex kept by the cull on both other backends (each holds particles at the end).
      size_t rows = 0;
      for (size_t at = 0; (at = r.output.find("convexes kept equal (3 of 3)", at)) != std::string::npos; ++at) ++rows;
      EXPECT_EQ(rows, 2u) << r.output;
      EXPECT_NE(r.output.find("colliders: 0 spheres, 0 capsules, 11 planes (1 moving) in 3 convexes"), std::string::npos)
          << r.output;
    }
    if (inter) {
      // The three cloths, on both other backends: cloth pairs, marked particles and contacts equal;
      // the two sheets are a cloth pair, the filtered patch is in none.
      size_t rows = 0;
      for (size_t at = 0; (at = r.output.find("cloth pairs equal (", at)) != std::string::npos; ++at) ++rows;
      EXPECT_EQ(rows, 6u) << r.output;
      EXPECT_NE(r.output.find("cloth pairs equal (1), marked equal ("), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("cloth pairs equal (0), marked equal (0), contacts equal"), std::string::npos) << r.output;
    }
  }
}

TEST(SceneCompareVulkan, DoctoredResultsFail) {
  const std::string scene = "'" + kSamples + "two-cloths.json'";
  ToolRun r = runTool("compare " + scene + " --perturb-backend cpu 1e-2");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("BEYOND TOLERANCE"), std::string::npos) << r.output;
  // Just inside the tolerance still passes (positions are within |x| <= 1.3: 1e-4 * (1 + 1.3) > 5e-5).
  r = runTool("compare " + scene + " --perturb-backend cpu 5e-5");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  r = runTool("compare " + scene + " --perturb-mask cpu");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("masks DIFFER"), std::string::npos) << r.output;
  r = runTool("compare " + scene + " --perturb-backend vulkan 1e-2");
  EXPECT_EQ(r.exitCode, 1) << r.output;
}

// `compare` of `scene` with the CPU's `what` doctored (--perturb-<stage> cpu <what>) fails on
// "<what> DIFFER" alone, for each `what`: no row is beyond tolerance.
void expectDoctoredDiffers(const std::string& scene, const std::string& stage,
                           std::initializer_list<const char*> whats) {
  for (const char* what : whats) {
    SCOPED_TRACE(what);
    const ToolRun r = runTool("compare " + scene + " --perturb-" + stage + " cpu " + what);
    EXPECT_EQ(r.exitCode, 1) << r.output;
    EXPECT_NE(r.output.find(std::string(what) + " DIFFER"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("BEYOND"), std::string::npos) << r.output;
  }
}

// The rows of a compare output that are beyond tolerance; each must be one of `stage`'s rows.
size_t beyondRowsOf(const std::string& output, const std::string& stage) {
  size_t beyond = 0;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("BEYOND TOLERANCE") == std::string::npos) continue;
    ++beyond;
    EXPECT_EQ(line.find("  " + stage + " "), 0u) << line;
  }
  return beyond;
}

// Doctored self-collision results fail compare, and only the self rows: each stage is compared on
// the same input, so a difference is blamed on the stage that made it.
TEST(SceneCompareVulkan, DoctoredSelfResultsFail) {
  const std::string scene = "'" + kSamples + "self-collision-pairs.json'";
  expectDoctoredDiffers(scene, "self", {"keys", "pairs", "counts"});
  ToolRun r = runTool("compare " + scene + " --perturb-backend vulkan 1e-3 --perturb-stage self");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_EQ(beyondRowsOf(r.output, "self"), 2u) << r.output;  // the two cloths' self rows of Vulkan
  // Just inside the self tolerance still passes (|x| <= 0.5: 1e-5 * (1 + 0.5) > 5e-6).
  r = runTool("compare " + scene + " --perturb-backend cpu 5e-6 --perturb-stage self");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(runTool("compare " + scene + " --perturb-self cpu sizes").exitCode, 2);
}

// Doctored inter-collision results fail compare, and only the inter rows.
TEST(SceneCompareVulkan, DoctoredInterResultsFail) {
  const std::string scene = "'" + kSamples + "inter-collision-cloths.json'";
  expectDoctoredDiffers(scene, "inter", {"pairs", "marked", "contacts"});
  ToolRun r = runTool("compare " + scene + " --perturb-inter vulkan contacts");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("contacts DIFFER"), std::string::npos) << r.output;
  r = runTool("compare " + scene + " --perturb-backend vulkan 1e-3 --perturb-stage inter");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_EQ(beyondRowsOf(r.output, "inter"), 3u) << r.output;  // the three cloths' inter rows of Vulkan
  // Just inside the tolerance still passes (|x| <= 0.8: 1e-5 * (1 + 0.8) > 5e-6).
  r = runTool("compare " + scene + " --perturb-backend cpu 5e-6 --perturb-stage inter");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(runTool("compare " + scene + " --perturb-inter cpu keys").exitCode, 2);
}

// The NvCloth drape scene enables self collision: step runs shapes then self; with --skip self only
// the shape stage runs (and the output says so). Both outputs are loadable scenes.
TEST(SceneStepErrors, DrapeSceneInTheTool) {
  const std::string drape = "'" + std::string(VKC_SOURCE_DIR) + "/bench/scenes/nvcloth-drape-64.json'";
  const std::string out = tempPath("drape-out.json.gz");
  const std::string outSkipped = tempPath("drape-out-skipped.json.gz");
  std::remove(out.c_str());
  const ToolRun r = runTool("step " + drape + " --backend cpu --out '" + out + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("stages: shapes, self;"), std::string::npos) << r.output;
  const ToolRun skipped = runTool("step " + drape + " --backend cpu --skip self --out '" + outSkipped + "'");
  ASSERT_EQ(skipped.exitCode, 0) << skipped.output;
  EXPECT_NE(skipped.output.find("enabled but skipped: self"), std::string::npos) << skipped.output;
  Result<Scene> before = loadScene(std::string(VKC_SOURCE_DIR) + "/bench/scenes/nvcloth-drape-64.json");
  Result<Scene> after = loadScene(out);
  Result<Scene> afterShapes = loadScene(outSkipped);
  ASSERT_TRUE(before && after && afterShapes);
  ASSERT_EQ(after->cloths[0].particles.size(), 4096u);
  EXPECT_EQ(after->settings, before->settings);  // the settings are written back as they were
  size_t changed = 0, changedBySelf = 0;
  for (size_t i = 0; i < 4096; ++i) {
    changed += !samePosition(afterShapes->cloths[0].particles[i], before->cloths[0].particles[i]);
    changedBySelf += !samePosition(after->cloths[0].particles[i], afterShapes->cloths[0].particles[i]);
  }
  EXPECT_GT(changed, 100u);       // the drape rests on its sphere and capsule
  EXPECT_GT(changedBySelf, 10u);  // and its folds self-collide
  EXPECT_EQ(runTool("step " + drape + " --backend cpu --skip selfie --out '" + out + "'").exitCode, 2);
  std::remove(out.c_str());
  std::remove(outSkipped.c_str());
}

// Shapes and self collision of the 64 x 64 drape agree on every backend, and a doctored self result
// of Vulkan fails.
TEST(SceneCompareVulkan, DrapeAgrees) {
  const std::string drape = "'" + std::string(VKC_SOURCE_DIR) + "/bench/scenes/nvcloth-drape-64.json'";
  ToolRun r = runTool("compare " + drape + " --validation");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("stages: shapes, self;"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("masks equal"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("keys equal, pairs equal"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("every backend agrees with cpu-scalar"), std::string::npos) << r.output;
  r = runTool("compare " + drape + " --perturb-self vulkan pairs");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("pairs DIFFER"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace vkc

#endif  // VKC_TOOL_PATH
