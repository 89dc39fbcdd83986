// BVH benchmark: build and refit of the BVH stage for 10k ... 4M triangles of the Spot mesh
// (../shared/meshes/spot.obj, subdivided 1-to-4 until large enough, then an evenly strided subset of
// its triangles), on the CPU (scalar, SIMD; wall clock, validation included) and on a Vulkan device
// (GPU timestamps of the passes, summed), and the tree's SAH cost next to a top-down binned SAH build
// of the same boxes (tests/support/bvh_sah_builder.h), and the build's CLIMB pass's atomics counted by
// its model (cpu::modelBvhClimb). Every backend's nodes are compared with the scalar reference, byte
// for byte. Prints a table and writes JSON. See `bench_bvh --help`.
//
// CPU anchor (built only where CMake finds Intel Embree, Debian libembree-dev): Embree's own BVH build
// of the same triangles (rtcCommitScene of a scene with one triangle geometry sharing our buffers,
// device "threads=1"), at RTC_BUILD_QUALITY_LOW (its Morton builder, the LBVH's kind) and MEDIUM
// (its default binned SAH builder). Build only: Embree's BVH is its own layout, not ours.
//
// Refit: the vertices move by a smooth displacement (a deforming mesh) and the boxes are swept
// (previous = the build's positions).
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef VKC_HAVE_EMBREE
#include <embree3/rtcore.h>
#endif

#include "../tests/support/bvh_sah_builder.h"
#include "bench_common.h"
#include "bench_meshes.h"
#include "cpu/bounds.h"
#include "cpu/bvh.h"
#include "shared/bvh.h"
#include "vkcollide/vkcollide.h"

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_bvh.json", 7) {}
  std::string obj;  // empty: spot.obj from ../shared/meshes (or ../../shared/meshes) beside the repository
  std::vector<uint32_t> sizes = {10'000, 100'000, 1'000'000, 4'000'000};
  uint32_t sahMax = 1'000'000;  // top-down SAH builds up to this many triangles
};

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: bench_bvh [options]\n"
               "  --device SEL     Vulkan device: index or name substring (default: VKC_DEVICE, else first GPU)\n"
               "  --obj PATH       mesh to subdivide (default: spot.obj in ../shared/meshes or ../../shared/meshes\n"
               "                   beside the repository; if neither exists, a sphere made from an octahedron)\n"
               "  --sizes A,B,...  triangle counts (default 10000,100000,1000000,4000000)\n"
               "  --sah-max N      top-down SAH comparison up to N triangles (default 1000000)\n"
               "  --reps R         timed repetitions per measurement, median reported (default 7)\n"
               "  --quick          10000 and 40000 triangles, 3 reps (smoke test)\n"
               "  --json PATH      write results as JSON (default bench_bvh.json)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args("bench_bvh", argc, argv);
  const bool parsed = parseCommonOptions(args, o, usage, [&] {
    if (args.is("--obj")) return taken(args.text(o.obj));
    if (args.is("--sizes")) {
      std::string list;
      if (!args.text(list)) return Parsed::kBad;
      o.sizes.clear();
      std::stringstream ss(list);
      for (std::string item; std::getline(ss, item, ',');) {
        uint32_t v = 0;
        if (!parseUint(item.c_str(), v) || v == 0) {
          std::fprintf(stderr, "bench_bvh: --sizes: '%s' is not a positive integer\n", item.c_str());
          return Parsed::kBad;
        }
        o.sizes.push_back(v);
      }
      return taken(!o.sizes.empty());
    }
    return numberOption(args, {{"--sah-max", &o.sahMax}});
  });
  if (!parsed) return std::nullopt;
  if (o.quick) {
    o.sizes = {10'000, 40'000};
    if (!o.repsGiven) o.reps = 3;
  }
  if (o.reps == 0) {
    std::fprintf(stderr, "bench_bvh: --reps must be >= 1\n");
    return std::nullopt;
  }
  return o;
}

struct Tree {
  std::vector<BvhNode> nodes;
  std::vector<Aabb> boxes;
  std::vector<uint32_t> parents;
  explicit Tree(uint32_t n) : nodes(bvhNodeCount(n)), boxes(n), parents(n) {}
  BvhInput input(const std::vector<Float4>& v, const std::vector<Float4>& prev, const std::vector<uint32_t>& idx) {
    return BvhInput{v, prev, idx, 3, nodes, boxes, parents};
  }
  bool operator==(const Tree& o) const {
    return std::memcmp(nodes.data(), o.nodes.data(), nodes.size() * sizeof(BvhNode)) == 0 &&
           std::memcmp(boxes.data(), o.boxes.data(), boxes.size() * sizeof(Aabb)) == 0 && parents == o.parents;
  }
};

struct Row {
  uint32_t n = 0;
  std::string backend;
  double buildMs = 0, refitMs = 0;
  uint32_t reps = 0;
  std::vector<PassTiming> buildPasses;  // vulkan: median per pass
  std::optional<RecordStats> buildStats, refitStats;  // vulkan: what one build / refit record holds
  std::string note;
};

struct SahRow {
  uint32_t n = 0;
  double lbvh = 0, topDown = 0, topDownMs = 0;
};

// The build's CLIMB pass: its atomics counted by the pass's model (cpu::modelBvhClimb) over the
// reference tree, against a climb per leaf (the refit's).
struct ClimbRow {
  uint32_t n = 0;
  cpu::BvhClimbAtomics atomics;
};

constexpr double kCellBudgetMs = 4000;

#ifdef VKC_HAVE_EMBREE
// Median wall time of Embree building its BVH over `mesh` (one thread), at `quality`.
double embreeBuildMs(RTCDevice device, const Mesh& mesh, RTCBuildQuality quality, uint32_t reps) {
  std::vector<double> ms;
  for (uint32_t r = 0; r < reps + 1; ++r) {
    RTCScene scene = rtcNewScene(device);
    rtcSetSceneBuildQuality(scene, quality);
    RTCGeometry geom = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
    // Float4 stride: every vertex can be read as 16 bytes, as Embree's shared buffers require.
    rtcSetSharedGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, mesh.vertices.data(), 0,
                               sizeof(Float4), mesh.vertices.size());
    rtcSetSharedGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, mesh.indices.data(), 0,
                               3 * sizeof(uint32_t), mesh.triangles());
    rtcSetGeometryBuildQuality(geom, quality);
    rtcCommitGeometry(geom);
    rtcAttachGeometry(scene, geom);
    rtcReleaseGeometry(geom);
    const double t0 = nowMs();
    rtcCommitScene(scene);
    if (r > 0) ms.push_back(nowMs() - t0);  // the first is a warm-up
    rtcReleaseScene(scene);
  }
  return median(ms);
}
#endif

void printRow(const Row& r) {
  char refit[32] = "-";
  if (std::isfinite(r.refitMs)) std::snprintf(refit, sizeof refit, "%.3f", r.refitMs);
  std::printf("%10u  %-13s %12.3f %12s %5u  %s\n", r.n, r.backend.c_str(), r.buildMs, refit, r.reps, r.note.c_str());
  std::fflush(stdout);
}

// The median over the reps of the sum of a run's pass times, and the median of each pass.
struct GpuTimes {
  double totalMs = 0;
  std::vector<PassTiming> passes;
};

template <class Fn>
std::optional<GpuTimes> gpuTimes(uint32_t reps, Fn&& runOnce, const std::vector<PassTiming>& timings) {
  std::vector<double> total;
  std::vector<std::vector<double>> perPass;
  for (uint32_t i = 0; i < reps + 1; ++i) {
    if (!runOnce()) return std::nullopt;
    if (i == 0) continue;  // warm-up
    double sum = 0;
    perPass.resize(timings.size());
    for (size_t p = 0; p < timings.size(); ++p) {
      sum += timings[p].ns;
      perPass[p].push_back(timings[p].ns);
    }
    total.push_back(sum * 1e-6);
  }
  GpuTimes g;
  g.totalMs = median(total);
  for (size_t p = 0; p < perPass.size(); ++p) g.passes.push_back({timings[p].name, median(perPass[p])});
  return g;
}

bool writeJson(const Options& o, const DeviceInfo* dev, const std::string& date, const std::vector<Row>& rows,
               const std::vector<SahRow>& sah, const std::vector<ClimbRow>& climb) {
  std::string s = "{\n  \"benchmark\": \"bvh\",\n";
  if (dev != nullptr) s += jsonDeviceFields(*dev);
  s += jsonHostFields();
  s += "  \"date\": " + jsonString(date) + ",\n";
  s += "  \"options\": {\"obj\": " + jsonString(o.obj) + ", \"reps\": " + std::to_string(o.reps) +
       ", \"sah_max\": " + std::to_string(o.sahMax) + ", \"quick\": " + (o.quick ? "true" : "false") + "},\n";
  s += "  \"notes\": \"triangles of the OBJ mesh subdivided 1-to-4, strided subset; cpu times wall clock of "
       "buildBvhCpu / refitBvhCpu including input validation; vulkan times GPU timestamps summed over the passes "
       "(upload and readback excluded); refit with swept boxes after a smooth displacement; sah = bvhSahCost "
       "(Ct = Ci = 1) of the LBVH and of a top-down binned SAH build (16 bins, 3 axes) of the same boxes\",\n";
  s += "  \"sah\": [\n";
  for (size_t i = 0; i < sah.size(); ++i) {
    s += "    {\"n\": " + std::to_string(sah[i].n) + ", \"lbvh\": " + jsonNumber(sah[i].lbvh) +
         ", \"top_down\": " + jsonNumber(sah[i].topDown) + ", \"ratio\": " + jsonNumber(sah[i].lbvh / sah[i].topDown) +
         ", \"top_down_build_ms\": " + jsonNumber(sah[i].topDownMs) + (i + 1 < sah.size() ? "},\n" : "}\n");
  }
  s += "  ],\n";
  // Atomics of the build's climb: *_bound 6 per node climbed through, *_issued with the early stop,
  // the climbs in lockstep (cpu::modelBvhClimb); stores: nodes stored from shared memory.
  s += "  \"climb_atomics\": [\n";
  for (size_t i = 0; i < climb.size(); ++i) {
    const cpu::BvhClimbAtomics& a = climb[i].atomics;
    s += "    {\"n\": " + std::to_string(climb[i].n) + ", \"workgroup_size\": " + std::to_string(gpu::kBvhGroupSize) +
         ", \"per_leaf_bound\": " + std::to_string(a.leafBound) + ", \"per_leaf_issued\": " +
         std::to_string(a.leafIssued) + ", \"workgroup_bound\": " + std::to_string(a.groupBound) +
         ", \"workgroup_issued\": " + std::to_string(a.groupIssued) + ", \"workgroup_stores\": " +
         std::to_string(a.groupStores) + (i + 1 < climb.size() ? "},\n" : "}\n");
  }
  s += "  ],\n";
  s += jsonRowsAndEnd(rows, [&](const Row& r) {
    std::string m = "\"n\": " + std::to_string(r.n) + ", \"backend\": " + jsonString(r.backend) +
                    ", \"build_ms\": " + jsonNumber(r.buildMs) + ", \"refit_ms\": " + jsonNumber(r.refitMs) +
                    ", \"reps\": " + std::to_string(r.reps);
    if (!r.buildPasses.empty()) m += ", \"build_passes_median_ms\": " + jsonPassMsObject(r.buildPasses, true);
    if (r.buildStats) m += ", \"build\": {" + jsonRecordStatsMembers(*r.buildStats) + "}";
    if (r.refitStats) m += ", \"refit\": {" + jsonRecordStatsMembers(*r.refitStats) + "}";
    if (!r.note.empty()) m += ", \"note\": " + jsonString(r.note);
    return m;
  });
  return writeTextFile(o.json, s);
}

int runBench(Options o) {
  Mesh base;
  if (!loadBenchMesh(o.obj, base, "bench_bvh")) return 1;
  const std::unique_ptr<Context> owner = createContext("bench_bvh", o.device);
  if (!owner) return 1;
  Context& context = *owner;
  const DeviceInfo& dev = context.deviceInfo();
  const bool timestamps = dev.timestampPeriodNs > 0;
  const std::string date = utcDate();
  std::printf("bench_bvh: device '%s' (%s %s), Vulkan %s; CPU '%s', SIMD target %s; %s\n", dev.name.c_str(),
              dev.driverName.c_str(), dev.driverInfo.c_str(), apiVersionString(dev.apiVersion).c_str(),
              cpuModel().c_str(), cpu::simdTargetName(), date.c_str());
  std::printf("bench_bvh: mesh %s (%u triangles), reps %u\n\n", o.obj.c_str(), base.triangles(), o.reps);
  if (!timestamps) std::printf("bench_bvh: the device's queue has no timestamps: Vulkan rows are skipped\n");

#ifdef VKC_HAVE_EMBREE
  RTCDevice embree = rtcNewDevice("threads=1");
  if (embree == nullptr) {
    std::fprintf(stderr, "bench_bvh: rtcNewDevice failed\n");
    return 1;
  }
  std::printf("bench_bvh: Embree %d.%d.%d rows (one thread)\n", RTC_VERSION_MAJOR, RTC_VERSION_MINOR,
              RTC_VERSION_PATCH);
#endif
  std::vector<Mesh> levels{base};
  std::vector<Row> rows;
  std::vector<SahRow> sah;
  std::vector<ClimbRow> climb;
  bool mismatch = false;
  std::printf("%10s  %-13s %12s %12s %5s  %s\n", "triangles", "backend", "build_ms", "refit_ms", "reps", "note");
  for (const uint32_t n : o.sizes) {
    while (levels.back().triangles() < n) levels.push_back(subdivide(levels.back()));
    size_t level = 0;
    while (levels[level].triangles() < n) ++level;
    const Mesh mesh = strided(levels[level], n);
    std::vector<Float4> moved = mesh.vertices;
    for (Float4& v : moved) v = {v.x + 0.01f * std::sin(7.0f * v.y), v.y + 0.01f * std::cos(5.0f * v.z), v.z, 0};

    Tree reference(n), refitReference(n);
    if (!buildBvhCpu(reference.input(mesh.vertices, {}, mesh.indices), Backend::kCpuScalar).ok()) return 1;
    refitReference = reference;
    if (!refitBvhCpu(refitReference.input(moved, mesh.vertices, mesh.indices), Backend::kCpuScalar).ok()) return 1;

    for (const Backend b : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      Row r{n, toString(b)};
      Tree t(n);
      Status status;
      const WallSamples wb = sampleWall(
          [&] {
            if (const Status s = buildBvhCpu(t.input(mesh.vertices, {}, mesh.indices), b); !s) status = s;
          },
          o.reps, 1, 1.0, kCellBudgetMs, std::min(o.reps, 3u));
      if (!(t == reference)) mismatch = true, r.note += "BUILD DIFFERS ";
      const WallSamples wr = sampleWall(
          [&] {
            if (const Status s = refitBvhCpu(t.input(moved, mesh.vertices, mesh.indices), b); !s) status = s;
          },
          o.reps, 1, 1.0, kCellBudgetMs, std::min(o.reps, 3u));
      if (!(t == refitReference)) mismatch = true, r.note += "REFIT DIFFERS ";
      if (!status) {
        std::fprintf(stderr, "bench_bvh: %s: %s\n", toString(b), status.message().c_str());
        return 1;
      }
      r.buildMs = median(wb.ms);
      r.refitMs = median(wr.ms);
      r.reps = static_cast<uint32_t>(wb.ms.size());
      rows.push_back(r);
      printRow(r);
    }

#ifdef VKC_HAVE_EMBREE
    for (const auto& [quality, name] : {std::pair{RTC_BUILD_QUALITY_LOW, "embree-low"},
                                        std::pair{RTC_BUILD_QUALITY_MEDIUM, "embree-medium"}}) {
      Row r{n, name};
      r.buildMs = embreeBuildMs(embree, mesh, quality, o.reps);
      r.refitMs = std::nan("");
      r.reps = o.reps;
      r.note = quality == RTC_BUILD_QUALITY_LOW ? "Embree's Morton builder, 1 thread, its own layout"
                                                : "Embree's binned SAH builder, 1 thread, its own layout";
      rows.push_back(r);
      printRow(r);
    }
#endif

    if (timestamps) {
      Row r{n, "vulkan"};
      auto stage = BvhStage::create(context, {.maxPrimitives = n});
      if (!stage) {
        r.note = "skipped: " + stage.message();
        rows.push_back(r);
        printRow(r);
      } else {
        Tree t(n);
        Status status;
        auto build = gpuTimes(
            o.reps,
            [&] {
              status = (*stage)->run(t.input(mesh.vertices, {}, mesh.indices), BvhUpdate::kBuild);
              return status.ok();
            },
            (*stage)->timings());
        if (!build) {
          std::fprintf(stderr, "bench_bvh: vulkan build: %s\n", status.message().c_str());
          return 1;
        }
        r.buildStats = (*stage)->lastRecordStats();
        if (!(t == reference)) mismatch = true, r.note += "BUILD DIFFERS ";
        auto refit = gpuTimes(
            o.reps,
            [&] {
              status = (*stage)->run(t.input(moved, mesh.vertices, mesh.indices), BvhUpdate::kRefit);
              return status.ok();
            },
            (*stage)->timings());
        if (!refit) {
          std::fprintf(stderr, "bench_bvh: vulkan refit: %s\n", status.message().c_str());
          return 1;
        }
        r.refitStats = (*stage)->lastRecordStats();
        if (!(t == refitReference)) mismatch = true, r.note += "REFIT DIFFERS ";
        r.buildMs = build->totalMs;
        r.refitMs = refit->totalMs;
        r.reps = o.reps;
        r.buildPasses = build->passes;
        char buf[160];
        double sortMs = 0;
        for (const PassTiming& p : build->passes) {
          if (std::strncmp(p.name, "vkc.radix", 9) == 0) sortMs += p.ns * 1e-6;
        }
        std::snprintf(buf, sizeof buf, "sort %.3f ms of the build; build ", sortMs);
        r.note += buf + recordStatsNote(*r.buildStats) + "; refit " + recordStatsNote(*r.refitStats);
        rows.push_back(r);
        printRow(r);
      }
    }

    {
      Tree t(n);
      auto a = cpu::modelBvhClimb(t.input(mesh.vertices, {}, mesh.indices), gpu::kBvhGroupSize);
      if (!a.ok() || !a->leafExact || !a->groupExact) {
        std::fprintf(stderr, "bench_bvh: the climb model failed or is not exact at %u triangles\n", n);
        return 1;
      }
      climb.push_back({n, *a});
      std::printf("%10u  climb atomics per leaf: %.2f (bound %.2f), %.1f%% of the nodes stored; a climb per leaf %.2f "
                  "(bound %.2f)\n",
                  n, double(a->groupIssued) / n, double(a->groupBound) / n, 100.0 * double(a->groupStores) / bvhNodeCount(n),
                  double(a->leafIssued) / n, double(a->leafBound) / n);
    }

    if (n <= o.sahMax) {
      SahRow s{n};
      const double t0 = nowMs();
      const std::vector<BvhNode> topDown = test::buildTopDownSah(reference.boxes);
      s.topDownMs = nowMs() - t0;
      s.lbvh = bvhSahCost(reference.nodes, reference.boxes);
      s.topDown = bvhSahCost(topDown, reference.boxes);
      sah.push_back(s);
      std::printf("%10u  SAH cost: LBVH %.2f, top-down binned SAH %.2f (ratio %.3f; top-down build %.1f ms)\n", n,
                  s.lbvh, s.topDown, s.lbvh / s.topDown, s.topDownMs);
    }
  }
#ifdef VKC_HAVE_EMBREE
  rtcReleaseDevice(embree);
#endif
  if (!reportWritten("bench_bvh", o.json, writeJson(o, &dev, date, rows, sah, climb))) return 1;
  if (mismatch) {
    std::fprintf(stderr, "bench_bvh: some backend's tree differs from cpu-scalar (see the notes)\n");
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
