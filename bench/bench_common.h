// Helpers shared by the benchmarks: medians, wall-clock sampling, a small JSON writer.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

namespace vkc::bench {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

inline double nowMs() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
}

// Wall-clock samples of `fn`, in ms per call. Each sample runs `fn` `inner` times (chosen from the
// warm-up so that a sample lasts at least minSampleMs: tiny inputs are otherwise below the clock's
// noise) and `reps` samples are taken; `reps` shrinks (to at least minReps) when reps samples would
// exceed budgetMs.
struct WallSamples {
  std::vector<double> ms;
  uint32_t inner = 1;
};

template <class Fn>
WallSamples sampleWall(Fn&& fn, uint32_t reps, uint32_t warmups, double minSampleMs, double budgetMs, uint32_t minReps) {
  double once = 0;
  for (uint32_t i = 0; i < std::max(warmups, 1u); ++i) {
    const double t0 = nowMs();
    fn();
    once = nowMs() - t0;
  }
  WallSamples s;
  if (once < minSampleMs) s.inner = static_cast<uint32_t>(std::min(1e6, std::ceil(minSampleMs / std::max(once, 1e-6))));
  const double sampleMs = once * s.inner;
  if (sampleMs * reps > budgetMs) {
    reps = std::max(minReps, static_cast<uint32_t>(budgetMs / std::max(sampleMs, 1e-6)));
  }
  s.ms.reserve(reps);
  for (uint32_t r = 0; r < reps; ++r) {
    const double t0 = nowMs();
    for (uint32_t i = 0; i < s.inner; ++i) fn();
    s.ms.push_back((nowMs() - t0) / s.inner);
  }
  return s;
}

inline std::string utcDate() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

inline std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

inline std::string jsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace vkc::bench
