// Private interface of GeometryQueryTrees (include/vkcollide/geometry_queries.h; issue 17): the
// trees a host keeps between calls, as the CPU's mesh driver (src/cpu/geometry_queries_mesh.cpp)
// reads them, and their validation against an input.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cpu/mesh_pair_walk.h"
#include "vkcollide/bvh.h"
#include "vkcollide/geometry_queries.h"
#include "vkcollide/result.h"

namespace vkc {

struct GeometryQueryTrees::Impl {
  // One mesh geometry's tree and the copy of what it was built (or last refit) from.
  struct Mesh {
    uint32_t geometry = 0;
    Geometry g{};
    std::vector<uint32_t> cells;  // its cell entries
    std::vector<Float4> points;   // its vertices (xyz compared where the fingerprints differ; w kept)
    std::vector<BvhNode> nodes;   // buildBvhCpu's tree over its cells (kCpuScalar, as a call builds)
    std::vector<Aabb> boxes;      // the cells' boxes
    std::vector<uint32_t> parents;
    cpu::PairWalkTree walk;  // the tandem walk's layout of the tree (src/cpu/mesh_pair_walk.h)
    std::vector<float> corners;  // a surface mesh's triangles' corners (9 floats a cell: xyz of 0, 1, 2)
    // Fingerprints of cells and of the vertices' xyz (blockFingerprints: a call compares the input's
    // with these, and the copies above only where they differ, to name the field).
    std::vector<uint64_t> cellPrints, pointPrints;
  };
  std::vector<Mesh> meshes;  // by geometry index, ascending
  uint64_t generation = 0;   // GeometryQueryTrees::generation(): set by each build and refit

  // The tree of geometry gi, or null.
  const Mesh* find(uint32_t gi) const;
};

namespace cpu {

// Whether the input states input.trees' generation (GeometryQueryInput::treesGeneration): the kept
// meshes' cells and vertices are then not compared (their geometries are).
bool treesGenerationStated(const GeometryQueryInput& input);

// Whether input.trees holds a tree of mesh geometry gi built or refit from exactly this geometry
// (bitwise), with its vertex and cell ranges inside the input's arrays. validateMeshGeometries then
// skips the mesh's checks: validate() compares its cells and vertices next (validateGeometryQueryTrees,
// which every input with trees goes through) and refuses the input unless they are those that the
// trees' build or refit validated (the cells are compared once a call, there).
bool keptMeshGeometryUnchanged(const GeometryQueryInput& input, uint32_t gi);

// The kept meshes (geometry indices, ascending) whose geometry is the tree's (keptMeshGeometryUnchanged)
// and whose vertices' xyz have the tree's fingerprints (validated by its build or refit); with the
// trees' generation stated (treesGenerationStated), whose vertices' xyz are finite (not compared).
std::vector<uint32_t> keptMeshPointsUnchanged(const GeometryQueryInput& input);

// input.trees (if any) against the input: every tree's geometry bitwise, cells and vertices by fingerprints, equal
// to the input's (errors name the field); the vertices of the meshes in `pointsChecked`
// (keptMeshPointsUnchanged's answer for this input) not compared again. The rest of the input is validated.
// input.treesGeneration: 0, or the trees' generation: then the vertices are not compared, and the cells
// of an open mesh only range-checked (entries below its vertex count; a closed mesh's are compared).
Status validateGeometryQueryTrees(const GeometryQueryInput& input, std::span<const uint32_t> pointsChecked = {});

}  // namespace cpu
}  // namespace vkc
