// vkcollide step / compare / stages: one collision iteration of a scene file (docs/scene-format.md)
// on a backend, written back as a scene; or on every backend, compared with the CPU scalar reference.
//
// One iteration is a fixed list of stages (kStages), each enabled by the scene: sphere/capsule
// collision (any cloth with spheres), self collision (settings.selfCollision), inter collision
// (settings.interCollision). A stage this build does not have yet is never skipped silently: a scene
// that enables it is refused (exit 2) unless the user skips that stage explicitly (--skip STAGE).
//
// Exit codes: 0 success; 1 a run failed, results differ beyond tolerance, or a backend is not
// deterministic; 2 usage errors and bad scenes (nothing is written then).
//
// Test hooks of `compare` (not in the usage text): --perturb-backend NAME DELTA adds DELTA to the x
// of every particle in that backend's result of every stage, --perturb-mask NAME flips a bit of its
// shape grid masks, so that tests can see compare fail.
#include "scene_commands.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vkcollide/vkcollide.h"

namespace vkc::tool {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// ---- The stages of one iteration ------------------------------------------------------------

enum class StageId { kShapes, kSelf, kInter };

struct StageDesc {
  StageId id;
  const char* name;
  const char* enabledBy;  // what in the scene turns it on
  bool inThisBuild;       // false until the stage is implemented: scenes enabling it are refused
};

constexpr StageDesc kStages[] = {
    {StageId::kShapes, "shapes", "a cloth with spheres", true},
    {StageId::kSelf, "self", "settings.selfCollision", false},
    {StageId::kInter, "inter", "settings.interCollision", false},
};

bool stageEnabled(StageId id, const Scene& scene) {
  switch (id) {
    case StageId::kShapes:
      return std::any_of(scene.cloths.begin(), scene.cloths.end(), [](const SceneCloth& c) { return !c.spheres.empty(); });
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
  double hostMs = 0;                // wall clock of the stage (Vulkan: upload, submit, wait, download)
  double gpuMs = -1;                // Vulkan: sum of the passes' GPU timestamps
};

// Runs iterations on one backend, keeping device objects across runs.
class Runner {
 public:
  Runner(Backend backend, Context* context) : backend_(backend), context_(context) {}

  // One iteration: every stage in order on `buffers`; outputs[k] is stage k's result.
  Status run(const Scene& scene, const std::vector<const StageDesc*>& stages, SceneBuffers& buffers,
             std::vector<StageOutput>& outputs) {
    outputs.assign(stages.size(), {});
    if (const Status st = createStages(stages, buffers); !st) return st;
    for (size_t k = 0; k < stages.size(); ++k) {
      StageOutput& out = outputs[k];
      const auto t0 = std::chrono::steady_clock::now();
      Status st;
      switch (stages[k]->id) {
        case StageId::kShapes: st = runShapes(scene, buffers, out); break;
        case StageId::kSelf:
        case StageId::kInter:
          st = Error{ErrorCode::kUnsupported, std::string(stages[k]->name) + " collision is not in this build"};
          break;
      }
      if (!st) return st;
      out.hostMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      out.particles = buffers.particles;
      out.prevParticles = buffers.prevParticles;
    }
    return {};
  }

 private:
  // Device objects (pipelines, buffers) are made once, before the first timed run.
  Status createStages(const std::vector<const StageDesc*>& stages, const SceneBuffers& buffers) {
    if (backend_ != Backend::kVulkan) return {};
    for (const StageDesc* s : stages) {
      if (s->id == StageId::kShapes && !shapes_) {
        auto stage = ShapeCollisionStage::create(
            *context_, {buffers.cloths, static_cast<uint32_t>(buffers.particles.size()), buffers.colliders});
        if (!stage) return stage.error();
        shapes_ = std::move(*stage);
      }
    }
    return {};
  }

  Status runShapes(const Scene& scene, SceneBuffers& buffers, StageOutput& out) {
    const ShapeCollisionInput input = buffers.shapeInput(shapeCollisionSettings(scene.settings));
    ShapeCollisionDebug debug;
    if (backend_ == Backend::kVulkan) {
      const Status st = shapes_->run(input, &debug);
      if (!st) return st;
      double ns = 0;
      for (const PassTiming& t : shapes_->timings()) ns += t.ns;
      out.gpuMs = ns * 1e-6;
    } else {
      const Status st = collideShapesCpu(input, backend_, &debug);
      if (!st) return st;
    }
    out.masks = std::move(debug.masks);
    out.maskWords = std::move(debug.maskWords);
    return {};
  }

  Backend backend_;
  Context* context_;
  std::unique_ptr<ShapeCollisionStage> shapes_;
};

bool sameBits(const std::vector<Float4>& a, const std::vector<Float4>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(Float4)) == 0);
}

bool sameOutputs(const std::vector<StageOutput>& a, const std::vector<StageOutput>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (!sameBits(a[k].particles, b[k].particles) || !sameBits(a[k].prevParticles, b[k].prevParticles) ||
        a[k].masks != b[k].masks) {
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

// Runs `repeat` iterations, each from the scene's input; `final` holds the buffers after the first.
// Every repeat must give bitwise the same result (determinism), else kExitFailed with a message.
int runRepeated(Runner& runner, const Scene& scene, const std::vector<const StageDesc*>& stages,
                const SceneBuffers& input, int repeat, const char* backendName, SceneBuffers& final,
                std::vector<StageOutput>& outputs, Timing& timing) {
  timing.host.assign(stages.size(), {});
  timing.gpu.assign(stages.size(), {});
  for (int r = 0; r < repeat; ++r) {
    SceneBuffers b = input;
    std::vector<StageOutput> out;
    const Status st = runner.run(scene, stages, b, out);
    if (!st) {
      std::fprintf(stderr, "vkcollide: %s: %s\n", backendName, st.message().c_str());
      return st.error().code == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
    }
    for (size_t k = 0; k < stages.size(); ++k) {
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

std::optional<Backend> parseBackend(const std::string& s) {
  if (s == "vulkan") return Backend::kVulkan;
  if (s == "cpu" || s == "cpu-simd") return Backend::kCpuSimd;
  if (s == "cpu-scalar") return Backend::kCpuScalar;
  return std::nullopt;
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

std::unique_ptr<Context> createContext(const char* device, bool validation, std::string* error) {
  ContextCreateInfo ci;
  ci.deviceSelector = device;
  ci.enableValidation = validation;
  auto ctx = Context::create(ci);
  if (!ctx) {
    *error = ctx.message();
    return nullptr;
  }
  return std::move(*ctx);
}

size_t particleCount(const Scene& scene) {
  size_t n = 0;
  for (const SceneCloth& c : scene.cloths) n += c.particles.size();
  return n;
}

}  // namespace

const char* sceneUsage() {
  return "       vkcollide step SCENE --backend vulkan|cpu|cpu-scalar [--device SEL] [--repeat K] [--skip STAGE]... [--validation] --out OUT\n"
         "       vkcollide compare SCENE [--device SEL] [--repeat K] [--skip STAGE]... [--validation]\n"
         "       vkcollide stages\n";
}

int stagesCommand() {
  std::printf("stages of one collision iteration, in order:\n");
  for (const StageDesc& s : kStages) {
    std::printf("  %-7s %-11s enabled by %s\n", s.name, s.inThisBuild ? "available" : "not built", s.enabledBy);
  }
  return kExitOk;
}

int stepCommand(int argc, char** argv) {
  std::string scenePath, outPath;
  std::optional<Backend> backend;
  const char* device = nullptr;
  int repeat = 1;
  bool validation = false;
  std::vector<const StageDesc*> skip;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (a == "--backend" && hasValue) {
      backend = parseBackend(argv[++i]);
      if (!backend) return usageError(std::string("unknown backend '") + argv[i] + "'");
    } else if (a == "--device" && hasValue) {
      device = argv[++i];
    } else if (a == "--repeat" && hasValue) {
      if (!parseRepeat(argv[++i], repeat)) return usageError(std::string("--repeat: expected 1 .. 100000, found '") + argv[i] + "'");
    } else if (a == "--out" && hasValue) {
      outPath = argv[++i];
    } else if (a == "--validation") {
      validation = true;
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

  Scene scene;
  std::vector<const StageDesc*> stages;
  SceneBuffers input;
  double loadMs = 0;
  if (const int rc = prepare(scenePath, skip, scene, stages, input, loadMs); rc != kExitOk) return rc;

  std::unique_ptr<Context> context;
  if (*backend == Backend::kVulkan) {
    std::string error;
    context = createContext(device, validation, &error);
    if (!context) {
      std::fprintf(stderr, "vkcollide: vulkan: %s\n", error.c_str());
      return kExitFailed;
    }
  }
  const char* name = toString(*backend);
  std::printf("step: %s (loaded in %.1f ms): %zu cloths, %zu particles; stages: %s; backend %s%s%s\n",
              scenePath.c_str(), loadMs, scene.cloths.size(), particleCount(scene), stageList(scene, stages, skip).c_str(), name, context ? " on " : "",
              context ? context->deviceInfo().name.c_str() : "");

  Runner runner(*backend, context.get());
  SceneBuffers result;
  std::vector<StageOutput> outputs;
  Timing timing;
  if (const int rc = runRepeated(runner, scene, stages, input, repeat, name, result, outputs, timing); rc != kExitOk) {
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

int compareCommand(int argc, char** argv) {
  std::string scenePath;
  const char* device = nullptr;
  int repeat = 1;
  bool validation = false;
  std::vector<const StageDesc*> skip;
  std::optional<Backend> perturbBackend, perturbMaskBackend;
  float perturbDelta = 0;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool hasValue = i + 1 < argc;
    if (a == "--device" && hasValue) {
      device = argv[++i];
    } else if (a == "--repeat" && hasValue) {
      if (!parseRepeat(argv[++i], repeat)) return usageError(std::string("--repeat: expected 1 .. 100000, found '") + argv[i] + "'");
    } else if (a == "--validation") {
      validation = true;
    } else if (a == "--skip" && hasValue) {
      const StageDesc* st = findStage(argv[++i]);
      if (!st) return usageError(std::string("--skip: unknown stage '") + argv[i] + "' (vkcollide stages lists them)");
      skip.push_back(st);
    } else if (a == "--perturb-backend" && i + 2 < argc) {
      perturbBackend = parseBackend(argv[++i]);
      perturbDelta = std::strtof(argv[++i], nullptr);
      if (!perturbBackend) return usageError(std::string("unknown backend '") + argv[i - 1] + "'");
    } else if (a == "--perturb-mask" && hasValue) {
      perturbMaskBackend = parseBackend(argv[++i]);
      if (!perturbMaskBackend) return usageError(std::string("unknown backend '") + argv[i] + "'");
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
  std::unique_ptr<Context> context = createContext(device, validation, &vulkanError);
  std::vector<Backend> backends = {Backend::kCpuScalar, Backend::kCpuSimd};  // the reference first
  if (context) backends.push_back(Backend::kVulkan);
  std::printf("compare: %s (loaded in %.1f ms): %zu cloths, %zu particles; stages: %s; repeat %d\n",
              scenePath.c_str(), loadMs, scene.cloths.size(), particleCount(scene), stageList(scene, stages, skip).c_str(), repeat);
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
  for (Backend b : backends) {
    Runner runner(b, b == Backend::kVulkan ? context.get() : nullptr);
    BackendRun run{b, {}, {}};
    SceneBuffers final;
    if (const int rc = runRepeated(runner, scene, stages, input, repeat, toString(b), final, run.outputs, run.timing);
        rc != kExitOk) {
      return rc;
    }
    // Test hooks: doctor this backend's results.
    for (StageOutput& out : run.outputs) {
      if (perturbBackend == b) {
        for (Float4& p : out.particles) p.x += perturbDelta;
      }
      if (perturbMaskBackend == b && !out.masks.empty()) out.masks[0] ^= 1u;
    }
    runs.push_back(std::move(run));
  }
  if (context && context->validationMessageCount() > 0) {
    std::fprintf(stderr, "vkcollide: %llu validation message(s)\n",
                 static_cast<unsigned long long>(context->validationMessageCount()));
    return kExitFailed;
  }

  // Per stage, cloth and backend: the largest differences to the reference, and the scaled error
  // |d| / (tolerance * (1 + |reference|)) that must stay <= 1.
  const float tol = kShapeCollisionTolerance;
  int failures = 0;
  std::printf("  tolerance: |difference| <= %g * (1 + |reference value|), per component\n", static_cast<double>(tol));
  std::printf("  %-7s %-5s %-24s %-10s %11s %11s %11s %8s  %s\n", "stage", "cloth", "name", "backend", "max|dpos|",
              "max|dprev|", "max|dinvm|", "scaled", "integers");
  const BackendRun& ref = runs[0];
  for (size_t k = 0; k < stages.size(); ++k) {
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
        // Integer results: this cloth's slice of the shape grid masks.
        std::string integers = "-";
        if (!e.maskWords.empty()) {
          size_t offset = 0;
          for (size_t q = 0; q < c; ++q) offset += size_t{48} * e.maskWords[q];
          const size_t words = size_t{48} * e.maskWords[c];
          const bool layoutSame = a.maskWords == e.maskWords && a.masks.size() == e.masks.size();
          const bool equal = layoutSame && offset + words <= e.masks.size() &&
                             std::equal(e.masks.begin() + static_cast<std::ptrdiff_t>(offset),
                                        e.masks.begin() + static_cast<std::ptrdiff_t>(offset + words),
                                        a.masks.begin() + static_cast<std::ptrdiff_t>(offset));
          integers = equal ? "masks equal" : "masks DIFFER";
          if (!equal) ++failures;
        }
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
  std::printf("  times, median of %d (ms):\n", repeat);
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
