// iMSTK's own collision detection tests (Kitware/iMSTK, Source/CollisionDetection/Testing,
// Apache-2.0) re-expressed: their inputs, expected element counts, types, directions, depths and
// contact points, for every pair this module covers. iMSTK's shapes are axis-y by default: Sphere()
// has radius 1, Plane() passes through the origin with normal +y, Capsule(pos, r, length) has a
// segment of that length, Cylinder() has radius 1 and length 1. Every case also runs with A and B
// swapped (elements swapped bit for bit) and on both CPU backends (equal bit for bit).
#include <gtest/gtest.h>

#include <cmath>

#include "geometry_queries/geometry_queries_test_support.h"

namespace vkc::test::geometry {
namespace {

constexpr float kTol = 1e-6f;
constexpr auto kPD = ContactElementType::kPointDirection;
constexpr auto kPID = ContactElementType::kPointIndexDirection;

// The contacts of query (a, b), checked against (b, a) and across backends.
struct PairResult {
  std::vector<ContactElement> a, b;
};

PairResult runPair(const Geometry& ga, const Geometry& gb, const std::vector<Float4>& points = {}) {
  Batch batch;
  batch.points = points;
  const uint32_t ia = batch.add(ga);
  const uint32_t ib = batch.add(gb);
  batch.query(ia, ib);
  batch.query(ib, ia);
  PairResult result;
  std::vector<ContactElement> scalarA, scalarB;
  for (Backend backend : kCpuBackends) {
    auto counts = batch.run(backend);
    EXPECT_TRUE(counts.ok()) << counts.message();
    if (!counts.ok()) return result;
    EXPECT_FALSE(counts->overflow);
    const ContactRange ab = batch.ranges[0];
    const ContactRange ba = batch.ranges[1];
    EXPECT_EQ(ab.count, ba.count) << "swapping A and B changes the contact count";
    EXPECT_EQ(ab.first + ab.count, ba.first);
    for (uint32_t k = 0; k < ab.count && k < ba.count; ++k) {
      ContactElement swappedA = batch.elementsB[ba.first + k];
      ContactElement swappedB = batch.elementsA[ba.first + k];
      swappedA.query = swappedB.query = 0;
      EXPECT_TRUE(bitwiseEqual(batch.elementsA[ab.first + k], swappedA)) << "contact " << k;
      EXPECT_TRUE(bitwiseEqual(batch.elementsB[ab.first + k], swappedB)) << "contact " << k;
      expectContactInvariants(batch.elementsA[ab.first + k], batch.elementsB[ab.first + k], 1e-5f);
    }
    std::vector<ContactElement> a(batch.elementsA.begin() + ab.first, batch.elementsA.begin() + ab.first + ab.count);
    std::vector<ContactElement> b(batch.elementsB.begin() + ab.first, batch.elementsB.begin() + ab.first + ab.count);
    if (backend == Backend::kCpuScalar) {
      result.a = a;
      result.b = b;
    } else {
      EXPECT_EQ(a.size(), result.a.size());
      for (size_t k = 0; k < a.size() && k < result.a.size(); ++k) {
        EXPECT_TRUE(bitwiseEqual(a[k], result.a[k]) && bitwiseEqual(b[k], result.b[k])) << "backends differ";
      }
    }
  }
  return result;
}

const Geometry kImstkPlane = Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false);
const Geometry kImstkPlaneTwoSided = Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), true);

TEST(GeometryQueriesImstk, BidirectionalPlaneToSphereAbovePlane) {
  PairResult r = runPair(Geometry::sphere({0.5f, 0.25f, 0.5f, 1.0f}), kImstkPlaneTwoSided);
  ASSERT_EQ(r.a.size(), 1u);
  expectElement(r.a[0], kPD, {v3(0.5f, -0.75f, 0.5f), v3(0, 1, 0), 0.75f}, kTol, "sphere");
  expectElement(r.b[0], kPD, {v3(0.5f, 0, 0.5f), v3(0, -1, 0), 0.75f}, kTol, "plane");
}

TEST(GeometryQueriesImstk, BidirectionalPlaneToSphereBelowPlane) {
  PairResult r = runPair(Geometry::sphere({0.5f, -0.25f, 0.5f, 1.0f}), kImstkPlaneTwoSided);
  ASSERT_EQ(r.a.size(), 1u);
  expectElement(r.a[0], kPD, {v3(0.5f, 0.75f, 0.5f), v3(0, -1, 0), 0.75f}, kTol, "sphere");
  expectElement(r.b[0], kPD, {v3(0.5f, 0, 0.5f), v3(0, 1, 0), 0.75f}, kTol, "plane");
}

TEST(GeometryQueriesImstk, BidirectionalPlaneToSphereNoIntersection) {
  EXPECT_TRUE(runPair(Geometry::sphere({3.0f, 1.1f, 2.0f, 1.0f}), kImstkPlaneTwoSided).a.empty());
}

TEST(GeometryQueriesImstk, UnidirectionalPlaneToSphere) {
  PairResult r = runPair(Geometry::sphere({0, 0, 0, 1.0f}), kImstkPlane);
  ASSERT_EQ(r.a.size(), 1u);
  expectElement(r.a[0], kPD, {v3(0, -1, 0), v3(0, 1, 0), 1.0f}, kTol, "sphere");
  expectElement(r.b[0], kPD, {v3(0, 0, 0), v3(0, -1, 0), 1.0f}, kTol, "plane");
}

TEST(GeometryQueriesImstk, UnidirectionalPlaneToSphereNoIntersection) {
  EXPECT_TRUE(runPair(Geometry::sphere({0, 0, 0, 0.5f}), Geometry::plane(v3(0, -0.75f, 0), v3(0, 1, 0), false)).a.empty());
}

// CollisionUtils::testPlaneToSphere (imstkCollisionUtilsTest.cpp): a sphere of radius 2 against the
// plane y = 0, from outside to fully under it. Glancing (touching) is no contact, as in iMSTK.
TEST(GeometryQueriesImstk, CollisionUtilsPlaneToSphere) {
  EXPECT_TRUE(runPair(Geometry::sphere({0, 3, 0, 2}), kImstkPlane).a.empty());  // outside
  EXPECT_TRUE(runPair(Geometry::sphere({0, 2, 0, 2}), kImstkPlane).a.empty());  // glancing
  const float centres[] = {1, 0, -1, -2};  // a little inside, centre on the plane, plane above it, fully under
  for (float y : centres) {
    PairResult r = runPair(Geometry::sphere({0, y, 0, 2}), kImstkPlane);
    ASSERT_EQ(r.a.size(), 1u) << y;
    expectElement(r.a[0], kPD, {v3(0, y - 2, 0), v3(0, 1, 0), 2 - y}, kTol, "sphere");
    expectElement(r.b[0], kPD, {v3(0, 0, 0), v3(0, -1, 0), 2 - y}, kTol, "plane");
  }
}

TEST(GeometryQueriesImstk, UnidirectionalPlaneToCapsule) {
  PairResult r = runPair(imstkCapsule(v3(0, 0, 0), 0.1f, 1.0f), kImstkPlane);
  ASSERT_EQ(r.a.size(), 1u);  // only the lower end sphere reaches below the plane
  expectElement(r.a[0], kPD, {v3(0, -0.6f, 0), v3(0, 1, 0), 0.6f}, kTol, "capsule");
  expectElement(r.b[0], kPD, {v3(0, 0, 0), v3(0, -1, 0), 0.6f}, kTol, "plane");
}

TEST(GeometryQueriesImstk, UnidirectionalPlaneToCapsuleNoIntersection) {
  EXPECT_TRUE(runPair(imstkCapsule(v3(0, 2, 0), 0.1f, 1.0f), kImstkPlane).a.empty());
}

TEST(GeometryQueriesImstk, SphereToSphere) {
  PairResult r = runPair(Geometry::sphere({0, 0, 0, 0.5f}), Geometry::sphere({0, 0.5f, 0, 0.5f}));
  ASSERT_EQ(r.a.size(), 1u);
  expectElement(r.a[0], kPD, {v3(0, 0.5f, 0), v3(0, -1, 0), 0.5f}, kTol, "sphere A");
  expectElement(r.b[0], kPD, {v3(0, 0, 0), v3(0, 1, 0), 0.5f}, kTol, "sphere B");
}

TEST(GeometryQueriesImstk, SphereToSphereNoIntersection) {
  EXPECT_TRUE(runPair(Geometry::sphere({-1, 0, 0, 0.5f}), Geometry::sphere({1, 0, 0, 0.5f})).a.empty());
}

TEST(GeometryQueriesImstk, SphereToCapsule) {
  PairResult r = runPair(Geometry::sphere({0.15f, 0, 0, 0.1f}), imstkCapsule(v3(0, 0, 0), 0.1f, 1.0f));
  ASSERT_EQ(r.a.size(), 1u);
  expectElement(r.a[0], kPD, {v3(0.05f, 0, 0), v3(1, 0, 0), 0.05f}, kTol, "sphere");
  expectElement(r.b[0], kPD, {v3(0.1f, 0, 0), v3(-1, 0, 0), 0.05f}, kTol, "capsule");
}

TEST(GeometryQueriesImstk, SphereToCapsuleNoIntersection) {
  EXPECT_TRUE(runPair(Geometry::sphere({1.15f, 0, 0, 0.1f}), imstkCapsule(v3(0, 0, 0), 0.1f, 1.0f)).a.empty());
}

TEST(GeometryQueriesImstk, SphereToCylinder) {
  PairResult r = runPair(Geometry::sphere({0, 1, 0, 0.75f}), imstkCylinder(v3(0, 0, 0), 1.0f, 1.0f));
  ASSERT_EQ(r.a.size(), 1u);  // the cap case
  expectElement(r.a[0], kPD, {v3(0, 0.25f, 0), v3(0, 1, 0), 0.25f}, kTol, "sphere");
  expectElement(r.b[0], kPD, {v3(0, 0.5f, 0), v3(0, -1, 0), 0.25f}, kTol, "cylinder");
}

TEST(GeometryQueriesImstk, SphereToCylinderNoIntersection) {
  EXPECT_TRUE(runPair(Geometry::sphere({0, 1, 0, 0.4f}), imstkCylinder(v3(0, 0, 0), 1.0f, 1.0f)).a.empty());
}

TEST(GeometryQueriesImstk, PointSetToSphere) {
  PairResult r = runPair(Geometry::pointSet(0, 1), Geometry::sphere({0, -2, 0, 2.1f}), {v3(0, 0, 0)});
  ASSERT_EQ(r.a.size(), 1u);
  EXPECT_EQ(r.a[0].index, 0u);
  EXPECT_EQ(r.b[0].index, kNoPointIndex);
  expectElement(r.a[0], kPID, {v3(0, 0, 0), v3(0, 1, 0), 0.1f}, kTol, "point");
  expectElement(r.b[0], kPD, {v3(0, 0.1f, 0), v3(0, -1, 0), 0.1f}, kTol, "sphere");
}

TEST(GeometryQueriesImstk, PointSetToSphereNoIntersection) {
  const Float4 cases[][2] = {{Float4{0, -8, 0, 2.1f}, v3(0, 0, 0)},
                             {Float4{0, 0, 0, 1.0f}, v3(0, 5, 0)},
                             {Float4{0, 0, 0, 0.1f}, v3(2, 0, 0)},
                             {Float4{0, 0, 7.4f, 5.0f}, v3(0, 0, -10)}};
  for (const auto& c : cases) {
    EXPECT_TRUE(runPair(Geometry::pointSet(0, 1), Geometry::sphere(c[0]), {c[1]}).a.empty());
  }
}

TEST(GeometryQueriesImstk, PointSetToCapsule) {
  PairResult r = runPair(Geometry::pointSet(0, 1), imstkCapsule(v3(0, 0, 0), 0.5f, 1.0f), {v3(0.25f, 0, 0)});
  ASSERT_EQ(r.a.size(), 1u);
  EXPECT_EQ(r.a[0].index, 0u);
  expectElement(r.a[0], kPID, {v3(0.25f, 0, 0), v3(1, 0, 0), 0.25f}, kTol, "point");
  expectElement(r.b[0], kPD, {v3(0.5f, 0, 0), v3(-1, 0, 0), 0.25f}, kTol, "capsule");
}

TEST(GeometryQueriesImstk, PointSetToCapsuleNoIntersection) {
  EXPECT_TRUE(runPair(Geometry::pointSet(0, 1), imstkCapsule(v3(0, 0, 0), 0.5f, 1.0f), {v3(5, 5, 5)}).a.empty());
}

TEST(GeometryQueriesImstk, PointSetToOrientedBox) {
  const Geometry cube = Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1));
  PairResult r = runPair(Geometry::pointSet(0, 1), cube, {v3(0, 0.9f, 0)});
  ASSERT_EQ(r.a.size(), 1u);
  EXPECT_EQ(r.a[0].index, 0u);
  expectElement(r.a[0], kPID, {v3(0, 0.9f, 0), v3(0, 1, 0), 0.1f}, 1e-5f, "point");
  expectElement(r.b[0], kPD, {v3(0, 1.0f, 0), v3(0, -1, 0), 0.1f}, 1e-5f, "box");
}

TEST(GeometryQueriesImstk, PointSetToOrientedBoxNoIntersection) {
  const Geometry cube = Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1));
  EXPECT_TRUE(runPair(Geometry::pointSet(0, 1), cube, {v3(0, 1.1f, 0)}).a.empty());
}

// iMSTK puts the plane's element at the point itself (y = -0.5); ours is the point's projection on
// the plane (y = 0), so that pointB = pointA + directionA * depth holds for every pair.
TEST(GeometryQueriesImstk, PointSetToPlane) {
  PairResult r = runPair(Geometry::pointSet(0, 1), kImstkPlane, {v3(0, -0.5f, 0)});
  ASSERT_EQ(r.a.size(), 1u);
  EXPECT_EQ(r.a[0].index, 0u);
  expectElement(r.a[0], kPID, {v3(0, -0.5f, 0), v3(0, 1, 0), 0.5f}, kTol, "point");
  expectElement(r.b[0], kPD, {v3(0, 0, 0), v3(0, -1, 0), 0.5f}, kTol, "plane");
}

TEST(GeometryQueriesImstk, PointSetToPlaneNoIntersection) {
  const float s = 1.0f / std::sqrt(3.0f);
  EXPECT_TRUE(runPair(Geometry::pointSet(0, 1), Geometry::plane(v3(0, 0, 0), v3(s, s, s), false), {v3(1, 1, 1)}).a.empty());
}

}  // namespace
}  // namespace vkc::test::geometry
