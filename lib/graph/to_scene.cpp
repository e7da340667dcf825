#include "graph/to_scene.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <tuple>

namespace sv::graph {
namespace {

double mean_width(const Trace& t, double fallback) {
  double sum = 0;
  int n = 0;
  for (float w : t.width)
    if (!std::isnan(w)) sum += w, ++n;
  return n ? sum / n : fallback;
}

const char* kind_of(const Node& n) {
  if (n.dot) return "dot";
  if (n.loop) return "loop";
  return n.degree() == 1 ? "end" : "junction";
}

}  // namespace

Graph to_scene_graph(const StrokeGraph& g, double default_width, double spacing) {
  std::vector<int> order;
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (g.nodes[n].alive && (g.nodes[n].dot || g.nodes[n].degree() > 0)) order.push_back(static_cast<int>(n));
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return std::tie(g.nodes[a].p.y, g.nodes[a].p.x) < std::tie(g.nodes[b].p.y, g.nodes[b].p.x);
  });
  std::vector<int> rank(g.nodes.size(), -1);
  Graph out;
  for (size_t r = 0; r < order.size(); ++r) {
    const Node& n = g.nodes[order[r]];
    rank[order[r]] = static_cast<int>(r);
    out.vertices.push_back(
        {fmt::format("v_{:04d}", r + 1), n.p, n.dot ? 2 : n.degree(), kind_of(n), n.meeting_link_px, n.tangent});
  }

  struct Pending {
    int r0, r1;
    Edge e;
  };
  std::vector<Pending> pending;
  for (const Edge& e : g.edges) {
    if (!e.alive) continue;
    Pending p{rank[e.n0], rank[e.n1], e};
    if (p.r0 > p.r1) {
      std::swap(p.r0, p.r1);
      p.e.trace.reverse();
    }
    pending.push_back(std::move(p));
  }
  for (int n : order)
    if (g.nodes[n].dot) {
      Edge dot{Trace{{g.nodes[n].p}, {kUnknownWidth}}, n, n};
      dot.filled = g.nodes[n].filled;
      dot.mark = g.nodes[n].mark;
      pending.push_back({rank[n], rank[n], std::move(dot)});
    }
  auto key = [](const Pending& p) {
    Vec2 second = p.e.trace.pts.size() > 1 ? p.e.trace.pts[1] : p.e.trace.pts.front();
    return std::make_tuple(p.r0, p.r1, second.y, second.x);
  };
  std::stable_sort(pending.begin(), pending.end(), [&](const Pending& a, const Pending& b) { return key(a) < key(b); });
  for (size_t i = 0; i < pending.size(); ++i) {
    const Pending& p = pending[i];
    sv::Edge e;
    e.id = fmt::format("e_{:04d}", i + 1);
    e.v0 = out.vertices[p.r0].id;
    e.v1 = out.vertices[p.r1].id;
    e.points = densify(p.e.trace.pts, spacing);
    e.closed = p.e.closed;
    e.width_px = mean_width(p.e.trace, default_width);
    e.filled = p.e.filled;
    e.mark = p.e.mark;
    out.edges.push_back(std::move(e));
  }
  return out;
}

}  // namespace sv::graph
