// The CPU twin of the mesh stage (shaders/collide_meshes.comp): the combined world vertices, the
// mesh tree built or refit by the BVH stage's CPU twin, and per particle the shader's own kernel
// (shared/collide_meshes_kernel.h, included into MeshKernel below) over host arrays.
#include <algorithm>
#include <cmath>
#include <vector>

#include "scene/mesh_layout.h"
#include "scene/validate.h"
#include "shared/bvh.h"
#include "util/try.h"
#include "vkcollide/collide_meshes.h"

namespace vkc::gpu {
namespace {

// The kernel's accessors over host arrays; the kernel's functions become members.
struct MeshKernel {
  const BvhNode* nodes = nullptr;
  const Aabb* leafBoxes = nullptr;
  const uint32_t* indices = nullptr;
  const uint32_t* triMesh = nullptr;
  const MeshGpu* meshes = nullptr;
  const vec4* worldStart = nullptr;
  const vec4* worldEnd = nullptr;
  const vec4* local = nullptr;
  const RigidSweep* sweeps = nullptr;
  const uint32_t* clothWords = nullptr;
  float rigidChord = 0.0f;

  BvhNode treeNode(uint i) const { return nodes[i]; }
  Aabb treeLeafBox(uint t) const { return leafBoxes[t]; }
  uint triangleVertex(uint k) const { return indices[k]; }
  uint triangleMesh(uint t) const { return triMesh[t]; }
  MeshGpu meshAt(uint m) const { return meshes[m]; }
  vec3 worldVertex(uint v, uint atEnd) const { return vec3(atEnd != 0u ? worldEnd[v] : worldStart[v]); }
  vec3 localVertex(uint v) const { return vec3(local[v]); }
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

gpu::vec4 toVec4(const Float4& f) { return gpu::vec4(f.x, f.y, f.z, 0.0f); }

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

Status collideMeshesCpu(const MeshCollisionInput& in, Backend backend, MeshCollisionDebug* debug) {
  if (backend != Backend::kCpuScalar && backend != Backend::kCpuSimd) {
    return invalid("collideMeshesCpu runs kCpuScalar or kCpuSimd; use collideMeshes for kVulkan");
  }
  VKC_TRY(validate(in));
  const std::vector<MeshLayout> layouts = layoutsOf(in.meshes);
  detail::MeshTables tables = detail::makeMeshTables(layouts, in.cloths, in.clothMeshes);
  std::vector<MeshSurface> surfaces(in.meshes.size());
  std::vector<RigidTransform> transforms(in.meshes.size()), prevTransforms(in.meshes.size());
  for (size_t m = 0; m < in.meshes.size(); ++m) {
    surfaces[m] = in.meshes[m].surface;
    transforms[m] = in.meshes[m].transform;
    prevTransforms[m] = in.meshes[m].prevTransform;
  }
  const detail::MeshValues values = detail::setMeshValues(tables, surfaces, transforms, prevTransforms);

  // Combined vertices: as given (mesh space for rigid meshes) and in world space at both ends (the
  // gather pass of the shader); global indices.
  std::vector<gpu::vec4> local(tables.vertexCount), start(tables.vertexCount), end(tables.vertexCount);
  std::vector<uint32_t> indices(size_t{tables.triangleCount} * 3);
  float chord = 0.0f;
  for (size_t m = 0; m < in.meshes.size(); ++m) {
    const CollisionMesh& mesh = in.meshes[m];
    const gpu::MeshGpu& g = tables.meshes[m];
    for (uint32_t v = 0; v < g.vertexCount; ++v) {
      const uint32_t o = g.firstVertex + v;
      const gpu::vec4 x = toVec4(mesh.vertices[v]);
      local[o] = x;
      if (mesh.motion == MeshMotion::kRigid) {
        const gpu::RigidSweep& s = values.sweeps[g.sweep];
        const gpu::vec3 m3(x);
        start[o] = gpu::vec4(gpu::quatRotate(s.rotation[0], m3) + gpu::vec3(s.translation[0]), 0.0f);
        end[o] = gpu::vec4(gpu::quatRotate(s.rotation[gpu::kRigidMaxSteps], m3) +
                               gpu::vec3(s.translation[gpu::kRigidMaxSteps]),
                           0.0f);
        chord = std::max(chord, gpu::rigidChordBound(s.angle.x, m3));
      } else if (mesh.motion == MeshMotion::kDeforming) {
        start[o] = toVec4(mesh.prevVertices[v]);
        end[o] = x;
      } else {
        start[o] = x;
        end[o] = x;
      }
    }
    for (uint32_t k = 0; k < g.triangleCount * 3; ++k) indices[size_t{g.firstTriangle} * 3 + k] = g.firstVertex + mesh.indices[k];
  }

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
    // Swept boxes when the path is swept against moving meshes; the end positions otherwise.
    const bool swept = in.settings.continuous && tables.anyMoving;
    std::vector<Float4> endF(n ? tables.vertexCount : 0), startF;
    for (uint32_t v = 0; v < tables.vertexCount; ++v) endF[v] = Float4{end[v].x, end[v].y, end[v].z, 0.0f};
    if (swept) {
      startF.resize(tables.vertexCount);
      for (uint32_t v = 0; v < tables.vertexCount; ++v) startF[v] = Float4{start[v].x, start[v].y, start[v].z, 0.0f};
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

  gpu::MeshKernel k;
  k.nodes = reinterpret_cast<const gpu::BvhNode*>(tree.nodes.data());
  k.leafBoxes = reinterpret_cast<const gpu::Aabb*>(tree.primitiveBoxes.data());
  k.indices = indices.data();
  k.triMesh = tables.triangleMesh.data();
  k.meshes = tables.meshes.data();
  k.worldStart = start.data();
  k.worldEnd = end.data();
  k.local = local.data();
  k.sweeps = values.sweeps.data();
  k.clothWords = tables.clothMeshWords.data();
  k.rigidChord = chord;
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
  for (const gpu::MeshClothGpu& c : tables.cloths) {
    if (c.meshCount == 0) continue;
    for (uint32_t j = 0; j < c.count; ++j) {
      const uint32_t i = c.first + j;
      Float4& p = in.particles[i];
      Float4& q = in.prevParticles[i];
      gpu::vec3 newPrev, newCur;
      gpu::uvec2 info;
      if (!k.meshCollideParticle(pc, c.firstWord, gpu::vec4(q.x, q.y, q.z, q.w), gpu::vec4(p.x, p.y, p.z, p.w),
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
  return {};
}

}  // namespace vkc
