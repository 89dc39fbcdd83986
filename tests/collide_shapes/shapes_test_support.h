// Shared by the shape collision tests: a scene that owns its arrays, running one iteration on any
// backend, and closed-form geometry in double precision written for the tests only (it never calls
// the engine's collision math, so it can disagree with it).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "vkcollide/collide_shapes.h"

namespace vkc::test::shapes {

struct Scene {
  std::vector<Float4> particles, prev;
  std::vector<ClothRange> cloths;
  std::vector<std::vector<Float4>> spheres, prevSpheres;  // prevSpheres[c] empty: static spheres
  std::vector<std::vector<Capsule>> capsules;
  std::vector<std::vector<Float4>> planes, prevPlanes;               // prevPlanes[c] empty: static planes
  std::vector<std::vector<std::vector<uint32_t>>> convexPlaneLists;  // per cloth, per convex
  std::vector<std::vector<Convex>> convexes;                         // built by input()
  std::vector<ClothColliders> colliders;
  ShapeCollisionSettings settings;

  // Gives cloth c planes and convexes (lists of plane indices).
  void setConvexes(uint32_t c, std::vector<Float4> pl, std::vector<std::vector<uint32_t>> lists,
                   std::vector<Float4> prevPl = {}) {
    planes[c] = std::move(pl);
    prevPlanes[c] = std::move(prevPl);
    convexPlaneLists[c] = std::move(lists);
  }

  // Appends a cloth of the given particles (prev = the same positions unless given) and shapes.
  uint32_t addCloth(const std::vector<Float4>& p, const std::vector<Float4>& q, std::vector<Float4> sph,
                    std::vector<Capsule> caps = {}, std::vector<Float4> prevSph = {}) {
    cloths.push_back({static_cast<uint32_t>(particles.size()), static_cast<uint32_t>(p.size())});
    particles.insert(particles.end(), p.begin(), p.end());
    prev.insert(prev.end(), q.empty() ? p.begin() : q.begin(), q.empty() ? p.end() : q.end());
    spheres.push_back(std::move(sph));
    prevSpheres.push_back(std::move(prevSph));
    capsules.push_back(std::move(caps));
    planes.emplace_back();
    prevPlanes.emplace_back();
    convexPlaneLists.emplace_back();
    return static_cast<uint32_t>(cloths.size() - 1);
  }

  ShapeCollisionInput input() {
    colliders.clear();
    convexes.assign(cloths.size(), {});
    for (size_t c = 0; c < cloths.size(); ++c) {
      for (const std::vector<uint32_t>& list : convexPlaneLists[c]) convexes[c].push_back({list});
      colliders.push_back({spheres[c], prevSpheres[c], capsules[c], planes[c], prevPlanes[c], convexes[c]});
    }
    return {particles, prev, cloths, colliders, settings};
  }
};

// One iteration of `s` on `backend`, in place; fails the test (fatally) on error.
inline void collide(Backend backend, Context* ctx, Scene& s, ShapeCollisionDebug* debug = nullptr) {
  const Status st = collideShapes(backend, ctx, s.input(), debug);
  ASSERT_TRUE(st.ok()) << st.message();
}

struct V3 {
  double x = 0, y = 0, z = 0;
};
inline V3 operator+(V3 a, V3 b) {
  return {a.x + b.x, a.y + b.y, a.z + b.z};
}
inline V3 operator-(V3 a, V3 b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}
inline V3 operator*(V3 a, double k) {
  return {a.x * k, a.y * k, a.z * k};
}
inline double dot(V3 a, V3 b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}
inline V3 cross(V3 a, V3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline double length(V3 a) {
  return std::sqrt(dot(a, a));
}
inline V3 normalize(V3 a) {
  return a * (1.0 / length(a));
}
inline V3 xyz(const Float4& f) {
  return {f.x, f.y, f.z};
}
inline Float4 toFloat4(V3 v, float w) {
  return {static_cast<float>(v.x), static_cast<float>(v.y), static_cast<float>(v.z), w};
}

inline V3 randomUnit(std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  for (;;) {
    const V3 v{n(rng), n(rng), n(rng)};
    if (length(v) > 1e-3) return normalize(v);
  }
}
// A unit vector perpendicular to the unit vector a, uniformly random around it.
inline V3 randomPerpendicular(V3 a, std::mt19937& rng) {
  for (;;) {
    const V3 r = randomUnit(rng);
    const V3 p = r - a * dot(r, a);
    if (length(p) > 1e-2) return normalize(p);
  }
}

// The hull of two spheres (a tapered capsule) in closed form. In the plane through the axis and a
// point, with x along the axis from c0 and y >= 0 the distance to the axis, the upper tangent line
// has the unit normal n = (sin b, cos b), sin b = (r0 - r1) / L, and touches circle 0 at r0 n and
// circle 1 at (L, 0) + r1 n. With u = (cos b, -sin b) along the line, a point with u.X < 0 is nearest
// to sphere 0's cap, one with u.X > L cos b to sphere 1's, any other to the line.
struct Hull {
  V3 c0, c1;
  double r0 = 0, r1 = 0;

  // Signed distance to the surface (negative inside) and the nearest surface point.
  double distance(V3 p, V3* nearest = nullptr) const {
    const V3 axisVec = c1 - c0;
    const double len = length(axisVec);
    if (len <= std::abs(r0 - r1)) {  // one sphere holds the other: the hull is the bigger sphere
      const V3 c = r0 >= r1 ? c0 : c1;
      const double r = std::max(r0, r1);
      return sphere(c, r, p, nearest);
    }
    const V3 a = axisVec * (1.0 / len);
    const V3 d = p - c0;
    const double x = dot(d, a);
    const V3 radial = d - a * x;
    const double y = length(radial);
    const V3 e = y > 1e-12 * len ? radial * (1.0 / y) : anyPerpendicular(a);
    const double sb = (r0 - r1) / len, cb = std::sqrt(1.0 - sb * sb);
    const double s = x * cb - y * sb;  // u . X
    if (s < 0) return sphere(c0, r0, p, nearest);
    if (s > len * cb) return sphere(c1, r1, p, nearest);
    const double dist = x * sb + y * cb - r0;  // n . X - r0
    if (nearest != nullptr) *nearest = p - (a * sb + e * cb) * dist;
    return dist;
  }

  static double sphere(V3 c, double r, V3 p, V3* nearest) {
    const V3 d = p - c;
    const double l = length(d);
    if (nearest != nullptr) *nearest = c + (l > 0 ? d * (r / l) : V3{0, r, 0});
    return l - r;
  }
  static V3 anyPerpendicular(V3 a) {
    const V3 o = std::abs(a.x) < 0.9 ? V3{1, 0, 0} : V3{0, 1, 0};
    return normalize(cross(a, o));
  }
};

inline double sphereDistance(const Float4& s, V3 p) {
  return length(p - xyz(s)) - static_cast<double>(s.w);
}

inline Hull hullOf(const std::vector<Float4>& spheres, Capsule c) {
  const Float4& a = spheres[c.sphere0];
  const Float4& b = spheres[c.sphere1];
  return {xyz(a), xyz(b), static_cast<double>(a.w), static_cast<double>(b.w)};
}

inline bool bitwiseEqual(const Float4& a, const Float4& b) {
  return std::memcmp(&a, &b, sizeof(Float4)) == 0;
}

inline std::string str(const Float4& f) {
  return "(" + std::to_string(f.x) + ", " + std::to_string(f.y) + ", " + std::to_string(f.z) + ", " +
         std::to_string(f.w) + ")";
}

}  // namespace vkc::test::shapes
