#include "scene/shapes_layout.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

#include "scene/validate.h"
#include "shared/collide_shapes_math.h"
#include "util/try.h"

namespace vkc::detail {

ShapesLayout makeShapesLayout(std::span<const ClothRange> cloths, std::span<const ClothColliders> colliders) {
  ShapesLayout L;
  L.cloths.resize(cloths.size());
  for (size_t c = 0; c < cloths.size(); ++c) {
    const ClothColliders& col = colliders[c];
    gpu::ShapeCloth& sc = L.cloths[c];
    const uint32_t spheres = static_cast<uint32_t>(col.spheres.size());
    const uint32_t capsules = static_cast<uint32_t>(col.capsules.size());
    sc.firstParticle = cloths[c].first;
    sc.particleCount = cloths[c].count;
    sc.firstSphere = L.sphereCount;
    sc.sphereCount = spheres;
    sc.firstCapsule = L.capsuleCount;
    sc.capsuleCount = capsules;
    sc.maskWords = (spheres + capsules + 31u) / 32u;
    sc.firstMaskWord = L.maskWordCount;
    sc.groupCount = (cloths[c].count + gpu::kShapesGroupSize - 1) / gpu::kShapesGroupSize;
    sc.firstGroup = L.groupCount;
    sc.firstSphereCapsule = static_cast<uint32_t>(L.sphereCapsules.size());
    sc.firstPlane = L.planeCount;
    sc.planeCount = static_cast<uint32_t>(col.planes.size());
    sc.firstConvex = static_cast<uint32_t>(L.convexes.size());
    sc.convexCount = static_cast<uint32_t>(col.convexes.size());
    sc.firstConvexWord = L.convexWordCount;
    for (const Convex& x : col.convexes) {
      L.convexes.push_back({static_cast<uint32_t>(L.convexPlanes.size()), static_cast<uint32_t>(x.planes.size())});
      for (uint32_t k : x.planes) L.convexPlanes.push_back(sc.firstPlane + k);
    }
    L.planeCount += sc.planeCount;
    L.convexWordCount += (sc.convexCount + 31u) / 32u;
    for (const Capsule& cap : col.capsules) {
      L.capsules.push_back({sc.firstSphere + cap.sphere0, sc.firstSphere + cap.sphere1});
    }
    // CSR: offsets (spheres + 1), then the capsules of each sphere in ascending order.
    std::vector<uint32_t> counts(spheres + 1, 0);
    for (const Capsule& cap : col.capsules) {
      ++counts[cap.sphere0 + 1];
      ++counts[cap.sphere1 + 1];
    }
    for (uint32_t s = 0; s < spheres; ++s) counts[s + 1] += counts[s];
    const size_t base = L.sphereCapsules.size();
    L.sphereCapsules.insert(L.sphereCapsules.end(), counts.begin(), counts.end());
    L.sphereCapsules.resize(base + spheres + 1 + 2 * capsules);
    std::vector<uint32_t> fill(counts.begin(), counts.end() - 1);
    for (uint32_t k = 0; k < capsules; ++k) {
      L.sphereCapsules[base + spheres + 1 + fill[col.capsules[k].sphere0]++] = k;
      L.sphereCapsules[base + spheres + 1 + fill[col.capsules[k].sphere1]++] = k;
    }
    L.sphereCount += spheres;
    L.capsuleCount += capsules;
    L.maskWordCount += gpu::kGridMaskRows * sc.maskWords;
    L.groupCount += sc.groupCount;
  }
  return L;
}

void interpolateSpheres(std::span<const ClothColliders> colliders, float alphaBegin, float alphaEnd,
                        std::vector<gpu::vec4>& out) {
  packRawSpheres(colliders, out);
  const size_t total = out.size() / 2;
  for (size_t i = 0; i < total; ++i) {
    const gpu::vec4 start = out[i], end = out[total + i];
    out[i] = gpu::interpolateSphere(start, end, alphaBegin);
    out[total + i] = gpu::interpolateSphere(start, end, alphaEnd);
  }
}

std::vector<ColliderLayout> colliderLayout(std::span<const ClothColliders> colliders) {
  std::vector<ColliderLayout> out(colliders.size());
  for (size_t c = 0; c < colliders.size(); ++c) {
    out[c].spheres = static_cast<uint32_t>(colliders[c].spheres.size());
    out[c].planes = static_cast<uint32_t>(colliders[c].planes.size());
    out[c].capsules.assign(colliders[c].capsules.begin(), colliders[c].capsules.end());
    for (const Convex& x : colliders[c].convexes) out[c].convexes.emplace_back(x.planes.begin(), x.planes.end());
  }
  return out;
}

bool sameColliderLayout(std::span<const ColliderLayout> layout, std::span<const ClothColliders> colliders) {
  if (layout.size() != colliders.size()) return false;
  for (size_t c = 0; c < layout.size(); ++c) {
    const ColliderLayout& l = layout[c];
    const ClothColliders& col = colliders[c];
    if (col.spheres.size() != l.spheres || col.planes.size() != l.planes || col.capsules.size() != l.capsules.size() ||
        col.convexes.size() != l.convexes.size()) {
      return false;
    }
    for (size_t k = 0; k < l.capsules.size(); ++k) {
      if (col.capsules[k].sphere0 != l.capsules[k].sphere0 || col.capsules[k].sphere1 != l.capsules[k].sphere1) {
        return false;
      }
    }
    for (size_t k = 0; k < l.convexes.size(); ++k) {
      if (!std::equal(l.convexes[k].begin(), l.convexes[k].end(), col.convexes[k].planes.begin(),
                      col.convexes[k].planes.end())) {
        return false;
      }
    }
  }
  return true;
}

void packRawPlanes(std::span<const ClothColliders> colliders, std::vector<gpu::vec4>& out) {
  size_t total = 0;
  for (const ClothColliders& c : colliders) total += c.planes.size();
  out.resize(2 * total);
  size_t i = 0;
  for (const ClothColliders& c : colliders) {
    for (size_t k = 0; k < c.planes.size(); ++k, ++i) {
      const Float4& e = c.planes[k];
      const Float4& b = c.prevPlanes.empty() ? e : c.prevPlanes[k];
      out[i] = gpu::normalizePlane(gpu::vec4(b.x, b.y, b.z, b.w));
      out[total + i] = gpu::normalizePlane(gpu::vec4(e.x, e.y, e.z, e.w));
    }
  }
}

void interpolatePlanes(std::span<const ClothColliders> colliders, float alphaBegin, float alphaEnd,
                       std::vector<gpu::vec4>& out) {
  packRawPlanes(colliders, out);
  const size_t total = out.size() / 2;
  for (size_t i = 0; i < total; ++i) {
    const gpu::vec4 start = out[i], end = out[total + i];
    out[i] = gpu::interpolatePlane(start, end, alphaBegin);
    out[total + i] = gpu::interpolatePlane(start, end, alphaEnd);
  }
}

void packRawSpheres(std::span<const ClothColliders> colliders, std::vector<gpu::vec4>& out) {
  size_t total = 0;
  for (const ClothColliders& c : colliders) total += c.spheres.size();
  out.resize(2 * total);
  size_t i = 0;
  for (const ClothColliders& c : colliders) {
    for (size_t s = 0; s < c.spheres.size(); ++s, ++i) {
      const Float4& e = c.spheres[s];
      const Float4& b = c.prevSpheres.empty() ? e : c.prevSpheres[s];
      out[i] = gpu::vec4(b.x, b.y, b.z, b.w);
      out[total + i] = gpu::vec4(e.x, e.y, e.z, e.w);
    }
  }
}

uint32_t shapeFlags(const ShapeCollisionSettings& s) {
  return (s.continuous ? gpu::kCollideFlagContinuous : 0u) | (s.friction > 0 ? gpu::kCollideFlagFriction : 0u) |
         (s.collisionMassScale > 0 ? gpu::kCollideFlagMassScale : 0u);
}

namespace {

std::string at(const char* array, size_t c, const char* field, size_t i) {
  return "colliders[" + std::to_string(c) + "]." + field + "[" + std::to_string(i) + "]" + (array ? array : "");
}

Status validateSpheres(std::span<const Float4> spheres, size_t c, const char* field) {
  for (size_t i = 0; i < spheres.size(); ++i) {
    const Float4& s = spheres[i];
    const float v[4] = {s.x, s.y, s.z, s.w};
    for (int k = 0; k < 4; ++k) {
      if (!std::isfinite(v[k])) {
        char buf[64];
        std::snprintf(buf, sizeof buf, ".%c is %g: sphere centres and radii must be finite", "xyzw"[k],
                      static_cast<double>(v[k]));
        return Error{ErrorCode::kInvalidArgument, at(nullptr, c, field, i) + buf};
      }
    }
    if (s.w < 0) {
      return Error{ErrorCode::kInvalidArgument,
                   at(nullptr, c, field, i) + ".w (radius) is " + std::to_string(s.w) + ": radii must be >= 0"};
    }
  }
  return {};
}

// Planes: finite, with a normal whose squared length is a positive normal float (so that dividing by
// its length is exact enough and finite).
Status validatePlanes(std::span<const Float4> planes, size_t c, const char* field) {
  for (size_t i = 0; i < planes.size(); ++i) {
    const Float4& p = planes[i];
    const float v[4] = {p.x, p.y, p.z, p.w};
    for (int k = 0; k < 4; ++k) {
      if (!std::isfinite(v[k])) {
        char buf[64];
        std::snprintf(buf, sizeof buf, ".%c is %g: plane normals and offsets must be finite", "xyzw"[k],
                      static_cast<double>(v[k]));
        return Error{ErrorCode::kInvalidArgument, at(nullptr, c, field, i) + buf};
      }
    }
    const float n2 = p.x * p.x + p.y * p.y + p.z * p.z;  // as normalizePlane computes it
    if (!(n2 >= FLT_MIN) || !std::isfinite(n2) || !std::isfinite(p.w / std::sqrt(n2))) {
      char buf[160];
      std::snprintf(buf, sizeof buf, " normal (%g, %g, %g) is zero, too short or too long to normalize",
                    static_cast<double>(p.x), static_cast<double>(p.y), static_cast<double>(p.z));
      return Error{ErrorCode::kInvalidArgument, at(nullptr, c, field, i) + buf};
    }
  }
  return {};
}

Status checkSetting(float v, float lo, float hi, const char* name) {
  if (std::isfinite(v) && v >= lo && v <= hi) return {};
  return Error{ErrorCode::kInvalidArgument, std::string("ShapeCollisionSettings::") + name + " is " + std::to_string(v) +
                                                "; it must be finite and in [" + std::to_string(lo) + ", " +
                                                (std::isinf(hi) ? std::string("inf") : std::to_string(hi)) + "]"};
}

}  // namespace

Status validateShapeSettings(const ShapeCollisionSettings& s) {
  const float inf = INFINITY;
  VKC_TRY(checkSetting(s.friction, 0.0f, inf, "friction"));
  VKC_TRY(checkSetting(s.collisionMassScale, 0.0f, inf, "collisionMassScale"));
  VKC_TRY(checkSetting(s.alphaBegin, 0.0f, 1.0f, "alphaBegin"));
  VKC_TRY(checkSetting(s.alphaEnd, s.alphaBegin, 1.0f, "alphaEnd"));
  return {};
}

Status validateColliders(std::span<const ClothColliders> colliders, size_t clothCount) {
  if (colliders.size() != clothCount) {
    return Error{ErrorCode::kInvalidArgument, "colliders has " + std::to_string(colliders.size()) +
                                                  " entries; it must have one per cloth (" +
                                                  std::to_string(clothCount) + ")"};
  }
  uint64_t spheres = 0, capsules = 0;
  for (size_t c = 0; c < colliders.size(); ++c) {
    const ClothColliders& col = colliders[c];
    spheres += col.spheres.size();
    capsules += col.capsules.size();
    VKC_TRY(validateSpheres(col.spheres, c, "spheres"));
    if (!col.prevSpheres.empty() && col.prevSpheres.size() != col.spheres.size()) {
      return Error{ErrorCode::kInvalidArgument, "colliders[" + std::to_string(c) + "].prevSpheres has " +
                                                    std::to_string(col.prevSpheres.size()) +
                                                    " elements; it must be empty or have as many as spheres (" +
                                                    std::to_string(col.spheres.size()) + ")"};
    }
    VKC_TRY(validateSpheres(col.prevSpheres, c, "prevSpheres"));
    for (size_t k = 0; k < col.capsules.size(); ++k) {
      const Capsule& cap = col.capsules[k];
      const uint32_t idx[2] = {cap.sphere0, cap.sphere1};
      for (int e = 0; e < 2; ++e) {
        if (idx[e] >= col.spheres.size()) {
          return Error{ErrorCode::kInvalidArgument, at(nullptr, c, "capsules", k) + ".sphere" + std::to_string(e) +
                                                        " is " + std::to_string(idx[e]) + "; the cloth has " +
                                                        std::to_string(col.spheres.size()) + " spheres"};
        }
      }
      if (cap.sphere0 == cap.sphere1) {
        return Error{ErrorCode::kInvalidArgument, at(nullptr, c, "capsules", k) + ": sphere0 and sphere1 are both " +
                                                      std::to_string(cap.sphere0) +
                                                      " (a capsule needs two different spheres)"};
      }
    }
  }
  if (spheres > UINT32_MAX / 8 || capsules > UINT32_MAX / 8) {
    return Error{ErrorCode::kLimitExceeded, "colliders: too many spheres or capsules in total"};
  }
  uint64_t planes = 0, convexes = 0, convexPlanes = 0;
  for (size_t c = 0; c < colliders.size(); ++c) {
    const ClothColliders& col = colliders[c];
    planes += col.planes.size();
    convexes += col.convexes.size();
    VKC_TRY(validatePlanes(col.planes, c, "planes"));
    if (!col.prevPlanes.empty() && col.prevPlanes.size() != col.planes.size()) {
      return Error{ErrorCode::kInvalidArgument, "colliders[" + std::to_string(c) + "].prevPlanes has " +
                                                    std::to_string(col.prevPlanes.size()) +
                                                    " elements; it must be empty or have as many as planes (" +
                                                    std::to_string(col.planes.size()) + ")"};
    }
    VKC_TRY(validatePlanes(col.prevPlanes, c, "prevPlanes"));
    for (size_t k = 0; k < col.prevPlanes.size(); ++k) {
      const gpu::vec4 a = gpu::normalizePlane({col.prevPlanes[k].x, col.prevPlanes[k].y, col.prevPlanes[k].z, 0.0f});
      const gpu::vec4 b = gpu::normalizePlane({col.planes[k].x, col.planes[k].y, col.planes[k].z, 0.0f});
      if (!(a.x * b.x + a.y * b.y + a.z * b.z > -0.99f)) {
        return Error{ErrorCode::kInvalidArgument,
                     at(nullptr, c, "planes", k) +
                         ": its normal turns over within the frame (prevPlanes and planes normals are opposite, dot <= "
                         "-0.99): it cannot be interpolated"};
      }
    }
    for (size_t k = 0; k < col.convexes.size(); ++k) {
      const Convex& x = col.convexes[k];
      if (x.planes.empty()) {
        return Error{ErrorCode::kInvalidArgument,
                     at(nullptr, c, "convexes", k) + ".planes is empty: a convex needs at least one plane"};
      }
      convexPlanes += x.planes.size();
      for (size_t j = 0; j < x.planes.size(); ++j) {
        if (x.planes[j] >= col.planes.size()) {
          return Error{ErrorCode::kInvalidArgument, at(nullptr, c, "convexes", k) + ".planes[" + std::to_string(j) +
                                                        "] is " + std::to_string(x.planes[j]) + "; the cloth has " +
                                                        std::to_string(col.planes.size()) + " planes"};
        }
      }
    }
  }
  if (planes > UINT32_MAX / 8 || convexes > UINT32_MAX / 8 || convexPlanes > UINT32_MAX / 8) {
    return Error{ErrorCode::kLimitExceeded, "colliders: too many planes, convexes or convex plane indices in total"};
  }
  return {};
}

}  // namespace vkc::detail

namespace vkc {

Status detail::validateShapeLayout(const ShapeCollisionInput& in) {
  VKC_TRY(detail::validateShapeSettings(in.settings));
  if (in.particles.size() > UINT32_MAX) {
    return Error{ErrorCode::kLimitExceeded, "ShapeCollisionInput::particles: more than 2^32-1 particles"};
  }
  if (in.prevParticles.size() != in.particles.size()) {
    return Error{ErrorCode::kInvalidArgument, "ShapeCollisionInput::prevParticles has " +
                                                  std::to_string(in.prevParticles.size()) +
                                                  " elements; it must have as many as particles (" +
                                                  std::to_string(in.particles.size()) + ")"};
  }
  VKC_TRY(detail::validateClothRanges(in.cloths, in.particles.size(), "ShapeCollisionInput"));
  VKC_TRY(detail::validateColliders(in.colliders, in.cloths.size()));
  return {};
}

Status validate(const ShapeCollisionInput& in) {
  VKC_TRY(detail::validateShapeLayout(in));
  VKC_TRY(detail::validateParticles(in.particles, in.cloths, "particles"));
  VKC_TRY(detail::validateParticles(in.prevParticles, in.cloths, "prevParticles"));
  return {};
}

}  // namespace vkc
