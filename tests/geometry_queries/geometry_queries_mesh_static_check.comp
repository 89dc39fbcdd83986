#version 460
// Runs the static mesh rows' per-cell functions (shaders/shared/geometry_queries_mesh_tetra.h and
// geomSegmentSegment) over a batch of cases, one invocation per case, so that
// tests/geometry_queries/geometry_queries_mesh_static_vulkan_test.cpp
// can compare them bitwise with the same functions compiled as C++ (and so that the build proves the
// shared header compiles as GLSL). Layouts: geometry_queries_mesh_static_check.h.
#extension GL_GOOGLE_include_directive : require
#include "shared/common.h"
// As the stage's family shaders (shared/geometry_queries_family.h): every function's result and out
// parameters `precise`, so that the device does not fuse a * b + c where the CPU rounds twice.
#undef VKC_FN
#define VKC_FN precise
#undef VKC_OUT
#define VKC_OUT(type) out precise type
#undef VKC_INOUT
#define VKC_INOUT(type) inout precise type
#include "geometry_queries_mesh_static_check.h"

layout(local_size_x = kMeshStaticCheckGroupSize) in;
layout(std430, set = 0, binding = 0) readonly buffer Cases { MeshStaticCheckCase cases[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Results { MeshStaticCheckResult results[]; };
layout(push_constant) uniform Push { uint caseCount; } pc;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.caseCount) return;
  results[i] = meshStaticCheckRun(cases[i]);
}
