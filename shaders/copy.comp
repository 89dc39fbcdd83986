#version 460
// A plain buffer copy: the device's memory-bandwidth roofline for the benchmarks.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { vec4 dst[]; };
layout(push_constant) uniform Push { uint count; };
void main() {
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationIndex;
  if (i < count) dst[i] = src[i];
}
