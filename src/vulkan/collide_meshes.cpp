// Mesh collision on Vulkan: the meshes' vertex (and, for a build, index) ranges copied from the host's
// buffers into the stage's combined raw buffers (transfers), this record's materials and rigid
// sweeps written with vkCmdUpdateBuffer, then the gather pass of shaders/collide_meshes.comp (world
// vertices), the embedded BVH stage's build or refit, and the collide pass, in one Recorder so that
// every barrier between them comes from their declared buffer uses.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>

#include "buffer_check.h"
#include "bvh_stage.h"
#include "collide_meshes_stage.h"
#include "context_impl.h"
#include "recorder.h"
#include "scene/mesh_layout.h"
#include "scene/validate.h"
#include "shared/collide_meshes_passes.h"
#include "stage_common.h"
#include "util/try.h"
#include "vkcollide/collide_meshes.h"

namespace vkc {

using detail::Access;
using detail::Buffer;
using detail::MemoryUsage;

namespace {

constexpr const char* kOwner = "MeshCollisionRecordInfo";

Error invalid(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message}; }

VkDeviceSize roundUp(VkDeviceSize x, VkDeviceSize a) { return (x + a - 1) / a * a; }

// The collide pass's tiles: every cloth that lists a mesh, split into runs of kMeshGroupSize particles.
std::vector<gpu::MeshClothGpu> makeTiles(const detail::MeshTables& t) {
  std::vector<gpu::MeshClothGpu> tiles;
  for (const gpu::MeshClothGpu& c : t.cloths) {
    if (c.meshCount == 0) continue;
    for (uint32_t off = 0; off < c.count; off += gpu::kMeshGroupSize) {
      tiles.push_back({c.first + off, std::min(gpu::kMeshGroupSize, c.count - off), c.firstWord, c.meshCount});
    }
  }
  return tiles;
}

// A range the stage copies from (a transfer source: no storage alignment needed).
Status checkSource(const BufferRange& r, const std::string& name, VkDeviceSize needed) {
  if (r.buffer == VK_NULL_HANDLE) return invalid(std::string(kOwner) + "::" + name + ".buffer is null");
  if (r.size < needed) {
    return Error{ErrorCode::kBufferTooSmall, std::string(kOwner) + "::" + name + " holds " + std::to_string(r.size) +
                                                 " bytes; the mesh needs " + std::to_string(needed) + " bytes"};
  }
  return {};
}

}  // namespace

struct MeshCollisionStage::Impl {
  // The stage's buffers (StageBuffers ids). The static tables (tiles, cloth bit sets, triangle ->
  // mesh) are shared; everything a record copies, updates or a pass writes is per frame in flight.
  enum : uint32_t {
    kTiles,
    kClothWords,
    kTriangleMesh,
    kStaging,
    kMeshes,
    kSweeps,
    kRaw,
    kLocal,
    kWorldStart,
    kWorldEnd,
    kIndices,
    kState,
    kInfo,
    kDummy,
    kBufferCount
  };

  detail::ContextImpl& ctx;
  std::vector<MeshLayout> layouts;
  std::vector<ClothRange> cloths;
  std::vector<std::vector<uint32_t>> clothMeshes;
  uint32_t particleCount = 0;
  uint32_t frames = 1;
  detail::MeshTables tables;
  std::vector<gpu::MeshClothGpu> tiles;
  bool anyDeforming = false;
  const detail::Pipeline* pipelines[2] = {};
  std::unique_ptr<BvhStage> bvh;  // null without triangles
  detail::StageBuffers buffers;
  mutable detail::TableUpload upload;
  std::array<bool, kMaxFramesInFlight> built{};  // the frame's tree was built by a record
  // Convenience path.
  detail::RunParticles staged;
  Buffer meshUpload;
  detail::TimestampPool queries{ctx};
  std::vector<PassTiming> timings;
  RecordStats lastStats;
  std::optional<detail::Recorder> last;

  explicit Impl(detail::ContextImpl& c) : ctx(c) {}

  uint32_t V() const { return tables.vertexCount; }
  uint32_t T() const { return tables.triangleCount; }

  static std::array<detail::BufferSpec, kBufferCount> plan(const detail::MeshTables& t,
                                                           std::span<const gpu::MeshClothGpu> tiles,
                                                           uint32_t particleCount, bool anyDeforming) {
    constexpr MemoryUsage kDevice = MemoryUsage::kDeviceLocal;
    const VkDeviceSize v4 = VkDeviceSize{t.vertexCount} * sizeof(gpu::vec4);
    std::array<detail::BufferSpec, kBufferCount> p{};
    p[kTiles] = {tiles.size() * sizeof(gpu::MeshClothGpu)};
    p[kClothWords] = {t.clothMeshWords.size() * sizeof(uint32_t)};
    p[kTriangleMesh] = {t.triangleMesh.size() * sizeof(uint32_t)};
    p[kStaging] = {detail::TableUpload::stagingBytes(staticTables(t, tiles)), MemoryUsage::kUpload};
    p[kMeshes] = {t.meshes.size() * sizeof(gpu::MeshGpu), kDevice, true};
    p[kSweeps] = {std::max<size_t>(t.rigidMeshes.size(), 1) * sizeof(gpu::RigidSweep), kDevice, true};
    p[kRaw] = {(anyDeforming ? 2 : 1) * v4, kDevice, true};
    p[kLocal] = {v4, kDevice, true};
    p[kWorldStart] = {v4, kDevice, true};
    p[kWorldEnd] = {v4, kDevice, true};
    p[kIndices] = {3ull * t.triangleCount * sizeof(uint32_t), kDevice, true};
    p[kState] = {4 * sizeof(uint32_t), kDevice, true};
    p[kInfo] = {VkDeviceSize{particleCount} * sizeof(gpu::uvec2), kDevice, true};
    p[kDummy] = {sizeof(gpu::vec4)};
    return p;
  }

  static std::array<detail::TableCopy, 3> staticTables(const detail::MeshTables& t, std::span<const gpu::MeshClothGpu> tiles) {
    return {{{tiles.data(), tiles.size() * sizeof(gpu::MeshClothGpu), kTiles},
             {t.clothMeshWords.data(), t.clothMeshWords.size() * sizeof(uint32_t), kClothWords},
             {t.triangleMesh.data(), t.triangleMesh.size() * sizeof(uint32_t), kTriangleMesh}}};
  }

  BufferRange whole(uint32_t id, uint32_t frame = 0) const { return buffers.range(id, frame); }

  // What one record does, decided from its tree request and the layout.
  struct Plan {
    bool build = false;
    bool refit = false;
    bool gather = false;
    bool swept = false;
    bool copyStatic = false;  // static meshes' vertices are copied too (a build or a requested refit)
  };

  Plan planOf(MeshTreeUpdate tree, bool continuous, uint32_t frame) const {
    Plan p;
    if (T() == 0) return p;
    p.build = tree == MeshTreeUpdate::kBuild || (tree == MeshTreeUpdate::kAuto && !built[frame]);
    p.refit = !p.build && (tables.anyMoving || tree == MeshTreeUpdate::kRefit);
    p.gather = p.build || p.refit;
    p.swept = continuous && tables.anyMoving;
    p.copyStatic = p.build || tree == MeshTreeUpdate::kRefit;
    return p;
  }

  // The passes of one record over validated particle ranges, using frame `frame`'s buffers.
  detail::Recorder makeRecorder(BufferRange parts, BufferRange prev, const gpu::MeshStagePush& push, const Plan& plan,
                                uint32_t frame) const {
    if (particleCount == 0) parts = prev = whole(kDummy);
    detail::Recorder rec(ctx);
    rec.addUpload(upload);
    const uint32_t f = frame;
    const BufferRange dummy = whole(kDummy);
    const BufferRange nodes = bvh ? bvh->nodesBuffer(f) : dummy;
    const BufferRange boxes = bvh ? bvh->primitiveBoxesBuffer(f) : dummy;
    const BufferRange ranges[gpu::kMeshBindingCount] = {parts,
                                                        prev,
                                                        whole(kTiles),
                                                        whole(kClothWords),
                                                        whole(kMeshes, f),
                                                        whole(kSweeps, f),
                                                        whole(kRaw, f),
                                                        whole(kLocal, f),
                                                        whole(kWorldStart, f),
                                                        whole(kWorldEnd, f),
                                                        whole(kIndices, f),
                                                        whole(kTriangleMesh),
                                                        nodes,
                                                        boxes,
                                                        whole(kState, f),
                                                        whole(kInfo, f)};
    auto pass = [&](uint32_t kind, uint32_t groups) {
      detail::Pass p = detail::passFromDecl(gpu::kMeshPasses[kind], pipelines[kind], ranges);
      p.setPush(push);
      p.groupCount = groups;
      return p;
    };
    const uint32_t G = gpu::kMeshGroupSize;
    if (plan.gather) {
      const uint32_t items = std::max(V(), plan.build ? 3 * T() : 0u);
      detail::Pass gather = pass(gpu::kMeshPassGather, (items + G - 1) / G);
      if (!plan.build) gather.narrow(gpu::kMeshBindingIndices, Access::kNone);
      rec.add(std::move(gather));
    }
    if (plan.build || plan.refit) {
      BvhRecordInfo b;
      b.update = plan.build ? BvhUpdate::kBuild : BvhUpdate::kRefit;
      b.primitiveCount = T();
      b.vertexCount = V();
      b.vertices = whole(kWorldEnd, f);
      if (plan.swept) b.prevVertices = whole(kWorldStart, f);
      b.indices = whole(kIndices, f);
      b.frame = f;
      detail::appendBvhPasses(*bvh, rec, b);
    }
    if (!tiles.empty() && particleCount > 0 && T() > 0) {
      rec.add(pass(gpu::kMeshPassCollide, static_cast<uint32_t>(tiles.size())));
    }
    return rec;
  }

  // Checks a record's values (not its buffers' contents): settings, one MeshRecord per mesh with
  // valid surfaces and transforms, the mesh ranges the record copies, the tree request.
  Status checkRecord(const MeshCollisionRecordInfo& info) const {
    VKC_TRY(detail::checkFrame(info.frame, frames, kOwner));
    VKC_TRY(detail::validateMeshSettings(info.settings));
    if (info.meshes.size() != layouts.size()) {
      return invalid(std::string(kOwner) + "::meshes holds " + std::to_string(info.meshes.size()) +
                     " records; the stage has " + std::to_string(layouts.size()) + " meshes (one each)");
    }
    if (static_cast<uint32_t>(info.tree) > static_cast<uint32_t>(MeshTreeUpdate::kRefit)) {
      return invalid(std::string(kOwner) + "::tree is " + std::to_string(static_cast<uint32_t>(info.tree)) +
                     ": not a MeshTreeUpdate");
    }
    if (info.tree == MeshTreeUpdate::kRefit && T() > 0 && !built[info.frame]) {
      return invalid(std::string(kOwner) + "::tree is kRefit, but frame " + std::to_string(info.frame) +
                     "'s tree was never built (record kBuild or kAuto first)");
    }
    const Plan plan = planOf(info.tree, info.settings.continuous, info.frame);
    for (size_t m = 0; m < layouts.size(); ++m) {
      const MeshLayout& l = layouts[m];
      const MeshRecord& r = info.meshes[m];
      const std::string name = "meshes[" + std::to_string(m) + "]";
      VKC_TRY(detail::validateMeshMotionValues(std::string(kOwner) + "::" + name, l.motion, r.transform,
                                               r.prevTransform, r.surface));
      const VkDeviceSize vertexBytes = VkDeviceSize{l.vertexCount} * l.vertexStride;
      VKC_TRY(checkSource(r.vertices, name + ".vertices", vertexBytes));
      if (l.motion == MeshMotion::kDeforming) VKC_TRY(checkSource(r.prevVertices, name + ".prevVertices", vertexBytes));
      if (plan.build) VKC_TRY(checkSource(r.indices, name + ".indices", 3ull * l.triangleCount * sizeof(uint32_t)));
    }
    return {};
  }

  // The copies of one record into frame `frame`'s raw vertices and indices.
  struct Copy {
    VkBuffer src, dst;
    VkBufferCopy region;
  };
  std::vector<Copy> copiesOf(std::span<const MeshRecord> meshes, const Plan& plan, uint32_t frame) const {
    std::vector<Copy> out;
    if (!plan.gather) return out;
    const VkBuffer raw = buffers.get(kRaw, frame).handle(), idx = buffers.get(kIndices, frame).handle();
    for (size_t m = 0; m < layouts.size(); ++m) {
      const MeshLayout& l = layouts[m];
      const gpu::MeshGpu& g = tables.meshes[m];
      const MeshRecord& r = meshes[m];
      const VkDeviceSize bytes = VkDeviceSize{l.vertexCount} * l.vertexStride;
      const VkDeviceSize at = VkDeviceSize{g.firstVertex} * sizeof(gpu::vec4);
      if (l.motion != MeshMotion::kStatic || plan.copyStatic) out.push_back({r.vertices.buffer, raw, {r.vertices.offset, at, bytes}});
      if (l.motion == MeshMotion::kDeforming) {
        const VkDeviceSize prevAt = at + VkDeviceSize{V()} * sizeof(gpu::vec4);
        out.push_back({r.prevVertices.buffer, raw, {r.prevVertices.offset, prevAt, bytes}});
      }
      if (plan.build) {
        out.push_back({r.indices.buffer, idx,
                       {r.indices.offset, VkDeviceSize{g.firstTriangle} * 3 * sizeof(uint32_t),
                        VkDeviceSize{g.triangleCount} * 3 * sizeof(uint32_t)}});
      }
    }
    return out;
  }

  // Validated record: the transfers (copies, the state reset, this record's tables), then every pass.
  Status recordValidated(VkCommandBuffer cmd, BufferRange parts, BufferRange prev, const MeshCollisionRecordInfo& info,
                         VkQueryPool timestampPool) {
    const uint32_t f = info.frame;
    const Plan plan = planOf(info.tree, info.settings.continuous, f);
    // This record's values: materials and flags, the rigid sweeps.
    detail::MeshTables values = tables;
    std::vector<MeshSurface> surfaces(layouts.size());
    std::vector<RigidTransform> transforms(layouts.size()), prevTransforms(layouts.size());
    for (size_t m = 0; m < layouts.size(); ++m) {
      surfaces[m] = info.meshes[m].surface;
      transforms[m] = info.meshes[m].transform;
      prevTransforms[m] = info.meshes[m].prevTransform;
    }
    const detail::MeshValues v = detail::setMeshValues(values, surfaces, transforms, prevTransforms);
    for (size_t m = 0; m < layouts.size(); ++m) {
      if (layouts[m].vertexStride == 12) values.meshes[m].flags |= gpu::kMeshFlagVec3;
    }
    gpu::MeshStagePush push{};
    push.collide = {static_cast<uint32_t>(tables.cloths.size()),
                    tables.meshWords,
                    info.settings.continuous ? gpu::kMeshFlagContinuous : 0u,
                    info.settings.maxBounces,
                    v.maxThickness,
                    T(),
                    0,
                    0};
    push.vertexCount = V();
    push.meshCount = static_cast<uint32_t>(layouts.size());
    push.sweepCount = static_cast<uint32_t>(v.sweeps.size());
    push.gatherFlags = plan.build ? gpu::kMeshGatherBuild : 0u;
    push.tileCount = static_cast<uint32_t>(tiles.size());
    push.particleCount = particleCount;
    push.clothWordCount = static_cast<uint32_t>(tables.clothMeshWords.size());

    detail::Recorder rec = makeRecorder(parts, prev, push, plan, f);
    // The passes are checked before anything is recorded: a refused record leaves the buffer as it was.
    for (const detail::Pass& p : rec.passes()) VKC_TRY(detail::checkPass(p));
    lastStats = {};
    if (rec.passes().empty()) {
      last.emplace(std::move(rec));
      return {};
    }
    RecordSync sync = info.sync;
    // One barrier before every transfer: the host's writes of the mesh buffers (sync's sources) before
    // the copies read them, and earlier passes' reads of the stage's buffers before they are rewritten.
    detail::globalBarrier(ctx, cmd, sync.srcStage | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, sync.srcAccess,
                          VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_CLEAR_BIT,
                          VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT);
    lastStats.barriers += 1;
    for (const Copy& c : copiesOf(info.meshes, plan, f)) {
      ctx.vk.vkCmdCopyBuffer(cmd, c.src, c.dst, 1, &c.region);
      lastStats.transfers += 1;
      lastStats.transferBytes += c.region.size;
    }
    if (plan.gather) {
      ctx.vk.vkCmdFillBuffer(cmd, buffers.get(kState, f).handle(), 0, VK_WHOLE_SIZE, 0u);
      lastStats.transfers += 1;
      lastStats.transferBytes += buffers.get(kState, f).size();
    }
    detail::recordUpdateChunks(ctx, cmd, buffers.get(kMeshes, f).handle(), values.meshes.data(),
                               values.meshes.size() * sizeof(gpu::MeshGpu), lastStats);
    detail::recordUpdateChunks(ctx, cmd, buffers.get(kSweeps, f).handle(), v.sweeps.data(),
                               v.sweeps.size() * sizeof(gpu::RigidSweep), lastStats);
    sync.srcStage |= VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_CLEAR_BIT;
    sync.srcAccess |= VK_ACCESS_2_TRANSFER_WRITE_BIT;
    const Status st = rec.record(cmd, sync, timestampPool, &lastStats);
    if (st.ok() && plan.build) built[f] = true;
    last.emplace(std::move(rec));
    return st;
  }
};

MeshCollisionStage::MeshCollisionStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MeshCollisionStage::~MeshCollisionStage() = default;
const std::vector<PassTiming>& MeshCollisionStage::timings() const { return impl_->timings; }
const RecordStats& MeshCollisionStage::lastRecordStats() const { return impl_->lastStats; }

BufferRange MeshCollisionStage::nodesBuffer(uint32_t frame) const {
  if (!impl_->bvh) return {};
  return impl_->bvh->nodesBuffer(frame);
}

// The checks create() and memoryRequirements() share, and the tables of a valid layout.
static Status checkAndTables(const detail::ContextImpl& ctx, const MeshCollisionStageCreateInfo& info,
                             detail::MeshTables& tables, std::vector<gpu::MeshClothGpu>& tiles, bool& anyDeforming) {
  VKC_TRY(detail::checkFramesInFlight(info.framesInFlight, "MeshCollisionStageCreateInfo"));
  VKC_TRY(detail::validateMeshLayout(info.meshes, info.cloths, info.clothMeshes, info.particleCount));
  tables = detail::makeMeshTables(info.meshes, info.cloths, info.clothMeshes);
  tiles = makeTiles(tables);
  anyDeforming = std::any_of(info.meshes.begin(), info.meshes.end(),
                             [](const MeshLayout& l) { return l.motion == MeshMotion::kDeforming; });
  const uint64_t maxRange = ctx.info.maxStorageBufferRange;
  const struct {
    const char* what;
    uint64_t bytes;
  } needs[] = {
      {"particleCount", uint64_t{info.particleCount} * sizeof(Float4)},
      {"meshes (combined vertices, with the previous copies of deforming meshes)",
       (anyDeforming ? 2ull : 1ull) * tables.vertexCount * sizeof(gpu::vec4)},
      {"meshes (combined indices)", 3ull * tables.triangleCount * sizeof(uint32_t)},
  };
  for (const auto& n : needs) {
    if (n.bytes > maxRange) {
      return Error{ErrorCode::kLimitExceeded, std::string("MeshCollisionStageCreateInfo::") + n.what + " needs " +
                                                  std::to_string(n.bytes) + " bytes in one storage buffer; the device '" +
                                                  ctx.info.name + "' allows maxStorageBufferRange = " +
                                                  std::to_string(maxRange)};
    }
  }
  return {};
}

static BvhStageCreateInfo bvhInfo(const detail::MeshTables& t, uint32_t frames) {
  return {.maxPrimitives = t.triangleCount, .verticesPerPrimitive = 3, .framesInFlight = frames};
}

Result<MemoryRequirements> MeshCollisionStage::memoryRequirements(const Context& context,
                                                                  const MeshCollisionStageCreateInfo& info) {
  const detail::ContextImpl& ctx = detail::Internals::of(context);
  detail::MeshTables tables;
  std::vector<gpu::MeshClothGpu> tiles;
  bool anyDeforming = false;
  VKC_TRY(checkAndTables(ctx, info, tables, tiles, anyDeforming));
  MemoryRequirements need =
      detail::requirementsOf(Impl::plan(tables, tiles, info.particleCount, anyDeforming), info.framesInFlight);
  if (tables.triangleCount > 0) {
    auto b = BvhStage::memoryRequirements(context, bvhInfo(tables, info.framesInFlight));
    if (!b) return b.error();
    detail::addRequirements(need, *b);
  }
  return need;
}

Result<std::unique_ptr<MeshCollisionStage>> MeshCollisionStage::create(Context& context,
                                                                       const MeshCollisionStageCreateInfo& info) {
  detail::ContextImpl& ctx = detail::Internals::of(context);
  auto impl = std::make_unique<Impl>(ctx);
  VKC_TRY(checkAndTables(ctx, info, impl->tables, impl->tiles, impl->anyDeforming));
  impl->layouts.assign(info.meshes.begin(), info.meshes.end());
  impl->cloths.assign(info.cloths.begin(), info.cloths.end());
  for (const ClothMeshes& c : info.clothMeshes) impl->clothMeshes.emplace_back(c.meshes.begin(), c.meshes.end());
  impl->particleCount = info.particleCount;
  impl->frames = info.framesInFlight;
  if (impl->tables.triangleCount > 0) {
    auto b = BvhStage::create(context, bvhInfo(impl->tables, info.framesInFlight));
    if (!b) return b.error();
    impl->bvh = std::move(b.value());
  }
  VKC_TRY(detail::getPassPipelines(ctx, "collide_meshes", gpu::kMeshBindingCount, sizeof(gpu::MeshStagePush),
                                    impl->pipelines));
  VKC_TRY(impl->buffers.create(ctx, Impl::plan(impl->tables, impl->tiles, impl->particleCount, impl->anyDeforming),
                               impl->frames));
  impl->upload.write(impl->buffers, Impl::kStaging, Impl::staticTables(impl->tables, impl->tiles));
  VKC_TRY(impl->queries.create(64));
  return std::unique_ptr<MeshCollisionStage>(new MeshCollisionStage(std::move(impl)));
}

Status MeshCollisionStage::recordUpload(VkCommandBuffer commandBuffer) {
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "MeshCollisionStage", "recordUpload"));
  if (impl_->bvh) VKC_TRY(impl_->bvh->recordUpload(commandBuffer));
  impl_->upload.record(impl_->ctx, commandBuffer);
  return {};
}

Status MeshCollisionStage::record(VkCommandBuffer commandBuffer, const MeshCollisionRecordInfo& info) {
  Impl& s = *impl_;
  s.lastStats = {};
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "MeshCollisionStage"));
  VKC_TRY(s.checkRecord(info));
  BufferRange parts = info.particles, prev = info.prevParticles;
  if (s.particleCount > 0) {
    const VkDeviceSize bytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
    VKC_TRY(detail::checkBufferRange(s.ctx, parts, kOwner, "particles", bytes));
    VKC_TRY(detail::checkBufferRange(s.ctx, prev, kOwner, "prevParticles", bytes));
    parts.size = prev.size = bytes;
  }
  return s.recordValidated(commandBuffer, parts, prev, info, VK_NULL_HANDLE);
}

std::vector<uint64_t> detail::meshFrameWrites(MeshCollisionStage& stage, uint32_t frame) {
  const MeshCollisionStage::Impl& s = Internals::of(stage);
  using I = MeshCollisionStage::Impl;
  std::vector<uint64_t> out;
  for (uint32_t id : {I::kMeshes, I::kSweeps, I::kRaw, I::kIndices, I::kState}) {
    out.push_back(reinterpret_cast<uint64_t>(s.buffers.get(id, frame).handle()));
  }
  const BufferRange dummy = s.whole(I::kDummy);
  I::Plan plan;
  plan.build = plan.gather = plan.copyStatic = s.T() > 0;
  plan.swept = true;
  const Recorder rec = s.makeRecorder(dummy, dummy, gpu::MeshStagePush{}, plan, frame);
  for (const Pass& p : rec.passes()) {
    for (const BufferUse& u : usesOf(p)) {
      const bool writes = u.access == Access::kWrite || u.access == Access::kReadWrite;
      if (writes && u.buffer != reinterpret_cast<uint64_t>(dummy.buffer)) out.push_back(u.buffer);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

BufferRange detail::meshStateBuffer(MeshCollisionStage& stage, uint32_t frame) {
  return Internals::of(stage).whole(MeshCollisionStage::Impl::kState, frame);
}

Status MeshCollisionStage::run(const MeshCollisionInput& input, MeshCollisionDebug* debug) {
  Impl& s = *impl_;
  s.lastStats = {};
  VKC_TRY(validate(input));
  bool same = input.meshes.size() == s.layouts.size() && input.particles.size() == s.particleCount &&
              input.cloths.size() == s.cloths.size() && input.clothMeshes.size() == s.clothMeshes.size();
  for (size_t m = 0; same && m < s.layouts.size(); ++m) {
    const CollisionMesh& mesh = input.meshes[m];
    same = mesh.vertices.size() == s.layouts[m].vertexCount && mesh.indices.size() == 3ull * s.layouts[m].triangleCount &&
           mesh.motion == s.layouts[m].motion;
  }
  for (size_t c = 0; same && c < s.cloths.size(); ++c) {
    same = input.cloths[c].first == s.cloths[c].first && input.cloths[c].count == s.cloths[c].count &&
           std::equal(input.clothMeshes[c].meshes.begin(), input.clothMeshes[c].meshes.end(),
                      s.clothMeshes[c].begin(), s.clothMeshes[c].end());
  }
  if (!same) {
    return invalid("MeshCollisionStage::run: the input's meshes, cloths, cloth meshes or particle count differ from "
                   "the stage's layout");
  }
  const MeshTree& tree = input.tree;
  const bool spans = !tree.nodes.empty();
  MeshCollisionRecordInfo info;
  info.settings = input.settings;
  info.tree = tree.update;
  if (spans && tree.update == MeshTreeUpdate::kAuto && !*tree.built) info.tree = MeshTreeUpdate::kBuild;
  if (info.tree == MeshTreeUpdate::kRefit && !s.built[0]) {
    return invalid("MeshCollisionStage::run: tree.update is kRefit, but the stage has not built its tree yet (the "
                   "Vulkan stage refits its own tree, not the spans')");
  }

  // The meshes into one host-visible buffer, each array at a 16-byte aligned offset, at the stage's
  // strides; the records point into it (the copies read it as they read the host's buffers).
  auto& alloc = *s.ctx.allocator;
  std::vector<MeshRecord> records(s.layouts.size());
  VkDeviceSize total = 0;
  std::vector<std::array<VkDeviceSize, 3>> at(s.layouts.size());
  for (size_t m = 0; m < s.layouts.size(); ++m) {
    const MeshLayout& l = s.layouts[m];
    const VkDeviceSize vb = roundUp(VkDeviceSize{l.vertexCount} * l.vertexStride, 16);
    at[m] = {total, total + vb, total + (l.motion == MeshMotion::kDeforming ? 2 : 1) * vb};
    total = at[m][2] + roundUp(3ull * l.triangleCount * sizeof(uint32_t), 16);
  }
  VKC_TRY(alloc.ensureBuffer(s.meshUpload, std::max<VkDeviceSize>(total, 16), MemoryUsage::kUpload));
  char* up = static_cast<char*>(s.meshUpload.mapped());
  for (size_t m = 0; m < s.layouts.size(); ++m) {
    const MeshLayout& l = s.layouts[m];
    const CollisionMesh& mesh = input.meshes[m];
    auto put = [&](std::span<const Float4> v, VkDeviceSize off) {
      for (size_t i = 0; i < v.size(); ++i) std::memcpy(up + off + i * l.vertexStride, &v[i], l.vertexStride);
    };
    const VkDeviceSize vb = VkDeviceSize{l.vertexCount} * l.vertexStride;
    put(mesh.vertices, at[m][0]);
    MeshRecord& r = records[m];
    r.vertices = {s.meshUpload.handle(), at[m][0], vb};
    if (l.motion == MeshMotion::kDeforming) {
      put(mesh.prevVertices, at[m][1]);
      r.prevVertices = {s.meshUpload.handle(), at[m][1], vb};
    }
    std::memcpy(up + at[m][2], mesh.indices.data(), mesh.indices.size() * sizeof(uint32_t));
    r.indices = {s.meshUpload.handle(), at[m][2], mesh.indices.size() * sizeof(uint32_t)};
    r.transform = mesh.transform;
    r.prevTransform = mesh.prevTransform;
    r.surface = mesh.surface;
  }
  info.meshes = records;
  VKC_TRY(s.checkRecord(info));
  const Impl::Plan plan = s.planOf(info.tree, info.settings.continuous, 0);

  const VkDeviceSize infoBytes = VkDeviceSize{s.particleCount} * sizeof(gpu::uvec2);
  const uint32_t T = s.T();
  const VkDeviceSize nodeBytes = T > 0 ? VkDeviceSize{bvhNodeCount(T)} * sizeof(BvhNode) : 0;
  const VkDeviceSize boxBytes = VkDeviceSize{T} * sizeof(Aabb), parentBytes = VkDeviceSize{T} * sizeof(uint32_t);
  const VkDeviceSize treeBytes = spans ? nodeBytes + boxBytes + parentBytes : 0;
  VKC_TRY(s.staged.prepare(s.ctx, input.particles, input.prevParticles, infoBytes + treeBytes));
  info.sync = detail::copyInCopyOutSync();
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    auto copy = [&](VkBuffer src, VkBuffer dst, VkDeviceSize srcOff, VkDeviceSize dstOff, VkDeviceSize n) {
      if (n == 0) return;
      const VkBufferCopy region{srcOff, dstOff, n};
      s.ctx.vk.vkCmdCopyBuffer(cmd, src, dst, 1, &region);
    };
    s.staged.copyIn(s.ctx, cmd);
    VKC_TRY(s.recordValidated(cmd, s.staged.particles(), s.staged.prevParticles(), info, s.queries));
    // The copies out wait for the passes (the record's closing barrier), or with no pass for the copies in.
    if (s.last->passes().empty()) {
      detail::globalBarrier(s.ctx, cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                            VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
    }
    s.staged.copyOut(s.ctx, cmd);
    const VkDeviceSize o = s.staged.extraOffset();
    copy(s.buffers.get(Impl::kInfo, 0).handle(), s.staged.readback(), 0, o, infoBytes);
    if (spans && s.bvh) {
      copy(s.bvh->nodesBuffer(0).buffer, s.staged.readback(), 0, o + infoBytes, nodeBytes);
      copy(s.bvh->primitiveBoxesBuffer(0).buffer, s.staged.readback(), 0, o + infoBytes + nodeBytes, boxBytes);
      copy(s.bvh->leafParentsBuffer(0).buffer, s.staged.readback(), 0, o + infoBytes + nodeBytes + boxBytes, parentBytes);
    }
    return {};
  }));
  if (!s.last->passes().empty()) VKC_TRY(detail::storeTimings(*s.last, s.queries, s.timings));
  s.staged.readBack(input.particles, input.prevParticles);
  const char* back = s.staged.extra();  // the contacts, then the tree
  if (spans) {
    const char* t = back + infoBytes;
    std::memcpy(tree.nodes.data(), t, nodeBytes);
    std::memcpy(tree.primitiveBoxes.data(), t + nodeBytes, boxBytes);
    std::memcpy(tree.leafParents.data(), t + nodeBytes + boxBytes, parentBytes);
    if (plan.build && tree.built != nullptr) *tree.built = true;
  }
  if (debug != nullptr) {
    debug->contacts.assign(s.particleCount, 0u);
    debug->lastTriangle.assign(s.particleCount, kBvhNone);
    const bool collided = std::any_of(s.last->passes().begin(), s.last->passes().end(), [](const detail::Pass& p) {
      return p.decl == &gpu::kMeshPasses[gpu::kMeshPassCollide];
    });
    for (const gpu::MeshClothGpu& c : s.tables.cloths) {
      if (c.meshCount == 0 || !collided) continue;
      for (uint32_t j = 0; j < c.count; ++j) {
        gpu::uvec2 v;
        std::memcpy(&v, back + VkDeviceSize{c.first + j} * sizeof(gpu::uvec2), sizeof v);
        debug->contacts[c.first + j] = v.x;
        debug->lastTriangle[c.first + j] = v.y;
      }
    }
  }
  return {};
}

Status collideMeshes(Backend backend, Context* context, const MeshCollisionInput& input, MeshCollisionDebug* debug) {
  if (backend != Backend::kVulkan) return collideMeshesCpu(input, backend, debug);
  if (context == nullptr) return invalid("collideMeshes: the Vulkan backend needs a context");
  VKC_TRY(validate(input));
  std::vector<MeshLayout> layouts(input.meshes.size());
  for (size_t m = 0; m < input.meshes.size(); ++m) {
    layouts[m] = {static_cast<uint32_t>(input.meshes[m].vertices.size()),
                  static_cast<uint32_t>(input.meshes[m].indices.size() / 3), input.meshes[m].motion, 16};
  }
  auto stage = MeshCollisionStage::create(*context, {.cloths = input.cloths,
                                                     .particleCount = static_cast<uint32_t>(input.particles.size()),
                                                     .meshes = layouts,
                                                     .clothMeshes = input.clothMeshes});
  if (!stage) return stage.error();
  return (*stage)->run(input, debug);
}

}  // namespace vkc
