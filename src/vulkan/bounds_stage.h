// Private: what tests may see of the bounds stage's recording.
#pragma once

#include <vector>

#include "recorder.h"
#include "vkcollide/bounds.h"

namespace vkc::detail {

// Appends the bounds passes over validated particle ranges (a stage created with includePrevious
// may run without it) writing the stage's own output, for stages that run bounds first.
void appendBoundsPasses(BoundsStage& stage, Recorder& rec, const BufferRange& particles,
                        const BufferRange& prevParticles, bool includePrevious, uint32_t frame);

// The passes record() would record for `info` (after validation) and their barrier plan.
Result<std::vector<BarrierDecision>> boundsBarrierPlan(BoundsStage& stage, const BoundsRecordInfo& info);

}  // namespace vkc::detail
