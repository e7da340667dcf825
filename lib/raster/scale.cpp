#include "raster/scale.hpp"

#include <cmath>
#include <vector>

#include "core/error.hpp"

namespace sv {

namespace {

constexpr int kAbBits = 10;   // cv::warpAffine's fixed point: 1/1024 px
constexpr int kTabBits = 5;   // its bilinear weights: 1/32 px steps
constexpr int kTab = 1 << kTabBits;

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
    // The four weights in 1/1024, (32 - ax) * (32 - ay) and so on: warpAffine's are 32 times these.
    auto blend = [&](int ax, int p00, int p01, int p10, int p11) {
      const int v = p00 * (kTab - ax) * (kTab - ay) + p01 * ax * (kTab - ay) + p10 * (kTab - ax) * ay + p11 * ax * ay;
      return static_cast<uchar>((v + (1 << (2 * kTabBits - 1))) >> (2 * kTabBits));
    };
    auto at = [&](int px, int py) -> int { return px >= 0 && px < w && py >= 0 && py < h ? gray.at<uchar>(py, px) : fill; };
    const bool rows_inside = sy >= 0 && sy + 1 < h;
    const uchar* r0 = rows_inside ? gray.ptr<uchar>(sy) : nullptr;
    const uchar* r1 = rows_inside ? gray.ptr<uchar>(sy + 1) : nullptr;
    for (int x = 0; x < size.width; ++x) {
      const int sx = xs[x] >> kTabBits, ax = xs[x] & (kTab - 1);
      if (rows_inside && sx >= 0 && sx + 1 < w) o[x] = blend(ax, r0[sx], r0[sx + 1], r1[sx], r1[sx + 1]);
      else if (sx >= w || sx + 1 < 0 || sy >= h || sy + 1 < 0) o[x] = fill;
      else o[x] = blend(ax, at(sx, sy), at(sx + 1, sy), at(sx, sy + 1), at(sx + 1, sy + 1));  // at an edge
    }
  }
  return out;
}

}  // namespace sv
