#include "raster/sheet.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <opencv2/imgproc.hpp>
#include <vector>

namespace sv {
namespace {

// The sheet is looked for on a copy about this many pixels on its shorter side: its edge is
// found to within a pixel of the copy, in 3 ms on a 12-megapixel photo.
constexpr int kCoarseSide = 128;
// Smaller images are icons or crops: no sheet to find.
constexpr int kMinSide = 96;
// The sheet is at least this share of the image; what is off it, at least this share.
constexpr double kMinSheet = 0.25, kMinOff = 0.005;
// What is off the sheet runs along the image's border for at least this share of its shorter side.
constexpr double kMinAlong = 0.5;
// A sharp edge falls within this many pixels of the copy either side (a sheet's edge, blurred)...
constexpr int kEdge = 2;
// ...by at least this share of its fall within three times that.
constexpr double kSharp = 0.3;
// Where a run of the border's part and the sheet meet, at least this share is on sharp edges.
constexpr double kSharpShare = 0.6;

cv::Mat rect(int r) { return cv::getStructuringElement(cv::MORPH_RECT, {2 * r + 1, 2 * r + 1}); }

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
  cv::morphologyEx(coarse, coarse, cv::MORPH_CLOSE, rect(r));
  // No border pixel darker than the lightest by min_step, none is darker than the sheet by it:
  // a scan or a page filling the frame is done here, before any labelling.
  double lightest = 0, border_min = 255;
  cv::minMaxLoc(coarse, nullptr, &lightest);
  for (const cv::Mat& line : {coarse.row(1), coarse.row(h - 2), coarse.col(1), coarse.col(w - 2)}) {
    double v;
    cv::minMaxLoc(line, &v);
    border_min = std::min(border_min, v);
  }
  if (border_min > (1 - opt.min_step) * lightest) return {};

  // The sheet: the largest region of Otsu's light class, its level the paper's.
  cv::Mat light, labels, stats, centres;
  cv::threshold(coarse, light, 0, 255, cv::THRESH_BINARY | cv::THRESH_OTSU);
  const int n = cv::connectedComponentsWithStats(light, labels, stats, centres, 4, CV_32S);
  int sheet = 0;
  for (int i = 1; i < n; ++i)
    if (sheet == 0 || stats.at<int>(i, cv::CC_STAT_AREA) > stats.at<int>(sheet, cv::CC_STAT_AREA)) sheet = i;
  if (sheet == 0 || stats.at<int>(sheet, cv::CC_STAT_AREA) < kMinSheet * w * h) return {};
  std::array<int, 256> count{};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if (labels.at<int>(y, x) == sheet) ++count[coarse.at<uchar>(y, x)];
  int paper = 0;
  for (int acc = 0; (acc += count[paper]) * 2 < stats.at<int>(sheet, cv::CC_STAT_AREA);) ++paper;

  // Flooded from the sheet (its inside, clear of its edge) and from each run of border pixels
  // darker than it by min_step, the image parts where the floods meet: along the steepest
  // edges, and across a stretch of the sheet's edge lost in a shadow as dark as the desk.
  cv::Mat seeds(coarse.size(), CV_32S, cv::Scalar(0)), inside;
  cv::erode(labels == sheet, inside, rect(kEdge + 1));
  seeds.setTo(1, inside);
  int runs = 1;
  // Once round, a pixel in from the border: watershed keeps the outermost pixels for itself.
  std::vector<cv::Point> ring;
  for (int x = 1; x < w - 1; ++x) ring.push_back({x, 1});
  for (int y = 2; y < h - 1; ++y) ring.push_back({w - 2, y});
  for (int x = w - 3; x >= 1; --x) ring.push_back({x, h - 2});
  for (int y = h - 3; y > 1; --y) ring.push_back({1, y});
  for (size_t i = 0; i < ring.size(); ++i) {
    const bool dark = coarse.at<uchar>(ring[i]) <= (1 - opt.min_step) * paper && !inside.at<uchar>(ring[i]);
    if (dark && (i == 0 || seeds.at<int>(ring[i - 1]) <= 1)) ++runs;
    if (dark) seeds.at<int>(ring[i]) = runs;
  }
  if (runs == 1) return {};
  cv::Mat colour;
  cv::cvtColor(coarse, colour, cv::COLOR_GRAY2BGR);
  cv::watershed(colour, seeds);

  // Sharp edges: where the level falls by min_step within kEdge pixels of the copy, and by not
  // much more within three times that (light falling off and soft shadows fall over more).
  cv::Mat hi, lo, wide_hi, wide_lo, edge(coarse.size(), CV_8U);
  cv::dilate(coarse, hi, rect(kEdge));
  cv::erode(coarse, lo, rect(kEdge));
  cv::dilate(coarse, wide_hi, rect(3 * kEdge));
  cv::erode(coarse, wide_lo, rect(3 * kEdge));
  for (int y = 0; y < h; ++y) {
    const uchar *a = hi.ptr<uchar>(y), *b = lo.ptr<uchar>(y), *wa = wide_hi.ptr<uchar>(y), *wb = wide_lo.ptr<uchar>(y);
    uchar* e = edge.ptr<uchar>(y);
    for (int x = 0; x < w; ++x) {
      const int step = a[x] - b[x];
      e[x] = step >= opt.min_step * a[x] && step >= kSharp * (wa[x] - wb[x]) ? 255 : 0;
    }
  }
  cv::dilate(edge, edge, rect(1));  // the floods meet within a pixel of it
  // A run's part is off the sheet when most of where it meets the sheet is a sharp edge (not
  // the soft edge of a shadow reaching the border).
  std::vector<int> meets(runs + 1, 0), sharp(runs + 1, 0);
  for (int y = 1; y + 1 < h; ++y)
    for (int x = 1; x + 1 < w; ++x) {
      if (seeds.at<int>(y, x) != -1) continue;  // where floods meet
      int a = 0, b = 0;  // the sheet and a run beside it
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int s = seeds.at<int>(y + dy, x + dx);
          if (s == 1) a = 1;
          else if (s > 1) b = s;
        }
      if (a && b) ++meets[b], sharp[b] += edge.at<uchar>(y, x) != 0;
    }
  std::vector<uchar> off_run(runs + 1, 0);
  for (int k = 2; k <= runs; ++k) off_run[k] = meets[k] > 0 && sharp[k] >= kSharpShare * meets[k] ? 255 : 0;
  cv::Mat off(coarse.size(), CV_8U);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int s = seeds.at<int>(y, x);
      off.at<uchar>(y, x) = s > 1 ? off_run[s] : 0;
    }
  cv::dilate(off, off, rect(1));  // and the line where the floods met
  off &= ~inside;
  // A desk shows along a good part of the border; a filled shape of the drawing cut by it
  // hardly ever does.
  const int along = cv::countNonZero(off.row(0)) + cv::countNonZero(off.row(h - 1)) + cv::countNonZero(off.col(0)) +
                    cv::countNonZero(off.col(w - 1));
  if (cv::countNonZero(off) < kMinOff * w * h || along < kMinAlong * std::min(w, h)) return {};

  // At full size, grown by a pixel of the copy and two (the edge's blur) over the sheet.
  cv::Mat full;
  cv::resize(off, full, {w * f, h * f}, 0, 0, cv::INTER_LINEAR);
  cv::threshold(full, full, 127, 1, cv::THRESH_BINARY);
  cv::copyMakeBorder(full, full, 0, gray.rows - h * f, 0, gray.cols - w * f, cv::BORDER_REPLICATE);
  cv::dilate(full, full, rect(f + 2));
  return full;
}

}  // namespace sv
