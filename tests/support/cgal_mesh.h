// A test mesh (support/obj_mesh.h) as CGAL's Surface_mesh over the inexact-constructions kernel with
// exact predicates: the input of CGAL::Polygon_mesh_processing, the oracle of the mesh intersection
// tests and the anchor of bench_mesh_intersection. Include only where CGAL is (VKC_HAVE_CGAL).
#pragma once

#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Surface_mesh.h>

#include <vector>

#include "obj_mesh.h"

namespace vkc::test {

using CgalKernel = CGAL::Exact_predicates_inexact_constructions_kernel;
using CgalSurfaceMesh = CGAL::Surface_mesh<CgalKernel::Point_3>;

// The mesh's vertices (xyz, as doubles) and triangles, in order.
inline CgalSurfaceMesh toCgalSurfaceMesh(const Mesh& m) {
  CgalSurfaceMesh s;
  std::vector<CgalSurfaceMesh::Vertex_index> v;
  for (const Float4& p : m.vertices) v.push_back(s.add_vertex(CgalKernel::Point_3(p.x, p.y, p.z)));
  for (size_t i = 0; i < m.indices.size(); i += 3) s.add_face(v[m.indices[i]], v[m.indices[i + 1]], v[m.indices[i + 2]]);
  return s;
}

}  // namespace vkc::test
