// Meshes for the benchmarks (bench_bvh, bench_collide_meshes): the Spot mesh (../shared/meshes/spot.obj
// beside the repository) read from OBJ (tests/support/obj_mesh.h), subdivided 1-to-4 until large
// enough, and evenly strided subsets of its triangles.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "../tests/support/obj_mesh.h"

namespace vkc::bench {

using test::Mesh;
using test::octahedron;
using test::readObj;
using test::strided;
using test::subdivide;

// The mesh to subdivide: `path`, or when empty spot.obj beside the repository (path set to it), or
// when that is missing the octahedron subdivided 5 times onto the unit sphere (path says so).
inline bool loadBenchMesh(std::string& path, Mesh& base, const char* program) {
  if (path.empty()) {
    for (const char* rel : {"/../shared/meshes/spot.obj", "/../../shared/meshes/spot.obj"}) {
      if (readObj(std::string(VKC_SOURCE_DIR) + rel, base)) {
        path = std::string(VKC_SOURCE_DIR) + rel;
        return true;
      }
    }
    base = octahedron();
    for (int i = 0; i < 5; ++i) base = subdivide(base);
    for (Float4& v : base.vertices) {
      const float r = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
      v = {v.x / r, v.y / r, v.z / r, 0};
    }
    path = "(spot.obj not found: octahedron subdivided 5 times, on the unit sphere)";
    return true;
  }
  if (!readObj(path, base)) {
    std::fprintf(stderr, "%s: cannot read the OBJ mesh %s\n", program, path.c_str());
    return false;
  }
  return true;
}

}  // namespace vkc::bench
