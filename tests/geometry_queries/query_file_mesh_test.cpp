// Query and contacts files with meshes (query_file.h, docs/query-format.md): surface, line and
// tetrahedral meshes read from their fields and the top-level "cells", write -> parse bitwise, the
// contacts of mesh queries (cellIndex elements and their cell word) round trip bitwise, bad files.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "vkcollide/query_file.h"

namespace vkc {
namespace {

const char* kMeshes = R"({
  "format": "vkcollide-queries", "version": 1,
  "points": [[0, 0, 0], [1, 0, 0], [0, 0, 1], [0, 1, 0], [0.3, 0.1, 0.4]],
  "cells": [0, 2, 1, 0, 1, 0, 1, 2, 3],
  "geometries": [
    {"name": "floor", "type": "surfaceMesh", "first": 0, "count": 3, "cellFirst": 0, "cellCount": 1},
    {"name": "rod", "type": "lineMesh", "count": 2, "cellFirst": 3, "cellCount": 1},
    {"name": "tet", "type": "tetrahedralMesh", "count": 4, "cellFirst": 5, "cellCount": 1},
    {"name": "ball", "type": "sphere", "centre": [0.2, 0.1, 0.2], "radius": 0.3},
    {"type": "pointSet", "first": 4, "count": 1}
  ],
  "queries": [{"a": "floor", "b": "ball"}, {"a": "ball", "b": "rod"}, {"a": 4, "b": "tet"}]
})";

TEST(QueryFileMesh, ReadsMeshesAndRoundTripsBitwise) {
  Result<GeometryQueryFile> f = parseGeometryQueries(kMeshes);
  ASSERT_TRUE(f) << f.message();
  ASSERT_EQ(f->cells.size(), 9u);
  const Geometry& floor = f->geometries[0];
  EXPECT_EQ(floor.type, GeometryType::kSurfaceMesh);
  const Geometry surface = Geometry::surfaceMesh(0, 3, 0, 1);
  EXPECT_EQ(std::memcmp(&floor, &surface, sizeof floor), 0);
  const Geometry rod = Geometry::lineMesh(0, 2, 3, 1);
  EXPECT_EQ(std::memcmp(&f->geometries[1], &rod, sizeof rod), 0);
  const Geometry tet = Geometry::tetrahedralMesh(0, 4, 5, 1);
  EXPECT_EQ(std::memcmp(&f->geometries[2], &tet, sizeof tet), 0);
  const std::string text = writeGeometryQueries(*f);
  Result<GeometryQueryFile> back = parseGeometryQueries(text);
  ASSERT_TRUE(back) << back.message() << "\n" << text;
  EXPECT_EQ(back->cells, f->cells);
  ASSERT_EQ(back->geometries.size(), f->geometries.size());
  for (size_t i = 0; i < f->geometries.size(); ++i) {
    EXPECT_EQ(std::memcmp(&back->geometries[i], &f->geometries[i], sizeof(Geometry)), 0) << i;
  }
  EXPECT_EQ(writeGeometryQueries(*back), text);
}

// A closed surface mesh ("closed", "searchRadius") against a point set: read, run, written back
// bitwise; a negative search radius is refused.
TEST(QueryFileMesh, ClosedSurfaceMeshRoundTripsBitwise) {
  const char* kClosed = R"({
  "format": "vkcollide-queries", "version": 1,
  "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.1, 0.2, 0.1]],
  "cells": [0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3],
  "geometries": [
    {"name": "tet", "type": "surfaceMesh", "count": 4, "cellCount": 4, "closed": true, "searchRadius": 0.5},
    {"type": "pointSet", "first": 4, "count": 1}
  ],
  "queries": [{"a": 1, "b": "tet"}]
})";
  Result<GeometryQueryFile> f = parseGeometryQueries(kClosed);
  ASSERT_TRUE(f) << f.message();
  const Geometry closed = Geometry::closedSurfaceMesh(0, 4, 0, 4, 0.5f);
  EXPECT_EQ(std::memcmp(&f->geometries[0], &closed, sizeof closed), 0);
  std::vector<ContactElement> a(4), b(4);
  std::vector<ContactRange> ranges(1);
  Result<GeometryQueryCounts> counts = queryGeometriesCpu(f->input(), {a, b, ranges}, Backend::kCpuScalar);
  ASSERT_TRUE(counts) << counts.message();
  ASSERT_EQ(counts->contacts, 1u);  // 0.1 inside the faces x = 0 and z = 0: the first in cell order
  EXPECT_NEAR(a[0].point.w, 0.1f, 1e-6f);
  const std::string text = writeGeometryQueries(*f);
  Result<GeometryQueryFile> back = parseGeometryQueries(text);
  ASSERT_TRUE(back) << back.message() << "\n" << text;
  EXPECT_EQ(std::memcmp(&back->geometries[0], &closed, sizeof closed), 0) << text;
  std::string bad = kClosed;
  bad.replace(bad.find("0.5}"), 3, "-1");
  Result<GeometryQueryFile> refused = parseGeometryQueries(bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("geometries[0].searchRadius"), std::string::npos) << refused.message();
}

TEST(QueryFileMesh, ContactsWithCellElementsRoundTripBitwise) {
  Result<GeometryQueryFile> f = parseGeometryQueries(kMeshes);
  ASSERT_TRUE(f) << f.message();
  std::vector<ContactElement> a(16), b(16);
  std::vector<ContactRange> ranges(f->queries.size());
  Result<GeometryQueryCounts> counts = queryGeometriesCpu(f->input(), {a, b, ranges}, Backend::kCpuScalar);
  ASSERT_TRUE(counts) << counts.message();
  ASSERT_EQ(ranges[0].count, 1u);  // the ball over the triangle's face
  ASSERT_EQ(ranges[1].count, 1u);  // the ball on the segment
  ASSERT_EQ(ranges[2].count, 1u);  // the point in the tetrahedron
  EXPECT_EQ(a[0].type, ContactElementType::kCellIndex);
  EXPECT_EQ(b[1].type, ContactElementType::kCellIndex);
  EXPECT_NE(a[0].cell, 0u);
  GeometryContacts c{"cpu-scalar", *counts, f->queries, ranges, a, b};
  c.elementsA.resize(counts->written);
  c.elementsB.resize(counts->written);
  const std::string text = writeContacts(c);
  EXPECT_NE(text.find("\"cellIndex\""), std::string::npos) << text;
  Result<GeometryContacts> back = parseContacts(text);
  ASSERT_TRUE(back) << back.message() << "\n" << text;
  ASSERT_EQ(back->elementsA.size(), counts->written);
  for (size_t k = 0; k < counts->written; ++k) {
    EXPECT_EQ(std::memcmp(&back->elementsA[k], &a[k], sizeof a[k]), 0) << k;
    EXPECT_EQ(std::memcmp(&back->elementsB[k], &b[k], sizeof b[k]), 0) << k;
  }
  EXPECT_EQ(writeContacts(*back), text);
}

TEST(QueryFileMesh, BadMeshFilesNameTheJsonPath) {
  const auto refuse = [](const std::string& from, const std::string& to, const std::string& mentions) {
    std::string text = kMeshes;
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    Result<GeometryQueryFile> f = parseGeometryQueries(text);
    ASSERT_FALSE(f) << "accepted: " << to;
    EXPECT_NE(f.message().find(mentions), std::string::npos) << f.message();
  };
  refuse("\"cellCount\": 1}", "\"cellCount\": 16777217}",
         "geometries[0].cellCount: is 16777217: at most 2^24");
  refuse("\"count\": 3, \"cellFirst\": 0, \"cellCount\": 1", "\"count\": 3",
         "missing required key \"cellCount\"");
  refuse("\"cells\": [0,", "\"cells\": [-1,", "cells[0]");
  refuse("\"cellCount\": 1}", "\"cellCount\": 1, \"radius\": 2}", "not a field of a surfaceMesh");
  // Ranges and indices are validate()'s: the file parses, the run names the field.
  std::string text = kMeshes;
  text.replace(text.find("[0, 2, 1,"), 9, "[0, 7, 1,");
  Result<GeometryQueryFile> f = parseGeometryQueries(text);
  ASSERT_TRUE(f) << f.message();
  std::vector<ContactElement> a(4), b(4);
  std::vector<ContactRange> ranges(f->queries.size());
  Result<GeometryQueryCounts> counts = queryGeometriesCpu(f->input(), {a, b, ranges}, Backend::kCpuScalar);
  ASSERT_FALSE(counts);
  EXPECT_NE(counts.message().find("cells[1] (triangle 0, corner 1) is 7"), std::string::npos)
      << counts.message();
}

}  // namespace
}  // namespace vkc
