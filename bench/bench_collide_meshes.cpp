// Mesh collision benchmark: particles against a static triangle mesh (the Spot mesh, subdivided and
// strided as in bench_bvh: bench_meshes.h), discrete (one proximity round: the closest violated
// triangle, maxBounces 0) and continuous (the bounce loop, maxBounces 4), on every backend, in
// particles per second. The mesh tree is built once beforehand (MeshTree kept by the caller); the
// timed call is one iteration: the per-call tables and the per-particle queries.
//
// Particles: on random points of random triangles, offset along the triangle's normal by -1.5 .. 3
// thicknesses (about a third within reach), arriving from 2 thicknesses further out (continuous: their
// paths cross the surface); thickness 0.2% of the mesh's box diagonal; in Morton order of their
// positions, as neighbours in a cloth are neighbours in memory (the SIMD twin walks the tree for
// packets of 8 consecutive particles).
//
// CPU anchor (where CMake finds Intel Embree, Debian libembree-dev): Embree's closest-point query
// (rtcPointQuery, one thread, device "threads=1") over the same triangles and points with the same
// radius, the callback computing the closest point with our triClosestPoint: the query our discrete
// round does. The rows' contact counts must agree. Prints a table and writes JSON; see --help.
#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <time.h>

#ifdef VKC_HAVE_EMBREE
#include <embree3/rtcore.h>
#endif

#include "bench_common.h"
#include "bench_meshes.h"
#include "shared/bvh.h"
#include "shared/collide_meshes_math.h"
#include "vkcollide/vkcollide.h"

namespace vkc::gpu {
namespace {

// --counters: the stage's own kernel (shared/collide_meshes_kernel.h, as the CPU twin and the shader
// compile it) over one static mesh and its built tree, counting per particle the tree walks (queries),
// the node reads, the candidate triangles (triCcdStatic calls) and their advancement steps
// (MeshHit::pad0), and the candidates that ran to kMeshCcdMaxSteps. The member triCcdStatic below is
// found before the namespace function by the kernel's unqualified calls.
struct CountingKernel {
  const BvhNode* nodes = nullptr;
  const Aabb* leafBoxes = nullptr;
  const Float4* vertices = nullptr;
  const uint32_t* indices = nullptr;
  MeshGpu theMesh{};
  uint32_t nodeReads = 0, candidates = 0, steps = 0, capped = 0, cappedSteps = 0;

  // The walk's events in order, when tracing: 0 a node read, s > 0 a candidate of s advancement steps.
  std::vector<uint32_t>* trace = nullptr;
  BvhNode treeNode(uint i) {
    ++nodeReads;
    if (trace != nullptr) trace->push_back(0u);
    return nodes[i];
  }
  Aabb treeLeafBox(uint t) const { return leafBoxes[t]; }
  uint triangleVertex(uint k) const { return indices[k]; }
  uint triangleMesh(uint) const { return 0u; }
  MeshGpu meshAt(uint) const { return theMesh; }
  vec3 worldVertex(uint v, uint) const { return vec3(vertices[v].x, vertices[v].y, vertices[v].z); }
  vec3 localVertex(uint v) const { return worldVertex(v, 0u); }
  RigidSweep sweepAt(uint) const { return RigidSweep{}; }
  uint clothMeshWord(uint) const { return 1u; }
  float rigidReach() const { return 0.0f; }

  bool triCcdStatic(vec3 a, vec3 b, vec3 c, float tStart, vec3 pStart, vec3 pEnd, float thickness, uint flags,
                    MeshHit& hit) {
    const bool found = gpu::triCcdStatic(a, b, c, tStart, pStart, pEnd, thickness, flags, hit);
    ++candidates;
    steps += hit.pad0;
    if (trace != nullptr) trace->push_back(std::max(hit.pad0, 1u));
    if (hit.pad0 >= kMeshCcdMaxSteps) ++capped, cappedSteps += hit.pad0;
    return found;
  }

#include "shared/collide_meshes_kernel.h"

  // meshCollideParticle, counting the walks and each walk's work (node reads + advancement steps).
  static constexpr uint32_t kMaxWalks = 8;
  // traces[w]: walk w's events (the two reads of the root's box by meshQueryReach left out).
  bool collide(MeshCollidePush pc, vec4 prev4, vec4 cur4, vec3& newPrev, vec3& newCur, uint32_t& walks,
               std::array<uint32_t, kMaxWalks>& walkWork, std::array<std::vector<uint32_t>, kMaxWalks>& traces) {
    walkWork.fill(0);
    MeshParticle q = meshParticleBegin(pc, prev4, cur4);
    for (uint step = 0u; step <= pc.maxBounces && q.done == 0u; ++step) {
      const uint32_t before = nodeReads + steps;
      std::vector<uint32_t>& events = traces[std::min(walks, kMaxWalks - 1)];
      trace = &events;
      meshParticleStep(pc, 0u, q);
      trace = nullptr;
      if (events.size() >= 2) events.erase(events.begin(), events.begin() + 2);
      walkWork[std::min(walks, kMaxWalks - 1)] += nodeReads + steps - before;
      ++walks;
    }
    uvec2 info;
    return meshParticleEnd(pc, q, newPrev, newCur, info);
  }
};

}  // namespace
}  // namespace vkc::gpu

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_collide_meshes.json", 5) {}
  std::string obj;
  std::vector<uint32_t> triangles = {20'000, 100'000, 1'000'000};
  std::vector<uint32_t> particles = {16'384, 262'144, 1'048'576};
  bool vulkan = true;
  bool threadTime = false;  // --thread-time: CPU and Embree rows timed by the thread's CPU time
  bool counters = false;    // --counters: per-particle work counts of the kernel (see MeshCounters)
  bool vulkanOnly = false;  // --vulkan-only: no CPU or Embree rows; the CPU SIMD answer once, as the reference
};

// --thread-time: threadMs() (bench_common.h). The CPU rows run on the calling thread (collideMeshes
// without an executor), as Embree's queries do.

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: bench_collide_meshes [options]\n"
               "  --device SEL        Vulkan device: index or name substring (default: VKC_DEVICE, else first GPU)\n"
               "  --obj PATH          mesh to subdivide (default: spot.obj beside the repository, see bench_bvh)\n"
               "  --triangles A,B,..  mesh sizes (default 20000,100000,1000000)\n"
               "  --particles A,B,..  particle counts (default 16384,262144,1048576)\n"
               "  --no-vulkan         CPU and Embree rows only\n"
               "  --vulkan-only       Vulkan rows only, checked against the CPU SIMD answer computed once, untimed\n"
               "                      (CPU SIMD equals CPU scalar bit for bit; for a GPU machine's short lease)\n"
               "  --thread-time       time the CPU and Embree rows by the thread's CPU time, not wall clock\n"
               "                      (a machine shared with other jobs)\n"
               "  --counters          per mesh size and particle count, the kernel's work per particle (tree walks,\n"
               "                      candidate triangles, advancement steps): mean and mean of the max over\n"
               "                      subgroups of 8 / 32 consecutive particles (the divergence cost)\n"
               "  --reps R            timed repetitions per measurement, median reported (default 5)\n"
               "  --quick             20000 triangles, 16384 particles, 3 reps (smoke test)\n"
               "  --exact-arithmetic  the Vulkan context with exact arithmetic (ContextCreateInfo::exactArithmetic)\n"
               "  --json PATH         write results as JSON (default bench_collide_meshes.json)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args("bench_collide_meshes", argc, argv);
  const bool parsed = parseCommonOptions(args, o, usage, [&] {
    if (args.is("--obj")) return taken(args.text(o.obj));
    if (args.is("--no-vulkan")) return setFlag(o.vulkan, false);
    if (args.is("--vulkan-only")) return setFlag(o.vulkanOnly, true);
    if (args.is("--thread-time")) return setFlag(o.threadTime, true);
    if (args.is("--counters")) return setFlag(o.counters, true);
    for (auto [name, list] : {std::pair{"--triangles", &o.triangles}, std::pair{"--particles", &o.particles}}) {
      if (args.is(name)) {
        std::string text;
        if (!args.text(text) || !parsePositiveList(text, *list)) {
          std::fprintf(stderr, "bench_collide_meshes: %s wants positive integers A,B,...\n", name);
          return Parsed::kBad;
        }
        return Parsed::kTaken;
      }
    }
    return Parsed::kUnknown;
  });
  if (!parsed) return std::nullopt;
  if (o.quick) {
    o.triangles = {20'000};
    o.particles = {16'384};
    if (!o.repsGiven) o.reps = 3;
  }
  if (o.reps == 0) {
    std::fprintf(stderr, "bench_collide_meshes: --reps must be >= 1\n");
    return std::nullopt;
  }
  if (o.vulkanOnly && (!o.vulkan || o.counters)) {
    std::fprintf(stderr, "bench_collide_meshes: --vulkan-only goes with neither --no-vulkan nor --counters\n");
    return std::nullopt;
  }
  return o;
}

struct Row {
  uint32_t triangles = 0, particles = 0;
  std::string mode, backend;
  double ms = 0;
  uint32_t reps = 0, contacts = 0;
  std::optional<RecordStats> stats;
  std::string note;
  double particlesPerSecond() const { return ms > 0 ? particles / (ms * 1e-3) : 0; }
};

void printRow(const Row& r) {
  std::printf("%10u %10u  %-10s %-12s %11.3f %14.3e %9u %4u  %s\n", r.triangles, r.particles, r.mode.c_str(),
              r.backend.c_str(), r.ms, r.particlesPerSecond(), r.contacts, r.reps, r.note.c_str());
  std::fflush(stdout);
}

struct Cloud {
  std::vector<Float4> prev, cur;
};

Cloud makeParticles(const Mesh& mesh, uint32_t n, float thickness, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Cloud c;
  c.prev.resize(n);
  c.cur.resize(n);
  const uint32_t tris = mesh.triangles();
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t t = static_cast<uint32_t>(rng() % tris);
    auto v = [&](int k) {
      const Float4& f = mesh.vertices[mesh.indices[3 * t + static_cast<uint32_t>(k)]];
      return gpu::vec3(f.x, f.y, f.z);
    };
    const gpu::vec3 a = v(0), b = v(1), cc = v(2);
    float s = u(rng), w = u(rng);
    if (s + w > 1) s = 1 - s, w = 1 - w;
    const gpu::vec3 p = a + (b - a) * s + (cc - a) * w;
    gpu::vec3 nrm = gpu::cross(b - a, cc - a);
    const float len = std::sqrt(gpu::dot(nrm, nrm));
    nrm = len > 0 ? nrm / len : gpu::vec3(0, 1, 0);
    const float off = thickness * (-1.5f + 4.5f * u(rng));
    const gpu::vec3 x = p + nrm * off;
    const gpu::vec3 from = x + nrm * (2.0f * thickness) + gpu::vec3(u(rng) - 0.5f, 0, u(rng) - 0.5f) * thickness;
    c.cur[i] = {x.x, x.y, x.z, 1.0f};
    c.prev[i] = {from.x, from.y, from.z, 1.0f};
  }
  // In Morton order of their positions: neighbours in a cloth are neighbours in memory.
  Float4 lo{1e30f, 1e30f, 1e30f, 0}, hi{-1e30f, -1e30f, -1e30f, 0};
  for (const Float4& p : c.cur) {
    lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z), 0};
    hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z), 0};
  }
  auto spread = [](uint32_t v) {
    uint64_t x = v & 0x1FFFFF;
    x = (x | x << 32) & 0x1F00000000FFFFull;
    x = (x | x << 16) & 0x1F0000FF0000FFull;
    x = (x | x << 8) & 0x100F00F00F00F00Full;
    x = (x | x << 4) & 0x10C30C30C30C30C3ull;
    x = (x | x << 2) & 0x1249249249249249ull;
    return x;
  };
  auto cell = [](float v, float l, float h) {
    return static_cast<uint32_t>(std::clamp((v - l) / std::max(h - l, 1e-30f), 0.0f, 1.0f) * 2097151.0f);
  };
  std::vector<std::pair<uint64_t, uint32_t>> order(n);
  for (uint32_t i = 0; i < n; ++i) {
    const Float4& p = c.cur[i];
    order[i] = {spread(cell(p.x, lo.x, hi.x)) << 2 | spread(cell(p.y, lo.y, hi.y)) << 1 | spread(cell(p.z, lo.z, hi.z)), i};
  }
  std::sort(order.begin(), order.end());
  Cloud sorted;
  sorted.prev.resize(n);
  sorted.cur.resize(n);
  for (uint32_t i = 0; i < n; ++i) sorted.cur[i] = c.cur[order[i].second], sorted.prev[i] = c.prev[order[i].second];
  return sorted;
}

// --counters: one particle's counts (CountingKernel) and their mean over the particles and over
// subgroups of 8 and 32 consecutive particles of the max in each (a subgroup runs as long as its
// slowest lane). Returns false when the counting kernel's positions differ from `expectCur` (the CPU
// scalar row's), i.e. when the counts are not those of the stage's kernel.
bool printCounters(const Mesh& mesh, const std::vector<BvhNode>& nodes, const std::vector<Aabb>& boxes,
                   const Cloud& cloud, float thickness, bool continuous, const std::vector<Float4>& expectCur) {
  gpu::CountingKernel k;
  k.nodes = reinterpret_cast<const gpu::BvhNode*>(nodes.data());  // the same layout (as the CPU twin reads them)
  k.leafBoxes = reinterpret_cast<const gpu::Aabb*>(boxes.data());
  k.vertices = mesh.vertices.data();
  k.indices = mesh.indices.data();
  k.theMesh.material.thickness = thickness;
  k.theMesh.motion = gpu::kMeshMotionStatic;
  k.theMesh.vertexCount = static_cast<uint32_t>(mesh.vertices.size());
  k.theMesh.triangleCount = mesh.triangles();
  k.theMesh.sweep = gpu::kMeshNone;
  gpu::MeshCollidePush pc{};
  pc.clothCount = 1;
  pc.meshWords = 1;
  pc.flags = continuous ? gpu::kMeshFlagContinuous : 0u;
  pc.maxBounces = continuous ? 4u : 0u;
  pc.maxThickness = thickness;
  pc.triangleCount = mesh.triangles();
  const size_t n = cloud.cur.size();
  enum { kWalks, kNodes, kCandidates, kSteps, kCounts };
  std::vector<std::array<uint32_t, kCounts>> per(n);
  std::vector<std::array<uint32_t, gpu::CountingKernel::kMaxWalks>> work(n);
  std::vector<std::array<std::vector<uint32_t>, gpu::CountingKernel::kMaxWalks>> traces(n);
  bool same = true;
  uint64_t capped = 0, cappedSteps = 0, candidates = 0, steps = 0, contacts = 0;
  for (size_t i = 0; i < n; ++i) {
    const Float4 p = cloud.prev[i], c = cloud.cur[i];
    gpu::vec3 newPrev, newCur;
    uint32_t walks = 0;
    k.nodeReads = k.candidates = k.steps = 0;
    const bool changed = k.collide(pc, gpu::vec4(p.x, p.y, p.z, p.w), gpu::vec4(c.x, c.y, c.z, c.w), newPrev, newCur,
                                   walks, work[i], traces[i]);
    const Float4 got = changed ? Float4{newCur.x, newCur.y, newCur.z, c.w} : c;
    same = same && std::memcmp(&got, &expectCur[i], sizeof got) == 0;
    contacts += changed;
    per[i] = {walks, k.nodeReads, k.candidates, k.steps};
    candidates += k.candidates, steps += k.steps;
  }
  capped = k.capped, cappedSteps = k.cappedSteps;
  std::printf("  counters (%s, %zu particles, %" PRIu64 " changed%s): per particle: mean / mean of max per 8 / per 32\n",
              continuous ? "continuous" : "discrete", n, contacts, same ? "" : ", DIFFERS FROM SCALAR");
  const char* names[kCounts] = {"walks", "node reads", "candidates", "ccd steps"};
  for (int c = 0; c < kCounts; ++c) {
    double mean[3] = {0, 0, 0};
    const size_t widths[3] = {1, 8, 32};
    for (int w = 0; w < 3; ++w) {
      size_t groups = 0;
      for (size_t g = 0; g < n; g += widths[w], ++groups) {
        uint32_t m = 0;
        for (size_t i = g; i < std::min(n, g + widths[w]); ++i) m = std::max(m, per[i][c]);
        mean[w] += m;
      }
      mean[w] /= static_cast<double>(std::max<size_t>(groups, 1));
    }
    std::printf("    %-11s %9.2f %9.2f %9.2f  (x%.1f, x%.1f of the mean)\n", names[c], mean[0], mean[1], mean[2],
                mean[1] / std::max(mean[0], 1e-9), mean[2] / std::max(mean[0], 1e-9));
  }
  // The walk rounds of a workgroup (kMeshGroupSize consecutive particles, one tile) on subgroups of
  // width W: a round's cost is, per subgroup, the largest work (node reads + advancement steps) of its
  // lanes' walks. In place: particle i stays in lane i, so a subgroup runs every round that any of its
  // particles still walks (the collide pass). Compacted (tried, measured slower on lavapipe, not used):
  // from the second round on the particles still walking are packed into the first lanes, in order.
  for (const size_t w : {size_t{8}, size_t{32}}) {
    double inPlace = 0, compacted = 0, lanes = 0;
    for (size_t g = 0; g < n; g += gpu::kMeshGroupSize) {
      const size_t end = std::min(n, g + gpu::kMeshGroupSize);
      for (uint32_t r = 0; r < gpu::CountingKernel::kMaxWalks; ++r) {
        std::vector<uint32_t> packed;
        for (size_t i = g; i < end; ++i) {
          if (per[i][kWalks] > r) packed.push_back(work[i][r]);
        }
        double roundInPlace = 0, roundPacked = 0;
        for (size_t s0 = g; s0 < end; s0 += w) {
          uint32_t m = 0;
          for (size_t i = s0; i < std::min(end, s0 + w); ++i) m = std::max(m, per[i][kWalks] > r ? work[i][r] : 0u);
          roundInPlace += static_cast<double>(m) * static_cast<double>(w);
        }
        for (size_t s0 = 0; s0 < packed.size(); s0 += w) {
          uint32_t m = 0;
          for (size_t i = s0; i < std::min(packed.size(), s0 + w); ++i) m = std::max(m, packed[i]);
          roundPacked += static_cast<double>(m) * static_cast<double>(w);
        }
        inPlace += roundInPlace;
        compacted += r == 0 ? roundInPlace : roundPacked;  // the first round runs in place either way
        for (size_t i = g; i < end; ++i) lanes += per[i][kWalks] > r ? work[i][r] : 0u;
      }
    }
    std::printf("    lane work (node reads + steps) on subgroups of %zu: busy %.1f per particle; lanes held: in place "
                "%.1f, rounds compacted %.1f per particle\n",
                w, lanes / static_cast<double>(n), inPlace / static_cast<double>(n), compacted / static_cast<double>(n));
  }
  // Lockstep model of a subgroup's walks (node reads and advancement steps apart, per subgroup, times
  // its width: the lane slots it holds), from the traces. Tests inside the traversal loop (before the
  // while-while walk), in place: the subgroup runs an iteration per node read of its longest lane, and
  // in each the longest candidate test of the lanes whose node had a candidate (each candidate counted
  // at the node read before it). While-while (meshQuery now): per round of candidates, the longest
  // walk to the next candidate, then the longest test.
  for (const size_t w : {size_t{8}, size_t{32}}) {
    double inLoop = 0, whileWhile = 0, inLoopSteps = 0, whileWhileSteps = 0;
    for (size_t g = 0; g < n; g += gpu::kMeshGroupSize) {
      const size_t end = std::min(n, g + gpu::kMeshGroupSize);
      for (uint32_t r = 0; r < gpu::CountingKernel::kMaxWalks; ++r) {
        // In place, tests in the loop.
        for (size_t s0 = g; s0 < end; s0 += w) {
          std::vector<std::vector<uint32_t>> iters;  // per lane: steps at each node read
          for (size_t i = s0; i < std::min(end, s0 + w); ++i) {
            std::vector<uint32_t> it;
            if (per[i][kWalks] > r) {
              for (const uint32_t e : traces[i][r]) {
                if (e == 0u || it.empty()) it.push_back(0u);
                if (e != 0u) it.back() += e;
              }
            }
            iters.push_back(std::move(it));
          }
          size_t longest = 0;
          for (const auto& it : iters) longest = std::max(longest, it.size());
          for (size_t x = 0; x < longest; ++x) {
            uint32_t m = 0;
            for (const auto& it : iters) m = std::max(m, x < it.size() ? it[x] : 0u);
            inLoop += static_cast<double>(w);
            inLoopSteps += static_cast<double>(m) * static_cast<double>(w);
          }
        }
        // While-while, in place (lanes whose particle is done hold no work).
        std::vector<size_t> lanes;
        for (size_t i = g; i < end; ++i) lanes.push_back(i);
        for (size_t s0 = 0; s0 < lanes.size(); s0 += w) {
          std::vector<std::vector<std::pair<uint32_t, uint32_t>>> rounds;  // per lane: (reads, steps) per candidate
          for (size_t l = s0; l < std::min(lanes.size(), s0 + w); ++l) {
            const size_t i = lanes[l];
            std::vector<std::pair<uint32_t, uint32_t>> rs{{0u, 0u}};
            if (per[i][kWalks] > r) {
              for (const uint32_t e : traces[i][r]) {
                if (e == 0u) {
                  ++rs.back().first;
                } else {
                  rs.back().second = e;
                  rs.push_back({0u, 0u});
                }
              }
            }
            rounds.push_back(std::move(rs));
          }
          size_t longest = 0;
          for (const auto& rs : rounds) longest = std::max(longest, rs.size());
          for (size_t x = 0; x < longest; ++x) {
            uint32_t reads = 0, longestTest = 0;
            for (const auto& rs : rounds) {
              if (x < rs.size()) reads = std::max(reads, rs[x].first), longestTest = std::max(longestTest, rs[x].second);
            }
            whileWhile += static_cast<double>(reads) * static_cast<double>(w);
            whileWhileSteps += static_cast<double>(longestTest) * static_cast<double>(w);
          }
        }
      }
    }
    const double nn = static_cast<double>(n);
    std::printf("    lockstep model, subgroups of %zu, lane slots per particle (node reads / advancement steps): tests in "
                "the walk loop %.1f / %.1f; while-while %.1f / %.1f\n",
                w, inLoop / nn, inLoopSteps / nn, whileWhile / nn, whileWhileSteps / nn);
  }
  if (continuous) {
    std::printf("    ccd steps per candidate %.2f; candidates at the step cap (%u): %" PRIu64 " (%.3f%%), holding %.1f%% "
                "of the steps\n",
                static_cast<double>(steps) / static_cast<double>(std::max<uint64_t>(candidates, 1)),
                gpu::kMeshCcdMaxSteps, capped,
                100.0 * static_cast<double>(capped) / static_cast<double>(std::max<uint64_t>(candidates, 1)),
                100.0 * static_cast<double>(cappedSteps) / static_cast<double>(std::max<uint64_t>(steps, 1)));
  }
  std::fflush(stdout);
  return same;
}

#ifdef VKC_HAVE_EMBREE
struct EmbreeQuery {
  const Mesh* mesh = nullptr;
  uint32_t triangle = UINT32_MAX;
};

bool closestTriangle(RTCPointQueryFunctionArguments* args) {
  auto* q = static_cast<EmbreeQuery*>(args->userPtr);
  const uint32_t t = args->primID;
  auto v = [&](int k) {
    const Float4& f = q->mesh->vertices[q->mesh->indices[3 * t + static_cast<uint32_t>(k)]];
    return gpu::vec3(f.x, f.y, f.z);
  };
  const gpu::vec3 p(args->query->x, args->query->y, args->query->z);
  const gpu::TriClosest cp = gpu::triClosestPoint(p, v(0), v(1), v(2));
  const float r = args->query->radius;
  if (!(cp.dist2 < r * r)) return false;
  args->query->radius = std::sqrt(cp.dist2);
  q->triangle = t;
  return true;
}
#endif

int runBench(Options o) {
  Mesh base;
  if (!loadBenchMesh(o.obj, base, "bench_collide_meshes")) return 1;
  std::unique_ptr<Context> owner;
  if (o.vulkan) {
    owner = createContext("bench_collide_meshes", o.device, o.exactArithmetic);
    if (!owner) return 1;
  }
  const std::string date = utcDate();
  std::string deviceLine = "no Vulkan device (--no-vulkan)";
  if (owner) deviceLine = bench::deviceLine(*owner);
  std::printf("bench_collide_meshes: %s; CPU '%s', SIMD target %s; %s\n", deviceLine.c_str(), cpuModel().c_str(),
              cpu::simdTargetName(), date.c_str());
  std::printf("bench_collide_meshes: mesh %s (%u triangles), reps %u\n\n", o.obj.c_str(), base.triangles(), o.reps);
#ifdef VKC_HAVE_EMBREE
  RTCDevice embree = rtcNewDevice("threads=1");
  if (embree == nullptr) {
    std::fprintf(stderr, "bench_collide_meshes: rtcNewDevice failed\n");
    return 1;
  }
#endif
  std::vector<Mesh> levels{base};
  std::vector<Row> rows;
  bool mismatch = false;
  std::printf("%10s %10s  %-10s %-12s %11s %14s %9s %4s  %s\n", "triangles", "particles", "mode", "backend", "ms",
              "particles/s", "contacts", "reps", "note");
  constexpr double kBudgetMs = 6000;
  for (const uint32_t nt : o.triangles) {
    while (levels.back().triangles() < nt) levels.push_back(subdivide(levels.back()));
    size_t level = 0;
    while (levels[level].triangles() < nt) ++level;
    const Mesh mesh = strided(levels[level], nt);
    Float4 lo{1e30f, 1e30f, 1e30f, 0}, hi{-1e30f, -1e30f, -1e30f, 0};
    for (const Float4& v : mesh.vertices) {
      lo = {std::min(lo.x, v.x), std::min(lo.y, v.y), std::min(lo.z, v.z), 0};
      hi = {std::max(hi.x, v.x), std::max(hi.y, v.y), std::max(hi.z, v.z), 0};
    }
    const float diag = std::sqrt((hi.x - lo.x) * (hi.x - lo.x) + (hi.y - lo.y) * (hi.y - lo.y) +
                                 (hi.z - lo.z) * (hi.z - lo.z));
    const float thickness = 0.002f * diag;
    CollisionMesh cm;
    cm.vertices = mesh.vertices;
    cm.indices = mesh.indices;
    cm.surface.thickness = thickness;
    // The tree, built once (static mesh: kept by later calls).
    std::vector<BvhNode> nodes(bvhNodeCount(nt));
    std::vector<Aabb> boxes(nt);
    std::vector<uint32_t> parents(nt);

#ifdef VKC_HAVE_EMBREE
    RTCScene scene = rtcNewScene(embree);
    RTCGeometry geom = rtcNewGeometry(embree, RTC_GEOMETRY_TYPE_TRIANGLE);
    rtcSetSharedGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, mesh.vertices.data(), 0,
                               sizeof(Float4), mesh.vertices.size());
    rtcSetSharedGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, mesh.indices.data(), 0,
                               3 * sizeof(uint32_t), nt);
    rtcCommitGeometry(geom);
    rtcAttachGeometry(scene, geom);
    rtcReleaseGeometry(geom);
    rtcCommitScene(scene);
#endif
    for (const uint32_t np : o.particles) {
      const Cloud cloud = makeParticles(mesh, np, thickness, nt ^ np);
      for (const bool continuous : {false, true}) {
        const char* mode = continuous ? "continuous" : "discrete";
        std::vector<Float4> firstCur, firstPrev;
        uint32_t scalarContacts = 0;
        for (const Backend b : {Backend::kCpuScalar, Backend::kCpuSimd, Backend::kVulkan}) {
          if (b == Backend::kVulkan && !owner) continue;
          if (b == Backend::kCpuScalar && o.vulkanOnly) continue;
          Row r{nt, np, mode, toString(b)};
          std::vector<Float4> cur = cloud.cur, prev = cloud.prev;
          const ClothRange cloth{0, np};
          const uint32_t list[1] = {0};
          const ClothMeshes cmesh{list};
          bool built = false;
          MeshTreeCache cache;  // the SIMD twin's 4-wide tree, made by the first call
          MeshCollisionInput in;
          in.particles = cur;
          in.prevParticles = prev;
          in.cloths = {&cloth, 1};
          in.clothMeshes = {&cmesh, 1};
          in.meshes = {&cm, 1};
          in.settings.continuous = continuous;
          in.settings.maxBounces = continuous ? 4 : 0;
          in.tree = MeshTree{nodes, boxes, parents, MeshTreeUpdate::kAuto, &built, &cache};
          MeshCollisionDebug debug;
          Status status;
          // Vulkan: one stage for the scene, kept across the calls (its tree built by the first run()).
          std::unique_ptr<MeshCollisionStage> stage;
          if (b == Backend::kVulkan) {
            const MeshLayout layouts[1] = {{static_cast<uint32_t>(mesh.vertices.size()), nt, MeshMotion::kStatic, 16}};
            auto created = MeshCollisionStage::create(*owner, {in.cloths, np, layouts, in.clothMeshes});
            if (!created) {
              std::fprintf(stderr, "bench_collide_meshes: MeshCollisionStage::create: %s\n", created.message().c_str());
              return 1;
            }
            stage = std::move(*created);
          }
          const auto call = [&](MeshCollisionDebug* d) {
            return stage ? stage->run(in, d) : collideMeshes(b, owner.get(), in, d);
          };
          const auto once = [&] {
            std::copy(cloud.cur.begin(), cloud.cur.end(), cur.begin());
            std::copy(cloud.prev.begin(), cloud.prev.end(), prev.begin());
            if (const Status s = call(&debug); !s) status = s;
          };
          once();  // builds the tree (kept by the timed calls)
          if (!status) {
            std::fprintf(stderr, "bench_collide_meshes: %s: %s\n", toString(b), status.message().c_str());
            return 1;
          }
          for (uint32_t c : debug.contacts) r.contacts += c > 0;
          if (b == Backend::kCpuScalar) {
            firstCur = cur, firstPrev = prev, scalarContacts = r.contacts;
            if (o.counters && !printCounters(mesh, nodes, boxes, cloud, thickness, continuous, firstCur)) {
              mismatch = true, r.note += "COUNTING KERNEL DIFFERS ";
            }
          } else if (b == Backend::kCpuSimd && o.vulkanOnly) {
            firstCur = cur, firstPrev = prev, scalarContacts = r.contacts;  // the reference, untimed
            continue;
          } else if (b == Backend::kCpuSimd) {
            if (std::memcmp(cur.data(), firstCur.data(), cur.size() * sizeof(Float4)) != 0) {
              mismatch = true, r.note += "DIFFERS FROM SCALAR ";
            }
          } else {
            double worst = 0;
            for (size_t i = 0; i < cur.size(); ++i) {
              const double e = std::fabs(double{cur[i].x} - double{firstCur[i].x}) +
                               std::fabs(double{cur[i].y} - double{firstCur[i].y}) +
                               std::fabs(double{cur[i].z} - double{firstCur[i].z});
              worst = std::max(worst, e);
            }
            if (worst > 3 * double{kMeshCollisionTolerance} * (1 + double{diag})) mismatch = true, r.note += "BEYOND TOLERANCE ";
            char buf[64];
            std::snprintf(buf, sizeof buf, o.vulkanOnly ? "max |dp| %.2g vs cpu-simd " : "max |dp| %.2g vs scalar ", worst);
            r.note += buf;
          }
          // The timed calls: the copies of the particles are outside (reset before each sample).
          // CPU: wall clock of the call. Vulkan: the GPU time of the recorded passes (timestamps), the
          // tree kept (static mesh: the collide pass alone).
          std::vector<double> ms;
          for (uint32_t rep = 0; rep < o.reps; ++rep) {
            std::copy(cloud.cur.begin(), cloud.cur.end(), cur.begin());
            std::copy(cloud.prev.begin(), cloud.prev.end(), prev.begin());
            const double t0 = nowMs(), c0 = threadMs();
            if (const Status s = call(nullptr); !s) status = s;
            const double wall = nowMs() - t0, cpu = threadMs() - c0;
            double gpu = 0;
            if (stage) {
              for (const PassTiming& t : stage->timings()) gpu += t.ns * 1e-6;
              r.stats = stage->lastRecordStats();
            }
            ms.push_back(stage ? gpu : (o.threadTime ? cpu : wall));
            if (wall > kBudgetMs / o.reps && rep >= 2) break;
          }
          if (!status) {
            std::fprintf(stderr, "bench_collide_meshes: %s: %s\n", toString(b), status.message().c_str());
            return 1;
          }
          r.ms = median(ms);
          r.reps = static_cast<uint32_t>(ms.size());
          if (b == Backend::kVulkan) r.note += "(GPU time of the record: " + recordStatsNote(*r.stats) + ")";
          rows.push_back(r);
          printRow(r);
        }
#ifdef VKC_HAVE_EMBREE
        if (!continuous && !o.vulkanOnly) {
          Row r{nt, np, mode, "embree"};
          const float reach = thickness * (1.0f - gpu::kMeshProximitySlack);
          std::vector<double> ms;
          for (uint32_t rep = 0; rep < o.reps; ++rep) {
            uint32_t contacts = 0;
            const double t0 = nowMs(), c0 = threadMs();
            for (uint32_t i = 0; i < np; ++i) {
              RTCPointQuery q;
              q.x = cloud.cur[i].x, q.y = cloud.cur[i].y, q.z = cloud.cur[i].z, q.time = 0, q.radius = reach;
              RTCPointQueryContext ctx;
              rtcInitPointQueryContext(&ctx);
              EmbreeQuery user{&mesh};
              rtcPointQuery(scene, &q, &ctx, closestTriangle, &user);
              contacts += user.triangle != UINT32_MAX;
            }
            ms.push_back(o.threadTime ? threadMs() - c0 : nowMs() - t0);
            r.contacts = contacts;
            if (nowMs() - t0 > kBudgetMs / o.reps && rep >= 2) break;
          }
          r.ms = median(ms);
          r.reps = static_cast<uint32_t>(ms.size());
          if (r.contacts != scalarContacts) {
            r.note = "contacts differ from ours (" + std::to_string(scalarContacts) + ")";
          }
          r.note += "closest point within the thickness, no push";
          rows.push_back(r);
          printRow(r);
        }
#endif
      }
    }
#ifdef VKC_HAVE_EMBREE
    rtcReleaseScene(scene);
#endif
  }
#ifdef VKC_HAVE_EMBREE
  rtcReleaseDevice(embree);
#endif
  std::string s = "{\n  \"benchmark\": \"bench_collide_meshes\",\n  \"date\": " + jsonString(date) + ",\n";
  if (owner) s += jsonDeviceFields(*owner);
  s += jsonHostFields();
  s += "  \"mesh\": " + jsonString(o.obj) + ",\n";
  s += "  \"notes\": \"one iteration per call (tree built beforehand, static mesh); discrete: maxBounces 0; "
       "continuous: maxBounces 4; cpu: " + std::string(o.threadTime ? "thread CPU time" : "wall clock") +
       " of collideMeshesCpu; vulkan: GPU time (timestamps) of one "
       "MeshCollisionStage record with its tree kept (static mesh: the collide pass); embree: rtcPointQuery, one thread, same points and radius\",\n";
  s += jsonRowsAndEnd(rows, [&](const Row& r) {
    std::string m = "\"triangles\": " + std::to_string(r.triangles) + ", \"particles\": " + std::to_string(r.particles) +
                    ", \"mode\": " + jsonString(r.mode) + ", \"backend\": " + jsonString(r.backend) +
                    ", \"ms\": " + jsonNumber(r.ms) + ", \"particles_per_s\": " + jsonNumber(r.particlesPerSecond()) +
                    ", \"contacts\": " + std::to_string(r.contacts) + ", \"reps\": " + std::to_string(r.reps);
    if (r.stats) m += ", " + jsonRecordStatsMembers(*r.stats);
    if (!r.note.empty()) m += ", \"note\": " + jsonString(r.note);
    return m;
  });
  return finishResults("bench_collide_meshes", o.json, s, mismatch);
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  const auto o = vkc::bench::parseOptions(argc, argv);
  if (!o) return 2;
  return vkc::bench::runBench(*o);
}
