// The geometry queries on the CPU (include/vkcollide/geometry_queries.h): every query's slots in
// order through the shared per-pair functions (shaders/shared/geometry_queries_math.h), contacts
// written in (query, slot) order up to the output's capacity. kCpuSimd runs the point-set pairs with
// lanes across the points (src/cpu/geometry_queries_simd.cpp), the same contacts bit for bit.
#include <string>

#include "cpu/geometry_queries.h"
#include "shared/geometry_queries_math.h"
#include "util/try.h"
#include "vkcollide/geometry_queries.h"

namespace vkc {
namespace {

gpu::GeomShape toShape(const Geometry& g) {
  gpu::GeomShape s;
  s.p0 = gpu::vec4(g.p0.x, g.p0.y, g.p0.z, g.p0.w);
  s.p1 = gpu::vec4(g.p1.x, g.p1.y, g.p1.z, g.p1.w);
  s.p2 = gpu::vec4(g.p2.x, g.p2.y, g.p2.z, g.p2.w);
  s.info = gpu::uvec4(static_cast<uint32_t>(g.type), g.first, g.count, g.flags);
  return s;
}

ContactElement toElement(const gpu::GeomElement& e, uint32_t query) {
  ContactElement out;
  out.point = Float4{e.point.x, e.point.y, e.point.z, e.point.w};
  out.direction = Float4{e.direction.x, e.direction.y, e.direction.z, e.direction.w};
  out.type = static_cast<ContactElementType>(e.type);
  out.index = e.index;
  out.query = query;
  return out;
}

}  // namespace

Result<GeometryQueryCounts> queryGeometriesCpu(const GeometryQueryInput& input, const GeometryQueryOutput& output,
                                               Backend backend) {
  if (backend == Backend::kVulkan) {
    return Error{ErrorCode::kUnsupported, "queryGeometriesCpu runs kCpuScalar or kCpuSimd, not kVulkan"};
  }
  VKC_TRY(validate(input));
  if (output.elementsA.size() != output.elementsB.size()) {
    return Error{ErrorCode::kInvalidArgument, "output.elementsA holds " + std::to_string(output.elementsA.size()) +
                                                  " elements and output.elementsB " +
                                                  std::to_string(output.elementsB.size()) + ": must be equal"};
  }
  if (output.ranges.size() != input.queries.size()) {
    return Error{ErrorCode::kBufferTooSmall, "output.ranges holds " + std::to_string(output.ranges.size()) +
                                                 " elements: must be one per query (" +
                                                 std::to_string(input.queries.size()) + ")"};
  }
  const uint64_t capacity = output.elementsA.size();
  uint64_t total = 0;
  for (size_t qi = 0; qi < input.queries.size(); ++qi) {
    const GeometryQuery& q = input.queries[qi];
    const gpu::GeomShape a = toShape(input.geometries[q.a]);
    const gpu::GeomShape b = toShape(input.geometries[q.b]);
    const uint32_t slots = gpu::geomSlotCount(a, b);
    const uint32_t pointFirst = a.info.x == gpu::kGeomPointSet ? a.info.y : b.info.y;
    const bool hasPoints = a.info.x == gpu::kGeomPointSet || b.info.x == gpu::kGeomPointSet;
    const uint64_t first = total;
    const gpu::GeomShape& other = a.info.x == gpu::kGeomPointSet ? b : a;
    if (backend == Backend::kCpuSimd && hasPoints && q.method == GeometryMethod::kStatic &&
        cpu::pointSetSimdHandles(other)) {
      total += cpu::pointSetContactsSimd(other, a.info.x == gpu::kGeomPointSet, &input.points[pointFirst], slots,
                                         static_cast<uint32_t>(qi), output.elementsA.data(), output.elementsB.data(),
                                         total, capacity);
      output.ranges[qi] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
      continue;
    }
    if (!hasPoints) {
      const gpu::GeomManifold m = gpu::geomQueryContacts(a, b);  // every slot at once
      for (uint32_t k = 0; k < m.count; ++k, ++total) {
        if (total < capacity) {
          output.elementsA[total] = toElement(m.s[k], static_cast<uint32_t>(qi));
          output.elementsB[total] = toElement(m.t[k], static_cast<uint32_t>(qi));
        }
      }
      output.ranges[qi] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
      continue;
    }
    for (uint32_t slot = 0; slot < slots; ++slot) {
      gpu::vec3 point(0.0f);
      if (hasPoints) {
        const Float4& p = input.points[pointFirst + slot];
        point = gpu::vec3(p.x, p.y, p.z);
      }
      gpu::GeomElement ea;
      gpu::GeomElement eb;
      if (!gpu::geomSlotContact(a, b, slot, point, ea, eb)) continue;
      if (total < capacity) {
        output.elementsA[total] = toElement(ea, static_cast<uint32_t>(qi));
        output.elementsB[total] = toElement(eb, static_cast<uint32_t>(qi));
      }
      ++total;
    }
    output.ranges[qi] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
  }
  GeometryQueryCounts counts;
  counts.contacts = static_cast<uint32_t>(total);
  counts.written = static_cast<uint32_t>(total < capacity ? total : capacity);
  counts.overflow = total > capacity;
  return counts;
}

// The Vulkan path is not built yet: kVulkan is refused here until it is.
Result<GeometryQueryCounts> queryGeometries(Backend backend, Context* context, const GeometryQueryInput& input,
                                            const GeometryQueryOutput& output) {
  (void)context;
  if (backend == Backend::kVulkan) {
    return Error{ErrorCode::kUnsupported, "queryGeometries: the Vulkan path of the geometry queries is not built yet"};
  }
  return queryGeometriesCpu(input, output, backend);
}

}  // namespace vkc
