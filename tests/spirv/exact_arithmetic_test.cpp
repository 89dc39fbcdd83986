// Exact arithmetic in the embedded shaders (CPU only, no device): in each shader's exact-arithmetic
// variant (ContextCreateInfo::exactArithmetic) the build (tools/spirv_embed.cpp) routes every float
// division and square root through vkcDivOp / vkcSqrtOp (shaders/shared/rounding.h: correctly
// rounded). So in every such module an OpFDiv or a GLSL.std.450 Sqrt may only be inside those two
// functions or what they call; the plain variant does not call them. The results on a device:
// tests/vulkan/rounding_vulkan_test.cpp (ExactArithmeticVulkan) and the geometry queries' exact
// conformance test.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "spirv/spirv_access.h"
#include "vulkan/pipelines.h"

namespace vkc {
namespace {

constexpr uint32_t kOpExtInstImport = 11, kOpExtInst = 12, kOpFunctionEnd = 56, kOpFDiv = 136, kGlslSqrt = 31;

struct Routing {
  size_t helperCalls = 0;
  size_t outsideHelpers = 0;  // divisions and square roots elsewhere
};

std::string literal(const uint32_t* w, uint32_t n, uint32_t at) {
  std::string s;
  for (uint32_t i = at; i < n; ++i) {
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((w[i] >> (8 * b)) & 0xFFu);
      if (c == '\0') return s;
      s += c;
    }
  }
  return s;
}

// A module's functions as the checks below read them: names, the entry point, each function's calls
// (callee -> calls, with multiplicity) and its own divisions and square roots.
struct Functions {
  std::map<uint32_t, std::string> names;
  uint32_t entry = 0;
  std::map<uint32_t, std::map<uint32_t, size_t>> calls;
  std::map<uint32_t, size_t> operations;
};

Functions scanFunctions(const std::vector<uint32_t>& words) {
  Functions m;
  std::set<uint32_t> glsl;
  uint32_t current = 0;
  const bool ok = spirv::forEachInstruction(words, [&](uint32_t opcode, const uint32_t* w, uint32_t n) {
    if (opcode == spirv::op::kName && n >= 3) m.names[w[1]] = literal(w, n, 2);
    if (opcode == spirv::op::kEntryPoint && n >= 3) m.entry = w[2];
    if (opcode == kOpExtInstImport && n >= 3 && literal(w, n, 2) == "GLSL.std.450") glsl.insert(w[1]);
    if (opcode == spirv::op::kFunction && n >= 3) current = w[2];
    if (opcode == kOpFunctionEnd) current = 0;
    if (opcode == spirv::op::kFunctionCall && n >= 4) ++m.calls[current][w[3]];
    if (opcode == kOpFDiv || (opcode == kOpExtInst && n >= 5 && glsl.count(w[3]) != 0 && w[4] == kGlslSqrt)) {
      ++m.operations[current];
    }
  });
  EXPECT_TRUE(ok) << "malformed SPIR-V";
  return m;
}

Routing inspect(const std::vector<uint32_t>& words) {
  Routing r;
  Functions m = scanFunctions(words);
  std::vector<uint32_t> stack;
  for (const auto& [id, name] : m.names) {
    if (name == "vkcDivOp(f1;f1;" || name == "vkcSqrtOp(f1;") stack.push_back(id);
  }
  std::set<uint32_t> helpers(stack.begin(), stack.end()), exempt;
  while (!stack.empty()) {
    const uint32_t f = stack.back();
    stack.pop_back();
    if (!exempt.insert(f).second) continue;
    for (const auto& [callee, count] : m.calls[f]) stack.push_back(callee);
  }
  for (const auto& [f, callees] : m.calls) {
    for (const auto& [callee, count] : callees) {
      r.helperCalls += helpers.count(callee) != 0 && exempt.count(f) == 0 ? 1 : 0;
    }
  }
  for (const auto& [f, count] : m.operations) r.outsideHelpers += exempt.count(f) == 0 ? count : 0;
  return r;
}

TEST(SpirvExactArithmetic, EveryDivisionAndSquareRootGoesThroughTheHelpers) {
  size_t calls = 0, modules = 0, plainOperations = 0;
  for (const std::string& name : spirv::shaderNames()) {
    const std::span<const uint32_t> exact = detail::embeddedShader(name.c_str(), true);
    const std::span<const uint32_t> plain = detail::embeddedShader(name.c_str(), false);
    ASSERT_FALSE(exact.empty() || plain.empty()) << "shaders/" << name << ".comp is not embedded";
    const Routing r = inspect({exact.begin(), exact.end()});
    ++modules;
    calls += r.helperCalls;
    EXPECT_EQ(r.outsideHelpers, 0u) << name << ": divisions or square roots the build did not route";
    const Routing p = inspect({plain.begin(), plain.end()});
    EXPECT_EQ(p.helperCalls, 0u) << name << ": the plain variant calls the exact helpers";
    plainOperations += p.outsideHelpers;
  }
  EXPECT_GT(plainOperations, 200u);  // the plain variants keep the device's own divisions
  EXPECT_GE(modules, 10u);
  EXPECT_GT(calls, 200u);  // the stages divide: a check that counts nothing would pass anything
}

// The check on a hand-made stream (only the instructions matter): a division in a function that is not
// a helper is caught; the same division inside vkcDivOp is not.
TEST(SpirvExactArithmetic, CatchesADivisionOutsideTheHelpers) {
  const auto name = [](uint32_t id, const char* s) {
    std::vector<uint32_t> w = {0u, id};
    std::string str(s);
    str.resize((str.size() / 4 + 1) * 4, '\0');
    for (size_t i = 0; i < str.size(); i += 4) {
      w.push_back(static_cast<uint32_t>(static_cast<unsigned char>(str[i])) |
                  static_cast<uint32_t>(static_cast<unsigned char>(str[i + 1])) << 8 |
                  static_cast<uint32_t>(static_cast<unsigned char>(str[i + 2])) << 16 |
                  static_cast<uint32_t>(static_cast<unsigned char>(str[i + 3])) << 24);
    }
    w[0] = (static_cast<uint32_t>(w.size()) << 16) | spirv::op::kName;
    return w;
  };
  const auto module = [&](const char* functionName) {
    std::vector<uint32_t> words = {0x07230203u, 0x00010600u, 0u, 20u, 0u};
    const std::vector<uint32_t> n = name(2u, functionName);
    words.insert(words.end(), n.begin(), n.end());
    const uint32_t body[] = {(5u << 16) | spirv::op::kFunction, 1u, 2u, 0u, 3u,  // %2 = OpFunction %1 None %3
                             (5u << 16) | kOpFDiv, 1u, 4u, 5u, 6u,               // %4 = OpFDiv %1 %5 %6
                             (1u << 16) | kOpFunctionEnd};
    words.insert(words.end(), std::begin(body), std::end(body));
    return words;
  };
  EXPECT_EQ(inspect(module("geomSomething(f1;")).outsideHelpers, 1u);
  EXPECT_EQ(inspect(module("vkcDivOp(f1;f1;")).outsideHelpers, 0u);
}

// The divisions and square roots of a module once every call is inlined, as drivers inline them
// (Mesa's NIR inlines every function before optimizing): each function's own operations times the
// copies of it that inlining from the entry point makes (its calls, with multiplicity, from each
// copy of its callers). In the exact-arithmetic variant each one becomes vkcDivOp's or vkcSqrtOp's
// correction, some 500 SPIR-V instructions once inlined, so the variant's size and its compile time
// grow with this count (docs/integration.md, "Exact arithmetic": the convex family's went from 820
// to 338 when GJK, EPA, the search and their support functions got one call site each, the
// continuous family's from 638 to 398 and the basic family's from 230 to 110 when the golden-section
// searches evaluated in one place, the mesh-mesh family's from 413 to 266 when its tri-tri contact
// came from one call).
size_t inlinedSites(const std::vector<uint32_t>& words) {
  Functions m = scanFunctions(words);
  const uint32_t entry = m.entry;
  // Callers before callees (the call graph of a shader has no cycle), then the copies top down.
  std::vector<uint32_t> order;
  std::set<uint32_t> seen;
  std::vector<std::pair<uint32_t, bool>> stack = {{entry, false}};
  while (!stack.empty()) {
    const auto [f, done] = stack.back();
    stack.pop_back();
    if (done) {
      order.push_back(f);
      continue;
    }
    if (!seen.insert(f).second) continue;
    stack.push_back({f, true});
    for (const auto& [callee, count] : m.calls[f]) stack.push_back({callee, false});
  }
  std::map<uint32_t, size_t> copies = {{entry, 1}};
  size_t sites = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    sites += copies[*it] * m.operations[*it];
    for (const auto& [callee, count] : m.calls[*it]) copies[callee] += copies[*it] * count;
  }
  return sites;
}

// Each module's inlined divisions and square roots (plain variant) within its budget: a heavy
// function called from a second place (a second copy of GJK or EPA after inlining) fails here. The
// budgets are today's counts plus about a tenth; a module not listed has at most 100.
TEST(SpirvExactArithmetic, InlinedDivisionsAndRootsStayWithinBudget) {
  const std::map<std::string, size_t> budget = {
      {"collide_meshes", 290},          {"collide_shapes", 165},
      {"geometry_queries_basic", 125},  {"geometry_queries_continuous", 440},
      {"geometry_queries_convex", 370}, {"geometry_queries_implicit", 360},
      {"geometry_queries_mesh", 240},   {"geometry_queries_mesh_mesh", 295},
  };
  size_t total = 0;
  for (const std::string& name : spirv::shaderNames()) {
    const std::span<const uint32_t> plain = detail::embeddedShader(name.c_str(), false);
    ASSERT_FALSE(plain.empty()) << "shaders/" << name << ".comp is not embedded";
    const size_t sites = inlinedSites({plain.begin(), plain.end()});
    total += sites;
    const auto it = budget.find(name);
    const size_t most = it != budget.end() ? it->second : 100u;
    EXPECT_LE(sites, most) << name << ": " << sites << " divisions and square roots once inlined";
    std::printf("%-36s %6zu inlined divisions and square roots (budget %zu)\n", name.c_str(), sites, most);
  }
  EXPECT_GT(total, 1000u);  // a count that found nothing would pass anything
}

// The count on a hand-made module: main calls f twice, f calls g three times, g divides once and f
// once: 2 (f) + 6 (g).
TEST(SpirvExactArithmetic, InlinedSitesCountEveryCopy) {
  // %1 a type, %3 a function type; functions %10 (main), %11 (f), %12 (g).
  std::vector<uint32_t> words = {0x07230203u, 0x00010600u, 0u, 40u, 0u, (4u << 16) | spirv::op::kEntryPoint,
                                 5u,          10u,         0u};
  const auto function = [&](uint32_t id, std::initializer_list<uint32_t> callees, uint32_t divisions) {
    const uint32_t head[] = {(5u << 16) | spirv::op::kFunction, 1u, id, 0u, 3u};
    words.insert(words.end(), std::begin(head), std::end(head));
    uint32_t result = 20u + 4u * id;
    for (uint32_t callee : callees) {
      const uint32_t call[] = {(4u << 16) | spirv::op::kFunctionCall, 1u, result++, callee};
      words.insert(words.end(), std::begin(call), std::end(call));
    }
    for (uint32_t i = 0; i < divisions; ++i) {
      const uint32_t div[] = {(5u << 16) | kOpFDiv, 1u, result++, 5u, 6u};
      words.insert(words.end(), std::begin(div), std::end(div));
    }
    words.push_back((1u << 16) | kOpFunctionEnd);
  };
  function(10u, {11u, 11u}, 0u);
  function(11u, {12u, 12u, 12u}, 1u);
  function(12u, {}, 1u);
  EXPECT_EQ(inlinedSites(words), 8u);
}

}  // namespace
}  // namespace vkc
