// The geometry queries on the CPU (include/vkcollide/geometry_queries.h): every query's slots in
// order through the shared per-slot entry point (geomQuerySlot, shaders/shared/geometry_queries_implicit.h,
// over geometry_queries_math.h), contacts written in (query, slot) order up to the output's capacity,
// continuous queries' state written back per slot. Where a query's slots are many and most have no
// contact, only those that can have one are evaluated (a shape's or a grid's samples near the other
// geometry): the same contacts in the same order. kCpuSimd runs point sets against the primitives and
// implicit geometries (static and continuous) with lanes across the points, a shape's or grid's
// samples against an implicit geometry with lanes along their rows, and runs of consecutive static
// queries of one closed-form primitive pair type, or of spheres or capsules against one implicit
// geometry, with lanes across the queries (src/cpu/geometry_queries_simd.cpp): the same contacts bit
// for bit.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "cpu/geometry_queries.h"
#include "cpu/geometry_queries_mesh.h"
#include "scene/geometry_queries_layout.h"
#include "shared/geometry_queries_math.h"
#include "util/try.h"
#include "vkcollide/geometry_queries.h"

namespace vkc {
namespace {

using namespace gpu;

GeomShape toShape(const Geometry& g) { return detail::toGeomShape(g); }

ContactElement toElement(const GeomElement& e, uint32_t query) {
  return cpu::toContactElement(e, query);
}

// The shared slot code's accessors over the caller's (validated) arrays.
struct QueryKernel {
  const GeometryQueryInput* in = nullptr;
  const GeometryQueryOutput* out = nullptr;

  static vec3 xyz(const Float4& f) { return vec3(f.x, f.y, f.z); }
  vec3 geomPointAt(uint i) const { return xyz(in->points[i]); }
  vec3 geomPreviousPointAt(uint i) const { return xyz(in->previousPoints[i]); }
  float geomGridSampleAt(uint i) const { return in->gridSamples[i]; }
  vec4 geomStateAt(uint i) const {
    const Float4& s = out->state[i];
    return vec4(s.x, s.y, s.z, s.w);
  }

#include "shared/geometry_queries_implicit.h"
};

// The least and the largest magnitude of the samples on the six faces of implicit geometry g.
struct FaceSamples {
  float least = 0.0f;
  float largest = 0.0f;
};

FaceSamples faceSamples(const GeometryQueryInput& input, const GeomShape& g) {
  const uint32_t n[3] = {static_cast<uint32_t>(g.p2.x), static_cast<uint32_t>(g.p2.y),
                         static_cast<uint32_t>(g.p2.z)};
  const float* samples = input.gridSamples.data() + g.info.y;
  FaceSamples f;
  f.least = samples[0];
  for (uint32_t k = 0; k < n[2]; ++k) {
    for (uint32_t j = 0; j < n[1]; ++j) {
      const bool face = k == 0 || k == n[2] - 1 || j == 0 || j == n[1] - 1;
      const float* row = samples + size_t{n[0]} * (j + size_t{n[1]} * k);
      for (uint32_t i = 0; i < n[0]; i += face ? 1u : n[0] - 1u) {  // a face's row, else its two ends
        f.least = std::min(f.least, row[i]);
        f.largest = std::max(f.largest, std::abs(row[i]));
      }
    }
  }
  return f;
}

// The samples of implicit geometry `grid` whose surface points (geomGridSurfaceFrom) can lie inside
// implicit geometry `other`, as a sample box (lo, size as geomShapeSampleBox's). Outside its box
// other's field is the trilinear value at the clamped point, on a face (its weights there are 0 and 1
// exactly), plus the distance to the box: at least the least face sample (up to the rounding of three
// mixes, covered by 1e-5 of the largest face sample) plus that distance. So a surface point with a
// negative field lies within max(0, -least) of other's box, and its sample within half a cell
// diagonal more; 1.001 covers the normal's length, 1e-4 of the coordinates' size their rounding, and
// geomSampleSpan adds a sample each way. The samples outside have no contact: the slots a query has
// on the device (a slot per sample of both grids) give the same contacts in the same order.
void gridPairSampleBox(const GeomShape& grid, const GeomShape& other, FaceSamples face, uvec4& lo,
                       uvec4& size) {
  const vec3 origin = vec3(grid.p0);
  const vec3 spacing = vec3(grid.p1);
  const vec3 dims = vec3(grid.p2);
  const vec3 top = origin + (dims - vec3(1.0f)) * spacing;
  const vec3 otherLo = vec3(other.p0);
  const vec3 otherHi = otherLo + (vec3(other.p2) - vec3(1.0f)) * vec3(other.p1);
  float extent = 0.0f;
  for (uint32_t k = 0; k < 3; ++k) {
    extent =
        std::max({extent, std::abs(origin[k]), std::abs(top[k]), std::abs(otherLo[k]), std::abs(otherHi[k])});
  }
  const float reach = 1.001f * (std::max(0.0f, -face.least + 1e-5f * face.largest) +
                                0.5f * ((spacing.x + spacing.y) + spacing.z)) +
                      1e-4f * extent;
  uvec2 span[3];
  for (uint32_t k = 0; k < 3; ++k) {
    span[k] = geomSampleSpan(origin[k], spacing[k], static_cast<uint>(dims[k]), otherLo[k] - reach,
                             otherHi[k] + reach);
  }
  lo = uvec4(span[0].x, span[1].x, span[2].x, 0u);
  size = uvec4(span[0].y - span[0].x, span[1].y - span[1].x, span[2].y - span[2].x, 0u);
  size.w = size.x * size.y * size.z;
}

}  // namespace

namespace cpu {

std::vector<std::pair<ContactElement, ContactElement>> everySampleContacts(const GeometryQueryInput& input,
                                                                           uint32_t query) {
  std::vector<std::pair<ContactElement, ContactElement>> out;
  const GeometryQuery& q = input.queries[query];
  const GeomShape a = toShape(input.geometries[q.a]);
  const GeomShape b = toShape(input.geometries[q.b]);
  const bool swapped = geomSwapped(a, b);
  const GeomShape& s = swapped ? b : a;
  const GeomShape& t = swapped ? a : b;
  const bool ownPoints = s.info.x == kGeomOrientedBox || s.info.x == kGeomCylinder;
  const bool gridPair = s.info.x == kGeomImplicit;
  if (t.info.x != kGeomImplicit || (!ownPoints && !gridPair && s.info.x != kGeomPlane)) return out;
  QueryKernel kernel;
  kernel.in = &input;
  const auto add = [&](const GeomElement& es, const GeomElement& et) {
    GeomElement ea;
    GeomElement eb;
    geomUnswap(swapped, es, et, ea, eb);
    out.emplace_back(toElement(ea, query), toElement(eb, query));
  };
  GeomElement es;
  GeomElement et;
  if (gridPair) {
    for (uint32_t slot = 0; slot < s.info.z + t.info.z; ++slot) {
      if (kernel.geomImplicitCanonicalContact(s, t, slot, es, et)) add(es, et);
    }
    return out;
  }
  for (uint32_t slot = 0; ownPoints && slot < kGeomImplicitShapeSlots; ++slot) {
    if (kernel.geomImplicitCanonicalContact(s, t, slot, es, et)) add(es, et);
  }
  for (uint32_t i = 0; i < t.info.z; ++i) {
    if (kernel.geomGridSampleContactEvery(s, t, i, es, et)) add(es, et);
  }
  return out;
}

}  // namespace cpu

Result<GeometryQueryCounts> queryGeometriesCpu(const GeometryQueryInput& input, const GeometryQueryOutput& output,
                                               Backend backend) {
  if (backend == Backend::kVulkan) {
    return Error{ErrorCode::kUnsupported, "queryGeometriesCpu runs kCpuScalar or kCpuSimd, not kVulkan"};
  }
  if (backend == Backend::kCpuSimd) {
    // A batch of one closed-form pair type: validation fused with the lanes (one pass over the geometries).
    const std::optional<GeometryQueryCounts> fused = cpu::fusedPrimitivePairs(input, output);
    if (fused) return *fused;
  }
  // One pass over the geometries in validation; the run below reads their types from `scan`, and
  // each geometry once more where its query runs.
  detail::GeometryScan scan;
  VKC_TRY(detail::validateGeometryQueriesAndOutput(input, output, &scan));
  const uint8_t* types = scan.types.data();
  QueryKernel kernel;
  kernel.in = &input;
  kernel.out = &output;
  const uint64_t capacity = output.elementsA.size();
  uint64_t total = 0;
  cpu::MeshQueries meshes(input, backend);  // the queries with a mesh (src/cpu/geometry_queries_mesh.cpp)
  std::unordered_map<uint32_t, FaceSamples> faces;  // two implicit geometries: by geometry index
  const size_t queryCount = input.queries.size();
  for (size_t qi = 0; qi < queryCount; ++qi) {
    const GeometryQuery& q = input.queries[qi];
    if (scan.anyMesh && meshes.handles(qi)) {
      const uint64_t found = meshes.contacts(qi, output, total, capacity);
      output.ranges[qi] = ContactRange{static_cast<uint32_t>(total), static_cast<uint32_t>(found)};
      total += found;
      continue;
    }
    if (backend == Backend::kCpuSimd && q.method == GeometryMethod::kStatic) {
      // A run of static queries of one closed-form pair type: lanes across the queries.
      const uint32_t ta = types[q.a];
      const uint32_t tb = types[q.b];
      const uint32_t pair = cpu::primitivePairSimdKind(ta < tb ? ta : tb, ta < tb ? tb : ta);
      if (pair != cpu::kNoPrimitivePairSimd) {
        size_t end = qi + 1;
        while (end < queryCount) {
          const GeometryQuery& n = input.queries[end];
          const uint32_t na = types[n.a];
          const uint32_t nb = types[n.b];
          if (n.method != GeometryMethod::kStatic || !((na == ta && nb == tb) || (na == tb && nb == ta))) break;
          ++end;
        }
        total = cpu::primitivePairsSimd(input, qi, end, pair, output.elementsA.data(), output.elementsB.data(),
                                        output.ranges.data(), total, capacity);
        qi = end - 1;
        continue;
      }
      // A run of spheres or of capsules against one implicit geometry: lanes across the queries.
      const uint32_t gridIndex = ta == kGeomImplicit ? q.a : q.b;
      const uint32_t ballType = ta == kGeomImplicit ? tb : ta;
      if ((ta == kGeomImplicit) != (tb == kGeomImplicit) &&
          (ballType == kGeomSphere || ballType == kGeomCapsule) &&
          cpu::pointSetSimdHandles(toShape(input.geometries[gridIndex]), input.gridSamples.size())) {
        size_t end = qi + 1;
        while (end < queryCount) {
          const GeometryQuery& n = input.queries[end];
          const bool ballFirst = types[n.a] == ballType && n.b == gridIndex;
          const bool gridFirst = n.a == gridIndex && types[n.b] == ballType;
          if (n.method != GeometryMethod::kStatic || !(ballFirst || gridFirst)) break;
          ++end;
        }
        const auto run = ballType == kGeomSphere ? cpu::sphereGridRunSimd : cpu::capsuleGridRunSimd;
        total = run(input, qi, end, toShape(input.geometries[gridIndex]), output.elementsA.data(),
                    output.elementsB.data(), output.ranges.data(), total, capacity);
        qi = end - 1;
        continue;
      }
    }
    const GeomShape a = toShape(input.geometries[q.a]);
    const GeomShape b = toShape(input.geometries[q.b]);
    const bool moving = !input.previousGeometries.empty();
    const GeomShape prevA = moving ? toShape(input.previousGeometries[q.a]) : a;
    const GeomShape prevB = moving ? toShape(input.previousGeometries[q.b]) : b;
    const uint64_t first = total;
    // A contact's two elements, written where the output has room; every contact counted.
    const auto emit = [&](const GeomElement& ea, const GeomElement& eb) {
      if (total < capacity) {
        output.elementsA[total] = toElement(ea, static_cast<uint32_t>(qi));
        output.elementsB[total] = toElement(eb, static_cast<uint32_t>(qi));
      }
      ++total;
    };
    const auto evaluate = [&](uint32_t slot) {
      GeomElement ea;
      GeomElement eb;
      vec4 state;
      bool hasState = false;
      const bool hit =
          kernel.geomQuerySlot(a, b, prevA, prevB, static_cast<uint>(q.method), q.state, slot, ea, eb, state, hasState);
      if (hasState) output.state[q.state + slot] = Float4{state.x, state.y, state.z, state.w};
      if (hit) emit(ea, eb);
    };
    if (q.method == GeometryMethod::kStatic && a.info.x == kGeomImplicit && b.info.x == kGeomImplicit) {
      // Two implicit geometries: s's surface points inside t, then t's inside s (the slots' order),
      // each grid's samples only those near the other's box (gridPairSampleBox).
      const bool swapped = geomSwapped(a, b);
      const GeomShape& s = swapped ? b : a;
      const GeomShape& t = swapped ? a : b;
      for (uint32_t pass = 0; pass < 2; ++pass) {
        const GeomShape& grid = pass == 0 ? s : t;  // its surface points: the ball side
        const GeomShape& other = pass == 0 ? t : s;
        const bool gridIsA = (pass == 0) != swapped;
        const uint32_t otherIndex = gridIsA ? q.b : q.a;
        auto face = faces.find(otherIndex);  // each grid's faces read once per call
        if (face == faces.end()) face = faces.emplace(otherIndex, faceSamples(input, other)).first;
        uvec4 lo;
        uvec4 size;
        gridPairSampleBox(grid, other, face->second, lo, size);
        if (backend == Backend::kCpuSimd && cpu::pointSetSimdHandles(grid, input.gridSamples.size())) {
          total += cpu::shapeGridContactsSimd(other, grid, input.gridSamples.data(), !gridIsA, lo, size,
                                              static_cast<uint32_t>(qi), output.elementsA.data(),
                                              output.elementsB.data(), total, capacity);
          continue;
        }
        const uint nx = static_cast<uint>(grid.p2.x), ny = static_cast<uint>(grid.p2.y);
        for (uint k = 0; k < size.w; ++k) {
          GeomElement eo;
          GeomElement eg;
          GeomElement ea;
          GeomElement eb;
          if (!kernel.geomGridSampleContact(other, grid, geomSampleBoxIndex(lo, size, nx, ny, k), eo, eg))
            continue;
          geomUnswap(gridIsA, eo, eg, ea, eb);
          emit(ea, eb);
        }
      }
      output.ranges[qi] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
      continue;
    }
    const bool gridIsA = a.info.x == kGeomImplicit;
    const GeomShape& shape = gridIsA ? b : a;
    if (q.method == GeometryMethod::kStatic && shape.info.x == kGeomCapsule &&
        (gridIsA || b.info.x == kGeomImplicit)) {
      // A capsule against an implicit geometry: its axis point of least field once for its three slots.
      const GeomShape& grid = gridIsA ? a : b;
      const vec3 p0 = vec3(shape.p0);
      const vec3 p1 = vec3(shape.p1);
      const vec3 c = mix(p0, p1, kernel.geomGridSegmentDeepestParam(grid, p0, p1));
      for (uint32_t slot = 0; slot < kGeomCapsuleImplicitSlots; ++slot) {
        GeomElement es;
        GeomElement et;
        GeomElement ea;
        GeomElement eb;
        if (!kernel.geomCapsuleGridContact(shape, grid, c, slot, es, et)) continue;
        geomUnswap(gridIsA, es, et, ea, eb);
        emit(ea, eb);
      }
      output.ranges[qi] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
      continue;
    }
    const bool ownPoints = shape.info.x == kGeomOrientedBox || shape.info.x == kGeomCylinder;
    if (q.method == GeometryMethod::kStatic && (gridIsA || b.info.x == kGeomImplicit) &&
        (ownPoints || shape.info.x == kGeomPlane)) {
      // A box, cylinder or plane against an implicit geometry: a box's or cylinder's own points' slots,
      // then its sample box's samples (the slots past them), the box computed once rather than by
      // each slot (and not by geomSlotCount either).
      for (uint32_t slot = 0; ownPoints && slot < kGeomImplicitShapeSlots; ++slot) evaluate(slot);
      const GeomShape& grid = gridIsA ? a : b;
      uvec4 lo;
      uvec4 size;
      geomShapeSampleBox(shape, grid, lo, size);
      if (backend == Backend::kCpuSimd && cpu::pointSetSimdHandles(grid, input.gridSamples.size())) {
        total += cpu::shapeGridContactsSimd(shape, grid, input.gridSamples.data(), !gridIsA, lo, size,
                                            static_cast<uint32_t>(qi), output.elementsA.data(),
                                            output.elementsB.data(), total, capacity);
      } else {
        const uint nx = static_cast<uint>(grid.p2.x), ny = static_cast<uint>(grid.p2.y);
        for (uint k = 0; k < size.w; ++k) {
          GeomElement ea;
          GeomElement eb;
          if (kernel.geomShapeGridSampleContact(a, b, geomSampleBoxIndex(lo, size, nx, ny, k), ea, eb))
            emit(ea, eb);
        }
      }
      output.ranges[qi] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
      continue;
    }
    const uint32_t slots = geomSlotCount(a, b);
    const bool pointSetIsA = a.info.x == kGeomPointSet;
    const GeomShape& other = pointSetIsA ? b : a;
    if (backend == Backend::kCpuSimd && (pointSetIsA || b.info.x == kGeomPointSet) &&
        q.method == GeometryMethod::kStatic && cpu::pointSetSimdHandles(other, input.gridSamples.size())) {
      const uint32_t pointFirst = pointSetIsA ? a.info.y : b.info.y;
      total += cpu::pointSetContactsSimd(other, input.gridSamples.data(), pointSetIsA,
                                         input.points.data() + pointFirst, slots, static_cast<uint32_t>(qi),
                                         output.elementsA.data(), output.elementsB.data(), total, capacity);
      output.ranges[qi] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
      continue;
    }
    if (backend == Backend::kCpuSimd && (pointSetIsA || b.info.x == kGeomPointSet) &&
        q.method == GeometryMethod::kContinuous &&
        cpu::pointSetSimdHandles(other, input.gridSamples.size())) {
      // Against an analytic primitive or an implicit geometry, static or moving: lanes across the points.
      const uint32_t pointFirst = pointSetIsA ? a.info.y : b.info.y;
      total += cpu::continuousPointSetContactsSimd(
          other, pointSetIsA ? prevB : prevA, input.gridSamples.data(), pointSetIsA,
          input.points.data() + pointFirst, input.previousPoints.data() + pointFirst,
          output.state.data() + q.state, slots, static_cast<uint32_t>(qi), output.elementsA.data(),
          output.elementsB.data(), total, capacity);
      output.ranges[qi] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
      continue;
    }
    const bool primitivePair = a.info.x <= kGeomPlane && b.info.x <= kGeomPlane;
    if (primitivePair && q.method == GeometryMethod::kStatic) {
      const GeomManifold m = geomQueryContacts(a, b);  // every slot at once
      for (uint32_t k = 0; k < m.count; ++k) emit(m.s[k], m.t[k]);
    } else {
      for (uint32_t slot = 0; slot < slots; ++slot) evaluate(slot);
    }
    output.ranges[qi] = ContactRange{static_cast<uint32_t>(first), static_cast<uint32_t>(total - first)};
  }
  GeometryQueryCounts counts;
  counts.contacts = static_cast<uint32_t>(total);
  counts.written = static_cast<uint32_t>(total < capacity ? total : capacity);
  counts.overflow = total > capacity;
  return counts;
}

}  // namespace vkc
