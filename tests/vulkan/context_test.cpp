// Device creation, selection and import.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "support/bounds_reference.h"
#include "support/device_memory.h"
#include "support/vulkan_fixture.h"

namespace vkc::test {
namespace {

using ContextVulkan = VulkanTest;

TEST_F(ContextVulkan, DeviceMeetsRequirementsAndReportsLimits) {
  const DeviceInfo& d = ctx().deviceInfo();
  EXPECT_TRUE(d.usable());
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.apiVersion, VK_API_VERSION_1_3);
  EXPECT_GE(d.subgroupSize, 1u);
  EXPECT_GT(d.maxStorageBufferRange, 0u);
  EXPECT_GT(d.timestampPeriodNs, 0.0f) << "the test device has timestamps (lavapipe does)";
  auto all = Context::enumerateDevices();
  ASSERT_TRUE(all.ok()) << all.message();
  EXPECT_FALSE(all->empty());
}

TEST_F(ContextVulkan, SelectorByNameAndIndexAndUnknown) {
  ContextCreateInfo ci;
  const std::string name = ctx().deviceInfo().name;
  const std::string piece = name.substr(0, std::min<size_t>(name.size(), 6));
  ci.deviceSelector = piece.c_str();
  auto byName = Context::create(ci);
  ASSERT_TRUE(byName.ok()) << byName.message();
  EXPECT_EQ((*byName)->deviceInfo().name, name);
  const std::string index = std::to_string(ctx().deviceInfo().index);
  ci.deviceSelector = index.c_str();
  auto byIndex = Context::create(ci);
  ASSERT_TRUE(byIndex.ok()) << byIndex.message();
  ci.deviceSelector = "no-such-device-xyz";
  auto none = Context::create(ci);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(none.message().find("no-such-device-xyz"), std::string::npos) << none.message();
}

TEST_F(ContextVulkan, ImportedDeviceIsUsedButNotOwned) {
  const ContextImportInfo ii = testImportInfo(impl(), true);
  std::vector<Float4> p(5000);
  for (size_t i = 0; i < p.size(); ++i) p[i] = {float(i), -float(i), 0.5f, 1};
  const std::vector<ClothRange> cloths = {{0, 2500}, {2500, 2500}};
  {
    auto imported = Context::import(ii);
    ASSERT_TRUE(imported.ok()) << imported.message();
    EXPECT_TRUE((*imported)->imported());
    auto boxes = boundsOf(Backend::kVulkan, imported->get(), {p, {}, cloths, false});
    ASSERT_TRUE(boxes.ok()) << boxes.message();
    EXPECT_TRUE(bitwiseEqual((*boxes)[1], referenceBounds(p, {}, cloths[1], false)));
  }  // the imported context is gone; the device must still work
  auto again = boundsOf(Backend::kVulkan, &ctx(), {p, {}, cloths, false});
  ASSERT_TRUE(again.ok()) << again.message();
}

TEST_F(ContextVulkan, MemoryCallbacksComeInPairsAndCarryEveryBuffer) {
  TestDeviceMemory memory(impl());
  DeviceMemoryCallbacks half = memory.callbacks();
  half.free = nullptr;
  auto r = importTestContext(impl(), false, half);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("ContextImportInfo::memory"), std::string::npos) << r.message();
  ContextCreateInfo ci;
  ci.memory = half;
  auto created = Context::create(ci);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.message().find("ContextCreateInfo::memory"), std::string::npos) << created.message();

  // With both, every buffer of the context (device-local and host-visible) comes from the host.
  auto c = importTestContext(impl(), true, memory.callbacks());
  ASSERT_TRUE(c.ok()) << c.message();
  std::vector<Float4> p(100, Float4{1, 2, 3, 1});
  const std::vector<ClothRange> cloths = {{0, 100}};
  auto boxes = boundsOf(Backend::kVulkan, c->get(), {p, {}, cloths, false});
  ASSERT_TRUE(boxes.ok()) << boxes.message();
  EXPECT_GT(memory.calls(), 0);
  EXPECT_EQ(memory.live(), 0);  // the one-call path's stage is gone
  EXPECT_EQ(detail::Internals::of(**c).allocator->blockCount(), 0u);  // no block of vkcollide's own
}

// The header vkGetPipelineCacheData starts with (Vulkan spec, "Pipeline Cache Header"), least
// significant byte first.
uint32_t headerWord(const std::vector<uint8_t>& data, size_t word) {
  uint32_t v = 0;
  for (int b = 3; b >= 0; --b) v = v << 8 | data[word * 4 + b];
  return v;
}

// A context's pipeline cache data seeds the next context's cache; data that is not this device's
// (another driver's UUID, a truncated file, another header version, nothing) is ignored, and the
// context works the same either way.
TEST_F(ContextVulkan, PipelineCacheDataSeedsTheNextContextAndForeignDataIsIgnored) {
  std::vector<Float4> p(3000);
  for (size_t i = 0; i < p.size(); ++i) p[i] = {float(i % 17), -float(i), 0.25f * float(i % 5), 1};
  const std::vector<ClothRange> cloths = {{0, 1000}, {1000, 2000}};
  auto first = createTestContext(false);
  ASSERT_TRUE(first.ok()) << first.message();
  EXPECT_FALSE((*first)->pipelineCacheDataUsed());
  auto boxes = boundsOf(Backend::kVulkan, first->get(), {p, {}, cloths, false});
  ASSERT_TRUE(boxes.ok()) << boxes.message();
  auto data = (*first)->pipelineCacheData();
  ASSERT_TRUE(data.ok()) << data.message();
  ASSERT_GE(data->size(), 32u);
  RecordProperty("pipeline_cache_bytes", std::to_string(data->size()));  // lavapipe 22.3: the header alone
  EXPECT_GE(headerWord(*data, 0), 32u);  // the header's size
  EXPECT_EQ(headerWord(*data, 1), uint32_t{VK_PIPELINE_CACHE_HEADER_VERSION_ONE});
  EXPECT_EQ(headerWord(*data, 2), ctx().deviceInfo().vendorId);
  EXPECT_EQ(headerWord(*data, 3), ctx().deviceInfo().deviceId);

  std::vector<uint8_t> otherDriver = *data;
  otherDriver[16] ^= 0x5a;  // the first byte of pipelineCacheUUID
  std::vector<uint8_t> otherVersion = *data;
  otherVersion[4] ^= 0x02;
  const std::vector<uint8_t> truncated(data->begin(), data->begin() + 20);
  const std::vector<uint8_t> shortHeader = [&] {
    std::vector<uint8_t> d = *data;
    d[0] = 16;  // a header size below the version-one header's 32 bytes
    d[1] = d[2] = d[3] = 0;
    return d;
  }();
  struct Case {
    const char* what;
    std::span<const uint8_t> bytes;
    bool used;
  };
  for (const Case& c : {Case{"own data", *data, true}, Case{"another driver's", otherDriver, false},
                        Case{"another header version", otherVersion, false}, Case{"truncated", truncated, false},
                        Case{"a short header", shortHeader, false}, Case{"none", {}, false}}) {
    SCOPED_TRACE(c.what);
    auto next = createTestContext(false, c.bytes);
    ASSERT_TRUE(next.ok()) << next.message();
    EXPECT_EQ((*next)->pipelineCacheDataUsed(), c.used);
    auto again = boundsOf(Backend::kVulkan, next->get(), {p, {}, cloths, false});
    ASSERT_TRUE(again.ok()) << again.message();
    for (size_t k = 0; k < cloths.size(); ++k) EXPECT_TRUE(bitwiseEqual((*again)[k], (*boxes)[k]));
    auto saved = (*next)->pipelineCacheData();
    ASSERT_TRUE(saved.ok()) << saved.message();
    EXPECT_GE(saved->size(), 32u);
  }
}

// An imported device's pipelines go through the host's pipeline cache, which vkcollide never destroys;
// the host's cache and data for vkcollide's own cannot both be given.
TEST_F(ContextVulkan, ImportedDeviceUsesTheHostsPipelineCache) {
  const detail::ContextImpl& c = impl();
  VkPipelineCacheCreateInfo pcci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  VkPipelineCache hostCache = VK_NULL_HANDLE;
  ASSERT_EQ(c.vk.vkCreatePipelineCache(c.device, &pcci, nullptr, &hostCache), VK_SUCCESS);
  ContextImportInfo ii = testImportInfo(c, true);
  ii.pipelineCache = hostCache;
  const uint8_t someData[40] = {};
  ii.pipelineCacheData = someData;
  auto both = Context::import(ii);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(both.message().find("ContextImportInfo::pipelineCacheData"), std::string::npos) << both.message();

  ii.pipelineCacheData = {};
  std::vector<Float4> p(2000, Float4{1, -2, 3, 1});
  const std::vector<ClothRange> cloths = {{0, 2000}};
  {
    auto imported = Context::import(ii);
    ASSERT_TRUE(imported.ok()) << imported.message();
    EXPECT_EQ(detail::Internals::of(**imported).pipelineCache, hostCache);
    EXPECT_FALSE((*imported)->pipelineCacheDataUsed());
    auto boxes = boundsOf(Backend::kVulkan, imported->get(), {p, {}, cloths, false});
    ASSERT_TRUE(boxes.ok()) << boxes.message();
    auto ours = (*imported)->pipelineCacheData();
    ASSERT_TRUE(ours.ok()) << ours.message();
    size_t size = 0;
    ASSERT_EQ(c.vk.vkGetPipelineCacheData(c.device, hostCache, &size, nullptr), VK_SUCCESS);
    std::vector<uint8_t> host(size);
    ASSERT_EQ(c.vk.vkGetPipelineCacheData(c.device, hostCache, &size, host.data()), VK_SUCCESS);
    EXPECT_EQ(*ours, host);  // the same cache
  }
  // The imported context is gone and the host's cache with it is not: the host still uses it.
  size_t size = 0;
  EXPECT_EQ(c.vk.vkGetPipelineCacheData(c.device, hostCache, &size, nullptr), VK_SUCCESS);
  EXPECT_GE(size, 32u);
  c.vk.vkDestroyPipelineCache(c.device, hostCache, nullptr);
}

TEST(ContextImportApi, RejectsNullHandles) {
  ContextImportInfo ii;
  auto r = Context::import(ii);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("ContextImportInfo::instance"), std::string::npos);
}

}  // namespace
}  // namespace vkc::test
