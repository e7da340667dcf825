#include "fit/robot_merge.hpp"

#include <cmath>

#include "robot/motion.hpp"

namespace sv::fitting {

namespace {

double move_time(const Shape& s, double ppi) {
  if (s.type == PrimType::line) return line_time_s(s.length(), ppi);
  return arc_time_s(s.radius, rad2deg(s.sweep_rad()), ppi);
}

// The spin where a ends and b starts (0 for a smooth joint).
double joint_time(const Shape& a, const Shape& b) {
  Vec2 u = a.end_tangent(), v = b.start_tangent();
  return spin_time_s(rad2deg(std::abs(std::atan2(cross(u, v), dot(u, v)))));
}

// Lines and arcs from a to b within `tolerance` of the run's points.
std::vector<Shape> candidates(Vec2 a, Vec2 b, Points run, double tolerance, const FitParams& p) {
  std::vector<Shape> out;
  if (dist(a, b) < 1e-6) return out;
  Shape line = Shape::line(a, b);
  if (max_distance(line, run) <= tolerance) out.push_back(line);
  auto kasa = kasa_circle(run);
  if (!kasa) return out;
  const Circle c = refine_circle(run, *kasa);
  for (double sign : {1.0, -1.0}) {
    auto arc = fit_arc_between(a, b, sign, chord_offset(a, b, c.center), run);
    if (!arc || !std::isfinite(arc->radius) || std::abs(arc->sweep_rad()) > deg2rad(p.max_sweep_deg) ||
        sagitta(*arc) < p.min_arc_sagitta_px || max_distance(*arc, run) > tolerance)
      continue;
    out.push_back(*arc);
  }
  return out;
}

}  // namespace

void merge_for_robot(std::vector<Piece>& pieces, Points pts, bool closed, double tolerance, double ppi,
                     const FitParams& p) {
  for (;;) {
    const int n = static_cast<int>(pieces.size());
    auto at = [&](int k) -> const Shape* {
      if (k < 0 || k >= n) {
        if (!closed) return nullptr;
        k = (k + n) % n;
      }
      return &pieces[k].shape;
    };
    double best_gain = 1e-6;
    int best_i = -1, best_j = -1;
    Shape best_shape;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j <= i + 2 && j < n; ++j) {
        if (closed && j - i + 1 == n) continue;
        const Shape *prev = at(i - 1), *next = at(j + 1);
        double before = 0;
        for (int k = i; k <= j; ++k) {
          before += move_time(pieces[k].shape, ppi);
          if (k < j) before += joint_time(pieces[k].shape, pieces[k + 1].shape);
        }
        if (prev) before += joint_time(*prev, pieces[i].shape);
        if (next) before += joint_time(pieces[j].shape, *next);
        Points run = pts.subspan(pieces[i].i0, pieces[j].i1 - pieces[i].i0 + 1);
        for (const Shape& s : candidates(pieces[i].shape.p0, pieces[j].shape.p1, run, tolerance, p)) {
          double after = move_time(s, ppi) + (prev ? joint_time(*prev, s) : 0) + (next ? joint_time(s, *next) : 0);
          if (before - after > best_gain) {
            best_gain = before - after;
            best_i = i, best_j = j;
            best_shape = s;
          }
        }
      }
    if (best_i < 0) return;
    pieces[best_i] = Piece{best_shape, pieces[best_i].i0, pieces[best_j].i1};
    pieces.erase(pieces.begin() + best_i + 1, pieces.begin() + best_j + 1);
  }
}

}  // namespace sv::fitting
