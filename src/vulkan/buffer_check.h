// Private: checks of buffers the host binds, shared by every stage's record().
#pragma once

#include <string>

#include "context_impl.h"

namespace vkc::detail {

// `range` must be non-null, hold `needed` bytes, be aligned for a storage-buffer binding and fit in
// maxStorageBufferRange. Messages read "<owner>::<field> holds 1584 bytes; the stage needs 1600 bytes".
inline Status checkBufferRange(const ContextImpl& ctx, const BufferRange& range, const char* owner, const char* field,
                               VkDeviceSize needed) {
  const std::string name = std::string(owner) + "::" + field;
  if (range.buffer == VK_NULL_HANDLE) return Error{ErrorCode::kInvalidArgument, name + ".buffer is null"};
  if (range.size < needed) {
    return Error{ErrorCode::kBufferTooSmall, name + " holds " + std::to_string(range.size) + " bytes; the stage needs " +
                                                 std::to_string(needed) + " bytes"};
  }
  const VkDeviceSize align = ctx.info.minStorageBufferOffsetAlignment;
  if (align > 0 && range.offset % align != 0) {
    return Error{ErrorCode::kInvalidArgument, name + ".offset " + std::to_string(range.offset) +
                                                  " is not a multiple of the device's minStorageBufferOffsetAlignment (" +
                                                  std::to_string(align) + ")"};
  }
  if (needed > ctx.info.maxStorageBufferRange) {
    return Error{ErrorCode::kLimitExceeded, name + " needs " + std::to_string(needed) +
                                                " bytes in one binding; the device allows maxStorageBufferRange = " +
                                                std::to_string(ctx.info.maxStorageBufferRange)};
  }
  return {};
}

}  // namespace vkc::detail
