#version 460
// Radix sort, one digit pass in three dispatches (see shaders/shared/radix_sort.h): HISTOGRAM per tile,
// SCAN per digit value over the tiles, SCATTER per tile; COPY brings the result back after an odd
// number of passes. Reduce-then-scan: no workgroup waits on another (no forward-progress assumption).
//
// Stability: within a 256-key chunk of a tile, each key's rank among the keys of its digit comes from a
// ballot match inside its subgroup (lanes in invocation-id order) and from the subgroups before it
// (a prefix over per-subgroup digit counts, in subgroup-id order). Keys are assigned to invocations by `slot`, the workgroup-wide
// exclusive scan of 1 in exactly that (subgroup id, invocation id) order, so the rank order is the
// input order whatever the device's subgroup size or its mapping of invocations to subgroups.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_GOOGLE_include_directive : require
#include "shared/radix_sort.h"

layout(constant_id = 0) const uint kPass = kRadixPassHistogram;
// 1: the scatter matches digits with 128-bit ballots even on subgroups of up to 32 (lets tests on such
// devices cover the path larger subgroups take).
layout(constant_id = 1) const uint kWideBallot = 0u;
layout(local_size_x = kRadixGroupSize) in;  // checked against the pass declarations (tests/spirv/pass_decl_test.cpp)

layout(std430, set = 0, binding = kRadixBindingKeysIn) readonly buffer KeysIn { uint keysIn[]; };
layout(std430, set = 0, binding = kRadixBindingValuesIn) readonly buffer ValuesIn { uint valuesIn[]; };
layout(std430, set = 0, binding = kRadixBindingKeysOut) writeonly buffer KeysOut { uint keysOut[]; };
layout(std430, set = 0, binding = kRadixBindingValuesOut) writeonly buffer ValuesOut { uint valuesOut[]; };
layout(std430, set = 0, binding = kRadixBindingTileHist) buffer TileHist { uint tileHist[]; };
layout(std430, set = 0, binding = kRadixBindingDigitTotals) buffer DigitTotals { uint digitTotals[]; };
layout(std430, set = 0, binding = kRadixBindingCount) readonly buffer CountBuffer { uint countBuffer[]; };
layout(push_constant) uniform Push { RadixSortPush pc; };

shared uint sBins[kRadixBins];         // per digit: counts (histogram), running destinations (scatter)
shared uint sSub[kRadixGroupSize];     // per subgroup: totals, then their exclusive prefix (any subgroup size >= 1)
shared uint sTotal;
shared uint sCounts[kRadixMaxSubgroups * (kRadixBins / 4u)];  // scatter: 8-bit counts per (subgroup, digit)
// Scatter's local reorder: a chunk's pairs sorted by digit (stable) in shared memory, then written out
// in that order, so that consecutive invocations write consecutive addresses of each digit's run.
shared uint sDigitStart[kRadixBins];    // per digit: its first position in the chunk, less sSub[digit / 4]
shared uint sLocalKey[kRadixGroupSize];
shared uint sLocalValue[kRadixGroupSize];

uint linearGroupIndex() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

uint elementCount() { return pc.countFromBuffer != 0u ? min(countBuffer[0], pc.count) : pc.count; }

// Exclusive prefix sum of v over the workgroup in (subgroup id, invocation id) order; `total` is the
// sum. Has barriers: call from uniform control flow.
uint groupExclusiveScan(uint v, out uint total) {
  uint inclusive = subgroupInclusiveAdd(v);
  uint subgroupTotal = subgroupAdd(v);
  if (subgroupElect()) sSub[gl_SubgroupID] = subgroupTotal;
  memoryBarrierShared();
  barrier();
  if (gl_LocalInvocationIndex == 0u) {
    uint run = 0u;
    for (uint s = 0u; s < gl_NumSubgroups; ++s) {
      uint t = sSub[s];
      sSub[s] = run;
      run += t;
    }
    sTotal = run;
  }
  memoryBarrierShared();
  barrier();
  uint result = sSub[gl_SubgroupID] + inclusive - v;
  total = sTotal;
  memoryBarrierShared();
  barrier();  // sSub and sTotal may be reused by the next call
  return result;
}

// This invocation's position 0..255 in (subgroup id, invocation id) order.
uint invocationSlot() {
  uint total;
  return groupExclusiveScan(1u, total);
}

void histogramPass() {
  uint tile = linearGroupIndex();
  if (tile >= pc.tileCount) return;  // uniform per workgroup
  uint mask = (1u << pc.bits) - 1u;
  uint lid = gl_LocalInvocationIndex;
  sBins[lid] = 0u;  // kRadixGroupSize == kRadixBins
  memoryBarrierShared();
  barrier();
  uint begin = tile * kRadixTileSize;
  uint end = min(begin + kRadixTileSize, elementCount());
  for (uint i = begin + lid; i < end; i += kRadixGroupSize) atomicAdd(sBins[(keysIn[i] >> pc.shift) & mask], 1u);
  memoryBarrierShared();
  barrier();
  // Tiles beyond the count (countFromBuffer) write zeros, so the scan needs no count.
  if (lid <= mask) tileHist[lid * pc.tileCount + tile] = sBins[lid];
}

void scanPass() {
  if (pc.smallScan != 0u) {  // few tiles: invocation d scans digit d's row on its own (no barriers)
    uint d = gl_LocalInvocationIndex;
    if (linearGroupIndex() != 0u || d >= (1u << pc.bits)) return;
    uint run = 0u;
    for (uint t = 0u; t < pc.tileCount; ++t) {
      uint c = tileHist[d * pc.tileCount + t];
      tileHist[d * pc.tileCount + t] = run;
      run += c;
    }
    digitTotals[d] = run;
    return;
  }
  uint digit = linearGroupIndex();
  if (digit >= (1u << pc.bits)) return;
  uint slot = invocationSlot();
  uint row = digit * pc.tileCount;
  uint carry = 0u;
  for (uint t0 = 0u; t0 < pc.tileCount; t0 += kRadixGroupSize) {  // uniform
    uint t = t0 + slot;
    uint v = t < pc.tileCount ? tileHist[row + t] : 0u;
    uint total;
    uint prefix = groupExclusiveScan(v, total);
    if (t < pc.tileCount) tileHist[row + t] = carry + prefix;
    carry += total;
  }
  if (gl_LocalInvocationIndex == 0u) digitTotals[digit] = carry;
}

void scatterPass() {
  uint tile = linearGroupIndex();
  if (tile >= pc.tileCount) return;
  uint n = elementCount();
  uint begin = tile * kRadixTileSize;
  if (begin >= n) return;  // uniform: beyond the device-side count
  uint end = min(begin + kRadixTileSize, n);
  uint bins = 1u << pc.bits;
  uint mask = bins - 1u;
  uint slot = invocationSlot();

  // Destination of this tile's first key of each digit: all smaller digits, plus this digit's keys in
  // earlier tiles.
  uint total;
  uint digitBase = groupExclusiveScan(slot < bins ? digitTotals[slot] : 0u, total);
  if (slot < bins) sBins[slot] = digitBase + tileHist[slot * pc.tileCount + tile];
  memoryBarrierShared();
  barrier();

  // Per subgroup and digit, 8-bit counts (then exclusive prefixes over the subgroups before), 4 per
  // word: at most kRadixMaxSubgroups subgroups (checked by the host; the guard keeps indices in bounds).
  if (gl_NumSubgroups > kRadixMaxSubgroups) return;  // uniform
  uint words = gl_NumSubgroups * (kRadixBins / 4u);
  for (uint w = gl_LocalInvocationIndex; w < words; w += kRadixGroupSize) sCounts[w] = 0u;
  memoryBarrierShared();
  barrier();

  // The pairs of the first chunk; each iteration loads the next chunk's before its barriers, so the
  // loads' latency overlaps the ranking.
  bool valid = begin + slot < end;
  uint key = valid ? keysIn[begin + slot] : 0u;
  uint value = valid ? valuesIn[begin + slot] : 0u;
  for (uint c = begin; c < end; c += kRadixGroupSize) {  // uniform
    uint next = c + kRadixGroupSize + slot;
    bool nextValid = next < end;
    uint nextKey = nextValid ? keysIn[next] : 0u;
    uint nextValue = nextValid ? valuesIn[next] : 0u;
    uint digit = (key >> pc.shift) & mask;
    // Lanes of this subgroup with the same digit and validity: rank among them, their count, leader.
    uint rank, count;  // count <= subgroup size <= 128: fits 8 bits
    bool leader;
    if (kWideBallot == 0u && gl_SubgroupSize <= 32u) {  // one ballot word (cheaper on CPU drivers)
      uint peers = subgroupBallot(valid).x;
      if (!valid) peers = ~peers;
      for (uint b = 0u; b < pc.bits; ++b) {  // uniform
        bool set = ((digit >> b) & 1u) != 0u;
        uint ballot = subgroupBallot(set).x;
        peers &= set ? ballot : ~ballot;
      }
      peers &= subgroupBallot(true).x;
      rank = bitCount(peers & gl_SubgroupLtMask.x);
      count = bitCount(peers);
      leader = uint(findLSB(peers)) == gl_SubgroupInvocationID;
    } else {
      uvec4 peers = subgroupBallot(true);
      for (uint b = 0u; b < pc.bits; ++b) {  // uniform
        bool set = ((digit >> b) & 1u) != 0u;
        uvec4 ballot = subgroupBallot(set);
        peers &= set ? ballot : ~ballot;
      }
      uvec4 validBallot = subgroupBallot(valid);
      peers &= valid ? validBallot : ~validBallot;
      rank = subgroupBallotExclusiveBitCount(peers);
      count = subgroupBallotBitCount(peers);
      leader = subgroupBallotFindLSB(peers) == gl_SubgroupInvocationID;
    }
    uint word = gl_SubgroupID * (kRadixBins / 4u) + (digit >> 2u);
    uint byteShift = (digit & 3u) * 8u;
    if (valid && leader) atomicOr(sCounts[word], count << byteShift);  // distinct bytes: order-independent
    memoryBarrierShared();
    barrier();

    // Invocation w < 64 owns digits 4w..4w+3: exclusive prefix over the subgroups, in subgroup-id order.
    // A prefix is read only by a subgroup that has keys of that digit, so it is < 256 there.
    uvec4 run = uvec4(0u);
    if (gl_LocalInvocationIndex < kRadixBins / 4u) {
      for (uint s = 0u; s < gl_NumSubgroups; ++s) {
        uint at = s * (kRadixBins / 4u) + gl_LocalInvocationIndex;
        uint packed = sCounts[at];
        sCounts[at] = (run.x & 0xFFu) | ((run.y & 0xFFu) << 8u) | ((run.z & 0xFFu) << 16u) | ((run.w & 0xFFu) << 24u);
        run += uvec4(packed & 0xFFu, (packed >> 8u) & 0xFFu, (packed >> 16u) & 0xFFu, packed >> 24u);
      }
    }
    memoryBarrierShared();
    barrier();

    // The chunk's digit offsets: invocation w < 64 has its 4 digits' totals in `run`; their exclusive
    // prefix within w in sDigitStart, w's share of the chunk in sSub[w], prefixed by invocation 0 in
    // digit order (the invocation index, not the subgroup order groupExclusiveScan uses).
    if (gl_LocalInvocationIndex < kRadixBins / 4u) {
      uint d = gl_LocalInvocationIndex * 4u;
      sDigitStart[d] = 0u;
      sDigitStart[d + 1u] = run.x;
      sDigitStart[d + 2u] = run.x + run.y;
      sDigitStart[d + 3u] = run.x + run.y + run.z;
      sSub[gl_LocalInvocationIndex] = run.x + run.y + run.z + run.w;
    }
    memoryBarrierShared();
    barrier();
    if (gl_LocalInvocationIndex == 0u) {
      uint at = 0u;
      for (uint w = 0u; w < kRadixBins / 4u; ++w) {
        uint t = sSub[w];
        sSub[w] = at;
        at += t;
      }
    }
    memoryBarrierShared();
    barrier();
    // Each pair to its place in the chunk's digit order (rank among its digit: the subgroups before,
    // then its rank in its subgroup), ...
    if (valid) {
      uint local = sSub[digit >> 2u] + sDigitStart[digit] + ((sCounts[word] >> byteShift) & 0xFFu) + rank;
      sLocalKey[local] = key;
      sLocalValue[local] = value;
    }
    memoryBarrierShared();
    barrier();
    // ... then position i of that order goes to its digit's running destination plus its rank within
    // the digit: the same address as ranking in place gives, written in runs.
    if (c + gl_LocalInvocationIndex < end) {
      uint k = sLocalKey[gl_LocalInvocationIndex];
      uint d = (k >> pc.shift) & mask;
      uint dst = sBins[d] + (gl_LocalInvocationIndex - sSub[d >> 2u] - sDigitStart[d]);
      if (dst < n) {
        keysOut[dst] = k;
        valuesOut[dst] = sLocalValue[gl_LocalInvocationIndex];
      }
    }
    memoryBarrierShared();
    barrier();

    for (uint w = gl_LocalInvocationIndex; w < words; w += kRadixGroupSize) sCounts[w] = 0u;
    if (gl_LocalInvocationIndex < kRadixBins / 4u) {
      uint d = gl_LocalInvocationIndex * 4u;
      sBins[d] += run.x;
      sBins[d + 1u] += run.y;
      sBins[d + 2u] += run.z;
      sBins[d + 3u] += run.w;
    }
    memoryBarrierShared();
    barrier();
    valid = nextValid;
    key = nextKey;
    value = nextValue;
  }
}

void copyPass() {
  uint begin = linearGroupIndex() * kRadixTileSize;
  uint end = min(begin + kRadixTileSize, elementCount());
  for (uint i = begin + gl_LocalInvocationIndex; i < end; i += kRadixGroupSize) {
    keysOut[i] = keysIn[i];
    valuesOut[i] = valuesIn[i];
  }
}

void main() {
  if (kPass == kRadixPassHistogram) histogramPass();
  else if (kPass == kRadixPassScan) scanPass();
  else if (kPass == kRadixPassScatter) scatterPass();
  else copyPass();
}
