#version 460
// Rounding on the test device, one invocation per case, for tests/vulkan/rounding_vulkan_test.cpp to
// compare with the CPU bit for bit: the device's own division and square root and the correctly
// rounded vkcDiv / vkcSqrt (shaders/shared/rounding.h); the built-in dot and cross of vec3 and the same
// sums written out in GLM's order under `precise`.
// Case: s = (a, b, x, 0), u, v; result r0 = (a / b, vkcDiv(a, b), sqrt(x), vkcSqrt(x)),
// r1 = (dot(u, v), (u.x v.x + u.y v.y) + u.z v.z, cross(u, v).x, u.y v.z - v.y u.z).
#extension GL_GOOGLE_include_directive : require
#include "shared/common.h"
// The device's own built-ins are measured here, not the shared code's spelled-out versions.
#undef dot
#undef cross

struct RoundingCase {
  vec4 s;
  vec4 u;
  vec4 v;
};
struct RoundingResult {
  vec4 r0;
  vec4 r1;
};

layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer Cases { RoundingCase cases[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Results { RoundingResult results[]; };
layout(push_constant) uniform Push { uint caseCount; } pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.caseCount) return;
  RoundingCase c = cases[i];
  vec3 u = c.u.xyz, v = c.v.xyz;
  precise float q = c.s.x / c.s.y;
  precise float root = sqrt(c.s.z);
  precise float d = dot(u, v);
  precise float dx = (u.x * v.x + u.y * v.y) + u.z * v.z;
  precise float cx = cross(u, v).x;
  precise float cxx = u.y * v.z - v.y * u.z;
  results[i].r0 = vec4(q, vkcDiv(c.s.x, c.s.y), root, vkcSqrt(c.s.z));
  results[i].r1 = vec4(d, dx, cx, cxx);
}
