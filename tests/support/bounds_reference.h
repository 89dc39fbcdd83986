// A brute-force bounds reference written with plain float comparisons (not the engine's keys).
#pragma once

#include <span>

#include "vkcollide/types.h"

namespace vkc::test {

// The box of particles[r] (and prev[r] when includePrevious), -0 ordered below +0.
Aabb referenceBounds(std::span<const Float4> particles, std::span<const Float4> prev, ClothRange r,
                     bool includePrevious);

bool bitwiseEqual(const Aabb& a, const Aabb& b);

}  // namespace vkc::test
