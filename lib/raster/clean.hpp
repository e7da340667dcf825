// Binary clean-up before thinning: noise specks and pinholes would become spurious strokes
// and loops in the skeleton.
#pragma once
#include <opencv2/core.hpp>

namespace sv {

// Clears 8-connected ink components smaller than min_area pixels. binary: CV_8UC1 0/1.
// Returns the number removed.
int remove_specks(cv::Mat& binary, double min_area);

// Fills 4-connected paper regions enclosed by ink (not touching the image border) of at
// most max_area pixels. binary: CV_8UC1 0/1. Returns the number filled.
int fill_holes(cv::Mat& binary, double max_area);

}  // namespace sv
