// The vkcollide tool's geometry-query commands, run as a user would: `query` (query file -> contacts
// file -> read back, equal to the library's answer bit for bit), `compare` on query files (agreement,
// a doctored result, the Vulkan backend), bad files and the exit codes. Built only
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
const char* const kSampleFiles[] = {"imstk-pairs.json", "point-set.json", "implicit-and-continuous.json",
                                    "resting-shapes.json"};

bool sameBits(const auto& a, const auto& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// The contacts file `out` holds exactly what queryGeometriesCpu gives for the query file `in`, its
// continuous queries starting from `state` (default: the file's), the final state included.
void expectContactsOfLibrary(const std::string& in, const std::string& out, const std::string& backend,
                             const std::vector<Float4>* initialState = nullptr) {
  Result<GeometryQueryFile> file = loadGeometryQueries(in);
  ASSERT_TRUE(file) << file.message();
  Result<GeometryContacts> got = loadContacts(out);
  ASSERT_TRUE(got) << got.message();
  EXPECT_EQ(got->backend, backend);
  const size_t capacity = 4096;
  std::vector<ContactElement> a(capacity), b(capacity);
  std::vector<ContactRange> ranges(file->queries.size());
  std::vector<Float4> state = initialState != nullptr ? *initialState : file->state;
  Result<GeometryQueryCounts> counts =
      queryGeometriesCpu(file->input(), {a, b, ranges, state}, Backend::kCpuScalar);
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
  ASSERT_EQ(got->state.size(), state.size());
  for (size_t k = 0; k < state.size(); ++k) EXPECT_TRUE(sameBits(got->state[k], state[k])) << k;
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

// Continuous steps chained through the contacts file's state: the second run starts from the state
// the first wrote (cpu-scalar and cpu give the same files bit for bit); a contacts file whose state
// does not fit the query file is refused.
TEST(QueryCli, StateInChainsContinuousRuns) {
  const std::string in = kSamples + "implicit-and-continuous.json";
  Result<GeometryQueryFile> file = loadGeometryQueries(in);
  ASSERT_TRUE(file) << file.message();
  const std::string first = tempPath("step1.json");
  ToolRun r = runTool("query '" + in + "' --backend cpu-scalar --out '" + first + "'");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  Result<GeometryContacts> step1 = loadContacts(first);
  ASSERT_TRUE(step1) << step1.message();
  bool inside = false;  // the sample has points that stay inside after a traced entry
  for (const Float4& e : step1->state) inside = inside || e.w == 1.0f;
  EXPECT_TRUE(inside);
  std::string texts[2];
  for (int i = 0; i < 2; ++i) {
    const char* backend = i == 0 ? "cpu-scalar" : "cpu";
    const std::string second = tempPath(std::string("step2_") + backend + ".json");
    r = runTool("query '" + in + "' --backend " + backend + " --state-in '" + first + "' --out '" + second +
                "'");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    expectContactsOfLibrary(in, second, i == 0 ? "cpu-scalar" : "cpu-simd", &step1->state);
    Result<GeometryContacts> c = loadContacts(second);
    ASSERT_TRUE(c) << c.message();
    c->backend.clear();
    texts[i] = writeContacts(*c);
    std::remove(second.c_str());
  }
  EXPECT_EQ(texts[0], texts[1]);
  const std::string out = tempPath("step2_bad.json");
  r = runTool("query '" + in + "' --backend cpu --state-in '" + kSamples + "imstk-pairs.json' --out '" + out +
              "'");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(
      r.output.find("--state-in: " + kSamples + "imstk-pairs.json: format: expected \"vkcollide-contacts\""),
      std::string::npos)
      << r.output;
  const std::string other = tempPath("step_other.json");
  ASSERT_EQ(runTool("query '" + kSamples + "point-set.json' --backend cpu --out '" + other + "'").exitCode,
            0);
  r = runTool("query '" + in + "' --backend cpu --state-in '" + other + "' --out '" + out + "'");
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("holds 0 state entries, " + in + " uses " + std::to_string(file->state.size())),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fileExists(out));
  std::remove(first.c_str());
  std::remove(other.c_str());
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
          {head +
               R"({"type": "implicit", "origin": [0, 0, 0], "spacing": [1, 1, 1], "dims": [2, 1, 2], "samples": [1, 1, 1, 1]}, {"type": "pointSet", "points": [[0, 0, 0]]}], "queries": [{"a": 1, "b": 0}]})",
           "geometries[0].dims[1]: is 1: must be in [2, 2048]"},
          {head +
               R"({"type": "sphere", "centre": [0, 0, 0], "radius": 1}, {"type": "pointSet", "points": [[0, 0, 0]]}], "queries": [{"a": 1, "b": 0, "method": "continuous"}], "state": [[0, 0, 0, 2]]})",
           "state[0]: w is 2: must be 0 or 1"},
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

// Vulkan: `query --backend vulkan` writes the library's contacts and final state (kCpuScalar's bits:
// measured so on lavapipe, whose sqrt and division round as the CPU's; a device that rounds otherwise
// shows here as a difference), and `compare` runs the Vulkan backend on every sample, under the
// validation layer.
TEST(QueryCliVulkan, VulkanBackendWritesTheLibrarysContacts) {
  for (const char* sample : kSampleFiles) {
    SCOPED_TRACE(sample);
    const std::string out = tempPath(std::string("contacts_vulkan_") + sample);
    const ToolRun r = runTool("query '" + kSamples + sample + "' --backend vulkan --validation --out '" + out + "'");
    ASSERT_EQ(r.exitCode, 0) << r.output;
    expectContactsOfLibrary(kSamples + sample, out, "vulkan");
    std::remove(out.c_str());
    const ToolRun c = runTool("compare '" + kSamples + sample + "' --validation");
    EXPECT_EQ(c.exitCode, 0) << c.output;
    EXPECT_EQ(c.output.find("not run"), std::string::npos) << c.output;
    EXPECT_NE(c.output.find("vulkan "), std::string::npos) << c.output;
    EXPECT_NE(c.output.find("every backend run agrees with cpu-scalar bit for bit"), std::string::npos) << c.output;
  }
}

}  // namespace
}  // namespace vkc

#endif  // VKC_TOOL_PATH
