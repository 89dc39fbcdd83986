#include "support/bounds_reference.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace vkc::test {
namespace {
bool less(float a, float b) { return a < b || (a == b && std::signbit(a) && !std::signbit(b)); }
void grow(Aabb& box, const Float4& p) {
  float* lo = &box.lo.x;
  float* hi = &box.hi.x;
  const float v[3] = {p.x, p.y, p.z};
  for (int k = 0; k < 3; ++k) {
    if (less(v[k], lo[k])) lo[k] = v[k];
    if (less(hi[k], v[k])) hi[k] = v[k];
  }
}
}  // namespace

Aabb referenceBounds(std::span<const Float4> particles, std::span<const Float4> prev, ClothRange r,
                     bool includePrevious) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  Aabb box{{inf, inf, inf, 0}, {-inf, -inf, -inf, 0}};
  for (uint32_t i = r.first; i < r.first + r.count; ++i) {
    grow(box, particles[i]);
    if (includePrevious) grow(box, prev[i]);
  }
  return box;
}

bool bitwiseEqual(const Aabb& a, const Aabb& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<Float4> randomParticles(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<Float4> p(n);
  for (auto& x : p) x = {u(rng), u(rng), u(rng), 1.0f};
  return p;
}

}  // namespace vkc::test
