#include "graph/gaps.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

namespace sv::graph {
namespace {

// A free end: where it is and which way the stroke runs out of it.
struct FreeEnd {
  int node = -1;
  Vec2 p, dir;  // dir: unit, pointing out of the stroke
};

// A bridge between two free ends, through `via` at a corner.
struct Bridge {
  double cost;
  int a, b;
  std::optional<Vec2> via;
};

// The free ends whose direction can be measured: over the last two stroke widths (at least
// 4 px) of the edge, which place_stroke_ends left straight behind the cap.
std::vector<FreeEnd> free_ends(const StrokeGraph& g, double w) {
  std::vector<FreeEnd> out;
  const double reach = std::max(4.0, 2 * w);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    if (!node.alive || node.loop || node.dot || node.degree() != 1) continue;
    Trace t = g.trace_from(node.ends[0]);
    std::vector<Vec2> pts;
    double s = 0;
    for (size_t i = 0; i < t.pts.size() && s <= reach; ++i) {
      if (i > 0) s += dist(t.pts[i - 1], t.pts[i]);
      pts.push_back(t.pts[i]);
    }
    if (s < 2 || dist(pts.front(), pts.back()) < 1) continue;
    out.push_back({static_cast<int>(n), node.p, -principal_axis(pts).dir});
  }
  return out;
}

double turn_deg(Vec2 a, Vec2 b) { return rad2deg(std::acos(std::clamp(dot(a, b), -1.0, 1.0))); }

// The bridge between two free ends, if they continue each other or meet at a corner.
std::optional<Bridge> bridge(const FreeEnd& a, const FreeEnd& b, const GapOptions& opt) {
  const Vec2 gap = b.p - a.p;
  const double d = norm(gap);
  if (d > opt.max_gap) return std::nullopt;
  if (d < 1e-9) return Bridge{0, a.node, b.node, std::nullopt};
  const double turn = turn_deg(a.dir, -b.dir);
  // Straight on: each end points at the other, and its line passes near it.
  if (turn <= opt.max_turn_deg && dot(a.dir, gap) > 0 && dot(b.dir, gap) < 0) {
    double off = std::abs(cross(a.dir, gap)) + std::abs(cross(b.dir, gap));
    if (std::max(std::abs(cross(a.dir, gap)), std::abs(cross(b.dir, gap))) <= opt.max_offset)
      return Bridge{d + off, a.node, b.node, std::nullopt};
  }
  // A corner: both lines run on into the gap and meet there, nearer to each end than the two
  // ends are to each other (ends that would meet far beyond the gap are separate strokes).
  Vec2 corner;
  if (turn > opt.max_corner_deg || !intersect({a.p, a.dir}, {b.p, b.dir}, corner)) return std::nullopt;
  const double ta = dot(corner - a.p, a.dir), tb = dot(corner - b.p, b.dir);
  if (std::min(ta, tb) < -opt.max_offset || std::max(ta, tb) > d) return std::nullopt;
  return Bridge{std::max(ta, 0.0) + std::max(tb, 0.0), a.node, b.node, corner};
}

// Joins the edges at free-end nodes na and nb through the gap (and `via`).
void join_ends(StrokeGraph& g, int na, int nb, const std::optional<Vec2>& via) {
  End a = g.nodes[na].ends[0], b = g.nodes[nb].ends[0];
  // Move b's end to na, so that the two ends meet at one node as StrokeGraph::join needs.
  Edge& eb = g.edges[b.edge];
  (b.tail ? eb.n1 : eb.n0) = na;
  g.nodes[na].ends.push_back(b);
  g.nodes[nb].ends.clear();
  g.nodes[nb].alive = false;
  g.join(a, b, via ? &*via : nullptr);
}

// Where the line from a free end first meets another stroke within max_t_reach.
struct Hit {
  double t = 0;  // distance from the end
  int edge = -1;
  size_t seg = 0;  // the hit lies on segment seg .. seg+1
  Vec2 q;
};

// The first stroke the end points at: a crossing of its line with an edge's segment, steeper
// than min_t_angle_deg, away from the end's own last stretch and from other free ends (those
// are joined end to end, or not at all).
std::optional<Hit> hit_stroke(const StrokeGraph& g, const FreeEnd& end, double w, const GapOptions& opt) {
  const double min_sin = std::sin(deg2rad(opt.min_t_angle_deg));
  const End own = g.nodes[end.node].ends[0];
  std::optional<Hit> best;
  for (size_t e = 0; e < g.edges.size(); ++e) {
    const Edge& edge = g.edges[e];
    if (!edge.alive || edge.trace.pts.size() < 2) continue;
    const Polyline& pts = edge.trace.pts;
    const double length = edge.trace.length();
    const bool free0 = g.nodes[edge.n0].degree() == 1, free1 = g.nodes[edge.n1].degree() == 1;
    double s = 0;
    for (size_t i = 0; i + 1 < pts.size(); s += dist(pts[i], pts[i + 1]), ++i) {
      Vec2 seg = pts[i + 1] - pts[i];
      double den = cross(end.dir, seg);
      if (norm(seg) < 1e-9 || std::abs(den) < min_sin * norm(seg)) continue;
      double t = cross(pts[i] - end.p, seg) / den, u = cross(pts[i] - end.p, end.dir) / den;
      if (t <= 0 || t > opt.max_t_reach || u < 0 || u > 1) continue;
      double at = s + u * norm(seg);  // arc length of the hit along the edge
      if (static_cast<int>(e) == own.edge && (own.tail ? length - at : at) < 2 * opt.max_gap) continue;
      if ((free0 && at < w) || (free1 && length - at < w)) continue;
      if (!best || t < best->t) best = Hit{t, static_cast<int>(e), i, end.p + end.dir * t};
    }
  }
  return best;
}

// Splits the edge at the hit into two edges (a loop into one edge from and to the new node)
// meeting at a new junction node; returns it.
int split_at(StrokeGraph& g, const Hit& hit) {
  const Edge edge = g.edges[hit.edge];
  const int mid = g.add_node(hit.q);
  Trace head, tail{{hit.q}, {kUnknownWidth}};
  for (size_t i = 0; i <= hit.seg; ++i) head.push(edge.trace.pts[i], edge.trace.width[i]);
  head.push(hit.q);
  for (size_t i = hit.seg + 1; i < edge.trace.pts.size(); ++i) tail.push(edge.trace.pts[i], edge.trace.width[i]);
  g.remove_edge(hit.edge);
  if (edge.closed) {
    g.nodes[edge.n0].alive = false;  // the loop's anchor: the new junction takes its place
    tail.append(head);
    g.add_edge(Edge{std::move(tail), mid, mid});
  } else {
    g.add_edge(Edge{std::move(head), edge.n0, mid});
    g.add_edge(Edge{std::move(tail), mid, edge.n1});
  }
  return mid;
}

// Runs the free end at node n on to the junction node j.
void extend_to(StrokeGraph& g, int n, int j) {
  End a = g.nodes[n].ends[0];
  Edge& e = g.edges[a.edge];
  if (a.tail) e.trace.push(g.nodes[j].p), e.n1 = j;
  else e.trace.reverse(), e.trace.push(g.nodes[j].p), e.trace.reverse(), e.n0 = j;
  g.nodes[j].ends.push_back(a);
  g.nodes[n].ends.clear();
  g.nodes[n].alive = false;
}

}  // namespace

void join_gaps(StrokeGraph& g, double stroke_width, const GapOptions& opt) {
  // End to end: all acceptable bridges, cheapest first, each end used once.
  const std::vector<FreeEnd> ends = free_ends(g, stroke_width);
  std::vector<Bridge> bridges;
  for (size_t i = 0; i < ends.size(); ++i)
    for (size_t j = i + 1; j < ends.size(); ++j)
      if (auto b = bridge(ends[i], ends[j], opt)) bridges.push_back(*b);
  std::sort(bridges.begin(), bridges.end(),
            [](const Bridge& x, const Bridge& y) { return std::tie(x.cost, x.a, x.b) < std::tie(y.cost, y.a, y.b); });
  std::vector<bool> used(g.nodes.size(), false);
  for (const Bridge& b : bridges) {
    if (used[b.a] || used[b.b]) continue;
    used[b.a] = used[b.b] = true;
    join_ends(g, b.a, b.b, b.via);
  }

  // Ends that stopped short of a stroke, nearest first; each split changes the edges, so the
  // hits are found again after every join.
  for (;;) {
    std::optional<std::pair<FreeEnd, Hit>> best;
    for (const FreeEnd& end : free_ends(g, stroke_width)) {
      auto hit = hit_stroke(g, end, stroke_width, opt);
      if (hit && (!best || hit->t < best->second.t)) best = std::make_pair(end, *hit);
    }
    if (!best) return;
    extend_to(g, best->first.node, split_at(g, best->second));
  }
}

}  // namespace sv::graph
