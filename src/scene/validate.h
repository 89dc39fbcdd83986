// Private: validation of inputs, shared by every backend so that all of them reject the same
// inputs with the same messages. Errors name the field: "cloths[2].particles[17].x is nan".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "shared/common.h"
#include "vkcollide/result.h"
#include "vkcollide/bounds.h"
#include "vkcollide/types.h"

namespace vkc::detail {

// Each cloth inside [0, particleCount), without overflow.
Status validateClothRanges(std::span<const ClothRange> cloths, uint64_t particleCount, const char* what);

// Every particle of every cloth: xyz finite, w (inverse mass) finite and >= 0. `array` names the
// array in messages ("particles", "prevParticles").
Status validateParticles(std::span<const Float4> particles, std::span<const ClothRange> cloths, const char* array);

// The distance and stiffness of a particle-particle separation (self and inter collision check them
// alike): distance finite and >= 1e-30 (a normal float: the grids divide by it), stiffness in [0, 1].
// Messages name "<owner>.distance" / "<owner>.stiffness", e.g. "settings.distance is -1: ...".
Status validateSeparation(float distance, float stiffness, const std::string& owner);

// The parts of validate(BoundsInput) that do not read the particles: sizes and cloth ranges.
Status validateBoundsLayout(const BoundsInput& input);

// A number in an error message ("%g": 1.5, 1e+30, nan, inf).
std::string formatNumber(double v);

// A rigid transform: translation finite, rotation a finite unit quaternion (x, y, z, w) within 1e-3.
// Messages name "<name>.translation.x", "<name>.rotation".
Status validateRigidTransform(const std::string& name, const Float4& translation, const Float4& rotation);

// The GPU cloth table: ranges plus each cloth's bounds tiles (prefix sum). Returns the tile count.
uint32_t makeClothTable(std::span<const ClothRange> cloths, std::vector<gpu::ClothRange>& table);

}  // namespace vkc::detail
