// Private: what tests see of the self-collision stage beyond its public API.
#pragma once

#include <cstdint>
#include <vector>

#include "recorder.h"
#include "vkcollide/self_collision.h"

namespace vkc::detail {

// The buffers (as Recorder buffer ids) that the passes record() would record for `info` write, after
// the same validation, sorted and once each: the host's particles and the scratch of info.frame (the
// stage's own, its bounds stage's and its radix sort's). Empty for a layout without self-colliding
// particles.
Result<std::vector<uint64_t>> selfCollisionWrites(SelfCollisionStage& stage, const SelfCollisionRecordInfo& info);

}  // namespace vkc::detail
