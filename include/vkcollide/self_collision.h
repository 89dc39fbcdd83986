// Stage 5: self collision. Keeps the particles of each cloth at least `distance` apart from the other
// particles of the same cloth. Per cloth, a grid over the cloth's bounds (sweep axis = the longest edge
// in 65533 cells, the two others hashed into 253 cells of at least `distance`), 32-bit cell keys,
// a stable sort of (key, particle), and for every particle a scan of its nine neighbour columns over
// the sweep range. Pairs closer than `distance` whose rest positions (when given) are not closer than
// `distance` push each other apart: NvCloth's delta s / (eps + w_i + w_j) * diff * (1 - d / |diff|).
//
// Jacobi, not Gauss-Seidel: every particle gathers its own correction from all of its neighbours'
// positions at the pass's start (deterministic, no atomics) and moves by its inverse mass times the
// average of those corrections. NvCloth's CPU solver instead visits each pair once (half stencil) and
// moves both particles at once, in sorted order (Gauss-Seidel). An isolated pair ends at exactly
// `distance` either way (stiffness 1, equal masses); in clusters, Jacobi with averaging moves less per
// pass (it never overshoots where several neighbours push the same way) and needs more iterations to
// separate a dense cluster. A particle with inverse mass 0 never moves.
//
// All cloths of a scene go through each pass together; each cloth has its own grid from its own bounds,
// and particles of different cloths never collide here (that is inter collision).
//
// Backends give equal sorted keys and pair sets (exactly) and positions within
// kSelfCollisionTolerance.
#pragma once

#include <array>
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

// Positions agree across backends within this absolute tolerance times (1 + |position|): the CPU
// backends are bitwise equal to each other; a GPU's sqrt and division may round differently.
inline constexpr float kSelfCollisionTolerance = 1e-5f;

struct SelfCollisionSettings {
  // Minimum distance between particles of a cloth (scene units): finite and >= 1e-30 (a normal float,
  // so that the grid's scale 65533 / max(edge, distance) stays finite).
  float distance = 0;
  // Fraction of the violation corrected per pass, in [0, 1]. (NvCloth derives its per-iteration value
  // from a per-second one as 1 - (1 - s)^(stiffnessFrequency * dt); callers convert the same way.)
  float stiffness = 1;
};

struct SelfCollisionInput {
  std::span<Float4> particles;            // xyz + inverse mass w >= 0 (xyz updated)
  // Empty, or one per particle (xyz used): pairs closer than `distance` at rest never collide.
  std::span<const Float4> restPositions;
  std::span<const ClothRange> cloths;
  // Empty: every particle of every cloth self-collides. Otherwise one span per cloth: the cloth-local
  // indices (< cloth count, no duplicates) of the particles that self-collide; an empty span means all
  // of that cloth's particles. Particles outside the subset are neither moved nor seen.
  std::span<const std::span<const uint32_t>> subsets;
  SelfCollisionSettings settings;
};

// Integer by-products of a run, for conformance and geometry checks. Equal on every backend.
struct SelfCollisionDebug {
  // The items (self-colliding particles) cloth by cloth, each cloth's sorted by (key, particle order
  // in the cloth's item list): their cell keys and scene particle indices.
  std::vector<uint32_t> sortedKeys;
  std::vector<uint32_t> sortedParticles;
  std::vector<uint32_t> clothFirstItem;  // per cloth, where its items start in the two arrays above
  // Per scene particle: how many neighbours it gathered from (0 outside every cloth or subset).
  std::vector<uint32_t> neighbourCounts;
  // Every pair the engine treated, as scene particle indices (i < j), sorted, once each.
  std::vector<std::array<uint32_t, 2>> pairs;
  // Number of (particle, neighbour) entries seen; twice pairs.size() when every pair was seen from both
  // sides (as the gather must).
  uint64_t directedPairs = 0;
};

// Checks everything collideSelf* reads. Errors name the field, e.g. "settings.distance is -1: ...",
// "subsets[1][7] is 4096; cloth 1 has 4096 particles".
Status validate(const SelfCollisionInput& input);

// One self-collision pass on the CPU (kCpuScalar: the shader's own gather with binary searches;
// kCpuSimd: the same pairs in the same order with running column pointers and SIMD distance tests).
// On error nothing is changed. Keeps its scratch (keys, sort buffers, sorted copies of the positions,
// counts: about 80 bytes per self-colliding particle of the largest call so far, 110 with rest
// positions) per calling thread, reused by later calls (a solver calls it every iteration).
Status collideSelfCpu(const SelfCollisionInput& input, Backend backend, SelfCollisionDebug* debug = nullptr);
// The same on the executor's threads (cpu_executor.h): keys, slot copies and write-back in chunks of
// slots, many cloths sorted and swept at once, and a large cloth's sort and sweep split into chunks of
// slots (each chunk finds its slots' pairs over the whole cloth, then gathers them in the
// single-threaded order). Results (positions, debug) bitwise equal to the overload above. Scratch as
// above, per calling thread, plus what the executor's threads keep for their chunks.
Status collideSelfCpu(const SelfCollisionInput& input, Backend backend, const CpuExecutor& executor,
                      SelfCollisionDebug* debug = nullptr);

// Which passes a SelfCollisionStage records per iteration (both give the same results, bitwise).
enum class SelfCollisionPath {
  // kFused when every cloth's self-colliding particles fit fusedSelfCollisionCapacity(context) (and,
  // on llvmpipe, its loop guard: docs/integration.md), else kGeneral.
  kAuto,
  // The bounds stage's 2 passes, keys, the radix sort (4 digit passes of 3 dispatches; with several
  // cloths a second sort by cloth), gather, collide: 17 dependent dispatches for one cloth, any size.
  kGeneral,
  // 2 dispatches: one workgroup per cloth computes the cloth's box and keys, sorts (key, particle)
  // in shared memory (bitonic) and gathers; then the collide pass. For game-sized cloths, where the
  // latency of dependent dispatches dominates. create() refuses it (kLimitExceeded, naming the
  // cloth) when a cloth does not fit.
  kFused,
};

// The most self-colliding particles per cloth the fused path takes on this context's device: the
// largest power of two whose 8 bytes each fit maxComputeSharedMemorySize (at most 16384; 0 where
// fewer than 512 fit). lavapipe: 4096; 48 KiB devices: 4096; 64 KiB: 8192.
uint32_t fusedSelfCollisionCapacity(const Context& context);

struct SelfCollisionStageCreateInfo {
  std::span<const ClothRange> cloths;  // the layout of the scene's particle buffer (copied)
  uint32_t particleCount = 0;          // elements in the particle buffer
  std::span<const std::span<const uint32_t>> subsets;  // as in SelfCollisionInput (copied)
  bool restPositions = false;          // record() binds rest positions
  uint32_t framesInFlight = 1;         // 1..kMaxFramesInFlight sets of scratch (context.h)
  SelfCollisionPath path = SelfCollisionPath::kAuto;
};

struct SelfCollisionRecordInfo {
  BufferRange particles;      // host buffer: particleCount Float4, read and written
  BufferRange restPositions;  // with SelfCollisionStageCreateInfo::restPositions: particleCount Float4, read
  SelfCollisionSettings settings;  // checked like SelfCollisionInput::settings
  uint32_t frame = 0;         // which set of scratch: < framesInFlight
  RecordSync sync;
};

// Self collision on a Vulkan device: the bounds passes, keys, the radix sort (and a second stable sort
// by cloth when the scene has several), gather, collide; or, for cloths that fit the device's shared
// memory, a fused sort dispatch and collide (SelfCollisionPath). Holds the cloth and item tables
// (static) and, per frame in flight, its scratch (keys, sorted copies) and that of its embedded bounds
// stage and (general path) radix sort, in device memory.
class SelfCollisionStage {
 public:
  // Never touches a queue: the static tables are staged in host-visible memory and copied by
  // recordUpload() or the first record().
  static Result<std::unique_ptr<SelfCollisionStage>> create(Context& context, const SelfCollisionStageCreateInfo& info);
  // The device memory create() would allocate for `info` (validated as create() does), the embedded
  // bounds stage's and radix sort's included.
  static Result<MemoryRequirements> memoryRequirements(const Context& context, const SelfCollisionStageCreateInfo& info);
  ~SelfCollisionStage();

  // Records the upload of the static tables (its own and the embedded bounds stage's). Optional: the
  // first record() does it when it was not done; call it when the first record() goes into a command
  // buffer that may be submitted after another one that uses the stage.
  Status recordUpload(VkCommandBuffer commandBuffer);

  // Records one pass into the host's command buffer (recording state, outside a render pass, of a pool
  // of the context's queue family). Validates the settings, the frame and the buffers first: on error
  // nothing is recorded. A layout without self-colliding particles records nothing and checks only the
  // command buffer, the settings and the frame (its buffers are never read). Records of different
  // frames may be in flight at once.
  Status record(VkCommandBuffer commandBuffer, const SelfCollisionRecordInfo& info);

  // Convenience path: validates `input` (its layout must be the stage's), uploads, records (frame 0),
  // submits, waits and writes the particles back. With `debug`, a second submission lists the pairs.
  // On error the particles and `debug` are unchanged.
  Status run(const SelfCollisionInput& input, SelfCollisionDebug* debug = nullptr);
  // GPU times of the last run()'s passes.
  const std::vector<PassTiming>& timings() const;
  // What the last record() or run() recorded: dispatches, dependent dispatches, barriers, declared
  // bytes (RecordStats, context.h). run() counts the stage's own commands, not its upload and
  // readback copies. Zero after a refused record().
  const RecordStats& lastRecordStats() const;
  // The path create() chose (kGeneral or kFused).
  SelfCollisionPath path() const;

  struct Impl;  // opaque

 private:
  friend struct detail::Internals;
  explicit SelfCollisionStage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One pass on any backend (Vulkan needs `context`): for tools and tests that run one body on every
// backend.
Status collideSelf(Backend backend, Context* context, const SelfCollisionInput& input,
                   SelfCollisionDebug* debug = nullptr);

VKC_API_END
}  // namespace vkc
