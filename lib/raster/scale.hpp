// An image scaled and moved onto a canvas, as views draw the drawing under the primitives.
#pragma once
#include <opencv2/core.hpp>

namespace sv {

enum class Sampling { nearest, bilinear };

// The CV_8UC1 image `gray` mapped by p -> scale * p + offset (pixel centres at integer
// coordinates) onto a `size` canvas, `fill` where it does not reach: to the bit what cv::warpAffine
// gives for the matrix [scale 0 offset.x; 0 scale offset.y] with a constant border (its inverse
// map, its 1/1024 px fixed point, its 1/32 px bilinear weights). Linking OpenCV's warp module
// fills 0.5 MB of interpolation tables when a process starts: 176 page faults and 2.5 ms before
// main in every executable that draws a view.
cv::Mat scale_onto(const cv::Mat& gray, double scale, cv::Point2d offset, cv::Size size, Sampling sampling,
                   uchar fill);

}  // namespace sv
