// Private (issue 17): the SIMD pre-test of triangle pairs for mesh against mesh on kCpuSimd
// (src/cpu/geometry_queries_mesh_mesh.cpp). It computes, in float lanes and with the same operations
// in the same order, triTriIntersect's steps up to its first two returns (shaders/shared/tri_tri.h):
// the plane triangle (the fatter one, Q on a tie), its unit normal, the band, the signed distances of
// the other triangle's vertices to that plane (1: none within the band and all on one side), and,
// when none is within the band and they lie on both sides, the segment where the other triangle
// crosses the plane and its ends' distances to the plane triangle's three edges (2: both ends more
// than the band outside one edge, crossingFar). A pair is rejected exactly when triTriIntersect
// returns there with no intersection. The values are bitwise those of the scalar code (IEEE add,
// multiply, divide and square root, no contraction), so a rejected pair is one that triTriIntersect
// rejects, and geomTriTriContact gives no contact for it. Degenerate pairs (both triangles slivers),
// non-finite ones and every other case are never rejected (the exact test decides).
#pragma once

#include <cstdint>

namespace vkc::cpu {

// Up to kTriPlaneBatch triangle pairs, structure of arrays: v[corner][axis][pair], corners 0..2 of P
// (the first mesh's triangle) then 0..2 of Q.
inline constexpr uint32_t kTriPlaneBatch = 16;
struct TriPlaneBatch {
  alignas(64) float v[6][3][kTriPlaneBatch];
};

// Bit i set: pair i (i < n) is one that triTriIntersect rejects at its first or second return.
uint32_t triPlaneRejects(const TriPlaneBatch& batch, uint32_t n);

}  // namespace vkc::cpu
