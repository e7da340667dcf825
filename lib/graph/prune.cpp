#include "graph/prune.hpp"

#include <algorithm>
#include <optional>

#include "raster/profile.hpp"


namespace sv::graph {

namespace {

// A thinning spur never reaches farther than this many stroke widths from its junction.
constexpr double kMaxSpurReach = 2;

// The point of the edge farthest from p, or nothing once a point lies beyond max_reach.
std::optional<Vec2> farthest_within(const Trace& t, Vec2 p, double max_reach) {
  Vec2 far = p;
  for (Vec2 q : t.pts) {
    if (dist(p, q) > max_reach) return std::nullopt;
    if (dist(p, q) > dist(p, far)) far = q;
  }
  return far;
}

// The first `length` px of the edge at `end`, walking inwards from that end.
std::vector<Vec2> arm_start(const StrokeGraph& g, End end, double length) {
  const Polyline& pts = g.edges[end.edge].trace.pts;
  std::vector<Vec2> out;
  double s = 0;
  for (size_t k = 0; k < pts.size() && s <= length; ++k) {
    size_t i = end.tail ? pts.size() - 1 - k : k;
    if (k > 0) s += dist(out.back(), pts[i]);
    out.push_back(pts[i]);
  }
  return out;
}

// Whether q lies within the ink of an arm leaving p: in a strip along the arm's direction over
// its first two stroke widths, `half` wide either side, starting `half` behind p.
bool inside_arm(const StrokeGraph& g, End arm, Vec2 p, Vec2 q, double stroke_width, double half) {
  std::vector<Vec2> pts = arm_start(g, arm, 2 * stroke_width);
  if (pts.size() < 2 || dist(pts.front(), pts.back()) < 1e-9) return false;
  Vec2 dir = principal_axis(pts).dir;
  double along = dot(q - p, dir);
  return along >= -half && along <= dist(pts.front(), pts.back()) + half && std::abs(cross(dir, q - p)) <= half;
}

}  // namespace

void prune_spurs(StrokeGraph& g, const cv::Mat& coverage, double max_protrusion, double stroke_width) {
  const double half = 0.5 * stroke_width + max_protrusion;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      const Node& node = g.nodes[n];
      if (!node.alive || node.degree() < 3) continue;
      const double radius = inscribed_radius(coverage, node.p, 3 * stroke_width);
      std::vector<std::pair<double, int>> spurs;  // (reach, edge)
      for (End end : node.ends) {
        int far = g.node_of(g.other_end(end));
        if (far == static_cast<int>(n) || g.nodes[far].degree() != 1) continue;
        std::optional<Vec2> tip = farthest_within(g.edges[end.edge].trace, node.p, kMaxSpurReach * stroke_width);
        if (!tip || dist(*tip, node.p) - radius >= max_protrusion) continue;
        bool spur = false;
        for (End other : node.ends)
          if (other.edge != end.edge) spur = spur || inside_arm(g, other, node.p, *tip, stroke_width, half);
        if (spur) spurs.emplace_back(dist(*tip, node.p), end.edge);
      }
      std::sort(spurs.begin(), spurs.end());
      size_t removable = std::min(spurs.size(), static_cast<size_t>(node.degree() - 2));
      for (size_t i = 0; i < removable; ++i) {
        const Edge& spur = g.edges[spurs[i].second];
        int far = spur.n0 == static_cast<int>(n) ? spur.n1 : spur.n0;
        g.remove_edge(spurs[i].second);
        g.retire_node_if_bare(far);
        changed = true;
      }
    }
    g.dissolve_pass_through_nodes();
  }
}

void collapse_dots(StrokeGraph& g, double max_length) {
  for (size_t e = 0; e < g.edges.size(); ++e) {
    const Edge& edge = g.edges[e];
    if (!edge.alive || edge.closed || edge.n0 == edge.n1) continue;
    if (g.nodes[edge.n0].degree() != 1 || g.nodes[edge.n1].degree() != 1) continue;
    double length = edge.trace.length();
    if (length >= max_length) continue;
    Vec2 middle = point_at_length(edge.trace.pts, length / 2);
    int n0 = edge.n0, n1 = edge.n1;
    g.remove_edge(static_cast<int>(e));
    g.retire_node_if_bare(n0);
    g.retire_node_if_bare(n1);
    g.nodes[g.add_node(middle)].dot = true;
  }
}

}  // namespace sv::graph
