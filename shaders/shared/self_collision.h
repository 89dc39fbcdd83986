// Self collision: layouts, constants, bindings and the arithmetic, written once for
// shaders/self_collision.comp (GLSL) and src/cpu/self_collision*.cpp (C++ with GLM).
//
// Grid (NvCloth SwSelfCollision, see NVCLOTH-NOTES.md "Self collision"): per cloth, from the box of
// its particles. Sweep axis = the longest edge (ties: x before y before z); hash axes (s+1)%3 and
// (s+2)%3. Hash cells measure max(d, edge/253) (times kSelfCellMargin, below), the sweep axis is cut
// into 65533 cells. Cell coordinate = clamp((p - lower) * scale + 1, 1, G) with G = 254 (hash) and
// 65534 (sweep): cells 0 and 255 / 65535 are never occupied (sentinels), so the neighbour columns
// h-1 and h+1 and the sweep range never wrap into another byte. (p - lower) * scale + 1 is NvCloth's
// p * scale + bias with bias = 1 - lower * scale, computed without the cancellation.
// Key = sweep | hash0 << 16 | hash1 << 24.
#ifndef VKC_SHARED_SELF_COLLISION_H
#define VKC_SHARED_SELF_COLLISION_H
#include "common.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kSelfHashCells, 253u);
VKC_CONSTANT(uint, kSelfSweepCells, 65533u);
VKC_CONSTANT(float, kSelfHashMaxCoord, 254.0f);    // clamp of the hash cell coordinate (cell 255: sentinel)
VKC_CONSTANT(float, kSelfSweepMaxCoord, 65534.0f); // clamp of the sweep cell coordinate (65535: sentinel)
// Hash cells are this much larger than max(d, edge/253), so that float rounding of the cell
// coordinates can never put two particles closer than d two hash cells apart.
VKC_CONSTANT(float, kSelfCellMargin, 1.0009765625f);  // 1 + 2^-10
VKC_CONSTANT(float, kSelfEpsilon, 1.1920929e-7f);     // FLT_EPSILON, NvCloth's epsilon in the mass term
// Pairs closer than this fraction of d have no usable direction (coincident particles): they are
// pushed apart along the sweep axis, the lower sorted index towards -axis (see selfPairCorrection).
VKC_CONSTANT(float, kSelfCoincidentFraction, 1e-6f);

VKC_CONSTANT(uint, kSelfGroupSize, 64u);
// Passes (specialization constant 0).
VKC_CONSTANT(uint, kSelfPassKeys, 0u);       // per item: cell key, value = item index
VKC_CONSTANT(uint, kSelfPassClothKeys, 1u);  // per sorted slot: key = cloth of the item (second, stable sort)
VKC_CONSTANT(uint, kSelfPassGather, 2u);     // per sorted slot: cell key, position and rest position in sorted order
VKC_CONSTANT(uint, kSelfPassCollide, 3u);    // per sorted slot: gather the neighbours' corrections, write the particle
VKC_CONSTANT(uint, kSelfPassPairs, 4u);      // debug: per sorted slot, the sorted indices of its neighbours
// The fused path's first dispatch, one workgroup per cloth: the cloth's box (as the bounds stage's),
// keys, a workgroup-local bitonic sort of (key, item) in shared memory, and the gather; the collide
// pass follows. 2 dispatches instead of bounds 2 + keys + sorts + gather + collide.
VKC_CONSTANT(uint, kSelfPassFusedSort, 5u);
VKC_CONSTANT(uint, kSelfPassCount, 6u);
// The fused sort's shared memory: 8 bytes per item, for a power of two of items (constant_id 1 of
// shaders/self_collision.comp; 1 for every other pass). The host picks the largest power of two that
// fits maxComputeSharedMemorySize, between these two.
VKC_CONSTANT(uint, kSelfFusedMinCapacity, 512u);
VKC_CONSTANT(uint, kSelfFusedMaxCapacity, 16384u);

VKC_CONSTANT(uint, kSelfFlagRest, 1u);       // rest positions given: cull pairs closer than d at rest
VKC_CONSTANT(uint, kSelfFlagCounts, 2u);     // collide pass also writes each slot's neighbour count (debug)

VKC_CONSTANT(uint, kSelfBindingParticles, 0u);   // vec4[particleCount] xyz + inverse mass (collide: rw)
VKC_CONSTANT(uint, kSelfBindingRest, 1u);        // vec4[particleCount] rest positions (read; dummy without)
VKC_CONSTANT(uint, kSelfBindingCloths, 2u);      // SelfCloth[clothCount]
VKC_CONSTANT(uint, kSelfBindingItems, 3u);       // uint[itemCount]: scene particle index of each item
VKC_CONSTANT(uint, kSelfBindingBounds, 4u);      // Aabb[clothCount] from the bounds stage
VKC_CONSTANT(uint, kSelfBindingKeys, 5u);        // uint[itemCount]: sort keys, after gather the sorted cell keys
VKC_CONSTANT(uint, kSelfBindingValues, 6u);      // uint[itemCount]: sort values (item indices)
VKC_CONSTANT(uint, kSelfBindingSortedPos, 7u);   // vec4[itemCount]
VKC_CONSTANT(uint, kSelfBindingSortedRest, 8u);  // vec4[itemCount] (dummy without rest positions)
VKC_CONSTANT(uint, kSelfBindingDebug, 9u);       // uint[]: counts (collide), pair offsets + pairs (pairs pass)
VKC_CONSTANT(uint, kSelfBindingCount, 10u);

// One cloth's items: the particles that take part (all of the cloth's, or its subset), as items
// [firstItem, firstItem + itemCount); after sorting, the same slots hold the cloth's sorted items.
struct SelfCloth {
  uint firstItem;
  uint itemCount;
  uint firstParticle;  // the cloth's particle range (the fused pass computes its box)
  uint particleCount;
};
VKC_CHECK_LAYOUT(SelfCloth, 16);

// One cloth's grid for this iteration. Components are in axis order x, y, z.
struct SelfGrid {
  vec4 lower;   // xyz: the box's lower corner
  vec4 scale;   // xyz: cells per unit length on each axis (the sweep axis' and the hash axes')
  uvec4 axes;   // x: sweep axis, y: hash axis 0, z: hash axis 1, w: sweep reach in cells (>= 2)
};
VKC_CHECK_LAYOUT(SelfGrid, 48);

struct SelfPush {
  uint clothCount;
  uint itemCount;
  uint particleCount;
  uint flags;          // kSelfFlag*
  float distance;      // d > 0
  float stiffness;     // [0, 1]
  uint debugBase;      // pairs pass: where the pair lists start in the debug buffer (after itemCount offsets)
  uint pad0;
};
VKC_CHECK_LAYOUT(SelfPush, 32);

// The grid of a cloth whose particles lie in [lo, hi] (an empty box gives a harmless grid).
VKC_FN SelfGrid makeSelfGrid(vec3 lo, vec3 hi, float d) {
  vec3 edge = hi - lo;
  if (!(edge.x >= 0.0f && edge.y >= 0.0f && edge.z >= 0.0f)) {  // empty box (or not finite)
    lo = vec3(0.0f);
    edge = vec3(0.0f);
  }
  uint s = 0u;
  if (edge.y > edge[s]) s = 1u;
  if (edge.z > edge[s]) s = 2u;
  uint h0 = (s + 1u) % 3u, h1 = (s + 2u) % 3u;
  SelfGrid g;
  g.lower = vec4(lo, 0.0f);
  g.scale = vec4(0.0f);
  // The sweep axis: 65533 cells over the edge, or over d when the edge is shorter (a single particle,
  // coincident particles): the reach then covers the whole cloth.
  float sweepScale = float(kSelfSweepCells) / max(edge[s], d);
  g.scale[s] = sweepScale;
  g.scale[h0] = 1.0f / (max(d, edge[h0] / float(kSelfHashCells)) * kSelfCellMargin);
  g.scale[h1] = 1.0f / (max(d, edge[h1] / float(kSelfHashCells)) * kSelfCellMargin);
  // NvCloth: 2 + floor(scale * d). d * sweepScale <= 65533, so the reach fits 16 bits.
  uint reach = 2u + uint(floor(d * sweepScale));
  g.axes = uvec4(s, h0, h1, min(reach, 65535u));
  return g;
}

// clamp(x, 1, maxCoord) that also maps NaN to 1 (comparisons with NaN are false on every backend).
VKC_FN uint selfCell(float x, float maxCoord) {
  float c = x >= 1.0f ? x : 1.0f;
  c = c <= maxCoord ? c : maxCoord;
  return uint(c);  // c >= 1: truncation is floor
}

VKC_FN uint selfCellKey(SelfGrid g, vec3 p) {
  uint s = g.axes.x, h0 = g.axes.y, h1 = g.axes.z;
  VKC_PRECISE float cs = (p[s] - g.lower[s]) * g.scale[s] + 1.0f;
  VKC_PRECISE float c0 = (p[h0] - g.lower[h0]) * g.scale[h0] + 1.0f;
  VKC_PRECISE float c1 = (p[h1] - g.lower[h1]) * g.scale[h1] + 1.0f;
  return selfCell(cs, kSelfSweepMaxCoord) | (selfCell(c0, kSelfHashMaxCoord) << 16u) |
         (selfCell(c1, kSelfHashMaxCoord) << 24u);
}

// The key range [first, last] (inclusive) of neighbour column `column` (0..8: hash offsets
// (column % 3 - 1, column / 3 - 1)) for a particle with key `key`: sweep cells key's +- reach.
// The gather scans all nine columns (a full neighbourhood), see self_collision.comp.
VKC_FN uvec2 selfColumnRange(uint key, uint column, uint reach) {
  uint s = key & 0xFFFFu;
  uint h0 = ((key >> 16u) & 0xFFu) + column % 3u - 1u;  // key's hash cells are 1..254: no wrap
  uint h1 = (key >> 24u) + column / 3u - 1u;
  uint base = (h1 << 24u) | (h0 << 16u);
  uint lo = s > reach ? s - reach : 0u;
  uint hi = min(s + reach, 0xFFFFu);
  return uvec2(base | lo, base | hi);
}

// Whether particle j (sorted slot m) is a neighbour of particle i (slot k): closer than d now and,
// with rest positions, not closer than d at rest. Strict "< d^2" now, "< d^2" culls at rest.
VKC_FN bool selfIsPair(vec4 pi, vec4 pj, vec4 ri, vec4 rj, float d2, bool useRest) {
  vec3 diff = vec3(pj) - vec3(pi);
  VKC_PRECISE float dist2 = diff.x * diff.x + diff.y * diff.y + diff.z * diff.z;
  if (!(dist2 < d2)) return false;
  if (useRest) {
    vec3 r = vec3(rj) - vec3(ri);
    VKC_PRECISE float rest2 = r.x * r.x + r.y * r.y + r.z * r.z;
    if (rest2 < d2) return false;
  }
  return true;
}

// The correction of particle i (slot k) from its neighbour j (slot m), before i's inverse mass:
// NvCloth's delta = s / (eps + w_i + w_j) * diff * (1 - d / |diff|), diff = p_j - p_i; i moves by
// w_i * delta and, gathering the same pair from its side, j by -w_j * delta. A coincident pair
// (|diff| < 1e-6 d) is pushed apart along the sweep axis: slot k < m moves towards -axis.
VKC_FN vec3 selfPairCorrection(vec4 pi, vec4 pj, uint k, uint m, uint sweepAxis, float d, float stiffness) {
  vec3 diff = vec3(pj) - vec3(pi);
  VKC_PRECISE float dist2 = diff.x * diff.x + diff.y * diff.y + diff.z * diff.z;
  VKC_PRECISE float scale = stiffness / (kSelfEpsilon + pi.w + pj.w);
  VKC_PRECISE float tiny = d * kSelfCoincidentFraction;
  if (dist2 > tiny * tiny) {
    float len = sqrt(dist2);
    VKC_PRECISE float f = scale * (1.0f - d / len);
    return diff * f;
  }
  vec3 axis = vec3(0.0f);
  axis[sweepAxis] = k < m ? 1.0f : -1.0f;  // direction from i towards j
  VKC_PRECISE float f = -scale * d;
  return axis * f;
}

// The new position of a particle from its summed corrections over `count` neighbours (count > 0):
// the average (Jacobi with constraint averaging, see self_collision.comp), times its inverse mass.
VKC_FN vec4 selfApply(vec4 p, vec3 sum, uint count) {
  VKC_PRECISE float f = p.w / float(count);
  VKC_PRECISE vec3 moved = vec3(p) + sum * f;
  return vec4(moved, p.w);
}

VKC_NAMESPACE_END
#endif  // VKC_SHARED_SELF_COLLISION_H
