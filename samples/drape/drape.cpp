// vkcollide sample "drape": a square cloth falls onto a sphere and a tapered capsule and drapes over
// them, with continuous (swept) collision and friction.
//
// This is the sample a renderer team copies from, so it does what a renderer does:
//  - it creates its own VkInstance and VkDevice (with the features vkcollide needs, see
//    vkcollide/context.h) and imports them with vkc::Context::import;
//  - its own cloth solver (a minimal Verlet integrator with graph-coloured distance constraints, shaders in
//    samples/drape/shaders/, not part of vkcollide) and vkcollide's collision passes are recorded
//    into ONE command buffer per frame together with an offscreen render of the cloth;
//  - the particle buffer (vec4 per particle: xyz + inverse mass) is vkcollide's particle buffer AND
//    the render's vertex buffer: nothing is copied;
//  - the sample's passes and vkcollide's are ordered with vkc::RecordSync (srcStage/dstStage).
// Per frame and per substep: integrate -> distance constraints -> vkcollide self collision ->
// vkcollide shapes (CCD, friction; last, so that every substep ends outside the colliders).
// It writes PNG frames and a contact sheet, prints per-pass GPU times (timestamps), and at the end
// runs the same frames on the CPU (the same solver in C++ + vkc::collideShapesCpu) and prints how far
// the two runs drift apart.
//
// Usage: drape [--size N] [--frames F] [--substeps S] [--iterations J] [--out DIR] [--png-every K]
//              [--validate] [--check] [--no-cpu] [--device SELECTOR] [--cpu-backend simd|scalar]
//              [--perturb-cpu] [--self-every K] [--no-self]
// --validate (or DRAPE_VALIDATE=1): VK_LAYER_KHRONOS_validation with synchronization validation;
// the program exits non-zero if the layer reported anything. --check: exit non-zero unless the
// cloth is finite, outside the colliders (within tolerance), unbroken, and ends on the sphere.
#include <volk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/matrix_transform.hpp>

#include "cloth_fs.spv.h"
#include "cloth_shared.h"
#include "cloth_vs.spv.h"
#include "colliders.h"
#include "constraints.spv.h"
#include "integrate.spv.h"
#include "vkcollide/vkcollide.h"

namespace drape {
namespace {

using glm::vec3;
using glm::vec4;

// ---------------------------------------------------------------------------------------------
// Options and scene

struct Options {
  uint32_t size = 128;      // particles per side
  uint32_t frames = 200;    // 60 Hz frames
  uint32_t substeps = 8;    // solver steps per frame (each: integrate, constraints, collision)
  uint32_t iterations = 2;  // constraint iterations per substep (each: every colour of every kind)
  uint32_t pngEvery = 10;   // write every K-th frame as PNG
  uint32_t width = 640, height = 480;
  std::string out;  // empty: drape-out in the working directory (see defaultOutDir)
  std::string device;
  bool validate = false;
  bool check = false;
  bool cpuTwin = true;
  bool self = true;  // vkcollide self collision (--no-self: off)
  uint32_t selfEvery =
      0;  // self collision in substeps K-1, 2K-1, ... of a frame (0: K = substeps, once per frame)
  vkc::Backend cpuBackend = vkc::Backend::kCpuSimd;
  bool perturbCpu = false;  // start the CPU twin 1 ulp higher (shows how differences grow)
};

// Everything in metres and seconds; y is up.
struct Scene {
  float clothSide = 2.0f;
  vec3 clothCentre{0.0f, 0.72f, 0.0f};
  vec4 sphere{-0.25f, 0.0f, 0.0f, 0.45f};   // xyz centre, w radius
  vec4 capsuleA{0.45f, 0.0f, -0.7f, 0.2f};  // tapered capsule: two spheres
  vec4 capsuleB{0.85f, 0.1f, 0.45f, 0.1f};
  vec3 gravity{0.0f, -9.81f, 0.0f};
  float frameDt = 1.0f / 60.0f;
  float damping = 0.998f;  // velocity kept per substep
  float stiffStructural = 1.0f, stiffShear = 0.8f, stiffBend = 0.5f;
  float friction = 0.6f;
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "drape: %s\n", message.c_str());
  std::exit(1);
}

#define DRAPE_VK(expr)                                                                                      \
  do {                                                                                                      \
    const VkResult drape_r_ = (expr);                                                                       \
    if (drape_r_ != VK_SUCCESS) fail(std::string(#expr) + " failed: VkResult " + std::to_string(drape_r_)); \
  } while (0)

void must(const vkc::Status& s, const char* what) {
  if (!s.ok()) fail(std::string(what) + ": " + s.message());
}

uint32_t parseCount(const char* flag, const char* value, uint32_t lo, uint32_t hi) {
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || v < static_cast<long>(lo) || v > static_cast<long>(hi)) {
    fail(std::string(flag) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
         "], got '" + value + "'");
  }
  return static_cast<uint32_t>(v);
}

// drape-out/ in the working directory, unless that is inside the source tree (outside its build
// directories): then drape-out/ next to the executable's build files, so that nothing is written
// where git would see it.
std::string defaultOutDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path cwd = fs::weakly_canonical(fs::current_path(ec), ec);
  const fs::path source = fs::weakly_canonical(DRAPE_SOURCE_DIR, ec);
  auto inside = [](const fs::path& p, const fs::path& root) {
    const auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
    return r == root.end();
  };
  const fs::path rel = fs::relative(cwd, source, ec);
  const bool inBuildDir = !rel.empty() && rel.begin()->string().rfind("build", 0) == 0;
  if (inside(cwd, source) && !inBuildDir) return (fs::path(DRAPE_BINARY_DIR) / "drape-out").string();
  return "drape-out";
}

Options parseOptions(int argc, char** argv) {
  Options o;
  if (const char* env = std::getenv("DRAPE_VALIDATE"); env != nullptr && std::strcmp(env, "0") != 0)
    o.validate = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--size") {
      o.size = parseCount("--size", value(), 4, 1024);
    } else if (a == "--frames") {
      o.frames = parseCount("--frames", value(), 1, 100000);
    } else if (a == "--substeps") {
      o.substeps = parseCount("--substeps", value(), 1, 64);
    } else if (a == "--iterations") {
      o.iterations = parseCount("--iterations", value(), 1, 64);
    } else if (a == "--png-every") {
      o.pngEvery = parseCount("--png-every", value(), 1, 100000);
    } else if (a == "--width") {
      o.width = parseCount("--width", value(), 16, 4096);
    } else if (a == "--height") {
      o.height = parseCount("--height", value(), 16, 4096);
    } else if (a == "--out") {
      o.out = value();
    } else if (a == "--device") {
      o.device = value();
    } else if (a == "--validate") {
      o.validate = true;
    } else if (a == "--check") {
      o.check = true;
    } else if (a == "--no-cpu") {
      o.cpuTwin = false;
    } else if (a == "--cpu-backend") {
      const std::string v = value();
      if (v == "simd") {
        o.cpuBackend = vkc::Backend::kCpuSimd;
      } else if (v == "scalar") {
        o.cpuBackend = vkc::Backend::kCpuScalar;
      } else {
        fail("--cpu-backend must be simd or scalar, got '" + v + "'");
      }
    } else if (a == "--perturb-cpu") {
      o.perturbCpu = true;
    } else if (a == "--self-every") {
      o.selfEvery = parseCount("--self-every", value(), 1, 64);
    } else if (a == "--no-self") {
      o.self = false;
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: drape [--size N=128] [--frames F=200] [--substeps S=8] [--iterations J=2] [--out "
          "DIR=./drape-out]\n"
          "             [--png-every K=10] [--width W] [--height H] [--validate] [--check] [--no-cpu]\n"
          "             [--device SELECTOR] [--cpu-backend simd|scalar] [--perturb-cpu]\n"
          "             [--self-every K=substeps] [--no-self]\n");
      std::exit(0);
    } else {
      fail("unknown argument '" + a + "' (see --help)");
    }
  }
  if (o.out.empty()) o.out = defaultOutDir();
  if (o.selfEvery == 0) o.selfEvery = o.substeps;
  if (o.selfEvery > o.substeps) {
    fail("--self-every " + std::to_string(o.selfEvery) + " is more than --substeps " +
         std::to_string(o.substeps) + " (self collision would never run; use --no-self)");
  }
  return o;
}

std::vector<vkc::Float4> initialCloth(const Options& o, const Scene& sc) {
  std::vector<vkc::Float4> p(size_t{o.size} * o.size);
  const float h = sc.clothSide / static_cast<float>(o.size - 1);
  for (uint32_t y = 0; y < o.size; ++y) {
    for (uint32_t x = 0; x < o.size; ++x) {
      const float px = sc.clothCentre.x - 0.5f * sc.clothSide + h * static_cast<float>(x);
      const float pz = sc.clothCentre.z - 0.5f * sc.clothSide + h * static_cast<float>(y);
      p[size_t{y} * o.size + x] = {px, sc.clothCentre.y, pz, 1.0f};
    }
  }
  return p;
}

gpu::IntegratePush integratePush(const Options& o, const Scene& sc) {
  const float dt = sc.frameDt / static_cast<float>(o.substeps);
  const vec3 g = sc.gravity * (dt * dt);
  return {vec4(g, 0.0f), o.size * o.size, sc.damping, 0, 0};
}

// Every colour of every constraint kind, in solve order: structural (x, then y), shear (both
// diagonals), bend (over two cells along x, then y). Two colours per kind.
std::vector<gpu::ConstraintPush> constraintColours(const Options& o, const Scene& sc) {
  const float h = sc.clothSide / static_cast<float>(o.size - 1), diagonal = h * std::sqrt(2.0f);
  struct Kind {
    int dx, dy;
    uint32_t axis, mask;
    float rest, stiffness;
  };
  const Kind kinds[] = {{1, 0, 0, 1, h, sc.stiffStructural},   {0, 1, 1, 1, h, sc.stiffStructural},
                        {1, 1, 1, 1, diagonal, sc.stiffShear}, {-1, 1, 1, 1, diagonal, sc.stiffShear},
                        {2, 0, 0, 2, 2 * h, sc.stiffBend},     {0, 2, 1, 2, 2 * h, sc.stiffBend}};
  std::vector<gpu::ConstraintPush> out;
  for (const Kind& k : kinds) {
    for (uint32_t value : {0u, k.mask})
      out.push_back({o.size, k.rest, k.stiffness, k.dx, k.dy, k.axis, k.mask, value});
  }
  return out;
}

const vkc::Capsule kCapsules[] = {{1, 2}};

// Half the grid spacing: the cloth's particles keep this far from the colliders' surfaces, so that
// the flat triangles between them (which cut corners over a curved surface) stay outside too.
float clothThickness(const Options& o, const Scene& sc) {
  return 0.5f * sc.clothSide / static_cast<float>(o.size - 1);
}

// The colliders as vkcollide sees them: the drawn shapes grown by the cloth's thickness.
std::vector<vkc::Float4> colliderSpheres(const Options& o, const Scene& sc) {
  const float t = clothThickness(o, sc);
  auto f4 = [t](vec4 v) { return vkc::Float4{v.x, v.y, v.z, v.w + t}; };
  return {f4(sc.sphere), f4(sc.capsuleA), f4(sc.capsuleB)};
}

// Particles of the cloth keep 0.9 grid spacings apart: less than any rest distance of the grid,
// so no rest positions are needed to exempt grid neighbours.
bool selfInSubstep(const Options& o, uint32_t substep) {
  return o.self && (substep + 1) % o.selfEvery == 0;
}

vkc::SelfCollisionSettings selfSettings(const Options& o, const Scene& sc) {
  vkc::SelfCollisionSettings s;
  s.distance = 0.9f * sc.clothSide / static_cast<float>(o.size - 1);
  s.stiffness = 1.0f;
  return s;
}

vkc::ShapeCollisionSettings shapeSettings(const Options& o, const Scene& sc, uint32_t substep) {
  vkc::ShapeCollisionSettings s;
  s.continuous = true;
  s.friction = sc.friction;
  s.collisionMassScale = 0.0f;
  s.alphaBegin = static_cast<float>(substep) / static_cast<float>(o.substeps);
  s.alphaEnd = static_cast<float>(substep + 1) / static_cast<float>(o.substeps);
  return s;
}

// ---------------------------------------------------------------------------------------------
// The CPU twin of the cloth solver: the same functions (cloth_shared.h) and vkc::collideShapesCpu.

struct CpuCloth {
  std::vector<vkc::Float4> particles, prev;
};

vec4 toVec(const vkc::Float4& f) {
  return {f.x, f.y, f.z, f.w};
}
vkc::Float4 toF4(const vec4& v) {
  return {v.x, v.y, v.z, v.w};
}

void cpuFrame(CpuCloth& c, const Options& o, const Scene& sc, std::span<const vkc::Float4> spheres) {
  const gpu::IntegratePush ip = integratePush(o, sc);
  const std::vector<gpu::ConstraintPush> colours = constraintColours(o, sc);
  const uint32_t n = o.size, count = n * n;
  const vkc::ClothRange cloths[] = {{0, count}};
  const vkc::ClothColliders colliders[] = {{spheres, {}, kCapsules}};
  for (uint32_t s = 0; s < o.substeps; ++s) {
    for (uint32_t i = 0; i < count; ++i) {
      vec4 x, p;
      gpu::integrateParticle(toVec(c.particles[i]), toVec(c.prev[i]), vec3(ip.gravityDt2), ip.damping, x, p);
      c.particles[i] = toF4(x);
      c.prev[i] = toF4(p);
    }
    for (uint32_t it = 0; it < o.iterations; ++it) {
      for (const gpu::ConstraintPush& cp : colours) {
        for (uint32_t i = 0; i < count; ++i) {
          uint32_t a = 0, b = 0;
          if (!gpu::colourEdge(cp, i, a, b)) continue;
          vec4 pa = toVec(c.particles[a]), pb = toVec(c.particles[b]);
          gpu::solveEdge(pa, pb, cp.rest, cp.stiffness);
          c.particles[a] = toF4(pa);
          c.particles[b] = toF4(pb);
        }
      }
    }
    if (selfInSubstep(o, s)) {
      const vkc::SelfCollisionInput self{c.particles, {}, cloths, {}, selfSettings(o, sc)};
      must(vkc::collideSelfCpu(self, o.cpuBackend), "collideSelfCpu");
    }
    const vkc::ShapeCollisionInput input{c.particles, c.prev, cloths, colliders, shapeSettings(o, sc, s)};
    must(vkc::collideShapesCpu(input, o.cpuBackend), "collideShapesCpu");
  }
}

// ---------------------------------------------------------------------------------------------
// Checks on a frame's particles

struct FrameStats {
  bool finite = true;
  // The largest depth of a particle inside the drawn sphere / tapered capsule (m); negative: every
  // particle is at least that far outside (-1e30: none came within 0.1 m of it).
  float sphereDepth = -1e30f;
  float capsuleDepth = -1e30f;
  float maxStretch = 0;  // longest structural edge / rest length
};

FrameStats frameStats(std::span<const vkc::Float4> p, const Options& o, const Scene& sc) {
  FrameStats st;
  const vec3 a(sc.capsuleA), b(sc.capsuleB), c(sc.sphere);
  const float capReach = std::max(sc.capsuleA.w, sc.capsuleB.w);
  const float h = sc.clothSide / static_cast<float>(o.size - 1);
  for (uint32_t i = 0; i < p.size(); ++i) {
    const vec3 x(p[i].x, p[i].y, p[i].z);
    if (!std::isfinite(x.x) || !std::isfinite(x.y) || !std::isfinite(x.z)) {
      st.finite = false;
      continue;
    }
    st.sphereDepth = std::max(st.sphereDepth, sphereDepth(x, c, sc.sphere.w));
    // Quick reject: farther from the axis segment than the larger radius.
    const vec3 ab = b - a;
    const float t = std::clamp(glm::dot(x - a, ab) / glm::dot(ab, ab), 0.0f, 1.0f);
    if (glm::length(x - (a + t * ab)) < capReach + 0.1f) {
      st.capsuleDepth = std::max(st.capsuleDepth, taperedCapsuleDepth(x, a, sc.capsuleA.w, b, sc.capsuleB.w));
    }
    const uint32_t xi = i % o.size, yi = i / o.size;
    if (xi + 1 < o.size) {
      const vkc::Float4& q = p[i + 1];
      st.maxStretch = std::max(st.maxStretch, glm::length(vec3(q.x, q.y, q.z) - x) / h);
    }
    if (yi + 1 < o.size) {
      const vkc::Float4& q = p[i + o.size];
      st.maxStretch = std::max(st.maxStretch, glm::length(vec3(q.x, q.y, q.z) - x) / h);
    }
  }
  return st;
}

// The closest two particles that are not within two grid steps of each other (what self collision
// keeps apart), with a hash grid of cell size `cell`; returns `cell` when no such pair is closer.
float closestNonNeighbours(std::span<const vkc::Float4> p, uint32_t n, float cell) {
  auto key = [cell](float x, float y, float z) {
    const auto q = [cell](float v) { return static_cast<int64_t>(std::floor(v / cell)) & 0x1FFFFF; };
    return (q(x) << 42) | (q(y) << 21) | q(z);
  };
  std::unordered_map<int64_t, std::vector<uint32_t>> grid;
  for (uint32_t i = 0; i < p.size(); ++i) {
    if (std::isfinite(p[i].x) && std::isfinite(p[i].y) && std::isfinite(p[i].z)) {
      grid[key(p[i].x, p[i].y, p[i].z)].push_back(i);
    }
  }
  float best = cell;
  for (uint32_t i = 0; i < p.size(); ++i) {
    if (!std::isfinite(p[i].x) || !std::isfinite(p[i].y) || !std::isfinite(p[i].z)) continue;
    const vec3 a(p[i].x, p[i].y, p[i].z);
    for (int dx = -1; dx <= 1; ++dx) {
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dz = -1; dz <= 1; ++dz) {
          const auto it = grid.find(key(a.x + static_cast<float>(dx) * cell, a.y + static_cast<float>(dy) * cell,
                                        a.z + static_cast<float>(dz) * cell));
          if (it == grid.end()) continue;
          for (uint32_t j : it->second) {
            const int gx = static_cast<int>(i % n) - static_cast<int>(j % n);
            const int gy = static_cast<int>(i / n) - static_cast<int>(j / n);
            if (j <= i || (std::abs(gx) <= 2 && std::abs(gy) <= 2)) continue;
            best = std::min(best, glm::length(vec3(p[j].x, p[j].y, p[j].z) - a));
          }
        }
      }
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Vulkan: the renderer's own device, imported into vkcollide

struct Gpu {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t timestampBits = 0;
};

uint64_t gValidationMessages = 0;

VKAPI_ATTR VkBool32 VKAPI_CALL onValidation(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                            VkDebugUtilsMessageTypeFlagsEXT,
                                            const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  ++gValidationMessages;
  std::fprintf(stderr, "drape: validation: %s\n",
               data != nullptr && data->pMessage != nullptr ? data->pMessage : "?");
  return VK_FALSE;
}

bool hasLayer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& l) { return std::strcmp(l.layerName, name) == 0; });
}

Gpu createGpu(const Options& o) {
  Gpu g;
  DRAPE_VK(volkInitialize());
  std::vector<const char*> layers, extensions;
  if (o.validate) {
    if (!hasLayer("VK_LAYER_KHRONOS_validation")) {
      fail("--validate: VK_LAYER_KHRONOS_validation is not installed (Debian: vulkan-validationlayers)");
    }
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkcollide drape sample";
  app.apiVersion = VK_API_VERSION_1_3;
  const VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pNext = o.validate ? &features : nullptr;
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  ici.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ici.ppEnabledExtensionNames = extensions.data();
  DRAPE_VK(vkCreateInstance(&ici, nullptr, &g.instance));
  volkLoadInstance(g.instance);
  if (o.validate) {
    VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mci.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType =
        VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mci.pfnUserCallback = onValidation;
    DRAPE_VK(vkCreateDebugUtilsMessengerEXT(g.instance, &mci, nullptr, &g.messenger));
  }

  // A device with one queue family that does graphics and compute (render and simulate in one
  // command buffer), Vulkan 1.3 and timestamps; --device picks by name substring.
  uint32_t n = 0;
  vkEnumeratePhysicalDevices(g.instance, &n, nullptr);
  std::vector<VkPhysicalDevice> devices(n);
  vkEnumeratePhysicalDevices(g.instance, &n, devices.data());
  int bestRank = 1 << 30;
  for (VkPhysicalDevice d : devices) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(d, &p);
    if (p.apiVersion < VK_API_VERSION_1_3) continue;
    if (!o.device.empty() && std::string(p.deviceName).find(o.device) == std::string::npos) continue;
    uint32_t fc = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d, &fc, nullptr);
    std::vector<VkQueueFamilyProperties> fams(fc);
    vkGetPhysicalDeviceQueueFamilyProperties(d, &fc, fams.data());
    for (uint32_t f = 0; f < fc; ++f) {
      const VkQueueFlags need = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
      if ((fams[f].queueFlags & need) != need) continue;
      const int rank = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? 0
                       : p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? 1
                                                                                : 2;
      if (rank < bestRank) {
        bestRank = rank;
        g.physical = d;
        g.family = f;
        g.timestampBits = fams[f].timestampValidBits;
      }
      break;
    }
  }
  if (g.physical == VK_NULL_HANDLE)
    fail("no Vulkan 1.3 device with a graphics+compute queue" +
         (o.device.empty() ? std::string() : " matching '" + o.device + "'"));
  vkGetPhysicalDeviceProperties(g.physical, &g.props);
  vkGetPhysicalDeviceMemoryProperties(g.physical, &g.memory);

  // What vkcollide needs (vkcollide/context.h): Vulkan 1.3 with synchronization2 and maintenance4,
  // VK_KHR_push_descriptor. The sample adds dynamicRendering for its own render.
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = g.family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  f13.synchronization2 = VK_TRUE;
  f13.maintenance4 = VK_TRUE;
  f13.dynamicRendering = VK_TRUE;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f13};
  const char* deviceExtensions[] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = 1;
  dci.ppEnabledExtensionNames = deviceExtensions;
  DRAPE_VK(vkCreateDevice(g.physical, &dci, nullptr, &g.device));
  volkLoadDevice(g.device);
  vkGetDeviceQueue(g.device, g.family, 0, &g.queue);
  return g;
}

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
};

uint32_t memoryType(const Gpu& g, uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags fallback) {
  for (VkMemoryPropertyFlags flags : {want, fallback}) {
    for (uint32_t i = 0; i < g.memory.memoryTypeCount; ++i) {
      if ((bits & (1u << i)) != 0 && (g.memory.memoryTypes[i].propertyFlags & flags) == flags) return i;
    }
  }
  fail("no suitable memory type");
}

VkDeviceMemory allocate(const Gpu& g, const VkMemoryRequirements& req, bool host) {
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex =
      host ? memoryType(g, req.memoryTypeBits,
                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                            VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
           : memoryType(g, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  VkDeviceMemory mem = VK_NULL_HANDLE;
  DRAPE_VK(vkAllocateMemory(g.device, &mai, nullptr, &mem));
  return mem;
}

Buffer createBuffer(const Gpu& g, VkDeviceSize size, VkBufferUsageFlags usage, bool host) {
  Buffer b;
  b.size = size;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = usage;
  DRAPE_VK(vkCreateBuffer(g.device, &bci, nullptr, &b.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(g.device, b.buffer, &req);
  b.memory = allocate(g, req, host);
  DRAPE_VK(vkBindBufferMemory(g.device, b.buffer, b.memory, 0));
  if (host) DRAPE_VK(vkMapMemory(g.device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

void destroy(const Gpu& g, Buffer& b) {
  if (b.buffer != VK_NULL_HANDLE) vkDestroyBuffer(g.device, b.buffer, nullptr);
  if (b.memory != VK_NULL_HANDLE) vkFreeMemory(g.device, b.memory, nullptr);
  b = {};
}

struct Image {
  VkImage image = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
};

Image createImage(const Gpu& g, uint32_t w, uint32_t h, VkFormat format, VkImageUsageFlags usage,
                  VkImageAspectFlags aspect) {
  Image im;
  VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ici.imageType = VK_IMAGE_TYPE_2D;
  ici.format = format;
  ici.extent = {w, h, 1};
  ici.mipLevels = 1;
  ici.arrayLayers = 1;
  ici.samples = VK_SAMPLE_COUNT_1_BIT;
  ici.tiling = VK_IMAGE_TILING_OPTIMAL;
  ici.usage = usage;
  ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  DRAPE_VK(vkCreateImage(g.device, &ici, nullptr, &im.image));
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(g.device, im.image, &req);
  im.memory = allocate(g, req, false);
  DRAPE_VK(vkBindImageMemory(g.device, im.image, im.memory, 0));
  VkImageViewCreateInfo vci{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  vci.image = im.image;
  vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
  vci.format = format;
  vci.subresourceRange = {aspect, 0, 1, 0, 1};
  DRAPE_VK(vkCreateImageView(g.device, &vci, nullptr, &im.view));
  return im;
}

void destroy(const Gpu& g, Image& im) {
  vkDestroyImageView(g.device, im.view, nullptr);
  vkDestroyImage(g.device, im.image, nullptr);
  vkFreeMemory(g.device, im.memory, nullptr);
  im = {};
}

VkShaderModule shaderModule(const Gpu& g, const uint32_t* words, size_t bytes) {
  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = bytes;
  smci.pCode = words;
  VkShaderModule m = VK_NULL_HANDLE;
  DRAPE_VK(vkCreateShaderModule(g.device, &smci, nullptr, &m));
  return m;
}

struct ComputePipeline {
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

// `bindingCount` storage buffers (push descriptors) and a 32-byte push constant block.
ComputePipeline computePipeline(const Gpu& g, const uint32_t* words, size_t bytes, uint32_t bindingCount) {
  ComputePipeline p;
  VkDescriptorSetLayoutBinding bindings[2] = {};
  for (uint32_t b = 0; b < bindingCount; ++b) {
    bindings[b].binding = b;
    bindings[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[b].descriptorCount = 1;
    bindings[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dslci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  dslci.bindingCount = bindingCount;
  dslci.pBindings = bindings;
  DRAPE_VK(vkCreateDescriptorSetLayout(g.device, &dslci, nullptr, &p.setLayout));
  const VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 32};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &p.setLayout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  DRAPE_VK(vkCreatePipelineLayout(g.device, &plci, nullptr, &p.layout));
  VkShaderModule module = shaderModule(g, words, bytes);
  VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpci.stage.module = module;
  cpci.stage.pName = "main";
  cpci.layout = p.layout;
  DRAPE_VK(vkCreateComputePipelines(g.device, VK_NULL_HANDLE, 1, &cpci, nullptr, &p.pipeline));
  vkDestroyShaderModule(g.device, module, nullptr);
  return p;
}

void destroy(const Gpu& g, ComputePipeline& p) {
  vkDestroyPipeline(g.device, p.pipeline, nullptr);
  vkDestroyPipelineLayout(g.device, p.layout, nullptr);
  vkDestroyDescriptorSetLayout(g.device, p.setLayout, nullptr);
  p = {};
}

struct RenderPush {
  glm::mat4 viewProj;
  vec4 frontColor;
  vec4 backColor;
  uint32_t gridSize;
  uint32_t pad[3];
};
static_assert(sizeof(RenderPush) == 112);

constexpr VkFormat kColorFormat = VK_FORMAT_R8G8B8A8_UNORM;
constexpr VkFormat kDepthFormat = VK_FORMAT_D32_SFLOAT;

struct GraphicsPipeline {
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

GraphicsPipeline graphicsPipeline(const Gpu& g) {
  GraphicsPipeline p;
  // The particle buffer again, as a storage buffer for the vertex shader's normals.
  VkDescriptorSetLayoutBinding binding0{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_VERTEX_BIT,
                                        nullptr};
  VkDescriptorSetLayoutCreateInfo dslci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  dslci.bindingCount = 1;
  dslci.pBindings = &binding0;
  DRAPE_VK(vkCreateDescriptorSetLayout(g.device, &dslci, nullptr, &p.setLayout));
  const VkPushConstantRange range{VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                                  sizeof(RenderPush)};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &p.setLayout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &range;
  DRAPE_VK(vkCreatePipelineLayout(g.device, &plci, nullptr, &p.layout));
  VkShaderModule vs = shaderModule(g, vkc_spv_cloth_vs, sizeof(vkc_spv_cloth_vs));
  VkShaderModule fs = shaderModule(g, vkc_spv_cloth_fs, sizeof(vkc_spv_cloth_fs));
  VkPipelineShaderStageCreateInfo stages[2] = {{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO},
                                               {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO}};
  stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
  stages[0].module = vs;
  stages[0].pName = "main";
  stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
  stages[1].module = fs;
  stages[1].pName = "main";
  // The particle buffer's layout: vec4 per vertex (xyz position, w inverse mass, ignored).
  const VkVertexInputBindingDescription binding{0, sizeof(vkc::Float4), VK_VERTEX_INPUT_RATE_VERTEX};
  const VkVertexInputAttributeDescription attribute{0, 0, VK_FORMAT_R32G32B32A32_SFLOAT, 0};
  VkPipelineVertexInputStateCreateInfo vi{VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  vi.vertexBindingDescriptionCount = 1;
  vi.pVertexBindingDescriptions = &binding;
  vi.vertexAttributeDescriptionCount = 1;
  vi.pVertexAttributeDescriptions = &attribute;
  VkPipelineInputAssemblyStateCreateInfo ia{VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  ia.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPipelineViewportStateCreateInfo vp{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  vp.viewportCount = 1;
  vp.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo rs{VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  rs.polygonMode = VK_POLYGON_MODE_FILL;
  rs.cullMode = VK_CULL_MODE_NONE;
  rs.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
  rs.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo ms{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  ms.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineDepthStencilStateCreateInfo ds{VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
  ds.depthTestEnable = VK_TRUE;
  ds.depthWriteEnable = VK_TRUE;
  ds.depthCompareOp = VK_COMPARE_OP_LESS;
  VkPipelineColorBlendAttachmentState blendAttachment{};
  blendAttachment.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                                   VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  VkPipelineColorBlendStateCreateInfo cb{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  cb.attachmentCount = 1;
  cb.pAttachments = &blendAttachment;
  const VkDynamicState dynamics[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dyn{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
  dyn.dynamicStateCount = 2;
  dyn.pDynamicStates = dynamics;
  VkPipelineRenderingCreateInfo rendering{VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
  rendering.colorAttachmentCount = 1;
  rendering.pColorAttachmentFormats = &kColorFormat;
  rendering.depthAttachmentFormat = kDepthFormat;
  VkGraphicsPipelineCreateInfo gpci{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, &rendering};
  gpci.stageCount = 2;
  gpci.pStages = stages;
  gpci.pVertexInputState = &vi;
  gpci.pInputAssemblyState = &ia;
  gpci.pViewportState = &vp;
  gpci.pRasterizationState = &rs;
  gpci.pMultisampleState = &ms;
  gpci.pDepthStencilState = &ds;
  gpci.pColorBlendState = &cb;
  gpci.pDynamicState = &dyn;
  gpci.layout = p.layout;
  DRAPE_VK(vkCreateGraphicsPipelines(g.device, VK_NULL_HANDLE, 1, &gpci, nullptr, &p.pipeline));
  vkDestroyShaderModule(g.device, vs, nullptr);
  vkDestroyShaderModule(g.device, fs, nullptr);
  return p;
}

void memoryBarrier(VkCommandBuffer cmd, VkPipelineStageFlags2 srcStage, VkAccessFlags2 srcAccess,
                   VkPipelineStageFlags2 dstStage, VkAccessFlags2 dstAccess) {
  VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  mb.srcStageMask = srcStage;
  mb.srcAccessMask = srcAccess;
  mb.dstStageMask = dstStage;
  mb.dstAccessMask = dstAccess;
  VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  di.memoryBarrierCount = 1;
  di.pMemoryBarriers = &mb;
  vkCmdPipelineBarrier2(cmd, &di);
}

VkImageMemoryBarrier2 imageBarrier(VkImage image, VkImageAspectFlags aspect, VkPipelineStageFlags2 srcStage,
                                   VkAccessFlags2 srcAccess, VkPipelineStageFlags2 dstStage,
                                   VkAccessFlags2 dstAccess, VkImageLayout from, VkImageLayout to) {
  VkImageMemoryBarrier2 b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2};
  b.srcStageMask = srcStage;
  b.srcAccessMask = srcAccess;
  b.dstStageMask = dstStage;
  b.dstAccessMask = dstAccess;
  b.oldLayout = from;
  b.newLayout = to;
  b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = {aspect, 0, 1, 0, 1};
  return b;
}

void pushBuffers(VkCommandBuffer cmd, const ComputePipeline& p, VkBuffer b0, VkBuffer b1 = VK_NULL_HANDLE) {
  VkDescriptorBufferInfo infos[2] = {{b0, 0, VK_WHOLE_SIZE}, {b1, 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet writes[2] = {{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET},
                                    {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET}};
  for (uint32_t b = 0; b < 2; ++b) {
    writes[b].dstBinding = b;
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[b].pBufferInfo = &infos[b];
  }
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, b1 == VK_NULL_HANDLE ? 1 : 2,
                            writes);
}

// The sample's timed sections, in the order they run within a frame.
enum Section { kIntegrate, kConstraints, kSelf, kShapes, kRender, kSectionCount };
const char* const kSectionNames[kSectionCount] = {"integrate (sample)", "constraints (sample)",
                                                  "vkcollide self", "vkcollide shapes", "render + readback"};
constexpr uint32_t kStampsPerSubstep = 4;  // after integrate, constraints, self, shapes

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ---------------------------------------------------------------------------------------------

int run(const Options& o) {
  const Scene sc;
  const auto wallStart = std::chrono::steady_clock::now();
  const uint32_t n = o.size, count = n * n;
  const VkDeviceSize particleBytes = VkDeviceSize{count} * sizeof(vkc::Float4);
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) fail("cannot create --out directory '" + o.out + "': " + ec.message());

  Gpu g = createGpu(o);
  std::printf(
      "drape: %ux%u cloth (%u particles), %u frames, %u substeps x %u constraint iterations, self collision "
      "%s, "
      "device %s%s\n",
      n, n, count, o.frames, o.substeps, o.iterations,
      !o.self ? "off" : ("every " + std::to_string(o.selfEvery) + " substeps").c_str(), g.props.deviceName,
      o.validate ? ", validation on" : "");

  // The renderer's device, imported: vkcollide records into the sample's command buffers and uses
  // the queue only for its one-time uploads.
  vkc::ContextImportInfo ii;
  ii.instance = g.instance;
  ii.physicalDevice = g.physical;
  ii.device = g.device;
  ii.queueFamilyIndex = g.family;
  ii.queue = g.queue;
  ii.getInstanceProcAddr = vkGetInstanceProcAddr;
  auto imported = vkc::Context::import(ii);
  if (!imported) fail("vkc::Context::import: " + imported.message());
  std::unique_ptr<vkc::Context> context = std::move(imported.value());

  const std::vector<vkc::Float4> spheres = colliderSpheres(o, sc);
  const vkc::ClothRange cloths[] = {{0, count}};
  const vkc::ClothColliders colliders[] = {{spheres, {}, kCapsules}};
  auto stageResult = vkc::ShapeCollisionStage::create(*context, {cloths, count, colliders});
  if (!stageResult) fail("vkc::ShapeCollisionStage::create: " + stageResult.message());
  std::unique_ptr<vkc::ShapeCollisionStage> shapes = std::move(stageResult.value());
  std::unique_ptr<vkc::SelfCollisionStage> selfStage;
  if (o.self) {
    auto r = vkc::SelfCollisionStage::create(*context, {cloths, count, {}, false});
    if (!r) fail("vkc::SelfCollisionStage::create: " + r.message());
    selfStage = std::move(r.value());
  }

  // Buffers. The particle buffer is storage (solver, vkcollide) AND vertex (render).
  const VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  Buffer particles = createBuffer(g, particleBytes, storage | VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, false);
  Buffer prev = createBuffer(g, particleBytes, storage, false);
  std::vector<uint32_t> clothIndices;
  for (uint32_t y = 0; y + 1 < n; ++y) {
    for (uint32_t x = 0; x + 1 < n; ++x) {
      const uint32_t a = y * n + x, b = a + 1, c = a + n, d = c + 1;
      clothIndices.insert(clothIndices.end(), {a, c, b, b, c, d});
    }
  }
  Mesh colliderMesh;
  // Drawn at their true size; they collide grown by the cloth's thickness (colliderSpheres).
  appendSphere(colliderMesh, vec3(sc.sphere), sc.sphere.w, 48, 24);
  appendTaperedCapsule(colliderMesh, vec3(sc.capsuleA), sc.capsuleA.w, vec3(sc.capsuleB), sc.capsuleB.w, 32,
                       16);
  const VkDeviceSize clothIndexBytes = clothIndices.size() * sizeof(uint32_t);
  const VkDeviceSize meshVertexBytes = colliderMesh.vertices.size() * sizeof(vec4);
  const VkDeviceSize meshIndexBytes = colliderMesh.indices.size() * sizeof(uint32_t);
  Buffer clothIndexBuffer = createBuffer(
      g, clothIndexBytes, VK_BUFFER_USAGE_INDEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, false);
  Buffer meshVertices = createBuffer(
      g, meshVertexBytes, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, false);
  Buffer meshIndices = createBuffer(
      g, meshIndexBytes, VK_BUFFER_USAGE_INDEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, false);
  const VkDeviceSize imageBytes = VkDeviceSize{o.width} * o.height * 4;
  Buffer readParticles = createBuffer(g, particleBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
  Buffer readImage = createBuffer(g, imageBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
  Image color = createImage(g, o.width, o.height, kColorFormat,
                            VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                            VK_IMAGE_ASPECT_COLOR_BIT);
  Image depth = createImage(g, o.width, o.height, kDepthFormat, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                            VK_IMAGE_ASPECT_DEPTH_BIT);

  ComputePipeline integrate = computePipeline(g, vkc_spv_integrate, sizeof(vkc_spv_integrate), 2);
  ComputePipeline constraints = computePipeline(g, vkc_spv_constraints, sizeof(vkc_spv_constraints), 1);
  GraphicsPipeline render = graphicsPipeline(g);

  VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpci.queueFamilyIndex = g.family;
  VkCommandPool pool = VK_NULL_HANDLE;
  DRAPE_VK(vkCreateCommandPool(g.device, &cpci, nullptr, &pool));
  VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cbai.commandPool = pool;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  DRAPE_VK(vkAllocateCommandBuffers(g.device, &cbai, &cmd));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  DRAPE_VK(vkCreateFence(g.device, &fci, nullptr, &fence));
  // Timestamps: one before the frame's work, then one after every section.
  const uint32_t queryCount = 2 + kStampsPerSubstep * o.substeps;
  VkQueryPool queries = VK_NULL_HANDLE;
  if (g.timestampBits > 0) {
    VkQueryPoolCreateInfo qpci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qpci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpci.queryCount = queryCount;
    DRAPE_VK(vkCreateQueryPool(g.device, &qpci, nullptr, &queries));
  }

  auto submit = [&]() {
    VkCommandBufferSubmitInfo cbsi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    cbsi.commandBuffer = cmd;
    VkSubmitInfo2 si{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    si.commandBufferInfoCount = 1;
    si.pCommandBufferInfos = &cbsi;
    DRAPE_VK(vkQueueSubmit2(g.queue, 1, &si, fence));
    DRAPE_VK(vkWaitForFences(g.device, 1, &fence, VK_TRUE, UINT64_MAX));
    DRAPE_VK(vkResetFences(g.device, 1, &fence));
  };
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;

  // Initial upload through a staging buffer: particles, prev (= particles: at rest), meshes.
  const std::vector<vkc::Float4> initial = initialCloth(o, sc);
  {
    const VkDeviceSize total = particleBytes + clothIndexBytes + meshVertexBytes + meshIndexBytes;
    Buffer staging = createBuffer(g, total, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
    auto* bytes = static_cast<uint8_t*>(staging.mapped);
    std::memcpy(bytes, initial.data(), particleBytes);
    std::memcpy(bytes + particleBytes, clothIndices.data(), clothIndexBytes);
    std::memcpy(bytes + particleBytes + clothIndexBytes, colliderMesh.vertices.data(), meshVertexBytes);
    std::memcpy(bytes + particleBytes + clothIndexBytes + meshVertexBytes, colliderMesh.indices.data(),
                meshIndexBytes);
    DRAPE_VK(vkBeginCommandBuffer(cmd, &begin));
    VkBufferCopy region{0, 0, particleBytes};
    vkCmdCopyBuffer(cmd, staging.buffer, particles.buffer, 1, &region);
    vkCmdCopyBuffer(cmd, staging.buffer, prev.buffer, 1, &region);
    region = {particleBytes, 0, clothIndexBytes};
    vkCmdCopyBuffer(cmd, staging.buffer, clothIndexBuffer.buffer, 1, &region);
    region = {particleBytes + clothIndexBytes, 0, meshVertexBytes};
    vkCmdCopyBuffer(cmd, staging.buffer, meshVertices.buffer, 1, &region);
    region = {particleBytes + clothIndexBytes + meshVertexBytes, 0, meshIndexBytes};
    vkCmdCopyBuffer(cmd, staging.buffer, meshIndices.buffer, 1, &region);
    memoryBarrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_VERTEX_INPUT_BIT,
                  VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT |
                      VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT | VK_ACCESS_2_INDEX_READ_BIT);
    DRAPE_VK(vkEndCommandBuffer(cmd));
    submit();
    destroy(g, staging);
  }

  const gpu::IntegratePush ip = integratePush(o, sc);
  const std::vector<gpu::ConstraintPush> colours = constraintColours(o, sc);
  const uint32_t groups = (count + gpu::kGroupSize - 1) / gpu::kGroupSize;

  // vkcollide's side of the synchronization: it waits for the sample's compute writes (the
  // constraints) and makes its results visible to the sample's next compute pass (integration),
  // to the render (vertex input, and the vertex shader's normals) and to the readback copy.
  vkc::RecordSync sync;
  sync.srcStage = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
  sync.srcAccess = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
  sync.dstStage = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_VERTEX_ATTRIBUTE_INPUT_BIT |
                  VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT | VK_PIPELINE_STAGE_2_COPY_BIT;
  sync.dstAccess = VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT |
                   VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT | VK_ACCESS_2_TRANSFER_READ_BIT;

  // Camera.
  const float aspect = static_cast<float>(o.width) / static_cast<float>(o.height);
  glm::mat4 proj = glm::perspective(glm::radians(34.0f), aspect, 0.05f, 20.0f);
  proj[1][1] *= -1.0f;  // Vulkan's y points down
  const glm::mat4 view = glm::lookAt(vec3(1.5f, 1.45f, 3.9f), vec3(0.1f, -0.12f, 0.0f), vec3(0, 1, 0));
  const glm::mat4 viewProj = proj * view;

  std::vector<std::vector<double>> sectionMs(kSectionCount);
  std::vector<double> frameMs;
  struct Saved {
    uint32_t frame;
    std::vector<uint8_t> rgba;
  };
  std::vector<Saved> saved;
  struct Snapshot {
    uint32_t frame;
    std::vector<vkc::Float4> particles;
  };
  std::vector<Snapshot> snapshots;
  auto snapshotFrame =
      [&](uint32_t f) {  // 1-based frame numbers: 1, 2, 4, 8, ... and every 30th, and the last
        const uint32_t k = f + 1;
        return (k & (k - 1)) == 0 || k % 30 == 0 || k == o.frames;
      };
  FrameStats worst;
  worst.maxStretch = 0;
  uint32_t firstBadFrame = 0, worstStretchFrame = 0;
  bool bad = false;
  // Particles inside a drawn collider (which they should keep clothThickness away from) by more
  // than this fail --check. (The cloth's spacing is 0.016 m at 128x128, 0.065 m at 32x32.)
  const float penetrationTolerance = 0.005f;  // m
  const auto simStart = std::chrono::steady_clock::now();

  for (uint32_t frame = 0; frame < o.frames; ++frame) {
    const bool savePng = frame % o.pngEvery == 0 || frame + 1 == o.frames;
    DRAPE_VK(vkBeginCommandBuffer(cmd, &begin));
    if (queries != VK_NULL_HANDLE) vkCmdResetQueryPool(cmd, queries, 0, queryCount);
    uint32_t query = 0;
    auto stamp = [&]() {
      if (queries != VK_NULL_HANDLE)
        vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, queries, query);
      ++query;
    };
    // The previous frame's render and readback read the particles: finish before integrating.
    memoryBarrier(cmd,
                  VK_PIPELINE_STAGE_2_VERTEX_ATTRIBUTE_INPUT_BIT | VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT |
                      VK_PIPELINE_STAGE_2_COPY_BIT,
                  VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_NONE);
    stamp();
    for (uint32_t s = 0; s < o.substeps; ++s) {
      // 1. Verlet integration (the sample's shader).
      pushBuffers(cmd, integrate, particles.buffer, prev.buffer);
      vkCmdPushConstants(cmd, integrate.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof ip, &ip);
      vkCmdDispatch(cmd, groups, 1, 1);
      memoryBarrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                    VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                    VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
      stamp();
      // 2. Distance constraints: every colour in turn, in place.
      for (uint32_t it = 0; it < o.iterations; ++it) {
        for (size_t k = 0; k < colours.size(); ++k) {
          pushBuffers(cmd, constraints, particles.buffer);
          vkCmdPushConstants(cmd, constraints.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof colours[k],
                             &colours[k]);
          vkCmdDispatch(cmd, groups, 1, 1);
          if (it + 1 < o.iterations || k + 1 < colours.size()) {
            memoryBarrier(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
                          VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
                          VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
          }
        }
      }
      stamp();
      // 3. vkcollide: self collision (particles of the cloth keep selfSettings().distance apart).
      //    vkcollide's opening barrier (from `sync.src*`) orders its passes after the constraints;
      //    its closing barrier (to `sync.dst*`) orders the shape stage after it.
      if (selfInSubstep(o, s)) {
        vkc::SelfRecordInfo si;
        si.particles = {particles.buffer, 0, particleBytes};
        si.settings = selfSettings(o, sc);
        si.sync = sync;
        must(selfStage->record(cmd, si), "SelfCollisionStage::record");
      }
      stamp();
      // 4. vkcollide: sphere and capsule collision of this substep, swept (CCD) from prev to current.
      vkc::ShapeRecordInfo ri;
      ri.particles = {particles.buffer, 0, particleBytes};
      ri.prevParticles = {prev.buffer, 0, particleBytes};
      ri.colliders = colliders;
      ri.settings = shapeSettings(o, sc, s);
      ri.sync = sync;
      must(shapes->record(cmd, ri), "ShapeCollisionStage::record");
      stamp();
    }

    // 5. Render: colliders, then the cloth straight from the particle buffer.
    VkImageMemoryBarrier2 toAttachment[2] = {
        imageBarrier(color.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_NONE,
                     VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT, VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT,
                     VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL),
        imageBarrier(
            depth.image, VK_IMAGE_ASPECT_DEPTH_BIT,
            VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT,
            VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
            VK_PIPELINE_STAGE_2_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_2_LATE_FRAGMENT_TESTS_BIT,
            VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_READ_BIT | VK_ACCESS_2_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
            VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL)};
    VkDependencyInfo di{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    di.imageMemoryBarrierCount = 2;
    di.pImageMemoryBarriers = toAttachment;
    vkCmdPipelineBarrier2(cmd, &di);
    VkRenderingAttachmentInfo colorAttachment{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
    colorAttachment.imageView = color.view;
    colorAttachment.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    colorAttachment.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    colorAttachment.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    colorAttachment.clearValue.color = {{0.93f, 0.94f, 0.96f, 1.0f}};
    VkRenderingAttachmentInfo depthAttachment{VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
    depthAttachment.imageView = depth.view;
    depthAttachment.imageLayout = VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL;
    depthAttachment.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    depthAttachment.storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    depthAttachment.clearValue.depthStencil = {1.0f, 0};
    VkRenderingInfo rinfo{VK_STRUCTURE_TYPE_RENDERING_INFO};
    rinfo.renderArea = {{0, 0}, {o.width, o.height}};
    rinfo.layerCount = 1;
    rinfo.colorAttachmentCount = 1;
    rinfo.pColorAttachments = &colorAttachment;
    rinfo.pDepthAttachment = &depthAttachment;
    vkCmdBeginRendering(cmd, &rinfo);
    const VkViewport viewport{0, 0, static_cast<float>(o.width), static_cast<float>(o.height), 0, 1};
    const VkRect2D scissor{{0, 0}, {o.width, o.height}};
    vkCmdSetViewport(cmd, 0, 1, &viewport);
    vkCmdSetScissor(cmd, 0, 1, &scissor);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, render.pipeline);
    {
      const VkDescriptorBufferInfo info{particles.buffer, 0, particleBytes};
      VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      write.descriptorCount = 1;
      write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      write.pBufferInfo = &info;
      vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, render.layout, 0, 1, &write);
    }
    const VkDeviceSize zero = 0;
    RenderPush push{viewProj, vec4(0.55f, 0.58f, 0.62f, 1), vec4(0.55f, 0.58f, 0.62f, 1), 0, {}};
    vkCmdPushConstants(cmd, render.layout, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                       sizeof push, &push);
    vkCmdBindVertexBuffers(cmd, 0, 1, &meshVertices.buffer, &zero);
    vkCmdBindIndexBuffer(cmd, meshIndices.buffer, 0, VK_INDEX_TYPE_UINT32);
    vkCmdDrawIndexed(cmd, static_cast<uint32_t>(colliderMesh.indices.size()), 1, 0, 0, 0);
    push = {viewProj, vec4(0.85f, 0.33f, 0.22f, 1), vec4(0.95f, 0.78f, 0.35f, 1), n, {}};
    vkCmdPushConstants(cmd, render.layout, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                       sizeof push, &push);
    vkCmdBindVertexBuffers(cmd, 0, 1, &particles.buffer, &zero);  // the particle buffer, as it is
    vkCmdBindIndexBuffer(cmd, clothIndexBuffer.buffer, 0, VK_INDEX_TYPE_UINT32);
    vkCmdDrawIndexed(cmd, static_cast<uint32_t>(clothIndices.size()), 1, 0, 0, 0);
    vkCmdEndRendering(cmd);

    // 6. Readback: the image (frames that become PNGs) and the particles (checks, CPU comparison).
    VkImageMemoryBarrier2 toCopy = imageBarrier(
        color.image, VK_IMAGE_ASPECT_COLOR_BIT, VK_PIPELINE_STAGE_2_COLOR_ATTACHMENT_OUTPUT_BIT,
        VK_ACCESS_2_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT,
        VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    di = {VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    di.imageMemoryBarrierCount = 1;
    di.pImageMemoryBarriers = &toCopy;
    vkCmdPipelineBarrier2(cmd, &di);
    if (savePng) {
      VkBufferImageCopy bic{};
      bic.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
      bic.imageExtent = {o.width, o.height, 1};
      vkCmdCopyImageToBuffer(cmd, color.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readImage.buffer, 1,
                             &bic);
    }
    const VkBufferCopy region{0, 0, particleBytes};
    vkCmdCopyBuffer(cmd, particles.buffer, readParticles.buffer, 1, &region);
    stamp();
    memoryBarrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    DRAPE_VK(vkEndCommandBuffer(cmd));
    const auto t0 = std::chrono::steady_clock::now();
    submit();
    frameMs.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());

    if (queries != VK_NULL_HANDLE) {
      std::vector<uint64_t> ts(queryCount);
      DRAPE_VK(vkGetQueryPoolResults(g.device, queries, 0, queryCount, ts.size() * sizeof(uint64_t),
                                     ts.data(), sizeof(uint64_t),
                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
      const uint64_t mask = g.timestampBits >= 64 ? ~uint64_t{0} : (uint64_t{1} << g.timestampBits) - 1;
      auto ms = [&](uint32_t a, uint32_t b) {
        return static_cast<double>((ts[b] - ts[a]) & mask) *
               static_cast<double>(g.props.limits.timestampPeriod) * 1e-6;
      };
      double sum[kSectionCount] = {};
      for (uint32_t s = 0; s < o.substeps; ++s) {
        const uint32_t q = kStampsPerSubstep * s;
        sum[kIntegrate] += ms(q, q + 1);
        sum[kConstraints] += ms(q + 1, q + 2);
        sum[kSelf] += ms(q + 2, q + 3);
        sum[kShapes] += ms(q + 3, q + 4);
      }
      sum[kRender] = ms(kStampsPerSubstep * o.substeps, kStampsPerSubstep * o.substeps + 1);
      for (int k = 0; k < kSectionCount; ++k) sectionMs[k].push_back(sum[k]);
    }

    const std::span<const vkc::Float4> result(static_cast<const vkc::Float4*>(readParticles.mapped), count);
    const FrameStats st = frameStats(result, o, sc);
    worst.finite = worst.finite && st.finite;
    worst.sphereDepth = std::max(worst.sphereDepth, st.sphereDepth);
    worst.capsuleDepth = std::max(worst.capsuleDepth, st.capsuleDepth);
    if (st.maxStretch > worst.maxStretch) {
      worst.maxStretch = st.maxStretch;
      worstStretchFrame = frame;
    }
    if (!bad &&
        (!st.finite || st.sphereDepth > penetrationTolerance || st.capsuleDepth > penetrationTolerance)) {
      bad = true;
      firstBadFrame = frame;
    }
    if (snapshotFrame(frame))
      snapshots.push_back({frame + 1, std::vector<vkc::Float4>(result.begin(), result.end())});
    if (savePng) {
      const auto* px = static_cast<const uint8_t*>(readImage.mapped);
      Saved sv{frame, std::vector<uint8_t>(px, px + imageBytes)};
      char name[64];
      std::snprintf(name, sizeof name, "frame_%04u.png", frame);
      const std::string path = (std::filesystem::path(o.out) / name).string();
      if (!writePng(path.c_str(), static_cast<int>(o.width), static_cast<int>(o.height), sv.rgba.data())) {
        fail("cannot write " + path);
      }
      saved.push_back(std::move(sv));
    }
  }
  const double simSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - simStart).count();
  const std::vector<vkc::Float4> gpuFinal = snapshots.back().particles;

  // Contact sheet: up to 12 of the saved frames, evenly spaced, at half size, 4 per row.
  {
    const size_t cells = std::min<size_t>(12, saved.size());
    const uint32_t cw = o.width / 2, ch = o.height / 2, cols = 4;
    const uint32_t rows = static_cast<uint32_t>((cells + cols - 1) / cols);
    std::vector<uint8_t> sheet(size_t{cw} * cols * ch * rows * 4, 255);
    for (size_t c = 0; c < cells; ++c) {
      const Saved& sv = saved[cells == 1 ? 0 : c * (saved.size() - 1) / (cells - 1)];
      const uint32_t ox = static_cast<uint32_t>(c % cols) * cw, oy = static_cast<uint32_t>(c / cols) * ch;
      for (uint32_t y = 0; y < ch; ++y) {
        for (uint32_t x = 0; x < cw; ++x) {
          for (uint32_t k = 0; k < 4; ++k) {  // 2x2 box filter
            uint32_t acc = 0;
            for (uint32_t dy = 0; dy < 2; ++dy) {
              for (uint32_t dx = 0; dx < 2; ++dx)
                acc += sv.rgba[((size_t{2 * y + dy} * o.width) + 2 * x + dx) * 4 + k];
            }
            sheet[((size_t{oy + y} * cw * cols) + ox + x) * 4 + k] = static_cast<uint8_t>(acc / 4);
          }
        }
      }
    }
    const std::string path = (std::filesystem::path(o.out) / "contact_sheet.png").string();
    if (!writePng(path.c_str(), static_cast<int>(cw * cols), static_cast<int>(ch * rows), sheet.data())) {
      fail("cannot write " + path);
    }
    std::printf("drape: wrote %zu frames and %s (frames", saved.size(), path.c_str());
    for (size_t c = 0; c < cells; ++c)
      std::printf(" %u", saved[cells == 1 ? 0 : c * (saved.size() - 1) / (cells - 1)].frame);
    std::printf(")\n");
  }

  std::printf("drape: GPU time per frame (median over %u frames, timestamps):\n", o.frames);
  double total = 0;
  for (int k = 0; k < kSectionCount && queries != VK_NULL_HANDLE; ++k) {
    const double m = medianOf(sectionMs[k]);
    total += m;
    std::string note;
    if (k == kSelf) {
      note = " (" + std::to_string(o.self ? o.substeps / o.selfEvery : 0) + " passes)";
    } else if (k < kRender) {
      note = " (" + std::to_string(o.substeps) + " substeps)";
    }
    std::printf("  %-22s %8.3f ms%s\n", kSectionNames[k], m, note.c_str());
  }
  if (queries == VK_NULL_HANDLE) std::printf("  (the queue has no timestamps)\n");
  std::printf("  %-22s %8.3f ms; submit-to-fence wall time %.3f ms; %u frames simulated+rendered in %.2f s\n",
              "sum", total, medianOf(frameMs), o.frames, simSeconds);
  std::printf(
      "drape: worst over all frames: sphere depth %.5f m, capsule depth %.5f m, max structural stretch %.3f "
      "(frame %u), %s\n"
      "       (depths: positive = inside the drawn shape; the cloth keeps %.4f m away from it)\n",
      double{worst.sphereDepth}, double{worst.capsuleDepth}, double{worst.maxStretch}, worstStretchFrame,
      worst.finite ? "all finite" : "NaN/inf found", double{clothThickness(o, sc)});

  // The cloth ends on the sphere: the particle above the sphere's centre rests on its top.
  const vec3 top = vec3(sc.sphere) + vec3(0, sc.sphere.w, 0);
  uint32_t nearest = 0;
  float best = 1e30f;
  for (uint32_t i = 0; i < count; ++i) {
    const float dx = gpuFinal[i].x - top.x, dz = gpuFinal[i].z - top.z;
    if (dx * dx + dz * dz < best) {
      best = dx * dx + dz * dz;
      nearest = i;
    }
  }
  const float heightAboveTop = gpuFinal[nearest].y - top.y;
  const bool onSphere = std::sqrt(best) < 0.1f && heightAboveTop > -penetrationTolerance &&
                        heightAboveTop < clothThickness(o, sc) + 0.05f;
  std::printf("drape: cloth over the sphere's top: particle %u at %.4f m above it, %.4f m off-axis: %s\n",
              nearest, double{heightAboveTop}, double{std::sqrt(best)},
              onSphere ? "resting on the sphere" : "NOT on the sphere");
  {
    const float h = sc.clothSide / static_cast<float>(o.size - 1);
    std::printf("drape: last frame: closest particles more than 2 grid steps apart are %.4f m apart (grid step %.4f m; "
                "self collision distance %s)\n",
                double{closestNonNeighbours(gpuFinal, n, h)}, double{h},
                o.self ? (std::to_string(selfSettings(o, sc).distance) + " m").c_str() : "off");
  }

  // CPU twin: the same frames with the same solver in C++ and vkc::collideShapesCpu.
  if (o.cpuTwin) {
    CpuCloth cpu{initial, initial};
    if (o.perturbCpu) {
      for (size_t i = 0; i < count; ++i) {
        cpu.particles[i].y = cpu.prev[i].y = std::nextafter(initial[i].y, 1e30f);
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    size_t next = 0;
    std::printf(
        "drape: CPU twin (same solver in C++ + vkc::collideSelfCpu + vkc::collideShapesCpu, %s): |GPU - "
        "CPU|\n",
        vkc::toString(o.cpuBackend));
    std::printf("  %6s %12s %12s\n", "frame", "max (m)", "mean (m)");
    for (uint32_t f = 1; f <= o.frames && next < snapshots.size(); ++f) {
      cpuFrame(cpu, o, sc, spheres);
      if (snapshots[next].frame != f) continue;
      double maxD = 0, sumD = 0;
      for (uint32_t i = 0; i < count; ++i) {
        const vkc::Float4& a = snapshots[next].particles[i];
        const vkc::Float4& b = cpu.particles[i];
        const double d = glm::length(glm::dvec3(a.x - b.x, a.y - b.y, a.z - b.z));
        maxD = std::max(maxD, d);
        sumD += d;
      }
      std::printf("  %6u %12.3e %12.3e\n", f, maxD, sumD / count);
      ++next;
    }
    std::printf(
        "  CPU twin took %.2f s%s. Both sides do the same float operations in the same order: the\n"
        "  solver is one source (cloth_shared.h; GLSL `precise`, C++ -ffp-contract=off) and vkcollide's\n"
        "  GPU and CPU collision agree within kShapeCollisionTolerance / kSelfCollisionTolerance. 0 means\n"
        "  bitwise equal (lavapipe runs the shaders on this CPU with IEEE float operations). A GPU whose\n"
        "  sqrt, division or collision rounds differently starts tiny differences that the contacts\n"
        "  amplify (which particle touches first, friction sticking or slipping): the runs drift apart\n"
        "  chaotically over the frames while each stays plausible (--perturb-cpu starts the CPU 1 ulp higher "
        "to show it).\n",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
        o.perturbCpu ? " (started 1 ulp higher: --perturb-cpu)" : "");
  }

  vkDeviceWaitIdle(g.device);
  shapes.reset();
  selfStage.reset();
  context.reset();
  if (queries != VK_NULL_HANDLE) vkDestroyQueryPool(g.device, queries, nullptr);
  vkDestroyFence(g.device, fence, nullptr);
  vkDestroyCommandPool(g.device, pool, nullptr);
  destroy(g, integrate);
  destroy(g, constraints);
  vkDestroyPipeline(g.device, render.pipeline, nullptr);
  vkDestroyPipelineLayout(g.device, render.layout, nullptr);
  vkDestroyDescriptorSetLayout(g.device, render.setLayout, nullptr);
  destroy(g, color);
  destroy(g, depth);
  for (Buffer* b :
       {&particles, &prev, &clothIndexBuffer, &meshVertices, &meshIndices, &readParticles, &readImage}) {
    destroy(g, *b);
  }
  vkDestroyDevice(g.device, nullptr);
  if (g.messenger != VK_NULL_HANDLE) vkDestroyDebugUtilsMessengerEXT(g.instance, g.messenger, nullptr);
  vkDestroyInstance(g.instance, nullptr);

  std::printf("drape: wall time %.2f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count());
  int rc = 0;
  if (o.validate) {
    std::printf("drape: validation messages: %llu\n", static_cast<unsigned long long>(gValidationMessages));
    if (gValidationMessages > 0) rc = 1;
  }
  if (o.check) {
    const bool ok = !bad && worst.finite && worst.maxStretch < 2.0f && onSphere;
    if (bad)
      std::printf("drape: check: frame %u has NaN or a particle inside a collider beyond %.3f m\n",
                  firstBadFrame, double{penetrationTolerance});
    if (worst.maxStretch >= 2.0f)
      std::printf("drape: check: a structural edge stretched to %.2fx its rest length\n",
                  double{worst.maxStretch});
    if (!onSphere) std::printf("drape: check: the cloth does not end resting on the sphere\n");
    std::printf("drape: check %s\n", ok ? "passed" : "FAILED");
    if (!ok) rc = 1;
  }
  return rc;
}

}  // namespace
}  // namespace drape

int main(int argc, char** argv) {
  return drape::run(drape::parseOptions(argc, argv));
}
