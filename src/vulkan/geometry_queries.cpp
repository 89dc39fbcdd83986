// The geometry queries on Vulkan: record() lays the batch's slots out (a new tile where the pair family
// changes), writes the batch (geometries, previous poses, queries, the slot ranges and tiles, and the
// arrays given in host memory) into the frame's host-visible upload buffer, copies it into device
// buffers inside the host's command buffer, then records the passes in one Recorder: each family's
// COUNT (shaders/geometry_queries_<family>.comp), SCAN, each family's WRITE and RANGES
// (shaders/geometry_queries.comp). A level's dispatches form a concurrent group (they touch disjoint
// tiles and contacts), so every barrier comes from the declared buffer uses between the levels
// (shaders/shared/geometry_queries_passes.h). A batch of primitive pairs only (devicePrimitivePairs, or
// a host batch of static primitive pairs: takePrimitivePasses) has no slot layout: QUERY COUNT per
// family, BLOCKS and LOCAL, QUERY WRITE per family, one invocation per query.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "buffer_check.h"
#include "bvh_stage.h"
#include "context_impl.h"
#include "cpu/geometry_queries_mesh.h"
#include "cpu/geometry_queries_mesh_ccd.h"
#include "geometry_queries_stage.h"
#include "recorder.h"
#include "scene/geometry_queries_layout.h"
#include "shared/geometry_queries_bindings.h"
#include "shared/geometry_queries_device_layout.h"
#include "shared/geometry_queries_mesh_mesh_device.h"
#include "shared/geometry_queries_mesh_pairs.h"
#include "shared/geometry_queries_passes.h"
#include "shared/geometry_queries_spans.h"
#include "stage_common.h"
#include "util/try.h"
#include "vkcollide/bvh.h"
#include "vkcollide/geometry_queries.h"

namespace vkc {

using detail::Buffer;
using detail::MemoryUsage;

static_assert(sizeof(GeometryQueryDeviceCounts) == sizeof(gpu::GeomCounts));
static_assert(kGeometryQueryIndirectOffset == offsetof(gpu::GeomCounts, dispatch));
static_assert(sizeof(ContactRange) == sizeof(gpu::uvec2));
static_assert(offsetof(GeometryQueryDeviceCounts, invalidQueries) == offsetof(gpu::GeomCounts, invalidQueries));
static_assert(offsetof(GeometryQueryDeviceCounts, slots) == offsetof(gpu::GeomCounts, dispatch) + 12);
static_assert(kGeometryQueryFamilyBasic == 1u << gpu::kGeomFamilyBasic &&
              kGeometryQueryFamilyManifold == 1u << gpu::kGeomFamilyManifold &&
              kGeometryQueryFamilyConvex == 1u << gpu::kGeomFamilyConvex &&
              kGeometryQueryFamilyImplicit == 1u << gpu::kGeomFamilyImplicit &&
              kGeometryQueryFamilyContinuous == 1u << gpu::kGeomFamilyContinuous &&
              kGeometryQueryFamiliesDevice == gpu::kGeomDeviceFamilies &&
              kGeometryQueryFamilyMesh == 1u << gpu::kGeomFamilyMesh &&
              kGeometryQueryFamilyMeshMesh == 1u << gpu::kGeomFamilyMeshMesh &&
              kGeometryQueryFamilyMeshContinuous == 1u << gpu::kGeomFamilyMeshCcd &&
              kGeometryQueryFamiliesAll == (1u << gpu::kGeomFamilyCount) - 1);

namespace {

constexpr const char* kOwner = "GeometryQueryRecordInfo";
constexpr const char* kCreateOwner = "GeometryQueryStageCreateInfo";
constexpr VkDeviceSize kGeomBytes = sizeof(gpu::GeomShape);
constexpr VkDeviceSize kQueryBytes = sizeof(gpu::GeomQuery);
constexpr VkDeviceSize kElementBytes = sizeof(gpu::GeomElement);
constexpr VkDeviceSize kRangeBytes = sizeof(gpu::uvec2);
constexpr VkDeviceSize kPointBytes = sizeof(gpu::vec4);
constexpr VkDeviceSize kSampleBytes = sizeof(float);
constexpr VkDeviceSize kCellEntryBytes = sizeof(uint32_t);
constexpr uint32_t kTile = gpu::kGeomGroupSize;
constexpr VkDeviceSize kMaskBytes = 2 * sizeof(uint32_t);  // a tile's hit bits
constexpr VkDeviceSize kRowBytes = sizeof(gpu::uvec4);       // a row of the mesh pairs table, a tree cell
constexpr VkDeviceSize kCandidateBytes = sizeof(gpu::uvec2);

// Concurrent groups of the recorder (detail::Pass::concurrentGroup): the COUNT level and the WRITE level.
constexpr uint32_t kCountLevel = 1;
constexpr uint32_t kWriteLevel = 2;
constexpr uint32_t kBlocksLevel = 3;  // a primitive-pair batch's BLOCKS and LOCAL passes
// A primitive pair's contacts fit its entry's 4 bits (shared/geometry_queries_bindings.h), and the
// QUERY passes evaluate at most kGeomPrimitiveMaxSlots slots.
static_assert(gpu::kGeomBoxPlaneSlots <= gpu::kGeomPrimitiveMaxSlots &&
              gpu::kGeomBoxBoxSlots <= gpu::kGeomPrimitiveMaxSlots &&
              gpu::kGeomCapsuleBoxSlots <= gpu::kGeomPrimitiveMaxSlots &&
              gpu::kGeomCapsulePlaneSlots <= gpu::kGeomPrimitiveMaxSlots &&
              gpu::kGeomCylinderPlaneSlots <= gpu::kGeomPrimitiveMaxSlots &&
              gpu::kGeomCapsuleCylinderSlots <= gpu::kGeomPrimitiveMaxSlots &&
              gpu::kGeomCylinderBoxSlots <= gpu::kGeomPrimitiveMaxSlots &&
              gpu::kGeomCylinderCylinderSlots <= gpu::kGeomPrimitiveMaxSlots &&
              gpu::kGeomPrimitiveMaxSlots <= 15);

// A primitive-pair batch's blocks (shared/geometry_queries_bindings.h): chunks of kTile queries per
// block, the least c with c * c * kTile * kTile >= queries, so that the LOCAL pass's workgroups (c
// chunks each) and the BLOCKS pass's invocations (about c blocks each) walk chains of one length.
struct PrimitiveBlocks {
  uint32_t chunks = 1;
  uint32_t blocks = 0;
};
PrimitiveBlocks primitiveBlocks(uint64_t queries) {
  const uint64_t perChunk2 = uint64_t{kTile} * kTile;
  uint64_t chunks = static_cast<uint64_t>(std::sqrt(static_cast<double>(queries) / static_cast<double>(perChunk2)));
  while (chunks * chunks * perChunk2 < queries) ++chunks;
  while (chunks > 1 && (chunks - 1) * (chunks - 1) * perChunk2 >= queries) --chunks;
  chunks = std::max<uint64_t>(chunks, 1);
  return {static_cast<uint32_t>(chunks), static_cast<uint32_t>((queries + kTile * chunks - 1) / (kTile * chunks))};
}

Error invalid(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message}; }

VkDeviceSize align16(VkDeviceSize x) { return (x + 15) / 16 * 16; }

uint64_t tilesOf(uint64_t slots) { return std::max<uint64_t>((slots + kTile - 1) / kTile, 1); }

uint64_t blocksOf(uint64_t queries) { return std::max<uint64_t>((queries + kTile - 1) / kTile, 1); }
// The cells of the tree over the mesh-mesh queries' meshes (0: no tree, no candidate buffers).
uint32_t treeCellsOf(const GeometryQueryStageCreateInfo& info) {
  return info.maxMeshPairCells != 0 ? info.maxMeshPairCells : info.maxCells / 2;
}

// Entries of the X cells buffer for t X cells: t + 1, and a sum per block.
uint64_t xCellEntriesOf(uint64_t t) { return t + 2 + t / gpu::kGeomMeshPairBlock; }

// Rows of the mesh pairs table: two per query, one per geometry.
uint64_t meshPairRowsOf(const GeometryQueryStageCreateInfo& info) {
  return gpu::kGeomMeshPairRows * uint64_t{info.maxQueries} + info.maxGeometries;
}

uint32_t maxSlotsOf(const GeometryQueryStageCreateInfo& info) {
  if (info.maxSlots != 0) return info.maxSlots;
  const uint64_t n =
      uint64_t{info.maxPoints} + 2ull * info.maxGridSamples + 72ull * info.maxQueries + uint64_t{info.maxCells};
  return static_cast<uint32_t>(std::min<uint64_t>(n, UINT32_MAX));
}

// The tiles buffer's entries: the tile list (the tiles of maxSlots, rounded up to 4 entries), then the
// span records and spans (shared/geometry_queries_spans.h) from spanRecordsOf on.
uint64_t spanRecordsOf(const GeometryQueryStageCreateInfo& info) { return (tilesOf(maxSlotsOf(info)) + 3) / 4 * 4; }
uint64_t tileEntriesOf(const GeometryQueryStageCreateInfo& info) {
  return spanRecordsOf(info) + gpu::geomSpanTailWords(info.maxQueries);
}

// The upload buffer's sections (byte offsets), for the stage's maxima.
struct UploadLayout {
  VkDeviceSize geometries = 0, prevGeometries = 0, queries = 0, slotRange = 0, tiles = 0, points = 0,
               prevPoints = 0, gridSamples = 0, cells = 0, state = 0, meshPairs = 0, total = 0;
};
UploadLayout uploadLayout(const GeometryQueryStageCreateInfo& info) {
  UploadLayout u;
  u.prevGeometries = align16(info.maxGeometries * kGeomBytes);
  u.queries = u.prevGeometries + align16(info.maxGeometries * kGeomBytes);
  u.slotRange = u.queries + align16(info.maxQueries * kQueryBytes);
  u.tiles = u.slotRange + align16(info.maxQueries * kRangeBytes);
  u.points = u.tiles + align16(tilesOf(maxSlotsOf(info)) * sizeof(uint32_t));
  u.prevPoints = u.points + align16(VkDeviceSize{info.maxPoints} * kPointBytes);
  u.gridSamples = u.prevPoints + align16(VkDeviceSize{info.maxPoints} * kPointBytes);
  u.cells = u.gridSamples + align16(VkDeviceSize{info.maxGridSamples} * kSampleBytes);
  u.state = u.cells + align16(VkDeviceSize{info.maxCells} * kCellEntryBytes);
  u.meshPairs = u.state + align16(VkDeviceSize{info.maxStates} * kPointBytes);
  u.total = u.meshPairs + (treeCellsOf(info) > 0 ? meshPairRowsOf(info) * kRowBytes : 0);
  return u;
}

Status checkCreateInfo(const detail::ContextImpl& ctx, const GeometryQueryStageCreateInfo& info) {
  VKC_TRY(detail::checkFramesInFlight(info.framesInFlight, kCreateOwner));
  const uint64_t maxRange = ctx.info.maxStorageBufferRange;
  const struct {
    const char* what;
    uint64_t bytes;
  } needs[] = {
      {"maxGeometries", uint64_t{info.maxGeometries} * kGeomBytes},
      {"maxQueries", uint64_t{info.maxQueries} * kQueryBytes},
      {"maxPoints", uint64_t{info.maxPoints} * kPointBytes},
      {"maxGridSamples", uint64_t{info.maxGridSamples} * kSampleBytes},
      {"maxCells", uint64_t{info.maxCells} * kCellEntryBytes},
      {"maxStates", uint64_t{info.maxStates} * kPointBytes},
      {"maxContacts", uint64_t{info.maxContacts} * kElementBytes},
      {"maxSlots", tilesOf(maxSlotsOf(info)) * kMaskBytes},
      {"maxSlots, maxQueries (tiles and spans)", tileEntriesOf(info) * sizeof(uint32_t)},
      {"maxSlots (mesh-mesh candidates)", treeCellsOf(info) > 0 ? uint64_t{maxSlotsOf(info)} * kCandidateBytes : 0},
      {"maxMeshPairCells", uint64_t{treeCellsOf(info)} * kRowBytes},
  };
  if (treeCellsOf(info) > kBvhMaxPrimitives) {
    return Error{ErrorCode::kLimitExceeded, std::string(kCreateOwner) + "::maxMeshPairCells is " +
                                                std::to_string(treeCellsOf(info)) + ": the tree holds at most " +
                                                std::to_string(kBvhMaxPrimitives) + " cells"};
  }
  for (const auto& n : needs) {
    if (n.bytes > maxRange) {
      return Error{ErrorCode::kLimitExceeded, std::string(kCreateOwner) + "::" + n.what + " needs " +
                                                  std::to_string(n.bytes) + " bytes in one storage buffer; the device '" +
                                                  ctx.info.name + "' allows maxStorageBufferRange = " +
                                                  std::to_string(maxRange)};
    }
  }
  return {};
}

// The tree over the mesh-mesh queries' cells: four vertex numbers per cell.
BvhStageCreateInfo treeInfo(const GeometryQueryStageCreateInfo& info) {
  return {.maxPrimitives = treeCellsOf(info), .verticesPerPrimitive = 4, .framesInFlight = info.framesInFlight};
}

Status tooMany(const char* field, size_t n, const char* limit, uint32_t max) {
  if (n <= max) return {};
  return Error{ErrorCode::kLimitExceeded, std::string(kOwner) + "::" + field + " holds " + std::to_string(n) +
                                              "; the stage was created with " + limit + " = " + std::to_string(max)};
}

}  // namespace

struct GeometryQueryStage::Impl {
  // The stage's buffers (StageBuffers ids): everything a record writes is per frame in flight.
  enum : uint32_t {
    kUpload,
    kGeometries,
    kPrevGeometries,
    kQueries,
    kSlotRange,
    kTiles,
    kPoints,
    kPrevPoints,
    kGridSamples,
    kCells,
    kState,
    kTileMasks,
    kGroupSums,
    kElementsA,
    kElementsB,
    kRanges,
    kCounts,
    kDummy,
    kDummyOut,  // bound where nothing is written (zero capacity, no query): never shared with a read binding
    kLayoutScratch,  // device-resident batches: two words per block of 64 queries (geometry_queries_device_layout.h)
    kTreeCells,  // the mesh-mesh candidates (shared/geometry_queries_mesh_pairs.h): GATHER's vertex numbers
    kMeshPairs,
    kXCells,
    kCandidates,
    kBufferCount
  };

  detail::ContextImpl& ctx;
  GeometryQueryStageCreateInfo limits;
  UploadLayout layout;
  const detail::Pipeline* scanPipeline[1] = {};
  // Primitive-pair batches (on first use): the SCAN shader's BLOCKS and LOCAL passes, and the basic,
  // manifold and convex families' QUERY COUNT and QUERY WRITE.
  const detail::Pipeline* primitiveScanPipelines[2] = {};
  std::array<std::array<const detail::Pipeline*, 2>, gpu::kGeomFamilyCount> primitiveFamily{};
  // Families whose QUERY pipelines the device failed to create: a batch from host memory of their
  // pairs keeps the slot passes (the same contacts, bit for bit), where a device-resident batch that
  // asks for devicePrimitivePairs gets the error. (On an H100 with driver 580 the convex family's
  // failed, VK_ERROR_UNKNOWN, before shared/geometry_queries_family.h bounded its loop to one slot.)
  uint32_t primitiveUnavailable = 0;
  const detail::Pipeline* rangesPipeline[1] = {};
  const detail::Pipeline* layoutPipelines[3] = {};  // device-resident batches' LAYOUT, BLOCKS, PLACE (on first use)
  const detail::Pipeline* spansPipelines[2] = {};   // MESH_PAIRS, FAMILIES (shared/geometry_queries_spans.h; on first use)
  std::array<const detail::Pipeline*, std::size(gpu::kGeomMeshPairPasses)> meshPairPipelines{};
  std::unique_ptr<BvhStage> tree;  // over the mesh-mesh queries' cells; null when treeCellsOf(limits) is 0
  // Each family's COUNT and WRITE pipelines, fetched from the context's cache when a batch first holds
  // the family (a family's shader is compiled only if used).
  std::array<std::array<const detail::Pipeline*, 2>, gpu::kGeomFamilyCount> family{};
  detail::StageBuffers buffers;
  // Convenience path.
  Buffer readback;
  detail::TimestampPool queries{ctx};
  std::vector<PassTiming> timings;
  RecordStats lastStats;
  std::optional<detail::Recorder> last;
  bool recordTimestamps = false;  // the last record() wrote timestamps (readRecordTimings)

  explicit Impl(detail::ContextImpl& c) : ctx(c) {}

  static std::array<detail::BufferSpec, kBufferCount> plan(const GeometryQueryStageCreateInfo& info) {
    constexpr MemoryUsage kDevice = MemoryUsage::kDeviceLocal;
    const uint64_t slots = maxSlotsOf(info);
    std::array<detail::BufferSpec, kBufferCount> p{};
    p[kUpload] = {uploadLayout(info).total, MemoryUsage::kUpload, true};
    p[kGeometries] = {info.maxGeometries * kGeomBytes, kDevice, true};
    p[kPrevGeometries] = {info.maxGeometries * kGeomBytes, kDevice, true};
    p[kQueries] = {info.maxQueries * kQueryBytes, kDevice, true};
    p[kSlotRange] = {info.maxQueries * kRangeBytes, kDevice, true};
    p[kTiles] = {tileEntriesOf(info) * sizeof(uint32_t), kDevice, true, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
    p[kPoints] = {info.maxPoints * kPointBytes, kDevice, true};
    p[kPrevPoints] = {info.maxPoints * kPointBytes, kDevice, true};
    p[kGridSamples] = {info.maxGridSamples * kSampleBytes, kDevice, true};
    p[kCells] = {info.maxCells * kCellEntryBytes, kDevice, true};
    p[kState] = {info.maxStates * kPointBytes, kDevice, false};  // run()'s; record() uses the host's
    // Also a primitive-pair batch's entry per query and two words per block (at most a block per
    // kTile queries).
    p[kTileMasks] = {std::max(tilesOf(slots) * kMaskBytes, uint64_t{info.maxQueries} * sizeof(uint32_t)), kDevice, true};
    p[kGroupSums] = {std::max(tilesOf(slots), 2 * blocksOf(info.maxQueries)) * sizeof(uint32_t), kDevice, true};
    p[kElementsA] = {info.maxContacts * kElementBytes, kDevice, true};
    p[kElementsB] = {info.maxContacts * kElementBytes, kDevice, true};
    p[kRanges] = {info.maxQueries * kRangeBytes, kDevice, true};
    p[kCounts] = {sizeof(gpu::GeomCounts), kDevice, true, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT};
    p[kDummy] = {sizeof(gpu::vec4)};
    p[kDummyOut] = {sizeof(gpu::GeomElement), kDevice, true};
    p[kLayoutScratch] = {blocksOf(info.maxQueries) * 2 * sizeof(uint32_t), kDevice, true};
    const bool tree = treeCellsOf(info) > 0;
    p[kTreeCells] = {tree ? treeCellsOf(info) * kRowBytes : 0, kDevice, true};
    p[kMeshPairs] = {tree ? meshPairRowsOf(info) * kRowBytes : 0, kDevice, true};
    p[kXCells] = {tree ? xCellEntriesOf(slots) * sizeof(uint32_t) : 0, kDevice, true};
    p[kCandidates] = {tree ? slots * kCandidateBytes : 0, kDevice, true};
    return p;
  }

  // The first `bytes` of a stage buffer (at least 16: a binding is never empty).
  BufferRange part(uint32_t id, uint32_t frame, VkDeviceSize bytes) const {
    const Buffer& b = buffers.get(id, frame);
    return {b.handle(), 0, std::min(std::max<VkDeviceSize>(bytes, 16), b.size())};
  }

  // Where one record writes, and how many contacts its element buffers hold.
  struct Targets {
    BufferRange elementsA, elementsB, ranges, counts;
    uint32_t capacity = 0;
  };

  // One array the device reads: the host's buffer, or host memory copied into a stage buffer.
  struct Array {
    BufferRange binding;       // what the shaders bind (null: nothing; the dummy is bound)
    const void* copy = nullptr;  // host memory to copy into the stage's buffer, or null
    VkDeviceSize bytes = 0;
  };

  // One validated batch: its sizes, its arrays' bindings and the slot layout.
  struct Batch {
    std::span<const Geometry> geometries;
    std::span<const Geometry> previousGeometries;
    std::span<const GeometryQuery> queries;
    uint32_t geometryCount = 0, queryCount = 0;
    bool moving = false;
    // A device-resident batch: the host's buffers of geometries, previous poses, queries; the
    // families dispatched (the layout is the device's).
    bool device = false;
    BufferRange deviceGeometries, devicePrevGeometries, deviceQueries;
    uint32_t families = 0;
    // A batch of primitive pairs (no slot layout: devicePrimitivePairs, or a host batch of static
    // primitive pairs only, takePrimitivePasses): its blocks.
    bool primitive = false;
    PrimitiveBlocks blocks;
    Array points, prevPoints, gridSamples, cells;
    BufferRange state;
    uint32_t pointCount = 0, gridSampleCount = 0, stateCount = 0, cellCount = 0;
    std::vector<gpu::uvec2> slotRange;  // per query
    std::vector<uint32_t> tiles;        // family by family
    std::array<uint32_t, gpu::kGeomFamilyCount> familyFirst{}, familyCount{};
    uint32_t slotCount = 0;
    // The mesh-mesh candidates (shared/geometry_queries_mesh_pairs.h): the table's rows, its pairs and
    // meshes, the tree's cells and the X cells of all pairs.
    std::vector<gpu::uvec4> meshPairs;
    uint32_t meshPairCount = 0, meshCount = 0, treeCellCount = 0, xCellCount = 0;
    bool sweptTree = false;  // a continuous query among them: the tree's boxes cover the previous points
    uint32_t indirectGroupSize = 64;
    uint32_t frame = 0;
  };

  static uint32_t Q(const Batch& b) { return b.queryCount; }
  // Whether family f's COUNT and WRITE are span dispatches (shared/geometry_queries_spans.h): every
  // family of a device-resident batch, the mesh-mesh and mesh CCD families with candidate pairs (the
  // mesh pairs table holds both families' pairs; the SPANS pass writes a record for each). A table
  // holding only closed meshes' rows for point set queries (the mesh family's vertex pass, a direct
  // dispatch) needs no SPANS pass.
  static bool meshPairSpans(const Batch& b) {
    return b.meshPairCount > 0 &&
           (b.familyCount[gpu::kGeomFamilyMeshMesh] > 0 || b.familyCount[gpu::kGeomFamilyMeshCcd] > 0);
  }
  static bool slotLayoutOnDevice(const Batch& b) { return b.device && !b.primitive; }
  static bool spanDispatch(const Batch& b, uint32_t f) {
    return slotLayoutOnDevice(b) || ((f == gpu::kGeomFamilyMeshMesh || f == gpu::kGeomFamilyMeshCcd) && meshPairSpans(b));
  }
  static bool anySpans(const Batch& b) { return slotLayoutOnDevice(b) || meshPairSpans(b); }
  static uint32_t tileCount(const Batch& b) { return static_cast<uint32_t>(tilesOf(b.slotCount)); }

  // The stage's bindings, in binding order (shaders/shared/geometry_queries_bindings.h): the one list
  // to extend when the shaders gain a buffer.
  std::array<BufferRange, gpu::kGeomMeshPairBindingCount> bindingRanges(const Batch& b, const Targets& t) const {
    const uint32_t f = b.frame;
    const BufferRange dummy = buffers.range(kDummy);
    auto orDummy = [&](const BufferRange& r) { return r.buffer != VK_NULL_HANDLE ? r : dummy; };
    const VkDeviceSize geometryBytes = VkDeviceSize{b.geometryCount} * kGeomBytes;
    std::array<BufferRange, gpu::kGeomMeshPairBindingCount> r{};
    r[gpu::kGeomBindingGeometries] = part(kGeometries, f, geometryBytes);
    r[gpu::kGeomBindingPrevGeometries] = b.moving ? part(kPrevGeometries, f, geometryBytes) : dummy;
    r[gpu::kGeomBindingPoints] = orDummy(b.points.binding);
    r[gpu::kGeomBindingPrevPoints] = orDummy(b.prevPoints.binding);
    r[gpu::kGeomBindingGridSamples] = orDummy(b.gridSamples.binding);
    r[gpu::kGeomBindingState] = orDummy(b.state);
    r[gpu::kGeomBindingQueries] = part(kQueries, f, Q(b) * kQueryBytes);
    r[gpu::kGeomBindingSlotRange] = part(kSlotRange, f, Q(b) * kRangeBytes);
    // With span dispatches, the whole buffer: the tile list, then the span records and spans.
    r[gpu::kGeomBindingTiles] = anySpans(b) ? buffers.range(kTiles, f) : part(kTiles, f, b.tiles.size() * sizeof(uint32_t));
    r[gpu::kGeomBindingTileMasks] = part(kTileMasks, f, tileMaskBytes(b));
    r[gpu::kGeomBindingGroupSums] = part(kGroupSums, f, groupSumBytes(b));
    const BufferRange dummyOut = buffers.range(kDummyOut, f);
    r[gpu::kGeomBindingElementsA] = t.capacity > 0 ? t.elementsA : dummyOut;
    r[gpu::kGeomBindingElementsB] = t.capacity > 0 ? t.elementsB : dummyOut;
    r[gpu::kGeomBindingRanges] = Q(b) > 0 ? t.ranges : dummyOut;
    r[gpu::kGeomBindingCounts] = t.counts;
    r[gpu::kGeomBindingCells] = orDummy(b.cells.binding);
    if (b.device) overrideDeviceBindings(b, r);
    // The mesh-mesh candidates' (bound by the candidate passes and the mesh, mesh-mesh and mesh CCD families).
    r[gpu::kGeomBindingTreeNodes] = tree ? tree->nodesBuffer(f) : dummy;
    r[gpu::kGeomBindingTreeBoxes] = tree ? tree->primitiveBoxesBuffer(f) : dummy;
    r[gpu::kGeomBindingTreeCells] = part(kTreeCells, f, VkDeviceSize{b.treeCellCount} * kRowBytes);
    r[gpu::kGeomBindingMeshPairs] = part(kMeshPairs, f, b.meshPairs.size() * kRowBytes);
    r[gpu::kGeomBindingXCells] = part(kXCells, f, xCellEntriesOf(b.xCellCount) * sizeof(uint32_t));
    r[gpu::kGeomBindingCandidates] = part(kCandidates, f, VkDeviceSize{b.slotCount} * kCandidateBytes);
    return r;
  }

  // The tile masks and group sums a record uses: a primitive-pair batch's entry per query and two
  // words per block, else two words per tile and one.
  static VkDeviceSize tileMaskBytes(const Batch& b) {
    return b.primitive ? VkDeviceSize{Q(b)} * sizeof(uint32_t) : VkDeviceSize{tileCount(b)} * kMaskBytes;
  }
  static VkDeviceSize groupSumBytes(const Batch& b) {
    return b.primitive ? VkDeviceSize{b.blocks.blocks} * 2 * sizeof(uint32_t) : VkDeviceSize{tileCount(b)} * sizeof(uint32_t);
  }

  // A primitive-pair batch's pipelines: BLOCKS and LOCAL, each family's QUERY COUNT and QUERY WRITE
  // (consecutive passes of their shaders).
  Status fetchPrimitivePipelines(const Batch& b) {
    if (primitiveScanPipelines[0] == nullptr) {
      VKC_TRY(detail::getPassPipelines(ctx, gpu::kGeomStage.shader, gpu::kGeomBindingCount, sizeof(gpu::GeomStagePush),
                                        primitiveScanPipelines, gpu::kGeomScanPassBlocks));
    }
    static_assert(gpu::kGeomScanPassLocal == gpu::kGeomScanPassBlocks + 1 &&
                  gpu::kGeomPassQueryWrite == gpu::kGeomPassQueryCount + 1);
    for (uint32_t f = 0; f < gpu::kGeomFamilyCount; ++f) {
      if (((b.families >> f) & 1u) == 0 || primitiveFamily[f][0] != nullptr) continue;
      const gpu::StageDecl& s = gpu::kGeomFamilyStages[f];
      if (const Status st = detail::getPassPipelines(ctx, s.shader, s.bindingCount, sizeof(gpu::GeomStagePush),
                                                     primitiveFamily[f], gpu::kGeomPassQueryCount);
          !st) {
        primitiveFamily[f] = {};
        primitiveUnavailable |= 1u << f;
        return st;
      }
    }
    return {};
  }

  // checkBatch, then for a batch from host memory that took the primitive-pair passes, their
  // pipelines: where the device cannot create them, the batch is checked again and keeps the slot
  // passes (takePrimitivePasses declines the families in primitiveUnavailable).
  Status checkBatchAndPipelines(const GeometryQueryRecordInfo& info, Batch& batch, bool inputValidated = false) {
    VKC_TRY(checkBatch(info, batch, inputValidated));
    if (!batch.primitive || batch.device) return {};
    const Status st = fetchPrimitivePipelines(batch);
    if (st.ok() || (batch.families & primitiveUnavailable) == 0) return st;  // (the scan's pipelines: an error)
    batch = Batch{};
    return checkBatch(info, batch, inputValidated);
  }

  // The families' pipelines the batch needs (from the context's cache).
  Status fetchPipelines(const Batch& b) {
    if (b.primitive) return fetchPrimitivePipelines(b);
    if (b.device && layoutPipelines[0] == nullptr) {
      VKC_TRY(detail::getPassPipelines(ctx, gpu::kGeomLayoutStage.shader, gpu::kGeomBindingCount,
                                        sizeof(gpu::GeomLayoutPush), layoutPipelines));
    }
    for (uint32_t f = 0; f < gpu::kGeomFamilyCount; ++f) {
      if (b.familyCount[f] == 0 || family[f][0] != nullptr) continue;
      const gpu::StageDecl& s = gpu::kGeomFamilyStages[f];
      VKC_TRY(detail::getPassPipelines(ctx, s.shader, s.bindingCount, sizeof(gpu::GeomStagePush), family[f]));
    }
    if (anySpans(b) && spansPipelines[0] == nullptr) {
      VKC_TRY(detail::getPassPipelines(ctx, gpu::kGeomSpansStage.shader, gpu::kGeomSpansStage.bindingCount,
                                        sizeof(gpu::GeomStagePush), spansPipelines));
    }
    if (b.meshPairCount > 0 && meshPairPipelines[0] == nullptr) {
      VKC_TRY(detail::getPassPipelines(ctx, gpu::kGeomMeshPairStage.shader, gpu::kGeomMeshPairBindingCount,
                                        sizeof(gpu::GeomStagePush), meshPairPipelines));
    }
    return {};
  }

  // Every pipeline a record of `families` may need, on each path (GeometryQueryStage::createPipelines):
  // the slot passes and the device layout and spans passes, the mesh pairs' passes where a mesh
  // family is asked, the primitive-pair passes of the primitive families the device can create.
  Status createPipelines(uint32_t families) {
    Batch slots;
    slots.device = true;  // the device layout's passes
    for (uint32_t f = 0; f < gpu::kGeomFamilyCount; ++f) slots.familyCount[f] = (families >> f) & 1u;
    constexpr uint32_t kMeshFamilies =
        kGeometryQueryFamilyMesh | kGeometryQueryFamilyMeshMesh | kGeometryQueryFamilyMeshContinuous;
    slots.meshPairCount = (families & kMeshFamilies) != 0 ? 1 : 0;
    VKC_TRY(fetchPipelines(slots));
    if (spansPipelines[0] == nullptr) {
      VKC_TRY(detail::getPassPipelines(ctx, gpu::kGeomSpansStage.shader, gpu::kGeomSpansStage.bindingCount,
                                        sizeof(gpu::GeomStagePush), spansPipelines));
    }
    Batch primitive;
    primitive.primitive = true;
    primitive.families = families & kGeometryQueryFamiliesPrimitive & ~primitiveUnavailable;
    if (primitive.families == 0) return {};
    // A family the device cannot create there is marked unavailable and stays on the slot passes.
    const Status st = fetchPrimitivePipelines(primitive);
    if (st.ok() || (primitive.families & primitiveUnavailable) == 0) return st;
    return createPipelines(families);  // the other primitive families
  }

  // The passes: with mesh-mesh queries, their candidates first (GATHER, the tree's build, COUNT, SCAN,
  // WRITE: shared/geometry_queries_mesh_pairs.h); then COUNT per family present, SCAN, WRITE per family
  // present, RANGES. A fixed number of dispatches for any batch with the same families.
  detail::Recorder makeRecorder(const Batch& b, const Targets& t) const {
    const auto ranges = bindingRanges(b, t);
    gpu::GeomStagePush push{};
    push.queryCount = Q(b);
    push.geometryCount = b.geometryCount;
    push.pointCount = b.pointCount;
    push.slotCount = b.slotCount;
    push.groupCount = tileCount(b);
    push.capacity = t.capacity;
    push.indirectGroupSize = b.indirectGroupSize;
    push.gridSampleCount = b.gridSampleCount;
    push.stateCount = b.stateCount;
    push.moving = b.moving ? 1u : 0u;
    push.cellCount = b.cellCount;
    push.deviceLayout = b.device ? 1u : 0u;
    push.meshPairCount = b.meshPairCount;
    push.meshCount = b.meshCount;
    push.treeCellCount = b.treeCellCount;
    push.maxGroupsX = ctx.info.maxComputeWorkGroupCount[0];
    push.queryChunks = b.blocks.chunks;
    push.families = b.families;
    push.blockCount = b.blocks.blocks;
    const uint32_t spanRecords = static_cast<uint32_t>(spanRecordsOf(limits));
    detail::Recorder rec(ctx);
    auto pass = [&](const gpu::PassDecl& decl, const detail::Pipeline* pipeline, uint64_t groups, uint32_t group,
                    uint32_t tileBase, uint32_t tiles) {
      detail::Pass p = detail::passFromDecl(decl, pipeline, std::span<const BufferRange>(ranges).first(decl.bindingCount));
      gpu::GeomStagePush pp = push;
      pp.tileBase = tileBase;
      pp.tileCount = tiles;
      p.setPush(pp);
      p.groupCount = static_cast<uint32_t>(groups);
      p.concurrentGroup = group;
      return p;
    };
    if (b.primitive) {
      addPrimitivePasses(b, pass, rec);
      return rec;
    }
    if (b.device) {
      addLayoutPasses(b, ranges, spanRecords, rec);
      rec.add(spansPass(gpu::kGeomSpansPassFamilies, ranges, push, spanRecords));
    }
    if (b.meshPairCount > 0) {
      const auto& d = gpu::kGeomMeshPairPasses;
      rec.add(pass(d[gpu::kGeomMeshPairPassGather], meshPairPipelines[gpu::kGeomMeshPairPassGather],
                   tilesOf(b.treeCellCount), 0, 0, 0));
      BvhRecordInfo build;
      build.update = BvhUpdate::kBuild;
      build.primitiveCount = b.treeCellCount;
      build.vertexCount = b.pointCount;
      build.vertices = ranges[gpu::kGeomBindingPoints];
      if (b.sweptTree) build.prevVertices = ranges[gpu::kGeomBindingPrevPoints];
      build.indices = ranges[gpu::kGeomBindingTreeCells];
      build.frame = b.frame;
      detail::appendBvhPasses(*tree, rec, build);
      rec.add(pass(d[gpu::kGeomMeshPairPassCount], meshPairPipelines[gpu::kGeomMeshPairPassCount],
                   tilesOf(b.xCellCount), 0, 0, 0));
      const uint64_t blocks = (uint64_t{b.xCellCount} + gpu::kGeomMeshPairBlock - 1) / gpu::kGeomMeshPairBlock;
      rec.add(pass(d[gpu::kGeomMeshPairPassSums], meshPairPipelines[gpu::kGeomMeshPairPassSums], tilesOf(blocks), 0, 0, 0));
      rec.add(pass(d[gpu::kGeomMeshPairPassBlocks], meshPairPipelines[gpu::kGeomMeshPairPassBlocks], 1, 0, 0, 0));
      rec.add(pass(d[gpu::kGeomMeshPairPassPrefix], meshPairPipelines[gpu::kGeomMeshPairPassPrefix], tilesOf(blocks), 0, 0, 0));
      rec.add(pass(d[gpu::kGeomMeshPairPassWrite], meshPairPipelines[gpu::kGeomMeshPairPassWrite],
                   tilesOf(b.xCellCount), 0, 0, 0));
      if (meshPairSpans(b)) rec.add(spansPass(gpu::kGeomSpansPassMeshPairs, ranges, push, spanRecords));
    }
    for (uint32_t level = 0; level < 2; ++level) {
      const uint32_t kind = level == 0 ? gpu::kGeomPassCount : gpu::kGeomPassWrite;
      for (uint32_t f = 0; f < gpu::kGeomFamilyCount; ++f) {
        if (b.familyCount[f] == 0) continue;
        detail::Pass p = pass(gpu::kGeomFamilyStages[f].passes[kind], family[f][kind], b.familyCount[f],
                              level == 0 ? kCountLevel : kWriteLevel, b.familyFirst[f], b.familyCount[f]);
        if (spanDispatch(b, f)) useSpans(p, ranges[gpu::kGeomBindingTiles], spanRecords, f);
        rec.add(std::move(p));
      }
      if (level == 0) {
        rec.add(pass(gpu::kGeomPasses[0], scanPipeline[0], 1, 0, 0, 0));
      } else {
        rec.add(pass(gpu::kGeomRangesPasses[0], rangesPipeline[0], tilesOf(Q(b)), kWriteLevel, 0, 0));
      }
    }
    return rec;
  }

  // A primitive-pair batch (shared/geometry_queries_bindings.h): QUERY COUNT per family; BLOCKS and
  // LOCAL (one level: they touch the block sums and the entries apart); QUERY WRITE per family.
  template <typename MakePass>
  void addPrimitivePasses(const Batch& b, const MakePass& pass, detail::Recorder& rec) const {
    const uint64_t groups = blocksOf(Q(b));
    for (uint32_t level = 0; level < 2; ++level) {
      const uint32_t kind = level == 0 ? gpu::kGeomPassQueryCount : gpu::kGeomPassQueryWrite;
      for (uint32_t f = 0; f < gpu::kGeomFamilyCount; ++f) {
        if (((b.families >> f) & 1u) == 0) continue;
        rec.add(pass(gpu::kGeomFamilyStages[f].passes[kind], primitiveFamily[f][level], groups,
                     level == 0 ? kCountLevel : kWriteLevel, 0, 0));
      }
      if (level == 0) {
        rec.add(pass(gpu::kGeomPasses[gpu::kGeomScanPassBlocks], primitiveScanPipelines[0], 1, kBlocksLevel, 0, 0));
        rec.add(pass(gpu::kGeomPasses[gpu::kGeomScanPassLocal], primitiveScanPipelines[1],
                     std::max<uint32_t>(b.blocks.blocks, 1), kBlocksLevel, 0, 0));
      }
    }
  }

  // --- Span dispatches (shared/geometry_queries_spans.h) ---

  // The spans pass `kind` (one workgroup): the spans and records of the mesh-mesh and mesh CCD
  // families or of a device-resident batch's families.
  detail::Pass spansPass(uint32_t kind, std::span<const BufferRange> ranges, const gpu::GeomStagePush& push,
                         uint32_t spanRecords) const {
    const gpu::PassDecl& decl = gpu::kGeomSpansPasses[kind];
    detail::Pass p = detail::passFromDecl(decl, spansPipelines[kind], ranges.first(decl.bindingCount));
    gpu::GeomStagePush pp = push;
    pp.spanRecords = spanRecords;
    p.setPush(pp);
    p.groupCount = 1;
    return p;
  }

  // Makes family f's COUNT or WRITE pass `p` a span dispatch: indirect, from the family's record in
  // the tiles buffer (`tiles`, bound whole).
  static void useSpans(detail::Pass& p, const BufferRange& tiles, uint32_t spanRecords, uint32_t f) {
    gpu::GeomStagePush pp{};
    std::memcpy(&pp, p.push.data(), sizeof pp);
    pp.spanRecords = spanRecords;
    p.setPush(pp);
    p.groupCount = 0;
    p.indirect = {tiles.buffer, tiles.offset + VkDeviceSize{spanRecords + gpu::kGeomSpanRecordWords * f} * sizeof(uint32_t),
                  sizeof(VkDispatchIndirectCommand)};
  }

  // One array of `count` elements of `bytes` each: the host's buffer, or host memory to copy into
  // stage buffer `id`. `what` names the fields (e.g. "pointBuffer" / "points").
  Status checkArray(const BufferRange& buffer, const void* data, size_t dataCount, uint32_t count, VkDeviceSize bytes,
                    uint32_t id, uint32_t frame, const char* bufferName, const char* spanName, const char* limit,
                    uint32_t max, Array& out) const {
    out = {};
    if (buffer.buffer != VK_NULL_HANDLE) {
      if (dataCount != 0) {
        return invalid(std::string(kOwner) + ": " + bufferName + " and " + spanName + " are both set; give one of them");
      }
      if (count == 0) return {};
      VKC_TRY(detail::checkBufferRange(ctx, buffer, kOwner, bufferName, VkDeviceSize{count} * bytes));
      out.binding = {buffer.buffer, buffer.offset, VkDeviceSize{count} * bytes};
      return {};
    }
    VKC_TRY(tooMany(spanName, dataCount, limit, max));
    if (dataCount == 0) return {};
    out.copy = data;
    out.bytes = dataCount * bytes;
    out.binding = part(id, frame, out.bytes);
    return {};
  }

  // Checks a record's values against the stage's maxima and fills `batch` (not the outputs).
  // inputValidated: run() checked the whole input and output with validate() / validateOutput()
  // already; what is left are the stage's own limits and the layout.
  Status checkBatch(const GeometryQueryRecordInfo& info, Batch& batch, bool inputValidated = false) const {
    VKC_TRY(detail::checkFrame(info.frame, limits.framesInFlight, kOwner));
    if (info.geometryBuffer.buffer != VK_NULL_HANDLE || info.queryBuffer.buffer != VK_NULL_HANDLE) {
      VKC_TRY(checkDeviceSources(info, batch));
    } else {
      if (info.devicePrimitivePairs) {
        return invalid(std::string(kOwner) + "::devicePrimitivePairs is set without geometryBuffer and queryBuffer: "
                       "it is for device-resident batches (a batch from host memory of primitive pairs takes those passes by "
                       "itself)");
      }
      VKC_TRY(tooMany("geometries", info.geometries.size(), "maxGeometries", limits.maxGeometries));
      VKC_TRY(tooMany("queries", info.queries.size(), "maxQueries", limits.maxQueries));
      batch.geometryCount = static_cast<uint32_t>(info.geometries.size());
      batch.queryCount = static_cast<uint32_t>(info.queries.size());
      batch.moving = !info.previousGeometries.empty();
    }
    if (info.indirectGroupSize == 0) return invalid(std::string(kOwner) + "::indirectGroupSize is 0: must be >= 1");
    batch.geometries = info.geometries;
    batch.previousGeometries = info.previousGeometries;
    batch.queries = info.queries;
    batch.indirectGroupSize = info.indirectGroupSize;
    batch.frame = info.frame;
    const uint32_t f = info.frame;
    // Points: their count is pointCount with a buffer, points.size() without.
    if (info.pointBuffer.buffer == VK_NULL_HANDLE && info.pointCount != 0 && info.pointCount != info.points.size()) {
      return invalid(std::string(kOwner) + "::pointCount is " + std::to_string(info.pointCount) +
                     " without a pointBuffer: it must be 0 or points.size() (" + std::to_string(info.points.size()) +
                     ")");
    }
    batch.pointCount = info.pointBuffer.buffer != VK_NULL_HANDLE ? info.pointCount
                                                                 : static_cast<uint32_t>(info.points.size());
    VKC_TRY(checkArray(info.pointBuffer, info.points.data(), info.points.size(), batch.pointCount, kPointBytes, kPoints,
                       f, "pointBuffer", "points", "maxPoints", limits.maxPoints, batch.points));
    const bool hasPrev = info.previousPointBuffer.buffer != VK_NULL_HANDLE || !info.previousPoints.empty();
    if (!info.previousPoints.empty() && info.previousPoints.size() != batch.pointCount) {
      return invalid(std::string(kOwner) + "::previousPoints holds " + std::to_string(info.previousPoints.size()) +
                     " points: must be empty or one per point (" + std::to_string(batch.pointCount) + ")");
    }
    VKC_TRY(checkArray(info.previousPointBuffer, info.previousPoints.data(), info.previousPoints.size(),
                       hasPrev ? batch.pointCount : 0, kPointBytes, kPrevPoints, f, "previousPointBuffer",
                       "previousPoints", "maxPoints", limits.maxPoints, batch.prevPoints));
    if (info.gridSampleBuffer.buffer == VK_NULL_HANDLE && info.gridSampleCount != 0 &&
        info.gridSampleCount != info.gridSamples.size()) {
      return invalid(std::string(kOwner) + "::gridSampleCount is " + std::to_string(info.gridSampleCount) +
                     " without a gridSampleBuffer: it must be 0 or gridSamples.size() (" +
                     std::to_string(info.gridSamples.size()) + ")");
    }
    batch.gridSampleCount = info.gridSampleBuffer.buffer != VK_NULL_HANDLE
                                ? info.gridSampleCount
                                : static_cast<uint32_t>(info.gridSamples.size());
    VKC_TRY(checkArray(info.gridSampleBuffer, info.gridSamples.data(), info.gridSamples.size(), batch.gridSampleCount,
                       kSampleBytes, kGridSamples, f, "gridSampleBuffer", "gridSamples", "maxGridSamples",
                       limits.maxGridSamples, batch.gridSamples));
    // The meshes' cells: the host's buffer (cellCount entries) or copied from `cells`.
    if (info.cellBuffer.buffer == VK_NULL_HANDLE && info.cellCount != 0 && info.cellCount != info.cells.size()) {
      return invalid(std::string(kOwner) + "::cellCount is " + std::to_string(info.cellCount) +
                     " without a cellBuffer: it must be 0 or cells.size() (" + std::to_string(info.cells.size()) + ")");
    }
    batch.cellCount = info.cellBuffer.buffer != VK_NULL_HANDLE ? info.cellCount
                                                               : static_cast<uint32_t>(info.cells.size());
    VKC_TRY(checkArray(info.cellBuffer, info.cells.data(), info.cells.size(), batch.cellCount, kCellEntryBytes, kCells,
                       f, "cellBuffer", "cells", "maxCells", limits.maxCells, batch.cells));
    // A mesh's vertices and cells are validated on the host (indices, degenerate cells): they come from
    // host memory (points, cells), not from the host's device buffers.
    for (size_t i = 0; i < info.geometries.size(); ++i) {
      if (!cpu::isMeshType(info.geometries[i].type)) continue;
      if (info.pointBuffer.buffer != VK_NULL_HANDLE || info.cellBuffer.buffer != VK_NULL_HANDLE) {
        return Error{ErrorCode::kUnsupported,
                     std::string(kOwner) + "::geometries[" + std::to_string(i) +
                         "] is a mesh: its vertices and cells must come from host memory (points, cells), "
                         "validated at record time; pointBuffer and cellBuffer are for batches without meshes"};
      }
    }
    // The values of host-memory arrays and everything about the geometries and queries, as validate();
    // device arrays by their counts only.
    GeometryQueryInput in;
    in.geometries = info.geometries;
    in.previousGeometries = info.previousGeometries;
    in.queries = info.queries;
    in.points = info.points;
    in.previousPoints = info.previousPoints;
    in.gridSamples = info.gridSamples;
    in.cells = info.cells;
    if (!inputValidated) {
      VKC_TRY(detail::validateGeometryQueryInput(in, {batch.pointCount, hasPrev ? batch.pointCount : 0,
                                                      batch.gridSampleCount}));
    }
    // A closed surface mesh too large for the device's vertex pass (after validation: a bad query is
    // named as bad first).
    VKC_TRY(cpu::refuseClosedMeshesPastTheDeviceLoop(in));
    // State: the host's buffer, needed by continuous queries (but those with a mesh: they keep none).
    const bool continuous =
        std::any_of(info.queries.begin(), info.queries.end(), [&](const GeometryQuery& q) {
          return q.method == GeometryMethod::kContinuous && !cpu::isMeshType(info.geometries[q.a].type) &&
                 !cpu::isMeshType(info.geometries[q.b].type);
        });
    if (info.stateBuffer.buffer != VK_NULL_HANDLE && info.stateCount > 0) {
      VKC_TRY(detail::checkBufferRange(ctx, info.stateBuffer, kOwner, "stateBuffer",
                                       VkDeviceSize{info.stateCount} * kPointBytes));
      batch.state = {info.stateBuffer.buffer, info.stateBuffer.offset, VkDeviceSize{info.stateCount} * kPointBytes};
      batch.stateCount = info.stateCount;
    } else if (continuous) {
      return invalid(std::string(kOwner) + "::stateBuffer is null (or stateCount 0): continuous queries need the "
                     "host's state buffer");
    }
    if (!inputValidated) VKC_TRY(detail::validateGeometryStateRanges(in, batch.stateCount, "stateBuffer"));
    if (!batch.device) takePrimitivePasses(batch);
    return batch.device || batch.primitive ? layOutOnDevice(batch) : layOut(batch);
  }

  // A batch from host memory (validated) of static primitive pairs only takes the primitive-pair
  // passes, as a device-resident batch with devicePrimitivePairs does: no slot layout to compute,
  // upload and search, one invocation per query; the same contacts, ranges and counts, bit for bit.
  // The families dispatched are those of its queries. A batch without queries keeps the slot passes.
  void takePrimitivePasses(Batch& batch) const {
    if (Q(batch) == 0) return;
    uint32_t families = 0;
    for (const GeometryQuery& q : batch.queries) {
      const uint32_t ta = static_cast<uint32_t>(batch.geometries[q.a].type);
      const uint32_t tb = static_cast<uint32_t>(batch.geometries[q.b].type);
      if (q.method != GeometryMethod::kStatic || std::max(ta, tb) > gpu::kGeomPlane) return;
      families |= 1u << gpu::geomQueryFamily(ta, tb, static_cast<uint32_t>(q.method));
    }
    if ((families & ~kGeometryQueryFamiliesPrimitive) != 0 || (families & primitiveUnavailable) != 0) return;
    batch.primitive = true;
    batch.families = families;
    batch.blocks = primitiveBlocks(Q(batch));
  }

  // --- Device-resident batches (shared/geometry_queries_device_layout.h) ---

  // What the host can check of a device-resident batch's sources: both buffers, their sizes against
  // the counts, the counts against the stage's maxima, the families.
  Status checkDeviceSources(const GeometryQueryRecordInfo& info, Batch& batch) const {
    const std::string owner(kOwner);
    if (info.geometryBuffer.buffer == VK_NULL_HANDLE || info.queryBuffer.buffer == VK_NULL_HANDLE) {
      return invalid(owner + "::" + (info.geometryBuffer.buffer == VK_NULL_HANDLE ? "geometryBuffer" : "queryBuffer") +
                     " is null: a device-resident batch takes both geometryBuffer and queryBuffer");
    }
    if (!info.geometries.empty() || !info.queries.empty() || !info.previousGeometries.empty()) {
      return invalid(owner + "::" +
                     (!info.geometries.empty() ? "geometries" : !info.queries.empty() ? "queries" : "previousGeometries") +
                     " is not empty: a device-resident batch (geometryBuffer, queryBuffer) reads its geometries, "
                     "previous poses and queries from buffers");
    }
    VKC_TRY(tooMany("geometryCount", info.geometryCount, "maxGeometries", limits.maxGeometries));
    VKC_TRY(tooMany("queryCount", info.queryCount, "maxQueries", limits.maxQueries));
    if (info.deviceFamilies == 0 || (info.deviceFamilies & ~kGeometryQueryFamiliesDevice) != 0) {
      return invalid(owner + "::deviceFamilies is " + std::to_string(info.deviceFamilies) +
                     ": must be a nonzero set of kGeometryQueryFamily* bits (within kGeometryQueryFamiliesDevice; "
                     "mesh pairs have no device-resident path)");
    }
    const VkDeviceSize geometryBytes = VkDeviceSize{info.geometryCount} * kGeomBytes;
    const VkDeviceSize queryBytes = VkDeviceSize{info.queryCount} * kQueryBytes;
    if (geometryBytes > 0) VKC_TRY(detail::checkBufferRange(ctx, info.geometryBuffer, kOwner, "geometryBuffer", geometryBytes));
    if (queryBytes > 0) VKC_TRY(detail::checkBufferRange(ctx, info.queryBuffer, kOwner, "queryBuffer", queryBytes));
    const bool moving = info.previousGeometryBuffer.buffer != VK_NULL_HANDLE;
    if (moving && geometryBytes > 0) {
      VKC_TRY(detail::checkBufferRange(ctx, info.previousGeometryBuffer, kOwner, "previousGeometryBuffer", geometryBytes));
    }
    batch.device = true;
    batch.geometryCount = info.geometryCount;
    batch.queryCount = info.queryCount;
    batch.moving = moving && geometryBytes > 0;
    batch.deviceGeometries = {info.geometryBuffer.buffer, info.geometryBuffer.offset, geometryBytes};
    batch.devicePrevGeometries = {info.previousGeometryBuffer.buffer, info.previousGeometryBuffer.offset, geometryBytes};
    batch.deviceQueries = {info.queryBuffer.buffer, info.queryBuffer.offset, queryBytes};
    batch.families = info.deviceFamilies;
    if (info.devicePrimitivePairs) {
      batch.primitive = true;
      batch.families &= kGeometryQueryFamiliesPrimitive;
      if (batch.families == 0) {
        return invalid(owner + "::deviceFamilies is " + std::to_string(info.deviceFamilies) +
                       ": with devicePrimitivePairs it must hold a primitive pair family (kGeometryQueryFamilyBasic, "
                       "kGeometryQueryFamilyManifold or kGeometryQueryFamilyConvex)");
      }
      batch.blocks = primitiveBlocks(batch.queryCount);
    }
    return {};
  }

  // The slots a device-resident batch may use: the stage's maxSlots, below the layout's saturation.
  uint32_t deviceMaxSlots() const { return std::min(maxSlotsOf(limits), gpu::kGeomDeviceSlotLimit - 1); }

  // A device-resident batch's dispatch shape: every family asked for is a span dispatch over the tiles
  // of its own queries' slots (shared/geometry_queries_spans.h); familyCount, at most every tile of
  // maxSlots, is the push constants' bound (the tiles buffer the identity, written by the BLOCKS pass).
  // A primitive-pair batch (device-resident or from host memory) has no slots.
  Status layOutOnDevice(Batch& batch) const {
    if (batch.primitive) {  // no slots: a query per invocation
      batch.slotCount = 0;
      for (uint32_t f = 0; f < gpu::kGeomFamilyCount; ++f) {
        batch.familyFirst[f] = 0;
        batch.familyCount[f] = 0;
      }
      return {};
    }
    // No query: no slot (slotRange holds nothing of this record for the family passes to read).
    batch.slotCount = Q(batch) > 0 ? deviceMaxSlots() : 0;
    // Without the host's state buffer the continuous family does not run (its queries are invalid).
    if (batch.stateCount == 0) batch.families &= ~kGeometryQueryFamilyContinuous;
    const uint32_t tiles = static_cast<uint32_t>(tilesOf(batch.slotCount));
    for (uint32_t f = 0; f < gpu::kGeomFamilyCount; ++f) {
      batch.familyFirst[f] = 0;
      batch.familyCount[f] = ((batch.families >> f) & 1u) != 0 ? tiles : 0;
    }
    return {};
  }

  // The host's buffers bound in place of the upload's copies.
  void overrideDeviceBindings(const Batch& b, std::span<BufferRange> r) const {
    const BufferRange dummy = buffers.range(kDummy);
    r[gpu::kGeomBindingGeometries] = b.geometryCount > 0 ? b.deviceGeometries : dummy;
    r[gpu::kGeomBindingPrevGeometries] = b.moving ? b.devicePrevGeometries : dummy;
    r[gpu::kGeomBindingQueries] = b.queryCount > 0 ? b.deviceQueries : dummy;
  }

  // LAYOUT, BLOCKS and PLACE before the COUNT level: the slot ranges from the queries on the device.
  void addLayoutPasses(const Batch& b, std::span<const BufferRange> ranges, uint32_t spanRecords,
                       detail::Recorder& rec) const {
    std::array<BufferRange, gpu::kGeomBindingCount> r{};
    std::copy_n(ranges.begin(), r.size(), r.begin());
    r[gpu::kGeomBindingGroupSums] = part(kLayoutScratch, b.frame, blocksOf(Q(b)) * 2 * sizeof(uint32_t));
    gpu::GeomLayoutPush push{};
    push.queryCount = Q(b);
    push.geometryCount = b.geometryCount;
    push.pointCount = b.pointCount;
    push.gridSampleCount = b.gridSampleCount;
    push.stateCount = b.stateCount;
    push.maxSlots = b.slotCount;
    push.tileCount = tileCount(b);
    push.blockCount = static_cast<uint32_t>((uint64_t{Q(b)} + kTile - 1) / kTile);
    push.families = b.families;
    push.moving = b.moving ? 1u : 0u;
    push.previousPoints = b.prevPoints.binding.buffer != VK_NULL_HANDLE ? 1u : 0u;
    push.spanRecords = spanRecords;
    for (uint32_t i = 0; i < 3; ++i) {
      detail::Pass p = detail::passFromDecl(gpu::kGeomLayoutPasses[i], layoutPipelines[i], r);
      p.setPush(push);
      p.groupCount = i == gpu::kGeomLayoutPassBlocks ? 1u : static_cast<uint32_t>(blocksOf(Q(b)));
      rec.add(std::move(p));
    }
  }

  // The slot layout of a checked batch, against the stage's maxima.
  Status layOut(Batch& batch) const {
    const detail::GeometrySlotLayout l = detail::geometrySlotLayout(batch.geometries, batch.queries, limits.maxCandidates);
    const uint32_t maxSlots = maxSlotsOf(limits);
    if (l.slotCount > maxSlots) {
      return Error{ErrorCode::kLimitExceeded, std::string(kOwner) + ": the queries need " +
                                                  std::to_string(l.slotCount) +
                                                  " slots (the pair families' tile gaps included); the stage was "
                                                  "created with maxSlots = " + std::to_string(maxSlots)};
    }
    batch.slotCount = static_cast<uint32_t>(l.slotCount);
    batch.slotRange.resize(l.slotRange.size());
    for (size_t q = 0; q < l.slotRange.size(); ++q) {
      batch.slotRange[q] = gpu::uvec2(static_cast<uint32_t>(l.slotRange[q].first), static_cast<uint32_t>(l.slotRange[q].end));
    }
    batch.tiles = l.tiles;
    for (uint32_t f = 0; f < gpu::kGeomFamilyCount; ++f) {
      batch.familyFirst[f] = static_cast<uint32_t>(l.familyFirst[f]);
      batch.familyCount[f] = static_cast<uint32_t>(l.familyCount[f]);
    }
    return layOutMeshPairs(batch);
  }

  // Whether a query of types ta, tb is a static point set against a (validated: closed) surface mesh.
  static bool closedMeshPointsQuery(uint32_t ta, uint32_t tb, GeometryMethod method) {
    return method == GeometryMethod::kStatic && std::min(ta, tb) == gpu::kGeomPointSet &&
           std::max(ta, tb) == gpu::kGeomSurfaceMesh;
  }

  // The mesh pairs table of a laid out batch (shared/geometry_queries_mesh_pairs.h): a pair per
  // mesh-mesh query with slots and per point set vs closed surface mesh query (no X cells: its
  // slots walk the tree), in query order; each of their meshes once in the tree.
  Status layOutMeshPairs(Batch& batch) const {
    batch.meshPairs.clear();
    std::vector<gpu::uvec4> meshes;
    std::vector<uint32_t> treeFirst(batch.geometries.size(), UINT32_MAX);
    uint64_t treeCells = 0, xCells = 0;
    auto inTree = [&](uint32_t g) {
      if (treeFirst[g] == UINT32_MAX) {
        const uint32_t n = static_cast<uint32_t>(batch.geometries[g].p2.y);
        treeFirst[g] = static_cast<uint32_t>(std::min<uint64_t>(treeCells, UINT32_MAX));
        meshes.push_back(gpu::uvec4(g, treeFirst[g], n, 0u));
        treeCells += n;
      }
      return treeFirst[g];
    };
    for (uint32_t q = 0; q < Q(batch); ++q) {
      const GeometryQuery& query = batch.queries[q];
      const uint32_t ta = static_cast<uint32_t>(batch.geometries[query.a].type);
      const uint32_t tb = static_cast<uint32_t>(batch.geometries[query.b].type);
      const uint32_t pairFamily = gpu::geomQueryFamily(ta, tb, static_cast<uint32_t>(query.method));
      if (batch.slotRange[q].y == batch.slotRange[q].x) continue;
      if (closedMeshPointsQuery(ta, tb, query.method)) {
        // A point set against a closed surface mesh (the mesh family's vertex pass walks the tree,
        // shared/geometry_queries_closed_mesh_slot.h): the mesh in the tree, a row without X cells.
        const uint32_t mesh = ta == gpu::kGeomSurfaceMesh ? query.a : query.b;
        const uint32_t set = mesh == query.a ? query.b : query.a;
        batch.meshPairs.push_back(gpu::uvec4(q, set, mesh, static_cast<uint32_t>(xCells)));
        batch.meshPairs.push_back(gpu::uvec4(0u, inTree(mesh), 0u, static_cast<uint32_t>(batch.geometries[mesh].p2.y)));
        continue;
      }
      if (pairFamily != gpu::kGeomFamilyMeshMesh && pairFamily != gpu::kGeomFamilyMeshCcd) continue;
      // The canonical order: the CPU drivers' (a continuous pair's X: the point set, or the line mesh
      // of the smaller geometry index, as the static pairs'), shared/geometry_queries_mesh_ccd_pairs.h.
      const bool aFirst = gpu::geomMeshMeshFirstIsA(ta, tb, query.a, query.b);
      const uint32_t x = aFirst ? query.a : query.b, y = aFirst ? query.b : query.a;
      // A point set's cells are its points, outside the tree.
      const bool xPoints = batch.geometries[x].type == GeometryType::kPointSet;
      const uint32_t xFirst = xPoints ? 0u : inTree(x), yFirst = inTree(y);
      const uint32_t nx = xPoints ? batch.geometries[x].count : static_cast<uint32_t>(batch.geometries[x].p2.y);
      if (pairFamily == gpu::kGeomFamilyMeshCcd) batch.sweptTree = true;
      const uint32_t ny = static_cast<uint32_t>(batch.geometries[y].p2.y);
      batch.meshPairs.push_back(gpu::uvec4(q, x, y, static_cast<uint32_t>(xCells)));
      batch.meshPairs.push_back(gpu::uvec4(xFirst, yFirst, nx, ny));
      xCells += nx;  // <= the query's slots: min(nx * ny, max(maxCandidates, nx)) with ny >= 1
    }
    batch.meshPairCount = static_cast<uint32_t>(batch.meshPairs.size() / gpu::kGeomMeshPairRows);
    batch.meshCount = static_cast<uint32_t>(meshes.size());
    batch.meshPairs.insert(batch.meshPairs.end(), meshes.begin(), meshes.end());
    if (treeCells > treeCellsOf(limits)) {
      return Error{ErrorCode::kLimitExceeded, std::string(kOwner) + ": the meshes of the mesh-mesh queries and closed meshes' vertex passes hold " +
                                                  std::to_string(treeCells) + " cells; the stage was created with "
                                                  "maxMeshPairCells = " + std::to_string(treeCellsOf(limits))};
    }
    batch.treeCellCount = static_cast<uint32_t>(treeCells);
    batch.xCellCount = static_cast<uint32_t>(xCells);
    return {};
  }

  // The record's outputs: the host's buffers, or the stage's own of the frame.
  Status checkTargets(const GeometryQueryOutputBuffers& o, const Batch& b, Targets& t) const {
    const bool hostA = o.elementsA.buffer != VK_NULL_HANDLE, hostB = o.elementsB.buffer != VK_NULL_HANDLE;
    if (hostA != hostB) {
      return invalid(std::string(kOwner) + "::outputs: elementsA and elementsB must both be given or both be null");
    }
    if (hostA) {
      const VkDeviceSize capacity = std::min(o.elementsA.size, o.elementsB.size) / kElementBytes;
      if (capacity > UINT32_MAX) return invalid(std::string(kOwner) + "::outputs.elementsA holds more than 2^32 elements");
      t.capacity = static_cast<uint32_t>(capacity);
      if (t.capacity > 0) {
        VKC_TRY(detail::checkBufferRange(ctx, o.elementsA, kOwner, "outputs.elementsA", capacity * kElementBytes));
        VKC_TRY(detail::checkBufferRange(ctx, o.elementsB, kOwner, "outputs.elementsB", capacity * kElementBytes));
      }
      t.elementsA = {o.elementsA.buffer, o.elementsA.offset, capacity * kElementBytes};
      t.elementsB = {o.elementsB.buffer, o.elementsB.offset, capacity * kElementBytes};
    } else {
      t.capacity = limits.maxContacts;
      t.elementsA = part(kElementsA, b.frame, VkDeviceSize{t.capacity} * kElementBytes);
      t.elementsB = part(kElementsB, b.frame, VkDeviceSize{t.capacity} * kElementBytes);
    }
    const VkDeviceSize rangeBytes = VkDeviceSize{Q(b)} * kRangeBytes;
    if (o.ranges.buffer != VK_NULL_HANDLE) {
      if (rangeBytes > 0) VKC_TRY(detail::checkBufferRange(ctx, o.ranges, kOwner, "outputs.ranges", rangeBytes));
      t.ranges = {o.ranges.buffer, o.ranges.offset, rangeBytes};
    } else {
      t.ranges = part(kRanges, b.frame, rangeBytes);
    }
    if (o.counts.buffer != VK_NULL_HANDLE) {
      VKC_TRY(detail::checkBufferRange(ctx, o.counts, kOwner, "outputs.counts", sizeof(gpu::GeomCounts)));
      t.counts = {o.counts.buffer, o.counts.offset, sizeof(gpu::GeomCounts)};
    } else {
      t.counts = buffers.range(kCounts, b.frame);
    }
    return {};
  }

  // Validated record: the batch into the upload buffer, its copies, then the passes. `stateUpload`:
  // run()'s state entries copied into the stage's state buffer.
  Status recordValidated(VkCommandBuffer cmd, const Batch& b, const Targets& t, RecordSync sync, VkQueryPool pool,
                         std::span<const Float4> stateUpload = {}) {
    VKC_TRY(fetchPipelines(b));
    detail::Recorder rec = makeRecorder(b, t);
    // The passes are checked before anything is recorded: a refused record leaves the buffer as it was.
    for (const detail::Pass& p : rec.passes()) VKC_TRY(detail::checkPass(p));
    lastStats = {};
    const uint32_t f = b.frame;
    char* up = static_cast<char*>(buffers.get(kUpload, f).mapped());
    struct Section {
      const void* data;
      VkDeviceSize bytes, at;
      uint32_t dst;
    };
    const Section sections[] = {
        {b.geometries.data(), b.geometries.size() * kGeomBytes, layout.geometries, kGeometries},
        {b.previousGeometries.data(), b.previousGeometries.size() * kGeomBytes, layout.prevGeometries, kPrevGeometries},
        {b.queries.data(), b.queries.size() * kQueryBytes, layout.queries, kQueries},  // empty: device-resident
        {b.slotRange.data(), b.slotRange.size() * kRangeBytes, layout.slotRange, kSlotRange},
        {b.tiles.data(), b.tiles.size() * sizeof(uint32_t), layout.tiles, kTiles},
        {b.points.copy, b.points.copy != nullptr ? b.points.bytes : 0, layout.points, kPoints},
        {b.prevPoints.copy, b.prevPoints.copy != nullptr ? b.prevPoints.bytes : 0, layout.prevPoints, kPrevPoints},
        {b.gridSamples.copy, b.gridSamples.copy != nullptr ? b.gridSamples.bytes : 0, layout.gridSamples, kGridSamples},
        {b.cells.copy, b.cells.copy != nullptr ? b.cells.bytes : 0, layout.cells, kCells},
        {stateUpload.data(), stateUpload.size() * kPointBytes, layout.state, kState},
        {b.meshPairs.data(), b.meshPairs.size() * kRowBytes, layout.meshPairs, kMeshPairs},
    };
    // One barrier before the copies and the fill: the host's writes (sync's sources) and earlier passes'
    // reads of the stage's buffers before they are rewritten.
    detail::globalBarrier(ctx, cmd, sync.srcStage | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, sync.srcAccess,
                          VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_CLEAR_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
    lastStats.barriers += 1;
    for (const Section& s : sections) {
      if (s.bytes == 0) continue;
      std::memcpy(up + s.at, s.data, s.bytes);
      const VkBufferCopy region{s.at, 0, s.bytes};
      ctx.vk.vkCmdCopyBuffer(cmd, buffers.get(kUpload, f).handle(), buffers.get(s.dst, f).handle(), 1, &region);
      lastStats.transfers += 1;
      lastStats.transferBytes += s.bytes;
    }
    // The tiles' hit masks start at zero (the COUNT passes set bits); a primitive-pair batch's block
    // sums (its QUERY COUNT passes add to them).
    const BufferRange masks = b.primitive ? part(kGroupSums, f, groupSumBytes(b)) : part(kTileMasks, f, tileMaskBytes(b));
    ctx.vk.vkCmdFillBuffer(cmd, masks.buffer, masks.offset, masks.size, 0);
    lastStats.transfers += 1;
    lastStats.transferBytes += masks.size;
    sync.srcStage |= VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_CLEAR_BIT;
    sync.srcAccess |= VK_ACCESS_2_TRANSFER_WRITE_BIT;
    const Status st = rec.record(cmd, sync, pool, &lastStats);
    last.emplace(std::move(rec));
    return st;
  }
};

GeometryQueryStage::GeometryQueryStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GeometryQueryStage::~GeometryQueryStage() = default;
const std::vector<PassTiming>& GeometryQueryStage::timings() const { return impl_->timings; }
const RecordStats& GeometryQueryStage::lastRecordStats() const { return impl_->lastStats; }

BufferRange GeometryQueryStage::elementsABuffer(uint32_t frame) const {
  return impl_->buffers.range(Impl::kElementsA, std::min(frame, impl_->limits.framesInFlight - 1));
}
BufferRange GeometryQueryStage::elementsBBuffer(uint32_t frame) const {
  return impl_->buffers.range(Impl::kElementsB, std::min(frame, impl_->limits.framesInFlight - 1));
}
BufferRange GeometryQueryStage::rangesBuffer(uint32_t frame) const {
  return impl_->buffers.range(Impl::kRanges, std::min(frame, impl_->limits.framesInFlight - 1));
}
BufferRange GeometryQueryStage::countsBuffer(uint32_t frame) const {
  return impl_->buffers.range(Impl::kCounts, std::min(frame, impl_->limits.framesInFlight - 1));
}

Result<MemoryRequirements> GeometryQueryStage::memoryRequirements(const Context& context,
                                                                  const GeometryQueryStageCreateInfo& info) {
  VKC_TRY(checkCreateInfo(detail::Internals::of(context), info));
  MemoryRequirements need = detail::requirementsOf(Impl::plan(info), info.framesInFlight);
  if (treeCellsOf(info) > 0) {
    auto b = BvhStage::memoryRequirements(context, treeInfo(info));
    if (!b) return b.error();
    detail::addRequirements(need, *b);
  }
  return need;
}

Result<std::unique_ptr<GeometryQueryStage>> GeometryQueryStage::create(Context& context,
                                                                       const GeometryQueryStageCreateInfo& info) {
  detail::ContextImpl& ctx = detail::Internals::of(context);
  VKC_TRY(checkCreateInfo(ctx, info));
  auto impl = std::make_unique<Impl>(ctx);
  impl->limits = info;
  impl->layout = uploadLayout(info);
  VKC_TRY(detail::getPassPipelines(ctx, gpu::kGeomStage.shader, gpu::kGeomBindingCount, sizeof(gpu::GeomStagePush),
                                    impl->scanPipeline));
  VKC_TRY(detail::getPassPipelines(ctx, gpu::kGeomRangesStage.shader, gpu::kGeomBindingCount,
                                    sizeof(gpu::GeomStagePush), impl->rangesPipeline));
  VKC_TRY(impl->buffers.create(ctx, Impl::plan(info), info.framesInFlight));
  if (treeCellsOf(info) > 0) {
    auto b = BvhStage::create(context, treeInfo(info));
    if (!b) return b.error();
    impl->tree = std::move(b.value());
  }
  // Timestamps: at most a COUNT and a WRITE per family, SCAN and RANGES, the candidates' six passes
  // and the tree's build.
  VKC_TRY(impl->queries.create(2 * (2 * gpu::kGeomFamilyCount + 2 + 4 + 32)));
  return std::unique_ptr<GeometryQueryStage>(new GeometryQueryStage(std::move(impl)));
}

Status GeometryQueryStage::createPipelines(uint32_t families) {
  if ((families & ~kGeometryQueryFamiliesAll) != 0) {
    return Error{ErrorCode::kInvalidArgument, "GeometryQueryStage::createPipelines: families has bits outside "
                                              "kGeometryQueryFamiliesAll (" + std::to_string(families) + ")"};
  }
  return impl_->createPipelines(families);
}

Status GeometryQueryStage::recordUpload(VkCommandBuffer commandBuffer) {
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "GeometryQueryStage", "recordUpload"));
  if (impl_->tree) VKC_TRY(impl_->tree->recordUpload(commandBuffer));
  return {};
}

void detail::markGeometryQueryPrimitiveUnavailable(GeometryQueryStage& stage, uint32_t families) {
  detail::Internals::of(stage).primitiveUnavailable |= families;
}

Status GeometryQueryStage::record(VkCommandBuffer commandBuffer, const GeometryQueryRecordInfo& info) {
  Impl& s = *impl_;
  s.lastStats = {};
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "GeometryQueryStage"));
  Impl::Batch batch;
  VKC_TRY(s.checkBatchAndPipelines(info, batch));
  Impl::Targets targets;
  VKC_TRY(s.checkTargets(info.outputs, batch, targets));
  s.recordTimestamps = info.timestamps;
  return s.recordValidated(commandBuffer, batch, targets, info.sync, info.timestamps ? VkQueryPool{s.queries} : VK_NULL_HANDLE);
}

Status GeometryQueryStage::readRecordTimings() {
  Impl& s = *impl_;
  if (!s.recordTimestamps || !s.last) {
    return Error{ErrorCode::kInvalidArgument,
                 "GeometryQueryStage::readRecordTimings: the last record() had no timestamps (GeometryQueryRecordInfo::timestamps)"};
  }
  return detail::storeTimings(*s.last, s.queries, s.timings);
}

namespace {

// validate(input) and validateOutput(input, output) as queryGeometriesCpu makes them (the output's
// sizes only where every query is a static pair of primitives: no state read or written).
Status validateRun(const GeometryQueryInput& input, const GeometryQueryOutput& output) {
  detail::GeometryScan scan;
  return detail::validateGeometryQueriesAndOutput(input, output, &scan);
}

// run() after validate(input) and validateOutput(input, output) passed.
Result<GeometryQueryCounts> runValidated(GeometryQueryStage::Impl& s, const GeometryQueryInput& input,
                                         const GeometryQueryOutput& output) {
  using Impl = GeometryQueryStage::Impl;
  if (output.elementsA.size() > s.limits.maxContacts) {
    return Error{ErrorCode::kLimitExceeded, "GeometryQueryStage::run: output.elementsA holds " +
                                                std::to_string(output.elementsA.size()) +
                                                " elements; the stage was created with maxContacts = " +
                                                std::to_string(s.limits.maxContacts)};
  }
  const bool continuous = std::any_of(input.queries.begin(), input.queries.end(),
                                      [](const GeometryQuery& q) { return q.method == GeometryMethod::kContinuous; });
  const std::span<const Float4> state = continuous ? std::span<const Float4>(output.state) : std::span<const Float4>();
  if (state.size() > s.limits.maxStates) {
    return Error{ErrorCode::kLimitExceeded, "GeometryQueryStage::run: output.state holds " + std::to_string(state.size()) +
                                                " entries; the stage was created with maxStates = " +
                                                std::to_string(s.limits.maxStates)};
  }
  GeometryQueryRecordInfo info;
  info.geometries = input.geometries;
  info.previousGeometries = input.previousGeometries;
  info.queries = input.queries;
  info.points = input.points;
  info.previousPoints = input.previousPoints;
  info.gridSamples = input.gridSamples;
  info.cells = input.cells;
  if (!state.empty()) {
    info.stateBuffer = s.part(Impl::kState, 0, state.size() * kPointBytes);
    info.stateCount = static_cast<uint32_t>(state.size());
  }
  Impl::Batch batch;
  VKC_TRY(s.checkBatchAndPipelines(info, batch, /*inputValidated=*/true));
  // The stage's own outputs, with the host's capacity (the overflow is the host array's).
  Impl::Targets targets;
  targets.capacity = static_cast<uint32_t>(output.elementsA.size());
  const VkDeviceSize elementBytes = VkDeviceSize{targets.capacity} * kElementBytes;
  const VkDeviceSize rangeBytes = input.queries.size() * kRangeBytes;
  const VkDeviceSize stateBytes = state.size() * kPointBytes;
  targets.elementsA = s.part(Impl::kElementsA, 0, elementBytes);
  targets.elementsB = s.part(Impl::kElementsB, 0, elementBytes);
  targets.ranges = s.part(Impl::kRanges, 0, rangeBytes);
  targets.counts = s.buffers.range(Impl::kCounts, 0);

  // Read back: counts, ranges, elementsA, elementsB, state.
  const VkDeviceSize atRanges = sizeof(gpu::GeomCounts), atA = align16(atRanges + rangeBytes), atB = atA + elementBytes,
                     atState = atB + elementBytes;
  VKC_TRY(s.ctx.allocator->ensureBuffer(s.readback, atState + stateBytes, MemoryUsage::kReadback));
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    VKC_TRY(s.recordValidated(cmd, batch, targets, detail::copyInCopyOutSync(), s.queries, state));
    auto copy = [&](uint32_t id, VkDeviceSize at, VkDeviceSize n) {
      if (n == 0) return;
      const VkBufferCopy region{0, at, n};
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.buffers.get(id, 0).handle(), s.readback.handle(), 1, &region);
    };
    copy(Impl::kCounts, 0, sizeof(gpu::GeomCounts));
    copy(Impl::kRanges, atRanges, rangeBytes);
    copy(Impl::kElementsA, atA, elementBytes);
    copy(Impl::kElementsB, atB, elementBytes);
    copy(Impl::kState, atState, stateBytes);
    return {};
  }));
  VKC_TRY(detail::storeTimings(*s.last, s.queries, s.timings));
  const char* back = static_cast<const char*>(s.readback.mapped());
  gpu::GeomCounts c;
  std::memcpy(&c, back, sizeof c);
  if (rangeBytes > 0) std::memcpy(output.ranges.data(), back + atRanges, rangeBytes);
  const VkDeviceSize written = VkDeviceSize{std::min(c.written, targets.capacity)} * kElementBytes;
  if (written > 0) {
    std::memcpy(output.elementsA.data(), back + atA, written);
    std::memcpy(output.elementsB.data(), back + atB, written);
  }
  if (stateBytes > 0) std::memcpy(output.state.data(), back + atState, stateBytes);
  GeometryQueryCounts counts;
  counts.contacts = c.contacts;
  counts.written = c.written;
  counts.overflow = c.overflow != 0;
  counts.candidatesMissing = c.candidatesMissing;
  return counts;
}

}  // namespace

Result<GeometryQueryCounts> GeometryQueryStage::run(const GeometryQueryInput& input, const GeometryQueryOutput& output) {
  impl_->lastStats = {};
  impl_->recordTimestamps = false;
  VKC_TRY(validateRun(input, output));
  return runValidated(*impl_, input, output);
}

Result<GeometryQueryCounts> queryGeometries(Backend backend, Context* context, const GeometryQueryInput& input,
                                            const GeometryQueryOutput& output) {
  if (backend != Backend::kVulkan) return queryGeometriesCpu(input, output, backend);
  VKC_TRY(validateRun(input, output));
  VKC_TRY(cpu::refuseClosedMeshesPastTheDeviceLoop(input));
  if (context == nullptr) return invalid("queryGeometries: the Vulkan backend needs a context");
  // The mesh-mesh queries' candidate pairs: a first guess of one per cell of the largest pair's
  // meshes (a slot costs a work item whether it holds a candidate or not: on lavapipe about as much
  // as an evaluated pair); when some did not fit, a second run with room for them
  // (candidatesMissing: the sum of every query's shortfall, so each query's slots grow by at least
  // its own).
  uint64_t meshCells = 0, largestPair = 0;
  for (const Geometry& g : input.geometries) {
    if (gpu::geomIsMesh(static_cast<uint32_t>(g.type))) meshCells += static_cast<uint64_t>(g.p2.y);
  }
  // A continuous mesh query's point set counts its points (its cells in the candidate passes), as a
  // static one's against a tetrahedral mesh.
  const auto cellsOf = [&](const Geometry& g) -> uint64_t {
    return g.type == GeometryType::kPointSet ? g.count : static_cast<uint64_t>(g.p2.y);
  };
  for (const GeometryQuery& q : input.queries) {
    const Geometry &a = input.geometries[q.a], &b = input.geometries[q.b];
    const bool ccd = q.method == GeometryMethod::kContinuous &&
                     cpu::meshCcdPairSupported(std::min(static_cast<uint32_t>(a.type), static_cast<uint32_t>(b.type)),
                                               std::max(static_cast<uint32_t>(a.type), static_cast<uint32_t>(b.type)));
    const bool pointsTetra = q.method == GeometryMethod::kStatic &&
                             std::min(a.type, b.type) == GeometryType::kPointSet &&
                             std::max(a.type, b.type) == GeometryType::kTetrahedralMesh;
    if (!ccd && !pointsTetra &&
        (!gpu::geomIsMesh(static_cast<uint32_t>(a.type)) || !gpu::geomIsMesh(static_cast<uint32_t>(b.type)))) {
      continue;
    }
    largestPair = std::max(largestPair, cellsOf(a) + cellsOf(b));
  }
  uint64_t candidates = std::max<uint64_t>(largestPair, 1024);
  for (int attempt = 0;; ++attempt) {
    const uint64_t slots = detail::geometrySlotLayout(input.geometries, input.queries, candidates).slotCount;
    GeometryQueryStageCreateInfo info;
    auto set = [](uint32_t& field, const char* what, uint64_t n) -> Status {
      if (n > UINT32_MAX) {
        return Error{ErrorCode::kLimitExceeded, std::string("queryGeometries: ") + what + " is " + std::to_string(n) +
                                                    ": more than 2^32 - 1"};
      }
      field = static_cast<uint32_t>(n);
      return {};
    };
    VKC_TRY(set(info.maxQueries, "the query count", input.queries.size()));
    VKC_TRY(set(info.maxGeometries, "the geometry count", input.geometries.size()));
    VKC_TRY(set(info.maxPoints, "the point count", input.points.size()));
    VKC_TRY(set(info.maxGridSamples, "the grid sample count", input.gridSamples.size()));
    VKC_TRY(set(info.maxCells, "the cell entry count", input.cells.size()));
    VKC_TRY(set(info.maxStates, "the state entry count", output.state.size()));
    VKC_TRY(set(info.maxContacts, "the output's capacity", output.elementsA.size()));
    VKC_TRY(set(info.maxSlots, "the slot count", std::max<uint64_t>(slots, 1)));
    VKC_TRY(set(info.maxMeshPairCells, "the mesh cell count", meshCells));
    VKC_TRY(set(info.maxCandidates, "the candidate count", candidates));
    auto stage = GeometryQueryStage::create(*context, info);
    if (!stage) return stage.error();
    auto counts = runValidated(detail::Internals::of(**stage), input, output);  // validated above
    if (!counts || counts->candidatesMissing == 0 || attempt == 1) return counts;
    candidates += counts->candidatesMissing;
  }
}

}  // namespace vkc
