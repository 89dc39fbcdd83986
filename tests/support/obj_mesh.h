// Triangle meshes for tests and benchmarks: a minimal OBJ reader, 1-to-4 subdivision, evenly strided
// subsets of triangles, the octahedron. (Benchmarks: bench/bench_meshes.h.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "vkcollide/types.h"

namespace vkc::test {

struct Mesh {
  std::vector<Float4> vertices;
  std::vector<uint32_t> indices;
  uint32_t triangles() const { return static_cast<uint32_t>(indices.size() / 3); }
};

// A minimal OBJ reader: "v x y z" and polygonal "f" lines (v, v/t, v//n, v/t/n; negative indices
// relative), polygons fanned into triangles. Enough for the test meshes; not a general OBJ parser.
inline bool readObj(const std::string& path, Mesh& m) {
  std::ifstream f(path);
  if (!f) return false;
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "v") {
      Float4 v{0, 0, 0, 0};
      ls >> v.x >> v.y >> v.z;
      m.vertices.push_back(v);
    } else if (tag == "f") {
      std::vector<uint32_t> poly;
      for (std::string corner; ls >> corner;) {
        const long i = std::strtol(corner.c_str(), nullptr, 10);
        const long idx = i < 0 ? static_cast<long>(m.vertices.size()) + i : i - 1;
        if (idx < 0 || idx >= static_cast<long>(m.vertices.size())) return false;
        poly.push_back(static_cast<uint32_t>(idx));
      }
      for (size_t k = 2; k < poly.size(); ++k) m.indices.insert(m.indices.end(), {poly[0], poly[k - 1], poly[k]});
    }
  }
  return !m.indices.empty();
}

// 1-to-4 subdivision (edge midpoints shared between the two triangles of an edge).
inline Mesh subdivide(const Mesh& in) {
  Mesh out;
  out.vertices = in.vertices;
  std::unordered_map<uint64_t, uint32_t> mid;
  mid.reserve(in.indices.size());
  auto midpoint = [&](uint32_t a, uint32_t b) {
    const uint64_t key = (uint64_t{std::min(a, b)} << 32) | std::max(a, b);
    auto [it, fresh] = mid.try_emplace(key, static_cast<uint32_t>(out.vertices.size()));
    if (fresh) {
      const Float4 &p = out.vertices[a], &q = out.vertices[b];
      out.vertices.push_back({(p.x + q.x) * 0.5f, (p.y + q.y) * 0.5f, (p.z + q.z) * 0.5f, 0});
    }
    return it->second;
  };
  out.indices.reserve(in.indices.size() * 4);
  for (size_t t = 0; t < in.indices.size(); t += 3) {
    const uint32_t a = in.indices[t], b = in.indices[t + 1], c = in.indices[t + 2];
    const uint32_t ab = midpoint(a, b), bc = midpoint(b, c), ca = midpoint(c, a);
    out.indices.insert(out.indices.end(), {a, ab, ca, ab, b, bc, ca, bc, c, ab, bc, ca});
  }
  return out;
}

// n triangles spread evenly over `m` (every (size / n)-th, by position).
inline Mesh strided(const Mesh& m, uint32_t n) {
  Mesh out;
  out.vertices = m.vertices;
  out.indices.reserve(size_t{n} * 3);
  const uint64_t total = m.triangles();
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t t = i * total / n;
    out.indices.insert(out.indices.end(), m.indices.begin() + static_cast<std::ptrdiff_t>(3 * t),
                       m.indices.begin() + static_cast<std::ptrdiff_t>(3 * t + 3));
  }
  return out;
}

// m rotated by `angle` (radians) about the unit `axis` through the origin (Rodrigues' formula, in
// floats), then moved by `shift`.
inline Mesh rotatedAndMoved(const Mesh& m, const float axis[3], float angle, const float shift[3]) {
  Mesh out = m;
  const float c = std::cos(angle), s = std::sin(angle);
  const float ax = axis[0], ay = axis[1], az = axis[2];
  for (Float4& p : out.vertices) {
    const float d = (ax * p.x + ay * p.y + az * p.z) * (1.0f - c);
    const float x = p.x * c + (ay * p.z - az * p.y) * s + ax * d + shift[0];
    const float y = p.y * c + (az * p.x - ax * p.z) * s + ay * d + shift[1];
    const float z = p.z * c + (ax * p.y - ay * p.x) * s + az * d + shift[2];
    p = {x, y, z, 0};
  }
  return out;
}

// The unit octahedron: 8 triangles, subdivided into a sphere-like mesh when no OBJ file is found.
inline Mesh octahedron() {
  Mesh m;
  m.vertices = {{1, 0, 0, 0}, {-1, 0, 0, 0}, {0, 1, 0, 0}, {0, -1, 0, 0}, {0, 0, 1, 0}, {0, 0, -1, 0}};
  m.indices = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};
  return m;
}

}  // namespace vkc::test
