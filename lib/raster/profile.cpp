#include "raster/profile.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "raster/scan.hpp"

namespace sv {
namespace {

constexpr double kStep = 0.5;           // sampling step along a normal, px
constexpr double kMaxReach = 256;       // no stroke is wider than twice this
constexpr size_t kMaxSamples = 20000;   // pixels sampled for the median width

double texel(const cv::Mat& c, int x, int y) {
  if (x < 0 || y < 0 || x >= c.cols || y >= c.rows) return 0;
  return c.at<uchar>(y, x) * (1.0 / 255.0);
}

// coverage_at's body, inline in the loops that step along a normal.
[[gnu::always_inline]] inline double bilinear(const cv::Mat& coverage, Vec2 p) {
  // The four texels around p: read directly when all are inside the image (the common case,
  // where truncation is the floor), else one by one, the surround counting as paper.
  int x, y;
  double t[4];
  if (p.x >= 0 && p.y >= 0 && p.x < coverage.cols - 1 && p.y < coverage.rows - 1) {
    x = static_cast<int>(p.x), y = static_cast<int>(p.y);
    const uchar* r0 = coverage.ptr<uchar>(y) + x;
    const uchar* r1 = r0 + coverage.step[0];
    constexpr double k = 1.0 / 255.0;
    t[0] = r0[0] * k, t[1] = r0[1] * k, t[2] = r1[0] * k, t[3] = r1[1] * k;
  } else {
    x = static_cast<int>(std::floor(p.x)), y = static_cast<int>(std::floor(p.y));
    t[0] = texel(coverage, x, y), t[1] = texel(coverage, x + 1, y);
    t[2] = texel(coverage, x, y + 1), t[3] = texel(coverage, x + 1, y + 1);
  }
  const double ax = p.x - x, ay = p.y - y;
  return (1 - ay) * ((1 - ax) * t[0] + ax * t[1]) + ay * ((1 - ax) * t[2] + ax * t[3]);
}

}  // namespace

double coverage_at(const cv::Mat& coverage, Vec2 p) { return bilinear(coverage, p); }

double distance_to_edge(const cv::Mat& coverage, Vec2 p, Vec2 d, double max_reach) {
  double prev = bilinear(coverage, p);
  if (prev < 0.5) return -1;
  for (double s = kStep; s <= max_reach + kStep; s += kStep) {
    double c = bilinear(coverage, p + d * s);
    if (c < 0.5) return s - kStep + kStep * (prev - 0.5) / (prev - c);
    prev = c;
  }
  return -1;
}

CrossSection cross_section(const cv::Mat& coverage, Vec2 p, Vec2 n, double max_reach) {
  double a = distance_to_edge(coverage, p, n, max_reach);
  if (a < 0) return {};
  double b = distance_to_edge(coverage, p, -n, max_reach);
  if (b < 0) return {};
  return {true, (a - b) / 2, a + b};
}

double inscribed_radius(const cv::Mat& coverage, Vec2 p, double max_reach) {
  if (coverage_at(coverage, p) < 0.5) return 0;
  double r = max_reach;
  for (int k = 0; k < 16; ++k) {
    double d = distance_to_edge(coverage, p, from_angle(k * kPi / 8), r);
    if (d >= 0) r = std::min(r, d);
  }
  return r;
}

double stroke_width_quantile(const cv::Mat& skeleton, const cv::Mat& coverage, double quantile) {
  auto on = [&](int x, int y) { return x >= 0 && y >= 0 && x < skeleton.cols && y < skeleton.rows && skeleton.at<uchar>(y, x); };
  std::vector<cv::Point> inside;
  for (int y = 0; y < skeleton.rows; ++y) {
    const uchar* row = skeleton.ptr<uchar>(y);
    const size_t w = static_cast<size_t>(skeleton.cols);
    for (size_t xs = next_set(row, 0, w); xs < w; xs = next_set(row, xs + 1, w)) {
      const int x = static_cast<int>(xs);
      int n = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) n += (dx || dy) && on(x + dx, y + dy);
      if (n == 2) inside.emplace_back(x, y);
    }
  }
  size_t stride = std::max<size_t>(1, inside.size() / kMaxSamples);
  const double reach = std::min(kMaxReach, 0.5 * std::max(skeleton.cols, skeleton.rows));
  std::vector<double> widths;
  for (size_t i = 0; i < inside.size(); i += stride) {
    cv::Point q = inside[i];
    // Principal axis of the nearby skeleton pixels: the stroke's direction.
    double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, n = 0;
    for (int dy = -3; dy <= 3; ++dy)
      for (int dx = -3; dx <= 3; ++dx) {
        int x = q.x + dx, y = q.y + dy;
        if (x < 0 || y < 0 || x >= skeleton.cols || y >= skeleton.rows || !skeleton.at<uchar>(y, x)) continue;
        sx += dx, sy += dy, sxx += dx * dx, sxy += dx * dy, syy += dy * dy, n += 1;
      }
    double cxx = sxx / n - sx * sx / (n * n), cxy = sxy / n - sx * sy / (n * n), cyy = syy / n - sy * sy / (n * n);
    double angle = 0.5 * std::atan2(2 * cxy, cxx - cyy);
    CrossSection cs = cross_section(coverage, {double(q.x), double(q.y)}, perp(from_angle(angle)), reach);
    if (cs.ok) widths.push_back(cs.width);
  }
  if (widths.empty()) return 0;
  const size_t at = std::min(widths.size() - 1, static_cast<size_t>(std::clamp(quantile, 0.0, 1.0) * widths.size()));
  std::nth_element(widths.begin(), widths.begin() + at, widths.end());
  return widths[at];
}

double median_of(std::vector<float>& v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + v.size() / 2;
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

double median_stroke_width(const cv::Mat& skeleton, const cv::Mat& coverage) {
  return stroke_width_quantile(skeleton, coverage, 0.5);
}

}  // namespace sv
