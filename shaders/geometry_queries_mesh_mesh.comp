#version 460
// Pairwise geometry queries, the mesh-mesh pair family: two meshes (surface-surface, surface-line,
// line-line, line-tetrahedral, surface-tetrahedral, tetrahedral-tetrahedral), one slot per pair of
// cells (shared/geometry_queries_mesh_mesh_slot.h).
// COUNT and WRITE passes (shared/geometry_queries_family.h, selected by a specialization constant
// declared in shared/geometry_queries_passes.h); the stage is described in
// shared/geometry_queries_bindings.h.
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILY VKC_GEOM_FAMILY_MESH_MESH
#include "shared/geometry_queries_family.h"
