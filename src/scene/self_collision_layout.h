// Private: validation of self-collision input and the item tables every backend builds from it (each
// cloth's self-colliding particles, as consecutive items).
#pragma once

#include <span>
#include <vector>

#include "shared/self_collision.h"
#include "vkcollide/self_collision.h"

namespace vkc::detail {

struct SelfLayout {
  std::vector<gpu::SelfCloth> cloths;
  std::vector<uint32_t> itemParticles;  // scene particle index of each item
};

// Precondition: the subsets were validated against the cloths. listWholeCloths false: when no cloth
// has a subset, itemParticles is left empty (item i of cloth c is then particle
// cloths[c].firstParticle + i - cloths[c].firstItem; the CPU backends map items so).
SelfLayout makeSelfLayout(std::span<const ClothRange> cloths, std::span<const std::span<const uint32_t>> subsets,
                          bool listWholeCloths = true);

// The settings through validateSeparation; messages name "<what>.settings.distance" / ".stiffness".
Status validateSelfSettings(const SelfCollisionSettings& s, const char* what);
// Cloth ranges within particleCount, subsets (count, range, duplicates), restCount 0 or particleCount.
Status validateSelfLayout(std::span<const ClothRange> cloths, uint64_t particleCount,
                          std::span<const std::span<const uint32_t>> subsets, uint64_t restCount, const char* what);

// validate(SelfCollisionInput) in its three steps, in its order: settings and layout, the particles
// (detail::validateParticles), the rest positions. The CPU backends let the bounds reduction check
// the particles (it does anyway) and run the full validate() only when it reports a bad particle.
Status validateSelfInputLayout(const SelfCollisionInput& input);
Status validateSelfRest(const SelfCollisionInput& input);

// Bits needed for cloth indices 0..clothCount-1 (0 for at most one cloth).
uint32_t clothKeyBits(size_t clothCount);

}  // namespace vkc::detail
