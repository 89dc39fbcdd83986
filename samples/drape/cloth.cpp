// The drape sample's cloth (see cloth.h).
#include "cloth.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "colliders.h"
#include "collision.h"

namespace drape {

using glm::vec3;
using glm::vec4;

std::vector<vkc::Float4> initialCloth(const Options& o, const Scene& sc) {
  std::vector<vkc::Float4> p(size_t{o.size} * o.size);
  const float h = sc.clothSide / static_cast<float>(o.size - 1);
  for (uint32_t y = 0; y < o.size; ++y) {
    for (uint32_t x = 0; x < o.size; ++x) {
      const float px = sc.clothCentre.x - 0.5f * sc.clothSide + h * static_cast<float>(x);
      const float pz = sc.clothCentre.z - 0.5f * sc.clothSide + h * static_cast<float>(y);
      p[size_t{y} * o.size + x] = {px, sc.clothCentre.y, pz, 1.0f};
    }
  }
  return p;
}

gpu::IntegratePush integratePush(const Options& o, const Scene& sc) {
  const float dt = sc.frameDt / static_cast<float>(o.substeps);
  const vec3 g = sc.gravity * (dt * dt);
  return {vec4(g, 0.0f), o.size * o.size, sc.damping, 0, 0};
}

// Every colour of every constraint kind, in solve order: structural (x, then y), shear (both
// diagonals), bend (over two cells along x, then y). Two colours per kind.
std::vector<gpu::ConstraintPush> constraintColours(const Options& o, const Scene& sc) {
  const float h = sc.clothSide / static_cast<float>(o.size - 1), diagonal = h * std::sqrt(2.0f);
  struct Kind {
    int dx, dy;
    uint32_t axis, mask;
    float rest, stiffness;
  };
  const Kind kinds[] = {{1, 0, 0, 1, h, sc.stiffStructural},   {0, 1, 1, 1, h, sc.stiffStructural},
                        {1, 1, 1, 1, diagonal, sc.stiffShear}, {-1, 1, 1, 1, diagonal, sc.stiffShear},
                        {2, 0, 0, 2, 2 * h, sc.stiffBend},     {0, 2, 1, 2, 2 * h, sc.stiffBend}};
  std::vector<gpu::ConstraintPush> out;
  for (const Kind& k : kinds) {
    for (uint32_t value : {0u, k.mask})
      out.push_back({o.size, k.rest, k.stiffness, k.dx, k.dy, k.axis, k.mask, value});
  }
  return out;
}

float clothThickness(const Options& o, const Scene& sc) {
  return 0.5f * sc.clothSide / static_cast<float>(o.size - 1);
}

std::vector<vkc::Float4> colliderSpheres(const Options& o, const Scene& sc) {
  const float t = clothThickness(o, sc);
  auto f4 = [t](vec4 v) { return vkc::Float4{v.x, v.y, v.z, v.w + t}; };
  return {f4(sc.sphere), f4(sc.capsuleA), f4(sc.capsuleB)};
}

std::vector<vkc::Float4> colliderPlanes(const Options& o, const Scene& sc) {
  if (!o.ground) return {};
  return {{0.0f, 1.0f, 0.0f, -(sc.groundY + clothThickness(o, sc))}};
}

bool selfInSubstep(const Options& o, uint32_t substep) {
  return o.self && (substep + 1) % o.selfEvery == 0;
}

float selfDistance(const Options& o, const Scene& sc) {
  return 0.9f * sc.clothSide / static_cast<float>(o.size - 1);
}

namespace {

vec4 toVec(const vkc::Float4& f) {
  return {f.x, f.y, f.z, f.w};
}
vkc::Float4 toF4(const vec4& v) {
  return {v.x, v.y, v.z, v.w};
}

}  // namespace

void cpuFrame(CpuCloth& c, const Options& o, const Scene& sc, std::span<const vkc::Float4> spheres,
              std::span<const vkc::Float4> planes) {
  const gpu::IntegratePush ip = integratePush(o, sc);
  const std::vector<gpu::ConstraintPush> colours = constraintColours(o, sc);
  const uint32_t n = o.size, count = n * n;
  for (uint32_t s = 0; s < o.substeps; ++s) {
    for (uint32_t i = 0; i < count; ++i) {
      vec4 x, p;
      gpu::integrateParticle(toVec(c.particles[i]), toVec(c.prev[i]), vec3(ip.gravityDt2), ip.damping, x, p);
      c.particles[i] = toF4(x);
      c.prev[i] = toF4(p);
    }
    for (uint32_t it = 0; it < o.iterations; ++it) {
      for (const gpu::ConstraintPush& cp : colours) {
        for (uint32_t i = 0; i < count; ++i) {
          uint32_t a = 0, b = 0;
          if (!gpu::colourEdge(cp, i, a, b)) continue;
          vec4 pa = toVec(c.particles[a]), pb = toVec(c.particles[b]);
          gpu::solveEdge(pa, pb, cp.rest, cp.stiffness);
          c.particles[a] = toF4(pa);
          c.particles[b] = toF4(pb);
        }
      }
    }
    collideCpu(c.particles, c.prev, o, sc, spheres, planes, s);
  }
}

FrameStats frameStats(std::span<const vkc::Float4> p, const Options& o, const Scene& sc) {
  FrameStats st;
  const vec3 a(sc.capsuleA), b(sc.capsuleB), c(sc.sphere);
  const float capReach = std::max(sc.capsuleA.w, sc.capsuleB.w);
  const float h = sc.clothSide / static_cast<float>(o.size - 1);
  for (uint32_t i = 0; i < p.size(); ++i) {
    const vec3 x(p[i].x, p[i].y, p[i].z);
    if (!std::isfinite(x.x) || !std::isfinite(x.y) || !std::isfinite(x.z)) {
      st.finite = false;
      continue;
    }
    st.sphereDepth = std::max(st.sphereDepth, sphereDepth(x, c, sc.sphere.w));
    st.groundDepth = std::max(st.groundDepth, sc.groundY - x.y);
    // Quick reject: farther from the axis segment than the larger radius.
    const vec3 ab = b - a;
    const float t = std::clamp(glm::dot(x - a, ab) / glm::dot(ab, ab), 0.0f, 1.0f);
    if (glm::length(x - (a + t * ab)) < capReach + 0.1f) {
      st.capsuleDepth = std::max(st.capsuleDepth, taperedCapsuleDepth(x, a, sc.capsuleA.w, b, sc.capsuleB.w));
    }
    const uint32_t xi = i % o.size, yi = i / o.size;
    if (xi + 1 < o.size) {
      const vkc::Float4& q = p[i + 1];
      st.maxStretch = std::max(st.maxStretch, glm::length(vec3(q.x, q.y, q.z) - x) / h);
    }
    if (yi + 1 < o.size) {
      const vkc::Float4& q = p[i + o.size];
      st.maxStretch = std::max(st.maxStretch, glm::length(vec3(q.x, q.y, q.z) - x) / h);
    }
  }
  return st;
}

float closestNonNeighbours(std::span<const vkc::Float4> p, uint32_t n, float cell) {
  auto key = [cell](float x, float y, float z) {
    const auto q = [cell](float v) { return static_cast<int64_t>(std::floor(v / cell)) & 0x1FFFFF; };
    return (q(x) << 42) | (q(y) << 21) | q(z);
  };
  std::unordered_map<int64_t, std::vector<uint32_t>> grid;
  for (uint32_t i = 0; i < p.size(); ++i) {
    if (std::isfinite(p[i].x) && std::isfinite(p[i].y) && std::isfinite(p[i].z)) {
      grid[key(p[i].x, p[i].y, p[i].z)].push_back(i);
    }
  }
  float best = cell;
  for (uint32_t i = 0; i < p.size(); ++i) {
    if (!std::isfinite(p[i].x) || !std::isfinite(p[i].y) || !std::isfinite(p[i].z)) continue;
    const vec3 a(p[i].x, p[i].y, p[i].z);
    for (int dx = -1; dx <= 1; ++dx) {
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dz = -1; dz <= 1; ++dz) {
          const auto it =
              grid.find(key(a.x + static_cast<float>(dx) * cell, a.y + static_cast<float>(dy) * cell,
                            a.z + static_cast<float>(dz) * cell));
          if (it == grid.end()) continue;
          for (uint32_t j : it->second) {
            const int gx = static_cast<int>(i % n) - static_cast<int>(j % n);
            const int gy = static_cast<int>(i / n) - static_cast<int>(j / n);
            if (j <= i || (std::abs(gx) <= 2 && std::abs(gy) <= 2)) continue;
            best = std::min(best, glm::length(vec3(p[j].x, p[j].y, p[j].z) - a));
          }
        }
      }
    }
  }
  return best;
}

long residentBytes() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace drape
