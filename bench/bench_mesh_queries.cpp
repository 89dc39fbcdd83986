// Mesh query benchmark (geometry_queries.h, the mesh rows of issue 17): a surface mesh against a moved
// copy of itself, per backend, with FCL's mesh-mesh collision (Debian libfcl-dev, where CMake finds it)
// on the same pair in the same run as the per-core anchor.
//
// The mesh: Spot (../shared/meshes/spot.obj beside the repository, bench_meshes.h) subdivided 1-to-4
// `level` times (about 23k, 92k, 369k, 1.5M triangles). The pair: the mesh (A) and a copy (B) turned
// by 30 degrees about y and shifted by a quarter of the mesh's box along x, so that their surfaces cross
// along long curves. One query, SurfaceMesh vs SurfaceMesh, static: its contacts are what
// docs/geometry-queries.md says of that pair; a backend that refuses the pair has a row saying why.
// The timed call is one queryGeometries call, output capacity as large as the contacts: the BVH of each
// mesh built inside the call (rows cpu-scalar, cpu-simd, vulkan), or kept between calls
// (GeometryQueryTrees built beforehand, as FCL's models: rows scalar+trees, simd+trees). Every
// backend's contacts are checked against cpu-scalar bit for bit. On Vulkan the call creates its stage,
// builds one device tree over both meshes' triangles and walks it per triangle of the first mesh for
// the candidate pairs (shaders/shared/geometry_queries_mesh_pairs.h), then evaluates those.
//
// Surface-sphere rows (the same levels): the mesh (A) against one sphere (B) centred at its first vertex,
// of radius a fifth of the mesh's box along x: one static SurfaceMesh vs Sphere query, one contact per
// touching triangle. Every backend runs it (on Vulkan one work item per triangle, no tree; on the CPU
// the BVH built inside the call).
//
// Surface-self rows (the same levels): mesh self collision, the pair's two meshes as one surface mesh
// (A's triangles, then B's) queried against itself (a == b): every pair of triangles sharing no vertex
// whose boxes overlap, one static SurfaceMesh vs SurfaceMesh query. Neither copy of Spot touches itself
// apart from its neighbours, so the contacts are those of the surface-surface row (the note says
// whether they are as many). "cells" counts both copies' triangles. Rows as the surface-surface
// ones (BVH built in the call, or kept), no FCL anchor (FCL has no self collision).
//
// Line-mesh rows (--segments): edge-edge continuous collision of a line mesh against itself (hair or
// rope: strands of 16 segments, 4 cm each, in a 1 m box per 10k segments, each strand moving by a
// random 1-3 cm over the step, thickness 1 mm), one kContinuous LineMesh vs LineMesh query (a == b)
// per call, the swept-box BVH built inside the call. FCL has no continuous segment query: no anchor.
//
// FCL: fcl::BVHModel<OBBRSS> of each mesh (built beforehand, not timed in the "fcl" row, timed in the
// "fcl+build" row), fcl::collide with a request for every contact (one per intersecting triangle pair,
// with its point and normal), one thread. "ours/FCL" is FCL's time over ours on the same pair (> 1:
// ours is faster), against the "fcl" row; the like-for-like comparison is simd+trees against fcl
// (both with their trees built beforehand).
// Prints a table and writes JSON; see --help.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#ifdef VKC_HAVE_FCL
#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/narrowphase/collision.h>
#endif

#include "bench_common.h"
#include "bench_meshes.h"
#include "bench_queries.h"
#include "vkcollide/vkcollide.h"

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_mesh_queries.json", 5) {}
  std::vector<uint32_t> levels = {0, 1, 2, 3};
  std::vector<uint32_t> segments = {10'000, 100'000, 1'000'000};  // line-mesh CCD rows
  std::string mesh;        // --mesh PATH (default: spot.obj)
  double rowBudgetS = 20;  // a row whose call is predicted longer than a quarter of this is skipped
  bool vulkan = true;
  bool fcl = true;
  bool threadTime = false;  // --thread-time: CPU and FCL rows timed by the thread's CPU time
  bool treesOnly = false;   // --trees-only: surface-surface and -self rows with kept trees, FCL's
  uint32_t passCandidates = 0;  // --vulkan-passes K: the vulkan rows' GPU time per pass, maxCandidates K
};

// Samples of one row: wall clock (sampleWall), or with --thread-time for a CPU or FCL row the
// thread's CPU time per call (threadMs, bench_common.h: the time waiting for a core on a shared
// machine left out), one warm-up call first.
template <class Fn>
WallSamples sampleRow(const Options& o, bool onCpu, double budgetMs, Fn&& fn) {
  if (!o.threadTime || !onCpu) return sampleWall(fn, o.reps, 1, 20.0, budgetMs, 3);
  WallSamples s;
  fn();
  for (uint32_t r = 0; r < o.reps; ++r) {
    const double c0 = threadMs();
    fn();
    s.ms.push_back(threadMs() - c0);
  }
  return s;
}

void usage(std::FILE* f) {
  std::fprintf(
      f,
      "usage: bench_mesh_queries [options]\n"
      "  --device SEL        Vulkan device: index or name substring (default: VKC_DEVICE, else first GPU)\n"
      "  --mesh PATH         OBJ mesh (default: spot.obj beside the repository)\n"
      "  --levels A,B,..     1-to-4 subdivision levels of the mesh (default 0,1,2,3)\n"
      "  --segments A,B,..   segments of the line-mesh CCD rows (default 10000,100000,1000000)\n"
      "  --row-budget S      seconds per row: a call predicted (from the level before) to take more than\n"
      "                      S/4 is skipped (default 20)\n"
      "  --no-vulkan         CPU and FCL rows only\n"
      "  --no-fcl            no FCL rows\n"
      "  --thread-time       time the CPU and FCL rows by the thread's CPU time, not wall clock\n"
      "  --trees-only        only the surface-surface and surface-self rows with kept trees (simd+trees\n"
      "                      checked against scalar+trees) and FCL's: no per-call, fcl+build, sphere or\n"
      "                      line rows\n"
      "  --reps R            timed repetitions per measurement, median reported (default 5)\n"
      "  --quick             a strided subset of 2000 triangles of the mesh, 2000 segments, 3 reps\n"
      "                      (smoke test)\n"
      "  --json PATH         write results as JSON (default bench_mesh_queries.json)\n"
      "  --vulkan-passes K   the vulkan rows also run the batch once on a GeometryQueryStage created with\n"
      "                      maxCandidates K and note its GPU time per pass (GeometryQueryStage::timings)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args("bench_mesh_queries", argc, argv);
  uint32_t budget = 20;
  const bool parsed = parseCommonOptions(args, o, usage, [&] {
    if (args.is("--no-vulkan")) return setFlag(o.vulkan, false);
    if (args.is("--no-fcl")) return setFlag(o.fcl, false);
    if (args.is("--thread-time")) return setFlag(o.threadTime, true);
    if (args.is("--trees-only")) return setFlag(o.treesOnly, true);
    if (args.is("--mesh")) return taken(args.text(o.mesh));
    if (args.is("--segments")) {
      std::string list;
      if (!args.text(list)) return Parsed::kBad;
      if (!parsePositiveList(list, o.segments)) {
        std::fprintf(stderr, "bench_mesh_queries: --segments wants positive integers A,B,...\n");
        return Parsed::kBad;
      }
      return Parsed::kTaken;
    }
    if (args.is("--levels")) return levelsOption(args, o.levels);
    return numberOption(args, {{"--row-budget", &budget}, {"--vulkan-passes", &o.passCandidates}});
  });
  if (!parsed) return std::nullopt;
  o.rowBudgetS = budget;
  if (o.quick) {
    o.levels = {0};
    o.segments = {2000};
    if (!o.repsGiven) o.reps = 3;
  }
  if (o.reps == 0) {
    std::fprintf(stderr, "bench_mesh_queries: --reps must be >= 1\n");
    return std::nullopt;
  }
  return o;
}

// ---- The pair ------------------------------------------------------------------------------------

// Mesh A's vertices then B's (A turned and shifted), A's triangles then B's, and the two geometries.
// (The line rows use the same struct: one line mesh, its previous positions, a continuous query.)
struct Pair {
  std::vector<Float4> points;
  std::vector<Float4> previous;  // continuous queries: the points' previous positions
  std::vector<uint32_t> cells;
  std::vector<Geometry> geometries;
  std::vector<GeometryQuery> queries;
  uint32_t triangles = 0;  // per mesh (mesh rows)
  GeometryQueryInput input() const {
    GeometryQueryInput in;
    in.geometries = geometries;
    in.points = points;
    in.previousPoints = previous;
    in.queries = queries;
    in.cells = cells;
    return in;
  }
};

Pair makePair(const Mesh& m) {
  Pair p;
  p.triangles = m.triangles();
  Float4 lo = m.vertices[0], hi = m.vertices[0];
  for (const Float4& v : m.vertices) {
    lo = {std::min(lo.x, v.x), std::min(lo.y, v.y), std::min(lo.z, v.z), 0};
    hi = {std::max(hi.x, v.x), std::max(hi.y, v.y), std::max(hi.z, v.z), 0};
  }
  const float shift = 0.25f * (hi.x - lo.x);
  const float c = std::cos(0.5235988f), s = std::sin(0.5235988f);
  const float cx = 0.5f * (lo.x + hi.x), cz = 0.5f * (lo.z + hi.z);
  const auto n = static_cast<uint32_t>(m.vertices.size());
  p.points = m.vertices;
  for (const Float4& v : m.vertices) {
    const float x = v.x - cx, z = v.z - cz;
    p.points.push_back({cx + c * x + s * z + shift, v.y, cz - s * x + c * z, 0});
  }
  p.cells = m.indices;
  p.cells.insert(p.cells.end(), m.indices.begin(), m.indices.end());  // relative to each mesh's first vertex
  p.geometries = {Geometry::surfaceMesh(0, n, 0, p.triangles),
                  Geometry::surfaceMesh(n, n, static_cast<uint32_t>(m.indices.size()), p.triangles)};
  p.queries = {GeometryQuery{0, 1, GeometryMethod::kStatic, 0}};
  return p;
}

// The pair's two meshes as one surface mesh (B's vertex numbers after A's), against itself.
Pair makeSelfPair(const Pair& pair) {
  Pair p;
  p.triangles = 2 * pair.triangles;
  p.points = pair.points;
  const Geometry& b = pair.geometries[1];
  const auto bEntry = static_cast<size_t>(b.p2.x);
  p.cells.assign(pair.cells.begin(), pair.cells.begin() + static_cast<ptrdiff_t>(bEntry));
  for (size_t k = bEntry; k < pair.cells.size(); ++k) p.cells.push_back(pair.cells[k] + b.first);
  p.geometries = {Geometry::surfaceMesh(0, static_cast<uint32_t>(p.points.size()), 0, p.triangles)};
  p.queries = {GeometryQuery{0, 0, GeometryMethod::kStatic, 0}};
  return p;
}

// The mesh against one sphere at its first vertex, radius a fifth of its box along x.
Pair makeSpherePair(const Mesh& m) {
  Pair p;
  p.triangles = m.triangles();
  float lo = m.vertices[0].x, hi = m.vertices[0].x;
  for (const Float4& v : m.vertices) {
    lo = std::min(lo, v.x);
    hi = std::max(hi, v.x);
  }
  const Float4 c = m.vertices[0];
  p.points = m.vertices;
  p.cells = m.indices;
  p.geometries = {Geometry::surfaceMesh(0, static_cast<uint32_t>(m.vertices.size()), 0, p.triangles),
                  Geometry::sphere({c.x, c.y, c.z, 0.2f * (hi - lo)})};
  p.queries = {GeometryQuery{0, 1, GeometryMethod::kStatic, 0}};
  return p;
}

// A line mesh of `segments` segments (strands of 16) moving over the step: the mesh twice in the
// query (a == b: its self collision), previous positions in `previous`.
Pair makeStrands(uint32_t segments, uint32_t seed) {
  constexpr uint32_t kPerStrand = 16;
  constexpr float kSegment = 0.04f, kThickness = 0.001f;
  Random r(seed);
  // A box whose volume grows with the segment count (about the same density at every size).
  const float side = std::cbrt(static_cast<float>(segments) / 10'000.0f);
  Pair st;
  const uint32_t strands = (segments + kPerStrand - 1) / kPerStrand;
  uint32_t left = segments;
  for (uint32_t k = 0; k < strands; ++k) {
    const uint32_t n = std::min(left, kPerStrand);
    left -= n;
    const auto first = static_cast<uint32_t>(st.points.size());
    Float4 p{r.uniform(0, side), r.uniform(0, side), r.uniform(0, side), 0};
    const Float4 motion = r.unit();
    const float travel = r.uniform(0.01f, 0.03f);
    for (uint32_t v = 0; v <= n; ++v) {
      st.points.push_back(p);
      st.previous.push_back({p.x - travel * motion.x, p.y - travel * motion.y, p.z - travel * motion.z, 0});
      const Float4 d = r.unit();
      p = {p.x + kSegment * d.x, p.y + kSegment * d.y, p.z + kSegment * d.z, 0};
      if (v < n) st.cells.insert(st.cells.end(), {first + v, first + v + 1});
    }
  }
  st.geometries = {Geometry::lineMesh(0, static_cast<uint32_t>(st.points.size()), 0, segments, kThickness)};
  st.queries = {GeometryQuery{0, 0, GeometryMethod::kContinuous, 0}};
  return st;
}

// ---- FCL -----------------------------------------------------------------------------------------

#ifdef VKC_HAVE_FCL
using FclModel = fcl::BVHModel<fcl::OBBRSSd>;

std::shared_ptr<FclModel> fclModel(const Pair& p, uint32_t mesh) {
  const Geometry& g = p.geometries[mesh];
  std::vector<fcl::Vector3d> vertices;
  vertices.reserve(g.count);
  for (uint32_t i = 0; i < g.count; ++i) {
    const Float4& v = p.points[g.first + i];
    vertices.emplace_back(v.x, v.y, v.z);
  }
  std::vector<fcl::Triangle> triangles;
  triangles.reserve(p.triangles);
  const auto firstEntry = static_cast<size_t>(g.p2.x);
  for (uint32_t t = 0; t < p.triangles; ++t) {
    const uint32_t* c = &p.cells[firstEntry + 3 * size_t{t}];
    triangles.emplace_back(c[0], c[1], c[2]);
  }
  auto model = std::make_shared<FclModel>();
  model->beginModel();
  model->addSubModel(vertices, triangles);
  model->endModel();
  return model;
}

struct FclPair {
  std::unique_ptr<fcl::CollisionObjectd> a, b;
};

FclPair makeFclPair(const Pair& p) {
  FclPair f;
  f.a = std::make_unique<fcl::CollisionObjectd>(fclModel(p, 0));
  f.b = std::make_unique<fcl::CollisionObjectd>(fclModel(p, 1));
  f.a->computeAABB();
  f.b->computeAABB();
  return f;
}

// fcl::collide with every contact requested; the number of contacts (intersecting triangle pairs).
size_t runFcl(const FclPair& f) {
  const fcl::CollisionRequestd request(100'000'000, true);
  fcl::CollisionResultd result;
  fcl::collide(f.a.get(), f.b.get(), request, result);
  return result.numContacts();
}
#endif

// ---- Rows ----------------------------------------------------------------------------------------

struct Row {
  std::string pair;                 // "surface-surface", "surface-sphere" (mesh rows) or "line-line ccd"
  uint32_t level = 0, cells = 0;    // subdivision level (mesh rows); triangles per mesh or segments
  std::string backend;
  double ms = -1;  // median per call; < 0: skipped
  uint32_t reps = 0, inner = 0;
  uint64_t contacts = 0;
  double vsFcl = 0;  // FCL's ms over ours (0: none)
  std::string note;
};

void printRow(const Row& r) {
  char ms[32] = "-", contacts[32] = "-", ratio[16] = "-";
  if (r.ms >= 0) {
    std::snprintf(ms, sizeof ms, "%.3f", r.ms);
    std::snprintf(contacts, sizeof contacts, "%llu", static_cast<unsigned long long>(r.contacts));
  }
  if (r.vsFcl > 0) std::snprintf(ratio, sizeof ratio, "%.2f", r.vsFcl);
  std::printf("%-15s %5u %9u  %-10s %11s %10s %8s  %s\n", r.pair.c_str(), r.level, r.cells, r.backend.c_str(), ms,
              contacts, ratio, r.note.c_str());
  std::fflush(stdout);
}

// Our backends on one input (rows cpu-scalar, cpu-simd, vulkan; slot 0, 1, 2 of lastPerCell): each
// timed, checked bitwise against cpu-scalar; a row predicted to run too long is skipped.
struct OurRows {
  const Options& o;
  Context* context;
  std::string vulkanSkip;
  double budgetMs;
  bool disagree = false;

  // trees: also the rows "scalar+trees" and "simd+trees" (slots 3, 4): the CPU backends with the
  // meshes' GeometryQueryTrees built beforehand (their build timed once, in the note), as FCL's models;
  // and "simd+stated" (slot 5): simd+trees with the trees' generation stated
  // (GeometryQueryInput::treesGeneration: the kept meshes' cells and vertices not compared a call).
  void run(const GeometryQueryInput& plain, Row proto, double* lastPerCell, std::vector<Row>& out,
           bool trees = false) {
    QueryOutput reference;
    bool haveReference = false;
    const char* names[] = {"cpu-scalar", "cpu-simd", "vulkan", "scalar+trees", "simd+trees", "simd+stated"};
    std::optional<GeometryQueryTrees> kept;
    std::string keptNote;
    for (int slot = 0; slot < (trees ? 6 : 3); ++slot) {
      if (o.treesOnly && slot < 3) continue;  // scalar+trees is then the reference
      Row row = proto;
      row.backend = names[slot];
      GeometryQueryInput input = plain;
      if (slot >= 3 && !kept) {
        const double t0 = nowMs();
        Result<GeometryQueryTrees> built = GeometryQueryTrees::build(plain);
        const double buildMs = nowMs() - t0;
        if (!built) {
          std::fprintf(stderr, "bench_mesh_queries: GeometryQueryTrees::build: %s\n", built.message().c_str());
          std::abort();
        }
        kept.emplace(std::move(*built));
        char buf[64];
        std::snprintf(buf, sizeof buf, "trees built beforehand in %.1f ms; ", buildMs);
        keptNote = buf;
      }
      if (slot >= 3) input.trees = &*kept;
      if (slot == 5) input.treesGeneration = kept->generation();
      const double units = double(row.cells);
      if (!skipped(lastPerCell[slot] * units, row)) {
        const Backend backend = slot == 2 ? Backend::kVulkan : slot % 3 == 0 ? Backend::kCpuScalar : Backend::kCpuSimd;
        Context* ctx = backend == Backend::kVulkan ? context : nullptr;
        QueryOutput result;
        if (backend == Backend::kVulkan && ctx == nullptr) {
          row.note = "skipped: " + vulkanSkip;
        } else if (const Status st = runQueryInto(backend, ctx, input, result); !st) {
          row.note = "refused: " + st.message();
        } else {
          const WallSamples w = sampleRow(o, backend != Backend::kVulkan, budgetMs, [&] {
            if (!runQueryInto(backend, ctx, input, result)) std::abort();
          });
          row.ms = median(w.ms);
          row.reps = static_cast<uint32_t>(w.ms.size());
          row.inner = w.inner;
          row.contacts = result.counts.contacts;
          lastPerCell[slot] = row.ms / units;
          const char* refName = o.treesOnly ? "scalar+trees" : "cpu-scalar";
          if (slot == (o.treesOnly ? 3 : 0)) {
            reference = std::move(result);
            haveReference = true;
          } else if (!haveReference) {
            row.note = std::string("not checked (") + refName + " skipped)";
          } else if (!sameContacts(result, reference)) {
            row.note = std::string("DIFFERS from ") + refName;
            disagree = true;
          } else {
            row.note = std::string("bitwise equal to ") + refName;
          }
          if (slot >= 3) row.note = keptNote + row.note;
          if (backend == Backend::kVulkan && o.passCandidates > 0) row.note += passTimings(input, result);
        }
      }
      out.push_back(row);
    }
  }

  // --vulkan-passes: `input` run once on a stage created with maxCandidates = o.passCandidates (room
  // for `result`'s contacts): its GPU time per pass, as a note (the second of two runs).
  std::string passTimings(const GeometryQueryInput& input, const QueryOutput& result) const {
    GeometryQueryStageCreateInfo ci;
    ci.maxQueries = static_cast<uint32_t>(input.queries.size());
    ci.maxGeometries = static_cast<uint32_t>(input.geometries.size());
    ci.maxPoints = static_cast<uint32_t>(input.points.size());
    ci.maxCells = static_cast<uint32_t>(input.cells.size());
    ci.maxContacts = static_cast<uint32_t>(std::max<uint64_t>(result.counts.contacts, 1));
    ci.maxMeshPairCells = static_cast<uint32_t>(input.cells.size());
    ci.maxCandidates = o.passCandidates;
    ci.maxSlots = static_cast<uint32_t>(std::max<uint64_t>(uint64_t{o.passCandidates} * input.queries.size(),
                                                           input.cells.size()));
    auto stage = GeometryQueryStage::create(*context, ci);
    if (!stage) return "; --vulkan-passes: " + stage.error().message;
    QueryOutput out;
    out.a.assign(ci.maxContacts, {});
    out.b.assign(ci.maxContacts, {});
    out.ranges.assign(input.queries.size(), {});
    std::string note = "; GPU ms per pass (maxCandidates " + std::to_string(o.passCandidates) + "):";
    for (int run = 0; run < 2; ++run) {
      Result<GeometryQueryCounts> c = (*stage)->run(input, {out.a, out.b, out.ranges});
      if (!c) return "; --vulkan-passes: " + c.error().message;
      out.counts = *c;
    }
    double total = 0;
    const std::string prefix = "vkc.geometry_queries.";
    for (const PassTiming& t : (*stage)->timings()) {
      const std::string name = t.name;
      // The pair families' passes, SPANS and SCAN (not the tree's radix sort's scans).
      const std::string shortName = name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : "";
      if (shortName.find("mesh_mesh") != std::string::npos || shortName.find("mesh_ccd") != std::string::npos ||
          shortName.find("spans") != std::string::npos || shortName.find("scan") != std::string::npos) {
        char buf[96];
        std::snprintf(buf, sizeof buf, " %s %.2f", shortName.c_str(), t.ns * 1e-6);
        note += buf;
      }
      total += (t.ns * 1e-6);
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, "; all %zu passes %.1f ms; %s", (*stage)->timings().size(), total,
                  sameContacts(out, result) ? "bitwise equal" : "DIFFERS");
    return note + buf;
  }

  // Whether a row predicted to take `predictedMs` is skipped (its note then says so).
  bool skipped(double predictedMs, Row& row) const {
    if (predictedMs <= budgetMs / 4) return false;
    char buf[96];
    std::snprintf(buf, sizeof buf, "skipped: one call predicted %.1f s (> --row-budget / 4)", predictedMs * 1e-3);
    row.note = buf;
    return true;
  }
};

int runBench(const Options& o) {
  std::string meshPath = o.mesh;
  Mesh base;
  if (!loadBenchMesh(meshPath, base, "bench_mesh_queries")) return 2;
  if (o.quick) base = strided(base, 2000);
  std::unique_ptr<Context> context;
  std::string vulkanSkip = "--no-vulkan";
  if (o.vulkan) {
    context = createContext("bench_mesh_queries", o.device);
    if (!context) vulkanSkip = "no Vulkan context";
  }
#ifdef VKC_HAVE_FCL
  const bool fcl = o.fcl;
#else
  const bool fcl = false;
#endif
  std::string deviceLine = "no Vulkan device (" + vulkanSkip + ")";
  if (context) {
    const DeviceInfo& dev = context->deviceInfo();
    deviceLine = "device '" + dev.name + "' (" + dev.driverName + " " + dev.driverInfo + ")";
  }
  std::printf("bench_mesh_queries: %s; CPU '%s', SIMD target %s; one thread\n", deviceLine.c_str(),
              cpuModel().c_str(), cpu::simdTargetName());
  std::printf("bench_mesh_queries: mesh %s (%u triangles); reps %u; FCL %s; CPU and FCL rows: %s\n\n", meshPath.c_str(),
              base.triangles(), o.reps, fcl ? "0.7 (BVHModel<OBBRSS>, every contact, one thread)" : "off",
              o.threadTime ? "thread CPU time" : "wall clock");
  std::printf("%-15s %5s %9s  %-10s %11s %10s %8s  %s\n", "pair", "level", "cells", "backend", "ms/call", "contacts",
              "ours/FCL", "note");
  const double budgetMs = o.rowBudgetS * 1000.0;
  OurRows ours{o, context.get(), vulkanSkip, budgetMs};
  std::vector<Row> rows;
  double lastPerCell[6] = {0, 0, 0, 0, 0, 0};
  double lastSpherePerCell[3] = {0, 0, 0};
  double lastSelfPerCell[6] = {0, 0, 0, 0, 0, 0};
  double lastFclPerCell[2] = {0, 0};
  Mesh mesh = base;
  uint32_t meshLevel = 0;
  for (const uint32_t level : o.levels) {
    if (level < meshLevel) {
      mesh = base;
      meshLevel = 0;
    }
    for (; meshLevel < level; ++meshLevel) mesh = subdivide(mesh);
    const Pair pair = makePair(mesh);
    const Row proto{"surface-surface", level, pair.triangles};
    std::vector<Row> levelRows;
    ours.run(pair.input(), proto, lastPerCell, levelRows, /*trees=*/true);
    double fclMs = 0;
    for (int k = 0; k < (o.treesOnly ? 1 : 2) && fcl; ++k) {
      Row row = proto;
      row.backend = k == 0 ? "fcl" : "fcl+build";
      if (!ours.skipped(lastFclPerCell[k] * pair.triangles, row)) {
#ifdef VKC_HAVE_FCL
        WallSamples w;
        if (k == 0) {
          const FclPair f = makeFclPair(pair);
          row.contacts = runFcl(f);
          w = sampleRow(o, true, budgetMs, [&] { runFcl(f); });
        } else {
          w = sampleRow(o, true, budgetMs, [&] { row.contacts = runFcl(makeFclPair(pair)); });
        }
        row.ms = median(w.ms);
        row.reps = static_cast<uint32_t>(w.ms.size());
        row.inner = w.inner;
        row.note = "intersecting triangle pairs";
        lastFclPerCell[k] = row.ms / pair.triangles;
        if (k == 0) fclMs = row.ms;
#endif
      }
      levelRows.push_back(row);
    }
    for (Row& r : levelRows) {
      if (fclMs > 0 && r.ms > 0 && r.backend.rfind("fcl", 0) != 0) r.vsFcl = fclMs / r.ms;
      printRow(r);
      rows.push_back(r);
    }
    // The reference row of each kind: cpu-scalar, or scalar+trees with --trees-only.
    const std::string ref = o.treesOnly ? "scalar+trees" : "cpu-scalar";
    uint64_t pairContacts = 0;
    for (const Row& r : levelRows) {
      if (r.backend == ref && r.ms >= 0) pairContacts = r.contacts;
    }
    const Pair self = makeSelfPair(pair);
    std::vector<Row> selfRows;
    ours.run(self.input(), Row{"surface-self", level, self.triangles}, lastSelfPerCell, selfRows, /*trees=*/true);
    for (Row& r : selfRows) {
      if (r.backend == ref && r.ms >= 0 && pairContacts > 0) {
        r.note = (r.contacts == pairContacts ? "as many contacts as" : "CONTACTS DIFFER from") +
                 (" surface-surface " + ref) + (r.note.empty() ? "" : "; " + r.note);
      }
      printRow(r);
      rows.push_back(r);
    }
    if (o.treesOnly) continue;
    const Pair sphere = makeSpherePair(mesh);
    std::vector<Row> sphereRows;
    ours.run(sphere.input(), Row{"surface-sphere", level, sphere.triangles}, lastSpherePerCell, sphereRows);
    for (const Row& r : sphereRows) {
      printRow(r);
      rows.push_back(r);
    }
  }
  double lastPerSegment[3] = {0, 0, 0};
  for (const uint32_t n : o.treesOnly ? std::vector<uint32_t>{} : o.segments) {
    const Pair strands = makeStrands(n, 77u + n);
    std::vector<Row> segmentRows;
    ours.run(strands.input(), Row{"line-line ccd", 0, n}, lastPerSegment, segmentRows);
    for (const Row& r : segmentRows) {
      printRow(r);
      rows.push_back(r);
    }
  }

  std::string s = "{\n  \"benchmark\": \"bench_mesh_queries\",\n  \"date\": " + jsonString(utcDate()) + ",\n";
  if (context) s += jsonDeviceFields(context->deviceInfo());
  s += jsonHostFields();
  s += "  \"mesh\": " + jsonString(meshPath) + ",\n";
  s += "  \"fcl\": " + std::string(fcl ? "true" : "false") + ",\n";
  s += "  \"reps\": " + std::to_string(o.reps) + ",\n";
  s += "  \"cpu_time\": " + jsonString(o.threadTime ? "thread CPU time" : "wall clock") + ",\n";
  s += jsonRowsAndEnd(rows, [&](const Row& r) {
    std::string m = "\"pair\": " + jsonString(r.pair) + ", \"level\": " + std::to_string(r.level) +
                    ", \"cells\": " + std::to_string(r.cells) + ", \"backend\": " + jsonString(r.backend);
    if (r.ms >= 0) {
      m += ", \"ms\": " + jsonNumber(r.ms) + ", \"reps\": " + std::to_string(r.reps) +
           ", \"inner\": " + std::to_string(r.inner) + ", \"contacts\": " + std::to_string(r.contacts);
      if (r.vsFcl > 0) m += ", \"ours_over_fcl\": " + jsonNumber(r.vsFcl);
    }
    if (!r.note.empty()) m += ", \"note\": " + jsonString(r.note);
    return m;
  });
  return finishResults("bench_mesh_queries", o.json, s, ours.disagree);
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  const std::optional<vkc::bench::Options> o = vkc::bench::parseOptions(argc, argv);
  if (!o) return 2;
  return vkc::bench::runBench(*o);
}
