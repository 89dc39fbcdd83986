#version 460
// Shape collision (one collision iteration for all cloths of a scene), four passes selected by a
// specialization constant:
//   PREPARE  spheres and planes interpolated to the iteration's start and end, and the capsules' cones
//   GRID     per cloth, the grid box: particles' bounds (from the bounds stage) ∩ spheres' box; and the
//            convexes that can reach the particles' bounds (the others are culled)
//   MASKS    every word of every cloth's 8x8x8 sphere bitmask grid (any number of shapes)
//   COLLIDE  per particle: candidate shapes from the grid, capsules then the other spheres, then the
//            kept convexes, discrete or CCD, averaged correction, friction, mass scaling
//   FUSED    the small-cloth path, one workgroup per cloth: its bounds (as the bounds stage computes
//            them), then PREPARE, GRID, MASKS and COLLIDE restricted to the cloth, separated by
//            workgroup barriers; the same functions, so the same results as the four passes
// The arithmetic lives in shared/collide_shapes_math.h and shared/collide_shapes_kernel.h, which the
// CPU twin (src/cpu/collide_shapes.cpp) compiles too.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_GOOGLE_include_directive : require
#include "shared/collide_shapes_math.h"
#include "shared/float_order.h"

layout(constant_id = 0) const uint kPass = kShapesPassPrepare;
layout(local_size_x = kShapesGroupSize) in;  // checked against the pass declarations (tests/spirv/pass_decl_test.cpp)

layout(std430, set = 0, binding = kShapesBindingParticles) buffer Particles { vec4 particles[]; };
layout(std430, set = 0, binding = kShapesBindingPrevParticles) buffer Prev { vec4 prevParticles[]; };
layout(std430, set = 0, binding = kShapesBindingCloths) readonly buffer Cloths { ShapeCloth cloths[]; };
layout(std430, set = 0, binding = kShapesBindingSpheres) readonly buffer Spheres { vec4 rawSpheres[]; };
layout(std430, set = 0, binding = kShapesBindingCapsules) readonly buffer Capsules { CapsuleSpheres capsules[]; };
layout(std430, set = 0, binding = kShapesBindingSphereCapsules) readonly buffer Csr { uint csr[]; };
layout(std430, set = 0, binding = kShapesBindingPrepared) buffer Prepared { vec4 prepared[]; };
layout(std430, set = 0, binding = kShapesBindingBounds) readonly buffer Bounds { Aabb bounds[]; };
layout(std430, set = 0, binding = kShapesBindingGrids) buffer Grids { ShapeGrid grids[]; };
layout(std430, set = 0, binding = kShapesBindingMasks) buffer Masks { uint masks[]; };
layout(std430, set = 0, binding = kShapesBindingPlanes) readonly buffer Planes { vec4 rawPlanes[]; };
layout(std430, set = 0, binding = kShapesBindingConvexes) readonly buffer Convexes { ShapeConvex convexes[]; };
layout(std430, set = 0, binding = kShapesBindingConvexPlanes) readonly buffer ConvexPlanes { uint convexPlanes[]; };
layout(std430, set = 0, binding = kShapesBindingConvexBits) buffer ConvexBits { uint convexBits[]; };
layout(push_constant) uniform Push { ShapesPush pc; };

vec4 preparedSphere(uint sphere, uint atEnd) { return prepared[atEnd * pc.sphereCount + sphere]; }
Cone preparedCone(uint capsule, uint atEnd) {
  uint b = 2u * pc.sphereCount + 3u * (atEnd * pc.capsuleCount + capsule);
  return Cone(prepared[b], prepared[b + 1u], prepared[b + 2u]);
}
vec4 preparedPlane(uint plane, uint atEnd) {
  return prepared[2u * pc.sphereCount + 6u * pc.capsuleCount + atEnd * pc.planeCount + plane];
}
CapsuleSpheres capsuleSpheres(uint capsule) { return capsules[capsule]; }
ShapeConvex convexAt(uint convex) { return convexes[convex]; }
uint convexPlane(uint index) { return convexPlanes[index]; }
uint convexBit(uint index) { return convexBits[index]; }
uint gridMask(uint index) { return masks[index]; }
uint sphereCapsule(uint index) { return csr[index]; }

#include "shared/collide_shapes_kernel.h"

uint linearGroup() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
uint linearInvocation() { return linearGroup() * kShapesGroupSize + gl_LocalInvocationIndex; }

// Prepares global sphere, capsule or plane `id` (spheres first, then capsules, then planes).
void prepareShape(uint id) {
  uint S = pc.sphereCount;
  if (id < S) {
    prepared[id] = interpolateSphere(rawSpheres[id], rawSpheres[S + id], pc.alphaBegin);
    prepared[S + id] = interpolateSphere(rawSpheres[id], rawSpheres[S + id], pc.alphaEnd);
  } else if (id < S + pc.capsuleCount) {
    uint k = id - S;
    CapsuleSpheres cap = capsules[k];
    for (uint atEnd = 0u; atEnd < 2u; ++atEnd) {
      float alpha = atEnd == 0u ? pc.alphaBegin : pc.alphaEnd;
      Cone cone = makeCone(interpolateSphere(rawSpheres[cap.sphere0], rawSpheres[S + cap.sphere0], alpha),
                           interpolateSphere(rawSpheres[cap.sphere1], rawSpheres[S + cap.sphere1], alpha));
      uint b = 2u * S + 3u * (atEnd * pc.capsuleCount + k);
      prepared[b] = cone.center;
      prepared[b + 1u] = cone.axis;
      prepared[b + 2u] = cone.dims;
    }
  } else if (id < S + pc.capsuleCount + pc.planeCount) {
    uint k = id - S - pc.capsuleCount, P = pc.planeCount;
    uint b = 2u * S + 6u * pc.capsuleCount;
    prepared[b + k] = interpolatePlane(rawPlanes[k], rawPlanes[P + k], pc.alphaBegin);
    prepared[b + P + k] = interpolatePlane(rawPlanes[k], rawPlanes[P + k], pc.alphaEnd);
  }
}

void preparePass() { prepareShape(linearInvocation()); }

shared vec3 sLo[kShapesGroupSize];
shared vec3 sHi[kShapesGroupSize];

// The grid box of a cloth whose particles' bounds are `box`, and its convex bits; the whole workgroup
// calls it, invocation 0 gets the grid (and stores it).
ShapeGrid clothGrid(uint cloth, ShapeCloth c, Aabb box) {
  const float inf = uintBitsToFloat(0x7F800000u);
  vec3 lo = vec3(inf), hi = vec3(-inf);
  uint ccd = (pc.flags & kCollideFlagContinuous) != 0u ? 1u : 0u;
  for (uint w = gl_LocalInvocationIndex; w * 32u < c.convexCount; w += kShapesGroupSize) {
    convexBits[c.firstConvexWord + w] = buildConvexWord(c, vec3(box.lo), vec3(box.hi), ccd, w);
  }
  uint firstEnd = 1u - ccd;
  for (uint i = gl_LocalInvocationIndex; i < c.sphereCount; i += kShapesGroupSize) {
    for (uint atEnd = firstEnd; atEnd < 2u; ++atEnd) {
      vec4 s = preparedSphere(c.firstSphere + i, atEnd);
      lo = min(lo, vec3(s) - s.w);
      hi = max(hi, vec3(s) + s.w);
    }
  }
  lo = subgroupMin(lo);
  hi = subgroupMax(hi);
  if (subgroupElect()) {
    sLo[gl_SubgroupID] = lo;
    sHi[gl_SubgroupID] = hi;
  }
  barrier();
  ShapeGrid g;
  if (gl_LocalInvocationIndex == 0u) {
    for (uint s = 1u; s < gl_NumSubgroups; ++s) {
      lo = min(lo, sLo[s]);
      hi = max(hi, sHi[s]);
    }
    g = makeGrid(vec3(box.lo), vec3(box.hi), lo, hi);
    grids[cloth] = g;
  }
  return g;
}

void gridPass() {
  uint cloth = linearGroup();
  if (cloth >= pc.clothCount) return;  // uniform per workgroup
  clothGrid(cloth, cloths[cloth], bounds[cloth]);
}

// The cloth that owns a word / workgroup: the last cloth whose first index is <= x (cloths with none
// come before the cloth that shares their first index).
uint clothOfMaskWord(uint x) {
  uint lo = 0u, hi = pc.clothCount;
  while (lo < hi) {
    uint mid = (lo + hi) / 2u;
    if (cloths[mid].firstMaskWord <= x) lo = mid + 1u; else hi = mid;
  }
  return lo - 1u;
}
uint clothOfGroup(uint x) {
  uint lo = 0u, hi = pc.clothCount;
  while (lo < hi) {
    uint mid = (lo + hi) / 2u;
    if (cloths[mid].firstGroup <= x) lo = mid + 1u; else hi = mid;
  }
  return lo - 1u;
}

// Word `local` of a cloth's 48 x maskWords grid words.
uint maskWord(ShapeCloth c, ShapeGrid g, uint local) {
  if (g.lower.w == 0.0f) return 0u;
  uint row = local / c.maskWords, word = local % c.maskWords;
  uint ccd = (pc.flags & kCollideFlagContinuous) != 0u ? 1u : 0u;
  return buildMaskWord(c, g, ccd, row / 24u, (row / kGridCells) % 3u, row % kGridCells, word);
}

void masksPass() {
  uint index = linearInvocation();
  if (index >= pc.maskWordCount) return;
  uint cloth = clothOfMaskWord(index);
  ShapeCloth c = cloths[cloth];
  masks[index] = maskWord(c, grids[cloth], index - c.firstMaskWord);
}

void collidePass() {
  uint group = linearGroup();
  if (group >= pc.groupCount) return;
  uint cloth = clothOfGroup(group);
  ShapeCloth c = cloths[cloth];
  uint i = c.firstParticle + (group - c.firstGroup) * kShapesGroupSize + gl_LocalInvocationIndex;
  if (i >= c.firstParticle + c.particleCount || i >= pc.particleCount) return;
  vec4 p = particles[i];
  vec4 q = prevParticles[i];
  collideParticle(c, grids[cloth], pc.flags, pc.friction, pc.massScale, p, q);
  particles[i] = p;
  if ((pc.flags & kCollideFlagFriction) != 0u) prevParticles[i] = q;
}

// The bounds stage's box of the cloth (keys reduced over the workgroup: exact, order-independent).
shared uvec4 sKeyLo[kShapesGroupSize];
shared uvec4 sKeyHi[kShapesGroupSize];
shared Aabb sBox;
shared ShapeGrid sGrid;

Aabb clothBounds(ShapeCloth c) {
  uvec4 lo = uvec4(0xFFFFFFFFu), hi = uvec4(0u);
  bool previous = (pc.flags & kCollideFlagContinuous) != 0u;
  uint end = min(c.firstParticle + c.particleCount, pc.particleCount);
  for (uint i = c.firstParticle + gl_LocalInvocationIndex; i < end; i += kShapesGroupSize) {
    uvec4 k = floatKey(particles[i]);
    lo = min(lo, k);
    hi = max(hi, k);
    if (previous) {
      k = floatKey(prevParticles[i]);
      lo = min(lo, k);
      hi = max(hi, k);
    }
  }
  lo = subgroupMin(lo);
  hi = subgroupMax(hi);
  if (subgroupElect()) {
    sKeyLo[gl_SubgroupID] = lo;
    sKeyHi[gl_SubgroupID] = hi;
  }
  barrier();
  if (gl_LocalInvocationIndex == 0u) {
    for (uint s = 1u; s < gl_NumSubgroups; ++s) {
      lo = min(lo, sKeyLo[s]);
      hi = max(hi, sKeyHi[s]);
    }
    const float inf = uintBitsToFloat(0x7F800000u);
    Aabb box;
    if (c.particleCount == 0u) {
      box.lo = vec4(inf, inf, inf, 0.0);
      box.hi = vec4(-inf, -inf, -inf, 0.0);
    } else {
      box.lo = vec4(floatFromKey(lo).xyz, 0.0);
      box.hi = vec4(floatFromKey(hi).xyz, 0.0);
    }
    sBox = box;
  }
  barrier();
  return sBox;
}

// Makes this invocation's writes to the stage's buffers visible to the workgroup, then waits for it.
void workgroupStep() {
  memoryBarrierBuffer();
  barrier();
}

void fusedPass() {
  uint cloth = linearGroup();
  if (cloth >= pc.clothCount) return;  // uniform per workgroup
  ShapeCloth c = cloths[cloth];
  Aabb box = clothBounds(c);
  uint S = pc.sphereCount, C = pc.capsuleCount;
  for (uint i = gl_LocalInvocationIndex; i < c.sphereCount; i += kShapesGroupSize) prepareShape(c.firstSphere + i);
  for (uint i = gl_LocalInvocationIndex; i < c.capsuleCount; i += kShapesGroupSize) prepareShape(S + c.firstCapsule + i);
  for (uint i = gl_LocalInvocationIndex; i < c.planeCount; i += kShapesGroupSize) prepareShape(S + C + c.firstPlane + i);
  workgroupStep();
  ShapeGrid g = clothGrid(cloth, c, box);
  if (gl_LocalInvocationIndex == 0u) sGrid = g;
  workgroupStep();
  g = sGrid;
  for (uint w = gl_LocalInvocationIndex; w < kGridMaskRows * c.maskWords; w += kShapesGroupSize) {
    masks[c.firstMaskWord + w] = maskWord(c, g, w);
  }
  workgroupStep();
  uint end = min(c.firstParticle + c.particleCount, pc.particleCount);
  for (uint i = c.firstParticle + gl_LocalInvocationIndex; i < end; i += kShapesGroupSize) {
    vec4 p = particles[i];
    vec4 q = prevParticles[i];
    collideParticle(c, g, pc.flags, pc.friction, pc.massScale, p, q);
    particles[i] = p;
    if ((pc.flags & kCollideFlagFriction) != 0u) prevParticles[i] = q;
  }
}

void main() {
  if (kPass == kShapesPassPrepare) preparePass();
  else if (kPass == kShapesPassGrid) gridPass();
  else if (kPass == kShapesPassMasks) masksPass();
  else if (kPass == kShapesPassCollide) collidePass();
  else fusedPass();
}
