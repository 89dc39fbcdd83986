#include "validate.h"

#include <cmath>
#include <cstdio>

#include "shared/bounds.h"
#include "util/try.h"
#include "vkcollide/bounds.h"

namespace vkc::detail {

Status validateClothRanges(std::span<const ClothRange> cloths, uint64_t particleCount, const char* what) {
  for (size_t i = 0; i < cloths.size(); ++i) {
    const uint64_t end = uint64_t{cloths[i].first} + cloths[i].count;
    if (end > particleCount) {
      return Error{ErrorCode::kInvalidArgument,
                   std::string(what) + ".cloths[" + std::to_string(i) + "]: particles [" + std::to_string(cloths[i].first) +
                       ", " + std::to_string(end) + ") extend past the " + std::to_string(particleCount) +
                       " particles of the scene"};
    }
  }
  return {};
}

Status validateParticles(std::span<const Float4> particles, std::span<const ClothRange> cloths, const char* array) {
  for (size_t c = 0; c < cloths.size(); ++c) {
    for (uint32_t j = 0; j < cloths[c].count; ++j) {
      const uint32_t i = cloths[c].first + j;
      const Float4& p = particles[i];
      const float v[4] = {p.x, p.y, p.z, p.w};
      for (int k = 0; k < 4; ++k) {
        const bool bad = !std::isfinite(v[k]) || (k == 3 && v[k] < 0.0f);
        if (!bad) continue;
        char buf[256];
        std::snprintf(buf, sizeof buf, "cloths[%zu].%s[%u].%c (scene particle %u) is %g: %s", c, array, j, "xyzw"[k], i,
                      static_cast<double>(v[k]),
                      k == 3 ? "the inverse mass must be finite and >= 0" : "positions must be finite");
        return Error{ErrorCode::kInvalidArgument, buf};
      }
    }
  }
  return {};
}

uint32_t makeClothTable(std::span<const ClothRange> cloths, std::vector<gpu::ClothRange>& table) {
  table.resize(cloths.size());
  uint32_t tiles = 0;
  for (size_t i = 0; i < cloths.size(); ++i) {
    const uint32_t n = (cloths[i].count + gpu::kBoundsTileSize - 1) / gpu::kBoundsTileSize;
    table[i] = {cloths[i].first, cloths[i].count, tiles, n};
    tiles += n;
  }
  return tiles;
}

std::string formatNumber(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Status validateRigidTransform(const std::string& name, const Float4& translation, const Float4& rotation) {
  const float t[3] = {translation.x, translation.y, translation.z};
  for (int k = 0; k < 3; ++k) {
    if (!std::isfinite(t[k])) {
      return Error{ErrorCode::kInvalidArgument,
                   name + ".translation." + "xyz"[k] + " is " + formatNumber(t[k]) + ": the translation must be finite"};
    }
  }
  const float q[4] = {rotation.x, rotation.y, rotation.z, rotation.w};
  for (int k = 0; k < 4; ++k) {
    if (!std::isfinite(q[k])) {
      return Error{ErrorCode::kInvalidArgument, name + ".rotation." + "xyzw"[k] + " is " + formatNumber(q[k]) +
                                                    ": the rotation quaternion must be finite"};
    }
  }
  double sq = 0.0;
  for (int k = 0; k < 4; ++k) sq += static_cast<double>(q[k]) * static_cast<double>(q[k]);
  const double len = std::sqrt(sq);
  if (std::fabs(len - 1.0) > 1e-3) {
    return Error{ErrorCode::kInvalidArgument,
                 name + ".rotation has length " + formatNumber(len) +
                     ": it must be a unit quaternion (x, y, z, w) within 1e-3, an orthonormal rotation"};
  }
  return {};
}

}  // namespace vkc::detail

namespace vkc {

Status detail::validateSeparation(float distance, float stiffness, const std::string& owner) {
  if (!std::isfinite(distance) || !(distance >= 1e-30f)) {
    return Error{ErrorCode::kInvalidArgument, owner + ".distance is " + std::to_string(distance) +
                                                  ": it must be finite and > 0 (>= 1e-30, a normal float)"};
  }
  if (!(stiffness >= 0.0f && stiffness <= 1.0f)) {
    return Error{ErrorCode::kInvalidArgument, owner + ".stiffness is " + std::to_string(stiffness) + ": it must be in [0, 1]"};
  }
  return {};
}

Status detail::validateBoundsLayout(const BoundsInput& input) {
  if (input.particles.size() > UINT32_MAX) {
    return Error{ErrorCode::kLimitExceeded, "BoundsInput::particles: more than 2^32-1 particles"};
  }
  VKC_TRY(detail::validateClothRanges(input.cloths, input.particles.size(), "BoundsInput"));
  if (input.boxes.size() != input.cloths.size()) {
    return Error{ErrorCode::kBufferTooSmall, "BoundsInput::boxes holds " + std::to_string(input.boxes.size()) +
                                                 " boxes; the input has " + std::to_string(input.cloths.size()) +
                                                 " cloths"};
  }
  if (input.includePrevious || !input.prevParticles.empty()) {
    if (input.prevParticles.size() != input.particles.size()) {
      return Error{ErrorCode::kInvalidArgument,
                   "BoundsInput::prevParticles has " + std::to_string(input.prevParticles.size()) +
                       " elements; it must have as many as particles (" + std::to_string(input.particles.size()) +
                       ")" + (input.includePrevious ? " when includePrevious is set" : " or none")};
    }
  }
  return {};
}

Status validate(const BoundsInput& input) {
  VKC_TRY(detail::validateBoundsLayout(input));
  VKC_TRY(detail::validateParticles(input.particles, input.cloths, "particles"));
  if (input.includePrevious) VKC_TRY(detail::validateParticles(input.prevParticles, input.cloths, "prevParticles"));
  return {};
}

}  // namespace vkc
