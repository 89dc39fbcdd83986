#version 460
// Mesh collision (one collision iteration for all cloths and meshes of a scene), two passes selected
// by a specialization constant (declared in shared/collide_meshes_passes.h):
//   GATHER   one invocation per combined vertex: the vertex copied from the host's buffer (vec4 or
//            vec3 stride) into the local, world-start and world-end arrays (rigid: the sweep's
//            transforms at the iteration's ends; deforming: the previous and current copies; static:
//            the same), the rigid chord bound (subgroup max, then one atomicMax of its float bits per
//            subgroup); on a build, also one invocation per index element: the copied mesh-local
//            index made global (firstVertex + index, clamped to the mesh). The embedded BVH stage
//            then builds or refits the tree.
//   COLLIDE  one workgroup per tile (up to kMeshGroupSize particles of one cloth that lists meshes):
//            per particle the kernel of shared/collide_meshes_kernel.h (tree traversal, discrete
//            rounds or the continuous bounce loop), which the CPU twin (src/cpu/collide_meshes.cpp)
//            compiles too.
// Every index read from a buffer is clamped to the table it indexes (push constants hold the sizes).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "shared/bvh.h"
#include "shared/collide_meshes_math.h"

layout(constant_id = 0) const uint kPass = kMeshPassGather;
layout(local_size_x = kMeshGroupSize) in;  // checked against the pass declarations (tests/spirv/pass_decl_test.cpp)

layout(std430, set = 0, binding = kMeshBindingParticles) buffer Particles { vec4 particles[]; };
layout(std430, set = 0, binding = kMeshBindingPrevParticles) buffer Prev { vec4 prevParticles[]; };
layout(std430, set = 0, binding = kMeshBindingTiles) readonly buffer Tiles { MeshClothGpu tiles[]; };
layout(std430, set = 0, binding = kMeshBindingClothWords) readonly buffer ClothWords { uint clothWords[]; };
layout(std430, set = 0, binding = kMeshBindingMeshes) readonly buffer Meshes { MeshGpu meshes[]; };
layout(std430, set = 0, binding = kMeshBindingSweeps) readonly buffer Sweeps { RigidSweep sweeps[]; };
layout(std430, set = 0, binding = kMeshBindingRaw) readonly buffer Raw { float raw[]; };
layout(std430, set = 0, binding = kMeshBindingLocal) buffer Local { vec4 localVertices[]; };
layout(std430, set = 0, binding = kMeshBindingWorldStart) buffer WorldStart { vec4 worldStart[]; };
layout(std430, set = 0, binding = kMeshBindingWorldEnd) buffer WorldEnd { vec4 worldEnd[]; };
layout(std430, set = 0, binding = kMeshBindingIndices) buffer Indices { uint indices[]; };
layout(std430, set = 0, binding = kMeshBindingTriangleMesh) readonly buffer TriangleMesh { uint triMesh[]; };
layout(std430, set = 0, binding = kMeshBindingNodes) readonly buffer Nodes { BvhNode nodes[]; };
layout(std430, set = 0, binding = kMeshBindingLeafBoxes) readonly buffer LeafBoxes { Aabb leafBoxes[]; };
layout(std430, set = 0, binding = kMeshBindingState) buffer State { uint state[]; };
layout(std430, set = 0, binding = kMeshBindingInfo) writeonly buffer Info { uvec2 info[]; };
layout(push_constant) uniform Push { MeshStagePush pc; };

uint clampIndex(uint i, uint count) { return min(i, max(count, 1u) - 1u); }

// The kernel's accessors (shared/collide_meshes_kernel.h).
BvhNode treeNode(uint i) { return nodes[clampIndex(i, pc.collide.triangleCount > 1u ? pc.collide.triangleCount - 1u : 1u)]; }
Aabb treeLeafBox(uint t) { return leafBoxes[clampIndex(t, pc.collide.triangleCount)]; }
uint triangleVertex(uint k) { return clampIndex(indices[clampIndex(k, 3u * pc.collide.triangleCount)], pc.vertexCount); }
uint triangleMesh(uint t) { return clampIndex(triMesh[clampIndex(t, pc.collide.triangleCount)], pc.meshCount); }
MeshGpu meshAt(uint m) { return meshes[clampIndex(m, pc.meshCount)]; }
vec3 worldVertex(uint v, uint atEnd) {
  uint i = clampIndex(v, pc.vertexCount);
  return atEnd != 0u ? vec3(worldEnd[i]) : vec3(worldStart[i]);
}
vec3 localVertex(uint v) { return vec3(localVertices[clampIndex(v, pc.vertexCount)]); }
RigidSweep sweepAt(uint s) { return sweeps[clampIndex(s, pc.sweepCount)]; }
uint clothMeshWord(uint w) { return clothWords[clampIndex(w, pc.clothWordCount)]; }
float rigidReach() { return uintBitsToFloat(state[0]); }

#include "shared/collide_meshes_kernel.h"

uint linearGroup() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
uint linearInvocation() { return linearGroup() * kMeshGroupSize + gl_LocalInvocationIndex; }

// The mesh holding combined vertex v (firstVertex <= v), or global index element k (3 firstTriangle
// <= k) when `ofIndex`: the last such mesh (meshes are laid out one after another).
uint meshOf(uint x, bool ofIndex) {
  uint lo = 0u, hi = pc.meshCount;
  for (uint step = 0u; step < 32u && lo < hi; ++step) {
    uint mid = (lo + hi) / 2u;
    uint first = ofIndex ? 3u * meshes[mid].firstTriangle : meshes[mid].firstVertex;
    if (first <= x) lo = mid + 1u; else hi = mid;
  }
  return clampIndex(lo == 0u ? 0u : lo - 1u, pc.meshCount);
}

// xyz of vertex i of mesh `mesh` in the raw buffer's section `section` (0: the current copies, 1: the
// previous ones), each mesh's vertices at its vec4 slots whatever their stride.
vec3 rawVertex(MeshGpu mesh, uint i, uint section) {
  uint stride = (mesh.flags & kMeshFlagVec3) != 0u ? 3u : 4u;
  uint base = 4u * (section * pc.vertexCount + mesh.firstVertex) + stride * i;
  return vec3(raw[base], raw[base + 1u], raw[base + 2u]);
}

// Returns the vertex's rigid chord bound (0 for other meshes).
float gatherVertex(uint v) {
  uint m = meshOf(v, false);
  MeshGpu mesh = meshes[m];
  uint i = clampIndex(v - mesh.firstVertex, mesh.vertexCount);
  vec3 x = rawVertex(mesh, i, 0u);
  localVertices[v] = vec4(x, 0.0f);
  if (mesh.motion == kMeshMotionRigid) {
    uint s = clampIndex(mesh.sweep, pc.sweepCount);
    precise vec3 start = quatRotate(sweeps[s].rotation[0], x) + vec3(sweeps[s].translation[0]);
    precise vec3 end = quatRotate(sweeps[s].rotation[kRigidMaxSteps], x) + vec3(sweeps[s].translation[kRigidMaxSteps]);
    worldStart[v] = vec4(start, 0.0f);
    worldEnd[v] = vec4(end, 0.0f);
    return rigidChordBound(sweeps[s].angle.x, x);
  }
  if (mesh.motion == kMeshMotionDeforming) {
    worldStart[v] = vec4(rawVertex(mesh, i, 1u), 0.0f);
    worldEnd[v] = vec4(x, 0.0f);
  } else {
    worldStart[v] = vec4(x, 0.0f);
    worldEnd[v] = vec4(x, 0.0f);
  }
  return 0.0f;
}

void gatherIndex(uint k) {
  MeshGpu mesh = meshes[meshOf(k, true)];
  indices[k] = mesh.firstVertex + min(indices[k], mesh.vertexCount - 1u);
}

void gatherPass() {
  uint i = linearInvocation();
  float chord = 0.0f;
  if (i < pc.vertexCount) chord = gatherVertex(i);
  if ((pc.gatherFlags & kMeshGatherBuild) != 0u && i < 3u * pc.collide.triangleCount) gatherIndex(i);
  // The largest chord bound: one atomic per subgroup (max is exact; the bounds are >= 0, so their
  // bits order as the floats do).
  chord = subgroupMax(chord);
  if (subgroupElect() && chord > 0.0f) atomicMax(state[0], floatBitsToUint(chord));
}

void collidePass() {
  uint t = linearGroup();
  if (t >= pc.tileCount) return;  // uniform
  MeshClothGpu tile = tiles[t];
  if (gl_LocalInvocationIndex >= tile.count || tile.meshCount == 0u) return;
  uint p = tile.first + gl_LocalInvocationIndex;
  if (p >= pc.particleCount) return;
  vec3 newPrev, newCur;
  uvec2 contact;
  // The kernel called twice, each with the mode as a constant (the flag holds nothing else): the
  // compiler specializes each call, so the discrete loop does not carry the continuous queries'
  // code (on lavapipe the discrete pass is several times faster so).
  MeshCollidePush k = pc.collide;
  bool changed;
  if ((k.flags & kMeshFlagContinuous) != 0u) {
    k.flags = kMeshFlagContinuous;
    changed = meshCollideParticle(k, tile.firstWord, prevParticles[p], particles[p], newPrev, newCur, contact);
  } else {
    k.flags = 0u;
    changed = meshCollideParticle(k, tile.firstWord, prevParticles[p], particles[p], newPrev, newCur, contact);
  }
  if (changed) {
    particles[p].xyz = newCur;
    prevParticles[p].xyz = newPrev;
  }
  info[p] = contact;
}

void main() {
  if (kPass == kMeshPassGather) {
    gatherPass();
  } else {
    collidePass();
  }
}
