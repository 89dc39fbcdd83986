// Test support for scene-file text: edit a valid scene and expect a named parse error.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "vkcollide/scene.h"

namespace vkc::test {

// `text` with its first `from` replaced by `to` (a test failure if `from` is not in it).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Parses `text` (without a location, or with `base` as the directory of "obj" files when it is not
// empty), expects a kInvalidArgument failure and returns the message.
inline std::string errorOf(const std::string& text, const std::string& base = {}) {
  Result<Scene> s = base.empty() ? parseScene(text) : parseScene(text, base);
  EXPECT_FALSE(s.ok()) << "parsed: " << text;
  if (s.ok()) return {};
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  return s.message();
}

}  // namespace vkc::test

// Expects parsing `text` to fail with a message that contains `substring`.
#define EXPECT_ERROR(text, substring)                                  \
  do {                                                                 \
    const std::string vkc_msg = ::vkc::test::errorOf(text);            \
    EXPECT_NE(vkc_msg.find(substring), std::string::npos) << vkc_msg; \
  } while (0)
