// Separating ink from paper. Scans and renderings differ in paper tone (tinted, blotchy,
// uneven light) and ink tone, and strokes are anti-aliased or blurred. The paper level is
// estimated locally and divided out, then every pixel gets an ink coverage in [0, 1]:
// 0 on paper, 1 on full ink, fractional on anti-aliased edges. Thresholding coverage at 1/2
// puts the binary edge where the true edge is, so widths read right.
#pragma once
#include <opencv2/core.hpp>
#include <optional>

namespace sv {

struct InkOptions {
  double background_cell_px = 16;  // scale of the paper-level map (blotches are larger)
  std::optional<double> threshold;   // paper-normalised gray (paper = 255); default: midway to ink
};

struct Ink {
  cv::Mat coverage;  // CV_8UC1, 0 paper .. 255 full ink
  cv::Mat binary;    // CV_8UC1, 1 ink, 0 paper
  double paper_level = 255;  // median gray of the paper (raw image)
  double ink_level = 0;      // paper-normalised gray of full ink
  double threshold = 128;    // paper-normalised gray below which a pixel is ink
  bool uniform = false;      // no paper/ink contrast: the image is all paper or all ink
};

// Paper normalisation: the paper level of each cell is the mean of its confident paper
// pixels (lighter than midway between the Otsu threshold and the paper class mean, which
// leaves out anti-aliased fringes), filled into ink-covered cells by normalised convolution
// and interpolated bilinearly. The ink level is a low percentile of the normalised ink class,
// so noise and thin strokes do not pull it towards the paper. Levels come from every other
// pixel of every other row.
Ink separate_ink(const cv::Mat& gray, const InkOptions& opt = {});

}  // namespace sv
