// Scene files: one collision iteration of any number of cloths, with their colliders and the
// iteration's settings, as JSON (format "vkcollide-scene", version 1; docs/scene-format.md).
// Files whose name ends in ".json.gz" are read and written through zlib.
//
// A Scene is a plain value (std::vector storage). parseScene/loadScene check the file's structure
// (known keys only, types, required fields, array lengths, finite numbers, index ranges) and name the
// JSON path of the first problem, e.g. "cloths[1].spheres[3][2]: expected a finite number". Value
// rules that belong to a stage (radius >= 0, friction >= 0, ...) are checked by that stage's
// validate() on the view from makeSceneBuffers().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vkcollide/collide_shapes.h"
#include "vkcollide/result.h"
#include "vkcollide/types.h"

namespace vkc {

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

// One cloth, in its own (local) space. After parsing, prevParticles has particles.size() elements
// and prevSpheres spheres.size() (defaults filled in), and every capsule index is < spheres.size().
struct SceneCloth {
  std::string name;                          // optional, may be empty
  std::vector<Float4> particles;             // current positions: xyz, w = inverse mass
  std::vector<Float4> prevParticles;         // positions at the iteration's start (file default: particles)
  std::vector<Float4> spheres;               // at the iteration's end: xyz centre, w radius
  std::vector<Float4> prevSpheres;           // at the iteration's start (file default: spheres)
  std::vector<Capsule> capsules;             // pairs of sphere indices
  std::vector<Float4> restPositions;         // empty (absent) or one per particle
  std::vector<uint32_t> selfCollisionIndices;  // empty (absent: all particles) or indices < particles.size()
  std::array<float, 3> translation{0, 0, 0};   // local to world: world = rotate(local) + translation
  Float4 rotation{0, 0, 0, 1};                 // unit quaternion x, y, z, w
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
// arrays) and per-cloth collider views. `colliders` points into the Scene's vectors: the Scene must
// outlive this and its cloths' sphere/capsule vectors must not change.
struct SceneBuffers {
  std::vector<Float4> particles;
  std::vector<Float4> prevParticles;
  std::vector<ClothRange> cloths;
  std::vector<ClothColliders> colliders;

  // A shape-collision input over these arrays (one iteration over the whole frame: alpha 0 .. 1).
  ShapeCollisionInput shapeInput(const ShapeCollisionSettings& settings) {
    return {particles, prevParticles, cloths, colliders, settings};
  }
};

// Builds the concatenated layout. kLimitExceeded if the scene has 2^32 particles or more.
Result<SceneBuffers> makeSceneBuffers(const Scene& scene);

// The shape-collision settings of a scene's settings (alphaBegin 0, alphaEnd 1).
ShapeCollisionSettings shapeCollisionSettings(const SceneSettings& settings);

// Copies the buffers' particles and prevParticles back into the scene's cloths. Precondition:
// `buffers` came from makeSceneBuffers(scene) (same cloths and counts).
void storeSceneBuffers(const SceneBuffers& buffers, Scene& scene);

}  // namespace vkc
