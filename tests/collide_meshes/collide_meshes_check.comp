#version 460
// Runs the particle-vs-triangle functions of shaders/shared/collide_meshes_math.h (and the edge-edge
// CCD of ccd_edge_edge.h and triangle vs triangle of tri_tri.h) over a batch of
// cases, one invocation per case, so that tests/collide_meshes/collide_meshes_vulkan_test.cpp can
// compare them bitwise with the same functions compiled as C++ (and so that the build proves the
// shared header compiles as GLSL). Layouts: collide_meshes_check.h.
#extension GL_GOOGLE_include_directive : require
#include "collide_meshes_check.h"

layout(local_size_x = kMeshCheckGroupSize) in;
layout(std430, set = 0, binding = 0) readonly buffer Cases { MeshCheckCase cases[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Results { MeshCheckResult results[]; };
layout(push_constant) uniform Push { uint caseCount; } pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.caseCount) return;
  results[i] = meshCheckRun(cases[i]);
}
