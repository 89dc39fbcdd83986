// Private: the CPU twin of shaders/radix_sort.comp. LSD radix sort with 8-bit digits; both variants
// give the one stable order (so they equal each other and the GPU bit for bit).
#pragma once

#include <cstddef>
#include <cstdint>

namespace vkc::detail {
class ParallelCall;
}

namespace vkc::cpu {

// The reference: per digit pass, histogram, exclusive prefix, stable scatter of keys and values
// (ping-pong through scratch, copied back after an odd number of passes). 1 <= keyBits <= 32.
void radixSortScalar(uint32_t* keys, uint32_t* values, size_t count, uint32_t keyBits);

// The optimized variant: pairs packed into 64-bit words (Highway interleave) while the histograms of
// every digit are counted in the same read; passes whose digit is equal for all keys are skipped (a
// stable pass over one digit value is the identity); the last pass that runs scatters straight back
// into keys / values. Keeps its scratch per thread between calls: 16 bytes per pair of the largest
// sort so far.
void radixSortFast(uint32_t* keys, uint32_t* values, size_t count, uint32_t keyBits);

// The same stable order on the executor's threads (per-chunk histograms, offsets over the chunks,
// per-chunk stable scatter), or radixSortFast (fast) / radixSortScalar inline when `par` has one
// thread or the array is short. Never call it from inside a task of `par`.
void radixSortParallel(detail::ParallelCall& par, uint32_t* keys, uint32_t* values, size_t count, uint32_t keyBits,
                       bool fast);

// Packs keys[i] | uint64(values[i]) << 32 into out[i] (Highway where the build has SIMD).
void packPairs(const uint32_t* keys, const uint32_t* values, uint64_t* out, size_t count);

}  // namespace vkc::cpu
