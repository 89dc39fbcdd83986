// One case of the GPU-vs-CPU check of collide_meshes_math.h: every function on one particle and one
// triangle (and the case's two triangles against each other). Compiled as GLSL by
// collide_meshes_check.comp and as C++ by the tests.
#ifndef VKC_TESTS_COLLIDE_MESHES_CHECK_H
#define VKC_TESTS_COLLIDE_MESHES_CHECK_H
#include "shared/ccd_edge_edge.h"
#include "shared/collide_meshes_math.h"
#include "shared/tri_tri.h"

VKC_NAMESPACE_BEGIN

VKC_CONSTANT(uint, kMeshCheckGroupSize, 64u);

struct MeshCheckCase {
  vec4 p0, p1;          // particle at the iteration's start and end (world)
  vec4 a0, b0, c0;      // triangle at the start (rigid: mesh space)
  vec4 a1, b1, c1;      // triangle at the end (deforming)
  vec4 q0, t0, q1, t1;  // rigid transform at the start and end (quaternion, translation)
  vec4 params;          // x thickness, y tStart, z restitution, w friction
  uvec4 mode;           // x flags, y oneSided, z maxBounces, w unused
};
VKC_CHECK_LAYOUT(MeshCheckCase, 224);

struct MeshCheckResult {
  vec4 closest;  // xyz point, w dist2
  vec4 closestBary;
  vec4 pushed;   // xyz, w 1 when pushed
  vec4 pushNormal;
  vec4 segment;  // xyz bary, w time (or -1)
  MeshHit staticHit, deformingHit, rigidHit;
  vec4 bouncePrev, bounceCur;  // w: 1 when changed
  uvec4 regions;               // x closest region, y..w hit flags (1 hit, 2 capped)
  // Edge-edge CCD (shared/ccd_edge_edge.h) of edge (a, b) moving to (a1, b1) and edge (p, c) moving
  // to (p1, c1), with the case's thickness; edgeFlags.x 1 when it hit.
  EdgeCcdHit edgeHit;
  uvec4 edgeFlags;
  // Triangle vs triangle (shared/tri_tri.h): the start triangle against the end one.
  TriTriResult triTri;
};
VKC_CHECK_LAYOUT(MeshCheckResult, 80 + 3 * 80 + 48 + 48 + 16 + 112);

VKC_FN uint meshCheckFlags(bool h, MeshHit hit) { return h ? (1u | (hit.flags << 1u)) : 0u; }

VKC_FN MeshCheckResult meshCheckRun(MeshCheckCase k) {
  MeshCheckResult r;
  vec3 p0 = vec3(k.p0), p1 = vec3(k.p1);
  vec3 a0 = vec3(k.a0), b0 = vec3(k.b0), c0 = vec3(k.c0);
  vec3 a1 = vec3(k.a1), b1 = vec3(k.b1), c1 = vec3(k.c1);
  float thickness = k.params.x, tStart = k.params.y;
  TriClosest cp = triClosestPoint(p1, a0, b0, c0);
  r.closest = vec4(cp.point, cp.dist2);
  r.closestBary = vec4(cp.bary, 0.0f);
  vec3 pushed, normal;
  bool pushedAny = triProximityPush(a0, b0, c0, p0, p1, thickness, k.mode.y != 0u, pushed, normal);
  r.pushed = vec4(pushed, pushedAny ? 1.0f : 0.0f);
  r.pushNormal = vec4(normal, 0.0f);
  float t;
  vec3 bary;
  bool crossed = segmentTriangle(p0, p1, a0, b0, c0, t, bary);
  r.segment = vec4(bary, crossed ? t : -1.0f);
  bool hs = triCcdStatic(a0, b0, c0, tStart, p0, p1, thickness, k.mode.x, r.staticHit);
  bool hd = triCcdDeforming(a0, b0, c0, a1, b1, c1, tStart, p0, p1, thickness, k.mode.x, r.deformingHit);
  RigidSweep sweep = rigidSweepPrepare(k.q0, vec3(k.t0), k.q1, vec3(k.t1));
  bool hr = triCcdRigid(sweep, a0, b0, c0, tStart, p0, p1, thickness, k.mode.x, r.rigidHit);
  // A bounce loop against the static triangle alone.
  MeshMaterial material;
  material.restitution = k.params.z;
  material.friction = k.params.w;
  material.staticFriction = k.params.w;
  material.thickness = thickness;
  MeshBounceState s = meshBounceBegin(p0, p1);
  for (uint bounce = 0u; bounce <= k.mode.z; ++bounce) {
    MeshHit hit;
    if (!triCcdStatic(a0, b0, c0, s.positionTime.w, meshBounceFrom(s), meshBounceTo(s), thickness,
                      kMeshCcdApproachOnly, hit))
      break;
    if (bounce == k.mode.z) {
      meshBounceStop(s, hit, thickness);
      break;
    }
    meshBounceApply(s, hit, material);
  }
  vec3 np, nc;
  bool changed = meshBounceFinish(s, p0, p1, np, nc);
  r.bouncePrev = vec4(np, changed ? 1.0f : 0.0f);
  r.bounceCur = vec4(nc, 0.0f);
  r.regions = uvec4(cp.region, meshCheckFlags(hs, r.staticHit), meshCheckFlags(hd, r.deformingHit),
                    meshCheckFlags(hr, r.rigidHit));
  bool he = edgeEdgeCcd(a0, b0, p0, c0, a1, b1, p1, c1, thickness, r.edgeHit);
  r.edgeFlags = uvec4(he ? 1u : 0u, 0u, 0u, 0u);
  triTriIntersect(a0, b0, c0, a1, b1, c1, r.triTri);
  return r;
}

VKC_NAMESPACE_END

#endif  // VKC_TESTS_COLLIDE_MESHES_CHECK_H
