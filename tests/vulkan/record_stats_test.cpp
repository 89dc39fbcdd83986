// RecordStats (context.h): what each stage's record() put into the command buffer, counted as it was
// recorded. The byte rule checked on hand-made passes; the bounds stage's figures checked against
// its pass table by hand; and the dispatch budget of a collision iteration, which is deterministic
// and so asserted here (timings never are): the 64x64 NvCloth drape's shape iteration, its self
// collision, a scene of 256 cloths of 1k particles against the same work in one or two cloths, and
// inter collision's narrow phase on both paths.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "inter_collision/inter_scene.h"
#include "shared/bounds.h"
#include "support/vulkan_fixture.h"
#include "vkcollide/scene.h"
#include "vulkan/recorder.h"

namespace vkc::test {
namespace {

using RecordStatsVulkan = VulkanTest;

TEST(RecordStats, DeclaredBytesOfOnePass) {
  // Reads count read and read-write ranges, writes count write and read-write ranges; a range the
  // pass does not touch (kNone) counts in neither; an indirect dispatch reads its 12-byte command and
  // has no workgroups known on the host.
  gpu::PassDecl decl{};
  detail::Pass p;
  p.decl = &decl;
  p.bindings = {{{VK_NULL_HANDLE, 0, 100}, detail::Access::kRead},
                {{VK_NULL_HANDLE, 0, 20}, detail::Access::kWrite},
                {{VK_NULL_HANDLE, 0, 7}, detail::Access::kReadWrite},
                {{VK_NULL_HANDLE, 0, 1000}, detail::Access::kNone}};
  p.extraUses = {{1, 0, 3, detail::Access::kWrite}};
  p.groupCount = 9;
  RecordStats s;
  detail::countDispatch(p, true, s);
  EXPECT_EQ(s.dispatches, 1u);
  EXPECT_EQ(s.dependentDispatches, 1u);
  EXPECT_EQ(s.indirectDispatches, 0u);
  EXPECT_EQ(s.workgroups, 9u);
  EXPECT_EQ(s.bytesRead, 107u);
  EXPECT_EQ(s.bytesWritten, 30u);
  p.indirect = {reinterpret_cast<VkBuffer>(uintptr_t{0x10}), 0, 12};
  detail::countDispatch(p, false, s);
  EXPECT_EQ(s.dispatches, 2u);
  EXPECT_EQ(s.dependentDispatches, 1u);
  EXPECT_EQ(s.indirectDispatches, 1u);
  EXPECT_EQ(s.workgroups, 9u);
  EXPECT_EQ(s.bytesRead, 107u + 107u + 12u);
  EXPECT_EQ(s.bytesWritten, 60u);
}

TEST_F(RecordStatsVulkan, BoundsRecordCountsWhatItsPassTableDeclares) {
  // Two cloths of 3000 and 2000 particles with previous positions: 3 tiles of 2048. Tiles pass: reads
  // particles, previous particles and the cloth table, writes 3 tile boxes; merge pass: reads the
  // table and the tile boxes, writes 2 boxes; a barrier between them (read-after-write).
  const std::vector<ClothRange> cloths = {{0, 3000}, {3000, 2000}};
  const uint32_t n = 5000;
  auto stage = BoundsStage::create(ctx(), {.cloths = cloths, .particleCount = n, .includePrevious = true});
  ASSERT_TRUE(stage.ok()) << stage.message();
  detail::Buffer parts = hostBuffer(n * sizeof(Float4)), prev = hostBuffer(n * sizeof(Float4));
  const uint64_t table = cloths.size() * sizeof(gpu::ClothRange), tiles = 3 * sizeof(gpu::BoundsTileBox),
                 boxes = cloths.size() * sizeof(gpu::Aabb), particles = uint64_t{n} * sizeof(Float4);
  for (int record = 0; record < 2; ++record) {
    SCOPED_TRACE(record == 0 ? "first record (uploads the cloth table)" : "second record");
    VkCommandBuffer cmd = beginCommandBuffer();
    const Status st = (*stage)->record(cmd, {.particles = parts.range(), .prevParticles = prev.range()});
    ASSERT_TRUE(st.ok()) << st.message();
    const RecordStats& s = (*stage)->lastRecordStats();
    EXPECT_EQ(s.dispatches, 2u);
    EXPECT_EQ(s.dependentDispatches, 2u);
    EXPECT_EQ(s.indirectDispatches, 0u);
    EXPECT_EQ(s.workgroups, 3u + 2u);
    EXPECT_EQ(s.bytesRead, 2 * particles + table + table + tiles);
    EXPECT_EQ(s.bytesWritten, tiles + boxes);
    // Opening, between the passes, closing; the first record also brackets the table's copy.
    EXPECT_EQ(s.barriers, record == 0 ? 5u : 3u);
    EXPECT_EQ(s.transfers, record == 0 ? 1u : 0u);
    EXPECT_EQ(s.transferBytes, record == 0 ? table : 0u);
    const VkCommandBuffer cmds[] = {cmd};
    submitRecorded(cmds);
  }
  // A refused record records nothing and says so.
  VkCommandBuffer cmd = beginCommandBuffer();
  EXPECT_FALSE((*stage)->record(cmd, {.particles = parts.range(), .prevParticles = prev.range(), .frame = 5}).ok());
  EXPECT_EQ((*stage)->lastRecordStats(), RecordStats{});
  freeCommandBuffer(cmd);
}

// The 64x64 NvCloth drape (bench/scenes), loaded once (the buffers' collider spans point into the scene).
const SceneBuffers& drape64() {
  struct Loaded {
    Scene scene;
    SceneBuffers buffers;
  };
  static const Loaded loaded = [] {
    Loaded l;
    auto scene = loadScene(std::string(VKC_SOURCE_DIR) + "/bench/scenes/nvcloth-drape-64.json");
    EXPECT_TRUE(scene.ok()) << scene.message();
    if (!scene.ok()) return l;
    l.scene = std::move(*scene);
    auto b = makeSceneBuffers(l.scene);
    EXPECT_TRUE(b.ok()) << b.message();
    if (b.ok()) l.buffers = std::move(*b);
    return l;
  }();
  return loaded.buffers;
}

RecordStats shapeStats(Context& ctx, SceneBuffers b, ShapeCollisionPath path, const ShapeCollisionSettings& settings) {
  auto stage = ShapeCollisionStage::create(
      ctx, {.cloths = b.cloths, .particleCount = static_cast<uint32_t>(b.particles.size()), .colliders = b.colliders, .path = path});
  EXPECT_TRUE(stage.ok()) << stage.message();
  if (!stage.ok()) return {};
  const Status st = (*stage)->run(b.shapeInput(settings));
  EXPECT_TRUE(st.ok()) << st.message();
  return (*stage)->lastRecordStats();
}

TEST_F(RecordStatsVulkan, DrapeShapeIterationDispatchBudget) {
  const SceneBuffers& drape = drape64();
  ASSERT_EQ(drape.particles.size(), 64u * 64u);
  for (const bool continuous : {false, true}) {
    SCOPED_TRACE(continuous ? "continuous" : "discrete");
    const ShapeCollisionSettings settings{.continuous = continuous};
    const RecordStats fused = shapeStats(ctx(), drape, ShapeCollisionPath::kAuto, settings);
    EXPECT_EQ(fused.dispatches, 1u);
    EXPECT_EQ(fused.dependentDispatches, 1u);
    // The general path: bounds tiles and merge, prepare, grid, masks, collide, each waiting for the last.
    const RecordStats general = shapeStats(ctx(), drape, ShapeCollisionPath::kGeneral, settings);
    EXPECT_EQ(general.dispatches, 6u);
    EXPECT_EQ(general.dependentDispatches, 6u);
    EXPECT_GE(fused.bytesRead, drape.particles.size() * sizeof(Float4));
    // The fused pass keeps the grid and its tables on chip: it declares fewer bytes than the six passes.
    EXPECT_LT(fused.bytesRead + fused.bytesWritten, general.bytesRead + general.bytesWritten);
  }
}

// `count` square cloths of side `side`, each over its own sphere and the ground plane.
SceneBuffers clothGrid(uint32_t count, uint32_t side) {
  SceneBuffers b;
  for (uint32_t c = 0; c < count; ++c) {
    const float x0 = 3.0f * static_cast<float>(c % 16), z0 = 3.0f * static_cast<float>(c / 16);
    b.cloths.push_back({static_cast<uint32_t>(b.particles.size()), side * side});
    for (uint32_t i = 0; i < side * side; ++i) {
      const Float4 p{x0 + 2.0f * static_cast<float>(i % side) / static_cast<float>(side), 0.05f,
                     z0 + 2.0f * static_cast<float>(i / side) / static_cast<float>(side), 1.0f};
      b.particles.push_back(p);
      b.prevParticles.push_back({p.x, p.y + 0.02f, p.z, 1.0f});
    }
  }
  static std::vector<Float4> sphere, ground;
  sphere = {{1.0f, -0.5f, 1.0f, 0.6f}};
  ground = {{0.0f, 1.0f, 0.0f, 0.5f}};
  b.colliders.resize(count);
  for (uint32_t c = 0; c < count; ++c) {
    b.colliders[c].spheres = sphere;
    b.colliders[c].planes = ground;
  }
  return b;
}

TEST_F(RecordStatsVulkan, ManyClothsRecordAsFewDispatchesAsOne) {
  // 256 cloths of 1024 particles record exactly the dispatches one cloth records, on both shape
  // paths; self collision (fused: 2 dispatches) as many as two cloths.
  const RecordStats one = shapeStats(ctx(), clothGrid(1, 32), ShapeCollisionPath::kFused, {});
  const RecordStats many = shapeStats(ctx(), clothGrid(256, 32), ShapeCollisionPath::kFused, {});
  EXPECT_EQ(one.dispatches, 1u);
  EXPECT_EQ(many.dispatches, 1u);
  EXPECT_EQ(many.dependentDispatches, 1u);
  EXPECT_EQ(many.workgroups, 256u);
  const RecordStats oneGeneral = shapeStats(ctx(), clothGrid(1, 32), ShapeCollisionPath::kGeneral, {});
  const RecordStats manyGeneral = shapeStats(ctx(), clothGrid(256, 32), ShapeCollisionPath::kGeneral, {});
  EXPECT_EQ(oneGeneral.dependentDispatches, manyGeneral.dependentDispatches);

  auto selfStats = [&](uint32_t cloths) {
    SceneBuffers b = clothGrid(cloths, 32);
    SelfCollisionStageCreateInfo ci;
    ci.cloths = b.cloths;
    ci.particleCount = static_cast<uint32_t>(b.particles.size());
    ci.path = SelfCollisionPath::kFused;
    auto stage = SelfCollisionStage::create(ctx(), ci);
    EXPECT_TRUE(stage.ok()) << stage.message();
    if (!stage.ok()) return RecordStats{};
    const Status st = (*stage)->run(b.selfInput({.distance = 0.05f, .stiffness = 1.0f}));
    EXPECT_TRUE(st.ok()) << st.message();
    return (*stage)->lastRecordStats();
  };
  const RecordStats selfOne = selfStats(1), selfMany = selfStats(256);
  EXPECT_EQ(selfOne.dispatches, 2u);
  EXPECT_EQ(selfMany.dispatches, 2u);
  EXPECT_EQ(selfMany.dependentDispatches, 2u);
}

TEST_F(RecordStatsVulkan, DrapeSelfCollisionDispatchBudget) {
  // The fused path (4096 particles fit lavapipe's 32 KiB of shared memory): the per-cloth sort
  // dispatch and the collide dispatch. The general path for one cloth: bounds 2, keys 1,
  // the radix sort's 4 digit passes of 3 (histogram, scan, scatter), gather 1, collide 1 = 17.
  SceneBuffers b = drape64();
  for (const SelfCollisionPath path : {SelfCollisionPath::kFused, SelfCollisionPath::kGeneral}) {
    SelfCollisionStageCreateInfo ci;
    ci.cloths = b.cloths;
    ci.particleCount = static_cast<uint32_t>(b.particles.size());
    ci.restPositions = !b.restPositions.empty();
    ci.path = path;
    auto stage = SelfCollisionStage::create(ctx(), ci);
    ASSERT_TRUE(stage.ok()) << stage.message();
    const bool fused = path == SelfCollisionPath::kFused;
    EXPECT_EQ((*stage)->path(), path);
    const Status st = (*stage)->run(b.selfInput({.distance = 0.0253968276f, .stiffness = 0.9f}));
    ASSERT_TRUE(st.ok()) << st.message();
    const RecordStats& s = (*stage)->lastRecordStats();
    EXPECT_EQ(s.dispatches, fused ? 2u : 17u);
    EXPECT_EQ(s.dependentDispatches, fused ? 2u : 17u);
    EXPECT_GE(s.bytesRead, 2 * b.particles.size() * sizeof(Float4));
  }
}

TEST_F(RecordStatsVulkan, InterCollisionNarrowPhaseDispatchBudget) {
  // 1024 particles as 2 cloths of 512 or 64 cloths of 16 (overlapping neighbours), 3 iterations:
  // the fused narrow phase records 1 dispatch per iteration, the general one 15 (keys, the radix
  // sort's 12, gather, apply), whatever the cloth count; bounds, broad phase, marking (6) and
  // write-back (1) on both.
  for (const uint32_t cloths : {2u, 64u}) {
    SCOPED_TRACE(std::to_string(cloths) + " cloths");
    InterScene s;
    std::mt19937 rng(cloths);
    for (uint32_t c = 0; c < cloths; ++c) {
      addRandomCloth(s, 1024 / cloths, 0.3f, {0.2f * static_cast<float>(c), 0, 0, 0}, {0, 0, 0, 1}, rng);
    }
    s.settings = {0.04f, 1.0f, 3};
    for (const InterCollisionPath path : {InterCollisionPath::kGeneral, InterCollisionPath::kFused}) {
      auto stage = InterCollisionStage::create(ctx(), stageInfo(s, 1, path));
      ASSERT_TRUE(stage.ok()) << stage.message();
      auto out = stageStep(**stage, s);
      ASSERT_TRUE(out.ok()) << out.message();
      const RecordStats& st = (*stage)->lastRecordStats();
      const uint64_t perIteration = path == InterCollisionPath::kFused ? 1 : 15;
      EXPECT_EQ(st.dispatches, 7 + 3 * perIteration);
      EXPECT_EQ(st.dependentDispatches, 7 + 3 * perIteration);
    }
  }
}

}  // namespace
}  // namespace vkc::test
