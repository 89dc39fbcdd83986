// Soak test: the drape sample's solver on the CPU twin (its Verlet integrator and distance
// constraints from cloth_shared.h, vkcollide's collideSelfCpu + collideShapesCpu with CCD and
// friction; no Vulkan device) for many frames, with the sample's colliders: the sphere, the tapered
// capsule and the ground plane (a convex of one plane, 0.25 m below the sphere, passed to vkcollide's
// shape stage with the spheres: the stage does the collision, nothing here clamps). The cloth slides
// off the sphere after a few hundred frames and comes to rest draped over the sphere and capsule and
// lying on the ground, in contact (and folded against itself) for the rest of the run.
// At the end of every frame it checks:
//  - every particle is finite;
//  - no particle is inside a collider as vkcollide sees it (the drawn sphere, tapered capsule and
//    ground grown by the cloth's thickness) deeper than kDepthTolerance: in particular no particle
//    is below the ground plane by more than that;
//  - memory does not grow: the heap's bytes in use (glibc mallinfo2: every malloc and operator new,
//    vkcollide's per-thread scratch included) at the end of every frame after the warm-up frames is
//    at most what it was at the end of the warm-up, and the resident set (/proc/self/statm) grew by
//    at most kRssSlackBytes. vkcollide's CPU collision keeps per-thread scratch (thread_local) sized
//    by the largest call so far: the self collision's pair lists and its sort's table over the
//    cloth's box of hash cells grow whenever the cloth reaches a new configuration (spreads wider,
//    folds more); on one thread the heap grew by 26 KB between frames 1,000 and 5,194 of this run in
//    steps of ~1 KB, bounded but not predictable. So each frame runs on a fresh thread (as a job
//    system may run it): the scratch is freed when the thread ends, and the heap in use at the end
//    of every frame must stay exactly where it was after the warm-up; anything left is a leak.
//    --same-thread runs every frame on the main thread and only reports the heap.
// At the end it checks that the cloth has come to rest: the particles' mean speed over the last
// kRestFrames frames (mean |x_f - x_(f-1)| / frame time over the particles and frames) is below
// kRestSpeed. --no-ground leaves the ground plane out of vkcollide's colliders (the sample as it was
// before it had one: the cloth falls through the ground for ever) with the same checks, which then
// fail: the depth below the ground and the speed.
// Usage: drape_soak [--frames F=10000] [--size N=32] [--warmup W=1000] [--cpu-backend simd|scalar]
//                   [--same-thread] [--no-ground] [--inject-leak] [--inject-penetration]
// The two --inject options and --no-ground break the run on purpose (ctest runs them expecting
// failure), so that the checks are known to fire. Exit code 0: all checks passed; 1: a check failed; 2: bad arguments.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cloth.h"
#include "colliders.h"
#include "options.h"

namespace {

// vkcollide's shape collision projects a particle that ends a substep inside a collider onto its
// surface, and the shape pass runs last in every substep, so a frame ends with every particle
// outside up to float rounding: positions are O(1) m (float ulp ~1e-7 m) and the projection's
// sqrt/division chains add a few ulp; the tapered capsule's reference depth here comes from a ternary
// search. 1e-4 m (0.15% of the 0.065 m grid spacing at 32x32) is far above that rounding and far
// below any real tunnelling (a particle moves up to ~0.02 m per substep at the terminal velocity).
constexpr float kDepthTolerance = 1e-4f;
// Resident memory may still grow by touching pages that were allocated before the warm-up ended
// (malloc's arenas, the loader); a leak of the heap shows in mallinfo2 byte for byte.
constexpr long kRssSlackBytes = 256 * 1024;
// At rest: the mean particle speed over the last frames. A cloth lying still on the ground and the
// sphere (friction 0.6) creeps by float rounding only; one still sliding or falling moves at
// 0.1-10 m/s (the cloth falling for ever without the ground reaches ~8 m/s).
constexpr uint32_t kRestFrames = 100;
constexpr double kRestSpeed = 1e-3;  // m/s

size_t heapInUse() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;  // small-chunk bytes in use + mmap'd chunks
}

bool parseCount(const char* s, uint32_t lo, uint32_t& out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < static_cast<long>(lo) || v > 10000000) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  drape::Options o;
  o.size = 32;
  o.frames = 10000;
  uint32_t warmup = 1000;
  bool injectLeak = false, injectPenetration = false, sameThread = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = true;
    if (a == "--frames" && v != nullptr) {
      ok = parseCount(v, 1, o.frames), ++i;
    } else if (a == "--size" && v != nullptr) {
      ok = parseCount(v, 4, o.size), ++i;
    } else if (a == "--warmup" && v != nullptr) {
      ok = parseCount(v, 1, warmup), ++i;
    } else if (a == "--cpu-backend" && v != nullptr) {
      ok = std::strcmp(v, "simd") == 0 || std::strcmp(v, "scalar") == 0, ++i;
      o.cpuBackend = std::strcmp(v, "scalar") == 0 ? vkc::Backend::kCpuScalar : vkc::Backend::kCpuSimd;
    } else if (a == "--same-thread") {
      sameThread = true;
    } else if (a == "--no-ground") {
      o.ground = false;
    } else if (a == "--inject-leak") {
      injectLeak = true;
    } else if (a == "--inject-penetration") {
      injectPenetration = true;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "drape_soak: bad argument '%s' (see the file comment)\n", a.c_str());
      return 2;
    }
  }
  if (warmup >= o.frames) {
    std::fprintf(stderr, "drape_soak: --warmup %u must be less than --frames %u\n", warmup, o.frames);
    return 2;
  }
  if (o.frames <= kRestFrames) {
    std::fprintf(stderr, "drape_soak: --frames %u must be more than the %u frames of the rest check\n", o.frames,
                 kRestFrames);
    return 2;
  }
  o.selfEvery = o.substeps;  // the sample's default: self collision once per frame

  const drape::Scene sc;
  const std::vector<vkc::Float4> spheres = drape::colliderSpheres(o, sc);  // sphere, capsule end A, end B
  const std::vector<vkc::Float4> planes = drape::colliderPlanes(o, sc);    // the ground (none: --no-ground)
  const float thickness = drape::clothThickness(o, sc);
  const std::vector<vkc::Float4> initial = drape::initialCloth(o, sc);
  drape::CpuCloth cloth{initial, initial};
  std::vector<void*> leaked;

  std::printf("drape_soak: %ux%u cloth, %u frames x %u substeps x %u constraint iterations, self collision "
              "once per frame, CCD, friction %.2f, ground plane at y = %.2f m%s, %s, %s\n",
              o.size, o.size, o.frames, o.substeps, o.iterations, double{sc.friction}, double{sc.groundY},
              o.ground ? "" : " NOT collided (--no-ground)",
              o.cpuBackend == vkc::Backend::kCpuScalar ? "cpu-scalar" : "cpu-simd",
              sameThread ? "every frame on the main thread" : "each frame on a fresh thread");
  drape::residentBytes();  // glibc keeps ~1.5 KB from its first fopen: before the heap is measured
  const auto t0 = std::chrono::steady_clock::now();
  size_t heapAfterWarmup = 0, heapMax = 0;
  long rssAfterWarmup = 0, rssMax = 0;
  float worstDepth = -1e30f;
  uint32_t worstDepthFrame = 0, firstBad = 0, badFrames = 0, growthReports = 0;
  bool finite = true;
  std::vector<vkc::Float4> before;
  before.reserve(cloth.particles.size());  // before the warm-up ends: the heap must not grow later
  double restDistance = 0;  // summed particle displacements over the last kRestFrames frames
  for (uint32_t f = 1; f <= o.frames; ++f) {
    const bool rest = f > o.frames - kRestFrames;
    if (rest) before = cloth.particles;
    if (sameThread) {
      drape::cpuFrame(cloth, o, sc, spheres, planes);
    } else {
      std::thread worker([&] { drape::cpuFrame(cloth, o, sc, spheres, planes); });
      worker.join();
    }
    if (rest) {
      for (size_t i = 0; i < before.size(); ++i) {
        const glm::dvec3 d(double{cloth.particles[i].x} - double{before[i].x},
                           double{cloth.particles[i].y} - double{before[i].y},
                           double{cloth.particles[i].z} - double{before[i].z});
        restDistance += glm::length(d);
      }
    }
    if (injectLeak && f > warmup) leaked.push_back(std::malloc(1024));
    if (injectPenetration && f == o.frames) cloth.particles[0] = {sc.sphere.x, sc.sphere.y, sc.sphere.z, 1.0f};
    const drape::FrameStats st = drape::frameStats(cloth.particles, o, sc);
    // Depth inside the collider vkcollide sees: the drawn shape grown by the thickness.
    const float depth = std::max({st.sphereDepth, st.capsuleDepth, st.groundDepth}) + thickness;
    if (depth > worstDepth) worstDepth = depth, worstDepthFrame = f;
    const bool bad = !st.finite || depth > kDepthTolerance;
    if (bad && badFrames++ == 0) firstBad = f;
    finite = finite && st.finite;
    if (f == warmup) {
      heapAfterWarmup = heapMax = heapInUse();
      rssAfterWarmup = rssMax = drape::residentBytes();
    } else if (f > warmup) {
      const size_t heap = heapInUse();
      if (heap > heapMax && growthReports < 3) {
        ++growthReports;
        std::printf("drape_soak: frame %u: heap in use %zu B (%+lld B over the warm-up's)\n", f, heap,
                    static_cast<long long>(heap) - static_cast<long long>(heapAfterWarmup));
      }
      heapMax = std::max(heapMax, heap);
      rssMax = std::max(rssMax, drape::residentBytes());
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (void* p : leaked) std::free(p);

  const bool heapOk = sameThread || heapMax <= heapAfterWarmup;
  const bool rssOk = rssMax - rssAfterWarmup <= kRssSlackBytes;
  std::printf("drape_soak: %u frames in %.2f s (%.3f ms per frame)\n", o.frames, seconds, 1e3 * seconds / o.frames);
  std::printf("drape_soak: finite: %s\n", finite ? "yes" : "NO");
  std::printf("drape_soak: deepest particle inside a collider (grown by the %.4f m thickness): %.3g m at frame %u "
              "(tolerance %.0e m); frames over it: %u%s\n",
              double{thickness}, double{worstDepth}, worstDepthFrame, double{kDepthTolerance}, badFrames,
              badFrames > 0 ? (", first " + std::to_string(firstBad)).c_str() : "");
  std::printf("drape_soak: heap in use after %u warm-up frames %zu B, most at the end of a later frame %zu B (%+lld B)%s\n",
              warmup, heapAfterWarmup, heapMax,
              static_cast<long long>(heapMax) - static_cast<long long>(heapAfterWarmup),
              sameThread ? " (--same-thread: not checked)" : heapOk ? "" : ": GREW");
  std::printf("drape_soak: resident set after warm-up %ld KiB, most later %ld KiB (%+ld KiB, slack %ld KiB)%s\n",
              rssAfterWarmup / 1024, rssMax / 1024, (rssMax - rssAfterWarmup) / 1024, kRssSlackBytes / 1024,
              rssOk ? "" : ": GREW");
  float lowest = 1e30f;
  double meanY = 0;
  for (const vkc::Float4& p : cloth.particles) {
    lowest = std::min(lowest, p.y);
    meanY += double{p.y};
  }
  meanY /= static_cast<double>(cloth.particles.size());
  std::printf("drape_soak: the cloth ends with its lowest particle at y = %.4f m, mean y = %.4f m (the ground is at "
              "%.4f m, %.4f m with the thickness; the sphere's bottom at %.4f m)\n",
              double{lowest}, meanY, double{sc.groundY}, double{sc.groundY + thickness},
              double{sc.sphere.y - sc.sphere.w});
  const double restSpeed =
      restDistance / (static_cast<double>(kRestFrames) * static_cast<double>(cloth.particles.size()) *
                      double{sc.frameDt});
  const bool restOk = restSpeed < kRestSpeed;
  std::printf("drape_soak: mean particle speed over the last %u frames %.3g m/s (at rest below %.0e m/s): %s\n",
              kRestFrames, restSpeed, kRestSpeed, restOk ? "at rest" : "NOT AT REST");
  const bool ok = finite && badFrames == 0 && heapOk && rssOk && restOk;
  std::printf("drape_soak: %s\n", ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}
