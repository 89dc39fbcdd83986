// BVH test helpers: meshes (random soups, slivers, duplicates, all-equal centroids), a tree holder
// that makes a BvhInput, and the structural check every test tree goes through.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "vkcollide/bvh.h"

namespace vkc::test {

struct BvhMesh {
  std::vector<Float4> vertices;
  std::vector<Float4> prevVertices;  // empty: not swept
  std::vector<uint32_t> indices;
  uint32_t verticesPerPrimitive = 3;
  uint32_t primitiveCount() const { return static_cast<uint32_t>(indices.size() / verticesPerPrimitive); }
};

// The outputs of one build, sized for a mesh.
struct BvhTree {
  std::vector<BvhNode> nodes;
  std::vector<Aabb> primitiveBoxes;
  std::vector<uint32_t> leafParents;

  explicit BvhTree(uint32_t primitiveCount = 0)
      : nodes(primitiveCount ? bvhNodeCount(primitiveCount) : 0), primitiveBoxes(primitiveCount),
        leafParents(primitiveCount) {}
  BvhInput input(const BvhMesh& m) {
    return BvhInput{m.vertices, m.prevVertices, m.indices, m.verticesPerPrimitive, nodes, primitiveBoxes, leafParents};
  }
};

// Triangles (or segments / tetrahedra) with random corners in [-scale, scale]^3 (a soup): `vertexCount`
// vertices, each primitive picks random vertex indices (so duplicates and degenerate primitives occur).
BvhMesh randomSoup(uint32_t primitiveCount, uint32_t vertexCount, uint32_t seed, float scale = 10.0f,
                   uint32_t verticesPerPrimitive = 3);
// Small triangles around random centres (a realistic mesh-like distribution of boxes).
BvhMesh randomSmallTriangles(uint32_t primitiveCount, uint32_t seed);

// Bitwise equality of two trees (every byte of every array).
::testing::AssertionResult sameTree(const BvhTree& a, const BvhTree& b);

// Structure of a built or refit tree for `mesh`: every primitive's box is its vertices' box (swept
// with prevVertices); every primitive in exactly one leaf; parents and leafParents match the
// children; every node reachable from the root, depth <= kBvhMaxDepth; every node's box is exactly
// the union of its children's; pads and w components are 0; with `checkOrder`, the leaves from left
// to right are ordered by (Morton code, primitive index) (codes recomputed from the boxes with the
// shared functions).
::testing::AssertionResult validTree(const BvhMesh& mesh, const BvhTree& tree, bool checkOrder = true);

}  // namespace vkc::test
