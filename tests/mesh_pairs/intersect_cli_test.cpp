// `vkcollide intersect` run as a user would: two OBJ files (Spot and a rotated, moved copy), the
// curves file against the library's answer, --compare and --repeat, and the usage errors. Built only
// where the tool is (VKC_TOOL_PATH).
#ifdef VKC_TOOL_PATH

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "support/obj_mesh.h"
#include "support/tool_run.h"
#include "vkcollide/curves_file.h"
#include "vkcollide/mesh_intersection.h"
#include "vkcollide/scene.h"

namespace vkc {
namespace {

using test::readText;
using test::runTool;
using test::tempPath;
using test::ToolRun;
using test::writeText;

const std::string kSpot = std::string(VKC_SOURCE_DIR) + "/tests/data/meshes/spot_low_resolution.obj";

std::string objText(const test::Mesh& m) {
  std::string s;
  char line[128];
  for (const Float4& v : m.vertices) {
    std::snprintf(line, sizeof line, "v %.9g %.9g %.9g\n", double(v.x), double(v.y), double(v.z));
    s += line;
  }
  for (size_t i = 0; i < m.indices.size(); i += 3)
    s += "f " + std::to_string(m.indices[i] + 1) + " " + std::to_string(m.indices[i + 1] + 1) + " " +
         std::to_string(m.indices[i + 2] + 1) + "\n";
  return s;
}

TEST(IntersectCli, CurvesFileHoldsTheLibrarysCurves) {
  test::Mesh spot;
  ASSERT_TRUE(test::readObj(kSpot, spot));
  const float axis[3] = {0, 1, 0}, shift[3] = {0.3f, 0, 0};
  const std::string moved = tempPath("spot_moved.obj"), out = tempPath("curves.json");
  writeText(moved, objText(test::rotatedAndMoved(spot, axis, 0.7f, shift)));
  const ToolRun r = runTool("intersect '" + kSpot + "' '" + moved + "' --compare --threads 3 --repeat 2 --out '" + out + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("cpu-scalar: bitwise equal"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cpu-simd: bitwise equal"), std::string::npos) << r.output;
  // The library on the same files (the moved copy read back from its text, as the tool reads it).
  SceneMesh a, b;
  ASSERT_TRUE(loadObjMesh(kSpot, a).ok());
  ASSERT_TRUE(loadObjMesh(moved, b).ok());
  auto m = intersectMeshes({a.vertices, a.indices}, {b.vertices, b.indices}, Backend::kCpuScalar);
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_GT(m->curves.size(), 0u);
  // The file is the library's text of that result (shortest round-trip floats: the same text is the
  // same bits) and reads back.
  const std::string text = readText(out);
  EXPECT_EQ(text, writeCurves(toCurvesFile(*m, toString(Backend::kCpuSimd))));
  Result<CurvesFile> back = loadCurves(out);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->curves.size(), m->curves.size());
  std::remove(moved.c_str());
  std::remove(out.c_str());
}

TEST(IntersectCli, UsageErrors) {
  ToolRun r = runTool("intersect '" + kSpot + "' '" + kSpot + "' --backend vulkan");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("CPU only"), std::string::npos) << r.output;
  r = runTool("intersect '" + kSpot + "'");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("two OBJ files"), std::string::npos) << r.output;
  r = runTool("intersect '" + kSpot + "' /nonexistent/b.obj");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("/nonexistent/b.obj"), std::string::npos) << r.output;
  const std::string bad = tempPath("bad.obj");
  writeText(bad, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n");
  r = runTool("intersect '" + kSpot + "' '" + bad + "'");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("bad.obj"), std::string::npos) << r.output;
  r = runTool("intersect '" + kSpot + "' '" + kSpot + "' --threads 0");
  EXPECT_EQ(r.exitCode, 2);
  r = runTool("intersect '" + kSpot + "' '" + kSpot + "' --frobnicate");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.output.find("--frobnicate"), std::string::npos) << r.output;
  std::remove(bad.c_str());
}

}  // namespace
}  // namespace vkc
#endif  // VKC_TOOL_PATH
