// The per-pair arithmetic of the geometry queries, written once for the CPU twin
// (src/cpu/geometry_queries.cpp) and the future compute shader (GLSL: no recursion, no pointers,
// structs passed by value, `out` parameters through VKC_OUT). Methods follow
// shared/seeds/imstk-collision-detection.md; where we deviate, the comment says so.
//
// Every primitive pair reduces to "a ball (centre c, radius r >= 0) against a surface": the surface
// point closest to c, the outward unit normal there and the signed distance of c (negative inside)
// give one contact when r exceeds that distance. A point is a ball of radius 0; a capsule is the ball
// on its axis nearest to the other shape; a box or a capsule against a plane gives one ball per
// corner / end sphere.
#ifndef VKC_SHARED_GEOMETRY_QUERIES_MATH_H
#define VKC_SHARED_GEOMETRY_QUERIES_MATH_H
#include "geometry_queries.h"

VKC_NAMESPACE_BEGIN

// A read-only struct parameter of the hot GJK/EPA helpers: by reference in C++ (a copy of a 64-byte
// GeomConvex per support point cost a store-forwarding stall each), by value in GLSL.
#ifdef __cplusplus
#define VKC_GEOM_IN(type) const type&
#else
#define VKC_GEOM_IN(type) type
#endif

#ifdef __cplusplus
using glm::ceil;
using glm::cos;
using glm::sin;
#endif

// Direction used where a direction is undefined (a point at a sphere's centre, coincident centres).
VKC_CONSTANT(float, kGeomFallbackX, 0.0f);
VKC_CONSTANT(float, kGeomFallbackY, 0.0f);
VKC_CONSTANT(float, kGeomFallbackZ, 1.0f);

// The closest surface point to a query point: point.xyz the surface point, point.w the signed
// distance of the query point (negative inside); normal.xyz the outward unit normal of the surface
// there (the direction from the surface towards the query point when outside).
struct GeomClosest {
  vec4 point;
  vec4 normal;
};

VKC_FN vec3 geomUnit(vec3 v) { return v / sqrt(dot(v, v)); }

// A unit vector perpendicular to the unit vector a, chosen deterministically.
VKC_FN vec3 geomPerpendicularTo(vec3 a) {
  vec3 helper = vec3(0.0f, 0.0f, 1.0f);
  if (abs(a.z) > abs(a.x) && abs(a.z) > abs(a.y)) helper = vec3(1.0f, 0.0f, 0.0f);
  return geomUnit(cross(helper, a));
}

// Rotates v by the unit quaternion q (x, y, z, w), and by its inverse.
VKC_FN vec3 geomRotate(vec4 q, vec3 v) {
  vec3 u = vec3(q);
  vec3 t = cross(u, v) * 2.0f;
  return v + t * q.w + cross(u, t);
}
VKC_FN vec3 geomRotateInverse(vec4 q, vec3 v) { return geomRotate(vec4(-q.x, -q.y, -q.z, q.w), v); }

// q renormalized. Its length is summed in order, not by dot(q, q): GLM sums a vec4 dot pairwise and a
// GPU in order, which would round the two backends differently.
VKC_FN vec4 geomQuatUnit(vec4 q) { return q / sqrt(((q.x * q.x + q.y * q.y) + q.z * q.z) + q.w * q.w); }

VKC_FN GeomClosest geomMakeClosest(vec3 surface, vec3 normal, float distance) {
  GeomClosest c;
  c.point = vec4(surface, distance);
  c.normal = vec4(normal, 0.0f);
  return c;
}

// --- Closest surface points (the seed's "point vs X" methods; also the signed distance functions).

VKC_FN GeomClosest geomClosestSphere(vec3 centre, float radius, vec3 p) {
  vec3 d = p - centre;
  float len = sqrt(dot(d, d));
  vec3 n = vec3(kGeomFallbackX, kGeomFallbackY, kGeomFallbackZ);
  if (len > 0.0f) n = d / len;
  return geomMakeClosest(centre + n * radius, n, len - radius);
}

// The parameter in [0, 1] of the point of segment [p0, p1] closest to p (0 for a degenerate segment).
VKC_FN float geomSegmentParam(vec3 p0, vec3 p1, vec3 p) {
  vec3 e = p1 - p0;
  float ee = dot(e, e);
  if (ee <= 0.0f) return 0.0f;
  return clamp(dot(p - p0, e) / ee, 0.0f, 1.0f);
}

VKC_FN GeomClosest geomClosestCapsule(vec3 p0, vec3 p1, float radius, vec3 p) {
  float t = geomSegmentParam(p0, p1, p);
  return geomClosestSphere(mix(p0, p1, t), radius, p);
}

// The seed's three cases of a cylinder: wall, cap, rim. Inside the cylinder iMSTK always resolves
// through the wall; we take the nearer of wall and cap (the wall on a tie), the true closest surface
// point. A point on the axis takes the wall direction geomPerpendicularTo(axis).
VKC_FN GeomClosest geomClosestCylinder(vec3 centre, vec3 axis, float radius, float halfHeight, vec3 p) {
  vec3 d = p - centre;
  float y = dot(d, axis);
  vec3 radial = d - axis * y;
  float rho = sqrt(dot(radial, radial));
  vec3 u = rho > 0.0f ? radial / rho : geomPerpendicularTo(axis);
  float ay = abs(y);
  vec3 capNormal = y >= 0.0f ? axis : -axis;
  if (ay <= halfHeight && rho <= radius) {
    float wallDepth = radius - rho;
    float capDepth = halfHeight - ay;
    if (wallDepth <= capDepth) return geomMakeClosest(centre + axis * y + u * radius, u, -wallDepth);
    return geomMakeClosest(p + capNormal * capDepth, capNormal, -capDepth);
  }
  if (ay <= halfHeight) return geomMakeClosest(centre + axis * y + u * radius, u, rho - radius);
  if (rho <= radius) return geomMakeClosest(centre + capNormal * halfHeight + radial, capNormal, ay - halfHeight);
  vec3 rim = centre + capNormal * halfHeight + u * radius;
  vec3 off = p - rim;
  float len = sqrt(dot(off, off));
  return geomMakeClosest(rim, off / len, len);
}

// The seed's oriented box rules: outside, the clamped point; inside, the nearest face (x, then y,
// then z on ties; the + face when the coordinate is 0).
VKC_FN GeomClosest geomClosestBox(vec3 centre, vec4 rotation, vec3 halfExtents, vec3 p) {
  vec3 local = geomRotateInverse(rotation, p - centre);
  vec3 clamped = clamp(local, -halfExtents, halfExtents);
  vec3 off = local - clamped;
  float len2 = dot(off, off);
  if (len2 > 0.0f) {
    float len = sqrt(len2);
    return geomMakeClosest(centre + geomRotate(rotation, clamped), geomRotate(rotation, off / len), len);
  }
  vec3 faceDepth = halfExtents - abs(local);
  uint k = 0u;
  if (faceDepth.y < faceDepth[k]) k = 1u;
  if (faceDepth.z < faceDepth[k]) k = 2u;
  vec3 nLocal = vec3(0.0f);
  float side = local[k] >= 0.0f ? 1.0f : -1.0f;
  nLocal[k] = side;
  vec3 surface = local;
  surface[k] = side * halfExtents[k];
  return geomMakeClosest(centre + geomRotate(rotation, surface), geomRotate(rotation, nLocal), -faceDepth[k]);
}

// A plane as one-sided (the caller picks the normal of a two-sided plane: geomPlaneNormalFor).
VKC_FN GeomClosest geomClosestPlane(vec3 origin, vec3 normal, vec3 p) {
  float s = dot(p - origin, normal);
  return geomMakeClosest(p - normal * s, normal, s);
}

// The outward normal a plane shows to a shape with centre c: its normal, or for a two-sided plane
// the side of c (the normal itself when c lies on the plane). The seed's known weakness stays: a
// shape whose centre crosses a two-sided plane is pushed out on the other side.
VKC_FN vec3 geomPlaneNormalFor(GeomShape plane, vec3 c) {
  vec3 n = geomUnit(vec3(plane.p1));
  if ((plane.info.w & kGeomFlagBidirectional) != 0u && dot(c - vec3(plane.p0), n) < 0.0f) return -n;
  return n;
}

// The closest point of a sphere, capsule, cylinder or box (the ball partners), unit vectors renormalized.
VKC_FN GeomClosest geomClosestShape(GeomShape s, vec3 p) {
  uint type = s.info.x;
  if (type == kGeomSphere) return geomClosestSphere(vec3(s.p0), s.p0.w, p);
  if (type == kGeomCapsule) return geomClosestCapsule(vec3(s.p0), vec3(s.p1), s.p0.w, p);
  if (type == kGeomCylinder) return geomClosestCylinder(vec3(s.p0), geomUnit(vec3(s.p1)), s.p0.w, s.p1.w, p);
  return geomClosestBox(vec3(s.p0), geomQuatUnit(s.p1), vec3(s.p2), p);
}

// --- Contacts

VKC_FN GeomElement geomMakeElement(vec3 point, float depth, vec3 direction, uint type, uint index) {
  GeomElement e;
  e.point = vec4(point, depth);
  e.direction = vec4(direction, 0.0f);
  e.type = type;
  e.index = index;
  e.query = 0u;
  e.pad = 0u;
  return e;
}

// A ball (centre c, radius r) against the surface whose closest point to c is `cl`: a contact when
// r exceeds the signed distance (touching is no contact). The ball's element: its point deepest in
// the other shape, pushed along the surface normal; the other's: the surface point, pushed back.
VKC_FN bool geomBallContact(vec3 c, float r, GeomClosest cl, uint ballType, uint ballIndex,
                            VKC_OUT(GeomElement) ball, VKC_OUT(GeomElement) other) {
  float depth = r - cl.point.w;
  vec3 n = vec3(cl.normal);
  ball = geomMakeElement(c - n * r, depth, n, ballType, ballIndex);
  other = geomMakeElement(vec3(cl.point), depth, -n, kElementPointDirection, kGeomNoIndex);
  return depth > 0.0f;
}

// Closest points of two segments [p0, p1] and [q0, q1]: the parameters (s, t). Parallel segments
// take the middle of their overlap (projected on the first), or the nearer ends: one contact at the
// centre of the shared length rather than at an arbitrary end.
VKC_FN vec2 geomSegmentSegmentParams(vec3 p0, vec3 p1, vec3 q0, vec3 q1) {
  vec3 d1 = p1 - p0;
  vec3 d2 = q1 - q0;
  vec3 r = p0 - q0;
  float a = dot(d1, d1);
  float e = dot(d2, d2);
  float f = dot(d2, r);
  if (a <= 0.0f && e <= 0.0f) return vec2(0.0f);
  if (a <= 0.0f) return vec2(0.0f, clamp(f / e, 0.0f, 1.0f));
  float c = dot(d1, r);
  if (e <= 0.0f) return vec2(clamp(-c / a, 0.0f, 1.0f), 0.0f);
  float b = dot(d1, d2);
  float denom = a * e - b * b;
  float s = 0.0f;
  if (denom > 1e-6f * a * e) {
    s = clamp((b * f - c * e) / denom, 0.0f, 1.0f);
  } else {
    float sq0 = -c / a;
    float sq1 = (b - c) / a;
    float lo = max(min(sq0, sq1), 0.0f);
    float hi = min(max(sq0, sq1), 1.0f);
    if (lo <= hi) {
      s = (lo + hi) * 0.5f;
    } else {
      s = max(sq0, sq1) < 0.0f ? 0.0f : 1.0f;
    }
  }
  float t = (b * s + f) / e;
  if (t < 0.0f) {
    t = 0.0f;
    s = clamp(-c / a, 0.0f, 1.0f);
  } else if (t > 1.0f) {
    t = 1.0f;
    s = clamp((b - c) / a, 0.0f, 1.0f);
  }
  return vec2(s, t);
}

// The parameter of the point of segment [p0, p1] deepest in (or nearest to) shape s (box or
// cylinder): the minimum of the signed distance, convex along the segment, by golden-section search.
// The capsule then collides as the ball there: exact while the axis stays outside the shape; once
// the axis enters it, the depth is that of the deepest axis point (a point-based contact, as iMSTK's).
// The search evaluates the signed distance along the segment some 40 times: a box or cylinder gets
// the segment's ends in its frame once (a box: rotated into its axes; a cylinder: its unit axis
// computed once), and each evaluation is then a clamp or a projection, with no rotation or
// renormalization. Other shapes evaluate geomClosestShape.
struct GeomSegmentLocal {
  vec3 d0;    // the segment's ends relative to the shape (a box: in its axes)
  vec3 d1;
  vec3 axis;  // a cylinder's unit axis
  vec3 size;  // a box's half extents; a cylinder's radius, half height
  uint type;
};

VKC_FN GeomSegmentLocal geomSegmentLocal(vec3 p0, vec3 p1, GeomShape s) {
  GeomSegmentLocal l;
  l.type = s.info.x;
  l.axis = vec3(0.0f, 1.0f, 0.0f);
  l.size = vec3(s.p2);
  l.d0 = p0 - vec3(s.p0);
  l.d1 = p1 - vec3(s.p0);
  if (s.info.x == kGeomOrientedBox) {
    vec4 q = geomQuatUnit(s.p1);
    l.d0 = geomRotateInverse(q, l.d0);
    l.d1 = geomRotateInverse(q, l.d1);
  } else if (s.info.x == kGeomCylinder) {
    l.axis = geomUnit(vec3(s.p1));
    l.size = vec3(s.p0.w, s.p1.w, 0.0f);
  }
  return l;
}

// The signed distance (negative inside) of the segment's point at parameter x to the shape.
VKC_FN float geomSegmentLocalDistance(GeomSegmentLocal l, GeomShape s, vec3 p0, vec3 p1, float x) {
  vec3 d = mix(l.d0, l.d1, x);
  if (l.type == kGeomOrientedBox) {
    vec3 off = d - clamp(d, -l.size, l.size);
    float len2 = dot(off, off);
    if (len2 > 0.0f) return sqrt(len2);
    vec3 faceDepth = l.size - abs(d);
    return -min(min(faceDepth.x, faceDepth.y), faceDepth.z);
  }
  if (l.type == kGeomCylinder) {
    float y = dot(d, l.axis);
    vec3 radial = d - l.axis * y;
    float rho = sqrt(dot(radial, radial));
    float outR = rho - l.size.x;
    float outY = abs(y) - l.size.y;
    if (outR <= 0.0f && outY <= 0.0f) return max(outR, outY);
    if (outY <= 0.0f) return outR;
    if (outR <= 0.0f) return outY;
    return sqrt(outR * outR + outY * outY);
  }
  return geomClosestShape(s, mix(p0, p1, x)).point.w;
}

// One step of a golden-section search for a least value on [lo, hi] with inner points x1 < x2 (values
// f1, f2): the side of the lower inner point kept, x the new inner point to evaluate; true when it is
// the new x1 (its value goes to f1), false when the new x2 (to f2).
VKC_FN bool geomGoldenStep(VKC_INOUT(float) lo, VKC_INOUT(float) hi, VKC_INOUT(float) x1, VKC_INOUT(float) x2,
                           VKC_INOUT(float) f1, VKC_INOUT(float) f2, VKC_OUT(float) x) {
  const float g = kGeomGoldenSection;
  if (f1 <= f2) {
    hi = x2;
    x2 = x1;
    f2 = f1;
    x1 = hi - g * (hi - lo);
    x = x1;
    return true;
  }
  lo = x1;
  x1 = x2;
  f1 = f2;
  x2 = lo + g * (hi - lo);
  x = x2;
  return false;
}

VKC_FN float geomSegmentDeepestParam(vec3 p0, vec3 p1, GeomShape s) {
  GeomSegmentLocal l = geomSegmentLocal(p0, p1, s);
  float lo = 0.0f;
  float hi = 1.0f;
  const float g = kGeomGoldenSection;
  float x1 = hi - g * (hi - lo);
  float x2 = lo + g * (hi - lo);
  float f1 = 0.0f, f2 = 0.0f, fBest = 0.0f, f0 = 0.0f, fEnd = 0.0f;
  float best = 0.0f;
  // One evaluation per pass, so that a shader inlines geomSegmentLocalDistance (the closest point of
  // any primitive) once: x1 and x2, then each step of the search keeps the lower of its two inner
  // points and evaluates the new one, then the bracket's middle and the two ends (the minimum of a
  // monotone distance lies on an end).
  const uint steps = kGeomSegmentSearchSteps;
  bool keepLow = true;
  for (uint e = 0u; e < steps + 5u; ++e) {
    float x = x1;
    if (e == 1u) {
      x = x2;
    } else if (e >= 2u && e < steps + 2u) {
      keepLow = geomGoldenStep(lo, hi, x1, x2, f1, f2, x);
    } else if (e == steps + 2u) {
      best = (lo + hi) * 0.5f;
      x = best;
    } else if (e > steps + 2u) {
      x = e == steps + 3u ? 0.0f : 1.0f;
    }
    float f = geomSegmentLocalDistance(l, s, p0, p1, x);
    if (e == 0u || (e >= 2u && e < steps + 2u && keepLow)) {
      f1 = f;
    } else if (e < steps + 2u) {
      f2 = f;
    } else if (e == steps + 2u) {
      fBest = f;
    } else if (e == steps + 3u) {
      f0 = f;
    } else {
      fEnd = f;
    }
  }
  if (f0 <= fBest && f0 <= fEnd) return 0.0f;
  if (fEnd < fBest) return 1.0f;
  return best;
}

// Slot `slot` of a cylinder against a one-sided plane of normal n (kGeomCylinderPlaneSlots): its
// point, false where the slot has none. Slot 0 is the cylinder's lowest point: on the rim of the cap
// nearer the plane (the one at -axis when the axis is parallel to the plane), opposite n. A cylinder
// standing on a cap (kGeomCylinderFlatSine) adds that cap's rim a quarter, a half and three quarters of
// a turn on (slots 1-3: a square on the rim); one lying on its side adds the other cap's lowest rim
// point (slot 1: the ends of the lowest line). Each point below the plane is a contact, as a box's
// corners are: a flat cylinder on a plane rests on up to four contacts, a lying one on two. A cylinder
// standing exactly (no direction on the cap opposite n) starts its square along geomPerpendicularTo(axis).
VKC_FN bool geomCylinderPlanePoint(GeomShape cyl, vec3 n, uint slot, VKC_OUT(vec3) point) {
  vec3 axis = geomUnit(vec3(cyl.p1));
  float an = dot(axis, n);
  float h = cyl.p1.w;
  float r = cyl.p0.w;
  float axial = an < 0.0f ? h : -h;
  vec3 w = n - axis * an;
  float lw = sqrt(dot(w, w));
  vec3 down = lw > 1e-6f ? -w / lw : geomPerpendicularTo(axis);
  vec3 radial = down * r;
  point = vec3(0.0f);
  if (slot == 1u && abs(an) <= kGeomCylinderFlatSine) {  // lying: the other cap's lowest point
    if (h == 0.0f) return false;                         // a disc's caps are one
    axial = -axial;
  } else if (slot != 0u) {  // standing: the rest of the square on the lower cap's rim
    if (lw > kGeomCylinderFlatSine || r == 0.0f) return false;
    vec3 side = cross(axis, down) * r;
    radial = slot == 1u ? side : (slot == 2u ? -radial : -side);
  }
  point = vec3(cyl.p0) + axis * axial + radial;
  return true;
}

// Whether slot k of a box-plane pair is a distinct corner (a flat box repeats corners: the corner
// bits of zero extents are skipped).
VKC_FN bool geomBoxCornerDistinct(vec3 halfExtents, uint k) {
  for (uint i = 0u; i < 3u; ++i) {
    if (halfExtents[i] == 0.0f && ((k >> i) & 1u) != 0u) return false;
  }
  return true;
}

// Corner k of a box whose unit rotation q is given (x fastest, - before +).
VKC_FN vec3 geomBoxCornerRotated(GeomShape box, vec4 q, uint k) {
  vec3 e = vec3(box.p2);
  vec3 local = vec3((k & 1u) != 0u ? e.x : -e.x, (k & 2u) != 0u ? e.y : -e.y, (k & 4u) != 0u ? e.z : -e.z);
  return vec3(box.p0) + geomRotate(q, local);
}

VKC_FN vec3 geomBoxCorner(GeomShape box, uint k) {
  return geomBoxCornerRotated(box, geomQuatUnit(box.p1), k);
}

// --- Box vs box: the separating axis test (3 + 3 face axes, 9 edge-edge axes). The axis of least
// overlap gives the normal and the depth (an edge axis only when it beats the best face axis by more
// than kGeomBoxEdgeBias, relative: near-ties go to faces). One contact (no manifold yet):
//  - a face axis: the other box's deepest point (the middle of its deepest edge or face on ties),
//    held inside the reference face's rectangle;
//  - an edge axis: the closest points of the two edges.
VKC_CONSTANT(float, kGeomBoxEdgeBias, 1e-3f);
VKC_CONSTANT(float, kGeomParallelEps, 1e-6f);

VKC_FN float geomSignOrZero(float v) { return abs(v) <= kGeomParallelEps ? 0.0f : (v > 0.0f ? 1.0f : -1.0f); }

// The box's point farthest along L; the middle of the farthest edge or face on ties.
VKC_FN vec3 geomBoxSupport(vec3 c, vec3 ax, vec3 ay, vec3 az, vec3 e, vec3 L) {
  return c + ax * (e.x * geomSignOrZero(dot(ax, L))) + ay * (e.y * geomSignOrZero(dot(ay, L))) +
         az * (e.z * geomSignOrZero(dot(az, L)));
}

VKC_FN float geomBoxRadius(vec3 ax, vec3 ay, vec3 az, vec3 e, vec3 L) {
  return e.x * abs(dot(ax, L)) + e.y * abs(dot(ay, L)) + e.z * abs(dot(az, L));
}

// p with its coordinates along the reference box's axes other than `normalAxis` clamped to the box.
VKC_FN vec3 geomClampToFace(vec3 p, vec3 c, vec3 ax, vec3 ay, vec3 az, vec3 e, uint normalAxis) {
  vec3 d = p - c;
  float u = dot(d, ax);
  float v = dot(d, ay);
  float w = dot(d, az);
  if (normalAxis != 0u) u = clamp(u, -e.x, e.x);
  if (normalAxis != 1u) v = clamp(v, -e.y, e.y);
  if (normalAxis != 2u) w = clamp(w, -e.z, e.z);
  return c + ax * u + ay * v + az * w;
}

// Up to kGeomBoxBoxSlots contacts of one query, sides s and t (a box-box manifold).
struct GeomManifold {
  GeomElement s[8];
  GeomElement t[8];
  uint count;
};

// A convex polygon of up to 8 vertices (a box face clipped by 4 planes: 4 + 4).
struct GeomPolygon {
  vec3 p[8];
  uint n;
};

VKC_FN void geomPolygonPush(VKC_INOUT(GeomPolygon) poly, vec3 v) {
  if (poly.n < 8u) {
    poly.p[poly.n] = v;
    poly.n += 1u;
  }
}

// Sutherland-Hodgman: the part of poly with dot(p, axis) <= offset (points on the plane kept).
VKC_FN GeomPolygon geomClipPolygon(VKC_GEOM_IN(GeomPolygon) poly, vec3 axis, float offset) {
  GeomPolygon clipped;
  clipped.n = 0u;
  for (uint i = 0u; i < poly.n; ++i) {
    vec3 a = poly.p[i];
    vec3 b = poly.p[i + 1u < poly.n ? i + 1u : 0u];
    float da = dot(a, axis) - offset;
    float db = dot(b, axis) - offset;
    if (da <= 0.0f) geomPolygonPush(clipped, a);
    if ((da < 0.0f && db > 0.0f) || (da > 0.0f && db < 0.0f)) geomPolygonPush(clipped, a + (b - a) * (da / (da - db)));
  }
  return clipped;
}

// The contact manifold of a face axis: the incident box's face most opposed to the reference face
// (normal nRef, pointing out of the reference box towards the incident one), clipped by the
// reference face's four side planes; the clipped points below the reference face are the contacts,
// each with its own depth. Contacts in the clipped polygon's order, starting from the incident
// face's corner (-, -) along its first axis. Sides: the incident box's element at the point, the
// reference box's on its face. False when no clipped point is below the face.
VKC_FN bool geomBoxFaceManifold(vec3 cR, vec3 R0, vec3 R1, vec3 R2, vec3 eR, uint axis, vec3 nRef, vec3 cI, vec3 I0,
                                vec3 I1, vec3 I2, vec3 eI, bool referenceIsS, VKC_INOUT(GeomManifold) m) {
  vec3 R[3];
  R[0] = R0;
  R[1] = R1;
  R[2] = R2;
  vec3 I[3];
  I[0] = I0;
  I[1] = I1;
  I[2] = I2;
  // The incident face: the face of I whose normal is most opposed to nRef.
  uint k = 0u;
  float bestDot = abs(dot(I[0], nRef));
  for (uint j = 1u; j < 3u; ++j) {
    float dj = abs(dot(I[j], nRef));
    if (dj > bestDot) {
      bestDot = dj;
      k = j;
    }
  }
  float sk = dot(I[k], nRef) > 0.0f ? -1.0f : 1.0f;
  uint u = (k + 1u) % 3u;
  uint v = (k + 2u) % 3u;
  vec3 centre = cI + I[k] * (eI[k] * sk);
  vec3 du = I[u] * eI[u];
  vec3 dv = I[v] * eI[v];
  GeomPolygon poly;
  poly.n = 4u;
  poly.p[0] = centre - du - dv;
  poly.p[1] = centre + du - dv;
  poly.p[2] = centre + du + dv;
  poly.p[3] = centre - du + dv;
  // The four side planes: the two other axes in increasing order, each + then - (one clip in the loop
  // body: the device compiles it once).
  uint j0 = axis == 0u ? 1u : 0u;
  uint j1 = axis == 2u ? 1u : 2u;
  for (uint c = 0u; c < 4u; ++c) {
    uint j = c < 2u ? j0 : j1;
    bool plus = (c & 1u) == 0u;
    poly = geomClipPolygon(poly, plus ? R[j] : -R[j], plus ? dot(cR, R[j]) + eR[j] : eR[j] - dot(cR, R[j]));
  }
  float faceOffset = dot(cR, nRef) + eR[axis];
  m.count = 0u;
  for (uint i = 0u; i < poly.n; ++i) {
    vec3 p = poly.p[i];
    float depth = faceOffset - dot(p, nRef);
    if (!(depth > 0.0f)) continue;
    GeomElement incident = geomMakeElement(p, depth, nRef, kElementPointDirection, kGeomNoIndex);
    GeomElement reference = geomMakeElement(p + nRef * depth, depth, -nRef, kElementPointDirection, kGeomNoIndex);
    m.s[m.count] = referenceIsS ? reference : incident;
    m.t[m.count] = referenceIsS ? incident : reference;
    m.count += 1u;
  }
  return m.count > 0u;
}

// Box vs box (s, t): the separating axis test, then the manifold of the best face axis (up to 8
// contacts, each with its depth) or one contact for an edge axis. Where clipping leaves no point
// below the reference face (a face axis won within rounding), the single contact of the face axis:
// the other box's deepest point held inside the reference face. m.count 0: apart or touching.
// In two parts: the axis of least overlap (geomBoxBoxBestAxis; kind 3 where an axis separates the
// boxes), then its contacts (geomBoxBoxAxisManifold); the CPU SIMD twin runs the first in lanes.
struct GeomBoxBoxAxis {
  vec3 A[3];  // s's rotated x, y, z axes
  vec3 B[3];  // t's
  vec3 bestAxis;
  float best;  // its overlap
  uint kind;   // 0: a face of s, 1: a face of t, 2: an edge pair, 3: apart
  uint bi;
  uint bj;
};

VKC_FN GeomBoxBoxAxis geomBoxBoxBestAxis(GeomShape s, GeomShape t) {
  GeomBoxBoxAxis x;
  vec4 qs = geomQuatUnit(s.p1);
  vec4 qt = geomQuatUnit(t.p1);
  vec3 A[3];
  vec3 B[3];
  A[0] = geomRotate(qs, vec3(1.0f, 0.0f, 0.0f));
  A[1] = geomRotate(qs, vec3(0.0f, 1.0f, 0.0f));
  A[2] = geomRotate(qs, vec3(0.0f, 0.0f, 1.0f));
  B[0] = geomRotate(qt, vec3(1.0f, 0.0f, 0.0f));
  B[1] = geomRotate(qt, vec3(0.0f, 1.0f, 0.0f));
  B[2] = geomRotate(qt, vec3(0.0f, 0.0f, 1.0f));
  x.A[0] = A[0];
  x.A[1] = A[1];
  x.A[2] = A[2];
  x.B[0] = B[0];
  x.B[1] = B[1];
  x.B[2] = B[2];
  vec3 cA = vec3(s.p0);
  vec3 cB = vec3(t.p0);
  vec3 eA = vec3(s.p2);
  vec3 eB = vec3(t.p2);
  vec3 d = cB - cA;
  float best = 0.0f;
  vec3 bestAxis = vec3(0.0f);
  uint kind = 3u;  // 0: a face of s, 1: a face of t, 2: an edge pair, 3: none yet
  uint bi = 0u;
  uint bj = 0u;
  x.kind = 3u;
  x.best = 0.0f;
  x.bestAxis = vec3(0.0f);
  x.bi = 0u;
  x.bj = 0u;
  for (uint k = 0u; k < 6u; ++k) {
    vec3 L = k < 3u ? A[k] : B[k - 3u];
    float overlap = geomBoxRadius(A[0], A[1], A[2], eA, L) + geomBoxRadius(B[0], B[1], B[2], eB, L) - abs(dot(d, L));
    if (overlap <= 0.0f) return x;
    if (kind == 3u || overlap < best) {
      best = overlap;
      bestAxis = L;
      kind = k < 3u ? 0u : 1u;
      bi = k < 3u ? k : k - 3u;
    }
  }
  float faceBest = best;
  for (uint i = 0u; i < 3u; ++i) {
    for (uint j = 0u; j < 3u; ++j) {
      vec3 L = cross(A[i], B[j]);
      float len = sqrt(dot(L, L));
      if (len <= 1e-5f) continue;  // parallel edges: covered by the face axes
      L = L / len;
      float overlap = geomBoxRadius(A[0], A[1], A[2], eA, L) + geomBoxRadius(B[0], B[1], B[2], eB, L) - abs(dot(d, L));
      if (overlap <= 0.0f) return x;
      if (overlap < best && overlap < faceBest * (1.0f - kGeomBoxEdgeBias)) {
        best = overlap;
        bestAxis = L;
        kind = 2u;
        bi = i;
        bj = j;
      }
    }
  }
  x.bestAxis = bestAxis;
  x.best = best;
  x.kind = kind;
  x.bi = bi;
  x.bj = bj;
  return x;
}

// The contacts of the boxes s and t along the best axis x (geomBoxBoxBestAxis); none when kind is 3.
VKC_FN GeomManifold geomBoxBoxAxisManifold(VKC_GEOM_IN(GeomShape) s, VKC_GEOM_IN(GeomShape) t,
                                          VKC_GEOM_IN(GeomBoxBoxAxis) x) {
  GeomManifold m;
  m.count = 0u;
  if (x.kind == 3u) return m;
  vec3 A[3];
  vec3 B[3];
  A[0] = x.A[0];
  A[1] = x.A[1];
  A[2] = x.A[2];
  B[0] = x.B[0];
  B[1] = x.B[1];
  B[2] = x.B[2];
  vec3 cA = vec3(s.p0);
  vec3 cB = vec3(t.p0);
  vec3 eA = vec3(s.p2);
  vec3 eB = vec3(t.p2);
  vec3 d = cB - cA;
  vec3 bestAxis = x.bestAxis;
  float best = x.best;
  uint kind = x.kind;
  uint bi = x.bi;
  uint bj = x.bj;
  vec3 n = dot(d, bestAxis) < 0.0f ? -bestAxis : bestAxis;  // from s towards t
  if (kind < 2u) {
    // A face axis: s's face (kind 0) or t's (kind 1) is the reference. One call (the device compiles
    // the clipping once).
    bool sRef = kind == 0u;
    if (geomBoxFaceManifold(sRef ? cA : cB, sRef ? A[0] : B[0], sRef ? A[1] : B[1], sRef ? A[2] : B[2], sRef ? eA : eB,
                            bi, sRef ? n : -n, sRef ? cB : cA, sRef ? B[0] : A[0], sRef ? B[1] : A[1],
                            sRef ? B[2] : A[2], sRef ? eB : eA, sRef, m)) {
      return m;
    }
  }
  vec3 pA = vec3(0.0f);
  if (kind == 0u) {
    vec3 pB = geomBoxSupport(cB, B[0], B[1], B[2], eB, -n);
    pB = geomClampToFace(pB, cA, A[0], A[1], A[2], eA, bi);
    pA = pB + n * best;
  } else if (kind == 1u) {
    pA = geomBoxSupport(cA, A[0], A[1], A[2], eA, n);
    pA = geomClampToFace(pA, cB, B[0], B[1], B[2], eB, bi);
  } else {
    // The edge of s along A[bi] farthest along n, and the edge of t along B[bj] farthest along -n.
    vec3 midA = cA;
    vec3 midB = cB;
    for (uint k = 0u; k < 3u; ++k) {
      if (k != bi) midA += A[k] * (eA[k] * (dot(A[k], n) >= 0.0f ? 1.0f : -1.0f));
      if (k != bj) midB += B[k] * (eB[k] * (dot(B[k], n) <= 0.0f ? 1.0f : -1.0f));
    }
    vec3 a0 = midA - A[bi] * eA[bi];
    vec3 a1 = midA + A[bi] * eA[bi];
    vec3 b0 = midB - B[bj] * eB[bj];
    vec3 b1 = midB + B[bj] * eB[bj];
    vec2 st = geomSegmentSegmentParams(a0, a1, b0, b1);
    pA = mix(a0, a1, st.x);
  }
  m.s[0] = geomMakeElement(pA, best, -n, kElementPointDirection, kGeomNoIndex);
  m.t[0] = geomMakeElement(pA - n * best, best, n, kElementPointDirection, kGeomNoIndex);
  m.count = 1u;
  return m;
}

VKC_FN GeomManifold geomBoxBoxManifold(GeomShape s, GeomShape t) {
  return geomBoxBoxAxisManifold(s, t, geomBoxBoxBestAxis(s, t));
}

// --- Cylinder vs cylinder and cylinder vs box: no closed form. GJK and EPA below; where they cannot
// finish, this local search. The penetration depth is the least overlap over unit directions u,
// f(u) = g_s(u) + g_t(u) - (c_t - c_s).u, with g the support function of a shape centred at the
// origin (f <= 0 for some u: separated). It is searched from candidate directions (both shapes'
// axes, their cross products, the centres' difference and kGeomSphereSamples Fibonacci directions);
// the kGeomSearchStarts least are refined by a pattern search on the sphere (8 directions around the
// current one, the step halved down to kGeomSearchMinStep). A local method: it may stop at a local
// minimum (tests/geometry_queries/geometry_queries_epa_test.cpp compares it with EPA).
VKC_CONSTANT(uint, kGeomSphereSamples, 64u);
VKC_CONSTANT(float, kGeomSearchMinStep, 1e-6f);
VKC_CONSTANT(uint, kGeomSearchMaxSteps, 400u);

// A box or cylinder with its world axes computed once: the search evaluates its support function
// thousands of times. Box: axes[0..2] its rotated x, y, z, size its half extents. Cylinder: axes[0]
// its unit axis, size.x its radius, size.y its half height.
// GeomConvex::type of a mesh's cell (geometry_queries_mesh_prims.h), as the first shape s of GJK,
// EPA and the search: corners centre, centre + axis0, centre + axis1 (a segment: axis1 = axis0);
// axis2 the triangle's normal (a segment: 0); size: the two edges' lengths.
// GeomConvex::type of a tetrahedral mesh's tetrahedron (geometry_queries_mesh_tetra.h), likewise:
// corners centre and centre + axis0, axis1, axis2; size: those three edges' lengths.
VKC_CONSTANT(uint, kGeomConvexCell, 16u);
VKC_CONSTANT(uint, kGeomConvexTetra, 17u);

struct GeomConvex {
  vec3 centre;
  vec3 axis0;
  vec3 axis1;
  vec3 axis2;
  vec3 size;
  uint type;
};

VKC_FN GeomConvex geomMakeConvex(GeomShape s) {
  GeomConvex c;
  c.centre = vec3(s.p0);
  c.type = s.info.x;
  if (s.info.x == kGeomOrientedBox) {
    vec4 q = geomQuatUnit(s.p1);
    c.axis0 = geomRotate(q, vec3(1.0f, 0.0f, 0.0f));
    c.axis1 = geomRotate(q, vec3(0.0f, 1.0f, 0.0f));
    c.axis2 = geomRotate(q, vec3(0.0f, 0.0f, 1.0f));
    c.size = vec3(s.p2);
  } else {
    c.axis0 = geomUnit(vec3(s.p1));
    c.axis1 = vec3(0.0f);
    c.axis2 = vec3(0.0f);
    c.size = vec3(s.p0.w, s.p1.w, 0.0f);
  }
  return c;
}

VKC_FN uint geomAxisCount(VKC_GEOM_IN(GeomConvex) s) {
  return s.type == kGeomOrientedBox || s.type == kGeomConvexCell || s.type == kGeomConvexTetra ? 3u : 1u;
}

VKC_FN vec3 geomAxis(VKC_GEOM_IN(GeomConvex) s, uint i) { return i == 0u ? s.axis0 : (i == 1u ? s.axis1 : s.axis2); }

// The part of u across the unit axis a (au = a.u), projected twice: u nearly along a leaves a
// remainder of rounding whose component along a, once normalized, would tilt a cylinder's rim point
// off its cap (by up to the radius times float epsilon over the remainder's length).
VKC_FN vec3 geomAcross(vec3 a, vec3 u, float au) {
  vec3 w = u - a * au;
  return w - a * dot(w, a);
}

// The support function of the shape centred at the origin (box or cylinder), along unit u.
VKC_FN float geomCentredSupport(VKC_GEOM_IN(GeomConvex) s, vec3 u) {
  if (s.type == kGeomOrientedBox) {
    return s.size.x * abs(dot(s.axis0, u)) + s.size.y * abs(dot(s.axis1, u)) + s.size.z * abs(dot(s.axis2, u));
  }
  float au = dot(s.axis0, u);
  vec3 w = geomAcross(s.axis0, u, au);
  return s.size.x * sqrt(dot(w, w)) + s.size.y * abs(au);
}

// One call of geomCentredSupport per shape, whatever s is (a shader inlines each call: see
// geomConvexSearch).
VKC_FN float geomOverlapAlong(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, vec3 u) {
  bool corners = s.type == kGeomConvexCell || s.type == kGeomConvexTetra;
  float hs = 0.0f;
  if (s.type == kGeomConvexCell) {  // s's highest corner along u, less t's lowest point
    float h0 = dot(s.centre - t.centre, u);
    hs = max(h0, max(h0 + dot(s.axis0, u), h0 + dot(s.axis1, u)));
  } else if (s.type == kGeomConvexTetra) {  // likewise over the four corners
    float h0 = dot(s.centre - t.centre, u);
    hs = max(max(h0, h0 + dot(s.axis0, u)), max(h0 + dot(s.axis1, u), h0 + dot(s.axis2, u)));
  } else {
    hs = geomCentredSupport(s, u);
  }
  float sum = hs + geomCentredSupport(t, u);
  return corners ? sum : sum - dot(t.centre - s.centre, u);
}

// The point of a box or cylinder farthest along unit u; the middle of the farthest face or line on ties.
VKC_FN vec3 geomSupportPoint(GeomConvex s, vec3 u) {
  if (s.type == kGeomOrientedBox) return geomBoxSupport(s.centre, s.axis0, s.axis1, s.axis2, s.size, u);
  vec3 a = s.axis0;
  float au = dot(a, u);
  vec3 w = geomAcross(a, u, au);
  float lw = sqrt(dot(w, w));
  vec3 radial = lw > kGeomParallelEps ? w / lw * s.size.x : vec3(0.0f);
  return s.centre + a * (s.size.y * geomSignOrZero(au)) + radial;
}

// (cos, sin) of 2^i golden angles (pi (3 - sqrt 5)), i < 6: the Fibonacci directions' angles as
// products of fixed pairs, not by sin and cos (whose GPU and C library results differ in the last
// bits, which the search would amplify into another local optimum).
VKC_FN vec2 geomGoldenTurn(uint i) {
  if (i == 0u) return vec2(-0.737368882f, 0.67549032f);
  if (i == 1u) return vec2(0.0874257237f, -0.996171057f);
  if (i == 2u) return vec2(-0.984713495f, -0.174181953f);
  if (i == 3u) return vec2(0.93932128f, 0.343038619f);
  if (i == 4u) return vec2(0.764648974f, 0.644446969f);
  return vec2(0.16937618f, 0.985551476f);
}

// Direction k (< 64) of the Fibonacci sphere of kGeomSphereSamples points.
VKC_FN vec3 geomFibonacciDirection(uint k) {
  float z = 1.0f - (2.0f * float(k) + 1.0f) / float(kGeomSphereSamples);
  float r = sqrt(max(1.0f - z * z, 0.0f));
  vec2 cs = vec2(1.0f, 0.0f);  // k golden angles
  for (uint i = 0u; i < 6u; ++i) {
    if (((k >> i) & 1u) == 0u) continue;
    vec2 g = geomGoldenTurn(i);
    cs = vec2(cs.x * g.x - cs.y * g.y, cs.x * g.y + cs.y * g.x);
  }
  return vec3(r * cs.x, r * cs.y, z);
}

VKC_CONSTANT(uint, kGeomSearchStarts, 6u);  // the best candidates each refined by the pattern search

// The kGeomSearchStarts least overlaps found so far (ascending) and their directions.
struct GeomStarts {
  float vals[6];
  vec3 dirs[6];
};

// Tries u: false when u separates (overlap <= 0); else inserts it among the starts.
VKC_FN bool geomTryStart(GeomConvex s, GeomConvex t, vec3 u, VKC_INOUT(GeomStarts) starts) {
  float l2 = dot(u, u);
  if (l2 <= 1e-12f) return true;
  u = u / sqrt(l2);
  float f = geomOverlapAlong(s, t, u);
  if (f <= 0.0f) return false;
  for (uint k = 0u; k < kGeomSearchStarts; ++k) {
    if (f < starts.vals[k]) {
      float fv = starts.vals[k];
      vec3 fu = starts.dirs[k];
      starts.vals[k] = f;
      starts.dirs[k] = u;
      f = fv;
      u = fu;
    }
  }
  return true;
}

// (cos, sin) of k eighths of a turn, exact where they are 0 or 1.
VKC_FN vec2 geomOctant(uint k) {
  const float r = 0.70710678f;
  float c = (k == 0u) ? 1.0f : ((k == 4u) ? -1.0f : ((k == 2u || k == 6u) ? 0.0f : ((k == 1u || k == 7u) ? r : -r)));
  float sn = (k == 2u) ? 1.0f : ((k == 6u) ? -1.0f : ((k == 0u || k == 4u) ? 0.0f : ((k == 1u || k == 3u) ? r : -r)));
  return vec2(c, sn);
}

// The pattern search from u (overlap f there): false when it meets a separating direction.
VKC_FN bool geomRefineDirection(GeomConvex s, GeomConvex t, VKC_INOUT(float) f, VKC_INOUT(vec3) u) {
  float step = 0.25f;
  for (uint it = 0u; it < kGeomSearchMaxSteps && step >= kGeomSearchMinStep; ++it) {
    vec3 t1 = geomPerpendicularTo(u);
    vec3 t2 = cross(u, t1);
    vec3 centre = u;
    for (uint k = 0u; k < 8u; ++k) {
      vec2 cs = geomOctant(k);
      vec3 v = centre + (t1 * cs.x + t2 * cs.y) * step;
      v = v / sqrt(dot(v, v));
      float fv = geomOverlapAlong(s, t, v);
      if (fv <= 0.0f) return false;
      if (fv < f) {
        f = fv;
        u = v;
      }
    }
    if (u == centre) step *= 0.5f;
  }
  return true;
}

// The search's candidate directions in the order they are tried: extra; for each axis ai of s, ai and
// -ai, then for each axis aj of t the cross product ai x aj and its opposite; each axis of t and its
// opposite; t.centre - s.centre; the kGeomSphereSamples Fibonacci directions. Candidate n of
// geomSearchCandidateCount(s, t).
VKC_FN uint geomSearchCandidateCount(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t) {
  uint nt = geomAxisCount(t);
  return 2u + geomAxisCount(s) * (2u + 2u * nt) + 2u * nt + kGeomSphereSamples;
}

VKC_FN vec3 geomSearchCandidate(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, vec3 extra, uint n) {
  if (n == 0u) return extra;
  uint nt = geomAxisCount(t);
  uint perAxis = 2u + 2u * nt;
  uint axisPart = geomAxisCount(s) * perAxis;
  uint k = n - 1u;
  vec3 v = t.centre - s.centre;
  if (k < axisPart) {
    uint r = k % perAxis;
    vec3 ai = geomAxis(s, k / perAxis);
    v = r < 2u ? ai : cross(ai, geomAxis(t, (r - 2u) / 2u));
    k = r;
  } else if (k < axisPart + 2u * nt) {
    k -= axisPart;
    v = geomAxis(t, k / 2u);
  } else if (k > axisPart + 2u * nt) {
    return geomFibonacciDirection(k - axisPart - 2u * nt - 1u);
  } else {
    return v;
  }
  return (k & 1u) == 0u ? v : -v;
}

// The search's answer: false when it meets a separating direction; else the least overlap found
// (depth) and its direction u. extra: one more candidate (any length; 0: none). The candidates are
// tried in one loop, so that a shader compiles geomTryStart once per call of this function (with
// one call per candidate, the convex family's exact-arithmetic pipelines inlined it 27 times).
VKC_FN bool geomConvexSearch(GeomConvex s, GeomConvex t, vec3 extra, VKC_OUT(float) depth, VKC_OUT(vec3) dir) {
  depth = 0.0f;
  dir = vec3(0.0f, 0.0f, 1.0f);
  GeomStarts starts;
  for (uint k = 0u; k < kGeomSearchStarts; ++k) {
    starts.vals[k] = 3.0e38f;
    starts.dirs[k] = vec3(0.0f, 0.0f, 1.0f);
  }
  uint candidates = geomSearchCandidateCount(s, t);
  for (uint n = 0u; n < candidates; ++n) {
    if (!geomTryStart(s, t, geomSearchCandidate(s, t, extra, n), starts)) return false;
  }
  float best = 3.0e38f;
  vec3 u = vec3(0.0f, 0.0f, 1.0f);
  for (uint k = 0u; k < kGeomSearchStarts; ++k) {
    if (starts.vals[k] >= 3.0e38f) continue;
    float f = starts.vals[k];
    vec3 v = starts.dirs[k];
    if (!geomRefineDirection(s, t, f, v)) return false;
    if (f < best) {
      best = f;
      u = v;
    }
  }
  depth = best;
  dir = u;
  return true;
}

// --- GJK and EPA (Gilbert-Johnson-Keerthi; the expanding polytope algorithm) on the Minkowski
// difference M = S - T of a box or cylinder pair: M holds the origin exactly when they overlap, and
// the penetration depth is the distance from the origin to M's boundary, the least f(u) above. GJK
// finds a tetrahedron of M's support points around the origin (or a direction that separates); EPA
// grows it towards the boundary point nearest the origin until the polytope's nearest face is within
// kGeomEpaTolerance (relative to the shapes' size) of M's support along its normal. Fixed arrays and
// iteration caps; where GJK or EPA meets a degenerate simplex or a cap, the local search above answers
// instead, so the result is never worse than the search's.
VKC_CONSTANT(uint, kGeomGjkMaxIterations, 64u);
VKC_CONSTANT(uint, kGeomEpaMaxVertices, 128u);
VKC_CONSTANT(uint, kGeomEpaMaxFaces, 256u);
VKC_CONSTANT(uint, kGeomEpaMaxEdges, 64u);
VKC_CONSTANT(float, kGeomEpaTolerance, 1e-6f);
VKC_CONSTANT(float, kGeomEpaAcceptable, 1e-4f);
// The bounded EPA's (geomEpaCore) stop while its least overlap is one of the caller's candidate
// directions (the normal of a flat part of M: the direction is exact where it is the answer): that
// overlap within this of the lower bound, relative to the shapes' size. The answer is that overlap,
// which separates the shapes: too deep by this at most. A least overlap EPA found itself (a curved
// part of M, where the direction converges as the square root of the depth) stops there too, and
// Newton's method on the sphere (geomPolishDirection) then takes its direction to the local minimum.
// geomConvexSearchDeepest answers with the candidates' least overlap, no EPA, where the inscribed boxes'
// depth (geomBoxesDepthReaches) reaches it less this: the same contract.
VKC_CONSTANT(float, kGeomEpaBoundTolerance, 1e-4f);
VKC_CONSTANT(uint, kGeomGjkSeparated, 0u);
VKC_CONSTANT(uint, kGeomGjkOverlap, 1u);
VKC_CONSTANT(uint, kGeomGjkDegenerate, 2u);

// A vertex of a box or cylinder farthest along unit u: a box's corner, a point of a cylinder's rim
// (on ties, the + side; along the axis, the rim point at geomPerpendicularTo). GJK and EPA use these,
// not geomSupportPoint's middles of faces, which lie on the lines and planes of other support points
// and make flat simplices and faces.
VKC_FN vec3 geomSupportVertex(VKC_GEOM_IN(GeomConvex) s, vec3 u) {
  if (s.type == kGeomConvexCell) {  // a mesh's triangle or segment (geometry_queries_mesh_prims.h)
    float h1 = dot(s.axis0, u), h2 = dot(s.axis1, u);
    return s.centre + (h1 >= h2 ? (h1 > 0.0f ? s.axis0 : vec3(0.0f)) : (h2 > 0.0f ? s.axis1 : vec3(0.0f)));
  }
  if (s.type == kGeomConvexTetra) {  // the first corner of the greatest height (corner order)
    float h1 = dot(s.axis0, u), h2 = dot(s.axis1, u), h3 = dot(s.axis2, u);
    vec3 best = vec3(0.0f);
    float h = 0.0f;
    if (h1 > h) {
      best = s.axis0;
      h = h1;
    }
    if (h2 > h) {
      best = s.axis1;
      h = h2;
    }
    if (h3 > h) best = s.axis2;
    return s.centre + best;
  }
  if (s.type == kGeomOrientedBox) {
    float sx = dot(s.axis0, u) >= 0.0f ? 1.0f : -1.0f;
    float sy = dot(s.axis1, u) >= 0.0f ? 1.0f : -1.0f;
    float sz = dot(s.axis2, u) >= 0.0f ? 1.0f : -1.0f;
    return s.centre + s.axis0 * (s.size.x * sx) + s.axis1 * (s.size.y * sy) + s.axis2 * (s.size.z * sz);
  }
  vec3 a = s.axis0;
  float au = dot(a, u);
  vec3 w = geomAcross(a, u, au);
  float lw = sqrt(dot(w, w));
  vec3 radial = lw > kGeomParallelEps ? w / lw : geomPerpendicularTo(a);
  return s.centre + a * (au >= 0.0f ? s.size.y : -s.size.y) + radial * s.size.x;
}

// M's support point along unit u.
// One call of geomSupportVertex in a loop over the two shapes: a shader inlines every call (see
// geomConvexSearch).
VKC_FN vec3 geomMinkowskiSupportUnit(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, vec3 u) {
  vec3 v[2];
  for (uint i = 0u; i < 2u; ++i) v[i] = geomSupportVertex(i == 0u ? s : t, i == 0u ? u : -u);
  return v[0] - v[1];
}

// M's support point along d (any length).
VKC_FN vec3 geomMinkowskiSupport(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, vec3 d) { return geomMinkowskiSupportUnit(s, t, geomUnit(d)); }

// The size of a box or cylinder: its largest half extent, radius or half height.
VKC_FN float geomConvexScale(VKC_GEOM_IN(GeomConvex) c) { return max(max(c.size.x, c.size.y), c.size.z); }

// GJK's simplex: p[0] the newest point; n points.
struct GeomSimplex {
  vec3 p0;
  vec3 p1;
  vec3 p2;
  vec3 p3;
  uint n;
};

// The triangle case (a newest, b, c): the simplex of the feature nearest the origin and the next
// search direction (off the triangle when the origin lies in it). False for a flat triangle.
VKC_FN bool geomGjkTriangle(vec3 a, vec3 b, vec3 c, VKC_INOUT(GeomSimplex) sx, VKC_OUT(vec3) dir) {
  vec3 ab = b - a;
  vec3 ac = c - a;
  vec3 ao = -a;
  vec3 abc = cross(ab, ac);
  bool edgeAc = dot(cross(abc, ac), ao) > 0.0f && dot(ac, ao) > 0.0f;
  bool outsideAc = dot(cross(abc, ac), ao) > 0.0f;
  bool outsideAb = dot(cross(ab, abc), ao) > 0.0f;
  if (edgeAc) {
    sx.p0 = a;
    sx.p1 = c;
    sx.n = 2u;
    dir = cross(cross(ac, ao), ac);
  } else if (outsideAc || outsideAb) {
    if (dot(ab, ao) > 0.0f) {
      sx.p0 = a;
      sx.p1 = b;
      sx.n = 2u;
      dir = cross(cross(ab, ao), ab);
    } else {
      sx.p0 = a;
      sx.n = 1u;
      dir = ao;
    }
  } else {
    float side = dot(abc, ao);
    if (side == 0.0f) {  // the origin lies in the triangle: go on off either face
      sx.p0 = a;
      sx.p1 = b;
      sx.p2 = c;
      sx.n = 3u;
      dir = abc;
      return dot(abc, abc) > 0.0f;
    }
    sx.p0 = a;
    sx.p1 = side > 0.0f ? b : c;
    sx.p2 = side > 0.0f ? c : b;
    sx.n = 3u;
    dir = side > 0.0f ? abc : -abc;
  }
  return true;
}

// The outward normal (unnormalized) of face (a, b, c) of a tetrahedron whose fourth vertex is `opposite`.
VKC_FN vec3 geomOutwardNormal(vec3 a, vec3 b, vec3 c, vec3 opposite) {
  vec3 n = cross(b - a, c - a);
  return dot(n, opposite - a) > 0.0f ? -n : n;
}

// GJK: kGeomGjkOverlap with sx a tetrahedron around the origin, kGeomGjkSeparated when a direction
// separates S and T (touching included: no contact), kGeomGjkDegenerate otherwise.
VKC_FN uint geomGjk(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, VKC_OUT(GeomSimplex) sx) {
  vec3 dir = s.centre - t.centre;
  if (dot(dir, dir) == 0.0f) dir = vec3(1.0f, 0.0f, 0.0f);
  sx.p0 = geomMinkowskiSupport(s, t, dir);
  sx.p1 = vec3(0.0f);
  sx.p2 = vec3(0.0f);
  sx.p3 = vec3(0.0f);
  sx.n = 1u;
  dir = -sx.p0;
  float scale = geomConvexScale(s) + geomConvexScale(t);
  float tiny = 1e-12f * scale * scale * scale * scale;
  for (uint it = 0u; it < kGeomGjkMaxIterations; ++it) {
    if (!(dot(dir, dir) > tiny)) return kGeomGjkDegenerate;
    vec3 a = geomMinkowskiSupport(s, t, dir);
    if (dot(a, dir) <= 0.0f) return kGeomGjkSeparated;
    sx.p3 = sx.p2;
    sx.p2 = sx.p1;
    sx.p1 = sx.p0;
    sx.p0 = a;
    sx.n += 1u;
    if (sx.n == 2u) {
      vec3 ab = sx.p1 - a;
      vec3 ao = -a;
      if (dot(ab, ao) > 0.0f) {
        dir = cross(cross(ab, ao), ab);
        if (dot(dir, dir) <= tiny) dir = geomPerpendicularTo(geomUnit(ab));  // the origin lies on the segment
      } else {
        sx.n = 1u;
        dir = ao;
      }
    } else if (sx.n == 3u) {
      if (!geomGjkTriangle(a, sx.p1, sx.p2, sx, dir)) return kGeomGjkDegenerate;
    } else {
      vec3 b = sx.p1;
      vec3 c = sx.p2;
      vec3 d = sx.p3;
      vec3 ao = -a;
      vec3 nAbc = geomOutwardNormal(a, b, c, d);
      vec3 nAcd = geomOutwardNormal(a, c, d, b);
      vec3 nAdb = geomOutwardNormal(a, d, b, c);
      if (dot(nAbc, ao) > 0.0f) {
        if (!geomGjkTriangle(a, b, c, sx, dir)) return kGeomGjkDegenerate;
      } else if (dot(nAcd, ao) > 0.0f) {
        if (!geomGjkTriangle(a, c, d, sx, dir)) return kGeomGjkDegenerate;
      } else if (dot(nAdb, ao) > 0.0f) {
        if (!geomGjkTriangle(a, d, b, sx, dir)) return kGeomGjkDegenerate;
      } else {
        return kGeomGjkOverlap;  // the origin is inside (or on) the tetrahedron
      }
    }
  }
  return kGeomGjkDegenerate;
}

// EPA's polytope: vertices, faces (vertex indices, counter-clockwise seen from outside) with their
// outward unit normals and distances from the origin, and the horizon's edges while it grows.
struct GeomPolytope {
  vec3 v[kGeomEpaMaxVertices];
  uvec4 f[kGeomEpaMaxFaces];
  vec3 normal[kGeomEpaMaxFaces];
  float dist[kGeomEpaMaxFaces];  // apart from the normals: the nearest-face scan reads these alone
  uint edge[kGeomEpaMaxEdges];   // a | (b << 16): one word, one comparison in the twin search
  uint nv;
  uint nf;
  uint ne;
};

// The polytope is large (about 10 KB): C++ passes it to the helpers by reference; GLSL keeps it in one
// private global of the invocation (GLSL passes an inout parameter by copy: every array copied in and
// out per call, which lavapipe's compiler could not get rid of in reasonable time).
#ifdef __cplusplus
#define VKC_EPA_POLY_PARAM GeomPolytope &geomEpaPoly,
#define VKC_EPA_POLY_ARG geomEpaPoly,
#define VKC_EPA_POLY_DECL GeomPolytope geomEpaPoly;
#else
GeomPolytope geomEpaPoly;
#define VKC_EPA_POLY_PARAM
#define VKC_EPA_POLY_ARG
#define VKC_EPA_POLY_DECL
#endif

// Appends face (i, j, k); false when it is degenerate or the origin is outside it (numerical trouble).
VKC_FN bool geomEpaAddFace(VKC_EPA_POLY_PARAM uint i, uint j, uint k, float tiny) {
  if (geomEpaPoly.nf >= kGeomEpaMaxFaces) return false;
  vec3 n = cross(geomEpaPoly.v[j] - geomEpaPoly.v[i], geomEpaPoly.v[k] - geomEpaPoly.v[i]);
  float len = sqrt(dot(n, n));
  if (!(len > tiny)) return false;
  n = n / len;
  float dist = dot(n, geomEpaPoly.v[i]);
  if (dist < -tiny) return false;
  geomEpaPoly.f[geomEpaPoly.nf] = uvec4(i, j, k, 0u);
  geomEpaPoly.normal[geomEpaPoly.nf] = n;
  geomEpaPoly.dist[geomEpaPoly.nf] = dist;
  geomEpaPoly.nf += 1u;
  return true;
}

// Adds edge (a, b) of a removed face to the horizon, or removes its twin (b, a): edges shared by two
// removed faces are inside the hole.
VKC_FN bool geomEpaAddEdge(VKC_EPA_POLY_PARAM uint a, uint b) {
  uint twin = b | (a << 16u);
  for (uint e = 0u; e < geomEpaPoly.ne; ++e) {
    if (geomEpaPoly.edge[e] == twin) {
      geomEpaPoly.ne -= 1u;
      geomEpaPoly.edge[e] = geomEpaPoly.edge[geomEpaPoly.ne];
      return true;
    }
  }
  if (geomEpaPoly.ne >= kGeomEpaMaxEdges) return false;
  geomEpaPoly.edge[geomEpaPoly.ne] = a | (b << 16u);
  geomEpaPoly.ne += 1u;
  return true;
}

// The curvature of a cylinder's support function (centred at the origin) along v, applied to x: the
// Hessian r (P x - w (w.P x)) / |P v|, P the projection across the axis, w the unit radial direction
// of v (the rim's tangent is the only curved direction); 0 for a box or where v is along the axis.
VKC_FN vec3 geomCurvatureTimes(VKC_GEOM_IN(GeomConvex) c, vec3 v, vec3 x) {
  if (c.type != kGeomCylinder) return vec3(0.0f);
  vec3 a = c.axis0;
  vec3 w = geomAcross(a, v, dot(a, v));
  float lw = sqrt(dot(w, w));
  if (!(lw > 1e-3f)) return vec3(0.0f);
  w = w / lw;
  vec3 xa = x - a * dot(a, x);
  return (xa - w * dot(w, xa)) * (c.size.x / lw);
}

// x^T H y, H the Hessian of f(u) = g_s(u) + g_t(-u) - d.u at u. f is homogeneous of degree 1: its
// second derivative along a great circle through u (unit tangent x) is x^T H x less f itself.
// (One call of geomCurvatureTimes in a loop over the two shapes: see geomMinkowskiSupportUnit.)
VKC_FN float geomOverlapHessian(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, vec3 u, vec3 x, vec3 y) {
  vec3 h[2];
  for (uint i = 0u; i < 2u; ++i) h[i] = geomCurvatureTimes(i == 0u ? s : t, i == 0u ? u : -u, y);
  return dot(x, h[0] + h[1]);
}

// Newton's method for the local minimum of f on the sphere from u0: along the great circle normal to
// the unit k (a kink of f: where a cylinder's side or a box's edge or face is the support, f grows by
// h |k . u| off it) where constrained, else in the tangent plane. f(u) = M's support . u, for any u an
// upper bound of the depth: the least seen lowers best (and bestDir). It stops where the curvature is
// not positive or a step would exceed 0.1 rad (not the quadratic regime, or across a kink), after
// kGeomPolishSteps steps, or once a step is below 1e-6 rad.
VKC_CONSTANT(uint, kGeomPolishSteps, 8u);

VKC_FN void geomNewtonOnSphere(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, vec3 u0, bool constrained, vec3 k,
                               VKC_INOUT(float) best, VKC_INOUT(vec3) bestDir) {
  vec3 u = constrained ? geomUnit(u0 - k * dot(k, u0)) : u0;
  for (uint it = 0u; it < kGeomPolishSteps; ++it) {
    vec3 p = geomMinkowskiSupportUnit(s, t, u);
    float f = dot(p, u);
    if (f < best) {
      best = f;
      bestDir = u;
    }
    vec3 step;
    // The Hessian's entries in one loop (one call of geomOverlapHessian: see geomMinkowskiSupportUnit):
    // constrained, tau tau; else t1 t1, t1 t2, t2 t2.
    vec3 t1 = constrained ? geomUnit(cross(k, u)) : geomPerpendicularTo(u);
    vec3 t2 = cross(u, t1);
    float h[3];
    for (uint j = 0u; j < (constrained ? 1u : 3u); ++j) {
      h[j] = geomOverlapHessian(s, t, u, j == 2u ? t2 : t1, j == 0u ? t1 : t2);
    }
    if (constrained) {
      vec3 tau = t1;
      float c = h[0] - f;
      if (!(c > 0.0f)) return;
      step = tau * (-dot(p, tau) / c);
    } else {
      float h11 = h[0] - f;
      float h12 = h[1];
      float h22 = h[2] - f;
      float det = h11 * h22 - h12 * h12;
      if (!(h11 > 0.0f && det > 0.0f)) return;
      float g1 = dot(p, t1);
      float g2 = dot(p, t2);
      step = t1 * ((h12 * g2 - h22 * g1) / det) + t2 * ((h12 * g1 - h11 * g2) / det);
    }
    float len2 = dot(step, step);
    if (!(len2 < 0.01f) || len2 < 1e-12f) return;
    u = u + step;
    if (constrained) u = u - k * dot(k, u);
    u = geomUnit(u);
  }
}

// Polishes EPA's direction u0 of a curved least overlap (within kGeomEpaBoundTolerance of the depth)
// into a local minimum of f: Newton in the tangent plane (a rim's curved part; not where u0 lies within
// kGeomKinkBand of a cylinder's axis, a cap's normal), and along each kink within kGeomKinkBand of u0
// (|axis . u0| <= kGeomKinkBand: a side or a box's edge or face); the least f of them all. Never worse
// than EPA's direction.
VKC_CONSTANT(float, kGeomKinkBand, 1e-2f);

VKC_FN void geomPolishDirection(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, VKC_INOUT(float) best,
                                VKC_INOUT(vec3) bestDir) {
  vec3 u0 = bestDir;
  float as = dot(s.axis0, u0);
  bool nearCap = as * as > 1.0f - kGeomKinkBand * kGeomKinkBand;
  if (t.type == kGeomCylinder) {
    float at = dot(t.axis0, u0);
    nearCap = nearCap || at * at > 1.0f - kGeomKinkBand * kGeomKinkBand;
  }
  // One call site (GLSL inlines every call): attempt 0 the tangent plane, 1 s's axis, 2.. t's axes.
  for (uint attempt = 0u; attempt < 2u + geomAxisCount(t); ++attempt) {
    vec3 k = attempt == 1u ? s.axis0 : geomAxis(t, attempt < 2u ? 0u : attempt - 2u);
    bool constrained = attempt > 0u;
    if (constrained ? abs(dot(k, u0)) > kGeomKinkBand : nearCap) continue;
    geomNewtonOnSphere(s, t, u0, constrained, constrained ? k : vec3(0.0f), best, bestDir);
  }
}

// EPA from GJK's tetrahedron: true with the depth and unit direction u (S moves along -u, T along u);
// false when it cannot finish (the caller falls back to the search).
// With `bounded`, EPA also keeps the least overlap f(u) seen so far (an upper bound of the depth:
// moving s by -u f(u) separates the shapes), starting from `upper` along `upperDir` (the caller's
// candidate directions), and stops as soon as the polytope's nearest face (a lower bound) is within
// the tolerance of it: then depth and dir are that least overlap and its direction. Where the
// answer lies on a flat part of M (a box face, a cylinder's cap, a face of two parallel edges),
// a candidate direction is that answer exactly and EPA stops once its lower bound reaches it. Where
// the least overlap is EPA's own (a curved part) and within the same tolerance, its direction is
// polished into the local minimum (geomPolishDirection) and EPA stops.
VKC_FN bool geomEpaCore(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, GeomSimplex sx, bool bounded,
                        float upper, vec3 upperDir, VKC_OUT(float) depth, VKC_OUT(vec3) dir) {
  depth = 0.0f;
  dir = vec3(0.0f, 0.0f, 1.0f);
  float scale = geomConvexScale(s) + geomConvexScale(t);
  float tiny = 1e-7f * scale * scale;
  float tolerance = kGeomEpaTolerance * scale;
  float boundTolerance = kGeomEpaBoundTolerance * scale;
  bool upperIsCandidate = true;
  float coplanar = 1e-6f * scale;
  float acceptable = kGeomEpaAcceptable * scale;
  bool finishable = false;
  VKC_EPA_POLY_DECL
  geomEpaPoly.v[0] = sx.p0;
  geomEpaPoly.v[1] = sx.p1;
  geomEpaPoly.v[2] = sx.p2;
  geomEpaPoly.v[3] = sx.p3;
  geomEpaPoly.nv = 4u;
  geomEpaPoly.nf = 0u;
  geomEpaPoly.ne = 0u;
  // The tetrahedron's faces, wound outwards.
  for (uint k = 0u; k < 4u; ++k) {
    uint i0 = (k + 1u) % 4u;
    uint i1 = (k + 2u) % 4u;
    uint i2 = (k + 3u) % 4u;
    vec3 n = cross(geomEpaPoly.v[i1] - geomEpaPoly.v[i0], geomEpaPoly.v[i2] - geomEpaPoly.v[i0]);
    if (dot(n, geomEpaPoly.v[k] - geomEpaPoly.v[i0]) > 0.0f) {
      uint swap = i1;
      i1 = i2;
      i2 = swap;
    }
    if (!geomEpaAddFace(VKC_EPA_POLY_ARG i0, i1, i2, tiny)) return false;
  }
  for (uint it = 0u; it < kGeomEpaMaxVertices; ++it) {
    uint best = 0u;
    for (uint f = 1u; f < geomEpaPoly.nf; ++f) {
      if (geomEpaPoly.dist[f] < geomEpaPoly.dist[best]) best = f;
    }
    // The bounded EPA grows first towards the best candidate direction, not the nearest face.
    bool towardsUpper = bounded && it == 0u;
    vec3 n = towardsUpper ? upperDir : geomEpaPoly.normal[best];
    float dist = geomEpaPoly.dist[best];
    vec3 p = bounded ? geomMinkowskiSupportUnit(s, t, n) : geomMinkowskiSupport(s, t, n);
    float gap = dot(p, n) - dist;
    depth = dist;
    dir = n;
    // Where the polytope cannot grow further (a cap, a face too small to orient), the answer stands
    // if it is within kGeomEpaAcceptable: the polytope is then fine around it.
    if (towardsUpper) {
      finishable = false;
    } else if (bounded) {
      if (dist + gap < upper) {
        upper = dist + gap;
        upperDir = n;
        upperIsCandidate = false;
      }
      if (!upperIsCandidate && upper - dist <= boundTolerance) {
        // A curved part within the candidates' contract: its direction polished into the local
        // minimum (exact where Newton converges), no more EPA iterations.
        geomPolishDirection(s, t, upper, upperDir);
        upperIsCandidate = true;
      }
      depth = upper;
      dir = upperDir;
      if (upper - dist <= (upperIsCandidate ? boundTolerance : tolerance)) return true;
      finishable = upper - dist <= acceptable;
    } else {
      if (gap <= tolerance) return true;
      finishable = gap <= acceptable;
    }
    if (geomEpaPoly.nv >= kGeomEpaMaxVertices) return finishable;
    uint m = geomEpaPoly.nv;
    geomEpaPoly.v[m] = p;
    geomEpaPoly.nv += 1u;
    // Remove the faces p sees, and those whose plane it lies on within `coplanar` (M of a box and a
    // cylinder with parallel axes has whole segments and rectangles of support points: a face built on
    // a horizon edge p lies on would be flat). From the last face, so that the face swapped in was
    // already tested; the edges of the removed faces that no other removed face shares are the horizon.
    geomEpaPoly.ne = 0u;
    for (uint k = geomEpaPoly.nf; k > 0u; --k) {
      uint f = k - 1u;
      // (The bounded EPA measures p's height over the face by the face's distance: no vertex read.)
      vec3 normal = geomEpaPoly.normal[f];
      float above = bounded ? dot(normal, p) - geomEpaPoly.dist[f] : dot(normal, p - geomEpaPoly.v[geomEpaPoly.f[f].x]);
      if (above > -coplanar) {
        uvec4 face = geomEpaPoly.f[f];
        if (!geomEpaAddEdge(VKC_EPA_POLY_ARG face.x, face.y) || !geomEpaAddEdge(VKC_EPA_POLY_ARG face.y, face.z) ||
            !geomEpaAddEdge(VKC_EPA_POLY_ARG face.z, face.x)) {
          return finishable;
        }
        geomEpaPoly.nf -= 1u;
        geomEpaPoly.f[f] = geomEpaPoly.f[geomEpaPoly.nf];
        geomEpaPoly.normal[f] = geomEpaPoly.normal[geomEpaPoly.nf];
        geomEpaPoly.dist[f] = geomEpaPoly.dist[geomEpaPoly.nf];
      }
    }
    if (geomEpaPoly.ne == 0u) {
      if (towardsUpper) continue;  // the candidate's support point adds nothing
      return finishable;
    }
    for (uint e = 0u; e < geomEpaPoly.ne; ++e) {
      uint edge = geomEpaPoly.edge[e];
      if (!geomEpaAddFace(VKC_EPA_POLY_ARG edge & 0xFFFFu, edge >> 16u, m, tiny)) return finishable;
    }
  }
  return finishable;
}

VKC_FN bool geomEpa(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, GeomSimplex sx, VKC_OUT(float) depth, VKC_OUT(vec3) dir) {
  return geomEpaCore(s, t, sx, false, 0.0f, vec3(0.0f), depth, dir);
}

// Cylinder vs cylinder and cylinder vs box: GJK and EPA, the search where they cannot finish. One
// contact: the first shape's point farthest along u (the middle of a face or line on ties), and the
// same point moved back by the depth.
// The penetration of s and t: GJK decides; EPA's depth and direction u (s moves along -u), or with
// refineEpa EPA's direction as one more candidate of the search; the search alone where GJK or EPA
// cannot finish. False when apart or touching.
VKC_FN bool geomConvexPenetration(GeomConvex s, GeomConvex t, bool refineEpa, VKC_OUT(float) depth,
                                  VKC_OUT(vec3) u) {
  depth = 0.0f;
  u = vec3(0.0f, 0.0f, 1.0f);
  GeomSimplex sx;
  uint gjk = geomGjk(s, t, sx);
  if (gjk == kGeomGjkSeparated) return false;
  bool found = gjk == kGeomGjkOverlap && geomEpa(s, t, sx, depth, u);
  vec3 extra = found && refineEpa ? u : vec3(0.0f);
  if ((!found || refineEpa) && !geomConvexSearch(s, t, extra, depth, u)) return false;
  return depth > 0.0f;
}

// The unit cross product of unit axes a and b, or 0 where they are nearly parallel.
VKC_FN vec3 geomAxisCross(vec3 a, vec3 b) {
  vec3 c = cross(a, b);
  float len = sqrt(dot(c, c));
  return len > 1e-3f ? c / len : vec3(0.0f);
}

// The least overlap f(u) of the cylinder s and the cylinder or box t over a few candidate directions
// u, each turned towards t (d.u >= 0, d = t's centre less s's): the line of the centres, the shapes'
// own axes and the cross products of the cylinder's axis with the other's axes (where not nearly
// parallel). These are the normals of the flat parts of the Minkowski difference (caps, box faces,
// the faces of two edges), so the least of them is often the penetration itself. f <= 0: u separates
// (or the shapes touch along it); the search then stops at the first such direction.
VKC_FN bool geomTryCandidate(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, vec3 u, VKC_INOUT(float) least, VKC_INOUT(vec3) leastDir) {
  vec3 v = dot(t.centre - s.centre, u) < 0.0f ? -u : u;
  float f = geomOverlapAlong(s, t, v);
  if (f < least) {
    least = f;
    leastDir = v;
  }
  return least <= 0.0f;
}

VKC_FN void geomConvexCandidates(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, VKC_OUT(float) least, VKC_OUT(vec3) leastDir) {
  least = 3.0e38f;
  leastDir = vec3(0.0f, 0.0f, 1.0f);
  vec3 d = t.centre - s.centre;
  float dd = dot(d, d);
  if (dd > 0.0f && geomTryCandidate(s, t, d / sqrt(dd), least, leastDir)) return;
  if (geomTryCandidate(s, t, s.axis0, least, leastDir)) return;
  for (uint i = 0u; i < geomAxisCount(t); ++i) {
    vec3 a = geomAxis(t, i);
    if (geomTryCandidate(s, t, a, least, leastDir)) return;
    vec3 c = geomAxisCross(s.axis0, a);
    if (dot(c, c) > 0.0f && geomTryCandidate(s, t, c, least, leastDir)) return;
  }
}

// A lower bound of the penetration depth that can prove the candidates' least overlap: shapes S' in S
// and T' in T keep overlapping under every move shorter than their own penetration depth, so that
// depth bounds S and T's from below. S' and T' are boxes (a box itself; a cylinder's inscribed box:
// its axis, half height and two axes across at 45 degrees to the radial direction w, half extents
// r / sqrt 2 shrunk by 1e-6, so that one vertical edge lies on the cylinder's side at w): two boxes'
// depth is exact by separating axes, the least overlap over their face normals and the 9 cross
// products of their edges (the facet normals of their Minkowski difference; more directions only add
// larger overlaps). With w the radial direction of the candidates' best direction u (s's side
// farthest along u; t's along -u), the inscribed boxes keep the faces, rim points and side lines
// that touch along u where the answer is flat (a cap on a rim point or box corner, a box face on a
// rim point, two side lines), and a deep overlap is often as deep for them along every other
// direction. The cylinder's box across u (u along its axis): w is the centres' line across the axis.
VKC_FN GeomConvex geomCylinderInnerBox(VKC_GEOM_IN(GeomConvex) c, vec3 u, vec3 d) {
  if (c.type != kGeomCylinder) return c;
  vec3 a = c.axis0;
  vec3 w = geomAcross(a, u, dot(a, u));
  float ww = dot(w, w);
  if (!(ww > 1e-6f)) {
    w = geomAcross(a, d, dot(a, d));
    ww = dot(w, w);
  }
  w = ww > 1e-12f ? w / sqrt(ww) : geomPerpendicularTo(a);
  vec3 v = cross(a, w);
  GeomConvex b;
  b.centre = c.centre;
  b.type = kGeomOrientedBox;
  b.axis0 = a;
  b.axis1 = (w + v) * 0.70710678f;
  b.axis2 = (w - v) * 0.70710678f;
  float e = c.size.x * 0.7071061f;  // r / sqrt 2, less 1e-6 of it: inside the cylinder under rounding
  b.size = vec3(c.size.y, e, e);
  return b;
}

// Row i of the 3x3 matrix of rows r0, r1, r2.
VKC_FN vec3 geomRow(vec3 r0, vec3 r1, vec3 r2, uint i) { return i == 0u ? r0 : (i == 1u ? r1 : r2); }

// Whether the penetration depth of boxes a and b (GeomConvex, orthonormal axes) reaches `least`: the
// separating-axis overlaps in a's frame (R_ij = a_i . b_j; the overlap along a_i x b_j divided by its
// length). False as soon as one is less, or where two edges are nearly but not exactly parallel
// (|a_i x b_j|^2 < 1e-4: a thin facet whose direction rounding decides; exactly parallel axes, whose
// cross product is 0, have no facet of their own).
VKC_FN bool geomBoxesDepthReaches(VKC_GEOM_IN(GeomConvex) a, VKC_GEOM_IN(GeomConvex) b, float least) {
  vec3 d = b.centre - a.centre;
  vec3 t = vec3(dot(d, a.axis0), dot(d, a.axis1), dot(d, a.axis2));
  vec3 r0 = vec3(dot(a.axis0, b.axis0), dot(a.axis0, b.axis1), dot(a.axis0, b.axis2));
  vec3 r1 = vec3(dot(a.axis1, b.axis0), dot(a.axis1, b.axis1), dot(a.axis1, b.axis2));
  vec3 r2 = vec3(dot(a.axis2, b.axis0), dot(a.axis2, b.axis1), dot(a.axis2, b.axis2));
  vec3 q0 = abs(r0), q1 = abs(r1), q2 = abs(r2);
  for (uint i = 0u; i < 3u; ++i) {  // a's face normals
    if (a.size[i] + dot(b.size, geomRow(q0, q1, q2, i)) - abs(t[i]) < least) return false;
  }
  for (uint j = 0u; j < 3u; ++j) {  // b's face normals
    float ra = (a.size.x * q0[j] + a.size.y * q1[j]) + a.size.z * q2[j];
    if (ra + b.size[j] - abs(dot(d, geomAxis(b, j))) < least) return false;
  }
  for (uint i = 0u; i < 3u; ++i) {
    uint i1 = (i + 1u) % 3u, i2 = (i + 2u) % 3u;
    vec3 ri = geomRow(r0, r1, r2, i), r1i = geomRow(r0, r1, r2, i1), r2i = geomRow(r0, r1, r2, i2);
    vec3 qi = abs(ri), q1i = abs(r1i), q2i = abs(r2i);
    for (uint j = 0u; j < 3u; ++j) {
      uint j1 = (j + 1u) % 3u, j2 = (j + 2u) % 3u;
      vec3 c = cross(geomAxis(a, i), geomAxis(b, j));
      float cc = dot(c, c);
      if (cc == 0.0f) continue;  // parallel edges (equal axes): no facet of their own
      if (cc < 1e-4f) return false;
      float ra = a.size[i1] * q2i[j] + a.size[i2] * q1i[j];
      float rb = b.size[j1] * qi[j2] + b.size[j2] * qi[j1];
      float sep = abs(t[i2] * r1i[j] - t[i1] * r2i[j]);
      if (ra + rb - sep < least * sqrt(cc)) return false;
    }
  }
  return true;
}

// Cylinders with parallel axes (|a_s x a_t| <= kGeomCylinderParallel): M is itself a cylinder along
// the axis, of radius r_s + r_t and half height h_s + h_t, around t's centre less s's (d): the
// depth is exact, the lesser of the axial overlap h_s + h_t - |d.a| (along a, turned towards t) and
// the radial one r_s + r_t - |d across a| (along d across a; coaxial: geomPerpendicularTo(a)), the
// axial one on ties. False when either is <= 0 (apart or touching).
VKC_CONSTANT(float, kGeomCylinderParallel, 1e-6f);

VKC_FN bool geomCylindersParallel(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t) {
  vec3 c = cross(s.axis0, t.axis0);
  return dot(c, c) <= kGeomCylinderParallel * kGeomCylinderParallel;
}

VKC_FN bool geomParallelCylinders(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, VKC_OUT(float) depth,
                                  VKC_OUT(vec3) u) {
  vec3 a = s.axis0;
  vec3 d = t.centre - s.centre;
  float dz = dot(d, a);
  vec3 w = geomAcross(a, d, dz);
  float rho = sqrt(dot(w, w));
  float axial = s.size.y + t.size.y - abs(dz);
  float radial = s.size.x + t.size.x - rho;
  depth = min(axial, radial);
  u = radial < axial ? (rho > 0.0f ? w / rho : geomPerpendicularTo(a)) : (dz < 0.0f ? -a : a);
  return axial > 0.0f && radial > 0.0f;
}

// Cylinder s vs box t by their critical points (docs/geometry-queries.md, "Cylinder vs box"). With
// d = t's centre less s's and K = S + T about the origin (both centrally symmetric), the depth is the
// distance from d to K's boundary, min over unit n of f(n) = g_s(n) + g_t(n) - |d.n|, and every n's f
// is an upper bound (f <= 0: apart). Each 2-D piece of K's boundary is a feature of the cylinder
// (cap, side, rim) plus one of the box (vertex, edge, face) whose normals meet; the nearest boundary
// point lies on one of them, where d - x is along the piece's normal: box face normals and the axis
// (flat), a x u_k (side + edge, flat), side + vertex (d - v across the axis), rim + vertex (the
// circle's point nearest d), rim + edge (the nearest point of an ellipse: the rim seen along the
// edge). geomConvexCandidates tried the flat ones; this lowers its least overlap (least, leastDir)
// by the curved ones' normals. False where an edge is within kGeomCritParallel of the axis (the
// ellipse is nearly a circle: the caller's GJK and EPA answer instead).
VKC_CONSTANT(float, kGeomCritParallel, 1e-3f);
VKC_CONSTANT(float, kGeomCritThin, 1e-4f);  // |a . u_k| below it: the ellipse is flat, the axis' face
VKC_CONSTANT(uint, kGeomCritSteps, 24u);    // bisection steps of the far half's least g
VKC_CONSTANT(uint, kGeomCritNewton, 16u);   // Newton steps of the ellipse's root

// The unit normal, in the ellipse's frame, of its point (x0, x1) nearest (y0, y1) among those with
// x1 >= 0; semi-axes 1 and e1 = c (0 < c <= 1). The point has x = (r0 y0/(s + r0), y1/(s + 1)) in
// Eberly's scaled form (r0 = 1/c^2, z = (y0, y1/c)) for the root s of g(s) = (r0 z0/(s + r0))^2 +
// (z1/(s + 1))^2 - 1: on s > -1 where y1 >= 0 (the nearest point overall); where y1 < 0 the root
// nearest -1 on (-r0, -1) (a local minimum on the far half; g is convex there: a point where g < 0
// by bisection on g' towards its least, then the root); none there: false. y0 >= 0 (the caller reflects).
VKC_FN bool geomEllipseNormal(float y0, float y1, float c, VKC_OUT(vec2) normal) {
  normal = vec2(0.0f, 1.0f);
  float r0 = 1.0f / (c * c);
  float z0 = max(y0, 1e-20f);
  float z1 = y1 / c;
  float a0 = r0 * z0;
  float lo, hi;
  if (z1 >= 0.0f) {
    z1 = max(z1, 1e-20f);
    float g = z0 * z0 + z1 * z1 - 1.0f;
    lo = z1 - 1.0f;
    hi = g < 0.0f ? 0.0f : sqrt(a0 * a0 + z1 * z1) - 1.0f;
  } else {
    // Two stationary points on the far half only inside the ellipse's evolute, which lies within
    // |x0| < 1 - c^2, |x1| < (1 - c^2) / c (in z: |z1| < (1 - c^2) / c^2).
    float e = 1.0f - c * c;
    if (!(z0 < e && -z1 < e * r0)) return false;
    // Any s with g(s) < 0 brackets the root nearest -1: bisection on g' towards g's least point
    // until one is met (none: no root, no local minimum there).
    lo = -r0;
    hi = -1.0f;
    float s = 0.5f * (lo + hi);
    float ra = 0.0f;
    bool found = false;
    for (uint it = 0u; it < kGeomCritSteps && !found; ++it) {
      s = 0.5f * (lo + hi);
      float p = s + r0, q = s + 1.0f;
      ra = a0 / p;
      float rb = z1 / q;
      found = ra * ra + rb * rb < 1.0f;
      if (rb * rb / -q - ra * ra / p > 0.0f) hi = s; else lo = s;  // g' > 0: the least point is left
    }
    if (!found) return false;
    // The root lies in [s, -1], where a0 / (s + r0) is at most ra: (z1 / (s + 1))^2 = 1 - (a0 / (s +
    // r0))^2 puts it within |z1| / sqrt(1 - ra^2) of -1, and g <= 0 there too. From that end, not s
    // (up to r0 from -1: 16 Newton steps bisected a bracket of 1e3 on thin ellipses and ended
    // 0.01 off a root 0.003 from -1).
    lo = max(s, -1.0f + z1 / sqrt(1.0f - ra * ra));
    hi = -1.0f;
  }
  // The root in [lo, hi] by Newton's method on psi(s) = 1 / sqrt(g(s) + 1) - 1 (linear where one
  // term is 0), kept inside the bracket (bisection where a step leaves it), until a step is below
  // 1e-6 of s or after kGeomCritNewton steps. The bracket is closed: at the root a step rounds to 0
  // (next == s, and s is lo or hi), which ends the loop there; an open bracket took that step for
  // one leaving it and bisected away from the converged root for the remaining steps (thin ellipses:
  // 0.05 rad off the normal, f 2e-4 high).
  float s = lo;  // g >= 0 here (first case), <= 0 (second): the steps go right
  for (uint it = 0u; it < kGeomCritNewton; ++it) {
    float p = s + r0, q = s + 1.0f;
    float ra = a0 / p, rb = z1 / q;
    float rr = ra * ra + rb * rb;
    if (rr == 1.0f) break;
    if ((rr > 1.0f) == (z1 >= 0.0f)) lo = s; else hi = s;  // g decreasing (first case), increasing (second)
    float big = sqrt(rr);
    float next = s + (rr * big - rr) / (ra * ra / p + rb * rb / q);
    if (!(next >= lo && next <= hi)) next = 0.5f * (lo + hi);
    bool done = abs(next - s) <= 1e-6f * max(1.0f, abs(s));
    s = next;
    if (done) break;
  }
  // The normal (x0, x1 / c^2) of the point x0 = r0 y0 / (s + r0), x1 = c z1 / (s + 1), times c^2.
  vec2 nn = vec2(y0 / (s + r0), c * z1 / (s + 1.0f));
  float l2 = dot(nn, nn);
  if (!(l2 > 0.0f)) return false;
  normal = nn / sqrt(l2);
  return true;
}

// Whether the box's vertex of signs sv (along its axes) supports n or -n, whichever faces d (the
// least overlap's direction has d.n >= 0), within 1e-4 (rounding): else n is not that vertex's piece.
VKC_FN bool geomCritVertexFits(VKC_GEOM_IN(GeomConvex) t, vec3 n, vec3 d, vec3 sv) {
  vec3 side = vec3(dot(n, t.axis0), dot(n, t.axis1), dot(n, t.axis2)) * sv * (dot(n, d) < 0.0f ? -1.0f : 1.0f);
  return min(min(side.x, side.y), side.z) >= -1e-4f;
}

VKC_FN bool geomCylinderBoxCritical(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, VKC_INOUT(float) least,
                                    VKC_INOUT(vec3) leastDir) {
  vec3 a = s.axis0;
  float r = s.size.x;
  float h = s.size.y;
  vec3 d = t.centre - s.centre;
  for (uint k = 0u; k < 3u; ++k) {
    vec3 c = cross(a, geomAxis(t, k));
    if (dot(c, c) < kGeomCritParallel * kGeomCritParallel) return false;
  }
  // Side + vertex and rim + vertex: the nearest point of the circle of radius r about v + zeta h a
  // (across the axis) to d is along m = d - v across the axis.
  for (uint v = 0u; v < 8u; ++v) {
    vec3 sv = vec3((v & 1u) != 0u ? -1.0f : 1.0f, (v & 2u) != 0u ? -1.0f : 1.0f, (v & 4u) != 0u ? -1.0f : 1.0f);
    vec3 q = t.axis0 * (sv.x * t.size.x) + t.axis1 * (sv.y * t.size.y) + t.axis2 * (sv.z * t.size.z);
    vec3 e = d - q;
    vec3 w = geomAcross(a, e, dot(a, e));
    float lw = sqrt(dot(w, w));
    vec3 m = lw > 0.0f ? w / lw : geomPerpendicularTo(a);
    for (uint z = 0u; z < 3u; ++z) {  // the side, then the two rims
      vec3 n = m;
      if (z > 0u) {
        n = q + a * (z == 1u ? h : -h) + m * r - d;
        float nn = dot(n, n);
        if (!(nn > 0.0f)) continue;
        n = n / sqrt(nn);
      }
      if (!geomCritVertexFits(t, n, d, sv)) continue;
      if (geomTryCandidate(s, t, n, least, leastDir)) return true;
    }
  }
  // Rim + edge: the rim circle seen along the edge's direction u is an ellipse in the plane across u,
  // semi-axes r along b1 = a x u / |a x u| and r |a.u| along e2 = (a - (a.u) u) / |a x u|. The point
  // relative to its centre (the edge's middle plus zeta h a): d less both. The piece's normals lie on
  // the rim's side: sign(n . e2) = zeta.
  for (uint k = 0u; k < 3u; ++k) {
    vec3 u = geomAxis(t, k);
    float cu = dot(a, u);
    if (abs(cu) < kGeomCritThin) continue;
    vec3 ax = cross(a, u);
    float sk = sqrt(dot(ax, ax));
    vec3 b1 = ax / sk;
    vec3 e2 = (a - u * cu) / sk;
    float ca = abs(cu);
    uint k1 = (k + 1u) % 3u, k2 = (k + 2u) % 3u;
    for (uint v = 0u; v < 8u; ++v) {
      vec3 u1 = geomAxis(t, k1) * ((v & 1u) != 0u ? -1.0f : 1.0f);
      vec3 u2 = geomAxis(t, k2) * ((v & 2u) != 0u ? -1.0f : 1.0f);
      float zeta = (v & 4u) != 0u ? -1.0f : 1.0f;
      // The piece's normals: x u1 + y u2 (x, y >= 0) with zeta n.a > 0; the least overlap's has d.n >= 0
      // (f(-n) is less otherwise). None of the quarter turn meets both: not this piece.
      float p1 = dot(u1, d), p2 = dot(u2, d);
      if (p1 < 0.0f && p2 < 0.0f) continue;
      vec2 ray0 = p1 >= 0.0f ? vec2(1.0f, 0.0f) : vec2(p2, -p1);
      vec2 ray1 = p2 >= 0.0f ? vec2(0.0f, 1.0f) : vec2(-p2, p1);
      vec2 za = vec2(dot(u1, a), dot(u2, a)) * zeta;
      if (!(dot(ray0, za) > 0.0f || dot(ray1, za) > 0.0f)) continue;
      vec3 q = u1 * t.size[k1] + u2 * t.size[k2];
      vec3 p = (d - q - a * (zeta * h)) / r;
      float y0 = dot(p, b1);
      float y1 = dot(p, e2) * zeta;
      vec2 nrm;
      if (!geomEllipseNormal(abs(y0), y1, ca, nrm)) continue;
      vec3 n = b1 * (y0 < 0.0f ? -nrm.x : nrm.x) + e2 * (zeta * nrm.y);
      if (geomTryCandidate(s, t, n, least, leastDir)) return true;
    }
  }
  return true;
}

// --- Cylinder vs cylinder by critical points (docs/geometry-queries.md, "Cylinder vs cylinder").
// With d = t's centre less s's and K = S + T about the origin, the depth is min over unit n of
// f(n) = g_s(n) + g_t(n) - |d.n| and every n's f is an upper bound (f <= 0: apart). K's 2-D pieces:
// a cap plus a rim point (n = an axis), side plus side (n = a x b), a side plus the other's rim (n
// across the side's axis: the nearest boundary point of the other cylinder seen along that axis, an
// ellipse), rim plus rim (a 2-D surface: its normals across both rims' tangents, a 1-D global search
// over one circle's angle). geomConvexCandidates tried the flat ones; this lowers its least
// overlap by the curved ones' normals. False where the axes are within kGeomCritParallel of parallel
// (GJK and EPA answer instead; the closed form takes them within kGeomCylinderParallel). Its CPU
// SIMD twin: src/cpu/geometry_queries_cylinder_cylinder_simd.cpp (the rim curves across pairs).
VKC_CONSTANT(uint, kGeomRimSamples, 16u);  // the searched circle's sampled angles (22.5 degrees apart)
VKC_CONSTANT(uint, kGeomRimSteps, 7u);     // Brent steps about a sample's local minimum
VKC_CONSTANT(float, kGeomRimTan, 0.41421356f);  // tan(2 pi / kGeomRimSamples): the neighbouring samples' x
VKC_CONSTANT(float, kGeomRimTol, 1e-5f);   // the least step of x

// The side of the cylinder s (axis a) against the rim of c (axis b, radius rb, half height hb),
// seen along a: c is the hull of two ellipses (its rims; semi-axes rb along b x a and rb |a.b|
// along b's part across a) and two segments (n = a x b); the least of f across a is at the normal of
// the nearest point of that hull's boundary to p's image (p = d or -d, inside or outside), on the
// ellipse of the rim on p's side (the hull is symmetric about the line of the ellipses' centres).
VKC_FN bool geomCylinderSideRim(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, vec3 a, vec3 b, float rb,
                                float hb, vec3 p, VKC_INOUT(float) least, VKC_INOUT(vec3) leastDir) {
  float cu = dot(a, b);
  vec3 ax = cross(b, a);
  float sk = sqrt(dot(ax, ax));
  vec3 b1 = ax / sk;
  vec3 e2 = (b - a * cu) / sk;
  float zeta = dot(p, e2) < 0.0f ? -1.0f : 1.0f;
  vec3 y = (p - b * (zeta * hb)) / rb;
  float y0 = dot(y, b1);
  float y1 = dot(y, e2) * zeta;
  vec3 n;
  if (abs(cu) < kGeomCritThin) {
    // A flat ellipse (within rb kGeomCritThin of its major axis, so f within that of the segment's
    // answer): the segment's nearest point (y0 clamped to [-1, 1], 0).
    n = b1 * (y0 - clamp(y0, -1.0f, 1.0f)) + e2 * (zeta * y1);
    float nn = dot(n, n);
    if (!(nn > 0.0f)) return false;
    n = n / sqrt(nn);
  } else {
    vec2 nrm;
    if (!geomEllipseNormal(abs(y0), y1, abs(cu), nrm)) return false;
    n = b1 * (y0 < 0.0f ? -nrm.x : nrm.x) + e2 * (zeta * nrm.y);
  }
  return geomTryCandidate(s, t, n, least, leastDir);
}

// (cos, sin) of sample k of kGeomRimSamples (16 or 32): quarter turns of eight constants (cos of multiples of
// 11.25 degrees), not sin and cos (whose GPU and C library results differ).
VKC_FN float geomRimCos(uint i) {
  return i < 4u ? (i < 2u ? (i == 0u ? 1.0f : 0.98078528f) : (i == 2u ? 0.92387953f : 0.83146961f))
                : (i < 6u ? (i == 4u ? 0.70710678f : 0.55557023f) : (i == 6u ? 0.38268343f : 0.19509032f));
}

VKC_FN vec2 geomRimSample(uint k) {
  uint i = (k * (32u / kGeomRimSamples)) & 7u;
  vec2 cs = vec2(geomRimCos(i), i == 0u ? 0.0f : geomRimCos(8u - i));
  uint quarter = ((k * (32u / kGeomRimSamples)) >> 3u) & 3u;
  for (uint j = 0u; j < quarter; ++j) cs = vec2(-cs.y, cs.x);
  return cs;
}

// A cylinder's support function (unit axis a, radius r, half height h) at n of any length: r |a x n|
// + h |a.n| (the cross product, not geomAcross's two projections: as accurate where n is near the
// axis, each component's rounding is within float epsilon of |n|, in fewer operations).
VKC_FN float geomCylinderSupportAt(vec3 a, float r, float h, vec3 n) {
  vec3 c = cross(a, n);
  return r * sqrt(dot(c, c)) + h * abs(dot(a, n));
}

// f along the rim + rim curve n(phi) of the searched circle's radial direction w: q is d less that
// circle's point (its rim's centre base0's offset, plus r0 w); the other circle's point nearest or
// farthest from q lies along q's part across a1 (the same for both of its rims), so the piece's
// normal there is across both circles' tangents, a0 x w and a1 x q. f is positively homogeneous, so
// it is taken at n unnormalised and scaled once: f(n / |n|) = (g_s(n) + g_t(n) - |d.n|) / |n| (one
// division, not one per component). Lowers least; returns f (3e38 where the tangents are parallel
// or q lies on a1).
VKC_FN float geomRimRimAlong(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, vec3 base0, vec3 a0, vec3 w,
                             float r0, vec3 a1, VKC_INOUT(float) least, VKC_INOUT(vec3) leastDir) {
  vec3 q = base0 - w * r0;
  vec3 n = cross(cross(a0, w), cross(a1, q));
  float nn = dot(n, n);
  if (!(nn > 1e-12f)) return 3.0e38f;
  float inv = 1.0f / sqrt(nn);
  float dn = dot(t.centre - s.centre, n);
  float f = (geomCylinderSupportAt(s.axis0, s.size.x, s.size.y, n) +
             geomCylinderSupportAt(t.axis0, t.size.x, t.size.y, n) - abs(dn)) *
            inv;
  if (f < least) {
    least = f;
    leastDir = n * (dn < 0.0f ? -inv : inv);
  }
  return f;
}

// The least f on the curve between the samples either side of sample w_k (tangent tau_k), on
// x = tan(phi - phi_k), w = (w_k + x tau_k) / sqrt(1 + x^2): the samples are x = -T, 0, T (T =
// tan(2 pi / kGeomRimSamples)) with f there fm, f0, fp, f0 <= fm and f0 < fp (a bracketed minimum).
// kGeomRimSteps steps of Brent's rule: the vertex of the parabola through the three best points so
// far (x, w, v) where it lies inside the bracket [lo, hi] and moves less than half the step before
// last; else a golden-section step into the larger side of x. Each new point shrinks the bracket
// about the best point (which only falls), so on a kink, where parabolas fit badly, the golden
// steps still close in; on a smooth minimum the parabolas converge superlinearly (a step of
// kGeomRimTol at least: no point twice). Every point tried lowers least.
VKC_FN void geomRimRimRefine(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t, vec3 base0, vec3 a0, vec3 wk,
                             vec3 tk, float r0, vec3 a1, float fm, float f0, float fp, VKC_INOUT(float) least,
                             VKC_INOUT(vec3) leastDir) {
  float lo = -kGeomRimTan, hi = kGeomRimTan;
  float x = 0.0f, fx = f0;
  bool leftLower = fm <= fp;
  float w = leftLower ? lo : hi, fw = leftLower ? fm : fp;
  float v = leftLower ? hi : lo, fv = leftLower ? fp : fm;
  float e = hi - lo, d = hi - lo;  // the last two steps (the first parabola may take any step inside)
  for (uint it = 0u; it < kGeomRimSteps; ++it) {
    float r = (x - w) * (fx - fv);
    float q = (x - v) * (fx - fw);
    float p = (x - v) * q - (x - w) * r;
    q = 2.0f * (q - r);
    if (q > 0.0f) p = -p;
    q = abs(q);
    float before = e;
    e = d;
    if (abs(p) < abs(0.5f * q * before) && p > q * (lo - x) && p < q * (hi - x)) {
      d = p / q;  // q > 0 here
      float u = x + d;
      if (u - lo < 2.0f * kGeomRimTol || hi - u < 2.0f * kGeomRimTol) d = x < 0.5f * (lo + hi) ? kGeomRimTol : -kGeomRimTol;
    } else {
      e = x < 0.5f * (lo + hi) ? hi - x : lo - x;
      d = 0.38196601f * e;
    }
    if (abs(d) < kGeomRimTol) d = d < 0.0f ? -kGeomRimTol : kGeomRimTol;
    float u = x + d;
    float fu = geomRimRimAlong(s, t, base0, a0, (wk + tk * u) / sqrt(1.0f + u * u), r0, a1, least, leastDir);
    if (fu <= fx) {
      if (u < x) hi = x; else lo = x;
      v = w;
      fv = fw;
      w = x;
      fw = fx;
      x = u;
      fx = fu;
    } else {
      if (u < x) lo = u; else hi = u;
      if (fu <= fw || w == x) {
        v = w;
        fv = fw;
        w = u;
        fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u;
        fv = fu;
      }
    }
  }
}

VKC_FN bool geomCylinderCylinderCritical(VKC_GEOM_IN(GeomConvex) s, VKC_GEOM_IN(GeomConvex) t,
                                         VKC_INOUT(float) least, VKC_INOUT(vec3) leastDir) {
  vec3 c = cross(s.axis0, t.axis0);
  if (dot(c, c) < kGeomCritParallel * kGeomCritParallel) return false;
  vec3 d = t.centre - s.centre;
  // Side of s with t's rim (n across s's axis), side of t with s's rim (n across t's axis; the
  // point -d: K is centrally symmetric).
  // (One call in a loop over the two: see geomMinkowskiSupportUnit.)
  for (uint side = 0u; side < 2u; ++side) {
    bool ofS = side == 0u;
    if (geomCylinderSideRim(s, t, ofS ? s.axis0 : t.axis0, ofS ? t.axis0 : s.axis0, ofS ? t.size.x : s.size.x,
                            ofS ? t.size.y : s.size.y, ofS ? d : -d, least, leastDir)) {
      return true;
    }
  }
  // Rim + rim: x = x0(phi) + x1(psi) on the two rims (the smaller circle searched). At the least f's
  // n, d - x is along n, so x1 is the point of circle 1 nearest or farthest from d - x0 and n lies
  // across both tangents: n = n(phi*) on the curve geomRimRimAlong of x0's rim, and f >= the depth
  // everywhere, so the curve's least is the depth. Per rim of circle 0: f at the samples; the two
  // lowest of their local minima (cyclic) refined between their neighbours.
  bool sSearched = s.size.x <= t.size.x;
  vec3 a0 = sSearched ? s.axis0 : t.axis0;
  vec3 a1 = sSearched ? t.axis0 : s.axis0;
  vec2 rh0 = sSearched ? vec2(s.size.x, s.size.y) : vec2(t.size.x, t.size.y);
  vec3 e1 = geomPerpendicularTo(a0);
  vec3 e2 = cross(a0, e1);
  for (uint rim = 0u; rim < 2u; ++rim) {
    vec3 base0 = d - a0 * ((rim == 0u ? 1.0f : -1.0f) * rh0.y);
    // A sample no higher than the one before and lower than the next (cyclic) holds a local minimum
    // between its neighbours; the two lowest are kept.
    float first = 0.0f, second = 0.0f, prev = 0.0f, cur = 0.0f;
    float low1 = 3.0e38f, low2 = 3.0e38f;
    vec2 side1 = vec2(0.0f), side2 = vec2(0.0f);  // f at the two minima's neighbouring samples
    uint k1 = kGeomRimSamples, k2 = kGeomRimSamples;
    for (uint k = 0u; k <= kGeomRimSamples + 1u; ++k) {
      float next = k == kGeomRimSamples ? first : second;
      if (k < kGeomRimSamples) {
        vec2 cs = geomRimSample(k);
        next = geomRimRimAlong(s, t, base0, a0, e1 * cs.x + e2 * cs.y, rh0.x, a1, least, leastDir);
      }
      if (k == 0u) first = next;
      if (k == 1u) second = next;
      if (k >= 2u && cur <= prev && cur < next) {  // sample k - 1
        uint km = (k - 1u) % kGeomRimSamples;
        if (cur < low1) {
          low2 = low1;
          side2 = side1;
          k2 = k1;
          low1 = cur;
          side1 = vec2(prev, next);
          k1 = km;
        } else if (cur < low2) {
          low2 = cur;
          side2 = vec2(prev, next);
          k2 = km;
        }
      }
      prev = cur;
      cur = next;
    }
    if (least <= 0.0f) return true;
    for (uint j = 0u; j < 2u; ++j) {
      uint k = j == 0u ? k1 : k2;
      if (k >= kGeomRimSamples) continue;
      vec2 cs = geomRimSample(k);
      vec2 side = j == 0u ? side1 : side2;
      geomRimRimRefine(s, t, base0, a0, e1 * cs.x + e2 * cs.y, e2 * cs.x - e1 * cs.y, rh0.x, a1, side.x,
                       j == 0u ? low1 : low2, side.y, least, leastDir);
    }
    if (least <= 0.0f) return true;
  }
  return true;
}

// Cylinder vs cylinder or box: parallel cylinders by their closed form; else the candidate
// directions first (one that separates: no contact, no GJK; most random pairs), then the inscribed
// boxes' lower bound (where it proves the candidates' least overlap: the answer), then the critical
// points (geomCylinderBoxCritical, geomCylinderCylinderCritical; GJK and EPA where an edge or the
// axes are nearly parallel), then GJK, then EPA bounded by the candidates' least overlap; the search
// where GJK or EPA cannot finish.
// The deepest contact: s's support point pS along u, the depth; u points from s towards t (s moves
// along -u). False: apart or touching.
VKC_FN bool geomConvexSearchDeepest(GeomShape shapeS, GeomShape shapeT, VKC_OUT(vec3) pS, VKC_OUT(float) depth,
                                    VKC_OUT(vec3) u) {
  pS = vec3(0.0f);
  depth = 0.0f;
  u = vec3(0.0f);
  GeomConvex s = geomMakeConvex(shapeS);
  GeomConvex t = geomMakeConvex(shapeT);
  if (t.type == kGeomCylinder && geomCylindersParallel(s, t)) {
    if (!geomParallelCylinders(s, t, depth, u)) return false;
  } else {
    float least;
    vec3 leastDir;
    geomConvexCandidates(s, t, least, leastDir);
    if (least <= 0.0f) return false;
    // The least overlap proven by the inscribed boxes' depth (within kGeomEpaBoundTolerance); else
    // the critical points (cylinder vs box or cylinder): no GJK or EPA. Else GJK and the bounded EPA.
    vec3 d = t.centre - s.centre;
    float reach = least - kGeomEpaBoundTolerance * (geomConvexScale(s) + geomConvexScale(t));
    if ((reach > 0.0f && geomBoxesDepthReaches(geomCylinderInnerBox(s, leastDir, d),
                                               geomCylinderInnerBox(t, -leastDir, -d), reach)) ||
        (t.type == kGeomOrientedBox && geomCylinderBoxCritical(s, t, least, leastDir)) ||
        (t.type == kGeomCylinder && geomCylinderCylinderCritical(s, t, least, leastDir))) {
      if (!(least > 0.0f)) return false;
      depth = least;
      u = leastDir;
    } else {
      GeomSimplex sx;
      uint gjk = geomGjk(s, t, sx);
      if (gjk == kGeomGjkSeparated) return false;
      bool found = gjk == kGeomGjkOverlap && geomEpaCore(s, t, sx, true, least, leastDir, depth, u);
      if (!found && !geomConvexSearch(s, t, vec3(0.0f), depth, u)) return false;
      if (!(depth > 0.0f)) return false;
    }
  }
  pS = geomSupportPoint(s, u);
  return true;
}

// The deepest contact's elements: s's at its support point, t's that point moved by the depth along u.
VKC_FN void geomConvexElements(vec3 pS, float depth, vec3 u, VKC_OUT(GeomElement) es, VKC_OUT(GeomElement) et) {
  es = geomMakeElement(pS, depth, -u, kElementPointDirection, kGeomNoIndex);
  et = geomMakeElement(pS - u * depth, depth, u, kElementPointDirection, kGeomNoIndex);
}

// The part [t0, t1] (narrowed in place) of a segment whose radial part about an axis is q0 + qd t
// within radius sqrt(rr) of it: a t^2 + 2 b t + c <= 0. False where none of it is (or only a point).
VKC_FN bool geomSegmentInDisc(vec3 q0, vec3 qd, float rr, VKC_INOUT(float) t0, VKC_INOUT(float) t1) {
  float a = dot(qd, qd);
  float b = dot(q0, qd);
  float c = dot(q0, q0) - rr;
  if (a > 0.0f) {
    float disc = b * b - a * c;
    if (!(disc > 0.0f)) return false;
    float root = sqrt(disc);
    t0 = max(t0, (-b - root) / a);
    t1 = min(t1, (-b + root) / a);
  } else if (c > 0.0f) {
    return false;
  }
  return true;
}

// The part [t0, t1] (narrowed in place) of a segment whose height along an axis is y0 + yd t within
// [-h, h]. False where the segment runs along the slab outside it.
VKC_FN bool geomSegmentInSlab(float y0, float yd, float h, VKC_INOUT(float) t0, VKC_INOUT(float) t1) {
  if (yd != 0.0f) {
    float ta = (-h - y0) / yd;
    float tb = (h - y0) / yd;
    t0 = max(t0, min(ta, tb));
    t1 = min(t1, max(ta, tb));
  } else if (abs(y0) > h) {
    return false;
  }
  return true;
}

// The edge of the box b along its axis j farthest along -n (each other axis at the side facing -n):
// from p0 to p0 + pd.
VKC_FN void geomBoxEdgeAgainst(VKC_GEOM_IN(GeomConvex) b, uint j, vec3 n, VKC_OUT(vec3) p0,
                               VKC_OUT(vec3) pd) {
  vec3 mid = b.centre;
  for (uint i = 0u; i < 3u; ++i) {
    vec3 bi = geomAxis(b, i);
    if (i != j) mid += bi * (dot(bi, n) > 0.0f ? -b.size[i] : b.size[i]);
  }
  vec3 ej = geomAxis(b, j) * b.size[j];
  p0 = mid - ej;
  pd = ej * 2.0f;
}

// --- Cylinder resting on a box face (s the cylinder, t the box): where the deepest contact's
// direction u is within kGeomCylinderFlatSine of a face's normal, the cylinder's points nearest that
// face (geomCylinderPlanePoint with the face as the plane) give the manifold. Standing on a cap
// (within that angle of the face's normal): the cap's rim square, clipped by the face's four side
// planes as a box-box incident face is (up to 8 points). Lying on its side: the lowest line, clipped
// by the same planes (its two ends). Each clipped point behind the face is a contact with its own
// depth, along the face's normal (the cylinder's element on it; the box's on the face). A box face
// smaller than the cap and inside it gives its own corners (the square clipped to it); then the
// face's corners over the disc but outside the square, on the cap's plane (8 points at most). No face
// flat against u: a box's edge on the cap (geomBoxEdgeOnCapPatch) or along the wall
// (geomBoxEdgeOnWallPatch). Elsewhere (no
// flat feature, or no clipped point behind the face) the single deepest contact. Slots in the clipped order,
// from the rim's lowest point.

// Whether slot `slot` of a cylinder-box pair can hold a contact, from the shapes alone (the device's
// slot threads skip the search where not): slot 0 always; slot 1 where the cylinder's axis is along
// or across a box axis within kGeomCylinderFlatSine (standing or lying on that face; the same tests as
// geomCylinderPlanePoint's); the others where it is along one (standing).
VKC_FN bool geomCylinderBoxSlotMayHit(GeomShape s, GeomShape t, uint slot) {
  if (slot == 0u) return true;
  vec4 q = geomQuatUnit(t.p1);
  vec3 axis = geomUnit(vec3(s.p1));
  for (uint j = 0u; j < 3u; ++j) {
    vec3 n = geomRotate(q, vec3(j == 0u ? 1.0f : 0.0f, j == 1u ? 1.0f : 0.0f, j == 2u ? 1.0f : 0.0f));
    float an = dot(axis, n);
    vec3 w = n - axis * an;
    if (sqrt(dot(w, w)) <= kGeomCylinderFlatSine || (slot == 1u && abs(an) <= kGeomCylinderFlatSine)) return true;
  }
  return false;
}

// A resting pair's contact patch: the incident points (on the incident cylinder's cap or line), the
// reference plane (its normal nR out of the reference, towards the incident; its offset offR), and
// whether s is the incident. Its contacts: geomRestContact per point, in order.
struct GeomRestPatch {
  GeomPolygon poly;
  vec3 nR;
  float offR;
  bool incidentIsS;
};

// A box t's edge resting on the cap of a cylinder s (no box face flat against u): where u is within
// kGeomCylinderFlatSine of the cylinder's axis and a box axis within it of across the cylinder's (the
// first such, x before y before z), the box's edge along it nearest the cap, clipped to the cap's disc
// (geomSegmentInDisc), against the cap's plane: the box is the incident.
VKC_FN bool geomBoxEdgeOnCapPatch(GeomShape s, VKC_GEOM_IN(GeomConvex) b, vec3 u,
                                  VKC_OUT(GeomRestPatch) rest) {
  vec3 axis = geomUnit(vec3(s.p1));
  float au = dot(axis, u);
  if (!(au * au >= 1.0f - kGeomCylinderFlatSine * kGeomCylinderFlatSine)) return false;
  uint j = 3u;
  for (uint i = 0u; i < 3u; ++i) {
    if (j == 3u && abs(dot(axis, geomAxis(b, i))) <= kGeomCylinderFlatSine) j = i;
  }
  if (j == 3u) return false;
  vec3 nR = au < 0.0f ? -axis : axis;  // out of the cap, towards the box (u points from s to t)
  vec3 p0;
  vec3 pd;
  geomBoxEdgeAgainst(b, j, nR, p0, pd);
  vec3 d0 = p0 - vec3(s.p0);
  float t0 = 0.0f;
  float t1 = 1.0f;
  if (!geomSegmentInDisc(d0 - axis * dot(d0, axis), pd - axis * dot(pd, axis), s.p0.w * s.p0.w, t0, t1) ||
      !(t1 > t0)) {
    return false;
  }
  rest.poly.n = 2u;
  rest.poly.p[0] = p0 + pd * t0;
  rest.poly.p[1] = p0 + pd * t1;
  rest.nR = nR;
  rest.offR = dot(vec3(s.p0), nR) + s.p1.w;
  rest.incidentIsS = false;
  return true;
}

// A box t's edge lying along the wall of a cylinder s (no box face flat against u): where u is within
// kGeomCylinderFlatSine of across the cylinder's axis and a box axis within it of along the axis (the
// first such), the box's edge along it nearest the cylinder, clipped to the cylinder's height,
// against the wall's tangent plane: the box is the incident.
VKC_FN bool geomBoxEdgeOnWallPatch(GeomShape s, VKC_GEOM_IN(GeomConvex) b, vec3 u,
                                   VKC_OUT(GeomRestPatch) rest) {
  vec3 axis = geomUnit(vec3(s.p1));
  if (!(abs(dot(axis, u)) <= kGeomCylinderFlatSine)) return false;
  uint j = 3u;
  for (uint i = 0u; i < 3u; ++i) {
    vec3 bi = geomAxis(b, i);
    vec3 w = bi - axis * dot(axis, bi);
    if (j == 3u && sqrt(dot(w, w)) <= kGeomCylinderFlatSine) j = i;
  }
  if (j == 3u) return false;
  vec3 p0;
  vec3 pd;
  geomBoxEdgeAgainst(b, j, u, p0, pd);
  float t0 = 0.0f;
  float t1 = 1.0f;
  if (!geomSegmentInSlab(dot(p0 - vec3(s.p0), axis), dot(pd, axis), s.p1.w, t0, t1) || !(t1 > t0))
    return false;
  GeomConvex c = geomMakeConvex(s);
  rest.poly.n = 2u;
  rest.poly.p[0] = p0 + pd * t0;
  rest.poly.p[1] = p0 + pd * t1;
  rest.nR = u;  // out of the wall, towards the box
  rest.offR = dot(c.centre, u) + geomCentredSupport(c, u);
  rest.incidentIsS = false;
  return true;
}

// The patch of a cylinder s resting on the box t, given the deepest contact's direction u (of
// geomConvexSearchDeepest); false where the pair is not flat or the clipping leaves no point.
VKC_FN bool geomCylinderBoxPatch(GeomShape s, GeomShape t, vec3 u, VKC_OUT(GeomRestPatch) rest) {
  GeomConvex b = geomMakeConvex(t);
  // The face: the box axis most along u, its outward normal nF facing the cylinder (against u).
  uint k = 0u;
  float bu = dot(b.axis0, u);
  for (uint j = 1u; j < 3u; ++j) {
    float bj = dot(geomAxis(b, j), u);
    if (abs(bj) > abs(bu)) {
      k = j;
      bu = bj;
    }
  }
  if (!(1.0f - bu * bu <= kGeomCylinderFlatSine * kGeomCylinderFlatSine)) {
    return geomBoxEdgeOnCapPatch(s, b, u, rest) || geomBoxEdgeOnWallPatch(s, b, u, rest);
  }
  vec3 nF = bu > 0.0f ? -geomAxis(b, k) : geomAxis(b, k);
  GeomPolygon poly;
  poly.n = 0u;
  for (uint slot = 0u; slot < 4u; ++slot) {
    vec3 p;
    if (geomCylinderPlanePoint(s, nF, slot, p)) geomPolygonPush(poly, p);
  }
  if (poly.n == 1u) return false;  // neither standing nor lying
  uint j0 = k == 0u ? 1u : 0u;
  uint j1 = k == 2u ? 1u : 2u;
  if (poly.n == 2u) {  // lying: the line [p0, p1] clipped to the face's side planes
    vec3 p0 = poly.p[0];
    vec3 p1 = poly.p[1];
    float t0 = 0.0f;
    float t1 = 1.0f;
    for (uint c = 0u; c < 4u; ++c) {
      vec3 side = geomAxis(b, c < 2u ? j0 : j1);
      float e = b.size[c < 2u ? j0 : j1];
      bool plus = (c & 1u) == 0u;
      vec3 axis = plus ? side : -side;
      float offset = plus ? dot(b.centre, side) + e : e - dot(b.centre, side);
      float da = dot(p0, axis) - offset;
      float db = dot(p1, axis) - offset;
      if (da > 0.0f && db > 0.0f) return false;
      if (da > 0.0f) t0 = max(t0, da / (da - db));
      if (db > 0.0f) t1 = min(t1, da / (da - db));
    }
    if (!(t1 > t0)) return false;
    poly.p[0] = p0 + (p1 - p0) * t0;
    poly.p[1] = p0 + (p1 - p0) * t1;
  } else {  // standing: the rim's square clipped as geomBoxFaceManifold clips an incident face
    GeomPolygon square = poly;
    for (uint c = 0u; c < 4u; ++c) {
      vec3 side = geomAxis(b, c < 2u ? j0 : j1);
      float e = b.size[c < 2u ? j0 : j1];
      bool plus = (c & 1u) == 0u;
      poly = geomClipPolygon(poly, plus ? side : -side, plus ? dot(b.centre, side) + e : e - dot(b.centre, side));
    }
    // The face's corners over the cap's disc but outside the square (which the clipping left out),
    // carried along the face's normal onto the cap's plane (after the clipped points; 8 at most).
    vec3 axis = geomUnit(vec3(s.p1));
    float r = s.p0.w;
    vec3 capCentre = (square.p[0] + square.p[2]) * 0.5f;
    vec3 faceCentre = b.centre + nF * b.size[k];
    for (uint c = 0u; c < 4u; ++c) {
      vec3 corner = faceCentre + geomAxis(b, j0) * ((c & 1u) != 0u ? b.size[j0] : -b.size[j0]) +
                    geomAxis(b, j1) * ((c & 2u) != 0u ? b.size[j1] : -b.size[j1]);
      vec3 p = corner + nF * (dot(capCentre - corner, axis) / dot(nF, axis));
      vec3 q = p - capCentre;
      bool inSquare = true;
      for (uint i = 0u; i < 4u; ++i) {
        vec3 edge = square.p[(i + 1u) & 3u] - square.p[i];
        inSquare = inSquare && dot(cross(edge, p - square.p[i]), axis) *
                                       dot(cross(edge, square.p[(i + 2u) & 3u] - square.p[i]), axis) >=
                                   0.0f;
      }
      if (!inSquare && dot(q, q) <= r * r) geomPolygonPush(poly, p);
    }
  }
  rest.poly = poly;
  rest.nR = nF;
  rest.offR = dot(b.centre, nF) + b.size[k];
  rest.incidentIsS = true;
  return true;
}

// --- Cylinder resting on a cylinder (s, t in canonical order), after the deepest contact (pS, depth,
// u from s towards t). Each cylinder shows t its cap where u is within kGeomCylinderFlatSine of its
// axis, a line where u is that close to across it. Cap on cap (stacked): the reference is the wider
// cylinder's cap (t's on ties), the incident the other's rim square (geomCylinderPlanePoint with the
// reference cap as the plane); the square's points over the reference disc (radially within its
// radius, 1e-4 relative slack: stacked equal radii keep their rims) and, where the discs overlap in
// part, the two points where the rims cross (on the incident cap's plane): up to 6. Line on line
// (side by side, the axes within that angle of parallel): s's lowest line clipped to t's length, t's
// tangent plane the reference. Line on a cap (a cylinder lying on the other's cap): the lying one's
// lowest line clipped to the disc. Each point behind the reference plane is a contact with its own
// depth along the reference's normal (the incident cylinder's element at the point, the reference's
// on its plane); elsewhere, or where no point is behind it, the single deepest contact. Crossed lying
// cylinders touch at a point: one contact.

// Whether slot `slot` of a cylinder-cylinder pair can hold a contact, from the shapes alone (as
// geomCylinderBoxSlotMayHit): slot 0 always; slot 1 where the axes are within kGeomCylinderFlatSine of
// parallel or of perpendicular; slots 2-5 parallel (the tests of geomCylinderCylinderPatch).
VKC_FN bool geomCylinderCylinderSlotMayHit(GeomShape s, GeomShape t, uint slot) {
  if (slot == 0u) return true;
  vec3 as = geomUnit(vec3(s.p1));
  vec3 at = geomUnit(vec3(t.p1));
  float c = dot(as, at);
  vec3 ws = at - as * c;  // each axis against the other, as geomCylinderPlanePoint tests them
  vec3 wt = as - at * c;
  bool parallel = sqrt(dot(ws, ws)) <= kGeomCylinderFlatSine || sqrt(dot(wt, wt)) <= kGeomCylinderFlatSine;
  return parallel || (slot == 1u && abs(c) <= kGeomCylinderFlatSine);
}

// Point i of a resting patch as a contact (sides s, t): the incident's element at the point, pushed
// along nR, the reference's on its plane; true where the point lies behind that plane (depth > 0).
VKC_FN bool geomRestContact(VKC_GEOM_IN(GeomRestPatch) rest, uint i, VKC_OUT(GeomElement) es,
                            VKC_OUT(GeomElement) et) {
  vec3 p = rest.poly.p[i];
  float d = rest.offR - dot(p, rest.nR);
  GeomElement incident = geomMakeElement(p, d, rest.nR, kElementPointDirection, kGeomNoIndex);
  GeomElement reference = geomMakeElement(p + rest.nR * d, d, -rest.nR, kElementPointDirection, kGeomNoIndex);
  es = rest.incidentIsS ? incident : reference;
  et = rest.incidentIsS ? reference : incident;
  return d > 0.0f;
}

// The patch of two cylinders s and t resting on each other (as geomCylinderBoxPatch).
VKC_FN bool geomCylinderCylinderPatch(GeomShape s, GeomShape t, vec3 u, VKC_OUT(GeomRestPatch) rest) {
  vec3 as = geomUnit(vec3(s.p1));
  vec3 at = geomUnit(vec3(t.p1));
  float su = dot(as, u);
  float tu = dot(at, u);
  float capSq = 1.0f - kGeomCylinderFlatSine * kGeomCylinderFlatSine;
  bool sCap = su * su >= capSq;
  bool tCap = tu * tu >= capSq;
  bool sLine = abs(su) <= kGeomCylinderFlatSine;
  bool tLine = abs(tu) <= kGeomCylinderFlatSine;
  // The reference: a cap (stacked: the wider one's; a line on a cap: the cap's) or t's side.
  bool refIsT = sCap && tCap ? t.p0.w >= s.p0.w : !(tLine && sCap);
  if (!((sCap && tCap) || (sLine && tLine) || (sLine && tCap) || (tLine && sCap))) return false;
  if (sLine && tLine) {  // side by side only where parallel (crossed lying cylinders touch at a point)
    vec3 w = at - as * dot(as, at);
    if (!(sqrt(dot(w, w)) <= kGeomCylinderFlatSine)) return false;
  }
  GeomShape ref = refIsT ? t : s;
  GeomShape inc = refIsT ? s : t;
  vec3 aR = refIsT ? at : as;
  vec3 cR = vec3(ref.p0);
  float rR = ref.p0.w;
  // nR out of the reference towards the incident (u points from s to t).
  vec3 towards = refIsT ? -u : u;
  bool side = sLine && tLine;
  vec3 nR = side ? towards : (dot(aR, towards) < 0.0f ? -aR : aR);
  float offR;
  if (side) {
    GeomConvex tc = geomMakeConvex(t);
    offR = dot(cR, nR) + geomCentredSupport(tc, nR);
  } else {
    offR = dot(cR, nR) + ref.p1.w;
  }
  GeomPolygon poly;
  poly.n = 0u;
  for (uint slot = 0u; slot < 4u; ++slot) {
    vec3 p;
    if (geomCylinderPlanePoint(inc, nR, slot, p)) geomPolygonPush(poly, p);
  }
  if (poly.n == 1u) return false;
  if (poly.n == 2u) {  // the incident's lowest line: clipped to t's length (side by side) or to the disc
    vec3 p0 = poly.p[0];
    vec3 pd = poly.p[1] - p0;
    float t0 = 0.0f;
    float t1 = 1.0f;
    vec3 d0 = p0 - cR;
    if (side) {  // |dot(d0 + pd x, aR)| <= hR
      if (!geomSegmentInSlab(dot(d0, aR), dot(pd, aR), ref.p1.w, t0, t1)) return false;
    } else if (!geomSegmentInDisc(d0 - aR * dot(d0, aR), pd - aR * dot(pd, aR), rR * rR, t0, t1)) {
      return false;  // |q0 + qd x|^2 <= rR^2 for the radial parts q
    }
    if (!(t1 > t0)) return false;
    poly.p[0] = p0 + pd * t0;
    poly.p[1] = p0 + pd * t1;
  } else {  // stacked: the square's points over the reference disc, then where the rims cross
    GeomPolygon kept;
    kept.n = 0u;
    float slack = rR * rR * 1.0002f;
    for (uint i = 0u; i < 4u; ++i) {
      vec3 d = poly.p[i] - cR;
      vec3 q = d - aR * dot(d, aR);
      if (dot(q, q) <= slack) geomPolygonPush(kept, poly.p[i]);
    }
    vec3 aI = geomUnit(vec3(inc.p1));
    float rI = inc.p0.w;
    float hI = inc.p1.w;
    vec3 capI = vec3(inc.p0) + aI * (dot(aI, nR) < 0.0f ? hI : -hI);
    vec3 capR = cR + nR * ref.p1.w;
    vec3 v = (capI - capR) - nR * dot(capI - capR, nR);
    float dist = sqrt(dot(v, v));
    if (dist > abs(rR - rI) && dist < rR + rI) {
      float x = (dist * dist + rR * rR - rI * rI) / (2.0f * dist);
      float hh = rR * rR - x * x;
      if (hh > 0.0f) {
        vec3 e1 = v / dist;
        vec3 e2 = cross(nR, e1) * sqrt(hh);
        float along = dot(nR, aI);
        for (uint k = 0u; k < 2u; ++k) {
          vec3 q = capR + e1 * x + (k == 0u ? e2 : -e2);
          geomPolygonPush(kept, q + nR * (dot(capI - q, aI) / along));  // onto the incident cap's plane
        }
      }
    }
    poly = kept;
  }
  rest.poly = poly;
  rest.nR = nR;
  rest.offR = offR;
  rest.incidentIsS = refIsT;  // the incident is s where t is the reference
  return true;
}

// The contacts of a cylinder s and a box or cylinder t from their deepest contact (pS, depth, u).
VKC_FN GeomManifold geomConvexRestingContacts(GeomShape s, GeomShape t, vec3 pS, float depth, vec3 u) {
  GeomManifold m;
  m.count = 0u;
  GeomRestPatch rest;
  bool resting = t.info.x == kGeomOrientedBox ? geomCylinderBoxPatch(s, t, u, rest)
                                              : geomCylinderCylinderPatch(s, t, u, rest);
  for (uint i = 0u; resting && i < rest.poly.n; ++i) {
    GeomElement es;
    GeomElement et;
    if (!geomRestContact(rest, i, es, et)) continue;
    m.s[m.count] = es;
    m.t[m.count] = et;
    m.count += 1u;
  }
  if (m.count == 0u) {  // not resting, or no patch point behind the reference plane
    geomConvexElements(pS, depth, u, m.s[0], m.t[0]);
    m.count = 1u;
  }
  return m;
}

// Cylinder vs cylinder or box (s the cylinder): the deepest contact, and the manifold of a cylinder
// resting on the box or the other cylinder (geomCylinderBoxPatch, geomCylinderCylinderPatch).
VKC_FN GeomManifold geomConvexManifold(GeomShape s, GeomShape t) {
  GeomManifold m;
  m.count = 0u;
  vec3 pS;
  float depth;
  vec3 u;
  if (!geomConvexSearchDeepest(s, t, pS, depth, u)) return m;
  return geomConvexRestingContacts(s, t, pS, depth, u);
}

// --- Capsule vs box: a capsule resting along a face gets a contact at each end of the part of its
// axis over that face (iMSTK's single contact lets a lying capsule roll about it). The rule applies
// when the deepest axis point (geomSegmentDeepestParam) is outside the box, the face is the one it
// is farthest outside of, and the axis stays outside that face over the span; the span [t0, t1] is
// the axis clipped to the face's rectangle, widened to the deepest point where that lies beyond the
// face's edge. Each end's ball gives its own contact (none
// where it does not reach the box). Otherwise one contact, at the deepest point.
VKC_FN bool geomCapsuleFaceSpan(vec3 p0, vec3 p1, GeomShape box, float tDeep, VKC_OUT(vec2) span) {
  span = vec2(tDeep, tDeep);
  vec4 q = geomQuatUnit(box.p1);
  vec3 c = vec3(box.p0);
  vec3 e = vec3(box.p2);
  vec3 l0 = geomRotateInverse(q, p0 - c);
  vec3 l1 = geomRotateInverse(q, p1 - c);
  vec3 ld = mix(l0, l1, tDeep);
  // The face: the axis along which the deepest point is farthest outside.
  vec3 excess = abs(ld) - e;
  uint k = excess.y > excess.x ? 1u : 0u;
  if (excess.z > excess[k]) k = 2u;
  if (!(excess[k] > 0.0f)) return false;
  float t0 = 0.0f;
  float t1 = 1.0f;
  for (uint j = 0u; j < 3u; ++j) {
    if (j == k) continue;
    float a = l0[j];
    float d = l1[j] - l0[j];
    if (abs(d) <= 1e-12f) {
      if (abs(a) > e[j]) return false;
      continue;
    }
    float ta = (-e[j] - a) / d;
    float tb = (e[j] - a) / d;
    t0 = max(t0, min(ta, tb));
    t1 = min(t1, max(ta, tb));
  }
  if (!(t1 - t0 > 1e-6f)) return false;
  float side = ld[k] > 0.0f ? 1.0f : -1.0f;
  if (!(mix(l0, l1, t0)[k] * side > e[k]) || !(mix(l0, l1, t1)[k] * side > e[k])) return false;
  // A deepest point beyond the face's edge (nearest the edge, not the face) replaces the span's end
  // on its side.
  span = vec2(min(t0, tDeep), max(t1, tDeep));
  return true;
}

// --- Capsule vs cylinder: capsule-box's rule on a cylinder's flat and curved sides. A capsule lying on
// a cap gets a contact at each end of the part of its axis over the cap's disc: where the deepest axis
// point (geomSegmentDeepestParam, tDeep) is beyond a cap and over its disc, the span is the axis
// clipped to the disc's cylinder (radial distance <= radius), and the axis must stay beyond that cap at
// both ends. A capsule lying along the wall (its axis within kGeomCylinderFlatSine of the cylinder's:
// the wall is curved, so only a parallel axis touches it along a line) gets one at each end of the part
// of its axis within the cylinder's height, where the deepest point is outside the wall within the
// height and both ends are outside the wall. The span widens to tDeep where that lies past it. Each
// end's ball gives its own contact (none where it does not reach the cylinder); otherwise one contact,
// at the deepest point (span = (tDeep, tDeep), false).
VKC_FN bool geomCapsuleCylinderSpan(vec3 p0, vec3 p1, GeomShape cyl, float tDeep, VKC_OUT(vec2) span) {
  span = vec2(tDeep, tDeep);
  vec3 axis = geomUnit(vec3(cyl.p1));
  float rr = cyl.p0.w * cyl.p0.w;
  float h = cyl.p1.w;
  vec3 d0 = p0 - vec3(cyl.p0);
  vec3 d1 = p1 - vec3(cyl.p0);
  float y0d = dot(d0, axis);
  vec3 q0 = d0 - axis * y0d;  // the ends' radial parts
  vec3 q1 = d1 - axis * dot(d1, axis);
  vec3 qd = q1 - q0;
  vec3 deep = mix(d0, d1, tDeep);
  float yDeep = dot(deep, axis);
  vec3 qDeep = deep - axis * yDeep;
  bool overDisc = dot(qDeep, qDeep) <= rr;
  bool cap = abs(yDeep) > h && overDisc;
  bool wall = abs(yDeep) <= h && !overDisc;
  if (!cap && !wall) return false;
  float t0 = 0.0f;
  float t1 = 1.0f;
  if (cap) {  // |q0 + qd t|^2 <= r^2
    if (!geomSegmentInDisc(q0, qd, rr, t0, t1)) return false;
  } else {  // |y0 + (y1 - y0) t| <= h
    vec3 dd = d1 - d0;
    float along = dot(dd, axis);
    if (!(dot(qd, qd) <= (kGeomCylinderFlatSine * kGeomCylinderFlatSine) * dot(dd, dd)) || along == 0.0f ||
        !geomSegmentInSlab(y0d, along, h, t0, t1)) {
      return false;
    }
  }
  if (!(t1 - t0 > 1e-6f)) return false;
  vec3 e0 = mix(d0, d1, t0);
  vec3 e1 = mix(d0, d1, t1);
  float y0 = dot(e0, axis);
  float y1 = dot(e1, axis);
  if (cap) {
    float side = yDeep > 0.0f ? 1.0f : -1.0f;
    if (!(y0 * side > h) || !(y1 * side > h)) return false;
  } else {
    vec3 r0 = e0 - axis * y0;
    vec3 r1 = e1 - axis * y1;
    if (!(dot(r0, r0) > rr) || !(dot(r1, r1) > rr)) return false;
  }
  span = vec2(min(t0, tDeep), max(t1, tDeep));
  return true;
}

// Slot `slot` (0 or 1) of a capsule s against a cylinder t given the span of geomCapsuleCylinderSpan
// (two: it returned true): the ball at the span's end.
VKC_FN bool geomCapsuleCylinderSlot(GeomShape s, GeomShape t, vec2 span, bool two, uint slot,
                                    VKC_OUT(GeomElement) es, VKC_OUT(GeomElement) et) {
  es = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  et = es;
  if (slot == 1u && !two) return false;
  vec3 ball = mix(vec3(s.p0), vec3(s.p1), slot == 0u ? span.x : span.y);
  return geomBallContact(ball, s.p0.w, geomClosestShape(t, ball), kElementPointDirection, kGeomNoIndex, es,
                         et);
}

// The capsule-box contacts (s the capsule, t the box), slot 0 and slot 1 in order, with the deepest
// axis parameter tDeep = geomSegmentDeepestParam(p0, p1, t) given (the CPU SIMD twin computes it in
// lanes across queries).
VKC_FN GeomManifold geomCapsuleBoxManifoldAt(GeomShape s, GeomShape t, float tDeep) {
  GeomManifold m;
  m.count = 0u;
  vec3 p0 = vec3(s.p0);
  vec3 p1 = vec3(s.p1);
  vec2 span;
  uint ends = geomCapsuleFaceSpan(p0, p1, t, tDeep, span) ? 2u : 1u;
  for (uint i = 0u; i < ends; ++i) {
    vec3 ball = mix(p0, p1, i == 0u ? span.x : span.y);
    GeomElement es;
    GeomElement et;
    if (geomBallContact(ball, s.p0.w, geomClosestShape(t, ball), kElementPointDirection, kGeomNoIndex, es, et)) {
      m.s[m.count] = es;
      m.t[m.count] = et;
      m.count += 1u;
    }
  }
  return m;
}

VKC_FN GeomManifold geomCapsuleBoxManifold(GeomShape s, GeomShape t) {
  return geomCapsuleBoxManifoldAt(s, t, geomSegmentDeepestParam(vec3(s.p0), vec3(s.p1), t));
}

// --- Pairs

// Whether the pair of types (lo <= hi) has a static method here: all but the N/A pairs (plane-plane,
// point set-point set).
VKC_FN bool geomPairSupported(uint lo, uint hi) {
  if (lo >= kGeomTypeCount || hi >= kGeomTypeCount) return false;
  if (lo == hi && (lo == kGeomPlane || lo == kGeomPointSet)) return false;
  return true;
}

// Whether the pair (lo <= hi) has `method`: static for every supported pair; continuous for a point
// set against an analytic primitive or an implicit geometry (geometry_queries_implicit.h).
VKC_FN bool geomMethodSupported(uint lo, uint hi, uint method) {
  if (!geomPairSupported(lo, hi)) return false;
  if (method == kGeomMethodStatic) return true;
  if (method != kGeomMethodContinuous) return false;
  return (hi == kGeomPointSet && lo <= kGeomPlane) || (lo == kGeomPointSet && hi == kGeomImplicit);
}

// --- The sample box of a box, cylinder or plane against an implicit geometry -------------------
// A sample's surface point (geomGridSurfacePoint) is the sample moved by at most half a cell diagonal,
// so a sample whose surface point can lie inside a box or cylinder lies within the shape's bounding
// box widened by that, and one whose surface point can lie below a plane lies at most that far above
// it. geomShapeSampleBox gives those samples as a box of grid indices (for a plane the bounding box of
// the samples near or below it), and a query's slots past the shape's own points are that box's
// samples in grid order (x fastest): the other samples' slots have no contact, so every contact and
// its order are those of a slot per sample.
// The host's slot layout and the device's (geometry_queries_device_layout.comp) count the box, and
// each slot's invocation computes it again to find its sample, so every platform must compute the
// same box bit for bit: its bounds use only operations that Vulkan and IEEE round alike (add,
// subtract, multiply, absolute value, min, max; no square root or fused multiply-add) summed in a
// fixed order, and each count of samples below a bound is estimated by a division (whose rounding
// may differ) and then moved to the exact count by comparisons with the samples' own coordinates
// (origin + i * spacing, computed as geomGridSurfacePoint computes them, monotonic in i).
// Bounds: the box's half extents sum |R_rk| e_k with R the rotation matrix of the quaternion scaled by
// its squared length (a valid one is unit within kGeomUnitTolerance, so that squared length is at least
// 0.998: the factor 1.003 covers it); the cylinder's |u_k| h + r min(1, |u_j| + |u_l|) (the square root
// of u_j^2 + u_l^2 bounded by the sum; the factor 1.0011 covers an axis 0.999 long). The margin: half the
// sum of the spacings (at least half the cell diagonal; 1.001 times it for a plane, whose normal may be
// 0.1% long) and 1e-4 of the coordinates' size (the rounding of the inside test and of these bounds);
// then one sample more each way.

// Along one axis: the samples [first, end) of the dim samples origin + i * spacing that lie in
// [lo, hi], widened by one each way; end = first when none lies in it. The counts below lo and at or
// below hi are estimated by a division (which may round differently on each device) and then moved
// to the exact counts by comparisons with the samples' coordinates (which are monotonic in i), so the
// result does not depend on the estimate.
VKC_FN uint geomSamplesBelow(float origin, float spacing, uint dim, float m, float x, bool orEqual) {
  // m * s(i) (m > 0) against x, s(i) = origin + i * spacing.
  float v = (x / m - origin) / spacing;
  uint n = 0u;
  if (v >= float(dim)) {
    n = dim;
  } else if (v >= 0.0f) {
    n = uint(floor(v)) + 1u;
  }
  n = min(n, dim);
  // Down while sample n - 1 is not below x, up while sample n is.
  while (n > 0u && !(orEqual ? m * (origin + float(n - 1u) * spacing) <= x
                             : m * (origin + float(n - 1u) * spacing) < x))
    n -= 1u;
  while (n < dim &&
         (orEqual ? m * (origin + float(n) * spacing) <= x : m * (origin + float(n) * spacing) < x))
    n += 1u;
  return n;
}

VKC_FN uvec2 geomSampleSpan(float origin, float spacing, uint dim, float lo, float hi) {
  uint a = geomSamplesBelow(origin, spacing, dim, 1.0f, lo, false);
  uint b = geomSamplesBelow(origin, spacing, dim, 1.0f, hi, true);
  if (b <= a) return uvec2(a, a);
  return uvec2(a > 0u ? a - 1u : 0u, min(b + 1u, dim));
}

// Along axis k of a plane's sample box: the samples with n_k s(i) <= d (a prefix for n_k > 0, a
// suffix for n_k < 0, all or none for n_k = 0), widened by one sample; [first, first) when none.
VKC_FN uvec2 geomPlaneSampleSpan(float origin, float spacing, uint dim, float nk, float d) {
  if (nk > 0.0f) {
    uint b = geomSamplesBelow(origin, spacing, dim, nk, d, true);
    return b == 0u ? uvec2(0u, 0u) : uvec2(0u, min(b + 1u, dim));
  }
  if (nk < 0.0f) {
    uint a = geomSamplesBelow(origin, spacing, dim, -nk, -d, false);  // n_k s(i) > d: before the suffix
    return a == dim ? uvec2(dim, dim) : uvec2(a > 0u ? a - 1u : 0u, dim);
  }
  return d >= 0.0f ? uvec2(0u, dim) : uvec2(0u, 0u);
}

// Box, cylinder or plane `shape` against implicit geometry `grid`: the first sample index per axis
// (lo.xyz) and the sample counts (size.xyz; size.w their product, 0 when the box is empty).
VKC_FN void geomShapeSampleBox(GeomShape shape, GeomShape grid, VKC_OUT(uvec4) lo, VKC_OUT(uvec4) size) {
  vec3 origin = vec3(grid.p0);
  vec3 spacing = vec3(grid.p1);
  vec3 dims = vec3(grid.p2);
  if (shape.info.x == kGeomPlane) {
    // The bounding box of the grid's samples x with n . (x - p) <= 1.001 times half the sum of the
    // spacings plus 1e-4 of the coordinates' size (a surface point below the plane: the sample is at
    // most half a cell diagonal away; n is unit within kGeomUnitTolerance): along axis k,
    // n_k x_k <= n . p + that - sum over the other axes of the least n_j x_j on the grid.
    vec3 n = vec3(shape.p1);
    vec3 p = vec3(shape.p0);
    vec3 top = origin + (dims - vec3(1.0f)) * spacing;
    vec3 least = min(n * origin, n * top);
    float scale =
        max(max(max(abs(p.x), abs(p.y)), abs(p.z)), max(max(max(abs(origin.x), abs(origin.y)), abs(origin.z)),
                                                        max(max(abs(top.x), abs(top.y)), abs(top.z))));
    float d = ((n.x * p.x + n.y * p.y) + n.z * p.z) +
              (1.001f * (0.5f * ((spacing.x + spacing.y) + spacing.z)) + 1e-4f * scale);
    uvec2 sx = geomPlaneSampleSpan(origin.x, spacing.x, uint(dims.x), n.x, (d - least.y) - least.z);
    uvec2 sy = geomPlaneSampleSpan(origin.y, spacing.y, uint(dims.y), n.y, (d - least.x) - least.z);
    uvec2 sz = geomPlaneSampleSpan(origin.z, spacing.z, uint(dims.z), n.z, (d - least.x) - least.y);
    lo = uvec4(sx.x, sy.x, sz.x, 0u);
    size = uvec4(sx.y - sx.x, sy.y - sy.x, sz.y - sz.x, 0u);
    size.w = size.x * size.y * size.z;
    return;
  }
  vec3 e = vec3(0.0f);
  if (shape.info.x == kGeomOrientedBox) {
    float x = shape.p1.x;
    float y = shape.p1.y;
    float z = shape.p1.z;
    float w = shape.p1.w;
    float xx = x * x;
    float yy = y * y;
    float zz = z * z;
    float ww = w * w;
    float r00 = ((ww + xx) - yy) - zz;
    float r11 = ((ww - xx) + yy) - zz;
    float r22 = ((ww - xx) - yy) + zz;
    float r01 = 2.0f * (x * y - z * w);
    float r02 = 2.0f * (x * z + y * w);
    float r10 = 2.0f * (x * y + z * w);
    float r12 = 2.0f * (y * z - x * w);
    float r20 = 2.0f * (x * z - y * w);
    float r21 = 2.0f * (y * z + x * w);
    vec3 ext = vec3(shape.p2);
    e.x = ((abs(r00) * ext.x + abs(r01) * ext.y) + abs(r02) * ext.z) * 1.003f;
    e.y = ((abs(r10) * ext.x + abs(r11) * ext.y) + abs(r12) * ext.z) * 1.003f;
    e.z = ((abs(r20) * ext.x + abs(r21) * ext.y) + abs(r22) * ext.z) * 1.003f;
  } else {
    vec3 u = abs(vec3(shape.p1));
    float r = shape.p0.w;
    float h = shape.p1.w;
    e.x = (u.x * h + r * min(1.0f, u.y + u.z)) * 1.0011f;
    e.y = (u.y * h + r * min(1.0f, u.x + u.z)) * 1.0011f;
    e.z = (u.z * h + r * min(1.0f, u.x + u.y)) * 1.0011f;
  }
  vec3 c = vec3(shape.p0);
  float extent = max(max(abs(c.x) + e.x, abs(c.y) + e.y), abs(c.z) + e.z);
  extent = max(extent, max(max(abs(origin.x) + dims.x * spacing.x, abs(origin.y) + dims.y * spacing.y),
                           abs(origin.z) + dims.z * spacing.z));
  float margin = 0.5f * ((spacing.x + spacing.y) + spacing.z) + 1e-4f * extent;
  vec3 reach = e + vec3(margin);
  uvec2 sx = geomSampleSpan(origin.x, spacing.x, uint(dims.x), c.x - reach.x, c.x + reach.x);
  uvec2 sy = geomSampleSpan(origin.y, spacing.y, uint(dims.y), c.y - reach.y, c.y + reach.y);
  uvec2 sz = geomSampleSpan(origin.z, spacing.z, uint(dims.z), c.z - reach.z, c.z + reach.z);
  lo = uvec4(sx.x, sy.x, sz.x, 0u);
  size = uvec4(sx.y - sx.x, sy.y - sy.x, sz.y - sz.x, 0u);
  size.w = size.x * size.y * size.z;
}

// Sample `k` (< size.w) of a sample box as an index into its grid of nx * ny samples per layer.
VKC_FN uint geomSampleBoxIndex(uvec4 lo, uvec4 size, uint nx, uint ny, uint k) {
  uint i = lo.x + k % size.x;
  uint j = lo.y + (k / size.x) % size.y;
  uint l = lo.z + k / (size.x * size.y);
  return i + nx * (j + ny * l);
}

// The slots of a supported static pair of two analytic primitives, types lo <= hi (<= kGeomPlane);
// 0 for an unsupported pair. Written apart from geomSlotCount so that the primitive pairs' passes
// (geometry_queries_family.h) do not compile the implicit geometries' sample boxes.
VKC_FN uint geomPrimitivePairSlots(uint lo, uint hi) {
  if (!geomPairSupported(lo, hi)) return 0u;
  if (lo == kGeomOrientedBox && hi == kGeomPlane) return kGeomBoxPlaneSlots;
  if (lo == kGeomOrientedBox && hi == kGeomOrientedBox) return kGeomBoxBoxSlots;
  if (lo == kGeomCapsule && hi == kGeomOrientedBox) return kGeomCapsuleBoxSlots;
  if (lo == kGeomCapsule && hi == kGeomPlane) return kGeomCapsulePlaneSlots;
  if (lo == kGeomCylinder && hi == kGeomPlane) return kGeomCylinderPlaneSlots;
  if (lo == kGeomCapsule && hi == kGeomCylinder) return kGeomCapsuleCylinderSlots;
  if (lo == kGeomCylinder && hi == kGeomOrientedBox) return kGeomCylinderBoxSlots;
  if (lo == kGeomCylinder && hi == kGeomCylinder) return kGeomCylinderCylinderSlots;
  return 1u;
}

// Slots of a query: 1 for most primitive pairs, 8 box-plane, box-box and cylinder-box, 6
// cylinder-cylinder, 2 capsule-box, capsule-plane and capsule-cylinder, 4 cylinder-plane, the point count for
// a point set, against an implicit geometry the samples of a plane's sample box (the grid's surface
// points), a cylinder's or box's 8 (the shape's own points) and its box's samples, both sample counts for two
// implicit geometries, 1 for an implicit geometry against a sphere, 3 against a capsule.
VKC_FN uint geomSlotCount(GeomShape a, GeomShape b) {
  uint lo = min(a.info.x, b.info.x);
  uint hi = max(a.info.x, b.info.x);
  if (!geomPairSupported(lo, hi)) return 0u;
  if (hi == kGeomPointSet || lo == kGeomPointSet) return a.info.x == kGeomPointSet ? a.info.z : b.info.z;
  if (hi == kGeomImplicit) {
    if (lo == kGeomImplicit) return a.info.z + b.info.z;
    if (lo == kGeomSphere) return 1u;
    if (lo == kGeomCapsule) return kGeomCapsuleImplicitSlots;
    uvec4 first;
    uvec4 size;
    if (a.info.x == kGeomImplicit) {
      geomShapeSampleBox(b, a, first, size);
    } else {
      geomShapeSampleBox(a, b, first, size);
    }
    return (lo == kGeomPlane ? 0u : kGeomImplicitShapeSlots) + size.w;
  }
  return geomPrimitivePairSlots(lo, hi);
}

// Lexicographic order of two geometries of one type (p0, p1, p2, flags, first, count): the canonical order of a
// same-type pair, so that swapping a query's inputs swaps its elements bit for bit.
VKC_FN int geomCompareVec4(vec4 a, vec4 b) {
  for (uint i = 0u; i < 4u; ++i) {
    if (a[i] < b[i]) return -1;
    if (a[i] > b[i]) return 1;
  }
  return 0;
}
VKC_FN bool geomShapeLess(GeomShape a, GeomShape b) {
  int c = geomCompareVec4(a.p0, b.p0);
  if (c == 0) c = geomCompareVec4(a.p1, b.p1);
  if (c == 0) c = geomCompareVec4(a.p2, b.p2);
  if (c != 0) return c < 0;
  if (a.info.w != b.info.w) return a.info.w < b.info.w;
  if (a.info.y != b.info.y) return a.info.y < b.info.y;  // implicit geometries: their samples
  return a.info.z < b.info.z;
}

// A pair in canonical order (s.info.x <= t.info.x). `point` is the slot's point when t is a point set.
VKC_FN bool geomCanonicalContact(GeomShape s, GeomShape t, uint slot, vec3 point, VKC_OUT(GeomElement) es,
                                 VKC_OUT(GeomElement) et) {
  uint ts = s.info.x;
  uint tt = t.info.x;
  es = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  et = es;
  // Each family's branches only where it is compiled (geometry_queries.h: VKC_GEOM_WITH).
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_BASIC)
  if (tt == kGeomPointSet) {
    GeomClosest cl;
    if (ts == kGeomPlane) {
      cl = geomClosestPlane(vec3(s.p0), geomUnit(vec3(s.p1)), point);  // one-sided for points
    } else {
      cl = geomClosestShape(s, point);
    }
    return geomBallContact(point, 0.0f, cl, kElementPointIndexDirection, slot, et, es);
  }
  if (tt == kGeomPlane) {
    vec3 c = vec3(s.p0);
    if (ts == kGeomCapsule) c = (vec3(s.p0) + vec3(s.p1)) * 0.5f;
    vec3 n = geomPlaneNormalFor(t, c);
    vec3 o = vec3(t.p0);
    if (ts == kGeomSphere) return geomBallContact(c, s.p0.w, geomClosestPlane(o, n, c), kElementPointDirection, kGeomNoIndex, es, et);
    if (ts == kGeomCapsule) {
      vec3 end = slot == 0u ? vec3(s.p0) : vec3(s.p1);
      if (slot == 1u && vec3(s.p1) == vec3(s.p0)) return false;  // a capsule of length 0 is a sphere
      return geomBallContact(end, s.p0.w, geomClosestPlane(o, n, end), kElementPointDirection, kGeomNoIndex, es, et);
    }
    if (ts == kGeomCylinder) {
      vec3 rim;
      if (!geomCylinderPlanePoint(s, n, slot, rim)) return false;
      return geomBallContact(rim, 0.0f, geomClosestPlane(o, n, rim), kElementPointDirection, kGeomNoIndex, es,
                             et);
    }
    // Box: one contact per corner below the plane.
    if (!geomBoxCornerDistinct(vec3(s.p2), slot)) return false;
    vec3 corner = geomBoxCorner(s, slot);
    return geomBallContact(corner, 0.0f, geomClosestPlane(o, n, corner), kElementPointDirection, kGeomNoIndex, es, et);
  }
  if (ts == kGeomSphere) {
    return geomBallContact(vec3(s.p0), s.p0.w, geomClosestShape(t, vec3(s.p0)), kElementPointDirection, kGeomNoIndex, es, et);
  }
  if (ts == kGeomCapsule && tt == kGeomCapsule) {
    vec2 st = geomSegmentSegmentParams(vec3(s.p0), vec3(s.p1), vec3(t.p0), vec3(t.p1));
    vec3 ballT = mix(vec3(t.p0), vec3(t.p1), st.y);
    vec3 ballS = mix(vec3(s.p0), vec3(s.p1), st.x);
    return geomBallContact(ballS, s.p0.w, geomClosestSphere(ballT, t.p0.w, ballS), kElementPointDirection, kGeomNoIndex,
                           es, et);
  }
  if (ts == kGeomCapsule && tt == kGeomCylinder) {
    float tDeep = geomSegmentDeepestParam(vec3(s.p0), vec3(s.p1), t);
    vec2 span;
    bool two = geomCapsuleCylinderSpan(vec3(s.p0), vec3(s.p1), t, tDeep, span);
    return geomCapsuleCylinderSlot(s, t, span, two, slot, es, et);
  }
#endif
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_MANIFOLD)
  if (tt == kGeomOrientedBox && (ts == kGeomCapsule || ts == kGeomOrientedBox)) {
    GeomManifold m = ts == kGeomCapsule ? geomCapsuleBoxManifold(s, t) : geomBoxBoxManifold(s, t);
    if (slot >= m.count) return false;
    es = m.s[slot];
    et = m.t[slot];
    return true;
  }
#endif
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_CONVEX)
  if (ts == kGeomCylinder && (tt == kGeomCylinder || tt == kGeomOrientedBox)) {
    if (tt == kGeomCylinder ? !geomCylinderCylinderSlotMayHit(s, t, slot)
                            : !geomCylinderBoxSlotMayHit(s, t, slot)) {
      return false;
    }
    GeomManifold m = geomConvexManifold(s, t);
    if (slot >= m.count) return false;
    es = m.s[slot];
    et = m.t[slot];
    return true;
  }
#endif
  return false;  // unsupported pairs (geomPairSupported); implicit pairs: geometry_queries_implicit.h
}

// Whether query (a, b) is evaluated as (b, a): the canonical order puts the lower type first, and
// for one type the lesser geometry (geomShapeLess).
VKC_FN bool geomSwapped(GeomShape a, GeomShape b) {
  return a.info.x > b.info.x || (a.info.x == b.info.x && geomShapeLess(b, a));
}

// The canonical pair's elements (es, et) back in the caller's order.
VKC_FN void geomUnswap(bool swapped, GeomElement es, GeomElement et, VKC_OUT(GeomElement) ea, VKC_OUT(GeomElement) eb) {
  ea = swapped ? et : es;
  eb = swapped ? es : et;
}

// One slot of query (a, b) in the caller's order: elements ea (side a) and eb (side b); true when
// they are a contact. The pair is evaluated in canonical order (lower type first; same types:
// geomShapeLess) and the elements swapped back, so swapping a and b swaps ea and eb exactly.
VKC_FN bool geomSlotContact(GeomShape a, GeomShape b, uint slot, vec3 point, VKC_OUT(GeomElement) ea,
                            VKC_OUT(GeomElement) eb) {
  bool swapped = geomSwapped(a, b);
  GeomElement es;
  GeomElement et;
  bool hit = geomCanonicalContact(swapped ? b : a, swapped ? a : b, slot, point, es, et);
  geomUnswap(swapped, es, et, ea, eb);
  return hit;
}

// All the contacts of a query (a, b) of two primitives at once, sides in the caller's order (s: a,
// t: b): contact k here is slot k of geomSlotContact, bit for bit (slots without a contact skipped).
// The CPU twin computes each query's manifold once with it; a device thread per slot calls
// geomSlotContact. Not for point sets (their slots are their points).
VKC_FN GeomManifold geomQueryContacts(GeomShape a, GeomShape b) {
  bool swapped = a.info.x > b.info.x || (a.info.x == b.info.x && geomShapeLess(b, a));
  GeomShape s = swapped ? b : a;
  GeomShape t = swapped ? a : b;
  GeomManifold m;
  m.count = 0u;
  if (s.info.x == kGeomOrientedBox && t.info.x == kGeomOrientedBox) {
    m = geomBoxBoxManifold(s, t);
  } else if (s.info.x == kGeomCapsule && t.info.x == kGeomOrientedBox) {
    m = geomCapsuleBoxManifold(s, t);
  } else if (s.info.x == kGeomCylinder && (t.info.x == kGeomCylinder || t.info.x == kGeomOrientedBox)) {
    m = geomConvexManifold(s, t);
  } else if (s.info.x == kGeomCapsule && t.info.x == kGeomCylinder) {
    // geomCanonicalContact's slots with the deepest parameter and the span computed once.
    float tDeep = geomSegmentDeepestParam(vec3(s.p0), vec3(s.p1), t);
    vec2 span;
    bool two = geomCapsuleCylinderSpan(vec3(s.p0), vec3(s.p1), t, tDeep, span);
    for (uint slot = 0u; slot < kGeomCapsuleCylinderSlots; ++slot) {
      GeomElement es;
      GeomElement et;
      if (geomCapsuleCylinderSlot(s, t, span, two, slot, es, et)) {
        m.s[m.count] = es;
        m.t[m.count] = et;
        m.count += 1u;
      }
    }
  } else if (s.info.x == kGeomOrientedBox && t.info.x == kGeomPlane) {
    // geomCanonicalContact's box-plane slots with the rotation and the plane's normal computed once
    // (the same operations: the same bits).
    vec3 n = geomPlaneNormalFor(t, vec3(s.p0));
    vec4 q = geomQuatUnit(s.p1);
    for (uint slot = 0u; slot < kGeomBoxPlaneSlots; ++slot) {
      if (!geomBoxCornerDistinct(vec3(s.p2), slot)) continue;
      vec3 corner = geomBoxCornerRotated(s, q, slot);
      GeomElement es;
      GeomElement et;
      if (geomBallContact(corner, 0.0f, geomClosestPlane(vec3(t.p0), n, corner), kElementPointDirection, kGeomNoIndex,
                          es, et)) {
        m.s[m.count] = es;
        m.t[m.count] = et;
        m.count += 1u;
      }
    }
  } else {
    uint slots = geomSlotCount(s, t);
    for (uint slot = 0u; slot < slots && slot < 8u; ++slot) {
      GeomElement es;
      GeomElement et;
      if (geomCanonicalContact(s, t, slot, vec3(0.0f), es, et)) {
        m.s[m.count] = es;
        m.t[m.count] = et;
        m.count += 1u;
      }
    }
  }
  if (swapped) {
    for (uint k = 0u; k < m.count; ++k) {
      GeomElement e = m.s[k];
      m.s[k] = m.t[k];
      m.t[k] = e;
    }
  }
  return m;
}

VKC_NAMESPACE_END

#endif  // VKC_SHARED_GEOMETRY_QUERIES_MATH_H
