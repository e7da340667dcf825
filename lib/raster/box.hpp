// Rectangles of raster work.
#pragma once
#include <opencv2/core.hpp>

namespace sv {

// r grown by `by` pixels on every side, clipped to an image of `size`.
inline cv::Rect grown_within(const cv::Rect& r, int by, cv::Size size) {
  return cv::Rect(r.x - by, r.y - by, r.width + 2 * by, r.height + 2 * by) & cv::Rect({0, 0}, size);
}

}  // namespace sv
