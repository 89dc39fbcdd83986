// The passes of the shape collision stage (shaders/collide_shapes.comp, src/vulkan/collide_shapes.cpp);
// see pass_decl.h. The collide and fused passes write prevParticles only with friction (the stage
// narrows it to R without). The fused pass is recorded alone (the small-cloth path); the others after
// the bounds stage's passes (the general path).
#ifndef VKC_SHARED_COLLIDE_SHAPES_PASSES_H
#define VKC_SHARED_COLLIDE_SHAPES_PASSES_H
#include "collide_shapes.h"
#include "pass_decl.h"

namespace vkc::gpu {

// clang-format off
inline constexpr PassDecl kShapesPasses[] = {
  //                                                                                     parts prev cloths spheres caps csr prep bnds grid mask planes convexes cplanes cbits
  passDecl("vkc.shapes.prepare", kShapesPassPrepare, kShapesGroupSize, kShapesBindingCount, "-    -    -      R       R    -   W    -    -    -    R      -        -       -"),
  passDecl("vkc.shapes.grid",    kShapesPassGrid,    kShapesGroupSize, kShapesBindingCount, "-    -    R      -       -    -   R    R    W    -    -      R        R       W"),
  passDecl("vkc.shapes.masks",   kShapesPassMasks,   kShapesGroupSize, kShapesBindingCount, "-    -    R      -       R    -   R    -    R    W    -      -        -       -"),
  passDecl("vkc.shapes.collide", kShapesPassCollide, kShapesGroupSize, kShapesBindingCount, "RW   RW   R      -       R    R   R    -    R    R    -      R        R       R"),
  passDecl("vkc.shapes.fused",   kShapesPassFused,   kShapesGroupSize, kShapesBindingCount, "RW   RW   R      R       R    R   RW   -    W    RW   R      R        R       RW"),
};
// clang-format on
inline constexpr StageDecl kShapesStage{"collide_shapes", kShapesBindingCount, kShapesPasses};
static_assert(validStage(kShapesStage));

}  // namespace vkc::gpu
#endif  // VKC_SHARED_COLLIDE_SHAPES_PASSES_H
