// bench_threads: the CPU twins on one thread (the overloads without an executor) and on N threads
// (CpuExecutor::create(N), N = the hardware's threads unless --threads says otherwise), wall clock,
// for every stage: bounds, radix sort, shape collision (1M particles in one cloth, discrete and CCD,
// and 256 cloths of 1024), self collision (1M particles flat and crumpled, and 256 cloths of 1024)
// and inter collision (256 overlapping cloths of 1024). The 1- and N-thread samples alternate (each
// from the same input, restored outside the timing), so both see the same machine load; medians and
// their ratio are reported, and every N-thread result is checked to be bitwise the 1-thread one. The
// load average (/proc/loadavg) before and after is printed and written to the JSON: on a shared
// machine the ratio is only meaningful when the load is below the core count.
//
// --model: for a loaded machine, where a wall-clock ratio means nothing. The N-thread call runs on
// one thread through a HostParallelFor of N workers that times every task (thread CPU time); its
// modelled time is the serial time between the loops (the call's thread CPU time less its tasks')
// plus each loop's makespan when its tasks are taken in order by whichever of the N threads is free
// first (what the pool's task counter does). Against the one-thread call's thread CPU time (samples
// alternating), this gives the ratio if the tasks ran as fast on N threads as on one: what it leaves
// out is what the threads share (memory bandwidth, caches) and wake-ups. Per loop, the last sample's
// task count, task CPU and makespan are printed too.
//
// --ceiling: before and after the cases, a loop without memory traffic on 1 and on N threads at once:
// the N-thread throughput this machine gives right then (see ceiling()).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "vkcollide/vkcollide.h"

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_threads.json", 9) {}
  uint32_t threads = 0;  // 0: the hardware's
  std::string only;      // run the cases whose name contains this
  bool scalar = false;   // also the cpu-scalar backend
  bool model = false;    // the modelled N-thread time from per-task thread CPU time (see above)
  bool ceiling = false;  // the machine's N-thread ceiling for a loop that touches no memory (below)
  uint32_t slowPercent = 0;  // --model: also model the other threads at this % of the caller's speed
};

void usage(std::FILE* f) {
  std::fprintf(f,
               "usage: bench_threads [options]\n"
               "  --threads N    the threaded rows' thread count (default: the hardware's threads)\n"
               "  --only TEXT    only the cases whose name contains TEXT (e.g. shapes, self, 256)\n"
               "  --scalar       also the cpu-scalar backend (default: cpu-simd only)\n"
               "  --model        thread CPU time: the one-thread call against the N-thread call modelled\n"
               "                 from its tasks' times, run on one thread (for a loaded machine)\n"
               "  --slow-percent P  with --model: also the N-thread call with the other threads running at P%%\n"
               "                 of the calling thread's speed (a virtual machine's slower second core), against\n"
               "                 the ideal (the CPU time over 1 + (N - 1) P / 100)\n"
               "  --ceiling      before and after the cases: a loop that touches no memory on 1 and on N\n"
               "                 threads at once, each thread's CPU time, and N threads' throughput over one's\n"
               "  --reps R       samples per row and thread count, median reported (default 9)\n"
               "  --quick        small sizes, 3 reps (smoke test)\n"
               "  --json PATH    write results as JSON (default bench_threads.json)\n"
               "  --device SEL   ignored (CPU only)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args("bench_threads", argc, argv);
  const bool parsed = parseCommonOptions(args, o, usage, [&]() -> Parsed {
    if (args.is("--scalar")) return setFlag(o.scalar);
    if (args.is("--model")) return setFlag(o.model);
    if (args.is("--ceiling")) return setFlag(o.ceiling);
    if (args.is("--only")) return taken(args.text(o.only));
    return numberOption(args, {{"--threads", &o.threads}, {"--slow-percent", &o.slowPercent}});
  });
  if (!parsed) return std::nullopt;
  if (o.quick && !o.repsGiven) o.reps = 3;
  if (o.reps == 0) {
    std::fprintf(stderr, "bench_threads: --reps must be >= 1\n");
    return std::nullopt;
  }
  if (o.threads == 0) o.threads = CpuExecutor::hardwareThreads();
  return o;
}

std::string loadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a.empty() ? "unknown" : a + " " + b + " " + c;
}

// One benchmark case: `restore` puts the input back (untimed), `run(executor)` runs the stage (null:
// the overload without an executor), `result` returns the output bytes compared between the runs.
struct Case {
  std::string name;
  uint32_t particles = 0;
  std::function<void()> restore;
  std::function<Status(const CpuExecutor*)> run;
  std::function<std::vector<uint8_t>()> result;
};

struct Row {
  std::string name, backend;
  uint32_t particles = 0, threads = 0, reps = 0;
  double oneMs = 0, manyMs = 0;
  // --model (oneMs, manyMs: the one-thread call's thread CPU time and the modelled N-thread time):
  // medians of the N-thread plan's task CPU time and serial time per call.
  double taskMs = 0, serialMs = 0;
  // Wall-clock rows: medians of the process's CPU time per call (every thread's, the pool's polling
  // included) on one and on N threads: what N threads spend beyond one thread's work.
  double cpuOneMs = 0, cpuManyMs = 0;
};

template <class T>
std::vector<uint8_t> bytesOf(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// The process's CPU time in ms (CLOCK_PROCESS_CPUTIME_ID: every thread's).
double processMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// --- scenes ---------------------------------------------------------------------------------------

// A wavy sheet of side x side particles over [-1, 1]^2 (xz), previous positions 0.01 above.
void sheet(uint32_t side, float phase, std::vector<Float4>& p, std::vector<Float4>& q) {
  for (uint32_t i = 0; i < side * side; ++i) {
    const float x = -1.0f + 2.0f * static_cast<float>(i % side) / static_cast<float>(side - 1);
    const float z = -1.0f + 2.0f * static_cast<float>(i / side) / static_cast<float>(side - 1);
    const float y = 0.1f * std::sin(3.0f * x + phase) * std::cos(2.0f * z);
    p.push_back({x, y - 0.01f, z, 1.0f});
    q.push_back({x, y, z, 1.0f});
  }
}

struct ShapeScene {
  std::vector<Float4> particles, prev, p0, q0, spheres, prevSpheres;
  std::vector<Capsule> capsules;
  std::vector<ClothRange> cloths;
  std::vector<ClothColliders> colliders;
  ShapeCollisionSettings settings;
  ShapeCollisionInput input() { return {particles, prev, cloths, colliders, settings}; }
};

// `clothCount` sheets of side^2 particles, each with `spheres` moving spheres (pairs of them capsules).
ShapeScene shapeScene(uint32_t clothCount, uint32_t side, uint32_t spheres, bool continuous) {
  ShapeScene s;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float radius = 0.25f * std::cbrt(8.0f / static_cast<float>(spheres));
  for (uint32_t c = 0; c < clothCount; ++c) {
    s.cloths.push_back({static_cast<uint32_t>(s.particles.size()), side * side});
    sheet(side, static_cast<float>(c), s.particles, s.prev);
    for (uint32_t k = 0; k < spheres; ++k) {
      const Float4 sp{u(rng), -0.15f + 0.15f * u(rng), u(rng), radius * (0.75f + 0.25f * u(rng))};
      s.spheres.push_back(sp);
      s.prevSpheres.push_back({sp.x + 0.02f * u(rng), sp.y + 0.02f * u(rng), sp.z + 0.02f * u(rng), sp.w});
    }
  }
  for (uint32_t k = 0; k + 1 < spheres; k += 2) s.capsules.push_back({k, k + 1});
  for (uint32_t c = 0; c < clothCount; ++c) {
    s.colliders.push_back({std::span<const Float4>(s.spheres).subspan(size_t{c} * spheres, spheres),
                           std::span<const Float4>(s.prevSpheres).subspan(size_t{c} * spheres, spheres), s.capsules});
  }
  s.settings.continuous = continuous;
  s.settings.friction = continuous ? 0.3f : 0.0f;
  s.p0 = s.particles;
  s.q0 = s.prev;
  return s;
}

struct SelfScene {
  std::vector<Float4> particles, p0, rest;
  std::vector<ClothRange> cloths;
  SelfCollisionSettings settings;
  SelfCollisionInput input() { return {particles, rest, cloths, {}, settings}; }
};

// `clothCount` cloths of n x n particles, spacing h: flat (+-5% jitter) or crumpled (folded over
// itself, +-25% jitter, with flat rest positions).
SelfScene selfScene(uint32_t clothCount, uint32_t n, bool crumpled) {
  SelfScene s;
  const float h = 2.0f / static_cast<float>(n - 1);
  std::mt19937 rng(n + (crumpled ? 1 : 0));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (uint32_t c = 0; c < clothCount; ++c) {
    s.cloths.push_back({static_cast<uint32_t>(s.particles.size()), n * n});
    for (uint32_t r = 0; r < n; ++r) {
      for (uint32_t k = 0; k < n; ++k) {
        const float x = h * static_cast<float>(k), z = h * static_cast<float>(r);
        if (!crumpled) {
          s.particles.push_back({x + 0.05f * h * u(rng), 0.05f * h * u(rng), z + 0.05f * h * u(rng), 1.0f});
          continue;
        }
        s.rest.push_back({x, 0.0f, z, 1.0f});
        const float t = x / 2.0f;
        const float fx = t < 0.5f ? x : 2.0f - x;
        const float fy = (t < 0.5f ? 0.0f : 0.3f * h) + 0.2f * h * std::sin(3.5f * z + 3.0f * t);
        s.particles.push_back({fx + 0.25f * h * u(rng), fy + 0.25f * h * u(rng), z + 0.25f * h * u(rng), 1.0f});
      }
    }
  }
  s.settings = {0.8f * h, 0.9f};
  s.p0 = s.particles;
  return s;
}

struct InterScene {
  std::vector<Float4> particles, p0;
  std::vector<InterClothDesc> cloths;
  InterCollisionSettings settings;
};

// `clothCount` cloths of side^2 particles (spacing h) stacked 0.6 d apart, each shifted and turned a
// little: every cloth overlaps a few neighbours (bench_inter_collision's scene).
InterScene interScene(uint32_t clothCount, uint32_t side) {
  InterScene s;
  const float h = 0.02f, d = 0.02f;
  for (uint32_t c = 0; c < clothCount; ++c) {
    const uint32_t first = static_cast<uint32_t>(s.particles.size());
    for (uint32_t y = 0; y < side; ++y) {
      for (uint32_t x = 0; x < side; ++x) {
        s.particles.push_back({(static_cast<float>(x) - 0.5f * static_cast<float>(side)) * h,
                               (static_cast<float>(y) - 0.5f * static_cast<float>(side)) * h, 0.0f, 1.0f});
      }
    }
    const float fc = static_cast<float>(c), angle = 0.05f * fc;
    s.cloths.push_back({{first, side * side},
                        {0.13f * h * fc, 0.07f * h * fc, 0.6f * d * fc, 0},
                        {0, 0, std::sin(0.5f * angle), std::cos(0.5f * angle)}});
  }
  s.settings = {d, 1.0f, 1};
  s.p0 = s.particles;
  return s;
}

// --- cases ----------------------------------------------------------------------------------------

// Runs the stage once per sample on one thread and on the executor, alternating, from the same input.
bool measure(const Options& o, Case& c, Backend backend, const CpuExecutor& many, std::vector<Row>& rows) {
  std::vector<double> cpuOne, cpuMany;  // the process's CPU time per call (every thread's)
  auto once = [&](const CpuExecutor* e, double& ms) {
    c.restore();
    const double c0 = processMs();
    const double t0 = nowMs();
    const Status s = c.run(e);
    ms = nowMs() - t0;
    (e ? cpuMany : cpuOne).push_back(processMs() - c0);
    if (!s) std::fprintf(stderr, "bench_threads: %s: %s\n", c.name.c_str(), s.message().c_str());
    return s.ok();
  };
  double ms = 0;
  if (!once(nullptr, ms)) return false;  // warm-up (scratch, pages)
  const std::vector<uint8_t> want = c.result();
  if (!once(&many, ms)) return false;
  if (c.result() != want) {
    std::fprintf(stderr, "bench_threads: %s: the %u-thread result differs from the single-threaded one\n",
                 c.name.c_str(), many.threads());
    return false;
  }
  std::vector<double> one, multi;
  for (uint32_t r = 0; r < o.reps; ++r) {
    if (!once(nullptr, ms)) return false;
    one.push_back(ms);
    if (!once(&many, ms)) return false;
    multi.push_back(ms);
  }
  Row row{c.name, toString(backend), c.particles, many.threads(), o.reps, median(one), median(multi)};
  row.cpuOneMs = median(cpuOne);
  row.cpuManyMs = median(cpuMany);
  std::printf("%-34s %-10s %9u %11.3f %11.3f %7.2fx %9.3f %9.3f\n", row.name.c_str(), row.backend.c_str(), row.particles,
              row.oneMs, row.manyMs, row.oneMs / row.manyMs, row.cpuOneMs, row.cpuManyMs);
  std::fflush(stdout);
  rows.push_back(row);
  return true;
}

// --model: the N-thread plan run on the calling thread, every task timed (thread CPU time); and
// (concurrent) on N threads at once (the caller and N - 1 threads started for each loop, tasks taken
// from a counter), every task timed the same way, with each loop's wall-clock time: what the tasks
// cost when the threads run together (shared caches, memory bandwidth, a shared core).
struct TaskTimer {
  uint32_t threads = 2;
  bool concurrent = false;
  std::vector<std::vector<double>> loops;  // per forEach of the call: its tasks' CPU times, in order
  std::vector<double> loopWall;            // (concurrent) per forEach: wall clock from start to end
};

void timedRun(void* user, uint32_t count, ParallelTaskFn task, void* context) {
  TaskTimer& timer = *static_cast<TaskTimer*>(user);
  std::vector<double>& loop = timer.loops.emplace_back(count, 0.0);
  if (!timer.concurrent) {
    for (uint32_t t = 0; t < count; ++t) {
      const double t0 = threadMs();
      task(context, t, t + 1);
      loop[t] = threadMs() - t0;
    }
    return;
  }
  std::atomic<uint32_t> next{0};
  auto work = [&] {
    for (uint32_t t; (t = next.fetch_add(1)) < count;) {
      const double t0 = threadMs();
      task(context, t, t + 1);
      loop[t] = threadMs() - t0;
    }
  };
  const double w0 = nowMs();
  std::vector<std::thread> helpers;
  for (uint32_t i = 1; i < timer.threads; ++i) helpers.emplace_back(work);
  work();
  for (std::thread& h : helpers) h.join();
  timer.loopWall.push_back(nowMs() - w0);
}

// A loop's task CPU: its tasks' times summed in order.
double loopSum(const std::vector<double>& loop) {
  double sum = 0;
  for (const double t : loop) sum += t;
  return sum;
}

// The loop's makespan on `threads` threads taking its tasks in order, each the next free thread's;
// the threads but the first (the caller) at `slowPercent`% of its speed (100: all alike).
double makespan(const std::vector<double>& tasks, uint32_t threads, uint32_t slowPercent = 100) {
  std::vector<double> free(std::max(threads, 1u), 0.0);
  const double slow = 100.0 / std::max(slowPercent, 1u);
  for (const double t : tasks) {
    size_t next = 0;
    for (size_t i = 1; i < free.size(); ++i) next = free[i] < free[next] ? i : next;
    free[next] += next == 0 ? t : t * slow;
  }
  double end = 0;
  for (const double f : free) end = std::max(end, f);
  return end;
}

bool model(const Options& o, Case& c, Backend backend, const CpuExecutor& many, std::vector<Row>& rows) {
  TaskTimer timer{o.threads, false, {}, {}};
  TaskTimer together{o.threads, true, {}, {}};
  auto timed = CpuExecutor::create(HostParallelFor{&timer, timedRun, o.threads});
  auto concurrent = CpuExecutor::create(HostParallelFor{&together, timedRun, o.threads});
  if (!timed || !concurrent) {
    std::fprintf(stderr, "bench_threads: %s\n", (timed ? concurrent : timed).message().c_str());
    return false;
  }
  // One call: its thread CPU time (and its wall-clock time in `wall`).
  double wall = 0;
  auto once = [&](const CpuExecutor* e, double& ms) {
    c.restore();
    for (TaskTimer* t : {&timer, &together}) {
      if (e != (t == &timer ? &*timed : &*concurrent)) continue;
      t->loops.clear();
      t->loopWall.clear();
    }
    const double w0 = nowMs(), t0 = threadMs();
    const Status s = c.run(e);
    ms = threadMs() - t0;
    wall = nowMs() - w0;
    if (!s) std::fprintf(stderr, "bench_threads: %s: %s\n", c.name.c_str(), s.message().c_str());
    return s.ok();
  };
  double ms = 0;
  if (!once(nullptr, ms) || !once(&many, ms)) return false;  // warm-up
  const std::vector<uint8_t> want = c.result();
  if (!once(&*timed, ms)) return false;
  if (c.result() != want) {
    std::fprintf(stderr, "bench_threads: %s: the modelled %u-thread result differs from the single-threaded one\n",
                 c.name.c_str(), o.threads);
    return false;
  }
  std::vector<double> one, modelled, task, serial, wallOne, wallPool, wallTogether, modelledSlow;
  // Per loop, every sample's task CPU one after another and together, and the ratio of the two in
  // each sample (paired: the VM's speed drifts between samples, less within one).
  std::vector<std::vector<double>> loopAlone, loopTogether, loopRatio;
  for (uint32_t r = 0; r < o.reps; ++r) {
    if (!once(nullptr, ms)) return false;
    one.push_back(ms);
    wallOne.push_back(wall);
    if (!once(&many, ms)) return false;
    wallPool.push_back(wall);
    if (!once(&*timed, ms)) return false;
    double cpu = 0, span = 0, spanSlow = 0;
    for (const auto& loop : timer.loops) {
      cpu += loopSum(loop);
      span += makespan(loop, o.threads);
      if (o.slowPercent != 0) spanSlow += makespan(loop, o.threads, o.slowPercent);
    }
    if (o.slowPercent != 0) modelledSlow.push_back(ms - cpu + spanSlow);
    task.push_back(cpu);
    serial.push_back(ms - cpu);
    modelled.push_back(ms - cpu + span);
    if (!once(&*concurrent, ms)) return false;
    wallTogether.push_back(wall);
    if (together.loops.size() == timer.loops.size()) {
      loopAlone.resize(timer.loops.size());
      loopTogether.resize(timer.loops.size());
      loopRatio.resize(timer.loops.size());
      for (size_t l = 0; l < timer.loops.size(); ++l) {
        const double alone = loopSum(timer.loops[l]), both = loopSum(together.loops[l]);
        loopAlone[l].push_back(alone);
        loopTogether[l].push_back(both);
        loopRatio[l].push_back(alone > 0 ? both / alone : 1.0);
      }
    }
  }
  if (c.result() != want) {
    std::fprintf(stderr, "bench_threads: %s: the concurrent %u-thread result differs from the single-threaded one\n",
                 c.name.c_str(), o.threads);
    return false;
  }
  Row row{c.name, toString(backend), c.particles, o.threads, o.reps, median(one), median(modelled), median(task),
          median(serial)};
  std::printf("%-34s %-10s %9u %11.3f %11.3f %7.2fx %10.3f %9.3f\n", row.name.c_str(), row.backend.c_str(),
              row.particles, row.oneMs, row.manyMs, row.oneMs / row.manyMs, row.taskMs, row.serialMs);
  std::printf("    wall clock (medians; meaningful only on a quiet machine): 1 thread %.3f ms, the pool's %u threads "
              "%.3f ms (%.2fx), concurrent timed tasks %.3f ms\n",
              median(wallOne), many.threads(), median(wallPool), median(wallOne) / median(wallPool),
              median(wallTogether));
  // The other threads at slowPercent% of the caller's speed: the modelled call against the ideal (the
  // task CPU over the threads' summed speed, plus the serial time).
  const double speeds = 1.0 + (o.threads - 1) * (o.slowPercent / 100.0);
  if (o.slowPercent != 0) {
    const double ideal = median(serial) + median(task) / speeds;
    std::printf("    the other threads at %u%% speed: modelled %.3f ms (%.2fx), ideal %.3f ms (%.2fx)\n", o.slowPercent,
                median(modelledSlow), row.oneMs / median(modelledSlow), ideal, row.oneMs / ideal);
  }
  // (The last sample's loops; concurrent: the last sample's, run after it.)
  const bool paired = together.loops.size() == timer.loops.size();
  for (size_t l = 0; l < timer.loops.size(); ++l) {
    const auto& loop = timer.loops[l];
    const double cpu = loopSum(loop), cpuTogether = paired ? loopSum(together.loops[l]) : 0.0;
    std::printf("    loop %2zu: %3zu tasks, task CPU %8.3f ms, makespan %8.3f ms (even split %8.3f); concurrent: task CPU "
                "%8.3f ms, wall %8.3f ms\n",
                l, loop.size(), cpu, makespan(loop, o.threads), cpu / o.threads, paired ? cpuTogether : 0.0,
                paired ? together.loopWall[l] : 0.0);
    if (o.slowPercent != 0) {
      std::printf("             the other threads at %u%% speed: makespan %8.3f ms (ideal %8.3f)\n", o.slowPercent,
                  makespan(loop, o.threads, o.slowPercent), cpu / speeds);
    }
  }
  // Every sample's loops: medians of the task CPU one after another and together, and of their
  // ratio per sample (above 1: the tasks ran slower on both threads at once).
  for (size_t l = 0; l < loopAlone.size(); ++l) {
    std::printf("    loop %2zu (medians of %zu): task CPU %8.3f ms alone, %8.3f ms together, together / alone %.3f\n", l,
                loopAlone[l].size(), median(loopAlone[l]), median(loopTogether[l]), median(loopRatio[l]));
  }
  std::fflush(stdout);
  rows.push_back(row);
  return true;
}

// --ceiling: what the machine gives N threads at once in a loop without memory traffic (12
// independent multiply-add chains in registers, more than the floating-point units' latency times
// their count: the loop runs at their throughput, so a core shared with another thread shows; about
// 0.15 s a thread): each thread's CPU time against
// one thread's alone, and the N threads' throughput over one thread's (sum of alone / together over
// the threads: N where every thread runs at one thread's speed). On a virtual machine whose cores are
// shared with other guests, this is the ratio no split of the work can beat; a stage's ratio well
// under it points at the stage, near it at the machine. Medians of `reps` alternating samples.
volatile float spinScale = 0.99999994f, spinOffset = 1e-7f, spinSink = 0.0f;  // (nothing folded or dropped)

double spinLoop() {
  // (Twelve named chains: they stay in registers, where an array went through the stack.)
  float a0 = 1.00f, a1 = 1.01f, a2 = 1.02f, a3 = 1.03f, a4 = 1.04f, a5 = 1.05f;
  float a6 = 1.06f, a7 = 1.07f, a8 = 1.08f, a9 = 1.09f, a10 = 1.10f, a11 = 1.11f;
  const float m = spinScale, c = spinOffset;
  const double t0 = threadMs();
  for (uint32_t r = 0; r < 40000000; ++r) {
    a0 = a0 * m + c, a1 = a1 * m + c, a2 = a2 * m + c, a3 = a3 * m + c, a4 = a4 * m + c, a5 = a5 * m + c;
    a6 = a6 * m + c, a7 = a7 * m + c, a8 = a8 * m + c, a9 = a9 * m + c, a10 = a10 * m + c, a11 = a11 * m + c;
  }
  const double ms = threadMs() - t0;
  spinSink = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  return ms;
}

// Returns the median throughput ratio.
double ceiling(const Options& o, const char* when) {
  std::vector<double> alone, worst, throughput;
  for (uint32_t r = 0; r < std::max(o.reps, 3u); ++r) {
    const double one = spinLoop();
    std::vector<double> ms(o.threads, 0.0);
    std::vector<std::thread> helpers;
    for (uint32_t i = 1; i < o.threads; ++i) helpers.emplace_back([&ms, i] { ms[i] = spinLoop(); });
    ms[0] = spinLoop();
    for (std::thread& h : helpers) h.join();
    double sum = 0;
    for (const double m : ms) sum += one / m;
    alone.push_back(one);
    worst.push_back(*std::max_element(ms.begin(), ms.end()));
    throughput.push_back(sum);
  }
  std::printf("ceiling (%s; a loop without memory traffic, medians of %zu): 1 thread %.1f ms CPU; on %u threads at once "
              "the slowest %.1f ms; %u threads' throughput %.2fx one thread's (samples %.2f .. %.2f)\n",
              when, alone.size(), median(alone), o.threads, median(worst), o.threads, median(throughput),
              *std::min_element(throughput.begin(), throughput.end()), *std::max_element(throughput.begin(), throughput.end()));
  std::fflush(stdout);
  return median(throughput);
}

int run(const Options& o) {
  auto many = CpuExecutor::create(o.threads);
  if (!many) {
    std::fprintf(stderr, "bench_threads: %s\n", many.message().c_str());
    return 2;
  }
  const std::string loadBefore = loadAverage();
  std::printf("bench_threads: %u threads (hardware: %u), SIMD target %s, load average %s\n", o.threads,
              CpuExecutor::hardwareThreads(), cpu::simdTargetName(), loadBefore.c_str());
  if (o.model) {
    std::printf("%-34s %-10s %9s %11s %11s %8s %10s %9s\n", "case (thread CPU, modelled)", "backend", "particles",
                "1 thread ms", (std::to_string(o.threads) + " threads ms").c_str(), "ratio", "task CPU", "serial");
  } else {
    std::printf("%-34s %-10s %9s %11s %11s %8s %9s %9s\n", "case", "backend", "particles", "1 thread ms",
                (std::to_string(o.threads) + " threads ms").c_str(), "ratio", "CPU 1", "CPU N");
  }
  const double ceilingBefore = o.ceiling ? ceiling(o, "before") : 0.0;
  const uint32_t big = o.quick ? 128 : 1024;  // side of the one-cloth scenes (1M particles)
  const uint32_t many256 = o.quick ? 16 : 256;
  std::vector<Row> rows;
  std::vector<Backend> backends = {Backend::kCpuSimd};
  if (o.scalar) backends.push_back(Backend::kCpuScalar);
  auto wanted = [&](const std::string& name) { return o.only.empty() || name.find(o.only) != std::string::npos; };
  bool ok = true;
  for (const Backend b : backends) {
    // Bounds of one cloth.
    if (std::string name = "bounds, 1 x " + std::to_string(4 * big * big); ok && wanted(name)) {
      std::vector<Float4> p, q;
      sheet(2 * big, 0.0f, p, q);
      const std::vector<ClothRange> cloths = {{0, static_cast<uint32_t>(p.size())}};
      std::vector<Aabb> boxes(1);
      Case c{name, static_cast<uint32_t>(p.size()), [] {},
             [&](const CpuExecutor* e) {
               const BoundsInput in{p, q, cloths, true, boxes};
               return e ? computeBoundsCpu(in, b, *e) : computeBoundsCpu(in, b);
             },
             [&] { return bytesOf(boxes); }};
      ok = o.model ? model(o, c, b, *many, rows) : measure(o, c, b, *many, rows);
    }
    // Radix sort of random 32-bit keys.
    if (std::string name = "radix sort, " + std::to_string(4 * big * big) + " pairs"; ok && wanted(name)) {
      const uint32_t n = 4 * big * big;
      std::mt19937 rng(3);
      std::vector<uint32_t> k0(n), keys(n), values(n);
      for (uint32_t& k : k0) k = static_cast<uint32_t>(rng());
      Case c{name, n,
             [&] {
               keys = k0;
               for (uint32_t i = 0; i < n; ++i) values[i] = i;
             },
             [&](const CpuExecutor* e) {
               const RadixSortInput in{keys, values, 32};
               return e ? radixSortCpu(in, b, *e) : radixSortCpu(in, b);
             },
             [&] {
               auto r = bytesOf(keys);
               const auto v = bytesOf(values);
               r.insert(r.end(), v.begin(), v.end());
               return r;
             }};
      ok = o.model ? model(o, c, b, *many, rows) : measure(o, c, b, *many, rows);
    }
    // Shape collision.
    struct ShapeCase {
      uint32_t cloths, side, spheres;
      bool ccd;
    };
    for (const ShapeCase sc : {ShapeCase{1, big, 32, false}, ShapeCase{1, big, 32, true}, ShapeCase{many256, 32, 4, false},
                               ShapeCase{many256, 32, 4, true}}) {
      const std::string name = "shapes, " + std::to_string(sc.cloths) + " x " + std::to_string(sc.side * sc.side) +
                               (sc.ccd ? ", CCD + friction" : ", discrete");
      if (!ok || !wanted(name)) continue;
      ShapeScene s = shapeScene(sc.cloths, sc.side, sc.spheres, sc.ccd);
      Case c{name, static_cast<uint32_t>(s.particles.size()),
             [&] {
               std::memcpy(s.particles.data(), s.p0.data(), s.p0.size() * sizeof(Float4));
               std::memcpy(s.prev.data(), s.q0.data(), s.q0.size() * sizeof(Float4));
             },
             [&](const CpuExecutor* e) { return e ? collideShapesCpu(s.input(), b, *e) : collideShapesCpu(s.input(), b); },
             [&] {
               auto r = bytesOf(s.particles);
               const auto q = bytesOf(s.prev);
               r.insert(r.end(), q.begin(), q.end());
               return r;
             }};
      ok = o.model ? model(o, c, b, *many, rows) : measure(o, c, b, *many, rows);
    }
    // Self collision.
    struct SelfCase {
      uint32_t cloths, side;
      bool crumpled;
    };
    for (const SelfCase sc : {SelfCase{1, big, false}, SelfCase{1, big, true}, SelfCase{many256, 32, false},
                              SelfCase{many256, 32, true}}) {
      const std::string name = "self, " + std::to_string(sc.cloths) + " x " + std::to_string(sc.side * sc.side) +
                               (sc.crumpled ? ", crumpled" : ", flat");
      if (!ok || !wanted(name)) continue;
      SelfScene s = selfScene(sc.cloths, sc.side, sc.crumpled);
      Case c{name, static_cast<uint32_t>(s.particles.size()),
             [&] { std::memcpy(s.particles.data(), s.p0.data(), s.p0.size() * sizeof(Float4)); },
             [&](const CpuExecutor* e) { return e ? collideSelfCpu(s.input(), b, *e) : collideSelfCpu(s.input(), b); },
             [&] { return bytesOf(s.particles); }};
      ok = o.model ? model(o, c, b, *many, rows) : measure(o, c, b, *many, rows);
    }
    // Inter collision.
    if (std::string name = "inter, " + std::to_string(many256) + " x 1024"; ok && wanted(name)) {
      InterScene s = interScene(many256, 32);
      Case c{name, static_cast<uint32_t>(s.particles.size()),
             [&] { std::memcpy(s.particles.data(), s.p0.data(), s.p0.size() * sizeof(Float4)); },
             [&](const CpuExecutor* e) {
               const InterCollisionInput in{s.particles, s.cloths, {}, s.settings};
               return e ? collideInterCpu(in, b, *e) : collideInterCpu(in, b);
             },
             [&] { return bytesOf(s.particles); }};
      ok = o.model ? model(o, c, b, *many, rows) : measure(o, c, b, *many, rows);
    }
  }
  if (!ok) return 1;
  const std::string loadAfter = loadAverage();
  const double ceilingAfter = o.ceiling ? ceiling(o, "after") : 0.0;
  std::printf("load average after: %s\n", loadAfter.c_str());
  std::string js = "{\n  \"benchmark\": \"threads\",\n" + jsonHostFields();
  js += "  \"date\": " + jsonString(utcDate()) + ",\n";
  js += "  \"threads\": " + std::to_string(o.threads) + ",\n";
  js += "  \"hardware_threads\": " + std::to_string(CpuExecutor::hardwareThreads()) + ",\n";
  js += "  \"load_average_before\": " + jsonString(loadBefore) + ",\n";
  js += "  \"load_average_after\": " + jsonString(loadAfter) + ",\n";
  if (o.ceiling) {
    js += "  \"ceiling_before\": " + jsonNumber(ceilingBefore) + ",\n";
    js += "  \"ceiling_after\": " + jsonNumber(ceilingAfter) + ",\n";
  }
  js += "  \"timing\": " +
        jsonString(o.model ? "thread CPU time: one_thread_ms the one-thread call's, threads_ms the N-thread call "
                             "modelled from its tasks' CPU times run on one thread (serial_ms + each loop's "
                             "in-order makespan on N threads), medians of the alternating samples"
                           : "wall clock, median of the alternating samples") +
        ",\n";
  js += jsonRowsAndEnd(rows, [&](const Row& r) {
    const std::string modelled =
        o.model ? ", \"task_cpu_ms\": " + jsonNumber(r.taskMs) + ", \"serial_ms\": " + jsonNumber(r.serialMs)
                : ", \"one_thread_process_cpu_ms\": " + jsonNumber(r.cpuOneMs) +
                      ", \"threads_process_cpu_ms\": " + jsonNumber(r.cpuManyMs);
    return "\"case\": " + jsonString(r.name) + ", \"backend\": " + jsonString(r.backend) +
           ", \"particles\": " + std::to_string(r.particles) + ", \"threads\": " + std::to_string(r.threads) +
           ", \"reps\": " + std::to_string(r.reps) + ", \"one_thread_ms\": " + jsonNumber(r.oneMs) +
           ", \"threads_ms\": " + jsonNumber(r.manyMs) + ", \"speedup\": " + jsonNumber(r.oneMs / r.manyMs) +
           modelled;
  });
  return reportWritten("bench_threads", o.json, writeTextFile(o.json, js)) ? 0 : 1;
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  const auto o = vkc::bench::parseOptions(argc, argv);
  if (!o) return 2;
  return vkc::bench::run(*o);
}
