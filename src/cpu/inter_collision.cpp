// The CPU twin of shaders/inter_collision.comp: the same passes in the same order with the same
// arithmetic (shaders/shared/inter_collision.h), so that integer results (pairs, marked particles,
// contact counts) are equal and positions round alike. The SIMD backend runs the SIMD bounds and radix
// sort and self collision's SIMD sweep (cpu::selfSweepSimd with a cross-cloth filter) instead of the
// shader's binary-search gather; it finds the same pairs in the same order, so results are bitwise
// equal. Broad phase and marking are the same scalar code on both.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "cpu/bounds.h"
#include "cpu/executor.h"
#include "cpu/radix_sort.h"
#include "cpu/self_collision.h"
#include "scene/inter_collision.h"
#include "shared/inter_collision.h"
#include "util/try.h"
#include "vkcollide/bounds.h"
#include "vkcollide/inter_collision.h"
#include "vkcollide/radix_sort.h"

namespace vkc::gpu {
namespace {

// The shared gather kernels' accessors over host arrays; their functions become members.
struct InterKernel {
  const uint32_t* keys;
  const uint32_t* values;
  const InterMarked* marked;

  uint sortedKey(uint slot) const { return keys[slot]; }
  uint sortedValue(uint slot) const { return values[slot]; }
  InterMarked markedAt(uint index) const { return marked[index]; }
  vec4 sortedPos(uint slot) const { return marked[values[slot]].position; }
  vec4 sortedRest(uint /*slot*/) const { return vec4(0.0f); }
  void emitPair(uint /*index*/, uint /*slot*/) const {}

#include "shared/inter_collision_kernel.h"
};

}  // namespace
}  // namespace vkc::gpu

namespace vkc {
namespace {

using gpu::vec3;
using gpu::vec4;

constexpr float kInf = std::numeric_limits<float>::infinity();

vec3 v3(const vec4& v) { return vec3(v.x, v.y, v.z); }
float comp(const vec4& v, uint32_t axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }

struct Broad {
  std::vector<gpu::InterClothWorld> world;
  std::vector<uint32_t> partners;
  gpu::InterState state{};
};

// The broad phase, as the single workgroup of kInterPassBroad does it.
void broadPhase(const std::vector<gpu::InterCloth>& cloths, std::span<const Aabb> localBoxes, float distance,
                Broad& out) {
  const size_t n = cloths.size();
  out.world.assign(n, gpu::InterClothWorld{});
  out.partners.clear();
  gpu::InterState& st = out.state;
  st = gpu::InterState{};
  st.gridLo = vec4(kInf, kInf, kInf, 0.0f);
  st.gridHi = vec4(-kInf, -kInf, -kInf, 0.0f);
  st.grid = gpu::makeSelfGrid(vec3(kInf), vec3(-kInf), distance);
  st.axis = gpu::kInterNoAxis;

  vec4 ulo(kInf, kInf, kInf, 0.0f), uhi(-kInf, -kInf, -kInf, 0.0f);
  size_t nonEmpty = 0;
  for (size_t c = 0; c < n; ++c) {
    gpu::InterClothWorld& w = out.world[c];
    vec3 c0, c1, c2;
    gpu::interRotationColumns(cloths[c].rotation, c0, c1, c2);
    w.col0 = vec4(c0, 0.0f);
    w.col1 = vec4(c1, 0.0f);
    w.col2 = vec4(c2, 0.0f);
    w.sortedRank = 0xFFFFFFFFu;
    const Aabb& lb = localBoxes[c];
    if (lb.empty()) {
      w.boxLo = vec4(kInf, kInf, kInf, 0.0f);
      w.boxHi = vec4(-kInf, -kInf, -kInf, 0.0f);
      continue;
    }
    vec3 lo, hi;
    gpu::interWorldBox(c0, c1, c2, v3(cloths[c].translation), vec3(lb.lo.x, lb.lo.y, lb.lo.z),
                       vec3(lb.hi.x, lb.hi.y, lb.hi.z), distance, lo, hi);
    w.boxLo = vec4(lo, 0.0f);
    w.boxHi = vec4(hi, 0.0f);
    ulo = gpu::min(ulo, w.boxLo);
    uhi = gpu::max(uhi, w.boxHi);
    ++nonEmpty;
  }
  if (nonEmpty == 0) return;
  const uint32_t axis = gpu::interSweepAxis(v3(ulo), v3(uhi));
  st.axis = axis;

  std::vector<uint32_t> sorted(nonEmpty);
  for (size_t c = 0; c < n; ++c) {
    gpu::InterClothWorld& w = out.world[c];
    if (w.boxLo.x > w.boxHi.x) continue;
    const float key = comp(w.boxLo, axis);
    uint32_t rank = 0;
    for (size_t j = 0; j < n; ++j) {
      const gpu::InterClothWorld& o = out.world[j];
      if (o.boxLo.x > o.boxHi.x) continue;
      const float k = comp(o.boxLo, axis);
      if (k < key || (k == key && j < c)) ++rank;
    }
    w.sortedRank = rank;
    sorted[rank] = static_cast<uint32_t>(c);
  }
  std::vector<float> prefixMaxHi(nonEmpty);
  for (size_t r = 0; r < nonEmpty; ++r) {
    const float h = comp(out.world[sorted[r]].boxHi, axis);
    prefixMaxHi[r] = r == 0 ? h : std::max(prefixMaxHi[r - 1], h);
  }

  // Partners of cloth c: backward in sweep order while some earlier box may still reach c's start
  // (prefix max of upper bounds), then forward until a box starts beyond c's end.
  auto scan = [&](uint32_t c, auto&& emit) {
    const gpu::InterClothWorld& a = out.world[c];
    const uint32_t r = a.sortedRank;
    const float lo = comp(a.boxLo, axis), hi = comp(a.boxHi, axis);
    auto consider = [&](uint32_t b) {
      const gpu::InterClothWorld& o = out.world[b];
      if (!gpu::interBoxesOverlap(v3(a.boxLo), v3(a.boxHi), v3(o.boxLo), v3(o.boxHi))) return;
      if (!gpu::interFilterAllows(cloths[c].group, cloths[c].mask, cloths[b].group, cloths[b].mask)) return;
      emit(b);
    };
    for (uint32_t k = r; k-- > 0;) {
      if (prefixMaxHi[k] < lo) break;
      consider(sorted[k]);
    }
    for (uint32_t k = r + 1; k < nonEmpty; ++k) {
      if (comp(out.world[sorted[k]].boxLo, axis) > hi) break;
      consider(sorted[k]);
    }
  };
  uint32_t offset = 0;
  for (size_t c = 0; c < n; ++c) {
    gpu::InterClothWorld& w = out.world[c];
    w.partnerOffset = offset;
    w.partnerCount = 0;
    if (w.sortedRank == 0xFFFFFFFFu) continue;
    scan(static_cast<uint32_t>(c), [&](uint32_t b) {
      out.partners.push_back(b);
      ++w.partnerCount;
      const gpu::InterClothWorld& o = out.world[b];
      st.gridLo = gpu::min(st.gridLo, gpu::max(w.boxLo, o.boxLo));
      st.gridHi = gpu::max(st.gridHi, gpu::min(w.boxHi, o.boxHi));
    });
    offset += w.partnerCount;
  }
  st.pairSlots = offset;
  if (offset > 0) st.grid = gpu::makeSelfGrid(v3(st.gridLo), v3(st.gridHi), distance);
}

bool isMarked(const Broad& broad, uint32_t c, vec3 p) {
  const gpu::InterClothWorld& w = broad.world[c];
  for (uint32_t k = 0; k < w.partnerCount; ++k) {
    const gpu::InterClothWorld& o = broad.world[broad.partners[w.partnerOffset + k]];
    if (gpu::interInside(p, v3(gpu::max(w.boxLo, o.boxLo)), v3(gpu::min(w.boxHi, o.boxHi)))) return true;
  }
  return false;
}

}  // namespace

namespace {

// One step on par's threads: bounds, marking (chunks of each cloth's particles, concatenated in scene
// order), and per narrow-phase iteration the keys, the sort (cpu::radixSortParallel), the sweep or
// gather (cpu::selfSweepSimdParallel, or the shader's gather by chunks of slots) and the moves, in
// chunks. The broad phase (per cloth pair) stays on the calling thread. Every value is the one a
// single thread computes: bitwise equal results.
Status collideInterOn(detail::ParallelCall& par, const InterCollisionInput& input, Backend backend,
                      InterCollisionDebug* debug) {
  if (backend != Backend::kCpuScalar && backend != Backend::kCpuSimd) {
    return Error{ErrorCode::kInvalidArgument, "collideInterCpu: backend must be kCpuScalar or kCpuSimd"};
  }
  VKC_TRY(validate(input));
  const InterCollisionSettings& set = input.settings;
  std::vector<gpu::InterCloth> cloths;
  detail::makeInterClothTable(input.cloths, input.filters, cloths);
  const std::vector<ClothRange> ranges = detail::interClothRanges(input.cloths);

  // 1. Local bounds (the bounds stage).
  std::vector<Aabb> local(ranges.size());
  BoundsInput bi;
  bi.particles = input.particles;
  bi.cloths = ranges;
  bi.boxes = local;
  VKC_TRY(cpu::computeBoundsOn(par, bi, backend));

  // 2. Broad phase.
  Broad broad;
  broadPhase(cloths, local, set.distance, broad);

  // 3. Marking, cloth by cloth in table order (the GPU's tile order): pieces of the cloths that have
  // partners, each marked apart, then concatenated in order.
  const uint32_t clothCount = static_cast<uint32_t>(cloths.size());
  auto markedCount = [&](uint32_t c) { return broad.world[c].partnerCount == 0 ? 0u : cloths[c].count; };
  const detail::WorkPlan marking = par.plan(clothCount, markedCount);
  std::vector<std::vector<gpu::InterMarked>> pieceMarked(marking.pieces.size());
  par.forEach(marking.tasks(), [&](uint32_t t) {
    for (uint32_t pi = marking.taskFirst[t]; pi < marking.taskFirst[t + 1]; ++pi) {
      const detail::WorkPiece& piece = marking.pieces[pi];
      const uint32_t c = piece.cloth;
      const gpu::InterClothWorld& w = broad.world[c];
      for (uint32_t k = piece.begin; k < piece.end; ++k) {
        const uint32_t i = cloths[c].first + k;
        const Float4& p = input.particles[i];
        const vec3 wp = gpu::interToWorld(v3(w.col0), v3(w.col1), v3(w.col2), v3(cloths[c].translation), vec3(p.x, p.y, p.z));
        if (!isMarked(broad, c, wp)) continue;
        pieceMarked[pi].push_back(gpu::InterMarked{vec4(wp, p.w), c, i, cloths[c].group, cloths[c].mask});
      }
    }
  });
  std::vector<gpu::InterMarked> marked;
  if (pieceMarked.size() == 1) {
    marked = std::move(pieceMarked[0]);
  } else {
    size_t total = 0;
    for (const auto& pm : pieceMarked) total += pm.size();
    marked.reserve(total);
    for (const auto& pm : pieceMarked) marked.insert(marked.end(), pm.begin(), pm.end());
  }

  // 4. Narrow phase, `iterations` times: self collision's keys, the radix sort (stable: equal keys keep
  // the marked order), the gather per sorted slot (Jacobi: positions from the pass's start), apply.
  const size_t m = marked.size();
  const uint32_t mm = static_cast<uint32_t>(m);
  // Chunks of the marked particles (and of the sorted slots).
  const detail::WorkPlan slots = par.plan(1, [&](uint32_t) { return mm; });
  auto forSlots = [&](auto&& f) {  // f(begin, end) over chunks of [0, m)
    par.forEach(slots.tasks(), [&](uint32_t t) {
      for (const detail::WorkPiece& w : slots.task(t)) f(w.begin, w.end);
    });
  };
  std::vector<uint32_t> keys(m), values(m), contacts(m, 0);
  std::vector<vec4> next(m), total(m, vec4(0.0f));
  const gpu::SelfGrid grid = broad.state.grid;
  cpu::SelfSorted sorted;  // SIMD backend
  std::vector<uint32_t> counts(m), slotCloth(m), slotGroup(m), slotMask(m);
  std::vector<vec3> sums(m);
  if (backend == Backend::kCpuSimd && m > 0) {
    sorted.keys.resize(m);
    sorted.items.resize(m);
    sorted.w.resize(m);
    constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
    for (auto* v : {&sorted.x, &sorted.y, &sorted.z}) {
      v->resize(m + cpu::kSelfSimdPad);  // every slot below m is written before each sweep
      std::fill(v->begin() + static_cast<std::ptrdiff_t>(m), v->end(), kNaN);
    }
  }
  for (uint32_t it = 0; it < set.iterations && m > 0; ++it) {
    forSlots([&](uint32_t b, uint32_t e) {
      for (uint32_t i = b; i < e; ++i) {
        keys[i] = gpu::selfCellKey(grid, v3(marked[i].position));
        values[i] = i;
      }
    });
    cpu::radixSortParallel(par, keys.data(), values.data(), m, gpu::kInterKeyBits, backend == Backend::kCpuSimd);
    if (backend == Backend::kCpuScalar) {
      // The shader's gather: binary search per column.
      gpu::InterKernel kernel{keys.data(), values.data(), marked.data()};
      forSlots([&](uint32_t b, uint32_t e) {
        for (uint32_t k = b; k < e; ++k) {
          const uint32_t i = values[k];
          vec3 sum;
          const uint32_t n = kernel.interGather(k, mm, grid, set.distance, set.stiffness, sum);
          next[i] = n > 0 ? gpu::selfApply(marked[i].position, sum, n) : marked[i].position;
          if (it == 0) contacts[i] = n;
        }
      });
    } else {
      // Self collision's SIMD sweep (running column pointers, vector distance tests) over all marked
      // particles as one run of slots, with the cross-cloth filter: the same pairs in the same order.
      forSlots([&](uint32_t b, uint32_t e) {
        std::copy(keys.begin() + b, keys.begin() + e, sorted.keys.begin() + b);
        std::copy(values.begin() + b, values.begin() + e, sorted.items.begin() + b);
        for (uint32_t k = b; k < e; ++k) {
          const gpu::InterMarked& a = marked[values[k]];
          sorted.x[k] = a.position.x;
          sorted.y[k] = a.position.y;
          sorted.z[k] = a.position.z;
          sorted.w[k] = a.position.w;
          slotCloth[k] = a.cloth;
          slotGroup[k] = a.group;
          slotMask[k] = a.mask;
        }
      });
      const cpu::SelfPairFilter filter{slotCloth.data(), slotGroup.data(), slotMask.data()};
      cpu::selfSweepSimdParallel(par, sorted, 0, mm, grid, set.distance, set.stiffness, false, counts.data(),
                                 sums.data(), nullptr, &filter);
      forSlots([&](uint32_t b, uint32_t e) {
        for (uint32_t k = b; k < e; ++k) {
          const uint32_t i = values[k];
          next[i] = counts[k] > 0 ? gpu::selfApply(marked[i].position, sums[k], counts[k]) : marked[i].position;
          if (it == 0) contacts[i] = counts[k];
        }
      });
    }
    forSlots([&](uint32_t b, uint32_t e) {
      for (size_t i = b; i < e; ++i) {
        const vec3 step = v3(next[i]) - v3(marked[i].position);
        total[i] = total[i] + vec4(step, 0.0f);
        marked[i].position = next[i];
      }
    });
  }

  // 5. Back to local space, in place (nothing above writes the particles, so an error leaves them
  // unchanged); untouched particles keep their bits.
  forSlots([&](uint32_t b, uint32_t e) {
    for (size_t i = b; i < e; ++i) {
      const vec4 t = total[i];
      if (t.x == 0.0f && t.y == 0.0f && t.z == 0.0f) continue;
      const gpu::InterClothWorld& w = broad.world[marked[i].cloth];
      const vec3 d = gpu::interRotateBack(v3(w.col0), v3(w.col1), v3(w.col2), v3(t));
      Float4& p = input.particles[marked[i].particle];
      p.x = p.x + d.x;
      p.y = p.y + d.y;
      p.z = p.z + d.z;
    }
  });
  VKC_TRY(par.status());

  if (debug != nullptr) {
    InterCollisionDebug r;
    for (uint32_t c = 0; c < cloths.size(); ++c) {
      const gpu::InterClothWorld& w = broad.world[c];
      for (uint32_t k = 0; k < w.partnerCount; ++k) {
        const uint32_t b = broad.partners[w.partnerOffset + k];
        if (c < b) r.clothPairs.push_back({c, b});
      }
    }
    std::sort(r.clothPairs.begin(), r.clothPairs.end());
    r.contacts.assign(input.particles.size(), 0);
    for (size_t i = 0; i < m; ++i) {
      r.marked.push_back(marked[i].particle);
      r.contacts[marked[i].particle] = contacts[i];
    }
    std::sort(r.marked.begin(), r.marked.end());
    r.gridBounds.lo = Float4{broad.state.gridLo.x, broad.state.gridLo.y, broad.state.gridLo.z, 0.0f};
    r.gridBounds.hi = Float4{broad.state.gridHi.x, broad.state.gridHi.y, broad.state.gridHi.z, 0.0f};
    *debug = std::move(r);
  }
  return {};
}

}  // namespace

Status collideInterCpu(const InterCollisionInput& input, Backend backend, InterCollisionDebug* debug) {
  detail::ParallelCall par(nullptr, "collideInterCpu");
  return collideInterOn(par, input, backend, debug);
}

Status collideInterCpu(const InterCollisionInput& input, Backend backend, const CpuExecutor& executor,
                       InterCollisionDebug* debug) {
  detail::ParallelCall par(&executor, "collideInterCpu");
  return collideInterOn(par, input, backend, debug);
}

}  // namespace vkc
