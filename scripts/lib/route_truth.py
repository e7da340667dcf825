#!/usr/bin/python3
"""Routes the ground truth's exact primitives with sv-route and times the streams with the corpus
scorer: what drawing the truth itself costs with sv's router, beside the prior implementation's
time and sv's whole pipeline (the last scripts/eval run, when there is one).

usage: route_truth.py CASE_DIR OUT_DIR SV_ROUTE SCORE_PY
"""
import collections
import json
import math
import os
import shutil
import subprocess
import sys


def scene_of(gt):
    prims = []
    for k, p in enumerate(gt["primitives"]):
        q = {"id": f"p_{k + 1:04d}", "type": p["type"]}
        if p["type"] == "circle":
            q.update(center=p["center"], radius=p["radius"])
        elif p["type"] == "line":
            q.update(p0=p["p0"], p1=p["p1"])
        else:  # arc: centre, radius, start angle and signed sweep (degrees, y down)
            c, r = p["center"], p["radius"]
            a0, sw = math.radians(p["start_deg"]), math.radians(p["sweep_deg"])
            q.update(p0=[c[0] + r * math.cos(a0), c[1] + r * math.sin(a0)],
                     p1=[c[0] + r * math.cos(a0 + sw), c[1] + r * math.sin(a0 + sw)], bulge=math.tan(sw / 4))
        prims.append(q)
    return {"format": "sv.scene", "version": 1, "primitives": prims}


def main():
    cases, out, sv_route, score_py = sys.argv[1:5]
    for d in ("gt", "preds"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    names = []
    for f in sorted(os.listdir(cases)):
        if not f.endswith(".gt.json"):
            continue
        gt = json.load(open(os.path.join(cases, f)))
        if not gt.get("primitives"):
            continue
        name = f[:-len(".gt.json")]
        r = subprocess.run([sv_route, "--no-store", "-"], input=json.dumps(scene_of(gt)), capture_output=True,
                           text=True)
        if r.returncode != 0:
            print(f"route_truth: {name}: {r.stderr.strip()}", file=sys.stderr)
            continue
        open(os.path.join(out, "preds", name + ".json"), "w").write(r.stdout)
        shutil.copy(os.path.join(cases, f), os.path.join(out, "gt", f))
        names.append(name)
    scores = os.path.join(out, "scores.json")
    subprocess.run(["/usr/bin/python3", score_py, "--batch", os.path.join(out, "gt"), os.path.join(out, "preds"),
                    "--json-out", scores], check=True, stdout=subprocess.DEVNULL)
    truth = {c["case"]: c for c in json.load(open(scores))["cases"]}
    ref_path = os.path.join(cases, "reference-figures.json")
    ref = json.load(open(ref_path))["cases"] if os.path.exists(ref_path) else {}
    sv_path = os.path.join("out", "eval", "scores.json")
    sv = {c["case"]: c for c in json.load(open(sv_path))["cases"]} if os.path.exists(sv_path) else {}

    fams = collections.defaultdict(list)
    for n in names:
        fams[n.split("_")[0]].append(n)
    fams["all"] = names
    print(f"{'family':<9} {'n':>3} {'f1':>6} {'truth_s':>8} {'eff':>6} {'sv_s':>7} {'prior_s':>8} {'truth/prior':>12}")
    for fam, ns in sorted(fams.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
        t = mean([truth[n]["est_time_s"] for n in ns])
        p = mean([ref[n]["est_time_s"] for n in ns if n in ref])
        s = mean([sv[n]["est_time_s"] for n in ns if n in sv])
        print(f"{fam:<9} {len(ns):>3} {mean([truth[n]['f1'] for n in ns]):>6.3f} {t:>8.1f} "
              f"{mean([truth[n]['route_efficiency'] for n in ns]):>6.3f} {s:>7.1f} {p:>8.1f} {t / p:>12.3f}")


if __name__ == "__main__":
    main()
