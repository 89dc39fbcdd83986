// Highway kernel of the radix sort's CPU twin: interleaving keys and values into 64-bit pairs (key in
// the low half), compiled once per target and chosen at run time.
#include "cpu/radix_sort.h"

#ifdef VKC_HAVE_SIMD
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/radix_sort_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <bit>

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

static_assert(std::endian::native == std::endian::little, "pairs are packed as little-endian words");

void PackPairs(const uint32_t* keys, const uint32_t* values, uint64_t* out, size_t count) {
  const hn::ScalableTag<uint32_t> d32;
  const size_t lanes = hn::Lanes(d32);
  uint32_t* out32 = reinterpret_cast<uint32_t*>(out);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    // k0 v0 k1 v1 ...: on a little-endian host, word i of `out` is keys[i] | values[i] << 32.
    hn::StoreInterleaved2(hn::LoadU(d32, keys + i), hn::LoadU(d32, values + i), d32, out32 + 2 * i);
  }
  for (; i < count; ++i) out[i] = keys[i] | (uint64_t{values[i]} << 32);
}

}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vkc::cpu {
HWY_EXPORT(PackPairs);
void packPairs(const uint32_t* keys, const uint32_t* values, uint64_t* out, size_t count) {
  HWY_DYNAMIC_DISPATCH(PackPairs)(keys, values, out, count);
}
}  // namespace vkc::cpu
#endif

#else  // scalar-only build

namespace vkc::cpu {
void packPairs(const uint32_t* keys, const uint32_t* values, uint64_t* out, size_t count) {
  for (size_t i = 0; i < count; ++i) out[i] = keys[i] | (uint64_t{values[i]} << 32);
}
}  // namespace vkc::cpu
#endif
