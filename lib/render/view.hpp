// Views for people: what the robot draws, on the labelled grid of DESIGN §6, as a raster
// (OpenCV); the SVG export (export/export.hpp) draws the same pieces.
//
// A view shows a region of the image (the whole image by default) scaled to fit size_px,
// inside a white margin. Grid lines sit at a round step of image pixels (1, 2, 5 x 10^k: the
// one whose lines fall closest to 100 view pixels apart) and every line is labelled with its
// coordinate on all four edges, so a number read off the picture is an image coordinate.
#pragma once
#include <opencv2/core.hpp>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/scene.hpp"

namespace sv {

// Fractional bits of the points given to OpenCV's drawing: positions in 1/16 view pixel.
constexpr int kDrawShift = 4;

// A view position as such a point.
inline cv::Point fixed_point(cv::Point2d p) {
  return {static_cast<int>(std::lround(p.x * (1 << kDrawShift))), static_cast<int>(std::lround(p.y * (1 << kDrawShift)))};
}

enum class ColorBy { none, primitive_type, draw_order };

struct ViewOptions {
  int size_px = 1000;              // longer side of the drawing area, view pixels
  std::optional<cv::Rect2d> crop;  // region shown, image pixels; default the whole image
  ColorBy color_by = ColorBy::primitive_type;
  bool pen_up = false;  // pen-up travel, dashed
  bool ids = false;     // primitive ids beside the primitives
  cv::Mat source;       // 8-bit gray (or BGR) source image, drawn faintly underneath when given
  double pen_px = 2;    // width of the drawn lines, view pixels
  bool legend = true;
};

// Image pixel coordinates (pixel centres at integers) <-> view pixels.
struct ViewTransform {
  cv::Rect2d region;  // the image area shown
  double scale = 1;   // view pixels per image pixel
  int margin = 48;    // white border holding the grid labels
  double grid_step = 100;
  cv::Size area;    // drawing area, view pixels
  cv::Size canvas;  // whole view
  cv::Point2d to_view(Vec2 p) const;
  Vec2 to_image(cv::Point2d v) const;
};

// The round step (1, 2, 5 x 10^k image pixels) whose grid lines are closest to 100 view
// pixels apart at `scale` view pixels per image pixel.
double grid_step_for(double scale);
ViewTransform view_transform(const Scene& scene, const ViewOptions& options);

// Draws what the robot draws (the replayed commands; the primitives themselves when the
// scene has no commands yet), anti-aliased, on the labelled grid, with a colour legend; ids
// go where they overlap no other (render/labels.hpp), and a line under the legend says how
// many were left out, when any were.
cv::Mat render_view(const Scene& scene, const ViewOptions& options);

// One move of the robot (or, before routing, one primitive) in image coordinates.
struct DrawnPiece {
  Polyline path;
  bool pen_down = true;
  bool starts_stroke = false;  // primitives before routing are strokes of their own
  std::string primitive;       // ids, ','-joined when a command draws several
  size_t command = 0;          // the command that draws it (when drawn from commands)
  double degrees = 0;          // arcs: signed sweep; 0 for straight pieces
  Vec2 center;                 // arcs
  double radius = 0;
};

// What a view draws: the replayed commands (sampled every step_px), or the primitives
// themselves when the scene has no commands yet; more coarsely when that would be more than
// kMaxViewSamples (a view of a thousand pixels a side shows fewer; a view of a million
// segments takes under a second).
constexpr double kMaxViewSamples = 1 << 20;
std::vector<DrawnPiece> drawn_pieces(const Scene& s, double step_px);


}  // namespace sv
