// Curves files (include/vkcollide/curves_file.h, docs/mesh-collision.md).
#include "vkcollide/curves_file.h"

#include "io/file.h"
#include "io/json_reader.h"
#include "io/json_writer.h"

namespace vkc {

namespace {

constexpr IntersectionShape kShapes[] = {IntersectionShape::kNone, IntersectionShape::kPoint,
                                         IntersectionShape::kLine, IntersectionShape::kPlane};

void appendPoint(std::string& out, const Float4& p) {
  const float xyz[3] = {p.x, p.y, p.z};
  io::appendFloats(out, xyz, 3);
}

bool readShape(io::JsonReader& r, IntersectionShape& out) {
  std::string name;
  if (!r.readString(name)) return false;
  for (IntersectionShape s : kShapes) {
    if (name == toString(s)) return out = s, true;
  }
  std::string known;
  for (IntersectionShape s : kShapes) known += std::string(known.empty() ? "" : ", ") + "\"" + toString(s) + "\"";
  return r.fail("unknown shape \"" + name + "\" (known: " + known + ")");
}

bool readCurve(io::JsonReader& r, CurvesFile& file) {
  IntersectionCurve& curve = file.curves.emplace_back();
  curve.firstPoint = static_cast<uint32_t>(file.curvePoints.size());
  bool closed = false, points = false;
  const bool ok = r.readObject([&](std::string_view key) {
    if (key == "closed") return closed = true, r.readBool(curve.closed);
    if (key == "points") {
      points = true;
      return r.readArray([&](size_t) { return io::readPoint(r, file.curvePoints.emplace_back()); });
    }
    return r.fail("unknown key (known keys here: closed, points)");
  });
  if (!ok) return false;
  if (!closed) return r.fail("missing required key \"closed\"");
  if (!points) return r.fail("missing required key \"points\"");
  curve.pointCount = static_cast<uint32_t>(file.curvePoints.size()) - curve.firstPoint;
  return true;
}

}  // namespace

CurvesFile toCurvesFile(const MeshIntersection& m, std::string_view backend) {
  return {std::string(backend), static_cast<uint32_t>(m.pairs.size()), m.coplanarPairs, m.shape, m.spread, m.normal,
          m.curvePoints, m.curves, m.touchingPoints};
}

std::string writeCurves(const CurvesFile& f) {
  std::string out = "{\n  \"format\": ";
  io::appendString(out, kCurvesFileFormat);
  out += ",\n  \"version\": " + std::to_string(kCurvesFileVersion) + ",\n  \"backend\": ";
  io::appendString(out, f.backend);
  out += ",\n  \"pairs\": " + std::to_string(f.pairs) + ",\n  \"coplanarPairs\": " + std::to_string(f.coplanarPairs) +
         ",\n  \"shape\": ";
  io::appendString(out, toString(f.shape));
  out += ",\n  \"spread\": ";
  appendPoint(out, f.spread);
  out += ",\n  \"normal\": ";
  appendPoint(out, f.normal);
  out += ",\n  \"curves\": [";
  for (size_t c = 0; c < f.curves.size(); ++c) {
    const IntersectionCurve& curve = f.curves[c];
    out += c == 0 ? "\n    {\"closed\": " : ",\n    {\"closed\": ";
    out += curve.closed ? "true" : "false";
    out += ", \"points\": [";
    for (uint32_t i = 0; i < curve.pointCount; ++i) {
      if (i > 0) out += ", ";
      appendPoint(out, f.curvePoints[curve.firstPoint + i]);
    }
    out += "]}";
  }
  out += f.curves.empty() ? "],\n" : "\n  ],\n";
  out += "  \"touchingPoints\": [";
  for (size_t i = 0; i < f.touchingPoints.size(); ++i) {
    if (i > 0) out += ", ";
    appendPoint(out, f.touchingPoints[i]);
  }
  out += "]\n}\n";
  return out;
}

Status saveCurves(const CurvesFile& file, const std::string& path) {
  return io::writeFile(path, writeCurves(file));
}

Result<CurvesFile> parseCurves(std::string_view json) {
  io::JsonReader r(json);
  CurvesFile f;
  bool format = false, version = false, pairs = false, coplanar = false, shape = false, spread = false,
       normal = false, curves = false, touching = false;
  r.readObject([&](std::string_view key) {
    if (key == "format") return io::readFormat(r, kCurvesFileFormat, format);
    if (key == "version") return io::readVersion(r, kCurvesFileVersion, version);
    if (key == "backend") return r.readString(f.backend);
    if (key == "pairs") return pairs = true, r.readUint32(f.pairs);
    if (key == "coplanarPairs") return coplanar = true, r.readUint32(f.coplanarPairs);
    if (key == "shape") return shape = true, readShape(r, f.shape);
    if (key == "spread") return spread = true, io::readPoint(r, f.spread);
    if (key == "normal") return normal = true, io::readPoint(r, f.normal);
    if (key == "curves") return curves = true, r.readArray([&](size_t) { return readCurve(r, f); });
    if (key == "touchingPoints") return touching = true, io::readPoints(r, f.touchingPoints);
    return r.fail(
        "unknown key (known keys here: format, version, backend, pairs, coplanarPairs, shape, spread, normal, "
        "curves, touchingPoints)");
  });
  io::checkHeader(r, kCurvesFileFormat, format, version);
  for (auto [seen, name] : {std::pair{pairs, "pairs"}, std::pair{coplanar, "coplanarPairs"}, std::pair{shape, "shape"},
                            std::pair{spread, "spread"}, std::pair{normal, "normal"}, std::pair{curves, "curves"},
                            std::pair{touching, "touchingPoints"}}) {
    if (!r.failed() && !seen) r.fail(std::string("missing required key \"") + name + "\"");
  }
  r.expectEnd("the curves file");
  if (r.failed()) return Error{ErrorCode::kInvalidArgument, r.error()};
  if (f.coplanarPairs > f.pairs) {
    return Error{ErrorCode::kInvalidArgument, "coplanarPairs: is " + std::to_string(f.coplanarPairs) +
                                                  ", more than pairs (" + std::to_string(f.pairs) + ")"};
  }
  return f;
}

Result<CurvesFile> loadCurves(const std::string& path) {
  return io::loadFile(path, parseCurves);
}

}  // namespace vkc
