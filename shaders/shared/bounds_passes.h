// The passes of the bounds stage (shaders/bounds.comp, src/vulkan/bounds.cpp); see pass_decl.h.
#ifndef VKC_SHARED_BOUNDS_PASSES_H
#define VKC_SHARED_BOUNDS_PASSES_H
#include "bounds.h"
#include "pass_decl.h"

namespace vkc::gpu {

// clang-format off
inline constexpr PassDecl kBoundsPasses[] = {
  //                                                                       parts prev cloths tiles out
  passDecl("vkc.bounds.tiles", kBoundsPassTiles, kBoundsGroupSize, kBoundsBindingCount, "R     R    R      W     -"),
  passDecl("vkc.bounds.merge", kBoundsPassMerge, kBoundsGroupSize, kBoundsBindingCount, "-     -    R      R     W"),
};
// clang-format on
inline constexpr StageDecl kBoundsStage{"bounds", kBoundsBindingCount, kBoundsPasses};
static_assert(validStage(kBoundsStage));

}  // namespace vkc::gpu
#endif  // VKC_SHARED_BOUNDS_PASSES_H
