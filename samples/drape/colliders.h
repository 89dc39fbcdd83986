// The drape sample's colliders: triangle meshes to draw them and exact penetration depths to
// check the cloth against them.
#pragma once

#include <cstdint>
#include <vector>

#include <glm/glm.hpp>

namespace drape {

// Triangles with vec4 positions (w unused): the same vertex layout as the particle buffer.
struct Mesh {
  std::vector<glm::vec4> vertices;
  std::vector<uint32_t> indices;
};

void appendSphere(Mesh& mesh, glm::vec3 centre, float radius, int slices, int stacks);
// The hull of two spheres: both spheres and the cone tangent to them.
void appendTaperedCapsule(Mesh& mesh, glm::vec3 a, float ra, glm::vec3 b, float rb, int slices, int stacks);

// A flat square of side `side` in the plane y = `y`, centred on (cx, y, cz) (the ground).
void appendGround(Mesh& mesh, float cx, float y, float cz, float side);

// How deep `p` lies inside the sphere (<= 0: outside).
float sphereDepth(glm::vec3 p, glm::vec3 centre, float radius);
// How deep `p` lies inside the hull of spheres (a, ra) and (b, rb) (<= 0: outside). The hull is the
// union of the balls centred at mix(a, b, t) with radius mix(ra, rb, t), t in [0, 1]; the depth is
// the largest mix(ra, rb, t) - |p - mix(a, b, t)|, a concave function of t (ternary search).
float taperedCapsuleDepth(glm::vec3 p, glm::vec3 a, float ra, glm::vec3 b, float rb);

// Writes an RGBA8 image as PNG; false on failure.
bool writePng(const char* path, int width, int height, const uint8_t* rgba);

}  // namespace drape
