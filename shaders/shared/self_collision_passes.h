// The passes of the self collision stage (shaders/self_collision.comp, src/vulkan/self_collision.cpp);
// see pass_decl.h. Without rest positions the stage narrows rest and sortedRest to none; without
// counts the collide pass's debug binding is narrowed to none.
#ifndef VKC_SHARED_SELF_COLLISION_PASSES_H
#define VKC_SHARED_SELF_COLLISION_PASSES_H
#include "pass_decl.h"
#include "self_collision.h"

namespace vkc::gpu {

// clang-format off
inline constexpr PassDecl kSelfPasses[] = {
  //                                                                                      parts rest cloths items bnds keys values spos srest debug
  passDecl("vkc.self.keys",      kSelfPassKeys,      kSelfGroupSize, kSelfBindingCount, "R     -    R      R     R    W    W      -    -     -"),
  passDecl("vkc.self.clothKeys", kSelfPassClothKeys, kSelfGroupSize, kSelfBindingCount, "-     -    R      -     -    W    R      -    -     -"),
  passDecl("vkc.self.gather",    kSelfPassGather,    kSelfGroupSize, kSelfBindingCount, "R     R    R      R     R    W    R      W    W     -"),
  passDecl("vkc.self.collide",   kSelfPassCollide,   kSelfGroupSize, kSelfBindingCount, "W     -    R      R     R    R    R      R    R     W"),
  passDecl("vkc.self.pairs",     kSelfPassPairs,     kSelfGroupSize, kSelfBindingCount, "-     -    R      -     R    R    -      R    R     RW"),
  passDecl("vkc.self.fusedSort", kSelfPassFusedSort, kSelfGroupSize, kSelfBindingCount, "R     R    R      R     W    W    W      W    W     -"),
};
// clang-format on
inline constexpr StageDecl kSelfStage{"self_collision", kSelfBindingCount, kSelfPasses};
static_assert(validStage(kSelfStage));

}  // namespace vkc::gpu
#endif  // VKC_SHARED_SELF_COLLISION_PASSES_H
