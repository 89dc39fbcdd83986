// GLSL only: the COUNT and WRITE passes of one pair family, and the basic, manifold and convex
// families' QUERY COUNT and QUERY WRITE (shared/geometry_queries_bindings.h describes them). A family
// shader (shaders/geometry_queries_<family>.comp) defines VKC_GEOM_FAMILY
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
#include "geometry_queries_device_checks.h"
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

// Slot `slot` of query q (its query and geometries read): elements ea, eb (query field set) and,
// when true, a contact. stateIndex, newState, hasState: a continuous slot's state entry and new value.
// main() calls it once (see there).
bool evaluatePair(uint q, GeomQuery query, GeomShape a, GeomShape b, uvec2 range, uint slot, out GeomElement ea,
                  out GeomElement eb, out uint stateIndex, out vec4 newState, out bool hasState) {
  hasState = false;
  newState = vec4(0.0f);
  GeomShape prevA = a;
  GeomShape prevB = b;
#if VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_CONTINUOUS
  if (pc.moving != 0u) {  // only continuous queries read the previous poses
    prevA = prevGeometries[clampIndex(query.a, pc.geometryCount)];
    prevB = prevGeometries[clampIndex(query.b, pc.geometryCount)];
  }
#endif
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

// Slot s of this family's tiles: its query q, the query and its geometries, and its slot within the
// query; false for a slot in a gap between families, or of a query of another family (not in a
// valid layout): no contact, nothing to evaluate.
bool slotQuery(uint s, out uint q, out GeomQuery query, out GeomShape a, out GeomShape b, out uvec2 range,
               out uint slot) {
  q = queryOfSlot(s);
  range = slotRange[q];
  slot = s - range.x;
  if (s < range.x || s >= range.y) return false;  // before any read of the query (a gap's slot reads none)
  query = queries[q];
  a = geometries[clampIndex(query.a, pc.geometryCount)];
  b = geometries[clampIndex(query.b, pc.geometryCount)];
  return geomQueryFamily(a.info.x, b.info.x, query.method) == uint(VKC_GEOM_FAMILY);
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

// --- Primitive pairs (geometry_queries_bindings.h: QUERY COUNT, QUERY WRITE) ---

// The most slots a QUERY pass evaluates per query. The convex family (cylinder-cylinder, cylinder-box
// and a mesh against a cylinder) evaluates an invocation's contacts once, before the loop over its
// slots (evaluateConvex): with GJK and EPA inside a loop of up to kGeomPrimitiveMaxSlots, NVIDIA's
// compiler (driver 580, an H100, 2026-11-27) failed to create the convex QUERY pipelines
// (VK_ERROR_UNKNOWN after tens of seconds; [[dont_unroll]] did not help), while the basic and
// manifold families' compiled. The loop then only picks the evaluated contacts.
const uint kFamilyQuerySlots = kGeomPrimitiveMaxSlots;

#if VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_CONVEX
// The convex family's contacts of one invocation, evaluated once (evaluateConvex) and picked by slot
// (convexContact). A primitive pair (canonical order; `swapped`: the query's a is t, as
// geomSlotContact swaps them): its deepest contact (geomConvexSearchDeepest) and, where it rests,
// its patch (geomCylinderBoxPatch, geomCylinderCylinderPatch) with the points behind the reference
// plane listed (`points`), so that contact k is slot k as geomConvexManifold gives it; a slot pass's
// invocation skips the search for a slot that geomCylinderBoxSlotMayHit or
// geomCylinderCylinderSlotMayHit rules out. A mesh pair's slot `slot` (geomMeshSlot) as contact 0.
// No GeomManifold: lavapipe took about half again as long to create the family's pipelines with one.
struct ConvexEval {
  uint first;  // the slot of contact 0
  uint count;  // contacts
  bool mesh;
  bool swapped;
  GeomElement meshA;  // a mesh pair's contact
  GeomElement meshB;
  vec3 pS;  // a primitive pair's deepest contact
  float depth;
  vec3 u;
  GeomRestPatch rest;
  uint restCount;  // its points behind the reference plane (0: the deepest contact alone)
  uint points[8];
};

ConvexEval evaluateConvex(uint q, GeomShape a, GeomShape b, uint slot) {
  ConvexEval e;
  e.first = 0u;
  e.count = 0u;
  e.mesh = geomIsMesh(a.info.x) || geomIsMesh(b.info.x);
  e.swapped = false;
  e.pS = vec3(0.0f);
  e.depth = 0.0f;
  e.u = vec3(0.0f);
  e.restCount = 0u;
  if (e.mesh) {
    e.first = slot;
    if (geomMeshSlot(a, b, q, slot, e.meshA, e.meshB)) e.count = 1u;
    return e;
  }
  e.swapped = geomSwapped(a, b);
  GeomShape s = e.swapped ? b : a;
  GeomShape t = e.swapped ? a : b;
  if (t.info.x == kGeomCylinder ? !geomCylinderCylinderSlotMayHit(s, t, slot)
                                : !geomCylinderBoxSlotMayHit(s, t, slot)) {
    return e;
  }
  if (!geomConvexSearchDeepest(s, t, e.pS, e.depth, e.u)) return e;
  bool resting = t.info.x == kGeomOrientedBox ? geomCylinderBoxPatch(s, t, e.u, e.rest)
                                              : geomCylinderCylinderPatch(s, t, e.u, e.rest);
  for (uint i = 0u; resting && i < e.rest.poly.n; ++i) {
    GeomElement es, et;
    if (geomRestContact(e.rest, i, es, et)) {
      e.points[e.restCount] = i;
      e.restCount += 1u;
    }
  }
  e.count = max(e.restCount, 1u);
  return e;
}

// Contact c (< e.count) of an evaluation, sides in the query's order.
void convexContact(ConvexEval e, uint c, out GeomElement ea, out GeomElement eb) {
  if (e.mesh) {
    ea = e.meshA;
    eb = e.meshB;
    return;
  }
  GeomElement es, et;
  if (e.restCount > 0u) {
    geomRestContact(e.rest, e.points[min(c, 7u)], es, et);
  } else {
    geomConvexElements(e.pS, e.depth, e.u, es, et);
  }
  geomUnswap(e.swapped, es, et, ea, eb);
}
#endif

// The family that writes query q's entry (its pair's family when the query is a static pair of two
// primitives with valid indices and that family is dispatched; else the lowest family dispatched),
// and `routed`: the query goes to its pair's family (whose values are then checked). Reads the two
// geometries' types only: every family's QUERY COUNT routes every query, and only the routed family
// reads the geometries whole.
uint primitiveRoute(GeomQuery query, out bool routed) {
  routed = false;
  uint lowest = uint(findLSB(pc.families));
  if (query.a >= pc.geometryCount || query.b >= pc.geometryCount) return lowest;
  if (query.method != kGeomMethodStatic || query.state != 0u) return lowest;
  uint ta = geometries[query.a].info.x;
  uint tb = geometries[query.b].info.x;
  if (ta > kGeomPlane || tb > kGeomPlane) return lowest;
  uint f = geomQueryFamily(ta, tb, query.method);
  if (((pc.families >> f) & 1u) == 0u) return lowest;
  routed = true;
  return f;
}

// Diagnostic builds only (scripts/device_variants.sh; never in the library, whose results they would
// change): VKC_DIAG_ALWAYS_LOAD reads both geometries of every query QUERY COUNT routes here,
// VKC_DIAG_NO_CHECKS drops its checks of their values, VKC_DIAG_NO_ATOMICS makes its atomics plain
// (racy) stores. Each removes one difference between QUERY COUNT and QUERY WRITE, to find what a
// driver's compiler fails on (the convex family's QUERY COUNT on the H100, driver 580).

// COUNT sets the bit of every slot that hits (atomicOr: no workgroup barrier, see
// geometry_queries_bindings.h); WRITE evaluates the counted slots again (and every continuous slot, which
// stores its new state) and writes their elements. The primitive-pair passes take a query per
// invocation and its slots in order: QUERY COUNT counts its contacts into its entry, QUERY WRITE
// writes its range and evaluates them again to write them. Every pass is one body with a single
// evaluatePair call in one loop over the invocation's slots (one slot, or the query's): the
// specialization constant then removes the other passes' few lines only, where two calls made a
// driver inline the family's whole math twice before dropping one copy (lavapipe took twice as long
// to create each pipeline). No workgroup barrier in any pass (see above).
void main() {
  const bool perQuery = kPass == kGeomPassQueryCount || kPass == kGeomPassQueryWrite;
  uint q = 0u;
  // Defined on every path (a QUERY COUNT invocation of an unrouted query reads no geometry): no
  // undefined value reaches the loop below. The H100's driver (580) failed to create the convex
  // family's QUERY COUNT pipeline while its QUERY WRITE, which assigns both first, compiled; whether
  // these undefined values were the cause is not yet known (not run on a GPU since).
  GeomQuery query = GeomQuery(0u, 0u, 0u, 0u);
  GeomShape a = GeomShape(vec4(0.0f), vec4(0.0f), vec4(0.0f), uvec4(0u));
  GeomShape b = a;
  uvec2 range = uvec2(0u);
  uint lo = 0u, hi = 0u;  // the slots evaluated
  uint s = 0u;            // slot passes: the slot, in the batch's layout
  uint tile = 0u;
  bool counted = false;
  uint at = 0u;           // QUERY WRITE: where the query's next contact goes
  uint end = 0u;          // QUERY WRITE: past its last contact (COUNT's count: never more are written)
  bool valid = false;     // QUERY COUNT: the query passed the checks
  uint block = 0u;        // QUERY passes: the query's block (its sums in groupSums)
  if (perQuery) {
    q = linearGroup() * kGeomGroupSize + gl_LocalInvocationIndex;
    if (q >= pc.queryCount) return;
    block = min(q / (kGeomGroupSize * max(pc.queryChunks, 1u)), max(pc.blockCount, 1u) - 1u);
    if (kPass == kGeomPassQueryWrite) {
      uint entry = tileMasks[q];
      if (geomPrimitiveEntryFamily(entry) != uint(VKC_GEOM_FAMILY)) return;
      uint n = geomPrimitiveEntryContacts(entry);
      at = groupSums[2u * block] + geomPrimitiveEntryPrefix(entry);
      ranges[q] = uvec2(at, n);
      end = at + n;
      if (n == 0u || at >= pc.capacity) return;  // no contact, or none below the capacity
      query = queries[q];
      a = geometries[clampIndex(query.a, pc.geometryCount)];
      b = geometries[clampIndex(query.b, pc.geometryCount)];
      hi = min(geomPrimitivePairSlots(min(a.info.x, b.info.x), max(a.info.x, b.info.x)), kFamilyQuerySlots);
    } else {
      query = queries[q];
      bool routed;
      if (primitiveRoute(query, routed) != uint(VKC_GEOM_FAMILY)) return;
#ifdef VKC_DIAG_ALWAYS_LOAD
      a = geometries[clampIndex(query.a, pc.geometryCount)];
      b = geometries[clampIndex(query.b, pc.geometryCount)];
#else
      if (routed) {
        a = geometries[query.a];
        b = geometries[query.b];
      }
#endif
#ifdef VKC_DIAG_NO_CHECKS
      valid = routed;
#else
      valid = routed && geomDeviceShapeValid(a, pc.pointCount, pc.gridSampleCount) &&
              geomDeviceShapeValid(b, pc.pointCount, pc.gridSampleCount) &&
              geomMethodSupported(min(a.info.x, b.info.x), max(a.info.x, b.info.x), query.method);
#endif
      // (valid: two primitives)
      hi = valid ? min(geomPrimitivePairSlots(min(a.info.x, b.info.x), max(a.info.x, b.info.x)),
                       kFamilyQuerySlots)
                 : 0u;
#ifdef VKC_DIAG_NO_ATOMICS
      if (!valid) groupSums[2u * block + 1u] += 1u;
#else
      if (!valid) atomicAdd(groupSums[2u * block + 1u], 1u);
#endif
    }
    range = uvec2(0u, hi);
  } else {
    uint first, end;
    if (!groupTile(tile, first, end)) return;
    s = tile * kGeomGroupSize + gl_LocalInvocationIndex;
    if (s >= pc.slotCount || s < first || s >= end) return;
    if (kPass != kGeomPassCount) {
      counted = slotHit(s);
      // Continuous slots are evaluated whether they hit or not: each stores its new state.
      if (!counted && VKC_GEOM_FAMILY != VKC_GEOM_FAMILY_CONTINUOUS) return;
    }
    uint slot;
    if (!slotQuery(s, q, query, a, b, range, slot)) return;
    lo = slot;
    hi = slot + 1u;
  }
  uint hits = 0u;
#if VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_CONVEX
  ConvexEval convex;
  convex.first = 0u;
  convex.count = 0u;
  if (hi > lo) convex = evaluateConvex(q, a, b, lo);
#endif
  // At most kFamilyQuerySlots iterations in the QUERY passes (lo is 0 there), one in the slot passes.
  for (uint slot = lo; slot < hi && slot - lo < kFamilyQuerySlots; ++slot) {
    GeomElement ea, eb;
    uint stateIndex;
    vec4 newState;
    bool hasState;
#if VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_CONVEX
    uint c = slot - convex.first;
    bool hit = c < convex.count;
    ea = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
    eb = ea;
    if (hit) convexContact(convex, c, ea, eb);
    ea.query = q;
    eb.query = q;
    stateIndex = query.state + slot;
    newState = vec4(0.0f);
    hasState = false;
#else
    bool hit = evaluatePair(q, query, a, b, range, slot, ea, eb, stateIndex, newState, hasState);
#endif
    if (kPass == kGeomPassQueryCount) {
      hits += hit ? 1u : 0u;
    } else if (kPass == kGeomPassQueryWrite) {
      // The same arithmetic as QUERY COUNT finds the same hits; the range's end bounds the writes
      // all the same (a device that evaluated differently could not overwrite the next query's).
      if (hit) {
        if (at < pc.capacity) {  // overflow: never written past the end
          elementsA[at] = ea;
          elementsB[at] = eb;
        }
        at += 1u;
        if (at >= end || at >= pc.capacity) break;
      }
    } else if (kPass == kGeomPassCount) {
      if (hit) atomicOr(tileMasks[2u * tile + (gl_LocalInvocationIndex >> 5u)], 1u << (gl_LocalInvocationIndex & 31u));
    } else {
#if VKC_GEOM_FAMILY == VKC_GEOM_FAMILY_CONTINUOUS
      if (hasState && stateIndex < pc.stateCount) state[stateIndex] = newState;
#endif
      if (hit && counted) {  // same arithmetic as COUNT: hit == counted
        uint pos = contactsBefore(s);
        if (pos < pc.capacity) {  // overflow: never written past the end
          elementsA[pos] = ea;
          elementsB[pos] = eb;
        }
      }
    }
  }
  if (kPass == kGeomPassQueryCount) {
    // An atomic store, not a plain one: the synchronization validation layer (Debian 12's) then sees
    // this module's tileMasks accesses as before (the slot passes' atomicOr), where a plain store made
    // it take the WRITE level's family passes for writers of the masks the RANGES pass reads beside them.
#ifdef VKC_DIAG_NO_ATOMICS
    tileMasks[q] = geomPrimitiveEntry(uint(VKC_GEOM_FAMILY), hits);
    if (hits > 0u) groupSums[2u * block] += hits;
#else
    atomicExchange(tileMasks[q], geomPrimitiveEntry(uint(VKC_GEOM_FAMILY), hits));
    if (hits > 0u) atomicAdd(groupSums[2u * block], hits);
#endif
  }
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_FAMILY_H
