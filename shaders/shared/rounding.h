// Correctly rounded square root and division from any Vulkan device's approximate ones (integer
// arithmetic only; run on lavapipe, the CPU and an H100). Included by common.h.
//
// Vulkan requires float addition, subtraction and multiplication to be correctly rounded but lets a
// device approximate division (2.5 ULP) and square root (from inversesqrt, 2 ULP or more), and lets
// fma() round twice (a first version refined the device's results with fma: exact on the CPU, wrong
// in the last bit on lavapipe for 8-16% of the cases). lavapipe's `/` and `sqrt` round as the CPU's;
// on an NVIDIA H200 (driver 580) the shared functions' results differ from the CPU's in their last
// bits (bench/results/h200-2026-11-26.md), division and square root being one suspect.
//
// vkcSqrt and vkcDiv take the device's result as a candidate and correct it in exact integer
// arithmetic: with the 24-bit significands as integers (A, B, X) and a 64-bit product (umulExtended),
//   sqrt: x = N 2^(2k) with N in [2^46, 2^48); S = round(sqrt N) is the integer with
//         S (S - 1) < N <= S (S + 1) (no ties: N is an integer, (S + 1/2)^2 is not);
//   a / b: a / b = (N / B) 2^k with N = A 2^23 or A 2^24; Q = round(N / B) is the integer with
//         B (2Q - 1) < 2N < B (2Q + 1) (no ties: B (2Q + 1) would need 25 significant bits in A).
// A candidate within 3 units in the last place is moved to S or Q by one Newton step computed from
// its exact residual, then one comparison each way; the result's bits are composed directly.
// tests/unit/rounding_test.cpp runs this on the CPU with candidates up to 3 ULP away, over every
// 13th normal float for the square root (all of them once, by hand) and 10^6 quotients;
// tests/vulkan/rounding_vulkan_test.cpp on the device. Zero, infinite, NaN and subnormal operands, and subnormal or overflowing quotients (and
// quotients within 7 units of the smallest normal), are the device's own `/` and `sqrt` (a device may
// flush subnormals to zero; the CPU does not).
//
// Used by the stages through exact arithmetic (ContextCreateInfo::exactArithmetic; vkcDivOp and
// vkcSqrtOp below, which the build substitutes for every division and square root in each shader's
// exact-arithmetic variant). Before the
// NoContraction build, a build that used them everywhere ran on the H200 (bench/results/
// h200-2026-11-26.md, run 2) and the per-function checks still differed from the CPU in most cases
// (the fused multiply-adds a driver was then free to form are one suspect). On an H100 (driver 580, 2026-11-27): the device's own
// a / b differed from the CPU's in 107 395 of 374 905 cases and its sqrt in 67 658 of 400 169; vkcSqrt
// in none, vkcDiv in 1 013 (|b| > 2^126, then in a second run 238 quotients within a factor 2 of the
// range's ends: both since given scaled candidates); dot() and cross() never differed from GLM's. In
// C++ both are the CPU's own IEEE operations; the *Exact functions are the device algorithm, written
// once, and tests/unit/rounding_test.cpp runs them with candidates up to 3 ULP away.
#ifndef VKC_SHARED_ROUNDING_H
#define VKC_SHARED_ROUNDING_H

VKC_NAMESPACE_BEGIN

#ifdef __cplusplus
VKC_FN void vkcMul64(uint a, uint b, uint& hi, uint& lo) {
  const uint64_t p = uint64_t{a} * b;
  hi = static_cast<uint>(p >> 32);
  lo = static_cast<uint>(p);
}
#else
void vkcMul64(uint a, uint b, out uint hi, out uint lo) { umulExtended(a, b, hi, lo); }
#endif

VKC_FN bool vkcLess64(uint ah, uint al, uint bh, uint bl) { return ah < bh || (ah == bh && al < bl); }

VKC_CONSTANT(uint, kVkcSignificandLow, 0x00800000u);   // 2^23
VKC_CONSTANT(uint, kVkcCandidateSlack, 16u);           // clamp of a wild candidate

// The candidate c (any float) as an integer significand at the scale 2^k: c's own significand shifted
// by the difference of exponents when that is at most 2 (a candidate a few ULP away, maybe across a
// power of two); else (NaN, infinity, zero, far off) the edge of the range. Bit operations only: no
// ldexp, whose implementation may go through 2^k (not a float for k < -126).
VKC_FN uint vkcCandidate(float c, int k) {
  uint bits = floatBitsToUint(c) & 0x7FFFFFFFu;
  int e = int(bits >> 23u);
  uint C = (bits & 0x007FFFFFu) | kVkcSignificandLow;
  int sh = (e - 150) - k;
  if (e == 0 || e == 255 || sh < -2 || sh > 2) {
    return sh > 0 && e != 0 ? 2u * kVkcSignificandLow + kVkcCandidateSlack : kVkcSignificandLow - kVkcCandidateSlack;
  }
  return sh >= 0 ? (C << uint(sh)) : (C >> uint(-sh));
}

// S 2^k as a float, for S in [2^23, 2^24] and a normal result: the bits composed directly.
VKC_FN float vkcCompose(uint S, int k) {
  if (S >= 2u * kVkcSignificandLow) {
    S = S >> 1u;
    k = k + 1;
  }
  return uintBitsToFloat((uint(k + 150) << 23u) | (S & 0x007FFFFFu));
}

// hi:lo - ph:pl of two 64-bit values, approximately (within 2^9 of it): enough for a Newton step whose
// divisor is at least 2^23.
VKC_FN float vkcDiff64(uint hi, uint lo, uint ph, uint pl) {
  VKC_PRECISE float d = (float(hi) - float(ph)) * 4294967296.0f + (float(lo) - float(pl));
  return d;
}

// S moved by the rounded step, the step at most 64 units, S kept in [2^23 - 1, 2^24 + 1].
VKC_FN uint vkcStep(uint S, float step) {
  int moved = int(S) + int(clamp(floor(step + 0.5f), -64.0f, 64.0f));
  return uint(clamp(moved, int(kVkcSignificandLow) - 1, int(2u * kVkcSignificandLow) + 1));
}

// The correctly rounded square root of a positive normal x, from a candidate c (the device's sqrt).
// No loop (llvmpipe stops an invocation after 65 535 loop iterations in all, and a loop here in every
// division of a long loop hit that): the candidate's
// residual N - S^2 gives a Newton step in float, good to well under one unit; one comparison each way
// then settles the last unit.
VKC_FN float vkcSqrtExact(float x, float c) {
  uint bits = floatBitsToUint(x);
  uint X = (bits & 0x007FFFFFu) | kVkcSignificandLow;
  int t = int(bits >> 23u) - 150;  // x = X 2^t
  bool even = (t & 1) == 0;
  // N = X 2^24 (t even) or X 2^23 (t odd), in [2^46, 2^48); x = N 2^(2k).
  uint nh = even ? (X >> 8u) : (X >> 9u);
  uint nl = even ? (X << 24u) : (X << 23u);
  int k = even ? (t - 24) / 2 : (t - 23) / 2;
  uint S = vkcCandidate(c, k);
  uint ph, pl;
  vkcMul64(S, S, ph, pl);
  // The Newton step (N - S^2) / 2S rounded to an integer.
  S = vkcStep(S, vkcDiff64(nh, nl, ph, pl) / (2.0f * float(S)));
  vkcMul64(S, S + 1u, ph, pl);
  if (vkcLess64(ph, pl, nh, nl)) S = S + 1u;  // N > S (S + 1): S too small
  vkcMul64(S, S - 1u, ph, pl);
  if (!vkcLess64(ph, pl, nh, nl)) S = S - 1u;  // N <= S (S - 1): S too large
  return vkcCompose(S, k);
}

// The correctly rounded a / b of normal a and b whose quotient is normal, from a candidate c (the
// device's a / b). As vkcSqrtExact: the remainder N - B Q gives the integer step, then one comparison
// each way.
VKC_FN float vkcDivExact(float a, float b, float c) {
  uint ba = floatBitsToUint(a), bb = floatBitsToUint(b);
  uint A = (ba & 0x007FFFFFu) | kVkcSignificandLow, B = (bb & 0x007FFFFFu) | kVkcSignificandLow;
  uint s = A >= B ? 23u : 24u;
  // a / b = (N / B) 2^k with N = A 2^s; N / B in [2^23, 2^24).
  uint nh = A >> (32u - s), nl = A << s;
  uint th = (nh << 1u) | (nl >> 31u), tl = nl << 1u;  // 2N
  int k = int((ba >> 23u) & 0xFFu) - int((bb >> 23u) & 0xFFu) - int(s);
  uint Q = vkcCandidate(c, k);
  uint ph, pl;
  vkcMul64(B, Q, ph, pl);
  Q = vkcStep(Q, vkcDiff64(nh, nl, ph, pl) / float(B));
  vkcMul64(B, 2u * Q + 1u, ph, pl);
  if (!vkcLess64(th, tl, ph, pl)) Q = Q + 1u;  // 2N >= B (2Q + 1): Q too small
  vkcMul64(B, 2u * Q - 1u, ph, pl);
  if (!vkcLess64(ph, pl, th, tl)) Q = Q - 1u;  // 2N <= B (2Q - 1): Q too large
  float q = vkcCompose(Q, k);
  return ((ba ^ bb) & 0x80000000u) != 0u ? -q : q;
}

VKC_CONSTANT(float, kVkcFloatMin, 1.17549435e-38f);
VKC_CONSTANT(float, kVkcFloatMax, 3.40282347e38f);

VKC_NAMESPACE_END

#ifdef __cplusplus
VKC_NAMESPACE_BEGIN
// The CPU's sqrt and division are correctly rounded (IEEE 754) already.
VKC_FN float vkcSqrt(float x) { return std::sqrt(x); }
VKC_FN float vkcDiv(float a, float b) { return a / b; }
VKC_FN vec2 vkcDiv(vec2 v, float s) { return v / s; }
VKC_FN vec3 vkcDiv(vec3 v, float s) { return v / s; }
VKC_FN vec4 vkcDiv(vec4 v, float s) { return v / s; }
VKC_FN vec2 vkcDiv(vec2 v, vec2 w) { return v / w; }
VKC_FN vec3 vkcDiv(vec3 v, vec3 w) { return v / w; }
VKC_FN vec4 vkcDiv(vec4 v, vec4 w) { return v / w; }
// Any other operand types (an integer division rewritten by mistake, a double) do not compile.
template <class A, class B>
void vkcDiv(A, B) = delete;
VKC_NAMESPACE_END
#else
float vkcSqrt(float x) {
  float c = sqrt(x);
  // Zero, negative, NaN, infinity and subnormal x: the device's own.
  return x >= kVkcFloatMin && x <= kVkcFloatMax ? vkcSqrtExact(x, c) : c;
}
vec2 vkcSqrt(vec2 v) { return vec2(vkcSqrt(v.x), vkcSqrt(v.y)); }
vec3 vkcSqrt(vec3 v) { return vec3(vkcSqrt(v.x), vkcSqrt(v.y), vkcSqrt(v.z)); }
vec4 vkcSqrt(vec4 v) { return vec4(vkcSqrt(v.x), vkcSqrt(v.y), vkcSqrt(v.z), vkcSqrt(v.w)); }

float vkcDiv(float a, float b) {
  float c = a / b;
  float aa = abs(a), ab = abs(b);
  // Normal operands only; else the device's own.
  if (!(aa >= kVkcFloatMin && aa <= kVkcFloatMax && ab >= kVkcFloatMin && ab <= kVkcFloatMax)) return c;
  // A candidate away from the edges of the float range. A device may divide as a * (1 / b): 1 / b of
  // |b| > 2^126 is subnormal (flushed to zero on an H100, driver 580, which made the candidate 0), and a
  // quotient within a factor 2^2 of the smallest normal or of the largest float may come out flushed
  // or infinite. Divide by b / 4 and scale back by 1 / 4, or divide a / 4 and scale back by 4: both
  // scalings exact (b / 4 and a / 4 stay normal where they are taken, and so does the quotient).
  float ac = abs(c);
  if (ab > 4.25352959e37f || ac < 4.70197740e-38f) {  // 2^125, 2^-124
    c = (a / (b * 0.25f)) * 0.25f;
  } else if (ac > 4.25352959e37f) {
    c = ((a * 0.25f) / b) * 4.0f;
  }
  // The correction composes a normal quotient: a candidate at least 7 units above the smallest normal
  // (so the quotient is normal), at most the largest float (an infinite candidate is returned as it is).
  ac = abs(c);
  return ac >= 1.17549533e-38f && ac <= kVkcFloatMax ? vkcDivExact(a, b, c) : c;  // FLT_MIN + 7 ulp
}
vec2 vkcDiv(vec2 v, float s) { return vec2(vkcDiv(v.x, s), vkcDiv(v.y, s)); }
vec3 vkcDiv(vec3 v, float s) { return vec3(vkcDiv(v.x, s), vkcDiv(v.y, s), vkcDiv(v.z, s)); }
vec4 vkcDiv(vec4 v, float s) { return vec4(vkcDiv(v.x, s), vkcDiv(v.y, s), vkcDiv(v.z, s), vkcDiv(v.w, s)); }
vec2 vkcDiv(vec2 v, vec2 w) { return vec2(vkcDiv(v.x, w.x), vkcDiv(v.y, w.y)); }
vec3 vkcDiv(vec3 v, vec3 w) { return vec3(vkcDiv(v.x, w.x), vkcDiv(v.y, w.y), vkcDiv(v.z, w.z)); }
vec4 vkcDiv(vec4 v, vec4 w) { return vec4(vkcDiv(v.x, w.x), vkcDiv(v.y, w.y), vkcDiv(v.z, w.z), vkcDiv(v.w, w.w)); }

// Exact arithmetic (ContextCreateInfo::exactArithmetic). In each shader's exact-arithmetic variant the
// build (tools/spirv_embed.cpp) has rewritten every float division and square root, outside these two
// functions and what they call, into a call of vkcDivOp or vkcSqrtOp, one float at a time, and
// refused any other operation a device may approximate. (Uncalled in the plain variant: removed.)
float vkcDivOp(float a, float b) { return vkcDiv(a, b); }
float vkcSqrtOp(float x) { return vkcSqrt(x); }
#endif

#endif  // VKC_SHARED_ROUNDING_H
