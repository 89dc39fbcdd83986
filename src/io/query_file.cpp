// Query files and contacts files (include/vkcollide/query_file.h, docs/query-format.md).
//
// Geometries are read and written through one table (kGeometryTypes): per type, its name in the file
// and its fields, each bound to a slot of the Geometry layout. A new type is a new row (and new
// slots or field kinds where its layout needs them); the reader and the writer need no other change.
#include "vkcollide/query_file.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>

#include "io/file.h"
#include "io/json_reader.h"
#include "io/json_writer.h"
#include "vkcollide/export.h"

namespace vkc {

namespace {

Error invalid(std::string message) {
  return Error{ErrorCode::kInvalidArgument, std::move(message)};
}

// ---- The geometry table ------------------------------------------------------------------------

// How a field is written in the file and what it must hold.
enum class FieldKind {
  kVector,      // [x, y, z]
  kUnit,        // [x, y, z], length 1 within 1e-3 (the stage renormalizes)
  kQuaternion,  // [x, y, z, w], length 1 within 1e-3
  kLength,      // a number >= 0
  kBool,        // true or false
  kIndex,       // an unsigned integer
  kPoints,      // [[x, y, z], ...]: a point set's own points (appended to the file's points)
  kSpacing,     // [x, y, z], each > 0
  kDims,        // [nx, ny, nz], whole numbers in [2, 2048]
  kSamples,     // [s, ...]: an implicit geometry's own samples (appended to the file's gridSamples)
};

// Where a field's value goes in Geometry (geometry_queries.h).
enum class Slot {
  kP0,
  kP0w,
  kP1,
  kP1w,
  kP2,
  kFirst,
  kCount,
  kFlagBidirectional,
  kInlinePoints,
  kInlinePrevious,  // a point set's own previous points (appended to the file's previousPoints)
  kDims,            // p2 = (nx, ny, nz) as floats, count = nx * ny * nz
  kInlineSamples,
  kCellFirst,     // a mesh's first entry in "cells": p2.x (a whole number as a float)
  kCellCount,     // a mesh's cell count: p2.y
  kFlagClosed,    // a surface mesh's kGeometryFlagClosed
  kSearchRadius,  // a closed surface mesh's search radius: p2.z
  kThickness,     // a surface or line mesh's thickness: p2.w
};

struct FieldSpec {
  const char* name;
  FieldKind kind;
  Slot slot;
  bool required;
  bool pose;  // may be given in the geometry's "previous" object (its pose at the step's start)
};

struct GeometryTypeSpec {
  const char* name;  // in the file ("type")
  GeometryType type;
  std::span<const FieldSpec> fields;
};

constexpr FieldSpec kSphereFields[] = {
    {"centre", FieldKind::kVector, Slot::kP0, true, true},
    {"radius", FieldKind::kLength, Slot::kP0w, true, false},
};
constexpr FieldSpec kCapsuleFields[] = {
    {"end0", FieldKind::kVector, Slot::kP0, true, true},
    {"end1", FieldKind::kVector, Slot::kP1, true, true},
    {"radius", FieldKind::kLength, Slot::kP0w, true, false},
};
constexpr FieldSpec kCylinderFields[] = {
    {"centre", FieldKind::kVector, Slot::kP0, true, true},
    {"axis", FieldKind::kUnit, Slot::kP1, true, true},
    {"radius", FieldKind::kLength, Slot::kP0w, true, false},
    {"halfHeight", FieldKind::kLength, Slot::kP1w, true, false},
};
constexpr FieldSpec kBoxFields[] = {
    {"centre", FieldKind::kVector, Slot::kP0, true, true},
    {"rotation", FieldKind::kQuaternion, Slot::kP1, false, true},  // default: identity
    {"halfExtents", FieldKind::kVector, Slot::kP2, true, false},
};
constexpr FieldSpec kPlaneFields[] = {
    {"point", FieldKind::kVector, Slot::kP0, true, true},
    {"normal", FieldKind::kUnit, Slot::kP1, true, true},
    {"bidirectional", FieldKind::kBool, Slot::kFlagBidirectional, false, false},  // default: one-sided
};
// A point set gives either "points" (its own) or "count" (and "first", default 0) into the file's
// "points" (checked in readGeometry).
constexpr FieldSpec kPointSetFields[] = {
    {"first", FieldKind::kIndex, Slot::kFirst, false, false},
    {"count", FieldKind::kIndex, Slot::kCount, false, false},
    {"points", FieldKind::kPoints, Slot::kInlinePoints, false, false},
    {"previousPoints", FieldKind::kPoints, Slot::kInlinePrevious, false, false},  // with "points" only
};
// An implicit geometry gives either "samples" (its own) or "first" (default 0) into the file's
// "gridSamples" (checked in readGeometry).
constexpr FieldSpec kImplicitFields[] = {
    {"origin", FieldKind::kVector, Slot::kP0, true, true},
    {"spacing", FieldKind::kSpacing, Slot::kP1, true, false},
    {"dims", FieldKind::kDims, Slot::kDims, true, false},
    {"first", FieldKind::kIndex, Slot::kFirst, false, false},
    {"samples", FieldKind::kSamples, Slot::kInlineSamples, false, false},
};

// A mesh: its vertices "first"/"count" in the file's "points", its cells from "cellFirst" (default 0)
// in the file's "cells" (both ranges checked by validate()).
constexpr FieldSpec kMeshFields[] = {
    {"first", FieldKind::kIndex, Slot::kFirst, false, false},
    {"count", FieldKind::kIndex, Slot::kCount, true, false},
    {"cellFirst", FieldKind::kIndex, Slot::kCellFirst, false, false},
    {"cellCount", FieldKind::kIndex, Slot::kCellCount, true, false},
};
// A surface mesh: a mesh's fields, and "closed" (default false) with its "searchRadius" (default 0:
// unbounded), and "thickness" (default 0).
constexpr FieldSpec kSurfaceMeshFields[] = {
    {"first", FieldKind::kIndex, Slot::kFirst, false, false},
    {"count", FieldKind::kIndex, Slot::kCount, true, false},
    {"cellFirst", FieldKind::kIndex, Slot::kCellFirst, false, false},
    {"cellCount", FieldKind::kIndex, Slot::kCellCount, true, false},
    {"closed", FieldKind::kBool, Slot::kFlagClosed, false, false},
    {"searchRadius", FieldKind::kLength, Slot::kSearchRadius, false, false},
    {"thickness", FieldKind::kLength, Slot::kThickness, false, false},
};
// A line mesh: a mesh's fields and "thickness" (default 0: the static and continuous line-line
// queries' radius of its segments).
constexpr FieldSpec kLineMeshFields[] = {
    {"first", FieldKind::kIndex, Slot::kFirst, false, false},
    {"count", FieldKind::kIndex, Slot::kCount, true, false},
    {"cellFirst", FieldKind::kIndex, Slot::kCellFirst, false, false},
    {"cellCount", FieldKind::kIndex, Slot::kCellCount, true, false},
    {"thickness", FieldKind::kLength, Slot::kThickness, false, false},
};

constexpr GeometryTypeSpec kGeometryTypes[] = {
    {"sphere", GeometryType::kSphere, kSphereFields},
    {"capsule", GeometryType::kCapsule, kCapsuleFields},
    {"cylinder", GeometryType::kCylinder, kCylinderFields},
    {"box", GeometryType::kOrientedBox, kBoxFields},
    {"plane", GeometryType::kPlane, kPlaneFields},
    {"pointSet", GeometryType::kPointSet, kPointSetFields},
    {"implicit", GeometryType::kImplicitGeometry, kImplicitFields},
    {"surfaceMesh", GeometryType::kSurfaceMesh, kSurfaceMeshFields},
    {"lineMesh", GeometryType::kLineMesh, kLineMeshFields},
    {"tetrahedralMesh", GeometryType::kTetrahedralMesh, kMeshFields},
};

constexpr std::pair<const char*, GeometryMethod> kMethods[] = {
    {"static", GeometryMethod::kStatic},
    {"continuous", GeometryMethod::kContinuous},
};

constexpr std::pair<const char*, ContactElementType> kElementTypes[] = {
    {"pointDirection", ContactElementType::kPointDirection},
    {"pointIndexDirection", ContactElementType::kPointIndexDirection},
    {"cellIndex", ContactElementType::kCellIndex},
};

const GeometryTypeSpec* findType(std::string_view name) {
  for (const GeometryTypeSpec& t : kGeometryTypes) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

const GeometryTypeSpec* findType(GeometryType type) {
  for (const GeometryTypeSpec& t : kGeometryTypes) {
    if (type == t.type) return &t;
  }
  return nullptr;
}

// The kind of a field name, whatever type it belongs to (a name has one kind in every type).
std::optional<FieldKind> fieldKind(std::string_view name) {
  for (const GeometryTypeSpec& t : kGeometryTypes) {
    for (const FieldSpec& f : t.fields) {
      if (name == f.name) return f.kind;
    }
  }
  return std::nullopt;
}

std::string typeNames() {
  std::string s;
  for (const GeometryTypeSpec& t : kGeometryTypes) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

std::string fieldNames(const GeometryTypeSpec& t) {
  std::string s;
  for (const FieldSpec& f : t.fields) s += (s.empty() ? "" : ", ") + std::string(f.name);
  return s;
}

std::string poseFieldNames(const GeometryTypeSpec& t) {
  std::string s;
  for (const FieldSpec& f : t.fields) {
    if (f.pose) s += (s.empty() ? "" : ", ") + std::string(f.name);
  }
  return s.empty() ? "none" : s;
}

std::string allGeometryKeys() {
  std::string s = "name, type";
  for (const GeometryTypeSpec& t : kGeometryTypes) {
    for (const FieldSpec& f : t.fields) {
      const std::string n = f.name;
      if (s.find(", " + n + ",") == std::string::npos && !s.ends_with(", " + n)) s += ", " + n;
    }
  }
  return s + ", previous";
}

// "a sphere", "an implicit".
std::string withArticle(const char* typeName) {
  return (std::string("aeiou").find(typeName[0]) != std::string::npos ? "an " : "a ") + std::string(typeName);
}

template <class T, size_t N>
std::string enumNames(const std::pair<const char*, T> (&table)[N]) {
  std::string s;
  for (const auto& [name, value] : table) s += (s.empty() ? "" : ", ") + std::string(name);
  return s;
}

template <class T, size_t N>
bool readEnum(io::JsonReader& r, const std::pair<const char*, T> (&table)[N], const char* what, T& out) {
  std::string name;
  if (!r.readString(name)) return false;
  for (const auto& [n, value] : table) {
    if (name == n) {
      out = value;
      return true;
    }
  }
  return r.fail("unknown " + std::string(what) + " \"" + name + "\" (known: " + enumNames(table) + ")");
}

template <class T, size_t N>
const char* enumName(const std::pair<const char*, T> (&table)[N], T value) {
  for (const auto& [name, v] : table) {
    if (v == value) return name;
  }
  return "?";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// One field's value as read (vectors in v, scalars in v.x, bools and indices in u).
struct FieldValue {
  std::string name;
  FieldKind kind = FieldKind::kVector;
  Float4 v{0, 0, 0, 0};
  uint32_t u = 0;
  std::vector<Float4> points;
  std::vector<float> samples;
};

bool readSamples(io::JsonReader& r, std::vector<float>& out) {
  out.clear();
  return r.readArray([&](size_t) { return r.readFloat(out.emplace_back()); });
}

// Persistent state entries [x, y, z, w], w 0 or 1 (GeometryQueryOutput::state).
bool readState(io::JsonReader& r, std::vector<Float4>& out) {
  out.clear();
  return r.readArray([&](size_t) {
    float e[4];
    if (!r.readFloats(e, 4, "[x, y, z, w]")) return false;
    if (e[3] != 0.0f && e[3] != 1.0f) return r.fail("w is " + number(double{e[3]}) + ": must be 0 or 1");
    out.push_back({e[0], e[1], e[2], e[3]});
    return true;
  });
}

bool readField(io::JsonReader& r, FieldKind kind, FieldValue& f) {
  f.kind = kind;
  switch (kind) {
    case FieldKind::kVector:
      return io::readPoint(r, f.v);
    case FieldKind::kUnit:
    case FieldKind::kQuaternion: {
      float q[4] = {0, 0, 0, 0};
      const int n = kind == FieldKind::kUnit ? 3 : 4;
      if (!r.readFloats(q, static_cast<size_t>(n), n == 3 ? "[x, y, z]" : "[x, y, z, w]")) return false;
      f.v = {q[0], q[1], q[2], q[3]};
      double len2 = 0;
      for (const float c : q) len2 += double{c} * double{c};
      const double len = std::sqrt(len2);
      if (std::abs(len - 1.0) > 1e-3) return r.fail("has length " + number(len) + ": must be 1 within 1e-3");
      return true;
    }
    case FieldKind::kLength:
      if (!r.readFloat(f.v.x)) return false;
      if (!(f.v.x >= 0.0f)) return r.fail("is " + number(double{f.v.x}) + ": must be >= 0");
      return true;
    case FieldKind::kBool: {
      bool b = false;
      if (!r.readBool(b)) return false;
      f.u = b ? 1u : 0u;
      return true;
    }
    case FieldKind::kIndex:
      return r.readUint32(f.u);
    case FieldKind::kPoints:
      return io::readPoints(r, f.points);
    case FieldKind::kSpacing:
      if (!io::readPoint(r, f.v)) return false;
      if (!(f.v.x > 0.0f && f.v.y > 0.0f && f.v.z > 0.0f)) return r.fail("every component must be > 0");
      return true;
    case FieldKind::kDims: {
      uint32_t n[3] = {0, 0, 0};
      size_t count = 0;
      const bool ok = r.readArray([&](size_t i) {
        if (i >= 3 || !r.readUint32(n[i]))
          return i >= 3 ? r.fail("[nx, ny, nz] has more than 3 numbers") : false;
        if (n[i] < 2 || n[i] > 2048) return r.fail("is " + std::to_string(n[i]) + ": must be in [2, 2048]");
        return ++count, true;
      });
      if (!ok) return false;
      if (count != 3) return r.fail("expected 3 numbers [nx, ny, nz], found " + std::to_string(count));
      if (uint64_t{n[0]} * n[1] * n[2] > UINT32_MAX)
        return r.fail("nx * ny * nz is more than 2^32 - 1 samples");
      f.v = {static_cast<float>(n[0]), static_cast<float>(n[1]), static_cast<float>(n[2]), 0.0f};
      return true;
    }
    case FieldKind::kSamples:
      return readSamples(r, f.samples);
  }
  return false;
}

void store(Geometry& g, Slot slot, const FieldValue& f) {
  switch (slot) {
    case Slot::kP0:
      g.p0 = {f.v.x, f.v.y, f.v.z, g.p0.w};
      break;
    case Slot::kP0w:
      g.p0.w = f.v.x;
      break;
    case Slot::kP1:
      g.p1 = f.kind == FieldKind::kQuaternion ? f.v : Float4{f.v.x, f.v.y, f.v.z, g.p1.w};
      break;
    case Slot::kP1w:
      g.p1.w = f.v.x;
      break;
    case Slot::kP2:
      g.p2 = {f.v.x, f.v.y, f.v.z, g.p2.w};
      break;
    case Slot::kFirst:
      g.first = f.u;
      break;
    case Slot::kCount:
      g.count = f.u;
      break;
    case Slot::kFlagBidirectional:
      g.flags = f.u != 0 ? (g.flags | kGeometryFlagBidirectional) : g.flags;
      break;
    case Slot::kFlagClosed:
      g.flags = f.u != 0 ? (g.flags | kGeometryFlagClosed) : g.flags;
      break;
    case Slot::kSearchRadius:
      g.p2.z = f.v.x;
      break;
    case Slot::kThickness:
      g.p2.w = f.v.x;
      break;
    case Slot::kDims:
      g.p2 = f.v;
      g.count = static_cast<uint32_t>(f.v.x) * static_cast<uint32_t>(f.v.y) * static_cast<uint32_t>(f.v.z);
      break;
    case Slot::kCellFirst:
      g.p2.x = static_cast<float>(f.u);
      break;
    case Slot::kCellCount:
      g.p2.y = static_cast<float>(f.u);
      break;
    case Slot::kInlinePoints:
    case Slot::kInlinePrevious:
    case Slot::kInlineSamples:
      break;  // appended by the caller
  }
}

// What readGeometry leaves for the file's second pass: inline points, previous points and samples to
// append, and the previous pose.
struct PendingGeometry {
  std::vector<Float4> inlinePoints;
  bool hasInlinePoints = false;
  std::vector<Float4> inlinePrevious;
  bool hasInlinePrevious = false;
  std::vector<float> inlineSamples;
  bool hasInlineSamples = false;
  std::optional<Geometry> previous;
};

const FieldSpec* findField(const GeometryTypeSpec& type, std::string_view name) {
  for (const FieldSpec& s : type.fields) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

bool hasField(const std::vector<FieldValue>& fields, std::string_view name) {
  for (const FieldValue& f : fields) {
    if (f.name == name) return true;
  }
  return false;
}

// Reads an object's keys as fields, each by its name's kind (unknown names refused).
bool readFields(io::JsonReader& r, std::string_view key, std::vector<FieldValue>& fields) {
  const std::optional<FieldKind> kind = fieldKind(key);
  if (!kind) return r.fail("unknown key (geometry keys: " + allGeometryKeys() + ")");
  FieldValue& f = fields.emplace_back();
  f.name = key;
  return readField(r, *kind, f);
}

// One geometry object: every key read by its name's kind, then checked against its type's fields.
bool readGeometry(io::JsonReader& r, Geometry& g, std::string& name, PendingGeometry& pending) {
  std::vector<FieldValue> fields, previous;
  std::string typeName;
  bool hasType = false, hasPrevious = false;
  const bool ok = r.readObject([&](std::string_view key) {
    if (key == "type") return hasType = true, r.readString(typeName);
    if (key == "name") return r.readString(name);
    if (key == "previous") {
      hasPrevious = true;
      return r.readObject([&](std::string_view k) { return readFields(r, k, previous); });
    }
    return readFields(r, key, fields);
  });
  if (!ok) return false;
  if (!hasType) return r.fail("missing required key \"type\" (one of " + typeNames() + ")");
  const GeometryTypeSpec* type = findType(typeName);
  if (type == nullptr)
    return r.failAtKey("type", "unknown geometry type \"" + typeName + "\" (known: " + typeNames() + ")");
  g = Geometry{};
  g.type = type->type;
  if (type->type == GeometryType::kOrientedBox) g.p1 = {0, 0, 0, 1};  // "rotation" default: identity
  for (const FieldValue& f : fields) {
    const FieldSpec* spec = findField(*type, f.name);
    if (spec == nullptr) {
      return r.failAtKey(
          f.name, "not a field of " + withArticle(type->name) + " (its fields: " + fieldNames(*type) + ")");
    }
    store(g, spec->slot, f);
    if (spec->slot == Slot::kInlinePoints) {
      pending.inlinePoints = f.points;
      pending.hasInlinePoints = true;
    } else if (spec->slot == Slot::kInlinePrevious) {
      pending.inlinePrevious = f.points;
      pending.hasInlinePrevious = true;
    } else if (spec->slot == Slot::kInlineSamples) {
      pending.inlineSamples = f.samples;
      pending.hasInlineSamples = true;
    }
  }
  if (hasPrevious) {
    Geometry p = g;
    for (const FieldValue& f : previous) {
      const FieldSpec* spec = findField(*type, f.name);
      if (spec == nullptr || !spec->pose) {
        return r.failAtKey("previous." + f.name, "not a pose field of " + withArticle(type->name) +
                                                     " (its pose fields: " + poseFieldNames(*type) + ")");
      }
      store(p, spec->slot, f);
    }
    pending.previous = p;
  }
  for (const FieldSpec& s : type->fields) {
    if (!s.required) continue;
    bool present = false;
    for (const FieldValue& f : fields) present = present || f.name == s.name;
    if (!present)
      return r.fail(std::string("missing required key \"") + s.name + "\" of " + withArticle(type->name));
  }
  if (type->type == GeometryType::kPointSet) {
    bool first = false, count = false;
    for (const FieldValue& f : fields) {
      first = first || f.name == "first";
      count = count || f.name == "count";
    }
    if (pending.hasInlinePoints && (first || count)) {
      return r.failAtKey("points", "a point set gives either \"points\" or \"first\"/\"count\", not both");
    }
    if (!pending.hasInlinePoints && !count) {
      return r.fail("missing required key \"count\" of a pointSet (or \"points\": its own points)");
    }
    if (pending.hasInlinePrevious && !pending.hasInlinePoints) {
      return r.failAtKey(
          "previousPoints",
          "only a point set with its own \"points\" has them (else: the top-level \"previousPoints\")");
    }
    if (pending.hasInlinePrevious && pending.inlinePrevious.size() != pending.inlinePoints.size()) {
      return r.failAtKey("previousPoints",
                         "has " + std::to_string(pending.inlinePrevious.size()) + " points, expected " +
                             std::to_string(pending.inlinePoints.size()) + " (one per point of \"points\")");
    }
  }
  for (const FieldValue& f : fields) {
    if ((f.name == "cellFirst" || f.name == "cellCount") && f.u > (1u << 24)) {
      return r.failAtKey(f.name, "is " + std::to_string(f.u) + ": at most 2^24");
    }
  }
  if (type->type == GeometryType::kImplicitGeometry && pending.hasInlineSamples) {
    if (hasField(fields, "first")) {
      return r.failAtKey("samples", "an implicit geometry gives either \"samples\" or \"first\", not both");
    }
    if (pending.inlineSamples.size() != g.count) {
      return r.failAtKey("samples", "has " + std::to_string(pending.inlineSamples.size()) +
                                        " samples, expected nx * ny * nz = " + std::to_string(g.count));
    }
  }
  return true;
}

// A query's geometry: an index, or a name resolved once every geometry has been read.
struct GeometryRef {
  uint32_t index = 0;
  std::string name;  // non-empty: by name
};

bool readRef(io::JsonReader& r, GeometryRef& ref) {
  if (r.peekValue() == '"') {
    if (!r.readString(ref.name)) return false;
    if (ref.name.empty()) return r.fail("is an empty name");
    return true;
  }
  return r.readUint32(ref.index);
}

struct PendingQuery {
  GeometryRef a, b;
  GeometryMethod method = GeometryMethod::kStatic;
  std::optional<uint32_t> state;
};

// A query's "state" (given or not: hasState) belongs to the continuous method alone: both readers
// refuse it on a static query, whose state the writers leave out (it would not come back).
bool checkQueryState(io::JsonReader& r, bool hasState, GeometryMethod method) {
  if (hasState && method != GeometryMethod::kContinuous) {
    return r.failAtKey("state", "only a continuous query has state");
  }
  return true;
}

bool readQuery(io::JsonReader& r, PendingQuery& q) {
  bool a = false, b = false;
  const bool ok = r.readObject([&](std::string_view key) {
    if (key == "a") return a = true, readRef(r, q.a);
    if (key == "b") return b = true, readRef(r, q.b);
    if (key == "method") return readEnum(r, kMethods, "method", q.method);
    if (key == "state") return r.readUint32(q.state.emplace());
    return r.fail("unknown key (known keys here: a, b, method, state)");
  });
  if (!ok) return false;
  if (!a) return r.fail("missing required key \"a\"");
  if (!b) return r.fail("missing required key \"b\"");
  return checkQueryState(r, q.state.has_value(), q.method);
}

void appendVector(std::string& out, Float4 v, int n) {
  const float f[4] = {v.x, v.y, v.z, v.w};
  io::appendFloats(out, f, static_cast<size_t>(n));
}

// ",\n  "state": [[x, y, z, w], ...]" after the last top-level key; nothing when empty.
void appendState(std::string& out, const std::vector<Float4>& state) {
  if (state.empty()) return;
  out += ",\n  \"state\": [";
  for (size_t i = 0; i < state.size(); ++i) {
    out += i ? ",\n    " : "\n    ";
    appendVector(out, state[i], 4);
  }
  out += "\n  ]";
}

// The field's value of geometry g as JSON text, "" where the writer leaves it out (a default).
std::string fieldText(const Geometry& g, const FieldSpec& s) {
  std::string out;
  switch (s.slot) {
    case Slot::kP0:
      appendVector(out, g.p0, 3);
      break;
    case Slot::kP0w:
      io::appendFloat(out, g.p0.w);
      break;
    case Slot::kP1:
      appendVector(out, g.p1, s.kind == FieldKind::kQuaternion ? 4 : 3);
      break;
    case Slot::kP1w:
      io::appendFloat(out, g.p1.w);
      break;
    case Slot::kP2:
      appendVector(out, g.p2, 3);
      break;
    case Slot::kFirst:
      out = std::to_string(g.first);
      break;
    case Slot::kCount:
      out = std::to_string(g.count);
      break;
    case Slot::kFlagBidirectional:
      out = (g.flags & kGeometryFlagBidirectional) != 0 ? "true" : "false";
      break;
    case Slot::kFlagClosed:  // left out for an open mesh (the default)
      if ((g.flags & kGeometryFlagClosed) != 0) out = "true";
      break;
    case Slot::kSearchRadius:
      if (g.p2.z != 0.0f) io::appendFloat(out, g.p2.z);
      break;
    case Slot::kThickness:  // left out when 0 (the default)
      if (g.p2.w != 0.0f) io::appendFloat(out, g.p2.w);
      break;
    case Slot::kDims:
      out = "[" + std::to_string(static_cast<uint32_t>(g.p2.x)) + ", " +
            std::to_string(static_cast<uint32_t>(g.p2.y)) + ", " +
            std::to_string(static_cast<uint32_t>(g.p2.z)) + "]";
      break;
    case Slot::kCellFirst:
      out = std::to_string(static_cast<uint32_t>(g.p2.x));
      break;
    case Slot::kCellCount:
      out = std::to_string(static_cast<uint32_t>(g.p2.y));
      break;
    case Slot::kInlinePoints:
    case Slot::kInlinePrevious:
    case Slot::kInlineSamples:
      break;  // written as ranges into the file's top-level arrays
  }
  return out;
}

}  // namespace

const char* geometryTypeName(GeometryType type) {
  const GeometryTypeSpec* t = findType(type);
  return t != nullptr ? t->name : "?";
}

const char* geometryMethodName(GeometryMethod method) {
  return enumName(kMethods, method);
}

const char* contactElementTypeName(ContactElementType type) {
  return enumName(kElementTypes, type);
}

Result<GeometryQueryFile> parseGeometryQueries(std::string_view json) {
  io::JsonReader r(json);
  GeometryQueryFile file;
  std::vector<PendingGeometry> pending;
  std::vector<PendingQuery> queries;
  std::optional<std::vector<Float4>> previousPoints, state;
  bool format = false, version = false, geometries = false, hasQueries = false;
  r.readObject([&](std::string_view key) {
    if (key == "format") return io::readFormat(r, kQueryFileFormat, format);
    if (key == "version") return io::readVersion(r, kQueryFileVersion, version);
    if (key == "points") return io::readPoints(r, file.points);
    if (key == "previousPoints") return io::readPoints(r, previousPoints.emplace());
    if (key == "gridSamples") return readSamples(r, file.gridSamples);
    if (key == "cells") {
      return r.readArray([&](size_t) { return r.readUint32(file.cells.emplace_back()); });
    }
    if (key == "state") return readState(r, state.emplace());
    if (key == "geometries") {
      geometries = true;
      return r.readArray([&](size_t) {
        return readGeometry(r, file.geometries.emplace_back(), file.names.emplace_back(),
                            pending.emplace_back());
      });
    }
    if (key == "queries") {
      hasQueries = true;
      return r.readArray([&](size_t) { return readQuery(r, queries.emplace_back()); });
    }
    return r.fail(
        "unknown key (known keys here: format, version, points, previousPoints, gridSamples, cells, "
        "geometries, queries, state)");
  });
  io::checkHeader(r, kQueryFileFormat, format, version);
  if (!r.failed() && !geometries) r.fail("missing required key \"geometries\"");
  if (!r.failed() && !hasQueries) r.fail("missing required key \"queries\"");
  r.expectEnd("the query file");
  if (r.failed()) return invalid(r.error());

  // Point ranges into the file's own points, then inline points appended (and their previous
  // positions, where the file gives any, aligned with them); likewise grid samples.
  const size_t filePoints = file.points.size();
  const size_t fileSamples = file.gridSamples.size();
  if (previousPoints && previousPoints->size() != filePoints) {
    return invalid("previousPoints: has " + std::to_string(previousPoints->size()) + " points, expected " +
                   std::to_string(filePoints) + " (one per entry of \"points\")");
  }
  bool anyPrevious = previousPoints.has_value();
  for (const PendingGeometry& p : pending) anyPrevious = anyPrevious || p.hasInlinePrevious;
  if (anyPrevious) file.previousPoints = previousPoints ? *previousPoints : file.points;
  for (size_t i = 0; i < file.geometries.size(); ++i) {
    Geometry& g = file.geometries[i];
    const std::string at = "geometries[" + std::to_string(i) + "]";
    if (g.type == GeometryType::kImplicitGeometry) {
      if (pending[i].hasInlineSamples) {
        if (file.gridSamples.size() + pending[i].inlineSamples.size() > UINT32_MAX)
          return invalid(at + ".samples: too many samples");
        g.first = static_cast<uint32_t>(file.gridSamples.size());
        file.gridSamples.insert(file.gridSamples.end(), pending[i].inlineSamples.begin(),
                                pending[i].inlineSamples.end());
      } else if (uint64_t{g.first} + g.count > fileSamples) {
        return invalid(at + ".dims: samples [" + std::to_string(g.first) + ", " +
                       std::to_string(uint64_t{g.first} + g.count) + ") lie outside the file's " +
                       std::to_string(fileSamples) + " gridSamples");
      }
      continue;
    }
    if (g.type != GeometryType::kPointSet) continue;
    if (pending[i].hasInlinePoints) {
      if (anyPrevious) {
        const std::vector<Float4>& prev =
            pending[i].hasInlinePrevious ? pending[i].inlinePrevious : pending[i].inlinePoints;
        file.previousPoints.insert(file.previousPoints.end(), prev.begin(), prev.end());
      }
      if (file.points.size() + pending[i].inlinePoints.size() > UINT32_MAX)
        return invalid(at + ".points: too many points");
      g.first = static_cast<uint32_t>(file.points.size());
      g.count = static_cast<uint32_t>(pending[i].inlinePoints.size());
      file.points.insert(file.points.end(), pending[i].inlinePoints.begin(), pending[i].inlinePoints.end());
    } else if (uint64_t{g.first} + g.count > filePoints) {
      return invalid(at + ".count: points [" + std::to_string(g.first) + ", " +
                     std::to_string(uint64_t{g.first} + g.count) + ") lie outside the file's " +
                     std::to_string(filePoints) + " points");
    }
  }
  for (size_t i = 0; i < file.names.size(); ++i) {
    if (file.names[i].empty()) continue;
    for (size_t j = 0; j < i; ++j) {
      if (file.names[j] == file.names[i]) {
        return invalid("geometries[" + std::to_string(i) + "].name: \"" + file.names[i] +
                       "\" is also geometries[" + std::to_string(j) + "]'s name");
      }
    }
  }
  auto resolve = [&](const GeometryRef& ref, const std::string& at, uint32_t& out) -> Status {
    if (!ref.name.empty()) {
      for (size_t j = 0; j < file.names.size(); ++j) {
        if (file.names[j] == ref.name) {
          out = static_cast<uint32_t>(j);
          return {};
        }
      }
      return invalid(at + ": no geometry is named \"" + ref.name + "\"");
    }
    if (ref.index >= file.geometries.size()) {
      return invalid(at + ": geometry " + std::to_string(ref.index) + " is out of range; the file has " +
                     std::to_string(file.geometries.size()) + " geometries");
    }
    out = ref.index;
    return {};
  };
  for (size_t i = 0; i < queries.size(); ++i) {
    GeometryQuery& q = file.queries.emplace_back();
    const std::string at = "queries[" + std::to_string(i) + "]";
    if (Status st = resolve(queries[i].a, at + ".a", q.a); !st) return st.error();
    if (Status st = resolve(queries[i].b, at + ".b", q.b); !st) return st.error();
    q.method = queries[i].method;
  }
  bool moving = false;
  for (const PendingGeometry& p : pending) moving = moving || p.previous.has_value();
  if (moving) {
    for (size_t i = 0; i < pending.size(); ++i)
      file.previousGeometries.push_back(pending[i].previous.value_or(file.geometries[i]));
  }
  // State: each continuous query's entries, given or the next free ones.
  uint64_t used = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    GeometryQuery& q = file.queries[i];
    if (q.method != GeometryMethod::kContinuous) continue;
    uint32_t count = 0;  // the point set's points (validate() refuses a query without one point set)
    for (const uint32_t side : {q.b, q.a}) {
      if (file.geometries[side].type == GeometryType::kPointSet) count = file.geometries[side].count;
    }
    q.state = queries[i].state.value_or(static_cast<uint32_t>(std::min<uint64_t>(used, UINT32_MAX)));
    if (uint64_t{q.state} + count > UINT32_MAX) {
      return invalid("queries[" + std::to_string(i) + "].state: entries [" + std::to_string(q.state) + ", " +
                     std::to_string(uint64_t{q.state} + count) + ") pass 2^32 - 1");
    }
    used = std::max(used, uint64_t{q.state} + count);
  }
  if (state) {
    if (state->size() < used) {
      return invalid("state: has " + std::to_string(state->size()) + " entries, the continuous queries use " +
                     std::to_string(used));
    }
    file.state = std::move(*state);
  } else {
    file.state.assign(used, Float4{0, 0, 0, 0});
  }
  return file;
}

Result<GeometryQueryFile> loadGeometryQueries(const std::string& path) {
  return io::loadFile(path, parseGeometryQueries);
}

std::string writeGeometryQueries(const GeometryQueryFile& file) {
  std::string out = "{\n  \"format\": ";
  io::appendString(out, kQueryFileFormat);
  out += ",\n  \"version\": " + std::to_string(kQueryFileVersion) + ",\n  \"points\": [";
  for (size_t i = 0; i < file.points.size(); ++i) {
    out += i ? ",\n    " : "\n    ";
    appendVector(out, file.points[i], 3);
  }
  out += file.points.empty() ? "],\n" : "\n  ],\n";
  if (!file.previousPoints.empty()) {
    out += "  \"previousPoints\": [";
    for (size_t i = 0; i < file.previousPoints.size(); ++i) {
      out += i ? ",\n    " : "\n    ";
      appendVector(out, file.previousPoints[i], 3);
    }
    out += "\n  ],\n";
  }
  if (!file.gridSamples.empty()) {
    out += "  \"gridSamples\": [";
    for (size_t i = 0; i < file.gridSamples.size(); ++i) {
      out += i == 0 ? "\n    " : i % 8 == 0 ? ",\n    " : ", ";
      io::appendFloat(out, file.gridSamples[i]);
    }
    out += "\n  ],\n";
  }
  if (!file.cells.empty()) {
    out += "  \"cells\": [";
    for (size_t i = 0; i < file.cells.size(); ++i) {
      out += i == 0 ? "\n    " : i % 12 == 0 ? ",\n    " : ", ";
      out += std::to_string(file.cells[i]);
    }
    out += "\n  ],\n";
  }
  out += "  \"geometries\": [";
  for (size_t i = 0; i < file.geometries.size(); ++i) {
    const Geometry& g = file.geometries[i];
    const GeometryTypeSpec* type = findType(g.type);
    out += i ? ",\n    {" : "\n    {";
    if (i < file.names.size() && !file.names[i].empty()) {
      out += "\"name\": ";
      io::appendString(out, file.names[i]);
      out += ", ";
    }
    out += "\"type\": ";
    io::appendString(out, type != nullptr ? type->name : "?");
    if (type != nullptr) {
      for (const FieldSpec& s : type->fields) {
        const std::string value = fieldText(g, s);
        if (value.empty()) continue;
        out += ", \"" + std::string(s.name) + "\": " + value;
      }
      if (i < file.previousGeometries.size() && std::memcmp(&file.previousGeometries[i], &g, sizeof g) != 0) {
        std::string fields;
        for (const FieldSpec& s : type->fields) {
          if (!s.pose) continue;
          fields += (fields.empty() ? "\"" : ", \"") + std::string(s.name) +
                    "\": " + fieldText(file.previousGeometries[i], s);
        }
        out += ", \"previous\": {" + fields + "}";
      }
    }
    out += "}";
  }
  out += file.geometries.empty() ? "],\n" : "\n  ],\n";
  out += "  \"queries\": [";
  for (size_t i = 0; i < file.queries.size(); ++i) {
    const GeometryQuery& q = file.queries[i];
    out += i ? ",\n    " : "\n    ";
    out += "{\"a\": " + std::to_string(q.a) + ", \"b\": " + std::to_string(q.b) + ", \"method\": \"" +
           geometryMethodName(q.method) + "\"";
    if (q.method == GeometryMethod::kContinuous) out += ", \"state\": " + std::to_string(q.state);
    out += "}";
  }
  out += file.queries.empty() ? "]" : "\n  ]";
  appendState(out, file.state);
  out += "\n}\n";
  return out;
}

Status saveGeometryQueries(const GeometryQueryFile& file, const std::string& path) {
  return io::writeFile(path, writeGeometryQueries(file));
}

// ---- Contacts files ---------------------------------------------------------------------------

namespace {

// How many of a query's contacts were written: those below `written` in the output.
uint32_t writtenOf(const ContactRange& range, uint32_t written) {
  if (range.first >= written) return 0;
  return std::min(range.count, written - range.first);
}

void appendElement(std::string& out, const ContactElement& e) {
  out += "{\"type\": \"";
  out += contactElementTypeName(e.type);
  out += "\", ";
  if (e.type == ContactElementType::kPointIndexDirection || e.type == ContactElementType::kCellIndex)
    out += "\"index\": " + std::to_string(e.index) + ", ";
  if (e.cell != 0) out += "\"cell\": " + std::to_string(e.cell) + ", ";
  out += "\"point\": ";
  appendVector(out, e.point, 3);
  out += ", \"direction\": ";
  appendVector(out, e.direction, 3);
  out += ", \"depth\": ";
  io::appendFloat(out, e.point.w);
  out += "}";
}

bool readElement(io::JsonReader& r, ContactElement& e, uint32_t query) {
  e = ContactElement{};
  e.query = query;
  bool type = false, point = false, direction = false, depth = false, index = false;
  const bool ok = r.readObject([&](std::string_view key) {
    if (key == "type") return type = true, readEnum(r, kElementTypes, "element type", e.type);
    if (key == "index") return index = true, r.readUint32(e.index);
    if (key == "point") return point = true, io::readPoint(r, e.point);
    if (key == "direction") return direction = true, io::readPoint(r, e.direction);
    if (key == "depth") return depth = true, r.readFloat(e.point.w);
    if (key == "cell") return r.readUint32(e.cell);
    return r.fail("unknown key (known keys here: type, index, cell, point, direction, depth)");
  });
  if (!ok) return false;
  for (auto [seen, name] : {std::pair{type, "type"}, std::pair{point, "point"},
                            std::pair{direction, "direction"}, std::pair{depth, "depth"}}) {
    if (!seen) return r.fail(std::string("missing required key \"") + name + "\"");
  }
  const bool indexed =
      e.type == ContactElementType::kPointIndexDirection || e.type == ContactElementType::kCellIndex;
  if (indexed && !index)
    return r.fail("missing required key \"index\" of a pointIndexDirection or cellIndex element");
  if (!indexed && index) {
    return r.failAtKey("index", "only a pointIndexDirection or cellIndex element has an index");
  }
  return true;
}

}  // namespace

std::string writeContacts(const GeometryContacts& c) {
  std::string out = "{\n  \"format\": ";
  io::appendString(out, kContactsFileFormat);
  out += ",\n  \"version\": " + std::to_string(kContactsFileVersion) + ",\n  \"backend\": ";
  io::appendString(out, c.backend);
  out += ",\n  \"contacts\": " + std::to_string(c.counts.contacts) +
         ",\n  \"written\": " + std::to_string(c.counts.written) +
         ",\n  \"overflow\": " + (c.counts.overflow ? "true" : "false") + ",\n  \"queries\": [";
  for (size_t i = 0; i < c.ranges.size(); ++i) {
    const ContactRange& range = c.ranges[i];
    const GeometryQuery q = i < c.queries.size() ? c.queries[i] : GeometryQuery{};
    out += i ? ",\n    " : "\n    ";
    out += "{\"a\": " + std::to_string(q.a) + ", \"b\": " + std::to_string(q.b) + ", \"method\": \"" +
           geometryMethodName(q.method) + "\"";
    if (q.method == GeometryMethod::kContinuous) out += ", \"state\": " + std::to_string(q.state);
    out += ", \"first\": " + std::to_string(range.first) + ", \"count\": " + std::to_string(range.count);
    const uint32_t n = writtenOf(range, c.counts.written);
    for (const auto& [key, elements] :
         {std::pair{"elementsA", &c.elementsA}, std::pair{"elementsB", &c.elementsB}}) {
      out += ",\n     \"";
      out += key;
      out += "\": [";
      for (uint32_t k = 0; k < n; ++k) {
        out += k ? ",\n       " : "\n       ";
        appendElement(out, (*elements)[range.first + k]);
      }
      out += "]";
    }
    out += "}";
  }
  out += c.ranges.empty() ? "]" : "\n  ]";
  appendState(out, c.state);
  out += "\n}\n";
  return out;
}

Status saveContacts(const GeometryContacts& contacts, const std::string& path) {
  return io::writeFile(path, writeContacts(contacts));
}

Result<GeometryContacts> parseContacts(std::string_view json) {
  io::JsonReader r(json);
  GeometryContacts c;
  bool format = false, version = false, contacts = false, written = false, overflow = false, queries = false;
  r.readObject([&](std::string_view key) {
    if (key == "format") return io::readFormat(r, kContactsFileFormat, format);
    if (key == "version") return io::readVersion(r, kContactsFileVersion, version);
    if (key == "backend") return r.readString(c.backend);
    if (key == "contacts") return contacts = true, r.readUint32(c.counts.contacts);
    if (key == "written") return written = true, r.readUint32(c.counts.written);
    if (key == "overflow") return overflow = true, r.readBool(c.counts.overflow);
    if (key == "queries") {
      queries = true;
      c.elementsA.clear();
      c.elementsB.clear();
      return r.readArray([&](size_t i) {
        GeometryQuery& q = c.queries.emplace_back();
        ContactRange& range = c.ranges.emplace_back();
        bool a = false, b = false, first = false, count = false, state = false;
        size_t listed[2] = {0, 0};
        const bool ok = r.readObject([&](std::string_view k) {
          if (k == "a") return a = true, r.readUint32(q.a);
          if (k == "b") return b = true, r.readUint32(q.b);
          if (k == "method") return readEnum(r, kMethods, "method", q.method);
          if (k == "state") return state = true, r.readUint32(q.state);
          if (k == "first") return first = true, r.readUint32(range.first);
          if (k == "count") return count = true, r.readUint32(range.count);
          if (k == "elementsA" || k == "elementsB") {
            const int side = k == "elementsA" ? 0 : 1;
            std::vector<ContactElement>& out = side == 0 ? c.elementsA : c.elementsB;
            return r.readArray([&](size_t) {
              ++listed[side];
              return readElement(r, out.emplace_back(), static_cast<uint32_t>(i));
            });
          }
          return r.fail(
              "unknown key (known keys here: a, b, method, state, first, count, elementsA, elementsB)");
        });
        if (!ok) return false;
        for (auto [seen, name] :
             {std::pair{a, "a"}, std::pair{b, "b"}, std::pair{first, "first"}, std::pair{count, "count"}}) {
          if (!seen) return r.fail(std::string("missing required key \"") + name + "\"");
        }
        if (!checkQueryState(r, state, q.method)) return false;
        if (listed[0] != listed[1]) {
          return r.fail("lists " + std::to_string(listed[0]) + " elementsA but " + std::to_string(listed[1]) +
                        " elementsB: a contact is one element of each");
        }
        return true;
      });
    }
    if (key == "state") return readState(r, c.state);
    return r.fail(
        "unknown key (known keys here: format, version, backend, contacts, written, overflow, queries, "
        "state)");
  });
  io::checkHeader(r, kContactsFileFormat, format, version);
  for (auto [seen, name] : {std::pair{contacts, "contacts"}, std::pair{written, "written"},
                            std::pair{overflow, "overflow"}, std::pair{queries, "queries"}}) {
    if (!r.failed() && !seen) r.fail(std::string("missing required key \"") + name + "\"");
  }
  r.expectEnd("the contacts file");
  if (r.failed()) return invalid(r.error());
  // The ranges as queryGeometries writes them: consecutive, counts summing to "contacts", the listed
  // elements the part of each range below "written".
  if (c.counts.written > c.counts.contacts) return invalid("written: is larger than contacts");
  if (c.counts.overflow != (c.counts.written < c.counts.contacts)) {
    return invalid("overflow: must be true exactly when written < contacts");
  }
  uint64_t next = 0;
  size_t listed = 0;
  for (size_t i = 0; i < c.ranges.size(); ++i) {
    const ContactRange& range = c.ranges[i];
    const std::string at = "queries[" + std::to_string(i) + "]";
    if (range.first != next) {
      return invalid(at + ".first: is " + std::to_string(range.first) + ", expected " + std::to_string(next) +
                     " (the contacts of the queries before)");
    }
    next += range.count;
    const uint32_t n = writtenOf(range, c.counts.written);
    size_t have = 0;
    while (listed + have < c.elementsA.size() && c.elementsA[listed + have].query == i) ++have;
    if (have != n) {
      return invalid(at + ".elementsA: lists " + std::to_string(have) + " elements, expected " +
                     std::to_string(n) + " (count " + std::to_string(range.count) + ", written " +
                     std::to_string(c.counts.written) + ")");
    }
    listed += have;
  }
  if (next != c.counts.contacts) {
    return invalid("contacts: is " + std::to_string(c.counts.contacts) + " but the queries' counts sum to " +
                   std::to_string(next));
  }
  return c;
}

Result<GeometryContacts> loadContacts(const std::string& path) {
  return io::loadFile(path, parseContacts);
}

Result<std::string> readFileFormat(const std::string& path) {
  Result<std::string> text = io::readFile(path);
  if (!text) return text.error();
  io::JsonReader r(*text);
  std::string format;
  bool found = false;
  // Stops at the top-level "format" string (returning false without an error ends the object).
  r.readObject([&](std::string_view key) {
    if (key == "format" && r.peekValue() == '"') return found = r.readString(format), false;
    return r.skipValue();
  });
  if (!found) r.expectEnd("the top-level object");
  if (r.failed()) return invalid(path + ": " + r.error());
  return format;
}

}  // namespace vkc
