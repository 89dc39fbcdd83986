// The drape sample's cloth: its initial grid, the solver's parameters (cloth_shared.h runs them on
// the GPU and on the CPU), the CPU twin of a whole frame, and the checks on a frame's particles.
// Not part of vkcollide; the collision calls live in collision.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cloth_shared.h"
#include "options.h"
#include "vkcollide/types.h"  // vkc::Float4: the particle layout vkcollide reads and writes

namespace drape {

std::vector<vkc::Float4> initialCloth(const Options& o, const Scene& sc);
gpu::IntegratePush integratePush(const Options& o, const Scene& sc);
// Every colour of every constraint kind, in solve order.
std::vector<gpu::ConstraintPush> constraintColours(const Options& o, const Scene& sc);

// Half the grid spacing: the cloth's particles keep this far from the colliders' surfaces, so that
// the flat triangles between them (which cut corners over a curved surface) stay outside too.
float clothThickness(const Options& o, const Scene& sc);
// The colliders as vkcollide sees them (sphere, capsule end A, capsule end B): the drawn shapes grown
// by the cloth's thickness.
std::vector<vkc::Float4> colliderSpheres(const Options& o, const Scene& sc);
// The ground plane as vkcollide sees it (xyz normal, w offset; inside: n.x + w < 0): y = groundY raised
// by the cloth's thickness. Empty with --no-ground.
std::vector<vkc::Float4> colliderPlanes(const Options& o, const Scene& sc);
// Particles of the cloth keep 0.9 grid spacings apart: less than any rest distance of the grid,
// so no rest positions are needed to exempt grid neighbours.
float selfDistance(const Options& o, const Scene& sc);
// Whether self collision runs in substep `substep` of a frame.
bool selfInSubstep(const Options& o, uint32_t substep);

// The CPU twin of the cloth solver: the same functions (cloth_shared.h) and vkcollide's CPU
// collision (collision.h's collideCpu), frame by frame.
struct CpuCloth {
  std::vector<vkc::Float4> particles, prev;
};
void cpuFrame(CpuCloth& c, const Options& o, const Scene& sc, std::span<const vkc::Float4> spheres,
              std::span<const vkc::Float4> planes);

struct FrameStats {
  bool finite = true;
  // The largest depth of a particle inside the drawn sphere / tapered capsule (m); negative: every
  // particle is at least that far outside (-1e30: none came within 0.1 m of it).
  float sphereDepth = -1e30f;
  float capsuleDepth = -1e30f;
  float groundDepth = -1e30f;  // how far the lowest particle lies below the drawn ground (groundY)
  float maxStretch = 0;  // longest structural edge / rest length
};
FrameStats frameStats(std::span<const vkc::Float4> p, const Options& o, const Scene& sc);

// The closest two particles that are not within two grid steps of each other (what self collision
// keeps apart), with a hash grid of cell size `cell`; returns `cell` when no such pair is closer.
float closestNonNeighbours(std::span<const vkc::Float4> p, uint32_t n, float cell);

// The process's resident set in bytes (/proc/self/statm; 0 where it cannot be read): the soaks'
// memory check.
long residentBytes();

}  // namespace drape
