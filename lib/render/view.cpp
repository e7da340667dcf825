#include "render/view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <opencv2/imgproc.hpp>

#include "render/labels.hpp"
#include "robot/replay.hpp"
#include "raster/scale.hpp"
#include "raster/threads.hpp"

namespace sv {

std::vector<DrawnPiece> drawn_pieces(const Scene& s, double step_px) {
  std::vector<DrawnPiece> out;
  if (s.commands && s.robot) {
    for (const Move& m : replay_moves(*s.commands, s.robot->start, step_px, kMaxViewSamples)) {
      if (m.kind == Command::Kind::spin) continue;
      const Command& c = (*s.commands)[m.command];
      DrawnPiece p;
      p.path = m.path;
      p.pen_down = m.pen_down;
      p.primitive = c.primitive;
      p.command = m.command;
      if (m.kind == Command::Kind::arc) {
        p.degrees = c.degrees;
        p.radius = c.radius;
        p.center = Vec2{m.start.x, m.start.y} + from_angle(deg2rad(m.start.heading_deg + (c.degrees > 0 ? 90 : -90))) * c.radius;
      }
      out.push_back(std::move(p));
    }
  } else if (s.primitives) {
    double length = 0;
    for (const Primitive& q : *s.primitives) length += q.shape.length();
    step_px = std::max(step_px, length / kMaxViewSamples);
    for (const Primitive& q : *s.primitives) {
      DrawnPiece p;
      p.path = q.shape.sample(step_px);
      p.starts_stroke = true;
      p.primitive = q.id;
      if (q.shape.type != PrimType::line && std::isfinite(q.shape.radius)) {
        p.degrees = rad2deg(q.shape.sweep_rad());
        p.center = q.shape.center;
        p.radius = q.shape.radius;
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

namespace {

constexpr double kFontScale = 0.4;
const cv::Scalar kDrawn(40, 40, 40), kGrid(215, 215, 215), kTravel(150, 150, 150);

std::map<std::string, PrimType> types_of(const Scene& s) {
  std::map<std::string, PrimType> t;
  if (s.primitives)
    for (const Primitive& p : *s.primitives) t[p.id] = p.shape.type;
  return t;
}

std::string first_id(const std::string& ids) { return ids.substr(0, ids.find(',')); }

cv::Scalar type_color(PrimType t) {
  switch (t) {
    case PrimType::line: return {200, 90, 0};
    case PrimType::arc: return {0, 130, 255};
    case PrimType::circle: return {170, 0, 200};
  }
  return kDrawn;
}

// Colour of the k-th of n drawn pieces on a perceptual ramp (first blue, last red).
cv::Scalar order_color(size_t k, size_t n) {
  static const cv::Mat ramp = [] {
    cv::Mat gray(1, 256, CV_8UC1), bgr;
    for (int i = 0; i < 256; ++i) gray.at<uint8_t>(0, i) = static_cast<uint8_t>(i);
    cv::applyColorMap(gray, bgr, cv::COLORMAP_TURBO);
    return bgr;
  }();
  int i = n > 1 ? static_cast<int>(std::lround(25 + 205.0 * k / (n - 1))) : 25;
  cv::Vec3b c = ramp.at<cv::Vec3b>(0, i);
  return {double(c[0]), double(c[1]), double(c[2])};
}

// Dashes of 6 view pixels, gaps of 4, continuing across vertices (pen-up travel may be an arc).
void dashed(cv::Mat& img, const std::vector<cv::Point2d>& path, const cv::Scalar& color) {
  double phase = 0;
  for (size_t i = 1; i < path.size(); ++i) {
    cv::Point2d a = path[i - 1], b = path[i];
    double len = std::hypot(b.x - a.x, b.y - a.y);
    for (double s = 0; s < len;) {
      double in = std::fmod(phase, 10.0), run = in < 6 ? 6 - in : 10 - in, e = std::min(len, s + run);
      if (in < 6)
        cv::line(img, fixed_point(a + (b - a) * (s / len)), fixed_point(a + (b - a) * (e / len)), color, 1, cv::LINE_AA,
                 kDrawShift);
      phase += e - s;
      s = e;
    }
  }
}

void text(cv::Mat& img, const std::string& s, cv::Point org, const cv::Scalar& color = kDrawn) {
  cv::putText(img, s, org, cv::FONT_HERSHEY_SIMPLEX, kFontScale, color, 1, cv::LINE_AA);
}

cv::Size text_size(const std::string& s) {
  int base = 0;
  return cv::getTextSize(s, cv::FONT_HERSHEY_SIMPLEX, kFontScale, 1, &base);
}

std::string label(double v) { return fmt::format("{}", static_cast<long>(std::lround(v))); }

// Labels every grid line on all four edges of the drawing area.
void draw_grid(cv::Mat& canvas, cv::Mat& area, const ViewTransform& t) {
  const cv::Rect2d& r = t.region;
  int m = t.margin;
  for (double x = std::ceil(r.x / t.grid_step) * t.grid_step; x <= r.x + r.width; x += t.grid_step) {
    int u = static_cast<int>(std::lround(t.to_view({x, 0}).x));
    cv::line(area, {u - m, 0}, {u - m, area.rows - 1}, kGrid, 1);
    std::string s = label(x);
    cv::Size sz = text_size(s);
    text(canvas, s, {u - sz.width / 2, m - 8});
    text(canvas, s, {u - sz.width / 2, m + area.rows + 8 + sz.height});
  }
  for (double y = std::ceil(r.y / t.grid_step) * t.grid_step; y <= r.y + r.height; y += t.grid_step) {
    int v = static_cast<int>(std::lround(t.to_view({0, y}).y));
    cv::line(area, {0, v - m}, {area.cols - 1, v - m}, kGrid, 1);
    std::string s = label(y);
    cv::Size sz = text_size(s);
    text(canvas, s, {m - 6 - sz.width, v + sz.height / 2});
    text(canvas, s, {m + area.cols + 6, v + sz.height / 2});
  }
}

void draw_source(cv::Mat& area, const cv::Mat& source, const ViewTransform& t) {
  cv::Mat gray = source;
  if (source.channels() == 3) cv::cvtColor(source, gray, cv::COLOR_BGR2GRAY);
  cv::Mat under = scale_onto(gray, t.scale, {-t.region.x * t.scale, -t.region.y * t.scale}, area.size(),
                             Sampling::bilinear, 255);
  under.convertTo(under, CV_8UC1, 0.3, 255 * 0.7);  // faint: 30 % of the ink's darkness
  cv::cvtColor(under, area, cv::COLOR_GRAY2BGR);
}

constexpr int kLegendH = 30, kNoteH = 20;

int draw_legend(cv::Mat* canvas, int y, const ViewOptions& o, const Scene& s) {
  int x = 10;
  auto swatch = [&](const cv::Scalar& c, const std::string& name) {
    if (canvas) cv::line(*canvas, {x, y}, {x + 20, y}, c, 3, cv::LINE_AA);
    if (canvas) text(*canvas, name, {x + 26, y + 4});
    x += 26 + text_size(name).width + 16;
  };
  if (o.color_by == ColorBy::primitive_type) {
    std::map<PrimType, int> n;
    if (s.primitives)
      for (const Primitive& p : *s.primitives) ++n[p.shape.type];
    for (PrimType t : {PrimType::line, PrimType::arc, PrimType::circle})
      swatch(type_color(t), fmt::format("{} {}", prim_type_name(t), n[t]));
  } else if (o.color_by == ColorBy::draw_order) {
    if (canvas) text(*canvas, "first", {x, y + 4});
    x += text_size("first").width + 6;
    for (int k = 0; k < 100; ++k)
      if (canvas) cv::line(*canvas, {x + k, y - 4}, {x + k, y + 4}, order_color(k, 100), 1);
    x += 106;
    if (canvas) text(*canvas, "last", {x, y + 4});
    x += text_size("last").width + 16;
  } else {
    swatch(kDrawn, "drawn");
  }
  if (o.pen_up) {
    if (canvas) dashed(*canvas, {cv::Point2d(x, y), cv::Point2d(x + 20, y)}, kTravel);
    if (canvas) text(*canvas, "pen-up travel", {x + 26, y + 4});
    x += 26 + text_size("pen-up travel").width + 16;
  }
  std::string g = "grid: image pixels";
  if (canvas) text(*canvas, g, {x, y + 4});
  return x + text_size(g).width + 10;
}

}  // namespace

cv::Point2d ViewTransform::to_view(Vec2 p) const {
  return {margin + (p.x - region.x) * scale, margin + (p.y - region.y) * scale};
}

Vec2 ViewTransform::to_image(cv::Point2d v) const {
  return {region.x + (v.x - margin) / scale, region.y + (v.y - margin) / scale};
}

double grid_step_for(double scale) {
  double best = 1, best_err = INFINITY;
  for (double decade = 1; decade <= 1e6; decade *= 10)
    for (double m : {1.0, 2.0, 5.0}) {
      double err = std::abs(std::log(m * decade * scale / 100));
      if (err <= best_err) {
        best_err = err;
        best = m * decade;
      }
    }
  return best;
}

ViewTransform view_transform(const Scene& scene, const ViewOptions& o) {
  ViewTransform t;
  if (o.crop && o.crop->width > 0 && o.crop->height > 0) {
    t.region = *o.crop;
  } else if (scene.source && scene.source->width > 0 && scene.source->height > 0) {
    // Pixel centres are at integers, so the image covers [-0.5, W - 0.5].
    t.region = {-0.5, -0.5, double(scene.source->width), double(scene.source->height)};
  } else {
    BBox box;
    for (const DrawnPiece& p : drawn_pieces(scene, 1.0))
      for (Vec2 q : p.path) box.add(q);
    if (box.empty()) box = {-0.5, -0.5, 99.5, 99.5};
    double pad = std::max(10.0, 0.05 * std::max(box.width(), box.height()));
    t.region = {box.x0 - pad, box.y0 - pad, box.width() + 2 * pad, box.height() + 2 * pad};
  }
  t.scale = o.size_px / std::max(t.region.width, t.region.height);
  t.grid_step = grid_step_for(t.scale);
  t.area = {static_cast<int>(std::lround(t.region.width * t.scale)),
            static_cast<int>(std::lround(t.region.height * t.scale))};
  int legend_w = o.legend ? draw_legend(nullptr, 0, o, scene) : 0;
  t.canvas = {std::max(t.area.width + 2 * t.margin, legend_w),
              t.area.height + 2 * t.margin + (o.legend ? kLegendH : 0)};
  return t;
}

cv::Mat render_view(const Scene& scene, const ViewOptions& o) {
  ViewTransform t = view_transform(scene, o);
  raster_threads_for(t.canvas.area());
  cv::Mat canvas(t.canvas, CV_8UC3, cv::Scalar(255, 255, 255));
  cv::Mat area = canvas(cv::Rect(t.margin, t.margin, t.area.width, t.area.height));
  if (!o.source.empty()) draw_source(area, o.source, t);
  draw_grid(canvas, area, t);

  // Coordinates relative to the drawing area, so OpenCV clips at its edge.
  auto local = [&](Vec2 p) { return t.to_view(p) - cv::Point2d(t.margin, t.margin); };
  std::vector<DrawnPiece> pieces = drawn_pieces(scene, 1.0 / t.scale);
  if (o.pen_up)
    for (const DrawnPiece& p : pieces)
      if (!p.pen_down) {
        std::vector<cv::Point2d> path;
        for (Vec2 q : p.path) path.push_back(local(q));
        dashed(area, path, kTravel);
      }
  auto types = types_of(scene);
  size_t drawn = 0, n_drawn = 0;
  for (const DrawnPiece& p : pieces) n_drawn += p.pen_down;
  int thickness = std::max(1, static_cast<int>(std::lround(o.pen_px)));
  for (const DrawnPiece& p : pieces) {
    if (!p.pen_down) continue;
    cv::Scalar color = kDrawn;
    auto it = types.find(first_id(p.primitive));
    if (o.color_by == ColorBy::primitive_type && it != types.end()) color = type_color(it->second);
    if (o.color_by == ColorBy::draw_order) color = order_color(drawn, n_drawn);
    ++drawn;
    std::vector<cv::Point> pts;
    for (Vec2 q : p.path) pts.push_back(fixed_point(local(q)));
    if (pts.size() == 1) pts.push_back(pts[0]);
    cv::polylines(area, std::vector<std::vector<cv::Point>>{pts}, false, color, thickness, cv::LINE_AA, kDrawShift);
  }
  std::vector<ShapeLabel> labels;
  if (o.ids && scene.primitives)
    for (const Primitive& p : *scene.primitives) labels.push_back({p.shape, p.id, {90, 90, 90}});
  const size_t left_out =
      place_labels(canvas, cv::Rect(t.margin, t.margin, t.area.width, t.area.height), t, kFontScale, labels);
  cv::rectangle(canvas, cv::Rect(t.margin - 1, t.margin - 1, t.area.width + 2, t.area.height + 2), kGrid, 1);
  if (o.legend) draw_legend(&canvas, t.margin * 2 + t.area.height + kLegendH / 2 - 4, o, scene);
  if (!left_out) return canvas;
  // Ids left out are said in a line of its own under the picture.
  cv::Mat out(canvas.rows + kNoteH, canvas.cols, CV_8UC3, cv::Scalar(255, 255, 255));
  canvas.copyTo(out(cv::Rect(0, 0, canvas.cols, canvas.rows)));
  text(out, labels_left_out_note(left_out, labels.size()), {10, canvas.rows + kNoteH - 8});
  return out;
}

}  // namespace sv
