#version 460
// Pairwise geometry queries (include/vkcollide/geometry_queries.h): the SCAN pass (one workgroup: the
// exclusive prefix of the tiles' hits, their masks' popcounts, the counts and the indirect dispatch;
// shared/geometry_queries_bindings.h describes the stage). The pair families' COUNT and WRITE passes
// are shaders/geometry_queries_<family>.comp, the ranges shaders/geometry_queries_ranges.comp.
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILIES 0
#include "shared/geometry_queries_stage.h"


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
    uint total = inclusive;
    uint written = min(total, pc.capacity);
    counts.contacts = total;
    counts.written = written;
    counts.overflow = total > pc.capacity ? 1u : 0u;
    if (pc.meshPairCount == 0u) counts.candidatesMissing = 0u;  // else the mesh pairs' SCAN's
    uint size = max(pc.indirectGroupSize, 1u);
    counts.dispatch.x = written / size + (written % size != 0u ? 1u : 0u);
    counts.dispatch.y = 1u;
    counts.dispatch.z = 1u;
    if (pc.deviceLayout == 0u) {  // a device-resident batch's layout passes wrote these two
      counts.invalidQueries = 0u;
      counts.dispatch.w = 0u;
    }
    counts.pad0 = 0u;
    counts.pad1 = 0u;
    counts.pad2 = 0u;
  }
}

void main() { scanPass(); }
