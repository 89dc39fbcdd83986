// Private interface of the geometry queries' CPU twins (src/cpu/geometry_queries.cpp, the scalar
// loop over (query, slot); src/cpu/geometry_queries_simd.cpp, Highway SIMD across the points of a
// point set).
#pragma once

#include <cstdint>

#include "shared/geometry_queries.h"
#include "vkcollide/geometry_queries.h"

namespace vkc::cpu {

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

}  // namespace vkc::cpu
