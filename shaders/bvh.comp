#version 460
// BVH stage: a linear BVH (Karras 2012) over indexed primitives, built or refit on the device. Six
// passes selected by a specialization constant (shared/bvh.h): INIT (a build only: one workgroup) sets
// the centroid box to the empty box; BOXES writes each primitive's box, sets node i's key box (i < the
// node count, at most the primitive count) to the empty box, and for a build folds the primitive's
// centroid into the centroid box with atomic min / max of order-preserving keys (exact,
// order-independent); MORTON writes (code, primitive) pairs, which the radix sort orders; HIERARCHY
// finds each internal node's children (Karras' split) and range of sorted leaves; CLIMB folds every
// leaf's box keys into its ancestors with atomic min / max (a build stores the nodes inside a
// workgroup's range of sorted leaves from shared memory and folds with atomics only above them);
// FINALIZE turns the keys into the nodes' float boxes. Every box is a selection of input floats
// (min / max through keys), so the tree equals the CPU twin's (src/cpu/bvh.cpp) bit for bit.
//
// Why atomics rather than Karras' arrival counters (the second child to arrive writes the union):
// that needs the sibling's box written by another invocation in the same pass, a memory barrier
// between, and on llvmpipe (Mesa 22.3) a memoryBarrierBuffer() in that loop made invocations drop
// their remaining work (measured: root boxes left unwritten). Folding keys with atomics needs no
// invocation to read another's plain buffer writes; within a workgroup, shared memory after one
// barrier() serves the nodes whose leaves are all the workgroup's (about 96% of them).
//
// Robustness: the host cannot see the device-side index buffer or a tree to refit. An index beyond
// vertexCount reads the last vertex; child and parent references beyond the tree are clamped or end
// the climb; the climb stops after kBvhMaxDepth levels (a valid tree is shallower). Nothing is read
// or written out of bounds, and every loop is bounded (llvmpipe's loop guard: at most ~100 iterations
// per invocation in HIERARCHY, 54 + 2 kBvhMaxDepth in CLIMB).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_GOOGLE_include_directive : require
#include "shared/bvh.h"
#include "shared/float_order.h"

layout(constant_id = 0) const uint kPass = kBvhPassInit;
layout(local_size_x = kBvhGroupSize) in;  // checked against the pass declarations (tests/spirv/pass_decl_test.cpp)

layout(std430, set = 0, binding = kBvhBindingVertices) readonly buffer Vertices { vec4 vertices[]; };
layout(std430, set = 0, binding = kBvhBindingPrevVertices) readonly buffer Prev { vec4 prevVertices[]; };
layout(std430, set = 0, binding = kBvhBindingIndices) readonly buffer Indices { uint indices[]; };
layout(std430, set = 0, binding = kBvhBindingPrimBoxes) buffer PrimBoxes { Aabb primBoxes[]; };
layout(std430, set = 0, binding = kBvhBindingCentroid) buffer Centroid { uint centroidKeys[]; };
layout(std430, set = 0, binding = kBvhBindingCodes) buffer Codes { uint codes[]; };
layout(std430, set = 0, binding = kBvhBindingOrder) buffer Order { uint order[]; };
layout(std430, set = 0, binding = kBvhBindingNodes) buffer Nodes { BvhNode nodes[]; };
layout(std430, set = 0, binding = kBvhBindingLeafParents) buffer LeafParents { uint leafParents[]; };
layout(std430, set = 0, binding = kBvhBindingNodeKeys) buffer NodeKeys { BvhNodeKeys nodeKeys[]; };
layout(push_constant) uniform Push { BvhPush pc; };

vec4 vertexAt(uint v) { return vertices[v]; }
vec4 prevVertexAt(uint v) { return prevVertices[v]; }
uint indexAt(uint k) { return indices[k]; }
uint sortedCode(uint i) { return codes[i]; }
uint sortedPrim(uint i) { return order[i]; }
#include "shared/bvh_kernel.h"

uint globalIndex() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * kBvhGroupSize + gl_LocalInvocationIndex;
}

bool building() { return (pc.flags & kBvhFlagBuild) != 0u; }

void initPass() {
  uint i = globalIndex();
  if (i == 0u && building()) {
    for (uint a = 0u; a < 4u; ++a) {
      centroidKeys[a] = 0xFFFFFFFFu;
      centroidKeys[4u + a] = 0u;
    }
  }
}

void boxesPass() {
  uint p = globalIndex();
  // The node keys' empty boxes here rather than in a pass of their own (one dependent dispatch less;
  // a tree has at most as many nodes as primitives).
  if (p < bvhNodeCount(pc.primitiveCount)) nodeKeys[p] = BvhNodeKeys(uvec4(0xFFFFFFFFu), uvec4(0u));
  if (p >= pc.primitiveCount) return;
  vec4 lo, hi;
  bvhPrimitiveBox(p, pc.verticesPerPrimitive, pc.vertexCount, (pc.flags & kBvhFlagSwept) != 0u, lo, hi);
  primBoxes[p] = Aabb(lo, hi);
  if (building()) {
    uvec3 k = uvec3(floatKeyFromBits(floatBitsToUint(bvhCentroid(lo.x, hi.x))),
                    floatKeyFromBits(floatBitsToUint(bvhCentroid(lo.y, hi.y))),
                    floatKeyFromBits(floatBitsToUint(bvhCentroid(lo.z, hi.z))));
    uvec3 kLo = subgroupMin(k);
    uvec3 kHi = subgroupMax(k);
    if (subgroupElect()) {
      atomicMin(centroidKeys[0], kLo.x);
      atomicMin(centroidKeys[1], kLo.y);
      atomicMin(centroidKeys[2], kLo.z);
      atomicMax(centroidKeys[4], kHi.x);
      atomicMax(centroidKeys[5], kHi.y);
      atomicMax(centroidKeys[6], kHi.z);
    }
  }
}

void mortonPass() {
  uint p = globalIndex();
  if (p >= pc.primitiveCount) return;
  vec3 cMin = vec3(uintBitsToFloat(floatBitsFromKey(centroidKeys[0])), uintBitsToFloat(floatBitsFromKey(centroidKeys[1])),
                   uintBitsToFloat(floatBitsFromKey(centroidKeys[2])));
  vec3 cMax = vec3(uintBitsToFloat(floatBitsFromKey(centroidKeys[4])), uintBitsToFloat(floatBitsFromKey(centroidKeys[5])),
                   uintBitsToFloat(floatBitsFromKey(centroidKeys[6])));
  Aabb b = primBoxes[p];
  uint qx = bvhQuantize(bvhCentroid(b.lo.x, b.hi.x), cMin.x, bvhAxisScale(cMin.x, cMax.x));
  uint qy = bvhQuantize(bvhCentroid(b.lo.y, b.hi.y), cMin.y, bvhAxisScale(cMin.y, cMax.y));
  uint qz = bvhQuantize(bvhCentroid(b.lo.z, b.hi.z), cMin.z, bvhAxisScale(cMin.z, cMax.z));
  codes[p] = bvhMorton(qx, qy, qz);
  order[p] = p;
}

void setParent(uint child, uint parent) {
  if ((child & kBvhLeafBit) != 0u) {
    uint prim = child & ~kBvhLeafBit;
    if (prim < pc.primitiveCount) leafParents[prim] = parent;
  } else if (child < bvhNodeCount(pc.primitiveCount)) {
    nodes[child].parent = parent;
  }
}

void hierarchyPass() {
  uint i = globalIndex();
  uint n = pc.primitiveCount;
  if (n == 1u) {
    if (i != 0u) return;
    nodes[0].left = kBvhLeafBit | sortedPrim(0u);
    nodes[0].right = kBvhNone;
    nodes[0].parent = kBvhNone;
    nodes[0].pad = 0u;
    nodeKeys[0].lo.w = 0u;
    nodeKeys[0].hi.w = 0u;
    setParent(kBvhLeafBit | sortedPrim(0u), 0u);
    return;
  }
  if (i + 1u >= n) return;
  uint left, right, first, last;
  bvhSplit(int(i), int(n), left, right, first, last);
  nodeKeys[i].lo.w = first;  // the climb's: the node's range of sorted positions (FINALIZE drops w)
  nodeKeys[i].hi.w = last;
  nodes[i].left = left;
  nodes[i].right = right;
  nodes[i].pad = 0u;
  if (i == 0u) nodes[0].parent = kBvhNone;
  setParent(left, i);
  setParent(right, i);
}

// Folds box keys (lo, hi) into `node` and its ancestors. A component stops climbing at the first
// ancestor that already holds a value at least as tight: whoever put it there climbs on with it (or
// stopped at a still tighter one), so every node ends with the exact min / max over its subtree,
// whatever the order of the atomics. No invocation reads what another wrote in this pass with plain
// stores: no memory barriers, no arrival counters. At most kBvhMaxDepth levels (a valid tree is
// shallower).
void climbFrom(uint node, uvec3 lo, uvec3 hi) {
  uint nodeCount = bvhNodeCount(pc.primitiveCount);
  bvec3 climbLo = bvec3(true), climbHi = bvec3(true);
  for (uint step = 0u; step < kBvhMaxDepth && node < nodeCount; ++step) {
    if (climbLo.x) climbLo.x = atomicMin(nodeKeys[node].lo.x, lo.x) > lo.x;
    if (climbLo.y) climbLo.y = atomicMin(nodeKeys[node].lo.y, lo.y) > lo.y;
    if (climbLo.z) climbLo.z = atomicMin(nodeKeys[node].lo.z, lo.z) > lo.z;
    if (climbHi.x) climbHi.x = atomicMax(nodeKeys[node].hi.x, hi.x) < hi.x;
    if (climbHi.y) climbHi.y = atomicMax(nodeKeys[node].hi.y, hi.y) < hi.y;
    if (climbHi.z) climbHi.z = atomicMax(nodeKeys[node].hi.z, hi.z) < hi.z;
    if (!any(climbLo) && !any(climbHi)) break;
    node = nodes[node].parent;
  }
}

// The build's leaf keys of the workgroup's sorted positions (lo xyz, hi xyz), and their min / max
// over each aligned block of 8 positions (so that no invocation folds more than 46 entries).
const uint kBlocks = kBvhGroupSize / 8u;
shared uint leafKeys[6u * kBvhGroupSize];
shared uint blockKeys[6u * kBlocks];

// Folds leaf entry k, or block entry k, into (lo, hi).
void foldLeaf(uint k, inout uvec3 lo, inout uvec3 hi) {
  lo = min(lo, uvec3(leafKeys[k], leafKeys[kBvhGroupSize + k], leafKeys[2u * kBvhGroupSize + k]));
  hi = max(hi, uvec3(leafKeys[3u * kBvhGroupSize + k], leafKeys[4u * kBvhGroupSize + k], leafKeys[5u * kBvhGroupSize + k]));
}
void foldBlock(uint k, inout uvec3 lo, inout uvec3 hi) {
  lo = min(lo, uvec3(blockKeys[k], blockKeys[kBlocks + k], blockKeys[2u * kBlocks + k]));
  hi = max(hi, uvec3(blockKeys[3u * kBlocks + k], blockKeys[4u * kBlocks + k], blockKeys[5u * kBlocks + k]));
}

// Whether internal node `node` lies inside the sorted positions [s, e]: its range (HIERARCHY wrote
// it into the keys' w) is.
bool nodeInside(uint node, uint s, uint e) {
  return node < bvhNodeCount(pc.primitiveCount) && nodeKeys[node].lo.w >= s && nodeKeys[node].hi.w <= e;
}

// Refit: invocation p climbs from leaf p to the root (a refit's tree has no known leaf order).
// Build: invocation i takes the i-th leaf in sorted order, so a workgroup holds the consecutive
// leaves s..e, their keys in shared memory. A node whose range lies inside [s, e] has only this
// workgroup's leaves below it: the invocation of the same index computes its box from shared memory
// (whole blocks of 8 leaves, leaves at the ends) and stores it (plain stores; no other invocation touches it). Only the nodes above those climb
// with atomics: from the parent of each largest inside node (its box) and of each leaf whose parent
// is not inside. So the atomics go to the few nodes on the workgroup range's boundary paths and
// above (tests/bvh/bvh_climb_model_test.cpp counts them).
void climbPass() {
  uint i = globalIndex();
  uint n = pc.primitiveCount;
  if (!building()) {
    if (i >= n) return;
    Aabb b = primBoxes[i];
    climbFrom(leafParents[i], floatKey(b.lo).xyz, floatKey(b.hi).xyz);
    return;
  }
  uint local = gl_LocalInvocationIndex;
  uint s = i - local;
  uint e = min(s + kBvhGroupSize, n) - 1u;
  uint p = min(sortedPrim(min(i, n - 1u)), n - 1u);
  Aabb b = primBoxes[p];
  uvec3 lo = floatKey(b.lo).xyz;
  uvec3 hi = floatKey(b.hi).xyz;
  leafKeys[local] = lo.x;
  leafKeys[kBvhGroupSize + local] = lo.y;
  leafKeys[2u * kBvhGroupSize + local] = lo.z;
  leafKeys[3u * kBvhGroupSize + local] = hi.x;
  leafKeys[4u * kBvhGroupSize + local] = hi.y;
  leafKeys[5u * kBvhGroupSize + local] = hi.z;
  barrier();
  if (local < kBlocks) {  // blocks past the last leaf are never folded whole
    uvec3 bLo = uvec3(0xFFFFFFFFu), bHi = uvec3(0u);
    for (uint k = 8u * local; k < 8u * local + 8u && k <= e - s; ++k) foldLeaf(k, bLo, bHi);
    blockKeys[local] = bLo.x;
    blockKeys[kBlocks + local] = bLo.y;
    blockKeys[2u * kBlocks + local] = bLo.z;
    blockKeys[3u * kBlocks + local] = bHi.x;
    blockKeys[4u * kBlocks + local] = bHi.y;
    blockKeys[5u * kBlocks + local] = bHi.z;
  }
  barrier();
  if (i >= n) return;
  if (nodeInside(i, s, e)) {
    uint first = nodeKeys[i].lo.w - s, last = nodeKeys[i].hi.w - s;  // <= e - s < kBvhGroupSize
    uvec3 nLo = uvec3(0xFFFFFFFFu), nHi = uvec3(0u);
    uint k = first;
    for (; k <= last && (k & 7u) != 0u; ++k) foldLeaf(k, nLo, nHi);
    for (; k + 7u <= last; k += 8u) foldBlock(k / 8u, nLo, nHi);
    for (; k <= last; ++k) foldLeaf(k, nLo, nHi);
    nodeKeys[i].lo.x = nLo.x;  // component stores: w (the range) stays as other invocations read it
    nodeKeys[i].lo.y = nLo.y;
    nodeKeys[i].lo.z = nLo.z;
    nodeKeys[i].hi.x = nHi.x;
    nodeKeys[i].hi.y = nHi.y;
    nodeKeys[i].hi.z = nHi.z;
    uint parent = nodes[i].parent;
    if (!nodeInside(parent, s, e)) climbFrom(parent, nLo, nHi);
  }
  uint leafParent = leafParents[p];
  if (!nodeInside(leafParent, s, e)) climbFrom(leafParent, lo, hi);
}

void finalizePass() {
  uint i = globalIndex();
  if (i >= bvhNodeCount(pc.primitiveCount)) return;
  BvhNodeKeys k = nodeKeys[i];
  nodes[i].lo = vec4(floatFromKey(k.lo).xyz, 0.0);
  nodes[i].hi = vec4(floatFromKey(k.hi).xyz, 0.0);
}

void main() {
  if (kPass == kBvhPassInit) {
    initPass();
  } else if (kPass == kBvhPassBoxes) {
    boxesPass();
  } else if (kPass == kBvhPassMorton) {
    mortonPass();
  } else if (kPass == kBvhPassHierarchy) {
    hierarchyPass();
  } else if (kPass == kBvhPassClimb) {
    climbPass();
  } else {
    finalizePass();
  }
}
