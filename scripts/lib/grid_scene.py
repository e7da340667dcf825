#!/usr/bin/env python3
"""Writes a valid fitted scene of N separate lines in a square grid (no graph, no source image) to
stdout, for measuring how the tools scale with the primitive count: grid_scene.py N > scene.json.
Each line is 10 px long, horizontal or vertical in turn, in a cell of 20 px."""
import json
import math
import sys


def main():
    n = int(sys.argv[1])
    side = max(1, math.ceil(math.sqrt(n)))
    prims = []
    for i in range(n):
        x, y = 20 * (i % side) + 5, 20 * (i // side) + 5
        p1 = [x + 10, y] if i % 2 == 0 else [x, y + 10]
        prims.append({"id": f"p_{i + 1:04d}", "type": "line", "p0": [x, y], "p1": p1,
                      "length_px": 10, "fit_rms_px": 0, "fit_max_px": 0,
                      "semantic_role": "unknown", "issues": []})
    scene = {"format": "sv.scene", "version": 1, "primitives": prims,
             "revision": {"tool": "grid_scene", "args": [str(n)], "note": "", "parent": None}}
    json.dump(scene, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
