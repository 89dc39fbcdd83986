// Private: the mesh stage's tables and validation, shared by every backend (the CPU twins and the
// Vulkan stage build the same tables, so that the kernel reads the same values everywhere).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "shared/collide_meshes_math.h"
#include "vkcollide/collide_meshes.h"

namespace vkc::detail {

// The layout part of the tables: fixed for a stage's life (or one CPU call).
struct MeshTables {
  std::vector<gpu::MeshGpu> meshes;          // material / flags filled by setMeshValues()
  std::vector<gpu::MeshClothGpu> cloths;     // one per cloth
  std::vector<uint32_t> clothMeshWords;      // cloths * meshWords
  std::vector<uint32_t> triangleMesh;        // per global triangle
  std::vector<uint32_t> rigidMeshes;         // mesh index of each rigid sweep
  uint32_t meshWords = 0;
  uint32_t vertexCount = 0;                  // combined
  uint32_t triangleCount = 0;                // combined
  bool anyMoving = false;
};

// The per-iteration values: material per mesh (written into tables.meshes), one sweep per rigid
// mesh, the largest thickness.
struct MeshValues {
  std::vector<gpu::RigidSweep> sweeps;
  float maxThickness = 0;
};

// Checks a layout: meshes (counts >= 1, motion, stride 12 or 16, totals within kMaxMeshTriangles and
// uint32 vertices), cloth ranges inside particleCount, one ClothMeshes per cloth naming existing
// meshes at most once each. `prefix` starts the names ("" or "info.").
Status validateMeshLayout(std::span<const MeshLayout> meshes, std::span<const ClothRange> cloths,
                          std::span<const ClothMeshes> clothMeshes, uint64_t particleCount);
// withTriangleMesh false: triangleMesh stays empty (the CPU twin finds a triangle's mesh by a binary
// search over the meshes' first triangles instead of a table as long as the mesh).
MeshTables makeMeshTables(std::span<const MeshLayout> meshes, std::span<const ClothRange> cloths,
                          std::span<const ClothMeshes> clothMeshes, bool withTriangleMesh = true);

// Checks one mesh's per-iteration values: the surface (thickness finite >= 0, restitution in [0, 1],
// frictions finite >= 0) and, for a rigid mesh, both transforms (finite, unit quaternions within
// 1e-3). `name` is e.g. "meshes[2]".
Status validateMeshMotionValues(const std::string& name, MeshMotion motion, const RigidTransform& transform,
                                const RigidTransform& prevTransform, const MeshSurface& surface);
Status validateMeshSettings(const MeshCollisionSettings& settings);

// Writes the surfaces into tables.meshes and prepares the rigid sweeps (normalized quaternions).
// surfaces / transforms: one per mesh.
MeshValues setMeshValues(MeshTables& tables, std::span<const MeshSurface> surfaces,
                         std::span<const RigidTransform> transforms, std::span<const RigidTransform> prevTransforms);

}  // namespace vkc::detail
