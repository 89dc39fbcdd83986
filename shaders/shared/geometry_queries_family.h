// GLSL only: the COUNT and WRITE passes of one pair family (shared/geometry_queries_bindings.h
// describes them). A family shader (shaders/geometry_queries_<family>.comp) defines VKC_GEOM_FAMILY
// (one of the VKC_GEOM_FAMILY_* numbers of shared/geometry_queries.h) and includes this file; the
// shared math then compiles only that family's pairs (VKC_GEOM_WITH). The per-slot arithmetic is
// geomQuerySlot (shared/geometry_queries_implicit.h over shared/geometry_queries_math.h), which the
// CPU twin (src/cpu/geometry_queries.cpp) compiles too; a mesh query's (the mesh family's, and the
// convex and implicit families' mesh pairs) is geomMeshSlot (shared/geometry_queries_mesh_slot.h: the
// per-cell functions the CPU's mesh driver calls), the mesh-mesh family's geomMeshMeshSlot
// (shared/geometry_queries_mesh_mesh_slot.h), the mesh CCD family's geomMeshCcdSlot
// (shared/geometry_queries_mesh_ccd_slot.h).
#ifndef VKC_SHARED_GEOMETRY_QUERIES_FAMILY_H
#define VKC_SHARED_GEOMETRY_QUERIES_FAMILY_H
#ifdef __cplusplus
#error "geometry_queries_family.h is GLSL only"
#endif
#ifndef VKC_GEOM_FAMILY
#error "define VKC_GEOM_FAMILY before including geometry_queries_family.h"
#endif
#define VKC_GEOM_FAMILIES (1 << VKC_GEOM_FAMILY)
#include "geometry_queries_stage.h"
#include "geometry_queries_spans.h"
// Every function of the shared math returns `precise` values and writes `precise` out parameters:
// glslang then marks every operation feeding them NoContraction, so that the device does not fuse
// a * b + c where the CPU twin (built with -ffp-contract=off) rounds twice.
#undef VKC_FN
#define VKC_FN precise
#undef VKC_OUT
#define VKC_OUT(type) out precise type
#undef VKC_INOUT
#define VKC_INOUT(type) inout precise type
#include "geometry_queries_math.h"

layout(constant_id = 0) const uint kPass = kGeomPassCount;

// The accessors geometry_queries_implicit.h reads the arrays through.
vec3 geomPointAt(uint i) { return vec3(points[clampIndex(i, pc.pointCount)]); }
vec3 geomPreviousPointAt(uint i) { return vec3(prevPoints[clampIndex(i, pc.pointCount)]); }
float geomGridSampleAt(uint i) { return gridSamples[clampIndex(i, pc.gridSampleCount)]; }
vec4 geomStateAt(uint i) { return state[clampIndex(i, pc.stateCount)]; }
#if VKC_GEOM_FAMILY != VKC_GEOM_FAMILY_MESH && VKC_GEOM_FAMILY != VKC_GEOM_FAMILY_MESH_MESH && \
    VKC_GEOM_FAMILY != VKC_GEOM_FAMILY_MESH_CCD
#include "geometry_queries_implicit.h"
#endif
// The families holding mesh pairs (geometry_queries_mesh_slot.h).
#define VKC_GEOM_FAMILY_HAS_MESHES                                                                       \
  (VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_MESH || VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_CONVEX ||             \
   VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_IMPLICIT)
#if VKC_GEOM_FAMILY_HAS_MESHES
uint geomCellEntryAt(uint i) { return cells[clampIndex(i, pc.cellCount)]; }
#include "geometry_queries_mesh_slot.h"
#elif VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_MESH_MESH
uint geomCellEntryAt(uint i) { return cells[clampIndex(i, pc.cellCount)]; }
#include "geometry_queries_mesh_mesh_slot.h"
#elif VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_MESH_CCD
uint geomCellEntryAt(uint i) { return cells[clampIndex(i, pc.cellCount)]; }
#include "geometry_queries_mesh_ccd_slot.h"
#endif

// Evaluates slot s of this family's tiles: its query q and, when true, its elements (query field
// set). stateIndex, newState, hasState: a continuous slot's state entry and new value. A slot in a gap
// between families, or of a query of another family (not in a valid layout), is no contact.
bool evaluateSlot(uint s, out uint q, out GeomElement ea, out GeomElement eb, out uint stateIndex, out vec4 newState,
                  out bool hasState) {
  q = queryOfSlot(s);
  hasState = false;
  stateIndex = 0u;
  newState = vec4(0.0f);
  uvec2 range = slotRange[q];
  if (s < range.x || s >= range.y) return false;
  GeomQuery query = queries[q];
  GeomShape a = geometries[clampIndex(query.a, pc.geometryCount)];
  GeomShape b = geometries[clampIndex(query.b, pc.geometryCount)];
  if (geomQueryFamily(a.info.x, b.info.x, query.method) != uint(VKC_GEOM_FAMILY)) return false;
  GeomShape prevA = a;
  GeomShape prevB = b;
#if VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_CONTINUOUS
  if (pc.moving != 0u) {  // only continuous queries read the previous poses
    prevA = prevGeometries[clampIndex(query.a, pc.geometryCount)];
    prevB = prevGeometries[clampIndex(query.b, pc.geometryCount)];
  }
#endif
  uint slot = s - range.x;
  stateIndex = query.state + slot;
#if VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_MESH
  bool hit = geomMeshSlot(a, b, q, slot, ea, eb);
#elif VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_MESH_MESH
  bool hit = geomMeshMeshSlot(a, b, q, query.a, query.b, range, slot, ea, eb);
#elif VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_MESH_CCD
  bool hit = geomMeshCcdSlot(a, b, q, query.a, query.b, range, slot, ea, eb);
#elif VKC_GEOM_FAMILY_HAS_MESHES
  bool hit = geomIsMesh(a.info.x) || geomIsMesh(b.info.x)
                 ? geomMeshSlot(a, b, q, slot, ea, eb)
                 : geomQuerySlot(a, b, prevA, prevB, query.method, query.state, slot, ea, eb, newState, hasState);
#else
  bool hit = geomQuerySlot(a, b, prevA, prevB, query.method, query.state, slot, ea, eb, newState, hasState);
#endif
  ea.query = q;
  eb.query = q;
  return hit;
}

// This invocation's tile (the tiles buffer at this dispatch's base, or the workgroup's span in a span
// dispatch: geometry_queries_spans.h), whether the workgroup has one, and the slots [lo, hi) it evaluates.
bool groupTile(out uint tile, out uint lo, out uint hi) {
  uint g = linearGroup();
  tile = 0u;
  lo = 0u;
  hi = pc.slotCount;
  if (pc.spanRecords != 0u) return geomSpanTile(g, uint(VKC_GEOM_FAMILY), tile, lo, hi) && tile < pc.groupCount;
  if (g >= pc.tileCount) return false;
  tile = tiles[clampIndex(pc.tileBase + g, pc.groupCount)];
  return tile < pc.groupCount;
}

// COUNT sets the bit of every slot that hits (atomicOr: no workgroup barrier, see
// geometry_queries_bindings.h); WRITE evaluates the counted slots again (and every continuous slot, which
// stores its new state) and writes their elements. Both passes are one body with a single evaluateSlot
// call: the specialization constant then removes the other pass's few lines only, where two calls
// made a driver inline the family's whole math twice before dropping one copy (lavapipe took twice as
// long to create each pipeline).
void main() {
  uint tile, lo, hi;
  if (!groupTile(tile, lo, hi)) return;
  uint s = tile * kGeomGroupSize + gl_LocalInvocationIndex;
  if (s >= pc.slotCount || s < lo || s >= hi) return;
  bool counted = false;
  if (kPass != kGeomPassCount) {
    counted = slotHit(s);
    // Continuous slots are evaluated whether they hit or not: each stores its new state.
    if (!counted && VKC_GEOM_FAMILY != VKC_GEOM_FAMILY_CONTINUOUS) return;
  }
  uint q;
  GeomElement ea, eb;
  uint stateIndex;
  vec4 newState;
  bool hasState;
  bool hit = evaluateSlot(s, q, ea, eb, stateIndex, newState, hasState);
  if (kPass == kGeomPassCount) {
    if (hit) atomicOr(tileMasks[2u * tile + (gl_LocalInvocationIndex >> 5u)], 1u << (gl_LocalInvocationIndex & 31u));
    return;
  }
#if VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_CONTINUOUS
  if (hasState && stateIndex < pc.stateCount) state[stateIndex] = newState;
#endif
  if (!hit || !counted) return;  // same arithmetic as COUNT: hit == counted
  uint at = contactsBefore(s);
  if (at >= pc.capacity) return;  // overflow: never written past the end
  elementsA[at] = ea;
  elementsB[at] = eb;
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_FAMILY_H
