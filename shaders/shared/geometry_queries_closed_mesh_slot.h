// GLSL only: the vertex pass of a closed surface mesh on the Vulkan stage (issue 17), one slot per
// point: a point set's points against a closed surface mesh (the mesh family,
// geometry_queries_mesh_slot.h), and the other mesh's vertices after a mesh-mesh query's candidate
// pairs (the mesh-mesh family, geometry_queries_mesh_mesh_slot.h). The mesh's triangles are cells of
// the device tree of the candidate passes (shared/geometry_queries_mesh_pairs.h: the host puts every
// closed mesh of a vertex pass in it, its cells from tree cell `first`). Per point: a walk of the tree
// with the point's search box (geomClosedMeshReach), the nearer child first, skipping a box whose
// every point is farther than the best triangle so far by more than the rounding of the distances
// (geomClosedMeshBeyond); a triangle counts when its corners' box overlaps the search box (the CPU
// driver's BVH candidates, src/cpu/geometry_queries_mesh.cpp: insidePoints) and the closest is the
// least (squared distance, cell): the CPU's tie rule over its candidates in cell order, whatever
// order the walk visits them in. Then its feature's angle-weighted pseudonormal summed as the CPU
// sums it (a vertex: its triangles' normals times their angles at it in cell order, found by walks
// with the vertex's point box, kGeomClosedMeshNormalBatch cells a walk; an edge: the triangle's
// normal plus its neighbour's across the edge, found by a walk with the edge's box; the face: its
// normal), and geomClosedMeshPoint: the same contact bit for bit (lavapipe). The tree's boxes (swept
// ones too, when the record holds a continuous mesh query) only prune.
// Loops: each walk reads a node at most once (2 * tree cells + 2 steps). On llvmpipe an invocation's
// loops share 65 535 iterations: a point whose search box holds tens of thousands of triangles
// nearer than its closest one by the pruning test is cut short there (not on GPUs). With an
// unbounded search radius a point may visit every triangle (the centre of a sphere is as far from
// each): the host refuses such a mesh of more than kGeomClosedMeshDeviceMaxTriangles triangles.
// Reads the cells through the includer's geomCellEntryAt(i) and the vertices through geomPointAt(i)
// (both clamp to their arrays: a vertex number out of range reads the mesh's last vertex).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_CLOSED_MESH_SLOT_H
#define VKC_SHARED_GEOMETRY_QUERIES_CLOSED_MESH_SLOT_H
#ifdef __cplusplus
#error "geometry_queries_closed_mesh_slot.h is GLSL only"
#endif
#include "geometry_queries_closed_mesh.h"
#include "geometry_queries_mesh_mesh_device.h"
#include "geometry_queries_mesh_pairs_walk.h"

// Triangle c of closed surface mesh m: its vertex numbers and corners.
uvec4 geomClosedMeshIds(GeomShape m, uint c) {
  uint lastVertex = max(m.info.z, 1u) - 1u;
  uint entry = uint(m.p2.x) + c * 3u;
  return uvec4(min(geomCellEntryAt(entry), lastVertex), min(geomCellEntryAt(entry + 1u), lastVertex),
               min(geomCellEntryAt(entry + 2u), lastVertex), 0u);
}

void geomClosedMeshCorners(GeomShape m, uvec4 ids, out vec3 p0, out vec3 p1, out vec3 p2) {
  p0 = geomPointAt(m.info.y + ids.x);
  p1 = geomPointAt(m.info.y + ids.y);
  p2 = geomPointAt(m.info.y + ids.z);
}

// The box of tree reference ref (a node's, or a leaf's cell box); false for no node.
bool geomTreeRefBox(uint ref, out vec3 lo, out vec3 hi) {
  lo = vec3(0.0f);
  hi = vec3(0.0f);
  if ((ref & kBvhLeafBit) != 0u) {
    uint p = ref & ~kBvhLeafBit;
    if (p >= pc.treeCellCount) return false;
    Aabb b = treeBoxes[p];
    lo = vec3(b.lo);
    hi = vec3(b.hi);
    return true;
  }
  if (ref >= (pc.treeCellCount > 1u ? pc.treeCellCount - 1u : 1u)) return false;
  BvhNode n = treeNodes[ref];
  lo = vec3(n.lo);
  hi = vec3(n.hi);
  return true;
}

// The squared distance from x to box [lo, hi].
float geomBoxDist2(vec3 x, vec3 lo, vec3 hi) {
  vec3 d = max(max(lo - x, x - hi), vec3(0.0f));
  return dot(d, d);
}

// Whether every point of box [lo, hi] is farther from x than a squared distance bestDist2 by more
// than triClosestPoint's rounding (a closest point is on its triangle, inside the triangle's box, up
// to a few ulps of the coordinates; margin 1e-4 of their magnitude): no triangle in it can be closer
// than the best or tie with it. Only prunes: the result does not depend on it.
bool geomClosedMeshBeyond(vec3 x, vec3 lo, vec3 hi, float bestDist2) {
  vec3 m = max(max(abs(lo), abs(hi)), abs(x));
  float gap = sqrt(geomBoxDist2(x, lo, hi)) - 1e-4f * max(m.x, max(m.y, m.z));
  return gap > 0.0f && gap * gap > bestDist2 * 1.0001f;
}

// The closest point to x of the triangles of closed surface mesh m (tree cells [first, first +
// triangles)) whose corners' box overlaps [lo, hi], by the CPU's tie rule: false when none.
bool geomClosedMeshNearest(GeomShape m, uint first, vec3 x, vec3 lo, vec3 hi, out TriClosest best,
                           out uint bestCell) {
  best.point = vec3(0.0f);
  best.bary = vec3(0.0f);
  best.dist2 = 0.0f;
  best.region = 0u;
  bestCell = 0u;
  bool any = false;
  uint count = uint(m.p2.y);
  uint limit = 2u * pc.treeCellCount + 2u;
  geomWalkBegin();
  for (uint outer = 0u; outer < 65535u && geomWalkTop > 0u && geomWalkSteps < limit; ++outer) {
    for (uint inner = 0u; inner < kGeomMeshPairChunk && geomWalkTop > 0u && geomWalkSteps < limit; ++inner) {
      geomWalkSteps = geomWalkSteps + 1u;
      geomWalkTop = geomWalkTop - 1u;
      uint ref = geomWalkStack[geomWalkTop];
      vec3 blo, bhi;
      if (!geomTreeRefBox(ref, blo, bhi) || !geomMeshMeshBoxesOverlap(blo, bhi, lo, hi)) continue;
      if (any && geomClosedMeshBeyond(x, blo, bhi, best.dist2)) continue;
      if ((ref & kBvhLeafBit) != 0u) {
        uint p = ref & ~kBvhLeafBit;
        if (p < first || p - first >= count) continue;
        uint c = p - first;
        uvec4 ids = geomClosedMeshIds(m, c);
        vec3 p0, p1, p2;
        geomClosedMeshCorners(m, ids, p0, p1, p2);
        // The triangle's box, as the CPU's BVH builds it (the corners' least and greatest coordinates).
        if (!geomMeshMeshBoxesOverlap(min(min(p0, p1), p2), max(max(p0, p1), p2), lo, hi)) continue;
        TriClosest cp = triClosestPoint(x, p0, p1, p2);
        // The CPU keeps the first of equal distances in cell order: the least (distance, cell).
        if (geomClosedMeshCloser(any, cp.dist2, best.dist2) || (cp.dist2 == best.dist2 && c < bestCell)) {
          any = true;
          best = cp;
          bestCell = c;
        }
        continue;
      }
      // The children, the nearer one on top.
      BvhNode n = treeNodes[ref];
      uint nearRef = n.left;
      uint farRef = n.right;
      vec3 llo, lhi, rlo, rhi;
      if (geomTreeRefBox(nearRef, llo, lhi) && geomTreeRefBox(farRef, rlo, rhi) &&
          geomBoxDist2(x, rlo, rhi) < geomBoxDist2(x, llo, lhi)) {
        nearRef = n.right;
        farRef = n.left;
      }
      if (farRef != kBvhNone && geomWalkTop < kGeomWalkStackSize) {
        geomWalkStack[geomWalkTop] = farRef;
        geomWalkTop = geomWalkTop + 1u;
      }
      if (nearRef != kBvhNone && geomWalkTop < kGeomWalkStackSize) {
        geomWalkStack[geomWalkTop] = nearRef;
        geomWalkTop = geomWalkTop + 1u;
      }
    }
  }
  return any;
}

// Cells of a vertex's triangles summed per walk (the least ones after the last summed, in order).
const uint kGeomClosedMeshNormalBatch = 8u;

// The pseudonormal of feature `corners` (geomTriCorners) of triangle `cell` (vertex numbers ids) of
// closed surface mesh m (tree cells from `first`), as the CPU driver's (MeshQueries::State::normals).
vec3 geomClosedMeshPseudonormal(GeomShape m, uint first, uint cell, uvec4 ids, uint corners) {
  vec3 p0, p1, p2;
  geomClosedMeshCorners(m, ids, p0, p1, p2);
  vec3 face = geomTriangleNormal(p0, p1, p2);
  if (corners == 7u) return face;
  uint end = first + uint(m.p2.y);
  uint leaf;
  if (!(corners == 1u || corners == 2u || corners == 4u)) {
    // An edge: the neighbour across it (one: validated closed) holds the reversed edge; its box holds the edge's.
    uint k = geomClosedMeshEdgeOf(corners);
    uint from = ids[k];
    uint to = ids[(k + 1u) % 3u];
    vec3 a = geomPointAt(m.info.y + from);
    vec3 b = geomPointAt(m.info.y + to);
    geomWalkBegin();
    for (uint outer = 0u; outer < 65535u; ++outer) {
      for (uint inner = 0u; inner < kGeomMeshPairChunk; ++inner) {
        if (!geomWalkNext(min(a, b), max(a, b), first, end, leaf)) return face;
        uvec4 j = geomClosedMeshIds(m, leaf - first);
        if ((j.x == to && j.y == from) || (j.y == to && j.z == from) || (j.z == to && j.x == from)) {
          vec3 q0, q1, q2;
          geomClosedMeshCorners(m, j, q0, q1, q2);
          return face + geomTriangleNormal(q0, q1, q2);
        }
      }
    }
    return face;
  }
  // A vertex: its triangles (their boxes hold it) in cell order, a batch of the least cells after
  // the last summed per walk.
  uint v = ids[geomClosedMeshVertexCorner(corners)];
  vec3 pv = geomPointAt(m.info.y + v);
  vec3 sum = vec3(0.0f);
  bool started = false;
  uint last = 0u;
  for (uint walks = 0u; walks < 65535u; ++walks) {
    uint batch[kGeomClosedMeshNormalBatch];
    uint n = 0u;
    bool more = false;
    geomWalkBegin();
    bool walking = true;
    for (uint outer = 0u; outer < 65535u && walking; ++outer) {
      for (uint inner = 0u; inner < kGeomMeshPairChunk && walking; ++inner) {
        walking = geomWalkNext(pv, pv, first, end, leaf);
        uint c = leaf - first;
        if (!walking || (started && c <= last)) continue;
        uvec4 j = geomClosedMeshIds(m, c);
        if (j.x != v && j.y != v && j.z != v) continue;
        if (n == kGeomClosedMeshNormalBatch) {
          more = true;
          if (c > batch[n - 1u]) continue;
          n = n - 1u;  // the largest leaves the batch
        }
        uint at = n;
        for (uint s = 0u; s < kGeomClosedMeshNormalBatch && at > 0u && batch[at - 1u] > c; ++s) {
          batch[at] = batch[at - 1u];
          at = at - 1u;
        }
        batch[at] = c;
        n = n + 1u;
      }
    }
    for (uint i = 0u; i < n; ++i) {
      uvec4 j = geomClosedMeshIds(m, batch[i]);
      vec3 q[3];
      geomClosedMeshCorners(m, j, q[0], q[1], q[2]);
      vec3 nrm = geomTriangleNormal(q[0], q[1], q[2]);
      for (uint k = 0u; k < 3u; ++k) {
        if (j[k] == v) sum += nrm * geomCornerAngle(q[k], q[(k + 1u) % 3u], q[(k + 2u) % 3u]);
      }
    }
    if (n == 0u || !more) break;
    last = batch[n - 1u];
    started = true;
  }
  return sum;
}

// Point x (index pointIndex in its set, or a vertex of another mesh: meshVertex) against closed
// surface mesh m (its cells from tree cell `first`): elements em (the mesh's) and ep (the point's)
// when x is inside.
bool geomClosedMeshPointSlot(GeomShape m, uint first, vec3 x, uint pointIndex, bool meshVertex,
                             out GeomElement em, out GeomElement ep) {
  em = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  ep = em;
  float radius = m.p2.z;
  vec3 lo, hi;
  geomClosedMeshReach(x, radius, lo, hi);
  TriClosest best;
  uint bestCell;
  if (!geomClosedMeshNearest(m, first, x, lo, hi, best, bestCell) || !geomClosedMeshWithin(best.dist2, radius)) {
    return false;
  }
  uvec4 ids = geomClosedMeshIds(m, bestCell);
  uint corners = geomTriCorners(best);
  vec3 pn = geomClosedMeshPseudonormal(m, first, bestCell, ids, corners);
  bool hit = geomClosedMeshPoint(x, best.point, pn, ids, bestCell, corners, pointIndex, em, ep);
  if (meshVertex) ep.pad = geomCellWord(kGeomCellVertex, 0u);
  return hit;
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_CLOSED_MESH_SLOT_H
