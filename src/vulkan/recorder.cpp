#include "recorder.h"

#include "stage_common.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "context_impl.h"

namespace vkc::detail {
namespace {

bool overlaps(const BufferUse& a, const BufferUse& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

// Uses of one concurrent group (Pass::concurrentGroup): no hazard between them.
bool concurrent(const BufferUse& a, const BufferUse& b) { return a.group != 0 && a.group == b.group; }
bool reads(const BufferUse& u) { return (static_cast<uint8_t>(u.access) & 1u) != 0; }
bool writes(const BufferUse& u) { return (static_cast<uint8_t>(u.access) & 2u) != 0; }

std::string describe(const char* kind, const BufferUse& u) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s on buffer 0x%" PRIx64 " [%" PRIu64 ", %" PRIu64 ")", kind, u.buffer,
                static_cast<uint64_t>(u.offset), static_cast<uint64_t>(u.offset + u.size));
  return buf;
}

}  // namespace

std::vector<BarrierDecision> planBarriers(std::span<const std::vector<BufferUse>> passes) {
  std::vector<BarrierDecision> plan(passes.size());
  // Accesses since the last barrier (a global barrier orders everything before it).
  std::vector<BufferUse> pendingReads, pendingWrites;
  for (size_t i = 0; i < passes.size(); ++i) {
    BarrierDecision& d = plan[i];
    for (const BufferUse& u : passes[i]) {
      if (d.needed) break;
      for (const BufferUse& w : pendingWrites) {
        if (!overlaps(u, w) || concurrent(u, w)) continue;
        d = {true, describe(writes(u) ? "write-after-write" : "read-after-write", u)};
        break;
      }
      if (d.needed || !writes(u)) continue;
      for (const BufferUse& r : pendingReads) {
        if (!overlaps(u, r) || concurrent(u, r)) continue;
        d = {true, describe("write-after-read", u)};
        break;
      }
    }
    if (d.needed) {
      pendingReads.clear();
      pendingWrites.clear();
    }
    for (const BufferUse& u : passes[i]) {
      if (reads(u)) pendingReads.push_back(u);
      if (writes(u)) pendingWrites.push_back(u);
    }
  }
  return plan;
}

Pass passFromDecl(const gpu::PassDecl& decl, const Pipeline* pipeline, std::span<const BufferRange> ranges) {
  Pass p;
  p.decl = &decl;
  p.name = decl.name;
  p.pipeline = pipeline;
  p.bindings.resize(ranges.size());
  for (size_t b = 0; b < ranges.size(); ++b) {
    p.bindings[b] = {ranges[b], b < gpu::kPassMaxBindings ? static_cast<Access>(decl.access[b]) : Access::kNone};
  }
  return p;
}

Status checkPass(const Pass& p) {
  const std::string pass = std::string("pass '") + p.name + "'";
  if (p.decl == nullptr) return Error{ErrorCode::kInvalidArgument, pass + " has no declaration (passFromDecl)"};
  if (std::strcmp(p.name, p.decl->name) != 0) {
    return Error{ErrorCode::kInvalidArgument, pass + " is labelled differently from its declaration '" + p.decl->name + "'"};
  }
  if (p.bindings.size() != p.decl->bindingCount) {
    return Error{ErrorCode::kInvalidArgument, pass + " has " + std::to_string(p.bindings.size()) +
                                                  " bindings; its declaration has " + std::to_string(p.decl->bindingCount)};
  }
  for (uint32_t b = 0; b < p.bindings.size(); ++b) {
    const auto used = static_cast<uint8_t>(p.bindings[b].access), declared = static_cast<uint8_t>(p.decl->access[b]);
    if ((used & ~declared) != 0) {
      return Error{ErrorCode::kInvalidArgument, pass + " binding " + std::to_string(b) + ": access " +
                                                    std::to_string(used) + " exceeds the declared " +
                                                    std::to_string(declared) + " (1 read, 2 write, 3 both)"};
    }
  }
  return {};
}

std::vector<BufferUse> usesOf(const Pass& p) {
  std::vector<BufferUse> uses = p.extraUses;
  if (p.indirect.buffer != VK_NULL_HANDLE) {
    uses.push_back({reinterpret_cast<uint64_t>(p.indirect.buffer), p.indirect.offset, sizeof(VkDispatchIndirectCommand),
                    Access::kRead});
  }
  for (const Binding& b : p.bindings) {
    // A bound buffer the pass does not touch still counts as read: the shader module uses every
    // binding statically (passes are selected by a specialization constant), so drivers and the
    // synchronization validation layer may treat it as accessed.
    const Access a = b.access == Access::kNone ? Access::kRead : b.access;
    uses.push_back({reinterpret_cast<uint64_t>(b.range.buffer), b.range.offset, b.range.size, a});
  }
  for (BufferUse& u : uses) u.group = p.concurrentGroup;
  return uses;
}

void countDispatch(const Pass& p, bool dependent, RecordStats& stats) {
  stats.dispatches += 1;
  stats.dependentDispatches += dependent ? 1 : 0;
  auto addUse = [&](VkDeviceSize size, Access access) {
    if (access == Access::kRead || access == Access::kReadWrite) stats.bytesRead += size;
    if (access == Access::kWrite || access == Access::kReadWrite) stats.bytesWritten += size;
  };
  for (const BufferUse& u : p.extraUses) addUse(u.size, u.access);
  for (const Binding& b : p.bindings) addUse(b.range.size, b.access);
  if (p.indirect.buffer != VK_NULL_HANDLE) {
    stats.indirectDispatches += 1;
    addUse(sizeof(VkDispatchIndirectCommand), Access::kRead);
  } else {
    stats.workgroups += p.groupCount;
  }
}

void globalBarrier(const ContextImpl& ctx, VkCommandBuffer cmd, VkPipelineStageFlags2 srcStage,
                   VkAccessFlags2 srcAccess, VkPipelineStageFlags2 dstStage, VkAccessFlags2 dstAccess) {
  VkMemoryBarrier2 mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  mb.srcStageMask = srcStage;
  mb.srcAccessMask = srcAccess;
  mb.dstStageMask = dstStage;
  mb.dstAccessMask = dstAccess;
  VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dep.memoryBarrierCount = 1;
  dep.pMemoryBarriers = &mb;
  ctx.vk.vkCmdPipelineBarrier2(cmd, &dep);
}

std::vector<BarrierDecision> Recorder::plan() const {
  std::vector<std::vector<BufferUse>> uses;
  uses.reserve(passes_.size());
  for (const Pass& p : passes_) uses.push_back(usesOf(p));
  return planBarriers(uses);
}

Status Recorder::record(VkCommandBuffer cmd, const RecordSync& sync, VkQueryPool timestamps, RecordStats* stats) const {
  // Check every pass before recording anything: a failed record leaves the command buffer untouched.
  const uint32_t maxX = ctx_.info.maxComputeWorkGroupCount[0], maxY = ctx_.info.maxComputeWorkGroupCount[1];
  for (const Pass& p : passes_) {
    VKC_TRY(checkPass(p));
    if (p.pipeline == nullptr || p.bindings.size() != p.pipeline->bindingCount ||
        p.push.size() != p.pipeline->pushConstantSize) {
      return Error{ErrorCode::kInvalidArgument, std::string("pass '") + p.name + "' does not match its pipeline's layout"};
    }
    if (p.groupCount > static_cast<uint64_t>(maxX) * maxY) {
      return Error{ErrorCode::kLimitExceeded, std::string("pass '") + p.name + "' needs " + std::to_string(p.groupCount) +
                                                  " workgroups, more than the device's maxComputeWorkGroupCount allows"};
    }
  }
  const std::vector<BarrierDecision> barriers = plan();
  constexpr VkPipelineStageFlags2 kCompute = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
  constexpr VkAccessFlags2 kStorage = VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
  // With an indirect dispatch, every barrier also makes earlier writes visible to the indirect-command
  // read (a barrier placed for another hazard may be the one that orders the arguments' writer).
  const bool anyIndirect = std::any_of(passes_.begin(), passes_.end(),
                                       [](const Pass& p) { return p.indirect.buffer != VK_NULL_HANDLE; });
  const VkPipelineStageFlags2 dstStage = kCompute | (anyIndirect ? VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT : 0);
  const VkAccessFlags2 dstAccess = kStorage | (anyIndirect ? VK_ACCESS_2_INDIRECT_COMMAND_READ_BIT : 0);

  if (timestamps != VK_NULL_HANDLE) {
    ctx_.vk.vkCmdResetQueryPool(cmd, timestamps, 0, static_cast<uint32_t>(2 * passes_.size()));
  }
  RecordStats counted;
  for (TableUpload* u : uploads_) {
    if (!u->recorded()) u->record(ctx_, cmd, &counted);
  }
  // The opening barrier also waits for earlier compute work of this stage, its indirect-argument
  // reads included (its scratch is reused by every record() of the same frame, whatever the host
  // names as its last writer: a write-after-read needs the execution dependency).
  const VkPipelineStageFlags2 ownStages = kCompute | (anyIndirect ? VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT : 0);
  globalBarrier(ctx_, cmd, sync.srcStage | ownStages, sync.srcAccess | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, dstStage,
                dstAccess);
  counted.barriers += 1;
  bool waited = true;  // a barrier since the last dispatch (the opening one, for the first)
  for (size_t i = 0; i < passes_.size(); ++i) {
    const Pass& p = passes_[i];
    if (i > 0 && barriers[i].needed) {
      globalBarrier(ctx_, cmd, kCompute, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, dstStage, dstAccess);
      counted.barriers += 1;
      waited = true;
    }
    ctx_.beginLabel(cmd, p.name);
    if (timestamps != VK_NULL_HANDLE) {
      ctx_.vk.vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, timestamps, static_cast<uint32_t>(2 * i));
    }
    ctx_.vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline->pipeline);
    std::vector<VkDescriptorBufferInfo> infos(p.bindings.size());
    std::vector<VkWriteDescriptorSet> writes(p.bindings.size());
    for (uint32_t b = 0; b < p.bindings.size(); ++b) {
      infos[b] = {p.bindings[b].range.buffer, p.bindings[b].range.offset, p.bindings[b].range.size};
      writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[b].dstBinding = b;
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    ctx_.vk.vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline->layout, 0,
                                      static_cast<uint32_t>(writes.size()), writes.data());
    if (!p.push.empty()) {
      ctx_.vk.vkCmdPushConstants(cmd, p.pipeline->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                 static_cast<uint32_t>(p.push.size()), p.push.data());
    }
    if (p.indirect.buffer != VK_NULL_HANDLE || p.groupCount > 0) {
      countDispatch(p, waited, counted);
      waited = false;
    }
    if (p.indirect.buffer != VK_NULL_HANDLE) {
      ctx_.vk.vkCmdDispatchIndirect(cmd, p.indirect.buffer, p.indirect.offset);
    } else if (p.groupCount > 0) {
      const uint32_t x = std::min(p.groupCount, maxX);
      const uint32_t y = (p.groupCount + x - 1) / x;
      ctx_.vk.vkCmdDispatch(cmd, x, y, 1);
    }
    if (timestamps != VK_NULL_HANDLE) {
      ctx_.vk.vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT, timestamps,
                                   static_cast<uint32_t>(2 * i + 1));
    }
    ctx_.endLabel(cmd);
  }
  globalBarrier(ctx_, cmd, kCompute, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT, sync.dstStage, sync.dstAccess);
  counted.barriers += 1;
  if (stats != nullptr) *stats += counted;
  return {};
}

Result<std::vector<PassTiming>> Recorder::readTimings(VkQueryPool timestamps) const {
  std::vector<uint64_t> stamps(2 * passes_.size());
  std::vector<PassTiming> out;
  if (timestamps == VK_NULL_HANDLE || passes_.empty()) return out;
  VKC_VK_TRY(ctx_.vk.vkGetQueryPoolResults(ctx_.device, timestamps, 0, static_cast<uint32_t>(stamps.size()),
                                           stamps.size() * sizeof(uint64_t), stamps.data(), sizeof(uint64_t),
                                           VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  for (size_t i = 0; i < passes_.size(); ++i) {
    out.push_back({passes_[i].name, ctx_.timestampDeltaNs(stamps[2 * i], stamps[2 * i + 1])});
  }
  return out;
}

}  // namespace vkc::detail
