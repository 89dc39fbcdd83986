// Private interface of the geometry queries' CPU twins (src/cpu/geometry_queries.cpp, the scalar
// loop over (query, slot); src/cpu/geometry_queries_simd.cpp, Highway SIMD across the points of a
// point set and across the queries of a run of closed-form primitive pairs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "shared/geometry_queries.h"
#include "vkcollide/geometry_queries.h"

namespace vkc::cpu {

// validate()'s first pass over the geometries (src/scene/geometry_queries_validate.cpp): a primitive
// (sphere, capsule, cylinder, oriented box, plane) is clearly valid when it passes every check of
// the detailed validation, tested without building a Status per check (a batch holds many geometries
// and validation runs on every call). A geometry that is not clearly valid goes through the detailed
// checks, which name the field; a false here on a valid geometry costs only time (the unit band is a
// little inside the tolerance, so the boundary cases take the exact check). The per-component
// checks are bit tests over the 12 float words p0, p1, p2 with masks per type: finite (exponent not
// all ones), zero (+0 or -0: the detailed `!= 0.0f`), >= 0 (no sign bit; a -0 there is not clear,
// and the detailed `< 0.0f` accepts it).
struct PrimitiveRule {
  uint32_t finite[16];  // words 12..15 (type, first, count, flags) are checked apart: 0 here
  uint32_t zero[16];
  uint32_t nonNegative[16];
  int unitComponents;  // p1's unit vector: 3 (an axis or normal), 4 (a quaternion) or 0
};
inline constexpr uint32_t kRuleAll = 0xFFFFFFFFu;
inline constexpr uint32_t kRuleNone = 0u;
namespace rule_words {
constexpr uint32_t Y = kRuleAll;
constexpr uint32_t N = kRuleNone;
// Indexed by type: sphere, capsule, cylinder, oriented box, plane.
inline constexpr PrimitiveRule kPrimitiveRules[5] = {
    // sphere: p0 finite, p0.w >= 0, p1 and p2 zero.
    {{Y, Y, Y, Y, N, N, N, N, N, N, N, N}, {N, N, N, N, Y, Y, Y, Y, Y, Y, Y, Y}, {N, N, N, Y, N, N, N, N, N, N, N, N}, 0},
    // capsule: p0, p1.xyz finite, p0.w >= 0, p1.w and p2 zero.
    {{Y, Y, Y, Y, Y, Y, Y, N, N, N, N, N}, {N, N, N, N, N, N, N, Y, Y, Y, Y, Y}, {N, N, N, Y, N, N, N, N, N, N, N, N}, 0},
    // cylinder: p0, p1 finite, p0.w and p1.w >= 0, p2 zero, p1.xyz unit.
    {{Y, Y, Y, Y, Y, Y, Y, Y, N, N, N, N}, {N, N, N, N, N, N, N, N, Y, Y, Y, Y}, {N, N, N, Y, N, N, N, Y, N, N, N, N}, 3},
    // oriented box: p0.xyz, p1, p2.xyz finite, p0.w and p2.w zero, p2.xyz >= 0, p1 a unit quaternion.
    {{Y, Y, Y, N, Y, Y, Y, Y, Y, Y, Y, N}, {N, N, N, Y, N, N, N, N, N, N, N, Y}, {N, N, N, N, N, N, N, N, Y, Y, Y, N}, 4},
    // plane: p0.xyz, p1.xyz finite, p0.w, p1.w and p2 zero, p1.xyz unit.
    {{Y, Y, Y, N, Y, Y, Y, N, N, N, N, N}, {N, N, N, Y, N, N, N, Y, Y, Y, Y, Y}, {N, N, N, N, N, N, N, N, N, N, N, N}, 3},
};
}  // namespace rule_words
using rule_words::kPrimitiveRules;

// The checks apart from the float words: a primitive type, no range, flags only a plane's.
inline bool primitiveHeaderValid(const Geometry& g) {
  const uint32_t type = static_cast<uint32_t>(g.type);
  if (type > static_cast<uint32_t>(GeometryType::kPlane) || g.first != 0 || g.count != 0) return false;
  return g.flags == 0 || (g.type == GeometryType::kPlane && g.flags == kGeometryFlagBidirectional);
}

// |length - 1| <= 1e-3 (kGeomUnitTolerance) holds for squared lengths in [0.998001, 1.002001]; the
// band [0.998002, 1.002] is 1e-6 inside it, more than the float sum's rounding (7 roundings of 2^-24
// relative, < 5e-7), so a length accepted here passes the detailed check (in double).
inline bool primitiveUnitClear(const Geometry& g, int components) {
  if (components == 0) return true;
  const float x = g.p1.x, y = g.p1.y, z = g.p1.z, w = components == 4 ? g.p1.w : 0.0f;
  const float len2 = (x * x + y * y) + (z * z + w * w);
  return len2 >= 0.998002f && len2 <= 1.002f;
}

inline bool primitiveClearlyValid(const Geometry& g) {
  if (!primitiveHeaderValid(g)) return false;
  const PrimitiveRule& rule = kPrimitiveRules[static_cast<uint32_t>(g.type)];
  uint32_t w[12];
  std::memcpy(w, &g.p0, sizeof w);
  uint32_t bad = 0;
  for (int k = 0; k < 12; ++k) {
    const uint32_t magnitude = w[k] & 0x7FFFFFFFu;
    const uint32_t notFinite = (w[k] & 0x7F800000u) == 0x7F800000u ? kRuleAll : 0u;
    const uint32_t notZero = magnitude != 0u ? kRuleAll : 0u;
    const uint32_t negative = (w[k] & 0x80000000u) != 0u ? kRuleAll : 0u;
    bad |= (rule.finite[k] & notFinite) | (rule.zero[k] & notZero) | (rule.nonNegative[k] & negative);
  }
  return bad == 0u && primitiveUnitClear(g, rule.unitComponents);
}

// The index of the first geometry at or after `begin` that is not clearly valid (primitiveClearlyValid),
// geometries.size() when none: Highway lanes over each geometry's words where the build has SIMD.
// types[i] is set to the type of each clearly valid geometry i it passes (types holds
// geometries.size() bytes).
size_t firstUnclearGeometry(std::span<const Geometry> geometries, size_t begin, uint8_t* types);

// The first query at or after `begin` that validate()'s detailed query checks must see, queries.size()
// when none: the others are static (method 0, state 0) queries of two geometries below geometryCount
// whose types (types[a], types[b]: the validated geometries' type bytes) are primitives but not two
// planes. Highway lanes over the queries' words where the build has SIMD.
size_t firstQueryToCheck(std::span<const GeometryQuery> queries, size_t geometryCount, const uint8_t* types,
                         size_t begin);

// firstQueryToCheck's test of one query: static, state 0, both geometries below geometryCount, of
// primitive types (types[a], types[b]) but not two planes.
inline bool staticPrimitiveTypes(const GeometryQuery& q, const uint8_t* types) {
  const uint32_t ta = types[q.a];
  const uint32_t tb = types[q.b];
  return (ta > tb ? ta : tb) <= gpu::kGeomPlane && ta + tb != 2u * gpu::kGeomPlane;
}
inline bool staticPrimitiveQuery(const GeometryQuery& q, size_t geometryCount, const uint8_t* types) {
  return q.a < geometryCount && q.b < geometryCount && q.method == GeometryMethod::kStatic && q.state == 0 &&
         staticPrimitiveTypes(q, types);
}

// The public element of a device-layout element (the same fields; pad is a mesh element's cell word).
inline ContactElement toContactElement(const gpu::GeomElement& e, uint32_t query) {
  ContactElement out;
  out.point = Float4{e.point.x, e.point.y, e.point.z, e.point.w};
  out.direction = Float4{e.direction.x, e.direction.y, e.direction.z, e.direction.w};
  out.type = static_cast<ContactElementType>(e.type);
  out.index = e.index;
  out.query = query;
  out.cell = e.pad;
  return out;
}

// Whether pointSetContactsSimd handles a static query of a point set against `primitive`: a sphere,
// capsule, cylinder, oriented box or plane; an implicit geometry where the input's grid samples
// (sampleCount of them) are fewer than 2^31 (the gather's signed 32-bit indices).
bool pointSetSimdHandles(const gpu::GeomShape& primitive, size_t sampleCount);

// The static contacts of the points points[0, count) of a point set against `primitive`, what the
// scalar loop computes slot by slot (geomSlotContact), bit for bit, with the lanes across points.
// samples: the input's grid samples (read for an implicit geometry). pointSetIsA: the point set is
// the query's geometry a (its elements go to outA). Contact k of this query is element total + k of
// outA and outB, written only where total + k < capacity. Returns the number of contacts found.
uint64_t pointSetContactsSimd(const gpu::GeomShape& primitive, const float* samples, bool pointSetIsA,
                              const Float4* points, uint32_t count, uint32_t query, ContactElement* outA,
                              ContactElement* outB, uint64_t total, uint64_t capacity);

// The samples of the sample box (lo, size: gpu::geomShapeSampleBox) of a box, cylinder or plane
// `shape` against implicit geometry `grid` (samples: the input's grid samples, fewer than 2^31),
// what the scalar loop computes sample by sample (geomShapeGridSampleContact), bit for bit, with the
// lanes across each row of the box. shapeIsA: the shape is the query's geometry a. Output as
// pointSetContactsSimd's; returns the number of contacts found.
uint64_t shapeGridContactsSimd(const gpu::GeomShape& shape, const gpu::GeomShape& grid, const float* samples,
                               bool shapeIsA, gpu::uvec4 lo, gpu::uvec4 size, uint32_t query,
                               ContactElement* outA, ContactElement* outB, uint64_t total, uint64_t capacity);

// A run [begin, end) of static queries of a sphere against the implicit geometry `grid` (each query
// the same grid geometry, either order; the input validated, its grid samples fewer than 2^31), what
// the scalar loop computes query by query, bit for bit, with the lanes across the queries: each
// query's range written, its contact (at most one) at `total` onwards where below `capacity`.
// Returns the new total.
uint64_t sphereGridRunSimd(const GeometryQueryInput& input, size_t begin, size_t end,
                           const gpu::GeomShape& grid, ContactElement* outA, ContactElement* outB,
                           ContactRange* ranges, uint64_t total, uint64_t capacity);

// The same for a run of static queries of a capsule against `grid`: each query's contacts (up to
// kGeomCapsuleImplicitSlots, geomCapsuleGridContact's slots in order) with the lanes across the queries.
uint64_t capsuleGridRunSimd(const GeometryQueryInput& input, size_t begin, size_t end,
                            const gpu::GeomShape& grid, ContactElement* outA, ContactElement* outB,
                            ContactRange* ranges, uint64_t total, uint64_t capacity);

// The continuous contacts of points[0, count) of a point set (previous positions previous[0, count),
// state entries state[0, count), updated) against `shape`, an analytic primitive (a sphere, capsule,
// cylinder, oriented box or plane) or an implicit geometry (samples: the input's grid samples, fewer
// than 2^31: pointSetSimdHandles), whose pose at the step's start is previousPose (the shape itself
// when static): what the scalar loop computes slot by slot (geomContinuousPoint), bit for bit, with
// the lanes across the points. Per chunk of points: the start carried by the shape's motion
// (geomPoseMap), both ends' fields, a primitive's 1-Lipschitz skip and the static contact in lanes;
// then the trace (a primitive's golden-section search and bisection, a grid's cell walk and cubic
// roots) and the contact at the root in lanes over the chunk's points that need it. Output as
// pointSetContactsSimd's; returns the number of contacts found.
uint64_t continuousPointSetContactsSimd(const gpu::GeomShape& shape, const gpu::GeomShape& previousPose,
                                        const float* samples, bool pointSetIsA, const Float4* points,
                                        const Float4* previous, Float4* state, uint32_t count, uint32_t query,
                                        ContactElement* outA, ContactElement* outB, uint64_t total,
                                        uint64_t capacity);

// Test hook: a box's, cylinder's or plane's static query `query` against an implicit geometry
// (validated input) with a slot per grid sample, not only a box's or cylinder's sample box's
// (gpu::geomShapeSampleBox): the contacts of a box's or cylinder's own points' slots, then of every
// sample in grid order, each evaluated in full (no sample box, no skip: gpu geomGridSampleContactEvery),
// as (elementA, elementB). Two implicit geometries: every slot of both grids through the device's
// slot function (geomImplicitCanonicalContact), not only the samples near the other's box
// (gridPairSampleBox). Empty for another pair.
std::vector<std::pair<ContactElement, ContactElement>> everySampleContacts(const GeometryQueryInput& input,
                                                                           uint32_t query);

// A run of static queries of one closed-form primitive pair type, with the lanes across queries
// (src/cpu/geometry_queries_simd.cpp): sphere against sphere, capsule, cylinder, oriented box or
// plane; capsule-capsule; capsule-cylinder (the axis' deepest-point search in lanes too); capsule,
// cylinder or oriented box against a plane (capsule-plane: up to 2
// contacts per query, box-plane up to 8); capsule-box and box-box (the deepest-point search and the
// separating axis test in lanes, the manifold per query); cylinder-box (cylinderBoxPairsSimd, below);
// cylinder-cylinder (cylinderCylinderPairsSimd, below).
// primitivePairSimdKind(lo, hi) (lo <= hi)
// names the pair for primitivePairsSimd, or kNoPrimitivePairSimd when the scalar loop handles it (or
// the build has no SIMD).
inline constexpr uint32_t kNoPrimitivePairSimd = 0xFFFFFFFFu;
uint32_t primitivePairSimdKind(uint32_t lo, uint32_t hi);

// Queries [begin, end) of the validated input, all static and all of the pair `pair`
// (primitivePairSimdKind): what geomQueryContacts computes per query, bit for bit, contacts in slot order. Contacts are
// written in query order from element `total` of outA and outB (only below `capacity`), ranges[q]
// for each query of the run. Returns `total` plus the contacts found.
uint64_t primitivePairsSimd(const GeometryQueryInput& input, size_t begin, size_t end, uint32_t pair,
                            ContactElement* outA, ContactElement* outB, ContactRange* ranges, uint64_t total,
                            uint64_t capacity);

// primitivePairsSimd's cylinder-box runs (src/cpu/geometry_queries_cylinder_box_simd.cpp): the
// candidate directions, the inscribed boxes' bound and geomCylinderBoxCritical in lanes across the
// queries; the pairs GJK and EPA answer (an edge nearly along the axis) by the scalar code.
uint64_t cylinderBoxPairsSimd(const GeometryQueryInput& input, size_t begin, size_t end, ContactElement* outA,
                              ContactElement* outB, ContactRange* ranges, uint64_t total, uint64_t capacity);

// primitivePairsSimd's cylinder-cylinder runs (src/cpu/geometry_queries_cylinder_cylinder_simd.cpp):
// the candidate directions, the inscribed boxes' bound and geomCylinderCylinderCritical in lanes
// across the queries; the pairs with (nearly) parallel axes by the scalar code.
uint64_t cylinderCylinderPairsSimd(const GeometryQueryInput& input, size_t begin, size_t end, ContactElement* outA,
                                   ContactElement* outB, ContactRange* ranges, uint64_t total, uint64_t capacity);

// A batch whose queries are all static and of one closed-form pair type with one ball per query
// (sphere against sphere, capsule, cylinder, oriented box or plane; capsule-capsule, capsule-cylinder,
// capsule-plane, cylinder-plane), on kCpuSimd: validate() and the lanes in one pass over the
// geometries (each 64-byte record read once, validated just before its queries' lanes gather it,
// while it is in cache), then the ranges and contacts written from the staging. The result is the
// usual path's, bit for bit: nullopt (nothing written; the caller runs validate() and the usual
// path, which name any error) where the batch is not such a batch, a geometry is not clearly valid
// (primitiveClearlyValid), the input has points, grid samples, previous geometries or trees, or the
// output's sizes are wrong. `staging` is the calling thread's, kept across calls (a byte per query,
// 48 bytes per contact up to the output's capacity); always nullopt in a build without SIMD.
struct FusedStaging {
  std::unique_ptr<uint8_t[]> counts;  // per query: its contacts
  size_t countEntries = 0;
  std::unique_ptr<float[]> stash;  // per contact: 12 words (src/cpu/geometry_queries_simd.cpp)
  size_t stashEntries = 0;
};
std::optional<GeometryQueryCounts> fusedPrimitivePairs(const GeometryQueryInput& input,
                                                       const GeometryQueryOutput& output);
// The fused pass runs batches of at least this many queries: smaller ones fit the caches, where
// the usual path (validate(), then the lanes writing the output directly) is as fast or faster
// (capsule-plane at 10k: the staging's copy costs more than the second read). Tests lower it
// (setFusedMinQueries; a relaxed atomic, so setting it while others query is no data race) to run the fused pass on small batches.
inline constexpr size_t kFusedMinQueries = 65536;
size_t fusedMinQueries();
void setFusedMinQueries(size_t queries);
// Past this many bytes (the stash's contacts up to the capacity, the output's contacts, the ranges;
// twice the L2 of the machines measured) the fused pass writes them with streaming stores: they do
// not fit the caches, and no line is read before it is written (1M queries' ranges, 8 MB, streamed:
// 1.00-1.03x). Tests lower it (setFusedStreamBytes, a relaxed atomic) to run those stores
// on small batches.
inline constexpr uint64_t kFusedStreamBytes = uint64_t{4} << 20;
uint64_t fusedStreamBytes();
void setFusedStreamBytes(uint64_t bytes);

}  // namespace vkc::cpu
