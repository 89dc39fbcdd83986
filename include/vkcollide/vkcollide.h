// vkcollide: a cross-vendor GPU collision engine for cloth and particles.
// Include this header for the whole public API of the library (target vkcollide::vkcollide).
// Scene files are a separate library: vkcollide/scene.h, target vkcollide::scene.
#pragma once

#include "vkcollide/bounds.h"
#include "vkcollide/bvh.h"
#include "vkcollide/collide_meshes.h"
#include "vkcollide/collide_shapes.h"
#include "vkcollide/context.h"
#include "vkcollide/cost_model.h"
#include "vkcollide/cpu_executor.h"
#include "vkcollide/geometry_queries.h"
#include "vkcollide/inter_collision.h"
#include "vkcollide/mesh_intersection.h"
#include "vkcollide/radix_sort.h"
#include "vkcollide/result.h"
#include "vkcollide/self_collision.h"
#include "vkcollide/types.h"
