// Meshes and scenes for the mesh stage's tests (include/vkcollide/collide_meshes.h): analytic
// shapes (floor, thin closed box, V-shaped crack, sphere, paddle) and a holder that owns the arrays
// behind a MeshCollisionInput.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "vkcollide/collide_meshes.h"

namespace vkc::test::meshstage {

struct MeshData {
  std::vector<Float4> vertices;
  std::vector<Float4> prevVertices;
  std::vector<uint32_t> indices;
  MeshMotion motion = MeshMotion::kStatic;
  RigidTransform transform, prevTransform;
  MeshSurface surface;

  CollisionMesh view() const {
    CollisionMesh m;
    m.vertices = vertices;
    m.prevVertices = prevVertices;
    m.indices = indices;
    m.motion = motion;
    m.transform = transform;
    m.prevTransform = prevTransform;
    m.surface = surface;
    return m;
  }
  uint32_t addVertex(float x, float y, float z) {
    vertices.push_back({x, y, z, 0});
    return static_cast<uint32_t>(vertices.size() - 1);
  }
  void addTriangle(uint32_t a, uint32_t b, uint32_t c) { indices.insert(indices.end(), {a, b, c}); }
  void addQuad(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {  // a b c d counter-clockwise
    addTriangle(a, b, c);
    addTriangle(a, c, d);
  }
};

// The square [-h, h]^2 at height y, normal +y (two triangles).
inline MeshData floorMesh(float h, float y = 0.0f) {
  MeshData m;
  const uint32_t a = m.addVertex(-h, y, -h), b = m.addVertex(-h, y, h), c = m.addVertex(h, y, h),
                 d = m.addVertex(h, y, -h);
  m.addQuad(a, b, c, d);
  return m;
}

// The closed box [lo, hi] (12 triangles, normals outwards).
inline MeshData boxMesh(Float4 lo, Float4 hi) {
  MeshData m;
  for (int i = 0; i < 8; ++i) m.addVertex(i & 1 ? hi.x : lo.x, i & 2 ? hi.y : lo.y, i & 4 ? hi.z : lo.z);
  const uint32_t f[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
  for (const auto& q : f) m.addQuad(q[0], q[1], q[2], q[3]);
  return m;
}

// A V-shaped crack along z: two walls from the bottom line (0, 0, z) up to x = +-halfWidth at y = 1.
inline MeshData crackMesh(float halfWidth, float depthZ) {
  MeshData m;
  const uint32_t b0 = m.addVertex(0, 0, -depthZ), b1 = m.addVertex(0, 0, depthZ);
  const uint32_t l0 = m.addVertex(-halfWidth, 1, -depthZ), l1 = m.addVertex(-halfWidth, 1, depthZ);
  const uint32_t r0 = m.addVertex(halfWidth, 1, -depthZ), r1 = m.addVertex(halfWidth, 1, depthZ);
  m.addQuad(b0, b1, l1, l0);
  m.addQuad(b0, r0, r1, b1);
  return m;
}

// A UV sphere of radius r about the origin (outward normals), `rings` x `segments`.
inline MeshData sphereMesh(float r, int rings, int segments) {
  MeshData m;
  const float pi = 3.14159265f;
  const uint32_t top = m.addVertex(0, r, 0);
  for (int i = 1; i < rings; ++i) {
    const float th = pi * static_cast<float>(i) / static_cast<float>(rings);
    for (int j = 0; j < segments; ++j) {
      const float ph = 2 * pi * static_cast<float>(j) / static_cast<float>(segments);
      m.addVertex(r * std::sin(th) * std::cos(ph), r * std::cos(th), r * std::sin(th) * std::sin(ph));
    }
  }
  const uint32_t bottom = m.addVertex(0, -r, 0);
  auto ring = [&](int i, int j) { return 1u + static_cast<uint32_t>((i - 1) * segments + (j % segments)); };
  for (int j = 0; j < segments; ++j) m.addTriangle(top, ring(1, j + 1), ring(1, j));
  for (int i = 1; i + 1 < rings; ++i) {
    for (int j = 0; j < segments; ++j) m.addQuad(ring(i, j), ring(i, j + 1), ring(i + 1, j + 1), ring(i + 1, j));
  }
  for (int j = 0; j < segments; ++j) m.addTriangle(bottom, ring(rings - 1, j), ring(rings - 1, j + 1));
  return m;
}

// Particles of one cloth (or several) and the meshes, owning every array of a MeshCollisionInput.
struct MeshScene {
  std::vector<Float4> particles, prevParticles;
  std::vector<ClothRange> cloths;
  std::vector<std::vector<uint32_t>> clothMeshLists;
  std::vector<ClothMeshes> clothMeshes;
  std::vector<MeshData> meshes;
  std::vector<CollisionMesh> meshViews;
  MeshCollisionSettings settings;

  // One particle per call, in cloth 0 (created on first use, listing every mesh).
  uint32_t addParticle(Float4 prev, Float4 cur) {
    prevParticles.push_back(prev);
    particles.push_back(cur);
    return static_cast<uint32_t>(particles.size() - 1);
  }
  // The input (spans into this scene). Without cloths: one cloth of all particles listing all meshes.
  MeshCollisionInput input() {
    if (cloths.empty()) {
      cloths.push_back({0, static_cast<uint32_t>(particles.size())});
      clothMeshLists.emplace_back();
      for (uint32_t m = 0; m < meshes.size(); ++m) clothMeshLists[0].push_back(m);
    }
    clothMeshes.clear();
    for (const auto& l : clothMeshLists) clothMeshes.push_back(ClothMeshes{l});
    meshViews.clear();
    for (const MeshData& m : meshes) meshViews.push_back(m.view());
    MeshCollisionInput in;
    in.particles = particles;
    in.prevParticles = prevParticles;
    in.cloths = cloths;
    in.clothMeshes = clothMeshes;
    in.meshes = meshViews;
    in.settings = settings;
    return in;
  }
};

inline Float4 p4(float x, float y, float z, float w = 1.0f) { return Float4{x, y, z, w}; }

// A mesh tree kept by the caller between calls (MeshTree's spans and `built` flag).
struct OwnedTree {
  std::vector<BvhNode> nodes;
  std::vector<Aabb> boxes;
  std::vector<uint32_t> parents;
  bool built = false;
  explicit OwnedTree(uint32_t triangles) : nodes(bvhNodeCount(triangles)), boxes(triangles), parents(triangles) {}
  MeshTree view(MeshTreeCache* cache = nullptr) {
    return MeshTree{nodes, boxes, parents, MeshTreeUpdate::kAuto, &built, cache};
  }
};

}  // namespace vkc::test::meshstage
