#include "support/integration.h"

namespace vkc::test {
namespace {

// k = 0, 1, ... until `step(k)` succeeds or `maxK` steps have failed.
void untilSuccess(int64_t maxK, const std::function<bool(int64_t)>& step) {
  bool succeeded = false;
  for (int64_t k = 0; !succeeded && k < maxK; ++k) {
    SCOPED_TRACE("allocation " + std::to_string(k) + " fails");
    succeeded = step(k);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_TRUE(succeeded) << "still failing after " << maxK << " allocations";
}

}  // namespace

void forEachFailingAllocation(const detail::ContextImpl& impl,
                              const std::function<bool(Context&, TestDeviceMemory&)>& attempt, int64_t maxK) {
  untilSuccess(maxK, [&](int64_t k) {
    TestDeviceMemory memory(impl);
    bool ok = false;
    {
      auto c = importTestContext(impl, true, memory.callbacks());
      [&] { ASSERT_TRUE(c.ok()) << c.message(); }();  // fatal: untilSuccess stops
      if (!c.ok()) return false;
      memory.failAt(k);
      ok = attempt(**c, memory);
    }
    EXPECT_EQ(memory.live(), 0) << "device memory leaked";
    return ok;
  });
}

void forEachFailingAllocationIn(Context& ctx, TestDeviceMemory& memory,
                                const std::function<bool(Context&, TestDeviceMemory&)>& attempt,
                                int64_t maxK) {
  const int64_t live = memory.live();
  untilSuccess(maxK, [&](int64_t k) {
    memory.failAt(memory.calls() + k);
    const bool ok = attempt(ctx, memory);
    EXPECT_EQ(memory.live(), live) << "device memory leaked";
    return ok;
  });
}

}  // namespace vkc::test
