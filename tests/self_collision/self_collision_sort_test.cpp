// The SIMD backend's sort of self-collision keys (cpu::selfSortByKey) against std::stable_sort, on key
// sets shaped like a cloth's: few particles per column, long columns (their own radix sort), a mix,
// many equal keys (stability), sparse columns (the radix fallback), and sizes around the threshold
// where it hands over to the radix sort; and the counting sort's table of column starts. And the large
// cloths' sort by key range (cpu::selfSortLarge) on one thread and on the test executors, the SIMD
// slot copy's check of non-finite coordinates (it checks rest positions), the counting sort's
// prefix sum and insertion pass (cpu::selfPrefixSumSimd, cpu::selfInsertUnpackPairsSimd) and the
// write-back's list of slots with neighbours.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include "cpu/executor.h"
#include "cpu/self_collision.h"
#include "radix_sort/radix_sort_reference.h"
#include "support/executors.h"

namespace vkc::test {
namespace {

uint32_t cellKey(uint32_t sweep, uint32_t h0, uint32_t h1) { return sweep | h0 << 16 | h1 << 24; }

// cells0 x cells1: the box of hash cells the sort is told the keys lie in.
// Where the counting sort ran, also its table of column starts (the sweep's): start[c] is the first
// slot whose column is >= c, for every column up to the neighbours (h0 + 1, h1 + 1) of every key.
void expectSortsLikeStableSort(const Pairs& in, uint32_t cells0, uint32_t cells1) {
  Pairs got = in;
  cpu::SelfColumnStarts starts;
  const bool counted = cpu::selfSortByKey(got.keys.data(), got.values.data(), static_cast<uint32_t>(got.keys.size()),
                                          cells0, cells1, &starts);
  const Pairs want = stableSorted(in, 32);
  EXPECT_EQ(firstDifference(got.keys, want.keys), -1) << "keys, count " << in.keys.size();
  EXPECT_EQ(firstDifference(got.values, want.values), -1) << "values (stability), count " << in.keys.size();
  {
    // With implied items (a cloth without a subset): item i is firstItem + i, the values not read.
    constexpr uint32_t kFirstItem = 1000;
    Pairs implied = in;
    for (size_t i = 0; i < implied.values.size(); ++i) implied.values[i] = kFirstItem + static_cast<uint32_t>(i);
    const Pairs wantImplied = stableSorted(implied, 32);
    std::fill(implied.values.begin(), implied.values.end(), 0xDEADBEEFu);
    cpu::SelfColumnStarts impliedStarts;
    EXPECT_EQ(cpu::selfSortByKey(implied.keys.data(), implied.values.data(), static_cast<uint32_t>(implied.keys.size()),
                                 cells0, cells1, &impliedStarts, kFirstItem),
              counted);
    EXPECT_EQ(firstDifference(implied.keys, wantImplied.keys), -1) << "implied items: keys, count " << in.keys.size();
    EXPECT_EQ(firstDifference(implied.values, wantImplied.values), -1) << "implied items, count " << in.keys.size();
    if (counted) {
      EXPECT_EQ(impliedStarts.start, starts.start) << "implied items: column starts";
    }
  }
  if (!counted) return;
  auto column = [&](uint32_t key) { return (key >> 24) * starts.width + ((key >> 16) & 0xFFu) - starts.base; };
  uint32_t top = 0;  // the largest column the sweep looks up
  for (const uint32_t k : want.keys) top = std::max(top, column(k) + starts.width + 2u);
  ASSERT_LT(top, starts.start.size()) << "count " << in.keys.size();
  for (uint32_t c = 0, slot = 0; c <= top; ++c) {
    while (slot < want.keys.size() && column(want.keys[slot]) < c) ++slot;
    ASSERT_EQ(starts.start[c], slot) << "column " << c << ", count " << in.keys.size();
  }
}

// count keys over a box of `cols0` x `cols1` hash cells, sweep cells in [1, sweepRange].
Pairs cellPairs(uint32_t count, uint32_t cols0, uint32_t cols1, uint32_t sweepRange, uint32_t seed) {
  std::mt19937 rng(seed);
  auto below = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  std::vector<uint32_t> keys(count);
  for (uint32_t& k : keys) k = cellKey(1 + below(sweepRange), 1 + below(cols0), 1 + below(cols1));
  return pairsWithKeys(std::move(keys));
}

uint32_t sideFor(uint32_t n) { return std::max(1u, static_cast<uint32_t>(std::ceil(std::sqrt(double(n))))); }

TEST(SelfCollisionSort, FewParticlesPerColumnLikeADrape) {
  // About one particle per column of the box (the NvCloth drapes: 1 to 45 per occupied column): the
  // counting sort below 16 384 items, the radix sort from there on.
  for (uint32_t n : {0u, 1u, 2u, 3u, 100u, 4096u, 16383u, 16384u, 16385u, 65025u}) {
    SCOPED_TRACE("count " + std::to_string(n));
    const uint32_t side = std::min(sideFor(n), 254u);
    expectSortsLikeStableSort(cellPairs(n, side, side, 65533, n + 7), side, side);
  }
}

TEST(SelfCollisionSort, LongColumnsAmongShortOnes) {
  // Most columns hold a particle or two, a few hold hundreds (each sorted by its own radix passes);
  // and a flat cloth's box (tens of particles in every column: the radix sort).
  for (uint32_t n : {1000u, 4096u, 12000u}) {
    SCOPED_TRACE("count " + std::to_string(n));
    const uint32_t side = sideFor(n);
    std::vector<uint32_t> keys = cellPairs(n - n / 4, side, side, 65533, n).keys;
    for (const uint32_t k : cellPairs(n / 4, 3, 2, 65533, n + 1).keys) keys.push_back(k);
    std::shuffle(keys.begin(), keys.end(), std::mt19937(n));
    expectSortsLikeStableSort(pairsWithKeys(std::move(keys)), side, side);
    expectSortsLikeStableSort(cellPairs(n, 1, 20, 65533, n + 2), 1, 20);
  }
}

TEST(SelfCollisionSort, EqualKeysKeepTheirOrder) {
  for (uint32_t n : {2u, 33u, 5000u}) {
    SCOPED_TRACE("count " + std::to_string(n));
    const uint32_t side = sideFor(n);
    // Runs of equal keys inside a sparse box (the counting path), and a box of one cell.
    std::vector<uint32_t> keys = cellPairs(n, side, side, 65533, n).keys;
    for (size_t i = 0; i < keys.size(); i += 3) keys[i] = cellKey(9, 1, 1);
    expectSortsLikeStableSort(pairsWithKeys(std::move(keys)), side, side);
    expectSortsLikeStableSort(cellPairs(n, side, side, 4, n + 1), side, side);  // 4 sweep cells per column
    expectSortsLikeStableSort(pairsWithKeys(std::vector<uint32_t>(n, cellKey(7, 1, 1))), 1, 1);
  }
}

TEST(SelfCollisionSort, KeysOutsideTheBoxAndSparseBoxes) {
  // Keys the box does not hold (cells 0, past the box, 255, any 32 bits) are still sorted (by the
  // radix fallback, without touching memory outside the column table: ASan runs this), as are boxes
  // far larger than the item count.
  for (const uint32_t stray : {cellKey(5, 0, 3), cellKey(5, 3, 0), cellKey(5, 11, 3), cellKey(5, 3, 11),
                               cellKey(0xFFFF, 255, 255)}) {
    std::vector<uint32_t> keys = cellPairs(120, 10, 10, 65533, stray).keys;
    keys[60] = stray;
    expectSortsLikeStableSort(pairsWithKeys(std::move(keys)), 10, 10);
  }
  expectSortsLikeStableSort(randomPairs(10'000, 11), 100, 100);
  expectSortsLikeStableSort(cellPairs(500, 254, 254, 65534, 3), 254, 254);
  expectSortsLikeStableSort(cellPairs(500, 20, 20, 65534, 4), 0, 20);
}

// selfSortLarge against std::stable_sort, inline and on every test executor (chunks of 64 pairs there).
void expectLargeSortsLikeStableSort(const Pairs& in, uint32_t topKey) {
  const Pairs want = stableSorted(in, 32);
  // With implied items (firstItem + i, not read: the array holds garbage), the same order of those.
  constexpr uint32_t kFirstItem = 70001;
  Pairs implied = in;
  for (size_t i = 0; i < implied.values.size(); ++i) implied.values[i] = kFirstItem + static_cast<uint32_t>(i);
  const Pairs wantImplied = stableSorted(implied, 32);
  auto check = [&](detail::ParallelCall& par, const std::string& name) {
    Pairs got = in;
    cpu::selfSortLarge(par, got.keys.data(), got.values.data(), static_cast<uint32_t>(got.keys.size()), topKey);
    EXPECT_EQ(firstDifference(got.keys, want.keys), -1) << "keys, " << name << ", count " << in.keys.size();
    EXPECT_EQ(firstDifference(got.values, want.values), -1) << "values (stability), " << name << ", count " << in.keys.size();
    got = in;
    std::fill(got.values.begin(), got.values.end(), 0xDEADBEEFu);
    cpu::selfSortLarge(par, got.keys.data(), got.values.data(), static_cast<uint32_t>(got.keys.size()), topKey,
                       kFirstItem);
    EXPECT_EQ(firstDifference(got.keys, wantImplied.keys), -1) << "keys, implied items, " << name;
    EXPECT_EQ(firstDifference(got.values, wantImplied.values), -1) << "implied items, " << name << ", count " << in.keys.size();
  };
  detail::ParallelCall inlineCall(nullptr, "test");
  check(inlineCall, "one thread");
  for (const TestExecutor& e : testExecutors()) {
    detail::ParallelCall par(e.executor, "test");
    check(par, e.name);
  }
}

TEST(SelfCollisionSort, LargeClothsByKeyRange) {
  // A drape's keys (about one particle per column), a flat cloth's (one or two rows of hash cells:
  // long buckets) both ways round, equal keys, and keys anywhere in the range; each with the box's
  // upper corner as the top key (sweep cells up to 65 533, the clamp's top).
  for (uint32_t n : {2u, 3u, 200u, 5000u, 40000u}) {
    SCOPED_TRACE("count " + std::to_string(n));
    const uint32_t side = std::min(sideFor(n), 254u);
    expectLargeSortsLikeStableSort(cellPairs(n, side, side, 65533, n), cellKey(65534, side, side));
    expectLargeSortsLikeStableSort(cellPairs(n, 254, 2, 65533, n + 1), cellKey(65534, 254, 2));
    expectLargeSortsLikeStableSort(cellPairs(n, 2, 254, 65533, n + 2), cellKey(65534, 2, 254));
    expectLargeSortsLikeStableSort(cellPairs(n, 3, 3, 5, n + 3), cellKey(65534, 3, 3));  // many equal keys
    expectLargeSortsLikeStableSort(pairsWithKeys(std::vector<uint32_t>(n, cellKey(7, 1, 1))), cellKey(65534, 1, 1));
    std::vector<uint32_t> keys = randomPairs(n, n + 4).keys;
    for (uint32_t& k : keys) k = std::max(k, 0x01010001u);  // (the grid's lower corner: no key below)
    expectLargeSortsLikeStableSort(pairsWithKeys(std::move(keys)), 0xFFFFFFFFu);
  }
}

TEST(SelfCollisionSort, LargeClothsWithKeysOutsideTheRange) {
  // Keys below the lower corner's or above the top key, and a top key below the lower corner's: the
  // radix sort instead (still the stable order; nothing written outside the arrays: ASan runs this).
  for (const uint32_t stray : {0u, 0x01010000u, cellKey(1, 11, 10), 0xFFFFFFFFu}) {
    std::vector<uint32_t> keys = cellPairs(3000, 10, 10, 65533, stray).keys;
    keys[1500] = stray;
    expectLargeSortsLikeStableSort(pairsWithKeys(std::move(keys)), cellKey(65534, 10, 10));
  }
  expectLargeSortsLikeStableSort(cellPairs(3000, 10, 10, 65533, 5), 0x01000000u);
}

}  // namespace
}  // namespace vkc::test

namespace vkc::test {
namespace {

TEST(SelfCollisionSort, InsertionOfUnpackedPairs) {
  // selfInsertUnpackPairsSimd against std::stable_sort: sorted runs with pairs out of place at every
  // position of a vector (up to 16 lanes) and across vector boundaries, equal keys among them.
  for (const uint32_t n : {0u, 1u, 2u, 15u, 16u, 17u, 33u, 100u, 1000u}) {
    for (uint32_t seed = 0; seed < 8; ++seed) {
      std::mt19937 rng(seed * 131 + n);
      std::vector<uint32_t> keys(n);
      for (uint32_t i = 0; i < n; ++i) keys[i] = 4 * i;
      // Every few places a key moved back (by 1 to 20 places) or an equal key.
      for (uint32_t i = 0; i < n; i += 1 + static_cast<uint32_t>(rng() % 6)) {
        const uint32_t back = std::min(i, static_cast<uint32_t>(rng() % 21));
        keys[i] = rng() % 3 == 0 ? keys[i - back] : 4 * (i - back) + 1;
      }
      const Pairs in = pairsWithKeys(keys);
      std::vector<uint64_t> packed(n);
      for (uint32_t i = 0; i < n; ++i) packed[i] = in.keys[i] | uint64_t{in.values[i]} << 32;
      Pairs got;
      got.keys.assign(n, 0);
      got.values.assign(n, 0);
      cpu::selfInsertUnpackPairsSimd(packed.data(), n, got.keys.data(), got.values.data());
      const Pairs want = stableSorted(in, 32);
      EXPECT_EQ(firstDifference(got.keys, want.keys), -1) << "count " << n << ", seed " << seed;
      EXPECT_EQ(firstDifference(got.values, want.values), -1) << "count " << n << ", seed " << seed;
    }
  }
}

TEST(SelfCollisionSort, PrefixSumOfTheColumnTable) {
  // selfPrefixSumSimd against a running sum (mod 2^32), over lengths around the vector widths, and
  // whether some entry was above the limit (every position, and none).
  for (const uint32_t n : {0u, 1u, 3u, 4u, 5u, 8u, 15u, 16u, 17u, 33u, 100u, 2543u}) {
    for (uint32_t seed = 0; seed < 6; ++seed) {
      std::mt19937 rng(seed * 31 + n);
      std::vector<uint32_t> v(n);
      for (uint32_t& x : v) x = seed == 5 ? static_cast<uint32_t>(rng()) : static_cast<uint32_t>(rng() % 33);
      if (seed == 1 && n > 0) v[(n * 7) % n] = 33;
      std::vector<uint32_t> want = v;
      bool above = false;
      for (uint32_t i = 0, run = 0; i < n; ++i) {
        above |= want[i] > 32;
        run += want[i];
        want[i] = run;
      }
      EXPECT_EQ(cpu::selfPrefixSumSimd(v.data(), n, 32), above) << "count " << n << ", seed " << seed;
      EXPECT_EQ(firstDifference(v, want), -1) << "count " << n << ", seed " << seed;
    }
  }
}

TEST(SelfCollisionWriteBack, ListsTheSlotsWithACount) {
  // selfCountedSlotsSimd: the indices of the nonzero counts, in order, at every position of a vector
  // and in the tail; none, some, all.
  for (const uint32_t n : {0u, 1u, 7u, 16u, 17u, 64u, 255u, 256u}) {
    for (const uint32_t every : {1u, 2u, 5u, 17u, 1000u}) {
      std::vector<uint32_t> counts(n, 0);
      std::vector<uint32_t> want;
      for (uint32_t i = 0; i < n; ++i) {
        if ((i * 7 + n) % every == 0) {
          counts[i] = 1 + i % 3;
          want.push_back(i);
        }
      }
      std::vector<uint32_t> slots(n + 1, 0xFFFFFFFFu);
      const uint32_t m = cpu::selfCountedSlotsSimd(counts.data(), n, slots.data());
      ASSERT_EQ(m, want.size()) << "count " << n << ", every " << every;
      EXPECT_TRUE(std::equal(want.begin(), want.end(), slots.begin())) << "count " << n << ", every " << every;
    }
  }
}

TEST(SelfCollisionSlotCopy, CopiesAndFindsNonFiniteCoordinates) {
  // selfCopySlotsSimd copies particles to slots (x, y, z, w apart) and tells whether some copied x, y
  // or z is infinite or NaN: checked in every position of a 4-slot vector and of the tail, w never.
  const uint32_t n = 23;
  std::vector<Float4> particles(n + 5);
  for (uint32_t i = 0; i < particles.size(); ++i) {
    // (Exponents that OR to all ones: 1.x, 2.x, 1e30 and denormals, all finite.)
    particles[i] = {1.0f + 0.01f * static_cast<float>(i), -2.5f, i % 2 == 0 ? 3e-39f : 1e30f, static_cast<float>(i)};
  }
  std::vector<uint32_t> items(n);
  for (uint32_t k = 0; k < n; ++k) items[k] = (k * 7) % n;
  auto copy = [&](const std::vector<Float4>& p) {
    std::vector<float> x(n), y(n), z(n), w(n);
    const bool bad = cpu::selfCopySlotsSimd(p.data(), items.data(), 5, n, x.data(), y.data(), z.data(), w.data(), true);
    EXPECT_FALSE(cpu::selfCopySlotsSimd(p.data(), items.data(), 5, n, x.data(), y.data(), z.data(), w.data()));  // (no check)
    // Without w (the SIMD backend's rest positions): the same x, y, z and the same answer.
    std::vector<float> x2(n), y2(n), z2(n);
    EXPECT_EQ(
        cpu::selfCopySlotsSimd(p.data(), items.data(), 5, n, x2.data(), y2.data(), z2.data(), nullptr, true),
        bad);
    for (uint32_t k = 0; k < n; ++k) {
      const Float4& want = p[items[k] + 5];
      EXPECT_EQ(std::memcmp(&x[k], &want.x, 4) | std::memcmp(&y[k], &want.y, 4) | std::memcmp(&z[k], &want.z, 4) |
                    std::memcmp(&w[k], &want.w, 4),
                0)
          << "slot " << k;
      EXPECT_EQ(
          std::memcmp(&x2[k], &want.x, 4) | std::memcmp(&y2[k], &want.y, 4) | std::memcmp(&z2[k], &want.z, 4),
          0)
          << "slot " << k << " (no pos)";
    }
    return bad;
  };
  EXPECT_FALSE(copy(particles));
  std::vector<Float4> p = particles;
  p[4].w = NAN;  // (before the copied range: never read)
  p[5 + items[2]].w = INFINITY;  // w is not looked at
  EXPECT_FALSE(copy(p));
  for (uint32_t k = 0; k < n; ++k) {
    for (int c = 0; c < 3; ++c) {
      p = particles;
      float* v = &p[items[k] + 5].x + c;
      *v = k % 2 == 0 ? NAN : -INFINITY;
      EXPECT_TRUE(copy(p)) << "slot " << k << ", coordinate " << "xyz"[c];
    }
  }
}

}  // namespace
}  // namespace vkc::test
