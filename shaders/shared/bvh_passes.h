// The passes of the BVH stage (shaders/bvh.comp, src/vulkan/bvh.cpp); see pass_decl.h. A build
// records init (one workgroup: the centroid box), boxes, morton, the radix sort's passes (codes and order
// in place), hierarchy, climb, finalize; a refit records boxes, climb, finalize.
#ifndef VKC_SHARED_BVH_PASSES_H
#define VKC_SHARED_BVH_PASSES_H
#include "bvh.h"
#include "pass_decl.h"

namespace vkc::gpu {

// clang-format off
inline constexpr PassDecl kBvhPasses[] = {
  //                                                                         verts prev idx boxes centroid codes order nodes parents keys
  passDecl("vkc.bvh.init",      kBvhPassInit,      kBvhGroupSize, kBvhBindingCount, "-     -    -   -     W        -     -     -     -       -"),
  passDecl("vkc.bvh.boxes",     kBvhPassBoxes,     kBvhGroupSize, kBvhBindingCount, "R     R    R   W     RW       -     -     -     -       W"),
  passDecl("vkc.bvh.morton",    kBvhPassMorton,    kBvhGroupSize, kBvhBindingCount, "-     -    -   R     R        W     W     -     -       -"),
  passDecl("vkc.bvh.hierarchy", kBvhPassHierarchy, kBvhGroupSize, kBvhBindingCount, "-     -    -   -     -        R     R     W     W       W"),
  passDecl("vkc.bvh.climb",     kBvhPassClimb,     kBvhGroupSize, kBvhBindingCount, "-     -    -   R     -        -     R     R     R       RW"),
  passDecl("vkc.bvh.finalize",  kBvhPassFinalize,  kBvhGroupSize, kBvhBindingCount, "-     -    -   -     -        -     -     W     -       R"),
};
// clang-format on
inline constexpr StageDecl kBvhStage{"bvh", kBvhBindingCount, kBvhPasses};
static_assert(validStage(kBvhStage));

}  // namespace vkc::gpu
#endif  // VKC_SHARED_BVH_PASSES_H
