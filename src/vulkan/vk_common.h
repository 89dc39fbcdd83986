// Private: Vulkan includes (through volk) and error helpers shared by src/vulkan/.
#pragma once

#include "vkc_volk_names.h"  // volk's globals prefixed vkc_: the host keeps its own Vulkan symbols
#include <volk.h>

#include <string>

#include "util/try.h"
#include "vkcollide/result.h"

namespace vkc::detail {

const char* vkResultName(VkResult r);

inline Error vkError(VkResult r, const char* call) {
  const ErrorCode code = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? ErrorCode::kOutOfMemory
                         : r == VK_ERROR_DEVICE_LOST                                            ? ErrorCode::kDeviceLost
                                                                                                : ErrorCode::kVulkan;
  return Error{code, std::string(call) + " failed: " + vkResultName(r)};
}

}  // namespace vkc::detail

// Evaluates a VkResult expression; on failure returns an Error naming the call from the function.
#define VKC_VK_TRY(expr)                                     \
  do {                                                       \
    const VkResult vkc_r_ = (expr);                          \
    if (vkc_r_ != VK_SUCCESS) return ::vkc::detail::vkError(vkc_r_, #expr); \
  } while (0)
