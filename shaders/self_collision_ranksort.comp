#version 460
// A stand-in for the radix sort while it is being written: a stable sort of (key, value) by the low
// keyBits bits of the key, by rank. RANK: invocation i counts the elements that sort before element i
// ((key, index) lexicographically) and writes it to that position of the scratch arrays; COPY writes
// the scratch back. O(n^2): for tests and small scenes only.
#extension GL_GOOGLE_include_directive : require
#include "shared/common.h"

layout(constant_id = 0) const uint kPass = 0u;  // 0: rank, 1: copy back
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) buffer Keys { uint keys[]; };
layout(std430, set = 0, binding = 1) buffer Values { uint values[]; };
layout(std430, set = 0, binding = 2) buffer TmpKeys { uint tmpKeys[]; };
layout(std430, set = 0, binding = 3) buffer TmpValues { uint tmpValues[]; };
layout(push_constant) uniform Push {
  uint count;
  uint keyMask;
} pc;

void main() {
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationIndex;
  if (i >= pc.count) return;
  if (kPass == 0u) {
    uint ki = keys[i] & pc.keyMask;
    uint rank = 0u;
    for (uint j = 0u; j < pc.count; ++j) {
      uint kj = keys[j] & pc.keyMask;
      if (kj < ki || (kj == ki && j < i)) ++rank;
    }
    tmpKeys[rank] = keys[i];
    tmpValues[rank] = values[i];
  } else {
    keys[i] = tmpKeys[i];
    values[i] = tmpValues[i];
  }
}
