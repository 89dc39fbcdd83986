// Shape collision on Vulkan: the bounds passes, then the four passes of
// shaders/collide_shapes.comp, in one Recorder so that the barriers between all six come from their
// declared buffer uses; or the fused pass alone (small cloths, ShapeCollisionPath).
#include <algorithm>
#include <array>
#include <optional>
#include <cstring>
#include <string>

#include "bounds_stage.h"
#include "buffer_check.h"
#include "collide_shapes_stage.h"
#include "context_impl.h"
#include "recorder.h"
#include "scene/shapes_layout.h"
#include "scene/validate.h"
#include "shared/collide_shapes_passes.h"
#include "stage_common.h"
#include "vkcollide/bounds.h"
#include "vkcollide/collide_shapes.h"

namespace vkc {

using detail::Access;
using detail::Buffer;
using detail::MemoryUsage;

struct ShapeCollisionStage::Impl {
  // The stage's buffers (StageBuffers ids). The static tables are shared; the frame's spheres and
  // planes (one buffer, one upload: the spheres, then the planes at planeOffset) and every buffer a
  // pass writes are per frame in flight.
  enum : uint32_t {
    kClothTable,
    kCapsuleTable,
    kCsr,
    kConvexTable,
    kConvexPlanes,
    kRawShapes,
    kPrepared,
    kGrids,
    kMasks,
    kConvexBits,
    kDummy,
    kStaging,
    kBufferCount
  };

  detail::ContextImpl& ctx;
  std::vector<ClothRange> cloths;
  uint32_t particleCount = 0;
  uint32_t frames = 1;
  std::vector<detail::ColliderLayout> colliderLayout;
  detail::ShapesLayout layout;
  VkDeviceSize planeOffset = 0;  // bytes: where the planes start in the kRawShapes buffer
  std::unique_ptr<BoundsStage> bounds;  // the general path's
  bool fused = false;
  const detail::Pipeline* pipelines[5] = {};
  detail::StageBuffers buffers;
  mutable detail::TableUpload upload;  // recorded by the first Recorder that records these passes
  // Convenience path.
  detail::RunParticles staged;
  detail::TimestampPool queries{ctx};
  std::vector<PassTiming> timings;
  RecordStats lastStats;  // of the last record() or run()
  std::vector<gpu::vec4> shapeData;  // scratch for record(): spheres, then planes at planeOffset
  std::vector<gpu::vec4> planeData;
  std::optional<detail::Recorder> last;  // the passes last recorded, for timings

  explicit Impl(detail::ContextImpl& c) : ctx(c) {}

  // Where the planes start in the raw shapes buffer: after the spheres (at least one vec4, so that
  // the two bindings do not overlap), aligned for a storage buffer binding.
  static VkDeviceSize planeOffsetOf(const detail::ContextImpl& ctx, const detail::ShapesLayout& L) {
    const VkDeviceSize align = std::max<VkDeviceSize>(ctx.info.minStorageBufferOffsetAlignment, sizeof(gpu::vec4));
    const VkDeviceSize sphereBytes = std::max<VkDeviceSize>(2ull * L.sphereCount * sizeof(gpu::vec4), sizeof(gpu::vec4));
    return (sphereBytes + align - 1) / align * align;
  }

  static uint64_t preparedVec4s(const detail::ShapesLayout& L) {
    return 2ull * L.sphereCount + 6ull * L.capsuleCount + 2ull * L.planeCount;
  }

  // Every buffer of a stage with layout `L` (memoryRequirements() and create() both use this).
  static std::array<detail::BufferSpec, kBufferCount> plan(const detail::ContextImpl& ctx,
                                                           const detail::ShapesLayout& L) {
    constexpr MemoryUsage kDevice = MemoryUsage::kDeviceLocal;
    std::array<detail::BufferSpec, kBufferCount> p{};
    p[kClothTable] = {L.cloths.size() * sizeof(gpu::ShapeCloth)};
    p[kCapsuleTable] = {L.capsules.size() * sizeof(gpu::CapsuleSpheres)};
    p[kCsr] = {L.sphereCapsules.size() * sizeof(uint32_t)};
    p[kConvexTable] = {L.convexes.size() * sizeof(gpu::ShapeConvex)};
    p[kConvexPlanes] = {L.convexPlanes.size() * sizeof(uint32_t)};
    p[kRawShapes] = {planeOffsetOf(ctx, L) + std::max<uint64_t>(2ull * L.planeCount, 1) * sizeof(gpu::vec4), kDevice,
                     true};
    p[kPrepared] = {preparedVec4s(L) * sizeof(gpu::vec4), kDevice, true};
    p[kGrids] = {L.cloths.size() * sizeof(gpu::ShapeGrid), kDevice, true};
    p[kMasks] = {uint64_t{L.maskWordCount} * sizeof(uint32_t), kDevice, true};
    p[kConvexBits] = {uint64_t{L.convexWordCount} * sizeof(uint32_t), kDevice, true};
    p[kDummy] = {sizeof(gpu::vec4)};
    p[kStaging] = {detail::TableUpload::stagingBytes(tables(L)), MemoryUsage::kUpload};
    return p;
  }

  // The static tables of layout `L`, in staging order.
  static std::array<detail::TableCopy, 5> tables(const detail::ShapesLayout& L) {
    return {{{L.cloths.data(), L.cloths.size() * sizeof(gpu::ShapeCloth), kClothTable},
             {L.capsules.data(), L.capsules.size() * sizeof(gpu::CapsuleSpheres), kCapsuleTable},
             {L.sphereCapsules.data(), L.sphereCapsules.size() * sizeof(uint32_t), kCsr},
             {L.convexes.data(), L.convexes.size() * sizeof(gpu::ShapeConvex), kConvexTable},
             {L.convexPlanes.data(), L.convexPlanes.size() * sizeof(uint32_t), kConvexPlanes}}};
  }

  Status checkLayout(std::span<const ClothColliders> colliders, const char* what) const {
    if (detail::sameColliderLayout(colliderLayout, colliders)) return {};
    return Error{ErrorCode::kInvalidArgument,
                 std::string(what) +
                     ".colliders: sphere or plane counts, capsules or convexes differ from the stage's layout "
                     "(create a new ShapeCollisionStage when they change)"};
  }

  BufferRange whole(uint32_t id, uint32_t frame = 0) const { return buffers.range(id, frame); }

  // The passes of one record over validated particle ranges, using frame `frame`'s buffers.
  detail::Recorder makeRecorder(BufferRange parts, BufferRange prev, const ShapeCollisionSettings& settings,
                                uint32_t frame) const {
    const uint32_t flags = detail::shapeFlags(settings);
    const bool ccd = settings.continuous, friction = (flags & gpu::kCollideFlagFriction) != 0;
    if (particleCount == 0) parts = prev = whole(kDummy);

    detail::Recorder rec(ctx);
    rec.addUpload(upload);
    if (!fused) detail::appendBoundsPasses(*bounds, rec, parts, prev, ccd, frame);
    const gpu::ShapesPush push{static_cast<uint32_t>(layout.cloths.size()),
                               particleCount,
                               layout.sphereCount,
                               layout.capsuleCount,
                               layout.maskWordCount,
                               flags,
                               settings.friction,
                               settings.collisionMassScale,
                               settings.alphaBegin,
                               settings.alphaEnd,
                               layout.groupCount,
                               layout.planeCount,
                               static_cast<uint32_t>(layout.convexes.size()),
                               0,
                               0,
                               0};
    const BufferRange boundsOut = fused ? whole(kDummy) : bounds->outputBuffer(frame);
    const uint32_t f = frame;
    auto pass = [&](uint32_t kind, uint32_t groups) {
      const BufferRange raw = whole(kRawShapes, f);
      const BufferRange rawSpheres{raw.buffer, raw.offset, planeOffset};
      const BufferRange rawPlanes{raw.buffer, raw.offset + planeOffset, raw.size - planeOffset};
      const BufferRange ranges[gpu::kShapesBindingCount] = {parts,
                                                            prev,
                                                            whole(kClothTable),
                                                            rawSpheres,
                                                            whole(kCapsuleTable),
                                                            whole(kCsr),
                                                            whole(kPrepared, f),
                                                            boundsOut.size > 0 ? boundsOut : whole(kDummy),
                                                            whole(kGrids, f),
                                                            whole(kMasks, f),
                                                            rawPlanes,
                                                            whole(kConvexTable),
                                                            whole(kConvexPlanes),
                                                            whole(kConvexBits, f)};
      detail::Pass p = detail::passFromDecl(gpu::kShapesPasses[kind], pipelines[kind], ranges);
      p.setPush(push);
      p.groupCount = groups;
      return p;
    };
    const uint32_t G = gpu::kShapesGroupSize;
    if (fused) {
      detail::Pass one = pass(gpu::kShapesPassFused, static_cast<uint32_t>(layout.cloths.size()));
      if (!friction) one.narrow(gpu::kShapesBindingPrevParticles, Access::kRead);
      rec.add(std::move(one));
      return rec;
    }
    rec.add(pass(gpu::kShapesPassPrepare, (layout.sphereCount + layout.capsuleCount + layout.planeCount + G - 1) / G));
    rec.add(pass(gpu::kShapesPassGrid, static_cast<uint32_t>(layout.cloths.size())));
    rec.add(pass(gpu::kShapesPassMasks, (layout.maskWordCount + G - 1) / G));
    detail::Pass collide = pass(gpu::kShapesPassCollide, layout.groupCount);
    if (!friction) collide.narrow(gpu::kShapesBindingPrevParticles, Access::kRead);
    rec.add(std::move(collide));
    return rec;
  }

  // Validated record: the sphere and plane upload, then every pass.
  Status recordValidated(VkCommandBuffer cmd, BufferRange parts, BufferRange prev,
                         std::span<const ClothColliders> colliders, const ShapeCollisionSettings& settings,
                         RecordSync sync, uint32_t frame, VkQueryPool timestampPool) {
    detail::packRawSpheres(colliders, shapeData);
    detail::packRawPlanes(colliders, planeData);
    const size_t planeAt = planeOffset / sizeof(gpu::vec4);
    shapeData.resize(planeData.empty() ? shapeData.size() : planeAt + planeData.size());
    std::copy(planeData.begin(), planeData.end(), shapeData.begin() + static_cast<ptrdiff_t>(planeAt));
    detail::Recorder rec = makeRecorder(parts, prev, settings, frame);
    // The passes are checked before the upload: a refused record leaves the command buffer as it was.
    for (const detail::Pass& p : rec.passes()) VKC_TRY(detail::checkPass(p));
    // The frame's spheres and planes go into the command buffer.
    lastStats = {};
    detail::recordUpdate(ctx, cmd, buffers.get(kRawShapes, frame).handle(), shapeData.data(),
                         shapeData.size() * sizeof(gpu::vec4), sync, lastStats);
    const Status st = rec.record(cmd, sync, timestampPool, &lastStats);
    last.emplace(std::move(rec));
    return st;
  }
};

ShapeCollisionStage::ShapeCollisionStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ShapeCollisionStage::~ShapeCollisionStage() = default;
const std::vector<PassTiming>& ShapeCollisionStage::timings() const { return impl_->timings; }
const RecordStats& ShapeCollisionStage::lastRecordStats() const { return impl_->lastStats; }
ShapeCollisionPath ShapeCollisionStage::path() const {
  return impl_->fused ? ShapeCollisionPath::kFused : ShapeCollisionPath::kGeneral;
}

// A bound on the loop iterations one invocation of shaders/collide_shapes.comp runs for cloth `c`, all
// its loops together (llvmpipe counts them together, see kLlvmpipeLoopLimit; its vector lanes loop as
// long as any lane does, so every per-particle count is a worst case). Per particle: the grid's word
// loops (with their 3-axis candidate loops) and shape bit loops, the convex word and bit loops and,
// per convex, its planes twice (continuous and discrete tests): T plane indices in all. The general
// path runs one particle per invocation; the fused path ceil(n / 64), plus the cloth's bounds,
// prepare, grid (convex words: 32 convexes and their planes each) and mask words (32 shapes, up to 2
// spheres and 2 ends each).
static uint64_t worstLoopTrips(const gpu::ShapeCloth& c, uint64_t T, bool fused) {
  const uint64_t G = gpu::kShapesGroupSize;
  auto perInvocation = [&](uint64_t count) { return (count + G - 1) / G; };
  const uint64_t convexWords = (c.convexCount + 31u) / 32u;
  const uint64_t shapes = uint64_t{c.sphereCount} + c.capsuleCount;
  const uint64_t perParticle = 16 + 8 * uint64_t{c.maskWords} + shapes + convexWords + c.convexCount + 2 * T;
  const uint64_t grid = perInvocation(convexWords) * (32 + T) + 2 * perInvocation(c.sphereCount) + 16;
  if (!fused) return std::max<uint64_t>({perParticle, grid, 128});
  return perInvocation(c.particleCount) * (1 + perParticle) + perInvocation(c.particleCount) + 16 +
         perInvocation(c.sphereCount) + 3 * perInvocation(c.capsuleCount) + perInvocation(c.planeCount) + grid +
         perInvocation(uint64_t{gpu::kGridMaskRows} * c.maskWords) * 128;
}

// The worst loop of any cloth of layout L on the given path (worstLoopTrips), and that cloth.
static uint64_t worstLoopTrips(const detail::ShapesLayout& L, bool fused, size_t& cloth) {
  uint64_t worst = 0;
  for (size_t c = 0; c < L.cloths.size(); ++c) {
    const gpu::ShapeCloth& sc = L.cloths[c];
    uint64_t T = 0;
    for (uint32_t k = 0; k < sc.convexCount; ++k) T += L.convexes[sc.firstConvex + k].planeCount;
    const uint64_t trips = worstLoopTrips(sc, T, fused);
    if (trips > worst) {
      worst = trips;
      cloth = c;
    }
  }
  return worst;
}

// Whether the stage takes the fused path (ShapeCollisionPath); on a device that stops long loops
// (limitsLoopIterations), kAuto keeps the general path for layouts whose fused loops would be cut.
static bool takesFusedPath(const detail::ContextImpl& ctx, const ShapeCollisionStageCreateInfo& info,
                           const detail::ShapesLayout& L) {
  if (info.path != ShapeCollisionPath::kAuto) return info.path == ShapeCollisionPath::kFused;
  const bool small = std::all_of(info.cloths.begin(), info.cloths.end(),
                                 [](const ClothRange& c) { return c.count <= gpu::kShapesFusedMaxParticles; });
  size_t cloth = 0;
  return small && (!detail::limitsLoopIterations(ctx) || worstLoopTrips(L, true, cloth) <= detail::kLlvmpipeLoopLimit);
}

// On a device that stops long loops, the chosen path's loops must fit.
static Status checkLoopLimit(const detail::ContextImpl& ctx, const ShapeCollisionStageCreateInfo& info,
                             const detail::ShapesLayout& L) {
  if (!detail::limitsLoopIterations(ctx)) return {};
  const bool fused = takesFusedPath(ctx, info, L);
  size_t cloth = 0;
  const uint64_t trips = worstLoopTrips(L, fused, cloth);
  if (trips <= detail::kLlvmpipeLoopLimit) return {};
  return Error{ErrorCode::kLimitExceeded,
               std::string("ShapeCollisionStageCreateInfo::colliders[") + std::to_string(cloth) + "]: the " +
                   (fused ? "fused" : "general") + " path needs up to " + std::to_string(trips) +
                   " shader loop iterations in one invocation (convex plane indices, convexes and shapes per particle" +
                   (fused ? ", times the cloth's particles per invocation; path kGeneral needs fewer" : "") +
                   "); the device '" + ctx.info.name + "' (driver " + ctx.info.driverName + ") stops loops after " +
                   std::to_string(detail::kLlvmpipeLoopLimit)};
}

// The checks create() and memoryRequirements() share: the description and the device's limits.
static Status checkCreateInfo(const detail::ContextImpl& ctx, const ShapeCollisionStageCreateInfo& info,
                              const detail::ShapesLayout& L) {
  // Every binding must fit in maxStorageBufferRange.
  const uint64_t maxRange = ctx.info.maxStorageBufferRange;
  struct Need {
    const char* what;
    uint64_t bytes;
  } needs[] = {
      {"particleCount", uint64_t{info.particleCount} * sizeof(Float4)},
      {"colliders (spheres, capsules and planes: prepared shapes)", ShapeCollisionStage::Impl::preparedVec4s(L) * 16},
      {"colliders (grid mask words)", uint64_t{L.maskWordCount} * 4},
      {"colliders (sphere-capsule table)", uint64_t{L.sphereCapsules.size()} * 4},
      {"colliders (planes)", 2ull * L.planeCount * 16},
      {"colliders (convexes' plane indices)", uint64_t{L.convexPlanes.size()} * 4},
  };
  for (const Need& n : needs) {
    if (n.bytes > maxRange) {
      return Error{ErrorCode::kLimitExceeded, std::string("ShapeCollisionStageCreateInfo::") + n.what + " needs " +
                                                  std::to_string(n.bytes) + " bytes in one storage buffer; the device '" +
                                                  ctx.info.name + "' allows maxStorageBufferRange = " +
                                                  std::to_string(maxRange)};
    }
  }
  return {};
}

// Validates `info` and builds its layout (the layout is only built from validated colliders).
static Status checkAndLayout(const detail::ContextImpl& ctx, const ShapeCollisionStageCreateInfo& info,
                             detail::ShapesLayout& layout) {
  VKC_TRY(detail::validateClothRanges(info.cloths, info.particleCount, "ShapeCollisionStageCreateInfo"));
  VKC_TRY(detail::validateColliders(info.colliders, info.cloths.size()));
  VKC_TRY(detail::checkFramesInFlight(info.framesInFlight, "ShapeCollisionStageCreateInfo"));
  VKC_TRY(detail::checkPathValue(info.path, "ShapeCollisionStageCreateInfo"));
  layout = detail::makeShapesLayout(info.cloths, info.colliders);
  VKC_TRY(checkCreateInfo(ctx, info, layout));
  return checkLoopLimit(ctx, info, layout);
}

// The embedded bounds stage of the general path: with the previous positions (CCD may be chosen per
// record()).
static BoundsStageCreateInfo boundsInfo(const ShapeCollisionStageCreateInfo& info) {
  return {.cloths = info.cloths,
          .particleCount = info.particleCount,
          .includePrevious = true,
          .framesInFlight = info.framesInFlight};
}

Result<MemoryRequirements> ShapeCollisionStage::memoryRequirements(const Context& context,
                                                                   const ShapeCollisionStageCreateInfo& info) {
  detail::ShapesLayout layout;
  VKC_TRY(checkAndLayout(detail::Internals::of(context), info, layout));
  Result<MemoryRequirements> need = MemoryRequirements{};
  if (!takesFusedPath(detail::Internals::of(context), info, layout)) {
    need = BoundsStage::memoryRequirements(context, boundsInfo(info));
  }
  if (!need) return need.error();
  const MemoryRequirements own =
      detail::requirementsOf(Impl::plan(detail::Internals::of(context), layout), info.framesInFlight);
  detail::addRequirements(*need, own);
  return need;
}

Result<std::unique_ptr<ShapeCollisionStage>> ShapeCollisionStage::create(Context& context,
                                                                         const ShapeCollisionStageCreateInfo& info) {
  detail::ContextImpl& ctx = detail::Internals::of(context);
  auto impl = std::make_unique<Impl>(ctx);
  VKC_TRY(checkAndLayout(ctx, info, impl->layout));
  impl->cloths.assign(info.cloths.begin(), info.cloths.end());
  impl->particleCount = info.particleCount;
  impl->frames = info.framesInFlight;
  impl->colliderLayout = detail::colliderLayout(info.colliders);
  impl->planeOffset = Impl::planeOffsetOf(ctx, impl->layout);

  impl->fused = takesFusedPath(ctx, info, impl->layout);
  if (!impl->fused) {
    auto boundsStage = BoundsStage::create(context, boundsInfo(info));
    if (!boundsStage) return boundsStage.error();
    impl->bounds = std::move(boundsStage.value());
  }
  VKC_TRY(detail::getPassPipelines(ctx, "collide_shapes", gpu::kShapesBindingCount, sizeof(gpu::ShapesPush),
                                    impl->pipelines));
  VKC_TRY(impl->buffers.create(ctx, Impl::plan(ctx, impl->layout), impl->frames));
  impl->upload.write(impl->buffers, Impl::kStaging, Impl::tables(impl->layout));
  VKC_TRY(impl->queries.create(12));
  return std::unique_ptr<ShapeCollisionStage>(new ShapeCollisionStage(std::move(impl)));
}

Status ShapeCollisionStage::recordUpload(VkCommandBuffer commandBuffer) {
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "ShapeCollisionStage", "recordUpload"));
  if (impl_->bounds) VKC_TRY(impl_->bounds->recordUpload(commandBuffer));
  impl_->upload.record(impl_->ctx, commandBuffer);
  return {};
}

std::vector<uint64_t> detail::shapeFrameWrites(ShapeCollisionStage& stage, uint32_t frame) {
  const ShapeCollisionStage::Impl& s = Internals::of(stage);
  const BufferRange dummy = s.whole(ShapeCollisionStage::Impl::kDummy);
  const ShapeCollisionSettings everything{.continuous = true, .friction = 1, .collisionMassScale = 1};
  std::vector<uint64_t> out = {
      reinterpret_cast<uint64_t>(s.buffers.get(ShapeCollisionStage::Impl::kRawShapes, frame).handle())};
  const Recorder rec = s.makeRecorder(dummy, dummy, everything, frame);
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

Status ShapeCollisionStage::record(VkCommandBuffer commandBuffer, const ShapeCollisionRecordInfo& info) {
  Impl& s = *impl_;
  s.lastStats = {};
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "ShapeCollisionStage"));
  VKC_TRY(detail::checkFrame(info.frame, s.frames, "ShapeCollisionRecordInfo"));
  VKC_TRY(detail::validateShapeSettings(info.settings));
  VKC_TRY(detail::validateColliders(info.colliders, s.cloths.size()));
  VKC_TRY(s.checkLayout(info.colliders, "ShapeCollisionRecordInfo"));
  BufferRange parts = info.particles, prev = info.prevParticles;
  if (s.particleCount > 0) {
    const VkDeviceSize bytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
    VKC_TRY(detail::checkBufferRange(s.ctx, parts, "ShapeCollisionRecordInfo", "particles", bytes));
    VKC_TRY(detail::checkBufferRange(s.ctx, prev, "ShapeCollisionRecordInfo", "prevParticles", bytes));
    parts.size = prev.size = bytes;
  }
  return s.recordValidated(commandBuffer, parts, prev, info.colliders, info.settings, info.sync, info.frame,
                           VK_NULL_HANDLE);
}

Status ShapeCollisionStage::run(const ShapeCollisionInput& input, ShapeCollisionDebug* debug) {
  Impl& s = *impl_;
  VKC_TRY(validate(input));
  VKC_TRY(s.checkLayout(input.colliders, "ShapeCollisionInput"));
  if (input.particles.size() != s.particleCount ||
      !std::equal(input.cloths.begin(), input.cloths.end(), s.cloths.begin(), s.cloths.end(),
                  [](const ClothRange& a, const ClothRange& b) { return a.first == b.first && a.count == b.count; })) {
    return Error{ErrorCode::kInvalidArgument,
                 "ShapeCollisionStage::run: the input's cloths or particle count differ from the stage's"};
  }
  s.lastStats = {};
  const VkDeviceSize maskBytes = VkDeviceSize{s.layout.maskWordCount} * sizeof(uint32_t);
  const VkDeviceSize convexBytes = VkDeviceSize{s.layout.convexWordCount} * sizeof(uint32_t);
  VKC_TRY(s.staged.prepare(s.ctx, input.particles, input.prevParticles, maskBytes + convexBytes));
  const RecordSync sync = detail::copyInCopyOutSync();
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    s.staged.copyIn(s.ctx, cmd);
    VKC_TRY(s.recordValidated(cmd, s.staged.particles(), s.staged.prevParticles(), input.colliders, input.settings,
                              sync, 0, s.queries));
    s.staged.copyOut(s.ctx, cmd);
    if (maskBytes > 0) {
      const VkBufferCopy region{0, s.staged.extraOffset(), maskBytes};
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.buffers.get(Impl::kMasks, 0).handle(), s.staged.readback(), 1, &region);
    }
    if (convexBytes > 0) {
      const VkBufferCopy region{0, s.staged.extraOffset() + maskBytes, convexBytes};
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.buffers.get(Impl::kConvexBits, 0).handle(), s.staged.readback(), 1, &region);
    }
    return {};
  }));
  VKC_TRY(detail::storeTimings(*s.last, s.queries, s.timings));  // before any output is written
  s.staged.readBack(input.particles, input.prevParticles);
  if (debug != nullptr) {
    debug->masks.resize(s.layout.maskWordCount);
    if (maskBytes > 0) std::memcpy(debug->masks.data(), s.staged.extra(), maskBytes);
    debug->maskWords.clear();
    for (const gpu::ShapeCloth& sc : s.layout.cloths) debug->maskWords.push_back(sc.maskWords);
    debug->convexBits.resize(s.layout.convexWordCount);
    if (convexBytes > 0) {
      std::memcpy(debug->convexBits.data(), s.staged.extra() + maskBytes, convexBytes);
    }
  }
  return {};
}

Status collideShapes(Backend backend, Context* context, const ShapeCollisionInput& input, ShapeCollisionDebug* debug) {
  if (backend != Backend::kVulkan) return collideShapesCpu(input, backend, debug);
  if (context == nullptr) return Error{ErrorCode::kInvalidArgument, "collideShapes: the Vulkan backend needs a context"};
  VKC_TRY(validate(input));
  auto stage = ShapeCollisionStage::create(
      *context, {.cloths = input.cloths, .particleCount = static_cast<uint32_t>(input.particles.size()),
                 .colliders = input.colliders});
  if (!stage) return stage.error();
  return (*stage)->run(input, debug);
}

}  // namespace vkc
