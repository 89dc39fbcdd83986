// The drape sample's cloth solver, written once for GLSL (the sample's compute shaders) and C++
// (the sample's CPU twin). Not part of vkcollide: a minimal Verlet integrator with distance
// constraints on a square grid (structural, shear and bend edges), solved Gauss-Seidel style over
// graph colours: within a colour no two edges share a particle.
#ifndef DRAPE_CLOTH_SHARED_H
#define DRAPE_CLOTH_SHARED_H

#ifdef __cplusplus
#include <cmath>
#include <cstdint>
#include <glm/glm.hpp>
namespace drape::gpu {
using uint = uint32_t;
using glm::vec3;
using glm::vec4;
using std::sqrt;
#define DRAPE_CONST(type, name, value) inline constexpr type name = value
#define DRAPE_FN inline
#define DRAPE_INOUT(type) type&
#define DRAPE_PRECISE
#define DRAPE_CHECK_SIZE(type, size) static_assert(sizeof(type) == (size), #type " must match std430")
#else
#define DRAPE_CONST(type, name, value) const type name = value
#define DRAPE_FN
#define DRAPE_INOUT(type) inout type
// No fused multiply-adds: the CPU twin (built with -ffp-contract=off) rounds the same way.
#define DRAPE_PRECISE precise
#define DRAPE_CHECK_SIZE(type, size)
#endif

DRAPE_CONST(uint, kGroupSize, 64u);

struct IntegratePush {
  vec4 gravityDt2;  // xyz: gravity * dt^2 (m), w unused
  uint count;       // particles
  float damping;    // velocity kept per step, in (0, 1]
  uint pad0;
  uint pad1;
};
DRAPE_CHECK_SIZE(IntegratePush, 32);

// One colour of one kind of distance constraint: the edges from grid point (x, y) to
// (x + dx, y + dy) whose coordinate `axis` (0: x, 1: y) satisfies (coordinate & mask) == value.
// The colours are chosen so that no two edges of a colour share a particle: one dispatch solves a
// colour in parallel, in place, and the result does not depend on thread order (Gauss-Seidel over
// colours, no atomics).
struct ConstraintPush {
  uint gridSize;    // particles per side (the cloth is gridSize x gridSize)
  float rest;       // rest length (m)
  float stiffness;  // fraction of the error removed per iteration, in [0, 1]
  int dx;
  int dy;
  uint axis;
  uint mask;
  uint value;
};
DRAPE_CHECK_SIZE(ConstraintPush, 32);

// Verlet step of one particle. w of `prev` is the inverse mass (0: the particle never moves); the
// current position's w may have been scaled by collision, so both outputs take prev's w.
DRAPE_FN void integrateParticle(vec4 x, vec4 prev, vec3 gravityDt2, float damping, DRAPE_INOUT(vec4) outX,
                                DRAPE_INOUT(vec4) outPrev) {
  outPrev = vec4(x.x, x.y, x.z, prev.w);
  if (prev.w <= 0.0f) {
    outX = vec4(x.x, x.y, x.z, prev.w);
    return;
  }
  DRAPE_PRECISE vec3 velocity = (vec3(x.x, x.y, x.z) - vec3(prev.x, prev.y, prev.z)) * damping;
  DRAPE_PRECISE vec3 next = vec3(x.x, x.y, x.z) + velocity + gravityDt2;
  outX = vec4(next.x, next.y, next.z, prev.w);
}

// Edge `i` (one per grid point) of the colour: false if the grid point starts no edge of it.
DRAPE_FN bool colourEdge(ConstraintPush pc, uint i, DRAPE_INOUT(uint) a, DRAPE_INOUT(uint) b) {
  const uint n = pc.gridSize;
  if (i >= n * n) return false;
  const int x = int(i % n), y = int(i / n);
  const uint c = pc.axis == 0u ? uint(x) : uint(y);
  if ((c & pc.mask) != pc.value) return false;
  const int x2 = x + pc.dx, y2 = y + pc.dy;
  if (x2 < 0 || y2 < 0 || x2 >= int(n) || y2 >= int(n)) return false;
  a = i;
  b = uint(y2) * n + uint(x2);
  return true;
}

// Moves both ends of a distance constraint towards its rest length, in proportion to their inverse
// masses (w).
DRAPE_FN void solveEdge(DRAPE_INOUT(vec4) pa, DRAPE_INOUT(vec4) pb, float rest, float stiffness) {
  DRAPE_PRECISE float wsum = pa.w + pb.w;
  if (wsum <= 0.0f) return;
  DRAPE_PRECISE vec3 d = vec3(pb.x, pb.y, pb.z) - vec3(pa.x, pa.y, pa.z);
  DRAPE_PRECISE float len2 = d.x * d.x + d.y * d.y + d.z * d.z;
  if (len2 < 1e-20f) return;
  DRAPE_PRECISE float len = sqrt(len2);
  DRAPE_PRECISE float s = stiffness * ((len - rest) / len) / wsum;
  DRAPE_PRECISE vec3 ca = d * (s * pa.w);
  DRAPE_PRECISE vec3 cb = d * (s * pb.w);
  pa = vec4(pa.x + ca.x, pa.y + ca.y, pa.z + ca.z, pa.w);
  pb = vec4(pb.x - cb.x, pb.y - cb.y, pb.z - cb.z, pb.w);
}

#ifdef __cplusplus
}  // namespace drape::gpu
#endif

#endif  // DRAPE_CLOTH_SHARED_H
