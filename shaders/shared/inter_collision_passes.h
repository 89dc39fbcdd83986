// The passes of the inter collision stage (shaders/inter_collision.comp, src/vulkan/inter_collision.cpp);
// see pass_decl.h. The passes from keys on are dispatched indirectly (arguments in the state binding),
// but for the fused pass: one workgroup that reads the marked count from the state binding.
#ifndef VKC_SHARED_INTER_COLLISION_PASSES_H
#define VKC_SHARED_INTER_COLLISION_PASSES_H
#include "inter_collision.h"
#include "pass_decl.h"

namespace vkc::gpu {

// clang-format off
inline constexpr PassDecl kInterPasses[] = {
  //                                                                                                parts cloths lbox world sorted partners state tiles marked keys values delta contacts
  passDecl("vkc.inter.broad",      kInterPassBroad,     kInterGroupSize, kInterBindingCount, "-     R      R    RW    RW     W        RW    -     -      -    -      -     -"),
  passDecl("vkc.inter.mark_count", kInterPassMarkCount, kInterGroupSize, kInterBindingCount, "R     R      -    R     -      R        -     W     -      -    -      -     -"),
  passDecl("vkc.inter.mark_scan",  kInterPassMarkScan,  kInterGroupSize, kInterBindingCount, "-     -      -    -     -      -        W     RW    -      -    -      -     -"),
  passDecl("vkc.inter.mark_write", kInterPassMarkWrite, kInterGroupSize, kInterBindingCount, "R     R      -    R     -      R        -     R     W      -    -      W     W"),
  passDecl("vkc.inter.keys",       kInterPassKeys,      kInterGroupSize, kInterBindingCount, "-     -      -    -     -      -        R     -     R      W    W      -     -"),
  passDecl("vkc.inter.gather",     kInterPassGather,    kInterGroupSize, kInterBindingCount, "-     -      -    -     -      -        R     -     R      R    R      W     W"),
  passDecl("vkc.inter.apply",      kInterPassApply,     kInterGroupSize, kInterBindingCount, "-     -      -    -     -      -        R     -     RW     -    -      RW    -"),
  passDecl("vkc.inter.write_back", kInterPassWriteBack, kInterGroupSize, kInterBindingCount, "RW    -      -    R     -      -        R     -     R      -    -      R     -"),
  passDecl("vkc.inter.fused",      kInterPassFused,     kInterGroupSize, kInterBindingCount, "-     -      -    -     -      -        R     -     RW     -    -      RW    W"),
};
// clang-format on
inline constexpr StageDecl kInterStage{"inter_collision", kInterBindingCount, kInterPasses};
static_assert(validStage(kInterStage));

}  // namespace vkc::gpu
#endif  // VKC_SHARED_INTER_COLLISION_PASSES_H
