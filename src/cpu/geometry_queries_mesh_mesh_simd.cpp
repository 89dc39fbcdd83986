// Highway SIMD pre-test of triangle pairs (src/cpu/geometry_queries_mesh_mesh_simd.h), compiled
// once per target and chosen at run time: triTriIntersect's steps up to its first two returns
// (shaders/shared/tri_tri.h), lane by lane, each operation the scalar code's in the same order (glm's
// dot: (x * x' + y * y') + z * z'; cross: (y z' - y' z, z x' - z' x, x y' - x' y)). Also the kept
// trees' stated-generation checks (largestEntry, xyzFinite: src/cpu/geometry_query_trees.cpp).
#include "cpu/geometry_queries_mesh_mesh_simd.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "shared/tri_tri.h"

#ifdef VKC_HAVE_SIMD
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/geometry_queries_mesh_mesh_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace vkc::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

template <class V>
struct V3 {
  V x, y, z;
};

template <class V>
V3<V> sub(const V3<V>& a, const V3<V>& b) {
  return {hn::Sub(a.x, b.x), hn::Sub(a.y, b.y), hn::Sub(a.z, b.z)};
}

template <class V>
V dot(const V3<V>& a, const V3<V>& b) {
  return hn::Add(hn::Add(hn::Mul(a.x, b.x), hn::Mul(a.y, b.y)), hn::Mul(a.z, b.z));
}

template <class V>
V3<V> cross(const V3<V>& a, const V3<V>& b) {
  return {hn::Sub(hn::Mul(a.y, b.z), hn::Mul(b.y, a.z)), hn::Sub(hn::Mul(a.z, b.x), hn::Mul(b.z, a.x)),
          hn::Sub(hn::Mul(a.x, b.y), hn::Mul(b.x, a.y))};
}

template <class V>
V maxAbs3(const V3<V>& a) {
  return hn::Max(hn::Max(hn::Abs(a.x), hn::Abs(a.y)), hn::Abs(a.z));
}

template <class M, class V>
V3<V> select(M m, const V3<V>& a, const V3<V>& b) {
  return {hn::IfThenElse(m, a.x, b.x), hn::IfThenElse(m, a.y, b.y), hn::IfThenElse(m, a.z, b.z)};
}

// triTriShape: (longest edge squared, twice the area).
template <class V>
void shape(const V3<V>& a, const V3<V>& b, const V3<V>& c, V& l2, V& area) {
  const V3<V> n = cross(sub(b, a), sub(c, a));
  l2 = hn::Max(hn::Max(dot(sub(b, a), sub(b, a)), dot(sub(c, b), sub(c, b))), dot(sub(a, c), sub(a, c)));
  area = hn::Sqrt(dot(n, n));
}

}  // namespace

uint32_t TriPlaneRejects(const TriPlaneBatch& batch, uint32_t n, uint8_t* features, uint32_t* misses) {
  const hn::CappedTag<float, kTriPlaneBatch> d;
  using V = decltype(hn::Zero(d));
  const size_t lanes = hn::Lanes(d);
  const V zero = hn::Zero(d);
  uint32_t rejected = 0, missed = 0;
  for (size_t off = 0; off < n; off += lanes) {
    V3<V> p[3], q[3];
    for (int c = 0; c < 3; ++c) {
      p[c] = {hn::Load(d, &batch.v[c][0][off]), hn::Load(d, &batch.v[c][1][off]),
              hn::Load(d, &batch.v[c][2][off])};
      q[c] = {hn::Load(d, &batch.v[3 + c][0][off]), hn::Load(d, &batch.v[3 + c][1][off]),
              hn::Load(d, &batch.v[3 + c][2][off])};
    }
    const V S = hn::Max(hn::Max(hn::Max(maxAbs3(p[0]), maxAbs3(p[1])), hn::Max(maxAbs3(p[2]), maxAbs3(q[0]))),
                        hn::Max(maxAbs3(q[1]), maxAbs3(q[2])));
    const auto finite = hn::Le(S, hn::Set(d, 3.0e38f));
    V l2P, areaP, l2Q, areaQ;
    shape(p[0], p[1], p[2], l2P, areaP);
    shape(q[0], q[1], q[2], l2Q, areaQ);
    const V fatP = hn::IfThenElseZero(hn::Gt(l2P, zero), hn::Div(areaP, l2P));
    const V fatQ = hn::IfThenElseZero(hn::Gt(l2Q, zero), hn::Div(areaQ, l2Q));
    const auto swap = hn::Gt(fatP, fatQ);
    const V3<V> o = select(swap, p[0], q[0]);
    const V3<V> b1 = sub(select(swap, p[1], q[1]), o), b2 = sub(select(swap, p[2], q[2]), o);
    const V3<V> a[3] = {sub(select(swap, q[0], p[0]), o), sub(select(swap, q[1], p[1]), o),
                        sub(select(swap, q[2], p[2]), o)};
    const V fat = hn::IfThenElse(swap, fatP, fatQ);
    const V l2B = hn::IfThenElse(swap, l2P, l2Q), areaB = hn::IfThenElse(swap, areaP, areaQ);
    const auto plane = hn::Gt(fat, hn::Set(d, gpu::kTriTriSliver));  // else both degenerate: not here
    const V3<V> c = cross(b1, b2);
    const V3<V> nb = {hn::Div(c.x, areaB), hn::Div(c.y, areaB), hn::Div(c.z, areaB)};
    const V R = hn::Sqrt(hn::Max(hn::Max(dot(a[0], a[0]), dot(a[1], a[1])), dot(a[2], a[2])));
    const V band = hn::Mul(hn::Set(d, gpu::kTriTriTolerance), hn::Add(S, hn::Div(hn::Mul(l2B, R), areaB)));
    auto far = hn::And(finite, plane);
    auto pos = far, neg = far;
    V dist[3];
    for (int i = 0; i < 3; ++i) {
      dist[i] = dot(nb, a[i]);  // a[i] - b0 with b0 = 0: a[i] itself
      far = hn::And(far, hn::Gt(hn::Abs(dist[i]), band));
      pos = hn::And(pos, hn::Gt(dist[i], zero));
      neg = hn::And(neg, hn::Lt(dist[i], zero));
    }
    // The second return (triTriCore): no vertex within the band (so none on the plane) and the
    // vertices on both sides: exactly two edges cross the plane, at s0 (the first crossing edge in
    // order) and s1 (the second); the pair is rejected when both ends lie more than the band outside
    // one edge of the plane triangle (crossingFar).
    const auto crossing = hn::AndNot(hn::Or(pos, neg), far);
    V3<V> at[3];
    auto crosses = [&](int i) {
      const int j = (i + 1) % 3;
      return hn::Or(hn::And(hn::Lt(dist[i], zero), hn::Gt(dist[j], zero)),
                    hn::And(hn::Gt(dist[i], zero), hn::Lt(dist[j], zero)));
    };
    for (int i = 0; i < 3; ++i) {
      const int j = (i + 1) % 3;
      const V t = hn::Div(dist[i], hn::Sub(dist[i], dist[j]));
      const V3<V> e = sub(a[j], a[i]);
      at[i] = {hn::Add(a[i].x, hn::Mul(e.x, t)), hn::Add(a[i].y, hn::Mul(e.y, t)),
               hn::Add(a[i].z, hn::Mul(e.z, t))};
    }
    const V3<V> s0 = select(crosses(0), at[0], at[1]), s1 = select(crosses(2), at[2], at[1]);
    // The ends' features (tri_tri.h's codes, as floats): the crossing edges of the other triangle
    // (kTriTriEdgeP + i), then an edge of the plane triangle (kTriTriEdgeQ + k) where the clip moves it.
    V f0 = hn::IfThenElse(crosses(0), zero, hn::Set(d, 1.0f)), f1 = hn::IfThenElse(crosses(2), hn::Set(d, 2.0f), hn::Set(d, 1.0f));
    const V3<V> bv[3] = {{zero, zero, zero}, b1, b2};
    auto outside = hn::Lt(zero, zero);  // none
    const V minusBand = hn::Neg(band);
    V t0 = zero, t1 = hn::Set(d, 1.0f);
    for (int k = 0; k < 3; ++k) {
      const V3<V> mk = cross(nb, sub(bv[(k + 1) % 3], bv[k]));
      const V len = hn::Sqrt(dot(mk, mk));
      const auto some = hn::Gt(len, zero);
      const V3<V> m = {hn::IfThenElseZero(some, hn::Div(mk.x, len)),
                       hn::IfThenElseZero(some, hn::Div(mk.y, len)),
                       hn::IfThenElseZero(some, hn::Div(mk.z, len))};
      const V sa = dot(m, sub(s0, bv[k])), sb = dot(m, sub(s1, bv[k]));
      outside = hn::Or(outside, hn::And(hn::Lt(sa, minusBand), hn::Lt(sb, minusBand)));
      // The clip of [s0, s1] to the edge's half-plane (lanes with an edge far outside are rejected
      // above; their values here do not matter): an end more than the band outside moves t0 or t1.
      const auto clips = hn::Not(hn::And(hn::Ge(sa, minusBand), hn::Ge(sb, minusBand)));
      const V t = hn::Div(sa, hn::Sub(sa, sb));
      const auto entering = hn::Lt(sa, sb);
      const auto moves0 = hn::And(clips, hn::And(entering, hn::Gt(t, t0)));
      const auto moves1 = hn::And(clips, hn::AndNot(entering, hn::Lt(t, t1)));
      t0 = hn::IfThenElse(moves0, t, t0);
      t1 = hn::IfThenElse(moves1, t, t1);
      const V edgeQ = hn::Set(d, static_cast<float>(gpu::kTriTriEdgeQ + static_cast<uint32_t>(k)));
      f0 = hn::IfThenElse(moves0, edgeQ, f0);
      f1 = hn::IfThenElse(moves1, edgeQ, f1);
    }
    // Rejected: (1) all on one side, none within the band; (2) the crossing far outside an edge;
    // and the cases where triTriIntersect gives geomTriTriContact no plain segment (so no contact):
    // (3) the crossing clipped away (t0 > t1: triTriTouching at best, a touching point);
    // (4) all on one side with some vertex within the band (touching at best); (5) every vertex
    // within the band (coplanar); (6) both triangles degenerate (span against span).
    const auto near3 = hn::And(hn::And(hn::Le(hn::Abs(dist[0]), band), hn::Le(hn::Abs(dist[1]), band)),
                               hn::Le(hn::Abs(dist[2]), band));
    const auto planeAll = hn::And(finite, plane);
    const auto oneSide = hn::And(planeAll, hn::Or(pos, neg));
    const auto clippedAway = hn::And(crossing, hn::Or(outside, hn::Gt(t0, t1)));
    const auto noPlain =
        hn::Or(hn::Or(oneSide, clippedAway), hn::Or(hn::And(planeAll, near3), hn::AndNot(plane, finite)));
    const auto laneBits = [&](auto mask) {
      uint8_t bits[8] = {};
      hn::StoreMaskBits(d, mask, bits);
      const uint32_t m = static_cast<uint32_t>(bits[0]) | (static_cast<uint32_t>(bits[1]) << 8);
      return (lanes >= 16 ? m : m & ((1u << lanes) - 1u)) << off;
    };
    rejected |= laneBits(noPlain);
    // triTriIntersect's count is 0 only for (1) and (2): (3) and (4) may still touch, (5) and (6) go on.
    if (misses != nullptr) missed |= laneBits(hn::Or(hn::And(hn::Or(pos, neg), far), hn::And(crossing, outside)));
    if (features != nullptr) {
      // A crossing not clipped away: triTriIntersect's plain segment (count 2, the features above;
      // with the plane triangle P's, swapped: edge k of P is kTriTriEdgeQ + k from Q's side, 3 apart).
      const auto known = hn::AndNot(clippedAway, crossing);
      const V three = hn::Set(d, 3.0f);
      f0 = hn::IfThenElse(swap, hn::IfThenElse(hn::Lt(f0, three), hn::Add(f0, three), hn::Sub(f0, three)), f0);
      f1 = hn::IfThenElse(swap, hn::IfThenElse(hn::Lt(f1, three), hn::Add(f1, three), hn::Sub(f1, three)), f1);
      const V code = hn::IfThenElse(known, hn::Add(f0, hn::Mul(f1, hn::Set(d, 16.0f))),
                                    hn::Set(d, static_cast<float>(kTriPlaneUnknown)));
      HWY_ALIGN float lane[kTriPlaneBatch];
      hn::Store(code, d, lane);
      for (size_t l = 0; l < lanes && off + l < n; ++l) features[off + l] = static_cast<uint8_t>(lane[l]);
    }
  }
  const uint32_t valid = n >= 32 ? ~0u : (1u << n) - 1u;
  if (misses != nullptr) *misses = missed & valid;
  return rejected & valid;
}

// Both checks read their array as kStreams consecutive parts at once (the loop's step loads one vector
// from each): one memory stream keeps too few lines in flight on the VM measured, four read the
// 1.5M-triangle meshes' 59 MB about 1.5x faster (thread time, 3.5 -> 2.2 ms per 35 MB in a standalone
// loop). The answers do not depend on the order of the reads.
constexpr size_t kStreams = 4;
// The fingerprints read eight blocks at once (eight streams; 4 KB each, the sums of each in registers):
// the kept 1.5M-triangle meshes' 59 MB took 4.3-6.0 ms a call against 5.0-6.3 ms with four streams
// and 5.8-7.2 ms with four whose sums a loop with a variable count kept in memory (thread time, three
// alternated rounds, load 3-4).
constexpr size_t kPrintStreams = 8;

uint32_t LargestEntry(const uint32_t* entries, size_t n) {
  const hn::ScalableTag<uint32_t> d;
  const size_t lanes = hn::Lanes(d);
  const size_t part = n / (kStreams * lanes) * lanes;  // each stream's entries, whole vectors
  auto a = hn::Zero(d), b = hn::Zero(d), c = hn::Zero(d), e = hn::Zero(d);
  for (size_t i = 0; i < part; i += lanes) {
    a = hn::Max(a, hn::LoadU(d, entries + i));
    b = hn::Max(b, hn::LoadU(d, entries + part + i));
    c = hn::Max(c, hn::LoadU(d, entries + 2 * part + i));
    e = hn::Max(e, hn::LoadU(d, entries + 3 * part + i));
  }
  size_t i = kStreams * part;
  for (; i + lanes <= n; i += lanes) a = hn::Max(a, hn::LoadU(d, entries + i));
  uint32_t largest = hn::GetLane(hn::MaxOfLanes(d, hn::Max(hn::Max(a, b), hn::Max(c, e))));
  for (; i < n; ++i) largest = entries[i] > largest ? entries[i] : largest;
  return largest;
}

bool XyzFinite(const float* xyzw, size_t points) {
  const hn::ScalableTag<uint32_t> d;
  const size_t lanes = hn::Lanes(d);  // the vector loops take whole points (a multiple of 4 lanes)
  const auto exponent = hn::Set(d, 0x7f800000u);
  const auto notW = hn::Ne(hn::And(hn::Iota(d, 0), hn::Set(d, 3u)), hn::Set(d, 3u));
  const hn::RebindToFloat<decltype(d)> df;
  const size_t n = 4 * points;
  // Lanes whose exponent bits are all set (infinite or NaN), w's lanes cleared.
  const auto nonFinite = [&](size_t at) {
    return hn::IfThenElseZero(
        notW,
        hn::VecFromMask(d, hn::Eq(hn::And(hn::BitCast(d, hn::LoadU(df, xyzw + at)), exponent), exponent)));
  };
  auto bad = hn::Zero(d);
  size_t i = 0;
  if (lanes % 4 == 0) {
    const size_t part = n / (kStreams * lanes) * lanes;  // each stream's floats, whole vectors (whole points)
    auto b1 = hn::Zero(d), b2 = hn::Zero(d), b3 = hn::Zero(d);
    for (; i < part; i += lanes) {
      bad = hn::Or(bad, nonFinite(i));
      b1 = hn::Or(b1, nonFinite(part + i));
      b2 = hn::Or(b2, nonFinite(2 * part + i));
      b3 = hn::Or(b3, nonFinite(3 * part + i));
    }
    bad = hn::Or(hn::Or(bad, b1), hn::Or(b2, b3));
    for (i = kStreams * part; i + lanes <= n; i += lanes) bad = hn::Or(bad, nonFinite(i));
  }
  bool finite = hn::AllTrue(d, hn::Eq(bad, hn::Zero(d)));
  for (; i < n; ++i) finite = finite && ((i & 3u) == 3u || std::isfinite(xyzw[i]));
  return finite;
}

void BlockFingerprints(const uint32_t* words, size_t n, bool xyzOnly, uint64_t* out) {
#if HWY_TARGET == HWY_SCALAR  // one lane: the plain loop
  blockFingerprintsPlain(words, n, xyzOnly, 0, out);
#else
  const hn::ScalableTag<uint32_t> d;
  const hn::Repartition<uint64_t, decltype(d)> d64;
  const size_t lanes = hn::Lanes(d);
  constexpr size_t kW = kFingerprintWords;
  const size_t blocks = lanes % 4 == 0 && kW % lanes == 0 ? n / kW : 0;  // whole blocks in lanes
  const uint32_t* key = fingerprintKey();
  // w's lanes cleared when xyzOnly (lanes a multiple of 4, every load at a multiple of 4 words).
  const auto keepWord = xyzOnly ? hn::VecFromMask(d, hn::Ne(hn::And(hn::Iota(d, 0), hn::Set(d, 3u)), hn::Set(d, 3u)))
                                : hn::Set(d, ~0u);
  // NH of one vector: (w[2i] + k[2i]) * (w[2i+1] + k[2i+1]) in 64-bit lanes.
  const auto nh = [&](decltype(hn::Zero(d)) w, decltype(hn::Zero(d)) k) {
    const auto a = hn::Add(w, k);
    return hn::MulEven(a, hn::Shuffle2301(a));
  };
  // Blocks b, b + part, ..., b + 7 part at once (kPrintStreams memory streams), then the rest one by one;
  // the count a constant, so that the sums stay in registers.
  const size_t part = blocks / kPrintStreams;
  const auto run = [&]<size_t count>(const size_t* at) {
    decltype(hn::Zero(d64)) s1[count], s2[count];
    for (size_t s = 0; s < count; ++s) s1[s] = s2[s] = hn::Zero(d64);
    for (size_t i = 0; i < kW; i += lanes) {
      const auto k1 = hn::LoadU(d, key + i), k2 = hn::LoadU(d, key + kW + i);
      for (size_t s = 0; s < count; ++s) {
        const auto w = hn::And(hn::LoadU(d, words + at[s] * kW + i), keepWord);
        s1[s] = hn::Add(s1[s], nh(w, k1));
        s2[s] = hn::Add(s2[s], nh(w, k2));
      }
    }
    // Summed here, not by SumOfLanes (AVX-512's reduction adds the lanes as signed: overflow, UB).
    const auto sum = [&](decltype(hn::Zero(d64)) v) {
      HWY_ALIGN uint64_t lane[hn::MaxLanes(d64)];
      hn::Store(v, d64, lane);
      uint64_t total = 0;
      for (size_t l = 0; l < hn::Lanes(d64); ++l) total += lane[l];
      return total;
    };
    for (size_t s = 0; s < count; ++s) {
      out[2 * at[s]] = sum(s1[s]);
      out[2 * at[s] + 1] = sum(s2[s]);
    }
  };
  for (size_t b = 0; b < part; ++b) {
    size_t at[kPrintStreams];
    for (size_t s = 0; s < kPrintStreams; ++s) at[s] = s * part + b;
    run.template operator()<kPrintStreams>(at);
  }
  for (size_t b = kPrintStreams * part; b < blocks; ++b) run.template operator()<1>(&b);
  blockFingerprintsPlain(words, n, xyzOnly, blocks, out);
#endif
}

}  // namespace vkc::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vkc::cpu {
HWY_EXPORT(TriPlaneRejects);

uint32_t triPlaneRejects(const TriPlaneBatch& batch, uint32_t n, uint8_t* features, uint32_t* misses) {
  return HWY_DYNAMIC_DISPATCH(TriPlaneRejects)(batch, n, features, misses);
}

HWY_EXPORT(LargestEntry);
HWY_EXPORT(XyzFinite);

uint32_t largestEntry(const uint32_t* entries, size_t n) {
  return HWY_DYNAMIC_DISPATCH(LargestEntry)(entries, n);
}

HWY_EXPORT(BlockFingerprints);

void blockFingerprints(const uint32_t* words, size_t n, bool xyzOnly, uint64_t* out) {
  HWY_DYNAMIC_DISPATCH(BlockFingerprints)(words, n, xyzOnly, out);
}

bool xyzFinite(const float* xyzw, size_t points) {
  return HWY_DYNAMIC_DISPATCH(XyzFinite)(xyzw, points);
}
}  // namespace vkc::cpu
#endif

#else  // scalar-only build: no pre-test (every pair goes to the exact test)

namespace vkc::cpu {
uint32_t triPlaneRejects(const TriPlaneBatch&, uint32_t n, uint8_t* features, uint32_t* misses) {
  if (features != nullptr) std::fill(features, features + n, kTriPlaneUnknown);
  if (misses != nullptr) *misses = 0;
  return 0;
}

uint32_t largestEntry(const uint32_t* entries, size_t n) {
  uint32_t largest = 0;
  for (size_t i = 0; i < n; ++i) largest = entries[i] > largest ? entries[i] : largest;
  return largest;
}

bool xyzFinite(const float* xyzw, size_t points) {
  for (size_t i = 0; i < 4 * points; ++i) {
    if ((i & 3u) != 3u && !std::isfinite(xyzw[i])) return false;
  }
  return true;
}

void blockFingerprints(const uint32_t* words, size_t n, bool xyzOnly, uint64_t* out) {
  blockFingerprintsPlain(words, n, xyzOnly, 0, out);
}
}  // namespace vkc::cpu
#endif

#if !defined(VKC_HAVE_SIMD) || HWY_ONCE
namespace vkc::cpu {
size_t fingerprintCount(size_t n) {
  return 2 * ((n + kFingerprintWords - 1) / kFingerprintWords);
}

void blockFingerprintsPlain(const uint32_t* words, size_t n, bool xyzOnly, size_t firstBlock, uint64_t* out) {
  const uint32_t* key = fingerprintKey();
  const auto word = [&](size_t i) -> uint32_t {
    uint32_t w = 0;  // (a point's float bits: copied, not read through the pointer's type)
    if (i < n && !(xyzOnly && (i & 3u) == 3u)) std::memcpy(&w, words + i, sizeof w);
    return w;
  };
  for (size_t b = firstBlock; b * kFingerprintWords < n; ++b) {
    uint64_t s1 = 0, s2 = 0;
    const size_t first = b * kFingerprintWords, end = std::min(n, first + kFingerprintWords);
    for (size_t i = first; i < end; i += 2) {
      const uint32_t w0 = word(i), w1 = word(i + 1);  // (past n: 0)
      const uint32_t* k = key + (i - first);
      s1 += static_cast<uint64_t>(w0 + k[0]) * static_cast<uint32_t>(w1 + k[1]);
      s2 += static_cast<uint64_t>(w0 + k[kFingerprintWords]) * static_cast<uint32_t>(w1 + k[kFingerprintWords + 1]);
    }
    out[2 * b] = s1, out[2 * b + 1] = s2;
  }
}

const uint32_t* fingerprintKey() {
  // Drawn once per process (the trees' fingerprints and a call's are made with the same keys).
  static const std::vector<uint32_t> key = [] {
    std::random_device random;
    std::vector<uint32_t> k(2 * kFingerprintWords);
    for (uint32_t& w : k) w = random();
    return k;
  }();
  return key.data();
}
}  // namespace vkc::cpu
#endif
