// Stage 1 of routing: cover the primitives with as few pen-down trails as possible.
//
// Primitive ends that coincide (within snap_px) become the vertices of an endpoint graph
// whose edges are the lines and arcs; a circle that passes through a vertex is a self-loop
// there (entered at that vertex), any other circle and every dot is a trail of its own.
// Per connected component the odd vertices are paired by minimum pen-up travel time
// (Edmonds' Chinese-postman construction; exact by the blossom algorithm up to
// route.exact_matching_max odd vertices), the pairs become virtual pen-up edges, and an
// Euler circuit of the augmented component is cut at them: that gives the minimum number of
// trails, one per pair. With redraw_lines, two odd vertices a line joins may instead be
// paired by that line drawn a second time, when that takes no longer than the trip: the
// circuit is not cut there (a T's short bar drawn out and back instead of a pen lift). The circuit is built as a transition system (Fleischner): at every
// vertex the incident edge ends are paired so the robot turns least (a straight line through
// a crossing stays straight), then the closed strands that pairing leaves are spliced into
// one circuit where the splice adds the least turning, as Hierholzer splices sub-tours.
#pragma once
#include <vector>

#include "route/cost.hpp"

namespace sv {

// One primitive in the tour: drawn p0 -> p1 or reversed; circles entered at entry_rad.
struct Traversal {
  int prim = -1;  // index into the primitive list
  bool reverse = false;
  double entry_rad = 0;
};

struct Trail {
  enum class Kind { open, closed, circle, dot };
  Kind kind = Kind::open;
  std::vector<Traversal> steps;  // closed: a cycle that may start at any of its vertices
};

struct TrailSet {
  std::vector<Trail> trails;
  // Per connected component, its trails in the order of its Euler circuit (consecutive ones
  // joined by a matched pen-up edge): a good first guess at the order.
  std::vector<std::vector<int>> circuits;
  int vertices = 0, odd_vertices = 0, components = 0;
  int redrawn = 0;  // odd pairs joined by drawing a line again rather than by a pen-up trip
};

struct TrailParams {
  double snap_px = 0.75;        // ends this close are one vertex
  int exact_matching_max = 1000;  // odd vertices per component matched exactly
  bool redraw_lines = true;       // odd vertices a line joins may be paired by drawing it again
};

TrailSet build_trails(const std::vector<Shape>& shapes, const CostModel& cost, const TrailParams& params);

// Minimum-cost perfect pairing of the items 0..n-1 (n even) under the symmetric cost matrix
// `w`: exact up to `exact_max` items (by dynamic programming over subsets up to 8 items, by
// Edmonds' blossom algorithm above, O(n^3)), else greedy by increasing cost followed by pair
// exchanges until none helps. Deterministic.
std::vector<std::pair<int, int>> min_cost_pairing(const std::vector<std::vector<double>>& w, int exact_max);

}  // namespace sv
