// The CPU twin of self collision. Keys, grids and the per-pair arithmetic are the shader's own
// (shared/self_collision.h); the scalar backend also runs the shader's gather itself
// (shared/self_collision_kernel.h, included into SelfKernel below: binary search per column).
//
// Where we differ from NvCloth's CPU solver (SwSelfCollision): NvCloth visits each pair once (a half
// stencil of five columns) and moves both particles immediately, in sorted order: Gauss-Seidel, whose
// result depends on the visiting order and which cannot run in parallel without atomics. We gather:
// every particle scans the full nine-column neighbourhood, sums its corrections from positions taken
// at the pass's start and moves by their average (Jacobi with averaging). The GPU needs this for
// determinism without float atomics, and the CPU does the same so that every backend gives the same
// answer. Convergence: an isolated pair is resolved in one pass either way; in a dense cluster
// Gauss-Seidel propagates corrections within the pass and converges in fewer iterations, while the
// averaged Jacobi step moves less (never overshoots) and needs more.
#include "cpu/self_collision.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "cpu/bounds.h"
#include "cpu/executor.h"
#include "cpu/radix_sort.h"
#include "scene/self_collision_layout.h"
#include "util/try.h"
#include "vkcollide/bounds.h"
#include "vkcollide/radix_sort.h"
#include "vkcollide/self_collision.h"

namespace vkc::gpu {
namespace {

// The kernel's accessors over host arrays; the kernel's functions become members.
struct SelfKernel {
  const uint32_t* keys;
  const vec4* pos;
  const vec4* rest;
  std::vector<uint32_t>* sink;

  uint sortedKey(uint slot) const { return keys[slot]; }
  vec4 sortedPos(uint slot) const { return pos[slot]; }
  vec4 sortedRest(uint slot) const { return rest[slot]; }
  void emitPair(uint /*index*/, uint slot) const { sink->push_back(slot); }

#include "shared/self_collision_kernel.h"
};

}  // namespace
}  // namespace vkc::gpu


namespace vkc {

namespace {

// One pass on par's threads. Keys, slot copies, the scalar gather and the write-back go by chunks of
// slots; the cloths' sorts and SIMD sweeps go whole, many cloths at once, except large cloths (more
// than one chunk), which are sorted (cpu::radixSortParallel) and swept (cpu::selfSweepSimdParallel)
// one after another with every thread. Every step computes the single-threaded values (sums in the
// gather's order per slot; the one stable sort order), so the results are bitwise equal.
Status collideSelfOn(detail::ParallelCall& par, const SelfCollisionInput& in, Backend backend,
                     SelfCollisionDebug* debug) {
  if (backend == Backend::kVulkan) {
    return Error{ErrorCode::kInvalidArgument, "collideSelfCpu: backend must be kCpuScalar or kCpuSimd"};
  }
  // validate(in), with its particle scan left to the bounds reduction (which checks the particles
  // through its keys anyway); on a bad particle validate(in) names it as the self-collision input.
  VKC_TRY(detail::validateSelfInputLayout(in));
  std::vector<Aabb> bounds(in.cloths.size());
  if (const Status st = cpu::computeBoundsOn(par, {in.particles, {}, in.cloths, false, bounds}, backend); !st) {
    VKC_TRY(validate(in));
    return st;
  }
  // Rest positions must be finite (validateSelfRest). The SIMD backend without subsets copies every
  // one of them to the slots and checks them there (a serial scan cost a 1M-particle cloth 0.8 ms of
  // its two-thread call); otherwise they are checked here.
  const bool restCheckedByCopy = backend == Backend::kCpuSimd && in.subsets.empty();
  if (!restCheckedByCopy) VKC_TRY(detail::validateSelfRest(in));
  // (Without subsets, no item list: items map to particles by each cloth's offset.)
  const detail::SelfLayout L = detail::makeSelfLayout(in.cloths, in.subsets, false);
  const float d = in.settings.distance, stiffness = in.settings.stiffness;
  const bool useRest = !in.restPositions.empty();
  const bool simd = backend == Backend::kCpuSimd;
  const uint32_t clothCount = static_cast<uint32_t>(in.cloths.size());
  const size_t n = clothCount == 0 ? 0u : size_t{L.cloths.back().firstItem} + L.cloths.back().itemCount;
  // A cloth without a subset: its items are its particles in order (item i: particle first + i).
  auto wholeCloth = [&](size_t c) { return in.subsets.empty() || in.subsets[c].empty(); };
  auto particleOfItem = [&](uint32_t c, uint32_t item) {
    return wholeCloth(c) ? item + (L.cloths[c].firstParticle - L.cloths[c].firstItem) : L.itemParticles[item];
  };
  auto itemsOf = [&](uint32_t c) { return L.cloths[c].itemCount; };
  // Chunks of every cloth's slots, and the cloths too large for one task.
  const detail::WorkPlan chunks = par.plan(clothCount, itemsOf);
  const detail::WorkPlan whole = par.plan(clothCount, itemsOf, 64, false);
  // The slot copy gathers particles at random: its chunks vary in cost (cache misses), so finer ones.
  const detail::WorkPlan fine = par.plan(clothCount, itemsOf, 64, true, 4 * detail::kTasksPerThread);
  auto large = [&](uint32_t c) { return par.taskCount(L.cloths[c].itemCount) > 1; };

  // Keys, then the stable sort of each cloth's (key, item).
  // Per-thread scratch kept between calls (a solver calls this every iteration): no fresh pages and
  // no zeroing; every slot below n is written before it is read.
  // (Lambdas do not capture thread_locals: tasks on other threads reach the caller's through these
  // references.)
  thread_local cpu::SelfSorted sortedStore;
  cpu::SelfSorted& s = sortedStore;
  s.grids.resize(in.cloths.size());
  // A cloth without a subset on the SIMD backend whose sort takes implied items (selfSortLarge, or the
  // counting sort of selfSortByKey for a cloth on one task; set below, with the grids): its items
  // (firstItem + i) are not written by the key pass but implied to the sort, which writes them sorted.
  // (The radix sorts read items: the key pass writes them by vectors, at no extra pass.)
  s.impliedItems.resize(in.cloths.size());
  auto impliedItems = [&](uint32_t c) { return s.impliedItems[c] != 0; };
  // (SIMD: the keys are followed by kSelfSimdPad sentinels, 0xFFFFFFFF above every key, which the
  // sweep's running pointers over the last cloth read in place.)
  if (simd) {
    s.keys.resize(n + cpu::kSelfSimdPad);
    std::fill(s.keys.begin() + static_cast<std::ptrdiff_t>(n), s.keys.end(), 0xFFFFFFFFu);
  } else {
    s.keys.resize(n);
  }
  s.items.resize(n);
  // The hash cells of a box's upper corner bound the cloth's (cells grow with the coordinates).
  auto topKey = [&](uint32_t c) {
    const Aabb& b = bounds[c];
    return gpu::selfCellKey(s.grids[c], {b.hi.x, b.hi.y, b.hi.z});
  };
  for (uint32_t c = 0; c < clothCount; ++c) {
    const Aabb& b = bounds[c];
    s.grids[c] = gpu::makeSelfGrid({b.lo.x, b.lo.y, b.lo.z}, {b.hi.x, b.hi.y, b.hi.z}, d);
    const uint32_t count = L.cloths[c].itemCount, top = topKey(c);
    s.impliedItems[c] = simd && wholeCloth(c) &&
                 (count >= cpu::kSelfSortLargeMin ||
                  (!large(c) && cpu::selfSortCounts(count, (top >> 16) & 0xFFu, top >> 24)));
  }
  par.forEach(chunks.tasks(), [&](uint32_t t) {
    for (const detail::WorkPiece& w : chunks.task(t)) {
      const gpu::SelfCloth& sc = L.cloths[w.cloth];
      const gpu::SelfGrid& g = s.grids[w.cloth];
      uint32_t* ck = s.keys.data() + sc.firstItem;
      uint32_t* ci = s.items.data() + sc.firstItem;
      if (simd) {
        const bool all = wholeCloth(w.cloth);
        cpu::selfCellKeysSimd(all ? in.particles.data() + in.cloths[w.cloth].first + w.begin : in.particles.data(),
                              in.particles.size(), all ? nullptr : L.itemParticles.data() + sc.firstItem + w.begin,
                              w.end - w.begin, g, ck + w.begin, impliedItems(w.cloth) ? nullptr : ci + w.begin,
                              sc.firstItem + w.begin);
      } else {
        for (uint32_t i = w.begin; i < w.end; ++i) {
          const Float4& p = in.particles[particleOfItem(w.cloth, sc.firstItem + i)];
          ck[i] = gpu::selfCellKey(g, {p.x, p.y, p.z});
        }
        std::iota(ci + w.begin, ci + w.end, sc.firstItem + w.begin);
      }
    }
  });
  // Stable: equal keys keep the item order. Both backends give the one stable order (the SIMD
  // backend's sort uses the keys' layout, see selfSortByKey).
  // The SIMD sort's tables of column starts, per cloth (where its counting sort ran), for the sweep.
  thread_local std::vector<cpu::SelfColumnStarts> startsStore;
  thread_local std::vector<uint8_t> haveStartsStore;
  std::vector<cpu::SelfColumnStarts>& starts = startsStore;
  std::vector<uint8_t>& haveStarts = haveStartsStore;
  if (simd) {
    if (starts.size() < clothCount) starts.resize(clothCount);
    haveStarts.assign(clothCount, 0);
  }
  auto sortCloth = [&](uint32_t c) {
    const gpu::SelfCloth& sc = L.cloths[c];
    uint32_t* ck = s.keys.data() + sc.firstItem;
    uint32_t* ci = s.items.data() + sc.firstItem;
    if (simd) {
      const uint32_t top = topKey(c);
      const std::optional<uint32_t> firstItem =
          impliedItems(c) ? std::optional<uint32_t>(sc.firstItem) : std::nullopt;
      if (sc.itemCount >= cpu::kSelfSortLargeMin) {  // (one thread here: large cloths on several are below)
        detail::ParallelCall here(nullptr, "collideSelfCpu");
        cpu::selfSortLarge(here, ck, ci, sc.itemCount, top, firstItem);
        return;
      }
      const bool counted =
          cpu::selfSortByKey(ck, ci, sc.itemCount, (top >> 16) & 0xFFu, top >> 24, &starts[c], firstItem);
      haveStarts[c] = counted ? 1 : 0;
    } else {
      cpu::radixSortScalar(ck, ci, sc.itemCount, 32);
    }
  };
  par.forEach(whole.tasks(), [&](uint32_t t) {
    for (const detail::WorkPiece& w : whole.task(t)) {
      if (!large(w.cloth)) sortCloth(w.cloth);
    }
  });
  for (uint32_t c = 0; c < clothCount; ++c) {
    if (!large(c)) continue;
    const gpu::SelfCloth& sc = L.cloths[c];
    if (simd && sc.itemCount >= cpu::kSelfSortLargeMin) {
      cpu::selfSortLarge(par, s.keys.data() + sc.firstItem, s.items.data() + sc.firstItem, sc.itemCount, topKey(c),
                         impliedItems(c) ? std::optional<uint32_t>(sc.firstItem) : std::nullopt);
    } else {
      cpu::radixSortParallel(par, s.keys.data() + sc.firstItem, s.items.data() + sc.firstItem, sc.itemCount, 32, simd);
    }
  }
  // (The SIMD backend keeps no vec4 copies: the particles as x, y, z, w, the rest positions as rx,
  // ry, rz.)
  if (simd) {
    s.w.resize(n);
  } else {
    s.pos.resize(n);
    if (useRest) s.rest.resize(n);
  }
  if (simd) {
    constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
    auto pad = [&](std::vector<float>& v) {
      v.resize(n + cpu::kSelfSimdPad);
      std::fill(v.begin() + static_cast<std::ptrdiff_t>(n), v.end(), kNaN);
    };
    for (auto* v : {&s.x, &s.y, &s.z}) pad(*v);
    if (useRest) for (auto* v : {&s.rx, &s.ry, &s.rz}) pad(*v);
  }
  // Each slot's particle (and rest position) in sorted order. A cloth without a subset maps items to
  // particles by an offset (one dependent load less per slot than through itemParticles).
  auto gatherSlots = [&](uint32_t first, uint32_t end, auto particleOf) {
    for (uint32_t k = first; k < end; ++k) {
      const uint32_t particle = particleOf(s.items[k]);
      const Float4& p = in.particles[particle];
      if (simd) {
        s.x[k] = p.x, s.y[k] = p.y, s.z[k] = p.z, s.w[k] = p.w;
      } else {
        s.pos[k] = {p.x, p.y, p.z, p.w};
      }
      if (useRest) {
        const Float4& r = in.restPositions[particle];
        if (simd) {
          s.rx[k] = r.x, s.ry[k] = r.y, s.rz[k] = r.z;
        } else {
          s.rest[k] = {r.x, r.y, r.z, r.w};
        }
      }
    }
  };
  std::vector<uint8_t> restNonFinite(useRest ? fine.tasks() : 0u, 0);  // per task, where restCheckedByCopy
  par.forEach(fine.tasks(), [&](uint32_t t) {
    for (const detail::WorkPiece& w : fine.task(t)) {
      const gpu::SelfCloth& sc = L.cloths[w.cloth];
      const uint32_t first = sc.firstItem + w.begin, end = sc.firstItem + w.end;
      if (wholeCloth(w.cloth)) {
        const uint32_t offset = in.cloths[w.cloth].first - sc.firstItem;  // (mod 2^32)
        if (simd) {
          cpu::selfCopySlotsSimd(in.particles.data(), s.items.data() + first, offset, end - first, s.x.data() + first,
                                 s.y.data() + first, s.z.data() + first, s.w.data() + first);
          if (useRest &&  // (the rest positions the same way)
              cpu::selfCopySlotsSimd(in.restPositions.data(), s.items.data() + first, offset, end - first,
                                     s.rx.data() + first, s.ry.data() + first, s.rz.data() + first, nullptr,
                                     true)) {
            restNonFinite[t] = 1;
          }
          continue;
        }
        gatherSlots(first, end, [&](uint32_t item) { return item + offset; });
      } else {
        gatherSlots(first, end, [&](uint32_t item) { return L.itemParticles[item]; });
      }
    }
  });

  // (Nothing has been written to the particles yet: validateSelfRest names the first bad one.)
  if (restCheckedByCopy && std::find(restNonFinite.begin(), restNonFinite.end(), uint8_t{1}) != restNonFinite.end()) {
    VKC_TRY(detail::validateSelfRest(in));
  }

  // The gather, per cloth (SIMD: whole cloths, large ones chunked by selfSweepSimdParallel; scalar:
  // per slot, in chunks). Each task lists its pairs apart (debug), concatenated in order.
  thread_local std::vector<uint32_t> countStore;
  thread_local std::vector<gpu::vec3> sumStore;
  std::vector<uint32_t>& counts = countStore;
  std::vector<gpu::vec3>& sums = sumStore;
  counts.resize(n);  // written for every slot of every cloth
  sums.resize(n);    // read only where a count is set
  const bool wantPairs = debug != nullptr;
  std::vector<std::array<uint32_t, 2>> slotPairs;
  if (simd) {
    std::vector<std::vector<std::array<uint32_t, 2>>> taskPairs(wantPairs ? whole.tasks() : 0u);
    par.forEach(whole.tasks(), [&](uint32_t t) {
      for (const detail::WorkPiece& w : whole.task(t)) {
        if (large(w.cloth)) continue;
        const gpu::SelfCloth& sc = L.cloths[w.cloth];
        cpu::selfSweepSimd(s, sc.firstItem, sc.firstItem + sc.itemCount, s.grids[w.cloth], d, stiffness, useRest,
                           counts.data(), sums.data(), wantPairs ? &taskPairs[t] : nullptr, nullptr,
                           haveStarts[w.cloth] != 0 ? &starts[w.cloth] : nullptr);
      }
    });
    // (The order of the pairs does not matter: debug sorts them.)
    for (const auto& tp : taskPairs) slotPairs.insert(slotPairs.end(), tp.begin(), tp.end());
    for (uint32_t c = 0; c < clothCount; ++c) {
      if (!large(c)) continue;
      const gpu::SelfCloth& sc = L.cloths[c];
      cpu::selfSweepSimdParallel(par, s, sc.firstItem, sc.firstItem + sc.itemCount, s.grids[c], d, stiffness, useRest,
                                 counts.data(), sums.data(), wantPairs ? &slotPairs : nullptr);
    }
  } else {
    std::vector<std::vector<std::array<uint32_t, 2>>> taskPairs(wantPairs ? chunks.tasks() : 0u);
    par.forEach(chunks.tasks(), [&](uint32_t t) {
      std::vector<uint32_t> sink;
      for (const detail::WorkPiece& w : chunks.task(t)) {
        const gpu::SelfCloth& sc = L.cloths[w.cloth];
        const uint32_t begin = sc.firstItem, end = sc.firstItem + sc.itemCount;
        gpu::SelfKernel kernel{s.keys.data(), s.pos.data(), useRest ? s.rest.data() : nullptr, &sink};
        for (uint32_t k = begin + w.begin; k < begin + w.end; ++k) {
          sink.clear();
          counts[k] = kernel.selfGather(k, begin, end, s.grids[w.cloth], d, stiffness, useRest, wantPairs, 0u, sums[k]);
          if (wantPairs) for (const uint32_t m : sink) taskPairs[t].push_back({k, m});
        }
      }
    });
    for (const auto& tp : taskPairs) slotPairs.insert(slotPairs.end(), tp.begin(), tp.end());
  }
  // Write back, by the slot copy's finer chunks of slots (each slot is one particle: disjoint
  // writes). Its random writes vary in cost like the copy's reads, and where one thread runs slower
  // than the other (a virtual machine's second core) 4 tasks per thread left it up to a task behind:
  // modelled with the second thread at 53% speed, 1M crumpled cloth's write-back 13.7 ms against an
  // ideal 12.7.
  // The slots with neighbours are few (a draped 64 x 64 cloth: 67 of 4 096), so they are listed by
  // vectors of counts first (a scalar test of every count was 5% of that cloth's call).
  par.forEach(fine.tasks(), [&](uint32_t t) {
    constexpr uint32_t kBatch = 256;
    uint32_t counted[kBatch];
    for (const detail::WorkPiece& w : fine.task(t)) {
      const uint32_t first = L.cloths[w.cloth].firstItem, end = first + w.end;
      for (uint32_t batch = first + w.begin; batch < end; batch += kBatch) {
        const uint32_t m =
            cpu::selfCountedSlotsSimd(counts.data() + batch, std::min(kBatch, end - batch), counted);
        for (uint32_t j = 0; j < m; ++j) {
          const uint32_t k = batch + counted[j];
          const gpu::vec4 p = gpu::selfApply(simd ? s.particle(k) : s.pos[k], sums[k], counts[k]);
          Float4& out = in.particles[particleOfItem(w.cloth, s.items[k])];
          out.x = p.x, out.y = p.y, out.z = p.z;
        }
      }
    }
  });

  if (debug != nullptr) {
    debug->sortedKeys.assign(s.keys.begin(), s.keys.begin() + static_cast<std::ptrdiff_t>(n));
    debug->sortedParticles.resize(n);
    for (uint32_t c = 0; c < clothCount; ++c) {
      const gpu::SelfCloth& sc = L.cloths[c];
      for (uint32_t k = sc.firstItem; k < sc.firstItem + sc.itemCount; ++k) debug->sortedParticles[k] = particleOfItem(c, s.items[k]);
    }
    debug->clothFirstItem.clear();
    for (const gpu::SelfCloth& sc : L.cloths) debug->clothFirstItem.push_back(sc.firstItem);
    debug->neighbourCounts.assign(in.particles.size(), 0);
    for (size_t k = 0; k < n; ++k) debug->neighbourCounts[debug->sortedParticles[k]] = counts[k];
    debug->directedPairs = slotPairs.size();
    debug->pairs.clear();
    for (const auto& [k, m] : slotPairs) {
      const uint32_t i = debug->sortedParticles[k], j = debug->sortedParticles[m];
      debug->pairs.push_back({std::min(i, j), std::max(i, j)});
    }
    std::sort(debug->pairs.begin(), debug->pairs.end());
    debug->pairs.erase(std::unique(debug->pairs.begin(), debug->pairs.end()), debug->pairs.end());
  }
  return par.status();
}

}  // namespace

Status collideSelfCpu(const SelfCollisionInput& in, Backend backend, SelfCollisionDebug* debug) {
  detail::ParallelCall par(nullptr, "collideSelfCpu");
  return collideSelfOn(par, in, backend, debug);
}

Status collideSelfCpu(const SelfCollisionInput& in, Backend backend, const CpuExecutor& executor,
                      SelfCollisionDebug* debug) {
  detail::ParallelCall par(&executor, "collideSelfCpu");
  return collideSelfOn(par, in, backend, debug);
}

}  // namespace vkc
