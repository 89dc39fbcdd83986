// GLSL only: the device's check of one geometry of a device-resident batch (the host's validate()
// rules, which the device applies where the host cannot read the values): the LAYOUT pass of
// shaders/geometry_queries_device_layout.comp and the primitive-pair passes of the family shaders
// (shared/geometry_queries_family.h) call it. Every test is on the value's bits or a comparison that
// a NaN fails, so that a NaN or infinity is refused whatever the compiler assumes.
#ifndef VKC_SHARED_GEOMETRY_QUERIES_DEVICE_CHECKS_H
#define VKC_SHARED_GEOMETRY_QUERIES_DEVICE_CHECKS_H
#ifdef __cplusplus
#error "geometry_queries_device_checks.h is GLSL only"
#endif
#include "geometry_queries.h"

// Finite by its bits (no isnan/isinf, which a fast-math compiler may fold away).
bool geomDeviceFinite(float x) { return (floatBitsToUint(x) & 0x7F800000u) != 0x7F800000u; }
bool geomDeviceFiniteN(vec4 v, uint n) {
  bool ok = true;
  for (uint k = 0u; k < n; ++k) ok = ok && geomDeviceFinite(v[k]);
  return ok;
}
// Components [from, 4) are 0 (a NaN is not).
bool geomDeviceZeroFrom(vec4 v, uint from) {
  bool ok = true;
  for (uint k = from; k < 4u; ++k) ok = ok && v[k] == 0.0f;
  return ok;
}
// Length within kGeomUnitTolerance of 1 (the host's rule, in single precision).
bool geomDeviceUnit(vec4 v, uint n) {
  float s = v.x * v.x + v.y * v.y + v.z * v.z;
  if (n == 4u) s += v.w * v.w;
  return abs(sqrt(s) - 1.0f) <= kGeomUnitTolerance;  // false for a NaN
}

// An implicit geometry's grid: spacing, dimensions, sample count, and its samples within the
// gridSampleCount the batch binds.
bool geomDeviceGridValid(GeomShape g, uint gridSampleCount) {
  if (!geomDeviceFiniteN(g.p0, 3u) || !geomDeviceZeroFrom(g.p0, 3u) || !geomDeviceZeroFrom(g.p1, 3u) ||
      !geomDeviceZeroFrom(g.p2, 3u)) {
    return false;
  }
  for (uint k = 0u; k < 3u; ++k) {
    float s = g.p1[k];
    float d = g.p2[k];
    if (!(s > 0.0f) || !geomDeviceFinite(s)) return false;
    if (!(d >= 2.0f && d <= float(kGeomGridMaxDim)) || d != floor(d)) return false;
  }
  uint nxy = uint(g.p2.x) * uint(g.p2.y);  // <= 2^22
  uint nz = uint(g.p2.z);
  if (g.info.z % nxy != 0u || g.info.z / nxy != nz) return false;
  return g.info.y <= gridSampleCount && g.info.z <= gridSampleCount - g.info.y;
}

// The host's validate() of one geometry of a type the device path takes (no mesh, no unknown type);
// a point set's range within pointCount, a grid's within gridSampleCount.
bool geomDeviceShapeValid(GeomShape g, uint pointCount, uint gridSampleCount) {
  uint t = g.info.x;
  if (t >= kGeomTypeCount) return false;
  if (g.info.w != 0u && !(t == kGeomPlane && g.info.w == kGeomFlagBidirectional)) return false;
  if (t != kGeomPointSet && t != kGeomImplicit && (g.info.y != 0u || g.info.z != 0u)) return false;
  if (t == kGeomSphere) {
    return geomDeviceFiniteN(g.p0, 4u) && g.p0.w >= 0.0f && geomDeviceZeroFrom(g.p1, 0u) && geomDeviceZeroFrom(g.p2, 0u);
  }
  if (t == kGeomCapsule) {
    return geomDeviceFiniteN(g.p0, 4u) && geomDeviceFiniteN(g.p1, 3u) && g.p0.w >= 0.0f && geomDeviceZeroFrom(g.p1, 3u) &&
           geomDeviceZeroFrom(g.p2, 0u);
  }
  if (t == kGeomCylinder) {
    return geomDeviceFiniteN(g.p0, 4u) && geomDeviceFiniteN(g.p1, 4u) && g.p0.w >= 0.0f && g.p1.w >= 0.0f &&
           geomDeviceUnit(g.p1, 3u) && geomDeviceZeroFrom(g.p2, 0u);
  }
  if (t == kGeomOrientedBox) {
    return geomDeviceFiniteN(g.p0, 3u) && geomDeviceFiniteN(g.p1, 4u) && geomDeviceFiniteN(g.p2, 3u) &&
           geomDeviceZeroFrom(g.p0, 3u) && geomDeviceUnit(g.p1, 4u) && g.p2.x >= 0.0f && g.p2.y >= 0.0f && g.p2.z >= 0.0f &&
           geomDeviceZeroFrom(g.p2, 3u);
  }
  if (t == kGeomPlane) {
    return geomDeviceFiniteN(g.p0, 3u) && geomDeviceFiniteN(g.p1, 3u) && geomDeviceZeroFrom(g.p0, 3u) &&
           geomDeviceZeroFrom(g.p1, 3u) && geomDeviceUnit(g.p1, 3u) && geomDeviceZeroFrom(g.p2, 0u);
  }
  if (t == kGeomImplicit) return geomDeviceGridValid(g, gridSampleCount);
  // A point set.
  return geomDeviceZeroFrom(g.p0, 0u) && geomDeviceZeroFrom(g.p1, 0u) && geomDeviceZeroFrom(g.p2, 0u) &&
         g.info.y <= pointCount && g.info.z <= pointCount - g.info.y;
}

#endif  // VKC_SHARED_GEOMETRY_QUERIES_DEVICE_CHECKS_H
