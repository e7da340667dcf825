#!/usr/bin/python3
"""Lay drawings out on one sheet, the size and density of a real pencil sketch, for benchmarks.

usage: sheet_png.py OUT.png WIDTH HEIGHT ROWS IN.png...
ROWS is the number of drawings per row, e.g. 3,3,3: the rows share the height equally and each
drawing is scaled (keeping its aspect, Lanczos) to fit its cell, centred; ink is composited
darkest-wins on white. Gray 8-bit output.
"""
import sys

from PIL import Image, ImageChops


def main():
    out, width, height, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    names = sys.argv[5:]
    counts = [int(n) for n in rows.split(",")]
    if sum(counts) != len(names):
        sys.exit(f"sheet_png: rows {rows} place {sum(counts)} drawings, {len(names)} given")
    sheet = Image.new("L", (width, height), 255)
    cell_h = height // len(counts)
    it = iter(names)
    for r, n in enumerate(counts):
        cell_w = width // n
        for c in range(n):
            img = Image.open(next(it)).convert("L")
            k = min(cell_w / img.width, cell_h / img.height)
            img = img.resize((max(1, round(img.width * k)), max(1, round(img.height * k))), Image.LANCZOS)
            x = c * cell_w + (cell_w - img.width) // 2
            y = r * cell_h + (cell_h - img.height) // 2
            region = (x, y, x + img.width, y + img.height)
            sheet.paste(ImageChops.darker(sheet.crop(region), img), region)
    sheet.save(out)


if __name__ == "__main__":
    main()
