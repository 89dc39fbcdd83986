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
// features (if given, n entries): for pair i, triTriIntersect's TriTriResult::features where the
// pre-test knows it gives a plain crossing segment (count 2, none of the coplanar, within-band and
// degenerate flags: the crossing found above, not clipped away; then geomTriTriContactFromFeatures with
// them is geomTriTriContact, bit for bit), else kTriPlaneUnknown (the exact test decides).
// misses (if given): bit i set where triTriIntersect itself finds nothing (count 0: all of the
// other triangle's vertices more than the band on one side of the plane, or its crossing segment
// more than the band outside one edge), a subset of the rejected pairs (the mesh intersection's
// pre-test, src/cpu/mesh_intersection.cpp, which keeps touching and coplanar pairs).
inline constexpr uint8_t kTriPlaneUnknown = 0xFF;
uint32_t triPlaneRejects(const TriPlaneBatch& batch, uint32_t n, uint8_t* features = nullptr,
                         uint32_t* misses = nullptr);

// The kept trees' checks with a stated generation (src/cpu/geometry_query_trees.cpp), in lanes where
// built with SIMD: the largest of n cell entries (0 when n is 0), and whether every x, y and z of n
// points (xyzw floats, w not read as a number) is finite.
uint32_t largestEntry(const uint32_t* entries, size_t n);
bool xyzFinite(const float* xyzw, size_t points);

// Fingerprints of the kept trees' cells and vertices (src/cpu/geometry_query_trees.cpp: the default,
// compared path reads the input once, not the input and the tree's copy). The words are cut into blocks
// of kFingerprintWords (the last one shorter); each block's fingerprint is two 64-bit NH sums (UMAC's
// NH: sum over the block's word pairs (2i, 2i+1) of (w[2i] + k[2i] mod 2^32) * (w[2i+1] + k[2i+1] mod
// 2^32) mod 2^64, a missing last partner read as 0) with two independent keys of kFingerprintWords random
// words each, drawn once per process (fingerprintKey). Equal blocks give equal fingerprints; two
// different blocks of the same length give equal fingerprints with probability at most 2^-64 over
// the keys (NH is 2^-32-almost-universal for equal lengths, per key). xyzOnly: every fourth word (a
// point's w) is read as 0. out: 2 * ceil(n / kFingerprintWords) values, block b's at 2b and 2b + 1.
// SIMD builds read eight parts of the array at once (largestEntry four); the values do not depend on the
// target (sums mod 2^64).
inline constexpr size_t kFingerprintWords = 1024;
size_t fingerprintCount(size_t n);  // values written for n words: 2 * ceil(n / kFingerprintWords)
void blockFingerprints(const uint32_t* words, size_t n, bool xyzOnly, uint64_t* out);
// The plain loop (no lanes): blockFingerprints' values of the blocks from firstBlock on (the SIMD code's
// last, shorter block; the tests' reference).
void blockFingerprintsPlain(const uint32_t* words, size_t n, bool xyzOnly, size_t firstBlock, uint64_t* out);
// The two keys, kFingerprintWords words each (key k's word i at k * kFingerprintWords + i).
const uint32_t* fingerprintKey();

}  // namespace vkc::cpu
