#version 460
// Drape sample: Verlet integration of every particle (prev <- current, current <- current +
// damped velocity + gravity dt^2). The particle buffer is also the render's vertex buffer.
#extension GL_GOOGLE_include_directive : require
#include "cloth_shared.h"

layout(local_size_x = 64) in;  // kGroupSize
layout(std430, set = 0, binding = 0) buffer Particles { vec4 particles[]; };
layout(std430, set = 0, binding = 1) buffer Prev { vec4 prevParticles[]; };
layout(push_constant) uniform Push { IntegratePush pc; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.count) return;
  vec4 x, p;
  integrateParticle(particles[i], prevParticles[i], pc.gravityDt2.xyz, pc.damping, x, p);
  particles[i] = x;
  prevParticles[i] = p;
}
