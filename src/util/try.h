// Private: error propagation for Status / Result<T>.
#pragma once

#include "vkcollide/result.h"

#define VKC_CONCAT_INNER(a, b) a##b
#define VKC_CONCAT(a, b) VKC_CONCAT_INNER(a, b)
#define VKC_TRY_IMPL(expr, name)         \
  do {                                   \
    auto&& name = (expr);                \
    if (!name.ok()) return name.error(); \
  } while (0)
// Evaluates a Status or Result expression and returns its Error from the calling function on failure.
#define VKC_TRY(expr) VKC_TRY_IMPL(expr, VKC_CONCAT(vkc_try_, __COUNTER__))
