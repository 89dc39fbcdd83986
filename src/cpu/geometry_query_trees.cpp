// GeometryQueryTrees (include/vkcollide/geometry_queries.h, issue 17): the static mesh queries' BVHs
// kept between calls. Each tree is buildBvhCpu's over the mesh's cells (kCpuScalar, the call that the
// mesh driver makes without trees), refit by refitBvhValidated; the object keeps a copy of the
// geometry, cells and vertices it was built from and fingerprints of the cells and vertices, with which
// validate() compares the input's (the geometry bitwise; the cells and vertices by the fingerprints).
// A call's candidates depend only on the cells' boxes, never on the tree's shape, so a refit tree (its
// hierarchy from the build's positions) gives the contacts of a fresh one bit for bit.
#include "cpu/geometry_query_trees.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <string>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "cpu/bvh.h"
#include "cpu/geometry_queries_mesh.h"
#include "cpu/geometry_queries_mesh_mesh_simd.h"
#include "shared/geometry_queries_mesh.h"
#include "util/try.h"

namespace vkc {
namespace {

Error invalid(const std::string& message) {
  return Error{ErrorCode::kInvalidArgument, message};
}

struct Cells {
  uint32_t first = 0;
  uint32_t count = 0;
  uint32_t corners = 3;
  size_t entries() const { return static_cast<size_t>(count) * corners; }
};

Cells cellsOf(const Geometry& g) {
  return Cells{static_cast<uint32_t>(g.p2.x), static_cast<uint32_t>(g.p2.y),
               gpu::geomMeshCorners(static_cast<uint32_t>(g.type))};
}

std::string geometryName(uint32_t gi) {
  return "geometries[" + std::to_string(gi) + "]";
}

std::string num(float v) {
  return std::to_string(v);
}

// The first field of geometry gi that differs from the one its tree was built with (empty: none).
std::string changedField(const Geometry& now, const Geometry& built, uint32_t gi) {
  if (std::memcmp(&now, &built, sizeof now) == 0) return {};
  const std::string f = geometryName(gi);
  const auto differs = [](float a, float b) {
    return std::bit_cast<uint32_t>(a) != std::bit_cast<uint32_t>(b);
  };
  if (now.type != built.type) {
    return f + ".type is " + std::to_string(static_cast<uint32_t>(now.type)) + ", the tree's mesh had type " +
           std::to_string(static_cast<uint32_t>(built.type));
  }
  if (now.first != built.first) {
    return f + ".first (first vertex) is " + std::to_string(now.first) + ", the tree's mesh had " +
           std::to_string(built.first);
  }
  if (now.count != built.count) {
    return f + ".count (vertex count) is " + std::to_string(now.count) + ", the tree's mesh had " +
           std::to_string(built.count);
  }
  if (now.flags != built.flags) {
    return f + ".flags is " + std::to_string(now.flags) + ", the tree's mesh had " +
           std::to_string(built.flags);
  }
  if (differs(now.p2.x, built.p2.x)) {
    return f + ".p2.x (first cell entry) is " + num(now.p2.x) + ", the tree's mesh had " + num(built.p2.x);
  }
  if (differs(now.p2.y, built.p2.y)) {
    return f + ".p2.y (cell count) is " + num(now.p2.y) + ", the tree's mesh had " + num(built.p2.y);
  }
  return f + " (its p0, p1, p2.z or p2.w) differs from the geometry the tree was built with";
}

// A new generation (GeometryQueryTrees::generation): nonzero, unique in the process.
uint64_t nextGeneration() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

// Whether the n words at `words` (xyzOnly: their points' w read as 0) have the fingerprints `kept`
// (blockFingerprints: two NH sums a 4 KB block, equal for equal blocks, equal for different ones with
// probability at most 2^-64 a block). The input is read once, not the input and the tree's copy (two
// meshes of 1.5M triangles: 59 MB, not 118 MB, a call); a block whose fingerprints differ surely changed.
bool samePrints(const uint32_t* words, size_t n, bool xyzOnly, const std::vector<uint64_t>& kept) {
  thread_local std::vector<uint64_t> now;
  now.resize(cpu::fingerprintCount(n));
  if (now.size() != kept.size()) return false;
  cpu::blockFingerprints(words, n, xyzOnly, now.data());
  return std::memcmp(now.data(), kept.data(), now.size() * sizeof(uint64_t)) == 0;
}

std::vector<uint64_t> fingerprints(const uint32_t* words, size_t n, bool xyzOnly) {
  std::vector<uint64_t> out(cpu::fingerprintCount(n));
  cpu::blockFingerprints(words, n, xyzOnly, out.data());
  return out;
}

const uint32_t* wordsOf(const Float4* p) {
  return reinterpret_cast<const uint32_t*>(p);  // read in lanes (Highway's loads) or by memcpy
}

// Geometry and cells of each tree against the input's (the points: firstMoved); without compareCells
// (a stated generation) an open mesh's cells are only range-checked. Errors name the field.
Status checkTopology(const GeometryQueryTrees::Impl& trees, const GeometryQueryInput& in, const char* what,
                     bool compareCells = true) {
  const std::string again = std::string(": ") + what;
  for (const GeometryQueryTrees::Impl::Mesh& m : trees.meshes) {
    if (m.geometry >= in.geometries.size()) {
      return invalid("trees: the trees hold a tree of " + geometryName(m.geometry) + ", the input has " +
                     std::to_string(in.geometries.size()) + " geometries" + again);
    }
    const std::string field = changedField(in.geometries[m.geometry], m.g, m.geometry);
    if (!field.empty()) return invalid("trees: " + field + again);
    const Cells r = cellsOf(m.g);
    // The geometry is validated: its cells lie inside input.cells.
    const uint32_t* now = in.cells.data() + r.first;
    if (!compareCells && m.g.flags != kGeometryFlagClosed) {
      // Stated unchanged: only what keeps the call's reads in bounds, every entry below the vertex count
      // (a closed mesh's cells are compared: its pseudonormals' walk needs the validated closed cells).
      if (r.entries() == 0 || cpu::largestEntry(now, r.entries()) < m.g.count) continue;
      size_t k = 0;
      while (now[k] < m.g.count) ++k;
      return invalid("trees: cells[" + std::to_string(r.first + k) + "] (" + geometryName(m.geometry) +
                     "'s cell " + std::to_string(k / r.corners) + ", corner " + std::to_string(k % r.corners) +
                     ") is " + std::to_string(now[k]) + ": the mesh has " + std::to_string(m.g.count) +
                     " vertices" + again);
    }
    if (r.entries() != 0 && !samePrints(now, r.entries(), false, m.cellPrints)) {
      size_t k = 0;
      while (now[k] == m.cells[k]) ++k;
      return invalid("trees: cells[" + std::to_string(r.first + k) + "] (" + geometryName(m.geometry) +
                     "'s cell " + std::to_string(k / r.corners) + ", corner " +
                     std::to_string(k % r.corners) + ") is " + std::to_string(now[k]) +
                     ", the tree was built with " + std::to_string(m.cells[k]) + again);
    }
  }
  return {};
}

// The first vertex of mesh m whose xyz bits differ from the tree's copy, or m.g.count (the ranges
// are in bounds).
uint32_t firstMoved(const GeometryQueryTrees::Impl::Mesh& m, const GeometryQueryInput& in) {
  const Float4* p = in.points.data() + m.g.first;
  if (m.g.count == 0 || samePrints(wordsOf(p), 4 * size_t{m.g.count}, true, m.pointPrints)) return m.g.count;
  for (uint32_t v = 0; v < m.g.count; ++v) {  // w is not compared
    const Float4& q = m.points[v];
    if (std::bit_cast<uint32_t>(p[v].x) != std::bit_cast<uint32_t>(q.x) ||
        std::bit_cast<uint32_t>(p[v].y) != std::bit_cast<uint32_t>(q.y) ||
        std::bit_cast<uint32_t>(p[v].z) != std::bit_cast<uint32_t>(q.z)) {
      return v;
    }
  }
  return m.g.count;
}

// Moves v's elements to new storage advised to be backed by transparent huge pages (Linux, before its
// first touch; where the system leaves THP to madvise): the walk's nodes, the corner and cell copies
// are read at random (a mesh of 1.5M triangles: 95, 53 and 18 MB), and with 4 KB pages nearly every
// read is a TLB miss, a page walk (a nested one in a VM). Arrays under 8 MB are left as they are.
template <class T>
void onHugePages(std::vector<T>& v) {
#ifdef __linux__
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const size_t bytes = v.size() * sizeof(T);
  if (bytes < 4 * kHuge) return;
  std::vector<T> h;
  h.reserve(v.size());
  const uintptr_t at = reinterpret_cast<uintptr_t>(h.data());
  const uintptr_t lo = (at + kHuge - 1) & ~(kHuge - 1), hi = (at + bytes) & ~(kHuge - 1);
  if (hi > lo) (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);  // advice: may be ignored
  h.assign(v.begin(), v.end());
  v.swap(h);
#else
  (void)v;
#endif
}

// Copies the mesh's vertices and (build: a new tree; else a refit of its tree) its tree over them.
void fit(GeometryQueryTrees::Impl::Mesh& m, const GeometryQueryInput& in, bool build) {
  const Cells r = cellsOf(m.g);
  m.points.assign(in.points.begin() + m.g.first, in.points.begin() + m.g.first + m.g.count);
  m.pointPrints = fingerprints(wordsOf(m.points.data()), 4 * m.points.size(), true);
  if (r.count == 0) return;
  if (build) {
    m.nodes.resize(bvhNodeCount(r.count));
    m.boxes.resize(r.count);
    m.parents.resize(r.count);
  }
  const BvhInput b{.vertices = in.points.subspan(m.g.first, m.g.count),
                   .indices = in.cells.subspan(r.first, r.entries()),
                   .verticesPerPrimitive = r.corners,
                   .nodes = m.nodes,
                   .primitiveBoxes = m.boxes,
                   .leafParents = m.parents};
  // The input is validated (ranges, indices, finite points): neither can fail.
  if (build) {
    (void)buildBvhCpu(b, Backend::kCpuScalar);
  } else {
    cpu::refitBvhValidated(b);
  }
  // With the cells' vertex numbers: a self query's walk drops neighbours as it meets them.
  m.walk = cpu::pairWalkLayout(m.nodes, m.boxes, in.cells.subspan(r.first, r.entries()), r.corners);
  onHugePages(m.walk.wide);
  onHugePages(m.walk.nodes);  // (kCpuScalar's walk)
  onHugePages(m.walk.wideIds);
  m.corners.clear();
  if (m.g.type == GeometryType::kSurfaceMesh) {
    m.corners.resize(9 * static_cast<size_t>(r.count));
    for (size_t e = 0; e < r.entries(); ++e) {
      const Float4& p = m.points[in.cells[r.first + e]];
      m.corners[3 * e] = p.x, m.corners[3 * e + 1] = p.y, m.corners[3 * e + 2] = p.z;
    }
    onHugePages(m.corners);
  }
}

// `input` without its trees, for the validation of a build or refit.
GeometryQueryInput withoutTrees(const GeometryQueryInput& input) {
  GeometryQueryInput in = input;
  in.trees = nullptr;
  in.treesGeneration = 0;
  return in;
}

}  // namespace

const GeometryQueryTrees::Impl::Mesh* GeometryQueryTrees::Impl::find(uint32_t gi) const {
  const auto it = std::lower_bound(meshes.begin(), meshes.end(), gi,
                                   [](const Mesh& m, uint32_t g) { return m.geometry < g; });
  return it != meshes.end() && it->geometry == gi ? &*it : nullptr;
}

GeometryQueryTrees::GeometryQueryTrees(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GeometryQueryTrees::GeometryQueryTrees(GeometryQueryTrees&&) noexcept = default;
GeometryQueryTrees& GeometryQueryTrees::operator=(GeometryQueryTrees&&) noexcept = default;
GeometryQueryTrees::~GeometryQueryTrees() = default;

Result<GeometryQueryTrees> GeometryQueryTrees::build(const GeometryQueryInput& input) {
  const GeometryQueryInput in = withoutTrees(input);
  VKC_TRY(validate(in));
  std::vector<uint32_t> used;
  for (const GeometryQuery& q : in.queries) {
    if (q.method != GeometryMethod::kStatic) continue;
    for (uint32_t gi : {q.a, q.b}) {
      if (cpu::isMeshType(in.geometries[gi].type)) used.push_back(gi);
    }
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  auto impl = std::make_unique<Impl>();
  impl->meshes.resize(used.size());
  for (size_t k = 0; k < used.size(); ++k) {
    Impl::Mesh& m = impl->meshes[k];
    m.geometry = used[k];
    m.g = in.geometries[used[k]];
    const Cells r = cellsOf(m.g);
    m.cells.assign(in.cells.begin() + r.first,
                   in.cells.begin() + r.first + static_cast<ptrdiff_t>(r.entries()));
    m.cellPrints = fingerprints(m.cells.data(), m.cells.size(), false);
    onHugePages(m.cells);  // the exact test reads a pair's entries from this copy
    fit(m, in, true);
  }
  impl->generation = nextGeneration();
  return GeometryQueryTrees(std::move(impl));
}

Status GeometryQueryTrees::refit(const GeometryQueryInput& input) {
  const GeometryQueryInput in = withoutTrees(input);
  VKC_TRY(validate(in));
  VKC_TRY(checkTopology(*impl_, in, "a refit keeps the geometries and cells (build the trees again)"));
  for (Impl::Mesh& m : impl_->meshes) fit(m, in, false);
  impl_->generation = nextGeneration();
  return {};
}

uint64_t GeometryQueryTrees::generation() const {
  return impl_->generation;
}

std::vector<uint32_t> GeometryQueryTrees::geometries() const {
  std::vector<uint32_t> out;
  for (const Impl::Mesh& m : impl_->meshes) out.push_back(m.geometry);
  return out;
}

bool cpu::keptMeshGeometryUnchanged(const GeometryQueryInput& in, uint32_t gi) {
  const GeometryQueryTrees::Impl::Mesh* m = in.trees ? in.trees->impl().find(gi) : nullptr;
  if (m == nullptr || gi >= in.geometries.size() || std::memcmp(&in.geometries[gi], &m->g, sizeof m->g) != 0) {
    return false;
  }
  const Cells r = cellsOf(m->g);
  return m->g.first <= in.points.size() && m->g.count <= in.points.size() - m->g.first &&
         r.first <= in.cells.size() && r.entries() <= in.cells.size() - r.first;
}

bool cpu::treesGenerationStated(const GeometryQueryInput& in) {
  return in.trees != nullptr && in.treesGeneration != 0 && in.treesGeneration == in.trees->impl().generation;
}

std::vector<uint32_t> cpu::keptMeshPointsUnchanged(const GeometryQueryInput& in) {
  std::vector<uint32_t> out;
  if (in.trees == nullptr) return out;
  // A stated generation: the vertices are not compared, only checked finite (a mesh with a non-finite
  // vertex is left to the finiteness check, which names it).
  const bool stated = treesGenerationStated(in);
  for (const GeometryQueryTrees::Impl::Mesh& m : in.trees->impl().meshes) {
    if (keptMeshGeometryUnchanged(in, m.geometry) && (stated ? xyzFinite(reinterpret_cast<const float*>(in.points.data() + m.g.first), m.g.count)
                : firstMoved(m, in) == m.g.count)) {
      out.push_back(m.geometry);
    }
  }
  return out;
}

Status cpu::validateGeometryQueryTrees(const GeometryQueryInput& in, std::span<const uint32_t> pointsChecked) {
  if (in.trees == nullptr) {
    if (in.treesGeneration == 0) return {};
    return invalid("treesGeneration is " + std::to_string(in.treesGeneration) + " without trees: must be 0");
  }
  const GeometryQueryTrees::Impl& trees = in.trees->impl();
  if (in.treesGeneration != 0 && in.treesGeneration != trees.generation) {
    return invalid("treesGeneration is " + std::to_string(in.treesGeneration) + ", the trees' generation is " +
                   std::to_string(trees.generation) +
                   ": the trees were built or refit since (state their generation(), or 0 to compare the meshes)");
  }
  const bool stated = in.treesGeneration != 0;
  VKC_TRY(checkTopology(trees, in, "build the trees again for this input (GeometryQueryTrees::build)", !stated));
  if (stated) return {};  // the caller states the vertices unchanged (keptMeshPointsUnchanged: finite)
  for (const GeometryQueryTrees::Impl::Mesh& m : trees.meshes) {
    if (std::binary_search(pointsChecked.begin(), pointsChecked.end(), m.geometry)) continue;
    const uint32_t v = firstMoved(m, in);  // (the ranges are the validated geometry's)
    if (v == m.g.count) continue;
    return invalid("trees: points[" + std::to_string(m.g.first + v) + "] (vertex " + std::to_string(v) +
                   " of " + geometryName(m.geometry) +
                   ") moved since the trees were built or refit: refit them "
                   "(GeometryQueryTrees::refit) before the call");
  }
  return {};
}

}  // namespace vkc
