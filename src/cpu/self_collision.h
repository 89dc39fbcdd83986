// Private: the CPU twin of shaders/self_collision.comp. Both CPU backends sort each cloth's (key, item)
// pairs with radixSortCpu (stable, so equal on every backend) and apply the same per-pair arithmetic
// (shared/self_collision.h); they differ only in how they find each slot's column ranges.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "shared/self_collision.h"
#include "vkcollide/types.h"

namespace vkc::detail {
class ParallelCall;
}

namespace vkc::cpu {

// Slack after the SoA arrays (NaN-filled), so that SIMD loads may read a whole vector past a run.
inline constexpr size_t kSelfSimdPad = 64;

// A scene's items sorted cloth by cloth, and each cloth's grid.
struct SelfSorted {
  std::vector<uint32_t> keys;      // per slot: the cell key
  std::vector<uint32_t> items;     // per slot: the item index
  std::vector<gpu::vec4> pos;      // per slot: the particle (xyz, inverse mass) (scalar backend)
  std::vector<gpu::vec4> rest;     // per slot: its rest position (scalar backend, with rest positions)
  std::vector<float> x, y, z;      // SIMD path: per slot, the particle's coordinates, padded by kSelfSimdPad
  std::vector<float> w;            // SIMD path: per slot, its inverse mass (not padded)
  std::vector<float> rx, ry, rz;   // SoA copies of rest (SIMD path, with rest positions), padded
  std::vector<gpu::SelfGrid> grids;
  std::vector<uint8_t> impliedItems;  // per cloth: its items implied to its sort (collideSelfOn)
  // The SIMD path's particle of slot k (no vec4 copy of the particles: 12 bytes less written per slot
  // than with one, and the sweep tests only x, y, z).
  gpu::vec4 particle(uint32_t k) const { return gpu::vec4(x[k], y[k], z[k], w[k]); }
};

// keys[i] = selfCellKey(grid, particles[itemParticles[i]]) and items[i] = firstItem + i for i < count,
// with SIMD (bitwise equal). itemParticles == nullptr: the items are particles[0 .. count) in order
// (contiguous loads, no gathers). items == nullptr: only the keys written.
void selfCellKeysSimd(const Float4* particles, size_t particleCount, const uint32_t* itemParticles, uint32_t count,
                      const gpu::SelfGrid& grid, uint32_t* keys, uint32_t* items, uint32_t firstItem);

// x[k], y[k], z[k], w[k] = particles[items[k] + offset], for k < count (offset added mod 2^32): the
// SIMD path's copy of a whole cloth's particles in sorted slot order. w may be null (only x, y, z
// written: the rest positions). With `check`, returns whether some copied x, y or z is not finite
// (infinite or NaN; w is not looked at); else false.
bool selfCopySlotsSimd(const Float4* particles, const uint32_t* items, uint32_t offset, uint32_t count,
                       float* x, float* y, float* z, float* w, bool check = false);

// col[i] = (h1 - 1) * width + (h0 - 1) for the hash cells h0 = (keys[i] >> 16) & 0xFF, h1 = keys[i] >> 24
// (with width >= cells0, the column's number in the box 1..cells0 x 1..cells1, in key order), for
// i < count, with SIMD. Returns whether some key lies outside the box (its col[i] is then meaningless).
bool selfKeyColumnsSimd(const uint32_t* keys, uint32_t count, uint32_t cells0, uint32_t cells1, uint32_t width,
                        uint32_t* col);

// A cloth's table of column starts for the SIMD sweep: start[c] = the first (cloth-local) slot whose
// column is >= c, where the column of key K is (K >> 24) * width + ((K >> 16) & 0xFF) - base, for
// every column of the cloth's slots and of their neighbourhoods (h0 + 1, h1 + 1). width exceeds every
// h0 + 1, so columns order as keys do.
struct SelfColumnStarts {
  std::vector<uint32_t> start;
  uint32_t width = 0, base = 0;
};

// keys[i] = the low 32 bits of pairs[i], items[i] the high 32 bits, for i < count, with SIMD.
void selfUnpackPairsSimd(const uint64_t* pairs, uint32_t count, uint32_t* keys, uint32_t* items);

// The pairs (key: low 32 bits, item: high 32 bits) sorted stably by key and unpacked into keys /
// items, as selfUnpackPairsSimd after an insertion sort of the pairs: for pairs that are nearly in
// order (the counting sort's output, out of order only within short columns). Vectors with no
// descent are copied whole (SIMD); the rest go by insertion into keys / items.
void selfInsertUnpackPairsSimd(const uint64_t* pairs, uint32_t count, uint32_t* keys, uint32_t* items);

// v[i] = v[0] + ... + v[i] for i < count (mod 2^32), in place, with SIMD (the counting sort's
// column table). Returns whether some v[i] was above `limit` before.
bool selfPrefixSumSimd(uint32_t* v, uint32_t count, uint32_t limit);

// Writes the indices i < count with counts[i] != 0 to slots, in increasing order, and returns how
// many (the write-back's scan of a pass's few slots with neighbours), with SIMD.
uint32_t selfCountedSlotsSimd(const uint32_t* counts, uint32_t count, uint32_t* slots);

// Sorts one cloth's (key, item) pairs stably by key: the order radixSortCpu gives (a stable sort has one
// result), faster for the self-collision keys (sweep | hash0 << 16 | hash1 << 24) of a draped cloth
// under 16 384 items: a counting sort by column over the box of hash cells 1..cells0 x 1..cells1, then
// within each column by sweep cell (an insertion pass, or a radix sort for long columns). Larger cloths,
// boxes with more than 4 or fewer than 1/2 columns per item, and keys outside the box take
// radixSortFast. Keeps its scratch per thread between calls. With `starts`, the counting sort leaves
// its column table there (the sweep's, see SelfColumnStarts: a box one column wider and one row
// taller) and returns true; false when the radix sort ran (`starts` untouched). With `firstItem`, the
// items are not read (the cell-key pass need not write them): pair i's item is *firstItem + i; items
// is then output only.
bool selfSortByKey(uint32_t* keys, uint32_t* items, uint32_t count, uint32_t cells0, uint32_t cells1,
                   SelfColumnStarts* starts = nullptr, std::optional<uint32_t> firstItem = std::nullopt);

// Whether selfSortByKey sorts `count` pairs in the box of cells0 x cells1 hash cells by counting (where
// the keys lie in the box), not by radixSortFast.
bool selfSortCounts(uint32_t count, uint32_t cells0, uint32_t cells1);

// The same stable order for a large cloth (collideSelfCpu's SIMD backend from kSelfSortLargeMin items,
// on one thread or several), with less memory traffic than radixSortFast's three passes over the whole
// array: one scatter into 2048 buckets of the key range (kKeyFloor = 0x01010001, the grid's lower
// corner, .. topKey, the upper corner's key), then each bucket sorted by the rest of its key while it
// is in cache (LSD in digits sized to the bucket, or insertion for short buckets), straight into keys /
// items. Chunks and buckets on par's threads (never call it from a task of par). Keys outside that
// range, or (with several threads) one bucket holding more than half a thread's share: radixSortParallel.
// From kSelfSortLargeMin pairs (buckets of about 128 on average; shorter ones make the in-cache sorts
// cost more than radixSortFast's passes: the 65 025-particle drape's self pass 0.64 -> 1.11 ms).
// With `firstItem`, the items are not read (the cell-key pass need not write them): pair i's item is
// *firstItem + i (a cloth without a subset); items is then output only.
inline constexpr uint32_t kSelfSortLargeMin = 2048u * 128u;
void selfSortLarge(detail::ParallelCall& par, uint32_t* keys, uint32_t* items, uint32_t count, uint32_t topKey,
                   std::optional<uint32_t> firstItem = std::nullopt);

// Optional per-slot pair filter (inter collision sweeps several cloths' particles at once): a pair
// (k, m) counts only if cloth[k] != cloth[m] and (group[k] & mask[m]) != 0 && (group[m] & mask[k]) != 0.
struct SelfPairFilter {
  const uint32_t* cloth = nullptr;
  const uint32_t* group = nullptr;
  const uint32_t* mask = nullptr;
  bool allows(uint32_t k, uint32_t m) const {
    return cloth[k] != cloth[m] && (group[k] & mask[m]) != 0 && (group[m] & mask[k]) != 0;
  }
};

// Per slot of one cloth (slots [begin, end)): neighbour count and summed correction (sums[k] is
// written only where counts[k] > 0), found with running column pointers and SIMD distance tests; the
// same pairs in the same order as the shader's gather. With `pairs`, appends (slot, neighbour slot) for every neighbour. With `filter` (indexed by
// slot), pairs it refuses are skipped; the others keep their order. With `starts` (the sort's table for
// these slots), the sweep builds no table of its own.
void selfSweepSimd(const SelfSorted& s, uint32_t begin, uint32_t end, const gpu::SelfGrid& grid, float d,
                   float stiffness, bool useRest, uint32_t* counts, gpu::vec3* sums,
                   std::vector<std::array<uint32_t, 2>>* pairs, const SelfPairFilter* filter = nullptr,
                   const SelfColumnStarts* starts = nullptr);

// selfSweepSimd for one large cloth on par's threads (selfSweepSimd itself when the cloth is one
// chunk): the column table and the keys with sentinels built by chunks of slots, then each chunk's
// slots find their pairs over the whole cloth (half neighbourhood), then each chunk's slots gather the
// pairs that touch them (their own and the earlier chunks'), in the gather's order. The same counts,
// sums (bitwise) and pairs (in the same order) as selfSweepSimd. Never call it from a task of `par`.
void selfSweepSimdParallel(detail::ParallelCall& par, const SelfSorted& s, uint32_t begin, uint32_t end,
                           const gpu::SelfGrid& grid, float d, float stiffness, bool useRest, uint32_t* counts,
                           gpu::vec3* sums, std::vector<std::array<uint32_t, 2>>* pairs,
                           const SelfPairFilter* filter = nullptr);

}  // namespace vkc::cpu
