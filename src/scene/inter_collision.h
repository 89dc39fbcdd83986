// Private: validation and the GPU cloth table of inter collision, shared by every backend so that all
// of them reject the same inputs with the same messages.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "shared/inter_collision.h"
#include "vkcollide/inter_collision.h"

namespace vkc::detail {

// Everything of an inter-collision description except the particle values: ranges inside
// `particleCount`, transforms, filters, settings. `what` prefixes range messages.
Status validateInterLayout(std::span<const InterClothDesc> cloths, std::span<const InterCollisionFilter> filters,
                           const InterCollisionSettings& settings, uint64_t particleCount, const char* what);

// Only the transforms (for InterCollisionStage::setTransforms).
Status validateInterTransforms(std::span<const InterClothDesc> cloths);

// The cloth ranges of a description.
std::vector<ClothRange> interClothRanges(std::span<const InterClothDesc> cloths);

// The GPU cloth table (filters applied; tiles of kInterTileSize). Returns the tile count.
// Precondition: validated.
uint32_t makeInterClothTable(std::span<const InterClothDesc> cloths, std::span<const InterCollisionFilter> filters,
                             std::vector<gpu::InterCloth>& table);

}  // namespace vkc::detail
