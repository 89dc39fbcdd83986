// Every embedded shader rounds each floating-point operation on its own, as the CPU twins do
// (compiled with -ffp-contract=off): the build (tools/spirv_embed.cpp) decorates every arithmetic
// result NoContraction, and the shared code spells dot, cross and mix out (shaders/shared/common.h),
// so no module may contain a built-in whose inside a driver may fuse or reorder. CPU only, no device.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "spirv/spirv_access.h"
#include "vulkan/pipelines.h"

namespace vkc {
namespace {

constexpr uint32_t kOpExtInstImport = 11, kOpExtInst = 12, kOpDot = 148, kNoContraction = 42;

bool isFloatArithmetic(uint32_t opcode) {
  return opcode == 127 || opcode == 129 || opcode == 131 || opcode == 133 || opcode == 136 || opcode == 140 ||
         opcode == 141 || (opcode >= 142 && opcode <= 148);
}

// GLSL.std.450 instructions computed from several roundings inside one instruction.
const std::map<uint32_t, const char*> kFusedBuiltins = {{46, "mix (FMix)"},       {50, "fma"},
                                                        {66, "length"},           {67, "distance"},
                                                        {68, "cross"},            {69, "normalize"},
                                                        {70, "faceforward"},      {71, "reflect"},
                                                        {72, "refract"}};

struct Findings {
  size_t arithmetic = 0;
  std::vector<uint32_t> undecorated;  // result ids
  std::vector<std::string> builtins;  // what a module uses that it should not
};

Findings inspect(const std::vector<uint32_t>& words) {
  Findings f;
  std::set<uint32_t> decorated, glslSets;
  std::vector<uint32_t> results;
  const bool ok = spirv::forEachInstruction(words, [&](uint32_t opcode, const uint32_t* w, uint32_t n) {
    if (opcode == spirv::op::kDecorate && n >= 3 && w[2] == kNoContraction) decorated.insert(w[1]);
    if (opcode == kOpExtInstImport && n >= 3 && std::string(reinterpret_cast<const char*>(&w[2])) == "GLSL.std.450") {
      glslSets.insert(w[1]);
    }
    if (isFloatArithmetic(opcode) && n >= 3) results.push_back(w[2]);
    if (opcode == kOpDot) f.builtins.emplace_back("dot (OpDot)");
    if (opcode == kOpExtInst && n >= 5 && glslSets.count(w[3]) != 0) {
      if (const auto it = kFusedBuiltins.find(w[4]); it != kFusedBuiltins.end()) f.builtins.emplace_back(it->second);
    }
  });
  EXPECT_TRUE(ok) << "malformed SPIR-V";
  f.arithmetic = results.size();
  for (uint32_t id : results) {
    if (decorated.count(id) == 0) f.undecorated.push_back(id);
  }
  return f;
}

TEST(SpirvNoContraction, EveryEmbeddedShaderRoundsEachOperation) {
  const std::vector<std::string> names = spirv::shaderNames();
  ASSERT_GE(names.size(), 10u);
  size_t total = 0;
  for (const std::string& name : names) {
    for (const bool exact : {false, true}) {  // both variants (ContextCreateInfo::exactArithmetic)
      const std::span<const uint32_t> span = detail::embeddedShader(name.c_str(), exact);
      ASSERT_FALSE(span.empty()) << "shaders/" << name << ".comp is not embedded";
      const Findings f = inspect({span.begin(), span.end()});
      total += f.arithmetic;
      const std::string variant = name + (exact ? " (exact arithmetic)" : "");
      EXPECT_TRUE(f.undecorated.empty()) << variant << ": " << f.undecorated.size() << " of " << f.arithmetic
                                         << " floating-point operations lack NoContraction (first id %"
                                         << (f.undecorated.empty() ? 0 : f.undecorated[0]) << ")";
      for (const std::string& b : f.builtins) ADD_FAILURE() << variant << " uses the built-in " << b;
    }
  }
  EXPECT_GT(total, 1000u);  // the stages do arithmetic: a check that counts nothing would pass anything
}

// The check itself, on a hand-made instruction stream (not a module a driver would take: only the
// instructions matter here): an undecorated multiply and a built-in dot are caught, a decorated
// multiply is not.
TEST(SpirvNoContraction, CatchesUndecoratedOperationsAndBuiltins) {
  std::vector<uint32_t> words = {0x07230203u, 0x00010600u, 0u, 10u, 0u,
                                 (3u << 16) | 22u, 1u, 32u,             // %1 = OpTypeFloat 32
                                 (5u << 16) | 133u, 1u, 4u, 2u, 3u,     // %4 = OpFMul %1 %2 %3
                                 (5u << 16) | kOpDot, 1u, 5u, 6u, 7u};  // %5 = OpDot %1 %6 %7
  Findings f = inspect(words);
  EXPECT_EQ(f.arithmetic, 2u);
  EXPECT_EQ(f.undecorated, (std::vector<uint32_t>{4u, 5u}));
  ASSERT_EQ(f.builtins.size(), 1u);
  EXPECT_EQ(f.builtins[0], "dot (OpDot)");
  const uint32_t decorate[] = {(3u << 16) | spirv::op::kDecorate, 4u, kNoContraction};
  words.insert(words.begin() + 5, std::begin(decorate), std::end(decorate));
  f = inspect(words);
  EXPECT_EQ(f.undecorated, (std::vector<uint32_t>{5u}));
}

}  // namespace
}  // namespace vkc
