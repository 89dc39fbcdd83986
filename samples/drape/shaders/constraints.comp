#version 460
// Drape sample: one colour of the cloth's distance constraints (see ConstraintPush). No two edges
// of a colour share a particle, so every thread updates its two particles in place without races.
#extension GL_GOOGLE_include_directive : require
#include "cloth_shared.h"

layout(local_size_x = 64) in;  // kGroupSize
layout(std430, set = 0, binding = 0) buffer Particles { vec4 particles[]; };
layout(push_constant) uniform Push { ConstraintPush pc; };

void main() {
  uint a = 0u, b = 0u;
  if (!colourEdge(pc, gl_GlobalInvocationID.x, a, b)) return;
  vec4 pa = particles[a], pb = particles[b];
  solveEdge(pa, pb, pc.rest, pc.stiffness);
  particles[a] = pa;
  particles[b] = pb;
}
