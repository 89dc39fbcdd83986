// Mesh vs mesh intersection and its collision manifold (include/vkcollide/mesh_intersection.h).
// Three steps:
//  1. the pair search: per triangle of A (in order; an executor's tasks take consecutive ranges), the
//     triangles of B whose widened boxes overlap its own (a walk of B's BVH, sorted: the brute force's
//     order), each tested by triTriIntersect (shaders/shared/tri_tri.h). kCpuSimd first runs the
//     candidates through the SIMD plane pre-test (src/cpu/geometry_queries_mesh_mesh_simd.h) in
//     batches of 16 and drops those for which triTriIntersect itself finds nothing; the others get the
//     same scalar call, so both backends give the same pairs bit for bit;
//  2. the join: one graph node per endpoint key (the feature that produced the end), one edge per
//     segment; ends the keys leave open merged by distance; curves walked from ends and branch points,
//     then the loops;
//  3. the classification by the points' principal spreads.
#include "cpu/mesh_intersection.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "cpu/bvh.h"
#include "util/try.h"
#include "cpu/executor.h"
#include "cpu/geometry_queries_mesh_mesh_simd.h"
#include "shared/tri_tri.h"
#include "vkcollide/bvh.h"

namespace vkc::cpu {
namespace {

using gpu::vec3;

struct Box {
  vec3 lo, hi;
};

// Checks a mesh (the message names the field) and returns the box of its positions, all of them, used by
// a triangle or not (none: lo +inf, hi -inf): the one pass over the positions that the check, the
// pair search's margin and the classification need.
Result<Box> validateMesh(const TriangleMeshView& mesh, const char* name) {
  if (mesh.indices.size() % 3 != 0)
    return Error{ErrorCode::kInvalidArgument, std::string(name) + ".indices: size " +
                                                  std::to_string(mesh.indices.size()) + " is not a multiple of 3"};
  if (mesh.indices.size() / 3 >= kBvhMaxPrimitives)
    return Error{ErrorCode::kInvalidArgument, std::string(name) + ".indices: " + std::to_string(mesh.indices.size() / 3) +
                                                  " triangles, more than the BVH's " + std::to_string(kBvhMaxPrimitives)};
  Box box{vec3(INFINITY), vec3(-INFINITY)};
  for (size_t i = 0; i < mesh.positions.size(); ++i) {
    const Float4& p = mesh.positions[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
      return Error{ErrorCode::kInvalidArgument,
                   std::string(name) + ".positions[" + std::to_string(i) + "] is not finite"};
    box.lo = glm::min(box.lo, vec3(p.x, p.y, p.z));
    box.hi = glm::max(box.hi, vec3(p.x, p.y, p.z));
  }
  for (size_t i = 0; i < mesh.indices.size(); ++i) {
    if (mesh.indices[i] >= mesh.positions.size())
      return Error{ErrorCode::kInvalidArgument, std::string(name) + ".indices[" + std::to_string(i) + "] = " +
                                                    std::to_string(mesh.indices[i]) + " is out of range (" +
                                                    std::to_string(mesh.positions.size()) + " positions)"};
  }
  return box;
}

Status validateSettings(const MeshIntersectionSettings& s) {
  if (!(s.pointFraction >= 0.0f && std::isfinite(s.pointFraction)))
    return Error{ErrorCode::kInvalidArgument, "settings.pointFraction = " + std::to_string(s.pointFraction) +
                                                  " is not a finite number >= 0"};
  if (!(s.lineRatio >= 0.0f && std::isfinite(s.lineRatio)))
    return Error{ErrorCode::kInvalidArgument,
                 "settings.lineRatio = " + std::to_string(s.lineRatio) + " is not a finite number >= 0"};
  return {};
}

vec3 at(const TriangleMeshView& mesh, uint32_t tri, uint32_t k) {
  const Float4& p = mesh.positions[mesh.indices[3 * tri + k]];
  return {p.x, p.y, p.z};
}

Box triBox(const TriangleMeshView& mesh, uint32_t tri) {
  const vec3 a = at(mesh, tri, 0), b = at(mesh, tri, 1), c = at(mesh, tri, 2);
  return {glm::min(glm::min(a, b), c), glm::max(glm::max(a, b), c)};
}

// Whether box a overlaps [lo, hi] (xyz): six comparisons, no branch between them (the walk's
// innermost test).
inline bool overlaps(const Box& a, const float* lo, const float* hi) {
  return (a.hi.x >= lo[0]) & (a.hi.y >= lo[1]) & (a.hi.z >= lo[2]) & (hi[0] >= a.lo.x) & (hi[1] >= a.lo.y) &
         (hi[2] >= a.lo.z);
}
inline bool overlaps(const Box& a, const Box& b) { return overlaps(a, &b.lo.x, &b.hi.x); }

// One intersecting triangle pair, with the features of its ends (the join's keys).
struct Hit {
  uint32_t triA = 0;
  uint32_t triB = 0;
  gpu::TriTriResult result{};
};

// Step 1's shared, read-only state.
struct PairSearchPlan {
  const TriangleMeshView* a = nullptr;
  const TriangleMeshView* b = nullptr;
  std::vector<Box> boxesB;
  // The BVH over B's triangles that may meet A (their boxes overlap A's, widened): its leaves are
  // indices into `within`, the triangles' numbers in B. Empty: brute force.
  std::vector<BvhNode> nodes;
  std::vector<uint32_t> within;
  float margin = 0.0f;
  bool simd = false;
};

// Step 1 for triangles [begin, end) of A, appended to `out` in (triA, triB) order.
void searchPairs(const PairSearchPlan& plan, uint32_t begin, uint32_t end, std::vector<Hit>& out) {
  const TriangleMeshView& a = *plan.a;
  const TriangleMeshView& b = *plan.b;
  const uint32_t triCountB = static_cast<uint32_t>(plan.boxesB.size());
  auto test = [&](uint32_t ta, uint32_t tb) {
    Hit hit;
    hit.triA = ta;
    hit.triB = tb;
    if (gpu::triTriIntersect(at(a, ta, 0), at(a, ta, 1), at(a, ta, 2), at(b, tb, 0), at(b, tb, 1), at(b, tb, 2),
                             hit.result))
      out.push_back(hit);
  };
  // kCpuSimd: candidates wait in a batch; pairs the pre-test proves empty are dropped, in order.
  TriPlaneBatch batch;
  uint32_t pending[kTriPlaneBatch][2];
  uint32_t n = 0;
  auto flush = [&] {
    uint32_t misses = 0;
    triPlaneRejects(batch, n, nullptr, &misses);
    for (uint32_t i = 0; i < n; ++i)
      if (!(misses >> i & 1u)) test(pending[i][0], pending[i][1]);
    n = 0;
  };
  auto candidate = [&](uint32_t ta, uint32_t tb) {
    if (!plan.simd) return test(ta, tb);
    for (uint32_t c = 0; c < 6; ++c) {
      const vec3 v = c < 3 ? at(a, ta, c) : at(b, tb, c - 3);
      batch.v[c][0][n] = v.x;
      batch.v[c][1][n] = v.y;
      batch.v[c][2][n] = v.z;
    }
    pending[n][0] = ta;
    pending[n][1] = tb;
    if (++n == kTriPlaneBatch) flush();
  };
  std::vector<uint32_t> candidates, stack;
  for (uint32_t ta = begin; ta < end; ++ta) {
    Box boxA = triBox(a, ta);
    boxA.lo -= plan.margin;
    boxA.hi += plan.margin;
    if (plan.nodes.empty()) {
      for (uint32_t tb = 0; tb < triCountB; ++tb)
        if (overlaps(boxA, plan.boxesB[tb])) candidate(ta, tb);
      continue;
    }
    candidates.clear();
    walkBvh(
        plan.nodes, stack,
        [&](const BvhNode& node) { return overlaps(boxA, &node.lo.x, &node.hi.x); },
        [&](uint32_t leaf) {
          const uint32_t tb = plan.within[leaf];
          if (overlaps(boxA, plan.boxesB[tb])) candidates.push_back(tb);
        });
    std::sort(candidates.begin(), candidates.end());  // the brute force's order
    for (uint32_t tb : candidates) candidate(ta, tb);
  }
  if (n > 0) flush();
}

// An endpoint's identity: (kind, feature vertex ids, the other mesh's triangle).
using Key = std::array<uint32_t, 4>;

struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (uint32_t w : k) h = (h ^ w) * 0xBF58476D1CE4E5B9ull, h ^= h >> 31;
    return static_cast<size_t>(h);
  }
};

Key endpointKey(const TriangleMeshView& a, const TriangleMeshView& b, uint32_t pair, uint32_t end, const Hit& hit,
                uint32_t feature) {
  auto edge = [](const TriangleMeshView& m, uint32_t tri, uint32_t k, uint32_t kind, uint32_t other) {
    const uint32_t u = m.indices[3 * tri + k], v = m.indices[3 * tri + (k + 1) % 3];
    return Key{kind, std::min(u, v), std::max(u, v), other};
  };
  if (feature < 3) return edge(a, hit.triA, feature, 0, hit.triB);
  if (feature < 6) return edge(b, hit.triB, feature - 3, 1, hit.triA);
  if (feature < 9) {
    const uint32_t v = a.indices[3 * hit.triA + feature - 6];
    return Key{2, v, v, hit.triB};
  }
  if (feature < 12) {
    const uint32_t v = b.indices[3 * hit.triB + feature - 9];
    return Key{3, v, v, hit.triA};
  }
  return Key{4, pair, end, 0};  // no feature: matches nothing
}

// Eigenvalues and eigenvectors of a symmetric 3x3 matrix (cyclic Jacobi), ascending.
void symmetricEigen(double m[3][3], double values[3], double vectors[3][3]) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) vectors[i][j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 50; ++sweep) {
    const double off = m[0][1] * m[0][1] + m[0][2] * m[0][2] + m[1][2] * m[1][2];
    if (off < 1e-30 * (m[0][0] * m[0][0] + m[1][1] * m[1][1] + m[2][2] * m[2][2]) || off == 0.0) break;
    for (int p = 0; p < 2; ++p) {
      for (int q = p + 1; q < 3; ++q) {
        if (m[p][q] == 0.0) continue;
        const double theta = (m[q][q] - m[p][p]) / (2.0 * m[p][q]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        for (int k = 0; k < 3; ++k) {  // columns p, q of m
          const double mkp = m[k][p], mkq = m[k][q];
          m[k][p] = c * mkp - s * mkq;
          m[k][q] = s * mkp + c * mkq;
        }
        for (int k = 0; k < 3; ++k) {  // rows p, q
          const double mpk = m[p][k], mqk = m[q][k];
          m[p][k] = c * mpk - s * mqk;
          m[q][k] = s * mpk + c * mqk;
        }
        for (int k = 0; k < 3; ++k) {
          const double vkp = vectors[k][p], vkq = vectors[k][q];
          vectors[k][p] = c * vkp - s * vkq;
          vectors[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  for (int i = 0; i < 3; ++i) values[i] = m[i][i];
}


// The sweep of forClosePairs and forCloseCrossPairs over some nodes (positions, bands): each node's
// interval [p - factor band, p + factor band] (widened by a part in 10^5, so rounding cannot drop a
// close pair) along the axis of the nodes' largest extent. Two nodes are tested when their intervals
// overlap, so the pairs found depend on the nodes' positions and that axis only: a sort, not a test of
// every pair (an unwelded soup leaves every end open).
class Sweep {
 public:
  Sweep(std::initializer_list<const std::vector<uint32_t>*> lists, const std::vector<vec3>& pos,
        const std::vector<float>& band, float factor)
      : pos_(pos), band_(band), factor_(factor) {
    vec3 lo(INFINITY), hi(-INFINITY);
    for (const std::vector<uint32_t>* nodes : lists)
      for (uint32_t n : *nodes) lo = glm::min(lo, pos[n]), hi = glm::max(hi, pos[n]);
    const vec3 extent = hi - lo;
    axis_ = extent.x >= extent.y && extent.x >= extent.z ? 0 : (extent.y >= extent.z ? 1 : 2);
  }

  float lo(uint32_t n) const { return pos_[n][axis_] - reach(n); }
  float hi(uint32_t n) const { return pos_[n][axis_] + reach(n); }

  // The order of the sweep: by the start of the intervals (ties: by node id).
  bool before(uint32_t x, uint32_t y) const { return lo(x) < lo(y) || (lo(x) == lo(y) && x < y); }
  std::vector<uint32_t> byLo(std::vector<uint32_t> nodes) const {
    std::sort(nodes.begin(), nodes.end(), [&](uint32_t x, uint32_t y) { return before(x, y); });
    return nodes;
  }

  // f(x, y, distance) if x and y are at most factor times the sum of their bands apart.
  template <class F>
  void test(uint32_t x, uint32_t y, F& f) const {
    const float d = glm::length(pos_[x] - pos_[y]);
    if (d <= factor_ * (band_[x] + band_[y])) f(x, y, d);
  }

 private:
  float reach(uint32_t n) const { return factor_ * band_[n] * 1.00001f + 1e-30f; }

  const std::vector<vec3>& pos_;
  const std::vector<float>& band_;
  float factor_;
  int axis_ = 0;
};

// Calls f(x, y, distance) for every two of `nodes` at most `factor` times the sum of their bands apart
// (Sweep). The order of the calls depends on the positions only.
template <class F>
void forClosePairs(const std::vector<uint32_t>& nodes, const std::vector<vec3>& pos, const std::vector<float>& band,
                   float factor, F&& f) {
  if (nodes.size() < 2) return;
  const Sweep sweep({&nodes}, pos, band, factor);
  const std::vector<uint32_t> byLo = sweep.byLo(nodes);
  for (size_t k = 0; k < byLo.size(); ++k) {
    const float hiX = sweep.hi(byLo[k]);
    for (size_t m = k + 1; m < byLo.size() && sweep.lo(byLo[m]) <= hiX; ++m) sweep.test(byLo[k], byLo[m], f);
  }
}

// Calls f(x, y, distance) for every x of `xs` and y of `ys` (no node in both) at most `factor` times
// the sum of their bands apart: the pairs of forClosePairs(xs and ys) with one node in each, found
// without testing the pairs within either (the sweep over both lists at once, each node scanning the
// other list only).
template <class F>
void forCloseCrossPairs(const std::vector<uint32_t>& xs, const std::vector<uint32_t>& ys,
                        const std::vector<vec3>& pos, const std::vector<float>& band, float factor, F&& f) {
  if (xs.empty() || ys.empty()) return;
  const Sweep sweep({&xs, &ys}, pos, band, factor);
  const std::vector<uint32_t> x = sweep.byLo(xs), y = sweep.byLo(ys);
  // Merged by interval start: a node's pairs with the later nodes of the other list whose intervals
  // start within its own (once either list is done, the rest of the other has none).
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    if (sweep.before(x[i], y[j])) {
      const float hi = sweep.hi(x[i]);
      for (size_t m = j; m < y.size() && sweep.lo(y[m]) <= hi; ++m) sweep.test(x[i], y[m], f);
      ++i;
    } else {
      const float hi = sweep.hi(y[j]);
      for (size_t m = i; m < x.size() && sweep.lo(x[m]) <= hi; ++m) sweep.test(x[m], y[j], f);
      ++j;
    }
  }
}

// Open ends at most this many times their bands' sum apart are joined (joinSegments' gaps).
constexpr float kGapBands = 8.0f;

// The curves, touching points and coplanar count of `pairs` (step 2), into `out`.
void joinSegments(const TriangleMeshView& a, const TriangleMeshView& b, const std::vector<Hit>& pairs,
                  MeshIntersection& out) {
  // Graph: one node per endpoint key (numbered in order of first appearance), one edge per segment;
  // then one node per touching point (pairs meeting in one point, and segments whose two ends have the
  // same key), numbered after every segment end, so that a merged node keeps a segment end's position.
  std::unordered_map<Key, uint32_t, KeyHash> nodeOf;
  std::vector<vec3> nodePos;
  std::vector<float> nodeBand;  // the largest band of the pairs giving it
  std::vector<std::array<uint32_t, 2>> edges;
  auto node = [&](const Key& key, vec3 p, float band) {
    auto [it, added] = nodeOf.emplace(key, static_cast<uint32_t>(nodePos.size()));
    if (added) {
      nodePos.push_back(p);
      nodeBand.push_back(band);
    }
    nodeBand[it->second] = std::max(nodeBand[it->second], band);
    return it->second;
  };
  std::vector<uint32_t> touchingPairs;
  for (uint32_t i = 0; i < pairs.size(); ++i) {
    const Hit& h = pairs[i];
    if (h.result.flags & gpu::kTriTriCoplanar) {
      ++out.coplanarPairs;
      continue;
    }
    if (h.result.count == 1) {
      touchingPairs.push_back(i);
      continue;
    }
    const uint32_t n0 = node(endpointKey(a, b, i, 0, h, h.result.features & 15u), vec3(h.result.points[0]), h.result.band);
    const uint32_t n1 = node(endpointKey(a, b, i, 1, h, h.result.features >> 4), vec3(h.result.points[1]), h.result.band);
    if (n0 == n1)
      touchingPairs.push_back(i);
    else
      edges.push_back({n0, n1});
  }
  const uint32_t firstTouching = static_cast<uint32_t>(nodePos.size());
  for (uint32_t i : touchingPairs) {
    nodePos.push_back(vec3(pairs[i].result.points[0]));
    nodeBand.push_back(pairs[i].result.band);
  }
  // Merges (union-find, the smaller node id the root): first the two ends of each segment no longer
  // than the sum of its ends' bands (a touching pair reported as a segment: its ends keyed
  // differently); then the ends left open by the keys and the touching points, every two of them
  // within the sum of their bands (transitively). An end on an edge of both meshes may be keyed
  // differently by the two sides; where a curve crosses near an edge of both meshes, one of the four
  // pairs around the crossing may meet the curve only within its band (a touching point), leaving the
  // ends of its neighbours open and up to about two bands apart: the touching point between them joins
  // them.
  std::vector<uint32_t> root(nodePos.size());
  for (uint32_t n = 0; n < nodePos.size(); ++n) root[n] = n;
  auto find = [&](uint32_t n) {
    while (root[n] != n) n = root[n] = root[root[n]];
    return n;
  };
  auto unite = [&](uint32_t x, uint32_t y) {
    x = find(x), y = find(y);
    if (x != y) root[std::max(x, y)] = std::min(x, y);
  };
  auto close = [&](uint32_t x, uint32_t y) {
    return glm::length(nodePos[x] - nodePos[y]) <= nodeBand[x] + nodeBand[y];
  };
  for (const auto& e : edges)
    if (close(e[0], e[1])) unite(e[0], e[1]);
  std::vector<uint32_t> degree(nodePos.size(), 0);
  for (const auto& e : edges)
    if (find(e[0]) != find(e[1])) ++degree[find(e[0])], ++degree[find(e[1])];
  std::vector<uint32_t> loose;  // open ends, then touching points
  for (uint32_t n = 0; n < firstTouching; ++n)
    if (find(n) == n && degree[n] == 1) loose.push_back(n);
  for (uint32_t n = firstTouching; n < nodePos.size(); ++n) loose.push_back(n);
  forClosePairs(loose, nodePos, nodeBand, 1.0f, [&](uint32_t x, uint32_t y, float) { unite(x, y); });
  // The segments between distinct merged nodes, each node pair once (a segment along an edge shared
  // by two triangles is found twice).
  std::vector<std::array<uint32_t, 2>> joined;
  std::vector<uint32_t> points;  // nodes that may be touching points: collapsed segments', touching pairs'
  std::unordered_set<uint64_t> seen;
  for (const auto& e : edges) {
    const uint32_t x = find(e[0]), y = find(e[1]);
    if (x == y) {
      points.push_back(x);
      continue;
    }
    if (seen.insert(uint64_t{std::min(x, y)} << 32 | std::max(x, y)).second) joined.push_back({x, y});
  }
  for (uint32_t n = firstTouching; n < nodePos.size(); ++n) points.push_back(find(n));
  edges = std::move(joined);
  std::vector<std::vector<uint32_t>> incident(nodePos.size());
  for (uint32_t e = 0; e < edges.size(); ++e) {
    incident[edges[e][0]].push_back(e);
    incident[edges[e][1]].push_back(e);
  }
  // Gaps: where neighbouring pairs were computed with different planes, a piece of curve shorter than a
  // few bands can fall between them (each pair's rounding puts it just outside its triangles), leaving
  // two open ends a few bands apart (Spot subdivided to 1.5M triangles: up to 2.2 times their bands'
  // sum). Open ends within kGapBands times their bands' sum are joined by a segment, the closest pair
  // first (ties: the lower node ids), each end at most once: so the curves of closed meshes close.
  {
    std::vector<uint32_t> ends;
    for (uint32_t n = 0; n < nodePos.size(); ++n)
      if (incident[n].size() == 1) ends.push_back(n);
    std::vector<std::tuple<float, uint32_t, uint32_t>> gaps;
    forClosePairs(ends, nodePos, nodeBand, kGapBands, [&](uint32_t x, uint32_t y, float d) { gaps.emplace_back(d, std::min(x, y), std::max(x, y)); });
    std::sort(gaps.begin(), gaps.end());
    for (const auto& [d, x, y] : gaps) {
      if (incident[x].size() != 1 || incident[y].size() != 1 || incident[x][0] == incident[y][0]) continue;
      incident[x].push_back(static_cast<uint32_t>(edges.size()));
      incident[y].push_back(static_cast<uint32_t>(edges.size()));
      edges.push_back({x, y});
    }
  }
  auto point = [](vec3 p) { return Float4{p.x, p.y, p.z, 0.0f}; };
  // A touching point on no curve, once per merged node, in node order; those within kGapBands times
  // the bands' sum of a curve's point are pieces of that curve shorter than their band, not contacts
  // of their own.
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  {
    std::vector<uint32_t> candidates, curveNodes;
    for (uint32_t n : points)
      if (incident[n].empty()) candidates.push_back(n);
    if (!candidates.empty())
      for (uint32_t n = 0; n < nodePos.size(); ++n)
        if (!incident[n].empty()) curveNodes.push_back(n);
    std::vector<bool> onCurve(nodePos.size(), false);
    forCloseCrossPairs(candidates, curveNodes, nodePos, nodeBand, kGapBands,
                       [&](uint32_t candidate, uint32_t, float) { onCurve[candidate] = true; });
    for (uint32_t n : candidates)
      if (!onCurve[n]) out.touchingPoints.push_back(point(nodePos[n]));
  }
  std::vector<bool> used(edges.size(), false);
  auto walk = [&](uint32_t start, uint32_t firstEdge) {
    IntersectionCurve curve;
    curve.firstPoint = static_cast<uint32_t>(out.curvePoints.size());
    out.curvePoints.push_back(point(nodePos[start]));
    uint32_t cur = start, e = firstEdge;
    for (;;) {
      used[e] = true;
      cur = edges[e][0] == cur ? edges[e][1] : edges[e][0];
      if (cur == start) {
        curve.closed = true;
        break;
      }
      out.curvePoints.push_back(point(nodePos[cur]));
      if (incident[cur].size() != 2) break;  // an end or a branch point
      const uint32_t next = incident[cur][0] == e ? incident[cur][1] : incident[cur][0];
      if (used[next]) break;
      e = next;
    }
    curve.pointCount = static_cast<uint32_t>(out.curvePoints.size()) - curve.firstPoint;
    out.curves.push_back(curve);
  };
  for (uint32_t n = 0; n < nodePos.size(); ++n)
    if (incident[n].size() != 2)
      for (uint32_t e : incident[n])
        if (!used[e]) walk(n, e);
  for (uint32_t e = 0; e < edges.size(); ++e)
    if (!used[e]) walk(edges[e][0], e);
}

// positions: the box of both meshes' positions.
void classify(const Box& positions, const MeshIntersectionSettings& settings, MeshIntersection& out) {
  std::vector<vec3> points;
  for (const Float4& p : out.touchingPoints) points.emplace_back(p.x, p.y, p.z);
  for (const Float4& p : out.curvePoints) points.emplace_back(p.x, p.y, p.z);
  for (const TrianglePairIntersection& h : out.pairs)
    if (h.flags & kTrianglePairCoplanar)
      for (uint32_t i = 0; i < h.pointCount; ++i) points.emplace_back(h.points[i].x, h.points[i].y, h.points[i].z);
  if (points.empty()) {
    out.shape = IntersectionShape::kNone;
    return;
  }
  glm::dvec3 mean(0.0);
  for (vec3 p : points) mean += glm::dvec3(p);
  mean /= double(points.size());
  double cov[3][3] = {};
  for (vec3 p : points) {
    const glm::dvec3 d = glm::dvec3(p) - mean;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) cov[i][j] += d[i] * d[j];
  }
  for (auto& row : cov)
    for (double& v : row) v /= double(points.size());
  double values[3], vectors[3][3];
  symmetricEigen(cov, values, vectors);
  std::array<int, 3> order = {0, 1, 2};
  std::sort(order.begin(), order.end(), [&](int i, int j) { return values[i] > values[j]; });
  float spread[3];
  for (int i = 0; i < 3; ++i) spread[i] = float(std::sqrt(std::max(values[order[i]], 0.0)));
  out.spread = {spread[0], spread[1], spread[2], 0.0f};
  out.normal = {float(vectors[0][order[2]]), float(vectors[1][order[2]]), float(vectors[2][order[2]]), 0.0f};
  const float diag = glm::length(positions.hi - positions.lo);
  if (spread[0] <= settings.pointFraction * diag)
    out.shape = IntersectionShape::kPoint;
  else if (spread[1] <= settings.lineRatio * spread[0])
    out.shape = IntersectionShape::kLine;
  else
    out.shape = IntersectionShape::kPlane;
}

}  // namespace

Result<MeshIntersection> intersectMeshes(const TriangleMeshView& meshA, const TriangleMeshView& meshB, Backend backend,
                                         const CpuExecutor* executor, const MeshIntersectionSettings& settings,
                                         PairSearch search) {
  if (backend == Backend::kVulkan)
    return Error{ErrorCode::kUnsupported, "intersectMeshes: backend kVulkan is not available for mesh intersection "
                                          "(CPU only: kCpuScalar or kCpuSimd)"};
  if (backend != Backend::kCpuScalar && backend != Backend::kCpuSimd)
    return Error{ErrorCode::kInvalidArgument, "intersectMeshes: backend is not a Backend value"};
  VKC_TRY(validateSettings(settings));
  const Result<Box> boxA = validateMesh(meshA, "meshA");
  if (!boxA) return boxA.error();
  const Result<Box> boxB = validateMesh(meshB, "meshB");
  if (!boxB) return boxB.error();
  const Box positions{glm::min(boxA->lo, boxB->lo), glm::max(boxA->hi, boxB->hi)};
  PairSearchPlan plan;
  plan.a = &meshA;
  plan.b = &meshB;
  plan.simd = backend == Backend::kCpuSimd;
  const uint32_t triCountA = static_cast<uint32_t>(meshA.indices.size() / 3);
  const uint32_t triCountB = static_cast<uint32_t>(meshB.indices.size() / 3);
  // Box rejection, widened by a margin above any well-shaped pair's band (the largest coordinate sets it:
  // -lo or hi on some axis of the positions' box; 0 without positions).
  const float maxAbs = std::max({0.0f, -positions.lo.x, -positions.lo.y, -positions.lo.z, positions.hi.x,
                                 positions.hi.y, positions.hi.z});
  plan.margin = 64.0f * gpu::kTriTriTolerance * maxAbs;
  plan.boxesB.resize(triCountB);
  for (uint32_t t = 0; t < triCountB; ++t) plan.boxesB[t] = triBox(meshB, t);
  bool none = triCountA == 0 || triCountB == 0;
  if (search == PairSearch::kBvh && !none) {
    // Only B's triangles whose boxes overlap A's box widened by the margin can be candidates (a
    // triangle of A lies in A's box, and rounding the widening is monotonic): the tree holds those
    // (two bodies that touch: a small part of each).
    Box all{vec3(INFINITY), vec3(-INFINITY)};
    for (uint32_t t = 0; t < triCountA; ++t) {
      const Box box = triBox(meshA, t);
      all.lo = glm::min(all.lo, box.lo);
      all.hi = glm::max(all.hi, box.hi);
    }
    all.lo -= plan.margin;
    all.hi += plan.margin;
    std::vector<uint32_t> indices;
    for (uint32_t t = 0; t < triCountB; ++t) {
      if (!overlaps(all, plan.boxesB[t])) continue;
      plan.within.push_back(t);
      indices.insert(indices.end(), meshB.indices.begin() + 3 * t, meshB.indices.begin() + 3 * t + 3);
    }
    const uint32_t n = static_cast<uint32_t>(plan.within.size());
    none = n == 0;
    if (!none) {
      plan.nodes.resize(bvhNodeCount(n));
      std::vector<Aabb> leafBoxes(n);
      std::vector<uint32_t> leafParents(n);
      const BvhInput bvh{.vertices = meshB.positions, .indices = indices, .verticesPerPrimitive = 3,
                         .nodes = plan.nodes, .primitiveBoxes = leafBoxes, .leafParents = leafParents};
      VKC_TRY(buildBvhCpu(bvh, backend));
    }
  }
  detail::ParallelCall par(executor, "intersectMeshes");
  const uint32_t tasks = none ? 0 : par.taskCount(triCountA);
  const uint32_t chunk = tasks == 0 ? 0 : par.chunkSize(triCountA, 1);
  std::vector<std::vector<Hit>> parts(tasks);
  par.forEach(tasks, [&](uint32_t t) {
    searchPairs(plan, t * chunk, std::min(triCountA, (t + 1) * chunk), parts[t]);
  });
  VKC_TRY(par.status());
  std::vector<Hit> hits;
  for (std::vector<Hit>& p : parts) hits.insert(hits.end(), p.begin(), p.end());
  MeshIntersection out;
  out.pairs.resize(hits.size());
  for (size_t i = 0; i < hits.size(); ++i) {
    const gpu::TriTriResult& r = hits[i].result;
    TrianglePairIntersection& p = out.pairs[i];
    p.triangleA = hits[i].triA;
    p.triangleB = hits[i].triB;
    p.pointCount = r.count;
    p.flags = r.flags & (kTrianglePairCoplanar | kTrianglePairDegenerate | kTrianglePairTouching);
    p.band = r.band;
    for (uint32_t k = 0; k < 6; ++k) p.points[k] = {r.points[k].x, r.points[k].y, r.points[k].z, 0.0f};
  }
  joinSegments(meshA, meshB, hits, out);
  classify(positions, settings, out);
  return out;
}

}  // namespace vkc::cpu

namespace vkc {

static_assert(kTrianglePairCoplanar == gpu::kTriTriCoplanar && kTrianglePairDegenerate == gpu::kTriTriDegenerate &&
              kTrianglePairTouching == gpu::kTriTriWithinBand);

Result<MeshIntersection> intersectMeshes(const TriangleMeshView& meshA, const TriangleMeshView& meshB, Backend backend,
                                         const MeshIntersectionSettings& settings) {
  return cpu::intersectMeshes(meshA, meshB, backend, nullptr, settings);
}

Result<MeshIntersection> intersectMeshes(const TriangleMeshView& meshA, const TriangleMeshView& meshB, Backend backend,
                                         const CpuExecutor& executor, const MeshIntersectionSettings& settings) {
  return cpu::intersectMeshes(meshA, meshB, backend, &executor, settings);
}

const char* toString(IntersectionShape shape) {
  switch (shape) {
    case IntersectionShape::kNone: return "none";
    case IntersectionShape::kPoint: return "point-like";
    case IntersectionShape::kLine: return "line-like";
    case IntersectionShape::kPlane: return "plane-like";
  }
  return "?";
}

namespace {

bool sameBits(const Float4& x, const Float4& y) { return std::memcmp(&x, &y, sizeof x) == 0; }

std::string shortest(float v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

std::string shortest(const Float4& p) {
  return "(" + shortest(p.x) + ", " + shortest(p.y) + ", " + shortest(p.z) + ", " + shortest(p.w) + ")";
}

template <class T>
std::string versus(const T& x, const T& y) {
  using std::to_string;
  if constexpr (std::is_same_v<T, Float4> || std::is_same_v<T, float>)
    return shortest(x) + " vs " + shortest(y);
  else
    return to_string(x) + " vs " + to_string(y);
}

// The first point of x and y (same size) whose bits differ, as "<name>[i]: ... vs ...".
std::string firstDifferentPoint(const char* name, const std::vector<Float4>& x, const std::vector<Float4>& y) {
  if (x.size() != y.size()) return std::string(name) + ": " + versus(x.size(), y.size()) + " points";
  for (size_t i = 0; i < x.size(); ++i)
    if (!sameBits(x[i], y[i])) return std::string(name) + "[" + std::to_string(i) + "]: " + versus(x[i], y[i]);
  return {};
}

std::string pairDifference(const TrianglePairIntersection& x, const TrianglePairIntersection& y) {
  if (x.triangleA != y.triangleA || x.triangleB != y.triangleB)
    return "triangles " + versus(x.triangleA, y.triangleA) + " (A), " + versus(x.triangleB, y.triangleB) + " (B)";
  const std::string tris = " (triangles " + std::to_string(x.triangleA) + ", " + std::to_string(x.triangleB) + ")";
  if (x.pointCount != y.pointCount) return "pointCount " + versus(x.pointCount, y.pointCount) + tris;
  if (x.flags != y.flags) return "flags " + versus(x.flags, y.flags) + tris;
  if (std::memcmp(&x.band, &y.band, sizeof x.band) != 0) return "band " + versus(x.band, y.band) + tris;
  for (uint32_t k = 0; k < 6; ++k)
    if (!sameBits(x.points[k], y.points[k]))
      return "points[" + std::to_string(k) + "] " + versus(x.points[k], y.points[k]) + tris;
  return {};
}

}  // namespace

std::string firstBitwiseDifference(const MeshIntersection& got, const MeshIntersection& want) {
  if (got.pairs.size() != want.pairs.size()) return "pairs: " + versus(got.pairs.size(), want.pairs.size()) + " pairs";
  for (size_t i = 0; i < got.pairs.size(); ++i)
    if (std::string d = pairDifference(got.pairs[i], want.pairs[i]); !d.empty())
      return "pairs[" + std::to_string(i) + "]: " + d;
  if (got.curves.size() != want.curves.size())
    return "curves: " + versus(got.curves.size(), want.curves.size()) + " curves";
  for (size_t i = 0; i < got.curves.size(); ++i) {
    const IntersectionCurve& x = got.curves[i];
    const IntersectionCurve& y = want.curves[i];
    if (x.firstPoint != y.firstPoint || x.pointCount != y.pointCount || x.closed != y.closed) {
      auto curve = [](const IntersectionCurve& c) {
        return std::to_string(c.pointCount) + " points from " + std::to_string(c.firstPoint) +
               (c.closed ? ", closed" : ", open");
      };
      return "curves[" + std::to_string(i) + "]: " + curve(x) + " vs " + curve(y);
    }
  }
  if (std::string d = firstDifferentPoint("curvePoints", got.curvePoints, want.curvePoints); !d.empty()) return d;
  if (std::string d = firstDifferentPoint("touchingPoints", got.touchingPoints, want.touchingPoints); !d.empty())
    return d;
  if (got.coplanarPairs != want.coplanarPairs) return "coplanarPairs: " + versus(got.coplanarPairs, want.coplanarPairs);
  if (got.shape != want.shape) return std::string("shape: ") + toString(got.shape) + " vs " + toString(want.shape);
  if (!sameBits(got.spread, want.spread)) return "spread: " + versus(got.spread, want.spread);
  if (!sameBits(got.normal, want.normal)) return "normal: " + versus(got.normal, want.normal);
  return {};
}

}  // namespace vkc
