// The CPU twin of the bounds stage (shaders/bounds.comp): the same key arithmetic, per cloth.
#include "cpu/bounds.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

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

Status computeBoundsCpu(const BoundsInput& input, Backend backend) {
  if (backend == Backend::kVulkan) {
    return Error{ErrorCode::kInvalidArgument, "computeBoundsCpu: backend must be kCpuScalar or kCpuSimd"};
  }
  const std::span<Aabb> out = input.boxes;
  VKC_TRY(detail::validateBoundsLayout(input));
  const auto fold = backend == Backend::kCpuSimd ? cpu::boundsKeysSimd : cpu::boundsKeysScalar;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // The particles are validated through the keys the reduction computes anyway: a non-finite
  // coordinate puts a key at or beyond an infinity's, a negative inverse mass (w, folded as the
  // fourth component) below -0's. Only then does the full scan run, to name the particle.
  constexpr uint32_t kKeyMinusZero = 0x7FFFFFFFu;
  bool suspicious = false;
  std::vector<Aabb> boxes(out.size());
  for (size_t c = 0; c < input.cloths.size(); ++c) {
    const ClothRange& r = input.cloths[c];
    if (r.count == 0) {
      boxes[c] = Aabb{{kInf, kInf, kInf, 0}, {-kInf, -kInf, -kInf, 0}};
      continue;
    }
    uint32_t lo[4] = {~0u, ~0u, ~0u, ~0u}, hi[4] = {0, 0, 0, 0};
    fold(&input.particles[r.first].x, r.count, lo, hi);
    if (input.includePrevious) fold(&input.prevParticles[r.first].x, r.count, lo, hi);
    for (int k = 0; k < 4; ++k) suspicious |= lo[k] <= gpu::kKeyNegInf || hi[k] >= gpu::kKeyPosInf;
    suspicious |= lo[3] < kKeyMinusZero;
    auto decode = [](uint32_t key) { return std::bit_cast<float>(gpu::floatBitsFromKey(key)); };
    boxes[c] = Aabb{{decode(lo[0]), decode(lo[1]), decode(lo[2]), 0}, {decode(hi[0]), decode(hi[1]), decode(hi[2]), 0}};
  }
  if (suspicious) VKC_TRY(validate(input));
  std::copy(boxes.begin(), boxes.end(), out.begin());
  return {};
}

}  // namespace vkc
