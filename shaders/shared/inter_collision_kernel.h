// The narrow-phase gather of inter collision, written once. Like shared/self_collision_kernel.h
// (which it includes for the column search), GLSL includes it at file scope and C++ inside the body
// of a struct. The includer first provides self collision's accessors (sortedKey, sortedPos,
// sortedRest, emitPair) and:
//   uint sortedValue(uint slot)        the marked index at a sorted slot
//   InterMarked markedAt(uint index)   a marked particle
// No namespace and no include guard.

#include "self_collision_kernel.h"

// Gathers the neighbours of the particle at sorted slot k among all `count` sorted slots: self
// collision's nine columns and sweep reach, each column in sorted order, keeping only particles of
// other cloths that the filter allows. Returns their number; `sum` is the summed correction
// (selfPairCorrection; selfApply turns it into the new position).
VKC_FN uint interGather(uint k, uint count, SelfGrid g, float d, float stiffness, VKC_OUT(vec3) sum) {
  InterMarked a = markedAt(sortedValue(k));
  uint key = sortedKey(k);
  VKC_PRECISE float d2 = d * d;
  VKC_PRECISE vec3 acc = vec3(0.0f);
  uint n = 0u;
  uint from = k;  // where to search from, as in selfGather
  for (uint c = 0u; c < 9u; ++c) {
    uvec2 r = selfColumnRange(key, c, g.axes.w);
    uint m = selfLowerBoundFrom(0u, count, c % 3u == 0u ? k : from, r.x);
    for (; m < count; ++m) {
      if (sortedKey(m) > r.y) break;
      InterMarked b = markedAt(sortedValue(m));
      if (b.cloth == a.cloth || !interFilterAllows(a.group, a.mask, b.group, b.mask)) continue;
      if (!selfIsPair(a.position, b.position, vec4(0.0f), vec4(0.0f), d2, false)) continue;
      acc += selfPairCorrection(a.position, b.position, k, m, g.axes.x, d, stiffness);
      ++n;
    }
    from = m;
  }
  sum = acc;
  return n;
}
