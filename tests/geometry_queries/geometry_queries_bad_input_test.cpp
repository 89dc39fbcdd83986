// Bad input: every error names the field, and nothing is written (the output keeps its sentinel).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

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
  auto counts = queryGeometriesCpu(b.input(), {b.elementsA, b.elementsB, b.ranges, b.state}, Backend::kVulkan);
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.error().code, ErrorCode::kUnsupported);
  // queryGeometries needs a context for kVulkan.
  counts = b.run(Backend::kVulkan, 8);
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.message().find("needs a context"), std::string::npos) << counts.message();
}

// Two continuous queries sharing state entries would read each other's update: refused on every backend.
TEST(GeometryQueriesBadInput, OverlappingStateEntriesAreRefused) {
  Batch b;
  const uint32_t set = b.addPoints({v3(0, 0, 0), v3(1, 0, 0), v3(2, 0, 0)});
  const uint32_t sphere = b.add(Geometry::sphere({0, 0, 0, 1}));
  b.previousPoints = b.points;
  b.continuous(set, sphere, 0);
  b.continuous(sphere, set, 2);  // [2, 5) overlaps [0, 3)
  expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "queries[1].state overlaps the state entries of queries[0]");
}

// validate() against the header's rules field by field: every float word of each primitive type set
// to special values (NaN, infinities, -1, -0, a tiny value, ...), and unit vectors scaled across the
// 1e-3 tolerance, accepted exactly when the rules accept them (validate's first pass over the
// primitives must never accept what the detailed checks refuse, nor refuse a valid geometry).
TEST(GeometryQueriesBadInput, PrimitiveFieldsAcceptedExactlyByTheRules) {
  // Per type, per word of p0, p1, p2: 'f' finite, 'n' finite and >= 0, '0' zero, 'u' part of the
  // unit vector (finite; its length within 1e-3 of 1).
  struct Rule {
    Geometry base;
    const char* words;  // 12 characters: p0.xyzw p1.xyzw p2.xyzw
  };
  const Rule rules[] = {
      {Geometry::sphere({0.5f, -0.25f, 1.0f, 0.75f}), "fffn00000000"},
      {Geometry::capsule(v3(0.5f, -0.25f, 1.0f), v3(-1.0f, 2.0f, 0.125f), 0.75f), "fffnfff00000"},
      {Geometry::cylinder({0.5f, -0.25f, 1.0f, 0}, v3(0, 1, 0), 0.75f, 0.5f), "fffnuuun0000"},
      {Geometry::orientedBox({0.5f, -0.25f, 1.0f, 0}, identityQuat(), {1.0f, 0.5f, 0.25f, 0}), "fff0uuuunnn0"},
      {Geometry::plane(v3(0.5f, -0.25f, 1.0f), v3(0, 0, 1), true), "fff0uuu00000"},
  };
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, -1.0f, -0.0f, 0.0f, 1e-38f,
                            -1e-38f, 0.75f, 1e-3f};
  const auto accepted = [](const Geometry& g, const char* words) {
    float w[12];
    std::memcpy(w, &g.p0, sizeof w);
    double len2 = 0.0;
    for (int k = 0; k < 12; ++k) {
      const char r = words[k];
      if (r == '0' && w[k] != 0.0f) return false;
      if (r != '0' && !std::isfinite(w[k])) return false;
      if (r == 'n' && w[k] < 0.0f) return false;
      if (r == 'u') len2 += static_cast<double>(w[k]) * static_cast<double>(w[k]);
    }
    return std::strchr(words, 'u') == nullptr || std::abs(std::sqrt(len2) - 1.0) <= static_cast<double>(1e-3f);
  };
  int refused = 0;
  for (const Rule& rule : rules) {
    std::vector<Geometry> variants;
    for (int k = 0; k < 12; ++k) {
      for (float v : specials) {
        Geometry g = rule.base;
        float w[12];
        std::memcpy(w, &g.p0, sizeof w);
        w[k] = v;
        std::memcpy(&g.p0, w, sizeof w);
        variants.push_back(g);
      }
    }
    for (double scale : {0.998, 0.9989, 0.99899, 0.999, 0.99901, 1.0, 1.00099, 1.001, 1.00101, 1.0011, 1.002}) {
      Geometry g = rule.base;
      g.p1 = Float4{g.p1.x * static_cast<float>(scale), g.p1.y * static_cast<float>(scale),
                    g.p1.z * static_cast<float>(scale), g.p1.w};
      if (g.type == GeometryType::kOrientedBox) g.p1.w = rule.base.p1.w * static_cast<float>(scale);
      variants.push_back(g);
    }
    for (const Geometry& g : variants) {
      const std::vector<Geometry> one{g};
      const Status status = validate(GeometryQueryInput{one, {}, {}});
      const bool expected = accepted(g, rule.words);
      EXPECT_EQ(status.ok(), expected) << "type " << static_cast<int>(g.type) << " p0 (" << g.p0.x << ", " << g.p0.y
                                       << ", " << g.p0.z << ", " << g.p0.w << ") p1 (" << g.p1.x << ", " << g.p1.y
                                       << ", " << g.p1.z << ", " << g.p1.w << ") p2 (" << g.p2.x << ", " << g.p2.y
                                       << ", " << g.p2.z << ", " << g.p2.w << ")"
                                       << (status.ok() ? "" : ": " + status.error().message);
      refused += status.ok() ? 0 : 1;
    }
  }
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace vkc::test::geometry
