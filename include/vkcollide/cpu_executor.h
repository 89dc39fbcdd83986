// Multi-core CPU twins. Every CPU twin (computeBoundsCpu, collideShapesCpu, collideSelfCpu,
// collideInterCpu, radixSortCpu) has an overload that takes a CpuExecutor after the backend:
//
//   auto pool = vkc::CpuExecutor::create(vkc::CpuExecutor::hardwareThreads());  // vkcollide's own threads
//   vkc::Status s = vkc::collideShapesCpu(input, vkc::Backend::kCpuSimd, *pool);
//
// The executor runs the stage's work on several threads: split across cloths (many small cloths go
// to different threads) and within large cloths (chunks of particles or sorted slots). The results are
// BITWISE identical to one thread (the overloads without an executor) for any thread count and any
// host parallel-for, on both CPU backends: every particle's response is computed from the pass's
// starting state (Jacobi) by the same operations in the same order whichever thread runs it, and the
// sorts are stable (a stable sort has one result). Small inputs (under a few thousand particles) run
// on the calling thread: handing them to other threads would cost more than it saves.
//
// An executor is either vkcollide's own pool of threads or a parallel-for that the host lends
// (HostParallelFor: e.g. a wrapper over Jolt's JobSystem, TBB, or the engine's task graph).
#pragma once

#include <cstdint>
#include <memory>

#include "vkcollide/result.h"

namespace vkc {
#include "vkcollide/export.h"

namespace detail {
struct Internals;
}
VKC_API_BEGIN

// One piece of a parallel-for: runs the tasks [begin, end) of the loop whose state is `context`.
using ParallelTaskFn = void (*)(void* context, uint32_t begin, uint32_t end);

// A parallel-for that the host lends vkcollide. run(user, count, task, context) must call
// task(context, begin, end) for ranges [begin, end) that together cover [0, count) exactly once (in
// any order, any grouping, on any threads including the calling one) and return only when every call
// has returned. vkcollide calls `run` only from the thread that called the CPU twin, one loop at a
// time (never from inside a task), with count >= 2; tasks never throw. A run that skips or repeats
// tasks is detected where it can be (the twin then returns kInvalidArgument: "... the host's
// parallel-for ran N of M tasks"; its outputs may then be partly written).
struct HostParallelFor {
  void* user = nullptr;  // passed back to run
  void (*run)(void* user, uint32_t count, ParallelTaskFn task, void* context) = nullptr;
  // How many tasks `run` may execute at once (>= 1): vkcollide splits its work into a few tasks per
  // worker (4; 16 for loops whose tasks vary in cost, such as self collision's sweep of a large
  // cloth). With 1, the work runs on the calling thread and `run` is never called.
  uint32_t workers = 0;
};

// Where a CPU twin's work runs. Move-only; a default-constructed executor runs everything on the
// calling thread (exactly the overloads without an executor). One executor may be used by several
// host threads: vkcollide's own pool then runs their calls one at a time (each call uses every thread
// of the pool), a host parallel-for is called concurrently from each (the host decides).
class CpuExecutor {
 public:
  CpuExecutor();  // the calling thread only: threads() == 1
  CpuExecutor(CpuExecutor&&) noexcept;
  CpuExecutor& operator=(CpuExecutor&&) noexcept;
  ~CpuExecutor();  // joins the pool's threads (no call may be running)

  // vkcollide's own pool: `threads` threads in all, the calling thread included (threads - 1 are
  // started here and sleep between calls; after each loop of a call they poll for up to 50 us before
  // sleeping, so a stage's loops run back to back without a wake-up: a short busy wait per call).
  // 1 starts none (today's single-threaded behaviour). Errors:
  // threads 0 ("CpuExecutor::create: threads is 0 ..."), or more than kMaxCpuThreads; a thread that
  // cannot be started (std::system_error) is a kUnsupported error naming it.
  static Result<CpuExecutor> create(uint32_t threads);
  // The host's parallel-for (not copied beyond the struct: `user` must outlive the executor). Errors
  // name the field: "host.run is null", "host.workers is 0".
  static Result<CpuExecutor> create(const HostParallelFor& host);

  // How many threads may run a call's work at once (the pool's size, or host.workers).
  uint32_t threads() const;
  // The hardware's threads (std::thread::hardware_concurrency; 1 where it is unknown).
  static uint32_t hardwareThreads();

  struct Impl;  // opaque

 private:
  friend struct detail::Internals;
  explicit CpuExecutor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The most threads one executor may have (pool size or host.workers).
inline constexpr uint32_t kMaxCpuThreads = 1024;

VKC_API_END
}  // namespace vkc
