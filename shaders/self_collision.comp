#version 460
// Self collision (one pass for all cloths of a scene), passes selected by a specialization constant:
//   KEYS        per item: the cell key in its cloth's grid (from the bounds stage's box); value = item
//   (radix sort by key; with several cloths, CLOTH_KEYS then a second, stable sort by cloth, so each
//    cloth's items end up in its own slots sorted by (key, item))
//   CLOTH_KEYS  per sorted slot: key = the item's cloth
//   GATHER      per sorted slot: cell key, position and rest position, copied in sorted order so that
//               the collide pass reads neighbours contiguously
//   COLLIDE     per sorted slot: binary search of each of the nine neighbour columns, distance and
//               rest tests, corrections summed; the particle moves by w times their average
//   PAIRS       debug: each slot's neighbours' slots, at offsets the host computed from the counts
//   FUSED_SORT  the fused path (one workgroup per cloth, then COLLIDE): the cloth's box as the bounds
//               stage computes it, its items' keys, a bitonic sort of (key, item) in shared memory and
//               the gather; the same keys, values and sorted copies as the passes above, bit for bit
//               (a sort of distinct (key, item) pairs has one answer: the stable sort by key's)
// Jacobi: COLLIDE reads only the sorted copies and writes only its own particle, so the result does not
// depend on the order in which invocations run. Each particle scans the full neighbourhood (NvCloth's
// CPU scans half of it and moves both particles of a pair, which a gather cannot do).
// The arithmetic is in shared/self_collision.h and shared/self_collision_kernel.h, which the CPU twin
// (src/cpu/self_collision.cpp) compiles too.
#extension GL_GOOGLE_include_directive : require
#include "shared/float_order.h"
#include "shared/self_collision.h"

layout(constant_id = 0) const uint kPass = kSelfPassKeys;
// FUSED_SORT's shared capacity in items (a power of two); 1 for the other passes.
layout(constant_id = 1) const uint kFusedCapacity = 1u;
layout(local_size_x = kSelfGroupSize) in;  // checked against the pass declarations (tests/spirv/pass_decl_test.cpp)

layout(std430, set = 0, binding = kSelfBindingParticles) buffer Particles { vec4 particles[]; };
layout(std430, set = 0, binding = kSelfBindingRest) readonly buffer Rest { vec4 restPositions[]; };
layout(std430, set = 0, binding = kSelfBindingCloths) readonly buffer Cloths { SelfCloth cloths[]; };
layout(std430, set = 0, binding = kSelfBindingItems) readonly buffer Items { uint itemParticles[]; };
layout(std430, set = 0, binding = kSelfBindingBounds) buffer Bounds { Aabb bounds[]; };  // FUSED_SORT writes
layout(std430, set = 0, binding = kSelfBindingKeys) buffer Keys { uint keys[]; };
layout(std430, set = 0, binding = kSelfBindingValues) buffer Values { uint values[]; };
layout(std430, set = 0, binding = kSelfBindingSortedPos) buffer SortedPos { vec4 sortedPositions[]; };
layout(std430, set = 0, binding = kSelfBindingSortedRest) buffer SortedRest { vec4 sortedRests[]; };
layout(std430, set = 0, binding = kSelfBindingDebug) buffer Debug { uint debugWords[]; };
layout(push_constant) uniform Push { SelfPush pc; };

uint sortedKey(uint slot) { return keys[slot]; }
vec4 sortedPos(uint slot) { return sortedPositions[slot]; }
vec4 sortedRest(uint slot) { return sortedRests[slot]; }
void emitPair(uint index, uint slot) {
  if (index < debugWords.length()) debugWords[index] = slot;
}

#include "shared/self_collision_kernel.h"

uint linearInvocation() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * kSelfGroupSize + gl_LocalInvocationIndex;
}

// The cloth whose items hold `item`: the last cloth whose firstItem <= item (cloths without items come
// before the cloth that shares their firstItem).
uint clothOfItem(uint item) {
  uint lo = 0u, hi = pc.clothCount;
  while (lo < hi) {
    uint mid = (lo + hi) / 2u;
    if (cloths[mid].firstItem <= item) lo = mid + 1u; else hi = mid;
  }
  return lo - 1u;  // lo >= 1: cloths[0].firstItem == 0 <= item
}

SelfGrid gridOf(uint cloth) {
  Aabb b = bounds[cloth];
  return makeSelfGrid(vec3(b.lo), vec3(b.hi), pc.distance);
}

uint keyOfItem(uint item) {
  uint particle = min(itemParticles[item], pc.particleCount - 1u);
  return selfCellKey(gridOf(clothOfItem(item)), vec3(particles[particle]));
}

// ---- FUSED_SORT ----------------------------------------------------------------------------------
shared uint sSortKey[kFusedCapacity];
shared uint sSortItem[kFusedCapacity];

// The cloth's box, exactly as the bounds stage computes it (min/max of order keys: exact), written to
// bounds[cloth]; the reduction borrows the sort's shared arrays (6 words per invocation).
Aabb fusedClothBox(uint cloth, SelfCloth c) {
  uint L = gl_LocalInvocationIndex;
  uvec3 lo = uvec3(0xFFFFFFFFu), hi = uvec3(0u);
  uint end = min(c.firstParticle + c.particleCount, pc.particleCount);
  for (uint i = c.firstParticle + L; i < end; i += kSelfGroupSize) {
    uvec3 key = floatKey(particles[i]).xyz;
    lo = min(lo, key);
    hi = max(hi, key);
  }
  sSortKey[3u * L] = lo.x;
  sSortKey[3u * L + 1u] = lo.y;
  sSortKey[3u * L + 2u] = lo.z;
  sSortItem[3u * L] = hi.x;
  sSortItem[3u * L + 1u] = hi.y;
  sSortItem[3u * L + 2u] = hi.z;
  barrier();
  for (uint s = 0u; s < kSelfGroupSize; ++s) {
    lo = min(lo, uvec3(sSortKey[3u * s], sSortKey[3u * s + 1u], sSortKey[3u * s + 2u]));
    hi = max(hi, uvec3(sSortItem[3u * s], sSortItem[3u * s + 1u], sSortItem[3u * s + 2u]));
  }
  const float inf = uintBitsToFloat(0x7F800000u);
  Aabb box;
  if (c.particleCount == 0u) {
    box.lo = vec4(inf, inf, inf, 0.0);
    box.hi = vec4(-inf, -inf, -inf, 0.0);
  } else {
    box.lo = vec4(floatFromKey(uvec4(lo, 0u)).xyz, 0.0);
    box.hi = vec4(floatFromKey(uvec4(hi, 0u)).xyz, 0.0);
  }
  if (L == 0u) bounds[cloth] = box;
  barrier();  // every invocation has read the reduction before the arrays hold keys
  return box;
}

#include "shared/bitonic_sort.h"

void fusedSortPass() {
  uint cloth = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (cloth >= pc.clothCount) return;  // uniform per workgroup
  uint L = gl_LocalInvocationIndex;
  SelfCloth c = cloths[cloth];
  Aabb box = fusedClothBox(cloth, c);
  uint n = min(c.itemCount, kFusedCapacity);  // the host only fuses cloths that fit
  if (n == 0u) return;                         // uniform
  SelfGrid g = makeSelfGrid(vec3(box.lo), vec3(box.hi), pc.distance);
  uint width = 1u;  // a power of two >= n
  while (width < n) width *= 2u;
  for (uint s = L; s < width; s += kSelfGroupSize) {
    uint item = c.firstItem + s;
    bool real = s < n && item < pc.itemCount;
    uint particle = real ? min(itemParticles[item], pc.particleCount - 1u) : 0u;
    sSortKey[s] = real ? selfCellKey(g, vec3(particles[particle])) : 0xFFFFFFFFu;
    sSortItem[s] = real ? item : 0xFFFFFFFFu;
  }
  barrier();
  // Ascending by (key, item): padding (all ones) sorts last.
  bitonicSortShared(width, L, kSelfGroupSize);
  // The gather, as GATHER writes it.
  bool useRest = (pc.flags & kSelfFlagRest) != 0u;
  for (uint s = L; s < n; s += kSelfGroupSize) {
    uint slot = c.firstItem + s;
    if (slot >= pc.itemCount) break;
    uint item = min(sSortItem[s], pc.itemCount - 1u);
    uint particle = min(itemParticles[item], pc.particleCount - 1u);
    keys[slot] = sSortKey[s];
    values[slot] = item;
    sortedPositions[slot] = particles[particle];
    if (useRest) sortedRests[slot] = restPositions[particle];
  }
}

void main() {
  if (kPass == kSelfPassFusedSort) {
    fusedSortPass();
    return;
  }
  uint k = linearInvocation();
  if (k >= pc.itemCount) return;
  if (kPass == kSelfPassKeys) {
    keys[k] = keyOfItem(k);
    values[k] = k;
  } else if (kPass == kSelfPassClothKeys) {
    keys[k] = clothOfItem(min(values[k], pc.itemCount - 1u));
  } else if (kPass == kSelfPassGather) {
    uint item = min(values[k], pc.itemCount - 1u);
    uint particle = min(itemParticles[item], pc.particleCount - 1u);
    keys[k] = keyOfItem(item);
    sortedPositions[k] = particles[particle];
    if ((pc.flags & kSelfFlagRest) != 0u) sortedRests[k] = restPositions[particle];
  } else {
    uint cloth = clothOfItem(k);  // slots of a cloth are its items' slots
    SelfCloth c = cloths[cloth];
    bool useRest = (pc.flags & kSelfFlagRest) != 0u;
    bool emit = kPass == kSelfPassPairs;
    uint outBase = emit ? pc.debugBase + debugWords[k] : 0u;
    vec3 sum;
    uint count = selfGather(k, c.firstItem, c.firstItem + c.itemCount, gridOf(cloth), pc.distance, pc.stiffness,
                            useRest, emit, outBase, sum);
    if (kPass == kSelfPassCollide) {
      if ((pc.flags & kSelfFlagCounts) != 0u) debugWords[k] = count;
      if (count > 0u) {
        uint particle = min(itemParticles[min(values[k], pc.itemCount - 1u)], pc.particleCount - 1u);
        particles[particle] = selfApply(sortedPositions[k], sum, count);
      }
    }
  }
}
