// Bindings, push constants and sizes of the bounds stage (shaders/bounds.comp, src/cpu/bounds*.cpp).
#ifndef VKC_SHARED_BOUNDS_H
#define VKC_SHARED_BOUNDS_H
#include "common.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kBoundsGroupSize, 256u);
// Particles reduced by one workgroup in the tile pass (8 per invocation).
VKC_CONSTANT(uint, kBoundsTileSize, 2048u);

// Pass selected by specialization constant 0.
VKC_CONSTANT(uint, kBoundsPassTiles, 0u);  // one workgroup per tile: keys of the tile's box -> tileBoxes
VKC_CONSTANT(uint, kBoundsPassMerge, 1u);  // one workgroup per cloth: tiles -> the cloth's float box

VKC_CONSTANT(uint, kBoundsBindingParticles, 0u);      // vec4[]  xyz + inverse mass (read)
VKC_CONSTANT(uint, kBoundsBindingPrevParticles, 1u);  // vec4[]  previous positions (read; may alias 0)
VKC_CONSTANT(uint, kBoundsBindingCloths, 2u);         // ClothRange[clothCount] (read)
VKC_CONSTANT(uint, kBoundsBindingTileBoxes, 3u);      // BoundsTileBox[tileCount] (tiles: write, merge: read)
VKC_CONSTANT(uint, kBoundsBindingOut, 4u);            // Aabb[clothCount] (merge: write)
VKC_CONSTANT(uint, kBoundsBindingCount, 5u);

// The box of one tile as order-preserving keys (see float_order.h).
struct BoundsTileBox {
  uvec4 lo;
  uvec4 hi;
};
VKC_CHECK_LAYOUT(BoundsTileBox, 32);

struct BoundsPush {
  uint clothCount;
  uint tileCount;
  uint particleCount;    // elements bound at kBoundsBindingParticles (and prev, when used)
  uint usePrevious;      // 1: the box also covers the previous positions
};
VKC_CHECK_LAYOUT(BoundsPush, 16);

VKC_NAMESPACE_END
#endif  // VKC_SHARED_BOUNDS_H
