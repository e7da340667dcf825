#include "graph/prune.hpp"

#include <algorithm>

#include "raster/profile.hpp"

namespace sv::graph {

namespace {

// How far the edge's farthest point lies from p.
double reach_from(const Trace& t, Vec2 p) {
  double r = 0;
  for (Vec2 q : t.pts) r = std::max(r, dist(p, q));
  return r;
}

}  // namespace

void prune_spurs(StrokeGraph& g, const cv::Mat& coverage, double max_protrusion, double stroke_width) {
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
        double reach = reach_from(g.edges[end.edge].trace, node.p);
        if (reach - radius < max_protrusion) spurs.emplace_back(reach, end.edge);
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
