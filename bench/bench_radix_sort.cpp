// Radix sort benchmark: sorting N (key, value) uint32 pairs for N = 2^min .. 2^max, on the CPU (std::sort
// on packed 64-bit pairs, the scalar radix reference, the optimized radix variant; wall clock) and on a
// Vulkan device (GPU timestamps of the sort's passes). Prints pairs per second and writes JSON (device,
// driver, date, rows). Every backend's output is checked against the scalar reference. See --help.
//
// CPU rows time one call on a fresh copy of the input: the copy (8 N bytes) is inside the time for every
// CPU row alike. Vulkan rows are the sum of the sort's pass timestamps (upload and readback excluded).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "cpu/bounds.h"
#include "vkcollide/vkcollide.h"

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_radix_sort.json", 9) {}
  uint32_t minLog2 = 16;
  uint32_t maxLog2 = 24;
  uint32_t step = 2;
  uint32_t keyBits = 32;
  bool noGpu = false;
};

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: bench_radix_sort [options]\n"
               "  --device SEL     Vulkan device: index or name substring (default: VKC_DEVICE, else first GPU)\n"
               "  --min-log2 K     smallest N = 2^K pairs (default 16)\n"
               "  --max-log2 K     largest N = 2^K pairs (default 24; at most 26)\n"
               "  --step S         log2 step between sizes (default 2)\n"
               "  --reps R         timed repetitions per measurement, median reported (default 9; fewer,\n"
               "                   at least 3, where R would take over ~4 s)\n"
               "  --key-bits B     sort by the low B bits (1..32, default 32); keys are random below 2^B\n"
               "  --no-gpu         CPU rows only\n"
               "  --quick          N = 2^10 and 2^14 only, 3 reps (smoke test)\n"
               "  --json PATH      write results as JSON (default bench_radix_sort.json)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args("bench_radix_sort", argc, argv);
  const bool parsed = parseCommonOptions(args, o, usage, [&] {
    if (args.is("--no-gpu")) return setFlag(o.noGpu);
    return numberOption(args, {{"--min-log2", &o.minLog2},
                               {"--max-log2", &o.maxLog2},
                               {"--step", &o.step},
                               {"--key-bits", &o.keyBits}});
  });
  if (!parsed) return std::nullopt;
  if (o.quick && !o.repsGiven) o.reps = 3;
  if (o.reps == 0 || o.step == 0 || o.keyBits == 0 || o.keyBits > 32) {
    std::fprintf(stderr, "bench_radix_sort: need --reps >= 1, --step >= 1, 1 <= --key-bits <= 32\n");
    return std::nullopt;
  }
  if (!log2RangeOk("bench_radix_sort", o.minLog2, o.maxLog2, 26)) return std::nullopt;
  return o;
}

struct Row {
  uint32_t n = 0;
  std::string backend;
  double medianMs = 0;
  double pairsPerSecond = 0;
  uint32_t reps = 0;
  uint32_t inner = 1;
  std::vector<std::pair<std::string, double>> passMedians;  // Vulkan: median ms per pass kind (summed over digits)
  std::optional<RecordStats> stats;  // Vulkan: what one record holds
};

constexpr double kCellBudgetMs = 4000;
constexpr uint32_t kMinReps = 3;

void printRow(const Row& r) {
  std::string note;
  if (r.inner > 1) note = "x" + std::to_string(r.inner) + " calls/sample";
  for (const auto& [name, ms] : r.passMedians) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.3f ms", note.empty() ? "" : ", ", name.c_str(), ms);
    note += buf;
  }
  if (r.stats) note += ", " + recordStatsNote(*r.stats);
  std::printf("%10u  %-14s %12.4f %12.4f %5u  %s\n", r.n, r.backend.c_str(), r.medianMs, r.pairsPerSecond * 1e-9,
              r.reps, note.c_str());
  std::fflush(stdout);
}

bool writeJson(const std::string& path, const Options& o, const DeviceInfo* dev, const std::string& date,
               const std::vector<Row>& rows) {
  std::string s = "{\n  \"benchmark\": \"radix_sort\",\n";
  s += "  \"device\": " + jsonString(dev ? dev->name : "none") + ",\n";
  s += "  \"driver\": " + jsonString(dev ? dev->driverName + " " + dev->driverInfo : "") + ",\n";
  s += "  \"subgroup_size\": " + std::to_string(dev ? dev->subgroupSize : 0) + ",\n";
  s += jsonHostFields();
  s += "  \"date\": " + jsonString(date) + ",\n";
  s += "  \"options\": {\"key_bits\": " + std::to_string(o.keyBits) + ", \"reps\": " + std::to_string(o.reps) +
       ", \"min_log2\": " + std::to_string(o.minLog2) + ", \"max_log2\": " + std::to_string(o.maxLog2) +
       ", \"quick\": " + (o.quick ? "true" : "false") + "},\n";
  s += "  \"notes\": \"pairs_per_second = n / median time; cpu rows: wall clock of one call including a copy of "
       "the 8n input bytes; vulkan rows: sum of the sort's GPU pass timestamps\",\n";
  s += jsonRowsAndEnd(rows, [&](const Row& r) {
    std::string m = "\"n\": " + std::to_string(r.n) + ", \"backend\": " + jsonString(r.backend) +
        ", \"median_ms\": " + jsonNumber(r.medianMs) + ", \"pairs_per_second\": " + jsonNumber(r.pairsPerSecond) +
        ", \"reps\": " + std::to_string(r.reps);
    if (r.inner > 1) m += ", \"calls_per_sample\": " + std::to_string(r.inner);
    if (!r.passMedians.empty()) m += ", \"passes_median_ms\": " + jsonMsObject(r.passMedians);
    if (r.stats) m += ", " + jsonRecordStatsMembers(*r.stats);
    return m;
  });
  return writeTextFile(path, s);
}

int runBench(const Options& o) {
  std::unique_ptr<Context> context;
  if (!o.noGpu) {
    context = createContext("bench_radix_sort", o.device);
    if (!context) return 1;
  }
  const DeviceInfo* dev = context ? &context->deviceInfo() : nullptr;
  const bool timestamps = dev != nullptr && dev->timestampPeriodNs > 0;
  const std::string date = utcDate();
  std::vector<uint32_t> log2s;
  if (o.quick) {
    log2s = {10, 14};
  } else {
    for (uint32_t k = o.minLog2; k <= o.maxLog2; k += o.step) log2s.push_back(k);
  }
  const uint32_t maxN = 1u << log2s.back();
  std::printf("bench_radix_sort: device '%s' (%s), CPU '%s', SIMD target %s, keyBits %u, %s\n",
              dev ? dev->name.c_str() : "none", dev ? dev->driverName.c_str() : "", cpuModel().c_str(),
              cpu::simdTargetName(), o.keyBits, date.c_str());
  if (dev != nullptr && !timestamps) std::printf("bench_radix_sort: no timestamps on the queue: Vulkan rows skipped\n");
  std::printf("%10s  %-14s %12s %12s %5s  %s\n", "N", "backend", "median_ms", "Gpairs/s", "reps", "note");

  // Random keys below 2^keyBits (xorshift), values = index.
  std::vector<uint32_t> keys(maxN), values(maxN);
  uint32_t x = 0x9E3779B9u;
  const uint32_t mask = o.keyBits == 32 ? ~0u : (1u << o.keyBits) - 1u;
  for (uint32_t i = 0; i < maxN; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    keys[i] = x & mask;
    values[i] = i;
  }

  std::unique_ptr<RadixSortStage> stage;
  if (timestamps) {
    auto s = RadixSortStage::create(*context, {.maxCount = maxN});
    if (!s) {
      std::fprintf(stderr, "bench_radix_sort: RadixSortStage::create: %s\n", s.message().c_str());
      return 1;
    }
    stage = std::move(s.value());
  }

  const uint32_t warmups = o.quick ? 1 : 2;
  std::vector<Row> rows;
  bool mismatch = false;
  std::vector<uint32_t> wk(maxN), wv(maxN), refK, refV;
  std::vector<uint64_t> packed(maxN);
  for (const uint32_t k : log2s) {
    const uint32_t n = 1u << k;
    refK.assign(keys.begin(), keys.begin() + n);
    refV.assign(values.begin(), values.begin() + n);
    if (const Status s = radixSortCpu({refK, refV, o.keyBits}, Backend::kCpuScalar); !s) {
      std::fprintf(stderr, "bench_radix_sort: %s\n", s.message().c_str());
      return 1;
    }
    auto cpuRow = [&](const std::string& name, auto&& fn) {
      const WallSamples w = sampleWall(fn, o.reps, warmups, 0.5, kCellBudgetMs, std::min(o.reps, kMinReps));
      Row r{n, name};
      r.medianMs = median(w.ms);
      r.pairsPerSecond = n / (r.medianMs * 1e-3);
      r.reps = static_cast<uint32_t>(w.ms.size());
      r.inner = w.inner;
      rows.push_back(r);
      printRow(r);
    };
    cpuRow("cpu-std-sort", [&] {
      for (uint32_t i = 0; i < n; ++i) packed[i] = (uint64_t{keys[i]} << 32) | values[i];
      std::sort(packed.begin(), packed.begin() + n);
    });
    for (const Backend b : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      cpuRow(std::string("cpu-radix-") + (b == Backend::kCpuScalar ? "scalar" : "simd"), [&] {
        std::memcpy(wk.data(), keys.data(), n * sizeof(uint32_t));
        std::memcpy(wv.data(), values.data(), n * sizeof(uint32_t));
        (void)radixSortCpu({{wk.data(), n}, {wv.data(), n}, o.keyBits}, b);
      });
      if (!std::equal(refK.begin(), refK.end(), wk.begin()) || !std::equal(refV.begin(), refV.end(), wv.begin())) {
        std::fprintf(stderr, "bench_radix_sort: N=%u: %s differs from the scalar reference\n", n, toString(b));
        mismatch = true;
      }
    }
    if (!stage) continue;

    std::vector<double> total;
    std::map<std::string, std::vector<double>> perKind;
    uint32_t reps = o.reps;
    for (uint32_t i = 0; i < warmups + reps; ++i) {
      std::memcpy(wk.data(), keys.data(), n * sizeof(uint32_t));
      std::memcpy(wv.data(), values.data(), n * sizeof(uint32_t));
      const double t0 = nowMs();
      if (const Status s = stage->run({{wk.data(), n}, {wv.data(), n}, o.keyBits}); !s) {
        std::fprintf(stderr, "bench_radix_sort: RadixSortStage::run: %s\n", s.message().c_str());
        return 1;
      }
      const double wall = nowMs() - t0;
      if (i == 0 && (!std::equal(refK.begin(), refK.end(), wk.begin()) ||
                     !std::equal(refV.begin(), refV.end(), wv.begin()))) {
        std::fprintf(stderr, "bench_radix_sort: N=%u: vulkan differs from the scalar reference\n", n);
        mismatch = true;
      }
      if (i + 1 == warmups && wall * reps > kCellBudgetMs) {
        reps = std::max(kMinReps, static_cast<uint32_t>(kCellBudgetMs / std::max(wall, 1e-3)));
        reps = std::min(reps, o.reps);
      }
      if (i < warmups) continue;
      double sum = 0;
      std::map<std::string, double> kinds;
      for (const PassTiming& t : stage->timings()) {
        sum += t.ns;
        kinds[t.name] += t.ns * 1e-6;
      }
      for (const auto& [name, ms] : kinds) perKind[name].push_back(ms);
      total.push_back(sum * 1e-6);
    }
    Row r{n, "vulkan"};
    r.medianMs = median(total);
    r.pairsPerSecond = r.medianMs > 0 ? n / (r.medianMs * 1e-3) : 0;
    r.reps = reps;
    for (const auto& [name, v] : perKind) r.passMedians.emplace_back(name, median(v));
    r.stats = stage->lastRecordStats();
    rows.push_back(r);
    printRow(r);
  }
  if (!reportWritten("bench_radix_sort", o.json, writeJson(o.json, o, dev, date, rows), false)) return 1;
  if (mismatch) {
    std::fprintf(stderr, "bench_radix_sort: some backend differs from the scalar reference (see above)\n");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  const auto o = vkc::bench::parseOptions(argc, argv);
  if (!o) return 2;
  return vkc::bench::runBench(*o);
}
