// Removing what thinning adds: spurs from bumps in the ink outline and from corners of
// thick strokes, and strokes too short to be anything but a dot.
#pragma once
#include <opencv2/core.hpp>

#include "graph/stroke_graph.hpp"

namespace sv::graph {

// Removes spurs: edges from a junction to a free end whose tip reaches less than
// `max_protrusion` beyond the largest ink disc centred at the junction (a corner of a thick
// stroke or a bump in its outline, not a stroke of its own). Shortest first and a few at a
// time per junction, so that a junction keeps at least two edges: an isolated stroke is
// never deleted, and a small blob whose branches are all short keeps its longest pair.
// Junctions left with two edges are dissolved; repeats until nothing changes.
void prune_spurs(StrokeGraph& g, const cv::Mat& coverage, double max_protrusion, double stroke_width);

// Replaces isolated strokes (free end to free end) shorter than max_length by a dot at their
// middle.
void collapse_dots(StrokeGraph& g, double max_length);

}  // namespace sv::graph
