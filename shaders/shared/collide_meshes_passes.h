// The passes of the mesh collision stage (shaders/collide_meshes.comp, src/vulkan/collide_meshes.cpp);
// see pass_decl.h. A record: gather (when the tree is built or a mesh moves), the embedded BVH
// stage's build or refit passes, collide. The gather pass makes the indices global only on a build
// (the stage narrows the indices binding to none otherwise).
#ifndef VKC_SHARED_COLLIDE_MESHES_PASSES_H
#define VKC_SHARED_COLLIDE_MESHES_PASSES_H
#include "collide_meshes.h"
#include "pass_decl.h"

namespace vkc::gpu {

// clang-format off
inline constexpr PassDecl kMeshPasses[] = {
  //                                                                             parts prev tiles words meshes sweeps raw local start end idx trimesh nodes boxes state info
  passDecl("vkc.meshes.gather",  kMeshPassGather,  kMeshGroupSize, kMeshBindingCount, "-     -    -     -     R      R      R   W     W     W   RW  -       -     -     RW    -"),
  passDecl("vkc.meshes.collide", kMeshPassCollide, kMeshGroupSize, kMeshBindingCount, "RW    RW   R     R     R      R      -   R     R     R   R   R       R     R     R     W"),
};
// clang-format on
inline constexpr StageDecl kMeshStage{"collide_meshes", kMeshBindingCount, kMeshPasses};
static_assert(validStage(kMeshStage));

}  // namespace vkc::gpu
#endif  // VKC_SHARED_COLLIDE_MESHES_PASSES_H
