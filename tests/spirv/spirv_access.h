// A small SPIR-V reader for tests/spirv/pass_decl_test.cpp: which descriptor bindings a module's
// code reads and writes (loads, stores, atomics through access chains rooted at the binding's
// variable), how the bindings are decorated (readonly = NonWritable, writeonly = NonReadable, on the
// variable or on every member of its block), and the workgroup size. Only the instructions a
// compute shader from glslang uses are understood; a pointer into a binding that reaches anything
// else (a function call that was not inlined, a phi or select of pointers) is reported in `errors`
// rather than guessed about. Also, for every test of tests/spirv/: the list of shaders and a runner of
// SPIRV-Tools programs (spirv-opt, spirv-val) on a module.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace vkc::spirv {

struct BindingFacts {
  std::string name;  // the block type's name (e.g. "Particles")
  bool read = false;
  bool written = false;
  bool nonWritable = false;
  bool nonReadable = false;
};

struct ModuleFacts {
  std::map<uint32_t, BindingFacts> bindings;  // set 0, by binding
  std::vector<uint32_t> otherSets;            // descriptor sets other than 0 that appear
  std::array<uint32_t, 3> localSize{0, 0, 0};
  std::vector<std::string> errors;
};

namespace op {
inline constexpr uint32_t kName = 5, kEntryPoint = 15, kExecutionMode = 16, kTypeStruct = 30, kTypePointer = 32,
                          kConstantTrue = 41, kConstantFalse = 42, kConstant = 43, kConstantComposite = 44,
                          kSpecConstantTrue = 48, kSpecConstantFalse = 49, kSpecConstant = 50,
                          kSpecConstantComposite = 51, kFunction = 54, kFunctionCall = 57, kVariable = 59,
                          kLoad = 61, kStore = 62, kCopyMemory = 63, kCopyMemorySized = 64, kAccessChain = 65,
                          kInBoundsAccessChain = 66, kPtrAccessChain = 67, kArrayLength = 68,
                          kInBoundsPtrAccessChain = 70, kDecorate = 71, kMemberDecorate = 72, kCopyObject = 83,
                          kSelect = 169, kAtomicLoad = 227, kAtomicStore = 228, kAtomicFirstRmw = 229,
                          kAtomicLastRmw = 242, kPhi = 245, kAtomicFlagTestAndSet = 318, kAtomicFlagClear = 319,
                          kExecutionModeId = 331, kPtrEqual = 401, kPtrNotEqual = 402, kPtrDiff = 403,
                          kAtomicFMinEXT = 5614, kAtomicFMaxEXT = 5615, kAtomicFAddEXT = 6035;
}  // namespace op
namespace dec {
inline constexpr uint32_t kSpecId = 1, kBuiltIn = 11, kNonWritable = 24, kNonReadable = 25, kBinding = 33,
                          kDescriptorSet = 34;
}  // namespace dec
inline constexpr uint32_t kBuiltInWorkgroupSize = 25, kModeLocalSize = 17, kModeLocalSizeId = 38;
inline constexpr size_t kHeaderWords = 5;

// Calls f(opcode, pointer to the instruction's words, word count) for every instruction; false when
// the stream is malformed.
template <class F>
bool forEachInstruction(const std::vector<uint32_t>& words, F&& f) {
  if (words.size() < kHeaderWords || words[0] != 0x07230203u) return false;
  for (size_t i = kHeaderWords; i < words.size();) {
    const uint32_t count = words[i] >> 16;
    if (count == 0 || i + count > words.size()) return false;
    f(words[i] & 0xFFFFu, &words[i], count);
    i += count;
  }
  return true;
}

// Whether the module has a specialization constant with SpecId `specId`.
inline bool hasSpecId(const std::vector<uint32_t>& words, uint32_t specId) {
  bool found = false;
  (void)forEachInstruction(words, [&](uint32_t opcode, const uint32_t* w, uint32_t n) {
    found = found || (opcode == op::kDecorate && n == 4 && w[2] == dec::kSpecId && w[3] == specId);
  });
  return found;
}

// `words` with specialization constant `specId` turned into a plain constant of value `value` (its
// SpecId decoration removed); the other specialization constants stay. Empty, with `log` set, when
// the module has no scalar specialization constant `specId`.
inline std::vector<uint32_t> specialize(const std::vector<uint32_t>& words, uint32_t specId, uint32_t value,
                                        std::string& log) {
  uint32_t target = 0;
  if (!forEachInstruction(words, [&](uint32_t opcode, const uint32_t* w, uint32_t n) {
        if (opcode == op::kDecorate && n == 4 && w[2] == dec::kSpecId && w[3] == specId) target = w[1];
      })) {
    log = "malformed SPIR-V";
    return {};
  }
  if (target == 0) {
    log = "no specialization constant " + std::to_string(specId);
    return {};
  }
  std::vector<uint32_t> out(words.begin(), words.begin() + kHeaderWords);
  bool replaced = false;
  (void)forEachInstruction(words, [&](uint32_t opcode, const uint32_t* w, uint32_t n) {
    if (opcode == op::kDecorate && w[1] == target && w[2] == dec::kSpecId) return;
    if (opcode == op::kSpecConstant && n == 4 && w[2] == target) {
      out.insert(out.end(), {(4u << 16) | op::kConstant, w[1], w[2], value});
      replaced = true;
      return;
    }
    if ((opcode == op::kSpecConstantTrue || opcode == op::kSpecConstantFalse) && w[2] == target) {
      out.insert(out.end(), {(3u << 16) | (value != 0 ? op::kConstantTrue : op::kConstantFalse), w[1], w[2]});
      replaced = true;
      return;
    }
    out.insert(out.end(), w, w + n);
  });
  if (!replaced) {
    log = "specialization constant " + std::to_string(specId) + " is not a 32-bit scalar or bool";
    return {};
  }
  return out;
}

inline ModuleFacts analyze(const std::vector<uint32_t>& words) {
  ModuleFacts m;
  std::map<uint32_t, std::string> names;
  std::map<uint32_t, uint32_t> bindingOf, setOf, constants, pointee, memberCount;
  std::map<uint32_t, std::vector<uint32_t>> composites;
  std::map<uint32_t, std::map<uint32_t, bool>> memberNonWritable, memberNonReadable;  // struct -> member -> flag
  std::map<uint32_t, bool> varNonWritable, varNonReadable;
  std::map<uint32_t, uint32_t> varType;
  uint32_t workgroupSizeId = 0;
  std::array<uint32_t, 3> localSizeIds{0, 0, 0};
  std::map<uint32_t, uint32_t> root;  // pointer id -> binding
  bool inFunctions = false;

  auto use = [&](uint32_t pointer, bool read, bool write) {
    const auto it = root.find(pointer);
    if (it == root.end()) return;
    BindingFacts& b = m.bindings[it->second];
    b.read = b.read || read;
    b.written = b.written || write;
  };
  auto derive = [&](uint32_t result, uint32_t base) {
    if (const auto it = root.find(base); it != root.end()) root[result] = it->second;
  };

  const bool ok = forEachInstruction(words, [&](uint32_t opcode, const uint32_t* w, uint32_t n) {
    if (opcode == op::kFunction) {
      if (!inFunctions) {
        // Every global is known: root the binding variables.
        for (const auto& [var, binding] : bindingOf) {
          const uint32_t set = setOf.count(var) != 0 ? setOf[var] : 0;
          if (set != 0) {
            m.otherSets.push_back(set);
            continue;
          }
          root[var] = binding;
          BindingFacts& b = m.bindings[binding];
          const uint32_t block = pointee[varType[var]];
          b.name = names.count(block) != 0 ? names[block] : "binding " + std::to_string(binding);
          bool allNonWritable = memberCount[block] > 0, allNonReadable = memberCount[block] > 0;
          for (uint32_t k = 0; k < memberCount[block]; ++k) {
            allNonWritable = allNonWritable && memberNonWritable[block][k];
            allNonReadable = allNonReadable && memberNonReadable[block][k];
          }
          b.nonWritable = varNonWritable[var] || allNonWritable;
          b.nonReadable = varNonReadable[var] || allNonReadable;
        }
      }
      inFunctions = true;
      return;
    }
    if (!inFunctions) {
      switch (opcode) {
        case op::kName:
          names[w[1]] = reinterpret_cast<const char*>(&w[2]);
          break;
        case op::kExecutionMode:
          if (n >= 6 && w[2] == kModeLocalSize) m.localSize = {w[3], w[4], w[5]};
          break;
        case op::kExecutionModeId:
          if (n >= 6 && w[2] == kModeLocalSizeId) localSizeIds = {w[3], w[4], w[5]};
          break;
        case op::kDecorate:
          if (n < 3) break;
          if (w[2] == dec::kBinding && n >= 4) bindingOf[w[1]] = w[3];
          if (w[2] == dec::kDescriptorSet && n >= 4) setOf[w[1]] = w[3];
          if (w[2] == dec::kNonWritable) varNonWritable[w[1]] = true;
          if (w[2] == dec::kNonReadable) varNonReadable[w[1]] = true;
          if (w[2] == dec::kBuiltIn && n >= 4 && w[3] == kBuiltInWorkgroupSize) workgroupSizeId = w[1];
          break;
        case op::kMemberDecorate:
          if (n >= 4 && w[3] == dec::kNonWritable) memberNonWritable[w[1]][w[2]] = true;
          if (n >= 4 && w[3] == dec::kNonReadable) memberNonReadable[w[1]][w[2]] = true;
          break;
        case op::kTypeStruct:
          memberCount[w[1]] = n - 2;
          break;
        case op::kTypePointer:
          pointee[w[1]] = w[3];
          break;
        case op::kConstant:
        case op::kSpecConstant:
          if (n == 4) constants[w[2]] = w[3];
          break;
        case op::kConstantComposite:
        case op::kSpecConstantComposite:
          composites[w[2]].assign(w + 3, w + n);
          break;
        case op::kVariable:
          varType[w[2]] = w[1];
          break;
        default:
          break;
      }
      return;
    }
    switch (opcode) {
      case op::kAccessChain:
      case op::kInBoundsAccessChain:
      case op::kPtrAccessChain:
      case op::kInBoundsPtrAccessChain:
      case op::kCopyObject:
        derive(w[2], w[3]);
        break;
      case op::kLoad:
      case op::kAtomicLoad:
        use(w[3], true, false);
        break;
      case op::kStore:
      case op::kAtomicStore:
      case op::kAtomicFlagClear:
        use(w[1], false, true);
        break;
      case op::kCopyMemory:
      case op::kCopyMemorySized:
        use(w[1], false, true);
        use(w[2], true, false);
        break;
      case op::kAtomicFlagTestAndSet:
      case op::kAtomicFMinEXT:
      case op::kAtomicFMaxEXT:
      case op::kAtomicFAddEXT:
        use(w[3], true, true);
        break;
      case op::kArrayLength:  // the descriptor's size, not the buffer's contents
        break;
      case op::kFunctionCall:
      case op::kPhi:
      case op::kSelect:
      case op::kPtrEqual:
      case op::kPtrNotEqual:
      case op::kPtrDiff:
        for (uint32_t k = 3; k < n; ++k) {
          if (const auto it = root.find(w[k]); it != root.end()) {
            m.errors.push_back("a pointer into binding " + std::to_string(it->second) + " reaches opcode " +
                               std::to_string(opcode) + ", which this analysis does not follow");
          }
        }
        break;
      default:
        if (opcode >= op::kAtomicFirstRmw && opcode <= op::kAtomicLastRmw) use(w[3], true, true);
        break;
    }
  });
  if (!ok) m.errors.push_back("malformed SPIR-V");
  auto value = [&](uint32_t id) { return constants.count(id) != 0 ? constants[id] : 0u; };
  if (localSizeIds[0] != 0) m.localSize = {value(localSizeIds[0]), value(localSizeIds[1]), value(localSizeIds[2])};
  if (workgroupSizeId != 0 && composites[workgroupSizeId].size() == 3) {
    const auto& c = composites[workgroupSizeId];
    m.localSize = {value(c[0]), value(c[1]), value(c[2])};
  }
  return m;
}

// The compute shaders of shaders/ by name (the stem of each .comp file), each embedded by the build.
inline std::vector<std::string> shaderNames() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(VKC_SOURCE_DIR) / "shaders")) {
    if (e.path().extension() == ".comp") names.push_back(e.path().stem().string());
  }
  return names;
}

// Runs a SPIRV-Tools program on `words`: `'tool' args IN` (with `-o OUT` when `output` is given) in a
// temporary directory. True when it exits with 0, `output` then holding the module it wrote; else
// `log` holds the command and what it printed.
inline bool runTool(const std::string& tool, const std::string& args, const std::vector<uint32_t>& words,
                    const std::string& tag, std::string& log, std::vector<uint32_t>* output = nullptr) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("vkc_spirv_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path in = dir / (tag + ".spv"), out = dir / (tag + ".out.spv"), err = dir / (tag + ".log");
  {
    std::ofstream f(in, std::ios::binary);
    f.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(words.size() * 4));
  }
  const std::string cmd = "'" + tool + "' " + args + " '" + in.string() + "'" +
                          (output != nullptr ? " -o '" + out.string() + "'" : std::string()) + " > '" + err.string() +
                          "' 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc == 0 && output != nullptr) {
    std::ifstream f(out, std::ios::binary | std::ios::ate);
    output->resize(static_cast<size_t>(f.tellg()) / 4);
    f.seekg(0);
    f.read(reinterpret_cast<char*>(output->data()), static_cast<std::streamsize>(output->size() * 4));
  } else if (rc != 0) {
    std::ifstream f(err);
    std::ostringstream text;
    text << f.rdbuf();
    log = cmd + " failed (" + std::to_string(rc) + "): " + text.str();
  }
  fs::remove_all(dir);
  return rc == 0;
}

}  // namespace vkc::spirv
