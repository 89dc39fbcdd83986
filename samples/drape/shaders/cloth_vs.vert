#version 460
// Drape sample render. The particle buffer (vec4 per particle, w = inverse mass) is bound as the
// vertex buffer as it is; the colliders' meshes use the same layout. For the cloth, the vertex
// shader also reads the four grid neighbours of its particle from the same buffer (as a storage
// buffer) for a smooth normal, and takes grid coordinates from the vertex index (checker pattern).
layout(location = 0) in vec4 inPosition;
layout(std430, set = 0, binding = 0) readonly buffer Particles { vec4 particles[]; };
layout(push_constant) uniform Push {
  mat4 viewProj;
  vec4 frontColor;
  vec4 backColor;
  uint gridSize;  // 0: a collider mesh (flat normals from derivatives, no pattern)
} pc;
layout(location = 0) out vec3 worldPos;
layout(location = 1) out vec2 gridCoord;
layout(location = 2) out vec3 smoothNormal;

void main() {
  worldPos = inPosition.xyz;
  gl_Position = pc.viewProj * vec4(inPosition.xyz, 1.0);
  gridCoord = vec2(0.0);
  smoothNormal = vec3(0.0);
  const uint n = pc.gridSize;
  if (n == 0u) return;
  const uint i = uint(gl_VertexIndex), x = i % n, y = i / n;
  gridCoord = vec2(float(x), float(y)) / float(n);
  const vec3 du = particles[y * n + min(x + 1u, n - 1u)].xyz - particles[y * n + (x > 0u ? x - 1u : 0u)].xyz;
  const vec3 dv = particles[min(y + 1u, n - 1u) * n + x].xyz - particles[(y > 0u ? y - 1u : 0u) * n + x].xyz;
  smoothNormal = cross(dv, du);
}
