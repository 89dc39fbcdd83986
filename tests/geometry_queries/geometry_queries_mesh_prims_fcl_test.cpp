// Independent oracle for a triangle against an oriented box, a cylinder and a one-sided plane
// (shaders/shared/geometry_queries_mesh_prims.h), and a tetrahedron against a cylinder
// (geometry_queries_mesh_tetra.h): FCL (Debian libfcl-dev, test-only; compiled empty without it,
// VKC_HAVE_FCL), the triangle as a one-triangle BVHModel, the tetrahedron as an fcl::Convex (solid:
// a cylinder inside it collides). Per random pair:
//  - the same collide / no-collide answer, except within kBand (kSearchBand: cylinders) of touching;
//  - our direction separates: the triangle moved by direction * (depth + kMargin) no longer collides
//    in FCL, and moved by direction * (depth - kDepthTol) still does (our depth is the translation
//    along our direction, not a guess);
//  - the depth: the plane's is closed form on both sides, |ours - FCL| <= kDepthTol; the box's is our
//    exact separating-axis minimum and FCL's an EPA estimate (libccd), so ours <= FCL + kDepthTol;
//    the cylinder's is our local search, at most kDepthTol above FCL's in at most kSearchMissRate of
//    the pairs (counted and printed).
#if VKC_HAVE_FCL
#include <gtest/gtest.h>

#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/geometry/shape/box.h>
#include <fcl/geometry/shape/convex.h>
#include <fcl/geometry/shape/cylinder.h>
#include <fcl/geometry/shape/halfspace.h>
#include <fcl/narrowphase/collision.h>
#include <fcl/narrowphase/collision_object.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "geometry_queries/geometry_queries_test_support.h"

namespace vkc::test::geometry {
namespace {

constexpr double kBand = 1e-4;
constexpr double kSearchBand = 1e-3;
constexpr double kDepthTol = 2e-3;
constexpr double kMargin = 1e-3;
constexpr double kSearchMissRate = 0.005;

Eigen::Vector3d vec(Float4 v) {
  return {v.x, v.y, v.z};
}

struct FclPair {
  std::unique_ptr<fcl::CollisionObjectd> shape;
  std::shared_ptr<fcl::BVHModel<fcl::OBBRSSd>> mesh;
};

std::unique_ptr<fcl::CollisionObjectd> primitiveToFcl(const Geometry& g) {
  fcl::Transform3d tf = fcl::Transform3d::Identity();
  std::shared_ptr<fcl::CollisionGeometryd> shape;
  if (g.type == GeometryType::kOrientedBox) {
    shape = std::make_shared<fcl::Boxd>(2.0 * double{g.p2.x}, 2.0 * double{g.p2.y}, 2.0 * double{g.p2.z});
    tf.linear() = Eigen::Quaterniond(g.p1.w, g.p1.x, g.p1.y, g.p1.z).normalized().toRotationMatrix();
    tf.translation() = vec(g.p0);
  } else if (g.type == GeometryType::kCylinder) {
    shape = std::make_shared<fcl::Cylinderd>(g.p0.w, 2.0 * double{g.p1.w});
    tf.linear() = Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), vec(g.p1).normalized())
                      .toRotationMatrix();
    tf.translation() = vec(g.p0);
  } else {
    const Eigen::Vector3d n = vec(g.p1).normalized();
    shape = std::make_shared<fcl::Halfspaced>(n, n.dot(vec(g.p0)));
  }
  return std::make_unique<fcl::CollisionObjectd>(shape, tf);
}

struct FclAnswer {
  bool hit = false;
  double depth = 0;
};

FclAnswer fclCollide(const fcl::CollisionObjectd& a, const Geometry& prim) {
  auto b = primitiveToFcl(prim);
  fcl::CollisionRequestd request(1, true);
  fcl::CollisionResultd result;
  fcl::collide(&a, b.get(), request, result);
  FclAnswer answer;
  answer.hit = result.isCollision();
  if (answer.hit && result.numContacts() > 0) answer.depth = result.getContact(0).penetration_depth;
  return answer;
}

FclAnswer fclTriangle(const Geometry& prim, const Float4 tri[3], const Eigen::Vector3d& shift) {
  auto model = std::make_shared<fcl::BVHModel<fcl::OBBRSSd>>();
  const std::vector<Eigen::Vector3d> v{vec(tri[0]) + shift, vec(tri[1]) + shift, vec(tri[2]) + shift};
  model->beginModel();
  model->addSubModel(v, std::vector<fcl::Triangle>{fcl::Triangle(0, 1, 2)});
  model->endModel();
  return fclCollide(fcl::CollisionObjectd(model, fcl::Transform3d::Identity()), prim);
}

// The tetrahedron t[0..3] moved by shift as a solid fcl::Convex (faces wound outwards).
FclAnswer fclTetrahedron(const Geometry& prim, const Float4 t[4], const Eigen::Vector3d& shift) {
  auto v = std::make_shared<std::vector<Eigen::Vector3d>>();
  for (int k = 0; k < 4; ++k) v->push_back(vec(t[k]) + shift);
  const bool flip = ((*v)[1] - (*v)[0]).cross((*v)[2] - (*v)[0]).dot((*v)[3] - (*v)[0]) > 0;
  // Face k opposite corner k; (a, b, c) wound outwards when the fourth corner lies behind it.
  const int f[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
  auto faces = std::make_shared<std::vector<int>>();
  for (const auto& face : f) {
    faces->push_back(3);
    faces->insert(faces->end(), {face[0], flip ? face[2] : face[1], flip ? face[1] : face[2]});
  }
  auto convex = std::make_shared<fcl::Convexd>(v, 4, faces);
  return fclCollide(fcl::CollisionObjectd(convex, fcl::Transform3d::Identity()), prim);
}

// Random cells (corners 3: a triangle, 4: a tetrahedron) near random primitives of `type`, against
// FCL (kCpuScalar), as the file comment says. A random tetrahedron of zero volume (float rounding) is
// refused and skipped.
void checkCells(uint32_t type, uint32_t corners, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-1.0f, 1.0f);
  int pairs = 0, apart = 0, banded = 0, compared = 0, misses = 0;
  double maxError = 0, maxAbove = 0;
  const bool search = type == 2;
  const char* name = corners == 3 ? "triangle" : "tetrahedron";
  for (int i = 0; i < count; ++i) {
    Geometry prim = randomGeometry(rng, type, 0);
    prim.flags = 0;  // a plane one-sided (FCL's halfspace)
    // The cell around a point near the primitive's origin (a plane: anywhere).
    const Float4 c =
        v3(prim.p0.x + pos(rng) * 0.7f, prim.p0.y + pos(rng) * 0.7f, prim.p0.z + pos(rng) * 0.7f);
    Float4 cell[4];
    for (uint32_t k = 0; k < corners; ++k)
      cell[k] = v3(c.x + pos(rng) * 0.6f, c.y + pos(rng) * 0.6f, c.z + pos(rng) * 0.6f);
    Batch b;
    if (corners == 3) {
      b.query(b.addMesh(GeometryType::kSurfaceMesh, {cell[0], cell[1], cell[2]}, {0, 1, 2}), b.add(prim));
    } else {
      b.query(b.addMesh(GeometryType::kTetrahedralMesh, {cell[0], cell[1], cell[2], cell[3]}, {0, 1, 2, 3}),
              b.add(prim));
    }
    auto counts = b.run(Backend::kCpuScalar, 4);
    if (!counts.ok() && corners == 4 && counts.message().find("zero volume") != std::string::npos) continue;
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_LE(b.ranges[0].count, 1u);
    ++pairs;
    const auto fclAt = [&](const Eigen::Vector3d& shift) {
      return corners == 3 ? fclTriangle(prim, cell, shift) : fclTetrahedron(prim, cell, shift);
    };
    const bool ours = b.ranges[0].count == 1;
    const double depth = ours ? double{b.elementsA[0].point.w} : 0.0;
    const Eigen::Vector3d dir = ours ? vec(b.elementsA[0].direction) : Eigen::Vector3d::Zero();
    const FclAnswer fcl = fclAt(Eigen::Vector3d::Zero());
    if (!ours && !fcl.hit) {
      ++apart;
      continue;
    }
    if (std::max(depth, fcl.depth) < (search ? kSearchBand : kBand)) {
      ++banded;
      continue;
    }
    ASSERT_EQ(ours, fcl.hit) << "pair " << i << ": our depth " << depth << ", FCL depth " << fcl.depth;
    ++compared;
    EXPECT_FALSE(fclAt(dir * (depth + kMargin)).hit)
        << "pair " << i << ": our direction does not separate at our depth " << depth;
    if (depth > 2 * kDepthTol) {
      EXPECT_TRUE(fclAt(dir * (depth - kDepthTol)).hit)
          << "pair " << i << ": our direction separates before our depth " << depth;
    }
    maxAbove = std::max(maxAbove, depth - fcl.depth);
    if (type == 4) {
      maxError = std::max(maxError, std::abs(depth - fcl.depth));
      EXPECT_NEAR(depth, fcl.depth, kDepthTol) << "pair " << i;
    } else if (search) {
      if (depth > fcl.depth + kDepthTol) {
        ++misses;
        std::printf("    pair %d: ours %.6f, FCL %.6f\n", i, depth, fcl.depth);
      }
    } else {
      EXPECT_LE(depth, fcl.depth + kDepthTol) << "pair " << i;
    }
  }
  std::printf(
      "  FCL oracle %s vs type %u: %d pairs, %d apart, %d near touching, %d compared, max |ours - FCL| "
      "%.2e (plane), max ours - FCL %.2e, %d deeper than FCL by > %.0e\n",
      name, type, pairs, apart, banded, compared, maxError, maxAbove, misses, kDepthTol);
  EXPECT_LE(misses, kSearchMissRate * compared);
  EXPECT_GT(compared, count / 10);
}

TEST(GeometryQueriesMeshPrimsFcl, TriangleBox) {
  checkCells(3, 3, 2000, 31);
}
TEST(GeometryQueriesMeshPrimsFcl, TriangleCylinder) {
  checkCells(2, 3, 2000, 32);
}
TEST(GeometryQueriesMeshPrimsFcl, TrianglePlane) {
  checkCells(4, 3, 2000, 33);
}
TEST(GeometryQueriesMeshPrimsFcl, TetrahedronCylinder) {
  checkCells(2, 4, 2000, 34);
}

}  // namespace
}  // namespace vkc::test::geometry
#endif  // VKC_HAVE_FCL
