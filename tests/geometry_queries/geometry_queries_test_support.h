// Shared by the geometry query tests: a batch that owns its arrays, running it on a CPU backend,
// and checks of one contact's elements.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "vkcollide/geometry_queries.h"

namespace vkc::test::geometry {

inline Float4 v3(float x, float y, float z) { return Float4{x, y, z, 0.0f}; }
inline Float4 identityQuat() { return Float4{0.0f, 0.0f, 0.0f, 1.0f}; }

// iMSTK's default-oriented shapes (axis y): a capsule of segment length `length` centred at c, and a
// cylinder of full length `length`.
inline Geometry imstkCapsule(Float4 c, float radius, float length) {
  return Geometry::capsule(v3(c.x, c.y - length / 2, c.z), v3(c.x, c.y + length / 2, c.z), radius);
}
inline Geometry imstkCylinder(Float4 c, float radius, float length) {
  return Geometry::cylinder(c, v3(0, 1, 0), radius, length / 2);
}

struct Batch {
  std::vector<Geometry> geometries;
  std::vector<Float4> points;
  std::vector<GeometryQuery> queries;
  std::vector<float> gridSamples;
  std::vector<Float4> previousPoints;
  std::vector<Geometry> previousGeometries;  // empty, or one per geometry (moving primitives)
  std::vector<Float4> state;  // continuous queries' persistent state (kept between runs)
  std::vector<uint32_t> cells;  // the meshes' cells
  std::vector<ContactElement> elementsA, elementsB;
  std::vector<ContactRange> ranges;

  uint32_t add(const Geometry& g) {
    geometries.push_back(g);
    return static_cast<uint32_t>(geometries.size() - 1);
  }
  uint32_t addPoints(const std::vector<Float4>& p) {
    const uint32_t first = static_cast<uint32_t>(points.size());
    points.insert(points.end(), p.begin(), p.end());
    return add(Geometry::pointSet(first, static_cast<uint32_t>(p.size())));
  }
  // A mesh of type `type` over new points `vertices` and the cells `cellIndices` (vertex numbers, 3, 2
  // or 4 per cell).
  uint32_t addMesh(GeometryType type, const std::vector<Float4>& vertices,
                   const std::vector<uint32_t>& cellIndices) {
    const uint32_t first = static_cast<uint32_t>(points.size());
    const uint32_t entry = static_cast<uint32_t>(cells.size());
    points.insert(points.end(), vertices.begin(), vertices.end());
    cells.insert(cells.end(), cellIndices.begin(), cellIndices.end());
    const uint32_t n =
        type == GeometryType::kLineMesh ? 2u : (type == GeometryType::kTetrahedralMesh ? 4u : 3u);
    const uint32_t vc = static_cast<uint32_t>(vertices.size());
    const uint32_t cc = static_cast<uint32_t>(cellIndices.size() / n);
    if (type == GeometryType::kLineMesh) return add(Geometry::lineMesh(first, vc, entry, cc));
    if (type == GeometryType::kTetrahedralMesh) return add(Geometry::tetrahedralMesh(first, vc, entry, cc));
    return add(Geometry::surfaceMesh(first, vc, entry, cc));
  }
  void query(uint32_t a, uint32_t b) { queries.push_back(GeometryQuery{a, b, GeometryMethod::kStatic, 0}); }
  // A continuous query whose state entries start at `stateFirst` (state grows to hold them, zeroed).
  void continuous(uint32_t a, uint32_t b, uint32_t stateFirst) {
    queries.push_back(GeometryQuery{a, b, GeometryMethod::kContinuous, stateFirst});
    const Geometry& g = geometries[geometries[a].type == GeometryType::kPointSet ? a : b];
    if (state.size() < stateFirst + g.count) state.resize(stateFirst + g.count, Float4{0, 0, 0, 0});
  }
  // An implicit geometry sampled from f on an n^3 grid of spacing h from `origin`.
  uint32_t addGrid(Float4 origin, float h, uint32_t n, const std::function<float(float, float, float)>& f) {
    const uint32_t first = static_cast<uint32_t>(gridSamples.size());
    for (uint32_t k = 0; k < n; ++k) {
      for (uint32_t j = 0; j < n; ++j) {
        for (uint32_t i = 0; i < n; ++i) {
          gridSamples.push_back(f(origin.x + static_cast<float>(i) * h, origin.y + static_cast<float>(j) * h,
                                  origin.z + static_cast<float>(k) * h));
        }
      }
    }
    return add(Geometry::implicitGrid(origin, v3(h, h, h), n, n, n, first));
  }

  GeometryQueryInput input() const {
    return {geometries, points, queries, gridSamples, previousPoints, previousGeometries, cells};
  }

  // Runs with room for `capacity` contacts; the output is filled with a sentinel first. kVulkan needs
  // `context`.
  Result<GeometryQueryCounts> run(Backend backend, size_t capacity = 64, Context* context = nullptr) {
    ContactElement sentinel;
    sentinel.point = Float4{-7, -7, -7, -7};
    sentinel.query = 0xDEADu;
    elementsA.assign(capacity, sentinel);
    elementsB.assign(capacity, sentinel);
    ranges.assign(queries.size(), ContactRange{0xDEADu, 0xDEADu});
    return queryGeometries(backend, context, input(), {elementsA, elementsB, ranges, state});
  }
};

inline bool bitwiseEqual(const ContactElement& a, const ContactElement& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Queries 2k and 2k + 1 of a batch that ran are one pair in both orders: the same number of
// contacts (more than minContacts) and the elements swapped bit for bit (the query field aside).
inline void expectSwappedPairs(const Batch& b, uint32_t minContacts) {
  for (size_t q = 0; q + 1 < b.queries.size(); q += 2) {
    const ContactRange r0 = b.ranges[q], r1 = b.ranges[q + 1];
    ASSERT_EQ(r0.count, r1.count) << "pair " << q / 2;
    EXPECT_GT(r0.count, minContacts) << "pair " << q / 2;
    for (uint32_t i = 0; i < r0.count; ++i) {
      ContactElement a = b.elementsA[r0.first + i], e = b.elementsB[r0.first + i];
      ContactElement sa = b.elementsB[r1.first + i], se = b.elementsA[r1.first + i];
      a.query = e.query = sa.query = se.query = 0;
      EXPECT_TRUE(bitwiseEqual(a, sa) && bitwiseEqual(e, se)) << "pair " << q / 2 << " contact " << i;
    }
  }
}

// Runs b on every CPU backend expecting a refusal of `code` whose message mentions `mentions`, with
// nothing written: the output keeps its sentinel, and the state (filled with x = -3 first) too.
inline void expectRefusedUnwritten(Batch& b, ErrorCode code, const std::string& mentions) {
  for (Backend backend : {Backend::kCpuScalar, Backend::kCpuSimd}) {
    std::fill(b.state.begin(), b.state.end(), Float4{-3, -3, -3, 0});
    auto counts = b.run(backend, 8);
    ASSERT_FALSE(counts.ok());
    EXPECT_EQ(counts.error().code, code) << counts.message();
    EXPECT_NE(counts.message().find(mentions), std::string::npos) << counts.message();
    for (const ContactElement& e : b.elementsA) EXPECT_EQ(e.query, 0xDEADu) << "an element was written";
    for (const ContactElement& e : b.elementsB) EXPECT_EQ(e.query, 0xDEADu) << "an element was written";
    for (const ContactRange& r : b.ranges) EXPECT_EQ(r.first, 0xDEADu) << "a range was written";
    for (const Float4& s : b.state) EXPECT_EQ(s.x, -3.0f) << "a state was written";
  }
}

inline void expectNear3(Float4 actual, float x, float y, float z, float tol, const char* what) {
  EXPECT_NEAR(actual.x, x, tol) << what;
  EXPECT_NEAR(actual.y, y, tol) << what;
  EXPECT_NEAR(actual.z, z, tol) << what;
}

// One element's expected values.
struct Expect {
  Float4 point;
  Float4 direction;
  float depth;
};

inline void expectElement(const ContactElement& e, ContactElementType type, const Expect& x, float tol,
                          const char* side) {
  EXPECT_EQ(e.type, type) << side;
  expectNear3(e.point, x.point.x, x.point.y, x.point.z, tol, side);
  expectNear3(e.direction, x.direction.x, x.direction.y, x.direction.z, tol, side);
  EXPECT_NEAR(e.point.w, x.depth, tol) << side << " depth";
}

// The rules every contact obeys: unit opposite directions, equal positive depths,
// pointB = pointA + directionA * depth.
inline void expectContactInvariants(const ContactElement& a, const ContactElement& b, float tol) {
  const float la = std::sqrt(a.direction.x * a.direction.x + a.direction.y * a.direction.y +
                             a.direction.z * a.direction.z);
  EXPECT_NEAR(la, 1.0f, 1e-5f);
  EXPECT_EQ(a.direction.x, -b.direction.x);
  EXPECT_EQ(a.direction.y, -b.direction.y);
  EXPECT_EQ(a.direction.z, -b.direction.z);
  EXPECT_EQ(a.point.w, b.point.w);
  EXPECT_GT(a.point.w, 0.0f);
  EXPECT_NEAR(a.point.x + a.direction.x * a.point.w, b.point.x, tol);
  EXPECT_NEAR(a.point.y + a.direction.y * a.point.w, b.point.y, tol);
  EXPECT_NEAR(a.point.z + a.direction.z * a.point.w, b.point.z, tol);
  EXPECT_EQ(a.query, b.query);
}

inline Float4 quatAxisAngle(float x, float y, float z, float angle) {
  const float s = std::sin(angle / 2);
  return Float4{x * s, y * s, z * s, std::cos(angle / 2)};
}

// Random geometries of every type, for the batch and swap tests.
inline Geometry randomGeometry(std::mt19937& rng, uint32_t type, uint32_t pointCount) {
  std::uniform_real_distribution<float> pos(-1.0f, 1.0f), size(0.05f, 0.8f), ang(0.0f, 6.2831853f);
  auto unit = [&] {
    for (;;) {
      const float x = pos(rng), y = pos(rng), z = pos(rng), l = std::sqrt(x * x + y * y + z * z);
      if (l > 0.1f && l <= 1.0f) return v3(x / l, y / l, z / l);
    }
  };
  const Float4 c = v3(pos(rng), pos(rng), pos(rng));
  switch (type) {
    case 0: return Geometry::sphere({c.x, c.y, c.z, size(rng)});
    case 1: return Geometry::capsule(c, v3(pos(rng), pos(rng), pos(rng)), size(rng));
    case 2: return Geometry::cylinder(c, unit(), size(rng), size(rng));
    case 3: {
      const Float4 a = unit();
      return Geometry::orientedBox(c, quatAxisAngle(a.x, a.y, a.z, ang(rng)), v3(size(rng), size(rng), size(rng)));
    }
    case 4: return Geometry::plane(c, unit(), (rng() & 1u) != 0);
    default: {
      const uint32_t first = static_cast<uint32_t>(rng() % (pointCount / 2));
      return Geometry::pointSet(first, 1 + static_cast<uint32_t>(rng() % (pointCount / 2)));
    }
  }
}

inline bool supported(uint32_t a, uint32_t b) {
  const uint32_t lo = std::min(a, b), hi = std::max(a, b);
  return !(lo == hi && (lo == 4 || lo == 5));
}

// Random supported pairs of the five primitives and (pointSets) point sets over 256 random points;
// without point sets no points are drawn: the static pairs of two primitives alone.
inline Batch randomBatch(uint32_t seed, uint32_t queryCount, bool pointSets = true) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-1.5f, 1.5f);
  Batch b;
  if (pointSets) {
    for (int i = 0; i < 256; ++i) b.points.push_back(v3(pos(rng), pos(rng), pos(rng)));
  }
  const uint32_t types = pointSets ? 6 : 5;
  for (uint32_t q = 0; q < queryCount; ++q) {
    uint32_t ta, tb;
    do {
      ta = static_cast<uint32_t>(rng() % types);
      tb = static_cast<uint32_t>(rng() % types);
    } while (!supported(ta, tb));
    const uint32_t a = b.add(randomGeometry(rng, ta, 256));
    const uint32_t c = b.add(randomGeometry(rng, tb, 256));
    b.query(a, c);
  }
  return b;
}

// Small vector helpers and a random unit vector for the resting-shape batches below.
inline Float4 crossV(Float4 a, Float4 b) {
  return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
inline Float4 scaledV(Float4 a, float s) {
  return v3(a.x * s, a.y * s, a.z * s);
}
inline Float4 plusV(Float4 a, Float4 b) {
  return v3(a.x + b.x, a.y + b.y, a.z + b.z);
}
inline Float4 normalizedV(Float4 a) {
  return scaledV(a, 1.0f / std::sqrt(a.x * a.x + a.y * a.y + a.z * a.z));
}
inline Float4 randomUnit(std::mt19937& rng) {
  std::uniform_real_distribution<float> pos(-1.0f, 1.0f);
  for (;;) {
    const float x = pos(rng), y = pos(rng), z = pos(rng), l = std::sqrt(x * x + y * y + z * z);
    if (l > 0.1f && l <= 1.0f) return v3(x / l, y / l, z / l);
  }
}

// Query (i, j) or (j, i), by a coin of rng.
inline void queryEitherWay(Batch& b, uint32_t i, uint32_t j, std::mt19937& rng) {
  if ((rng() & 1u) != 0u) {
    b.query(i, j);
  } else {
    b.query(j, i);
  }
}

// Cylinders resting on planes (geomCylinderPlanePoint's manifolds): each query a random plane and a
// cylinder standing on a cap or lying on its side, exactly or tilted up to 3 degrees (past
// kGeomCylinderFlatSine's 2), its lowest point up to 0.2 below the plane or 0.05 above it; some with
// radius or half height 0, some planes two-sided, the order random.
inline Batch restingCylinderBatch(uint32_t seed, uint32_t queryCount) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-1.0f, 1.0f), size(0.1f, 0.6f), tilt(0.0f, 0.0524f),
      depth(-0.05f, 0.2f);
  auto unit = [&] { return randomUnit(rng); };
  Batch b;
  for (uint32_t q = 0; q < queryCount; ++q) {
    const Float4 n = unit();
    const Float4 u = normalizedV(crossV(n, unit()));  // a direction along the plane
    const uint32_t kind = static_cast<uint32_t>(rng() % 8u);
    const float angle = kind < 2 ? 0.0f : tilt(rng);  // a quarter exact
    const bool lying = (kind & 1u) != 0u;
    // Standing: the axis n turned towards u by angle; lying: u turned towards n.
    Float4 axis = lying ? plusV(scaledV(u, std::cos(angle)), scaledV(n, std::sin(angle)))
                        : plusV(scaledV(n, std::cos(angle)), scaledV(u, std::sin(angle)));
    if ((rng() & 1u) != 0u) axis = scaledV(axis, -1.0f);
    const float r = kind == 2 ? 0.0f : size(rng);
    const float h = kind == 3 ? 0.0f : size(rng);
    const Float4 origin = v3(pos(rng), pos(rng), pos(rng));
    // The centre above the plane's origin (moved along it), its lowest point `depth` below the plane.
    const float an = std::abs(axis.x * n.x + axis.y * n.y + axis.z * n.z);
    const float reach = h * an + r * std::sqrt(std::max(0.0f, 1.0f - an * an));
    const Float4 along = scaledV(crossV(n, u), pos(rng));
    const Float4 centre = plusV(plusV(origin, along), scaledV(n, reach - depth(rng)));
    const bool twoSided = rng() % 4u == 0u;
    const uint32_t cyl = b.add(Geometry::cylinder(centre, axis, r, h));
    const uint32_t plane = b.add(Geometry::plane(origin, n, twoSided));
    queryEitherWay(b, cyl, plane, rng);
  }
  return b;
}

// Capsules resting on cylinders (geomCapsuleCylinderSpan's manifolds): each query a random cylinder and
// a capsule lying on a cap (across the axis, over the disc or its edge; tilted up to 3 or 24 degrees)
// or along the wall (parallel to the axis, shorter or longer than the cylinder; exactly or tilted up
// to 3 degrees, past kGeomCylinderFlatSine's 2), its axis up to 0.2 into the radius or 0.05 away; the
// order random.
inline Batch restingCapsuleBatch(uint32_t seed, uint32_t queryCount) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-1.0f, 1.0f), size(0.2f, 0.8f), tilt(-0.0524f, 0.0524f),
      depth(-0.05f, 0.2f), radius(0.05f, 0.3f);
  auto unit = [&] { return randomUnit(rng); };
  Batch b;
  for (uint32_t q = 0; q < queryCount; ++q) {
    const Float4 axis = unit();
    const Float4 u = normalizedV(crossV(axis, unit()));  // across the axis
    const Float4 centre = v3(pos(rng), pos(rng), pos(rng));
    const float r = size(rng), h = size(rng), rc = radius(rng);
    const float angle = rng() % 4u == 0u ? 0.0f : tilt(rng);
    const float half = 0.5f * size(rng) + (rng() % 2u == 0u ? h : 0.0f);  // the capsule's half length
    Float4 mid, dir;
    if ((rng() & 1u) != 0u) {  // on a cap: across the axis, its middle over the disc or past its edge
      const float sign = (rng() & 1u) != 0u ? 1.0f : -1.0f;
      // Some steeper (a cap needs no parallel axis): one end then dips below the cap's plane.
      const float steep = rng() % 2u == 0u ? angle : 8.0f * angle;
      dir = plusV(scaledV(u, std::cos(steep)), scaledV(axis, std::sin(steep)));
      const Float4 w = crossV(axis, u);
      mid = plusV(plusV(centre, scaledV(axis, sign * (h + rc - depth(rng)))),
                  plusV(scaledV(u, r * pos(rng)), scaledV(w, r * 0.8f * pos(rng))));
    } else {  // along the wall
      dir = plusV(scaledV(axis, std::cos(angle)), scaledV(u, std::sin(angle)));
      mid = plusV(plusV(centre, scaledV(u, r + rc - depth(rng))), scaledV(axis, h * pos(rng)));
    }
    const uint32_t capsule =
        b.add(Geometry::capsule(plusV(mid, scaledV(dir, -half)), plusV(mid, scaledV(dir, half)), rc));
    const uint32_t cylinder = b.add(Geometry::cylinder(centre, axis, r, h));
    queryEitherWay(b, capsule, cylinder, rng);
  }
  return b;
}

// A unit vector from three draws in [-1, 1), the third nudged by 0.01 (so that it is never zero).
inline Float4 nudgedUnit(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const Float4 dir = v3(u(rng), u(rng), u(rng) + 0.01f);
  const float len = std::sqrt(dir.x * dir.x + dir.y * dir.y + dir.z * dir.z);
  return v3(dir.x / len, dir.y / len, dir.z / len);
}

// A turned box and a cylinder sharing a random centre, axis (nudgedUnit) and sizes (up to maxSize per
// half extent), of the kind `pick` chooses: 0 `big` times larger, 1 tiny (0.05 times), 2 centred up to
// 4 away per axis (else up to `reach`), 3 a flat box, 4 a cylinder of radius 0, 5 one of height 0.
struct TurnedShapes {
  uint32_t box, cylinder;
  Float4 centre, axis;
};
inline TurnedShapes addTurnedBoxAndCylinder(Batch& b, std::mt19937& rng, uint32_t pick, float big,
                                            float reach, float maxSize) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_real_distribution<float> size(0.0f, maxSize);
  const float scale = pick == 0 ? big : (pick == 1 ? 0.05f : 1.0f);
  const float r = pick == 2 ? 4.0f : reach;
  TurnedShapes t;
  t.centre = v3(r * u(rng), r * u(rng), r * u(rng));
  t.axis = nudgedUnit(rng);
  const Float4 ext = v3(scale * size(rng), scale * size(rng), pick == 3 ? 0.0f : scale * size(rng));
  t.box =
      b.add(Geometry::orientedBox(t.centre, quatAxisAngle(t.axis.x, t.axis.y, t.axis.z, 3.0f * u(rng)), ext));
  t.cylinder =
      b.add(Geometry::cylinder(t.centre, t.axis, pick == 4 ? 0.0f : ext.x, pick == 5 ? 0.0f : ext.y));
  return t;
}

// Boxes and cylinders on a sampled terrain (z minus a height of 0.3 sin(1.7 x) cos(1.3 y), n^3
// samples over [-2, 2]^3): `count` shapes of sizes 0.05 to 0.35, turned, resting on it or sunk into
// it (their centres within 0.25 of the surface), every 40th one 8 times larger (larger than the
// grid), every 40th (+1) above the grid; one query each, every third with the grid first; then a
// floor plane through the terrain and a tilted plane.
inline Batch terrainShapesBatch(uint32_t seed, uint32_t n, uint32_t count) {
  Batch b;
  const float h = 4.0f / static_cast<float>(n - 1);
  const auto height = [](float x, float y) { return 0.3f * std::sin(1.7f * x) * std::cos(1.3f * y); };
  const uint32_t grid =
      b.addGrid(v3(-2, -2, -2), h, n, [&](float x, float y, float z) { return z - height(x, y); });
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_real_distribution<float> size(0.05f, 0.35f);
  for (uint32_t k = 0; k < count; ++k) {
    const float x = 1.8f * u(rng), y = 1.8f * u(rng);
    const float scale = k % 40 == 0 ? 8.0f : 1.0f;                       // larger than the grid
    const float z = k % 40 == 1 ? 3.0f : height(x, y) + 0.25f * u(rng);  // outside it
    const Float4 axis = nudgedUnit(rng);
    const uint32_t shape =
        k % 2 == 0
            ? b.add(Geometry::orientedBox(v3(x, y, z), quatAxisAngle(axis.x, axis.y, axis.z, 3.0f * u(rng)),
                                          v3(scale * size(rng), scale * size(rng), scale * size(rng))))
            : b.add(Geometry::cylinder(v3(x, y, z), axis, scale * size(rng), scale * size(rng)));
    if (k % 3 == 0) {
      b.query(grid, shape);
    } else {
      b.query(shape, grid);
    }
  }
  // A floor through the terrain (z = -0.2, up) and a tilted plane, one in each order.
  b.query(b.add(Geometry::plane(v3(0, 0, -0.2f), v3(0, 0, 1), false)), grid);
  b.query(grid, b.add(Geometry::plane(v3(0.5f, 0, 0), v3(0.96f, 0.28f, 0), false)));
  return b;
}

// Cylinders resting on boxes (geomCylinderBoxPatch' manifolds): each query a randomly turned box
// and a cylinder standing on one of its faces or lying on it, exactly or tilted up to 3 degrees (past
// kGeomCylinderFlatSine's 2), its centre over the face or past its edges, its lowest point up to 0.2
// into the face or 0.05 off it; radii and half extents of 0.1 to 0.8, so that small boxes also rest
// on wide caps; one in eight boxes turned about 45 degrees so that an edge rests on the cylinder's cap
// or along its wall;
// some cylinders of radius or half height 0; the order random.
inline Batch restingCylinderBoxBatch(uint32_t seed, uint32_t queryCount) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-1.0f, 1.0f), size(0.1f, 0.8f), tilt(0.0f, 0.0524f),
      depth(-0.05f, 0.2f), angle(0.0f, 6.2831853f);
  Batch b;
  for (uint32_t q = 0; q < queryCount; ++q) {
    const Float4 turn = randomUnit(rng);
    const Float4 rotation = quatAxisAngle(turn.x, turn.y, turn.z, angle(rng));
    const Float4 e = v3(size(rng), size(rng), size(rng));
    const Float4 boxCentre = v3(pos(rng), pos(rng), pos(rng));
    // In the box's frame: the face's axis k and side, a direction u along the face.
    const uint32_t k = static_cast<uint32_t>(rng() % 3u);
    const float side = (rng() & 1u) != 0u ? 1.0f : -1.0f;
    const float ek = k == 0 ? e.x : (k == 1 ? e.y : e.z);
    const Float4 n = v3(k == 0 ? side : 0.0f, k == 1 ? side : 0.0f, k == 2 ? side : 0.0f);
    const Float4 u = normalizedV(crossV(n, randomUnit(rng)));
    const uint32_t kind = static_cast<uint32_t>(rng() % 8u);
    const float lean = kind < 2 ? 0.0f : tilt(rng);  // a quarter exact
    const bool lying = (kind & 1u) != 0u;
    Float4 axis = lying ? plusV(scaledV(u, std::cos(lean)), scaledV(n, std::sin(lean)))
                        : plusV(scaledV(n, std::cos(lean)), scaledV(u, std::sin(lean)));
    if ((rng() & 1u) != 0u) axis = scaledV(axis, -1.0f);
    const float r = kind == 2 ? 0.0f : size(rng);
    const float h = kind == 3 ? 0.0f : size(rng);
    const float an = std::abs(axis.x * n.x + axis.y * n.y + axis.z * n.z);
    const float reach = h * an + r * std::sqrt(std::max(0.0f, 1.0f - an * an));
    // Over the face (up to 1.2 times its half extents from its centre), the lowest point at depth.
    const Float4 over = v3(k == 0 ? 0.0f : 1.2f * e.x * pos(rng), k == 1 ? 0.0f : 1.2f * e.y * pos(rng),
                           k == 2 ? 0.0f : 1.2f * e.z * pos(rng));
    Float4 local = plusV(over, scaledV(n, ek + reach - depth(rng)));
    Float4 turned = rotation;
    if (rng() % 8u == 0u) {
      // A box edge on the cylinder's cap instead: the box turned 45 degrees (and up to 3 more) about
      // its axis u' across the face's normal, the cylinder standing under that edge.
      const uint32_t across = (k + 1u) % 3u;
      const Float4 ua = v3(across == 0 ? 1.0f : 0.0f, across == 1 ? 1.0f : 0.0f, across == 2 ? 1.0f : 0.0f);
      const Float4 spin = quatAxisAngle(ua.x, ua.y, ua.z, 0.7853982f + 2.0f * (tilt(rng) - 0.0262f));
      // turned = rotation * spin (the spin in the box's frame).
      turned = v3(rotation.w * spin.x + rotation.x * spin.w + rotation.y * spin.z - rotation.z * spin.y,
                  rotation.w * spin.y - rotation.x * spin.z + rotation.y * spin.w + rotation.z * spin.x,
                  rotation.w * spin.z + rotation.x * spin.y - rotation.y * spin.x + rotation.z * spin.w);
      turned.w = rotation.w * spin.w - rotation.x * spin.x - rotation.y * spin.y - rotation.z * spin.z;
      // The edge's height over the box's centre: ek and the third half extent turned 45 degrees.
      const uint32_t third = (k + 2u) % 3u;
      const float e3 = third == 0 ? e.x : (third == 1 ? e.y : e.z);
      float lift = reach;
      Float4 under = over;
      if (lying) {  // along the edge instead (its wall under it): the axis ua leaning towards n
        axis = plusV(scaledV(ua, std::cos(lean)), scaledV(n, std::sin(lean)));
        lift = h * std::abs(std::sin(lean)) + r * std::cos(lean);
        // Under the edge: the lowest corner of the turned cross-section, (ek - e3) / sqrt(2) along the
        // third axis (the spin's sign: +45 degrees about ua takes n towards the third axis' negative).
        under = v3(0, 0, 0);
        const float shift = (e3 - ek) * 0.70710678f;
        under = v3(third == 0 ? shift : 0.0f, third == 1 ? shift : 0.0f, third == 2 ? shift : 0.0f);
      }
      local = plusV(under, scaledV(n, (ek + e3) * 0.70710678f + lift - depth(rng)));
    }
    // To the world: v + 2 w (q.xyz x v) + 2 q.xyz x (q.xyz x v).
    auto rotate = [&](Float4 v) {
      const Float4 t = scaledV(crossV(rotation, v), 2.0f);
      return plusV(plusV(v, scaledV(t, rotation.w)), crossV(rotation, t));
    };
    const uint32_t cyl =
        b.add(Geometry::cylinder(plusV(boxCentre, rotate(local)), normalizedV(rotate(axis)), r, h));
    const uint32_t box = b.add(Geometry::orientedBox(boxCentre, turned, e));
    queryEitherWay(b, cyl, box, rng);
  }
  return b;
}

// Cylinders resting on cylinders (geomCylinderCylinderPatch' manifolds): each query a random
// cylinder and a second one stacked on its cap (axes parallel, offset across up to the sum of the
// radii), side by side (parallel, lengths overlapping in part), lying across its cap or standing on
// its wall; exactly or tilted up to 3 degrees (past kGeomCylinderFlatSine's 2); up to 0.2 deep or
// 0.05 apart; radii and half heights of 0.1 to 0.8 (equal radii in some stacks); the order random.
inline Batch restingCylinderPairBatch(uint32_t seed, uint32_t queryCount) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-1.0f, 1.0f), size(0.1f, 0.8f), tilt(0.0f, 0.0524f),
      depth(-0.05f, 0.2f), unitPos(0.0f, 1.0f);
  Batch b;
  for (uint32_t q = 0; q < queryCount; ++q) {
    const Float4 axis = randomUnit(rng);
    const Float4 u = normalizedV(crossV(axis, randomUnit(rng)));  // across the axis
    const Float4 w = crossV(axis, u);
    const Float4 centre = v3(pos(rng), pos(rng), pos(rng));
    const float r = size(rng), h = size(rng);
    const uint32_t kind = static_cast<uint32_t>(rng() % 4u);
    const float lean = rng() % 4u == 0u ? 0.0f : tilt(rng);
    float r2 = (kind == 0 && rng() % 3u == 0u) ? r : size(rng);
    const float h2 = size(rng);
    Float4 axis2, centre2;
    if (kind == 0) {  // stacked on the +axis cap, offset across
      axis2 = plusV(scaledV(axis, std::cos(lean)), scaledV(u, std::sin(lean)));
      const Float4 across = scaledV(u, (r + r2) * unitPos(rng));
      centre2 = plusV(plusV(centre, across), scaledV(axis, h + h2 - depth(rng)));
    } else if (kind == 1) {  // side by side, along the axis by up to h + h2
      axis2 = plusV(scaledV(axis, std::cos(lean)), scaledV(w, std::sin(lean)));
      centre2 = plusV(plusV(centre, scaledV(u, r + r2 - depth(rng))), scaledV(axis, (h + h2) * pos(rng)));
    } else if (kind == 2) {  // lying across the +axis cap
      axis2 = plusV(scaledV(u, std::cos(lean)), scaledV(axis, std::sin(lean)));
      centre2 = plusV(plusV(centre, scaledV(w, r * pos(rng))), scaledV(axis, h + r2 - depth(rng)));
      centre2 = plusV(centre2, scaledV(u, r * pos(rng)));
    } else {  // standing on the wall (its axis across ours)
      axis2 = plusV(scaledV(u, std::cos(lean)), scaledV(w, std::sin(lean)));
      centre2 = plusV(plusV(centre, scaledV(u, r + h2 - depth(rng))),
                      plusV(scaledV(axis, h * pos(rng)), scaledV(w, r2 * pos(rng))));
    }
    if ((rng() & 1u) != 0u) axis2 = scaledV(axis2, -1.0f);
    const uint32_t first = b.add(Geometry::cylinder(centre, axis, r, h));
    const uint32_t second = b.add(Geometry::cylinder(centre2, normalizedV(axis2), r2, h2));
    queryEitherWay(b, first, second, rng);
  }
  return b;
}

// A box over `points` points (all inside it): one query of `points` slots, for the record-shape tests
// beside randomBatch's one and 10k queries.
inline Batch boxOverPointCloud(uint32_t points) {
  Batch cloud;
  cloud.points.assign(points, v3(0.25f, 0.5f, 0.0f));
  const uint32_t set = cloud.add(Geometry::pointSet(0, points));
  cloud.query(cloud.add(Geometry::orientedBox(v3(0, 0, 0), identityQuat(), v3(1, 1, 1))), set);
  return cloud;
}

// The CPU backends; kCpuSimd runs the scalar code for now but is part of the API.
inline const Backend kCpuBackends[] = {Backend::kCpuScalar, Backend::kCpuSimd};

}  // namespace vkc::test::geometry
