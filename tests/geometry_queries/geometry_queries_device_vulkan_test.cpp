// Device-resident batches of GeometryQueryStage (GeometryQueryRecordInfo::geometryBuffer /
// queryBuffer, the slot layout computed on the device): the same contacts as the batch given in host
// memory and as kCpuScalar, bit for bit; reruns; bad values on the device counted, never read out of
// bounds; the host's refusals; the record's fixed dispatch shape.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "geometry_queries/geometry_queries_test_support.h"
#include "scene/geometry_queries_layout.h"  // geometrySlotLayout
#include "shared/geometry_queries_bindings.h"
#include "support/vulkan_fixture.h"
#include "vulkan/context_impl.h"

namespace vkc::test::geometry {
namespace {

constexpr uint32_t kCapacity = 40000;

// The random primitive and point set pairs, implicit geometries against a sphere, a box and a point
// set, and (continuous: true) point sets moving into a sphere and a grid.
Batch mixedBatch(uint32_t seed, uint32_t queries, bool continuous) {
  Batch b = randomBatch(seed, queries);
  const uint32_t grid =
      b.addGrid(v3(-1, -1, -1), 2.0f / 7.0f, 8, [](float x, float y, float z) { return std::sqrt(x * x + y * y + z * z) - 0.6f; });
  b.query(grid, b.add(Geometry::sphere({0.5f, 0.1f, 0.0f, 0.3f})));
  b.query(b.add(Geometry::orientedBox(v3(0.4f, 0, 0), identityQuat(), v3(0.3f, 0.3f, 0.3f))), grid);
  std::vector<Float4> cloud;
  for (int i = 0; i < 300; ++i) {
    cloud.push_back(v3(static_cast<float>(i % 11) / 5.0f - 1.0f, static_cast<float>(i % 13) / 6.0f - 1.0f,
                       static_cast<float>(i % 7) / 3.0f - 1.0f));
  }
  const uint32_t set = b.addPoints(cloud);
  b.query(set, grid);
  if (continuous) {
    b.previousPoints = b.points;
    for (size_t i = b.points.size() - cloud.size(); i < b.points.size(); ++i) b.previousPoints[i].x -= 0.3f;
    b.continuous(set, b.add(Geometry::sphere({0.0f, 0.0f, 0.0f, 0.5f})), 0);
    b.continuous(grid, set, 300);
  }
  return b;
}

GeometryQueryStageCreateInfo limitsFor(const Batch& b, uint32_t maxSlots) {
  return {.maxQueries = static_cast<uint32_t>(b.queries.size()),
          .maxGeometries = static_cast<uint32_t>(b.geometries.size()),
          .maxPoints = static_cast<uint32_t>(b.points.size()),
          .maxGridSamples = static_cast<uint32_t>(b.gridSamples.size()),
          .maxContacts = 0,
          .maxSlots = maxSlots};
}

class GeometryQueryDeviceVulkan : public VulkanTest {
 protected:
  // The host-visible copy of `bytes` bytes of `data` (at least 16 bytes).
  detail::Buffer upload(const void* data, size_t bytes) {
    detail::Buffer buf = hostBuffer(std::max<size_t>(bytes, 16));
    if (bytes > 0) std::memcpy(buf.mapped(), data, bytes);
    return buf;
  }

  struct Outputs {
    detail::Buffer a, b, ranges, counts, state;
    GeometryQueryDeviceCounts read() const {
      GeometryQueryDeviceCounts c;
      std::memcpy(&c, counts.mapped(), sizeof c);
      return c;
    }
    const ContactElement* elementsA() const { return static_cast<const ContactElement*>(a.mapped()); }
    const ContactElement* elementsB() const { return static_cast<const ContactElement*>(b.mapped()); }
    const ContactRange* rangeAt() const { return static_cast<const ContactRange*>(ranges.mapped()); }
    // Every element, the first `queries` ranges and the counts overwritten with marker bytes, so that
    // a value a record did not write shows.
    void poison(size_t queries) const {
      std::memset(a.mapped(), 0xAB, kCapacity * sizeof(ContactElement));
      std::memset(b.mapped(), 0xAB, kCapacity * sizeof(ContactElement));
      std::memset(ranges.mapped(), 0xAB, queries * sizeof(ContactRange));
      std::memset(counts.mapped(), 0xCD, sizeof(GeometryQueryDeviceCounts));
    }
  };

  Outputs outputs(const Batch& b) {
    Outputs o{hostBuffer(kCapacity * sizeof(ContactElement)), hostBuffer(kCapacity * sizeof(ContactElement)),
              hostBuffer(std::max<size_t>(b.queries.size(), 2) * sizeof(ContactRange)),
              hostBuffer(sizeof(GeometryQueryDeviceCounts)), upload(b.state.data(), b.state.size() * sizeof(Float4))};
    o.poison(0);
    return o;
  }

  static void bindOutputs(GeometryQueryRecordInfo& info, const Outputs& o, size_t queries, size_t states) {
    info.outputs = {.elementsA = {o.a.handle(), 0, kCapacity * sizeof(ContactElement)},
                    .elementsB = {o.b.handle(), 0, kCapacity * sizeof(ContactElement)},
                    .ranges = {o.ranges.handle(), 0, std::max<size_t>(queries, 1) * sizeof(ContactRange)},
                    .counts = {o.counts.handle(), 0, sizeof(GeometryQueryDeviceCounts)}};
    if (states > 0) {
      info.stateBuffer = {o.state.handle(), 0, states * sizeof(Float4)};
      info.stateCount = static_cast<uint32_t>(states);
    }
  }

  std::unique_ptr<GeometryQueryStage> makeStage(const GeometryQueryStageCreateInfo& info) {
    auto s = GeometryQueryStage::create(ctx(), info);
    EXPECT_TRUE(s.ok()) << s.message();
    return s.ok() ? std::move(s.value()) : nullptr;
  }

  // The batch's arrays in device buffers, kept alive with the record info that reads them.
  struct DeviceBatch {
    detail::Buffer geometries, previous, queries, points, prevPoints, samples;
    GeometryQueryRecordInfo info;
  };
  DeviceBatch deviceBatch(const Batch& b) {
    DeviceBatch d{upload(b.geometries.data(), b.geometries.size() * sizeof(Geometry)),
                  upload(b.previousGeometries.data(), b.previousGeometries.size() * sizeof(Geometry)),
                  upload(b.queries.data(), b.queries.size() * sizeof(GeometryQuery)),
                  upload(b.points.data(), b.points.size() * sizeof(Float4)),
                  upload(b.previousPoints.data(), b.previousPoints.size() * sizeof(Float4)),
                  upload(b.gridSamples.data(), b.gridSamples.size() * sizeof(float)),
                  {}};
    GeometryQueryRecordInfo& info = d.info;
    info.geometryBuffer = {d.geometries.handle(), 0, b.geometries.size() * sizeof(Geometry)};
    info.geometryCount = static_cast<uint32_t>(b.geometries.size());
    info.queryBuffer = {d.queries.handle(), 0, b.queries.size() * sizeof(GeometryQuery)};
    info.queryCount = static_cast<uint32_t>(b.queries.size());
    if (!b.previousGeometries.empty()) info.previousGeometryBuffer = {d.previous.handle(), 0, b.previousGeometries.size() * sizeof(Geometry)};
    info.pointBuffer = {d.points.handle(), 0, b.points.size() * sizeof(Float4)};
    info.pointCount = static_cast<uint32_t>(b.points.size());
    if (!b.previousPoints.empty()) info.previousPointBuffer = {d.prevPoints.handle(), 0, b.previousPoints.size() * sizeof(Float4)};
    if (!b.gridSamples.empty()) {
      info.gridSampleBuffer = {d.samples.handle(), 0, b.gridSamples.size() * sizeof(float)};
      info.gridSampleCount = static_cast<uint32_t>(b.gridSamples.size());
    }
    return d;
  }

  // A stage for b (maxSlots), b's arrays in device buffers, host-visible outputs bound (no state).
  struct Resident {
    std::unique_ptr<GeometryQueryStage> stage;
    Outputs o;
    DeviceBatch d;
  };
  Resident resident(const Batch& b, uint32_t maxSlots) {
    Resident r{makeStage(limitsFor(b, maxSlots)), outputs(b), deviceBatch(b)};
    bindOutputs(r.d.info, r.o, b.queries.size(), 0);
    return r;
  }

  static GeometryQueryRecordInfo hostInfo(const Batch& b) {
    GeometryQueryRecordInfo info;
    info.geometries = b.geometries;
    info.previousGeometries = b.previousGeometries;
    info.queries = b.queries;
    info.points = b.points;
    info.previousPoints = b.previousPoints;
    info.gridSamples = b.gridSamples;
    return info;
  }

  void record(GeometryQueryStage& stage, const GeometryQueryRecordInfo& info) {
    submit([&](VkCommandBuffer cmd) {
      const Status st = stage.record(cmd, info);
      ASSERT_TRUE(st.ok()) << st.message();
    });
  }

  // `info` recorded and run 100 more times into o (its contacts and ranges cleared before each): the
  // counts, contacts and ranges of every run those of the last one, and ref's (kCpuScalar, `written`
  // contacts).
  void expectHundredReruns(GeometryQueryStage& stage, const GeometryQueryRecordInfo& info, const Outputs& o,
                           const Batch& ref, uint32_t written) {
    const GeometryQueryDeviceCounts first = o.read();
    for (int rep = 0; rep < 100; ++rep) {
      o.poison(ref.ranges.size());
      record(stage, info);
      const GeometryQueryDeviceCounts c = o.read();
      ASSERT_EQ(std::memcmp(&c, &first, sizeof c), 0) << "rep " << rep;
      ASSERT_EQ(std::memcmp(o.elementsA(), ref.elementsA.data(), written * sizeof(ContactElement)), 0) << "rep " << rep;
      ASSERT_EQ(std::memcmp(o.elementsB(), ref.elementsB.data(), written * sizeof(ContactElement)), 0) << "rep " << rep;
      ASSERT_EQ(std::memcmp(o.rangeAt(), ref.ranges.data(), ref.ranges.size() * sizeof(ContactRange)), 0) << "rep " << rep;
    }
  }

  // The bad geometries the bad-query tests start from, added to `b`: a good sphere to pair them with,
  // a sphere with a NaN centre, a geometry of unknown type and a line mesh (no device path takes one).
  struct BadGeometries {
    uint32_t sphere, nanSphere, unknownType, mesh;
  };
  static BadGeometries addBadGeometries(Batch& b) {
    BadGeometries g{};
    g.sphere = b.add(Geometry::sphere({0.0f, 0.0f, 0.0f, 0.5f}));
    g.nanSphere = b.add(Geometry::sphere({std::numeric_limits<float>::quiet_NaN(), 0.0f, 0.0f, 0.5f}));
    Geometry unknown = Geometry::sphere({0.0f, 0.0f, 0.0f, 0.5f});
    unknown.type = static_cast<GeometryType>(42);
    g.unknownType = b.add(unknown);
    g.mesh = b.add(Geometry::lineMesh(0, 2, 0, 1));
    return g;
  }

  // `good` with `bad` interleaved (after query 0, then every 20, the rest at the end) into `out`;
  // which of out's queries are bad.
  static std::vector<bool> interleave(const std::vector<GeometryQuery>& good, std::span<const GeometryQuery> bad,
                                      std::vector<GeometryQuery>& out) {
    out.clear();
    std::vector<bool> isBad;
    size_t next = 0;
    for (size_t q = 0; q < good.size(); ++q) {
      if ((q % 20 == 1) && next < bad.size()) {
        out.push_back(bad[next++]);
        isBad.push_back(true);
      }
      out.push_back(good[q]);
      isBad.push_back(false);
    }
    for (; next < bad.size(); ++next) {
      out.push_back(bad[next]);
      isBad.push_back(true);
    }
    return isBad;
  }

  // After a record of interleave()'s queries: each bad query has no contact and an empty range at its
  // position; each good query has ref's (the good queries alone, kCpuScalar) contacts at the same
  // places, its elements naming its new position.
  static void expectGoodQueriesKept(const Outputs& o, const std::vector<bool>& isBad, const Batch& ref) {
    size_t goodIndex = 0;
    uint32_t position = 0;
    for (size_t q = 0; q < isBad.size(); ++q) {
      const ContactRange r = o.rangeAt()[q];
      if (isBad[q]) {
        EXPECT_EQ(r.count, 0u) << "bad query " << q;
        EXPECT_EQ(r.first, position) << "bad query " << q;
        continue;
      }
      const ContactRange e = ref.ranges[goodIndex];
      ASSERT_EQ(r.first, e.first) << q;
      ASSERT_EQ(r.count, e.count) << q;
      position = e.first + e.count;
      for (uint32_t k = e.first; k < e.first + e.count; ++k) {
        ContactElement a = o.elementsA()[k], b = o.elementsB()[k];
        ASSERT_EQ(a.query, q);
        ASSERT_EQ(b.query, q);
        a.query = b.query = static_cast<uint32_t>(goodIndex);
        ASSERT_TRUE(bitwiseEqual(a, ref.elementsA[k]) && bitwiseEqual(b, ref.elementsB[k])) << "contact " << k;
      }
      ++goodIndex;
    }
  }

  // o's contacts, ranges and counts equal ref's run (CPU) of the same queries.
  static void expectEqualsCpu(const Outputs& o, const Batch& ref, const GeometryQueryCounts& cpu, const char* what) {
    const GeometryQueryDeviceCounts c = o.read();
    ASSERT_EQ(c.contacts, cpu.contacts) << what;
    ASSERT_EQ(c.written, cpu.written) << what;
    EXPECT_EQ(std::memcmp(o.elementsA(), ref.elementsA.data(), cpu.written * sizeof(ContactElement)), 0) << what;
    EXPECT_EQ(std::memcmp(o.elementsB(), ref.elementsB.data(), cpu.written * sizeof(ContactElement)), 0) << what;
    EXPECT_EQ(std::memcmp(o.rangeAt(), ref.ranges.data(), ref.ranges.size() * sizeof(ContactRange)), 0) << what;
  }
};


TEST_F(GeometryQueryDeviceVulkan, DeviceResidentEqualsUploadedAndCpuScalarOnMixed10kQueries) {
  Batch b = mixedBatch(61, 10000, /*continuous=*/true);
  Batch ref = b;
  auto cpu = ref.run(Backend::kCpuScalar, kCapacity);
  ASSERT_TRUE(cpu.ok()) << cpu.message();
  ASSERT_GT(cpu->contacts, 3000u);
  ASSERT_LE(cpu->contacts, kCapacity);
  auto stage = makeStage(limitsFor(b, 400000));
  ASSERT_NE(stage, nullptr);

  Outputs up = outputs(b);
  GeometryQueryRecordInfo hinfo = hostInfo(b);
  bindOutputs(hinfo, up, b.queries.size(), b.state.size());
  record(*stage, hinfo);
  expectEqualsCpu(up, ref, *cpu, "uploaded");

  Outputs dev = outputs(b);
  DeviceBatch d = deviceBatch(b);
  bindOutputs(d.info, dev, b.queries.size(), b.state.size());
  record(*stage, d.info);
  expectEqualsCpu(dev, ref, *cpu, "device-resident");
  const GeometryQueryDeviceCounts c = dev.read(), u = up.read();
  EXPECT_EQ(c.overflow, 0u);
  EXPECT_EQ(c.invalidQueries, 0u);
  EXPECT_GT(c.slots, 10000u);
  EXPECT_EQ(u.invalidQueries, 0u);  // a batch in host memory: 0
  EXPECT_EQ(u.slots, 0u);
  EXPECT_EQ(c.dispatchX, u.dispatchX);
  // The continuous queries' new state, both paths and the CPU's.
  EXPECT_EQ(std::memcmp(dev.state.mapped(), ref.state.data(), ref.state.size() * sizeof(Float4)), 0);
  EXPECT_EQ(std::memcmp(up.state.mapped(), ref.state.data(), ref.state.size() * sizeof(Float4)), 0);
}

// Boxes and cylinders on a sampled terrain: the device's LAYOUT pass counts each query's sample box
// (geomShapeSampleBox) to the slot, as the host's layout does, and both paths give the CPU's contacts.
TEST_F(GeometryQueryDeviceVulkan, DeviceLayoutCountsTheHostsSampleBoxes) {
  Batch b = terrainShapesBatch(43, 40, 160);
  Batch ref = b;
  auto cpu = ref.run(Backend::kCpuScalar, kCapacity);
  ASSERT_TRUE(cpu.ok()) << cpu.message();
  ASSERT_GT(cpu->contacts, 2000u);
  ASSERT_LE(cpu->contacts, kCapacity);
  const uint64_t hostSlots = detail::geometrySlotLayout(b.geometries, b.queries).slotCount;
  ASSERT_LT(hostSlots, 1u << 20);
  auto [stage, dev, d] = resident(b, 1u << 20);
  ASSERT_NE(stage, nullptr);
  record(*stage, d.info);
  expectEqualsCpu(dev, ref, *cpu, "device-resident");
  const GeometryQueryDeviceCounts c = dev.read();
  EXPECT_EQ(c.invalidQueries, 0u);
  EXPECT_EQ(c.overflow, 0u);
  EXPECT_EQ(uint64_t{c.slots}, hostSlots);
  EXPECT_LT(hostSlots * 10, uint64_t{b.queries.size()} * 40 * 40 * 40);
}

TEST_F(GeometryQueryDeviceVulkan, HundredRerunsOfOneRecordAreIdentical) {
  Batch b = mixedBatch(67, 1000, /*continuous=*/false);
  Batch ref = b;
  auto cpu = ref.run(Backend::kCpuScalar, kCapacity);
  ASSERT_TRUE(cpu.ok()) << cpu.message();
  auto [stage, o, d] = resident(b, 40000);
  ASSERT_NE(stage, nullptr);
  d.info.deviceFamilies = kGeometryQueryFamiliesDevice & ~kGeometryQueryFamilyContinuous;
  record(*stage, d.info);
  expectEqualsCpu(o, ref, *cpu, "first");
  expectHundredReruns(*stage, d.info, o, ref, cpu->written);
}

// Values the host would refuse, written where only the device sees them: each such query gets no
// contact and is counted; the valid queries around them keep the CPU's contacts.
TEST_F(GeometryQueryDeviceVulkan, BadDeviceValuesAreCountedAndGiveNoContact) {
  Batch good = mixedBatch(71, 200, /*continuous=*/false);
  Batch bad = good;
  const auto [sphere, nanSphere, unknownType, mesh] = addBadGeometries(bad);
  const uint32_t farPoints = bad.add(Geometry::pointSet(200, 0xFFFFFF00u));  // past the points
  Geometry badGrid = bad.geometries[good.queries[200].a];                    // mixedBatch's grid
  badGrid.count += 1;                                                        // not nx * ny * nz
  const uint32_t grid = bad.add(badGrid);
  Geometry infBox = Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1));
  infBox.p2.y = std::numeric_limits<float>::infinity();
  const uint32_t box = bad.add(infBox);
  const GeometryQuery badQueries[] = {
      {sphere, 1u << 30, GeometryMethod::kStatic, 0},           // index out of range
      {1u << 31, sphere, GeometryMethod::kStatic, 0},           // index out of range
      {sphere, sphere, static_cast<GeometryMethod>(7), 0},      // unknown method
      {sphere, nanSphere, GeometryMethod::kStatic, 0},          // NaN
      {unknownType, sphere, GeometryMethod::kStatic, 0},        // unknown type
      {mesh, sphere, GeometryMethod::kStatic, 0},               // mesh: the host path's
      {farPoints, sphere, GeometryMethod::kStatic, 0},          // points past pointCount
      {grid, sphere, GeometryMethod::kStatic, 0},               // grid sample count
      {box, sphere, GeometryMethod::kStatic, 0},                // infinity
      {sphere, sphere, GeometryMethod::kStatic, 5},             // a static query's state
      {sphere, 0, GeometryMethod::kContinuous, 0},  // no such continuous pair, or no previous points
  };
  const std::vector<bool> isBad = interleave(good.queries, badQueries, bad.queries);
  Batch ref = good;
  auto cpu = ref.run(Backend::kCpuScalar, kCapacity);
  ASSERT_TRUE(cpu.ok()) << cpu.message();
  auto [stage, o, d] = resident(bad, 40000);
  ASSERT_NE(stage, nullptr);
  record(*stage, d.info);
  const GeometryQueryDeviceCounts c = o.read();
  EXPECT_EQ(c.invalidQueries, std::size(badQueries));
  ASSERT_EQ(c.contacts, cpu->contacts);
  ASSERT_EQ(c.written, cpu->written);
  expectGoodQueriesKept(o, isBad, ref);
  // A family left out of deviceFamilies: its queries are counted too.
  d.info.deviceFamilies = kGeometryQueryFamilyBasic;
  record(*stage, d.info);
  EXPECT_GT(o.read().invalidQueries, std::size(badQueries));
}

// More slots than the stage's maxSlots: the queries whose slots end past it are dropped whole and the
// slots needed are reported; the queries before them are complete.
TEST_F(GeometryQueryDeviceVulkan, SlotsPastMaxSlotsDropWholeQueriesAndAreReported) {
  Batch b;
  std::vector<Float4> cloud(100, v3(0.1f, 0.0f, 0.0f));
  const uint32_t sphere = b.add(Geometry::sphere({0.0f, 0.0f, 0.0f, 1.0f}));
  for (int i = 0; i < 5; ++i) b.query(b.addPoints(cloud), sphere);  // 100 slots each
  Batch ref = b;
  auto cpu = ref.run(Backend::kCpuScalar, kCapacity);
  ASSERT_TRUE(cpu.ok());
  ASSERT_EQ(cpu->contacts, 500u);
  auto [stage, o, d] = resident(b, 250);
  ASSERT_NE(stage, nullptr);
  record(*stage, d.info);
  const GeometryQueryDeviceCounts c = o.read();
  EXPECT_EQ(c.slots, 500u);
  EXPECT_EQ(c.invalidQueries, 0u);
  EXPECT_EQ(c.contacts, 200u);  // queries 0 and 1; query 2 (slots 200..300) is dropped whole
  for (uint32_t q = 0; q < 5; ++q) {
    EXPECT_EQ(o.rangeAt()[q].count, q < 2 ? 100u : 0u) << q;
    EXPECT_EQ(o.rangeAt()[q].first, q < 2 ? 100u * q : 200u) << q;
  }
  EXPECT_EQ(std::memcmp(o.elementsA(), ref.elementsA.data(), 200 * sizeof(ContactElement)), 0);
}

TEST_F(GeometryQueryDeviceVulkan, HostRefusesBadSourcesNamingTheField) {
  Batch b = mixedBatch(73, 20, /*continuous=*/false);
  auto stage = makeStage(limitsFor(b, 10000));
  ASSERT_NE(stage, nullptr);
  DeviceBatch d = deviceBatch(b);
  VkCommandBuffer cmd = beginCommandBuffer();
  ASSERT_TRUE(stage->record(cmd, d.info).ok());
  auto refused = [&](const GeometryQueryRecordInfo& info, const char* field) {
    const Status s = stage->record(cmd, info);
    EXPECT_FALSE(s.ok()) << field;
    EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
    EXPECT_EQ(stage->lastRecordStats(), RecordStats{}) << field;
  };
  GeometryQueryRecordInfo bad = d.info;
  bad.queryBuffer.size -= 1;
  refused(bad, "queryBuffer");
  bad = d.info;
  bad.geometryBuffer.size = 64;
  refused(bad, "geometryBuffer");
  bad = d.info;
  bad.queryCount += 1;
  refused(bad, "queryCount");
  bad = d.info;
  bad.geometryCount += 1;
  refused(bad, "geometryCount");
  bad = d.info;
  bad.queryBuffer = {};
  refused(bad, "queryBuffer is null");
  bad = d.info;
  bad.queries = b.queries;
  refused(bad, "queries is not empty");
  bad = d.info;
  bad.deviceFamilies = 1u << 5;  // the mesh family
  refused(bad, "deviceFamilies");
  bad = d.info;
  bad.deviceFamilies = 0;
  refused(bad, "deviceFamilies");
  bad = d.info;
  bad.previousGeometryBuffer = {d.geometries.handle(), 0, 64};
  refused(bad, "previousGeometryBuffer");
  bad = d.info;
  bad.pointBuffer.size = 16;
  refused(bad, "pointBuffer");
  freeCommandBuffer(cmd);
}

// One query, 10k queries and a 200k-point set: the same dispatches, dependent dispatches and barriers
// (LAYOUT, BLOCKS, PLACE, the spans' FAMILIES, then COUNT per family asked for, SCAN, WRITE per family,
// RANGES; each family's COUNT and WRITE indirect, over its own slots' tiles), and nothing copied from
// host memory (the masks' fill only).
TEST_F(GeometryQueryDeviceVulkan, RecordStatsAreFixed) {
  Batch one = randomBatch(41, 1);
  Batch many = randomBatch(43, 10000);
  Batch cloud = boxOverPointCloud(200000);
  auto stage = makeStage({.maxQueries = 10000, .maxGeometries = 20000, .maxPoints = 200000, .maxContacts = 1000,
                          .maxSlots = 1000000});
  ASSERT_NE(stage, nullptr);
  std::vector<RecordStats> stats;
  for (uint32_t families : {kGeometryQueryFamiliesDevice, kGeometryQueryFamilyBasic}) {
    for (const Batch* b : {&one, &many, &cloud}) {
      DeviceBatch d = deviceBatch(*b);
      d.info.deviceFamilies = families;
      VkCommandBuffer cmd = beginCommandBuffer();
      const Status st = stage->record(cmd, d.info);
      ASSERT_TRUE(st.ok()) << st.message();
      const RecordStats s = stage->lastRecordStats();
      freeCommandBuffer(cmd);
      // Without a state buffer the continuous family is not dispatched: 4 of the 5.
      const uint32_t n = families == kGeometryQueryFamilyBasic ? 1u : 4u;
      EXPECT_EQ(s.dispatches, 4 + 2 * n + 2);
      EXPECT_EQ(s.dependentDispatches, 7u);
      EXPECT_EQ(s.indirectDispatches, 2 * n);
      EXPECT_EQ(s.transfers, 1u);  // the tiles' masks zeroed; nothing uploaded
      stats.push_back(s);
    }
  }
  for (const RecordStats& s : stats) {
    EXPECT_EQ(s.barriers, stats[0].barriers);
    EXPECT_EQ(s.transferBytes, stats[0].transferBytes);
  }
  EXPECT_GT(stats[1].workgroups, stats[0].workgroups);  // the layout's passes: a workgroup per 64 queries
}

// A family's span of more tiles than one row of workgroups holds (the device's
// maxComputeWorkGroupCount[0]): its indirect dispatch is split over x and y, and the second row's
// tiles are evaluated. The cloud's points are outside the box but one near the start and the last
// 100 (in the tiles past the first row), so the contacts come from both rows; every family is asked
// for (the others run no workgroup). Skipped where the limit needs a point buffer over 128 MiB.
TEST_F(GeometryQueryDeviceVulkan, SpanDispatchSplitsOverTheWorkgroupCountLimit) {
  const uint64_t maxX = detail::Internals::of(ctx()).info.maxComputeWorkGroupCount[0];
  const uint64_t points = uint64_t{gpu::kGeomGroupSize} * (maxX + 2);
  if (points * sizeof(Float4) > (uint64_t{128} << 20)) GTEST_SKIP() << "maxComputeWorkGroupCount[0] = " << maxX;
  Batch cloud;
  cloud.points.assign(points, v3(5.0f, 0.5f, 0.0f));
  cloud.points[3] = v3(0.25f, 0.5f, 0.0f);
  for (uint64_t i = points - 100; i < points; ++i) cloud.points[i] = v3(0.25f, 0.5f, 0.0f);
  const uint32_t set = cloud.add(Geometry::pointSet(0, static_cast<uint32_t>(points)));
  cloud.query(cloud.add(Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1))), set);
  Batch ref = cloud;
  auto cpu = ref.run(Backend::kCpuScalar, kCapacity);
  ASSERT_TRUE(cpu.ok()) << cpu.message();
  ASSERT_EQ(cpu->contacts, 101u);
  auto [stage, o, d] = resident(cloud, static_cast<uint32_t>(points));
  ASSERT_NE(stage, nullptr);
  d.info.deviceFamilies = kGeometryQueryFamiliesDevice;
  record(*stage, d.info);
  expectEqualsCpu(o, ref, *cpu, "split");
  EXPECT_EQ(stage->lastRecordStats().indirectDispatches, 8u);  // 4 families (no state: no continuous)
}

// The per-pass GPU times of a recorded batch (timestamps), the way the benchmark reads them.
TEST_F(GeometryQueryDeviceVulkan, RecordTimestampsGivePassTimings) {
  Batch b = randomBatch(79, 100);
  auto [stage, o, d] = resident(b, 10000);
  ASSERT_NE(stage, nullptr);
  d.info.deviceFamilies = kGeometryQueryFamilyBasic | kGeometryQueryFamilyManifold | kGeometryQueryFamilyConvex;
  record(*stage, d.info);
  EXPECT_FALSE(stage->readRecordTimings().ok());  // recorded without timestamps
  d.info.timestamps = true;
  record(*stage, d.info);
  const Status st = stage->readRecordTimings();
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(stage->timings().size(), 12u);
  EXPECT_STREQ(stage->timings()[0].name, "vkc.geometry_queries.layout.queries");
  EXPECT_STREQ(stage->timings()[3].name, "vkc.geometry_queries.spans.families");
  EXPECT_STREQ(stage->timings()[11].name, "vkc.geometry_queries.ranges");
}

// --- Primitive pairs (GeometryQueryRecordInfo::devicePrimitivePairs: a query per invocation) ---

// 10k random primitive pairs, every pair type of the three primitive families: kCpuScalar's contacts,
// ranges and counts bit for bit, as the slot path's; 100 reruns of one record identical.
TEST_F(GeometryQueryDeviceVulkan, PrimitivePairsEqualCpuScalarAndTheSlotPath) {
  Batch b = randomBatch(83, 10000, /*pointSets=*/false);
  Batch ref = b;
  auto cpu = ref.run(Backend::kCpuScalar, kCapacity);
  ASSERT_TRUE(cpu.ok()) << cpu.message();
  ASSERT_GT(cpu->contacts, 3000u);
  ASSERT_LE(cpu->contacts, kCapacity);
  auto [stage, o, d] = resident(b, 100000);
  ASSERT_NE(stage, nullptr);
  d.info.deviceFamilies = kGeometryQueryFamiliesPrimitive;
  record(*stage, d.info);
  const GeometryQueryDeviceCounts slotPath = o.read();
  expectEqualsCpu(o, ref, *cpu, "slot path");
  d.info.devicePrimitivePairs = true;
  o.poison(b.queries.size());
  record(*stage, d.info);
  expectEqualsCpu(o, ref, *cpu, "primitive pairs");
  const GeometryQueryDeviceCounts c = o.read();
  EXPECT_EQ(c.overflow, 0u);
  EXPECT_EQ(c.invalidQueries, 0u);
  EXPECT_EQ(c.slots, 0u);  // no slot layout
  EXPECT_EQ(c.dispatchX, slotPath.dispatchX);
  EXPECT_EQ(c.candidatesMissing, 0u);
  expectHundredReruns(*stage, d.info, o, ref, cpu->written);
}

// 50 000 queries: blocks of 4 chunks of 64 (the LOCAL pass's loop), 196 blocks (each BLOCKS
// invocation walks 4): kCpuScalar's contacts and ranges bit for bit. (The 10k batch above: 79 blocks
// of 2 chunks.)
TEST_F(GeometryQueryDeviceVulkan, PrimitivePairsInBlocksOfSeveralChunks) {
  const uint32_t n = 50000;
  Batch b = randomBatch(97, n, /*pointSets=*/false);
  Batch ref = b;
  const size_t capacity = 2 * size_t{n};
  auto cpu = ref.run(Backend::kCpuScalar, capacity);
  ASSERT_TRUE(cpu.ok()) << cpu.message();
  ASSERT_LE(cpu->contacts, capacity);
  auto stage = makeStage(limitsFor(b, 1000));
  ASSERT_NE(stage, nullptr);
  DeviceBatch d = deviceBatch(b);
  detail::Buffer ea = hostBuffer(capacity * sizeof(ContactElement)), eb = hostBuffer(capacity * sizeof(ContactElement));
  detail::Buffer ranges = hostBuffer(n * sizeof(ContactRange)), counts = hostBuffer(sizeof(GeometryQueryDeviceCounts));
  d.info.outputs = {.elementsA = {ea.handle(), 0, capacity * sizeof(ContactElement)},
                    .elementsB = {eb.handle(), 0, capacity * sizeof(ContactElement)},
                    .ranges = {ranges.handle(), 0, n * sizeof(ContactRange)},
                    .counts = {counts.handle(), 0, sizeof(GeometryQueryDeviceCounts)}};
  d.info.devicePrimitivePairs = true;
  record(*stage, d.info);
  GeometryQueryDeviceCounts c;
  std::memcpy(&c, counts.mapped(), sizeof c);
  ASSERT_EQ(c.contacts, cpu->contacts);
  ASSERT_EQ(c.written, cpu->written);
  EXPECT_EQ(c.invalidQueries, 0u);
  EXPECT_EQ(std::memcmp(ea.mapped(), ref.elementsA.data(), cpu->written * sizeof(ContactElement)), 0);
  EXPECT_EQ(std::memcmp(eb.mapped(), ref.elementsB.data(), cpu->written * sizeof(ContactElement)), 0);
  EXPECT_EQ(std::memcmp(ranges.mapped(), ref.ranges.data(), n * sizeof(ContactRange)), 0);
}

// Queries the primitive path does not take or whose values are bad, interleaved with good ones:
// each counted, no contact, an empty range at its position; the good queries keep kCpuScalar's
// contacts at the same places.
TEST_F(GeometryQueryDeviceVulkan, PrimitivePairsCountBadQueriesAndKeepTheOthers) {
  Batch good = randomBatch(89, 300, /*pointSets=*/false);
  Batch bad = good;
  const auto [sphere, nanSphere, unknownType, mesh] = addBadGeometries(bad);
  bad.points.assign(4, v3(0.1f, 0.0f, 0.0f));
  const uint32_t points = bad.add(Geometry::pointSet(0, 4));  // valid, but not a primitive
  const uint32_t plane = bad.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false));
  Geometry skewed = Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1));
  skewed.p1.w = 0.5f;  // not a unit quaternion
  const uint32_t box = bad.add(skewed);
  const uint32_t box2 = bad.add(Geometry::orientedBox(v3(0.5f, 0, 0), identityQuat(), v3(1, 1, 1)));
  const GeometryQuery badQueries[] = {
      {sphere, 1u << 30, GeometryMethod::kStatic, 0},       // index out of range
      {1u << 31, sphere, GeometryMethod::kStatic, 0},       // index out of range
      {sphere, sphere, static_cast<GeometryMethod>(7), 0},  // unknown method
      {sphere, nanSphere, GeometryMethod::kStatic, 0},      // NaN
      {unknownType, sphere, GeometryMethod::kStatic, 0},    // unknown type
      {mesh, sphere, GeometryMethod::kStatic, 0},           // mesh
      {points, sphere, GeometryMethod::kStatic, 0},         // a point set: not a primitive pair
      {points, sphere, GeometryMethod::kContinuous, 0},     // continuous
      {plane, plane, GeometryMethod::kStatic, 0},           // N/A pair
      {box, sphere, GeometryMethod::kStatic, 0},            // non-unit rotation (basic family)
      {box, box2, GeometryMethod::kStatic, 0},              // non-unit rotation (manifold family)
      {sphere, sphere, GeometryMethod::kStatic, 5},         // a static query's state
  };
  const std::vector<bool> isBad = interleave(good.queries, badQueries, bad.queries);
  Batch ref = good;
  auto cpu = ref.run(Backend::kCpuScalar, kCapacity);
  ASSERT_TRUE(cpu.ok()) << cpu.message();
  auto [stage, o, d] = resident(bad, 40000);
  ASSERT_NE(stage, nullptr);
  d.info.devicePrimitivePairs = true;
  record(*stage, d.info);
  const GeometryQueryDeviceCounts c = o.read();
  EXPECT_EQ(c.invalidQueries, std::size(badQueries));
  ASSERT_EQ(c.contacts, cpu->contacts);
  ASSERT_EQ(c.written, cpu->written);
  expectGoodQueriesKept(o, isBad, ref);
  // A family left out: its queries are counted too (the basic family writes their entries).
  d.info.deviceFamilies = kGeometryQueryFamilyBasic;
  o.poison(bad.queries.size());
  record(*stage, d.info);
  const GeometryQueryDeviceCounts basicOnly = o.read();
  EXPECT_GT(basicOnly.invalidQueries, std::size(badQueries));
  EXPECT_LT(basicOnly.contacts, c.contacts);
  // Only the manifold family: every query but the manifold pairs' is counted.
  d.info.deviceFamilies = kGeometryQueryFamilyManifold;
  o.poison(bad.queries.size());
  record(*stage, d.info);
  EXPECT_GT(o.read().invalidQueries, basicOnly.invalidQueries);
}

// Every nonempty subset of the three primitive families (the lowest family asked for writes the
// others' and the bad queries' entries and ranges), good and bad primitive queries interleaved: the
// counts, every range and every contact equal the slot path's with the same deviceFamilies, the
// outputs overwritten with markers before each record (a range or element nobody wrote shows).
TEST_F(GeometryQueryDeviceVulkan, PrimitivePairsEveryFamilySubsetEqualsTheSlotPath) {
  Batch good = randomBatch(211, 700, /*pointSets=*/false);
  Batch bad = good;
  const auto [sphere, nanSphere, unknownType, mesh] = addBadGeometries(bad);
  const uint32_t plane = bad.add(Geometry::plane(v3(0, 0, 0), v3(0, 1, 0), false));
  Geometry skewed = Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1));
  skewed.p1.w = 0.5f;  // not a unit quaternion
  const uint32_t box = bad.add(skewed);
  const uint32_t box2 = bad.add(Geometry::orientedBox(v3(0.5f, 0, 0), identityQuat(), v3(1, 1, 1)));
  Geometry longAxis = Geometry::cylinder(v3(0, 0, 0), v3(0, 2, 0), 0.5f, 1.0f);  // axis of length 2
  const uint32_t cylinder = bad.add(longAxis);
  const GeometryQuery badQueries[] = {
      {sphere, 1u << 30, GeometryMethod::kStatic, 0}, {sphere, nanSphere, GeometryMethod::kStatic, 0},
      {plane, plane, GeometryMethod::kStatic, 0},     {box, sphere, GeometryMethod::kStatic, 0},
      {box, box2, GeometryMethod::kStatic, 0},        {sphere, sphere, GeometryMethod::kStatic, 5},
      {cylinder, box2, GeometryMethod::kStatic, 0},   {sphere, sphere, static_cast<GeometryMethod>(7), 0},
      {unknownType, sphere, GeometryMethod::kStatic, 0}, {sphere, mesh, GeometryMethod::kStatic, 0},
  };
  interleave(good.queries, badQueries, bad.queries);
  auto [stage, o, d] = resident(bad, 40000);
  ASSERT_NE(stage, nullptr);
  const size_t n = bad.queries.size();
  for (uint32_t families = 1; families <= kGeometryQueryFamiliesPrimitive; ++families) {
    d.info.deviceFamilies = families;
    d.info.devicePrimitivePairs = false;
    o.poison(n);
    record(*stage, d.info);
    const GeometryQueryDeviceCounts s = o.read();
    const std::vector<ContactElement> sa(o.elementsA(), o.elementsA() + s.written);
    const std::vector<ContactElement> sb(o.elementsB(), o.elementsB() + s.written);
    const std::vector<ContactRange> sr(o.rangeAt(), o.rangeAt() + n);
    d.info.devicePrimitivePairs = true;
    o.poison(n);
    record(*stage, d.info);
    const GeometryQueryDeviceCounts c = o.read();
    EXPECT_EQ(c.contacts, s.contacts) << families;
    EXPECT_EQ(c.written, s.written) << families;
    EXPECT_EQ(c.overflow, s.overflow) << families;
    EXPECT_EQ(c.invalidQueries, s.invalidQueries) << families;
    EXPECT_GE(c.invalidQueries, std::size(badQueries)) << families;
    EXPECT_EQ(c.dispatchX, s.dispatchX) << families;
    EXPECT_EQ(c.slots, 0u) << families;
    EXPECT_EQ(std::memcmp(o.rangeAt(), sr.data(), n * sizeof(ContactRange)), 0) << families;
    EXPECT_EQ(std::memcmp(o.elementsA(), sa.data(), sa.size() * sizeof(ContactElement)), 0) << families;
    EXPECT_EQ(std::memcmp(o.elementsB(), sb.data(), sb.size() * sizeof(ContactElement)), 0) << families;
  }
}

// No query and one query: the counts (and the one query's range and contacts) kCpuScalar's.
TEST_F(GeometryQueryDeviceVulkan, PrimitivePairsOfZeroAndOneQuery) {
  const Batch one = randomBatch(5, 1, /*pointSets=*/false);
  for (const bool empty : {true, false}) {
    Batch b = one;
    if (empty) b.queries.clear();
    Batch ref = b;
    auto cpu = ref.run(Backend::kCpuScalar, kCapacity);
    ASSERT_TRUE(cpu.ok()) << cpu.message();
    auto [stage, o, d] = resident(one, 100);
    ASSERT_NE(stage, nullptr);
    d.info.queryCount = static_cast<uint32_t>(b.queries.size());
    d.info.devicePrimitivePairs = true;
    o.poison(1);
    record(*stage, d.info);
    const GeometryQueryDeviceCounts c = o.read();
    EXPECT_EQ(c.contacts, cpu->contacts) << empty;
    EXPECT_EQ(c.written, cpu->written) << empty;
    EXPECT_EQ(c.overflow, 0u) << empty;
    EXPECT_EQ(c.invalidQueries, 0u) << empty;
    EXPECT_EQ(c.candidatesMissing, 0u) << empty;
    EXPECT_EQ(c.slots, 0u) << empty;
    if (!empty) {
      EXPECT_EQ(std::memcmp(o.rangeAt(), ref.ranges.data(), sizeof(ContactRange)), 0);
      EXPECT_EQ(std::memcmp(o.elementsA(), ref.elementsA.data(), cpu->written * sizeof(ContactElement)), 0);
      EXPECT_EQ(std::memcmp(o.elementsB(), ref.elementsB.data(), cpu->written * sizeof(ContactElement)), 0);
    }
  }
}

// An output smaller than the contacts: the overflow reported, the first elements kCpuScalar's and
// nothing written past the capacity.
TEST_F(GeometryQueryDeviceVulkan, PrimitivePairsOverflowWritesNothingPastTheCapacity) {
  Batch b = randomBatch(101, 2000, /*pointSets=*/false);
  Batch ref = b;
  auto cpu = ref.run(Backend::kCpuScalar, kCapacity);
  ASSERT_TRUE(cpu.ok()) << cpu.message();
  const uint32_t capacity = 100;
  ASSERT_GT(cpu->contacts, capacity);
  auto [stage, o, d] = resident(b, 10000);
  ASSERT_NE(stage, nullptr);
  d.info.devicePrimitivePairs = true;
  d.info.outputs.elementsA.size = capacity * sizeof(ContactElement);
  d.info.outputs.elementsB.size = capacity * sizeof(ContactElement);
  record(*stage, d.info);
  const GeometryQueryDeviceCounts c = o.read();
  EXPECT_EQ(c.contacts, cpu->contacts);
  EXPECT_EQ(c.written, capacity);
  EXPECT_EQ(c.overflow, 1u);
  EXPECT_EQ(std::memcmp(o.elementsA(), ref.elementsA.data(), capacity * sizeof(ContactElement)), 0);
  EXPECT_EQ(std::memcmp(o.elementsB(), ref.elementsB.data(), capacity * sizeof(ContactElement)), 0);
  EXPECT_EQ(std::memcmp(o.rangeAt(), ref.ranges.data(), b.queries.size() * sizeof(ContactRange)), 0);
  const auto* past = reinterpret_cast<const unsigned char*>(o.elementsA() + capacity);
  const auto* pastB = reinterpret_cast<const unsigned char*>(o.elementsB() + capacity);
  for (size_t i = 0; i < 10 * sizeof(ContactElement); ++i) {
    ASSERT_EQ(past[i], 0xAB) << i;
    ASSERT_EQ(pastB[i], 0xAB) << i;
  }
}

// One query and 10k, one family and all three: three dependent dispatches (QUERY COUNT per family;
// BLOCKS and LOCAL; QUERY WRITE per family), none indirect, the block sums' fill the only transfer,
// and the same barriers.
TEST_F(GeometryQueryDeviceVulkan, PrimitivePairsRecordStatsAreFixed) {
  Batch one = randomBatch(41, 1, /*pointSets=*/false);
  Batch many = randomBatch(43, 10000, /*pointSets=*/false);
  auto stage = makeStage({.maxQueries = 10000, .maxGeometries = 20000, .maxContacts = 1000, .maxSlots = 1000});
  ASSERT_NE(stage, nullptr);
  std::vector<RecordStats> stats;
  for (uint32_t families : {kGeometryQueryFamiliesPrimitive, kGeometryQueryFamilyBasic, kGeometryQueryFamiliesDevice}) {
    for (const Batch* b : {&one, &many}) {
      DeviceBatch d = deviceBatch(*b);
      d.info.deviceFamilies = families;
      d.info.devicePrimitivePairs = true;
      VkCommandBuffer cmd = beginCommandBuffer();
      const Status st = stage->record(cmd, d.info);
      ASSERT_TRUE(st.ok()) << st.message();
      const RecordStats s = stage->lastRecordStats();
      freeCommandBuffer(cmd);
      const uint32_t n = families == kGeometryQueryFamilyBasic ? 1u : 3u;
      EXPECT_EQ(s.dispatches, 2 * n + 2);
      EXPECT_EQ(s.dependentDispatches, 3u);
      EXPECT_EQ(s.indirectDispatches, 0u);
      EXPECT_EQ(s.transfers, 1u);  // the block sums zeroed; nothing uploaded
      stats.push_back(s);
    }
  }
  for (const RecordStats& s : stats) EXPECT_EQ(s.barriers, stats[0].barriers);
  EXPECT_EQ(stats[0].barriers, 5u);  // before the fill, the passes' opening one, two between levels, the closing one
  // The same 10k queries on the slot path: seven dependent dispatches.
  DeviceBatch d = deviceBatch(many);
  d.info.deviceFamilies = kGeometryQueryFamiliesPrimitive;
  VkCommandBuffer cmd = beginCommandBuffer();
  ASSERT_TRUE(stage->record(cmd, d.info).ok());
  EXPECT_EQ(stage->lastRecordStats().dependentDispatches, 7u);
  freeCommandBuffer(cmd);
}

TEST_F(GeometryQueryDeviceVulkan, PrimitivePairsHostRefusesNamingTheField) {
  Batch b = randomBatch(73, 20, /*pointSets=*/false);
  auto stage = makeStage(limitsFor(b, 10000));
  ASSERT_NE(stage, nullptr);
  DeviceBatch d = deviceBatch(b);
  d.info.devicePrimitivePairs = true;
  VkCommandBuffer cmd = beginCommandBuffer();
  ASSERT_TRUE(stage->record(cmd, d.info).ok());
  GeometryQueryRecordInfo bad = d.info;
  bad.deviceFamilies = kGeometryQueryFamilyImplicit | kGeometryQueryFamilyContinuous;
  Status st = stage->record(cmd, bad);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("deviceFamilies"), std::string::npos) << st.message();
  EXPECT_EQ(stage->lastRecordStats(), RecordStats{});
  GeometryQueryRecordInfo host = hostInfo(b);
  host.devicePrimitivePairs = true;
  st = stage->record(cmd, host);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("devicePrimitivePairs"), std::string::npos) << st.message();
  freeCommandBuffer(cmd);
}

// The per-pass GPU times of a primitive-pair record: the four passes of one family.
TEST_F(GeometryQueryDeviceVulkan, PrimitivePairsTimestampsNameTheirPasses) {
  Batch b = randomBatch(79, 100, /*pointSets=*/false);
  auto [stage, o, d] = resident(b, 10000);
  ASSERT_NE(stage, nullptr);
  d.info.deviceFamilies = kGeometryQueryFamilyBasic;
  d.info.devicePrimitivePairs = true;
  d.info.timestamps = true;
  record(*stage, d.info);
  ASSERT_TRUE(stage->readRecordTimings().ok());
  ASSERT_EQ(stage->timings().size(), 4u);
  EXPECT_STREQ(stage->timings()[0].name, "vkc.geometry_queries.basic.query_count");
  EXPECT_STREQ(stage->timings()[1].name, "vkc.geometry_queries.blocks");
  EXPECT_STREQ(stage->timings()[2].name, "vkc.geometry_queries.local");
  EXPECT_STREQ(stage->timings()[3].name, "vkc.geometry_queries.basic.query_write");
}

}  // namespace
}  // namespace vkc::test::geometry
