#include "render/figure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "raster/scale.hpp"

namespace sv {

namespace {

constexpr double kSub = 1 << kDrawShift;
constexpr double kFont = 0.38;
const int kFace = cv::FONT_HERSHEY_SIMPLEX;

// "+ 0.0" turns a -0 (from ceil of a small negative) into 0.
std::string coord_text(double v) { return fmt::format("{:g}", v + 0.0); }

void halo_text(cv::Mat& img, const std::string& s, cv::Point org, const cv::Scalar& c, double scale = kFont) {
  cv::putText(img, s, org, kFace, scale, cv::Scalar(255, 255, 255), 3, cv::LINE_AA);
  cv::putText(img, s, org, kFace, scale, c, 1, cv::LINE_AA);
}

}  // namespace

namespace color {
cv::Scalar of_type(PrimType t) { return t == PrimType::line ? line : t == PrimType::arc ? arc : circle; }
cv::Scalar ramp(double t) {
  t = std::clamp(t, 0.0, 1.0);
  cv::Mat hsv(1, 1, CV_8UC3, cv::Scalar(static_cast<int>(120 * (1 - t)), 220, 210)), bgr;
  cv::cvtColor(hsv, bgr, cv::COLOR_HSV2BGR);
  auto v = bgr.at<cv::Vec3b>(0, 0);
  return {double(v[0]), double(v[1]), double(v[2])};
}
cv::Scalar of_role(const std::string& role) {
  static const std::vector<std::pair<std::string, cv::Scalar>> roles = {
      {"silhouette", {40, 40, 40}},      {"interior_feature", {200, 110, 30}}, {"connector", {30, 140, 240}},
      {"texture", {60, 170, 40}},        {"decoration", {160, 60, 170}},       {"frame", {120, 90, 60}},
      {"annotation", {40, 40, 220}},     {"unknown", {170, 170, 170}}};
  for (const auto& [name, c] : roles)
    if (name == role) return c;
  return {170, 170, 170};
}
}  // namespace color

BBox view_area(const Scene& s, const BBox& focus, double pad) {
  BBox img;
  if (s.source) {
    img.add({-0.5, -0.5});
    img.add({s.source->width - 0.5, s.source->height - 0.5});
  }
  if (focus.empty()) {
    if (!img.empty()) return img;
    BBox b;
    b.add({0, 0});
    b.add({100, 100});
    return b;
  }
  BBox b;
  b.add({focus.x0 - pad, focus.y0 - pad});
  b.add({focus.x1 + pad, focus.y1 + pad});
  if (!img.empty()) {
    b.x0 = std::max(b.x0, img.x0), b.y0 = std::max(b.y0, img.y0);
    b.x1 = std::min(b.x1, img.x1), b.y1 = std::min(b.y1, img.y1);
    if (b.empty()) return img;
  }
  return b;
}

View::View(BBox area, const std::string& title, int target_px) : area_(area), title_(title) {
  ViewOptions o;
  o.size_px = target_px;
  o.crop = cv::Rect2d(area.x0, area.y0, std::max(1.0, area.width()), std::max(1.0, area.height()));
  o.legend = false;
  t_ = view_transform(Scene{}, o);
  canvas_ = cv::Mat(t_.canvas, CV_8UC3, cv::Scalar(255, 255, 255));
  draw_grid_lines();
}

cv::Rect View::area_rect() const { return {t_.margin, t_.margin, t_.area.width, t_.area.height}; }

void View::draw_grid_lines() {
  const cv::Rect a = area_rect();
  const cv::Rect2d& r = t_.region;
  for (double v = std::ceil(r.x / t_.grid_step) * t_.grid_step; v <= r.x + r.width; v += t_.grid_step) {
    int u = static_cast<int>(std::lround(t_.to_view({v, 0}).x));
    cv::line(canvas_, {u, a.y}, {u, a.y + a.height - 1}, color::grid, 1);
  }
  for (double v = std::ceil(r.y / t_.grid_step) * t_.grid_step; v <= r.y + r.height; v += t_.grid_step) {
    int y = static_cast<int>(std::lround(t_.to_view({0, v}).y));
    cv::line(canvas_, {a.x, y}, {a.x + a.width - 1, y}, color::grid, 1);
  }
}

void View::underlay(const cv::Mat& gray, const cv::Scalar& ink_color) {
  if (gray.empty()) return;
  // Maps image coordinates to view coordinates exactly as ViewTransform::to_view does.
  const cv::Point2d o = t_.to_view({0, 0});
  const cv::Mat warped =
      scale_onto(gray, t_.scale, o, canvas_.size(), t_.scale >= 1 ? Sampling::nearest : Sampling::bilinear, 255);
  const cv::Rect a = area_rect();
  for (int y = a.y; y < a.y + a.height; ++y)
    for (int x = a.x; x < a.x + a.width; ++x) {
      double ink = (255 - warped.at<uchar>(y, x)) / 255.0;
      if (ink <= 0) continue;
      auto& px = canvas_.at<cv::Vec3b>(y, x);
      for (int k = 0; k < 3; ++k) px[k] = static_cast<uchar>(px[k] * (1 - ink) + ink_color[k] * ink);
    }
}

void View::polyline(const Polyline& pl, const cv::Scalar& c, int thickness, bool dashed) {
  if (pl.size() < 2) {
    if (pl.size() == 1) dot(pl[0], c, std::max(2, thickness));
    return;
  }
  if (!dashed) {
    std::vector<cv::Point> pts;
    for (Vec2 p : pl) pts.push_back(fixed_point(t_.to_view(p)));
    cv::polylines(canvas_, pts, false, c, thickness, cv::LINE_AA, kDrawShift);
    return;
  }
  // Dashes of 6 view pixels, gaps of 4, continuing across vertices.
  double phase = 0;
  for (size_t i = 1; i < pl.size(); ++i) {
    cv::Point2d a = t_.to_view(pl[i - 1]), b = t_.to_view(pl[i]);
    double len = std::hypot(b.x - a.x, b.y - a.y);
    for (double s = 0; s < len;) {
      double in = std::fmod(phase, 10.0), run = in < 6 ? 6 - in : 10 - in, e = std::min(len, s + run);
      if (in < 6) cv::line(canvas_, fixed_point(a + (b - a) * (s / len)), fixed_point(a + (b - a) * (e / len)), c, thickness, cv::LINE_AA, kDrawShift);
      phase += e - s;
      s = e;
    }
  }
}

void View::shape(const Shape& s, const cv::Scalar& c, int thickness) {
  polyline(s.sample(std::max(0.25, 1.5 / t_.scale)), c, thickness);
}

void View::dot(Vec2 p, const cv::Scalar& c, int r, bool filled) {
  cv::circle(canvas_, fixed_point(t_.to_view(p)), r * static_cast<int>(kSub), c, filled ? cv::FILLED : 1, cv::LINE_AA, kDrawShift);
}

void View::ring(Vec2 p, double r, const cv::Scalar& c, int thickness) {
  cv::circle(canvas_, fixed_point(t_.to_view(p)), static_cast<int>(r * kSub), c, thickness, cv::LINE_AA, kDrawShift);
}

void View::box(const BBox& b, const cv::Scalar& c, int thickness) {
  if (b.empty()) return;
  cv::rectangle(canvas_, fixed_point(t_.to_view({b.x0, b.y0})), fixed_point(t_.to_view({b.x1, b.y1})), c, thickness, cv::LINE_AA, kDrawShift);
}

void View::arrow(Vec2 from, Vec2 to, const cv::Scalar& c, int thickness) {
  cv::Point2d a = t_.to_view(from), b = t_.to_view(to);
  double len = std::hypot(b.x - a.x, b.y - a.y);
  if (len < 1) return;
  cv::arrowedLine(canvas_, fixed_point(a), fixed_point(b), c, thickness, cv::LINE_AA, kDrawShift, std::min(0.9, 8.0 / len));
}

void View::text(Vec2 at, const std::string& s, const cv::Scalar& c, double dx, double dy) {
  cv::Point2d v = t_.to_view(at);
  halo_text(canvas_, s, {static_cast<int>(std::lround(v.x + dx)), static_cast<int>(std::lround(v.y + dy))}, c);
}

void View::label_shape(const Shape& s, const std::string& label, const cv::Scalar& c) {
  for (const ShapeLabel& l : shape_labels_)
    if (l.text == label) return;
  shape_labels_.push_back({s, label, c});
}

void View::draw_labels(cv::Mat& out) {
  labels_.clear();
  int base = 0;
  auto put = [&](double value, char axis, const std::string& edge, cv::Point2d anchor) {
    std::string s = coord_text(value);
    cv::Size sz = cv::getTextSize(s, kFace, kFont, 1, &base);
    cv::Point org;
    if (edge == "top") org = {static_cast<int>(std::lround(anchor.x - sz.width / 2.0)), static_cast<int>(anchor.y) - 6};
    if (edge == "bottom") org = {static_cast<int>(std::lround(anchor.x - sz.width / 2.0)), static_cast<int>(anchor.y) + 6 + sz.height};
    if (edge == "left") org = {static_cast<int>(anchor.x) - 6 - sz.width, static_cast<int>(std::lround(anchor.y + sz.height / 2.0))};
    if (edge == "right") org = {static_cast<int>(anchor.x) + 6, static_cast<int>(std::lround(anchor.y + sz.height / 2.0))};
    cv::putText(out, s, org, kFace, kFont, color::ink, 1, cv::LINE_AA);
    labels_.push_back({value, axis, edge, anchor, cv::Rect(org.x, org.y - sz.height, sz.width, sz.height + base)});
    // A tick joins the label to its line.
    cv::Point2d inward = edge == "top" ? cv::Point2d(0, 4) : edge == "bottom" ? cv::Point2d(0, -4)
                       : edge == "left" ? cv::Point2d(4, 0) : cv::Point2d(-4, 0);
    cv::line(out, fixed_point(anchor - inward), fixed_point(anchor), color::ink, 1, cv::LINE_AA, kDrawShift);
  };
  const cv::Rect a = area_rect();
  const cv::Rect2d& r = t_.region;
  const double top = a.y - 0.5, bottom = a.y + a.height - 0.5, left = a.x - 0.5, right = a.x + a.width - 0.5;
  for (double v = std::ceil(r.x / t_.grid_step) * t_.grid_step; v <= r.x + r.width; v += t_.grid_step) {
    double u = std::round(t_.to_view({v, 0}).x);
    put(v, 'x', "top", {u, top});
    put(v, 'x', "bottom", {u, bottom});
  }
  for (double v = std::ceil(r.y / t_.grid_step) * t_.grid_step; v <= r.y + r.height; v += t_.grid_step) {
    double y = std::round(t_.to_view({0, v}).y);
    put(v, 'y', "left", {left, y});
    put(v, 'y', "right", {right, y});
  }
}

cv::Mat View::finish() {
  left_out_ = place_labels(canvas_, area_rect(), t_, kFont, shape_labels_);
  if (left_out_) {
    labels_note_ = labels_left_out_note(left_out_, shape_labels_.size());
    note(labels_note_);
  }
  int legend_rows = legend_.empty() ? 0 : 1 + static_cast<int>(legend_.size()) / 4;
  int extra = 18 * (legend_rows + static_cast<int>(notes_.size()));
  cv::Mat out(canvas_.rows + extra, canvas_.cols, CV_8UC3, cv::Scalar(255, 255, 255));
  // Content is clipped to the drawing area: only that part of the canvas is copied.
  const cv::Rect plot = area_rect();
  canvas_(plot).copyTo(out(plot));
  cv::rectangle(out, {plot.x - 1, plot.y - 1}, {plot.x + plot.width, plot.y + plot.height}, color::faded, 1);
  draw_labels(out);
  halo_text(out, title_, {6, 15}, color::ink, 0.45);
  int y = canvas_.rows + 4;
  for (size_t i = 0; i < legend_.size(); ++i) {
    int col = static_cast<int>(i % 4), row = static_cast<int>(i / 4);
    int x = 8 + col * std::max(120, (out.cols - 16) / 4), yy = y + row * 18;
    cv::rectangle(out, {x, yy}, {x + 12, yy + 10}, legend_[i].color, cv::FILLED);
    cv::putText(out, legend_[i].label, {x + 16, yy + 10}, kFace, kFont, color::ink, 1, cv::LINE_AA);
  }
  y += 18 * legend_rows;
  for (const auto& n : notes_) {
    cv::putText(out, n, {8, y + 12}, kFace, kFont, color::ink, 1, cv::LINE_AA);
    y += 18;
  }
  return out;
}

cv::Mat sheet(const std::vector<cv::Mat>& tiles) {
  const size_t n = std::min<size_t>(tiles.size(), 9);
  if (n == 0) return {};
  const int cols = static_cast<int>(std::min<size_t>(n, 3)), rows = static_cast<int>((n + 2) / 3), gap = 8;
  int w = 0, h = 0;
  for (size_t i = 0; i < n; ++i) w = std::max(w, tiles[i].cols), h = std::max(h, tiles[i].rows);
  cv::Mat out(rows * h + (rows + 1) * gap, cols * w + (cols + 1) * gap, CV_8UC3, cv::Scalar(255, 255, 255));
  for (size_t i = 0; i < n; ++i) {
    int c = static_cast<int>(i % 3), r = static_cast<int>(i / 3);
    tiles[i].copyTo(out(cv::Rect(gap + c * (w + gap), gap + r * (h + gap), tiles[i].cols, tiles[i].rows)));
  }
  return out;
}

}  // namespace sv
