// Mesh against mesh on the CPU (issue 17): surface-surface, surface-line, line-line, line-tetrahedral,
// surface-tetrahedral and tetrahedral-tetrahedral (a surface, line or tetrahedral mesh against itself
// too: each pair of cells once, never two sharing a vertex), the per-cell
// arithmetic of shaders/shared/geometry_queries_mesh_mesh.h on the BVHs of the mesh driver
// (src/cpu/geometry_queries_mesh.cpp, or the host's GeometryQueryTrees). The candidate cell pairs
// (boxes overlapping; with kept trees from a tandem walk of both, src/cpu/mesh_pair_walk.h) in order
// by cell of the first mesh, then cell of the second: contacts come in that order; then, for a closed
// surface mesh, the vertex pass of ClosedSurfaceMeshToMesh (the other mesh's vertices inside it, by
// vertex).
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "cpu/geometry_queries_mesh.h"
#include "cpu/geometry_queries_mesh_mesh_simd.h"
#include "cpu/geometry_query_trees.h"
#include "cpu/mesh_pair_walk.h"
#include "shared/geometry_queries_mesh_mesh.h"
#include "shared/geometry_queries_mesh_mesh_device.h"

namespace vkc::cpu {

namespace {

using gpu::uvec4;
using gpu::vec3;

// One mesh of the pair: its vertices and cells in the input.
struct MeshView {
  const GeometryQueryInput* in = nullptr;
  const Geometry* g = nullptr;
  uint32_t firstCell = 0;
  uint32_t cellCount = 0;
  uint32_t corners = 3;

  const uint32_t* entries = nullptr;  // its cells' entries: the input's, or the kept tree's copy
  const float* soup = nullptr;        // a kept surface mesh's corners (9 floats a cell), or null

  MeshView(const GeometryQueryInput& input, uint32_t gi) : in(&input), g(&input.geometries[gi]) {
    firstCell = static_cast<uint32_t>(g->p2.x);
    cellCount = static_cast<uint32_t>(g->p2.y);
    corners = gpu::geomMeshCorners(static_cast<uint32_t>(g->type));
    entries = input.cells.data() + firstCell;
  }
  // Reads the cells' entries and (a surface mesh) their corners from kept tree m's copies
  // (GeometryQueryTrees::Impl::Mesh: cells and corners bitwise the input's, validated in the call):
  // a triangle's corners then lie together (36 bytes), not behind its entries in the vertices.
  void useKept(const GeometryQueryTrees::Impl::Mesh& m) {
    entries = m.cells.data();
    if (!m.corners.empty()) soup = m.corners.data();
  }
  // The cache lines of cell c's entries (prefetchCell) and of its corners (prefetchCorners: reads the
  // entries, fetched earlier, unless the corners are kept together) requested ahead of use.
  void prefetchCell(uint32_t c) const {
    const uint32_t* e = entries + static_cast<size_t>(c) * corners;
    __builtin_prefetch(e);
    __builtin_prefetch(e + corners - 1);
  }
  void prefetchCorners(uint32_t c) const {
    if (soup != nullptr) {
      __builtin_prefetch(soup + 9 * static_cast<size_t>(c));
      __builtin_prefetch(soup + 9 * static_cast<size_t>(c) + 8);
      return;
    }
    const uint32_t* e = entries + static_cast<size_t>(c) * corners;
    for (uint32_t k = 0; k < corners; ++k) __builtin_prefetch(&in->points[g->first + e[k]]);
  }
  uvec4 ids(uint32_t c) const {
    uvec4 r(0u);
    for (uint32_t k = 0; k < corners; ++k) r[k] = entries[static_cast<size_t>(c) * corners + k];
    return r;
  }
  vec3 at(uint32_t v) const {
    const Float4& p = in->points[g->first + v];
    return vec3(p.x, p.y, p.z);
  }
  // Corner k of cell c (ids: its entries).
  vec3 corner(uint32_t c, const uvec4& ids, uint32_t k) const {
    if (soup != nullptr) {
      const float* s = soup + 9 * static_cast<size_t>(c) + 3 * k;
      return vec3(s[0], s[1], s[2]);
    }
    return at(ids[k]);
  }
  bool closed() const {
    return g->type == GeometryType::kSurfaceMesh && (g->flags & kGeometryFlagClosed) != 0;
  }
};

// Drops from the candidate pairs of two surface meshes (in order) those for which triTriIntersect
// gives no plain crossing segment (all on one side of the plane, coplanar, both degenerate, the
// crossing segment clipped away), tested in batches in SIMD lanes (triPlaneRejects, kCpuSimd): the
// survivors keep their order, and a dropped pair is one for which geomTriTriContact returns no contact. The corners are read from the
// kept trees' copies (GeometryQueryTrees::Impl::Mesh::corners, 9 floats a triangle, bitwise the
// input's) where given (xc, yc), else from the input. carried (if given): the survivors' corners
// appended, 18 floats a pair (P's 9, then Q's), in the survivors' order, and to features the
// pre-test's features of each (triPlaneRejects: kTriPlaneUnknown where it does not know them).
void dropPlaneSeparated(const MeshView& x, const MeshView& y, const float* xc, const float* yc,
                        std::vector<uint64_t>& pairs, std::vector<float>* carried = nullptr,
                        std::vector<uint8_t>* features = nullptr) {
  TriPlaneBatch batch;
  size_t kept = 0;
  const auto corners = [](const MeshView& m, const float* soup, uint32_t cell, float out[9]) {
    if (soup != nullptr) {
      std::copy(soup + 9 * static_cast<size_t>(cell), soup + 9 * static_cast<size_t>(cell) + 9, out);
      return;
    }
    const uvec4 ids = m.ids(cell);
    for (uint32_t c = 0; c < 3; ++c) {
      const vec3 p = m.at(ids[c]);
      out[3 * c] = p.x, out[3 * c + 1] = p.y, out[3 * c + 2] = p.z;
    }
  };
  // The corners of the pair one batch ahead requested as each pair is gathered (kept copies: 36 bytes
  // a triangle, up to two cache lines each; a few lines at a time, not a batch's 64 at once): the pairs
  // come in walk order, Y's triangles scattered over its mesh.
  const auto prefetch = [&](size_t i) {
    if (xc == nullptr || yc == nullptr || i >= pairs.size()) return;
    const float* p = xc + 9 * static_cast<size_t>(pairs[i] >> 32);
    const float* q = yc + 9 * static_cast<size_t>(static_cast<uint32_t>(pairs[i]));
    __builtin_prefetch(p);
    __builtin_prefetch(p + 8);
    __builtin_prefetch(q);
    __builtin_prefetch(q + 8);
  };
  for (size_t i = 0; i < kTriPlaneBatch; ++i) prefetch(i);
  for (size_t first = 0; first < pairs.size(); first += kTriPlaneBatch) {
    const uint32_t n = static_cast<uint32_t>(std::min<size_t>(kTriPlaneBatch, pairs.size() - first));
    for (uint32_t i = 0; i < kTriPlaneBatch; ++i) {
      prefetch(first + kTriPlaneBatch + i);
      const uint64_t k = pairs[first + std::min(i, n - 1)];  // the last pair repeated in the spare lanes
      float p[9] = {}, q[9] = {};  // filled by corners(); zeroed for GCC -O3's maybe-uninitialized through std::copy
      corners(x, xc, static_cast<uint32_t>(k >> 32), p);
      corners(y, yc, static_cast<uint32_t>(k), q);
      for (uint32_t c = 0; c < 3; ++c) {
        for (uint32_t a = 0; a < 3; ++a) {
          batch.v[c][a][i] = p[3 * c + a];
          batch.v[3 + c][a][i] = q[3 * c + a];
        }
      }
    }
    uint8_t known[kTriPlaneBatch];
    const uint32_t rejected = triPlaneRejects(batch, n, features != nullptr ? known : nullptr);
    const uint32_t survivors = static_cast<uint32_t>(__builtin_popcount(~rejected & ((2u << (n - 1)) - 1u)));
    float* to = nullptr;  // the survivors' corners, 18 floats each
    if (carried != nullptr) {
      carried->resize(carried->size() + 18 * size_t{survivors});
      to = carried->data() + carried->size() - 18 * size_t{survivors};
    }
    for (uint32_t i = 0; i < n; ++i) {
      if ((rejected >> i) & 1u) continue;
      pairs[kept++] = pairs[first + i];
      if (features != nullptr) features->push_back(known[i]);
      if (to == nullptr) continue;
      for (uint32_t c = 0; c < 6; ++c) {
        for (uint32_t a = 0; a < 3; ++a) *to++ = batch.v[c][a][i];
      }
    }
  }
  pairs.resize(kept);
}

// Sorts keys ascending, payload (if given, one per key) moved with them: a least-significant-digit
// radix sort by bytes, skipping the bytes that every key has alike (two meshes of 1.5M cells: 6 of
// the 8). Stable, so the order of std::sort for distinct keys (the walk meets each pair once).
void sortKeys(std::vector<uint64_t>& keys, std::vector<uint32_t>* payload) {
  uint64_t any = 0, all = ~uint64_t{0};
  for (const uint64_t k : keys) any |= k, all &= k;
  std::vector<uint64_t> k2(keys.size());
  std::vector<uint32_t> p2(payload != nullptr ? keys.size() : 0);
  for (uint32_t shift = 0; shift < 64; shift += 8) {
    if ((((any ^ all) >> shift) & 0xFFu) == 0) continue;  // every key's byte alike
    size_t start[256] = {};
    for (const uint64_t k : keys) ++start[(k >> shift) & 0xFFu];
    size_t sum = 0;
    for (size_t& c : start) {
      const size_t n = c;
      c = sum;
      sum += n;
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      const size_t to = start[(keys[i] >> shift) & 0xFFu]++;
      k2[to] = keys[i];
      if (payload != nullptr) p2[to] = (*payload)[i];
    }
    keys.swap(k2);
    if (payload != nullptr) payload->swap(p2);
  }
}

// The candidate cell pairs of meshes xi (X) and yi (Y), as keys (cell of X << 32 | cell of Y) in
// order (by cell of X, then cell of Y): each cell of X whose box, widened by pairWalkReach (thickness:
// the sum of two line meshes' thicknesses, else 0; the relative margin above float rounding: the BVH's
// boxes are exact, tri_tri.h's band is below this margin's scale), overlaps the box of a cell of Y.
// With both trees kept (GeometryQueryTrees, their walk layouts built with them): the tandem walk of
// both (src/cpu/mesh_pair_walk.h), the pairs then sorted. Else Y's cells per cell of X (access.cells:
// Y's tree walked with X's widened cell box, only Y's tree built in the call; the tests' brute-force
// oracle: every cell), already in order: the tandem walk with both trees and their layouts built in
// the call measured 1.6-2.0x slower calls (bench_mesh_queries, 92k and 369k triangles per mesh).
// xi == yi (a mesh against itself): only the pairs cx < cy of cells sharing no vertex; with the tree
// kept (and on kCpuSimd without: a layout built in the call), the self walk (pairWalkSelf: each such
// pair met once, neighbours dropped as they are met).
// planeTest (two surface meshes, kCpuSimd): the pairs that the triangle test gives no contact by its
// plane and clip steps dropped (dropPlaneSeparated; with kept trees before the sort), and (carried given) the
// pairs' corners as the pre-test read them from the kept copies, 18 floats a pair in the pairs' order,
// and (features) the pre-test's features of each pair (triPlaneRejects) in the same order (else carried
// and features are left empty).
void candidatePairs(const MeshPairAccess& access, uint32_t xi, uint32_t yi, float thickness,
                    std::vector<uint64_t>& pairs, bool planeTest = false, std::vector<float>* carried = nullptr,
                    std::vector<uint8_t>* features = nullptr) {
  pairs.clear();
  if (carried != nullptr) carried->clear();
  if (features != nullptr) features->clear();
  const MeshView x(*access.in, xi), y(*access.in, yi);
  // A mesh against itself, walked per cell: each pair of cells once (cx < cy), never two sharing a
  // vertex (geomMeshMeshSelfPair, as the Vulkan stage's candidate passes); dropped before the plane
  // pre-test. Its first test (cx < cy) is taken before the cells' vertex numbers are read: it drops
  // half of the walk's pairs.
  const auto selfPairKept = [&](uint32_t cx, uint32_t cy) {
    return xi != yi || (cx < cy && gpu::geomMeshMeshSelfPair(cx, x.ids(cx), cy, y.ids(cy), x.corners));
  };
  const bool drop = planeTest && access.simd;
  const GeometryQueryTrees* kept = access.in->trees;
  const GeometryQueryTrees::Impl::Mesh* kx = kept ? kept->impl().find(xi) : nullptr;
  const GeometryQueryTrees::Impl::Mesh* ky = kept ? kept->impl().find(yi) : nullptr;
  std::vector<uint64_t> stack;
  if (xi == yi && access.simd && !access.bruteForce && kx == nullptr && access.selfLayout) {
    // A mesh against itself without a kept tree on kCpuSimd: the SIMD self walk of its tree built in
    // the call, with a layout built in the call too (bench_mesh_queries' surface-self rows, 2026-11-28:
    // 122 ms, not 173 ms, for 184k triangles; the scalar self walk over the binary tree was slower than
    // kCpuScalar's walk per cell, 199 ms against 170 ms, which stays).
    pairWalkSelfSimd(access.selfLayout(xi), thickness, stack, pairs);
    if (drop) dropPlaneSeparated(x, y, nullptr, nullptr, pairs);
    sortKeys(pairs, nullptr);
    return;
  }
  if (access.bruteForce || kx == nullptr || ky == nullptr) {
    std::vector<uint32_t> cells;
    for (uint32_t cx = 0; cx < x.cellCount; ++cx) {
      const uvec4 ix = x.ids(cx);
      vec3 lo = x.at(ix[0]), hi = lo;
      for (uint32_t k = 1; k < x.corners; ++k) {
        lo = glm::min(lo, x.at(ix[k]));
        hi = glm::max(hi, x.at(ix[k]));
      }
      const float l0[3] = {lo.x, lo.y, lo.z}, h0[3] = {hi.x, hi.y, hi.z};
      const float reach = pairWalkReach(l0, h0, thickness);
      const float l[3] = {lo.x - reach, lo.y - reach, lo.z - reach};
      const float h[3] = {hi.x + reach, hi.y + reach, hi.z + reach};
      access.cells(yi, l, h, cells);
      for (uint32_t cy : cells) {
        if (selfPairKept(cx, cy)) pairs.push_back((static_cast<uint64_t>(cx) << 32) | cy);
      }
    }
    if (drop) dropPlaneSeparated(x, y, nullptr, nullptr, pairs);
    return;
  }
  if (xi == yi) {
    // The self walk: the pairs cx < cy of the tandem walk of the tree with itself, each once; a kept
    // tree's layout holds the cells' vertex numbers (geometry_query_trees.cpp), so the walk drops
    // the pairs sharing a vertex itself.
    if (access.simd) {
      pairWalkSelfSimd(kx->walk, thickness, stack, pairs);
    } else {
      pairWalkSelf(kx->walk, thickness, stack, pairs);
    }
  } else if (access.simd) {
    pairWalkSimd(kx->walk, ky->walk, thickness, stack, pairs);
  } else {
    pairWalk(kx->walk, ky->walk, thickness, stack, pairs);
  }
  if (!drop || carried == nullptr || features == nullptr) {
    if (drop) dropPlaneSeparated(x, y, kx->corners.data(), ky->corners.data(), pairs);
    sortKeys(pairs, nullptr);
    return;
  }
  // The survivors' corners kept (the pre-test gathered them from all over the meshes) and put in the
  // sorted order: the exact test then reads them one after the other.
  std::vector<float> walkOrder;
  std::vector<uint8_t> walkFeatures;
  walkOrder.reserve(18 * pairs.size() / 3);
  walkFeatures.reserve(pairs.size() / 3);
  dropPlaneSeparated(x, y, kx->corners.data(), ky->corners.data(), pairs, &walkOrder, &walkFeatures);
  std::vector<uint32_t> from(pairs.size());
  for (uint32_t i = 0; i < from.size(); ++i) from[i] = i;
  sortKeys(pairs, &from);
  carried->resize(walkOrder.size());
  features->resize(from.size());
  for (size_t i = 0; i < from.size(); ++i) {
    std::copy_n(walkOrder.data() + 18 * static_cast<size_t>(from[i]), 18, carried->data() + 18 * i);
    (*features)[i] = walkFeatures[from[i]];
  }
}

// A set of edge pairs (the vertex pairs of two edges, each vertex below 2^24): open addressing in a
// power-of-two table, at most half full; insert says whether the pair is new (std::set's answer).
class EdgePairSet {
 public:
  bool insert(const std::array<uint32_t, 4>& key) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = slot(key);
    while (slots_[i][0] != kEmpty) {
      if (slots_[i] == key) return false;
      i = (i + 1) & (slots_.size() - 1);
    }
    slots_[i] = key;
    ++size_;
    return true;
  }

 private:
  static constexpr uint32_t kEmpty = ~0u;
  size_t slot(const std::array<uint32_t, 4>& k) const {
    uint64_t h = (static_cast<uint64_t>(k[0]) << 32 | k[1]) * 0x9E3779B97F4A7C15ull;
    h ^= (static_cast<uint64_t>(k[2]) << 32 | k[3]) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    return static_cast<size_t>(h * 0xBF58476D1CE4E5B9ull >> 20) & (slots_.size() - 1);
  }
  void grow() {
    std::vector<std::array<uint32_t, 4>> old(std::max<size_t>(64, 2 * slots_.size()), {kEmpty, 0, 0, 0});
    old.swap(slots_);
    for (const auto& k : old) {
      if (k[0] == kEmpty) continue;
      size_t i = slot(k);
      while (slots_[i][0] != kEmpty) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = k;
    }
  }
  std::vector<std::array<uint32_t, 4>> slots_;
  size_t size_ = 0;
};

// The undirected vertex pair of a cell's edge (corner mask of two corners).
std::array<uint32_t, 2> edgeVertices(const uvec4& ids, uint32_t mask) {
  uint32_t v[2] = {0, 0};
  uint32_t n = 0;
  for (uint32_t k = 0; k < 3; ++k) {
    if (mask & (1u << k)) v[n++] = ids[k];
  }
  return {std::min(v[0], v[1]), std::max(v[0], v[1])};
}

// Every cell cx of mesh xi in order, with the cells of mesh yi whose boxes overlap cx's in order:
// contact(cx, ids of cx, corners of cx, cy, ids of cy, corners of cy, known, pair) fills pair and says
// whether to keep it; known: the pre-test's features of the pair (planeTest with kept trees on kCpuSimd:
// candidatePairs' features), else kTriPlaneUnknown. planeTest: see candidatePairs.
template <class Contact>
void cellPairs(const MeshPairAccess& access, uint32_t xi, uint32_t yi, std::vector<MeshElementPair>& out,
               const Contact& contact, bool planeTest = false) {
  MeshView x(*access.in, xi), y(*access.in, yi);
  const GeometryQueryTrees* kept = access.in->trees;
  const GeometryQueryTrees::Impl::Mesh* kx = kept ? kept->impl().find(xi) : nullptr;
  const GeometryQueryTrees::Impl::Mesh* ky = kept ? kept->impl().find(yi) : nullptr;
  if (!access.bruteForce && kx != nullptr && ky != nullptr) {  // the walk's case (candidatePairs)
    x.useKept(*kx);
    y.useKept(*ky);
  }
  std::vector<uint64_t> pairs;
  std::vector<float> carried;     // the pre-test's corners of each pair (18 floats), or empty
  std::vector<uint8_t> features;  // the pre-test's features of each pair, or empty
  candidatePairs(access, xi, yi, 0.0f, pairs, planeTest, &carried, &features);
  const bool soup = !carried.empty();
  uint32_t last = ~0u;
  uvec4 ix(0u);
  vec3 p[4];
  // The cells are scattered over their meshes (X's in order, but far apart): each pair's entries
  // requested kAhead pairs ahead, their corners kAhead / 2 ahead.
  constexpr size_t kAhead = 16;
  const auto ahead = [&](size_t i, bool corners) {
    if (i >= pairs.size()) return;
    const uint32_t cx = static_cast<uint32_t>(pairs[i] >> 32), cy = static_cast<uint32_t>(pairs[i]);
    if (corners) {
      if (soup) return;  // read in order from carried
      x.prefetchCorners(cx);
      y.prefetchCorners(cy);
    } else {
      x.prefetchCell(cx);
      y.prefetchCell(cy);
    }
  };
  for (size_t i = 0; i < kAhead; ++i) ahead(i, false);
  for (size_t i = 0; i < kAhead / 2; ++i) ahead(i, true);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const uint64_t k = pairs[i];
    ahead(i + kAhead, false);
    ahead(i + kAhead / 2, true);
    const uint32_t cx = static_cast<uint32_t>(k >> 32), cy = static_cast<uint32_t>(k);
    if (cx != last) {
      last = cx;
      ix = x.ids(cx);
      for (uint32_t c = 0; c < x.corners; ++c) p[c] = x.corner(cx, ix, c);
    }
    const uvec4 iy = y.ids(cy);
    vec3 q[4];
    if (soup) {  // two triangles (surface meshes): Q's corners after P's (P's are cx's, read above)
      const float* f = carried.data() + 18 * i + 9;
      for (uint32_t c = 0; c < 3; ++c) q[c] = vec3(f[3 * c], f[3 * c + 1], f[3 * c + 2]);
    } else {
      for (uint32_t c = 0; c < y.corners; ++c) q[c] = y.corner(cy, iy, c);
    }
    MeshElementPair e{};
    if (contact(cx, ix, p, cy, iy, q, soup ? features[i] : kTriPlaneUnknown, e)) out.push_back(e);
  }
}

void surfaceSurface(const MeshPairAccess& access, uint32_t xi, uint32_t yi,
                    std::vector<MeshElementPair>& out) {
  // iMSTK keeps one edge-edge contact per pair of edges (the first in cell order): a pair of crossing
  // edges shows in up to four triangle pairs. A mesh against itself: per unordered pair (the same two
  // edges may come as X's and Y's, then as Y's and X's, from different triangle pairs).
  EdgePairSet edgePairs;
  const bool self = xi == yi;
  cellPairs(access, xi, yi, out,
            [&](uint32_t cx, const uvec4& ix, const vec3* p, uint32_t cy, const uvec4& iy, const vec3* q,
                uint8_t known, MeshElementPair& e) {
              uint32_t edgeKey = 0;
              // Features known from the pre-test: triTriIntersect (its plain segment) not run again.
              const uint32_t kind =
                  known != kTriPlaneUnknown
                      ? gpu::geomTriTriContactFromFeatures(p[0], p[1], p[2], ix, cx, q[0], q[1], q[2], iy, cy, known,
                                                           e.x, e.y, edgeKey)
                      : gpu::geomTriTriContact(p[0], p[1], p[2], ix, cx, q[0], q[1], q[2], iy, cy, e.x, e.y, edgeKey);
              if (kind != gpu::kGeomTriTriEdgeEdge) return kind != gpu::kGeomTriTriNone;
              auto ex = edgeVertices(ix, edgeKey & 15u), ey = edgeVertices(iy, edgeKey >> 4);
              if (self && ey < ex) std::swap(ex, ey);
              return edgePairs.insert({ex[0], ex[1], ey[0], ey[1]});
            },
            /*planeTest=*/true);
}

void surfaceLine(const MeshPairAccess& access, uint32_t xi, uint32_t yi, std::vector<MeshElementPair>& out) {
  cellPairs(access, xi, yi, out,
            [](uint32_t cx, const uvec4& ix, const vec3* p, uint32_t cy, const uvec4& iy, const vec3* q,
               uint8_t, MeshElementPair& e) {
              return gpu::geomTriangleSegment(p[0], p[1], p[2], ix, cx, q[0], q[1], iy, cy, e.x, e.y);
            });
}

void lineTetra(const MeshPairAccess& access, uint32_t xi, uint32_t yi, std::vector<MeshElementPair>& out) {
  cellPairs(access, xi, yi, out,
            [](uint32_t cx, const uvec4& ix, const vec3* p, uint32_t cy, const uvec4& iy, const vec3* q,
               uint8_t, MeshElementPair& e) {
              return gpu::geomSegmentTetra(p[0], p[1], ix, cx, q[0], q[1], q[2], q[3], iy, cy, e.x, e.y);
            });
}

// A surface mesh's triangles or a tetrahedral mesh's tetrahedra against a tetrahedral mesh: the
// separating axis test per overlapping pair of cells (geomHullTetra).
void cellTetra(const MeshPairAccess& access, uint32_t xi, uint32_t yi, std::vector<MeshElementPair>& out) {
  const uint32_t n = gpu::geomMeshCorners(static_cast<uint32_t>(access.in->geometries[xi].type));
  cellPairs(access, xi, yi, out,
            [n](uint32_t cx, const uvec4& ix, const vec3* p, uint32_t cy, const uvec4& iy, const vec3* q,
                uint8_t, MeshElementPair& e) {
              return gpu::geomHullTetra(gpu::geomMakeHull(p[0], p[1], p[2], p[n - 1], n), ix, cx,
                                        gpu::geomMakeHull(q[0], q[1], q[2], q[3], 4u), iy, cy, e.x, e.y);
            });
}

// Two line meshes (static), or one against itself (xi == yi: candidatePairs keeps each pair of
// segments once, cx < cy, never two sharing a vertex, as the continuous method): every pair closer than the sum of the
// thicknesses, through geomSegmentSegment. Candidates: the boxes of Y's segments overlapping X's
// segment's box widened by that sum and a relative margin above float rounding.
void lineLine(const MeshPairAccess& access, uint32_t xi, uint32_t yi, std::vector<MeshElementPair>& out) {
  const MeshView x(*access.in, xi), y(*access.in, yi);
  const float thickness = x.g->p2.w + y.g->p2.w;
  std::vector<uint64_t> pairs;
  candidatePairs(access, xi, yi, thickness, pairs);
  for (const uint64_t k : pairs) {
    const uint32_t cx = static_cast<uint32_t>(k >> 32), cy = static_cast<uint32_t>(k);
    const uvec4 ix = x.ids(cx), iy = y.ids(cy);
    MeshElementPair e{};
    if (gpu::geomSegmentSegment(x.at(ix.x), x.at(ix.y), ix, cx, y.at(iy.x), y.at(iy.y), iy, cy, thickness, e.x, e.y))
      out.push_back(e);
  }
}

// The vertices of mesh `points` inside closed surface mesh `closed` (pairs: closed side, vertex
// side), appended with the sides as (x, y) of the pair.
void vertexPass(const MeshPairAccess& access, uint32_t closed, uint32_t points, bool closedIsX,
                std::vector<MeshElementPair>& out) {
  const Geometry& g = access.in->geometries[points];
  std::vector<MeshElementPair> inside;
  access.insidePoints(closed, g.first, g.count, true, inside);
  for (const MeshElementPair& p : inside) out.push_back(closedIsX ? p : MeshElementPair{p.y, p.x});
}

}  // namespace

void meshMeshContacts(const MeshPairAccess& access, uint32_t x, uint32_t y,
                      std::vector<MeshElementPair>& out) {
  const GeometryQueryInput& in = *access.in;
  const GeometryType tx = in.geometries[x].type, ty = in.geometries[y].type;
  const MeshView vx(in, x), vy(in, y);
  if (tx == GeometryType::kSurfaceMesh && ty == GeometryType::kSurfaceMesh) {
    surfaceSurface(access, x, y, out);
    if (x == y) return;  // a closed mesh's own vertices lie on it: no vertex pass against itself
    if (vx.closed()) vertexPass(access, x, y, true, out);
    if (vy.closed()) vertexPass(access, y, x, false, out);
  } else if (tx == GeometryType::kSurfaceMesh && ty == GeometryType::kLineMesh) {
    surfaceLine(access, x, y, out);
    if (vx.closed()) vertexPass(access, x, y, true, out);
  } else if (tx == GeometryType::kLineMesh && ty == GeometryType::kLineMesh) {
    lineLine(access, x, y, out);
  } else if (tx == GeometryType::kLineMesh && ty == GeometryType::kTetrahedralMesh) {
    lineTetra(access, x, y, out);
  } else if (ty == GeometryType::kTetrahedralMesh) {  // a surface or tetrahedral mesh
    cellTetra(access, x, y, out);
  }
}

}  // namespace vkc::cpu
