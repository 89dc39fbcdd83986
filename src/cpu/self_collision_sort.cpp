// The SIMD backend's sort of one cloth's (cell key, item) pairs: the stable order by key that
// radixSortCpu gives (a stable sort has one result), found with fewer passes over the data by using
// what self-collision keys look like (see selfSortByKey in cpu/self_collision.h).
#include <algorithm>
#include <array>
#include <vector>

#include "cpu/radix_sort.h"
#include "cpu/self_collision.h"

namespace vkc::cpu {

namespace {

constexpr uint32_t kLowKey = 0xFFFFFFFFu;  // the key half of a packed pair

// Stable LSD radix sort of packed pairs by their sweep cell (key bits 0..15): two 8-bit passes through
// `scratch`, skipping a pass whose digit every pair shares. For the long columns of a flat cloth.
void sortColumnBySweep(uint64_t* pairs, uint32_t count, std::vector<uint64_t>& scratch) {
  if (scratch.size() < count) scratch.resize(count);
  uint64_t* in = pairs;
  uint64_t* out = scratch.data();
  for (uint32_t shift = 0; shift < 16; shift += 8) {
    std::array<uint32_t, 256> offset{};
    for (uint32_t i = 0; i < count; ++i) ++offset[(static_cast<uint32_t>(in[i]) >> shift) & 0xFFu];
    if (offset[(static_cast<uint32_t>(in[0]) >> shift) & 0xFFu] == count) continue;  // identity pass
    uint32_t run = 0;
    for (uint32_t& o : offset) {
      const uint32_t c = o;
      o = run;
      run += c;
    }
    for (uint32_t i = 0; i < count; ++i) out[offset[(static_cast<uint32_t>(in[i]) >> shift) & 0xFFu]++] = in[i];
    std::swap(in, out);
  }
  if (in != pairs) std::copy(in, in + count, pairs);
}

}  // namespace

bool selfSortByKey(uint32_t* keys, uint32_t* items, uint32_t count, uint32_t cells0, uint32_t cells1,
                   SelfColumnStarts* starts) {
  if (count < 2) return false;
  // Long arrays: the radix sort's passes (256 or 2048 bins, cache-friendly) beat a counting pass over
  // tens of thousands of columns, whose increments and writes land at random (measured, radix sort
  // vs this one: 65 025-particle NvCloth drape 0.44 vs 0.49 ms; 4 096-particle drape 0.028 vs 0.019).
  constexpr uint32_t kCountingLimit = 16384;
  // Columns numbered densely over the box of hash cells, in key order.
  const uint64_t columns = uint64_t{cells0} * cells1;
  // The counting sort pays off for few items per column (a draped cloth). A sparse cloud over many
  // columns costs more in clearing and scanning the column table, and long columns (a flat cloth: tens
  // of items per column) more in sorting each column than the radix sort's passes (measured, this
  // sort vs the radix sort: flat 64 x 64 cloth 0.038 vs 0.034 ms, 120 x 120 0.123 vs 0.086 ms).
  if (count >= kCountingLimit || columns > 4 * uint64_t{count} || 2 * columns < count) {
    radixSortFast(keys, items, count, 32);
    return false;
  }
  // Columns numbered over the box one column wider and one row taller (the sweep's neighbours
  // h0 + 1 and h1 + 1 of the box's last cells; h0 - 1 of its first cell lands on the previous row's
  // spare column, empty): the table the sweep reads (SelfColumnStarts, with base = width + 1).
  const uint32_t width = cells0 + 1u, table = (cells1 + 1u) * width + 1u;
  // Each item's column, in key order. A key outside the box (the caller's promise broken) sends the
  // array to the radix sort instead.
  thread_local std::vector<uint32_t> columnOf;
  if (columnOf.size() < count) columnOf.resize(count);
  uint32_t* const col = columnOf.data();
  if (selfKeyColumnsSimd(keys, count, cells0, cells1, width, col)) {
    radixSortFast(keys, items, count, 32);
    return false;
  }
  // Counting sort by column: column c counted in b[c + 2]; after the prefix sum b[c + 1] = the first
  // slot of column c, and after the scatter the first slot of column c + 1; so b[c] ends as the first
  // slot whose column is >= c (the sweep's table; b[0] stays 0).
  // Whether some column is long is found on the way (long ones get a sort of their own).
  constexpr uint32_t kLongColumn = 32;
  thread_local std::vector<uint32_t> ownTable;
  std::vector<uint32_t>& begin = starts != nullptr ? starts->start : ownTable;
  begin.assign(size_t{table} + 1, 0);
  uint32_t* const b = begin.data();
  for (uint32_t i = 0; i < count; ++i) ++b[col[i] + 2];
  bool anyLong = false;  // a column longer than kLongColumn
  for (uint32_t c = 1, run = 0; c <= table; ++c) {
    anyLong |= b[c] > kLongColumn;
    run += b[c];
    b[c] = run;
  }
  thread_local std::vector<uint64_t> pairs, scratch;
  if (pairs.size() < count) pairs.resize(count);
  uint64_t* const p = pairs.data();
  for (uint32_t i = 0; i < count; ++i) p[b[col[i] + 1]++] = keys[i] | uint64_t{items[i]} << 32;
  // Within each column the pairs are in input order; they still need ordering by sweep cell (stably).
  // Long columns get a radix sort of their own; the rest, one insertion pass over the whole array (a
  // pair never moves past a smaller key, so it stays in its column): its work is the number of
  // inversions, at most a short column's length per pair.
  if (anyLong) {
    for (uint32_t c = 1; c <= table; ++c) {
      if (b[c] - b[c - 1] > kLongColumn) sortColumnBySweep(p + b[c - 1], b[c] - b[c - 1], scratch);
    }
  }
  for (uint32_t i = 1; i < count; ++i) {
    const uint64_t v = p[i];
    const uint32_t key = static_cast<uint32_t>(v & kLowKey);
    if (static_cast<uint32_t>(p[i - 1] & kLowKey) <= key) continue;
    uint32_t j = i;
    do {
      p[j] = p[j - 1];
      --j;
    } while (j > 0 && static_cast<uint32_t>(p[j - 1] & kLowKey) > key);
    p[j] = v;
  }
  selfUnpackPairsSimd(p, count, keys, items);
  if (starts != nullptr) {
    starts->width = width;
    starts->base = width + 1u;
  }
  return true;
}

}  // namespace vkc::cpu
