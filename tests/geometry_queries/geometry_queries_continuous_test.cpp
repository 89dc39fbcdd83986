// The continuous method (GeometryMethod::kContinuous): fast points through thin walls (a sampled
// field thinner than its grid spacing, a tilted sampled slab, thin boxes, a plane) are never missed
// against a brute-force fine sampling of the same field; the persistent contact; the static fallback;
// the swap rule; both CPU backends bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "geometry_queries/geometry_queries_test_support.h"

namespace vkc::test::geometry {
namespace {

float dot3(Float4 a, Float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
Float4 lerp3(Float4 a, Float4 b, float t) {
  return v3(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t);
}

// The test's own trilinear interpolation of an n^3 grid (origin o, spacing h), clamped to the grid
// (the points of these tests stay inside it).
struct RefGrid {
  Float4 o;
  float h;
  uint32_t n;
  std::vector<float> v;
  float at(uint32_t i, uint32_t j, uint32_t k) const { return v[i + n * (j + n * k)]; }
  float operator()(Float4 p) const {
    float c[3] = {(p.x - o.x) / h, (p.y - o.y) / h, (p.z - o.z) / h};
    uint32_t i[3];
    double f[3];
    for (int k = 0; k < 3; ++k) {
      c[k] = std::clamp(c[k], 0.0f, static_cast<float>(n - 1));
      i[k] = std::min(static_cast<uint32_t>(c[k]), n - 2);
      f[k] = static_cast<double>(c[k] - static_cast<float>(i[k]));
    }
    double sum = 0.0;
    for (int corner = 0; corner < 8; ++corner) {
      const int dx = corner & 1, dy = (corner >> 1) & 1, dz = (corner >> 2) & 1;
      const double w = (dx ? f[0] : 1.0 - f[0]) * (dy ? f[1] : 1.0 - f[1]) * (dz ? f[2] : 1.0 - f[2]);
      sum += w * static_cast<double>(at(i[0] + dx, i[1] + dy, i[2] + dz));
    }
    return static_cast<float>(sum);
  }
};

// The first fine sample (of `steps`) of x0 -> x1 where f < 0: its parameter, or -1.
template <class F>
float firstNegative(const F& f, Float4 x0, Float4 x1, int steps) {
  for (int s = 1; s <= steps; ++s) {
    const float t = static_cast<float>(s) / static_cast<float>(steps);
    if (f(lerp3(x0, x1, t)) < 0.0f) return t;
  }
  return -1.0f;
}

// Runs `b` (one continuous query 0: points vs geometry) and checks every segment that starts outside
// the reference `field` and enters it on a fine sampling gets a contact whose depth is that of the
// entry's tangent plane (segments that start inside are the static fallback's).
// kCpuSimd must then give the same contacts bit for bit.
template <class F>
void expectNoMisses(Batch& b, const F& field, int steps, int* entered, int* contacts) {
  {
    auto simd = b.run(Backend::kCpuSimd, b.points.size());
    ASSERT_TRUE(simd.ok()) << simd.message();
    const std::vector<ContactElement> a = b.elementsA, e = b.elementsB;
    std::fill(b.state.begin(), b.state.end(), Float4{0, 0, 0, 0});
    auto counts = b.run(Backend::kCpuScalar, b.points.size());
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(counts->contacts, simd->contacts);
    for (uint32_t c = 0; c < counts->contacts; ++c) {
      ASSERT_TRUE(bitwiseEqual(a[c], b.elementsA[c]) && bitwiseEqual(e[c], b.elementsB[c])) << c;
    }
    std::vector<int> contactOf(b.points.size(), -1);
    for (uint32_t c = 0; c < counts->contacts; ++c) {
      const ContactElement& pe = b.elementsA[c];
      ASSERT_EQ(pe.type, ContactElementType::kPointIndexDirection);
      expectContactInvariants(pe, b.elementsB[c], 1e-4f);
      contactOf[pe.index] = static_cast<int>(c);
    }
    *entered = 0;
    *contacts = static_cast<int>(counts->contacts);
    for (size_t i = 0; i < b.points.size(); ++i) {
      if (field(b.previousPoints[i]) < 0.0f) continue;
      const float t = firstNegative(field, b.previousPoints[i], b.points[i], steps);
      if (t < 0.0f) continue;
      ++*entered;
      ASSERT_GE(contactOf[i], 0) << "point " << i << " entered at t = " << t << " and was missed";
      // The entry lies within one fine step before t: the depth is that of its tangent plane.
      const ContactElement& pe = b.elementsA[contactOf[i]];
      const Float4 entry = lerp3(b.previousPoints[i], b.points[i], t);
      const Float4 before = lerp3(b.previousPoints[i], b.points[i], t - 1.0f / static_cast<float>(steps));
      const float d0 = dot3(v3(entry.x - b.points[i].x, entry.y - b.points[i].y, entry.z - b.points[i].z), pe.direction);
      const float d1 =
          dot3(v3(before.x - b.points[i].x, before.y - b.points[i].y, before.z - b.points[i].z), pe.direction);
      EXPECT_GE(pe.point.w, std::min(d0, d1) - 1e-4f) << "point " << i;
      EXPECT_LE(pe.point.w, std::max(d0, d1) + 1e-4f) << "point " << i;
    }
  }
}

// Fast points crossing x = 0 (from x < -0.3 to x > 0.3, length about 1 to 2.5) in [-0.9, 0.9]^3.
void addCrossingPoints(Batch& b, uint32_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.9f, 0.9f);
  std::uniform_real_distribution<float> side(0.3f, 0.9f);
  std::vector<Float4> prev, cur;
  for (uint32_t i = 0; i < count; ++i) {
    prev.push_back(v3(-side(rng), u(rng), u(rng)));
    cur.push_back(v3(side(rng), u(rng), u(rng)));
  }
  b.addPoints(cur);
  b.previousPoints = prev;
}

// A point set of `count` points at random in [-1, 1]^3, their previous positions in [-1.4, 1.4]^3.
uint32_t addRandomMotion(Batch& b, uint32_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Float4> cur;
  for (uint32_t i = 0; i < count; ++i) {
    cur.push_back(v3(u(rng), u(rng), u(rng)));
    b.previousPoints.push_back(v3(u(rng) * 1.4f, u(rng) * 1.4f, u(rng) * 1.4f));
  }
  return b.addPoints(cur);
}

TEST(GeometryQueriesContinuous, WallThinnerThanTheGridSpacingNeverMissesFastPoints) {
  // |x| - 0.01 sampled every 0.05: the interpolated wall is 0.02 thick, points move 1 to 2.5.
  Batch b;
  addCrossingPoints(b, 4000, 5);
  const auto wall = [](float x, float, float) { return std::abs(x) - 0.01f; };
  const uint32_t grid = b.addGrid(v3(-1, -1, -1), 0.05f, 41, wall);
  b.continuous(0, grid, 0);
  RefGrid ref{v3(-1, -1, -1), 0.05f, 41, b.gridSamples};
  int entered = 0, contacts = 0;
  expectNoMisses(b, ref, 20000, &entered, &contacts);
  EXPECT_EQ(entered, 4000);  // every segment crosses x = 0
  EXPECT_EQ(contacts, 4000);
  // The entry's normal is -x (the near face), the projection lands on x = -0.01.
  for (int i = 0; i < contacts; ++i) {
    expectNear3(b.elementsA[i].direction, -1, 0, 0, 1e-5f, "normal");
    EXPECT_NEAR(b.elementsB[i].point.x, -0.01f, 1e-5f);
  }
}

TEST(GeometryQueriesContinuous, TiltedSampledSlabNeverMissesFastPoints) {
  const float n[3] = {0.8f, 0.36f, 0.48f};
  const auto slab = [n](float x, float y, float z) { return std::abs(n[0] * x + n[1] * y + n[2] * z) - 0.03f; };
  Batch b;
  addCrossingPoints(b, 4000, 9);
  const uint32_t grid = b.addGrid(v3(-1, -1, -1), 0.05f, 41, slab);
  b.continuous(0, grid, 0);
  RefGrid ref{v3(-1, -1, -1), 0.05f, 41, b.gridSamples};
  int entered = 0, contacts = 0;
  expectNoMisses(b, ref, 20000, &entered, &contacts);
  EXPECT_GT(entered, 3000);
  std::printf("tilted slab: %d of 4000 segments enter (fine sampling), %d contacts\n", entered, contacts);
}

// The exact signed distance of a box (centre c, axes = the rows of r, half extents e).
struct RefBox {
  Float4 c;
  Float4 r[3];
  float e[3];
  float operator()(Float4 p) const {
    const Float4 d = v3(p.x - c.x, p.y - c.y, p.z - c.z);
    float q[3];
    double out = 0.0;
    for (int k = 0; k < 3; ++k) {
      q[k] = std::abs(dot3(d, r[k])) - e[k];
      out += static_cast<double>(std::max(q[k], 0.0f)) * static_cast<double>(std::max(q[k], 0.0f));
    }
    return static_cast<float>(std::sqrt(out)) + std::min(std::max(q[0], std::max(q[1], q[2])), 0.0f);
  }
};

TEST(GeometryQueriesContinuous, ThinBoxesNeverMissFastPoints) {
  // A box 0.004 thick across the points' paths, rotated about z by 30 degrees, and one axis-aligned.
  const float s = 0.25881905f, c = 0.96592583f;  // sin, cos of 15 degrees: quaternion (0, 0, s, c)
  const RefBox boxes[2] = {
      {v3(0, 0, 0), {v3(c * c - s * s, 2 * s * c, 0), v3(-2 * s * c, c * c - s * s, 0), v3(0, 0, 1)}, {0.002f, 2, 2}},
      {v3(0.1f, 0, 0), {v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1)}, {0.002f, 0.5f, 0.5f}},
  };
  const Float4 quats[2] = {Float4{0, 0, s, c}, identityQuat()};
  for (int k = 0; k < 2; ++k) {
    Batch b;
    addCrossingPoints(b, 4000, 21 + k);
    const uint32_t box = b.add(Geometry::orientedBox(boxes[k].c, quats[k], v3(boxes[k].e[0], boxes[k].e[1], boxes[k].e[2])));
    b.continuous(0, box, 0);
    int entered = 0, contacts = 0;
    expectNoMisses(b, boxes[k], 20000, &entered, &contacts);
    EXPECT_GT(entered, k == 0 ? 3500 : 1000) << "box " << k;
    std::printf("thin box %d: %d of 4000 segments enter, %d contacts\n", k, entered, contacts);
  }
}

// Reference signed distances of a sphere, a capsule and a cylinder (the box: RefBox).
struct RefSphere {
  Float4 c;
  float r;
  float operator()(Float4 p) const {
    const Float4 d = v3(p.x - c.x, p.y - c.y, p.z - c.z);
    return std::sqrt(dot3(d, d)) - r;
  }
};
struct RefCapsule {
  Float4 p0, p1;
  float r;
  float operator()(Float4 p) const {
    const Float4 e = v3(p1.x - p0.x, p1.y - p0.y, p1.z - p0.z);
    const Float4 d = v3(p.x - p0.x, p.y - p0.y, p.z - p0.z);
    const float t = std::clamp(dot3(d, e) / dot3(e, e), 0.0f, 1.0f);
    const Float4 q = v3(d.x - e.x * t, d.y - e.y * t, d.z - e.z * t);
    return std::sqrt(dot3(q, q)) - r;
  }
};
struct RefCylinder {
  Float4 c, axis;  // axis: unit
  float r, h;
  float operator()(Float4 p) const {
    const Float4 d = v3(p.x - c.x, p.y - c.y, p.z - c.z);
    const float y = dot3(d, axis);
    const Float4 radial = v3(d.x - axis.x * y, d.y - axis.y * y, d.z - axis.z * y);
    const float dr = std::sqrt(dot3(radial, radial)) - r;
    const float dy = std::abs(y) - h;
    const float outR = std::max(dr, 0.0f), outY = std::max(dy, 0.0f);
    return std::sqrt(outR * outR + outY * outY) + std::min(std::max(dr, dy), 0.0f);
  }
};

// Segments that graze `field`'s surface: the middle moved to within [-0.03, 0.05] of it (one step
// along the finite-difference gradient), the segment across the gradient, 0.1 to 1.6 long. Such
// segments are where the trace's 1-Lipschitz skip (the ends' distances summing to more than the
// length) comes closest to a segment that enters.
template <class F>
void addGrazingSegments(Batch& b, const F& field, uint32_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.2f, 1.2f);
  std::uniform_real_distribution<float> offset(-0.03f, 0.05f);
  std::uniform_real_distribution<float> half(0.05f, 0.8f);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<Float4> prev, cur;
  while (cur.size() < count) {
    Float4 m = v3(u(rng), u(rng), u(rng));
    const float eps = 1e-3f;
    Float4 g = v3(field(v3(m.x + eps, m.y, m.z)) - field(v3(m.x - eps, m.y, m.z)),
                  field(v3(m.x, m.y + eps, m.z)) - field(v3(m.x, m.y - eps, m.z)),
                  field(v3(m.x, m.y, m.z + eps)) - field(v3(m.x, m.y, m.z - eps)));
    const float len = std::sqrt(dot3(g, g));
    if (!(len > 1e-6f)) continue;
    g = v3(g.x / len, g.y / len, g.z / len);
    const float step = field(m) - offset(rng);
    m = v3(m.x - g.x * step, m.y - g.y * step, m.z - g.z * step);
    Float4 t = v3(n(rng), n(rng), n(rng));
    const float along = dot3(t, g);
    t = v3(t.x - g.x * along, t.y - g.y * along, t.z - g.z * along);
    const float tl = std::sqrt(dot3(t, t));
    if (!(tl > 1e-3f)) continue;
    const float h = half(rng) / tl;
    prev.push_back(v3(m.x - t.x * h, m.y - t.y * h, m.z - t.z * h));
    cur.push_back(v3(m.x + t.x * h, m.y + t.y * h, m.z + t.z * h));
  }
  b.addPoints(cur);
  b.previousPoints = prev;
}

TEST(GeometryQueriesContinuous, GrazingSegmentsPastEveryPrimitiveNeverMissAnEntry) {
  const float s = 0.38268343f, c = 0.92387953f;  // quaternion (0, s, 0, c): 45 degrees about y
  const RefBox box{v3(0.1f, 0, 0),
                   {v3(c * c - s * s, 0, -2 * s * c), v3(0, 1, 0), v3(2 * s * c, 0, c * c - s * s)},
                   {0.7f, 0.4f, 0.25f}};
  const RefSphere sphere{v3(0.1f, -0.1f, 0), 0.6f};
  const RefCapsule capsule{v3(-0.4f, -0.2f, 0.1f), v3(0.5f, 0.3f, -0.1f), 0.3f};
  const float inv = 1.0f / std::sqrt(0.36f + 0.64f);
  const RefCylinder cylinder{v3(0, 0.1f, 0), v3(0, 0.6f * inv, 0.8f * inv), 0.5f, 0.4f};
  const Geometry geoms[4] = {
      Geometry::sphere(v3(sphere.c.x, sphere.c.y, sphere.c.z)),
      Geometry::capsule(capsule.p0, capsule.p1, capsule.r),
      Geometry::cylinder(cylinder.c, cylinder.axis, cylinder.r, cylinder.h),
      Geometry::orientedBox(box.c, Float4{0, s, 0, c}, v3(box.e[0], box.e[1], box.e[2])),
  };
  for (int k = 0; k < 4; ++k) {
    Batch b;
    Geometry g = geoms[k];
    if (k == 0) g.p0.w = sphere.r;
    const auto field = [&](Float4 p) {
      switch (k) {
        case 0:
          return sphere(p);
        case 1:
          return capsule(p);
        case 2:
          return cylinder(p);
        default:
          return box(p);
      }
    };
    addGrazingSegments(b, field, 3000, 90 + static_cast<uint32_t>(k));
    b.continuous(0, b.add(g), 0);
    int entered = 0, contacts = 0;
    expectNoMisses(b, field, 4000, &entered, &contacts);
    EXPECT_GT(entered, 500) << "primitive " << k;
    std::printf("grazing primitive %d: %d of 3000 segments enter, %d contacts\n", k, entered, contacts);
  }
}

TEST(GeometryQueriesContinuous, PlaneCatchesEveryCrossingFromAbove) {
  Batch b;
  addCrossingPoints(b, 2000, 33);
  // One-sided plane x = 0, outside towards -x: every point ends 0.3 to 0.9 below it.
  const uint32_t plane = b.add(Geometry::plane(v3(0, 0, 0), v3(-1, 0, 0), false));
  b.continuous(0, plane, 0);
  for (Backend backend : kCpuBackends) {
    auto counts = b.run(backend, 2000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(counts->contacts, 2000u);
    for (uint32_t i = 0; i < 2000; ++i) {
      EXPECT_NEAR(b.elementsA[i].point.w, b.points[i].x, 1e-5f);
      expectNear3(b.elementsA[i].direction, -1, 0, 0, 0.0f, "normal");
    }
  }
  // Reversed motion (below to above): no contact, states back to outside.
  std::swap(b.points, b.previousPoints);
  auto counts = b.run(Backend::kCpuScalar, 2000);
  ASSERT_TRUE(counts.ok()) << counts.message();
  EXPECT_EQ(counts->contacts, 0u);
  for (uint32_t i = 0; i < 2000; ++i) EXPECT_EQ(b.state[i].w, 0.0f);
}

TEST(GeometryQueriesContinuous, PersistentContactReprojectsFromTheLastOutsidePoint) {
  // A sampled unit sphere. Call 1: the point enters; call 2: it goes deeper; call 3: it leaves.
  Batch b;
  const auto sphere = [](float x, float y, float z) { return std::sqrt(x * x + y * y + z * z) - 1.0f; };
  const uint32_t grid = b.addGrid(v3(-1.5f, -1.5f, -1.5f), 0.05f, 61, sphere);
  const uint32_t set = b.addPoints({v3(0.3f, 0.8f, 0)});
  b.previousPoints = {v3(0, 1.3f, 0)};
  b.continuous(set, grid, 0);
  auto c1 = b.run(Backend::kCpuScalar, 4);
  ASSERT_TRUE(c1.ok()) << c1.message();
  ASSERT_EQ(c1->contacts, 1u);
  const Float4 saved = b.state[0];
  EXPECT_EQ(saved.w, 1.0f);
  const float r = std::sqrt(dot3(saved, saved));
  EXPECT_NEAR(r, 1.0f, 2e-3f);  // on the sampled sphere's surface, outside end of the root bracket
  // The entry lies on the segment.
  const float t = (1.3f - saved.y) / 0.5f;
  expectNear3(saved, 0.3f * t, 1.3f - 0.5f * t, 0.0f, 1e-4f, "saved point on the segment");

  // Call 2: deeper. The contact is re-projected from the saved point: normal at the sphere where the
  // segment saved -> current enters (near `saved`), not the static normal at the current position.
  const Float4 cur2 = v3(0.2f, 0.3f, 0);
  b.previousPoints = b.points;
  b.points = {cur2};
  const std::vector<Float4> stateBefore = b.state;
  auto c2 = b.run(Backend::kCpuScalar, 4);
  ASSERT_TRUE(c2.ok()) << c2.message();
  ASSERT_EQ(c2->contacts, 1u);
  const Float4 nSaved = v3(saved.x / r, saved.y / r, saved.z / r);
  expectNear3(b.elementsA[0].direction, nSaved.x, nSaved.y, nSaved.z, 0.08f, "persistent normal");
  const float expectedDepth = dot3(v3(saved.x - cur2.x, saved.y - cur2.y, saved.z - cur2.z), b.elementsA[0].direction);
  EXPECT_NEAR(b.elementsA[0].point.w, expectedDepth, 2e-3f);
  EXPECT_EQ(b.state[0].w, 1.0f);
  const ContactElement persistent = b.elementsA[0];

  // The same call with no saved point falls back to the static contact, bit for bit.
  b.state = {Float4{0, 0, 0, 0}};
  auto c2s = b.run(Backend::kCpuScalar, 4);
  ASSERT_TRUE(c2s.ok()) << c2s.message();
  ASSERT_EQ(c2s->contacts, 1u);
  const ContactElement fallback = b.elementsA[0];
  EXPECT_EQ(b.state[0].w, 0.0f);
  b.queries[0].method = GeometryMethod::kStatic;
  b.queries[0].state = 0;
  auto st = b.run(Backend::kCpuScalar, 4);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(bitwiseEqual(fallback, b.elementsA[0]));
  EXPECT_FALSE(bitwiseEqual(persistent, fallback));  // the persistent normal differs from the static one
  b.queries[0].method = GeometryMethod::kContinuous;

  // Call 3: the point leaves. No contact, the state forgets the saved point.
  b.state = stateBefore;
  b.previousPoints = {cur2};
  b.points = {v3(0.2f, 1.4f, 0)};
  auto c3 = b.run(Backend::kCpuScalar, 4);
  ASSERT_TRUE(c3.ok()) << c3.message();
  EXPECT_EQ(c3->contacts, 0u);
  EXPECT_EQ(b.state[0].w, 0.0f);
  expectNear3(b.state[0], 0.2f, 1.4f, 0, 0.0f, "state after leaving");
}

TEST(GeometryQueriesContinuous, SwappedInputsSwapElementsAndKeepTheSameState) {
  Batch b;
  const uint32_t set = addRandomMotion(b, 500, 4);
  const uint32_t others[] = {
      b.addGrid(v3(-1.5f, -1.5f, -1.5f), 0.1f, 31,
                [](float x, float y, float z) { return std::sqrt(x * x + y * y + z * z) - 0.7f; }),
      b.add(Geometry::sphere({0.1f, 0, 0, 0.6f})),
      b.add(Geometry::capsule(v3(-0.5f, 0, 0), v3(0.5f, 0.2f, 0), 0.4f)),
      b.add(Geometry::cylinder(v3(0, 0.1f, 0), v3(0, 0.6f, 0.8f), 0.5f, 0.4f)),
      b.add(Geometry::orientedBox(v3(0, 0, 0.1f), Float4{0.2f, 0.1f, 0, 0.9746794f}, v3(0.5f, 0.3f, 0.2f))),
      b.add(Geometry::plane(v3(0, -0.2f, 0), v3(0, 0.6f, 0.8f), false)),
  };
  uint32_t stateFirst = 0;
  for (uint32_t o : others) {
    b.continuous(set, o, stateFirst);
    b.continuous(o, set, stateFirst + 500);
    stateFirst += 1000;
  }
  for (int round = 0; round < 2; ++round) {  // the second round starts from the first's state
    auto scalar = b.run(Backend::kCpuScalar, 10000);
    ASSERT_TRUE(scalar.ok()) << scalar.message();
    expectSwappedPairs(b, 20);
    for (size_t q = 0; q < b.queries.size(); q += 2) {
      for (uint32_t k = 0; k < 500; ++k) {
        const Float4 s0 = b.state[q * 500 + k], s1 = b.state[q * 500 + 500 + k];
        EXPECT_EQ(std::memcmp(&s0, &s1, sizeof s0), 0) << "pair " << q / 2 << " state " << k;
      }
    }
    std::swap(b.points, b.previousPoints);  // the next round moves the points back
  }
}

TEST(GeometryQueriesContinuous, ScalarAndSimdAgreeBitForBitOnContactsAndState) {
  Batch b;
  const uint32_t set = addRandomMotion(b, 1000, 8);
  b.continuous(set,
               b.addGrid(v3(-1.5f, -1.5f, -1.5f), 0.1f, 31,
                         [](float x, float y, float z) { return std::abs(x + 0.3f * y) + 0.2f * z * z - 0.3f; }),
               0);
  b.continuous(b.add(Geometry::cylinder(v3(0, 0.1f, 0), v3(0, 0.6f, 0.8f), 0.5f, 0.4f)), set, 1000);
  const std::vector<Float4> start = b.state;
  auto scalar = b.run(Backend::kCpuScalar, 4000);
  ASSERT_TRUE(scalar.ok()) << scalar.message();
  const std::vector<ContactElement> a = b.elementsA, e = b.elementsB;
  const std::vector<Float4> st = b.state;
  b.state = start;
  auto simd = b.run(Backend::kCpuSimd, 4000);
  ASSERT_TRUE(simd.ok()) << simd.message();
  ASSERT_EQ(scalar->contacts, simd->contacts);
  EXPECT_GT(scalar->contacts, 100u);
  for (uint32_t i = 0; i < scalar->contacts; ++i) {
    EXPECT_TRUE(bitwiseEqual(a[i], b.elementsA[i]) && bitwiseEqual(e[i], b.elementsB[i])) << i;
  }
  EXPECT_EQ(std::memcmp(st.data(), b.state.data(), st.size() * sizeof(Float4)), 0);
}

}  // namespace
}  // namespace vkc::test::geometry

namespace vkc::test::geometry {
namespace {

TEST(GeometryQueriesContinuous, MixedBatchEqualsItsQueriesOneByOne) {
  // Static and continuous queries of implicit geometries, primitives and point sets in one batch,
  // twice (the second run continues from the first's state), against each query alone with its own
  // state.
  Batch b;
  const uint32_t set = addRandomMotion(b, 300, 12);
  const uint32_t set2 = addRandomMotion(b, 200, 13);
  const uint32_t grid = b.addGrid(v3(-1.5f, -1.5f, -1.5f), 0.1f, 31,
                                  [](float x, float y, float z) { return std::sqrt(x * x + y * y + z * z) - 0.8f; });
  const uint32_t box = b.add(Geometry::orientedBox(v3(0.2f, 0, 0), identityQuat(), v3(0.4f, 0.3f, 0.5f)));
  const uint32_t cap = b.add(Geometry::capsule(v3(-0.5f, 0.5f, 0), v3(0.5f, 0.6f, 0.1f), 0.3f));
  b.continuous(set, grid, 0);
  b.query(grid, set2);
  b.continuous(box, set2, 300);
  b.query(cap, grid);
  b.query(grid, box);
  b.continuous(set, cap, 500);
  for (int round = 0; round < 2; ++round) {
    const std::vector<Float4> stateBefore = b.state;
    auto counts = b.run(Backend::kCpuScalar, 20000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    for (size_t q = 0; q < b.queries.size(); ++q) {
      Batch one = b;
      one.queries = {b.queries[q]};
      one.state = stateBefore;
      auto c1 = one.run(Backend::kCpuSimd, 20000);
      ASSERT_TRUE(c1.ok()) << c1.message();
      ASSERT_EQ(one.ranges[0].count, b.ranges[q].count) << "query " << q;
      EXPECT_GT(b.ranges[q].count, 0u) << "query " << q << " round " << round;
      for (uint32_t i = 0; i < one.ranges[0].count; ++i) {
        ContactElement a = one.elementsA[i], e = one.elementsB[i];
        a.query = e.query = static_cast<uint32_t>(q);
        EXPECT_TRUE(bitwiseEqual(a, b.elementsA[b.ranges[q].first + i]) &&
                    bitwiseEqual(e, b.elementsB[b.ranges[q].first + i]))
            << "query " << q << " contact " << i;
      }
      if (b.queries[q].method == GeometryMethod::kContinuous) {
        const uint32_t first = b.queries[q].state;
        const uint32_t n = q == 2 ? 200u : 300u;
        EXPECT_EQ(std::memcmp(&one.state[first], &b.state[first], n * sizeof(Float4)), 0) << "query " << q;
      }
    }
    std::swap(b.points, b.previousPoints);
  }
}

}  // namespace
}  // namespace vkc::test::geometry

namespace vkc::test::geometry {
namespace {

// Static points, a fast moving sphere: the same contacts, bit for bit, as the static sphere at its
// end pose against the points moved by the opposite motion (the relative motion the kernel traces).
TEST(GeometryQueriesContinuous, MovingSphereEqualsTheRelativeMotionOfThePoints) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-0.15f, 0.15f);
  std::vector<Float4> pts;
  for (int i = 0; i < 1000; ++i) pts.push_back(v3(u(rng) * 4.0f, u(rng), u(rng)));
  const Float4 c0{-1.0f, 0.02f, 0, 0.1f}, c1{1.0f, -0.01f, 0.03f, 0.1f};
  Batch moving;
  const uint32_t set = moving.addPoints(pts);
  moving.previousPoints = pts;
  const uint32_t sphere = moving.add(Geometry::sphere(c1));
  moving.previousGeometries = {Geometry::pointSet(0, 1000), Geometry::sphere(c0)};
  moving.continuous(sphere, set, 0);
  Batch relative;
  relative.addPoints(pts);
  for (const Float4& p : pts) relative.previousPoints.push_back(v3(p.x - c0.x + c1.x, p.y - c0.y + c1.y, p.z - c0.z + c1.z));
  relative.add(Geometry::sphere(c1));
  relative.continuous(1, 0, 0);
  for (Backend backend : kCpuBackends) {
    auto cm = moving.run(backend, 1000);
    auto cr = relative.run(backend, 1000);
    ASSERT_TRUE(cm.ok()) << cm.message();
    ASSERT_TRUE(cr.ok()) << cr.message();
    ASSERT_EQ(cm->contacts, cr->contacts);
    EXPECT_GT(cm->contacts, 100u);  // the points within 0.1 of the sphere's path
    for (uint32_t i = 0; i < cm->contacts; ++i) {
      EXPECT_TRUE(bitwiseEqual(moving.elementsA[i], relative.elementsA[i]) &&
                  bitwiseEqual(moving.elementsB[i], relative.elementsB[i]))
          << i;
    }
  }
}

// A thin paddle (box 0.004 thick) turning 40 degrees about z through static points: every point its
// chord path (in the paddle's frame) enters on a fine sampling gets a contact.
TEST(GeometryQueriesContinuous, RotatingThinBoxNeverMissesStaticPoints) {
  const float a0 = -0.35f, a1 = 0.35f;  // half angles about z: quaternion (0, 0, sin, cos)
  const Float4 q0{0, 0, std::sin(a0), std::cos(a0)}, q1{0, 0, std::sin(a1), std::cos(a1)};
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> u(-0.9f, 0.9f);
  Batch b;
  std::vector<Float4> pts;
  for (int i = 0; i < 4000; ++i) pts.push_back(v3(u(rng), u(rng), u(rng) * 0.5f));
  const uint32_t set = b.addPoints(pts);
  b.previousPoints = pts;
  const Float4 half = v3(0.002f, 1.0f, 0.5f);
  const uint32_t box = b.add(Geometry::orientedBox(v3(0, 0, 0), q1, half));
  b.previousGeometries = {Geometry::pointSet(0, 4000), Geometry::orientedBox(v3(0, 0, 0), q0, half)};
  b.continuous(set, box, 0);
  // The reference: the point's start carried by the paddle's rotation (2 (a1 - a0) about z), then the
  // segment to the point against the paddle at its end pose.
  const float turn = 2.0f * (a1 - a0);
  const RefBox end{v3(0, 0, 0),
                   {v3(std::cos(2 * a1), std::sin(2 * a1), 0), v3(-std::sin(2 * a1), std::cos(2 * a1), 0), v3(0, 0, 1)},
                   {half.x, half.y, half.z}};
  Batch ref = b;
  ref.previousGeometries.clear();
  for (size_t i = 0; i < pts.size(); ++i) {
    const Float4 p = pts[i];
    ref.previousPoints[i] = v3(p.x * std::cos(turn) - p.y * std::sin(turn), p.x * std::sin(turn) + p.y * std::cos(turn), p.z);
  }
  auto counts = b.run(Backend::kCpuScalar, 4000);
  ASSERT_TRUE(counts.ok()) << counts.message();
  std::vector<int> hit(pts.size(), 0);
  for (uint32_t c = 0; c < counts->contacts; ++c) hit[b.elementsA[c].index] = 1;
  int entered = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    if (end(ref.previousPoints[i]) < 0.0f) continue;
    // Points within 1e-4 of the paddle's faces at the start are ambiguous (the carried start rounds).
    if (std::abs(end(ref.previousPoints[i])) < 1e-4f) continue;
    if (firstNegative(end, ref.previousPoints[i], pts[i], 20000) < 0.0f) continue;
    ++entered;
    EXPECT_EQ(hit[i], 1) << "point " << i << " was missed";
  }
  EXPECT_GT(entered, 1000);
  std::printf("rotating paddle: %d of 4000 static points swept, %u contacts\n", entered, counts->contacts);
}

}  // namespace
}  // namespace vkc::test::geometry
