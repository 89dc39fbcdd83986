// The checks that every stage's integration test (tests/integration/*_integration_test.cpp) makes
// alike: memoryRequirements() against what create() allocates, an error that names what it is
// about, and "every failing device allocation is reported and leaks nothing".
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "support/device_memory.h"
#include "vkcollide/vkcollide.h"
#include "vulkan/context_impl.h"

namespace vkc::test {

// `st` is an error whose message contains `part` (a field, "queue", ...).
inline void expectErrorNaming(const Status& st, std::string_view part) {
  ASSERT_FALSE(st.ok()) << "expected an error naming " << part;
  EXPECT_NE(st.message().find(part), std::string::npos) << st.message();
}

// Two runs' particles are equal bit for bit (two paths of one stage, say); the first few differences
// are reported with both values, labelled `aName` and `bName`.
inline void expectParticlesBitwiseEqual(std::span<const Float4> a, std::span<const Float4> b, std::string_view aName,
                                        std::string_view bName) {
  ASSERT_EQ(a.size(), b.size());
  size_t diffs = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(Float4)) != 0 && diffs++ < 5) {
      ADD_FAILURE() << "particle " << i << ": " << aName << " (" << a[i].x << ", " << a[i].y << ", " << a[i].z << ", "
                    << a[i].w << "), " << bName << " (" << b[i].x << ", " << b[i].y << ", " << b[i].z << ", " << b[i].w
                    << ")";
    }
  }
  EXPECT_EQ(diffs, 0u);
}

// Stage::memoryRequirements(ctx, info) is what Stage::create(ctx, info) takes from `impl`'s
// allocator: device-local bytes, host-visible bytes and buffers, each exactly. Returns the
// requirements for further checks; nullopt (after a failure) when either call failed.
template <typename Stage, typename Info>
std::optional<MemoryRequirements> expectMemoryRequirementsMatchCreate(Context& ctx,
                                                                      const detail::ContextImpl& impl,
                                                                      const Info& info,
                                                                      const std::string& label) {
  auto need = Stage::memoryRequirements(ctx, info);
  if (!need.ok()) {
    ADD_FAILURE() << label << ": memoryRequirements: " << need.message();
    return std::nullopt;
  }
  const MemoryRequirements before = impl.allocator->inUse();
  auto stage = Stage::create(ctx, info);
  if (!stage.ok()) {
    ADD_FAILURE() << label << ": create: " << stage.message();
    return std::nullopt;
  }
  const MemoryRequirements after = impl.allocator->inUse();
  EXPECT_EQ(after.deviceLocalBytes - before.deviceLocalBytes, need->deviceLocalBytes) << label;
  EXPECT_EQ(after.hostVisibleBytes - before.hostVisibleBytes, need->hostVisibleBytes) << label;
  EXPECT_EQ(after.bufferCount - before.bufferCount, need->bufferCount) << label;
  return *need;
}

// Runs `attempt` with device allocation k failing, for k = 0, 1, ... until an attempt succeeds
// (returns true) or `maxK` attempts have failed; each in a fresh imported context (with a queue)
// whose memory comes from a fresh TestDeviceMemory, which must hold nothing once the context and
// everything `attempt` made are gone.
void forEachFailingAllocation(const detail::ContextImpl& impl,
                              const std::function<bool(Context&, TestDeviceMemory&)>& attempt,
                              int64_t maxK = 64);

// The same in one context (its pipelines compiled once) over `memory`: allocation k after those made
// so far fails, and after each attempt `memory` holds what it held before.
void forEachFailingAllocationIn(Context& ctx, TestDeviceMemory& memory,
                                const std::function<bool(Context&, TestDeviceMemory&)>& attempt,
                                int64_t maxK = 64);

}  // namespace vkc::test
