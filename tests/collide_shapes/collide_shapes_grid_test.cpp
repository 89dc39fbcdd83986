// The sphere grid against brute force, one body per backend: on random scenes (thousands of
// particles, 100+ spheres, 50+ capsules, some spheres far outside the particles) every particle-shape
// pair in contact (tested against every shape with the tests' own geometry) has the shape's bit set
// in the particle's grid cell (discrete) or swept cell range (CCD). A clear bit there is a dropped
// pair. End to end: every particle in contact moves, every particle clear of all shapes does not.
//
// The cell a particle looks up comes from the grid box, which the engine defines (makeGrid in
// shaders/shared/collide_shapes_math.h: the particles' box intersected with the spheres', padded,
// power-of-two scale); the test computes both boxes itself and calls makeGrid for the box only.
#include <gtest/gtest.h>

#include <limits>

#include "collide_shapes/shapes_test_support.h"
#include "shared/collide_shapes_math.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using namespace shapes;
using ShapeGridBruteForce = BackendTest;

Scene randomScene(uint32_t seed, bool ccd) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Scene s;
  const struct {
    uint32_t particles, spheres, capsules;
  } cloths[] = {{4000, 120, 60}, {2500, 40, 70}, {0, 10, 5}, {1500, 33, 0}};
  for (const auto& c : cloths) {
    std::vector<Float4> p, q, sp, prevSp;
    for (uint32_t i = 0; i < c.particles; ++i) {
      const V3 x{u(rng) * 2, u(rng) * 2, u(rng) * 2};
      p.push_back(toFloat4(x, 1.0f));
      q.push_back(toFloat4(x + V3{u(rng), u(rng), u(rng)} * (ccd ? 0.3 : 0.02), 1.0f));
    }
    for (uint32_t k = 0; k < c.spheres; ++k) {
      const double spread = k % 5 == 0 ? 7.0 : 2.3;  // every fifth sphere mostly outside the particles
      const V3 centre{u(rng) * spread, u(rng) * spread, u(rng) * spread};
      const double r = 0.05 + 0.35 * std::abs(u(rng));
      sp.push_back(toFloat4(centre, static_cast<float>(r)));
      prevSp.push_back(toFloat4(centre + V3{u(rng), u(rng), u(rng)} * 0.4,
                                static_cast<float>(r * (0.6 + 0.8 * std::abs(u(rng))))));
    }
    std::vector<Capsule> caps;
    std::mt19937 pick(seed + 99);  // 32-bit results
    for (uint32_t k = 0; k < c.capsules; ++k) {
      const uint32_t a = static_cast<uint32_t>(pick() % c.spheres);
      const uint32_t b = static_cast<uint32_t>((a + 1 + pick() % (c.spheres - 1)) % c.spheres);
      caps.push_back({a, b});
    }
    s.addCloth(p, q, sp, caps, ccd ? prevSp : std::vector<Float4>{});
  }
  s.settings.continuous = ccd;
  return s;
}

// Whether the particle's path prev -> p meets the shape (sphere k, or capsule k - sphereCount) with
// depth > 1e-5 of the radius at any time of the iteration (discrete: at the end only).
bool touches(const Scene& s, uint32_t c, uint32_t shape, V3 p0, V3 p1, bool ccd) {
  const auto& end = s.spheres[c];
  const auto& start = s.prevSpheres[c].empty() ? end : s.prevSpheres[c];
  const uint32_t S = static_cast<uint32_t>(end.size());
  // Quick reject: the path's box and the shape's box over the iteration (both ends) are disjoint.
  {
    const uint32_t ks[2] = {shape < S ? shape : s.capsules[c][shape - S].sphere0,
                            shape < S ? shape : s.capsules[c][shape - S].sphere1};
    bool apart = false;
    for (int axis = 0; axis < 3 && !apart; ++axis) {
      auto comp = [axis](V3 v) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; };
      double lo = 1e30, hi = -1e30;
      for (uint32_t k : ks) {
        for (const Float4& f : {start[k], end[k]}) {
          lo = std::min(lo, comp(xyz(f)) - static_cast<double>(f.w));
          hi = std::max(hi, comp(xyz(f)) + static_cast<double>(f.w));
        }
      }
      apart = std::max(comp(p0), comp(p1)) < lo || std::min(comp(p0), comp(p1)) > hi;
    }
    if (apart) return false;
  }
  const int steps = ccd ? 32 : 0;
  for (int i = 0; i <= steps; ++i) {
    const double t = ccd ? static_cast<double>(i) / steps : 1.0;
    auto at = [&](uint32_t k) {
      const V3 c0 = xyz(start[k]), c1 = xyz(end[k]);
      const double r = static_cast<double>(start[k].w) * (1 - t) + static_cast<double>(end[k].w) * t;
      return std::pair<V3, double>{c0 * (1 - t) + c1 * t, r};
    };
    const V3 x = p0 * (1 - t) + p1 * t;
    Hull h;
    if (shape < S) {
      const auto [cc, r] = at(shape);
      h = {cc, cc, r, r};
    } else {
      const Capsule cap = s.capsules[c][shape - S];
      const auto [c0, r0] = at(cap.sphere0);
      const auto [c1, r1] = at(cap.sphere1);
      h = {c0, c1, r0, r1};
    }
    if (h.distance(x) < -1e-5 * std::max(h.r0, h.r1)) return true;
  }
  // Sphere paths: also the exact closest approach of the relative path (|q0 + (q1 - q0) t| vs r(t)).
  if (ccd && shape < S) {
    const V3 q0 = p0 - xyz(start[shape]), dq = (p1 - xyz(end[shape])) - q0;
    const double r0 = static_cast<double>(start[shape].w), dr = static_cast<double>(end[shape].w) - r0;
    // f(t) = |q0 + dq t|^2 - (r0 + dr t)^2, minimum of a quadratic on [0, 1].
    const double a = dot(dq, dq) - dr * dr, b = 2 * (dot(q0, dq) - r0 * dr);
    if (a > 0) {
      const double t = std::clamp(-b / (2 * a), 0.0, 1.0);
      const V3 q = q0 + dq * t;
      const double r = r0 + dr * t;
      if (length(q) - r < -1e-5 * r) return true;
    }
  }
  return false;
}

void checkGrid(Backend backend, Context* ctx, uint32_t seed, bool ccd) {
  Scene s = randomScene(seed, ccd);
  const Scene before = s;
  ShapeCollisionDebug debug;
  collide(backend, ctx, s, &debug);
  ASSERT_EQ(debug.maskWords.size(), s.cloths.size());

  size_t base = 0, pairs = 0, dropped = 0, capsulePairs = 0;
  size_t touchedParticles = 0, stuck = 0, movedClear = 0;
  for (uint32_t c = 0; c < s.cloths.size(); ++c) {
    const uint32_t words = debug.maskWords[c];
    const uint32_t S = static_cast<uint32_t>(s.spheres[c].size()),
                   C = static_cast<uint32_t>(s.capsules[c].size());
    ASSERT_EQ(words, (S + C + 31) / 32);
    auto bit = [&](uint32_t set, uint32_t axis, uint32_t cell, uint32_t shape) {
      return (debug.masks[base + ((set * 3 + axis) * 8 + cell) * words + shape / 32] >> (shape % 32)) & 1u;
    };
    // A capsule's rows are the union of its spheres' rows.
    for (uint32_t k = 0; k < C; ++k) {
      for (uint32_t row = 0; row < 48; ++row) {
        const uint32_t set = row / 24, axis = row / 8 % 3, cell = row % 8;
        const Capsule cap = s.capsules[c][k];
        ASSERT_EQ(bit(set, axis, cell, S + k),
                  bit(set, axis, cell, cap.sphere0) | bit(set, axis, cell, cap.sphere1))
            << "cloth " << c << " capsule " << k << " row " << row;
      }
    }
    // The grid box, from the test's own boxes.
    const ClothRange r = s.cloths[c];
    constexpr float inf = std::numeric_limits<float>::infinity();
    gpu::vec3 plo(inf), phi(-inf), slo(inf), shi(-inf);
    for (uint32_t i = r.first; i < r.first + r.count; ++i) {
      for (const Float4* f : {&before.particles[i], &before.prev[i]}) {
        if (f == &before.prev[i] && !ccd) continue;
        plo = gpu::min(plo, gpu::vec3(f->x, f->y, f->z));
        phi = gpu::max(phi, gpu::vec3(f->x, f->y, f->z));
      }
    }
    for (uint32_t k = 0; k < S; ++k) {
      for (const Float4& f : {s.spheres[c][k], ccd ? s.prevSpheres[c][k] : s.spheres[c][k]}) {
        slo = gpu::min(slo, gpu::vec3(f.x - f.w, f.y - f.w, f.z - f.w));
        shi = gpu::max(shi, gpu::vec3(f.x + f.w, f.y + f.w, f.z + f.w));
      }
    }
    const gpu::ShapeGrid g = gpu::makeGrid(plo, phi, slo, shi);

    for (uint32_t i = r.first; i < r.first + r.count; ++i) {
      const V3 p1 = xyz(before.particles[i]), p0 = ccd ? xyz(before.prev[i]) : p1;
      // The particle's cell range per axis (-1 / 8: outside the grid).
      int lo[3], hi[3];
      bool inGrid = g.lower.w != 0.0f;
      const float a1[3] = {before.particles[i].x, before.particles[i].y, before.particles[i].z};
      const float a0[3] = {before.prev[i].x, before.prev[i].y, before.prev[i].z};
      for (int axis = 0; axis < 3 && inGrid; ++axis) {
        const float x0 = ccd ? std::min(a0[axis], a1[axis]) : a1[axis],
                    x1 = ccd ? std::max(a0[axis], a1[axis]) : a1[axis];
        const float c0 = (x0 - g.lower[axis]) * g.scale[axis], c1 = (x1 - g.lower[axis]) * g.scale[axis];
        inGrid = c1 >= 0.0f && c0 < 8.0f;
        lo[axis] = c0 < 0.0f ? 0 : static_cast<int>(c0);
        hi[axis] = std::min(static_cast<int>(c1), 7);
      }
      bool any = false;
      for (uint32_t k = 0; k < S + C; ++k) {
        if (!touches(before, c, k, p0, p1, ccd)) continue;
        any = true;
        ++pairs;
        capsulePairs += k >= S;
        bool found = inGrid;
        for (int axis = 0; axis < 3 && found; ++axis) {
          found = bit(0, static_cast<uint32_t>(axis), static_cast<uint32_t>(hi[axis]), k) &&
                  bit(1, static_cast<uint32_t>(axis), static_cast<uint32_t>(lo[axis]), k);
        }
        if (!found && dropped++ < 5) {
          ADD_FAILURE() << "cloth " << c << " particle " << i - r.first << " " << str(before.particles[i])
                        << (k < S ? " sphere " : " capsule ") << (k < S ? k : k - S) << " dropped by the grid"
                        << (inGrid ? "" : " (particle outside the grid box)");
        }
      }
      const bool moved = !bitwiseEqual(s.particles[i], before.particles[i]);
      touchedParticles += any;
      if (!ccd && any && !moved) ++stuck;  // CCD leaves paths through the outer skin alone
      // Discrete: a particle clear of every shape (by more than the margin) must stay.
      if (!ccd && !any && moved) {
        bool near = false;
        for (uint32_t k = 0; k < S + C && !near; ++k) {
          const Hull h =
              k < S ? Hull{xyz(s.spheres[c][k]), xyz(s.spheres[c][k]), static_cast<double>(s.spheres[c][k].w),
                           static_cast<double>(s.spheres[c][k].w)}
                    : hullOf(s.spheres[c], s.capsules[c][k - S]);
          near = h.distance(p1) < 1e-5 * std::max(h.r0, h.r1);
        }
        if (!near && movedClear++ < 5) ADD_FAILURE() << "particle " << i << " touches no shape but moved";
      }
    }
    base += 48 * size_t{words};
  }
  EXPECT_EQ(base, debug.masks.size());
  EXPECT_EQ(dropped, 0u) << "of " << pairs << " pairs in contact";
  EXPECT_EQ(stuck, 0u) << "particles in contact that did not move, of " << touchedParticles;
  EXPECT_EQ(movedClear, 0u);
  // The scene must exercise the grid: many pairs, capsules among them.
  EXPECT_GT(pairs, 1000u);
  EXPECT_GT(capsulePairs, 300u);
}

TEST_P(ShapeGridBruteForce, DiscreteNeverDropsAPairInContact) {
  for (uint32_t seed : {31u, 32u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    checkGrid(backend(), ctx(), seed, false);
  }
}

TEST_P(ShapeGridBruteForce, ContinuousNeverDropsAPairWhosePathMeetsTheShape) {
  for (uint32_t seed : {33u, 34u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    checkGrid(backend(), ctx(), seed, true);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ShapeGridBruteForce, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
