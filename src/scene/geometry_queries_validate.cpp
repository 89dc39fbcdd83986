// Validation of the geometry queries' input (include/vkcollide/geometry_queries.h) and the
// Geometry builders.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

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
static_assert(static_cast<uint32_t>(ContactElementType::kPointIndexDirection) == gpu::kElementPointIndexDirection);
static_assert(kGeometryFlagBidirectional == gpu::kGeomFlagBidirectional);
static_assert(kNoPointIndex == gpu::kGeomNoIndex);

namespace {

Float4 xyz(Float4 v, float w) { return Float4{v.x, v.y, v.z, w}; }

Error invalid(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message}; }

const char* typeName(uint32_t type) {
  static const char* const kNames[] = {"sphere", "capsule", "cylinder", "oriented box", "plane", "point set"};
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
template <class Name>
Status checkFinite(const Name& field, Float4 v, int n) {
  const float c[4] = {v.x, v.y, v.z, v.w};
  for (int k = 0; k < n; ++k) {
    if (!std::isfinite(c[k])) return invalid(str(field) + "." + "xyzw"[k] + " is " + num(c[k]) + ": must be finite");
  }
  return {};
}

template <class Name>
Status checkNonNegative(const Name& field, const char* what, float v) {
  if (v < 0.0f) return invalid(str(field) + " (" + what + ") is " + num(v) + ": must be >= 0");
  return {};
}

template <class Name>
Status checkUnit(const Name& field, const char* what, Float4 v, int n) {
  const double x = v.x, y = v.y, z = v.z;
  const double w = n == 4 ? static_cast<double>(v.w) : 0.0;
  const double len = std::sqrt(x * x + y * y + z * z + w * w);
  if (std::abs(len - 1.0) > static_cast<double>(gpu::kGeomUnitTolerance)) {
    return invalid(str(field) + " (" + what + ") has length " + std::to_string(len) + ": must be 1 within 1e-3");
  }
  return {};
}

template <class Name>
Status checkZero(const Name& field, Float4 v, int from) {
  const float c[4] = {v.x, v.y, v.z, v.w};
  for (int k = from; k < 4; ++k) {
    if (c[k] != 0.0f) return invalid(str(field) + "." + "xyzw"[k] + " is " + num(c[k]) + ": unused by this type, must be 0");
  }
  return {};
}

Status validateGeometry(const Geometry& g, size_t i, size_t pointCount) {
  const ElementName f{"geometries", i};
  const uint32_t type = static_cast<uint32_t>(g.type);
  if (type >= gpu::kGeomTypeCount) return invalid(f + ".type is " + std::to_string(type) + ": unknown geometry type");
  if (g.flags != 0 && !(type == gpu::kGeomPlane && g.flags == kGeometryFlagBidirectional)) {
    return invalid(f + ".flags is " + std::to_string(g.flags) + ": only a plane takes kGeometryFlagBidirectional");
  }
  if (type != gpu::kGeomPointSet && (g.first != 0 || g.count != 0)) {
    return invalid(f + ".first/count are set: only a point set has a point range");
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

Status validate(const GeometryQueryInput& in) {
  for (size_t i = 0; i < in.geometries.size(); ++i) {
    VKC_TRY(validateGeometry(in.geometries[i], i, in.points.size()));
  }
  for (size_t i = 0; i < in.points.size(); ++i) {
    const Float4& p = in.points[i];
    if (std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z)) continue;  // names only on error
    VKC_TRY(checkFinite("points[" + std::to_string(i) + "]", p, 3));
  }
  for (size_t i = 0; i < in.queries.size(); ++i) {
    const GeometryQuery& q = in.queries[i];
    const ElementName f{"queries", i};
    const size_t n = in.geometries.size();
    if (q.a >= n) return invalid(f + ".a is " + std::to_string(q.a) + ": geometries holds " + std::to_string(n));
    if (q.b >= n) return invalid(f + ".b is " + std::to_string(q.b) + ": geometries holds " + std::to_string(n));
    const uint32_t method = static_cast<uint32_t>(q.method);
    if (method >= gpu::kGeomMethodCount) {
      return invalid(f + ".method is " + std::to_string(method) + ": unknown method");
    }
    if (q.pad != 0) return invalid(f + ".pad is " + std::to_string(q.pad) + ": must be 0");
    const uint32_t ta = static_cast<uint32_t>(in.geometries[q.a].type);
    const uint32_t tb = static_cast<uint32_t>(in.geometries[q.b].type);
    const uint32_t lo = std::min(ta, tb);
    const uint32_t hi = std::max(ta, tb);
    if (!gpu::geomPairSupported(lo, hi)) {
      return invalid(f + ": " + typeName(lo) + " vs " + typeName(hi) + " is not collidable (N/A in the seed's table)");
    }
  }
  return {};
}

}  // namespace vkc
