// vkcollide sample "spotdrape": a square cloth falls onto Spot the cow (a closed triangle mesh of
// 1,654 triangles read from an OBJ file, public domain), which turns and bobs rigidly under it, and
// drapes over it; what slides off lands on a ground mesh. Mesh collision (include/vkcollide/
// collide_meshes.h) on the CPU twin: continuous (swept against the moving cow), with friction.
//
// What to copy:
//  - the meshes: the cow's vertices stay in its own (mesh) space and move by a RigidTransform per
//    frame; the ground is a static mesh in world space. One collideMeshesCpu call per substep handles
//    both (one tree over all their triangles).
//  - substeps: the frame's motion of the cow (transform at the frame's start -> at its end) is split
//    with vkc::meshesAt (vkcollide/scene.h): substep s of S meets the cow moving from alpha s/S to
//    (s+1)/S of the frame's motion (translation lerped, rotation slerped), so the substeps add up to
//    the frame's motion exactly as the stage models it.
//  - the tree: kept between calls (MeshTree spans + `built`): built on the first call, refitted on
//    every later one (the cow moves; topology unchanged).
// The cloth solver (Verlet + distance constraints) is the drape sample's CPU twin
// (samples/drape/shaders/cloth_shared.h); the images come from a small software rasterizer in this
// file (flat shading, z-buffer), so the sample needs no GPU. With --vulkan the same call runs on the
// Vulkan mesh stage (MeshCollisionStage, created once for the cloth's and the meshes' layout; its
// run() uploads, records, submits and reads back every substep: the convenience path, not the
// recording a renderer would do, see docs/integration.md).
//
// Usage: spotdrape [--size N] [--frames F] [--substeps S] [--png-every K] [--out DIR] [--mesh OBJ]
//                  [--scalar | --vulkan [--device SEL] [--validate]] [--no-ccd] [--check]
// Writes frame_NNNN.png every K frames and final.png to --out (default ./spotdrape-out). --check
// exits 1 unless every particle is finite and outside the cow and above the ground (within 1 mm) at
// the end of every frame, and part of the cloth ends resting on the cow.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>

#include "cloth.h"      // drape's solver parameters and initial grid
#include "colliders.h"  // drape::writePng
#include "vkcollide/scene.h"
#include "vkcollide/vkcollide.h"

namespace {

using glm::vec3;
using glm::vec4;

struct Args {
  uint32_t size = 48, frames = 150, substeps = 8, pngEvery = 25;
  std::string out = "spotdrape-out";
  std::string mesh = SPOTDRAPE_MESH;
  vkc::Backend backend = vkc::Backend::kCpuSimd;
  bool continuous = true;
  bool check = false;
  const char* device = nullptr;  // --vulkan: the device selector (ContextCreateInfo::deviceSelector)
  bool validate = false;         // --vulkan: validation layers on; any message fails the run
};

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "spotdrape: %s\n", message.c_str());
  std::exit(1);
}

uint32_t count(const char* flag, const char* v, uint32_t lo, uint32_t hi) {
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || x < static_cast<long>(lo) || x > static_cast<long>(hi)) {
    die(std::string(flag) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return static_cast<uint32_t>(x);
}

Args parseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    const bool more = i + 1 < argc;
    if (s == "--size" && more) a.size = count("--size", argv[++i], 4, 512);
    else if (s == "--frames" && more) a.frames = count("--frames", argv[++i], 1, 100000);
    else if (s == "--substeps" && more) a.substeps = count("--substeps", argv[++i], 1, 64);
    else if (s == "--png-every" && more) a.pngEvery = count("--png-every", argv[++i], 0, 100000);
    else if (s == "--out" && more) a.out = argv[++i];
    else if (s == "--mesh" && more) a.mesh = argv[++i];
    else if (s == "--scalar") a.backend = vkc::Backend::kCpuScalar;
    else if (s == "--vulkan") a.backend = vkc::Backend::kVulkan;
    else if (s == "--device" && more) a.device = argv[++i];
    else if (s == "--validate") a.validate = true;
    else if (s == "--no-ccd") a.continuous = false;
    else if (s == "--check") a.check = true;
    else if (s == "--help" || s == "-h") {
      std::printf(
          "usage: spotdrape [--size N] [--frames F] [--substeps S] [--png-every K] [--out DIR] [--mesh OBJ]\n"
          "                 [--scalar | --vulkan [--device SEL] [--validate]] [--no-ccd] [--check]\n");
      std::exit(0);
    } else {
      die("unexpected argument '" + s + "' (--help lists the options)");
    }
  }
  return a;
}

// The cow's rigid motion (mesh -> world) at time t seconds: it turns about y (up to 25 degrees each
// way, period 3 s) and bobs (3 cm, period 1.5 s); its feet (mesh y = -0.73) stay near the ground.
vkc::RigidTransform cowAt(float t) {
  const float twoPi = 6.2831853f;
  const float yaw = 0.4363323f * std::sin(twoPi * t / 3.0f);
  const glm::quat q = glm::angleAxis(yaw, vec3(0, 1, 0));
  vkc::RigidTransform r;
  r.rotation = {q.x, q.y, q.z, q.w};
  r.translation = {0.0f, 0.03f * std::sin(twoPi * t / 1.5f), 0.0f, 0.0f};
  return r;
}

vec3 toWorld(const vkc::RigidTransform& r, vec3 m) {
  const glm::quat q(r.rotation.w, r.rotation.x, r.rotation.y, r.rotation.z);
  return q * m + vec3(r.translation.x, r.translation.y, r.translation.z);
}
vec3 toMesh(const vkc::RigidTransform& r, vec3 w) {
  const glm::quat q(r.rotation.w, r.rotation.x, r.rotation.y, r.rotation.z);
  return glm::conjugate(q) * (w - vec3(r.translation.x, r.translation.y, r.translation.z));
}

// Inside a closed mesh: parity of the crossings of a ray (a fixed, skewed direction).
bool insideMesh(const std::vector<vkc::Float4>& v, const std::vector<uint32_t>& idx, vec3 p) {
  const glm::dvec3 d(0.5773, 0.5812, 0.5735), o(p);
  int crossings = 0;
  for (size_t t = 0; t + 2 < idx.size(); t += 3) {
    const glm::dvec3 a(v[idx[t]].x, v[idx[t]].y, v[idx[t]].z), b(v[idx[t + 1]].x, v[idx[t + 1]].y, v[idx[t + 1]].z),
        c(v[idx[t + 2]].x, v[idx[t + 2]].y, v[idx[t + 2]].z);
    const glm::dvec3 e1 = b - a, e2 = c - a, h = glm::cross(d, e2);
    const double det = glm::dot(e1, h);
    if (std::abs(det) < 1e-15) continue;
    const glm::dvec3 s = o - a;
    const double u = glm::dot(s, h) / det;
    if (u < 0 || u > 1) continue;
    const glm::dvec3 qv = glm::cross(s, e1);
    const double w = glm::dot(d, qv) / det;
    if (w < 0 || u + w > 1) continue;
    crossings += glm::dot(e2, qv) / det > 0;
  }
  return crossings % 2 == 1;
}

// ---- a small software rasterizer: flat-shaded triangles, z-buffer, RGBA8 --------------------

struct Image {
  int w = 0, h = 0;
  std::vector<uint8_t> rgba;
  std::vector<float> depth;
  glm::mat4 viewProj{1.0f};
  vec3 light = glm::normalize(vec3(0.4f, 1.0f, 0.6f));

  Image(int width, int height) : w(width), h(height), rgba(size_t(width) * size_t(height) * 4), depth(size_t(width) * size_t(height)) {
    const glm::mat4 view = glm::lookAt(vec3(3.3f, 1.5f, 2.0f), vec3(0.0f, 0.1f, 0.2f), vec3(0, 1, 0));
    const glm::mat4 proj = glm::perspective(glm::radians(42.0f), float(width) / float(height), 0.1f, 20.0f);
    viewProj = proj * view;
    clear();
  }

  void clear() {
    for (int y = 0; y < h; ++y) {
      const float f = float(y) / float(h);  // a vertical gradient behind everything
      for (int x = 0; x < w; ++x) {
        uint8_t* p = &rgba[(size_t(y) * size_t(w) + size_t(x)) * 4];
        p[0] = uint8_t(200 - 60 * f), p[1] = uint8_t(215 - 55 * f), p[2] = uint8_t(235 - 40 * f), p[3] = 255;
      }
    }
    std::fill(depth.begin(), depth.end(), 1.0f);
  }

  // One triangle in world space; `color` lit by the light on the side facing the camera.
  void triangle(vec3 a, vec3 b, vec3 c, vec3 color) {
    vec3 n = glm::cross(b - a, c - a);
    const float len = glm::length(n);
    if (!(len > 0.0f)) return;
    n /= len;
    vec4 s[3];
    const vec3 in[3] = {a, b, c};
    for (int k = 0; k < 3; ++k) {
      const vec4 clip = viewProj * vec4(in[k], 1.0f);
      if (clip.w <= 0.01f) return;  // behind the camera (the scene never is)
      s[k] = vec4((clip.x / clip.w * 0.5f + 0.5f) * float(w), (0.5f - clip.y / clip.w * 0.5f) * float(h),
                  clip.z / clip.w, 0.0f);
    }
    // Two-sided lighting: the normal turned towards the camera side.
    const float area = (s[1].x - s[0].x) * (s[2].y - s[0].y) - (s[2].x - s[0].x) * (s[1].y - s[0].y);
    if (area == 0.0f) return;
    if (area > 0.0f) n = -n;  // screen y points down: counter-clockwise in the world is negative here
    const float shade = 0.35f + 0.65f * std::max(0.0f, glm::dot(n, light));
    const vec3 col = glm::clamp(color * shade, vec3(0.0f), vec3(1.0f)) * 255.0f;
    const int x0 = std::max(0, int(std::floor(std::min({s[0].x, s[1].x, s[2].x}))));
    const int x1 = std::min(w - 1, int(std::ceil(std::max({s[0].x, s[1].x, s[2].x}))));
    const int y0 = std::max(0, int(std::floor(std::min({s[0].y, s[1].y, s[2].y}))));
    const int y1 = std::min(h - 1, int(std::ceil(std::max({s[0].y, s[1].y, s[2].y}))));
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        const float px = float(x) + 0.5f, py = float(y) + 0.5f;
        const float e0 = ((s[2].x - s[1].x) * (py - s[1].y) - (s[2].y - s[1].y) * (px - s[1].x)) / area;
        const float e1 = ((s[0].x - s[2].x) * (py - s[2].y) - (s[0].y - s[2].y) * (px - s[2].x)) / area;
        const float e2 = 1.0f - e0 - e1;
        if (e0 < 0.0f || e1 < 0.0f || e2 < 0.0f) continue;
        const float z = e0 * s[0].z + e1 * s[1].z + e2 * s[2].z;
        float& d = depth[size_t(y) * size_t(w) + size_t(x)];
        if (!(z < d)) continue;
        d = z;
        uint8_t* p = &rgba[(size_t(y) * size_t(w) + size_t(x)) * 4];
        p[0] = uint8_t(col.r), p[1] = uint8_t(col.g), p[2] = uint8_t(col.b), p[3] = 255;
      }
    }
  }
};

vec3 v3(const vkc::Float4& f) { return {f.x, f.y, f.z}; }

}  // namespace

int main(int argc, char** argv) {
  const Args args = parseArgs(argc, argv);
  std::error_code ec;
  std::filesystem::create_directories(args.out, ec);
  if (ec) die("cannot create " + args.out + ": " + ec.message());

  // The cow: its OBJ file read by vkcollide's scene library (tinyobjloader), vertices in mesh space.
  vkc::SceneMesh cow;
  if (const vkc::Status st = vkc::loadObjMesh(args.mesh, cow); !st) die(st.message());
  const float groundY = -0.74f;  // just under the cow's feet (mesh y >= -0.732)
  const std::vector<vkc::Float4> groundVertices = {
      {-3, groundY, -3, 0}, {3, groundY, -3, 0}, {3, groundY, 3, 0}, {-3, groundY, 3, 0}};
  const std::vector<uint32_t> groundIndices = {0, 2, 1, 0, 3, 2};  // front face up

  // The cloth: drape's solver, a 1.6 m square 1.1 m up, falling onto the cow's back.
  drape::Options o;
  o.size = args.size;
  o.substeps = args.substeps;
  o.frames = args.frames;
  drape::Scene sc;
  sc.clothSide = 1.6f;
  sc.clothCentre = vec3(0.0f, 1.1f, 0.3f);
  const float thickness = drape::clothThickness(o, sc);
  drape::CpuCloth cloth;
  cloth.particles = drape::initialCloth(o, sc);
  cloth.prev = cloth.particles;
  const drape::gpu::IntegratePush ip = drape::integratePush(o, sc);
  const std::vector<drape::gpu::ConstraintPush> colours = drape::constraintColours(o, sc);
  const uint32_t n = o.size * o.size;

  // Two meshes, both listed by the cloth: 0 the cow (rigid), 1 the ground (static).
  vkc::CollisionMesh meshes[2];
  meshes[0].vertices = cow.vertices;
  meshes[0].indices = cow.indices;
  meshes[0].motion = vkc::MeshMotion::kRigid;
  meshes[0].surface = {thickness, false, 0.0f, 0.5f, 0.6f};  // thickness, two-sided, restitution, mu_d, mu_s
  meshes[1].vertices = groundVertices;
  meshes[1].indices = groundIndices;
  meshes[1].surface = {thickness, true, 0.0f, 0.8f, 0.9f};  // one-sided: the ground pushes up
  const uint32_t listed[2] = {0, 1};
  const vkc::ClothRange range{0, n};
  const vkc::ClothMeshes clothMeshes{listed};
  // The tree over both meshes' triangles, kept between calls: built once, then refitted.
  const uint32_t triangles = vkc::meshTriangleCount(meshes);
  std::vector<vkc::BvhNode> nodes(vkc::bvhNodeCount(triangles));
  std::vector<vkc::Aabb> boxes(triangles);
  std::vector<uint32_t> leafParents(triangles);
  bool built = false;

  // --vulkan: one context and one mesh stage for the whole run (the layout does not change).
  std::unique_ptr<vkc::Context> context;
  std::unique_ptr<vkc::MeshCollisionStage> stage;
  if (args.backend == vkc::Backend::kVulkan) {
    vkc::ContextCreateInfo ci;
    ci.deviceSelector = args.device;
    ci.enableValidation = args.validate;
    auto ctx = vkc::Context::create(ci);
    if (!ctx) die(ctx.error().message);
    context = std::move(*ctx);
    const vkc::MeshLayout layouts[2] = {
        {static_cast<uint32_t>(meshes[0].vertices.size()), static_cast<uint32_t>(meshes[0].indices.size() / 3),
         meshes[0].motion, sizeof(vkc::Float4)},
        {static_cast<uint32_t>(meshes[1].vertices.size()), static_cast<uint32_t>(meshes[1].indices.size() / 3),
         meshes[1].motion, sizeof(vkc::Float4)}};
    auto st = vkc::MeshCollisionStage::create(
        *context, {.cloths = {&range, 1}, .particleCount = n, .meshes = layouts, .clothMeshes = {&clothMeshes, 1}});
    if (!st) die(st.error().message);
    stage = std::move(*st);
    std::printf("  Vulkan device: %s%s\n", context->deviceInfo().name.c_str(), args.validate ? " (validation on)" : "");
  }

  std::printf("spotdrape: %ux%u cloth (thickness %.4f m), cow %zu triangles + ground 2, %u frames x %u substeps, %s, %s\n",
              o.size, o.size, static_cast<double>(thickness), cow.indices.size() / 3, args.frames, args.substeps,
              vkc::toString(args.backend), args.continuous ? "continuous" : "discrete");
  Image image(480, 360);
  auto render = [&](const vkc::RigidTransform& pose, const std::string& name) {
    image.clear();
    image.triangle(v3(groundVertices[0]), v3(groundVertices[2]), v3(groundVertices[1]), vec3(0.55f, 0.62f, 0.5f));
    image.triangle(v3(groundVertices[0]), v3(groundVertices[3]), v3(groundVertices[2]), vec3(0.55f, 0.62f, 0.5f));
    for (size_t t = 0; t + 2 < cow.indices.size(); t += 3) {
      image.triangle(toWorld(pose, v3(cow.vertices[cow.indices[t]])), toWorld(pose, v3(cow.vertices[cow.indices[t + 1]])),
                     toWorld(pose, v3(cow.vertices[cow.indices[t + 2]])), vec3(0.93f, 0.87f, 0.78f));
    }
    for (uint32_t y = 0; y + 1 < o.size; ++y) {
      for (uint32_t x = 0; x + 1 < o.size; ++x) {
        const uint32_t i = y * o.size + x;
        const vec3 color = ((x / 4 + y / 4) % 2) ? vec3(0.2f, 0.4f, 0.85f) : vec3(0.85f, 0.3f, 0.25f);
        const vec3 a = v3(cloth.particles[i]), b = v3(cloth.particles[i + 1]), c = v3(cloth.particles[i + o.size]),
                   d = v3(cloth.particles[i + o.size + 1]);
        image.triangle(a, b, d, color);
        image.triangle(a, d, c, color);
      }
    }
    const std::string path = args.out + "/" + name;
    if (!drape::writePng(path.c_str(), image.w, image.h, image.rgba.data())) die("cannot write " + path);
  };

  double collideMs = 0;
  int failures = 0;
  uint32_t insideCow = 0;
  float deepestGround = 0;
  vkc::MeshesAtSubstep sub;
  for (uint32_t f = 0; f < args.frames; ++f) {
    // The frame's motion of the cow, split into the substeps by meshesAt.
    meshes[0].prevTransform = cowAt(sc.frameDt * static_cast<float>(f));
    meshes[0].transform = cowAt(sc.frameDt * static_cast<float>(f + 1));
    for (uint32_t s = 0; s < o.substeps; ++s) {
      for (uint32_t i = 0; i < n; ++i) {
        glm::vec4 x, p;
        const vkc::Float4 cx = cloth.particles[i], cp = cloth.prev[i];
        drape::gpu::integrateParticle(vec4(cx.x, cx.y, cx.z, cx.w), vec4(cp.x, cp.y, cp.z, cp.w), vec3(ip.gravityDt2),
                               ip.damping, x, p);
        cloth.particles[i] = {x.x, x.y, x.z, x.w};
        cloth.prev[i] = {p.x, p.y, p.z, p.w};
      }
      for (uint32_t it = 0; it < o.iterations; ++it) {
        for (const drape::gpu::ConstraintPush& cp : colours) {
          for (uint32_t i = 0; i < n; ++i) {
            uint32_t a = 0, b = 0;
            if (!drape::gpu::colourEdge(cp, i, a, b)) continue;
            const vkc::Float4 fa = cloth.particles[a], fb = cloth.particles[b];
            vec4 pa(fa.x, fa.y, fa.z, fa.w), pb(fb.x, fb.y, fb.z, fb.w);
            drape::gpu::solveEdge(pa, pb, cp.rest, cp.stiffness);
            cloth.particles[a] = {pa.x, pa.y, pa.z, pa.w};
            cloth.particles[b] = {pb.x, pb.y, pb.z, pb.w};
          }
        }
      }
      const float a0 = static_cast<float>(s) / static_cast<float>(o.substeps);
      const float a1 = static_cast<float>(s + 1) / static_cast<float>(o.substeps);
      if (const vkc::Status st = vkc::meshesAt(meshes, a0, a1, sub); !st) die(st.message());
      vkc::MeshCollisionInput in;
      in.particles = cloth.particles;
      in.prevParticles = cloth.prev;
      in.cloths = {&range, 1};
      in.clothMeshes = {&clothMeshes, 1};
      in.meshes = sub.meshes;
      in.settings.continuous = args.continuous;
      in.settings.maxBounces = 4;
      in.tree = {nodes, boxes, leafParents, vkc::MeshTreeUpdate::kAuto, &built};
      const auto t0 = std::chrono::steady_clock::now();
      const vkc::Status st = stage ? stage->run(in) : vkc::collideMeshesCpu(in, args.backend);
      if (!st) die(st.message());
      collideMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    // The frame's checks: finite, outside the cow (at its pose now), above the ground.
    for (uint32_t i = 0; i < n; ++i) {
      const vec3 p = v3(cloth.particles[i]);
      if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z)) {
        ++failures;
        continue;
      }
      deepestGround = std::max(deepestGround, groundY - p.y);
      const vec3 m = toMesh(meshes[0].transform, p);
      if (insideMesh(cow.vertices, cow.indices, m)) {
        ++failures;
        ++insideCow;
      }
    }
    if (deepestGround > 1e-3f) ++failures;
    if (args.pngEvery > 0 && (f % args.pngEvery == 0)) {
      char name[32];
      std::snprintf(name, sizeof name, "frame_%04u.png", f);
      render(meshes[0].transform, name);
    }
  }
  render(meshes[0].transform, "final.png");

  // Resting on the cow: particles well above the ground inside the cow's bounding box (mesh space).
  uint32_t onCow = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const vec3 p = v3(cloth.particles[i]);
    const vec3 m = toMesh(meshes[0].transform, p);
    onCow += p.y > groundY + 0.1f && std::abs(m.x) < 0.5f && m.y > -0.75f && m.y < 1.1f && std::abs(m.z) < 1.1f;
  }
  std::printf("  mesh collision (%s): %.3f ms per frame (%u substeps); at the end %u of %u particles on the cow; "
              "over all frames %u particle-frames inside the cow, lowest %.4f m below the ground, %d check "
              "failure(s)\n",
              vkc::toString(args.backend), collideMs / args.frames, o.substeps, onCow, n, insideCow,
              static_cast<double>(deepestGround), failures);
  std::printf("  wrote %s/final.png%s\n", args.out.c_str(), args.pngEvery > 0 ? " and frame_NNNN.png" : "");
  if (context && args.validate) {
    const uint64_t messages = context->validationMessageCount();
    std::printf("  validation messages: %llu\n", static_cast<unsigned long long>(messages));
    if (messages > 0) failures += static_cast<int>(messages);
  }
  if (args.check && (failures > 0 || onCow < n / 10)) {
    std::fprintf(stderr, "spotdrape: --check failed (%d failure(s), %u particles on the cow)\n", failures, onCow);
    return 1;
  }
  return 0;
}
