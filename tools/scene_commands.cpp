// vkcollide step / compare / stages: one collision iteration of a scene file (docs/scene-format.md)
// on a backend, written back as a scene; or on every backend, compared with the CPU scalar reference.
//
// One iteration is a fixed list of stages (kStages), each enabled by the scene: shape collision
// (any cloth with spheres or convexes), mesh collision (any cloth that lists meshes, version 2
// scenes), self collision (settings.selfCollision), inter collision (settings.interCollision). A stage this build does not have yet is never skipped silently: a scene
// that enables it is refused (exit 2) unless the user skips that stage explicitly (--skip STAGE).
//
// `step` chains the stages on one backend (shapes, then meshes, then self collision, then inter
// collision, each on the particles the one before left). The scene is one iteration: the meshes move
// over all of it (a rigid mesh from prevTransform to transform, a deforming one from prevVertices to
// vertices), as the shapes do from prevSpheres to spheres (alpha 0 .. 1); cloths meet the meshes
// through their own translation and rotation (collideSceneMeshes). `compare` runs every stage of every backend on the CPU scalar
// reference's result of the stage before (see compareCommand) and checks positions within the stage's
// tolerance and the integer by-products (shape masks; self keys, pairs and neighbour counts; inter
// cloth pairs, marked particles and contact counts) exactly, per cloth; for meshes the per-particle
// contact counts and last triangles are reported (equal except within rounding, not a failure). Both print the scene's
// colliders (spheres, capsules, planes, convexes) before they run.
//
// Exit codes: 0 success; 1 a run failed, results differ beyond tolerance, or a backend is not
// deterministic; 2 usage errors and bad scenes (nothing is written then).
//
// Test hooks of `compare` (not in the usage text): --perturb-backend NAME DELTA adds DELTA to the x
// of every particle in that backend's result of every stage, --perturb-mask NAME flips a bit of its
// shape grid masks, --perturb-self NAME keys|pairs|counts doctors its self-collision integers (flips
// a bit of the first sorted key, drops the last pair, or adds one to particle 0's neighbour count),
// --perturb-inter NAME pairs|marked|contacts doctors its inter-collision integers (drops the last
// cloth pair or the last marked particle, or adds one to particle 0's contact count),
// and --perturb-stage STAGE limits these to one stage, so that tests can see compare fail.
#include "scene_commands.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vkcollide/scene.h"  // a separate library: vkcollide::scene
#include "vkcollide/vkcollide.h"

#include "tool_common.h"
#include "tool_context.h"

namespace vkc::tool {

namespace {

// ---- The stages of one iteration ------------------------------------------------------------

enum class StageId { kShapes, kMeshes, kSelf, kInter };


struct StageDesc {
  StageId id;
  const char* name;
  const char* enabledBy;  // what in the scene turns it on
  bool inThisBuild;       // false until the stage is implemented: scenes enabling it are refused
};

constexpr StageDesc kStages[] = {
    {StageId::kShapes, "shapes", "a cloth with spheres or convexes", true},
    {StageId::kMeshes, "meshes", "a cloth that lists meshes (version 2)", true},
    {StageId::kSelf, "self", "settings.selfCollision", true},
    {StageId::kInter, "inter", "settings.interCollision", true},
};

bool stageEnabled(StageId id, const Scene& scene) {
  switch (id) {
    case StageId::kShapes:
      return std::any_of(scene.cloths.begin(), scene.cloths.end(),
                         [](const SceneCloth& c) { return !c.spheres.empty() || !c.convexes.empty(); });
    case StageId::kMeshes: return sceneHasMeshCollision(scene);
    case StageId::kSelf: return scene.settings.selfCollision.has_value();
    case StageId::kInter: return scene.settings.interCollision.has_value();
  }
  return false;
}

const StageDesc* findStage(const std::string& name) {
  for (const StageDesc& s : kStages) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

// The stages the scene enables, in order, less those the user skips explicitly (--skip); an error
// naming the first one this build lacks.
Result<std::vector<const StageDesc*>> plannedStages(const Scene& scene, const std::vector<const StageDesc*>& skip) {
  std::vector<const StageDesc*> stages;
  for (const StageDesc& s : kStages) {
    if (!stageEnabled(s.id, scene)) continue;
    if (std::find(skip.begin(), skip.end(), &s) != skip.end()) continue;
    if (!s.inThisBuild) {
      return Error{ErrorCode::kUnsupported, std::string("the scene enables the ") + s.name + " collision stage (" +
                                                s.enabledBy + "), which this build does not have yet (--skip " +
                                                s.name + " runs the other stages)"};
    }
    stages.push_back(&s);
  }
  return stages;
}

// Checks what the enabled stages read, before anything runs.
Status validateStages(const Scene& scene, const std::vector<const StageDesc*>& stages, SceneBuffers& buffers) {
  for (const StageDesc* s : stages) {
    if (s->id == StageId::kShapes) {
      const Status st = validate(buffers.shapeInput(shapeCollisionSettings(scene.settings)));
      if (!st) return st;
    } else if (s->id == StageId::kMeshes) {
      // The world-space input the stage will get (validate() changes nothing).
      const Status st = collideSceneMeshes(buffers, buffers.meshes, meshCollisionSettings(scene.settings), {},
                                           [](const MeshCollisionInput& in) { return validate(in); });
      if (!st) return Error{st.error().code, "mesh collision: " + st.message()};
    } else if (s->id == StageId::kSelf) {
      const Status st = validate(buffers.selfInput(selfCollisionSettings(scene.settings)));
      if (!st) return Error{st.error().code, "self collision: " + st.message()};
    } else if (s->id == StageId::kInter) {
      const Status st = validate(buffers.interInput(interCollisionSettings(scene.settings)));
      if (!st) return Error{st.error().code, "inter collision: " + st.message()};
    }
  }
  return {};
}

// What a stage left behind, for comparisons.
struct StageOutput {
  std::vector<Float4> particles;
  std::vector<Float4> prevParticles;
  std::vector<uint32_t> masks;      // shapes: the grid masks (ShapeCollisionDebug), cloths concatenated
  std::vector<uint32_t> maskWords;  // shapes: per cloth
  std::vector<uint32_t> convexBits; // shapes: the convexes kept by the cull, cloths concatenated
  SelfCollisionDebug self;          // self: sorted keys, pairs, neighbour counts (with Runner's debug on)
  InterCollisionDebug inter;       // inter: cloth pairs, marked particles, contacts (with Runner's debug on)
  MeshCollisionDebug meshes;        // meshes: contacts and last triangle per particle (with Runner's debug on)
  double hostMs = 0;                // wall clock of the stage (Vulkan: upload, submit, wait, download)
  double gpuMs = -1;                // Vulkan: sum of the passes' GPU timestamps
  RecordStats stats;                // Vulkan: what the stage's record held (lastRecordStats)
};

// Runs stages on one backend, keeping device objects across runs.
class Runner {
 public:
  // `debug`: also collect each stage's integer by-products (shape masks, self keys and pairs, the
  // inter-collision report). The shape masks come at no cost; self collision lists its pairs in a
  // second pass (on Vulkan, a second submission outside the timed GPU passes, but inside the host
  // time); the inter report is read back from the stage's buffers (inside the host time).
  Runner(Backend backend, Context* context, bool debug) : backend_(backend), context_(context), debug_(debug) {}

  // Makes the device objects (pipelines, buffers) once, before the first timed run.
  Status createStages(const std::vector<const StageDesc*>& stages, const SceneBuffers& buffers) {
    if (backend_ != Backend::kVulkan) return {};
    for (const StageDesc* s : stages) {
      if (s->id == StageId::kShapes && !shapes_) {
        auto stage = ShapeCollisionStage::create(
            *context_, {buffers.cloths, static_cast<uint32_t>(buffers.particles.size()), buffers.colliders});
        if (!stage) return stage.error();
        shapes_ = std::move(*stage);
      } else if (s->id == StageId::kMeshes && !meshes_) {
        std::vector<MeshLayout> layouts;
        for (const CollisionMesh& m : buffers.meshes) {
          layouts.push_back({static_cast<uint32_t>(m.vertices.size()), static_cast<uint32_t>(m.indices.size() / 3),
                             m.motion, static_cast<uint32_t>(sizeof(Float4))});
        }
        MeshCollisionStageCreateInfo ci;
        ci.cloths = buffers.cloths;
        ci.particleCount = static_cast<uint32_t>(buffers.particles.size());
        ci.meshes = layouts;
        ci.clothMeshes = buffers.clothMeshes;
        auto stage = MeshCollisionStage::create(*context_, ci);
        if (!stage) return stage.error();
        meshes_ = std::move(*stage);
      } else if (s->id == StageId::kSelf && !self_) {
        SelfCollisionStageCreateInfo ci;
        ci.cloths = buffers.cloths;
        ci.particleCount = static_cast<uint32_t>(buffers.particles.size());
        ci.subsets = buffers.selfSubsets;
        ci.restPositions = !buffers.restPositions.empty();
        auto stage = SelfCollisionStage::create(*context_, ci);
        if (!stage) return stage.error();
        self_ = std::move(*stage);
      } else if (s->id == StageId::kInter && !inter_) {
        InterCollisionStageCreateInfo ci;
        ci.cloths = buffers.interCloths;
        ci.filters = buffers.interFilters;
        ci.particleCount = static_cast<uint32_t>(buffers.particles.size());
        auto stage = InterCollisionStage::create(*context_, ci);
        if (!stage) return stage.error();
        inter_ = std::move(*stage);
      }
    }
    return {};
  }

  // One stage on `buffers` (updated in place); `out` gets the result and the times.
  Status runStage(const Scene& scene, const StageDesc& stage, SceneBuffers& buffers, StageOutput& out) {
    out = {};
    const auto t0 = std::chrono::steady_clock::now();
    Status st;
    switch (stage.id) {
      case StageId::kShapes: st = runShapes(scene, buffers, out); break;
      case StageId::kMeshes: st = runMeshes(scene, buffers, out); break;
      case StageId::kSelf: st = runSelf(scene, buffers, out); break;
      case StageId::kInter: st = runInter(scene, buffers, out); break;
    }
    if (!st) return st;
    out.hostMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    out.particles = buffers.particles;
    out.prevParticles = buffers.prevParticles;
    return {};
  }

 private:
  Status runShapes(const Scene& scene, SceneBuffers& buffers, StageOutput& out) {
    const ShapeCollisionInput input = buffers.shapeInput(shapeCollisionSettings(scene.settings));
    ShapeCollisionDebug debug;
    if (backend_ == Backend::kVulkan) {
      const Status st = shapes_->run(input, &debug);
      if (!st) return st;
      double ns = 0;
      for (const PassTiming& t : shapes_->timings()) ns += t.ns;
      out.gpuMs = ns * 1e-6;
      out.stats = shapes_->lastRecordStats();
    } else {
      const Status st = collideShapesCpu(input, backend_, &debug);
      if (!st) return st;
    }
    out.masks = std::move(debug.masks);
    out.maskWords = std::move(debug.maskWords);
    out.convexBits = std::move(debug.convexBits);
    return {};
  }

  // The scene's meshes (world space) against every cloth in its own space (collideSceneMeshes); every
  // run builds the tree (each repeat starts from the scene's input). On Vulkan the stage's timings and
  // record stats go into `out` like the other stages'.
  Status runMeshes(const Scene& scene, SceneBuffers& buffers, StageOutput& out) {
    MeshCollisionDebug* debug = debug_ ? &out.meshes : nullptr;
    MeshTree tree;
    tree.update = MeshTreeUpdate::kBuild;
    const MeshCollisionSettings settings = meshCollisionSettings(scene.settings);
    if (backend_ == Backend::kVulkan) {
      const Status st = collideSceneMeshes(buffers, buffers.meshes, settings, tree,
                                           [&](const MeshCollisionInput& in) { return meshes_->run(in, debug); });
      if (!st) return st;
      double ns = 0;
      for (const PassTiming& t : meshes_->timings()) ns += t.ns;
      out.gpuMs = ns * 1e-6;
      out.stats = meshes_->lastRecordStats();
      return {};
    }
    return collideSceneMeshes(buffers, buffers.meshes, settings, tree,
                              [&](const MeshCollisionInput& in) { return collideMeshesCpu(in, backend_, debug); });
  }

  Status runSelf(const Scene& scene, SceneBuffers& buffers, StageOutput& out) {
    const SelfCollisionInput input = buffers.selfInput(selfCollisionSettings(scene.settings));
    SelfCollisionDebug* debug = debug_ ? &out.self : nullptr;
    if (backend_ == Backend::kVulkan) {
      const Status st = self_->run(input, debug);
      if (!st) return st;
      double ns = 0;
      for (const PassTiming& t : self_->timings()) ns += t.ns;
      out.gpuMs = ns * 1e-6;
      out.stats = self_->lastRecordStats();
      return {};
    }
    return collideSelfCpu(input, backend_, debug);
  }

  Status runInter(const Scene& scene, SceneBuffers& buffers, StageOutput& out) {
    const InterCollisionInput input = buffers.interInput(interCollisionSettings(scene.settings));
    InterCollisionDebug* debug = debug_ ? &out.inter : nullptr;
    if (backend_ == Backend::kVulkan) {
      const Status st = inter_->run(input, debug);
      if (!st) return st;
      double ns = 0;
      for (const PassTiming& t : inter_->timings()) ns += t.ns;
      out.gpuMs = ns * 1e-6;
      out.stats = inter_->lastRecordStats();
      return {};
    }
    return collideInterCpu(input, backend_, debug);
  }

  Backend backend_;
  Context* context_;
  bool debug_;
  std::unique_ptr<ShapeCollisionStage> shapes_;
  std::unique_ptr<MeshCollisionStage> meshes_;
  std::unique_ptr<SelfCollisionStage> self_;
  std::unique_ptr<InterCollisionStage> inter_;
};

bool sameBits(const std::vector<Float4>& a, const std::vector<Float4>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(Float4)) == 0);
}

bool sameSelfDebug(const SelfCollisionDebug& a, const SelfCollisionDebug& b) {
  return a.sortedKeys == b.sortedKeys && a.sortedParticles == b.sortedParticles && a.clothFirstItem == b.clothFirstItem &&
         a.neighbourCounts == b.neighbourCounts && a.pairs == b.pairs && a.directedPairs == b.directedPairs;
}

// The report's integers, and its grid box bitwise (x, y, z of both corners).
bool sameInterDebug(const InterCollisionDebug& a, const InterCollisionDebug& b) {
  const float ga[6] = {a.gridBounds.lo.x, a.gridBounds.lo.y, a.gridBounds.lo.z,
                       a.gridBounds.hi.x, a.gridBounds.hi.y, a.gridBounds.hi.z};
  const float gb[6] = {b.gridBounds.lo.x, b.gridBounds.lo.y, b.gridBounds.lo.z,
                       b.gridBounds.hi.x, b.gridBounds.hi.y, b.gridBounds.hi.z};
  return a.clothPairs == b.clothPairs && a.marked == b.marked && a.contacts == b.contacts &&
         std::memcmp(ga, gb, sizeof ga) == 0;
}

bool sameOutputs(const std::vector<StageOutput>& a, const std::vector<StageOutput>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (!sameBits(a[k].particles, b[k].particles) || !sameBits(a[k].prevParticles, b[k].prevParticles) ||
        a[k].masks != b[k].masks || !sameSelfDebug(a[k].self, b[k].self) ||
        !sameInterDebug(a[k].inter, b[k].inter) || a[k].meshes.contacts != b[k].meshes.contacts ||
        a[k].meshes.lastTriangle != b[k].meshes.lastTriangle) {
      return false;
    }
  }
  return true;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Timing {
  std::vector<std::vector<double>> host, gpu;  // [stage][repeat]
};

// Runs `repeat` iterations. Without `stageInputs`, each iteration chains the stages from the scene's
// input (stage k reads stage k - 1's result) and `final` holds the buffers after the first one. With
// `stageInputs` (one per stage), every stage starts from its own given input instead and `final` is
// the last stage's result. Every repeat must give bitwise the same result (determinism), else
// kExitFailed with a message.
int runRepeated(Runner& runner, const Scene& scene, const std::vector<const StageDesc*>& stages,
                const SceneBuffers& input, const std::vector<SceneBuffers>* stageInputs, int repeat,
                const char* backendName, SceneBuffers& final, std::vector<StageOutput>& outputs, Timing& timing) {
  timing.host.assign(stages.size(), {});
  timing.gpu.assign(stages.size(), {});
  auto fail = [&](const Status& st) {
    std::fprintf(stderr, "vkcollide: %s: %s\n", backendName, st.message().c_str());
    return st.error().code == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  };
  if (const Status st = runner.createStages(stages, input); !st) return fail(st);
  for (int r = 0; r < repeat; ++r) {
    SceneBuffers b = input;
    std::vector<StageOutput> out(stages.size());
    for (size_t k = 0; k < stages.size(); ++k) {
      if (stageInputs != nullptr) b = (*stageInputs)[k];
      if (const Status st = runner.runStage(scene, *stages[k], b, out[k]); !st) return fail(st);
      timing.host[k].push_back(out[k].hostMs);
      if (out[k].gpuMs >= 0) timing.gpu[k].push_back(out[k].gpuMs);
    }
    if (r == 0) {
      final = std::move(b);
      outputs = std::move(out);
    } else if (!sameOutputs(out, outputs)) {
      std::fprintf(stderr, "vkcollide: %s: repeat %d gave a different result than the first run (not deterministic)\n",
                   backendName, r + 1);
      return kExitFailed;
    }
  }
  return kExitOk;
}

bool parseRepeat(const char* s, int& repeat) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 1 || v > 100000) return false;
  repeat = static_cast<int>(v);
  return true;
}

int usageError(const std::string& message) {
  std::fprintf(stderr, "vkcollide: %s\n%s", message.c_str(), sceneUsage());
  return kExitUsage;
}

// Loads the scene, plans and validates its stages. Returns kExitOk or the exit code to return.
int prepare(const std::string& path, const std::vector<const StageDesc*>& skip, Scene& scene,
            std::vector<const StageDesc*>& stages, SceneBuffers& buffers, double& loadMs) {
  const auto t0 = std::chrono::steady_clock::now();
  Result<Scene> loaded = loadScene(path);
  loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!loaded) {
    std::fprintf(stderr, "vkcollide: %s\n", loaded.message().c_str());
    return kExitUsage;
  }
  scene = std::move(*loaded);
  auto planned = plannedStages(scene, skip);
  if (!planned) {
    std::fprintf(stderr, "vkcollide: %s: %s\n", path.c_str(), planned.message().c_str());
    return kExitUsage;
  }
  stages = std::move(*planned);
  auto b = makeSceneBuffers(scene);
  if (!b) {
    std::fprintf(stderr, "vkcollide: %s: %s\n", path.c_str(), b.message().c_str());
    return kExitUsage;
  }
  buffers = std::move(*b);
  const Status st = validateStages(scene, stages, buffers);
  if (!st) {
    std::fprintf(stderr, "vkcollide: %s: %s\n", path.c_str(), st.message().c_str());
    return kExitUsage;
  }
  return kExitOk;
}

// "shapes, self" and the stages the scene enables that --skip left out.
std::string stageList(const Scene& scene, const std::vector<const StageDesc*>& stages,
                      const std::vector<const StageDesc*>& skip) {
  std::string s;
  for (const StageDesc* d : stages) s += (s.empty() ? "" : ", ") + std::string(d->name);
  if (s.empty()) s = "none (nothing collides)";
  std::string skipped;
  for (const StageDesc* d : skip) {
    if (stageEnabled(d->id, scene)) skipped += (skipped.empty() ? "" : ", ") + std::string(d->name);
  }
  if (!skipped.empty()) s += " (enabled but skipped: " + skipped + ")";
  return s;
}

size_t particleCount(const Scene& scene) {
  size_t n = 0;
  for (const SceneCloth& c : scene.cloths) n += c.particles.size();
  return n;
}

// "colliders: 2 spheres, 1 capsule, 7 planes in 2 convexes (1 moving)": the scene's colliders, all
// cloths together; a plane or sphere is moving when its start differs from its end.
std::string colliderSummary(const Scene& scene) {
  size_t spheres = 0, capsules = 0, planes = 0, convexes = 0, movingSpheres = 0, movingPlanes = 0;
  auto moving = [](const std::vector<Float4>& end, const std::vector<Float4>& start, size_t k) {
    if (k >= start.size()) return false;
    const Float4& a = start[k];
    const Float4& b = end[k];
    return a.x != b.x || a.y != b.y || a.z != b.z || a.w != b.w;
  };
  for (const SceneCloth& c : scene.cloths) {
    spheres += c.spheres.size();
    capsules += c.capsules.size();
    planes += c.planes.size();
    convexes += c.convexes.size();
    for (size_t k = 0; k < c.spheres.size(); ++k) movingSpheres += moving(c.spheres, c.prevSpheres, k);
    for (size_t k = 0; k < c.planes.size(); ++k) movingPlanes += moving(c.planes, c.prevPlanes, k);
  }
  auto count = [](size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::string s = "colliders: " + count(spheres, "sphere", "spheres");
  if (movingSpheres > 0) s += " (" + std::to_string(movingSpheres) + " moving)";
  s += ", " + count(capsules, "capsule", "capsules") + ", " + count(planes, "plane", "planes");
  if (movingPlanes > 0) s += " (" + std::to_string(movingPlanes) + " moving)";
  s += " in " + count(convexes, "convex", "convexes");
  if (!scene.meshes.empty()) {
    size_t triangles = 0, rigid = 0, deforming = 0;
    for (const SceneMesh& m : scene.meshes) {
      triangles += m.indices.size() / 3;
      rigid += m.motion() == MeshMotion::kRigid;
      deforming += m.motion() == MeshMotion::kDeforming;
    }
    s += "; " + count(scene.meshes.size(), "mesh", "meshes") + " (" + count(triangles, "triangle", "triangles");
    if (rigid > 0) s += ", " + std::to_string(rigid) + " rigid";
    if (deforming > 0) s += ", " + std::to_string(deforming) + " deforming";
    s += ")";
  }
  return s;
}

}  // namespace

// `step --stats`: each stage's record as counted (RecordStats) and the H100 cost model's projection.
static void printRecordStats(const std::vector<const StageDesc*>& stages, const std::vector<StageOutput>& outputs) {
  std::printf("  record stats (counted as recorded; bytes are declared buffer traffic):\n");
  std::printf("  %-7s %10s %9s %8s %9s %10s %12s %12s %14s\n", "stage", "dispatches", "dependent", "barriers",
              "transfers", "workgroups", "read bytes", "write bytes", "H100 model us");
  RecordStats total;
  for (size_t k = 0; k < stages.size() && k < outputs.size(); ++k) {
    const RecordStats& s = outputs[k].stats;
    total += s;
    std::printf("  %-7s %10u %9u %8u %9u %10llu %12llu %12llu %14.2f\n", stages[k]->name, s.dispatches,
                s.dependentDispatches, s.barriers, s.transfers, static_cast<unsigned long long>(s.workgroups),
                static_cast<unsigned long long>(s.bytesRead), static_cast<unsigned long long>(s.bytesWritten),
                projectSeconds(s, kH100CostModel) * 1e6);
  }
  std::printf("  %-7s %10u %9u %8u %9u %10llu %12llu %12llu %14.2f\n", "total", total.dispatches,
              total.dependentDispatches, total.barriers, total.transfers,
              static_cast<unsigned long long>(total.workgroups), static_cast<unsigned long long>(total.bytesRead),
              static_cast<unsigned long long>(total.bytesWritten), projectSeconds(total, kH100CostModel) * 1e6);
  std::printf("  (model, not a measurement: %s; see README, Cost figures)\n", kH100CostModel.source);
}

const char* sceneUsage() {
  static const std::string usage =
      std::string("       vkcollide step SCENE --backend vulkan|cpu|cpu-scalar ") + kContextOptionsUsage +
      " [--repeat K] [--skip STAGE]... [--stats] --out OUT\n"
      "       vkcollide compare SCENE " + kContextOptionsUsage + " [--repeat K] [--skip STAGE]...\n"
      "       vkcollide stages\n"
      "       (one iteration runs the stages the scene enables in this order: shapes -> meshes -> self -> inter)\n";
  return usage.c_str();
}

int stagesCommand() {
  std::printf("stages of one collision iteration, in order (each on the particles the one before left):\n");
  for (const StageDesc& s : kStages) {
    std::printf("  %-7s %-11s enabled by %s\n", s.name, s.inThisBuild ? "available" : "not built", s.enabledBy);
  }
  return kExitOk;
}

int stepCommand(int argc, char** argv) {
  std::string scenePath, outPath;
  std::optional<Backend> backend;
  ContextOptions contextOptions;
  int repeat = 1;
  bool stats = false;
  std::vector<const StageDesc*> skip;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (a == "--stats") {
      stats = true;
    } else if (a == "--backend" && hasValue) {
      backend = parseBackend(argv[++i]);
      if (!backend) return usageError(std::string("unknown backend '") + argv[i] + "'");
    } else if (parseContextOption(argc, argv, i, contextOptions)) {
    } else if (a == "--repeat" && hasValue) {
      if (!parseRepeat(argv[++i], repeat)) return usageError(std::string("--repeat: expected 1 .. 100000, found '") + argv[i] + "'");
    } else if (a == "--out" && hasValue) {
      outPath = argv[++i];
    } else if (a == "--skip" && hasValue) {
      const StageDesc* st = findStage(argv[++i]);
      if (!st) return usageError(std::string("--skip: unknown stage '") + argv[i] + "' (vkcollide stages lists them)");
      skip.push_back(st);
    } else if (!a.empty() && a[0] != '-' && scenePath.empty()) {
      scenePath = a;
    } else {
      return usageError("step: unexpected argument '" + a + "'");
    }
  }
  if (scenePath.empty()) return usageError("step: no scene file");
  if (!backend) return usageError("step: --backend is required");
  if (outPath.empty()) return usageError("step: --out is required");
  if (stats && *backend != Backend::kVulkan) {
    return usageError("step: --stats needs --backend vulkan (it counts the recorded Vulkan commands)");
  }

  Scene scene;
  std::vector<const StageDesc*> stages;
  SceneBuffers input;
  double loadMs = 0;
  if (const int rc = prepare(scenePath, skip, scene, stages, input, loadMs); rc != kExitOk) return rc;

  ToolContext context;
  if (*backend == Backend::kVulkan) {
    std::string error;
    context = createContext(contextOptions, &error);
    if (!context) {
      std::fprintf(stderr, "vkcollide: vulkan: %s\n", error.c_str());
      return kExitFailed;
    }
  }
  const char* name = toString(*backend);
  std::printf("step: %s (loaded in %.1f ms): %zu cloths, %zu particles; stages: %s; backend %s%s%s\n",
              scenePath.c_str(), loadMs, scene.cloths.size(), particleCount(scene), stageList(scene, stages, skip).c_str(), name, context ? " on " : "",
              context ? context->deviceInfo().name.c_str() : "");
  std::printf("  %s\n", colliderSummary(scene).c_str());

  Runner runner(*backend, context.get(), /*debug=*/false);
  SceneBuffers result;
  std::vector<StageOutput> outputs;
  Timing timing;
  if (const int rc = runRepeated(runner, scene, stages, input, nullptr, repeat, name, result, outputs, timing);
      rc != kExitOk) {
    return rc;
  }
  if (context && context->validationMessageCount() > 0) {
    std::fprintf(stderr, "vkcollide: %llu validation message(s)\n",
                 static_cast<unsigned long long>(context->validationMessageCount()));
    return kExitFailed;
  }
  for (size_t k = 0; k < stages.size(); ++k) {
    std::printf("  %-7s %9.3f ms host", stages[k]->name, median(timing.host[k]));
    if (!timing.gpu[k].empty()) std::printf(", %9.3f ms GPU", median(timing.gpu[k]));
    std::printf("  (median of %d)\n", repeat);
  }
  if (stats) printRecordStats(stages, outputs);
  size_t moved = 0;
  for (size_t i = 0; i < input.particles.size(); ++i) {
    moved += std::memcmp(&input.particles[i], &result.particles[i], sizeof(Float4)) != 0;
  }
  storeSceneBuffers(result, scene);
  const auto s0 = std::chrono::steady_clock::now();
  const Status st = saveScene(scene, outPath);
  const double saveMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s0).count();
  if (!st) {
    std::fprintf(stderr, "vkcollide: %s\n", st.message().c_str());
    return kExitFailed;
  }
  std::printf("  %zu of %zu particles changed; wrote %s in %.1f ms\n", moved, input.particles.size(), outPath.c_str(),
              saveMs);
  return kExitOk;
}

namespace {

// Test hooks of compare: doctored results of one backend, so that tests see compare fail.
struct Perturb {
  std::optional<Backend> positions;  // --perturb-backend NAME DELTA: x += DELTA of every particle
  float delta = 0;
  std::optional<Backend> mask;       // --perturb-mask NAME: flip a bit of the shape grid masks
  std::optional<Backend> self;       // --perturb-self NAME keys|pairs|counts: doctor the self integers
  std::string selfWhat;
  std::optional<Backend> inter;      // --perturb-inter NAME pairs|marked|contacts: doctor the inter integers
  std::string interWhat;
  const StageDesc* stage = nullptr;  // --perturb-stage STAGE: only that stage's results (default: all)

  void apply(Backend b, const StageDesc& stageDesc, StageOutput& out) const {
    if (stage != nullptr && stage != &stageDesc) return;
    if (positions == b) {
      for (Float4& p : out.particles) p.x += delta;
    }
    if (mask == b && !out.masks.empty()) out.masks[0] ^= 1u;
    if (self == b && stageDesc.id == StageId::kSelf) {
      SelfCollisionDebug& d = out.self;
      if (selfWhat == "keys" && !d.sortedKeys.empty()) d.sortedKeys[0] ^= 1u;
      if (selfWhat == "pairs" && !d.pairs.empty()) d.pairs.pop_back();
      if (selfWhat == "counts" && !d.neighbourCounts.empty()) d.neighbourCounts[0] += 1;
    }
    if (inter == b && stageDesc.id == StageId::kInter) {
      InterCollisionDebug& r = out.inter;
      if (interWhat == "pairs" && !r.clothPairs.empty()) r.clothPairs.pop_back();
      if (interWhat == "marked" && !r.marked.empty()) r.marked.pop_back();
      if (interWhat == "contacts" && !r.contacts.empty()) r.contacts[0] += 1;
    }
  }
};

// Shape stage, one cloth: are the cloth's grid masks equal? ("-" without masks.)
std::string compareMasks(const StageOutput& a, const StageOutput& e, size_t c, int& failures) {
  if (e.maskWords.empty()) return "-";
  size_t offset = 0;
  for (size_t q = 0; q < c; ++q) offset += size_t{48} * e.maskWords[q];
  const size_t words = size_t{48} * e.maskWords[c];
  const bool layoutSame = a.maskWords == e.maskWords && a.masks.size() == e.masks.size();
  const bool equal = layoutSame && offset + words <= e.masks.size() &&
                     std::equal(e.masks.begin() + static_cast<std::ptrdiff_t>(offset),
                                e.masks.begin() + static_cast<std::ptrdiff_t>(offset + words),
                                a.masks.begin() + static_cast<std::ptrdiff_t>(offset));
  if (!equal) ++failures;
  return equal ? "masks equal" : "masks DIFFER";
}

// Shape stage, one cloth with convexes: the convexes the cull kept (ShapeCollisionDebug::convexBits).
// Reported, not counted as a failure: a convex within rounding of the cull margin may be kept on one
// backend and culled on another, and either way no particle is inside it (collide_shapes.h).
std::string compareConvexBits(const StageOutput& a, const StageOutput& e, const Scene& scene, size_t c) {
  const size_t convexes = scene.cloths[c].convexes.size();
  if (convexes == 0) return "";
  size_t offset = 0;
  for (size_t q = 0; q < c; ++q) offset += (scene.cloths[q].convexes.size() + 31) / 32;
  const size_t words = (convexes + 31) / 32;
  if (a.convexBits.size() != e.convexBits.size() || offset + words > e.convexBits.size()) {
    return ", convexes kept: no bits";
  }
  size_t kept = 0;
  bool equal = true;
  for (size_t w = offset; w < offset + words; ++w) {
    kept += static_cast<size_t>(std::popcount(e.convexBits[w]));
    equal = equal && a.convexBits[w] == e.convexBits[w];
  }
  return ", convexes kept " + std::string(equal ? "equal (" : "differ, at the cull margin (") + std::to_string(kept) +
         " of " + std::to_string(convexes) + ")";
}

// Self stage, one cloth: are its sorted keys (with their particles), its pair set and its particles'
// neighbour counts exactly equal?
std::string compareSelf(const StageOutput& a, const StageOutput& e, size_t c, ClothRange range, int& failures) {
  const SelfCollisionDebug& x = a.self;
  const SelfCollisionDebug& y = e.self;
  // The cloth's item slice [first, last) of the sorted arrays.
  auto slice = [c](const SelfCollisionDebug& d, size_t& first, size_t& last) {
    if (c >= d.clothFirstItem.size() || d.sortedKeys.size() != d.sortedParticles.size()) return false;
    first = d.clothFirstItem[c];
    last = c + 1 < d.clothFirstItem.size() ? d.clothFirstItem[c + 1] : d.sortedKeys.size();
    return first <= last && last <= d.sortedKeys.size();
  };
  size_t xf = 0, xl = 0, yf = 0, yl = 0;
  bool keys = slice(x, xf, xl) && slice(y, yf, yl) && xl - xf == yl - yf;
  for (size_t k = 0; keys && k < yl - yf; ++k) {
    keys = x.sortedKeys[xf + k] == y.sortedKeys[yf + k] && x.sortedParticles[xf + k] == y.sortedParticles[yf + k];
  }
  // The pairs of this cloth: both particles lie in its range (pairs never cross cloths).
  auto clothPairs = [range](const SelfCollisionDebug& d) {
    std::vector<std::array<uint32_t, 2>> p;
    for (const auto& q : d.pairs) {
      if (q[0] >= range.first && q[0] - range.first < range.count) p.push_back(q);
    }
    return p;
  };
  const auto xp = clothPairs(x), yp = clothPairs(y);
  const bool pairs = xp == yp;
  bool counts = x.neighbourCounts.size() == y.neighbourCounts.size() &&
                size_t{range.first} + range.count <= y.neighbourCounts.size();
  for (uint32_t j = 0; counts && j < range.count; ++j) {
    counts = x.neighbourCounts[range.first + j] == y.neighbourCounts[range.first + j];
  }
  failures += !keys + !pairs + !counts;
  return std::string(keys ? "keys equal" : "keys DIFFER") + (pairs ? ", pairs equal (" : ", pairs DIFFER (") +
         std::to_string(yp.size()) + (counts ? "), counts equal" : "), counts DIFFER");
}

// Inter collision reuses self collision's response and machinery (inter_collision.h) and its
// tolerance, kSelfCollisionTolerance (the inter-collision conformance tests use the same 1e-5).
float stageTolerance(StageId id) {
  switch (id) {
    case StageId::kShapes: return kShapeCollisionTolerance;
    case StageId::kMeshes: return kMeshCollisionTolerance;
    case StageId::kSelf:
    case StageId::kInter: break;
  }
  return kSelfCollisionTolerance;
}

// Mesh stage, one cloth: its particles' contact counts and last triangles (MeshCollisionDebug).
// Reported, not counted as a failure: collide_meshes.h allows them to differ for a particle whose
// contacts are within rounding of each other (the positions are what must agree).
std::string compareMeshes(const StageOutput& a, const StageOutput& e, ClothRange range) {
  const MeshCollisionDebug& x = a.meshes;
  const MeshCollisionDebug& y = e.meshes;
  const size_t end = size_t{range.first} + range.count;
  if (x.contacts.size() < end || y.contacts.size() < end || x.lastTriangle.size() < end || y.lastTriangle.size() < end) {
    return "contacts: no debug output";
  }
  size_t differ = 0, touched = 0;
  for (size_t i = range.first; i < end; ++i) {
    touched += y.contacts[i] > 0;
    differ += x.contacts[i] != y.contacts[i] || x.lastTriangle[i] != y.lastTriangle[i];
  }
  if (differ == 0) return "contacts equal (" + std::to_string(touched) + " particles)";
  return "contacts differ for " + std::to_string(differ) + " of " + std::to_string(touched) +
         " particles (within rounding; positions decide)";
}

// Inter stage, one cloth: are the cloth pairs it takes part in, its marked particles and its
// particles' contact counts exactly equal?
std::string compareInter(const StageOutput& a, const StageOutput& e, size_t c, ClothRange range, int& failures) {
  const InterCollisionDebug& x = a.inter;
  const InterCollisionDebug& y = e.inter;
  auto clothPairs = [c](const InterCollisionDebug& r) {
    std::vector<InterClothPair> p;
    for (const InterClothPair& q : r.clothPairs) {
      if (q.a == c || q.b == c) p.push_back(q);
    }
    return p;
  };
  auto clothMarked = [range](const InterCollisionDebug& r) {
    std::vector<uint32_t> m;
    for (uint32_t i : r.marked) {
      if (i >= range.first && i - range.first < range.count) m.push_back(i);
    }
    return m;
  };
  const auto xp = clothPairs(x), yp = clothPairs(y);
  const auto xm = clothMarked(x), ym = clothMarked(y);
  const bool pairs = xp == yp;
  const bool marked = xm == ym;
  bool contacts = x.contacts.size() == y.contacts.size() && size_t{range.first} + range.count <= y.contacts.size();
  for (uint32_t j = 0; contacts && j < range.count; ++j) {
    contacts = x.contacts[range.first + j] == y.contacts[range.first + j];
  }
  failures += !pairs + !marked + !contacts;
  return std::string(pairs ? "cloth pairs equal (" : "cloth pairs DIFFER (") + std::to_string(yp.size()) +
         (marked ? "), marked equal (" : "), marked DIFFER (") + std::to_string(ym.size()) +
         (contacts ? "), contacts equal" : "), contacts DIFFER");
}

}  // namespace

int compareCommand(int argc, char** argv) {
  std::string scenePath;
  ContextOptions contextOptions;
  int repeat = 1;
  std::vector<const StageDesc*> skip;
  Perturb perturb;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (parseContextOption(argc, argv, i, contextOptions)) {
    } else if (a == "--repeat" && hasValue) {
      if (!parseRepeat(argv[++i], repeat)) return usageError(std::string("--repeat: expected 1 .. 100000, found '") + argv[i] + "'");
    } else if (a == "--skip" && hasValue) {
      const StageDesc* st = findStage(argv[++i]);
      if (!st) return usageError(std::string("--skip: unknown stage '") + argv[i] + "' (vkcollide stages lists them)");
      skip.push_back(st);
    } else if (a == "--perturb-backend" && i + 2 < argc) {
      perturb.positions = parseBackend(argv[++i]);
      perturb.delta = std::strtof(argv[++i], nullptr);
      if (!perturb.positions) return usageError(std::string("unknown backend '") + argv[i - 1] + "'");
    } else if (a == "--perturb-mask" && hasValue) {
      perturb.mask = parseBackend(argv[++i]);
      if (!perturb.mask) return usageError(std::string("unknown backend '") + argv[i] + "'");
    } else if (a == "--perturb-self" && i + 2 < argc) {
      perturb.self = parseBackend(argv[++i]);
      perturb.selfWhat = argv[++i];
      if (!perturb.self) return usageError(std::string("unknown backend '") + argv[i - 1] + "'");
      if (perturb.selfWhat != "keys" && perturb.selfWhat != "pairs" && perturb.selfWhat != "counts") {
        return usageError("--perturb-self: expected keys, pairs or counts, found '" + perturb.selfWhat + "'");
      }
    } else if (a == "--perturb-inter" && i + 2 < argc) {
      perturb.inter = parseBackend(argv[++i]);
      perturb.interWhat = argv[++i];
      if (!perturb.inter) return usageError(std::string("unknown backend '") + argv[i - 1] + "'");
      if (perturb.interWhat != "pairs" && perturb.interWhat != "marked" && perturb.interWhat != "contacts") {
        return usageError("--perturb-inter: expected pairs, marked or contacts, found '" + perturb.interWhat + "'");
      }
    } else if (a == "--perturb-stage" && hasValue) {
      perturb.stage = findStage(argv[++i]);
      if (!perturb.stage) return usageError(std::string("--perturb-stage: unknown stage '") + argv[i] + "'");
    } else if (!a.empty() && a[0] != '-' && scenePath.empty()) {
      scenePath = a;
    } else {
      return usageError("compare: unexpected argument '" + a + "'");
    }
  }
  if (scenePath.empty()) return usageError("compare: no scene file");

  Scene scene;
  std::vector<const StageDesc*> stages;
  SceneBuffers input;
  double loadMs = 0;
  if (const int rc = prepare(scenePath, skip, scene, stages, input, loadMs); rc != kExitOk) return rc;

  std::string vulkanError;
  ToolContext context = createContext(contextOptions, &vulkanError);
  std::vector<Backend> backends = {Backend::kCpuScalar, Backend::kCpuSimd};  // the reference first
  if (context) backends.push_back(Backend::kVulkan);
  std::printf("compare: %s (loaded in %.1f ms): %zu cloths, %zu particles; stages: %s; repeat %d\n",
              scenePath.c_str(), loadMs, scene.cloths.size(), particleCount(scene), stageList(scene, stages, skip).c_str(), repeat);
  std::printf("  %s\n", colliderSummary(scene).c_str());
  if (context) {
    std::printf("  vulkan device: %s\n", context->deviceInfo().name.c_str());
  } else {
    std::printf("  vulkan: not run (%s)\n", vulkanError.c_str());
  }

  struct BackendRun {
    Backend backend;
    std::vector<StageOutput> outputs;
    Timing timing;
  };
  std::vector<BackendRun> runs;
  // Every backend's stage k starts from the same input: the CPU scalar reference's result of stage
  // k - 1 (the scene's input for the first stage). Chaining each backend's own stages instead would
  // carry a difference made by an earlier stage (within its tolerance, or a different but equally
  // valid contact) into the later ones, and a later stage's comparison would then blame it for what
  // it was given: self collision in particular amplifies a 1e-7 shift of a particle that sits just
  // at `distance` into a pair found or not found. With a shared input, each row below measures what
  // that stage alone does differently. (`step` chains the stages on one backend, as an engine does.)
  std::vector<SceneBuffers> stageInputs;
  for (Backend b : backends) {
    Runner runner(b, b == Backend::kVulkan ? context.get() : nullptr, /*debug=*/true);
    BackendRun run{b, {}, {}};
    SceneBuffers final;
    const std::vector<SceneBuffers>* fed = b == Backend::kCpuScalar ? nullptr : &stageInputs;
    if (const int rc = runRepeated(runner, scene, stages, input, fed, repeat, toString(b), final, run.outputs, run.timing);
        rc != kExitOk) {
      return rc;
    }
    if (b == Backend::kCpuScalar) {  // the reference: its results become the other backends' inputs
      for (size_t k = 0; k < stages.size(); ++k) {
        SceneBuffers in = input;
        if (k > 0) {
          in.particles = run.outputs[k - 1].particles;
          in.prevParticles = run.outputs[k - 1].prevParticles;
        }
        stageInputs.push_back(std::move(in));
      }
    }
    for (size_t k = 0; k < stages.size(); ++k) perturb.apply(b, *stages[k], run.outputs[k]);
    runs.push_back(std::move(run));
  }
  if (context && context->validationMessageCount() > 0) {
    std::fprintf(stderr, "vkcollide: %llu validation message(s)\n",
                 static_cast<unsigned long long>(context->validationMessageCount()));
    return kExitFailed;
  }

  // Per stage, cloth and backend: the largest differences to the reference, and the scaled error
  // |d| / (tolerance * (1 + |reference|)) that must stay <= 1.
  int failures = 0;
  std::printf("  tolerance: |difference| <= t * (1 + |reference value|), per component; t = %g (shapes), %g (meshes), "
              "%g (self, inter)\n",
              static_cast<double>(kShapeCollisionTolerance), static_cast<double>(kMeshCollisionTolerance),
              static_cast<double>(kSelfCollisionTolerance));
  std::printf("  each stage starts from cpu-scalar's result of the stage before, on every backend\n");
  std::printf("  %-7s %-5s %-24s %-10s %11s %11s %11s %8s  %s\n", "stage", "cloth", "name", "backend", "max|dpos|",
              "max|dprev|", "max|dinvm|", "scaled", "integers");
  const BackendRun& ref = runs[0];
  for (size_t k = 0; k < stages.size(); ++k) {
    const float tol = stageTolerance(stages[k]->id);
    for (size_t c = 0; c < input.cloths.size(); ++c) {
      const ClothRange range = input.cloths[c];
      for (size_t r = 1; r < runs.size(); ++r) {
        const StageOutput& a = runs[r].outputs[k];
        const StageOutput& e = ref.outputs[k];
        float dPos = 0, dPrev = 0, dW = 0, scaled = 0;
        auto account = [&](float got, float want, float& maxAbs) {
          const float d = std::abs(got - want);
          if (!(d <= maxAbs)) maxAbs = d;  // NaN propagates as a failure below
          const float s = d / (tol * (1.0f + std::abs(want)));
          if (!(s <= scaled)) scaled = s;
        };
        for (uint32_t j = 0; j < range.count; ++j) {
          const size_t i = range.first + j;
          account(a.particles[i].x, e.particles[i].x, dPos);
          account(a.particles[i].y, e.particles[i].y, dPos);
          account(a.particles[i].z, e.particles[i].z, dPos);
          account(a.particles[i].w, e.particles[i].w, dW);
          account(a.prevParticles[i].x, e.prevParticles[i].x, dPrev);
          account(a.prevParticles[i].y, e.prevParticles[i].y, dPrev);
          account(a.prevParticles[i].z, e.prevParticles[i].z, dPrev);
          account(a.prevParticles[i].w, e.prevParticles[i].w, dW);
        }
        const std::string integers = stages[k]->id == StageId::kSelf     ? compareSelf(a, e, c, range, failures)
                                     : stages[k]->id == StageId::kInter  ? compareInter(a, e, c, range, failures)
                                     : stages[k]->id == StageId::kMeshes ? compareMeshes(a, e, range)
                                                                         : compareMasks(a, e, c, failures) +
                                                                               compareConvexBits(a, e, scene, c);
        const bool within = scaled <= 1.0f;
        if (!within) ++failures;
        std::string name = scene.cloths[c].name.substr(0, 24);
        std::printf("  %-7s %-5zu %-24s %-10s %11.3g %11.3g %11.3g %8.3g  %s%s\n", stages[k]->name, c, name.c_str(),
                    toString(runs[r].backend), static_cast<double>(dPos), static_cast<double>(dPrev),
                    static_cast<double>(dW), static_cast<double>(scaled), integers.c_str(),
                    within ? "" : "  BEYOND TOLERANCE");
      }
    }
  }
  std::printf("  times, median of %d (ms; self host times include listing the pairs for the check, inter host "
              "times reading back its report):\n",
              repeat);
  for (const BackendRun& run : runs) {
    std::printf("    %-10s", toString(run.backend));
    for (size_t k = 0; k < stages.size(); ++k) {
      std::printf("  %s %.3f host", stages[k]->name, median(run.timing.host[k]));
      if (!run.timing.gpu[k].empty()) std::printf(" / %.3f GPU", median(run.timing.gpu[k]));
    }
    std::printf("\n");
  }
  if (failures > 0) {
    std::printf("compare: %d result(s) differ from cpu-scalar\n", failures);
    return kExitFailed;
  }
  std::printf("compare: every backend agrees with cpu-scalar\n");
  return kExitOk;
}

}  // namespace vkc::tool
