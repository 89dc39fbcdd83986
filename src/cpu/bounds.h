// Private: the CPU twin of shaders/bounds.comp. Keys are the order-preserving encoding of
// shaders/shared/float_order.h, so the CPU and the GPU compare floats identically.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vkc::cpu {

// Folds `count` xyzw float4 values into lo/hi keys (4 each, componentwise min / max).
void boundsKeysScalar(const float* xyzw, size_t count, uint32_t lo[4], uint32_t hi[4]);
// Same result with Highway SIMD (runtime dispatch); falls back to the scalar loop where the
// build has no SIMD (VKC_SIMD=OFF) or the chosen target's vectors are not a multiple of 4 lanes.
void boundsKeysSimd(const float* xyzw, size_t count, uint32_t lo[4], uint32_t hi[4]);
// The SIMD target runtime dispatch picked ("AVX2", "AVX3", "scalar-build", ...).
const char* simdTargetName();

}  // namespace vkc::cpu
