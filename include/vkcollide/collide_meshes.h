// Stage 5, mesh collision: particles against triangle meshes (characters, props, environments).
// Specification: shared/seeds/ucsd-cse169-collision-detection.txt and issue 14. Per collision
// iteration, every particle (previous -> current position, inverse mass) of a cloth is kept outside
// every mesh the cloth lists, at the mesh's `thickness`, and its velocity (current - previous) is
// changed by the seed's response (restitution, Coulomb friction with its cap, bouncing with a cap).
//
// Meshes: indexed triangles (3 uint32 per triangle) over vertex positions; any number of meshes of
// any size (up to kMaxMeshTriangles triangles in all), shared by any number of cloths. Three kinds of
// motion per mesh over the iteration:
//   static     vertices in world space, not moving;
//   rigid      vertices in mesh space and a transform (translation + unit quaternion) at the
//              iteration's start and end: world = rotate(q, m) + t, the rotation turning at a constant
//              rate about a fixed axis and the translation linear in between (slerp; see
//              rigidSweepPrepare in shaders/shared/collide_meshes_math.h for what this does better
//              than the seed's delta matrix, and its error bound);
//   deforming  per-vertex positions at the iteration's start and end (e.g. skinned), each moving
//              linearly in between.
// Particles are in world space (a cloth kept in its own space is transformed by the caller; the scene
// layer does so).
//
// One iteration:
//  1. the mesh tree: ONE linear BVH (include/vkcollide/bvh.h) over the triangles of all meshes (mesh
//     after mesh, triangle order kept: the global triangle index is the mesh's first triangle + the
//     triangle's index in the mesh), over world-space vertices. Built on the first iteration (or on
//     request), refit every iteration in which some mesh moves; with continuous collision its boxes
//     are swept (the vertices at the iteration's start and end).
//  2. per particle whose cloth lists at least one mesh and whose inverse mass is not 0, a traversal
//     of that tree (triangles of meshes the cloth does not list are skipped), then:
//     discrete (settings.continuous false): up to maxBounces + 1 rounds: the triangle of deepest
//       penetration (largest thickness - distance to the closest point, then the smallest global
//       triangle) among those closer than their mesh's thickness; the particle is pushed to that
//       thickness (triProximityPush: two-sided, to the side it came from, or one-sided, to the front
//       face) and its velocity gets the response at that contact (normal: the push direction; surface
//       velocity: the motion of the closest point over the iteration);
//     continuous (settings.continuous true): the seed's bounce loop (meshBounceLoop): the earliest hit
//       of the path over all candidate triangles (smallest time, then smallest global triangle: any
//       traversal order gives the same hit), the response at the time of impact, then the remaining
//       path, up to maxBounces bounces; past the cap the particle stops at a legal position (thickness
//       from the surface) and moves on with the surface. Conservative: no path tunnels through a
//       triangle (tests: public vertex-face queries, CGAL oracle).
//  3. outputs: the new current position and a previous position such that current - previous is the
//     new velocity, so the host's Verlet / PBD integrator carries the response on. Particles that meet
//     no triangle keep their bits (both buffers). The w components (inverse masses) are never changed.
// Response (per mesh: restitution epsilon, dynamic friction mu_d, static friction mu_s, thickness,
// one-sidedness; per scene: continuous, maxBounces): the velocity relative to the surface's splits
// into normal and tangential parts; the normal part becomes -epsilon v_n; static friction stops the
// tangential part when |v_t| <= mu_s |dv_n|, else dynamic friction removes mu_d |dv_n| of it, never
// more than all of it (meshResponseVelocity).
//
// Backends agree on positions within kMeshCollisionTolerance (1 + |position|) and on the tree bit for
// bit (the same BVH stage). The Vulkan path records a fixed number of dispatches per iteration,
// whatever the number of meshes and cloths: gather (world vertices of moving meshes) + refit (3) +
// collide, or collide alone when nothing moves.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "vkcollide/bvh.h"
#include "vkcollide/context.h"
#include "vkcollide/cpu_executor.h"
#include "vkcollide/result.h"
#include "vkcollide/types.h"

namespace vkc {
#include "vkcollide/export.h"
VKC_API_BEGIN

// Positions agree across backends within this absolute tolerance times (1 + |position|).
inline constexpr float kMeshCollisionTolerance = 1e-4f;
// The triangles of all meshes together (the tree's primitives).
inline constexpr uint32_t kMaxMeshTriangles = kBvhMaxPrimitives;
// Bounces per particle and iteration: 0 .. kMaxMeshBounces.
inline constexpr uint32_t kMaxMeshBounces = 16;

enum class MeshMotion : uint32_t {
  kStatic = 0,
  kRigid = 1,
  kDeforming = 2,
};

// A rigid transform: world = rotate(rotation, mesh) + translation.
struct RigidTransform {
  Float4 rotation{0, 0, 0, 1};  // unit quaternion (x, y, z, w): |q| within 1e-3 of 1 (normalized on input)
  Float4 translation;           // xyz; w ignored
};

// Per-mesh material and contact rule.
struct MeshSurface {
  float thickness = 0;       // >= 0, finite: the particles' minimum distance to the surface (their radius)
  // One-sided (NvCloth's triangle rule): discrete contact always pushes to the front face ((b - a) x
  // (c - a)); continuous collision only stops paths that hit the front (a particle behind the surface,
  // e.g. inside a closed body, moves out through it freely). Two-sided (default): discrete contact
  // pushes to the side the particle came from; continuous collision stops paths from either side.
  bool oneSided = false;
  float restitution = 0;     // epsilon in [0, 1]
  float friction = 0;        // dynamic Coulomb coefficient mu_d >= 0
  float staticFriction = 0;  // mu_s >= 0
};

// One mesh, host side (CPU backends and run()).
struct CollisionMesh {
  // static: world positions; rigid: mesh-space positions; deforming: positions at the iteration's end.
  // xyz used, w ignored. At least 1; all finite.
  std::span<const Float4> vertices;
  // deforming only: positions at the iteration's start, as many as `vertices`; empty otherwise.
  std::span<const Float4> prevVertices;
  std::span<const uint32_t> indices;  // 3 per triangle, at least one triangle, each < vertices.size()
  MeshMotion motion = MeshMotion::kStatic;
  RigidTransform transform;      // rigid: at the iteration's end
  RigidTransform prevTransform;  // rigid: at the iteration's start
  MeshSurface surface;
};

// The meshes a cloth collides with (indices into the meshes array; each at most once).
struct ClothMeshes {
  std::span<const uint32_t> meshes;
};

struct MeshCollisionSettings {
  bool continuous = false;   // sweep each particle's path against the moving meshes (else discrete)
  uint32_t maxBounces = 4;   // 0 .. kMaxMeshBounces
};

// The combined tree (all meshes' triangles, world space), kept by the caller between iterations on
// the CPU backends, like every stage's outputs: spans of bvhNodeCount(total triangles) nodes and total
// triangles boxes and leaf parents.
enum class MeshTreeUpdate : uint32_t {
  kAuto = 0,   // build when the tree is empty or was not built yet (Vulkan: per frame); else refit when a mesh moves
  kBuild = 1,  // build a new tree (new topology: e.g. after large motion or a mesh change)
  kRefit = 2,  // refit the tree the spans (or the stage) hold
};

// The CPU SIMD twin's copy of the tree with 4 children per node and their boxes side by side (one
// walk reads a node's 4 child boxes at once and tests them in one vector operation; a quarter of the
// binary tree's depth; leaves copy their triangles' end positions, so a kept static mesh must not change).
// Opaque: keep one per MeshTree and pass it with the same spans every call; the twin remakes it when
// the call builds or refits the tree (or when it is empty), so it must not be shared between trees.
struct MeshTreeCache {
  std::vector<uint8_t> bytes;  // private layout (src/cpu/collide_meshes.cpp)
  uint32_t triangles = 0;      // the tree it was made from (0: none)
};

struct MeshTree {
  std::span<BvhNode> nodes;
  std::span<Aabb> primitiveBoxes;
  std::span<uint32_t> leafParents;
  // kAuto on the CPU: build when `built` is false, then set it; refit when a mesh moves.
  MeshTreeUpdate update = MeshTreeUpdate::kAuto;
  bool* built = nullptr;  // kAuto only: whether the spans hold this scene's tree (set true by a build)
  // kCpuSimd: the 4-wide copy kept between calls (optional). Without it, kCpuSimd makes one per call
  // when the call builds the tree anyway (no spans) and otherwise walks the binary tree as kCpuScalar.
  MeshTreeCache* cache = nullptr;
};

struct MeshCollisionInput {
  std::span<Float4> particles;      // current positions xyz + inverse mass w (xyz updated)
  std::span<Float4> prevParticles;  // positions at the iteration's start, w = inverse mass (xyz updated)
  std::span<const ClothRange> cloths;
  std::span<const ClothMeshes> clothMeshes;  // one per cloth
  std::span<const CollisionMesh> meshes;
  MeshCollisionSettings settings;
  // The tree to build or refit. Empty spans: a tree is built for this call and dropped (tests, tools).
  MeshTree tree;
};

// What an iteration did per particle, for tests and tools. Equal on every backend except, possibly,
// for a particle whose contacts are within rounding of each other.
struct MeshCollisionDebug {
  std::vector<uint32_t> contacts;      // per particle: contacts answered (pushes or bounces, + 1 for a stop)
  std::vector<uint32_t> lastTriangle;  // per particle: global triangle of the last contact, or kBvhNone
};

// Total triangles of the meshes (the tree's primitives).
uint32_t meshTriangleCount(std::span<const CollisionMesh> meshes);

// Checks everything collideMeshes* reads. Errors name the field: "meshes[2].indices[17] is 900;
// the mesh has 800 vertices", "meshes[0].transform.rotation", "clothMeshes[3].meshes[1] is 7; there
// are 2 meshes", "meshes[1].surface.restitution".
Status validate(const MeshCollisionInput& input);

// One iteration on the CPU (kCpuScalar or kCpuSimd). On error nothing is changed. kCpuScalar runs the
// shader's kernel compiled as C++ (a binary tree walk per query); kCpuSimd runs the same per-triangle
// tests and per-particle steps but walks the 4-wide copy of the tree (MeshTreeCache) with the child
// boxes tested 4 at a time, and builds / refits with the BVH stage's SIMD twin. Both give the same
// candidates and pick the best by the same total order: results bitwise equal.
Status collideMeshesCpu(const MeshCollisionInput& input, Backend backend, MeshCollisionDebug* debug = nullptr);
// The same on the executor's threads (cpu_executor.h): the tree on the calling thread, then the
// particles in chunks. Results bitwise equal to the overload above.
Status collideMeshesCpu(const MeshCollisionInput& input, Backend backend, const CpuExecutor& executor,
                        MeshCollisionDebug* debug = nullptr);

// --- Vulkan ---

// A mesh's layout, fixed for a stage's life.
struct MeshLayout {
  uint32_t vertexCount = 0;    // >= 1
  uint32_t triangleCount = 0;  // >= 1
  MeshMotion motion = MeshMotion::kStatic;
  uint32_t vertexStride = 16;  // bytes between vertices in the host's buffers: 16 (vec4) or 12 (vec3)
};

struct MeshCollisionStageCreateInfo {
  std::span<const ClothRange> cloths;        // the layout of the particle buffers (copied)
  uint32_t particleCount = 0;                // elements in the particle buffers
  std::span<const MeshLayout> meshes;        // copied
  std::span<const ClothMeshes> clothMeshes;  // one per cloth (copied)
  uint32_t framesInFlight = 1;               // 1..kMaxFramesInFlight sets of scratch and trees (context.h)
};

// One mesh's buffers and motion for one record().
struct MeshRecord {
  // vertexCount * vertexStride bytes (as in CollisionMesh::vertices), TRANSFER_SRC usage (copied, not
  // bound). Rigid and deforming meshes: copied by every record; static meshes: by a build or a kRefit.
  BufferRange vertices;
  BufferRange prevVertices;  // deforming: the positions at the iteration's start; else null
  // 3 * triangleCount uint32. Read when the tree is built. The host cannot check device-side
  // indices: an index >= vertexCount reads the mesh's last vertex (never out of bounds).
  BufferRange indices;
  RigidTransform transform;      // rigid
  RigidTransform prevTransform;  // rigid
  MeshSurface surface;
};

struct MeshCollisionRecordInfo {
  BufferRange particles;      // particleCount Float4, read and written
  BufferRange prevParticles;  // particleCount Float4, read and written
  std::span<const MeshRecord> meshes;  // one per layout mesh; values copied into the command buffer
  MeshCollisionSettings settings;
  MeshTreeUpdate tree = MeshTreeUpdate::kAuto;  // kRefit before a frame's first build is an error
  uint32_t frame = 0;                           // < framesInFlight
  RecordSync sync;
};

// Mesh collision on a Vulkan device. create() does no queue work. Per frame in flight: the combined
// world vertices, indices and triangle -> mesh table, an embedded BvhStage (its tree is this frame's
// mesh tree) and the collide pass's tables. record(): copies of the meshes' vertex ranges (and, for a
// build, index ranges) into the stage's buffers, one gather dispatch (world positions), the BVH
// build or refit, and one collide dispatch: the number of dispatches does not depend on the number of
// meshes or cloths.
class MeshCollisionStage {
 public:
  static Result<std::unique_ptr<MeshCollisionStage>> create(Context& context, const MeshCollisionStageCreateInfo& info);
  static Result<MemoryRequirements> memoryRequirements(const Context& context, const MeshCollisionStageCreateInfo& info);
  ~MeshCollisionStage();

  // Records the upload of the static tables. Optional: the first record() does it.
  Status recordUpload(VkCommandBuffer commandBuffer);
  // Records one iteration. Validates first (buffers, meshes' values, settings, frame): on error nothing
  // is recorded and the error names the field.
  Status record(VkCommandBuffer commandBuffer, const MeshCollisionRecordInfo& info);

  // Convenience path (frame 0): validates `input` (its layout must be the stage's), uploads the
  // particles and meshes, records, submits, waits and writes the results back (untouched on error).
  // input.tree's spans, when not empty, receive the tree.
  Status run(const MeshCollisionInput& input, MeshCollisionDebug* debug = nullptr);
  const std::vector<PassTiming>& timings() const;
  const RecordStats& lastRecordStats() const;

  // This frame's tree (the embedded BVH stage's outputs).
  BufferRange nodesBuffer(uint32_t frame = 0) const;

  struct Impl;  // opaque

 private:
  friend struct detail::Internals;
  explicit MeshCollisionStage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One iteration on any backend (Vulkan needs `context` and creates a stage for the input).
Status collideMeshes(Backend backend, Context* context, const MeshCollisionInput& input,
                     MeshCollisionDebug* debug = nullptr);

VKC_API_END
}  // namespace vkc
