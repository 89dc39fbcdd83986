// Helpers shared by the geometry-query benchmarks (bench_geometry_queries, bench_mesh_queries): seeded
// random points, unit vectors and quaternions, and a batch's output grown to hold every contact, with
// a bitwise comparison of two backends' outputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "vkcollide/vkcollide.h"

namespace vkc::bench {

class Random {
 public:
  explicit Random(uint32_t seed) : rng_(seed) {}
  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
  Float4 point(float extent) {
    return {uniform(-extent, extent), uniform(-extent, extent), uniform(-extent, extent), 0};
  }
  Float4 unit() {
    for (;;) {
      const Float4 v = point(1.0f);
      const float len = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
      if (len > 0.1f && len <= 1.0f) return {v.x / len, v.y / len, v.z / len, 0};
    }
  }
  Float4 quaternion() {
    for (;;) {
      const Float4 v = point(1.0f);
      const float w = uniform(-1.0f, 1.0f);
      const float len = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z + w * w);
      if (len > 0.1f && len <= 1.0f) return {v.x / len, v.y / len, v.z / len, w / len};
    }
  }

 private:
  std::mt19937 rng_;
};

// A batch's output: contacts, one range per query, the counts; the continuous queries' state.
struct QueryOutput {
  std::vector<ContactElement> a, b;
  std::vector<ContactRange> ranges;
  std::vector<Float4> state;
  GeometryQueryCounts counts;
};

// Runs the batch on `backend` into `out`, sized to hold every contact (found by a first run). A batch
// with continuous queries has `stateCount` state entries: zeroed before each call (part of its time),
// so that every call starts from the same state and gives the same output.
inline Status runQueryInto(Backend backend, Context* context, const GeometryQueryInput& input,
                           QueryOutput& out, size_t stateCount = 0) {
  if (out.ranges.size() != input.queries.size()) {
    out.ranges.assign(input.queries.size(), {});
    out.a.assign(input.queries.size(), {});
    out.b.assign(input.queries.size(), {});
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    out.state.assign(stateCount, Float4{0, 0, 0, 0});
    Result<GeometryQueryCounts> c =
        queryGeometries(backend, context, input, {out.a, out.b, out.ranges, out.state});
    if (!c) return c.error();
    out.counts = *c;
    if (!c->overflow) return {};
    out.a.assign(c->contacts, {});
    out.b.assign(c->contacts, {});
  }
  return Error{ErrorCode::kLimitExceeded, "the output overflowed twice"};
}

// Whether two outputs hold the same counts, ranges and written contacts, bit for bit.
inline bool sameContacts(const QueryOutput& x, const QueryOutput& y) {
  const size_t n = x.counts.written;
  return x.counts.contacts == y.counts.contacts && x.counts.written == y.counts.written &&
         x.ranges.size() == y.ranges.size() && x.state.size() == y.state.size() &&
         (x.state.empty() ||
          std::memcmp(x.state.data(), y.state.data(), x.state.size() * sizeof(Float4)) == 0) &&
         std::memcmp(x.ranges.data(), y.ranges.data(), x.ranges.size() * sizeof(ContactRange)) == 0 &&
         (n == 0 || (std::memcmp(x.a.data(), y.a.data(), n * sizeof(ContactElement)) == 0 &&
                     std::memcmp(x.b.data(), y.b.data(), n * sizeof(ContactElement)) == 0));
}

}  // namespace vkc::bench
