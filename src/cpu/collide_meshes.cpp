// The CPU twin of the mesh stage (shaders/collide_meshes.comp): the combined world vertices, the
// mesh tree built or refit by the BVH stage's CPU twin, and per particle the shader's own kernel
// (shared/collide_meshes_kernel.h, included into MeshKernel below) over host arrays.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/executor.h"
#include "scene/mesh_layout.h"
#include "scene/validate.h"
#include "shared/bvh.h"
#include "util/try.h"
#include "vkcollide/collide_meshes.h"

namespace vkc::gpu {
namespace {

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

#include "shared/collide_meshes_kernel.h"
};

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
    std::vector<uint32_t> idx;
    std::vector<Float4> verts;
    uint32_t base = 0;
    for (const CollisionMesh& m : in.meshes) {
      for (uint32_t i : m.indices) idx.push_back(base + i);
      verts.insert(verts.end(), m.vertices.begin(), m.vertices.end());
      base += static_cast<uint32_t>(m.vertices.size());
    }
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
    std::vector<uint32_t> indices(size_t{n} * 3);
    for (uint32_t m = 0; m < meshCount; ++m) {
      const gpu::MeshGpu& g = tables.meshes[m];
      for (uint32_t i = 0; i < g.triangleCount * 3; ++i) {
        indices[size_t{g.firstTriangle} * 3 + i] = g.firstVertex + in.meshes[m].indices[i];
      }
    }
    BvhInput b;
    b.vertices = endF;
    b.prevVertices = startF;
    b.indices = indices;
    b.verticesPerPrimitive = 3;
    b.nodes = tree.nodes;
    b.primitiveBoxes = tree.primitiveBoxes;
    b.leafParents = tree.leafParents;
    VKC_TRY(build ? buildBvhCpu(b, backend) : refitBvhCpu(b, backend));
    if (build && tree.built != nullptr) *tree.built = true;
  }
  k.nodes = reinterpret_cast<const gpu::BvhNode*>(tree.nodes.data());
  k.leafBoxes = reinterpret_cast<const gpu::Aabb*>(tree.primitiveBoxes.data());

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
        if (!kt.meshCollideParticle(pc, c.firstWord, gpu::vec4(q.x, q.y, q.z, q.w), gpu::vec4(p.x, p.y, p.z, p.w),
                                    newPrev, newCur, info))
          continue;
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
