// The CPU twin of the mesh stage (shaders/collide_meshes.comp): the combined world vertices, the
// mesh tree built or refit by the BVH stage's CPU twin, and per particle the shader's own kernel
// (shared/collide_meshes_kernel.h, included into MeshKernel below) over host arrays.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu/bvh.h"
#include "cpu/executor.h"
#include "scene/mesh_layout.h"
#include "scene/validate.h"
#include "shared/bvh.h"
#include "util/try.h"
#include "vkcollide/collide_meshes.h"

namespace vkc::gpu {
namespace {

// 4 float lanes of the compiler's generic vectors (GCC and Clang: SSE on x86-64's baseline, NEON on
// arm64), for the wide walk's box tests: comparisons only and a distance used as a cull, so that no
// result depends on them (the baseline Highway target of this build is scalar).
typedef float Float4Lanes __attribute__((vector_size(16)));
typedef int32_t Int4Lanes __attribute__((vector_size(16)));
inline Float4Lanes lanes4(float x) { return Float4Lanes{x, x, x, x}; }
inline Float4Lanes loadLanes4(const float* p) {
  Float4Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
// max(a, b) per lane as std::max(a, b) (b when a < b is false... i.e. a unless a < b).
inline Float4Lanes maxLanes4(Float4Lanes a, Float4Lanes b) {
  const Int4Lanes takeB = a < b;
  Int4Lanes ai, bi;
  std::memcpy(&ai, &a, sizeof a);
  std::memcpy(&bi, &b, sizeof b);
  const Int4Lanes r = (bi & takeB) | (ai & ~takeB);
  Float4Lanes out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}
inline uint32_t maskBits4(Int4Lanes m) {
  return (m[0] != 0 ? 1u : 0u) | (m[1] != 0 ? 2u : 0u) | (m[2] != 0 ? 4u : 0u) | (m[3] != 0 ? 8u : 0u);
}

// A node of the SIMD twin's 4-wide tree (MeshTreeCache): its children's boxes side by side (empty
// slots: lo = +inf, hi = -inf) and references (a wide node's index, kBvhLeafBit | leaf slot, or
// kBvhNone).
struct WideNode {
  float lo[3][4];
  float hi[3][4];
  uint32_t child[4];
};
static_assert(sizeof(WideNode) == 112);

// A leaf slot of the 4-wide tree: its triangle and a copy of the triangle's world vertices at the
// iteration's end (meshTriangle(t, 1u, ...)) as of the build or refit that made the copy. The slots
// of a node's leaf children are consecutive, in the order the walk reaches them, so a query reads
// its triangles from a few cache lines instead of an index and three vertices each.
struct WideLeaf {
  float a[3], b[3], c[3];
  uint32_t triangle;
};
static_assert(sizeof(WideLeaf) == 40);

// The 4-wide tree as kept in MeshTreeCache::bytes: this header, the nodes, then the leaf slots.
struct WideHeader {
  uint32_t nodeCount, leafCount, pad0, pad1;
};
static_assert(sizeof(WideHeader) == 16);

struct WideTree {
  std::vector<WideNode> nodes;
  std::vector<WideLeaf> leaves;
};

// The kernel's accessors over the caller's arrays: no per-call copy of a static or deforming mesh
// (only rigid meshes get world positions per call). A combined vertex or triangle index finds its
// mesh by a binary search over the meshes' first vertices / triangles; the combined vertex index of a
// triangle's corner is its mesh's first vertex + the caller's index.
struct MeshKernel {
  const BvhNode* nodes = nullptr;
  const Aabb* leafBoxes = nullptr;
  const CollisionMesh* input = nullptr;          // the caller's meshes
  const MeshGpu* meshes = nullptr;
  const uint32_t* firstTriangles = nullptr;      // per mesh, ascending
  const uint32_t* firstVertices = nullptr;       // per mesh, ascending
  uint32_t meshCount = 0;
  const std::vector<vec4>* rigidWorld = nullptr;  // per mesh: rigid meshes' world vertices, start then end
  const RigidSweep* sweeps = nullptr;
  const uint32_t* clothWords = nullptr;
  float rigidChord = 0.0f;

  static uint32_t owner(const uint32_t* first, uint32_t count, uint32_t x) {
    return static_cast<uint32_t>(std::upper_bound(first, first + count, x) - first) - 1u;
  }
  static vec3 xyz(const Float4& f) { return vec3(f.x, f.y, f.z); }

  BvhNode treeNode(uint i) const { return nodes[i]; }
  Aabb treeLeafBox(uint t) const { return leafBoxes[t]; }
  uint triangleMesh(uint t) const { return meshCount == 1 ? 0u : owner(firstTriangles, meshCount, t); }
  uint triangleVertex(uint k) const {
    const uint m = triangleMesh(k / 3u);
    return firstVertices[m] + input[m].indices[k - 3u * firstTriangles[m]];
  }
  MeshGpu meshAt(uint m) const { return meshes[m]; }
  vec3 worldVertex(uint v, uint atEnd) const {
    const uint m = meshCount == 1 ? 0u : owner(firstVertices, meshCount, v);
    const uint local = v - firstVertices[m];
    const CollisionMesh& mesh = input[m];
    if (mesh.motion == MeshMotion::kRigid) {
      const std::vector<vec4>& w = rigidWorld[m];
      return vec3(w[atEnd != 0u ? mesh.vertices.size() + local : local]);
    }
    if (mesh.motion == MeshMotion::kDeforming && atEnd == 0u) return xyz(mesh.prevVertices[local]);
    return xyz(mesh.vertices[local]);
  }
  vec3 localVertex(uint v) const {
    const uint m = meshCount == 1 ? 0u : owner(firstVertices, meshCount, v);
    return xyz(input[m].vertices[v - firstVertices[m]]);
  }
  const RigidSweep& sweepAt(uint s) const { return sweeps[s]; }
  uint clothMeshWord(uint w) const { return clothWords[w]; }
  float rigidReach() const { return rigidChord; }

  // The kernel's meshTriangle, except that the end vertices (and a static mesh's start vertices, the
  // same) of the SIMD walk's last answer come from its leaf slot: the copy collapseTree made with
  // this function, so the same values, without the cold reads of the index and vertex arrays.
  const WideLeaf* answerLeaf = nullptr;  // the leaf slot of the SIMD walk's last answer, if any
  void meshTriangle(uint t, uint atEnd, vec3& a, vec3& b, vec3& c) const {
    if (answerLeaf != nullptr && answerLeaf->triangle == t &&
        (atEnd != 0u || input[triangleMesh(t)].motion == MeshMotion::kStatic)) {
      const WideLeaf& l = *answerLeaf;
      a = vec3(l.a[0], l.a[1], l.a[2]), b = vec3(l.b[0], l.b[1], l.b[2]), c = vec3(l.c[0], l.c[1], l.c[2]);
      return;
    }
    a = worldVertex(triangleVertex(3u * t), atEnd);
    b = worldVertex(triangleVertex(3u * t + 1u), atEnd);
    c = worldVertex(triangleVertex(3u * t + 2u), atEnd);
  }
#define VKC_MESH_OWN_TRIANGLE
#include "shared/collide_meshes_kernel.h"
#undef VKC_MESH_OWN_TRIANGLE

  // The SIMD twin's walk of the 4-wide tree: per node, the 4 child boxes against the query box in one
  // vector comparison (and, for proximity, their distances to the point in one vector), then the
  // leaves' triangles from their slots (meshTestTriangleAt on the slot's copy of meshTriangle(t, 1u),
  // meshQueryBetter: the binary walk's tests). A leaf is a candidate iff its box overlaps the query
  // box in both walks (every ancestor's box holds it), so both pick the same triangle and hit, bit
  // for bit.
  // Proximity queries also skip the boxes that cannot hold a better triangle (as a closest-point
  // query shrinks its radius): a candidate beats the best only when its computed penetration is at
  // least the best's, i.e. its computed distance is at most maxThickness - best penetration (plus a
  // rounding). triClosestPoint's point is within a few ulps of the coordinates' magnitude M of a
  // point of the triangle, which every box on its path holds, so a box farther than that bound plus
  // `slack` (1e-5 of M and maxThickness: hundreds of ulps) holds no such candidate. Children
  // are visited nearest first so that the bound shrinks early; the answer does not depend on the
  // order (meshQueryBetter is a total order). Before any hit the bound is maxThickness (a hit's
  // distance is below its mesh's thickness): the query box's corners hold no candidate.
  // With the distances in vector lanes this pays at every mesh size of bench_collide_meshes (20k to
  // 1M triangles); with them computed per child it was slower below about 500k triangles.
  const WideNode* wide = nullptr;
  const WideLeaf* wideLeaves = nullptr;
  float treeMagnitude = 0.0f;  // the largest coordinate of the root's box (set with wide)
  uint wideQuery(uint mode, uint firstWord, vec3 lo, vec3 hi, vec3 p, float tStart, vec3 to, uint flags,
                 float maxThickness, MeshHit& best) {
    best = meshNoHit();
    uint bestT = kMeshNone;
    answerLeaf = nullptr;
    const WideLeaf* bestLeaf = nullptr;
    const bool prune = mode == kMeshQueryProximity;
    float cut2 = INFINITY;  // proximity: boxes farther than sqrt(cut2) from p hold no better triangle
    float slack = 0.0f;
    if (prune) {
      const float m = std::max(maxAbs3(p), treeMagnitude);
      slack = 1e-5f * (m + maxThickness);
      const float r = maxThickness + slack;  // a hit is closer than its mesh's thickness
      cut2 = r * r * 1.0001f;
    }
    struct Lanes {
      Float4Lanes x, y, z;
    };
    const Lanes qlo{lanes4(lo.x), lanes4(lo.y), lanes4(lo.z)};
    const Lanes qhi{lanes4(hi.x), lanes4(hi.y), lanes4(hi.z)};
    const Lanes qp{lanes4(p.x), lanes4(p.y), lanes4(p.z)};
    constexpr uint kStack = 3u * kBvhMaxDepth + 4u;  // each level leaves at most 3 siblings on the stack
    uint stack[kStack];
    float stackD2[kStack];
    uint top = 1u;
    stack[0] = 0u;
    stackD2[0] = 0.0f;
    while (top > 0u) {
      --top;
      if (stackD2[top] > cut2) continue;
      const WideNode& n = wide[stack[top]];
      // The 4 child boxes in the lanes of one vector: overlap with the query box and (pruning) the
      // squared distance to p (only a cull: the answer does not depend on it).
      const Float4Lanes loX = loadLanes4(n.lo[0]), loY = loadLanes4(n.lo[1]), loZ = loadLanes4(n.lo[2]);
      const Float4Lanes hiX = loadLanes4(n.hi[0]), hiY = loadLanes4(n.hi[1]), hiZ = loadLanes4(n.hi[2]);
      Int4Lanes overlap = (qlo.x <= hiX) & (qlo.y <= hiY) & (qlo.z <= hiZ) & (loX <= qhi.x) & (loY <= qhi.y) &
                          (loZ <= qhi.z);
      float d2[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      if (prune) {
        const Float4Lanes zero = lanes4(0.0f);
        const Float4Lanes dx = maxLanes4(maxLanes4(loX - qp.x, qp.x - hiX), zero);
        const Float4Lanes dy = maxLanes4(maxLanes4(loY - qp.y, qp.y - hiY), zero);
        const Float4Lanes dz = maxLanes4(maxLanes4(loZ - qp.z, qp.z - hiZ), zero);
        const Float4Lanes dd = dx * dx + dy * dy + dz * dz;
        overlap &= ~(dd > lanes4(cut2));  // drops the children too far to hold a better triangle
        std::memcpy(d2, &dd, sizeof d2);
      }
      const uint32_t bits = maskBits4(overlap);
      bool hit4[4];
      for (int k = 0; k < 4; ++k) hit4[k] = ((bits >> k) & 1u) != 0u && n.child[k] != kBvhNone;
      // The walk waits on memory (a large tree's nodes and leaf slots are rarely cached): fetch
      // every overlapping child's node or leaf slot now, so that their misses overlap.
      for (int k = 0; k < 4; ++k) {
        if (!hit4[k]) continue;
        const uint c = n.child[k];
        const char* at = (c & kBvhLeafBit) != 0u ? reinterpret_cast<const char*>(&wideLeaves[c & ~kBvhLeafBit])
                                                 : reinterpret_cast<const char*>(&wide[c]);
        __builtin_prefetch(at);  // a node (112 bytes) spans up to 3 cache lines, a leaf slot 2
        __builtin_prefetch(at + 64);
        __builtin_prefetch(at + 111);
      }
      // The overlapping children, nearest first (insertion sort of at most 4; ties keep slot order).
      int order[4];
      int count = 0;
      for (int k = 0; k < 4; ++k) {
        if (!hit4[k]) continue;
        int at = count++;
        while (prune && at > 0 && d2[order[at - 1]] > d2[k]) {
          order[at] = order[at - 1];
          --at;
        }
        order[at] = k;
      }
      // Leaves first, nearest first (they shrink the bound); then the internal children pushed
      // farthest first, so that the nearest is popped next.
      for (int i = 0; i < count; ++i) {
        const int k = order[i];
        const uint c = n.child[k];
        if ((c & kBvhLeafBit) == 0u || d2[k] > cut2) continue;
        const WideLeaf& leaf = wideLeaves[c & ~kBvhLeafBit];
        const uint t = leaf.triangle;
        const uint m = triangleMesh(t);
        if (!meshListed(firstWord, m)) continue;
        MeshHit h;
        const vec3 a(leaf.a[0], leaf.a[1], leaf.a[2]), b(leaf.b[0], leaf.b[1], leaf.b[2]),
            cc(leaf.c[0], leaf.c[1], leaf.c[2]);
        if (meshTestTriangleAt(mode, t, meshAt(m), a, b, cc, p, tStart, to, flags, h) &&
            meshQueryBetter(mode, h, t, best, bestT)) {
          best = h;
          bestT = t;
          bestLeaf = &leaf;
          if (prune) {
            const float r = (maxThickness - best.bary.w) + slack;
            cut2 = r * r * 1.0001f;
          }
        }
      }
      for (int i = count - 1; i >= 0; --i) {
        const int k = order[i];
        const uint c = n.child[k];
        if ((c & kBvhLeafBit) != 0u || d2[k] > cut2) continue;
        if (top < kStack) {
          stack[top] = c;
          stackD2[top] = d2[k];
          ++top;
        }
      }
    }
    answerLeaf = bestLeaf;
    return bestT;
  }

  // meshCollideParticle with the wide walk for every query.
  bool wideCollideParticle(MeshCollidePush pc, uint firstWord, vec4 prev4, vec4 cur4, vec3& newPrev, vec3& newCur,
                           uvec2& info) {
    MeshParticle q = meshParticleBegin(pc, prev4, cur4);
    for (uint step = 0u; step <= pc.maxBounces && q.done == 0u; ++step) {
      uint mode, flags;
      vec3 lo, hi, from, to;
      float tStart;
      meshParticleQuery(pc, q, mode, lo, hi, from, tStart, to, flags);
      MeshHit hit;
      const uint t = wideQuery(mode, firstWord, lo, hi, from, tStart, to, flags, pc.maxThickness, hit);
      meshParticleAnswer(pc, q, t, hit);
    }
    return meshParticleEnd(pc, q, newPrev, newCur, info);
  }
};

// The 4-wide copy of a valid binary tree: each wide node takes a binary node's children and opens
// the internal child of largest box (surface area; the first on ties) until it has 4 children or
// only leaves. Node boxes are exact unions, so every wide child's box is its binary node's. Leaf
// slots in the order the nodes are made, each with its triangle's end vertices from the kernel k.
void collapseTree(std::span<const vkc::BvhNode> nodes, std::span<const vkc::Aabb> leafBoxes, MeshKernel& kernel,
                  WideTree& tree) {
  std::vector<WideNode>& out = tree.nodes;
  out.clear();
  tree.leaves.clear();
  out.push_back(WideNode{});
  struct Item {
    uint32_t binary, wideIndex;
  };
  std::vector<Item> work{{0u, 0u}};
  auto area = [&](uint32_t ref) {
    const vkc::BvhNode& b = nodes[ref];
    const float dx = b.hi.x - b.lo.x, dy = b.hi.y - b.lo.y, dz = b.hi.z - b.lo.z;
    return dx * dy + dy * dz + dz * dx;
  };
  while (!work.empty()) {
    const Item it = work.back();
    work.pop_back();
    uint32_t kids[4];
    uint32_t count = 0;
    for (uint32_t c : {nodes[it.binary].left, nodes[it.binary].right}) {
      if (c != kBvhNone) kids[count++] = c;
    }
    while (count < 4) {
      int open = -1;
      for (uint32_t k = 0; k < count; ++k) {
        if ((kids[k] & kBvhLeafBit) != 0u) continue;
        if (open < 0 || area(kids[k]) > area(kids[open])) open = static_cast<int>(k);
      }
      if (open < 0) break;
      const vkc::BvhNode& b = nodes[kids[open]];
      kids[open] = b.left;
      if (b.right != kBvhNone) kids[count++] = b.right;
    }
    WideNode w;
    for (uint32_t k = 0; k < 4; ++k) {
      for (int a = 0; a < 3; ++a) w.lo[a][k] = INFINITY, w.hi[a][k] = -INFINITY;
      w.child[k] = kBvhNone;
      if (k >= count) continue;
      const uint32_t c = kids[k];
      const bool leaf = (c & kBvhLeafBit) != 0u;
      const vkc::Float4 lo = leaf ? leafBoxes[c & ~kBvhLeafBit].lo : nodes[c].lo;
      const vkc::Float4 hi = leaf ? leafBoxes[c & ~kBvhLeafBit].hi : nodes[c].hi;
      w.lo[0][k] = lo.x, w.lo[1][k] = lo.y, w.lo[2][k] = lo.z;
      w.hi[0][k] = hi.x, w.hi[1][k] = hi.y, w.hi[2][k] = hi.z;
      if (leaf) {
        w.child[k] = kBvhLeafBit | static_cast<uint32_t>(tree.leaves.size());
        WideLeaf l;
        vec3 a, b, cc;
        kernel.meshTriangle(c & ~kBvhLeafBit, 1u, a, b, cc);
        l.a[0] = a.x, l.a[1] = a.y, l.a[2] = a.z;
        l.b[0] = b.x, l.b[1] = b.y, l.b[2] = b.z;
        l.c[0] = cc.x, l.c[1] = cc.y, l.c[2] = cc.z;
        l.triangle = c & ~kBvhLeafBit;
        tree.leaves.push_back(l);
      } else {
        w.child[k] = static_cast<uint32_t>(out.size());
        work.push_back({c, static_cast<uint32_t>(out.size())});
        out.push_back(WideNode{});
      }
    }
    out[it.wideIndex] = w;
  }
}

}  // namespace
}  // namespace vkc::gpu

namespace vkc {
namespace {

Error invalid(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message}; }

std::vector<MeshLayout> layoutsOf(std::span<const CollisionMesh> meshes) {
  std::vector<MeshLayout> layouts(meshes.size());
  for (size_t m = 0; m < meshes.size(); ++m) {
    layouts[m] = MeshLayout{static_cast<uint32_t>(meshes[m].vertices.size()),
                            static_cast<uint32_t>(meshes[m].indices.size() / 3), meshes[m].motion, 16};
  }
  return layouts;
}

Status validateMeshValues(std::span<const CollisionMesh> meshes) {
  for (size_t m = 0; m < meshes.size(); ++m) {
    const CollisionMesh& mesh = meshes[m];
    const std::string name = "meshes[" + std::to_string(m) + "]";
    if (mesh.vertices.empty()) return invalid(name + ".vertices is empty: a mesh needs at least one vertex");
    if (mesh.indices.empty()) return invalid(name + ".indices is empty: an empty mesh cannot collide");
    if (mesh.indices.size() % 3 != 0) {
      return invalid(name + ".indices holds " + std::to_string(mesh.indices.size()) +
                     " elements: not a multiple of 3 (one triple per triangle)");
    }
    for (size_t k = 0; k < mesh.indices.size(); ++k) {
      if (mesh.indices[k] >= mesh.vertices.size()) {
        return invalid(name + ".indices[" + std::to_string(k) + "] is " + std::to_string(mesh.indices[k]) +
                       "; the mesh has " + std::to_string(mesh.vertices.size()) + " vertices");
      }
    }
    auto checkFinite = [&](std::span<const Float4> v, const char* what) -> Status {
      for (size_t i = 0; i < v.size(); ++i) {
        const float c[3] = {v[i].x, v[i].y, v[i].z};
        for (int k = 0; k < 3; ++k) {
          if (!std::isfinite(c[k])) {
            return invalid(name + "." + what + "[" + std::to_string(i) + "]." + "xyz"[k] + " is " +
                           std::to_string(c[k]) + ": vertex positions must be finite");
          }
        }
      }
      return {};
    };
    VKC_TRY(checkFinite(mesh.vertices, "vertices"));
    if (mesh.motion == MeshMotion::kDeforming) {
      if (mesh.prevVertices.size() != mesh.vertices.size()) {
        return invalid(name + ".prevVertices holds " + std::to_string(mesh.prevVertices.size()) +
                       " vertices; a deforming mesh needs as many as vertices (" +
                       std::to_string(mesh.vertices.size()) + ")");
      }
      VKC_TRY(checkFinite(mesh.prevVertices, "prevVertices"));
    } else if (!mesh.prevVertices.empty()) {
      return invalid(name + ".prevVertices is not empty: only a deforming mesh has previous vertices");
    }
    VKC_TRY(detail::validateMeshMotionValues(name, mesh.motion, mesh.transform, mesh.prevTransform, mesh.surface));
  }
  return {};
}

// The meshes' indices made global (the mesh's first combined vertex + the index), mesh after mesh:
// the index buffer of the mesh tree (the shader's gather pass does the same on a build).
std::vector<uint32_t> combinedIndices(std::span<const CollisionMesh> meshes) {
  std::vector<uint32_t> indices;
  uint32_t base = 0;
  for (const CollisionMesh& m : meshes) {
    for (uint32_t i : m.indices) indices.push_back(base + i);
    base += static_cast<uint32_t>(m.vertices.size());
  }
  return indices;
}

Status validateTree(const MeshTree& tree, uint32_t triangles) {
  const bool none = tree.nodes.empty() && tree.primitiveBoxes.empty() && tree.leafParents.empty();
  if (none) return {};
  if (tree.nodes.size() != bvhNodeCount(triangles) || tree.primitiveBoxes.size() != triangles ||
      tree.leafParents.size() != triangles) {
    return Error{ErrorCode::kBufferTooSmall,
                 "tree holds " + std::to_string(tree.nodes.size()) + " nodes, " +
                     std::to_string(tree.primitiveBoxes.size()) + " boxes and " +
                     std::to_string(tree.leafParents.size()) + " leaf parents; the meshes' " +
                     std::to_string(triangles) + " triangles need " + std::to_string(bvhNodeCount(triangles)) +
                     ", " + std::to_string(triangles) + " and " + std::to_string(triangles)};
  }
  if (tree.update == MeshTreeUpdate::kAuto && tree.built == nullptr) {
    return invalid("tree.built is null: MeshTreeUpdate::kAuto needs the flag that says whether the spans hold a tree");
  }
  if (static_cast<uint32_t>(tree.update) > static_cast<uint32_t>(MeshTreeUpdate::kRefit)) {
    return invalid("tree.update is " + std::to_string(static_cast<uint32_t>(tree.update)) + ": not a MeshTreeUpdate");
  }
  return {};
}

}  // namespace

uint32_t meshTriangleCount(std::span<const CollisionMesh> meshes) {
  uint64_t n = 0;
  for (const CollisionMesh& m : meshes) n += m.indices.size() / 3;
  return n > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(n);
}

Status validate(const MeshCollisionInput& in) {
  if (in.prevParticles.size() != in.particles.size()) {
    return Error{ErrorCode::kBufferTooSmall, "prevParticles holds " + std::to_string(in.prevParticles.size()) +
                                                 " particles; particles holds " + std::to_string(in.particles.size())};
  }
  VKC_TRY(validateMeshValues(in.meshes));
  const std::vector<MeshLayout> layouts = layoutsOf(in.meshes);
  VKC_TRY(detail::validateMeshLayout(layouts, in.cloths, in.clothMeshes, in.particles.size()));
  VKC_TRY(detail::validateMeshSettings(in.settings));
  VKC_TRY(detail::validateParticles(in.particles, in.cloths, "particles"));
  VKC_TRY(detail::validateParticles(in.prevParticles, in.cloths, "prevParticles"));
  VKC_TRY(validateTree(in.tree, meshTriangleCount(in.meshes)));
  if (in.tree.update == MeshTreeUpdate::kRefit && !in.tree.nodes.empty()) {
    // The tree to refit must be one of these meshes' triangle count and a valid topology.
    const std::vector<uint32_t> idx = combinedIndices(in.meshes);
    std::vector<Float4> verts;
    for (const CollisionMesh& m : in.meshes) verts.insert(verts.end(), m.vertices.begin(), m.vertices.end());
    BvhInput b;
    b.vertices = verts;
    b.indices = idx;
    b.nodes = in.tree.nodes;
    b.primitiveBoxes = in.tree.primitiveBoxes;
    b.leafParents = in.tree.leafParents;
    Status s = validateRefit(b);
    if (!s.ok()) return invalid("tree (for a refit): " + s.message());
  }
  return {};
}

namespace {

// One iteration on par's threads: the tables and the tree on the calling thread, then the particles
// of the cloths (chunks of large cloths) in parallel. Every particle's result depends only on its own
// state, the meshes and the tree: bitwise the same on any thread count.
Status collideMeshesOn(detail::ParallelCall& par, const MeshCollisionInput& in, Backend backend,
                       MeshCollisionDebug* debug) {
  if (backend != Backend::kCpuScalar && backend != Backend::kCpuSimd) {
    return invalid("collideMeshesCpu runs kCpuScalar or kCpuSimd; use collideMeshes for kVulkan");
  }
  VKC_TRY(validate(in));
  const std::vector<MeshLayout> layouts = layoutsOf(in.meshes);
  detail::MeshTables tables = detail::makeMeshTables(layouts, in.cloths, in.clothMeshes, false);
  std::vector<MeshSurface> surfaces(in.meshes.size());
  std::vector<RigidTransform> transforms(in.meshes.size()), prevTransforms(in.meshes.size());
  for (size_t m = 0; m < in.meshes.size(); ++m) {
    surfaces[m] = in.meshes[m].surface;
    transforms[m] = in.meshes[m].transform;
    prevTransforms[m] = in.meshes[m].prevTransform;
  }
  const detail::MeshValues values = detail::setMeshValues(tables, surfaces, transforms, prevTransforms);
  const uint32_t meshCount = static_cast<uint32_t>(in.meshes.size());
  std::vector<uint32_t> firstTriangles(meshCount), firstVertices(meshCount);
  for (uint32_t m = 0; m < meshCount; ++m) {
    firstTriangles[m] = tables.meshes[m].firstTriangle;
    firstVertices[m] = tables.meshes[m].firstVertex;
  }

  // Rigid meshes: world positions at the iteration's start and end (the gather pass of the shader),
  // from the sweep's exact end transforms; the largest chord bound.
  std::vector<std::vector<gpu::vec4>> rigidWorld(meshCount);
  float chord = 0.0f;
  for (uint32_t m = 0; m < meshCount; ++m) {
    const CollisionMesh& mesh = in.meshes[m];
    if (mesh.motion != MeshMotion::kRigid) continue;
    const gpu::RigidSweep& s = values.sweeps[tables.meshes[m].sweep];
    const size_t nv = mesh.vertices.size();
    rigidWorld[m].resize(2 * nv);
    for (size_t v = 0; v < nv; ++v) {
      const gpu::vec3 x(mesh.vertices[v].x, mesh.vertices[v].y, mesh.vertices[v].z);
      rigidWorld[m][v] = gpu::vec4(gpu::quatRotate(s.rotation[0], x) + gpu::vec3(s.translation[0]), 0.0f);
      rigidWorld[m][nv + v] = gpu::vec4(gpu::quatRotate(s.rotation[gpu::kRigidMaxSteps], x) +
                                            gpu::vec3(s.translation[gpu::kRigidMaxSteps]),
                                        0.0f);
      chord = std::max(chord, gpu::rigidChordBound(s.angle.x, x));
    }
  }

  gpu::MeshKernel k;
  k.input = in.meshes.data();
  k.meshes = tables.meshes.data();
  k.firstTriangles = firstTriangles.data();
  k.firstVertices = firstVertices.data();
  k.meshCount = meshCount;
  k.rigidWorld = rigidWorld.data();
  k.sweeps = values.sweeps.data();
  k.clothWords = tables.clothMeshWords.data();
  k.rigidChord = chord;

  // The tree: the caller's (build, refit or keep) or one for this call.
  const uint32_t n = tables.triangleCount;
  std::vector<BvhNode> ownNodes;
  std::vector<Aabb> ownBoxes;
  std::vector<uint32_t> ownParents;
  MeshTree tree = in.tree;
  bool build = true, refit = false;
  if (tree.nodes.empty()) {
    ownNodes.resize(bvhNodeCount(n));
    ownBoxes.resize(n);
    ownParents.resize(n);
    tree.nodes = ownNodes;
    tree.primitiveBoxes = ownBoxes;
    tree.leafParents = ownParents;
  } else if (tree.update == MeshTreeUpdate::kRefit) {
    build = false;
    refit = true;
  } else if (tree.update == MeshTreeUpdate::kAuto && *tree.built) {
    build = false;
    refit = tables.anyMoving;
  }
  if (build || refit) {
    // The combined world vertices and indices of the BVH stage's input. Swept boxes when the path is
    // swept against moving meshes; the end positions otherwise.
    const bool swept = in.settings.continuous && tables.anyMoving;
    std::vector<Float4> endF(tables.vertexCount), startF(swept ? tables.vertexCount : 0);
    for (uint32_t v = 0; v < tables.vertexCount; ++v) {
      const gpu::vec3 e = k.worldVertex(v, 1u);
      endF[v] = Float4{e.x, e.y, e.z, 0.0f};
      if (swept) {
        const gpu::vec3 s = k.worldVertex(v, 0u);
        startF[v] = Float4{s.x, s.y, s.z, 0.0f};
      }
    }
    const std::vector<uint32_t> indices = combinedIndices(in.meshes);
    BvhInput b;
    b.vertices = endF;
    b.prevVertices = startF;
    b.indices = indices;
    b.verticesPerPrimitive = 3;
    b.nodes = tree.nodes;
    b.primitiveBoxes = tree.primitiveBoxes;
    b.leafParents = tree.leafParents;
    if (build) {
      VKC_TRY(buildBvhCpu(b, backend));
    } else if (in.tree.update == MeshTreeUpdate::kRefit) {
      cpu::refitBvhValidated(b);  // validate() checked this tree's topology (validateRefit)
    } else {
      VKC_TRY(refitBvhCpu(b, backend));  // kAuto: the caller's tree since our build, checked again
    }
    if (build && tree.built != nullptr) *tree.built = true;
  }
  k.nodes = reinterpret_cast<const gpu::BvhNode*>(tree.nodes.data());
  if (!tree.nodes.empty()) {
    const BvhNode& root = tree.nodes[0];
    k.treeMagnitude = std::max(gpu::maxAbs3(gpu::vec3(root.lo.x, root.lo.y, root.lo.z)),
                               gpu::maxAbs3(gpu::vec3(root.hi.x, root.hi.y, root.hi.z)));
  }
  k.leafBoxes = reinterpret_cast<const gpu::Aabb*>(tree.primitiveBoxes.data());
  // The SIMD twin's 4-wide tree: the caller's cache (remade when this call built or refit the tree,
  // or when it holds another tree), or one for this call when the tree was built for this call only.
  gpu::WideTree ownWide;
  if (backend == Backend::kCpuSimd) {
    const bool fresh = build || refit;
    if (in.tree.cache != nullptr) {
      MeshTreeCache& cache = *in.tree.cache;
      if (fresh || cache.triangles != n || cache.bytes.empty()) {
        gpu::collapseTree(tree.nodes, tree.primitiveBoxes, k, ownWide);
        const gpu::WideHeader h{static_cast<uint32_t>(ownWide.nodes.size()),
                                static_cast<uint32_t>(ownWide.leaves.size()), 0u, 0u};
        const size_t nodeBytes = ownWide.nodes.size() * sizeof(gpu::WideNode);
        cache.bytes.resize(sizeof h + nodeBytes + ownWide.leaves.size() * sizeof(gpu::WideLeaf));
        std::memcpy(cache.bytes.data(), &h, sizeof h);
        std::memcpy(cache.bytes.data() + sizeof h, ownWide.nodes.data(), nodeBytes);
        std::memcpy(cache.bytes.data() + sizeof h + nodeBytes, ownWide.leaves.data(),
                    ownWide.leaves.size() * sizeof(gpu::WideLeaf));
        cache.triangles = n;
      }
      gpu::WideHeader h;
      std::memcpy(&h, cache.bytes.data(), sizeof h);
      k.wide = reinterpret_cast<const gpu::WideNode*>(cache.bytes.data() + sizeof h);
      k.wideLeaves =
          reinterpret_cast<const gpu::WideLeaf*>(cache.bytes.data() + sizeof h + h.nodeCount * sizeof(gpu::WideNode));
    } else if (in.tree.nodes.empty()) {
      gpu::collapseTree(tree.nodes, tree.primitiveBoxes, k, ownWide);
      k.wide = ownWide.nodes.data();
      k.wideLeaves = ownWide.leaves.data();
    }
  }

  gpu::MeshCollidePush pc{};
  pc.clothCount = static_cast<uint32_t>(tables.cloths.size());
  pc.meshWords = tables.meshWords;
  pc.flags = in.settings.continuous ? gpu::kMeshFlagContinuous : 0u;
  pc.maxBounces = in.settings.maxBounces;
  pc.maxThickness = values.maxThickness;
  pc.triangleCount = n;

  if (debug != nullptr) {
    debug->contacts.assign(in.particles.size(), 0u);
    debug->lastTriangle.assign(in.particles.size(), kBvhNone);
  }
  const detail::WorkPlan plan = par.plan(static_cast<uint32_t>(tables.cloths.size()), [&](uint32_t c) {
    return tables.cloths[c].meshCount == 0 ? 0u : tables.cloths[c].count;
  });
  par.forEach(plan.tasks(), [&](uint32_t task) {
    gpu::MeshKernel kt = k;
    for (const detail::WorkPiece& w : plan.task(task)) {
      const gpu::MeshClothGpu& c = tables.cloths[w.cloth];
      if (c.meshCount == 0) continue;
      for (uint32_t j = w.begin; j < w.end; ++j) {
        const uint32_t i = c.first + j;
        Float4& p = in.particles[i];
        Float4& q = in.prevParticles[i];
        gpu::vec3 newPrev, newCur;
        gpu::uvec2 info;
        const gpu::vec4 prev4(q.x, q.y, q.z, q.w), cur4(p.x, p.y, p.z, p.w);
        const bool changed = kt.wide != nullptr
                                 ? kt.wideCollideParticle(pc, c.firstWord, prev4, cur4, newPrev, newCur, info)
                                 : kt.meshCollideParticle(pc, c.firstWord, prev4, cur4, newPrev, newCur, info);
        if (!changed) continue;
        p.x = newCur.x, p.y = newCur.y, p.z = newCur.z;
        q.x = newPrev.x, q.y = newPrev.y, q.z = newPrev.z;
        if (debug != nullptr) {
          debug->contacts[i] = info.x;
          debug->lastTriangle[i] = info.y;
        }
      }
    }
  });
  return par.status();
}

}  // namespace

Status collideMeshesCpu(const MeshCollisionInput& in, Backend backend, MeshCollisionDebug* debug) {
  detail::ParallelCall par(nullptr, "collideMeshesCpu");
  return collideMeshesOn(par, in, backend, debug);
}

Status collideMeshesCpu(const MeshCollisionInput& in, Backend backend, const CpuExecutor& executor,
                        MeshCollisionDebug* debug) {
  detail::ParallelCall par(&executor, "collideMeshesCpu");
  return collideMeshesOn(par, in, backend, debug);
}

}  // namespace vkc
