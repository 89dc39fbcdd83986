// Curves files (docs/mesh-collision.md, "From the command line"): the intersection of two triangle meshes
// (intersectMeshes, mesh_intersection.h) as JSON, format "vkcollide-curves": its curves with their
// points, its touching points, its classification and how many triangle pairs met (the pairs
// themselves are not in the file). `vkcollide intersect --out` writes them. Part of the scene library
// (vkcollide::scene), like scene.h and query_file.h; files whose name ends in ".json.gz" are read and
// written through zlib.
//
//   vkc::Result<vkc::MeshIntersection> m = vkc::intersectMeshes(a, b, vkc::Backend::kCpuSimd);
//   vkc::Status s = vkc::saveCurves(vkc::toCurvesFile(*m, "cpu-simd"), "curves.json");
//   vkc::Result<vkc::CurvesFile> back = vkc::loadCurves("curves.json");  // m's curves, bit for bit
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vkcollide/mesh_intersection.h"
#include "vkcollide/result.h"
#include "vkcollide/types.h"

namespace vkc {
#include "vkcollide/export.h"
VKC_API_BEGIN

inline constexpr std::string_view kCurvesFileFormat = "vkcollide-curves";
inline constexpr uint32_t kCurvesFileVersion = 1;  // the version this build reads and writes

// A curves file as a plain value: a MeshIntersection less its pairs (their number instead), with
// the backend that computed it. Points are xyz; w is not in the file (0).
struct CurvesFile {
  std::string backend;                    // "cpu-scalar", "cpu-simd" (may be empty)
  uint32_t pairs = 0;                     // MeshIntersection::pairs.size()
  uint32_t coplanarPairs = 0;
  IntersectionShape shape = IntersectionShape::kNone;
  Float4 spread;
  Float4 normal;
  std::vector<Float4> curvePoints;        // the curves' points, one curve after another
  std::vector<IntersectionCurve> curves;  // ranges of curvePoints, in the file's order
  std::vector<Float4> touchingPoints;
};

// The file's value of an intersection that `backend` computed (its curves, points and classification
// copied; pairs.size() as the count, which must be below 2^32).
CurvesFile toCurvesFile(const MeshIntersection& intersection, std::string_view backend);

// The JSON text of a curves file: per curve "closed" and its "points" ([x, y, z] each), every float
// in shortest round-trip form. So parseCurves(writeCurves(f)) equals f bitwise, w components aside,
// where f's curves lie in curvePoints one after another in order (as intersectMeshes and parseCurves
// give them; other layouts come back so).
// Precondition: every curve's range lies inside curvePoints; the floats are finite.
std::string writeCurves(const CurvesFile& file);

// Writes writeCurves(file) to `path` (gzip for ".json.gz") through "<path>.tmp": on error no file at
// `path` is created or changed.
Status saveCurves(const CurvesFile& file, const std::string& path);

// Parses a curves file: its structure, the types of the values (finite numbers, [x, y, z] points, a
// known shape name) and the required keys; errors (kInvalidArgument) name the JSON path, e.g.
// "curves[2].points[5][1]: expected a finite number, found null", or the line and column for a
// syntax error.
Result<CurvesFile> parseCurves(std::string_view json);

// Reads and parses a file (".json.gz": gunzipped). kIo if it cannot be read; parse errors are
// prefixed with the path.
Result<CurvesFile> loadCurves(const std::string& path);

VKC_API_END
}  // namespace vkc
