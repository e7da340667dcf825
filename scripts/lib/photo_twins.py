#!/usr/bin/python3
"""Each photographed drawing beside its clean twin: what the photo costs.

usage: photo_twins.py SCORES.json SCORES_TOL1.json CORPUS_SET_DIR

The twin is named by the photo's ground truth (photo.from_case). Prints one row per photo case
(f1, f1 at 1 px, pen-up moves and draw time, photo / twin) and the means over the family.
"""
import json
import os
import sys


def main():
    scores, tol1, set_dir = sys.argv[1:4]
    s = {c["case"]: c for c in json.load(open(scores))["cases"]}
    t = {c["case"]: c for c in json.load(open(tol1))["cases"]}
    rows = []
    for case in sorted(s):
        gt = os.path.join(set_dir, case + ".gt.json")
        if not case.startswith("photo_") or not os.path.exists(gt):
            continue
        twin = json.load(open(gt)).get("photo", {}).get("from_case")
        if twin not in s or "pen_up_moves" not in s[case] or "pen_up_moves" not in s[twin]:
            continue  # a case or its twin was not run (SV_EVAL_ONLY) or failed
        rows.append((case, s[case], t[case], s[twin]))
    if not rows:
        return
    print()
    print("photo cases beside their clean twins (photo / twin):")
    print(f"{'case':<44} {'f1':>6} {'f1@1px':>7} {'penup':>9} {'time_s':>13}")

    def num(v):
        return v if isinstance(v, (int, float)) else 0.0

    for case, a, b, w in rows:
        print(f"{case:<44} {num(a['f1']):6.3f} {num(b['f1']):7.3f} {num(a['pen_up_moves']):4.0f}/{num(w['pen_up_moves']):<4.0f}"
              f" {num(a['est_time_s']):6.1f}/{num(w['est_time_s']):<6.1f}")
    n = len(rows)
    mean = lambda xs: sum(xs) / n
    pu, pu_t = mean([num(a["pen_up_moves"]) for _, a, _, _ in rows]), mean([num(w["pen_up_moves"]) for *_, w in rows])
    tm, tm_t = mean([num(a["est_time_s"]) for _, a, _, _ in rows]), mean([num(w["est_time_s"]) for *_, w in rows])
    print(f"mean over {n}: f1 {mean([num(a['f1']) for _, a, _, _ in rows]):.3f} (lowest "
          f"{min(num(a['f1']) for _, a, _, _ in rows):.3f}), f1 at 1 px {mean([num(b['f1']) for _, _, b, _ in rows]):.3f}; "
          f"pen-ups {pu:.2f} / {pu_t:.2f} = {pu / pu_t if pu_t else float('nan'):.2f}; "
          f"draw time {tm:.1f} / {tm_t:.1f} s = {tm / tm_t if tm_t else float('nan'):.2f}")


if __name__ == "__main__":
    main()
