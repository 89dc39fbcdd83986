// Test helpers for the radix sort: inputs and the std::stable_sort reference.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace vkc::test {

struct Pairs {
  std::vector<uint32_t> keys;
  std::vector<uint32_t> values;
};

// values[i] = i * 2654435761 (distinct, not sorted: stability shows as the original order of equal keys).
inline Pairs pairsWithKeys(std::vector<uint32_t> keys) {
  Pairs p;
  p.values.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) p.values[i] = static_cast<uint32_t>(i * 2654435761u);
  p.keys = std::move(keys);
  return p;
}

inline Pairs randomPairs(size_t n, uint32_t seed, uint32_t keyRange = 0 /* 0: full 32 bits */) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> keys(n);
  for (auto& k : keys) k = keyRange == 0 ? static_cast<uint32_t>(rng()) : static_cast<uint32_t>(rng() % keyRange);
  return pairsWithKeys(std::move(keys));
}

// The expected output: pairs ordered by (key & low keyBits mask) with std::stable_sort.
inline Pairs stableSorted(const Pairs& in, uint32_t keyBits) {
  const uint32_t mask = keyBits >= 32 ? ~0u : (1u << keyBits) - 1u;
  std::vector<uint32_t> order(in.keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return (in.keys[a] & mask) < (in.keys[b] & mask); });
  Pairs out;
  out.keys.reserve(order.size());
  out.values.reserve(order.size());
  for (uint32_t i : order) {
    out.keys.push_back(in.keys[i]);
    out.values.push_back(in.values[i]);
  }
  return out;
}

// The first index where two arrays differ, or -1.
inline long long firstDifference(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a.size() != b.size()) return 0;
  const auto m = std::mismatch(a.begin(), a.end(), b.begin());
  return m.first == a.end() ? -1 : static_cast<long long>(m.first - a.begin());
}

}  // namespace vkc::test
