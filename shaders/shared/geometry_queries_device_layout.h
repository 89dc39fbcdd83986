// The geometry query stage's device-resident batches (include/vkcollide/geometry_queries.h,
// GeometryQueryRecordInfo::geometryBuffer / queryBuffer; src/vulkan/geometry_queries_device.cpp):
// the geometries and queries are in the host's device buffers, which the host cannot read, so the
// slot layout is computed on the device by shaders/geometry_queries_device_layout.comp in three
// dependent dispatches before the usual COUNT, SCAN, WRITE passes (geometry_queries_bindings.h):
//   LAYOUT  one invocation per query: the query checked (geomDeviceQuerySlots: indices, types,
//           method, the pair, the geometries' values, point and sample ranges, state entries; a
//           query that fails gets 0 slots and counts as invalid), its slot count n, and within its
//           block of kGeomGroupSize queries the exclusive prefix of the n (shared-memory scan,
//           saturating at kGeomDeviceSlotLimit): slotRange[q] = {prefix in the block, n}; the block's
//           slot sum and invalid count into the scratch (bound at the groupSums binding).
//   BLOCKS  one workgroup: the exclusive prefix over the blocks' slot sums (saturating); the counts'
//           invalidQueries and slotOverflow (GeomCounts::invalidQueries, dispatch.w); the tiles buffer made the
//           identity; each family's span (geometry_queries_spans.h) empty.
//   PLACE   one invocation per query: slotRange[q] = {block base + prefix, + n}; a query whose slots
//           end past maxSlots is dropped whole (an empty range at min(first, maxSlots)): the firsts
//           still ascend, as the binary search of queryOfSlot needs. A query with slots widens its
//           family's span to them (the min of the firsts and the max of the ends: per workgroup in
//           shared memory, then one atomic per family and workgroup).
// Then the FAMILIES pass (shaders/geometry_queries_spans.comp) writes each family's dispatch record
// from its span: each family's COUNT and WRITE are indirect, over the tiles from its first slot to
// its last (a batch of one family does not pay for the others' tiles; families whose queries
// interleave run over the tiles between).
// Slots are consecutive in query order with no gaps: a tile may hold several families, and each
// family's COUNT and WRITE run over the tiles of its span, evaluating only their own queries' slots
// (the check in evaluateSlot). The contacts are those of the host's layout, in the same order.
#ifndef VKC_SHARED_GEOMETRY_QUERIES_DEVICE_LAYOUT_H
#define VKC_SHARED_GEOMETRY_QUERIES_DEVICE_LAYOUT_H
#include "geometry_queries_bindings.h"

VKC_NAMESPACE_BEGIN

// The pass numbers (specialization constant 0 of geometry_queries_device_layout.comp).
VKC_CONSTANT(uint, kGeomLayoutPassQueries, 0u);
VKC_CONSTANT(uint, kGeomLayoutPassBlocks, 1u);
VKC_CONSTANT(uint, kGeomLayoutPassPlace, 2u);

// Slot sums saturate here (two saturated sums add without wrapping): a batch needing more slots
// overflows, whatever the stage's maxSlots.
VKC_CONSTANT(uint, kGeomDeviceSlotLimit, 0x7FFFFFFFu);

// The pair families a device-resident batch may hold (a bit per family, kGeomFamily*): the families
// without mesh pairs' data (the mesh families and the mesh pairs of the convex and implicit ones are
// refused: their cells and vertices are validated on the host).
VKC_CONSTANT(uint, kGeomDeviceFamilies, 31u);

// Push constants of the layout passes (64 bytes, as GeomStagePush).
struct GeomLayoutPush {
  uint queryCount;
  uint geometryCount;
  uint pointCount;
  uint gridSampleCount;
  uint stateCount;
  uint maxSlots;        // the stage's slots: a query ending past them is dropped
  uint tileCount;       // tiles of maxSlots (the identity written into the tiles buffer)
  uint blockCount;      // ceil(queryCount / kGeomGroupSize)
  uint families;        // the pair families the record dispatches (a bit per kGeomFamily*)
  uint moving;          // 1: previous poses in prevGeometries
  uint previousPoints;  // 1: the points' previous positions are bound (continuous queries need them)
  uint spanRecords;     // the span records' entry in the tiles buffer (geometry_queries_spans.h)
  uint pad1;
  uint pad2;
  uint pad3;
  uint pad4;
};
VKC_CHECK_LAYOUT(GeomLayoutPush, 64);

VKC_NAMESPACE_END

#ifdef __cplusplus
#include "pass_decl.h"
namespace vkc::gpu {
// clang-format off
// Tokens: geometries, prevGeometries, points, prevPoints, gridSamples, state, queries, slotRange, tiles,
// tileMasks, groupSums (the layout's scratch), elementsA, elementsB, ranges, counts, cells.
inline constexpr PassDecl kGeomLayoutPasses[] = {
  passDecl("vkc.geometry_queries.layout.queries", kGeomLayoutPassQueries, kGeomGroupSize, kGeomBindingCount, "R R - - - - R W - - W - - - - -"),
  passDecl("vkc.geometry_queries.layout.blocks",  kGeomLayoutPassBlocks,  kGeomGroupSize, kGeomBindingCount, "- - - - - - - - W - RW - - - W -"),
  passDecl("vkc.geometry_queries.layout.place",   kGeomLayoutPassPlace,   kGeomGroupSize, kGeomBindingCount, "R - - - - - R RW RW - R - - - - -"),
};
// clang-format on
inline constexpr StageDecl kGeomLayoutStage{"geometry_queries_device_layout", kGeomBindingCount, kGeomLayoutPasses};
static_assert(validStage(kGeomLayoutStage));
}  // namespace vkc::gpu
#endif

#endif  // VKC_SHARED_GEOMETRY_QUERIES_DEVICE_LAYOUT_H
