// Self-collision conformance: one scene on every backend against the CPU scalar reference. Sorted
// keys, sorted particles, neighbour counts and pair sets equal exactly; positions within
// kSelfCollisionTolerance (CPU SIMD: bitwise). On Vulkan, 100 reruns are bitwise identical; the
// recorded path works on the host's own buffers.
#include <gtest/gtest.h>

#include <cstring>

#include "self_collision_support.h"
#include "support/executors.h"
#include "shared/self_collision.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using SelfCollisionConformance = BackendTest;

// The threaded CPU backend: `scene` on every test executor gives `want` (this backend's
// single-threaded particles and debug), bit for bit.
void expectThreadedEqual(Backend backend, const SelfScene& scene, const std::vector<Float4>& want,
                         const SelfCollisionDebug& wantDebug) {
  if (backend == Backend::kVulkan) return;
  for (const TestExecutor& e : testExecutors()) {
    SelfScene t = scene;
    SelfCollisionDebug debug;
    const Status st = collideSelfCpu(t.input(), backend, *e.executor, &debug);
    ASSERT_TRUE(st.ok()) << e.name << ": " << st.message();
    EXPECT_EQ(std::memcmp(t.particles.data(), want.data(), want.size() * sizeof(Float4)), 0) << e.name;
    EXPECT_EQ(debug.sortedKeys, wantDebug.sortedKeys) << e.name;
    EXPECT_EQ(debug.sortedParticles, wantDebug.sortedParticles) << e.name;
    EXPECT_EQ(debug.clothFirstItem, wantDebug.clothFirstItem) << e.name;
    EXPECT_EQ(debug.neighbourCounts, wantDebug.neighbourCounts) << e.name;
    EXPECT_EQ(debug.pairs, wantDebug.pairs) << e.name;
    EXPECT_EQ(debug.directedPairs, wantDebug.directedPairs) << e.name;
  }
}

// The Vulkan backend: both recorded paths (SelfCollisionPath kGeneral and kFused, whichever kAuto
// took above) give `want` (that run's particles and debug), bit for bit.
void expectBothGpuPathsEqual(Backend backend, Context* ctx, const SelfScene& scene, const std::vector<Float4>& want,
                             const SelfCollisionDebug& wantDebug) {
  if (backend != Backend::kVulkan) return;
  for (const SelfCollisionPath path : {SelfCollisionPath::kGeneral, SelfCollisionPath::kFused}) {
    SCOPED_TRACE(path == SelfCollisionPath::kFused ? "fused path" : "general path");
    SelfScene t = scene;
    SelfCollisionDebug debug;
    runSelfStage(*ctx, t, path, &debug);
    EXPECT_EQ(std::memcmp(t.particles.data(), want.data(), want.size() * sizeof(Float4)), 0);
    EXPECT_EQ(debug.sortedKeys, wantDebug.sortedKeys);
    EXPECT_EQ(debug.sortedParticles, wantDebug.sortedParticles);
    EXPECT_EQ(debug.neighbourCounts, wantDebug.neighbourCounts);
    EXPECT_EQ(debug.pairs, wantDebug.pairs);
  }
}

// Four cloths (a crumpled one with rest positions... rest positions are scene-wide, so every cloth
// has them), one with a subset, an empty one, one of a single particle, and counts that are not
// multiples of the group size.
SelfScene conformanceScene() {
  SelfScene s;
  std::vector<Float4> rest;
  crumpledCloth(23, 0.04f, 4, s.particles, rest);
  s.rest = rest;
  s.cloths.push_back({0, static_cast<uint32_t>(s.particles.size())});
  s.cloths.push_back({static_cast<uint32_t>(s.particles.size()), 0});
  const uint32_t first = static_cast<uint32_t>(s.particles.size());
  const auto cloud = randomCloud(301, 4, {0, 0, 0, 0}, {0.5f, 0.3f, 0.4f, 0});
  s.particles.insert(s.particles.end(), cloud.begin(), cloud.end());
  s.rest.insert(s.rest.end(), cloud.begin(), cloud.end());
  for (size_t i = first; i < s.particles.size(); ++i) s.rest[i].x += 10.0f * float(i);  // far apart at rest
  s.cloths.push_back({first, 301});
  s.cloths.push_back({static_cast<uint32_t>(s.particles.size()), 1});
  s.particles.push_back({0.1f, 0.1f, 0.1f, 1.0f});
  s.rest.push_back({0.1f, 0.1f, 0.1f, 1.0f});
  s.subsets.resize(4);
  for (uint32_t i = 0; i < 301; i += 3) s.subsets[2].push_back(i);
  for (size_t i = 0; i < s.particles.size(); i += 7) s.particles[i].w = 0.25f * float(i % 5);  // some fixed
  s.settings = {0.045f, 0.9f};
  return s;
}

TEST_P(SelfCollisionConformance, MatchesCpuScalar) {
  SelfScene ref = conformanceScene();
  SelfCollisionDebug want;
  ASSERT_TRUE(collideSelfCpu(ref.input(), Backend::kCpuScalar, &want).ok());
  ASSERT_GT(want.pairs.size(), 100u);

  SelfScene s = conformanceScene();
  SelfCollisionDebug got;
  const Status st = collideSelf(backend(), ctx(), s.input(), &got);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(got.sortedKeys, want.sortedKeys);
  EXPECT_EQ(got.sortedParticles, want.sortedParticles);
  EXPECT_EQ(got.clothFirstItem, want.clothFirstItem);
  EXPECT_EQ(got.neighbourCounts, want.neighbourCounts);
  EXPECT_EQ(got.pairs, want.pairs);
  EXPECT_EQ(got.directedPairs, want.directedPairs);
  size_t moved = 0;
  for (size_t i = 0; i < s.particles.size(); ++i) {
    const Float4 a = s.particles[i], b = ref.particles[i];
    const float tol = kSelfCollisionTolerance * (1.0f + std::max({std::abs(b.x), std::abs(b.y), std::abs(b.z)}));
    EXPECT_NEAR(a.x, b.x, tol) << i;
    EXPECT_NEAR(a.y, b.y, tol) << i;
    EXPECT_NEAR(a.z, b.z, tol) << i;
    EXPECT_EQ(a.w, b.w) << i;
    if (backend() == Backend::kCpuSimd) {
      EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << i;
    }
    moved += std::memcmp(&b, &conformanceScene().particles[i], sizeof b) != 0;
  }
  EXPECT_GT(moved, 50u);
  expectThreadedEqual(backend(), conformanceScene(), s.particles, got);
  expectBothGpuPathsEqual(backend(), ctx(), conformanceScene(), s.particles, got);
}

// The keys sort as (key, item) within each cloth: checked against the shared key function directly.
TEST_P(SelfCollisionConformance, SortedKeysAreTheCellKeysInOrder) {
  SelfScene s = conformanceScene();
  const std::vector<Float4> before = s.particles;
  SelfCollisionDebug got;
  ASSERT_TRUE(collideSelf(backend(), ctx(), s.input(), &got).ok());
  for (size_t c = 0; c < s.cloths.size(); ++c) {
    const uint32_t begin = got.clothFirstItem[c];
    const uint32_t end = c + 1 < s.cloths.size() ? got.clothFirstItem[c + 1] : uint32_t(got.sortedKeys.size());
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = 0; i < s.cloths[c].count; ++i) {
      const Float4& p = before[s.cloths[c].first + i];
      const float v[3] = {p.x, p.y, p.z};
      for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], v[a]), hi[a] = std::max(hi[a], v[a]);
    }
    const gpu::SelfGrid g = gpu::makeSelfGrid({lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}, s.settings.distance);
    for (uint32_t k = begin; k < end; ++k) {
      const Float4& p = before[got.sortedParticles[k]];
      EXPECT_EQ(got.sortedKeys[k], gpu::selfCellKey(g, {p.x, p.y, p.z})) << k;
      const uint32_t key = got.sortedKeys[k];
      EXPECT_GE(key & 0xFFFF, 1u);
      EXPECT_LE(key & 0xFFFF, 65534u);
      EXPECT_GE((key >> 16) & 0xFF, 1u);
      EXPECT_LE((key >> 16) & 0xFF, 254u);
      EXPECT_GE(key >> 24, 1u);
      EXPECT_LE(key >> 24, 254u);
      if (k > begin) {
        EXPECT_LE(got.sortedKeys[k - 1], key) << k;
      }
    }
  }
}

// No 16-bit limit: one cloth of 90 000 particles (NvCloth stops at 65 532), pairs across the whole of it.
TEST_P(SelfCollisionConformance, MoreThan65535ParticlesInOneCloth) {
  SelfScene ref;
  crumpledCloth(300, 0.01f, 9, ref.particles, ref.rest);
  ref.cloths = {{0, 90000}};
  ref.settings = {0.008f, 1.0f};
  SelfScene s = ref;
  SelfCollisionDebug want, got;
  ASSERT_TRUE(collideSelfCpu(ref.input(), Backend::kCpuScalar, &want).ok());
  const Status st = collideSelf(backend(), ctx(), s.input(), &got);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(got.sortedKeys, want.sortedKeys);
  EXPECT_EQ(got.sortedParticles, want.sortedParticles);
  ASSERT_EQ(got.pairs, want.pairs);
  size_t high = 0;
  for (const auto& p : got.pairs) high += p[0] < 65536 && p[1] >= 65536;
  EXPECT_GT(high, 100u) << "pairs between particles below and above index 65536";
  for (size_t i = 0; i < s.particles.size(); ++i) {
    ASSERT_NEAR(s.particles[i].x, ref.particles[i].x, kSelfCollisionTolerance * 4) << i;
    ASSERT_NEAR(s.particles[i].z, ref.particles[i].z, kSelfCollisionTolerance * 4) << i;
  }
  SelfScene start;
  crumpledCloth(300, 0.01f, 9, start.particles, start.rest);
  start.cloths = {{0, 90000}};
  start.settings = {0.008f, 1.0f};
  expectThreadedEqual(backend(), start, s.particles, got);
}

INSTANTIATE_TEST_SUITE_P(Backends, SelfCollisionConformance, VKC_ALL_BACKENDS);

// Runs `scalar` on kCpuScalar and `simd` (a copy of it) on kCpuSimd and expects every debug array
// and the written particles bitwise equal, with more than `minPairs` pairs found.
void expectSimdIsScalarBitwise(SelfScene& scalar, SelfScene& simd, SelfCollisionDebug& want,
                               SelfCollisionDebug& got, size_t minPairs) {
  ASSERT_TRUE(collideSelfCpu(scalar.input(), Backend::kCpuScalar, &want).ok());
  ASSERT_TRUE(collideSelfCpu(simd.input(), Backend::kCpuSimd, &got).ok());
  EXPECT_GT(want.pairs.size(), minPairs);
  EXPECT_EQ(got.sortedKeys, want.sortedKeys);
  EXPECT_EQ(got.sortedParticles, want.sortedParticles);
  EXPECT_EQ(got.neighbourCounts, want.neighbourCounts);
  EXPECT_EQ(got.pairs, want.pairs);
  EXPECT_EQ(std::memcmp(simd.particles.data(), scalar.particles.data(),
                        scalar.particles.size() * sizeof(Float4)), 0);
}

// The NvCloth drapes (65 025 and 4 096 particles: the SIMD backend's radix and column-counting sorts,
// its short-block and dense sweeps): SIMD equals scalar bit for bit, keys and pairs exactly.
TEST(SelfCollisionSimd, NvClothDrapesAreBitwiseTheScalarResult) {
  for (const char* file : {"nvcloth-drape-64.json", "nvcloth-drape-255.json.gz"}) {
    SCOPED_TRACE(file);
    SelfScene s = benchSceneForSelf(file);
    ASSERT_FALSE(s.particles.empty());
    SelfScene simd = s;
    SelfCollisionDebug want, got;
    ASSERT_NO_FATAL_FAILURE(expectSimdIsScalarBitwise(s, simd, want, got, 40));
    expectThreadedEqual(Backend::kCpuSimd, benchSceneForSelf(file), simd.particles, got);
    expectThreadedEqual(Backend::kCpuScalar, benchSceneForSelf(file), s.particles, want);
  }
}

// Cloths of kSelfSortLargeMin (262 144) items and more take the SIMD backend's large-cloth path: the
// sort by key range with the items implied (not written by the key pass), the chunked sweep on
// several threads, the keys' sentinels read in place when the large cloth is the last one (else a
// copy): SIMD equals scalar bit for bit, before and after a small cloth, on every test executor.
TEST(SelfCollisionSimd, LargeClothsAreBitwiseTheScalarResult) {
  for (const bool largeFirst : {true, false}) {
    SCOPED_TRACE(largeFirst ? "large cloth first" : "large cloth last");
    SelfScene s;
    auto add = [&](uint32_t side, uint32_t seed) {
      s.cloths.push_back({static_cast<uint32_t>(s.particles.size()), side * side});
      crumpledCloth(side, 0.01f, seed, s.particles, s.rest);
    };
    add(largeFirst ? 520 : 30, 5);
    add(largeFirst ? 30 : 520, 6);
    s.settings = {0.008f, 1.0f};
    SelfScene simd = s;
    SelfCollisionDebug want, got;
    ASSERT_NO_FATAL_FAILURE(expectSimdIsScalarBitwise(s, simd, want, got, 10000));
    SelfScene start = s;
    start.particles.clear();
    start.rest.clear();
    crumpledCloth(largeFirst ? 520 : 30, 0.01f, 5, start.particles, start.rest);
    crumpledCloth(largeFirst ? 30 : 520, 0.01f, 6, start.particles, start.rest);
    expectThreadedEqual(Backend::kCpuSimd, start, simd.particles, got);
  }
}

class SelfCollisionVulkan : public VulkanTest {};

TEST_F(SelfCollisionVulkan, HundredRerunsAreBitwiseIdentical) {
  SelfScene base;
  crumpledCloth(16, 0.05f, 6, base.particles, base.rest);
  base.cloths = {{0, 200}, {200, 56}};
  base.settings = {0.06f, 0.9f};
  SelfCollisionStageCreateInfo ci;
  ci.cloths = base.cloths;
  ci.particleCount = static_cast<uint32_t>(base.particles.size());
  ci.restPositions = true;
  auto stage = SelfCollisionStage::create(ctx(), ci);
  ASSERT_TRUE(stage.ok()) << stage.message();
  std::vector<Float4> first;
  SelfCollisionDebug firstDebug;
  for (int run = 0; run < 100; ++run) {
    SelfScene s = base;
    SelfCollisionDebug debug;
    ASSERT_TRUE((*stage)->run(s.input(), &debug).ok());
    if (run == 0) {
      first = s.particles;
      firstDebug = debug;
      EXPECT_NE(std::memcmp(first.data(), base.particles.data(), first.size() * sizeof(Float4)), 0);
      EXPECT_FALSE(firstDebug.pairs.empty());
    } else {
      ASSERT_EQ(std::memcmp(first.data(), s.particles.data(), first.size() * sizeof(Float4)), 0) << "run " << run;
      ASSERT_EQ(debug.sortedKeys, firstDebug.sortedKeys) << "run " << run;
      ASSERT_EQ(debug.sortedParticles, firstDebug.sortedParticles) << "run " << run;
      ASSERT_EQ(debug.neighbourCounts, firstDebug.neighbourCounts) << "run " << run;
      ASSERT_EQ(debug.pairs, firstDebug.pairs) << "run " << run;
    }
  }
  EXPECT_FALSE((*stage)->timings().empty());
}

// run() takes the stage's layout in either spelling of "every particle": no subsets, or an empty
// subset per cloth; a different subset is refused.
TEST_F(SelfCollisionVulkan, RunAcceptsEitherSpellingOfNoSubset) {
  SelfScene s;
  crumpledCloth(10, 0.05f, 3, s.particles, s.rest);
  s.rest.clear();
  s.cloths = {{0, 60}, {60, 40}};
  s.settings = {0.06f, 1.0f};
  SelfCollisionStageCreateInfo ci;
  ci.cloths = s.cloths;
  ci.particleCount = static_cast<uint32_t>(s.particles.size());
  auto stage = SelfCollisionStage::create(ctx(), ci);
  ASSERT_TRUE(stage.ok()) << stage.message();
  SelfScene ref = s;
  ASSERT_TRUE((*stage)->run(ref.input()).ok());
  s.subsets = {{}, {}};
  ASSERT_TRUE((*stage)->run(s.input()).ok());
  EXPECT_EQ(std::memcmp(s.particles.data(), ref.particles.data(), s.particles.size() * sizeof(Float4)), 0);
  s.subsets = {{}, {1, 2, 3}};
  const Status st = (*stage)->run(s.input());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("subsets"), std::string::npos) << st.message();
}

// A layout whose particles do not fit one storage buffer binding is refused at create(), naming the
// field and the device's limit (nothing is allocated on the device).
TEST_F(SelfCollisionVulkan, LayoutsBeyondTheBufferRangeAreRefused) {
  const uint64_t range = ctx().deviceInfo().maxStorageBufferRange;
  ASSERT_LT(range / 16 + 1, uint64_t{0xFFFFFFFF});
  const uint32_t tooMany = static_cast<uint32_t>(range / 16 + 1);
  const ClothRange cloths[] = {{0, tooMany}};
  SelfCollisionStageCreateInfo ci;
  ci.cloths = cloths;
  ci.particleCount = tooMany;
  auto stage = SelfCollisionStage::create(ctx(), ci);
  ASSERT_FALSE(stage.ok());
  EXPECT_EQ(stage.error().code, ErrorCode::kLimitExceeded);
  EXPECT_NE(stage.message().find("SelfCollisionStageCreateInfo::particleCount"), std::string::npos) << stage.message();
  EXPECT_NE(stage.message().find("maxStorageBufferRange"), std::string::npos) << stage.message();
}

TEST_F(SelfCollisionVulkan, RecordsIntoHostBuffersAndRejectsBadRecords) {
  SelfScene s;
  crumpledCloth(12, 0.05f, 7, s.particles, s.rest);
  s.cloths = {{0, static_cast<uint32_t>(s.particles.size())}};
  s.settings = {0.04f, 1.0f};
  SelfScene ref = s;
  ASSERT_TRUE(collideSelfCpu(ref.input(), Backend::kCpuScalar).ok());

  SelfCollisionStageCreateInfo ci;
  ci.cloths = s.cloths;
  ci.particleCount = static_cast<uint32_t>(s.particles.size());
  auto stage = SelfCollisionStage::create(ctx(), ci);
  ASSERT_TRUE(stage.ok()) << stage.message();
  auto& alloc = *impl().allocator;
  const VkDeviceSize bytes = s.particles.size() * sizeof(Float4);
  auto host = alloc.createBuffer(bytes, detail::MemoryUsage::kUpload);
  ASSERT_TRUE(host.ok());
  std::memcpy(host->mapped(), s.particles.data(), bytes);

  VkCommandBuffer cmd = beginCommandBuffer();
  SelfCollisionRecordInfo bad;
  bad.particles = {host->handle(), 0, bytes - 16};
  bad.settings = s.settings;
  Status st = (*stage)->record(cmd, bad);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("SelfCollisionRecordInfo::particles"), std::string::npos) << st.message();
  bad.particles.size = bytes;
  bad.settings.stiffness = 2;
  st = (*stage)->record(cmd, bad);
  EXPECT_NE(st.message().find("settings.stiffness"), std::string::npos) << st.message();
  bad.settings = s.settings;
  bad.frame = 1;  // the stage has one frame in flight
  st = (*stage)->record(cmd, bad);
  EXPECT_NE(st.message().find("SelfCollisionRecordInfo::frame is 1"), std::string::npos) << st.message();
  bad.frame = 0;
  for (const uint32_t frames : {0u, kMaxFramesInFlight + 1}) {
    SelfCollisionStageCreateInfo badCi = ci;
    badCi.framesInFlight = frames;
    auto badStage = SelfCollisionStage::create(ctx(), badCi);
    ASSERT_FALSE(badStage.ok());
    EXPECT_NE(badStage.message().find("SelfCollisionStageCreateInfo::framesInFlight is " + std::to_string(frames)),
              std::string::npos)
        << badStage.message();
  }
  // A stage created with rest positions needs their buffer in every record.
  ci.restPositions = true;
  auto restStage = SelfCollisionStage::create(ctx(), ci);
  ASSERT_TRUE(restStage.ok()) << restStage.message();
  bad.settings.stiffness = 1;
  st = (*restStage)->record(cmd, bad);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("SelfCollisionRecordInfo::restPositions"), std::string::npos) << st.message();
  freeCommandBuffer(cmd);

  SelfCollisionRecordInfo info;
  info.particles = {host->handle(), 0, bytes};
  info.settings = s.settings;
  submit([&](VkCommandBuffer c) { ASSERT_TRUE((*stage)->record(c, info).ok()); });
  std::vector<Float4> got(s.particles.size());
  std::memcpy(got.data(), host->mapped(), bytes);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].x, ref.particles[i].x, 1e-5f) << i;
    EXPECT_NEAR(got[i].y, ref.particles[i].y, 1e-5f) << i;
    EXPECT_NEAR(got[i].z, ref.particles[i].z, 1e-5f) << i;
  }
}

}  // namespace
}  // namespace vkc::test
