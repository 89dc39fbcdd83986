// Self-collision benchmark: one self-collision pass (one solver iteration) on the CPU (scalar, SIMD;
// wall clock, one thread) and on a Vulkan device (GPU timestamps per pass, grouped as bounds, keys,
// sort, sweep = gather + collide), on synthetic N x N cloths (flat, and crumpled with rest positions)
// and on NvCloth's drape states (bench/scenes/, read with loadScene; self-collision distance and
// stiffness from the file). Prints a table and writes JSON. See `bench_self_collision --help`.
//
// Every backend's result is checked against the CPU scalar one (SIMD bitwise, Vulkan within
// kSelfCollisionTolerance); the pair count comes from one debug run of the SIMD backend.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "cpu/bounds.h"
#include "vkcollide/scene.h"
#include "vkcollide/self_collision.h"
#include "vkcollide/vkcollide.h"

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_self_collision.json", 9) {}
  bool noVulkan = false;
  std::vector<uint32_t> sizes = {64, 256, 1024};
  uint32_t manyClothsMax = 0;  // many-cloths rows up to this many particles in all (0: none)
};

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: bench_self_collision [options]\n"
               "  --device SEL   Vulkan device: index or name substring (default: VKC_DEVICE, else first GPU)\n"
               "  --sizes A,B,.. synthetic cloths of A x A, B x B ... particles (default 64,256,1024)\n"
               "  --reps R       timed repetitions per measurement, median reported (default 9; fewer, at least\n"
               "                 3, where R would take over ~4 s)\n"
               "  --no-vulkan    CPU rows only\n"
               "  --many-cloths-max N  many-cloths rows (1/16/256/1024 crumpled cloths of 32x32, 64x64, 128x128\n"
               "                 particles side by side) up to N particles in all (default 0: none)\n"
               "  --quick        16 x 16 and 32 x 32 cloths and the 64 x 64 drape, 3 reps (smoke test)\n"
               "  --json PATH    write results as JSON (default bench_self_collision.json)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  bool sizesGiven = false;
  ArgReader args("bench_self_collision", argc, argv);
  const bool parsed = parseCommonOptions(args, o, usage, [&]() -> Parsed {
    if (args.is("--no-vulkan")) return setFlag(o.noVulkan);
    if (args.is("--many-cloths-max")) {
      const char* v = args.value();
      if (v == nullptr) return Parsed::kBad;
      o.manyClothsMax = static_cast<uint32_t>(std::strtoul(v, nullptr, 10));
      return Parsed::kTaken;
    }
    if (!args.is("--sizes")) return Parsed::kUnknown;
    const char* v = args.value();
    if (v == nullptr) return Parsed::kBad;
    o.sizes.clear();
    for (const char* p = v; *p != '\0';) {
      char* end = nullptr;
      const unsigned long n = std::strtoul(p, &end, 10);
      if (end == p || n < 2 || n > 4096) {
        std::fprintf(stderr, "bench_self_collision: --sizes: sizes are integers in 2..4096\n");
        return Parsed::kBad;
      }
      o.sizes.push_back(static_cast<uint32_t>(n));
      p = *end == ',' ? end + 1 : end;
    }
    sizesGiven = true;
    return Parsed::kTaken;
  });
  if (!parsed) return std::nullopt;
  if (o.quick && !o.repsGiven) o.reps = 3;
  if (o.quick && !sizesGiven) o.sizes = {16, 32};
  if (o.reps == 0) {
    std::fprintf(stderr, "bench_self_collision: --reps must be >= 1\n");
    return std::nullopt;
  }
  return o;
}

// CPU time of the calling thread, in ms: unlike the wall clock, it does not count time the thread
// waits for a core on a loaded machine.
double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

struct Case {
  std::string name;
  std::vector<Float4> particles;
  std::vector<Float4> rest;
  std::vector<ClothRange> cloths;
  SelfCollisionSettings settings;

  SelfCollisionInput input(std::vector<Float4>& work) const { return {work, rest, cloths, {}, settings}; }
};

// An n x n cloth over a 2 m square (NvCloth's drape size), self distance 0.8 x spacing, stiffness 0.9.
// Flat: in the plane y = 0 with +-5% jitter (the grid search runs, few pairs). Crumpled: folded over
// itself with waves and +-25% jitter, with its flat rest positions (rest culling active).
Case syntheticCloth(uint32_t n, bool crumpled) {
  Case c;
  c.name = std::string(crumpled ? "crumpled-" : "flat-") + std::to_string(n);
  const float h = 2.0f / float(n - 1), L = 2.0f;
  std::mt19937 rng(n * 2 + (crumpled ? 1 : 0));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (uint32_t r = 0; r < n; ++r) {
    for (uint32_t k = 0; k < n; ++k) {
      const float x = h * float(k), z = h * float(r);
      if (!crumpled) {
        c.particles.push_back({x + 0.05f * h * u(rng), 0.05f * h * u(rng), z + 0.05f * h * u(rng), 1.0f});
        continue;
      }
      c.rest.push_back({x, 0.0f, z, 1.0f});
      const float t = x / L;
      const float fx = t < 0.5f ? x : L - x;
      const float fy = (t < 0.5f ? 0.0f : 0.3f * h) + 0.2f * h * std::sin(7.0f * z / L + 3.0f * t);
      c.particles.push_back({fx + 0.25f * h * u(rng), fy + 0.25f * h * u(rng), z + 0.25f * h * u(rng), 1.0f});
    }
  }
  c.cloths = {{0, n * n}};
  c.settings = {0.8f * h, 0.9f};
  return c;
}

// `count` copies of the crumpled n x n cloth side by side (3 m apart), each its own cloth.
Case manyCloths(uint32_t count, uint32_t n) {
  const Case one = syntheticCloth(n, true);
  Case c;
  c.name = std::to_string(count) + "x" + std::to_string(n * n);
  c.settings = one.settings;
  for (uint32_t k = 0; k < count; ++k) {
    const float dx = 3.0f * float(k % 32), dz = 3.0f * float(k / 32);
    c.cloths.push_back({static_cast<uint32_t>(c.particles.size()), n * n});
    for (size_t i = 0; i < one.particles.size(); ++i) {
      const Float4 p = one.particles[i], r = one.rest[i];
      c.particles.push_back({p.x + dx, p.y, p.z + dz, p.w});
      c.rest.push_back({r.x + dx, r.y, r.z + dz, r.w});
    }
  }
  return c;
}

Result<Case> drapeCase(const std::string& file) {
  auto scene = loadScene(std::string(VKC_SOURCE_DIR) + "/bench/scenes/" + file);
  if (!scene) return scene.error();
  if (!scene->settings.selfCollision) return Error{ErrorCode::kInvalidArgument, file + ": no selfCollision settings"};
  Case c;
  c.name = file.substr(0, file.find(".json"));
  for (const SceneCloth& cloth : scene->cloths) {
    c.cloths.push_back({static_cast<uint32_t>(c.particles.size()), static_cast<uint32_t>(cloth.particles.size())});
    c.particles.insert(c.particles.end(), cloth.particles.begin(), cloth.particles.end());
  }
  c.settings = {scene->settings.selfCollision->distance, scene->settings.selfCollision->stiffness};
  return c;
}

struct Row {
  std::string scene;
  uint32_t particles = 0;
  std::string backend;
  double medianMs = 0;
  double medianCpuMs = 0;  // CPU rows: thread CPU time
  uint32_t reps = 0;
  uint64_t pairs = 0;
  double maxDiff = 0;                           // vs cpu-scalar
  std::vector<std::pair<std::string, double>> groups;  // Vulkan: bounds, keys, sort, sweep (median ms)
  std::vector<PassTiming> passes;               // Vulkan: every pass (median ns)
  std::optional<RecordStats> stats;             // Vulkan: what one iteration's record holds
};

constexpr double kBudgetMs = 4000;
constexpr uint32_t kMinReps = 3;

uint32_t repsFor(uint32_t reps, double onceMs) {
  if (onceMs * reps <= kBudgetMs) return reps;
  return std::max(std::min(reps, kMinReps), static_cast<uint32_t>(kBudgetMs / std::max(onceMs, 1e-3)));
}

double maxAbsDiff(const std::vector<Float4>& a, const std::vector<Float4>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    m = std::max({m, std::abs(double(a[i].x) - double(b[i].x)), std::abs(double(a[i].y) - double(b[i].y)),
                  std::abs(double(a[i].z) - double(b[i].z))});
  }
  return m;
}

const char* groupOf(const std::string& pass) {
  if (pass.rfind("vkc.bounds", 0) == 0) return "bounds";
  if (pass == "vkc.self.keys") return "keys";
  if (pass == "vkc.self.gather" || pass == "vkc.self.collide") return "sweep";
  return "sort";  // the radix sort's passes, the cloth keys of the second sort; vulkan-fused: its one sort
                  // dispatch (box, keys, sort and gather)
}

void printRow(const Row& r) {
  std::string note;
  for (const auto& [g, ms] : r.groups) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.3f", note.empty() ? "" : ", ", g.c_str(), ms);
    note += buf;
  }
  if (r.stats) note += (note.empty() ? "" : ", ") + recordStatsNote(*r.stats);
  std::printf("%-22s %9u  %-11s %11.3f %9.3f %5u %10llu %10.2g  %s\n", r.scene.c_str(), r.particles,
              r.backend.c_str(), r.medianMs, r.medianCpuMs, r.reps, static_cast<unsigned long long>(r.pairs), r.maxDiff, note.c_str());
  std::fflush(stdout);
}

bool writeJson(const std::string& path, const Options& o, const DeviceInfo* dev, const std::vector<Row>& rows) {
  std::string s = "{\n  \"benchmark\": \"self_collision\",\n";
  if (dev != nullptr) {
    s += "  \"device\": " + jsonString(dev->name) + ",\n";
    s += "  \"driver\": " + jsonString(dev->driverName + " " + dev->driverInfo) + ",\n";
    s += "  \"subgroup_size\": " + std::to_string(dev->subgroupSize) + ",\n";
  }
  s += jsonHostFields();
  s += "  \"date\": " + jsonString(utcDate()) + ",\n";
  s += "  \"options\": {\"reps\": " + std::to_string(o.reps) + ", \"quick\": " + (o.quick ? "true" : "false") + "},\n";
  s += "  \"notes\": \"one self-collision pass (one solver iteration); cpu rows: wall clock of collideSelfCpu on one "
       "thread (validation, bounds, keys, sort, gather, write-back), median_ms wall clock and median_thread_cpu_ms the "
       "thread's CPU time (robust on a loaded host); vulkan rows: sum of GPU timestamps of the passes "
       "(bounds, keys, radix sort, gather, collide; vulkan-fused: the fused sort dispatch and collide), upload and readback excluded; max_diff_vs_scalar: largest "
       "coordinate difference from cpu-scalar\",\n";
  s += jsonRowsAndEnd(rows, [&](const Row& r) {
    std::string m = "\"scene\": " + jsonString(r.scene) + ", \"particles\": " + std::to_string(r.particles) +
        ", \"backend\": " + jsonString(r.backend) + ", \"median_ms\": " + jsonNumber(r.medianMs) +
        (r.backend.rfind("vulkan", 0) == 0 ? std::string() : ", \"median_thread_cpu_ms\": " + jsonNumber(r.medianCpuMs)) +
        ", \"reps\": " + std::to_string(r.reps) + ", \"pairs\": " + std::to_string(r.pairs) +
        ", \"max_diff_vs_scalar\": " + jsonNumber(r.maxDiff);
    if (!r.groups.empty()) {
      m += ", \"groups_median_ms\": " + jsonMsObject(r.groups) +
           ", \"passes_median_ms\": " + jsonPassMsObject(r.passes, true);
    }
    if (r.stats) m += ", " + jsonRecordStatsMembers(*r.stats);
    return m;
  });
  return writeTextFile(path, s);
}

int runBench(const Options& o) {
  std::unique_ptr<Context> context;
  if (!o.noVulkan) {
    context = createContext("bench_self_collision", o.device);
    if (!context) return 1;
  }
  const DeviceInfo* dev = context ? &context->deviceInfo() : nullptr;
  std::printf("bench_self_collision: device '%s'; CPU '%s', SIMD target %s; %s\n",
              dev != nullptr ? dev->name.c_str() : "(none)", cpuModel().c_str(), cpu::simdTargetName(),
              utcDate().c_str());

  std::vector<Case> cases;
  for (const uint32_t n : o.sizes) {
    cases.push_back(syntheticCloth(n, false));
    cases.push_back(syntheticCloth(n, true));
  }
  for (const char* file : {"nvcloth-drape-64.json", "nvcloth-drape-255.json.gz"}) {
    if (o.quick && std::strstr(file, "255") != nullptr) continue;
    auto c = drapeCase(file);
    if (!c) {
      std::fprintf(stderr, "bench_self_collision: %s\n", c.message().c_str());
      return 1;
    }
    cases.push_back(std::move(c.value()));
  }
  for (const uint32_t n : {32u, 64u, 128u}) {
    for (const uint32_t count : {1u, 16u, 256u, 1024u}) {
      if (uint64_t{count} * n * n <= o.manyClothsMax) cases.push_back(manyCloths(count, n));
    }
  }

  std::printf("\n%-22s %9s  %-11s %11s %9s %5s %10s %10s  %s\n", "scene", "particles", "backend", "median_ms",
              "cpu_ms", "reps",
              "pairs", "diff", "vulkan groups (median ms)");
  std::vector<Row> rows;
  bool mismatch = false;
  for (const Case& c : cases) {
    const uint32_t n = static_cast<uint32_t>(c.particles.size());
    std::vector<Float4> work = c.particles, reference = c.particles;
    SelfCollisionDebug debug;
    if (const Status st = collideSelfCpu(c.input(reference), Backend::kCpuScalar); !st) {
      std::fprintf(stderr, "bench_self_collision: %s: %s\n", c.name.c_str(), st.message().c_str());
      return 1;
    }
    (void)collideSelfCpu(c.input(work), Backend::kCpuSimd, &debug);
    const uint64_t pairs = debug.pairs.size();

    for (const Backend b : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      std::vector<double> ms, cpuMs;
      uint32_t reps = o.reps;
      for (uint32_t r = 0; r < reps + 1; ++r) {  // the first call warms up
        work = c.particles;
        const double t0 = nowMs(), c0 = threadCpuMs();
        const Status st = collideSelfCpu(c.input(work), b);
        const double dt = nowMs() - t0;
        cpuMs.push_back(threadCpuMs() - c0);
        if (!st) {
          std::fprintf(stderr, "bench_self_collision: %s: %s\n", c.name.c_str(), st.message().c_str());
          return 1;
        }
        if (r == 0) {
          reps = repsFor(o.reps, dt);
          cpuMs.clear();
          continue;
        }
        ms.push_back(dt);
      }
      Row row{c.name, n, toString(b), median(ms), median(cpuMs), reps, pairs, maxAbsDiff(work, reference)};
      if (b == Backend::kCpuSimd && std::memcmp(work.data(), reference.data(), n * sizeof(Float4)) != 0) {
        std::fprintf(stderr, "bench_self_collision: %s: cpu-simd differs from cpu-scalar\n", c.name.c_str());
        mismatch = true;
      }
      rows.push_back(row);
      printRow(rows.back());
    }
    if (!context) continue;

    // Both GPU paths (SelfCollisionPath): the general one, and the fused one where every cloth fits.
    for (const SelfCollisionPath path : {SelfCollisionPath::kGeneral, SelfCollisionPath::kFused}) {
      const char* backendName = path == SelfCollisionPath::kFused ? "vulkan-fused" : "vulkan";
      const bool fits = std::all_of(c.cloths.begin(), c.cloths.end(), [&](const ClothRange& r) {
        return r.count <= fusedSelfCollisionCapacity(*context);
      });
      if (path == SelfCollisionPath::kFused && !fits) continue;
      SelfCollisionStageCreateInfo sci;
      sci.cloths = c.cloths;
      sci.particleCount = n;
      sci.restPositions = !c.rest.empty();
      sci.path = path;
      auto stage = SelfCollisionStage::create(*context, sci);
      if (!stage) {
        std::fprintf(stderr, "bench_self_collision: %s: SelfCollisionStage::create: %s\n", c.name.c_str(),
                     stage.message().c_str());
        return 1;
      }
      std::vector<double> total;
      std::vector<std::vector<double>> perPass;
      std::vector<const char*> names;
      uint32_t reps = o.reps;
      for (uint32_t r = 0; r < reps + 1; ++r) {
        work = c.particles;
        const double t0 = nowMs();
        const Status st = (*stage)->run(c.input(work));
        const double dt = nowMs() - t0;
        if (!st) {
          std::fprintf(stderr, "bench_self_collision: %s: %s: %s\n", c.name.c_str(), backendName, st.message().c_str());
          return 1;
        }
        if (r == 0) {
          reps = repsFor(o.reps, dt);
          const double diff = maxAbsDiff(work, reference);
          if (diff > double(kSelfCollisionTolerance) * 10.0) {  // coordinates here are within a few metres
            std::fprintf(stderr, "bench_self_collision: %s: %s differs from cpu-scalar by %g\n", c.name.c_str(),
                         backendName, diff);
            mismatch = true;
          }
          continue;
        }
        const std::vector<PassTiming>& t = (*stage)->timings();
        if (perPass.size() != t.size()) {
          perPass.assign(t.size(), {});
          names.clear();
          for (const PassTiming& p : t) names.push_back(p.name);
        }
        double sum = 0;
        for (size_t p = 0; p < t.size(); ++p) {
          perPass[p].push_back(t[p].ns);
          sum += t[p].ns;
        }
        total.push_back(sum * 1e-6);
      }
      Row row{c.name, n, backendName, median(total), 0, reps, pairs, maxAbsDiff(work, reference)};
      std::map<std::string, double> groups;
      for (size_t p = 0; p < perPass.size(); ++p) {
        const double m = median(perPass[p]);
        row.passes.push_back({names[p], m});
        groups[groupOf(names[p])] += m * 1e-6;
      }
      for (const char* g : {"bounds", "keys", "sort", "sweep"}) row.groups.push_back({g, groups[g]});
      row.stats = (*stage)->lastRecordStats();
      rows.push_back(row);
      printRow(rows.back());
    }
  }
  if (!reportWritten("bench_self_collision", o.json, writeJson(o.json, o, dev, rows))) return 1;
  return mismatch ? 1 : 0;
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  const auto options = vkc::bench::parseOptions(argc, argv);
  if (!options) return 2;
  return vkc::bench::runBench(*options);
}
