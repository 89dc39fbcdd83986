// Private: what every backend of the geometry queries shares on the host: the device layout of a
// Geometry, the checks of a batch whose arrays may live on the device, and the Vulkan stage's slot
// layout (shaders/shared/geometry_queries_bindings.h).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "shared/geometry_queries_bindings.h"
#include "shared/geometry_queries_math.h"
#include "vkcollide/geometry_queries.h"

namespace vkc::detail {

inline gpu::GeomShape toGeomShape(const Geometry& g) {
  gpu::GeomShape s;
  s.p0 = gpu::vec4(g.p0.x, g.p0.y, g.p0.z, g.p0.w);
  s.p1 = gpu::vec4(g.p1.x, g.p1.y, g.p1.z, g.p1.w);
  s.p2 = gpu::vec4(g.p2.x, g.p2.y, g.p2.z, g.p2.w);
  s.info = gpu::uvec4(static_cast<uint32_t>(g.type), g.first, g.count, g.flags);
  return s;
}

// The sizes of a batch's arrays, which validate() takes from the input's spans and the Vulkan stage
// from the host's device buffers (whose values it cannot read).
struct GeometryArrayCounts {
  size_t points = 0;
  size_t previousPoints = 0;
  size_t gridSamples = 0;
};

// What validateGeometryQueryInput saw on its one pass over the geometries, for a caller that runs
// the batch next without reading the geometries (64 bytes each) again: each geometry's type as a
// byte, and whether any geometry is a mesh.
struct GeometryScan {
  std::vector<uint8_t> types;
  bool anyMesh = false;
  // Every query is static, of two primitives (firstQueryToCheck skipped them all): no state is read
  // or written (validateOutputSizes is all of validateOutput).
  bool onlyStaticPrimitivePairs = false;
  // With input.trees: the kept meshes whose vertices are bitwise the trees' copies (checked once, by
  // cpu::keptMeshPointsUnchanged: their finiteness is skipped here, their comparison by
  // validateGeometryQueries' call of cpu::validateGeometryQueryTrees, which every caller giving a scan makes).
  std::vector<uint32_t> keptPoints;
};

// validate(in) with the arrays' sizes given: ranges are checked against `counts`, values only of the
// spans `in` holds (a device array's span is empty). `scan`, when given, receives the types (valid
// only when the input is).
Status validateGeometryQueryInput(const GeometryQueryInput& in, const GeometryArrayCounts& counts,
                                  GeometryScan* scan = nullptr);

// validate(in), keeping what its pass over the geometries saw (the CPU backends' call).
Status validateGeometryQueries(const GeometryQueryInput& in, GeometryScan* scan);

// validateOutput's checks of the output arrays' sizes, the first it makes; the rest read only the
// continuous queries' state (none where GeometryScan::onlyStaticPrimitivePairs).
Status validateOutputSizes(const GeometryQueryInput& in, const GeometryQueryOutput& out);

// validate(in) keeping its scan, then validateOutput(in, out), of which only validateOutputSizes where
// the scan found only static primitive pairs (the rest reads the continuous queries' state): the
// checks every backend's run makes before it writes.
Status validateGeometryQueriesAndOutput(const GeometryQueryInput& in, const GeometryQueryOutput& out,
                                        GeometryScan* scan);

// The continuous queries' state entries (a validated input): each query's inside [0, stateCount), no
// two queries sharing an entry. `stateName` names the array in messages.
Status validateGeometryStateRanges(const GeometryQueryInput& in, size_t stateCount, const char* stateName);

// The Vulkan stage's slot layout of a validated batch: each query's slots [first, end) in query order,
// a query of another pair family than the previous query's starting on a new tile of kGeomGroupSize
// slots, so that every tile holds one family; `tiles` lists the tiles family by family (family f's are
// tiles[familyFirst[f], familyFirst[f] + familyCount[f]), ascending). 64-bit: the caller checks the
// stage's limits.
struct SlotSpan {
  uint64_t first = 0;
  uint64_t end = 0;
};
struct GeometrySlotLayout {
  std::vector<SlotSpan> slotRange;
  std::vector<uint32_t> tiles;
  std::array<uint64_t, gpu::kGeomFamilyCount> familyFirst{};
  std::array<uint64_t, gpu::kGeomFamilyCount> familyCount{};
  uint64_t slotCount = 0;
  uint64_t tileCount() const { return tiles.size(); }
};
// maxCandidates: a mesh-mesh query's slots are its candidate pairs of cells, min(nX * nY,
// max(maxCandidates, nX)) of them (nX, nY: the cells of its first and second mesh); 0: nX * nY.
GeometrySlotLayout geometrySlotLayout(std::span<const Geometry> geometries, std::span<const GeometryQuery> queries,
                                      uint64_t maxCandidates = 0);

}  // namespace vkc::detail
