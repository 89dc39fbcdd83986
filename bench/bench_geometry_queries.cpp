// Geometry query benchmark (geometry_queries.h): queries per second per pair type and batch size, on
// every backend, with FCL (Debian libfcl-dev, where CMake finds it) on the same pairs in the same run
// as the per-core anchor.
//
// Pairs: for each pair type, `batch` independent random pairs (seeded): centres uniform in [-1, 1]^3,
// sizes 0.2 .. 0.8, random unit axes, normals and rotations, so that about half the pairs touch; a
// plane passes within 0.5 of the origin. Point set rows: one query, a point set of --points points
// uniform in [-1.5, 1.5]^3 against one unit-sized box or sphere at the origin, or an implicit
// geometry (a torus sampled on a 64^3 grid: "1M points vs one SDF"), per point figures; the -ccd rows
// are the continuous method, each point moved by up to 0.1 per axis from its previous position (the
// capsule, a swinging limb, turned 10 degrees and moved 0.1 too), the state zeroed before each call
// (in its time) so that every call gives the same output. <primitive>-implicit rows: `batch` small
// spheres, capsules, cylinders or boxes (sizes 0.05 .. 0.15) on and around that sampled torus, or
// planes through its tube in any direction, one query each (a box or cylinder evaluates its own
// points and its sample box's samples, a plane its sample box's: geomShapeSampleBox); the
// implicit-implicit row: sampled balls and boxes of that size on 12^3 grids; no FCL or math-only
// figure.
// The timed call is one queryGeometries call over the whole batch, output capacity as large as the
// batch's contacts. Vulkan: one GeometryQueryStage made for the batch beforehand (as an engine keeps
// one), its run() timed (upload, record, submit, wait, read-back); the note gives the GPU's own time
// of the passes (timestamps, median), the record's dispatch and byte counts and the H100 cost model's
// projection of them (a model, not a measurement: README, Cost figures). Every backend's
// contacts are checked against cpu-scalar bit for bit; FCL's collide count is reported beside ours.
// vulkan-resident rows (issue 16): the batch device-resident (bench_geometry_queries_resident.h:
// geometries, queries and points in device-local buffers, the slot layout computed on the device),
// recorded once and its command buffer submitted repeatedly: ms/call is the wall time of one submit
// + wait, the note the GPU time of the passes (timestamps, median), pairs (items) per GPU ms and each
// pass's time. vulkan-primitive rows: the same with GeometryQueryRecordInfo::devicePrimitivePairs (no
// slot layout, a query per invocation: three dependent dispatches instead of seven). On lavapipe (a
// CPU driver) these rows only show that the paths run.
//
// FCL: fcl::collide per pair with a CollisionRequest for one contact with its depth and normal (what
// our query gives), one thread, objects built beforehand (not timed); a one-sided plane is FCL's
// Halfspace. FCL has no point set: those rows have no FCL figure. "ours/FCL" is our rate over FCL's
// on the same pairs (> 1: ours is faster), from the two rows' medians. The cpu-simd row's note adds
// "paired with FCL": the two timed again in alternation, sample by sample (bench_common.h
// samplePaired), and the median of FCL's time over ours per pair of samples: on a shared VM whose
// speed drifts between phases, the figure to quote. The "validate" column is validate() alone on the batch,
// as a share of the CPU call (queryGeometries validates its input first: part of every call). The
// "math-only" rows run the shared scalar functions the CPU twin calls (shaders/shared/
// geometry_queries_math.h: geomQueryContacts per primitive query, geomSlotContact per point) over the
// batch with the shapes converted beforehand (as FCL's objects are), no validate() and no output: the
// per-pair cost of the scalar CPU twin without its checks.
// Prints a table and writes JSON; see --help.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifdef VKC_HAVE_FCL
#include <fcl/narrowphase/collision.h>
#endif

#include "bench_common.h"
#include "bench_geometry_queries_resident.h"
#include "bench_queries.h"
#include "shared/geometry_queries_math.h"
#include "vkcollide/vkcollide.h"

namespace vkc::bench {
namespace {

struct Options : CommonOptions {
  Options() : CommonOptions("bench_geometry_queries.json", 5) {}
  std::vector<uint32_t> batches = {1, 100, 10'000, 1'000'000};
  uint32_t points = 1'000'000;
  std::string pairs;       // comma-separated pair names; empty: all
  double rowBudgetS = 10;  // a row whose single call is predicted longer than a quarter of this is skipped
  bool vulkan = true;
  bool fcl = true;
  bool threadTime = false;  // CPU, math-only and FCL rows: the thread's CPU time, not wall clock
  // vulkan-resident rows: the stage made for larger frames (maxSlots this many times the batch's
  // slots) and asked for every device family (--resident-headroom K), as an engine creates it once.
  uint32_t residentHeadroom = 0;
};

void usage(std::FILE* f) {
  std::fprintf(
      f,
      "usage: bench_geometry_queries [options]\n"
      "  --device SEL        Vulkan device: index or name substring (default: VKC_DEVICE, else first GPU)\n"
      "  --batches A,B,..    queries per batch (default 1,100,10000,1000000)\n"
      "  --points N          points of the point set rows (default 1000000)\n"
      "  --pairs A,B,..      pair types to run, e.g. sphere-box,box-box (default: all)\n"
      "  --row-budget S      seconds per row: a batch whose one call is predicted to take more than S/4\n"
      "                      (from the batch before) is skipped (default 10)\n"
      "  --no-vulkan         CPU and FCL rows only\n"
      "  --no-fcl            no FCL rows\n"
      "  --thread-time       time the CPU, math-only and FCL rows (and validate()) by the thread's CPU\n"
      "                      time (CLOCK_THREAD_CPUTIME_ID), not wall clock, for a loaded machine\n"
      "                      (Vulkan rows stay wall clock)\n"
      "  --reps R            timed repetitions per measurement, median reported (default 5)\n"
      "  --quick             batches 1,100, 10000 points, 3 reps (smoke test)\n"
      "  --exact-arithmetic  the Vulkan context with exact arithmetic (ContextCreateInfo::exactArithmetic)\n"
      "  --resident-headroom K  vulkan-resident rows: the stage's maxSlots K times the batch's slots and\n"
      "                      every device family asked for (default: slots and families of the batch)\n"
      "  --json PATH         write results as JSON (default bench_geometry_queries.json)\n");
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  ArgReader args("bench_geometry_queries", argc, argv);
  uint32_t budget = 10;
  const bool parsed = parseCommonOptions(args, o, usage, [&] {
    if (args.is("--no-vulkan")) return setFlag(o.vulkan, false);
    if (args.is("--no-fcl")) return setFlag(o.fcl, false);
    if (args.is("--thread-time")) return setFlag(o.threadTime, true);
    if (args.is("--pairs")) return taken(args.text(o.pairs));
    if (args.is("--batches")) {
      std::string list;
      if (!args.text(list)) return Parsed::kBad;
      if (!parsePositiveList(list, o.batches)) {
        std::fprintf(stderr, "bench_geometry_queries: --batches wants positive integers A,B,...\n");
        return Parsed::kBad;
      }
      return Parsed::kTaken;
    }
    return numberOption(args,
                        {{"--points", &o.points}, {"--row-budget", &budget}, {"--resident-headroom", &o.residentHeadroom}});
  });
  if (!parsed) return std::nullopt;
  o.rowBudgetS = budget;
  if (o.quick) {
    o.batches = {1, 100};
    o.points = 10'000;
    if (!o.repsGiven) o.reps = 3;
  }
  if (o.reps == 0 || o.points == 0) {
    std::fprintf(stderr, "bench_geometry_queries: --reps and --points must be >= 1\n");
    return std::nullopt;
  }
  return o;
}

// ---- Random geometries ----------------------------------------------------------------------------

Geometry randomGeometry(GeometryType type, Random& r) {
  const Float4 c = r.point(1.0f);
  switch (type) {
    case GeometryType::kSphere:
      return Geometry::sphere({c.x, c.y, c.z, r.uniform(0.3f, 0.8f)});
    case GeometryType::kCapsule: {
      const Float4 d = r.unit();
      const float h = r.uniform(0.2f, 0.6f);
      return Geometry::capsule({c.x - d.x * h, c.y - d.y * h, c.z - d.z * h, 0},
                               {c.x + d.x * h, c.y + d.y * h, c.z + d.z * h, 0}, r.uniform(0.2f, 0.5f));
    }
    case GeometryType::kCylinder:
      return Geometry::cylinder(c, r.unit(), r.uniform(0.3f, 0.6f), r.uniform(0.2f, 0.6f));
    case GeometryType::kOrientedBox:
      return Geometry::orientedBox(c, r.quaternion(),
                                   {r.uniform(0.2f, 0.6f), r.uniform(0.2f, 0.6f), r.uniform(0.2f, 0.6f), 0});
    case GeometryType::kPlane:
      return Geometry::plane(r.point(0.5f), r.unit(), false);
    case GeometryType::kPointSet:
    case GeometryType::kImplicitGeometry:
    case GeometryType::kSurfaceMesh:
    case GeometryType::kLineMesh:
    case GeometryType::kTetrahedralMesh: break;  // not among the random primitive pairs
  }
  return {};
}

struct PairType {
  const char* name;
  GeometryType a, b;
  GeometryMethod method = GeometryMethod::kStatic;
};

constexpr PairType kPairs[] = {
    {"sphere-sphere", GeometryType::kSphere, GeometryType::kSphere},
    {"sphere-capsule", GeometryType::kSphere, GeometryType::kCapsule},
    {"sphere-cylinder", GeometryType::kSphere, GeometryType::kCylinder},
    {"sphere-box", GeometryType::kSphere, GeometryType::kOrientedBox},
    {"sphere-plane", GeometryType::kSphere, GeometryType::kPlane},
    {"capsule-capsule", GeometryType::kCapsule, GeometryType::kCapsule},
    {"capsule-cylinder", GeometryType::kCapsule, GeometryType::kCylinder},
    {"capsule-box", GeometryType::kCapsule, GeometryType::kOrientedBox},
    {"capsule-plane", GeometryType::kCapsule, GeometryType::kPlane},
    {"cylinder-cylinder", GeometryType::kCylinder, GeometryType::kCylinder},
    {"cylinder-box", GeometryType::kCylinder, GeometryType::kOrientedBox},
    {"cylinder-plane", GeometryType::kCylinder, GeometryType::kPlane},
    {"box-box", GeometryType::kOrientedBox, GeometryType::kOrientedBox},
    {"box-plane", GeometryType::kOrientedBox, GeometryType::kPlane},
    {"sphere-implicit", GeometryType::kSphere, GeometryType::kImplicitGeometry},
    {"capsule-implicit", GeometryType::kCapsule, GeometryType::kImplicitGeometry},
    {"cylinder-implicit", GeometryType::kCylinder, GeometryType::kImplicitGeometry},
    {"box-implicit", GeometryType::kOrientedBox, GeometryType::kImplicitGeometry},
    {"plane-implicit", GeometryType::kPlane, GeometryType::kImplicitGeometry},
    {"implicit-implicit", GeometryType::kImplicitGeometry, GeometryType::kImplicitGeometry},
    {"pointset-box", GeometryType::kPointSet, GeometryType::kOrientedBox},
    {"pointset-sphere", GeometryType::kPointSet, GeometryType::kSphere},
    {"pointset-implicit", GeometryType::kPointSet, GeometryType::kImplicitGeometry},
    {"pointset-sphere-ccd", GeometryType::kPointSet, GeometryType::kSphere, GeometryMethod::kContinuous},
    {"pointset-box-ccd", GeometryType::kPointSet, GeometryType::kOrientedBox, GeometryMethod::kContinuous},
    {"pointset-capsule-ccd", GeometryType::kPointSet, GeometryType::kCapsule, GeometryMethod::kContinuous},
    {"pointset-implicit-ccd", GeometryType::kPointSet, GeometryType::kImplicitGeometry,
     GeometryMethod::kContinuous},
};

// The point set rows' implicit geometry: a torus (major radius 0.9, minor 0.35, about the y axis)
// sampled on a 64^3 grid over [-1.6, 1.6]^3.
constexpr uint32_t kTorusGridDim = 64;

void addTorusGrid(std::vector<Geometry>& geometries, std::vector<float>& samples) {
  const float lo = -1.6f;
  const float h = 3.2f / static_cast<float>(kTorusGridDim - 1);
  samples.reserve(size_t{kTorusGridDim} * kTorusGridDim * kTorusGridDim);
  for (uint32_t k = 0; k < kTorusGridDim; ++k) {
    for (uint32_t j = 0; j < kTorusGridDim; ++j) {
      for (uint32_t i = 0; i < kTorusGridDim; ++i) {
        const float x = lo + h * static_cast<float>(i);
        const float y = lo + h * static_cast<float>(j);
        const float z = lo + h * static_cast<float>(k);
        const float ring = std::sqrt(x * x + z * z) - 0.9f;
        samples.push_back(std::sqrt(ring * ring + y * y) - 0.35f);
      }
    }
  }
  geometries.push_back(
      Geometry::implicitGrid({lo, lo, lo, 0}, {h, h, h, 0}, kTorusGridDim, kTorusGridDim, kTorusGridDim, 0));
}

// A shape of the <primitive>-implicit rows: small (radius, half extents and half heights 0.05 to 0.15,
// a capsule's segment up to 0.3 long), turned, its centre within 0.45 of the torus' ring (the tube's
// radius is 0.35): pieces of debris on and around the sampled torus; a plane through that centre.
Geometry debrisNearTorus(GeometryType type, Random& r) {
  const float angle = r.uniform(0.0f, 6.2831853f);
  const Float4 offset = r.point(0.45f / 1.7320508f);  // a cube inside the ball of 0.45
  const Float4 c{0.9f * std::cos(angle) + offset.x, offset.y, 0.9f * std::sin(angle) + offset.z, 0};
  const float size = r.uniform(0.05f, 0.15f);
  switch (type) {
    case GeometryType::kSphere:
      return Geometry::sphere({c.x, c.y, c.z, size});
    case GeometryType::kCapsule: {
      const Float4 d = r.unit();
      const float half = r.uniform(0.0f, 0.15f);
      return Geometry::capsule({c.x - half * d.x, c.y - half * d.y, c.z - half * d.z, 0},
                               {c.x + half * d.x, c.y + half * d.y, c.z + half * d.z, 0}, size);
    }
    case GeometryType::kCylinder:
      return Geometry::cylinder(c, r.unit(), size, r.uniform(0.05f, 0.15f));
    case GeometryType::kPlane:  // through the torus' tube, any direction
      return Geometry::plane(c, r.unit(), false);
    default:
      return Geometry::orientedBox(c, r.quaternion(),
                                   {size, r.uniform(0.05f, 0.15f), r.uniform(0.05f, 0.15f), 0});
  }
}

// A piece of debris of the implicit-implicit row: a sampled ball or box (radius or half extent 0.05
// to 0.15) on a 12^3 grid reaching 0.05 past it, placed as debrisNearTorus places its shapes.
Geometry debrisGridNearTorus(Random& r, std::vector<float>& samples) {
  const Geometry sphere = debrisNearTorus(GeometryType::kSphere, r);
  const Float4 c = sphere.p0;
  const float size = sphere.p0.w;
  const bool ball = r.uniform(0.0f, 1.0f) < 0.5f;
  constexpr uint32_t kDim = 12;
  const float h = 2.0f * (size + 0.05f) / static_cast<float>(kDim - 1);
  const Float4 origin{c.x - (size + 0.05f), c.y - (size + 0.05f), c.z - (size + 0.05f), 0};
  const uint32_t first = static_cast<uint32_t>(samples.size());
  for (uint32_t k = 0; k < kDim; ++k) {
    for (uint32_t j = 0; j < kDim; ++j) {
      for (uint32_t i = 0; i < kDim; ++i) {
        const float x = origin.x + h * static_cast<float>(i) - c.x;
        const float y = origin.y + h * static_cast<float>(j) - c.y;
        const float z = origin.z + h * static_cast<float>(k) - c.z;
        samples.push_back(ball ? std::sqrt(x * x + y * y + z * z) - size
                               : std::max(std::max(std::abs(x), std::abs(y)), std::abs(z)) - size);
      }
    }
  }
  return Geometry::implicitGrid(origin, {h, h, h, 0}, kDim, kDim, kDim, first);
}

// One batch: its geometries, points and queries.
struct Batch {
  std::vector<Geometry> geometries;
  std::vector<Float4> points;
  std::vector<GeometryQuery> queries;
  std::vector<float> gridSamples;
  std::vector<Float4> previousPoints;  // continuous rows
  std::vector<Geometry> previousGeometries;  // a moving primitive's pose at the step's start
  uint64_t items = 0;                  // pairs, or points of a point set row
  size_t states = 0;                   // continuous rows: state entries (one per point)
  GeometryQueryInput input() const {
    return {geometries, points, queries, gridSamples, previousPoints, previousGeometries};
  }
};

Batch makeBatch(const PairType& p, uint32_t batch, uint32_t points, uint32_t seed) {
  Random r(seed);
  Batch b;
  if (p.a == GeometryType::kPointSet) {
    b.points.resize(points);
    for (Float4& x : b.points) x = r.point(1.5f);
    b.geometries.push_back(Geometry::pointSet(0, points));
    if (p.b == GeometryType::kImplicitGeometry) {
      addTorusGrid(b.geometries, b.gridSamples);
    } else if (p.b == GeometryType::kCapsule) {
      // A swinging limb: a capsule of radius 0.3 from (-0.8, 0, 0) to (0.8, 0, 0) that turned 10
      // degrees about z around its middle and moved 0.1 along y this step.
      const float c = 0.98480775f, sn = 0.17364818f;
      b.geometries.push_back(Geometry::capsule({-0.8f, 0, 0, 0}, {0.8f, 0, 0, 0}, 0.3f));
      b.previousGeometries = b.geometries;
      b.previousGeometries[1] =
          Geometry::capsule({-0.8f * c, -0.8f * sn - 0.1f, 0, 0}, {0.8f * c, 0.8f * sn - 0.1f, 0, 0}, 0.3f);
    } else {
      b.geometries.push_back(
          p.b == GeometryType::kSphere
              ? Geometry::sphere({0, 0, 0, 1})
              : Geometry::orientedBox({0, 0, 0, 0}, {0, 0.38268343f, 0, 0.92387953f}, {1, 0.75f, 0.5f, 0}));
    }
    if (p.method == GeometryMethod::kContinuous) {
      // Each point moved by up to 0.1 per axis this step (a fast cloth particle: about a third of the
      // torus' tube radius), from the start of the step.
      b.previousPoints.resize(points);
      for (uint32_t i = 0; i < points; ++i) {
        const Float4 d = r.point(0.1f);
        b.previousPoints[i] = {b.points[i].x - d.x, b.points[i].y - d.y, b.points[i].z - d.z, 0};
      }
      b.states = points;
    }
    b.queries.push_back({0, 1, p.method, 0});
    b.items = points;
    return b;
  }
  if (p.b == GeometryType::kImplicitGeometry) {  // small shapes on and around the sampled torus
    addTorusGrid(b.geometries, b.gridSamples);
    for (uint32_t i = 0; i < batch; ++i) {
      b.geometries.push_back(p.a == GeometryType::kImplicitGeometry ? debrisGridNearTorus(r, b.gridSamples)
                                                                    : debrisNearTorus(p.a, r));
      b.queries.push_back({i + 1, 0, GeometryMethod::kStatic, 0});
    }
    b.items = batch;
    return b;
  }
  b.geometries.reserve(size_t{2} * batch);
  b.queries.reserve(batch);
  for (uint32_t i = 0; i < batch; ++i) {
    b.geometries.push_back(randomGeometry(p.a, r));
    b.geometries.push_back(randomGeometry(p.b, r));
    b.queries.push_back({2 * i, 2 * i + 1, GeometryMethod::kStatic, 0});
  }
  b.items = batch;
  return b;
}

// The output of one run.
uint32_t queriesWithContacts(const QueryOutput& o) {
  uint32_t n = 0;
  for (const ContactRange& r : o.ranges) n += r.count > 0;
  return n;
}

// ---- Math only ----------------------------------------------------------------------------------

struct MathBatch {
  std::vector<gpu::GeomShape> shapes;
  std::vector<gpu::vec3> points;
};

MathBatch makeMathBatch(const Batch& b) {
  MathBatch m;
  for (const Geometry& g : b.geometries) {
    gpu::GeomShape s;
    s.p0 = gpu::vec4(g.p0.x, g.p0.y, g.p0.z, g.p0.w);
    s.p1 = gpu::vec4(g.p1.x, g.p1.y, g.p1.z, g.p1.w);
    s.p2 = gpu::vec4(g.p2.x, g.p2.y, g.p2.z, g.p2.w);
    s.info = gpu::uvec4(static_cast<uint32_t>(g.type), g.first, g.count, g.flags);
    m.shapes.push_back(s);
  }
  for (const Float4& p : b.points) m.points.emplace_back(p.x, p.y, p.z);
  return m;
}

// Every query through the scalar functions the CPU twin calls (a primitive pair's contacts at once by
// geomQueryContacts, a point set's one point at a time by geomSlotContact); the number of contacts,
// the queries with one in `touching`, and a sum of depths in `depthSum` (so that nothing is optimized
// away).
uint32_t runMath(const Batch& b, const MathBatch& m, float& depthSum, uint32_t& touching) {
  uint32_t contacts = 0;
  touching = 0;
  for (const GeometryQuery& q : b.queries) {
    const uint32_t before = contacts;
    const gpu::GeomShape& a = m.shapes[q.a];
    const gpu::GeomShape& s = m.shapes[q.b];
    const bool pointsA = a.info.x == gpu::kGeomPointSet;
    if (!pointsA && s.info.x != gpu::kGeomPointSet) {
      const gpu::GeomManifold manifold = gpu::geomQueryContacts(a, s);
      for (uint32_t k = 0; k < manifold.count; ++k) depthSum += manifold.s[k].point.w;
      contacts += manifold.count;
    } else {
      const uint32_t first = pointsA ? a.info.y : s.info.y;
      const uint32_t slots = gpu::geomSlotCount(a, s);
      for (uint32_t slot = 0; slot < slots; ++slot) {
        gpu::GeomElement ea;
        gpu::GeomElement eb;
        if (gpu::geomSlotContact(a, s, slot, m.points[first + slot], ea, eb)) {
          ++contacts;
          depthSum += ea.point.w;
        }
      }
    }
    touching += contacts > before ? 1u : 0u;
  }
  return contacts;
}

// ---- FCL -----------------------------------------------------------------------------------------

#ifdef VKC_HAVE_FCL
// FCL's object for one of our geometries (FCL's capsules and cylinders lie along their local z).
std::unique_ptr<fcl::CollisionObjectd> fclObject(const Geometry& g) {
  using V = Eigen::Vector3d;
  auto v = [](const Float4& f) { return V(f.x, f.y, f.z); };
  fcl::Transform3d pose = fcl::Transform3d::Identity();
  std::shared_ptr<fcl::CollisionGeometryd> shape;
  if (g.type == GeometryType::kSphere) {
    shape = std::make_shared<fcl::Sphered>(g.p0.w);
    pose.translation() = v(g.p0);
  } else if (g.type == GeometryType::kCapsule || g.type == GeometryType::kCylinder) {
    const bool capsule = g.type == GeometryType::kCapsule;
    const V axis = capsule ? V(v(g.p1) - v(g.p0)) : v(g.p1);
    const double length = capsule ? axis.norm() : 2.0 * double{g.p1.w};
    if (capsule) {
      shape = std::make_shared<fcl::Capsuled>(g.p0.w, length);
    } else {
      shape = std::make_shared<fcl::Cylinderd>(g.p0.w, length);
    }
    pose.linear() = Eigen::Quaterniond::FromTwoVectors(V::UnitZ(), axis).toRotationMatrix();
    pose.translation() = capsule ? V(0.5 * (v(g.p0) + v(g.p1))) : v(g.p0);
  } else if (g.type == GeometryType::kOrientedBox) {
    shape = std::make_shared<fcl::Boxd>(2.0 * V(v(g.p2)));
    pose.linear() = Eigen::Quaterniond(g.p1.w, g.p1.x, g.p1.y, g.p1.z).normalized().toRotationMatrix();
    pose.translation() = v(g.p0);
  } else {
    const V n = v(g.p1).normalized();
    shape = std::make_shared<fcl::Halfspaced>(n, n.dot(v(g.p0)));
  }
  auto object = std::make_unique<fcl::CollisionObjectd>(shape, pose);
  object->computeAABB();
  return object;
}

struct FclBatch {
  std::vector<std::unique_ptr<fcl::CollisionObjectd>> objects;  // 2 per pair
};

FclBatch makeFclBatch(const Batch& b) {
  FclBatch f;
  f.objects.reserve(b.geometries.size());
  for (const Geometry& g : b.geometries) f.objects.push_back(fclObject(g));
  return f;
}

// fcl::collide over every pair; the number of pairs FCL finds colliding.
uint32_t runFcl(const FclBatch& f) {
  const fcl::CollisionRequestd request(1, true);
  fcl::CollisionResultd result;
  uint32_t hits = 0;
  for (size_t i = 0; i + 1 < f.objects.size(); i += 2) {
    result.clear();
    fcl::collide(f.objects[i].get(), f.objects[i + 1].get(), request, result);
    hits += result.isCollision() ? 1u : 0u;
  }
  return hits;
}
#endif

// ---- Rows ----------------------------------------------------------------------------------------

struct Row {
  std::string pair, backend;
  uint32_t batch = 0;  // queries
  uint64_t items = 0;  // pairs or points
  double ms = -1;      // median per call; < 0: skipped
  uint32_t reps = 0, inner = 0;
  uint32_t contacts = 0, colliding = 0;  // contacts found; queries (FCL: pairs) with a contact
  double vsFcl = 0;                      // our rate / FCL's on the same batch (0: none)
  double vsFclPaired = 0;                // cpu-simd: median of FCL's / our time over alternated samples
  uint32_t pairedSamples = 0;            // the number of those pairs of samples
  double validateMs = -1;                // CPU rows: median of validate() alone on the batch (inside ms)
  double gpuMs = -1;                     // Vulkan rows: median GPU time of the passes (timestamps)
  RecordStats stats;                     // Vulkan rows: the record's counts (and the H100 model)
  std::vector<PassTiming> passes;        // vulkan-resident rows: the last submission's GPU time per pass
  std::string note;
  double itemsPerSecond() const { return ms > 0 ? static_cast<double>(items) / (ms * 1e-3) : 0; }
};

void printHeader() {
  std::printf("%-21s %8s %9s  %-15s %11s %13s %8s %9s %8s %9s  %s\n", "pair", "batch", "items", "backend",
              "ms/call", "items/s", "ours/FCL", "contacts", "touching", "validate", "note");
}

void printRow(const Row& r) {
  if (r.ms < 0) {
    std::printf("%-21s %8u %9llu  %-15s %11s %13s %8s %9s %8s %9s  %s\n", r.pair.c_str(), r.batch,
                static_cast<unsigned long long>(r.items), r.backend.c_str(), "-", "-", "-", "-", "-", "-",
                r.note.c_str());
  } else {
    char ratio[16] = "-", validate[16] = "-";
    if (r.vsFcl > 0) std::snprintf(ratio, sizeof ratio, "%.2f", r.vsFcl);
    if (r.validateMs >= 0) std::snprintf(validate, sizeof validate, "%.0f%%", 100.0 * r.validateMs / r.ms);
    std::printf("%-21s %8u %9llu  %-15s %11.4f %13.4e %8s %9u %8u %9s  %s\n", r.pair.c_str(), r.batch,
                static_cast<unsigned long long>(r.items), r.backend.c_str(), r.ms, r.itemsPerSecond(), ratio,
                r.contacts, r.colliding, validate, r.note.c_str());
  }
  std::fflush(stdout);
}

bool wanted(const Options& o, const char* pair) {
  if (o.pairs.empty()) return true;
  std::stringstream ss(o.pairs);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item == pair) return true;
  }
  return false;
}

// A vulkan-resident row (bench_geometry_queries_resident.h): false when its contacts differ from
// cpu-scalar's.
// primitive: the primitive-pair path (vulkan-primitive rows).
bool runResidentRow(Context& context, const Batch& batch, const QueryOutput& reference, const Options& o,
                    double budgetMs, bool primitive, Row& row) {
  const uint32_t capacity = static_cast<uint32_t>(std::max<size_t>(reference.counts.contacts, 1));
  auto resident = ResidentGeometryBatch::create(context, batch.input(), capacity, o.residentHeadroom, primitive);
  if (!resident) {
    row.note = "skipped: " + resident.error().message;
    return true;
  }
  std::vector<double> gpuMs;
  const WallSamples s = sampleWall(
      [&] {
        double wall = 0, gpu = 0;
        if (!(*resident)->submit(wall, gpu)) std::abort();
        gpuMs.push_back(gpu);
      },
      o.reps, 1, 20.0, budgetMs, 3);
  row.ms = median(s.ms);
  row.reps = static_cast<uint32_t>(s.ms.size());
  row.inner = s.inner;
  row.gpuMs = median(gpuMs);
  row.stats = (*resident)->stats();
  row.passes = (*resident)->timings();
  QueryOutput out;
  if (const Status st = (*resident)->readBack(out); !st) {
    row.note = "read-back failed: " + st.message();
    return false;
  }
  row.contacts = out.counts.contacts;
  row.colliding = queriesWithContacts(out);
  char head[96];
  std::snprintf(head, sizeof head, "GPU %.4f ms (%.4g pairs/ms), %zu submissions of one record; ", row.gpuMs,
                static_cast<double>(row.items) / std::max(row.gpuMs, 1e-9), gpuMs.size());
  row.note = head;
  for (const PassTiming& t : row.passes) {
    std::string name = t.name;
    if (name.rfind("vkc.geometry_queries.", 0) == 0) name = name.substr(21);
    char part[96];
    std::snprintf(part, sizeof part, "%s %.4f, ", name.c_str(), t.ns * 1e-6);
    row.note += part;
  }
  row.note += recordStatsNote(row.stats) + "; ";
  if ((*resident)->invalidQueries() != 0) {
    row.note += std::to_string((*resident)->invalidQueries()) + " queries INVALID on the device";
    return false;
  }
  if (reference.ranges.empty()) {
    row.note += "not checked (cpu-scalar skipped)";
    return true;
  }
  if (!sameContacts(out, reference)) {
    row.note += "DIFFERS from cpu-scalar";
    return false;
  }
  row.note += "bitwise equal to cpu-scalar";
  return true;
}

int runBench(const Options& o) {
  std::unique_ptr<Context> context;
  std::string vulkanSkip;
  if (o.vulkan) {
    context = createContext("bench_geometry_queries", o.device, o.exactArithmetic);
    if (!context) vulkanSkip = "no Vulkan context";
  } else {
    vulkanSkip = "--no-vulkan";
  }
#ifdef VKC_HAVE_FCL
  const bool fcl = o.fcl;
#else
  const bool fcl = false;
#endif
  const std::string date = utcDate();
  std::string deviceLine = "no Vulkan device (" + vulkanSkip + ")";
  if (context) {
    deviceLine = bench::deviceLine(*context);
  }
  std::printf("bench_geometry_queries: %s; CPU '%s', SIMD target %s; one thread\n", deviceLine.c_str(),
              cpuModel().c_str(), cpu::simdTargetName());
  double (*const cpuClock)() = o.threadTime ? threadMs : nowMs;  // the CPU, math-only and FCL rows
  std::printf("bench_geometry_queries: reps %u; CPU rows timed by %s; FCL %s\n\n", o.reps,
              o.threadTime ? "thread CPU time" : "wall clock",
#ifdef VKC_HAVE_FCL
              o.fcl ? "0.7 (fcl::collide, one contact with depth and normal, one thread)" : "off (--no-fcl)"
#else
              "not built (Debian libfcl-dev not found)"
#endif
  );
  printHeader();
  std::vector<Row> rows;
  bool disagree = false;
  const double budgetMs = o.rowBudgetS * 1000.0;
  for (const PairType& p : kPairs) {
    if (!wanted(o, p.name)) continue;
    const bool pointSet = p.a == GeometryType::kPointSet;
    const std::vector<uint32_t> batches = pointSet ? std::vector<uint32_t>{1} : o.batches;
    // Per backend, the last measured ms per item (predicts the next batch's time).
    double lastPerItem[7] = {0, 0, 0, 0, 0, 0, 0};
    for (const uint32_t n : batches) {
      const Batch batch = makeBatch(p, n, o.points, 1234u + n);
      QueryOutput reference;
      std::vector<std::pair<std::string, int>> runs = {{"cpu-scalar", 0}, {"cpu-simd", 1}};
      // math-only (geomSlotContact) and the resident batch (no grid samples, no state) take the static
      // point sets against primitives and the primitive pairs.
      const bool closedForm = p.method == GeometryMethod::kStatic && p.b != GeometryType::kImplicitGeometry;
      if (closedForm) runs.push_back({"math-only", 4});
      runs.push_back({"vulkan", 2});
      if (closedForm) runs.push_back({"vulkan-resident", 5});
      // The primitive-pair path and FCL take the primitive pairs (FCL has no sampled field).
      if (!pointSet && p.b != GeometryType::kImplicitGeometry) {
        runs.insert(runs.end(), {{"vulkan-primitive", 6}, {"fcl", 3}});
      }
      double fclRate = 0;
      uint32_t fclHits = 0;
      // validate() alone (every queryGeometries call runs it first): the part of the CPU rows' time
      // that is input checking rather than queries.
      double validateMs = -1;
      if (lastPerItem[0] * static_cast<double>(batch.items) <= budgetMs / 4) {
        const WallSamples v = sampleWall(
            [&] {
              if (!validate(batch.input())) std::abort();
            },
            o.reps, 1, 20.0, budgetMs, 3, cpuClock);
        validateMs = median(v.ms);
      }
      std::vector<Row> batchRows;
      for (const auto& [name, slot] : runs) {
        Row row{p.name, name, static_cast<uint32_t>(batch.queries.size()), batch.items};
        const double predicted = lastPerItem[slot] * static_cast<double>(batch.items);
        if (predicted > budgetMs / 4) {
          char buf[128];
          std::snprintf(buf, sizeof buf, "skipped: one call predicted %.1f s (> --row-budget / 4)",
                        predicted * 1e-3);
          row.note = buf;
          batchRows.push_back(row);
          continue;
        }
        if (slot == 5 || slot == 6) {
          if (!context) {
            row.note = "skipped: " + vulkanSkip;
            batchRows.push_back(row);
            continue;
          }
          if (!runResidentRow(*context, batch, reference, o, budgetMs, slot == 6, row)) disagree = true;
        } else if (slot == 4) {
          const MathBatch m = makeMathBatch(batch);
          float depthSum = 0;
          const WallSamples s = sampleWall([&] { row.contacts = runMath(batch, m, depthSum, row.colliding); },
                                           o.reps, 1, 20.0, budgetMs, 3, cpuClock);
          row.ms = median(s.ms);
          row.reps = static_cast<uint32_t>(s.ms.size());
          row.inner = s.inner;
          if (reference.ranges.empty()) {
            row.note = "not checked (cpu-scalar skipped)";
          } else if (row.contacts != reference.counts.contacts) {
            row.note = "contact count DIFFERS from cpu-scalar";
            disagree = true;
          } else {
            row.note = "contact count equal to cpu-scalar";
          }
          row.note += depthSum >= 0 ? "" : " (negative depth sum)";
        } else if (slot == 3) {
#ifdef VKC_HAVE_FCL
          if (!fcl) continue;
          const FclBatch f = makeFclBatch(batch);
          fclHits = runFcl(f);
          const WallSamples s = sampleWall([&] { runFcl(f); }, o.reps, 1, 20.0, budgetMs, 3, cpuClock);
          row.ms = median(s.ms);
          row.reps = static_cast<uint32_t>(s.ms.size());
          row.inner = s.inner;
          row.colliding = fclHits;
          fclRate = row.itemsPerSecond();
#else
          continue;
#endif
        } else {
          const Backend backend = slot == 0   ? Backend::kCpuScalar
                                  : slot == 1 ? Backend::kCpuSimd
                                              : Backend::kVulkan;
          if (backend == Backend::kVulkan && !context) {
            row.note = "skipped: " + vulkanSkip;
            batchRows.push_back(row);
            continue;
          }
          Context* ctx = backend == Backend::kVulkan ? context.get() : nullptr;
          QueryOutput out;
          if (const Status st = runQueryInto(backend, ctx, batch.input(), out, batch.states); !st) {
            row.note = "skipped: " + st.message();
            batchRows.push_back(row);
            continue;
          }
          WallSamples s;
          if (backend == Backend::kVulkan) {
            // A stage made once for the batch (as an engine keeps one), run() timed: upload, record,
            // submit, wait and read-back; the GPU's own time per run from its timestamps.
            GeometryQueryStageCreateInfo ci;
            ci.maxQueries = static_cast<uint32_t>(batch.queries.size());
            ci.maxGeometries = static_cast<uint32_t>(batch.geometries.size());
            ci.maxPoints = static_cast<uint32_t>(batch.points.size());
            ci.maxGridSamples = static_cast<uint32_t>(batch.gridSamples.size());
            ci.maxStates = static_cast<uint32_t>(batch.states);
            ci.maxContacts = static_cast<uint32_t>(std::max<size_t>(out.a.size(), 1));
            auto stage = GeometryQueryStage::create(*ctx, ci);
            if (!stage) {
              row.note = "skipped: " + stage.error().message;
              batchRows.push_back(row);
              continue;
            }
            std::vector<double> gpuMs;
            const GeometryQueryOutput go{out.a, out.b, out.ranges, out.state};
            s = sampleWall(
                [&] {
                  std::fill(out.state.begin(), out.state.end(), Float4{0, 0, 0, 0});  // as runQueryInto
                  if (!(*stage)->run(batch.input(), go)) std::abort();
                  double ns = 0;
                  for (const PassTiming& t : (*stage)->timings()) ns += t.ns;
                  gpuMs.push_back(ns * 1e-6);
                },
                o.reps, 1, 20.0, budgetMs, 3);
            row.gpuMs = median(gpuMs);
            row.stats = (*stage)->lastRecordStats();
            char gpu[48];
            std::snprintf(gpu, sizeof gpu, "GPU %.4f ms, ", row.gpuMs);
            row.note = gpu + recordStatsNote(row.stats) + "; ";
          } else {
            s = sampleWall(
                [&] {
                  if (!runQueryInto(backend, ctx, batch.input(), out, batch.states)) std::abort();
                },
                o.reps, 1, 20.0, budgetMs, 3, cpuClock);
          }
          row.ms = median(s.ms);
          row.reps = static_cast<uint32_t>(s.ms.size());
          row.inner = s.inner;
          row.contacts = out.counts.contacts;
          row.colliding = queriesWithContacts(out);
          if (backend != Backend::kVulkan) row.validateMs = validateMs;
          if (slot == 0) {
            reference = std::move(out);
          } else if (reference.ranges.empty()) {
            row.note = "not checked (cpu-scalar skipped)";
          } else if (!sameContacts(out, reference)) {
            row.note += "DIFFERS from cpu-scalar";
            disagree = true;
          } else {
            row.note += "bitwise equal to cpu-scalar";
          }
        }
        lastPerItem[slot] = row.ms / static_cast<double>(batch.items);
        batchRows.push_back(row);
      }
#ifdef VKC_HAVE_FCL
      // cpu-simd against FCL once more, sample by sample in alternation (samplePaired): the two medians
      // above were taken seconds apart, and this VM-friendly ratio is the one to quote.
      if (fclRate > 0) {
        for (Row& r : batchRows) {
          if (r.backend != "cpu-simd" || r.ms <= 0) continue;
          const FclBatch f = makeFclBatch(batch);
          QueryOutput out;
          if (!runQueryInto(Backend::kCpuSimd, nullptr, batch.input(), out)) std::abort();
          const auto s = samplePaired(
              [&] {
                if (!runQueryInto(Backend::kCpuSimd, nullptr, batch.input(), out)) std::abort();
              },
              [&] { runFcl(f); }, o.quick ? 1u : std::max(o.reps, 5u), o.quick ? 1.0 : 20.0, budgetMs,
              o.quick ? 1u : 5u, cpuClock);
          r.vsFclPaired = medianPairedRatio(s);
          r.pairedSamples = static_cast<uint32_t>(s.first.ms.size());
          char buf[96];
          std::snprintf(buf, sizeof buf, "; paired with FCL %.2fx (%u alternated samples)", r.vsFclPaired,
                        r.pairedSamples);
          r.note += buf;
        }
      }
#endif
      for (Row& r : batchRows) {
        if (fclRate > 0 && r.backend != "fcl" && r.ms > 0) {
          r.vsFcl = r.itemsPerSecond() / fclRate;
          if (r.colliding != fclHits) {
            r.note += (r.note.empty() ? "" : "; ") + std::string("FCL finds ") + std::to_string(fclHits) +
                      " touching";
          }
        }
        printRow(r);
        rows.push_back(r);
      }
    }
  }

  std::string s = "{\n  \"benchmark\": \"bench_geometry_queries\",\n  \"date\": " + jsonString(date) + ",\n";
  if (context) s += jsonDeviceFields(*context);
  s += jsonHostFields();
  s += "  \"fcl\": " + std::string(fcl ? "true" : "false") + ",\n";
  s += "  \"reps\": " + std::to_string(o.reps) + ",\n";
  s += "  \"cpu_clock\": " + jsonString(o.threadTime ? "thread" : "wall") + ",\n";
  s += jsonRowsAndEnd(rows, [&](const Row& r) {
    std::string m = "\"pair\": " + jsonString(r.pair) + ", \"backend\": " + jsonString(r.backend) +
                    ", \"batch\": " + std::to_string(r.batch) + ", \"items\": " + std::to_string(r.items);
    if (r.ms >= 0) {
      m += ", \"ms\": " + jsonNumber(r.ms) + ", \"items_per_s\": " + jsonNumber(r.itemsPerSecond()) +
           ", \"reps\": " + std::to_string(r.reps) + ", \"inner\": " + std::to_string(r.inner) +
           ", \"contacts\": " + std::to_string(r.contacts) + ", \"touching\": " + std::to_string(r.colliding);
      if (r.vsFcl > 0) m += ", \"ours_over_fcl\": " + jsonNumber(r.vsFcl);
      if (r.vsFclPaired > 0) {
        m += ", \"ours_over_fcl_paired\": " + jsonNumber(r.vsFclPaired) +
             ", \"paired_samples\": " + std::to_string(r.pairedSamples);
      }
      if (r.validateMs >= 0) m += ", \"validate_ms\": " + jsonNumber(r.validateMs);
      if (r.gpuMs >= 0) m += ", \"gpu_ms\": " + jsonNumber(r.gpuMs) + ", " + jsonRecordStatsMembers(r.stats);
      if (r.gpuMs > 0) m += ", \"items_per_gpu_ms\": " + jsonNumber(static_cast<double>(r.items) / r.gpuMs);
      if (!r.passes.empty()) {
        m += ", \"gpu_ms_per_pass\": {";
        for (size_t i = 0; i < r.passes.size(); ++i) {
          m += (i > 0 ? ", " : "") + jsonString(r.passes[i].name) + ": " + jsonNumber(r.passes[i].ns * 1e-6);
        }
        m += "}";
      }
    }
    if (!r.note.empty()) m += ", \"note\": " + jsonString(r.note);
    return m;
  });
  return finishResults("bench_geometry_queries", o.json, s, disagree);
}

}  // namespace
}  // namespace vkc::bench

int main(int argc, char** argv) {
  const std::optional<vkc::bench::Options> o = vkc::bench::parseOptions(argc, argv);
  if (!o) return 2;
  return vkc::bench::runBench(*o);
}
