// Separating ink from paper. Scans, renderings and phone photos differ in paper tone (tinted,
// blotchy), in the light falling on it (a gradient, vignetting, the soft shadow of a hand or
// a phone) and in the ink (anti-aliased, blurred, pencil whose darkness changes with the
// pressure). The paper and its light are estimated at a scale larger than any stroke and
// divided out; every pixel then gets an ink coverage in [0, 1]: 0 on paper, 1 on full ink,
// fractional on the edges. Thresholding coverage at 1/2 puts the binary edge where the true
// edge is, so widths read right.
#pragma once
#include <opencv2/core.hpp>
#include <optional>

namespace sv {

struct InkOptions {
  double background_cell_px = 16;  // scale of the paper-level map (blotches are larger)
  // Surely-paper pixels, from which the light is estimated: darker than the light envelope
  // (a closing) at stroke scale by at most paper_contrast, and than the envelope at page
  // scale by at most page_contrast. Scales are fractions of the image's shorter side.
  double stroke_scale = 1.0 / 32, page_scale = 1.0 / 8;
  double paper_contrast = 0.05, page_contrast = 0.45;
  std::optional<double> threshold;       // strong ink: normalised gray below this (default: midway to ink)
  std::optional<double> weak_threshold;  // weak ink: normalised gray below this (default from the ratios)
  double weak_ratio = 0.15;  // weak ink is at least this fraction of full ink's darkness...
  double noise_ratio = 5;    // ...and this many times the paper's noise
  double peak_radius_ratio = 0.75;  // a stroke's own darkness is the darkest ink within this times its width
  double grain_holes = 0.02;        // ink with more holes than this (share of its inside) is grainy...
  double grain_sigma_ratio = 0.2;   // ...and is smoothed with a Gaussian of this times the stroke width
  double sheet_step = 0.10;  // off the sheet of paper beyond a straight edge this deep (raster/sheet.hpp; 0: never)
};

struct Ink {
  cv::Mat coverage;  // CV_8UC1, 0 paper .. 255 full ink
  cv::Mat binary;    // CV_8UC1, 1 ink, 0 paper
  double paper_level = 255;  // median gray of the paper (raw image)
  double ink_level = 0;      // paper-normalised gray of full ink
  double threshold = 128;    // paper-normalised gray below which a pixel is strong ink
  double weak_threshold = 128;  // paper-normalised gray below which a pixel connected to strong ink is ink
  double noise = 0;          // spread of the paper's normalised gray (one standard deviation)
  double peak_radius_px = 1;  // radius of the window in which a stroke's own darkness is found
  double holes = 0;           // share of the inside of the ink regions left out of the binary
  double grain_sigma_px = 0;  // smoothing applied to grainy ink (0: none)
  double off_sheet = 0;       // share of the image off the sheet of paper, left out
  bool uniform = false;      // no paper/ink contrast: the image is all paper or all ink
};

// Pixels off the sheet of paper (raster/sheet.hpp) are left out: neither paper nor ink.
// Stage 1, the light: the paper level of each cell is the mean of its surely-paper pixels
// (see InkOptions), filled into ink-covered cells by normalised convolution and interpolated
// bilinearly; the gray is divided by it (paper = 255). Stage 2, the levels: full ink is a low
// percentile of the normalised ink class (Otsu), strong ink is darker than midway to it, weak
// ink is clear of the paper's noise. Stage 3, hysteresis (Canny's): weak ink is ink only
// where it is 8-connected to strong ink, or where it makes a dot (at most 2.5 stroke widths
// across, at least a square width in area, twice as dark as weak ink somewhere) away from the
// sheet's edge. Stage 4, coverage: darkness over the stroke's own darkness (the darkest ink
// nearby, capped at full ink), so a light pencil stretch keeps its width; grainy ink (holes
// inside its regions) is smoothed at a fraction of the stroke width and read again. Levels
// come from every other pixel of every other row.
Ink separate_ink(const cv::Mat& gray, const InkOptions& opt = {});

}  // namespace sv
