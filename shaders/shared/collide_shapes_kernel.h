// The per-particle, per-mask-word and per-convex logic of shape collision, written once. GLSL
// includes it at file scope; C++ includes it inside the body of a struct (src/cpu/collide_shapes.cpp)
// so that the functions become members. Either way the includer first provides these accessors:
//   vec4 preparedSphere(uint sphere, uint atEnd)   the global sphere at the iteration's start/end
//   Cone preparedCone(uint capsule, uint atEnd)    the global capsule's cone at the start/end
//   vec4 preparedPlane(uint plane, uint atEnd)     the global plane at the start/end (normalized)
//   CapsuleSpheres capsuleSpheres(uint capsule)    global sphere indices of a global capsule
//   ShapeConvex convexAt(uint convex)              a global convex
//   uint convexPlane(uint index)                   a word of the convexes' plane index buffer
//   uint convexBit(uint index)                     a word of the convex bits buffer (grid pass output)
//   uint gridMask(uint index)                      a word of the masks buffer
//   uint sphereCapsule(uint index)                 a word of the sphere -> capsules CSR buffer
// No namespace and no include guard: the struct may include it once, GLSL once.

// Index of a grid row's word: set 0 "first" (bit in cells lo..7), 1 "last" (cells 0..hi).
VKC_FN uint maskIndex(ShapeCloth c, uint set, uint axis, uint cell, uint word) {
  return c.firstMaskWord + ((set * 3u + axis) * kGridCells + cell) * c.maskWords + word;
}

// The bits of word `word` that stand for shapes with index below n.
VKC_FN uint bitsBelow(uint word, uint n) {
  uint first = word * 32u;
  if (n >= first + 32u) return 0xFFFFFFFFu;
  if (n <= first) return 0u;
  return (1u << (n - first)) - 1u;
}

// One word of the grid (computed from scratch, so that every word is independent and the result
// does not depend on any order): bit b stands for shape word*32 + b of the cloth.
VKC_FN uint buildMaskWord(ShapeCloth c, ShapeGrid g, uint ccd, uint set, uint axis, uint cell, uint word) {
  uint bits = 0u;
  float lower = g.lower[axis], scale = g.scale[axis];
  for (uint b = 0u; b < 32u; ++b) {
    uint shape = word * 32u + b;
    bool inSpan = false;
    if (shape < c.sphereCount + c.capsuleCount) {
      // A capsule's bit is set where either of its spheres' bits is (per set, so the merged span of a
      // capsule is the hull of its spheres' spans).
      uint count = shape < c.sphereCount ? 1u : 2u;
      for (uint k = 0u; k < count; ++k) {
        uint sphere = c.firstSphere + shape;
        if (shape >= c.sphereCount) {
          CapsuleSpheres caps = capsuleSpheres(c.firstCapsule + shape - c.sphereCount);
          sphere = k == 0u ? caps.sphere0 : caps.sphere1;
        }
        vec4 s1 = preparedSphere(sphere, 1u);
        uvec2 cells = sphereCells(s1[axis], s1.w, lower, scale);
        if (ccd != 0u) {
          vec4 s0 = preparedSphere(sphere, 0u);
          uvec2 c0 = sphereCells(s0[axis], s0.w, lower, scale);
          cells = uvec2(min(cells.x, c0.x), max(cells.y, c0.y));
        }
        inSpan = inSpan || (set == 0u ? cell >= cells.x : cell <= cells.y);
      }
    }
    if (inSpan) bits |= 1u << b;
  }
  return bits;
}

// The candidate shapes of a word for a particle whose cells are [cellLo, cellHi] per axis: a shape
// is a candidate where its span overlaps that range on all three axes.
VKC_FN uint candidates(ShapeCloth c, uvec4 cellLo, uvec4 cellHi, uint word) {
  uint bits = 0xFFFFFFFFu;
  for (uint axis = 0u; axis < 3u; ++axis) {
    bits &= gridMask(maskIndex(c, 0u, axis, cellHi[axis], word)) & gridMask(maskIndex(c, 1u, axis, cellLo[axis], word));
  }
  return bits;
}

// Whether the sphere (local index) belongs to a capsule: then the capsule, the hull of its spheres,
// collides it (capsuleContact, capsuleSweep), and the sphere alone does not. A capsule is a candidate
// wherever one of its spheres is (its mask bits are the union of theirs), so no contact is lost.
VKC_FN bool sphereInCapsule(ShapeCloth c, uint sphere) {
  return sphereCapsule(c.firstSphereCapsule + sphere + 1u) != sphereCapsule(c.firstSphereCapsule + sphere);
}

// Whether convex x can hold a point of the particles' box [lo, hi]: not when one of its planes keeps
// the box outside at the iteration's end and, with CCD, also at its start (a path between two points
// outside a plane at both ends stays outside it: the signed distance is linear along the path). The
// grid pass keeps the convexes that can (conservatively, see planeExcludesBox).
VKC_FN bool convexReachesBox(ShapeConvex x, vec3 lo, vec3 hi, uint ccd) {
  vec3 centre = (lo + hi) * 0.5f, extent = (hi - lo) * 0.5f;
  for (uint k = 0u; k < x.planeCount; ++k) {
    uint plane = convexPlane(x.firstIndex + k);
    bool excluded = planeExcludesBox(preparedPlane(plane, 1u), centre, extent);
    if (ccd != 0u) excluded = excluded && planeExcludesBox(preparedPlane(plane, 0u), centre, extent);
    if (excluded) return false;
  }
  return true;
}

// Bit b of the cloth's convex word `word`: convex word*32 + b can reach the particles' box.
VKC_FN uint buildConvexWord(ShapeCloth c, vec3 lo, vec3 hi, uint ccd, uint word) {
  uint bits = 0u;
  for (uint b = 0u; b < 32u; ++b) {
    uint convex = word * 32u + b;
    if (convex < c.convexCount && convexReachesBox(convexAt(c.firstConvex + convex), lo, hi, ccd)) bits |= 1u << b;
  }
  return bits;
}

// Discrete convex contact: when p is inside every plane of x, returns the plane (global index) with
// the largest signed distance (the first on ties) and the delta that puts p on it along its normal;
// otherwise kNoPlane and a zero delta.
VKC_FN uint convexContact(ShapeConvex x, vec3 p, VKC_OUT(vec3) delta) {
  delta = vec3(0.0f);
  uint best = kNoPlane;
  float bestDistance = 0.0f;
  bool inside = true;
  for (uint k = 0u; inside && k < x.planeCount; ++k) {
    uint plane = convexPlane(x.firstIndex + k);
    float distance = planeDistance(preparedPlane(plane, 1u), p);
    inside = distance < 0.0f;
    if (inside && (best == kNoPlane || distance > bestDistance)) {
      best = plane;
      bestDistance = distance;
    }
  }
  if (!inside) return kNoPlane;
  delta = vec3(preparedPlane(best, 1u)) * -bestDistance;
  return best;
}

// Continuous convex contact for a particle moving p0 -> p1 while the planes move from their start to
// their end. Per plane the signed distance is interpolated linearly, a (start: p0 against the start
// plane) to b (end: p1 against the end plane), exact for planes that translate; the point is inside
// that plane from t = a / (a - b) on (a >= 0 > b: it enters) or until then (a < 0 <= b: it leaves).
// The path is inside the convex over the intersection [tIn, tOut] of the planes' intervals; when it
// enters (tIn is a plane's entry, tIn < tOut) returns that plane (the first on ties) and the end
// position pushed back onto the plane's end position along its normal; otherwise kNoPlane and p1.
VKC_FN uint convexSweep(ShapeConvex x, vec3 p0, vec3 p1, VKC_OUT(vec3) target) {
  target = p1;
  float tIn = 0.0f, tOut = 1.0f, entryDistance = 0.0f;
  uint entry = kNoPlane;
  bool possible = true;  // false once a plane keeps the path outside throughout
  for (uint k = 0u; possible && k < x.planeCount; ++k) {
    uint plane = convexPlane(x.firstIndex + k);
    float a = planeDistance(preparedPlane(plane, 0u), p0);
    float b = planeDistance(preparedPlane(plane, 1u), p1);
    if (a < 0.0f) {
      if (b >= 0.0f) tOut = min(tOut, a / (a - b));  // leaves (inside throughout: no limit)
    } else if (!(b < 0.0f)) {
      possible = false;  // outside throughout
    } else {
      float t = a / (a - b);
      if (entry == kNoPlane || t > tIn) {
        tIn = t;
        entry = plane;
        entryDistance = b;
      }
    }
  }
  if (!possible || entry == kNoPlane || !(tIn < tOut)) return kNoPlane;
  target = p1 - vec3(preparedPlane(entry, 1u)) * entryDistance;
  return entry;
}

// A plane's velocity at p for friction: the motion over the iteration of its point nearest to p,
// (p - d1 n1) - (p - d0 n0).
VKC_FN vec3 planeVelocity(uint plane, vec3 p) {
  vec4 e0 = preparedPlane(plane, 0u), e1 = preparedPlane(plane, 1u);
  return vec3(e0) * planeDistance(e0, p) - vec3(e1) * planeDistance(e1, p);
}

// The spheres and capsules (candidates from the grid; capsules first, then the spheres of no capsule).
VKC_FN void collideRoundShapes(ShapeCloth c, ShapeGrid g, bool ccd, bool wantVelocity, vec3 pos, vec3 old,
                               VKC_INOUT(ContactSum) sum) {
  vec3 lo = ccd ? min(pos, old) : pos, hi = ccd ? max(pos, old) : pos;
  uvec4 cellLo = uvec4(0u), cellHi = uvec4(0u);
  for (uint axis = 0u; axis < 3u; ++axis) {
    float a = gridCoord(lo[axis], g.lower[axis], g.scale[axis]);
    float b = gridCoord(hi[axis], g.lower[axis], g.scale[axis]);
    if (!(b >= 0.0f) || !(a < float(kGridCells))) return;  // outside the grid: no shape can be touched
    cellLo[axis] = a < 0.0f ? 0u : uint(a);
    cellHi[axis] = min(uint(b), kGridCells - 1u);
  }
  uint shapeCount = c.sphereCount + c.capsuleCount;
  // Capsules first.
  for (uint word = c.sphereCount / 32u; word < c.maskWords; ++word) {
    uint bits = candidates(c, cellLo, cellHi, word) & ~bitsBelow(word, c.sphereCount) & bitsBelow(word, shapeCount);
    while (bits != 0u) {
      uint bit = uint(findLSB(bits));
      bits &= bits - 1u;
      uint capsule = c.firstCapsule + word * 32u + bit - c.sphereCount;
      Cone cone = preparedCone(capsule, 1u);
      CapsuleSpheres caps = capsuleSpheres(capsule);
      vec4 a1 = preparedSphere(caps.sphere0, 1u), b1 = preparedSphere(caps.sphere1, 1u);
      vec4 a0 = preparedSphere(caps.sphere0, 0u), b0 = preparedSphere(caps.sphere1, 0u);
      vec3 target = ccd ? capsuleSweep(preparedCone(capsule, 0u), cone, a0, a1, b0, b1, old, pos) : pos;
      vec3 delta;
      bool touched = capsuleContact(cone, a1, b1, target, delta);
      if (!touched && target == pos) continue;
      sum.delta += target + delta - pos;
      sum.count += 1u;
      if (wantVelocity) {
        vec3 v0 = vec3(a1) - vec3(a0);
        vec3 v1 = vec3(b1) - vec3(b0);
        // Along the axis (invalid cone: the bigger sphere's).
        float u = a1.w >= b1.w ? 0.0f : 1.0f;
        if (cone.dims.z != 0.0f) {
          u = clamp(0.5f + 0.5f * dot(pos - vec3(cone.center), vec3(cone.axis)) / cone.dims.x, 0.0f, 1.0f);
        }
        sum.velocity += mix(v0, v1, u);
      }
    }
  }
  // Then the spheres of no capsule.
  for (uint word = 0u; word * 32u < c.sphereCount; ++word) {
    uint bits = candidates(c, cellLo, cellHi, word) & bitsBelow(word, c.sphereCount);
    while (bits != 0u) {
      uint bit = uint(findLSB(bits));
      bits &= bits - 1u;
      uint local = word * 32u + bit;
      if (c.capsuleCount != 0u && sphereInCapsule(c, local)) continue;
      uint sphere = c.firstSphere + local;
      vec4 s1 = preparedSphere(sphere, 1u);
      vec4 s0 = preparedSphere(sphere, 0u);
      vec3 target = pos;
      float toi;
      if (ccd) sphereSweep(s0, s1, old, pos, toi, target);
      vec3 delta;
      bool touched = sphereContact(s1, target, delta);
      if (!touched && target == pos) continue;
      sum.delta += target + delta - pos;
      sum.count += 1u;
      if (wantVelocity) sum.velocity += vec3(s1) - vec3(s0);
    }
  }
}

// The convexes the grid pass kept for the cloth, after the round shapes.
VKC_FN void collideConvexes(ShapeCloth c, bool ccd, bool wantVelocity, vec3 pos, vec3 old, VKC_INOUT(ContactSum) sum) {
  uint words = (c.convexCount + 31u) / 32u;
  for (uint word = 0u; word < words; ++word) {
    uint bits = convexBit(c.firstConvexWord + word);
    while (bits != 0u) {
      uint bit = uint(findLSB(bits));
      bits &= bits - 1u;
      ShapeConvex x = convexAt(c.firstConvex + word * 32u + bit);
      vec3 target = pos;
      uint entered = ccd ? convexSweep(x, old, pos, target) : kNoPlane;
      vec3 delta;
      uint pushed = convexContact(x, target, delta);
      if (pushed == kNoPlane && entered == kNoPlane) continue;
      sum.delta += target + delta - pos;
      sum.count += 1u;
      if (wantVelocity) sum.velocity += planeVelocity(pushed != kNoPlane ? pushed : entered, pos);
    }
  }
}

// Collides one particle with its cloth's shapes: spheres and capsules, then convexes, all into one
// average. p: current position, prev: position at the iteration's start, whose w is the particle's
// inverse mass (p.w is reset from it, undoing the last iteration's mass scaling). Zero inverse mass:
// never moves.
VKC_FN void collideParticle(ShapeCloth c, ShapeGrid g, uint flags, float friction, float massScale,
                            VKC_INOUT(vec4) p, VKC_INOUT(vec4) prev) {
  p.w = prev.w;
  if (prev.w == 0.0f) return;
  bool ccd = (flags & kCollideFlagContinuous) != 0u;
  bool wantVelocity = (flags & kCollideFlagFriction) != 0u;
  vec3 pos = vec3(p), old = vec3(prev);
  ContactSum sum;
  sum.delta = vec3(0.0f);
  sum.velocity = vec3(0.0f);
  sum.count = 0u;
  if (g.lower.w != 0.0f) collideRoundShapes(c, g, ccd, wantVelocity, pos, old, sum);
  if (c.convexCount != 0u) collideConvexes(c, ccd, wantVelocity, pos, old, sum);
  applyContacts(sum, flags, friction, massScale, p, prev);
}
