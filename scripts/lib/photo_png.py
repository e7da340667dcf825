#!/usr/bin/python3
"""A phone-sized photo for benchmarks: a photographed corpus drawing scaled up to W x H.

usage: photo_png.py IN.png OUT.(png|jpg) WIDTH HEIGHT

The drawing is scaled (bicubic) to cover WIDTH x HEIGHT and cropped to its centre; sensor noise
(3 gray levels per channel, seeded) is added at the new resolution, as a phone's sensor has it.
"""
import sys

import numpy as np
from PIL import Image


def main():
    src, dst, w, h = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    img = Image.open(src).convert("RGB")
    k = max(w / img.width, h / img.height)
    big = img.resize((round(img.width * k), round(img.height * k)), Image.BICUBIC)
    x0, y0 = (big.width - w) // 2, (big.height - h) // 2
    a = np.asarray(big.crop((x0, y0, x0 + w, y0 + h)), dtype=np.float32)
    a += np.random.default_rng(7).normal(0, 3, a.shape).astype(np.float32)
    out = Image.fromarray(np.clip(np.rint(a), 0, 255).astype(np.uint8))
    out.save(dst, quality=90) if dst.endswith(".jpg") else out.save(dst, compress_level=1)


if __name__ == "__main__":
    main()
