// Scene files: the schema (parseScene), the writer (writeScene) and the stage layout (SceneBuffers).
#include "vkcollide/scene.h"

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>

#include "io/file.h"
#include "io/json_reader.h"
#include "io/json_writer.h"
#include "util/try.h"
#include "vkcollide/export.h"

namespace vkc {

namespace {

using io::appendFloat;
using io::appendFloats;
using io::appendString;

Error invalid(std::string message) { return Error{ErrorCode::kInvalidArgument, std::move(message)}; }

std::string knownKeys(std::initializer_list<const char*> keys) {
  std::string s;
  for (const char* k : keys) {
    if (!s.empty()) s += ", ";
    s += k;
  }
  return s;
}

// The reader's path already ends with the key, so the message names it.
bool unknownKey(io::JsonReader& r, const std::string& known) {
  return r.fail("unknown key (known keys here: " + known + ")");
}

bool readFloat4s(io::JsonReader& r, std::vector<Float4>& out, const char* what) {
  out.clear();
  return r.readArray([&](size_t) {
    float v[4];
    if (!r.readFloats(v, 4, what)) return false;
    out.push_back({v[0], v[1], v[2], v[3]});
    return true;
  });
}

// Planes [nx, ny, nz, d]: finite (readFloats), with a normal the stage can normalize: its squared
// length, computed in float as the stage computes it, is a positive normal float, and the offset
// divided by the length stays finite. The error is at the plane's path ("cloths[0].planes[2]").
bool readPlanes(io::JsonReader& r, std::vector<Float4>& out) {
  out.clear();
  return r.readArray([&](size_t) {
    float v[4];
    if (!r.readFloats(v, 4, "[nx, ny, nz, d]")) return false;
    const float n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if (!(n2 >= FLT_MIN) || !std::isfinite(n2) || !std::isfinite(v[3] / std::sqrt(n2))) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "normal (%g, %g, %g) is %s", static_cast<double>(v[0]),
                    static_cast<double>(v[1]), static_cast<double>(v[2]),
                    v[0] == 0.0f && v[1] == 0.0f && v[2] == 0.0f ? "zero: a plane needs a non-zero normal"
                                                                  : "too short or too long to normalize in float");
      return r.fail(buf);
    }
    out.push_back({v[0], v[1], v[2], v[3]});
    return true;
  });
}

// Convexes [[i, j, ...], ...]: non-empty lists of plane indices (their range is checked once the
// whole cloth, planes included, has been read).
bool readConvexes(io::JsonReader& r, std::vector<std::vector<uint32_t>>& out) {
  out.clear();
  return r.readArray([&](size_t) {
    std::vector<uint32_t>& convex = out.emplace_back();
    const bool ok = r.readArray([&](size_t) {
      uint32_t v = 0;
      if (!r.readUint32(v)) return false;
      convex.push_back(v);
      return true;
    });
    if (!ok) return false;
    if (convex.empty()) return r.fail("is empty: a convex lists at least one plane index [i, j, ...]");
    return true;
  });
}

bool readSelf(io::JsonReader& r, SceneSelfCollision& s) {
  bool distance = false, stiffness = false;
  const bool ok = r.readObject([&](std::string_view key) {
    if (key == "distance") return distance = true, r.readFloat(s.distance);
    if (key == "stiffness") return stiffness = true, r.readFloat(s.stiffness);
    return unknownKey(r, knownKeys({"distance", "stiffness"}));
  });
  if (!ok) return false;
  if (!distance) return r.fail("missing required key \"distance\"");
  if (!stiffness) return r.fail("missing required key \"stiffness\"");
  return true;
}

bool readInter(io::JsonReader& r, SceneInterCollision& s) {
  bool distance = false, stiffness = false;
  const bool ok = r.readObject([&](std::string_view key) {
    if (key == "distance") return distance = true, r.readFloat(s.distance);
    if (key == "stiffness") return stiffness = true, r.readFloat(s.stiffness);
    if (key == "iterations") return r.readUint32(s.iterations);
    return unknownKey(r, knownKeys({"distance", "stiffness", "iterations"}));
  });
  if (!ok) return false;
  if (!distance) return r.fail("missing required key \"distance\"");
  if (!stiffness) return r.fail("missing required key \"stiffness\"");
  return true;
}

bool readMeshCollision(io::JsonReader& r, SceneMeshCollision& s) {
  return r.readObject([&](std::string_view key) {
    if (key == "continuous") return r.readBool(s.continuous);
    if (key == "maxBounces") {
      if (!r.readUint32(s.maxBounces)) return false;
      if (s.maxBounces > kMaxMeshBounces) {
        return r.fail("is " + std::to_string(s.maxBounces) + ": at most " + std::to_string(kMaxMeshBounces));
      }
      return true;
    }
    return unknownKey(r, knownKeys({"continuous", "maxBounces"}));
  });
}

bool readSettings(io::JsonReader& r, SceneSettings& s) {
  return r.readObject([&](std::string_view key) {
    if (key == "continuousCollision") return r.readBool(s.continuousCollision);
    if (key == "friction") return r.readFloat(s.friction);
    if (key == "collisionMassScale") return r.readFloat(s.collisionMassScale);
    if (key == "selfCollision") return readSelf(r, s.selfCollision.emplace());
    if (key == "interCollision") return readInter(r, s.interCollision.emplace());
    if (key == "meshCollision") return readMeshCollision(r, s.meshCollision.emplace());
    return unknownKey(r, knownKeys({"continuousCollision", "friction", "collisionMassScale", "selfCollision",
                                    "interCollision", "meshCollision"}));
  });
}

// A unit quaternion as the stages take it: |q| within 1e-3 of 1 (mesh and inter collision).
bool unitQuaternion(const Float4& q) {
  const double x = q.x, y = q.y, z = q.z, w = q.w;
  const double n = std::sqrt(x * x + y * y + z * z + w * w);
  return std::abs(n - 1.0) <= 1e-3;
}

bool readTransform(io::JsonReader& r, SceneTransform& t) {
  return r.readObject([&](std::string_view key) {
    if (key == "translation") return r.readFloats(t.translation.data(), 3, "[x, y, z]");
    if (key == "rotation") {
      float q[4];
      if (!r.readFloats(q, 4, "[x, y, z, w]")) return false;
      t.rotation = {q[0], q[1], q[2], q[3]};
      if (!unitQuaternion(t.rotation)) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "(%g, %g, %g, %g) is not a unit quaternion (|q| must be within 1e-3 of 1)",
                      static_cast<double>(q[0]), static_cast<double>(q[1]), static_cast<double>(q[2]),
                      static_cast<double>(q[3]));
        return r.fail(buf);
      }
      return true;
    }
    return unknownKey(r, knownKeys({"translation", "rotation"}));
  });
}

bool readVertices(io::JsonReader& r, std::vector<Float4>& out) {
  out.clear();
  return r.readArray([&](size_t) {
    float v[3];
    if (!r.readFloats(v, 3, "[x, y, z]")) return false;
    out.push_back({v[0], v[1], v[2], 0.0f});
    return true;
  });
}

bool readUint32s(io::JsonReader& r, std::vector<uint32_t>& out) {
  out.clear();
  return r.readArray([&](size_t) {
    uint32_t v = 0;
    if (!r.readUint32(v)) return false;
    out.push_back(v);
    return true;
  });
}

// A surface coefficient: finite (readFloat) and >= 0, or within [0, 1] for restitution.
bool readCoefficient(io::JsonReader& r, float& out, bool unitInterval) {
  if (!r.readFloat(out)) return false;
  if (out < 0.0f || (unitInterval && out > 1.0f)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "is %g: it must be %s", static_cast<double>(out),
                  unitInterval ? "in [0, 1]" : ">= 0");
    return r.fail(buf);
  }
  return true;
}

// One mesh. `baseDirectory` resolves "obj" paths; without one, "obj" is refused.
bool readMesh(io::JsonReader& r, SceneMesh& m, const std::optional<std::string>& baseDirectory) {
  bool vertices = false, triangles = false, obj = false, thickness = false, prevTransform = false;
  const bool ok = r.readObject([&](std::string_view key) {
    if (key == "name") return r.readString(m.name);
    if (key == "vertices") {
      if (obj) return r.fail("a mesh has \"vertices\" and \"triangles\" or \"obj\", not both");
      return vertices = true, readVertices(r, m.vertices);
    }
    if (key == "triangles") {
      if (obj) return r.fail("a mesh has \"vertices\" and \"triangles\" or \"obj\", not both");
      triangles = true;
      m.indices.clear();
      return r.readArray([&](size_t) {
        uint32_t t[3] = {0, 0, 0};
        size_t n = 0;
        const bool okTri = r.readArray([&](size_t i) {
          if (i >= 3) return r.fail("one element too many: expected 3 vertex indices [a, b, c]");
          ++n;
          return r.readUint32(t[i]);
        });
        if (!okTri) return false;
        if (n != 3) return r.fail("expected 3 vertex indices [a, b, c], found " + std::to_string(n));
        m.indices.insert(m.indices.end(), t, t + 3);
        return true;
      });
    }
    if (key == "obj") {
      if (vertices || triangles) return r.fail("a mesh has \"vertices\" and \"triangles\" or \"obj\", not both");
      std::string file;
      if (!r.readString(file)) return false;
      if (file.empty()) return r.fail("is empty: expected the path of an OBJ file, relative to the scene file");
      if (!baseDirectory) {
        return r.fail("a mesh file needs the scene's location: parseScene(json, baseDirectory) or loadScene reads it");
      }
      const std::string full = file.front() == '/' || baseDirectory->empty() ? file : *baseDirectory + "/" + file;
      const Status st = loadObjMesh(full, m);
      if (!st) return r.fail(st.message());
      return obj = true;
    }
    if (key == "prevVertices") return readVertices(r, m.prevVertices);
    if (key == "transform") return readTransform(r, m.transform.emplace());
    if (key == "prevTransform") return prevTransform = true, readTransform(r, m.prevTransform.emplace());
    if (key == "thickness") return thickness = true, readCoefficient(r, m.surface.thickness, false);
    if (key == "oneSided") return r.readBool(m.surface.oneSided);
    if (key == "restitution") return readCoefficient(r, m.surface.restitution, true);
    if (key == "friction") return readCoefficient(r, m.surface.friction, false);
    if (key == "staticFriction") return readCoefficient(r, m.surface.staticFriction, false);
    return unknownKey(r, knownKeys({"name", "vertices", "triangles", "obj", "prevVertices", "transform",
                                    "prevTransform", "thickness", "oneSided", "restitution", "friction",
                                    "staticFriction"}));
  });
  if (!ok) return false;
  if (!obj && !vertices) return r.fail("missing required key \"vertices\" (or \"obj\")");
  if (!obj && !triangles) return r.fail("missing required key \"triangles\" (or \"obj\")");
  if (!thickness) return r.fail("missing required key \"thickness\"");
  const auto count = [](size_t n) { return std::to_string(n); };
  if (m.vertices.empty()) return r.failAtKey("vertices", "is empty: a mesh has at least one vertex");
  if (m.indices.empty()) return r.failAtKey("triangles", "is empty: a mesh has at least one triangle");
  for (size_t k = 0; k < m.indices.size(); ++k) {
    if (m.indices[k] >= m.vertices.size()) {
      return r.failAtKey("triangles[" + count(k / 3) + "][" + count(k % 3) + "]",
                         "vertex index " + std::to_string(m.indices[k]) + " is out of range; the mesh has " +
                             count(m.vertices.size()) + " vertices");
    }
  }
  if (!m.prevVertices.empty() && m.prevVertices.size() != m.vertices.size()) {
    return r.failAtKey("prevVertices", "has " + count(m.prevVertices.size()) + " elements; vertices has " +
                                           count(m.vertices.size()));
  }
  if (m.transform && !m.prevVertices.empty()) {
    return r.failAtKey("prevVertices", "a mesh moves rigidly (\"transform\") or deforms (\"prevVertices\"), not both");
  }
  if (prevTransform && !m.transform) return r.failAtKey("prevTransform", "needs \"transform\" (the end of the motion)");
  if (m.transform && !prevTransform) m.prevTransform = m.transform;
  return true;
}

bool readCloth(io::JsonReader& r, SceneCloth& c) {
  bool particles = false, prevParticles = false, prevSpheres = false, prevPlanes = false;
  const bool ok = r.readObject([&](std::string_view key) {
    if (key == "name") return r.readString(c.name);
    if (key == "particles") return particles = true, readFloat4s(r, c.particles, "[x, y, z, invMass]");
    if (key == "prevParticles") return prevParticles = true, readFloat4s(r, c.prevParticles, "[x, y, z, invMass]");
    if (key == "spheres") return readFloat4s(r, c.spheres, "[x, y, z, radius]");
    if (key == "prevSpheres") return prevSpheres = true, readFloat4s(r, c.prevSpheres, "[x, y, z, radius]");
    if (key == "restPositions") return readFloat4s(r, c.restPositions, "[x, y, z, w]");
    if (key == "planes") return readPlanes(r, c.planes);
    if (key == "prevPlanes") return prevPlanes = true, readPlanes(r, c.prevPlanes);
    if (key == "convexes") return readConvexes(r, c.convexes);
    if (key == "capsules") {
      c.capsules.clear();
      return r.readArray([&](size_t) {
        Capsule cap;
        size_t n = 0;
        const bool okCap = r.readArray([&](size_t i) {
          if (i >= 2) return r.fail("one element too many: expected 2 sphere indices [i, j]");
          ++n;
          return r.readUint32(i == 0 ? cap.sphere0 : cap.sphere1);
        });
        if (!okCap) return false;
        if (n != 2) return r.fail("expected 2 sphere indices [i, j], found " + std::to_string(n));
        c.capsules.push_back(cap);
        return true;
      });
    }
    if (key == "selfCollisionIndices") {
      c.selfCollisionIndices.clear();
      return r.readArray([&](size_t) {
        uint32_t v = 0;
        if (!r.readUint32(v)) return false;
        c.selfCollisionIndices.push_back(v);
        return true;
      });
    }
    if (key == "translation") return r.readFloats(c.translation.data(), 3, "[x, y, z]");
    if (key == "rotation") {
      float q[4];
      if (!r.readFloats(q, 4, "[x, y, z, w]")) return false;
      c.rotation = {q[0], q[1], q[2], q[3]};
      return true;
    }
    if (key == "collisionGroup") return r.readUint32(c.collisionGroup);
    if (key == "collisionMask") return r.readUint32(c.collisionMask);
    if (key == "meshes") return readUint32s(r, c.meshes);
    return unknownKey(r, knownKeys({"name", "particles", "prevParticles", "spheres", "prevSpheres", "capsules",
                                 "planes", "prevPlanes", "convexes", "restPositions", "selfCollisionIndices",
                                 "translation", "rotation", "collisionGroup", "collisionMask", "meshes"}));
  });
  if (!ok) return false;
  // Whole-cloth rules, reported at the field that breaks them.
  if (!particles) return r.fail("missing required key \"particles\"");
  const auto count = [](size_t n) { return std::to_string(n); };
  if (!prevParticles) {
    c.prevParticles = c.particles;
  } else if (c.prevParticles.size() != c.particles.size()) {
    return r.failAtKey("prevParticles", "has " + count(c.prevParticles.size()) + " elements; particles has " +
                                            count(c.particles.size()));
  }
  if (!prevSpheres) {
    c.prevSpheres = c.spheres;
  } else if (c.prevSpheres.size() != c.spheres.size()) {
    return r.failAtKey("prevSpheres",
                       "has " + count(c.prevSpheres.size()) + " elements; spheres has " + count(c.spheres.size()));
  }
  if (!prevPlanes) {
    c.prevPlanes = c.planes;
  } else if (c.prevPlanes.size() != c.planes.size()) {
    return r.failAtKey("prevPlanes",
                       "has " + count(c.prevPlanes.size()) + " elements; planes has " + count(c.planes.size()));
  }
  if (!c.restPositions.empty() && c.restPositions.size() != c.particles.size()) {
    return r.failAtKey("restPositions", "has " + count(c.restPositions.size()) + " elements; particles has " +
                                            count(c.particles.size()));
  }
  for (size_t k = 0; k < c.capsules.size(); ++k) {
    const Capsule& cap = c.capsules[k];
    for (int e = 0; e < 2; ++e) {
      const uint32_t s = e == 0 ? cap.sphere0 : cap.sphere1;
      if (s >= c.spheres.size()) {
        return r.failAtKey("capsules[" + count(k) + "][" + std::to_string(e) + "]",
                           "sphere index " + std::to_string(s) + " is out of range; the cloth has " +
                               count(c.spheres.size()) + " spheres");
      }
    }
  }
  for (size_t k = 0; k < c.convexes.size(); ++k) {
    for (size_t j = 0; j < c.convexes[k].size(); ++j) {
      if (c.convexes[k][j] >= c.planes.size()) {
        return r.failAtKey("convexes[" + count(k) + "][" + count(j) + "]",
                           "plane index " + std::to_string(c.convexes[k][j]) + " is out of range; the cloth has " +
                               count(c.planes.size()) + " planes");
      }
    }
  }
  for (size_t k = 0; k < c.selfCollisionIndices.size(); ++k) {
    if (c.selfCollisionIndices[k] >= c.particles.size()) {
      return r.failAtKey("selfCollisionIndices[" + count(k) + "]",
                         "particle index " + std::to_string(c.selfCollisionIndices[k]) +
                             " is out of range; the cloth has " + count(c.particles.size()) + " particles");
    }
  }
  // Mesh indices: each at most once (their range is checked once the scene's meshes are read).
  for (size_t k = 0; k < c.meshes.size(); ++k) {
    for (size_t j = 0; j < k; ++j) {
      if (c.meshes[j] == c.meshes[k]) {
        return r.failAtKey("meshes[" + count(k) + "]", "mesh " + std::to_string(c.meshes[k]) +
                                                           " is listed twice (also meshes[" + count(j) + "])");
      }
    }
  }
  return true;
}

void appendFloat4s(std::string& out, const char* key, const std::vector<Float4>& v, bool last = false) {
  out += "      \"";
  out += key;
  out += "\": [";
  for (size_t i = 0; i < v.size(); ++i) {
    out += i ? ",\n        " : "\n        ";
    const float f[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
    appendFloats(out, f, 4);
  }
  out += v.empty() ? "]" : "\n      ]";
  out += last ? "\n" : ",\n";
}

// "      \"vertices\": [[x, y, z], ...]," (w dropped), one vertex per line.
void appendVertices(std::string& out, const char* key, const std::vector<Float4>& v) {
  out += "      \"";
  out += key;
  out += "\": [";
  for (size_t i = 0; i < v.size(); ++i) {
    out += i ? ",\n        " : "\n        ";
    const float f[3] = {v[i].x, v[i].y, v[i].z};
    appendFloats(out, f, 3);
  }
  out += v.empty() ? "],\n" : "\n      ],\n";
}

void appendTransform(std::string& out, const char* key, const SceneTransform& t) {
  out += "      \"";
  out += key;
  out += "\": {\"translation\": ";
  appendFloats(out, t.translation.data(), 3);
  out += ", \"rotation\": ";
  const float q[4] = {t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w};
  appendFloats(out, q, 4);
  out += "},\n";
}

void appendMesh(std::string& out, const SceneMesh& m) {
  if (!m.name.empty()) {
    out += "      \"name\": ";
    appendString(out, m.name);
    out += ",\n";
  }
  const MeshSurface& s = m.surface;
  out += "      \"thickness\": ";
  appendFloat(out, s.thickness);
  out += ", \"oneSided\": ";
  out += s.oneSided ? "true" : "false";
  out += ", \"restitution\": ";
  appendFloat(out, s.restitution);
  out += ", \"friction\": ";
  appendFloat(out, s.friction);
  out += ", \"staticFriction\": ";
  appendFloat(out, s.staticFriction);
  out += ",\n";
  if (m.transform) {
    appendTransform(out, "transform", *m.transform);
    // A Scene built in code may leave prevTransform unset: the same as transform (as the parser reads it).
    appendTransform(out, "prevTransform", m.prevTransform ? *m.prevTransform : *m.transform);
  }
  if (!m.prevVertices.empty()) appendVertices(out, "prevVertices", m.prevVertices);
  appendVertices(out, "vertices", m.vertices);
  out += "      \"triangles\": [";
  for (size_t k = 0; k + 2 < m.indices.size(); k += 3) {
    out += k ? ",\n        [" : "\n        [";
    out += std::to_string(m.indices[k]) + ", " + std::to_string(m.indices[k + 1]) + ", " +
           std::to_string(m.indices[k + 2]) + "]";
  }
  out += m.indices.empty() ? "]\n" : "\n      ]\n";
}

}  // namespace

// Declared only as a friend in scene.h, which the header's VKC_API_BEGIN/END do not cover (the
// pragma applies to namespace-scope declarations): exported by the markers around this definition.
VKC_API_BEGIN
bool operator==(const SceneCloth& a, const SceneCloth& b) {
  if (a.capsules.size() != b.capsules.size()) return false;
  for (size_t k = 0; k < a.capsules.size(); ++k) {
    if (a.capsules[k].sphere0 != b.capsules[k].sphere0 || a.capsules[k].sphere1 != b.capsules[k].sphere1) return false;
  }
  return a.name == b.name && a.particles == b.particles && a.prevParticles == b.prevParticles &&
         a.spheres == b.spheres && a.prevSpheres == b.prevSpheres && a.planes == b.planes &&
         a.prevPlanes == b.prevPlanes && a.convexes == b.convexes && a.restPositions == b.restPositions &&
         a.selfCollisionIndices == b.selfCollisionIndices && a.translation == b.translation && a.rotation == b.rotation &&
         a.collisionGroup == b.collisionGroup && a.collisionMask == b.collisionMask && a.meshes == b.meshes;
}

bool operator==(const SceneMesh& a, const SceneMesh& b) {
  const MeshSurface& x = a.surface;
  const MeshSurface& y = b.surface;
  return a.name == b.name && a.vertices == b.vertices && a.prevVertices == b.prevVertices && a.indices == b.indices &&
         a.transform == b.transform && a.prevTransform == b.prevTransform && x.thickness == y.thickness &&
         x.oneSided == y.oneSided && x.restitution == y.restitution && x.friction == y.friction &&
         x.staticFriction == y.staticFriction;
}
VKC_API_END

namespace {

Result<Scene> parse(std::string_view json, const std::optional<std::string>& baseDirectory) {
  io::JsonReader r(json);
  Scene scene;
  bool format = false, version = false, cloths = false;
  uint32_t fileVersion = 0;
  const char* version2Key = nullptr;  // the first version-2 key seen (refused in a version 1 file)
  r.readObject([&](std::string_view key) {
    if (key == "format") {
      std::string f;
      if (!r.readString(f)) return false;
      if (f != kSceneFormat) return r.fail("expected \"" + std::string(kSceneFormat) + "\", found \"" + f + "\"");
      return format = true;
    }
    if (key == "version") {
      if (!r.readUint32(fileVersion)) return false;
      if (fileVersion < 1 || fileVersion > kSceneVersion) {
        return r.fail("unsupported version " + std::to_string(fileVersion) + " (this build reads versions 1 to " +
                      std::to_string(kSceneVersion) + ")");
      }
      return version = true;
    }
    if (key == "settings") {
      if (!readSettings(r, scene.settings)) return false;
      if (scene.settings.meshCollision && !version2Key) version2Key = "settings.meshCollision";
      return true;
    }
    if (key == "cloths") {
      cloths = true;
      scene.cloths.clear();
      return r.readArray([&](size_t) {
        SceneCloth& c = scene.cloths.emplace_back();
        if (!readCloth(r, c)) return false;
        if (!c.meshes.empty() && !version2Key) version2Key = "cloths[].meshes";
        return true;
      });
    }
    if (key == "meshes") {
      if (!version2Key) version2Key = "meshes";
      scene.meshes.clear();
      return r.readArray([&](size_t) { return readMesh(r, scene.meshes.emplace_back(), baseDirectory); });
    }
    return unknownKey(r, knownKeys({"format", "version", "settings", "cloths", "meshes"}));
  });
  if (!r.failed() && !format) r.fail("missing required key \"format\" (\"" + std::string(kSceneFormat) + "\")");
  if (!r.failed() && !version) r.fail("missing required key \"version\"");
  if (!r.failed() && !cloths) r.fail("missing required key \"cloths\"");
  if (!r.failed() && fileVersion < 2 && version2Key) {
    r.fail(std::string(version2Key) + ": meshes and mesh collision need \"version\": 2 (this file is version " +
           std::to_string(fileVersion) + ")");
  }
  for (size_t c = 0; !r.failed() && c < scene.cloths.size(); ++c) {
    const std::vector<uint32_t>& m = scene.cloths[c].meshes;
    for (size_t k = 0; k < m.size(); ++k) {
      if (m[k] >= scene.meshes.size()) {
        r.fail("cloths[" + std::to_string(c) + "].meshes[" + std::to_string(k) + "]: mesh index " +
               std::to_string(m[k]) + " is out of range; the scene has " + std::to_string(scene.meshes.size()) +
               " meshes");
        break;
      }
    }
  }
  r.expectEnd();
  if (r.failed()) return invalid(r.error());
  return scene;
}

}  // namespace

Result<Scene> parseScene(std::string_view json) { return parse(json, std::nullopt); }

Result<Scene> parseScene(std::string_view json, const std::string& baseDirectory) { return parse(json, baseDirectory); }

Result<Scene> loadScene(const std::string& path) {
  Result<std::string> text = io::readFile(path);
  if (!text) return text.error();
  const size_t slash = path.find_last_of('/');
  const std::string directory = slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
  Result<Scene> scene = parseScene(*text, directory);
  if (!scene) return invalid(path + ": " + scene.message());
  return scene;
}

std::string writeScene(const Scene& scene) {
  std::string out;
  size_t floats = 0;
  for (const SceneCloth& c : scene.cloths) {
    floats += 4 * (c.particles.size() + c.prevParticles.size() + c.spheres.size() + c.prevSpheres.size() +
                   c.planes.size() + c.prevPlanes.size() + c.restPositions.size());
    for (const std::vector<uint32_t>& x : c.convexes) floats += x.size();
  }
  bool version2 = !scene.meshes.empty() || scene.settings.meshCollision.has_value();
  for (const SceneCloth& c : scene.cloths) version2 = version2 || !c.meshes.empty();
  for (const SceneMesh& m : scene.meshes) floats += 3 * (m.vertices.size() + m.prevVertices.size()) + m.indices.size();
  out.reserve(1024 + floats * 16);
  const SceneSettings& s = scene.settings;
  out += "{\n  \"format\": \"";
  out += kSceneFormat;
  // Version 1 when the scene has nothing of version 2, so that older readers take it.
  out += "\",\n  \"version\": " + std::string(version2 ? "2" : "1") + ",\n  \"settings\": {\n";
  out += "    \"continuousCollision\": ";
  out += s.continuousCollision ? "true" : "false";
  out += ",\n    \"friction\": ";
  appendFloat(out, s.friction);
  out += ",\n    \"collisionMassScale\": ";
  appendFloat(out, s.collisionMassScale);
  if (s.selfCollision) {
    out += ",\n    \"selfCollision\": {\"distance\": ";
    appendFloat(out, s.selfCollision->distance);
    out += ", \"stiffness\": ";
    appendFloat(out, s.selfCollision->stiffness);
    out += "}";
  }
  if (s.interCollision) {
    out += ",\n    \"interCollision\": {\"distance\": ";
    appendFloat(out, s.interCollision->distance);
    out += ", \"stiffness\": ";
    appendFloat(out, s.interCollision->stiffness);
    out += ", \"iterations\": " + std::to_string(s.interCollision->iterations) + "}";
  }
  if (s.meshCollision) {
    out += ",\n    \"meshCollision\": {\"continuous\": ";
    out += s.meshCollision->continuous ? "true" : "false";
    out += ", \"maxBounces\": " + std::to_string(s.meshCollision->maxBounces) + "}";
  }
  out += "\n  },\n  \"cloths\": [";
  for (size_t i = 0; i < scene.cloths.size(); ++i) {
    const SceneCloth& c = scene.cloths[i];
    out += i ? ",\n    {\n" : "\n    {\n";
    if (!c.name.empty()) {
      out += "      \"name\": ";
      appendString(out, c.name);
      out += ",\n";
    }
    out += "      \"translation\": ";
    appendFloats(out, c.translation.data(), 3);
    out += ",\n      \"rotation\": ";
    const float q[4] = {c.rotation.x, c.rotation.y, c.rotation.z, c.rotation.w};
    appendFloats(out, q, 4);
    out += ",\n      \"collisionGroup\": " + std::to_string(c.collisionGroup);
    out += ",\n      \"collisionMask\": " + std::to_string(c.collisionMask);
    if (!c.meshes.empty()) {
      out += ",\n      \"meshes\": [";
      for (size_t k = 0; k < c.meshes.size(); ++k) out += (k ? ", " : "") + std::to_string(c.meshes[k]);
      out += "]";
    }
    out += ",\n";
    appendFloat4s(out, "spheres", c.spheres);
    appendFloat4s(out, "prevSpheres", c.prevSpheres);
    out += "      \"capsules\": [";
    for (size_t k = 0; k < c.capsules.size(); ++k) {
      out += k ? ", [" : "[";
      out += std::to_string(c.capsules[k].sphere0) + ", " + std::to_string(c.capsules[k].sphere1) + "]";
    }
    out += "],\n";
    appendFloat4s(out, "planes", c.planes);
    // A Scene built in code may leave prevPlanes empty: the same as planes (as makeSceneBuffers reads it).
    appendFloat4s(out, "prevPlanes", c.prevPlanes.empty() ? c.planes : c.prevPlanes);
    out += "      \"convexes\": [";
    for (size_t k = 0; k < c.convexes.size(); ++k) {
      out += k ? ",\n        [" : "\n        [";
      for (size_t j = 0; j < c.convexes[k].size(); ++j) {
        if (j) out += ", ";
        out += std::to_string(c.convexes[k][j]);
      }
      out += "]";
    }
    out += c.convexes.empty() ? "],\n" : "\n      ],\n";
    if (!c.selfCollisionIndices.empty()) {
      out += "      \"selfCollisionIndices\": [";
      for (size_t k = 0; k < c.selfCollisionIndices.size(); ++k) {
        if (k) out += k % 16 ? ", " : ",\n        ";
        out += std::to_string(c.selfCollisionIndices[k]);
      }
      out += "],\n";
    }
    if (!c.restPositions.empty()) appendFloat4s(out, "restPositions", c.restPositions);
    appendFloat4s(out, "prevParticles", c.prevParticles);
    appendFloat4s(out, "particles", c.particles, true);
    out += "    }";
  }
  out += scene.cloths.empty() ? "]" : "\n  ]";
  if (!scene.meshes.empty()) {
    out += ",\n  \"meshes\": [";
    for (size_t i = 0; i < scene.meshes.size(); ++i) {
      out += i ? ",\n    {\n" : "\n    {\n";
      appendMesh(out, scene.meshes[i]);
      out += "    }";
    }
    out += "\n  ]";
  }
  out += "\n}\n";
  return out;
}

Status saveScene(const Scene& scene, const std::string& path) { return io::writeFile(path, writeScene(scene)); }

SceneBuffers::SceneBuffers(const SceneBuffers& other)
    : particles(other.particles),
      prevParticles(other.prevParticles),
      cloths(other.cloths),
      colliders(other.colliders),
      convexes(other.convexes),
      restPositions(other.restPositions),
      selfSubsets(other.selfSubsets),
      interCloths(other.interCloths),
      interFilters(other.interFilters),
      meshes(other.meshes),
      clothMeshes(other.clothMeshes) {
  // Each cloth's convex views at the same offset in this copy's `convexes` (views that do not point
  // into other.convexes, set by hand, are kept as they are).
  const Convex* begin = other.convexes.data();
  const Convex* end = begin + other.convexes.size();
  for (ClothColliders& c : colliders) {
    const Convex* p = c.convexes.data();
    const std::less<const Convex*> less;  // a total order, also for pointers into other arrays
    if (c.convexes.empty() || less(p, begin) || less(end, p + c.convexes.size())) continue;
    c.convexes = std::span<const Convex>(convexes.data() + (p - begin), c.convexes.size());
  }
}

SceneBuffers& SceneBuffers::operator=(const SceneBuffers& other) {
  if (this != &other) *this = SceneBuffers(other);
  return *this;
}

Result<SceneBuffers> makeSceneBuffers(const Scene& scene) {
  SceneBuffers b;
  uint64_t total = 0;
  for (const SceneCloth& c : scene.cloths) total += c.particles.size();
  if (total > std::numeric_limits<uint32_t>::max()) {
    return Error{ErrorCode::kLimitExceeded,
                 "the scene has " + std::to_string(total) + " particles; at most 2^32 - 1 are supported"};
  }
  b.particles.reserve(total);
  b.prevParticles.reserve(total);
  for (const SceneCloth& c : scene.cloths) {
    b.cloths.push_back({static_cast<uint32_t>(b.particles.size()), static_cast<uint32_t>(c.particles.size())});
    b.particles.insert(b.particles.end(), c.particles.begin(), c.particles.end());
    // A Scene built in code may leave prevParticles empty: the same as particles.
    const std::vector<Float4>& prev = c.prevParticles.empty() ? c.particles : c.prevParticles;
    if (prev.size() != c.particles.size()) {
      return invalid("cloths[" + std::to_string(b.cloths.size() - 1) + "].prevParticles has " +
                     std::to_string(prev.size()) + " elements; particles has " + std::to_string(c.particles.size()));
    }
    b.prevParticles.insert(b.prevParticles.end(), prev.begin(), prev.end());
    b.colliders.push_back({c.spheres, c.prevSpheres, c.capsules, c.planes, c.prevPlanes, {}});
    for (const std::vector<uint32_t>& x : c.convexes) b.convexes.push_back({x});
    b.selfSubsets.emplace_back(c.selfCollisionIndices);
    InterClothDesc desc;
    desc.range = b.cloths.back();
    desc.translation = {c.translation[0], c.translation[1], c.translation[2], 0.0f};
    desc.rotation = c.rotation;
    b.interCloths.push_back(desc);
    b.interFilters.push_back({static_cast<uint32_t>(b.interCloths.size() - 1), c.collisionGroup, c.collisionMask});
  }
  // Meshes: views of the scene's arrays, and each cloth's list (its range checked: a Scene built in code).
  for (const SceneMesh& m : scene.meshes) {
    CollisionMesh cm;
    cm.vertices = m.vertices;
    cm.prevVertices = m.prevVertices;
    cm.indices = m.indices;
    cm.motion = m.motion();
    if (m.transform) {
      const SceneTransform& end = *m.transform;
      const SceneTransform& start = m.prevTransform ? *m.prevTransform : end;
      cm.transform = {end.rotation, {end.translation[0], end.translation[1], end.translation[2], 0.0f}};
      cm.prevTransform = {start.rotation, {start.translation[0], start.translation[1], start.translation[2], 0.0f}};
    }
    cm.surface = m.surface;
    b.meshes.push_back(cm);
  }
  for (size_t i = 0; i < scene.cloths.size(); ++i) {
    const std::vector<uint32_t>& list = scene.cloths[i].meshes;
    for (size_t k = 0; k < list.size(); ++k) {
      if (list[k] >= scene.meshes.size()) {
        return invalid("cloths[" + std::to_string(i) + "].meshes[" + std::to_string(k) + "] is " +
                       std::to_string(list[k]) + "; the scene has " + std::to_string(scene.meshes.size()) + " meshes");
      }
    }
    b.clothMeshes.push_back({list});
  }
  // The convex views are complete (no more reallocation): point each cloth's colliders at its own.
  for (size_t i = 0, first = 0; i < scene.cloths.size(); ++i) {
    const size_t n = scene.cloths[i].convexes.size();
    if (n > 0) b.colliders[i].convexes = std::span<const Convex>(b.convexes.data() + first, n);
    first += n;
  }
  // Rest positions: all cloths with particles give them, or none does.
  std::optional<size_t> withRest, withoutRest;
  for (size_t i = 0; i < scene.cloths.size(); ++i) {
    const SceneCloth& c = scene.cloths[i];
    if (!c.restPositions.empty() && c.restPositions.size() != c.particles.size()) {
      return invalid("cloths[" + std::to_string(i) + "].restPositions has " + std::to_string(c.restPositions.size()) +
                     " elements; particles has " + std::to_string(c.particles.size()));
    }
    if (c.particles.empty()) continue;
    (c.restPositions.empty() ? withoutRest : withRest).emplace(i);
  }
  if (withRest && withoutRest) {
    if (scene.settings.selfCollision) {
      return invalid("cloths[" + std::to_string(*withoutRest) + "].restPositions: absent, but cloths[" +
                     std::to_string(*withRest) +
                     "] has them; self collision needs rest positions for every cloth with particles or for none");
    }
  } else if (withRest) {
    b.restPositions.reserve(total);
    for (const SceneCloth& c : scene.cloths) {
      b.restPositions.insert(b.restPositions.end(), c.restPositions.begin(), c.restPositions.end());
    }
  }
  return b;
}

ShapeCollisionSettings shapeCollisionSettings(const SceneSettings& settings) {
  ShapeCollisionSettings s;
  s.continuous = settings.continuousCollision;
  s.friction = settings.friction;
  s.collisionMassScale = settings.collisionMassScale;
  s.alphaBegin = 0;
  s.alphaEnd = 1;
  return s;
}

SelfCollisionSettings selfCollisionSettings(const SceneSettings& settings) {
  SelfCollisionSettings s;
  s.distance = settings.selfCollision ? settings.selfCollision->distance : 0.0f;
  s.stiffness = settings.selfCollision ? settings.selfCollision->stiffness : 0.0f;
  return s;
}

InterCollisionSettings interCollisionSettings(const SceneSettings& settings) {
  InterCollisionSettings s;
  s.distance = settings.interCollision ? settings.interCollision->distance : 0.0f;
  s.stiffness = settings.interCollision ? settings.interCollision->stiffness : 0.0f;
  s.iterations = settings.interCollision ? settings.interCollision->iterations : 1u;
  return s;
}

bool sceneHasMeshCollision(const Scene& scene) {
  return std::any_of(scene.cloths.begin(), scene.cloths.end(), [](const SceneCloth& c) { return !c.meshes.empty(); });
}

MeshCollisionSettings meshCollisionSettings(const SceneSettings& settings) {
  MeshCollisionSettings s;
  if (settings.meshCollision) {
    s.continuous = settings.meshCollision->continuous;
    s.maxBounces = settings.meshCollision->maxBounces;
  }
  return s;
}

namespace {

// A cloth's local -> world placement, in double: world = rotate(q, local) + t with q normalized.
struct Placement {
  double q[4];
  double t[3];

  explicit Placement(const InterClothDesc& d) : t{d.translation.x, d.translation.y, d.translation.z} {
    const double r[4] = {d.rotation.x, d.rotation.y, d.rotation.z, d.rotation.w};
    const double n = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    for (int k = 0; k < 4; ++k) q[k] = n > 0 ? r[k] / n : (k == 3 ? 1.0 : 0.0);
  }

  // v + w (2 u x v) + u x (2 u x v), with u = sign * q.xyz (sign -1: the inverse rotation).
  static void rotate(const double* q, double sign, double* v) {
    const double u[3] = {sign * q[0], sign * q[1], sign * q[2]};
    const double c[3] = {2 * (u[1] * v[2] - u[2] * v[1]), 2 * (u[2] * v[0] - u[0] * v[2]), 2 * (u[0] * v[1] - u[1] * v[0])};
    const double d[3] = {u[1] * c[2] - u[2] * c[1], u[2] * c[0] - u[0] * c[2], u[0] * c[1] - u[1] * c[0]};
    for (int k = 0; k < 3; ++k) v[k] += q[3] * c[k] + d[k];
  }

  Float4 toWorld(const Float4& p) const {
    double v[3] = {p.x, p.y, p.z};
    rotate(q, 1.0, v);
    return {static_cast<float>(v[0] + t[0]), static_cast<float>(v[1] + t[1]), static_cast<float>(v[2] + t[2]), p.w};
  }

  Float4 toLocal(const Float4& p) const {
    double v[3] = {double{p.x} - t[0], double{p.y} - t[1], double{p.z} - t[2]};
    rotate(q, -1.0, v);
    return {static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2]), p.w};
  }
};

bool sameFloat4Bits(const Float4& a, const Float4& b) { return std::memcmp(&a, &b, sizeof(Float4)) == 0; }

}  // namespace

Status collideSceneMeshes(SceneBuffers& buffers, std::span<const CollisionMesh> meshes,
                          const MeshCollisionSettings& settings, const MeshTree& tree,
                          const std::function<Status(const MeshCollisionInput&)>& collide) {
  if (buffers.clothMeshes.size() != buffers.cloths.size() || buffers.interCloths.size() != buffers.cloths.size()) {
    return invalid("collideSceneMeshes: the buffers have " + std::to_string(buffers.cloths.size()) + " cloths but " +
                   std::to_string(buffers.clothMeshes.size()) + " mesh lists (use makeSceneBuffers)");
  }
  // World-space copies of the particles of the cloths that list meshes (the others are not read).
  std::vector<Float4> world = buffers.particles, worldPrev = buffers.prevParticles;
  for (size_t c = 0; c < buffers.cloths.size(); ++c) {
    if (buffers.clothMeshes[c].meshes.empty()) continue;
    const Placement place(buffers.interCloths[c]);
    const ClothRange r = buffers.cloths[c];
    for (uint32_t i = r.first; i < r.first + r.count; ++i) {
      world[i] = place.toWorld(buffers.particles[i]);
      worldPrev[i] = place.toWorld(buffers.prevParticles[i]);
    }
  }
  const std::vector<Float4> before = world, beforePrev = worldPrev;
  MeshCollisionInput input;
  input.particles = world;
  input.prevParticles = worldPrev;
  input.cloths = buffers.cloths;
  input.clothMeshes = buffers.clothMeshes;
  input.meshes = meshes;
  input.settings = settings;
  input.tree = tree;
  VKC_TRY(collide(input));
  // Back into each cloth's space, only what the stage changed.
  for (size_t c = 0; c < buffers.cloths.size(); ++c) {
    if (buffers.clothMeshes[c].meshes.empty()) continue;
    const Placement place(buffers.interCloths[c]);
    const ClothRange r = buffers.cloths[c];
    for (uint32_t i = r.first; i < r.first + r.count; ++i) {
      if (sameFloat4Bits(world[i], before[i]) && sameFloat4Bits(worldPrev[i], beforePrev[i])) continue;
      buffers.particles[i] = place.toLocal(world[i]);
      buffers.prevParticles[i] = place.toLocal(worldPrev[i]);
    }
  }
  return {};
}

namespace {

void quatMul(const double* a, const double* b, double* out) {
  out[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
  out[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
  out[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
  out[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
}

void normalize4(double* q) {
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int k = 0; k < 4; ++k) q[k] = n > 0 ? q[k] / n : (k == 3 ? 1.0 : 0.0);
}

}  // namespace

RigidTransform interpolateRigidTransform(const RigidTransform& start, const RigidTransform& end, float alpha) {
  if (alpha <= 0.0f) return start;
  if (alpha >= 1.0f) return end;
  double q0[4] = {start.rotation.x, start.rotation.y, start.rotation.z, start.rotation.w};
  double q1[4] = {end.rotation.x, end.rotation.y, end.rotation.z, end.rotation.w};
  normalize4(q0);
  normalize4(q1);
  const double inv0[4] = {-q0[0], -q0[1], -q0[2], q0[3]};
  double delta[4];
  quatMul(inv0, q1, delta);
  if (delta[3] < 0) {
    for (double& v : delta) v = -v;  // the shorter way
  }
  // delta^alpha: the same axis, alpha times the angle.
  const double s = std::sqrt(delta[0] * delta[0] + delta[1] * delta[1] + delta[2] * delta[2]);
  const double half = std::atan2(s, delta[3]);
  const double a = alpha;
  double power[4] = {0, 0, 0, 1};
  if (s > 0) {
    const double k = std::sin(a * half) / s;
    power[0] = delta[0] * k, power[1] = delta[1] * k, power[2] = delta[2] * k, power[3] = std::cos(a * half);
  }
  double q[4];
  quatMul(q0, power, q);
  normalize4(q);
  RigidTransform t;
  t.rotation = {static_cast<float>(q[0]), static_cast<float>(q[1]), static_cast<float>(q[2]), static_cast<float>(q[3])};
  auto lerp = [a](float x, float y) { return static_cast<float>(double{x} + (double{y} - double{x}) * a); };
  t.translation = {lerp(start.translation.x, end.translation.x), lerp(start.translation.y, end.translation.y),
                   lerp(start.translation.z, end.translation.z), 0.0f};
  return t;
}

Status meshesAt(std::span<const CollisionMesh> meshes, float alphaBegin, float alphaEnd, MeshesAtSubstep& out) {
  if (!(alphaBegin >= 0.0f && alphaBegin <= alphaEnd && alphaEnd <= 1.0f)) {
    return invalid("meshesAt: alphaBegin " + std::to_string(alphaBegin) + " and alphaEnd " + std::to_string(alphaEnd) +
                   " must satisfy 0 <= alphaBegin <= alphaEnd <= 1");
  }
  out.meshes.assign(meshes.begin(), meshes.end());
  out.vertices.resize(meshes.size());
  out.prevVertices.resize(meshes.size());
  for (size_t m = 0; m < meshes.size(); ++m) {
    CollisionMesh& cm = out.meshes[m];
    if (cm.motion == MeshMotion::kRigid) {
      cm.prevTransform = interpolateRigidTransform(meshes[m].prevTransform, meshes[m].transform, alphaBegin);
      cm.transform = interpolateRigidTransform(meshes[m].prevTransform, meshes[m].transform, alphaEnd);
    } else if (cm.motion == MeshMotion::kDeforming) {
      if (meshes[m].prevVertices.size() != meshes[m].vertices.size()) {
        return invalid("meshes[" + std::to_string(m) + "].prevVertices has " +
                       std::to_string(meshes[m].prevVertices.size()) + " elements; vertices has " +
                       std::to_string(meshes[m].vertices.size()));
      }
      auto at = [&](float alpha, std::vector<Float4>& dst) {
        dst.resize(meshes[m].vertices.size());
        for (size_t v = 0; v < dst.size(); ++v) {
          const Float4 a = meshes[m].prevVertices[v], b = meshes[m].vertices[v];
          dst[v] = alpha >= 1.0f ? b
                   : alpha <= 0.0f
                       ? a
                       : Float4{a.x + (b.x - a.x) * alpha, a.y + (b.y - a.y) * alpha, a.z + (b.z - a.z) * alpha, b.w};
        }
      };
      at(alphaBegin, out.prevVertices[m]);
      at(alphaEnd, out.vertices[m]);
      cm.prevVertices = out.prevVertices[m];
      cm.vertices = out.vertices[m];
    }
  }
  return {};
}

void storeSceneBuffers(const SceneBuffers& buffers, Scene& scene) {
  for (size_t c = 0; c < scene.cloths.size() && c < buffers.cloths.size(); ++c) {
    SceneCloth& cloth = scene.cloths[c];
    const ClothRange r = buffers.cloths[c];
    cloth.particles.assign(buffers.particles.begin() + r.first, buffers.particles.begin() + r.first + r.count);
    cloth.prevParticles.assign(buffers.prevParticles.begin() + r.first,
                               buffers.prevParticles.begin() + r.first + r.count);
  }
}

}  // namespace vkc
