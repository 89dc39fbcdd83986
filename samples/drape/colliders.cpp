#include "colliders.h"

#include <algorithm>
#include <cmath>

namespace drape {
namespace {

constexpr float kPi = 3.14159265358979f;

// An orthonormal pair perpendicular to unit vector `u`.
void basis(glm::vec3 u, glm::vec3& v, glm::vec3& w) {
  const glm::vec3 helper = std::abs(u.y) < 0.9f ? glm::vec3(0, 1, 0) : glm::vec3(1, 0, 0);
  v = glm::normalize(glm::cross(u, helper));
  w = glm::cross(u, v);
}

}  // namespace

void appendSphere(Mesh& mesh, glm::vec3 centre, float radius, int slices, int stacks) {
  const auto base = static_cast<uint32_t>(mesh.vertices.size());
  for (int i = 0; i <= stacks; ++i) {
    const float theta = kPi * static_cast<float>(i) / static_cast<float>(stacks);
    for (int j = 0; j <= slices; ++j) {
      const float phi = 2 * kPi * static_cast<float>(j) / static_cast<float>(slices);
      const glm::vec3 n(std::sin(theta) * std::cos(phi), std::cos(theta), std::sin(theta) * std::sin(phi));
      mesh.vertices.emplace_back(centre + radius * n, 0.0f);
    }
  }
  const auto row = static_cast<uint32_t>(slices + 1);
  for (uint32_t i = 0; i < static_cast<uint32_t>(stacks); ++i) {
    for (uint32_t j = 0; j < static_cast<uint32_t>(slices); ++j) {
      const uint32_t a = base + i * row + j, b = a + row;
      mesh.indices.insert(mesh.indices.end(), {a, a + 1, b, a + 1, b + 1, b});
    }
  }
}

void appendTaperedCapsule(Mesh& mesh, glm::vec3 a, float ra, glm::vec3 b, float rb, int slices, int stacks) {
  appendSphere(mesh, a, ra, slices, stacks);
  appendSphere(mesh, b, rb, slices, stacks);
  const float d = glm::length(b - a);
  if (d <= std::abs(ra - rb)) return;  // one sphere holds the other: no cone
  const glm::vec3 u = (b - a) / d;
  glm::vec3 v, w;
  basis(u, v, w);
  // The cone's surface normal n satisfies dot(n, u) = (ra - rb) / d; it touches sphere a at
  // a + ra n and sphere b at b + rb n.
  const float s = (ra - rb) / d, c = std::sqrt(std::max(0.0f, 1 - s * s));
  const auto base = static_cast<uint32_t>(mesh.vertices.size());
  for (int j = 0; j <= slices; ++j) {
    const float phi = 2 * kPi * static_cast<float>(j) / static_cast<float>(slices);
    const glm::vec3 n = s * u + c * (std::cos(phi) * v + std::sin(phi) * w);
    mesh.vertices.emplace_back(a + ra * n, 0.0f);
    mesh.vertices.emplace_back(b + rb * n, 0.0f);
  }
  for (uint32_t j = 0; j < static_cast<uint32_t>(slices); ++j) {
    const uint32_t p = base + 2 * j;
    mesh.indices.insert(mesh.indices.end(), {p, p + 1, p + 2, p + 1, p + 3, p + 2});
  }
}

void appendGround(Mesh& mesh, float cx, float y, float cz, float side) {
  const auto base = static_cast<uint32_t>(mesh.vertices.size());
  const float h = 0.5f * side;
  for (const glm::vec2 c : {glm::vec2(-h, -h), glm::vec2(h, -h), glm::vec2(-h, h), glm::vec2(h, h)}) {
    mesh.vertices.emplace_back(cx + c.x, y, cz + c.y, 0.0f);
  }
  mesh.indices.insert(mesh.indices.end(), {base, base + 2, base + 1, base + 1, base + 2, base + 3});
}

float sphereDepth(glm::vec3 p, glm::vec3 centre, float radius) {
  return radius - glm::length(p - centre);
}

float taperedCapsuleDepth(glm::vec3 p, glm::vec3 a, float ra, glm::vec3 b, float rb) {
  auto depth = [&](float t) { return (ra + (rb - ra) * t) - glm::length(p - (a + (b - a) * t)); };
  float lo = 0, hi = 1;
  for (int it = 0; it < 60; ++it) {
    const float m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (depth(m1) < depth(m2)) {
      lo = m1;
    } else {
      hi = m2;
    }
  }
  return std::max({depth(0), depth(1), depth(0.5f * (lo + hi))});
}

}  // namespace drape
