// The vkcollide tool's geometry-query commands, run as a user would: `query` (query file -> contacts
// file -> read back, equal to the library's answer bit for bit), `compare` on query files (agreement,
// a doctored result, Vulkan reported when it cannot run), bad files and the exit codes. Built only
// where the tool is (VKC_TOOL_PATH).
#ifdef VKC_TOOL_PATH

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "support/tool_run.h"
#include "vkcollide/query_file.h"

namespace vkc {
namespace {

using test::fileExists;
using test::runTool;
using test::tempPath;
using test::ToolRun;
using test::writeText;

const std::string kSamples = std::string(VKC_SOURCE_DIR) + "/samples/queries/";
const char* const kSampleFiles[] = {"imstk-pairs.json", "point-set.json"};

bool sameBits(const auto& a, const auto& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// The contacts file `out` holds exactly what queryGeometriesCpu gives for the query file `in`.
void expectContactsOfLibrary(const std::string& in, const std::string& out, const std::string& backend) {
  Result<GeometryQueryFile> file = loadGeometryQueries(in);
  ASSERT_TRUE(file) << file.message();
  Result<GeometryContacts> got = loadContacts(out);
  ASSERT_TRUE(got) << got.message();
  EXPECT_EQ(got->backend, backend);
  const size_t capacity = 4096;
  std::vector<ContactElement> a(capacity), b(capacity);
  std::vector<ContactRange> ranges(file->queries.size());
  Result<GeometryQueryCounts> counts = queryGeometriesCpu(file->input(), {a, b, ranges}, Backend::kCpuScalar);
  ASSERT_TRUE(counts) << counts.message();
  ASSERT_FALSE(counts->overflow);
  EXPECT_GT(counts->contacts, 0u);
  EXPECT_EQ(got->counts.contacts, counts->contacts);
  EXPECT_EQ(got->counts.written, counts->written);
  EXPECT_FALSE(got->counts.overflow);
  ASSERT_EQ(got->ranges.size(), ranges.size());
  for (size_t q = 0; q < ranges.size(); ++q) {
    EXPECT_TRUE(sameBits(got->ranges[q], ranges[q])) << q;
    EXPECT_TRUE(sameBits(got->queries[q], file->queries[q])) << q;
  }
  ASSERT_EQ(got->elementsA.size(), counts->written);
  for (size_t k = 0; k < counts->written; ++k) {
    EXPECT_TRUE(sameBits(got->elementsA[k], a[k])) << k;
    EXPECT_TRUE(sameBits(got->elementsB[k], b[k])) << k;
  }
}

TEST(QueryCli, QueryWritesTheLibrarysContactsOnBothCpuBackends) {
  for (const char* sample : kSampleFiles) {
    for (const char* backend : {"cpu-scalar", "cpu"}) {
      SCOPED_TRACE(std::string(sample) + " " + backend);
      const std::string out = tempPath(std::string("contacts_") + backend + "_" + sample);
      const ToolRun r = runTool("query '" + kSamples + sample + "' --backend " + backend +
                                " --repeat 2 --out '" + out + "'");
      ASSERT_EQ(r.exitCode, 0) << r.output;
      EXPECT_NE(r.output.find("wrote " + out), std::string::npos) << r.output;
      expectContactsOfLibrary(kSamples + sample, out,
                              std::string(backend) == "cpu" ? "cpu-simd" : "cpu-scalar");
      std::remove(out.c_str());
    }
  }
}

// A capacity below the contacts: the file says so and holds the first ones; the run still succeeds.
TEST(QueryCli, SmallCapacityReportsOverflow) {
  const std::string out = tempPath("overflow.json");
  const ToolRun r =
      runTool("query '" + kSamples + "point-set.json' --backend cpu-scalar --capacity 3 --out '" + out + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("OVERFLOW"), std::string::npos) << r.output;
  Result<GeometryContacts> c = loadContacts(out);
  ASSERT_TRUE(c) << c.message();
  EXPECT_TRUE(c->counts.overflow);
  EXPECT_EQ(c->counts.written, 3u);
  EXPECT_GT(c->counts.contacts, 3u);
  EXPECT_EQ(c->elementsA.size(), 3u);
  std::remove(out.c_str());
}

TEST(QueryCli, CompareAgreesOnTheSamplesAndFailsOnADoctoredResult) {
  for (const char* sample : kSampleFiles) {
    SCOPED_TRACE(sample);
    const ToolRun r = runTool("compare '" + kSamples + sample + "' --repeat 2");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find("cpu-simd"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("bitwise equal to cpu-scalar"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("agrees with cpu-scalar"), std::string::npos) << r.output;
  }
  const ToolRun bad = runTool("compare '" + kSamples + "point-set.json' --perturb-backend cpu 0.001");
  EXPECT_EQ(bad.exitCode, 1) << bad.output;
  EXPECT_NE(
      bad.output.find(
          "DIFFERS from cpu-scalar, first at query 0 (pointSet vs sphere), contact 0, element A: point"),
      std::string::npos)
      << bad.output;
}

// Bad files: exit 2, an error naming the file and the JSON path (or the stage's field), nothing written.
TEST(QueryCli, BadFilesAreRefusedNamingTheField) {
  const std::string in = tempPath("bad_queries.json");
  const std::string out = tempPath("bad_contacts.json");
  const std::string head = R"({"format": "vkcollide-queries", "version": 1, "geometries": [)";
  for (
      const auto& [json, expected] : std::vector<std::pair<std::string, std::string>>{
          {head +
               R"({"type": "sphere", "centre": [0, 0, 0], "radius": 1}, {"type": "sphere", "centre": [1, 0, 0], "radius": -2}], "queries": [{"a": 0, "b": 1}]})",
           "geometries[1].radius: is -2: must be >= 0"},
          {head +
               R"({"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1]}, {"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0]}], "queries": [{"a": 0, "b": 1}]})",
           "queries[0]: plane vs plane is not collidable"},
          {head + R"({"type": "sphere", "centre": [0, 0, 0], "radius": 1}], "queries": [{"a": 0, "b": 3}]})",
           "queries[0].b: geometry 3 is out of range"},
      }) {
    SCOPED_TRACE(expected);
    writeText(in, json);
    for (const std::string& cmd :
         {"query '" + in + "' --backend cpu-scalar --out '" + out + "'", "compare '" + in + "'"}) {
      const ToolRun r = runTool(cmd);
      EXPECT_EQ(r.exitCode, 2) << r.output;
      EXPECT_NE(r.output.find(in), std::string::npos) << r.output;
      EXPECT_NE(r.output.find(expected), std::string::npos) << r.output;
      EXPECT_FALSE(fileExists(out));
    }
  }
  std::remove(in.c_str());
  for (const char* args : {"query", "query x.json --backend cpu", "query x.json --out y.json",
                           "query x.json --backend gpu --out y"}) {
    const ToolRun r = runTool(args);
    EXPECT_EQ(r.exitCode, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("vkcollide query QUERIES"), std::string::npos) << r.output;
  }
}

// Vulkan: `query --backend vulkan` equals the library's CPU answer bit for bit, and `compare` runs the
// Vulkan backend. Where queryGeometries(kVulkan) is not there yet the tool says so (exit 1 for
// `query`, reported as not run by `compare`) and the test is skipped with that message.
TEST(QueryCliVulkan, QueryAndCompareOnVulkan) {
  for (const char* sample : kSampleFiles) {
    SCOPED_TRACE(sample);
    const std::string out = tempPath(std::string("contacts_vulkan_") + sample);
    const ToolRun r =
        runTool("query '" + kSamples + sample + "' --backend vulkan --validation --out '" + out + "'");
    if (r.exitCode == 1 && r.output.find("vkcollide: vulkan:") != std::string::npos) {
      const ToolRun c = runTool("compare '" + kSamples + sample + "' --validation");
      EXPECT_EQ(c.exitCode, 0) << c.output;
      EXPECT_NE(c.output.find("vulkan: not run ("), std::string::npos) << c.output;
      EXPECT_FALSE(fileExists(out));
      GTEST_SKIP() << "the Vulkan backend cannot run the queries here: " << r.output;
    }
    ASSERT_EQ(r.exitCode, 0) << r.output;
    expectContactsOfLibrary(kSamples + sample, out, "vulkan");
    std::remove(out.c_str());
    const ToolRun c = runTool("compare '" + kSamples + sample + "' --validation --repeat 3");
    ASSERT_EQ(c.exitCode, 0) << c.output;
    EXPECT_NE(c.output.find("vulkan "), std::string::npos) << c.output;
    EXPECT_EQ(c.output.find("vulkan: not run"), std::string::npos) << c.output;
  }
}

}  // namespace
}  // namespace vkc

#endif  // VKC_TOOL_PATH
