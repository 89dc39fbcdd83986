// Radix sort conformance: one test body per backend (Vulkan on the test device, CPU scalar, CPU SIMD),
// each compared bit for bit with std::stable_sort on the masked keys; the values (distinct, unsorted)
// show that equal keys keep their input order.
#include <gtest/gtest.h>

#include <string>

#include "radix_sort/radix_sort_reference.h"
#include "support/executors.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using RadixSortConformance = BackendTest;

void expectSortsLike(Backend backend, Context* ctx, const Pairs& in, uint32_t keyBits, const Pairs& want) {
  Pairs got = in;
  const Status s = radixSort(backend, ctx, {got.keys, got.values, keyBits});
  ASSERT_TRUE(s.ok()) << s.message();
  const long long k = firstDifference(got.keys, want.keys);
  EXPECT_EQ(k, -1) << "keys differ first at " << k << " of " << in.keys.size() << " (keyBits " << keyBits << ")";
  const long long v = firstDifference(got.values, want.values);
  EXPECT_EQ(v, -1) << "values (stability) differ first at " << v << " of " << in.keys.size() << " (keyBits "
                   << keyBits << ")";
  if (backend == Backend::kVulkan) return;
  // The threaded CPU backend: the same output, bit for bit, on every test executor.
  for (const TestExecutor& e : testExecutors()) {
    Pairs threaded = in;
    const Status st = radixSortCpu({threaded.keys, threaded.values, keyBits}, backend, *e.executor);
    ASSERT_TRUE(st.ok()) << e.name << ": " << st.message();
    EXPECT_EQ(firstDifference(threaded.keys, want.keys), -1) << e.name << ": keys (keyBits " << keyBits << ")";
    EXPECT_EQ(firstDifference(threaded.values, want.values), -1) << e.name << ": values (keyBits " << keyBits << ")";
  }
}

void expectSortsLikeStableSort(Backend backend, Context* ctx, const Pairs& in, uint32_t keyBits) {
  expectSortsLike(backend, ctx, in, keyBits, stableSorted(in, keyBits));
}

TEST_P(RadixSortConformance, RandomKeysOfEachCount) {
  for (uint32_t n : {0u, 1u, 2u, 7u, 255u, 256u, 257u, 4095u, 4096u, 4097u, 10'007u, 65'537u, 300'001u}) {
    SCOPED_TRACE("count " + std::to_string(n));
    expectSortsLikeStableSort(backend(), ctx(), randomPairs(n, n + 1), 32);
  }
}

TEST_P(RadixSortConformance, AllEqualKeysKeepTheirOrder) {
  for (uint32_t key : {0u, 0xFFFFFFFFu, 0x12345678u}) {
    SCOPED_TRACE("key " + std::to_string(key));
    expectSortsLikeStableSort(backend(), ctx(), pairsWithKeys(std::vector<uint32_t>(50'001, key)), 32);
  }
}

TEST_P(RadixSortConformance, AlreadySortedAndReverseSorted) {
  std::vector<uint32_t> up(40'961), down(40'961);
  for (uint32_t i = 0; i < up.size(); ++i) {
    up[i] = i * 104'729u;  // spans all four bytes
    down[i] = ~up[i];
  }
  expectSortsLikeStableSort(backend(), ctx(), pairsWithKeys(up), 32);
  expectSortsLikeStableSort(backend(), ctx(), pairsWithKeys(down), 32);
}

TEST_P(RadixSortConformance, FewDistinctKeysManyTies) {
  expectSortsLikeStableSort(backend(), ctx(), randomPairs(100'003, 5, 16), 32);
  expectSortsLikeStableSort(backend(), ctx(), randomPairs(100'003, 6, 3), 4);
}

TEST_P(RadixSortConformance, KeyBitsSortsByTheLowBitsOnly) {
  // Full 32-bit keys: the bits above keyBits must be ignored for the order and carried unchanged.
  const Pairs in = randomPairs(20'011, 9);
  for (uint32_t bits : {1u, 4u, 8u, 9u, 13u, 16u, 17u, 24u, 25u, 31u, 32u}) {
    SCOPED_TRACE("keyBits " + std::to_string(bits));
    expectSortsLikeStableSort(backend(), ctx(), in, bits);
  }
}

TEST_P(RadixSortConformance, SmallKeyRangeWithMatchingKeyBits) {
  // Cell keys as self collision makes them: below 2^17, sorted with keyBits 17 (3 passes).
  expectSortsLikeStableSort(backend(), ctx(), randomPairs(123'457, 11, 1u << 17), 17);
}

TEST_P(RadixSortConformance, TwoToThe22Pairs) {
  // Input and reference made once for the three backends (the reference costs more than the sorts).
  static const Pairs in = randomPairs(1u << 22, 22);
  static const Pairs want = stableSorted(in, 32);
  expectSortsLike(backend(), ctx(), in, 32, want);
}

TEST_P(RadixSortConformance, BadInputNamesTheFieldAndChangesNothing) {
  Pairs p = randomPairs(100, 1);
  const Pairs before = p;
  for (uint32_t bits : {0u, 33u}) {
    const Status s = radixSort(backend(), ctx(), {p.keys, p.values, bits});
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(s.message().find("keyBits is " + std::to_string(bits)), std::string::npos) << s.message();
  }
  const Status s = radixSort(backend(), ctx(), {p.keys, std::span<uint32_t>(p.values).first(99), 32});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("values.size() 99 differs from keys.size() 100"), std::string::npos) << s.message();
  EXPECT_EQ(p.keys, before.keys);
  EXPECT_EQ(p.values, before.values);
}

INSTANTIATE_TEST_SUITE_P(All, RadixSortConformance, VKC_ALL_BACKENDS);

}  // namespace
}  // namespace vkc::test
