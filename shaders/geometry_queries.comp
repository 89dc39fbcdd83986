#version 460
// Pairwise geometry queries (include/vkcollide/geometry_queries.h): the SCAN pass (one workgroup: the
// exclusive prefix of the tiles' hits, their masks' popcounts, the counts and the indirect dispatch;
// shared/geometry_queries_bindings.h describes the stage), and the BLOCKS and LOCAL passes of a
// device-resident batch of primitive pairs (specialization constant 0). The pair families' COUNT and WRITE passes
// are shaders/geometry_queries_<family>.comp, the ranges shaders/geometry_queries_ranges.comp.
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILIES 0
#include "shared/geometry_queries_stage.h"


layout(constant_id = 0) const uint kPass = kGeomScanPassTiles;

shared uint sScan[kGeomGroupSize];

// Inclusive prefix sum of v over the workgroup in gl_LocalInvocationIndex order (Hillis-Steele in
// shared memory: no subgroup operation, so any subgroup size gives the same order). Call from uniform
// control flow.
uint groupInclusiveScan(uint v) {
  uint lid = gl_LocalInvocationIndex;
  sScan[lid] = v;
  barrier();
  for (uint offset = 1u; offset < kGeomGroupSize; offset *= 2u) {
    uint other = lid >= offset ? sScan[lid - offset] : 0u;
    barrier();
    sScan[lid] += other;
    barrier();
  }
  uint result = sScan[lid];
  barrier();  // sScan may be reused
  return result;
}

// The counts of `total` contacts: contacts, written, overflow, the indirect dispatch, the padding
// (the words a device layout reports, candidatesMissing and invalidQueries, are the caller's).
void writeCounts(uint total) {
  uint written = min(total, pc.capacity);
  counts.contacts = total;
  counts.written = written;
  counts.overflow = total > pc.capacity ? 1u : 0u;
  uint size = max(pc.indirectGroupSize, 1u);
  counts.dispatch.x = written / size + (written % size != 0u ? 1u : 0u);
  counts.dispatch.y = 1u;
  counts.dispatch.z = 1u;
  counts.pad0 = 0u;
  counts.pad1 = 0u;
  counts.pad2 = 0u;
}

void scanPass() {
  if (linearGroup() != 0u) return;  // uniform: one workgroup
  uint lid = gl_LocalInvocationIndex;
  uint per = (pc.groupCount + kGeomGroupSize - 1u) / kGeomGroupSize;
  uint begin = min(lid * per, pc.groupCount);
  uint end = min(begin + per, pc.groupCount);
  uint sum = 0u;
  for (uint g = begin; g < end; ++g) sum += tileHits(g);
  uint inclusive = groupInclusiveScan(sum);
  uint run = inclusive - sum;
  for (uint g = begin; g < end; ++g) {
    groupSums[g] = run;
    run += tileHits(g);
  }
  if (lid == kGeomGroupSize - 1u) {
    writeCounts(inclusive);
    if (pc.meshPairCount == 0u) counts.candidatesMissing = 0u;  // else the mesh pairs' SCAN's
    if (pc.deviceLayout == 0u) {  // a device-resident batch's layout passes wrote these two
      counts.invalidQueries = 0u;
      counts.dispatch.w = 0u;
    }
  }
}

// Primitive pairs, BLOCKS: the blocks' contacts (groupSums[2 b]) made an exclusive prefix in place,
// their invalid queries (groupSums[2 b + 1]) summed; the counts.
void blocksPass() {
  if (linearGroup() != 0u) return;  // uniform: one workgroup
  uint lid = gl_LocalInvocationIndex;
  uint per = (pc.blockCount + kGeomGroupSize - 1u) / kGeomGroupSize;
  uint begin = min(lid * per, pc.blockCount);
  uint end = min(begin + per, pc.blockCount);
  uint sum = 0u;
  uint invalid = 0u;
  for (uint g = begin; g < end; ++g) {
    sum += groupSums[2u * g];
    invalid += groupSums[2u * g + 1u];
  }
  uint inclusive = groupInclusiveScan(sum);
  uint invalidInclusive = groupInclusiveScan(invalid);
  uint run = inclusive - sum;
  for (uint g = begin; g < end; ++g) {
    uint n = groupSums[2u * g];
    groupSums[2u * g] = run;
    run += n;
  }
  if (lid == kGeomGroupSize - 1u) {
    writeCounts(inclusive);
    counts.candidatesMissing = 0u;
    counts.invalidQueries = invalidInclusive;
    counts.dispatch.w = 0u;  // no slot layout
  }
}

shared uint sChunkTotal;

// Primitive pairs, LOCAL: a workgroup per block; each query's entry gets the contacts of the block's
// queries before it (its prefix), chunk by chunk of kGeomGroupSize queries.
void localPass() {
  uint block = linearGroup();
  if (block >= pc.blockCount) return;  // uniform over the workgroup
  uint lid = gl_LocalInvocationIndex;
  uint base = 0u;
  uint chunks = max(pc.queryChunks, 1u);
  for (uint c = 0u; c < chunks; ++c) {
    uint q = (block * chunks + c) * kGeomGroupSize + lid;
    uint entry = q < pc.queryCount ? tileMasks[q] : 0u;
    uint n = q < pc.queryCount ? geomPrimitiveEntryContacts(entry) : 0u;
    uint inclusive = groupInclusiveScan(n);
    if (q < pc.queryCount) tileMasks[q] = (entry & 0xFF000000u) | ((base + inclusive - n) & 0xFFFFFFu);
    if (lid == kGeomGroupSize - 1u) sChunkTotal = inclusive;
    barrier();
    base += sChunkTotal;
    barrier();
  }
}

void main() {
  if (kPass == kGeomScanPassBlocks) {
    blocksPass();
  } else if (kPass == kGeomScanPassLocal) {
    localPass();
  } else {
    scanPass();
  }
}
