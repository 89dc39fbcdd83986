// scripts/package_test.sh's consumer: links vkcollide (and its scene library) from outside the
// source tree and checks one call of each. Exit 0 on success.
#include <cstdio>
#include <span>
#include <vector>

#include "vkcollide/scene.h"
#include "vkcollide/vkcollide.h"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) failures++;
}

// The core library: device enumeration through its own Vulkan loader (an empty list is fine, a
// failure to load Vulkan is not) and one CPU twin on known particles.
void useCore() {
  vkc::Result<std::vector<vkc::DeviceInfo>> devices = vkc::Context::enumerateDevices();
  check(devices.ok(), "vkc::Context::enumerateDevices");
  if (devices.ok()) {
    for (const vkc::DeviceInfo& d : *devices) std::printf("  device %u: %s\n", d.index, d.name.c_str());
  } else {
    std::printf("  %s\n", devices.message().c_str());
  }

  const std::vector<vkc::Float4> particles = {{1, 2, 3, 1}, {-4, 5, 0.5f, 1}, {2, -1, 7, 0}, {9, 9, 9, 1}};
  const std::vector<vkc::ClothRange> cloths = {{0, 3}, {3, 1}};
  std::vector<vkc::Aabb> boxes(cloths.size());
  vkc::BoundsInput input;
  input.particles = particles;
  input.cloths = cloths;
  input.boxes = boxes;
  const vkc::Status status = vkc::computeBoundsCpu(input, vkc::Backend::kCpuSimd);
  check(status.ok(), "vkc::computeBoundsCpu");
  const vkc::Aabb& a = boxes[0];
  const vkc::Aabb& b = boxes[1];
  check(a.lo.x == -4 && a.lo.y == -1 && a.lo.z == 0.5f && a.hi.x == 2 && a.hi.y == 5 && a.hi.z == 7,
        "cloth 0 bounds (-4,-1,0.5)..(2,5,7)");
  check(b.lo.x == 9 && b.hi.x == 9 && b.lo.z == 9 && b.hi.z == 9, "cloth 1 bounds (9,9,9)");
  // Bad input is an error, not a crash.
  const std::vector<vkc::ClothRange> bad = {{2, 5}};
  input.cloths = bad;
  input.boxes = std::span<vkc::Aabb>(boxes).first(1);
  check(!vkc::computeBoundsCpu(input, vkc::Backend::kCpuScalar).ok(), "out-of-range cloth refused");
}

// The scene library: write a scene to JSON and parse it back.
void useScene() {
  vkc::Scene scene;
  scene.cloths.emplace_back();
  scene.cloths[0].particles = {{0, 1, 2, 1}, {3, 4, 5, 0}};
  scene.cloths[0].prevParticles = {{0, 1.5f, 2, 1}, {3, 4, 5, 0}};
  vkc::Result<vkc::Scene> parsed = vkc::parseScene(vkc::writeScene(scene));
  if (!parsed.ok()) std::printf("  %s\n", parsed.message().c_str());
  check(parsed.ok() && *parsed == scene, "vkc::writeScene / vkc::parseScene round trip");
}

}  // namespace

int main() {
  useCore();
  useScene();
  std::printf("%s\n", failures == 0 ? "consumer: all checks passed" : "consumer: FAILED");
  return failures == 0 ? 0 : 1;
}
