// libFuzzer target: parseScene on arbitrary bytes must return a value or an error, never crash,
// hang or read out of bounds; every scene it accepts must survive writeScene -> parseScene
// unchanged (bitwise: the written text of the re-read scene is the same text).
// Built and run by scripts/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <string_view>

#include "vkcollide/scene.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vkc::Result<vkc::Scene> scene = vkc::parseScene(text);
  if (!scene) {
    if (scene.message().empty()) {
      std::fprintf(stderr, "parseScene failed without a message\n");
      std::abort();
    }
    return 0;
  }
  const std::string written = vkc::writeScene(*scene);
  vkc::Result<vkc::Scene> again = vkc::parseScene(written);
  if (!again) {
    std::fprintf(stderr, "writeScene output does not parse: %s\n", again.message().c_str());
    std::abort();
  }
  if (!(*again == *scene) || vkc::writeScene(*again) != written) {
    std::fprintf(stderr, "the scene changed through writeScene -> parseScene\n");
    std::abort();
  }
  // The stage layout of any accepted scene is built or refused with a message (it checks rules across
  // cloths and settings that the parser leaves to it, e.g. rest positions for every cloth or none
  // when self collision is on), never crashes.
  vkc::Result<vkc::SceneBuffers> buffers = vkc::makeSceneBuffers(*scene);
  if (!buffers && buffers.message().empty()) {
    std::fprintf(stderr, "makeSceneBuffers failed without a message\n");
    std::abort();
  }
  return 0;
}
