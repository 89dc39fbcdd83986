// The CPU twin of shape collision. The arithmetic is the shaders' own: the shared
// headers collide_shapes_math.h (functions) and collide_shapes_kernel.h (the per-particle and
// per-mask-word logic, included into ShapeKernel below) are compiled here as C++ with GLM.
#include "cpu/collide_shapes.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "cpu/bounds.h"
#include "cpu/executor.h"
#include "scene/validate.h"
#include "shared/collide_shapes_math.h"
#include "shared/float_order.h"
#include "util/try.h"
#include "vkcollide/bounds.h"

namespace vkc::gpu {
namespace {

// The kernel's accessors over host arrays; the kernel's functions become members.
struct ShapeKernel {
  const vec4* spheres;
  const Cone* cones;
  const vec4* planes;
  const CapsuleSpheres* capsuleTable;
  const ShapeConvex* convexes;
  const uint32_t* convexPlanes;
  const uint32_t* convexBits;
  const uint32_t* masks;
  const uint32_t* csr;
  uint32_t sphereTotal;
  uint32_t capsuleTotal;
  uint32_t planeTotal;

  vec4 preparedSphere(uint sphere, uint atEnd) const { return spheres[atEnd * sphereTotal + sphere]; }
  Cone preparedCone(uint capsule, uint atEnd) const { return cones[atEnd * capsuleTotal + capsule]; }
  vec4 preparedPlane(uint plane, uint atEnd) const { return planes[atEnd * planeTotal + plane]; }
  CapsuleSpheres capsuleSpheres(uint capsule) const { return capsuleTable[capsule]; }
  ShapeConvex convexAt(uint convex) const { return convexes[convex]; }
  uint convexPlane(uint index) const { return convexPlanes[index]; }
  uint convexBit(uint index) const { return convexBits[index]; }
  uint gridMask(uint index) const { return masks[index]; }
  uint sphereCapsule(uint index) const { return csr[index]; }

#include "shared/collide_shapes_kernel.h"
};

}  // namespace
}  // namespace vkc::gpu

namespace vkc::cpu {
namespace {

gpu::ShapeKernel kernelFor(const ShapesState& s) {
  return gpu::ShapeKernel{.spheres = s.spheres.data(),
                          .cones = s.cones.data(),
                          .planes = s.planes.data(),
                          .capsuleTable = s.layout.capsules.data(),
                          .convexes = s.layout.convexes.data(),
                          .convexPlanes = s.layout.convexPlanes.data(),
                          .convexBits = s.convexBits.data(),
                          .masks = s.masks.data(),
                          .csr = s.layout.sphereCapsules.data(),
                          .sphereTotal = s.layout.sphereCount,
                          .capsuleTotal = s.layout.capsuleCount,
                          .planeTotal = s.layout.planeCount};
}

}  // namespace

Status checkParticleValues(std::span<const Float4> particles, std::span<const ClothRange> cloths, Backend backend,
                           const char* array) {
  const auto fold = backend == Backend::kCpuSimd ? boundsKeysSimd : boundsKeysScalar;
  constexpr uint32_t kKeyMinusZero = 0x7FFFFFFFu;  // the key of -0: inverse masses must not be below
  for (const ClothRange& r : cloths) {
    if (r.count == 0) continue;
    const int quick = backend == Backend::kCpuSimd ? valuesSuspiciousSimd(&particles[r.first], r.count) : -1;
    if (quick == 0) continue;
    if (quick == 1) return detail::validateParticles(particles, cloths, array);
    uint32_t lo[4] = {~0u, ~0u, ~0u, ~0u}, hi[4] = {0, 0, 0, 0};
    fold(&particles[r.first].x, r.count, lo, hi);
    bool suspicious = lo[3] < kKeyMinusZero;
    for (int k = 0; k < 4; ++k) suspicious |= lo[k] <= gpu::kKeyNegInf || hi[k] >= gpu::kKeyPosInf;
    if (suspicious) return detail::validateParticles(particles, cloths, array);
  }
  return {};
}

void prepareShapesShared(const ShapeCollisionInput& in, ShapesState& s) {
  s.layout = detail::makeShapesLayout(in.cloths, in.colliders);
  s.flags = detail::shapeFlags(in.settings);
  detail::interpolateSpheres(in.colliders, in.settings.alphaBegin, in.settings.alphaEnd, s.spheres);
  detail::interpolatePlanes(in.colliders, in.settings.alphaBegin, in.settings.alphaEnd, s.planes);
  const uint32_t S = s.layout.sphereCount, C = s.layout.capsuleCount;
  s.cones.resize(2 * C);
  for (uint32_t end = 0; end < 2; ++end) {
    for (uint32_t k = 0; k < C; ++k) {
      const gpu::CapsuleSpheres cap = s.layout.capsules[k];
      s.cones[end * C + k] = gpu::makeCone(s.spheres[end * S + cap.sphere0], s.spheres[end * S + cap.sphere1]);
    }
  }
  s.grids.resize(s.layout.cloths.size());
  s.masks.assign(s.layout.maskWordCount, 0u);
  s.convexBits.assign(s.layout.convexWordCount, 0u);
}

void prepareShapeCloth(ShapesState& s, uint32_t c, const Aabb& b) {
  const uint32_t S = s.layout.sphereCount;
  const bool ccd = (s.flags & gpu::kCollideFlagContinuous) != 0;
  const gpu::ShapeCloth& sc = s.layout.cloths[c];
  {
    constexpr float inf = std::numeric_limits<float>::infinity();
    gpu::vec3 lo(inf), hi(-inf);
    for (uint32_t i = sc.firstSphere; i < sc.firstSphere + sc.sphereCount; ++i) {
      for (uint32_t end = ccd ? 0u : 1u; end < 2; ++end) {
        const gpu::vec4 sp = s.spheres[end * S + i];
        lo = gpu::min(lo, gpu::vec3(sp) - sp.w);
        hi = gpu::max(hi, gpu::vec3(sp) + sp.w);
      }
    }
    s.grids[c] = gpu::makeGrid({b.lo.x, b.lo.y, b.lo.z}, {b.hi.x, b.hi.y, b.hi.z}, lo, hi);
  }
  gpu::ShapeKernel k = kernelFor(s);
  for (uint32_t w = 0; w * 32u < sc.convexCount; ++w) {
    s.convexBits[sc.firstConvexWord + w] = k.buildConvexWord(sc, {b.lo.x, b.lo.y, b.lo.z}, {b.hi.x, b.hi.y, b.hi.z},
                                                             ccd ? 1u : 0u, w);
  }
  // The grid words, shape by shape: the same bits as the shaders' buildMaskWord (which computes each
  // word from scratch, 32 shapes x 48 rows), from each shape's cell span per axis computed once: a
  // shape's bit is in set 0 ("first") at cells >= the lowest cell of its spheres and in set 1 ("last")
  // at cells <= the highest (checked bitwise against the shaders by the conformance tests).
  {
    const gpu::ShapeGrid& g = s.grids[c];
    if (g.lower.w == 0.0f) return;
    for (uint32_t shape = 0; shape < sc.sphereCount + sc.capsuleCount; ++shape) {
      uint32_t spheres[2] = {sc.firstSphere + shape, 0};
      uint32_t count = 1;
      if (shape >= sc.sphereCount) {
        const gpu::CapsuleSpheres caps = s.layout.capsules[sc.firstCapsule + shape - sc.sphereCount];
        spheres[0] = caps.sphere0;
        spheres[1] = caps.sphere1;
        count = 2;
      }
      const uint32_t word = shape / 32u, bit = 1u << (shape % 32u);
      for (uint32_t axis = 0; axis < 3; ++axis) {
        const int a = static_cast<int>(axis);
        uint32_t lo = gpu::kGridCells, hi = 0;
        for (uint32_t k2 = 0; k2 < count; ++k2) {
          for (uint32_t end = ccd ? 0u : 1u; end < 2; ++end) {
            const gpu::vec4 sp = s.spheres[end * S + spheres[k2]];
            const gpu::uvec2 cells = gpu::sphereCells(sp[a], sp.w, g.lower[a], g.scale[a]);
            lo = std::min(lo, cells.x);
            hi = std::max(hi, cells.y);
          }
        }
        for (uint32_t cell = lo; cell < gpu::kGridCells; ++cell) s.masks[k.maskIndex(sc, 0, axis, cell, word)] |= bit;
        for (uint32_t cell = 0; cell <= hi; ++cell) s.masks[k.maskIndex(sc, 1, axis, cell, word)] |= bit;
      }
    }
  }
}

void prepareShapes(const ShapeCollisionInput& in, std::span<const Aabb> particleBounds, ShapesState& s) {
  prepareShapesShared(in, s);
  for (uint32_t c = 0; c < s.layout.cloths.size(); ++c) prepareShapeCloth(s, c, particleBounds[c]);
}

void collideClothScalar(const ShapesState& s, uint32_t cloth, const ShapeCollisionSettings& settings,
                        Float4* particles, Float4* prevParticles, uint32_t begin, uint32_t end) {
  gpu::ShapeKernel k = kernelFor(s);
  const gpu::ShapeCloth& sc = s.layout.cloths[cloth];
  end = std::min(end, sc.particleCount);
  for (uint32_t i = sc.firstParticle + begin; i < sc.firstParticle + end; ++i) {
    gpu::vec4 p(particles[i].x, particles[i].y, particles[i].z, particles[i].w);
    gpu::vec4 q(prevParticles[i].x, prevParticles[i].y, prevParticles[i].z, prevParticles[i].w);
    k.collideParticle(sc, s.grids[cloth], s.flags, settings.friction, settings.collisionMassScale, p, q);
    particles[i] = {p.x, p.y, p.z, p.w};
    prevParticles[i] = {q.x, q.y, q.z, q.w};
  }
}

}  // namespace vkc::cpu

namespace vkc {
namespace {

// One iteration on par's threads: bounds and checks in chunks, then the cloths (and chunks of large
// cloths, at multiples of 64 particles: whole SIMD batches) collide in parallel. Every particle's
// result depends only on its own state and the prepared tables: bitwise the same on any thread count.
Status collideShapesOn(detail::ParallelCall& par, const ShapeCollisionInput& in, Backend backend,
                       ShapeCollisionDebug* debug) {
  if (backend == Backend::kVulkan) {
    return Error{ErrorCode::kInvalidArgument, "collideShapesCpu: backend must be kCpuScalar or kCpuSimd"};
  }
  // validate(in), with the particle values checked through the bounds keys (a few times faster than
  // validateParticles' element by element scan; where a key is suspicious, validateParticles names
  // the first bad value, so the errors are validate()'s, in its order).
  VKC_TRY(detail::validateShapeLayout(in));
  std::vector<Aabb> bounds(in.cloths.size());
  VKC_TRY(cpu::computeBoundsOn(par, {in.particles, in.prevParticles, in.cloths, in.settings.continuous, bounds}, backend));
  if (!in.settings.continuous) {
    VKC_TRY(par.threads() > 1 ? cpu::checkParticleValuesOn(par, in.prevParticles, in.cloths, backend, "prevParticles")
                              : cpu::checkParticleValues(in.prevParticles, in.cloths, backend, "prevParticles"));
  }
  cpu::ShapesState state;
  cpu::prepareShapesShared(in, state);
  const detail::WorkPlan plan = par.plan(static_cast<uint32_t>(in.cloths.size()), [&](uint32_t c) { return in.cloths[c].count; });
  // A cloth's grid and masks are its own (disjoint words): a cloth in one piece is prepared by the
  // task that collides it; one cut into pieces, here, before its pieces run.
  auto whole = [&](const detail::WorkPiece& w) { return w.begin == 0 && w.end == in.cloths[w.cloth].count; };
  for (const detail::WorkPiece& w : plan.pieces) {
    if (!whole(w) && w.begin == 0) cpu::prepareShapeCloth(state, w.cloth, bounds[w.cloth]);
  }
  par.forEach(plan.tasks(), [&](uint32_t t) {
    for (const detail::WorkPiece& w : plan.task(t)) {
      if (whole(w)) cpu::prepareShapeCloth(state, w.cloth, bounds[w.cloth]);
      if (backend == Backend::kCpuSimd) {
        cpu::collideClothSimd(state, w.cloth, in.settings, in.particles.data(), in.prevParticles.data(), w.begin, w.end);
      } else {
        cpu::collideClothScalar(state, w.cloth, in.settings, in.particles.data(), in.prevParticles.data(), w.begin, w.end);
      }
    }
  });
  if (debug != nullptr) {
    debug->masks = state.masks;
    debug->maskWords.clear();
    for (const gpu::ShapeCloth& sc : state.layout.cloths) debug->maskWords.push_back(sc.maskWords);
    debug->convexBits = state.convexBits;
  }
  return par.status();
}

}  // namespace

Status collideShapesCpu(const ShapeCollisionInput& in, Backend backend, ShapeCollisionDebug* debug) {
  detail::ParallelCall par(nullptr, "collideShapesCpu");
  return collideShapesOn(par, in, backend, debug);
}

Status collideShapesCpu(const ShapeCollisionInput& in, Backend backend, const CpuExecutor& executor,
                        ShapeCollisionDebug* debug) {
  detail::ParallelCall par(&executor, "collideShapesCpu");
  return collideShapesOn(par, in, backend, debug);
}

}  // namespace vkc
