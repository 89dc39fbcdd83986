// The one pass of shaders/copy.comp, the benchmarks' memory roofline (bench/bench_device_copy.h);
// see pass_decl.h. The shader has no specialization constant (its one pass is value 0) and writes
// its constants literally: the pass declaration test checks them against these.
#ifndef VKC_SHARED_COPY_PASSES_H
#define VKC_SHARED_COPY_PASSES_H
#include "pass_decl.h"

namespace vkc::gpu {

inline constexpr uint32_t kCopyGroupSize = 256;
inline constexpr uint32_t kCopyBindingCount = 2;  // 0: vec4 source, 1: vec4 destination

// clang-format off
inline constexpr PassDecl kCopyPasses[] = {
  //                                                          src dst
  passDecl("bench.copy", 0, kCopyGroupSize, kCopyBindingCount, "R   W"),
};
// clang-format on
inline constexpr StageDecl kCopyStage{"copy", kCopyBindingCount, kCopyPasses};
static_assert(validStage(kCopyStage));

}  // namespace vkc::gpu
#endif  // VKC_SHARED_COPY_PASSES_H
