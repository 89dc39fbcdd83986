#include "tool_context.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

namespace vkc::tool {

bool parseContextOption(int argc, char** argv, int& i, ContextOptions& o) {
  const std::string a = argv[i];
  const bool hasValue = i + 1 < argc;
  if (a == "--device" && hasValue) {
    o.device = argv[++i];
  } else if (a == "--validation") {
    o.validation = true;
  } else if (a == "--exact-arithmetic") {
    o.exactArithmetic = true;
  } else if (a == "--pipeline-cache" && hasValue) {
    o.pipelineCache = argv[++i];
  } else {
    return false;
  }
  return true;
}

void ContextCloser::operator()(Context* context) const {
  if (context != nullptr && !pipelineCache.empty()) {
    Result<std::vector<uint8_t>> data = context->pipelineCacheData();
    // Written through a temporary file, so that a failed write leaves the old cache as it was.
    const std::string tmp = pipelineCache + ".tmp";
    bool written = false;
    if (data) {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(data->data()), static_cast<std::streamsize>(data->size()));
      out.close();
      written = out.good() && std::rename(tmp.c_str(), pipelineCache.c_str()) == 0;
      if (!written) std::remove(tmp.c_str());
    }
    if (!written) {
      std::fprintf(stderr, "vkcollide: --pipeline-cache: could not write %s%s%s\n", pipelineCache.c_str(),
                   data ? "" : ": ", data ? "" : data.message().c_str());
    }
  }
  delete context;
}

ToolContext createContext(const ContextOptions& o, std::string* error) {
  std::vector<uint8_t> cacheData;
  if (!o.pipelineCache.empty()) {
    // No file yet: an empty cache, written at the end. Anything but a regular file (a directory) cannot
    // be read.
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(o.pipelineCache, ec);
    if (std::filesystem::exists(st)) {
      const bool regular = std::filesystem::is_regular_file(st);
      const std::uintmax_t size = regular ? std::filesystem::file_size(o.pipelineCache, ec) : 0;
      std::ifstream in(o.pipelineCache, std::ios::binary);
      if (regular && !ec) cacheData.resize(size);
      if (!regular || ec ||
          !in.read(reinterpret_cast<char*>(cacheData.data()), static_cast<std::streamsize>(cacheData.size()))) {
        *error = "--pipeline-cache: cannot read " + o.pipelineCache;
        return ToolContext(nullptr, ContextCloser{});
      }
    }
  }
  ContextCreateInfo ci;
  ci.deviceSelector = o.device;
  ci.enableValidation = o.validation;
  ci.exactArithmetic = o.exactArithmetic;
  ci.pipelineCacheData = cacheData;
  auto ctx = Context::create(ci);
  if (!ctx) {
    *error = ctx.message();
    return ToolContext(nullptr, ContextCloser{});
  }
  return ToolContext(ctx->release(), ContextCloser{o.pipelineCache});
}

}  // namespace vkc::tool
