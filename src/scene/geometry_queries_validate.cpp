// Validation of the geometry queries' input (include/vkcollide/geometry_queries.h) and the
// Geometry builders.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/geometry_queries.h"
#include "cpu/geometry_queries_mesh.h"
#include "cpu/geometry_queries_mesh_ccd.h"
#include "cpu/geometry_query_trees.h"
#include "shared/geometry_queries_mesh_mesh_device.h"
#include "shared/geometry_queries_mesh_reach.h"
#include "scene/geometry_queries_layout.h"
#include "scene/validate.h"
#include "shared/geometry_queries_math.h"
#include "util/try.h"
#include "vkcollide/geometry_queries.h"

namespace vkc {

static_assert(sizeof(Geometry) == sizeof(gpu::GeomShape));
static_assert(offsetof(Geometry, type) == offsetof(gpu::GeomShape, info));
static_assert(sizeof(ContactElement) == sizeof(gpu::GeomElement));
static_assert(offsetof(ContactElement, type) == offsetof(gpu::GeomElement, type));
static_assert(static_cast<uint32_t>(GeometryType::kPointSet) == gpu::kGeomPointSet);
static_assert(static_cast<uint32_t>(GeometryType::kPlane) == gpu::kGeomPlane);
static_assert(static_cast<uint32_t>(GeometryType::kImplicitGeometry) == gpu::kGeomImplicit);
static_assert(static_cast<uint32_t>(GeometryMethod::kContinuous) == gpu::kGeomMethodContinuous);
static_assert(sizeof(GeometryQuery) == sizeof(gpu::GeomQuery));
static_assert(offsetof(GeometryQuery, state) == offsetof(gpu::GeomQuery, state));
static_assert(static_cast<uint32_t>(ContactElementType::kPointIndexDirection) == gpu::kElementPointIndexDirection);
static_assert(kGeometryFlagBidirectional == gpu::kGeomFlagBidirectional);
static_assert(kNoPointIndex == gpu::kGeomNoIndex);
// cpu::kPrimitiveRules is indexed by type and assumes the unit tolerance 1e-3.
static_assert(gpu::kGeomSphere == 0 && gpu::kGeomCapsule == 1 && gpu::kGeomCylinder == 2 &&
              gpu::kGeomOrientedBox == 3 && gpu::kGeomPlane == 4);
static_assert(gpu::kGeomUnitTolerance == 1e-3f);

namespace {

// A continuous query with a mesh keeps no state entries (src/cpu/geometry_queries_mesh_ccd.cpp).
bool continuousMeshQuery(const GeometryQueryInput& in, const GeometryQuery& q) {
  return cpu::isMeshType(in.geometries[q.a].type) || cpu::isMeshType(in.geometries[q.b].type);
}

Float4 xyz(Float4 v, float w) { return Float4{v.x, v.y, v.z, w}; }

Error invalid(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message}; }

const char* typeName(uint32_t type) {
  static const char* const kNames[] = {"sphere",   "capsule",   "cylinder",         "oriented box",
                                       "plane",    "point set", "implicit geometry"};
  return type < gpu::kGeomTypeCount ? kNames[type] : "unknown";
}

std::string num(float v) { return detail::formatNumber(static_cast<double>(v)); }

// An element's name, "geometries[3]", and a field of it, "geometries[3].p0": built as strings only
// when a message needs them (validation runs on every call, and a batch holds many geometries).
struct ElementName {
  const char* array;
  size_t index;
};
struct FieldName {
  ElementName element;
  const char* suffix;
};
std::string str(const std::string& s) { return s; }
std::string str(ElementName e) { return std::string(e.array) + "[" + std::to_string(e.index) + "]"; }
std::string str(const FieldName& f) { return str(f.element) + f.suffix; }
FieldName operator+(ElementName e, const char* suffix) { return {e, suffix}; }
std::string operator+(const FieldName& f, const std::string& rest) { return str(f) + rest; }
std::string operator+(const FieldName& f, const char* rest) { return str(f) + rest; }
Error invalid(const FieldName& f) { return invalid(str(f)); }

// Checks components [0, n) of v are finite.
// The checks: an inlined test, and the message built out of line only when it fails (validation
// runs on every call over every geometry: its cost is the tests, not the messages).
[[gnu::cold, gnu::noinline]] Error componentError(const std::string& field, Float4 v, int k, const char* rule) {
  const float c[4] = {v.x, v.y, v.z, v.w};
  return invalid(field + "." + "xyzw"[k] + " is " + num(c[k]) + rule);
}

template <class Name>
inline Status checkFinite(const Name& field, Float4 v, int n) {
  const float c[4] = {v.x, v.y, v.z, v.w};
  for (int k = 0; k < n; ++k) {
    if (!std::isfinite(c[k])) [[unlikely]] return componentError(str(field), v, k, ": must be finite");
  }
  return {};
}

template <class Name>
inline Status checkNonNegative(const Name& field, const char* what, float v) {
  if (v < 0.0f) [[unlikely]] return invalid(str(field) + " (" + what + ") is " + num(v) + ": must be >= 0");
  return {};
}

[[gnu::cold, gnu::noinline]] Error unitError(const std::string& field, const char* what, double len) {
  return invalid(field + " (" + what + ") has length " + std::to_string(len) + ": must be 1 within 1e-3");
}

template <class Name>
inline Status checkUnit(const Name& field, const char* what, Float4 v, int n) {
  const double x = v.x, y = v.y, z = v.z;
  const double w = n == 4 ? static_cast<double>(v.w) : 0.0;
  const double len = std::sqrt(x * x + y * y + z * z + w * w);
  if (std::abs(len - 1.0) > static_cast<double>(gpu::kGeomUnitTolerance)) [[unlikely]] {
    return unitError(str(field), what, len);
  }
  return {};
}

template <class Name>
inline Status checkZero(const Name& field, Float4 v, int from) {
  const float c[4] = {v.x, v.y, v.z, v.w};
  for (int k = from; k < 4; ++k) {
    if (c[k] != 0.0f) [[unlikely]] return componentError(str(field), v, k, ": unused by this type, must be 0");
  }
  return {};
}

// An implicit geometry's grid: spacing, dimensions, the sample range.
Status validateGrid(const Geometry& g, ElementName f, size_t sampleCount) {
  VKC_TRY(checkFinite(f + ".p0", g.p0, 3));
  VKC_TRY(checkZero(f + ".p0", g.p0, 3));
  const float spacing[3] = {g.p1.x, g.p1.y, g.p1.z};
  const float dims[3] = {g.p2.x, g.p2.y, g.p2.z};
  uint64_t product = 1;
  for (int k = 0; k < 3; ++k) {
    const std::string axis(1, "xyz"[k]);
    if (!(spacing[k] > 0.0f) || !std::isfinite(spacing[k])) {
      return invalid(f + ".p1." + axis + " (grid spacing) is " + num(spacing[k]) + ": must be finite and > 0");
    }
    if (!(dims[k] >= 2.0f && dims[k] <= static_cast<float>(gpu::kGeomGridMaxDim)) || dims[k] != std::floor(dims[k])) {
      return invalid(f + ".p2." + axis + " (grid dimension) is " + num(dims[k]) +
                     ": must be a whole number of samples in [2, " + std::to_string(gpu::kGeomGridMaxDim) + "]");
    }
    product *= static_cast<uint64_t>(dims[k]);
  }
  VKC_TRY(checkZero(f + ".p1", g.p1, 3));
  VKC_TRY(checkZero(f + ".p2", g.p2, 3));
  if (g.count != product) {
    return invalid(f + ".count (implicit geometry) is " + std::to_string(g.count) +
                   ": must be the sample count nx * ny * nz = " + std::to_string(product));
  }
  if (g.first > sampleCount || g.count > sampleCount - g.first) {
    return invalid(f + " (implicit geometry) covers samples [" + std::to_string(g.first) + ", " +
                   std::to_string(static_cast<uint64_t>(g.first) + g.count) + "): gridSamples holds " +
                   std::to_string(sampleCount));
  }
  return {};
}

Status validateGeometry(const Geometry& g, ElementName f, size_t pointCount, size_t sampleCount) {
  const uint32_t type = static_cast<uint32_t>(g.type);
  if (cpu::isMeshType(g.type)) return {};  // cpu::validateMeshGeometries (src/cpu/geometry_queries_mesh.cpp)
  if (type >= gpu::kGeomTypeCount) return invalid(f + ".type is " + std::to_string(type) + ": unknown geometry type");
  if (g.flags != 0 && !(type == gpu::kGeomPlane && g.flags == kGeometryFlagBidirectional)) {
    return invalid(f + ".flags is " + std::to_string(g.flags) + ": only a plane takes kGeometryFlagBidirectional");
  }
  if (type != gpu::kGeomPointSet && type != gpu::kGeomImplicit && (g.first != 0 || g.count != 0)) {
    return invalid(f + ".first/count are set: only a point set or an implicit geometry has a range");
  }
  switch (type) {
    case gpu::kGeomSphere:
      VKC_TRY(checkFinite(f + ".p0", g.p0, 4));
      VKC_TRY(checkNonNegative(f + ".p0.w", "radius", g.p0.w));
      VKC_TRY(checkZero(f + ".p1", g.p1, 0));
      VKC_TRY(checkZero(f + ".p2", g.p2, 0));
      break;
    case gpu::kGeomCapsule:
      VKC_TRY(checkFinite(f + ".p0", g.p0, 4));
      VKC_TRY(checkFinite(f + ".p1", g.p1, 3));
      VKC_TRY(checkNonNegative(f + ".p0.w", "radius", g.p0.w));
      VKC_TRY(checkZero(f + ".p1", g.p1, 3));
      VKC_TRY(checkZero(f + ".p2", g.p2, 0));
      break;
    case gpu::kGeomCylinder:
      VKC_TRY(checkFinite(f + ".p0", g.p0, 4));
      VKC_TRY(checkFinite(f + ".p1", g.p1, 4));
      VKC_TRY(checkNonNegative(f + ".p0.w", "radius", g.p0.w));
      VKC_TRY(checkNonNegative(f + ".p1.w", "half height", g.p1.w));
      VKC_TRY(checkUnit(f + ".p1", "axis", g.p1, 3));
      VKC_TRY(checkZero(f + ".p2", g.p2, 0));
      break;
    case gpu::kGeomOrientedBox:
      VKC_TRY(checkFinite(f + ".p0", g.p0, 3));
      VKC_TRY(checkFinite(f + ".p1", g.p1, 4));
      VKC_TRY(checkFinite(f + ".p2", g.p2, 3));
      VKC_TRY(checkZero(f + ".p0", g.p0, 3));
      VKC_TRY(checkUnit(f + ".p1", "rotation quaternion", g.p1, 4));
      VKC_TRY(checkNonNegative(f + ".p2.x", "half extent", g.p2.x));
      VKC_TRY(checkNonNegative(f + ".p2.y", "half extent", g.p2.y));
      VKC_TRY(checkNonNegative(f + ".p2.z", "half extent", g.p2.z));
      VKC_TRY(checkZero(f + ".p2", g.p2, 3));
      break;
    case gpu::kGeomPlane:
      VKC_TRY(checkFinite(f + ".p0", g.p0, 3));
      VKC_TRY(checkFinite(f + ".p1", g.p1, 3));
      VKC_TRY(checkZero(f + ".p0", g.p0, 3));
      VKC_TRY(checkZero(f + ".p1", g.p1, 3));
      VKC_TRY(checkUnit(f + ".p1", "normal", g.p1, 3));
      VKC_TRY(checkZero(f + ".p2", g.p2, 0));
      break;
    case gpu::kGeomImplicit:
      VKC_TRY(validateGrid(g, f, sampleCount));
      break;
    default:  // point set
      VKC_TRY(checkZero(f + ".p0", g.p0, 0));
      VKC_TRY(checkZero(f + ".p1", g.p1, 0));
      VKC_TRY(checkZero(f + ".p2", g.p2, 0));
      if (g.first > pointCount || g.count > pointCount - g.first) {
        return invalid(f + " (point set) covers points [" + std::to_string(g.first) + ", " +
                       std::to_string(static_cast<uint64_t>(g.first) + g.count) + "): points holds " +
                       std::to_string(pointCount));
      }
      break;
  }
  return {};
}

// A previous pose of geometry g: the same type and shape, only the pose may differ.
Status checkSameShape(const Geometry& prev, const Geometry& g, ElementName f) {
  if (prev.type != g.type) {
    return invalid(f + ".type is " + typeName(static_cast<uint32_t>(prev.type)) + ": geometries[" +
                   std::to_string(f.index) + "] is a " + typeName(static_cast<uint32_t>(g.type)) +
                   " (a previous pose keeps the type)");
  }
  const auto differs = [&](const char* what) {
    return invalid(f + " (previous pose) changes the " + what + " of geometries[" + std::to_string(f.index) +
                   "]: only the pose may change");
  };
  if (prev.flags != g.flags) return differs("flags");
  switch (static_cast<uint32_t>(g.type)) {
    case gpu::kGeomSphere:
      if (prev.p0.w != g.p0.w) return differs("radius");
      break;
    case gpu::kGeomCapsule: {
      if (prev.p0.w != g.p0.w) return differs("radius");
      const auto length = [](const Geometry& c) {
        const double x = c.p1.x - c.p0.x, y = c.p1.y - c.p0.y, z = c.p1.z - c.p0.z;
        return std::sqrt(x * x + y * y + z * z);
      };
      if (std::abs(length(prev) - length(g)) > 1e-5 * std::max(1.0, length(g))) return differs("length");
      break;
    }
    case gpu::kGeomCylinder:
      if (prev.p0.w != g.p0.w || prev.p1.w != g.p1.w) return differs("radius or half height");
      break;
    case gpu::kGeomOrientedBox:
      if (prev.p2.x != g.p2.x || prev.p2.y != g.p2.y || prev.p2.z != g.p2.z) return differs("half extents");
      break;
    case gpu::kGeomImplicit:
      if (prev.p1.x != g.p1.x || prev.p1.y != g.p1.y || prev.p1.z != g.p1.z || prev.p2.x != g.p2.x ||
          prev.p2.y != g.p2.y || prev.p2.z != g.p2.z || prev.first != g.first) {
        return differs("grid (spacing, dimensions or samples)");
      }
      break;
    case gpu::kGeomPointSet:
      if (prev.first != g.first || prev.count != g.count) return differs("point range");
      break;
    default:
      break;
  }
  return {};
}

}  // namespace

Geometry Geometry::sphere(Float4 centreRadius) {
  Geometry g;
  g.type = GeometryType::kSphere;
  g.p0 = centreRadius;
  return g;
}

Geometry Geometry::capsule(Float4 end0, Float4 end1, float radius) {
  Geometry g;
  g.type = GeometryType::kCapsule;
  g.p0 = xyz(end0, radius);
  g.p1 = xyz(end1, 0.0f);
  return g;
}

Geometry Geometry::cylinder(Float4 centre, Float4 axis, float radius, float halfHeight) {
  Geometry g;
  g.type = GeometryType::kCylinder;
  g.p0 = xyz(centre, radius);
  g.p1 = xyz(axis, halfHeight);
  return g;
}

Geometry Geometry::orientedBox(Float4 centre, Float4 rotation, Float4 halfExtents) {
  Geometry g;
  g.type = GeometryType::kOrientedBox;
  g.p0 = xyz(centre, 0.0f);
  g.p1 = rotation;
  g.p2 = xyz(halfExtents, 0.0f);
  return g;
}

Geometry Geometry::plane(Float4 point, Float4 normal, bool bidirectional) {
  Geometry g;
  g.type = GeometryType::kPlane;
  g.p0 = xyz(point, 0.0f);
  g.p1 = xyz(normal, 0.0f);
  g.flags = bidirectional ? kGeometryFlagBidirectional : 0u;
  return g;
}

Geometry Geometry::pointSet(uint32_t first, uint32_t count) {
  Geometry g;
  g.type = GeometryType::kPointSet;
  g.first = first;
  g.count = count;
  return g;
}

Geometry Geometry::implicitGrid(Float4 origin, Float4 spacing, uint32_t nx, uint32_t ny, uint32_t nz,
                                uint32_t firstSample) {
  Geometry g;
  g.type = GeometryType::kImplicitGeometry;
  g.p0 = xyz(origin, 0.0f);
  g.p1 = xyz(spacing, 0.0f);
  g.p2 = Float4{static_cast<float>(nx), static_cast<float>(ny), static_cast<float>(nz), 0.0f};
  g.first = firstSample;
  g.count = static_cast<uint32_t>(static_cast<uint64_t>(nx) * ny * nz);
  return g;
}

namespace {

// The first query at or after `begin` that the detailed query checks of validateGeometryQueryInput
// must see (cpu::firstQueryToCheck, SIMD where built): the others are static queries (state 0) of two
// geometries in range whose types (the validated geometries' bytes) are a supported pair of
// primitives, which pass every one of them.
size_t firstQueryToCheck(const GeometryQueryInput& in, const uint8_t* types, size_t begin) {
  return cpu::firstQueryToCheck(in.queries, in.geometries.size(), types, begin);
}

}  // namespace

Status validate(const GeometryQueryInput& in) { return detail::validateGeometryQueries(in, nullptr); }

Status detail::validateGeometryQueries(const GeometryQueryInput& in, GeometryScan* scan) {
  GeometryScan local;
  GeometryScan& seen = scan != nullptr ? *scan : local;
  VKC_TRY(validateGeometryQueryInput(in, {in.points.size(), in.previousPoints.size(), in.gridSamples.size()}, &seen));
  return cpu::validateGeometryQueryTrees(in, seen.keptPoints);  // src/cpu/geometry_query_trees.cpp
}

Status detail::validateGeometryQueryInput(const GeometryQueryInput& in, const GeometryArrayCounts& counts,
                                          GeometryScan* scan) {
  // The first pass (cpu::firstUnclearGeometry, SIMD where built) skips the primitives that pass every
  // check; the detailed checks name the field of the others. It is the only pass over the geometries:
  // it keeps their types (a byte each) for the checks below and the caller's run.
  GeometryScan local;
  GeometryScan& seen = scan != nullptr ? *scan : local;
  seen.types.resize(in.geometries.size());
  seen.anyMesh = false;
  uint8_t* types = seen.types.data();
  for (size_t i = cpu::firstUnclearGeometry(in.geometries, 0, types); i < in.geometries.size();
       i = cpu::firstUnclearGeometry(in.geometries, i + 1, types)) {
    const Geometry& g = in.geometries[i];
    VKC_TRY(validateGeometry(g, ElementName{"geometries", i}, counts.points, counts.gridSamples));
    types[i] = static_cast<uint8_t>(g.type);  // a known type (validateGeometry refuses the others)
    seen.anyMesh = seen.anyMesh || cpu::isMeshType(g.type);
  }
  if (!in.previousGeometries.empty()) {
    if (in.previousGeometries.size() != in.geometries.size()) {
      return invalid("previousGeometries holds " + std::to_string(in.previousGeometries.size()) +
                     " geometries: must be empty or one per geometry (" + std::to_string(in.geometries.size()) + ")");
    }
    for (size_t i = 0; i < in.geometries.size(); ++i) {
      const ElementName f{"previousGeometries", i};
      if (!cpu::primitiveClearlyValid(in.previousGeometries[i])) {
        VKC_TRY(validateGeometry(in.previousGeometries[i], f, counts.points, counts.gridSamples));
      }
      VKC_TRY(checkSameShape(in.previousGeometries[i], in.geometries[i], f));
    }
  }
  // The vertices of kept meshes bitwise the trees' copies were validated by the trees' build or refit.
  seen.keptPoints.clear();
  if (scan != nullptr && in.trees != nullptr) seen.keptPoints = cpu::keptMeshPointsUnchanged(in);
  std::vector<std::pair<size_t, size_t>> kept;  // their ranges [first, end)
  for (uint32_t gi : seen.keptPoints) kept.emplace_back(in.geometries[gi].first, in.geometries[gi].first + size_t{in.geometries[gi].count});
  std::sort(kept.begin(), kept.end());
  size_t next = 0;
  for (size_t i = 0; i < in.points.size(); ++i) {
    for (; next < kept.size() && kept[next].first <= i; ++next) i = std::max(i, kept[next].second);
    if (i >= in.points.size()) break;
    const Float4& p = in.points[i];
    if (std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z)) continue;  // names only on error
    VKC_TRY(checkFinite("points[" + std::to_string(i) + "]", p, 3));
  }
  if (seen.anyMesh) VKC_TRY(cpu::validateMeshGeometries(in));
  for (size_t i = 0; i < in.gridSamples.size(); ++i) {
    if (!std::isfinite(in.gridSamples[i])) {
      return invalid("gridSamples[" + std::to_string(i) + "] is " + num(in.gridSamples[i]) + ": must be finite");
    }
  }
  if (counts.previousPoints != 0 && counts.previousPoints != counts.points) {
    return invalid("previousPoints holds " + std::to_string(counts.previousPoints) +
                   " points: must be empty or one per point (" + std::to_string(counts.points) + ")");
  }
  for (size_t i = 0; i < in.previousPoints.size(); ++i) {
    const Float4& p = in.previousPoints[i];
    if (std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z)) continue;  // names only on error
    VKC_TRY(checkFinite("previousPoints[" + std::to_string(i) + "]", p, 3));
  }
  // The static queries of two primitives that pass every check below are skipped by a tight loop
  // (firstQueryToCheck); the checks below run from each other query on, in order (the same errors).
  const size_t firstChecked = firstQueryToCheck(in, types, 0);
  seen.onlyStaticPrimitivePairs = firstChecked == in.queries.size();
  for (size_t i = firstChecked; i < in.queries.size(); i = firstQueryToCheck(in, types, i + 1)) {
    const GeometryQuery& q = in.queries[i];
    const ElementName f{"queries", i};
    const size_t n = in.geometries.size();
    if (q.a >= n) return invalid(f + ".a is " + std::to_string(q.a) + ": geometries holds " + std::to_string(n));
    if (q.b >= n) return invalid(f + ".b is " + std::to_string(q.b) + ": geometries holds " + std::to_string(n));
    const uint32_t method = static_cast<uint32_t>(q.method);
    if (method >= gpu::kGeomMethodCount) {
      return invalid(f + ".method is " + std::to_string(method) + ": unknown method");
    }
    if (method == gpu::kGeomMethodStatic && q.state != 0) {
      return invalid(f + ".state is " + std::to_string(q.state) + ": must be 0 for a static query");
    }
    const uint32_t ta = types[q.a];
    const uint32_t tb = types[q.b];
    const uint32_t lo = std::min(ta, tb);
    const uint32_t hi = std::max(ta, tb);
    if (hi > gpu::kGeomPlane && cpu::isMeshType(static_cast<GeometryType>(hi))) {  // the primitives: no call
      const Geometry& mesh = tb == hi ? in.geometries[q.b] : in.geometries[q.a];
      VKC_TRY(cpu::validateMeshQuery(lo, hi, (mesh.flags & kGeometryFlagClosed) != 0, q.method, str(f)));
      if (q.method == GeometryMethod::kContinuous) VKC_TRY(cpu::validateMeshCcdQuery(in, i));
      continue;
    }
    if (!gpu::geomPairSupported(lo, hi)) {
      return invalid(f + ": " + typeName(lo) + " vs " + typeName(hi) + " is not collidable (N/A in the seed's table)");
    }
    if (!gpu::geomMethodSupported(lo, hi, method)) {
      return invalid(f + ".method is kContinuous: " + typeName(lo) + " vs " + typeName(hi) +
                     " has no continuous method (only a point set against an implicit geometry or an analytic "
                     "primitive)");
    }
    if (method == gpu::kGeomMethodContinuous && counts.previousPoints != counts.points) {
      return invalid(f + " is continuous: previousPoints must hold one point per point (" +
                     std::to_string(counts.points) + "), it holds " + std::to_string(counts.previousPoints));
    }
  }
  return {};
}

Status detail::validateOutputSizes(const GeometryQueryInput& in, const GeometryQueryOutput& out) {
  if (out.elementsA.size() != out.elementsB.size()) {
    return invalid("output.elementsA holds " + std::to_string(out.elementsA.size()) + " elements and output.elementsB " +
                   std::to_string(out.elementsB.size()) + ": must be equal");
  }
  if (out.ranges.size() != in.queries.size()) {
    return Error{ErrorCode::kBufferTooSmall, "output.ranges holds " + std::to_string(out.ranges.size()) +
                                                 " elements: must be one per query (" +
                                                 std::to_string(in.queries.size()) + ")"};
  }
  return {};
}

Status detail::validateGeometryQueriesAndOutput(const GeometryQueryInput& in, const GeometryQueryOutput& out,
                                               GeometryScan* scan) {
  VKC_TRY(validateGeometryQueries(in, scan));
  return scan->onlyStaticPrimitivePairs ? validateOutputSizes(in, out) : validateOutput(in, out);
}

Status validateOutput(const GeometryQueryInput& in, const GeometryQueryOutput& out) {
  VKC_TRY(detail::validateOutputSizes(in, out));
  VKC_TRY(detail::validateGeometryStateRanges(in, out.state.size(), "output.state"));
  for (size_t i = 0; i < in.queries.size(); ++i) {
    const GeometryQuery& q = in.queries[i];
    if (q.method != GeometryMethod::kContinuous || continuousMeshQuery(in, q)) continue;
    const Geometry& ga = in.geometries[q.a];
    const uint32_t count = ga.type == GeometryType::kPointSet ? ga.count : in.geometries[q.b].count;
    for (uint32_t k = 0; k < count; ++k) {
      const Float4& e = out.state[q.state + k];
      const bool finite = std::isfinite(e.x) && std::isfinite(e.y) && std::isfinite(e.z);
      if (finite && (e.w == 0.0f || e.w == 1.0f)) continue;  // names only on error
      const ElementName field{"output.state", q.state + k};
      VKC_TRY(checkFinite(field, e, 3));
      return invalid(field + ".w is " + num(e.w) + ": must be 0 or 1");
    }
  }
  return {};
}

Status detail::validateGeometryStateRanges(const GeometryQueryInput& in, size_t stateCount, const char* stateName) {
  struct Span {
    uint64_t first, end;
    size_t query;
  };
  std::vector<Span> spans;
  for (size_t i = 0; i < in.queries.size(); ++i) {
    const GeometryQuery& q = in.queries[i];
    if (q.method != GeometryMethod::kContinuous || continuousMeshQuery(in, q)) continue;
    const Geometry& ga = in.geometries[q.a];
    const uint32_t count = ga.type == GeometryType::kPointSet ? ga.count : in.geometries[q.b].count;
    if (q.state > stateCount || count > stateCount - q.state) {
      return Error{ErrorCode::kBufferTooSmall, str(ElementName{"queries", i}) + ".state covers entries [" +
                                                   std::to_string(q.state) + ", " +
                                                   std::to_string(static_cast<uint64_t>(q.state) + count) +
                                                   "): " + stateName + " holds " + std::to_string(stateCount)};
    }
    if (count > 0) spans.push_back({q.state, uint64_t{q.state} + count, i});
  }
  // Each continuous query owns its entries: two sharing one would read each other's update in the CPU
  // twin's order and in no defined order on the device.
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.first < b.first; });
  for (size_t k = 1; k < spans.size(); ++k) {
    if (spans[k].first < spans[k - 1].end) {
      const size_t a = std::min(spans[k - 1].query, spans[k].query), b = std::max(spans[k - 1].query, spans[k].query);
      return invalid("queries[" + std::to_string(b) + "].state overlaps the state entries of queries[" +
                     std::to_string(a) + "]: continuous queries need their own entries");
    }
  }
  return {};
}

namespace {

static_assert(kGeometryFlagClosed == gpu::kGeomFlagClosed);

// The Vulkan stage's slots of a static query with a mesh (gpu::geomMeshPairOnDevice): the mesh's
// cells times geomMeshSlotsPerCell, a tetrahedral mesh against a point set its candidate pairs of a
// point and a tetrahedron (as two meshes', X the points), a closed surface mesh against a point set
// its points, two meshes
// (gpu::geomMeshMeshOnDevice) their candidate pairs of cells (geometrySlotLayout), then a closed
// surface mesh's vertex pass (gpu::geomMeshMeshVertexSlots); 0 for a pair the stage refuses.
// Continuous (shared/geometry_queries_mesh_ccd_slot.h): their candidate pairs as two meshes' (X's
// cells a point set's points against a surface mesh).
uint64_t meshDeviceSlots(const gpu::GeomShape& a, const gpu::GeomShape& b, uint32_t ia, uint32_t ib,
                         GeometryMethod method, uint64_t maxCandidates) {
  if (method == GeometryMethod::kContinuous) {
    const auto cells = [](const gpu::GeomShape& g) {
      return g.info.x == gpu::kGeomPointSet ? uint64_t{g.info.z} : static_cast<uint64_t>(g.p2.y);
    };
    const bool lines = a.info.x == gpu::kGeomLineMesh && b.info.x == gpu::kGeomLineMesh;
    const bool points = (a.info.x == gpu::kGeomPointSet && b.info.x == gpu::kGeomSurfaceMesh) ||
                        (b.info.x == gpu::kGeomPointSet && a.info.x == gpu::kGeomSurfaceMesh);
    if (!lines && !points) return 0;
    const uint64_t product = cells(a) * cells(b);
    if (maxCandidates == 0) return product;
    const bool aFirst = gpu::geomMeshMeshFirstIsA(a.info.x, b.info.x, ia, ib);
    return std::min(product, std::max(maxCandidates, cells(aFirst ? a : b)));
  }
  if (gpu::geomIsMesh(a.info.x) && gpu::geomIsMesh(b.info.x)) {  // two meshes: a slot per pair of cells
    const uint32_t lo = std::min(a.info.x, b.info.x), hi = std::max(a.info.x, b.info.x);
    if (!gpu::geomMeshMeshOnDevice(lo, hi)) return 0;
    const uint64_t product = static_cast<uint64_t>(a.p2.y) * static_cast<uint64_t>(b.p2.y);
    const bool aFirst = gpu::geomMeshMeshFirstIsA(a.info.x, b.info.x, ia, ib);
    // Then a closed surface mesh's vertex pass, a slot per vertex of the other mesh.
    const uint64_t vertices = gpu::geomMeshMeshVertexSlots(aFirst ? a : b, aFirst ? b : a, ia == ib);
    if (maxCandidates == 0) return product + vertices;
    const uint64_t nx = static_cast<uint64_t>(aFirst ? a.p2.y : b.p2.y);
    return std::min(product, std::max(maxCandidates, nx)) + vertices;
  }
  const bool meshIsA = gpu::geomIsMesh(a.info.x);
  const gpu::GeomShape& mesh = meshIsA ? a : b;
  const gpu::GeomShape& other = meshIsA ? b : a;
  if (!gpu::geomMeshPairOnDevice(other.info.x, mesh.info.x)) return 0;
  const uint64_t cells = static_cast<uint64_t>(mesh.p2.y);
  if (other.info.x == gpu::kGeomPointSet) {
    if (mesh.info.x == gpu::kGeomSurfaceMesh) return uint64_t{other.info.z};  // closed: a slot per point
    // A tetrahedral mesh: a slot per candidate pair (point, tetrahedron), as two meshes' (X the points).
    const uint64_t product = cells * other.info.z;
    if (maxCandidates == 0) return product;
    return std::min(product, std::max(maxCandidates, uint64_t{other.info.z}));
  }
  return cells * gpu::geomMeshSlotsPerCell(mesh.info.x, other.info.x);
}

}  // namespace

detail::GeometrySlotLayout detail::geometrySlotLayout(std::span<const Geometry> geometries,
                                                     std::span<const GeometryQuery> queries, uint64_t maxCandidates) {
  constexpr uint64_t kTile = gpu::kGeomGroupSize;
  GeometrySlotLayout l;
  l.slotRange.resize(queries.size());
  std::vector<uint32_t> tileFamily;  // per tile
  uint64_t cursor = 0;
  uint32_t family = gpu::kGeomFamilyCount;  // the family of the tile at the cursor
  for (size_t q = 0; q < queries.size(); ++q) {
    const gpu::GeomShape a = toGeomShape(geometries[queries[q].a]);
    const gpu::GeomShape b = toGeomShape(geometries[queries[q].b]);
    // A query with a mesh: its cells' slots where the stage runs the pair (refused otherwise).
    const bool mesh = gpu::geomIsMesh(a.info.x) || gpu::geomIsMesh(b.info.x);
    const uint64_t n = !mesh ? gpu::geomSlotCount(a, b)
                             : meshDeviceSlots(a, b, queries[q].a, queries[q].b, queries[q].method, maxCandidates);
    const uint32_t f = gpu::geomQueryFamily(a.info.x, b.info.x, static_cast<uint32_t>(queries[q].method));
    if (n > 0 && f != family && cursor % kTile != 0) cursor += kTile - cursor % kTile;  // a new tile
    l.slotRange[q] = {cursor, cursor + n};
    if (n > 0) {
      family = f;
      const uint64_t lastTile = (cursor + n - 1) / kTile;
      if (tileFamily.size() <= lastTile) tileFamily.resize(lastTile + 1, f);
    }
    cursor += n;
  }
  l.slotCount = cursor;
  for (uint32_t f = 0; f < gpu::kGeomFamilyCount; ++f) {
    l.familyFirst[f] = l.tiles.size();
    for (size_t t = 0; t < tileFamily.size(); ++t) {
      if (tileFamily[t] == f) l.tiles.push_back(static_cast<uint32_t>(t));
    }
    l.familyCount[f] = l.tiles.size() - l.familyFirst[f];
  }
  return l;
}

}  // namespace vkc
