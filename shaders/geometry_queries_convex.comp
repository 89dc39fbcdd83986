#version 460
// Pairwise geometry queries, the convex pair family: cylinder-cylinder and cylinder-box (GJK/EPA), and a
// surface, line or tetrahedral mesh against a cylinder (one slot per cell: shared/geometry_queries_mesh_slot.h).
// COUNT and WRITE passes (shared/geometry_queries_family.h, selected by a specialization constant
// declared in shared/geometry_queries_passes.h); the stage is described in
// shared/geometry_queries_bindings.h.
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILY VKC_GEOM_FAMILY_CONVEX
#include "shared/geometry_queries_family.h"
