// Private interface of the geometry queries' CPU twins (src/cpu/geometry_queries.cpp, the scalar
// loop over (query, slot); src/cpu/geometry_queries_simd.cpp, Highway SIMD across the points of a
// point set and across the queries of a run of closed-form primitive pairs).
#pragma once

#include <cstddef>
#include <cstdint>

#include "shared/geometry_queries.h"
#include "vkcollide/geometry_queries.h"

namespace vkc::cpu {

// Whether pointSetContactsSimd handles a static query of a point set against `primitive`: a sphere,
// capsule, cylinder, oriented box or plane.
bool pointSetSimdHandles(const gpu::GeomShape& primitive);

// The static contacts of the points points[0, count) of a point set against `primitive`, what the
// scalar loop computes slot by slot (geomSlotContact), bit for bit, with the lanes across points.
// pointSetIsA: the point set is the query's geometry a (its elements go to outA). Contact k of this
// query is element total + k of outA and outB, written only where total + k < capacity. Returns the
// number of contacts found.
uint64_t pointSetContactsSimd(const gpu::GeomShape& primitive, bool pointSetIsA, const Float4* points, uint32_t count,
                              uint32_t query, ContactElement* outA, ContactElement* outB, uint64_t total,
                              uint64_t capacity);

// A run of static queries of one closed-form primitive pair type, with the lanes across queries
// (src/cpu/geometry_queries_simd.cpp): sphere against sphere, capsule, cylinder, oriented box or
// plane; capsule-capsule; capsule, cylinder or oriented box against a plane (capsule-plane: up to 2
// contacts per query, box-plane up to 8). primitivePairSimdKind(lo, hi) (the pair's types, lo <= hi)
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

}  // namespace vkc::cpu
