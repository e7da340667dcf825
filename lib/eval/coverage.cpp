#include "eval/coverage.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace sv {

namespace {

constexpr double kStep = 0.25;

struct Samples {
  std::vector<Vec2> p;
  std::vector<double> w;
};

// Midpoints of sub-intervals no longer than kStep, each weighted by its length.
Samples sample(const std::vector<Polyline>& polys, double dot_weight) {
  Samples s;
  for (const auto& pl : polys) {
    if (pl.empty()) continue;
    double total = polyline_length(pl);
    if (total < 1e-9) {
      s.p.push_back(pl.front());
      s.w.push_back(dot_weight);
      continue;
    }
    size_t first = s.w.size();
    for (size_t i = 1; i < pl.size(); ++i) {
      Vec2 a = pl[i - 1], v = pl[i] - a;
      double l = norm(v);
      if (l < 1e-12) continue;
      int n = static_cast<int>(std::ceil(l / kStep));
      for (int k = 0; k < n; ++k) {
        s.p.push_back(a + v * ((k + 0.5) / n));
        s.w.push_back(l / n);
      }
    }
    if (total < 1.0 && dot_weight > total)
      for (size_t k = first; k < s.w.size(); ++k) s.w[k] *= dot_weight / total;
  }
  return s;
}

// Nearest-point queries over a uniform grid, searched in growing rings of cells.
class PointGrid {
 public:
  PointGrid(std::vector<Vec2> pts, double cell) : pts_(std::move(pts)), cell_(cell) {
    for (size_t i = 0; i < pts_.size(); ++i) cells_[key(cx(pts_[i].x), cx(pts_[i].y))].push_back(i);
  }
  double nearest(Vec2 q) const {
    if (pts_.empty()) return std::numeric_limits<double>::infinity();
    long qx = cx(q.x), qy = cx(q.y);
    // Searched by squared distance (hypot is most of the cost); the nearest point's distance is
    // then the same hypot as before.
    double best2 = std::numeric_limits<double>::infinity();
    size_t best_i = 0;
    for (long r = 0;; ++r) {
      // Every point in ring r is at least (r - 1) cells away.
      const double reach = (r - 1) * cell_;
      if (r > 0 && reach > 0 && reach * reach > best2) break;
      for (long dy = -r; dy <= r; ++dy)
        for (long dx = -r; dx <= r; ++dx) {
          if (std::max(std::labs(dx), std::labs(dy)) != r) continue;
          auto it = cells_.find(key(qx + dx, qy + dy));
          if (it == cells_.end()) continue;
          for (size_t i : it->second) {
            const Vec2 d = q - pts_[i];
            const double d2 = d.x * d.x + d.y * d.y;
            if (d2 < best2) best2 = d2, best_i = i;
          }
        }
      if (r > 1'000'000) break;
    }
    return dist(q, pts_[best_i]);
  }

 private:
  long cx(double v) const { return static_cast<long>(std::floor(v / cell_)); }
  static long long key(long x, long y) { return (static_cast<long long>(x) << 32) ^ (y & 0xffffffffLL); }
  std::vector<Vec2> pts_;
  double cell_;
  std::unordered_map<long long, std::vector<size_t>> cells_;
};

// Sample midpoints plus every vertex, so endpoints are exact targets.
std::vector<Vec2> targets(const std::vector<Polyline>& polys) {
  std::vector<Vec2> t = sample(polys, 0).p;
  for (const auto& pl : polys) t.insert(t.end(), pl.begin(), pl.end());
  return t;
}

double f1_of(double p, double r) { return p + r > 0 ? 2 * p * r / (p + r) : 0; }

}  // namespace

nlohmann::json Coverage::to_json() const {
  return {{"precision", precision}, {"recall", recall}, {"f1", f1}, {"precision_tol1", precision_tol1},
          {"recall_tol1", recall_tol1}, {"f1_tol1", f1_tol1}, {"chamfer_px", chamfer_px},
          {"hausdorff_px", hausdorff_px}, {"drawn_length_px", drawn_length_px},
          {"reference_length_px", reference_length_px}};
}

Coverage measure_coverage(const std::vector<Polyline>& drawn, const std::vector<Polyline>& reference,
                          double tol, double image_diagonal) {
  Coverage c;
  Samples d = sample(drawn, 0), r = sample(reference, 1);
  for (double w : d.w) c.drawn_length_px += w;
  for (const auto& pl : reference) c.reference_length_px += polyline_length(pl);
  std::vector<Vec2> dt = targets(drawn);
  if (dt.empty()) {
    c.chamfer_px = c.hausdorff_px = image_diagonal;
    return c;
  }
  PointGrid to_ref(targets(reference), 4.0), to_drawn(std::move(dt), 4.0);
  // Weighted distances of one side's samples to the other side.
  struct Side {
    double w = 0, in = 0, in1 = 0, sum = 0, max = 0;
  };
  auto measure = [&](const Samples& from, const PointGrid& to) {
    Side r;
    for (size_t i = 0; i < from.p.size(); ++i) {
      double e = to.nearest(from.p[i]);
      r.w += from.w[i];
      r.in += e <= tol ? from.w[i] : 0;
      r.in1 += e <= 1.0 ? from.w[i] : 0;
      r.sum += from.w[i] * e;
      r.max = std::max(r.max, e);
    }
    return r;
  };
  const Side dp = measure(d, to_ref), rp = measure(r, to_drawn);
  if (dp.w > 0) {
    c.precision = dp.in / dp.w;
    c.precision_tol1 = dp.in1 / dp.w;
  }
  c.covered_px = rp.in;
  if (rp.w > 0) {
    c.recall = rp.in / rp.w;
    c.recall_tol1 = rp.in1 / rp.w;
  }
  c.f1 = f1_of(c.precision, c.recall);
  c.f1_tol1 = f1_of(c.precision_tol1, c.recall_tol1);
  c.chamfer_px = 0.5 * ((dp.w > 0 ? dp.sum / dp.w : image_diagonal) + (rp.w > 0 ? rp.sum / rp.w : 0));
  c.hausdorff_px = std::max(dp.w > 0 ? dp.max : image_diagonal, rp.max);
  return c;
}

std::vector<Polyline> ground_truth_polylines(const nlohmann::json& gt) {
  std::vector<Polyline> out;
  for (const auto& pl : gt.at("polylines")) {
    Polyline p;
    for (const auto& q : pl) p.push_back({q.at(0).get<double>(), q.at(1).get<double>()});
    if (!p.empty()) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace sv
