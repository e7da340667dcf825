// Removing what thinning adds: spurs from bumps in the ink outline, and strokes too short to
// be anything but a dot.
#pragma once
#include "graph/stroke_graph.hpp"

namespace sv::graph {

// Removes spurs (edges from a free end to a junction shorter than max_length), shortest
// first and a few at a time per junction, so that a junction keeps at least two edges: an
// isolated stroke is never deleted, and a small blob whose branches are all short keeps its
// longest pair. Junctions left with two edges are dissolved; repeats until nothing changes.
void prune_spurs(StrokeGraph& g, double max_length);

// Replaces isolated strokes (free end to free end) shorter than max_length by a dot at their
// middle.
void collapse_dots(StrokeGraph& g, double max_length);

}  // namespace sv::graph
