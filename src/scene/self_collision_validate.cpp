// Validation of self-collision input and its item tables, shared by every backend (so that all of
// them reject the same inputs with the same messages).
#include <bit>
#include <cmath>
#include <string>

#include "scene/self_collision_layout.h"
#include "scene/validate.h"
#include "util/try.h"

namespace vkc::detail {

SelfLayout makeSelfLayout(std::span<const ClothRange> cloths, std::span<const std::span<const uint32_t>> subsets,
                          bool listWholeCloths) {
  SelfLayout L;
  L.cloths.resize(cloths.size());
  uint64_t total = 0;
  bool anySubset = false;
  for (size_t c = 0; c < cloths.size(); ++c) {
    const bool sub = !subsets.empty() && !subsets[c].empty();
    anySubset |= sub;
    total += sub ? subsets[c].size() : cloths[c].count;
  }
  const bool list = listWholeCloths || anySubset;
  if (list) L.itemParticles.resize(total);
  uint32_t* out = L.itemParticles.data();
  uint32_t first = 0;
  for (size_t c = 0; c < cloths.size(); ++c) {
    const uint32_t base = cloths[c].first;
    uint32_t count = cloths[c].count;
    if (!subsets.empty() && !subsets[c].empty()) {
      const std::span<const uint32_t> sub = subsets[c];
      count = static_cast<uint32_t>(sub.size());
      for (uint32_t i = 0; i < count; ++i) out[first + i] = base + sub[i];
    } else if (list) {
      for (uint32_t i = 0; i < count; ++i) out[first + i] = base + i;  // (a loop the compiler vectorises)
    }
    L.cloths[c] = {first, count, base, cloths[c].count};
    first += count;
  }
  return L;
}

Status validateSelfSettings(const SelfCollisionSettings& s, const char* what) {
  // The check inter collision shares (the grid's sweep scale 65533 / max(edge, d) needs a normal d).
  return validateSeparation(s.distance, s.stiffness, std::string(what) + ".settings");
}

Status validateSelfLayout(std::span<const ClothRange> cloths, uint64_t particleCount,
                          std::span<const std::span<const uint32_t>> subsets, uint64_t restCount, const char* what) {
  const std::string w(what);
  if (particleCount > UINT32_MAX) {
    return Error{ErrorCode::kLimitExceeded, w + ".particles: more than 2^32-1 particles"};
  }
  VKC_TRY(validateClothRanges(cloths, particleCount, what));
  if (restCount != 0 && restCount != particleCount) {
    return Error{ErrorCode::kInvalidArgument, w + ".restPositions has " + std::to_string(restCount) +
                                                  " elements; it must be empty or have one per particle (" +
                                                  std::to_string(particleCount) + ")"};
  }
  if (!subsets.empty() && subsets.size() != cloths.size()) {
    return Error{ErrorCode::kInvalidArgument, w + ".subsets has " + std::to_string(subsets.size()) +
                                                  " entries; it must be empty or have one per cloth (" +
                                                  std::to_string(cloths.size()) + ")"};
  }
  std::vector<uint8_t> seen;
  for (size_t c = 0; c < subsets.size(); ++c) {
    const uint32_t n = cloths[c].count;
    seen.assign(n, 0);
    for (size_t k = 0; k < subsets[c].size(); ++k) {
      const uint32_t i = subsets[c][k];
      if (i < n && seen[i] == 0) {
        seen[i] = 1;
        continue;
      }
      // (the message is built only for the offending entry)
      const std::string field = w + ".subsets[" + std::to_string(c) + "][" + std::to_string(k) + "] is " + std::to_string(i);
      if (i >= n) {
        return Error{ErrorCode::kInvalidArgument,
                     field + "; cloth " + std::to_string(c) + " has " + std::to_string(n) + " particles"};
      }
      return Error{ErrorCode::kInvalidArgument, field + ", which appears earlier in the subset"};
    }
  }
  return {};
}

uint32_t clothKeyBits(size_t clothCount) {
  return clothCount <= 1 ? 0u : static_cast<uint32_t>(std::bit_width(clothCount - 1));
}

}  // namespace vkc::detail

namespace vkc::detail {

Status validateSelfInputLayout(const SelfCollisionInput& input) {
  VKC_TRY(validateSelfSettings(input.settings, "SelfCollisionInput"));
  return validateSelfLayout(input.cloths, input.particles.size(), input.subsets, input.restPositions.size(),
                            "SelfCollisionInput");
}

Status validateSelfRest(const SelfCollisionInput& input) {
  if (input.restPositions.empty()) return {};
  // Rest positions: xyz finite (w is not read).
  for (size_t c = 0; c < input.cloths.size(); ++c) {
    for (uint32_t j = 0; j < input.cloths[c].count; ++j) {
      const Float4& r = input.restPositions[input.cloths[c].first + j];
      if (std::isfinite(r.x) && std::isfinite(r.y) && std::isfinite(r.z)) continue;
      return Error{ErrorCode::kInvalidArgument, "SelfCollisionInput.cloths[" + std::to_string(c) + "].restPositions[" +
                                                    std::to_string(j) + "] is not finite"};
    }
  }
  return {};
}

}  // namespace vkc::detail

namespace vkc {

Status validate(const SelfCollisionInput& input) {
  VKC_TRY(detail::validateSelfInputLayout(input));
  VKC_TRY(detail::validateParticles(input.particles, input.cloths, "particles"));
  return detail::validateSelfRest(input);
}

}  // namespace vkc
