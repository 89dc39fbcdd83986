// The BVH stage's tree layout, bindings, push constants and pure arithmetic (shaders/bvh.comp,
// src/cpu/bvh.cpp, src/vulkan/bvh.cpp). A linear BVH after Karras 2012 ("Maximizing parallelism in
// the construction of BVHs, octrees and k-d trees").
//
// The tree of N >= 1 primitives (triangles; segments or tetrahedra with verticesPerPrimitive 2 or 4):
//   nodes[bvhNodeCount(N)]  internal nodes, BvhNode. The root is node 0. N >= 2: N - 1 internal nodes,
//                           each with two children. N == 1: one node whose left child is the leaf of
//                           primitive 0 and whose right child is kBvhNone.
//   A child reference is either an internal node index (< kBvhLeafBit) or kBvhLeafBit | p, the leaf of
//   primitive p (the primitive's index in the host's index buffer). Every primitive is in exactly
//   one leaf; leaves are ordered left to right by (Morton code, primitive index).
//   primBoxes[N]            Aabb of each primitive (indexed by primitive index): the leaf boxes.
//   leafParents[N]          the internal node whose child is primitive p's leaf.
//   A node's box (lo, hi; w = 0) is the exact union of its children's boxes.
// Depth: each child's range of (Morton code, index) keys shares a longer common prefix than its
// parent's (Karras' split is at the first differing bit), and the 62-bit key (30-bit code, 32-bit
// index; the top 2 bits of the 32-bit code word are 0) has at most 62 prefix lengths, so no leaf is
// deeper than kBvhMaxDepth. The bottom-up climb is bounded by it.
#ifndef VKC_SHARED_BVH_H
#define VKC_SHARED_BVH_H
#include "common.h"
#include "float_order.h"

VKC_NAMESPACE_BEGIN
#ifdef __cplusplus
inline int findMSB(uint x) { return x == 0u ? -1 : 31 - std::countl_zero(x); }
#endif

VKC_CONSTANT(uint, kBvhGroupSize, 256u);
VKC_CONSTANT(uint, kBvhLeafBit, 0x80000000u);  // child reference of a leaf: kBvhLeafBit | primitive
VKC_CONSTANT(uint, kBvhNone, 0xFFFFFFFFu);     // no node: the root's parent, the 1-primitive root's right child
VKC_CONSTANT(uint, kBvhMortonBits, 30u);       // 10 bits per axis, x in the highest of each triple
VKC_CONSTANT(uint, kBvhMaxDepth, 64u);         // > the deepest leaf (see the top of this file)
VKC_CONSTANT(uint, kBvhMinVerticesPerPrimitive, 2u);
VKC_CONSTANT(uint, kBvhMaxVerticesPerPrimitive, 4u);
VKC_CONSTANT(uint, kBvhMaxPrimitives, 0x20000000u);  // 2^29: Karras' index arithmetic stays in int32

// Pass selected by specialization constant 0.
VKC_CONSTANT(uint, kBvhPassInit, 0u);       // a build only, one workgroup: centroid box = empty
VKC_CONSTANT(uint, kBvhPassBoxes, 1u);      // primitive boxes; node keys = the empty box; build: centroid box (atomic min/max of keys)
VKC_CONSTANT(uint, kBvhPassMorton, 2u);     // build: Morton codes and primitive indices (then the radix sort)
VKC_CONSTANT(uint, kBvhPassHierarchy, 3u);  // build: Karras split per internal node; children, parents, ranges
VKC_CONSTANT(uint, kBvhPassClimb, 4u);      // node keys: stored inside a workgroup's leaves, else atomic min / max
VKC_CONSTANT(uint, kBvhPassFinalize, 5u);   // node keys -> node boxes

VKC_CONSTANT(uint, kBvhBindingVertices, 0u);      // vec4[vertexCount] (xyz; w ignored)
VKC_CONSTANT(uint, kBvhBindingPrevVertices, 1u);  // vec4[vertexCount] previous positions (swept boxes)
VKC_CONSTANT(uint, kBvhBindingIndices, 2u);       // uint[N * verticesPerPrimitive]
VKC_CONSTANT(uint, kBvhBindingPrimBoxes, 3u);     // Aabb[N]
VKC_CONSTANT(uint, kBvhBindingCentroid, 4u);      // uint[8]: keys of the centroid box, lo xyz (0..2), hi xyz (4..6)
VKC_CONSTANT(uint, kBvhBindingCodes, 5u);         // uint[N] Morton codes (sorted in place)
VKC_CONSTANT(uint, kBvhBindingOrder, 6u);         // uint[N] primitive indices (sorted with the codes)
VKC_CONSTANT(uint, kBvhBindingNodes, 7u);         // BvhNode[bvhNodeCount(N)]
VKC_CONSTANT(uint, kBvhBindingLeafParents, 8u);   // uint[N]
VKC_CONSTANT(uint, kBvhBindingNodeKeys, 9u);      // BvhNodeKeys[bvhNodeCount(N)] node boxes as keys
VKC_CONSTANT(uint, kBvhBindingCount, 10u);

// An internal node: its box and its links (see the top of this file). 48 bytes.
struct BvhNode {
  vec4 lo;      // xyz: the box's lower corner; w = 0
  vec4 hi;      // xyz: the box's upper corner; w = 0
  uint left;    // child reference: node index, or kBvhLeafBit | primitive index
  uint right;   // child reference; kBvhNone only in the 1-primitive tree
  uint parent;  // parent node index; kBvhNone for the root (node 0)
  uint pad;     // 0
};
VKC_CHECK_LAYOUT(BvhNode, 48);
VKC_CHECK_OFFSET(BvhNode, hi, 16);
VKC_CHECK_OFFSET(BvhNode, left, 32);
VKC_CHECK_OFFSET(BvhNode, parent, 40);

// A node's box during the climb: order-preserving keys (float_order.h) of lo (min) and hi (max). In
// a build, HIERARCHY writes the node's range of sorted leaf positions into lo.w (first), hi.w (last).
struct BvhNodeKeys {
  uvec4 lo;
  uvec4 hi;
};
VKC_CHECK_LAYOUT(BvhNodeKeys, 32);

VKC_CONSTANT(uint, kBvhFlagSwept, 1u);  // boxes cover the previous vertex positions too
VKC_CONSTANT(uint, kBvhFlagBuild, 2u);  // the boxes pass also reduces the centroid box

struct BvhPush {
  uint primitiveCount;       // N >= 1
  uint vertexCount;          // elements bound at kBvhBindingVertices (and prev, when swept)
  uint verticesPerPrimitive; // 2..4
  uint flags;                // kBvhFlag*
};
VKC_CHECK_LAYOUT(BvhPush, 16);

// Internal nodes of an N-primitive tree (N >= 1).
VKC_FN uint bvhNodeCount(uint n) { return n > 1u ? n - 1u : 1u; }

// Flush-to-zero: a denormal (or zero of either sign) becomes +0. The Morton arithmetic flushes every
// operand and result itself, so that a device that flushes denormals and the CPU, which does not,
// compute the same bits (add, sub and mul are correctly rounded in Vulkan and IEEE 754).
VKC_FN float bvhFtz(float x) { return (floatBitsToUint(x) & 0x7F800000u) == 0u ? 0.0f : x; }

// Exact min / max through the order-preserving keys (-0 < +0): a selection, never arithmetic.
VKC_FN float bvhMin(float a, float b) {
  return floatKeyFromBits(floatBitsToUint(b)) < floatKeyFromBits(floatBitsToUint(a)) ? b : a;
}
VKC_FN float bvhMax(float a, float b) {
  return floatKeyFromBits(floatBitsToUint(b)) > floatKeyFromBits(floatBitsToUint(a)) ? b : a;
}
VKC_FN vec4 bvhMin4(vec4 a, vec4 b) { return vec4(bvhMin(a.x, b.x), bvhMin(a.y, b.y), bvhMin(a.z, b.z), 0.0f); }
VKC_FN vec4 bvhMax4(vec4 a, vec4 b) { return vec4(bvhMax(a.x, b.x), bvhMax(a.y, b.y), bvhMax(a.z, b.z), 0.0f); }

// The centroid coordinate of a box on one axis, flushed: lo / 2 + hi / 2 (no overflow; -0 never
// comes out, so keys of centroids compare like their values).
VKC_FN float bvhCentroid(float lo, float hi) {
  VKC_PRECISE float a = bvhFtz(0.5f * bvhFtz(lo));
  VKC_PRECISE float b = bvhFtz(0.5f * bvhFtz(hi));
  VKC_PRECISE float c = a + b;
  return bvhFtz(c);
}

// The power of two that maps the centroid box's extent on one axis into [0, 1024): 2^(10 - e) with
// extent < 2^e. 0 where the extent is below 2^-117 (a flat axis: every code gets 0 there). An
// infinite extent (centroids spanning more than the float range) gives 2^-119.
VKC_FN float bvhAxisScale(float cMin, float cMax) {
  VKC_PRECISE float extent = cMax - cMin;
  uint expField = (floatBitsToUint(bvhFtz(extent)) >> 23u) & 0xFFu;
  if (expField < 9u) return 0.0f;
  // extent < 2^(expField - 126), so scale = 2^(136 - expField) = float bits (263 - expField) << 23
  return uintBitsToFloat((263u - expField) << 23u);
}

// The 10-bit cell of centroid coordinate c on an axis: floor((c - cMin) * scale) in [0, 1023]. NaN
// gives 0 and +inf 1023 (no undefined float-to-uint conversion).
VKC_FN uint bvhQuantize(float c, float cMin, float scale) {
  VKC_PRECISE float d = bvhFtz(c - cMin);
  VKC_PRECISE float t = d * scale;
  if (!(t >= 1.0f)) return 0u;
  return t < 1024.0f ? uint(t) : 1023u;
}

// 10 bits spread to every third bit (bit i -> bit 3i).
VKC_FN uint bvhSpread10(uint v) {
  v &= 0x3FFu;
  v = (v | (v << 16u)) & 0x030000FFu;
  v = (v | (v << 8u)) & 0x0300F00Fu;
  v = (v | (v << 4u)) & 0x030C30C3u;
  v = (v | (v << 2u)) & 0x09249249u;
  return v;
}

VKC_FN uint bvhMorton(uint x, uint y, uint z) { return (bvhSpread10(x) << 2u) | (bvhSpread10(y) << 1u) | bvhSpread10(z); }

VKC_NAMESPACE_END
#endif  // VKC_SHARED_BVH_H
