// The drape sample's use of vkcollide, all of it: collision.cpp is the only file of the sample that
// calls the library. The rest is a renderer's scaffolding (gpu.*, drape.cpp, options.*) and the
// sample's own cloth solver (cloth.*, shaders/).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "gpu.h"
#include "options.h"
#include "vkcollide/vkcollide.h"

namespace drape {

// vkcollide inside the renderer's frame: imports the renderer's device and creates the stages once;
// then, per substep, records self collision and shape collision (the sphere, the tapered capsule and
// the ground plane) into the frame's command buffer, ordered after the sample's compute writes and
// before everything that reads the particles.
class Collision {
 public:
  // `spheres` (colliderSpheres) and `planes` (colliderPlanes) must outlive the object. Exits on failure.
  Collision(const Gpu& g, const Options& o, const Scene& sc, std::span<const vkc::Float4> spheres,
            std::span<const vkc::Float4> planes);
  ~Collision();
  // Self collision where substep `s` has it (selfInSubstep); else records nothing.
  void recordSelf(VkCommandBuffer cmd, const ParticleBuffers& b, uint32_t s);
  // The sphere, the capsule and the ground, swept (CCD) over substep `s` from prev to current, with
  // friction.
  void recordShapes(VkCommandBuffer cmd, const ParticleBuffers& b, uint32_t s);

 private:
  const Options& o_;
  const Scene& sc_;
  vkc::ClothRange cloths_[1];
  vkc::ClothColliders colliders_[1];
  std::unique_ptr<vkc::Context> context_;
  std::unique_ptr<vkc::ShapeCollisionStage> shapes_;
  std::unique_ptr<vkc::SelfCollisionStage> self_;
};

// The CPU twin of recordSelf + recordShapes on host arrays (Options::cpuBackend). Exits on failure.
void collideCpu(std::vector<vkc::Float4>& particles, std::vector<vkc::Float4>& prev, const Options& o,
                const Scene& sc, std::span<const vkc::Float4> spheres, std::span<const vkc::Float4> planes,
                uint32_t s);
// Options::cpuBackend by vkcollide's name for it.
const char* cpuBackendName(const Options& o);

}  // namespace drape
