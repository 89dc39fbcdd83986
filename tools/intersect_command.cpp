// vkcollide intersect: the intersection of two triangle meshes read from OBJ files (both in the same
// space), intersectMeshes (include/vkcollide/mesh_intersection.h) on one CPU backend, written as a
// curves file (saveCurves, include/vkcollide/curves_file.h) and summed up on stdout. --compare runs both
// CPU backends (and the threaded SIMD call) and checks that they give the same result bit for bit;
// --repeat K runs the chosen backend K times and checks that every run gives the first one's result.
// Vulkan is not a backend of this query: `--backend vulkan` is a usage error that says so.
//
// Exit codes (those of the scene and query commands): 0 success; 1 a run failed, backends differ or a
// run differs from the first; 2 usage errors and unreadable meshes (nothing is written then).
#include "intersect_command.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "vkcollide/curves_file.h"  // saveCurves: a separate library, vkcollide::scene
#include "vkcollide/scene.h"        // loadObjMesh: the same
#include "vkcollide/vkcollide.h"

#include "tool_common.h"

namespace vkc::tool {

namespace {

int usageError(const std::string& message) {
  std::fprintf(stderr, "vkcollide: %s\n%s", message.c_str(), intersectUsage());
  return kExitUsage;
}

struct Options {
  std::string out;
  Backend backend = Backend::kCpuSimd;
  uint32_t threads = 1;
  uint32_t repeat = 1;
  bool compare = false;
};

Result<MeshIntersection> run(const TriangleMeshView& a, const TriangleMeshView& b, Backend backend,
                             const CpuExecutor* pool) {
  return pool != nullptr ? intersectMeshes(a, b, backend, *pool) : intersectMeshes(a, b, backend);
}

}  // namespace

const char* intersectUsage() {
  return "       vkcollide intersect A.obj B.obj [--backend cpu|cpu-scalar] [--threads N] [--compare] [--repeat K] "
         "[--out CURVES]\n"
         "       (the intersection curves of two triangle meshes in the same space, on the CPU: docs/mesh-collision.md)\n";
}

int intersectCommand(int argc, char** argv) {
  Options o;
  std::vector<std::string> files;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (a == "--backend") {
      if (!hasValue) return usageError("--backend needs a value");
      const std::string v = argv[++i];
      if (v == "cpu" || v == "cpu-simd") {
        o.backend = Backend::kCpuSimd;
      } else if (v == "cpu-scalar") {
        o.backend = Backend::kCpuScalar;
      } else if (v == "vulkan") {
        return usageError("intersect: --backend vulkan: mesh intersection runs on the CPU only (kCpuScalar, kCpuSimd)");
      } else {
        return usageError("--backend: unknown backend '" + v + "' (cpu, cpu-scalar)");
      }
    } else if (a == "--threads") {
      if (!hasValue || !parseCount(argv[++i], 1, kMaxCpuThreads, o.threads))
        return usageError("--threads needs a count from 1 to " + std::to_string(kMaxCpuThreads));
    } else if (a == "--repeat") {
      if (!hasValue || !parseCount(argv[++i], 1, 1000000, o.repeat)) return usageError("--repeat needs a count >= 1");
    } else if (a == "--out") {
      if (!hasValue) return usageError("--out needs a path");
      o.out = argv[++i];
    } else if (a == "--compare") {
      o.compare = true;
    } else if (!a.empty() && a[0] == '-') {
      return usageError("intersect: unknown option '" + a + "'");
    } else {
      files.push_back(a);
    }
  }
  if (files.size() != 2) return usageError("intersect needs two OBJ files");
  SceneMesh meshes[2];
  for (int k = 0; k < 2; ++k) {
    if (Status s = loadObjMesh(files[k], meshes[k]); !s) {
      std::fprintf(stderr, "vkcollide: %s\n", s.message().c_str());
      return kExitUsage;
    }
  }
  const TriangleMeshView a{meshes[0].vertices, meshes[0].indices}, b{meshes[1].vertices, meshes[1].indices};
  std::optional<CpuExecutor> pool;
  if (o.threads > 1) {
    Result<CpuExecutor> created = CpuExecutor::create(o.threads);
    if (!created) {
      std::fprintf(stderr, "vkcollide: %s\n", created.message().c_str());
      return kExitFailed;
    }
    pool = std::move(created.value());
  }
  const CpuExecutor* executor = pool ? &*pool : nullptr;
  Result<MeshIntersection> first = run(a, b, o.backend, executor);
  if (!first) {
    std::fprintf(stderr, "vkcollide: %s: %s\n", toString(o.backend), first.message().c_str());
    return kExitFailed;
  }
  int status = kExitOk;
  for (uint32_t r = 1; r < o.repeat; ++r) {
    Result<MeshIntersection> again = run(a, b, o.backend, executor);
    const std::string d = again ? firstBitwiseDifference(*again, *first) : again.message();
    if (!d.empty()) {
      std::printf("%s: run %u differs from the first: %s\n", toString(o.backend), r + 1, d.c_str());
      status = kExitFailed;
      break;
    }
  }
  std::printf("%s: %zu + %zu triangles: %zu intersecting pairs (%u coplanar), %zu curves (%zu points), %zu touching "
              "points, %s\n",
              toString(o.backend), meshes[0].indices.size() / 3, meshes[1].indices.size() / 3, first->pairs.size(),
              first->coplanarPairs, first->curves.size(), first->curvePoints.size(), first->touchingPoints.size(),
              toString(first->shape));
  if (o.compare) {
    struct Other {
      Backend backend;
      const CpuExecutor* executor;
      const char* name;
    };
    std::vector<Other> others = {{Backend::kCpuScalar, nullptr, "cpu-scalar"}, {Backend::kCpuSimd, nullptr, "cpu-simd"}};
    if (executor != nullptr) others.push_back({Backend::kCpuSimd, executor, "cpu-simd on the threads"});
    for (const Other& other : others) {
      if (other.backend == o.backend && other.executor == executor) continue;  // the run above
      Result<MeshIntersection> r = run(a, b, other.backend, other.executor);
      const std::string d = r ? firstBitwiseDifference(*r, *first) : r.message();
      const std::string verdict = d.empty() ? "bitwise equal" : r ? "DIFFERS: " + d : d;
      std::printf("%s: %s\n", other.name, verdict.c_str());
      if (!d.empty()) status = kExitFailed;
    }
  }
  if (!o.out.empty()) {
    if (Status s = saveCurves(toCurvesFile(*first, toString(o.backend)), o.out); !s) {
      std::fprintf(stderr, "vkcollide: %s\n", s.message().c_str());
      return kExitFailed;
    }
    std::printf("wrote %s\n", o.out.c_str());
  }
  return status;
}

}  // namespace vkc::tool
