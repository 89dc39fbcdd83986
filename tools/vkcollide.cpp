// The vkcollide command line tool.
//   vkcollide devices                       lists the Vulkan devices and what matters about them
//   vkcollide bounds [--device SEL] [--particles N] [--cloths C] [--prev]
//                                           runs the bounds stage on a Vulkan device and on the CPU
//                                           (scalar and SIMD) on a random scene and compares them
//   vkcollide shapes [--device SEL] [--size N] [--spheres S] [--capsules C] [--ccd] [--friction F]
//                                           one sphere/capsule collision iteration of an N x N cloth
//                                           falling through S spheres and C capsules, on the Vulkan
//                                           device and on the CPU twins, compared
//   vkcollide step SCENE --backend B --out OUT  one iteration of a scene file on one backend, written
//                                           back as a scene (tools/scene_commands.cpp); the stages run
//                                           in the order shapes -> meshes -> self -> inter
//   vkcollide compare SCENE                 one iteration on every backend, compared with cpu-scalar
//   vkcollide query QUERIES --backend B --out CONTACTS
//                                           a geometry query file (docs/query-format.md) on one
//                                           backend, its contacts written as a contacts file
//                                           (tools/query_commands.cpp)
//   vkcollide compare QUERIES               the query file on every backend, compared bit for bit with
//                                           cpu-scalar (chosen by the file's "format")
//   vkcollide stages                        the iteration's stages and whether this build has them
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "intersect_command.h"
#include "query_commands.h"
#include "scene_commands.h"
#include "vkcollide/vkcollide.h"

namespace {

const char* typeName(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

int usage() {
  std::fprintf(stderr,
               "usage: vkcollide devices\n"
               "       vkcollide bounds [--device SEL] [--particles N] [--cloths C] [--prev]\n"
               "       vkcollide shapes [--device SEL] [--size N] [--spheres S] [--capsules C] [--ccd] [--friction F]\n"
               "%s%s%s",
               vkc::tool::sceneUsage(), vkc::tool::queryUsage(), vkc::tool::intersectUsage());
  return 2;
}

int devices() {
  auto infos = vkc::Context::enumerateDevices();
  if (!infos) {
    std::fprintf(stderr, "vkcollide: %s\n", infos.message().c_str());
    return 1;
  }
  std::printf("%zu Vulkan device(s)\n", infos->size());
  for (const vkc::DeviceInfo& d : *infos) {
    std::printf("[%u] %s\n", d.index, d.name.c_str());
    std::printf("    type %s, vendor %s (0x%04X), device 0x%04X\n", typeName(d.type), d.vendorName.c_str(), d.vendorId,
                d.deviceId);
    std::printf("    driver %s %s, Vulkan %u.%u.%u\n", d.driverName.c_str(), d.driverInfo.c_str(),
                VK_API_VERSION_MAJOR(d.apiVersion), VK_API_VERSION_MINOR(d.apiVersion), VK_API_VERSION_PATCH(d.apiVersion));
    std::printf("    subgroup size %u, maxStorageBufferRange %llu MiB, shared memory %u KiB, %u invocations/group\n",
                d.subgroupSize, static_cast<unsigned long long>(d.maxStorageBufferRange >> 20),
                d.maxComputeSharedMemorySize >> 10, d.maxComputeWorkGroupInvocations);
    std::printf("    maxComputeWorkGroupCount %u x %u x %u, push constants %u B, device-local memory %llu MiB\n",
                d.maxComputeWorkGroupCount[0], d.maxComputeWorkGroupCount[1], d.maxComputeWorkGroupCount[2],
                d.maxPushConstantsSize, static_cast<unsigned long long>(d.deviceLocalBytes >> 20));
    if (d.timestampPeriodNs > 0) {
      std::printf("    timestamps: %.3f ns per tick, %u valid bits\n", static_cast<double>(d.timestampPeriodNs), d.timestampValidBits);
    } else {
      std::printf("    timestamps: none\n");
    }
    if (d.usable()) {
      std::printf("    usable by vkcollide: yes\n");
    } else {
      for (const std::string& m : d.missing) std::printf("    usable by vkcollide: no, missing %s\n", m.c_str());
    }
    if (d.missingForSort.empty()) {
      std::printf("    radix sort, self and inter collision: yes (min subgroup %u)\n", d.minSubgroupSize);
    } else {
      for (const std::string& m : d.missingForSort) {
        std::printf("    radix sort, self and inter collision: no, missing %s\n", m.c_str());
      }
    }
  }
  return 0;
}

bool sameBits(const vkc::Aabb& a, const vkc::Aabb& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

int bounds(int argc, char** argv) {
  const char* device = nullptr;
  uint32_t particles = 1'000'003, cloths = 7;
  bool prev = false;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) device = argv[++i];
    else if (a == "--particles" && i + 1 < argc) particles = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--cloths" && i + 1 < argc) cloths = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--prev") prev = true;
    else return usage();
  }
  if (cloths == 0) cloths = 1;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  std::vector<vkc::Float4> p(particles), q(prev ? particles : 0);
  for (auto& x : p) x = {u(rng), u(rng), u(rng), 1.0f};
  for (auto& x : q) x = {u(rng), u(rng), u(rng), 1.0f};
  std::vector<vkc::ClothRange> ranges(cloths);
  for (uint32_t c = 0; c < cloths; ++c) {
    const uint32_t first = static_cast<uint32_t>(uint64_t{particles} * c / cloths);
    ranges[c] = {first, static_cast<uint32_t>(uint64_t{particles} * (c + 1) / cloths) - first};
  }
  std::vector<vkc::Aabb> gpu(ranges.size());
  vkc::BoundsInput input{p, q, ranges, prev, gpu};

  vkc::ContextCreateInfo ci;
  ci.deviceSelector = device;
  auto ctx = vkc::Context::create(ci);
  if (!ctx) {
    std::fprintf(stderr, "vkcollide: %s\n", ctx.message().c_str());
    return 1;
  }
  std::printf("bounds: %u particles in %u cloths%s on '%s'\n", particles, cloths, prev ? " (+ previous positions)" : "",
              (*ctx)->deviceInfo().name.c_str());
  vkc::BoundsStageCreateInfo sci{ranges, particles, prev};
  auto stage = vkc::BoundsStage::create(**ctx, sci);
  if (!stage) {
    std::fprintf(stderr, "vkcollide: %s\n", stage.message().c_str());
    return 1;
  }
  if (const vkc::Status st = (*stage)->run(input); !st) {
    std::fprintf(stderr, "vkcollide: %s\n", st.message().c_str());
    return 1;
  }
  for (const vkc::PassTiming& t : (*stage)->timings()) std::printf("  vulkan pass %-6s %10.3f ms\n", t.name, t.ns * 1e-6);
  int mismatches = 0;
  for (vkc::Backend b : {vkc::Backend::kCpuScalar, vkc::Backend::kCpuSimd}) {
    std::vector<vkc::Aabb> cpu(ranges.size());
    input.boxes = cpu;
    const auto t0 = std::chrono::steady_clock::now();
    const vkc::Status st = vkc::computeBoundsCpu(input, b);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!st) {
      std::fprintf(stderr, "vkcollide: %s\n", st.message().c_str());
      return 1;
    }
    int diff = 0;
    for (size_t c = 0; c < cpu.size(); ++c) diff += sameBits(cpu[c], gpu[c]) ? 0 : 1;
    std::printf("  %-10s %10.3f ms  %s\n", vkc::toString(b), ms,
                diff == 0 ? "bitwise equal to vulkan" : "DIFFERS from vulkan");
    mismatches += diff;
  }
  const vkc::Aabb& b0 = gpu[0];
  std::printf("  cloth 0 box: [%g %g %g] .. [%g %g %g]\n", double(b0.lo.x), double(b0.lo.y), double(b0.lo.z),
              double(b0.hi.x), double(b0.hi.y), double(b0.hi.z));
  return mismatches == 0 ? 0 : 1;
}

int shapes(int argc, char** argv) {
  const char* device = nullptr;
  uint32_t size = 256, sphereCount = 32, capsuleCount = 16;
  vkc::ShapeCollisionSettings settings;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) device = argv[++i];
    else if (a == "--size" && i + 1 < argc) size = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--spheres" && i + 1 < argc) sphereCount = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--capsules" && i + 1 < argc) capsuleCount = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--ccd") settings.continuous = true;
    else if (a == "--friction" && i + 1 < argc) settings.friction = std::strtof(argv[++i], nullptr);
    else return usage();
  }
  if (size == 0 || sphereCount < 2) return usage();
  // A 2 m square cloth falling 4 cm this iteration, through spheres scattered around its plane, with
  // capsules between neighbouring spheres.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const uint32_t n = size * size;
  std::vector<vkc::Float4> particles(n), prev(n);
  for (uint32_t y = 0; y < size; ++y) {
    for (uint32_t x = 0; x < size; ++x) {
      const float fx = 2.0f * static_cast<float>(x) / static_cast<float>(size) - 1.0f;
      const float fz = 2.0f * static_cast<float>(y) / static_cast<float>(size) - 1.0f;
      prev[y * size + x] = {fx, 0.02f, fz, 1.0f};
      particles[y * size + x] = {fx, -0.02f, fz, 1.0f};
    }
  }
  std::vector<vkc::Float4> spheres(sphereCount), prevSpheres(sphereCount);
  for (auto& s : spheres) s = {u(rng), 0.1f * u(rng), u(rng), 0.08f + 0.1f * std::abs(u(rng))};
  for (uint32_t k = 0; k < sphereCount; ++k) prevSpheres[k] = {spheres[k].x, spheres[k].y - 0.01f, spheres[k].z, spheres[k].w};
  std::vector<vkc::Capsule> capsules(capsuleCount);
  for (uint32_t k = 0; k < capsuleCount; ++k) capsules[k] = {k % sphereCount, (k + 1) % sphereCount};
  const vkc::ClothRange cloth{0, n};
  const vkc::ClothColliders colliders{spheres, prevSpheres, capsules};

  vkc::ContextCreateInfo ci;
  ci.deviceSelector = device;
  auto ctx = vkc::Context::create(ci);
  if (!ctx) {
    std::fprintf(stderr, "vkcollide: %s\n", ctx.message().c_str());
    return 1;
  }
  std::printf("shapes: %u particles, %u spheres, %u capsules, %s%s, on '%s'\n", n, sphereCount, capsuleCount,
              settings.continuous ? "continuous" : "discrete", settings.friction > 0 ? " + friction" : "",
              (*ctx)->deviceInfo().name.c_str());
  auto stage = vkc::ShapeCollisionStage::create(**ctx, {{&cloth, 1}, n, {&colliders, 1}});
  if (!stage) {
    std::fprintf(stderr, "vkcollide: %s\n", stage.message().c_str());
    return 1;
  }
  std::vector<vkc::Float4> gp = particles, gq = prev;
  vkc::ShapeCollisionDebug gpuDebug;
  for (int warm = 0; warm < 2; ++warm) {
    gp = particles;
    gq = prev;
    const vkc::Status st = (*stage)->run({gp, gq, {&cloth, 1}, {&colliders, 1}, settings}, &gpuDebug);
    if (!st) {
      std::fprintf(stderr, "vkcollide: %s\n", st.message().c_str());
      return 1;
    }
  }
  double gpuNs = 0;
  for (const vkc::PassTiming& t : (*stage)->timings()) {
    std::printf("  vulkan %-20s %9.3f ms\n", t.name, t.ns * 1e-6);
    gpuNs += t.ns;
  }
  std::printf("  vulkan total                %9.3f ms\n", gpuNs * 1e-6);
  int failures = 0;
  for (vkc::Backend b : {vkc::Backend::kCpuScalar, vkc::Backend::kCpuSimd}) {
    std::vector<vkc::Float4> cp = particles, cq = prev;
    vkc::ShapeCollisionDebug cpuDebug;
    const auto t0 = std::chrono::steady_clock::now();
    const vkc::Status st = vkc::collideShapesCpu({cp, cq, {&cloth, 1}, {&colliders, 1}, settings}, b, &cpuDebug);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!st) {
      std::fprintf(stderr, "vkcollide: %s\n", st.message().c_str());
      return 1;
    }
    float maxDiff = 0;
    size_t moved = 0;
    for (uint32_t i = 0; i < n; ++i) {
      maxDiff = std::max({maxDiff, std::abs(cp[i].x - gp[i].x), std::abs(cp[i].y - gp[i].y), std::abs(cp[i].z - gp[i].z)});
      moved += std::memcmp(&cp[i], &particles[i], sizeof cp[i]) != 0;
    }
    const bool masksEqual = cpuDebug.masks == gpuDebug.masks;
    const bool ok = masksEqual && maxDiff <= vkc::kShapeCollisionTolerance * 2.0f;
    failures += ok ? 0 : 1;
    std::printf("  %-10s %9.3f ms (whole iteration)  moved %zu, masks %s, max |diff| to vulkan %.3g %s\n",
                vkc::toString(b), ms, moved, masksEqual ? "equal" : "DIFFER", static_cast<double>(maxDiff),
                ok ? "" : "BEYOND TOLERANCE");
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string cmd = argv[1];
  if (cmd == "devices") return devices();
  if (cmd == "bounds") return bounds(argc - 2, argv + 2);
  if (cmd == "shapes") return shapes(argc - 2, argv + 2);
  if (cmd == "step") return vkc::tool::stepCommand(argc - 2, argv + 2);
  if (cmd == "query") return vkc::tool::queryCommand(argc - 2, argv + 2);
  if (cmd == "intersect") return vkc::tool::intersectCommand(argc - 2, argv + 2);
  if (cmd == "compare") {
    if (vkc::tool::namesQueryFile(argc - 2, argv + 2)) return vkc::tool::queryCompareCommand(argc - 2, argv + 2);
    return vkc::tool::compareCommand(argc - 2, argv + 2);
  }
  if (cmd == "stages") return vkc::tool::stagesCommand();
  return usage();
}
