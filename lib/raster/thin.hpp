// Thinning a binary image to a one-pixel, 8-connected skeleton.
#pragma once
#include <opencv2/core.hpp>

namespace sv {

// Directional sequential thinning: border pixels are peeled one layer at a time, from the
// north, south, east and west in turn (the four sub-iterations of Zhang-Suen), but each
// candidate is deleted only if it is still a simple point (Yokoi's 8-connectivity number is
// 1) and not an end point when its turn comes. This preserves topology exactly (no 2x2
// blocks or two-pixel diagonals vanish, as they do in parallel Zhang-Suen) and, once no
// pixel can be peeled, leaves a minimal skeleton: no pixel is redundant for 8-connectivity,
// so there are no stair-step corners. Work is proportional to the ink, not the image.
// binary: CV_8UC1, nonzero = ink. Returns CV_8UC1 0/1 (a view inside a buffer with a
// one-pixel frame).
cv::Mat thin(const cv::Mat& binary);

// Number of 8-neighbours set in a 0/1 image (0 outside), CV_8UC1, zero off the skeleton.
cv::Mat neighbour_count(const cv::Mat& skeleton);

}  // namespace sv
