#!/usr/bin/python3
"""sv-simulate's time against the evaluation scorer's est_time_s, case by case.

usage: check_times.py CORPUS_SET_DIR FIT_DIR BIN_DIR [PEN_TIME_S]

For every CASE.gt.json with a fitted scene FIT_DIR/CASE.json: route it at the scorer's own
scale (ppi from the GT's box at 200 mm, passed as --ppi), simulate it, write the Doodlebot
stream with --commands, score that stream, and compare sv-simulate's motion_time_s with the
scorer's est_time_s. Prints the worst relative difference and exits 1 if it exceeds 0.1 %.
With PEN_TIME_S, routes with that pen time per lift or drop and also reports the total.
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    set_dir, fit_dir, bin_dir = sys.argv[1:4]
    pen_time = float(sys.argv[4]) if len(sys.argv) > 4 else None
    sys.path.insert(0, os.path.dirname(os.path.abspath(set_dir.rstrip("/"))))
    import score  # the corpus's scorer, next to the case set

    worst, worst_case, n = 0.0, None, 0
    sum_motion = sum_total = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(set_dir)):
            if not name.endswith(".gt.json"):
                continue
            case = name[: -len(".gt.json")]
            fit = os.path.join(fit_dir, case + ".json")
            if not os.path.exists(fit):
                continue
            gt = score.load_gt(os.path.join(set_dir, name))
            ppi = score.gt_ppi(gt)
            stream = os.path.join(tmp, case + ".json")
            route = [os.path.join(bin_dir, "sv-route"), "--no-store", fit, "--ppi", repr(ppi)]
            sim = [os.path.join(bin_dir, "sv-simulate"), "--no-store", "--commands", stream]
            if pen_time is not None:
                route += ["--pen-time", repr(pen_time)]  # optimized with it, not only timed
            routed = subprocess.run(route, check=True, capture_output=True).stdout
            scene = json.loads(subprocess.run(sim, input=routed, check=True, capture_output=True).stdout)
            ours = scene["simulation"]["motion_time_s"]
            theirs = score.score(gt, score.load_pred(stream))["est_time_s"]
            rel = abs(ours - theirs) / max(theirs, 1e-12)
            n += 1
            sum_motion += ours
            sum_total += scene["simulation"]["total_s"]
            if rel >= worst:
                worst, worst_case = rel, (case, ours, theirs)
    if n == 0:
        print("check_times: no fitted scenes found", file=sys.stderr)
        return 1
    print(f"{n} cases: worst relative difference sv-simulate vs score.py est_time_s = {worst:.2e} "
          f"({worst_case[0]}: {worst_case[1]:.6f} s vs {worst_case[2]:.6f} s)")
    print(f"mean motion time {sum_motion / n:.2f} s" +
          (f"; with {pen_time:g} s per pen lift or drop {sum_total / n:.2f} s" if pen_time is not None else ""))
    return 0 if worst <= 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
