// Figures: the pictures the tools show, composed on the renderer's labelled grid (render/view.hpp,
// DESIGN §6): the same transform, grid step and label placement as sv-simulate's view, with what
// the tools add — a title, marks and ids over any content, crops, colour legends and notes — and
// `sheet`, which lays up to nine views out as labelled tiles.
#pragma once
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "core/scene.hpp"
#include "render/labels.hpp"
#include "render/view.hpp"

namespace sv {

struct GridLabel {
  double value = 0;    // image coordinate the label names
  char axis = 'x';     // 'x' labels vertical lines, 'y' horizontal ones
  std::string edge;    // top, bottom, left, right
  cv::Point2d anchor;  // view point where the labelled grid line meets the drawing area's edge
  cv::Rect box;        // where the text was drawn
};

struct LegendEntry {
  std::string label;
  cv::Scalar color;
};

// Colours (BGR) shared by the views.
namespace color {
const cv::Scalar ink{40, 40, 40}, faded{190, 190, 190}, grid{228, 228, 228}, source{205, 205, 205};
const cv::Scalar missed{40, 40, 220} /* red */, spurious{60, 170, 40} /* green */, highlight{20, 120, 240};
const cv::Scalar line{200, 110, 30}, arc{30, 140, 240}, circle{160, 60, 170}, pen_up{150, 150, 150};
cv::Scalar of_type(PrimType t);
cv::Scalar ramp(double t);  // 0 -> blue ... 1 -> red
cv::Scalar of_role(const std::string& role);
}  // namespace color

class View {
 public:
  // Shows the image-space box `area`, scaled so its longer side is about `target_px`.
  View(BBox area, const std::string& title, int target_px = 720);

  const ViewTransform& transform() const { return t_; }
  double grid_step() const { return t_.grid_step; }
  const std::vector<GridLabel>& labels() const { return labels_; }
  // The ids asked for, and after finish() where each was drawn or that it was left out.
  const std::vector<ShapeLabel>& shape_labels() const { return shape_labels_; }
  size_t shape_labels_left_out() const { return left_out_; }
  // What the picture notes about ids left out (empty when none), for a tool's warnings too.
  const std::string& labels_note() const { return labels_note_; }

  // The source raster (8-bit gray, image pixels) under everything else, its ink in `ink`.
  void underlay(const cv::Mat& gray, const cv::Scalar& ink = color::source);
  void polyline(const Polyline& pl, const cv::Scalar& c, int thickness = 2, bool dashed = false);
  void shape(const Shape& s, const cv::Scalar& c, int thickness = 2);
  void dot(Vec2 p, const cv::Scalar& c, int radius_view_px = 3, bool filled = true);
  void ring(Vec2 p, double radius_view_px, const cv::Scalar& c, int thickness = 2);
  void box(const BBox& b, const cv::Scalar& c, int thickness = 1);
  void arrow(Vec2 from, Vec2 to, const cv::Scalar& c, int thickness = 1);
  // Text beside an image point, offset by (dx, dy) view pixels, with a white halo.
  void text(Vec2 at, const std::string& s, const cv::Scalar& c, double dx = 5, double dy = -5);
  // An id beside a shape, placed when the view is finished (render/labels.hpp) where it overlaps
  // no other id; one that fits nowhere is left out and a note says how many. An id is written
  // once per view.
  void label_shape(const Shape& s, const std::string& label, const cv::Scalar& c);
  void legend(const std::vector<LegendEntry>& entries) { legend_ = entries; }
  void note(const std::string& s) { notes_.push_back(s); }

  // Grid labels, title, notes and legend in the margins; the finished picture.
  cv::Mat finish();

 private:
  cv::Rect area_rect() const;  // the drawing area inside the margins
  void draw_grid_lines();
  void draw_labels(cv::Mat& out);
  BBox area_;
  std::string title_;
  ViewTransform t_;
  cv::Mat canvas_;
  std::vector<GridLabel> labels_;
  std::vector<ShapeLabel> shape_labels_;
  size_t left_out_ = 0;
  std::string labels_note_;
  std::vector<LegendEntry> legend_;
  std::vector<std::string> notes_;
};

// The box to show: the whole image, or `focus` padded by `pad` px and clipped to the image.
BBox view_area(const Scene& s, const BBox& focus, double pad);

// Up to nine pictures as one sheet of tiles, three to a row, in order.
cv::Mat sheet(const std::vector<cv::Mat>& tiles);

}  // namespace sv
