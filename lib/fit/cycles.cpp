#include "fit/cycles.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace sv::fitting {

namespace {

// Appends an edge's points in the direction of travel; the junction the path is at is not repeated.
void append_edge(Polyline& out, const Edge& e, bool reversed) {
  const size_t n = e.points.size();
  for (size_t k = 0; k < n; ++k) {
    Vec2 q = e.points[reversed ? n - 1 - k : k];
    if (out.empty() || dist(out.back(), q) > 1e-9) out.push_back(q);
  }
}

// Whether the points of a path may still be part of one circle: within tolerance of their best
// circle, or too straight to tell (a short straight piece lies on a large circle).
bool near_one_circle(Points pts, const FitParams& p) {
  auto kasa = kasa_circle(pts);
  if (!kasa) return true;
  Circle c = refine_circle(pts, *kasa);
  for (Vec2 q : pts)
    if (std::abs(dist(q, c.center) - c.radius) > p.tolerance_px) return false;
  return true;
}

class CycleSearch {
 public:
  CycleSearch(const Graph& g, const FitParams& p) : g_(g), p_(p) {
    for (size_t k = 0; k < g.edges.size(); ++k) {
      const Edge& e = g.edges[k];
      if (e.closed || e.points.size() < 2) continue;
      open_.push_back(static_cast<int>(k));
      at_[e.v0].push_back(static_cast<int>(k));
      if (e.v1 != e.v0) at_[e.v1].push_back(static_cast<int>(k));
    }
  }

  std::vector<CycleCircle> run() {
    const int max_edges = static_cast<int>(p_.circle_cycle_edges);
    if (max_edges < 1) return {};
    for (int k : open_) {
      first_ = k;
      const Edge& e = g_.edges[k];
      Polyline pts;
      append_edge(pts, e, false);
      std::vector<int> path{k};
      std::vector<std::string> visited{e.v0};
      if (e.v1 == e.v0) {
        close(path, visited, std::move(pts));  // a loop from a junction back to it
      } else {
        visited.push_back(e.v1);
        extend(path, visited, pts, max_edges);
      }
    }
    std::sort(found_.begin(), found_.end(), [](const CycleCircle& a, const CycleCircle& b) {
      return std::make_tuple(a.rms_px, a.edges.size(), a.edges) < std::make_tuple(b.rms_px, b.edges.size(), b.edges);
    });
    std::vector<CycleCircle> out;
    std::set<int> used;
    for (CycleCircle& c : found_) {
      if (std::any_of(c.edges.begin(), c.edges.end(), [&](int e) { return used.count(e); })) continue;
      used.insert(c.edges.begin(), c.edges.end());
      out.push_back(std::move(c));
    }
    return out;
  }

 private:
  // Extends the path (from first_, through `visited`, at its last vertex) by each higher edge
  // leaving there.
  void extend(std::vector<int>& path, std::vector<std::string>& visited, const Polyline& pts, int max_edges) {
    const std::string here = visited.back();
    auto it = at_.find(here);
    if (it == at_.end()) return;
    for (int k : it->second) {
      if (k <= first_ || std::find(path.begin(), path.end(), k) != path.end()) continue;
      const Edge& e = g_.edges[k];
      const bool reversed = e.v1 == here;
      const std::string& next = reversed ? e.v0 : e.v1;
      Polyline longer = pts;
      append_edge(longer, e, reversed);
      path.push_back(k);
      if (next == visited.front()) {
        close(path, visited, std::move(longer));
      } else if (static_cast<int>(path.size()) < max_edges &&
                 std::find(visited.begin(), visited.end(), next) == visited.end() && near_one_circle(longer, p_)) {
        visited.push_back(next);
        extend(path, visited, longer, max_edges);
        visited.pop_back();
      }
      path.pop_back();
    }
  }

  void close(const std::vector<int>& path, const std::vector<std::string>& visited, Polyline loop) {
    if (loop.size() > 1 && dist(loop.front(), loop.back()) <= 1e-9) loop.pop_back();
    auto c = round_loop(loop, p_);
    if (!c || c->radius < p_.circle_cycle_min_radius_px) return;
    Deviation d = deviation(Shape::circle(c->center, c->radius), loop);
    found_.push_back({*c, path, visited, std::move(loop), d.rms, d.max});
  }

  const Graph& g_;
  const FitParams& p_;
  std::vector<int> open_;                        // the edges a cycle may use: not closed, two ends
  std::map<std::string, std::vector<int>> at_;  // those at each vertex, in edge order
  int first_ = -1;
  std::vector<CycleCircle> found_;
};

}  // namespace

std::optional<Circle> round_loop(Points loop, const FitParams& p) {
  auto kasa = kasa_circle(loop);
  if (!kasa) return std::nullopt;
  Circle c = refine_circle(loop, *kasa);
  double winding = 0;
  for (size_t k = 0; k < loop.size(); ++k) {
    Vec2 a = loop[k] - c.center, b = loop[(k + 1) % loop.size()] - c.center;
    winding += std::atan2(cross(a, b), dot(a, b));
    if (std::abs(dist(loop[k], c.center) - c.radius) > p.tolerance_px) return std::nullopt;
  }
  if (std::abs(std::abs(winding) - 2 * kPi) > 0.5 * kPi) return std::nullopt;
  // Principal axes of the scatter: a round loop has equal ones.
  LineFit axis = fit_line(loop);
  double major = 0, minor = 0;
  for (Vec2 q : loop) {
    Vec2 d = q - axis.centroid;
    major += dot(d, axis.dir) * dot(d, axis.dir);
    minor += cross(axis.dir, d) * cross(axis.dir, d);
  }
  if (minor <= 0 || std::sqrt(major / minor) > p.circle_max_aspect) return std::nullopt;
  return c;
}

std::vector<CycleCircle> cycle_circles(const Graph& graph, const FitParams& p) { return CycleSearch(graph, p).run(); }

}  // namespace sv::fitting
