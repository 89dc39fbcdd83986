// The passes of the radix sort (shaders/radix_sort.comp, src/vulkan/radix_sort.cpp); see pass_decl.h.
// The scatter pass also runs with specialization constant 1 (kWideBallot) = 1: the declaration
// covers both (the test leaves that constant unspecialized, so both variants' code is checked).
#ifndef VKC_SHARED_RADIX_SORT_PASSES_H
#define VKC_SHARED_RADIX_SORT_PASSES_H
#include "pass_decl.h"
#include "radix_sort.h"

namespace vkc::gpu {

// clang-format off
inline constexpr PassDecl kRadixPasses[] = {
  //                                                                                                   keysIn valuesIn keysOut valuesOut hist totals count
  passDecl("vkc.radix_sort.histogram", kRadixPassHistogram, kRadixGroupSize, kRadixBindingTotal, "R      -        -       -         W    -      R"),
  passDecl("vkc.radix_sort.scan",      kRadixPassScan,      kRadixGroupSize, kRadixBindingTotal, "-      -        -       -         RW   W      -"),
  passDecl("vkc.radix_sort.scatter",   kRadixPassScatter,   kRadixGroupSize, kRadixBindingTotal, "R      R        W       W         R    R      R"),
  passDecl("vkc.radix_sort.copy",      kRadixPassCopy,      kRadixGroupSize, kRadixBindingTotal, "R      R        W       W         -    -      R"),
};
// clang-format on
inline constexpr StageDecl kRadixStage{"radix_sort", kRadixBindingTotal, kRadixPasses};
static_assert(validStage(kRadixStage));

}  // namespace vkc::gpu
#endif  // VKC_SHARED_RADIX_SORT_PASSES_H
