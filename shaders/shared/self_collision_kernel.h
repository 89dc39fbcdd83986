// The neighbour gather of self collision, written once. GLSL includes it at file scope
// (shaders/self_collision.comp); C++ includes it inside the body of a struct
// (src/cpu/self_collision.cpp) so that the functions become members. The includer first provides:
//   uint sortedKey(uint slot)          the cell key of a sorted slot
//   vec4 sortedPos(uint slot)          its particle's position and inverse mass
//   vec4 sortedRest(uint slot)         its particle's rest position (read only with rest positions)
//   void emitPair(uint index, uint slot)  debug output: a neighbour's slot
// No namespace and no include guard.

// The first slot in [begin, end) whose key is >= key (keys are sorted within a cloth's slots).
VKC_FN uint selfLowerBound(uint begin, uint end, uint key) {
  while (begin < end) {
    uint mid = begin + (end - begin) / 2u;
    if (sortedKey(mid) < key) begin = mid + 1u; else end = mid;
  }
  return begin;
}

// The same slot, searched outward from `hint` (begin <= hint <= end): galloping steps of 1, 2, 4, ...
// bracket the answer, then a binary search. A neighbour column's range is usually close to the slot
// itself in sorted order, so this reads far fewer keys than a search over the whole cloth.
VKC_FN uint selfLowerBoundFrom(uint begin, uint end, uint hint, uint key) {
  uint lo = begin, hi = end;  // the answer lies in [lo, hi]
  uint step = 1u;
  if (hint < end && sortedKey(hint) < key) {  // after hint
    lo = hint + 1u;
    for (;;) {
      uint probe = lo + step - 1u;
      if (probe >= end) break;
      if (sortedKey(probe) >= key) {
        hi = probe;
        break;
      }
      lo = probe + 1u;
      step *= 2u;
    }
  } else {  // at or before hint: hint == end or sortedKey(hint) >= key
    hi = hint;
    for (;;) {
      if (hi - begin < step) break;
      uint probe = hi - step;
      if (sortedKey(probe) < key) {
        lo = probe + 1u;
        break;
      }
      hi = probe;
      step *= 2u;
    }
  }
  return selfLowerBound(lo, hi, key);
}

// Gathers slot k's neighbours among its cloth's sorted slots [begin, end): the nine columns in order
// 0..8, each column's slots in sorted order. Returns their number; `sum` is the summed correction.
// With `emit`, neighbour n's slot goes to emitPair(outBase + n, slot).
VKC_FN uint selfGather(uint k, uint begin, uint end, SelfGrid g, float d, float stiffness, bool useRest, bool emit,
                       uint outBase, VKC_OUT(vec3) sum) {
  uint key = sortedKey(k);
  vec4 pi = sortedPos(k);
  vec4 ri = useRest ? sortedRest(k) : vec4(0.0f);
  VKC_PRECISE float d2 = d * d;
  VKC_PRECISE vec3 acc = vec3(0.0f);
  uint count = 0u;
  // The three columns of a row are consecutive in key order: the second and third start at or after
  // where the scan of the one before stopped, so their searches start there (short gallops); a row's
  // first column is searched from k (its own row: nearby; the rows above and below: a longer gallop).
  uint from = k;
  for (uint c = 0u; c < 9u; ++c) {
    uvec2 r = selfColumnRange(key, c, g.axes.w);
    uint m = selfLowerBoundFrom(begin, end, c % 3u == 0u ? k : from, r.x);
    for (; m < end; ++m) {
      if (sortedKey(m) > r.y) break;
      if (m == k) continue;
      vec4 pj = sortedPos(m);
      vec4 rj = useRest ? sortedRest(m) : vec4(0.0f);
      if (!selfIsPair(pi, pj, ri, rj, d2, useRest)) continue;
      if (emit) emitPair(outBase + count, m);
      acc += selfPairCorrection(pi, pj, k, m, g.axes.x, d, stiffness);
      ++count;
    }
    from = m;  // (<= end: the next column's keys are all above r.y)
  }
  sum = acc;
  return count;
}
