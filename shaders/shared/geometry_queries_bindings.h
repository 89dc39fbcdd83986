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

// Passes of a family shader (geometry_queries_<family>.comp, specialization constant 0): COUNT and
// WRITE over slots, and the primitive-pair passes over queries (below).
VKC_CONSTANT(uint, kGeomPassCount, 0u);
VKC_CONSTANT(uint, kGeomPassWrite, 1u);
VKC_CONSTANT(uint, kGeomPassQueryCount, 2u);
VKC_CONSTANT(uint, kGeomPassQueryWrite, 3u);

// Passes of shaders/geometry_queries.comp (specialization constant 0): SCAN over the tiles, and the
// primitive-pair batches' two passes between their QUERY COUNT and QUERY WRITE levels.
VKC_CONSTANT(uint, kGeomScanPassTiles, 0u);
VKC_CONSTANT(uint, kGeomScanPassBlocks, 1u);
VKC_CONSTANT(uint, kGeomScanPassLocal, 2u);

// Device-resident batches of primitive pairs (GeometryQueryRecordInfo::devicePrimitivePairs): no slot
// layout, one invocation per query, three dependent dispatches:
//   QUERY COUNT  (a dispatch per family asked for: basic, manifold, convex; one invocation per query)
//                the query routed: its pair's family when that family is dispatched and the query
//                is a static pair of two primitives (sphere, capsule, cylinder, oriented box, plane)
//                with valid indices, else the lowest family dispatched (the query is invalid). That
//                family alone writes the query's entry (tileMasks[q], geomPrimitiveEntry:
//                its family, its contacts) after checking its geometries' values (invalid: 0
//                contacts) and evaluating its slots, and adds the contacts and the invalid query to
//                its block's sums (groupSums[2 b], [2 b + 1]: atomics, zeroed by a fill before).
//   BLOCKS       (geometry_queries.comp, one workgroup) the blocks' contacts made an exclusive prefix
//                in place; the counts (contacts, written, overflow, the indirect dispatch,
//                invalidQueries; slots 0).
//   LOCAL        (geometry_queries.comp, a workgroup per block, in the same level as BLOCKS: it
//                touches only the entries) each entry's low bits set to the contacts of the block's
//                queries before it (a shared-memory scan over the block's chunks).
//   QUERY WRITE  (a dispatch per family) the family that wrote the entry writes the query's range
//                {block base + its prefix, its contacts} and, when it has contacts, evaluates its
//                slots again and writes them below the capacity (at most the contacts counted).
// A block is kGeomGroupSize * queryChunks queries (GeomStagePush::queryChunks = ceil(sqrt(queries /
// kGeomGroupSize^2)): LOCAL's workgroups walk queryChunks chunks each and BLOCKS's invocations about as
// many blocks each, the two serial chains balanced; 50 at 10M queries); an entry holds the family
// (bits 28-30), the contacts (bits 24-27, at most kGeomPrimitiveMaxSlots) and, after LOCAL, the
// prefix (bits 0-23).
VKC_CONSTANT(uint, kGeomPrimitiveMaxSlots, 8u);

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
  uint queryChunks;    // primitive pairs: chunks of kGeomGroupSize queries per block (>= 1)
  uint families;       // primitive pairs: the families dispatched (a bit per kGeomFamily*)
  uint blockCount;     // primitive pairs: ceil(queryCount / (kGeomGroupSize * queryChunks))
  uint pad2;
  uint pad3;
};
VKC_CHECK_LAYOUT(GeomStagePush, 96);

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_BINDINGS_H
