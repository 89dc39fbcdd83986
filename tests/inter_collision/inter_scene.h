// Scenes and brute-force references for the inter-collision tests.
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include "vkcollide/inter_collision.h"

namespace vkc::test {

struct InterScene {
  std::vector<Float4> particles;
  std::vector<InterClothDesc> cloths;
  std::vector<InterCollisionFilter> filters;
  InterCollisionSettings settings;
  // An input over the scene's own arrays: a step updates `particles` in place.
  InterCollisionInput input() { return {particles, cloths, filters, settings}; }
};

// One step on a copy of the scene's particles (the scene is unchanged): the new positions.
inline Result<std::vector<Float4>> interStep(Backend backend, Context* ctx, const InterScene& s,
                                             InterCollisionDebug* debug = nullptr) {
  std::vector<Float4> p = s.particles;
  if (const Status st = collideInter(backend, ctx, {p, s.cloths, s.filters, s.settings}, debug); !st) return st.error();
  return p;
}

// InterCollisionStage::run on a copy of the scene's particles: the new positions.
inline Result<std::vector<Float4>> stageStep(InterCollisionStage& stage, const InterScene& s,
                                             InterCollisionDebug* debug = nullptr) {
  std::vector<Float4> p = s.particles;
  if (const Status st = stage.run({p, s.cloths, s.filters, s.settings}, debug); !st) return st.error();
  return p;
}

// The create info of a stage for the scene's layout.
inline InterCollisionStageCreateInfo stageInfo(const InterScene& s, uint32_t framesInFlight = 1,
                                               InterCollisionPath path = InterCollisionPath::kAuto) {
  return {s.cloths, s.filters, static_cast<uint32_t>(s.particles.size()), framesInFlight, path};
}

// Unit quaternion of `angle` radians about the (normalized) axis.
inline Float4 quatAxisAngle(float ax, float ay, float az, float angle) {
  const float n = std::sqrt(ax * ax + ay * ay + az * az);
  const float s = std::sin(angle * 0.5f) / n;
  return {ax * s, ay * s, az * s, std::cos(angle * 0.5f)};
}

// World position, in double: an independent evaluation of world = q * p * q^-1 + t.
struct D3 {
  double x, y, z;
};
inline D3 toWorld(const InterClothDesc& c, const Float4& p) {
  const double qx = c.rotation.x, qy = c.rotation.y, qz = c.rotation.z, qw = c.rotation.w;
  const double px = p.x, py = p.y, pz = p.z;
  const double ox = c.translation.x, oy = c.translation.y, oz = c.translation.z;
  // t = 2 q x p; p' = p + w t + q x t
  const double tx = 2 * (qy * pz - qz * py), ty = 2 * (qz * px - qx * pz), tz = 2 * (qx * py - qy * px);
  return {px + qw * tx + (qy * tz - qz * ty) + ox, py + qw * ty + (qz * tx - qx * tz) + oy,
          pz + qw * tz + (qx * ty - qy * tx) + oz};
}
inline double dist(const D3& a, const D3& b) {
  return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) + (a.z - b.z) * (a.z - b.z));
}

inline bool filterAllows(const InterScene& s, uint32_t a, uint32_t b) {
  uint32_t ga = 1, ma = ~0u, gb = 1, mb = ~0u;
  for (const auto& f : s.filters) {
    if (f.cloth == a) ga = f.group, ma = f.mask;
    if (f.cloth == b) gb = f.group, mb = f.mask;
  }
  return (ga & mb) != 0 && (gb & ma) != 0;
}

// Brute force: per scene particle, the cross-cloth, filter-allowed particles closer than the distance.
// `ambiguous`, when given, flags the particles with a pair within 1e-5 relative of the distance
// (float rounding may decide those either way).
inline std::vector<uint32_t> bruteForceContacts(const InterScene& s, std::vector<bool>* ambiguous = nullptr) {
  if (ambiguous != nullptr) ambiguous->assign(s.particles.size(), false);
  std::vector<uint32_t> contacts(s.particles.size(), 0);
  const double d = s.settings.distance;
  for (uint32_t a = 0; a < s.cloths.size(); ++a) {
    for (uint32_t b = 0; b < s.cloths.size(); ++b) {
      if (a == b || !filterAllows(s, a, b)) continue;
      for (uint32_t i = 0; i < s.cloths[a].range.count; ++i) {
        const uint32_t pi = s.cloths[a].range.first + i;
        const D3 wi = toWorld(s.cloths[a], s.particles[pi]);
        for (uint32_t j = 0; j < s.cloths[b].range.count; ++j) {
          const D3 wj = toWorld(s.cloths[b], s.particles[s.cloths[b].range.first + j]);
          const double l = dist(wi, wj);
          if (ambiguous != nullptr && std::fabs(l - d) < 1e-5 * d) (*ambiguous)[pi] = true;
          if (l < d) ++contacts[pi];
        }
      }
    }
  }
  return contacts;
}

// A cloth of n x n particles with spacing h in its local xy plane around the origin (inverse mass 1),
// appended to the scene.
inline uint32_t addGridCloth(InterScene& s, uint32_t n, float h, Float4 translation, Float4 rotation) {
  const uint32_t first = static_cast<uint32_t>(s.particles.size());
  for (uint32_t y = 0; y < n; ++y) {
    for (uint32_t x = 0; x < n; ++x) {
      s.particles.push_back({(static_cast<float>(x) - 0.5f * static_cast<float>(n - 1)) * h,
                             (static_cast<float>(y) - 0.5f * static_cast<float>(n - 1)) * h, 0.0f, 1.0f});
    }
  }
  s.cloths.push_back({{first, n * n}, translation, rotation});
  return static_cast<uint32_t>(s.cloths.size() - 1);
}

// A cloth of `count` random particles in a cube of half-size `half` (inverse masses in [0.5, 2]).
inline uint32_t addRandomCloth(InterScene& s, uint32_t count, float half, Float4 translation, Float4 rotation,
                               std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-half, half), w(0.5f, 2.0f);
  const uint32_t first = static_cast<uint32_t>(s.particles.size());
  for (uint32_t i = 0; i < count; ++i) s.particles.push_back({u(rng), u(rng), u(rng), w(rng)});
  s.cloths.push_back({{first, count}, translation, rotation});
  return static_cast<uint32_t>(s.cloths.size() - 1);
}

}  // namespace vkc::test
