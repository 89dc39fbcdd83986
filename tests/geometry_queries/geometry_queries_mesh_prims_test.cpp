// Surface and line meshes against a plane, an oriented box, a cylinder and an implicit geometry
// (issue 17, shaders/shared/geometry_queries_mesh_prims.h, geometry_queries_mesh_implicit.h): analytic
// cases (a triangle resting on a plane or a box face at a known depth, tilted cells, two-sided planes,
// a segment through a cylinder, cells in a sampled box), the
// BVH's contacts against every cell's (brute force) on random meshes with the swap rule, and input
// refused with a message naming it.
#include <algorithm>
#include <cmath>
#include <random>

#include "geometry_queries/geometry_queries_mesh_test_support.h"

namespace vkc::test::geometry {
namespace {

uint32_t triangle(Batch& b, Float4 p0, Float4 p1, Float4 p2) {
  return b.addMesh(GeometryType::kSurfaceMesh, {p0, p1, p2}, {0, 1, 2});
}

uint32_t segment(Batch& b, Float4 p0, Float4 p1) {
  return b.addMesh(GeometryType::kLineMesh, {p0, p1}, {0, 1});
}

// The query's only contact: its elements (mesh side first).
void onlyContact(Batch& b, Backend backend, bool meshIsA, ContactElement& mesh, ContactElement& prim) {
  auto counts = b.run(backend);
  ASSERT_TRUE(counts.ok()) << counts.message();
  ASSERT_EQ(b.ranges[0].count, 1u);
  mesh = meshIsA ? b.elementsA[0] : b.elementsB[0];
  prim = meshIsA ? b.elementsB[0] : b.elementsA[0];
  expectContactInvariants(mesh, prim, 1e-6f);
}

TEST(GeometryQueriesMeshPrims, TriangleRestingOnAPlaneGivesOneFaceContact) {
  for (Backend backend : kCpuBackends) {
    Batch b;
    // Parallel to the plane y = 0, 0.1 below it: the face, at the centroid (0.1, -0.1, 0.1).
    b.query(triangle(b, v3(-0.2f, -0.1f, -0.2f), v3(0.5f, -0.1f, 0), v3(0, -0.1f, 0.5f)),
            b.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false)));
    ContactElement m, p;
    onlyContact(b, backend, true, m, p);
    EXPECT_EQ(m.type, ContactElementType::kCellIndex);
    EXPECT_EQ(m.index, 0u);
    EXPECT_EQ(contactCellType(m), CellType::kTriangle);
    EXPECT_EQ(contactCellCorners(m), 7u);
    expectElement(m, ContactElementType::kCellIndex, {v3(0.1f, -0.1f, 0.1f), v3(0, 1, 0), 0.1f}, 1e-6f,
                  "mesh");
    expectElement(p, ContactElementType::kPointDirection, {v3(0.1f, 0, 0.1f), v3(0, -1, 0), 0.1f}, 1e-6f,
                  "plane");
  }
}

TEST(GeometryQueriesMeshPrims, TiltedCellsTouchAPlaneAtAVertexOrAnEdge) {
  // One corner 0.3 below the plane y = 1: that vertex (its vertex number 2).
  {
    Batch b;
    b.query(b.add(Geometry::plane(v3(0, 1, 0), v3(0, 1, 0), false)),
            triangle(b, v3(0, 1.5f, 0), v3(1, 1.2f, 0), v3(0, 0.7f, 1)));
    ContactElement m, p;
    onlyContact(b, Backend::kCpuScalar, false, m, p);
    EXPECT_EQ(m.type, ContactElementType::kPointIndexDirection);
    EXPECT_EQ(m.index, 2u);
    EXPECT_EQ(contactCellType(m), CellType::kVertex);
    expectElement(m, ContactElementType::kPointIndexDirection, {v3(0, 0.7f, 1), v3(0, 1, 0), 0.3f}, 1e-6f,
                  "mesh");
  }
  // An edge parallel to the plane, 0.25 below it: the edge (corners 1, 2), at its middle.
  {
    Batch b;
    b.query(triangle(b, v3(0, 0.5f, 0), v3(1, -0.25f, 0), v3(0, -0.25f, 1)),
            b.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false)));
    ContactElement m, p;
    onlyContact(b, Backend::kCpuScalar, true, m, p);
    EXPECT_EQ(contactCellType(m), CellType::kEdge);
    EXPECT_EQ(contactCellCorners(m), 6u);
    expectElement(m, ContactElementType::kCellIndex, {v3(0.5f, -0.25f, 0.5f), v3(0, 1, 0), 0.25f}, 1e-6f,
                  "mesh");
  }
  // A segment crossing the plane: its lower end (vertex 0), 0.4 deep.
  {
    Batch b;
    b.query(segment(b, v3(2, -0.4f, 0), v3(2, 1, 3)),
            b.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false)));
    ContactElement m, p;
    onlyContact(b, Backend::kCpuScalar, true, m, p);
    EXPECT_EQ(m.index, 0u);
    EXPECT_EQ(contactCellType(m), CellType::kVertex);
    EXPECT_NEAR(m.point.w, 0.4f, 1e-6f);
  }
  // A segment lying 0.05 under the plane: the segment (an edge element of cell 0), at its middle.
  {
    Batch b;
    b.query(segment(b, v3(-1, -0.05f, 0), v3(1, -0.05f, 0)),
            b.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false)));
    ContactElement m, p;
    onlyContact(b, Backend::kCpuScalar, true, m, p);
    EXPECT_EQ(contactCellType(m), CellType::kEdge);
    expectElement(m, ContactElementType::kCellIndex, {v3(0, -0.05f, 0), v3(0, 1, 0), 0.05f}, 1e-6f, "mesh");
  }
}

TEST(GeometryQueriesMeshPrims, PlaneSidesFollowTheFlag) {
  // The centroid below a two-sided plane: the triangle goes down by its highest corner's height (0.2);
  // one-sided, it goes up by its lowest corner's depth (0.6).
  for (bool twoSided : {true, false}) {
    Batch b;
    b.query(triangle(b, v3(0, 0.2f, 0), v3(1, -0.6f, 0), v3(0, -0.5f, 1)),
            b.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), twoSided)));
    ContactElement m, p;
    onlyContact(b, Backend::kCpuScalar, true, m, p);
    if (twoSided) {
      expectElement(m, ContactElementType::kPointIndexDirection, {v3(0, 0.2f, 0), v3(0, -1, 0), 0.2f}, 1e-6f,
                    "mesh");
    } else {
      expectElement(m, ContactElementType::kPointIndexDirection, {v3(1, -0.6f, 0), v3(0, 1, 0), 0.6f}, 1e-6f,
                    "mesh");
    }
  }
  // Wholly under a two-sided plane: no contact; under a one-sided one: a contact.
  for (bool twoSided : {true, false}) {
    Batch b;
    b.query(triangle(b, v3(0, -1, 0), v3(1, -1.5f, 0), v3(0, -1.2f, 1)),
            b.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), twoSided)));
    auto counts = b.run(Backend::kCpuScalar);
    ASSERT_TRUE(counts.ok());
    EXPECT_EQ(b.ranges[0].count, twoSided ? 0u : 1u);
  }
}

TEST(GeometryQueriesMeshPrims, TriangleOnABoxFace) {
  for (Backend backend : kCpuBackends) {
    Batch b;
    // A unit box at the origin; the triangle flat 0.1 inside its top face (y = 1), over the face.
    b.query(b.add(Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1))),
            triangle(b, v3(-0.2f, 0.9f, -0.2f), v3(0.3f, 0.9f, 0), v3(0, 0.9f, 0.3f)));
    ContactElement m, p;
    onlyContact(b, backend, false, m, p);
    EXPECT_EQ(contactCellType(m), CellType::kTriangle);
    EXPECT_NEAR(m.point.w, 0.1f, 1e-6f);
    expectNear3(m.direction, 0, 1, 0, 1e-6f, "mesh");
    EXPECT_NEAR(m.point.y, 0.9f, 1e-6f);
    EXPECT_NEAR(p.point.y, 1.0f, 1e-6f);
    // The box's top face centre (0, 1, 0) projects into the triangle: the contact lies under it.
    EXPECT_NEAR(m.point.x, 0.0f, 1e-6f);
    EXPECT_NEAR(m.point.z, 0.0f, 1e-6f);
  }
  // Rotated 90 degrees about z (faces swap): a tilted triangle whose lowest corner is 0.15 inside the
  // face x = 1 of a box of half extents (0.5, 1, 0.5) rotated so that its local y is world -x.
  {
    Batch b;
    b.query(triangle(b, v3(0.85f, 0.1f, 0), v3(1.5f, 0.2f, 0.3f), v3(1.6f, -0.2f, -0.2f)),
            b.add(Geometry::orientedBox(v3(0, 0, 0), quatAxisAngle(0, 0, 1, 1.5707963f), v3(0.5f, 1, 0.5f))));
    ContactElement m, p;
    onlyContact(b, Backend::kCpuScalar, true, m, p);
    EXPECT_EQ(m.type, ContactElementType::kPointIndexDirection);
    EXPECT_EQ(m.index, 0u);
    expectElement(m, ContactElementType::kPointIndexDirection, {v3(0.85f, 0.1f, 0), v3(1, 0, 0), 0.15f},
                  2e-6f, "mesh");
  }
}

TEST(GeometryQueriesMeshPrims, SegmentAcrossABoxEdge) {
  // A segment in the plane z = 0 cutting the box's edge (x = 1, y = 1) square across, 0.1 deep
  // along the diagonal: the faces need 1 or more; the cross-product axis (1, 1, 0) / sqrt 2 gives 0.1,
  // at the segment's point nearest the edge.
  const float s = 0.70710678f;
  const float d = 1.0f + 1.0f - 0.1f * 2 * s;  // the segment's line x + y = d
  Batch b;
  b.query(segment(b, v3(d / 2 + 3, d / 2 - 3, 0), v3(d / 2 - 3, d / 2 + 3, 0)),
          b.add(Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1))));
  ContactElement m, p;
  onlyContact(b, Backend::kCpuScalar, true, m, p);
  EXPECT_EQ(contactCellType(m), CellType::kEdge);
  expectNear3(m.direction, s, s, 0, 1e-5f, "mesh");
  EXPECT_NEAR(m.point.w, 0.1f, 1e-5f);
  expectNear3(m.point, d / 2, d / 2, 0, 1e-5f, "mesh point");
  expectNear3(p.point, 1, 1, 0, 1e-5f, "box point");
  // A segment along z at x = y = d / 2, inside the box by that edge: the faces x = 1 and y = 1 are
  // nearer (1 - d / 2 = 0.0707; x, the first, on the tie).
  Batch c;
  c.query(segment(c, v3(d / 2, d / 2, -3), v3(d / 2, d / 2, 3)),
          c.add(Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1))));
  onlyContact(c, Backend::kCpuScalar, true, m, p);
  EXPECT_NEAR(m.point.w, 1.0f - d / 2, 1e-5f);
  expectNear3(m.direction, 1, 0, 0, 1e-6f, "mesh");
}

TEST(GeometryQueriesMeshPrims, SegmentThroughACylinder) {
  const Geometry cyl = Geometry::cylinder(v3(0, 0, 0), v3(0, 0, 1), 1.0f, 2.0f);
  for (Backend backend : kCpuBackends) {
    // Across the axis at 0.5 from it: out through the wall the short way, +y by 0.5.
    Batch b;
    b.query(b.add(cyl), segment(b, v3(-3, 0.5f, 0), v3(3, 0.5f, 0)));
    ContactElement m, p;
    onlyContact(b, backend, false, m, p);
    EXPECT_EQ(contactCellType(m), CellType::kEdge);
    expectNear3(m.direction, 0, 1, 0, 1e-5f, "mesh");
    EXPECT_NEAR(m.point.w, 0.5f, 1e-5f);
    expectNear3(m.point, 0, 0.5f, 0, 1e-5f, "mesh point");
  }
  {
    // Along the axis, 0.2 off it, from z = -1 to 1: out through the wall by 0.8 (the caps: 3). The
    // overlap is flat to first order about +y (tilting towards x moves neither the segment's nor the
    // wall's extent linearly): the search's direction is good to about the square root of the depth's
    // rounding.
    Batch b;
    b.query(segment(b, v3(0, 0.2f, -1), v3(0, 0.2f, 1)), b.add(cyl));
    ContactElement m, p;
    onlyContact(b, Backend::kCpuScalar, true, m, p);
    expectNear3(m.direction, 0, 1, 0, 1e-3f, "mesh");
    EXPECT_NEAR(m.point.w, 0.8f, 1e-5f);
  }
  {
    // Flat under the top cap (z = 2) at z = 1.9: out through the cap, +z by 0.1.
    Batch b;
    b.query(triangle(b, v3(-0.3f, -0.3f, 1.9f), v3(0.4f, -0.2f, 1.9f), v3(0, 0.5f, 1.9f)), b.add(cyl));
    ContactElement m, p;
    onlyContact(b, Backend::kCpuScalar, true, m, p);
    EXPECT_EQ(contactCellType(m), CellType::kTriangle);
    expectNear3(m.direction, 0, 0, 1, 1e-5f, "mesh");
    EXPECT_NEAR(m.point.w, 0.1f, 1e-5f);
  }
  {
    // Apart: beside the wall, and beyond the cap.
    Batch b;
    const uint32_t c = b.add(cyl);
    b.query(c, segment(b, v3(-3, 1.01f, 0), v3(3, 1.01f, 0)));
    b.query(c, triangle(b, v3(0, 0, 2.01f), v3(1, 0, 2.5f), v3(0, 1, 2.5f)));
    auto counts = b.run(Backend::kCpuScalar);
    ASSERT_TRUE(counts.ok());
    EXPECT_EQ(counts->contacts, 0u);
  }
}

// Box of half extents (1, 0.8, 0.6) at the origin, exact signed distance, sampled every 0.05 on
// [-1.5, 1.5]^3: trilinear interpolation is exact where one face is nearest throughout a grid cell.
float boxSdf(float x, float y, float z) {
  const float q[3] = {std::abs(x) - 1.0f, std::abs(y) - 0.8f, std::abs(z) - 0.6f};
  const float ox = std::max(q[0], 0.0f), oy = std::max(q[1], 0.0f), oz = std::max(q[2], 0.0f);
  return std::sqrt(ox * ox + oy * oy + oz * oz) + std::min(std::max(q[0], std::max(q[1], q[2])), 0.0f);
}

uint32_t addBoxGrid(Batch& b) {
  return b.addGrid(v3(-1.5f, -1.5f, -1.5f), 0.05f, 61, boxSdf);
}

TEST(GeometryQueriesMeshPrims, CellsAgainstAnImplicitGeometry) {
  for (Backend backend : kCpuBackends) {
    Batch b;
    const uint32_t grid = addBoxGrid(b);
    // A triangle flat 0.05 under the top face (y = 0.8): every lattice point equally deep.
    b.query(triangle(b, v3(-0.3f, 0.75f, -0.2f), v3(0.3f, 0.75f, -0.2f), v3(0, 0.75f, 0.3f)), grid);
    // A segment rising out of it: its lower end (vertex 0), 0.1 deep.
    b.query(grid, segment(b, v3(0.1f, 0.7f, 0), v3(0.5f, 1.0f, 0.1f)));
    // A triangle tilted through the face x = 1: its corner 1 is 0.2 deep (the field at (0.8, 0, 0)).
    b.query(triangle(b, v3(1.3f, 0.1f, 0), v3(0.8f, 0, 0), v3(1.3f, -0.1f, 0.1f)), grid);
    // Apart: above the top face.
    b.query(triangle(b, v3(-0.3f, 0.85f, -0.2f), v3(0.3f, 0.9f, -0.2f), v3(0, 0.95f, 0.3f)), grid);
    auto counts = b.run(backend);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(b.ranges[0].count, 1u);
    ASSERT_EQ(b.ranges[1].count, 1u);
    ASSERT_EQ(b.ranges[2].count, 1u);
    EXPECT_EQ(b.ranges[3].count, 0u);
    const ContactElement& flat = b.elementsA[b.ranges[0].first];
    EXPECT_NEAR(flat.point.w, 0.05f, 1e-5f);
    EXPECT_NEAR(flat.point.y, 0.75f, 1e-6f);
    expectNear3(flat.direction, 0, 1, 0, 1e-4f, "flat triangle");
    expectContactInvariants(flat, b.elementsB[b.ranges[0].first], 1e-5f);
    const ContactElement& seg = b.elementsB[b.ranges[1].first];
    EXPECT_EQ(seg.type, ContactElementType::kPointIndexDirection);
    EXPECT_EQ(seg.index, 0u);
    expectElement(seg, ContactElementType::kPointIndexDirection, {v3(0.1f, 0.7f, 0), v3(0, 1, 0), 0.1f},
                  1e-4f, "segment");
    expectContactInvariants(seg, b.elementsA[b.ranges[1].first], 1e-5f);
    const ContactElement& tilted = b.elementsA[b.ranges[2].first];
    EXPECT_EQ(tilted.type, ContactElementType::kPointIndexDirection);
    EXPECT_EQ(tilted.index, 1u);
    expectElement(tilted, ContactElementType::kPointIndexDirection, {v3(0.8f, 0, 0), v3(1, 0, 0), 0.2f},
                  1e-4f, "tilted triangle");
  }
}

// Random triangle and segment soups (2 000 cells each) against random planes, boxes, cylinders and an
// implicit geometry, each pair in both orders: the elements swap bit for bit; the brute force (every
// cell) gives the same contacts.
TEST(GeometryQueriesMeshPrims, BvhEqualsBruteForceAndSwapRuleOnRandomMeshes) {
  for (uint32_t seed : {11u, 12u}) {
    std::mt19937 rng(seed);
    Batch b;
    const uint32_t meshes[2] = {addRandomSoup(b, rng, GeometryType::kSurfaceMesh, 2000, 4.0f, 0.6f),
                                addRandomSoup(b, rng, GeometryType::kLineMesh, 2000, 4.0f, 0.6f)};
    for (uint32_t k = 0; k < 8; ++k) {
      for (uint32_t type : {2u, 3u, 4u}) {
        Geometry g = randomGeometry(rng, type, 0);
        const float scale = type == 4 ? 2.0f : 3.0f;  // spread over the meshes' box
        g.p0.x *= scale;
        g.p0.y *= scale;
        g.p0.z *= scale;
        if (type != 4) {
          g.p2.x *= 2;  // a box's half extents
          g.p2.y *= 2;
          g.p2.z *= 2;
          if (type == 2) g.p0.w *= 2;  // a cylinder's radius
        }
        const uint32_t prim = b.add(g);
        for (uint32_t mesh : meshes) {
          b.query(mesh, prim);
          b.query(prim, mesh);
        }
      }
    }
    const uint32_t grid = addBoxGrid(b);
    for (uint32_t mesh : meshes) {
      b.query(mesh, grid);
      b.query(grid, mesh);
    }
    auto counts = b.run(Backend::kCpuScalar, 400000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    EXPECT_GT(counts->contacts, 1000u) << "seed " << seed;
    expectPairsSwappedBitwise(b);
    expectBruteForceAndSimdEqual(b, counts->contacts, 400000, 2e-5f);
  }
}

TEST(GeometryQueriesMeshPrims, BadInputIsRefusedNamingIt) {
  {
    // Only the static method.
    Batch b;
    b.query(triangle(b, v3(0, 0, 0), v3(1, 0, 0), v3(0, 0, 1)),
            b.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false)));
    b.queries[0].method = GeometryMethod::kContinuous;
    expectRefusedUnwritten(
        b, ErrorCode::kInvalidArgument,
        "queries[0].method is kContinuous: plane vs surface mesh has no continuous method");
  }
  {
    // The primitive's own checks still apply.
    Batch b;
    b.query(segment(b, v3(0, 0, 0), v3(1, 0, 0)),
            b.add(Geometry::orientedBox(v3(0, 0, 0), Float4{0, 0, 0, 2}, v3(1, 1, 1))));
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "p1 (rotation quaternion) has length 2");
  }
  {
    Batch b;
    b.query(b.add(Geometry::cylinder(v3(0, 0, 0), v3(0, 0, 1), -1.0f, 1.0f)),
            triangle(b, v3(0, 0, 0), v3(1, 0, 0), v3(0, 0, 1)));
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "p0.w (radius) is -1");
  }
  {
    // A degenerate cell of the mesh (validation of the mesh rows, unchanged).
    Batch b;
    b.query(segment(b, v3(1, 0, 0), v3(1, 0, 0)), b.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false)));
    expectRefusedUnwritten(b, ErrorCode::kInvalidArgument, "has zero length (degenerate cell)");
  }
}

}  // namespace
}  // namespace vkc::test::geometry
