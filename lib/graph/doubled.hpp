// Strokes drawn twice. Two passes of the same stroke a little apart either fuse into one
// wider stroke (the skeleton already has one centreline) or leave a thin line of paper
// between them: then the skeleton has two parallel edges, usually joined where the passes
// meet at their ends, as a long thin loop or a double edge between two junctions.
#pragma once
#include <opencv2/core.hpp>

#include "graph/stroke_graph.hpp"

namespace sv::graph {

// Fills the thin line of paper between two passes: 4-connected paper regions enclosed by ink
// (not touching the image border) nowhere wider than max_width px and at least min_length px
// long (area over width), which the pinhole filter keeps and thinning would turn into a thin
// loop, or a ladder of them where the passes touch. binary: CV_8UC1 0/1. Returns the number
// filled.
int fill_slivers(cv::Mat& binary, double max_width, double min_length);

// Then, on the stroke graph, where the passes are farther apart or open at the ends:
// replaces each pair of parallel passes by one edge along their midline. Two sides are
// passes of one stroke when at least 80% of the points of each lie within max_separation of
// the other and each side is at least 5 times as long as they typically are apart (so a
// small round loop, whose sides are as far apart as they are long, stays a loop). Sides:
// - two edges between the same two nodes;
// - the two halves of a loop (split at its farthest points) or of an edge from a junction
//   back to itself (split at the point farthest from the junction): the thin loop becomes
//   an edge between two free ends, or from the junction to a free end;
// - two edges side by side whose other nodes are free ends (at most one junction at each
//   side; a shared node stays).
// Nodes left with two edges are dissolved. Deterministic (edge order).
void collapse_double_strokes(StrokeGraph& g, double max_separation);

}  // namespace sv::graph
