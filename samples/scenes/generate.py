#!/usr/bin/env python3
"""Writes the small sample scenes in this folder (scene format version 1, docs/scene-format.md).

Run from anywhere: python3 samples/scenes/generate.py. The scenes are small on purpose: they are
read by the tests, by `vkcollide step` / `compare` examples and as a seed corpus for the fuzzer.
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def r(v):
    return round(v, 4)


def grid(nx, nz, x0, x1, z0, z1, y, inv_mass=1.0, pinned=()):
    pts = []
    for j in range(nz):
        for i in range(nx):
            x = x0 + (x1 - x0) * i / (nx - 1)
            z = z0 + (z1 - z0) * j / (nz - 1)
            w = 0.0 if (i, j) in pinned else inv_mass
            pts.append([r(x), r(y), r(z), w])
    return pts


def write(name, scene):
    with open(os.path.join(HERE, name), "w") as f:
        text = json.dumps(scene, indent=2)
        # One [x, y, z, w] per line.
        text = re.sub(r"\[\s+([-0-9.eE+,\s]+?)\s+\]",
                      lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]", text)
        f.write(text)
        f.write("\n")


# A 15 x 9 cloth falling 15 cm onto a sphere and a tapered capsule (discrete collision): the
# particles that end inside a shape are pushed out to its surface.
prev = grid(15, 9, -1.0, 1.0, -0.5, 0.5, 0.32, pinned={(0, 0), (14, 0)})
cur = [[p[0], r(p[1] - 0.15), p[2], p[3]] if p[3] > 0 else list(p) for p in prev]
write("sphere-and-capsule.json", {
    "format": "vkcollide-scene",
    "version": 1,
    "settings": {"continuousCollision": False, "friction": 0.2},
    "cloths": [{
        "name": "sheet over a sphere and a tapered capsule",
        "particles": cur,
        "prevParticles": prev,
        "spheres": [[-0.5, 0.0, 0.0, 0.3], [0.3, 0.0, -0.3, 0.15], [0.7, 0.05, 0.3, 0.25]],
        "prevSpheres": [[-0.5, -0.02, 0.0, 0.3], [0.3, -0.02, -0.3, 0.15], [0.7, 0.03, 0.3, 0.25]],
        "capsules": [[1, 2]],
    }],
})

# Two cloths with their own colliders, placed in the world by translation and rotation, plus an
# empty cloth; friction and collision mass scaling on.
a_prev = grid(7, 5, -0.6, 0.6, -0.4, 0.4, 0.25)
a_cur = [[p[0], r(p[1] - 0.08), p[2], p[3]] for p in a_prev]
b_prev = grid(5, 5, -0.3, 0.3, -0.3, 0.3, 0.5, inv_mass=2.0, pinned={(0, 0)})
b_cur = [[p[0], r(p[1] - 0.2 * (1 if p[3] > 0 else 0)), p[2], p[3]] for p in b_prev]
write("two-cloths.json", {
    "format": "vkcollide-scene",
    "version": 1,
    "settings": {"continuousCollision": False, "friction": 0.3, "collisionMassScale": 0.5},
    "cloths": [
        {
            "name": "flag over a capsule",
            "translation": [-1.0, 0.0, 0.0],
            "particles": a_cur,
            "prevParticles": a_prev,
            "spheres": [[-0.4, 0.0, 0.0, 0.2], [0.4, 0.0, 0.0, 0.2]],
            "capsules": [[0, 1]],
        },
        {
            "name": "patch on a ball",
            "translation": [1.0, 0.0, 0.0],
            "rotation": [0.0, 0.3826834, 0.0, 0.9238795],
            "particles": b_cur,
            "prevParticles": b_prev,
            "spheres": [[0.0, 0.0, 0.0, 0.4]],
            "prevSpheres": [[0.0, -0.05, 0.0, 0.4]],
        },
        {"name": "empty", "particles": []},
    ],
})

# Continuous collision: a cloth strip moving 0.6 m in one iteration, through a small sphere that a
# discrete test would miss (the particles start above it and end below it).
c_prev = grid(9, 2, -0.4, 0.4, -0.05, 0.05, 0.3)
c_cur = [[p[0], r(p[1] - 0.6), p[2], p[3]] for p in c_prev]
write("ccd-fast-strip.json", {
    "format": "vkcollide-scene",
    "version": 1,
    "settings": {"continuousCollision": True},
    "cloths": [{
        "name": "fast strip",
        "particles": c_cur,
        "prevParticles": c_prev,
        "spheres": [[0.0, 0.0, 0.0, 0.12], [0.3, 0.0, 0.0, 0.06]],
        "capsules": [[0, 1]],
    }],
})
