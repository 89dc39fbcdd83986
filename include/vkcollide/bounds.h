// Stage 1, bounds: the axis-aligned box of each cloth's particle positions, and with
// `includePrevious` of its previous positions as well (continuous collision needs the swept box).
// All cloths of a scene are reduced in one dispatch per pass. The result is exact (min/max only) and
// bitwise equal on every backend; -0 orders below +0. An empty cloth gives the empty box (types.h).
#pragma once

#include <vulkan/vulkan.h>

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

// Host-side input of the bounds stage, shared by every backend. Like every stage's input, it holds
// its outputs too: here `boxes`.
struct BoundsInput {
  std::span<const Float4> particles;      // the scene's particles, xyz + inverse mass
  std::span<const Float4> prevParticles;  // empty, or as many as `particles`
  std::span<const ClothRange> cloths;     // each within `particles`
  bool includePrevious = false;           // requires prevParticles
  std::span<Aabb> boxes;                  // output: one box per cloth (cloths.size() elements)
};

// Checks a BoundsInput: cloth ranges inside the particle array, prevParticles' count, the size of
// `boxes`, every position finite. The error names the cloth and particle ("cloths[2].particles[17]...").
Status validate(const BoundsInput& input);

// Computes one Aabb per cloth on the CPU into input.boxes. backend: kCpuScalar or kCpuSimd. On
// error input.boxes is unchanged.
Status computeBoundsCpu(const BoundsInput& input, Backend backend);
// The same on the executor's threads (cpu_executor.h): cloths, and chunks of large cloths, folded in
// parallel. Boxes bitwise equal to the overload above.
Status computeBoundsCpu(const BoundsInput& input, Backend backend, const CpuExecutor& executor);

struct BoundsStageCreateInfo {
  std::span<const ClothRange> cloths;  // the layout of the scene's particle buffer (copied)
  uint32_t particleCount = 0;          // elements in the particle buffer(s)
  bool includePrevious = false;
  uint32_t framesInFlight = 1;         // 1..kMaxFramesInFlight sets of scratch and output (context.h)
};

struct BoundsRecordInfo {
  BufferRange particles;      // host buffer: particleCount Float4, STORAGE_BUFFER usage
  BufferRange prevParticles;  // required with includePrevious; else ignored
  // Where the boxes go: clothCount Aabb. Null buffer: the stage's own output of this frame
  // (outputBuffer(frame)).
  BufferRange boxes;
  uint32_t frame = 0;         // which set of scratch: < framesInFlight
  RecordSync sync;
};

// The bounds stage on a Vulkan device. Holds the cloth table and, per frame in flight, scratch and
// output in device memory. Every stage has this shape: create() (no queue work: static tables are
// staged in host-visible memory), recordUpload() / record() into the host's command buffer, and the
// convenience path run().
class BoundsStage {
 public:
  static Result<std::unique_ptr<BoundsStage>> create(Context& context, const BoundsStageCreateInfo& info);
  // The device memory create() would allocate for `info` (validated as create() does).
  static Result<MemoryRequirements> memoryRequirements(const Context& context, const BoundsStageCreateInfo& info);
  ~BoundsStage();

  // Records the upload of the stage's static tables (a copy from its staging buffer and a barrier).
  // Optional: the first record() does it when it was not done; call it when the first record() goes
  // into a command buffer that may be submitted after another one that uses the stage.
  Status recordUpload(VkCommandBuffer commandBuffer);

  // Records the stage into the host's command buffer (which must be in the recording state and
  // belong to a pool of the context's queue family). Validates the buffers before recording
  // anything: a null buffer, a range too small, a misaligned offset or a range beyond the
  // device's maxStorageBufferRange is an error and nothing is recorded.
  Status record(VkCommandBuffer commandBuffer, const BoundsRecordInfo& info);

  // The stage's own output buffer of `frame` (clothCount Aabb), written by record() when info.boxes is null.
  BufferRange outputBuffer(uint32_t frame = 0) const;

  // Convenience path: validates `input` (its cloths must equal the stage's layout), uploads it,
  // records and submits on the context's queue, waits, and reads the boxes back into input.boxes.
  // GPU timestamps of each pass are kept for timings(). Uses frame 0.
  Status run(const BoundsInput& input);
  const std::vector<PassTiming>& timings() const;
  // What the last record() or run() recorded: dispatches, dependent dispatches, barriers, declared
  // bytes (RecordStats, context.h). run() counts the stage's own commands, not its upload and
  // readback copies. Zero after a refused record().
  const RecordStats& lastRecordStats() const;

  struct Impl;  // opaque

 private:
  friend struct detail::Internals;
  explicit BoundsStage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One call on any backend (the Vulkan one needs `context`): what tests and tools use to run one
// body on every backend. Writes input.boxes.
Status computeBounds(Backend backend, Context* context, const BoundsInput& input);

VKC_API_END
}  // namespace vkc
