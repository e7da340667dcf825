// Circles the stroke graph cut apart: a circle that a stroke ends on, meets or crosses is split
// at those junctions into several edges, and each edge alone fits only arcs. A cycle of edges
// through the junctions whose points together stay within tolerance of one circle, going round
// it once, is that circle.
//
// Method: a depth-first search from every edge (in edge order, each cycle found once, from its
// lowest edge) over the open edges at each vertex, visiting a vertex at most once and extending
// a path only while its points stay within tolerance of one circle (Kasa, then Gauss-Newton on
// the radial residuals): a path that strays from every circle is no part of one, which keeps the
// search small. A path back to its start is a candidate when it is a round loop (round_loop) of
// at least circle_cycle_min_radius_px.
// The candidates are taken most faithful first (least rms, then fewest edges), each edge by at
// most one circle.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/scene.hpp"
#include "fit/params.hpp"
#include "fit/primitive_fit.hpp"

namespace sv::fitting {

// A closed loop (its first point not repeated) whose points all lie within tolerance of one
// circle, going round it once, with principal axes no more unequal than circle_max_aspect.
std::optional<Circle> round_loop(Points loop, const FitParams& p);

struct CycleCircle {
  Circle circle;
  std::vector<int> edges;             // indices into graph.edges around the cycle, lowest first
  std::vector<std::string> vertices;  // the junctions it passes through
  Polyline points;                    // the edges' points around the cycle, each junction once
  double rms_px = 0, max_px = 0;
};

// The circles of cycles of up to circle_cycle_edges edges of the graph that are not closed loops
// (those fit_polyline fits; a loop from a junction back to it is a cycle of one edge), none when
// it is below 1, most faithful first.
std::vector<CycleCircle> cycle_circles(const Graph& graph, const FitParams& p);

}  // namespace sv::fitting
