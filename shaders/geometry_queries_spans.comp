#version 460
// Pairwise geometry queries: the spans passes (shared/geometry_queries_spans.h), selected by
// specialization constant 0. One workgroup each: MESH_PAIRS writes the spans of the mesh-mesh and
// mesh CCD families (the slots of each mesh pair holding a candidate pair, after the candidate
// passes) and their dispatch records; FAMILIES writes a device-resident batch's family records from
// the spans PLACE left. A module of its own, small: llvmpipe compiles it fast, and its shared-memory
// barrier stays out of the pair code.
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILIES 0
#define VKC_GEOM_WRITE_TILES
#include "shared/geometry_queries_stage.h"
#include "shared/geometry_queries_mesh_mesh_device.h"
#include "shared/geometry_queries_mesh_pairs.h"
#include "shared/geometry_queries_spans.h"

layout(constant_id = 0) const uint kPass = kGeomSpansPassMeshPairs;

layout(std430, set = 0, binding = kGeomBindingMeshPairs) readonly buffer MeshPairs { uvec4 meshPairs[]; };
layout(std430, set = 0, binding = kGeomBindingXCells) readonly buffer XCells { uint xCells[]; };
// The mesh pairs' other bindings, unused here (every shader of the pipeline layout declares them).
layout(std430, set = 0, binding = kGeomBindingTreeNodes) readonly buffer TreeNodes { uint treeNodes[]; };
layout(std430, set = 0, binding = kGeomBindingTreeBoxes) readonly buffer TreeBoxes { uint treeBoxes[]; };
layout(std430, set = 0, binding = kGeomBindingTreeCells) readonly buffer TreeCells { uint treeCells[]; };
layout(std430, set = 0, binding = kGeomBindingCandidates) readonly buffer Candidates { uvec2 candidates[]; };

shared uvec4 sRuns[kGeomGroupSize];

uint tileWordAt(uint i) { return tiles[min(i, uint(tiles.length()) - 1u)]; }
void setTileWord(uint i, uint v) { tiles[min(i, uint(tiles.length()) - 1u)] = v; }

// The first word of span k.
uint spanWord(uint k) { return pc.spanRecords + kGeomSpanRecordWords * kGeomFamilyCount + kGeomSpanWords * k; }

void setSpan(uint k, uint firstGroup, uint lo, uint hi) {
  uint w = spanWord(k);
  setTileWord(w, firstGroup);
  setTileWord(w + 1u, lo);
  setTileWord(w + 2u, hi);
  setTileWord(w + 3u, 0u);
}

// Family `family`'s record: `groups` workgroups as x * y (x within the device's limit), spans
// [first, first + count).
void setRecord(uint family, uint groups, uint first, uint count) {
  uint r = pc.spanRecords + kGeomSpanRecordWords * family;
  uint x = min(groups, max(pc.maxGroupsX, 1u));
  setTileWord(r, x);
  setTileWord(r + 1u, x == 0u ? 1u : (groups + x - 1u) / x);
  setTileWord(r + 2u, 1u);
  setTileWord(r + 3u, groups);
  setTileWord(r + 4u, first);
  setTileWord(r + 5u, count);
  setTileWord(r + 6u, 0u);
  setTileWord(r + 7u, 0u);
}

// Mesh pair j's slots holding a candidate pair: [first, first + min(candidates, slots)) (the bound of
// geomMeshMeshSlot and geomMeshCcdSlot: no contact past them); with a closed surface mesh's vertex
// pass, whose slots follow the candidate slots (geomMeshMeshVertexSlots), every slot of the query.
// z: 1 for a continuous query's pair (the mesh CCD family's), 0 for a static one's (mesh-mesh): the
// family of its query, as the family shaders check it.
uvec3 pairSpan(uint j) {
  uint rows = kGeomMeshPairRows * pc.meshPairCount + pc.meshCount;
  uvec4 row0 = meshPairs[clampIndex(kGeomMeshPairRows * j, rows)];
  uvec4 row1 = meshPairs[clampIndex(kGeomMeshPairRows * j + 1u, rows)];
  uint last = uint(xCells.length()) - 1u;
  uint candidates = xCells[min(row0.w + row1.z, last)] - xCells[min(row0.w, last)];
  uint q = clampIndex(row0.x, pc.queryCount);
  uvec2 r = slotRange[q];
  uint first = min(r.x, r.y);
  GeomShape x = geometries[clampIndex(row0.y, pc.geometryCount)];
  GeomShape y = geometries[clampIndex(row0.z, pc.geometryCount)];
  uint ccd = geomQueryFamily(x.info.x, y.info.x, queries[q].method) == kGeomFamilyMeshCcd ? 1u : 0u;
  if (geomMeshMeshVertexSlots(x, y, row0.y == row0.z) != 0u) return uvec3(first, r.y, ccd);
  return uvec3(first, first + min(candidates, r.y - first), ccd);
}

// Two span lists, one per family of the table's pairs: the mesh-mesh pairs' spans from
// kGeomFamilyCount on, then the mesh CCD pairs', each family's in table (query) order. Each
// invocation takes a run of consecutive pairs: its workgroups and pairs per family summed
// (x, y: mesh-mesh, mesh CCD workgroups; z, w: their pairs), the runs' sums scanned in shared
// memory, then each pair's span written at its family's next entry with its first workgroup.
void meshPairsPass() {
  if (linearGroup() != 0u) return;  // uniform: one workgroup
  uint lid = gl_LocalInvocationIndex;
  uint pairs = pc.meshPairCount;
  uint per = (pairs + kGeomGroupSize - 1u) / kGeomGroupSize;
  uint begin = min(lid * per, pairs);
  uint end = min(begin + per, pairs);
  uvec4 run = uvec4(0u);
  for (uint j = begin; j < end; ++j) {
    uvec3 s = pairSpan(j);
    uint groups = geomSpanGroups(s.x, s.y);
    run += s.z != 0u ? uvec4(0u, groups, 0u, 1u) : uvec4(groups, 0u, 1u, 0u);
  }
  sRuns[lid] = run;
  barrier();
  uvec4 base = uvec4(0u);
  uvec4 total = uvec4(0u);
  for (uint i = 0u; i < kGeomGroupSize; ++i) {
    uvec4 v = sRuns[i];
    base += i < lid ? v : uvec4(0u);
    total += v;
  }
  for (uint j = begin; j < end; ++j) {
    uvec3 s = pairSpan(j);
    uint groups = geomSpanGroups(s.x, s.y);
    if (s.z != 0u) {
      setSpan(kGeomFamilyCount + total.z + base.w, base.y, s.x, s.y);
      base += uvec4(0u, groups, 0u, 1u);
    } else {
      setSpan(kGeomFamilyCount + base.z, base.x, s.x, s.y);
      base += uvec4(groups, 0u, 1u, 0u);
    }
  }
  if (lid == 0u) {
    setRecord(kGeomFamilyMeshMesh, total.x, kGeomFamilyCount, total.z);
    setRecord(kGeomFamilyMeshCcd, total.y, kGeomFamilyCount + total.z, total.w);
  }
}

// Invocation f: family f's span (PLACE's min first and max end; none: empty) and its record.
void familiesPass() {
  uint f = gl_LocalInvocationIndex;
  if (linearGroup() != 0u || f >= kGeomFamilyCount) return;
  uint w = spanWord(f);
  uint lo = tileWordAt(w + 1u);
  uint hi = tileWordAt(w + 2u);
  if (lo == kGeomSpanNone || hi <= lo) {
    lo = 0u;
    hi = 0u;
  }
  setSpan(f, 0u, lo, hi);
  setRecord(f, geomSpanGroups(lo, hi), f, 1u);
}

void main() {
  if (kPass == kGeomSpansPassMeshPairs) {
    meshPairsPass();
  } else {
    familiesPass();
  }
}
