// libFuzzer target: parseScene on arbitrary bytes must return a value or an error, never crash,
// hang or read out of bounds; every scene it accepts must survive writeScene -> parseScene
// unchanged (bitwise: the written text of the re-read scene is the same text). Seeds: the sample
// scenes and fuzz/seeds/ (planes and convexes).
// Built and run by scripts/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <span>
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
  if (buffers) {
    // Every cloth's convex views lie in the buffers' own `convexes`, in order, each listing its
    // cloth's plane indices; a copy's views lie in the copy's (read through, so that ASan sees a
    // dangling view).
    const vkc::SceneBuffers copy = *buffers;
    size_t first = 0;
    for (size_t c = 0; c < scene->cloths.size(); ++c) {
      const std::span<const vkc::Convex> views = copy.colliders[c].convexes;
      const auto& lists = scene->cloths[c].convexes;
      bool ok = views.size() == lists.size() && (views.empty() || views.data() == copy.convexes.data() + first);
      for (size_t k = 0; ok && k < views.size(); ++k) {
        ok = views[k].planes.size() == lists[k].size() &&
             std::equal(views[k].planes.begin(), views[k].planes.end(), lists[k].begin());
      }
      if (!ok) {
        std::fprintf(stderr, "cloth %zu: the copied buffers' convexes do not list the scene's\n", c);
        std::abort();
      }
      first += views.size();
    }
  }
  return 0;
}
