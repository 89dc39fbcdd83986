#version 460
// Drape sample render: two-sided Lambert shading, a checker pattern on the cloth. The cloth uses
// the vertex shader's smooth normals; the colliders flat normals from screen-space derivatives.
layout(location = 0) in vec3 worldPos;
layout(location = 1) in vec2 gridCoord;
layout(location = 2) in vec3 smoothNormal;
layout(push_constant) uniform Push {
  mat4 viewProj;
  vec4 frontColor;
  vec4 backColor;
  uint gridSize;
} pc;
layout(location = 0) out vec4 outColor;

void main() {
  vec3 n = pc.gridSize > 0u ? smoothNormal : cross(dFdx(worldPos), dFdy(worldPos));
  const float len = length(n);
  n = len > 0.0 ? n / len : vec3(0.0, 1.0, 0.0);
  const vec3 light = normalize(vec3(0.35, 1.0, 0.55));
  const float diffuse = abs(dot(n, light));
  vec3 base = gl_FrontFacing ? pc.frontColor.rgb : pc.backColor.rgb;
  if (pc.gridSize > 0u) {
    const vec2 cell = floor(gridCoord * 16.0);
    base *= mod(cell.x + cell.y, 2.0) < 0.5 ? 1.0 : 0.8;
  }
  const vec3 lit = base * (0.22 + 0.78 * diffuse);
  outColor = vec4(pow(lit, vec3(1.0 / 2.2)), 1.0);
}
