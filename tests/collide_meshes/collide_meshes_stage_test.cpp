// The mesh stage (include/vkcollide/collide_meshes.h) against analytic answers and brute force, one
// body per backend: falling onto a floor (restitution, friction, static friction), a V-shaped crack,
// untouched particles, zero inverse mass, fast particles through a thin closed box (and tunnelling
// without continuous collision), a rotating paddle, a growing sphere, the tree kept between calls,
// the earliest hit against testing every triangle, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

#include "collide_meshes/mesh_stage_support.h"
#include "collide_meshes/mesh_test_support.h"
#include "shared/collide_meshes_math.h"
#include "support/mesh_reference.h"
#include "support/executors.h"
#include "support/obj_mesh.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using namespace meshstage;
using MeshStage = BackendTest;

Status runStage(Backend backend, Context* ctx, const MeshCollisionInput& in, MeshCollisionDebug* debug = nullptr) {
  return collideMeshes(backend, ctx, in, debug);
}

float len3(float x, float y, float z) { return std::sqrt(x * x + y * y + z * z); }
Float4 vel(const MeshScene& s, uint32_t i) {
  const Float4& p = s.particles[i];
  const Float4& q = s.prevParticles[i];
  return {p.x - q.x, p.y - q.y, p.z - q.z, 0};
}

// A particle falling at (0.2, -2, 0) per iteration onto the floor y = 0 (thickness 0.1).
MeshScene fallingOnFloor(MeshSurface surface, bool continuous) {
  MeshScene s;
  s.meshes.push_back(floorMesh(10));
  s.meshes[0].surface = surface;
  s.settings.continuous = continuous;
  if (continuous) {
    s.addParticle(p4(0.3f, 1.0f, 0.2f), p4(0.5f, -1.0f, 0.2f));
  } else {
    s.addParticle(p4(0.3f, 1.95f, 0.2f), p4(0.5f, -0.05f, 0.2f));
  }
  return s;
}

TEST_P(MeshStage, FallingOntoAFloorEndsAtThicknessAndKeepsItsTangentialVelocity) {
  for (bool continuous : {false, true}) {
    MeshScene s = fallingOnFloor(MeshSurface{.thickness = 0.1f}, continuous);
    MeshCollisionDebug debug;
    ASSERT_TRUE(runStage(backend(), ctx(), s.input(), &debug).ok());
    const Float4 p = s.particles[0];
    const Float4 v = vel(s, 0);
    SCOPED_TRACE(continuous ? "continuous" : "discrete");
    EXPECT_NEAR(p.y, 0.1f, 1e-3f);
    EXPECT_GE(p.y, 0.1f - 1e-5f);
    EXPECT_NEAR(p.x, 0.5f, 1e-4f);
    EXPECT_NEAR(v.x, 0.2f, 1e-4f);
    EXPECT_NEAR(v.y, 0.0f, 1e-4f);
    EXPECT_NEAR(v.z, 0.0f, 1e-5f);
    EXPECT_EQ(p.w, 1.0f);
    EXPECT_EQ(debug.contacts[0], 1u);
  }
}

TEST_P(MeshStage, RestitutionOneMirrorsTheNormalVelocity) {
  MeshScene s = fallingOnFloor(MeshSurface{.thickness = 0.1f, .restitution = 1.0f}, true);
  ASSERT_TRUE(runStage(backend(), ctx(), s.input()).ok());
  const Float4 v = vel(s, 0);
  EXPECT_NEAR(v.x, 0.2f, 1e-4f);
  EXPECT_NEAR(v.y, 2.0f, 1e-3f);
  // Hit at t = 0.45 at y = 0.1, then up at 2 per iteration for the remaining 0.55.
  EXPECT_NEAR(s.particles[0].y, 0.1f + 2.0f * 0.55f, 2e-3f);
}

TEST_P(MeshStage, FrictionReducesButNeverReversesTheTangentialVelocity) {
  // |dv_n| = 2 (restitution 0): friction 0.05 removes 0.1 of the tangential 0.2; 10 would remove 20.
  for (bool continuous : {false, true}) {
    SCOPED_TRACE(continuous ? "continuous" : "discrete");
    MeshScene a = fallingOnFloor(MeshSurface{.thickness = 0.1f, .friction = 0.05f}, continuous);
    ASSERT_TRUE(runStage(backend(), ctx(), a.input()).ok());
    const float wantSlow = 0.1f;
    EXPECT_NEAR(vel(a, 0).x, wantSlow, 1e-3f);
    MeshScene b = fallingOnFloor(MeshSurface{.thickness = 0.1f, .friction = 10.0f}, continuous);
    ASSERT_TRUE(runStage(backend(), ctx(), b.input()).ok());
    EXPECT_EQ(vel(b, 0).x, 0.0f);
    EXPECT_GE(b.particles[0].y, 0.1f - 1e-5f);
  }
}

TEST_P(MeshStage, StaticFrictionSticks) {
  // |v_t| = 0.2 <= mu_s |dv_n| = 0.2 * 2: the tangential velocity stops.
  MeshScene s = fallingOnFloor(MeshSurface{.thickness = 0.1f, .staticFriction = 0.2f}, true);
  ASSERT_TRUE(runStage(backend(), ctx(), s.input()).ok());
  EXPECT_EQ(vel(s, 0).x, 0.0f);
  EXPECT_NEAR(s.particles[0].x, 0.3f + 0.2f * 0.45f, 1e-3f);  // where it landed
  // Below the threshold (mu_s 0.04: 0.2 > 0.08) it slides on unchanged.
  MeshScene t = fallingOnFloor(MeshSurface{.thickness = 0.1f, .staticFriction = 0.04f}, true);
  ASSERT_TRUE(runStage(backend(), ctx(), t.input()).ok());
  EXPECT_NEAR(vel(t, 0).x, 0.2f, 1e-4f);
}

TEST_P(MeshStage, ParticleDrivenIntoACrackEndsLegalWithinTheBounceCap) {
  for (uint32_t maxBounces : {0u, 1u, 4u}) {
    MeshScene s;
    s.meshes.push_back(crackMesh(0.1f, 5.0f));
    s.meshes[0].surface.thickness = 0.01f;
    s.settings.continuous = true;
    s.settings.maxBounces = maxBounces;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int i = 0; i < 64; ++i) {
      const float x = 0.03f * u(rng), z = u(rng);
      s.addParticle(p4(x, 0.8f, z), p4(x + 0.5f * u(rng), -3.0f, z + 0.1f * u(rng)));
    }
    MeshCollisionDebug debug;
    ASSERT_TRUE(runStage(backend(), ctx(), s.input(), &debug).ok());
    for (size_t i = 0; i < s.particles.size(); ++i) {
      const Float4 p = s.particles[i];
      // Inside the V: |x| <= 0.1 y, at least the thickness from both walls (within the tolerance).
      const float wall = 1.0f / std::sqrt(1.0f + 0.01f);  // the walls' normals: (+-1, -0.1) / |.|
      const float dLeft = (p.x + 0.1f * p.y) * wall, dRight = (0.1f * p.y - p.x) * wall;
      EXPECT_GE(dLeft, 0.01f * 0.99f) << "particle " << i << " bounces " << maxBounces;
      EXPECT_GE(dRight, 0.01f * 0.99f) << "particle " << i << " bounces " << maxBounces;
      EXPECT_LE(debug.contacts[i], maxBounces + 1) << i;
      EXPECT_GE(debug.contacts[i], 1u) << i;
    }
  }
}

TEST_P(MeshStage, ParticlesBeyondTheThicknessAndZeroInverseMassAreUntouched) {
  for (bool continuous : {false, true}) {
    MeshScene s;
    s.meshes.push_back(sphereMesh(1.0f, 12, 16));
    s.meshes[0].surface.thickness = 0.05f;
    s.settings.continuous = continuous;
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> u(-3.0f, 3.0f);
    while (s.particles.size() < 500) {
      const Float4 p = p4(u(rng), u(rng), u(rng), 0.5f);
      const float r = len3(p.x, p.y, p.z);
      if (r < 1.2f) continue;  // the sphere's faces are within 1 - cos(pi / 16) of the unit sphere
      Float4 q = p;
      q.x += 0.01f, q.z -= 0.02f;
      s.addParticle(q, p);
    }
    // Inside by a lot but of zero inverse mass.
    s.addParticle(p4(0, 0.97f, 0, 0), p4(0, 0.9f, 0, 0));
    const MeshScene before = s;
    ASSERT_TRUE(runStage(backend(), ctx(), s.input()).ok());
    ASSERT_EQ(0, std::memcmp(s.particles.data(), before.particles.data(), s.particles.size() * sizeof(Float4)));
    ASSERT_EQ(0,
              std::memcmp(s.prevParticles.data(), before.prevParticles.data(), s.particles.size() * sizeof(Float4)));
  }
}

// Fast particles through a thin closed box: continuous collision keeps each on the side it came
// from; discrete collision lets them tunnel (so this test can fail).
TEST_P(MeshStage, FastParticlesThroughAThinClosedBoxStayOnTheirSide) {
  const int count = 10000;
  for (bool continuous : {true, false}) {
    MeshScene s;
    s.meshes.push_back(boxMesh(p4(-1, -0.01f, -1), p4(1, 0.01f, 1)));
    s.meshes[0].surface.thickness = 0.001f;
    s.settings.continuous = continuous;
    std::mt19937 rng(21);
    std::uniform_real_distribution<float> u(-0.95f, 0.95f), h(0.05f, 3.0f);
    for (int i = 0; i < count; ++i) {
      const float side = i % 2 ? 1.0f : -1.0f;
      s.addParticle(p4(u(rng), side * h(rng), u(rng)), p4(u(rng), -side * h(rng), u(rng)));
    }
    const std::vector<Float4> start = s.prevParticles;
    ASSERT_TRUE(runStage(backend(), ctx(), s.input()).ok());
    int crossed = 0;
    for (int i = 0; i < count; ++i) {
      const float side = start[static_cast<size_t>(i)].y > 0 ? 1.0f : -1.0f;
      if (s.particles[static_cast<size_t>(i)].y * side < 0.01f + 0.001f * 0.99f) ++crossed;
    }
    if (continuous) {
      EXPECT_EQ(crossed, 0) << "of " << count << " particles ended inside or beyond the box";
    } else {
      EXPECT_GT(crossed, count / 2) << "discrete collision should let fast particles tunnel";
    }
  }
}

// A paddle (a quad in the plane z = 0, x in [0.2, 2]) turning about the y axis by 0.6 rad sweeps
// through resting particles: continuous collision carries them (they end in front of it).
TEST_P(MeshStage, RotatingPaddleCarriesRestingParticles) {
  MeshScene s;
  MeshData paddle;
  const uint32_t a = paddle.addVertex(0.2f, -1, 0), b = paddle.addVertex(2, -1, 0), c = paddle.addVertex(2, 1, 0),
                 d = paddle.addVertex(0.2f, 1, 0);
  paddle.addQuad(a, b, c, d);
  paddle.motion = MeshMotion::kRigid;
  const float angle = 0.6f;
  // Rotation about +y by -angle turns +x towards +z: the paddle sweeps the wedge z > 0.
  paddle.prevTransform.rotation = Float4{0, 0, 0, 1};
  paddle.transform.rotation = Float4{0, std::sin(-angle / 2), 0, std::cos(-angle / 2)};
  paddle.surface.thickness = 0.01f;
  s.meshes.push_back(paddle);
  s.settings.continuous = true;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> r(0.4f, 1.8f), phi(0.05f, angle - 0.05f), y(-0.8f, 0.8f);
  for (int i = 0; i < 400; ++i) {
    const float rr = r(rng), ph = phi(rng);
    const Float4 p = p4(rr * std::cos(ph), y(rng), rr * std::sin(ph));
    s.addParticle(p, p);
  }
  ASSERT_TRUE(runStage(backend(), ctx(), s.input()).ok());
  // The paddle's plane at the end: direction (cos a, 0, sin a), normal (-sin a, 0, cos a) towards the
  // side it moves to. Every particle is carried: it ends on that side, at the thickness (within the
  // rigid sub-steps' error). Particles stopped by the bounce cap ride on the paddle (meshCarry).
  const float nx = -std::sin(angle), nz = std::cos(angle);
  float least = 1e30f;
  for (size_t i = 0; i < s.particles.size(); ++i) {
    const Float4 p = s.particles[i];
    const float ahead = p.x * nx + p.z * nz;
    least = std::min(least, ahead);
    EXPECT_GT(ahead, 0.0f) << "particle " << i << " was passed by the paddle";
    EXPECT_GE(ahead, 0.01f * (1.0f - gpu::kRigidErrorFraction)) << "particle " << i << " is inside the thickness";
  }
  std::printf("paddle: least distance ahead of the paddle %g (thickness 0.01)\n", static_cast<double>(least));
}

// A deforming sphere growing from radius 0.5 to 1 pushes out particles resting at radius 0.8.
TEST_P(MeshStage, GrowingDeformingSpherePushesParticlesOut) {
  MeshScene s;
  MeshData sphere = sphereMesh(1.0f, 16, 24);
  sphere.motion = MeshMotion::kDeforming;
  sphere.prevVertices = sphere.vertices;
  for (Float4& v : sphere.prevVertices) v = Float4{v.x * 0.5f, v.y * 0.5f, v.z * 0.5f, 0};
  sphere.surface.thickness = 0.02f;
  s.meshes.push_back(sphere);
  s.settings.continuous = true;
  std::mt19937 rng(4);
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (int i = 0; i < 300; ++i) {
    float x = n(rng), y = n(rng), z = n(rng);
    const float l = len3(x, y, z) / 0.8f;
    const Float4 p = p4(x / l, y / l, z / l);
    s.addParticle(p, p);
  }
  ASSERT_TRUE(runStage(backend(), ctx(), s.input()).ok());
  // The faceted sphere's faces are at least cos(pi/16) of the radius from the centre.
  const float inner = std::cos(3.14159265f / 16) * std::cos(3.14159265f / 24);
  for (size_t i = 0; i < s.particles.size(); ++i) {
    const Float4 p = s.particles[i];
    EXPECT_GE(len3(p.x, p.y, p.z), inner + 0.02f * 0.9f) << "particle " << i;
  }
}

// With a tree kept by the caller: the first call builds it, later calls refit it (moving mesh) or
// keep it (static); its nodes equal a build of the same world vertices.
TEST_P(MeshStage, TreeKeptBetweenCallsIsBuiltOnceThenRefit) {
  MeshScene s;
  MeshData m = sphereMesh(1.0f, 6, 8);
  m.motion = MeshMotion::kDeforming;
  m.prevVertices = m.vertices;
  s.meshes.push_back(m);
  s.meshes[0].surface.thickness = 0.05f;
  s.addParticle(p4(0, 2, 0), p4(0, 0.9f, 0));
  const uint32_t n = static_cast<uint32_t>(m.indices.size() / 3);
  OwnedTree tree(n);
  std::vector<BvhNode>& nodes = tree.nodes;
  std::vector<Aabb>& boxes = tree.boxes;
  for (int step = 0; step < 3; ++step) {
    // The sphere moves up by 0.1 per step.
    for (size_t v = 0; v < s.meshes[0].vertices.size(); ++v) {
      s.meshes[0].prevVertices[v] = s.meshes[0].vertices[v];
      s.meshes[0].vertices[v].y += 0.1f;
    }
    MeshCollisionInput in = s.input();
    in.tree = tree.view();
    ASSERT_TRUE(runStage(backend(), ctx(), in).ok());
    EXPECT_TRUE(tree.built);
    // Reference: the tree of the world vertices at this step's end (discrete: unswept boxes).
    std::vector<BvhNode> refNodes(nodes.size());
    std::vector<Aabb> refBoxes(n);
    std::vector<uint32_t> refParents(n);
    BvhInput b;
    b.vertices = s.meshes[0].vertices;
    b.indices = s.meshes[0].indices;
    b.nodes = refNodes;
    b.primitiveBoxes = refBoxes;
    b.leafParents = refParents;
    ASSERT_TRUE(buildBvhCpu(b, Backend::kCpuScalar).ok());
    if (step == 0) {
      EXPECT_EQ(nodes, refNodes);
    } else {
      // A refit keeps the first build's topology: the boxes are those of the moved mesh.
      for (uint32_t t = 0; t < n; ++t) {
        EXPECT_EQ(0, std::memcmp(&boxes[t], &refBoxes[t], sizeof(Aabb))) << "triangle " << t << " step " << step;
      }
      EXPECT_EQ(nodes[0].lo.y, refNodes[0].lo.y);
      EXPECT_EQ(nodes[0].hi.y, refNodes[0].hi.y);
    }
  }
}

// The earliest hit over the tree equals the earliest hit over every triangle (brute force), on
// random meshes with slivers, zero-area triangles and duplicate vertices, for static, deforming and
// rigid motion. maxBounces 0: the stage stops each particle at its first hit, so the hit's triangle
// is in debug.lastTriangle and the particle at that hit's legal position.
TEST_P(MeshStage, EarliestHitEqualsBruteForceOnRandomMeshes) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (MeshMotion motion : {MeshMotion::kStatic, MeshMotion::kDeforming, MeshMotion::kRigid}) {
    MeshScene s;
    MeshData m;
    for (int v = 0; v < 60; ++v) m.addVertex(u(rng), u(rng), u(rng));
    m.vertices.push_back(m.vertices[3]);  // a duplicate vertex
    for (int t = 0; t < 80; ++t) {
      const auto pick = [&] { return static_cast<uint32_t>(rng() % m.vertices.size()); };
      const uint32_t a = pick();
      if (t % 10 == 0) {
        m.addTriangle(a, a, pick());  // zero area
      } else if (t % 10 == 1) {
        const uint32_t b = pick();
        const Float4 va = m.vertices[a], vb = m.vertices[b];
        m.addTriangle(a, b, m.addVertex((va.x + vb.x) / 2 + 1e-6f, (va.y + vb.y) / 2, (va.z + vb.z) / 2));  // sliver
      } else {
        m.addTriangle(a, pick(), pick());
      }
    }
    m.motion = motion;
    if (motion == MeshMotion::kDeforming) {
      m.prevVertices = m.vertices;
      for (Float4& v : m.vertices) v.x += 0.1f * u(rng), v.y += 0.1f * u(rng), v.z += 0.1f * u(rng);
    }
    if (motion == MeshMotion::kRigid) {
      m.prevTransform.translation = Float4{0.05f, 0, 0, 0};
      const float h = 0.15f;
      m.transform.rotation = Float4{std::sin(h) * 0.6f, std::sin(h) * 0.8f, 0, std::cos(h)};
    }
    m.surface.thickness = 0.02f;
    s.meshes.push_back(m);
    s.settings.continuous = true;
    s.settings.maxBounces = 0;
    for (int i = 0; i < 300; ++i) {
      const gpu::vec3 a(u(rng), u(rng), u(rng));
      const gpu::vec3 b = a + gpu::vec3(u(rng), u(rng), u(rng)) * 0.5f;
      s.addParticle(p4(a.x, a.y, a.z), p4(b.x, b.y, b.z));
    }
    const std::vector<Float4> prev0 = s.prevParticles, cur0 = s.particles;
    MeshCollisionDebug debug;
    ASSERT_TRUE(runStage(backend(), ctx(), s.input(), &debug).ok());

    // Brute force with the same world vertices and sweep as the stage.
    std::vector<gpu::vec3> start, end;
    for (size_t v = 0; v < m.vertices.size(); ++v) {
      const gpu::vec3 x(m.vertices[v].x, m.vertices[v].y, m.vertices[v].z);
      start.push_back(motion == MeshMotion::kDeforming
                          ? gpu::vec3(m.prevVertices[v].x, m.prevVertices[v].y, m.prevVertices[v].z)
                          : x);
      end.push_back(x);
    }
    auto unit = [](const Float4& q) {
      const gpu::vec4 v(q.x, q.y, q.z, q.w);
      return v / std::sqrt(gpu::quatNorm2(v));
    };
    const gpu::RigidSweep sweep = gpu::rigidSweepPrepare(
        unit(m.prevTransform.rotation), gpu::vec3(0.05f, 0, 0), unit(m.transform.rotation), gpu::vec3(0.0f));
    int hits = 0;
    for (size_t i = 0; i < prev0.size(); ++i) {
      const gpu::vec3 p0(prev0[i].x, prev0[i].y, prev0[i].z), p1(cur0[i].x, cur0[i].y, cur0[i].z);
      gpu::MeshHit best;
      const MeshRef ref{start, end, m.indices};
      uint32_t t = UINT32_MAX;
      const uint32_t flags = gpu::kMeshCcdApproachOnly;
      if (motion == MeshMotion::kStatic) t = earliestHitStatic(ref, 0.0f, p0, p1, 0.02f, flags, best);
      if (motion == MeshMotion::kDeforming) t = earliestHitDeforming(ref, 0.0f, p0, p1, 0.02f, flags, best);
      if (motion == MeshMotion::kRigid) t = earliestHitRigid(ref, sweep, 0.0f, p0, p1, 0.02f, flags, best);
      const uint32_t want = t == UINT32_MAX ? kBvhNone : t;
      ASSERT_EQ(debug.lastTriangle[i], want) << "particle " << i << " motion " << static_cast<int>(motion);
      if (t == UINT32_MAX) continue;
      ++hits;
      // Stopped at the hit's legal position (static), carried by the triangle to the iteration's end
      // (moving): at the thickness from the triangle's end position (the kernel's meshCarry).
      if (motion == MeshMotion::kStatic) {
        const gpu::vec3 legal = gpu::meshLegalPosition(best, 0.02f);
        EXPECT_NEAR(s.particles[i].x, legal.x, 1e-5f) << i;
        EXPECT_NEAR(s.particles[i].y, legal.y, 1e-5f) << i;
        EXPECT_NEAR(s.particles[i].z, legal.z, 1e-5f) << i;
      }
      const gpu::vec3 q(s.particles[i].x, s.particles[i].y, s.particles[i].z);
      gpu::vec3 tri[3];
      for (int k = 0; k < 3; ++k) {
        const gpu::vec3 mv = end[m.indices[3 * t + static_cast<uint32_t>(k)]];
        tri[k] = motion == MeshMotion::kRigid
                     ? gpu::quatRotate(sweep.rotation[gpu::kRigidMaxSteps], mv) + gpu::vec3(sweep.translation[16])
                     : mv;
      }
      const float d = std::sqrt(gpu::triClosestPoint(q, tri[0], tri[1], tri[2]).dist2);
      // Rigid sub-steps lerp the triangle within kRigidErrorFraction of the thickness of the true one.
      const float lowest = 0.02f * (motion == MeshMotion::kRigid ? 1.0f - gpu::kRigidErrorFraction : 0.99f);
      EXPECT_GE(d, lowest) << "particle " << i << " motion " << static_cast<int>(motion);
      EXPECT_LE(d, 0.02f * 1.2f) << "particle " << i << " motion " << static_cast<int>(motion);
    }
    EXPECT_GT(hits, 20) << "the random scene should hit often";
  }
}

// Discrete: the deepest violated triangle, as over every triangle.
TEST_P(MeshStage, DeepestContactEqualsBruteForce) {
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  MeshScene s;
  MeshData m = sphereMesh(0.8f, 8, 10);
  for (Float4& v : m.vertices) v.x += 0.05f * u(rng), v.y += 0.05f * u(rng);
  m.surface.thickness = 0.1f;
  s.meshes.push_back(m);
  s.settings.maxBounces = 0;
  for (int i = 0; i < 500; ++i) {
    const Float4 p = p4(u(rng), u(rng), u(rng));
    s.addParticle(p4(p.x * 1.1f, p.y * 1.1f, p.z * 1.1f), p);
  }
  const std::vector<Float4> cur0 = s.particles;
  MeshCollisionDebug debug;
  ASSERT_TRUE(runStage(backend(), ctx(), s.input(), &debug).ok());
  int contacts = 0;
  for (size_t i = 0; i < cur0.size(); ++i) {
    const gpu::vec3 p(cur0[i].x, cur0[i].y, cur0[i].z);
    uint32_t best = kBvhNone;
    float bestPen = 0;
    for (uint32_t t = 0; t < m.indices.size() / 3; ++t) {
      auto v = [&](uint32_t k) {
        const Float4& f = m.vertices[m.indices[3 * t + k]];
        return gpu::vec3(f.x, f.y, f.z);
      };
      const gpu::TriClosest cp = gpu::triClosestPoint(p, v(0), v(1), v(2));
      const float reach = 0.1f * (1.0f - gpu::kMeshProximitySlack);
      if (!(cp.dist2 < reach * reach)) continue;
      const float pen = 0.1f - std::sqrt(cp.dist2);
      if (best == kBvhNone || pen > bestPen) best = t, bestPen = pen;
    }
    EXPECT_EQ(debug.lastTriangle[i], best) << "particle " << i;
    contacts += best != kBvhNone;
  }
  EXPECT_GT(contacts, 50);
}

// Whether p is inside the closed mesh: the parity of the crossings of a ray in a generic direction
// (Moller-Trumbore in double).
bool insideClosedMesh(const Mesh& m, glm::dvec3 p) {
  const glm::dvec3 d = glm::normalize(glm::dvec3(0.5377, 0.8231, 0.1822));
  int crossings = 0;
  for (size_t t = 0; t < m.indices.size(); t += 3) {
    auto v = [&](size_t k) {
      const Float4& f = m.vertices[m.indices[t + k]];
      return glm::dvec3(f.x, f.y, f.z);
    };
    const glm::dvec3 a = v(0), e1 = v(1) - a, e2 = v(2) - a;
    const glm::dvec3 h = glm::cross(d, e2);
    const double det = glm::dot(e1, h);
    if (std::fabs(det) < 1e-300) continue;
    const glm::dvec3 s = p - a;
    const double u = glm::dot(s, h) / det;
    if (u < 0 || u > 1) continue;
    const glm::dvec3 q = glm::cross(s, e1);
    const double w = glm::dot(d, q) / det;
    if (w < 0 || u + w > 1) continue;
    if (glm::dot(e2, q) / det > 0) ++crossings;
  }
  return crossings % 2 == 1;
}

// 10k fast particles from outside Spot (tests/data/meshes, closed) to points inside it: with
// continuous collision every one ends outside; without, they end inside (the test can fail).
TEST_P(MeshStage, FastParticlesIntoSpotEndOutside) {
  Mesh spot;
  ASSERT_TRUE(readObj(std::string(VKC_SOURCE_DIR) + "/tests/data/meshes/spot_low_resolution.obj", spot));
  glm::vec3 lo(1e30f), hi(-1e30f);
  for (const Float4& v : spot.vertices) {
    lo = glm::min(lo, glm::vec3(v.x, v.y, v.z));
    hi = glm::max(hi, glm::vec3(v.x, v.y, v.z));
  }
  const glm::vec3 centre = (lo + hi) * 0.5f;
  const float size = glm::length(hi - lo);
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<Float4> starts, ends;
  while (ends.size() < 10000) {
    const glm::vec3 e = lo + (hi - lo) * glm::vec3(u(rng), u(rng), u(rng));
    if (!insideClosedMesh(spot, e)) continue;
    glm::vec3 dir(g(rng), g(rng), g(rng));
    const glm::vec3 s = centre + glm::normalize(dir) * size;
    starts.push_back(p4(s.x, s.y, s.z));
    ends.push_back(p4(e.x, e.y, e.z));
  }
  for (bool continuous : {true, false}) {
    MeshScene sc;
    MeshData m;
    m.vertices = spot.vertices;
    m.indices = spot.indices;
    m.surface.thickness = 1e-3f * size;
    sc.meshes.push_back(m);
    sc.settings.continuous = continuous;
    sc.prevParticles = starts;
    sc.particles = ends;
    ASSERT_TRUE(runStage(backend(), ctx(), sc.input()).ok());
    int inside = 0;
    for (const Float4& p : sc.particles) inside += insideClosedMesh(spot, glm::dvec3(p.x, p.y, p.z));
    if (continuous) {
      EXPECT_EQ(inside, 0) << "of 10000 particles ended inside Spot";
    } else {
      EXPECT_GT(inside, 9000) << "discrete collision should leave deep particles inside";
    }
  }
}

// Discrete contact with a moving wall: the side a particle came from is read against the wall's start
// position, so a wall that passed a particle's centre during the iteration pushes it on (it does not
// pull it back through).
TEST_P(MeshStage, MovingWallPushesAParticleItPassedOn) {
  for (MeshMotion motion : {MeshMotion::kDeforming, MeshMotion::kRigid}) {
    MeshScene s;
    MeshData wall;  // the plane x = 0 (normal +x), moving to x = 0.07
    const uint32_t a = wall.addVertex(0, -1, -1), b = wall.addVertex(0, 1, -1), c = wall.addVertex(0, 1, 1),
                   d = wall.addVertex(0, -1, 1);
    wall.addQuad(a, b, c, d);
    wall.motion = motion;
    if (motion == MeshMotion::kDeforming) {
      wall.prevVertices = wall.vertices;
      for (Float4& v : wall.vertices) v.x += 0.07f;
    } else {
      wall.transform.translation = Float4{0.07f, 0, 0, 0};
    }
    wall.surface.thickness = 0.05f;
    s.meshes.push_back(wall);
    s.addParticle(p4(0.05f, 0, 0), p4(0.05f, 0, 0));
    ASSERT_TRUE(runStage(backend(), ctx(), s.input()).ok());
    EXPECT_NEAR(s.particles[0].x, 0.12f, 1e-5f) << static_cast<int>(motion);
  }
}

// The public vertex-face queries (tests/data/ccd-queries, exact labels) through the stage, all 1750 in
// one call: each query a deforming one-triangle mesh and a one-particle cloth listing it, continuous,
// thickness 0, maxBounces 0 (a particle that hits is stopped: it has a contact). The geometric query
// alone misses none (MeshCcd.PublicVertexFaceQueriesNoFalseNegative, and bitwise on the device:
// collide_meshes_vulkan_test); the stage's bounce loop asks only for APPROACHING contacts (relative
// velocity against the contact normal), so a point that moves within the plane of its triangle (never
// changing side: coplanar at both ends) and touches it at thickness 0 is no contact. Every other
// colliding query must be found; false positives are printed.
TEST_P(MeshStage, PublicVertexFaceQueriesThroughTheStageHaveNoFalseNegative) {
  std::vector<meshes::Query> queries;
  for (const auto& f : meshes::vertexFaceQueryFiles()) {
    for (const meshes::Query& q : meshes::readQueries(f)) queries.push_back(q);
  }
  ASSERT_EQ(queries.size(), 1750u);
  MeshScene s;
  s.settings.continuous = true;
  s.settings.maxBounces = 0;
  for (uint32_t i = 0; i < queries.size(); ++i) {
    const meshes::Query& q = queries[i];
    MeshData m;
    for (int k = 1; k <= 3; ++k) m.addVertex(q.v[k + 4].x, q.v[k + 4].y, q.v[k + 4].z);
    for (int k = 1; k <= 3; ++k) m.prevVertices.push_back(Float4{q.v[k].x, q.v[k].y, q.v[k].z, 0});
    m.addTriangle(0, 1, 2);
    m.motion = MeshMotion::kDeforming;
    s.meshes.push_back(m);
    s.addParticle(p4(q.v[0].x, q.v[0].y, q.v[0].z), p4(q.v[4].x, q.v[4].y, q.v[4].z));
    s.cloths.push_back({i, 1});
    s.clothMeshLists.push_back({i});
  }
  MeshCollisionDebug debug;
  ASSERT_TRUE(runStage(backend(), ctx(), s.input(), &debug).ok());
  // Whether the point and the triangle are coplanar (exactly, in double) at both ends.
  auto coplanar = [](const meshes::Query& q) {
    for (int e = 0; e < 2; ++e) {
      const glm::dvec3 p(q.v[4 * e]), a(q.v[4 * e + 1]), b(q.v[4 * e + 2]), c(q.v[4 * e + 3]);
      if (glm::dot(p - a, glm::cross(b - a, c - a)) != 0.0) return false;
    }
    return true;
  };
  int fn = 0, inPlane = 0, fp = 0, positives = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    const bool hit = debug.contacts[i] > 0;
    positives += queries[i].label;
    if (queries[i].label && !hit) {
      if (coplanar(queries[i])) {
        ++inPlane;
      } else {
        ++fn;
        ADD_FAILURE() << "query " << i << " collides but the stage missed it";
      }
    }
    if (!queries[i].label && hit) ++fp;
  }
  std::printf("stage, vertex-face queries: %zu (%d colliding): false negatives %d (+ %d in-plane touches, "
              "not approaching), false positives %d\n",
              queries.size(), positives, fn, inPlane, fp);
  EXPECT_EQ(fn, 0);
  EXPECT_LE(inPlane, 3);
}

// One-sided meshes (NvCloth's triangle rule): discrete contact pushes to the front face even from
// behind; continuous collision stops a path from the front and lets one from behind through.
TEST_P(MeshStage, OneSidedMeshPushesToTheFrontAndLetsPathsFromBehindThrough) {
  MeshScene d;
  d.meshes.push_back(floorMesh(5));  // front: +y
  d.meshes[0].surface = MeshSurface{.thickness = 0.1f, .oneSided = true};
  d.addParticle(p4(0, -0.5f, 0), p4(0, -0.05f, 0));  // from below, ends 0.05 under the floor
  ASSERT_TRUE(runStage(backend(), ctx(), d.input()).ok());
  EXPECT_NEAR(d.particles[0].y, 0.1f, 1e-5f);
  MeshScene two = d;
  two.meshes[0].surface.oneSided = false;
  two.particles[0] = p4(0, -0.05f, 0), two.prevParticles[0] = p4(0, -0.5f, 0);
  ASSERT_TRUE(runStage(backend(), ctx(), two.input()).ok());
  EXPECT_NEAR(two.particles[0].y, -0.1f, 1e-5f);  // two-sided: back to the side it came from

  MeshScene c;
  c.meshes.push_back(floorMesh(5));
  c.meshes[0].surface = MeshSurface{.thickness = 0.01f, .oneSided = true};
  c.settings.continuous = true;
  c.addParticle(p4(0, -1, 0), p4(0, 1, 0));  // from behind: through
  c.addParticle(p4(0.5f, 1, 0), p4(0.5f, -1, 0));  // from the front: stopped
  ASSERT_TRUE(runStage(backend(), ctx(), c.input()).ok());
  EXPECT_EQ(c.particles[0].y, 1.0f);
  EXPECT_GE(c.particles[1].y, 0.01f);  // the legal position: thickness + twice the hit tolerance
  EXPECT_LT(c.particles[1].y, 0.01f + 3e-4f);
}

TEST_P(MeshStage, BadInputNamesTheFieldAndChangesNothing) {
  struct Case {
    const char* field;
    std::function<void(MeshScene&)> spoil;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Case> cases = {
      {"meshes[0].indices[4]", [](MeshScene& s) { s.meshes[0].indices[4] = 99; }},
      {"meshes[0].vertices[2].y", [&](MeshScene& s) { s.meshes[0].vertices[2].y = nan; }},
      {"meshes[0].indices is empty", [](MeshScene& s) { s.meshes[0].indices.clear(); }},
      {"meshes[0].surface.thickness", [](MeshScene& s) { s.meshes[0].surface.thickness = -1; }},
      {"meshes[0].surface.restitution", [](MeshScene& s) { s.meshes[0].surface.restitution = 1.5f; }},
      {"meshes[0].surface.friction", [](MeshScene& s) { s.meshes[0].surface.friction = -0.1f; }},
      {"meshes[0].surface.staticFriction", [](MeshScene& s) { s.meshes[0].surface.staticFriction = -1; }},
      {"meshes[1].transform.rotation", [](MeshScene& s) { s.meshes[1].transform.rotation = Float4{0, 0, 0, 2}; }},
      {"meshes[1].prevTransform.translation.x",
       [&](MeshScene& s) { s.meshes[1].prevTransform.translation.x = nan; }},
      {"clothMeshes[0].meshes[1] is 5", [](MeshScene& s) { s.clothMeshLists[0][1] = 5; }},
      {"settings.maxBounces", [](MeshScene& s) { s.settings.maxBounces = kMaxMeshBounces + 1; }},
      {"particles[1].x", [&](MeshScene& s) { s.particles[1].x = nan; }},
      {"meshes[0].prevVertices", [](MeshScene& s) { s.meshes[0].prevVertices = s.meshes[0].vertices; }},
  };
  for (const Case& c : cases) {
    MeshScene s = fallingOnFloor(MeshSurface{.thickness = 0.1f}, true);
    s.addParticle(p4(0, 1, 0), p4(0, -1, 0));
    MeshData rigid = floorMesh(1, 0.5f);
    rigid.motion = MeshMotion::kRigid;
    s.meshes.push_back(rigid);
    (void)s.input();  // creates the cloth listing both meshes
    c.spoil(s);
    const std::vector<Float4> p = s.particles, q = s.prevParticles;
    const Status st = runStage(backend(), ctx(), s.input());
    ASSERT_FALSE(st.ok()) << c.field;
    EXPECT_EQ(st.error().code, ErrorCode::kInvalidArgument) << c.field;
    EXPECT_NE(st.message().find(c.field), std::string::npos) << "want " << c.field << " in: " << st.message();
    EXPECT_EQ(0, std::memcmp(p.data(), s.particles.data(), p.size() * sizeof(Float4))) << c.field;
    EXPECT_EQ(0, std::memcmp(q.data(), s.prevParticles.data(), q.size() * sizeof(Float4))) << c.field;
  }
}

// The threaded CPU twin (every test executor: pools of 1, 2, 7 threads, small chunks, a host
// parallel-for): positions and debug bitwise the single-threaded result, several cloths listing
// different meshes, discrete and continuous.
TEST(MeshStageThreads, EveryExecutorGivesTheSingleThreadedResultBitwise) {
  for (bool continuous : {false, true}) {
    MeshScene s;
    s.meshes.push_back(sphereMesh(1.0f, 10, 14));
    s.meshes.push_back(floorMesh(3, -1.0f));
    s.meshes[0].surface.thickness = 0.03f;
    s.meshes[1].surface.thickness = 0.05f;
    s.meshes[1].surface.friction = 0.3f;
    s.settings.continuous = continuous;
    std::mt19937 rng(41);
    std::uniform_real_distribution<float> u(-1.5f, 1.5f);
    for (int i = 0; i < 3000; ++i) {
      const Float4 p = p4(u(rng), u(rng), u(rng));
      s.addParticle(p4(p.x * 1.2f, p.y + 0.4f, p.z * 1.2f), p);
    }
    s.cloths = {{0, 1000}, {1000, 1500}, {2500, 500}};
    s.clothMeshLists = {{0, 1}, {1}, {}};
    MeshScene want = s;
    MeshCollisionDebug wantDebug;
    ASSERT_TRUE(collideMeshesCpu(want.input(), Backend::kCpuSimd, &wantDebug).ok());
    for (const TestExecutor& e : testExecutors()) {
      MeshScene got = s;
      MeshCollisionDebug debug;
      ASSERT_TRUE(collideMeshesCpu(got.input(), Backend::kCpuSimd, *e.executor, &debug).ok()) << e.name;
      EXPECT_EQ(0, std::memcmp(got.particles.data(), want.particles.data(), s.particles.size() * sizeof(Float4)))
          << e.name;
      EXPECT_EQ(0, std::memcmp(got.prevParticles.data(), want.prevParticles.data(),
                               s.particles.size() * sizeof(Float4)))
          << e.name;
      EXPECT_EQ(debug.contacts, wantDebug.contacts) << e.name;
      EXPECT_EQ(debug.lastTriangle, wantDebug.lastTriangle) << e.name;
    }
    // Cloth 2 lists no mesh: untouched.
    EXPECT_EQ(0, std::memcmp(&want.particles[2500], &s.particles[2500], 500 * sizeof(Float4)));
  }
}

// Scene s on the scalar twin (its binary walk) and on the SIMD twin with the caller's tree and 4-wide
// cache, each on its own copy.
struct TwinRuns {
  MeshScene scalar, simd;
  MeshCollisionDebug want, got;
};
TwinRuns runScalarAndCachedSimd(const MeshScene& s, OwnedTree& tree, MeshTreeCache& cache) {
  TwinRuns r{s, s, {}, {}};
  EXPECT_TRUE(collideMeshesCpu(r.scalar.input(), Backend::kCpuScalar, &r.want).ok());
  MeshCollisionInput in = r.simd.input();
  in.tree = tree.view(&cache);
  EXPECT_TRUE(collideMeshesCpu(in, Backend::kCpuSimd, &r.got).ok());
  return r;
}

// The SIMD twin's 4-wide tree kept in a MeshTreeCache across calls (built, kept for a static mesh,
// remade after a refit, remade when it holds another tree's copy): positions bitwise those of the
// scalar twin's binary walk.
TEST(MeshStageCache, WideTreeKeptBetweenCallsGivesTheScalarResultBitwise) {
  MeshTreeCache cache;
  for (MeshMotion motion : {MeshMotion::kStatic, MeshMotion::kDeforming}) {
    MeshScene s;
    MeshData m = sphereMesh(1.0f, 14 + static_cast<int>(motion), 20);  // another tree per motion
    m.motion = motion;
    if (motion == MeshMotion::kDeforming) m.prevVertices = m.vertices;
    m.surface.thickness = 0.04f;
    s.meshes.push_back(m);
    std::mt19937 rng(51);
    std::uniform_real_distribution<float> u(-1.3f, 1.3f);
    for (int i = 0; i < 2000; ++i) {
      const Float4 p = p4(u(rng), u(rng), u(rng));
      s.addParticle(p4(p.x * 1.3f, p.y * 1.3f, p.z * 1.3f), p);
    }
    const uint32_t n = static_cast<uint32_t>(m.indices.size() / 3);
    OwnedTree tree(n);
    for (int step = 0; step < 3; ++step) {
      for (bool continuous : {false, true}) {
        if (motion == MeshMotion::kDeforming) {
          for (size_t v = 0; v < s.meshes[0].vertices.size(); ++v) {
            s.meshes[0].prevVertices[v] = s.meshes[0].vertices[v];
            s.meshes[0].vertices[v].x += 0.05f;
          }
        }
        s.settings.continuous = continuous;
        const TwinRuns r = runScalarAndCachedSimd(s, tree, cache);
        const MeshScene &scalar = r.scalar, &simd = r.simd;
        const MeshCollisionDebug &wantDebug = r.want, &gotDebug = r.got;
        EXPECT_EQ(cache.triangles, n);
        EXPECT_FALSE(cache.bytes.empty());
        EXPECT_EQ(0, std::memcmp(simd.particles.data(), scalar.particles.data(), s.particles.size() * sizeof(Float4)))
            << "motion " << static_cast<int>(motion) << " step " << step << " continuous " << continuous;
        EXPECT_EQ(gotDebug.lastTriangle, wantDebug.lastTriangle);
        EXPECT_GT(std::count_if(gotDebug.contacts.begin(), gotDebug.contacts.end(), [](uint32_t c) { return c > 0; }),
                  100);
      }
    }
  }
}

// The SIMD twin's proximity walk skips boxes farther than the largest thickness less the best
// penetration: with a thin sphere, its duplicate (exact ties: the smaller triangle wins) and a
// thicker, larger sphere around them, particles nearer the thin spheres take the thick one (its
// larger penetration) and every answer is the scalar twin's, bitwise. The thick sphere is fine
// enough (over 2^19 triangles) that the SIMD twin takes that walk.
TEST(MeshStageCache, WideWalkSkipsOnlyBoxesThatCannotHoldABetterTriangle) {
  MeshScene s;
  MeshData thin = sphereMesh(1.0f, 24, 32);
  thin.surface.thickness = 0.02f;
  MeshData thick = sphereMesh(1.05f, 400, 660);  // over 2^19 triangles in all: the walk that skips
  thick.surface.thickness = 0.2f;
  s.meshes = {thin, thin, thick};
  const uint32_t thinTriangles = static_cast<uint32_t>(thin.indices.size() / 3);
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), radius(0.97f, 1.09f);
  std::vector<float> radii;
  while (s.particles.size() < 3000) {
    const float x = u(rng), y = u(rng), z = u(rng), len = std::sqrt(x * x + y * y + z * z);
    if (len < 0.1f || len > 1.0f) continue;
    const float r = radius(rng) / len;
    s.addParticle(p4(x * r * 1.1f, y * r * 1.1f, z * r * 1.1f), p4(x * r, y * r, z * r));
    radii.push_back(r * len);
  }
  uint32_t total = 0;
  for (const MeshData& m : s.meshes) total += static_cast<uint32_t>(m.indices.size() / 3);
  ASSERT_GE(total, 1u << 19);  // MeshKernel::kPruneMinTriangles (src/cpu/collide_meshes.cpp)
  OwnedTree tree(total);
  MeshTreeCache cache;
  const TwinRuns r = runScalarAndCachedSimd(s, tree, cache);
  const MeshScene &scalar = r.scalar, &simd = r.simd;
  const MeshCollisionDebug &wantDebug = r.want, &gotDebug = r.got;
  EXPECT_EQ(0, std::memcmp(simd.particles.data(), scalar.particles.data(), s.particles.size() * sizeof(Float4)));
  EXPECT_EQ(0, std::memcmp(simd.prevParticles.data(), scalar.prevParticles.data(),
                           s.prevParticles.size() * sizeof(Float4)));
  EXPECT_EQ(gotDebug.lastTriangle, wantDebug.lastTriangle);
  EXPECT_EQ(gotDebug.contacts, wantDebug.contacts);
  uint32_t thickNearerThin = 0, duplicate = 0;
  for (size_t i = 0; i < radii.size(); ++i) {
    const uint32_t t = gotDebug.lastTriangle[i];
    if (t == kBvhNone) continue;
    if (t >= thinTriangles && t < 2 * thinTriangles) ++duplicate;
    if (t >= 2 * thinTriangles && std::fabs(radii[i] - 1.0f) < std::fabs(radii[i] - 1.05f)) ++thickNearerThin;
  }
  EXPECT_GT(thickNearerThin, 300u);  // the bound is the largest thickness, not the nearest mesh's
  EXPECT_EQ(duplicate, 0u);          // ties with the duplicate go to the first mesh's triangles
}

INSTANTIATE_TEST_SUITE_P(Backends, MeshStage, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
