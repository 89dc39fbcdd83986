// Bindings, push constants and sizes of the radix sort (shaders/radix_sort.comp,
// src/vulkan/radix_sort.cpp, src/cpu/radix_sort*.cpp).
//
// One digit pass = three dispatches (reduce-then-scan, no decoupled look-back):
//   HISTOGRAM  one workgroup per tile of kRadixTileSize keys: counts of each digit value in the tile
//              -> tileHist[digit * tileCount + tile] (digit-major, so that one scan along each digit
//              gives every tile's offset within that digit)
//   SCAN       one workgroup per digit value: exclusive scan of tileHist[digit][*] in place, the
//              digit's total -> digitTotals[digit]
//   SCATTER    one workgroup per tile: exclusive scan of digitTotals (the digit's global base), plus
//              the tile's scanned count, plus the key's stable rank within the tile -> destination
// COPY (only after an odd number of digit passes) copies the sorted pairs back into the host's buffers.
#ifndef VKC_SHARED_RADIX_SORT_H
#define VKC_SHARED_RADIX_SORT_H
#include "common.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kRadixGroupSize, 256u);
VKC_CONSTANT(uint, kRadixItemsPerThread, 16u);
// Keys per tile (one workgroup of the histogram and scatter passes).
VKC_CONSTANT(uint, kRadixTileSize, 4096u);  // kRadixGroupSize * kRadixItemsPerThread
VKC_CONSTANT(uint, kRadixDigitBits, 8u);    // bits per digit pass (at most; the last pass may use fewer)
VKC_CONSTANT(uint, kRadixBins, 256u);       // 1 << kRadixDigitBits
// The scatter pass keeps 8-bit digit counts per subgroup: subgroups of at least 4 invocations (the
// stage checks the device's minSubgroupSize).
VKC_CONSTANT(uint, kRadixMaxSubgroups, 64u);  // kRadixGroupSize / 4
// At most this many tiles: the scan runs as one workgroup, invocation d scanning digit d's row alone.
VKC_CONSTANT(uint, kRadixSmallScanTiles, 32u);

// Pass selected by specialization constant 0.
VKC_CONSTANT(uint, kRadixPassHistogram, 0u);
VKC_CONSTANT(uint, kRadixPassScan, 1u);
VKC_CONSTANT(uint, kRadixPassScatter, 2u);
VKC_CONSTANT(uint, kRadixPassCopy, 3u);

VKC_CONSTANT(uint, kRadixBindingKeysIn, 0u);     // uint[count]  (histogram, scatter, copy: read)
VKC_CONSTANT(uint, kRadixBindingValuesIn, 1u);   // uint[count]  (scatter, copy: read)
VKC_CONSTANT(uint, kRadixBindingKeysOut, 2u);    // uint[count]  (scatter, copy: write)
VKC_CONSTANT(uint, kRadixBindingValuesOut, 3u);  // uint[count]  (scatter, copy: write)
VKC_CONSTANT(uint, kRadixBindingTileHist, 4u);   // uint[kRadixBins * tileCount] (histogram: write, scan: rw, scatter: read)
VKC_CONSTANT(uint, kRadixBindingDigitTotals, 5u);// uint[kRadixBins] (scan: write, scatter: read)
VKC_CONSTANT(uint, kRadixBindingCount, 6u);      // uint[1]: the element count when countFromBuffer (read)
VKC_CONSTANT(uint, kRadixBindingTotal, 7u);      // number of bindings

struct RadixSortPush {
  uint count;            // elements; with countFromBuffer the upper bound (the buffer's value is clamped to it)
  uint shift;            // lowest key bit of this pass's digit
  uint bits;             // digit width of this pass, 1..kRadixDigitBits
  uint tileCount;        // tiles covering `count`; the stride of tileHist's digit rows
  uint countFromBuffer;  // 1: the element count is min(countBuffer[0], count)
  uint smallScan;        // 1: tileCount <= kRadixSmallScanTiles, the scan is one workgroup
  uint pad1;
  uint pad2;
};
VKC_CHECK_LAYOUT(RadixSortPush, 32);

VKC_NAMESPACE_END
#endif  // VKC_SHARED_RADIX_SORT_H
