// Private: what tests may see of the bounds stage's recording.
#pragma once

#include <vector>

#include "recorder.h"
#include "vkcollide/bounds.h"

namespace vkc::detail {

// The passes record() would record for `info` (after validation) and their barrier plan.
Result<std::vector<BarrierDecision>> boundsBarrierPlan(BoundsStage& stage, const BoundsRecordInfo& info);

}  // namespace vkc::detail
