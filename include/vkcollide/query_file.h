// Geometry query files and contacts files (docs/query-format.md): a batch of pairwise geometry
// queries (geometry_queries.h) as JSON, format "vkcollide-queries", and the contacts a backend found
// for it, format "vkcollide-contacts". Part of the scene library (vkcollide::scene), like scene.h;
// files whose name ends in ".json.gz" are read and written through zlib.
//
// Geometries are written by type with readable fields ({"type": "sphere", "centre": [x, y, z],
// "radius": r}, ...); parseGeometryQueries checks the file's structure and the value rules of each
// field (finite numbers, radii and extents >= 0, unit vectors and quaternions within 1e-3, point
// ranges inside the file's points, query indices and geometry names that exist, known types and
// methods) and names the JSON path of the first problem, e.g. "geometries[3].radius: is -1: must be
// >= 0". What is left to the stage (e.g. a pair that is N/A) is refused by validate() with its own
// field name ("queries[2]: plane vs plane is not collidable ...").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vkcollide/geometry_queries.h"
#include "vkcollide/result.h"
#include "vkcollide/types.h"

namespace vkc {
#include "vkcollide/export.h"
VKC_API_BEGIN

inline constexpr std::string_view kQueryFileFormat = "vkcollide-queries";
inline constexpr std::string_view kContactsFileFormat = "vkcollide-contacts";
inline constexpr uint32_t kQueryFileVersion = 1;     // the version this build reads and writes
inline constexpr uint32_t kContactsFileVersion = 1;  // likewise for contacts files

// A query file as a plain value. After parsing, every point set's range lies inside `points` (a point
// set given with inline points in the file has them appended to `points`, after the file's own
// "points", in the order of the geometries), every implicit geometry's samples lie inside
// `gridSamples` (inline "samples" appended likewise), `names` has one entry per geometry ("" where the
// file gives none; non-empty names are unique) and every query's a and b index `geometries`.
// Continuous queries (docs/query-format.md): `previousPoints` is empty or one per point (a point not
// given a previous position in the file keeps its current one); `previousGeometries` is empty (no
// geometry of the file has a "previous" pose) or one per geometry (a geometry without one: itself);
// each continuous query's `state` is its first entry in `state` (the reader gives a query without one
// the next `count` entries after the earlier continuous queries', count: its point set's points), and
// `state` holds the file's "state" (initial persistent state), zeros where absent, at least as many
// entries as the continuous queries use.
struct GeometryQueryFile {
  std::vector<Geometry> geometries;
  std::vector<std::string> names;
  std::vector<Float4> points;  // xyz; w is not in the file (0)
  std::vector<GeometryQuery> queries;
  std::vector<float> gridSamples;      // the implicit geometries' samples
  std::vector<Float4> previousPoints;  // xyz; w 0
  std::vector<Geometry> previousGeometries;
  std::vector<Float4> state;  // the output state a run starts from (GeometryQueryOutput::state)
  std::vector<uint32_t> cells;  // the meshes' cells (vertex numbers), the file's "cells"

  // The stage's input over these vectors (they must outlive it and not change size).
  GeometryQueryInput input() const {
    return {geometries, points, queries, gridSamples, previousPoints, previousGeometries, cells};
  }
};

// Parses a query file from JSON text. Errors (kInvalidArgument) name the JSON path, or the line and
// column for a syntax error.
Result<GeometryQueryFile> parseGeometryQueries(std::string_view json);

// Reads and parses a file (".json.gz": gunzipped). kIo if it cannot be read; parse errors are
// prefixed with the path.
Result<GeometryQueryFile> loadGeometryQueries(const std::string& path);

// The JSON text of a query file: geometries by type, every float in shortest round-trip form, point
// sets as "first"/"count" into the top-level "points", implicit geometries as "first"/"dims" into the
// top-level "gridSamples", meshes as "first"/"count" (vertices) and "cellFirst"/"cellCount" into the
// top-level "cells", previous points as the top-level "previousPoints", a previous pose as the
// geometry's "previous" object (its pose fields; written only where the pose differs from the
// current geometry), every continuous query's "state" offset and the top-level "state". So
// parseGeometryQueries(writeGeometryQueries(f)) equals f bitwise, with these exceptions: inline point
// sets and samples come back as ranges, and previousGeometries comes back empty when no pose differs.
// Precondition: previousGeometries, where not empty, differ from geometries only in pose fields.
std::string writeGeometryQueries(const GeometryQueryFile& file);

// Writes writeGeometryQueries(file) to `path` (gzip for ".json.gz") through "<path>.tmp": on error no
// file at `path` is created or changed.
Status saveGeometryQueries(const GeometryQueryFile& file, const std::string& path);

// The contacts of one batch, as queryGeometries* returned them: the counts, one range per query and
// the written elements (elementsA[k] and elementsB[k] for k < counts.written, in order).
struct GeometryContacts {
  std::string backend;  // which backend found them ("cpu-scalar", ...; may be empty)
  GeometryQueryCounts counts;
  std::vector<GeometryQuery> queries;  // the batch's queries (a, b, method, state), one per range
  std::vector<ContactRange> ranges;
  std::vector<ContactElement> elementsA;  // counts.written elements
  std::vector<ContactElement> elementsB;
  std::vector<Float4> state;  // the continuous queries' state after the run (empty without any)
};

// The JSON text of a contacts file: per query its geometries, method, range and its written elements
// A and B (type, point, direction, depth, index for a point-set side or a mesh's cell, the cell word
// of a mesh element where nonzero), floats in shortest round-trip
// form, a continuous query's state offset, and the final "state" where not empty:
// parseContacts(writeContacts(c)) gives c back bitwise.
// Precondition: ranges and queries have the same size; elementsA and elementsB hold counts.written
// elements each, and every range lies within them as queryGeometries* writes it.
std::string writeContacts(const GeometryContacts& contacts);

// Writes writeContacts(contacts) to `path` (gzip for ".json.gz") through "<path>.tmp".
Status saveContacts(const GeometryContacts& contacts, const std::string& path);

// Parses a contacts file: structure, types, and that the elements listed per query match its range
// and the counts (errors name the JSON path).
Result<GeometryContacts> parseContacts(std::string_view json);
Result<GeometryContacts> loadContacts(const std::string& path);

// The value of a JSON file's top-level "format" key ("vkcollide-scene", "vkcollide-queries", ...):
// the keys before it are skipped (their syntax checked), the text after it is not read; "" when the
// top level is an object without a "format" string. kIo if the file cannot be read,
// kInvalidArgument if the text up to "format" (all of it, without one) is not JSON or not an object.
Result<std::string> readFileFormat(const std::string& path);

// The names used in query and contacts files: "sphere", "capsule", "cylinder", "box", "plane",
// "pointSet", "implicit", "surfaceMesh", "lineMesh", "tetrahedralMesh"; "static", "continuous";
// "pointDirection", "pointIndexDirection", "cellIndex". "?" for values without a name.
const char* geometryTypeName(GeometryType type);
const char* geometryMethodName(GeometryMethod method);
const char* contactElementTypeName(ContactElementType type);

VKC_API_END
}  // namespace vkc
