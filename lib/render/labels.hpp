// Ids beside shapes that stay readable on a dense drawing: each label is tried at points around
// its shape and takes the first spot that overlaps no label placed before it, preferring one
// clear of ink; a label that fits nowhere is left out, and its caller says so.
#pragma once
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "core/geometry.hpp"
#include "render/view.hpp"

namespace sv {

struct ShapeLabel {
  Shape shape;  // image pixels
  std::string text;
  cv::Scalar color;
  bool drawn = false;
  cv::Rect box;  // view pixels, white halo included; set when drawn
};

// Places `labels` on `canvas` (a view drawn with `t`) inside `area`, longest shape first (then
// by text, then in the order given), so the same picture always gets the same labels; writes
// the ones that fit, in FONT_HERSHEY_SIMPLEX at `font_scale` with a white halo. Ink is whatever
// is darker than the grid lines already on the canvas. Returns how many were left out.
size_t place_labels(cv::Mat& canvas, const cv::Rect& area, const ViewTransform& t, double font_scale,
                    std::vector<ShapeLabel>& labels);

// What a view with labels left out says under the picture (and a tool in its warnings).
std::string labels_left_out_note(size_t left_out, size_t of);

}  // namespace sv
