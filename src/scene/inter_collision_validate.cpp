#include <cmath>
#include <cstdio>
#include <string>

#include "scene/inter_collision.h"
#include "scene/validate.h"
#include "util/try.h"

namespace vkc::detail {
namespace {

Error invalid(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message}; }

}  // namespace

Status validateInterTransforms(std::span<const InterClothDesc> cloths, const std::string& prefix) {
  for (size_t c = 0; c < cloths.size(); ++c) {
    VKC_TRY(validateRigidTransform(prefix + "cloths[" + std::to_string(c) + "]", cloths[c].translation,
                                   cloths[c].rotation));
  }
  return {};
}

Status validateInterLayout(std::span<const InterClothDesc> cloths, std::span<const InterCollisionFilter> filters,
                           uint64_t particleCount, const char* what) {
  const std::vector<ClothRange> ranges = interClothRanges(cloths);
  VKC_TRY(validateClothRanges(ranges, particleCount, what));
  std::vector<bool> seen(cloths.size(), false);
  for (size_t f = 0; f < filters.size(); ++f) {
    const uint32_t c = filters[f].cloth;
    const std::string name = "filters[" + std::to_string(f) + "].cloth";
    if (c >= cloths.size()) {
      return invalid(name + " = " + std::to_string(c) + " refers to a missing cloth: the scene has " +
                     std::to_string(cloths.size()) + " cloths");
    }
    if (seen[c]) return invalid(name + " = " + std::to_string(c) + " has a filter already (one entry per cloth)");
    seen[c] = true;
  }
  return {};
}

Status validateInterSettings(const InterCollisionSettings& settings, const std::string& owner) {
  VKC_TRY(validateSeparation(settings.distance, settings.stiffness, owner));
  if (settings.iterations == 0 || settings.iterations > kMaxInterIterations) {
    return invalid(owner + ".iterations is " + std::to_string(settings.iterations) + ": it must be in [1, " +
                   std::to_string(kMaxInterIterations) + "]");
  }
  return {};
}

Status validateInterStepCloths(std::span<const InterClothDesc> cloths, std::span<const InterClothDesc> layout,
                               const std::string& prefix) {
  if (cloths.size() != layout.size()) {
    return invalid(prefix + "cloths holds " + std::to_string(cloths.size()) + " cloths; the stage was created with " +
                   std::to_string(layout.size()));
  }
  for (size_t c = 0; c < cloths.size(); ++c) {
    const ClothRange& a = cloths[c].range;
    const ClothRange& b = layout[c].range;
    if (a.first != b.first || a.count != b.count) {
      return invalid(prefix + "cloths[" + std::to_string(c) + "].range is {" + std::to_string(a.first) + ", " +
                     std::to_string(a.count) + "}; the stage's is {" + std::to_string(b.first) + ", " +
                     std::to_string(b.count) + "}");
    }
  }
  return validateInterTransforms(cloths, prefix);
}

std::vector<ClothRange> interClothRanges(std::span<const InterClothDesc> cloths) {
  std::vector<ClothRange> ranges(cloths.size());
  for (size_t c = 0; c < cloths.size(); ++c) ranges[c] = cloths[c].range;
  return ranges;
}

uint32_t makeInterClothTable(std::span<const InterClothDesc> cloths, std::span<const InterCollisionFilter> filters,
                             std::vector<gpu::InterCloth>& table) {
  table.assign(cloths.size(), gpu::InterCloth{});
  uint32_t tiles = 0;
  for (size_t c = 0; c < cloths.size(); ++c) {
    const InterClothDesc& d = cloths[c];
    gpu::InterCloth& t = table[c];
    t.rotation = gpu::vec4(d.rotation.x, d.rotation.y, d.rotation.z, d.rotation.w);
    t.translation = gpu::vec4(d.translation.x, d.translation.y, d.translation.z, 0.0f);
    t.first = d.range.first;
    t.count = d.range.count;
    t.group = 1u;
    t.mask = 0xFFFFFFFFu;
    t.firstTile = tiles;
    t.tileCount = (d.range.count + gpu::kInterTileSize - 1) / gpu::kInterTileSize;
    tiles += t.tileCount;
  }
  for (const InterCollisionFilter& f : filters) {
    table[f.cloth].group = f.group;
    table[f.cloth].mask = f.mask;
  }
  return tiles;
}

}  // namespace vkc::detail

namespace vkc {

Status validate(const InterCollisionInput& input) {
  VKC_TRY(detail::validateInterLayout(input.cloths, input.filters, input.particles.size(), "InterCollisionInput"));
  VKC_TRY(detail::validateInterTransforms(input.cloths));
  VKC_TRY(detail::validateInterSettings(input.settings, "settings"));
  const std::vector<ClothRange> ranges = detail::interClothRanges(input.cloths);
  return detail::validateParticles(input.particles, ranges, "particles");
}

}  // namespace vkc
