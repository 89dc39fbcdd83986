#include "scene/mesh_layout.h"

#include <cmath>

#include "scene/validate.h"
#include "util/try.h"

namespace vkc::detail {
namespace {

Error invalid(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message}; }

bool finiteNonNegative(float v) { return std::isfinite(v) && v >= 0.0f; }

gpu::vec4 normalized(const Float4& f) {
  const gpu::vec4 q(f.x, f.y, f.z, f.w);
  return q / std::sqrt(gpu::quatNorm2(q));
}

}  // namespace

Status validateMeshLayout(std::span<const MeshLayout> meshes, std::span<const ClothRange> cloths,
                          std::span<const ClothMeshes> clothMeshes, uint64_t particleCount) {
  uint64_t triangles = 0, vertices = 0;
  for (size_t m = 0; m < meshes.size(); ++m) {
    const MeshLayout& l = meshes[m];
    const std::string name = "meshes[" + std::to_string(m) + "]";
    if (l.vertexCount == 0) return invalid(name + ".vertexCount is 0: a mesh needs at least one vertex");
    if (l.triangleCount == 0) return invalid(name + " has no triangles: an empty mesh cannot collide");
    if (l.motion != MeshMotion::kStatic && l.motion != MeshMotion::kRigid && l.motion != MeshMotion::kDeforming) {
      return invalid(name + ".motion is " + std::to_string(static_cast<uint32_t>(l.motion)) +
                     ": it must be kStatic, kRigid or kDeforming");
    }
    if (l.vertexStride != 12 && l.vertexStride != 16) {
      return invalid(name + ".vertexStride is " + std::to_string(l.vertexStride) + ": it must be 12 (vec3) or 16 (vec4)");
    }
    triangles += l.triangleCount;
    vertices += l.vertexCount;
  }
  if (triangles > kMaxMeshTriangles) {
    return Error{ErrorCode::kLimitExceeded, "meshes hold " + std::to_string(triangles) +
                                                " triangles in all; the mesh tree takes at most " +
                                                std::to_string(kMaxMeshTriangles)};
  }
  if (vertices > 0xFFFFFFFEull) {
    return Error{ErrorCode::kLimitExceeded, "meshes hold " + std::to_string(vertices) +
                                                " vertices in all; at most 2^32 - 2 are addressable"};
  }
  VKC_TRY(validateClothRanges(cloths, particleCount, "input"));
  if (clothMeshes.size() != cloths.size()) {
    return invalid("clothMeshes holds " + std::to_string(clothMeshes.size()) + " entries; there are " +
                   std::to_string(cloths.size()) + " cloths (one each)");
  }
  std::vector<uint32_t> seen(meshes.size(), UINT32_MAX);
  for (size_t c = 0; c < clothMeshes.size(); ++c) {
    for (size_t k = 0; k < clothMeshes[c].meshes.size(); ++k) {
      const uint32_t m = clothMeshes[c].meshes[k];
      const std::string name = "clothMeshes[" + std::to_string(c) + "].meshes[" + std::to_string(k) + "]";
      if (m >= meshes.size()) {
        return invalid(name + " is " + std::to_string(m) + "; there are " + std::to_string(meshes.size()) + " meshes");
      }
      if (seen[m] == c) return invalid(name + " lists mesh " + std::to_string(m) + " twice");
      seen[m] = static_cast<uint32_t>(c);
    }
  }
  return {};
}

MeshTables makeMeshTables(std::span<const MeshLayout> meshes, std::span<const ClothRange> cloths,
                          std::span<const ClothMeshes> clothMeshes, bool withTriangleMesh) {
  MeshTables t;
  t.meshWords = static_cast<uint32_t>((meshes.size() + 31) / 32);
  t.meshes.resize(meshes.size());
  for (size_t m = 0; m < meshes.size(); ++m) {
    gpu::MeshGpu& g = t.meshes[m];
    g = gpu::MeshGpu{};
    g.motion = static_cast<uint32_t>(meshes[m].motion);
    g.firstVertex = t.vertexCount;
    g.vertexCount = meshes[m].vertexCount;
    g.firstTriangle = t.triangleCount;
    g.triangleCount = meshes[m].triangleCount;
    g.sweep = gpu::kMeshNone;
    if (meshes[m].motion == MeshMotion::kRigid) {
      g.sweep = static_cast<uint32_t>(t.rigidMeshes.size());
      t.rigidMeshes.push_back(static_cast<uint32_t>(m));
    }
    if (meshes[m].motion != MeshMotion::kStatic) t.anyMoving = true;
    t.vertexCount += meshes[m].vertexCount;
    t.triangleCount += meshes[m].triangleCount;
    if (withTriangleMesh) t.triangleMesh.insert(t.triangleMesh.end(), meshes[m].triangleCount, static_cast<uint32_t>(m));
  }
  t.cloths.resize(cloths.size());
  t.clothMeshWords.assign(cloths.size() * t.meshWords, 0u);
  for (size_t c = 0; c < cloths.size(); ++c) {
    const uint32_t first = static_cast<uint32_t>(c * t.meshWords);
    t.cloths[c] = gpu::MeshClothGpu{cloths[c].first, cloths[c].count, first,
                                    static_cast<uint32_t>(clothMeshes[c].meshes.size())};
    for (uint32_t m : clothMeshes[c].meshes) t.clothMeshWords[first + m / 32] |= 1u << (m % 32);
  }
  return t;
}

Status validateMeshMotionValues(const std::string& name, MeshMotion motion, const RigidTransform& transform,
                                const RigidTransform& prevTransform, const MeshSurface& surface) {
  if (!finiteNonNegative(surface.thickness)) {
    return invalid(name + ".surface.thickness is " + formatNumber(surface.thickness) + ": it must be finite and >= 0");
  }
  if (!(surface.restitution >= 0.0f && surface.restitution <= 1.0f)) {
    return invalid(name + ".surface.restitution is " + formatNumber(surface.restitution) + ": it must be in [0, 1]");
  }
  if (!finiteNonNegative(surface.friction)) {
    return invalid(name + ".surface.friction is " + formatNumber(surface.friction) + ": it must be finite and >= 0");
  }
  if (!finiteNonNegative(surface.staticFriction)) {
    return invalid(name + ".surface.staticFriction is " + formatNumber(surface.staticFriction) +
                   ": it must be finite and >= 0");
  }
  if (motion == MeshMotion::kRigid) {
    VKC_TRY(validateRigidTransform(name + ".transform", transform.translation, transform.rotation));
    VKC_TRY(validateRigidTransform(name + ".prevTransform", prevTransform.translation, prevTransform.rotation));
  }
  return {};
}

Status validateMeshSettings(const MeshCollisionSettings& settings) {
  if (settings.maxBounces > kMaxMeshBounces) {
    return invalid("settings.maxBounces is " + std::to_string(settings.maxBounces) + ": at most " +
                   std::to_string(kMaxMeshBounces));
  }
  return {};
}

MeshValues setMeshValues(MeshTables& tables, std::span<const MeshSurface> surfaces,
                         std::span<const RigidTransform> transforms, std::span<const RigidTransform> prevTransforms) {
  MeshValues v;
  for (size_t m = 0; m < tables.meshes.size(); ++m) {
    gpu::MeshGpu& g = tables.meshes[m];
    const MeshSurface& s = surfaces[m];
    g.material = gpu::MeshMaterial{s.restitution, s.friction, s.staticFriction, s.thickness};
    g.flags = s.oneSided ? gpu::kMeshFlagOneSided : 0u;
    v.maxThickness = std::max(v.maxThickness, s.thickness);
  }
  v.sweeps.reserve(tables.rigidMeshes.size());
  for (uint32_t m : tables.rigidMeshes) {
    const RigidTransform& t0 = prevTransforms[m];
    const RigidTransform& t1 = transforms[m];
    v.sweeps.push_back(gpu::rigidSweepPrepare(normalized(t0.rotation),
                                              gpu::vec3(t0.translation.x, t0.translation.y, t0.translation.z),
                                              normalized(t1.rotation),
                                              gpu::vec3(t1.translation.x, t1.translation.y, t1.translation.z)));
  }
  return v;
}

}  // namespace vkc::detail
