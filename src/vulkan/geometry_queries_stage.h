// Private: what tests may reach of the geometry-query stage.
#pragma once

#include <cstdint>

#include "vkcollide/geometry_queries.h"

namespace vkc::detail {

// Marks `families` (kGeometryQueryFamily* bits) as if the device had failed to create their QUERY
// pipelines: the stage's batches from host memory of those families' pairs then keep the slot passes,
// as they do after a real failure (an H100 with driver 580 failed the convex family's). For tests.
void markGeometryQueryPrimitiveUnavailable(GeometryQueryStage& stage, uint32_t families);

}  // namespace vkc::detail
