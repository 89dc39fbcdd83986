// The CPU executors the conformance tests run the CPU backends on, besides one thread: vkcollide's
// own pool with 1, 2 and 7 threads, with the default chunk size and with 64-particle chunks (so that
// the tests' small scenes are split across threads and within cloths), and a host parallel-for that
// runs its tasks in uneven groups, last group first, on threads it starts for each loop.
#pragma once

#include <string>
#include <vector>

#include "vkcollide/cpu_executor.h"

namespace vkc::test {

struct TestExecutor {
  std::string name;
  CpuExecutor* executor;
};

// Created once, kept for the whole test program.
const std::vector<TestExecutor>& testExecutors();

// A HostParallelFor (workers 3) that runs task groups of sizes 1, 2, 3, ... from the end of the loop
// towards its start on two threads of its own and the calling thread.
HostParallelFor unevenHostParallelFor();

}  // namespace vkc::test
