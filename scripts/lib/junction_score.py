#!/usr/bin/python3
"""Scores sv's scenes on the junction set of junctions.py: where strokes meet, which primitives
come back, and how much ink is drawn, per condition, per angle bin and per stroke width.

usage: junction_score.py GEN_DIR PRED_DIR OUT_DIR [SCORE_PY]

  junction  for every true meeting point, the distance to the nearest predicted one: a vertex of
            degree >= 3 of the scene's `graph`, or a point where the primitives meet with degree
            >= 3 (ends within max(1.5, w/4) px, or an end on another's interior) or cross. `in w/2` is the
            fraction within half the stroke width, `med px` the median distance (a junction with
            no predicted meeting point anywhere counts as the image's diagonal). `extra` is the
            mean number of predicted meeting points (merged within a stroke width) farther than
            a stroke width from every true one (not for scribbles, whose truth lists none).
            Tangent junctions are also measured from where the inks part (`parts_at`).
  prims     the fraction of cases with as many primitives as the truth (`prims=`; a primitive
            drawn out and back, a spur retraced, counts once) and with as many
            of each type (`types=`); `ratio` is the mean predicted/true count.
  ink       recall, precision and f1 at the corpus scorer's tolerance max(2, w/2), from SCORE_PY
            --batch when it is given and exists (else left out). Scribbles: recall, the pen-down
            strokes drawn, the truth's strokes (a stroke gone over twice counts once) and a naive
            pixel skeleton's strokes (Zhang-Suen thinning, one stroke per chain between ends and
            junctions).
Writes OUT_DIR/junction_scores.json (every case) and OUT_DIR/missed.png (the 24 junctions
farthest from a predicted one: the truth in green with its meeting point red, sv's primitives in
blue with their meeting points as blue rings), and prints the tables.
"""
import collections
import json
import math
import os
import subprocess
import sys

import numpy as np
from PIL import Image, ImageDraw
from scipy import ndimage as ndi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from junctions import render_polylines  # noqa: E402

BINS = [("0", 0, 0), ("0-15", 0, 15), ("15-30", 15, 30), ("30-60", 30, 60), ("60-90", 60, 90)]


def angle_bin(a):
    if a == 0:
        return "0"
    return next(name for name, lo, hi in BINS[1:] if lo < a <= hi)


# ---------------------------------------------------------------------------------------------
# predicted meeting points

def prim_points(p, step=1.0):
    if p["type"] == "circle":
        c, r = np.array(p["center"]), p["radius"]
        a = np.linspace(0, 2 * math.pi, max(8, int(2 * math.pi * r / step)) + 1)
        return c + r * np.stack([np.cos(a), np.sin(a)], 1)
    p0, p1 = np.array(p["p0"], float), np.array(p["p1"], float)
    b = p.get("bulge", 0) if p["type"] == "arc" else 0
    n = max(2, int(np.linalg.norm(p1 - p0) * (1 + abs(b)) / step) + 1)
    if abs(b) < 1e-9:
        return p0 + np.linspace(0, 1, n)[:, None] * (p1 - p0)
    # arc from p0 to p1 with sweep 4 atan(bulge), angles increasing when the sweep is positive
    sw = 4 * math.atan(b)
    chord = p1 - p0
    L = np.linalg.norm(chord)
    r = L / (2 * abs(math.sin(sw / 2)))
    mid = (p0 + p1) / 2
    nrm = np.array([-chord[1], chord[0]]) / max(L, 1e-12)
    c = mid + nrm * r * math.cos(sw / 2) * (1 if sw > 0 else -1)
    a0 = math.atan2(p0[1] - c[1], p0[0] - c[0])
    a = a0 + np.linspace(0, 1, max(n, int(abs(sw) * r / step) + 2)) * sw
    return c + r * np.stack([np.cos(a), np.sin(a)], 1)




def crossings(a, b):
    """Points where polyline a crosses polyline b at more than a degree (a stroke retraced is
    not a crossing)."""
    p, r = a[:-1], a[1:] - a[:-1]
    q, s = b[:-1], b[1:] - b[:-1]
    den = r[:, None, 0] * s[None, :, 1] - r[:, None, 1] * s[None, :, 0]
    qp = q[None, :, :] - p[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (qp[..., 0] * s[None, :, 1] - qp[..., 1] * s[None, :, 0]) / den
        u = (qp[..., 0] * r[:, None, 1] - qp[..., 1] * r[:, None, 0]) / den
    sin = np.abs(den) / np.maximum(np.hypot(*r.T)[:, None] * np.hypot(*s.T)[None, :], 1e-12)
    i, j = np.nonzero((sin > math.sin(math.radians(1))) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1))
    return p[i] + t[i, j, None] * r[i]


def meeting_points(scene, touch):
    """Where strokes meet in a scene: its graph's vertices of degree >= 3, and the points where
    the primitives' own graph has degree >= 3 (ends meeting, counting 1 per end and 2 per
    primitive passing through: a T, a Y drawn as a spur out and back, a stem on a circle) or two
    primitives cross. Ends meet within `touch` px."""
    pts = [[v["x"], v["y"]] for v in (scene.get("graph") or {}).get("vertices", []) if v.get("degree", 0) >= 3]
    prims = [p for p in scene.get("primitives", []) if p.get("type") in ("line", "arc", "circle")]
    samples = [prim_points(p) for p in prims]
    # a primitive shorter than twice the touch distance is a piece of its path's corner, not a stroke
    keep = [i for i, (p, a) in enumerate(zip(prims, samples))
            if p["type"] == "circle" or np.hypot(*np.diff(a, axis=0).T).sum() > 2 * touch]
    for i in keep:
        if prims[i]["type"] == "circle":
            continue
        for e in (samples[i][0], samples[i][-1]):
            deg = 0
            for j in keep:
                b = samples[j]
                d0, d1 = (np.inf, np.inf) if prims[j]["type"] == "circle" else (np.hypot(*(b[0] - e)), np.hypot(*(b[-1] - e)))
                if min(d0, d1) <= touch:
                    deg += (d0 <= touch) + (d1 <= touch)
                elif np.min(np.hypot(*(b - e).T)) <= touch:
                    deg += 2
            if deg >= 3:
                pts.append(list(e))
    for x, i in enumerate(keep):
        for j in keep[x + 1:]:
            # consecutive primitives "cross" at the end they share: a corner, not a crossing
            ends = [samples[m][k] for m in (i, j) if prims[m]["type"] != "circle" for k in (0, -1)]
            for c in crossings(samples[i], samples[j]):
                if all(np.hypot(*(c - e)) > touch for e in ends):
                    pts.append(list(c))
    return np.array(pts, float).reshape(-1, 2)


def distinct(prims, touch):
    """The primitives with a stroke drawn out and back (a spur retraced) counted once."""
    out = []
    for p in prims:
        dup = False
        for q in out:
            if p["type"] == q["type"] == "circle":
                dup = np.hypot(*np.subtract(p["center"], q["center"])) <= touch and abs(p["radius"] - q["radius"]) <= touch
            elif p["type"] == q["type"]:
                a, b = np.array([p["p0"], p["p1"]]), np.array([q["p0"], q["p1"]])
                dup = (np.hypot(*(a - b[::-1]).T).max() <= touch or np.hypot(*(a - b).T).max() <= touch) and \
                    abs(abs(p.get("bulge", 0)) - abs(q.get("bulge", 0))) < 0.05
            if dup:
                break
        if not dup:
            out.append(p)
    return out


# ---------------------------------------------------------------------------------------------
# strokes

def pen_strokes(scene):
    """Pen-down strokes of a command stream: runs of drawing commands between pen-up moves."""
    n, down = 0, False
    for c in scene.get("commands", []):
        if c["kind"] == "spin":
            continue
        drawing = c.get("penDown", True)
        if drawing and not down:
            n += 1
        down = drawing
    return n


def zhang_suen(mask):
    img = np.pad(mask.astype(np.uint8), 1)
    while True:
        changed = False
        for step in (0, 1):
            P = [np.roll(np.roll(img, -dy, 0), -dx, 1) for dy, dx in
                 ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))]
            B = sum(P)
            A = sum(((P[k] == 0) & (P[(k + 1) % 8] == 1)).astype(int) for k in range(8))
            if step == 0:
                c = (P[0] * P[2] * P[4] == 0) & (P[2] * P[4] * P[6] == 0)
            else:
                c = (P[0] * P[2] * P[6] == 0) & (P[0] * P[4] * P[6] == 0)
            rm = (img == 1) & (B >= 2) & (B <= 6) & (A == 1) & c
            if rm.any():
                img[rm] = 0
                changed = True
        if not changed:
            return img[1:-1, 1:-1].astype(bool)


def skeleton_strokes(gt):
    """Strokes a naive tracer draws from the clean drawing (drawn anew from the truth, so a
    photographed case is counted as its clean twin): threshold at 128, thin, one stroke per pixel
    chain between ends and junctions (and per isolated loop or dot)."""
    g = render_polylines([np.array(p) for p in gt["polylines"]], gt["width"], gt["stroke_width_px"])
    sk = zhang_suen(g < 128)
    nb = ndi.convolve(sk.astype(int), np.ones((3, 3), int), mode="constant") - 1
    node = sk & (nb != 2)
    chains = ndi.label(sk & ~node, np.ones((3, 3)))[1]
    lone = ndi.label(node, np.ones((3, 3)))[0]
    # node clusters touching no chain are dots
    linked = ndi.binary_dilation(sk & ~node, np.ones((3, 3)))
    dots = len(set(np.unique(lone[node & ~linked])) - {0})
    return chains + dots


# ---------------------------------------------------------------------------------------------

def main():
    gen, pred, out = sys.argv[1:4]
    scorer = sys.argv[4] if len(sys.argv) > 4 else None
    os.makedirs(out, exist_ok=True)
    ink = {}
    if scorer and os.path.exists(scorer):
        jo = os.path.join(out, "scores.json")
        with open(os.path.join(out, "scorer.txt"), "w") as f:
            subprocess.run(["/usr/bin/python3", scorer, "--batch", gen, pred, "--json-out", jo],
                           stdout=f, check=True)
        ink = {r["case"]: r for r in json.load(open(jo))["cases"]}
    else:
        print("junction_score: no corpus scorer; ink recall and precision left out", file=sys.stderr)
    rows = []
    for name in sorted(f[:-8] for f in os.listdir(gen) if f.endswith(".gt.json")):
        gt = json.load(open(os.path.join(gen, name + ".gt.json")))
        try:
            scene = json.load(open(os.path.join(pred, name + ".json")))
        except (OSError, ValueError):
            scene = {}
        w = gt["stroke_width_px"]
        row = {"case": name, "condition": gt["condition"], "width": w, "pair": gt.get("pair"),
               "failed": not scene}
        mp = meeting_points(scene, max(1.5, w / 4))
        if gt["condition"] != "scribble":
            truth = np.array([j["point"] for j in gt["junctions"]], float).reshape(-1, 2)
            extra = []
            for p in mp:
                if all(np.hypot(*(p - q)) > w for q in extra) and \
                        (not len(truth) or np.min(np.hypot(*(truth - p).T)) > w):
                    extra.append(p)
            row["extra_junctions"] = len(extra)
        if gt["junctions"]:
            diag = math.hypot(gt["width"], gt["height"])
            row["junctions"] = []
            for j in gt["junctions"]:
                d = float(np.min(np.hypot(*(mp - j["point"]).T))) if len(mp) else diag
                row["junctions"].append({"kind": j["kind"], "angle_deg": j["angle_deg"], "dist_px": d, "any": bool(len(mp)),
                                         "within_half_width": d <= w / 2})
                if j.get("parts_at") and len(mp):
                    row["junctions"][-1]["parting_dist_px"] = float(min(
                        np.min(np.hypot(*(mp - q).T)) for q in j["parts_at"]))
                    row["junctions"][-1]["parting_from_contact_px"] = float(min(
                        math.dist(q, j["point"]) for q in j["parts_at"]))
            row["angle_bin"] = angle_bin(gt["junctions"][0]["angle_deg"])
        pp = [p["type"] for p in distinct(scene.get("primitives", []), max(1.5, w / 4))]
        if gt.get("primitives"):
            tp = [p["type"] for p in gt["primitives"]]
            row.update(prims=len(pp), gt_prims=len(tp), prim_count_equal=len(pp) == len(tp),
                       prim_types_equal=collections.Counter(pp) == collections.Counter(tp),
                       prim_types={t: pp.count(t) for t in ("line", "arc", "circle")},
                       gt_prim_types={t: tp.count(t) for t in ("line", "arc", "circle")})
        if name in ink:
            r = ink[name]
            row.update(recall=r["recall"], precision=r["precision"], f1=r["f1"], prim_f1=r.get("prim_f1"))
        if gt["condition"] == "scribble":
            row.update(strokes=pen_strokes(scene),
                       gt_strokes=len(gt["polylines"]) - len(gt["scribble"]["doubled"]),
                       skeleton_strokes=skeleton_strokes(gt))
        rows.append(row)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "junction_scores.json"), "w") as f:
        json.dump(rows, f, indent=1)
    report(rows, bool(ink))
    sheet(rows, gen, pred, os.path.join(out, "missed.png"))


def sheet(rows, gen, pred, path, tile=320, cols=4):
    """The junctions placed worst, drawn for a look."""
    worst = sorted((r for r in rows if r.get("junctions") and not r["junctions"][0]["within_half_width"]),
                   key=lambda r: -r["junctions"][0]["dist_px"])[:24]
    if not worst:
        return
    page = Image.new("RGB", (tile * cols, tile * ((len(worst) + cols - 1) // cols)), "white")
    for k, r in enumerate(worst):
        gt = json.load(open(os.path.join(gen, r["case"] + ".gt.json")))
        im = Image.open(os.path.join(gen, r["case"] + ".png")).convert("RGB")
        d = ImageDraw.Draw(im)
        for pl in gt["polylines"]:
            d.line([tuple(p) for p in pl], fill=(0, 190, 0))
        try:
            scene = json.load(open(os.path.join(pred, r["case"] + ".json")))
        except (OSError, ValueError):
            scene = {}
        for p in scene.get("primitives", []):
            if p.get("type") in ("line", "arc", "circle"):
                d.line([tuple(q) for q in prim_points(p)], fill=(0, 90, 255))
        for x, y in meeting_points(scene, max(1.5, r["width"] / 4)):
            d.ellipse([x - 5, y - 5, x + 5, y + 5], outline=(0, 90, 255))
        for j in gt["junctions"]:
            x, y = j["point"]
            d.ellipse([x - 3, y - 3, x + 3, y + 3], fill=(230, 0, 0))
        im = im.resize((tile, tile))
        j = r["junctions"][0]
        ImageDraw.Draw(im).text((4, 4), f"{r['case']}  " + (f"{j['dist_px']:.1f} px" if j["any"] else "no meeting point"),
                                fill=(200, 0, 0))
        page.paste(im, ((k % cols) * tile, (k // cols) * tile))
    page.save(path)


def mean(v):
    v = [x for x in v if x is not None]
    return sum(v) / len(v) if v else None


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def table(title, groups, has_ink):
    print(f"\n{title}")
    hdr = f"{'':22} {'n':>4} {'junc':>5} {'in w/2':>7} {'med px':>7} {'extra':>6} {'prims=':>7} {'types=':>7} {'ratio':>6}"
    if has_ink:
        hdr += f" {'recall':>7} {'prec':>7} {'f1':>7}"
    print(hdr)
    for key, rs in groups:
        js = [j for r in rs for j in r.get("junctions", [])]
        pr = [r for r in rs if "prims" in r]
        line = (f"{key:22} {len(rs):>4} {len(js):>5} "
                f"{fmt(mean([j['within_half_width'] for j in js]), '7.3f'):>7} "
                f"{fmt(float(np.median([j['dist_px'] for j in js])) if js else None, '7.1f'):>7} "
                f"{fmt(mean([r.get('extra_junctions') for r in rs]), '6.2f'):>6} "
                f"{fmt(mean([r['prim_count_equal'] for r in pr]), '7.3f'):>7} "
                f"{fmt(mean([r['prim_types_equal'] for r in pr]), '7.3f'):>7} "
                f"{fmt(mean([r['prims'] / r['gt_prims'] for r in pr]), '6.2f'):>6}")
        if has_ink:
            line += "".join(f" {fmt(mean([r.get(k) for r in rs]), '7.3f'):>7}" for k in ("recall", "precision", "f1"))
        print(line)


def report(rows, has_ink):
    failed = [r["case"] for r in rows if r["failed"]]
    conds = collections.defaultdict(list)
    bins = collections.defaultdict(list)
    widths = collections.defaultdict(list)
    for r in rows:
        conds[r["condition"]].append(r)
        if "angle_bin" in r:
            bins[r["angle_bin"]].append(r)
        if r["condition"] != "scribble":
            widths[f"w{r['width']:g}"].append(r)
    junc = [r for r in rows if "junctions" in r]
    print(f"{len(rows)} cases, {len(junc)} with a junction" + (f"; no scene for {len(failed)}: {' '.join(failed[:10])}" if failed else ""))
    table("per condition", sorted(conds.items()) + [("all", rows)], has_ink)
    table("per angle bin (junction cases)", [(b, bins[b]) for b, _, _ in BINS if b in bins], has_ink)
    table("per stroke width (all but scribbles)", sorted(widths.items(), key=lambda kv: float(kv[0][1:])), has_ink)
    pairs = collections.defaultdict(list)
    for r in junc:
        # by the condition's initials: t_junction tj, tangent_branch tb, circle_tangent_stem cts, ...
        pairs[f"{''.join(w[0] for w in r['condition'].split('_'))} {r['pair']}"].append(r)
    table("per junction and pair", sorted(pairs.items()), has_ink)
    worst = sorted(((j["dist_px"], r["case"]) for r in junc for j in r["junctions"]
                    if not j["within_half_width"] and j["any"]), reverse=True)
    none = [r["case"] for r in junc if not r["junctions"][0]["any"]]
    if worst or none:
        print(f"\njunctions farther than w/2: {len(worst) + len(none)}; with no meeting point in the scene: "
              f"{len(none)} ({', '.join(none[:6])}{' ...' if len(none) > 6 else ''}); farthest of the others: "
              + ", ".join(f"{c} {d:.1f}" for d, c in worst[:6]))
    tj = [j for r in junc for j in r["junctions"] if "parting_dist_px" in j]
    if tj:
        med = lambda k: float(np.median([j[k] for j in tj]))
        print(f"\ntangent junctions ({len(tj)}): the inks part {med('parting_from_contact_px'):.1f} px from the contact"
              f" (median); the nearest predicted meeting point is {med('dist_px'):.1f} px from the contact and"
              f" {med('parting_dist_px'):.1f} px from where the inks part")
    sc = [r for r in rows if r["condition"] == "scribble"]
    if sc:
        print(f"\nscribbles ({len(sc)}): recall {fmt(mean([r.get('recall') for r in sc]), '.3f')}"
              f" (lowest {fmt(min((r['recall'] for r in sc if 'recall' in r), default=None), '.3f')}),"
              f" strokes drawn {mean([r['strokes'] for r in sc]):.1f},"
              f" truth {mean([r['gt_strokes'] for r in sc]):.1f},"
              f" pixel skeleton {mean([r['skeleton_strokes'] for r in sc]):.1f} per drawing")


if __name__ == "__main__":
    main()
