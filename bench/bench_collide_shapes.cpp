// Shape collision benchmark: one collision iteration on every backend (Vulkan: GPU timestamps of the
// stage's passes; CPU scalar and CPU SIMD: wall clock, one thread), on synthetic cloth sheets
// (N particles x S spheres with S/2 capsules, and P planes in P/4 convexes mixed with 8 spheres,
// discrete and CCD) and on the NvCloth drape states of bench/scenes/ (with their ground plane; CCD and
// friction 0.3 as the scene says, and discrete without friction), against a copy roofline measured in the same run
// (std::memcpy on the CPU, shaders/copy.comp on the device). Prints a table and writes JSON. See
// `bench_collide_shapes --help`.
//
// Bytes: the stage reads particles and prevParticles and writes both back: 64 B per particle. The
// roofline copies 32 B per particle (read + write: 64 B). roofline fraction = GB/s / the copy's GB/s
// of the same N (so 1 means "as fast as copying the particle arrays").
// Every run starts from the same input (restored before each repetition, outside the timing); the
// results of every backend are checked against cpu-scalar (within kShapeCollisionTolerance).
// CPU rows also give the time of the collide loop alone ("collide_ms", prepared tables: the rest,
// "prep", is validation, bounds, sphere interpolation, cones, grid and masks).
// CPU rows also give the thread's CPU time (CLOCK_THREAD_CPUTIME_ID, "thread_ms"): on a machine shared
// with other jobs it leaves out the time the thread waited for a core, so it is the steadier per-core
// figure; the SIMD/scalar speedups are given for both.
// lavapipe: unless LP_NUM_THREADS is set, it is set to 1 (one worker thread, for per-core figures).
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <time.h>
#include <string>
#include <vector>

#include "bench_common.h"
#include "bench_device_copy.h"
#include "cpu/bounds.h"
#include "cpu/collide_shapes.h"
#include "vkcollide/scene.h"
#include "vkcollide/vkcollide.h"
#include "vulkan/context_impl.h"
#include "vulkan/recorder.h"

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_collide_shapes.json", 7) {}
  uint32_t minLog2 = 14;
  uint32_t maxLog2 = 22;
  uint32_t maxN = 0;        // 0: no cap beyond maxLog2
  uint32_t vulkanMaxN = 1u << 20;
  std::vector<uint32_t> spheres = {8, 32, 128};
  bool discrete = true, ccd = true;
  bool vulkan = true, scalar = true, simd = true;
  bool scenes = true, synthetic = true;
  bool fused = true;            // also time the fused path (vulkan-fused rows)
  uint32_t manyClothsMax = 262144;  // many-cloths rows up to this many particles in all (0: none)
  std::vector<uint32_t> planes = {8, 32, 128};
  bool allTargets = false;
};

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: bench_collide_shapes [options]\n"
               "  --device SEL       Vulkan device: index or name substring (default: VKC_DEVICE, else first GPU)\n"
               "  --min-log2 K       smallest synthetic N = 2^K particles (default 14: 16k)\n"
               "  --max-log2 K       largest synthetic N = 2^K particles (default 22: 4M); N steps by 4x\n"
               "  --max-n N          skip synthetic sizes above N particles\n"
               "  --vulkan-max-n N   skip Vulkan rows above N particles (default 1048576: lavapipe is slow;\n"
               "                     0: no cap)\n"
               "  --spheres LIST     sphere counts, comma separated (default 8,32,128); capsules = spheres / 2\n"
               "  --planes LIST      plane counts of the convex rows (with 8 spheres), comma separated (default\n"
               "                     8,32,128; 0: none); convexes = planes / 4 (4 planes each)\n"
               "  --mode M           discrete, ccd or both (default both)\n"
               "  --backend LIST     vulkan, cpu-scalar, cpu-simd, comma separated (default all three)\n"
               "  --no-scenes        skip the NvCloth drape scenes\n"
               "  --no-fused         skip the fused small-cloth path (vulkan-fused rows)\n"
               "  --many-cloths-max N  many-cloths rows (1/16/256/1024 cloths x 1k/4k/16k particles, a sphere,\n"
               "                     a capsule and a ground plane each) up to N particles in all (default 262144; 0: none)\n"
               "  --scenes-only      only the NvCloth drape scenes\n"
               "  --reps R           timed repetitions per measurement, median reported (default 7; fewer,\n"
               "                     at least 3, where R would take over ~3 s)\n"
               "  --simd-targets     also time cpu-simd on every SIMD target this CPU runs (rows cpu-simd:TARGET)\n"
               "  --quick            N = 2^10 and 2^12, 8 spheres, the 64x64 drape only, 3 reps (smoke test)\n"
               "  --json PATH        write results as JSON (default bench_collide_shapes.json)\n");
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const size_t end = comma == std::string::npos ? s.size() : comma;
    if (end > start) out.push_back(s.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args("bench_collide_shapes", argc, argv);
  const bool parsed = parseCommonOptions(args, o, usage, [&]() -> Parsed {
    if (args.is("--no-scenes")) return setFlag(o.scenes, false);
    if (args.is("--scenes-only")) return setFlag(o.synthetic, false);
    if (args.is("--simd-targets")) return setFlag(o.allTargets);
    if (args.is("--no-fused")) return setFlag(o.fused, false);
    if (args.is("--spheres")) {
      const char* v = args.value();
      if (v == nullptr) return Parsed::kBad;
      o.spheres.clear();
      for (const std::string& s : splitList(v)) {
        uint32_t n = 0;
        if (!parseUint(s.c_str(), n) || n < 2 || n > 4096) {
          std::fprintf(stderr, "bench_collide_shapes: --spheres: '%s' is not a count in 2..4096\n", s.c_str());
          return Parsed::kBad;
        }
        o.spheres.push_back(n);
      }
      return Parsed::kTaken;
    }
    if (args.is("--planes")) {
      const char* v = args.value();
      if (v == nullptr) return Parsed::kBad;
      o.planes.clear();
      for (const std::string& p : splitList(v)) {
        uint32_t k = 0;
        if (!parseUint(p.c_str(), k) || k % 4 != 0 || k > 4096) {
          std::fprintf(stderr, "bench_collide_shapes: --planes: '%s' is not a multiple of 4 in 0..4096\n", p.c_str());
          return Parsed::kBad;
        }
        if (k > 0) o.planes.push_back(k);
      }
      return Parsed::kTaken;
    }
    if (args.is("--mode")) {
      const char* v = args.value();
      if (v == nullptr) return Parsed::kBad;
      const std::string m = v;
      if (m != "discrete" && m != "ccd" && m != "both") {
        std::fprintf(stderr, "bench_collide_shapes: --mode: '%s' is not discrete, ccd or both\n", v);
        return Parsed::kBad;
      }
      o.discrete = m != "ccd";
      o.ccd = m != "discrete";
      return Parsed::kTaken;
    }
    if (args.is("--backend")) {
      const char* v = args.value();
      if (v == nullptr) return Parsed::kBad;
      o.vulkan = o.scalar = o.simd = false;
      for (const std::string& b : splitList(v)) {
        if (b == "vulkan") {
          o.vulkan = true;
        } else if (b == "cpu-scalar") {
          o.scalar = true;
        } else if (b == "cpu-simd") {
          o.simd = true;
        } else {
          std::fprintf(stderr, "bench_collide_shapes: --backend: unknown backend '%s'\n", b.c_str());
          return Parsed::kBad;
        }
      }
      return Parsed::kTaken;
    }
    return numberOption(args, {{"--many-cloths-max", &o.manyClothsMax},
                               {"--min-log2", &o.minLog2},
                               {"--max-log2", &o.maxLog2},
                               {"--max-n", &o.maxN},
                               {"--vulkan-max-n", &o.vulkanMaxN}});
  });
  if (!parsed) return std::nullopt;
  if (o.quick) {
    if (!o.repsGiven) o.reps = 3;
    o.spheres = {8};
  }
  if (o.reps == 0 || o.spheres.empty()) {
    std::fprintf(stderr, "bench_collide_shapes: --reps must be >= 1 and --spheres not empty\n");
    return std::nullopt;
  }
  if (!log2RangeOk("bench_collide_shapes", o.minLog2, o.maxLog2, 24)) return std::nullopt;
  if (!o.vulkan && !o.scalar && !o.simd) {
    std::fprintf(stderr, "bench_collide_shapes: --backend selects nothing\n");
    return std::nullopt;
  }
  return o;
}

// One collision problem: an input and everything it points to, plus a pristine copy of the particles.
struct Problem {
  std::string scene;  // "synthetic" or the drape file's name
  uint32_t spheres = 0, capsules = 0, planes = 0, convexes = 0;
  bool continuous = false;
  double nvclothMs = 0;  // NvCloth's CPU figure for this scene (0: none)
  std::vector<Float4> particles, prev, particles0, prev0;
  std::vector<ClothRange> cloths;
  std::vector<Float4> sphereData, prevSphereData;
  std::vector<Capsule> capsuleData;
  std::vector<Float4> planeData, prevPlaneData;
  std::vector<std::vector<uint32_t>> convexLists;
  std::vector<Convex> convexData;
  std::vector<ClothColliders> colliders;
  ShapeCollisionSettings settings;

  uint32_t n() const { return static_cast<uint32_t>(particles.size()); }
  // The colliders from the arrays above (one cloth).
  void setColliders() {
    convexData.clear();
    for (const std::vector<uint32_t>& l : convexLists) convexData.push_back({l});
    colliders = {{sphereData, prevSphereData, capsuleData, planeData, prevPlaneData, convexData}};
    planes = static_cast<uint32_t>(planeData.size());
    convexes = static_cast<uint32_t>(convexData.size());
  }
  void restore() {
    std::memcpy(particles.data(), particles0.data(), particles.size() * sizeof(Float4));
    std::memcpy(prev.data(), prev0.data(), prev.size() * sizeof(Float4));
  }
  ShapeCollisionInput input() { return {particles, prev, cloths, colliders, settings}; }
};

// A cloth sheet of n particles (a wavy 2 x 2 square in xz, row after row as a cloth mesh lays them
// out), moving down by 0.01 per iteration, over `spheres` spheres (radius ~0.25 (8 / S)^(1/3)) poking
// through it and moving by up to 0.02, paired into S/2 capsules (spheres 2k and 2k+1, 2 to 4 radii
// apart, tapered). With `planes` > 0, also planes / 4 convexes: randomly turned tetrahedra (4 planes,
// inradius ~0.2 (8 / convexes)^(1/3)) poking through the sheet, each moving by up to 0.02.
std::unique_ptr<Problem> syntheticProblem(uint32_t n, uint32_t spheres, uint32_t planes, bool continuous) {
  auto p = std::make_unique<Problem>();
  p->scene = "synthetic";
  p->continuous = continuous;
  std::mt19937 rng(12345u + spheres);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const uint32_t side = std::max(2u, static_cast<uint32_t>(std::ceil(std::sqrt(static_cast<double>(n)))));
  p->particles.resize(n);
  p->prev.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    const float x = -1.0f + 2.0f * static_cast<float>(i % side) / static_cast<float>(side - 1);
    const float z = -1.0f + 2.0f * static_cast<float>(i / side) / static_cast<float>(side - 1);
    const float y = 0.1f * std::sin(3.0f * x) * std::cos(2.0f * z);
    p->particles[i] = {x, y - 0.01f, z, 1.0f};
    p->prev[i] = {x, y, z, 1.0f};
  }
  const float radius = 0.25f * std::cbrt(8.0f / static_cast<float>(spheres));
  for (uint32_t k = 0; k < spheres; ++k) {
    Float4 s;
    const float r = radius * (0.75f + 0.25f * u(rng));
    if (k % 2 == 1) {
      const Float4& a = p->sphereData.back();
      float dx = u(rng), dy = 0.3f * u(rng), dz = u(rng);
      const float len = std::sqrt(dx * dx + dy * dy + dz * dz) + 1e-3f;
      const float dist = (2.0f + std::abs(u(rng)) * 2.0f) * radius / len;
      s = {a.x + dx * dist, a.y + dy * dist, a.z + dz * dist, r};
    } else {
      s = {u(rng), -0.15f + 0.15f * u(rng), u(rng), r};
    }
    p->sphereData.push_back(s);
    p->prevSphereData.push_back({s.x + 0.02f * u(rng), s.y + 0.02f * u(rng), s.z + 0.02f * u(rng), s.w});
  }
  for (uint32_t k = 0; k + 1 < spheres; k += 2) p->capsuleData.push_back({k, k + 1});
  const uint32_t convexes = planes / 4;
  const float inradius = convexes > 0 ? 0.2f * std::cbrt(8.0f / static_cast<float>(convexes)) : 0.0f;
  for (uint32_t k = 0; k < convexes; ++k) {
    const float cx = u(rng), cy = -0.05f + 0.1f * u(rng), cz = u(rng);
    // A random rotation of the regular tetrahedron's face normals (+-1, +-1, +-1 with an odd count of -1).
    float ax = u(rng), ay = u(rng), az = u(rng);
    const float len = std::sqrt(ax * ax + ay * ay + az * az) + 1e-3f;
    ax /= len, ay /= len, az /= len;
    const float angle = 3.14159265f * u(rng), c = std::cos(angle), sn = std::sin(angle);
    const float corners[4][3] = {{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}};
    std::vector<uint32_t> list;
    for (const auto& f : corners) {
      const float vx = -f[0] / std::sqrt(3.0f), vy = -f[1] / std::sqrt(3.0f), vz = -f[2] / std::sqrt(3.0f);
      const float d = ax * vx + ay * vy + az * vz;  // Rodrigues: v c + (a x v) s + a (a.v)(1 - c)
      const float nx = vx * c + (ay * vz - az * vy) * sn + ax * d * (1 - c);
      const float ny = vy * c + (az * vx - ax * vz) * sn + ay * d * (1 - c);
      const float nz = vz * c + (ax * vy - ay * vx) * sn + az * d * (1 - c);
      p->planeData.push_back({nx, ny, nz, -(nx * cx + ny * cy + nz * cz) - inradius});
      p->prevPlaneData.push_back({nx, ny, nz, p->planeData.back().w + 0.02f * u(rng)});
      list.push_back(static_cast<uint32_t>(p->planeData.size() - 1));
    }
    p->convexLists.push_back(list);
  }
  p->spheres = spheres;
  p->capsules = static_cast<uint32_t>(p->capsuleData.size());
  p->cloths = {{0, n}};
  p->setColliders();
  p->settings.continuous = continuous;
  p->particles0 = p->particles;
  p->prev0 = p->prev;
  return p;
}

// `cloths` cloths of n particles each (sheets of 1 x 1, 4 cm apart in a row), each over its own sphere,
// a tapered capsule and a ground plane (one convex), all moving a little: the game-sized case of the
// fused path.
std::unique_ptr<Problem> manyClothsProblem(uint32_t cloths, uint32_t n, bool continuous) {
  auto p = std::make_unique<Problem>();
  p->scene = "cloths-" + std::to_string(cloths) + "x" + std::to_string(n / 1024) + "k";
  p->continuous = continuous;
  const uint32_t side = static_cast<uint32_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  p->sphereData.clear();
  for (uint32_t c = 0; c < cloths; ++c) {
    const float ox = 1.04f * static_cast<float>(c);
    p->cloths.push_back({c * n, n});
    for (uint32_t i = 0; i < n; ++i) {
      const float x = ox + static_cast<float>(i % side) / static_cast<float>(side - 1);
      const float z = static_cast<float>(i / side) / static_cast<float>(side - 1);
      p->particles.push_back({x, -0.005f, z, 1.0f});
      p->prev.push_back({x, 0.0f, z, 1.0f});
    }
  }
  // The colliders are the same for every cloth (in each cloth's own space they sit under it).
  p->sphereData = {{0.5f, -0.2f, 0.5f, 0.25f}, {0.2f, -0.1f, 0.2f, 0.08f}, {0.8f, -0.05f, 0.3f, 0.12f}};
  p->prevSphereData = {{0.5f, -0.21f, 0.5f, 0.25f}, {0.2f, -0.11f, 0.2f, 0.08f}, {0.8f, -0.06f, 0.3f, 0.12f}};
  p->capsuleData = {{1, 2}};
  p->planeData = {{0, 1, 0, 0.002f}};
  p->prevPlaneData = {{0, 1, 0, 0.0f}};
  p->convexLists = {{0}};
  p->setColliders();
  // One entry per cloth: the same colliders (setColliders made one).
  p->colliders.assign(cloths, p->colliders[0]);
  p->spheres = 3;
  p->capsules = 1;
  p->settings.continuous = continuous;
  p->particles0 = p->particles;
  p->prev0 = p->prev;
  return p;
}

// An NvCloth drape state (one cloth) through the scene loader.
Result<std::unique_ptr<Problem>> sceneProblem(const std::string& file, double nvclothMs) {
  const std::string path = std::string(VKC_SOURCE_DIR) + "/bench/scenes/" + file;
  auto scene = loadScene(path);
  if (!scene) return scene.error();
  if (scene->cloths.size() != 1) return Error{ErrorCode::kInvalidArgument, path + ": expected one cloth"};
  const SceneCloth& c = scene->cloths[0];
  auto p = std::make_unique<Problem>();
  p->scene = file.substr(0, file.find(".json"));
  p->nvclothMs = nvclothMs;
  p->particles = c.particles;
  p->prev = c.prevParticles;
  p->sphereData = c.spheres;
  p->prevSphereData = c.prevSpheres;
  p->capsuleData = c.capsules;
  p->planeData = c.planes;
  p->prevPlaneData = c.prevPlanes;
  p->convexLists = c.convexes;
  p->spheres = static_cast<uint32_t>(c.spheres.size());
  p->capsules = static_cast<uint32_t>(c.capsules.size());
  p->cloths = {{0, p->n()}};
  p->setColliders();
  p->settings = shapeCollisionSettings(scene->settings);
  p->continuous = p->settings.continuous;
  p->particles0 = p->particles;
  p->prev0 = p->prev;
  return p;
}

struct Row {
  std::string scene;
  uint32_t n = 0, spheres = 0, capsules = 0, planes = 0, convexes = 0;
  std::string mode;  // discrete / ccd
  std::string backend;
  double medianMs = 0;
  double collideMs = 0;  // CPU: the collide loop alone (prepared tables)
  double threadMs = 0;   // CPU: median thread CPU time of the whole call
  double collideThreadMs = 0;
  double speedupThread = 0;  // cpu-scalar threadMs / threadMs
  double rooflineFractionThread = 0;  // CPU: memcpy thread time / thread time
  double bytes = 0;
  double gbps = 0;
  double rooflineFraction = 0;
  double speedupVsScalar = 0;  // cpu-scalar median / this median (same problem)
  double nvclothMs = 0;
  uint32_t reps = 0;
  std::optional<RecordStats> stats;  // vulkan rows: what one iteration's record holds
  uint32_t cloths = 1;
  uint32_t moved = 0;  // particles the iteration moved
  std::vector<PassTiming> passMedians;
};

constexpr double kCellBudgetMs = 3000;
constexpr uint32_t kMinReps = 3;

double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0; }

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

uint32_t repsFor(uint32_t reps, double onceMs) {
  if (onceMs * reps <= kCellBudgetMs) return reps;
  return std::max(std::min(reps, kMinReps), static_cast<uint32_t>(kCellBudgetMs / std::max(onceMs, 1e-3)));
}

void printHeader() {
  std::printf("%-17s %8s %4s %4s %4s %-8s %-15s %10s %8s %6s %8s %10s %5s %7s %9s %7s %4s  %s\n", "scene", "N", "S",
              "C", "P", "mode", "backend", "median_ms", "ns/part", "GB/s", "roofline", "collide_ms", "prep%", "vs_scal",
              "thread_ms", "vs_scal", "reps", "note");
}

void printRow(const Row& r) {
  std::string note;
  if (r.nvclothMs > 0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "NvCloth %.3f ms: %.2fx", r.nvclothMs, r.nvclothMs / r.medianMs);
    note = buf;
  }
  for (const PassTiming& t : r.passMedians) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.3f", note.empty() ? "" : ", ", t.name, t.ns * 1e-6);
    note += buf;
  }
  if (r.moved > 0) note += (note.empty() ? "" : ", ") + std::to_string(r.moved) + " moved";
  if (r.stats) note += ", " + recordStatsNote(*r.stats);
  if (r.cloths > 1) note += ", " + std::to_string(r.cloths) + " cloths";
  const bool cpu = r.collideMs > 0;
  char collide[32] = "-", prep[32] = "-", speed[32] = "-", thread[32] = "-", speedThread[32] = "-";
  if (cpu) {
    std::snprintf(collide, sizeof collide, "%.4f", r.collideMs);
    // The part of the call outside the collide loop, from the thread times (the steadier figure).
    std::snprintf(prep, sizeof prep, "%.1f", 100.0 * std::max(0.0, r.threadMs - r.collideThreadMs) / r.threadMs);
    std::snprintf(thread, sizeof thread, "%.4f", r.threadMs);
    char buf[48];
    std::snprintf(buf, sizeof buf, "roofline (thread) %.3f", r.rooflineFractionThread);
    note = buf + (note.empty() ? "" : ", " + note);
  }
  if (r.threadMs > 0) std::snprintf(thread, sizeof thread, "%.4f", r.threadMs);
  if (r.speedupVsScalar > 0) std::snprintf(speed, sizeof speed, "%.2fx", r.speedupVsScalar);
  if (r.speedupThread > 0) std::snprintf(speedThread, sizeof speedThread, "%.2fx", r.speedupThread);
  std::printf("%-17s %8u %4u %4u %4u %-8s %-15s %10.4f %8.2f %6.2f %8.3f %10s %5s %7s %9s %7s %4u  %s\n",
              r.scene.c_str(), r.n, r.spheres, r.capsules, r.planes, r.mode.c_str(), r.backend.c_str(), r.medianMs, r.medianMs * 1e6 / r.n, r.gbps,
              r.rooflineFraction, collide, prep, speed, thread, speedThread, r.reps, note.c_str());
  std::fflush(stdout);
}

bool writeJson(const std::string& path, const Options& o, const DeviceInfo& dev, const std::string& date,
               const std::string& lpThreads, const std::vector<Row>& rows) {
  std::string s = "{\n";
  s += "  \"benchmark\": \"collide_shapes\",\n";
  s += jsonDeviceFields(dev);
  s += "  \"lp_num_threads\": " + jsonString(lpThreads) + ",\n";
  s += jsonHostFields();
  s += "  \"cpu_threads\": 1,\n";
  s += "  \"date\": " + jsonString(date) + ",\n";
  s += "  \"options\": {\"reps\": " + std::to_string(o.reps) + ", \"min_log2\": " + std::to_string(o.minLog2) +
       ", \"max_log2\": " + std::to_string(o.maxLog2) + ", \"max_n\": " + std::to_string(o.maxN) +
       ", \"vulkan_max_n\": " + std::to_string(o.vulkanMaxN) + ", \"quick\": " + (o.quick ? "true" : "false") +
       ", \"spheres\": [";
  for (size_t i = 0; i < o.spheres.size(); ++i) s += (i ? ", " : "") + std::to_string(o.spheres[i]);
  s += "]},\n";
  s += "  \"notes\": \"one collision iteration; bytes = 64*N (particles and prevParticles read and written); "
       "roofline = copy of 32*N bytes (cpu-memcpy for cpu rows, vulkan-copy for vulkan rows) measured in the "
       "same run, roofline_fraction = gbps / roofline gbps; cpu times wall clock, one thread, whole "
       "collideShapesCpu call (median_ms) and the collide loop alone (collide_ms); vulkan times GPU timestamps "
       "(sum of the stage's passes, bounds included); thread_ms, collide_thread_ms: median thread CPU time "
       "(CLOCK_THREAD_CPUTIME_ID) of the same calls, roofline_fraction_thread = cpu-memcpy thread_ms / thread_ms; speedup_vs_scalar = cpu-scalar median_ms / median_ms (_thread: of thread_ms); "
       "nvcloth_ms: NvCloth 1.1.6 CPU shape collision (its SwCollision, clang -O3, SSE) on the same state, one "
       "core, measured side by side (bench/scenes/README.md)\",\n";
  s += jsonRowsAndEnd(rows, [&](const Row& r) {
    std::string m = "\"scene\": " + jsonString(r.scene) + ", \"n\": " + std::to_string(r.n) +
        ", \"spheres\": " + std::to_string(r.spheres) + ", \"capsules\": " + std::to_string(r.capsules) +
        ", \"planes\": " + std::to_string(r.planes) + ", \"convexes\": " + std::to_string(r.convexes) +
        ", \"mode\": " + jsonString(r.mode) + ", \"backend\": " + jsonString(r.backend) +
        ", \"median_ms\": " + jsonNumber(r.medianMs) + ", \"ns_per_particle\": " + jsonNumber(r.medianMs * 1e6 / r.n) +
        ", \"bytes\": " + jsonNumber(r.bytes) + ", \"gbps\": " + jsonNumber(r.gbps) +
        ", \"roofline_fraction\": " + jsonNumber(r.rooflineFraction) + ", \"reps\": " + std::to_string(r.reps) +
        ", \"moved\": " + std::to_string(r.moved) + ", \"cloths\": " + std::to_string(r.cloths);
    if (r.stats) m += ", " + jsonRecordStatsMembers(*r.stats);
    if (r.collideMs == 0 && r.threadMs > 0) m += ", \"thread_ms\": " + jsonNumber(r.threadMs);
    if (r.collideMs > 0) {
      m += ", \"collide_ms\": " + jsonNumber(r.collideMs) + ", \"thread_ms\": " + jsonNumber(r.threadMs) +
           ", \"collide_thread_ms\": " + jsonNumber(r.collideThreadMs) +
           ", \"roofline_fraction_thread\": " + jsonNumber(r.rooflineFractionThread);
    }
    if (r.speedupThread > 0) m += ", \"speedup_vs_scalar_thread\": " + jsonNumber(r.speedupThread);
    if (r.speedupVsScalar > 0) m += ", \"speedup_vs_scalar\": " + jsonNumber(r.speedupVsScalar);
    if (r.nvclothMs > 0) {
      m += ", \"nvcloth_ms\": " + jsonNumber(r.nvclothMs) +
           ", \"speedup_vs_nvcloth\": " + jsonNumber(r.nvclothMs / r.medianMs);
    }
    if (!r.passMedians.empty()) m += ", \"passes_median_ms\": " + jsonPassMsObject(r.passMedians);
    return m;
  });
  return writeTextFile(path, s);
}

uint32_t countMoved(const Problem& p) {
  uint32_t moved = 0;
  for (size_t i = 0; i < p.particles.size(); ++i) {
    const Float4 &a = p.particles[i], &b = p.particles0[i];
    if (a.x != b.x || a.y != b.y || a.z != b.z) ++moved;
  }
  return moved;
}

// Largest violation of |a - ref| <= tol (1 + |ref|) over positions, previous positions and w, in units
// of the tolerance (<= 1: within).
double worstError(const Problem& p, const std::vector<Float4>& refP, const std::vector<Float4>& refPrev) {
  double worst = 0;
  auto check = [&](const Float4& a, const Float4& b) {
    const float xs[4] = {a.x, a.y, a.z, a.w}, ys[4] = {b.x, b.y, b.z, b.w};
    for (int k = 0; k < 4; ++k) {
      const double err = std::abs(static_cast<double>(xs[k]) - static_cast<double>(ys[k])) /
                         (static_cast<double>(kShapeCollisionTolerance) * (1.0 + std::abs(static_cast<double>(ys[k]))));
      worst = std::isnan(err) ? 1e30 : std::max(worst, err);
    }
  };
  for (size_t i = 0; i < p.particles.size(); ++i) {
    check(p.particles[i], refP[i]);
    check(p.prev[i], refPrev[i]);
  }
  return worst;
}

class Runner {
 public:
  Runner(const Options& o, Context* context, DeviceCopy* copy) : o_(o), context_(context), copy_(copy) {}

  bool mismatch = false;
  std::vector<Row> rows;

  // Every selected backend on one problem.
  Status run(Problem& p) {
    const uint32_t n = p.n();
    const double bytes = 64.0 * n;
    const std::string mode = p.continuous ? "ccd" : "discrete";
    auto base = [&](const char* backend) {
      Row r;
      r.scene = p.scene;
      r.n = n;
      r.spheres = p.spheres;
      r.capsules = p.capsules;
      r.planes = p.planes;
      r.convexes = p.convexes;
      r.cloths = static_cast<uint32_t>(p.cloths.size());
      r.mode = mode;
      r.backend = backend;
      r.bytes = bytes;
      r.nvclothMs = p.nvclothMs;
      return r;
    };
    const uint32_t warmups = o_.quick ? 1 : 2;

    // The reference result (cpu-scalar), also the check for every other backend.
    p.restore();
    VKC_TRY(collideShapesCpu(p.input(), Backend::kCpuScalar));
    const std::vector<Float4> refP = p.particles, refPrev = p.prev;
    const uint32_t moved = countMoved(p);

    // CPU roofline: memcpy of 32 N bytes.
    std::vector<Float4> src(2 * size_t{n}), dst(2 * size_t{n});
    Row mem = base("cpu-memcpy");
    {
      // Samples of `inner` copies (at least ~0.5 ms), wall clock and thread CPU time.
      auto copyOnce = [&] { std::memcpy(dst.data(), src.data(), src.size() * sizeof(Float4)); };
      double once = 0;
      for (uint32_t i = 0; i < warmups; ++i) {
        const double t0 = nowMs();
        copyOnce();
        once = nowMs() - t0;
      }
      const uint32_t inner = once < 0.5 ? static_cast<uint32_t>(std::ceil(0.5 / std::max(once, 1e-6))) : 1u;
      const uint32_t reps = repsFor(o_.reps, once * inner);
      std::vector<double> ms, threadMs;
      for (uint32_t r = 0; r < reps; ++r) {
        const double c0 = threadCpuMs();
        const double t0 = nowMs();
        for (uint32_t i = 0; i < inner; ++i) copyOnce();
        ms.push_back((nowMs() - t0) / inner);
        threadMs.push_back((threadCpuMs() - c0) / inner);
      }
      mem.medianMs = median(ms);
      mem.threadMs = median(threadMs);
      mem.reps = reps;
      mem.gbps = gbps(bytes, mem.medianMs);
      mem.rooflineFraction = 1;
    }
    rows.push_back(mem);
    printRow(rows.back());

    double scalarMs = 0, scalarThreadMs = 0;
    for (const Backend b : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      if ((b == Backend::kCpuScalar && !o_.scalar) || (b == Backend::kCpuSimd && !o_.simd)) continue;
      Row r = base(toString(b));
      std::vector<double> ms, threadMs;
      VKC_TRY(timeCpu(p, warmups, ms, threadMs, [&] { return collideShapesCpu(p.input(), b); }));
      r.medianMs = median(ms);
      r.threadMs = median(threadMs);
      r.reps = static_cast<uint32_t>(ms.size());
      checkResult(p, refP, refPrev, r.backend);
      // The collide loop alone, on tables prepared once (prepareShapes reads only the colliders,
      // settings and bounds, not the particles it would move).
      p.restore();
      std::vector<Aabb> bounds(p.cloths.size());
      VKC_TRY(computeBoundsCpu({p.particles, p.prev, p.cloths, p.settings.continuous, bounds}, b));
      cpu::ShapesState state;
      cpu::prepareShapes(p.input(), bounds, state);
      std::vector<double> collide, collideThread;
      VKC_TRY(timeCpu(p, warmups, collide, collideThread, [&]() -> Status {
        for (uint32_t c = 0; c < p.cloths.size(); ++c) {
          if (b == Backend::kCpuSimd) {
            cpu::collideClothSimd(state, c, p.settings, p.particles.data(), p.prev.data());
          } else {
            cpu::collideClothScalar(state, c, p.settings, p.particles.data(), p.prev.data());
          }
        }
        return {};
      }));
      checkResult(p, refP, refPrev, r.backend + " (collide loop)");
      r.collideMs = median(collide);
      r.collideThreadMs = median(collideThread);
      r.gbps = gbps(bytes, r.medianMs);
      r.rooflineFraction = mem.gbps > 0 ? r.gbps / mem.gbps : 0;
      r.rooflineFractionThread = r.threadMs > 0 ? mem.threadMs / r.threadMs : 0;
      r.moved = moved;
      if (b == Backend::kCpuScalar) {
        scalarMs = r.medianMs;
        scalarThreadMs = r.threadMs;
      }
      if (scalarMs > 0) r.speedupVsScalar = scalarMs / r.medianMs;
      if (scalarThreadMs > 0) r.speedupThread = scalarThreadMs / r.threadMs;
      rows.push_back(r);
      printRow(rows.back());
    }

    if (o_.allTargets && o_.simd) {
      Status status;
      cpu::forEachSimdTarget([&](const char* target) {
        if (!status) return;
        Row r = base("cpu-simd");
        r.backend += std::string(":") + target;
        std::vector<double> ms, threadMs;
        status = timeCpu(p, warmups, ms, threadMs, [&] { return collideShapesCpu(p.input(), Backend::kCpuSimd); });
        if (!status) return;
        checkResult(p, refP, refPrev, r.backend);
        r.medianMs = median(ms);
        r.threadMs = median(threadMs);
        r.reps = static_cast<uint32_t>(ms.size());
        r.gbps = gbps(bytes, r.medianMs);
        r.rooflineFraction = mem.gbps > 0 ? r.gbps / mem.gbps : 0;
        r.moved = moved;
        if (scalarMs > 0) r.speedupVsScalar = scalarMs / r.medianMs;
        if (scalarThreadMs > 0) r.speedupThread = scalarThreadMs / r.threadMs;
        rows.push_back(r);
        printRow(rows.back());
      });
      VKC_TRY(status);
    }

    if (context_ == nullptr || !o_.vulkan || (o_.vulkanMaxN != 0 && n > o_.vulkanMaxN)) return {};

    Row dcopy = base("vulkan-copy");
    {
      std::vector<double> ms;
      double once = 0;
      for (uint32_t i = 0; i < warmups; ++i) {
        const double t0 = nowMs();
        auto t = copy_->run(2 * n);
        once = nowMs() - t0;
        if (!t) return t.error();
      }
      const uint32_t reps = repsFor(o_.reps, once);
      for (uint32_t i = 0; i < reps; ++i) {
        auto t = copy_->run(2 * n);
        if (!t) return t.error();
        ms.push_back(*t);
      }
      dcopy.medianMs = median(ms);
      dcopy.reps = reps;
      dcopy.gbps = gbps(bytes, dcopy.medianMs);
      dcopy.rooflineFraction = 1;
    }
    rows.push_back(dcopy);
    printRow(rows.back());

    for (const ShapeCollisionPath path : {ShapeCollisionPath::kGeneral, ShapeCollisionPath::kFused}) {
      if (path == ShapeCollisionPath::kFused && !o_.fused) continue;
      ShapeCollisionStageCreateInfo sci;
      sci.cloths = p.cloths;
      sci.particleCount = n;
      sci.colliders = p.colliders;
      sci.path = path;
      auto stage = ShapeCollisionStage::create(*context_, sci);
      if (!stage && path == ShapeCollisionPath::kFused && stage.error().code == ErrorCode::kLimitExceeded) {
        std::printf("%-17s %8u: vulkan-fused skipped: %s\n", p.scene.c_str(), n, stage.message().c_str());
        continue;
      }
      if (!stage) return stage.error();
      std::vector<double> total;
      std::vector<std::vector<double>> perPass;
      std::vector<const char*> passNames;
      uint32_t reps = o_.reps;
      for (uint32_t i = 0; i < warmups + reps; ++i) {
        p.restore();
        const double t0 = nowMs();
        VKC_TRY((*stage)->run(p.input()));
        const double dt = nowMs() - t0;
        if (i == 0) checkResult(p, refP, refPrev, path == ShapeCollisionPath::kFused ? "vulkan-fused" : "vulkan");
        if (i + 1 == warmups) reps = repsFor(o_.reps, dt);
        if (i < warmups) continue;
        const std::vector<PassTiming>& t = (*stage)->timings();
        if (perPass.size() != t.size()) {
          perPass.assign(t.size(), {});
          passNames.clear();
          for (const PassTiming& pt : t) passNames.push_back(pt.name);
        }
        double sum = 0;
        for (size_t k = 0; k < t.size(); ++k) {
          sum += t[k].ns;
          perPass[k].push_back(t[k].ns);
        }
        total.push_back(sum * 1e-6);
      }
      Row vk = base(path == ShapeCollisionPath::kFused ? "vulkan-fused" : "vulkan");
      vk.medianMs = median(total);
      vk.reps = reps;
      vk.stats = (*stage)->lastRecordStats();
      vk.gbps = gbps(bytes, vk.medianMs);
      vk.rooflineFraction = dcopy.gbps > 0 ? vk.gbps / dcopy.gbps : 0;
      vk.moved = moved;
      if (scalarMs > 0) vk.speedupVsScalar = scalarMs / vk.medianMs;
      for (size_t k = 0; k < perPass.size(); ++k) vk.passMedians.push_back({passNames[k], median(perPass[k])});
      rows.push_back(vk);
      printRow(rows.back());
    }
    return {};
  }

 private:
  // Times fn on a freshly restored input each repetition (the restore is not timed).
  template <class Fn>
  Status timeCpu(Problem& p, uint32_t warmups, std::vector<double>& ms, std::vector<double>& threadMs, Fn&& fn) {
    double once = 0;
    for (uint32_t i = 0; i < warmups; ++i) {
      p.restore();
      const double t0 = nowMs();
      VKC_TRY(fn());
      once = nowMs() - t0;
    }
    const uint32_t reps = repsFor(o_.reps, once);
    for (uint32_t i = 0; i < reps; ++i) {
      p.restore();
      const double c0 = threadCpuMs();
      const double t0 = nowMs();
      VKC_TRY(fn());
      ms.push_back(nowMs() - t0);
      threadMs.push_back(threadCpuMs() - c0);
    }
    return {};
  }

  void checkResult(const Problem& p, const std::vector<Float4>& refP, const std::vector<Float4>& refPrev,
                   const std::string& what) {
    const double worst = worstError(p, refP, refPrev);
    if (worst > 1.0) {
      std::fprintf(stderr, "bench_collide_shapes: %s N=%u S=%u: %s differs from cpu-scalar by %.3g x the tolerance\n",
                   p.scene.c_str(), p.n(), p.spheres, what.c_str(), worst);
      mismatch = true;
    }
  }

  const Options& o_;
  Context* context_;
  DeviceCopy* copy_;
};

int runBench(const Options& o) {
  setenv("LP_NUM_THREADS", "1", 0);  // lavapipe: one worker thread unless the caller chose
  const char* lp = std::getenv("LP_NUM_THREADS");
  const std::string lpThreads = lp != nullptr ? lp : "";
  const std::string date = utcDate();

  std::vector<uint32_t> sizes;
  if (o.synthetic) {
    if (o.quick) {
      sizes = {1u << 10, 1u << 12};
    } else {
      for (uint32_t k = o.minLog2; k <= o.maxLog2; k += 2) {
        if (o.maxN == 0 || (1u << k) <= o.maxN) sizes.push_back(1u << k);
      }
    }
  }
  uint32_t maxVulkanN = std::max(65025u, o.manyClothsMax);
  for (const uint32_t n : sizes) {
    if (o.vulkanMaxN == 0 || n <= o.vulkanMaxN) maxVulkanN = std::max(maxVulkanN, n);
  }

  std::unique_ptr<Context> contextOwner;
  std::unique_ptr<DeviceCopy> copy;
  DeviceInfo dev;
  if (o.vulkan) {
    contextOwner = createContext("bench_collide_shapes", o.device);
    if (!contextOwner) return 1;
    dev = contextOwner->deviceInfo();
    if (dev.timestampPeriodNs > 0) {
      auto c = DeviceCopy::create(detail::Internals::of(*contextOwner), 2 * maxVulkanN);
      if (!c) {
        std::fprintf(stderr, "bench_collide_shapes: copy kernel: %s\n", c.message().c_str());
        return 1;
      }
      copy = std::move(c.value());
    } else {
      std::printf("bench_collide_shapes: the device's queue has no timestamps: Vulkan rows are skipped\n");
    }
  }
  std::printf("bench_collide_shapes: device '%s' (%s %s), LP_NUM_THREADS=%s; CPU '%s', SIMD target %s, one thread\n",
              dev.name.c_str(), dev.driverName.c_str(), dev.driverInfo.c_str(), lpThreads.c_str(), cpuModel().c_str(),
              cpu::simdTargetName());
  std::printf("bench_collide_shapes: reps %u (median), Vulkan rows up to N = %u, %s\n\n", o.reps, o.vulkanMaxN,
              date.c_str());

  Runner runner(o, copy ? contextOwner.get() : nullptr, copy.get());
  printHeader();
  if (o.scenes) {
    // NvCloth's figures (clang -O3, measured side by side on these states, ground plane included):
    // the scene's own settings (CCD, friction 0.3) and discrete without friction.
    struct SceneFile {
      const char* file;
      double nvclothCcdMs, nvclothDiscreteMs;
    };
    std::vector<SceneFile> files = {{"nvcloth-drape-64.json", 0.0651, 0.0328},
                                    {"nvcloth-drape-255.json.gz", 1.043, 0.533}};
    if (o.quick) files.resize(1);
    for (const SceneFile& f : files) {
      for (const bool discrete : {false, true}) {
        if ((discrete && !o.discrete) || (!discrete && !o.ccd)) continue;
        auto p = sceneProblem(f.file, discrete ? f.nvclothDiscreteMs : f.nvclothCcdMs);
        if (!p) {
          std::fprintf(stderr, "bench_collide_shapes: %s: %s\n", f.file, p.message().c_str());
          return 1;
        }
        if (discrete) {
          (*p)->settings.continuous = (*p)->continuous = false;
          (*p)->settings.friction = 0;
        }
        if (const Status s = runner.run(**p); !s) {
          std::fprintf(stderr, "bench_collide_shapes: %s: %s\n", f.file, s.message().c_str());
          return 1;
        }
      }
    }
  }
  for (const uint32_t n : sizes) {
    for (const uint32_t spheres : o.spheres) {
      for (const bool continuous : {false, true}) {
        if ((continuous && !o.ccd) || (!continuous && !o.discrete)) continue;
        auto p = syntheticProblem(n, spheres, 0, continuous);
        if (const Status s = runner.run(*p); !s) {
          std::fprintf(stderr, "bench_collide_shapes: N=%u S=%u: %s\n", n, spheres, s.message().c_str());
          return 1;
        }
      }
    }
    // Convexes mixed with 8 spheres (4 capsules).
    for (const uint32_t planes : o.quick ? std::vector<uint32_t>{32} : o.planes) {
      for (const bool continuous : {false, true}) {
        if ((continuous && !o.ccd) || (!continuous && !o.discrete)) continue;
        auto p = syntheticProblem(n, 8, planes, continuous);
        if (const Status s = runner.run(*p); !s) {
          std::fprintf(stderr, "bench_collide_shapes: N=%u P=%u: %s\n", n, planes, s.message().c_str());
          return 1;
        }
      }
    }
  }

  // Many cloths (the fused path's case): 1/16/256/1024 cloths x 1k/4k/16k particles, CCD.
  if (o.manyClothsMax > 0) {
    for (const uint32_t n : {1024u, 4096u, 16384u}) {
      for (const uint32_t cloths : {1u, 16u, 256u, 1024u}) {
        if (uint64_t{n} * cloths > o.manyClothsMax || (o.quick && cloths * n > 16384u)) continue;
        auto p = manyClothsProblem(cloths, n, true);
        if (const Status s = runner.run(*p); !s) {
          std::fprintf(stderr, "bench_collide_shapes: %u cloths x %u: %s\n", cloths, n, s.message().c_str());
          return 1;
        }
      }
    }
  }

  if (!reportWritten("bench_collide_shapes", o.json, writeJson(o.json, o, dev, date, lpThreads, runner.rows))) {
    return 1;
  }
  if (runner.mismatch) {
    std::fprintf(stderr, "bench_collide_shapes: some backend differs from cpu-scalar (see above)\n");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  const auto options = vkc::bench::parseOptions(argc, argv);
  if (!options) return 2;
  return vkc::bench::runBench(*options);
}
