// Private interface of the mesh rows of the geometry queries (src/cpu/geometry_queries_mesh.cpp):
// validation of the mesh geometries and queries, and the CPU driver (a BVH per mesh, the per-cell
// arithmetic of shaders/shared/geometry_queries_mesh.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "vkcollide/geometry_queries.h"
#include "vkcollide/result.h"

namespace vkc::cpu {

bool isMeshType(GeometryType type);

// Every mesh geometry of the input (and its previous pose, which must equal it): fields, ranges, cell
// indices, degenerate cells. Errors name the field.
Status validateMeshGeometries(const GeometryQueryInput& input);

// A query with a mesh on either side (lo <= hi: the types in order; closed: the mesh carries
// kGeometryFlagClosed; name: "queries[3]"): static only, a pair built so far (kUnsupported otherwise)
// or an N/A pair of the seed's table (kInvalidArgument).
Status validateMeshQuery(uint32_t lo, uint32_t hi, bool closed, GeometryMethod method,
                         const std::string& name);

// kVulkan: the queries with a mesh are refused (kUnsupported), naming the first such query.
Status refuseMeshQueriesOnVulkan(const GeometryQueryInput& input);

// The contacts of the queries with a mesh (validated input), in one call: a BVH per mesh geometry,
// built on first use and kept for the call's other queries.
class MeshQueries {
 public:
  explicit MeshQueries(const GeometryQueryInput& input);
  ~MeshQueries();
  MeshQueries(const MeshQueries&) = delete;
  MeshQueries& operator=(const MeshQueries&) = delete;

  // Whether query qi has a mesh on either side.
  bool handles(size_t qi) const;
  // Query qi's contacts, elements total, total + 1, ... of the output (written below capacity), in
  // order: by cell, then slot (a tetrahedral mesh against a point set: by point, then cell). Returns
  // the number found. bruteForce: every cell instead of the BVH's candidates (the tests' oracle; the
  // same contacts bit for bit).
  uint64_t contacts(size_t qi, const GeometryQueryOutput& output, uint64_t total, uint64_t capacity,
                    bool bruteForce = false);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace vkc::cpu
