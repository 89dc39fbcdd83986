// Radix sort: a stable sort of 32-bit keys carrying a 32-bit payload (value), on a Vulkan device or on
// the CPU. Used by self and inter collision to sort (cell key, particle index) pairs, and usable on its
// own.
//
// What is sorted: the pairs are ordered by the low `keyBits` bits of each key (key & (2^keyBits - 1)),
// ascending; pairs whose masked keys are equal keep their input order (stable). Bits of a key above
// `keyBits` are ignored for ordering but travel with the key unchanged. keyBits = 32 sorts full keys.
// Fewer key bits run fewer digit passes: on Vulkan and kCpuScalar ceil(keyBits / 8) passes of (at most)
// 8-bit digits; kCpuSimd uses 11-bit digits from 8192 pairs on when keyBits > 16 (3 passes for 32
// bits) and skips passes whose digit every key shares.
//
// Every backend gives the same output, bit for bit (a stable sort has exactly one answer).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "vkcollide/context.h"
#include "vkcollide/cpu_executor.h"
#include "vkcollide/result.h"
#include "vkcollide/types.h"

namespace vkc {
#include "vkcollide/export.h"
VKC_API_BEGIN

// Host-side input of the radix sort, shared by every backend. Sorted in place: like every stage's
// input, it holds its outputs (keys and values end sorted).
struct RadixSortInput {
  std::span<uint32_t> keys;    // sorted by their low keyBits bits, ascending, stable
  std::span<uint32_t> values;  // payload: as many as keys, moved with them (must not overlap keys)
  uint32_t keyBits = 32;       // 1..32
};

// Checks keyBits (1..32), that keys and values have the same length and do not overlap. `owner`
// prefixes the field names in the message ("radixSortCpu: keyBits is 0 ...").
Status validateRadixSort(const RadixSortInput& input, const char* owner);

// Sorts (input.keys[i], input.values[i]) in place on the CPU. backend: kCpuScalar (the reference: LSD
// radix sort, 8-bit digits, one histogram-scan-scatter round per digit) or kCpuSimd (the optimized
// variant: all digit histograms in one read, 11-bit digits for 8192 pairs or more when keyBits > 16,
// passes whose digit is the same for every key skipped, pairs moved as 64-bit words, Highway for
// packing). On error nothing is changed. Scratch: kCpuScalar allocates 8 bytes per pair per call;
// kCpuSimd keeps 16 bytes per pair (of the largest sort so far) per calling thread, reused.
Status radixSortCpu(const RadixSortInput& input, Backend backend);
// The same on the executor's threads (cpu_executor.h): per pass, per-chunk histograms, offsets over
// the chunks, per-chunk stable scatters. Output bitwise equal to the overload above (the one stable
// order). Scratch: 16 bytes per pair per calling thread, reused, plus per-chunk histograms.
Status radixSortCpu(const RadixSortInput& input, Backend backend, const CpuExecutor& executor);

struct RadixSortStageCreateInfo {
  // The most pairs one record() may sort. The stage allocates scratch for this many (2 x 4 bytes per
  // pair plus 1 KiB per 4096-pair tile, per frame in flight). Must be >= 1 and at most
  // maxStorageBufferRange / 4.
  uint32_t maxCount = 0;
  uint32_t framesInFlight = 1;  // 1..kMaxFramesInFlight sets of scratch (context.h)
};

struct RadixSortRecordInfo {
  // The host's buffers, sorted in place: `count` uint32 keys and `count` uint32 values
  // (STORAGE_BUFFER usage, offsets aligned to minStorageBufferOffsetAlignment, the two ranges must
  // not overlap). After the recorded work, keys and values hold the sorted pairs. The stage's own
  // scratch buffers hold the intermediate passes; after an odd number of digit passes a copy pass
  // brings the result back, so the output always ends in these buffers.
  BufferRange keys;
  BufferRange values;
  // Pairs to sort (0..maxCount). With countBuffer set, the upper bound: the buffers must hold this
  // many and the device sorts min(countBuffer[0], count) pairs.
  uint32_t count = 0;
  uint32_t keyBits = 32;  // 1..32: sort by the low keyBits bits of each key
  // Optional: a buffer whose first uint32 is the number of pairs, written earlier on the device (sizes
  // known only on the GPU). Null: `count` pairs. The sort reads it when it runs; every dispatch is
  // sized for `count` and workgroups beyond the real count exit early.
  BufferRange countBuffer;
  uint32_t frame = 0;  // which set of scratch: < framesInFlight
  RecordSync sync;
};

// The radix sort on a Vulkan device. Holds, per frame in flight, its scratch (ping-pong key/value
// buffers, per-tile histograms) in device memory; it has no static tables. Needs subgroup ballot operations and subgroups of at least 4
// invocations (create() returns kUnsupported otherwise); any subgroup size from 4 to 128 works.
//
// Passes (see shaders/shared/radix_sort.h): per 8-bit digit, HISTOGRAM (per 4096-key tile), SCAN
// (per digit value over the tiles; reduce-then-scan, no inter-workgroup waiting) and SCATTER (per
// tile, stable ranks from subgroup ballots); digit passes alternate between the host's buffers and
// the stage's scratch, and an odd number of them ends with a COPY back into the host's buffers.
class RadixSortStage {
 public:
  // Allocates the scratch; never touches a queue.
  static Result<std::unique_ptr<RadixSortStage>> create(Context& context, const RadixSortStageCreateInfo& info);
  // The device memory create() would allocate for `info` (validated as create() does).
  static Result<MemoryRequirements> memoryRequirements(const Context& context, const RadixSortStageCreateInfo& info);
  ~RadixSortStage();

  // Every stage has it; the sort has no static tables, so it records nothing (it still checks the
  // command buffer).
  Status recordUpload(VkCommandBuffer commandBuffer);

  // Records the sort into the host's command buffer (recording state, a pool of the context's queue
  // family). Validates everything first: count > maxCount, keyBits outside 1..32, frame >=
  // framesInFlight, a null buffer, a range too small or misaligned are errors naming the field, and
  // nothing is recorded. count 0 records nothing and checks no buffer (with a countBuffer too: count
  // bounds its value). Records of different frames may be in flight at once.
  Status record(VkCommandBuffer commandBuffer, const RadixSortRecordInfo& info);

  // Convenience path: uploads input.keys and input.values (same length, at most maxCount), sorts them
  // on the device (frame 0), waits and reads them back into the spans. GPU times of each pass are kept
  // for timings(). On error the spans are unchanged.
  Status run(const RadixSortInput& input);
  const std::vector<PassTiming>& timings() const;
  // What the last record() or run() recorded: dispatches, dependent dispatches, barriers, declared
  // bytes (RecordStats, context.h). run() counts the stage's own commands, not its upload and
  // readback copies. Zero after a refused record().
  const RecordStats& lastRecordStats() const;

  uint32_t maxCount() const;

  struct Impl;  // opaque

 private:
  friend struct detail::Internals;
  explicit RadixSortStage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One call on any backend (the Vulkan one needs `context` and creates a stage sized for
// input.keys.size()): what tests and tools use to run one body on every backend. On error the spans
// are unchanged.
Status radixSort(Backend backend, Context* context, const RadixSortInput& input);

// Digit passes a sort of `keyBits` bits runs on Vulkan and kCpuScalar: ceil(keyBits / 8) (kCpuSimd: see
// radixSortCpu).
constexpr uint32_t radixSortPassCount(uint32_t keyBits) { return (keyBits + 7) / 8; }

VKC_API_END
}  // namespace vkc
