#version 460
// Bounds stage: per-cloth AABB of the particle positions (and of the previous positions, for CCD).
// All cloths of a scene go through one dispatch per pass. Two passes, selected by a specialization
// constant: TILES reduces each 2048-particle tile of a cloth to a box of order-preserving keys, MERGE
// reduces each cloth's tiles to its float box. Min/max on keys is exact and order-independent, so
// the result is deterministic and bitwise equal to the CPU twin (src/cpu/bounds.cpp).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_GOOGLE_include_directive : require
#include "shared/bounds.h"
#include "shared/float_order.h"

layout(constant_id = 0) const uint kPass = kBoundsPassTiles;
layout(local_size_x = kBoundsGroupSize) in;  // checked against the pass declarations (tests/spirv/pass_decl_test.cpp)

layout(std430, set = 0, binding = kBoundsBindingParticles) readonly buffer Particles { vec4 particles[]; };
layout(std430, set = 0, binding = kBoundsBindingPrevParticles) readonly buffer Prev { vec4 prevParticles[]; };
layout(std430, set = 0, binding = kBoundsBindingCloths) readonly buffer Cloths { ClothRange cloths[]; };
layout(std430, set = 0, binding = kBoundsBindingTileBoxes) buffer Tiles { BoundsTileBox tileBoxes[]; };
layout(std430, set = 0, binding = kBoundsBindingOut) writeonly buffer Out { Aabb boxes[]; };
layout(push_constant) uniform Push { BoundsPush pc; };

// Enough for a subgroup size of 1 (the smallest any device reports is 4; lavapipe runs 8).
shared uvec4 sLo[kBoundsGroupSize];
shared uvec4 sHi[kBoundsGroupSize];

uint linearGroupIndex() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// Reduces (lo, hi) over the workgroup; the result is valid in invocation 0.
void reduceGroup(inout uvec4 lo, inout uvec4 hi) {
  lo = subgroupMin(lo);
  hi = subgroupMax(hi);
  if (subgroupElect()) {
    sLo[gl_SubgroupID] = lo;
    sHi[gl_SubgroupID] = hi;
  }
  barrier();
  if (gl_LocalInvocationIndex == 0u) {
    for (uint s = 1u; s < gl_NumSubgroups; ++s) {
      lo = min(lo, sLo[s]);
      hi = max(hi, sHi[s]);
    }
  }
}

// The cloth that owns tile t: the last cloth whose firstTile <= t (empty cloths come before the
// cloth that shares their firstTile, so the last one is the owner).
uint clothOfTile(uint t) {
  uint lo = 0u, hi = pc.clothCount;  // upper_bound over firstTile
  while (lo < hi) {
    uint mid = (lo + hi) / 2u;
    if (cloths[mid].firstTile <= t) lo = mid + 1u; else hi = mid;
  }
  return lo - 1u;  // lo >= 1: cloths[0].firstTile == 0 <= t (host-validated)
}

void tilesPass() {
  uint tile = linearGroupIndex();
  if (tile >= pc.tileCount) return;  // uniform per workgroup
  ClothRange c = cloths[clothOfTile(tile)];
  uint begin = c.first + (tile - c.firstTile) * kBoundsTileSize;
  uint end = min(min(c.first + c.count, begin + kBoundsTileSize), pc.particleCount);
  uvec4 lo = uvec4(0xFFFFFFFFu), hi = uvec4(0u);
  for (uint i = begin + gl_LocalInvocationIndex; i < end; i += kBoundsGroupSize) {
    uvec4 k = floatKey(particles[i]);
    lo = min(lo, k);
    hi = max(hi, k);
    if (pc.usePrevious != 0u) {
      k = floatKey(prevParticles[i]);
      lo = min(lo, k);
      hi = max(hi, k);
    }
  }
  reduceGroup(lo, hi);
  if (gl_LocalInvocationIndex == 0u) tileBoxes[tile] = BoundsTileBox(lo, hi);
}

void mergePass() {
  uint cloth = linearGroupIndex();
  if (cloth >= pc.clothCount) return;
  ClothRange c = cloths[cloth];
  uint end = min(c.firstTile + c.tileCount, pc.tileCount);
  uvec4 lo = uvec4(0xFFFFFFFFu), hi = uvec4(0u);
  for (uint t = c.firstTile + gl_LocalInvocationIndex; t < end; t += kBoundsGroupSize) {
    lo = min(lo, tileBoxes[t].lo);
    hi = max(hi, tileBoxes[t].hi);
  }
  reduceGroup(lo, hi);
  if (gl_LocalInvocationIndex == 0u) {
    const float inf = uintBitsToFloat(0x7F800000u);
    Aabb box;
    if (c.tileCount == 0u) {
      box.lo = vec4(inf, inf, inf, 0.0);
      box.hi = vec4(-inf, -inf, -inf, 0.0);
    } else {
      box.lo = vec4(floatFromKey(lo).xyz, 0.0);
      box.hi = vec4(floatFromKey(hi).xyz, 0.0);
    }
    boxes[cloth] = box;
  }
}

void main() {
  if (kPass == kBoundsPassTiles) tilesPass(); else mergePass();
}
