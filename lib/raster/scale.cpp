#include "raster/scale.hpp"

#include <cmath>
#include <vector>

#include "core/error.hpp"

namespace sv {

namespace {

constexpr int kAbBits = 10;   // cv::warpAffine's fixed point: 1/1024 px
constexpr int kTabBits = 5;   // its bilinear weights: 1/32 px steps
constexpr int kTab = 1 << kTabBits;
constexpr int kWeightBits = 15;  // weights sum to 1 << 15

// cvRound: to nearest, ties to even.
int fixed(double v) { return static_cast<int>(std::lrint(v * (1 << kAbBits))); }

// The source position of each output row or column, in 1/1024 px (nearest) or 1/32 px (bilinear),
// as warpAffine computes it: for a row, step * y + start rounded once; for a column, the start and
// step * x rounded apart.
std::vector<int> positions(int n, double step, double start, Sampling s, bool rows) {
  const bool nearest = s == Sampling::nearest;
  const int round_delta = nearest ? (1 << kAbBits) / 2 : (1 << kAbBits) / kTab / 2;
  const int shift = nearest ? kAbBits : kAbBits - kTabBits;
  std::vector<int> p(n);
  for (int i = 0; i < n; ++i)
    p[i] = ((rows ? fixed(step * i + start) : fixed(start) + fixed(step * i)) + round_delta) >> shift;
  return p;
}

}  // namespace

cv::Mat scale_onto(const cv::Mat& gray, double scale, cv::Point2d offset, cv::Size size, Sampling sampling,
                   uchar fill) {
  if (gray.type() != CV_8UC1 || !(scale > 0) || !std::isfinite(scale))
    throw Error(Code::internal, "scale_onto needs a CV_8UC1 image and a positive scale");
  // warpAffine's inverse of [s 0 ox; 0 s oy]: 1 / det times the adjugate, in its order of operations.
  const double det = 1.0 / (scale * scale), a = scale * det;
  const double bx = -a * offset.x, by = -a * offset.y;
  const std::vector<int> xs = positions(size.width, a, bx, sampling, false);
  const std::vector<int> ys = positions(size.height, a, by, sampling, true);
  cv::Mat out(size, CV_8UC1);
  const int w = gray.cols, h = gray.rows;
  for (int y = 0; y < size.height; ++y) {
    uchar* o = out.ptr<uchar>(y);
    if (sampling == Sampling::nearest) {
      const int sy = ys[y];
      const uchar* row = (sy >= 0 && sy < h) ? gray.ptr<uchar>(sy) : nullptr;
      for (int x = 0; x < size.width; ++x) o[x] = row && xs[x] >= 0 && xs[x] < w ? row[xs[x]] : fill;
      continue;
    }
    const int sy = ys[y] >> kTabBits, ay = ys[y] & (kTab - 1);
    auto at = [&](int px, int py) -> int { return px >= 0 && px < w && py >= 0 && py < h ? gray.at<uchar>(py, px) : fill; };
    for (int x = 0; x < size.width; ++x) {
      const int sx = xs[x] >> kTabBits, ax = xs[x] & (kTab - 1);
      if (sx >= w || sx + 1 < 0 || sy >= h || sy + 1 < 0) {
        o[x] = fill;
        continue;
      }
      // The four weights in 1/32768, exact: (32 - a) * (32 - b) * 32 and so on.
      const int v = at(sx, sy) * (kTab - ax) * (kTab - ay) + at(sx + 1, sy) * ax * (kTab - ay) +
                    at(sx, sy + 1) * (kTab - ax) * ay + at(sx + 1, sy + 1) * ax * ay;
      o[x] = cv::saturate_cast<uchar>((v * kTab + (1 << (kWeightBits - 1))) >> kWeightBits);
    }
  }
  return out;
}

}  // namespace sv
