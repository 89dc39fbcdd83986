// Stages 2-4: shape collision. Per cloth, any number of spheres given at the frame's start and end,
// capsules given as pairs of sphere indices (radii may differ: tapered capsules), planes given at the
// frame's start and end, and convexes given as lists of plane indices (a ground plane is a convex of
// one plane). Per collision iteration, the particles' current positions are pushed out of every shape
// (discrete), or out of every shape their path entered during the iteration (continuous, CCD);
// friction changes the previous positions (velocity only) and collision mass scaling the current
// inverse masses. All the contacts of a particle (spheres, capsules, convexes) go into one average.
//
// Inverse masses: prevParticles[i].w is particle i's inverse mass and is never changed; on output
// particles[i].w is that inverse mass, scaled by 1 / (1 + k |correction|^2) where the particle
// collided and collisionMassScale k > 0 (the next iteration starts again from prevParticles[i].w).
// A particle with inverse mass 0 never moves.
//
// Backends give equal grid masks (bitwise) and positions within kShapeCollisionTolerance.
#pragma once

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

// Positions agree across backends within this absolute tolerance times (1 + |position|) (the
// shaders may fuse multiply-adds; the CPU twins do not).
inline constexpr float kShapeCollisionTolerance = 1e-4f;

// A capsule: the hull of two of the cloth's spheres (indices into ClothColliders::spheres). Both
// indices must differ. When one sphere holds the other the capsule is that sphere (no cone). A
// capsule collides as one shape (one contact): a sphere that belongs to a capsule does not collide
// on its own as well.
struct Capsule {
  uint32_t sphere0 = 0;
  uint32_t sphere1 = 0;
};

// A convex: the intersection of the insides (n.x + d < 0) of some of the cloth's planes, given by
// their indices into ClothColliders::planes (at least one; any number; an index may repeat). A
// particle inside every one of its planes is inside the convex.
//  - Discrete (NvCloth's rule): it is pushed out along the plane with the largest signed distance
//    (the first such plane in `planes` order on ties), by exactly that distance.
//  - Continuous: a path that enters the convex during the iteration (the times at which the point is
//    inside all planes, each plane's signed distance interpolated linearly between the iteration's
//    start and end, form an interval that begins after the start) is pushed back onto the plane it
//    entered through (the one whose crossing begins that interval), at that plane's end position,
//    along its normal: no tunnelling through thin slabs or walls that move toward the particle, and
//    the motion along the plane is kept (a particle sliding on the ground keeps sliding).
// A convex's velocity for friction: the motion over the iteration of the pushing plane's point
// nearest to the particle.
// Culling: planes are unbounded, so they are not in the sphere grid. Per cloth and iteration, a convex
// is skipped when one of its planes keeps the cloth's whole particle box (with CCD, the box of the
// current and previous positions) outside it, by a relative margin (kConvexCullMargin) far above
// rounding, at the iteration's end (with CCD, also at its start): culling never changes a result.
struct Convex {
  std::span<const uint32_t> planes;
};

// One cloth's colliders for one frame, in the cloth's own space.
struct ClothColliders {
  std::span<const Float4> spheres;      // at the frame's end: xyz centre, w radius >= 0
  std::span<const Float4> prevSpheres;  // at the frame's start; empty: the same as `spheres`
  std::span<const Capsule> capsules;
  // Planes at the frame's end: xyz normal (non-zero, finite; normalized on input, with w divided by
  // the same length), w offset d; the inside is n.x + d < 0. Interpolated per iteration like the
  // spheres (mix of the normalized planes, normalized again); a plane's normals at the frame's start
  // and end must not be opposite (dot > -0.99). Planes collide only through the convexes that list them.
  std::span<const Float4> planes;
  std::span<const Float4> prevPlanes;  // at the frame's start; empty: the same as `planes`
  std::span<const Convex> convexes;
};

struct ShapeCollisionSettings {
  bool continuous = false;        // sweep each particle's path (prev -> current) against the moving shapes
  float friction = 0;             // Coulomb-like friction coefficient, >= 0
  float collisionMassScale = 0;   // k >= 0 (see the file comment)
  // The shapes at this iteration's start and end: mix(prevSpheres, spheres, alpha). Iteration i of
  // n usually takes alphaBegin = i / n and alphaEnd = (i + 1) / n. 0 <= alphaBegin <= alphaEnd <= 1.
  float alphaBegin = 0;
  float alphaEnd = 1;
};

struct ShapeCollisionInput {
  std::span<Float4> particles;      // current positions, xyz + inverse mass (updated)
  std::span<Float4> prevParticles;  // positions at the iteration's start, w = inverse mass (updated by friction)
  std::span<const ClothRange> cloths;
  std::span<const ClothColliders> colliders;  // one per cloth
  ShapeCollisionSettings settings;
};

// Integer by-products of a run, for conformance checks: equal on every backend.
struct ShapeCollisionDebug {
  // Each cloth's sphere grid: 2 sets ("first", "last") x 3 axes x 8 cells x maskWords words, with
  // maskWords = ceil((spheres + capsules) / 32); the cloths' grids are concatenated in order. All
  // zero for a cloth whose particles and spheres do not overlap.
  std::vector<uint32_t> masks;
  std::vector<uint32_t> maskWords;  // per cloth
  // The convexes kept for the collide pass (the others cannot reach the cloth's particles): per cloth
  // ceil(convexes / 32) words, bit k of word k / 32 for the cloth's convex k, cloths concatenated.
  // Equal on every backend except, possibly, for a convex within rounding of the cull margin
  // (kept on one backend, culled on another: either way no particle is inside it).
  std::vector<uint32_t> convexBits;
};

// Checks everything collideShapes* reads. Errors name the field, e.g.
// "colliders[2].capsules[5].sphere1 is 9; the cloth has 4 spheres".
Status validate(const ShapeCollisionInput& input);

// One collision iteration on the CPU (kCpuScalar or kCpuSimd). On error nothing is changed.
Status collideShapesCpu(const ShapeCollisionInput& input, Backend backend, ShapeCollisionDebug* debug = nullptr);
// The same on the executor's threads (cpu_executor.h): bounds, then the cloths and chunks of large
// cloths in parallel. Results (positions, masks, convex bits) bitwise equal to the overload above.
Status collideShapesCpu(const ShapeCollisionInput& input, Backend backend, const CpuExecutor& executor,
                        ShapeCollisionDebug* debug = nullptr);

// Which passes a ShapeCollisionStage records per iteration (both give the same results, bitwise).
enum class ShapeCollisionPath {
  // kFused when no cloth has more than 16384 particles (at most 256 per invocation of the cloth's
  // workgroup), else kGeneral. The fused path needs about 5 KiB of shared memory, below the 16 KiB
  // every Vulkan device has.
  kAuto,
  // The bounds stage's 2 passes, then prepare, grid, masks and collide, each over all cloths: 6
  // dependent dispatches, any cloth size at full parallelism.
  kGeneral,
  // One dispatch, one workgroup (64 invocations) per cloth doing the cloth's bounds, prepare, grid,
  // masks and collision separated by workgroup barriers: for many small cloths, where the latency of
  // dependent dispatches dominates.
  kFused,
};

struct ShapeCollisionStageCreateInfo {
  std::span<const ClothRange> cloths;  // the layout of the scene's particle buffers (copied)
  uint32_t particleCount = 0;          // elements in the particle buffers
  // The colliders' layout: per cloth, the number of spheres and planes, the capsules and the
  // convexes (copied). Sphere and plane values are only validated here; each record() passes the
  // frame's spheres and planes.
  std::span<const ClothColliders> colliders;
  uint32_t framesInFlight = 1;  // 1..kMaxFramesInFlight sets of scratch and sphere buffers (context.h)
  ShapeCollisionPath path = ShapeCollisionPath::kAuto;
};

struct ShapeCollisionRecordInfo {
  BufferRange particles;      // host buffer: particleCount Float4, read and written
  BufferRange prevParticles;  // host buffer: particleCount Float4, read, and written with friction
  // This frame's spheres and planes: the same counts, capsules and convexes as at creation. They are
  // copied into the command buffer (vkCmdUpdateBuffer), so the host's arrays may change after
  // record() returns.
  std::span<const ClothColliders> colliders;
  ShapeCollisionSettings settings;
  uint32_t frame = 0;  // which set of scratch and sphere buffers: < framesInFlight
  RecordSync sync;
};

// Shape collision on a Vulkan device: the bounds stage, then four passes (prepare: spheres, cones
// and planes at the iteration's ends; grid: the sphere grid's box and the convexes that can reach the
// cloth's particles; masks; collide), all cloths of the scene in one dispatch each; or, for small
// cloths, all of it in one dispatch (ShapeCollisionPath). Holds the static
// tables (cloth table, capsules, sphere -> capsules, convexes) once and, per frame in flight, the
// frame's spheres and planes and the passes' scratch (prepared shapes, grids, masks, convex bits) and
// an embedded bounds stage with the same framesInFlight. create() does no queue work: the tables are staged in host-visible memory and
// copied by recordUpload() or the first record().
class ShapeCollisionStage {
 public:
  static Result<std::unique_ptr<ShapeCollisionStage>> create(Context& context,
                                                             const ShapeCollisionStageCreateInfo& info);
  // The device memory create() would allocate for `info`, the embedded bounds stage's included
  // (validated as create() does).
  static Result<MemoryRequirements> memoryRequirements(const Context& context,
                                                       const ShapeCollisionStageCreateInfo& info);
  ~ShapeCollisionStage();

  // Records the upload of the static tables (this stage's and its bounds stage's). Optional: the
  // first record() does it when it was not done; call it when the first record() goes into a command
  // buffer that may be submitted after another one that uses the stage.
  Status recordUpload(VkCommandBuffer commandBuffer);

  // Records one collision iteration into the host's command buffer (recording state, outside a
  // render pass, of a pool of the context's queue family). Validates the frame, the colliders, the
  // settings and the buffers first: on error nothing is recorded. Command buffers recorded with
  // different frames may be in flight at once; two with the same frame must not be.
  Status record(VkCommandBuffer commandBuffer, const ShapeCollisionRecordInfo& info);

  // Convenience path: validates `input` (its layout must be the stage's), uploads, records, submits
  // on the context's queue, waits and writes the results back into input.particles and
  // input.prevParticles (untouched on error). Uses frame 0.
  Status run(const ShapeCollisionInput& input, ShapeCollisionDebug* debug = nullptr);
  // GPU times of the last run()'s passes.
  const std::vector<PassTiming>& timings() const;
  // What the last record() or run() recorded: dispatches, dependent dispatches, barriers, declared
  // bytes (RecordStats, context.h). run() counts the stage's own commands, not its upload and
  // readback copies. Zero after a refused record().
  const RecordStats& lastRecordStats() const;
  // The path create() chose (kGeneral or kFused).
  ShapeCollisionPath path() const;

  struct Impl;  // opaque

 private:
  friend struct detail::Internals;
  explicit ShapeCollisionStage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One iteration on any backend (Vulkan needs `context`): for tools and tests that run one body on
// every backend.
Status collideShapes(Backend backend, Context* context, const ShapeCollisionInput& input,
                     ShapeCollisionDebug* debug = nullptr);

VKC_API_END
}  // namespace vkc
