// Triangle-mesh collision: constants and the structs that the particle-vs-triangle functions of
// collide_meshes_math.h exchange with the mesh stage (BVH traversal on Vulkan and on the CPU twins).
// Compiled as GLSL and as C++ (common.h).
#ifndef VKC_SHARED_COLLIDE_MESHES_H
#define VKC_SHARED_COLLIDE_MESHES_H
#include "common.h"

VKC_NAMESPACE_BEGIN

// Region of a triangle (a, b, c) that holds the closest point to a particle.
VKC_CONSTANT(uint, kTriRegionA, 0u);
VKC_CONSTANT(uint, kTriRegionB, 1u);
VKC_CONSTANT(uint, kTriRegionC, 2u);
VKC_CONSTANT(uint, kTriRegionAB, 3u);
VKC_CONSTANT(uint, kTriRegionBC, 4u);
VKC_CONSTANT(uint, kTriRegionCA, 5u);
VKC_CONSTANT(uint, kTriRegionFace, 6u);

// A triangle counts as degenerate (zero area or sliver: closest point from its edges only) when
// |(b - a) x (c - a)|^2 <= kTriDegenerateSin2 |b - a|^2 |c - a|^2, i.e. the sine of its angle at a is
// below 1e-3. Within that the face and edge answers differ by at most half the sliver's height.
VKC_CONSTANT(float, kTriDegenerateSin2, 1e-6f);

// Continuous collision (conservative advancement, collide_meshes_math.h):
// - the rounding margin is kMeshCcdMarginScale * M, M the largest coordinate magnitude of the
//   query (both ends of the particle's path and of the triangle's vertices); 2^-17 is 128 units in
//   the last place of M, several times the rounding of every bound the advancement relies on.
VKC_CONSTANT(float, kMeshCcdMarginScale, 7.62939453125e-6f);  // 2^-17
// - a hit is reported when the distance is within thickness + max(2 margin, thickness * this): the
//   time of impact is early by at most that distance over the closing speed (never late).
VKC_CONSTANT(float, kMeshCcdRelTolerance, 9.765625e-4f);  // 2^-10
// - advancement steps per query; at the cap the query reports a hit at the earliest time not yet
//   proven free (conservative).
VKC_CONSTANT(uint, kMeshCcdMaxSteps, 48u);
// Flags of a continuous query.
// kMeshCcdApproachOnly: a particle within reach of the triangle that is not approaching it (its
// velocity relative to the surface points away or along it) is no hit; from then on the query only
// keeps it from coming closer than its present distance (minus the tolerance). The bounce loop uses
// it: after a bounce the particle sits at `thickness` and slides. Without the flag the query is the
// plain geometric one (earliest time with distance <= thickness), used by the ground-truth tests.
VKC_CONSTANT(uint, kMeshCcdApproachOnly, 1u);
// A query that ended at kMeshCcdMaxSteps sets this bit in MeshHit::flags (conservative hit).
VKC_CONSTANT(uint, kMeshHitAtStepCap, 1u);

// Rigid meshes: the rotation between the iteration's start and end is split into 2^k equal parts
// (k <= kRigidMaxLevels); the table holds the transform at every 1/kRigidMaxSteps of the iteration.
VKC_CONSTANT(uint, kRigidMaxLevels, 4u);
VKC_CONSTANT(uint, kRigidMaxSteps, 16u);
// The sub-step count is the smallest power of two that brings the chord error below this fraction
// of the thickness (or kRigidMaxSteps); the remaining error always inflates the thickness.
VKC_CONSTANT(float, kRigidErrorFraction, 0.25f);

// The earliest contact of a particle with one triangle, as reported by the continuous queries.
// time: the global time of impact in [0, 1] (fraction of the iteration).
// normal: unit contact normal, from the surface towards the particle.
// bary: barycentrics (weights of a, b, c) of the surface point `point` closest to the particle then.
// point: xyz that surface point (world space) at the time of impact; w the query's hit tolerance
// (a hit is reported within thickness + tol). region: kTriRegion*.
// surfaceVelocity: that point's displacement per iteration (per unit of global time).
struct MeshHit {
  vec4 normalTime;       // xyz normal, w time
  vec4 bary;             // xyz barycentrics, w distance at the time of impact
  vec4 point;            // xyz surface point, w the hit tolerance
  vec4 surfaceVelocity;  // xyz, w unused
  uint region;
  uint flags;
  uint pad0;  // cost counter: the advancement steps (closest-point evaluations) of the last triCcdCore
              // call that wrote this hit, hit or miss (bench_collide_meshes --counters); no result reads it
  uint pad1;
};
VKC_CHECK_LAYOUT(MeshHit, 80);
VKC_CHECK_OFFSET(MeshHit, region, 64);

// A rigid mesh's motion over one iteration, prepared once per mesh (rigidSweepPrepare): the unit
// rotation quaternion (x, y, z, w) and translation (xyz) at times j / kRigidMaxSteps, and an upper
// bound on the rotation angle over the iteration (radians) in angle.x.
struct RigidSweep {
  vec4 rotation[17];     // kRigidMaxSteps + 1
  vec4 translation[17];  // xyz, w unused
  vec4 angle;            // x: angle bound; yzw unused
};
VKC_CHECK_LAYOUT(RigidSweep, 560);

// Response material (per mesh in the stage).
struct MeshMaterial {
  float restitution;     // epsilon in [0, 1]
  float friction;        // dynamic mu_d >= 0
  float staticFriction;  // mu_s >= 0
  float thickness;       // minimum separation
};
VKC_CHECK_LAYOUT(MeshMaterial, 16);

// The state of the bounce loop of one particle (collide_meshes_math.h, meshBounce*): the particle
// is at `position` at global time `time` and moves on with `velocity` (per iteration).
struct MeshBounceState {
  vec4 positionTime;  // xyz position, w time
  vec4 velocity;      // xyz, w unused
  uint bounces;
  uint stopped;       // 1 once the bounce cap stopped the particle
  uint pad0;
  uint pad1;
};
VKC_CHECK_LAYOUT(MeshBounceState, 48);


// --- The mesh stage (include/vkcollide/collide_meshes.h; kernel: collide_meshes_kernel.h) ---
VKC_CONSTANT(uint, kMeshMotionStatic, 0u);
VKC_CONSTANT(uint, kMeshMotionRigid, 1u);
VKC_CONSTANT(uint, kMeshMotionDeforming, 2u);
VKC_CONSTANT(uint, kMeshFlagOneSided, 1u);
// Discrete rounds count a triangle as violated when the particle is closer than
// thickness * (1 - kMeshProximitySlack): a particle just pushed to the thickness (rounded) is not
// pushed again by the same triangle.
VKC_CONSTANT(float, kMeshProximitySlack, 2.44140625e-4f);  // 2^-12
VKC_CONSTANT(uint, kMeshNone, 0xFFFFFFFFu);
VKC_CONSTANT(uint, kMeshStackSize, 64u);  // traversal stack: the tree is at most kBvhMaxDepth deep
VKC_CONSTANT(uint, kMeshFlagContinuous, 1u);  // MeshCollidePush::flags
// Traversal modes of the kernel's tree query.
VKC_CONSTANT(uint, kMeshQueryProximity, 0u);  // deepest violated triangle at a position
VKC_CONSTANT(uint, kMeshQuerySweep, 1u);      // earliest hit of a path

// One mesh in the stage's tables.
struct MeshGpu {
  MeshMaterial material;  // restitution, friction, staticFriction, thickness
  uint motion;            // kMeshMotion*
  uint flags;             // kMeshFlag*
  uint firstVertex;       // in the combined vertex arrays
  uint vertexCount;
  uint firstTriangle;     // global index of the mesh's first triangle
  uint triangleCount;
  uint sweep;             // rigid: index of its RigidSweep; else kMeshNone
  uint pad;
};
VKC_CHECK_LAYOUT(MeshGpu, 48);
VKC_CHECK_OFFSET(MeshGpu, motion, 16);

// One cloth in the stage's tables: its particles and the words of its mesh bit set (bit m of word
// firstWord + m / 32 set when the cloth lists mesh m).
struct MeshClothGpu {
  uint first;
  uint count;
  uint firstWord;
  uint meshCount;  // meshes the cloth lists (0: its particles are not touched)
};
VKC_CHECK_LAYOUT(MeshClothGpu, 16);

struct MeshCollidePush {
  uint clothCount;
  uint meshWords;      // words per cloth bit set: ceil(meshes / 32)
  uint flags;          // kMeshFlagContinuous
  uint maxBounces;
  float maxThickness;  // the largest thickness of all meshes
  uint triangleCount;  // the tree's primitives
  uint pad0;
  uint pad1;
};
VKC_CHECK_LAYOUT(MeshCollidePush, 32);

// One particle's state over an iteration of the mesh stage (collide_meshes_kernel.h,
// meshParticle*); kernel-local, never in a buffer.
struct MeshParticle {
  vec3 prev;          // the iteration's start position
  vec3 cur;           // the iteration's end position as given
  vec3 p;             // discrete: the position so far
  vec3 v;             // discrete: the velocity so far
  MeshBounceState s;  // continuous
  MeshHit stopHit;    // continuous: the hit that stopped it at the bounce cap
  uint contacts;
  uint last;          // global triangle of the last contact, or kMeshNone
  uint step;
  uint done;
};

// --- The Vulkan stage (shaders/collide_meshes.comp, src/vulkan/collide_meshes.cpp) ---
VKC_CONSTANT(uint, kMeshGroupSize, 64u);
// MeshGpu::flags bit set by the Vulkan stage only: the mesh's vertices are vec3 (12-byte stride) in
// the raw buffer (the CPU twins never read it).
VKC_CONSTANT(uint, kMeshFlagVec3, 2u);
// Passes (specialization constant 0).
VKC_CONSTANT(uint, kMeshPassGather, 0u);   // one invocation per combined vertex (and index on a build)
VKC_CONSTANT(uint, kMeshPassCollide, 1u);  // one workgroup per tile (<= kMeshGroupSize particles of one cloth)
// Bindings of set 0.
VKC_CONSTANT(uint, kMeshBindingParticles, 0u);      // vec4[particleCount] current positions, w = inverse mass
VKC_CONSTANT(uint, kMeshBindingPrevParticles, 1u);  // vec4[particleCount] previous positions
VKC_CONSTANT(uint, kMeshBindingTiles, 2u);          // MeshClothGpu[tileCount]: a tile's particles and its cloth's bit set
VKC_CONSTANT(uint, kMeshBindingClothWords, 3u);     // uint[clothCount * meshWords]: the cloths' mesh bit sets
VKC_CONSTANT(uint, kMeshBindingMeshes, 4u);         // MeshGpu[meshCount] (this record's materials)
VKC_CONSTANT(uint, kMeshBindingSweeps, 5u);         // RigidSweep[max(rigid meshes, 1)]
VKC_CONSTANT(uint, kMeshBindingRaw, 6u);            // float[]: the copied host vertices (vec4 slot per vertex), then the previous ones
VKC_CONSTANT(uint, kMeshBindingLocal, 7u);          // vec4[vertexCount]: vertices as given (mesh space for rigid meshes)
VKC_CONSTANT(uint, kMeshBindingWorldStart, 8u);     // vec4[vertexCount]: world space at the iteration's start
VKC_CONSTANT(uint, kMeshBindingWorldEnd, 9u);       // vec4[vertexCount]: world space at the iteration's end
VKC_CONSTANT(uint, kMeshBindingIndices, 10u);       // uint[3 * triangleCount]: copied local indices, made global by a build's gather
VKC_CONSTANT(uint, kMeshBindingTriangleMesh, 11u);  // uint[triangleCount]: the mesh of each global triangle
VKC_CONSTANT(uint, kMeshBindingNodes, 12u);         // BvhNode[]: the mesh tree (the embedded BVH stage's output)
VKC_CONSTANT(uint, kMeshBindingLeafBoxes, 13u);     // Aabb[triangleCount]: its leaf boxes
VKC_CONSTANT(uint, kMeshBindingState, 14u);         // uint[4]: [0] the float bits of the rigid chord bound (atomicMax)
VKC_CONSTANT(uint, kMeshBindingInfo, 15u);          // uvec2[particleCount]: contacts, last triangle (debug)
VKC_CONSTANT(uint, kMeshBindingCount, 16u);
VKC_CONSTANT(uint, kMeshGatherBuild, 1u);  // MeshStagePush::gatherFlags: a build (the indices are made global)

// The stage's push constants: the kernel's MeshCollidePush, then the gather's and the bounds of the
// tables (every index read from a buffer is clamped to them).
struct MeshStagePush {
  MeshCollidePush collide;
  uint vertexCount;    // combined vertices
  uint meshCount;
  uint sweepCount;     // rigid meshes
  uint gatherFlags;    // kMeshGather*
  uint tileCount;
  uint particleCount;
  uint clothWordCount;  // clothCount * meshWords
  uint pad0;
};
VKC_CHECK_LAYOUT(MeshStagePush, 64);

VKC_NAMESPACE_END

#endif  // VKC_SHARED_COLLIDE_MESHES_H
