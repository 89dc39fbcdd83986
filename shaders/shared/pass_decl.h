// Pass declarations (C++ only). Every compute pass of a stage is declared once, in
// shaders/shared/<stage>_passes.h: its label, the value of specialization constant 0 that selects
// it in the stage's shader module, the workgroup size the shader uses, and for every binding of the
// stage's descriptor set the most the pass may do to it. The stage builds its detail::Pass from the
// declaration (src/vulkan/recorder.h, passFromDecl), so the barrier plan sees the declared accesses;
// tests/spirv/pass_decl_test.cpp specializes the compiled SPIR-V for each pass and fails when the
// shader does more than declared (or less, see below).
//
// An access table is a string of one token per binding, in binding order, separated by spaces:
//   -   none: bound (the layout needs every binding) but not touched by this pass
//   R   read
//   W   written, not read
//   RW  read and written (atomics count as both)
// A token is the most the pass may do. Where a runtime flag decides (the shape collide pass writes
// prevParticles only with friction), the token says the maximum and the stage narrows the access
// when recording (Pass::narrow); checkPass() refuses an access outside the token.
//
// The test (tests/spirv/pass_decl_test.cpp) fails when the specialized shader reads or writes beyond
// the token, when a token that writes meets a readonly binding (or one that reads a writeonly
// binding), and on a workgroup size or binding count other than the declared. It also fails when the
// specialized shader has no code at all for a declared read or write: such a token is not a
// correctness bug (only a needless barrier, or a wrong comment), but it is where a table rots. A
// token ending in '?' (e.g. "W?") accepts that absence, for an access that the shader's code may
// legitimately lack (none of today's passes needs one: the runtime flags are push constants, so the
// code for both cases is in the specialized module).
#ifndef VKC_SHARED_PASS_DECL_H
#define VKC_SHARED_PASS_DECL_H
#ifndef __cplusplus
#error "pass_decl.h is C++ only; shaders use the constants of shaders/shared/<stage>.h"
#endif

#include <cstdint>
#include <span>

namespace vkc::gpu {

// Same values as vkc::detail::Access (bit 0: read, bit 1: write).
enum class PassAccess : uint8_t { kNone = 0, kRead = 1, kWrite = 2, kReadWrite = 3 };

inline constexpr uint32_t kPassMaxBindings = 24;

struct PassDecl {
  const char* name = "";      // label and timing name, "vkc.<stage>.<pass>" (a string literal)
  uint32_t pass = 0;          // specialization constant 0 of the stage's shader
  uint32_t groupSize = 0;     // local_size_x of the shader (y = z = 1)
  uint32_t bindingCount = 0;  // bindings 0..bindingCount-1 of set 0
  PassAccess access[kPassMaxBindings] = {};
  uint32_t optionalMask = 0;  // bit b: binding b's access is a maximum that the shader may not reach ('?')

  constexpr bool optional(uint32_t binding) const { return ((optionalMask >> binding) & 1u) != 0; }
};

// One stage: its shader (shaders/<shader>.comp) and its passes, indexed by specialization value.
struct StageDecl {
  const char* shader = "";
  uint32_t bindingCount = 0;
  std::span<const PassDecl> passes;
};

// Builds a declaration from an access table (see the top of this file). Evaluated at compile time:
// a malformed table or a token count other than `bindingCount` does not compile.
consteval PassDecl passDecl(const char* name, uint32_t pass, uint32_t groupSize, uint32_t bindingCount,
                            const char* table) {
  PassDecl d{};
  d.name = name;
  d.pass = pass;
  d.groupSize = groupSize;
  d.bindingCount = bindingCount;
  if (bindingCount > kPassMaxBindings) throw "passDecl: more bindings than kPassMaxBindings";
  uint32_t b = 0;
  const char* c = table;
  while (*c != '\0') {
    if (*c == ' ') {
      ++c;
      continue;
    }
    if (b == bindingCount) throw "passDecl: more access tokens than bindings";
    PassAccess a = PassAccess::kNone;
    if (c[0] == '-') {
      c += 1;
    } else if (c[0] == 'R' && c[1] == 'W') {
      a = PassAccess::kReadWrite;
      c += 2;
    } else if (c[0] == 'R') {
      a = PassAccess::kRead;
      c += 1;
    } else if (c[0] == 'W') {
      a = PassAccess::kWrite;
      c += 1;
    } else {
      throw "passDecl: access tokens are -, R, W, RW (optionally followed by ?)";
    }
    if (*c == '?') {
      if (a == PassAccess::kNone) throw "passDecl: '-?' means nothing";
      d.optionalMask |= 1u << b;
      ++c;
    }
    if (*c != ' ' && *c != '\0') throw "passDecl: access tokens are separated by spaces";
    d.access[b++] = a;
  }
  if (b != bindingCount) throw "passDecl: fewer access tokens than bindings";
  return d;
}

// True when every pass has the stage's binding count, passes[i].pass == i and the names differ.
consteval bool validStage(const StageDecl& s) {
  for (uint32_t i = 0; i < s.passes.size(); ++i) {
    const PassDecl& p = s.passes[i];
    if (p.pass != i || p.bindingCount != s.bindingCount || p.groupSize == 0) return false;
    for (uint32_t j = 0; j < i; ++j) {
      const char *a = p.name, *b = s.passes[j].name;
      while (*a != '\0' && *a == *b) ++a, ++b;
      if (*a == *b) return false;
    }
  }
  return !s.passes.empty();
}

}  // namespace vkc::gpu

#endif  // VKC_SHARED_PASS_DECL_H
