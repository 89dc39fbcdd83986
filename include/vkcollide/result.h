// Results and errors. No exception crosses the vkcollide API: every fallible call returns a
// Status or a Result<T> that carries an error code and a message naming the offending field. The one
// exception is running out of host memory: std::bad_alloc from a host allocation (scratch in
// proportion to the input, std::vector results) propagates as the standard library throws it.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace vkc {
#include "vkcollide/export.h"
VKC_API_BEGIN

enum class ErrorCode {
  kInvalidArgument,   // a description or input failed validation; the message names the field
  kBufferTooSmall,    // a buffer bound by the host is smaller than the stage needs
  kLimitExceeded,     // the input exceeds a device limit; the message says which and its value
  kUnsupported,       // the device lacks a feature vkcollide needs; the message lists them
  kVulkan,            // a Vulkan call failed; the message names the call and the VkResult
  kOutOfMemory,       // device or host-visible memory ran out (VK_ERROR_OUT_OF_DEVICE/HOST_MEMORY)
  kDeviceLost,        // the device was lost (VK_ERROR_DEVICE_LOST); the context must be recreated
  kValidation,        // the validation layer reported a message (tests, and contexts created with validation)
  kIo,                // a file could not be read or written
};

const char* toString(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInvalidArgument;
  std::string message;
};

// The result of a call that returns no value: ok() or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }
  const std::string& message() const { return error_.message; }

 private:
  Error error_;
  bool ok_ = true;
};

// A value or an Error.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}       // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}   // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // Preconditions: ok() for value(), !ok() for error().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const Error& error() const { return std::get<1>(v_); }
  const std::string& message() const { return error().message; }
  Status status() const { return ok() ? Status{} : Status{error()}; }

 private:
  std::variant<T, Error> v_;
};

VKC_API_END
}  // namespace vkc
