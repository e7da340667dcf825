#include "raster/sheet.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <opencv2/imgproc.hpp>
#include <vector>

namespace sv {
namespace {

// The sheet is looked for on a copy about this many pixels on its shorter side: its edges are
// found to within a pixel of the copy.
constexpr int kCoarseSide = 128;
// Smaller images are icons or crops: no sheet to find.
constexpr int kMinSide = 96;
// The sheet is at least this share of the image.
constexpr double kMinSheet = 0.25;
// A sheet's edge lies within this share of the image from its side...
constexpr double kBand = 0.75;
// ...turned from the side by at most this slope (20 degrees), tried in this many steps either
// way (a step moves a line's end by under a pixel of a 4:3 copy)...
constexpr double kMaxSlope = 0.36;
constexpr int kSlopeSteps = 48;
// ...and is seen along at least this share of the side (looked for again with half the step,
// the second).
constexpr double kMinAlong = 0.4, kMinAlongAgain = 0.45;
// A sheet's edge, blurred, falls within this many pixels of the copy either side...
constexpr int kEdge = 2;
// ...by at least this share of its fall within three times that; light falling off and soft
// shadows fall over more.
constexpr double kSharp = 0.5;

cv::Mat rect(int r) { return cv::getStructuringElement(cv::MORPH_RECT, {2 * r + 1, 2 * r + 1}); }

// The view of the copy with the given side on top, and back.
cv::Mat to_view(const cv::Mat& m, int side) {
  cv::Mat v;
  switch (side) {
    case 0: v = m.clone(); break;
    case 1: cv::flip(m, v, 0); break;
    case 2: cv::transpose(m, v); break;
    default: cv::transpose(m, v); cv::flip(v, v, 0); break;
  }
  return v;
}
cv::Mat from_view(const cv::Mat& v, int side) {
  if (side < 3) return to_view(v, side);  // a flip and a transpose undo themselves
  cv::Mat m;
  cv::flip(v, m, 0);
  cv::transpose(m, m);
  return m;
}

// The sheet's edge along the top of `v`, as the rows above it (1), or an empty Mat: the straight
// line along which enough columns step up by min_step, sharply, from a darker outside.
cv::Mat outside_of_top_edge(const cv::Mat& v, double min_step, double min_along) {
  const int w = v.cols, h = v.rows, band = static_cast<int>(kBand * h), slopes = 2 * kSlopeSteps + 1;
  const auto slope_of = [](int i) { return (i - kSlopeSteps) * kMaxSlope / kSlopeSteps; };
  // Votes of each column's edge pixels for the lines through them: slope i, row c at the middle
  // column, c = y + shift(i, x).
  std::vector<int> shift(static_cast<size_t>(slopes) * w), votes(static_cast<size_t>(slopes) * h, 0);
  for (int i = 0; i < slopes; ++i)
    for (int x = 0; x < w; ++x)
      shift[static_cast<size_t>(i) * w + x] = static_cast<int>(std::lround(-slope_of(i) * (x - w / 2.0)));
  for (int y = kEdge; y < band; ++y)
    for (int x = 0; x < w; ++x) {
      const int in = v.at<uchar>(y + kEdge, x), out = v.at<uchar>(y - kEdge, x);
      const int wide = v.at<uchar>(std::min(h - 1, y + 3 * kEdge), x) - v.at<uchar>(std::max(0, y - 3 * kEdge), x);
      if (in - out < min_step * in || in - out < kSharp * wide) continue;
      for (int i = 0; i < slopes; ++i) {
        const int c = y + shift[static_cast<size_t>(i) * w + x];
        if (c >= 0 && c < h) ++votes[static_cast<size_t>(i) * h + c];
      }
    }
  // Each row's best line; the innermost seen along enough of the side (beyond it, lines along
  // the desk's grain or the page's shadow on it), at its best within the edge's blur.
  std::vector<int> best_votes(h, 0), best_slope(h, 0);
  for (int c = 0; c < h; ++c)
    for (int i = 0; i < slopes; ++i)
      if (const int n = votes[static_cast<size_t>(i) * h + c]; n > best_votes[c]) best_votes[c] = n, best_slope[c] = i;
  int c0 = h - 1;
  while (c0 >= 0 && best_votes[c0] < min_along * w) --c0;
  if (c0 < 0) return {};
  for (int c = c0 - 1; c >= std::max(0, c0 - 2 * kEdge); --c)
    if (best_votes[c] > best_votes[c0]) c0 = c;
  const int i = best_slope[c0], top = best_votes[c0];
  // The edge pixels lie in a band a few rows deep, the page's shadow on the desk widening it
  // outwards; the line runs along its inner side.
  int c = c0;
  const int* row = &votes[static_cast<size_t>(i) * h];
  while (c + 1 < h && row[c + 1] >= 0.8 * top) ++c;
  const double slope = slope_of(i);
  cv::Mat outside(v.size(), CV_8U, cv::Scalar(0));
  std::vector<uchar> beyond, within, border(v.ptr<uchar>(0), v.ptr<uchar>(0) + w);
  for (int x = 0; x < w; ++x) {
    const int end = std::clamp(static_cast<int>(std::lround(c + slope * (x - w / 2.0))), 0, h);
    outside.col(x).rowRange(0, end).setTo(1);
    for (int y = 0; y < end; ++y) beyond.push_back(v.at<uchar>(y, x));
    for (int y = end + kEdge; y <= std::min(h - 1, end + 3 * kEdge); ++y) within.push_back(v.at<uchar>(y, x));
  }
  // Beyond the edge, all but the lightest quarter is darker than the paper along it: the
  // image's side is not a stroke's edge with paper beyond, nor light falling off.
  const auto quantile = [](std::vector<uchar>& s, double q) {
    auto at = s.begin() + static_cast<long>(q * (s.size() - 1));
    std::nth_element(s.begin(), at, s.end());
    return static_cast<double>(*at);
  };
  if (beyond.empty() || within.empty()) return {};
  const double paper = quantile(within, 0.5);
  if (quantile(beyond, 0.75) > (1 - min_step) * paper || quantile(border, 0.75) > (1 - min_step) * paper) return {};
  return outside;
}

}  // namespace

cv::Mat off_sheet(const cv::Mat& gray, const SheetOptions& opt) {
  const int side = std::min(gray.cols, gray.rows);
  if (opt.min_step <= 0 || side < kMinSide) return {};
  // A whole factor, for area averaging's fast path; the last few rows and columns are left out
  // and take their neighbours' side.
  const int f = std::max(1, side / kCoarseSide), w = gray.cols / f, h = gray.rows / f;
  cv::Mat coarse;
  cv::resize(gray(cv::Rect(0, 0, w * f, h * f)), coarse, {w, h}, 0, 0, cv::INTER_AREA);
  // Strokes closed away, what is left is paper, its light and shadows, and what surrounds it.
  const int r = std::max(2, static_cast<int>(std::lround(opt.stroke_scale * std::min(w, h))));
  // The border replicated first: a strip of desk narrower than the closing stays.
  cv::copyMakeBorder(coarse, coarse, r, r, r, r, cv::BORDER_REPLICATE);
  cv::morphologyEx(coarse, coarse, cv::MORPH_CLOSE, rect(r));
  coarse = coarse(cv::Rect(r, r, w, h));
  // No border pixel darker than the lightest by min_step, none is darker than the sheet by it:
  // a scan or a page filling the frame is done here.
  double lightest = 0, border_min = 255;
  cv::minMaxLoc(coarse, nullptr, &lightest);
  for (const cv::Mat& line : {coarse.row(0), coarse.row(h - 1), coarse.col(0), coarse.col(w - 1)}) {
    double v;
    cv::minMaxLoc(line, &v);
    border_min = std::min(border_min, v);
  }
  if (border_min > (1 - opt.min_step) * lightest) return {};

  // Where a side is found, the photo shows the desk: the others are looked for again with half
  // the step, as where the page's end lies in a shadow nearly as dark as the desk.
  cv::Mat off(coarse.size(), CV_8U, cv::Scalar(0));
  std::array<bool, 4> found{};
  for (const bool again : {false, true}) {
    for (int s = 0; s < 4; ++s) {
      if (found[s]) continue;
      const double step = again ? opt.min_step / 2 : opt.min_step, along = again ? kMinAlongAgain : kMinAlong;
      const cv::Mat outside = outside_of_top_edge(to_view(coarse, s), step, along);
      if (!outside.empty()) off |= from_view(outside, s), found[s] = true;
    }
    if (std::count(found.begin(), found.end(), true) == 0) break;
  }
  if (cv::countNonZero(off) == 0 || cv::countNonZero(off) > (1 - kMinSheet) * w * h) return {};

  // At full size, grown by a pixel of the copy (grown before the copy is scaled up, the same and
  // cheaper) and two (the edge's blur) over the sheet.
  cv::dilate(off, off, rect(1));
  cv::Mat full(gray.size(), CV_8U);
  cv::resize(off, full(cv::Rect(0, 0, w * f, h * f)), {w * f, h * f}, 0, 0, cv::INTER_NEAREST);
  for (int x = w * f; x < gray.cols; ++x) full.col(w * f - 1).rowRange(0, h * f).copyTo(full.col(x).rowRange(0, h * f));
  for (int y = h * f; y < gray.rows; ++y) full.row(h * f - 1).copyTo(full.row(y));
  cv::dilate(full, full, rect(2));
  return full;
}

}  // namespace sv
