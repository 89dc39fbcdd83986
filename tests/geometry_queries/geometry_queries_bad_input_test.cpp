// Bad input: every error names the field, and nothing is written (the output keeps its sentinel).
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "geometry_queries/geometry_queries_test_support.h"

namespace vkc::test::geometry {
namespace {

// A valid batch (sphere vs box, point set vs plane) that each case breaks in one place.
Batch validBatch() {
  Batch b;
  const uint32_t s = b.add(Geometry::sphere({0, 0.9f, 0, 0.5f}));
  const uint32_t box = b.add(Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 0.5f, 1)));
  const uint32_t pts = b.addPoints({v3(0, -1, 0), v3(0, 1, 0)});
  const uint32_t plane = b.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false));
  b.query(s, box);
  b.query(pts, plane);
  return b;
}

TEST(GeometryQueriesBadInput, ValidBatchRuns) {
  Batch b = validBatch();
  auto counts = b.run(Backend::kCpuScalar, 8);
  ASSERT_TRUE(counts.ok()) << counts.message();
  EXPECT_EQ(counts->contacts, 2u);  // the sphere in the box's top, the point below the plane
}

TEST(GeometryQueriesBadInput, NaNCoordinate) {
  Batch b = validBatch();
  b.geometries[0].p0.y = std::numeric_limits<float>::quiet_NaN();
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0].p0.y");
}

TEST(GeometryQueriesBadInput, InfinitePoint) {
  Batch b = validBatch();
  b.points[1].z = std::numeric_limits<float>::infinity();
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "points[1].z");
}

TEST(GeometryQueriesBadInput, NegativeRadius) {
  Batch b = validBatch();
  b.geometries[0].p0.w = -0.5f;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0].p0.w (radius)");
}

TEST(GeometryQueriesBadInput, NegativeHalfExtent) {
  Batch b = validBatch();
  b.geometries[1].p2.y = -0.5f;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[1].p2.y (half extent)");
}

TEST(GeometryQueriesBadInput, NegativeCylinderHalfHeight) {
  Batch b = validBatch();
  b.geometries[0] = Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1.0f, -1.0f);
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0].p1.w (half height)");
}

TEST(GeometryQueriesBadInput, NonUnitRotation) {
  Batch b = validBatch();
  b.geometries[1].p1 = Float4{0, 0, 0, 1.002f};
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[1].p1 (rotation quaternion)");
}

TEST(GeometryQueriesBadInput, RotationWithinToleranceIsAccepted) {
  Batch b = validBatch();
  b.geometries[1].p1 = Float4{0, 0, 0, 1.0009f};
  EXPECT_TRUE(b.run(Backend::kCpuScalar, 8).ok());
}

TEST(GeometryQueriesBadInput, NonUnitPlaneNormalAndCylinderAxis) {
  Batch b = validBatch();
  b.geometries[3].p1 = v3(0, 2, 0);
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[3].p1 (normal)");
  Batch c = validBatch();
  c.geometries[0] = Geometry::cylinder(v3(0, 0, 0), v3(0, 0.9f, 0), 1.0f, 1.0f);
  expectRefusedUnwritten(c, ErrorCode::kInvalidArgument, "geometries[0].p1 (axis)");
}

TEST(GeometryQueriesBadInput, PointRangeOutsideArray) {
  Batch b = validBatch();
  b.geometries[2].count = 3;  // points holds 2
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[2] (point set) covers points [0, 3)");
  Batch c = validBatch();
  c.geometries[2].first = 0xFFFFFFFFu;  // first + count overflows 32 bits
  expectRefusedUnwritten(c, ErrorCode::kInvalidArgument, "geometries[2] (point set)");
}

TEST(GeometryQueriesBadInput, UnknownTypeAndMethod) {
  Batch b = validBatch();
  b.geometries[1].type = static_cast<GeometryType>(10);
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[1].type is 10");
  Batch c = validBatch();
  c.queries[1].method = static_cast<GeometryMethod>(3);
  expectRefusedUnwritten(c, ErrorCode::kInvalidArgument, "queries[1].method is 3");
}

TEST(GeometryQueriesBadInput, QueryIndexOutOfRange) {
  Batch b = validBatch();
  b.queries[1].b = 4;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "queries[1].b is 4");
}

TEST(GeometryQueriesBadInput, NotApplicablePairs) {
  Batch b = validBatch();
  b.query(3, 3);
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "queries[2]: plane vs plane is not collidable");
  Batch c = validBatch();
  c.query(2, 2);
  expectRefusedUnwritten(c, ErrorCode::kInvalidArgument, "queries[2]: point set vs point set is not collidable");
}

TEST(GeometryQueriesBadInput, UnusedFieldsMustBeZero) {
  Batch b = validBatch();
  b.geometries[0].p2.x = 1.0f;
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "geometries[0].p2.x");
  Batch c = validBatch();
  c.geometries[0].flags = kGeometryFlagBidirectional;  // a sphere
  expectRefusedUnwritten(c, ErrorCode::kInvalidArgument, "geometries[0].flags");
}

TEST(GeometryQueriesBadInput, OutputSizes) {
  Batch b = validBatch();
  b.elementsA.assign(4, ContactElement{});
  b.elementsB.assign(3, ContactElement{});
  b.ranges.assign(2, ContactRange{0xDEADu, 0xDEADu});
  auto counts = queryGeometriesCpu(b.input(), {b.elementsA, b.elementsB, b.ranges}, Backend::kCpuScalar);
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.message().find("output.elementsA"), std::string::npos) << counts.message();
  EXPECT_EQ(b.ranges[0].first, 0xDEADu);
  b.elementsB.assign(4, ContactElement{});
  b.ranges.assign(1, ContactRange{0xDEADu, 0xDEADu});
  counts = queryGeometriesCpu(b.input(), {b.elementsA, b.elementsB, b.ranges}, Backend::kCpuScalar);
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.error().code, ErrorCode::kBufferTooSmall);
  EXPECT_NE(counts.message().find("output.ranges"), std::string::npos) << counts.message();
}

TEST(GeometryQueriesBadInput, VulkanBackendRefusedByTheCpuEntryPoint) {
  Batch b = validBatch();
  auto counts = b.run(Backend::kVulkan, 8);
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.error().code, ErrorCode::kUnsupported);
}

}  // namespace
}  // namespace vkc::test::geometry
