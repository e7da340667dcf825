// Sub-pixel centrelines. A thinned skeleton lies on pixel centres, up to half a pixel off
// the true centreline (a stroke of even width has two middle rows), and wanders by a pixel
// where thinning breaks ties; the stroke's edges on the anti-aliased image are known to a
// tenth of a pixel, so each point is moved to the midpoint of its cross-section.
#pragma once
#include <opencv2/core.hpp>

#include "graph/stroke_graph.hpp"

namespace sv::graph {

struct CentreOptions {
  double max_shift_ratio = 0.25;  // a point moves at most this fraction of its section's width (or 1 px)
  double clean_ratio = 1.25;  // sections wider than this times their neighbours' median run into other ink
};

// Centres every point of every edge in its cross-section (normal from the chain's local
// direction) and records the width there. Points whose section is not clean keep their
// place and an unknown width: near junctions and corners (the section runs into other ink,
// so it is wider than its neighbours'), or where the centre lies farther than
// max_shift_ratio of the section's width (and 1 px) away.
// Then mends runs of uncentred points between centred legs: at a corner (the legs turn by
// 30 degrees or more) by the legs' intersection, elsewhere (where a pruned spur or a bump
// bent the skeleton) by the straight chord; a lone centred point between uncentred ones (the
// skeleton zigzagging around a pinhole) joins the run where the stretch is straight. Closed
// loops are restarted at a centred point (their anchor moves).
void centre_on_ink(StrokeGraph& g, const cv::Mat& coverage, double stroke_width, const CentreOptions& opt);

// Rebuilds each free stroke end straight along the stroke's direction measured behind the
// cap (thinning bends the last pixels), out to the centre of the round cap: half the local
// width back from where the ink ends, or as far as the skeleton reached if that is farther
// (a tapering brush tip).
void place_stroke_ends(StrokeGraph& g, const cv::Mat& coverage, double stroke_width);

// Two strokes that meet tangentially at a cusp merge into a spike of ink that thinning
// erases, so the centreline turns at the spike's base instead of running out to its tip. Where
// a trace turns and the ink reaches more than a round end's half width beyond the turn, the
// rounded-off base is replaced by a run out to the cusp (half a width short of the tip) and
// back.
void recover_cusps(StrokeGraph& g, const cv::Mat& coverage, double stroke_width);

// Puts each dot at the coverage-weighted centroid of the ink around it.
void centre_dots(StrokeGraph& g, const cv::Mat& coverage, double stroke_width);

}  // namespace sv::graph
