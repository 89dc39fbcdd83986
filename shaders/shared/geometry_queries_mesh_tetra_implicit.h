// A tetrahedral mesh's tetrahedron against an implicit geometry (issue 17; ours), one contact per
// tetrahedron, as geometry_queries_mesh_implicit.h treats a triangle: the tetrahedron's point of least
// field among the 165 points of its barycentric lattice of order kGeomCellImplicitOrder (8: its corners,
// points on its edges and faces and inside it; a resolution of 1/8 of the cell, no refinement; the
// first of equal fields in lattice order). Where the field there is negative: a contact, the
// tetrahedron moving along the field's gradient by minus the field; its element is the lattice point's
// feature (the corners with a nonzero weight: a vertex, an edge, a face or the whole tetrahedron), the
// implicit geometry's the surface point (the tetrahedron's point moved by the depth).
// Like geometry_queries_implicit.h it reads the grid through the includer's accessors: included after
// geometry_queries_mesh_implicit.h (GLSL at file scope, C++ inside the body of a struct:
// src/cpu/geometry_queries_mesh_prims.cpp); no namespace and no include guard.

VKC_FN bool geomTetraImplicit(vec3 a, vec3 b, vec3 c, vec3 d, uvec4 ids, uint cell, GeomShape g,
                              VKC_OUT(GeomElement) tet, VKC_OUT(GeomElement) prim) {
  vec3 p = a;
  uint corners = 1u;
  float best = 3.0e38f;
  const float order = float(kGeomCellImplicitOrder);
  for (uint i = 0u; i <= kGeomCellImplicitOrder; ++i) {
    for (uint j = 0u; j + i <= kGeomCellImplicitOrder; ++j) {
      for (uint l = 0u; l + j + i <= kGeomCellImplicitOrder; ++l) {
        uint k = kGeomCellImplicitOrder - i - j - l;
        // Corner weights k, i, j, l over the order (a power of two: the corners exact).
        vec3 x = (a * float(k) + b * float(i) + c * float(j) + d * float(l)) / order;
        float f = geomGridDistance(g, x);
        if (f < best) {
          best = f;
          p = x;
          corners = (k > 0u ? 1u : 0u) | (i > 0u ? 2u : 0u) | (j > 0u ? 4u : 0u) | (l > 0u ? 8u : 0u);
        }
      }
    }
  }
  GeomClosest cl = geomImplicitClosest(g, p);
  return geomCellContact(p, vec3(cl.normal), -cl.point.w, corners, cell, ids, tet, prim);
}
