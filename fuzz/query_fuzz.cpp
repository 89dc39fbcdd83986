// libFuzzer target of the query-file and contacts-file readers (include/vkcollide/query_file.h) and
// of the curves-file reader (include/vkcollide/curves_file.h): parseGeometryQueries, parseContacts and
// parseCurves on arbitrary bytes must return a value or an error with a message, never crash, hang or
// read out of bounds. Every query file accepted must survive
// writeGeometryQueries -> parseGeometryQueries as the header promises: the value comes back bitwise
// (the file's inline point sets and samples were already appended to the value's points and
// gridSamples on the first read, so they come back as the same ranges) except previousGeometries,
// which may come back empty where no pose differs, and the re-read file writes the same text. Every
// contacts file accepted: parseContacts(writeContacts(c)) is c bitwise, and writes the same text.
// Every query file accepted that is small (runOnCpu's caps) also runs on the CPU reference: validate()
// refuses it with a message, or the run's counts and ranges agree and its contacts round-trip through
// a contacts file like those above. Every curves file accepted: parseCurves(writeCurves(c)) is c
// bitwise (floats are written in their shortest round-trip form), and writes the same text.
//
// One target checks the three formats, each input through every parser: a query file fails the contacts
// reader at its "format" key (and the other way round), so the second parse costs little, the
// seeds are plain files of each kind that the tool reads as they are (no selector byte in front),
// and a mutation that changes the format string (fuzz/query.dict has both) hands an input's
// structure to the other reader.
// Seeds: fuzz/query-seeds/. Built and run by scripts/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined;
// the CPU query path's sources at -O0, see there).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vkcollide/curves_file.h"
#include "vkcollide/geometry_queries.h"
#include "vkcollide/query_file.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

template <class T>
bool sameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bool sameBits(const vkc::Geometry& a, const vkc::Geometry& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// A text read, written and read again: `first` the value, `written` its text, `again` that text read.
template <class T>
struct Reread {
  T first;
  std::string written;
  T again;
};

// Reads `text` with `parse` (named `parser`): a refusal must carry a message (then nullopt). An
// accepted value is written with `write` (named `writer`), and that text must read again.
template <class T, class Parse, class Write>
std::optional<Reread<T>> readWriteRead(std::string_view text, Parse parse, const char* parser, Write write,
                                       const char* writer) {
  vkc::Result<T> first = parse(text);
  if (!first) {
    if (first.message().empty()) {
      std::fprintf(stderr, "%s failed without a message\n", parser);
      std::abort();
    }
    return std::nullopt;
  }
  std::string written = write(*first);
  vkc::Result<T> again = parse(written);
  if (!again) {
    std::fprintf(stderr, "%s output does not parse: %s\n", writer, again.message().c_str());
    std::abort();
  }
  return Reread<T>{std::move(*first), std::move(written), std::move(*again)};
}

void checkCurves(std::string_view text) {
  const auto read = readWriteRead<vkc::CurvesFile>(text, vkc::parseCurves, "parseCurves", vkc::writeCurves,
                                                   "writeCurves");
  if (!read) return;
  const vkc::CurvesFile& c = read->first;
  const vkc::CurvesFile& d = read->again;
  if (d.backend != c.backend || d.pairs != c.pairs || d.coplanarPairs != c.coplanarPairs || d.shape != c.shape)
    fail("curves: backend, counts or shape changed through write -> parse");
  if (std::memcmp(&d.spread, &c.spread, sizeof c.spread) != 0 || std::memcmp(&d.normal, &c.normal, sizeof c.normal) != 0)
    fail("curves: spread or normal changed through write -> parse");
  if (!sameBits(d.curvePoints, c.curvePoints)) fail("curves: curvePoints changed through write -> parse");
  if (!sameBits(d.touchingPoints, c.touchingPoints)) fail("curves: touchingPoints changed through write -> parse");
  if (d.curves.size() != c.curves.size()) fail("curves: the number of curves changed through write -> parse");
  for (size_t i = 0; i < c.curves.size(); ++i) {
    if (d.curves[i].firstPoint != c.curves[i].firstPoint || d.curves[i].pointCount != c.curves[i].pointCount ||
        d.curves[i].closed != c.curves[i].closed)
      fail("curves: a curve changed through write -> parse");
  }
  if (vkc::writeCurves(d) != read->written) fail("curves: the re-read file writes another text");
}

void checkContacts(std::string_view text) {
  const auto read = readWriteRead<vkc::GeometryContacts>(
      text, vkc::parseContacts, "parseContacts", vkc::writeContacts, "writeContacts");
  if (!read) return;
  const vkc::GeometryContacts& c = read->first;
  const vkc::GeometryContacts& d = read->again;
  const std::string& written = read->written;
  if (d.backend != c.backend) fail("contacts: backend changed through write -> parse");
  if (d.counts.contacts != c.counts.contacts || d.counts.written != c.counts.written ||
      d.counts.overflow != c.counts.overflow || d.counts.candidatesMissing != c.counts.candidatesMissing)
    fail("contacts: counts changed through write -> parse");
  if (!sameBits(d.queries, c.queries)) fail("contacts: queries changed through write -> parse");
  if (!sameBits(d.ranges, c.ranges)) fail("contacts: ranges changed through write -> parse");
  if (!sameBits(d.elementsA, c.elementsA)) fail("contacts: elementsA changed through write -> parse");
  if (!sameBits(d.elementsB, c.elementsB)) fail("contacts: elementsB changed through write -> parse");
  if (!sameBits(d.state, c.state)) fail("contacts: state changed through write -> parse");
  if (vkc::writeContacts(d) != written) fail("contacts: the re-read file writes another text");
}

// Runs an accepted file of bounded size on the CPU reference: validate() refuses it with a message or
// queryGeometriesCpu(kCpuScalar) (what queryGeometries(kCpuScalar) runs) answers, and then its counts
// and ranges agree with one another and the capacity, kCpuSimd gives the same bits, and its contacts
// round-trip through a contacts file. The caps keep one input to milliseconds (mesh queries build
// trees per call).
void runOnCpu(const vkc::GeometryQueryFile& f) {
  if (f.geometries.size() > 16 || f.queries.size() > 16 || f.points.size() > 64 || f.gridSamples.size() > 512 ||
      f.cells.size() > 256)
    return;
  const vkc::GeometryQueryInput input = f.input();
  if (vkc::Status st = vkc::validate(input); !st) {
    if (st.message().empty()) fail("validate failed without a message");
    return;
  }
  constexpr uint32_t kCapacity = 32;  // small enough that fuzzed inputs overflow it too
  std::vector<vkc::ContactElement> a(kCapacity), b(kCapacity);
  std::vector<vkc::ContactRange> ranges(f.queries.size());
  std::vector<vkc::Float4> state = f.state;
  vkc::Result<vkc::GeometryQueryCounts> counts =
      vkc::queryGeometriesCpu(input, {a, b, ranges, state}, vkc::Backend::kCpuScalar);
  if (!counts) {  // validateOutput: e.g. two continuous queries given the same state entries
    if (counts.message().empty()) fail("queryGeometriesCpu failed without a message");
    return;
  }
  if (counts->written != std::min(counts->contacts, kCapacity) || counts->overflow != (counts->contacts > kCapacity))
    fail("cpu: written or overflow disagree with contacts and the capacity");
  uint64_t next = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].first != next) fail("cpu: a range does not start where the previous one ends");
    next += ranges[i].count;
    for (uint64_t k = ranges[i].first; k < std::min<uint64_t>(next, counts->written); ++k) {
      if (a[k].query != i || b[k].query != i) fail("cpu: an element lies in another query's range");
    }
  }
  if (next != counts->contacts) fail("cpu: the ranges' counts do not sum to contacts");
  // kCpuSimd gives kCpuScalar's answer bit for bit (queryGeometriesCpu's contract). The fuzz build has
  // no SIMD target, so this checks the paths the backend chooses whatever the target (a mesh's self
  // query walks a layout built in the call); a build with Highway would check the lanes too.
  std::vector<vkc::ContactElement> sa(kCapacity), sb(kCapacity);
  std::vector<vkc::ContactRange> sranges(f.queries.size());
  std::vector<vkc::Float4> sstate = f.state;
  const vkc::Result<vkc::GeometryQueryCounts> simd =
      vkc::queryGeometriesCpu(input, {sa, sb, sranges, sstate}, vkc::Backend::kCpuSimd);
  if (!simd) fail("cpu-simd: refused what cpu-scalar ran");
  if (simd->contacts != counts->contacts || simd->written != counts->written || simd->overflow != counts->overflow)
    fail("cpu-simd: counts differ from cpu-scalar");
  sa.resize(counts->written), sb.resize(counts->written);
  if (!sameBits(sranges, ranges) || !sameBits(sstate, state) ||
      !sameBits(sa, std::vector<vkc::ContactElement>(a.begin(), a.begin() + counts->written)) ||
      !sameBits(sb, std::vector<vkc::ContactElement>(b.begin(), b.begin() + counts->written)))
    fail("cpu-simd: ranges, state or contacts differ from cpu-scalar");
  vkc::GeometryContacts c;
  c.backend = "cpu-scalar";
  c.counts = *counts;
  c.queries = f.queries;
  c.ranges = ranges;
  c.elementsA.assign(a.begin(), a.begin() + counts->written);
  c.elementsB.assign(b.begin(), b.begin() + counts->written);
  if (!f.state.empty()) c.state = state;
  checkContacts(vkc::writeContacts(c));
}

void checkQueryFile(std::string_view text) {
  const auto read = readWriteRead<vkc::GeometryQueryFile>(
      text, vkc::parseGeometryQueries, "parseGeometryQueries", vkc::writeGeometryQueries, "writeGeometryQueries");
  if (!read) return;
  const vkc::GeometryQueryFile& f = read->first;
  const vkc::GeometryQueryFile& g = read->again;
  const std::string& written = read->written;
  if (!sameBits(g.geometries, f.geometries)) fail("query file: geometries changed through write -> parse");
  if (g.names != f.names) fail("query file: names changed through write -> parse");
  if (!sameBits(g.points, f.points)) fail("query file: points changed through write -> parse");
  if (!sameBits(g.queries, f.queries)) fail("query file: queries changed through write -> parse");
  if (!sameBits(g.gridSamples, f.gridSamples)) fail("query file: gridSamples changed through write -> parse");
  if (!sameBits(g.previousPoints, f.previousPoints))
    fail("query file: previousPoints changed through write -> parse");
  if (!sameBits(g.state, f.state)) fail("query file: state changed through write -> parse");
  if (!sameBits(g.cells, f.cells)) fail("query file: cells changed through write -> parse");
  // previousGeometries: the same, or empty where every previous pose is the geometry itself.
  if (!sameBits(g.previousGeometries, f.previousGeometries)) {
    bool still = g.previousGeometries.empty() && f.previousGeometries.size() == f.geometries.size();
    for (size_t i = 0; still && i < f.geometries.size(); ++i)
      still = sameBits(f.previousGeometries[i], f.geometries[i]);
    if (!still) fail("query file: previousGeometries changed through write -> parse");
  }
  if (vkc::writeGeometryQueries(g) != written) fail("query file: the re-read file writes another text");
  runOnCpu(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  checkQueryFile(text);
  checkContacts(text);
  checkCurves(text);
  return 0;
}
