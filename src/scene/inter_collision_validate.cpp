#include <cmath>
#include <cstdio>
#include <string>

#include "scene/inter_collision.h"
#include "scene/validate.h"
#include "util/try.h"

namespace vkc::detail {
namespace {

constexpr float kUnitTolerance = 1e-3f;

Error invalid(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message}; }

std::string fmt(double v) {  // NOLINT
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

Status validateInterTransforms(std::span<const InterClothDesc> cloths) {
  for (size_t c = 0; c < cloths.size(); ++c) {
    const InterClothDesc& d = cloths[c];
    const std::string name = "cloths[" + std::to_string(c) + "]";
    const float t[3] = {d.translation.x, d.translation.y, d.translation.z};
    for (int k = 0; k < 3; ++k) {
      if (!std::isfinite(t[k])) {
        return invalid(name + ".translation." + "xyz"[k] + " is " + fmt(t[k]) + ": the translation must be finite");
      }
    }
    const float q[4] = {d.rotation.x, d.rotation.y, d.rotation.z, d.rotation.w};
    for (int k = 0; k < 4; ++k) {
      if (!std::isfinite(q[k])) {
        return invalid(name + ".rotation." + "xyzw"[k] + " is " + fmt(q[k]) + ": the rotation quaternion must be finite");
      }
    }
    double sq = 0.0;
    for (int k = 0; k < 4; ++k) sq += static_cast<double>(q[k]) * static_cast<double>(q[k]);
    const double len = std::sqrt(sq);
    if (std::fabs(len - 1.0) > static_cast<double>(kUnitTolerance)) {
      return invalid(name + ".rotation has length " + fmt(len) +
                     ": it must be a unit quaternion (x, y, z, w) within 1e-3, an orthonormal rotation");
    }
  }
  return {};
}

Status validateInterLayout(std::span<const InterClothDesc> cloths, std::span<const InterCollisionFilter> filters,
                           const InterCollisionSettings& settings, uint64_t particleCount, const char* what) {
  const std::vector<ClothRange> ranges = interClothRanges(cloths);
  VKC_TRY(validateClothRanges(ranges, particleCount, what));
  VKC_TRY(validateInterTransforms(cloths));
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
  const float d = settings.distance;
  if (!std::isfinite(d) || !(d > 0.0f)) {
    return invalid("settings.distance is " + fmt(d) + ": the inter-collision distance must be finite and > 0");
  }
  const float s = settings.stiffness;
  if (!std::isfinite(s) || !(s > 0.0f) || s > 1.0f) {
    return invalid("settings.stiffness is " + fmt(s) + ": it must be in (0, 1]");
  }
  if (settings.iterations == 0 || settings.iterations > kMaxInterIterations) {
    return invalid("settings.iterations is " + std::to_string(settings.iterations) + ": it must be in [1, " +
                   std::to_string(kMaxInterIterations) + "]");
  }
  return {};
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
  VKC_TRY(detail::validateInterLayout(input.cloths, input.filters, input.settings, input.particles.size(),
                                      "InterCollisionInput"));
  const std::vector<ClothRange> ranges = detail::interClothRanges(input.cloths);
  return detail::validateParticles(input.particles, ranges, "particles");
}

}  // namespace vkc
