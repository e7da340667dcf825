#!/usr/bin/python3
"""Each drawing's pipeline time against the prior implementation's own figure for it.

usage: prior_ratio.py REFERENCE_FIGURES.json TIMES_DIR
TIMES_DIR holds what scripts/bench measured: skeleton.tsv, fit.tsv, route.tsv (one process per
drawing: "NAME START END" in seconds) and batch-skeleton.tsv, batch-fit.tsv, batch-route.tsv (the
stages' --timings files: "INPUT SECONDS STATUS"). sv's time for a drawing is the sum of its three
stages; the prior's is its pipeline_s_low_path (the stages that produce the output, interpreter
start and imports excluded). Prints the median and the sum ratio, both ways of running sv.
"""
import json
import os
import statistics
import sys


def per_drawing(times_dir, names, batch):
    total = {}
    for stage in ("skeleton", "fit", "route"):
        path = os.path.join(times_dir, ("batch-" if batch else "") + stage + ".tsv")
        with open(path) as f:
            rows = [line.split("\t") if batch else line.split() for line in f if line.strip()]
        if batch:
            rows = [(os.path.splitext(os.path.basename(r[0]))[0], float(r[1])) for r in rows[1:] if r[2].strip() == "ok"]
        else:
            rows = [(r[0], float(r[2]) - float(r[1])) for r in rows]
        for name, seconds in rows:
            if name in names:
                total[name] = total.get(name, 0.0) + seconds
    return total


def main():
    ref = json.load(open(sys.argv[1]))["cases"]
    prior = {name: c["pipeline_s_low_path"] for name, c in ref.items() if c.get("pipeline_s_low_path")}
    for label, batch in (("one process per stage", False), ("batch mode", True)):
        sv = per_drawing(sys.argv[2], prior, batch)
        common = sorted(n for n in sv if n in prior)
        if not common:
            print(f"prior implementation, {label}: no drawing in common")
            continue
        ratios = [sv[n] / prior[n] for n in common]
        print(f"against the prior implementation, {label}: median ratio {statistics.median(ratios):.4f} "
              f"over {len(common)} drawings (sv median {statistics.median(sv[n] for n in common) * 1000:.1f} ms, "
              f"prior {statistics.median(prior[n] for n in common):.3f} s); by the sums {sum(sv[n] for n in common) / sum(prior[n] for n in common):.4f}")


if __name__ == "__main__":
    main()
