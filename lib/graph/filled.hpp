// Filled marks: areas of ink several stroke widths wide (a zig-zag or hatching scribbled over
// until it filled in, a dark dot, a small loop filled in). Thinning leaves a tangle of short
// branches there and a single path through them would leave most of the ink undrawn. Each
// mark is found on the binary ink by its inscribed discs, and its part of the stroke graph is
// replaced by strokes of the drawing's pen that cover its ink, flagged `filled`, to which the
// strokes that run into the mark stay attached.
#pragma once
#include <opencv2/core.hpp>

#include "graph/stroke_graph.hpp"

namespace sv::graph {

struct FilledOptions {
  double stroke_width = 3;       // the drawing's median stroke width w
  double min_diameter = 9;       // a mark's largest inscribed ink disc is at least this wide (px)
  double core_radius = 3;        // a mark is the union of its ink discs of at least this radius (px)
  double dot_length = 1.5;       // a part left to cover whose medial path is shorter is a dot (px)
  double remnant_length = 6;     // a branch left outside a mark shorter than this is its tangle (px)
  double loop_diameter = 0;      // narrower ink this wide may be a small loop filled in (px; 0: off)
  double loop_reach = 0;         // ... when a third of its core lies farther than this from every edge (px)
};

// A mark is a connected part of the union of the ink's discs of radius core_radius (an opening:
// strokes, whose discs are smaller, fall away; the filled area stays) whose largest disc is at
// least min_diameter wide. Edges are cut where they enter a mark and the part inside dropped;
// what is left outside and ends free (or returns to the mark) within remnant_length is the
// mark's tangle too (a small loop's, below, only under half a stroke width: thinning's bumps off
// its blob were pruned as spurs, and what leaves it free is the stroke's tail). The mark's
// strokes cover its ink and the ink around it, within remnant_length, that no remaining stroke
// reaches (the teeth of a filled-in zig-zag): rings a stroke width apart, the first inset by
// half a width (the path of a pen of the drawing's width around its edge; one closed edge per
// boundary), then the same for the ink still out of the pen's reach, and the medial path (or a
// dot) of a part narrower than the pen. Every other cut end is joined by a straight run to the
// nearest point of the mark's strokes, where a junction node splits it (cut ends within a
// stroke width of each other, or of a path's end, share one node).
// A small loop drawn with the drawing's pen fills in: its ink is a blob some two widths across,
// thinning keeps only the stroke that runs through it (or a spur into it), and the loop's far
// side is lost. So ink whose largest disc is loop_diameter wide but under min_diameter (the
// union of its discs of that diameter) is a mark too, drawn as its outline inset by w/2 (the
// loop the pen went round), when at least a third of its core (ink more than w/2 from paper)
// lies farther than loop_reach from every edge but the branches that end free in it and run
// outside it for under remnant_length: the stroke ran past the loop, or thinning sent a spur
// into it. A brush pressed down at a turn is crossed by its stroke, which reaches most of it
// (4 to 17 % of the core left in the dev corpus's brush characters, some 60 % beside a filled
// loop).
// binary: CV_8UC1, nonzero = ink. Leaves the graph untouched and returns 0 when there is no
// mark; else returns the number of marks.
int replace_filled_marks(StrokeGraph& g, const cv::Mat& binary, const FilledOptions& opt);

}  // namespace sv::graph
