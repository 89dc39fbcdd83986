#include "support/executors.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <thread>
#include <utility>

#include "cpu/executor.h"

namespace vkc::test {
namespace {

void unevenRun(void* /*user*/, uint32_t count, ParallelTaskFn task, void* context) {
  // Groups [b, e) of sizes 1, 2, 3, ..., taken from the last one down by whichever thread is free.
  std::vector<std::pair<uint32_t, uint32_t>> groups;
  for (uint32_t b = 0, size = 1; b < count; b += size, ++size) groups.emplace_back(b, std::min(count, b + size));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t g; (g = next.fetch_add(1)) < groups.size();) {
      const auto [b, e] = groups[groups.size() - 1 - g];
      task(context, b, e);
    }
  };
  std::thread a(work), b(work);
  work();
  a.join();
  b.join();
}

}  // namespace

HostParallelFor unevenHostParallelFor() { return HostParallelFor{nullptr, unevenRun, 3}; }

const std::vector<TestExecutor>& testExecutors() {
  static const auto* list = [] {
    auto* v = new std::vector<TestExecutor>;
    auto add = [&](const char* name, Result<CpuExecutor> e, uint32_t minChunk) {
      if (!e.ok()) std::abort();
      auto* executor = new CpuExecutor(std::move(e).value());
      if (minChunk != 0) detail::setMinChunkForTesting(*executor, minChunk);
      v->push_back({name, executor});
    };
    add("1 thread, 64-particle chunks", CpuExecutor::create(1), 64);
    add("2 threads", CpuExecutor::create(2), 0);
    add("2 threads, 64-particle chunks", CpuExecutor::create(2), 64);
    add("7 threads, 64-particle chunks", CpuExecutor::create(7), 64);
    add("host parallel-for, 64-particle chunks", CpuExecutor::create(unevenHostParallelFor()), 64);
    add("host parallel-for, 200-particle chunks", CpuExecutor::create(unevenHostParallelFor()), 200);
    return v;
  }();
  return *list;
}

}  // namespace vkc::test
