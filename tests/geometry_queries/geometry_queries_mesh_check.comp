#version 460
// Runs the per-cell functions of shaders/shared/geometry_queries_mesh.h over a batch of cases, one
// invocation per case, so that tests/geometry_queries/geometry_queries_mesh_vulkan_test.cpp can
// compare them bitwise with the same functions compiled as C++ (and so that the build proves the
// shared header compiles as GLSL). Layouts: geometry_queries_mesh_check.h.
#extension GL_GOOGLE_include_directive : require
#include "geometry_queries_mesh_check.h"

layout(local_size_x = kMeshQueryCheckGroupSize) in;
layout(std430, set = 0, binding = 0) readonly buffer Cases { MeshQueryCheckCase cases[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Results { MeshQueryCheckResult results[]; };
layout(push_constant) uniform Push { uint caseCount; } pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.caseCount) return;
  results[i] = meshQueryCheckRun(cases[i]);
}
