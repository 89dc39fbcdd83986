// CpuExecutor: creation errors name the field; a default or moved-from executor runs on the calling
// thread; a host parallel-for is really used (and one that skips tasks is reported); one pool shared
// by several host threads; the threaded shape stage with planes and convexes (several cloths, chunks
// within cloths) and bad input on the threaded path (the same error, outputs untouched). The
// conformance suites (tests/*/*conformance*, inter_collision_test) run every stage on the executors of
// support/executors.h against the single-threaded results, bit for bit.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "collide_shapes/shapes_test_support.h"
#include "cpu/executor.h"
#include "self_collision/self_collision_support.h"
#include "support/executors.h"
#include "vkcollide/vkcollide.h"

namespace vkc::test {
namespace {

using shapes::Scene;
using shapes::toFloat4;
using shapes::V3;

TEST(CpuExecutor, CreateRejectsBadInputNamingTheField) {
  auto zero = CpuExecutor::create(0u);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(zero.message().find("threads is 0"), std::string::npos) << zero.message();
  auto tooMany = CpuExecutor::create(kMaxCpuThreads + 1);
  ASSERT_FALSE(tooMany.ok());
  EXPECT_NE(tooMany.message().find("threads is " + std::to_string(kMaxCpuThreads + 1)), std::string::npos)
      << tooMany.message();
  HostParallelFor host;
  host.workers = 4;
  auto noRun = CpuExecutor::create(host);
  ASSERT_FALSE(noRun.ok());
  EXPECT_EQ(noRun.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(noRun.message().find("host.run is null"), std::string::npos) << noRun.message();
  host = unevenHostParallelFor();
  host.workers = 0;
  auto noWorkers = CpuExecutor::create(host);
  ASSERT_FALSE(noWorkers.ok());
  EXPECT_NE(noWorkers.message().find("host.workers is 0"), std::string::npos) << noWorkers.message();
  auto fine = CpuExecutor::create(3u);
  ASSERT_TRUE(fine.ok()) << fine.message();
  EXPECT_EQ(fine->threads(), 3u);
  EXPECT_GE(CpuExecutor::hardwareThreads(), 1u);
}

// A crumpled cloth of side^2 particles for self collision.
SelfScene crumpled(uint32_t side, uint32_t seed) {
  SelfScene s;
  crumpledCloth(side, 0.02f, seed, s.particles, s.rest);
  s.cloths = {{0, static_cast<uint32_t>(s.particles.size())}};
  s.settings = {0.018f, 0.9f};
  return s;
}

TEST(CpuExecutor, DefaultAndMovedFromExecutorsRunOnTheCallingThread) {
  const SelfScene start = crumpled(40, 3);
  SelfScene want = start;
  ASSERT_TRUE(collideSelfCpu(want.input(), Backend::kCpuSimd).ok());
  const CpuExecutor serial;
  EXPECT_EQ(serial.threads(), 1u);
  auto pool = CpuExecutor::create(2u);
  ASSERT_TRUE(pool.ok());
  CpuExecutor moved = std::move(pool.value());
  EXPECT_EQ(moved.threads(), 2u);
  EXPECT_EQ(pool->threads(), 1u);  // NOLINT(bugprone-use-after-move): a moved-from executor is serial
  for (const CpuExecutor* e : {&serial, static_cast<const CpuExecutor*>(&pool.value()), static_cast<const CpuExecutor*>(&moved)}) {
    SelfScene got = start;
    ASSERT_TRUE(collideSelfCpu(got.input(), Backend::kCpuSimd, *e).ok());
    EXPECT_EQ(std::memcmp(got.particles.data(), want.particles.data(), want.particles.size() * sizeof(Float4)), 0);
  }
}

struct CountingHost {
  std::atomic<uint32_t> loops{0}, tasks{0};
  bool skipLast = false;
  static void run(void* user, uint32_t count, ParallelTaskFn task, void* context) {
    auto& self = *static_cast<CountingHost*>(user);
    self.loops.fetch_add(1);
    self.tasks.fetch_add(count);
    EXPECT_GE(count, 2u);
    const uint32_t end = self.skipLast ? count - 1 : count;
    std::thread other([&] {
      for (uint32_t t = 1; t < end; t += 2) task(context, t, t + 1);
    });
    for (uint32_t t = 0; t < end; t += 2) task(context, t, t + 1);
    other.join();
  }
};

TEST(CpuExecutor, HostParallelForRunsTheWorkAndSkippedTasksAreReported) {
  Scene scene;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Float4> p;
  for (int i = 0; i < 40'000; ++i) p.push_back(toFloat4(V3{u(rng), u(rng), u(rng)}, 1.0f));
  scene.addCloth(p, {}, {{0.2f, 0.1f, 0.0f, 0.5f}, {-0.3f, 0.0f, 0.2f, 0.4f}}, {{0, 1}});
  Scene want = scene;
  ASSERT_TRUE(collideShapesCpu(want.input(), Backend::kCpuSimd).ok());

  CountingHost counting;
  auto host = CpuExecutor::create(HostParallelFor{&counting, CountingHost::run, 2});
  ASSERT_TRUE(host.ok()) << host.message();
  Scene got = scene;
  ASSERT_TRUE(collideShapesCpu(got.input(), Backend::kCpuSimd, *host).ok());
  EXPECT_GE(counting.loops.load(), 2u);  // bounds, collide (the default chunk size: 40 000 particles split)
  EXPECT_EQ(std::memcmp(got.particles.data(), want.particles.data(), want.particles.size() * sizeof(Float4)), 0);

  counting.skipLast = true;
  Scene bad = scene;
  const Status st = collideShapesCpu(bad.input(), Backend::kCpuSimd, *host);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("collideShapesCpu: the host's parallel-for ran"), std::string::npos) << st.message();
}

TEST(CpuExecutor, OnePoolSharedByHostThreads) {
  auto pool = CpuExecutor::create(3u);
  ASSERT_TRUE(pool.ok());
  detail::setMinChunkForTesting(*pool, 256);
  std::vector<SelfScene> want, got;
  for (uint32_t k = 0; k < 4; ++k) {
    want.push_back(crumpled(60 + 10 * k, k));
    got.push_back(want.back());
    ASSERT_TRUE(collideSelfCpu(want.back().input(), Backend::kCpuSimd).ok());
  }
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (uint32_t k = 0; k < 4; ++k) {
    callers.emplace_back([&, k] {
      for (int rep = 0; rep < 3; ++rep) {
        SelfScene s = got[k];
        if (!collideSelfCpu(s.input(), Backend::kCpuSimd, *pool).ok()) failures.fetch_add(1);
        if (std::memcmp(s.particles.data(), want[k].particles.data(), s.particles.size() * sizeof(Float4)) != 0) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// The 6 planes of the box centre +- half (outward normals; inside: n.x + d < 0).
std::vector<Float4> boxPlanes(V3 c, V3 h) {
  return {{1, 0, 0, static_cast<float>(-(c.x + h.x))}, {-1, 0, 0, static_cast<float>(c.x - h.x)},
          {0, 1, 0, static_cast<float>(-(c.y + h.y))}, {0, -1, 0, static_cast<float>(c.y - h.y)},
          {0, 0, 1, static_cast<float>(-(c.z + h.z))}, {0, 0, -1, static_cast<float>(c.z - h.z)}};
}

TEST(CpuExecutor, ShapesWithPlanesAndConvexesAreBitwiseTheSingleThreadedResult) {
  Scene scene;
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (uint32_t c = 0; c < 5; ++c) {
    std::vector<Float4> p, q;
    const uint32_t n = c == 2 ? 20'000 : 700 + 333 * c;
    for (uint32_t i = 0; i < n; ++i) {
      const V3 x{u(rng), u(rng), u(rng)};
      p.push_back(toFloat4(x, i % 13 == 0 ? 0.0f : 1.0f));
      q.push_back(toFloat4(x + V3{u(rng), u(rng), u(rng)} * 0.05, i % 13 == 0 ? 0.0f : 1.0f));
    }
    scene.addCloth(p, q, {{0.3f, 0.2f, -0.1f, 0.35f}, {-0.4f, 0.1f, 0.3f, 0.25f}, {0.0f, -0.5f, 0.0f, 0.3f}}, {{0, 1}});
    std::vector<Float4> planes = boxPlanes({0.1 * c, -0.2, 0.1}, {0.4, 0.3, 0.5});
    planes.push_back({0.1f, 1.0f, 0.05f, 0.6f});  // a tilted ground plane
    std::vector<Float4> prevPlanes = planes;
    for (Float4& pl : prevPlanes) pl.w += 0.03f;
    scene.setConvexes(c, planes, {{0, 1, 2, 3, 4, 5}, {6}}, prevPlanes);
  }
  for (const bool continuous : {false, true}) {
    scene.settings = {.continuous = continuous, .friction = 0.4f, .collisionMassScale = 2.0f, .alphaBegin = 0.25f,
                      .alphaEnd = 0.75f};
    for (const Backend b : {Backend::kCpuScalar, Backend::kCpuSimd}) {
      SCOPED_TRACE(std::string(toString(b)) + (continuous ? ", CCD" : ", discrete"));
      Scene want = scene;
      ShapeCollisionDebug wantDebug;
      ASSERT_TRUE(collideShapesCpu(want.input(), b, &wantDebug).ok());
      size_t moved = 0;
      for (size_t i = 0; i < want.particles.size(); ++i) moved += std::memcmp(&want.particles[i], &scene.particles[i], 16) != 0;
      EXPECT_GT(moved, 2000u);
      for (const TestExecutor& e : testExecutors()) {
        Scene got = scene;
        ShapeCollisionDebug debug;
        const Status st = collideShapesCpu(got.input(), b, *e.executor, &debug);
        ASSERT_TRUE(st.ok()) << e.name << ": " << st.message();
        EXPECT_EQ(std::memcmp(got.particles.data(), want.particles.data(), want.particles.size() * sizeof(Float4)), 0)
            << e.name;
        EXPECT_EQ(std::memcmp(got.prev.data(), want.prev.data(), want.prev.size() * sizeof(Float4)), 0) << e.name;
        EXPECT_EQ(debug.masks, wantDebug.masks) << e.name;
        EXPECT_EQ(debug.convexBits, wantDebug.convexBits) << e.name;
      }
    }
  }
}

TEST(CpuExecutor, BadInputGivesTheSingleThreadedErrorAndChangesNothing) {
  Scene scene;
  std::vector<Float4> p;
  for (int i = 0; i < 30'000; ++i) p.push_back({0.001f * float(i % 100), 0.0f, 0.001f * float(i / 100), 1.0f});
  scene.addCloth(p, {}, {{0.0f, 0.0f, 0.0f, 0.2f}});
  scene.addCloth(p, {}, {{0.0f, 0.0f, 0.0f, 0.2f}});
  scene.particles[30'000 + 21'345].y = std::nanf("");
  for (const TestExecutor& e : testExecutors()) {
    Scene serial = scene, threaded = scene;
    const Status want = collideShapesCpu(serial.input(), Backend::kCpuSimd);
    const Status got = collideShapesCpu(threaded.input(), Backend::kCpuSimd, *e.executor);
    ASSERT_FALSE(want.ok());
    ASSERT_FALSE(got.ok()) << e.name;
    EXPECT_EQ(got.message(), want.message()) << e.name;
    EXPECT_NE(got.message().find("cloths[1].particles[21345].y"), std::string::npos) << got.message();
    EXPECT_EQ(std::memcmp(threaded.particles.data(), scene.particles.data(), scene.particles.size() * sizeof(Float4)), 0);

    SelfScene self;
    self.particles = scene.particles;
    self.cloths = scene.cloths;
    self.settings = {0.01f, 1.0f};
    const std::vector<Float4> before = self.particles;
    const Status selfWant = collideSelfCpu(self.input(), Backend::kCpuSimd);
    const Status selfGot = collideSelfCpu(self.input(), Backend::kCpuSimd, *e.executor);
    ASSERT_FALSE(selfGot.ok());
    EXPECT_EQ(selfGot.message(), selfWant.message()) << e.name;
    EXPECT_EQ(std::memcmp(self.particles.data(), before.data(), before.size() * sizeof(Float4)), 0);

    std::vector<uint32_t> keys(100), values(100);
    const Status sortGot = radixSortCpu({keys, std::span<uint32_t>(values).first(99), 32}, Backend::kCpuSimd, *e.executor);
    EXPECT_NE(sortGot.message().find("values.size() 99 differs from keys.size() 100"), std::string::npos)
        << sortGot.message();
  }
}

}  // namespace
}  // namespace vkc::test
