// ImplicitGeometry (a signed distance field sampled on a grid), static method: fields sampled from
// an analytic sphere and box give the analytic contacts within the interpolation error bounds derived
// below; the implicit pairs with the primitives and with another implicit geometry; the swap rule;
// both CPU backends bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "cpu/geometry_queries.h"  // everySampleContacts
#include "geometry_queries/geometry_queries_test_support.h"
#include "scene/geometry_queries_layout.h"  // toGeomShape

namespace vkc::test::geometry {
namespace {

constexpr float kH = 0.05f;     // grid spacing
constexpr uint32_t kN = 61;     // samples per axis: the grid spans [-1.5, 1.5]^3
constexpr float kOrigin = -1.5f;
constexpr float kR = 1.0f;      // the sphere's radius

float sphereSdf(float x, float y, float z) { return std::sqrt(x * x + y * y + z * z) - kR; }

// Box of half extents (1, 0.8, 0.6) at the origin, exact signed distance.
constexpr float kE[3] = {1.0f, 0.8f, 0.6f};
float boxSdf(float x, float y, float z) {
  const float q[3] = {std::abs(x) - kE[0], std::abs(y) - kE[1], std::abs(z) - kE[2]};
  const float ox = std::max(q[0], 0.0f), oy = std::max(q[1], 0.0f), oz = std::max(q[2], 0.0f);
  return std::sqrt(ox * ox + oy * oy + oz * oz) + std::min(std::max(q[0], std::max(q[1], q[2])), 0.0f);
}

double dbl(float v) { return static_cast<double>(v); }

float len3(Float4 v) { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }

// Trilinear interpolation error of a C2 field: |f - If| <= (1/8) sum_k h^2 max|d2f/dxk^2| over the
// cell. The sphere's distance has second derivatives <= 1/r, r >= R - sqrt(3) h in cells within a cell
// of the surface: E = 3 h^2 / (8 (R - sqrt(3) h)).
const float kSphereDepthBound = 3.0f * kH * kH / (8.0f * (kR - std::sqrt(3.0f) * kH));
// The normal: central differences one spacing apart of the interpolant differ from those of f by at
// most E / h per component, and those of f from the gradient by h^2/6 max|d3f| <= h^2 / (2 r^2); a unit
// vector perturbed by a vector of length e moves by at most 2 e after normalization.
const float kSphereNormalBound =
    2.0f * std::sqrt(3.0f) *
    (kSphereDepthBound / kH + kH * kH / (2.0f * (kR - std::sqrt(3.0f) * kH) * (kR - std::sqrt(3.0f) * kH)));

TEST(GeometryQueriesImplicit, SampledSpherePointsMatchTheAnalyticContactWithinTheInterpolationBound) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Float4> pts;
  while (pts.size() < 3000) {
    Float4 d = v3(u(rng), u(rng), u(rng));
    const float l = len3(d);
    if (l < 0.1f || l > 1.0f) continue;
    const float r = kR - 2e-3f - 0.2f * std::abs(u(rng));  // inside by more than the interpolation error
    pts.push_back(v3(d.x / l * r, d.y / l * r, d.z / l * r));
  }
  float worstDepth = 0.0f, worstNormal = 0.0f;
  for (Backend backend : kCpuBackends) {
    Batch b;
    const uint32_t grid = b.addGrid(v3(kOrigin, kOrigin, kOrigin), kH, kN, sphereSdf);
    const uint32_t set = b.addPoints(pts);
    b.query(set, grid);
    auto counts = b.run(backend, pts.size());
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(counts->contacts, pts.size());
    for (size_t i = 0; i < pts.size(); ++i) {
      const ContactElement& a = b.elementsA[i];
      const ContactElement& e = b.elementsB[i];
      ASSERT_EQ(a.type, ContactElementType::kPointIndexDirection);
      ASSERT_EQ(a.index, i);
      expectContactInvariants(a, e, 1e-5f);
      const float l = len3(pts[i]);
      worstDepth = std::max(worstDepth, std::abs(a.point.w - (kR - l)));
      const float dn = std::sqrt((a.direction.x - pts[i].x / l) * (a.direction.x - pts[i].x / l) +
                                 (a.direction.y - pts[i].y / l) * (a.direction.y - pts[i].y / l) +
                                 (a.direction.z - pts[i].z / l) * (a.direction.z - pts[i].z / l));
      worstNormal = std::max(worstNormal, dn);
    }
  }
  EXPECT_LE(worstDepth, kSphereDepthBound + 1e-5f);
  EXPECT_LE(worstNormal, kSphereNormalBound);
  std::printf("sampled sphere (h = %g): depth error %.3g (bound %.3g), normal error %.3g (bound %.3g)\n", dbl(kH),
              dbl(worstDepth), dbl(kSphereDepthBound), dbl(worstNormal), dbl(kSphereNormalBound));
}

TEST(GeometryQueriesImplicit, SampledBoxIsExactOnFacesAndWithinTheLipschitzBoundEverywhere) {
  // Near a face and 3 cells from its edges the box's distance is linear in every cell the
  // interpolation and the differences touch: exact up to rounding. Everywhere, for any 1-Lipschitz
  // field, |f - If| <= sum_i w_i |p - v_i| <= sqrt(3) h / 2.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Float4> faces, anywhere;
  while (faces.size() < 1500) {
    const int axis = static_cast<int>(rng() % 3u);
    const float side = (rng() & 1u) ? 1.0f : -1.0f;
    float c[3];
    for (int k = 0; k < 3; ++k) c[k] = u(rng) * (kE[k] - 3.0f * kH);
    c[axis] = side * (kE[axis] - 0.9f * kH * std::abs(u(rng)) - 1e-3f);
    faces.push_back(v3(c[0], c[1], c[2]));
  }
  while (anywhere.size() < 1500) {
    const Float4 p = v3(u(rng) * 1.2f, u(rng) * 1.2f, u(rng) * 1.2f);
    if (boxSdf(p.x, p.y, p.z) < -std::sqrt(3.0f) * kH) anywhere.push_back(p);  // surely inside the sampled box
  }
  for (Backend backend : kCpuBackends) {
    Batch b;
    const uint32_t grid = b.addGrid(v3(kOrigin, kOrigin, kOrigin), kH, kN, boxSdf);
    const uint32_t f = b.addPoints(faces);
    const uint32_t w = b.addPoints(anywhere);
    b.query(grid, f);
    b.query(grid, w);
    auto counts = b.run(backend, 4000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(b.ranges[0].count, faces.size());
    ASSERT_EQ(b.ranges[1].count, anywhere.size());
    float worstFace = 0.0f, worstAny = 0.0f;
    for (size_t i = 0; i < faces.size(); ++i) {
      const ContactElement& pe = b.elementsB[i];  // the point set is B
      expectContactInvariants(b.elementsA[i], pe, 1e-5f);
      const Float4 p = faces[i];
      worstFace = std::max(worstFace, std::abs(pe.point.w + boxSdf(p.x, p.y, p.z)));
      // The face's normal: the axis where p is nearest its face.
      const float dist[3] = {kE[0] - std::abs(p.x), kE[1] - std::abs(p.y), kE[2] - std::abs(p.z)};
      const int k = static_cast<int>(std::min_element(dist, dist + 3) - dist);
      const float pc[3] = {p.x, p.y, p.z};
      const float n[3] = {k == 0 ? std::copysign(1.0f, pc[0]) : 0.0f, k == 1 ? std::copysign(1.0f, pc[1]) : 0.0f,
                          k == 2 ? std::copysign(1.0f, pc[2]) : 0.0f};
      expectNear3(pe.direction, n[0], n[1], n[2], 1e-4f, "face normal");
    }
    for (size_t i = 0; i < anywhere.size(); ++i) {
      const ContactElement& pe = b.elementsB[faces.size() + i];
      const Float4 p = anywhere[i];
      worstAny = std::max(worstAny, std::abs(pe.point.w + boxSdf(p.x, p.y, p.z)));
    }
    EXPECT_LE(worstFace, 2e-5f);
    EXPECT_LE(worstAny, std::sqrt(3.0f) * kH / 2.0f + 1e-5f);
    std::printf("sampled box: face depth error %.3g, anywhere %.3g (bound %.3g)\n", dbl(worstFace), dbl(worstAny),
                dbl(std::sqrt(3.0f) * kH / 2.0f));
  }
}

TEST(GeometryQueriesImplicit, PointsOutsideTheGridUseTheDistanceToItsBox) {
  Batch b;
  const uint32_t grid = b.addGrid(v3(kOrigin, kOrigin, kOrigin), kH, kN, sphereSdf);
  const uint32_t set = b.addPoints({v3(5, 0, 0), v3(0, -0.5f, 0)});
  b.query(set, grid);
  auto counts = b.run(Backend::kCpuScalar);
  ASSERT_TRUE(counts.ok()) << counts.message();
  ASSERT_EQ(counts->contacts, 1u);  // the far point is outside (0.5 at the box's face + 3.5)
  EXPECT_EQ(b.elementsA[0].index, 1u);
  expectElement(b.elementsA[0], ContactElementType::kPointIndexDirection, {v3(0, -0.5f, 0), v3(0, -1, 0), 0.5f},
                kSphereDepthBound + 1e-5f, "point");
}

TEST(GeometryQueriesImplicit, SphereAndCapsuleCollideAsTheBallAtTheirDeepestCentre) {
  for (Backend backend : kCpuBackends) {
    Batch b;
    const uint32_t grid = b.addGrid(v3(kOrigin, kOrigin, kOrigin), kH, kN, sphereSdf);
    const uint32_t s = b.add(Geometry::sphere({0, 1.2f, 0, 0.3f}));     // 0.1 deep
    const uint32_t far = b.add(Geometry::sphere({0, 1.4f, 0, 0.3f}));   // 0.1 apart
    const uint32_t cap = b.add(Geometry::capsule(v3(-1, 1.15f, 0), v3(1, 1.15f, 0), 0.2f));  // 0.05 deep at x = 0
    b.query(s, grid);
    b.query(far, grid);
    b.query(grid, cap);
    auto counts = b.run(backend);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_EQ(b.ranges[0].count, 1u);
    ASSERT_EQ(b.ranges[1].count, 0u);
    ASSERT_EQ(b.ranges[2].count, 1u);
    const float tol = kSphereDepthBound + 1e-4f;
    expectElement(b.elementsA[0], ContactElementType::kPointDirection, {v3(0, 0.9f, 0), v3(0, 1, 0), 0.1f}, tol,
                  "sphere");
    expectContactInvariants(b.elementsA[0], b.elementsB[0], 1e-5f);
    // The capsule's element is B of the third query; its deepest axis point is x = 0 (found by the
    // sampled search to within the golden section's step).
    const ContactElement& ce = b.elementsB[b.ranges[2].first];
    EXPECT_NEAR(ce.point.w, 0.05f, tol);
    expectNear3(ce.point, 0.0f, 0.95f, 0.0f, 2e-3f, "capsule point");
    expectNear3(ce.direction, 0.0f, 1.0f, 0.0f, kSphereNormalBound, "capsule direction");
  }
}

TEST(GeometryQueriesImplicit, SurfacePointsAgainstPlaneBoxCylinderAndAnotherField) {
  for (Backend backend : kCpuBackends) {
    Batch b;
    const uint32_t grid = b.addGrid(v3(kOrigin, kOrigin, kOrigin), kH, kN, sphereSdf);
    const uint32_t plane = b.add(Geometry::plane(v3(0, -0.9f, 0), v3(0, 1, 0), false));
    const uint32_t box = b.add(Geometry::orientedBox(v3(0, -1.4f, 0), identityQuat(), v3(2, 0.5f, 2)));
    const uint32_t cyl = b.add(Geometry::cylinder(v3(0, -1.4f, 0), v3(0, 1, 0), 2.0f, 0.5f));
    // A second sampled sphere, centred at (1.8, 0, 0): the two overlap by 0.2 along x.
    const uint32_t grid2 = b.addGrid(v3(kOrigin + 1.8f, kOrigin, kOrigin), kH, kN,
                                     [](float x, float y, float z) { return sphereSdf(x - 1.8f, y, z); });
    b.query(grid, plane);
    b.query(box, grid);
    b.query(grid, cyl);
    b.query(grid, grid2);
    auto counts = b.run(backend, 20000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    ASSERT_FALSE(counts->overflow);
    for (uint32_t q = 0; q < 4; ++q) {
      const ContactRange r = b.ranges[q];
      ASSERT_GT(r.count, 0u) << "query " << q;
      float deepest = 0.0f;
      for (uint32_t i = r.first; i < r.first + r.count; ++i) {
        const ContactElement& a = b.elementsA[i];
        const ContactElement& e = b.elementsB[i];
        expectContactInvariants(a, e, 1e-5f);
        deepest = std::max(deepest, a.point.w);
        if (q < 3) {
          // The field's element is a surface point of the sampled sphere pushed up (+y) out of the
          // flat top at y = -0.9; the other's is its projection on that top.
          const ContactElement& fe = q == 1 ? e : a;
          const ContactElement& oe = q == 1 ? a : e;
          EXPECT_NEAR(len3(fe.point), kR, 2.0f * kSphereDepthBound + 1e-4f);
          expectNear3(fe.direction, 0, 1, 0, 1e-6f, "field direction");
          EXPECT_NEAR(oe.point.y, -0.9f, 1e-5f);
        }
      }
      // The deepest surface point: 0.1 below the plane (0.2 into the other sphere), less what the
      // nearest sample's projection misses.
      EXPECT_NEAR(deepest, q < 3 ? 0.1f : 0.2f, 1e-2f) << "query " << q;
    }
  }
}

// A capsule lying on a sampled valley (f = y + 0.02 x^2: its middle is deepest) rests on three
// contacts: its deepest axis point and both end balls; tilted up at one end it has one (the deepest
// point, at the low end: that end's ball, within the radius of it, is not repeated). Both CPU
// backends, both orders.
TEST(GeometryQueriesImplicit, CapsuleLyingOnAFieldRestsOnItsEndsToo) {
  for (Backend backend : kCpuBackends) {
    Batch b;
    const uint32_t grid = b.addGrid(v3(-1.0f, -1.0f, -1.0f), 0.1f, 21,
                                    [](float x, float y, float) { return y + 0.02f * x * x; });
    const uint32_t lying = b.add(Geometry::capsule(v3(-0.5f, 0.1f, 0.05f), v3(0.5f, 0.1f, 0.05f), 0.15f));
    const uint32_t tilted = b.add(Geometry::capsule(v3(-0.5f, 0.1f, 0), v3(0.5f, 0.4f, 0), 0.15f));
    b.query(lying, grid);
    b.query(grid, lying);
    b.query(tilted, grid);
    b.query(grid, tilted);
    auto counts = b.run(backend, 64);
    ASSERT_TRUE(counts.ok()) << counts.message();
    for (uint32_t order = 0; order < 2; ++order) {
      const ContactRange r = b.ranges[order];
      ASSERT_EQ(r.count, 3u) << "order " << order;
      const float expectedX[3] = {0.0f, -0.5f, 0.5f};
      for (uint32_t k = 0; k < 3; ++k) {
        const ContactElement& cap = order == 0 ? b.elementsA[r.first + k] : b.elementsB[r.first + k];
        const ContactElement& field = order == 0 ? b.elementsB[r.first + k] : b.elementsA[r.first + k];
        expectContactInvariants(cap, field, 1e-5f);
        const float x = expectedX[k];
        EXPECT_NEAR(cap.point.w, 0.15f - (0.1f + 0.02f * x * x), 2e-3f) << "contact " << k;  // depth
        // The ball's centre: its element's point moved back in along the direction by the radius.
        EXPECT_NEAR(cap.point.x + 0.15f * cap.direction.x, x, k == 0 ? 0.05f : 1e-5f) << "contact " << k;
        EXPECT_GT(cap.direction.y, 0.99f) << "contact " << k;  // pushed up, out of the valley
      }
      const ContactRange t = b.ranges[2 + order];
      ASSERT_EQ(t.count, 1u) << "order " << order;
      const ContactElement& cap = order == 0 ? b.elementsA[t.first] : b.elementsB[t.first];
      EXPECT_NEAR(cap.point.x + 0.15f * cap.direction.x, -0.5f, 0.05f);
      EXPECT_NEAR(cap.point.w, 0.15f - (0.1f + 0.02f * 0.25f), 2e-3f);
    }
    expectSwappedPairs(b, 0);
  }
}

// A box and a cylinder deep inside the sampled sphere (no surface point of the grid within them): each
// corner and rim point is a contact with the field's depth and gradient there (before, none); a flat
// box gives its 4 distinct corners, a disc its 4 rim points, a needle its 2 cap centres; a box half out
// gives the corners inside and the surface points in it; both CPU backends, both orders.
TEST(GeometryQueriesImplicit, EmbeddedBoxesAndCylindersGetTheirPointsContacts) {
  const float s = 0.38268343f, c = 0.92387953f;  // 45 degrees about y
  struct Case {
    Geometry shape;
    uint32_t points;  // distinct points, all inside the field
  };
  const Case cases[] = {
      {Geometry::orientedBox(v3(0.1f, -0.2f, 0.15f), Float4{0, s, 0, c}, v3(0.3f, 0.2f, 0.1f)), 8},
      {Geometry::orientedBox(v3(0, 0.3f, 0), identityQuat(), v3(0.2f, 0.3f, 0)), 4},  // flat
      {Geometry::cylinder(v3(-0.2f, 0.1f, 0), v3(0.6f, 0.8f, 0), 0.25f, 0.2f), 8},
      {Geometry::cylinder(v3(0, 0, 0.2f), v3(0, 0, 1), 0.3f, 0), 4},   // a disc
      {Geometry::cylinder(v3(0, 0, -0.2f), v3(1, 0, 0), 0, 0.3f), 2},  // a needle
  };
  for (Backend backend : kCpuBackends) {
    Batch b;
    const uint32_t grid = b.addGrid(v3(kOrigin, kOrigin, kOrigin), kH, kN, sphereSdf);
    for (const Case& k : cases) {
      const uint32_t shape = b.add(k.shape);
      b.query(shape, grid);
      b.query(grid, shape);
    }
    auto counts = b.run(backend, 2000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    for (size_t i = 0; i < std::size(cases); ++i) {
      for (uint32_t order = 0; order < 2; ++order) {
        const ContactRange r = b.ranges[2 * i + order];
        ASSERT_EQ(r.count, cases[i].points) << "case " << i << " order " << order;
        for (uint32_t e = r.first; e < r.first + r.count; ++e) {
          const ContactElement& shapeSide = order == 0 ? b.elementsA[e] : b.elementsB[e];
          const ContactElement& fieldSide = order == 0 ? b.elementsB[e] : b.elementsA[e];
          expectContactInvariants(shapeSide, fieldSide, 1e-5f);
          // The trilinear error of |x| - R at distance len from the centre (curvature 1 / |x|): the
          // kSphereDepthBound derivation with the radius len.
          const float len = len3(shapeSide.point);
          const float bound = 3.0f * kH * kH / (8.0f * (len - std::sqrt(3.0f) * kH));
          EXPECT_NEAR(shapeSide.point.w, kR - len, bound + 1e-5f) << "case " << i;
          // The shape's side is pushed out along the field's gradient: the radial direction.
          expectNear3(shapeSide.direction, shapeSide.point.x / len, shapeSide.point.y / len,
                      shapeSide.point.z / len, kSphereNormalBound, "direction");
        }
      }
    }
    expectSwappedPairs(b, 0);
  }
  // A box half out of the field: the corners inside (4) and the surface points inside the box.
  for (Backend backend : kCpuBackends) {
    Batch b;
    const uint32_t grid = b.addGrid(v3(kOrigin, kOrigin, kOrigin), kH, kN, sphereSdf);
    b.query(b.add(Geometry::orientedBox(v3(0, -1.0f, 0), identityQuat(), v3(0.2f, 0.3f, 0.2f))), grid);
    auto counts = b.run(backend, 2000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    uint32_t corners = 0;
    for (uint32_t e = 0; e < b.ranges[0].count; ++e) {
      const ContactElement& a = b.elementsA[b.ranges[0].first + e];
      if (std::abs(std::abs(a.point.x) - 0.2f) < 1e-6f && std::abs(std::abs(a.point.z) - 0.2f) < 1e-6f) {
        ++corners;
        EXPECT_NEAR(a.point.y, -0.7f, 1e-6f);  // the top corners
      }
    }
    EXPECT_EQ(corners, 4u);
    EXPECT_GT(b.ranges[0].count, 4u);  // and the sphere's surface points inside the box
  }
}

// Both CPU backends on batch b give `every` (as (elementA, elementB)) in `ranges`, bit for bit.
void expectEveryCpuBackendGives(Batch& b, const std::vector<ContactRange>& ranges,
                                const std::vector<std::pair<ContactElement, ContactElement>>& every) {
  for (Backend backend : kCpuBackends) {
    auto counts = b.run(backend, 400000);
    ASSERT_TRUE(counts.ok()) << counts.error().message;
    ASSERT_FALSE(counts->overflow);
    ASSERT_EQ(counts->contacts, every.size());
    EXPECT_EQ(std::memcmp(ranges.data(), b.ranges.data(), ranges.size() * sizeof(ContactRange)), 0);
    for (uint32_t i = 0; i < counts->contacts; ++i) {
      ASSERT_TRUE(bitwiseEqual(every[i].first, b.elementsA[i]) &&
                  bitwiseEqual(every[i].second, b.elementsB[i]))
          << "contact " << i;
    }
  }
}

// A box's or cylinder's slots past its own points, and a plane's slots, are only the samples whose
// surface points can lie inside it (gpu::geomShapeSampleBox), and a sample farther outside a box, cylinder or
// plane than its surface point's shift is skipped before its gradient: the same contacts bit for bit as every
// sample's slot evaluated in full, on 200 random boxes and cylinders (turned, some tiny, some larger
// than the grid, some flat or of radius or height 0, some far outside, some across the grid's faces)
// and 12 planes against the sampled sphere and an anisotropic box field, both orders, both CPU
// backends.
TEST(GeometryQueriesImplicit, SampleBoxesGiveEverySlotsContacts) {
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Batch b;
  const uint32_t grids[2] = {
      b.addGrid(v3(kOrigin, kOrigin, kOrigin), kH, kN, sphereSdf),
      b.add(Geometry::implicitGrid(v3(-1.2f, -0.9f, -0.6f), v3(0.1f, 0.15f, 0.2f), 25, 13, 7,
                                   static_cast<uint32_t>(b.gridSamples.size()))),
  };
  for (uint32_t k = 0; k < 7; ++k) {
    for (uint32_t j = 0; j < 13; ++j) {
      for (uint32_t i = 0; i < 25; ++i) {
        b.gridSamples.push_back(boxSdf(-1.2f + 0.1f * static_cast<float>(i),
                                       -0.9f + 0.15f * static_cast<float>(j),
                                       -0.6f + 0.2f * static_cast<float>(k)));
      }
    }
  }
  for (uint32_t n = 0; n < 100; ++n) {
    // Kinds 0-5 (larger than a grid, tiny, far outside, flat, radius or height 0) in 6 of 16.
    const TurnedShapes t =
        addTurnedBoxAndCylinder(b, rng, static_cast<uint32_t>(rng() % 16), 3.0f, 1.6f, 1.0f);
    for (uint32_t shape : {t.box, t.cylinder}) {
      const uint32_t grid = grids[rng() % 2];
      queryEitherWay(b, grid, shape, rng);
    }
  }
  // Planes through the fields, one-sided: their sample boxes (the samples up to half a cell diagonal
  // above them) and the skip of the samples farther outside than their surface points' shift.
  for (uint32_t n = 0; n < 12; ++n) {
    const Float4 normal = nudgedUnit(rng);
    const uint32_t plane =
        b.add(Geometry::plane(v3(0.8f * u(rng), 0.8f * u(rng), 0.8f * u(rng)), normal, false));
    b.query(plane, grids[n % 2]);
    b.query(grids[(n + 1) % 2], plane);
  }
  // The reference: every sample's slot evaluated in full (cpu::everySampleContacts), query by query.
  std::vector<ContactRange> ranges;
  std::vector<std::pair<ContactElement, ContactElement>> every;
  size_t boxed = 0, samples = 0;
  for (uint32_t q = 0; q < b.queries.size(); ++q) {
    const auto c = cpu::everySampleContacts(b.input(), q);
    ranges.push_back(ContactRange{static_cast<uint32_t>(every.size()), static_cast<uint32_t>(c.size())});
    every.insert(every.end(), c.begin(), c.end());
    const gpu::GeomShape sa = detail::toGeomShape(b.geometries[b.queries[q].a]);
    const gpu::GeomShape sb = detail::toGeomShape(b.geometries[b.queries[q].b]);
    const bool plane = sa.info.x == gpu::kGeomPlane || sb.info.x == gpu::kGeomPlane;
    boxed += gpu::geomSlotCount(sa, sb) - (plane ? 0 : gpu::kGeomImplicitShapeSlots);
    samples += sa.info.x == gpu::kGeomImplicit ? sa.info.z : sb.info.z;
  }
  EXPECT_GT(every.size(), 5000u);
  EXPECT_LT(boxed * 4, samples);  // the boxes hold a small part of the samples
  expectEveryCpuBackendGives(b, ranges, every);
}

// Two implicit geometries: each grid's samples are evaluated only near the other's box (widened by
// minus its least face sample, for a field still negative where its grid ends), and the contacts are
// those of every slot of both grids evaluated in full, bit for bit: 60 small sampled balls and boxes
// (5 to 12 samples an axis, anisotropic spacings; one in ten 30 times a distance) inside, across the
// faces of and far from a padded sampled sphere and an unpadded half space (negative below z = 0.2
// on a grid ending at z = -0.4, its field negative down to z = -1.4 outside it), and against each
// other, both orders, both CPU backends.
TEST(GeometryQueriesImplicit, GridPairsNearEachOthersBoxesGiveEverySlotsContacts) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Batch b;
  const uint32_t sphere = b.addGrid(v3(kOrigin, kOrigin, kOrigin), kH, kN, sphereSdf);
  const uint32_t halfSpace =
      b.addGrid(v3(-1.0f, -1.0f, -0.4f), 0.1f, 21, [](float, float, float z) { return z - 0.2f; });
  std::vector<uint32_t> small;
  for (uint32_t n = 0; n < 60; ++n) {
    const uint32_t nx = 5 + static_cast<uint32_t>(rng() % 8), ny = 5 + static_cast<uint32_t>(rng() % 8),
                   nz = 5 + static_cast<uint32_t>(rng() % 8);
    const Float4 h =
        v3(0.03f + 0.05f * (u(rng) + 1.0f), 0.03f + 0.05f * (u(rng) + 1.0f), 0.03f + 0.05f * (u(rng) + 1.0f));
    // Centred in the sphere's shell, across the grids' faces, below the half space's grid or far out.
    const float reach = n % 10 == 0 ? 4.0f : (n % 10 == 1 ? 1.5f : 1.05f);
    Float4 c = v3(reach * u(rng), reach * u(rng), reach * u(rng));
    if (n % 10 == 2) c = v3(0.5f * u(rng), 0.5f * u(rng), -1.0f + 0.3f * u(rng));
    const Float4 origin =
        v3(c.x - 0.5f * h.x * static_cast<float>(nx - 1), c.y - 0.5f * h.y * static_cast<float>(ny - 1),
           c.z - 0.5f * h.z * static_cast<float>(nz - 1));
    const float radius = 0.05f + 0.1f * (u(rng) + 1.0f);
    const bool ball = n % 2 == 0;
    const uint32_t first = static_cast<uint32_t>(b.gridSamples.size());
    for (uint32_t k = 0; k < nz; ++k) {
      for (uint32_t j = 0; j < ny; ++j) {
        for (uint32_t i = 0; i < nx; ++i) {
          const float x = origin.x + h.x * static_cast<float>(i) - c.x;
          const float y = origin.y + h.y * static_cast<float>(j) - c.y;
          const float z = origin.z + h.z * static_cast<float>(k) - c.z;
          const float sdf = ball ? std::sqrt(x * x + y * y + z * z) - radius
                                 : std::max({std::abs(x), std::abs(y), std::abs(z)}) - radius;
          // One in ten is not a distance field: 30 times the distance (its faces' samples large).
          b.gridSamples.push_back(n % 10 == 5 ? 30.0f * sdf : sdf);
        }
      }
    }
    small.push_back(b.add(Geometry::implicitGrid(origin, h, nx, ny, nz, first)));
    queryEitherWay(b, small.back(), n % 3 == 2 ? halfSpace : sphere, rng);
    if (n > 0 && n % 4 == 0) queryEitherWay(b, small.back(), small[n - 1], rng);
  }
  queryEitherWay(b, sphere, halfSpace, rng);
  std::vector<ContactRange> ranges;
  std::vector<std::pair<ContactElement, ContactElement>> every;
  uint32_t touching = 0;
  for (uint32_t q = 0; q < b.queries.size(); ++q) {
    const auto c = cpu::everySampleContacts(b.input(), q);
    ranges.push_back(ContactRange{static_cast<uint32_t>(every.size()), static_cast<uint32_t>(c.size())});
    every.insert(every.end(), c.begin(), c.end());
    touching += c.empty() ? 0u : 1u;
  }
  EXPECT_GT(every.size(), 3000u);
  EXPECT_GT(touching, 25u);
  // Contacts of small grids below the half space's grid (outside its box): the least face sample's reach.
  uint32_t below = 0;
  for (const auto& e : every) {
    below += (e.first.point.z < -0.45f && e.first.point.x > -1.0f && e.first.point.x < 1.0f) ? 1u : 0u;
  }
  EXPECT_GT(below, 20u);
  expectEveryCpuBackendGives(b, ranges, every);
}

TEST(GeometryQueriesImplicit, SwappedInputsSwapTheElementsBitForBit) {
  Batch b;
  const uint32_t grid = b.addGrid(v3(kOrigin, kOrigin, kOrigin), kH, 31, sphereSdf);  // spans [-1.5, 0]
  const uint32_t grid2 = b.addGrid(v3(-1.2f, -1.3f, -1.4f), 0.06f, 25,
                                   [](float x, float y, float z) { return boxSdf(x + 0.3f, y + 0.2f, z); });
  const uint32_t set = b.addPoints({v3(-0.5f, -0.5f, -0.5f), v3(-0.6f, -0.55f, -0.3f), v3(1, 1, 1)});
  const uint32_t others[] = {
      set,
      grid2,
      b.add(Geometry::sphere({-0.5f, -0.6f, -0.6f, 0.4f})),
      b.add(Geometry::capsule(v3(-1, -0.7f, -0.7f), v3(0, -0.6f, -0.4f), 0.3f)),
      b.add(Geometry::cylinder(v3(-0.6f, -0.7f, -0.4f), v3(0.6f, 0.8f, 0), 0.3f, 0.2f)),
      b.add(Geometry::orientedBox(v3(-0.6f, -0.6f, -0.6f), Float4{0.2f, 0.1f, 0, 0.9746794f}, v3(0.3f, 0.2f, 0.1f))),
      b.add(Geometry::plane(v3(0, -0.8f, 0), v3(0, 0.6f, 0.8f), true)),
  };
  for (uint32_t o : others) {
    b.query(grid, o);
    b.query(o, grid);
  }
  for (Backend backend : kCpuBackends) {
    auto counts = b.run(backend, 20000);
    ASSERT_TRUE(counts.ok()) << counts.message();
    expectSwappedPairs(b, 0);
  }
}

TEST(GeometryQueriesImplicit, ScalarAndSimdBackendsAgreeBitForBit) {
  Batch b;
  const uint32_t grid = b.addGrid(v3(kOrigin, kOrigin, kOrigin), kH, kN, boxSdf);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.3f, 1.3f);
  std::vector<Float4> pts(2000);
  for (Float4& p : pts) p = v3(u(rng), u(rng), u(rng));
  b.query(b.addPoints(pts), grid);
  b.query(grid, b.add(Geometry::sphere({0.3f, 0.9f, 0, 0.4f})));
  b.query(grid, b.add(Geometry::plane(v3(0, 0.7f, 0), v3(0, -1, 0), false)));
  auto scalar = b.run(Backend::kCpuScalar, 10000);
  ASSERT_TRUE(scalar.ok()) << scalar.message();
  const std::vector<ContactElement> a = b.elementsA, e = b.elementsB;
  auto simd = b.run(Backend::kCpuSimd, 10000);
  ASSERT_TRUE(simd.ok()) << simd.message();
  ASSERT_EQ(scalar->contacts, simd->contacts);
  EXPECT_GT(scalar->contacts, 100u);
  for (uint32_t i = 0; i < scalar->contacts; ++i) {
    EXPECT_TRUE(bitwiseEqual(a[i], b.elementsA[i]) && bitwiseEqual(e[i], b.elementsB[i])) << i;
  }
}

}  // namespace
}  // namespace vkc::test::geometry
