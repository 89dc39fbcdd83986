// Scene files: one collision iteration of any number of cloths, with their colliders and the
// iteration's settings, as JSON (format "vkcollide-scene", versions 1 and 2; docs/scene-format.md).
// Version 2 adds triangle meshes (inline or from Wavefront OBJ files) and the mesh-collision settings.
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
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vkcollide/collide_meshes.h"
#include "vkcollide/collide_shapes.h"
#include "vkcollide/inter_collision.h"
#include "vkcollide/result.h"
#include "vkcollide/self_collision.h"
#include "vkcollide/types.h"

namespace vkc {
#include "vkcollide/export.h"
VKC_API_BEGIN

inline constexpr std::string_view kSceneFormat = "vkcollide-scene";
// The newest version this build reads (it reads 1 and 2) and writes. writeScene writes version 1 for a
// scene without meshes and mesh-collision settings (readable by older builds), else version 2.
inline constexpr uint32_t kSceneVersion = 2;

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

// Mesh collision settings (version 2; absent in the file: the defaults). The stage runs when a cloth
// lists meshes; restitution and friction are per mesh (SceneMesh::surface).
struct SceneMeshCollision {
  bool continuous = false;  // sweep each particle's path against the moving meshes
  uint32_t maxBounces = 4;  // 0 .. kMaxMeshBounces
  friend bool operator==(const SceneMeshCollision&, const SceneMeshCollision&) = default;
};

struct SceneSettings {
  bool continuousCollision = false;  // sweep particle paths against the moving shapes
  float friction = 0;                // shape collision friction coefficient
  float collisionMassScale = 0;      // see collide_shapes.h
  std::optional<SceneSelfCollision> selfCollision;
  std::optional<SceneInterCollision> interCollision;
  std::optional<SceneMeshCollision> meshCollision;  // version 2
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
  // Version 2: the scene's meshes this cloth collides with (indices < Scene::meshes.size(), each at
  // most once). Its particles meet them through the cloth's translation and rotation (the meshes are
  // in world space); the results come back in the cloth's space.
  std::vector<uint32_t> meshes;
  // Every field equal (floats compared with ==).
  friend bool operator==(const SceneCloth& a, const SceneCloth& b);
};

// A mesh's rigid transform in a scene file: world = rotate(rotation, mesh) + translation.
struct SceneTransform {
  std::array<float, 3> translation{0, 0, 0};
  Float4 rotation{0, 0, 0, 1};  // unit quaternion x, y, z, w (|q| within 1e-3 of 1)
  friend bool operator==(const SceneTransform&, const SceneTransform&) = default;
};

// One triangle mesh (version 2), in world space. Its motion over the iteration follows from what it
// has: `transform` -> rigid (vertices in mesh space, prevTransform -> transform), prevVertices ->
// deforming (prevVertices -> vertices), neither -> static. After parsing: at least one vertex and one
// triangle, every index < vertices.size(), prevVertices empty or one per vertex (never together with
// a transform), prevTransform set exactly when transform is (file default: transform), and both
// rotations within 1e-3 of unit length. A mesh read from "obj" holds the file's vertices and
// triangulated faces (the file name is not kept: scenes are written with the vertices inline).
struct SceneMesh {
  std::string name;                   // optional, may be empty
  std::vector<Float4> vertices;       // xyz; w is not in the file (the parser sets 0; the stage ignores it)
  std::vector<Float4> prevVertices;   // deforming only: positions at the iteration's start
  std::vector<uint32_t> indices;      // 3 per triangle
  std::optional<SceneTransform> transform;      // rigid: at the iteration's end
  std::optional<SceneTransform> prevTransform;  // rigid: at the iteration's start
  MeshSurface surface;                // thickness (required in the file), oneSided, restitution, friction, staticFriction

  MeshMotion motion() const {
    return transform ? MeshMotion::kRigid : !prevVertices.empty() ? MeshMotion::kDeforming : MeshMotion::kStatic;
  }
  // Every field equal (floats compared with ==).
  friend bool operator==(const SceneMesh& a, const SceneMesh& b);
};

struct Scene {
  SceneSettings settings;
  std::vector<SceneCloth> cloths;
  std::vector<SceneMesh> meshes;  // version 2
  friend bool operator==(const Scene&, const Scene&) = default;  // float fields compare with ==
};

// Parses a scene from JSON text. Errors (kInvalidArgument) name the JSON path, or the line and column
// for a syntax error. Text has no location, so a mesh given by "obj" is an error here (nothing is read
// from files: untrusted text cannot make the parser open one); use the overload below or loadScene.
Result<Scene> parseScene(std::string_view json);
// The same, reading each mesh's "obj" file at its path relative to `baseDirectory` ("" or "." for the
// working directory; absolute paths as they are). Errors in an OBJ file name the mesh and the file.
Result<Scene> parseScene(std::string_view json, const std::string& baseDirectory);

// Reads and parses a file; ".json.gz" files are gunzipped; "obj" paths are relative to the file's
// directory. kIo if the file cannot be read.
Result<Scene> loadScene(const std::string& path);

// Reads a Wavefront OBJ file's vertices and faces (polygons triangulated, all groups and objects
// together; normals, texture coordinates and materials ignored) into `mesh.vertices` (w = 0) and
// `mesh.indices`. kIo if the file cannot be read, kInvalidArgument (naming the file and line where
// the reader gives one) if it has no triangles, a non-finite coordinate or an index out of range.
Status loadObjMesh(const std::string& path, SceneMesh& mesh);

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
  // Version 2: the scene's meshes as the mesh stage reads them (views into Scene::meshes: vertices,
  // prevVertices, indices; motion, transforms and surface copied), and per cloth the meshes it lists
  // (a view into SceneCloth::meshes).
  std::vector<CollisionMesh> meshes;
  std::vector<ClothMeshes> clothMeshes;

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

// Whether any cloth lists a mesh (the mesh stage has work).
bool sceneHasMeshCollision(const Scene& scene);

// The mesh-collision settings of a scene's settings.meshCollision (defaults without it).
MeshCollisionSettings meshCollisionSettings(const SceneSettings& settings);

// One mesh-collision iteration of the buffers' cloths, which are in their own spaces, against world
// space `meshes` (buffers.meshes, or the caller's copy with other transforms, e.g. interpolated for a
// substep; same layout): builds the world-space input (every particle placed by its cloth's
// translation and rotation, buffers.clothMeshes, `settings`, `tree`), calls `collide` on it (e.g.
// collideMeshesCpu with a backend, or a MeshCollisionStage's run()), and stores the particles it
// changed back in their cloth's space (particles whose world position and previous position come
// back bitwise unchanged keep their local bits). On error nothing is changed.
Status collideSceneMeshes(SceneBuffers& buffers, std::span<const CollisionMesh> meshes,
                          const MeshCollisionSettings& settings, const MeshTree& tree,
                          const std::function<Status(const MeshCollisionInput&)>& collide);

// A rigid motion at time alpha in [0, 1] of the motion from `start` (alpha 0) to `end` (alpha 1), as
// the mesh stage models it (collide_meshes.h): the translation linear in alpha, the rotation turning
// at a constant rate about a fixed axis the shorter way (slerp: start * (start^-1 end)^alpha),
// normalized. Exact at 0 and 1 (returns the inputs' values), computed in double.
RigidTransform interpolateRigidTransform(const RigidTransform& start, const RigidTransform& end, float alpha);

// Meshes over the part [alphaBegin, alphaEnd] of their motion (0 <= alphaBegin <= alphaEnd <= 1), for
// a solver that splits the iteration into substeps: each rigid mesh's prevTransform and transform are
// interpolateRigidTransform at alphaBegin and alphaEnd, each deforming mesh's prevVertices and
// vertices are lerped (into this object's storage), static meshes are as given. `meshes` points into
// the storage and the source meshes' other arrays (the sources must outlive it).
struct MeshesAtSubstep {
  std::vector<CollisionMesh> meshes;
  std::vector<std::vector<Float4>> vertices, prevVertices;  // per mesh; deforming meshes only
};
Status meshesAt(std::span<const CollisionMesh> meshes, float alphaBegin, float alphaEnd, MeshesAtSubstep& out);

// Builds the concatenated layout. kLimitExceeded if the scene has 2^32 particles or more.
// kInvalidArgument, naming the cloth, if a cloth's prevParticles or restPositions (when given) do
// not have one element per particle, or lists a mesh the scene does not have, or if the scene
// enables self collision and gives restPositions
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
