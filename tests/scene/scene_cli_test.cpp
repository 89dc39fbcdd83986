// The vkcollide tool's scene commands, run as a user would: `step` on every backend (results checked
// against the geometry and against the library), `compare` (agreement, a doctored result, bad
// scenes) and the exit codes. Built only where the tool is (VKC_TOOL_PATH).
#ifdef VKC_TOOL_PATH

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "vkcollide/scene.h"

namespace vkc {
namespace {

const std::string kSamples = std::string(VKC_SOURCE_DIR) + "/samples/scenes/";

struct ToolRun {
  int exitCode = -1;
  std::string output;  // stdout and stderr
};

std::string tempPath(const std::string& name) {
  return ::testing::TempDir() + "vkc_cli_" + std::to_string(::getpid()) + "_" + name;
}

bool fileExists(const std::string& path) {
  std::ifstream f(path);
  return f.good();
}

ToolRun runTool(const std::string& args) {
  const std::string log = tempPath("log.txt");
  const std::string cmd = std::string("'") + VKC_TOOL_PATH + "' " + args + " > '" + log + "' 2>&1";
  const int status = std::system(cmd.c_str());
  ToolRun r;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(log);
  std::stringstream ss;
  ss << f.rdbuf();
  r.output = ss.str();
  std::remove(log.c_str());
  return r;
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

std::string readText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Signed distance from p to the convex hull of spheres a and b (a tapered capsule). The hull is the
// union of the balls centred at mix(a, b, t) with radius mix(ra, rb, t), t in [0, 1], and the
// distance to that ball is convex in t: ternary search.
double hullDistance(const Float4& pf, const Float4& af, const Float4& bf) {
  const double p[3] = {pf.x, pf.y, pf.z}, a[4] = {af.x, af.y, af.z, af.w}, b[4] = {bf.x, bf.y, bf.z, bf.w};
  auto d = [&](double t) {
    double sq = 0;
    for (int k = 0; k < 3; ++k) {
      const double e = p[k] - (a[k] + (b[k] - a[k]) * t);
      sq += e * e;
    }
    return std::sqrt(sq) - (a[3] + (b[3] - a[3]) * t);
  };
  double lo = 0, hi = 1;
  for (int i = 0; i < 200; ++i) {
    const double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (d(m1) < d(m2)) {
      hi = m2;
    } else {
      lo = m1;
    }
  }
  return std::min({d(0), d(1), d(0.5 * (lo + hi))});
}

// The smallest signed distance from p to the cloth's shapes at the iteration's end.
double shapeDistance(const Float4& p, const SceneCloth& c) {
  double best = 1e30;
  for (const Float4& s : c.spheres) best = std::min(best, hullDistance(p, s, s));
  for (const Capsule& cap : c.capsules) best = std::min(best, hullDistance(p, c.spheres[cap.sphere0], c.spheres[cap.sphere1]));
  return best;
}

class SceneStep : public ::testing::TestWithParam<const char*> {};

// Discrete collision: every movable particle ends outside every shape (on its surface if it was
// inside), particles that were outside are not moved, and the file holds exactly what the library
// computes for the same scene.
TEST_P(SceneStep, ParticlesEndOutsideEveryShape) {
  for (const char* sample : {"sphere-and-capsule.json", "two-cloths.json"}) {
    SCOPED_TRACE(sample);
    const std::string in = kSamples + sample;
    const std::string out = tempPath(std::string(GetParam()) + "_" + sample);
    const ToolRun r = runTool("step '" + in + "' --backend " + GetParam() + " --repeat 2 --out '" + out + "'" +
                          (std::string(GetParam()) == "vulkan" ? " --validation" : ""));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    Result<Scene> before = loadScene(in);
    Result<Scene> after = loadScene(out);
    ASSERT_TRUE(before) << before.message();
    ASSERT_TRUE(after) << after.message();
    ASSERT_FALSE(before->settings.continuousCollision);
    ASSERT_EQ(after->cloths.size(), before->cloths.size());
    size_t pushed = 0;
    for (size_t c = 0; c < before->cloths.size(); ++c) {
      const SceneCloth& b = before->cloths[c];
      const SceneCloth& a = after->cloths[c];
      ASSERT_EQ(a.particles.size(), b.particles.size());
      EXPECT_EQ(a.spheres, b.spheres);
      EXPECT_EQ(a.name, b.name);
      for (size_t i = 0; i < b.particles.size(); ++i) {
        const Float4& p = a.particles[i];
        const double scale = 1e-4 * (1 + double{std::abs(p.x)} + double{std::abs(p.y)} + double{std::abs(p.z)});
        const double dBefore = shapeDistance(b.particles[i], b);
        const double dAfter = shapeDistance(p, a);
        if (b.particles[i].w == 0) {
          EXPECT_EQ(p.x, b.particles[i].x);  // fixed particles never move
          continue;
        }
        EXPECT_GE(dAfter, -scale) << "cloth " << c << " particle " << i << " is inside a shape";
        if (dBefore < 0) {
          ++pushed;
          EXPECT_LE(dAfter, scale) << "cloth " << c << " particle " << i << " was pushed beyond the surface";
        } else {
          EXPECT_TRUE(p.x == b.particles[i].x && p.y == b.particles[i].y && p.z == b.particles[i].z)
              << "cloth " << c << " particle " << i << " was outside and moved";
        }
      }
    }
    EXPECT_GE(pushed, 10u) << "the sample should push particles out";

    // The file holds what the library computes (bitwise on the CPU; within tolerance on Vulkan).
    Result<SceneBuffers> buffers = makeSceneBuffers(*before);
    ASSERT_TRUE(buffers) << buffers.message();
    ASSERT_TRUE(collideShapesCpu(buffers->shapeInput(shapeCollisionSettings(before->settings)), Backend::kCpuScalar).ok());
    Scene expected = *before;
    storeSceneBuffers(*buffers, expected);
    for (size_t c = 0; c < expected.cloths.size(); ++c) {
      for (size_t i = 0; i < expected.cloths[c].particles.size(); ++i) {
        const Float4 e[2] = {expected.cloths[c].particles[i], expected.cloths[c].prevParticles[i]};
        const Float4 g[2] = {after->cloths[c].particles[i], after->cloths[c].prevParticles[i]};
        for (int k = 0; k < 2; ++k) {
          const float ev[4] = {e[k].x, e[k].y, e[k].z, e[k].w}, gv[4] = {g[k].x, g[k].y, g[k].z, g[k].w};
          for (int q = 0; q < 4; ++q) {
            EXPECT_NEAR(gv[q], ev[q], kShapeCollisionTolerance * (1 + std::abs(ev[q])))
                << "cloth " << c << (k ? " prevParticles[" : " particles[") << i << "][" << q << "]";
          }
        }
      }
    }
    if (std::string(GetParam()) == "cpu-scalar") {
      EXPECT_TRUE(*after == expected);
    }
    std::remove(out.c_str());
  }
}

// Continuous collision and a gzipped output: a strip that passes through a capsule within the
// iteration is caught (a discrete test would leave it below the capsule).
TEST_P(SceneStep, ContinuousCollisionCatchesTunnelling) {
  const std::string out = tempPath(std::string(GetParam()) + "_ccd.json.gz");
  const ToolRun r = runTool("step '" + kSamples + "ccd-fast-strip.json' --backend " + GetParam() + " --out '" + out + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  Result<Scene> before = loadScene(kSamples + "ccd-fast-strip.json");
  Result<Scene> after = loadScene(out);
  ASSERT_TRUE(before && after);
  ASSERT_TRUE(before->settings.continuousCollision);
  size_t caught = 0;
  const SceneCloth& c = after->cloths[0];
  for (size_t i = 0; i < c.particles.size(); ++i) {
    if (c.particles[i].y > before->cloths[0].particles[i].y + 0.1f) ++caught;  // stopped above the capsule
  }
  EXPECT_GE(caught, 4u) << r.output;
  std::remove(out.c_str());
}

INSTANTIATE_TEST_SUITE_P(Cpu, SceneStep, ::testing::Values("cpu", "cpu-scalar"),
                         [](const auto& p) { return std::string(p.param) == "cpu" ? "Simd" : "Scalar"; });
INSTANTIATE_TEST_SUITE_P(Vulkan, SceneStep, ::testing::Values("vulkan"), [](const auto&) { return "Vulkan"; });

// Bad scenes and usage errors: exit 2, a message naming the problem, no output file.
TEST(SceneStepErrors, BadScenesExit2WithoutOutput) {
  const std::string good = readText(kSamples + "sphere-and-capsule.json");
  ASSERT_FALSE(good.empty());
  struct Case {
    const char* what;
    std::string from, to, message;
  };
  const Case cases[] = {
      {"non-finite", "0.3]", "1e99]", "cloths[0].spheres[0][3]: expected a finite number"},
      {"unknown key", "\"capsules\"", "\"capsule\"", "cloths[0].capsule: unknown key"},
      {"capsule index", "[1, 2]", "[1, 3]", "cloths[0].capsules[0][1]: sphere index 3 is out of range"},
      {"negative radius (validate)", "0.3]", "-0.3]", "spheres"},
      {"negative inverse mass (validate)", "[-0.8571, 0.32, -0.5, 1.0]", "[-0.8571, 0.32, -0.5, -1.0]",
       "inverse mass"},
      {"negative friction (validate)", "\"friction\": 0.2", "\"friction\": -0.2", "friction"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::string text = good;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    const std::string in = tempPath("bad.json");
    const std::string out = tempPath("bad-out.json");
    writeText(in, text);
    std::remove(out.c_str());
    const ToolRun r = runTool("step '" + in + "' --backend cpu-scalar --out '" + out + "'");
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
    EXPECT_FALSE(fileExists(out));
    EXPECT_FALSE(fileExists(out + ".tmp"));
    const ToolRun cmp = runTool("compare '" + in + "'");
    EXPECT_EQ(cmp.exitCode, 2) << cmp.output;
    std::remove(in.c_str());
  }
  const std::string out = tempPath("usage-out.json");
  EXPECT_EQ(runTool("step '" + kSamples + "two-cloths.json' --backend gpu --out '" + out + "'").exitCode, 2);
  EXPECT_EQ(runTool("step '" + kSamples + "two-cloths.json' --out '" + out + "'").exitCode, 2);
  EXPECT_EQ(runTool("step '" + kSamples + "two-cloths.json' --backend cpu").exitCode, 2);
  EXPECT_EQ(runTool("step '" + kSamples + "two-cloths.json' --backend cpu --repeat 0 --out '" + out + "'").exitCode, 2);
  EXPECT_EQ(runTool("step '" + tempPath("missing.json") + "' --backend cpu --out '" + out + "'").exitCode, 2);
  EXPECT_EQ(runTool("compare").exitCode, 2);
  EXPECT_FALSE(fileExists(out));
}

// A stage the scene enables but this build lacks is refused, never skipped; stages the build has run.
TEST(SceneStepErrors, StagesThisBuildLacksAreRefused) {
  const ToolRun stages = runTool("stages");
  ASSERT_EQ(stages.exitCode, 0) << stages.output;
  ASSERT_NE(stages.output.find("shapes  available"), std::string::npos) << stages.output;
  const std::string good = readText(kSamples + "two-cloths.json");
  const struct {
    const char* stage;
    const char* settings;
  } cases[] = {
      {"self", "\"selfCollision\": {\"distance\": 0.01, \"stiffness\": 0.5}, "},
      {"inter", "\"interCollision\": {\"distance\": 0.01, \"stiffness\": 0.5}, "},
  };
  int refused = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.stage);
    std::string text = good;
    const size_t at = text.find("\"continuousCollision\"");
    ASSERT_NE(at, std::string::npos);
    text.insert(at, c.settings);
    const std::string in = tempPath("stage.json");
    const std::string out = tempPath("stage-out.json");
    writeText(in, text);
    std::remove(out.c_str());
    const bool built = stages.output.find(std::string(c.stage) + std::string(7 - std::strlen(c.stage), ' ') +
                                          " available") != std::string::npos;
    const ToolRun r = runTool("step '" + in + "' --backend cpu --out '" + out + "'");
    if (built) {
      EXPECT_EQ(r.exitCode, 0) << r.output;
    } else {
      ++refused;
      EXPECT_EQ(r.exitCode, 2) << r.output;
      EXPECT_NE(r.output.find("enables the " + std::string(c.stage) + " collision stage"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("does not have yet"), std::string::npos) << r.output;
      EXPECT_FALSE(fileExists(out));
    }
    std::remove(in.c_str());
    std::remove(out.c_str());
  }
  RecordProperty("refused", refused);
}

// compare runs Vulkan too where a device exists (lavapipe here), hence "Vulkan" in the name.
TEST(SceneCompareVulkan, SamplesAgree) {
  for (const char* sample : {"sphere-and-capsule.json", "two-cloths.json", "ccd-fast-strip.json"}) {
    SCOPED_TRACE(sample);
    const ToolRun r = runTool("compare '" + kSamples + sample + "' --repeat 2 --validation");
    EXPECT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("every backend agrees with cpu-scalar"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("cpu-simd"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("masks equal"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("BEYOND"), std::string::npos) << r.output;
  }
}

TEST(SceneCompareVulkan, DoctoredResultsFail) {
  const std::string scene = "'" + kSamples + "two-cloths.json'";
  ToolRun r = runTool("compare " + scene + " --perturb-backend cpu 1e-2");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("BEYOND TOLERANCE"), std::string::npos) << r.output;
  // Just inside the tolerance still passes (positions are within |x| <= 1.3: 1e-4 * (1 + 1.3) > 5e-5).
  r = runTool("compare " + scene + " --perturb-backend cpu 5e-5");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  r = runTool("compare " + scene + " --perturb-mask cpu");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("masks DIFFER"), std::string::npos) << r.output;
  r = runTool("compare " + scene + " --perturb-backend vulkan 1e-2");
  EXPECT_EQ(r.exitCode, 1) << r.output;
}

// The NvCloth drape scene enables self collision: step refuses it until that stage is built (and
// otherwise runs it); with --skip self the shape stage runs, and the output is a loadable scene.
TEST(SceneStepErrors, DrapeSceneInTheTool) {
  const std::string drape = "'" + std::string(VKC_SOURCE_DIR) + "/bench/scenes/nvcloth-drape-64.json'";
  const std::string out = tempPath("drape-out.json.gz");
  std::remove(out.c_str());
  const ToolRun r = runTool("step " + drape + " --backend cpu --out '" + out + "'");
  const bool selfBuilt = runTool("stages").output.find("self    available") != std::string::npos;
  if (selfBuilt) {
    EXPECT_EQ(r.exitCode, 0) << r.output;
  } else {
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find("self collision stage"), std::string::npos) << r.output;
    EXPECT_FALSE(fileExists(out));
  }
  const ToolRun skipped = runTool("step " + drape + " --backend cpu --skip self --out '" + out + "'");
  ASSERT_EQ(skipped.exitCode, 0) << skipped.output;
  EXPECT_NE(skipped.output.find("enabled but skipped: self"), std::string::npos) << skipped.output;
  Result<Scene> before = loadScene(std::string(VKC_SOURCE_DIR) + "/bench/scenes/nvcloth-drape-64.json");
  Result<Scene> after = loadScene(out);
  ASSERT_TRUE(before && after);
  ASSERT_EQ(after->cloths[0].particles.size(), 4096u);
  EXPECT_EQ(after->settings, before->settings);  // the settings are written back as they were
  size_t changed = 0;
  for (size_t i = 0; i < 4096; ++i) changed += !(after->cloths[0].particles[i] == before->cloths[0].particles[i]);
  EXPECT_GT(changed, 100u);  // the drape rests on its sphere and capsule
  EXPECT_EQ(runTool("step " + drape + " --backend cpu --skip selfie --out '" + out + "'").exitCode, 2);
  std::remove(out.c_str());
}

TEST(SceneCompareVulkan, DrapeShapeStageAgrees) {
  const ToolRun r = runTool("compare '" + std::string(VKC_SOURCE_DIR) + "/bench/scenes/nvcloth-drape-64.json' --skip self --validation");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("masks equal"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("every backend agrees with cpu-scalar"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace vkc

#endif  // VKC_TOOL_PATH
