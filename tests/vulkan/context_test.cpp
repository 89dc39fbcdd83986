// Device creation, selection and import.
#include <gtest/gtest.h>

#include <cstdlib>

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
  ContextImportInfo ii;
  ii.instance = impl().instance;
  ii.physicalDevice = impl().physicalDevice;
  ii.device = impl().device;
  ii.queueFamilyIndex = impl().queueFamily;
  ii.queue = impl().queue;
  ii.getInstanceProcAddr = vkGetInstanceProcAddr;
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

TEST(ContextImportApi, RejectsNullHandles) {
  ContextImportInfo ii;
  auto r = Context::import(ii);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("ContextImportInfo::instance"), std::string::npos);
}

}  // namespace
}  // namespace vkc::test
