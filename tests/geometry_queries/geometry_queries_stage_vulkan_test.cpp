// GeometryQueryStage on its own: reruns, the dispatch and barrier counts whatever the batch, the
// host's buffers (points in place, outputs, the indirect count, nothing written past the capacity),
// record()'s refusals, and memoryRequirements() against create().
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "geometry_queries/geometry_queries_test_support.h"
#include "shared/geometry_queries.h"
#include "support/integration.h"
#include "support/vulkan_fixture.h"

namespace vkc::test::geometry {
namespace {

class GeometryQueryStageVulkan : public VulkanTest {
 protected:
  std::unique_ptr<GeometryQueryStage> makeStage(const GeometryQueryStageCreateInfo& info) {
    auto s = GeometryQueryStage::create(ctx(), info);
    EXPECT_TRUE(s.ok()) << s.message();
    return s.ok() ? std::move(s.value()) : nullptr;
  }
};

// A batch with point sets: the random mixed pairs plus one set of `points` points against a sphere.
Batch batchWithPointSet(uint32_t seed, uint32_t queries, uint32_t points) {
  Batch b = randomBatch(seed, queries);
  std::vector<Float4> cloud(points);
  for (uint32_t i = 0; i < points; ++i) {
    cloud[i] = v3(static_cast<float>(i % 97) / 48.0f - 1.0f, static_cast<float>(i % 89) / 44.0f - 1.0f,
                  static_cast<float>(i % 83) / 41.0f - 1.0f);
  }
  const uint32_t set = b.addPoints(cloud);
  b.query(b.add(Geometry::sphere({0.1f, 0.0f, 0.0f, 0.7f})), set);
  return b;
}

TEST_F(GeometryQueryStageVulkan, HundredRerunsAreBitwiseIdentical) {
  Batch b = batchWithPointSet(31, 400, 3000);
  auto stage = makeStage({.maxQueries = 401, .maxGeometries = 802, .maxPoints = 3256, .maxContacts = 20000, .maxSlots = 100000});
  ASSERT_NE(stage, nullptr);
  std::vector<ContactElement> a0(20000), b0(20000), a(20000), e(20000);
  std::vector<ContactRange> r0(b.queries.size()), r(b.queries.size());
  auto first = stage->run(b.input(), {a0, b0, r0});
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_GT(first->contacts, 1000u);
  for (int rep = 0; rep < 100; ++rep) {
    auto c = stage->run(b.input(), {a, e, r});
    ASSERT_TRUE(c.ok()) << c.message();
    ASSERT_EQ(c->contacts, first->contacts);
    ASSERT_EQ(std::memcmp(a.data(), a0.data(), first->written * sizeof(ContactElement)), 0) << "rep " << rep;
    ASSERT_EQ(std::memcmp(e.data(), b0.data(), first->written * sizeof(ContactElement)), 0) << "rep " << rep;
    ASSERT_EQ(std::memcmp(r.data(), r0.data(), r.size() * sizeof(ContactRange)), 0) << "rep " << rep;
  }
  // The batch holds the basic, manifold and convex families: a COUNT and a WRITE each, SCAN, RANGES.
  ASSERT_EQ(stage->timings().size(), 8u);
  EXPECT_STREQ(stage->timings()[0].name, "vkc.geometry_queries.basic.count");
  EXPECT_STREQ(stage->timings()[3].name, "vkc.geometry_queries.scan");
  EXPECT_STREQ(stage->timings()[7].name, "vkc.geometry_queries.ranges");
}

// The pair families a batch holds.
uint32_t familiesOf(const Batch& b) {
  uint32_t bits = 0;
  for (const GeometryQuery& q : b.queries) {
    bits |= 1u << gpu::geomQueryFamily(static_cast<uint32_t>(b.geometries[q.a].type),
                                       static_cast<uint32_t>(b.geometries[q.b].type), static_cast<uint32_t>(q.method));
  }
  return static_cast<uint32_t>(std::popcount(bits));
}

// The same passes, dispatches and barriers for one query, 10k queries and one set of 200k points.
TEST_F(GeometryQueryStageVulkan, DispatchAndBarrierCountsDoNotDependOnTheBatch) {
  Batch one = randomBatch(41, 1);
  Batch many = randomBatch(43, 10000);
  Batch cloud = boxOverPointCloud(200000);
  auto stage = makeStage({.maxQueries = 10000, .maxGeometries = 20000, .maxPoints = 200000, .maxContacts = 1000,
                          .maxSlots = 1000000});
  ASSERT_NE(stage, nullptr);
  std::vector<RecordStats> stats;
  for (const Batch* b : {&one, &many, &cloud}) {
    VkCommandBuffer cmd = beginCommandBuffer();
    GeometryQueryRecordInfo info;
    info.geometries = b->geometries;
    info.queries = b->queries;
    info.points = b->points;
    ASSERT_TRUE(stage->record(cmd, info).ok());
    stats.push_back(stage->lastRecordStats());
    freeCommandBuffer(cmd);
  }
  const Batch* batches[] = {&one, &many, &cloud};
  for (size_t i = 0; i < stats.size(); ++i) {
    const RecordStats& s = stats[i];
    EXPECT_EQ(s.dispatches, 2 * familiesOf(*batches[i]) + 2) << i;  // COUNT and WRITE per family, SCAN, RANGES
    EXPECT_EQ(s.dependentDispatches, 3u) << i;
    EXPECT_EQ(s.indirectDispatches, 0u);
    EXPECT_EQ(s.barriers, stats[0].barriers);
  }
  EXPECT_EQ(familiesOf(many), 3u);
  EXPECT_EQ(stats[0].barriers, 5u);  // before the uploads' copies, opening, count|scan, scan|write, closing
  EXPECT_GT(stats[2].workgroups, stats[0].workgroups);
  EXPECT_GT(stats[2].transferBytes, 200000u * 16u);
}

// Points read in place from the host's buffer, outputs into the host's buffers: contacts equal
// kCpuScalar's, the counts and the indirect dispatch, and the bytes past the capacity untouched.
TEST_F(GeometryQueryStageVulkan, HostBuffersIndirectCountAndNothingPastTheCapacity) {
  Batch b = batchWithPointSet(47, 300, 2000);
  Batch ref = b;
  auto full = ref.run(Backend::kCpuScalar, 100000);
  ASSERT_TRUE(full.ok());
  const uint32_t capacity = full->contacts - 7;
  const VkDeviceSize elementBytes = VkDeviceSize{capacity} * sizeof(ContactElement);
  const VkDeviceSize guard = 8 * sizeof(ContactElement);
  detail::Buffer points = hostBuffer(b.points.size() * sizeof(Float4));
  detail::Buffer elA = hostBuffer(elementBytes + guard), elB = hostBuffer(elementBytes + guard);
  detail::Buffer ranges = hostBuffer(b.queries.size() * sizeof(ContactRange));
  detail::Buffer counts = hostBuffer(sizeof(GeometryQueryDeviceCounts));
  std::memcpy(points.mapped(), b.points.data(), b.points.size() * sizeof(Float4));
  std::memset(elA.mapped(), 0xAB, elementBytes + guard);
  std::memset(elB.mapped(), 0xAB, elementBytes + guard);
  // maxSlots: the 2 000 points and up to a tile per query where the random pairs change family.
  auto stage = makeStage({.maxQueries = 301, .maxGeometries = 602, .maxPoints = 0, .maxContacts = 0, .maxSlots = 22000});
  ASSERT_NE(stage, nullptr);
  GeometryQueryRecordInfo info;
  info.geometries = b.geometries;
  info.queries = b.queries;
  info.pointBuffer = points.range();
  info.pointCount = static_cast<uint32_t>(b.points.size());
  info.outputs = {.elementsA = {elA.handle(), 0, elementBytes},
                  .elementsB = {elB.handle(), 0, elementBytes},
                  .ranges = ranges.range(),
                  .counts = counts.range()};
  info.indirectGroupSize = 32;
  submit([&](VkCommandBuffer cmd) {
    const Status st = stage->record(cmd, info);
    ASSERT_TRUE(st.ok()) << st.message();
  });
  GeometryQueryDeviceCounts c;
  std::memcpy(&c, counts.mapped(), sizeof c);
  EXPECT_EQ(c.contacts, full->contacts);
  EXPECT_EQ(c.written, capacity);
  EXPECT_EQ(c.overflow, 1u);
  EXPECT_EQ(c.dispatchX, (capacity + 31) / 32);
  EXPECT_EQ(c.dispatchY, 1u);
  EXPECT_EQ(c.dispatchZ, 1u);
  EXPECT_EQ(std::memcmp(elA.mapped(), ref.elementsA.data(), elementBytes), 0);
  EXPECT_EQ(std::memcmp(elB.mapped(), ref.elementsB.data(), elementBytes), 0);
  EXPECT_EQ(std::memcmp(ranges.mapped(), ref.ranges.data(), b.queries.size() * sizeof(ContactRange)), 0);
  const auto* tailA = static_cast<const uint8_t*>(elA.mapped()) + elementBytes;
  const auto* tailB = static_cast<const uint8_t*>(elB.mapped()) + elementBytes;
  for (VkDeviceSize i = 0; i < guard; ++i) ASSERT_TRUE(tailA[i] == 0xAB && tailB[i] == 0xAB) << "byte " << i;
}

TEST_F(GeometryQueryStageVulkan, RecordRefusesBadInputAndRecordsNothing) {
  Batch b = batchWithPointSet(53, 20, 100);
  auto stage = makeStage({.maxQueries = 21, .maxGeometries = 42, .maxPoints = 356, .maxContacts = 100, .maxSlots = 10000});
  ASSERT_NE(stage, nullptr);
  VkCommandBuffer cmd = beginCommandBuffer();
  GeometryQueryRecordInfo info;
  info.geometries = b.geometries;
  info.queries = b.queries;
  info.points = b.points;
  ASSERT_TRUE(stage->record(cmd, info).ok());
  EXPECT_EQ(stage->lastRecordStats().dispatches, 2 * familiesOf(b) + 2);
  auto refused = [&](const GeometryQueryRecordInfo& bad, const char* field) {
    const Status s = stage->record(cmd, bad);
    EXPECT_FALSE(s.ok()) << field;
    EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
    EXPECT_EQ(stage->lastRecordStats(), RecordStats{}) << field;
  };
  std::vector<Geometry> badGeometries = b.geometries;
  badGeometries[1].p1 = Float4{0, 0, 0, 0};
  badGeometries[1].type = GeometryType::kCylinder;
  GeometryQueryRecordInfo bad = info;
  bad.geometries = badGeometries;
  refused(bad, "geometries[1]");
  bad = info;
  bad.points = std::span(b.points).first(10);  // the point set runs past the points
  refused(bad, "point set");
  std::vector<GeometryQuery> tooMany(22, b.queries[0]);
  bad = info;
  bad.queries = tooMany;
  refused(bad, "maxQueries");
  detail::Buffer small = hostBuffer(64);
  bad = info;
  bad.points = {};
  bad.pointBuffer = small.range();
  bad.pointCount = static_cast<uint32_t>(b.points.size());
  refused(bad, "pointBuffer");
  bad = info;
  bad.outputs.elementsA = small.range();
  refused(bad, "elementsB");
  bad = info;
  bad.frame = 1;
  refused(bad, "frame");
  freeCommandBuffer(cmd);
}

TEST_F(GeometryQueryStageVulkan, MemoryRequirementsMatchCreate) {
  for (uint32_t frames : {1u, 3u}) {
    auto need = expectMemoryRequirementsMatchCreate<GeometryQueryStage>(
        ctx(), impl(),
        GeometryQueryStageCreateInfo{.maxQueries = 1000, .maxGeometries = 1500, .maxPoints = 5000, .maxContacts = 7000,
                                     .framesInFlight = frames},
        "frames " + std::to_string(frames));
    ASSERT_TRUE(need.has_value());
    EXPECT_GT(need->deviceLocalBytes, frames * 2ull * 7000 * sizeof(ContactElement));
  }
  EXPECT_FALSE(GeometryQueryStage::memoryRequirements(ctx(), {.framesInFlight = 0}).ok());
}

}  // namespace
}  // namespace vkc::test::geometry
