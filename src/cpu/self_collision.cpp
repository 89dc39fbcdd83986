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

#include "cpu/bounds.h"
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

Status collideSelfCpu(const SelfCollisionInput& in, Backend backend, SelfCollisionDebug* debug) {
  if (backend == Backend::kVulkan) {
    return Error{ErrorCode::kInvalidArgument, "collideSelfCpu: backend must be kCpuScalar or kCpuSimd"};
  }
  // validate(in), with its particle scan left to the bounds reduction (which checks the particles
  // through its keys anyway); on a bad particle validate(in) names it as the self-collision input.
  VKC_TRY(detail::validateSelfInputLayout(in));
  std::vector<Aabb> bounds(in.cloths.size());
  if (const Status st = computeBoundsCpu({in.particles, {}, in.cloths, false, bounds}, backend); !st) {
    VKC_TRY(validate(in));
    return st;
  }
  VKC_TRY(detail::validateSelfRest(in));
  const detail::SelfLayout L = detail::makeSelfLayout(in.cloths, in.subsets);
  const float d = in.settings.distance, stiffness = in.settings.stiffness;
  const bool useRest = !in.restPositions.empty();
  const size_t n = L.itemParticles.size();
  // A cloth without a subset: its items are its particles in order (item i: particle first + i).
  auto wholeCloth = [&](size_t c) { return in.subsets.empty() || in.subsets[c].empty(); };

  // Keys, then the stable sort of each cloth's (key, item).
  // Per-thread scratch kept between calls (a solver calls this every iteration): no fresh pages and
  // no zeroing; every slot below n is written before it is read.
  thread_local cpu::SelfSorted s;
  s.grids.resize(in.cloths.size());
  s.keys.resize(n);
  s.items.resize(n);
  for (size_t c = 0; c < in.cloths.size(); ++c) {
    const Aabb& b = bounds[c];
    const gpu::SelfGrid g = gpu::makeSelfGrid({b.lo.x, b.lo.y, b.lo.z}, {b.hi.x, b.hi.y, b.hi.z}, d);
    s.grids[c] = g;
    const gpu::SelfCloth& sc = L.cloths[c];
    // The cloth's slots, sorted in place.
    const std::span<uint32_t> ck(s.keys.data() + sc.firstItem, sc.itemCount);
    const std::span<uint32_t> ci(s.items.data() + sc.firstItem, sc.itemCount);
    if (backend == Backend::kCpuSimd) {
      const bool whole = wholeCloth(c);
      cpu::selfCellKeysSimd(whole ? in.particles.data() + in.cloths[c].first : in.particles.data(),
                            in.particles.size(), whole ? nullptr : L.itemParticles.data() + sc.firstItem,
                            sc.itemCount, g, ck.data());
    }
    for (uint32_t i = 0; i < sc.itemCount; ++i) {
      if (backend != Backend::kCpuSimd) {
        const Float4& p = in.particles[L.itemParticles[sc.firstItem + i]];
        ck[i] = gpu::selfCellKey(g, {p.x, p.y, p.z});
      }
      ci[i] = sc.firstItem + i;
    }
    // Stable: equal keys keep the item order. Both backends give the one stable order (the SIMD
    // backend's sort uses the keys' layout, see selfSortByKey).
    if (backend == Backend::kCpuSimd) {
      // The hash cells of the box's upper corner bound the cloth's (cells grow with the coordinates).
      const uint32_t top = gpu::selfCellKey(g, {b.hi.x, b.hi.y, b.hi.z});
      cpu::selfSortByKey(ck.data(), ci.data(), sc.itemCount, (top >> 16) & 0xFFu, top >> 24);
    } else {
      VKC_TRY(radixSortCpu({ck, ci, 32}, backend));
    }
  }
  const bool simd = backend == Backend::kCpuSimd;
  s.pos.resize(n);
  if (useRest) s.rest.resize(n);
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
      s.pos[k] = {p.x, p.y, p.z, p.w};
      if (simd) s.x[k] = p.x, s.y[k] = p.y, s.z[k] = p.z;
      if (useRest) {
        const Float4& r = in.restPositions[particle];
        s.rest[k] = {r.x, r.y, r.z, r.w};
        if (simd) s.rx[k] = r.x, s.ry[k] = r.y, s.rz[k] = r.z;
      }
    }
  };
  for (size_t c = 0; c < in.cloths.size(); ++c) {
    const gpu::SelfCloth& sc = L.cloths[c];
    if (wholeCloth(c)) {
      const uint32_t offset = in.cloths[c].first - sc.firstItem;  // (mod 2^32)
      gatherSlots(sc.firstItem, sc.firstItem + sc.itemCount, [&](uint32_t item) { return item + offset; });
    } else {
      gatherSlots(sc.firstItem, sc.firstItem + sc.itemCount, [&](uint32_t item) { return L.itemParticles[item]; });
    }
  }

  // The gather, per cloth.
  thread_local std::vector<uint32_t> counts;
  thread_local std::vector<gpu::vec3> sums;
  counts.resize(n);  // written for every slot of every cloth
  sums.resize(n);    // read only where a count is set
  std::vector<std::array<uint32_t, 2>> slotPairs;
  std::vector<uint32_t> sink;
  for (size_t c = 0; c < in.cloths.size(); ++c) {
    const gpu::SelfCloth& sc = L.cloths[c];
    const uint32_t begin = sc.firstItem, end = sc.firstItem + sc.itemCount;
    if (simd) {
      cpu::selfSweepSimd(s, begin, end, s.grids[c], d, stiffness, useRest, counts.data(), sums.data(),
                         debug != nullptr ? &slotPairs : nullptr);
      continue;
    }
    gpu::SelfKernel kernel{s.keys.data(), s.pos.data(), useRest ? s.rest.data() : nullptr, &sink};
    for (uint32_t k = begin; k < end; ++k) {
      sink.clear();
      counts[k] = kernel.selfGather(k, begin, end, s.grids[c], d, stiffness, useRest, debug != nullptr, 0u, sums[k]);
      for (const uint32_t m : sink) slotPairs.push_back({k, m});
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (counts[k] == 0) continue;
    const gpu::vec4 p = gpu::selfApply(s.pos[k], sums[k], counts[k]);
    Float4& out = in.particles[L.itemParticles[s.items[k]]];
    out.x = p.x, out.y = p.y, out.z = p.z;
  }

  if (debug != nullptr) {
    debug->sortedKeys = s.keys;
    debug->sortedParticles.resize(n);
    for (size_t k = 0; k < n; ++k) debug->sortedParticles[k] = L.itemParticles[s.items[k]];
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
  return {};
}

}  // namespace vkc
