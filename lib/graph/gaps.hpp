// Broken strokes. A pencil skips, a pen lifts at a corner, a stroke stops just short of the
// one it should touch: the ink has a small gap there and the skeleton two free ends (or a
// free end beside a stroke) where the drawing has one stroke (or a junction).
#pragma once
#include "graph/stroke_graph.hpp"

namespace sv::graph {

struct GapOptions {
  double max_gap = 7;         // farthest apart two free ends (cap centres) may be, px
  double max_t_reach = 0;     // farthest a free end may be from the stroke it points at, px (0: no T joins)
  double max_turn_deg = 30;   // ends that continue straight: their directions differ by at most this
  double max_offset = 2;      // ... and each lies at most this far to the side of the other's line, px
  double max_corner_deg = 120;  // ends of a corner drawn in two strokes turn by at most this
  double min_t_angle_deg = 30;  // an end meets the stroke it points at at least this steeply
};

// Rejoins broken strokes, best pairs first (cost: the length of the bridge), each free end
// (a degree-1 node) at most once:
// - two free ends that continue each other (directions anti-parallel within max_turn_deg,
//   each within max_offset of the other's line) become one edge through the gap;
// - two free ends whose lines meet within the gap (nearer to each end than the ends are to
//   each other) at a turn of at most max_corner_deg are a corner drawn in two strokes:
//   one edge through the meeting point;
// then (when max_t_reach > 0) a free end whose line hits another stroke within max_t_reach,
// at least min_t_angle_deg off that stroke's direction, is a T that stopped short: it runs on
// to a new junction there. Off by default: a T join saves no pen lift (a free end becomes an
// odd junction) and draws over the paper of the gap.
// The directions are measured over the last stroke width or two of each end (after
// place_stroke_ends has straightened them). Deterministic: ties go to the lower node ids.
void join_gaps(StrokeGraph& g, double stroke_width, const GapOptions& opt);

}  // namespace sv::graph
