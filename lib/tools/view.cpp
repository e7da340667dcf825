#include "tools/view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "raster/png.hpp"

namespace sv {

namespace {

constexpr int kMargin = 44;       // room for labels on every edge
constexpr int kTitleH = 20;
constexpr int kShift = 4;         // sub-pixel bits for OpenCV drawing
constexpr double kSub = 1 << kShift;
constexpr double kFont = 0.38;
const int kFace = cv::FONT_HERSHEY_SIMPLEX;

cv::Point sub(cv::Point2d p) { return {static_cast<int>(std::lround(p.x * kSub)), static_cast<int>(std::lround(p.y * kSub))}; }

std::string coord_text(double v) { return fmt::format("{:g}", v); }

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

double grid_step_for(double scale, double min_view_px) {
  for (double decade = 1;; decade *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (m * decade * scale >= min_view_px) return m * decade;
}

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
  double w = std::max(1.0, area.width()), h = std::max(1.0, area.height());
  t_.scale = std::clamp(target_px / std::max(w, h), 0.05, 24.0);
  // The plot's edge is the area's edge: image coordinate x0 sits at view coordinate left - 0.5.
  t_.x0 = area.x0 + 0.5 / t_.scale;
  t_.y0 = area.y0 + 0.5 / t_.scale;
  t_.left = kMargin;
  t_.top = kMargin + kTitleH;
  plot_w_ = std::max(1, static_cast<int>(std::ceil(w * t_.scale)));
  plot_h_ = std::max(1, static_cast<int>(std::ceil(h * t_.scale)));
  step_ = grid_step_for(t_.scale);
  canvas_ = cv::Mat(t_.top + plot_h_ + kMargin, t_.left + plot_w_ + kMargin, CV_8UC3, cv::Scalar(255, 255, 255));
  draw_grid_lines();
}

void View::draw_grid_lines() {
  for (double v = std::ceil(area_.x0 / step_) * step_; v <= area_.x1; v += step_) {
    int u = static_cast<int>(std::lround(t_.to_view({v, 0}).x));
    cv::line(canvas_, {u, t_.top}, {u, t_.top + plot_h_ - 1}, color::grid, 1);
  }
  for (double v = std::ceil(area_.y0 / step_) * step_; v <= area_.y1; v += step_) {
    int y = static_cast<int>(std::lround(t_.to_view({0, v}).y));
    cv::line(canvas_, {t_.left, y}, {t_.left + plot_w_ - 1, y}, color::grid, 1);
  }
}

void View::underlay(const cv::Mat& gray, const cv::Scalar& ink_color) {
  if (gray.empty()) return;
  // Maps image pixel centres to view pixel centres: u = left + (x - x0) * scale.
  cv::Mat m = (cv::Mat_<double>(2, 3) << t_.scale, 0, t_.left - t_.x0 * t_.scale, 0, t_.scale, t_.top - t_.y0 * t_.scale);
  cv::Mat warped;
  cv::warpAffine(gray, warped, m, canvas_.size(), t_.scale >= 1 ? cv::INTER_NEAREST : cv::INTER_AREA,
                 cv::BORDER_CONSTANT, cv::Scalar(255));
  for (int y = t_.top; y < t_.top + plot_h_; ++y)
    for (int x = t_.left; x < t_.left + plot_w_; ++x) {
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
    for (Vec2 p : pl) pts.push_back(sub(t_.to_view(p)));
    cv::polylines(canvas_, pts, false, c, thickness, cv::LINE_AA, kShift);
    return;
  }
  // Dashes of 6 view pixels, gaps of 4, continuing across vertices.
  double phase = 0;
  for (size_t i = 1; i < pl.size(); ++i) {
    cv::Point2d a = t_.to_view(pl[i - 1]), b = t_.to_view(pl[i]);
    double len = std::hypot(b.x - a.x, b.y - a.y);
    for (double s = 0; s < len;) {
      double in = std::fmod(phase, 10.0), run = in < 6 ? 6 - in : 10 - in, e = std::min(len, s + run);
      if (in < 6) cv::line(canvas_, sub(a + (b - a) * (s / len)), sub(a + (b - a) * (e / len)), c, thickness, cv::LINE_AA, kShift);
      phase += e - s;
      s = e;
    }
  }
}

void View::shape(const Shape& s, const cv::Scalar& c, int thickness) {
  polyline(s.sample(std::max(0.25, 1.5 / t_.scale)), c, thickness);
}

void View::dot(Vec2 p, const cv::Scalar& c, int r, bool filled) {
  cv::circle(canvas_, sub(t_.to_view(p)), r * static_cast<int>(kSub), c, filled ? cv::FILLED : 1, cv::LINE_AA, kShift);
}

void View::ring(Vec2 p, double r, const cv::Scalar& c, int thickness) {
  cv::circle(canvas_, sub(t_.to_view(p)), static_cast<int>(r * kSub), c, thickness, cv::LINE_AA, kShift);
}

void View::box(const BBox& b, const cv::Scalar& c, int thickness) {
  if (b.empty()) return;
  cv::rectangle(canvas_, sub(t_.to_view({b.x0, b.y0})), sub(t_.to_view({b.x1, b.y1})), c, thickness, cv::LINE_AA, kShift);
}

void View::arrow(Vec2 from, Vec2 to, const cv::Scalar& c, int thickness) {
  cv::Point2d a = t_.to_view(from), b = t_.to_view(to);
  double len = std::hypot(b.x - a.x, b.y - a.y);
  if (len < 1) return;
  cv::arrowedLine(canvas_, sub(a), sub(b), c, thickness, cv::LINE_AA, kShift, std::min(0.9, 8.0 / len));
}

void View::text(Vec2 at, const std::string& s, const cv::Scalar& c, double dx, double dy) {
  cv::Point2d v = t_.to_view(at);
  halo_text(canvas_, s, {static_cast<int>(std::lround(v.x + dx)), static_cast<int>(std::lround(v.y + dy))}, c);
}

void View::label_shape(const Shape& s, const std::string& label, const cv::Scalar& c) {
  Vec2 mid = s.at(0.5);
  Vec2 tangent = unit(s.at(std::min(1.0, 0.5 + 1e-3)) - s.at(std::max(0.0, 0.5 - 1e-3)));
  Vec2 off = perp(tangent) * 9.0;
  int base = 0;
  cv::Size sz = cv::getTextSize(label, kFace, kFont, 1, &base);
  // Centre the text on a point 9 view pixels off the stroke.
  text(mid, label, c, off.x - sz.width / 2.0, off.y + sz.height / 2.0);
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
    cv::line(out, sub(anchor - inward), sub(anchor), color::ink, 1, cv::LINE_AA, kShift);
  };
  const double top = t_.top - 0.5, bottom = t_.top + plot_h_ - 0.5, left = t_.left - 0.5, right = t_.left + plot_w_ - 0.5;
  for (double v = std::ceil(area_.x0 / step_) * step_; v <= area_.x1; v += step_) {
    double u = std::round(t_.to_view({v, 0}).x);
    put(v, 'x', "top", {u, top});
    put(v, 'x', "bottom", {u, bottom});
  }
  for (double v = std::ceil(area_.y0 / step_) * step_; v <= area_.y1; v += step_) {
    double y = std::round(t_.to_view({0, v}).y);
    put(v, 'y', "left", {left, y});
    put(v, 'y', "right", {right, y});
  }
}

cv::Mat View::finish() {
  int legend_rows = legend_.empty() ? 0 : 1 + static_cast<int>(legend_.size()) / 4;
  int extra = 18 * (legend_rows + static_cast<int>(notes_.size()));
  cv::Mat out(canvas_.rows + extra, canvas_.cols, CV_8UC3, cv::Scalar(255, 255, 255));
  // Content is clipped to the plot: only the plot area is copied from the canvas.
  cv::Rect plot(t_.left, t_.top, plot_w_, plot_h_);
  canvas_(plot).copyTo(out(plot));
  cv::rectangle(out, {t_.left - 1, t_.top - 1}, {t_.left + plot_w_, t_.top + plot_h_}, color::faded, 1);
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

std::string encode_view_png(const cv::Mat& bgr) { return encode_png_rgb(bgr); }

}  // namespace sv
