// Closed-form cases of the pairs beyond iMSTK's tests, the multi-contact pairs, point set order and
// ranges, batches and overflow, and the swap rule on random pairs of every supported type.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "geometry_queries/geometry_queries_test_support.h"
#include "shared/geometry_queries_math.h"

namespace vkc::test::geometry {
namespace {

constexpr float kTol = 1e-5f;
constexpr auto kPD = ContactElementType::kPointDirection;

// Contacts of one query (a, b) on kCpuScalar; every contact's invariants checked.
std::vector<std::pair<ContactElement, ContactElement>> contacts(const Geometry& a, const Geometry& b,
                                                                 const std::vector<Float4>& points = {}) {
  Batch batch;
  batch.points = points;
  batch.query(batch.add(a), batch.add(b));
  auto counts = batch.run(Backend::kCpuScalar);
  EXPECT_TRUE(counts.ok()) << counts.message();
  std::vector<std::pair<ContactElement, ContactElement>> out;
  if (!counts.ok()) return out;
  for (uint32_t k = 0; k < batch.ranges[0].count; ++k) {
    out.emplace_back(batch.elementsA[k], batch.elementsB[k]);
    expectContactInvariants(batch.elementsA[k], batch.elementsB[k], 1e-5f);
  }
  return out;
}


TEST(GeometryQueriesAnalytic, SphereBoxFaceEdgeCornerAndInside) {
  const Geometry box = Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 2, 3));
  auto face = contacts(Geometry::sphere({1.3f, 0, 0, 0.5f}), box);
  ASSERT_EQ(face.size(), 1u);
  expectElement(face[0].first, kPD, {v3(0.8f, 0, 0), v3(1, 0, 0), 0.2f}, kTol, "face");
  // Edge (x = 1, y = 2): the centre 0.3 beyond along the diagonal.
  const float d = 0.3f / std::sqrt(2.0f);
  auto edge = contacts(Geometry::sphere({1 + d, 2 + d, 0, 0.5f}), box);
  ASSERT_EQ(edge.size(), 1u);
  const float h = 1 / std::sqrt(2.0f);
  expectElement(edge[0].second, kPD, {v3(1, 2, 0), v3(-h, -h, 0), 0.2f}, kTol, "edge");
  auto corner = contacts(Geometry::sphere({1.1f, 2.1f, 3.1f, 0.5f}), box);
  ASSERT_EQ(corner.size(), 1u);
  EXPECT_NEAR(corner[0].first.point.w, 0.5f - 0.1f * std::sqrt(3.0f), kTol);
  // Inside: the nearest face is x = +1 (0.2 away); the sphere leaves through it.
  auto inside = contacts(Geometry::sphere({0.8f, 0, 0, 0.5f}), box);
  ASSERT_EQ(inside.size(), 1u);
  expectElement(inside[0].first, kPD, {v3(0.3f, 0, 0), v3(1, 0, 0), 0.7f}, kTol, "inside");
  EXPECT_TRUE(contacts(Geometry::sphere({1.6f, 0, 0, 0.5f}), box).empty());
}

TEST(GeometryQueriesAnalytic, RotatedBoxPoint) {
  // A box rotated 90 degrees about z: its local x (half extent 2) lies along world y.
  const Geometry box = Geometry::orientedBox(v3(1, 1, 1), quatAxisAngle(0, 0, 1, 1.5707964f), v3(2, 0.5f, 0.5f));
  auto c = contacts(Geometry::pointSet(0, 1), box, {v3(1, 2.9f, 1)});
  ASSERT_EQ(c.size(), 1u);
  expectElement(c[0].first, ContactElementType::kPointIndexDirection, {v3(1, 2.9f, 1), v3(0, 1, 0), 0.1f}, kTol,
                "point");
  EXPECT_TRUE(contacts(Geometry::pointSet(0, 1), box, {v3(1.6f, 2, 1)}).empty());
}

TEST(GeometryQueriesAnalytic, SphereCylinderWallRimAndNearerCap) {
  const Geometry cyl = Geometry::cylinder(v3(0, 0, 0), v3(0, 0, 1), 1.0f, 2.0f);
  auto wall = contacts(Geometry::sphere({1.2f, 0, 0.5f, 0.5f}), cyl);
  ASSERT_EQ(wall.size(), 1u);
  expectElement(wall[0].second, kPD, {v3(1, 0, 0.5f), v3(-1, 0, 0), 0.3f}, kTol, "wall");
  // Rim: the centre off the rim circle (r = 1, z = 2) by (0.2, 0.2).
  auto rim = contacts(Geometry::sphere({1.2f, 0, 2.2f, 0.5f}), cyl);
  ASSERT_EQ(rim.size(), 1u);
  expectElement(rim[0].second, kPD, {v3(1, 0, 2), v3(-std::sqrt(0.5f), 0, -std::sqrt(0.5f)), 0.5f - 0.2f * std::sqrt(2.0f)},
                kTol, "rim");
  // Centre inside, 0.1 below the top cap and 0.5 from the wall: out through the cap (iMSTK: the wall).
  auto cap = contacts(Geometry::sphere({0.5f, 0, 1.9f, 0.25f}), cyl);
  ASSERT_EQ(cap.size(), 1u);
  expectElement(cap[0].first, kPD, {v3(0.5f, 0, 1.65f), v3(0, 0, 1), 0.35f}, kTol, "cap");
}

TEST(GeometryQueriesAnalytic, CapsuleCapsuleCrossingAndParallel) {
  // Crossing at right angles, axes 0.3 apart.
  auto cross = contacts(Geometry::capsule(v3(-1, 0, 0), v3(1, 0, 0), 0.2f),
                        Geometry::capsule(v3(0.25f, -1, 0.3f), v3(0.25f, 1, 0.3f), 0.2f));
  ASSERT_EQ(cross.size(), 1u);
  expectElement(cross[0].first, kPD, {v3(0.25f, 0, 0.2f), v3(0, 0, -1), 0.1f}, kTol, "crossing");
  // Parallel, overlapping on x in [0, 1]: one contact at the middle of the overlap.
  auto parallel = contacts(Geometry::capsule(v3(-1, 0, 0), v3(1, 0, 0), 0.2f),
                           Geometry::capsule(v3(0, 0.3f, 0), v3(3, 0.3f, 0), 0.2f));
  ASSERT_EQ(parallel.size(), 1u);
  expectElement(parallel[0].first, kPD, {v3(0.5f, 0.2f, 0), v3(0, -1, 0), 0.1f}, kTol, "parallel");
  // End to end, apart.
  EXPECT_TRUE(contacts(Geometry::capsule(v3(-1, 0, 0), v3(1, 0, 0), 0.2f),
                       Geometry::capsule(v3(1.5f, 0, 0), v3(3, 0, 0), 0.2f)).empty());
}

TEST(GeometryQueriesAnalytic, CapsuleBoxAndCapsuleCylinder) {
  const Geometry box = Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1));
  // Tilted capsule whose lower end dips 0.15 into the top face.
  auto tilted = contacts(Geometry::capsule(v3(0.2f, 1.05f, 0), v3(2, 3, 0), 0.2f), box);
  ASSERT_EQ(tilted.size(), 1u);
  expectElement(tilted[0].first, kPD, {v3(0.2f, 0.85f, 0), v3(0, 1, 0), 0.15f}, kTol, "tilted");
  // Lying flat on the top face, 0.05 deep along its whole length: a contact under each end (iMSTK
  // gives one, about which a lying capsule can roll).
  auto flat = contacts(Geometry::capsule(v3(-0.5f, 1.15f, 0), v3(0.5f, 1.15f, 0), 0.2f), box);
  ASSERT_EQ(flat.size(), 2u);
  expectElement(flat[0].first, kPD, {v3(-0.5f, 0.95f, 0), v3(0, 1, 0), 0.05f}, kTol, "flat end 0");
  expectElement(flat[0].second, kPD, {v3(-0.5f, 1.0f, 0), v3(0, -1, 0), 0.05f}, kTol, "flat end 0, box");
  expectElement(flat[1].first, kPD, {v3(0.5f, 0.95f, 0), v3(0, 1, 0), 0.05f}, kTol, "flat end 1");
  // Longer than the face and slightly tilted: the contacts are near where the axis leaves the face
  // (x = -1 and x = 1), each with its own depth. The deepest axis point lies 1.1e-3 beyond the edge
  // at x = -1 (nearest the edge: 0.0900055 deep, not 0.09, its direction tilted 0.01 towards -x):
  // it is the first contact.
  auto overhang = contacts(Geometry::capsule(v3(-2, 1.1f, 0), v3(2, 1.14f, 0), 0.2f), box);
  ASSERT_EQ(overhang.size(), 2u);
  expectElement(overhang[0].first, kPD, {v3(-1, 0.91f, 0), v3(0, 1, 0), 0.0900055f}, 1.2e-2f, "overhang end 0");
  EXPECT_NEAR(overhang[0].first.point.w, 0.0900055f, 1e-5f);
  EXPECT_GE(overhang[0].first.point.w, 0.09f);
  expectElement(overhang[1].first, kPD, {v3(1, 0.93f, 0), v3(0, 1, 0), 0.07f}, 1e-4f, "overhang end 1");
  // Across the cylinder's wall: a capsule along z at x = 1.1 against a cylinder of radius 1 along y.
  const Geometry cyl = Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1.0f, 1.0f);
  auto wall = contacts(Geometry::capsule(v3(1.1f, 0.2f, -2), v3(1.1f, 0.2f, 2), 0.25f), cyl);
  ASSERT_EQ(wall.size(), 1u);
  // The distance is flat to second order at its minimum, so the search places the contact along
  // the axis only to about sqrt(float epsilon) (here 1.1e-4 of 4 units): the depth is tight, the
  // point and the direction within 1e-3.
  EXPECT_NEAR(wall[0].first.point.w, 0.15f, kTol);
  expectNear3(wall[0].first.direction, 1, 0, 0, 1e-3f, "cylinder wall direction");
  expectNear3(wall[0].first.point, 0.85f, 0.2f, 0, 1e-3f, "cylinder wall point");
  EXPECT_TRUE(contacts(Geometry::capsule(v3(1.3f, 0.2f, -2), v3(1.3f, 0.2f, 2), 0.25f), cyl).empty());
}

TEST(GeometryQueriesAnalytic, BoxBoxFaceAndEdgeContacts) {
  const Geometry unit = Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(0.5f, 0.5f, 0.5f));
  // Face to face: the manifold is the incident face (B's -x face) clipped by A's +x face: its four
  // corners, each 0.1 deep, in the incident face's order (y, then z; - first).
  auto face = contacts(unit, Geometry::orientedBox(v3(0.9f, 0, 0), identityQuat(), v3(0.5f, 0.5f, 0.5f)));
  ASSERT_EQ(face.size(), 4u);
  const float ys[4] = {-0.5f, 0.5f, 0.5f, -0.5f};
  const float zs[4] = {-0.5f, -0.5f, 0.5f, 0.5f};
  for (size_t k = 0; k < 4; ++k) {
    expectElement(face[k].first, kPD, {v3(0.5f, ys[k], zs[k]), v3(-1, 0, 0), 0.1f}, kTol, "face A");
    expectElement(face[k].second, kPD, {v3(0.4f, ys[k], zs[k]), v3(1, 0, 0), 0.1f}, kTol, "face B");
  }
  // A small box near the corner of a large one: its bottom face clipped to the large box's top face
  // (x and z up to 2): the square [1.65, 2] x [1.65, 2], 0.05 deep.
  auto small = contacts(Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(2, 0.5f, 2)),
                        Geometry::orientedBox(v3(1.9f, 0.7f, 1.9f), identityQuat(), v3(0.25f, 0.25f, 0.25f)));
  ASSERT_EQ(small.size(), 4u);
  for (const auto& c : small) {
    EXPECT_NEAR(c.first.point.w, 0.05f, kTol);
    expectNear3(c.first.direction, 0, -1, 0, kTol, "small on large");
    EXPECT_NEAR(c.first.point.y, 0.5f, kTol);
    EXPECT_GE(c.first.point.x, 1.65f - kTol);
    EXPECT_LE(c.first.point.x, 2.0f + kTol);
    EXPECT_GE(c.first.point.z, 1.65f - kTol);
    EXPECT_LE(c.first.point.z, 2.0f + kTol);
  }
  // A box turned 45 degrees about y resting 0.05 deep on another: its bottom face (a diamond seen
  // from above) clipped by the square top face is an octagon: 8 contacts.
  auto octagon = contacts(unit, Geometry::orientedBox(v3(0, 0.95f, 0), quatAxisAngle(0, 1, 0, 0.7853982f),
                                                      v3(0.5f, 0.5f, 0.5f)));
  ASSERT_EQ(octagon.size(), 8u);
  for (const auto& c : octagon) {
    EXPECT_NEAR(c.first.point.w, 0.05f, kTol);
    EXPECT_NEAR(c.first.point.y, 0.5f, kTol);
    EXPECT_NEAR(c.second.point.y, 0.45f, kTol);
    EXPECT_LE(std::abs(c.first.point.x), 0.5f + kTol);
    EXPECT_LE(std::abs(c.first.point.z), 0.5f + kTol);
    EXPECT_LE(std::abs(c.first.point.x) + std::abs(c.first.point.z), std::sqrt(0.5f) + kTol);  // inside the diamond
  }
  // Tilted 0.2 rad about z, its lowest edge 0.05 below the top face: the clipped face's points below
  // the face are that edge's two ends (the others are above: no contact).
  const float tilt = 0.2f;
  const float lowest = 0.5f * (std::cos(tilt) + std::sin(tilt));  // centre height above the lowest edge
  auto tilted = contacts(unit, Geometry::orientedBox(v3(0, 0.45f + lowest, 0), quatAxisAngle(0, 0, 1, tilt),
                                                     v3(0.5f, 0.5f, 0.5f)));
  ASSERT_EQ(tilted.size(), 2u);
  for (const auto& c : tilted) {
    EXPECT_NEAR(c.first.point.w, 0.05f, 1e-5f);
    EXPECT_NEAR(std::abs(c.second.point.z), 0.5f, 1e-5f);
  }
  // Edge on edge: A turned 45 degrees about x (top edge along x), B turned 45 degrees about z
  // (bottom edge along z), 1.4 above: the edges cross, overlapping by sqrt(2) - 1.4.
  const float q = 0.7853982f;
  auto edge = contacts(Geometry::orientedBox(v3(0, 0, 0), quatAxisAngle(1, 0, 0, q), v3(0.5f, 0.5f, 0.5f)),
                       Geometry::orientedBox(v3(0, 1.4f, 0), quatAxisAngle(0, 0, 1, q), v3(0.5f, 0.5f, 0.5f)));
  ASSERT_EQ(edge.size(), 1u);
  expectElement(edge[0].first, kPD, {v3(0, std::sqrt(0.5f), 0), v3(0, -1, 0), std::sqrt(2.0f) - 1.4f}, 1e-5f, "edge");
  EXPECT_TRUE(contacts(unit, Geometry::orientedBox(v3(0, 1.5f, 0), quatAxisAngle(0, 0, 1, q), v3(0.5f, 0.5f, 0.5f)))
                  .empty());
}

TEST(GeometryQueriesAnalytic, CylinderCylinderAndCylinderBox) {
  // Parallel cylinders side by side (axes 1.7 apart, radii 1): the walls overlap by 0.3, along the
  // lines' common part (y in [-0.5, 1]: CylinderCylinderManifold below).
  auto side = contacts(Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1.0f, 1.0f),
                       Geometry::cylinder(v3(1.7f, 0.5f, 0), v3(0, 1, 0), 1.0f, 1.0f));
  ASSERT_EQ(side.size(), 2u);
  expectElement(side[0].first, kPD, {v3(1, -0.5f, 0), v3(-1, 0, 0), 0.3f}, kTol, "side by side, low end");
  expectElement(side[1].first, kPD, {v3(1, 1, 0), v3(-1, 0, 0), 0.3f}, kTol, "side by side, high end");
  // Crossed cylinders, stacked: axes along x and z, 1.8 apart in y, radii 1: 0.2 deep along y.
  auto crossed = contacts(Geometry::cylinder(v3(0, 0, 0), v3(1, 0, 0), 1.0f, 3.0f),
                          Geometry::cylinder(v3(0, 1.8f, 0), v3(0, 0, 1), 1.0f, 3.0f));
  ASSERT_EQ(crossed.size(), 1u);
  expectElement(crossed[0].first, kPD, {v3(0, 1, 0), v3(0, -1, 0), 0.2f}, kTol, "crossed");
  // A cylinder standing on a box, its cap 0.1 into the top face: its rim's square, each point 0.1 deep
  // (CylinderBoxManifold below).
  auto standing = contacts(Geometry::cylinder(v3(0.3f, 1.9f, 0), v3(0, 1, 0), 0.5f, 1.0f),
                           Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(2, 1, 2)));
  ASSERT_EQ(standing.size(), 4u);
  for (const auto& c : standing) {
    EXPECT_NEAR(c.first.point.y, 0.9f, kTol);
    EXPECT_NEAR(c.first.point.w, 0.1f, kTol);
    expectNear3(c.first.direction, 0, 1, 0, kTol, "standing");
  }
  EXPECT_TRUE(contacts(Geometry::cylinder(v3(0.3f, 2.1f, 0), v3(0, 1, 0), 0.5f, 1.0f),
                       Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(2, 1, 2))).empty());
}

TEST(GeometryQueriesAnalytic, ParallelCylindersClosedForm) {
  // Parallel axes: M is a cylinder of radius 1 + 0.5 and half height 1 + 0.5 (geomParallelCylinders).
  // Side by side, axes opposite, 1.3 apart across the axis and 0.4 along it: 0.2 deep across.
  auto side = contacts(Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1.0f, 1.0f),
                       Geometry::cylinder(v3(1.2f, 0.4f, 0.5f), v3(0, -1, 0), 0.5f, 0.5f));
  ASSERT_EQ(side.size(), 2u);  // the lines' common part, y in [-0.1, 0.9]
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_NEAR(side[k].first.point.w, 0.2f, kTol);
    expectNear3(side[k].first.direction, -12.0f / 13.0f, 0, -5.0f / 13.0f, kTol,
                "side by side, opposite axes");
    EXPECT_NEAR(side[k].first.point.y, k == 0 ? -0.1f : 0.9f, kTol);
  }
  // Stacked off-centre: 1.4 apart along the axis, 0.6 across: 0.1 deep along the axis (not 0.9 across).
  auto stacked = contacts(Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1.0f, 1.0f),
                          Geometry::cylinder(v3(0.6f, 1.4f, 0), v3(0, 1, 0), 0.5f, 0.5f));
  // The narrow one's rim square over the wide cap (3 of its 4 points), then where the rims cross.
  ASSERT_EQ(stacked.size(), 5u);
  const float stackedXz[5][2] = {{0.1f, 0}, {0.6f, 0.5f}, {0.6f, -0.5f}, {0.925f, -0.38f}, {0.925f, 0.38f}};
  for (size_t k = 0; k < 5; ++k) {
    expectElement(stacked[k].first, kPD, {v3(stackedXz[k][0], 1, stackedXz[k][1]), v3(0, -1, 0), 0.1f}, 1e-3f,
                  "stacked, the wide one on its cap");
    expectElement(stacked[k].second, kPD, {v3(stackedXz[k][0], 0.9f, stackedXz[k][1]), v3(0, 1, 0), 0.1f},
                  1e-3f, "stacked, the narrow one's rim");
  }
  // Coaxial, the thin one inside the wide one's length: 1.5 deep across, in a direction across the axis.
  auto coaxial = contacts(Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1.0f, 2.0f),
                          Geometry::cylinder(v3(0, 0.5f, 0), v3(0, 1, 0), 0.5f, 0.5f));
  ASSERT_EQ(coaxial.size(), 2u);  // the wide one's line along the thin one's length
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_NEAR(coaxial[k].first.point.w, 1.5f, kTol);
    EXPECT_NEAR(coaxial[k].first.direction.y, 0.0f, kTol);
    EXPECT_NEAR(coaxial[k].first.point.y, k == 0 ? 0.0f : 1.0f, kTol);
  }
  // Touching (1.5 apart across) and apart along the axis: no contact.
  EXPECT_TRUE(contacts(Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1.0f, 1.0f),
                       Geometry::cylinder(v3(1.5f, 0, 0), v3(0, 1, 0), 0.5f, 0.5f))
                  .empty());
  EXPECT_TRUE(contacts(Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1.0f, 1.0f),
                       Geometry::cylinder(v3(0.2f, 1.6f, 0), v3(0, -1, 0), 0.5f, 0.5f))
                  .empty());
}

TEST(GeometryQueriesAnalytic, BoxPlaneOneContactPerCornerBelow) {
  const Geometry ground = Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false);
  auto resting = contacts(Geometry::orientedBox(v3(0, 0.4f, 0), identityQuat(), v3(0.5f, 0.5f, 0.5f)), ground);
  ASSERT_EQ(resting.size(), 4u);
  const float xs[4] = {-0.5f, 0.5f, -0.5f, 0.5f};
  const float zs[4] = {-0.5f, -0.5f, 0.5f, 0.5f};
  for (size_t k = 0; k < 4; ++k) {  // corners in slot order: x fastest, - before +
    expectElement(resting[k].first, kPD, {v3(xs[k], -0.1f, zs[k]), v3(0, 1, 0), 0.1f}, kTol, "corner");
  }
  // Rotated 45 degrees about z: only the lowest edge's two corners are below.
  auto edge = contacts(Geometry::orientedBox(v3(0, 0.6f, 0), quatAxisAngle(0, 0, 1, 0.7853982f), v3(0.5f, 0.5f, 0.5f)),
                       ground);
  ASSERT_EQ(edge.size(), 2u);
  EXPECT_NEAR(edge[0].first.point.w, std::sqrt(0.5f) - 0.6f, kTol);
  // A flat box (zero height) gives its 4 distinct corners, not 8.
  EXPECT_EQ(contacts(Geometry::orientedBox(v3(0, -0.1f, 0), identityQuat(), v3(1, 0, 1)), ground).size(), 4u);
}

TEST(GeometryQueriesAnalytic, CapsuleLyingOnPlaneGivesTwoContacts) {
  auto lying = contacts(Geometry::capsule(v3(-1, 0.15f, 0), v3(1, 0.15f, 0), 0.2f),
                        Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false));
  ASSERT_EQ(lying.size(), 2u);
  expectElement(lying[0].first, kPD, {v3(-1, -0.05f, 0), v3(0, 1, 0), 0.05f}, kTol, "end 0");
  expectElement(lying[1].first, kPD, {v3(1, -0.05f, 0), v3(0, 1, 0), 0.05f}, kTol, "end 1");
}

TEST(GeometryQueriesAnalytic, CylinderPlaneLowestPoint) {
  const Geometry ground = Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false);
  // Tilted 45 degrees about z: the rim point, alone.
  const float h = std::sqrt(0.5f);
  auto tilted = contacts(Geometry::cylinder(v3(0, 1, 0), v3(h, h, 0), 0.5f, 1.0f), ground);
  ASSERT_EQ(tilted.size(), 1u);
  EXPECT_NEAR(tilted[0].first.point.w, h + 0.5f * h - 1.0f, kTol);
  expectElement(tilted[0].first, kPD, {v3(-0.5f * h, 1.0f - 1.5f * h, 0), v3(0, 1, 0), 1.5f * h - 1.0f}, kTol,
                "tilted");
  // Tilted 3 degrees (past kGeomCylinderFlatSine, about 2): still one contact, the lowest rim point.
  const float t3 = 3.0f * 3.14159265f / 180.0f;
  auto past =
      contacts(Geometry::cylinder(v3(0, 0.9f, 0), v3(std::sin(t3), std::cos(t3), 0), 0.5f, 1.0f), ground);
  ASSERT_EQ(past.size(), 1u);
  EXPECT_NEAR(past[0].first.point.w, std::cos(t3) + 0.5f * std::sin(t3) - 0.9f, kTol);
}

// A cylinder standing on its cap rests on a square of the cap's rim, one lying on its side on the ends
// of its lowest line (geomCylinderPlanePoint); within about 2 degrees of either.
TEST(GeometryQueriesAnalytic, CylinderPlaneManifoldStandingAndLying) {
  const Geometry ground = Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false);
  // Standing exactly, the cap 0.1 below the plane: four rim points a quarter turn apart, each 0.1 deep.
  auto standing = contacts(Geometry::cylinder(v3(0, 0.9f, 0), v3(0, 1, 0), 0.5f, 1.0f), ground);
  ASSERT_EQ(standing.size(), 4u);
  Float4 sum{0, 0, 0, 0};
  for (size_t k = 0; k < 4; ++k) {
    const Float4 p = standing[k].first.point;
    const Float4 q = standing[(k + 1) % 4].first.point;
    EXPECT_NEAR(p.w, 0.1f, kTol) << k;
    EXPECT_NEAR(p.y, -0.1f, kTol) << k;
    EXPECT_NEAR(p.x * p.x + p.z * p.z, 0.25f, kTol) << k;
    EXPECT_NEAR(p.x * q.x + p.z * q.z, 0.0f, kTol) << k << ": a quarter turn to the next";
    EXPECT_EQ(standing[k].first.direction.y, 1.0f) << k;
    sum.x += p.x, sum.z += p.z;
  }
  EXPECT_NEAR(sum.x, 0.0f, kTol);
  EXPECT_NEAR(sum.z, 0.0f, kTol);
  // Tilted 1 degree about z: the same square, deepest first, the far side least deep.
  const float t1 = 3.14159265f / 180.0f;
  const Geometry tilted = Geometry::cylinder(v3(0, 0.9f, 0), v3(std::sin(t1), std::cos(t1), 0), 0.5f, 1.0f);
  auto leaning = contacts(tilted, ground);
  ASSERT_EQ(leaning.size(), 4u);
  const float capDepth = std::cos(t1) - 0.9f;
  EXPECT_NEAR(leaning[0].first.point.w, capDepth + 0.5f * std::sin(t1), kTol);
  EXPECT_NEAR(leaning[1].first.point.w, capDepth, kTol);
  EXPECT_NEAR(leaning[2].first.point.w, capDepth - 0.5f * std::sin(t1), kTol);
  EXPECT_NEAR(leaning[3].first.point.w, capDepth, kTol);
  // The same lean only 0.005 deep at the cap's centre: the far rim point is above the plane.
  auto shallow = contacts(
      Geometry::cylinder(v3(0, std::cos(t1) - 0.005f, 0), v3(std::sin(t1), std::cos(t1), 0), 0.5f, 1.0f),
      ground);
  ASSERT_EQ(shallow.size(), 3u);
  EXPECT_GT(shallow[0].first.point.w, shallow[1].first.point.w);
  // Lying exactly (axis x), 0.1 deep: the two ends of the lowest line, end -axis first.
  auto lying = contacts(Geometry::cylinder(v3(0, 0.4f, 0), v3(1, 0, 0), 0.5f, 1.0f), ground);
  ASSERT_EQ(lying.size(), 2u);
  expectElement(lying[0].first, kPD, {v3(-1, -0.1f, 0), v3(0, 1, 0), 0.1f}, kTol, "lying, end -axis");
  expectElement(lying[1].first, kPD, {v3(1, -0.1f, 0), v3(0, 1, 0), 0.1f}, kTol, "lying, end +axis");
  // Lying 1 degree off, its +axis end lower: that end first and deeper.
  auto sloping =
      contacts(Geometry::cylinder(v3(0, 0.4f, 0), v3(std::cos(t1), -std::sin(t1), 0), 0.5f, 1.0f), ground);
  ASSERT_EQ(sloping.size(), 2u);
  EXPECT_NEAR(sloping[0].first.point.x, std::cos(t1) - 0.5f * std::sin(t1), kTol);
  EXPECT_NEAR(sloping[0].first.point.w, std::sin(t1) + 0.5f * std::cos(t1) - 0.4f, kTol);
  EXPECT_NEAR(sloping[1].first.point.x, -std::cos(t1) - 0.5f * std::sin(t1), kTol);
  EXPECT_GT(sloping[0].first.point.w, sloping[1].first.point.w);
  // A disc lying (half height 0) and a needle standing (radius 0): one point, no repeats.
  EXPECT_EQ(contacts(Geometry::cylinder(v3(0, 0.4f, 0), v3(1, 0, 0), 0.5f, 0.0f), ground).size(), 1u);
  EXPECT_EQ(contacts(Geometry::cylinder(v3(0, 0.9f, 0), v3(0, 1, 0), 0.0f, 1.0f), ground).size(), 1u);
  // In either order the same contacts with the sides swapped; a two-sided plane pushes the standing
  // cylinder (centre above) the same way.
  auto swapped = contacts(ground, Geometry::cylinder(v3(0, 0.9f, 0), v3(0, 1, 0), 0.5f, 1.0f));
  ASSERT_EQ(swapped.size(), 4u);
  for (size_t k = 0; k < 4; ++k) EXPECT_TRUE(bitwiseEqual(swapped[k].second, standing[k].first)) << k;
  auto twoSided = contacts(Geometry::cylinder(v3(0, 0.9f, 0), v3(0, 1, 0), 0.5f, 1.0f),
                           Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), true));
  ASSERT_EQ(twoSided.size(), 4u);
}

// A cylinder resting on a box face (geomCylinderBoxPatch): the rim's square (standing) or the
// lowest line (lying) clipped by the face's side planes, each point with its own depth along the
// face's normal; a box resting on a cap gets its face's corners inside the square.
TEST(GeometryQueriesAnalytic, CylinderBoxManifold) {
  const Geometry table = Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(2, 1, 2));  // top face y = 1
  // Standing exactly on the top face, 0.1 deep: the rim a quarter turn apart (the square starts along
  // geomPerpendicularTo(y) = -x), the box's elements on the face, pushed up.
  auto standing = contacts(Geometry::cylinder(v3(0, 1.9f, 0), v3(0, 1, 0), 0.5f, 1.0f), table);
  ASSERT_EQ(standing.size(), 4u);
  const Float4 square[4] = {{-0.5f, 0.9f, 0, 0}, {0, 0.9f, 0.5f, 0}, {0.5f, 0.9f, 0, 0}, {0, 0.9f, -0.5f, 0}};
  for (size_t k = 0; k < 4; ++k) {
    const Float4 p = square[k];
    expectElement(standing[k].first, kPD, {v3(p.x, p.y, p.z), v3(0, 1, 0), 0.1f}, kTol, "standing, cylinder");
    expectElement(standing[k].second, kPD, {v3(p.x, 1.0f, p.z), v3(0, -1, 0), 0.1f}, kTol, "standing, box");
  }
  // Half over the +x edge (x = 2): the square clipped there, two points on the edge.
  auto edge = contacts(Geometry::cylinder(v3(1.9f, 1.9f, 0), v3(0, 1, 0), 0.5f, 1.0f), table);
  ASSERT_EQ(edge.size(), 5u);
  const float edgeXz[5][2] = {{1.4f, 0}, {1.9f, 0.5f}, {2, 0.4f}, {2, -0.4f}, {1.9f, -0.5f}};
  for (size_t k = 0; k < 5; ++k) {
    expectElement(edge[k].first, kPD, {v3(edgeXz[k][0], 0.9f, edgeXz[k][1]), v3(0, 1, 0), 0.1f}, kTol, "edge");
  }
  // Tilted 1 degree about z: the same square, deepest first, the far side least deep.
  const float t1 = 3.14159265f / 180.0f;
  auto leaning = contacts(Geometry::cylinder(v3(0, 1.9f, 0), v3(std::sin(t1), std::cos(t1), 0), 0.5f, 1.0f), table);
  ASSERT_EQ(leaning.size(), 4u);
  const float capDepth = 1.0f - (1.9f - std::cos(t1));
  EXPECT_NEAR(leaning[0].first.point.w, capDepth + 0.5f * std::sin(t1), kTol);
  EXPECT_NEAR(leaning[1].first.point.w, capDepth, kTol);
  EXPECT_NEAR(leaning[2].first.point.w, capDepth - 0.5f * std::sin(t1), kTol);
  EXPECT_NEAR(leaning[3].first.point.w, capDepth, kTol);
  // Tilted 5 degrees: not resting flat, the single deepest contact.
  const float t5 = 5.0f * t1;
  auto tipped = contacts(Geometry::cylinder(v3(0, 1.9f, 0), v3(std::sin(t5), std::cos(t5), 0), 0.5f, 1.0f), table);
  ASSERT_EQ(tipped.size(), 1u);
  EXPECT_NEAR(tipped[0].first.point.w, 1.0f - (1.9f - std::cos(t5) - 0.5f * std::sin(t5)), kTol);
  // Lying exactly (axis x), 0.1 deep: the two ends of the lowest line, end -axis first.
  auto lying = contacts(Geometry::cylinder(v3(0, 1.4f, 0), v3(1, 0, 0), 0.5f, 1.0f), table);
  ASSERT_EQ(lying.size(), 2u);
  expectElement(lying[0].first, kPD, {v3(-1, 0.9f, 0), v3(0, 1, 0), 0.1f}, kTol, "lying, end -axis");
  expectElement(lying[1].first, kPD, {v3(1, 0.9f, 0), v3(0, 1, 0), 0.1f}, kTol, "lying, end +axis");
  // Lying across a narrow box (x in [-0.3, 0.3]): the line clipped to the face.
  auto across = contacts(Geometry::cylinder(v3(0, 1.4f, 0), v3(1, 0, 0), 0.5f, 1.0f),
                         Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(0.3f, 1, 2)));
  ASSERT_EQ(across.size(), 2u);
  expectElement(across[0].first, kPD, {v3(-0.3f, 0.9f, 0), v3(0, 1, 0), 0.1f}, kTol, "across, -x");
  expectElement(across[1].first, kPD, {v3(0.3f, 0.9f, 0), v3(0, 1, 0), 0.1f}, kTol, "across, +x");
  // Standing beside a wall (axis y, the box's +x face at x = 2): the wall's line, clipped to the face's
  // height (y in [-1, 1]), along the face's normal.
  auto wall = contacts(Geometry::cylinder(v3(2.4f, 0.5f, 0), v3(0, 1, 0), 0.5f, 1.0f), table);
  ASSERT_EQ(wall.size(), 2u);
  expectElement(wall[0].first, kPD, {v3(1.9f, -0.5f, 0), v3(1, 0, 0), 0.1f}, kTol, "wall, low end");
  expectElement(wall[1].first, kPD, {v3(1.9f, 1.0f, 0), v3(1, 0, 0), 0.1f}, kTol, "wall, clipped end");
  // A small box resting on a wide cap (radius 2, cap at y = 1), 0.1 deep: its bottom face's corners
  // (inside the rim's square), on the cap's plane; the cylinder pushed down, the box up.
  auto onCap = contacts(Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 2.0f, 1.0f),
                        Geometry::orientedBox(v3(0.2f, 1.4f, 0), identityQuat(), v3(0.5f, 0.5f, 0.5f)));
  ASSERT_EQ(onCap.size(), 4u);
  float xs = 0, zs = 0;
  for (const auto& c : onCap) {
    EXPECT_NEAR(c.first.point.y, 1.0f, kTol);
    EXPECT_NEAR(c.first.point.w, 0.1f, kTol);
    expectNear3(c.first.direction, 0, -1, 0, kTol, "on the cap");
    EXPECT_NEAR(std::abs(c.first.point.x - 0.2f), 0.5f, kTol);
    EXPECT_NEAR(std::abs(c.first.point.z), 0.5f, kTol);
    EXPECT_NEAR(c.second.point.y, 0.9f, kTol);
    xs += c.first.point.x, zs += c.first.point.z;
  }
  EXPECT_NEAR(xs, 0.8f, kTol);
  EXPECT_NEAR(zs, 0.0f, kTol);
  // Near the cap's rim, wholly outside the rim's square (|x| + |z| > 2) but over the disc: the face's
  // corners themselves.
  auto nearRim = contacts(Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 2.0f, 1.0f),
                          Geometry::orientedBox(v3(1.3f, 1.05f, 1.0f), identityQuat(), v3(0.1f, 0.1f, 0.1f)));
  ASSERT_EQ(nearRim.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    const Float4 corner = v3((k & 1u) != 0u ? 1.4f : 1.2f, 1.0f, (k & 2u) != 0u ? 1.1f : 0.9f);
    expectElement(nearRim[k].first, kPD, {corner, v3(0, -1, 0), 0.05f}, 1e-5f, "near the rim");
  }
  // A box turned 45 degrees about x, its lowest edge (along x) 0.02 into the top of a cylinder whose
  // reach along x is `reach`, the box's half length `half`: two contacts at x = -+min(half, reach), the
  // cylinder's elements at y = 0.5 pushed down, the box's on its edge (y = 0.48) pushed up.
  const float edgeY = 0.5f + 0.2f * std::sqrt(2.0f) - 0.02f;
  auto expectEdge = [&](const Geometry& cylinder, float reach, float half, const char* what) {
    auto onEdge = contacts(
        cylinder,
        Geometry::orientedBox(v3(0, edgeY, 0), quatAxisAngle(1, 0, 0, 0.7853982f), v3(half, 0.2f, 0.2f)));
    ASSERT_EQ(onEdge.size(), 2u) << what << " " << half;
    for (size_t k = 0; k < 2; ++k) {
      const float x = (k == 0 ? -1.0f : 1.0f) * std::min(half, reach);
      expectElement(onEdge[k].first, kPD, {v3(x, 0.5f, 0), v3(0, -1, 0), 0.02f}, 1e-5f, what);
      expectElement(onEdge[k].second, kPD, {v3(x, 0.48f, 0), v3(0, 1, 0), 0.02f}, 1e-5f, what);
    }
  };
  // On a drum's cap (radius 1, y = 0.5): the edge over the disc, shorter and longer than it.
  const Geometry drum = Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1.0f, 0.5f);
  expectEdge(drum, 1.0f, 0.3f, "edge on a cap");
  expectEdge(drum, 1.0f, 2.0f, "edge on a cap, clipped to the disc");
  // Along a log (axis x, radius 0.5, half height 2): the edge along its height, shorter and longer.
  const Geometry log = Geometry::cylinder(v3(0, 0, 0), v3(1, 0, 0), 0.5f, 2.0f);
  expectEdge(log, 2.0f, 1.0f, "edge on a wall");
  expectEdge(log, 2.0f, 3.0f, "edge on a wall, clipped to the height");
  // In either order the same contacts with the sides swapped, bit for bit.
  auto swapped = contacts(table, Geometry::cylinder(v3(1.9f, 1.9f, 0), v3(0, 1, 0), 0.5f, 1.0f));
  ASSERT_EQ(swapped.size(), edge.size());
  for (size_t k = 0; k < edge.size(); ++k) {
    EXPECT_TRUE(bitwiseEqual(swapped[k].second, edge[k].first)) << k;
    EXPECT_TRUE(bitwiseEqual(swapped[k].first, edge[k].second)) << k;
  }
  // A needle standing (radius 0) and a disc lying (half height 0): one point each.
  EXPECT_EQ(contacts(Geometry::cylinder(v3(0, 1.9f, 0), v3(0, 1, 0), 0.0f, 1.0f), table).size(), 1u);
  EXPECT_EQ(contacts(Geometry::cylinder(v3(0, 1.4f, 0), v3(1, 0, 0), 0.5f, 0.0f), table).size(), 1u);
}

// A cylinder resting on another (geomCylinderCylinderPatch): stacked, the narrower (or s's, on
// ties) rim square over the other's cap and where the rims cross; side by side, the lines' common
// part; lying on a cap, the line clipped to the disc; a cap on a lying one's wall, that wall's line
// clipped to the cap.
TEST(GeometryQueriesAnalytic, CylinderCylinderManifold) {
  const Geometry lower = Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 0.5f, 1.0f);
  // Stacked barrels, equal radii, 0.1 deep: the lower one's rim square (on its cap, y = 1), pushed
  // down; the upper one's elements on its bottom cap (y = 0.9).
  auto stacked = contacts(lower, Geometry::cylinder(v3(0, 1.9f, 0), v3(0, 1, 0), 0.5f, 1.0f));
  ASSERT_EQ(stacked.size(), 4u);
  const float squareXz[4][2] = {{-0.5f, 0}, {0, 0.5f}, {0.5f, 0}, {0, -0.5f}};
  for (size_t k = 0; k < 4; ++k) {
    expectElement(stacked[k].first, kPD, {v3(squareXz[k][0], 1, squareXz[k][1]), v3(0, -1, 0), 0.1f}, kTol,
                  "stacked, lower");
    expectElement(stacked[k].second, kPD, {v3(squareXz[k][0], 0.9f, squareXz[k][1]), v3(0, 1, 0), 0.1f}, kTol,
                  "stacked, upper");
  }
  // Shifted by one radius: the square's one point over the upper disc, then the rims' crossings at
  // x = 0.25, z = -+sqrt(0.1875).
  auto shifted = contacts(lower, Geometry::cylinder(v3(0.5f, 1.9f, 0), v3(0, 1, 0), 0.5f, 1.0f));
  ASSERT_EQ(shifted.size(), 3u);
  const float cross = std::sqrt(0.1875f);
  const float shiftedXz[3][2] = {{0.5f, 0}, {0.25f, -cross}, {0.25f, cross}};
  for (size_t k = 0; k < 3; ++k) {
    expectElement(shifted[k].first, kPD, {v3(shiftedXz[k][0], 1, shiftedXz[k][1]), v3(0, -1, 0), 0.1f}, 1e-5f,
                  "shifted");
  }
  // Shifted past the rims (1.1 apart): apart.
  EXPECT_TRUE(contacts(lower, Geometry::cylinder(v3(1.1f, 1.9f, 0), v3(0, 1, 0), 0.5f, 1.0f)).empty());
  // A log (axis x, radius 0.3) lying across a drum's cap (radius 1, top at y = 0.5), 0.05 deep: its
  // lowest line over the disc, x in [-1, 1]; the drum's elements on its cap.
  auto onCap = contacts(Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1.0f, 0.5f),
                        Geometry::cylinder(v3(0.2f, 0.75f, 0), v3(1, 0, 0), 0.3f, 2.0f));
  ASSERT_EQ(onCap.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const float x = k == 0 ? -1.0f : 1.0f;
    expectElement(onCap[k].first, kPD, {v3(x, 0.5f, 0), v3(0, -1, 0), 0.05f}, 1e-5f, "on a cap, drum");
    expectElement(onCap[k].second, kPD, {v3(x, 0.45f, 0), v3(0, 1, 0), 0.05f}, 1e-5f, "on a cap, log");
  }
  // A post (axis y, radius 0.3) standing on a lying log (axis x, radius 0.5, top line y = 0.5), 0.05
  // deep, 0.1 off the log's top line: the line clipped to the post's cap, x = 0.3 -+ sqrt(0.08).
  auto post = contacts(Geometry::cylinder(v3(0, 0, 0), v3(1, 0, 0), 0.5f, 2.0f),
                       Geometry::cylinder(v3(0.3f, 0.95f, 0.1f), v3(0, 1, 0), 0.3f, 0.5f));
  ASSERT_EQ(post.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const float x = 0.3f + (k == 0 ? -1.0f : 1.0f) * std::sqrt(0.08f);
    expectElement(post[k].first, kPD, {v3(x, 0.5f, 0), v3(0, -1, 0), 0.05f}, 1e-5f, "post, the log's line");
    expectElement(post[k].second, kPD, {v3(x, 0.45f, 0), v3(0, 1, 0), 0.05f}, 1e-5f, "post, its cap");
  }
  // Stacked but tilted 5 degrees: one contact; in either order the same contacts, sides swapped.
  const float t5 = 5.0f * 3.14159265f / 180.0f;
  EXPECT_EQ(
      contacts(lower, Geometry::cylinder(v3(0, 1.95f, 0), v3(std::sin(t5), std::cos(t5), 0), 0.5f, 1.0f))
          .size(),
      1u);
  auto swapped = contacts(Geometry::cylinder(v3(0.5f, 1.9f, 0), v3(0, 1, 0), 0.5f, 1.0f), lower);
  ASSERT_EQ(swapped.size(), shifted.size());
  for (size_t k = 0; k < shifted.size(); ++k) {
    EXPECT_TRUE(bitwiseEqual(swapped[k].second, shifted[k].first)) << k;
    EXPECT_TRUE(bitwiseEqual(swapped[k].first, shifted[k].second)) << k;
  }
}

// A capsule lying on a cylinder's cap gets a contact at each end of its axis' part over the disc, one
// lying along the wall (within about 2 degrees of parallel) at each end of its part within the height
// (geomCapsuleCylinderSpan); a crossing or upright capsule one.
TEST(GeometryQueriesAnalytic, CapsuleCylinderManifoldOnTheCapAndAlongTheWall) {
  const Geometry cyl = Geometry::cylinder(v3(0, 0, 0), v3(0, 1, 0), 1.0f, 0.5f);
  auto onCap = contacts(Geometry::capsule(v3(-0.5f, 0.6f, 0), v3(0.5f, 0.6f, 0), 0.2f), cyl);
  ASSERT_EQ(onCap.size(), 2u);
  expectElement(onCap[0].first, kPD, {v3(-0.5f, 0.4f, 0), v3(0, 1, 0), 0.1f}, kTol, "cap, end 0");
  expectElement(onCap[1].first, kPD, {v3(0.5f, 0.4f, 0), v3(0, 1, 0), 0.1f}, kTol, "cap, end 1");
  // Over the cap's edge: the span ends at the rim.
  auto overEdge = contacts(Geometry::capsule(v3(0.5f, 0.6f, 0), v3(1.5f, 0.6f, 0), 0.2f), cyl);
  ASSERT_EQ(overEdge.size(), 2u);
  expectElement(overEdge[0].first, kPD, {v3(0.5f, 0.4f, 0), v3(0, 1, 0), 0.1f}, kTol, "edge, inner end");
  expectElement(overEdge[1].first, kPD, {v3(1.0f, 0.4f, 0), v3(0, 1, 0), 0.1f}, kTol, "edge, the rim");
  // On the bottom cap, in the other order: the same with the sides swapped.
  auto under = contacts(cyl, Geometry::capsule(v3(-0.5f, -0.6f, 0), v3(0.5f, -0.6f, 0), 0.2f));
  ASSERT_EQ(under.size(), 2u);
  expectElement(under[0].second, kPD, {v3(-0.5f, -0.4f, 0), v3(0, -1, 0), 0.1f}, kTol, "under, end 0");
  // Along the wall, shorter and longer than the cylinder.
  auto along = contacts(Geometry::capsule(v3(1.1f, -0.3f, 0), v3(1.1f, 0.3f, 0), 0.2f), cyl);
  ASSERT_EQ(along.size(), 2u);
  expectElement(along[0].first, kPD, {v3(0.9f, -0.3f, 0), v3(1, 0, 0), 0.1f}, kTol, "wall, end 0");
  expectElement(along[1].first, kPD, {v3(0.9f, 0.3f, 0), v3(1, 0, 0), 0.1f}, kTol, "wall, end 1");
  auto longer = contacts(Geometry::capsule(v3(1.1f, -1, 0), v3(1.1f, 1, 0), 0.2f), cyl);
  ASSERT_EQ(longer.size(), 2u);
  expectElement(longer[0].first, kPD, {v3(0.9f, -0.5f, 0), v3(1, 0, 0), 0.1f}, kTol, "wall, lower rim");
  expectElement(longer[1].first, kPD, {v3(0.9f, 0.5f, 0), v3(1, 0, 0), 0.1f}, kTol, "wall, upper rim");
  // Tilted 1 degree along the wall: two, the lower end deeper; 3 degrees: one.
  const float t1 = 3.14159265f / 180.0f;
  const float t3 = 3.0f * t1;
  auto leaning = contacts(Geometry::capsule(v3(1.1f - 0.3f * std::sin(t1), -0.3f, 0),
                                            v3(1.1f + 0.3f * std::sin(t1), 0.3f, 0), 0.2f),
                          cyl);
  ASSERT_EQ(leaning.size(), 2u);
  EXPECT_GT(leaning[0].first.point.w, leaning[1].first.point.w);
  EXPECT_EQ(contacts(Geometry::capsule(v3(1.1f - 0.3f * std::sin(t3), -0.3f, 0),
                                       v3(1.1f + 0.3f * std::sin(t3), 0.3f, 0), 0.2f),
                     cyl)
                .size(),
            1u);
  // Across the wall (perpendicular to the axis): the wall is curved, one contact at the deepest point.
  auto across = contacts(Geometry::capsule(v3(1.1f, 0, -1), v3(1.1f, 0, 1), 0.2f), cyl);
  ASSERT_EQ(across.size(), 1u);
  // (The distance is flat about its minimum there: the search stops within 1e-3 of it.)
  expectElement(across[0].first, kPD, {v3(0.9f, 0, 0), v3(1, 0, 0), 0.1f}, 1e-3f, "across");
  // Upright on the cap: its upper end does not reach, one contact.
  auto upright = contacts(Geometry::capsule(v3(0, 0.6f, 0), v3(0, 1.6f, 0), 0.2f), cyl);
  ASSERT_EQ(upright.size(), 1u);
  expectElement(upright[0].first, kPD, {v3(0, 0.4f, 0), v3(0, 1, 0), 0.1f}, kTol, "upright");
  // Inside the cylinder (the deepest axis point in it): one contact, as before.
  EXPECT_EQ(contacts(Geometry::capsule(v3(-0.5f, 0.3f, 0), v3(0.5f, 0.3f, 0), 0.3f), cyl).size(), 1u);
}

// The seed's known weakness of two-sided planes, kept: a sphere whose centre has crossed the plane
// is pushed out on the far side. A one-sided plane pushes it back up however deep.
TEST(GeometryQueriesAnalytic, TwoSidedPlaneTunnelsWhenTheCentreCrosses) {
  const Geometry sphere = Geometry::sphere({0, -0.1f, 0, 0.5f});
  auto twoSided = contacts(sphere, Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), true));
  ASSERT_EQ(twoSided.size(), 1u);
  expectElement(twoSided[0].first, kPD, {v3(0, 0.4f, 0), v3(0, -1, 0), 0.4f}, kTol, "two-sided");
  auto oneSided = contacts(sphere, Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false));
  ASSERT_EQ(oneSided.size(), 1u);
  expectElement(oneSided[0].first, kPD, {v3(0, -0.6f, 0), v3(0, 1, 0), 0.6f}, kTol, "one-sided");
  // A capsule crossing a two-sided plane: both ends pushed to the side of its middle.
  auto capsule = contacts(Geometry::capsule(v3(0, -0.3f, 0), v3(0, 0.5f, 0), 0.1f),
                          Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), true));
  ASSERT_EQ(capsule.size(), 1u);  // the upper end is 0.4 above, out of reach
  expectElement(capsule[0].first, kPD, {v3(0, -0.4f, 0), v3(0, 1, 0), 0.4f}, kTol, "capsule");
}

TEST(GeometryQueriesAnalytic, PointSetOrderIndicesAndRanges) {
  Batch b;
  b.points = {v3(9, 9, 9), v3(9, 9, 9)};  // points of no set
  const uint32_t pts = b.addPoints({v3(0, 0.5f, 0), v3(0, 3, 0), v3(0, -0.5f, 0), v3(0.2f, 0, 0)});
  const uint32_t sphere = b.add(Geometry::sphere({0, 0, 0, 1}));
  const uint32_t plane = b.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), true));
  b.query(sphere, pts);  // points 0, 2, 3 inside
  b.query(pts, plane);   // point 2 below (a two-sided plane acts one-sided for points)
  for (Backend backend : kCpuBackends) {
    auto counts = b.run(backend);
    ASSERT_TRUE(counts.ok()) << counts.message();
    EXPECT_EQ(counts->contacts, 4u);
    EXPECT_EQ(b.ranges[0].first, 0u);
    EXPECT_EQ(b.ranges[0].count, 3u);
    EXPECT_EQ(b.ranges[1].first, 3u);
    EXPECT_EQ(b.ranges[1].count, 1u);
    EXPECT_EQ(b.elementsB[0].index, 0u);
    EXPECT_EQ(b.elementsB[1].index, 2u);
    EXPECT_EQ(b.elementsB[2].index, 3u);
    EXPECT_EQ(b.elementsA[3].index, 2u);
    EXPECT_EQ(b.elementsA[3].type, ContactElementType::kPointIndexDirection);
    EXPECT_EQ(b.elementsB[3].index, kNoPointIndex);
    EXPECT_EQ(b.elementsA[0].query, 0u);
    EXPECT_EQ(b.elementsA[3].query, 1u);
    EXPECT_NEAR(b.elementsB[1].point.w, 0.5f, kTol);
    expectNear3(b.elementsB[1].direction, 0, -1, 0, kTol, "point 2 leaves the sphere downwards");
  }
}

TEST(GeometryQueriesAnalytic, SwappedInputsGiveSwappedElementsOnRandomPairs) {
  Batch b = randomBatch(7, 2000);
  Batch swapped = b;
  for (GeometryQuery& q : swapped.queries) std::swap(q.a, q.b);
  auto counts = b.run(Backend::kCpuScalar, 200000);
  auto countsSwapped = swapped.run(Backend::kCpuScalar, 200000);
  ASSERT_TRUE(counts.ok() && countsSwapped.ok());
  ASSERT_EQ(counts->contacts, countsSwapped->contacts);
  EXPECT_GT(counts->contacts, 1000u);  // the random pairs do overlap
  for (uint32_t k = 0; k < counts->contacts; ++k) {
    ASSERT_TRUE(bitwiseEqual(b.elementsA[k], swapped.elementsB[k])) << "contact " << k;
    ASSERT_TRUE(bitwiseEqual(b.elementsB[k], swapped.elementsA[k])) << "contact " << k;
    expectContactInvariants(b.elementsA[k], b.elementsB[k], 2e-5f);
  }
}

// The device evaluates a query slot by slot (geomSlotContact, one thread each); the CPU twin computes
// a primitive query's contacts at once (geomQueryContacts). They must agree bit for bit, manifolds
// (box-box, capsule-box, box-plane, capsule-plane) included.
TEST(GeometryQueriesAnalytic, SlotBySlotEqualsWholeQuery) {
  Batch b = randomBatch(17, 3000);
  uint32_t compared = 0, manifolds = 0;
  for (const GeometryQuery& q : b.queries) {
    const Geometry& ga = b.geometries[q.a];
    const Geometry& gb = b.geometries[q.b];
    if (ga.type == GeometryType::kPointSet || gb.type == GeometryType::kPointSet) continue;
    gpu::GeomShape sa, sb;
    std::memcpy(&sa, &ga, sizeof sa);
    std::memcpy(&sb, &gb, sizeof sb);
    const gpu::GeomManifold whole = gpu::geomQueryContacts(sa, sb);
    uint32_t k = 0;
    for (uint32_t slot = 0; slot < gpu::geomSlotCount(sa, sb); ++slot) {
      gpu::GeomElement ea, eb;
      if (!gpu::geomSlotContact(sa, sb, slot, gpu::vec3(0.0f), ea, eb)) continue;
      ASSERT_LT(k, whole.count);
      EXPECT_EQ(std::memcmp(&ea, &whole.s[k], sizeof ea), 0) << "slot " << slot;
      EXPECT_EQ(std::memcmp(&eb, &whole.t[k], sizeof eb), 0) << "slot " << slot;
      ++k;
    }
    EXPECT_EQ(k, whole.count);
    ++compared;
    if (whole.count > 1) ++manifolds;
  }
  EXPECT_GT(compared, 1000u);
  EXPECT_GT(manifolds, 50u);
}

TEST(GeometryQueriesAnalytic, BatchEqualsQueriesOneByOne) {
  Batch b = randomBatch(11, 500);
  auto counts = b.run(Backend::kCpuSimd, 100000);
  ASSERT_TRUE(counts.ok());
  for (size_t q = 0; q < b.queries.size(); ++q) {
    Batch one;
    one.geometries = b.geometries;
    one.points = b.points;
    one.queries = {b.queries[q]};
    auto c = one.run(Backend::kCpuScalar, 300);
    ASSERT_TRUE(c.ok());
    ASSERT_EQ(one.ranges[0].count, b.ranges[q].count) << "query " << q;
    for (uint32_t k = 0; k < one.ranges[0].count; ++k) {
      ContactElement a = one.elementsA[k], e = one.elementsB[k];
      a.query = e.query = static_cast<uint32_t>(q);
      EXPECT_TRUE(bitwiseEqual(a, b.elementsA[b.ranges[q].first + k]));
      EXPECT_TRUE(bitwiseEqual(e, b.elementsB[b.ranges[q].first + k]));
    }
  }
}

TEST(GeometryQueriesAnalytic, OverflowIsReportedAndNothingIsWrittenPastTheEnd) {
  Batch b = randomBatch(13, 300);
  auto full = b.run(Backend::kCpuScalar, 100000);
  ASSERT_TRUE(full.ok());
  const std::vector<ContactElement> fullA = b.elementsA, fullB = b.elementsB;
  const std::vector<ContactRange> fullRanges = b.ranges;
  ASSERT_GT(full->contacts, 20u);
  const uint32_t capacity = full->contacts / 2;
  // The output arrays are views into larger vectors: the elements past the capacity must stay.
  ContactElement sentinel;
  sentinel.query = 0xBEEFu;
  std::vector<ContactElement> a(capacity + 8, sentinel), e(capacity + 8, sentinel);
  std::vector<ContactRange> ranges(b.queries.size());
  auto counts = queryGeometriesCpu(b.input(), {std::span(a).first(capacity), std::span(e).first(capacity), ranges},
                                   Backend::kCpuScalar);
  ASSERT_TRUE(counts.ok());
  EXPECT_TRUE(counts->overflow);
  EXPECT_EQ(counts->contacts, full->contacts);
  EXPECT_EQ(counts->written, capacity);
  for (uint32_t k = 0; k < capacity; ++k) {
    EXPECT_TRUE(bitwiseEqual(a[k], fullA[k]) && bitwiseEqual(e[k], fullB[k])) << k;
  }
  for (uint32_t k = capacity; k < capacity + 8; ++k) EXPECT_EQ(a[k].query, 0xBEEFu);
  for (size_t q = 0; q < ranges.size(); ++q) {
    EXPECT_EQ(ranges[q].first, fullRanges[q].first);
    EXPECT_EQ(ranges[q].count, fullRanges[q].count);
  }
  EXPECT_FALSE(full->overflow);
}

}  // namespace
}  // namespace vkc::test::geometry
