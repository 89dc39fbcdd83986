// Pieces every vkcollide subcommand shares (tools/*_commands.cpp): the exit codes, and the parsing of
// a count and of a backend name.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "vkcollide/types.h"

namespace vkc::tool {

// Exit codes of every command: 0 success; 1 a run failed or results differ; 2 usage errors and bad
// input files (nothing is written then).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

// A decimal count in [min, max] (no sign, nothing after it).
inline bool parseCount(const char* s, uint32_t min, uint32_t max, uint32_t& out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s || *end != '\0' || s[0] == '-' || v < min || v > max) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

// "vulkan", "cpu" (or "cpu-simd"), "cpu-scalar".
inline std::optional<Backend> parseBackend(const std::string& s) {
  if (s == "vulkan") return Backend::kVulkan;
  if (s == "cpu" || s == "cpu-simd") return Backend::kCpuSimd;
  if (s == "cpu-scalar") return Backend::kCpuScalar;
  return std::nullopt;
}

}  // namespace vkc::tool
