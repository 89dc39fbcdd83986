// Stage 6, inter collision: keeps the particles of different cloths at least `distance` apart.
// Each cloth keeps its particles in its own local space; a rigid local-to-world transform
// (translation + unit rotation quaternion) places it in the world. One step:
//  1. bounds of each cloth (the bounds stage), widened by `distance`, rotated into world space;
//  2. broad phase: sweep axis = longest edge of the union of those world boxes, cloths sorted by
//     their lower bound on it, each cloth scans its neighbours in that order and stops at the first
//     one that starts beyond its upper bound (NvCloth's early exit); the pair filter decides;
//  3. marking: the particles of a cloth inside the overlap of its box with any partner's box are
//     gathered in world space with their (cloth, particle) indices (in scene order);
//  4. narrow phase, `iterations` times: self collision's machinery over the gathered particles of all
//     cloths at once (include/vkcollide/self_collision.h): one self-collision grid over the union of
//     the overlap boxes, 32-bit cell keys, stable radix sort (on the fused path a bitonic sort in shared
//     memory, with the same order: InterCollisionPath), and per sorted slot a gather (Jacobi)
//     over the nine neighbour columns within the sweep reach, keeping only particles of other cloths
//     that the filter allows and that are closer than `distance`;
//  5. each gathered particle's summed world displacement is rotated back into its cloth's frame and
//     added to its local position. Particles never touched keep their exact bits.
// Response: self collision's. For a pair (i, j), diff = p_j - p_i in world space, w = inverse masses:
//   c_ij = stiffness / (FLT_EPSILON + w_i + w_j) * diff * (1 - distance / |diff|)
// and p_i += w_i * (sum of c_ij) / (number of pairs of i). Two isolated particles of equal mass with
// stiffness 1 end `distance` apart (to float rounding) after one iteration. Coincident particles are
// pushed apart along the grid's sweep axis. Same-cloth pairs are never touched (self collision is
// another stage).
// Differences from NvCloth: the filter is a collision group and mask per cloth (a C++ callback cannot
// run on a GPU), there is no 32-cloth limit, the response is Jacobi (gathered, deterministic) with
// averaging, and the previous positions are not turned into impulses (the caller's integrator owns
// them).
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

// A cloth of an inter-collision scene: its particle range and its local-to-world transform,
// world = rotate(rotation, local) + translation.
struct InterClothDesc {
  ClothRange range;
  Float4 translation;                // xyz in world units; w ignored
  Float4 rotation{0, 0, 0, 1};       // quaternion (x, y, z, w); |q| must be 1 within 1e-3
};

// Pair filter: cloths a and b collide iff (group_a & mask_b) != 0 && (group_b & mask_a) != 0.
// Cloths without an entry have group 1 and mask 0xFFFFFFFF (everything collides with everything).
struct InterCollisionFilter {
  uint32_t cloth = 0;  // index into InterCollisionInput::cloths; at most one entry per cloth
  uint32_t group = 1;
  uint32_t mask = 0xFFFFFFFFu;
};

struct InterCollisionSettings {
  float distance = 0;      // world units: finite and >= 1e-30 (the same rule as self collision's)
  float stiffness = 1;     // in [0, 1]; 0 moves nothing
  uint32_t iterations = 1; // 1 .. kMaxInterIterations
};

inline constexpr uint32_t kMaxInterIterations = 64;

// Host-side input of inter collision, shared by every backend. Like every stage's input it holds its
// output: the particles are updated in place.
struct InterCollisionInput {
  std::span<Float4> particles;                     // local positions xyz + inverse mass w (>= 0); updated in place
  std::span<const InterClothDesc> cloths;          // ranges inside `particles`, and this step's transforms
  std::span<const InterCollisionFilter> filters;   // optional
  InterCollisionSettings settings;
};

// A pair of cloths that passed the broad phase and the filter: a < b.
struct InterClothPair {
  uint32_t a = 0;
  uint32_t b = 0;
  friend bool operator==(const InterClothPair&, const InterClothPair&) = default;
  friend auto operator<=>(const InterClothPair&, const InterClothPair&) = default;
};

// What a step did, for tests and tools. Integer parts are equal on every backend.
struct InterCollisionDebug {
  std::vector<InterClothPair> clothPairs;  // sorted by (a, b)
  std::vector<uint32_t> marked;            // scene particle indices that reached the narrow phase, ascending
  // Per scene particle: the number of cross-cloth, filter-allowed particles closer than `distance`
  // in the first iteration (0 for particles that were not marked).
  std::vector<uint32_t> contacts;
  Aabb gridBounds;                         // the narrow phase's grid box: the union of the overlap boxes
};

// Checks an input: cloth ranges, particles finite with w >= 0, translations finite, rotations finite
// and unit length within 1e-3, filters naming existing cloths once, settings.distance finite and
// >= 1e-30, settings.stiffness in [0, 1], settings.iterations in [1, kMaxInterIterations]. The
// message names the field ("cloths[3].rotation", "filters[1].cloth", "settings.distance").
Status validate(const InterCollisionInput& input);

// One step on the CPU, in place: input.particles receive the new local positions (particles outside
// every cloth keep their bits). backend: kCpuScalar or kCpuSimd. On error the particles and `debug`
// are unchanged. `debug` may be null.
Status collideInterCpu(const InterCollisionInput& input, Backend backend, InterCollisionDebug* debug = nullptr);
// The same on the executor's threads (cpu_executor.h): bounds, marking, and each narrow-phase
// iteration's keys, sort, sweep and moves in chunks (the broad phase stays on the calling thread).
// Results (particles, debug) bitwise equal to the overload above.
Status collideInterCpu(const InterCollisionInput& input, Backend backend, const CpuExecutor& executor,
                       InterCollisionDebug* debug = nullptr);

// Which passes an InterCollisionStage records for each narrow-phase iteration (both give the same
// results, bitwise). The broad phase and the marking are the same on both paths.
enum class InterCollisionPath {
  // kFused when all the cloths' particles together fit fusedInterCollisionCapacity(context) (then the
  // marked particles surely do: the rule is decided on the host, from the layout alone); else
  // kGeneral.
  kAuto,
  // Per iteration keys, the radix sort (4 digit passes of 3 dispatches), gather and apply (keys,
  // gather and apply dispatched indirectly over the marked particles): 15 dependent dispatches, any
  // size.
  kGeneral,
  // Per iteration 1 dispatch of one workgroup: keys, a bitonic sort of (key, marked particle) in
  // shared memory, gather and apply. For game-sized scenes, where the latency of dependent dispatches
  // dominates. create() refuses it (kLimitExceeded, naming InterCollisionStageCreateInfo::cloths)
  // when the cloths' particles do not fit.
  kFused,
};

// The most particles (all cloths of a stage together) the fused narrow phase takes on this
// context's device: the largest power of two in [512, 16384] whose 8 bytes each fit
// maxComputeSharedMemorySize beside the 9228 bytes the shader's other passes declare (0 where 512 do
// not fit) and, on llvmpipe, whose bound on an invocation's loop iterations stays within its loop
// guard (docs/integration.md). 48 KiB and 64 KiB: 4096; 100 KiB: 8192; 137 KiB and more: 16384;
// lavapipe: 1024 (its 32 KiB would hold 2048).
uint32_t fusedInterCollisionCapacity(const Context& context);

struct InterCollisionStageCreateInfo {
  // The layout: each cloth's particle range (copied). Transforms are not taken here: every record()
  // (and run()) brings the step's transforms.
  std::span<const InterClothDesc> cloths;
  std::span<const InterCollisionFilter> filters; // copied: fixed for the stage's life
  uint32_t particleCount = 0;                    // elements in the particle buffer
  uint32_t framesInFlight = 1;                   // 1..kMaxFramesInFlight sets of scratch (context.h)
  InterCollisionPath path = InterCollisionPath::kAuto;
};

struct InterCollisionRecordInfo {
  BufferRange particles;  // particleCount Float4 in local space, STORAGE_BUFFER usage; updated in place
  // This step's cloths: ranges equal to the stage's (checked), transforms validated and taken from
  // here. Recorded into the command buffer (vkCmdUpdateBuffer into this frame's cloth table).
  std::span<const InterClothDesc> cloths;
  InterCollisionSettings settings;  // this step's distance, stiffness and iterations
  uint32_t frame = 0;               // which set of scratch: < framesInFlight
  RecordSync sync;
};

// Inter collision on a Vulkan device: one command buffer per step, no host round trip (the marked
// particle count stays on the GPU and sizes the narrow phase through vkCmdDispatchIndirect, or, on
// the fused path, is read by its one workgroup).
// create() never touches a queue; the cloth table (ranges, filters and the step's transforms) and the
// settings travel in each record(); per frame in flight the stage keeps its own scratch (and its own
// embedded bounds and radix sort scratch), so frames may be recorded before earlier ones complete.
class InterCollisionStage {
 public:
  // Validates the description (ranges, filters; not the particles) and allocates everything for the
  // worst case (every particle marked; any iterations count). Limits: clothCount * (clothCount - 1)
  // partner slots and particleCount marked particles must fit maxStorageBufferRange. Chooses the
  // narrow phase's path (InterCollisionPath); the fused path embeds no radix sort.
  static Result<std::unique_ptr<InterCollisionStage>> create(Context& context, const InterCollisionStageCreateInfo& info);
  // The device memory create() would allocate for `info` (validated as create() does), the embedded
  // bounds and radix sort stages included.
  static Result<MemoryRequirements> memoryRequirements(const Context& context, const InterCollisionStageCreateInfo& info);
  ~InterCollisionStage();

  // Records the upload of the static tables (those of the embedded bounds stage). Optional: the first
  // record() does it when it was not done.
  Status recordUpload(VkCommandBuffer commandBuffer);

  // Records one step into the host's command buffer (recording state, pool of the context's queue
  // family). Validates the buffer, cloths, settings and frame before recording anything. The particles
  // must be finite with w >= 0 (record() cannot read them; run() checks).
  Status record(VkCommandBuffer commandBuffer, const InterCollisionRecordInfo& info);

  // Convenience path: validates `input` (its ranges and filters must equal the stage's; transforms
  // and settings are taken from it), uploads, records, submits, waits and writes the particles back
  // into input.particles. `debug`, when not null, is filled from the GPU's buffers. Uses frame 0. On
  // error input.particles and `debug` are unchanged.
  Status run(const InterCollisionInput& input, InterCollisionDebug* debug = nullptr);
  const std::vector<PassTiming>& timings() const;
  // What the last record() or run() recorded: dispatches, dependent dispatches, barriers, declared
  // bytes (RecordStats, context.h). run() counts the stage's own commands, not its upload and
  // readback copies. Zero after a refused record().
  const RecordStats& lastRecordStats() const;
  // The path create() chose (kGeneral or kFused).
  InterCollisionPath path() const;

  struct Impl;  // opaque

 private:
  friend struct detail::Internals;
  explicit InterCollisionStage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One call on any backend (the Vulkan one needs `context`): updates input.particles in place.
Status collideInter(Backend backend, Context* context, const InterCollisionInput& input,
                    InterCollisionDebug* debug = nullptr);

VKC_API_END
}  // namespace vkc
