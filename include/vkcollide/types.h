// Plain data types shared by every backend. Layouts match the GPU's std430 structs
// (shaders/shared/common.h), so arrays of these can be copied to and from device buffers as-is.
#pragma once

#include <cstdint>
#include <span>

namespace vkc {
#include "vkcollide/export.h"
VKC_API_BEGIN

// A particle: position xyz and inverse mass w (0 = fixed). Also used for spheres (xyz, radius).
struct Float4 {
  float x = 0, y = 0, z = 0, w = 0;
  friend bool operator==(const Float4&, const Float4&) = default;
};

// An axis-aligned box; lo.w and hi.w are 0. The box of no points is empty: lo = +inf, hi = -inf
// on every axis, so that lo > hi and the union with any box is that box.
struct Aabb {
  Float4 lo;
  Float4 hi;
  bool empty() const { return lo.x > hi.x || lo.y > hi.y || lo.z > hi.z; }
};

// One cloth's particles: `count` consecutive elements starting at index `first` of the scene's
// particle buffer. Cloths may be empty; ranges of different cloths should not overlap.
struct ClothRange {
  uint32_t first = 0;
  uint32_t count = 0;
};

// Which implementation runs a stage. Every stage gives the same integer results and float results
// within its documented tolerance on all three (bounds: bitwise equal).
enum class Backend {
  kVulkan,     // compute shaders on a Vulkan device
  kCpuScalar,  // the scalar reference
  kCpuSimd,    // Highway SIMD with runtime dispatch (equals kCpuScalar where the build has no SIMD)
};

const char* toString(Backend backend);

VKC_API_END
}  // namespace vkc
