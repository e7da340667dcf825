#!/usr/bin/python3
"""A phone's JPEG of a pencil drawing for benchmarks: W x H, strokes STROKE px wide.

usage: pencil_jpeg.py OUT.jpg WIDTH HEIGHT STROKE

Lines, circles and arcs in graphite (gray 80-140, grainy, pressure varying along the page) on
paper lit unevenly (a light gradient and sensor noise), saved as a quality-90 JPEG, 4:2:0, as
a phone saves it. Seeded: the same arguments give the same file.
"""
import sys

import numpy as np
from PIL import Image, ImageDraw


def main():
    dst, w, h, sw = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = np.random.default_rng(11)
    ink = Image.new("L", (w, h), 0)
    d = ImageDraw.Draw(ink)
    for _ in range(14):  # straight strokes
        x0, y0, x1, y1 = rng.uniform(0.08, 0.92, 4) * [w, h, w, h]
        d.line([(x0, y0), (x1, y1)], fill=255, width=sw)
        for x, y in ((x0, y0), (x1, y1)):
            d.ellipse([x - sw / 2, y - sw / 2, x + sw / 2, y + sw / 2], fill=255)
    for _ in range(6):  # circles and arcs
        cx, cy = rng.uniform(0.2, 0.8, 2) * [w, h]
        r = rng.uniform(0.05, 0.18) * min(w, h)
        a0 = rng.uniform(0, 360)
        d.arc([cx - r, cy - r, cx + r, cy + r], a0, a0 + rng.uniform(120, 360), fill=255, width=sw)
    cover = np.asarray(ink, dtype=np.float32) / 255
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    light = 238 - 30 * (xx / w) * (yy / h)  # a shadow towards one corner
    graphite = 80 + 60 * (xx / w) + rng.normal(0, 18, (h, w)).astype(np.float32)  # pressure and grain
    gray = light * (1 - cover) + np.minimum(graphite, light) * cover
    rgb = np.stack([gray * 1.0, gray * 0.98, gray * 0.93], axis=-1) + rng.normal(0, 3, (h, w, 3)).astype(np.float32)
    Image.fromarray(np.clip(np.rint(rgb), 0, 255).astype(np.uint8)).save(dst, quality=90)


if __name__ == "__main__":
    main()
