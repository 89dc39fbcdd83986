#version 460
// Pairwise geometry queries, device-resident batches: the slot layout computed on the device (the
// LAYOUT, BLOCKS and PLACE passes of shared/geometry_queries_device_layout.h, selected by
// specialization constant 0). The host cannot read the geometries and queries: every value is
// checked here, and a query that fails any check gets no slots (no contact) and is counted.
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILIES 0
#include "shared/geometry_queries_math.h"
#include "shared/geometry_queries_device_layout.h"
#include "shared/geometry_queries_device_checks.h"

layout(local_size_x = kGeomGroupSize) in;  // checked against the pass declarations
layout(constant_id = 0) const uint kPass = kGeomLayoutPassQueries;

layout(std430, set = 0, binding = kGeomBindingGeometries) readonly buffer Geometries { GeomShape geometries[]; };
layout(std430, set = 0, binding = kGeomBindingPrevGeometries) readonly buffer PrevGeometries { GeomShape prevGeometries[]; };
layout(std430, set = 0, binding = kGeomBindingQueries) readonly buffer Queries { GeomQuery queries[]; };
layout(std430, set = 0, binding = kGeomBindingSlotRange) buffer SlotRange { uvec2 slotRange[]; };
// The tile list (BLOCKS), then the span table the families' records come from (BLOCKS, PLACE:
// geometry_queries_spans.h).
layout(std430, set = 0, binding = kGeomBindingTiles) buffer Tiles { uint tiles[]; };
// Two words per block of kGeomGroupSize queries: its slots (then its first slot), its invalid queries.
layout(std430, set = 0, binding = kGeomBindingGroupSums) buffer Scratch { uint scratch[]; };
layout(std430, set = 0, binding = kGeomBindingCounts) writeonly buffer Counts { GeomCounts counts; };
// The stage's other bindings, unused here (every shader of the stage declares the same layout).
layout(std430, set = 0, binding = kGeomBindingPoints) readonly buffer Points { vec4 points[]; };
layout(std430, set = 0, binding = kGeomBindingPrevPoints) readonly buffer PrevPoints { vec4 prevPoints[]; };
layout(std430, set = 0, binding = kGeomBindingGridSamples) readonly buffer GridSamples { float gridSamples[]; };
layout(std430, set = 0, binding = kGeomBindingState) readonly buffer State { vec4 state[]; };
layout(std430, set = 0, binding = kGeomBindingTileMasks) readonly buffer TileMasks { uint tileMasks[]; };
layout(std430, set = 0, binding = kGeomBindingElementsA) writeonly buffer ElementsA { GeomElement elementsA[]; };
layout(std430, set = 0, binding = kGeomBindingElementsB) writeonly buffer ElementsB { GeomElement elementsB[]; };
layout(std430, set = 0, binding = kGeomBindingRanges) writeonly buffer Ranges { uvec2 ranges[]; };
layout(std430, set = 0, binding = kGeomBindingCells) readonly buffer Cells { uint cells[]; };
layout(push_constant) uniform Push { GeomLayoutPush pc; };
#include "shared/geometry_queries_spans.h"

uint linearGroup() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

uint satAdd(uint a, uint b) { return min(a, kGeomDeviceSlotLimit) + min(b, kGeomDeviceSlotLimit) >= kGeomDeviceSlotLimit ? kGeomDeviceSlotLimit : a + b; }

// A previous pose: valid, of the same type, flags and range (its shape is not compared).
bool previousValid(uint i, GeomShape g) {
  GeomShape p = prevGeometries[i];
  return geomDeviceShapeValid(p, pc.pointCount, pc.gridSampleCount) && p.info == g.info;
}

// Query q's slot count; `bad` when any check fails (then 0 slots).
uint querySlots(uint q, out bool bad) {
  bad = true;
  GeomQuery query = queries[q];
  if (query.a >= pc.geometryCount || query.b >= pc.geometryCount) return 0u;
  if (query.method >= kGeomMethodCount) return 0u;
  if (query.method == kGeomMethodStatic && query.state != 0u) return 0u;
  GeomShape a = geometries[query.a];
  GeomShape b = geometries[query.b];
  if (!geomDeviceShapeValid(a, pc.pointCount, pc.gridSampleCount) ||
      !geomDeviceShapeValid(b, pc.pointCount, pc.gridSampleCount)) {
    return 0u;
  }
  uint lo = min(a.info.x, b.info.x);
  uint hi = max(a.info.x, b.info.x);
  if (!geomMethodSupported(lo, hi, query.method)) return 0u;
  if (((pc.families >> geomQueryFamily(a.info.x, b.info.x, query.method)) & 1u) == 0u) return 0u;
  uint n = geomSlotCount(a, b);
  if (query.method == kGeomMethodContinuous) {
    if (pc.previousPoints == 0u) return 0u;
    if (pc.moving != 0u && (!previousValid(query.a, a) || !previousValid(query.b, b))) return 0u;
    if (query.state > pc.stateCount || n > pc.stateCount - query.state) return 0u;
  }
  bad = false;
  return min(n, kGeomDeviceSlotLimit);
}

shared uint sScan[kGeomGroupSize];

// Inclusive prefix over the workgroup (Hillis-Steele in shared memory), saturating when `saturate`.
// Call from uniform control flow.
uint groupInclusiveScan(uint v, bool saturate) {
  uint lid = gl_LocalInvocationIndex;
  sScan[lid] = v;
  barrier();
  for (uint offset = 1u; offset < kGeomGroupSize; offset *= 2u) {
    uint other = lid >= offset ? sScan[lid - offset] : 0u;
    barrier();
    sScan[lid] = saturate ? satAdd(sScan[lid], other) : sScan[lid] + other;
    barrier();
  }
  uint result = sScan[lid];
  barrier();
  return result;
}

void queriesPass() {
  uint block = linearGroup();
  uint q = block * kGeomGroupSize + gl_LocalInvocationIndex;
  bool bad = false;
  uint n = q < pc.queryCount ? querySlots(q, bad) : 0u;
  uint inclusive = groupInclusiveScan(n, true);
  uint invalid = groupInclusiveScan(bad ? 1u : 0u, false);
  if (q < pc.queryCount) {
    uint exclusive = inclusive == kGeomDeviceSlotLimit ? kGeomDeviceSlotLimit : inclusive - n;
    slotRange[q] = uvec2(exclusive, n);
  }
  if (gl_LocalInvocationIndex == kGeomGroupSize - 1u && block < pc.blockCount) {
    scratch[2u * block] = inclusive;
    scratch[2u * block + 1u] = invalid;
  }
}

// Family f's span in the tiles buffer (geometry_queries_spans.h).
uint familySpanWord(uint f) {
  return min(pc.spanRecords + kGeomSpanRecordWords * kGeomFamilyCount + kGeomSpanWords * f, uint(tiles.length()) - 4u);
}

void blocksPass() {
  if (linearGroup() != 0u) return;  // uniform: one workgroup
  uint lid = gl_LocalInvocationIndex;
  uint per = (pc.blockCount + kGeomGroupSize - 1u) / kGeomGroupSize;
  uint begin = min(lid * per, pc.blockCount);
  uint end = min(begin + per, pc.blockCount);
  uint slots = 0u;
  uint invalid = 0u;
  for (uint g = begin; g < end; ++g) {
    slots = satAdd(slots, scratch[2u * g]);
    invalid += scratch[2u * g + 1u];
  }
  uint slotsInclusive = groupInclusiveScan(slots, true);
  uint invalidInclusive = groupInclusiveScan(invalid, false);
  uint run = slotsInclusive == kGeomDeviceSlotLimit && slots != 0u ? kGeomDeviceSlotLimit : slotsInclusive - slots;
  for (uint g = begin; g < end; ++g) {
    uint s = scratch[2u * g];
    scratch[2u * g] = run;
    run = satAdd(run, s);
  }
  for (uint i = lid; i < pc.tileCount; i += kGeomGroupSize) tiles[i] = i;
  if (pc.spanRecords != 0u && lid < kGeomFamilyCount) {  // each family's span empty until PLACE
    uint w = familySpanWord(lid);
    tiles[w] = 0u;
    tiles[w + 1u] = kGeomSpanNone;
    tiles[w + 2u] = 0u;
    tiles[w + 3u] = 0u;
  }
  if (lid == kGeomGroupSize - 1u) {
    counts.invalidQueries = invalidInclusive;
    counts.dispatch.w = slotsInclusive;
  }
}

shared uint sSpanFirst[kGeomFamilyCount];
shared uint sSpanEnd[kGeomFamilyCount];

// A query with slots widens its family's span to them: the workgroup's min first and max end per
// family in shared memory, then one global atomic per family and workgroup (not one per query on a
// single address).
void placePass() {
  uint lid = gl_LocalInvocationIndex;
  uint q = linearGroup() * kGeomGroupSize + lid;
  if (lid < kGeomFamilyCount) {
    sSpanFirst[lid] = kGeomSpanNone;
    sSpanEnd[lid] = 0u;
  }
  barrier();
  if (q < pc.queryCount) {
    uint base = scratch[2u * min(q / kGeomGroupSize, max(pc.blockCount, 1u) - 1u)];
    uvec2 r = slotRange[q];
    uint first = satAdd(base, r.x);
    uint end = satAdd(first, r.y);
    if (end > pc.maxSlots) {
      first = min(first, pc.maxSlots);
      end = first;
    }
    slotRange[q] = uvec2(first, end);
    if (end > first) {
      GeomQuery query = queries[q];
      uint ta = geometries[min(query.a, max(pc.geometryCount, 1u) - 1u)].info.x;
      uint tb = geometries[min(query.b, max(pc.geometryCount, 1u) - 1u)].info.x;
      uint f = min(geomQueryFamily(ta, tb, query.method), kGeomFamilyCount - 1u);
      atomicMin(sSpanFirst[f], first);
      atomicMax(sSpanEnd[f], end);
    }
  }
  barrier();
  if (pc.spanRecords != 0u && lid < kGeomFamilyCount && sSpanEnd[lid] > 0u) {
    uint w = familySpanWord(lid);
    atomicMin(tiles[w + 1u], sSpanFirst[lid]);
    atomicMax(tiles[w + 2u], sSpanEnd[lid]);
  }
}

void main() {
  if (kPass == kGeomLayoutPassQueries) {
    queriesPass();
  } else if (kPass == kGeomLayoutPassBlocks) {
    blocksPass();
  } else {
    placePass();
  }
}
