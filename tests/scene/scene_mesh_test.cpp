// Scene format version 2: triangle meshes (inline and OBJ), mesh-collision settings and the cloths'
// mesh lists: parsing, defaults, writing back bitwise, bad input named by its path, version 1 files
// unchanged, and the scene layer's mesh collision in a cloth's own space (CPU backends).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "support/scene_text.h"
#include "vkcollide/scene.h"

namespace vkc {
namespace {

const std::string kSamples = std::string(VKC_SOURCE_DIR) + "/samples/scenes/";

// A scene with one cloth over three meshes: a static floor (two triangles), a rigid moving
// triangle and a deforming triangle.
const char* kMeshes = R"({
  "format": "vkcollide-scene", "version": 2,
  "settings": {"meshCollision": {"continuous": true, "maxBounces": 6}},
  "cloths": [
    {"particles": [[0, 0.05, 0, 1], [0.2, 1, 0, 1]], "prevParticles": [[0, 0.5, 0, 1], [0.2, 1, 0, 1]],
     "meshes": [0, 2]}
  ],
  "meshes": [
    {"name": "floor", "vertices": [[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]],
     "triangles": [[0, 2, 1], [0, 3, 2]], "thickness": 0.1, "restitution": 0.5, "friction": 0.25,
     "staticFriction": 0.75, "oneSided": true},
    {"vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]], "triangles": [[0, 1, 2]], "thickness": 0.01,
     "transform": {"translation": [0, 2, 0], "rotation": [0, 0, 0.38268343, 0.92387953]}},
    {"vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]], "prevVertices": [[0, 0, -1], [1, 0, -1], [0, 1, -1]],
     "triangles": [[0, 1, 2]], "thickness": 0}
  ]
})";

using test::errorOf;
using test::replaced;

std::string tempPath(const std::string& name) {
  return ::testing::TempDir() + "vkc_mesh_" + std::to_string(::getpid()) + "_" + name;
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

TEST(SceneMeshParse, MotionsSurfacesAndSettings) {
  Result<Scene> s = parseScene(kMeshes);
  ASSERT_TRUE(s) << s.message();
  ASSERT_TRUE(s->settings.meshCollision);
  EXPECT_TRUE(s->settings.meshCollision->continuous);
  EXPECT_EQ(s->settings.meshCollision->maxBounces, 6u);
  const MeshCollisionSettings ms = meshCollisionSettings(s->settings);
  EXPECT_TRUE(ms.continuous);
  EXPECT_EQ(ms.maxBounces, 6u);
  EXPECT_EQ(s->cloths[0].meshes, (std::vector<uint32_t>{0, 2}));
  ASSERT_EQ(s->meshes.size(), 3u);
  const SceneMesh& floor = s->meshes[0];
  EXPECT_EQ(floor.name, "floor");
  EXPECT_EQ(floor.motion(), MeshMotion::kStatic);
  EXPECT_EQ(floor.vertices.size(), 4u);
  EXPECT_EQ(floor.vertices[2].x, 1.0f);
  EXPECT_EQ(floor.vertices[2].z, 1.0f);
  EXPECT_EQ(floor.vertices[2].w, 0.0f);
  EXPECT_EQ(floor.indices, (std::vector<uint32_t>{0, 2, 1, 0, 3, 2}));
  EXPECT_EQ(floor.surface.thickness, 0.1f);
  EXPECT_EQ(floor.surface.restitution, 0.5f);
  EXPECT_EQ(floor.surface.friction, 0.25f);
  EXPECT_EQ(floor.surface.staticFriction, 0.75f);
  EXPECT_TRUE(floor.surface.oneSided);
  const SceneMesh& rigid = s->meshes[1];
  EXPECT_EQ(rigid.motion(), MeshMotion::kRigid);
  ASSERT_TRUE(rigid.transform && rigid.prevTransform);
  EXPECT_EQ(*rigid.prevTransform, *rigid.transform);  // default: no motion over the iteration
  EXPECT_EQ(rigid.transform->translation[1], 2.0f);
  EXPECT_EQ(rigid.transform->rotation.z, 0.38268343f);
  EXPECT_FALSE(rigid.surface.oneSided);
  EXPECT_EQ(rigid.surface.restitution, 0.0f);
  EXPECT_EQ(s->meshes[2].motion(), MeshMotion::kDeforming);
  EXPECT_EQ(s->meshes[2].prevVertices[1].z, -1.0f);

  // Defaults: no meshCollision settings -> continuous off, 4 bounces; a cloth without "meshes".
  Result<Scene> d = parseScene(replaced(kMeshes, R"("meshCollision": {"continuous": true, "maxBounces": 6})",
                                        R"("friction": 0)"));
  ASSERT_TRUE(d) << d.message();
  EXPECT_FALSE(d->settings.meshCollision);
  EXPECT_FALSE(meshCollisionSettings(d->settings).continuous);
  EXPECT_EQ(meshCollisionSettings(d->settings).maxBounces, 4u);
}

TEST(SceneMeshParse, RoundTripBitwiseAndVersions) {
  Result<Scene> s = parseScene(kMeshes);
  ASSERT_TRUE(s) << s.message();
  s->meshes[1].prevTransform->translation = {0.1f, 1.9f, -0.3f};
  s->meshes[1].surface.thickness = 1.0f / 3.0f;
  const std::string text = writeScene(*s);
  EXPECT_NE(text.find("\"version\": 2"), std::string::npos);
  Result<Scene> back = parseScene(text);
  ASSERT_TRUE(back) << back.message() << "\n" << text;
  EXPECT_TRUE(*back == *s);
  // Changing any mesh field breaks the equality (the comparison looks at it).
  Scene changed = *back;
  changed.meshes[2].surface.staticFriction = 0.5f;
  EXPECT_FALSE(changed == *s);
  changed = *back;
  changed.cloths[0].meshes = {0};
  EXPECT_FALSE(changed == *s);

  // Version 1 files load unchanged and are written back as version 1 (nothing of version 2 in them).
  for (const char* name : {"sphere-and-capsule.json", "inter-collision-cloths.json", "planes-and-convexes.json"}) {
    Result<Scene> v1 = loadScene(kSamples + name);
    ASSERT_TRUE(v1) << v1.message();
    EXPECT_TRUE(v1->meshes.empty());
    EXPECT_FALSE(v1->settings.meshCollision);
    const std::string w = writeScene(*v1);
    EXPECT_NE(w.find("\"version\": 1"), std::string::npos) << name;
    Result<Scene> again = parseScene(w);
    ASSERT_TRUE(again) << again.message();
    EXPECT_TRUE(*again == *v1) << name;
  }
}

TEST(SceneMeshParse, BadInputIsNamed) {
  EXPECT_ERROR(replaced(kMeshes, R"("name": "floor",)", R"("name": "floor", "thicknes": 1,)"),
               "meshes[0].thicknes: unknown key (known keys here: name, vertices, triangles, obj");
  EXPECT_ERROR(replaced(kMeshes, R"("triangles": [[0, 2, 1], [0, 3, 2]])", R"("triangles": [[0, 2, 1], [0, 4, 2]])"),
               "meshes[0].triangles[1][1]: vertex index 4 is out of range; the mesh has 4 vertices");
  EXPECT_ERROR(replaced(kMeshes, R"([[-1, 0, -1], [1, 0, -1])", R"([[-1, 0, -1], [1, NaN, -1])"),
               "meshes[0].vertices[1][1]");
  EXPECT_ERROR(replaced(kMeshes, R"([[-1, 0, -1], [1, 0, -1])", R"([[-1, 0, -1], [1, 1e39, -1])"),
               "meshes[0].vertices[1][1]: expected a finite number");
  EXPECT_ERROR(replaced(kMeshes, R"("rotation": [0, 0, 0.38268343, 0.92387953])", R"("rotation": [0, 0, 0.5, 0.9])"),
               "meshes[1].transform.rotation: (0, 0, 0.5, 0.9) is not a unit quaternion");
  EXPECT_ERROR(replaced(kMeshes, R"("meshes": [0, 2])", R"("meshes": [0, 3])"),
               "cloths[0].meshes[1]: mesh index 3 is out of range; the scene has 3 meshes");
  EXPECT_ERROR(replaced(kMeshes, R"("meshes": [0, 2])", R"("meshes": [2, 2])"), "cloths[0].meshes[1]: mesh 2 is listed twice");
  EXPECT_ERROR(replaced(kMeshes, R"("thickness": 0.1,)", ""), "meshes[0]: missing required key \"thickness\"");
  EXPECT_ERROR(replaced(kMeshes, R"("thickness": 0.1,)", R"("thickness": -0.1,)"), "meshes[0].thickness: is -0.1: it must be >= 0");
  EXPECT_ERROR(replaced(kMeshes, R"("restitution": 0.5)", R"("restitution": 1.5)"), "meshes[0].restitution: is 1.5: it must be in [0, 1]");
  EXPECT_ERROR(replaced(kMeshes, R"("friction": 0.25)", R"("friction": -1)"), "meshes[0].friction: is -1: it must be >= 0");
  EXPECT_ERROR(replaced(kMeshes, R"("maxBounces": 6)", R"("maxBounces": 17)"), "settings.meshCollision.maxBounces: is 17: at most 16");
  EXPECT_ERROR(replaced(kMeshes, R"("continuous": true)", R"("continous": true)"), "settings.meshCollision.continous: unknown key");
  EXPECT_ERROR(replaced(kMeshes, R"("triangles": [[0, 1, 2]], "thickness": 0})", R"("triangles": [[0, 1, 2]], "thickness": 0, "prevTransform": {}})"),
               "meshes[2].prevTransform: needs \"transform\"");
  EXPECT_ERROR(replaced(kMeshes, R"("triangles": [[0, 2, 1], [0, 3, 2]])", R"("triangles": [])"),
               "meshes[0].triangles: is empty");
  EXPECT_ERROR(replaced(kMeshes, R"("triangles": [[0, 2, 1], [0, 3, 2]])", R"("triangles": [[0, 2]])"),
               "meshes[0].triangles[0]: expected 3 vertex indices [a, b, c], found 2");
  EXPECT_ERROR(replaced(kMeshes, R"("prevVertices": [[0, 0, -1], [1, 0, -1], [0, 1, -1]])", R"("prevVertices": [[0, 0, -1]])"),
               "meshes[2].prevVertices: has 1 elements; vertices has 3");
  EXPECT_ERROR(replaced(kMeshes, R"("triangles": [[0, 2, 1], [0, 3, 2]],)", R"("triangles": [[0, 2, 1], [0, 3, 2]], "obj": "x.obj",)"),
               "meshes[0].obj: a mesh has \"vertices\" and \"triangles\" or \"obj\", not both");
  // Version 2 keys in a version 1 file.
  EXPECT_ERROR(replaced(kMeshes, R"("version": 2)", R"("version": 1)"), "meshes and mesh collision need \"version\": 2");
  // A missing OBJ file names the mesh and the file.
  const std::string missing = errorOf(replaced(kMeshes, R"("vertices": [[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]],
     "triangles": [[0, 2, 1], [0, 3, 2]],)", R"("obj": "no-such-mesh.obj",)"), "/nonexistent-dir");
  EXPECT_NE(missing.find("meshes[0].obj: "), std::string::npos) << missing;
  EXPECT_NE(missing.find("/nonexistent-dir/no-such-mesh.obj"), std::string::npos) << missing;
  // Text without a location reads no file: "obj" needs parseScene(json, baseDirectory) or loadScene;
  // and only regular files are read.
  const std::string withObj = replaced(kMeshes, R"("vertices": [[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]],
     "triangles": [[0, 2, 1], [0, 3, 2]],)", R"("obj": "/dev/zero",)");
  EXPECT_ERROR(withObj, "meshes[0].obj: a mesh file needs the scene's location");
  const std::string device = errorOf(withObj, "/");
  EXPECT_NE(device.find("/dev/zero: not a regular file"), std::string::npos) << device;
}

TEST(SceneMeshParse, ObjRelativeToTheSceneFileAndTriangulated) {
  // A quad and a pentagon: 2 + 3 triangles, with a normal and a texture coordinate to skip.
  const std::string dir = tempPath("dir");
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "/sub'").c_str()), 0);
  writeText(dir + "/sub/poly.obj",
            "# test\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 2 0 0\nv 3 0 0\nv 3 1 0\nv 2.5 2 0\nv 2 1 0\n"
            "vn 0 0 1\nvt 0 0\nf 1/1/1 2/1/1 3/1/1 4/1/1\nf 5 6 7 8 9\n");
  const std::string scenePath = dir + "/scene.json";
  writeText(scenePath, R"({"format": "vkcollide-scene", "version": 2, "cloths": [],
    "meshes": [{"obj": "sub/poly.obj", "thickness": 0.5}]})");
  Result<Scene> s = loadScene(scenePath);
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(s->meshes.size(), 1u);
  EXPECT_EQ(s->meshes[0].vertices.size(), 9u);
  EXPECT_EQ(s->meshes[0].indices.size(), 15u);
  EXPECT_EQ(s->meshes[0].vertices[7].x, 2.5f);
  EXPECT_EQ(s->meshes[0].vertices[7].y, 2.0f);
  // Written back with the vertices inline, the scene reads back equal (no file needed then).
  Result<Scene> back = parseScene(writeScene(*s));
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(*back == *s);

  // An OBJ file without faces, and one with an index beyond its vertices.
  writeText(dir + "/sub/poly.obj", "v 0 0 0\nv 1 0 0\n");
  Result<Scene> noFaces = loadScene(scenePath);
  ASSERT_FALSE(noFaces);
  EXPECT_NE(noFaces.message().find("meshes[0].obj: "), std::string::npos) << noFaces.message();
  EXPECT_NE(noFaces.message().find("no triangles"), std::string::npos) << noFaces.message();
  std::remove((dir + "/sub/poly.obj").c_str());
  Result<Scene> gone = loadScene(scenePath);
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.message().find("sub/poly.obj"), std::string::npos) << gone.message();
  ASSERT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
}

// The version 2 example in docs/scene-format.md (its second JSON block) is a valid scene.
TEST(SceneMeshParse, DocumentedExampleParses) {
  std::ifstream f(std::string(VKC_SOURCE_DIR) + "/docs/scene-format.md", std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  const size_t first = doc.find("```json\n");
  ASSERT_NE(first, std::string::npos);
  const size_t begin = doc.find("```json\n", first + 8);
  ASSERT_NE(begin, std::string::npos);
  const size_t end = doc.find("```", begin + 8);
  ASSERT_NE(end, std::string::npos);
  Result<Scene> s = parseScene(std::string_view(doc).substr(begin + 8, end - begin - 8));
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(s->meshes.size(), 1u);
  EXPECT_TRUE(s->meshes[0].surface.oneSided);
  EXPECT_EQ(s->cloths[0].meshes, std::vector<uint32_t>{0});
  // The cloth's particle (world x = 0.5) falls through y = 0 and stops at the floor's thickness.
  Result<SceneBuffers> b = makeSceneBuffers(*s);
  ASSERT_TRUE(b) << b.message();
  const Status st = collideSceneMeshes(*b, b->meshes, meshCollisionSettings(s->settings), {},
                                       [](const MeshCollisionInput& in) { return collideMeshesCpu(in, Backend::kCpuScalar); });
  ASSERT_TRUE(st.ok()) << st.message();
  // (continuous: the stage stops it a hair above the thickness; 0.0501 measured)
  EXPECT_GE(b->particles[0].y, 0.05f - 1e-6f);
  EXPECT_LT(b->particles[0].y, 0.0505f);
  EXPECT_EQ(b->particles[0].x, 0.0f);  // local x (world 0.5): no tangential motion
}

// meshesAt: rigid transforms interpolated (exact at the ends, the midpoint of a turn about y turns
// half as far), deforming vertices lerped, static meshes untouched.
TEST(SceneMeshBuffers, MeshesAtSplitsTheMotion) {
  Result<Scene> s = parseScene(kMeshes);
  ASSERT_TRUE(s) << s.message();
  s->meshes[1].prevTransform->rotation = {0, 0, 0, 1};
  s->meshes[1].prevTransform->translation = {0, 0, 0};
  Result<SceneBuffers> b = makeSceneBuffers(*s);
  ASSERT_TRUE(b) << b.message();
  MeshesAtSubstep sub;
  ASSERT_TRUE(meshesAt(b->meshes, 0.0f, 1.0f, sub).ok());
  EXPECT_EQ(std::memcmp(&sub.meshes[1].transform, &b->meshes[1].transform, sizeof(RigidTransform)), 0);
  EXPECT_EQ(std::memcmp(&sub.meshes[1].prevTransform, &b->meshes[1].prevTransform, sizeof(RigidTransform)), 0);
  ASSERT_TRUE(meshesAt(b->meshes, 0.25f, 0.5f, sub).ok());
  // 45 degrees about z at the end: 22.5 at alpha 0.5, 11.25 at 0.25; translation 2 -> 1, 0.5.
  EXPECT_NEAR(sub.meshes[1].transform.rotation.z, std::sin(0.19634954f), 1e-6f);
  EXPECT_NEAR(sub.meshes[1].transform.rotation.w, std::cos(0.19634954f), 1e-6f);
  EXPECT_NEAR(sub.meshes[1].prevTransform.rotation.z, std::sin(0.09817477f), 1e-6f);
  EXPECT_NEAR(sub.meshes[1].transform.translation.y, 1.0f, 1e-6f);
  EXPECT_NEAR(sub.meshes[1].prevTransform.translation.y, 0.5f, 1e-6f);
  // Deforming: z from -1 to 0 -> -0.75 and -0.5.
  EXPECT_NEAR(sub.meshes[2].prevVertices[0].z, -0.75f, 1e-6f);
  EXPECT_NEAR(sub.meshes[2].vertices[0].z, -0.5f, 1e-6f);
  EXPECT_EQ(sub.meshes[0].vertices.data(), b->meshes[0].vertices.data());
  EXPECT_FALSE(meshesAt(b->meshes, 0.5f, 0.25f, sub).ok());
}

TEST(SceneMeshParse, SpotSampleScene) {
  Result<Scene> s = loadScene(kSamples + "spot-drape.json");
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(s->meshes.size(), 1u);
  EXPECT_EQ(s->meshes[0].indices.size(), 3u * 1654u);  // spot_low_resolution.obj
  EXPECT_EQ(s->meshes[0].motion(), MeshMotion::kRigid);
  EXPECT_TRUE(sceneHasMeshCollision(*s));
  Result<SceneBuffers> b = makeSceneBuffers(*s);
  ASSERT_TRUE(b) << b.message();
  ASSERT_EQ(b->meshes.size(), 1u);
  EXPECT_EQ(b->meshes[0].indices.size(), 3u * 1654u);
  EXPECT_EQ(b->meshes[0].motion, MeshMotion::kRigid);
}

// A rotated, translated cloth over a static floor at world y = 0: the particle that ends below the
// floor comes back in the cloth's space at `thickness` above it in world space, the one far away
// keeps its bits, and a cloth that lists no mesh is untouched.
TEST(SceneMeshBuffers, CollideInTheClothsSpace) {
  Scene scene;
  SceneMesh floor;
  floor.vertices = {{-4, 0, -4, 0}, {4, 0, -4, 0}, {4, 0, 4, 0}, {-4, 0, 4, 0}};
  floor.indices = {0, 2, 1, 0, 3, 2};
  floor.surface.thickness = 0.1f;
  scene.meshes.push_back(floor);
  // Cloth 0: local -> world is a quarter turn about z (local x -> world y) and a lift of 1 in y.
  SceneCloth c;
  c.rotation = {0, 0, 0.70710678f, 0.70710678f};
  c.translation = {0.25f, 1.0f, 0.5f};
  // World y = 1 + local x: local x = -0.5 -> y 0.5 (previous), local x = -1.05 -> y -0.05 (current).
  c.prevParticles = {{-0.5f, 0.0f, 0.0f, 1.0f}, {3.0f, 0.1f, 0.2f, 1.0f}, {-0.5f, 0.0f, 0.0f, 0.0f}};
  c.particles = {{-1.05f, 0.0f, 0.0f, 1.0f}, {3.0f, 0.1f, 0.2f, 1.0f}, {-1.5f, 0.0f, 0.0f, 0.0f}};
  c.meshes = {0};
  scene.cloths.push_back(c);
  SceneCloth other = c;  // the same particles, no meshes
  other.meshes.clear();
  scene.cloths.push_back(other);
  Result<SceneBuffers> b = makeSceneBuffers(scene);
  ASSERT_TRUE(b) << b.message();
  const SceneBuffers before = *b;
  for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
    SceneBuffers run = before;
    const Status st = collideSceneMeshes(run, run.meshes, meshCollisionSettings(scene.settings), {},
                                         [&](const MeshCollisionInput& in) { return collideMeshesCpu(in, backend); });
    ASSERT_TRUE(st.ok()) << st.message();
    // Particle 0: world y = 1 + local x must be 0.1 (thickness), x and z unchanged.
    const Float4 p = run.particles[0];
    EXPECT_NEAR(1.0 + double{p.x}, 0.1, 1e-5) << toString(backend);
    EXPECT_NEAR(p.y, 0.0, 1e-5);
    EXPECT_NEAR(p.z, 0.0, 1e-5);
    EXPECT_EQ(p.w, 1.0f);
    // Untouched: particle 1 (far), particle 2 (inverse mass 0), and all of cloth 1.
    for (size_t i = 1; i < before.particles.size(); ++i) {
      EXPECT_EQ(std::memcmp(&run.particles[i], &before.particles[i], sizeof(Float4)), 0) << i;
      EXPECT_EQ(std::memcmp(&run.prevParticles[i], &before.prevParticles[i], sizeof(Float4)), 0) << i;
    }
  }
  // Errors come back unchanged and leave the buffers as they were.
  SceneBuffers run = before;
  scene.meshes[0].surface.thickness = -1.0f;
  Result<SceneBuffers> bad = makeSceneBuffers(scene);
  ASSERT_TRUE(bad);
  const Status st = collideSceneMeshes(*bad, bad->meshes, {}, {}, [](const MeshCollisionInput& in) {
    return collideMeshesCpu(in, Backend::kCpuScalar);
  });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("thickness"), std::string::npos) << st.message();
  EXPECT_EQ(std::memcmp(bad->particles.data(), before.particles.data(), before.particles.size() * sizeof(Float4)), 0);
  // A cloth listing a mesh the scene lacks (a Scene built in code) is refused by makeSceneBuffers.
  scene.cloths[1].meshes = {1};
  Result<SceneBuffers> missing = makeSceneBuffers(scene);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("cloths[1].meshes[0] is 1; the scene has 1 meshes"), std::string::npos)
      << missing.message();
}

}  // namespace
}  // namespace vkc
