// Private: the CPU twin of shaders/bounds.comp. Keys are the order-preserving encoding of
// shaders/shared/float_order.h, so the CPU and the GPU compare floats identically.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "vkcollide/bounds.h"

namespace vkc::detail {
class ParallelCall;
}

namespace vkc::cpu {

// Folds `count` xyzw float4 values into lo/hi keys (4 each, componentwise min / max).
void boundsKeysScalar(const float* xyzw, size_t count, uint32_t lo[4], uint32_t hi[4]);
// Same result with Highway SIMD (runtime dispatch); falls back to the scalar loop where the
// build has no SIMD (VKC_SIMD=OFF) or the chosen target's vectors are not a multiple of 4 lanes.
void boundsKeysSimd(const float* xyzw, size_t count, uint32_t lo[4], uint32_t hi[4]);
// A cloth's keys: lo[4] (componentwise minimum of the particles' xyzw keys), then hi[4].
using ClothKeys = std::array<uint32_t, 8>;

// keys[c] = the keys of cloth c's particles (and of prevParticles, when not null), on par's threads
// (pieces of large cloths folded apart, then combined: the same keys). An empty cloth: lo ~0, hi 0.
void foldClothKeys(detail::ParallelCall& par, const Float4* particles, const Float4* prevParticles,
                   std::span<const ClothRange> cloths, Backend backend, std::vector<ClothKeys>& keys);

// Whether a cloth's keys may hide a bad value: a coordinate or inverse mass that is not finite, or an
// inverse mass below -0 (detail::validateParticles then names it).
bool suspiciousKeys(const ClothKeys& keys);

// cpu::checkParticleValues (cpu/collide_shapes.h) on par's threads: the same checks and errors.
Status checkParticleValuesOn(detail::ParallelCall& par, std::span<const Float4> particles,
                             std::span<const ClothRange> cloths, Backend backend, const char* array);

// computeBoundsCpu on par's threads (its error, if the host's parallel-for misbehaved, included).
Status computeBoundsOn(detail::ParallelCall& par, const BoundsInput& input, Backend backend);

// The SIMD target runtime dispatch picked ("AVX2", "AVX3", "scalar-build", ...).
const char* simdTargetName();

}  // namespace vkc::cpu
