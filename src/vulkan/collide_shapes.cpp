// Sphere and capsule collision on Vulkan: the bounds passes, then the four passes of
// shaders/collide_shapes.comp, in one Recorder so that the barriers between all six come from their
// declared buffer uses.
#include <array>
#include <optional>
#include <cstring>
#include <string>

#include "bounds_stage.h"
#include "buffer_check.h"
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
  detail::ContextImpl& ctx;
  std::vector<ClothRange> cloths;
  uint32_t particleCount = 0;
  std::vector<uint32_t> sphereCounts;
  std::vector<std::vector<Capsule>> capsules;
  detail::ShapesLayout layout;
  std::unique_ptr<BoundsStage> bounds;
  const detail::Pipeline* pipelines[4] = {};
  Buffer clothTable, capsuleTable, csr, rawSpheres, prepared, grids, masks, dummy;
  // Convenience path.
  Buffer particles, prevParticles, upload, readback;
  detail::TimestampPool queries{ctx};
  std::vector<PassTiming> timings;
  std::vector<gpu::vec4> sphereData;  // scratch for record()
  std::optional<detail::Recorder> last;  // the passes last recorded, for timings

  explicit Impl(detail::ContextImpl& c) : ctx(c) {}

  Status checkLayout(std::span<const ClothColliders> colliders, const char* what) const {
    bool same = colliders.size() == sphereCounts.size();
    for (size_t c = 0; same && c < colliders.size(); ++c) {
      same = colliders[c].spheres.size() == sphereCounts[c] && colliders[c].capsules.size() == capsules[c].size();
      for (size_t k = 0; same && k < capsules[c].size(); ++k) {
        same = colliders[c].capsules[k].sphere0 == capsules[c][k].sphere0 &&
               colliders[c].capsules[k].sphere1 == capsules[c][k].sphere1;
      }
    }
    if (same) return {};
    return Error{ErrorCode::kInvalidArgument, std::string(what) +
                                                  ".colliders: sphere counts or capsules differ from the stage's layout "
                                                  "(create a new ShapeCollisionStage when they change)"};
  }

  BufferRange whole(const Buffer& b) const { return b.range(); }

  // Validated record: the sphere upload, then every pass.
  Status recordValidated(VkCommandBuffer cmd, BufferRange parts, BufferRange prev,
                         std::span<const ClothColliders> colliders, const ShapeCollisionSettings& settings,
                         RecordSync sync, VkQueryPool timestampPool) {
    detail::packRawSpheres(colliders, sphereData);
    const uint32_t flags = detail::shapeFlags(settings);
    const bool ccd = settings.continuous, friction = (flags & gpu::kCollideFlagFriction) != 0;
    if (particleCount == 0) parts = prev = dummy.range();

    detail::Recorder rec(ctx);
    detail::appendBoundsPasses(*bounds, rec, parts, prev, ccd, 0);
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
                               0};
    const BufferRange boundsOut = bounds->outputBuffer();
    auto pass = [&](uint32_t kind, uint32_t groups) {
      const BufferRange ranges[gpu::kShapesBindingCount] = {
          parts, prev, whole(clothTable), whole(rawSpheres), whole(capsuleTable), whole(csr), whole(prepared),
          boundsOut.size > 0 ? boundsOut : dummy.range(), whole(grids), whole(masks)};
      detail::Pass p = detail::passFromDecl(gpu::kShapesPasses[kind], pipelines[kind], ranges);
      p.setPush(push);
      p.groupCount = groups;
      return p;
    };
    const uint32_t G = gpu::kShapesGroupSize;
    rec.add(pass(gpu::kShapesPassPrepare, (layout.sphereCount + layout.capsuleCount + G - 1) / G));
    rec.add(pass(gpu::kShapesPassGrid, static_cast<uint32_t>(layout.cloths.size())));
    rec.add(pass(gpu::kShapesPassMasks, (layout.maskWordCount + G - 1) / G));
    detail::Pass collide = pass(gpu::kShapesPassCollide, layout.groupCount);
    if (!friction) collide.narrow(gpu::kShapesBindingPrevParticles, Access::kRead);
    rec.add(std::move(collide));

    // The frame's spheres go into the command buffer. Before: earlier frames' reads of the buffer
    // must be done (write-after-read); after: the recorder's opening barrier covers the copy.
    if (!sphereData.empty()) {
      detail::globalBarrier(ctx, cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, VK_ACCESS_2_NONE,
                            VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT);
      const auto* bytes = reinterpret_cast<const uint8_t*>(sphereData.data());
      const VkDeviceSize total = sphereData.size() * sizeof(gpu::vec4);
      for (VkDeviceSize off = 0; off < total; off += 65536) {
        ctx.vk.vkCmdUpdateBuffer(cmd, rawSpheres.handle(), off, std::min<VkDeviceSize>(65536, total - off), bytes + off);
      }
      sync.srcStage |= VK_PIPELINE_STAGE_2_COPY_BIT;
      sync.srcAccess |= VK_ACCESS_2_TRANSFER_WRITE_BIT;
    }
    const Status st = rec.record(cmd, sync, timestampPool);
    last.emplace(std::move(rec));
    return st;
  }
};

ShapeCollisionStage::ShapeCollisionStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ShapeCollisionStage::~ShapeCollisionStage() = default;
const std::vector<PassTiming>& ShapeCollisionStage::timings() const { return impl_->timings; }

Result<std::unique_ptr<ShapeCollisionStage>> ShapeCollisionStage::create(Context& context,
                                                                         const ShapeStageCreateInfo& info) {
  detail::ContextImpl& ctx = detail::Internals::of(context);
  VKC_TRY(detail::validateClothRanges(info.cloths, info.particleCount, "ShapeStageCreateInfo"));
  VKC_TRY(detail::validateColliders(info.colliders, info.cloths.size()));
  auto impl = std::make_unique<Impl>(ctx);
  impl->cloths.assign(info.cloths.begin(), info.cloths.end());
  impl->particleCount = info.particleCount;
  for (const ClothColliders& c : info.colliders) {
    impl->sphereCounts.push_back(static_cast<uint32_t>(c.spheres.size()));
    impl->capsules.emplace_back(c.capsules.begin(), c.capsules.end());
  }
  impl->layout = detail::makeShapesLayout(info.cloths, info.colliders);
  const detail::ShapesLayout& L = impl->layout;

  // Device limits: every binding must fit in maxStorageBufferRange.
  const uint64_t maxRange = ctx.info.maxStorageBufferRange;
  struct Need {
    const char* what;
    uint64_t bytes;
  } needs[] = {
      {"particleCount", uint64_t{info.particleCount} * sizeof(Float4)},
      {"colliders (spheres and capsules: prepared shapes)", (2ull * L.sphereCount + 6ull * L.capsuleCount) * 16},
      {"colliders (grid mask words)", uint64_t{L.maskWordCount} * 4},
      {"colliders (sphere-capsule table)", uint64_t{L.sphereCapsules.size()} * 4},
  };
  for (const Need& n : needs) {
    if (n.bytes > maxRange) {
      return Error{ErrorCode::kLimitExceeded, std::string("ShapeStageCreateInfo::") + n.what + " needs " +
                                                  std::to_string(n.bytes) + " bytes in one storage buffer; the device '" +
                                                  ctx.info.name + "' allows maxStorageBufferRange = " +
                                                  std::to_string(maxRange)};
    }
  }

  auto boundsStage = BoundsStage::create(context, {info.cloths, info.particleCount, true});
  if (!boundsStage) return boundsStage.error();
  impl->bounds = std::move(boundsStage.value());
  VKC_TRY(detail::getPassPipelines(ctx, "collide_shapes", gpu::kShapesBindingCount, sizeof(gpu::ShapesPush),
                                    impl->pipelines));
  auto make = [&](Buffer& b, VkDeviceSize bytes) { return detail::makeBuffer(ctx, b, bytes); };
  VKC_TRY(make(impl->clothTable, L.cloths.size() * sizeof(gpu::ShapeCloth)));
  VKC_TRY(make(impl->capsuleTable, L.capsules.size() * sizeof(gpu::CapsuleSpheres)));
  VKC_TRY(make(impl->csr, L.sphereCapsules.size() * sizeof(uint32_t)));
  VKC_TRY(make(impl->rawSpheres, 2ull * L.sphereCount * sizeof(gpu::vec4)));
  VKC_TRY(make(impl->prepared, (2ull * L.sphereCount + 6ull * L.capsuleCount) * sizeof(gpu::vec4)));
  VKC_TRY(make(impl->grids, L.cloths.size() * sizeof(gpu::ShapeGrid)));
  VKC_TRY(make(impl->masks, uint64_t{L.maskWordCount} * sizeof(uint32_t)));
  VKC_TRY(make(impl->dummy, 16));

  // Static tables, uploaded once.
  const detail::ContextImpl::Upload uploads[] = {
      {L.cloths.data(), L.cloths.size() * sizeof(gpu::ShapeCloth), impl->clothTable.handle()},
      {L.capsules.data(), L.capsules.size() * sizeof(gpu::CapsuleSpheres), impl->capsuleTable.handle()},
      {L.sphereCapsules.data(), L.sphereCapsules.size() * sizeof(uint32_t), impl->csr.handle()}};
  VKC_TRY(ctx.uploadNow(uploads));
  VKC_TRY(impl->queries.create(12));
  return std::unique_ptr<ShapeCollisionStage>(new ShapeCollisionStage(std::move(impl)));
}

Status ShapeCollisionStage::record(VkCommandBuffer commandBuffer, const ShapeRecordInfo& info) {
  Impl& s = *impl_;
  VKC_TRY(detail::checkCommandBuffer(commandBuffer, "ShapeCollisionStage"));
  VKC_TRY(detail::validateShapeSettings(info.settings));
  VKC_TRY(detail::validateColliders(info.colliders, s.cloths.size()));
  VKC_TRY(s.checkLayout(info.colliders, "ShapeRecordInfo"));
  BufferRange parts = info.particles, prev = info.prevParticles;
  if (s.particleCount > 0) {
    const VkDeviceSize bytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
    VKC_TRY(detail::checkBufferRange(s.ctx, parts, "ShapeRecordInfo", "particles", bytes));
    VKC_TRY(detail::checkBufferRange(s.ctx, prev, "ShapeRecordInfo", "prevParticles", bytes));
    parts.size = prev.size = bytes;
  }
  return s.recordValidated(commandBuffer, parts, prev, info.colliders, info.settings, info.sync, VK_NULL_HANDLE);
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
  auto& alloc = *s.ctx.allocator;
  const VkDeviceSize bytes = VkDeviceSize{s.particleCount} * sizeof(Float4);
  const VkDeviceSize maskBytes = VkDeviceSize{s.layout.maskWordCount} * sizeof(uint32_t);
  auto ensure = [&](Buffer& b, VkDeviceSize size, MemoryUsage usage) {
    return alloc.ensureBuffer(b, std::max<VkDeviceSize>(size, 16), usage);
  };
  VKC_TRY(ensure(s.particles, bytes, MemoryUsage::kDeviceLocal));
  VKC_TRY(ensure(s.prevParticles, bytes, MemoryUsage::kDeviceLocal));
  VKC_TRY(ensure(s.upload, 2 * bytes, MemoryUsage::kUpload));
  VKC_TRY(ensure(s.readback, 2 * bytes + maskBytes, MemoryUsage::kReadback));
  if (bytes > 0) {
    std::memcpy(s.upload.mapped(), input.particles.data(), bytes);
    std::memcpy(static_cast<char*>(s.upload.mapped()) + bytes, input.prevParticles.data(), bytes);
  }
  const RecordSync sync = detail::copyInCopyOutSync();
  VKC_TRY(s.ctx.submitAndWait([&](VkCommandBuffer cmd) -> Status {
    if (bytes > 0) {
      VkBufferCopy region{0, 0, bytes};
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.upload.handle(), s.particles.handle(), 1, &region);
      region.srcOffset = bytes;
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.upload.handle(), s.prevParticles.handle(), 1, &region);
    }
    VKC_TRY(s.recordValidated(cmd, {s.particles.handle(), 0, bytes}, {s.prevParticles.handle(), 0, bytes},
                              input.colliders, input.settings, sync, s.queries));
    if (bytes > 0) {
      VkBufferCopy region{0, 0, bytes};
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.particles.handle(), s.readback.handle(), 1, &region);
      region.dstOffset = bytes;
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.prevParticles.handle(), s.readback.handle(), 1, &region);
    }
    if (maskBytes > 0) {
      const VkBufferCopy region{0, 2 * bytes, maskBytes};
      s.ctx.vk.vkCmdCopyBuffer(cmd, s.masks.handle(), s.readback.handle(), 1, &region);
    }
    return {};
  }));
  if (bytes > 0) {
    std::memcpy(input.particles.data(), s.readback.mapped(), bytes);
    std::memcpy(input.prevParticles.data(), static_cast<const char*>(s.readback.mapped()) + bytes, bytes);
  }
  if (debug != nullptr) {
    debug->masks.resize(s.layout.maskWordCount);
    if (maskBytes > 0) std::memcpy(debug->masks.data(), static_cast<const char*>(s.readback.mapped()) + 2 * bytes, maskBytes);
    debug->maskWords.clear();
    for (const gpu::ShapeCloth& sc : s.layout.cloths) debug->maskWords.push_back(sc.maskWords);
  }
  return detail::storeTimings(*s.last, s.queries, s.timings);
}

Status collideShapes(Backend backend, Context* context, const ShapeCollisionInput& input, ShapeCollisionDebug* debug) {
  if (backend != Backend::kVulkan) return collideShapesCpu(input, backend, debug);
  if (context == nullptr) return Error{ErrorCode::kInvalidArgument, "collideShapes: the Vulkan backend needs a context"};
  VKC_TRY(validate(input));
  auto stage = ShapeCollisionStage::create(
      *context, {input.cloths, static_cast<uint32_t>(input.particles.size()), input.colliders});
  if (!stage) return stage.error();
  return (*stage)->run(input, debug);
}

}  // namespace vkc
