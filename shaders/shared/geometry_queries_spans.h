// Span dispatch of the geometry query stage's pair families (issues 16, 17): a family's COUNT and
// WRITE dispatched indirectly over the tiles of slot SPANS the device wrote, not over the tiles the
// host sized for the worst case. Written once for the host (src/vulkan/geometry_queries.cpp), the
// passes that write the spans and their dispatch arguments (shaders/geometry_queries_spans.comp, the
// device layout's BLOCKS and PLACE) and the family shaders (geometry_queries_family.h). GLSL and C++.
//
// The stage's tiles buffer (binding kGeomBindingTiles) holds, after its tile list (the stage's tiles
// of maxSlots, rounded up to 4 entries: GeomStagePush::spanRecords is where they end, 0 when a pass
// does not use spans):
//   a RECORD per family (kGeomSpanRecordWords words at spanRecords + kGeomSpanRecordWords * family):
//     x, y, z  the VkDispatchIndirectCommand of the family's COUNT and WRITE (x <= the device's
//              maxComputeWorkGroupCount[0], x * y >= groups),
//     groups   the workgroups that have a tile (the others of the last row return at once),
//     first, count  the family's spans: entries [first, first + count) of the span table;
//   the SPAN table (kGeomSpanWords words per span, after the records): span k = (its first workgroup,
//     first slot, end slot, 0). The first workgroups ascend with k (a span has the tiles from its
//     first slot's to its last slot's), so a workgroup g finds its span by binary search: the last k
//     with first workgroup <= g; its tile is (first slot / kGeomGroupSize) + g - that first workgroup,
//     and it evaluates only the slots of its tile inside the span (a tile two spans share is visited
//     once per span, each workgroup with its own slots: no slot twice).
// Who writes them, in a fixed number of dispatches per record:
//   mesh-mesh and mesh CCD (host layout): the SPANS pass of geometry_queries_spans.comp after the
//     candidate passes (one workgroup), whose table holds both families' pairs: each pair's span =
//     its query's slots holding a candidate pair, [first, first + min(its candidates, its slots));
//     the empty slots past them are never dispatched (they hold no contact: the bound of
//     geomMeshMeshSlot and geomMeshCcdSlot). The mesh-mesh pairs' spans come first
//     (kGeomFamilyCount + their rank among the static pairs, in table order), then the continuous
//     pairs' (kGeomFamilyCount + the static pairs + their rank): each family's record lists only its
//     own pairs.
//   device-resident batches: BLOCKS sets span f = (0, ~0, 0, 0) for every family f, PLACE takes the
//     min of the firsts and the max of the ends of family f's queries with slots (per workgroup in
//     shared memory, then one atomic per family and workgroup: the same result in any order), then the FAMILIES pass (one workgroup) writes each family's record (span
//     f, first workgroup 0): a family runs over the tiles from its first slot to its last, not over
//     every tile of maxSlots.
// Results are unchanged: a tile no span covers has no slot that can hit (its mask stays 0, as the
// host's fill left it), and every slot a span covers is evaluated as before.
#ifndef VKC_SHARED_GEOMETRY_QUERIES_SPANS_H
#define VKC_SHARED_GEOMETRY_QUERIES_SPANS_H
#include "geometry_queries.h"
#include "geometry_queries_bindings.h"
#include "geometry_queries_mesh_pairs.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kGeomSpanRecordWords, 8u);
VKC_CONSTANT(uint, kGeomSpanWords, 4u);
VKC_CONSTANT(uint, kGeomSpanNone, 0xFFFFFFFFu);  // an empty device family span's first slot (before PLACE)

// Passes of shaders/geometry_queries_spans.comp (specialization constant 0).
VKC_CONSTANT(uint, kGeomSpansPassMeshPairs, 0u);
VKC_CONSTANT(uint, kGeomSpansPassFamilies, 1u);

// The workgroups of span [lo, hi): its tiles, from lo's to (hi - 1)'s.
VKC_FN uint geomSpanGroups(uint lo, uint hi) {
  return hi > lo ? (hi - 1u) / kGeomGroupSize - lo / kGeomGroupSize + 1u : 0u;
}

VKC_NAMESPACE_END

#ifdef __cplusplus
#include "pass_decl.h"
namespace vkc::gpu {
// The words of the tiles buffer after its tile list: the records, then spans (the device families'
// and one per mesh pair, at most one per query).
inline constexpr uint64_t geomSpanTailWords(uint64_t maxQueries) {
  return uint64_t{kGeomSpanRecordWords} * kGeomFamilyCount + uint64_t{kGeomSpanWords} * (kGeomFamilyCount + maxQueries);
}
// clang-format off
// Tokens: geometries, prevGeometries, points, prevPoints, gridSamples, state, queries, slotRange, tiles,
// tileMasks, groupSums, elementsA, elementsB, ranges, counts, cells, then the mesh pairs' treeNodes,
// treeBoxes, treeCells, meshPairs, xCells, candidates.
inline constexpr PassDecl kGeomSpansPasses[] = {
  passDecl("vkc.geometry_queries.spans.mesh_pairs", kGeomSpansPassMeshPairs, kGeomGroupSize, kGeomMeshPairBindingCount, "R - - - - - R R W - - - - - - -  - - - R R -"),
  passDecl("vkc.geometry_queries.spans.families",   kGeomSpansPassFamilies,  kGeomGroupSize, kGeomMeshPairBindingCount, "- - - - - - - - RW - - - - - - -  - - - - - -"),
};
// clang-format on
inline constexpr StageDecl kGeomSpansStage{"geometry_queries_spans", kGeomMeshPairBindingCount, kGeomSpansPasses};
static_assert(validStage(kGeomSpansStage));
}  // namespace vkc::gpu
#else
// GLSL: workgroup g of family `family`'s span dispatch: its tile and the slots [lo, hi) it evaluates
// (false: no tile). The includer declares the tiles buffer (tiles[]) and the push constants (pc).
bool geomSpanTile(uint g, uint family, out uint tile, out uint lo, out uint hi) {
  tile = 0u;
  lo = 0u;
  hi = 0u;
  uint n = uint(tiles.length());
  uint rec = pc.spanRecords + kGeomSpanRecordWords * family;
  uint groups = tiles[min(rec + 3u, n - 1u)];
  uint first = tiles[min(rec + 4u, n - 1u)];
  uint count = tiles[min(rec + 5u, n - 1u)];
  if (g >= groups || count == 0u) return false;
  uint spans = pc.spanRecords + kGeomSpanRecordWords * kGeomFamilyCount;
  uint a = 0u, b = count;
  for (uint step = 0u; step < 32u && a < b; ++step) {
    uint mid = (a + b) / 2u;
    if (tiles[min(spans + kGeomSpanWords * (first + mid), n - 1u)] <= g) a = mid + 1u; else b = mid;
  }
  uint s = spans + kGeomSpanWords * (first + (a == 0u ? 0u : a - 1u));
  uint base = tiles[min(s, n - 1u)];
  lo = tiles[min(s + 1u, n - 1u)];
  hi = tiles[min(s + 2u, n - 1u)];
  tile = lo / kGeomGroupSize + (g - min(base, g));
  return hi > lo;
}
#endif

#endif  // VKC_SHARED_GEOMETRY_QUERIES_SPANS_H
