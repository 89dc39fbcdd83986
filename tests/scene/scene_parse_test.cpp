// Scene parsing: defaults, and every kind of bad file gives a kInvalidArgument error naming the JSON
// path (or the line and column of a syntax error).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "support/scene_text.h"
#include "vkcollide/scene.h"

namespace vkc {
namespace {

// A valid two-cloth scene; tests replace parts of it.
const char* kValid = R"({
  "format": "vkcollide-scene", "version": 1,
  "settings": {"continuousCollision": false, "friction": 0.25, "collisionMassScale": 0.5},
  "cloths": [
    {"name": "a", "particles": [[0, 1, 0, 1], [0.5, 1, 0, 0]],
     "spheres": [[0, 0, 0, 0.5], [1, 0, 0, 0.25]], "capsules": [[0, 1]]},
    {"particles": [[0, 2, 0, 1]], "prevParticles": [[0, 2.5, 0, 1]],
     "spheres": [[0, 0, 0, 1]], "prevSpheres": [[0, -0.1, 0, 1]],
     "translation": [1, 2, 3], "rotation": [0, 0.7071068, 0, 0.7071068],
     "collisionGroup": 6, "collisionMask": 4294967295,
     "restPositions": [[0, 0, 0, 0]], "selfCollisionIndices": [0]}
  ]
})";

using test::errorOf;
using test::replaced;

TEST(SceneParse, ValidSceneAndDefaults) {
  Result<Scene> s = parseScene(kValid);
  ASSERT_TRUE(s) << s.message();
  EXPECT_FALSE(s->settings.continuousCollision);
  EXPECT_EQ(s->settings.friction, 0.25f);
  EXPECT_EQ(s->settings.collisionMassScale, 0.5f);
  EXPECT_FALSE(s->settings.selfCollision);
  EXPECT_FALSE(s->settings.interCollision);
  ASSERT_EQ(s->cloths.size(), 2u);
  const SceneCloth& a = s->cloths[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.prevParticles, a.particles);  // default: particles
  EXPECT_EQ(a.prevSpheres, a.spheres);      // default: spheres
  ASSERT_EQ(a.capsules.size(), 1u);
  EXPECT_EQ(a.capsules[0].sphere0, 0u);
  EXPECT_EQ(a.capsules[0].sphere1, 1u);
  EXPECT_EQ(a.translation, (std::array<float, 3>{0, 0, 0}));
  EXPECT_EQ(a.rotation, (Float4{0, 0, 0, 1}));
  EXPECT_EQ(a.collisionGroup, 1u);             // default: group 1
  EXPECT_EQ(a.collisionMask, 0xFFFFFFFFu);     // default: collides with every group
  EXPECT_TRUE(a.restPositions.empty());
  EXPECT_TRUE(a.selfCollisionIndices.empty());
  const SceneCloth& b = s->cloths[1];
  EXPECT_TRUE(b.name.empty());
  EXPECT_EQ(b.prevParticles[0].y, 2.5f);
  EXPECT_EQ(b.prevSpheres[0].y, -0.1f);
  EXPECT_EQ(b.translation, (std::array<float, 3>{1, 2, 3}));
  EXPECT_EQ(b.rotation.w, 0.7071068f);
  EXPECT_EQ(b.collisionGroup, 6u);
  EXPECT_EQ(b.collisionMask, 0xFFFFFFFFu);
  EXPECT_TRUE(b.capsules.empty());
}

TEST(SceneParse, MinimalSceneDefaults) {
  Result<Scene> s = parseScene(R"({"format": "vkcollide-scene", "version": 1, "cloths": [{"particles": []}]})");
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s->settings, SceneSettings{});
  EXPECT_EQ(s->settings.friction, 0.0f);
  EXPECT_EQ(s->settings.collisionMassScale, 0.0f);
  EXPECT_FALSE(s->settings.continuousCollision);
  ASSERT_EQ(s->cloths.size(), 1u);
  EXPECT_TRUE(s->cloths[0].particles.empty());
  EXPECT_TRUE(s->cloths[0].spheres.empty());
  Result<Scene> none = parseScene(R"({"format": "vkcollide-scene", "version": 1, "cloths": []})");
  ASSERT_TRUE(none) << none.message();
  EXPECT_TRUE(none->cloths.empty());
}

TEST(SceneParse, SelfAndInterCollisionSettings) {
  Result<Scene> s = parseScene(replaced(kValid, R"("collisionMassScale": 0.5)",
                                        R"("collisionMassScale": 0.5, "selfCollision": {"distance": 0.01, "stiffness": 0.9},
                                           "interCollision": {"distance": 0.02, "stiffness": 1, "iterations": 3})"));
  ASSERT_TRUE(s) << s.message();
  ASSERT_TRUE(s->settings.selfCollision);
  EXPECT_EQ(s->settings.selfCollision->distance, 0.01f);
  EXPECT_EQ(s->settings.selfCollision->stiffness, 0.9f);
  ASSERT_TRUE(s->settings.interCollision);
  EXPECT_EQ(s->settings.interCollision->iterations, 3u);
  Result<Scene> d = parseScene(replaced(kValid, R"("collisionMassScale": 0.5)",
                                        R"("interCollision": {"distance": 0.02, "stiffness": 1})"));
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(d->settings.interCollision->iterations, 1u);  // default
}

TEST(SceneParse, UnknownKeysAreNamed) {
  EXPECT_ERROR(replaced(kValid, R"("version": 1,)", R"("version": 1, "colths": [],)"), "colths: unknown key");
  EXPECT_ERROR(replaced(kValid, R"("friction")", R"("fricton")"), "settings.fricton: unknown key");
  EXPECT_ERROR(replaced(kValid, R"("spheres": [[0, 0, 0, 1]])", R"("sphere": [[0, 0, 0, 1]])"),
               "cloths[1].sphere: unknown key");
  EXPECT_ERROR(replaced(kValid, R"("collisionMassScale": 0.5)",
                        R"("selfCollision": {"distance": 1, "stiffness": 1, "iterations": 2})"),
               "settings.selfCollision.iterations: unknown key");
}

TEST(SceneParse, WrongTypes) {
  EXPECT_ERROR(replaced(kValid, R"("continuousCollision": false)", R"("continuousCollision": 0)"),
               "settings.continuousCollision: expected true or false, found the number 0");
  EXPECT_ERROR(replaced(kValid, R"("friction": 0.25)", R"("friction": "0.25")"),
               "settings.friction: expected a finite number, found a string");
  EXPECT_ERROR(replaced(kValid, R"("name": "a")", R"("name": 1)"), "cloths[0].name: expected a string");
  EXPECT_ERROR(replaced(kValid, R"("capsules": [[0, 1]])", R"("capsules": [[0, 1.5]])"),
               "cloths[0].capsules[0][1]: expected an unsigned integer, found 1.5");
  EXPECT_ERROR(replaced(kValid, R"("capsules": [[0, 1]])", R"("capsules": [[-1, 1]])"),
               "cloths[0].capsules[0][0]: expected an unsigned integer");
  EXPECT_ERROR(replaced(kValid, R"("cloths": [)", R"("cloths": {"x": [)") + "}", "cloths: expected an array, found an object");
  EXPECT_ERROR(replaced(kValid, R"("settings": {)", R"("settings": [{)"), "settings: expected an object, found an array");
  EXPECT_ERROR(replaced(kValid, R"("version": 1)", R"("version": "1")"), "version: expected an unsigned integer");
  EXPECT_ERROR("[]", "expected an object, found an array");
  EXPECT_ERROR(replaced(kValid, R"("collisionGroup": 6)", R"("collisionGroup": "6")"),
               "cloths[1].collisionGroup: expected an unsigned integer, found a string");
  EXPECT_ERROR(replaced(kValid, R"("collisionGroup": 6)", R"("collisionGroup": 1.5)"),
               "cloths[1].collisionGroup: expected an unsigned integer, found 1.5");
  EXPECT_ERROR(replaced(kValid, R"("collisionMask": 4294967295)", R"("collisionMask": true)"),
               "cloths[1].collisionMask: expected an unsigned integer");
  EXPECT_ERROR(replaced(kValid, R"("collisionMask": 4294967295)", R"("collisionMask": 1e3)"),
               "cloths[1].collisionMask: expected an unsigned integer");
}

TEST(SceneParse, MissingRequiredFields) {
  EXPECT_ERROR(replaced(kValid, R"("particles": [[0, 2, 0, 1]], )", ""), "cloths[1]: missing required key \"particles\"");
  EXPECT_ERROR(replaced(kValid, R"("format": "vkcollide-scene", )", ""), "missing required key \"format\"");
  EXPECT_ERROR(replaced(kValid, R"("version": 1,)", ""), "missing required key \"version\"");
  EXPECT_ERROR(R"({"format": "vkcollide-scene", "version": 1})", "missing required key \"cloths\"");
  EXPECT_ERROR(replaced(kValid, R"("collisionMassScale": 0.5)", R"("selfCollision": {"stiffness": 1})"),
               "settings.selfCollision: missing required key \"distance\"");
}

TEST(SceneParse, WrongLengths) {
  EXPECT_ERROR(replaced(kValid, "[0.5, 1, 0, 0]", "[0.5, 1, 0]"),
               "cloths[0].particles[1]: expected 4 numbers [x, y, z, invMass], found 3");
  EXPECT_ERROR(replaced(kValid, "[0.5, 1, 0, 0]", "[0.5, 1, 0, 0, 0]"), "cloths[0].particles[1][4]: one element too many");
  EXPECT_ERROR(replaced(kValid, "[1, 0, 0, 0.25]", "[1, 0, 0]"), "cloths[0].spheres[1]: expected 4 numbers [x, y, z, radius]");
  EXPECT_ERROR(replaced(kValid, R"("capsules": [[0, 1]])", R"("capsules": [[0]])"),
               "cloths[0].capsules[0]: expected 2 sphere indices");
  EXPECT_ERROR(replaced(kValid, R"("capsules": [[0, 1]])", R"("capsules": [[0, 1, 1]])"),
               "cloths[0].capsules[0][2]: one element too many");
  EXPECT_ERROR(replaced(kValid, "[1, 2, 3]", "[1, 2]"), "cloths[1].translation: expected 3 numbers");
  EXPECT_ERROR(replaced(kValid, "[0, 0.7071068, 0, 0.7071068]", "[0, 0.7071068, 0]"), "cloths[1].rotation: expected 4 numbers");
  EXPECT_ERROR(replaced(kValid, R"("prevParticles": [[0, 2.5, 0, 1]])", R"("prevParticles": [[0, 2.5, 0, 1], [0, 0, 0, 1]])"),
               "cloths[1].prevParticles: has 2 elements; particles has 1");
  EXPECT_ERROR(replaced(kValid, R"("prevSpheres": [[0, -0.1, 0, 1]])", R"("prevSpheres": [])"),
               "cloths[1].prevSpheres: has 0 elements; spheres has 1");
  EXPECT_ERROR(replaced(kValid, R"("restPositions": [[0, 0, 0, 0]])", R"("restPositions": [[0, 0, 0, 0], [0, 0, 0, 0]])"),
               "cloths[1].restPositions: has 2 elements; particles has 1");
}

TEST(SceneParse, NonFiniteNumbers) {
  EXPECT_ERROR(replaced(kValid, "[1, 0, 0, 0.25]", "[1, 0, 1e39, 0.25]"),
               "cloths[0].spheres[1][2]: expected a finite number, found 1e39");
  EXPECT_ERROR(replaced(kValid, "[1, 0, 0, 0.25]", "[1, 0, -1e400, 0.25]"), "cloths[0].spheres[1][2]: expected a finite number");
  EXPECT_ERROR(replaced(kValid, "[1, 0, 0, 0.25]", "[1, 0, NaN, 0.25]"), "cloths[0].spheres[1][2]: expected a finite number, found NaN");
  EXPECT_ERROR(replaced(kValid, "[1, 0, 0, 0.25]", "[1, 0, Infinity, 0.25]"), "expected a finite number, found Infinity");
  EXPECT_ERROR(replaced(kValid, "[1, 0, 0, 0.25]", "[1, 0, -Infinity, 0.25]"), "found -Infinity");
  EXPECT_ERROR(replaced(kValid, "[1, 0, 0, 0.25]", "[1, 0, null, 0.25]"), "cloths[0].spheres[1][2]: expected a finite number, found null");
  EXPECT_ERROR(replaced(kValid, R"("friction": 0.25)", R"("friction": 1e9999)"), "settings.friction: expected a finite number");
  // Tiny numbers are finite: they round to zero (with their sign).
  Result<Scene> tiny = parseScene(replaced(kValid, "[0.5, 1, 0, 0]", "[-1e-60, 1e-400, 1.4e-45, 0]"));
  ASSERT_TRUE(tiny) << tiny.message();
  EXPECT_EQ(tiny->cloths[0].particles[1].x, 0.0f);
  EXPECT_TRUE(std::signbit(tiny->cloths[0].particles[1].x));
  // However many digits: magnitude decides, not the exponent's sign.
  const std::string longTiny = "-0." + std::string(500, '0') + "1";
  const std::string longHuge = "1" + std::string(500, '0');
  Result<Scene> t2 = parseScene(replaced(kValid, "[0.5, 1, 0, 0]", "[" + longTiny + ", 100000e-400, 0, 0]"));
  ASSERT_TRUE(t2) << t2.message();
  EXPECT_EQ(t2->cloths[0].particles[1].x, 0.0f);
  EXPECT_TRUE(std::signbit(t2->cloths[0].particles[1].x));
  EXPECT_EQ(t2->cloths[0].particles[1].y, 0.0f);
  EXPECT_ERROR(replaced(kValid, "[0.5, 1, 0, 0]", "[" + longHuge + ", 0, 0, 0]"), "cloths[0].particles[1][0]: expected a finite number");
  EXPECT_ERROR(replaced(kValid, "[0.5, 1, 0, 0]", "[0.0001e400, 0, 0, 0]"), "beyond the float range");
  // The largest float and its rounding neighbourhood read fine.
  Result<Scene> big = parseScene(replaced(kValid, "[0.5, 1, 0, 0]", "[3.4028235e38, -3.40282356e38, 0, 0]"));
  ASSERT_TRUE(big) << big.message();
  EXPECT_EQ(big->cloths[0].particles[1].x, std::numeric_limits<float>::max());
  EXPECT_EQ(big->cloths[0].particles[1].y, -std::numeric_limits<float>::max());
  EXPECT_EQ(tiny->cloths[0].particles[1].y, 0.0f);
  EXPECT_EQ(tiny->cloths[0].particles[1].z, std::numeric_limits<float>::denorm_min());
}

TEST(SceneParse, IndexRanges) {
  EXPECT_ERROR(replaced(kValid, R"("capsules": [[0, 1]])", R"("capsules": [[0, 2]])"),
               "cloths[0].capsules[0][1]: sphere index 2 is out of range; the cloth has 2 spheres");
  EXPECT_ERROR(replaced(kValid, R"("capsules": [[0, 1]])", R"("capsules": [[0, 4294967296]])"),
               "cloths[0].capsules[0][1]: expected an unsigned integer below 2^32");
  EXPECT_ERROR(replaced(kValid, R"("selfCollisionIndices": [0])", R"("selfCollisionIndices": [0, 1])"),
               "cloths[1].selfCollisionIndices[1]: particle index 1 is out of range; the cloth has 1 particles");
  EXPECT_ERROR(replaced(kValid, R"("collisionMask": 4294967295)", R"("collisionMask": 4294967296)"),
               "cloths[1].collisionMask: expected an unsigned integer below 2^32");
  EXPECT_ERROR(replaced(kValid, R"("collisionGroup": 6)", R"("collisionGroup": -1)"),
               "cloths[1].collisionGroup: expected an unsigned integer");
  EXPECT_ERROR(replaced(kValid, R"("collisionGroup": 6)", R"("collisionGroup": 6, "collisionGroup": 6)"),
               "cloths[1].collisionGroup: duplicate key");
  Result<Scene> zero = parseScene(replaced(kValid, R"("collisionGroup": 6)", R"("collisionGroup": 0)"));
  ASSERT_TRUE(zero) << zero.message();  // group 0 is valid: the cloth collides with nothing
  EXPECT_EQ(zero->cloths[1].collisionGroup, 0u);
}

TEST(SceneParse, FormatAndVersion) {
  EXPECT_ERROR(replaced(kValid, R"("vkcollide-scene")", R"("nvcloth-scene")"),
               R"(format: expected "vkcollide-scene", found "nvcloth-scene")");
  EXPECT_ERROR(replaced(kValid, R"("version": 1)", R"("version": 3)"), "version: unsupported version 3 (this build reads versions 1 to 2)");
  EXPECT_ERROR(replaced(kValid, R"("version": 1)", R"("version": 1, "version": 1)"), "version: duplicate key");
}

TEST(SceneParse, SyntaxErrors) {
  EXPECT_ERROR("", "expected an object, found the end of input");
  EXPECT_ERROR("{", "line 1, column 2: expected a key string (end of input)");
  EXPECT_ERROR(std::string(kValid) + " x", "unexpected text after the scene");
  EXPECT_ERROR(replaced(kValid, "[0.5, 1, 0, 0]", "[0.5, 1, 0,]"), "cloths[0].particles[1][3]: expected a finite number, found ']'");
  EXPECT_ERROR(replaced(kValid, R"("name": "a")", R"("name": "a)"), "line 5");
  EXPECT_ERROR(std::string(kValid).substr(0, 200), "(end of input)");
  EXPECT_ERROR(replaced(kValid, "0.25,", "0.25 "), "line 3, column");
  EXPECT_ERROR(replaced(kValid, "0.25", "+0.25"), "settings.friction: expected a finite number, found '+'");
  EXPECT_ERROR(replaced(kValid, "0.25", "00.25"), "expected ',' or '}'");
  EXPECT_ERROR(replaced(kValid, "0.25", ".25"), "settings.friction: expected a finite number, found '.'");
  EXPECT_ERROR(replaced(kValid, R"("name": "a")", "\"name\": \"a\x01\""), "control character in a string");
  EXPECT_ERROR(replaced(kValid, R"("name": "a")", R"("name": "\ud800")"), "unpaired surrogate");
}

TEST(SceneParse, StringEscapesRoundTrip) {
  Result<Scene> s = parseScene(replaced(kValid, R"("name": "a")", R"("name": "q\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\u0001")"));
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s->cloths[0].name, "q\"\\/\b\f\n\r\t\xC3\xA9\xF0\x9F\x98\x80\x01");
  Result<Scene> again = parseScene(writeScene(*s));
  ASSERT_TRUE(again) << again.message();
  EXPECT_EQ(again->cloths[0].name, s->cloths[0].name);
}

TEST(SceneParse, RoundTripEveryFieldBitwise) {
  Result<Scene> s = parseScene(replaced(kValid, R"("collisionMassScale": 0.5)",
                                        R"("collisionMassScale": 0.5, "selfCollision": {"distance": 0.01, "stiffness": 0.9},
                                           "interCollision": {"distance": 0.02, "stiffness": 1, "iterations": 3})"));
  ASSERT_TRUE(s) << s.message();
  // Awkward floats: the smallest denormal, the largest float, -0, values with 9 significant digits.
  s->cloths[0].particles[0] = {std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(), -0.0f,
                               0.1f};
  s->cloths[0].particles[1] = {1.00000012f, 3.40282326e38f, 1.17549435e-38f, 16777217.0f};
  s->cloths[0].collisionGroup = 0x80000001u;  // written although cloth 1's are the defaults
  s->cloths[0].collisionMask = 0u;
  Result<Scene> again = parseScene(writeScene(*s));
  ASSERT_TRUE(again) << again.message();
  EXPECT_TRUE(*again == *s);
  EXPECT_EQ(std::memcmp(again->cloths[0].particles.data(), s->cloths[0].particles.data(), 2 * sizeof(Float4)), 0);
  EXPECT_TRUE(std::signbit(again->cloths[0].particles[0].z));
  EXPECT_EQ(again->cloths[0].collisionGroup, 0x80000001u);
  EXPECT_EQ(again->cloths[0].collisionMask, 0u);
  EXPECT_EQ(again->cloths[1].collisionGroup, 6u);
  EXPECT_NE(writeScene(*s).find("\"collisionMask\": 4294967295"), std::string::npos);
  // The fields take part in ==.
  Scene other = *again;
  other.cloths[1].collisionMask = 3;
  EXPECT_FALSE(other == *s);
}

// Planes and convexes: cloth 0 of kValid gets a box (6 planes, one convex) and a ground plane (a
// convex of one plane), given at the start and the end of the iteration.
const char* kPlanes = R"("capsules": [[0, 1]],
     "planes": [[1, 0, 0, -1], [-1, 0, 0, -1], [0, 1, 0, -1], [0, -1, 0, -1], [0, 0, 1, -1], [0, 0, -1, -1],
                [0, 2, 0, 1]],
     "prevPlanes": [[1, 0, 0, -1.5], [-1, 0, 0, -1], [0, 1, 0, -1], [0, -1, 0, -1], [0, 0, 1, -1], [0, 0, -1, -1],
                    [0, 2, 0, 1]],
     "convexes": [[0, 1, 2, 3, 4, 5], [6]])";

std::string withPlanes(const std::string& from = "", const std::string& to = "") {
  std::string planes = kPlanes;
  if (!from.empty()) planes = replaced(planes, from, to);
  return replaced(kValid, R"("capsules": [[0, 1]])", planes);
}

TEST(SceneParse, PlanesAndConvexes) {
  Result<Scene> s = parseScene(withPlanes());
  ASSERT_TRUE(s) << s.message();
  const SceneCloth& a = s->cloths[0];
  ASSERT_EQ(a.planes.size(), 7u);
  ASSERT_EQ(a.prevPlanes.size(), 7u);
  EXPECT_EQ(a.planes[0], (Float4{1, 0, 0, -1}));
  EXPECT_EQ(a.prevPlanes[0], (Float4{1, 0, 0, -1.5f}));
  // Kept as written: the stage normalizes (0, 2, 0, 1) to (0, 1, 0, 0.5), the parser does not.
  EXPECT_EQ(a.planes[6], (Float4{0, 2, 0, 1}));
  ASSERT_EQ(a.convexes.size(), 2u);
  EXPECT_EQ(a.convexes[0], (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(a.convexes[1], (std::vector<uint32_t>{6}));
  // Cloth 1 has none.
  EXPECT_TRUE(s->cloths[1].planes.empty());
  EXPECT_TRUE(s->cloths[1].prevPlanes.empty());
  EXPECT_TRUE(s->cloths[1].convexes.empty());
  // prevPlanes defaults to planes; a plane index may repeat; planes without convexes are allowed.
  Result<Scene> d = parseScene(replaced(kValid, R"("capsules": [[0, 1]])",
                                        R"("capsules": [[0, 1]], "convexes": [[1, 1, 0]], "planes": [[0, 1, 0, 0.5], [1e-18, 0, 0, 0]])"));
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(d->cloths[0].prevPlanes, d->cloths[0].planes);
  EXPECT_EQ(d->cloths[0].convexes[0], (std::vector<uint32_t>{1, 1, 0}));
  Result<Scene> p = parseScene(replaced(kValid, R"("capsules": [[0, 1]])", R"("planes": [[0, 1, 0, 0]], "convexes": [])"));
  ASSERT_TRUE(p) << p.message();
  EXPECT_TRUE(p->cloths[0].convexes.empty());
}

TEST(SceneParse, BadPlanesAndConvexesAreNamed) {
  // Zero and unnormalizable normals, at either end of the iteration.
  EXPECT_ERROR(withPlanes("[0, 2, 0, 1]],\n     \"prevPlanes\"", "[0, 0, 0, 1]],\n     \"prevPlanes\""),
               "cloths[0].planes[6]: normal (0, 0, 0) is zero");
  EXPECT_ERROR(withPlanes("[-1, 0, 0, -1], [0, 1, 0, -1], [0, -1, 0, -1], [0, 0, 1, -1], [0, 0, -1, -1],\n                    [0, 2, 0, 1]]",
                          "[-1, 0, 0, -1], [0, 1, 0, -1], [-0, 0, -0, -1], [0, 0, 1, -1], [0, 0, -1, -1],\n                    [0, 2, 0, 1]]"),
               "cloths[0].prevPlanes[3]: normal (-0, 0, -0) is zero");
  EXPECT_ERROR(withPlanes("[1, 0, 0, -1], [-1", "[1e-30, 0, 0, -1], [-1"),
               "cloths[0].planes[0]: normal (1e-30, 0, 0) is too short or too long to normalize");
  EXPECT_ERROR(withPlanes("[1, 0, 0, -1], [-1", "[3e38, 3e38, 0, -1], [-1"),
               "cloths[0].planes[0]: normal (3e+38, 3e+38, 0) is too short or too long to normalize");
  EXPECT_ERROR(withPlanes("[1, 0, 0, -1], [-1", "[1e-18, 0, 0, 3e38], [-1"),
               "cloths[0].planes[0]: normal (1e-18, 0, 0) is too short or too long to normalize");
  // Non-finite numbers, wrong lengths.
  EXPECT_ERROR(withPlanes("[0, 2, 0, 1]],\n     \"prevPlanes\"", "[0, NaN, 0, 1]],\n     \"prevPlanes\""),
               "cloths[0].planes[6][1]: expected a finite number, found NaN");
  EXPECT_ERROR(withPlanes("[0, 2, 0, 1]],\n     \"prevPlanes\"", "[0, 1e39, 0, 1]],\n     \"prevPlanes\""),
               "cloths[0].planes[6][1]: expected a finite number, found 1e39");
  EXPECT_ERROR(withPlanes("[1, 0, 0, -1], [-1", "[1, 0, 0, Infinity], [-1"),
               "cloths[0].planes[0][3]: expected a finite number, found Infinity");
  EXPECT_ERROR(withPlanes("[1, 0, 0, -1], [-1", "[1, 0, 0], [-1"),
               "cloths[0].planes[0]: expected 4 numbers [nx, ny, nz, d], found 3");
  EXPECT_ERROR(withPlanes("[0, 2, 0, 1]],\n     \"convexes\"", "[0, 2, 0, 1], [0, 1, 0, 0]],\n     \"convexes\""),
               "cloths[0].prevPlanes: has 8 elements; planes has 7");
  EXPECT_ERROR(replaced(kValid, R"("capsules": [[0, 1]])", R"("prevPlanes": [[0, 1, 0, 0]])"),
               "cloths[0].prevPlanes: has 1 elements; planes has 0");
  // Convexes: an empty one, an index out of range (checked after the planes, whatever the key
  // order), not an integer, not a list.
  EXPECT_ERROR(withPlanes("[[0, 1, 2, 3, 4, 5], [6]]", "[[0, 1, 2, 3, 4, 5], []]"),
               "cloths[0].convexes[1]: is empty: a convex lists at least one plane index");
  EXPECT_ERROR(withPlanes("[[0, 1, 2, 3, 4, 5], [6]]", "[[0, 1, 2, 3, 4, 5], [6, 7]]"),
               "cloths[0].convexes[1][1]: plane index 7 is out of range; the cloth has 7 planes");
  EXPECT_ERROR(replaced(kValid, R"("capsules": [[0, 1]])", R"("convexes": [[0]], "planes": [])"),
               "cloths[0].convexes[0][0]: plane index 0 is out of range; the cloth has 0 planes");
  EXPECT_ERROR(withPlanes("[[0, 1, 2, 3, 4, 5], [6]]", "[[0, 1, 2, 3, 4, 5], [-6]]"),
               "cloths[0].convexes[1][0]: expected an unsigned integer");
  EXPECT_ERROR(withPlanes("[[0, 1, 2, 3, 4, 5], [6]]", "[[0, 1, 2, 3, 4, 5], [6.5]]"),
               "cloths[0].convexes[1][0]: expected an unsigned integer, found 6.5");
  EXPECT_ERROR(withPlanes("[[0, 1, 2, 3, 4, 5], [6]]", "[[0, 1, 2, 3, 4, 5], 6]"),
               "cloths[0].convexes[1]: expected an array, found the number 6");
  EXPECT_ERROR(withPlanes("\"convexes\"", "\"convex\""), "cloths[0].convex: unknown key");
  EXPECT_ERROR(withPlanes("\"planes\"", "\"planes\": [], \"planes\""), "cloths[0].planes: duplicate key");
}

TEST(SceneParse, PlanesRoundTripBitwise) {
  Result<Scene> s = parseScene(withPlanes());
  ASSERT_TRUE(s) << s.message();
  s->cloths[0].planes[1] = {-0.0f, std::numeric_limits<float>::denorm_min(), 1.00000012f, -3.40282326e38f};
  Result<Scene> again = parseScene(writeScene(*s));
  ASSERT_TRUE(again) << again.message();
  EXPECT_TRUE(*again == *s);
  EXPECT_EQ(std::memcmp(again->cloths[0].planes.data(), s->cloths[0].planes.data(), 7 * sizeof(Float4)), 0);
  EXPECT_EQ(std::memcmp(again->cloths[0].prevPlanes.data(), s->cloths[0].prevPlanes.data(), 7 * sizeof(Float4)), 0);
  // Planes, prevPlanes and convexes take part in ==.
  for (int field = 0; field < 3; ++field) {
    Scene other = *again;
    if (field == 0) other.cloths[0].planes[6].w = 2;
    if (field == 1) other.cloths[0].prevPlanes[0].w = -1;
    if (field == 2) other.cloths[0].convexes[1] = {5};
    EXPECT_FALSE(other == *s) << field;
  }
  // A cloth without planes writes empty arrays, which read back as none.
  const std::string text = writeScene(*s);
  EXPECT_NE(text.find("\"convexes\": [\n        [0, 1, 2, 3, 4, 5],\n        [6]\n      ]"), std::string::npos) << text;
  EXPECT_NE(text.find("\"planes\": [],"), std::string::npos);
  EXPECT_NE(text.find("\"convexes\": [],"), std::string::npos);
  // A Scene built in code without prevPlanes (makeSceneBuffers: the same as planes) is written so.
  Scene built = *s;
  built.cloths[0].prevPlanes.clear();
  Result<Scene> read = parseScene(writeScene(built));
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->cloths[0].prevPlanes, built.cloths[0].planes);
}

// 200 000 random finite floats (random bit patterns: denormals, huge and tiny exponents) survive
// writeScene -> parseScene bit for bit.
TEST(SceneParse, RandomFloatsRoundTripBitwise) {
  std::mt19937 rng(12345);
  Scene s;
  SceneCloth& c = s.cloths.emplace_back();
  c.particles.resize(25000);
  c.prevParticles.resize(25000);
  auto randomFloat = [&] {
    for (;;) {
      const uint32_t bits = static_cast<uint32_t>(rng());
      float f;
      std::memcpy(&f, &bits, sizeof f);
      if (std::isfinite(f)) return f;
    }
  };
  for (auto* v : {&c.particles, &c.prevParticles}) {
    for (Float4& p : *v) p = {randomFloat(), randomFloat(), randomFloat(), randomFloat()};
  }
  Result<Scene> back = parseScene(writeScene(s));
  ASSERT_TRUE(back) << back.message();
  ASSERT_EQ(back->cloths.size(), 1u);
  EXPECT_EQ(std::memcmp(back->cloths[0].particles.data(), c.particles.data(), c.particles.size() * sizeof(Float4)), 0);
  EXPECT_EQ(std::memcmp(back->cloths[0].prevParticles.data(), c.prevParticles.data(),
                        c.prevParticles.size() * sizeof(Float4)), 0);
}

}  // namespace
}  // namespace vkc
