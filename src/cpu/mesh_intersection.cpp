// Mesh vs mesh intersection and its collision manifold (see mesh_intersection.h).
#include "cpu/mesh_intersection.h"

#include "cpu/bvh.h"

#include "vkcollide/bvh.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>

namespace vkc::cpu {
namespace {

using gpu::vec3;

Status validateMesh(const TriMeshView& mesh, const char* name) {
  if (mesh.indices.size() % 3 != 0)
    return Error{ErrorCode::kInvalidArgument, std::string(name) + ".indices: size " +
                                                  std::to_string(mesh.indices.size()) + " is not a multiple of 3"};
  for (size_t i = 0; i < mesh.positions.size(); ++i) {
    const Float4& p = mesh.positions[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z))
      return Error{ErrorCode::kInvalidArgument,
                   std::string(name) + ".positions[" + std::to_string(i) + "] is not finite"};
  }
  for (size_t i = 0; i < mesh.indices.size(); ++i) {
    if (mesh.indices[i] >= mesh.positions.size())
      return Error{ErrorCode::kInvalidArgument, std::string(name) + ".indices[" + std::to_string(i) + "] = " +
                                                    std::to_string(mesh.indices[i]) + " is out of range (" +
                                                    std::to_string(mesh.positions.size()) + " positions)"};
  }
  return {};
}

vec3 at(const TriMeshView& mesh, uint32_t tri, uint32_t k) {
  const Float4& p = mesh.positions[mesh.indices[3 * tri + k]];
  return {p.x, p.y, p.z};
}

struct Box {
  vec3 lo, hi;
};

Box triBox(const TriMeshView& mesh, uint32_t tri) {
  const vec3 a = at(mesh, tri, 0), b = at(mesh, tri, 1), c = at(mesh, tri, 2);
  return {glm::min(glm::min(a, b), c), glm::max(glm::max(a, b), c)};
}

// An endpoint's identity: (kind, feature vertex ids, the other mesh's triangle).
using Key = std::array<uint32_t, 4>;

Key endpointKey(const TriMeshView& a, const TriMeshView& b, uint32_t pair, uint32_t end, const TriPairHit& hit,
                uint32_t feature) {
  auto edge = [](const TriMeshView& m, uint32_t tri, uint32_t k, uint32_t kind, uint32_t other) {
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

void classify(const TriMeshView& a, const TriMeshView& b, const ManifoldSettings& settings, MeshIntersection& out) {
  std::vector<vec3> points = out.isolated;
  for (const ManifoldCurve& c : out.curves) points.insert(points.end(), c.points.begin(), c.points.end());
  for (const TriPairHit& h : out.pairs)
    if (h.result.flags & gpu::kTriTriCoplanar)
      for (uint32_t i = 0; i < h.result.count; ++i) points.push_back(vec3(h.result.points[i]));
  if (points.empty()) {
    out.kind = ManifoldKind::kNone;
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
  for (int i = 0; i < 3; ++i) out.spread[i] = float(std::sqrt(std::max(values[order[i]], 0.0)));
  out.normal = vec3(float(vectors[0][order[2]]), float(vectors[1][order[2]]), float(vectors[2][order[2]]));
  vec3 lo(INFINITY), hi(-INFINITY);
  for (const TriMeshView* m : {&a, &b})
    for (const Float4& p : m->positions) {
      lo = glm::min(lo, vec3(p.x, p.y, p.z));
      hi = glm::max(hi, vec3(p.x, p.y, p.z));
    }
  const float diag = glm::length(hi - lo);
  if (out.spread[0] <= settings.pointFraction * diag)
    out.kind = ManifoldKind::kPoint;
  else if (out.spread[1] <= settings.lineRatio * out.spread[0])
    out.kind = ManifoldKind::kLine;
  else
    out.kind = ManifoldKind::kPlane;
}

}  // namespace

const char* toString(ManifoldKind kind) {
  switch (kind) {
    case ManifoldKind::kNone: return "none";
    case ManifoldKind::kPoint: return "point-like";
    case ManifoldKind::kLine: return "line-like";
    case ManifoldKind::kPlane: return "plane-like";
  }
  return "?";
}

Result<MeshIntersection> intersectMeshes(const TriMeshView& meshA, const TriMeshView& meshB,
                                         const ManifoldSettings& settings) {
  if (Status s = validateMesh(meshA, "meshA"); !s) return s.error();
  if (Status s = validateMesh(meshB, "meshB"); !s) return s.error();
  MeshIntersection out;
  const uint32_t triCountA = uint32_t(meshA.indices.size() / 3), triCountB = uint32_t(meshB.indices.size() / 3);
  // Box rejection, widened by a margin above any well-shaped pair's band (the largest coordinate sets it).
  float maxAbs = 0.0f;
  for (const TriMeshView* m : {&meshA, &meshB})
    for (const Float4& p : m->positions) maxAbs = std::max({maxAbs, std::abs(p.x), std::abs(p.y), std::abs(p.z)});
  const float margin = 64.0f * gpu::kTriTriTolerance * maxAbs;
  std::vector<Box> boxesB(triCountB);
  for (uint32_t t = 0; t < triCountB; ++t) boxesB[t] = triBox(meshB, t);
  std::vector<BvhNode> nodes;
  if (settings.search == PairSearch::kBvh && triCountB > 0) {
    nodes.resize(bvhNodeCount(triCountB));
    std::vector<Aabb> leafBoxes(triCountB);
    std::vector<uint32_t> leafParents(triCountB);
    const BvhInput bvh{.vertices = meshB.positions, .indices = meshB.indices, .verticesPerPrimitive = 3,
                       .nodes = nodes, .primitiveBoxes = leafBoxes, .leafParents = leafParents};
    if (Status s = buildBvhCpu(bvh, Backend::kCpuScalar); !s) return s.error();
  }
  auto overlaps = [](const Box& a, vec3 lo, vec3 hi) {
    return !(glm::any(glm::lessThan(a.hi, lo)) || glm::any(glm::lessThan(hi, a.lo)));
  };
  std::vector<uint32_t> candidates;
  std::vector<uint32_t> stack;
  for (uint32_t ta = 0; ta < triCountA; ++ta) {
    Box boxA = triBox(meshA, ta);
    boxA.lo -= margin;
    boxA.hi += margin;
    candidates.clear();
    if (settings.search == PairSearch::kBvh && triCountB > 0) {
      cpu::walkBvh(
          nodes, stack,
          [&](const BvhNode& n) {
            return overlaps(boxA, vec3(n.lo.x, n.lo.y, n.lo.z), vec3(n.hi.x, n.hi.y, n.hi.z));
          },
          [&](uint32_t tb) {
            if (overlaps(boxA, boxesB[tb].lo, boxesB[tb].hi)) candidates.push_back(tb);
          });
      std::sort(candidates.begin(), candidates.end());  // the brute force's order
    } else {
      for (uint32_t tb = 0; tb < triCountB; ++tb)
        if (overlaps(boxA, boxesB[tb].lo, boxesB[tb].hi)) candidates.push_back(tb);
    }
    for (uint32_t tb : candidates) {
      TriPairHit hit;
      hit.triA = ta;
      hit.triB = tb;
      if (gpu::triTriIntersect(at(meshA, ta, 0), at(meshA, ta, 1), at(meshA, ta, 2), at(meshB, tb, 0),
                               at(meshB, tb, 1), at(meshB, tb, 2), hit.result))
        out.pairs.push_back(hit);
    }
  }
  // Graph: one node per endpoint key (numbered in order of first appearance), one edge per segment.
  std::map<Key, uint32_t> nodeOf;
  std::vector<vec3> nodePos;
  std::vector<float> nodeBand;  // the largest band of the segments ending there
  std::vector<std::array<uint32_t, 2>> edges;
  auto node = [&](const Key& key, vec3 p, float band) {
    auto [it, added] = nodeOf.emplace(key, uint32_t(nodePos.size()));
    if (added) {
      nodePos.push_back(p);
      nodeBand.push_back(band);
    }
    nodeBand[it->second] = std::max(nodeBand[it->second], band);
    return it->second;
  };
  for (uint32_t i = 0; i < out.pairs.size(); ++i) {
    const TriPairHit& h = out.pairs[i];
    if (h.result.flags & gpu::kTriTriCoplanar) {
      ++out.coplanarPairs;
      continue;
    }
    if (h.result.count == 1) {
      out.isolated.push_back(vec3(h.result.points[0]));
      continue;
    }
    const uint32_t n0 =
        node(endpointKey(meshA, meshB, i, 0, h, h.result.features & 15u), vec3(h.result.points[0]), h.result.band);
    const uint32_t n1 =
        node(endpointKey(meshA, meshB, i, 1, h, h.result.features >> 4), vec3(h.result.points[1]), h.result.band);
    if (n0 == n1)
      out.isolated.push_back(vec3(h.result.points[0]));
    else
      edges.push_back({n0, n1});
  }
  // Merges (union-find, the smaller node id the root): first the two ends of each segment no longer
  // than the sum of its ends' bands (a touching pair reported as a segment: its ends keyed
  // differently), then the ends left open by the keys (an end on an edge of both meshes may be keyed
  // differently by the two sides) with the later open ends within the sum of their bands, in node order.
  std::vector<uint32_t> root(nodePos.size());
  for (uint32_t n = 0; n < nodePos.size(); ++n) root[n] = n;
  auto find = [&](uint32_t n) {
    while (root[n] != n) n = root[n] = root[root[n]];
    return n;
  };
  auto unite = [&](uint32_t a, uint32_t b) {
    a = find(a), b = find(b);
    if (a != b) root[std::max(a, b)] = std::min(a, b);
  };
  auto close = [&](uint32_t a, uint32_t b) {
    return glm::length(nodePos[a] - nodePos[b]) <= nodeBand[a] + nodeBand[b];
  };
  for (const auto& e : edges)
    if (close(e[0], e[1])) unite(e[0], e[1]);
  std::vector<uint32_t> degree(nodePos.size(), 0);
  for (const auto& e : edges)
    if (find(e[0]) != find(e[1])) ++degree[find(e[0])], ++degree[find(e[1])];
  std::vector<uint32_t> open;
  for (uint32_t n = 0; n < nodePos.size(); ++n)
    if (find(n) == n && degree[n] == 1) open.push_back(n);
  for (size_t i = 0; i < open.size(); ++i)
    for (size_t j = i + 1; j < open.size(); ++j)
      if (find(open[j]) == open[j] && find(open[i]) == open[i] && close(open[i], open[j])) unite(open[i], open[j]);
  // The segments between distinct merged nodes, each node pair once (a segment along an edge shared
  // by two triangles is found twice).
  std::vector<std::array<uint32_t, 2>> joined;
  std::vector<uint32_t> collapsed;  // nodes of segments merged to a point
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (const auto& e : edges) {
    const uint32_t a = find(e[0]), b = find(e[1]);
    if (a == b) {
      collapsed.push_back(a);
      continue;
    }
    if (seen.emplace(std::min(a, b), std::max(a, b)).second) joined.push_back({a, b});
  }
  edges = std::move(joined);
  std::vector<std::vector<uint32_t>> incident(nodePos.size());
  for (uint32_t e = 0; e < edges.size(); ++e) {
    incident[edges[e][0]].push_back(e);
    incident[edges[e][1]].push_back(e);
  }
  // A collapsed segment on no curve is a touching point.
  std::sort(collapsed.begin(), collapsed.end());
  collapsed.erase(std::unique(collapsed.begin(), collapsed.end()), collapsed.end());
  for (uint32_t n : collapsed)
    if (incident[n].empty()) out.isolated.push_back(nodePos[n]);
  std::vector<bool> used(edges.size(), false);
  auto walk = [&](uint32_t start, uint32_t firstEdge) {
    ManifoldCurve curve;
    curve.points.push_back(nodePos[start]);
    uint32_t cur = start, e = firstEdge;
    for (;;) {
      used[e] = true;
      cur = edges[e][0] == cur ? edges[e][1] : edges[e][0];
      if (cur == start) {
        curve.closed = true;
        break;
      }
      curve.points.push_back(nodePos[cur]);
      if (incident[cur].size() != 2) break;  // an end or a branch point
      const uint32_t next = incident[cur][0] == e ? incident[cur][1] : incident[cur][0];
      if (used[next]) break;
      e = next;
    }
    out.curves.push_back(std::move(curve));
  };
  for (uint32_t n = 0; n < nodePos.size(); ++n)
    if (incident[n].size() != 2)
      for (uint32_t e : incident[n])
        if (!used[e]) walk(n, e);
  for (uint32_t e = 0; e < edges.size(); ++e)
    if (!used[e]) walk(edges[e][0], e);
  classify(meshA, meshB, settings, out);
  return out;
}

}  // namespace vkc::cpu
