// Double-precision references for the particle-vs-triangle tests (written independently of the
// float kernel in shaders/shared/collide_meshes_math.h: normal equations in double).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>
#include <random>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "shared/collide_meshes_math.h"

namespace vkc::test::meshes {

using D3 = glm::dvec3;
using glm::vec3;

inline D3 d3(vec3 v) { return D3(v); }

inline double segmentDistance(D3 p, D3 e0, D3 e1) {
  const D3 e = e1 - e0;
  const double ee = glm::dot(e, e);
  const double s = ee > 0 ? glm::clamp(glm::dot(p - e0, e) / ee, 0.0, 1.0) : 0.0;
  return glm::length(p - (e0 + e * s));
}

// Distance from p to the triangle: the plane's foot point when its barycentrics (2x2 normal
// equations) are inside, else the nearest edge.
inline double triangleDistance(D3 p, D3 a, D3 b, D3 c) {
  const D3 u = b - a, v = c - a, w = p - a;
  const double uu = glm::dot(u, u), uv = glm::dot(u, v), vv = glm::dot(v, v);
  const double det = uu * vv - uv * uv;
  if (det > 1e-14 * uu * vv) {
    const double wu = glm::dot(w, u), wv = glm::dot(w, v);
    const double s = (vv * wu - uv * wv) / det, t = (uu * wv - uv * wu) / det;
    if (s >= 0 && t >= 0 && s + t <= 1) return glm::length(p - (a + u * s + v * t));
  }
  return std::min({segmentDistance(p, a, b), segmentDistance(p, b, c), segmentDistance(p, c, a)});
}

inline D3 lerpD(D3 x0, D3 x1, double t) { return x0 + (x1 - x0) * t; }

// Fine-step reference: the smallest sampled distance of a linearly moving particle and triangle and
// the first sampled time with distance < thickness (2 when none). Samples are a lower bound on
// how close they come: a sampled dip is a real one.
struct FineResult {
  double minDistance = 1e300;
  double firstDip = 2.0;
};

template <class Positions>  // positions(t, p, a, b, c) in double
FineResult fineSteps(int steps, double thickness, Positions&& positions) {
  FineResult r;
  for (int i = 0; i <= steps; ++i) {
    const double t = double(i) / steps;
    D3 p, a, b, c;
    positions(t, p, a, b, c);
    const double d = triangleDistance(p, a, b, c);
    r.minDistance = std::min(r.minDistance, d);
    if (d < thickness && r.firstDip > 1.5) r.firstDip = t;
  }
  return r;
}

inline vec3 randomVec(std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  const float x = u(rng), y = u(rng), z = u(rng);
  return {x, y, z};
}

// --- The public vertex-face CCD queries (tests/data/ccd-queries) ----------------------------------
struct Query {
  vec3 v[8];  // vertex-face: v, f0, f1, f2 at t0, then at t1; edge-edge: ea0, ea1, eb0, eb1 at t0, then at t1
  bool label;
};

// A rational given as two decimal strings, rounded to float. strtold reads each integer to a 64-bit
// significand (relative error <= 2^-64), the quotient adds one more such rounding, and the final
// rounding to float is within half a unit of float's last place plus that: every coordinate is
// within one unit of the last place of the exact rational. triCcdCore's margin (128 units of the
// query's largest coordinate) covers this, so the float query's answer can only differ from the
// exact one inside the margin, where it reports a hit: a true collision cannot be lost to the
// conversion. Near misses within the margin become false positives, counted below.
inline float rational(const std::string& num, const std::string& den) {
  const long double n = std::strtold(num.c_str(), nullptr), d = std::strtold(den.c_str(), nullptr);
  return float(n / d);
}

inline std::vector<Query> readQueries(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<Query> out;
  std::string line;
  Query q{};
  int row = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, ',')) cols.push_back(col);
    if (cols.size() != 7) ADD_FAILURE() << file << ": row with " << cols.size() << " columns";
    if (cols.size() != 7) return {};
    q.v[row] = vec3(rational(cols[0], cols[1]), rational(cols[2], cols[3]), rational(cols[4], cols[5]));
    if (row == 0) q.label = cols[6] == "1";
    if (++row == 8) {
      out.push_back(q);
      row = 0;
    }
  }
  EXPECT_EQ(row, 0) << file;
  return out;
}

// The public queries' directory (tests/data/ccd-queries, MIT, see its LICENSE).
inline std::filesystem::path ccdQueryRoot() {
  return std::filesystem::path(VKC_SOURCE_DIR) / "tests/data/ccd-queries";
}
// The files of one kind of query ("vertex-face": 14 files, "edge-edge": 14), sorted.
inline std::vector<std::filesystem::path> ccdQueryFiles(const char* kind) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(ccdQueryRoot()))
    if (e.path().extension() == ".csv" && e.path().parent_path().filename() == kind) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}
inline std::vector<std::filesystem::path> vertexFaceQueryFiles() { return ccdQueryFiles("vertex-face"); }

// Runs `query` (true: a hit; *capped: the hit is at the step cap) on every public query of one kind,
// printing a line per file; the totals.
struct PublicCcdTally {
  int total = 0, positives = 0, fn = 0, fp = 0, capped = 0;
};
template <class QueryFn>
PublicCcdTally runPublicCcdQueries(const char* kind, QueryFn query) {
  PublicCcdTally tally;
  const std::filesystem::path root = ccdQueryRoot();
  EXPECT_TRUE(std::filesystem::exists(root / "LICENSE"));
  const std::vector<std::filesystem::path> files = ccdQueryFiles(kind);
  EXPECT_EQ(files.size(), 14u);
  for (const auto& f : files) {
    int fileFn = 0, fileFp = 0, fileN = 0;
    for (const Query& q : readQueries(f)) {
      bool capped = false;
      const bool h = query(q, &capped);
      ++tally.total;
      ++fileN;
      tally.positives += q.label;
      if (q.label && !h) ++fileFn;
      if (!q.label && h) ++fileFp;
      if (h && capped) ++tally.capped;
    }
    std::printf("  %-55s %4d queries  FN %d  FP %d\n", f.lexically_relative(root).string().c_str(), fileN, fileFn,
                fileFp);
    tally.fn += fileFn;
    tally.fp += fileFp;
  }
  std::printf("%s queries: %d (%d colliding): false negatives %d, false positives %d, hits at the step cap %d\n", kind,
              tally.total, tally.positives, tally.fn, tally.fp, tally.capped);
  return tally;
}

}  // namespace vkc::test::meshes
