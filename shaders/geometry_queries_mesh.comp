#version 460
// Pairwise geometry queries, the mesh pair family: a surface, line or tetrahedral mesh against a sphere,
// capsule, plane or oriented box, one slot per cell (two per triangle against a capsule); a tetrahedral
// mesh against a point set, one slot per point and tetrahedron.
// COUNT and WRITE passes (shared/geometry_queries_family.h, selected by a specialization constant
// declared in shared/geometry_queries_passes.h); the stage is described in
// shared/geometry_queries_bindings.h.
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILY VKC_GEOM_FAMILY_MESH
#include "shared/geometry_queries_family.h"
