// How many cases a heavy randomized test runs. The default and scalar builds run all of them; the
// sanitizer build (-O1 with AddressSanitizer and UBSan, where these tests run 8-10x slower) runs a
// quarter: its point is memory errors and undefined behaviour, which the first cases reach as well as
// the last, and the full count already ran in the other two builds.
#pragma once

namespace vkc::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr int kHeavyCaseDivisor = 4;
#else
inline constexpr int kHeavyCaseDivisor = 1;
#endif

constexpr int heavyCases(int n) { return n / kHeavyCaseDivisor; }

}  // namespace vkc::test
