#include "eval/reference_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <opencv2/imgproc.hpp>

#include "eval/score.hpp"
#include "graph/skeletonize.hpp"

namespace sv {

cv::Mat drawing_mask(const std::vector<Polyline>& paths, cv::Size size, double width) {
  cv::Mat m = cv::Mat::zeros(size, CV_8UC1);
  const int thick = std::max(1, static_cast<int>(std::lround(width)));
  constexpr int kShift = 4;  // sub-pixel positions: coordinates in 1/16 px
  auto at = [](Vec2 p) { return cv::Point(static_cast<int>(std::lround(p.x * 16)), static_cast<int>(std::lround(p.y * 16))); };
  for (const auto& pl : paths) {
    if (pl.size() == 1) {
      cv::circle(m, at(pl[0]), std::max(1, thick / 2) * 16, 1, cv::FILLED, cv::LINE_8, kShift);
      continue;
    }
    std::vector<cv::Point> pts;
    for (Vec2 p : pl) pts.push_back(at(p));
    cv::polylines(m, pts, false, 1, thick, cv::LINE_8, kShift);
  }
  return m;
}

namespace {

// Pixels of the scope (all of them when it is everything).
cv::Mat scope_mask(const Scope& scope, cv::Size size) {
  if (scope.everything()) return cv::Mat(size, CV_8UC1, cv::Scalar(1));
  cv::Mat m = cv::Mat::zeros(size, CV_8UC1);
  const BBox b = scope.bounds();
  const int x0 = std::max(0, static_cast<int>(std::floor(b.x0))), x1 = std::min(size.width - 1, static_cast<int>(std::ceil(b.x1)));
  const int y0 = std::max(0, static_cast<int>(std::floor(b.y0))), y1 = std::min(size.height - 1, static_cast<int>(std::ceil(b.y1)));
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) m.at<uchar>(y, x) = scope.contains({double(x), double(y)});
  return m;
}

// Distance of every pixel to the nearest ink pixel of `mask` (huge when it has none).
cv::Mat distance_to(const cv::Mat& mask) {
  cv::Mat paper = mask == 0, d;
  cv::distanceTransform(paper, d, cv::DIST_L2, cv::DIST_MASK_PRECISE);
  return d;
}

}  // namespace

PixelComparison compare_masks(const cv::Mat& reference, const cv::Mat& drawn, double tol, const Scope& scope) {
  PixelComparison c;
  const cv::Mat inside = scope_mask(scope, reference.size());
  const cv::Mat ref = (reference != 0) & (inside != 0), rev = (drawn != 0) & (inside != 0);
  const cv::Mat to_ref = distance_to(reference != 0), to_rev = distance_to(drawn != 0);
  c.missed = cv::Mat::zeros(reference.size(), CV_8UC1);
  c.spurious = c.missed.clone();
  c.agreed = c.missed.clone();
  double sum_ref = 0, sum_rev = 0;
  int near_ref = 0, near_rev = 0;
  for (int y = 0; y < ref.rows; ++y)
    for (int x = 0; x < ref.cols; ++x) {
      if (ref.at<uchar>(y, x)) {
        const double d = to_rev.at<float>(y, x);
        ++c.reference_px;
        sum_ref += d;
        if (d <= tol) ++near_rev;
        else c.missed.at<uchar>(y, x) = 1;
      }
      if (rev.at<uchar>(y, x)) {
        const double d = to_ref.at<float>(y, x);
        ++c.drawn_px;
        sum_rev += d;
        if (d <= tol) ++near_ref, c.agreed.at<uchar>(y, x) = 1;
        else c.spurious.at<uchar>(y, x) = 1;
      }
    }
  c.missed_px = c.reference_px - near_rev;
  c.spurious_px = c.drawn_px - near_ref;
  c.precision = c.drawn_px ? double(near_ref) / c.drawn_px : 0;
  c.recall = c.reference_px ? double(near_rev) / c.reference_px : 0;
  c.f1 = c.precision + c.recall > 0 ? 2 * c.precision * c.recall / (c.precision + c.recall) : 0;
  // As the scorer has it (eval/coverage.hpp): nothing drawn is as far as the image's diagonal;
  // nothing to draw leaves no distance to measure.
  if (!c.drawn_px) c.chamfer_px = std::hypot(ref.cols, ref.rows);
  else c.chamfer_px = c.reference_px ? 0.5 * (sum_ref / c.reference_px + sum_rev / c.drawn_px) : NAN;
  return c;
}

Graph traced_graph(const cv::Mat& gray) {
  Scene traced;
  skeletonize(traced, gray);
  return traced.graph ? *traced.graph : Graph{};
}

// ---------------------------------------------------------------- topology

namespace {

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), size_t(0)); }
  size_t find(size_t a) { return parent[a] == a ? a : parent[a] = find(parent[a]); }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
};

std::string at_text(Vec2 p) { return fmt::format("({:.1f}, {:.1f})", p.x, p.y); }

}  // namespace

std::map<int, int> Topology::degree_histogram() const {
  std::map<int, int> h;
  for (const auto& j : junctions) ++h[j.degree];
  return h;
}

json Topology::to_json() const {
  json degrees = json::object(), ends = json::array(), joints = json::array();
  for (const auto& [d, n] : degree_histogram()) degrees[std::to_string(d)] = n;
  for (Vec2 p : end_points) ends.push_back(point_json(p));
  for (const auto& j : junctions) joints.push_back({{"at", point_json(j.at)}, {"degree", j.degree}});
  return {{"components", components}, {"holes", holes}, {"euler_number", euler()}, {"dots", dots},
          {"end_point_count", end_points.size()}, {"junction_count", junctions.size()}, {"junction_degrees", degrees},
          {"end_points", ends}, {"junctions", joints}};
}

Topology topology_of(const Graph& g, const Scope& scope) {
  Topology t;
  std::map<std::string, size_t> index;  // vertex id -> position in the union-find
  std::map<std::string, int> degree;
  auto vertex = [&](const std::string& id) {
    auto it = index.find(id);
    return it != index.end() ? it->second : index.emplace(id, index.size()).first->second;
  };
  std::vector<const Edge*> kept;
  for (const auto& e : g.edges)
    if (scope.everything() || scope.touches(e.points)) kept.push_back(&e);
  UnionFind uf(2 * kept.size() + 1);
  int cycle_edges = 0;
  std::vector<bool> dot_edge(kept.size(), false);
  for (size_t i = 0; i < kept.size(); ++i) {
    const Edge& e = *kept[i];
    const size_t a = vertex(e.v0), b = vertex(e.v1);
    // A dot is a single-point edge: a component of its own, no cycle.
    dot_edge[i] = e.points.size() < 2;
    if (dot_edge[i]) continue;
    uf.join(a, b);
    ++cycle_edges;
    ++degree[e.v0];
    ++degree[e.v1];
  }
  std::map<size_t, size_t> component_of_root;
  std::vector<std::vector<Polyline>> comps;
  for (size_t i = 0; i < kept.size(); ++i) {
    const size_t root = uf.find(vertex(kept[i]->v0));
    auto it = component_of_root.find(root);
    if (it == component_of_root.end()) {
      it = component_of_root.emplace(root, comps.size()).first;
      comps.emplace_back();
    }
    comps[it->second].push_back(kept[i]->points);
    t.dots += dot_edge[i];
  }
  t.components = static_cast<int>(comps.size());
  t.holes = cycle_edges - static_cast<int>(index.size()) + t.components;
  for (const auto& c : comps) {
    BBox b;
    for (const auto& pl : c)
      for (Vec2 p : pl) b.add(p);
    t.component_boxes.push_back(b);
    t.component_paths.push_back(c);
  }
  for (const auto& v : g.vertices) {
    auto d = degree.find(v.id);
    if (d == degree.end() || !(scope.everything() || scope.contains(v.p))) continue;
    if (d->second == 1) t.end_points.push_back(v.p);
    if (d->second >= 3) t.junctions.push_back({v.p, d->second});
  }
  return t;
}

json TopologyDifference::to_json() const {
  return {{"feature", feature}, {"change", change}, {"at", point_json(at)}, {"reference", reference},
          {"revision", revision}, {"text", text}};
}

std::vector<TopologyDifference> compare_topology(const Topology& ref, const Topology& rev, double match_px, Vec2 centre) {
  std::vector<TopologyDifference> out;
  auto count = [&](const char* feature, int a, int b) {
    if (a != b)
      out.push_back({feature, b > a ? "more" : "fewer", centre, a, b, fmt::format("{} {} -> {}", feature, a, b)});
  };
  count("components", ref.components, rev.components);
  count("holes", ref.holes, rev.holes);
  auto unmatched_points = [&](const std::vector<Vec2>& from, const std::vector<Vec2>& other, const char* change) {
    for (Vec2 p : from) {
      bool near = false;
      for (Vec2 q : other) near = near || dist(p, q) <= match_px;
      if (!near) out.push_back({"end_point", change, p, 1, 1, fmt::format("end point {} at {}", change, at_text(p))});
    }
  };
  unmatched_points(ref.end_points, rev.end_points, "gone");
  unmatched_points(rev.end_points, ref.end_points, "new");
  auto unmatched_junctions = [&](const std::vector<Junction>& from, const std::vector<Junction>& other, const char* change,
                                 bool from_ref) {
    for (const auto& j : from) {
      bool near = false;
      for (const auto& k : other) near = near || (k.degree == j.degree && dist(j.at, k.at) <= match_px);
      if (!near)
        out.push_back({"junction", change, j.at, from_ref ? j.degree : 0, from_ref ? 0 : j.degree,
                       fmt::format("junction of degree {} {} at {}", j.degree, change, at_text(j.at))});
    }
  };
  unmatched_junctions(ref.junctions, rev.junctions, "gone", true);
  unmatched_junctions(rev.junctions, ref.junctions, "new", false);
  auto unmatched_components = [&](const Topology& from, const Topology& other, const char* change) {
    std::vector<Polyline> all;
    for (const auto& c : other.component_paths) all.insert(all.end(), c.begin(), c.end());
    const NearestPoints near(all, 1.0);
    for (size_t i = 0; i < from.component_paths.size(); ++i) {
      bool touched = false;
      for (const auto& pl : from.component_paths[i])
        for (Vec2 p : pl) touched = touched || (!near.empty() && near.distance(p) <= match_px);
      if (touched) continue;
      const BBox& b = from.component_boxes[i];
      out.push_back({"component", change, {(b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2}, 0, 0,
                     fmt::format("component {} at [{:.0f}, {:.0f}, {:.0f}, {:.0f}]", change, b.x0, b.y0, b.x1, b.y1)});
    }
  };
  unmatched_components(ref, rev, "gone");
  unmatched_components(rev, ref, "new");
  return out;
}

}  // namespace sv
