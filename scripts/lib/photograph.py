#!/usr/bin/python3
"""Photographs clean drawings: phone-photo conditions applied to each clean case of a corpus set.

usage: photograph.py SET_DIR OUT_DIR SEED [desk]

For every CASE.png of SET_DIR that is not itself a photo, writes OUT_DIR/photo_CASE.png and
photo_CASE.gt.json (the clean case's ground truth, with photo.from_case naming it), drawn under
conditions picked at random (seeded) from the ranges the corpus's photo family describes:
pencil (pressure varying smoothly between 35 % and 100 %, graphite grain) or marker; warm paper
of a random tint; light falling off by 10-25 % in a random direction; 8-25 % vignetting; one soft
shadow 15-32 % deep and 15-30 % of the page wide; a small blur; 2-4 levels of sensor noise per
channel. The ink is the clean drawing's own coverage, so the ground truth holds unchanged.

With `desk`, each photographed page lies on a desk, as a phone photo taken from further away
shows it: turned by up to 5 degrees, 30-100 px of desk on every side, a desk gray of 50-175
(wood-brown or neutral, with or without a grain of 10 levels), the page's soft shadow on it, a
slightly blurred page edge. The ground truth is turned and moved with the page.
"""
import math
import glob
import json
import os
import sys

import numpy as np
from PIL import Image
from scipy import ndimage as ndi


def photograph(gray, rng):
    h, w = gray.shape
    paper = np.percentile(gray, 90)
    cov = np.clip((paper - gray) / max(paper - gray.min(), 1), 0, 1)
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    if rng.random() < 0.5:  # pencil
        f = ndi.gaussian_filter(rng.normal(size=(h, w)), 40)
        pressure = 0.35 + 0.65 * (f - f.min()) / (np.ptp(f) + 1e-9)
        grain = np.clip(1 + 0.75 * ndi.gaussian_filter(rng.normal(size=(h, w)), 0.7), 0.3, 1.5)
        ink, medium = cov * pressure * grain * rng.uniform(0.55, 0.75), "pencil"
    else:
        ink, medium = cov * rng.uniform(0.85, 0.95), "marker"
    a = rng.uniform(0, 2 * np.pi)
    light = 1 - rng.uniform(0.10, 0.25) * (((xx - w / 2) * np.cos(a) + (yy - h / 2) * np.sin(a)) / max(w, h) + 0.5)
    light *= 1 - rng.uniform(0.08, 0.25) * ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    width, sx, sy = rng.uniform(0.15, 0.30) * max(w, h), rng.uniform(0, w), rng.uniform(0, h)
    light *= 1 - rng.uniform(0.15, 0.32) * np.exp(-((xx - sx) ** 2 + (yy - sy) ** 2) / (2 * (width / 2.355) ** 2))
    tint = np.array([rng.uniform(0.93, 1.0), rng.uniform(0.88, 0.95), rng.uniform(0.75, 0.88)]) * rng.uniform(215, 240)
    img = light[..., None] * tint[None, None, :] * (1 - ink[..., None])
    img = ndi.gaussian_filter(img, (rng.uniform(0.4, 0.9),) * 2 + (0,))
    img += rng.normal(0, rng.uniform(2, 4), img.shape)
    return Image.fromarray(np.clip(np.rint(img), 0, 255).astype(np.uint8)), medium


def on_desk(img, gt, rng):
    """The photographed page `img` (RGB) on a desk, and its ground truth moved with it."""
    w, h = img.size
    angle = float(rng.uniform(-5, 5))
    page = img.rotate(angle, resample=Image.BICUBIC, expand=True, fillcolor=(0, 0, 0))
    cover = Image.new("L", img.size, 255).rotate(angle, resample=Image.BICUBIC, expand=True, fillcolor=0)
    W, H = page.size[0] + int(rng.integers(60, 200)), page.size[1] + int(rng.integers(60, 200))
    ox, oy = int(rng.integers(10, W - page.size[0] - 10)), int(rng.integers(10, H - page.size[1] - 10))
    tint = np.array([1.0, 0.85, 0.7]) if rng.random() < 0.6 else np.array([1.0, 1.0, 1.02])
    yy, xx = np.mgrid[0:H, 0:W]
    tone = rng.uniform(50, 175)
    grain = 10 * np.sin(xx / rng.uniform(5, 15) + 2 * np.sin(yy / rng.uniform(20, 60))) if rng.random() < 0.6 else 0 * xx
    shade = np.zeros((H, W))
    shade[oy + 6:oy + 6 + page.size[1], ox + 6:ox + 6 + page.size[0]] = np.asarray(cover, float) / 255
    desk = (tone + grain)[..., None] * tint * (1 - 0.35 * ndi.gaussian_filter(shade, 6))[..., None]
    desk += rng.normal(0, 3, desk.shape)
    out = Image.fromarray(np.clip(np.rint(desk), 0, 255).astype(np.uint8))
    out.paste(page, (ox, oy), cover)
    out = Image.fromarray(np.clip(np.rint(ndi.gaussian_filter(np.asarray(out, float), (0.6, 0.6, 0))), 0, 255).astype(np.uint8))
    # PIL turns the page counter-clockwise on screen about its centre (y down): an angle
    # measured from +x turns by -angle.
    a, cx, cy = math.radians(angle), (w - 1) / 2, (h - 1) / 2
    px, py = (page.size[0] - 1) / 2 + ox, (page.size[1] - 1) / 2 + oy

    def move(p):
        x, y = p[0] - cx, p[1] - cy
        return [px + x * math.cos(a) + y * math.sin(a), py - x * math.sin(a) + y * math.cos(a)]

    gt["polylines"] = [[move(p) for p in line] for line in gt["polylines"]]
    for prim in gt.get("primitives") or []:
        for key in ("p0", "p1", "center"):
            if key in prim:
                prim[key] = move(prim[key])
        for key in ("start_deg", "end_deg"):
            if key in prim:
                prim[key] -= angle
    gt.update(width=W, height=H)
    return out, gt


def main():
    src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    desk = len(sys.argv) > 4 and sys.argv[4] == "desk"
    rng = np.random.default_rng(seed)
    desk_rng = np.random.default_rng([seed, 1])  # the photos stay those of the seed without desk
    for path in sorted(glob.glob(os.path.join(src, "*.png"))):
        case = os.path.basename(path)[:-4]
        if case.startswith("photo_") or not os.path.exists(os.path.join(src, case + ".gt.json")):
            continue
        img, medium = photograph(np.asarray(Image.open(path).convert("L"), dtype=float), rng)
        gt = json.load(open(os.path.join(src, case + ".gt.json")))
        gt.update(case="photo_" + case, family="photo", photo={"from_case": case, "medium": medium})
        if desk:
            img, gt = on_desk(img, gt, desk_rng)
        img.save(os.path.join(dst, f"photo_{case}.png"))
        json.dump(gt, open(os.path.join(dst, f"photo_{case}.gt.json"), "w"))


if __name__ == "__main__":
    main()
