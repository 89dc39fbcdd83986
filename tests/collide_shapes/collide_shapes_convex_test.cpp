// Planes and convexes, one test body per backend: closed-form answers (a box as 6 planes, a
// half-space, a particle in two convexes, unnormalized and moving planes), continuous collision
// against thin slabs and walls that move toward the particles (and the same cases tunnelling without
// CCD), random convexes mixed with spheres and capsules against the CPU scalar reference and against
// a brute-force double-precision model of the rules written here, and 100 Vulkan reruns bitwise equal.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>

#include "collide_shapes/shapes_test_support.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using namespace shapes;
using ShapeConvexes = BackendTest;

// Tolerance of a position of magnitude ~m: the stage's.
double tol(double m) { return static_cast<double>(kShapeCollisionTolerance) * (1.0 + std::abs(m)); }

struct Plane {
  V3 n;  // unit
  double d;
  double distance(V3 p) const { return dot(n, p) + d; }
};
Plane planeOf(const Float4& f) {
  const V3 raw = xyz(f);
  const double len = length(raw);
  return {raw * (1.0 / len), static_cast<double>(f.w) / len};
}

// The 6 planes of the box centre +- half (outward normals; inside: n.x + d < 0).
std::vector<Float4> boxPlanes(V3 c, V3 h) {
  return {{1, 0, 0, static_cast<float>(-(c.x + h.x))}, {-1, 0, 0, static_cast<float>(c.x - h.x)},
          {0, 1, 0, static_cast<float>(-(c.y + h.y))}, {0, -1, 0, static_cast<float>(c.y - h.y)},
          {0, 0, 1, static_cast<float>(-(c.z + h.z))}, {0, 0, -1, static_cast<float>(c.z - h.z)}};
}

// Discrete rule in double precision: the push of p out of the convex (zero vector and false if outside).
bool convexPush(const std::vector<Plane>& planes, const std::vector<uint32_t>& list, V3 p, V3& push) {
  double best = -INFINITY;
  V3 n;
  for (uint32_t k : list) {
    const double dist = planes[k].distance(p);
    if (!(dist < 0)) return false;
    if (dist > best) {
      best = dist;
      n = planes[k].n;
    }
  }
  push = n * -best;
  return true;
}

TEST_P(ShapeConvexes, BoxPushesInsideParticlesOntoTheNearestFaceByTheirDepth) {
  const V3 centre{0.3, -0.2, 0.1}, half{1.0, 0.5, 2.0};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Float4> p;
  for (int i = 0; i < 2000; ++i) {
    // Half inside, half outside (up to twice the box).
    const double k = i % 2 == 0 ? 0.98 : 2.0;
    p.push_back(toFloat4(centre + V3{half.x * u(rng), half.y * u(rng), half.z * u(rng)} * k, 1.0f));
  }
  Scene s;
  s.addCloth(p, {}, {});
  s.setConvexes(0, boxPlanes(centre, half), {{0, 1, 2, 3, 4, 5}});
  const Scene before = s;
  collide(backend(), ctx(), s);
  size_t inside = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const V3 x = xyz(before.particles[i]);
    const V3 lo = centre - half, hi = centre + half;
    const bool in = x.x > lo.x && x.x < hi.x && x.y > lo.y && x.y < hi.y && x.z > lo.z && x.z < hi.z;
    if (!in) {
      EXPECT_TRUE(bitwiseEqual(s.particles[i], before.particles[i])) << i << " " << str(s.particles[i]);
      EXPECT_TRUE(bitwiseEqual(s.prev[i], before.prev[i])) << i;
      continue;
    }
    ++inside;
    // The nearest face and its depth, in double precision.
    const double depths[6] = {hi.x - x.x, x.x - lo.x, hi.y - x.y, x.y - lo.y, hi.z - x.z, x.z - lo.z};
    const V3 normals[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    const int face = static_cast<int>(std::min_element(depths, depths + 6) - depths);
    const V3 want = x + normals[face] * depths[face];
    const V3 got = xyz(s.particles[i]);
    EXPECT_NEAR(got.x, want.x, tol(want.x)) << i;
    EXPECT_NEAR(got.y, want.y, tol(want.y)) << i;
    EXPECT_NEAR(got.z, want.z, tol(want.z)) << i;
  }
  EXPECT_GT(inside, 900u);
}

TEST_P(ShapeConvexes, HalfSpacePushesStraightUpAndLeavesTheRestBitwise) {
  // A ground plane at y = -0.5 given with an unnormalized normal: inside is y < -0.5.
  std::vector<Float4> p;
  for (int i = 0; i < 300; ++i) {
    const float x = -3.0f + 0.02f * static_cast<float>(i), y = -1.0f + 0.005f * static_cast<float>(i);
    p.push_back({x, y, 0.25f * x, 1.0f});
  }
  Scene s;
  s.addCloth(p, {}, {});
  s.setConvexes(0, {{0, 4, 0, 2}}, {{0}});
  const Scene before = s;
  collide(backend(), ctx(), s);
  for (size_t i = 0; i < p.size(); ++i) {
    const Float4 a = before.particles[i], b = s.particles[i];
    if (a.y >= -0.5f) {
      EXPECT_TRUE(bitwiseEqual(a, b)) << i;
      continue;
    }
    EXPECT_EQ(b.x, a.x) << i;  // straight up: x and z exactly unchanged
    EXPECT_EQ(b.z, a.z) << i;
    EXPECT_NEAR(b.y, -0.5, tol(0.5)) << i;
  }
}

TEST_P(ShapeConvexes, ParticleInsideTwoConvexesGetsTheAveragedPush) {
  // Two overlapping boxes; the particles in their intersection get the mean of the two pushes.
  const V3 c0{0, 0, 0}, h0{1, 1, 1}, c1{0.8, 0.3, 0}, h1{0.6, 0.9, 1.5};
  std::vector<Float4> planes = boxPlanes(c0, h0);
  for (const Float4& f : boxPlanes(c1, h1)) planes.push_back(f);
  std::vector<Plane> exact;
  for (const Float4& f : planes) exact.push_back(planeOf(f));
  const std::vector<std::vector<uint32_t>> lists = {{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}};
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Float4> p;
  for (int i = 0; i < 500; ++i) p.push_back(toFloat4(V3{0.8, 0.3, 0} + V3{u(rng), u(rng), u(rng)} * 0.55, 1.0f));
  Scene s;
  s.addCloth(p, {}, {});
  s.setConvexes(0, planes, lists);
  const Scene before = s;
  collide(backend(), ctx(), s);
  size_t both = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const V3 x = xyz(before.particles[i]);
    V3 a, b;
    const bool inA = convexPush(exact, lists[0], x, a), inB = convexPush(exact, lists[1], x, b);
    if (!inA || !inB) continue;
    ++both;
    const V3 want = x + (a + b) * 0.5;
    const V3 got = xyz(s.particles[i]);
    EXPECT_NEAR(got.x, want.x, tol(want.x)) << i;
    EXPECT_NEAR(got.y, want.y, tol(want.y)) << i;
    EXPECT_NEAR(got.z, want.z, tol(want.z)) << i;
  }
  EXPECT_GT(both, 200u);
}

TEST_P(ShapeConvexes, MovingPlaneIsInterpolatedToTheIterationsEnd) {
  // The ground rises from y = 0 to y = 1 over the frame, tilting from +y toward +x; this iteration
  // ends at alpha = 0.5: the plane there is the normalized mix of the two normalized planes.
  const Float4 start{0, 1, 0, 0}, end{0.6f, 0.8f, 0, -1};
  Scene s;
  std::vector<Float4> p;
  for (int i = 0; i < 100; ++i) p.push_back({-1.0f + 0.02f * static_cast<float>(i), 0.2f, 0.1f, 1.0f});
  s.addCloth(p, {}, {});
  s.setConvexes(0, {end}, {{0}}, {start});
  s.settings.alphaBegin = 0.25f;
  s.settings.alphaEnd = 0.5f;
  const Scene before = s;
  collide(backend(), ctx(), s);
  const V3 n = normalize(V3{0.3, 0.9, 0});
  const double d = -0.5 / length(V3{0.3, 0.9, 0});
  for (size_t i = 0; i < p.size(); ++i) {
    const V3 x = xyz(before.particles[i]);
    const double dist = dot(n, x) + d;
    const V3 want = dist < 0 ? x - n * dist : x;
    const V3 got = xyz(s.particles[i]);
    EXPECT_NEAR(got.x, want.x, tol(want.x)) << i;
    EXPECT_NEAR(got.y, want.y, tol(want.y)) << i;
  }
}

// A slab of thickness `thickness` with unit normal n through the origin: the convex n.x - 0 < 0 and
// -n.x - thickness < 0, i.e. -thickness < n.x < 0.
std::vector<Float4> slab(V3 n, double offset, double thickness) {
  return {toFloat4(n, static_cast<float>(offset)), toFloat4(n * -1.0, static_cast<float>(-offset - thickness))};
}

struct Tunnel {
  size_t stayed = 0, crossed = 0;
};

// 10k particles moving fast across a 1 mm slab (tilted), from 1-50 cm above to 1-50 cm below.
Tunnel fastParticlesThroughASlab(Backend backend, Context* ctx, bool continuous) {
  const V3 n = normalize(V3{0.2, 1.0, -0.3});
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0), depth(0.01, 0.5);
  std::vector<Float4> p, q;
  const V3 t1 = Hull::anyPerpendicular(n), t2 = cross(n, t1);
  for (int i = 0; i < 10000; ++i) {
    const V3 at = t1 * (3 * u(rng)) + t2 * (3 * u(rng));
    q.push_back(toFloat4(at + n * depth(rng) + t1 * (0.1 * u(rng)), 1.0f));
    p.push_back(toFloat4(at - n * (0.001 + depth(rng)), 1.0f));
  }
  Scene s;
  s.addCloth(p, q, {});
  s.setConvexes(0, slab(n, 0.0, 0.001), {{0, 1}});
  s.settings.continuous = continuous;
  EXPECT_NO_FATAL_FAILURE(collide(backend, ctx, s));
  Tunnel r;
  for (const Float4& x : s.particles) (dot(n, xyz(x)) > -1e-5 ? r.stayed : r.crossed)++;
  return r;
}

// 10k particles at rest in front of a 1 mm wall that moves 1 m toward and past them in one iteration.
Tunnel wallMovingThroughParticles(Backend backend, Context* ctx, bool continuous) {
  const V3 n = normalize(V3{-1.0, 0.1, 0.05});  // the wall's front faces +n; it moves along +n
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> u(-1.0, 1.0), x(-0.4, 0.4);
  std::vector<Float4> p;
  for (int i = 0; i < 10000; ++i) p.push_back(toFloat4(V3{x(rng), 0.5 * u(rng), 0.5 * u(rng)}, 1.0f));
  Scene s;
  s.addCloth(p, {}, {});
  // The slab -0.501 < n.x < -0.5 at the frame's start (behind the particles, |n.x| < 0.48), and
  // 0.499 < n.x < 0.5 at its end (past them).
  s.setConvexes(0, slab(n, -0.5, 0.001), {{0, 1}}, slab(n, 0.5, 0.001));
  s.settings.continuous = continuous;
  EXPECT_NO_FATAL_FAILURE(collide(backend, ctx, s));
  // The side they came from: in front of the wall's end position, n.x >= 0.5.
  Tunnel r;
  for (const Float4& f : s.particles) (dot(n, xyz(f)) - 0.5 > -1e-5 ? r.stayed : r.crossed)++;
  return r;
}

TEST_P(ShapeConvexes, ContinuousStopsFastParticlesAtAThinSlabThatDiscreteMisses) {
  const Tunnel ccd = fastParticlesThroughASlab(backend(), ctx(), true);
  EXPECT_EQ(ccd.crossed, 0u);
  const Tunnel discrete = fastParticlesThroughASlab(backend(), ctx(), false);
  EXPECT_EQ(discrete.stayed, 0u);  // every one tunnels without CCD
}

TEST_P(ShapeConvexes, ContinuousStopsAWallMovingThroughParticlesThatDiscreteMisses) {
  const Tunnel ccd = wallMovingThroughParticles(backend(), ctx(), true);
  EXPECT_EQ(ccd.crossed, 0u);
  const Tunnel discrete = wallMovingThroughParticles(backend(), ctx(), false);
  EXPECT_EQ(discrete.stayed, 0u);
}

TEST_P(ShapeConvexes, ContinuousKeepsTheEntrySideOfADeepBoxAndTheSlidingMotion) {
  // Particles enter a box through its top and end below its middle: discrete pushes them out of the
  // bottom (nearest face), continuous back onto the top, with their motion along the top kept.
  const V3 centre{0, 0, 0}, half{2, 0.2, 2};
  std::vector<Float4> p, q;
  for (int i = 0; i < 200; ++i) {
    const double x = -1.5 + 0.015 * i;
    q.push_back(toFloat4(V3{x, 0.3, 0.5}, 1.0f));
    p.push_back(toFloat4(V3{x + 0.1, -0.15, 0.5}, 1.0f));
  }
  for (bool continuous : {true, false}) {
    Scene s;
    s.addCloth(p, q, {});
    s.setConvexes(0, boxPlanes(centre, half), {{0, 1, 2, 3, 4, 5}});
    s.settings.continuous = continuous;
    collide(backend(), ctx(), s);
    for (size_t i = 0; i < p.size(); ++i) {
      const Float4 f = s.particles[i];
      if (continuous) {
        EXPECT_NEAR(f.y, 0.2, tol(0.2)) << i;
        EXPECT_NEAR(f.x, p[i].x, tol(p[i].x)) << i;  // the sliding motion is kept
      } else {
        EXPECT_NEAR(f.y, -0.2, tol(0.2)) << i;
      }
    }
  }
}

// ---- random convexes with spheres and capsules: against the reference and a brute-force model ----

// Random convexes around `origin` (4-20 planes each, tangent to a ball of random radius around a
// random centre, so that each is bounded and has particles inside), some moving and tilting between
// the frame's start and end; planes may be shared between convexes.
void addRandomConvexes(Scene& s, uint32_t cloth, std::mt19937& rng, V3 origin, uint32_t convexCount) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Float4> planes, prevPlanes;
  std::vector<std::vector<uint32_t>> lists;
  for (uint32_t k = 0; k < convexCount; ++k) {
    const V3 c = origin + V3{u(rng), u(rng), u(rng)} * 1.4;
    const double r = 0.15 + 0.3 * std::abs(u(rng));
    const uint32_t count = 4 + static_cast<uint32_t>(rng() % 17);
    const V3 motion = k % 3 == 0 ? V3{u(rng), u(rng), u(rng)} * 0.1 : V3{};
    std::vector<uint32_t> list;
    for (uint32_t j = 0; j < count; ++j) {
      if (!planes.empty() && rng() % 8 == 0) {  // a shared plane
        list.push_back(static_cast<uint32_t>(rng() % planes.size()));
        continue;
      }
      const V3 n = randomUnit(rng);
      const double scale = 0.5 + 2 * std::abs(u(rng));  // unnormalized on input
      planes.push_back(toFloat4(n * scale, static_cast<float>(-(dot(n, c) + r) * scale)));
      const V3 n0 = normalize(n + randomUnit(rng) * 0.05);
      const V3 c0 = c - motion;
      prevPlanes.push_back(toFloat4(n0, static_cast<float>(-(dot(n0, c0) + r))));
      list.push_back(static_cast<uint32_t>(planes.size() - 1));
    }
    lists.push_back(list);
  }
  s.setConvexes(cloth, planes, lists, prevPlanes);
}

// A cloth of n particles near `origin` with spheres, capsules and convexes.
void addMixedCloth(Scene& s, std::mt19937& rng, V3 origin, uint32_t n, uint32_t spheres, uint32_t capsules,
                   uint32_t convexCount) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Float4> p, q, sp;
  for (uint32_t i = 0; i < n; ++i) {
    const V3 x = origin + V3{u(rng), u(rng), u(rng)} * 1.5;
    const float w = i % 11 == 0 ? 0.0f : static_cast<float>(0.5 + std::abs(u(rng)));
    p.push_back(toFloat4(x, w));
    q.push_back(toFloat4(x + V3{u(rng), u(rng), u(rng)} * 0.1, w));
  }
  for (uint32_t k = 0; k < spheres; ++k) {
    sp.push_back(toFloat4(origin + V3{u(rng), u(rng), u(rng)} * 1.6, static_cast<float>(0.1 + 0.25 * std::abs(u(rng)))));
  }
  std::vector<Capsule> caps;
  for (uint32_t k = 0; k < capsules && spheres > 1; ++k) {
    const uint32_t a = static_cast<uint32_t>(rng() % spheres);
    caps.push_back({a, static_cast<uint32_t>((a + 1 + rng() % (spheres - 1)) % spheres)});
  }
  const uint32_t c = s.addCloth(p, q, sp, caps);
  addRandomConvexes(s, c, rng, origin, convexCount);
}

// The brute-force model, convexes only (no spheres): every convex of every cloth, no culling, double
// precision, discrete and continuous, no friction and no mass scaling. Returns the expected positions.
std::vector<V3> bruteForceConvexes(const Scene& s) {
  std::vector<V3> out;
  const ShapeCollisionSettings& st = s.settings;
  for (size_t c = 0; c < s.cloths.size(); ++c) {
    std::vector<Plane> p0, p1;
    for (size_t k = 0; k < s.planes[c].size(); ++k) {
      const Plane e = planeOf(s.planes[c][k]);
      const Plane b = s.prevPlanes[c].empty() ? e : planeOf(s.prevPlanes[c][k]);
      auto at = [&](double alpha) {
        const V3 n = b.n * (1 - alpha) + e.n * alpha;
        const double d = b.d * (1 - alpha) + e.d * alpha, len = length(n);
        return Plane{n * (1 / len), d / len};
      };
      p0.push_back(at(st.alphaBegin));
      p1.push_back(at(st.alphaEnd));
    }
    for (uint32_t i = s.cloths[c].first; i < s.cloths[c].first + s.cloths[c].count; ++i) {
      const V3 pos = xyz(s.particles[i]), old = xyz(s.prev[i]);
      if (s.prev[i].w == 0) {
        out.push_back(pos);
        continue;
      }
      V3 sum{};
      int count = 0;
      for (const std::vector<uint32_t>& list : s.convexPlaneLists[c]) {
        V3 target = pos;
        bool entered = false;
        if (st.continuous) {
          double tIn = 0, tOut = 1;
          int entry = -1;
          bool never = false;
          for (uint32_t k : list) {
            const double a = p0[k].distance(old), b = p1[k].distance(pos);
            if (a < 0 && b < 0) continue;
            if (a >= 0 && b >= 0) {
              never = true;
              break;
            }
            const double t = a / (a - b);
            if (a < 0) {
              tOut = std::min(tOut, t);
            } else if (entry < 0 || t > tIn) {
              tIn = t;
              entry = static_cast<int>(k);
            }
          }
          if (!never && entry >= 0 && tIn < tOut) {
            entered = true;
            target = pos - p1[entry].n * p1[entry].distance(pos);
          }
        }
        V3 push{};
        double best = -INFINITY;
        bool inside = true;
        for (uint32_t k : list) {
          const double dist = p1[k].distance(target);
          if (!(dist < 0)) {
            inside = false;
            break;
          }
          if (dist > best) {
            best = dist;
            push = p1[k].n * -dist;
          }
        }
        if (!inside) push = {};
        if (!inside && !entered) continue;
        sum = sum + (target + push - pos);
        ++count;
      }
      out.push_back(count > 0 ? pos + sum * (1.0 / count) : pos);
    }
  }
  return out;
}

// Positions agree with the model except where a particle lies within rounding of a decision (a plane,
// an entry time equal to an exit time): a handful at most.
void expectMatchesModel(const Scene& before, const Scene& after, size_t& moved) {
  const std::vector<V3> want = bruteForceConvexes(before);
  size_t off = 0;
  moved = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const V3 got = xyz(after.particles[i]);
    const double err = length(got - want[i]);
    if (!(err <= 10 * tol(length(want[i])))) {
      if (off++ < 5) {
        std::printf("  particle %zu: got %s, model (%g, %g, %g)\n", i, str(after.particles[i]).c_str(), want[i].x,
                    want[i].y, want[i].z);
      }
    }
    moved += !bitwiseEqual(before.particles[i], after.particles[i]);
  }
  EXPECT_LE(off, 3u) << "particles off the model (near-ties of two planes' distances or entry times may differ)";
}

const ShapeCollisionSettings kModelVariants[] = {
    {},
    {.alphaBegin = 0.25f, .alphaEnd = 0.75f},
    {.continuous = true},
    {.continuous = true, .alphaBegin = 0.5f, .alphaEnd = 1.0f},
};

TEST_P(ShapeConvexes, RandomConvexesMatchTheBruteForceModel) {
  std::mt19937 rng(21);
  Scene s;
  addMixedCloth(s, rng, {0, 0, 0}, 3000, 0, 0, 120);
  addMixedCloth(s, rng, {6, 0, 0}, 65, 0, 0, 40);
  addMixedCloth(s, rng, {-6, 0, 0}, 0, 0, 0, 3);
  for (const ShapeCollisionSettings& v : kModelVariants) {
    SCOPED_TRACE(std::string(v.continuous ? "continuous" : "discrete") + " alpha " + std::to_string(v.alphaEnd));
    Scene before = s;
    before.settings = v;
    Scene after = before;
    collide(backend(), ctx(), after);
    size_t moved = 0;
    expectMatchesModel(before, after, moved);
    EXPECT_GT(moved, 300u);
  }
}

void expectNear(const std::vector<Float4>& got, const std::vector<Float4>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const float g[4] = {got[i].x, got[i].y, got[i].z, got[i].w}, w[4] = {want[i].x, want[i].y, want[i].z, want[i].w};
    for (int k = 0; k < 4; ++k) {
      if (!(std::abs(g[k] - w[k]) <= kShapeCollisionTolerance * (1.0f + std::abs(w[k]))) && reported++ < 5) {
        ADD_FAILURE() << what << "[" << i << "]." << "xyzw"[k] << ": got " << g[k] << ", reference " << w[k];
      }
    }
  }
}

const ShapeCollisionSettings kMixedVariants[] = {
    {},
    {.friction = 0.6f, .collisionMassScale = 4.0f},
    {.continuous = true, .alphaBegin = 0.25f, .alphaEnd = 0.5f},
    {.continuous = true, .friction = 0.3f, .collisionMassScale = 1.5f, .alphaBegin = 0.5f, .alphaEnd = 1.0f},
};

TEST_P(ShapeConvexes, HundredsOfRandomConvexesWithSpheresAndCapsulesMatchTheReference) {
  std::mt19937 rng(22);
  Scene s;
  addMixedCloth(s, rng, {0, 0, 0}, 4000, 40, 20, 300);  // 300 convexes: 10 convex words
  addMixedCloth(s, rng, {6, 0, 0}, 700, 3, 1, 33);
  addMixedCloth(s, rng, {12, 0, 0}, 63, 0, 0, 1);
  addMixedCloth(s, rng, {18, 0, 0}, 100, 5, 2, 0);
  for (const ShapeCollisionSettings& v : kMixedVariants) {
    SCOPED_TRACE(std::string(v.continuous ? "continuous" : "discrete") + " friction " + std::to_string(v.friction));
    Scene got = s, ref = s;
    got.settings = ref.settings = v;
    collide(backend(), ctx(), got);
    ASSERT_TRUE(collideShapesCpu(ref.input(), Backend::kCpuScalar).ok());
    expectNear(got.particles, ref.particles, "particles");
    expectNear(got.prev, ref.prev, "prevParticles");
    size_t moved = 0;
    for (size_t i = 0; i < s.particles.size(); ++i) moved += !bitwiseEqual(s.particles[i], ref.particles[i]);
    EXPECT_GT(moved, 1000u);
  }
}

TEST_P(ShapeConvexes, ConvexesFarFromTheClothAreCulledWithoutChangingAnything) {
  // The same cloth with and without 200 convexes far away: those are culled (their bits are 0) and
  // the result is bitwise the same, on every backend; the near convexes that hold particles are kept.
  std::mt19937 rng(23);
  Scene near;
  addMixedCloth(near, rng, {0, 0, 0}, 1000, 4, 2, 20);
  Scene far = near;
  std::vector<Float4> planes = near.planes[0], prevPlanes = near.prevPlanes[0];
  std::vector<std::vector<uint32_t>> lists = near.convexPlaneLists[0];
  for (int k = 0; k < 200; ++k) {
    const V3 c{50.0 + k, -40.0, 30.0};
    const uint32_t first = static_cast<uint32_t>(planes.size());
    for (const Float4& f : boxPlanes(c, {1, 1, 1})) {
      planes.push_back(f);
      prevPlanes.push_back(f);
    }
    lists.push_back({first, first + 1, first + 2, first + 3, first + 4, first + 5});
  }
  far.setConvexes(0, planes, lists, prevPlanes);
  for (bool continuous : {false, true}) {
    Scene a = near, b = far;
    a.settings.continuous = b.settings.continuous = continuous;
    ShapeCollisionDebug debug;
    collide(backend(), ctx(), a);
    collide(backend(), ctx(), b, &debug);
    for (size_t i = 0; i < a.particles.size(); ++i) {
      ASSERT_TRUE(bitwiseEqual(a.particles[i], b.particles[i])) << i;
      ASSERT_TRUE(bitwiseEqual(a.prev[i], b.prev[i])) << i;
    }
    ASSERT_EQ(debug.convexBits.size(), (220u + 31u) / 32u);
    auto kept = [&](uint32_t k) { return (debug.convexBits[k / 32] >> (k % 32) & 1u) != 0; };
    uint32_t nearKept = 0;
    for (uint32_t k = 0; k < 20; ++k) nearKept += kept(k);
    EXPECT_GE(nearKept, 15u);  // random convexes around the particles' box: nearly all reach it
    for (uint32_t k = 20; k < 220; ++k) EXPECT_FALSE(kept(k)) << "far convex " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ShapeConvexes, VKC_ALL_BACKENDS);

// 100 runs of one stage on the same input: bitwise identical.
using ShapeConvexDeterminismVulkan = VulkanTest;

TEST_F(ShapeConvexDeterminismVulkan, HundredRerunsAreBitwiseIdentical) {
  std::mt19937 rng(24);
  Scene s;
  addMixedCloth(s, rng, {0, 0, 0}, 2000, 16, 8, 60);
  s.settings = {.continuous = true, .friction = 0.4f, .collisionMassScale = 1.0f};
  const ShapeCollisionInput in = s.input();
  auto stage = ShapeCollisionStage::create(
      ctx(), {.cloths = s.cloths, .particleCount = static_cast<uint32_t>(s.particles.size()), .colliders = in.colliders});
  ASSERT_TRUE(stage.ok()) << stage.message();
  Scene first = s;
  ASSERT_TRUE((*stage)->run(first.input()).ok());
  for (int run = 1; run < 100; ++run) {
    Scene again = s;
    ASSERT_TRUE((*stage)->run(again.input()).ok());
    ASSERT_EQ(std::memcmp(again.particles.data(), first.particles.data(), s.particles.size() * sizeof(Float4)), 0)
        << "run " << run;
    ASSERT_EQ(std::memcmp(again.prev.data(), first.prev.data(), s.prev.size() * sizeof(Float4)), 0) << "run " << run;
  }
}

}  // namespace
}  // namespace vkc::test
