// Private: how the CPU twins run their work on a CpuExecutor (include/vkcollide/cpu_executor.h).
//
// A twin makes one ParallelCall per call and runs its phases through forEach(count, f): f(task) for
// every task index, on the executor's threads (or inline: one task, one thread, no executor). Tasks
// of one forEach must write disjoint outputs; the work of a task must not depend on which thread runs
// it or on the other tasks' progress, so that the results are those of one thread, bit for bit.
// Tasks never call forEach (no nesting).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "vkcollide/cpu_executor.h"
#include "vkcollide/result.h"

namespace vkc::detail {

// Work below this many particles (or slots, or pairs) per task stays on one thread by default.
inline constexpr uint32_t kDefaultMinChunk = 8192;
// Tasks per thread a loop is cut into by default (a few, so that a thread that falls behind is
// caught up by the others).
inline constexpr uint32_t kTasksPerThread = 4;

// For tests: the smallest chunk the executor's calls split work into (default kDefaultMinChunk;
// rounded up to 64), so that small inputs run on several threads and within cloths too.
void setMinChunkForTesting(CpuExecutor& executor, uint32_t particles);

// The executor's state (null for a moved-from executor).
CpuExecutor::Impl* executorImpl(const CpuExecutor& executor);

// A piece of a cloth: cloth-local elements [begin, end).
struct WorkPiece {
  uint32_t cloth = 0, begin = 0, end = 0;
};

// Cloths cut into pieces and the pieces grouped into tasks: task t runs pieces
// [taskFirst[t], taskFirst[t + 1]) in order.
struct WorkPlan {
  std::vector<WorkPiece> pieces;
  std::vector<uint32_t> taskFirst;  // tasks() + 1 entries
  uint32_t tasks() const { return static_cast<uint32_t>(taskFirst.size()) - 1; }
  std::span<const WorkPiece> task(uint32_t t) const {
    return std::span<const WorkPiece>(pieces).subspan(taskFirst[t], taskFirst[t + 1] - taskFirst[t]);
  }
};

class ParallelCall {
 public:
  // executor null: everything inline. `owner` names the twin in error messages.
  ParallelCall(const CpuExecutor* executor, const char* owner);

  uint32_t threads() const { return threads_; }
  uint32_t minChunk() const { return minChunk_; }
  // How many tasks to cut `total` elements into: 1 below 2 minChunk() or with one thread, else up to
  // `perThread` per thread (default 4; more for a loop whose tasks vary in cost), each at least
  // minChunk() elements.
  uint32_t taskCount(uint64_t total, uint32_t perThread = kTasksPerThread) const;
  // The size of each of taskCount(total, perThread) chunks, rounded up to a multiple of `align` (the
  // last one may be shorter).
  uint32_t chunkSize(uint64_t total, uint32_t align, uint32_t perThread = kTasksPerThread) const;

  // Cuts each cloth (sizeOf(c) elements) into pieces of at most a chunk (pieces start at multiples
  // of `align` within their cloth) and groups consecutive pieces (and whole small cloths) into tasks
  // of about a chunk each. One task (every cloth whole) when the work is small or threads() is 1.
  // With split false, cloths stay whole (a large one is a task of its own).
  template <class SizeOf>
  WorkPlan plan(uint32_t clothCount, SizeOf&& sizeOf, uint32_t align = 64, bool split = true,
                uint32_t perThread = kTasksPerThread) const {
    // A cloth costs a little even when empty (its own setup): 64 elements' worth.
    constexpr uint64_t kClothCost = 64;
    uint64_t total = 0;
    for (uint32_t c = 0; c < clothCount; ++c) total += uint64_t{sizeOf(c)} + kClothCost;
    WorkPlan p;
    p.taskFirst.push_back(0);
    if (taskCount(total, perThread) <= 1) {
      for (uint32_t c = 0; c < clothCount; ++c) p.pieces.push_back({c, 0, static_cast<uint32_t>(sizeOf(c))});
      p.taskFirst.push_back(static_cast<uint32_t>(p.pieces.size()));
      return p;
    }
    const uint64_t chunk = chunkSize(total, align, perThread);
    uint64_t load = 0;
    for (uint32_t c = 0; c < clothCount; ++c) {
      const uint32_t n = static_cast<uint32_t>(sizeOf(c));
      uint32_t b = 0;
      do {
        const uint32_t e = split ? static_cast<uint32_t>(std::min<uint64_t>(n, b + chunk)) : n;
        p.pieces.push_back({c, b, e});
        load += e - b + kClothCost;
        if (load >= chunk) {
          p.taskFirst.push_back(static_cast<uint32_t>(p.pieces.size()));
          load = 0;
        }
        b = e;
      } while (b < n);
    }
    if (p.taskFirst.back() != p.pieces.size()) p.taskFirst.push_back(static_cast<uint32_t>(p.pieces.size()));
    return p;
  }

  // Runs f(task) for every task in [0, count) and returns when all have returned. Inline (in order)
  // when count < 2 or there is one thread. An exception thrown by a task (std::bad_alloc) is rethrown
  // here after the others finished.
  template <class F>
  void forEach(uint32_t count, F&& f) {
    if (count == 0) return;
    if (count == 1 || threads_ <= 1) {
      for (uint32_t t = 0; t < count; ++t) f(t);
      return;
    }
    struct Loop {
      F* f;
      std::atomic<uint32_t> ran{0};
      std::mutex errorMutex;
      std::exception_ptr error;
    } loop{&f};
    dispatch(
        count,
        [](void* context, uint32_t begin, uint32_t end) {
          Loop& l = *static_cast<Loop*>(context);
          l.ran.fetch_add(end - begin, std::memory_order_relaxed);
          for (uint32_t t = begin; t < end; ++t) {
            try {
              (*l.f)(t);
            } catch (...) {
              const std::lock_guard<std::mutex> lock(l.errorMutex);
              if (!l.error) l.error = std::current_exception();
            }
          }
        },
        &loop);
    if (loop.error) std::rethrow_exception(loop.error);
    const uint32_t ran = loop.ran.load(std::memory_order_relaxed);
    if (ran != count && error_.empty()) {
      error_ = std::string(owner_) + ": the host's parallel-for ran " + std::to_string(ran) + " of " +
               std::to_string(count) + " tasks (HostParallelFor::run must run each task once)";
    }
  }

  // An error of the host's parallel-for seen by forEach (it skipped or repeated tasks), else ok.
  Status status() const;

 private:
  void dispatch(uint32_t count, ParallelTaskFn fn, void* context);

  CpuExecutor::Impl* impl_ = nullptr;
  const char* owner_;
  uint32_t threads_ = 1;
  uint32_t minChunk_ = kDefaultMinChunk;
  std::string error_;
};

}  // namespace vkc::detail
