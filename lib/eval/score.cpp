#include "eval/score.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sv {

NearestPoints::NearestPoints(const std::vector<Polyline>& polys, double step) : cell_(4.0) {
  for (const auto& pl : polys) {
    if (pl.size() == 1) pts_.push_back(pl[0]);
    for (size_t i = 1; i < pl.size(); ++i) {
      Vec2 a = pl[i - 1], v = pl[i] - a;
      int n = std::max(1, static_cast<int>(std::ceil(norm(v) / step)));
      for (int k = 0; k < n; ++k) pts_.push_back(a + v * (double(k) / n));
      if (i + 1 == pl.size()) pts_.push_back(pl[i]);
    }
  }
  for (size_t i = 0; i < pts_.size(); ++i) grid_[{cell(pts_[i].x), cell(pts_[i].y)}].push_back(i);
}

long NearestPoints::cell(double v) const { return static_cast<long>(std::floor(v / cell_)); }

double NearestPoints::distance(Vec2 q, double cap) const {
  double best = INFINITY;
  if (pts_.empty()) return best;
  long qx = cell(q.x), qy = cell(q.y);
  for (long r = 0; r < 100000; ++r) {
    if (r > 0 && (r - 1) * cell_ > std::min(best, cap)) break;
    for (long dy = -r; dy <= r; ++dy)
      for (long dx = -r; dx <= r; ++dx) {
        if (std::max(std::labs(dx), std::labs(dy)) != r) continue;
        auto it = grid_.find({qx + dx, qy + dy});
        if (it == grid_.end()) continue;
        for (size_t i : it->second) best = std::min(best, dist(q, pts_[i]));
      }
  }
  return best;
}

std::vector<Polyline> clip_to_scope(const std::vector<Polyline>& polys, const Scope& scope, double step) {
  if (scope.everything()) return polys;
  std::vector<Polyline> out;
  for (const auto& pl : polys) {
    Polyline run;
    auto flush = [&] {
      if (!run.empty()) out.push_back(run);
      run.clear();
    };
    auto visit = [&](Vec2 q) {
      if (scope.contains(q)) run.push_back(q);
      else flush();
    };
    if (pl.size() == 1) visit(pl[0]);
    for (size_t i = 1; i < pl.size(); ++i) {
      Vec2 a = pl[i - 1], v = pl[i] - a;
      int n = std::max(1, static_cast<int>(std::ceil(norm(v) / step)));
      for (int k = i == 1 ? 0 : 1; k <= n; ++k) visit(a + v * (double(k) / n));
    }
    flush();
  }
  return out;
}

namespace {

struct Flagged {
  Vec2 p;
  double w;
};

int find_root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// Length-weighted samples (midpoints of sub-steps) of the polylines; a dot (a polyline of no
// length) is one sample of weight `dot_weight`.
std::vector<Flagged> weighted_samples(const std::vector<Polyline>& polys, double step, double dot_weight) {
  std::vector<Flagged> out;
  for (const auto& pl : polys) {
    if (!pl.empty() && polyline_length(pl) < 1e-9) out.push_back({pl.front(), dot_weight});
    for (size_t i = 1; i < pl.size(); ++i) {
      Vec2 a = pl[i - 1], v = pl[i] - a;
      double l = norm(v);
      if (l < 1e-9) continue;
      int n = static_cast<int>(std::ceil(l / step));
      for (int k = 0; k < n; ++k) out.push_back({a + v * ((k + 0.5) / n), l / n});
    }
  }
  return out;
}

// Groups flagged samples closer than `link` (single linkage) into findings.
std::vector<InkFinding> cluster(const Scene& s, const std::vector<Flagged>& f, const std::string& kind, double link,
                                double sw) {
  std::vector<int> parent(f.size());
  std::iota(parent.begin(), parent.end(), 0);
  std::map<std::pair<long, long>, std::vector<int>> grid;
  auto cell = [&](double v) { return static_cast<long>(std::floor(v / link)); };
  for (int i = 0; i < static_cast<int>(f.size()); ++i) {
    long cx = cell(f[i].p.x), cy = cell(f[i].p.y);
    for (long dy = -1; dy <= 1; ++dy)
      for (long dx = -1; dx <= 1; ++dx) {
        auto it = grid.find({cx + dx, cy + dy});
        if (it == grid.end()) continue;
        for (int j : it->second)
          if (dist(f[i].p, f[j].p) <= link) parent[find_root(parent, i)] = find_root(parent, j);
      }
    grid[{cx, cy}].push_back(i);
  }
  std::map<int, InkFinding> groups;
  std::map<int, Vec2> sums;
  for (int i = 0; i < static_cast<int>(f.size()); ++i) {
    int r = find_root(parent, i);
    InkFinding& g = groups[r];
    g.kind = kind;
    g.box.add(f[i].p);
    g.length_px += f[i].w;
    sums[r] = sums[r] + f[i].p * f[i].w;
  }
  std::vector<InkFinding> out;
  for (auto& [r, g] : groups) {
    if (g.length_px < std::max(1.0, 0.5 * sw)) continue;  // specks at stroke ends and joins
    g.centroid = sums[r] / g.length_px;
    g.area_px = static_cast<int>(std::lround(g.length_px * sw));
    g.severity = g.length_px < 2 * sw ? "minor" : g.length_px < 8 * sw ? "moderate" : "severe";
    g.nearest_primitive = nearest_primitive(s, g.centroid, &g.nearest_distance_px);
    if (!std::isfinite(g.nearest_distance_px)) g.nearest_distance_px = 0;
    out.push_back(g);
  }
  std::stable_sort(out.begin(), out.end(), [](const InkFinding& a, const InkFinding& b) {
    if (a.length_px != b.length_px) return a.length_px > b.length_px;
    return std::tie(a.centroid.x, a.centroid.y) < std::tie(b.centroid.x, b.centroid.y);
  });
  return out;
}

}  // namespace

CoverageReport analyze_coverage(const Scene& s, const Drawing& d, const std::vector<Polyline>& reference,
                                double tolerance_px, const Scope& scope, bool clustered) {
  CoverageReport rep;
  rep.tolerance_px = tolerance_px;
  const double sw = stroke_width_of(s);
  std::vector<Polyline> ref = clip_to_scope(reference, scope), drawn = clip_to_scope(d.strokes, scope);
  rep.metrics = measure_coverage(drawn, ref, tolerance_px, image_diagonal(s));
  NearestPoints to_drawn(drawn, 0.5), to_ref(ref, 0.5);
  std::vector<Flagged> missed, spurious;
  // A missed dot stands for about a stroke width of ink, so it is a finding, not a speck.
  for (const auto& f : weighted_samples(ref, 0.5, sw))
    if (to_drawn.distance(f.p) > tolerance_px) missed.push_back(f), rep.missed.push_back(f.p);
  for (const auto& f : weighted_samples(drawn, 0.5, sw))
    if (to_ref.distance(f.p) > tolerance_px) spurious.push_back(f), rep.spurious.push_back(f.p);
  // Clustered, disagreements within a stroke width merge into one region; unclustered, only
  // contiguous runs along one path do (samples are 0.5 px apart).
  double link = clustered ? std::max(tolerance_px, sw) : 0.75;
  rep.findings = cluster(s, missed, "missed_ink", link, sw);
  auto sp = cluster(s, spurious, "spurious_ink", link, sw);
  rep.findings.insert(rep.findings.end(), sp.begin(), sp.end());
  std::stable_sort(rep.findings.begin(), rep.findings.end(),
                   [](const InkFinding& a, const InkFinding& b) { return a.length_px > b.length_px; });
  return rep;
}

double image_diagonal(const Scene& s) { return s.source ? std::hypot(s.source->width, s.source->height) : 1000.0; }

Scores score(const Scene& s, const std::vector<Polyline>& reference, double tol, const Scope& scope) {
  Scores sc;
  Drawing d = drawing_of(s);
  // The figures only (analyze_coverage's findings are not needed here).
  const Coverage cov = measure_coverage(clip_to_scope(d.strokes, scope), clip_to_scope(reference, scope), tol, image_diagonal(s));
  sc.timed = d.from_commands;
  sc.precision = cov.precision, sc.recall = cov.recall, sc.f1 = cov.f1, sc.f1_1px = cov.f1_tol1;
  sc.chamfer_px = cov.chamfer_px, sc.hausdorff_px = cov.hausdorff_px;
  if (scope.everything()) {
    sc.draw_time_s = d.total_s;
    sc.primitive_count = s.primitives ? static_cast<int>(s.primitives->size()) : 0;
    sc.pen_up_count = d.pen_ups;
    return sc;
  }
  if (s.primitives)
    for (const auto& p : *s.primitives)
      if (scope.touches(p)) {
        ++sc.primitive_count;
        auto t = d.primitive_s.find(p.id);
        sc.draw_time_s += t == d.primitive_s.end() ? 0 : t->second;
      }
  for (const Polyline& p : d.pen_up) sc.pen_up_count += scope.contains(p.front()) || scope.contains(p.back());
  return sc;
}

json metrics_json(const Scores& sc, const json& wanted) {
  json m = json::object();
  for (const auto& w : wanted) {
    const std::string k = w;
    if (k == "draw_time") m["draw_time_s"] = round_to(sc.draw_time_s, 1e-3);
    if (k == "primitive_count") m["primitive_count"] = sc.primitive_count;
    if (k == "pen_up_count") m["pen_up_count"] = sc.pen_up_count;
    if (k == "precision") m["precision"] = round_to(sc.precision, 1e-3);
    if (k == "recall") m["recall"] = round_to(sc.recall, 1e-3);
    if (k == "f1") m["f1"] = round_to(sc.f1, 1e-3);
    if (k == "f1_1px") m["f1_1px"] = round_to(sc.f1_1px, 1e-3);
    if (k == "chamfer") m["chamfer_px"] = round_to(sc.chamfer_px, 1e-3);
  }
  return m;
}


}  // namespace sv
