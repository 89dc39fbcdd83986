// Private: validation and the GPU cloth table of inter collision, shared by every backend so that all
// of them reject the same inputs with the same messages.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "shared/inter_collision.h"
#include "vkcollide/inter_collision.h"

namespace vkc::detail {

// The static part of an inter-collision description: ranges inside `particleCount` and filters.
// `what` prefixes range messages.
Status validateInterLayout(std::span<const InterClothDesc> cloths, std::span<const InterCollisionFilter> filters,
                           uint64_t particleCount, const char* what);

// The transforms; messages read "<prefix>cloths[2].rotation ...".
Status validateInterTransforms(std::span<const InterClothDesc> cloths, const std::string& prefix = "");

// distance and stiffness (detail::validateSeparation, as self collision) and iterations; messages
// name "<owner>.distance", "<owner>.iterations" (owner: "settings", "InterCollisionRecordInfo::settings").
Status validateInterSettings(const InterCollisionSettings& settings, const std::string& owner);

// A step's cloths against a stage's layout: the same count and ranges, then validateInterTransforms.
Status validateInterStepCloths(std::span<const InterClothDesc> cloths, std::span<const InterClothDesc> layout,
                               const std::string& prefix);

// The cloth ranges of a description.
std::vector<ClothRange> interClothRanges(std::span<const InterClothDesc> cloths);

// The GPU cloth table (filters applied; tiles of kInterTileSize). Returns the tile count.
// Precondition: validated.
uint32_t makeInterClothTable(std::span<const InterClothDesc> cloths, std::span<const InterCollisionFilter> filters,
                             std::vector<gpu::InterCloth>& table);

}  // namespace vkc::detail
