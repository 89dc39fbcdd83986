// The drape sample's cloth solver on the GPU (see solver.h).
#include "solver.h"

#include "cloth.h"

namespace drape {

Solver createSolver(const Gpu& g, const Options& o, const Scene& sc) {
  Solver s;
  s.integrate = integratePipeline(g);
  s.constraints = constraintsPipeline(g);
  s.integratePush = integratePush(o, sc);
  s.colours = constraintColours(o, sc);
  s.iterations = o.iterations;
  s.groups = (o.size * o.size + gpu::kGroupSize - 1) / gpu::kGroupSize;
  return s;
}

void destroy(const Gpu& g, Solver& s) {
  destroy(g, s.integrate);
  destroy(g, s.constraints);
}

void recordIntegrate(VkCommandBuffer cmd, const Solver& s, const ParticleBuffers& b) {
  pushBuffers(cmd, s.integrate, b.particles, b.prev);
  vkCmdPushConstants(cmd, s.integrate.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof s.integratePush,
                     &s.integratePush);
  vkCmdDispatch(cmd, s.groups, 1, 1);
  memoryBarrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
}

void recordConstraints(VkCommandBuffer cmd, const Solver& s, const ParticleBuffers& b) {
  for (uint32_t it = 0; it < s.iterations; ++it) {
    for (size_t k = 0; k < s.colours.size(); ++k) {
      pushBuffers(cmd, s.constraints, b.particles);
      vkCmdPushConstants(cmd, s.constraints.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof s.colours[k],
                         &s.colours[k]);
      vkCmdDispatch(cmd, s.groups, 1, 1);
      if (it + 1 < s.iterations || k + 1 < s.colours.size()) {
        memoryBarrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                      VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                      VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
      }
    }
  }
}

}  // namespace drape
