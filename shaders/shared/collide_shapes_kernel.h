// The per-particle and per-mask-word logic of sphere and capsule collision, written once. GLSL
// includes it at file scope; C++ includes it inside the body of a struct (src/cpu/collide_shapes.cpp)
// so that the functions become members. Either way the includer first provides these accessors:
//   vec4 preparedSphere(uint sphere, uint atEnd)   the global sphere at the iteration's start/end
//   Cone preparedCone(uint capsule, uint atEnd)    the global capsule's cone at the start/end
//   CapsuleSpheres capsuleSpheres(uint capsule)    global sphere indices of a global capsule
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

// Collides one particle with its cloth's spheres and capsules. p: current position, prev: position
// at the iteration's start, whose w is the particle's inverse mass (p.w is reset from it, undoing the
// last iteration's mass scaling). Zero inverse mass: never moves.
VKC_FN void collideParticle(ShapeCloth c, ShapeGrid g, uint flags, float friction, float massScale,
                            VKC_INOUT(vec4) p, VKC_INOUT(vec4) prev) {
  p.w = prev.w;
  if (g.lower.w == 0.0f || prev.w == 0.0f) return;
  bool ccd = (flags & kCollideFlagContinuous) != 0u;
  vec3 pos = vec3(p), old = vec3(prev);
  vec3 lo = ccd ? min(pos, old) : pos, hi = ccd ? max(pos, old) : pos;
  uvec4 cellLo = uvec4(0u), cellHi = uvec4(0u);
  for (uint axis = 0u; axis < 3u; ++axis) {
    float a = gridCoord(lo[axis], g.lower[axis], g.scale[axis]);
    float b = gridCoord(hi[axis], g.lower[axis], g.scale[axis]);
    if (!(b >= 0.0f) || !(a < float(kGridCells))) return;  // outside the grid: no shape can be touched
    cellLo[axis] = a < 0.0f ? 0u : uint(a);
    cellHi[axis] = min(uint(b), kGridCells - 1u);
  }
  ContactSum sum;
  sum.delta = vec3(0.0f);
  sum.velocity = vec3(0.0f);
  sum.count = 0u;
  bool wantVelocity = (flags & kCollideFlagFriction) != 0u;
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
  applyContacts(sum, flags, friction, massScale, p, prev);
}
