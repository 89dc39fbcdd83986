// The Vulkan context of the vkcollide commands that run on a device (step, query, compare): the
// options that choose and configure it, parsed once for every command, and its pipeline cache file.
#pragma once

#include <memory>
#include <string>

#include "vkcollide/context.h"

namespace vkc::tool {

// --device SEL, --validation, --exact-arithmetic, --pipeline-cache FILE.
struct ContextOptions {
  const char* device = nullptr;  // ContextCreateInfo::deviceSelector
  bool validation = false;       // ContextCreateInfo::enableValidation
  bool exactArithmetic = false;  // ContextCreateInfo::exactArithmetic
  std::string pipelineCache;     // a file: read into ContextCreateInfo::pipelineCacheData, written back
};

// The usage text of those options, for the commands' usage lines.
inline constexpr const char* kContextOptionsUsage = "[--device SEL] [--validation] [--exact-arithmetic] [--pipeline-cache FILE]";

// If argv[i] is one of the context options, takes it (and its value: i moves past it) and returns
// true; else false and i is unchanged.
bool parseContextOption(int argc, char** argv, int& i, ContextOptions& o);

// Destroys a command's context, first writing its pipeline cache to the --pipeline-cache file (when
// given). A failure to write is printed and is not the command's failure: its results stand.
struct ContextCloser {
  std::string pipelineCache;
  void operator()(Context* context) const;
};
using ToolContext = std::unique_ptr<Context, ContextCloser>;

// The context the options ask for, or null with `error` set. With --pipeline-cache, the cache starts
// from the file where it exists (data of another device or driver is ignored: the file is then
// rewritten for this one); a file that cannot be read is an error.
ToolContext createContext(const ContextOptions& o, std::string* error);

}  // namespace vkc::tool
