// The mesh stage's per-particle work, written once: the traversal of the mesh tree (one BVH over the
// triangles of all meshes, shared/bvh.h) and the discrete rounds or the continuous bounce loop of one
// particle (collide_meshes_math.h). GLSL includes it at file scope (shaders/collide_meshes.comp); C++
// includes it inside the body of a struct (src/cpu/collide_meshes.cpp), so that the functions become
// members. The includer first provides:
//   BvhNode treeNode(uint i)          node i of the tree
//   Aabb treeLeafBox(uint t)          the leaf box of global triangle t
//   uint triangleVertex(uint k)       element k of the global index buffer (combined vertex index)
//   uint triangleMesh(uint t)         the mesh of global triangle t
//   MeshGpu meshAt(uint m)
//   vec3 worldVertex(uint v, uint atEnd)   combined vertex v in world space at the iteration's start
//                                          (atEnd 0) or end (1); static meshes: the same
//   vec3 localVertex(uint v)          combined vertex v as given (mesh space for rigid meshes)
//   RigidSweep sweepAt(uint s)
//   uint clothMeshWord(uint w)        a word of the cloths' mesh bit sets
//   float rigidReach()                the largest chord error of the rigid meshes' sweeps (see below)
// Every loop is bounded by a constant or by the tree's size; indices read from buffers are clamped.
// No namespace and no include guard.

// Whether the cloth whose bit set starts at word firstWord lists mesh m.
VKC_FN bool meshListed(uint firstWord, uint m) {
  return ((clothMeshWord(firstWord + m / 32u) >> (m % 32u)) & 1u) != 0u;
}

VKC_FN bool meshBoxesOverlap(vec3 lo, vec3 hi, vec4 boxLo, vec4 boxHi) {
  return lo.x <= boxHi.x && lo.y <= boxHi.y && lo.z <= boxHi.z && boxLo.x <= hi.x && boxLo.y <= hi.y &&
         boxLo.z <= hi.z;
}

// The triangle's world vertices at the iteration's start (atEnd 0) or end (1). An includer that
// defines VKC_MESH_OWN_TRIANGLE provides its own meshTriangle with these same values (the CPU SIMD
// twin: from its copy of the last answer's vertices).
#ifndef VKC_MESH_OWN_TRIANGLE
VKC_FN void meshTriangle(uint t, uint atEnd, VKC_OUT(vec3) a, VKC_OUT(vec3) b, VKC_OUT(vec3) c) {
  a = worldVertex(triangleVertex(3u * t), atEnd);
  b = worldVertex(triangleVertex(3u * t + 1u), atEnd);
  c = worldVertex(triangleVertex(3u * t + 2u), atEnd);
}
#endif

// One candidate triangle, whose world vertices at the iteration's end are a1, b1, c1 (meshTriangle(t,
// 1u, ...): the CPU SIMD twin passes its copy of them). Proximity: when p is closer than the mesh's
// thickness * (1 - slack), its penetration (thickness - distance) goes to hit.bary.w. Sweep: the
// continuous query of the mesh's motion; a one-sided mesh ignores hits from behind its front face.
VKC_FN bool meshTestTriangleAt(uint mode, uint t, MeshGpu mesh, vec3 a1, vec3 b1, vec3 c1, vec3 p, float tStart,
                               vec3 to, uint flags, VKC_OUT(MeshHit) hit) {
  hit = meshNoHit();
  float thickness = mesh.material.thickness;
  if (mode == kMeshQueryProximity) {
    TriClosest cp = triClosestPoint(p, a1, b1, c1);
    VKC_PRECISE float reach = thickness * (1.0f - kMeshProximitySlack);
    if (!(cp.dist2 < reach * reach)) return false;
    VKC_PRECISE float penetration = thickness - sqrt(cp.dist2);
    hit.bary = vec4(cp.bary, penetration);
    return true;
  }
  bool found = false;
  if (mesh.motion == kMeshMotionRigid) {
    uint s = mesh.sweep;
    vec3 ma = localVertex(triangleVertex(3u * t));
    vec3 mb = localVertex(triangleVertex(3u * t + 1u));
    vec3 mc = localVertex(triangleVertex(3u * t + 2u));
    found = triCcdRigid(sweepAt(s), ma, mb, mc, tStart, p, to, thickness, flags, hit);
  } else if (mesh.motion == kMeshMotionDeforming) {
    vec3 a0, b0, c0;
    meshTriangle(t, 0u, a0, b0, c0);
    found = triCcdDeforming(a0, b0, c0, a1, b1, c1, tStart, p, to, thickness, flags, hit);
  } else {
    found = triCcdStatic(a1, b1, c1, tStart, p, to, thickness, flags, hit);
  }
  if (found && (mesh.flags & kMeshFlagOneSided) != 0u) {
    vec3 front = cross(b1 - a1, c1 - a1);
    if (dot(vec3(hit.normalTime), front) < 0.0f) found = false;
  }
  return found;
}

VKC_FN bool meshTestTriangle(uint mode, uint t, MeshGpu mesh, vec3 p, float tStart, vec3 to, uint flags,
                             VKC_OUT(MeshHit) hit) {
  vec3 a1, b1, c1;
  meshTriangle(t, 1u, a1, b1, c1);
  return meshTestTriangleAt(mode, t, mesh, a1, b1, c1, p, tStart, to, flags, hit);
}

// Whether (hit, t) beats (best, bestT) in the query's order: proximity, the larger penetration then
// the smaller triangle; sweep, meshHitEarlier (the smaller time, then the smaller triangle).
VKC_FN bool meshQueryBetter(uint mode, MeshHit hit, uint t, MeshHit best, uint bestT) {
  if (mode == kMeshQuerySweep) return meshHitEarlier(hit, t, best, bestT);
  if (bestT == kMeshNone) return true;
  if (hit.bary.w != best.bary.w) return hit.bary.w > best.bary.w;
  return t < bestT;
}

// The best triangle of a query over the tree (kMeshNone when none): candidates are the leaves whose
// boxes overlap [lo, hi], of meshes the cloth lists. The answer does not depend on the traversal
// order (meshQueryBetter is a total order on (hit, triangle)). Depth first: each popped node is read
// once, tested against the box, and its children pushed: inner children as they are, leaf children
// only when they are candidates (box overlap, mesh listed). The traversal stops at each candidate
// it pops, and the candidate is tested outside the traversal loop (the "while-while" form of Aila and
// Laine's GPU ray traversal): on a GPU the lanes of a subgroup each walk until they hold a candidate,
// then test their candidates together, instead of each candidate's test (a loop of advancement
// steps) running while the other lanes wait, once per lane that meets one. The stack holds at most
// depth + 1 entries. The walk pops each entry at most once in a valid tree and at most
// 2 * triangleCount + 2 entries in any buffer contents (the two loops share that count).
VKC_FN uint meshQuery(uint mode, uint triangleCount, uint firstWord, vec3 lo, vec3 hi, vec3 p, float tStart, vec3 to,
                      uint flags, VKC_OUT(MeshHit) best) {
  best = meshNoHit();
  uint bestT = kMeshNone;
  uint nodeCount = triangleCount > 1u ? triangleCount - 1u : 1u;
  uint stack[kMeshStackSize];
  stack[0] = 0u;
  uint top = 1u;
  uint visits = 2u * triangleCount + 2u;
  uint step = 0u;
  for (uint round = 0u; round < visits; ++round) {
    // Walk to the next candidate (kMeshNone: the walk is over).
    uint candidate = kMeshNone;
    for (; step < visits; ++step) {
      if (top == 0u) break;
      top = top - 1u;
      uint ref = stack[top];
      if ((ref & kBvhLeafBit) != 0u) {
        candidate = ref & ~kBvhLeafBit;
        step = step + 1u;
        break;
      }
      BvhNode n = treeNode(ref);
      if (!meshBoxesOverlap(lo, hi, n.lo, n.hi)) continue;
      for (uint side = 0u; side < 2u; ++side) {
        uint child = side == 0u ? n.left : n.right;
        if (child == kBvhNone || top >= kMeshStackSize) continue;
        if ((child & kBvhLeafBit) != 0u) {
          uint t = child & ~kBvhLeafBit;
          if (t >= triangleCount) continue;
          Aabb box = treeLeafBox(t);
          if (!meshBoxesOverlap(lo, hi, box.lo, box.hi)) continue;
          if (!meshListed(firstWord, triangleMesh(t))) continue;
        } else if (child >= nodeCount) {
          continue;
        }
        stack[top] = child;
        top = top + 1u;
      }
    }
    if (candidate == kMeshNone) break;
    MeshHit hit;
    if (meshTestTriangle(mode, candidate, meshAt(triangleMesh(candidate)), p, tStart, to, flags, hit) &&
        meshQueryBetter(mode, hit, candidate, best, bestT)) {
      best = hit;
      bestT = candidate;
    }
  }
  return bestT;
}

// The query box's margin around a point or path: the largest thickness (with the continuous hit
// tolerance, relative kMeshCcdRelTolerance and the rounding margin 2 * kMeshCcdMarginScale * M, M the
// largest coordinate of the path and of the tree), plus twice the rigid chord error (rigid sub-steps
// lerp between exact ends; the tree's swept boxes hold the iteration's ends).
VKC_FN float meshQueryReach(float maxThickness, vec3 lo, vec3 hi) {
  vec4 rootLo = treeNode(0u).lo, rootHi = treeNode(0u).hi;
  float m = max(max(maxAbs3(lo), maxAbs3(hi)), max(maxAbs3(vec3(rootLo)), maxAbs3(vec3(rootHi))));
  VKC_PRECISE float reach = maxThickness * (1.0f + 2.0f * kMeshCcdRelTolerance) + 4.0f * kMeshCcdMarginScale * m +
                            2.0f * rigidReach();
  return reach * 1.0001f;
}

// The surface velocity (per iteration) of the point with barycentrics `bary` on triangle t: the
// motion of that point between the iteration's start and end positions of its vertices.
VKC_FN vec3 meshSurfaceVelocity(uint t, vec3 bary) {
  vec3 a0, b0, c0, a1, b1, c1;
  meshTriangle(t, 0u, a0, b0, c0);
  meshTriangle(t, 1u, a1, b1, c1);
  return baryCombine(a1 - a0, b1 - b0, c1 - c0, bary);
}

// A particle stopped by the bounce cap rides on the triangle it last hit until the iteration's end:
// it keeps the barycentrics of its contact point and its offset (thickness + 2 tol) along the hit
// normal, turned with the triangle (the rotation that takes the triangle's face normal at the hit time
// to the one at the end; face normals of the lerped vertices). Moving on in a straight line instead
// (meshBounceFinish) would let a turning surface overtake it: a paddle turning by d leaves a particle
// at radius r behind its plane by r d^3 / 3. newPrev = newCur - the contact point's velocity.
VKC_FN void meshCarry(uint t, MeshHit hit, float thickness, VKC_INOUT(vec3) newPrev, VKC_INOUT(vec3) newCur) {
  vec3 a0, b0, c0, a1, b1, c1;
  meshTriangle(t, 0u, a0, b0, c0);
  meshTriangle(t, 1u, a1, b1, c1);
  float th = hit.normalTime.w;
  vec3 ah = lerp3(a0, a1, th), bh = lerp3(b0, b1, th), ch = lerp3(c0, c1, th);
  vec3 fh = cross(bh - ah, ch - ah), f1 = cross(b1 - a1, c1 - a1);
  vec3 n = vec3(hit.normalTime);
  if (triHasPlane(bh - ah, ch - ah, fh) && triHasPlane(b1 - a1, c1 - a1, f1)) {
    // Rodrigues: the rotation about fh x f1 by the angle between them, applied to n.
    fh = fh / sqrt(dot(fh, fh));
    f1 = f1 / sqrt(dot(f1, f1));
    vec3 k = cross(fh, f1);
    float c = dot(fh, f1);
    if (c > -0.999f) {
      VKC_PRECISE vec3 turned = n * c + cross(k, n) + k * (dot(k, n) / (1.0f + c));
      n = turned / sqrt(dot(turned, turned));
    }
  }
  vec3 bary = vec3(hit.bary);
  VKC_PRECISE float offset = thickness + 2.0f * hit.point.w;
  VKC_PRECISE vec3 carried = baryCombine(a1, b1, c1, bary) + n * offset;
  vec3 u = baryCombine(a1 - a0, b1 - b0, c1 - c0, bary);
  newCur = carried;
  VKC_PRECISE vec3 np = carried - u;
  newPrev = np;
}

// Two-sided discrete contact pushes a particle to the side of the triangle it came from: the side of
// its start position relative to the triangle at the iteration's START (a wall that moved past the
// particle during the iteration pushes it on, not back through). triProximityPush reads the side from
// a point relative to the end triangle (a, b, c): for a moving mesh this returns a point on the same
// side of the end plane as prev is of the start plane (prev itself when the start triangle has no
// plane, or prev lies on it, or the mesh is static).
VKC_FN vec3 meshSideWitness(uint t, MeshGpu mesh, vec3 prev, vec3 a, vec3 b, vec3 c) {
  if (mesh.motion == kMeshMotionStatic) return prev;
  vec3 a0, b0, c0;
  meshTriangle(t, 0u, a0, b0, c0);
  vec3 n0 = cross(b0 - a0, c0 - a0), n1 = cross(b - a, c - a);
  if (!triHasPlane(b0 - a0, c0 - a0, n0) || !triHasPlane(b - a, c - a, n1)) return prev;
  float side = dot(prev - a0, n0);
  if (side == 0.0f) return prev;
  VKC_PRECISE vec3 witness = a + n1 * (side > 0.0f ? 1.0f : -1.0f);
  return witness;
}

// One particle's iteration as a sequence of tree queries, so that a driver can run the queries of
// many particles together (the CPU SIMD twin's packets) and still do exactly what
// meshCollideParticle does per particle:
//   MeshParticle q = meshParticleBegin(pc, prev4, cur4);
//   for (step = 0; step <= pc.maxBounces && q.done == 0; ++step) {
//     meshParticleQuery(pc, q, ...query...);   t = meshQuery(...query..., hit);
//     meshParticleAnswer(pc, q, t, hit);
//   }
//   changed = meshParticleEnd(pc, q, newPrev, newCur, info);
// Discrete: each step is one proximity round (position p, velocity v). Continuous: each step one
// query of the bounce loop (state s). MeshParticle: shared/collide_meshes.h.

VKC_FN MeshParticle meshParticleBegin(MeshCollidePush pc, vec4 prev4, vec4 cur4) {
  MeshParticle q;
  q.prev = vec3(prev4);
  q.cur = vec3(cur4);
  q.p = q.cur;
  q.v = q.cur - q.prev;
  q.s = meshBounceBegin(q.prev, q.cur);
  q.stopHit = meshNoHit();
  q.contacts = 0u;
  q.last = kMeshNone;
  q.step = 0u;
  q.done = (prev4.w == 0.0f || pc.triangleCount == 0u) ? 1u : 0u;
  return q;
}

// The next query of a particle that is not done: its mode, box [lo, hi], point (or path start), the
// path's start time and end, flags.
VKC_FN void meshParticleQuery(MeshCollidePush pc, MeshParticle q, VKC_OUT(uint) mode, VKC_OUT(vec3) lo,
                              VKC_OUT(vec3) hi, VKC_OUT(vec3) from, VKC_OUT(float) tStart, VKC_OUT(vec3) to,
                              VKC_OUT(uint) flags) {
  if ((pc.flags & kMeshFlagContinuous) == 0u) {
    float reach = meshQueryReach(pc.maxThickness, q.p, q.p);
    mode = kMeshQueryProximity;
    lo = q.p - vec3(reach);
    hi = q.p + vec3(reach);
    from = q.p;
    tStart = 0.0f;
    to = q.p;
    flags = 0u;
    return;
  }
  from = meshBounceFrom(q.s);
  to = meshBounceTo(q.s);
  vec3 plo = min(from, to), phi = max(from, to);
  float reach = meshQueryReach(pc.maxThickness, plo, phi);
  mode = kMeshQuerySweep;
  lo = plo - vec3(reach);
  hi = phi + vec3(reach);
  tStart = q.s.positionTime.w;
  flags = kMeshCcdApproachOnly;
}

// The answer to that query: the best triangle t (kMeshNone: none) and its hit.
VKC_FN void meshParticleAnswer(MeshCollidePush pc, VKC_INOUT(MeshParticle) q, uint t, MeshHit hit) {
  if (t == kMeshNone) {
    q.done = 1u;
    return;
  }
  MeshGpu mesh = meshAt(triangleMesh(t));
  if ((pc.flags & kMeshFlagContinuous) == 0u) {
    vec3 a, b, c;
    meshTriangle(t, 1u, a, b, c);
    vec3 pushed, normal;
    if (!triProximityPush(a, b, c, meshSideWitness(t, mesh, q.prev, a, b, c), q.p, mesh.material.thickness,
                          (mesh.flags & kMeshFlagOneSided) != 0u, pushed, normal)) {
      q.done = 1u;
      return;
    }
    vec3 u = meshSurfaceVelocity(t, vec3(hit.bary));
    q.v = meshResponseVelocity(q.v, normal, u, mesh.material.restitution, mesh.material.friction,
                               mesh.material.staticFriction);
    q.p = pushed;
  } else if (q.step == pc.maxBounces) {
    meshBounceStop(q.s, hit, mesh.material.thickness);
    q.stopHit = hit;
    q.done = 1u;
  } else {
    meshBounceApply(q.s, hit, mesh.material);
  }
  q.contacts = q.contacts + 1u;
  q.last = t;
  q.step = q.step + 1u;
  if (q.step > pc.maxBounces) q.done = 1u;
}

// The particle's outputs: returns whether it changed (newPrev / newCur: its new positions; info.x:
// contacts answered, info.y: the last contact's triangle).
VKC_FN bool meshParticleEnd(MeshCollidePush pc, MeshParticle q, VKC_OUT(vec3) newPrev, VKC_OUT(vec3) newCur,
                            VKC_OUT(uvec2) info) {
  newPrev = q.prev;
  newCur = q.cur;
  info = uvec2(0u, kMeshNone);
  if (q.contacts == 0u) return false;
  info = uvec2(q.contacts, q.last);
  if ((pc.flags & kMeshFlagContinuous) == 0u) {
    newCur = q.p;
    VKC_PRECISE vec3 np = q.p - q.v;
    newPrev = np;
    return true;
  }
  if (!meshBounceFinish(q.s, q.prev, q.cur, newPrev, newCur)) return false;
  if (q.s.stopped != 0u) meshCarry(q.last, q.stopHit, meshAt(triangleMesh(q.last)).material.thickness, newPrev, newCur);
  return true;
}

// One step of a particle that is not done: its next query over the tree and the answer.
VKC_FN void meshParticleStep(MeshCollidePush pc, uint firstWord, VKC_INOUT(MeshParticle) q) {
  uint mode, flags;
  vec3 lo, hi, from, to;
  float tStart;
  meshParticleQuery(pc, q, mode, lo, hi, from, tStart, to, flags);
  MeshHit hit;
  uint t = meshQuery(mode, pc.triangleCount, firstWord, lo, hi, from, tStart, to, flags, hit);
  meshParticleAnswer(pc, q, t, hit);
}

// One particle of a cloth (firstWord: its mesh bit set) for one iteration. prev4 / cur4: its
// positions at the iteration's start and end (w = inverse mass; 0 never moves). Returns whether it
// changed; then newPrev / newCur are its new positions (newCur - newPrev: the new velocity). info.x:
// contacts answered; info.y: the global triangle of the last one (kMeshNone: none).
VKC_FN bool meshCollideParticle(MeshCollidePush pc, uint firstWord, vec4 prev4, vec4 cur4, VKC_OUT(vec3) newPrev,
                                VKC_OUT(vec3) newCur, VKC_OUT(uvec2) info) {
  MeshParticle q = meshParticleBegin(pc, prev4, cur4);
  for (uint step = 0u; step <= pc.maxBounces; ++step) {
    if (q.done != 0u) break;
    meshParticleStep(pc, firstWord, q);
  }
  return meshParticleEnd(pc, q, newPrev, newCur, info);
}
