// vkcollide sample "drape": a square cloth falls onto a sphere and a tapered capsule and drapes over
// them, and what slides off comes to rest on a ground plane, with continuous (swept) collision and
// friction.
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
// Every call into vkcollide is in collision.cpp (start reading there); this file is the frame loop
// and the output; solver.cpp and cloth.cpp are the sample's own solver (GPU, CPU twin), render.cpp
// its render, gpu.cpp the renderer's Vulkan scaffolding.
// Per frame and per substep: integrate -> distance constraints -> vkcollide self collision ->
// vkcollide shapes (the sphere, the capsule and the ground plane; CCD, friction; last, so that every
// substep ends outside the colliders).
// It writes PNG frames and a contact sheet, prints per-pass GPU times (timestamps), and at the end
// runs the same frames on the CPU (the same solver in C++ + vkc::collideShapesCpu) and prints how far
// the two runs drift apart.
//
// Usage: drape [--size N] [--frames F] [--substeps S] [--iterations J] [--out DIR] [--png-every K]
//              [--validate] [--check] [--no-cpu] [--device SELECTOR] [--cpu-backend simd|scalar]
//              [--perturb-cpu] [--self-every K] [--no-self] [--no-ground] [--json PATH]
// --png-every 0: no PNGs. --json: frame times and the soak's checks as a results file (exit 1 when a
// check fails; bench/drape_soak.sh).
// --validate (or DRAPE_VALIDATE=1): VK_LAYER_KHRONOS_validation with synchronization validation;
// the program exits non-zero if the layer reported anything. --check: exit non-zero unless the
// cloth is finite, outside the colliders (within tolerance), unbroken, and ends on the sphere.
// --no-ground: the ground plane is drawn and checked but not given to vkcollide (the cloth that slides
// off the sphere then falls through it for ever; --check fails once it does).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/matrix_transform.hpp>

#include "cloth.h"
#include "colliders.h"
#include "collision.h"
#include "gpu.h"
#include "options.h"
#include "render.h"
#include "solver.h"

namespace drape {
namespace {

using glm::vec3;
using glm::vec4;

// The sample's timed sections, in the order they run within a frame.
enum Section { kIntegrate, kConstraints, kSelf, kShapes, kRender, kSectionCount };
const char* const kSectionNames[kSectionCount] = {"integrate (sample)", "constraints (sample)",
                                                  "vkcollide self", "vkcollide shapes", "render + readback"};
constexpr uint32_t kStampsPerSubstep = 4;  // after integrate, constraints, self, shapes

// GPU timestamps of the frame's sections: one before the frame's work, then one after every section
// (nothing without timestamps on the queue).
class SectionTimer {
 public:
  SectionTimer(const Gpu& g, const Options& o)
      : g_(g), substeps_(o.substeps), count_(2 + kStampsPerSubstep * o.substeps) {
    if (g.timestampBits == 0) return;
    VkQueryPoolCreateInfo qpci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qpci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpci.queryCount = count_;
    DRAPE_VK(vkCreateQueryPool(g.device, &qpci, nullptr, &pool_));
  }
  void destroy() {
    if (pool_ != VK_NULL_HANDLE) vkDestroyQueryPool(g_.device, pool_, nullptr);
    pool_ = VK_NULL_HANDLE;
  }
  bool enabled() const { return pool_ != VK_NULL_HANDLE; }
  void begin(VkCommandBuffer cmd) {
    if (enabled()) vkCmdResetQueryPool(cmd, pool_, 0, count_);
    next_ = 0;
  }
  void stamp(VkCommandBuffer cmd) {
    if (enabled()) vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, pool_, next_);
    ++next_;
  }
  // After the frame's fence: each section's milliseconds (summed over the substeps) into `sectionMs`.
  void read(std::vector<std::vector<double>>& sectionMs) const {
    if (!enabled()) return;
    std::vector<uint64_t> ts(count_);
    DRAPE_VK(vkGetQueryPoolResults(g_.device, pool_, 0, count_, ts.size() * sizeof(uint64_t), ts.data(),
                                   sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    const uint64_t mask = g_.timestampBits >= 64 ? ~uint64_t{0} : (uint64_t{1} << g_.timestampBits) - 1;
    auto ms = [&](uint32_t a, uint32_t b) {
      return static_cast<double>((ts[b] - ts[a]) & mask) * static_cast<double>(g_.props.limits.timestampPeriod) *
             1e-6;
    };
    double sum[kSectionCount] = {};
    for (uint32_t s = 0; s < substeps_; ++s) {
      const uint32_t q = kStampsPerSubstep * s;
      sum[kIntegrate] += ms(q, q + 1);
      sum[kConstraints] += ms(q + 1, q + 2);
      sum[kSelf] += ms(q + 2, q + 3);
      sum[kShapes] += ms(q + 3, q + 4);
    }
    sum[kRender] = ms(kStampsPerSubstep * substeps_, kStampsPerSubstep * substeps_ + 1);
    for (int k = 0; k < kSectionCount; ++k) sectionMs[k].push_back(sum[k]);
  }

 private:
  const Gpu& g_;
  uint32_t substeps_, count_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  uint32_t next_ = 0;
};

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// What --json writes: the same checks as the CPU soak (tests/soak/drape_soak.cpp) on the GPU run.
struct Results {
  FrameStats worst;
  bool bad;
  uint32_t firstBadFrame;
  float penetrationTolerance;  // of --check, against the drawn shapes
  float thickness;
  std::vector<double> frameMs;
  std::vector<double> sectionMedianMs;  // empty without timestamps
  uint32_t warmupFrames;
  long rssAfterWarmup, rssMax;
};

// Resident-set growth allowed after the warm-up (the driver's caches and pools settle by then; a leak
// per frame grows without end).
constexpr long kRssSlackBytes = 4 << 20;
// Depth allowed inside the colliders as vkcollide sees them (drawn shapes grown by the thickness):
// float rounding of the projection, as in the CPU soak.
constexpr float kColliderDepthTolerance = 1e-4f;

void writeResults(const Options& o, const Gpu& g, const Results& r) {
  auto num = [](double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", v);
    return std::isfinite(v) ? std::string(b) : std::string("null");
  };
  auto str = [](const std::string& v) {
    std::string out = "\"";
    for (char c : v) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
  };
  std::vector<double> sorted = r.frameMs;
  std::sort(sorted.begin(), sorted.end());
  const double p99 = sorted.empty() ? 0 : sorted[std::min(sorted.size() - 1, sorted.size() * 99 / 100)];
  const float depth = std::max({r.worst.sphereDepth, r.worst.capsuleDepth, r.worst.groundDepth}) + r.thickness;
  const long growth = r.rssMax - r.rssAfterWarmup;
  const bool ok = r.worst.finite && depth <= kColliderDepthTolerance && growth <= kRssSlackBytes;
  const uint32_t a = g.props.apiVersion;
  std::string s = "{\n  \"benchmark\": \"drape_soak\",\n";
  s += "  \"device\": " + str(g.props.deviceName) + ",\n  \"driver\": " + str(g.driver) + ",\n";
  s += "  \"vulkan_api\": \"" + std::to_string(VK_API_VERSION_MAJOR(a)) + "." + std::to_string(VK_API_VERSION_MINOR(a)) +
       "." + std::to_string(VK_API_VERSION_PATCH(a)) + "\",\n";
  s += "  \"subgroup_size\": " + std::to_string(g.subgroupSize) + ",\n";
  if (const char* w = std::getenv("LP_NATIVE_VECTOR_WIDTH")) s += "  \"lp_native_vector_width\": " + str(w) + ",\n";
  s += "  \"options\": {\"size\": " + std::to_string(o.size) + ", \"frames\": " + std::to_string(o.frames) +
       ", \"substeps\": " + std::to_string(o.substeps) + ", \"iterations\": " + std::to_string(o.iterations) +
       ", \"self_every\": " + (o.self ? std::to_string(o.selfEvery) : std::string("0")) +
       ", \"png_every\": " + std::to_string(o.pngEvery) + "},\n";
  s += "  \"notes\": \"the drape sample on the Vulkan device: frame_ms = submit-to-fence wall time per frame (simulation + "
       "render + readback); gpu sections = medians of timestamps; max_depth_in_collider_m = deepest particle at the end of "
       "any frame inside a collider as vkcollide sees it (drawn shape grown by the cloth thickness), checked against " +
       num(kColliderDepthTolerance) + " m; rss = resident set after warmup_frames and the most later, growth checked "
       "against " + std::to_string(kRssSlackBytes >> 20) + " MiB\",\n";
  s += "  \"rows\": [\n    {\"frames\": " + std::to_string(o.frames) + ", \"frame_ms_median\": " +
       num(sorted.empty() ? 0 : sorted[sorted.size() / 2]) + ", \"frame_ms_p99\": " + num(p99) +
       ", \"frame_ms_max\": " + num(sorted.empty() ? 0 : sorted.back());
  const char* const keys[] = {"integrate_ms", "constraints_ms", "vkcollide_self_ms", "vkcollide_shapes_ms", "render_ms"};
  for (size_t k = 0; k < r.sectionMedianMs.size() && k < 5; ++k) s += ", \"" + std::string(keys[k]) + "\": " + num(r.sectionMedianMs[k]);
  s += ", \"finite\": " + std::string(r.worst.finite ? "true" : "false") +
       ", \"max_depth_in_collider_m\": " + num(depth) + ", \"max_depth_in_drawn_shape_m\": " +
       num(std::max({r.worst.sphereDepth, r.worst.capsuleDepth, r.worst.groundDepth})) + ", \"max_structural_stretch\": " + num(r.worst.maxStretch) +
       ", \"warmup_frames\": " + std::to_string(r.warmupFrames) + ", \"rss_kib_after_warmup\": " +
       std::to_string(r.rssAfterWarmup >> 10) + ", \"rss_kib_max_later\": " + std::to_string(r.rssMax >> 10) +
       ", \"checks_passed\": " + (ok ? "true" : "false") + "}\n  ]\n}\n";
  std::FILE* f = std::fopen(o.json.c_str(), "w");
  if (f == nullptr || std::fwrite(s.data(), 1, s.size(), f) != s.size() || std::fclose(f) != 0) fail("cannot write " + o.json);
  std::printf("drape: wrote %s (frame %.3f ms median, deepest %.3g m inside a collider, resident set %+ld KiB after %u "
              "warm-up frames): checks %s\n",
              o.json.c_str(), sorted.empty() ? 0.0 : sorted[sorted.size() / 2], double{depth}, growth >> 10, r.warmupFrames,
              ok ? "passed" : "FAILED");
  if (!ok) std::exit(1);
}

// The GPU particles at some frames (1-based), for the comparison with the CPU twin.
struct Snapshot {
  uint32_t frame;
  std::vector<vkc::Float4> particles;
};

// Runs the same frames on the CPU (cloth.cpp's cpuFrame: the same solver in C++ and vkcollide's CPU
// collision) and prints how far they are from the GPU's snapshots.
void compareWithCpuTwin(const Options& o, const Scene& sc, std::span<const vkc::Float4> spheres,
                        std::span<const vkc::Float4> planes, const std::vector<vkc::Float4>& initial,
                        const std::vector<Snapshot>& snapshots) {
  const uint32_t count = o.size * o.size;
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
      cpuBackendName(o));
  std::printf("  %6s %12s %12s\n", "frame", "max (m)", "mean (m)");
  for (uint32_t f = 1; f <= o.frames && next < snapshots.size(); ++f) {
    cpuFrame(cpu, o, sc, spheres, planes);
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

  // vkcollide: the renderer's device imported, the stages created once (collision.cpp).
  const std::vector<vkc::Float4> spheres = colliderSpheres(o, sc);
  const std::vector<vkc::Float4> planes = colliderPlanes(o, sc);
  auto collision = std::make_unique<Collision>(g, o, sc, spheres, planes);

  // The particle buffers: storage (solver, vkcollide) AND vertex (render); host copies for the checks.
  const VkBufferUsageFlags storage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  Buffer particles = createBuffer(g, particleBytes, storage | VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, false);
  Buffer prev = createBuffer(g, particleBytes, storage, false);
  Buffer readParticles = createBuffer(g, particleBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
  const ParticleBuffers shared{particles.buffer, prev.buffer, particleBytes};
  Solver solver = createSolver(g, o, sc);
  Renderer renderer = createRenderer(g, o, sc);

  Commands frameCommands = createCommands(g);
  const VkCommandBuffer cmd = frameCommands.cmd;
  SectionTimer timer(g, o);

  // Initial upload through a staging buffer: particles, prev (= particles: at rest).
  const std::vector<vkc::Float4> initial = initialCloth(o, sc);
  {
    Buffer staging = createBuffer(g, particleBytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
    std::memcpy(staging.mapped, initial.data(), particleBytes);
    submitOnce(g, [&](VkCommandBuffer c) {
      const VkBufferCopy region{0, 0, particleBytes};
      vkCmdCopyBuffer(c, staging.buffer, particles.buffer, 1, &region);
      vkCmdCopyBuffer(c, staging.buffer, prev.buffer, 1, &region);
      memoryBarrier(c, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                    VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_VERTEX_INPUT_BIT,
                    VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT |
                        VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT);
    });
    destroy(g, staging);
  }

  std::vector<std::vector<double>> sectionMs(kSectionCount);
  std::vector<double> frameMs;
  std::vector<Saved> saved;
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
  // Memory: the resident set after the warm-up frames (a tenth of the run, at most 100) and the most
  // it reached later (the --json results; lavapipe's own allocations count too).
  const uint32_t warmupFrames = std::min(100u, std::max(1u, o.frames / 10));
  long rssAfterWarmup = 0, rssMax = 0;
  const auto simStart = std::chrono::steady_clock::now();

  for (uint32_t frame = 0; frame < o.frames; ++frame) {
    const bool savePng = o.pngEvery > 0 && (frame % o.pngEvery == 0 || frame + 1 == o.frames);
    beginCommands(frameCommands);
    timer.begin(cmd);
    auto stamp = [&]() { timer.stamp(cmd); };
    // The previous frame's render and readback read the particles: finish before integrating.
    memoryBarrier(cmd,
                  VK_PIPELINE_STAGE_2_VERTEX_ATTRIBUTE_INPUT_BIT | VK_PIPELINE_STAGE_2_VERTEX_SHADER_BIT |
                      VK_PIPELINE_STAGE_2_COPY_BIT,
                  VK_ACCESS_2_NONE, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_NONE);
    stamp();
    for (uint32_t s = 0; s < o.substeps; ++s) {
      // 1. Verlet integration and 2. distance constraints (the sample's shaders).
      recordIntegrate(cmd, solver, shared);
      stamp();
      recordConstraints(cmd, solver, shared);
      stamp();
      // 3. vkcollide: self collision (where due), then the sphere, capsule and ground swept over the
      // substep.
      collision->recordSelf(cmd, shared, s);
      stamp();
      collision->recordShapes(cmd, shared, s);
      stamp();
    }
    // 4. Render: colliders, then the cloth straight from the particle buffer; 5. readback: the image
    // (frames that become PNGs) and the particles (checks, CPU comparison).
    recordRender(cmd, renderer, o, shared, savePng);
    const VkBufferCopy region{0, 0, particleBytes};
    vkCmdCopyBuffer(cmd, particles.buffer, readParticles.buffer, 1, &region);
    stamp();
    memoryBarrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
    const auto t0 = std::chrono::steady_clock::now();
    submitAndWait(g, frameCommands);
    frameMs.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());

    timer.read(sectionMs);

    const std::span<const vkc::Float4> result(static_cast<const vkc::Float4*>(readParticles.mapped), count);
    const FrameStats st = frameStats(result, o, sc);
    worst.finite = worst.finite && st.finite;
    worst.sphereDepth = std::max(worst.sphereDepth, st.sphereDepth);
    worst.capsuleDepth = std::max(worst.capsuleDepth, st.capsuleDepth);
    worst.groundDepth = std::max(worst.groundDepth, st.groundDepth);
    if (st.maxStretch > worst.maxStretch) {
      worst.maxStretch = st.maxStretch;
      worstStretchFrame = frame;
    }
    if (!bad &&
        (!st.finite || st.sphereDepth > penetrationTolerance || st.capsuleDepth > penetrationTolerance ||
         st.groundDepth > penetrationTolerance)) {
      bad = true;
      firstBadFrame = frame;
    }
    if (frame + 1 == warmupFrames) rssAfterWarmup = rssMax = residentBytes();
    if (frame + 1 > warmupFrames) rssMax = std::max(rssMax, residentBytes());
    if (snapshotFrame(frame))
      snapshots.push_back({frame + 1, std::vector<vkc::Float4>(result.begin(), result.end())});
    if (savePng) {
      const auto* px = static_cast<const uint8_t*>(renderer.readImage.mapped);
      Saved sv{frame, std::vector<uint8_t>(px, px + renderer.readImage.size)};
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

  writeContactSheet(o, saved);

  std::printf("drape: GPU time per frame (median over %u frames, timestamps):\n", o.frames);
  double total = 0;
  for (int k = 0; k < kSectionCount && timer.enabled(); ++k) {
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
  if (!timer.enabled()) std::printf("  (the queue has no timestamps)\n");
  std::printf("  %-22s %8.3f ms; submit-to-fence wall time %.3f ms; %u frames simulated+rendered in %.2f s\n",
              "sum", total, medianOf(frameMs), o.frames, simSeconds);
  std::printf(
      "drape: worst over all frames: sphere depth %.5f m, capsule depth %.5f m, ground depth %.5f m%s, max "
      "structural stretch %.3f (frame %u), %s\n"
      "       (depths: positive = inside the drawn shape; the cloth keeps %.4f m away from it)\n",
      double{worst.sphereDepth}, double{worst.capsuleDepth}, double{worst.groundDepth},
      o.ground ? "" : " (--no-ground: not collided)", double{worst.maxStretch}, worstStretchFrame,
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
                o.self ? (std::to_string(selfDistance(o, sc)) + " m").c_str() : "off");
  }

  // CPU twin: the same frames with the same solver in C++ and vkcollide's CPU collision.
  if (o.cpuTwin) compareWithCpuTwin(o, sc, spheres, planes, initial, snapshots);

  vkDeviceWaitIdle(g.device);
  collision.reset();
  timer.destroy();
  destroy(g, frameCommands);
  destroy(g, solver);
  destroy(g, renderer);
  for (Buffer* b : {&particles, &prev, &readParticles}) destroy(g, *b);
  vkDestroyDevice(g.device, nullptr);
  if (g.messenger != VK_NULL_HANDLE) vkDestroyDebugUtilsMessengerEXT(g.instance, g.messenger, nullptr);
  vkDestroyInstance(g.instance, nullptr);

  if (!o.json.empty()) {
    Results r{worst, bad, firstBadFrame, penetrationTolerance, clothThickness(o, sc), frameMs, {}, warmupFrames,
              rssAfterWarmup, rssMax};
    for (int k = 0; k < kSectionCount && timer.enabled(); ++k) r.sectionMedianMs.push_back(medianOf(sectionMs[k]));
    writeResults(o, g, r);
  }
  std::printf("drape: wall time %.2f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count());
  int rc = 0;
  if (o.validate) {
    std::printf("drape: validation messages: %llu\n", static_cast<unsigned long long>(validationMessages()));
    if (validationMessages() > 0) rc = 1;
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
