#!/usr/bin/env python3
"""Writes the small sample scenes in this folder (scene format versions 1 and 2, docs/scene-format.md).

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

# Self collision (distance 0.05, stiffness 1) on isolated close pairs: a 6 x 4 grid 0.2 apart, and
# next to some grid particles a partner closer than the distance. The pairs that collide end exactly
# `distance` apart: equal masses, unequal masses (w 1 and 2), a pinned partner, a coincident pair (pushed
# apart along the sweep axis); a pair of pinned particles never moves. Pairs that must not collide:
# one also close at rest (restPositions), one whose partner is not in selfCollisionIndices, and the
# second cloth's particles 0.01 from the first cloth's (self collision stays within a cloth). The second
# cloth also has a pair of its own and a ball that one particle ends inside (the shape stage runs first).
SELF_D = 0.05
s_base = grid(6, 4, -0.5, 0.5, -0.3, 0.3, 0.3, pinned={(4, 2)})
s_rest = [list(p) for p in s_base]
s_parts = [list(p) for p in s_base]
s_subset = list(range(len(s_base)))
# (grid index, offset, partner inverse mass, close at rest, in the subset)
for base, off, w, close_rest, in_subset in [
        (0, (0.02, 0.01, 0.0), 1.0, False, True),    # equal masses
        (2, (0.0, 0.03, 0.0), 2.0, False, True),     # unequal masses
        (4, (0.0, 0.0, 0.025), 0.0, False, True),    # pinned partner
        (14, (0.0, 0.0, 0.0), 1.0, False, True),     # coincident
        (16, (0.01, 0.0, 0.0), 0.0, False, True),    # both pinned (grid (4, 2) is pinned)
        (7, (0.015, 0.0, 0.015), 1.0, True, True),   # close at rest too: culled
        (9, (0.02, 0.0, 0.0), 1.0, False, False),    # partner not in the subset
]:
    b = s_base[base]
    p = [r(b[0] + off[0]), r(b[1] + off[1]), r(b[2] + off[2]), w]
    s_parts.append(p)
    s_rest.append([p[0], p[1], p[2], 0.0] if close_rest else [p[0], r(p[1] + 0.5), p[2], 0.0])
    if in_subset:
        s_subset.append(len(s_parts) - 1)
s_rest = [[p[0], p[1], p[2], 0.0] for p in s_rest]
t_parts = grid(3, 3, -0.49, -0.09, -0.3, 0.1, 0.3)
t_rest = [[p[0], p[1], p[2], 0.0] for p in t_parts]
t_parts.append([r(t_parts[4][0] + 0.03), t_parts[4][1], t_parts[4][2], 1.0])  # a pair of its own
t_rest.append([t_parts[-1][0], r(t_parts[-1][1] + 0.5), t_parts[-1][2], 0.0])
write("self-collision-pairs.json", {
    "format": "vkcollide-scene",
    "version": 1,
    "settings": {"continuousCollision": False, "selfCollision": {"distance": SELF_D, "stiffness": 1.0}},
    "cloths": [
        {
            "name": "isolated close pairs",
            "particles": s_parts,
            "restPositions": s_rest,
            "selfCollisionIndices": s_subset,
        },
        {
            "name": "second cloth with a ball",
            "translation": [2.0, 0.0, 0.0],
            "particles": t_parts,
            "restPositions": t_rest,
            "spheres": [[-0.09, 0.25, 0.1, 0.1]],
        },
    ],
})

# Inter collision (distance 0.05, stiffness 1, 2 iterations) between three cloths, each rotated and
# translated: the scene is laid out in world space and every cloth's particles are stored in its own
# local space (local = inverse rotation of (world - translation)). "lower sheet" (5 x 5, spacing 0.2,
# a pinned particle) and "upper sheet" (5 x 5, spacing 0.2, some particles with inverse mass 2) are
# parallel, 0.03 apart, and overlap by three columns: isolated cross-cloth pairs (equal masses,
# unequal masses, a pinned partner) that end `distance` apart. The lower sheet also holds two of its
# own particles 0.02 apart inside the overlap (same cloth: untouched). "filtered patch" (group 2,
# mask 2) lies 0.02 from the lower sheet's other columns, but the filter keeps it out of inter
# collision with both sheets (group 1); it has a close pair of its own too (untouched).
INTER_D = 0.05


def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz]


def to_local(world, translation, q):
    """The inverse of world = rotate(q, local) + translation."""
    v = [world[0] - translation[0], world[1] - translation[1], world[2] - translation[2], 0.0]
    conj = [-q[0], -q[1], -q[2], q[3]]
    p = qmul(qmul(conj, v), q)
    return [r(p[0]), r(p[1]), r(p[2]), world[3]]


def world_grid(nx, nz, x0, z0, y, spacing, mass_of=lambda i, j: 1.0):
    return [[x0 + spacing * i, y, z0 + spacing * j, mass_of(i, j)] for j in range(nz) for i in range(nx)]


lower_t, lower_q = [0.1, 0.5, -0.2], [0.0, 0.258819, 0.0, 0.9659258]              # 30 deg about y
upper_t, upper_q = [0.6, 0.4, 0.1], [0.3535534, 0.3535534, 0.0, 0.8660254]         # 60 deg about (1, 1, 0)
patch_t, patch_q = [-0.3, 0.6, -0.1], [0.0, 0.0, 0.7071068, 0.7071068]             # 90 deg about z
lower_w = world_grid(5, 5, -0.4, -0.4, 0.5, 0.2, lambda i, j: 0.0 if (i, j) == (4, 4) else 1.0)
lower_w += [[0.1, 0.5, 0.1, 1.0], [0.12, 0.5, 0.1, 1.0]]  # a close pair of its own, inside the overlap
upper_w = world_grid(5, 5, 0.0, -0.4, 0.53, 0.2, lambda i, j: 2.0 if i == 1 else 1.0)
patch_w = world_grid(2, 3, -0.39, -0.4, 0.52, 0.2)
patch_w += [[-0.29, 0.52, -0.3, 1.0], [-0.29, 0.52, -0.28, 1.0]]  # a close pair of its own
write("inter-collision-cloths.json", {
    "format": "vkcollide-scene",
    "version": 1,
    "settings": {"continuousCollision": False,
                 "interCollision": {"distance": INTER_D, "stiffness": 1.0, "iterations": 2}},
    "cloths": [
        {
            "name": "lower sheet",
            "translation": lower_t,
            "rotation": lower_q,
            "particles": [to_local(p, lower_t, lower_q) for p in lower_w],
        },
        {
            "name": "upper sheet",
            "translation": upper_t,
            "rotation": upper_q,
            "particles": [to_local(p, upper_t, upper_q) for p in upper_w],
        },
        {
            "name": "filtered patch",
            "translation": patch_t,
            "rotation": patch_q,
            "collisionGroup": 2,
            "collisionMask": 2,
            "particles": [to_local(p, patch_t, patch_q) for p in patch_w],
        },
    ],
})

# Planes and convexes (continuous collision): an 11 x 5 sheet falls in one iteration onto a box (a
# convex of 6 planes), a thin slab (a convex of 2 parallel planes 2 cm apart) and a ground plane (a
# convex of one plane) that rises 5 cm during the iteration. The particles over the box end 0.1 m
# inside it and stop on its top; those over the slab pass right through it within the iteration (a
# discrete test would miss it: they end below it) and stop on its top; those over the ground end
# 0.1 m below it and stop on it. One particle over the ground is pinned. The box's unnormalized
# normals (length 2) show that the planes are normalized on input.
p_prev = grid(11, 5, -1.0, 1.0, -0.4, 0.4, 0.3, pinned={(10, 4)})


def p_end(p):
    if p[3] == 0:
        return list(p)
    if p[0] < -0.45:
        return [p[0], 0.0, p[2], p[3]]   # 0.1 inside the box (its top is at y = 0.1)
    if p[0] < 0.3:
        return [p[0], -0.1, p[2], p[3]]  # through the slab (y 0 .. 0.02)
    return [p[0], -0.3, p[2], p[3]]      # 0.1 below the ground (y = -0.2)


write("planes-and-convexes.json", {
    "format": "vkcollide-scene",
    "version": 1,
    "settings": {"continuousCollision": True},
    "cloths": [{
        "name": "sheet over a box, a slab and the ground",
        "particles": [p_end(p) for p in p_prev],
        "prevParticles": p_prev,
        # box: -1.2 < x < -0.45, -0.2 < y < 0.1, -0.6 < z < 0.6 (normals of length 2)
        # slab: 0 < y < 0.02 for -0.3 < x < 0.3 (four planes); ground: y > -0.2 (from -0.25)
        "planes": [[2, 0, 0, 0.9], [-2, 0, 0, -2.4], [0, 2, 0, -0.2], [0, -2, 0, -0.4], [0, 0, 2, -1.2],
                   [0, 0, -2, -1.2],
                   [0, 1, 0, -0.02], [0, -1, 0, 0], [1, 0, 0, -0.3], [-1, 0, 0, -0.3],
                   [0, 1, 0, 0.2]],
        "prevPlanes": [[2, 0, 0, 0.9], [-2, 0, 0, -2.4], [0, 2, 0, -0.2], [0, -2, 0, -0.4], [0, 0, 2, -1.2],
                       [0, 0, -2, -1.2],
                       [0, 1, 0, -0.02], [0, -1, 0, 0], [1, 0, 0, -0.3], [-1, 0, 0, -0.3],
                       [0, 1, 0, 0.25]],
        "convexes": [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9], [10]],
    }],
})

# Version 2, a mesh: a 17 x 17 sheet (its own frame turned 20 degrees about y and lifted 1.2 m) falls
# 0.7 m in one iteration onto Spot the cow (tests/data/meshes/spot_low_resolution.obj, public domain; closed, 1,654 triangles,
# y up, standing on y = -0.73), which moves rigidly during the iteration: up 3 cm and turning 6
# degrees about y. Continuous mesh collision: the particles over the cow stop on it (thickness 2 cm)
# instead of passing through its back; the others fall the whole way.
spot_t, spot_q = [0.0, 1.2, 0.1], [0.0, 0.1736482, 0.0, 0.9848078]                # 20 deg about y
spot_prev = grid(17, 17, -0.6, 0.6, -0.8, 0.8, 0.0)
write("spot-drape.json", {
    "format": "vkcollide-scene",
    "version": 2,
    "settings": {"meshCollision": {"continuous": True, "maxBounces": 4}},
    "cloths": [{
        "name": "sheet falling onto spot",
        "translation": spot_t,
        "rotation": spot_q,
        "meshes": [0],
        "prevParticles": spot_prev,
        "particles": [[p[0], -0.7, p[2], p[3]] for p in spot_prev],
    }],
    "meshes": [{
        "name": "spot",
        "obj": "../../tests/data/meshes/spot_low_resolution.obj",
        "thickness": 0.02,
        "friction": 0.3,
        "prevTransform": {"translation": [0.0, 0.0, 0.0], "rotation": [0.0, 0.0, 0.0, 1.0]},
        "transform": {"translation": [0.0, 0.03, 0.0], "rotation": [0.0, 0.0523360, 0.0, 0.9986295]},
    }],
})
