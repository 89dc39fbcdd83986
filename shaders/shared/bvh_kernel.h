// The BVH stage's per-primitive and per-node work, written once. GLSL includes it at file scope
// (shaders/bvh.comp); C++ includes it inside the body of a struct (src/cpu/bvh.cpp), so that the
// functions become members. The includer first provides:
//   vec4 vertexAt(uint v)       current position of vertex v (v < vertexCount)
//   vec4 prevVertexAt(uint v)   previous position (read only for swept boxes)
//   uint indexAt(uint k)        element k of the index buffer (k < primitiveCount * verticesPerPrimitive)
//   uint sortedCode(uint i)     Morton code of the i-th leaf in sorted order (i < primitiveCount)
//   uint sortedPrim(uint i)     its primitive index
// No namespace and no include guard.

// The box of primitive p over its vertices (and their previous positions when swept); lo.w = hi.w = 0.
// An index beyond the vertex array (possible only on the device, where the host cannot check the
// index buffer) reads the last vertex instead: never out of bounds.
VKC_FN void bvhPrimitiveBox(uint p, uint verticesPerPrimitive, uint vertexCount, bool swept, VKC_OUT(vec4) lo,
                            VKC_OUT(vec4) hi) {
  uint first = p * verticesPerPrimitive;
  uint v = min(indexAt(first), vertexCount - 1u);
  lo = vertexAt(v);
  lo.w = 0.0f;
  hi = lo;
  if (swept) {
    vec4 q = prevVertexAt(v);
    lo = bvhMin4(lo, q);
    hi = bvhMax4(hi, q);
  }
  for (uint k = 1u; k < verticesPerPrimitive; ++k) {
    v = min(indexAt(first + k), vertexCount - 1u);
    vec4 q = vertexAt(v);
    lo = bvhMin4(lo, q);
    hi = bvhMax4(hi, q);
    if (swept) {
      q = prevVertexAt(v);
      lo = bvhMin4(lo, q);
      hi = bvhMax4(hi, q);
    }
  }
}

// Karras' delta: the length of the common prefix of the keys (code, index) of leaves i and j, or -1
// when j is outside [0, n). Equal codes compare their sorted positions (32 + the prefix of i ^ j).
VKC_FN int bvhDelta(int i, int j, int n) {
  if (j < 0 || j >= n) return -1;
  uint a = sortedCode(uint(i));
  uint b = sortedCode(uint(j));
  if (a == b) return 32 + (31 - findMSB(uint(i ^ j)));
  return 31 - findMSB(a ^ b);
}

// Child reference of sorted position `pos`: the leaf when the child's range is that one leaf.
VKC_FN uint bvhChildRef(uint pos, bool leaf) { return leaf ? (kBvhLeafBit | sortedPrim(pos)) : pos; }

// Internal node i (0 <= i < n - 1, n >= 2) of Karras' hierarchy over the sorted leaves: its range's
// direction and far end, then the split inside it; the left and right child references and the
// range of sorted positions [first, last] under it. Every loop here runs at most 32 times (lengths
// grow or halve within a 31-bit range).
VKC_FN void bvhSplit(int i, int n, VKC_OUT(uint) left, VKC_OUT(uint) right, VKC_OUT(uint) first, VKC_OUT(uint) last) {
  int d = bvhDelta(i, i + 1, n) - bvhDelta(i, i - 1, n) >= 0 ? 1 : -1;
  int deltaMin = bvhDelta(i, i - d, n);
  // Upper bound of the range's length by doubling.
  int lmax = 2;
  for (uint guard = 0u; guard < 32u && bvhDelta(i, i + lmax * d, n) > deltaMin; ++guard) lmax *= 2;
  // The length by binary search.
  int l = 0;
  for (int t = lmax / 2; t >= 1; t /= 2) {
    if (bvhDelta(i, i + (l + t) * d, n) > deltaMin) l += t;
  }
  int j = i + l * d;
  int deltaNode = bvhDelta(i, j, n);
  // The split: the last position whose key shares more than deltaNode bits with i's.
  // (For l == 1 the split is i's own position: s stays 0.)
  int s = 0;
  int t = l;
  for (uint guard = 0u; guard < 32u && t > 1; ++guard) {
    t = (t + 1) / 2;
    if (bvhDelta(i, i + (s + t) * d, n) > deltaNode) s += t;
  }
  int gamma = i + s * d + min(d, 0);
  first = uint(min(i, j));
  last = uint(max(i, j));
  left = bvhChildRef(uint(gamma), min(i, j) == gamma);
  right = bvhChildRef(uint(gamma + 1), max(i, j) == gamma + 1);
}

