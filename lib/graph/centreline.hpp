// Sub-pixel centrelines. A thinned skeleton lies on pixel centres, up to half a pixel off
// the true centreline (a stroke of even width has two middle rows), and wanders by a pixel
// where thinning breaks ties; the stroke's edges on the anti-aliased image are known to a
// tenth of a pixel, so each point is moved to the midpoint of its cross-section.
#pragma once
#include <opencv2/core.hpp>

#include "graph/stroke_graph.hpp"

namespace sv::graph {

// Centres every point of every edge in its cross-section (normal from the chain's local
// direction) and records the width there. Points whose section is not clean are left in
// place with an unknown width: near junctions (the section runs into another stroke),
// at sharp corners, or where the centre lies more than max_shift away.
void centre_on_ink(StrokeGraph& g, const cv::Mat& coverage, double stroke_width, double max_shift);

// Moves each free stroke end to the centre of its round cap: half the local width back from
// where the ink ends along the stroke's direction. Thinning stops short of it or overshoots
// by up to a pixel or two.
void place_stroke_ends(StrokeGraph& g, const cv::Mat& coverage, double stroke_width);

// Puts each dot at the coverage-weighted centroid of the ink around it.
void centre_dots(StrokeGraph& g, const cv::Mat& coverage, double stroke_width);

}  // namespace sv::graph
