// Bounds benchmark: the bounds stage on the CPU (scalar, SIMD; wall clock) and on a Vulkan device (GPU
// timestamps of its passes), for N = 2^min .. 2^max particles, against a memory roofline: std::memcpy
// on the CPU, a plain buffer-copy kernel (shaders/copy.comp) on the device. Prints a table and writes
// JSON (device, driver, date, rows). See `bench_bounds --help`.
//
// Bytes: bounds reads 16 B per particle (32 B with --prev); a copy moves 2 x 16 B per element (read +
// write). GB/s = bytes / median time; roofline fraction = bounds GB/s / roofline GB/s of the same N.
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "bench_device_copy.h"
#include "cpu/bounds.h"
#include "vkcollide/vkcollide.h"
#include "vulkan/context_impl.h"
#include "vulkan/recorder.h"

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_bounds.json", 15) {}
  uint32_t minLog2 = 10;
  uint32_t maxLog2 = 22;
  uint32_t cloths = 1;
  bool prev = false;
};

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: bench_bounds [options]\n"
               "  --device SEL     Vulkan device: index or name substring (default: VKC_DEVICE, else first GPU)\n"
               "  --min-log2 K     smallest N = 2^K particles (default 10)\n"
               "  --max-log2 K     largest N = 2^K particles (default 22)\n"
               "  --reps R         timed repetitions per measurement, median reported (default 15;\n"
               "                   fewer, at least 5, where R would take over ~2 s)\n"
               "  --cloths C       split N particles among C cloths (default 1)\n"
               "  --prev           includePrevious: also bound the previous positions (reads 2 x 16 B)\n"
               "  --quick          N = 2^10 and 2^16 only, 3 reps (smoke test)\n"
               "  --json PATH      write results as JSON (default bench_bounds.json)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args("bench_bounds", argc, argv);
  const bool parsed = parseCommonOptions(args, o, usage, [&] {
    if (args.is("--prev")) return setFlag(o.prev);
    return numberOption(args, {{"--min-log2", &o.minLog2}, {"--max-log2", &o.maxLog2}, {"--cloths", &o.cloths}});
  });
  if (!parsed) return std::nullopt;
  if (o.quick && !o.repsGiven) o.reps = 3;
  if (o.reps == 0 || o.cloths == 0) {
    std::fprintf(stderr, "bench_bounds: --reps and --cloths must be >= 1\n");
    return std::nullopt;
  }
  if (!log2RangeOk("bench_bounds", o.minLog2, o.maxLog2, 26)) return std::nullopt;
  return o;
}

struct Row {
  uint32_t n = 0;
  std::string backend;
  double medianMs = 0;
  double bytes = 0;
  double gbps = 0;
  double rooflineFraction = 0;
  uint32_t reps = 0;
  uint32_t inner = 1;                    // calls per wall-clock sample (CPU rows)
  std::vector<PassTiming> passMedians;   // Vulkan bounds: median ns per pass
  std::optional<RecordStats> stats;      // Vulkan bounds: what one record holds
};

constexpr double kCellBudgetMs = 2000;  // time one measurement may take before reps shrink
constexpr uint32_t kMinReps = 5;

double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0; }

// Deterministic particles in [-50, 50)^3 with inverse mass 1 (a cheap LCG: the content does not
// matter to the timing, only that it is finite and not constant).
void fillParticles(std::vector<Float4>& p, uint32_t seed) {
  uint32_t s = seed;
  auto next = [&] {
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(s >> 8) * (100.0f / 16777216.0f) - 50.0f;
  };
  for (Float4& v : p) {
    const float x = next(), y = next(), z = next();
    v = {x, y, z, 1.0f};
  }
}

std::vector<ClothRange> splitCloths(uint32_t n, uint32_t cloths) {
  std::vector<ClothRange> out(cloths);
  for (uint32_t c = 0; c < cloths; ++c) {
    const uint64_t begin = uint64_t{n} * c / cloths, end = uint64_t{n} * (c + 1) / cloths;
    out[c] = {static_cast<uint32_t>(begin), static_cast<uint32_t>(end - begin)};
  }
  return out;
}

bool sameBoxes(const std::vector<Aabb>& a, const std::vector<Aabb>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Aabb)) == 0;
}

// Reps for device measurements, from the wall time of one warm-up call.
uint32_t deviceReps(uint32_t reps, double wallMs) {
  if (wallMs * reps <= kCellBudgetMs) return reps;
  return std::max(std::min(reps, kMinReps), static_cast<uint32_t>(kCellBudgetMs / std::max(wallMs, 1e-3)));
}

void printHeader() {
  std::printf("%10s  %-12s %12s %10s %9s %5s  %s\n", "N", "backend", "median_ms", "GB/s", "roofline", "reps", "note");
}

void printRow(const Row& r) {
  std::string note;
  if (r.inner > 1) note = "x" + std::to_string(r.inner) + " calls/sample";
  for (const PassTiming& t : r.passMedians) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.4f ms", note.empty() ? "" : ", ", t.name, t.ns * 1e-6);
    note += buf;
  }
  if (r.stats) note += ", " + recordStatsNote(*r.stats);
  std::printf("%10u  %-12s %12.4f %10.2f %9.3f %5u  %s\n", r.n, r.backend.c_str(), r.medianMs, r.gbps,
              r.rooflineFraction, r.reps, note.c_str());
  std::fflush(stdout);
}

bool writeJson(const std::string& path, const Options& o, const DeviceInfo& dev, const std::string& date,
               const std::vector<uint32_t>& log2s, const std::vector<Row>& rows) {
  std::string s = "{\n";
  s += "  \"benchmark\": \"bounds\",\n";
  s += jsonDeviceFields(dev);
  s += jsonHostFields();
  s += "  \"date\": " + jsonString(date) + ",\n";
  s += "  \"options\": {\"cloths\": " + std::to_string(o.cloths) + ", \"include_previous\": " +
       (o.prev ? "true" : "false") + ", \"reps\": " + std::to_string(o.reps) +
       ", \"min_log2\": " + std::to_string(o.minLog2) + ", \"max_log2\": " + std::to_string(o.maxLog2) +
       ", \"quick\": " + (o.quick ? "true" : "false") + ", \"log2_sizes\": [";
  for (size_t i = 0; i < log2s.size(); ++i) s += (i ? ", " : "") + std::to_string(log2s[i]);
  s += "]},\n";
  s += "  \"notes\": \"bounds bytes = 16*N (32*N with include_previous); roofline bytes = 2*16*N (copy: read + "
       "write); roofline_fraction = gbps / the roofline gbps of the same n (vulkan-copy for vulkan rows, "
       "cpu-memcpy for cpu rows); vulkan times are GPU timestamps (sum of passes), cpu times wall clock\",\n";
  s += jsonRowsAndEnd(rows, [&](const Row& r) {
    std::string m = "\"n\": " + std::to_string(r.n) + ", \"cloths\": " + std::to_string(o.cloths) +
        ", \"backend\": " + jsonString(r.backend) + ", \"median_ms\": " + jsonNumber(r.medianMs) +
        ", \"bytes\": " + jsonNumber(r.bytes) + ", \"gbps\": " + jsonNumber(r.gbps) +
        ", \"roofline_fraction\": " + jsonNumber(r.rooflineFraction) + ", \"reps\": " + std::to_string(r.reps);
    if (r.inner > 1) m += ", \"calls_per_sample\": " + std::to_string(r.inner);
    if (!r.passMedians.empty()) m += ", \"passes_median_ms\": " + jsonPassMsObject(r.passMedians);
    if (r.stats) m += ", " + jsonRecordStatsMembers(*r.stats);
    return m;
  });
  return writeTextFile(path, s);
}

int runBench(const Options& o) {
  const std::unique_ptr<Context> owner = createContext("bench_bounds", o.device);
  if (!owner) return 1;
  Context& context = *owner;
  detail::ContextImpl& ctx = detail::Internals::of(context);
  const DeviceInfo& dev = context.deviceInfo();
  const bool timestamps = dev.timestampPeriodNs > 0;
  const std::string date = utcDate();

  std::vector<uint32_t> log2s;
  if (o.quick) {
    log2s = {10, 16};
  } else {
    for (uint32_t k = o.minLog2; k <= o.maxLog2; k += 2) log2s.push_back(k);
  }
  const uint32_t maxN = 1u << log2s.back();

  std::printf("bench_bounds: device '%s' (%s %s), Vulkan %s; CPU '%s', SIMD target %s\n", dev.name.c_str(),
              dev.driverName.c_str(), dev.driverInfo.c_str(), apiVersionString(dev.apiVersion).c_str(),
              cpuModel().c_str(), cpu::simdTargetName());
  std::printf("bench_bounds: %u cloth(s), includePrevious %s, reps %u, %s\n\n", o.cloths, o.prev ? "on" : "off",
              o.reps, date.c_str());
  if (!timestamps) std::printf("bench_bounds: the device's queue has no timestamps: Vulkan rows are skipped\n");

  std::vector<Float4> particles(maxN), prevParticles(o.prev ? maxN : 0), memcpyDst(maxN);
  fillParticles(particles, 1);
  fillParticles(prevParticles, 2);
  // (memcpyDst is value-initialised: its pages are already faulted in.)

  std::unique_ptr<DeviceCopy> copy;
  if (timestamps) {
    auto c = DeviceCopy::create(ctx, maxN);
    if (!c) {
      std::fprintf(stderr, "bench_bounds: copy kernel: %s\n", c.message().c_str());
      return 1;
    }
    copy = std::move(c.value());
  }

  const uint32_t warmups = o.quick ? 1 : 2;
  std::vector<Row> rows;
  bool mismatch = false;
  printHeader();
  for (const uint32_t k : log2s) {
    const uint32_t n = 1u << k;
    const std::vector<ClothRange> cloths = splitCloths(n, o.cloths);
    BoundsInput input;
    input.particles = std::span<const Float4>(particles.data(), n);
    if (o.prev) input.prevParticles = std::span<const Float4>(prevParticles.data(), n);
    input.cloths = cloths;
    input.includePrevious = o.prev;
    const double boundsBytes = 16.0 * n * (o.prev ? 2 : 1);
    const double copyBytes = 2.0 * 16.0 * n;

    // Reference boxes: every backend must give them bitwise.
    std::vector<Aabb> reference(cloths.size()), boxes(cloths.size());
    input.boxes = reference;
    if (const Status s = computeBoundsCpu(input, Backend::kCpuScalar); !s) {
      std::fprintf(stderr, "bench_bounds: computeBoundsCpu: %s\n", s.message().c_str());
      return 1;
    }

    // CPU roofline: memcpy of 16 N bytes.
    Row mem{n, "cpu-memcpy"};
    {
      const WallSamples w = sampleWall([&] { std::memcpy(memcpyDst.data(), particles.data(), size_t{n} * sizeof(Float4)); },
                                       o.reps, warmups, 0.5, kCellBudgetMs, std::min(o.reps, kMinReps));
      mem.medianMs = median(w.ms);
      mem.reps = static_cast<uint32_t>(w.ms.size());
      mem.inner = w.inner;
      mem.bytes = copyBytes;
      mem.gbps = gbps(copyBytes, mem.medianMs);
      mem.rooflineFraction = 1;
    }
    rows.push_back(mem);
    printRow(rows.back());

    input.boxes = boxes;
    for (const Backend b : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      Status status;
      const WallSamples w = sampleWall(
          [&] {
            const Status s = computeBoundsCpu(input, b);
            if (!s) status = s;
          },
          o.reps, warmups, 0.5, kCellBudgetMs, std::min(o.reps, kMinReps));
      if (!status) {
        std::fprintf(stderr, "bench_bounds: computeBoundsCpu(%s): %s\n", toString(b), status.message().c_str());
        return 1;
      }
      if (!sameBoxes(boxes, reference)) {
        std::fprintf(stderr, "bench_bounds: N=%u: %s boxes differ from cpu-scalar\n", n, toString(b));
        mismatch = true;
      }
      Row r{n, toString(b)};
      r.medianMs = median(w.ms);
      r.reps = static_cast<uint32_t>(w.ms.size());
      r.inner = w.inner;
      r.bytes = boundsBytes;
      r.gbps = gbps(boundsBytes, r.medianMs);
      r.rooflineFraction = mem.gbps > 0 ? r.gbps / mem.gbps : 0;
      rows.push_back(r);
      printRow(rows.back());
    }

    if (!timestamps) continue;

    // Device roofline: the copy kernel.
    Row dcopy{n, "vulkan-copy"};
    {
      std::vector<double> ms;
      double wall = 0;
      for (uint32_t i = 0; i < warmups; ++i) {
        const double t0 = nowMs();
        auto t = copy->run(n);
        wall = nowMs() - t0;
        if (!t) {
          std::fprintf(stderr, "bench_bounds: copy kernel: %s\n", t.message().c_str());
          return 1;
        }
      }
      const uint32_t reps = deviceReps(o.reps, wall);
      for (uint32_t i = 0; i < reps; ++i) {
        auto t = copy->run(n);
        if (!t) {
          std::fprintf(stderr, "bench_bounds: copy kernel: %s\n", t.message().c_str());
          return 1;
        }
        ms.push_back(*t);
      }
      dcopy.medianMs = median(ms);
      dcopy.reps = reps;
      dcopy.bytes = copyBytes;
      dcopy.gbps = gbps(copyBytes, dcopy.medianMs);
      dcopy.rooflineFraction = 1;
    }
    rows.push_back(dcopy);
    printRow(rows.back());

    // The bounds stage: run() uploads, records, submits and waits; only its GPU timestamps count.
    BoundsStageCreateInfo sci;
    sci.cloths = cloths;
    sci.particleCount = n;
    sci.includePrevious = o.prev;
    auto stage = BoundsStage::create(context, sci);
    if (!stage) {
      std::fprintf(stderr, "bench_bounds: BoundsStage::create: %s\n", stage.message().c_str());
      return 1;
    }
    std::vector<double> total;
    std::vector<std::vector<double>> perPass;
    std::vector<const char*> passNames;
    double wall = 0;
    const uint32_t reps0 = o.reps;
    uint32_t reps = reps0;
    for (uint32_t i = 0; i < warmups + reps; ++i) {
      const double t0 = nowMs();
      const Status r = (*stage)->run(input);
      const double dt = nowMs() - t0;
      if (!r) {
        std::fprintf(stderr, "bench_bounds: BoundsStage::run: %s\n", r.message().c_str());
        return 1;
      }
      if (i == 0 && !sameBoxes(boxes, reference)) {
        std::fprintf(stderr, "bench_bounds: N=%u: vulkan boxes differ from cpu-scalar\n", n);
        mismatch = true;
      }
      if (i + 1 == warmups) {
        wall = dt;
        reps = deviceReps(reps0, wall);
      }
      if (i < warmups) continue;
      const std::vector<PassTiming>& t = (*stage)->timings();
      double sum = 0;
      if (perPass.size() != t.size()) {
        perPass.assign(t.size(), {});
        passNames.clear();
        for (const PassTiming& p : t) passNames.push_back(p.name);
      }
      for (size_t p = 0; p < t.size(); ++p) {
        sum += t[p].ns;
        perPass[p].push_back(t[p].ns);
      }
      total.push_back(sum * 1e-6);
    }
    Row vb{n, "vulkan"};
    vb.medianMs = median(total);
    vb.reps = reps;
    vb.bytes = boundsBytes;
    vb.gbps = gbps(boundsBytes, vb.medianMs);
    vb.rooflineFraction = dcopy.gbps > 0 ? vb.gbps / dcopy.gbps : 0;
    for (size_t p = 0; p < perPass.size(); ++p) vb.passMedians.push_back({passNames[p], median(perPass[p])});
    vb.stats = (*stage)->lastRecordStats();
    rows.push_back(vb);
    printRow(rows.back());
  }

  if (!reportWritten("bench_bounds", o.json, writeJson(o.json, o, dev, date, log2s, rows))) return 1;
  if (mismatch) {
    std::fprintf(stderr, "bench_bounds: some backend's boxes differ from cpu-scalar (see above)\n");
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
