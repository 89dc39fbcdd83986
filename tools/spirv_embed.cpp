// Build-time tool (cmake/Shaders.cmake): turns a SPIR-V module from glslangValidator into the C++
// header the library embeds, after decorating every floating-point arithmetic result NoContraction.
//
//   vkc_spirv_embed [--exact <kept.spv>] <in.spv> <out.h> <array name> [<depfile to retarget>]
//
// Why: the CPU twins are compiled with -ffp-contract=off, so every a * b + c rounds twice. GLSL's
// `precise` only protects the expressions that flow into a variable declared precise, and a driver is
// free to fuse everything else into fused multiply-adds (NVIDIA's does). Decorating every OpFMul,
// OpFAdd, ... of the module (SPIR-V's NoContraction: "cannot be combined with another instruction to
// form a single operation", and no reassociation) asks every driver to round each operation on its
// own, as the CPU does, whatever the shader source says. The shared GLSL code spells dot, cross and
// mix as explicit products and sums (shaders/shared/common.h), since a driver may evaluate those
// built-ins internally with fused steps. tests/spirv/pass_decl_test.cpp checks every embedded module.
//
// Exact arithmetic (--exact): a second array, <array name>_exact, from the same shader compiled with
// --keep-uncalled, in which every float division (OpFDiv) and square root (GLSL.std.450 Sqrt) of the
// module's functions has become a call of vkcDivOp / vkcSqrtOp (shaders/shared/rounding.h: correctly
// rounded, as the CPU's), one float at a time; the two functions and what they call keep the device's
// own operations (their candidates). Any other built-in a device may approximate stops the build. The
// functions no entry point reaches are removed first (they were kept so that the two helpers are
// there to call) and again after, with their names and decorations. A context with
// ContextCreateInfo::exactArithmetic creates its pipelines from the _exact arrays; the plain array is
// the module as before, so the default costs no driver anything.
//
// The depfile argument: glslangValidator names its -o file (the .spv) as the target of the
// dependencies it writes; the rule's output is the header, so the tool rewrites the target name.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kMagic = 0x07230203u;
constexpr size_t kHeaderWords = 5;
constexpr uint32_t kOpFunction = 54, kOpDecorate = 71, kDecorationNoContraction = 42;
constexpr uint32_t kOpName = 5, kOpExtInstImport = 11, kOpExtInst = 12, kOpEntryPoint = 15, kOpTypeFloat = 22,
                   kOpTypeVector = 23, kOpFunctionParameter = 55, kOpFunctionEnd = 56, kOpFunctionCall = 57,
                   kOpVariable = 59, kOpStore = 62, kOpCompositeConstruct = 80, kOpCompositeExtract = 81,
                   kOpLabel = 248, kOpFDiv = 136, kStorageFunction = 7;
constexpr uint32_t kGlslSqrt = 31;
constexpr const char* kDivHelper = "vkcDivOp(f1;f1;";
constexpr const char* kSqrtHelper = "vkcSqrtOp(f1;";

// Opcodes whose result is a floating-point arithmetic operation (their result id is word 2).
bool isFloatArithmetic(uint32_t opcode) {
  switch (opcode) {
    case 127:  // OpFNegate
    case 129:  // OpFAdd
    case 131:  // OpFSub
    case 133:  // OpFMul
    case 136:  // OpFDiv
    case 140:  // OpFRem
    case 141:  // OpFMod
    case 142:  // OpVectorTimesScalar
    case 143:  // OpMatrixTimesScalar
    case 144:  // OpVectorTimesMatrix
    case 145:  // OpMatrixTimesVector
    case 146:  // OpMatrixTimesMatrix
    case 147:  // OpOuterProduct
    case 148:  // OpDot
      return true;
    default:
      return false;
  }
}

// Annotation instructions: OpDecorate .. OpGroupMemberDecorate, OpDecorateId, OpDecorateString,
// OpMemberDecorateString.
bool isAnnotation(uint32_t opcode) {
  return (opcode >= 71 && opcode <= 75) || opcode == 332 || opcode == 5632 || opcode == 5633;
}

// The whole file, or false. (C stdio: GCC 12 warns of a null dereference inside istreambuf_iterator.)
bool readBytes(const char* path, std::string& bytes) {
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return false;
  bytes.clear();
  char buf[65536];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
  const bool ok = std::ferror(f) == 0;
  std::fclose(f);
  return ok;
}

bool readFile(const char* path, std::vector<uint32_t>& words) {
  std::string bytes;
  if (!readBytes(path, bytes) || bytes.size() % 4 != 0) return false;
  words.resize(bytes.size() / 4);
  for (size_t i = 0; i < words.size(); ++i) {
    uint32_t w = 0;
    for (int b = 3; b >= 0; --b) w = (w << 8) | static_cast<unsigned char>(bytes[i * 4 + static_cast<size_t>(b)]);
    words[i] = w;
  }
  return true;
}

// GLSL.std.450 instructions a module may keep: exact by Vulkan's precision rules (integer, sign,
// rounding to an integer, min / max / clamp, ldexp), or measured equal to the CPU's on the devices we
// ran (cross: tests/vulkan/rounding_vulkan_test.cpp); Sqrt (31) is rewritten. Every other one (the
// transcendental functions, mix, fma, length, normalize, ...) stops the build.
bool isExactGlslBuiltin(uint32_t instruction) {
  switch (instruction) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8: case 9: case 10:  // Round .. Fract
    case 37: case 38: case 39: case 40: case 41: case 42: case 43: case 44: case 45:  // min, max, clamp
    case 48:                                                                          // Step
    case 51: case 52: case 53:                                                        // Frexp, FrexpStruct, Ldexp
    case 68:                                                                          // Cross
    case 73: case 74: case 75:                                                        // FindILsb .. FindUMsb
    case 79: case 80: case 81:                                                        // NMin, NMax, NClamp
      return true;
    default:
      return false;
  }
}

using Instruction = std::vector<uint32_t>;  // all its words, the first (word count, opcode) included

uint32_t opcodeOf(const Instruction& i) { return i[0] & 0xFFFFu; }

Instruction makeInstruction(uint32_t opcode, std::initializer_list<uint32_t> operands) {
  Instruction i{(static_cast<uint32_t>(operands.size() + 1) << 16) | opcode};
  i.insert(i.end(), operands);
  return i;
}

// A literal string operand starting at word `at`.
std::string literalString(const Instruction& i, size_t at) {
  std::string s;
  for (size_t w = at; w < i.size(); ++w) {
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((i[w] >> (8 * b)) & 0xFFu);
      if (c == '\0') return s;
      s += c;
    }
  }
  return s;
}

struct Module {
  std::vector<uint32_t> header;
  std::vector<Instruction> instructions;
};

bool parseModule(const std::vector<uint32_t>& words, Module& m) {
  if (words.size() < kHeaderWords || words[0] != kMagic) return false;
  m.header.assign(words.begin(), words.begin() + kHeaderWords);
  m.instructions.clear();
  for (size_t i = kHeaderWords; i < words.size();) {
    const uint32_t count = words[i] >> 16;
    if (count == 0 || i + count > words.size()) return false;
    m.instructions.emplace_back(words.begin() + static_cast<std::ptrdiff_t>(i),
                                words.begin() + static_cast<std::ptrdiff_t>(i + count));
    i += count;
  }
  return true;
}

std::vector<uint32_t> flatten(const Module& m) {
  std::vector<uint32_t> words = m.header;
  for (const Instruction& i : m.instructions) words.insert(words.end(), i.begin(), i.end());
  return words;
}

// A function: its id and the range [begin, end] of its instructions (OpFunction .. OpFunctionEnd).
struct FunctionRange {
  uint32_t id = 0;
  size_t begin = 0, end = 0;
};

std::vector<FunctionRange> functionsOf(const Module& m) {
  std::vector<FunctionRange> fns;
  for (size_t k = 0; k < m.instructions.size(); ++k) {
    const Instruction& i = m.instructions[k];
    if (opcodeOf(i) == kOpFunction && i.size() >= 3) fns.push_back({i[2], k, k});
    if (opcodeOf(i) == kOpFunctionEnd && !fns.empty()) fns.back().end = k;
  }
  return fns;
}

// The functions reachable from `roots` through OpFunctionCall.
std::set<uint32_t> reachable(const Module& m, const std::vector<FunctionRange>& fns, std::vector<uint32_t> roots) {
  std::map<uint32_t, const FunctionRange*> byId;
  for (const FunctionRange& f : fns) byId[f.id] = &f;
  std::set<uint32_t> seen;
  while (!roots.empty()) {
    const uint32_t id = roots.back();
    roots.pop_back();
    const auto it = byId.find(id);
    if (it == byId.end() || !seen.insert(id).second) continue;
    for (size_t k = it->second->begin; k <= it->second->end; ++k) {
      const Instruction& i = m.instructions[k];
      if (opcodeOf(i) == kOpFunctionCall && i.size() >= 4) roots.push_back(i[3]);
    }
  }
  return seen;
}

// Rewrites the module's float divisions and square roots into calls of the helpers (see the top of
// the file). Returns the sites rewritten, or -1 with `error` set.
long routeDivisionsAndRoots(Module& m, std::string& error) {
  std::map<std::string, uint32_t> functionNamed;
  uint32_t floatType = 0, glsl = 0;
  std::map<uint32_t, uint32_t> vectorSize;  // float vector type -> component count
  for (const Instruction& i : m.instructions) {
    const uint32_t op = opcodeOf(i);
    if (op == kOpName && i.size() >= 3) functionNamed[literalString(i, 2)] = i[1];
    if (op == kOpExtInstImport && i.size() >= 3 && literalString(i, 2) == "GLSL.std.450") glsl = i[1];
    if (op == kOpTypeFloat && i.size() >= 3 && i[2] == 32) floatType = i[1];
    if (op == kOpTypeVector && i.size() >= 4 && i[2] == floatType && floatType != 0) vectorSize[i[1]] = i[3];
  }
  const std::vector<FunctionRange> fns = functionsOf(m);
  const uint32_t divHelper = functionNamed.count(kDivHelper) != 0 ? functionNamed[kDivHelper] : 0;
  const uint32_t sqrtHelper = functionNamed.count(kSqrtHelper) != 0 ? functionNamed[kSqrtHelper] : 0;
  std::vector<uint32_t> helpers;
  for (uint32_t h : {divHelper, sqrtHelper}) {
    if (h != 0) helpers.push_back(h);
  }
  const std::set<uint32_t> exempt = reachable(m, fns, helpers);
  // The helpers' parameters: pointers to Function floats (glslang passes `in` parameters so).
  uint32_t floatPointer = 0;
  for (const FunctionRange& f : fns) {
    if (f.id != divHelper || f.begin + 1 >= m.instructions.size()) continue;
    const Instruction& parameter = m.instructions[f.begin + 1];
    if (opcodeOf(parameter) == kOpFunctionParameter) floatPointer = parameter[1];
  }
  uint32_t& bound = m.header[3];
  long sites = 0;
  std::set<uint32_t> rewritten;
  std::vector<Instruction> out;
  out.reserve(m.instructions.size());
  size_t next = 0;
  for (const FunctionRange& f : fns) {
    while (next < f.begin) out.push_back(m.instructions[next++]);
    std::vector<Instruction> body;
    uint32_t varA = 0, varB = 0;
    size_t labelAt = 0;  // the first OpLabel in `body`
    for (size_t k = f.begin; k <= f.end; ++k) {
      const Instruction& i = m.instructions[k];
      const uint32_t op = opcodeOf(i);
      if (op == kOpLabel && labelAt == 0) labelAt = body.size();
      const bool div = op == kOpFDiv && i.size() == 5;
      const bool sqrt = op == kOpExtInst && i.size() == 6 && i[3] == glsl && i[4] == kGlslSqrt;
      if (op == kOpExtInst && i.size() >= 5 && i[3] == glsl && !sqrt && !isExactGlslBuiltin(i[4])) {
        error = "GLSL.std.450 instruction " + std::to_string(i[4]) +
                " may be approximated by a device; exact arithmetic has no correctly rounded form of it";
        return -1;
      }
      if ((!div && !sqrt) || exempt.count(f.id) != 0) {
        body.push_back(i);
        continue;
      }
      const uint32_t type = i[1], result = i[2];
      const bool scalar = type == floatType;
      if (!scalar && vectorSize.count(type) == 0) {  // a double, or a type this tool does not know
        error = "a division or square root of a type other than float and its vectors (result %" +
                std::to_string(result) + ")";
        return -1;
      }
      const uint32_t helper = div ? divHelper : sqrtHelper;
      if (helper == 0 || floatPointer == 0) {
        error = std::string("the module divides or takes square roots but lacks ") +
                (div ? kDivHelper : kSqrtHelper) +
                " (shaders/shared/rounding.h, included by common.h; compiled with --keep-uncalled?)";
        return -1;
      }
      if (varA == 0) {
        varA = bound++;
        varB = bound++;
      }
      const uint32_t count = scalar ? 1u : vectorSize[type];
      const uint32_t x = div ? i[3] : i[5], y = div ? i[4] : 0u;
      std::vector<uint32_t> parts;
      for (uint32_t c = 0; c < count; ++c) {
        uint32_t xc = x, yc = y;
        if (!scalar) {
          xc = bound++;
          body.push_back(makeInstruction(kOpCompositeExtract, {floatType, xc, x, c}));
          if (div) {
            yc = bound++;
            body.push_back(makeInstruction(kOpCompositeExtract, {floatType, yc, y, c}));
          }
        }
        body.push_back(makeInstruction(kOpStore, {varA, xc}));
        if (div) body.push_back(makeInstruction(kOpStore, {varB, yc}));
        const uint32_t part = scalar ? result : bound++;
        body.push_back(div ? makeInstruction(kOpFunctionCall, {floatType, part, helper, varA, varB})
                           : makeInstruction(kOpFunctionCall, {floatType, part, helper, varA}));
        parts.push_back(part);
      }
      if (!scalar) {
        Instruction construct = makeInstruction(kOpCompositeConstruct, {type, result});
        construct.insert(construct.end(), parts.begin(), parts.end());
        construct[0] = (static_cast<uint32_t>(construct.size()) << 16) | kOpCompositeConstruct;
        body.push_back(construct);
      }
      rewritten.insert(result);
      ++sites;
    }
    if (varA != 0) {  // the two argument variables, first in the first block
      if (labelAt == 0) {
        error = "a function without a block";
        return -1;
      }
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(labelAt + 1),
                  {makeInstruction(kOpVariable, {floatPointer, varA, kStorageFunction}),
                   makeInstruction(kOpVariable, {floatPointer, varB, kStorageFunction})});
    }
    out.insert(out.end(), body.begin(), body.end());
    next = f.end + 1;
  }
  while (next < m.instructions.size()) out.push_back(m.instructions[next++]);
  // A rewritten result is a call or a construct now: its arithmetic decorations (NoContraction of a
  // `precise` value) no longer apply.
  std::erase_if(out, [&](const Instruction& i) {
    return opcodeOf(i) == kOpDecorate && i.size() >= 3 && rewritten.count(i[1]) != 0;
  });
  m.instructions = std::move(out);
  return sites;
}

// The result id of an instruction inside a function (OpLabel's word 1, else word 2), 0 for those
// without a result that a compute shader uses.
uint32_t resultOf(const Instruction& i) {
  switch (opcodeOf(i)) {
    case kOpLabel:
      return i.size() >= 2 ? i[1] : 0;
    case 8: case 317:                                  // OpLine, OpNoLine
    case kOpFunctionEnd: case kOpStore: case 63: case 64:  // OpCopyMemory, OpCopyMemorySized
    case 224: case 225: case 228:                      // OpControlBarrier, OpMemoryBarrier, OpAtomicStore
    case 246: case 247: case 249: case 250: case 251:  // OpLoopMerge .. OpSwitch
    case 252: case 253: case 254: case 255:            // OpKill, OpReturn, OpReturnValue, OpUnreachable
    case 4416:                                         // OpTerminateInvocation
      return 0;
    default:
      return i.size() >= 3 ? i[2] : 0;
  }
}

// The id a global instruction defines (types: word 1; constants, variables, undef: word 2), else 0.
uint32_t globalDefinitionOf(const Instruction& i) {
  const uint32_t op = opcodeOf(i);
  if (op >= 19 && op <= 38 && i.size() >= 2) return i[1];                     // OpTypeVoid .. OpTypeRuntimeArray etc.
  if (op == kOpExtInstImport || op == 7) return i.size() >= 2 ? i[1] : 0;      // OpString
  if ((op >= 41 && op <= 52) || op == kOpVariable || op == 1) return i.size() >= 3 ? i[2] : 0;  // constants, OpUndef
  return 0;
}

// Removes the functions that neither an entry point nor the functions named `keep` reach (the shader
// was compiled with --keep-uncalled), and the names and decorations of what they defined. Returns the
// functions removed.
size_t removeUncalledFunctions(Module& m, std::initializer_list<const char*> keep) {
  const std::vector<FunctionRange> fns = functionsOf(m);
  std::vector<uint32_t> roots;
  for (const Instruction& i : m.instructions) {
    if (opcodeOf(i) == kOpEntryPoint && i.size() >= 3) roots.push_back(i[2]);
    if (opcodeOf(i) == kOpName && i.size() >= 3) {
      for (const char* name : keep) {
        if (literalString(i, 2) == name) roots.push_back(i[1]);
      }
    }
  }
  const std::set<uint32_t> live = reachable(m, fns, roots);
  std::vector<bool> dead(m.instructions.size(), false);
  std::set<uint32_t> deadIds;  // the results of the removed functions' instructions
  size_t removed = 0;
  for (const FunctionRange& f : fns) {
    if (live.count(f.id) != 0) continue;
    ++removed;
    for (size_t k = f.begin; k <= f.end; ++k) {
      dead[k] = true;
      if (const uint32_t id = resultOf(m.instructions[k]); id != 0) deadIds.insert(id);
    }
  }
  // A global's names and decorations stay, whatever a misread instruction above said.
  for (size_t k = 0; k < m.instructions.size() && (fns.empty() || k < fns.front().begin); ++k) {
    deadIds.erase(globalDefinitionOf(m.instructions[k]));
  }
  std::vector<Instruction> out;
  for (size_t k = 0; k < m.instructions.size(); ++k) {
    const Instruction& i = m.instructions[k];
    if (dead[k]) continue;
    const uint32_t op = opcodeOf(i);
    if ((op == kOpName || isAnnotation(op)) && i.size() >= 2 && deadIds.count(i[1]) != 0) continue;
    out.push_back(i);
  }
  m.instructions = std::move(out);
  return removed;
}

// Adds OpDecorate %id NoContraction for every floating-point arithmetic result that lacks it, after
// the module's last annotation before the first function. Returns the count added, or -1 on a
// malformed module.
long decorateNoContraction(std::vector<uint32_t>& words) {
  if (words.size() < kHeaderWords || words[0] != kMagic) return -1;
  std::set<uint32_t> decorated;
  std::vector<uint32_t> results;
  size_t insertAt = 0;
  bool inFunctions = false;
  for (size_t i = kHeaderWords; i < words.size();) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xFFFFu;
    if (count == 0 || i + count > words.size()) return -1;
    if (opcode == kOpFunction) inFunctions = true;
    if (!inFunctions && isAnnotation(opcode)) insertAt = i + count;
    if (opcode == kOpDecorate && count >= 3 && words[i + 2] == kDecorationNoContraction) decorated.insert(words[i + 1]);
    if (isFloatArithmetic(opcode) && count >= 3) results.push_back(words[i + 2]);
    i += count;
  }
  if (insertAt == 0 && !results.empty()) return -1;  // no annotation section to extend
  std::vector<uint32_t> added;
  for (uint32_t id : results) {
    if (!decorated.insert(id).second) continue;
    added.insert(added.end(), {(3u << 16) | kOpDecorate, id, kDecorationNoContraction});
  }
  words.insert(words.begin() + static_cast<std::ptrdiff_t>(insertAt), added.begin(), added.end());
  return static_cast<long>(added.size() / 3);
}

// The header: one array per (name, words).
bool writeHeader(const char* path, const std::vector<std::pair<std::string, std::vector<uint32_t>>>& arrays) {
  std::ostringstream s;
  s << "// Generated by vkc_spirv_embed (tools/spirv_embed.cpp): do not edit.\n#pragma once\n#include <stdint.h>\n";
  char buf[16];
  for (const auto& [name, words] : arrays) {
    s << "const uint32_t " << name << "[] = {";
    for (size_t i = 0; i < words.size(); ++i) {
      std::snprintf(buf, sizeof buf, "0x%08x", words[i]);
      s << (i % 8 == 0 ? "\n  " : " ") << buf << ",";
    }
    s << "\n};\n";
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << s.str();
  return static_cast<bool>(out);
}

// Replaces the target of a make-style depfile ("target: deps...") by `target`.
bool retargetDepfile(const char* path, const std::string& target) {
  std::string text;
  if (!readBytes(path, text)) return false;
  // The target ends at the first ": " (a Windows drive letter's colon is not followed by a space).
  const size_t colon = text.find(": ");
  if (colon == std::string::npos) return false;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << target << text.substr(colon);
  return static_cast<bool>(out);
}

// The exact-arithmetic variant of a module compiled with --keep-uncalled: the uncalled functions
// removed but for the helpers (neither checked nor rewritten), divisions and roots routed, then what
// stays uncalled removed. False, with `error`, where the module cannot be routed.
bool exactVariant(std::vector<uint32_t>& words, std::string& error) {
  Module module;
  if (!parseModule(words, module)) {
    error = "not a SPIR-V module";
    return false;
  }
  removeUncalledFunctions(module, {kDivHelper, kSqrtHelper});
  if (routeDivisionsAndRoots(module, error) < 0) return false;
  removeUncalledFunctions(module, {});
  words = flatten(module);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // --exact K.spv: the library's and its tests' shaders, also compiled with --keep-uncalled into K.spv,
  // whose exact-arithmetic variant the header holds too, as <array name>_exact (a sample's own
  // shaders have none).
  const char* exactInput = nullptr;
  if (argc > 2 && std::string(argv[1]) == "--exact") {
    exactInput = argv[2];
    argc -= 2;
    argv += 2;
  }
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: vkc_spirv_embed [--exact <kept.spv>] <in.spv> <out.h> <array name> [<depfile>]\n");
    return 2;
  }
  std::vector<std::pair<std::string, std::vector<uint32_t>>> arrays;
  for (const char* input : {static_cast<const char*>(argv[1]), exactInput}) {
    if (input == nullptr) continue;
    std::vector<uint32_t> words;
    if (!readFile(input, words)) {
      std::fprintf(stderr, "vkc_spirv_embed: cannot read SPIR-V from %s\n", input);
      return 1;
    }
    std::string error;
    if (input == exactInput && !exactVariant(words, error)) {
      std::fprintf(stderr, "vkc_spirv_embed: %s: %s\n", input, error.c_str());
      return 1;
    }
    if (decorateNoContraction(words) < 0) {
      std::fprintf(stderr, "vkc_spirv_embed: %s is not a SPIR-V module this tool understands\n", input);
      return 1;
    }
    arrays.emplace_back(std::string(argv[3]) + (input == exactInput ? "_exact" : ""), std::move(words));
  }
  if (!writeHeader(argv[2], arrays)) {
    std::fprintf(stderr, "vkc_spirv_embed: cannot write %s\n", argv[2]);
    return 1;
  }
  if (argc == 5 && !retargetDepfile(argv[4], argv[2])) {
    std::fprintf(stderr, "vkc_spirv_embed: cannot rewrite the depfile %s\n", argv[4]);
    return 1;
  }
  return 0;
}
