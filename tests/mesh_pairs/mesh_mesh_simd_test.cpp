// The SIMD parts of mesh against mesh on the CPU (issue 17): the wide tandem walk
// (src/cpu/mesh_pair_walk_simd.cpp) finds the cell pairs of the scalar walk and of brute force, and the
// triangle pairs' plane-side pre-test (src/cpu/geometry_queries_mesh_mesh_simd.h) rejects only pairs
// for which geomTriTriContact reports no contact, on random and degenerate pairs, and rejects the pairs
// that lie apart on both sides' planes by a margin (triTriIntersect's first return, whichever plane it
// uses), every coplanar pair and the pairs whose crossing segment misses the other triangle.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/bounds.h"
#include "cpu/geometry_queries_mesh_mesh_simd.h"
#include "cpu/mesh_pair_walk.h"
#include "shared/geometry_queries_mesh_mesh.h"
#include "shared/tri_tri.h"
#include "vkcollide/bvh.h"

namespace vkc::test {
namespace {

using glm::vec3;

// A soup of `count` random triangles (edges up to `size`) in the unit cube, with its tree and layout.
struct Soup {
  std::vector<Float4> points;
  std::vector<uint32_t> indices;
  std::vector<BvhNode> nodes;
  std::vector<Aabb> boxes;
  std::vector<uint32_t> parents;
  cpu::PairWalkTree walk;
};

Soup makeSoup(std::mt19937& rng, uint32_t count, float size) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f), e(-size, size);
  Soup s;
  for (uint32_t t = 0; t < count; ++t) {
    const vec3 c(u(rng), u(rng), u(rng));
    for (int k = 0; k < 3; ++k) {
      s.points.push_back({c.x + e(rng), c.y + e(rng), c.z + e(rng), 0.0f});
      s.indices.push_back(3 * t + static_cast<uint32_t>(k));
    }
  }
  s.nodes.resize(bvhNodeCount(count));
  s.boxes.resize(count);
  s.parents.resize(count);
  const BvhInput in{.vertices = s.points, .indices = s.indices, .nodes = s.nodes, .primitiveBoxes = s.boxes,
                    .leafParents = s.parents};
  EXPECT_TRUE(buildBvhCpu(in, Backend::kCpuScalar));
  s.walk = cpu::pairWalkLayout(s.nodes, s.boxes);
  return s;
}

// Every cell pair whose boxes overlap, X's widened by pairWalkReach (the walks' definition).
std::vector<uint64_t> bruteForce(const Soup& x, const Soup& y, float thickness) {
  std::vector<uint64_t> out;
  for (size_t i = 0; i < x.boxes.size(); ++i) {
    const Aabb& a = x.boxes[i];
    const float lo[3] = {a.lo.x, a.lo.y, a.lo.z}, hi[3] = {a.hi.x, a.hi.y, a.hi.z};
    const float r = cpu::pairWalkReach(lo, hi, thickness);
    for (size_t j = 0; j < y.boxes.size(); ++j) {
      const Aabb& b = y.boxes[j];
      const bool apart = hi[0] + r < b.lo.x || hi[1] + r < b.lo.y || hi[2] + r < b.lo.z || b.hi.x < lo[0] - r ||
                         b.hi.y < lo[1] - r || b.hi.z < lo[2] - r;
      if (!apart) out.push_back((static_cast<uint64_t>(i) << 32) | j);
    }
  }
  return out;
}

TEST(MeshMeshSimd, WideWalkFindsTheScalarWalksPairs) {
  std::mt19937 rng(7);
  const uint32_t sizes[][2] = {{1, 1}, {1, 2}, {2, 3}, {3, 5}, {5, 1}, {17, 33}, {600, 700}};
  for (const auto& [nx, ny] : sizes) {
    for (const float thickness : {0.0f, 0.03f}) {
      const Soup x = makeSoup(rng, nx, 0.05f), y = makeSoup(rng, ny, 0.05f);
      // Wide nodes have 1 to 4 children, every cell once.
      std::vector<int> seen(nx, 0);
      for (const cpu::PairWalkNode4& n : x.walk.wide) {
        ASSERT_GE(n.count, 1u);
        ASSERT_LE(n.count, 4u);
        for (uint32_t c = 0; c < n.count; ++c) {
          if (n.child[c] & kBvhLeafBit) ++seen[n.child[c] & ~kBvhLeafBit];
        }
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(nx));
      std::vector<uint64_t> stack, scalar, simd;
      cpu::pairWalk(x.walk, y.walk, thickness, stack, scalar);
      cpu::pairWalkSimd(x.walk, y.walk, thickness, stack, simd);
      std::sort(scalar.begin(), scalar.end());
      std::sort(simd.begin(), simd.end());
      const std::vector<uint64_t> brute = bruteForce(x, y, thickness);
      EXPECT_EQ(scalar, brute) << nx << " x " << ny << " thickness " << thickness;
      EXPECT_EQ(simd, brute) << nx << " x " << ny << " thickness " << thickness;
      if (nx >= 600) {
        EXPECT_GT(brute.size(), 100u);  // the big soups overlap often
      }
    }
  }
}

// The self walks (a tree against itself, each pair of cells once): the pairs cx < cy of the tandem
// walk and of brute force, each key once, lower cell first; on soups of every small size (wide nodes
// of one to four children, cells beside nodes) and large ones, with and without thickness. With the
// cells' vertex numbers in the layout (2, 3 or 4 a cell, drawn from a small pool, so that many
// overlapping pairs share one): brute force's pairs less those sharing a vertex.
TEST(MeshMeshSimd, SelfWalksFindEachPairOfTheTandemWalkOnce) {
  std::mt19937 rng(11);
  for (const uint32_t n : {1u, 2u, 3u, 4u, 5u, 6u, 9u, 17u, 33u, 64u, 700u, 3000u}) {
    for (const float thickness : {0.0f, 0.03f}) {
      const Soup s = makeSoup(rng, n, n >= 3000 ? 0.06f : n >= 700 ? 0.1f : 0.2f);
      std::vector<uint64_t> stack, tandem;
      cpu::pairWalk(s.walk, s.walk, thickness, stack, tandem);
      std::erase_if(tandem, [](uint64_t k) { return (k >> 32) >= (k & 0xFFFFFFFFu); });
      std::sort(tandem.begin(), tandem.end());
      std::vector<uint64_t> brute = bruteForce(s, s, thickness);
      std::erase_if(brute, [](uint64_t k) { return (k >> 32) >= (k & 0xFFFFFFFFu); });
      ASSERT_EQ(tandem, brute) << n;
      if (n >= 700) {
        EXPECT_GT(brute.size(), n);  // the big soups overlap often
      }
      for (const uint32_t corners : {0u, 2u, 3u, 4u}) {  // 0: a layout without vertex numbers
        std::vector<uint32_t> ids(corners * n);
        std::uniform_int_distribution<uint32_t> vertex(0, 8 + n / 100);
        for (uint32_t& v : ids) v = vertex(rng);
        const cpu::PairWalkTree walk = cpu::pairWalkLayout(s.nodes, s.boxes, ids, corners);
        std::vector<uint64_t> expected = brute, scalar, simd;
        std::erase_if(expected, [&](uint64_t k) {
          const uint32_t cx = static_cast<uint32_t>(k >> 32), cy = static_cast<uint32_t>(k);
          for (uint32_t i = 0; i < corners; ++i) {
            for (uint32_t j = 0; j < corners; ++j) {
              if (ids[corners * cx + i] == ids[corners * cy + j]) return true;
            }
          }
          return false;
        });
        if (corners == 3 && n >= 700) {  // both kinds of pairs are many
          EXPECT_GT(expected.size(), brute.size() / 10) << n;
          EXPECT_LT(expected.size(), brute.size() * 95 / 100) << n;
        }
        cpu::pairWalkSelf(walk, thickness, stack, scalar);
        cpu::pairWalkSelfSimd(walk, thickness, stack, simd);
        const std::string what = std::to_string(n) + " cells, thickness " + std::to_string(thickness) + ", " +
                                 std::to_string(corners) + " corners";
        for (const auto* found : {&scalar, &simd}) {
          for (uint64_t k : *found) ASSERT_LT(k >> 32, k & 0xFFFFFFFFu) << what;  // lower cell first
        }
        EXPECT_EQ(scalar.size(), expected.size()) << what;  // no pair twice
        EXPECT_EQ(simd.size(), expected.size()) << what;
        std::sort(scalar.begin(), scalar.end());
        std::sort(simd.begin(), simd.end());
        EXPECT_EQ(scalar, expected) << what;
        EXPECT_EQ(simd, expected) << what;
      }
    }
  }
}

// Random, grid, coplanar, shared-edge, shared-vertex, vertex-on-plane, sliver and near-coplanar pairs,
// and pairs far apart on both planes (kApart).
// kEdgeGraze: Q crosses P's plane along a line that passes within 1e-7..1e-3 (either side) of an
// edge of P (the crossing segment's clip against the plane triangle's edges, triTriCore's second return).
enum Family {
  kRandom, kGrid, kCoplanar, kSharedEdge, kSharedVertex, kOnPlane, kSliver, kNearCoplanar, kApart, kEdgeGraze,
  kFamilies
};

// Whether both triangles are well shaped (twice the area / longest edge^2 > 0.05) and each lies more
// than 0.01 to one side of the other's plane (in double): far beyond triTriIntersect's band (at most
// 4e-6 * (1.6 + 3.5 / 0.05) for coordinates within 1.6), so it rejects the pair at its first step.
bool apartOnBothPlanes(const std::array<vec3, 6>& t) {
  for (int side = 0; side < 2; ++side) {
    const glm::dvec3 a(t[3 * side]), b(t[3 * side + 1]), c(t[3 * side + 2]);
    const glm::dvec3 n = glm::cross(b - a, c - a);
    const double l2 = std::max({glm::dot(b - a, b - a), glm::dot(c - b, c - b), glm::dot(a - c, a - c)});
    if (!(glm::length(n) > 0.05 * l2)) return false;
    const glm::dvec3 un = n / glm::length(n);
    int pos = 0, neg = 0;
    for (int k = 0; k < 3; ++k) {
      const double d = glm::dot(un, glm::dvec3(t[3 * (1 - side) + k]) - a);
      pos += d > 0.01;
      neg += d < -0.01;
    }
    if (pos != 3 && neg != 3) return false;
  }
  return true;
}

TEST(MeshMeshSimd, PlanePreTestRejectsOnlyWhatTheExactTestRejects) {
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const auto rv = [&] { return vec3(u(rng), u(rng), u(rng)); };
  const auto grid = [&] { return glm::round(rv() * 4.0f) / 4.0f; };
  int rejected = 0, exactRejected = 0, apartCases = 0, apartRejected = 0;
  // Pairs that triTriIntersect finds but that give no contact (coplanar, touching, degenerate; the
  // pre-test rejects them by the plane and clip steps), and the coplanar family's rejections.
  int hitNoContactRejected = 0, coplanarCases = 0, coplanarRejected = 0;
  // Pairs whose crossing segment triTriIntersect clips away without an edge far outside (a touching
  // point at best) and those of them rejected.
  int missedCases = 0, missedRejected = 0;
  // Pairs whose features the pre-test gives (a plain crossing segment), and the plain segments.
  int known = 0, plainCases = 0, randomKnown = 0, randomPlain = 0;
  // The misses (the mesh intersection's pre-test: triTriIntersect finds nothing), and the pairs it
  // finds nothing for.
  int missed = 0, emptyCases = 0, apartMissed = 0;
  std::vector<Family> families;
  cpu::TriPlaneBatch batch{};
  std::vector<std::array<vec3, 6>> pairs;
  for (int i = 0; i < 40000; ++i) {
    const Family fam = Family(i % kFamilies);
    vec3 p[3] = {rv(), rv(), rv()}, q[3] = {rv(), rv(), rv()};
    switch (fam) {
      case kGrid:
        for (vec3& v : p) v = grid();
        for (vec3& v : q) v = grid();
        break;
      case kCoplanar:
        for (vec3& v : p) v.z = 0.25f;
        for (vec3& v : q) v.z = 0.25f;
        break;
      case kSharedEdge: q[0] = p[0], q[1] = p[1]; break;
      case kSharedVertex: q[2] = p[1]; break;
      case kOnPlane: q[0] = p[0] + (p[1] - p[0]) * 0.25f + (p[2] - p[0]) * 0.5f; break;
      case kSliver:
        p[2] = p[0] + (p[1] - p[0]) * 0.5f + (i % 3 == 0 ? rv() * 1e-6f : vec3(0.0f));
        if (i % 2 == 0) q[2] = q[0] + (q[1] - q[0]) * 0.25f;
        break;
      case kNearCoplanar: {
        const vec3 n = glm::normalize(glm::cross(p[1] - p[0], p[2] - p[0]));
        const float scale = std::pow(10.0f, -7.0f + 4.0f * 0.5f * (u(rng) + 1.0f));
        for (vec3& v : q) v = v - n * glm::dot(n, v - p[0]) + n * (u(rng) * scale);
        break;
      }
      case kApart:  // P in z < -0.1, Q in z > 0.1, each nearly flat across z: apart on both planes
        for (vec3& v : p) v = vec3(v.x, v.y, -0.5f + 0.05f * v.z);
        for (vec3& v : q) v = vec3(v.x, v.y, 0.5f + 0.05f * v.z);
        break;
      case kEdgeGraze: {
        const vec3 n = glm::normalize(glm::cross(p[1] - p[0], p[2] - p[0]));
        vec3 out = glm::normalize(glm::cross(p[1] - p[0], n));
        if (glm::dot(out, p[2] - p[0]) > 0.0f) out = -out;
        const vec3 c = p[0] + (p[1] - p[0]) * (0.5f * (u(rng) + 1.0f));
        const float delta = (u(rng) < 0.0f ? -1.0f : 1.0f) * std::pow(10.0f, -7.0f + 4.0f * 0.5f * (u(rng) + 1.0f));
        q[0] = c + n * 0.5f + out * delta;
        q[1] = c - n * 0.5f + out * delta + (p[1] - p[0]) * (0.3f * u(rng));
        q[2] = c + out * (delta + 0.5f) + n * (0.1f * u(rng));
        break;
      }
      default: break;
    }
    pairs.push_back({p[0], p[1], p[2], q[0], q[1], q[2]});
    families.push_back(fam);
    // Batches of 1..16 pairs.
    const size_t n = 1 + static_cast<size_t>(i) % cpu::kTriPlaneBatch;
    if (pairs.size() < n && i + 1 < 40000) continue;
    for (size_t k = 0; k < pairs.size(); ++k) {
      for (int c = 0; c < 6; ++c) {
        for (int a = 0; a < 3; ++a) batch.v[c][a][k] = pairs[k][static_cast<size_t>(c)][a];
      }
    }
    uint8_t features[cpu::kTriPlaneBatch];
    uint32_t misses = ~0u;
    const uint32_t mask = cpu::triPlaneRejects(batch, static_cast<uint32_t>(pairs.size()), features, &misses);
    EXPECT_EQ(mask >> pairs.size(), 0u);
    EXPECT_EQ(misses & ~mask, 0u);  // a subset of the rejections
    for (size_t k = 0; k < pairs.size(); ++k) {
      const auto& t = pairs[k];
      gpu::TriTriResult r;
      const bool hit = gpu::triTriIntersect(t[0], t[1], t[2], t[3], t[4], t[5], r);
      const bool rej = (mask >> k) & 1u;
      exactRejected += !hit;
      rejected += rej;
      const bool miss = (misses >> k) & 1u;
      missed += miss;
      emptyCases += !hit && r.count == 0;
      if (miss && (hit || r.count != 0)) {
        ADD_FAILURE() << "pair " << i << "/" << k << " called a miss by the pre-test, triTriIntersect count " << r.count;
      }
      gpu::GeomElement ex, ey;
      uint32_t edgeKey = 0;
      const uint32_t kind = gpu::geomTriTriContact(t[0], t[1], t[2], glm::uvec4(0, 1, 2, 0), 1u, t[3], t[4], t[5],
                                                   glm::uvec4(3, 4, 5, 0), 2u, ex, ey, edgeKey);
      if (rej && kind != gpu::kGeomTriTriNone) {
        ADD_FAILURE() << "pair " << i << "/" << k << " rejected by the pre-test, a contact of kind " << kind;
      }
      // Known features: triTriIntersect's plain segment's, and the contact from them is bitwise the
      // full test's.
      const bool plain = hit && r.count == 2u &&
                         (r.flags & (gpu::kTriTriCoplanar | gpu::kTriTriWithinBand | gpu::kTriTriDegenerate)) == 0u;
      plainCases += plain;
      randomPlain += plain && families[k] == kRandom;
      randomKnown += features[k] != cpu::kTriPlaneUnknown && families[k] == kRandom;
      if (features[k] != cpu::kTriPlaneUnknown) {
        ++known;
        if (rej || !plain || features[k] != r.features) {
          ADD_FAILURE() << "pair " << i << "/" << k << ": pre-test features " << int(features[k]) << ", rejected "
                        << rej << "; exact: plain " << plain << ", features " << r.features;
        }
        gpu::GeomElement fx, fy;
        uint32_t fKey = 0;
        const uint32_t fKind = gpu::geomTriTriContactFromFeatures(t[0], t[1], t[2], glm::uvec4(0, 1, 2, 0), 1u, t[3],
                                                                  t[4], t[5], glm::uvec4(3, 4, 5, 0), 2u, features[k],
                                                                  fx, fy, fKey);
        if (fKind != kind || fKey != edgeKey || std::memcmp(&fx, &ex, sizeof ex) != 0 ||
            std::memcmp(&fy, &ey, sizeof ey) != 0) {
          ADD_FAILURE() << "pair " << i << "/" << k << ": the contact from the pre-test's features differs";
        }
      }
      hitNoContactRejected += rej && hit;
      if (families[k] == kCoplanar) {
        ++coplanarCases;
        coplanarRejected += rej;
      }
      // A crossing (no vertex within the band, both sides) clipped away: the exact answer is at
      // most a touching point.
      if (hit && r.count == 1 && (r.flags & gpu::kTriTriWithinBand) != 0) {
        ++missedCases;
        missedRejected += rej;
      }
      if (apartOnBothPlanes(t)) {
        ++apartCases;
        apartRejected += rej;
        apartMissed += miss;
      }
    }
    pairs.clear();
    families.clear();
  }
  EXPECT_GT(apartCases, 3000);
  EXPECT_GT(coplanarCases, 3000);
  // The pre-test runs where the library was built with SIMD (VKC_SIMD=ON; a scalar build rejects none).
  // (VKC_HAVE_SIMD is the library's private definition: the tests ask the library.)
  if (std::string(cpu::simdTargetName()).rfind("none", 0) != 0) {
    EXPECT_EQ(apartRejected, apartCases);
    EXPECT_GT(rejected, exactRejected / 3);
    EXPECT_EQ(coplanarRejected, coplanarCases);  // every vertex on the plane, or both degenerate
    EXPECT_GT(hitNoContactRejected, 3000);
    EXPECT_GT(missedRejected, missedCases / 2);  // crossings clipped away (some touch near the plane)
    // Random pairs' plain segments (rarely a vertex within the band): nearly all known.
    EXPECT_GT(randomKnown, randomPlain * 99 / 100);
    EXPECT_GT(randomPlain, 500);
    EXPECT_EQ(apartMissed, apartCases);
    EXPECT_GT(missed, emptyCases / 2);  // 70% of this adversarial mix's empty pairs (seen 2026-11-28)
  } else {
    EXPECT_EQ(rejected, 0);
    EXPECT_EQ(known, 0);
    EXPECT_EQ(missed, 0);
  }
  RecordProperty("missed", missed);
  RecordProperty("empty_cases", emptyCases);
  RecordProperty("touching_cases", missedCases);
  RecordProperty("touching_rejected", missedRejected);
  RecordProperty("hit_no_contact_rejected", hitNoContactRejected);
  RecordProperty("rejected", rejected);
  RecordProperty("features_known", known);
  RecordProperty("plain_segments", plainCases);
  RecordProperty("random_features_known", randomKnown);
  RecordProperty("random_plain_segments", randomPlain);
  RecordProperty("exact_rejected", exactRejected);
}

// The stated generation's checks of the kept meshes (largestEntry, xyzFinite: four streams a loop, a
// vector tail and a scalar tail) against plain loops: the largest entry planted at every position and a
// non-finite coordinate at every x, y and z (found) and w (ignored), over lengths that end in each part.
TEST(MeshMeshSimd, KeptMeshChecksFindEveryPosition) {
  std::mt19937 rng(7);
  for (size_t n = 0; n <= 300; n += (n < 140 ? 1 : 37)) {
    std::vector<uint32_t> e(n);
    for (uint32_t& v : e) v = static_cast<uint32_t>(rng() % 1000u);
    EXPECT_EQ(cpu::largestEntry(e.data(), n), n == 0 ? 0u : *std::max_element(e.begin(), e.end())) << n;
    for (size_t at = 0; at < n; ++at) {
      std::vector<uint32_t> f = e;
      f[at] = 5000u + static_cast<uint32_t>(at);
      ASSERT_EQ(cpu::largestEntry(f.data(), n), f[at]) << n << " " << at;
    }
  }
  const float bad[] = {INFINITY, -INFINITY, NAN};
  for (size_t points = 0; points <= 70; points += (points < 40 ? 1 : 15)) {
    std::vector<float> p(4 * points);
    for (float& v : p) v = static_cast<float>(rng() % 2000u) - 1000.0f;
    EXPECT_TRUE(cpu::xyzFinite(p.data(), points)) << points;
    for (size_t at = 0; at < p.size(); ++at) {
      std::vector<float> q = p;
      q[at] = bad[at % 3];
      ASSERT_EQ(cpu::xyzFinite(q.data(), points), at % 4 == 3) << points << " " << at;
    }
  }
}

// The kept trees' fingerprints (blockFingerprints: eight streams of whole 4 KB blocks, whole blocks one by
// one, a shorter last block) against the plain loop block by block, with and without w's words; and a
// word changed at each position of an array that has every part changes its block's values and no other
// block's (w's words excepted where xyzOnly; a block's two values both stay with probability 2^-64).
TEST(MeshMeshSimd, BlockFingerprintsMatchThePlainLoopAndSeeEveryWord) {
  constexpr size_t kW = cpu::kFingerprintWords;
  std::mt19937 rng(11);
  const auto plain = [](const std::vector<uint32_t>& w, bool xyz) {
    std::vector<uint64_t> out(cpu::fingerprintCount(w.size()));
    cpu::blockFingerprintsPlain(w.data(), w.size(), xyz, 0, out.data());
    return out;
  };
  const auto lanes = [](const std::vector<uint32_t>& w, bool xyz) {
    std::vector<uint64_t> out(cpu::fingerprintCount(w.size()));
    cpu::blockFingerprints(w.data(), w.size(), xyz, out.data());
    return out;
  };
  for (const size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, kW - 1, kW, kW + 1, 4 * kW, 4 * kW + 5,
                         9 * kW + 17, 13 * kW, 17 * kW + 3}) {
    std::vector<uint32_t> w(n);
    for (uint32_t& v : w) v = static_cast<uint32_t>(rng());
    for (const bool xyz : {false, true}) {
      const std::vector<uint64_t> base = lanes(w, xyz);
      ASSERT_EQ(base.size(), 2 * ((n + kW - 1) / kW)) << n;
      ASSERT_EQ(base, plain(w, xyz)) << n << " " << xyz;
      if (n != 9 * kW + 17) continue;
      // Every position: its block's values change (both keys), no other block's.
      for (size_t at = 0; at < n; ++at) {
        std::vector<uint32_t> c = w;
        c[at] ^= 1u << (at % 32);
        const std::vector<uint64_t> now = lanes(c, xyz);
        const size_t b = at / kW;
        const bool seen = !(xyz && at % 4 == 3);  // (a key's value stays with probability 2^-32: the other's)
        ASSERT_EQ(now[2 * b] != base[2 * b] || now[2 * b + 1] != base[2 * b + 1], seen) << n << " " << xyz << " " << at;
        if (!seen) {
          ASSERT_EQ(now, base) << at;
        }
        for (size_t k = 0; k < now.size(); ++k) {
          if (k / 2 != b) {
            ASSERT_EQ(now[k], base[k]) << n << " " << xyz << " " << at << " " << k;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace vkc::test
