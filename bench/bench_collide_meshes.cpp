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
#include "shared/collide_meshes_math.h"
#include "vkcollide/vkcollide.h"

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_collide_meshes.json", 5) {}
  std::string obj;
  std::vector<uint32_t> triangles = {20'000, 100'000, 1'000'000};
  std::vector<uint32_t> particles = {16'384, 262'144, 1'048'576};
  bool vulkan = true;
  bool threadTime = false;  // --thread-time: CPU and Embree rows timed by the thread's CPU time
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
               "  --thread-time       time the CPU and Embree rows by the thread's CPU time, not wall clock\n"
               "                      (a machine shared with other jobs)\n"
               "  --reps R            timed repetitions per measurement, median reported (default 5)\n"
               "  --quick             20000 triangles, 16384 particles, 3 reps (smoke test)\n"
               "  --json PATH         write results as JSON (default bench_collide_meshes.json)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args("bench_collide_meshes", argc, argv);
  const bool parsed = parseCommonOptions(args, o, usage, [&] {
    if (args.is("--obj")) return taken(args.text(o.obj));
    if (args.is("--no-vulkan")) return setFlag(o.vulkan, false);
    if (args.is("--thread-time")) return setFlag(o.threadTime, true);
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
    owner = createContext("bench_collide_meshes", o.device);
    if (!owner) return 1;
  }
  const std::string date = utcDate();
  std::string deviceLine = "no Vulkan device (--no-vulkan)";
  if (owner) {
    const DeviceInfo& dev = owner->deviceInfo();
    deviceLine = "device '" + dev.name + "' (" + dev.driverName + " " + dev.driverInfo + "), Vulkan " +
                 apiVersionString(dev.apiVersion);
  }
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
            std::snprintf(buf, sizeof buf, "max |dp| %.2g vs scalar ", worst);
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
        if (!continuous) {
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
  if (owner) s += jsonDeviceFields(owner->deviceInfo());
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
