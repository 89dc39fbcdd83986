// Private: what other stages and tests may see of the BVH stage's recording.
#pragma once

#include <vector>

#include "recorder.h"
#include "vkcollide/bvh.h"

namespace vkc::detail {

// Appends a build or refit (validated ranges: vertices, prevVertices (null: not swept), indices and
// the three outputs) to `rec`, for stages that build a BVH inside their own recording (the mesh
// collision stage). Preconditions as BvhStage::record() checks them.
void appendBvhPasses(BvhStage& stage, Recorder& rec, const BvhRecordInfo& info);

// The passes record() would record for `info` (after validation) and their barrier plan.
Result<std::vector<BarrierDecision>> bvhBarrierPlan(BvhStage& stage, const BvhRecordInfo& info);

}  // namespace vkc::detail
