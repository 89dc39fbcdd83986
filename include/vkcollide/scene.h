// Scene files: one collision iteration of any number of cloths, with their colliders and the
// iteration's settings, as JSON (format "vkcollide-scene", version 1; docs/scene-format.md).
// Files whose name ends in ".json.gz" are read and written through zlib.
//
// A Scene is a plain value (std::vector storage). parseScene/loadScene check the file's structure
// (known keys only, types, required fields, array lengths, finite numbers, index ranges, non-empty
// convexes, plane normals that are not zero) and name the JSON path of the first problem, e.g.
// "cloths[1].spheres[3][2]: expected a finite number". Value rules that belong to a stage (radius >=
// 0, friction >= 0, plane normals that do not turn over within the frame, ...) are checked by that
// stage's validate() on the view from makeSceneBuffers().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vkcollide/collide_shapes.h"
#include "vkcollide/inter_collision.h"
#include "vkcollide/result.h"
#include "vkcollide/self_collision.h"
#include "vkcollide/types.h"

namespace vkc {
#include "vkcollide/export.h"
VKC_API_BEGIN

inline constexpr std::string_view kSceneFormat = "vkcollide-scene";
inline constexpr uint32_t kSceneVersion = 1;

// Self collision between the particles of one cloth (absent in the file: off).
struct SceneSelfCollision {
  float distance = 0;   // minimum distance between particles, in the cloth's units
  float stiffness = 0;  // fraction of the overlap corrected per iteration, 0..1
  friend bool operator==(const SceneSelfCollision&, const SceneSelfCollision&) = default;
};

// Collision between the particles of different cloths, in world space (absent in the file: off).
struct SceneInterCollision {
  float distance = 0;
  float stiffness = 0;
  uint32_t iterations = 1;
  friend bool operator==(const SceneInterCollision&, const SceneInterCollision&) = default;
};

struct SceneSettings {
  bool continuousCollision = false;  // sweep particle paths against the moving shapes
  float friction = 0;                // shape collision friction coefficient
  float collisionMassScale = 0;      // see collide_shapes.h
  std::optional<SceneSelfCollision> selfCollision;
  std::optional<SceneInterCollision> interCollision;
  friend bool operator==(const SceneSettings&, const SceneSettings&) = default;
};

// One cloth, in its own (local) space. After parsing, prevParticles has particles.size() elements,
// prevSpheres spheres.size() and prevPlanes planes.size() (defaults filled in), every capsule index is
// < spheres.size(), every convex lists at least one plane and its indices are < planes.size(), and no
// plane normal is zero or too short or long to normalize.
struct SceneCloth {
  std::string name;                          // optional, may be empty
  std::vector<Float4> particles;             // current positions: xyz, w = inverse mass
  std::vector<Float4> prevParticles;         // positions at the iteration's start (file default: particles)
  std::vector<Float4> spheres;               // at the iteration's end: xyz centre, w radius
  std::vector<Float4> prevSpheres;           // at the iteration's start (file default: spheres)
  std::vector<Capsule> capsules;             // pairs of sphere indices
  // Planes at the iteration's end: xyz normal (non-zero; the stage normalizes it, dividing w by the
  // same length), w offset d; the inside is n.x + d < 0. Planes collide only through convexes.
  std::vector<Float4> planes;
  std::vector<Float4> prevPlanes;                  // at the iteration's start (file default: planes; empty
                                                   // in code: the same as planes, and written as planes)
  std::vector<std::vector<uint32_t>> convexes;     // each a non-empty list of indices < planes.size()
  std::vector<Float4> restPositions;         // empty (absent) or one per particle
  std::vector<uint32_t> selfCollisionIndices;  // empty (absent: all particles) or indices < particles.size()
  std::array<float, 3> translation{0, 0, 0};   // local to world: world = rotate(local) + translation
  Float4 rotation{0, 0, 0, 1};                 // unit quaternion x, y, z, w
  // Inter-collision filter (InterCollisionFilter): cloths a and b collide iff
  // (group_a & mask_b) != 0 && (group_b & mask_a) != 0. The defaults let everything collide.
  uint32_t collisionGroup = 1;
  uint32_t collisionMask = 0xFFFFFFFFu;
  // Every field equal (floats compared with ==).
  friend bool operator==(const SceneCloth& a, const SceneCloth& b);
};

struct Scene {
  SceneSettings settings;
  std::vector<SceneCloth> cloths;
  friend bool operator==(const Scene&, const Scene&) = default;  // float fields compare with ==
};

// Parses a scene from JSON text. Errors (kInvalidArgument) name the JSON path, or the line and column
// for a syntax error.
Result<Scene> parseScene(std::string_view json);

// Reads and parses a file; ".json.gz" files are gunzipped. kIo if the file cannot be read.
Result<Scene> loadScene(const std::string& path);

// Writes JSON (gzip for ".json.gz"): every float in shortest round-trip form, so that
// loadScene(saveScene(s)) == s bitwise. All fields are written, defaults included. The file is
// written to "<path>.tmp" and renamed, so on error no file at `path` is created or changed.
Status saveScene(const Scene& scene, const std::string& path);

// The JSON text saveScene writes.
std::string writeScene(const Scene& scene);

// A Scene laid out for the stages: every cloth's particles concatenated (cloth c is cloths[c] of the
// arrays) and per-cloth collider, self-collision and inter-collision views. `colliders` and
// `selfSubsets` point into the Scene's vectors (and `colliders[c].convexes` into this object's
// `convexes`): the Scene must outlive this and its cloths' spheres, capsules, planes, convexes and
// selfCollisionIndices must not change. A copy's `colliders` point into the copy's own `convexes`.
struct SceneBuffers {
  std::vector<Float4> particles;
  std::vector<Float4> prevParticles;
  std::vector<ClothRange> cloths;
  std::vector<ClothColliders> colliders;
  // Every cloth's convexes as Convex views (cloths concatenated; each lists a SceneCloth::convexes
  // entry): what colliders[c].convexes spans.
  std::vector<Convex> convexes;
  // Every cloth's restPositions concatenated (particles.size() elements) when every cloth that has
  // particles gives them; empty when none does, or when only some do and self collision is off.
  std::vector<Float4> restPositions;
  // Per cloth, its selfCollisionIndices (cloth-local; an empty span: all of the cloth's particles).
  std::vector<std::span<const uint32_t>> selfSubsets;
  // Per cloth, its range with its local-to-world transform (translation, rotation) for inter collision.
  std::vector<InterClothDesc> interCloths;
  // One entry per cloth, in order: its collisionGroup and collisionMask.
  std::vector<InterCollisionFilter> interFilters;

  SceneBuffers() = default;
  // Copies re-point colliders[c].convexes into the copy's own `convexes`; moves keep them valid.
  SceneBuffers(const SceneBuffers& other);
  SceneBuffers& operator=(const SceneBuffers& other);
  SceneBuffers(SceneBuffers&&) noexcept = default;
  SceneBuffers& operator=(SceneBuffers&&) noexcept = default;

  // A shape-collision input over these arrays (one iteration over the whole frame: alpha 0 .. 1).
  ShapeCollisionInput shapeInput(const ShapeCollisionSettings& settings) {
    return {particles, prevParticles, cloths, colliders, settings};
  }

  // A self-collision input over these arrays: `particles` (updated in place), `restPositions`, the
  // cloth ranges and one subset per cloth. Pass it to validate() / collideSelf*() as is.
  SelfCollisionInput selfInput(const SelfCollisionSettings& settings) {
    return {particles, restPositions, cloths, selfSubsets, settings};
  }

  // An inter-collision input over these arrays: `particles` (local positions, updated in place), the
  // cloths' transforms and one filter per cloth. Pass it to validate() / collideInterCpu() /
  // collideInter() as is.
  InterCollisionInput interInput(const InterCollisionSettings& settings) {
    return {particles, interCloths, interFilters, settings};
  }
};

// Builds the concatenated layout. kLimitExceeded if the scene has 2^32 particles or more.
// kInvalidArgument, naming the cloth, if a cloth's prevParticles or restPositions (when given) do
// not have one element per particle, or if the scene enables self collision and gives restPositions
// for some cloths with particles but not for others (self collision culls with rest positions for
// every cloth or for none).
Result<SceneBuffers> makeSceneBuffers(const Scene& scene);

// The shape-collision settings of a scene's settings (alphaBegin 0, alphaEnd 1).
ShapeCollisionSettings shapeCollisionSettings(const SceneSettings& settings);

// The self-collision settings of a scene's settings.selfCollision (distance and stiffness as given:
// the scene's stiffness is already the fraction per pass). Without settings.selfCollision: distance
// 0, which validate() refuses.
SelfCollisionSettings selfCollisionSettings(const SceneSettings& settings);

// The inter-collision settings of a scene's settings.interCollision (distance, stiffness and
// iterations as given). Without settings.interCollision: distance 0, which validate() refuses.
InterCollisionSettings interCollisionSettings(const SceneSettings& settings);

// Copies the buffers' particles and prevParticles back into the scene's cloths. Precondition:
// `buffers` came from makeSceneBuffers(scene) (same cloths and counts).
void storeSceneBuffers(const SceneBuffers& buffers, Scene& scene);

VKC_API_END
}  // namespace vkc
