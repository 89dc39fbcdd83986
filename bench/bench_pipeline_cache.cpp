// Pipeline cache benchmark: what ContextCreateInfo::pipelineCacheData saves at load time. Per round, a
// context with an empty cache ("cold") creates the geometry query stage and all its families'
// pipelines (GeometryQueryStage::create + createPipelines(kGeometryQueryFamiliesAll): the library's
// largest set of pipelines; --quick: the basic family's), and its Context::pipelineCacheData() is kept; then
// a second context seeded with that data ("warm") does the same. Wall clock of create + createPipelines per
// context, medians over the rounds, the cache's size and whether the driver took it
// (Context::pipelineCacheDataUsed). --per-family adds a row per family (its pipelines alone, in
// contexts of their own), --families LIST gives only the listed families' rows: which family's
// pipelines cost the most to create. Prints a table and writes JSON. See --help.
//
// Drivers differ in what they keep: Mesa's lavapipe 22.3 writes only the cache's 32-byte header and
// keeps compiled shaders in its own disk cache (MESA_SHADER_CACHE_DISABLE=true for a cold driver), so
// there the two rows measure the same work; NVIDIA's driver keeps the compiled pipelines in the data.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench_common.h"
#include "vkcollide/vkcollide.h"

namespace vkc::bench {
namespace {

constexpr const char* kProg = "bench_pipeline_cache";

struct Options : CommonOptions {
  Options() : CommonOptions("bench_pipeline_cache.json", 5) {}
  bool perFamily = false;  // --per-family: a row per family besides the set's
  std::string families;    // --families LIST: a row per listed family only
};

void usage(std::FILE* f) {
  std::fprintf(
      f,
      "usage: bench_pipeline_cache [options]\n"
      "  --device SEL        Vulkan device: index or name substring (default: VKC_DEVICE, else first GPU)\n"
      "  --reps R            rounds (a cold and a warm context each), median reported (default 5)\n"
      "  --exact-arithmetic  contexts with exact arithmetic (ContextCreateInfo::exactArithmetic)\n"
      "  --quick             1 round, the basic family's pipelines only (smoke test)\n"
      "  --per-family        also a row per family (its pipelines alone, each in its own contexts)\n"
      "  --families LIST     only a row per listed family (comma-separated: basic, manifold, convex,\n"
      "                      implicit, continuous, mesh, mesh-mesh, mesh-continuous)\n"
      "  --json PATH         write results as JSON (default bench_pipeline_cache.json)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args(kProg, argc, argv);
  if (!parseCommonOptions(args, o, usage, [&] {
        if (args.is("--families")) return args.text(o.families) ? Parsed::kTaken : Parsed::kBad;
        if (!args.is("--per-family")) return Parsed::kUnknown;
        o.perFamily = true;
        return Parsed::kTaken;
      }))
    return std::nullopt;
  if (o.quick && !o.repsGiven) o.reps = 1;
  if (o.reps == 0) {
    std::fprintf(stderr, "%s: need --reps >= 1\n", kProg);
    return std::nullopt;
  }
  return o;
}

// A row's set of families: every family (--quick: the basic one: lavapipe takes tens of seconds for them
// all), and with --per-family each family alone.
struct FamilySet {
  const char* name;
  uint32_t bits;
};
constexpr FamilySet kEachFamily[] = {
    {"basic", kGeometryQueryFamilyBasic},           {"manifold", kGeometryQueryFamilyManifold},
    {"convex", kGeometryQueryFamilyConvex},         {"implicit", kGeometryQueryFamilyImplicit},
    {"continuous", kGeometryQueryFamilyContinuous}, {"mesh", kGeometryQueryFamilyMesh},
    {"mesh-mesh", kGeometryQueryFamilyMeshMesh},    {"mesh-continuous", kGeometryQueryFamilyMeshContinuous}};

// The rows' sets; empty (after a message) for an unknown name in --families.
std::vector<FamilySet> familySets(const Options& o) {
  std::vector<FamilySet> sets;
  if (!o.families.empty()) {
    std::string rest = o.families;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string name = rest.substr(0, comma);
      rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
      const FamilySet* found = nullptr;
      for (const FamilySet& f : kEachFamily) {
        if (name == f.name) found = &f;
      }
      if (found == nullptr) {
        std::fprintf(stderr, "%s: --families: unknown family '%s'\n", kProg, name.c_str());
        return {};
      }
      sets.push_back(*found);
    }
    return sets;
  }
  sets.push_back(o.quick ? FamilySet{"basic", kGeometryQueryFamilyBasic}
                         : FamilySet{"all", kGeometryQueryFamiliesAll});
  if (!o.perFamily) return sets;
  for (const FamilySet& f : kEachFamily) {
    if (f.bits != sets[0].bits) sets.push_back(f);
  }
  return sets;
}

struct Sample {
  double ms = 0;                   // GeometryQueryStage::create + createPipelines(families)
  std::vector<uint8_t> cacheData;  // the context's pipelineCacheData() afterwards
  bool used = false;               // the context took its seed (pipelineCacheDataUsed)
  std::string deviceFields;        // its device, for the JSON (jsonDeviceFields) and the header (deviceLine)
  std::string deviceLine;
};

// One context (seeded with `seed`; empty: an empty cache) making the stage and all its pipelines.
std::optional<Sample> measure(const Options& o, uint32_t families, std::span<const uint8_t> seed) {
  std::unique_ptr<Context> ctx = createContext(kProg, o.device, o.exactArithmetic, seed);
  if (!ctx) return std::nullopt;
  Sample s;
  s.used = ctx->pipelineCacheDataUsed();
  s.deviceFields = jsonDeviceFields(*ctx);
  s.deviceLine = deviceLine(*ctx);
  const double t0 = nowMs();
  auto stage = GeometryQueryStage::create(
      *ctx,
      {.maxQueries = 1024, .maxGeometries = 2048, .maxPoints = 4096, .maxContacts = 8192, .maxSlots = 16384});
  if (!stage) {
    std::fprintf(stderr, "%s: GeometryQueryStage::create: %s\n", kProg, stage.message().c_str());
    return std::nullopt;
  }
  if (Status st = (*stage)->createPipelines(families); !st) {
    std::fprintf(stderr, "%s: createPipelines: %s\n", kProg, st.message().c_str());
    return std::nullopt;
  }
  s.ms = nowMs() - t0;
  auto data = ctx->pipelineCacheData();
  if (!data) {
    std::fprintf(stderr, "%s: pipelineCacheData: %s\n", kProg, data.message().c_str());
    return std::nullopt;
  }
  s.cacheData = std::move(*data);
  return s;
}

struct Row {
  FamilySet set;
  double coldMs = 0, warmMs = 0;
  size_t cacheBytes = 0;
  bool allUsed = true;
};

int runBench(const Options& o) {
  std::vector<Row> rows;
  std::string deviceFields, device;
  const std::vector<FamilySet> sets = familySets(o);
  if (sets.empty()) return 2;
  for (const FamilySet& set : sets) {
    Row row{set};
    std::vector<double> cold, warm;
    for (uint32_t r = 0; r < o.reps; ++r) {
      const std::optional<Sample> c = measure(o, set.bits, {});
      if (!c) return 1;
      const std::optional<Sample> w = measure(o, set.bits, c->cacheData);
      if (!w) return 1;
      cold.push_back(c->ms);
      warm.push_back(w->ms);
      row.cacheBytes = c->cacheData.size();
      row.allUsed = row.allUsed && w->used;
      deviceFields = c->deviceFields;
      device = c->deviceLine;
    }
    row.coldMs = median(cold);
    row.warmMs = median(warm);
    rows.push_back(row);
  }
  std::printf("%s: %s; %u rounds\n\n", kProg, device.c_str(), o.reps);
  std::printf("%-64s %12s %12s %8s %12s %10s\n", "what", "cold ms", "warm ms", "ratio", "cache bytes",
              "seed used");
  for (const Row& row : rows) {
    const std::string what = std::string("GeometryQueryStage create + createPipelines(") + row.set.name + ")";
    std::printf("%-64s %12.1f %12.1f %7.2fx %12zu %10s\n", what.c_str(), row.coldMs, row.warmMs,
                row.warmMs > 0 ? row.coldMs / row.warmMs : 0.0, row.cacheBytes, row.allUsed ? "yes" : "no");
  }
  std::string json = "{\n  \"benchmark\": \"pipeline_cache\",\n  \"date\": " + jsonString(utcDate()) + ",\n";
  json += deviceFields + jsonHostFields();
  json += "  \"reps\": " + std::to_string(o.reps) + ",\n";
  json += jsonRowsAndEnd(rows, [&](const Row& row) {
    return std::string("\"what\": \"geometry_query_stage_create_and_pipelines\", \"families\": \"") +
           row.set.name + "\", \"cold_ms\": " + jsonNumber(row.coldMs) +
           ", \"warm_ms\": " + jsonNumber(row.warmMs) +
           ", \"cache_bytes\": " + std::to_string(row.cacheBytes) +
           ", \"seed_used\": " + (row.allUsed ? "true" : "false");
  });
  return finishResults(kProg, o.json, json, false);
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  const auto o = vkc::bench::parseOptions(argc, argv);
  if (!o) return 2;
  return vkc::bench::runBench(*o);
}
