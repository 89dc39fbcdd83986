// GLSL only: what every shader of the geometry query stage declares (shaders/geometry_queries.comp
// and shaders/geometry_queries_<family>.comp): the bindings, push constants and the helpers of the
// slot layout (shared/geometry_queries_bindings.h describes the passes). Every index read from a
// buffer is clamped to the table it indexes (the push constants hold the sizes); no element is
// written at or past the capacity.
#ifndef VKC_SHARED_GEOMETRY_QUERIES_STAGE_H
#define VKC_SHARED_GEOMETRY_QUERIES_STAGE_H
#ifdef __cplusplus
#error "geometry_queries_stage.h is GLSL only"
#endif
#include "geometry_queries.h"
#include "geometry_queries_bindings.h"

layout(local_size_x = kGeomGroupSize) in;  // checked against the pass declarations (tests/spirv/pass_decl_test.cpp)

layout(std430, set = 0, binding = kGeomBindingGeometries) readonly buffer Geometries { GeomShape geometries[]; };
layout(std430, set = 0, binding = kGeomBindingPrevGeometries) readonly buffer PrevGeometries { GeomShape prevGeometries[]; };
layout(std430, set = 0, binding = kGeomBindingPoints) readonly buffer Points { vec4 points[]; };
layout(std430, set = 0, binding = kGeomBindingPrevPoints) readonly buffer PrevPoints { vec4 prevPoints[]; };
layout(std430, set = 0, binding = kGeomBindingGridSamples) readonly buffer GridSamples { float gridSamples[]; };
// Only the continuous family writes the state: readonly elsewhere (the synchronization validation
// layer sees a module's every access; a store even behind a false branch would count).
#if defined(VKC_GEOM_FAMILY) && VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_CONTINUOUS
layout(std430, set = 0, binding = kGeomBindingState) buffer State { vec4 state[]; };
#else
layout(std430, set = 0, binding = kGeomBindingState) readonly buffer State { vec4 state[]; };
#endif
layout(std430, set = 0, binding = kGeomBindingQueries) readonly buffer Queries { GeomQuery queries[]; };
layout(std430, set = 0, binding = kGeomBindingSlotRange) readonly buffer SlotRange { uvec2 slotRange[]; };
// The spans passes (VKC_GEOM_WRITE_TILES) write the span records after the tile list (geometry_queries_spans.h).
#ifdef VKC_GEOM_WRITE_TILES
layout(std430, set = 0, binding = kGeomBindingTiles) buffer Tiles { uint tiles[]; };
#else
layout(std430, set = 0, binding = kGeomBindingTiles) readonly buffer Tiles { uint tiles[]; };
#endif
// The RANGES shader (VKC_GEOM_READONLY_SCAN) only reads what the COUNT and SCAN passes wrote.
#ifdef VKC_GEOM_READONLY_SCAN
#define VKC_GEOM_SCAN_ACCESS readonly
#else
#define VKC_GEOM_SCAN_ACCESS
#endif
layout(std430, set = 0, binding = kGeomBindingTileMasks) VKC_GEOM_SCAN_ACCESS buffer TileMasks { uint tileMasks[]; };
layout(std430, set = 0, binding = kGeomBindingGroupSums) VKC_GEOM_SCAN_ACCESS buffer GroupSums { uint groupSums[]; };
layout(std430, set = 0, binding = kGeomBindingElementsA) writeonly buffer ElementsA { GeomElement elementsA[]; };
layout(std430, set = 0, binding = kGeomBindingElementsB) writeonly buffer ElementsB { GeomElement elementsB[]; };
layout(std430, set = 0, binding = kGeomBindingRanges) writeonly buffer Ranges { uvec2 ranges[]; };
layout(std430, set = 0, binding = kGeomBindingCounts) VKC_GEOM_SCAN_ACCESS buffer Counts { GeomCounts counts; };
layout(std430, set = 0, binding = kGeomBindingCells) readonly buffer Cells { uint cells[]; };
layout(push_constant) uniform Push { GeomStagePush pc; };

uint clampIndex(uint i, uint count) { return min(i, max(count, 1u) - 1u); }
uint linearGroup() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// The query whose slots hold s (or whose end s follows, in a gap): the last q with slotRange[q].x <=
// s (the firsts ascend, slotRange[0].x = 0).
uint queryOfSlot(uint s) {
  uint lo = 0u, hi = pc.queryCount;
  for (uint step = 0u; step < 32u && lo < hi; ++step) {
    uint mid = (lo + hi) / 2u;
    if (slotRange[mid].x <= s) lo = mid + 1u; else hi = mid;
  }
  return clampIndex(lo == 0u ? 0u : lo - 1u, pc.queryCount);
}

// The hits of tile t (the popcount of its mask).
uint tileHits(uint t) {
  uint i = 2u * clampIndex(t, pc.groupCount);
  return bitCount(tileMasks[i]) + bitCount(tileMasks[i + 1u]);
}

// Whether slot s hit (its bit in its tile's mask).
bool slotHit(uint s) {
  uint i = 2u * clampIndex(s / kGeomGroupSize, pc.groupCount) + ((s % kGeomGroupSize) >> 5u);
  return ((tileMasks[i] >> (s & 31u)) & 1u) != 0u;
}

// The position of slot s's contact in the output (the contacts of the slots before s); E(slotCount) =
// contacts. After the SCAN pass.
uint contactsBefore(uint s) {
  if (s >= pc.slotCount) return counts.contacts;
  uint t = clampIndex(s / kGeomGroupSize, pc.groupCount);
  uint lane = s % kGeomGroupSize;
  uint low = tileMasks[2u * t];
  uint before = lane < 32u ? bitCount(low & ((1u << lane) - 1u))
                           : bitCount(low) + bitCount(tileMasks[2u * t + 1u] & ((1u << (lane - 32u)) - 1u));
  return groupSums[t] + uint(before);
}

// A primitive-pair batch's entry of a query (geometry_queries_bindings.h, in tileMasks[q]): the family
// that wrote it (bits 28-30), its contacts (bits 24-27) and, after the LOCAL pass, the contacts of
// its block's queries before it (bits 0-23).
uint geomPrimitiveEntry(uint family, uint contacts) { return (family << 28u) | (contacts << 24u); }
uint geomPrimitiveEntryFamily(uint entry) { return (entry >> 28u) & 7u; }
uint geomPrimitiveEntryContacts(uint entry) { return (entry >> 24u) & 15u; }
uint geomPrimitiveEntryPrefix(uint entry) { return entry & 0xFFFFFFu; }

#endif  // VKC_SHARED_GEOMETRY_QUERIES_STAGE_H
