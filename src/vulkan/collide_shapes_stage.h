// Private: what tests may see of the sphere/capsule stage's recording.
#pragma once

#include <cstdint>
#include <vector>

#include "vkcollide/collide_shapes.h"

namespace vkc::detail {

// The buffers (as BufferUse ids, sorted, unique) that a record() of `frame` writes, the host's
// particle buffers left out: the buffer the frame's spheres are copied into and every buffer a pass
// writes (the embedded bounds stage's included), with CCD and friction on. Frames in flight must not
// share any of them.
std::vector<uint64_t> shapeFrameWrites(ShapeCollisionStage& stage, uint32_t frame);

}  // namespace vkc::detail
