// The passes of the geometry query stage (shaders/geometry_queries*.comp,
// src/vulkan/geometry_queries.cpp); see pass_decl.h and geometry_queries_bindings.h. One declaration
// per shader: SCAN, RANGES and one per pair family (COUNT, WRITE; the families with mesh pairs, mesh,
// convex and implicit, read the cells and the points), each
// family's accesses its own (a family that reads no points declares none). A record: the families'
// COUNT dispatches, SCAN, the families' WRITE dispatches and RANGES: three dependent dispatches. The
// basic, manifold and convex families also have the primitive-pair passes QUERY COUNT and QUERY
// WRITE, and the SCAN shader their BLOCKS and LOCAL passes (geometry_queries_bindings.h).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_PASSES_H
#define VKC_SHARED_GEOMETRY_QUERIES_PASSES_H
#include "geometry_queries.h"
#include "geometry_queries_bindings.h"
#include "geometry_queries_mesh_pairs.h"
#include "pass_decl.h"

namespace vkc::gpu {

// clang-format off
// Tokens: geometries, prevGeometries, points, prevPoints, gridSamples, state, queries, slotRange, tiles,
// tileMasks, groupSums, elementsA, elementsB, ranges, counts, cells.
inline constexpr PassDecl kGeomPasses[] = {
  passDecl("vkc.geometry_queries.scan",   kGeomScanPassTiles, kGeomGroupSize, kGeomBindingCount, "- - - - - - - - - R W - - - W -"),
  passDecl("vkc.geometry_queries.blocks", kGeomScanPassBlocks, kGeomGroupSize, kGeomBindingCount, "- - - - - - - - - - RW - - - W -"),
  passDecl("vkc.geometry_queries.local",  kGeomScanPassLocal, kGeomGroupSize, kGeomBindingCount, "- - - - - - - - - RW - - - - - -"),
};
inline constexpr PassDecl kGeomRangesPasses[] = {
  passDecl("vkc.geometry_queries.ranges", 0, kGeomGroupSize, kGeomBindingCount, "- - - - - - - R - R R - - W R -"),
};
inline constexpr PassDecl kGeomBasicPasses[] = {
  passDecl("vkc.geometry_queries.basic.count", kGeomPassCount, kGeomGroupSize, kGeomBindingCount, "R - R - - - R R R RW - - - - - -"),
  passDecl("vkc.geometry_queries.basic.write", kGeomPassWrite, kGeomGroupSize, kGeomBindingCount, "R - R - - - R R R R R W W - R -"),
  passDecl("vkc.geometry_queries.basic.query_count", kGeomPassQueryCount, kGeomGroupSize, kGeomBindingCount, "R - R - - - R - - RW RW - - - - -"),
  passDecl("vkc.geometry_queries.basic.query_write", kGeomPassQueryWrite, kGeomGroupSize, kGeomBindingCount, "R - R - - - R - - R R W W W - -"),
};
inline constexpr PassDecl kGeomManifoldPasses[] = {
  passDecl("vkc.geometry_queries.manifold.count", kGeomPassCount, kGeomGroupSize, kGeomBindingCount, "R - - - - - R R R RW - - - - - -"),
  passDecl("vkc.geometry_queries.manifold.write", kGeomPassWrite, kGeomGroupSize, kGeomBindingCount, "R - - - - - R R R R R W W - R -"),
  passDecl("vkc.geometry_queries.manifold.query_count", kGeomPassQueryCount, kGeomGroupSize, kGeomBindingCount, "R - - - - - R - - RW RW - - - - -"),
  passDecl("vkc.geometry_queries.manifold.query_write", kGeomPassQueryWrite, kGeomGroupSize, kGeomBindingCount, "R - - - - - R - - R R W W W - -"),
};
inline constexpr PassDecl kGeomConvexPasses[] = {
  passDecl("vkc.geometry_queries.convex.count", kGeomPassCount, kGeomGroupSize, kGeomBindingCount, "R - R - - - R R R RW - - - - - R"),
  passDecl("vkc.geometry_queries.convex.write", kGeomPassWrite, kGeomGroupSize, kGeomBindingCount, "R - R - - - R R R R R W W - R R"),
  passDecl("vkc.geometry_queries.convex.query_count", kGeomPassQueryCount, kGeomGroupSize, kGeomBindingCount, "R - R - - - R - - RW RW - - - - R"),
  passDecl("vkc.geometry_queries.convex.query_write", kGeomPassQueryWrite, kGeomGroupSize, kGeomBindingCount, "R - R - - - R - - R R W W W - R"),
};
inline constexpr PassDecl kGeomImplicitPasses[] = {
  passDecl("vkc.geometry_queries.implicit.count", kGeomPassCount, kGeomGroupSize, kGeomBindingCount, "R - R - R - R R R RW - - - - - R"),
  passDecl("vkc.geometry_queries.implicit.write", kGeomPassWrite, kGeomGroupSize, kGeomBindingCount, "R - R - R - R R R R R W W - R R"),
};
inline constexpr PassDecl kGeomContinuousPasses[] = {
  passDecl("vkc.geometry_queries.continuous.count", kGeomPassCount, kGeomGroupSize, kGeomBindingCount, "R R R R R R R R R RW - - - - - -"),
  passDecl("vkc.geometry_queries.continuous.write", kGeomPassWrite, kGeomGroupSize, kGeomBindingCount, "R R R R R RW R R R R R W W - R -"),
};
inline constexpr PassDecl kGeomMeshPasses[] = {
  passDecl("vkc.geometry_queries.mesh.count", kGeomPassCount, kGeomGroupSize, kGeomMeshPairBindingCount, "R - R - - - R R R RW - - - - - R  R R - R - -"),
  passDecl("vkc.geometry_queries.mesh.write", kGeomPassWrite, kGeomGroupSize, kGeomMeshPairBindingCount, "R - R - - - R R R R R W W - R R  R R - R - -"),
};
inline constexpr PassDecl kGeomMeshMeshPasses[] = {
  passDecl("vkc.geometry_queries.mesh_mesh.count", kGeomPassCount, kGeomGroupSize, kGeomMeshPairBindingCount, "R - R - - - R R R RW - - - - - R  R R - R R R"),
  passDecl("vkc.geometry_queries.mesh_mesh.write", kGeomPassWrite, kGeomGroupSize, kGeomMeshPairBindingCount, "R - R - - - R R R R R W W - R R  R R - R R R"),
};
// The mesh-mesh and mesh CCD candidates (shaders/geometry_queries_mesh_pairs.comp,
// shared/geometry_queries_mesh_pairs.h), with the mesh-mesh family's bindings (the previous points and
// the queries: a continuous query's swept cells). Tokens after the stage's: treeNodes, treeBoxes, treeCells,
// meshPairs, xCells, candidates.
inline constexpr PassDecl kGeomMeshPairPasses[] = {
  passDecl("vkc.geometry_queries.mesh_pairs.gather", kGeomMeshPairPassGather, kGeomGroupSize, kGeomMeshPairBindingCount, "R - - - - - - - - - - - - - - R  - - W R - -"),
  passDecl("vkc.geometry_queries.mesh_pairs.count",  kGeomMeshPairPassCount,  kGeomGroupSize, kGeomMeshPairBindingCount, "R - R R - - R - - - - - - - - R  R R - R W -"),
  passDecl("vkc.geometry_queries.mesh_pairs.sums",   kGeomMeshPairPassSums,   kGeomGroupSize, kGeomMeshPairBindingCount, "- - - - - - - - - - - - - - - -  - - - R RW -"),
  passDecl("vkc.geometry_queries.mesh_pairs.blocks", kGeomMeshPairPassBlocks, kGeomGroupSize, kGeomMeshPairBindingCount, "- - - - - - - - - - - - - - W -  - - - R RW -"),
  passDecl("vkc.geometry_queries.mesh_pairs.prefix", kGeomMeshPairPassPrefix, kGeomGroupSize, kGeomMeshPairBindingCount, "- - - - - - - - - - - - - - - -  - - - R RW -"),
  passDecl("vkc.geometry_queries.mesh_pairs.write",  kGeomMeshPairPassWrite,  kGeomGroupSize, kGeomMeshPairBindingCount, "R - R R - - R R - - - - - - RW R  R R - R R RW"),
};
inline constexpr PassDecl kGeomMeshCcdPasses[] = {
  passDecl("vkc.geometry_queries.mesh_ccd.count", kGeomPassCount, kGeomGroupSize, kGeomMeshPairBindingCount, "R - R R - - R R R RW - - - - - R  - - - R R R"),
  passDecl("vkc.geometry_queries.mesh_ccd.write", kGeomPassWrite, kGeomGroupSize, kGeomMeshPairBindingCount, "R - R R - - R R R R R W W - R R  - - - R R R"),
};
// clang-format on
inline constexpr StageDecl kGeomStage{"geometry_queries", kGeomBindingCount, kGeomPasses};
inline constexpr StageDecl kGeomRangesStage{"geometry_queries_ranges", kGeomBindingCount, kGeomRangesPasses};
// The family shaders, indexed by family (kGeomFamily*).
inline constexpr StageDecl kGeomFamilyStages[] = {
    {"geometry_queries_basic", kGeomBindingCount, kGeomBasicPasses},
    {"geometry_queries_manifold", kGeomBindingCount, kGeomManifoldPasses},
    {"geometry_queries_convex", kGeomBindingCount, kGeomConvexPasses},
    {"geometry_queries_implicit", kGeomBindingCount, kGeomImplicitPasses},
    {"geometry_queries_continuous", kGeomBindingCount, kGeomContinuousPasses},
    {"geometry_queries_mesh", kGeomMeshPairBindingCount, kGeomMeshPasses},  // the device tree: closed meshes
    {"geometry_queries_mesh_mesh", kGeomMeshPairBindingCount, kGeomMeshMeshPasses},
    {"geometry_queries_mesh_ccd", kGeomMeshPairBindingCount, kGeomMeshCcdPasses},
};
inline constexpr StageDecl kGeomMeshPairStage{"geometry_queries_mesh_pairs", kGeomMeshPairBindingCount, kGeomMeshPairPasses};
static_assert(std::size(kGeomFamilyStages) == kGeomFamilyCount);
static_assert(validStage(kGeomStage) && validStage(kGeomRangesStage) && validStage(kGeomFamilyStages[0]) && validStage(kGeomFamilyStages[1]) &&
              validStage(kGeomFamilyStages[2]) && validStage(kGeomFamilyStages[3]) && validStage(kGeomFamilyStages[4]) &&
              validStage(kGeomFamilyStages[5]) && validStage(kGeomFamilyStages[6]) && validStage(kGeomFamilyStages[7]) &&
              validStage(kGeomMeshPairStage));

}  // namespace vkc::gpu
#endif  // VKC_SHARED_GEOMETRY_QUERIES_PASSES_H
