// bench_inter_collision: (a) batching: a stage's per-iteration cost on 1 cloth x N particles against
// N/1024 cloths x 1024 particles (sphere/capsule collision, rows "layout", and self collision, rows
// "self": the stages every iteration runs); (b) inter collision for 2, 16 and 256 overlapping cloths
// of 32 x 32 particles and for 2 cloths of 22 x 22, 4 of 16 x 16 and 16 of 8 x 8, on the general
// narrow phase (rows "vulkan") and, where the cloths' particles fit, the fused one (rows
// "vulkan-fused", bitwise equal to "vulkan" or the benchmark fails). Vulkan rows are the sum of the
// GPU timestamps of the stage's passes (median over reps); CPU rows are wall-clock medians. A table
// on stdout, JSON with --json. --quick: tiny sizes, 3 reps (the ctest smoke test).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "vkcollide/vkcollide.h"
#include "vkcollide/collide_shapes.h"
#include "vkcollide/inter_collision.h"
#include "vkcollide/self_collision.h"

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_inter_collision.json", 9) {}
};

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: bench_inter_collision [options]\n"
               "  --device SEL  Vulkan device: index or name substring (default: VKC_DEVICE, else first GPU)\n"
               "  --quick       tiny scenes, 3 reps (smoke test)\n"
               "  --reps N      samples per row (default 9)\n"
               "  --json PATH   results as JSON (default bench_inter_collision.json)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args("bench_inter_collision", argc, argv);
  if (!parseCommonOptions(args, o, usage, [] { return Parsed::kUnknown; })) return std::nullopt;
  if (o.quick && !o.repsGiven) o.reps = 3;
  if (o.reps == 0) {
    std::fprintf(stderr, "bench_inter_collision: --reps must be >= 1\n");
    return std::nullopt;
  }
  return o;
}

struct Row {
  std::string part;     // "layout" or "inter"
  std::string scene;    // e.g. "1x1048576", "256 cloths x 1024"
  std::string backend;
  uint32_t cloths = 0;
  uint32_t particles = 0;
  double medianMs = 0;
  uint32_t reps = 0;
  uint32_t marked = 0;
  uint32_t pairs = 0;
  std::map<std::string, double> passMs;  // Vulkan: median per pass name (summed over passes of that name)
  std::optional<RecordStats> stats;      // Vulkan: what one record holds
};

double gpuSumMs(const std::vector<PassTiming>& t, std::map<std::string, std::vector<double>>* perPass) {
  double ns = 0;
  std::map<std::string, double> byName;
  for (const PassTiming& p : t) {
    ns += p.ns;
    byName[p.name] += p.ns * 1e-6;
  }
  if (perPass != nullptr) {
    for (const auto& [k, v] : byName) (*perPass)[k].push_back(v);
  }
  return ns * 1e-6;
}

std::map<std::string, double> medians(const std::map<std::string, std::vector<double>>& perPass) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : perPass) out[k] = median(v);
  return out;
}

// ---- (a) layout: shapes on 1 big cloth vs many small ones ----------------------------------------

struct ShapeScene {
  std::vector<Float4> particles, prev;
  std::vector<ClothRange> cloths;
  std::vector<Float4> spheres;  // 3 per cloth
  std::vector<Capsule> capsules;
  std::vector<ClothColliders> colliders;
};

// `clothCount` square cloths of `side` x `side` particles on [-1, 1]^2 (z = 0), each draped over one
// sphere and a tapered capsule of its own.
ShapeScene shapeScene(uint32_t clothCount, uint32_t side) {
  ShapeScene s;
  const uint32_t per = side * side;
  s.particles.reserve(size_t{clothCount} * per);
  for (uint32_t c = 0; c < clothCount; ++c) {
    s.cloths.push_back({c * per, per});
    for (uint32_t y = 0; y < side; ++y) {
      for (uint32_t x = 0; x < side; ++x) {
        const float fx = -1.0f + 2.0f * static_cast<float>(x) / static_cast<float>(side - 1);
        const float fy = -1.0f + 2.0f * static_cast<float>(y) / static_cast<float>(side - 1);
        s.particles.push_back({fx, fy, 0.05f * std::sin(3.0f * fx + static_cast<float>(c)), 1.0f});
      }
    }
  }
  s.prev = s.particles;
  s.spheres.resize(size_t{clothCount} * 3);
  s.capsules.resize(clothCount);
  for (uint32_t c = 0; c < clothCount; ++c) {
    s.spheres[3 * c] = {0.0f, 0.0f, -0.3f, 0.5f};
    s.spheres[3 * c + 1] = {-0.8f, 0.5f, -0.1f, 0.2f};
    s.spheres[3 * c + 2] = {0.8f, 0.5f, -0.1f, 0.3f};
    s.capsules[c] = {1, 2};
  }
  for (uint32_t c = 0; c < clothCount; ++c) {
    s.colliders.push_back({std::span<const Float4>(s.spheres).subspan(3 * c, 3), {},
                           std::span<const Capsule>(s.capsules).subspan(c, 1)});
  }
  return s;
}

bool benchLayout(Context& ctx, const Options& o, uint32_t clothCount, uint32_t side, std::vector<Row>& rows) {
  ShapeScene s = shapeScene(clothCount, side);
  const uint32_t n = static_cast<uint32_t>(s.particles.size());
  const std::string scene = std::to_string(clothCount) + " x " + std::to_string(side * side);
  ShapeCollisionStageCreateInfo ci{s.cloths, n, s.colliders};
  auto stage = ShapeCollisionStage::create(ctx, ci);
  if (!stage) {
    std::fprintf(stderr, "bench_inter_collision: ShapeCollisionStage::create: %s\n", stage.message().c_str());
    return false;
  }
  std::vector<double> ms;
  std::map<std::string, std::vector<double>> perPass;
  for (uint32_t r = 0; r < o.reps + 1; ++r) {
    std::vector<Float4> p = s.particles, q = s.prev;
    ShapeCollisionInput in{p, q, s.cloths, s.colliders, {}};
    const Status st = (*stage)->run(in);
    if (!st) {
      std::fprintf(stderr, "bench_inter_collision: shapes run: %s\n", st.message().c_str());
      return false;
    }
    if (r > 0) ms.push_back(gpuSumMs((*stage)->timings(), &perPass));  // the first run warms up
  }
  rows.push_back({"layout", scene, "vulkan", clothCount, n, median(ms), o.reps, 0, 0, medians(perPass),
                  (*stage)->lastRecordStats()});
  for (Backend b : {Backend::kCpuScalar, Backend::kCpuSimd}) {
    std::vector<Float4> p = s.particles, q = s.prev;
    ShapeCollisionInput in{p, q, s.cloths, s.colliders, {}};
    const WallSamples w = sampleWall(
        [&] {
          std::memcpy(p.data(), s.particles.data(), p.size() * sizeof(Float4));
          if (!collideShapesCpu(in, b).ok()) std::abort();
        },
        o.reps, 1, 5.0, o.quick ? 500.0 : 8000.0, 3);
    rows.push_back({"layout", scene, toString(b), clothCount, n, median(w.ms), static_cast<uint32_t>(w.ms.size()), 0, 0, {}, std::nullopt});
  }
  return true;
}

// The same layouts through self collision: square cloths with the same spacing h (so that the
// neighbourhoods are alike), d = 0.8 h as in NvCloth's measurements.
bool benchSelfLayout(Context& ctx, const Options& o, uint32_t clothCount, uint32_t side, std::vector<Row>& rows) {
  const float h = 0.01f;
  std::vector<Float4> particles;
  std::vector<ClothRange> cloths;
  for (uint32_t c = 0; c < clothCount; ++c) {
    cloths.push_back({static_cast<uint32_t>(particles.size()), side * side});
    for (uint32_t y = 0; y < side; ++y) {
      for (uint32_t x = 0; x < side; ++x) {
        const float fx = static_cast<float>(x) * h, fy = static_cast<float>(y) * h;
        particles.push_back({fx, fy, 0.3f * h * std::sin(40.0f * fx) * std::cos(37.0f * fy), 1.0f});
      }
    }
  }
  const uint32_t n = static_cast<uint32_t>(particles.size());
  const std::string scene = std::to_string(clothCount) + " x " + std::to_string(side * side);
  const SelfCollisionSettings settings{0.8f * h, 1.0f};
  SelfCollisionStageCreateInfo ci;
  ci.cloths = cloths;
  ci.particleCount = n;
  auto stage = SelfCollisionStage::create(ctx, ci);
  if (!stage) {
    std::fprintf(stderr, "bench_inter_collision: SelfCollisionStage::create: %s\n", stage.message().c_str());
    return false;
  }
  std::vector<double> ms;
  std::map<std::string, std::vector<double>> perPass;
  for (uint32_t r = 0; r < o.reps + 1; ++r) {
    std::vector<Float4> p = particles;
    SelfCollisionInput in;
    in.particles = p;
    in.cloths = cloths;
    in.settings = settings;
    const Status st = (*stage)->run(in);
    if (!st) {
      std::fprintf(stderr, "bench_inter_collision: self run: %s\n", st.message().c_str());
      return false;
    }
    if (r > 0) ms.push_back(gpuSumMs((*stage)->timings(), &perPass));
  }
  rows.push_back({"self", scene, "vulkan", clothCount, n, median(ms), o.reps, 0, 0, medians(perPass),
                  (*stage)->lastRecordStats()});
  for (Backend b : {Backend::kCpuScalar, Backend::kCpuSimd}) {
    std::vector<Float4> p = particles;
    SelfCollisionInput in;
    in.particles = p;
    in.cloths = cloths;
    in.settings = settings;
    const WallSamples w = sampleWall(
        [&] {
          std::memcpy(p.data(), particles.data(), p.size() * sizeof(Float4));
          if (!collideSelfCpu(in, b).ok()) std::abort();
        },
        o.reps, 1, 5.0, o.quick ? 500.0 : 8000.0, 3);
    rows.push_back({"self", scene, toString(b), clothCount, n, median(w.ms), static_cast<uint32_t>(w.ms.size()), 0, 0, {}, std::nullopt});
  }
  return true;
}

// ---- (b) inter collision for overlapping cloths --------------------------------------------------

struct InterScene {
  std::vector<Float4> particles;
  std::vector<InterClothDesc> cloths;
  std::vector<InterCollisionFilter> filters;
  InterCollisionSettings settings;
  // An input over `p` (a copy of the particles: the step updates it in place).
  InterCollisionInput input(std::vector<Float4>& p) const { return {p, cloths, filters, settings}; }
};

// `clothCount` cloths of side x side particles (spacing h) stacked 0.6 d apart along z, each shifted
// and turned a little: every cloth overlaps a few neighbours, and particles of neighbours are closer
// than d.
InterScene interScene(uint32_t clothCount, uint32_t side, float h, float d) {
  InterScene s;
  for (uint32_t c = 0; c < clothCount; ++c) {
    const uint32_t first = static_cast<uint32_t>(s.particles.size());
    for (uint32_t y = 0; y < side; ++y) {
      for (uint32_t x = 0; x < side; ++x) {
        s.particles.push_back({(static_cast<float>(x) - 0.5f * static_cast<float>(side)) * h,
                               (static_cast<float>(y) - 0.5f * static_cast<float>(side)) * h, 0.0f, 1.0f});
      }
    }
    const float fc = static_cast<float>(c);
    const float angle = 0.05f * fc;
    s.cloths.push_back({{first, side * side},
                        {0.13f * h * fc, 0.07f * h * fc, 0.6f * d * fc, 0},
                        {0, 0, std::sin(0.5f * angle), std::cos(0.5f * angle)}});
  }
  s.settings = {d, 1.0f, 1};
  return s;
}

bool benchInter(Context& ctx, const Options& o, uint32_t clothCount, uint32_t side, std::vector<Row>& rows) {
  const float h = 0.02f, d = 0.02f;
  InterScene s = interScene(clothCount, side, h, d);
  const uint32_t n = static_cast<uint32_t>(s.particles.size());
  const std::string scene = std::to_string(clothCount) + " x " + std::to_string(side * side);
  InterCollisionDebug ref;
  std::vector<Float4> want = s.particles;
  if (!collideInterCpu(s.input(want), Backend::kCpuScalar, &ref).ok()) return false;
  const uint32_t marked = static_cast<uint32_t>(ref.marked.size()), pairs = static_cast<uint32_t>(ref.clothPairs.size());

  // Both GPU paths (InterCollisionPath): the general one, and the fused one where the cloths'
  // particles fit, their reps interleaved (general, fused, general, ...) so that a busy host's load
  // falls on both alike; the fused step must equal the general one bitwise.
  struct PathRun {
    const char* name;
    std::unique_ptr<InterCollisionStage> stage;
    std::vector<double> ms;
    std::map<std::string, std::vector<double>> perPass;
  };
  std::vector<PathRun> paths;
  for (const InterCollisionPath path : {InterCollisionPath::kGeneral, InterCollisionPath::kFused}) {
    const bool fused = path == InterCollisionPath::kFused;
    if (fused && n > fusedInterCollisionCapacity(ctx)) continue;
    InterCollisionStageCreateInfo ci{s.cloths, s.filters, n};
    ci.path = path;
    auto stage = InterCollisionStage::create(ctx, ci);
    if (!stage) {
      std::fprintf(stderr, "bench_inter_collision: InterCollisionStage::create (%s): %s\n", fused ? "fused" : "general",
                   stage.message().c_str());
      return false;
    }
    paths.push_back({fused ? "vulkan-fused" : "vulkan", std::move(stage.value()), {}, {}});
  }
  std::vector<Float4> general;
  for (uint32_t r = 0; r < o.reps + 1; ++r) {
    for (PathRun& p : paths) {
      InterCollisionDebug rep;
      std::vector<Float4> out = s.particles;
      if (const Status st = p.stage->run(s.input(out), r == 0 ? &rep : nullptr); !st) {
        std::fprintf(stderr, "bench_inter_collision: inter run (%s): %s\n", p.name, st.message().c_str());
        return false;
      }
      if (r > 0) {
        p.ms.push_back(gpuSumMs(p.stage->timings(), &p.perPass));
        continue;
      }
      if (rep.marked != ref.marked || rep.contacts != ref.contacts) {
        std::fprintf(stderr, "bench_inter_collision: %s: %s marked/contacts differ from cpu-scalar\n", scene.c_str(),
                     p.name);
        return false;
      }
      size_t mismatched = 0;
      for (uint32_t i = 0; i < n; ++i) {
        mismatched += std::fabs(out[i].x - want[i].x) + std::fabs(out[i].y - want[i].y) +
                          std::fabs(out[i].z - want[i].z) > 1e-5f;
      }
      if (mismatched > 0) {
        std::fprintf(stderr, "bench_inter_collision: %s: %zu %s positions differ from cpu-scalar\n", scene.c_str(),
                     mismatched, p.name);
        return false;
      }
      if (general.empty()) {
        general = out;  // the general path runs first
      } else if (std::memcmp(out.data(), general.data(), n * sizeof(Float4)) != 0) {
        std::fprintf(stderr, "bench_inter_collision: %s: vulkan-fused differs from vulkan (bitwise)\n", scene.c_str());
        return false;
      }
    }
  }
  for (const PathRun& p : paths) {
    rows.push_back({"inter", scene, p.name, clothCount, n, median(p.ms), o.reps, marked, pairs, medians(p.perPass),
                    p.stage->lastRecordStats()});
  }
  for (Backend b : {Backend::kCpuScalar, Backend::kCpuSimd}) {
    std::vector<Float4> out = s.particles;
    const InterCollisionInput in = s.input(out);
    const WallSamples w = sampleWall(
        [&] {
          std::memcpy(out.data(), s.particles.data(), out.size() * sizeof(Float4));  // in place: the same step each time
          if (!collideInterCpu(in, b).ok()) std::abort();
        },
        o.reps, 1, 5.0, o.quick ? 500.0 : 8000.0, 3);
    rows.push_back({"inter", scene, toString(b), clothCount, n, median(w.ms), static_cast<uint32_t>(w.ms.size()), marked,
                    pairs, {}, std::nullopt});
  }
  return true;
}

void printRow(const Row& r) {
  std::string passes;
  for (const auto& [k, v] : r.passMs) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.3f", passes.empty() ? "" : ", ", k.c_str() + 4, v);
    passes += buf;
  }
  if (r.stats) passes += (passes.empty() ? "" : ", ") + recordStatsNote(*r.stats);
  std::printf("%-7s %-14s %-11s %9u %10.3f %5u %8u %6u  %s\n", r.part.c_str(), r.scene.c_str(), r.backend.c_str(),
              r.particles, r.medianMs, r.reps, r.marked, r.pairs, passes.c_str());
}

bool writeJson(const std::string& path, const Context& ctx, const std::vector<Row>& rows, const Options& o) {
  std::string s = "{\n  \"benchmark\": \"bench_inter_collision\",\n  \"date\": " + jsonString(utcDate()) +
                  ",\n  \"device\": " + jsonString(ctx.deviceInfo().name) + ",\n  \"quick\": " +
                  (o.quick ? "true" : "false") +
                  ",\n  \"units\": \"ms per iteration: vulkan = sum of GPU pass timestamps, cpu = wall clock\",\n";
  s += jsonRowsAndEnd(rows, [&](const Row& r) {
    std::string m = "\"part\": " + jsonString(r.part) + ", \"scene\": " + jsonString(r.scene) + ", \"backend\": " +
        jsonString(r.backend) + ", \"cloths\": " + std::to_string(r.cloths) + ", \"particles\": " +
        std::to_string(r.particles) + ", \"median_ms\": " + jsonNumber(r.medianMs) + ", \"reps\": " +
        std::to_string(r.reps) + ", \"marked\": " + std::to_string(r.marked) + ", \"cloth_pairs\": " +
        std::to_string(r.pairs) + ", \"passes_ms\": " + jsonMsObject(r.passMs);
    if (r.stats) m += ", " + jsonRecordStatsMembers(*r.stats);
    return m;
  });
  return writeTextFile(path, s);
}

int run(const Options& o) {
  const std::unique_ptr<Context> owner = createContext("bench_inter_collision", o.device);
  if (!owner) return 1;
  Context& ctx = *owner;
  if (ctx.deviceInfo().timestampPeriodNs <= 0) {
    std::fprintf(stderr, "bench_inter_collision: the device's queue has no timestamps\n");
    return 1;
  }
  std::printf("bench_inter_collision: device '%s', reps %u, %s\n\n", ctx.deviceInfo().name.c_str(), o.reps,
              utcDate().c_str());
  std::printf("%-7s %-14s %-11s %9s %10s %5s %8s %6s  %s\n", "part", "scene", "backend", "particles", "median_ms",
              "reps", "marked", "pairs", "vulkan passes (ms)");
  std::vector<Row> rows;
  // (a) the same particle count as one cloth and as cloths of 1024 particles.
  const uint32_t bigSide = o.quick ? 128 : 1024;
  bool ok = benchLayout(ctx, o, 1, bigSide, rows);
  ok = ok && benchLayout(ctx, o, bigSide * bigSide / 1024, 32, rows);
  ok = ok && benchSelfLayout(ctx, o, 1, bigSide, rows);
  ok = ok && benchSelfLayout(ctx, o, bigSide * bigSide / 1024, 32, rows);
  for (size_t i = 0; i < rows.size(); ++i) printRow(rows[i]);
  const size_t layoutRows = rows.size();
  // (b) inter collision.
  const uint32_t side = o.quick ? 16 : 32;
  for (uint32_t c : o.quick ? std::vector<uint32_t>{2, 16} : std::vector<uint32_t>{2, 16, 256}) {
    ok = ok && benchInter(ctx, o, c, side, rows);
  }
  // Game-sized scenes that the fused narrow phase takes on lavapipe (at most 1024 particles; see
  // fusedInterCollisionCapacity): 2 cloths of 22 x 22, 4 of 16 x 16, 16 of 8 x 8.
  if (!o.quick) {
    ok = ok && benchInter(ctx, o, 2, 22, rows);
    ok = ok && benchInter(ctx, o, 4, 16, rows);
    ok = ok && benchInter(ctx, o, 16, 8, rows);
  }
  for (size_t i = layoutRows; i < rows.size(); ++i) printRow(rows[i]);
  if (!ok) return 1;
  // The batching target: many cloths cost at most 2x one cloth of the same particle count.
  std::printf("\n");
  for (const char* part : {"layout", "self"}) {
    for (const char* b : {"vulkan", "cpu-scalar", "cpu-simd"}) {
      double one = 0, many = 0;
      for (size_t i = 0; i < layoutRows; ++i) {
        if (rows[i].backend != b || rows[i].part != part) continue;
        (rows[i].cloths == 1 ? one : many) = rows[i].medianMs;
      }
      std::printf("%-6s %-10s: %u cloths / 1 cloth = %.2fx per iteration (target <= 2x)\n",
                  std::strcmp(part, "layout") == 0 ? "shapes" : "self", b, bigSide * bigSide / 1024,
                  one > 0 ? many / one : 0.0);
    }
  }
  if (!reportWritten("bench_inter_collision", o.json, writeJson(o.json, ctx, rows, o))) return 1;
  return 0;
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  const auto options = vkc::bench::parseOptions(argc, argv);
  if (!options) return 2;
  return vkc::bench::run(*options);
}
