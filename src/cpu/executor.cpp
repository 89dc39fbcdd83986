// CpuExecutor: vkcollide's own thread pool, or the host's parallel-for (include/vkcollide/cpu_executor.h).
//
// The pool runs one loop at a time (a mutex serializes the calls of several host threads): the caller
// publishes the loop under the pool's mutex and bumps a generation counter; sleeping workers wake,
// join the loop, and everyone (the caller included) takes task indices from an atomic counter until
// none are left. The caller returns once every task has finished and every worker that joined has
// left, so no worker touches a loop after its call returned.
// A stage's call runs several loops in a row with a little serial work between them (bounds, then
// the grids, then the collision), so a worker that finished a loop, and a caller waiting for the
// last tasks, poll for a short while (kSpin) before they sleep: the next loop, or the end of this
// one, then costs no futex wake-up (tens of microseconds on a busy virtual machine, against loops of
// a few hundred).

#include "cpu/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <system_error>
#include <thread>

#include "vulkan/context_impl.h"

namespace vkc {
namespace {

// How long a worker or a waiting caller polls before it sleeps.
constexpr std::chrono::microseconds kSpin{50};

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `ready` for at most kSpin; whether it became true.
template <class Ready>
bool spinUntil(Ready&& ready) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (uint32_t i = 0;; ++i) {
    if (ready()) return true;
    cpuRelax();
    if ((i & 63u) == 63u && std::chrono::steady_clock::now() >= until) return false;
  }
}

class ThreadPool {
 public:
  // Starts `workers` threads; throws std::system_error where one cannot be started (after joining
  // those that were).
  explicit ThreadPool(uint32_t workers) {
    try {
      for (uint32_t i = 0; i < workers; ++i) threads_.emplace_back([this] { workerLoop(); });
    } catch (...) {
      stopAll();
      throw;
    }
  }
  ~ThreadPool() { stopAll(); }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void run(uint32_t count, ParallelTaskFn fn, void* context) {
    const std::lock_guard<std::mutex> call(callMutex_);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      fn_ = fn;
      context_ = context;
      count_ = count;
      next_.store(0, std::memory_order_relaxed);
      done_ = 0;
      finishedLoop_.store(false, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    const uint32_t mine = work();
    std::unique_lock<std::mutex> lock(mutex_);
    done_ += mine;
    if (done_ == count_ && inLoop_ == 0) return;
    lock.unlock();
    spinUntil([&] { return finishedLoop_.load(std::memory_order_acquire); });
    lock.lock();
    finished_.wait(lock, [&] { return done_ == count_ && inLoop_ == 0; });
  }

 private:
  // Runs tasks of the current loop until none are left; returns how many it ran.
  uint32_t work() {
    uint32_t ran = 0;
    for (;;) {
      const uint32_t t = next_.fetch_add(1, std::memory_order_relaxed);
      if (t >= count_) return ran;
      fn_(context_, t, t + 1);
      ++ran;
    }
  }

  void workerLoop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (!stop_ && generation_.load(std::memory_order_relaxed) == seen) {
        lock.unlock();
        spinUntil([&] { return generation_.load(std::memory_order_acquire) != seen || stopFlag_.load(std::memory_order_acquire); });
        lock.lock();
      }
      wake_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_relaxed) != seen; });
      if (stop_) return;
      seen = generation_.load(std::memory_order_relaxed);
      ++inLoop_;
      lock.unlock();
      const uint32_t ran = work();
      lock.lock();
      done_ += ran;
      --inLoop_;
      if (inLoop_ == 0 && done_ == count_) {
        finishedLoop_.store(true, std::memory_order_release);
        finished_.notify_one();
      }
    }
  }

  void stopAll() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      stopFlag_.store(true, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  std::vector<std::thread> threads_;
  std::mutex callMutex_;  // one loop at a time
  std::mutex mutex_;      // guards everything below but next_
  std::condition_variable wake_, finished_;
  // Changed under mutex_; atomic so that polling workers may read it without the lock.
  std::atomic<uint64_t> generation_{0};
  bool stop_ = false;
  std::atomic<bool> stopFlag_{false};      // stop_, for polling workers
  std::atomic<bool> finishedLoop_{false};  // set (under mutex_) when a worker finished the loop's last task
  uint32_t inLoop_ = 0;  // workers inside the current loop
  uint32_t done_ = 0;    // tasks of the current loop that finished
  // The current loop (written under mutex_ before the generation changes; read by the workers that
  // joined it).
  ParallelTaskFn fn_ = nullptr;
  void* context_ = nullptr;
  uint32_t count_ = 0;
  std::atomic<uint32_t> next_{0};
};

}  // namespace

struct CpuExecutor::Impl {
  uint32_t threads = 1;
  uint32_t minChunk = detail::kDefaultMinChunk;
  HostParallelFor host;               // host.run set: the host's parallel-for
  std::unique_ptr<ThreadPool> pool;   // else the own pool (null with one thread)
};

CpuExecutor::CpuExecutor() : impl_(std::make_unique<Impl>()) {}
CpuExecutor::CpuExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CpuExecutor::CpuExecutor(CpuExecutor&&) noexcept = default;
CpuExecutor& CpuExecutor::operator=(CpuExecutor&&) noexcept = default;
CpuExecutor::~CpuExecutor() = default;

Result<CpuExecutor> CpuExecutor::create(uint32_t threads) {
  if (threads == 0) {
    return Error{ErrorCode::kInvalidArgument,
                 "CpuExecutor::create: threads is 0; it must be 1 (the calling thread only) .. " +
                     std::to_string(kMaxCpuThreads)};
  }
  if (threads > kMaxCpuThreads) {
    return Error{ErrorCode::kInvalidArgument, "CpuExecutor::create: threads is " + std::to_string(threads) +
                                                  "; at most " + std::to_string(kMaxCpuThreads)};
  }
  auto impl = std::make_unique<Impl>();
  impl->threads = threads;
  if (threads > 1) {
    try {
      impl->pool = std::make_unique<ThreadPool>(threads - 1);
    } catch (const std::system_error& e) {
      return Error{ErrorCode::kUnsupported, "CpuExecutor::create: starting " + std::to_string(threads - 1) +
                                                " worker threads failed: " + e.what()};
    }
  }
  return CpuExecutor(std::move(impl));
}

Result<CpuExecutor> CpuExecutor::create(const HostParallelFor& host) {
  if (host.run == nullptr) {
    return Error{ErrorCode::kInvalidArgument, "CpuExecutor::create: host.run is null; it must be the host's parallel-for"};
  }
  if (host.workers == 0 || host.workers > kMaxCpuThreads) {
    return Error{ErrorCode::kInvalidArgument, "CpuExecutor::create: host.workers is " + std::to_string(host.workers) +
                                                  "; it must be 1 .. " + std::to_string(kMaxCpuThreads)};
  }
  auto impl = std::make_unique<Impl>();
  impl->threads = host.workers;
  impl->host = host;
  return CpuExecutor(std::move(impl));
}

uint32_t CpuExecutor::threads() const { return impl_ ? impl_->threads : 1u; }

uint32_t CpuExecutor::hardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

namespace detail {

CpuExecutor::Impl* executorImpl(const CpuExecutor& executor) { return Internals::ptr(executor); }

void setMinChunkForTesting(CpuExecutor& executor, uint32_t particles) {
  if (CpuExecutor::Impl* impl = executorImpl(executor)) impl->minChunk = std::max(64u, (particles + 63u) / 64u * 64u);
}

ParallelCall::ParallelCall(const CpuExecutor* executor, const char* owner)
    : impl_(executor != nullptr ? executorImpl(*executor) : nullptr), owner_(owner) {
  if (impl_ != nullptr) {
    threads_ = impl_->threads;
    minChunk_ = impl_->minChunk;
  }
}

uint32_t ParallelCall::taskCount(uint64_t total, uint32_t perThread) const {
  if (threads_ <= 1 || total < 2 * uint64_t{minChunk_}) return 1;
  return static_cast<uint32_t>(std::min<uint64_t>(uint64_t{threads_} * std::max(perThread, 1u), total / minChunk_));
}

uint32_t ParallelCall::chunkSize(uint64_t total, uint32_t align, uint32_t perThread) const {
  const uint64_t tasks = taskCount(total, perThread);
  const uint64_t chunk = (total + tasks - 1) / tasks;
  return static_cast<uint32_t>(std::min<uint64_t>((chunk + align - 1) / align * align, 0x80000000u));
}

void ParallelCall::dispatch(uint32_t count, ParallelTaskFn fn, void* context) {
  if (impl_->host.run != nullptr) {
    impl_->host.run(impl_->host.user, count, fn, context);
  } else {
    impl_->pool->run(count, fn, context);
  }
}

Status ParallelCall::status() const {
  if (error_.empty()) return {};
  return Error{ErrorCode::kInvalidArgument, error_};
}

}  // namespace detail
}  // namespace vkc
