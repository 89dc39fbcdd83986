// Compiled both as GLSL (#include from shaders/*.comp) and as C++ (GLM gives the GLSL types).
// Every struct that crosses the host/device boundary is declared once, in shaders/shared/, with
// std430-compatible layout; the C++ side checks sizes and offsets with static_asserts.
#ifndef VKC_SHARED_COMMON_H
#define VKC_SHARED_COMMON_H

#ifdef __cplusplus
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <glm/glm.hpp>
#define VKC_NAMESPACE_BEGIN namespace vkc::gpu {
#define VKC_NAMESPACE_END }
#define VKC_CONSTANT(type, name, value) inline constexpr type name = value
#define VKC_CHECK_LAYOUT(type, size) static_assert(sizeof(type) == (size), #type " size must match std430")
#define VKC_CHECK_OFFSET(type, member, offset) \
  static_assert(offsetof(type, member) == (offset), #type "::" #member " offset must match std430")
// Functions written once for GLSL and C++ (GLM provides GLSL's vector types and built-ins).
#define VKC_FN inline
#define VKC_INOUT(type) type&
#define VKC_OUT(type) type&
#define VKC_PRECISE
VKC_NAMESPACE_BEGIN
using uint = uint32_t;
using glm::vec2;
using glm::vec3;
using glm::vec4;
using glm::uvec2;
using glm::uvec4;
using glm::ivec4;
using glm::abs;
using glm::clamp;
using glm::cross;
using glm::dot;
using glm::floor;
using glm::max;
using glm::min;
using glm::mix;
using glm::sqrt;
using std::fma;
using glm::frexp;
using glm::ldexp;
using glm::floatBitsToUint;
using glm::uintBitsToFloat;
using glm::ivec3;
inline int findLSB(uint x) { return x == 0u ? -1 : std::countr_zero(x); }
VKC_NAMESPACE_END
#else
#define VKC_NAMESPACE_BEGIN
#define VKC_NAMESPACE_END
#define VKC_CONSTANT(type, name, value) const type name = value
#define VKC_CHECK_LAYOUT(type, size)
#define VKC_CHECK_OFFSET(type, member, offset)
#define VKC_FN
#define VKC_INOUT(type) inout type
#define VKC_OUT(type) out type
// Forbids contracting a * b + c into a fused multiply-add, so that GPU and CPU round alike. The build
// also decorates every floating-point operation of every module NoContraction
// (tools/spirv_embed.cpp), so code without it is protected as well.
#define VKC_PRECISE precise

// dot, cross and mix spelled as GLM computes them, operation by operation: a driver may evaluate the
// built-ins with fused or reordered steps inside one instruction, where NoContraction does not reach.
// The macros below send every later use in the shared code to these.
float vkcDot(vec2 a, vec2 b) {
  precise float r = a.x * b.x + a.y * b.y;
  return r;
}
float vkcDot(vec3 a, vec3 b) {
  precise float r = (a.x * b.x + a.y * b.y) + a.z * b.z;
  return r;
}
float vkcDot(vec4 a, vec4 b) {
  precise float r = (a.x * b.x + a.y * b.y) + (a.z * b.z + a.w * b.w);
  return r;
}
vec3 vkcCross(vec3 a, vec3 b) {
  precise vec3 r = vec3(a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y);
  return r;
}
float vkcMix(float x, float y, float a) {
  precise float r = x * (1.0 - a) + y * a;
  return r;
}
vec2 vkcMix(vec2 x, vec2 y, float a) {
  precise vec2 r = x * (1.0 - a) + y * a;
  return r;
}
vec3 vkcMix(vec3 x, vec3 y, float a) {
  precise vec3 r = x * (1.0 - a) + y * a;
  return r;
}
vec4 vkcMix(vec4 x, vec4 y, float a) {
  precise vec4 r = x * (1.0 - a) + y * a;
  return r;
}
vec3 vkcMix(vec3 x, vec3 y, vec3 a) {
  precise vec3 r = x * (1.0 - a) + y * a;
  return r;
}
// mix with a bool selector picks, it does not interpolate: the built-in is exact.
float vkcMix(float x, float y, bool a) { return mix(x, y, a); }
vec3 vkcMix(vec3 x, vec3 y, bvec3 a) { return mix(x, y, a); }
#define dot vkcDot
#define cross vkcCross
#define mix vkcMix
#endif

VKC_NAMESPACE_BEGIN

// A run of consecutive particles that belongs to one cloth, in the scene's particle buffer.
// firstTile is the index of the cloth's first bounds tile (prefix sum over cloths, set by the host).
struct ClothRange {
  uint first;
  uint count;
  uint firstTile;
  uint tileCount;
};
VKC_CHECK_LAYOUT(ClothRange, 16);

// An axis-aligned box. lo.w and hi.w are 0. An empty box has lo = +inf and hi = -inf.
struct Aabb {
  vec4 lo;
  vec4 hi;
};
VKC_CHECK_LAYOUT(Aabb, 32);
VKC_CHECK_OFFSET(Aabb, hi, 16);

VKC_NAMESPACE_END

#include "rounding.h"

#endif  // VKC_SHARED_COMMON_H
