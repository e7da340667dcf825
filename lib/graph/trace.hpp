// Skeleton pixels to a stroke graph.
#pragma once
#include <opencv2/core.hpp>

#include "graph/stroke_graph.hpp"

namespace sv::graph {

// Traces a minimal 8-connected skeleton (CV_8UC1 0/1; pixels are marked while tracing and
// the marks cleared before returning, so no image-sized buffer is needed). Pixels with one skeleton neighbour
// are stroke ends, pixels with none are dots, and each 8-connected cluster of pixels with
// three or more neighbours is one junction node at the cluster's centroid. Pixel chains
// between nodes become edges whose first and last points are the node pixels they leave
// from and arrive at; chains closed on themselves without any node become loop edges
// anchored at their first pixel in raster order. Tiny loops inside a junction cluster are
// dropped; nodes left without edges (isolated pixels, bare clusters) are dots. Widths are
// left unknown.
StrokeGraph trace_skeleton(cv::Mat& skeleton);

}  // namespace sv::graph
