// Helpers shared by the benchmarks: option parsing, host description (CPU model, Vulkan API version
// string), medians, wall-clock sampling, a small JSON writer.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cpu/bounds.h"  // cpu::simdTargetName
#include "vkcollide/context.h"
#include "vkcollide/cost_model.h"
#include "vkcollide/result.h"

namespace vkc::bench {

// Parses a whole decimal string into a uint32_t; false (out untouched) on an empty string, trailing
// characters or a value above UINT32_MAX.
inline bool parseUint(const char* s, uint32_t& out) {
  char* end = nullptr;
  const unsigned long v = std::strtoul(s, &end, 10);
  if (end == s || *end != '\0' || v > UINT32_MAX) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

// Parses "A,B,..." (integers in [lo, hi], at least one) into `out`; false on anything else.
inline bool parseUintList(const std::string& list, std::vector<uint32_t>& out, uint32_t lo, uint32_t hi) {
  out.clear();
  size_t start = 0;
  for (;;) {
    const size_t comma = list.find(',', start);
    uint32_t v = 0;
    if (!parseUint(list.substr(start, comma - start).c_str(), v) || v < lo || v > hi) return false;
    out.push_back(v);
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

// Parses "A,B,..." (positive integers, at least one) into `out`; false on anything else.
inline bool parsePositiveList(const std::string& list, std::vector<uint32_t>& out) {
  return parseUintList(list, out, 1, UINT32_MAX);
}

// Walks a benchmark's command line one option at a time. `prog` prefixes the error messages
// ("prog: --reps needs a value", "prog: --reps: 'x' is not a non-negative integer"), which go to
// stderr; the caller then returns its usage error.
//   ArgReader args("bench_x", argc, argv);
//   while (args.next()) { if (args.is("--reps")) { if (!args.number(o.reps)) return std::nullopt; } ... }
class ArgReader {
 public:
  ArgReader(const char* prog, int argc, char** argv) : prog_(prog), argc_(argc), argv_(argv) {}

  // Moves to the next option; false after the last one.
  bool next() {
    if (i_ + 1 >= argc_) return false;
    arg_ = argv_[++i_];
    return true;
  }
  const std::string& arg() const { return arg_; }
  const char* prog() const { return prog_; }
  bool is(const char* name) const { return arg_ == name; }

  // The current option's value (the next argument, consumed); nullptr with a message when missing.
  const char* value() {
    if (i_ + 1 >= argc_) {
      std::fprintf(stderr, "%s: %s needs a value\n", prog_, arg_.c_str());
      return nullptr;
    }
    return argv_[++i_];
  }
  // The value as a string; false with a message when missing.
  bool text(std::string& out) {
    const char* v = value();
    if (v == nullptr) return false;
    out = v;
    return true;
  }
  // The value as a non-negative integer; false with a message when missing or not a number.
  bool number(uint32_t& out) {
    const char* v = value();
    if (v == nullptr) return false;
    if (!parseUint(v, out)) {
      std::fprintf(stderr, "%s: %s: '%s' is not a non-negative integer\n", prog_, arg_.c_str(), v);
      return false;
    }
    return true;
  }

 private:
  const char* prog_;
  int argc_;
  char** argv_;
  int i_ = 0;
  std::string arg_;
};

// The options every benchmark takes (a program's Options derives from this and sets the defaults).
struct CommonOptions {
  std::string device;      // --device SEL: index or name substring; empty: VKC_DEVICE, else the first GPU
  std::string json;        // --json PATH
  uint32_t reps = 0;       // --reps R
  bool repsGiven = false;  // --reps was on the command line (--quick lowers only a default)
  bool quick = false;      // --quick: the smoke test's tiny sizes
  bool exactArithmetic = false;  // --exact-arithmetic: ContextCreateInfo::exactArithmetic

  CommonOptions(std::string defaultJson, uint32_t defaultReps)
      : json(std::move(defaultJson)), reps(defaultReps) {}
};

// What a program's own option handler made of the current option.
enum class Parsed {
  kTaken,    // consumed it (and its value)
  kBad,      // rejected it; the handler printed why
  kUnknown,  // not one of the program's options
};
inline Parsed taken(bool ok) {
  return ok ? Parsed::kTaken : Parsed::kBad;
}
// Options of the form "--name N" (a non-negative integer): the one named by the current option reads
// its value into its target; kUnknown where none is.
inline Parsed numberOption(ArgReader& args,
                           std::initializer_list<std::pair<const char*, uint32_t*>> options) {
  for (const auto& [name, target] : options) {
    if (args.is(name)) return taken(args.number(*target));
  }
  return Parsed::kUnknown;
}
// A switch: sets `flag` to `value`.
inline Parsed setFlag(bool& flag, bool value = true) {
  flag = value;
  return Parsed::kTaken;
}
// "--levels A,B,..": 1-to-4 subdivision levels of a benchmark's mesh, integers 0..5.
inline Parsed levelsOption(ArgReader& args, std::vector<uint32_t>& levels) {
  std::string list;
  if (!args.text(list)) return Parsed::kBad;
  if (!parseUintList(list, levels, 0, 5)) {
    std::fprintf(stderr, "%s: --levels wants integers 0..5 A,B,...\n", args.prog());
    return Parsed::kBad;
  }
  return Parsed::kTaken;
}

// Walks the command line: --device, --json, --reps, --quick, --exact-arithmetic into `o`; --help or -h prints the usage
// to stdout and exits 0; every other option goes to `own()` (which reads it from `args`). An option
// nobody knows prints "<prog>: unknown option '<option>'" and the usage to stderr. False on any error
// (the program then returns its usage error).
template <class Own>
bool parseCommonOptions(ArgReader& args, CommonOptions& o, void (*usage)(std::FILE*), Own&& own) {
  while (args.next()) {
    if (args.is("--help") || args.is("-h")) {
      usage(stdout);
      std::exit(0);
    } else if (args.is("--device")) {
      if (!args.text(o.device)) return false;
    } else if (args.is("--json")) {
      if (!args.text(o.json)) return false;
    } else if (args.is("--reps")) {
      if (!args.number(o.reps)) return false;
      o.repsGiven = true;
    } else if (args.is("--quick")) {
      o.quick = true;
    } else if (args.is("--exact-arithmetic")) {
      o.exactArithmetic = true;
    } else {
      const Parsed p = own();
      if (p == Parsed::kBad) return false;
      if (p == Parsed::kUnknown) {
        std::fprintf(stderr, "%s: unknown option '%s'\n", args.prog(), args.arg().c_str());
        usage(stderr);
        return false;
      }
    }
  }
  return true;
}

// --min-log2 <= --max-log2 <= maxLog2Limit; else false, with "<prog>: need --min-log2 <= --max-log2 <=
// <limit>".
inline bool log2RangeOk(const char* prog, uint32_t minLog2, uint32_t maxLog2, uint32_t maxLog2Limit) {
  if (maxLog2 <= maxLog2Limit && minLog2 <= maxLog2) return true;
  std::fprintf(stderr, "%s: need --min-log2 <= --max-log2 <= %u\n", prog, maxLog2Limit);
  return false;
}

// The host CPU's "model name" from /proc/cpuinfo, "unknown" where there is none.
inline std::string cpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
  }
  return "unknown";
}

// A packed Vulkan API version (VK_MAKE_API_VERSION layout: major 7 bits at 22, minor 10 bits at 12,
// patch 12 bits) as "major.minor.patch".
inline std::string apiVersionString(uint32_t v) {
  return std::to_string((v >> 22) & 0x7Fu) + "." + std::to_string((v >> 12) & 0x3FFu) + "." +
         std::to_string(v & 0xFFFu);
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// The calling thread's CPU time in ms (CLOCK_THREAD_CPUTIME_ID): on a machine shared with other jobs
// it leaves out the time the thread waits for a core, which wall clock counts.
inline double threadMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

inline double nowMs() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
}

// Wall-clock samples of `fn`, in ms per call. Each sample runs `fn` `inner` times (chosen from the
// warm-up so that a sample lasts at least minSampleMs: tiny inputs are otherwise below the clock's
// noise) and `reps` samples are taken; `reps` shrinks (to at least minReps) when reps samples would
// exceed budgetMs. `clock` may be threadMs instead (the calling thread's CPU time: on a loaded
// machine, without the time it waited for a core).
struct WallSamples {
  std::vector<double> ms;
  uint32_t inner = 1;
};

template <class Fn>
WallSamples sampleWall(Fn&& fn, uint32_t reps, uint32_t warmups, double minSampleMs, double budgetMs,
                       uint32_t minReps, double (*clock)() = nowMs) {
  double once = 0;
  for (uint32_t i = 0; i < std::max(warmups, 1u); ++i) {
    const double t0 = clock();
    fn();
    once = clock() - t0;
  }
  WallSamples s;
  if (once < minSampleMs)
    s.inner = static_cast<uint32_t>(std::min(1e6, std::ceil(minSampleMs / std::max(once, 1e-6))));
  const double sampleMs = once * s.inner;
  if (sampleMs * reps > budgetMs) {
    reps = std::max(minReps, static_cast<uint32_t>(budgetMs / std::max(sampleMs, 1e-6)));
  }
  s.ms.reserve(reps);
  for (uint32_t r = 0; r < reps; ++r) {
    const double t0 = clock();
    for (uint32_t i = 0; i < s.inner; ++i) fn();
    s.ms.push_back((clock() - t0) / s.inner);
  }
  return s;
}

// Two functions timed in alternation, sample by sample (A, B, A, B, ...), each sample long enough
// (minSampleMs) to hold several calls: on a machine whose speed drifts (a shared VM's phases, turbo),
// the i-th samples of A and B are taken within milliseconds of each other, so the ratio of a pair of
// samples is far steadier than the ratio of two medians taken seconds apart. Returns A's and B's
// samples (index i of both: one pair).
template <class FnA, class FnB>
std::pair<WallSamples, WallSamples> samplePaired(FnA&& a, FnB&& b, uint32_t reps, double minSampleMs,
                                                 double budgetMs, uint32_t minReps, double (*clock)() = nowMs) {
  const auto innerFor = [&](auto& fn) {
    const double t0 = clock();
    fn();
    const double once = clock() - t0;
    return once < minSampleMs ? static_cast<uint32_t>(std::min(1e6, std::ceil(minSampleMs / std::max(once, 1e-6))))
                              : 1u;
  };
  std::pair<WallSamples, WallSamples> s;
  s.first.inner = innerFor(a);
  s.second.inner = innerFor(b);
  const auto sample = [&](auto& fn, WallSamples& w) {
    const double t0 = clock();
    for (uint32_t i = 0; i < w.inner; ++i) fn();
    w.ms.push_back((clock() - t0) / w.inner);
    return w.ms.back() * w.inner;
  };
  double spent = sample(a, s.first) + sample(b, s.second);
  for (uint32_t r = 1; r < reps && (r < minReps || spent * (r + 1) / r <= budgetMs); ++r) {
    spent += sample(a, s.first) + sample(b, s.second);
  }
  return s;
}

// The median over the pairs of samples of b's time / a's time (samplePaired's result): how many
// times faster A is than B, pair by pair.
inline double medianPairedRatio(const std::pair<WallSamples, WallSamples>& s) {
  std::vector<double> r;
  for (size_t i = 0; i < s.first.ms.size() && i < s.second.ms.size(); ++i) {
    if (s.first.ms[i] > 0) r.push_back(s.second.ms[i] / s.first.ms[i]);
  }
  return median(std::move(r));
}

inline std::string utcDate() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

inline std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

inline std::string jsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A JSON object of milliseconds by name, {"a": 1.5, "b": 0.25}, in the order of `ms` (pairs of
// name and milliseconds: a vector of pairs or a map).
template <class NamedMs>
std::string jsonMsObject(const NamedMs& ms) {
  std::string s = "{";
  for (const auto& [name, v] : ms) s += (s.size() > 1 ? ", " : "") + jsonString(name) + ": " + jsonNumber(v);
  return s + "}";
}

// The same object of per-pass times (PassTiming holds ns); `numbered` names them "0 name", "1 name", ...
// (for stages that run passes of one name more than once).
inline std::string jsonPassMsObject(const std::vector<PassTiming>& passes, bool numbered = false) {
  std::vector<std::pair<std::string, double>> ms;
  for (size_t k = 0; k < passes.size(); ++k) {
    ms.emplace_back(numbered ? std::to_string(k) + " " + passes[k].name : passes[k].name,
                    passes[k].ns * 1e-6);
  }
  return jsonMsObject(ms);
}

// A Vulkan row's record figures (RecordStats, counted as recorded) and the H100 cost model's
// projection of them, as JSON members: "record_stats": {...}, "h100_model_us": x (a model, not a
// measurement: README, Cost figures).
inline std::string jsonRecordStatsMembers(const RecordStats& r) {
  auto u = [](uint64_t v) { return std::to_string(v); };
  return "\"record_stats\": {\"dispatches\": " + u(r.dispatches) +
         ", \"dependent_dispatches\": " + u(r.dependentDispatches) +
         ", \"indirect_dispatches\": " + u(r.indirectDispatches) + ", \"barriers\": " + u(r.barriers) +
         ", \"transfers\": " + u(r.transfers) + ", \"workgroups\": " + u(r.workgroups) +
         ", \"bytes_read\": " + u(r.bytesRead) + ", \"bytes_written\": " + u(r.bytesWritten) +
         ", \"transfer_bytes\": " + u(r.transferBytes) +
         "}, \"h100_model_us\": " + jsonNumber(projectSeconds(r, kH100CostModel) * 1e6);
}

// The same for a printed table's note: "6 dispatches (6 dependent), 3.2 MB declared, H100 model 18.1 us".
inline std::string recordStatsNote(const RecordStats& r) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%u dispatches (%u dependent), %.2f MB declared, H100 model %.1f us",
                r.dispatches, r.dependentDispatches,
                static_cast<double>(r.bytesRead + r.bytesWritten + r.transferBytes) * 1e-6,
                projectSeconds(r, kH100CostModel) * 1e6);
  return buf;
}

// Writes `text` to `path` (created or truncated); false when the file cannot be opened, written or closed.
inline bool writeTextFile(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

// Says how writing the results file went: "<prog>: wrote <path>" on stdout (after an empty line where
// `blankLineFirst`), else "<prog>: cannot write <path>" on stderr. Returns `written`.
inline bool reportWritten(const char* prog, const std::string& path, bool written,
                          bool blankLineFirst = true) {
  if (!written) {
    std::fprintf(stderr, "%s: cannot write %s\n", prog, path.c_str());
    return false;
  }
  std::printf("%s%s: wrote %s\n", blankLineFirst ? "\n" : "", prog, path.c_str());
  return true;
}

// A benchmark's end: writes its results file (reportWritten says how that went); "<prog>: backends
// disagree (see the notes)" on stderr when `disagree`. The exit code: 1 when the backends disagree or
// the file was not written, else 0.
inline int finishResults(const char* prog, const std::string& path, const std::string& json, bool disagree) {
  const bool written = reportWritten(prog, path, writeTextFile(path, json));
  if (disagree) {
    std::fprintf(stderr, "%s: backends disagree (see the notes)\n", prog);
    return 1;
  }
  return written ? 0 : 1;
}

// A Vulkan context on the device picked by `device` (index or name substring; empty: VKC_DEVICE,
// else the first GPU, see ContextCreateInfo::deviceSelector). On failure prints
// "<prog>: no Vulkan context: <message>" to stderr and returns null.
// With VKC_BENCH_VALIDATION=1 in the environment (the ctest smoke tests set it) the context runs
// the validation layer with synchronization validation, and the first message ends the program with
// exit code 3: a benchmark whose recording is invalid fails its smoke test. exactArithmetic:
// ContextCreateInfo::exactArithmetic (--exact-arithmetic); pipelineCacheData: its seed of the
// pipeline cache (ContextCreateInfo::pipelineCacheData).
inline std::unique_ptr<Context> createContext(const char* prog, const std::string& device,
                                              bool exactArithmetic = false,
                                              std::span<const uint8_t> pipelineCacheData = {}) {
  ContextCreateInfo ci;
  ci.exactArithmetic = exactArithmetic;
  ci.pipelineCacheData = pipelineCacheData;
  if (!device.empty()) ci.deviceSelector = device.c_str();
  if (const char* v = std::getenv("VKC_BENCH_VALIDATION"); v != nullptr && std::string(v) == "1") {
    ci.enableValidation = true;
    ci.onValidationMessage = [prog](const char* message) {
      std::fprintf(stderr, "%s: validation message (VKC_BENCH_VALIDATION=1): %s\n", prog, message);
      std::fflush(stderr);
      std::_Exit(3);
    };
  }
  auto created = Context::create(ci);
  if (!created) {
    std::fprintf(stderr, "%s: no Vulkan context: %s\n", prog, created.message().c_str());
    return nullptr;
  }
  return std::move(created.value());
}

// The results file's tail: the "rows" array (one object per line, whose members rowMembers(row)
// returns without braces), then the brace closing the file's object.
template <class Row, class Members>
std::string jsonRowsAndEnd(const std::vector<Row>& rows, Members&& rowMembers) {
  std::string s = "  \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i)
    s += "    {" + rowMembers(rows[i]) + (i + 1 < rows.size() ? "},\n" : "}\n");
  return s + "  ]\n}\n";
}

// JSON object members (two-space indent, one per line, each ending in ",\n") describing the Vulkan
// device: "device", "driver" (name and driver info), "vendor", "vulkan_api", "subgroup_size"; and
// "exact_arithmetic" for a context.
inline std::string jsonDeviceFields(const DeviceInfo& dev) {
  std::string s;
  s += "  \"device\": " + jsonString(dev.name) + ",\n";
  s += "  \"driver\": " + jsonString(dev.driverName + (dev.driverInfo.empty() ? "" : " " + dev.driverInfo)) +
       ",\n";
  s += "  \"vendor\": " + jsonString(dev.vendorName) + ",\n";
  s += "  \"vulkan_api\": " + jsonString(apiVersionString(dev.apiVersion)) + ",\n";
  s += "  \"subgroup_size\": " + std::to_string(dev.subgroupSize) + ",\n";
  return s;
}
inline std::string jsonDeviceFields(const Context& ctx) {
  return jsonDeviceFields(ctx.deviceInfo()) +
         "  \"exact_arithmetic\": " + (ctx.exactArithmetic() ? "true" : "false") + ",\n";
}

// The device line of a benchmark's header: "device 'NAME' (DRIVER INFO), Vulkan X.Y.Z", and ", exact
// arithmetic" for a context with it.
inline std::string deviceLine(const Context& ctx) {
  const DeviceInfo& dev = ctx.deviceInfo();
  return "device '" + dev.name + "' (" + dev.driverName + " " + dev.driverInfo + "), Vulkan " +
         apiVersionString(dev.apiVersion) + (ctx.exactArithmetic() ? ", exact arithmetic" : "");
}

// JSON object members (same layout) describing the host CPU: "cpu" (model name) and
// "cpu_simd_target" (the Highway target the CPU SIMD twins dispatch to).
inline std::string jsonHostFields() {
  return "  \"cpu\": " + jsonString(cpuModel()) +
         ",\n  \"cpu_simd_target\": " + jsonString(cpu::simdTargetName()) + ",\n";
}

}  // namespace vkc::bench
