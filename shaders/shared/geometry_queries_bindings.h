// The Vulkan stage of the geometry queries (shaders/geometry_queries*.comp,
// src/vulkan/geometry_queries.cpp): group size, passes, bindings and push constants, written once for
// the shaders and the host. The layouts it binds (GeomShape, GeomQuery, GeomElement) are in
// geometry_queries.h; the per-slot arithmetic in geometry_queries_math.h and geometry_queries_implicit.h.
//
// Slots and tiles. A query has geomSlotCount slots (1 for most primitive pairs, a point count for a
// point set, ...). The host lays the slots of a batch out in query order, each query's slots
// consecutive, slotRange[q] = {first, end}; a run of queries of one pair family (geometry_queries.h)
// shares tiles of kGeomGroupSize slots, and where the family changes the next query starts on a new
// tile (the slots in between belong to no query and never hit). So every tile holds one family, and
// the host lists each family's tiles (the tiles buffer, family by family; tileBase in the push
// constants). Slots in query order keep the CPU twin's (query, slot) order of the contacts.
//
// A record: three dependent dispatches whatever the numbers of queries, slots and families:
//   COUNT  (a dispatch per family present, over its tiles, in that family's shader) one invocation per
//          slot: its query by binary search in slotRange, the slot evaluated (geomQuerySlot), a hit
//          set as bit (s mod 64) of its tile's mask (atomicOr into the masks, which the host zeroes
//          with vkCmdFillBuffer before the passes). No workgroup barrier: llvmpipe compiles a shader
//          with barriers into coroutines, whose frame building did not finish on the pair code. The
//          families' dispatches write disjoint tiles: no barrier between them.
//   SCAN   (shaders/geometry_queries.comp) one workgroup: the tiles' hit counts (popcounts of the
//          masks) made an exclusive prefix, groupSums (each invocation sums a run of consecutive
//          tiles, then a shared-memory scan over the runs); the counts: contacts, written =
//          min(contacts, capacity), overflow, and a VkDispatchIndirectCommand
//          (ceil(written / indirectGroupSize), 1, 1) for the host's next pass.
//   WRITE  (a dispatch per family, over its tiles, and the RANGES dispatch of geometry_queries.comp;
//          disjoint writes, no barrier between them) a hit slot s is evaluated again and its elements
//          written at E(s) = groupSums[tile] + the hits before s in the tile's mask when E(s) <
//          capacity; a continuous slot's new persistent state is stored (the count pass only reads
//          the state). RANGES: query q's range is {E(first_q), E(end_q) - E(first_q)} (E(slotCount) =
//          contacts).
// The atomics only set bits: the order of the contacts is the slots'. A batch with static mesh-mesh
// queries records their candidate passes and the build of their tree before the COUNT level
// (geometry_queries_mesh_pairs.h): a fixed number of dispatches more.
#ifndef VKC_SHARED_GEOMETRY_QUERIES_BINDINGS_H
#define VKC_SHARED_GEOMETRY_QUERIES_BINDINGS_H
#include "common.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kGeomGroupSize, 64u);

// Passes of a family shader (geometry_queries_<family>.comp, specialization constant 0).
VKC_CONSTANT(uint, kGeomPassCount, 0u);
VKC_CONSTANT(uint, kGeomPassWrite, 1u);

// Bindings of set 0 (every shader of the stage has the same layout).
VKC_CONSTANT(uint, kGeomBindingGeometries, 0u);      // GeomShape[geometryCount]
VKC_CONSTANT(uint, kGeomBindingPrevGeometries, 1u);  // GeomShape[geometryCount]: poses at the step's start (moving)
VKC_CONSTANT(uint, kGeomBindingPoints, 2u);          // vec4[pointCount]: the point sets' points (xyz)
VKC_CONSTANT(uint, kGeomBindingPrevPoints, 3u);      // vec4[pointCount]: the points' previous positions (continuous)
VKC_CONSTANT(uint, kGeomBindingGridSamples, 4u);     // float[gridSampleCount]: the implicit geometries' samples
VKC_CONSTANT(uint, kGeomBindingState, 5u);           // vec4[stateCount]: continuous queries' persistent state
VKC_CONSTANT(uint, kGeomBindingQueries, 6u);         // GeomQuery[queryCount]
VKC_CONSTANT(uint, kGeomBindingSlotRange, 7u);       // uvec2[queryCount]: first slot, end slot
VKC_CONSTANT(uint, kGeomBindingTiles, 8u);           // uint[groupCount]: the tiles, family by family
VKC_CONSTANT(uint, kGeomBindingTileMasks, 9u);       // uint[2 * groupCount]: the hit bits of each tile's 64 slots
VKC_CONSTANT(uint, kGeomBindingGroupSums, 10u);      // uint[groupCount]: the contacts of the tiles before each tile
VKC_CONSTANT(uint, kGeomBindingElementsA, 11u);      // GeomElement[capacity]
VKC_CONSTANT(uint, kGeomBindingElementsB, 12u);      // GeomElement[capacity]
VKC_CONSTANT(uint, kGeomBindingRanges, 13u);         // uvec2[queryCount]: first, count
VKC_CONSTANT(uint, kGeomBindingCounts, 14u);         // GeomCounts
VKC_CONSTANT(uint, kGeomBindingCells, 15u);          // uint[cellCount]: the meshes' cells (vertex numbers)
VKC_CONSTANT(uint, kGeomBindingCount, 16u);

// What the SCAN pass writes (48 bytes). dispatch is a VkDispatchIndirectCommand at byte offset 16.
struct GeomCounts {
  uint contacts;  // contacts found
  uint written;   // min(contacts, capacity)
  uint overflow;  // 1 when contacts > capacity
  uint candidatesMissing;  // mesh-mesh candidate pairs past their queries' slots (geometry_queries_mesh_pairs.h)
  uvec4 dispatch;  // x = ceil(written / indirectGroupSize), y = z = 1; w: a device-resident batch's slots, else 0
  uint invalidQueries;  // a device-resident batch: its invalid queries (geometry_queries_device_layout.h); else 0
  uint pad0;
  uint pad1;
  uint pad2;
};
VKC_CHECK_LAYOUT(GeomCounts, 48);
VKC_CHECK_OFFSET(GeomCounts, dispatch, 16);

// Push constants; every index read from a buffer is clamped to these sizes.
struct GeomStagePush {
  uint queryCount;
  uint geometryCount;
  uint pointCount;
  uint slotCount;          // slots of the layout, the gaps between families included
  uint groupCount;         // tiles: ceil(slotCount / kGeomGroupSize), at least 1
  uint capacity;           // contacts the element buffers hold
  uint indirectGroupSize;  // GeomCounts::dispatch's workgroup size (>= 1)
  uint tileBase;           // COUNT, WRITE: this dispatch's first entry in the tiles buffer
  uint tileCount;          // COUNT, WRITE: this dispatch's tiles
  uint gridSampleCount;
  uint stateCount;
  uint moving;             // 1: prevGeometries holds the poses at the step's start; 0: the geometries are static
  uint cellCount;          // entries of the cells buffer
  uint meshPairCount;  // mesh-mesh queries with candidates (geometry_queries_mesh_pairs.h)
  uint meshCount;      // their meshes (each once in the tree)
  uint treeCellCount;  // the tree's cells: the meshes' cells
  uint deviceLayout;   // 1: a device-resident batch (geometry_queries_device_layout.h): SCAN keeps invalidQueries, dispatch.w
  uint spanRecords;    // COUNT, WRITE: 0, or span dispatch (geometry_queries_spans.h): the records' entry in the tiles buffer
  uint maxGroupsX;     // the spans passes: the device's maxComputeWorkGroupCount[0]
  uint pad2;
};
VKC_CHECK_LAYOUT(GeomStagePush, 80);

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_BINDINGS_H
