// The stroke graph while it is being built: nodes (stroke ends, junctions, loop anchors,
// dots) and edges (centrelines between two node ends). Edges and nodes are never erased,
// only marked dead, so indices stay valid during a pass; the scene's Graph is made from the
// live ones at the end (to_scene.hpp).
#pragma once
#include <limits>
#include <optional>
#include <vector>

#include "core/geometry.hpp"
#include "core/graph_records.hpp"

namespace sv::graph {

constexpr float kUnknownWidth = std::numeric_limits<float>::quiet_NaN();

// A centreline with the ink width measured at each point (NaN where it could not be).
struct Trace {
  Polyline pts;
  std::vector<float> width;
  void push(Vec2 p, float w = kUnknownWidth) { pts.push_back(p), width.push_back(w); }
  void reverse();
  void append(const Trace& t);
  double length() const { return polyline_length(pts); }
};

// The median of the trace's measured widths over its first max_length px; `fallback` when none
// was measured.
double median_width(const Trace& t, double max_length, double fallback);

// Arc length at each point of a polyline.
std::vector<double> arc_lengths(const Polyline& pts);

// The point at arc length s along p (clamped to its ends).
Vec2 point_at_length(const Polyline& p, double s);

// A straight line through `anchor` along the unit vector `dir`.
struct Line {
  Vec2 anchor, dir;
};
// The principal axis of the points (total least squares), directed from the first point
// towards the last. Needs two distinct points.
Line principal_axis(const std::vector<Vec2>& pts);
// Where two lines cross; false when they are (nearly) parallel.
bool intersect(const Line& a, const Line& b, Vec2& at);

// One end of an edge: `tail` is the end at pts.back() (node n1), else pts.front() (n0).
struct End {
  int edge = -1;
  bool tail = false;
  bool operator==(const End&) const = default;
};

struct Node {
  Vec2 p;
  std::vector<End> ends;  // a loop edge at this node contributes both its ends
  bool loop = false;      // anchors a closed edge
  bool dot = false;       // a dot: no edges here; the scene gets a single-point edge for it
  bool alive = true;
  bool filled = false;    // a dot that stands for a filled mark (filled.hpp)
  std::optional<MarkRecord> mark{};  // ... and what was measured of it
  double meeting_link_px = 0;  // two junctions this far apart were made this one (junctions.hpp)
  std::optional<TangentRecord> tangent{};  // a stem touching a circle tangentially here (junctions.hpp)
  int degree() const { return static_cast<int>(ends.size()); }
};

struct Edge {
  Trace trace;
  int n0 = -1, n1 = -1;
  bool closed = false;
  bool alive = true;
  bool filled = false;  // the stroke of a filled mark (filled.hpp)
  std::optional<MarkRecord> mark{};  // ... and what was measured of the mark
};

class StrokeGraph {
 public:
  std::vector<Node> nodes;
  std::vector<Edge> edges;

  int add_node(Vec2 p);
  // Adds the edge and registers its ends at its nodes.
  int add_edge(Edge e);
  void remove_edge(int e);

  int node_of(End end) const { return end.tail ? edges[end.edge].n1 : edges[end.edge].n0; }
  // The edge's points ordered so that `end` comes first.
  Trace trace_from(End end) const;
  End other_end(End end) const { return {end.edge, !end.tail}; }

  // Joins two edge ends that meet at one node into a single edge through `via` (if given),
  // removing them from the node. Two ends of one edge close it into a loop anchored at a new
  // loop node. Returns the resulting edge.
  int join(End a, End b, const Vec2* via);
  // Joins the two ends at every live node of degree 2 and retires it, except where a filled
  // mark's stroke meets another stroke.
  void dissolve_pass_through_nodes();
  void retire_node_if_bare(int n);
};

}  // namespace sv::graph
