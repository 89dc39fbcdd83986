// Private: what tests may see of the inter-collision stage's recording.
#pragma once

#include <string>
#include <vector>

#include "recorder.h"
#include "vkcollide/inter_collision.h"

namespace vkc::detail {

struct PlannedPass {
  std::string name;
  bool indirect = false;  // dispatched with vkCmdDispatchIndirect
  BarrierDecision barrier;
  std::vector<VkBuffer> written;  // the buffers of the bindings the pass writes
};

// The passes record() would record for `info` (after validation) and their barrier plan.
Result<std::vector<PlannedPass>> interCollisionBarrierPlan(InterCollisionStage& stage, const InterCollisionRecordInfo& info);

}  // namespace vkc::detail
