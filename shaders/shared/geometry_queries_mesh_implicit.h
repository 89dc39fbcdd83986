// The mesh rows of the geometry queries against an implicit geometry (issue 17): a surface mesh's
// triangle or a line mesh's segment against the field, one contact per cell, the way the implicit
// pairs treat a capsule (geometry_queries_implicit.h: the ball at its axis point of least field).
// Like geometry_queries_implicit.h it reads the grid through the includer's accessors: included after
// it (GLSL at file scope, C++ inside the body of a struct: src/cpu/geometry_queries_mesh_prims.cpp);
// no namespace and no include guard. geometry_queries_mesh_prims.h must be included first.
//
// The cell's point of least field: a segment's by geomGridSegmentDeepestParam (kGeomAxisSamples + 1
// samples, refined by a golden-section search); a triangle's among the 45 points of its barycentric
// lattice of order kGeomCellImplicitOrder (geometry_queries_mesh_prims.h: 8; its corners, 7 points
// inside each edge, 21 inside the face: a resolution of 1/8 of the cell, no refinement). Where the field
// there is negative: a contact, the mesh moving along the field's gradient by minus the field (the mesh's
// point: a corner is a vertex element, a point of an edge the edge's, else the triangle's; the
// implicit geometry's point: the surface point, the mesh's point moved by the depth).

VKC_FN bool geomCellImplicit(vec3 a, vec3 b, vec3 c2, uint n, uvec4 ids, uint cell, GeomShape g,
                             VKC_OUT(GeomElement) mesh, VKC_OUT(GeomElement) prim) {
  vec3 p = a;
  uint corners = 1u;
  if (n == 2u) {
    float t = geomGridSegmentDeepestParam(g, a, b);
    p = mix(a, b, t);
    corners = t == 0.0f ? 1u : (t == 1.0f ? 2u : 3u);
  } else {
    float best = 3.0e38f;
    const float order = float(kGeomCellImplicitOrder);
    for (uint i = 0u; i <= kGeomCellImplicitOrder; ++i) {
      for (uint j = 0u; j + i <= kGeomCellImplicitOrder; ++j) {
        uint k = kGeomCellImplicitOrder - i - j;
        // Corner weights k, i, j over the order (a power of two: the corners exact).
        vec3 x = (a * float(k) + b * float(i) + c2 * float(j)) / order;
        float f = geomGridDistance(g, x);
        if (f < best) {
          best = f;
          p = x;
          corners = (k > 0u ? 1u : 0u) | (i > 0u ? 2u : 0u) | (j > 0u ? 4u : 0u);
        }
      }
    }
  }
  GeomClosest cl = geomImplicitClosest(g, p);
  return geomCellContact(p, vec3(cl.normal), -cl.point.w, corners, cell, ids, mesh, prim);
}
