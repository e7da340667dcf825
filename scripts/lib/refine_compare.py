#!/usr/bin/python3
"""The corpus scored before and after sv-edit refine, per family.

usage: refine_compare.py BASE_SCORES.json REFINED_SCORES.json TIMES_DIR

Prints per family: mean draw time before and after and the saving (of the mean, and the mean of
the per-drawing savings), mean f1, f1 at 1 px and chamfer (px) before and after, drawings made
slower, and refine's own wall time per drawing (mean and largest).
"""
import collections
import json
import os
import sys


def main():
    base_path, refined_path, times = sys.argv[1:4]
    base = {c["case"]: c for c in json.load(open(base_path))["cases"]}
    refined = {c["case"]: c for c in json.load(open(refined_path))["cases"]}
    fam = collections.defaultdict(list)
    for case, b in sorted(base.items()):
        r = refined.get(case)
        if r is None or not isinstance(b.get("est_time_s"), (int, float)) or not isinstance(r.get("est_time_s"), (int, float)):
            continue
        t = os.path.join(times, case)
        wall = float(open(t).read().split()[-1]) if os.path.exists(t) else float("nan")
        row = (b["est_time_s"], r["est_time_s"], b["f1"], r["f1"], b["f1_tol1"], r["f1_tol1"], wall,
               b["chamfer_px"], r["chamfer_px"])
        fam[b.get("family", case.split("_")[0])].append(row)
        fam["ALL"].append(row)
    print("sv-edit refine against the pipeline (scorer's figures; time in s, refine's own time per drawing in s):")
    print(f"{'family':<9}{'n':>4}{'time':>8}{'->':>3}{'refined':>8}{'saved':>7}{'mean/dwg':>9}"
          f"{'f1':>7}{'->':>3}{'f1':>6}{'f1@1px':>8}{'->':>3}{'f1@1px':>7}{'chamfer':>8}{'->':>3}{'chamfer':>8}"
          f"{'slower':>7}{'refine s':>9}{'max':>6}")
    for name in sorted(fam, key=lambda k: (k == "ALL", k)):
        rows = fam[name]
        n = len(rows)
        m = lambda i: sum(r[i] for r in rows) / n
        per = sum((r[0] - r[1]) / r[0] for r in rows if r[0] > 0) / n
        slower = sum(1 for r in rows if r[1] > r[0] + 1e-6)
        print(f"{name:<9}{n:>4}{m(0):>8.1f}{'':>3}{m(1):>8.1f}{100 * (m(0) - m(1)) / m(0):>6.1f}%{100 * per:>8.1f}%"
              f"{m(2):>7.3f}{'':>3}{m(3):>6.3f}{m(4):>8.3f}{'':>3}{m(5):>7.3f}{m(7):>8.3f}{'':>3}{m(8):>8.3f}"
              f"{slower:>7}{m(6):>9.2f}"
              f"{max(r[6] for r in rows):>6.2f}")


if __name__ == "__main__":
    main()
