#version 460
// Pairwise geometry queries, the continuous pair family: the continuous method (point sets against implicit geometries and primitives).
// COUNT and WRITE passes (shared/geometry_queries_family.h, selected by a specialization constant
// declared in shared/geometry_queries_passes.h); the stage is described in
// shared/geometry_queries_bindings.h.
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILY VKC_GEOM_FAMILY_CONTINUOUS
#include "shared/geometry_queries_family.h"
