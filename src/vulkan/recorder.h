// Private: passes and the barriers between them. A pass declares every buffer range it reads and
// writes; planBarriers() derives where a barrier is needed (read-after-write, write-after-write,
// write-after-read on overlapping ranges) and the Recorder records exactly those, as global memory
// barriers. No stage places barriers by hand: lavapipe runs dispatches in order and Debian 12's
// synchronization validation misses compute->compute hazards, so this plan (unit-tested) is what
// keeps real GPUs correct.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "pipelines.h"
#include "shared/pass_decl.h"
#include "vk_common.h"
#include "vkcollide/bounds.h"

namespace vkc::detail {

struct ContextImpl;
class TableUpload;

// kNone: bound (the pipeline's layout needs every binding) but not touched by this pass; planned as
// a read (see usesOf in recorder.cpp). Same values as gpu::PassAccess (shaders/shared/pass_decl.h).
enum class Access : uint8_t { kNone = 0, kRead = 1, kWrite = 2, kReadWrite = 3 };
static_assert(static_cast<uint8_t>(gpu::PassAccess::kReadWrite) == static_cast<uint8_t>(Access::kReadWrite) &&
              static_cast<uint8_t>(gpu::PassAccess::kWrite) == static_cast<uint8_t>(Access::kWrite) &&
              static_cast<uint8_t>(gpu::PassAccess::kRead) == static_cast<uint8_t>(Access::kRead));

// One buffer range a pass touches. `buffer` is an opaque id (the VkBuffer handle).
struct BufferUse {
  uint64_t buffer = 0;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  Access access = Access::kRead;
  uint32_t group = 0;  // Pass::concurrentGroup of the pass that makes it (0: none)
};

struct BarrierDecision {
  bool needed = false;
  std::string reason;  // e.g. "read-after-write on buffer 0x1234 [0, 256)" (for tests and debugging)
};

// For each pass i, whether a barrier must come before it, given every earlier pass in order. Uses of
// one non-zero group never conflict with each other (Pass::concurrentGroup).
std::vector<BarrierDecision> planBarriers(std::span<const std::vector<BufferUse>> passes);

struct Binding {
  BufferRange range;
  Access access = Access::kRead;
};

// Passes are made by passFromDecl (below) from their declaration in shaders/shared/<stage>_passes.h.
struct Pass {
  const gpu::PassDecl* decl = nullptr;  // the declaration (record() refuses a pass without one)
  const char* name = "";            // debug label and timing name (a string literal: decl->name)
  const Pipeline* pipeline = nullptr;
  std::vector<Binding> bindings;    // binding i of the pipeline's set; every binding must be set
  std::vector<uint8_t> push;        // pipeline->pushConstantSize bytes
  uint32_t groupCount = 0;          // workgroups; split over x and y when above the device limit
  std::vector<BufferUse> extraUses; // uses outside the bindings
  // Non-zero: passes of one group (consecutive in the record) need no barrier between them because the
  // stage guarantees that they touch disjoint elements of the ranges they share (e.g. each pair
  // family of the geometry queries writes only its own tiles and contacts). Hazards against passes
  // outside the group are planned as usual. The planner cannot check the guarantee: the stage's
  // tests must (and synchronization validation, which sees whole bindings, may not understand it).
  uint32_t concurrentGroup = 0;
  // Non-null buffer: vkCmdDispatchIndirect with the VkDispatchIndirectCommand at indirect.offset
  // (size 12, buffer created with INDIRECT_BUFFER usage) instead of groupCount; planned as a read, and
  // the recorder's barriers then also cover the indirect-command read.
  BufferRange indirect;

  template <class T>
  void setPush(const T& value) {
    push.resize(sizeof(T));
    std::memcpy(push.data(), &value, sizeof(T));
  }
  // Lowers binding b's access below the declared maximum for this record (a runtime flag makes the
  // shader skip it); checkPass() refuses an access the declaration does not allow.
  void narrow(uint32_t b, Access access) { bindings[b].access = access; }
};

// The pass `decl` run by `pipeline` (the stage's shader specialized with decl.pass): its label, and
// binding i = ranges[i] (ranges.size() == decl.bindingCount) at the declared access.
Pass passFromDecl(const gpu::PassDecl& decl, const Pipeline* pipeline, std::span<const BufferRange> ranges);

// OK when `p` has a declaration, its label, one binding per declared binding, and every access a
// subset of the declared one; else kInvalidArgument naming the pass and binding. Recorder::record
// checks every pass with it.
Status checkPass(const Pass& p);

// Every buffer range pass `p` touches (bindings, extraUses, indirect arguments), as planned.
std::vector<BufferUse> usesOf(const Pass& p);

// Adds one dispatch of pass `p` to `stats`: its declared reads and writes (bindings the pass does not
// touch count in neither), workgroups, and whether it is direct or indirect. `dependent`: a barrier
// came before it since the previous dispatch of the record (or it is the first).
void countDispatch(const Pass& p, bool dependent, RecordStats& stats);

// One global memory barrier (synchronization2).
void globalBarrier(const ContextImpl& ctx, VkCommandBuffer cmd, VkPipelineStageFlags2 srcStage,
                   VkAccessFlags2 srcAccess, VkPipelineStageFlags2 dstStage, VkAccessFlags2 dstAccess);

class Recorder {
 public:
  explicit Recorder(ContextImpl& context) : ctx_(context) {}
  void add(Pass pass) { passes_.push_back(std::move(pass)); }
  // A stage's static-table upload that record() records first, unless it was recorded before.
  void addUpload(TableUpload& upload) { uploads_.push_back(&upload); }
  const std::vector<Pass>& passes() const { return passes_; }
  std::vector<BarrierDecision> plan() const;

  // Records: the uploads not recorded yet, the host-sync barrier, then each pass (barrier if planned, label, descriptors, push
  // constants, dispatch), then the closing barrier. With a query pool, timestamps 2i and 2i+1
  // bracket pass i (the pool must hold 2 * passes().size() queries; it is reset here). With `stats`,
  // what was recorded is added to it (RecordStats, context.h).
  Status record(VkCommandBuffer cmd, const RecordSync& sync, VkQueryPool timestamps = VK_NULL_HANDLE,
                RecordStats* stats = nullptr) const;

  // After the submission that recorded with `timestamps` completed: each pass's GPU time.
  Result<std::vector<PassTiming>> readTimings(VkQueryPool timestamps) const;

 private:
  ContextImpl& ctx_;
  std::vector<Pass> passes_;
  std::vector<TableUpload*> uploads_;
};

}  // namespace vkc::detail
