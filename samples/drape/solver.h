// The drape sample's cloth solver on the GPU (scaffolding: nothing here calls vkcollide): Verlet
// integration and graph-coloured distance constraints (shaders/integrate.comp, constraints.comp,
// cloth_shared.h), recorded into the frame's command buffer before vkcollide's passes.
#pragma once

#include <vector>

#include "cloth_shared.h"
#include "gpu.h"
#include "options.h"

namespace drape {

struct Solver {
  ComputePipeline integrate, constraints;
  gpu::IntegratePush integratePush{};
  std::vector<gpu::ConstraintPush> colours;  // every colour of every kind, in solve order
  uint32_t iterations = 0;
  uint32_t groups = 0;  // workgroups per dispatch (one thread per particle)
};

Solver createSolver(const Gpu& g, const Options& o, const Scene& sc);
void destroy(const Gpu& g, Solver& s);

// Verlet step of every particle (prev <- current), then a compute -> compute barrier.
void recordIntegrate(VkCommandBuffer cmd, const Solver& s, const ParticleBuffers& b);
// Every colour of every constraint kind, `iterations` times, in place; compute -> compute barriers
// between the dispatches (the last one's writes are ordered by vkcollide's opening barrier).
void recordConstraints(VkCommandBuffer cmd, const Solver& s, const ParticleBuffers& b);

}  // namespace drape
