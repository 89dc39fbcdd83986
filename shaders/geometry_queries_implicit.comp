#version 460
// Pairwise geometry queries, the implicit pair family: static pairs with an implicit geometry, a surface,
// line or tetrahedral mesh's included (one slot per cell: shared/geometry_queries_mesh_slot.h).
// COUNT and WRITE passes (shared/geometry_queries_family.h, selected by a specialization constant
// declared in shared/geometry_queries_passes.h); the stage is described in
// shared/geometry_queries_bindings.h.
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILY VKC_GEOM_FAMILY_IMPLICIT
#include "shared/geometry_queries_family.h"
