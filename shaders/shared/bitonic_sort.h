// A workgroup's bitonic sort of (key, item) pairs in shared memory, written once for the fused paths
// of self collision (shaders/self_collision.comp) and inter collision (shaders/inter_collision.comp).
// GLSL only: the includer first declares the shared arrays
//   shared uint sSortKey[];   shared uint sSortItem[];
// (at least `width` elements each). Pairs are distinct (key, item), so the result is the one order
// by (key, item): the order a stable sort by key of items numbered in place gives (the radix sort's).
// No include guard (GLSL at file scope, once per shader).

// Whether (key a, item a) sorts after (key b, item b).
bool sortsAfter(uint ka, uint ia, uint kb, uint ib) { return ka > kb || (ka == kb && ia > ib); }

// One compare-exchange of the bitonic network: slots a < b end in order, ascending where bit `size`
// of a is clear.
void compareExchange(uint a, uint b, uint size) {
  uint ka = sSortKey[a], kb = sSortKey[b], ia = sSortItem[a], ib = sSortItem[b];
  if (sortsAfter(ka, ia, kb, ib) == ((a & size) == 0u)) {
    sSortKey[a] = kb;
    sSortKey[b] = ka;
    sSortItem[a] = ib;
    sSortItem[b] = ia;
  }
}

// Sorts the first `width` slots (a power of two; padding slots hold all ones and sort last) ascending
// by (key, item). Called by every invocation of the workgroup (local index L of groupSize), after a
// barrier that makes the slots visible; ends with a barrier when width > 1. A stage whose stride is
// below the block of 2 * pairs-per-invocation slots is done block by block, each invocation in its
// own block, so consecutive such stages need no barrier between them; wider stages spread their
// pairs over the workgroup, with a barrier after each.
void bitonicSortShared(uint width, uint L, uint groupSize) {
  uint pairsPer = width / 2u / groupSize;  // 0 below 2 x groupSize slots: no local stages
  uint block = 2u * pairsPer;
  for (uint size = 2u; size <= width; size *= 2u) {
    for (uint stride = size / 2u; stride > 0u; stride /= 2u) {
      bool local = stride < block;
      if (local) {
        for (uint t = 0u; t < pairsPer; ++t) {
          uint a = L * block + 2u * stride * (t / stride) + t % stride;
          compareExchange(a, a + stride, size);
        }
      } else {
        for (uint t = L; t < width / 2u; t += groupSize) {
          uint a = 2u * stride * (t / stride) + t % stride;
          compareExchange(a, a + stride, size);
        }
      }
      // The next stage: stride / 2 of this size, or the next size's first (stride = size).
      bool last = stride == 1u && size == width;
      bool nextLocal = stride > 1u ? stride / 2u < block : size < block;
      if (!local || !nextLocal || last) barrier();  // (uniform: sizes, strides and block are)
    }
  }
}
