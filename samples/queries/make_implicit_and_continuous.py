#!/usr/bin/env python3
"""Writes implicit-and-continuous.json next to this script (docs/query-format.md).

An 8 x 8 x 8 signed distance field of the unit sphere (|p| - 1, sampled every 0.5 from -1.75 on each
axis, so the grid's faces lie outside the sphere: a padded field), probed by static points; fast
points through a thin box (continuous, both orders of the pair); points moving into the field
(continuous); a sphere moving over static points (continuous, its "previous" pose).
"""
import json
import math
import os

N, ORIGIN, SPACING = 8, -1.75, 0.5


def sample(i, j, k):
    p = [ORIGIN + SPACING * c for c in (i, j, k)]
    return float(f"{math.sqrt(sum(c * c for c in p)) - 1.0:.6g}")


samples = [sample(i, j, k) for k in range(N) for j in range(N) for i in range(N)]  # x fastest
fast_now = [[x, y, 2.0] for x in (-0.5, 0.5) for y in (-0.5, 0.5)] + [[2.0, 0.0, 2.0], [0.0, 0.0, 3.5]]
fast_before = [[x, y, 4.0] for x, y, _ in fast_now[:4]] + [[2.0, 0.0, 4.0], [0.0, 0.0, 4.0]]
doc = {
    "format": "vkcollide-queries",
    "version": 1,
    "gridSamples": samples,
    "geometries": [
        {"name": "field", "type": "implicit", "origin": [ORIGIN] * 3, "spacing": [SPACING] * 3,
         "dims": [N, N, N], "first": 0},
        {"name": "probe", "type": "pointSet",
         "points": [[0, 0, 0], [0.5, 0.25, 0], [0.9, 0, 0], [0, -0.6, 0.6], [1.5, 0, 0], [2.5, 0, 0]]},
        {"name": "wall", "type": "box", "centre": [0, 0, 3], "halfExtents": [1, 1, 0.02]},
        {"name": "fast", "type": "pointSet", "points": fast_now, "previousPoints": fast_before},
        {"name": "drop", "type": "pointSet", "points": [[0, 0, 0.5], [-0.2, 0, 0], [0, 1.2, 0]],
         "previousPoints": [[0, 0, 1.6], [1.6, 0, 0], [0, 1.6, 0]]},
        {"name": "ball", "type": "sphere", "centre": [4, 0, 0], "radius": 0.5, "previous": {"centre": [6, 0, 0]}},
        {"name": "posts", "type": "pointSet", "points": [[5, 0, 0], [5, 0.25, 0], [5, 1, 0]]},
    ],
    "queries": [
        {"a": "probe", "b": "field"},
        {"a": "fast", "b": "wall", "method": "continuous"},
        {"a": "wall", "b": "fast", "method": "continuous"},
        {"a": "drop", "b": "field", "method": "continuous"},
        {"a": "posts", "b": "ball", "method": "continuous"},
    ],
}
rows = [", ".join(json.dumps(v) for v in samples[r:r + N]) for r in range(0, len(samples), N)]
text = ("{\n" + f' "format": "{doc["format"]}",\n "version": {doc["version"]},\n'
        + ' "gridSamples": [\n  ' + ",\n  ".join(rows) + "\n ],\n"
        + ' "geometries": [\n  ' + ",\n  ".join(json.dumps(g) for g in doc["geometries"]) + "\n ],\n"
        + ' "queries": [\n  ' + ",\n  ".join(json.dumps(q) for q in doc["queries"]) + "\n ]\n}")
assert json.loads(text) == doc
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "implicit-and-continuous.json")
with open(path, "w") as f:
    f.write(text + "\n")
