// Shape collision (spheres, capsules, planes and convexes): layouts, constants and bindings shared by shaders/collide_shapes.comp
// and src/cpu/collide_shapes*.cpp. The arithmetic itself is in collide_shapes_math.h, written once
// for both.
#ifndef VKC_SHARED_COLLIDE_SHAPES_H
#define VKC_SHARED_COLLIDE_SHAPES_H
#include "common.h"

VKC_NAMESPACE_BEGIN

// The sphere bitmask grid: 8 cells per axis over the cloth's grid box.
VKC_CONSTANT(uint, kGridCells, 8u);
// Largest cell coordinate a sphere span is clamped to (NvCloth: 8 - 1e-3).
VKC_CONSTANT(float, kGridMaxCoord, 7.999f);
// Mask words of one cloth: 2 sets ("first": span extended to the last cell, "last": extended to
// cell 0) x 3 axes x 8 cells, each maskWords long.
VKC_CONSTANT(uint, kGridMaskRows, 48u);
VKC_CONSTANT(float, kCollideEpsilon, 1.1920929e-7f);  // FLT_EPSILON
// CCD skips trajectories that come no deeper than this fraction of the radius into a shape (their
// end position is left to the discrete test); NvCloth's "skeleton width" of 20%.
VKC_CONSTANT(float, kCcdSkinFraction, 0.2f);

VKC_CONSTANT(uint, kCollideFlagContinuous, 1u);
VKC_CONSTANT(uint, kCollideFlagFriction, 2u);
VKC_CONSTANT(uint, kCollideFlagMassScale, 4u);

VKC_CONSTANT(uint, kShapesGroupSize, 64u);
// A convex is culled for a cloth when the cloths' particle box lies outside one of its planes by more
// than this fraction of the plane's distance scale (|d| + |n| |box corner|): a margin far above the
// rounding of any backend, so that culling never changes a result.
VKC_CONSTANT(float, kConvexCullMargin, 1e-5f);
VKC_CONSTANT(uint, kNoPlane, 0xFFFFFFFFu);

VKC_CONSTANT(uint, kShapesPassPrepare, 0u);  // one invocation per sphere, per capsule and per plane
VKC_CONSTANT(uint, kShapesPassGrid, 1u);     // one workgroup per cloth: the grid box, the convexes kept
VKC_CONSTANT(uint, kShapesPassMasks, 2u);    // one invocation per mask word
VKC_CONSTANT(uint, kShapesPassCollide, 3u);  // one invocation per particle
// The fused small-cloth path: one workgroup per cloth does the bounds, the cloth's prepare, grid and
// masks and its particles' collision, separated by workgroup barriers (one dispatch per iteration).
VKC_CONSTANT(uint, kShapesPassFused, 4u);
// The automatic choice (ShapeCollisionPath::kAuto) takes the fused path when no cloth has more
// particles than this (kShapesFusedMaxParticles / kShapesGroupSize particles per invocation).
VKC_CONSTANT(uint, kShapesFusedMaxParticles, 16384u);

VKC_CONSTANT(uint, kShapesBindingParticles, 0u);      // vec4[] xyz + inverse mass (collide: rw)
VKC_CONSTANT(uint, kShapesBindingPrevParticles, 1u);  // vec4[] previous positions, w = inverse mass (rw)
VKC_CONSTANT(uint, kShapesBindingCloths, 2u);         // ShapeCloth[clothCount]
VKC_CONSTANT(uint, kShapesBindingSpheres, 3u);        // vec4[2 * sphereCount]: frame start, then frame end
VKC_CONSTANT(uint, kShapesBindingCapsules, 4u);       // CapsuleSpheres[capsuleCount] (global sphere indices)
VKC_CONSTANT(uint, kShapesBindingSphereCapsules, 5u); // uint[]: per sphere, the capsules that use it (CSR)
VKC_CONSTANT(uint, kShapesBindingPrepared, 6u);       // PreparedShapes: spheres and cones at both ends
VKC_CONSTANT(uint, kShapesBindingBounds, 7u);         // Aabb[clothCount]: the particles' bounds
VKC_CONSTANT(uint, kShapesBindingGrids, 8u);          // ShapeGrid[clothCount]
VKC_CONSTANT(uint, kShapesBindingMasks, 9u);          // uint[]: each cloth's 48 x maskWords words
VKC_CONSTANT(uint, kShapesBindingPlanes, 10u);        // vec4[2 * planeCount]: frame start, then frame end (normalized)
VKC_CONSTANT(uint, kShapesBindingConvexes, 11u);      // ShapeConvex[convexCount]
VKC_CONSTANT(uint, kShapesBindingConvexPlanes, 12u);  // uint[]: the convexes' global plane indices
VKC_CONSTANT(uint, kShapesBindingConvexBits, 13u);    // uint[]: per cloth, convexWords words: bit k, convex k is kept
VKC_CONSTANT(uint, kShapesBindingCount, 14u);

// One cloth's particles, shapes and grid words.
struct ShapeCloth {
  uint firstParticle;
  uint particleCount;
  uint firstSphere;
  uint sphereCount;
  uint firstCapsule;
  uint capsuleCount;
  uint firstMaskWord;  // this cloth's 48 * maskWords words in the masks buffer
  uint maskWords;      // ceil((sphereCount + capsuleCount) / 32); bit s: sphere s, bit sphereCount+c: capsule c
  uint firstGroup;     // first collide workgroup of this cloth (prefix sum of its particle groups)
  uint groupCount;
  uint firstSphereCapsule;  // this cloth's CSR offsets start at sphereCapsules[firstSphereCapsule]
  uint firstPlane;          // global plane index of the cloth's plane 0
  uint planeCount;
  uint firstConvex;         // global convex index of the cloth's convex 0
  uint convexCount;
  uint firstConvexWord;     // this cloth's ceil(convexCount / 32) words in the convex bits buffer
};
VKC_CHECK_LAYOUT(ShapeCloth, 64);

// A convex: planeCount global plane indices at convexPlanes[firstIndex].
struct ShapeConvex {
  uint firstIndex;
  uint planeCount;
};
VKC_CHECK_LAYOUT(ShapeConvex, 8);

struct CapsuleSpheres {
  uint sphere0;  // global sphere indices
  uint sphere1;
};
VKC_CHECK_LAYOUT(CapsuleSpheres, 8);

// A capsule's cone (NvCloth generateCones), for spheres (c1, r1), (c2, r2): m = (c1 + c2) / 2,
// h = (c2 - c1) / 2, a = (r2 - r1) / 2, La = |h|, Lc^2 = La^2 - a^2, A = h / La, s = a / Lc,
// R = (a + r1) La / Lc, cos^2(alpha) = 1 - (a / La)^2. When Lc^2 <= 0 one sphere holds the other:
// the cone is invalid (not NaN), and the spheres alone collide.
struct Cone {
  vec4 center;  // xyz m, w R (radius at m)
  vec4 axis;    // xyz A, w slope s
  vec4 dims;    // x half axis length La, y cos^2(alpha), z 1 if valid else 0, w 0
};
VKC_CHECK_LAYOUT(Cone, 48);

// The grid box of one cloth for this iteration: cell coordinate = (p - lower) * scale.
struct ShapeGrid {
  vec4 lower;  // w: 1 if the grid is valid (particles and spheres overlap), else 0
  vec4 scale;
};
VKC_CHECK_LAYOUT(ShapeGrid, 32);

struct ShapesPush {
  uint clothCount;
  uint particleCount;
  uint sphereCount;
  uint capsuleCount;
  uint maskWordCount;
  uint flags;          // kCollideFlag*
  float friction;      // >= 0
  float massScale;     // >= 0
  float alphaBegin;    // shapes at the iteration's start: mix(frame start, frame end, alphaBegin)
  float alphaEnd;      // and at its end
  uint groupCount;     // collide workgroups in total
  uint planeCount;     // planes of all cloths
  uint convexCount;    // convexes of all cloths
  uint pad0;
  uint pad1;
  uint pad2;
};
VKC_CHECK_LAYOUT(ShapesPush, 64);

VKC_NAMESPACE_END
#endif  // VKC_SHARED_COLLIDE_SHAPES_H
