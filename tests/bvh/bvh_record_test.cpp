// Recording the BVH stage into the host's command buffer with the host's buffers: build then refit
// in one command buffer, frames in flight, the barrier plan, buffer checks, device limits, indices
// and trees the host could not check (device-side garbage), GPU timings and determinism.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "support/bvh_reference.h"
#include "support/integration.h"
#include "support/vulkan_fixture.h"
#include "vulkan/bvh_stage.h"

namespace vkc::test {
namespace {

using BvhRecordVulkan = VulkanTest;

// A host-visible buffer holding several arrays, each at an aligned offset.
struct Packed {
  detail::Buffer buffer;
  std::vector<BufferRange> ranges;
};

Packed pack(VulkanTest& t, VkDeviceSize align, std::initializer_list<std::pair<const void*, VkDeviceSize>> arrays,
            std::function<detail::Buffer(VkDeviceSize)> make) {
  VkDeviceSize total = 0;
  for (const auto& a : arrays) total += (a.second + align - 1) / align * align;
  Packed p{make(total), {}};
  VkDeviceSize off = 0;
  for (const auto& [data, bytes] : arrays) {
    if (data != nullptr) std::memcpy(static_cast<char*>(p.buffer.mapped()) + off, data, bytes);
    p.ranges.push_back({p.buffer.handle(), off, bytes});
    off += (bytes + align - 1) / align * align;
  }
  (void)t;
  return p;
}

template <class T>
void readInto(const Packed& p, size_t i, std::vector<T>& out) {
  std::memcpy(out.data(), static_cast<const char*>(p.buffer.mapped()) + p.ranges[i].offset, out.size() * sizeof(T));
}

class BvhStageVulkan : public BvhRecordVulkan {
 protected:
  VkDeviceSize align() { return std::max<VkDeviceSize>(ctx().deviceInfo().minStorageBufferOffsetAlignment, 16); }
  Packed packed(std::initializer_list<std::pair<const void*, VkDeviceSize>> arrays) {
    return pack(*this, align(), arrays, [&](VkDeviceSize b) { return hostBuffer(b); });
  }
};

TEST_F(BvhStageVulkan, BuildThenRefitInOneHostCommandBuffer) {
  const BvhMesh m = randomSmallTriangles(20'011, 31);
  BvhMesh moved = m;
  moved.prevVertices = m.vertices;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-0.5f, 0.5f);
  for (Float4& v : moved.vertices) v = {v.x + d(rng), v.y + d(rng), v.z + d(rng), 7.0f};
  const uint32_t n = m.primitiveCount(), nv = static_cast<uint32_t>(m.vertices.size());
  const VkDeviceSize vb = nv * sizeof(Float4);
  BvhTree built(n), refit(n);
  Packed in = packed({{m.vertices.data(), vb}, {moved.vertices.data(), vb}, {m.indices.data(), m.indices.size() * 4}});
  Packed out = packed({{nullptr, built.nodes.size() * sizeof(BvhNode)}, {nullptr, n * sizeof(Aabb)}, {nullptr, n * 4},
                       {nullptr, built.nodes.size() * sizeof(BvhNode)}, {nullptr, n * sizeof(Aabb)}});
  auto stage = BvhStage::create(ctx(), {.maxPrimitives = n + 100});
  ASSERT_TRUE(stage.ok()) << stage.message();
  VkCommandBuffer cmd = beginCommandBuffer();
  ASSERT_TRUE((*stage)->recordUpload(cmd).ok());
  BvhRecordInfo info{.primitiveCount = n, .vertexCount = nv, .vertices = in.ranges[0], .indices = in.ranges[2],
                     .nodes = out.ranges[0], .primitiveBoxes = out.ranges[1], .leafParents = out.ranges[2]};
  Status st = (*stage)->record(cmd, info);
  ASSERT_TRUE(st.ok()) << st.message();
  // init, boxes, morton, 12 sort passes, hierarchy, climb, finalize: each depends on the one before.
  EXPECT_EQ((*stage)->lastRecordStats().dispatches, 18u);
  EXPECT_EQ((*stage)->lastRecordStats().dependentDispatches, 18u);
  // Keep the built tree: copy it aside, then refit in place from the moved vertices (swept).
  const VkBufferCopy copies[] = {{out.ranges[0].offset, out.ranges[3].offset, out.ranges[0].size},
                                 {out.ranges[1].offset, out.ranges[4].offset, out.ranges[1].size}};
  detail::globalBarrier(impl(), cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                        VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_READ_BIT);
  impl().vk.vkCmdCopyBuffer(cmd, out.buffer.handle(), out.buffer.handle(), 2, copies);
  info.update = BvhUpdate::kRefit;
  info.vertices = in.ranges[1];
  info.prevVertices = in.ranges[0];
  info.sync.srcStage = VK_PIPELINE_STAGE_2_COPY_BIT;
  info.sync.srcAccess = VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT;
  info.sync.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT;
  info.sync.dstAccess = VK_ACCESS_2_HOST_READ_BIT;
  st = (*stage)->record(cmd, info);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ((*stage)->lastRecordStats().dispatches, 3u);  // boxes, climb, finalize
  submitRecorded({&cmd, 1});

  readInto(out, 3, built.nodes);
  readInto(out, 4, built.primitiveBoxes);
  readInto(out, 2, built.leafParents);
  BvhTree want(n);
  ASSERT_TRUE(buildBvhCpu(want.input(m), Backend::kCpuScalar).ok());
  EXPECT_TRUE(sameTree(built, want));
  readInto(out, 0, refit.nodes);
  readInto(out, 1, refit.primitiveBoxes);
  readInto(out, 2, refit.leafParents);
  ASSERT_TRUE(refitBvhCpu(want.input(moved), Backend::kCpuScalar).ok());
  EXPECT_TRUE(sameTree(refit, want));
  EXPECT_TRUE(validTree(moved, refit, false));
}

TEST_F(BvhStageVulkan, TwoFramesInFlightUseTheirOwnScratchAndOutputs) {
  const uint32_t frames = 2, n = 3001;
  auto stage = BvhStage::create(ctx(), {.maxPrimitives = n, .framesInFlight = frames});
  ASSERT_TRUE(stage.ok()) << stage.message();
  EXPECT_NE((*stage)->nodesBuffer(0).buffer, (*stage)->nodesBuffer(1).buffer);
  std::vector<BvhMesh> meshes;
  std::vector<Packed> ins, outs;
  std::vector<VkCommandBuffer> cmds;
  for (uint32_t f = 0; f < frames; ++f) {
    meshes.push_back(randomSoup(n - f * 1000, 2000, 40 + f));
    const BvhMesh& m = meshes.back();
    const uint32_t count = m.primitiveCount();
    ins.push_back(packed({{m.vertices.data(), m.vertices.size() * sizeof(Float4)}, {m.indices.data(), m.indices.size() * 4}}));
    outs.push_back(packed({{nullptr, bvhNodeCount(count) * sizeof(BvhNode)}, {nullptr, count * sizeof(Aabb)}, {nullptr, count * 4}}));
    cmds.push_back(beginCommandBuffer());
    const Status st = (*stage)->record(cmds.back(), {.primitiveCount = count, .vertexCount = 2000,
                                                     .vertices = ins[f].ranges[0], .indices = ins[f].ranges[1],
                                                     .frame = f,
                                                     .sync = {.dstStage = VK_PIPELINE_STAGE_2_COPY_BIT,
                                                              .dstAccess = VK_ACCESS_2_TRANSFER_READ_BIT}});
    ASSERT_TRUE(st.ok()) << st.message();
    const BufferRange own[] = {(*stage)->nodesBuffer(f), (*stage)->primitiveBoxesBuffer(f), (*stage)->leafParentsBuffer(f)};
    for (int a = 0; a < 3; ++a) {
      const VkBufferCopy region{0, outs[f].ranges[a].offset, outs[f].ranges[a].size};
      impl().vk.vkCmdCopyBuffer(cmds.back(), own[a].buffer, outs[f].buffer.handle(), 1, &region);
    }
  }
  submitRecorded(cmds);
  for (uint32_t f = 0; f < frames; ++f) {
    const uint32_t count = meshes[f].primitiveCount();
    BvhTree got(count), want(count);
    readInto(outs[f], 0, got.nodes);
    readInto(outs[f], 1, got.primitiveBoxes);
    readInto(outs[f], 2, got.leafParents);
    ASSERT_TRUE(buildBvhCpu(want.input(meshes[f]), Backend::kCpuScalar).ok());
    EXPECT_TRUE(sameTree(got, want)) << "frame " << f;
  }
  // A refit of frame 1's own tree with frame 0's count is refused: that tree has 2001 primitives.
  VkCommandBuffer cmd = beginCommandBuffer();
  expectErrorNaming((*stage)->record(cmd, {.update = BvhUpdate::kRefit, .primitiveCount = n, .vertexCount = 2000,
                                           .vertices = ins[0].ranges[0], .indices = ins[0].ranges[1], .frame = 1}),
                    "frame 1's own tree was built with 2001 primitives");
  expectErrorNaming((*stage)->record(cmd, {.primitiveCount = 10, .vertexCount = 2000, .vertices = ins[0].ranges[0],
                                           .indices = ins[0].ranges[1], .frame = 2}),
                    "BvhRecordInfo::frame is 2");
  freeCommandBuffer(cmd);
}

TEST_F(BvhStageVulkan, RefitOfANeverBuiltFrameIsRefused) {
  auto stage = BvhStage::create(ctx(), {.maxPrimitives = 10});
  ASSERT_TRUE(stage.ok());
  detail::Buffer b = hostBuffer(4096);
  VkCommandBuffer cmd = beginCommandBuffer();
  expectErrorNaming((*stage)->record(cmd, {.update = BvhUpdate::kRefit, .primitiveCount = 10, .vertexCount = 30,
                                           .vertices = b.range(), .indices = b.range()}),
                    "frame 0's own tree was never built");
  freeCommandBuffer(cmd);
}

TEST_F(BvhStageVulkan, RejectsBadCountsAndBuffersBeforeRecording) {
  auto stage = BvhStage::create(ctx(), {.maxPrimitives = 100});
  ASSERT_TRUE(stage.ok());
  detail::Buffer b = hostBuffer(100 * 3 * 4);
  VkCommandBuffer cmd = beginCommandBuffer();
  const BvhRecordInfo good{.primitiveCount = 100, .vertexCount = 75, .vertices = b.range(), .indices = b.range()};
  BvhRecordInfo bad = good;
  bad.primitiveCount = 0;
  expectErrorNaming((*stage)->record(cmd, bad), "BvhRecordInfo::primitiveCount is 0");
  EXPECT_EQ((*stage)->lastRecordStats(), RecordStats{});
  bad.primitiveCount = 101;
  expectErrorNaming((*stage)->record(cmd, bad), "BvhRecordInfo::primitiveCount is 101: must be in 1..maxPrimitives (100)");
  bad = good;
  bad.vertexCount = 76;
  expectErrorNaming((*stage)->record(cmd, bad), "BvhRecordInfo::vertices holds 1200 bytes; the stage needs 1216");
  bad = good;
  bad.vertices = {};
  expectErrorNaming((*stage)->record(cmd, bad), "BvhRecordInfo::vertices.buffer is null");
  bad = good;
  bad.indices.size = 1196;
  expectErrorNaming((*stage)->record(cmd, bad), "BvhRecordInfo::indices holds 1196 bytes; the stage needs 1200");
  bad = good;
  bad.nodes = {b.handle(), 0, 99 * sizeof(BvhNode) - 1};
  expectErrorNaming((*stage)->record(cmd, bad), "BvhRecordInfo::nodes");
  bad = good;
  bad.prevVertices = {b.handle(), 4, 1200};
  expectErrorNaming((*stage)->record(cmd, bad), "minStorageBufferOffsetAlignment");
  bad = good;
  bad.vertexCount = 0;
  expectErrorNaming((*stage)->record(cmd, bad), "BvhRecordInfo::vertexCount is 0");
  EXPECT_FALSE((*stage)->record(VK_NULL_HANDLE, good).ok());
  freeCommandBuffer(cmd);
}

TEST_F(BvhStageVulkan, CreateChecksItsLimits) {
  expectErrorNaming(BvhStage::create(ctx(), {.maxPrimitives = 0}).status(), "BvhStageCreateInfo::maxPrimitives is 0");
  expectErrorNaming(BvhStage::create(ctx(), {.maxPrimitives = 10, .verticesPerPrimitive = 1}).status(),
                    "BvhStageCreateInfo::verticesPerPrimitive is 1");
  expectErrorNaming(BvhStage::create(ctx(), {.maxPrimitives = 10, .framesInFlight = 0}).status(),
                    "BvhStageCreateInfo::framesInFlight is 0");
  // Nodes of 48 bytes in one binding: one primitive more than maxStorageBufferRange allows.
  const uint64_t range = ctx().deviceInfo().maxStorageBufferRange;
  const uint32_t over = static_cast<uint32_t>(std::min<uint64_t>(range / 48 + 2, kBvhMaxPrimitives));
  auto tooMany = BvhStage::memoryRequirements(ctx(), {.maxPrimitives = over});
  ASSERT_FALSE(tooMany.ok());
  EXPECT_EQ(tooMany.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(tooMany.message().find("maxStorageBufferRange"), std::string::npos) << tooMany.message();
  for (uint32_t frames : {1u, 3u}) {
    ASSERT_TRUE(expectMemoryRequirementsMatchCreate<BvhStage>(ctx(), impl(), BvhStageCreateInfo{.maxPrimitives = 5000,
                                                              .framesInFlight = frames}, "frames " + std::to_string(frames)));
  }
}

TEST_F(BvhStageVulkan, BarrierPlanOfABuildAndARefit) {
  auto stage = BvhStage::create(ctx(), {.maxPrimitives = 5000});
  ASSERT_TRUE(stage.ok());
  detail::Buffer b = hostBuffer(5000 * 16);
  const BvhRecordInfo info{.primitiveCount = 5000, .vertexCount = 5000, .vertices = b.range(), .indices = b.range()};
  auto plan = detail::bvhBarrierPlan(**stage, info);
  ASSERT_TRUE(plan.ok()) << plan.message();
  // init, boxes, morton, 4 x (histogram, scan, scatter) for 30 key bits, hierarchy, climb, finalize.
  ASSERT_EQ(plan->size(), 3u + 12u + 3u);
  EXPECT_FALSE((*plan)[0].needed);
  for (size_t i = 1; i < plan->size(); ++i) EXPECT_TRUE((*plan)[i].needed) << "pass " << i;
  BvhRecordInfo refit = info;
  refit.update = BvhUpdate::kRefit;
  detail::Buffer tree = hostBuffer(5000 * sizeof(BvhNode));
  refit.nodes = tree.range();
  refit.primitiveBoxes = tree.range();
  refit.leafParents = b.range();
  // (The host's buffers: the stage cannot tell whether they hold a tree; only its own are tracked.)
  refit.vertices = hostBuffer(5000 * 16).range();
  auto refitPlan = detail::bvhBarrierPlan(**stage, refit);
  ASSERT_TRUE(refitPlan.ok()) << refitPlan.message();
  EXPECT_EQ(refitPlan->size(), 3u);  // boxes, climb, finalize
}

TEST_F(BvhStageVulkan, DeviceSideGarbageNeverReadsOutOfBoundsOrHangs) {
  // Indices beyond vertexCount (the host cannot see them): they read the last vertex, so the tree is
  // the CPU tree of the mesh with those indices clamped.
  BvhMesh m = randomSoup(5000, 1000, 50);
  std::vector<uint32_t> wild = m.indices;
  std::mt19937 rng(6);
  for (int i = 0; i < 300; ++i) wild[rng() % wild.size()] = static_cast<uint32_t>(1000 + rng() % 100000);
  wild[7] = 0xFFFFFFFFu;
  const uint32_t n = m.primitiveCount();
  Packed in = packed({{m.vertices.data(), m.vertices.size() * sizeof(Float4)}, {wild.data(), wild.size() * 4}});
  Packed out = packed({{nullptr, bvhNodeCount(n) * sizeof(BvhNode)}, {nullptr, n * sizeof(Aabb)}, {nullptr, n * 4}});
  auto stage = BvhStage::create(ctx(), {.maxPrimitives = n});
  ASSERT_TRUE(stage.ok());
  BvhRecordInfo info{.primitiveCount = n, .vertexCount = 1000, .vertices = in.ranges[0], .indices = in.ranges[1],
                     .nodes = out.ranges[0], .primitiveBoxes = out.ranges[1], .leafParents = out.ranges[2],
                     .sync = {.dstStage = VK_PIPELINE_STAGE_2_HOST_BIT, .dstAccess = VK_ACCESS_2_HOST_READ_BIT}};
  submit([&](VkCommandBuffer cmd) { ASSERT_TRUE((*stage)->record(cmd, info).ok()); });
  BvhTree got(n), want(n);
  readInto(out, 0, got.nodes);
  readInto(out, 1, got.primitiveBoxes);
  readInto(out, 2, got.leafParents);
  BvhMesh clamped = m;
  for (size_t k = 0; k < wild.size(); ++k) clamped.indices[k] = std::min(wild[k], 999u);
  ASSERT_TRUE(buildBvhCpu(want.input(clamped), Backend::kCpuScalar).ok());
  EXPECT_TRUE(sameTree(got, want));

  // A refit of random bytes posing as a tree: it finishes (bounded climbs), reads and writes nothing
  // outside the bindings (the validation layer would not see that, but the clamps are in the shader),
  // and the context stays usable.
  auto* bytes = static_cast<uint32_t*>(out.buffer.mapped());
  for (VkDeviceSize i = 0; i < out.buffer.range().size / 4; ++i) bytes[i] = static_cast<uint32_t>(rng());
  info.update = BvhUpdate::kRefit;
  info.indices = in.ranges[1];
  submit([&](VkCommandBuffer cmd) { ASSERT_TRUE((*stage)->record(cmd, info).ok()); });
  // And a correct build afterwards still gives the right tree.
  submit([&](VkCommandBuffer cmd) {
    BvhRecordInfo again = info;
    again.update = BvhUpdate::kBuild;
    ASSERT_TRUE((*stage)->record(cmd, again).ok());
  });
  readInto(out, 0, got.nodes);
  readInto(out, 1, got.primitiveBoxes);
  readInto(out, 2, got.leafParents);
  EXPECT_TRUE(sameTree(got, want));
}

TEST_F(BvhStageVulkan, RunReportsTimingsAndReruns) {
  const BvhMesh m = randomSmallTriangles(40'000, 60);
  auto stage = BvhStage::create(ctx(), {.maxPrimitives = 40'000});
  ASSERT_TRUE(stage.ok());
  BvhTree first(40'000), again(40'000);
  ASSERT_TRUE((*stage)->run(first.input(m)).ok());
  const auto& t = (*stage)->timings();
  ASSERT_EQ(t.size(), 18u);
  EXPECT_STREQ(t[0].name, "vkc.bvh.init");
  EXPECT_STREQ(t[2].name, "vkc.bvh.morton");
  EXPECT_STREQ(t[15].name, "vkc.bvh.hierarchy");
  EXPECT_STREQ(t[16].name, "vkc.bvh.climb");
  EXPECT_STREQ(t[17].name, "vkc.bvh.finalize");
  for (int i = 0; i < 20; ++i) {
    const Status s = (*stage)->run(again.input(m));
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(sameTree(first, again)) << "rerun " << i;
  }
  // run() rejects input of another shape and leaves the stage usable.
  BvhMesh segs = randomSoup(10, 10, 1, 1.0f, 2);
  BvhTree s(10);
  expectErrorNaming((*stage)->run(s.input(segs)), "verticesPerPrimitive 2 differs");
  BvhMesh big = randomSoup(40'001, 100, 1);
  BvhTree bt(40'001);
  expectErrorNaming((*stage)->run(bt.input(big)), "exceed the stage's maxPrimitives 40000");
  ASSERT_TRUE((*stage)->run(again.input(m)).ok());
  EXPECT_TRUE(sameTree(first, again));
}

}  // namespace
}  // namespace vkc::test
