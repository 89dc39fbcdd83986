#version 460
// Inter collision (see include/vkcollide/inter_collision.h): broad phase, marking and the narrow
// phase's passes, selected by specialization constant 0. The radix sort between the key and gather
// passes is the radix sort stage's; the fused pass (kInterPassFused) does one iteration's keys, a
// shared-memory sort, gather and apply in one workgroup instead. Sizes known only here (the marked count) reach the host's later
// passes through InterState's VkDispatchIndirectCommand. All arithmetic is in
// shared/inter_collision.h, shared with the CPU twin (src/cpu/inter_collision.cpp).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_GOOGLE_include_directive : require
#include "shared/inter_collision.h"
#include "shared/float_order.h"

layout(constant_id = 0) const uint kPass = kInterPassBroad;
// FUSED's shared capacity in marked particles (a power of two); 1 for the other passes.
layout(constant_id = 1) const uint kFusedCapacity = 1u;
layout(local_size_x = kInterGroupSize) in;  // checked against the pass declarations (tests/spirv/pass_decl_test.cpp)

layout(std430, set = 0, binding = kInterBindingParticles) buffer Particles { vec4 particles[]; };
layout(std430, set = 0, binding = kInterBindingCloths) readonly buffer Cloths { InterCloth cloths[]; };
layout(std430, set = 0, binding = kInterBindingLocalBoxes) readonly buffer LocalBoxes { Aabb localBoxes[]; };
layout(std430, set = 0, binding = kInterBindingWorld) coherent buffer World { InterClothWorld world[]; };
layout(std430, set = 0, binding = kInterBindingSorted) coherent buffer Sorted { uint sorted[]; };
layout(std430, set = 0, binding = kInterBindingPartners) buffer Partners { uint partners[]; };
layout(std430, set = 0, binding = kInterBindingState) coherent buffer State { InterState state; };
layout(std430, set = 0, binding = kInterBindingTiles) coherent buffer Tiles { uint tiles[]; };
layout(std430, set = 0, binding = kInterBindingMarked) buffer Marked { InterMarked marked[]; };
layout(std430, set = 0, binding = kInterBindingKeys) buffer Keys { uint keys[]; };
layout(std430, set = 0, binding = kInterBindingValues) buffer Values { uint values[]; };
layout(std430, set = 0, binding = kInterBindingDelta) buffer Delta { vec4 delta[]; };
layout(std430, set = 0, binding = kInterBindingContacts) buffer Contacts { uint contacts[]; };
layout(push_constant) uniform Push { InterPush pc; };

shared uvec4 sLo[kInterGroupSize];
shared uvec4 sHi[kInterGroupSize];
shared uint sSub[kInterGroupSize];
shared uint sAxis;
shared uint sNonEmpty;
shared uint sTotal;
// The fused pass's (key, marked index) pairs (shared/bitonic_sort.h); the other passes' shared
// variables above make kInterSharedBytes.
shared uint sSortKey[kFusedCapacity];
shared uint sSortItem[kFusedCapacity];

uint linearGroupIndex() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
uint linearInvocation() { return linearGroupIndex() * kInterGroupSize + gl_LocalInvocationIndex; }

float axisOf(vec4 v, uint axis) { return axis == 0u ? v.x : (axis == 1u ? v.y : v.z); }
bool boxEmpty(vec4 lo, vec4 hi) { return lo.x > hi.x; }

void syncGroup() {
  memoryBarrierBuffer();
  memoryBarrierShared();
  barrier();
}

// Min/max of uvec4 keys over the workgroup; the result is in sLo[0] / sHi[0] after the call.
void reduceKeys(uvec4 lo, uvec4 hi) {
  sLo[gl_LocalInvocationIndex] = lo;
  sHi[gl_LocalInvocationIndex] = hi;
  syncGroup();
  if (gl_LocalInvocationIndex == 0u) {
    for (uint s = 1u; s < kInterGroupSize; ++s) {
      lo = min(lo, sLo[s]);
      hi = max(hi, sHi[s]);
    }
    sLo[0] = lo;
    sHi[0] = hi;
  }
  syncGroup();
}

// --- broad phase (one workgroup) -------------------------------------------------------------

// Partners of cloth c in sweep order (backward while an earlier box may reach c, then forward until
// a box starts beyond c). With `write`, stores them from world[c].partnerOffset and folds the overlap
// boxes into (glo, ghi).
uint scanPartners(uint c, bool write, inout uvec4 glo, inout uvec4 ghi) {
  uint n = pc.clothCount;
  uint axis = sAxis;
  uint rank = world[c].sortedRank;
  vec4 alo = world[c].boxLo, ahi = world[c].boxHi;
  float lo = axisOf(alo, axis), hi = axisOf(ahi, axis);
  uint offset = world[c].partnerOffset;
  uint count = 0u;
  uint cap = partners.length();
  for (uint pass = 0u; pass < 2u; ++pass) {
    uint k = rank;
    while (true) {
      if (pass == 0u) {
        if (k == 0u) break;
        --k;
        if (uintBitsToFloat(sorted[n + k]) < lo) break;
      } else {
        ++k;
        if (k >= sNonEmpty) break;
        if (axisOf(world[sorted[k]].boxLo, axis) > hi) break;
      }
      uint b = sorted[k];
      vec4 blo = world[b].boxLo, bhi = world[b].boxHi;
      if (!interBoxesOverlap(alo.xyz, ahi.xyz, blo.xyz, bhi.xyz)) continue;
      if (!interFilterAllows(cloths[c].group, cloths[c].mask, cloths[b].group, cloths[b].mask)) continue;
      if (write) {
        if (offset + count < cap) partners[offset + count] = b;
        glo = min(glo, floatKey(max(alo, blo)));
        ghi = max(ghi, floatKey(min(ahi, bhi)));
      }
      ++count;
    }
  }
  return count;
}

void broadPass() {
  if (linearGroupIndex() != 0u) return;
  uint n = pc.clothCount;
  uint tid = gl_LocalInvocationIndex;
  const float inf = uintBitsToFloat(0x7F800000u);
  uvec4 lo = uvec4(0xFFFFFFFFu), hi = uvec4(0u);
  uint nonEmpty = 0u;
  for (uint c = tid; c < n; c += kInterGroupSize) {
    vec3 c0, c1, c2;
    interRotationColumns(cloths[c].rotation, c0, c1, c2);
    InterClothWorld w;
    w.col0 = vec4(c0, 0.0);
    w.col1 = vec4(c1, 0.0);
    w.col2 = vec4(c2, 0.0);
    w.partnerOffset = 0u;
    w.partnerCount = 0u;
    w.sortedRank = 0xFFFFFFFFu;
    w.pad0 = 0u;
    Aabb lb = localBoxes[c];
    if (boxEmpty(lb.lo, lb.hi)) {
      w.boxLo = vec4(inf, inf, inf, 0.0);
      w.boxHi = vec4(-inf, -inf, -inf, 0.0);
    } else {
      vec3 wlo, whi;
      interWorldBox(c0, c1, c2, cloths[c].translation.xyz, lb.lo.xyz, lb.hi.xyz, pc.distance, wlo, whi);
      w.boxLo = vec4(wlo, 0.0);
      w.boxHi = vec4(whi, 0.0);
      lo = min(lo, floatKey(w.boxLo));
      hi = max(hi, floatKey(w.boxHi));
      ++nonEmpty;
    }
    world[c] = w;
  }
  nonEmpty = subgroupAdd(nonEmpty);
  if (subgroupElect()) sSub[gl_SubgroupID] = nonEmpty;
  reduceKeys(lo, hi);
  if (tid == 0u) {
    uint total = 0u;
    for (uint s = 0u; s < gl_NumSubgroups; ++s) total += sSub[s];
    sNonEmpty = total;
    vec4 ulo = floatFromKey(sLo[0]), uhi = floatFromKey(sHi[0]);
    sAxis = total == 0u ? kInterNoAxis : interSweepAxis(ulo.xyz, uhi.xyz);
    state.axis = sAxis;
    state.pairSlots = 0u;
    state.gridLo = vec4(inf, inf, inf, 0.0);
    state.gridHi = vec4(-inf, -inf, -inf, 0.0);
    state.grid = makeSelfGrid(vec3(inf), vec3(-inf), pc.distance);
  }
  syncGroup();
  uint axis = sAxis;
  if (axis == kInterNoAxis) return;  // uniform

  // Rank of each non-empty cloth by (lower bound on the axis, index).
  for (uint c = tid; c < n; c += kInterGroupSize) {
    vec4 clo = world[c].boxLo;
    if (boxEmpty(clo, world[c].boxHi)) continue;
    float key = axisOf(clo, axis);
    uint rank = 0u;
    for (uint j = 0u; j < n; ++j) {
      vec4 olo = world[j].boxLo;
      if (boxEmpty(olo, world[j].boxHi)) continue;
      float k = axisOf(olo, axis);
      if (k < key || (k == key && j < c)) ++rank;
    }
    world[c].sortedRank = rank;
    sorted[rank] = c;
  }
  syncGroup();
  if (tid == 0u) {
    float m = 0.0;
    for (uint r = 0u; r < sNonEmpty; ++r) {
      float h = axisOf(world[sorted[r]].boxHi, axis);
      m = r == 0u ? h : max(m, h);
      sorted[n + r] = floatBitsToUint(m);
    }
  }
  syncGroup();
  uvec4 glo = uvec4(0xFFFFFFFFu), ghi = uvec4(0u);
  for (uint c = tid; c < n; c += kInterGroupSize) {
    if (world[c].sortedRank != 0xFFFFFFFFu) world[c].partnerCount = scanPartners(c, false, glo, ghi);
  }
  syncGroup();
  if (tid == 0u) {
    uint offset = 0u;
    for (uint c = 0u; c < n; ++c) {
      world[c].partnerOffset = offset;
      offset += world[c].partnerCount;
    }
    state.pairSlots = offset;
  }
  syncGroup();
  for (uint c = tid; c < n; c += kInterGroupSize) {
    if (world[c].sortedRank != 0xFFFFFFFFu) scanPartners(c, true, glo, ghi);
  }
  reduceKeys(glo, ghi);
  if (tid == 0u && state.pairSlots > 0u) {
    vec4 gl = floatFromKey(sLo[0]), gh = floatFromKey(sHi[0]);
    state.gridLo = vec4(gl.xyz, 0.0);
    state.gridHi = vec4(gh.xyz, 0.0);
    state.grid = makeSelfGrid(gl.xyz, gh.xyz, pc.distance);
  }
}

// --- marking -----------------------------------------------------------------------------------

// The cloth that owns tile t: the last cloth whose firstTile <= t.
uint clothOfTile(uint t) {
  uint lo = 0u, hi = pc.clothCount;
  while (lo < hi) {
    uint mid = (lo + hi) / 2u;
    if (cloths[mid].firstTile <= t) lo = mid + 1u; else hi = mid;
  }
  return lo - 1u;
}

// Bit k: item k of this invocation's 8 consecutive particles of tile t is marked.
uint markBits(uint t, uint c) {
  InterClothWorld w = world[c];
  if (w.partnerCount == 0u) return 0u;
  InterCloth cl = cloths[c];
  uint begin = cl.first + (t - cl.firstTile) * kInterTileSize + gl_LocalInvocationIndex * kInterItemsPerInvocation;
  uint end = min(min(cl.first + cl.count, begin + kInterItemsPerInvocation), pc.particleCount);
  uint bits = 0u;
  uint cap = partners.length();
  for (uint i = begin; i < end; ++i) {
    vec3 p = interToWorld(w.col0.xyz, w.col1.xyz, w.col2.xyz, cl.translation.xyz, particles[i].xyz);
    for (uint k = 0u; k < w.partnerCount && w.partnerOffset + k < cap; ++k) {
      uint b = partners[w.partnerOffset + k];
      if (interInside(p, max(w.boxLo, world[b].boxLo).xyz, min(w.boxHi, world[b].boxHi).xyz)) {
        bits |= 1u << (i - begin);
        break;
      }
    }
  }
  return bits;
}

// Exclusive prefix of `v` over the workgroup in local invocation order (which the marked order
// follows), and the total. A plain shared-memory scan: no assumption on how invocations map to
// subgroups, and 256 additions are nothing next to the marking itself.
uint groupExclusiveAdd(uint v, out uint total) {
  sSub[gl_LocalInvocationIndex] = v;
  syncGroup();
  if (gl_LocalInvocationIndex == 0u) {
    uint run = 0u;
    for (uint s = 0u; s < kInterGroupSize; ++s) {
      uint x = sSub[s];
      sSub[s] = run;
      run += x;
    }
    sTotal = run;
  }
  syncGroup();
  total = sTotal;
  return sSub[gl_LocalInvocationIndex];
}

void markCountPass() {
  uint t = linearGroupIndex();
  if (t >= pc.tileCount) return;  // uniform
  uint bits = markBits(t, clothOfTile(t));
  uint total;
  groupExclusiveAdd(bitCount(bits), total);
  if (gl_LocalInvocationIndex == 0u) tiles[t] = total;
}

void markScanPass() {
  if (linearGroupIndex() != 0u || gl_LocalInvocationIndex != 0u) return;
  uint run = 0u;
  for (uint t = 0u; t < pc.tileCount; ++t) {
    uint x = tiles[t];
    tiles[pc.tileCount + t] = run;
    run += x;
  }
  run = min(run, pc.capacity);
  state.markedCount = run;
  state.dispatchX = (run + kInterGroupSize - 1u) / kInterGroupSize;
  state.dispatchY = 1u;
  state.dispatchZ = 1u;
}

void markWritePass() {
  uint t = linearGroupIndex();
  if (t >= pc.tileCount) return;  // uniform
  uint c = clothOfTile(t);
  uint bits = markBits(t, c);
  uint total;
  uint slot = tiles[pc.tileCount + t] + groupExclusiveAdd(bitCount(bits), total);
  if (bits == 0u) return;
  InterCloth cl = cloths[c];
  InterClothWorld w = world[c];
  uint begin = cl.first + (t - cl.firstTile) * kInterTileSize + gl_LocalInvocationIndex * kInterItemsPerInvocation;
  for (uint k = 0u; k < kInterItemsPerInvocation; ++k) {
    if ((bits & (1u << k)) == 0u) continue;
    uint i = begin + k;
    vec4 p = particles[i];
    if (slot < pc.capacity) {
      vec3 wp = interToWorld(w.col0.xyz, w.col1.xyz, w.col2.xyz, cl.translation.xyz, p.xyz);
      marked[slot] = InterMarked(vec4(wp, p.w), c, i, cl.group, cl.mask);
      delta[pc.capacity + slot] = vec4(0.0);
      contacts[slot] = 0u;
    }
    ++slot;
  }
}

// --- narrow phase (indirect: one invocation per marked particle or sorted slot; fused: one workgroup) ---

// Accessors for the shared gather kernels (self collision's and ours): the sorted keys and marked
// indices are the radix sort's output, or the fused pass's shared arrays.
uint sortedKey(uint slot) { return kPass == kInterPassFused ? sSortKey[slot] : keys[slot]; }
uint sortedValue(uint slot) { return kPass == kInterPassFused ? sSortItem[slot] : values[slot]; }
InterMarked markedAt(uint index) { return marked[min(index, pc.capacity - 1u)]; }
vec4 sortedPos(uint slot) { return markedAt(sortedValue(slot)).position; }
vec4 sortedRest(uint slot) { return vec4(0.0); }
void emitPair(uint index, uint slot) {}
#include "shared/inter_collision_kernel.h"
#include "shared/bitonic_sort.h"

// The gather of sorted slot k (of m) for marked particle i = sortedValue(k): its new position.
void gatherSlot(uint k, uint i, uint m) {
  vec3 sum;
  uint n = interGather(k, m, state.grid, pc.distance, pc.stiffness, sum);
  vec4 p = marked[i].position;
  delta[i] = n > 0u ? selfApply(p, sum, n) : p;
  if (pc.firstIteration != 0u) contacts[i] = n;
}

// Marked particle i moves to its new position; its total displacement grows by the step.
void applyMarked(uint i) {
  vec4 p = marked[i].position;
  vec4 q = delta[i];
  precise vec3 step = q.xyz - p.xyz;
  precise vec4 t = delta[pc.capacity + i] + vec4(step, 0.0);
  delta[pc.capacity + i] = t;
  marked[i].position = q;
}

void keysPass() {
  uint i = linearInvocation();
  if (i >= state.markedCount) return;
  keys[i] = selfCellKey(state.grid, marked[i].position.xyz);
  values[i] = i;
}

void gatherPass() {
  uint k = linearInvocation();
  uint m = state.markedCount;
  if (k >= m) return;
  uint i = values[k];
  if (i >= m) return;
  gatherSlot(k, i, m);
}

void applyPass() {
  uint i = linearInvocation();
  if (i >= state.markedCount) return;
  applyMarked(i);
}

// One iteration of the narrow phase in one workgroup: KEYS into shared memory, the bitonic sort,
// GATHER per sorted slot, then (after every gather has read the old positions) APPLY, each marked
// particle by the invocation that gathered it.
void fusedPass() {
  if (linearGroupIndex() != 0u) return;  // uniform
  uint L = gl_LocalInvocationIndex;
  uint m = min(state.markedCount, kFusedCapacity);  // the host fuses only stages whose particles fit
  if (m == 0u) return;                              // uniform
  uint width = 1u;  // a power of two >= m
  while (width < m) width *= 2u;
  for (uint s = L; s < width; s += kInterGroupSize) {
    bool real = s < m;
    sSortKey[s] = real ? selfCellKey(state.grid, marked[s].position.xyz) : 0xFFFFFFFFu;
    sSortItem[s] = real ? s : 0xFFFFFFFFu;
  }
  barrier();
  bitonicSortShared(width, L, kInterGroupSize);
  syncGroup();  // (width 1: the sort has no barrier of its own)
  for (uint k = L; k < m; k += kInterGroupSize) gatherSlot(k, sSortItem[k], m);
  syncGroup();  // every gather has read marked[] before any apply writes it
  for (uint k = L; k < m; k += kInterGroupSize) applyMarked(sSortItem[k]);
}

void writeBackPass() {
  uint i = linearInvocation();
  if (i >= state.markedCount) return;
  vec4 t = delta[pc.capacity + i];
  if (t.x == 0.0 && t.y == 0.0 && t.z == 0.0) return;
  InterMarked a = marked[i];
  InterClothWorld w = world[a.cloth];
  vec3 d = interRotateBack(w.col0.xyz, w.col1.xyz, w.col2.xyz, t.xyz);
  if (a.particle < pc.particleCount) {
    precise vec3 p = particles[a.particle].xyz + d;
    particles[a.particle].xyz = p;
  }
}

void main() {
  if (kPass == kInterPassBroad) broadPass();
  else if (kPass == kInterPassMarkCount) markCountPass();
  else if (kPass == kInterPassMarkScan) markScanPass();
  else if (kPass == kInterPassMarkWrite) markWritePass();
  else if (kPass == kInterPassKeys) keysPass();
  else if (kPass == kInterPassGather) gatherPass();
  else if (kPass == kInterPassApply) applyPass();
  else if (kPass == kInterPassFused) fusedPass();
  else writeBackPass();
}
