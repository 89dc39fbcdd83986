// The drape sample's command line, scene constants and fatal-error helper (scaffolding: nothing here
// calls vkcollide).
#pragma once

#include <cstdint>
#include <string>

#include <glm/glm.hpp>

#include "vkcollide/types.h"  // vkc::Backend

namespace drape {

struct Options {
  uint32_t size = 128;      // particles per side
  uint32_t frames = 200;    // 60 Hz frames
  uint32_t substeps = 8;    // solver steps per frame (each: integrate, constraints, collision)
  uint32_t iterations = 2;  // constraint iterations per substep (each: every colour of every kind)
  uint32_t pngEvery = 10;   // write every K-th frame as PNG (0: no PNGs, no contact sheet)
  uint32_t width = 640, height = 480;
  std::string out;  // empty: drape-out in the working directory (see defaultOutDir)
  std::string device;
  std::string json;  // --json PATH: the run's numbers and checks as a results file (bench/results format)
  bool validate = false;
  bool check = false;
  bool cpuTwin = true;
  bool self = true;  // vkcollide self collision (--no-self: off)
  uint32_t selfEvery =
      0;  // self collision in substeps K-1, 2K-1, ... of a frame (0: K = substeps, once per frame)
  vkc::Backend cpuBackend = vkc::Backend::kCpuSimd;
  bool perturbCpu = false;  // start the CPU twin 1 ulp higher (shows how differences grow)
  bool ground = true;       // the ground plane collides (--no-ground: the cloth falls for ever)
};

// Everything in metres and seconds; y is up.
struct Scene {
  float clothSide = 2.0f;
  glm::vec3 clothCentre{0.0f, 0.72f, 0.0f};
  glm::vec4 sphere{-0.25f, 0.0f, 0.0f, 0.45f};   // xyz centre, w radius
  glm::vec4 capsuleA{0.45f, 0.0f, -0.7f, 0.2f};  // tapered capsule: two spheres
  glm::vec4 capsuleB{0.85f, 0.1f, 0.45f, 0.1f};
  float groundY = -0.7f;  // the ground plane y = groundY, 0.25 m below the sphere's bottom
  glm::vec3 gravity{0.0f, -9.81f, 0.0f};
  float frameDt = 1.0f / 60.0f;
  float damping = 0.998f;  // velocity kept per substep
  float stiffStructural = 1.0f, stiffShear = 0.8f, stiffBend = 0.5f;
  float friction = 0.6f;
};

// Prints "drape: <message>" to stderr and exits 1.
[[noreturn]] void fail(const std::string& message);

// The command line (see --help); exits with a message on a bad argument.
Options parseOptions(int argc, char** argv);

}  // namespace drape
