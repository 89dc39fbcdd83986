// The CPU SIMD backend's gather of self collision (Highway, runtime dispatch). It finds each pair once
// over a half neighbourhood: a table of column starts gives every slot two blocks of consecutive
// candidate slots, tested a vector of at most 8 lanes at a time (dense columns: running pointers per column
// window instead). Then each slot's pairs are put in the gather's order (column,
// then slot) and applied with the shared scalar function: the results are bitwise equal to the scalar
// backend's, which runs the shader's own gather. Keys come from vector gathers.
#include "cpu/self_collision.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "cpu/executor.h"

// Helpers compiled once (this file is included again for every SIMD target).
#ifndef VKC_SELF_COLLISION_SIMD_HELPERS
#define VKC_SELF_COLLISION_SIMD_HELPERS
namespace vkc::cpu {

// Applies the neighbours of slot k whose bits are set in `bits` (candidates base + b), in order.
inline void applyBits(const SelfSorted& s, uint32_t k, uint32_t base, uint64_t bits, const gpu::SelfGrid& grid,
                      float d, float stiffness, uint32_t& count, gpu::vec3& acc,
                      std::vector<std::array<uint32_t, 2>>* pairs, const SelfPairFilter* filter) {
  while (bits != 0) {
    const uint32_t m = base + static_cast<uint32_t>(__builtin_ctzll(bits));
    bits &= bits - 1;
    if (m == k) continue;
    if (filter != nullptr && !filter->allows(k, m)) continue;
    acc += gpu::selfPairCorrection(s.particle(k), s.particle(m), k, m, grid.axes.x, d, stiffness);
    ++count;
    if (pairs != nullptr) pairs->push_back({k, m});
  }
}

// Candidates [a, z) of slot k: bit i set where candidate a + i is a pair (z - a <= 64). The same
// arithmetic as selfIsPair (no fused multiply-add), scalar. (Rest positions from the SoA copies: the
// SIMD backend keeps no vec4 copy of them; selfIsPair reads only their xyz.)
inline uint64_t pairBitsScalar(const SelfSorted& s, uint32_t k, uint32_t a, uint32_t z, float d2, bool useRest) {
  uint64_t bits = 0;
  auto restOf = [&](uint32_t m) {
    return useRest ? gpu::vec4(s.rx[m], s.ry[m], s.rz[m], 0.0f) : gpu::vec4(0.0f);
  };
  const gpu::vec4 pi = s.particle(k);
  const gpu::vec4 ri = restOf(k);
  for (uint32_t m = a; m < z; ++m) {
    if (gpu::selfIsPair(pi, s.particle(m), ri, restOf(m), d2, useRest)) {
      bits |= uint64_t{1} << (m - a);
    }
  }
  return bits;
}

// Slot k's (cloth-local) neighbours e[0 .. count), in the gather's order: sums their corrections
// (the shader's selfPairCorrection, in that order) into sums[begin + k] and sets counts[begin + k].
inline void applySlot(const SelfSorted& s, uint32_t begin, uint32_t k, const uint32_t* e, uint32_t count,
                      const gpu::SelfGrid& grid, float d, float stiffness, uint32_t* counts, gpu::vec3* sums,
                      std::vector<std::array<uint32_t, 2>>* pairs) {
  gpu::vec3 acc(0.0f);
  const gpu::vec4 pk = s.particle(begin + k);
  for (uint32_t j = 0; j < count; ++j) {
    const uint32_t m = begin + e[j];
    acc += gpu::selfPairCorrection(pk, s.particle(m), begin + k, m, grid.axes.x, d, stiffness);
    if (pairs != nullptr) pairs->push_back({begin + k, m});
  }
  counts[begin + k] = count;
  sums[begin + k] = acc;
}

// The gather's order of slot k's neighbours: column (hash offsets of the neighbour's cells, in
// selfColumnRange's order), then slot. Keys of one column order as slots do, so comparing (column,
// slot) is comparing (column, key, slot).
inline uint32_t gatherColumn(const uint32_t* keys, uint32_t k, uint32_t m) {
  return ((keys[m] >> 24) + 1u - (keys[k] >> 24)) * 3u + (((keys[m] >> 16) & 0xFFu) + 1u - ((keys[k] >> 16) & 0xFFu));
}

// The size of a cloth's table of column starts (below): its columns c0 = K[0] >> 16 .. K[n - 1] >> 16
// and the two rows above the last.
inline uint32_t columnStartsSize(const uint32_t* K, uint32_t n) {
  return n > 0 ? (K[n - 1] >> 16) - (K[0] >> 16) + 0x104u : 0u;
}

// start[c - c0 + 1] for every column c that has slots: one past its last slot (written by the last
// slot of each column among K[qa .. qb): no two ranges write the same entry).
inline void markColumnEnds(const uint32_t* K, uint32_t n, uint32_t qa, uint32_t qb, uint32_t* start) {
  const uint32_t c0 = K[0] >> 16;
  for (uint32_t k = qa; k < qb; ++k) {
    if (k + 1 == n || (K[k + 1] >> 16) != (K[k] >> 16)) start[(K[k] >> 16) - c0 + 1u] = k + 1;
  }
}

// The cloth's keys (slots [begin, begin + n)) where `count` sentinels (0xFFFFFFFF, above every key:
// hash cells <= 254) already follow them in s.keys (the last cloth of collideSelfCpu's keys, padded by
// kSelfSimdPad of them), else null: the dense slots' running pointers then read the keys in place
// instead of from a copy.
inline const uint32_t* keysWithSentinelsInPlace(const SelfSorted& s, uint32_t begin, uint32_t n, uint32_t count) {
  const size_t end = size_t{begin} + n;
  if (end + count > s.keys.size()) return nullptr;
  for (size_t i = end; i < end + count; ++i) {
    if (s.keys[i] != 0xFFFFFFFFu) return nullptr;
  }
  return s.keys.data() + begin;
}

// The columns without slots take the end of the last column before them (a running maximum).
inline void fillColumnStarts(std::vector<uint32_t>& start) {
  for (uint32_t c = 1, top = 0; c < start.size(); ++c) {
    top = std::max(top, start[c]);
    start[c] = top;
  }
}

// A directed pair for applyDirected: slot << 36 | gather column << 32 | neighbour (cloth-local slots
// below 2^28), so that sorting puts each slot's neighbours in the gather's order.
inline uint64_t directedEntry(const uint32_t* keys, uint32_t k, uint32_t m) {
  return uint64_t{k} << 36 | uint64_t{gatherColumn(keys, k, m)} << 32 | m;
}

// The calling thread's list of directed pairs, empty (scratch reused across calls).
inline std::vector<uint64_t>& directedScratch() {
  thread_local std::vector<uint64_t> directed;
  directed.clear();
  return directed;
}

// Sorts the directed pairs (directedEntry) and applies each slot's neighbours in that order
// (applySlot): the sums of the slots that have pairs; the caller sets the other slots' counts to 0.
inline void applyDirected(const SelfSorted& s, uint32_t begin, std::vector<uint64_t>& directed,
                          const gpu::SelfGrid& grid, float d, float stiffness, uint32_t* counts, gpu::vec3* sums,
                          std::vector<std::array<uint32_t, 2>>* pairs) {
  thread_local std::vector<uint32_t> row;
  std::sort(directed.begin(), directed.end());
  for (size_t j = 0; j < directed.size();) {
    const uint32_t k = static_cast<uint32_t>(directed[j] >> 36);
    row.clear();
    for (; j < directed.size() && static_cast<uint32_t>(directed[j] >> 36) == k; ++j) {
      row.push_back(static_cast<uint32_t>(directed[j] & 0xFFFFFFFFu));
    }
    applySlot(s, begin, k, row.data(), static_cast<uint32_t>(row.size()), grid, d, stiffness, counts, sums, pairs);
  }
}

// Sums each slot's corrections from the pairs a half-neighbourhood sweep found (local slots k < m, in
// `found`), in the order the gather visits them: column (hash offsets of the neighbour's cells, in
// selfColumnRange's order), then slot; the same selfPairCorrection calls as the scalar backend, in
// the same order, so the sums are bitwise equal. Writes the count of every slot of the cloth, and
// the sum where the count is not 0.
inline void gatherFound(const SelfSorted& s, uint32_t begin, uint32_t n, const uint32_t* keys,
                        std::vector<uint64_t>& found, const gpu::SelfGrid& grid, float d, float stiffness,
                        uint32_t* counts, gpu::vec3* sums, std::vector<std::array<uint32_t, 2>>* pairs,
                        const SelfPairFilter* filter) {
  std::fill(counts + begin, counts + begin + n, 0u);  // (sums only where a count is set, below)
  if (filter != nullptr) {  // the filter is symmetric: drop refused pairs before both sides see them
    found.erase(std::remove_if(found.begin(), found.end(),
                               [&](uint64_t f) {
                                 return !filter->allows(begin + static_cast<uint32_t>(f >> 32),
                                                        begin + static_cast<uint32_t>(f & 0xFFFFFFFFu));
                               }),
                found.end());
  }
  if (found.empty()) return;
  // The gather's order: column (h1 offset, then h0 offset), then slot. Keys of one column order as
  // slots do, so comparing (column, slot) is comparing (column, key, slot).
  auto column = [&](uint32_t k, uint32_t m) { return gatherColumn(keys, k, m); };
  auto apply = [&](uint32_t k, const uint32_t* e, uint32_t count) {
    applySlot(s, begin, k, e, count, grid, d, stiffness, counts, sums, pairs);
  };
  if (found.size() * 16 < n && n < (1u << 28)) {  // (slots fit 28 bits of the packed sort key)
    // Few pairs (a draped cloth): sort the directed pairs by (slot, column, neighbour) rather than
    // bucketing every slot of the cloth.
    std::vector<uint64_t>& directed = directedScratch();
    for (const uint64_t f : found) {
      const uint32_t k = static_cast<uint32_t>(f >> 32), m = static_cast<uint32_t>(f & 0xFFFFFFFFu);
      directed.push_back(directedEntry(keys, k, m));
      directed.push_back(directedEntry(keys, m, k));
    }
    applyDirected(s, begin, directed, grid, d, stiffness, counts, sums, pairs);
    return;
  }
  std::vector<uint32_t> offset(n + 1, 0);
  for (const uint64_t f : found) {
    ++offset[f >> 32];
    ++offset[f & 0xFFFFFFFFu];
  }
  uint32_t total = 0;
  for (uint32_t k = 0; k <= n; ++k) {
    const uint32_t c = offset[k];
    offset[k] = total;
    total += c;
  }
  std::vector<uint32_t> entries(total);
  std::vector<uint32_t> fill(offset.begin(), offset.end() - 1);
  for (const uint64_t f : found) {
    const uint32_t k = static_cast<uint32_t>(f >> 32), m = static_cast<uint32_t>(f & 0xFFFFFFFFu);
    entries[fill[k]++] = m;
    entries[fill[m]++] = k;
  }
  for (uint32_t k = 0; k < n; ++k) {
    uint32_t* e = entries.data() + offset[k];
    const uint32_t count = offset[k + 1] - offset[k];
    if (count == 0) continue;
    std::sort(e, e + count, [&](uint32_t a, uint32_t b) {
      const uint32_t ca = column(k, a), cb = column(k, b);
      return ca != cb ? ca < cb : a < b;
    });
    apply(k, e, count);
  }
}

// A chunk of a cloth's slots in the chunked sweep (selfSweepSimdParallel): the pairs its slots found
// (k << 32 | m, cloth-local, k in the chunk, k < m), split by the chunk of m: `own` (the same chunk)
// and cross[c] (chunk c, after this one); and, for debug, the entries its gather applied.
struct SweepChunk {
  std::vector<uint64_t> own;
  std::vector<std::vector<uint64_t>> cross;
  std::vector<std::array<uint32_t, 2>> pairs;
};

// The gather of chunk g (slots [g * size, min(n, (g + 1) * size))): every pair that touches one of its
// slots, from its own lists and the earlier chunks' cross lists, bucketed by slot, each slot's
// neighbours put in the gather's order and applied (applySlot): the same sums as gatherFound's.
inline void gatherChunk(const SelfSorted& s, uint32_t begin, uint32_t n, std::vector<SweepChunk>& chunks, uint32_t g,
                        uint32_t size, const gpu::SelfGrid& grid, float d, float stiffness, uint32_t* counts,
                        gpu::vec3* sums, bool wantPairs) {
  const uint32_t* K = s.keys.data() + begin;
  const uint32_t qa = g * size, qb = std::min(n, qa + size), len = qb - qa;
  // (slot, neighbour) for every entry whose slot is in the chunk: the earlier chunks' pairs first
  // (neighbours below the chunk), then its own, then those with later chunks, so that each slot's
  // entries arrive nearly in the gather's order, as gatherFound's do (the sort below then moves
  // few of them; the order it ends in is the same either way).
  auto forEachEntry = [&](auto&& f) {
    for (uint32_t c = 0; c < g; ++c) {
      if (chunks[c].cross.size() <= g) continue;
      for (const uint64_t p : chunks[c].cross[g]) f(static_cast<uint32_t>(p & 0xFFFFFFFFu), static_cast<uint32_t>(p >> 32));
    }
    for (const uint64_t p : chunks[g].own) {
      const uint32_t k = static_cast<uint32_t>(p >> 32), m = static_cast<uint32_t>(p & 0xFFFFFFFFu);
      f(k, m);
      f(m, k);
    }
    for (const std::vector<uint64_t>& later : chunks[g].cross) {
      for (const uint64_t p : later) f(static_cast<uint32_t>(p >> 32), static_cast<uint32_t>(p & 0xFFFFFFFFu));
    }
  };
  std::vector<std::array<uint32_t, 2>>* pairs = wantPairs ? &chunks[g].pairs : nullptr;
  // Few entries (a flat cloth has none): sort them, as gatherFound does, instead of bucketing every
  // slot of the chunk (several passes over the chunk's slots, where the one-thread sweep has none).
  size_t entryCount = 2 * chunks[g].own.size();
  for (const std::vector<uint64_t>& later : chunks[g].cross) entryCount += later.size();
  for (uint32_t c = 0; c < g; ++c) entryCount += chunks[c].cross.size() > g ? chunks[c].cross[g].size() : 0u;
  if (entryCount * 8 < len && n < (1u << 28)) {
    std::fill(counts + begin + qa, counts + begin + qb, 0u);
    std::vector<uint64_t>& directed = directedScratch();
    forEachEntry([&](uint32_t k, uint32_t m) { directed.push_back(directedEntry(K, k, m)); });
    applyDirected(s, begin, directed, grid, d, stiffness, counts, sums, pairs);
    return;
  }
  thread_local std::vector<uint32_t> offset, fill, entries;  // scratch reused across calls
  offset.assign(size_t{len} + 1, 0u);
  forEachEntry([&](uint32_t k, uint32_t) { ++offset[k - qa + 1]; });
  for (uint32_t j = 1; j <= len; ++j) offset[j] += offset[j - 1];
  fill.assign(offset.begin(), offset.end() - 1);
  entries.resize(offset[len]);
  forEachEntry([&](uint32_t k, uint32_t m) { entries[fill[k - qa]++] = m; });
  for (uint32_t j = 0; j < len; ++j) {
    const uint32_t k = qa + j;
    uint32_t* e = entries.data() + offset[j];
    const uint32_t count = offset[j + 1] - offset[j];
    if (count == 0) {
      counts[begin + k] = 0;
      continue;
    }
    std::sort(e, e + count, [&](uint32_t a, uint32_t b) {
      const uint32_t ca = gatherColumn(K, k, a), cb = gatherColumn(K, k, b);
      return ca != cb ? ca < cb : a < b;
    });
    applySlot(s, begin, k, e, count, grid, d, stiffness, counts, sums, pairs);
  }
}

// Pair v (key: low 32 bits, item: high 32 bits) inserted into keys / items [0, i], whose first i
// entries are sorted: behind the larger keys before it (stable: equal keys keep their order).
inline void insertPair(uint64_t v, uint32_t i, uint32_t* keys, uint32_t* items) {
  const uint32_t key = static_cast<uint32_t>(v);
  uint32_t j = i;
  for (; j > 0 && keys[j - 1] > key; --j) {
    keys[j] = keys[j - 1];
    items[j] = items[j - 1];
  }
  keys[j] = key;
  items[j] = static_cast<uint32_t>(v >> 32);
}

// The sweep without SIMD (a scalar-only build, or vectors over 64 lanes) for the slots [qa, qb) of the
// cloth [begin, end): the shader's ranges found with running pointers.
inline void sweepFallback(const SelfSorted& s, uint32_t begin, uint32_t end, uint32_t qa, uint32_t qb,
                          const gpu::SelfGrid& grid, float d, float stiffness, bool useRest, uint32_t* counts,
                          gpu::vec3* sums, std::vector<std::array<uint32_t, 2>>* pairs, const SelfPairFilter* filter) {
  const float d2 = d * d;
  const uint32_t* keys = s.keys.data();
  // Column c's range [lo, hi] (selfColumnRange) is key + const - min(reach, sweep) .. key + const +
  // min(reach, 0xFFFF - sweep): both bounds are non-decreasing in the key, so over the sorted slots the
  // first slot >= lo and the first slot > hi only move forward. They start at the first slot >= lo of
  // slot qa's ranges (a binary search; the cloth's first slot for qa = begin).
  uint32_t first[9], last[9];
  for (uint32_t c = 0; c < 9; ++c) {
    first[c] = last[c] = qa == begin || qa == qb ? begin
                                                 : static_cast<uint32_t>(std::lower_bound(keys + begin, keys + end,
                                                                                          gpu::selfColumnRange(keys[qa], c, grid.axes.w).x) - keys);
  }
  for (uint32_t k = qa; k < qb; ++k) {
    const uint32_t key = keys[k];
    uint32_t count = 0;
    gpu::vec3 acc(0.0f);
    for (uint32_t c = 0; c < 9; ++c) {
      const gpu::uvec2 r = gpu::selfColumnRange(key, c, grid.axes.w);
      uint32_t a = first[c];
      while (a < end && keys[a] < r.x) ++a;
      first[c] = a;
      uint32_t z = std::max(last[c], a);
      while (z < end && keys[z] <= r.y) ++z;
      last[c] = z;
      for (uint32_t base = a; base < z; base += 64) {
        const uint32_t top = std::min(z, base + 64);
        applyBits(s, k, base, pairBitsScalar(s, k, base, top, d2, useRest), grid, d, stiffness, count, acc, pairs,
                  filter);
      }
    }
    counts[k] = count;
    sums[k] = acc;
  }
}

}  // namespace vkc::cpu
#endif

#ifdef VKC_HAVE_SIMD
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/self_collision_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Appends (k << 32 | m) to `found` for each candidate lane set in `mask` (close enough) whose rest
// positions are not closer than d (with rest positions; the same arithmetic as selfIsPair). Lane i
// holds slot base + i below lane `split`, slot baseB + i from it on; load(P) loads the candidates'
// values of the SoA array P in that lane order. Called only for masks with a lane set (rare).
template <class DF, class Load>
HWY_INLINE void appendPairs(DF df, hn::Mask<DF> mask, const Load& load, uint32_t k, uint32_t base, uint32_t split,
                            uint32_t baseB, const float* RX, const float* RY, const float* RZ,
                            hn::Vec<DF> vd2, std::vector<uint64_t>& found) {
  if (RX != nullptr) {
    const auto ex = hn::Sub(load(RX), hn::Set(df, RX[k]));
    const auto ey = hn::Sub(load(RY), hn::Set(df, RY[k]));
    const auto ez = hn::Sub(load(RZ), hn::Set(df, RZ[k]));
    const auto rest2 = hn::Add(hn::Add(hn::Mul(ex, ex), hn::Mul(ey, ey)), hn::Mul(ez, ez));
    mask = hn::AndNot(hn::Lt(rest2, vd2), mask);
  }
  uint8_t maskBytes[8] = {};
  hn::StoreMaskBits(df, mask, maskBytes);
  uint64_t bits = 0;
  std::memcpy(&bits, maskBytes, sizeof bits);
  while (bits != 0) {
    const uint32_t lane = static_cast<uint32_t>(__builtin_ctzll(bits));
    found.push_back(uint64_t{k} << 32 | ((lane < split ? base : baseB) + lane));
    bits &= bits - 1;
  }
}

// The whole sweep, compiled per target. It finds each pair once, NvCloth's way (a half
// neighbourhood: the slot's own column after the slot, and the four columns whose keys are larger:
// (+1, 0), (-1, +1), (0, +1), (+1, +1)), then sums each slot's corrections in the gather's order
// (gatherFound), so that the result is bitwise the scalar backend's. A table of column starts gives
// each slot its two blocks of candidates (below); when both are short, their concatenation is
// tested a vector at a time (blended loads where a vector spans both), without the sweep window. The
// hot loop makes no calls: it goes column by column (the slots of a column share block B and the
// rest of block A from the column's first slot: one set of table lookups and, at 16 lanes, one set of
// candidate vectors per column) and only lists the slots with a close candidate (tested again, then
// appended, in a second pass) and the dense slots. Those (a long block) go by per-column windows in a third pass: two running
// pointers per column that advance without unpredictable branches (the keys end with sentinels
// above every bound), then vectors of candidates from the window's start (lanes past its end masked
// off).
//
// Why the short blocks need no sweep window (the pairs stay exactly the scalar backend's, which
// tests only candidates whose sweep cells lie within `reach` of the slot's): a pair has
// fl(dist2) < fl(d * d), so |fl(x_m - x_k)| < d on the sweep axis (rounding is monotone), and the
// unclamped cell coordinates (p - lower) * scale + 1 differ by at most d * scale plus rounding
// errors of a few ulps of coordinates below 2^17 (< 0.1 cells; both particles far outside the grid
// clamp to the same end cell, and clamping never increases a difference). Truncated, the cells
// differ by less than d * scale + 1.1, so by at most floor(d * scale) + 2 = reach (fl(d * scale)
// never rounds below an integer the exact product reaches), and the window is +-reach inclusive (a
// saturated reach covers every cell; NaN and infinite positions never pass dist2 < d2). So every
// pair already lies in the window; the window would only filter candidates that fail the distance
// test anyway. `start`: the table of column starts, with key K in column
// (K >> 24) * width + ((K >> 16) & 0xFF) - columnBase (see SelfColumnStarts).
void FindPairs(const SelfSorted& s, uint32_t begin, uint32_t n, const uint32_t* start, uint32_t width, uint32_t columnBase,
               const uint32_t* keysWithSentinels, uint32_t qa, uint32_t qb, const gpu::SelfGrid& grid, float d,
               bool useRest, std::vector<uint64_t>& found) {
  const hn::ScalableTag<float> df;
  const uint32_t N = static_cast<uint32_t>(hn::Lanes(df));
  const uint32_t* K = s.keys.data() + begin;  // this cloth's keys
  const float* X = s.x.data() + begin;
  const float* Y = s.y.data() + begin;
  const float* Z = s.z.data() + begin;
  const float* RX = useRest ? s.rx.data() + begin : nullptr;
  const float* RY = useRest ? s.ry.data() + begin : nullptr;
  const float* RZ = useRest ? s.rz.data() + begin : nullptr;
  const auto vd2 = hn::Set(df, d * d);
  const uint32_t reach = grid.axes.w;
  // A key's column in `start` (see SelfColumnStarts).
  auto columnOf = [&](uint32_t key) HWY_ATTR __attribute__((always_inline)) {
    return (key >> 24) * width + ((key >> 16) & 0xFFu) - columnBase;
  };
  uint32_t first[9] = {}, last[9] = {};
  // Columns: equal hash cells, key >> 16 == h1 << 8 | h0. A slot's half neighbourhood lies in two
  // blocks of consecutive slots: its own row (the rest of its column and column h0 + 1) and the next
  // row (columns h0 - 1 .. h0 + 1 of row h1 + 1). Short blocks (sparse cloth) are tested whole; long
  // ones (dense columns) go by the five columns' sweep windows (running pointers; lagging behind
  // when skipped is harmless, they only move forward).
  // (Measured: at AVX-512, 4N = 64 a few % faster than 2N, no worse than 8N. Narrower vectors keep 64
  // too, i.e. 16N at 4 lanes: the windows of the dense path cost more per slot than a few more short
  // vectors; held to SSE4, the 65 025-particle NvCloth drape's self pass 1.80 -> 1.48 ms with 64
  // instead of 4N = 16, the 4 096-particle one 0.0616 -> 0.0598 ms.)
  const uint32_t blockMax = std::max(4 * N, 64u);
  // Vectors of up to 8 lanes test the two blocks apart (plain loads; a draped cloth's slots have
  // about 3 candidates in block A and 9 in block B); wider ones would test them as one list (blended
  // loads where a vector spans both). (Measured, 4 096-particle NvCloth drape's self pass, same-run
  // medians: held to SSE4 0.0500 -> 0.0428 ms, AVX2 0.0356 -> 0.0321; at 16 lanes level or slower.)
  constexpr bool kSeparateBlocks = hn::MaxLanes(decltype(df)()) <= 8;
  // 16 lanes: the first vector holds block A's first 8 candidates and block B's first 8 (two
  // 8-lane loads, no blend), then the rest of each block apart. (Measured at AVX3 against 8-lane
  // vectors, NvCloth drapes' self pass, same-run medians: 4 096 particles 0.0315 -> 0.0312 ms,
  // 65 025 particles 0.958 -> 0.805.)
#if HWY_TARGET != HWY_SCALAR
  constexpr bool kPairedHalves = hn::MaxLanes(decltype(df)()) == 16;
#endif
  // The keys with sentinels (a vector of them past the end), for the dense slots' running pointers
  // (filled only when there are some): 0xFFFFFFFF exceeds every column bound (hash cells <= 254).
  thread_local std::vector<uint32_t> keyStore;  // scratch reused across calls
  const uint32_t* KS = keysWithSentinels;
  // A slot with a long block (dense columns), by the columns' windows.
  auto denseSlot = [&](uint32_t k, uint32_t column) HWY_ATTR __attribute__((noinline)) {
    const uint32_t key = KS[k];
    const uint32_t sweep = key & 0xFFFFu;
    const uint32_t sLo = sweep > reach ? sweep - reach : 0u;
    const uint32_t sHi = std::min(sweep + reach, 0xFFFFu);
    const auto px = hn::Set(df, X[k]), py = hn::Set(df, Y[k]), pz = hn::Set(df, Z[k]);
    for (uint32_t c = 4; c < 9; ++c) {
      // selfColumnRange, with the hash offsets added to the key's high half (no wrap: cells 1..254).
      const uint32_t base = (key & 0xFFFF0000u) + ((c % 3u) << 16) + ((c / 3u) << 24) - 0x01010000u;
      const uint32_t lo = base | sLo, hi = base | sHi;
      uint32_t a = k + 1;
      if (c != 4) {
        // A pointer left behind by slots of short blocks restarts no earlier than its column.
        a = std::max(first[c], start[column + (c / 3u) * width + c % 3u - width - 1u]);
        a += KS[a] < lo;
        a += KS[a] < lo;
        while (KS[a] < lo) ++a;
        first[c] = a;
      }
      uint32_t z = std::max(last[c], a);
      z += KS[z] <= hi;
      z += KS[z] <= hi;
      while (KS[z] <= hi) ++z;
      last[c] = z;
      for (uint32_t i = a; i < z; i += N) {
        const auto load = [&](const float* P) HWY_ATTR __attribute__((always_inline)) { return hn::LoadU(df, P + i); };
        // dist2 = dx*dx + dy*dy + dz*dz, left to right, without fusing (as selfIsPair), which is
        // symmetric in the pair (x - y = -(y - x) exactly).
        const auto dx = hn::Sub(load(X), px);
        const auto dy = hn::Sub(load(Y), py);
        const auto dz = hn::Sub(load(Z), pz);
        const auto dist2 = hn::Add(hn::Add(hn::Mul(dx, dx), hn::Mul(dy, dy)), hn::Mul(dz, dz));
        const auto mask = hn::And(hn::Lt(dist2, vd2), hn::FirstN(df, z - i));
        if (HWY_UNLIKELY(!hn::AllFalse(df, mask))) appendPairs(df, mask, load, k, i, 64, i, RX, RY, RZ, vd2, found);
      }
    }
  };
  // Slot k's two blocks: A = [k + 1, endA) (its own row) and B = [beginB, endB) (the next row).
  struct Blocks {
    uint32_t lenA, lenB, beginB;
  };
  auto blocks = [&](uint32_t k) HWY_ATTR __attribute__((always_inline)) {
    const uint32_t column = columnOf(K[k]);
    const uint32_t endA = start[column + 2u];              // row h1 up to column h0 + 1
    const uint32_t beginB = start[column + width - 1u];  // (h1 + 1, h0 - 1)
    const uint32_t endB = start[column + width + 2u];    // up to (h1 + 1, h0 + 1)
    return Blocks{endA - k - 1, endB - beginB, beginB};
  };
  // Short blocks' candidates, concatenated: candidate j < lenA + lenB is slot k + 1 + j (block A),
  // or beginB - lenA + j from lenA on (>= k + 1: block B starts at or after block A's end). Calls
  // f(mask, load, ia, split, ib) for each vector of them: lanes below `split` hold slots ia + lane,
  // the others slots ib + lane; load(P) loads them from the SoA array P (every load starts before
  // n: masked-off lanes read the padding); `mask`: the lanes closer than d. With kSeparateBlocks,
  // block A's vectors and then block B's (each lane from one block: split = N, ia = ib).
  auto forVectors = [&](uint32_t k, const Blocks& b, auto&& f) HWY_ATTR __attribute__((always_inline)) {
    const uint32_t total = b.lenA + b.lenB, offB = b.beginB - b.lenA;
    const auto px = hn::Set(df, X[k]), py = hn::Set(df, Y[k]), pz = hn::Set(df, Z[k]);
    // The lanes closer than d (dist2 < d2, as selfIsPair: left to right, without fusing).
    auto closer = [&](const auto& load) HWY_ATTR __attribute__((always_inline)) {
      const auto dx = hn::Sub(load(X), px);
      const auto dy = hn::Sub(load(Y), py);
      const auto dz = hn::Sub(load(Z), pz);
      return hn::Lt(hn::Add(hn::Add(hn::Mul(dx, dx), hn::Mul(dy, dy)), hn::Mul(dz, dz)), vd2);
    };
    // The candidates [from, from + len) of one block, a vector at a time.
    auto run = [&](uint32_t from, uint32_t len) HWY_ATTR __attribute__((always_inline)) {
      for (uint32_t j = 0; j < len; j += N) {
        const uint32_t at = from + j;
        const auto load = [&](const float* P) HWY_ATTR __attribute__((always_inline)) { return hn::LoadU(df, P + at); };
        f(hn::And(closer(load), hn::FirstN(df, len - j)), load, at, N, at);
      }
    };
    if constexpr (kSeparateBlocks) {
      run(k + 1, b.lenA);
      run(b.beginB, b.lenB);
      return;
    }
#if HWY_TARGET != HWY_SCALAR  // (Half and Combine)
    if constexpr (kPairedHalves) {
      const hn::Half<decltype(df)> dh;
      constexpr uint32_t H = 8;
      const uint32_t ia = k + 1, lenA = std::min(b.lenA, H), lenB = std::min(b.lenB, H);
      const auto load = [&](const float* P) HWY_ATTR __attribute__((always_inline)) {
        return hn::Combine(df, hn::LoadU(dh, P + b.beginB), hn::LoadU(dh, P + ia));
      };
      const auto valid = hn::Or(hn::FirstN(df, lenA), hn::AndNot(hn::FirstN(df, H), hn::FirstN(df, H + lenB)));
      // (lanes from H on: slots beginB - H + lane, mod 2^32)
      f(hn::And(closer(load), valid), load, ia, H, b.beginB - H);
      run(k + 1 + H, b.lenA - lenA);
      run(b.beginB + H, b.lenB - lenB);
      return;
    }
#endif
    auto vector = [&](uint32_t ia, uint32_t ib, uint32_t split, uint32_t valid) HWY_ATTR __attribute__((always_inline)) {
      const auto fromA = hn::FirstN(df, split);
      const auto load = [&](const float* P) HWY_ATTR __attribute__((always_inline)) {
        return hn::IfThenElse(fromA, hn::LoadU(df, P + ia), hn::LoadU(df, P + ib));
      };
      f(hn::And(closer(load), hn::FirstN(df, valid)), load, ia, split, ib);
    };
    vector(k + 1, offB, b.lenA, total);  // (the first one even when empty: fewer branches)
    for (uint32_t j = N; j < total; j += N) {
      const uint32_t ja = std::min(j, b.lenA);
      vector(k + 1 + ja, offB + j, b.lenA - ja, total - j);
    }
  };
  // Pass 1, the hot loop, with no calls (every register stays live): slots with a candidate closer
  // than d go to `hits`, slots with a long block (dense columns) to `dense`, both in slot order.
  thread_local std::vector<uint32_t> hits, dense;  // scratch reused across calls
  if (hits.size() < qb - qa + 1) hits.resize(qb - qa + 1);
  if (dense.size() < qb - qa) dense.resize(qb - qa);
  uint32_t* hitEnd = hits.data();
  uint32_t* denseEnd = dense.data();
  auto slotPass1 = [&](uint32_t k) HWY_ATTR __attribute__((always_inline)) {
    const Blocks b = blocks(k);
    if (b.lenA > blockMax || b.lenB > blockMax) {
      *denseEnd++ = k;
      return;
    }
    auto any = hn::FirstN(df, 0);
    forVectors(k, b, [&](const auto mask, const auto&, uint32_t, uint32_t, uint32_t)
                   HWY_ATTR __attribute__((always_inline)) { any = hn::Or(any, mask); });
    *hitEnd = k;  // kept only with a candidate (no branch)
    hitEnd += hn::AllFalse(df, any) ? 0 : 1;
  };
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kPairedHalves) {
    // 16 lanes: column by column. The slots of one column share their candidates: block B whole, and
    // block A from the column's first slot on (a later slot masks off the lanes up to itself). So the
    // candidates are loaded once per column, into the paired vector (A's first 8, B's first 8) and,
    // where a block is longer, one more vector of its next 16; each slot then only tests them. Columns
    // with a block longer than 24 go slot by slot as above.
    const hn::Half<decltype(df)> dh;
    constexpr uint32_t H = 8;
    const auto lower = hn::FirstN(df, H);
    // Candidate vectors of one column (x, y, z) and the slot's mask of the lanes closer than d.
    struct Cand {
      hn::Vec<decltype(df)> x, y, z;
    };
    auto closerThan = [&](const Cand& c, hn::Vec<decltype(df)> px, hn::Vec<decltype(df)> py,
                          hn::Vec<decltype(df)> pz) HWY_ATTR __attribute__((always_inline)) {
      const auto dx = hn::Sub(c.x, px);
      const auto dy = hn::Sub(c.y, py);
      const auto dz = hn::Sub(c.z, pz);
      return hn::Lt(hn::Add(hn::Add(hn::Mul(dx, dx), hn::Mul(dy, dy)), hn::Mul(dz, dz)), vd2);
    };
    auto loadAt = [&](uint32_t at) HWY_ATTR __attribute__((always_inline)) {
      return Cand{hn::LoadU(df, X + at), hn::LoadU(df, Y + at), hn::LoadU(df, Z + at)};
    };
    // The slots [k, ce) of one column from cs on: kMoreA / kMoreB, whether block A / B (from cs) has
    // more than 8 candidates (then vector a2 / b2 holds its candidates 8 .. 23).
    auto columnSlots = [&](auto moreA, auto moreB, uint32_t cs, uint32_t ce, uint32_t lenA, uint32_t lenB,
                           uint32_t beginB) HWY_ATTR __attribute__((always_inline)) {
      constexpr bool kMoreA = decltype(moreA)::value, kMoreB = decltype(moreB)::value;
      const uint32_t ia = cs + 1;
      const Cand c1{hn::Combine(df, hn::LoadU(dh, X + beginB), hn::LoadU(dh, X + ia)),
                    hn::Combine(df, hn::LoadU(dh, Y + beginB), hn::LoadU(dh, Y + ia)),
                    hn::Combine(df, hn::LoadU(dh, Z + beginB), hn::LoadU(dh, Z + ia))};
      const auto valid1 = hn::Or(hn::FirstN(df, std::min(lenA, H)), hn::AndNot(lower, hn::FirstN(df, H + std::min(lenB, H))));
      Cand a2{}, b2{};
      auto validA2 = hn::FirstN(df, 0), validB2 = hn::FirstN(df, 0);
      if constexpr (kMoreA) {
        a2 = loadAt(ia + H);
        validA2 = hn::FirstN(df, lenA - H);
      }
      if constexpr (kMoreB) {
        b2 = loadAt(beginB + H);
        validB2 = hn::FirstN(df, lenB - H);
      }
      for (uint32_t k = cs; k < ce; ++k) {
        const auto px = hn::Set(df, X[k]), py = hn::Set(df, Y[k]), pz = hn::Set(df, Z[k]);
        // Block A's lanes up to slot k itself are off (candidate ia + j is a pair only for j >= k - cs).
        const uint32_t own = k - cs;
        auto any = hn::And(closerThan(c1, px, py, pz), hn::AndNot(hn::FirstN(df, std::min(own, H)), valid1));
        if constexpr (kMoreA) {
          const auto offA = hn::FirstN(df, own > H ? own - H : 0u);
          any = hn::Or(any, hn::And(closerThan(a2, px, py, pz), hn::AndNot(offA, validA2)));
        }
        if constexpr (kMoreB) any = hn::Or(any, hn::And(closerThan(b2, px, py, pz), validB2));
        *hitEnd = k;  // kept only with a candidate (no branch)
        hitEnd += hn::AllFalse(df, any) ? 0 : 1;
      }
    };
    for (uint32_t k = qa; k < qb;) {
      const uint32_t column = columnOf(K[k]);
      const uint32_t ce = std::min(start[column + 1u], qb);  // one past the column's last slot (in the range)
      const Blocks b = blocks(k);
      constexpr uint32_t kLong = 3 * H;
      if (b.lenA > kLong || b.lenB > kLong) {
        for (; k < ce; ++k) slotPass1(k);
        continue;
      }
      if (b.lenA > H) {
        if (b.lenB > H) {
          columnSlots(std::true_type(), std::true_type(), k, ce, b.lenA, b.lenB, b.beginB);
        } else {
          columnSlots(std::true_type(), std::false_type(), k, ce, b.lenA, b.lenB, b.beginB);
        }
      } else if (b.lenB > H) {
        columnSlots(std::false_type(), std::true_type(), k, ce, b.lenA, b.lenB, b.beginB);
      } else {
        columnSlots(std::false_type(), std::false_type(), k, ce, b.lenA, b.lenB, b.beginB);
      }
      k = ce;
    }
  } else  // NOLINT(readability/braces)
#endif
  {
    // Column by column too: the column's table entries looked up once for its slots.
    for (uint32_t k = qa; k < qb;) {
      const uint32_t column = columnOf(K[k]);
      const uint32_t ce = std::min(start[column + 1u], qb);  // one past the column's last slot (in the range)
      const Blocks b = blocks(k);
      if (b.lenA > blockMax || b.lenB > blockMax) {
        for (; k < ce; ++k) slotPass1(k);
        continue;
      }
      const uint32_t endA = k + 1 + b.lenA;
      for (; k < ce; ++k) {
        auto any = hn::FirstN(df, 0);
        forVectors(k, Blocks{endA - k - 1, b.lenB, b.beginB},
                   [&](const auto mask, const auto&, uint32_t, uint32_t, uint32_t)
                       HWY_ATTR __attribute__((always_inline)) { any = hn::Or(any, mask); });
        *hitEnd = k;  // kept only with a candidate (no branch)
        hitEnd += hn::AllFalse(df, any) ? 0 : 1;
      }
    }
  }
  const uint32_t hitCount = static_cast<uint32_t>(hitEnd - hits.data());
  const uint32_t denseCount = static_cast<uint32_t>(denseEnd - dense.data());
  // Pass 2: the candidates of those slots again, each close one to `found` after the rest cull.
  for (uint32_t h = 0; h < hitCount; ++h) {
    const uint32_t k = hits[h];
    forVectors(k, blocks(k), [&](const auto mask, const auto& load, uint32_t ia, uint32_t split, uint32_t ib)
                                 HWY_ATTR __attribute__((always_inline)) {
      if (!hn::AllFalse(df, mask)) appendPairs(df, mask, load, k, ia, split, ib, RX, RY, RZ, vd2, found);
    });
  }
  // Pass 3: dense slots by the columns' windows (the running pointers only move forward).
  if (denseCount > 0 && KS == nullptr) KS = keysWithSentinelsInPlace(s, begin, n, N + 1);
  if (denseCount > 0 && KS == nullptr) {
    keyStore.assign(n + N + 1, 0xFFFFFFFFu);
    std::copy(K, K + n, keyStore.begin());
    KS = keyStore.data();
  }
  for (uint32_t h = 0; h < denseCount; ++h) {
    const uint32_t k = dense[h];
    denseSlot(k, columnOf(K[k]));
  }
}

// start[c - c0]: the first slot whose column (key >> 16) is >= c, for the cloth's columns c0 .. and
// the two rows above its last (columnStartsSize entries, then a vector of slack). Returns c0. One pass,
// no zeroing and no running maximum: where the column steps up from slot k - 1 to slot k, the entries
// of the columns in between (slot k's and the empty ones below it) get k, by whole vectors (a vector's
// overshoot past them is written again by the next step, or lands in the slack); every slot stores
// its vector whether the column steps up or not (no branch to mispredict).
uint32_t BuildColumnStarts(const uint32_t* K, uint32_t n, std::vector<uint32_t>& start) {
  const hn::ScalableTag<uint32_t> du;
  const uint32_t N = static_cast<uint32_t>(hn::Lanes(du));
  const uint32_t size = columnStartsSize(K, n);
  start.resize(size + N);
  if (n == 0) return 0u;
  const uint32_t c0 = K[0] >> 16;
  uint32_t* const out = start.data();
  auto fill = [&](uint32_t from, uint32_t to, uint32_t value) HWY_ATTR {
    const auto v = hn::Set(du, value);
    for (uint32_t i = from; i < to; i += N) hn::StoreU(v, du, out + i);
  };
  out[0] = 0;
  uint32_t filled = 1;  // entries [0, filled) written
  for (uint32_t k = 1; k < n; ++k) {
    const uint32_t next = (K[k] >> 16) - c0 + 1u;  // one past slot k's column
    // Without a branch on the step (a draped cloth's columns hold one or two slots: unpredictable):
    // one vector of k from `filled` on at every slot. Entries from `filled` on are all written again
    // later (by the next step, or the last fill), so where the column does not step up the store is
    // harmless, and where it does it writes [filled, next) when the step is at most N entries.
    hn::StoreU(hn::Set(du, k), du, out + filled);
    if (HWY_UNLIKELY(next > filled + N)) fill(filled + N, next, k);
    filled = next;
  }
  fill(filled, size, n);
  return c0;
}

// The whole sweep of one cloth (slots [begin, end)) on the calling thread: the table of column starts,
// the pairs, the gather.
void Sweep(const SelfSorted& s, uint32_t begin, uint32_t end, const gpu::SelfGrid& grid, float d, float stiffness,
           bool useRest, uint32_t* counts, gpu::vec3* sums, std::vector<std::array<uint32_t, 2>>* pairs,
           const SelfPairFilter* filter, const SelfColumnStarts* starts) {
  const uint32_t n = end - begin;
  const uint32_t* K = s.keys.data() + begin;
  thread_local std::vector<uint32_t> start;  // scratch reused across calls
  thread_local std::vector<uint64_t> found;  // (k << 32 | m), k < m, local slots
  found.clear();
  if (starts != nullptr) {  // the sort's table
    FindPairs(s, begin, n, starts->start.data(), starts->width, starts->base, nullptr, 0, n, grid, d, useRest, found);
  } else {  // columns key >> 16 from the first slot's on
    const uint32_t c0 = BuildColumnStarts(K, n, start);
    FindPairs(s, begin, n, start.data(), 0x100u, c0, nullptr, 0, n, grid, d, useRest, found);
  }
  gatherFound(s, begin, n, K, found, grid, d, stiffness, counts, sums, pairs, filter);
}

template <class VF>
HWY_INLINE auto cellBits(VF p, VF lower, VF scale, VF top, int shift) {
  const hn::DFromV<VF> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::RebindToUnsigned<decltype(df)> du;
  const VF one = hn::Set(df, 1.0f);
  VF c = hn::Add(hn::Mul(hn::Sub(p, lower), scale), one);
  c = hn::IfThenElse(hn::Ge(c, one), c, one);  // NaN -> 1
  c = hn::IfThenElse(hn::Le(c, top), c, top);
  return hn::ShiftLeftSame(hn::BitCast(du, hn::ConvertTo(di, c)), shift);
}

// selfCellKey for `count` items, lanes at a time (the same float operations: subtract, multiply, add,
// clamp with NaN to 1, truncate). Positions are gathered from the AoS particles by item; without
// `itemParticles` the items are particles[0 .. count) in order, loaded with de-interleaving loads.
void CellKeys(const float* particles, const uint32_t* itemParticles, uint32_t count, const gpu::SelfGrid& g,
              uint32_t* keys, uint32_t* items, uint32_t firstItem) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::RebindToUnsigned<decltype(df)> du;
  const size_t N = hn::Lanes(df);
  const uint32_t axis[3] = {g.axes.x, g.axes.y, g.axes.z};
  const float maxCoord[3] = {gpu::kSelfSweepMaxCoord, gpu::kSelfHashMaxCoord, gpu::kSelfHashMaxCoord};
  const int keyShift[3] = {0, 16, 24};
  // Per coordinate x, y, z (not per role: no vector indexed at run time): the role's clamp and shift.
  // The axes are a permutation of x, y, z.
  float top[3] = {0.0f, 0.0f, 0.0f};
  int shift[3] = {0, 0, 0};
  for (int a = 0; a < 3; ++a) {
    top[axis[a]] = maxCoord[a];
    shift[axis[a]] = keyShift[a];
  }
  using VF = hn::Vec<decltype(df)>;
  const VF lower[3] = {hn::Set(df, g.lower.x), hn::Set(df, g.lower.y), hn::Set(df, g.lower.z)};
  const VF scale[3] = {hn::Set(df, g.scale.x), hn::Set(df, g.scale.y), hn::Set(df, g.scale.z)};
  const VF tops[3] = {hn::Set(df, top[0]), hn::Set(df, top[1]), hn::Set(df, top[2])};
  auto key = [&](const VF (&p)[3]) HWY_ATTR {  // p[j]: coordinates x, y, z
    return hn::Or(cellBits(p[0], lower[0], scale[0], tops[0], shift[0]),
                  hn::Or(cellBits(p[1], lower[1], scale[1], tops[1], shift[1]),
                         cellBits(p[2], lower[2], scale[2], tops[2], shift[2])));
  };
  uint32_t i = 0;
  if (itemParticles == nullptr) {
    for (; i + N <= count; i += static_cast<uint32_t>(N)) {
      VF p[3], w;
      hn::LoadInterleaved4(df, particles + size_t{i} * 4, p[0], p[1], p[2], w);
      hn::StoreU(key(p), du, keys + i);
      if (items != nullptr) hn::StoreU(hn::Iota(du, firstItem + i), du, items + i);
    }
  } else {
    for (; i + N <= count; i += static_cast<uint32_t>(N)) {
      const auto index = hn::BitCast(di, hn::ShiftLeft<2>(hn::LoadU(du, itemParticles + i)));
      const VF p[3] = {hn::GatherIndex(df, particles, index), hn::GatherIndex(df, particles + 1, index),
                       hn::GatherIndex(df, particles + 2, index)};
      hn::StoreU(key(p), du, keys + i);
      if (items != nullptr) hn::StoreU(hn::Iota(du, firstItem + i), du, items + i);
    }
  }
  for (; i < count; ++i) {
    const float* p = particles + size_t{itemParticles != nullptr ? itemParticles[i] : i} * 4;
    keys[i] = gpu::selfCellKey(g, gpu::vec3(p[0], p[1], p[2]));
    if (items != nullptr) items[i] = firstItem + i;
  }
}

// selfCopySlotsSimd: four slots at a time, each particle loaded whole, the four transposed into x, y,
// z and w (4 stores per 4 slots; copies only, bits unchanged).
// Returns whether some copied x, y or z is not finite: its exponent (all ones) plus the exponent's
// lowest bit carries into bit 31 (OR-ed over the copies, no branch).
template <bool kCheck, bool kW>
HWY_INLINE bool CopySlotsT(const float* particles, const uint32_t* items, uint32_t offset, uint32_t count,
                           float* x, float* y, float* z, float* w) {
  constexpr uint32_t kExponent = 0x7F800000u, kCarry = 0x00800000u;
  uint32_t k = 0, carries = 0;
#if HWY_TARGET != HWY_SCALAR  // (vectors of 4 floats)
  const hn::FixedTag<float, 4> d4;
  const hn::RebindToUnsigned<decltype(d4)> du4;
  const auto exponent = hn::Set(du4, kExponent), carry = hn::Set(du4, kCarry);
  auto carried = hn::Zero(du4);
  for (; k + 4 <= count; k += 4) {
    const auto a = hn::LoadU(d4, particles + size_t{items[k] + offset} * 4);
    const auto b = hn::LoadU(d4, particles + size_t{items[k + 1] + offset} * 4);
    const auto c = hn::LoadU(d4, particles + size_t{items[k + 2] + offset} * 4);
    const auto e = hn::LoadU(d4, particles + size_t{items[k + 3] + offset} * 4);
    const auto xy01 = hn::InterleaveLower(d4, a, b), xy23 = hn::InterleaveLower(d4, c, e);  // x0 x1 y0 y1
    const auto zw01 = hn::InterleaveUpper(d4, a, b), zw23 = hn::InterleaveUpper(d4, c, e);  // z0 z1 w0 w1
    const auto vx = hn::ConcatLowerLower(d4, xy23, xy01), vy = hn::ConcatUpperUpper(d4, xy23, xy01);
    const auto vz = hn::ConcatLowerLower(d4, zw23, zw01);
    hn::StoreU(vx, d4, x + k);
    hn::StoreU(vy, d4, y + k);
    hn::StoreU(vz, d4, z + k);
    if constexpr (kW) hn::StoreU(hn::ConcatUpperUpper(d4, zw23, zw01), d4, w + k);
    if constexpr (kCheck) {
      // (Each coordinate's own carry: OR-ing the exponents first could make all ones of finite ones.)
      const auto carryOf = [&](decltype(vx) v) HWY_ATTR { return hn::Add(hn::And(hn::BitCast(du4, v), exponent), carry); };
      carried = hn::Or(carried, hn::Or(carryOf(vx), hn::Or(carryOf(vy), carryOf(vz))));
    }
  }
  uint32_t lanes[4];
  hn::StoreU(carried, du4, lanes);
  carries = lanes[0] | lanes[1] | lanes[2] | lanes[3];
#endif
  for (; k < count; ++k) {
    const float* p = particles + size_t{items[k] + offset} * 4;
    x[k] = p[0], y[k] = p[1], z[k] = p[2];
    if constexpr (kW) w[k] = p[3];
    for (int j = 0; j < 3 && kCheck; ++j) carries |= (std::bit_cast<uint32_t>(p[j]) & kExponent) + kCarry;
  }
  return (carries >> 31) != 0;
}

bool CopySlots(const float* particles, const uint32_t* items, uint32_t offset, uint32_t count, float* x, float* y,
               float* z, float* w, bool check) {
  if (w == nullptr) {
    return check ? CopySlotsT<true, false>(particles, items, offset, count, x, y, z, w)
                 : CopySlotsT<false, false>(particles, items, offset, count, x, y, z, w);
  }
  return check ? CopySlotsT<true, true>(particles, items, offset, count, x, y, z, w)
               : CopySlotsT<false, true>(particles, items, offset, count, x, y, z, w);
}

// selfKeyColumnsSimd: col[i] = (h1 - 1) * width + h0 - 1 for the hash cells of keys[i], lanes at a
// time; returns whether some key lies outside the box 1..cells0 x 1..cells1.
bool KeyColumns(const uint32_t* keys, uint32_t count, uint32_t cells0, uint32_t cells1, uint32_t width,
                uint32_t* col) {
  const hn::ScalableTag<uint32_t> du;
  const uint32_t N = static_cast<uint32_t>(hn::Lanes(du));
  const auto one = hn::Set(du, 1u), byte = hn::Set(du, 0xFFu), stride = hn::Set(du, width);
  const auto last0 = hn::Set(du, cells0 - 1u), last1 = hn::Set(du, cells1 - 1u);
  auto outside = hn::Zero(du);  // lanes with a cell outside: all ones
  uint32_t i = 0;
  for (; i + N <= count; i += N) {
    const auto k = hn::LoadU(du, keys + i);
    const auto h0 = hn::Sub(hn::And(hn::ShiftRight<16>(k), byte), one);  // (0 wraps: outside)
    const auto h1 = hn::Sub(hn::ShiftRight<24>(k), one);
    // h >= top (unsigned): min(h, top - 1) != h (a cell of 0 wrapped to 2^32 - 1 too).
    const auto out0 = hn::VecFromMask(du, hn::Ne(hn::Min(h0, last0), h0));
    const auto out1 = hn::VecFromMask(du, hn::Ne(hn::Min(h1, last1), h1));
    outside = hn::Or(outside, hn::Or(out0, out1));
    hn::StoreU(hn::Add(hn::Mul(h1, stride), h0), du, col + i);
  }
  bool out = !hn::AllTrue(du, hn::Eq(outside, hn::Zero(du)));
  for (; i < count; ++i) {
    const uint32_t h0 = ((keys[i] >> 16) & 0xFFu) - 1u, h1 = (keys[i] >> 24) - 1u;
    out |= h0 >= cells0 || h1 >= cells1;
    col[i] = h1 * width + h0;
  }
  return out;
}

// selfUnpackPairsSimd: keys[i] = low half of p[i], items[i] = high half, lanes at a time.
void UnpackPairs(const uint64_t* p, uint32_t count, uint32_t* keys, uint32_t* items) {
  uint32_t i = 0;
#if HWY_TARGET != HWY_SCALAR  // (vectors of at least two pairs)
  const hn::ScalableTag<uint32_t> du;
  const hn::Repartition<uint64_t, decltype(du)> d64;
  const uint32_t N = static_cast<uint32_t>(hn::Lanes(du));
  for (; i + N <= count; i += N) {
    const auto lo = hn::BitCast(du, hn::LoadU(d64, p + i));
    const auto hi = hn::BitCast(du, hn::LoadU(d64, p + i + N / 2));
    hn::StoreU(hn::ConcatEven(du, hi, lo), du, keys + i);
    hn::StoreU(hn::ConcatOdd(du, hi, lo), du, items + i);
  }
#endif
  for (; i < count; ++i) {
    keys[i] = static_cast<uint32_t>(p[i]);
    items[i] = static_cast<uint32_t>(p[i] >> 32);
  }
}

// selfInsertUnpackPairsSimd: pair by pair, insertPair, except that a vector of pairs whose keys do
// not descend (from the largest key before them on) is appended whole. The vectors start where the
// keys' stores are aligned (unaligned 64-byte stores at AVX-512 each split across two cache lines).
void InsertUnpackPairs(const uint64_t* p, uint32_t count, uint32_t* keys, uint32_t* items) {
  if (count == 0) return;
  insertPair(p[0], 0, keys, items);
  uint32_t i = 1;
#if HWY_TARGET != HWY_SCALAR  // (vectors of at least two pairs)
  const hn::ScalableTag<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::Repartition<uint64_t, decltype(du)> d64;
  const uint32_t N = static_cast<uint32_t>(hn::Lanes(du));
  for (; i < count && reinterpret_cast<uintptr_t>(keys + i) % (N * sizeof(uint32_t)) != 0; ++i) {
    insertPair(p[i], i, keys, items);
  }
  // Lane j <- lane j - 1 (lane 0 <- itself: pair i - 1 is the caller's `last` check).
  const auto previous =
      hn::IndicesFromVec(du, hn::Max(hn::Sub(hn::Iota(di, 0), hn::Set(di, 1)), hn::Zero(di)));
  uint32_t last = keys[i - 1];  // the largest key so far
  for (; i + N <= count; i += N) {
    const auto lo = hn::BitCast(du, hn::LoadU(d64, p + i));
    const auto hi = hn::BitCast(du, hn::LoadU(d64, p + i + N / 2));
    const auto k = hn::ConcatEven(du, hi, lo);
    if (HWY_LIKELY(static_cast<uint32_t>(p[i]) >= last &&
                   hn::AllFalse(du, hn::Lt(k, hn::TableLookupLanes(k, previous))))) {
      hn::StoreU(k, du, keys + i);
      hn::StoreU(hn::ConcatOdd(du, hi, lo), du, items + i);
      last = static_cast<uint32_t>(p[i + N - 1]);
      continue;
    }
    for (uint32_t j = i; j < i + N; ++j) insertPair(p[j], j, keys, items);
    last = keys[i + N - 1];
  }
#endif
  for (; i < count; ++i) insertPair(p[i], i, keys, items);
}

// selfPrefixSumSimd: a vector at a time, the sums within each 128-bit block by lane shifts, then
// across blocks (Hillis-Steele: each block adds the last lane of the block 1, 2, ... before it), then
// the running total of the vectors before (the last lane, broadcast).
bool PrefixSum(uint32_t* v, uint32_t count, uint32_t limit) {
  uint32_t i = 0, run = 0;
  bool above = false;
#if HWY_TARGET != HWY_SCALAR  // (blocks of 4 lanes)
  const hn::ScalableTag<uint32_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const uint32_t N = static_cast<uint32_t>(hn::Lanes(du));
  // Lane j's source in step s (block b adds lane 4 (b - s) + 3; blocks below s add nothing).
  const auto lastOfBlock = hn::Or(hn::And(hn::Iota(di, 0), hn::Set(di, ~3)), hn::Set(di, 3));
  const auto lastLane = hn::IndicesFromVec(du, hn::Set(di, static_cast<int32_t>(N - 1)));
  const auto top = hn::Set(du, limit);
  auto carry = hn::Zero(du);
  auto over = hn::Zero(du);
  for (; N >= 4 && i + N <= count; i += N) {
    const auto x = hn::LoadU(du, v + i);
    over = hn::Or(over, hn::VecFromMask(du, hn::Gt(x, top)));
    auto sum = hn::Add(x, hn::ShiftLeftLanes<1>(du, x));
    sum = hn::Add(sum, hn::ShiftLeftLanes<2>(du, sum));
    for (uint32_t step = 4; step < N; step *= 2) {
      const auto from = hn::IndicesFromVec(du, hn::Max(hn::Sub(lastOfBlock, hn::Set(di, static_cast<int32_t>(step))),
                                                       hn::Zero(di)));
      sum = hn::Add(sum, hn::IfThenZeroElse(hn::FirstN(du, step), hn::TableLookupLanes(sum, from)));
    }
    sum = hn::Add(sum, carry);
    hn::StoreU(sum, du, v + i);
    carry = hn::TableLookupLanes(sum, lastLane);
  }
  above = !hn::AllTrue(du, hn::Eq(over, hn::Zero(du)));
  run = hn::GetLane(carry);
#endif
  for (; i < count; ++i) {
    above |= v[i] > limit;
    run += v[i];
    v[i] = run;
  }
  return above;
}

// selfCountedSlotsSimd: a vector of counts at a time, the lanes of the rare ones with a count set
// listed from their mask.
uint32_t CountedSlots(const uint32_t* counts, uint32_t count, uint32_t* slots) {
  uint32_t m = 0, i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<uint32_t> du;
  const uint32_t N = static_cast<uint32_t>(hn::Lanes(du));
  for (; N <= 64 && i + N <= count; i += N) {  // (64 lanes fit the mask's 64 bits)
    const auto set = hn::Ne(hn::LoadU(du, counts + i), hn::Zero(du));
    if (HWY_LIKELY(hn::AllFalse(du, set))) continue;
    uint8_t maskBytes[8] = {};
    hn::StoreMaskBits(du, set, maskBytes);
    uint64_t bits = 0;
    std::memcpy(&bits, maskBytes, sizeof bits);
    for (; bits != 0; bits &= bits - 1) slots[m++] = i + static_cast<uint32_t>(__builtin_ctzll(bits));
  }
#endif
  for (; i < count; ++i) {
    slots[m] = i;
    m += counts[i] != 0 ? 1u : 0u;
  }
  return m;
}

size_t Lanes() { return hn::Lanes(hn::ScalableTag<float>()); }

}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vkc::cpu {
HWY_EXPORT(Sweep);
HWY_EXPORT(FindPairs);
HWY_EXPORT(CellKeys);
HWY_EXPORT(Lanes);
HWY_EXPORT(CopySlots);
HWY_EXPORT(KeyColumns);
HWY_EXPORT(UnpackPairs);
HWY_EXPORT(InsertUnpackPairs);
HWY_EXPORT(CountedSlots);
HWY_EXPORT(PrefixSum);
}  // namespace vkc::cpu
#endif
#endif  // VKC_HAVE_SIMD

#if !defined(VKC_HAVE_SIMD) || HWY_ONCE
namespace vkc::cpu {


void selfCellKeysSimd(const Float4* particles, size_t particleCount, const uint32_t* itemParticles, uint32_t count,
                      const gpu::SelfGrid& grid, uint32_t* keys, uint32_t* items, uint32_t firstItem) {
#ifdef VKC_HAVE_SIMD
  // The gather's 32-bit element offsets (4 floats per particle) must not overflow.
  if (itemParticles == nullptr || particleCount < (size_t{1} << 29)) {
    HWY_DYNAMIC_DISPATCH(CellKeys)(&particles[0].x, itemParticles, count, grid, keys, items, firstItem);
    return;
  }
#else
  (void)particleCount;
#endif
  for (uint32_t i = 0; i < count; ++i) {
    const Float4& p = particles[itemParticles != nullptr ? itemParticles[i] : i];
    keys[i] = gpu::selfCellKey(grid, {p.x, p.y, p.z});
    if (items != nullptr) items[i] = firstItem + i;
  }
}

bool selfKeyColumnsSimd(const uint32_t* keys, uint32_t count, uint32_t cells0, uint32_t cells1, uint32_t width,
                        uint32_t* col) {
#ifdef VKC_HAVE_SIMD
  return HWY_DYNAMIC_DISPATCH(KeyColumns)(keys, count, cells0, cells1, width, col);
#else
  bool out = false;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t h0 = ((keys[i] >> 16) & 0xFFu) - 1u, h1 = (keys[i] >> 24) - 1u;  // (0 wraps: outside)
    out |= h0 >= cells0 || h1 >= cells1;
    col[i] = h1 * width + h0;
  }
  return out;
#endif
}

void selfUnpackPairsSimd(const uint64_t* pairs, uint32_t count, uint32_t* keys, uint32_t* items) {
#ifdef VKC_HAVE_SIMD
  HWY_DYNAMIC_DISPATCH(UnpackPairs)(pairs, count, keys, items);
#else
  for (uint32_t i = 0; i < count; ++i) {
    keys[i] = static_cast<uint32_t>(pairs[i]);
    items[i] = static_cast<uint32_t>(pairs[i] >> 32);
  }
#endif
}

void selfInsertUnpackPairsSimd(const uint64_t* pairs, uint32_t count, uint32_t* keys, uint32_t* items) {
#ifdef VKC_HAVE_SIMD
  HWY_DYNAMIC_DISPATCH(InsertUnpackPairs)(pairs, count, keys, items);
#else
  for (uint32_t i = 0; i < count; ++i) insertPair(pairs[i], i, keys, items);
#endif
}

bool selfPrefixSumSimd(uint32_t* v, uint32_t count, uint32_t limit) {
#ifdef VKC_HAVE_SIMD
  return HWY_DYNAMIC_DISPATCH(PrefixSum)(v, count, limit);
#else
  bool above = false;
  for (uint32_t i = 0, run = 0; i < count; ++i) {
    above |= v[i] > limit;
    run += v[i];
    v[i] = run;
  }
  return above;
#endif
}

uint32_t selfCountedSlotsSimd(const uint32_t* counts, uint32_t count, uint32_t* slots) {
#ifdef VKC_HAVE_SIMD
  return HWY_DYNAMIC_DISPATCH(CountedSlots)(counts, count, slots);
#else
  uint32_t m = 0;
  for (uint32_t i = 0; i < count; ++i) {
    slots[m] = i;
    m += counts[i] != 0 ? 1u : 0u;
  }
  return m;
#endif
}

bool selfCopySlotsSimd(const Float4* particles, const uint32_t* items, uint32_t offset, uint32_t count, float* x,
                       float* y, float* z, float* w, bool check) {
  static_assert(sizeof(Float4) == 4 * sizeof(float));
#ifdef VKC_HAVE_SIMD
  return HWY_DYNAMIC_DISPATCH(CopySlots)(&particles[0].x, items, offset, count, x, y, z, w, check);
#else
  bool nonFinite = false;
  for (uint32_t k = 0; k < count; ++k) {
    const Float4& p = particles[items[k] + offset];
    x[k] = p.x, y[k] = p.y, z[k] = p.z;
    if (w != nullptr) w[k] = p.w;
    nonFinite |= check && (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z));
  }
  return nonFinite;
#endif
}

void selfSweepSimd(const SelfSorted& s, uint32_t begin, uint32_t end, const gpu::SelfGrid& grid, float d,
                   float stiffness, bool useRest, uint32_t* counts, gpu::vec3* sums,
                   std::vector<std::array<uint32_t, 2>>* pairs, const SelfPairFilter* filter,
                   const SelfColumnStarts* starts) {
#ifdef VKC_HAVE_SIMD
  // Vectors of up to 64 lanes fit the 64-bit masks (and, with kSelfSimdPad, the padding).
  if (HWY_DYNAMIC_DISPATCH(Lanes)() <= 64) {
    HWY_DYNAMIC_DISPATCH(Sweep)(s, begin, end, grid, d, stiffness, useRest, counts, sums, pairs, filter, starts);
    return;
  }
#endif
  (void)starts;  // (the fallback finds its columns by binary search)
  sweepFallback(s, begin, end, begin, end, grid, d, stiffness, useRest, counts, sums, pairs, filter);
}

void selfSweepSimdParallel(detail::ParallelCall& par, const SelfSorted& s, uint32_t begin, uint32_t end,
                           const gpu::SelfGrid& grid, float d, float stiffness, bool useRest, uint32_t* counts,
                           gpu::vec3* sums, std::vector<std::array<uint32_t, 2>>* pairs, const SelfPairFilter* filter) {
  const uint32_t n = end - begin;
  // Finer chunks than other loops: the sweep is most of the call and its chunks' costs vary with the
  // pairs they hold; a thread that falls behind (or starts late) is caught up to within one of them.
  const uint32_t size = par.chunkSize(n, 64, 4 * detail::kTasksPerThread);
  const uint32_t chunkCount = n == 0 ? 0u : (n + size - 1) / size;
  if (chunkCount <= 1) {
    selfSweepSimd(s, begin, end, grid, d, stiffness, useRest, counts, sums, pairs, filter);
    return;
  }
#ifdef VKC_HAVE_SIMD
  if (HWY_DYNAMIC_DISPATCH(Lanes)() <= 64) {
    // 1. The table of column starts and the keys with sentinels (for the dense slots' running
    // pointers), both over the whole cloth, built by chunks.
    // (The keys are read in place where sentinels already follow them: the last cloth of
    // collideSelfCpu's padded keys; a copy of 1M keys cost the 1M-particle cloth 8 MB of memory
    // traffic that the one-thread sweep does not have.)
    const uint32_t* K = s.keys.data() + begin;
    thread_local std::vector<uint32_t> startStore, keyStoreStore;  // the calling thread's, reused across calls
    std::vector<uint32_t>& start = startStore;  // (lambdas do not capture thread_locals: references do)
    std::vector<uint32_t>& keyStore = keyStoreStore;
    start.assign(columnStartsSize(K, n), 0u);
    const uint32_t* KS = keysWithSentinelsInPlace(s, begin, n, 65);
    if (KS == nullptr) {
      keyStore.resize(size_t{n} + 65);
      std::fill(keyStore.begin() + n, keyStore.end(), 0xFFFFFFFFu);
      KS = keyStore.data();
    }
    const bool copyKeys = KS != K;
    par.forEach(chunkCount, [&](uint32_t c) {
      const uint32_t qa = c * size, qb = std::min(n, qa + size);
      if (copyKeys) std::copy(K + qa, K + qb, keyStore.begin() + qa);
      markColumnEnds(K, n, qa, qb, start.data());
    });
    fillColumnStarts(start);
    // 2. Each chunk's slots find their pairs over the whole cloth (half neighbourhood: m > k), and
    // split them by the chunk of m (the filter drops refused pairs, as gatherFound does).
    // The chunks' lists are the calling thread's, kept between calls with their capacity (a solver
    // calls this every iteration): fresh lists of tens of MB per call cost page faults that the
    // threads take one at a time (the kernel's lock on the address space).
    thread_local std::vector<SweepChunk> chunkStore;
    std::vector<SweepChunk>& chunks = chunkStore;
    if (chunks.size() < chunkCount) chunks.resize(chunkCount);
    par.forEach(chunkCount, [&](uint32_t c) {
      thread_local std::vector<uint64_t> found;  // scratch of the thread that runs the chunk
      found.clear();
      const uint32_t qa = c * size, qb = std::min(n, qa + size);
      HWY_DYNAMIC_DISPATCH(FindPairs)(s, begin, n, start.data(), 0x100u, K[0] >> 16, KS, qa, qb, grid, d, useRest,
                                      found);
      SweepChunk& ch = chunks[c];
      ch.pairs.clear();
      if (ch.cross.size() < chunkCount) ch.cross.resize(chunkCount);
      for (std::vector<uint64_t>& later : ch.cross) later.clear();  // (a longer list from an earlier call too)
      // The own pairs (most of them) stay in `found`, compacted in place while its lines are in cache,
      // and the list then becomes the chunk's (its old one the thread's scratch): no second copy of
      // every pair (a crumpled 1M cloth's pairs are tens of MB a call).
      // (The chunk of m, `to`, is the last pair's while m lies in it (from `toFirst` on): pairs in a
      // row go to one chunk. A division per pair, and the list's and the filter's pointers loaded
      // again per pair, made 3% of the crumpled 1M cloth's two-thread call, whose pairs between
      // its two or three rows of hash cells (30% of them) reach half the cloth ahead.)
      const uint32_t chunkSlots = size;
      const SelfPairFilter* const pairFilter = filter;
      uint64_t* const list = found.data();
      const size_t count = found.size();
      size_t kept = 0;
      uint32_t to = c, toFirst = qa;
      for (size_t i = 0; i < count; ++i) {
        const uint64_t f = list[i];
        const uint32_t k = static_cast<uint32_t>(f >> 32), m = static_cast<uint32_t>(f & 0xFFFFFFFFu);
        if (pairFilter != nullptr && !pairFilter->allows(begin + k, begin + m)) continue;
        if (m - toFirst >= chunkSlots) {  // (m below toFirst wraps around: above too)
          to = m / chunkSlots;
          toFirst = to * chunkSlots;
        }
        if (to == c) {
          list[kept++] = f;
        } else {
          ch.cross[to].push_back(f);
        }
      }
      found.resize(kept);
      ch.own.swap(found);
    });
    // 3. Each chunk's slots gather every pair that touches them, in the gather's order.
    par.forEach(chunkCount, [&](uint32_t g) {
      gatherChunk(s, begin, n, chunks, g, size, grid, d, stiffness, counts, sums, pairs != nullptr);
    });
    if (pairs != nullptr) {
      for (uint32_t c = 0; c < chunkCount; ++c) pairs->insert(pairs->end(), chunks[c].pairs.begin(), chunks[c].pairs.end());
    }
    return;
  }
#endif
  std::vector<std::vector<std::array<uint32_t, 2>>> chunkPairs(pairs != nullptr ? chunkCount : 0u);
  par.forEach(chunkCount, [&](uint32_t c) {
    const uint32_t qa = begin + c * size, qb = std::min(end, qa + size);
    sweepFallback(s, begin, end, qa, qb, grid, d, stiffness, useRest, counts, sums,
                  pairs != nullptr ? &chunkPairs[c] : nullptr, filter);
  });
  for (const auto& cp : chunkPairs) pairs->insert(pairs->end(), cp.begin(), cp.end());
}

}  // namespace vkc::cpu
#endif
