// Private (issue 17): the SIMD pre-test of triangle pairs for mesh against mesh on kCpuSimd
// (src/cpu/geometry_queries_mesh_mesh.cpp). It computes, in float lanes and with the same operations
// in the same order, triTriIntersect's steps up to the clip of the crossing segment
// (shaders/shared/tri_tri.h): the plane triangle (the fatter one, Q on a tie), its unit normal, the
// band, the signed distances of the other triangle's vertices to that plane, and, when none is within
// the band and they lie on both sides, the segment where the other triangle crosses the plane clipped
// to the plane triangle's three edges. A pair is rejected when triTriIntersect gives
// geomTriTriContact no plain crossing segment (shaders/shared/geometry_queries_mesh_mesh.h: then it
// reports no contact): all on one side of the plane (its first return, or a touching point at best
// when a vertex is within the band), every vertex within the band (coplanar), both triangles
// degenerate (span against span), or the crossing segment clipped away (both ends more than the band
// outside one edge: its second return; or nothing left of it: a touching point at best). The values
// are bitwise those of the scalar code (IEEE add, multiply, divide and square root, no contraction),
// so a rejected pair is one for which geomTriTriContact gives no contact. Non-finite pairs and every
// other case are never rejected (the exact test decides).
#pragma once

#include <cstddef>
#include <cstdint>

namespace vkc::cpu {

// Up to kTriPlaneBatch triangle pairs, structure of arrays: v[corner][axis][pair], corners 0..2 of P
// (the first mesh's triangle) then 0..2 of Q.
inline constexpr uint32_t kTriPlaneBatch = 16;
struct TriPlaneBatch {
  alignas(64) float v[6][3][kTriPlaneBatch];
};

// Bit i set: pair i (i < n) is one for which geomTriTriContact reports no contact (see above).
uint32_t triPlaneRejects(const TriPlaneBatch& batch, uint32_t n);

// The kept trees' checks with a stated generation (src/cpu/geometry_query_trees.cpp), in lanes where
// built with SIMD: the largest of n cell entries (0 when n is 0), and whether every x, y and z of n
// points (xyzw floats, w not read as a number) is finite.
uint32_t largestEntry(const uint32_t* entries, size_t n);
bool xyzFinite(const float* xyzw, size_t points);

}  // namespace vkc::cpu
