#include "graph/stroke_graph.hpp"

#include <algorithm>
#include <cmath>

#include "raster/profile.hpp"

namespace sv::graph {

double median_width(const Trace& t, double max_length, double fallback) {
  std::vector<float> w;
  double s = 0;
  for (size_t i = 0; i < t.pts.size() && s <= max_length; ++i) {
    if (i > 0) s += dist(t.pts[i - 1], t.pts[i]);
    if (!std::isnan(t.width[i])) w.push_back(t.width[i]);
  }
  return w.empty() ? fallback : median_of(w);
}

std::vector<double> arc_lengths(const Polyline& pts) {
  std::vector<double> s(pts.size(), 0);
  for (size_t i = 1; i < pts.size(); ++i) s[i] = s[i - 1] + dist(pts[i - 1], pts[i]);
  return s;
}

Vec2 point_at_length(const Polyline& p, double s) {
  if (p.empty()) return {};
  for (size_t i = 1; i < p.size(); ++i) {
    double l = dist(p[i - 1], p[i]);
    if (s <= l) return l > 0 ? p[i - 1] + (p[i] - p[i - 1]) * (std::max(s, 0.0) / l) : p[i];
    s -= l;
  }
  return p.back();
}

Line principal_axis(const std::vector<Vec2>& pts) {
  Vec2 mean;
  for (Vec2 p : pts) mean = mean + p;
  mean = mean / double(pts.size());
  double cxx = 0, cxy = 0, cyy = 0;
  for (Vec2 p : pts) {
    Vec2 d = p - mean;
    cxx += d.x * d.x, cxy += d.x * d.y, cyy += d.y * d.y;
  }
  Vec2 dir = from_angle(0.5 * std::atan2(2 * cxy, cxx - cyy));
  if (dot(dir, pts.back() - pts.front()) < 0) dir = -dir;
  return {mean, dir};
}

bool intersect(const Line& a, const Line& b, Vec2& at) {
  double den = cross(a.dir, b.dir);
  if (std::abs(den) < 1e-9) return false;
  at = a.anchor + a.dir * (cross(b.anchor - a.anchor, b.dir) / den);
  return true;
}

void Trace::reverse() {
  std::reverse(pts.begin(), pts.end());
  std::reverse(width.begin(), width.end());
}

void Trace::append(const Trace& t) {
  size_t skip = !pts.empty() && !t.pts.empty() && dist(pts.back(), t.pts.front()) < 1e-9 ? 1 : 0;
  pts.insert(pts.end(), t.pts.begin() + skip, t.pts.end());
  width.insert(width.end(), t.width.begin() + skip, t.width.end());
}

int StrokeGraph::add_node(Vec2 p) {
  nodes.push_back(Node{p, {}, false, false, true});
  return static_cast<int>(nodes.size()) - 1;
}

int StrokeGraph::add_edge(Edge e) {
  int id = static_cast<int>(edges.size());
  edges.push_back(std::move(e));
  const Edge& ref = edges.back();
  if (ref.n0 >= 0) nodes[ref.n0].ends.push_back({id, false});
  if (ref.n1 >= 0) nodes[ref.n1].ends.push_back({id, true});
  return id;
}

void StrokeGraph::remove_edge(int e) {
  Edge& edge = edges[e];
  for (int n : {edge.n0, edge.n1})
    if (n >= 0) std::erase_if(nodes[n].ends, [&](const End& x) { return x.edge == e; });
  edge.alive = false;
}

Trace StrokeGraph::trace_from(End end) const {
  Trace t = edges[end.edge].trace;
  if (end.tail) t.reverse();
  return t;
}

void StrokeGraph::retire_node_if_bare(int n) {
  if (nodes[n].ends.empty() && !nodes[n].dot) nodes[n].alive = false;
}

int StrokeGraph::join(End a, End b, const Vec2* via) {
  const int node = node_of(a);
  std::erase(nodes[node].ends, a);
  std::erase(nodes[node].ends, b);
  if (a.edge == b.edge) {
    Edge& e = edges[a.edge];
    if (via) {
      Trace closed;
      closed.push(*via);
      closed.append(e.trace);
      closed.append(Trace{{*via}, {kUnknownWidth}});
      e.trace = std::move(closed);
    } else if (dist(e.trace.pts.front(), e.trace.pts.back()) > 1e-9) {
      e.trace.push(e.trace.pts.front(), e.trace.width.front());
    }
    int anchor = add_node(edges[a.edge].trace.pts.front());
    nodes[anchor].loop = true;
    edges[a.edge].n0 = edges[a.edge].n1 = anchor;
    edges[a.edge].closed = true;
    nodes[anchor].ends = {{a.edge, false}, {a.edge, true}};
    retire_node_if_bare(node);
    return a.edge;
  }
  Trace t = trace_from(a);
  t.reverse();
  if (via) t.append(Trace{{*via}, {kUnknownWidth}});
  t.append(trace_from(b));
  Edge joined;
  joined.trace = std::move(t);
  joined.filled = edges[a.edge].filled && edges[b.edge].filled;
  if (joined.filled) joined.mark = edges[a.edge].mark;
  joined.n0 = node_of(other_end(a));
  joined.n1 = node_of(other_end(b));
  remove_edge(a.edge);
  remove_edge(b.edge);
  int id = add_edge(std::move(joined));
  retire_node_if_bare(node);
  return id;
}

void StrokeGraph::dissolve_pass_through_nodes() {
  for (size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    if (!node.alive || node.loop || node.dot || node.degree() != 2) continue;
    if (edges[node.ends[0].edge].filled != edges[node.ends[1].edge].filled) continue;
    join(node.ends[0], node.ends[1], nullptr);
  }
}

}  // namespace sv::graph
