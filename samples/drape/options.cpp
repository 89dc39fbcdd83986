// The drape sample's command line (see options.h).
#include "options.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace drape {

void fail(const std::string& message) {
  std::fprintf(stderr, "drape: %s\n", message.c_str());
  std::exit(1);
}

namespace {

uint32_t parseCount(const char* flag, const char* value, uint32_t lo, uint32_t hi) {
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || v < static_cast<long>(lo) || v > static_cast<long>(hi)) {
    fail(std::string(flag) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
         "], got '" + value + "'");
  }
  return static_cast<uint32_t>(v);
}

// drape-out/ in the working directory, unless that is inside the source tree (outside its build
// directories): then drape-out/ next to the executable's build files, so that nothing is written
// where git would see it.
std::string defaultOutDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path cwd = fs::weakly_canonical(fs::current_path(ec), ec);
  const fs::path source = fs::weakly_canonical(DRAPE_SOURCE_DIR, ec);
  auto inside = [](const fs::path& p, const fs::path& root) {
    const auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
    return r == root.end();
  };
  const fs::path rel = fs::relative(cwd, source, ec);
  const bool inBuildDir = !rel.empty() && rel.begin()->string().rfind("build", 0) == 0;
  if (inside(cwd, source) && !inBuildDir) return (fs::path(DRAPE_BINARY_DIR) / "drape-out").string();
  return "drape-out";
}

}  // namespace

Options parseOptions(int argc, char** argv) {
  Options o;
  if (const char* env = std::getenv("DRAPE_VALIDATE"); env != nullptr && std::strcmp(env, "0") != 0)
    o.validate = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--size") {
      o.size = parseCount("--size", value(), 4, 1024);
    } else if (a == "--frames") {
      o.frames = parseCount("--frames", value(), 1, 100000);
    } else if (a == "--substeps") {
      o.substeps = parseCount("--substeps", value(), 1, 64);
    } else if (a == "--iterations") {
      o.iterations = parseCount("--iterations", value(), 1, 64);
    } else if (a == "--png-every") {
      o.pngEvery = parseCount("--png-every", value(), 0, 100000);
    } else if (a == "--width") {
      o.width = parseCount("--width", value(), 16, 4096);
    } else if (a == "--height") {
      o.height = parseCount("--height", value(), 16, 4096);
    } else if (a == "--out") {
      o.out = value();
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--device") {
      o.device = value();
    } else if (a == "--validate") {
      o.validate = true;
    } else if (a == "--check") {
      o.check = true;
    } else if (a == "--no-cpu") {
      o.cpuTwin = false;
    } else if (a == "--cpu-backend") {
      const std::string v = value();
      if (v == "simd") {
        o.cpuBackend = vkc::Backend::kCpuSimd;
      } else if (v == "scalar") {
        o.cpuBackend = vkc::Backend::kCpuScalar;
      } else {
        fail("--cpu-backend must be simd or scalar, got '" + v + "'");
      }
    } else if (a == "--perturb-cpu") {
      o.perturbCpu = true;
    } else if (a == "--self-every") {
      o.selfEvery = parseCount("--self-every", value(), 1, 64);
    } else if (a == "--no-self") {
      o.self = false;
    } else if (a == "--no-ground") {
      o.ground = false;
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: drape [--size N=128] [--frames F=200] [--substeps S=8] [--iterations J=2] [--out "
          "DIR=./drape-out]\n"
          "             [--png-every K=10] [--width W] [--height H] [--validate] [--check] [--no-cpu]\n"
          "             [--device SELECTOR] [--cpu-backend simd|scalar] [--perturb-cpu]\n"
          "             [--self-every K=substeps] [--no-self] [--no-ground] [--json PATH]\n");
      std::exit(0);
    } else {
      fail("unknown argument '" + a + "' (see --help)");
    }
  }
  if (o.out.empty()) o.out = defaultOutDir();
  if (o.selfEvery == 0) o.selfEvery = o.substeps;
  if (o.selfEvery > o.substeps) {
    fail("--self-every " + std::to_string(o.selfEvery) + " is more than --substeps " +
         std::to_string(o.substeps) + " (self collision would never run; use --no-self)");
  }
  return o;
}

}  // namespace drape
