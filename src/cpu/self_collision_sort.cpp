// The SIMD backend's sorts of one cloth's (cell key, item) pairs: the stable order by key that
// radixSortCpu gives (a stable sort has one result), found with fewer passes over the data by using
// what self-collision keys look like (see selfSortByKey and selfSortLarge in cpu/self_collision.h).
#include <algorithm>
#include <array>
#include <numeric>
#include <optional>
#include <vector>

#include "cpu/executor.h"
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

// selfSortLarge's first digit: (key - kKeyFloor) >> shift, in 2048 buckets. kKeyFloor is the key of
// the grid's lower corner (cell 1 on every axis), which no key is below.
constexpr uint32_t kRangeBits = 11;
constexpr uint32_t kRangeBins = 1u << kRangeBits;
constexpr uint32_t kKeyFloor = 0x01010001u;

// Sorts one bucket of selfSortLarge stably by key (its keys share (key - kKeyFloor) >> shift, so the
// order is that of the `shift` bits below) and writes it unpacked to keys / items. `in` is scratch.
void sortBucket(uint64_t* in, uint32_t m, uint32_t shift, uint32_t* keys, uint32_t* items) {
  if (m <= 64 || shift == 0) {  // short: insertion (stable; the keys decide, ties keep their order)
    for (uint32_t i = 1; i < m; ++i) {
      const uint64_t v = in[i];
      const uint32_t key = static_cast<uint32_t>(v & kLowKey);
      uint32_t j = i;
      for (; j > 0 && static_cast<uint32_t>(in[j - 1] & kLowKey) > key; --j) in[j] = in[j - 1];
      in[j] = v;
    }
    selfUnpackPairsSimd(in, m, keys, items);
    return;
  }
  // LSD over the `shift` bits in digits of about log2(m) bits (histograms no larger than the bucket),
  // every digit counted in one read; passes whose digit every key shares are skipped.
  uint32_t bits = 6;
  while (bits < kRangeBits && (2u << bits) <= m) ++bits;
  const uint32_t passes = (shift + bits - 1) / bits, bins = 1u << bits, mask = bins - 1u;
  thread_local std::vector<uint32_t> histStore;
  thread_local std::vector<uint64_t> tmpStore;
  histStore.assign(size_t{passes} * bins, 0u);
  if (tmpStore.size() < m) tmpStore.resize(m);
  uint32_t* const hist = histStore.data();
  if (passes == 2) {  // (the usual case: the two counts in one unrolled loop)
    uint32_t* const hist1 = hist + bins;
    for (uint32_t i = 0; i < m; ++i) {
      const uint32_t r = static_cast<uint32_t>(in[i]) - kKeyFloor;
      ++hist[r & mask];
      ++hist1[(r >> bits) & mask];
    }
  } else {
    for (uint32_t i = 0; i < m; ++i) {
      const uint32_t r = static_cast<uint32_t>(in[i]) - kKeyFloor;
      for (uint32_t p = 0; p < passes; ++p) ++hist[p * bins + ((r >> (p * bits)) & mask)];
    }
  }
  uint32_t active[32];
  uint32_t activeCount = 0;
  const uint32_t r0 = static_cast<uint32_t>(in[0]) - kKeyFloor;
  for (uint32_t p = 0; p < passes; ++p) {
    if (hist[p * bins + ((r0 >> (p * bits)) & mask)] != m) active[activeCount++] = p;
  }
  uint64_t* from = in;
  uint64_t* to = tmpStore.data();
  for (uint32_t k = 0; k < activeCount; ++k) {
    const uint32_t p = active[k], at = p * bits;
    uint32_t* const offset = hist + size_t{p} * bins;
    for (uint32_t d = 0, run = 0; d < bins; ++d) {
      const uint32_t c = offset[d];
      offset[d] = run;
      run += c;
    }
    if (k + 1 == activeCount) {  // the last pass writes the output
      for (uint32_t i = 0; i < m; ++i) {
        const uint64_t v = from[i];
        const uint32_t dst = offset[((static_cast<uint32_t>(v) - kKeyFloor) >> at) & mask]++;
        keys[dst] = static_cast<uint32_t>(v);
        items[dst] = static_cast<uint32_t>(v >> 32);
      }
      return;
    }
    for (uint32_t i = 0; i < m; ++i) {
      const uint64_t v = from[i];
      to[offset[((static_cast<uint32_t>(v) - kKeyFloor) >> at) & mask]++] = v;
    }
    std::swap(from, to);
  }
  selfUnpackPairsSimd(from, m, keys, items);  // (no pass moved anything: already in order)
}

}  // namespace

bool selfSortCounts(uint32_t count, uint32_t cells0, uint32_t cells1) {
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
  return count < kCountingLimit && columns <= 4 * uint64_t{count} && 2 * columns >= count;
}

bool selfSortByKey(uint32_t* keys, uint32_t* items, uint32_t count, uint32_t cells0, uint32_t cells1,
                   SelfColumnStarts* starts, std::optional<uint32_t> firstItem) {
  // The radix sort reads the items: those of the implied order written first.
  auto radixSort = [&] {
    if (firstItem) std::iota(items, items + count, *firstItem);
    if (count >= 2) radixSortFast(keys, items, count, 32);
    return false;
  };
  if (count < 2 || !selfSortCounts(count, cells0, cells1)) return radixSort();
  // Columns numbered over the box one column wider and one row taller (the sweep's neighbours
  // h0 + 1 and h1 + 1 of the box's last cells; h0 - 1 of its first cell lands on the previous row's
  // spare column, empty): the table the sweep reads (SelfColumnStarts, with base = width + 1).
  const uint32_t width = cells0 + 1u, table = (cells1 + 1u) * width + 1u;
  // Each item's column, in key order. A key outside the box (the caller's promise broken) sends the
  // array to the radix sort instead.
  thread_local std::vector<uint32_t> columnOf;
  if (columnOf.size() < count) columnOf.resize(count);
  uint32_t* const col = columnOf.data();
  if (selfKeyColumnsSimd(keys, count, cells0, cells1, width, col)) return radixSort();
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
  const bool anyLong = selfPrefixSumSimd(b + 1, table, kLongColumn);  // a column longer than kLongColumn
  thread_local std::vector<uint64_t> pairs, scratch;
  if (pairs.size() < count) pairs.resize(count);
  uint64_t* const p = pairs.data();
  if (firstItem) {  // (the items not read)
    for (uint32_t i = 0, item = *firstItem; i < count; ++i, ++item) {
      p[b[col[i] + 1]++] = keys[i] | uint64_t{item} << 32;
    }
  } else {
    for (uint32_t i = 0; i < count; ++i) p[b[col[i] + 1]++] = keys[i] | uint64_t{items[i]} << 32;
  }
  // Within each column the pairs are in input order; they still need ordering by sweep cell (stably).
  // Long columns get a radix sort of their own; the rest, one insertion pass over the whole array (a
  // pair never moves past a smaller key, so it stays in its column): its work is the number of
  // inversions, at most a short column's length per pair.
  if (anyLong) {
    for (uint32_t c = 1; c <= table; ++c) {
      if (b[c] - b[c - 1] > kLongColumn) sortColumnBySweep(p + b[c - 1], b[c] - b[c - 1], scratch);
    }
  }
  // (A draped 64 x 64 cloth's 4 096 pairs: 33 out of place, 39 moves in all. So the insertion goes
  // by vectors, unpacking as it goes.)
  selfInsertUnpackPairsSimd(p, count, keys, items);
  if (starts != nullptr) {
    starts->width = width;
    starts->base = width + 1u;
  }
  return true;
}

void selfSortLarge(detail::ParallelCall& par, uint32_t* keys, uint32_t* items, uint32_t count, uint32_t topKey,
                   std::optional<uint32_t> firstItem) {
  // The items of the implied order (firstItem + i), for the radix fallback (by chunks on par's threads).
  auto writeItems = [&](uint32_t tasks) {
    const uint32_t size = (count + tasks - 1) / tasks;
    par.forEach(tasks, [&](uint32_t t) {
      const uint32_t b = std::min(count, t * size), e = std::min(count, b + size);
      std::iota(items + b, items + e, *firstItem + b);
    });
  };
  if (count < 2 || topKey < kKeyFloor) {
    if (firstItem) writeItems(1);
    if (count >= 2) radixSortParallel(par, keys, items, count, 32, true);
    return;
  }
  const uint32_t span = topKey - kKeyFloor;
  uint32_t shift = 0;
  while ((span >> shift) >= kRangeBins) ++shift;
  const uint32_t tasks = par.taskCount(count);
  const uint32_t chunk = (count + tasks - 1) / tasks;
  const uint32_t chunks = (count + chunk - 1) / chunk;
  auto range = [&](uint32_t t) { return std::pair<uint32_t, uint32_t>{t * chunk, std::min(count, (t + 1) * chunk)}; };
  // Scratch of the calling thread, kept between calls (the tasks reach it through these references).
  thread_local std::vector<uint32_t> histStore, bucketStore;
  thread_local std::vector<uint64_t> bufferStore;
  thread_local std::vector<uint8_t> outsideStore;
  std::vector<uint32_t>& hist = histStore;  // hist[t * kRangeBins + b]: chunk t's count of bucket b
  std::vector<uint64_t>& buffer = bufferStore;
  std::vector<uint8_t>& outside = outsideStore;
  hist.assign(size_t{chunks} * kRangeBins, 0u);
  if (buffer.size() < count) buffer.resize(count);
  outside.assign(chunks, 0);
  // 1. Each chunk's bucket counts (and whether some key lies outside [kKeyFloor, topKey]).
  par.forEach(chunks, [&](uint32_t t) {
    const auto [begin, end] = range(t);
    uint32_t* const h = hist.data() + size_t{t} * kRangeBins;
    bool out = false;
    for (uint32_t i = begin; i < end; ++i) {
      const uint32_t r = keys[i] - kKeyFloor;
      out |= r > span;
      ++h[(r > span ? 0u : r) >> shift];
    }
    outside[t] = out ? 1 : 0;
  });
  // Where the caller's promise is broken, or one bucket would hold most of the work of a thread:
  // the plain radix sort.
  std::vector<uint32_t>& start = bucketStore;  // start[b]: bucket b's first slot
  start.assign(kRangeBins + 1, 0u);
  uint32_t largest = 0;
  for (uint32_t b = 0, run = 0; b < kRangeBins; ++b) {
    start[b] = run;
    uint32_t total = 0;
    for (uint32_t t = 0; t < chunks; ++t) total += hist[size_t{t} * kRangeBins + b];
    largest = std::max(largest, total);
    run += total;
  }
  start[kRangeBins] = count;
  const bool anyOutside = std::find(outside.begin(), outside.end(), uint8_t{1}) != outside.end();
  if (anyOutside || (par.threads() > 1 && uint64_t{largest} * 2 * par.threads() > count)) {
    if (firstItem) writeItems(chunks);
    radixSortParallel(par, keys, items, count, 32, true);
    return;
  }
  // 2. Each chunk scatters its pairs to its places in the buckets (stable: chunk by chunk, in order).
  for (uint32_t b = 0; b < kRangeBins; ++b) {
    for (uint32_t t = 0, run = start[b]; t < chunks; ++t) {
      uint32_t& h = hist[size_t{t} * kRangeBins + b];
      const uint32_t c = h;
      h = run;
      run += c;
    }
  }
  par.forEach(chunks, [&](uint32_t t) {
    const auto [begin, end] = range(t);
    uint32_t* const offset = hist.data() + size_t{t} * kRangeBins;
    uint64_t* const out = buffer.data();
    if (firstItem) {  // (the items not read: 4 bytes a pair less)
      for (uint32_t i = begin, item = *firstItem + begin; i < end; ++i, ++item) {
        const uint32_t key = keys[i];
        out[offset[(key - kKeyFloor) >> shift]++] = key | uint64_t{item} << 32;
      }
      return;
    }
    for (uint32_t i = begin; i < end; ++i) {
      const uint32_t key = keys[i];
      out[offset[(key - kKeyFloor) >> shift]++] = key | uint64_t{items[i]} << 32;
    }
  });
  // 3. The buckets, in groups of about a chunk's pairs, each sorted in cache and written back.
  std::vector<uint32_t> groupFirst{0};
  for (uint32_t b = 0, load = 0; b < kRangeBins; ++b) {
    load += start[b + 1] - start[b];
    if (load >= chunk && b + 1 < kRangeBins) {
      groupFirst.push_back(b + 1);
      load = 0;
    }
  }
  groupFirst.push_back(kRangeBins);
  par.forEach(static_cast<uint32_t>(groupFirst.size()) - 1, [&](uint32_t g) {
    for (uint32_t b = groupFirst[g]; b < groupFirst[g + 1]; ++b) {
      const uint32_t first = start[b], m = start[b + 1] - first;
      if (m > 0) sortBucket(buffer.data() + first, m, shift, keys + first, items + first);
    }
  });
}

}  // namespace vkc::cpu
