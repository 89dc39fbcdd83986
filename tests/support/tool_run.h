// Running the vkcollide tool (VKC_TOOL_PATH) as a user would, for the command-line tests, and the
// small file helpers they share.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace vkc::test {

struct ToolRun {
  int exitCode = -1;
  std::string output;  // stdout and stderr
};

// A path in the test's temporary directory, unique to this process.
inline std::string tempPath(const std::string& name) {
  return ::testing::TempDir() + "vkc_cli_" + std::to_string(::getpid()) + "_" + name;
}

inline bool fileExists(const std::string& path) {
  std::ifstream f(path);
  return f.good();
}

inline void writeText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

inline std::string readText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

#ifdef VKC_TOOL_PATH
// The tool the tests run: VKC_TOOL_PATH (the build's), or the environment's VKC_TOOL where set (a
// packed suite on another machine: scripts/device_check.sh).
inline std::string toolPath() {
  const char* env = std::getenv("VKC_TOOL");
  return env != nullptr && *env != '\0' ? env : VKC_TOOL_PATH;
}

// Runs `vkcollide ARGS` (ARGS as a shell would split them), collecting its exit code and output.
inline ToolRun runTool(const std::string& args) {
  const std::string log = tempPath("log.txt");
  const std::string cmd = "'" + toolPath() + "' " + args + " > '" + log + "' 2>&1";
  const int status = std::system(cmd.c_str());
  ToolRun r;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = readText(log);
  std::remove(log.c_str());
  return r;
}
#endif

}  // namespace vkc::test
