// The pass declarations (shaders/shared/<stage>_passes.h) against the compiled shaders (CPU only, no
// device). For each stage's embedded SPIR-V and each declared pass: specialization constant 0 becomes
// the pass's value (the other specialization constants stay open, so code behind them counts, e.g.
// the radix sort's wide-ballot scatter), spirv-opt folds and removes the other passes' code, and
// the remaining code's loads, stores and atomics through each binding are compared with the
// declaration (rules in shaders/shared/pass_decl.h). The barrier plan is only as right as these
// tables, and lavapipe, running dispatches in order, cannot show a missing barrier.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "vulkan/pipelines.h"
#include "shared/bounds_passes.h"
#include "shared/bvh_passes.h"
#include "shared/collide_meshes_passes.h"
#include "shared/collide_shapes_passes.h"
#include "shared/copy_passes.h"
#include "shared/geometry_queries_passes.h"
#include "shared/geometry_queries_device_layout.h"
#include "shared/geometry_queries_spans.h"
#include "shared/inter_collision_passes.h"
#include "shared/radix_sort_passes.h"
#include "shared/self_collision_passes.h"
#include "spirv/spirv_access.h"
#include "vulkan/recorder.h"

namespace vkc {
namespace {

using gpu::PassAccess;
using gpu::PassDecl;
using gpu::StageDecl;
using spirv::ModuleFacts;

// Every stage's declaration; the geometry query families come from their own table, so that a new
// family is checked without a change here (DeclaresEveryShader checks the list against shaders/).
std::vector<const StageDecl*> allStages() {
  std::vector<const StageDecl*> stages = {&gpu::kBoundsStage, &gpu::kShapesStage, &gpu::kSelfStage,
                                          &gpu::kInterStage,  &gpu::kRadixStage,  &gpu::kCopyStage,
                                          &gpu::kBvhStage,    &gpu::kMeshStage,   &gpu::kGeomStage,
                                          &gpu::kGeomRangesStage, &gpu::kGeomMeshPairStage, &gpu::kGeomLayoutStage,
                                          &gpu::kGeomSpansStage};
  for (const StageDecl& family : gpu::kGeomFamilyStages) stages.push_back(&family);
  return stages;
}
const std::vector<const StageDecl*> kStages = allStages();

std::vector<uint32_t> embedded(const char* name) {
  const std::span<const uint32_t> words = detail::embeddedShader(name);
  return {words.begin(), words.end()};
}

// Runs spirv-opt (fold the now-constant pass selection, inline, remove dead branches and code) on
// `words`; the result, or an empty vector with `log` holding spirv-opt's complaint.
std::vector<uint32_t> optimize(const std::vector<uint32_t>& words, const std::string& tag, std::string& log) {
  std::vector<uint32_t> result;
  spirv::runTool(VKC_SPIRV_OPT, "--target-env=vulkan1.3 --fold-spec-const-op-composite -O", words, tag, log, &result);
  return result;
}

const char* accessName(uint32_t a) {
  static const char* const kNames[] = {"none", "read", "write", "read-write"};
  return kNames[a & 3u];
}

// Every disagreement between the declaration of pass `d` and the specialized module `spec` (whose
// unspecialized module is `whole`), one message each.
std::vector<std::string> compare(const StageDecl& stage, const PassDecl& d, const ModuleFacts& whole,
                                 const ModuleFacts& spec) {
  std::vector<std::string> errors;
  const std::string pass = std::string(stage.shader) + " pass '" + d.name + "' (" + std::to_string(d.pass) + ")";
  for (const std::string& e : spec.errors) errors.push_back(pass + ": " + e);
  if (spec.localSize[0] != d.groupSize || spec.localSize[1] != 1 || spec.localSize[2] != 1) {
    errors.push_back(pass + ": workgroup size in the SPIR-V is " + std::to_string(spec.localSize[0]) + "x" +
                     std::to_string(spec.localSize[1]) + "x" + std::to_string(spec.localSize[2]) +
                     ", the declaration says " + std::to_string(d.groupSize));
  }
  for (uint32_t b = 0; b < d.bindingCount; ++b) {
    const auto declared = static_cast<uint32_t>(d.access[b]);
    const auto wi = whole.bindings.find(b);
    if (wi == whole.bindings.end()) continue;  // reported once per stage
    const spirv::BindingFacts& decl = wi->second;
    const auto si = spec.bindings.find(b);
    const bool reads = si != spec.bindings.end() && si->second.read;
    const bool writes = si != spec.bindings.end() && si->second.written;
    const std::string where = pass + " binding " + std::to_string(b) + " (" + decl.name + ", declared " +
                              accessName(declared) + (d.optional(b) ? "?" : "") + "): ";
    if (writes && (declared & 2u) == 0) errors.push_back(where + "the shader writes it");
    if (reads && (declared & 1u) == 0) errors.push_back(where + "the shader reads it");
    if ((declared & 2u) != 0 && decl.nonWritable) errors.push_back(where + "the shader declares it readonly");
    if ((declared & 1u) != 0 && decl.nonReadable) errors.push_back(where + "the shader declares it writeonly");
    if (!d.optional(b)) {
      if ((declared & 2u) != 0 && !writes) {
        errors.push_back(where + "the pass never writes it (a needless barrier; mark it '?' if a runtime flag decides)");
      }
      if ((declared & 1u) != 0 && !reads) {
        errors.push_back(where + "the pass never reads it (mark it '?' if a runtime flag decides)");
      }
    }
  }
  return errors;
}

class PassDeclTable : public testing::TestWithParam<const StageDecl*> {};

TEST_P(PassDeclTable, MatchesTheCompiledShader) {
  ASSERT_TRUE(std::strlen(VKC_SPIRV_OPT) > 0) << "spirv-opt was not found when configuring (Debian: spirv-tools, "
                                                 "scripts/setup.sh installs it)";
  const StageDecl& stage = *GetParam();
  const std::vector<uint32_t> words = embedded(stage.shader);
  ASSERT_FALSE(words.empty()) << "no embedded shader " << stage.shader;
  const ModuleFacts whole = spirv::analyze(words);
  for (const std::string& e : whole.errors) ADD_FAILURE() << stage.shader << ": " << e;

  // The stage's set: exactly bindings 0..bindingCount-1 of set 0.
  std::set<uint32_t> expected;
  for (uint32_t b = 0; b < stage.bindingCount; ++b) expected.insert(b);
  std::set<uint32_t> found;
  for (const auto& [b, facts] : whole.bindings) found.insert(b);
  EXPECT_EQ(found, expected) << stage.shader << ": the shader's bindings differ from the declared " << stage.bindingCount;
  EXPECT_TRUE(whole.otherSets.empty()) << stage.shader << ": bindings outside set 0";

  for (const PassDecl& d : stage.passes) {
    SCOPED_TRACE(d.name);
    std::string log;
    // A shader with one pass may have no pass constant (copy.comp): then it is checked as it is.
    const bool single = stage.passes.size() == 1 && !spirv::hasSpecId(words, 0);
    const auto specialized = single ? words : spirv::specialize(words, 0, d.pass, log);
    ASSERT_FALSE(specialized.empty()) << stage.shader << ": " << log;
    const std::vector<uint32_t> opt = optimize(specialized, std::string(stage.shader) + "_" + std::to_string(d.pass), log);
    ASSERT_FALSE(opt.empty()) << log;
    for (const std::string& e : compare(stage, d, whole, spirv::analyze(opt))) ADD_FAILURE() << e;
  }
}

INSTANTIATE_TEST_SUITE_P(Stages, PassDeclTable, testing::ValuesIn(kStages),
                         [](const testing::TestParamInfo<const StageDecl*>& p) { return std::string(p.param->shader); });

// Every compute shader of shaders/ has a pass declaration in the list above (a shader left out
// would have its barriers derived from declarations nothing checks).
TEST(PassDeclTableCoverage, DeclaresEveryShader) {
  std::set<std::string> declared;
  for (const StageDecl* s : kStages) declared.insert(s->shader);
  size_t shaders = 0;
  for (const std::string& name : spirv::shaderNames()) {
    ++shaders;
    EXPECT_TRUE(declared.count(name) == 1) << "shaders/" << name << ".comp has no StageDecl in kStages";
  }
  EXPECT_EQ(shaders, declared.size());
}

// The analysis itself, on a tiny module: a read-only binding that is stored to is seen as written.
TEST(PassDeclAnalysis, SeesLoadsStoresAndAtomics) {
  const std::vector<uint32_t> words = embedded("copy");
  ASSERT_FALSE(words.empty());
  const ModuleFacts m = spirv::analyze(words);
  ASSERT_EQ(m.bindings.size(), 2u);
  EXPECT_TRUE(m.bindings.at(0).read);
  EXPECT_FALSE(m.bindings.at(0).written);
  EXPECT_TRUE(m.bindings.at(0).nonWritable);
  EXPECT_TRUE(m.bindings.at(1).written);
  EXPECT_FALSE(m.bindings.at(1).read);
  EXPECT_TRUE(m.bindings.at(1).nonReadable);
  EXPECT_EQ(m.localSize[0], 256u);
  EXPECT_FALSE(spirv::hasSpecId(words, 0));
  EXPECT_TRUE(spirv::hasSpecId(embedded("radix_sort"), 1));
}

// The comparison fails for each kind of mis-declaration (a table is changed here, not the shader).
TEST(PassDeclAnalysis, RejectsMisdeclarations) {
  const StageDecl& stage = gpu::kBoundsStage;
  const std::vector<uint32_t> words = embedded(stage.shader);
  const ModuleFacts whole = spirv::analyze(words);
  std::string log;
  const auto tiles = optimize(spirv::specialize(words, 0, gpu::kBoundsPassTiles, log), "bounds_t", log);
  ASSERT_FALSE(tiles.empty()) << log;
  const ModuleFacts spec = spirv::analyze(tiles);
  const PassDecl& good = gpu::kBoundsPasses[gpu::kBoundsPassTiles];
  EXPECT_TRUE(compare(stage, good, whole, spec).empty());
  auto errorsWith = [&](uint32_t binding, PassAccess a, uint32_t groupSize = gpu::kBoundsGroupSize) {
    PassDecl d = good;
    d.access[binding] = a;
    d.groupSize = groupSize;
    return compare(stage, d, whole, spec);
  };
  auto mentions = [](const std::vector<std::string>& errors, const char* text) {
    for (const std::string& e : errors) {
      if (e.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(mentions(errorsWith(gpu::kBoundsBindingTileBoxes, PassAccess::kRead), "the shader writes it"));
  EXPECT_TRUE(mentions(errorsWith(gpu::kBoundsBindingParticles, PassAccess::kNone), "the shader reads it"));
  EXPECT_TRUE(mentions(errorsWith(gpu::kBoundsBindingCloths, PassAccess::kReadWrite), "declares it readonly"));
  EXPECT_TRUE(mentions(errorsWith(gpu::kBoundsBindingOut, PassAccess::kRead), "declares it writeonly"));
  EXPECT_TRUE(mentions(errorsWith(gpu::kBoundsBindingOut, PassAccess::kWrite), "never writes it"));
  EXPECT_TRUE(mentions(errorsWith(gpu::kBoundsBindingTileBoxes, PassAccess::kWrite, 128), "workgroup size"));
  PassDecl optional = good;
  optional.access[gpu::kBoundsBindingOut] = PassAccess::kWrite;
  optional.optionalMask = 1u << gpu::kBoundsBindingOut;
  EXPECT_FALSE(mentions(compare(stage, optional, whole, spec), "never writes it"));
}

// The recorder's side: a pass may narrow its declared access, never widen it.
TEST(PassDeclAnalysis, CheckPassRefusesWiderAccess) {
  const BufferRange ranges[gpu::kBoundsBindingCount] = {};
  detail::Pass p = detail::passFromDecl(gpu::kBoundsPasses[gpu::kBoundsPassTiles], nullptr, ranges);
  EXPECT_TRUE(detail::checkPass(p).ok());
  EXPECT_EQ(p.bindings[gpu::kBoundsBindingTileBoxes].access, detail::Access::kWrite);
  p.narrow(gpu::kBoundsBindingPrevParticles, detail::Access::kNone);
  EXPECT_TRUE(detail::checkPass(p).ok());
  p.narrow(gpu::kBoundsBindingCloths, detail::Access::kReadWrite);
  const Status s = detail::checkPass(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("vkc.bounds.tiles"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("binding 2"), std::string::npos) << s.message();
  detail::Pass undeclared;
  undeclared.name = "vkc.test";
  EXPECT_FALSE(detail::checkPass(undeclared).ok());
  detail::Pass shortPass = detail::passFromDecl(gpu::kBoundsPasses[gpu::kBoundsPassMerge], nullptr, {ranges, 3});
  EXPECT_FALSE(detail::checkPass(shortPass).ok());
}

}  // namespace
}  // namespace vkc
