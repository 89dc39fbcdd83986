// Layouts, constants and arithmetic of inter collision (shaders/inter_collision.comp and its CPU twin
// src/cpu/inter_collision.cpp). Every float operation of the stage is written here once, `precise`
// on the GPU and with -ffp-contract=off on the CPU, so that both round alike. The narrow phase is
// self collision's machinery (shared/self_collision.h: grid, keys, column ranges, pair test and
// correction; shared/self_collision_kernel.h: the column search) over one grid spanning the overlap
// boxes, restricted to pairs of different, filter-allowed cloths (shared/inter_collision_kernel.h).
#ifndef VKC_SHARED_INTER_COLLISION_H
#define VKC_SHARED_INTER_COLLISION_H
#include "common.h"
#include "self_collision.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kInterGroupSize, 256u);
// Particles per marking tile (one workgroup, 8 per invocation); cloths are split into tiles like the
// bounds stage's (the cloth table's firstTile / tileCount count these tiles).
VKC_CONSTANT(uint, kInterTileSize, 2048u);
VKC_CONSTANT(uint, kInterItemsPerInvocation, 8u);
// Narrow-phase keys are self collision's 32-bit cell keys (selfCellKey).
VKC_CONSTANT(uint, kInterKeyBits, 32u);
// Relative slack of world boxes: rounding of particle transforms never falls outside.
VKC_CONSTANT(float, kInterBoxSlack, 1.0e-5f);
VKC_CONSTANT(uint, kInterNoAxis, 3u);

// Pass selected by specialization constant 0.
VKC_CONSTANT(uint, kInterPassBroad, 0u);     // 1 workgroup: world boxes, sweep, partners, grid
VKC_CONSTANT(uint, kInterPassMarkCount, 1u); // per tile: marked particles of the tile
VKC_CONSTANT(uint, kInterPassMarkScan, 2u);  // 1 workgroup: tile offsets, marked count, indirect args
VKC_CONSTANT(uint, kInterPassMarkWrite, 3u); // per tile: gathers the marked particles in world space
VKC_CONSTANT(uint, kInterPassKeys, 4u);      // indirect: cell key of each marked particle
VKC_CONSTANT(uint, kInterPassGather, 5u);    // indirect, per sorted slot: the particle's new position (Jacobi)
VKC_CONSTANT(uint, kInterPassApply, 6u);     // indirect: total += new - old, position = new
VKC_CONSTANT(uint, kInterPassWriteBack, 7u); // indirect: local positions += R^T total
// The fused narrow phase, one iteration in one workgroup (InterCollisionPath::kFused): the keys of
// the marked particles, a bitonic sort of (key, marked index) in shared memory (shared/bitonic_sort.h),
// the gather and the apply; the same keys, order, new positions and totals as KEYS, the radix sort,
// GATHER and APPLY, bit for bit (a sort of distinct (key, index) pairs has one answer: the stable
// sort by key's). 1 dispatch per iteration instead of keys + sort + gather + apply.
VKC_CONSTANT(uint, kInterPassFused, 8u);
VKC_CONSTANT(uint, kInterPassCount, 9u);
// The fused pass's sort takes 8 bytes of shared memory per marked particle, for a power of two of
// particles (constant_id 1 of shaders/inter_collision.comp; 1 for the other passes) between self
// collision's kSelfFusedMinCapacity and kSelfFusedMaxCapacity, besides the shared memory that every
// pass of the shader declares: sLo and sHi (uvec4 per invocation), sSub (uint per invocation) and
// three uints. The host picks the largest power of two for which both fit maxComputeSharedMemorySize.
VKC_CONSTANT(uint, kInterSharedBytes, 2u * 16u * kInterGroupSize + 4u * kInterGroupSize + 12u);

VKC_CONSTANT(uint, kInterBindingParticles, 0u);   // vec4[particleCount] local xyz + w (read; writeback: rw)
VKC_CONSTANT(uint, kInterBindingCloths, 1u);      // InterCloth[clothCount] (read)
VKC_CONSTANT(uint, kInterBindingLocalBoxes, 2u);  // Aabb[clothCount] from the bounds stage (read)
VKC_CONSTANT(uint, kInterBindingWorld, 3u);       // InterClothWorld[clothCount] (broad: write)
VKC_CONSTANT(uint, kInterBindingSorted, 4u);      // uint[clothCount] sorted cloths, then float prefix max (broad scratch)
VKC_CONSTANT(uint, kInterBindingPartners, 5u);    // uint[max(1, clothCount*(clothCount-1))]
VKC_CONSTANT(uint, kInterBindingState, 6u);       // InterState (grid, counts, indirect arguments)
VKC_CONSTANT(uint, kInterBindingTiles, 7u);       // uint[2 * tileCount]: counts, then offsets
VKC_CONSTANT(uint, kInterBindingMarked, 8u);      // InterMarked[particleCount]
VKC_CONSTANT(uint, kInterBindingKeys, 9u);        // uint[particleCount] keys, sorted in place
VKC_CONSTANT(uint, kInterBindingValues, 10u);     // uint[particleCount] marked indices, sorted with the keys
VKC_CONSTANT(uint, kInterBindingDelta, 11u);      // vec4[2 * particleCount]: new positions, then total displacement
VKC_CONSTANT(uint, kInterBindingContacts, 12u);   // uint[particleCount] contacts of marked i (first iteration)
VKC_CONSTANT(uint, kInterBindingCount, 13u);

// One cloth: transform, particle range, filter, and its bounds tiles.
struct InterCloth {
  vec4 rotation;     // unit quaternion x, y, z, w
  vec4 translation;  // xyz, w = 0
  uint first;
  uint count;
  uint group;
  uint mask;
  uint firstTile;
  uint tileCount;
  uint pad0;
  uint pad1;
};
VKC_CHECK_LAYOUT(InterCloth, 64);
VKC_CHECK_OFFSET(InterCloth, first, 32);

// Written by the broad phase: rotation matrix columns, world box, partner list slice.
struct InterClothWorld {
  vec4 col0;
  vec4 col1;
  vec4 col2;
  vec4 boxLo;  // empty cloth: +inf
  vec4 boxHi;  // empty cloth: -inf
  uint partnerOffset;
  uint partnerCount;
  uint sortedRank;  // position in the sweep order (0xFFFFFFFF for an empty cloth)
  uint pad0;
};
VKC_CHECK_LAYOUT(InterClothWorld, 96);
VKC_CHECK_OFFSET(InterClothWorld, partnerOffset, 80);

// The stage's state on the GPU. dispatch* are VkDispatchIndirectCommand (x, y, z) for the passes over
// the marked particles; the host reads markedCount and gridLo/gridHi only for reports.
struct InterState {
  uint markedCount;  // first: the radix sort reads its count from offset 0
  uint dispatchX;
  uint dispatchY;
  uint dispatchZ;
  vec4 gridLo;     // union of the overlap boxes (empty: +inf)
  vec4 gridHi;
  SelfGrid grid;   // self collision's grid over [gridLo, gridHi]
  uint axis;       // broad-phase sweep axis, kInterNoAxis without non-empty cloths
  uint pairSlots;  // partner entries written (2 per cloth pair)
  uint pad0;
  uint pad1;
};
VKC_CHECK_LAYOUT(InterState, 112);
VKC_CHECK_OFFSET(InterState, gridLo, 16);
VKC_CHECK_OFFSET(InterState, grid, 48);
VKC_CHECK_OFFSET(InterState, axis, 96);

// A marked particle: world position (w = inverse mass) and where it came from.
struct InterMarked {
  vec4 position;
  uint cloth;
  uint particle;  // scene particle index
  uint group;
  uint mask;
};
VKC_CHECK_LAYOUT(InterMarked, 32);

struct InterPush {
  uint clothCount;
  uint tileCount;
  uint particleCount;
  uint capacity;     // slots of the marked / key arrays (particleCount, at least 1)
  float distance;
  float stiffness;
  uint firstIteration;  // 1: the gather pass also counts contacts
  uint pad0;
};
VKC_CHECK_LAYOUT(InterPush, 32);

// --- arithmetic shared by both backends -------------------------------------------------------

// Columns of the rotation matrix of a quaternion that is unit length within the validated tolerance;
// it is normalized first, so that the matrix is orthonormal to float precision (R^T inverts it).
VKC_FN void interRotationColumns(vec4 quat, VKC_OUT(vec3) c0, VKC_OUT(vec3) c1, VKC_OUT(vec3) c2) {
  VKC_PRECISE float len2 = (quat.x * quat.x + quat.y * quat.y) + (quat.z * quat.z + quat.w * quat.w);
  VKC_PRECISE float inv = 1.0f / sqrt(len2);
  VKC_PRECISE vec4 q = quat * inv;
  VKC_PRECISE float x2 = q.x + q.x;
  VKC_PRECISE float y2 = q.y + q.y;
  VKC_PRECISE float z2 = q.z + q.z;
  VKC_PRECISE float xx = q.x * x2;
  VKC_PRECISE float yy = q.y * y2;
  VKC_PRECISE float zz = q.z * z2;
  VKC_PRECISE float xy = q.x * y2;
  VKC_PRECISE float xz = q.x * z2;
  VKC_PRECISE float yz = q.y * z2;
  VKC_PRECISE float wx = q.w * x2;
  VKC_PRECISE float wy = q.w * y2;
  VKC_PRECISE float wz = q.w * z2;
  VKC_PRECISE float a = 1.0f - (yy + zz);
  VKC_PRECISE float b = 1.0f - (xx + zz);
  VKC_PRECISE float c = 1.0f - (xx + yy);
  VKC_PRECISE float d0 = xy + wz;
  VKC_PRECISE float d1 = xz - wy;
  VKC_PRECISE float d2 = xy - wz;
  VKC_PRECISE float d3 = yz + wx;
  VKC_PRECISE float d4 = xz + wy;
  VKC_PRECISE float d5 = yz - wx;
  c0 = vec3(a, d0, d1);
  c1 = vec3(d2, b, d3);
  c2 = vec3(d4, d5, c);
}

// R * v (columns c0..c2).
VKC_FN vec3 interRotate(vec3 c0, vec3 c1, vec3 c2, vec3 v) {
  VKC_PRECISE vec3 a = c0 * v.x;
  VKC_PRECISE vec3 b = c1 * v.y;
  VKC_PRECISE vec3 c = c2 * v.z;
  VKC_PRECISE vec3 r = (a + b) + c;
  return r;
}

// R^T * v: world displacement back into the local frame.
VKC_FN vec3 interRotateBack(vec3 c0, vec3 c1, vec3 c2, vec3 v) {
  VKC_PRECISE float x = (c0.x * v.x + c0.y * v.y) + c0.z * v.z;
  VKC_PRECISE float y = (c1.x * v.x + c1.y * v.y) + c1.z * v.z;
  VKC_PRECISE float z = (c2.x * v.x + c2.y * v.y) + c2.z * v.z;
  return vec3(x, y, z);
}

VKC_FN vec3 interToWorld(vec3 c0, vec3 c1, vec3 c2, vec3 t, vec3 p) {
  VKC_PRECISE vec3 r = interRotate(c0, c1, c2, p) + t;
  return r;
}

// World box of a non-empty local box widened by `distance`: centre rotated, half extents through |R|,
// widened by a relative slack so that rounding of particle transforms never falls outside.
VKC_FN void interWorldBox(vec3 c0, vec3 c1, vec3 c2, vec3 t, vec3 lo, vec3 hi, float distance, VKC_OUT(vec3) wlo,
                          VKC_OUT(vec3) whi) {
  VKC_PRECISE vec3 centre = (lo + hi) * 0.5f;
  VKC_PRECISE vec3 halfExtent = (hi - lo) * 0.5f + vec3(distance);
  VKC_PRECISE vec3 wc = interRotate(c0, c1, c2, centre) + t;
  VKC_PRECISE vec3 wh = interRotate(abs(c0), abs(c1), abs(c2), halfExtent);
  VKC_PRECISE float mag = max(max(abs(wc.x), abs(wc.y)), abs(wc.z)) + max(max(wh.x, wh.y), wh.z);
  VKC_PRECISE vec3 slack = wh + vec3(mag * kInterBoxSlack);
  wlo = wc - slack;
  whi = wc + slack;
}

VKC_FN bool interBoxesOverlap(vec3 alo, vec3 ahi, vec3 blo, vec3 bhi) {
  return alo.x <= bhi.x && blo.x <= ahi.x && alo.y <= bhi.y && blo.y <= ahi.y && alo.z <= bhi.z && blo.z <= ahi.z;
}

VKC_FN bool interInside(vec3 p, vec3 lo, vec3 hi) {
  return p.x >= lo.x && p.x <= hi.x && p.y >= lo.y && p.y <= hi.y && p.z >= lo.z && p.z <= hi.z;
}

VKC_FN bool interFilterAllows(uint groupA, uint maskA, uint groupB, uint maskB) {
  return (groupA & maskB) != 0u && (groupB & maskA) != 0u;
}

// Longest edge of a non-empty box (lowest axis on ties).
VKC_FN uint interSweepAxis(vec3 lo, vec3 hi) {
  VKC_PRECISE vec3 e = hi - lo;
  uint axis = 0u;
  if (e.y > e.x) axis = 1u;
  if (e.z > (axis == 0u ? e.x : e.y)) axis = 2u;
  return axis;
}

VKC_NAMESPACE_END
#endif  // VKC_SHARED_INTER_COLLISION_H
