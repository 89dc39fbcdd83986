// Mesh intersection benchmark (include/vkcollide/mesh_intersection.h: the intersecting triangle pairs
// and the collision manifold, their curves): a surface mesh against a moved copy of itself, per CPU
// backend and thread count, with CGAL's surface_intersection (Debian libcgal-dev, where CMake finds
// it: the same polylines, exact predicates) on the same pair in the same run as the per-core anchor.
//
// The mesh: Spot (../shared/meshes/spot.obj beside the repository, bench_meshes.h) subdivided 1-to-4
// `level` times (about 23k, 92k, 369k, 1.5M triangles). The pair: the mesh (A) and a copy (B)
// turned by 30 degrees about y and moved by a quarter of the mesh's box along x (--shift), so that
// their surfaces cross along long closed curves (--shift 0.9: two bodies that touch). The timed call is one intersectMeshes call (B's BVH built
// inside it); CGAL's row times surface_intersection on its Surface_mesh copies built beforehand
// (their construction not timed), one thread. "ours/CGAL" is CGAL's time over ours (> 1: ours is
// faster). cpu-simd and the threaded rows are checked bitwise equal to cpu-scalar; CGAL's polylines'
// counts are noted where they differ from ours (segments shorter than their band are touching points
// to us, two points to CGAL). Vulkan is not a backend of this query (the row says why).
// Prints a table and writes JSON; see --help.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#ifdef VKC_HAVE_CGAL
#include <CGAL/Polygon_mesh_processing/intersection.h>

#include "../tests/support/cgal_mesh.h"
#endif

#include "bench_common.h"
#include "bench_meshes.h"
#include "vkcollide/vkcollide.h"

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_mesh_intersection.json", 5) {}
  std::vector<uint32_t> levels = {0, 1, 2, 3};
  std::string mesh;  // --mesh PATH (default: spot.obj)
  uint32_t threads = 0;  // --threads N (0: the hardware's)
  float shift = 0.25f;   // --shift F: the copy moved by F times the mesh's box along x
  bool cgal = true;
  bool threadTime = false;
  double rowBudgetS = 20;
};

void usage(std::FILE* f) {
  std::fprintf(
      f,
      "usage: bench_mesh_intersection [options]\n"
      "  --levels A,B,..     1-to-4 subdivision levels of the mesh (default 0,1,2,3)\n"
      "  --mesh PATH         OBJ mesh (default: spot.obj beside the repository)\n"
      "  --threads N         the threaded rows' thread count (default: the hardware's; 1: no threaded rows)\n"
      "  --shift F           the copy moved by F times the mesh's box along x (default 0.25: long curves; 0.9:\n"
      "                      two bodies that touch, a small part of each near the other)\n"
      "  --no-cgal           no CGAL rows\n"
      "  --thread-time       time with the calling thread's CPU time (one-thread rows), not the wall clock\n"
      "  --row-budget S      seconds per row at most (default 20; fewer reps when slower)\n"
      "  --reps R            timed repetitions per row, median reported (default 5)\n"
      "  --quick             level 0 only, 3 reps (smoke test)\n"
      "  --json PATH         write results as JSON (default bench_mesh_intersection.json)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args("bench_mesh_intersection", argc, argv);
  uint32_t budget = 20;
  const bool parsed = parseCommonOptions(args, o, usage, [&] {
    if (args.is("--no-cgal")) return setFlag(o.cgal, false);
    if (args.is("--thread-time")) return setFlag(o.threadTime, true);
    if (args.is("--mesh")) return taken(args.text(o.mesh));
    if (args.is("--shift")) {
      std::string v;
      if (!args.text(v)) return Parsed::kBad;
      char* end = nullptr;
      o.shift = std::strtof(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(o.shift >= 0.0f && o.shift <= 2.0f)) {
        std::fprintf(stderr, "bench_mesh_intersection: --shift wants a number from 0 to 2\n");
        return Parsed::kBad;
      }
      return Parsed::kTaken;
    }
    if (args.is("--levels")) return levelsOption(args, o.levels);
    return numberOption(args, {{"--row-budget", &budget}, {"--threads", &o.threads}});
  });
  if (!parsed) return std::nullopt;
  o.rowBudgetS = budget;
  if (o.quick) {
    o.levels = {0};
    if (!o.repsGiven) o.reps = 3;
  }
  if (o.reps == 0) {
    std::fprintf(stderr, "bench_mesh_intersection: --reps must be >= 1\n");
    return std::nullopt;
  }
  if (o.threads == 0) o.threads = CpuExecutor::hardwareThreads();
  return o;
}

struct Row {
  uint32_t level = 0, triangles = 0;
  std::string backend;
  double ms = -1;  // < 0: not run (note says why)
  uint32_t reps = 0;
  size_t pairs = 0, curves = 0, points = 0;
  double vsCgal = 0;
  std::string note;
};

void printRow(const Row& r) {
  char ms[32] = "-", ratio[32] = "-";
  if (r.ms >= 0) std::snprintf(ms, sizeof ms, "%.3f", r.ms);
  if (r.vsCgal > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", r.vsCgal);
  std::printf("%5u %9u  %-14s %11s %8zu %6zu %7zu %9s  %s\n", r.level, r.triangles, r.backend.c_str(), ms, r.pairs,
              r.curves, r.points, ratio, r.note.c_str());
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  using namespace vkc;
  using namespace vkc::bench;
  const std::optional<Options> parsed = parseOptions(argc, argv);
  if (!parsed) return 2;
  const Options& o = *parsed;
  std::string meshPath = o.mesh;
  Mesh base;
  if (!loadBenchMesh(meshPath, base, "bench_mesh_intersection")) return 1;
  Result<CpuExecutor> pool = CpuExecutor::create(std::max(o.threads, 1u));
  if (!pool) {
    std::fprintf(stderr, "bench_mesh_intersection: %s\n", pool.message().c_str());
    return 1;
  }
#ifdef VKC_HAVE_CGAL
  const bool cgal = o.cgal;
#else
  const bool cgal = false;
#endif
  std::printf("mesh intersection: %s against a copy turned 30 degrees about y and moved by %.2f of its width; %s; CPU %s "
              "(SIMD target %s); CGAL %s; %u threads in the threaded rows\n",
              meshPath.c_str(), static_cast<double>(o.shift), o.threadTime ? "one-thread rows in thread CPU time" : "wall clock", cpuModel().c_str(),
              cpu::simdTargetName(), cgal ? "surface_intersection, one thread" : "not built or --no-cgal", o.threads);
  std::printf("%5s %9s  %-14s %11s %8s %6s %7s %9s  %s\n", "level", "triangles", "backend", "ms/call", "pairs", "curves",
              "points", "ours/CGAL", "note");
  const double budgetMs = o.rowBudgetS * 1000.0;
  std::vector<Row> rows;
  bool disagree = false;
  Mesh mesh = base;
  uint32_t meshLevel = 0;
  for (const uint32_t level : o.levels) {
    if (level < meshLevel) mesh = base, meshLevel = 0;
    for (; meshLevel < level; ++meshLevel) mesh = subdivide(mesh);
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (const Float4& v : mesh.vertices) {
      const float c[3] = {v.x, v.y, v.z};
      for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], c[k]), hi[k] = std::max(hi[k], c[k]);
    }
    const float axis[3] = {0, 1, 0}, shift[3] = {o.shift * (hi[0] - lo[0]), 0, 0};
    const Mesh moved = rotatedAndMoved(mesh, axis, 0.5235988f, shift);
    const TriangleMeshView a{mesh.vertices, mesh.indices}, b{moved.vertices, moved.indices};
    std::vector<Row> levelRows;
    std::optional<MeshIntersection> reference;
    struct Variant {
      const char* name;
      Backend backend;
      bool threaded;
    };
    std::vector<Variant> variants = {{"cpu-scalar", Backend::kCpuScalar, false}, {"cpu-simd", Backend::kCpuSimd, false}};
    std::string threadedName = "cpu-simd x" + std::to_string(o.threads);
    if (o.threads > 1) variants.push_back({threadedName.c_str(), Backend::kCpuSimd, true});
    for (const Variant& v : variants) {
      Row row{level, mesh.triangles(), v.name};
      auto call = [&] {
        return v.threaded ? intersectMeshes(a, b, v.backend, *pool) : intersectMeshes(a, b, v.backend);
      };
      Result<MeshIntersection> first = call();
      if (!first) {
        row.note = "failed: " + first.message();
        disagree = true;
        levelRows.push_back(row);
        continue;
      }
      row.pairs = first->pairs.size();
      row.curves = first->curves.size();
      row.points = first->curvePoints.size();
      const WallSamples w = sampleWall([&] { (void)call(); }, o.reps, 1, 0.0, budgetMs, 1,
                                       o.threadTime && !v.threaded ? threadMs : nowMs);
      row.ms = median(w.ms);
      row.reps = static_cast<uint32_t>(w.ms.size());
      if (!reference) {
        reference = std::move(first.value());
        row.note = std::string("shape ") + toString(reference->shape);
      } else if (const std::string d = firstBitwiseDifference(*first, *reference); d.empty()) {
        row.note = "bitwise equal to cpu-scalar";
      } else {
        row.note = "DIFFERS from cpu-scalar: " + d;
        disagree = true;
      }
      levelRows.push_back(row);
    }
    Row vulkan{level, mesh.triangles(), "vulkan"};
    Result<MeshIntersection> refused = intersectMeshes(a, b, Backend::kVulkan);
    vulkan.note = refused ? "ran (unexpected)" : "skipped: " + refused.message();
    levelRows.push_back(vulkan);
    double cgalMs = 0;
#ifdef VKC_HAVE_CGAL
    if (cgal) {
      using K = test::CgalKernel;
      const test::CgalSurfaceMesh ca = test::toCgalSurfaceMesh(mesh), cb = test::toCgalSurfaceMesh(moved);
      Row row{level, mesh.triangles(), "cgal"};
      std::vector<std::vector<K::Point_3>> lines;
      auto call = [&] {
        lines.clear();
        CGAL::Polygon_mesh_processing::surface_intersection(ca, cb, std::back_inserter(lines));
      };
      const WallSamples w = sampleWall(call, o.reps, 1, 0.0, budgetMs, 1, o.threadTime ? threadMs : nowMs);
      row.ms = cgalMs = median(w.ms);
      row.reps = static_cast<uint32_t>(w.ms.size());
      row.curves = lines.size();
      for (const auto& l : lines) row.points += l.size() - (l.size() > 1 && l.front() == l.back() ? 1 : 0);
      // Not a disagreement when the counts differ: segments shorter than their band are touching points
      // to us (a curve passing within ~1e-5 of a vertex), two points to CGAL (tests/mesh_pairs checks
      // the curves point by point on Spot).
      row.note = "surface_intersection polylines";
      if (reference && (row.curves != reference->curves.size() || row.points != reference->curvePoints.size()))
        row.note += " (ours: " + std::to_string(reference->curves.size()) + " curves, " +
                    std::to_string(reference->curvePoints.size()) + " points, " +
                    std::to_string(reference->touchingPoints.size()) + " touching points)";
      levelRows.push_back(row);
    }
#endif
    for (Row& r : levelRows) {
      if (cgalMs > 0 && r.ms > 0 && r.backend != "cgal") r.vsCgal = cgalMs / r.ms;
      printRow(r);
      rows.push_back(r);
    }
  }
  std::string s = "{\n  \"benchmark\": \"bench_mesh_intersection\",\n  \"date\": " + jsonString(utcDate()) + ",\n";
  s += jsonHostFields();
  s += "  \"mesh\": " + jsonString(meshPath) + ",\n";
  s += "  \"cgal\": " + std::string(cgal ? "true" : "false") + ",\n";
  s += "  \"threads\": " + std::to_string(o.threads) + ",\n";
  s += "  \"shift\": " + jsonNumber(o.shift) + ",\n";
  s += "  \"reps\": " + std::to_string(o.reps) + ",\n";
  s += "  \"cpu_time\": " + jsonString(o.threadTime ? "thread CPU time (one-thread rows)" : "wall clock") + ",\n";
  s += jsonRowsAndEnd(rows, [&](const Row& r) {
    std::string m = "\"level\": " + std::to_string(r.level) + ", \"triangles\": " + std::to_string(r.triangles) +
                    ", \"backend\": " + jsonString(r.backend);
    if (r.ms >= 0) {
      m += ", \"ms\": " + jsonNumber(r.ms) + ", \"reps\": " + std::to_string(r.reps) +
           ", \"pairs\": " + std::to_string(r.pairs) + ", \"curves\": " + std::to_string(r.curves) +
           ", \"points\": " + std::to_string(r.points);
      if (r.vsCgal > 0) m += ", \"vs_cgal\": " + jsonNumber(r.vsCgal);
    }
    return m + ", \"note\": " + jsonString(r.note);
  });
  return finishResults("bench_mesh_intersection", o.json, s, disagree);
}
