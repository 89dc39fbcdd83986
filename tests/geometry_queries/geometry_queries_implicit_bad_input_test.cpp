// Bad input of implicit geometries and continuous queries: every error names the field, and nothing
// is written (neither elements, ranges nor the continuous queries' state).
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "geometry_queries/geometry_queries_test_support.h"

namespace vkc::test::geometry {
namespace {

// A valid batch: a 3^3 grid (a plane's field, y - 0.5) vs a point set statically, and the point set
// vs a sphere continuously (state entries [1, 3)).
Batch validImplicitBatch() {
  Batch b;
  const uint32_t grid = b.addGrid(v3(0, 0, 0), 0.5f, 3, [](float, float y, float) { return y - 0.5f; });
  const uint32_t pts = b.addPoints({v3(0.5f, 0.2f, 0.5f), v3(0.5f, 0.9f, 0.5f)});
  const uint32_t s = b.add(Geometry::sphere({0.5f, 0, 0.5f, 0.3f}));
  b.previousPoints = {v3(0.5f, 0.5f, 0.5f), v3(0.5f, 0.9f, 0.5f)};
  b.query(grid, pts);
  b.continuous(pts, s, 1);
  return b;
}

TEST(GeometryQueriesImplicitBadInput, ValidBatchRuns) {
  Batch b = validImplicitBatch();
  auto counts = b.run(Backend::kCpuScalar, 8);
  ASSERT_TRUE(counts.ok()) << counts.message();
  // The point at y = 0.2 is below the field's zero; the first point enters the sphere.
  EXPECT_EQ(b.ranges[0].count, 1u);
  EXPECT_EQ(b.ranges[1].count, 1u);
  EXPECT_EQ(b.state[1].w, 1.0f);
}

TEST(GeometryQueriesImplicitBadInput, ZeroDimension) {
  Batch b = validImplicitBatch();
  b.geometries[0].p2.y = 0.0f;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0].p2.y (grid dimension) is 0");
}

TEST(GeometryQueriesImplicitBadInput, FractionalOrHugeDimension) {
  Batch b = validImplicitBatch();
  b.geometries[0].p2.z = 2.5f;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0].p2.z (grid dimension)");
  b = validImplicitBatch();
  b.geometries[0].p2.x = 4096.0f;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0].p2.x (grid dimension)");
}

TEST(GeometryQueriesImplicitBadInput, NonPositiveOrNaNSpacing) {
  Batch b = validImplicitBatch();
  b.geometries[0].p1.x = 0.0f;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0].p1.x (grid spacing)");
  b = validImplicitBatch();
  b.geometries[0].p1.z = -0.5f;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0].p1.z (grid spacing)");
  b = validImplicitBatch();
  b.geometries[0].p1.y = std::numeric_limits<float>::quiet_NaN();
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0].p1.y (grid spacing)");
}

TEST(GeometryQueriesImplicitBadInput, SampleRangeOutsideGridSamples) {
  Batch b = validImplicitBatch();
  b.geometries[0].first = 1;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0] (implicit geometry) covers samples [1, 28)");
  b = validImplicitBatch();
  b.geometries[0].count = 26;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0].count (implicit geometry) is 26");
}

TEST(GeometryQueriesImplicitBadInput, NaNSample) {
  Batch b = validImplicitBatch();
  b.gridSamples[13] = std::numeric_limits<float>::quiet_NaN();
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "gridSamples[13]");
}

TEST(GeometryQueriesImplicitBadInput, PreviousPointsSizeMismatch) {
  Batch b = validImplicitBatch();
  b.previousPoints.pop_back();
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "previousPoints holds 1 points");
  b = validImplicitBatch();
  b.previousPoints.clear();
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "queries[1] is continuous: previousPoints");
  b = validImplicitBatch();
  b.previousPoints[1].x = std::numeric_limits<float>::infinity();
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "previousPoints[1].x");
}

TEST(GeometryQueriesImplicitBadInput, UnknownOrUnsupportedMethod) {
  Batch b = validImplicitBatch();
  b.queries[0].method = static_cast<GeometryMethod>(7);
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "queries[0].method is 7: unknown method");
  b = validImplicitBatch();
  b.queries[0].method = GeometryMethod::kContinuous;  // a grid against a point set: fine
  b.queries.push_back(GeometryQuery{2, 0, GeometryMethod::kContinuous, 0});  // sphere vs grid: no
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument,
                        "queries[2].method is kContinuous: sphere vs implicit geometry has no continuous method");
}

TEST(GeometryQueriesImplicitBadInput, StateOutOfRangeOrInvalid) {
  Batch b = validImplicitBatch();
  b.state.pop_back();
  expectRefusedUnwritten(b, ErrorCode::kBufferTooSmall, "queries[1].state covers entries [1, 3)");
  b = validImplicitBatch();
  b.queries[0].state = 2;  // a static query with a state
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "queries[0].state is 2: must be 0 for a static query");
  b = validImplicitBatch();
  b.state[2].w = 0.5f;
  for (Backend backend : kCpuBackends) {
    auto counts = b.run(backend, 8);
    ASSERT_FALSE(counts.ok());
    EXPECT_NE(counts.message().find("output.state[2].w is 0.5: must be 0 or 1"), std::string::npos)
        << counts.message();
    EXPECT_EQ(b.state[1].w, 0.0f);  // untouched
  }
}

TEST(GeometryQueriesImplicitBadInput, PreviousGeometriesMustKeepCountTypeAndShape) {
  Batch b = validImplicitBatch();
  b.previousGeometries = b.geometries;
  b.previousGeometries[2].p0.x += 0.5f;  // the sphere moved: fine
  auto ok = b.run(Backend::kCpuScalar, 8);
  ASSERT_TRUE(ok.ok()) << ok.message();
  b.previousGeometries.pop_back();
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "previousGeometries holds 2 geometries");
  b = validImplicitBatch();
  b.previousGeometries = b.geometries;
  b.previousGeometries[2] = Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1));
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "previousGeometries[2].type is oriented box");
  b = validImplicitBatch();
  b.previousGeometries = b.geometries;
  b.previousGeometries[2].p0.w = 0.4f;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "previousGeometries[2] (previous pose) changes the radius");
  b = validImplicitBatch();
  b.previousGeometries = b.geometries;
  b.previousGeometries[0].p1.x = 0.25f;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "previousGeometries[0] (previous pose) changes the grid");
  b = validImplicitBatch();
  b.previousGeometries = b.geometries;
  b.previousGeometries[2].p0.y = std::numeric_limits<float>::quiet_NaN();
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "previousGeometries[2].p0.y");
}

TEST(GeometryQueriesImplicitBadInput, RangeFieldsOnOtherTypes) {
  Batch b = validImplicitBatch();
  b.geometries[2].first = 1;  // the sphere
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[2].first/count are set");
}

}  // namespace
}  // namespace vkc::test::geometry
