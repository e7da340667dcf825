#include "render/labels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <opencv2/imgproc.hpp>

namespace sv {

namespace {

const int kLabelFace = cv::FONT_HERSHEY_SIMPLEX;
// View pixels between a stroke's centre line and the nearest edge of its label: clear of a
// 3-pixel stroke and its anti-aliasing, close enough that the label reads as the stroke's.
constexpr double kLabelGap = 4;
// Darker than the grid lines (228 and 215) and the faint source under a figure (205): ink.
constexpr int kInkBelow = 200;

// The distance from `p` to the box of half-size (hw, hh) centred on `c`.
double box_distance(cv::Point2d p, cv::Point2d c, double hw, double hh) {
  return std::hypot(std::max(std::abs(p.x - c.x) - hw, 0.0), std::max(std::abs(p.y - c.y) - hh, 0.0));
}

// The centre of a box (half-size hw, hh) on the `d` side of the line through `v` across d,
// kLabelGap clear of it, and slid along that line as little as brings it within a pixel of
// kLabelGap from `v` itself: centred off a level stroke, corner-first off a slanted one, so
// a wide label beside a short diagonal stroke stays by it.
cv::Point2d beside(cv::Point2d v, Vec2 d, double hw, double hh) {
  const cv::Point2d n(d.x, d.y), along(-d.y, d.x);
  const cv::Point2d centred = v + n * (kLabelGap + hw * std::abs(d.x) + hh * std::abs(d.y));
  const cv::Point2d corner = v + n * kLabelGap + cv::Point2d(d.x < 0 ? -hw : hw, d.y < 0 ? -hh : hh);
  auto at = [&](double s) { return centred + along * s; };
  double lo = 0, hi = along.dot(corner - centred);
  if (box_distance(v, at(lo), hw, hh) <= kLabelGap + 1) return at(lo);
  // The distance falls monotonically from the centred spot to the corner one.
  for (int k = 0; k < 20; ++k) {
    const double mid = (lo + hi) / 2;
    (box_distance(v, at(mid), hw, hh) <= kLabelGap + 1 ? hi : lo) = mid;
  }
  return at(hi);
}

// The spots a label is tried at, best first: beside the middle on either side, beside the
// quarter and eighth points, then past either end along the stroke.
std::vector<cv::Point2d> label_spots(const Shape& s, const ViewTransform& t, cv::Size box) {
  const double hw = box.width / 2.0, hh = box.height / 2.0;
  std::vector<cv::Point2d> out;
  for (double f : {0.5, 0.25, 0.75, 0.125, 0.375, 0.625, 0.875}) {
    const Vec2 n = perp(unit(s.at(std::min(1.0, f + 1e-3)) - s.at(std::max(0.0, f - 1e-3))));
    out.push_back(beside(t.to_view(s.at(f)), n, hw, hh));
    out.push_back(beside(t.to_view(s.at(f)), -n, hw, hh));
  }
  if (s.type != PrimType::circle) {
    out.push_back(beside(t.to_view(s.end()), s.end_tangent(), hw, hh));
    out.push_back(beside(t.to_view(s.start()), -s.start_tangent(), hw, hh));
  }
  return out;
}

}  // namespace

size_t place_labels(cv::Mat& canvas, const cv::Rect& area, const ViewTransform& t, double font_scale,
                    std::vector<ShapeLabel>& labels) {
  if (labels.empty()) return 0;
  // Ink per pixel of the area, summed for constant-time counts over any box.
  cv::Mat channels[3], ink, ink_sum;
  cv::split(canvas(area), channels);
  cv::min(channels[0], channels[1], ink);
  cv::min(ink, channels[2], ink);
  cv::threshold(ink, ink, kInkBelow - 1, 1, cv::THRESH_BINARY_INV);
  cv::integral(ink, ink_sum, CV_32S);
  auto ink_in = [&](const cv::Rect& r) {
    return ink_sum.at<int>(r.y + r.height, r.x + r.width) - ink_sum.at<int>(r.y, r.x + r.width) -
           ink_sum.at<int>(r.y + r.height, r.x) + ink_sum.at<int>(r.y, r.x);
  };
  cv::Mat taken(area.size(), CV_8UC1, cv::Scalar(0));

  std::vector<size_t> order(labels.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const double la = labels[a].shape.length(), lb = labels[b].shape.length();
    return la != lb ? la > lb : labels[a].text < labels[b].text;
  });
  size_t left_out = 0;
  for (size_t i : order) {
    ShapeLabel& l = labels[i];
    int base = 0;
    // Measured at the halo's thickness, widened by the pixel the halo reaches past the glyphs.
    const cv::Size text = cv::getTextSize(l.text, kLabelFace, font_scale, 3, &base);
    const cv::Size size(text.width + 2, text.height + base + 2);
    int best_ink = -1;
    for (const cv::Point2d c : label_spots(l.shape, t, size)) {
      const cv::Rect box(static_cast<int>(std::lround(c.x - size.width / 2.0)),
                         static_cast<int>(std::lround(c.y - size.height / 2.0)), size.width, size.height);
      if ((box & area) != box) continue;
      const cv::Rect local = box - area.tl();
      if (cv::countNonZero(taken(local)) > 0) continue;
      // The first spot clear of ink; failing that, the one over the least.
      const int k = ink_in(local);
      if (best_ink < 0 || k < best_ink) best_ink = k, l.box = box;
      if (k == 0) break;
    }
    l.drawn = best_ink >= 0;
    if (!l.drawn) {
      ++left_out;
      continue;
    }
    taken(l.box - area.tl()).setTo(1);
    const cv::Point org(l.box.x + 1, l.box.y + 1 + text.height);
    cv::putText(canvas, l.text, org, kLabelFace, font_scale, cv::Scalar(255, 255, 255), 3, cv::LINE_AA);
    cv::putText(canvas, l.text, org, kLabelFace, font_scale, l.color, 1, cv::LINE_AA);
  }
  return left_out;
}

std::string labels_left_out_note(size_t left_out, size_t of) {
  return fmt::format("{} of {} ids left out where they would overlap; zoom in with a region", left_out, of);
}

}  // namespace sv
