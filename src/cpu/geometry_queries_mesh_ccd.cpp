// The continuous mesh queries on the CPU (include/vkcollide/geometry_queries.h, "Continuous mesh
// queries"; docs/geometry-queries.md): per query a BVH of swept boxes (the BVH stage's CPU builder
// with previous vertices, src/cpu/bvh.cpp) over the cells of one side, the other side's cells or
// points walked in order against it, each candidate through the conservative primitives shared with
// the mesh-collision stage: edge-edge CCD (shaders/shared/ccd_edge_edge.h) and vertex-face CCD
// (triCcdCore, shaders/shared/collide_meshes_math.h), with the box filter and elements of
// shaders/shared/geometry_queries_mesh_ccd.h that the Vulkan stage's mesh CCD family runs too
// (geometry_queries_mesh_ccd_slot.h). kCpuSimd runs this scalar code too, but for a line mesh's self
// walk (src/cpu/mesh_pair_walk.h), whose SIMD twin it takes.
#include "cpu/geometry_queries_mesh_ccd.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/bvh.h"
#include "cpu/geometry_queries.h"
#include "cpu/mesh_pair_walk.h"
#include "shared/geometry_queries_mesh_ccd.h"
#include "shared/geometry_queries_mesh_mesh_device.h"
#include "vkcollide/bvh.h"

namespace vkc::cpu {

namespace {

using gpu::vec3;
using gpu::vec4;

vec3 xyz(const Float4& p) {
  return vec3(p.x, p.y, p.z);
}

// A mesh's cells, current and previous vertices, and the BVH of its cells' swept boxes.
struct SweptMesh {
  std::span<const Float4> current;
  std::span<const Float4> previous;
  std::span<const uint32_t> cells;
  uint32_t corners = 2;
  uint32_t count = 0;
  std::vector<BvhNode> nodes;
  std::vector<Aabb> boxes;
  std::vector<uint32_t> parents;
  std::vector<uint32_t> stack;
  std::vector<uint32_t> candidates;

  // tree: build the BVH of the swept boxes (a side that is only walked in order needs none).
  SweptMesh(const GeometryQueryInput& in, const Geometry& g, bool tree = true) {
    corners = gpu::geomMeshCorners(static_cast<uint32_t>(g.type));
    const uint32_t first = static_cast<uint32_t>(g.p2.x);
    count = static_cast<uint32_t>(g.p2.y);
    current = in.points.subspan(g.first, g.count);
    previous = in.previousPoints.subspan(g.first, g.count);
    cells = in.cells.subspan(first, static_cast<size_t>(count) * corners);
    if (count == 0 || !tree) return;
    nodes.resize(bvhNodeCount(count));
    boxes.resize(count);
    parents.resize(count);
    const BvhInput b{.vertices = current,
                     .prevVertices = previous,
                     .indices = cells,
                     .verticesPerPrimitive = corners,
                     .nodes = nodes,
                     .primitiveBoxes = boxes,
                     .leafParents = parents};
    // Validated input (ranges, indices, finite points and previous points): the build cannot fail.
    (void)buildBvhCpu(b, Backend::kCpuScalar);
  }

  uint32_t vertex(uint32_t c, uint32_t k) const { return cells[static_cast<size_t>(c) * corners + k]; }
  vec3 at(uint32_t c, uint32_t k) const { return xyz(current[vertex(c, k)]); }
  vec3 before(uint32_t c, uint32_t k) const { return xyz(previous[vertex(c, k)]); }

  bool boxTouches(uint32_t c, vec3 lo, vec3 hi) const {
    return gpu::geomCcdBoxesOverlap(xyz(boxes[c].lo), xyz(boxes[c].hi), lo, hi);
  }

  // The cells whose swept boxes overlap [lo, hi], in cell order, into candidates.
  void overlapping(vec3 lo, vec3 hi, bool bruteForce) {
    candidates.clear();
    if (count == 0) return;
    if (bruteForce) {
      for (uint32_t c = 0; c < count; ++c) {
        if (boxTouches(c, lo, hi)) candidates.push_back(c);
      }
      return;
    }
    walkBvh(
        nodes, stack,
        [&](const BvhNode& n) { return gpu::geomCcdBoxesOverlap(xyz(n.lo), xyz(n.hi), lo, hi); },
        [&](uint32_t c) {
          if (boxTouches(c, lo, hi)) candidates.push_back(c);
        });
    std::sort(candidates.begin(), candidates.end());
  }
};

}  // namespace

bool meshCcdPairSupported(uint32_t lo, uint32_t hi) {
  return (lo == gpu::kGeomLineMesh && hi == gpu::kGeomLineMesh) ||
         (lo == gpu::kGeomPointSet && hi == gpu::kGeomSurfaceMesh);
}

Status validateMeshCcdQuery(const GeometryQueryInput& in, size_t qi) {
  const GeometryQuery& q = in.queries[qi];
  const std::string f = "queries[" + std::to_string(qi) + "]";
  if (q.state != 0) {
    return Error{ErrorCode::kInvalidArgument,
                 f + ".state is " + std::to_string(q.state) +
                     ": must be 0 for a continuous mesh query (it keeps no state between calls)"};
  }
  if (in.previousPoints.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 f + " is continuous: previousPoints is empty, must hold one point per point (" +
                     std::to_string(in.points.size()) +
                     "): the previous positions of the meshes' vertices and the point set's points"};
  }
  return {};
}

uint64_t meshCcdContacts(const GeometryQueryInput& in, size_t qi, const GeometryQueryOutput& output,
                         uint64_t total, uint64_t capacity, bool bruteForce, bool simd) {
  const GeometryQuery& q = in.queries[qi];
  const uint32_t query = static_cast<uint32_t>(qi);
  uint64_t found = 0;
  // first: the element of the side computed first (see below); aFirst: that side is the query's A.
  const auto emit = [&](const gpu::GeomElement& first, const gpu::GeomElement& second, bool aFirst) {
    const uint64_t at = total + found++;
    if (at >= capacity) return;
    output.elementsA[at] = toContactElement(aFirst ? first : second, query);
    output.elementsB[at] = toContactElement(aFirst ? second : first, query);
  };
  const Geometry& ga = in.geometries[q.a];
  const Geometry& gb = in.geometries[q.b];
  if (ga.type == GeometryType::kLineMesh && gb.type == GeometryType::kLineMesh) {
    // The side of the smaller geometry index is computed first (its segments in order, each against
    // the other's candidates in order), whichever is A: swapping A and B swaps the elements exactly.
    const bool self = q.a == q.b;
    const bool aFirst = q.a <= q.b;
    const Geometry& g1 = aFirst ? ga : gb;
    const Geometry& g2 = aFirst ? gb : ga;
    // The second side's tree is walked; the first side (the same mesh against itself) needs none of
    // its own: one build, not two.
    SweptMesh m2(in, g2);
    SweptMesh m1(in, g1, /*tree=*/false);
    const float thickness = g1.p2.w + g2.p2.w;
    const auto contact = [&](uint32_t i, vec3 a0, vec3 a1, vec3 a0e, vec3 a1e, uint32_t j) {
      gpu::GeomElement first, second;
      if (gpu::geomEdgeCcdContact(a0, a1, a0e, a1e, i, m2.before(j, 0), m2.before(j, 1), m2.at(j, 0),
                                  m2.at(j, 1), j, thickness, first, second)) {
        emit(first, second, aFirst);
      }
    };
    if (self && !bruteForce && m2.count != 0) {
      // Against itself: the self walk over the swept boxes (src/cpu/mesh_pair_walk.h: each pair of
      // segments once, those sharing a vertex dropped as they are met), each box widened by at least
      // its segment's geomCcdBoxReach, which is affine in the box's scale (the walk's reach
      // t' + r max(t', scale) with t' the CCD reach at scale 0 and r its slope, both raised by 2^-10
      // over float rounding; a box's own reach, so that one far segment widens no other), then each
      // pair through the walk per segment's own test (the lower segment's reach against the higher
      // one's swept box), in the same order: the same candidates.
      constexpr float kRaise = 1.0f + 0x1p-10f;
      const float reach = gpu::geomCcdBoxReach(thickness, 0.0f) * kRaise;
      const float relative = gpu::geomCcdBoxReach(0.0f, 1.0f) * kRaise;
      const PairWalkTree walk = pairWalkLayout(m2.nodes, m2.boxes, m2.cells, 2u);
      std::vector<uint64_t> stack, pairs;
      if (simd) {
        pairWalkSelfSimd(walk, reach, stack, pairs, relative);
      } else {
        pairWalkSelf(walk, reach, stack, pairs, relative);
      }
      std::sort(pairs.begin(), pairs.end());
      uint32_t i = 0xFFFFFFFFu;
      vec3 a0, a1, a0e, a1e, lo, hi;
      for (const uint64_t k : pairs) {
        if (static_cast<uint32_t>(k >> 32) != i) {
          i = static_cast<uint32_t>(k >> 32);
          a0 = m1.before(i, 0), a1 = m1.before(i, 1), a0e = m1.at(i, 0), a1e = m1.at(i, 1);
          gpu::geomCcdSegmentReach(a0, a1, a0e, a1e, thickness, lo, hi);
        }
        const uint32_t j = static_cast<uint32_t>(k);
        if (m2.boxTouches(j, lo, hi)) contact(i, a0, a1, a0e, a1e, j);
      }
      return found;
    }
    for (uint32_t i = 0; i < m1.count; ++i) {
      const vec3 a0 = m1.before(i, 0), a1 = m1.before(i, 1), a0e = m1.at(i, 0), a1e = m1.at(i, 1);
      vec3 lo, hi;
      gpu::geomCcdSegmentReach(a0, a1, a0e, a1e, thickness, lo, hi);
      m2.overlapping(lo, hi, bruteForce);
      for (uint32_t j : m2.candidates) {
        // Against itself: each pair once (j > i), never two segments sharing a vertex (always in
        // contact): the rule of every mesh self query, the device's geomEdgeCcdPair included.
        if (self && !gpu::geomMeshMeshSelfPair(i, gpu::uvec4(m1.vertex(i, 0), m1.vertex(i, 1), 0u, 0u), j,
                                               gpu::uvec4(m2.vertex(j, 0), m2.vertex(j, 1), 0u, 0u), 2u)) {
          continue;
        }
        contact(i, a0, a1, a0e, a1e, j);
      }
    }
    return found;
  }
  // A point set against a surface mesh: per point, its earliest hit (the smaller triangle at equal
  // times); the point set's side is computed first.
  const bool aFirst = ga.type == GeometryType::kPointSet;
  const Geometry& set = aFirst ? ga : gb;
  const Geometry& mesh = aFirst ? gb : ga;
  SweptMesh m(in, mesh);
  const float thickness = mesh.p2.w;
  for (uint32_t k = 0; k < set.count; ++k) {
    const vec3 p0 = xyz(in.previousPoints[set.first + k]), p1 = xyz(in.points[set.first + k]);
    vec3 lo, hi;
    gpu::geomCcdPointReach(p0, p1, thickness, lo, hi);
    m.overlapping(lo, hi, bruteForce);
    gpu::MeshHit best = gpu::meshNoHit();
    uint32_t bestCell = 0xFFFFFFFFu;
    for (uint32_t c : m.candidates) {
      gpu::geomPointCcdCandidate(m.before(c, 0), m.before(c, 1), m.before(c, 2), m.at(c, 0), m.at(c, 1),
                                 m.at(c, 2), c, p0, p1, thickness, best, bestCell);
    }
    if (bestCell == 0xFFFFFFFFu) continue;
    gpu::GeomElement first, second;
    gpu::geomPointCcdContact(best, bestCell, m.at(bestCell, 0), m.at(bestCell, 1), m.at(bestCell, 2), k, p1,
                             thickness, first, second);
    emit(first, second, aFirst);
  }
  return found;
}

}  // namespace vkc::cpu
