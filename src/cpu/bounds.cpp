// The CPU twin of the bounds stage (shaders/bounds.comp): the same key arithmetic, per cloth.
#include "cpu/bounds.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/executor.h"
#include "scene/validate.h"
#include "shared/float_order.h"
#include "util/try.h"
#include "vkcollide/bounds.h"

namespace vkc::cpu {

void boundsKeysScalar(const float* xyzw, size_t count, uint32_t lo[4], uint32_t hi[4]) {
  for (size_t i = 0; i < count * 4; ++i) {
    const uint32_t k = gpu::floatKeyFromBits(std::bit_cast<uint32_t>(xyzw[i]));
    lo[i & 3] = std::min(lo[i & 3], k);
    hi[i & 3] = std::max(hi[i & 3], k);
  }
}

}  // namespace vkc::cpu

namespace vkc {

namespace cpu {

void foldClothKeys(detail::ParallelCall& par, const Float4* particles, const Float4* prevParticles,
                   std::span<const ClothRange> cloths, Backend backend, std::vector<ClothKeys>& keys) {
  const auto fold = backend == Backend::kCpuSimd ? boundsKeysSimd : boundsKeysScalar;
  auto foldRange = [&](const ClothRange& r, uint32_t begin, uint32_t end, ClothKeys& k) {
    k.fill(0u);
    std::fill(k.begin(), k.begin() + 4, ~0u);
    if (begin == end) return;
    fold(&particles[r.first + begin].x, end - begin, k.data(), k.data() + 4);
    if (prevParticles != nullptr) fold(&prevParticles[r.first + begin].x, end - begin, k.data(), k.data() + 4);
  };
  keys.resize(cloths.size());
  uint64_t total = 0;
  for (const ClothRange& r : cloths) total += r.count;
  if (par.taskCount(total) <= 1) {
    for (size_t c = 0; c < cloths.size(); ++c) foldRange(cloths[c], 0, cloths[c].count, keys[c]);
    return;
  }
  // Pieces of large cloths folded apart, then combined in order (min / max: exact).
  const detail::WorkPlan plan =
      par.plan(static_cast<uint32_t>(cloths.size()), [&](uint32_t c) { return cloths[c].count; });
  std::vector<ClothKeys> pieceKeys(plan.pieces.size());
  par.forEach(plan.tasks(), [&](uint32_t t) {
    for (uint32_t i = plan.taskFirst[t]; i < plan.taskFirst[t + 1]; ++i) {
      const detail::WorkPiece& piece = plan.pieces[i];
      foldRange(cloths[piece.cloth], piece.begin, piece.end, pieceKeys[i]);
    }
  });
  for (size_t i = 0; i < plan.pieces.size();) {
    ClothKeys& k = keys[plan.pieces[i].cloth];
    k = pieceKeys[i];
    for (++i; i < plan.pieces.size() && &keys[plan.pieces[i].cloth] == &k; ++i) {
      for (int a = 0; a < 4; ++a) {
        k[a] = std::min(k[a], pieceKeys[i][a]);
        k[4 + a] = std::max(k[4 + a], pieceKeys[i][4 + a]);
      }
    }
  }
}

bool suspiciousKeys(const ClothKeys& k) {
  // A non-finite coordinate puts a key at or beyond an infinity's, a negative inverse mass (w, folded
  // as the fourth component) below -0's.
  constexpr uint32_t kKeyMinusZero = 0x7FFFFFFFu;
  bool suspicious = k[3] < kKeyMinusZero;
  for (int a = 0; a < 4; ++a) suspicious |= k[a] <= gpu::kKeyNegInf || k[4 + a] >= gpu::kKeyPosInf;
  return suspicious;
}

Status checkParticleValuesOn(detail::ParallelCall& par, std::span<const Float4> particles,
                             std::span<const ClothRange> cloths, Backend backend, const char* array) {
  thread_local std::vector<ClothKeys> keys;
  foldClothKeys(par, particles.data(), nullptr, cloths, backend, keys);
  for (size_t c = 0; c < cloths.size(); ++c) {
    if (cloths[c].count != 0 && suspiciousKeys(keys[c])) return detail::validateParticles(particles, cloths, array);
  }
  return par.status();
}

Status computeBoundsOn(detail::ParallelCall& par, const BoundsInput& input, Backend backend) {
  if (backend == Backend::kVulkan) {
    return Error{ErrorCode::kInvalidArgument, "computeBoundsCpu: backend must be kCpuScalar or kCpuSimd"};
  }
  const std::span<Aabb> out = input.boxes;
  VKC_TRY(detail::validateBoundsLayout(input));
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // The particles are validated through the keys the reduction computes anyway; only when a key is
  // suspicious does the full scan run, to name the particle.
  thread_local std::vector<ClothKeys> keys;
  foldClothKeys(par, input.particles.data(), input.includePrevious ? input.prevParticles.data() : nullptr,
                input.cloths, backend, keys);
  bool suspicious = false;
  std::vector<Aabb> boxes(out.size());
  auto decode = [](uint32_t key) { return std::bit_cast<float>(gpu::floatBitsFromKey(key)); };
  for (size_t c = 0; c < input.cloths.size(); ++c) {
    if (input.cloths[c].count == 0) {
      boxes[c] = Aabb{{kInf, kInf, kInf, 0}, {-kInf, -kInf, -kInf, 0}};
      continue;
    }
    const ClothKeys& k = keys[c];
    suspicious |= suspiciousKeys(k);
    boxes[c] = Aabb{{decode(k[0]), decode(k[1]), decode(k[2]), 0}, {decode(k[4]), decode(k[5]), decode(k[6]), 0}};
  }
  if (suspicious) VKC_TRY(validate(input));
  std::copy(boxes.begin(), boxes.end(), out.begin());
  return par.status();
}

}  // namespace cpu

Status computeBoundsCpu(const BoundsInput& input, Backend backend) {
  detail::ParallelCall par(nullptr, "computeBoundsCpu");
  return cpu::computeBoundsOn(par, input, backend);
}

Status computeBoundsCpu(const BoundsInput& input, Backend backend, const CpuExecutor& executor) {
  detail::ParallelCall par(&executor, "computeBoundsCpu");
  return cpu::computeBoundsOn(par, input, backend);
}

}  // namespace vkc
