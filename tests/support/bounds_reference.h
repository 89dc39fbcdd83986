// A brute-force bounds reference written with plain float comparisons (not the engine's keys).
#pragma once

#include <span>
#include <vector>

#include "vkcollide/bounds.h"
#include "vkcollide/types.h"

namespace vkc::test {

// The box of particles[r] (and prev[r] when includePrevious), -0 ordered below +0.
Aabb referenceBounds(std::span<const Float4> particles, std::span<const Float4> prev, ClothRange r,
                     bool includePrevious);

bool bitwiseEqual(const Aabb& a, const Aabb& b);

// n particles (w = 1) with coordinates drawn uniformly from [lo, hi) by a generator seeded with `seed`.
std::vector<Float4> randomParticles(size_t n, uint32_t seed, float lo, float hi);

// computeBounds into a fresh array of one box per cloth (in.boxes is replaced).
inline Result<std::vector<Aabb>> boundsOf(Backend backend, Context* ctx, BoundsInput in) {
  std::vector<Aabb> boxes(in.cloths.size());
  in.boxes = boxes;
  if (const Status s = computeBounds(backend, ctx, in); !s) return s.error();
  return boxes;
}

}  // namespace vkc::test
