#!/usr/bin/python3
"""Pen-up travel of sv's plotter routes against vpype's `linemerge linesort --two-opt`.

Usage: plotter_eval.py OUT_DIR [--vpype]

OUT_DIR holds, per drawing NAME, plotter/NAME.{json,svg,gcode} (sv-route --robot plotter, then
sv-simulate) and doodlebot/NAME.{json,svg} (the default route), and with --vpype
vpype/NAME.svg (vpype's own result on plotter/NAME.svg). Without --vpype the reference is this
file's reimplementation of vpype's algorithm on the paths of plotter/NAME.svg:

  linemerge   paths whose ends lie within 0.05 mm (vpype's default tolerance) are joined, either
              one reversed, until no end finds another (vpype's LineCollection.merge);
  linesort    greedy nearest neighbour from the origin, each next path entered at its nearer end;
  --two-opt   2-opt over the path order: reversing a run of paths (each drawn the other way)
              wherever that shortens the pen-up travel, until a pass finds nothing (at most 250
              passes, vpype's default).

Pen-up travel is the distance from each path's end to the next path's start (not from the origin
to the first path: sv places the pen there, and vpype's own figure leaves it out too), in mm on
paper at the scene's robot.ppi. Prints per family and overall the ratio sv / reference, the
drawings where sv travels farther, and the arcs sv's output keeps.
"""
import glob
import json
import math
import os
import re
import sys

import numpy as np

MERGE_TOL_MM = 0.05
TWO_OPT_PASSES = 250
# sv farther than the reference by more than this is "worse": the SVG's coordinates are rounded
# to 0.001 px, and an AxiDraw's step is 0.0125 mm.
WORSE_MM = 0.01
WORSE_S = 1e-4  # and slower by more than this (0.01 mm of travel is 7e-5 s at 150 mm/s)
NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def svg_paths(path):
    """(start, end) of every pen-down path of an SVG, in document order; sv's pen-up group and
    the robot marker are skipped."""
    text = open(path).read()
    text = re.sub(r'<g id="pen-up".*?</g>', "", text, flags=re.S)
    ends = []
    for m in re.finditer(r'<path\b[^>]*?\bd="([^"]*)"', text):
        nums = [float(x) for x in NUM.findall(m.group(1))]
        if len(nums) >= 2:
            ends.append(((nums[0], nums[1]), (nums[-2], nums[-1])))
    for m in re.finditer(r'<polyline\b[^>]*?\bpoints="([^"]*)"', text):
        nums = [float(x) for x in NUM.findall(m.group(1))]
        if len(nums) >= 2:
            ends.append(((nums[0], nums[1]), (nums[-2], nums[-1])))
    for m in re.finditer(r"<line\b([^>]*)/?>", text):
        a = dict(re.findall(r'(x1|y1|x2|y2)="([^"]*)"', m.group(1)))
        if len(a) == 4:
            ends.append(((float(a["x1"]), float(a["y1"])), (float(a["x2"]), float(a["y2"]))))
    return ends


def svg_arcs(path):
    text = open(path).read()
    text = re.sub(r'<g id="pen-up".*?</g>', "", text, flags=re.S)
    return sum(len(re.findall(r"\bA\b", d)) for d in re.findall(r'\bd="([^"]*)"', text))


def pen_up(paths):
    return sum(math.dist(paths[k][1], paths[k + 1][0]) for k in range(len(paths) - 1))


def trapezoid_s(d, v, a):
    """A move of d mm from rest to rest at cruise v and acceleration a (robot/motion.hpp)."""
    if d <= 0:
        return 0.0
    ramp = v * v / a
    return 2 * math.sqrt(d / a) if d <= ramp else 2 * v / a + (d - ramp) / v


def pen_up_s(paths, mm, robot):
    """What the plotter profile prices the pen-up moves at: each a trapezoid at the travel speed."""
    v, a = robot.get("travel_speed_mm_s", 150.0), robot.get("accel_mm_s2", 1000.0)
    return sum(trapezoid_s(math.dist(paths[k][1], paths[k + 1][0]) * mm, v, a) for k in range(len(paths) - 1))


def gcode_pen_up(path):
    """Pen-up travel of a G-code file (G0 moves, the first one from the origin left out) and its
    count of G2/G3 arcs."""
    x = y = None
    travel, arcs, first = 0.0, 0, True
    for line in open(path):
        line = line.split(";")[0].strip()
        if not line:
            continue
        words = dict((w[0], w[1:]) for w in line.split() if w[0] in "GXYIJ")
        g = words.get("G")
        nx = float(words["X"]) if "X" in words else x
        ny = float(words["Y"]) if "Y" in words else y
        if g in ("2", "3", "02", "03"):
            arcs += 1
        if g in ("0", "00"):
            if not first and x is not None:
                travel += math.dist((x, y), (nx, ny))
            first = False
        if "X" in words or "Y" in words:
            x, y = nx, ny
    return travel, arcs


def linemerge(paths, tol):
    """vpype's merge: take the first path left, append any path one of whose ends lies within
    tol of its end (reversed when needed); when none, try its start (the path flipped)."""
    left = list(paths)
    out = []
    while left:
        s, e = left.pop(0)
        while True:
            hit = None
            for flip_line in (False, True):
                at = s if flip_line else e
                best, bd = None, tol
                for k, (ps, pe) in enumerate(left):
                    for rev, q in ((False, ps), (True, pe)):
                        d = math.dist(at, q)
                        if d <= bd:
                            best, bd = (k, rev), d
                if best is not None:
                    hit = (best, flip_line)
                    break
            if hit is None:
                break
            (k, rev), flip_line = hit
            if flip_line:
                s, e = e, s
            ps, pe = left.pop(k)
            if rev:
                ps, pe = pe, ps
            e = pe
        out.append((s, e))
    return out


def linesort(paths):
    """Greedy nearest neighbour from the origin, each path entered at its nearer end."""
    if not paths:
        return []
    starts = np.array([p[0] for p in paths], float)
    ends = np.array([p[1] for p in paths], float)
    used = np.zeros(len(paths), bool)
    at = np.zeros(2)
    out = []
    for _ in range(len(paths)):
        ds = np.hypot(*(starts - at).T)
        de = np.hypot(*(ends - at).T)
        ds[used] = np.inf
        de[used] = np.inf
        i, j = int(np.argmin(ds)), int(np.argmin(de))
        if de[j] < ds[i]:
            out.append((tuple(ends[j]), tuple(starts[j])))
            used[j] = True
            at = starts[j]
        else:
            out.append((tuple(starts[i]), tuple(ends[i])))
            used[i] = True
            at = ends[i]
    return out


def two_opt(paths, passes=TWO_OPT_PASSES):
    """2-opt on the path order: reverse paths i..j (each flipped) when the two pen-up moves it
    replaces are longer than the two it makes, first improvement per i, until a pass finds none."""
    n = len(paths)
    if n < 3:
        return list(paths)
    s = np.array([p[0] for p in paths], float)
    e = np.array([p[1] for p in paths], float)
    for _ in range(passes):
        improved = False
        for i in range(0, n - 1):
            # Reverse i..j for every j > i: before, e[i-1]->s[i] and e[j]->s[j+1]; after,
            # e[i-1]->e[j] and s[i]->s[j+1] (the run reversed starts at e[j], ends at s[i]).
            j = np.arange(i + 1, n)
            before = np.zeros(len(j))
            after = np.zeros(len(j))
            if i > 0:
                before += np.hypot(*(s[i] - e[i - 1]))
                after += np.hypot(*(e[j] - e[i - 1]).T)
            inner = j < n - 1
            jj = j[inner]
            before[inner] += np.hypot(*(s[jj + 1] - e[jj]).T)
            after[inner] += np.hypot(*(s[jj + 1] - s[i]).T)
            gain = before - after
            k = int(np.argmax(gain))
            if gain[k] > 1e-9:
                jk = int(j[k])
                rs, re_ = s[i:jk + 1][::-1].copy(), e[i:jk + 1][::-1].copy()
                s[i:jk + 1], e[i:jk + 1] = re_, rs
                improved = True
        if not improved:
            break
    return [(tuple(s[k]), tuple(e[k])) for k in range(n)]


def family_of(name):
    return "photo" if name.startswith("photo_") else name.split("_")[0]


def main():
    out_dir = sys.argv[1]
    use_vpype = "--vpype" in sys.argv[2:]
    reference = ("vpype linemerge linesort --two-opt (installed)" if use_vpype else
                 "reimplementation of vpype's linemerge (0.05 mm) + linesort (greedy from the origin, with "
                 "reversal) + --two-opt, on sv's own SVG paths (vpype is not installed)")
    rows = []
    for scene_path in sorted(glob.glob(os.path.join(out_dir, "plotter", "*.json"))):
        name = os.path.basename(scene_path)[:-5]
        svg = os.path.join(out_dir, "plotter", name + ".svg")
        if not os.path.exists(svg):
            continue
        scene = json.load(open(scene_path))
        robot = scene.get("robot", {})
        if robot.get("model") != "plotter":
            print(f"plotter_eval: {name}: the scene's robot is {robot.get('model')}, not plotter", file=sys.stderr)
            sys.exit(1)
        mm = 25.4 / robot["ppi"]  # per px
        paths = svg_paths(svg)
        sv = pen_up(paths) * mm
        if use_vpype:
            # vpype writes CSS px (96 per inch) in the SVG's own frame: back to sv's px.
            ref_mm = 25.4 / 96
            ref_paths = svg_paths(os.path.join(out_dir, "vpype", name + ".svg"))
        else:
            ref_mm = mm
            ref_paths = two_opt(linesort(linemerge(paths, MERGE_TOL_MM / mm)))
        ref = pen_up(ref_paths) * ref_mm
        g_travel, g_arcs = gcode_pen_up(os.path.join(out_dir, "plotter", name + ".gcode"))
        arc_cmds = sum(1 for c in scene.get("commands", []) if c.get("kind") == "arc")
        doodle = doodle_ref = None
        dsvg = os.path.join(out_dir, "doodlebot", name + ".svg")
        if os.path.exists(dsvg):
            djson = json.load(open(os.path.join(out_dir, "doodlebot", name + ".json")))
            dmm = 25.4 / djson["robot"]["ppi"]
            dpaths = svg_paths(dsvg)
            doodle = pen_up(dpaths) * dmm
            # The issue's comparison: the reference re-sorting the Doodlebot route's own SVG.
            doodle_ref = pen_up(two_opt(linesort(linemerge(dpaths, MERGE_TOL_MM / dmm)))) * dmm
        pen = robot.get("pen_time_s", 0.0)
        sv_s = pen_up_s(paths, mm, robot) + 2 * pen * (len(paths) - 1)
        ref_s = pen_up_s(ref_paths, ref_mm, robot) + 2 * pen * (len(ref_paths) - 1)
        rows.append(dict(name=name, family=family_of(name), sv=sv, ref=ref, sv_s=sv_s, ref_s=ref_s,
                         paths=len(paths), ref_paths=len(ref_paths),
                         gcode=g_travel, gcode_arcs=g_arcs, svg_arcs=svg_arcs(svg), arc_cmds=arc_cmds,
                         doodle=doodle, doodle_ref=doodle_ref, time=scene.get("metrics", {}).get("draw_time_s")))
    if not rows:
        print("plotter_eval: no routed drawings", file=sys.stderr)
        sys.exit(1)
    print(f"reference: {reference}")
    print("pen-up travel in mm on paper (longest side 200 mm), summed per family; ratio = sv / reference")
    fams = sorted({r["family"] for r in rows}) + ["all"]
    print("worse: drawings where sv travels more than 0.01 mm farther; time: pen-up moves and pen changes as the "
          "plotter profile prices them")
    print(f"{'family':8} {'n':>4} {'sv mm':>9} {'ref mm':>9} {'sv/ref':>7} {'worse':>6} {'time sv/ref':>11} "
          f"{'worse':>6} {'doodlebot/ref':>14} {'sv/ref(doodlebot svg)':>21} {'pen-ups sv':>10} {'ref':>5} {'arcs':>5}")
    for f in fams:
        rs = [r for r in rows if f == "all" or r["family"] == f]
        sv = sum(r["sv"] for r in rs)
        ref = sum(r["ref"] for r in rs)
        worse = sum(r["sv"] > r["ref"] + WORSE_MM for r in rs)
        sv_s, ref_s = sum(r["sv_s"] for r in rs), sum(r["ref_s"] for r in rs)
        worse_s = sum(r["sv_s"] > r["ref_s"] + WORSE_S for r in rs)
        tratio = f"{sv_s / ref_s:.3f}" if ref_s > 0 else "-"
        dd = [r for r in rs if r["doodle"] is not None]
        dratio = f"{sum(r['doodle'] for r in dd) / ref:.3f}" if dd and ref > 0 else "-"
        dref = sum(r["doodle_ref"] for r in dd)
        dd_ratio = f"{sv / dref:.3f}" if dd and dref > 0 else "-"
        ratio = f"{sv / ref:.3f}" if ref > 0 else "-"
        print(f"{f:8} {len(rs):4d} {sv:9.1f} {ref:9.1f} {ratio:>7} {worse:6d} {tratio:>11} {worse_s:6d} {dratio:>14} {dd_ratio:>21} "
              f"{sum(r['paths'] - 1 for r in rs):10d} {sum(r['ref_paths'] - 1 for r in rs):5d} "
              f"{sum(r['svg_arcs'] for r in rs):5d}")
    for r in rows:
        if r["sv"] > r["ref"] + WORSE_MM or r["sv_s"] > r["ref_s"] + WORSE_S:
            print(f"  worse: {r['name']}: sv {r['sv']:.2f} mm in {r['sv_s']:.3f} s, reference {r['ref']:.2f} mm "
                  f"in {r['ref_s']:.3f} s")
    ratios = [r["sv"] / r["ref"] for r in rows if r["ref"] > 0]
    if ratios:
        print(f"per drawing (with pen-up travel in the reference, {len(ratios)}): median sv/ref "
              f"{float(np.median(ratios)):.3f}, worst {max(ratios):.3f}")
    mismatch = [r["name"] for r in rows if abs(r["gcode"] - r["sv"]) > 1e-3 * max(1.0, r["sv"]) + 0.01]
    print(f"G-code pen-up travel equals the SVG's on {len(rows) - len(mismatch)} of {len(rows)} drawings"
          + (f" (differs: {', '.join(mismatch[:5])})" if mismatch else ""))
    print(f"arcs kept: {sum(r['arc_cmds'] for r in rows)} arc commands in the plotter scenes, "
          f"{sum(r['svg_arcs'] for r in rows)} SVG arc segments (A), {sum(r['gcode_arcs'] for r in rows)} G2/G3 moves")
    json.dump({"reference": reference, "cases": rows}, open(os.path.join(out_dir, "summary.json"), "w"), indent=1)
    sys.exit(0)


if __name__ == "__main__":
    main()
