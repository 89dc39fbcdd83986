// The CPU twin of the radix sort (see src/cpu/radix_sort.h and include/vkcollide/radix_sort.h).
#include "cpu/radix_sort.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/executor.h"
#include "shared/radix_sort.h"
#include "util/try.h"
#include "vkcollide/radix_sort.h"

namespace vkc {
namespace cpu {

namespace {
constexpr uint32_t kBits = gpu::kRadixDigitBits;
constexpr uint32_t kBins = gpu::kRadixBins;

uint32_t digitBits(uint32_t pass, uint32_t keyBits) { return std::min(kBits, keyBits - pass * kBits); }
}  // namespace

void radixSortScalar(uint32_t* keys, uint32_t* values, size_t count, uint32_t keyBits) {
  const uint32_t passes = radixSortPassCount(keyBits);
  std::vector<uint32_t> tmpKeys(count), tmpValues(count);
  uint32_t *inK = keys, *inV = values, *outK = tmpKeys.data(), *outV = tmpValues.data();
  for (uint32_t p = 0; p < passes; ++p) {
    const uint32_t shift = p * kBits, mask = (1u << digitBits(p, keyBits)) - 1u;
    std::array<size_t, kBins> offset{};
    for (size_t i = 0; i < count; ++i) ++offset[(inK[i] >> shift) & mask];
    size_t run = 0;
    for (size_t& o : offset) {
      const size_t c = o;
      o = run;
      run += c;
    }
    for (size_t i = 0; i < count; ++i) {
      const size_t dst = offset[(inK[i] >> shift) & mask]++;
      outK[dst] = inK[i];
      outV[dst] = inV[i];
    }
    std::swap(inK, outK);
    std::swap(inV, outV);
  }
  if (passes % 2 == 1 && count > 0) {
    std::memcpy(keys, inK, count * sizeof(uint32_t));
    std::memcpy(values, inV, count * sizeof(uint32_t));
  }
}

namespace {

// One stable scatter of packed pairs; out == nullptr: into keys / values (split) instead. (Software
// write combining through 64-byte lines per digit was tried and measured no faster here.)
void scatterPass(const uint64_t* in, size_t count, uint32_t shift, uint32_t mask, uint32_t* offset, uint64_t* out,
                 uint32_t* keys, uint32_t* values) {
  if (out != nullptr) {
    for (size_t i = 0; i < count; ++i) {
      const uint64_t pair = in[i];
      out[offset[(static_cast<uint32_t>(pair) >> shift) & mask]++] = pair;
    }
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const uint64_t pair = in[i];
    const uint32_t at = offset[(static_cast<uint32_t>(pair) >> shift) & mask]++;
    keys[at] = static_cast<uint32_t>(pair);
    values[at] = static_cast<uint32_t>(pair >> 32);
  }
}

// Adds every pass's digit counts of keys[0 .. count) to h[p * bins + digit]. 32-bit keys in 11-bit
// digits: the three counts in one loop (one read of each key, three independent increments; measured
// 0.39 vs 0.41 ms for the general loops on the 65k drape's keys).
void countDigits(const uint32_t* keys, size_t count, uint32_t passes, uint32_t bins, const uint32_t* shifts,
                 const uint32_t* masks, uint32_t* h) {
  if (passes == 3) {
    uint32_t* const h1 = h + bins;
    uint32_t* const h2 = h1 + bins;
    for (size_t i = 0; i < count; ++i) {
      const uint32_t key = keys[i];
      ++h[key & masks[0]];
      ++h1[(key >> shifts[1]) & masks[1]];
      ++h2[(key >> shifts[2]) & masks[2]];
    }
    return;
  }
  for (uint32_t p = 0; p < passes; ++p) {
    uint32_t* const hp = h + size_t{p} * bins;
    for (size_t i = 0; i < count; ++i) ++hp[(keys[i] >> shifts[p]) & masks[p]];
  }
}

}  // namespace

void radixSortFast(uint32_t* keys, uint32_t* values, size_t count, uint32_t keyBits) {
  if (count < 2) return;
  // 32-bit counters (half the cache the histograms take); beyond them, the reference.
  if (count > 0xFFFFFFFFu) {
    radixSortScalar(keys, values, count, keyBits);
    return;
  }
  // Digit width: the shader's 8 bits for short arrays; 11 bits (3 passes for 32-bit keys instead of
  // 4) once the array is long enough that a 2048-bin prefix is cheap next to a scatter pass. Any
  // digit width gives the same stable order, so the result is the scalar twin's.
  const uint32_t bits = count >= 8192 && keyBits > 16 ? 11u : kBits;
  const uint32_t bins = 1u << bits;
  const uint32_t passes = (keyBits + bits - 1) / bits;
  auto digitMask = [&](uint32_t p) { return (1u << std::min(bits, keyBits - p * bits)) - 1u; };
  // Per-thread scratch kept between calls (repeated sorts, e.g. once per frame, do not pay for fresh
  // pages every time): two ping-pong arrays of packed pairs, and the histograms.
  thread_local std::vector<uint64_t> scratch;
  if (scratch.size() < 2 * count) scratch.resize(2 * count);
  uint64_t* const a = scratch.data();
  uint64_t* const b = a + count;
  // Pack block by block and count every digit's histogram while the block's keys are in cache.
  thread_local std::vector<uint32_t> histStore;
  histStore.assign(size_t{passes} * bins, 0);
  constexpr size_t kBlock = 4096;
  uint32_t shifts[32], masks[32];
  for (uint32_t p = 0; p < passes; ++p) shifts[p] = p * bits, masks[p] = digitMask(p);
  for (size_t begin = 0; begin < count; begin += kBlock) {
    const size_t end = std::min(count, begin + kBlock);
    packPairs(keys + begin, values + begin, a + begin, end - begin);
    countDigits(keys + begin, end - begin, passes, bins, shifts, masks, histStore.data());
  }
  // Passes that change the order: a digit shared by every key leaves a stable pass as the identity.
  uint32_t active[32];
  uint32_t activeCount = 0;
  for (uint32_t p = 0; p < passes; ++p) {
    if (histStore[size_t{p} * bins + ((keys[0] >> shifts[p]) & masks[p])] != count) active[activeCount++] = p;
  }
  uint64_t* in = a;
  uint64_t* out = b;
  for (uint32_t k = 0; k < activeCount; ++k) {
    const uint32_t p = active[k];
    uint32_t* offset = histStore.data() + size_t{p} * bins;  // turned into the digits' first slots
    uint32_t run = 0;
    for (uint32_t d = 0; d < bins; ++d) {
      const uint32_t c = offset[d];
      offset[d] = run;
      run += c;
    }
    const bool last = k + 1 == activeCount;  // the last pass writes the host's arrays directly
    scatterPass(in, count, shifts[p], masks[p], offset, last ? nullptr : out, keys, values);
    std::swap(in, out);
  }
}

void radixSortParallel(detail::ParallelCall& par, uint32_t* keys, uint32_t* values, size_t count, uint32_t keyBits,
                       bool fast) {
  const uint32_t tasks = count > 0xFFFFFFFFu ? 1u : par.taskCount(count);
  if (tasks <= 1) {
    if (fast) {
      radixSortFast(keys, values, count, keyBits);
    } else {
      radixSortScalar(keys, values, count, keyBits);
    }
    return;
  }
  // Chunk t of the array: [t * chunk, min(count, (t + 1) * chunk)). Every pass: each chunk's histogram
  // of the pass's digit, the offsets (digit by digit, chunk by chunk: chunk t's keys of digit d go
  // after every smaller digit's and after chunk t - 1's keys of digit d), then each chunk scatters its
  // keys in order. That is the stable order of one thread's scatter, so the result is the one stable
  // sort's. The digit width follows the single-threaded variant (fast: 11 bits from 8192 pairs with
  // keyBits > 16, and passes whose digit every key shares are skipped; else the reference's 8 bits),
  // though any width gives the same result.
  const uint32_t n = static_cast<uint32_t>(count);
  const uint32_t chunk = (n + tasks - 1) / tasks;
  const uint32_t chunks = (n + chunk - 1) / chunk;
  const uint32_t bits = fast && n >= 8192 && keyBits > 16 ? 11u : kBits;
  const uint32_t bins = 1u << bits;
  const uint32_t passes = (keyBits + bits - 1) / bits;
  uint32_t shifts[32], masks[32];
  for (uint32_t p = 0; p < passes; ++p) {
    shifts[p] = p * bits;
    masks[p] = (1u << std::min(bits, keyBits - p * bits)) - 1u;
  }
  // Scratch of the calling thread, reused across calls (the tasks reach it through these pointers).
  thread_local std::vector<uint64_t> scratchStore;
  thread_local std::vector<uint32_t> histStore;
  std::vector<uint64_t>& scratch = scratchStore;
  if (scratch.size() < 2 * size_t{n}) scratch.resize(2 * size_t{n});
  uint64_t* const a = scratch.data();
  uint64_t* const b = a + n;
  // hist[(t * passes + p) * bins + d]: chunk t's count of digit d in pass p.
  histStore.assign(size_t{chunks} * passes * bins, 0u);
  uint32_t* const hist = histStore.data();
  auto range = [&](uint32_t t) { return std::pair<uint32_t, uint32_t>{t * chunk, std::min(n, (t + 1) * chunk)}; };
  // Pack the pairs and count every pass's digits in one read: the first pass that runs scatters the
  // input order, so its chunk histograms are these; the totals decide which passes run.
  par.forEach(chunks, [&](uint32_t t) {
    const auto [begin, end] = range(t);
    packPairs(keys + begin, values + begin, a + begin, end - begin);
    countDigits(keys + begin, end - begin, passes, bins, shifts, masks, hist + size_t{t} * passes * bins);
  });
  uint32_t active[32];
  uint32_t activeCount = 0;
  for (uint32_t p = 0; p < passes; ++p) {
    if (!fast) {
      active[activeCount++] = p;
      continue;
    }
    const uint32_t d0 = (keys[0] >> shifts[p]) & masks[p];
    uint64_t same = 0;
    for (uint32_t t = 0; t < chunks; ++t) same += hist[(size_t{t} * passes + p) * bins + d0];
    if (same != n) active[activeCount++] = p;
  }
  if (activeCount == 0) return;  // every pass is the identity: already in order
  std::vector<uint32_t> offsets(size_t{chunks} * bins);
  uint64_t* in = a;
  uint64_t* out = b;
  for (uint32_t k = 0; k < activeCount; ++k) {
    const uint32_t p = active[k];
    if (k > 0) {  // the chunks hold other pairs now: count them again (pass p's digit only)
      par.forEach(chunks, [&](uint32_t t) {
        const auto [begin, end] = range(t);
        uint32_t* const h = hist + (size_t{t} * passes + p) * bins;
        std::fill(h, h + bins, 0u);
        for (uint32_t i = begin; i < end; ++i) ++h[(static_cast<uint32_t>(in[i]) >> shifts[p]) & masks[p]];
      });
    }
    uint32_t run = 0;
    for (uint32_t d = 0; d < bins; ++d) {
      for (uint32_t t = 0; t < chunks; ++t) {
        offsets[size_t{t} * bins + d] = run;
        run += hist[(size_t{t} * passes + p) * bins + d];
      }
    }
    const bool last = k + 1 == activeCount;  // the last pass writes the host's arrays directly
    par.forEach(chunks, [&](uint32_t t) {
      const auto [begin, end] = range(t);
      scatterPass(in + begin, end - begin, shifts[p], masks[p], offsets.data() + size_t{t} * bins, last ? nullptr : out,
                  keys, values);
    });
    std::swap(in, out);
  }
}

}  // namespace cpu

Status validateRadixSort(const RadixSortInput& input, const char* owner) {
  const std::span<const uint32_t> keys = input.keys, values = input.values;
  if (input.keyBits == 0 || input.keyBits > 32) {
    return Error{ErrorCode::kInvalidArgument,
                 std::string(owner) + ": keyBits is " + std::to_string(input.keyBits) + "; it must be 1..32"};
  }
  if (keys.size() != values.size()) {
    return Error{ErrorCode::kInvalidArgument, std::string(owner) + ": values.size() " + std::to_string(values.size()) +
                                                  " differs from keys.size() " + std::to_string(keys.size())};
  }
  if (!keys.empty() && keys.data() < values.data() + values.size() && values.data() < keys.data() + keys.size()) {
    return Error{ErrorCode::kInvalidArgument, std::string(owner) + ": keys and values overlap"};
  }
  return {};
}

namespace {

Status radixSort(const RadixSortInput& input, Backend backend, detail::ParallelCall& par) {
  if (backend == Backend::kVulkan) {
    return Error{ErrorCode::kInvalidArgument, "radixSortCpu: backend must be kCpuScalar or kCpuSimd"};
  }
  VKC_TRY(validateRadixSort(input, "radixSortCpu"));
  cpu::radixSortParallel(par, input.keys.data(), input.values.data(), input.keys.size(), input.keyBits,
                         backend == Backend::kCpuSimd);
  return par.status();
}

}  // namespace

Status radixSortCpu(const RadixSortInput& input, Backend backend) {
  detail::ParallelCall par(nullptr, "radixSortCpu");
  return radixSort(input, backend, par);
}

Status radixSortCpu(const RadixSortInput& input, Backend backend, const CpuExecutor& executor) {
  detail::ParallelCall par(&executor, "radixSortCpu");
  return radixSort(input, backend, par);
}

}  // namespace vkc
