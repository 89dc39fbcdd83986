// Private: what tests may see of the mesh collision stage's recording.
#pragma once

#include <cstdint>
#include <vector>

#include "vkcollide/context.h"

#include "vkcollide/collide_meshes.h"

namespace vkc::detail {

// The buffers (as BufferUse ids, sorted, unique) that a record() of `frame` writes, the host's
// particle buffers left out: the buffers the record's copies and updates write (the frame's raw
// vertices, indices, mesh table, sweeps, state) and every buffer a pass writes (the embedded BVH
// stage's included), for a build. Frames in flight must not share any of them.
std::vector<uint64_t> meshFrameWrites(MeshCollisionStage& stage, uint32_t frame);

// The frame's state buffer (16 bytes): word 0 holds the float bits of the rigid chord bound that the
// last gather of the frame computed (the largest over the rigid meshes' vertices).
BufferRange meshStateBuffer(MeshCollisionStage& stage, uint32_t frame);

}  // namespace vkc::detail
