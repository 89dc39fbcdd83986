// GLSL only: what the candidate passes (shaders/geometry_queries_mesh_pairs.comp) and the mesh-mesh
// family (shared/geometry_queries_mesh_mesh_slot.h) share of the mesh-mesh candidates
// (shared/geometry_queries_mesh_pairs.h describes them): the bindings after the stage's, the mesh
// pairs table, a cell's vertex numbers and corners, and the walk of the tree. The includer declares
// the stage's bindings (geometry_queries_stage.h), geomPointAt(i) and geomCellEntryAt(i) (both
// clamping to their arrays) and, to write the candidates, defines VKC_GEOM_MESH_PAIRS_WRITE.
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MESH_PAIRS_WALK_H
#define VKC_SHARED_GEOMETRY_QUERIES_MESH_PAIRS_WALK_H
#ifdef __cplusplus
#error "geometry_queries_mesh_pairs_walk.h is GLSL only"
#endif
#include "bvh.h"
#include "geometry_queries_mesh.h"
#include "geometry_queries_mesh_mesh_device.h"
#include "geometry_queries_mesh_pairs.h"

#ifdef VKC_GEOM_MESH_PAIRS_WRITE
#define VKC_GEOM_PAIRS_ACCESS
#else
#define VKC_GEOM_PAIRS_ACCESS readonly
#endif
layout(std430, set = 0, binding = kGeomBindingTreeNodes) readonly buffer TreeNodes { BvhNode treeNodes[]; };
layout(std430, set = 0, binding = kGeomBindingTreeBoxes) readonly buffer TreeBoxes { Aabb treeBoxes[]; };
#ifdef VKC_GEOM_MESH_PAIRS_WRITE
layout(std430, set = 0, binding = kGeomBindingTreeCells) writeonly buffer TreeCells { uint treeCells[]; };
#else
layout(std430, set = 0, binding = kGeomBindingTreeCells) readonly buffer TreeCells { uint treeCells[]; };
#endif
layout(std430, set = 0, binding = kGeomBindingMeshPairs) readonly buffer MeshPairs { uvec4 meshPairs[]; };
layout(std430, set = 0, binding = kGeomBindingXCells) VKC_GEOM_PAIRS_ACCESS buffer XCells { uint xCells[]; };
layout(std430, set = 0, binding = kGeomBindingCandidates) VKC_GEOM_PAIRS_ACCESS buffer Candidates { uvec2 candidates[]; };

// Rows of the mesh pairs table (clamped to its rows).
uvec4 geomMeshPairRow(uint r) {
  return meshPairs[clampIndex(r, kGeomMeshPairRows * pc.meshPairCount + pc.meshCount)];
}

// The X cells of all mesh-mesh queries (T, the end of the last query's entries).
uint geomMeshPairXTotal() {
  if (pc.meshPairCount == 0u) return 0u;
  uint last = kGeomMeshPairRows * (pc.meshPairCount - 1u);
  return geomMeshPairRow(last).w + geomMeshPairRow(last + 1u).z;
}

// The last pair j (or mesh row, meshes) whose key (row component `part` of row first + 2j, or first +
// j) is <= v: the keys ascend. count >= 1.
uint geomMeshPairFind(uint first, uint stride, uint count, uint part, uint v) {
  uint lo = 0u, hi = count;
  for (uint step = 0u; step < 32u && lo < hi; ++step) {
    uint mid = (lo + hi) / 2u;
    if (geomMeshPairRow(first + stride * mid)[part] <= v) lo = mid + 1u; else hi = mid;
  }
  return lo == 0u ? 0u : lo - 1u;
}

// The pair of query q (false when q is no mesh-mesh query of the table).
bool geomMeshPairOfQuery(uint q, out uvec4 row0, out uvec4 row1) {
  uint j = geomMeshPairFind(0u, kGeomMeshPairRows, max(pc.meshPairCount, 1u), 0u, q);
  row0 = geomMeshPairRow(kGeomMeshPairRows * j);
  row1 = geomMeshPairRow(kGeomMeshPairRows * j + 1u);
  return pc.meshPairCount > 0u && row0.x == q;
}

// The vertex numbers of cell c of mesh m (clamped to its vertices).
uvec4 geomMeshMeshIds(GeomShape m, uint c) {
  uint n = geomMeshCorners(m.info.x);
  uint lastVertex = max(m.info.z, 1u) - 1u;
  uint entry = uint(m.p2.x) + c * n;
  uvec4 ids = uvec4(0u);
  for (uint k = 0u; k < n; ++k) ids[k] = min(geomCellEntryAt(entry + k), lastVertex);
  return ids;
}

// The corners of a cell of mesh m (vertex numbers ids; unused corners repeat the first).
void geomMeshMeshCorners(GeomShape m, uvec4 ids, out vec3 p0, out vec3 p1, out vec3 p2, out vec3 p3) {
  uint n = geomMeshCorners(m.info.x);
  p0 = geomPointAt(m.info.y + ids.x);
  p1 = geomPointAt(m.info.y + ids.y);
  p2 = n >= 3u ? geomPointAt(m.info.y + ids.z) : p0;
  p3 = n >= 4u ? geomPointAt(m.info.y + ids.w) : p0;
}

// Whether cell (q0 .. q3) of Y is a candidate of the cell of X with reach [lo, hi].
bool geomMeshMeshCandidate(vec3 q0, vec3 q1, vec3 q2, vec3 q3, vec3 lo, vec3 hi) {
  return geomMeshMeshBoxesOverlap(min(min(q0, q1), min(q2, q3)), max(max(q0, q1), max(q2, q3)), lo, hi);
}

// The walk of the tree: depth first, one child reference per stack entry (a node's two children
// pushed when its box overlaps the walk's box; a leaf returned when its box does), at most
// 2 * treeCells + 2 steps in any buffer contents. One walk at a time per invocation.
const uint kGeomWalkStackSize = kBvhMaxDepth + 2u;
uint geomWalkStack[kGeomWalkStackSize];
uint geomWalkTop;
uint geomWalkSteps;

void geomWalkBegin() {
  geomWalkStack[0] = 0u;
  geomWalkTop = pc.treeCellCount > 0u ? 1u : 0u;
  geomWalkSteps = 0u;
}

// The next tree cell in [first, end) whose box overlaps [lo, hi] (closed boxes); false when the walk
// is over.
bool geomWalkNext(vec3 lo, vec3 hi, uint first, uint end, out uint cell) {
  cell = 0u;
  uint nodeCount = pc.treeCellCount > 1u ? pc.treeCellCount - 1u : 1u;
  uint limit = 2u * pc.treeCellCount + 2u;
  for (uint outer = 0u; outer < 65535u; ++outer) {
    for (uint inner = 0u; inner < kGeomMeshPairChunk; ++inner) {
      if (geomWalkTop == 0u || geomWalkSteps >= limit) return false;
      geomWalkSteps = geomWalkSteps + 1u;
      geomWalkTop = geomWalkTop - 1u;
      uint ref = geomWalkStack[geomWalkTop];
      if ((ref & kBvhLeafBit) != 0u) {
        uint p = ref & ~kBvhLeafBit;
        if (p < first || p >= end || p >= pc.treeCellCount) continue;
        Aabb box = treeBoxes[p];
        if (!geomMeshMeshBoxesOverlap(vec3(box.lo), vec3(box.hi), lo, hi)) continue;
        cell = p;
        return true;
      }
      if (ref >= nodeCount) continue;
      BvhNode n = treeNodes[ref];
      if (!geomMeshMeshBoxesOverlap(vec3(n.lo), vec3(n.hi), lo, hi)) continue;
      if (n.right != kBvhNone && geomWalkTop < kGeomWalkStackSize) {
        geomWalkStack[geomWalkTop] = n.right;
        geomWalkTop = geomWalkTop + 1u;
      }
      if (n.left != kBvhNone && geomWalkTop < kGeomWalkStackSize) {
        geomWalkStack[geomWalkTop] = n.left;
        geomWalkTop = geomWalkTop + 1u;
      }
    }
  }
  return false;
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MESH_PAIRS_WALK_H
