// Curves files (curves_file.h): an intersection's curves written and read back bit for bit (plain
// and gzipped), floats in their shortest round-trip text, and bad files refused naming the JSON path.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support/obj_mesh.h"
#include "support/tool_run.h"
#include "vkcollide/curves_file.h"

namespace vkc {
namespace {

template <class T>
bool sameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bool sameBits(const Float4& a, const Float4& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expectSameBits(const CurvesFile& got, const CurvesFile& want) {
  EXPECT_EQ(got.backend, want.backend);
  EXPECT_EQ(got.pairs, want.pairs);
  EXPECT_EQ(got.coplanarPairs, want.coplanarPairs);
  EXPECT_EQ(got.shape, want.shape);
  EXPECT_TRUE(sameBits(got.spread, want.spread));
  EXPECT_TRUE(sameBits(got.normal, want.normal));
  EXPECT_TRUE(sameBits(got.curvePoints, want.curvePoints));
  ASSERT_EQ(got.curves.size(), want.curves.size());
  for (size_t c = 0; c < want.curves.size(); ++c) {
    EXPECT_EQ(got.curves[c].firstPoint, want.curves[c].firstPoint) << c;
    EXPECT_EQ(got.curves[c].pointCount, want.curves[c].pointCount) << c;
    EXPECT_EQ(got.curves[c].closed, want.curves[c].closed) << c;
  }
  EXPECT_TRUE(sameBits(got.touchingPoints, want.touchingPoints));
}

TEST(CurvesFile, AnIntersectionRoundTripsBitwise) {
  test::Mesh spot;
  ASSERT_TRUE(test::readObj(std::string(VKC_SOURCE_DIR) + "/tests/data/meshes/spot_low_resolution.obj", spot));
  const float axis[3] = {0, 1, 0}, shift[3] = {0.3f, 0, 0};
  const test::Mesh moved = test::rotatedAndMoved(spot, axis, 0.7f, shift);
  Result<MeshIntersection> m =
      intersectMeshes({spot.vertices, spot.indices}, {moved.vertices, moved.indices}, Backend::kCpuScalar);
  ASSERT_TRUE(m) << m.message();
  ASSERT_GT(m->curves.size(), 0u);
  const CurvesFile file = toCurvesFile(*m, "cpu-scalar");
  EXPECT_EQ(file.pairs, m->pairs.size());
  const std::string text = writeCurves(file);
  Result<CurvesFile> back = parseCurves(text);
  ASSERT_TRUE(back) << back.message();
  expectSameBits(*back, file);
  EXPECT_EQ(writeCurves(*back), text);
  for (const char* name : {"curves.json", "curves.json.gz"}) {
    const std::string path = test::tempPath(name);
    ASSERT_TRUE(saveCurves(file, path));
    Result<CurvesFile> loaded = loadCurves(path);
    ASSERT_TRUE(loaded) << loaded.message();
    expectSameBits(*loaded, file);
    std::remove(path.c_str());
  }
}

TEST(CurvesFile, FloatsAreWrittenShortestAndReadBackBitwise) {
  CurvesFile f;
  f.backend = "a \"quoted\" backend";
  f.pairs = 7;
  f.coplanarPairs = 2;
  f.shape = IntersectionShape::kLine;
  f.spread = {0.1f, std::numeric_limits<float>::denorm_min(), -0.0f, 0.0f};
  f.normal = {std::numeric_limits<float>::max(), -std::numeric_limits<float>::min(), 1.0f / 3.0f, 0.0f};
  f.curvePoints = {{1, 2, 3, 0}, {-1e-30f, 4e30f, 0.3f, 0}, {5, 6, 7, 0}};
  f.curves = {{0, 2, true}, {2, 0, false}, {2, 1, false}};
  f.touchingPoints = {{-0.0f, 0.7f, 1e-7f, 0}};
  const std::string text = writeCurves(f);
  EXPECT_NE(text.find("\"spread\": [0.1, 1e-45, -0]"), std::string::npos) << text;
  Result<CurvesFile> back = parseCurves(text);
  ASSERT_TRUE(back) << back.message() << "\n" << text;
  expectSameBits(*back, f);
}

// Each bad file is refused (kInvalidArgument) with an error that names where and what.
TEST(CurvesFile, BadFilesNameTheJsonPath) {
  const std::string head = R"({"format": "vkcollide-curves", "version": 1, "backend": "cpu-simd", )";
  const std::string counts = R"("pairs": 4, "coplanarPairs": 0, )";
  const std::string shape = R"("shape": "plane-like", "spread": [1, 1, 0], "normal": [0, 0, 1], )";
  const std::string curves = R"("curves": [{"closed": true, "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0]]}], )";
  const std::string touching = R"("touchingPoints": [])";
  ASSERT_TRUE(parseCurves(head + counts + shape + curves + touching + "}"));
  auto expectError = [](const std::string& json, const std::string& expected) {
    Result<CurvesFile> f = parseCurves(json);
    ASSERT_FALSE(f) << json;
    EXPECT_EQ(f.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(f.message().find(expected), std::string::npos) << f.message() << "\n" << json;
  };
  expectError(R"({"format": "vkcollide-queries", "version": 1})", "format: expected \"vkcollide-curves\"");
  expectError(R"({"format": "vkcollide-curves", "version": 2})", "version: unsupported version 2");
  expectError(head + counts + shape + R"("curves": []})", "missing required key \"touchingPoints\"");
  expectError(head + counts + R"("shape": "round", )", "shape: unknown shape \"round\" (known: \"none\"");
  expectError(head + counts + shape + R"("curves": [{"closed": true, "points": []}, {"closed": false, "points": [[0, 0, 0], [1, 0, null]]}])",
              "curves[1].points[1][2]: expected a finite number, found null");
  expectError(head + counts + shape + R"("curves": [{"points": []}])", "curves[0]: missing required key \"closed\"");
  expectError(head + counts + shape + R"("curves": [{"closed": 1, "points": []}])", "curves[0].closed:");
  expectError(head + counts + shape + R"("curves": [{"closed": true, "points": [], "open": true}])",
              "curves[0].open: unknown key");
  expectError(head + counts + R"("shape": "none", "spread": [1, 1], )", "spread: expected 3 numbers [x, y, z], found 2");
  expectError(head + R"("pairs": 1, "coplanarPairs": 2, )" + shape + curves + touching + "}",
              "coplanarPairs: is 2, more than pairs (1)");
  expectError(head + R"("pairs": -1, )", "pairs:");
  expectError(head + counts + shape + curves + touching + R"(, "extra": 1})", "extra: unknown key");
  expectError(head + counts + shape + curves + touching + "} x", "unexpected text after the curves file");
  const Result<CurvesFile> missing = loadCurves("/nonexistent/curves.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kIo);
}

}  // namespace
}  // namespace vkc
