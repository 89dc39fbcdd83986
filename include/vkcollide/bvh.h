// BVH stage: a linear bounding volume hierarchy (Karras 2012) over indexed primitives -- triangles,
// or segments (2 vertices) and tetrahedra (4) -- built and refit on a Vulkan device in the host's
// command buffer, or on the CPU. Every backend writes the same node arrays, bit for bit.
//
// Build: the box of every primitive (min / max of its vertices' xyz, and of their previous positions
// for swept boxes: continuous collision), the box of the boxes' centroids (exact min / max), a 30-bit
// Morton code per primitive from its centroid quantized in that box (10 bits per axis, a power-of-two
// scale: see shaders/shared/bvh.h), a stable radix sort of (code, primitive index) (RadixSortStage /
// radixSortCpu: equal codes stay in primitive order), Karras' hierarchy over the sorted leaves (equal
// codes split by sorted position), then the node boxes bottom-up (on the CPU the second child to
// finish writes its parent's box; on the device each leaf folds its box into its ancestors with
// atomic min / max of order-preserving keys, stopping where an ancestor already holds a tighter
// value; min / max is exact, so neither the order nor the method changes a bit).
// Refit: the same topology, boxes recomputed from new vertex positions (deforming or rigid meshes,
// every iteration); rebuild when the topology has degraded.
//
// The tree of N >= 1 primitives (layout written once in shaders/shared/bvh.h, mirrored here):
//   nodes         bvhNodeCount(N) internal nodes; the root is node 0. N >= 2: N - 1 nodes with two
//                 children each. N == 1: node 0 with left = the leaf of primitive 0, right = kBvhNone.
//   child         an internal node index (< kBvhLeafBit), or kBvhLeafBit | p: the leaf of primitive p,
//                 p being the primitive's position in the index buffer. Each primitive is in exactly
//                 one leaf. Leaves are ordered left to right by (Morton code, primitive index).
//   primitiveBoxes[p]  primitive p's box (the leaf box); leafParents[p] the node whose child it is.
//   Every node's box is the exact union of its children's; lo.w = hi.w = 0. No leaf is deeper than
//   kBvhMaxDepth (64) nodes.
// Leaf boxes are not inflated: a query adds its own margin.
//
// An empty mesh (no primitives) is an error, not an empty tree.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "vkcollide/context.h"
#include "vkcollide/result.h"
#include "vkcollide/types.h"

namespace vkc {
#include "vkcollide/export.h"
VKC_API_BEGIN

inline constexpr uint32_t kBvhLeafBit = 0x80000000u;  // child reference of a leaf: kBvhLeafBit | primitive
inline constexpr uint32_t kBvhNone = 0xFFFFFFFFu;     // the root's parent; the 1-primitive root's right child
inline constexpr uint32_t kBvhMaxDepth = 64;
inline constexpr uint32_t kBvhMaxPrimitives = 0x20000000u;  // 2^29: Karras' index arithmetic stays in int32

// One internal node (48 bytes, the layout of the device buffer).
struct BvhNode {
  Float4 lo;                  // xyz: lower corner of the node's box; w = 0
  Float4 hi;                  // xyz: upper corner; w = 0
  uint32_t left = 0;          // child reference (see the top of this file)
  uint32_t right = 0;         // child reference; kBvhNone only in the 1-primitive tree
  uint32_t parent = kBvhNone; // parent node; kBvhNone for the root
  uint32_t pad = 0;           // 0
  friend bool operator==(const BvhNode&, const BvhNode&) = default;
};

// Internal nodes of a tree of `primitiveCount` >= 1 primitives: max(primitiveCount - 1, 1).
constexpr uint32_t bvhNodeCount(uint32_t primitiveCount) { return primitiveCount > 1 ? primitiveCount - 1 : 1; }

// Host-side input of the BVH stage, shared by every backend; like every stage's input it holds its
// outputs: nodes, primitiveBoxes and leafParents. For a refit these hold the tree to refit (its
// topology is read, its boxes rewritten).
struct BvhInput {
  std::span<const Float4> vertices;      // positions xyz (w ignored), at least 1
  std::span<const Float4> prevVertices;  // empty, or as many as vertices: then boxes are swept (cover both)
  std::span<const uint32_t> indices;     // primitiveCount * verticesPerPrimitive vertex indices
  uint32_t verticesPerPrimitive = 3;     // 2 (segments), 3 (triangles), 4 (tetrahedra)
  std::span<BvhNode> nodes;              // output: bvhNodeCount(primitiveCount) nodes
  std::span<Aabb> primitiveBoxes;        // output: primitiveCount boxes
  std::span<uint32_t> leafParents;       // output: primitiveCount node indices

  uint32_t primitiveCount() const {
    return verticesPerPrimitive == 0 ? 0 : static_cast<uint32_t>(indices.size() / verticesPerPrimitive);
  }
};

// Checks a BvhInput for a build: verticesPerPrimitive in 2..4, indices a non-empty multiple of it, at
// most kBvhMaxPrimitives primitives, every index < vertices.size(), every coordinate finite (vertices
// and prevVertices), prevVertices empty or as many as vertices, the output sizes. Degenerate
// primitives (repeated vertices, zero area) are valid. The error names the field
// ("BvhInput::indices[17] is 900; vertices holds 800").
Status validate(const BvhInput& input);
// validate() plus the tree to refit: every child reference in range, every primitive in exactly one
// leaf, parents and leafParents consistent with the children, no leaf deeper than kBvhMaxDepth.
Status validateRefit(const BvhInput& input);

// Builds the tree on the CPU into input's outputs. backend: kCpuScalar (the reference) or kCpuSimd
// (the same passes; its radix sort is radixSortCpu's kCpuSimd). On error nothing is written.
Status buildBvhCpu(const BvhInput& input, Backend backend);
// Rewrites the boxes of the tree in input.nodes (built from the same indices; its topology is kept)
// and input.primitiveBoxes from input's vertices. On error nothing is written.
Status refitBvhCpu(const BvhInput& input, Backend backend);

// The surface area heuristic cost of a tree (one primitive per leaf): traversalCost * the sum over
// internal nodes of area(node) / area(root) + intersectionCost * the sum over leaves of area(leaf) /
// area(root), with area = 2 (dx dy + dy dz + dz dx) and leaf boxes from primitiveBoxes (indexed by
// primitive). With a root of zero area every node and leaf counts 1. Any tree in this layout can be
// scored (e.g. a top-down SAH build, for comparison).
double bvhSahCost(std::span<const BvhNode> nodes, std::span<const Aabb> primitiveBoxes, double traversalCost = 1.0,
                  double intersectionCost = 1.0);

struct BvhStageCreateInfo {
  uint32_t maxPrimitives = 0;         // 1..kBvhMaxPrimitives: the largest tree record() may build
  uint32_t verticesPerPrimitive = 3;  // 2..4
  uint32_t framesInFlight = 1;        // 1..kMaxFramesInFlight sets of scratch and output (context.h)
};

enum class BvhUpdate {
  kBuild,  // a new tree: Morton codes, sort, hierarchy, boxes
  kRefit,  // new boxes for the tree already in the output buffers (same primitive count and indices)
};

struct BvhRecordInfo {
  BvhUpdate update = BvhUpdate::kBuild;
  uint32_t primitiveCount = 0;  // 1..maxPrimitives
  uint32_t vertexCount = 0;     // >= 1: Float4 elements in `vertices` (and in `prevVertices`)
  BufferRange vertices;         // host buffer, STORAGE_BUFFER usage
  BufferRange prevVertices;     // null: boxes of the current positions; else swept boxes
  // primitiveCount * verticesPerPrimitive uint32. The host cannot check device-side indices: an index
  // >= vertexCount reads vertex vertexCount - 1 (never out of bounds; the tree is then of that mesh).
  BufferRange indices;
  // Outputs: bvhNodeCount(primitiveCount) BvhNode, primitiveCount Aabb, primitiveCount uint32. A null
  // buffer: the stage's own output of this frame (nodesBuffer(frame), ...). A refit reads the
  // topology from the same buffers: they must hold a tree built from the same indices and count (on
  // the stage's own outputs record() refuses a refit of a frame whose last build had another count).
  // A garbage tree there gives garbage boxes but no out-of-bounds access or endless loop.
  BufferRange nodes;
  BufferRange primitiveBoxes;
  BufferRange leafParents;
  uint32_t frame = 0;  // which set of scratch and own outputs: < framesInFlight
  RecordSync sync;
};

// The BVH stage on a Vulkan device: per frame in flight, scratch (codes, order, node keys, centroid
// box), an embedded RadixSortStage and its own outputs, in device memory. No static tables. Needs
// what RadixSortStage needs (DeviceInfo::missingForSort).
class BvhStage {
 public:
  static Result<std::unique_ptr<BvhStage>> create(Context& context, const BvhStageCreateInfo& info);
  // The device memory create() would allocate for `info` (validated as create() does).
  static Result<MemoryRequirements> memoryRequirements(const Context& context, const BvhStageCreateInfo& info);
  ~BvhStage();

  // Every stage has it; the BVH has no static tables, so it records nothing (it checks the command buffer).
  Status recordUpload(VkCommandBuffer commandBuffer);

  // Records a build or refit into the host's command buffer (recording state, a pool of the context's
  // queue family). Validates first: a count of 0 or above maxPrimitives, a null buffer, a range too
  // small or misaligned, frame >= framesInFlight are errors naming the field, and nothing is recorded.
  // Passes: init, boxes, (build: morton, radix sort, hierarchy,) climb, finalize; barriers derived
  // from their declared buffer uses (docs/integration.md). The climb is bounded by kBvhMaxDepth levels.
  Status record(VkCommandBuffer commandBuffer, const BvhRecordInfo& info);

  BufferRange nodesBuffer(uint32_t frame = 0) const;           // bvhNodeCount(maxPrimitives) BvhNode
  BufferRange primitiveBoxesBuffer(uint32_t frame = 0) const;  // maxPrimitives Aabb
  BufferRange leafParentsBuffer(uint32_t frame = 0) const;     // maxPrimitives uint32

  // Convenience path (frame 0, the stage's own outputs): validates `input` (validate() for a build,
  // validateRefit() for a refit), uploads it (a refit also uploads input.nodes and input.leafParents),
  // records, submits, waits and reads the tree back into input's outputs. GPU times per pass for timings().
  Status run(const BvhInput& input, BvhUpdate update = BvhUpdate::kBuild);
  const std::vector<PassTiming>& timings() const;
  // What the last record() or run() recorded: dispatches, dependent dispatches, barriers, declared
  // bytes (RecordStats, context.h). run() counts the stage's own commands, not its upload and
  // readback copies. Zero after a refused record().
  const RecordStats& lastRecordStats() const;

  uint32_t maxPrimitives() const;

  struct Impl;  // opaque

 private:
  friend struct detail::Internals;
  explicit BvhStage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One call on any backend (the Vulkan one needs `context` and creates a stage sized for the input):
// what tests and tools use to run one body on every backend.
Status buildBvh(Backend backend, Context* context, const BvhInput& input);
Status refitBvh(Backend backend, Context* context, const BvhInput& input);

VKC_API_END
}  // namespace vkc
