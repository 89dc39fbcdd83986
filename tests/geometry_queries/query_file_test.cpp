// Query files and contacts files (query_file.h): every geometry type read from its fields, names and
// inline point sets, implicit geometries and continuous queries (previous points and poses, state),
// write -> parse round trips bit for bit, and bad files refused naming the JSON path.
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

const char* kImplicitAndContinuous = R"({
  "format": "vkcollide-queries", "version": 1,
  "points": [[0, 0, 0.5], [0.5, 0, 0.95]],
  "previousPoints": [[0, 0, 5], [1, 0, 4]],
  "gridSamples": [9, 1, 2, 3, 4, 5, 6, 7, 8],
  "geometries": [
    {"name": "g", "type": "implicit", "origin": [-1, -1, -1], "spacing": [2, 2, 2], "dims": [2, 2, 2], "first": 1},
    {"type": "implicit", "origin": [0, 0, 0], "spacing": [0.5, 1, 2], "dims": [2, 3, 2],
     "samples": [-1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5]},
    {"name": "top", "type": "pointSet", "count": 2},
    {"name": "own", "type": "pointSet", "points": [[7, 7, 7], [8, 8, 8], [9, 9, 9]],
     "previousPoints": [[7, 7, 6], [8, 8, 7], [9, 9, 8]]},
    {"type": "pointSet", "points": [[4, 4, 4]]},
    {"name": "box", "type": "box", "centre": [0, 0, 1], "halfExtents": [1, 1, 0.1],
     "previous": {"centre": [0, 0, 2], "rotation": [0, 0, 0.6, 0.8]}}
  ],
  "queries": [
    {"a": "top", "b": "box", "method": "continuous"},
    {"a": "own", "b": "g"},
    {"a": "g", "b": "own", "method": "continuous"},
    {"a": 4, "b": 1, "method": "continuous", "state": 5},
    {"a": "top", "b": "g", "method": "continuous"}
  ],
  "state": [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [1, 2, 3, 1], [0, 0, 0, 0],
            [0, 0, 0, 0]]
})";

// Implicit geometries (samples by range or inline), previous points (top-level and inline, a set
// without them keeps its points), a previous pose, continuous queries' state offsets given or
// assigned, and the initial state.
TEST(QueryFile, ReadsImplicitGeometriesAndContinuousQueries) {
  Result<GeometryQueryFile> f = parseGeometryQueries(kImplicitAndContinuous);
  ASSERT_TRUE(f) << f.message();
  const std::vector<Geometry>& g = f->geometries;
  ASSERT_EQ(g.size(), 6u);
  EXPECT_TRUE(sameBits(g[0], Geometry::implicitGrid({-1, -1, -1, 0}, {2, 2, 2, 0}, 2, 2, 2, 1)));
  EXPECT_TRUE(sameBits(g[1], Geometry::implicitGrid({0, 0, 0, 0}, {0.5f, 1, 2, 0}, 2, 3, 2, 9)));  // appended
  ASSERT_EQ(f->gridSamples.size(), 21u);
  EXPECT_EQ(f->gridSamples[1], 1.0f);
  EXPECT_EQ(f->gridSamples[9], -1.0f);
  EXPECT_EQ(f->gridSamples[20], 4.5f);
  EXPECT_TRUE(sameBits(g[3], Geometry::pointSet(2, 3)));
  EXPECT_TRUE(sameBits(g[4], Geometry::pointSet(5, 1)));
  ASSERT_EQ(f->points.size(), 6u);
  ASSERT_EQ(f->previousPoints.size(), 6u);
  EXPECT_TRUE(sameBits(f->previousPoints[0], Float4{0, 0, 5, 0}));
  EXPECT_TRUE(sameBits(f->previousPoints[3], Float4{8, 8, 7, 0}));
  EXPECT_TRUE(sameBits(f->previousPoints[5], Float4{4, 4, 4, 0}));  // no previous points: not moving
  ASSERT_EQ(f->previousGeometries.size(), 6u);
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(sameBits(f->previousGeometries[i], g[i])) << i;
  EXPECT_TRUE(sameBits(f->previousGeometries[5],
                       Geometry::orientedBox({0, 0, 2, 0}, {0, 0, 0.6f, 0.8f}, {1, 1, 0.1f, 0})));
  ASSERT_EQ(f->queries.size(), 5u);
  EXPECT_EQ(f->queries[0].method, GeometryMethod::kContinuous);
  EXPECT_EQ(f->queries[0].state, 0u);  // 2 entries
  EXPECT_EQ(f->queries[1].method, GeometryMethod::kStatic);
  EXPECT_EQ(f->queries[1].state, 0u);
  EXPECT_EQ(f->queries[2].state, 2u);  // after query 0's; 3 entries
  EXPECT_EQ(f->queries[3].state, 5u);  // given
  EXPECT_EQ(f->queries[4].state, 6u);  // after the furthest entry used so far
  ASSERT_EQ(f->state.size(), 8u);
  EXPECT_TRUE(sameBits(f->state[5], Float4{1, 2, 3, 1}));
  EXPECT_TRUE(validate(f->input())) << validate(f->input()).message();

  // Without "state": zeros, as many as the queries use.
  std::string text = kImplicitAndContinuous;
  text = text.substr(0, text.find(",\n  \"state\"")) + "\n}";
  f = parseGeometryQueries(text);
  ASSERT_TRUE(f) << f.message();
  ASSERT_EQ(f->state.size(), 8u);
  for (const Float4& e : f->state) EXPECT_TRUE(sameBits(e, Float4{0, 0, 0, 0}));
}

TEST(QueryFile, ImplicitAndContinuousWriteThenParseIsBitwiseTheSame) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  GeometryQueryFile f;
  for (int i = 0; i < 20; ++i) f.points.push_back({u(rng), u(rng), u(rng), 0});
  for (int i = 0; i < 20; ++i) f.previousPoints.push_back({u(rng), u(rng), u(rng), 0});
  for (int i = 0; i < 3 * 4 * 5 + 3; ++i) f.gridSamples.push_back(u(rng) / 7.0f);
  f.geometries = {
      Geometry::implicitGrid({u(rng), u(rng), u(rng), 0}, {0.1f, 1.0f / 3.0f, 0.7f, 0}, 3, 4, 5, 3),
      Geometry::pointSet(0, 12),
      Geometry::orientedBox({0, u(rng), 0, 0}, {0.5f, 0.5f, 0.5f, 0.5f}, {0.1f, 0.2f, 0.3f, 0}),
      Geometry::capsule({u(rng), 0, 0, 0}, {0, u(rng), 0, 0}, 0.25f), Geometry::pointSet(12, 8)};
  f.names = {"sdf", "", "", "cap", ""};
  f.previousGeometries = f.geometries;
  f.previousGeometries[0].p0 = {u(rng), u(rng), u(rng), 0};
  f.previousGeometries[2].p0 = {u(rng), u(rng), u(rng), 0};
  f.previousGeometries[2].p1 = {0, 0, 0.6f, 0.8f};
  const Float4 shift{u(rng), u(rng), u(rng), 0};  // a capsule keeps its length: translated
  for (Float4* p : {&f.previousGeometries[3].p0, &f.previousGeometries[3].p1}) {
    p->x += shift.x;
    p->y += shift.y;
    p->z += shift.z;
  }
  f.queries = {{1, 0, GeometryMethod::kContinuous, 0},
               {2, 4, GeometryMethod::kContinuous, 12},
               {4, 0, GeometryMethod::kStatic, 0},
               {3, 4, GeometryMethod::kContinuous, 30}};
  for (int i = 0; i < 40; ++i) f.state.push_back({u(rng), u(rng), u(rng), static_cast<float>(i % 2)});
  ASSERT_TRUE(validate(f.input())) << validate(f.input()).message();
  const std::string text = writeGeometryQueries(f);
  Result<GeometryQueryFile> back = parseGeometryQueries(text);
  ASSERT_TRUE(back) << back.message() << "\n" << text;
  auto expectSame = [](const auto& got, const auto& want, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(sameBits(got[i], want[i])) << what << " " << i;
  };
  expectSame(back->geometries, f.geometries, "geometries");
  expectSame(back->points, f.points, "points");
  expectSame(back->previousPoints, f.previousPoints, "previousPoints");
  expectSame(back->gridSamples, f.gridSamples, "gridSamples");
  expectSame(back->previousGeometries, f.previousGeometries, "previousGeometries");
  expectSame(back->queries, f.queries, "queries");
  expectSame(back->state, f.state, "state");
  EXPECT_EQ(back->names, f.names);
  EXPECT_EQ(writeGeometryQueries(*back), text);
}

// The contacts of a continuous batch keep its queries' state offsets and the final state.
TEST(QueryFile, ContactsOfContinuousQueriesRoundTripWithTheirState) {
  Result<GeometryQueryFile> f = parseGeometryQueries(kImplicitAndContinuous);
  ASSERT_TRUE(f) << f.message();
  std::vector<ContactElement> a(64), b(64);
  std::vector<ContactRange> ranges(f->queries.size());
  std::vector<Float4> state = f->state;
  Result<GeometryQueryCounts> counts =
      queryGeometriesCpu(f->input(), {a, b, ranges, state}, Backend::kCpuScalar);
  ASSERT_TRUE(counts) << counts.message();
  ASSERT_GT(counts->contacts, 0u);
  a.resize(counts->written);
  b.resize(counts->written);
  const GeometryContacts c{"cpu-scalar", *counts, f->queries, ranges, a, b, state};
  const std::string text = writeContacts(c);
  Result<GeometryContacts> back = parseContacts(text);
  ASSERT_TRUE(back) << back.message() << "\n" << text;
  ASSERT_EQ(back->queries.size(), f->queries.size());
  for (size_t q = 0; q < f->queries.size(); ++q) EXPECT_TRUE(sameBits(back->queries[q], f->queries[q])) << q;
  ASSERT_EQ(back->state.size(), state.size());
  for (size_t k = 0; k < state.size(); ++k) EXPECT_TRUE(sameBits(back->state[k], state[k])) << k;
  EXPECT_EQ(writeContacts(*back), text);
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
              "plane, pointSet, implicit, surfaceMesh, lineMesh, tetrahedralMesh)");
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
              "queries[0].method: unknown method \"swept\" (known: static, continuous)");
  expectError(sphere + ", " + sphere, R"({"a": 0})", "queries[0]: missing required key \"b\"");
  expectError(
      R"({"name": "x", "type": "sphere", "centre": [0, 0, 0], "radius": 1}, {"name": "x", "type": "sphere", "centre": [0, 0, 0], "radius": 1})",
      q, "geometries[1].name: \"x\" is also geometries[0]'s name");

  const std::string grid = R"({"type": "implicit", "origin": [0, 0, 0], "spacing": [1, 1, 1], )";
  const std::string samples8 = R"("samples": [1, 1, 1, 1, 1, 1, 1, 1]})";
  expectError(sphere + ", " + grid + R"("dims": [2, 0, 2], )" + samples8, q,
              "geometries[1].dims[1]: is 0: must be in [2, 2048]");
  expectError(sphere + ", " + grid + R"("dims": [2, 2], )" + samples8, q,
              "geometries[1].dims: expected 3 numbers [nx, ny, nz], found 2");
  expectError(sphere + ", " +
                  R"({"type": "implicit", "origin": [0, 0, 0], "spacing": [1, -1, 1], "dims": [2, 2, 2]})",
              q, "geometries[1].spacing: every component must be > 0");
  expectError(sphere + ", " + grid + R"("dims": [2, 2, 3], )" + samples8, q,
              "geometries[1].samples: has 8 samples, expected nx * ny * nz = 12");
  expectError(sphere + ", " + grid + R"("dims": [2, 2, 2], "first": 0, )" + samples8, q,
              "geometries[1].samples: an implicit geometry gives either \"samples\" or \"first\", not both");
  expectError(sphere + ", " + grid + R"("dims": [2, 2, 2], "first": 1})", q,
              "geometries[1].dims: samples [1, 9) lie outside the file's 0 gridSamples");
  expectError(sphere + ", " + grid + R"("dims": [2, 2, 2], "samples": [1, 1, 1, 1, 1, 1, 1, Infinity]})", q,
              "geometries[1].samples[7]: expected a finite number");
  expectError(sphere + ", " + grid + R"("radius": 1, "dims": [2, 2, 2], )" + samples8, q,
              "geometries[1].radius: not a field of an implicit");
  expectError(sphere + ", " + R"({"type": "pointSet", "count": 1, "previousPoints": [[0, 0, 0]]})", q,
              "geometries[1].previousPoints: only a point set with its own \"points\" has them",
              "[[0, 0, 0]]");
  expectError(sphere + ", " + R"({"type": "pointSet", "points": [[0, 0, 0]], "previousPoints": []})", q,
              "geometries[1].previousPoints: has 0 points, expected 1");
  expectError(
      sphere + ", " + R"({"type": "sphere", "centre": [0, 0, 0], "radius": 1, "previous": {"radius": 2}})", q,
      "geometries[1].previous.radius: not a pose field of a sphere (its pose fields: centre)");
  expectError(sphere + ", " + R"({"type": "pointSet", "count": 1, "previous": {"centre": [0, 0, 0]}})", q,
              "geometries[1].previous.centre: not a pose field of a pointSet (its pose fields: none)",
              "[[0, 0, 0]]");
  expectError(
      sphere + ", " +
          R"({"type": "box", "centre": [0, 0, 0], "halfExtents": [1, 1, 1], "previous": {"rotation": [1, 1, 0, 0]}})",
      q, "geometries[1].previous.rotation: has length 1.41421: must be 1 within 1e-3");
  const std::string cloud = R"({"type": "pointSet", "count": 2})";
  expectError(sphere + ", " + cloud, R"({"a": 1, "b": 0, "state": 3})",
              "queries[0].state: only a continuous query has state", "[[0, 0, 0], [1, 1, 1]]");
  expectError(sphere + ", " + cloud, R"({"a": 1, "b": 0, "method": "swept"})",
              "queries[0].method: unknown method \"swept\" (known: static, continuous)",
              "[[0, 0, 0], [1, 1, 1]]");

  // Top-level arrays of the continuous method.
  const std::string body =
      R"("geometries": [{"type": "sphere", "centre": [0, 0, 0], "radius": 1}, {"type": "pointSet", "count": 2}], "queries": [{"a": 1, "b": 0, "method": "continuous", "state": 2}])";
  for (const auto& [top, expected] : std::vector<std::pair<std::string, std::string>>{
           {R"("points": [[0, 0, 0], [1, 1, 1]], "previousPoints": [[0, 0, 0]], )",
            "previousPoints: has 1 points, expected 2 (one per entry of \"points\")"},
           {R"("points": [[0, 0, 0], [1, 1, 1]], "state": [[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]], )",
            "state: has 3 entries, the continuous queries use 4"},
           {R"("points": [[0, 0, 0], [1, 1, 1]], "state": [[0, 0, 0, 0.5]], )",
            "state[0]: w is 0.5: must be 0 or 1"},
           {R"("points": [[0, 0, 0], [1, 1, 1]], "state": [[0, 0, 0]], )",
            "state[0]: expected 4 numbers [x, y, z, w], found 3"},
           {R"("points": [[0, 0, 0], [1, 1, 1]], "gridSamples": [1, null], )",
            "gridSamples[1]: expected a finite number"},
       }) {
    const std::string json = R"({"format": "vkcollide-queries", "version": 1, )" + top + body + "}";
    Result<GeometryQueryFile> f = parseGeometryQueries(json);
    ASSERT_FALSE(f) << json;
    EXPECT_NE(f.message().find(expected), std::string::npos) << f.message();
  }

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
           "queries[0].elementsA[0]: missing required key \"index\" of a pointIndexDirection or cellIndex "
           "element"},
          {head + R"("contacts": 1, "written": 1, "overflow": true, "queries": []})",
           "overflow: must be true exactly when written < contacts"},
          {head +
               R"("contacts": 3, "written": 0, "overflow": true, "queries": [{"a": 0, "b": 1, "first": 1, "count": 3}]})",
           "queries[0].first: is 1, expected 0"},
          // writeContacts leaves a static query's state out: read, it would not round-trip (the round
          // trip of fuzz/query_fuzz.cpp fails on it). Refused whether "method" comes before it or is
          // left out.
          {head +
               R"("contacts": 0, "written": 0, "overflow": false, "queries": [{"a": 0, "b": 1, "method": "static", "state": 5, "first": 0, "count": 0}]})",
           "queries[0].state: only a continuous query has state"},
          {head +
               R"("contacts": 0, "written": 0, "overflow": false, "queries": [{"a": 0, "b": 1, "state": 5, "first": 0, "count": 0}]})",
           "queries[0].state: only a continuous query has state"},
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
