#version 460
// Pairwise geometry queries, the mesh-mesh and mesh CCD queries' candidate pairs of cells (issue 17): GATHER,
// COUNT, SCAN and WRITE, selected by specialization constant 0, recorded with the BVH build between
// GATHER and COUNT before the pair families' COUNT level (shared/geometry_queries_mesh_pairs.h
// describes them). No workgroup barrier, no shared memory.
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILIES 0
#include "shared/geometry_queries_stage.h"
#define VKC_GEOM_MESH_PAIRS_WRITE
vec3 geomPointAt(uint i) { return vec3(points[clampIndex(i, pc.pointCount)]); }
vec3 geomPreviousPointAt(uint i) { return vec3(prevPoints[clampIndex(i, pc.pointCount)]); }
uint geomCellEntryAt(uint i) { return cells[clampIndex(i, pc.cellCount)]; }
#include "shared/geometry_queries_mesh_pairs_walk.h"
#include "shared/geometry_queries_mesh_ccd_pairs.h"
#include "shared/geometry_queries_mesh_reach.h"

layout(constant_id = 0) const uint kPass = kGeomMeshPairPassGather;

uint globalInvocation() { return linearGroup() * kGeomGroupSize + gl_LocalInvocationIndex; }

// Tree cell p: its mesh's cell's four vertex numbers in the points buffer.
void gatherPass() {
  uint p = globalInvocation();
  if (p >= pc.treeCellCount || pc.meshCount == 0u) return;
  uint first = kGeomMeshPairRows * pc.meshPairCount;
  uvec4 row = geomMeshPairRow(first + geomMeshPairFind(first, 1u, pc.meshCount, 1u, p));
  GeomShape m = geometries[clampIndex(row.x, pc.geometryCount)];
  uint c = min(p - min(row.y, p), max(row.z, 1u) - 1u);
  uvec4 ids = geomMeshMeshIds(m, c);
  uint n = geomMeshCorners(m.info.x);
  for (uint k = 0u; k < 4u; ++k) treeCells[4u * p + k] = clampIndex(m.info.y + (k < n ? ids[k] : ids.x), pc.pointCount);
}

// X cell `entry` of the concatenated entries: its query's rows, the cell of X, X and Y; ccd: a
// continuous query (shared/geometry_queries_mesh_ccd_pairs.h: X's cells may be a point set's points).
// A static query's X may be a point set too (against a tetrahedral mesh): a point's reach is
// geomPointReach's box, the box test the same as the CPU driver's (geomMeshReachTouches of a box).
struct XCell {
  uvec4 row0, row1;
  uint cx;
  GeomShape x, y;
  uvec4 ix;
  vec3 lo, hi;
  bool self;
  bool ccd;
};

XCell xCellAt(uint entry) {
  XCell e;
  uint j = geomMeshPairFind(0u, kGeomMeshPairRows, pc.meshPairCount, 3u, entry);
  e.row0 = geomMeshPairRow(kGeomMeshPairRows * j);
  e.row1 = geomMeshPairRow(kGeomMeshPairRows * j + 1u);
  e.cx = min(entry - min(e.row0.w, entry), max(e.row1.z, 1u) - 1u);
  e.x = geometries[clampIndex(e.row0.y, pc.geometryCount)];
  e.y = geometries[clampIndex(e.row0.z, pc.geometryCount)];
  e.self = e.row0.y == e.row0.z;
  e.ccd = queries[clampIndex(e.row0.x, pc.queryCount)].method == kGeomMethodContinuous;
  e.ix = geomCcdXIsPoints(e.x) ? uvec4(0u) : geomMeshMeshIds(e.x, e.cx);
  if (e.ccd) {
    geomCcdReachOf(e.x, e.y, e.ix, e.cx, e.lo, e.hi);
    return e;
  }
  if (geomCcdXIsPoints(e.x)) {
    GeomMeshReach r = geomPointReach(geomPointAt(e.x.info.y + e.cx));
    e.lo = r.lo;
    e.hi = r.hi;
    return e;
  }
  vec3 p0, p1, p2, p3;
  geomMeshMeshCorners(e.x, e.ix, p0, p1, p2, p3);
  bool lines = e.x.info.x == kGeomLineMesh && e.y.info.x == kGeomLineMesh;
  float thickness = lines ? e.x.p2.w + e.y.p2.w : 0.0f;
  geomMeshMeshReach(p0, p1, p2, p3, geomMeshCorners(e.x.info.x), thickness, e.lo, e.hi);
  return e;
}

// The next candidate cell of Y of e (the walk begun), false when none is left: the CPU's box test on
// the corners (continuous: on the swept corners; the tree's boxes only prune); a mesh against itself
// keeps Y's cells after X's that share no vertex with it (geomMeshMeshSelfPair).
bool nextCandidate(XCell e, out uint cy) {
  cy = 0u;
  uint first = e.row1.y;
  uint end = first + e.row1.w;
  uint leaf;
  for (uint outer = 0u; outer < 65535u; ++outer) {
    for (uint inner = 0u; inner < kGeomMeshPairChunk; ++inner) {
      if (!geomWalkNext(e.lo, e.hi, first, end, leaf)) return false;
      uint d = leaf - first;
      uvec4 iy = geomMeshMeshIds(e.y, d);
      if (e.self && !geomMeshMeshSelfPair(e.cx, e.ix, d, iy, geomMeshCorners(e.y.info.x))) continue;
      if (e.ccd) {
        if (!geomCcdCandidate(e.y, iy, e.lo, e.hi)) continue;
        cy = d;
        return true;
      }
      vec3 q0, q1, q2, q3;
      geomMeshMeshCorners(e.y, iy, q0, q1, q2, q3);
      if (!geomMeshMeshCandidate(q0, q1, q2, q3, e.lo, e.hi)) continue;
      cy = d;
      return true;
    }
  }
  return false;
}

void countPass() {
  uint entry = globalInvocation();
  if (entry >= geomMeshPairXTotal()) return;
  XCell e = xCellAt(entry);
  geomWalkBegin();
  uint n = 0u;
  uint cy;
  for (uint outer = 0u; outer < 65535u; ++outer) {
    bool more = true;
    for (uint inner = 0u; inner < kGeomMeshPairChunk && more; ++inner) {
      more = nextCandidate(e, cy);
      if (more) ++n;
    }
    if (!more) break;
  }
  xCells[entry] = n;
}

// The exclusive prefix of the X cells' candidates in three passes of at most kGeomMeshPairBlock
// iterations an invocation (llvmpipe stops an invocation after 65 535 loop iterations in all):
// SUMS, one invocation per block of entries, its sum into xCells[T + 1 + block]; BLOCKS, one
// invocation, those sums made their exclusive prefix (and the candidates missing reset); PREFIX, one
// invocation per block, its entries made theirs, plus the block's (xCells[T] = the sum).
void sumsPass() {
  uint total = geomMeshPairXTotal();
  uint block = globalInvocation();
  uint first = block * kGeomMeshPairBlock;
  if (first >= total) return;
  uint end = min(total - first, kGeomMeshPairBlock);
  uint sum = 0u;
  for (uint i = 0u; i < end; ++i) sum += xCells[first + i];
  xCells[total + 1u + block] = sum;
}

void blocksPass() {
  if (globalInvocation() != 0u) return;
  uint total = geomMeshPairXTotal();
  uint blocks = (total + kGeomMeshPairBlock - 1u) / kGeomMeshPairBlock;
  uint sum = 0u;
  for (uint b = 0u; b < blocks; ++b) {
    uint n = xCells[total + 1u + b];
    xCells[total + 1u + b] = sum;
    sum += n;
  }
  xCells[total] = sum;
  counts.candidatesMissing = 0u;
}

void prefixPass() {
  uint total = geomMeshPairXTotal();
  uint block = globalInvocation();
  uint first = block * kGeomMeshPairBlock;
  if (first >= total) return;
  uint end = min(total - first, kGeomMeshPairBlock);
  uint sum = xCells[total + 1u + block];
  for (uint i = 0u; i < end; ++i) {
    uint n = xCells[first + i];
    xCells[first + i] = sum;
    sum += n;
  }
}

// Sorts candidates [at, at + n) by their cell of Y (heap sort).
void sortCandidates(uint at, uint n) {
  if (n < 2u) return;
  // Build the heap, then move the largest to the end; the sift loops are bounded by 32 levels.
  for (uint phase = 0u; phase < 2u; ++phase) {
    uint steps = phase == 0u ? n / 2u : n - 1u;
    for (uint outer = 0u; outer * kGeomMeshPairChunk < steps; ++outer) {
      uint end = min(steps - outer * kGeomMeshPairChunk, kGeomMeshPairChunk);
      for (uint inner = 0u; inner < end; ++inner) {
        uint k = outer * kGeomMeshPairChunk + inner;
        uint root = 0u;
        uint size = n;
        if (phase == 0u) {
          root = n / 2u - 1u - k;
        } else {
          size = n - 1u - k;
          uvec2 t = candidates[at];
          candidates[at] = candidates[at + size];
          candidates[at + size] = t;
        }
        for (uint level = 0u; level < 32u; ++level) {
          uint child = 2u * root + 1u;
          if (child >= size) break;
          if (child + 1u < size && candidates[at + child + 1u].y > candidates[at + child].y) ++child;
          if (candidates[at + child].y <= candidates[at + root].y) break;
          uvec2 t = candidates[at + root];
          candidates[at + root] = candidates[at + child];
          candidates[at + child] = t;
          root = child;
        }
      }
    }
  }
}

void writePass() {
  uint entry = globalInvocation();
  uint total = geomMeshPairXTotal();
  if (entry >= total) return;
  XCell e = xCellAt(entry);
  uvec2 range = slotRange[clampIndex(e.row0.x, pc.queryCount)];
  uint slots = range.y - min(range.x, range.y);
  if (!e.ccd) slots -= min(geomMeshMeshVertexSlots(e.x, e.y, e.self), slots);  // then a closed surface mesh's vertex pass
  uint base = xCells[entry] - xCells[min(e.row0.w, total)];
  uint room = slots - min(base, slots);
  uint at = range.x + base;
  geomWalkBegin();
  uint n = 0u;
  uint cy;
  for (uint outer = 0u; outer < 65535u; ++outer) {
    bool more = true;
    for (uint inner = 0u; inner < kGeomMeshPairChunk && more && n < room; ++inner) {
      more = nextCandidate(e, cy);
      if (more) {
        candidates[clampIndex(at + n, pc.slotCount)] = uvec2(e.cx, cy);
        ++n;
      }
    }
    if (!more || n >= room) break;
  }
  if (at + n <= pc.slotCount) sortCandidates(at, n);
  // The query's first X cell counts its candidates past its slots.
  if (e.cx == 0u) {
    uint need = xCells[min(e.row0.w + e.row1.z, total)] - xCells[min(e.row0.w, total)];
    if (need > slots) atomicAdd(counts.candidatesMissing, need - slots);
  }
}

void main() {
  if (kPass == kGeomMeshPairPassGather) {
    gatherPass();
  } else if (kPass == kGeomMeshPairPassCount) {
    countPass();
  } else if (kPass == kGeomMeshPairPassSums) {
    sumsPass();
  } else if (kPass == kGeomMeshPairPassBlocks) {
    blocksPass();
  } else if (kPass == kGeomMeshPairPassPrefix) {
    prefixPass();
  } else {
    writePass();
  }
}
