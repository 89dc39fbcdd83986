// The geometry queries' slots that read arrays: implicit geometries (a signed distance field sampled
// on a grid), the continuous method (points moving from their previous positions) and, as the entry
// point of every slot, geomQuerySlot. Written once: GLSL includes it at file scope, C++ inside the
// body of a struct (src/cpu/geometry_queries.cpp), so that the functions become members. No
// namespace and no include guard; geometry_queries_math.h must be included first. The includer
// first provides:
//   vec3 geomPointAt(uint i)          point i of the points array (xyz)
//   vec3 geomPreviousPointAt(uint i)  point i's previous position (only read by continuous queries)
//   float geomGridSampleAt(uint i)    sample i of the grid sample array (only read by implicit geometries)
//   vec4 geomStateAt(uint i)          entry i of the persistent state array (only read by continuous queries)
// The new state of a continuous slot comes back through geomQuerySlot's `newState`: the includer
// stores it at entry (GeomQuery::state + slot), once per call (a counting pass that evaluates the
// slots before the writing pass must not store it, or the writing pass would read the new state).
// Indices passed to the accessors are those of validated input (grid indices are clamped to the
// grid here); a device includer clamps them to its buffers. Every loop is bounded by a constant.

// --- Implicit geometry: the grid (GeomShape layout in geometry_queries.h).

VKC_FN uvec4 geomGridDims(GeomShape g) { return uvec4(uint(g.p2.x), uint(g.p2.y), uint(g.p2.z), 0u); }

VKC_FN float geomGridSample(GeomShape g, uvec4 n, uint i, uint j, uint k) {
  i = min(i, n.x - 1u);
  j = min(j, n.y - 1u);
  k = min(k, n.z - 1u);
  return geomGridSampleAt(g.info.y + i + n.x * (j + n.y * k));
}

// The 8 samples of cell c (its lowest corner), for the trilinear interpolation: v[i + 2j + 4k].
struct GeomCell {
  float v[8];
};

VKC_FN GeomCell geomGridCell(GeomShape g, uvec4 n, uvec4 c) {
  GeomCell cell;
  for (uint k = 0u; k < 8u; ++k) {
    cell.v[k] = geomGridSample(g, n, c.x + (k & 1u), c.y + ((k >> 1u) & 1u), c.z + ((k >> 2u) & 1u));
  }
  return cell;
}

// The cell holding grid coordinate u (in [0, n - 1]): the last cell for u on the far faces.
VKC_FN uvec4 geomGridCellOf(uvec4 n, vec3 u) {
  return uvec4(min(uint(max(floor(u.x), 0.0f)), n.x - 2u), min(uint(max(floor(u.y), 0.0f)), n.y - 2u),
               min(uint(max(floor(u.z), 0.0f)), n.z - 2u), 0u);
}

VKC_FN float geomTrilinear(GeomCell cell, vec3 f) {
  float x00 = mix(cell.v[0], cell.v[1], f.x);
  float x10 = mix(cell.v[2], cell.v[3], f.x);
  float x01 = mix(cell.v[4], cell.v[5], f.x);
  float x11 = mix(cell.v[6], cell.v[7], f.x);
  return mix(mix(x00, x10, f.y), mix(x01, x11, f.y), f.z);
}

// The field at p: trilinear inside the grid's box; outside it, the value at the clamped point plus
// the distance to the box (an upper bound of the distance for a true distance field, continuous).
VKC_FN float geomGridDistance(GeomShape g, vec3 p) {
  uvec4 n = geomGridDims(g);
  vec3 origin = vec3(g.p0);
  vec3 spacing = vec3(g.p1);
  vec3 hi = vec3(float(n.x - 1u), float(n.y - 1u), float(n.z - 1u));
  vec3 u = clamp((p - origin) / spacing, vec3(0.0f), hi);
  uvec4 c = geomGridCellOf(n, u);
  float inside = geomTrilinear(geomGridCell(g, n, c), u - vec3(float(c.x), float(c.y), float(c.z)));
  vec3 off = p - (origin + u * spacing);
  return inside + sqrt(dot(off, off));
}

// The unit gradient at p by central differences one spacing apart on each axis (the fallback
// direction where the differences vanish).
VKC_FN vec3 geomGridNormal(GeomShape g, vec3 p) {
  vec3 h = vec3(g.p1);
  vec3 grad = vec3(0.0f);
  for (uint k = 0u; k < 3u; ++k) {
    vec3 e = vec3(0.0f);
    e[k] = h[k];
    grad[k] = (geomGridDistance(g, p + e) - geomGridDistance(g, p - e)) / (2.0f * h[k]);
  }
  float len2 = dot(grad, grad);
  if (!(len2 > 0.0f)) return vec3(kGeomFallbackX, kGeomFallbackY, kGeomFallbackZ);
  return grad / sqrt(len2);
}

// --- Every geometry but a point set as an implicit function: its signed distance at p (point.w),
// the outward unit normal (the grid: the gradient) and a surface point (p moved back along the normal
// by the distance). The analytic primitives use their exact closest point (geomClosestShape); a
// plane is one-sided here, as for point sets.
VKC_FN GeomClosest geomImplicitClosest(GeomShape s, vec3 p) {
  if (s.info.x == kGeomPlane) return geomClosestPlane(vec3(s.p0), geomUnit(vec3(s.p1)), p);
  if (s.info.x != kGeomImplicit) return geomClosestShape(s, p);
  float d = geomGridDistance(s, p);
  vec3 n = geomGridNormal(s, p);
  return geomMakeClosest(p - n * d, n, d);
}

VKC_FN float geomImplicitDistance(GeomShape s, vec3 p) {
  if (s.info.x == kGeomImplicit) return geomGridDistance(s, p);
  if (s.info.x == kGeomPlane) return dot(p - vec3(s.p0), geomUnit(vec3(s.p1)));
  return geomClosestShape(s, p).point.w;
}

// --- The continuous trace: the first parameter t in [0, 1] where the field along x0 -> x1 turns
// negative, given field(x0) >= 0. Returned: the outside end of the final bracket (field >= 0, within
// 2^-kGeomRootSteps of the root), or -1 when the segment stays outside.

// Bisection of a bracket [lo, hi] (field(lo) >= 0 > field(hi)) of an analytic shape.
VKC_FN float geomBisectShape(GeomShape s, vec3 x0, vec3 x1, float lo, float hi) {
  for (uint i = 0u; i < kGeomRootSteps; ++i) {
    float mid = (lo + hi) * 0.5f;
    if (geomImplicitDistance(s, mix(x0, x1, mid)) < 0.0f) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return lo;
}

// Analytic primitives are convex: their signed distance is convex along a segment, so the segment
// enters iff its minimum (geomSegmentDeepestParam's golden-section search; a plane: the end) is
// negative, and the field decreases from x0 to that minimum: the first root is bisected there.
VKC_FN float geomTraceShape(GeomShape s, vec3 x0, vec3 x1) {
  float tMin = s.info.x == kGeomPlane ? 1.0f : geomSegmentDeepestParam(x0, x1, s);
  // A minimum at the start: the field grows along the segment (a start a hair inside by rounding, a
  // saved point moving out): no entry.
  if (!(tMin > 0.0f) || !(geomImplicitDistance(s, mix(x0, x1, tMin)) < 0.0f)) return -1.0f;
  return geomBisectShape(s, x0, x1, 0.0f, tMin);
}

// A cubic k.x + k.y s + k.z s^2 + k.w s^3.
VKC_FN float geomCubic(vec4 k, float s) { return k.x + s * (k.y + s * (k.z + s * k.w)); }

// The trilinear field of `cell` along the local coordinates a + b s as a cubic in s.
VKC_FN vec4 geomCellCubic(GeomCell cell, vec3 a, vec3 b) {
  float c000 = cell.v[0];
  float c100 = cell.v[1] - cell.v[0];
  float c010 = cell.v[2] - cell.v[0];
  float c001 = cell.v[4] - cell.v[0];
  float c110 = cell.v[3] - cell.v[1] - cell.v[2] + cell.v[0];
  float c101 = cell.v[5] - cell.v[1] - cell.v[4] + cell.v[0];
  float c011 = cell.v[6] - cell.v[2] - cell.v[4] + cell.v[0];
  float c111 = cell.v[7] - cell.v[3] - cell.v[5] - cell.v[6] + cell.v[1] + cell.v[2] + cell.v[4] - cell.v[0];
  // Products of the linear coordinates x = a.x + b.x s etc., as polynomials in s.
  vec3 xy = vec3(a.x * a.y, a.x * b.y + b.x * a.y, b.x * b.y);
  vec3 xz = vec3(a.x * a.z, a.x * b.z + b.x * a.z, b.x * b.z);
  vec3 yz = vec3(a.y * a.z, a.y * b.z + b.y * a.z, b.y * b.z);
  vec4 xyz = vec4(xy.x * a.z, xy.x * b.z + xy.y * a.z, xy.y * b.z + xy.z * a.z, xy.z * b.z);
  vec4 k = vec4(c000 + c100 * a.x + c010 * a.y + c001 * a.z, c100 * b.x + c010 * b.y + c001 * b.z, 0.0f, 0.0f);
  k += vec4(c110 * xy, 0.0f) + vec4(c101 * xz, 0.0f) + vec4(c011 * yz, 0.0f) + c111 * xyz;
  return k;
}

// The first s in (0, 1] where the cubic is negative, bracketed: its critical points split [0, 1]
// into monotone pieces, whose ends are checked in order; the first negative end's piece is bisected.
// Returns the bracket's non-negative end, or -1 when the cubic stays >= 0 on [0, 1].
VKC_FN float geomCubicFirstRoot(vec4 k) {
  float cand[4];
  cand[0] = 0.0f;
  cand[1] = 1.0f;
  cand[2] = 1.0f;
  cand[3] = 1.0f;
  // Roots of the derivative k.y + 2 k.z s + 3 k.w s^2 inside (0, 1), ascending.
  float qa = 3.0f * k.w;
  float qb = 2.0f * k.z;
  float qc = k.y;
  if (qa != 0.0f) {
    float disc = qb * qb - 4.0f * qa * qc;
    if (disc >= 0.0f) {
      // The stable form (no cancellation between -qb and the root of the discriminant).
      float q = -0.5f * (qb + (qb >= 0.0f ? sqrt(disc) : -sqrt(disc)));
      float r0 = q / qa;
      float r1 = q != 0.0f ? qc / q : r0;
      float lo = min(r0, r1);
      float hi = max(r0, r1);
      cand[1] = clamp(lo, 0.0f, 1.0f);
      cand[2] = clamp(hi, 0.0f, 1.0f);
    }
  } else if (qb != 0.0f) {
    cand[1] = clamp(-qc / qb, 0.0f, 1.0f);
  }
  // s = 0 is not a candidate: the piece starts where the field was found >= 0 (the segment's start,
  // or the previous piece's end), and a hair below 0 there by rounding is no entry.
  float prev = 0.0f;
  for (uint i = 1u; i < 4u; ++i) {
    float s = cand[i];
    if (geomCubic(k, s) < 0.0f) {
      float lo = prev;
      float hi = s;
      for (uint it = 0u; it < kGeomRootSteps; ++it) {
        float mid = (lo + hi) * 0.5f;
        if (geomCubic(k, mid) < 0.0f) {
          hi = mid;
        } else {
          lo = mid;
        }
      }
      return lo;
    }
    prev = s;
  }
  return -1.0f;
}

// The grid: the segment is clipped to the grid's box and walked cell by cell (at most
// kGeomTraceMaxCells cells: validation bounds the dimensions); in each cell the trilinear field along
// the segment is a cubic, whose first root is bracketed exactly (geomCubicFirstRoot): no thin wall
// between samples of the segment is missed, however fast the point. Outside the box the field is
// positive when the samples on the grid's faces are (the object inside its grid): the trace ignores
// those parts, and a point that ends inside gets the static contact anyway (geomContinuousPoint).
VKC_FN float geomTraceGrid(GeomShape g, vec3 x0, vec3 x1) {
  uvec4 n = geomGridDims(g);
  vec3 origin = vec3(g.p0);
  vec3 spacing = vec3(g.p1);
  vec3 u0 = (x0 - origin) / spacing;
  vec3 d = (x1 - origin) / spacing - u0;
  vec3 hi = vec3(float(n.x - 1u), float(n.y - 1u), float(n.z - 1u));
  float tA = 0.0f;
  float tB = 1.0f;
  for (uint k = 0u; k < 3u; ++k) {
    if (d[k] == 0.0f) {
      if (u0[k] < 0.0f || u0[k] > hi[k]) return -1.0f;
      continue;
    }
    float ta = (0.0f - u0[k]) / d[k];
    float tb = (hi[k] - u0[k]) / d[k];
    tA = max(tA, min(ta, tb));
    tB = min(tB, max(ta, tb));
  }
  if (!(tA <= tB)) return -1.0f;
  float t = tA;
  for (uint it = 0u; it < kGeomTraceMaxCells && t < tB; ++it) {
    // The end of this cell's piece: the nearest cell face crossed after t.
    float tn = tB;
    vec3 ut = u0 + d * t;
    for (uint k = 0u; k < 3u; ++k) {
      if (d[k] == 0.0f) continue;
      float face = d[k] > 0.0f ? floor(ut[k]) + 1.0f : ceil(ut[k]) - 1.0f;
      float tk = (face - u0[k]) / d[k];
      if (tk <= t) tk = (face + (d[k] > 0.0f ? 1.0f : -1.0f) - u0[k]) / d[k];
      tn = min(tn, tk);
    }
    uvec4 c = geomGridCellOf(n, clamp(u0 + d * ((t + tn) * 0.5f), vec3(0.0f), hi));
    vec3 corner = vec3(float(c.x), float(c.y), float(c.z));
    GeomCell cell = geomGridCell(g, n, c);
    // A trilinear field is a convex combination of its cell's samples: a cell with no negative
    // sample has no root (most cells a point crosses lie away from the surface); its cubic is skipped.
    float lowest = min(min(min(cell.v[0], cell.v[1]), min(cell.v[2], cell.v[3])),
                       min(min(cell.v[4], cell.v[5]), min(cell.v[6], cell.v[7])));
    if (lowest < 0.0f) {
      float s = geomCubicFirstRoot(geomCellCubic(cell, ut - corner, d * (tn - t)));
      if (s >= 0.0f) return t + s * (tn - t);
    }
    t = tn;
  }
  return -1.0f;
}

VKC_FN float geomTrace(GeomShape s, vec3 x0, vec3 x1) {
  if (s.info.x == kGeomImplicit) return geomTraceGrid(s, x0, x1);
  return geomTraceShape(s, x0, x1);
}

// --- A moving primitive (GeometryQueryInput::previousGeometries): its pose at the step's start
// `prev` and at its end `cur` (same shape). A point is traced in the primitive's frame: its position
// at the step's start is carried by the primitive's motion, x' = R_cur R_prev^T (x - c_prev) + c_cur,
// and the segment x' -> current is traced against the current primitive. Exact for a translating
// primitive; a rotating one sees the chord of the point's relative arc. Pose (c, R): a sphere's centre;
// a capsule's segment middle and the least rotation of its axis; a cylinder's centre and least
// rotation of its axis; a box's centre and quaternion; a plane's point and least rotation of its
// normal; an implicit geometry's origin (it translates).

// The least rotation taking unit u to unit v, applied to w (a half turn about a perpendicular of u
// when v = -u).
VKC_FN vec3 geomRotateBetween(vec3 u, vec3 v, vec3 w) {
  float c = dot(u, v);
  if (c <= -1.0f + 1e-6f) {
    vec3 p = geomPerpendicularTo(u);
    return p * (2.0f * dot(p, w)) - w;
  }
  vec3 k = cross(u, v);
  return w * c + cross(k, w) + k * (dot(k, w) / (1.0f + c));
}

VKC_FN vec3 geomPoseMap(GeomShape prev, GeomShape cur, vec3 x) {
  if (prev.p0 == cur.p0 && prev.p1 == cur.p1 && prev.p2 == cur.p2) return x;  // a static geometry
  uint type = cur.info.x;
  if (type == kGeomOrientedBox) {
    vec3 local = geomRotateInverse(prev.p1 / sqrt(dot(prev.p1, prev.p1)), x - vec3(prev.p0));
    return geomRotate(cur.p1 / sqrt(dot(cur.p1, cur.p1)), local) + vec3(cur.p0);
  }
  if (type == kGeomCapsule) {
    vec3 c0 = (vec3(prev.p0) + vec3(prev.p1)) * 0.5f;
    vec3 c1 = (vec3(cur.p0) + vec3(cur.p1)) * 0.5f;
    vec3 a0 = vec3(prev.p1) - vec3(prev.p0);
    vec3 a1 = vec3(cur.p1) - vec3(cur.p0);
    if (dot(a0, a0) <= 0.0f || dot(a1, a1) <= 0.0f) return x - c0 + c1;  // a ball: it translates
    return geomRotateBetween(geomUnit(a0), geomUnit(a1), x - c0) + c1;
  }
  if (type == kGeomCylinder || type == kGeomPlane) {
    return geomRotateBetween(geomUnit(vec3(prev.p1)), geomUnit(vec3(cur.p1)), x - vec3(prev.p0)) + vec3(cur.p0);
  }
  return x - vec3(prev.p0) + vec3(cur.p0);  // sphere, implicit geometry
}

// One moving point against geometry s (continuous method), whose pose at the step's start is sPrev
// (s itself when static). The trace starts at the state's last
// outside point while the point stays inside since a traced entry (state.w != 0: the seed's
// persistent contact), else at the previous position. A root gives the contact: normal n at the root
// point xc, depth (xc - cur).n, the point pushed to xc's tangent plane (when that depth is <= 0, the
// normal does not face the motion: n = unit(xc - cur), depth |xc - cur|, back to the entry); a point
// that ends inside with no root (it started inside) gets the static contact. The
// new state: (xc, 1) while the point is inside after a traced entry, else (cur, 0).
VKC_FN bool geomContinuousPoint(GeomShape s, GeomShape sPrev, vec3 prev, vec3 cur, vec4 state,
                                VKC_OUT(GeomClosest) cl, VKC_OUT(vec4) newState) {
  vec3 start = geomPoseMap(sPrev, s, state.w != 0.0f ? vec3(state) : prev);
  float fCur = geomImplicitDistance(s, cur);
  newState = vec4(cur, 0.0f);
  cl = geomMakeClosest(cur, vec3(kGeomFallbackX, kGeomFallbackY, kGeomFallbackZ), 0.0f);
  // A saved point counts as outside (it is the outside end of a root bracket; rounding may put it a
  // hair inside, where the trace returns it as the root).
  float fStart = state.w != 0.0f ? 0.0f : geomImplicitDistance(s, start);
  // An analytic primitive's signed distance is 1-Lipschitz (it changes no faster than the point
  // moves): along a segment whose ends' distances sum to more than its length it stays above
  // (fStart + fCur - length) / 2 > 0, so the segment does not enter and is not traced (most points of
  // a set lie farther from a collider than they move in a step). Not for a grid's interpolated field.
  vec3 move = cur - start;
  bool apart =
      s.info.x != kGeomImplicit && state.w == 0.0f && fCur >= 0.0f && fStart + fCur > sqrt(dot(move, move));
  if (!apart && (state.w != 0.0f || fStart >= 0.0f)) {
    float t = geomTrace(s, start, cur);
    if (t >= 0.0f) {
      vec3 xc = mix(start, cur, t);
      vec3 n = vec3(geomImplicitClosest(s, xc).normal);
      float depth = dot(xc - cur, n);
      if (fCur < 0.0f) newState = vec4(xc, 1.0f);
      // A normal that does not face the motion (a wall thinner than the gradient's differences, a
      // grazing entry): the point goes back along its motion to the entry point.
      vec3 back = xc - cur;
      float backLen = sqrt(dot(back, back));
      if (!(depth > 0.0f) && backLen > 0.0f) {
        n = back / backLen;
        depth = backLen;
      }
      if (depth > 0.0f) {
        cl = geomMakeClosest(cur + n * depth, n, -depth);
        return true;
      }
    }
  }
  if (!(fCur < 0.0f)) return false;
  cl = geomImplicitClosest(s, cur);
  return true;
}

// --- Implicit geometry against the other geometries (static).

// A capsule's axis point of least field in implicit geometry g: the least of kGeomAxisSamples + 1
// evenly spaced samples, refined by a golden-section search between its neighbours (the field need
// not be convex: a local refinement of the best sample). The search keeps one of its two inner points
// a step (geomSegmentDeepestParam's), so it costs kGeomSegmentSearchSteps + 3 evaluations.

VKC_FN float geomGridSegmentDeepestParam(GeomShape g, vec3 p0, vec3 p1) {
  // One field evaluation per pass, so that a shader inlines geomGridDistance once: the
  // kGeomAxisSamples + 1 samples (p0 itself first), then x1 and x2 of the golden-section search in
  // the best sample's neighbours, then each step (the lower inner point kept, the new one evaluated),
  // then the bracket's middle.
  const uint samples = kGeomAxisSamples + 1u;
  const uint steps = kGeomSegmentSearchSteps;
  const float gr = kGeomGoldenSection;
  uint best = 0u;
  float fBest = 0.0f, lo = 0.0f, hi = 0.0f, x1 = 0.0f, x2 = 0.0f, f1 = 0.0f, f2 = 0.0f, mid = 0.0f, fMid = 0.0f;
  bool keepLow = true;
  for (uint e = 0u; e < samples + steps + 3u; ++e) {
    float x = 0.0f;
    if (e < samples) {
      x = float(e) / float(kGeomAxisSamples);
    } else if (e == samples) {
      lo = float(max(best, 1u) - 1u) / float(kGeomAxisSamples);
      hi = float(min(best + 1u, kGeomAxisSamples)) / float(kGeomAxisSamples);
      x1 = hi - gr * (hi - lo);
      x2 = lo + gr * (hi - lo);
      x = x1;
    } else if (e == samples + 1u) {
      x = x2;
    } else if (e < samples + steps + 2u) {
      keepLow = geomGoldenStep(lo, hi, x1, x2, f1, f2, x);
    } else {
      mid = (lo + hi) * 0.5f;
      x = mid;
    }
    float f = geomGridDistance(g, e == 0u ? p0 : mix(p0, p1, x));
    if (e == 0u) {
      fBest = f;
    } else if (e < samples) {
      if (f < fBest) {
        fBest = f;
        best = e;
      }
    } else if (e == samples || (e > samples + 1u && e < samples + steps + 2u && keepLow)) {
      f1 = f;
    } else if (e < samples + steps + 2u) {
      f2 = f;
    } else {
      fMid = f;
    }
  }
  if (fMid < fBest) return mid;
  return float(best) / float(kGeomAxisSamples);
}

// Slot `slot` (< kGeomCapsuleImplicitSlots) of capsule s against implicit geometry t, given the axis
// point c of least field (geomGridSegmentDeepestParam): slot 0 the ball at c; slots 1, 2 the end balls
// at p0, p1 (a capsule lying on a field rests on them as well), each unless its centre is within the
// radius of c (the same support). False for a slot without a ball; the ball's contact otherwise.
VKC_FN bool geomCapsuleGridContact(GeomShape s, GeomShape t, vec3 c, uint slot, VKC_OUT(GeomElement) es,
                                   VKC_OUT(GeomElement) et) {
  vec3 centre = c;
  if (slot != 0u) {
    vec3 end = slot == 1u ? vec3(s.p0) : vec3(s.p1);
    vec3 apart = end - c;
    if (!(sqrt(dot(apart, apart)) >= max(s.p0.w, 1e-30f))) return false;
    centre = end;
  }
  return geomBallContact(centre, s.p0.w, geomImplicitClosest(t, centre), kElementPointDirection, kGeomNoIndex,
                         es, et);
}

// Sample i of grid g: its position x (origin + index * spacing) and its value.
VKC_FN float geomGridSampleValue(GeomShape g, uint i, VKC_OUT(vec3) x) {
  uvec4 n = geomGridDims(g);
  uint ii = i % n.x;
  uint jj = (i / n.x) % n.y;
  uint kk = min(i / (n.x * n.y), n.z - 1u);
  x = vec3(g.p0) + vec3(float(ii), float(jj), float(kk)) * vec3(g.p1);
  return geomGridSample(g, n, ii, jj, kk);
}

// The sample at x of value v as a surface point: a sample within half a cell diagonal of the zero
// level (every surface point has one) is moved along the gradient onto it. False for the others.
VKC_FN bool geomGridSurfaceFrom(GeomShape g, vec3 x, float v, VKC_OUT(vec3) surface, VKC_OUT(vec3) normal) {
  vec3 h = vec3(g.p1);
  surface = x;
  normal = vec3(kGeomFallbackX, kGeomFallbackY, kGeomFallbackZ);
  if (!(abs(v) <= 0.5f * sqrt(dot(h, h)))) return false;  // before the gradient's 48 reads
  normal = geomGridNormal(g, x);
  surface = x - normal * v;
  return true;
}

// Sample i of grid g as a surface point (geomGridSurfaceFrom).
VKC_FN bool geomGridSurfacePoint(GeomShape g, uint i, VKC_OUT(vec3) surface, VKC_OUT(vec3) normal) {
  vec3 x;
  float v = geomGridSampleValue(g, i, x);
  return geomGridSurfaceFrom(g, x, v, surface, normal);
}

// Point k (< kGeomImplicitShapeSlots) of a box or cylinder s against a field: a box's corner k
// (geomBoxCorner's order); a cylinder's rim points a quarter turn apart from geomPerpendicularTo of
// its axis, k / 4 the cap (the one at -axis first). False for a repeated point: a flat box's corner
// (geomBoxCornerDistinct), a rim point past the first of a radius 0, the second cap of a height 0.
VKC_FN bool geomShapeFieldPoint(GeomShape s, uint k, VKC_OUT(vec3) p) {
  p = vec3(s.p0);
  if (s.info.x == kGeomOrientedBox) {
    if (!geomBoxCornerDistinct(vec3(s.p2), k)) return false;
    p = geomBoxCorner(s, k);
    return true;
  }
  uint cap = k >> 2u;
  uint quarter = k & 3u;
  float r = s.p0.w;
  float h = s.p1.w;
  if ((h == 0.0f && cap == 1u) || (r == 0.0f && quarter != 0u)) return false;
  vec3 axis = geomUnit(vec3(s.p1));
  vec3 u = geomPerpendicularTo(axis);
  vec3 dir = quarter == 0u ? u : (quarter == 1u ? cross(axis, u) : (quarter == 2u ? -u : -cross(axis, u)));
  p = vec3(s.p0) + axis * (cap == 0u ? -h : h) + dir * r;
  return true;
}

// Sample i of implicit geometry t as a surface point (geomGridSurfacePoint) inside s: a contact,
// t's element the point, s's its closest point. Every sample evaluated (the reference of the
// skip in geomGridSampleContact).
VKC_FN bool geomGridSampleContactAt(GeomShape s, GeomShape t, vec3 x, float v, VKC_OUT(GeomElement) es,
                                    VKC_OUT(GeomElement) et) {
  vec3 surface;
  vec3 normal;
  if (!geomGridSurfaceFrom(t, x, v, surface, normal)) return false;
  return geomBallContact(surface, 0.0f, geomImplicitClosest(s, surface), kElementPointDirection, kGeomNoIndex,
                         et, es);
}

VKC_FN bool geomGridSampleContactEvery(GeomShape s, GeomShape t, uint i, VKC_OUT(GeomElement) es,
                                       VKC_OUT(GeomElement) et) {
  vec3 x;
  float v = geomGridSampleValue(t, i, x);
  return geomGridSampleContactAt(s, t, x, v, es, et);
}

// geomGridSampleContactEvery with an exact skip: the surface point is the sample moved by |v| (a unit
// normal times the value), and an analytic shape's signed distance changes no faster than the point
// moves, so a sample farther outside an analytic s than |v| (with a margin of 0.1% of |v| and 1e-4 of
// the coordinates' and s's sizes, far above the rounding of both distances) has no contact: its
// gradient (48 reads) is not computed. A second implicit geometry's field need not be 1-Lipschitz: no
// skip there.
VKC_FN bool geomGridSampleContact(GeomShape s, GeomShape t, uint i, VKC_OUT(GeomElement) es,
                                  VKC_OUT(GeomElement) et) {
  vec3 x;
  float v = geomGridSampleValue(t, i, x);
  if (s.info.x != kGeomImplicit) {
    float size = ((max(max(abs(x.x), abs(x.y)), abs(x.z)) + max(max(abs(s.p0.x), abs(s.p0.y)), abs(s.p0.z))) +
                  (abs(s.p0.w) + abs(s.p1.w))) +
                 ((s.p2.x + s.p2.y) + s.p2.z);
    if (geomImplicitDistance(s, x) > abs(v) * 1.001f + 1e-4f * size) return false;
  }
  return geomGridSampleContactAt(s, t, x, v, es, et);
}

// A pair in canonical order whose higher type is an implicit geometry t (s: any type, an implicit
// geometry included), static method:
//  - point set s: its point `slot` with a negative field is a contact (the seed's
//    ImplicitGeometryToPointSetCD): normal the gradient, depth minus the field;
//  - sphere: the ball at its centre (one contact); capsule: the ball at its axis point of least field,
//    then its end balls unless one lies within the radius of it (a capsule lying on a field has 3);
//  - cylinder, box: slots [0, kGeomImplicitShapeSlots) s's own points (geomShapeFieldPoint) with a
//    negative field, as a point set's (so that a shape deep in the field, with no surface point in
//    it, has contacts); the next slots t's surface points (geomGridSurfacePoint) inside s, those of
//    the samples in s's sample box (geomShapeSampleBox; slot - 8 = the box's sample, in grid order);
//  - plane: t's surface points inside s, those of the samples in s's sample box (slot = the box's
//    sample, in grid order: geomShapeSampleBox);
//  - implicit s: slots [0, count_s) are s's surface points inside t, the next ones t's inside s.
VKC_FN bool geomImplicitCanonicalContact(GeomShape s, GeomShape t, uint slot, VKC_OUT(GeomElement) es,
                                         VKC_OUT(GeomElement) et) {
  uint ts = s.info.x;
  es = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  et = es;
  if (ts == kGeomPointSet) {
    vec3 p = geomPointAt(s.info.y + slot);
    return geomBallContact(p, 0.0f, geomImplicitClosest(t, p), kElementPointIndexDirection, slot, es, et);
  }
  if (ts == kGeomSphere) {
    vec3 c = vec3(s.p0);
    return geomBallContact(c, s.p0.w, geomImplicitClosest(t, c), kElementPointDirection, kGeomNoIndex, es, et);
  }
  if (ts == kGeomCapsule) {
    vec3 c = mix(vec3(s.p0), vec3(s.p1), geomGridSegmentDeepestParam(t, vec3(s.p0), vec3(s.p1)));
    return geomCapsuleGridContact(s, t, c, slot, es, et);
  }
  if (ts == kGeomCylinder || ts == kGeomOrientedBox || ts == kGeomPlane) {
    uint k = slot;
    if (ts != kGeomPlane) {
      if (slot < kGeomImplicitShapeSlots) {
        vec3 p;
        if (!geomShapeFieldPoint(s, slot, p)) return false;
        return geomBallContact(p, 0.0f, geomImplicitClosest(t, p), kElementPointDirection, kGeomNoIndex, es,
                               et);
      }
      k = slot - kGeomImplicitShapeSlots;
    }
    // Then (a plane: only) the samples of s's sample box (geomShapeSampleBox), in grid order.
    uvec4 first;
    uvec4 size;
    geomShapeSampleBox(s, t, first, size);
    if (k >= size.w) return false;
    slot = geomSampleBoxIndex(first, size, uint(t.p2.x), uint(t.p2.y), k);
  }
  vec3 surface;
  vec3 normal;
  if (ts == kGeomImplicit && slot < s.info.z) {
    // s's surface point against t: s is the ball side.
    if (!geomGridSurfacePoint(s, slot, surface, normal)) return false;
    return geomBallContact(surface, 0.0f, geomImplicitClosest(t, surface), kElementPointDirection, kGeomNoIndex, es, et);
  }
  return geomGridSampleContact(s, t, ts == kGeomImplicit ? slot - s.info.z : slot, es, et);
}

// A point set s against t (canonical order), continuous method: point `slot` moving from its
// previous position, t moving from tPrev. newState: the slot's new persistent state.
VKC_FN bool geomContinuousCanonicalContact(GeomShape s, GeomShape t, GeomShape tPrev, uint stateIndex, uint slot,
                                           VKC_OUT(GeomElement) es, VKC_OUT(GeomElement) et,
                                           VKC_OUT(vec4) newState) {
  uint i = s.info.y + slot;
  GeomClosest cl;
  bool hit =
      geomContinuousPoint(t, tPrev, geomPreviousPointAt(i), geomPointAt(i), geomStateAt(stateIndex), cl, newState);
  geomBallContact(geomPointAt(i), 0.0f, cl, kElementPointIndexDirection, slot, es, et);
  return hit;
}

// A box, cylinder or plane against an implicit geometry, static, in the caller's order (a, b): grid
// sample i as a surface point inside the shape (geomGridSampleContact); ea, eb as geomQuerySlot gives
// them for the slot of that sample (its index in the shape's sample box, after a box's or cylinder's
// 8 own points). The CPU loop computes
// the sample box once per query and calls this for its samples.
VKC_FN bool geomShapeGridSampleContact(GeomShape a, GeomShape b, uint i, VKC_OUT(GeomElement) ea,
                                       VKC_OUT(GeomElement) eb) {
  bool swapped = geomSwapped(a, b);
  GeomElement es = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  GeomElement et = es;
  bool hit = geomGridSampleContact(swapped ? b : a, swapped ? a : b, i, es, et);
  geomUnswap(swapped, es, et, ea, eb);
  return hit;
}

// --- The entry point of every slot: query (a, b, method) in the caller's order, slot `slot`
// (0 .. geomSlotCount - 1), elements ea (side a) and eb (side b); true when they are a contact.
// prevA, prevB: the geometries' poses at the step's start (previousGeometries; a and b themselves
// when none is given), read by continuous queries only. stateFirst: GeomQuery::state. newState: a
// continuous query's new state for entry stateFirst + slot (hasState true); the includer stores it
// (see the file comment).
VKC_FN bool geomQuerySlot(GeomShape a, GeomShape b, GeomShape prevA, GeomShape prevB, uint method, uint stateFirst,
                          uint slot, VKC_OUT(GeomElement) ea, VKC_OUT(GeomElement) eb, VKC_OUT(vec4) newState,
                          VKC_OUT(bool) hasState) {
  newState = vec4(0.0f);
  hasState = false;
  bool implicitPair = a.info.x == kGeomImplicit || b.info.x == kGeomImplicit;
  ea = geomMakeElement(vec3(0.0f), 0.0f, vec3(0.0f), kElementPointDirection, kGeomNoIndex);
  eb = ea;
  // Each family's code only where it is compiled (geometry_queries.h: VKC_GEOM_WITH).
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_BASIC) || VKC_GEOM_WITH(VKC_GEOM_FAMILY_MANIFOLD) || VKC_GEOM_WITH(VKC_GEOM_FAMILY_CONVEX)
  if (method == kGeomMethodStatic && !implicitPair) {
    vec3 point = vec3(0.0f);
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_BASIC)
    if (a.info.x == kGeomPointSet) point = geomPointAt(a.info.y + slot);
    if (b.info.x == kGeomPointSet) point = geomPointAt(b.info.y + slot);
#endif
    return geomSlotContact(a, b, slot, point, ea, eb);
  }
#endif
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_IMPLICIT) || VKC_GEOM_WITH(VKC_GEOM_FAMILY_CONTINUOUS)
  bool swapped = geomSwapped(a, b);
  GeomShape s = swapped ? b : a;
  GeomShape t = swapped ? a : b;
  GeomElement es = ea;
  GeomElement et = ea;
  bool hit = false;
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_CONTINUOUS)
  if (method == kGeomMethodContinuous) {
    // A point set and an analytic primitive (the point set is the higher type) or an implicit geometry.
    hasState = true;
    GeomShape sPrev = swapped ? prevB : prevA;
    GeomShape tPrev = swapped ? prevA : prevB;
    if (t.info.x == kGeomPointSet) {
      hit = geomContinuousCanonicalContact(t, s, sPrev, stateFirst + slot, slot, et, es, newState);
    } else {
      hit = geomContinuousCanonicalContact(s, t, tPrev, stateFirst + slot, slot, es, et, newState);
    }
  }
#endif
#if VKC_GEOM_WITH(VKC_GEOM_FAMILY_IMPLICIT)
  if (method == kGeomMethodStatic) hit = geomImplicitCanonicalContact(s, t, slot, es, et);
#endif
  geomUnswap(swapped, es, et, ea, eb);
  return hit;
#else
  return false;
#endif
}
