#version 460
// Pairwise geometry queries, the mesh CCD family: the continuous method with a mesh (line mesh vs
// line mesh edge-edge CCD, a line mesh against itself too; point set vs surface mesh vertex-triangle
// CCD), a slot per candidate pair from the device tree over the swept cells
// (shared/geometry_queries_mesh_ccd_slot.h, shared/geometry_queries_mesh_pairs.h). COUNT
// and WRITE passes (shared/geometry_queries_family.h, selected by a specialization constant declared
// in shared/geometry_queries_passes.h); the stage is described in shared/geometry_queries_bindings.h.
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILY VKC_GEOM_FAMILY_MESH_CCD
#include "shared/geometry_queries_family.h"
