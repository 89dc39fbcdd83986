// The mesh-mesh queries' candidate pairs of cells on the Vulkan stage (issue 17), written once for the
// host (src/vulkan/geometry_queries.cpp), the candidate passes (shaders/geometry_queries_mesh_pairs.comp)
// and the mesh-mesh family (shaders/geometry_queries_mesh_mesh.comp). GLSL and C++ (common.h).
//
// A record with static mesh-mesh queries the stage runs (geomMeshMeshOnDevice) or continuous mesh
// queries (the mesh CCD family: line-line, point set vs surface mesh, geometry_queries_mesh_ccd_pairs.h:
// X's cells a point set's points, outside the tree; the tree then built over swept boxes, with the
// previous points; the candidate test the CPU's swept-box test) builds ONE tree over
// the cells of every mesh of those queries (the BVH stage's passes, src/vulkan/bvh_stage.h: four
// vertex numbers per cell, a segment's or triangle's padded by repeating its first vertex; each mesh
// once, its cells consecutive from its primitive base), then, before the pair families' COUNT level:
//   GATHER  one invocation per tree cell: its four vertex numbers in the points buffer (the cell's
//           entries clamped to its mesh's vertices, then to the points: the vertices the family reads).
//   the BVH build (init, boxes, Morton codes, radix sort, hierarchy, climb, finalize).
//   COUNT   one invocation per cell of a query's first mesh X (all queries' X cells, concatenated:
//           row 0's w is the query's first X entry): the tree walked with the cell's reach
//           (geomMeshMeshReach) keeping the leaves of Y's cells whose corners' box overlaps it (the
//           CPU driver's candidate test; a line mesh against itself keeps Y's cells after X's);
//           their number into xCells[entry].
//   SUMS, BLOCKS, PREFIX  xCells made their exclusive prefix (xCells[T] = the sum, T the X cells of
//           all queries) through per-block sums (xCells[T + 1 + b], blocks of kGeomMeshPairBlock):
//           llvmpipe stops an invocation after 65 535 loop iterations in all (its loops share one
//           counter), so no invocation loops over all X cells.
//   WRITE   per X cell again: the walk's cells written as (cell of X, cell of Y) at the query's slot
//           first + (xCells[entry] - xCells[first entry]) + k while inside the query's slots, then
//           sorted by Y's cell (heap sort in place): the query's candidates in the CPU's order, by
//           cell of X, then cell of Y. A query's first X cell adds its candidates past its slots to
//           GeomCounts::candidatesMissing (reset by BLOCKS).
// A mesh-mesh query's slots (src/scene/geometry_queries_validate.cpp, geometrySlotLayout) are its
// candidate pairs: min(nX * nY, max(maxCandidates, nX)) of them (maxCandidates 0: nX * nY); slot k
// is candidate k, no contact past the query's candidates. Loops: every walk is bounded (a node read
// at most once, 2 * cells + 2 steps, a stack of kBvhMaxDepth + 2). On llvmpipe an invocation's loops
// share 65 535 iterations: a cell of X whose walk, candidates and sort take more (a cell overlapping
// tens of thousands of cells of Y) is cut short there (not on GPUs).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_PAIRS_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_PAIRS_H
#include "geometry_queries_bindings.h"

VKC_NAMESPACE_BEGIN

// Bindings of set 0 after the stage's (geometry_queries_bindings.h), in the candidate passes and the
// mesh-mesh family.
VKC_CONSTANT(uint, kGeomBindingTreeNodes, 16u);   // BvhNode[]: the tree over the mesh-mesh queries' cells
VKC_CONSTANT(uint, kGeomBindingTreeBoxes, 17u);   // Aabb[treeCells]: each tree cell's box
VKC_CONSTANT(uint, kGeomBindingTreeCells, 18u);   // uint[4 * treeCells]: GATHER's vertex numbers (the tree's indices)
VKC_CONSTANT(uint, kGeomBindingMeshPairs, 19u);   // uvec4[]: the queries' rows, then the meshes' (below)
VKC_CONSTANT(uint, kGeomBindingXCells, 20u);      // uint[T + 1 + blocks]: per X cell its candidates, then their prefix
VKC_CONSTANT(uint, kGeomBindingCandidates, 21u);  // uvec2[slotCount]: (cell of X, cell of Y) per slot
VKC_CONSTANT(uint, kGeomMeshPairBindingCount, 22u);

// Passes of shaders/geometry_queries_mesh_pairs.comp (specialization constant 0).
VKC_CONSTANT(uint, kGeomMeshPairPassGather, 0u);
VKC_CONSTANT(uint, kGeomMeshPairPassCount, 1u);
VKC_CONSTANT(uint, kGeomMeshPairPassSums, 2u);
VKC_CONSTANT(uint, kGeomMeshPairPassBlocks, 3u);
VKC_CONSTANT(uint, kGeomMeshPairPassPrefix, 4u);
VKC_CONSTANT(uint, kGeomMeshPairPassWrite, 5u);
VKC_CONSTANT(uint, kGeomMeshPairBlock, 1024u);  // X cells per invocation of SUMS and PREFIX

VKC_CONSTANT(uint, kGeomMeshPairChunk, 32768u);  // each level's bound of the nested long loops

// The mesh pairs table (uvec4 rows; counts in the push constants: meshPairCount, meshCount):
//   rows 2j, 2j + 1 (j < meshPairCount, in query order):
//     (query index, X's geometry index, Y's geometry index, X's first entry in xCells),
//     (X's first tree cell, Y's first tree cell, X's cells, Y's cells)
//   row 2 * meshPairCount + m (m < meshCount): (geometry index, first tree cell, cells, 0)
VKC_CONSTANT(uint, kGeomMeshPairRows, 2u);

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_PAIRS_H
