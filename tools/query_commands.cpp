// vkcollide query / compare for geometry query files (docs/query-format.md): a batch of pairwise
// geometry queries (geometry_queries.h) run by queryGeometries on one backend and written as a
// contacts file, or run on every backend and compared with the CPU scalar reference bit for bit
// (geometry_queries.h promises the same results on every backend).
//
// Output capacity: --capacity N gives the output N contacts (an overflow is reported in the contacts
// file and on stdout, not an error); without it the capacity is the number of queries, and a run that
// overflows is run again with room for every contact it found.
//
// Continuous queries: every run starts from the query file's "state" (zeros where it has none), or
// with --state-in CONTACTS from the "state" a previous `query` wrote into its contacts file (so steps
// chain); the contacts file holds the state after the run.
//
// Exit codes (those of the scene commands): 0 success; 1 a run failed, backends differ, or a backend is
// not deterministic over --repeat; 2 usage errors and bad query files (nothing is written then). On
// `compare`, a Vulkan backend that cannot run (no device, or queryGeometries answers kUnsupported) is
// reported as not run and does not change the exit code.
//
// Test hook of `compare` (not in the usage text): --perturb-backend NAME DELTA adds DELTA to the x of
// the first contact's point A in that backend's result, so that tests can see compare fail.
#include "query_commands.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vkcollide/query_file.h"  // a separate library: vkcollide::scene
#include "vkcollide/vkcollide.h"

#include "tool_common.h"
#include "tool_context.h"

namespace vkc::tool {

namespace {

int usageError(const std::string& message) {
  std::fprintf(stderr, "vkcollide: %s\n%s", message.c_str(), queryUsage());
  return kExitUsage;
}

// The options both commands share.
struct Options {
  std::string queries, out, stateIn;
  std::optional<Backend> backend;
  ContextOptions context;
  std::optional<uint32_t> capacity;
  uint32_t repeat = 1;
  std::optional<Backend> perturb;  // compare's test hook
  float perturbDelta = 0;
};

// Parses the command line; returns kExitOk or the usage error's exit code.
int parseOptions(const char* command, int argc, char** argv, bool compare, Options& o) {
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (!compare && a == "--backend" && hasValue) {
      o.backend = parseBackend(argv[++i]);
      if (!o.backend) return usageError(std::string("unknown backend '") + argv[i] + "'");
    } else if (!compare && a == "--out" && hasValue) {
      o.out = argv[++i];
    } else if (a == "--state-in" && hasValue) {
      o.stateIn = argv[++i];
    } else if (parseContextOption(argc, argv, i, o.context)) {
    } else if (a == "--capacity" && hasValue) {
      uint32_t c = 0;
      if (!parseCount(argv[++i], 0, UINT32_MAX, c)) {
        return usageError(std::string("--capacity: expected 0 .. 4294967295, found '") + argv[i] + "'");
      }
      o.capacity = c;
    } else if (a == "--repeat" && hasValue) {
      if (!parseCount(argv[++i], 1, 100000, o.repeat)) {
        return usageError(std::string("--repeat: expected 1 .. 100000, found '") + argv[i] + "'");
      }
    } else if (compare && a == "--perturb-backend" && i + 2 < argc) {
      o.perturb = parseBackend(argv[++i]);
      o.perturbDelta = std::strtof(argv[++i], nullptr);
      if (!o.perturb) return usageError(std::string("unknown backend '") + argv[i - 1] + "'");
    } else if (!a.empty() && a[0] != '-' && o.queries.empty()) {
      o.queries = a;
    } else {
      return usageError(std::string(command) + ": unexpected argument '" + a + "'");
    }
  }
  if (o.queries.empty()) return usageError(std::string(command) + ": no query file");
  if (!compare && !o.backend) return usageError(std::string(command) + ": --backend is required");
  if (!compare && o.out.empty()) return usageError(std::string(command) + ": --out is required");
  return kExitOk;
}

// One run of the batch, with its time (wall clock of the queryGeometries call).
struct Run {
  GeometryContacts contacts;
  double ms = 0;
};

// Runs the batch once with the given capacity; the output starts zeroed, so that elements nobody
// writes compare equal across backends.
// The continuous queries' state starts as the file's.
Result<Run> runOnce(Backend backend, Context* context, const GeometryQueryFile& file, uint32_t capacity) {
  std::vector<ContactElement> a(capacity), b(capacity);
  std::vector<ContactRange> ranges(file.queries.size());
  std::vector<Float4> state = file.state;
  const auto t0 = std::chrono::steady_clock::now();
  Result<GeometryQueryCounts> counts = queryGeometries(backend, context, file.input(), {a, b, ranges, state});
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!counts) return counts.error();
  Run run;
  run.ms = ms;
  run.contacts.backend = toString(backend);
  run.contacts.counts = *counts;
  run.contacts.queries = file.queries;
  run.contacts.ranges = std::move(ranges);
  a.resize(counts->written);
  b.resize(counts->written);
  run.contacts.elementsA = std::move(a);
  run.contacts.elementsB = std::move(b);
  run.contacts.state = std::move(state);
  return run;
}

// Runs the batch: with --capacity as given, else with room for one contact per query and again with
// room for all when that overflowed.
Result<Run> runBatch(Backend backend, Context* context, const GeometryQueryFile& file,
                     std::optional<uint32_t> capacity) {
  Result<Run> run =
      runOnce(backend, context, file, capacity.value_or(static_cast<uint32_t>(file.queries.size())));
  if (!run || capacity || !run->contacts.counts.overflow) return run;
  return runOnce(backend, context, file, run->contacts.counts.contacts);
}

bool sameBits(const void* a, const void* b, size_t n) {
  return n == 0 || std::memcmp(a, b, n) == 0;
}

std::string float4Text(const Float4& v) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "(%.9g, %.9g, %.9g, %.9g)", static_cast<double>(v.x),
                static_cast<double>(v.y), static_cast<double>(v.z), static_cast<double>(v.w));
  return buf;
}

// "" if `got` equals `want` bit for bit, else where they first differ.
std::string firstDifference(const GeometryContacts& got, const GeometryContacts& want,
                            const GeometryQueryFile& file) {
  auto count = [](const char* what, uint64_t g, uint64_t w) {
    return std::string(what) + " " + std::to_string(g) + " vs " + std::to_string(w);
  };
  if (got.counts.contacts != want.counts.contacts)
    return count("contacts", got.counts.contacts, want.counts.contacts);
  if (got.counts.written != want.counts.written)
    return count("written", got.counts.written, want.counts.written);
  auto queryText = [&](size_t q) {
    const GeometryQuery& gq = file.queries[q];
    return "query " + std::to_string(q) + " (" + geometryTypeName(file.geometries[gq.a].type) + " vs " +
           geometryTypeName(file.geometries[gq.b].type) + ")";
  };
  for (size_t q = 0; q < want.ranges.size(); ++q) {
    const ContactRange& g = got.ranges[q];
    const ContactRange& w = want.ranges[q];
    if (g.first != w.first || g.count != w.count) {
      return queryText(q) + ": range first " + std::to_string(g.first) + " count " + std::to_string(g.count) +
             " vs first " + std::to_string(w.first) + " count " + std::to_string(w.count);
    }
  }
  for (size_t k = 0; k < want.elementsA.size(); ++k) {
    for (int side = 0; side < 2; ++side) {
      const ContactElement& g = (side == 0 ? got.elementsA : got.elementsB)[k];
      const ContactElement& w = (side == 0 ? want.elementsA : want.elementsB)[k];
      if (sameBits(&g, &w, sizeof g)) continue;
      std::string where = "contact " + std::to_string(k);
      if (w.query < file.queries.size()) {
        where = queryText(w.query) + ", contact " + std::to_string(k - want.ranges[w.query].first);
      }
      where += side == 0 ? ", element A: " : ", element B: ";
      if (g.cell != w.cell) {
        return where + "cell word " + std::to_string(g.cell) + " vs " + std::to_string(w.cell);
      }
      if (g.type != w.type || g.index != w.index || g.query != w.query) {
        return where + "type/index/query " + contactElementTypeName(g.type) + "/" + std::to_string(g.index) +
               "/" + std::to_string(g.query) + " vs " + contactElementTypeName(w.type) + "/" +
               std::to_string(w.index) + "/" + std::to_string(w.query);
      }
      if (!sameBits(&g.point, &w.point, sizeof(Float4))) {
        return where + "point (xyz, depth) " + float4Text(g.point) + " vs " + float4Text(w.point);
      }
      return where + "direction " + float4Text(g.direction) + " vs " + float4Text(w.direction);
    }
  }
  for (size_t k = 0; k < want.state.size() && k < got.state.size(); ++k) {
    if (!sameBits(&got.state[k], &want.state[k], sizeof(Float4)))
      return "state[" + std::to_string(k) + "] " + float4Text(got.state[k]) + " vs " +
             float4Text(want.state[k]);
  }
  return "";
}

// Loads and validates the query file. Returns kExitOk or the exit code to return.
int prepare(const std::string& path, GeometryQueryFile& file, double& loadMs) {
  const auto t0 = std::chrono::steady_clock::now();
  Result<GeometryQueryFile> loaded = loadGeometryQueries(path);
  loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!loaded) {
    std::fprintf(stderr, "vkcollide: %s\n", loaded.message().c_str());
    return kExitUsage;
  }
  file = std::move(*loaded);
  if (const Status st = validate(file.input()); !st) {
    std::fprintf(stderr, "vkcollide: %s: %s\n", path.c_str(), st.message().c_str());
    return kExitUsage;
  }
  return kExitOk;
}

// Parses the command line, then loads and validates the query file. Returns kExitOk or the exit code.
int begin(const char* command, int argc, char** argv, bool compare, Options& o, GeometryQueryFile& file,
          double& loadMs) {
  if (const int rc = parseOptions(command, argc, argv, compare, o); rc != kExitOk) return rc;
  if (const int rc = prepare(o.queries, file, loadMs); rc != kExitOk || o.stateIn.empty()) return rc;
  Result<GeometryContacts> previous = loadContacts(o.stateIn);
  if (!previous) {
    std::fprintf(stderr, "vkcollide: --state-in: %s\n", previous.message().c_str());
    return kExitUsage;
  }
  if (previous->state.size() != file.state.size()) {
    std::fprintf(stderr, "vkcollide: --state-in: %s holds %zu state entries, %s uses %zu\n",
                 o.stateIn.c_str(), previous->state.size(), o.queries.c_str(), file.state.size());
    return kExitUsage;
  }
  file.state = std::move(previous->state);
  return kExitOk;
}

// False, with a message, when the context (if any) has seen validation messages.
bool validationClean(const Context* context) {
  if (context == nullptr || context->validationMessageCount() == 0) return true;
  std::fprintf(stderr, "vkcollide: %llu validation message(s)\n",
               static_cast<unsigned long long>(context->validationMessageCount()));
  return false;
}

// "12 queries (3 sphere-box, ...), 4 geometries, 1000 points".
std::string batchSummary(const GeometryQueryFile& file) {
  std::vector<std::pair<std::string, size_t>> pairs;
  for (const GeometryQuery& q : file.queries) {
    GeometryType a = file.geometries[q.a].type, b = file.geometries[q.b].type;
    if (b < a) std::swap(a, b);
    const std::string name = std::string(geometryTypeName(a)) + "-" + geometryTypeName(b);
    auto it = std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) { return p.first == name; });
    if (it == pairs.end()) {
      pairs.emplace_back(name, 1);
    } else {
      ++it->second;
    }
  }
  std::string s = std::to_string(file.queries.size()) + " queries";
  for (size_t i = 0; i < pairs.size(); ++i) {
    s += (i == 0 ? " (" : ", ") + std::to_string(pairs[i].second) + " " + pairs[i].first;
  }
  if (!pairs.empty()) s += ")";
  s += ", " + std::to_string(file.geometries.size()) + " geometries, " + std::to_string(file.points.size()) +
       " points";
  if (!file.gridSamples.empty()) s += ", " + std::to_string(file.gridSamples.size()) + " grid samples";
  if (!file.state.empty()) s += ", " + std::to_string(file.state.size()) + " state entries";
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Runs the batch `repeat` times; every repeat must equal the first bit for bit. `times` gets the
// wall clock of each. Returns kExitOk or the exit code, with a message printed.
int runRepeated(Backend backend, Context* context, const GeometryQueryFile& file, const Options& o,
                Run& first, std::vector<double>& times) {
  for (uint32_t r = 0; r < o.repeat; ++r) {
    Result<Run> run = runBatch(backend, context, file, o.capacity);
    if (!run) {
      std::fprintf(stderr, "vkcollide: %s: %s\n", toString(backend), run.message().c_str());
      return run.error().code == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
    }
    times.push_back(run->ms);
    if (r == 0) {
      first = std::move(*run);
    } else if (const std::string d = firstDifference(run->contacts, first.contacts, file); !d.empty()) {
      std::fprintf(
          stderr,
          "vkcollide: %s: repeat %u gave a different result than the first run (not deterministic): %s\n",
          toString(backend), r + 1, d.c_str());
      return kExitFailed;
    }
  }
  return kExitOk;
}

}  // namespace

const char* queryUsage() {
  static const std::string usage =
      std::string("       vkcollide query QUERIES --backend vulkan|cpu|cpu-scalar ") + kContextOptionsUsage +
      " [--capacity N] [--repeat K] [--state-in CONTACTS] --out CONTACTS\n"
      "       vkcollide compare QUERIES " + kContextOptionsUsage + " [--capacity N] [--repeat K] [--state-in CONTACTS]\n"
      "       (QUERIES: a geometry query file, docs/query-format.md; compare runs every backend against "
      "cpu-scalar)\n";
  return usage.c_str();
}

bool namesQueryFile(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    Result<std::string> format = readFileFormat(argv[i]);
    if (format && *format == kQueryFileFormat) return true;
  }
  return false;
}

int queryCommand(int argc, char** argv) {
  Options o;
  GeometryQueryFile file;
  double loadMs = 0;
  if (const int rc = begin("query", argc, argv, false, o, file, loadMs); rc != kExitOk) return rc;
  ToolContext context;
  if (*o.backend == Backend::kVulkan) {
    std::string error;
    context = createContext(o.context, &error);
    if (!context) {
      std::fprintf(stderr, "vkcollide: vulkan: %s\n", error.c_str());
      return kExitFailed;
    }
  }
  std::printf("query: %s (loaded in %.1f ms): %s; backend %s%s%s\n", o.queries.c_str(), loadMs,
              batchSummary(file).c_str(), toString(*o.backend), context ? " on " : "",
              context ? context->deviceInfo().name.c_str() : "");
  Run run;
  std::vector<double> times;
  if (const int rc = runRepeated(*o.backend, context.get(), file, o, run, times); rc != kExitOk) return rc;
  if (!validationClean(context.get())) return kExitFailed;
  const GeometryQueryCounts& c = run.contacts.counts;
  std::printf("  %u contacts, %u written%s; %.3f ms (median of %u)\n", c.contacts, c.written,
              c.overflow ? " (OVERFLOW: --capacity is too small; the file holds the first ones)" : "",
              median(times), o.repeat);
  if (const Status st = saveContacts(run.contacts, o.out); !st) {
    std::fprintf(stderr, "vkcollide: %s\n", st.message().c_str());
    return kExitFailed;
  }
  std::printf("  wrote %s\n", o.out.c_str());
  return kExitOk;
}

int queryCompareCommand(int argc, char** argv) {
  Options o;
  GeometryQueryFile file;
  double loadMs = 0;
  if (const int rc = begin("compare", argc, argv, true, o, file, loadMs); rc != kExitOk) return rc;
  std::string vulkanError;
  ToolContext context = createContext(o.context, &vulkanError);
  std::printf("compare: %s (loaded in %.1f ms): %s; repeat %u\n", o.queries.c_str(), loadMs,
              batchSummary(file).c_str(), o.repeat);
  if (context) std::printf("  vulkan device: %s\n", context->deviceInfo().name.c_str());

  std::vector<Backend> backends = {Backend::kCpuScalar, Backend::kCpuSimd};  // the reference first
  if (context) backends.push_back(Backend::kVulkan);
  Run reference;
  int failures = 0;
  for (Backend b : backends) {
    Run run;
    std::vector<double> times;
    if (b == Backend::kVulkan) {
      // A device that cannot run the queries yet is reported, not a failure.
      Result<Run> probe = runBatch(b, context.get(), file, o.capacity);
      if (!probe && probe.error().code == ErrorCode::kUnsupported) {
        vulkanError = probe.message();
        context.reset();
        break;
      }
    }
    if (const int rc = runRepeated(b, b == Backend::kVulkan ? context.get() : nullptr, file, o, run, times);
        rc != kExitOk) {
      return rc;
    }
    if (o.perturb == b && !run.contacts.elementsA.empty())
      run.contacts.elementsA[0].point.x += o.perturbDelta;
    const GeometryQueryCounts& c = run.contacts.counts;
    std::string verdict = "the reference";
    if (b != Backend::kCpuScalar) {
      const std::string d = firstDifference(run.contacts, reference.contacts, file);
      verdict = d.empty() ? "bitwise equal to cpu-scalar" : "DIFFERS from cpu-scalar, first at " + d;
      failures += d.empty() ? 0 : 1;
    }
    std::printf("  %-10s %10.3f ms (median of %u)  %u contacts, %u written%s  %s\n", toString(b),
                median(times), o.repeat, c.contacts, c.written, c.overflow ? " (overflow)" : "",
                verdict.c_str());
    if (b == Backend::kCpuScalar) reference = std::move(run);
  }
  if (!context) std::printf("  vulkan: not run (%s)\n", vulkanError.c_str());
  if (!validationClean(context.get())) return kExitFailed;
  if (failures > 0) {
    std::printf("compare: %d backend(s) differ from cpu-scalar\n", failures);
    return kExitFailed;
  }
  std::printf("compare: every backend run agrees with cpu-scalar bit for bit\n");
  return kExitOk;
}

}  // namespace vkc::tool
