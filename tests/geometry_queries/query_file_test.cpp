// Query files and contacts files (query_file.h): every geometry type read from its fields, names and
// inline point sets, write -> parse round trips bit for bit, and bad files refused naming the JSON path.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support/tool_run.h"
#include "vkcollide/query_file.h"

namespace vkc {
namespace {

bool sameBits(const auto& a, const auto& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

const char* kValid = R"({
  "format": "vkcollide-queries", "version": 1,
  "points": [[0, 0, 0], [1, 2, 3]],
  "geometries": [
    {"name": "s", "type": "sphere", "centre": [1, 2, 3], "radius": 0.5},
    {"type": "capsule", "end0": [0, 0, 0], "end1": [0, 1, 0], "radius": 0.25},
    {"type": "cylinder", "centre": [0, 0, 1], "axis": [0, 0, 1], "radius": 0.5, "halfHeight": 2},
    {"name": "b", "type": "box", "centre": [0, 1, 0], "halfExtents": [1, 2, 3]},
    {"type": "plane", "point": [0, -1, 0], "normal": [0, 1, 0], "bidirectional": true},
    {"type": "pointSet", "first": 1, "count": 1},
    {"type": "pointSet", "points": [[5, 6, 7], [8, 9, 10]]}
  ],
  "queries": [{"a": "s", "b": 3}, {"a": 5, "b": "b", "method": "static"}, {"b": 1, "a": 6}]
})";

TEST(QueryFile, ReadsEveryTypeFromItsFields) {
  Result<GeometryQueryFile> f = parseGeometryQueries(kValid);
  ASSERT_TRUE(f) << f.message();
  ASSERT_EQ(f->geometries.size(), 7u);
  const std::vector<Geometry>& g = f->geometries;
  EXPECT_TRUE(sameBits(g[0], Geometry::sphere({1, 2, 3, 0.5f})));
  EXPECT_TRUE(sameBits(g[1], Geometry::capsule({0, 0, 0, 0}, {0, 1, 0, 0}, 0.25f)));
  EXPECT_TRUE(sameBits(g[2], Geometry::cylinder({0, 0, 1, 0}, {0, 0, 1, 0}, 0.5f, 2.0f)));
  EXPECT_TRUE(
      sameBits(g[3], Geometry::orientedBox({0, 1, 0, 0}, {0, 0, 0, 1}, {1, 2, 3, 0})));  // rotation default
  EXPECT_TRUE(sameBits(g[4], Geometry::plane({0, -1, 0, 0}, {0, 1, 0, 0}, true)));
  EXPECT_TRUE(sameBits(g[5], Geometry::pointSet(1, 1)));
  EXPECT_TRUE(sameBits(g[6], Geometry::pointSet(2, 2)));  // inline points appended after the file's
  ASSERT_EQ(f->points.size(), 4u);
  EXPECT_EQ(f->points[3].z, 10.0f);
  EXPECT_EQ(f->names[0], "s");
  EXPECT_EQ(f->names[1], "");
  ASSERT_EQ(f->queries.size(), 3u);
  EXPECT_EQ(f->queries[0].a, 0u);
  EXPECT_EQ(f->queries[0].b, 3u);
  EXPECT_EQ(f->queries[1].b, 3u);
  EXPECT_EQ(f->queries[2].a, 6u);
  EXPECT_EQ(f->queries[2].b, 1u);
  EXPECT_TRUE(validate(f->input()));
}

TEST(QueryFile, WriteThenParseIsBitwiseTheSame) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  GeometryQueryFile f;
  for (int i = 0; i < 40; ++i) f.points.push_back({u(rng), u(rng), u(rng), 0});
  f.geometries = {Geometry::sphere({u(rng), u(rng), u(rng), 0.1f + std::abs(u(rng))}),
                  Geometry::capsule({u(rng), u(rng), u(rng), 0}, {u(rng), u(rng), u(rng), 0}, 0.3f),
                  Geometry::cylinder({u(rng), 0, 0, 0}, {0.6f, 0.8f, 0, 0}, 1.0f / 3.0f, 0.7f),
                  Geometry::orientedBox({0, u(rng), 0, 0}, {0.5f, 0.5f, 0.5f, 0.5f}, {0.1f, 0.2f, 0.3f, 0}),
                  Geometry::plane({0, 0, u(rng), 0}, {0, 0, 1, 0}, false),
                  Geometry::pointSet(3, 30)};
  f.names = {"ball \"quoted\"", "", "", "crate", "", "cloud"};
  f.queries = {{0, 1, GeometryMethod::kStatic, 0},
               {5, 3, GeometryMethod::kStatic, 0},
               {2, 4, GeometryMethod::kStatic, 0}};
  const std::string text = writeGeometryQueries(f);
  Result<GeometryQueryFile> back = parseGeometryQueries(text);
  ASSERT_TRUE(back) << back.message() << "\n" << text;
  ASSERT_EQ(back->geometries.size(), f.geometries.size());
  for (size_t i = 0; i < f.geometries.size(); ++i)
    EXPECT_TRUE(sameBits(back->geometries[i], f.geometries[i])) << i;
  ASSERT_EQ(back->points.size(), f.points.size());
  for (size_t i = 0; i < f.points.size(); ++i) EXPECT_TRUE(sameBits(back->points[i], f.points[i])) << i;
  EXPECT_EQ(back->names, f.names);
  ASSERT_EQ(back->queries.size(), f.queries.size());
  for (size_t i = 0; i < f.queries.size(); ++i) EXPECT_TRUE(sameBits(back->queries[i], f.queries[i])) << i;
  EXPECT_EQ(writeGeometryQueries(*back), text);
}

// The contacts of a real batch (the library's CPU path), written and parsed back bit for bit; an
// overflowing batch keeps its counts and lists only the written elements.
TEST(QueryFile, ContactsRoundTripBitwiseWithAndWithoutOverflow) {
  Result<GeometryQueryFile> f = parseGeometryQueries(kValid);
  ASSERT_TRUE(f) << f.message();
  f->geometries[5] = Geometry::pointSet(0, 4);  // every point vs the box: some inside
  for (uint32_t capacity : {64u, 1u, 0u}) {
    SCOPED_TRACE(capacity);
    std::vector<ContactElement> a(capacity), b(capacity);
    std::vector<ContactRange> ranges(f->queries.size());
    Result<GeometryQueryCounts> counts = queryGeometriesCpu(f->input(), {a, b, ranges}, Backend::kCpuScalar);
    ASSERT_TRUE(counts) << counts.message();
    ASSERT_GE(counts->contacts, 2u);
    GeometryContacts c{"cpu-scalar", *counts, f->queries, ranges, a, b};
    c.elementsA.resize(counts->written);
    c.elementsB.resize(counts->written);
    const std::string text = writeContacts(c);
    Result<GeometryContacts> back = parseContacts(text);
    ASSERT_TRUE(back) << back.message() << "\n" << text;
    EXPECT_EQ(back->backend, "cpu-scalar");
    EXPECT_EQ(back->counts.contacts, counts->contacts);
    EXPECT_EQ(back->counts.written, counts->written);
    EXPECT_EQ(back->counts.overflow, counts->overflow);
    ASSERT_EQ(back->ranges.size(), ranges.size());
    for (size_t q = 0; q < ranges.size(); ++q) EXPECT_TRUE(sameBits(back->ranges[q], ranges[q])) << q;
    ASSERT_EQ(back->elementsA.size(), counts->written);
    ASSERT_EQ(back->elementsB.size(), counts->written);
    for (size_t k = 0; k < counts->written; ++k) {
      EXPECT_TRUE(sameBits(back->elementsA[k], a[k])) << k;
      EXPECT_TRUE(sameBits(back->elementsB[k], b[k])) << k;
    }
    EXPECT_EQ(writeContacts(*back), text);
  }
}

// Each bad file is refused with an error that names where (the JSON path) and what.
TEST(QueryFile, BadFilesNameTheJsonPath) {
  auto expectError = [](const std::string& geometries, const std::string& queries,
                        const std::string& expected, const std::string& points = "[]") {
    const std::string json = R"({"format": "vkcollide-queries", "version": 1, "points": )" + points +
                             R"(, "geometries": [)" + geometries + R"(], "queries": [)" + queries + "]}";
    Result<GeometryQueryFile> f = parseGeometryQueries(json);
    ASSERT_FALSE(f) << json;
    EXPECT_EQ(f.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(f.message().find(expected), std::string::npos) << f.message();
  };
  const std::string sphere = R"({"type": "sphere", "centre": [0, 0, 0], "radius": 1})";
  const std::string q = R"({"a": 0, "b": 1})";
  expectError(sphere + ", " + R"({"type": "sphere", "centre": [0, 0, 0], "radius": -1})", q,
              "geometries[1].radius: is -1: must be >= 0");
  expectError(sphere + ", " + R"({"type": "sphere", "centre": [0, 0], "radius": 1})", q,
              "geometries[1].centre: expected 3 numbers [x, y, z], found 2");
  expectError(sphere + ", " + R"({"type": "sphere", "centre": [0, 0, NaN], "radius": 1})", q,
              "geometries[1].centre[2]: expected a finite number");
  expectError(sphere + ", " + R"({"type": "sphere", "centre": [0, 0, 0]})", q,
              "geometries[1]: missing required key \"radius\" of a sphere");
  expectError(sphere + ", " + R"({"type": "sphere", "centre": [0, 0, 0], "radius": 1, "axis": [0, 0, 1]})", q,
              "geometries[1].axis: not a field of a sphere (its fields: centre, radius)");
  expectError(sphere + ", " + R"({"type": "sphere", "centre": [0, 0, 0], "radius": 1, "colour": 1})", q,
              "geometries[1].colour: unknown key (geometry keys: name, type, centre, radius");
  expectError(sphere + ", " + R"({"type": "torus", "centre": [0, 0, 0]})", q,
              "geometries[1].type: unknown geometry type \"torus\" (known: sphere, capsule, cylinder, box, "
              "plane, pointSet)");
  expectError(sphere + ", " + R"({"centre": [0, 0, 0], "radius": 1})", q,
              "geometries[1]: missing required key \"type\"");
  expectError(
      sphere + ", " +
          R"({"type": "box", "centre": [0, 0, 0], "rotation": [0, 0, 0, 2], "halfExtents": [1, 1, 1]})",
      q, "geometries[1].rotation: has length 2: must be 1 within 1e-3");
  expectError(sphere + ", " + R"({"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 0.5]})", q,
              "geometries[1].normal: has length 0.5: must be 1 within 1e-3");
  expectError(sphere + ", " + R"({"type": "pointSet", "first": 1, "count": 3})", q,
              "geometries[1].count: points [1, 4) lie outside the file's 2 points", "[[0, 0, 0], [1, 1, 1]]");
  expectError(sphere + ", " + R"({"type": "pointSet", "count": 1, "points": [[0, 0, 0]]})", q,
              "geometries[1].points: a point set gives either \"points\" or \"first\"/\"count\", not both");
  expectError(sphere + ", " + R"({"type": "pointSet"})", q,
              "geometries[1]: missing required key \"count\" of a pointSet");
  expectError(sphere + ", " + sphere, R"({"a": 0, "b": 2})",
              "queries[0].b: geometry 2 is out of range; the file has 2 geometries");
  expectError(sphere + ", " + sphere, R"({"a": "ball", "b": 1})",
              "queries[0].a: no geometry is named \"ball\"");
  expectError(sphere + ", " + sphere, R"({"a": 0, "b": 1, "method": "swept"})",
              "queries[0].method: unknown method \"swept\" (known: static)");
  expectError(sphere + ", " + sphere, R"({"a": 0})", "queries[0]: missing required key \"b\"");
  expectError(
      R"({"name": "x", "type": "sphere", "centre": [0, 0, 0], "radius": 1}, {"name": "x", "type": "sphere", "centre": [0, 0, 0], "radius": 1})",
      q, "geometries[1].name: \"x\" is also geometries[0]'s name");

  for (const auto& [json, expected] : std::vector<std::pair<std::string, std::string>>{
           {R"({"format": "vkcollide-scene", "version": 1, "geometries": [], "queries": []})",
            "format: expected \"vkcollide-queries\", found \"vkcollide-scene\""},
           {R"({"format": "vkcollide-queries", "version": 2, "geometries": [], "queries": []})",
            "version: unsupported version 2"},
           {R"({"format": "vkcollide-queries", "version": 1, "queries": []})",
            "missing required key \"geometries\""},
           {R"({"format": "vkcollide-queries", "version": 1, "geometries": [], "queries": []} x)",
            "unexpected text after the query file"},
       }) {
    Result<GeometryQueryFile> f = parseGeometryQueries(json);
    ASSERT_FALSE(f) << json;
    EXPECT_NE(f.message().find(expected), std::string::npos) << f.message();
  }
}

TEST(QueryFile, BadContactsFilesAreRefused) {
  const std::string head = R"({"format": "vkcollide-contacts", "version": 1, "backend": "x", )";
  const std::string element =
      R"({"type": "pointDirection", "point": [0, 0, 0], "direction": [0, 0, 1], "depth": 1})";
  for (
      const auto& [json, expected] : std::vector<std::pair<std::string, std::string>>{
          {head +
               R"("contacts": 2, "written": 1, "overflow": true, "queries": [{"a": 0, "b": 1, "first": 0, "count": 2, "elementsA": [], "elementsB": []}]})",
           "queries[0].elementsA: lists 0 elements, expected 1"},
          {head +
               R"("contacts": 1, "written": 1, "overflow": false, "queries": [{"a": 0, "b": 1, "first": 0, "count": 1, "elementsA": [)" +
               element + R"(], "elementsB": []}]})",
           "queries[0]: lists 1 elementsA but 0 elementsB"},
          {head +
               R"("contacts": 1, "written": 1, "overflow": false, "queries": [{"a": 0, "b": 1, "first": 0, "count": 1, "elementsA": [{"type": "pointIndexDirection", "point": [0, 0, 0], "direction": [0, 0, 1], "depth": 1}], "elementsB": [)" +
               element + "]}]}",
           "queries[0].elementsA[0]: missing required key \"index\" of a pointIndexDirection element"},
          {head + R"("contacts": 1, "written": 1, "overflow": true, "queries": []})",
           "overflow: must be true exactly when written < contacts"},
          {head +
               R"("contacts": 3, "written": 0, "overflow": true, "queries": [{"a": 0, "b": 1, "first": 1, "count": 3}]})",
           "queries[0].first: is 1, expected 0"},
      }) {
    Result<GeometryContacts> c = parseContacts(json);
    ASSERT_FALSE(c) << json;
    EXPECT_NE(c.message().find(expected), std::string::npos) << c.message();
  }
}

TEST(QueryFile, ReadFileFormatFindsTheTopLevelFormat) {
  const std::string path = test::tempPath("format.json");
  test::writeText(
      path,
      R"({"points": [[1, 2, {"format": "no"}]], "x": {"a": [true, null, "\"]"]}, "format": "vkcollide-queries"})");
  Result<std::string> f = readFileFormat(path);
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ(*f, "vkcollide-queries");
  test::writeText(path, R"({"cloths": []})");
  f = readFileFormat(path);
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ(*f, "");
  test::writeText(path, R"({"format": "x", "y": [1, 2)");  // nothing after "format" is read
  f = readFileFormat(path);
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ(*f, "x");
  test::writeText(path, R"({"y": [1, 2, "format": "x"})");
  f = readFileFormat(path);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, ErrorCode::kInvalidArgument);
  test::writeText(path, R"([{"format": "vkcollide-queries"}])");
  f = readFileFormat(path);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, ErrorCode::kInvalidArgument);
  std::remove(path.c_str());
  f = readFileFormat(path);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, ErrorCode::kIo);
}

}  // namespace
}  // namespace vkc
