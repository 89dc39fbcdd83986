#version 460
// Pairwise geometry queries (include/vkcollide/geometry_queries.h): the RANGES pass, one invocation per
// query: its range {E(first), E(end) - E(first)} (shared/geometry_queries_bindings.h). A module of its
// own: it runs beside the families' WRITE passes with no barrier between them, and the
// synchronization validation layer judges a dispatch by every access its module holds (the SCAN
// pass's writes would look like a hazard).
#extension GL_GOOGLE_include_directive : require
#define VKC_GEOM_FAMILIES 0
#define VKC_GEOM_READONLY_SCAN
#include "shared/geometry_queries_stage.h"

void rangesPass() {
  uint i = linearGroup() * kGeomGroupSize + gl_LocalInvocationIndex;
  if (i >= pc.queryCount) return;
  uvec2 r = slotRange[i];
  uint first = contactsBefore(min(r.x, pc.slotCount));
  uint end = contactsBefore(min(r.y, pc.slotCount));
  ranges[i] = uvec2(first, end - min(first, end));
}

void main() { rangesPass(); }
