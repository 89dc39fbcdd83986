// Private interface of the continuous mesh queries (src/cpu/geometry_queries_mesh_ccd.cpp, issue 17):
// a line mesh against a line mesh (itself included) and a surface mesh against a point set, with the
// method kContinuous. Called by the mesh driver (src/cpu/geometry_queries_mesh.cpp) and validation.
#pragma once

#include <cstdint>
#include <string>

#include "vkcollide/geometry_queries.h"
#include "vkcollide/result.h"

namespace vkc::cpu {

// Whether the mesh pair (lo <= hi: the types in order) has a continuous method: line mesh vs line
// mesh, point set vs surface mesh (open or closed).
bool meshCcdPairSupported(uint32_t lo, uint32_t hi);

// A continuous mesh query qi of `input` (its pair supported): no state entries (state 0) and
// previousPoints given (the previous vertices and points). Errors name the field.
Status validateMeshCcdQuery(const GeometryQueryInput& input, size_t qi);

// Query qi's contacts (validated input, a continuous mesh query), written as elements total,
// total + 1, ... below capacity; returns the number found. bruteForce: every cell of the swept boxes'
// filter instead of the BVH's candidates (the same contacts bit for bit). simd (kCpuSimd): a line mesh
// against itself finds its candidates with the SIMD self walk (kCpuScalar: the scalar one; the same
// candidates).
uint64_t meshCcdContacts(const GeometryQueryInput& input, size_t qi, const GeometryQueryOutput& output,
                         uint64_t total, uint64_t capacity, bool bruteForce, bool simd);

}  // namespace vkc::cpu
