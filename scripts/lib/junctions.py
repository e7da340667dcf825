#!/usr/bin/python3
"""Generates junction and scribble drawings with exact ground truth: where strokes meet, at what
angle, and the lines, arcs and circles they are made of.

usage: junctions.py OUT_DIR [--seed N] [--photo] [--only PREFIX]

Writes OUT_DIR/CASE.png (8-bit gray, black strokes on white, anti-aliased, round caps and joins;
with --photo the corpus's phone-photo conditions, RGB) and OUT_DIR/CASE.gt.json in the evaluation
corpus's format (`polylines` sampled at <= 1 px, `primitives` with arcs in centre form,
`stroke_width_px`, `width`, `height`, pixel-index coordinates, y down), plus:
  junctions  [{"point": [x, y], "kind": "T|X|Y|K|tangent", "angle_deg": a}], the exact meeting
             points; `angle_deg` is the angle between the strokes' tangents there (T: stem to
             through-stroke, X: the two strokes, Y and K: the two arms, tangent: 0); a tangent junction
             also has `parts_at`, the points where the stroke leaving along the other's tangent
             has moved a stroke width from it (where the inks part), one per way it leaves
  condition  t_junction, x_crossing, y_junction, circle_tangent_stem, circle_radial_stem,
             circle_stem, tangent_branch, rounded_rect, circle_pair, k_junction (two arms ending
             together on a through stroke) or scribble
  pair       which strokes meet: line-line, line-arc, arc-line, arc-arc (T: through-stem; K: bar-arms),
             line-circle; circle pairs: outside or inside (the small circle in the large)
Scribble cases (hatching, zig-zags, tiny loops, some drawn twice, slightly offset) have polylines
only (their loops are not circular) and list the doubled strokes in `scribble.doubled`.

The image is the ink of exactly these centrelines: every pixel is the fraction of its 4x4
subsamples that lie within stroke_width/2 of a primitive (distance computed in closed form), so
image and truth agree to the subsample.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
from PIL import Image

SS = 4                      # subsamples per pixel side
WIDTHS = (3, 5, 8, 12)      # the corpus's icon widths; every junction config is made at each
ANGLES = (5, 10, 20, 25, 35, 45, 60, 75, 90)  # two per bin of 0-15, 15-30, 60-90; three of 30-60
SIZES = (256, 320, 384, 448, 512)


# ---------------------------------------------------------------------------------------------
# primitives (the corpus's schema) and their geometry

def line(p0, p1):
    return {"type": "line", "p0": [float(p0[0]), float(p0[1])], "p1": [float(p1[0]), float(p1[1])]}


def arc(c, r, a0_rad, sweep_rad):
    a0, sw = math.degrees(a0_rad), math.degrees(sweep_rad)
    return {"type": "arc", "center": [float(c[0]), float(c[1])], "radius": float(r),
            "start_deg": a0, "end_deg": a0 + sw, "sweep_deg": sw, "ccw": bool(sw > 0)}


def circle(c, r):
    return {"type": "circle", "center": [float(c[0]), float(c[1])], "radius": float(r)}


def heading(th):
    return np.array([math.cos(th), math.sin(th)])


def arm(j, th, kappa, length):
    """The primitive leaving point j with heading th (radians, y down) and signed curvature kappa
    (1/px, > 0 turns towards increasing heading), `length` px long."""
    j = np.asarray(j, float)
    if kappa == 0:
        return line(j, j + length * heading(th))
    c = j + (1 / kappa) * np.array([-math.sin(th), math.cos(th)])
    return arc(c, abs(1 / kappa), math.atan2(j[1] - c[1], j[0] - c[0]), length * kappa)


def through(j, th, kappa, l1, l2):
    """One primitive passing through j with heading th: l1 px before j, l2 after."""
    j = np.asarray(j, float)
    if kappa == 0:
        return line(j - l1 * heading(th), j + l2 * heading(th))
    c = j + (1 / kappa) * np.array([-math.sin(th), math.cos(th)])
    a = math.atan2(j[1] - c[1], j[0] - c[0])
    return arc(c, abs(1 / kappa), a - l1 * kappa, (l1 + l2) * kappa)


def reverse(p):
    if p["type"] == "line":
        return line(p["p1"], p["p0"])
    if p["type"] == "arc":
        return arc(p["center"], p["radius"], math.radians(p["end_deg"]), -math.radians(p["sweep_deg"]))
    return p


def ends(p):
    """(start point, end point, end heading) of a line or arc."""
    if p["type"] == "line":
        p0, p1 = np.array(p["p0"]), np.array(p["p1"])
        d = p1 - p0
        return p0, p1, math.atan2(d[1], d[0])
    c, r = np.array(p["center"]), p["radius"]
    a0, a1 = math.radians(p["start_deg"]), math.radians(p["end_deg"])
    s = 1 if p["sweep_deg"] > 0 else -1
    return c + r * heading(a0), c + r * heading(a1), a1 + s * math.pi / 2


def sample(p, step=0.5):
    """Points along a primitive, <= step apart, both ends included (a circle repeats its first)."""
    if p["type"] == "line":
        p0, p1 = np.array(p["p0"]), np.array(p["p1"])
        n = max(1, math.ceil(np.linalg.norm(p1 - p0) / step))
        t = np.linspace(0, 1, n + 1)[:, None]
        return p0 + t * (p1 - p0)
    c, r = np.array(p["center"]), p["radius"]
    a0, sw = (0.0, 2 * math.pi) if p["type"] == "circle" else (math.radians(p["start_deg"]), math.radians(p["sweep_deg"]))
    n = max(1, math.ceil(abs(sw) * r / step))
    a = a0 + np.linspace(0, 1, n + 1) * sw
    return c + r * np.stack([np.cos(a), np.sin(a)], 1)


def polyline(stroke, step=0.5):
    pts = [sample(p, step) for p in stroke]
    return np.concatenate([pts[0]] + [q[1:] for q in pts[1:]])


def translate(p, d):
    q = dict(p)
    for k in ("p0", "p1", "center"):
        if k in q:
            q[k] = [q[k][0] + float(d[0]), q[k][1] + float(d[1])]
    return q


# ---------------------------------------------------------------------------------------------
# rendering

def distance(p, X, Y):
    """Distance from the points (X, Y) to a primitive, in closed form."""
    if p["type"] == "line":
        (x0, y0), (x1, y1) = p["p0"], p["p1"]
        dx, dy = x1 - x0, y1 - y0
        t = np.clip(((X - x0) * dx + (Y - y0) * dy) / max(dx * dx + dy * dy, 1e-12), 0, 1)
        return np.hypot(X - x0 - t * dx, Y - y0 - t * dy)
    (cx, cy), r = p["center"], p["radius"]
    rho = np.hypot(X - cx, Y - cy)
    if p["type"] == "circle":
        return np.abs(rho - r)
    a0, sw = math.radians(p["start_deg"]), math.radians(p["sweep_deg"])
    t = np.mod((np.arctan2(Y - cy, X - cx) - a0) * (1 if sw > 0 else -1), 2 * math.pi)
    e0, e1, _ = ends(p)
    off = np.minimum(np.hypot(X - e0[0], Y - e0[1]), np.hypot(X - e1[0], Y - e1[1]))
    return np.where(t <= abs(sw), np.abs(rho - r), off)


def render(strokes, width, height, w):
    """Coverage of a round pen of diameter w along the strokes, as 8-bit gray (ink 0, paper 255)."""
    ink = np.zeros((height * SS, width * SS), bool)
    for p in (p for s in strokes for p in s):
        pts = sample(p, 2.0)
        # subsample i of a row sits at (i + 0.5) / SS - 0.5; the pen's reach plus a margin
        lo = np.floor((pts.min(0) - w / 2 - 1.5 + 0.5) * SS).astype(int)
        hi = np.ceil((pts.max(0) + w / 2 + 1.5 + 0.5) * SS).astype(int)
        x0, y0 = max(lo[0], 0), max(lo[1], 0)
        x1, y1 = min(hi[0], width * SS), min(hi[1], height * SS)
        ys, xs = np.mgrid[y0:y1, x0:x1]
        X, Y = (xs + 0.5) / SS - 0.5, (ys + 0.5) / SS - 0.5
        ink[y0:y1, x0:x1] |= distance(p, X, Y) <= w / 2
    cov = ink.reshape(height, SS, width, SS).mean((1, 3))
    return np.rint(255 * (1 - cov)).astype(np.uint8)


# ---------------------------------------------------------------------------------------------
# configurations: each builds strokes (lists of contiguous primitives) around the origin

def arc_kappa(rng, length, lo_deg, hi_deg):
    """A curvature that turns an arm of `length` by lo..hi degrees."""
    return math.radians(rng.uniform(lo_deg, hi_deg)) / length


def t_junction(rng, S, a, pair):
    th, side = rng.uniform(0, 2 * math.pi), rng.choice([-1, 1])
    B = S * rng.uniform(0.28, 0.38)
    # Curved strokes bend away from each other: the configuration has one meeting point.
    kt = -side * arc_kappa(rng, 2 * B, 50, 110) if pair[0] == "arc" else 0
    ks = side * arc_kappa(rng, B, 40, 100) if pair[1] == "arc" else 0
    j = np.zeros(2)
    l1 = B * rng.uniform(0.7, 1.0)
    strokes = [[through(j, th, kt, l1, 2 * B - l1)], [arm(j, th + side * math.radians(a), ks, B)]]
    return strokes, [junction(j, "T", a)]


def x_crossing(rng, S, a, pair):
    th = rng.uniform(0, 2 * math.pi)
    B = S * rng.uniform(0.28, 0.38)
    # An arc turns by less than the crossing angle on each side, so it meets the line only once.
    k2 = (rng.choice([-1, 1]) * math.radians(min(0.9 * a, 60)) * rng.uniform(0.6, 1) / B
          if pair[1] == "arc" else 0)
    j = np.zeros(2)
    l1, l2 = B * rng.uniform(0.7, 1.3), B * rng.uniform(0.7, 1.3)
    strokes = [[through(j, th, 0, l1, 2 * B - l1)], [through(j, th + math.radians(a), k2, l2, 2 * B - l2)]]
    return strokes, [junction(j, "X", a)]


def y_junction(rng, S, a, pair):
    th = rng.uniform(0, 2 * math.pi)
    B = S * rng.uniform(0.28, 0.38)
    h = math.radians(a) / 2
    k1 = arc_kappa(rng, B, 40, 90) if pair[0] == "arc" else 0   # arms bend away from each other
    k2 = -arc_kappa(rng, B, 40, 90) if pair[1] == "arc" else 0
    j = np.zeros(2)
    arm1, arm2 = arm(j, th + h, k1, B), arm(j, th - h, k2, B * rng.uniform(0.8, 1.1))
    stem = arm(j, th + math.pi, 0, B * rng.uniform(0.7, 1.0))
    # Drawn as a hand draws a Y: one arm and the stem in one stroke, the other arm on its own.
    return [[reverse(arm1), stem], [arm2]], [junction(j, "Y", a)]


def k_junction(rng, S, a, pair):
    """Two strokes ending together on a third that runs on through the point, on one side of it,
    a apart: a K's arms on its stem, an antenna's V on a television."""
    th, side = rng.uniform(0, 2 * math.pi), rng.choice([-1, 1])
    B = S * rng.uniform(0.28, 0.38)
    j = np.zeros(2)
    l1 = B * rng.uniform(0.6, 1.0)
    # The V's axis leans from the bar's normal, each arm at least 20 degrees off the bar.
    h = math.radians(a) / 2
    lean = rng.uniform(-1, 1) * max(0.0, math.pi / 2 - h - math.radians(20))
    axis = th + side * (math.pi / 2 + lean)
    k1 = arc_kappa(rng, B, 30, 60) if pair[1] == "arc" else 0   # arms bend away from each other
    arm1, arm2 = arm(j, axis + h, k1, B), arm(j, axis - h, -k1, B * rng.uniform(0.8, 1.1))
    # Drawn as one V (from one arm's end to the other's) or as two strokes, in turn.
    arms = [[reverse(arm1), arm2]] if rng.random() < 0.5 else [[arm1], [arm2]]
    return [[through(j, th, 0, l1, 2 * B - l1)]] + arms, [junction(j, "K", a)]


def circle_stem(rng, S, a, variant):
    """A circle and a straight stem meeting it at angle a (0: tangent; 90: radial)."""
    R = S * rng.uniform(0.12, 0.22)
    phi, s = rng.uniform(0, 2 * math.pi), rng.choice([-1, 1])
    t = R * heading(phi)
    L = S * rng.uniform(0.25, 0.38)
    if a == 0:
        th = phi + s * math.pi / 2
        # "end": the stem leaves the circle where it touches it; "through": the stem runs on past
        # the contact as a d's does, sharing the circle's ink on both sides.
        l1 = 0 if variant == "end" else R * rng.uniform(0.6, 1.0)
        stem = through(t, th, 0, l1, L)
        return [[circle((0, 0), R)], [stem]], [junction(t, "tangent", 0)]
    th = phi + s * (math.pi / 2 - math.radians(a))   # outward, a from the tangent
    return [[circle((0, 0), R)], [arm(t, th, 0, L)]], [junction(t, "T", a)]


def tangent_branch(rng, S, w, pair):
    """A branch leaving a stem along its tangent and curving away (an n's arch, a y's tail)."""
    th = rng.uniform(0, 2 * math.pi)
    B = S * rng.uniform(0.3, 0.4)
    side = rng.choice([-1, 1])
    ks = -side * arc_kappa(rng, 2 * B, 40, 80) if pair[0] == "arc" else 0
    R = max(3 * w, S * rng.uniform(0.08, 0.2))
    kb = side / R
    j = np.zeros(2)
    l1 = B * rng.uniform(0.8, 1.2)
    sweep = math.radians(rng.uniform(60, 180))
    if pair[1] == "line":   # a straight stroke ending on a curve it touches (a rounded corner's line)
        return [[through(j, th, ks, l1, 2 * B - l1)], [arm(j, th + math.pi, 0, B * rng.uniform(0.6, 1.0))]], \
            [junction(j, "tangent", 0)]
    br = [arm(j, th, kb, sweep * R)]
    if rng.random() < 0.6:   # then straight on, as an n's leg
        _, e, eh = ends(br[0])
        br.append(arm(e, eh, 0, B * rng.uniform(0.5, 0.9)))
    return [[through(j, th, ks, l1, 2 * B - l1)], br], [junction(j, "tangent", 0)]


def rounded_rect(rng, S, w):
    a, b = S * rng.uniform(0.15, 0.35), S * rng.uniform(0.15, 0.35)
    # at least two widths: a tighter corner is drawn within tolerance by a sharp one
    r = max(2 * w, min(a, b) * rng.choice([0.15, 0.3, 0.5, 0.8]))
    th = rng.choice([0.0, rng.uniform(0, math.pi / 2)])
    rot = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    pts = lambda *p: rot @ np.array(p, float)
    st = []
    # clockwise on screen: top edge left to right, then the top-right corner, ...
    corners = [((a - r, -b + r), -90), ((a - r, b - r), 0), ((-a + r, b - r), 90), ((-a + r, -b + r), 180)]
    for k, (c, a0) in enumerate(corners):
        c0 = corners[k - 1][0]
        p0 = pts(*c0) + r * heading(math.radians(corners[k - 1][1] + 90) + th)
        p1 = pts(*c) + r * heading(math.radians(a0) + th)
        if np.linalg.norm(p1 - p0) > 1e-6:
            st.append(line(p0, p1))
        st.append(arc(pts(*c), r, math.radians(a0) + th, math.pi / 2))
    return [st], []


def circle_pair(rng, S, variant):
    """Two circles touching at one point: side by side ("outside", an 8 or a chain's links) or one
    inside the other ("inside", an eye's iris at its rim); neither is cut where they touch."""
    phi = rng.uniform(0, 2 * math.pi)
    R1 = S * rng.uniform(0.1, 0.2)
    u = heading(phi)
    if variant == "outside":
        R2 = S * rng.uniform(0.1, 0.2)
        c2 = u * (R1 + R2)
    else:
        R2 = R1 * rng.uniform(0.35, 0.7)
        c2 = u * (R1 - R2)
    return [[circle((0, 0), R1)], [circle(c2, R2)]], []


def parting(branch, other, j, w):
    """Where a stroke leaving another along its tangent parts from it: the first points of
    `branch`, going each way from j, whose centreline is a stroke width from the other's (the two
    inks stop touching there); one point per way the branch runs from j."""
    k = int(np.argmin(np.hypot(*(branch - j).T)))
    out = []
    for run in (branch[k:], branch[k::-1]):
        if len(run) < 2:
            continue
        d = np.min(np.hypot(run[:, None, 0] - other[None, ::2, 0], run[:, None, 1] - other[None, ::2, 1]), 1)
        far = np.nonzero(d >= w)[0]
        if len(far):
            out.append([float(run[far[0], 0]), float(run[far[0], 1])])
    return out


def junction(p, kind, a):
    return {"point": [float(p[0]), float(p[1])], "kind": kind, "angle_deg": float(a)}


# ---------------------------------------------------------------------------------------------
# scribbles: polylines only

def trochoid_loops(rng, w):
    """A run of small cursive loops (telephone cord): the pen advances while it circles."""
    r = w * rng.uniform(1.5, 3.5)
    v = r * rng.uniform(0.3, 0.6)          # advance per radian < r: the path crosses itself
    n = int(rng.integers(3, 6))
    t = np.linspace(0, n * 2 * math.pi, int(n * 2 * math.pi * (r + v) / 0.5))
    return np.stack([v * t + r * np.sin(t), -r * np.cos(t)], 1)


def zigzag(rng, w):
    n = int(rng.integers(4, 9))
    seg, apex = rng.uniform(25, 60), math.radians(rng.uniform(20, 60))
    pts = [np.zeros(2)]
    for k in range(n):
        ang = (math.pi / 2 - apex / 2) * (1 if k % 2 == 0 else -1)
        pts.append(pts[-1] + seg * rng.uniform(0.85, 1.15) * heading(ang))
    return np.concatenate([sample(line(p, q))[:-1] for p, q in zip(pts, pts[1:])] + [pts[-1][None]])


def hatching(rng, w):
    n = int(rng.integers(4, 9))
    gap, L = w * rng.uniform(2.3, 4.0), rng.uniform(35, 80)
    return [sample(line((k * gap + rng.uniform(-2, 2), rng.uniform(-4, 4)),
                        (k * gap + rng.uniform(-2, 2), L + rng.uniform(-4, 4)))) for k in range(n)]


def scribble(rng, S, w):
    cells = [(i, j) for i in range(3) for j in range(3)]
    rng.shuffle(cells)
    kinds = ["hatch", "zigzag", "loops", "circle"] + list(rng.choice(["hatch", "zigzag", "loops", "circle"], 3))
    lines, doubled = [], []
    cell = S / 3
    for (ci, cj), kind in zip(cells, kinds):
        if kind == "hatch":
            parts = hatching(rng, w)
        elif kind == "zigzag":
            parts = [zigzag(rng, w)]
        elif kind == "loops":
            parts = [trochoid_loops(rng, w)]
        else:   # a tiny closed loop: a ring whose hole is a stroke width or two across
            parts = [sample(circle((0, 0), w * rng.uniform(0.9, 2.0)))]
        th = rng.uniform(0, 2 * math.pi)
        rot = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
        parts = [p @ rot.T for p in parts]
        allp = np.concatenate(parts)
        lo, hi = allp.min(0), allp.max(0)
        size = hi - lo
        if (size > cell - 2 * w - 8).any():
            f = (cell - 2 * w - 8) / size.max()
            parts, lo, hi = [p * f for p in parts], lo * f, hi * f
            size = hi - lo
        org = np.array([ci * cell, cj * cell]) + w + 4 + rng.uniform(0, 1, 2) * np.maximum(cell - 2 * w - 8 - size, 0)
        parts = [p - lo + org for p in parts]
        for p in parts:
            lines.append(p)
            if rng.random() < 0.3:  # gone over again, slightly off the first pass
                off = rng.uniform(0.2, 0.6) * w * heading(rng.uniform(0, 2 * math.pi))
                q, c = p + off, p.mean(0)
                b = math.radians(rng.uniform(-2, 2))
                rb = np.array([[math.cos(b), -math.sin(b)], [math.sin(b), math.cos(b)]])
                doubled.append([len(lines) - 1, len(lines)])
                lines.append((q - c) @ rb.T + c)
    return lines, doubled


def render_polylines(lines, S, w):
    prims = [[line(p, q) for p, q in zip(pl, pl[1:])] for pl in lines]
    return render(prims, S, S, w)


# ---------------------------------------------------------------------------------------------

def place(rng, strokes, junctions, S, w):
    """Moves a configuration built around the origin into an S x S image, at random; None when
    it does not fit."""
    pts = np.concatenate([polyline(s, 2.0) for s in strokes])
    lo, hi = pts.min(0), pts.max(0)
    m = w / 2 + 6
    room = S - 1 - 2 * m - (hi - lo)
    if (room < 0).any():
        return None
    d = m - lo + rng.uniform(0, 1, 2) * room
    strokes = [[translate(p, d) for p in s] for s in strokes]
    junctions = [dict(j, point=[j["point"][0] + float(d[0]), j["point"][1] + float(d[1])]) for j in junctions]
    return strokes, junctions


def configs(rng):
    """Every (condition, parameter, pair, width) of a full set."""
    out = []
    for a in ANGLES:
        for w in WIDTHS:
            # line-line everywhere; one curved pairing per width, in turn
            for pair in ("line-line", ("line-arc", "arc-line", "arc-arc")[(WIDTHS.index(w) + ANGLES.index(a)) % 3]):
                out.append(("t_junction", a, pair, w))
                out.append(("y_junction", a, pair, w))
            out.append(("x_crossing", a, "line-line" if a < 30 or w in (3, 8) else "line-arc", w))
    for w in WIDTHS:
        for v in ("end", "end", "through"):
            out.append(("circle_tangent_stem", 0, v, w))
        out.append(("circle_radial_stem", 90, "line-circle", w))
        out.append(("circle_radial_stem", 90, "line-circle", w))
        for a in (10, 20, 35, 50, 70):
            out.append(("circle_stem", a, "line-circle", w))
        for pair in ("line-arc", "line-arc", "arc-arc"):
            out.append(("tangent_branch", 0, pair, w))
        for _ in range(3):
            out.append(("rounded_rect", None, "line-arc", w))
    for k in range(20):
        out.append(("scribble", None, None, int(rng.integers(3, 9))))
    for w in WIDTHS:   # after the scribbles: the cases before keep their numbers and streams
        for v in ("outside", "outside", "inside"):
            out.append(("circle_pair", None, v, w))
    for a in (20, 35, 60, 90):
        for w in WIDTHS:
            for pair in ("line-line", "line-arc"):
                out.append(("k_junction", a, pair, w))
    for w in WIDTHS:
        for _ in range(3):
            out.append(("tangent_branch", 0, "arc-line", w))
    return out


def build(rng, cond, a, pair, w):
    for _attempt in range(40):  # too large for the image size drawn: again, at another size
        S = int(rng.choice(SIZES))
        if cond == "scribble":
            S = max(S, 384)
            lines, doubled = scribble(rng, S, w)
            return S, None, lines, [], {"doubled": doubled}
        p = tuple(pair.split("-")) if pair and "-" in pair else pair
        if cond == "t_junction":
            st, js = t_junction(rng, S, a, p)
        elif cond == "x_crossing":
            st, js = x_crossing(rng, S, a, p)
        elif cond == "y_junction":
            st, js = y_junction(rng, S, a, p)
        elif cond == "circle_tangent_stem":
            st, js = circle_stem(rng, S, 0, pair)
        elif cond in ("circle_radial_stem", "circle_stem"):
            st, js = circle_stem(rng, S, a, pair)
        elif cond == "tangent_branch":
            st, js = tangent_branch(rng, S, w, p)
        elif cond == "circle_pair":
            st, js = circle_pair(rng, S, pair)
        elif cond == "k_junction":
            st, js = k_junction(rng, S, a, p)
        else:
            st, js = rounded_rect(rng, S, w)
        placed = place(rng, st, js, S, w)
        if placed:
            lines = [polyline(s) for s in placed[0]]
            for j in placed[1]:
                if j["kind"] == "tangent":
                    j["parts_at"] = parting(lines[1], lines[0], j["point"], w)
            return S, placed[0], lines, placed[1], None
    raise RuntimeError(f"{cond} does not fit")


def case_name(cond, a, pair, w, k):
    parts = [cond] + ([f"a{a:02d}"] if a is not None and cond not in ("scribble", "rounded_rect", "circle_pair") else []) \
        + ([pair.replace("-", "")] if pair else []) + [f"w{w}", f"{k:03d}"]
    return "_".join(parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--photo", action="store_true", help="phone-photo conditions (scripts/lib/photograph.py)")
    ap.add_argument("--only", default="", help="only cases whose name starts with this")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    if args.photo:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from photograph import photograph
    n = 0
    for k, (cond, a, pair, w) in enumerate(configs(rng)):
        # each case draws from its own stream: a case is the same whatever --only selects
        crng = np.random.default_rng([args.seed, k])
        name = case_name(cond, a, pair, w, k)
        if not name.startswith(args.only):
            continue
        S, strokes, lines, js, extra = build(crng, cond, a, pair, w)
        gray = render(strokes, S, S, w) if strokes else render_polylines(lines, S, w)
        gt = {"case": name, "family": cond, "source": "scripts/lib/junctions.py", "license": "MIT",
              "width": S, "height": S, "stroke_width_px": float(w),
              "coords": "pixel-index: (x, y) = (column, row) of pixel centres, x right, y down",
              "polylines": [[[round(float(x), 3), round(float(y), 3)] for x, y in pl] for pl in lines]}
        if strokes:
            gt["primitives"] = [p for s in strokes for p in s]
        gt.update(condition=cond, pair=pair, junctions=js, seed=args.seed)
        if extra:
            gt["scribble"] = extra
        if args.photo:
            img, medium = photograph(gray.astype(float), np.random.default_rng([args.seed, k, 7]))
            gt["photo"] = {"medium": medium}
        else:
            img = Image.fromarray(gray)
        img.save(os.path.join(args.out, name + ".png"))
        with open(os.path.join(args.out, name + ".gt.json"), "w") as f:
            json.dump(gt, f)
        n += 1
    print(f"junctions: {n} cases in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
