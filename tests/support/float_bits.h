// A float's bits and back, for the tests that compare results bit for bit or step by ULP.
#pragma once

#include <cstdint>
#include <cstring>

namespace vkc::test {

inline float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint32_t toBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace vkc::test
