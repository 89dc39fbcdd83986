// Private: the radix sort's passes for other stages (self and inter collision append them to their own
// Recorder, so the barriers between their passes and the sort's come from the declared uses).
#pragma once

#include <string>
#include <vector>

#include "shared/radix_sort.h"

#include "recorder.h"
#include "vkcollide/radix_sort.h"

namespace vkc::detail {

// Bytes of workgroup shared memory shaders/radix_sort.comp declares (sBins, sSub, sTotal, sCounts, and
// the scatter's local reorder: sDigitStart, sLocalKey, sLocalValue): above the 16 KiB every Vulkan
// device guarantees.
inline constexpr uint32_t kRadixSortSharedBytes =
    4 * (gpu::kRadixBins + gpu::kRadixGroupSize + 1 + gpu::kRadixMaxSubgroups * (gpu::kRadixBins / 4) +
         gpu::kRadixBins + 2 * gpu::kRadixGroupSize);

// What the radix sort (and so self and inter collision) needs beyond the context's requirements,
// given the device's subgroup operations, its smallest subgroup size (VkPhysicalDeviceVulkan13
// Properties::minSubgroupSize, or subgroupSize) and maxComputeSharedMemorySize: one line per missing
// requirement (empty: the sort runs).
std::vector<std::string> radixSortMissing(VkSubgroupFeatureFlags subgroupOperations, uint32_t minSubgroupSize,
                                          uint32_t maxSharedBytes);

// Appends the passes that sort `count` (key, value) pairs of the ranges `keys` and `values` in place
// by their low `keyBits` bits. Preconditions (the caller validates): 1 <= keyBits <= 32,
// count <= stage.maxCount(), both ranges hold count * 4 bytes, are aligned and do not overlap each
// other or the stage's scratch, frame < the stage's framesInFlight. count 0 appends nothing. The
// scratch of `frame` is reused by every append of that frame; appending two sorts to one recorder is
// fine (the recorder orders them).
void appendRadixSortPasses(RadixSortStage& stage, Recorder& rec, const BufferRange& keys, const BufferRange& values,
                           uint32_t count, uint32_t keyBits, uint32_t frame);

// The same with the count known only on the device: the sort reads min(countBuffer[0], maxCount)
// when it runs (countBuffer: at least 4 bytes, aligned). Dispatches are sized for maxCount
// (<= stage.maxCount()); `keys`/`values` must hold maxCount * 4 bytes. Workgroups beyond the real
// count exit early (the histogram still writes their zero counts).
void appendRadixSortPassesGpuCount(RadixSortStage& stage, Recorder& rec, const BufferRange& keys,
                                   const BufferRange& values, const BufferRange& countBuffer, uint32_t maxCount,
                                   uint32_t keyBits, uint32_t frame);

// The device memory RadixSortStage::create allocates for `maxCount` (for stages that embed the sort
// and report their own memoryRequirements()).
MemoryRequirements radixSortRequirements(uint32_t maxCount);

// For tests: the scatter matches digits with 128-bit ballots (the path of subgroups above 32) whatever
// the device's subgroup size, so that devices with small subgroups (lavapipe: 8) cover it too.
void forceRadixSortWideBallot(RadixSortStage& stage, bool wide);

// The passes record() would record for `info` (after validation) and their barrier plan.
Result<std::vector<BarrierDecision>> radixSortBarrierPlan(RadixSortStage& stage, const RadixSortRecordInfo& info);

}  // namespace vkc::detail
