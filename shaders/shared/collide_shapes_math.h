// The arithmetic of sphere and capsule collision, written once: compiled as GLSL by
// shaders/collide_shapes.comp and as C++ (GLM) by src/cpu/collide_shapes.cpp. Formulas follow
// shared/seeds/nvcloth-sphere-capsule-collision.txt and NVCLOTH-NOTES.md; where we derive or
// deviate, the comment says so.
#ifndef VKC_SHARED_COLLIDE_SHAPES_MATH_H
#define VKC_SHARED_COLLIDE_SHAPES_MATH_H
#include "collide_shapes.h"

VKC_NAMESPACE_BEGIN

VKC_FN Cone makeCone(vec4 s1, vec4 s2) {
  Cone cone;
  vec3 c1 = vec3(s1), c2 = vec3(s2);
  vec3 h = (c2 - c1) * 0.5f;
  float a = (s2.w - s1.w) * 0.5f;
  float la2 = dot(h, h);
  float lc2 = la2 - a * a;
  cone.center = vec4((c1 + c2) * 0.5f, 0.0f);
  cone.axis = vec4(0.0f);
  cone.dims = vec4(0.0f);
  if (lc2 > 0.0f) {
    float la = sqrt(la2), lc = sqrt(lc2);
    cone.center.w = (a + s1.w) * la / lc;
    cone.axis = vec4(h / la, a / lc);
    cone.dims = vec4(la, 1.0f - (a / la) * (a / la), 1.0f, 0.0f);
  }
  return cone;
}

// A unit vector perpendicular to the unit vector a (deterministic), for particles on an axis.
VKC_FN vec3 anyPerpendicular(vec3 a) {
  vec3 other = abs(a.x) < 0.9f ? vec3(1.0f, 0.0f, 0.0f) : vec3(0.0f, 1.0f, 0.0f);
  vec3 n = cross(a, other);
  return n / sqrt(dot(n, n));
}

// Where p lies along a valid cone: 0 within the section between the tangent circles, 1 beyond
// sphere0's end, 2 beyond sphere1's end. base = t + s * dPerp is the axial coordinate of the surface
// point nearest to p.
VKC_CONSTANT(uint, kConeSection, 0u);
VKC_CONSTANT(uint, kConeBeyond0, 1u);
VKC_CONSTANT(uint, kConeBeyond1, 2u);

VKC_FN uint coneRegion(Cone cone, vec3 p) {
  vec3 d = p - vec3(cone.center);
  vec3 axis = vec3(cone.axis);
  float t = dot(d, axis);
  float dPerp = sqrt(max(dot(d, d) - t * t, 0.0f));
  float base = t + cone.axis.w * dPerp;
  if (base < -cone.dims.x) return kConeBeyond0;
  if (base > cone.dims.x) return kConeBeyond1;
  return kConeSection;
}

// Discrete cone contact: if p is inside the cone's section, returns true and the delta that puts p
// on the cone's surface along its normal. NvCloth writes delta = (d - base A) cos^2 (r_p / dPerp - 1);
// since d - base A = dPerp (n - s A) with n the unit radial direction, we use the equal and stable
// (n - s A) cos^2 (r_p - dPerp), which stays finite on the axis (dPerp = 0).
VKC_FN bool coneContact(Cone cone, vec3 p, VKC_OUT(vec3) delta) {
  delta = vec3(0.0f);
  if (cone.dims.z == 0.0f) return false;
  vec3 d = p - vec3(cone.center);
  vec3 axis = vec3(cone.axis);
  float t = dot(d, axis);
  vec3 radial = d - t * axis;
  float dPerp = sqrt(max(dot(radial, radial), 0.0f));
  float base = t + cone.axis.w * dPerp;
  if (abs(base) > cone.dims.x) return false;
  float rp = max(t * cone.axis.w + cone.center.w, 0.0f);
  if (!(rp > dPerp)) return false;
  vec3 n = dPerp > kCollideEpsilon * rp ? radial / dPerp : anyPerpendicular(axis);
  delta = (n - cone.axis.w * axis) * (cone.dims.y * (rp - dPerp));
  return true;
}

// Discrete sphere contact: if p is inside, returns true and the delta that puts p on the surface
// along the radial direction (NvCloth: delta = -d (1 - r / |d|)). At the centre the direction is +y.
VKC_FN bool sphereContact(vec4 sphere, vec3 p, VKC_OUT(vec3) delta) {
  delta = vec3(0.0f);
  vec3 d = p - vec3(sphere);
  float d2 = dot(d, d);
  float r = sphere.w;
  if (!(d2 < r * r)) return false;
  float len = sqrt(d2);
  if (len > kCollideEpsilon * r) {
    delta = d * (r / len - 1.0f);
  } else {
    delta = vec3(0.0f, r, 0.0f) - d;
  }
  return true;
}

// Continuous collision against a moving, growing or shrinking round shape, in relative coordinates:
// q0, q1 are the particle relative to the shape at the iteration's start and end (for a cone, the
// components perpendicular to the axis), r0, r1 the radii then. Solves |q0 + (q1 - q0) t| =
// r0 + (r1 - r0) t for the time of entry (the seed's quadratic: m00, m01, m11, halfB, minusA).
// Returns true with the time of impact and the fraction `back` of the relative move (q1 - q0) to
// undo, when the trajectory enters the shape during the iteration deeply enough.
//  - toi = min(0, halfB + sqrt(D)) / minusA: entry time, 0 if already inside at the start.
//  - hit when toi < 1, the exit time is after 0 (halfB < sqrt(D)) and minusA < -eps (the relative
//    motion is not degenerate; otherwise the discrete test decides).
//  - skin: NvCloth's "rMin" check is questioned (NvCloth issue #70). We derive it: the closest
//    approach is at tc = halfB / minusA (vertex of the quadratic), clamped to [0, 1]; the trajectory
//    counts only if there |q| < (1 - kCcdSkinFraction) r, i.e. it enters deeper than 20% of the radius.
//  - back = (1 - toi) / (1 + k), k = (tc - toi) / (1 - toi) = -sqrt(D) / (minusA (1 - toi)): NvCloth's
//    impulse reduction, k clamped to [0, (tPass - toi) / (1 - toi)] (see below). The corrected
//    relative position q1 + (q0 - q1) back corresponds to a time between the entry and the path's
//    closest approach to the centre, so the discrete test then pushes the particle out on the side it
//    came from (no tunnelling), also for a shape that grows while it moves.
VKC_FN bool sweptContact(vec3 q0, vec3 q1, float r0, float r1, VKC_OUT(float) toi, VKC_OUT(float) back) {
  toi = 1.0f;
  back = 0.0f;
  float m00 = dot(q0, q0) - r0 * r0;
  float m01 = dot(q0, q1) - r0 * r1;
  float m11 = dot(q1, q1) - r1 * r1;
  float disc = m01 * m01 - m00 * m11;
  float halfB = m01 - m00;
  float minusA = m01 - m11 + halfB;
  if (!(minusA < -kCollideEpsilon) || !(disc > 0.0f)) return false;
  float sqrtD = sqrt(disc);
  if (!(halfB < sqrtD)) return false;
  toi = min(0.0f, halfB + sqrtD) / minusA;
  if (!(toi < 1.0f)) return false;
  float tc = clamp(halfB / minusA, 0.0f, 1.0f);
  vec3 qc = mix(q0, q1, tc);
  float rc = mix(r0, r1, tc);
  float deep = (1.0f - kCcdSkinFraction) * rc;
  if (!(dot(qc, qc) < deep * deep)) return false;
  float oneMinusToi = 1.0f - toi;
  if (!(oneMinusToi > kCollideEpsilon)) return false;
  float minusK = sqrtD / (minusA * oneMinusToi);
  // Deviation from NvCloth: k is at most g = (tPass - toi) / (1 - toi), with tPass the time the
  // relative path passes closest to the centre (axis). With a constant radius tPass is the vertex tc
  // and nothing changes; with a growing radius tc comes later than tPass and NvCloth's k put the
  // point past the centre, so that the discrete test pushed it out of the shape's far side.
  vec3 dq = q1 - q0;  // |dq|^2 > (r1 - r0)^2 + eps here (minusA < -eps)
  float g = (-dot(q0, dq) / dot(dq, dq) - toi) / oneMinusToi;
  minusK = max(minusK, -max(g, 0.0f));
  back = oneMinusToi / (1.0f - minusK);
  return true;
}

// Sphere CCD between the iteration's start (s0) and end (s1) spheres for a particle moving p0 -> p1.
// Returns true on a hit, with the time of entry and the corrected end position.
VKC_FN bool sphereSweep(vec4 s0, vec4 s1, vec3 p0, vec3 p1, VKC_OUT(float) toi, VKC_OUT(vec3) target) {
  target = p1;
  vec3 q0 = p0 - vec3(s0), q1 = p1 - vec3(s1);
  float back;
  if (!sweptContact(q0, q1, s0.w, s1.w, toi, back)) return false;
  target = p1 + (q0 - q1) * back;
  return true;
}

// Cone CCD (the seed's cross-product form): the same quadratic on q = (p - m) x A with the cone's
// radius at the particle's axial position; a hit counts only if, at the time of impact, the particle
// is within the section of the cone interpolated to that time. Returns true on a hit, with the time
// of entry and the corrected end position.
VKC_FN bool coneSweep(Cone c0, Cone c1, vec3 p0, vec3 p1, VKC_OUT(float) toi, VKC_OUT(vec3) target) {
  target = p1;
  toi = 1.0f;
  if (c0.dims.z == 0.0f || c1.dims.z == 0.0f) return false;
  vec3 d0 = p0 - vec3(c0.center), d1 = p1 - vec3(c1.center);
  vec3 a0 = vec3(c0.axis), a1 = vec3(c1.axis);
  vec3 q0 = cross(d0, a0), q1 = cross(d1, a1);
  float r0 = max(dot(d0, a0) * c0.axis.w + c0.center.w, 0.0f);
  float r1 = max(dot(d1, a1) * c1.axis.w + c1.center.w, 0.0f);
  float back;
  if (!sweptContact(q0, q1, r0, r1, toi, back)) return false;
  vec3 d = mix(d0, d1, toi);
  vec3 h = mix(a0 * c0.dims.x, a1 * c1.dims.x, toi);
  float la = sqrt(dot(h, h));
  if (!(la > 0.0f)) return false;
  vec3 axis = h / la;
  float slope = mix(c0.axis.w, c1.axis.w, toi);
  float t = dot(d, axis);
  float dPerp = sqrt(max(dot(d, d) - t * t, 0.0f));
  if (!(abs(t + slope * dPerp) < la)) return false;
  target = p1 + (d0 - d1) * back;
  // The impulse reduction moves the point on along the path, which for a path nearly along the axis
  // can leave the section, past an end: the discrete test would then push it out of the far end
  // sphere. Use the point of entry instead.
  if (coneRegion(c1, target) != kConeSection) target = p1 + (d0 - d1) * (1.0f - toi);
  return true;
}

// A capsule (the hull of its spheres s0, s1 and their cone) is one shape: its spheres do not collide
// on their own as well (the kernel skips spheres that belong to a capsule), so nothing is counted
// twice and no end of a capsule is left out.
// Discrete: the nearest surface is the cone within its section, else the sphere at that end; when
// one sphere holds the other (invalid cone), the bigger sphere.
VKC_FN bool capsuleContact(Cone cone, vec4 s0, vec4 s1, vec3 p, VKC_OUT(vec3) delta) {
  if (cone.dims.z == 0.0f) return sphereContact(s0.w >= s1.w ? s0 : s1, p, delta);
  uint region = coneRegion(cone, p);
  if (region == kConeSection) return coneContact(cone, p, delta);
  return sphereContact(region == kConeBeyond0 ? s0 : s1, p, delta);
}

// CCD: the earliest entry into the hull over the cone's section and both spheres (the hull is their
// union), so that a path entering through an end cap is caught even when it leaves the capsule
// beside its cone. Returns the corrected end position (p1 when there is no hit).
VKC_FN vec3 capsuleSweep(Cone c0, Cone c1, vec4 a0, vec4 a1, vec4 b0, vec4 b1, vec3 p0, vec3 p1) {
  vec3 best = p1, target;
  float first = 2.0f, toi;
  if (coneSweep(c0, c1, p0, p1, toi, target) && toi < first) {
    first = toi;
    best = target;
  }
  if (sphereSweep(a0, a1, p0, p1, toi, target) && toi < first) {
    first = toi;
    best = target;
  }
  if (sphereSweep(b0, b1, p0, p1, toi, target) && toi < first) {
    first = toi;
    best = target;
  }
  return best;
}

// A sphere at time alpha between the frame's start and end. Written out (not mix) and `precise`, so
// that every backend rounds it identically: the grid masks built from it must match bit for bit.
VKC_FN vec4 interpolateSphere(vec4 start, vec4 end, float alpha) {
  VKC_PRECISE vec4 r = start * (1.0f - alpha) + end * alpha;
  return r;
}

// The grid of one cloth: the particles' box (with CCD, also of the previous positions) intersected
// with the spheres' box (with CCD, of both ends), padded by 1e-4 of its longest edge (and by 1e-6 of
// its coordinates' magnitude, so that a flat box still has a positive edge). Invalid when the boxes
// do not overlap.
// Deviation from NvCloth (scale = (8 - 1e-3) / edge): the scale is a power of two, 2^(3 - e) with
// edge = m 2^e, m in [0.5, 1), so the box spans between 4 and 8 cells per axis. Then a cell
// coordinate (x - lower) * scale needs only a correctly rounded subtraction and an exact
// multiplication, which Vulkan guarantees, so the masks are bitwise equal on every device and on the
// CPU (a division, 2.5 ulp on GPUs, would move cell boundaries).
VKC_FN ShapeGrid makeGrid(vec3 particlesLo, vec3 particlesHi, vec3 spheresLo, vec3 spheresHi) {
  ShapeGrid g;
  vec3 lo = max(particlesLo, spheresLo), hi = min(particlesHi, spheresHi);
  g.lower = vec4(0.0f);
  g.scale = vec4(0.0f);
  if (!(lo.x <= hi.x && lo.y <= hi.y && lo.z <= hi.z)) return g;
  vec3 edge = hi - lo;
  vec3 mag = max(abs(lo), abs(hi));
  float pad = max(1e-4f * max(edge.x, max(edge.y, edge.z)), 1e-6f * max(mag.x, max(mag.y, mag.z)));
  pad = max(pad, 1e-30f);
  vec3 lower = lo - pad;
  vec3 padded = (hi + pad) - lower;
  ivec3 e;
  frexp(padded, e);
  g.lower = vec4(lower, 1.0f);
  g.scale = vec4(ldexp(vec3(1.0f), ivec3(3) - e), 0.0f);
  return g;
}

// A plane scaled to a unit normal: normal and offset divided by the normal's length (the input's
// normals are checked to make this finite, see validateColliders).
VKC_FN vec4 normalizePlane(vec4 plane) {
  vec3 n = vec3(plane);
  return plane / sqrt(dot(n, n));
}

// A plane at time alpha between the frame's start and end (both normalized): the mix, normalized.
// The mix is written out and `precise` like interpolateSphere's.
VKC_FN vec4 interpolatePlane(vec4 start, vec4 end, float alpha) {
  VKC_PRECISE vec4 r = start * (1.0f - alpha) + end * alpha;
  return normalizePlane(r);
}

// Signed distance of p to a normalized plane: n.p + d, negative inside.
VKC_FN float planeDistance(vec4 plane, vec3 p) { return dot(vec3(plane), p) + plane.w; }

// Whether a plane keeps the box (centre c, half extents h) outside it by more than the cull margin:
// the box's smallest signed distance n.c + d - |n|.h, against kConvexCullMargin times the distance's
// scale |d| + |n|.(|c| + h).
VKC_FN bool planeExcludesBox(vec4 plane, vec3 c, vec3 h) {
  vec3 an = abs(vec3(plane));
  float nearest = planeDistance(plane, c) - dot(an, h);
  float scale = abs(plane.w) + dot(an, abs(c) + h);
  return nearest > kConvexCullMargin * scale;
}

// Grid cell coordinate of x on one axis.
VKC_FN float gridCoord(float x, float lower, float scale) { return (x - lower) * scale; }

// The span [lo, hi] of cells a sphere covers on one axis (clamped into the grid).
VKC_FN uvec2 sphereCells(float center, float radius, float lower, float scale) {
  float lo = clamp(gridCoord(center - radius, lower, scale), 0.0f, kGridMaxCoord);
  float hi = clamp(gridCoord(center + radius, lower, scale), 0.0f, kGridMaxCoord);
  return uvec2(uint(floor(lo)), uint(floor(hi)));
}

// The impulse accumulated over a particle's contacts (NvCloth's ImpulseAccumulator).
struct ContactSum {
  vec3 delta;     // sum of position corrections
  vec3 velocity;  // sum of the touched shapes' displacements over the iteration
  uint count;     // contacts
};

// Applies the averaged correction, friction and collision mass scaling to one particle.
//  - position: p += sum(delta) / n (NvCloth counts from epsilon; we divide by the exact count n > 0).
//  - friction (on the previous position, so only the velocity changes): n = delta / |delta|,
//    v = (p - prev) - sum(velocity) / n, vt = v - (v . n) n, j = max(-mu |delta / n| / |vt|, -1),
//    prev -= j vt: never more than the whole tangential velocity. NvCloth's CPU uses |sum delta|,
//    its CUDA |sum delta| / n; we use the average |sum delta| / n on every backend (it is the
//    correction actually applied, so friction does not grow with the number of contacts).
//  - mass scaling: w *= 1 / (1 + k |sum delta / n|^2), the CPU formula, on the average likewise.
VKC_FN void applyContacts(ContactSum sum, uint flags, float friction, float massScale, VKC_INOUT(vec4) p,
                          VKC_INOUT(vec4) prev) {
  if (sum.count == 0u) return;
  float invCount = 1.0f / float(sum.count);
  vec3 avg = sum.delta * invCount;
  float avgLen2 = dot(avg, avg);
  if ((flags & kCollideFlagFriction) != 0u && avgLen2 > 0.0f) {
    vec3 n = avg / sqrt(avgLen2);
    vec3 v = (vec3(p) - vec3(prev)) - sum.velocity * invCount;
    vec3 vt = v - dot(v, n) * n;
    float vt2 = dot(vt, vt);
    if (vt2 > 0.0f) {
      float j = max(-friction * sqrt(avgLen2 / vt2), -1.0f);
      prev = vec4(vec3(prev) - j * vt, prev.w);
    }
  }
  if ((flags & kCollideFlagMassScale) != 0u) p.w = p.w / (1.0f + massScale * avgLen2);
  p = vec4(vec3(p) + avg, p.w);
}

VKC_NAMESPACE_END
#endif  // VKC_SHARED_COLLIDE_SHAPES_MATH_H
