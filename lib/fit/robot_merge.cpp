#include "fit/robot_merge.hpp"

#include <cmath>

#include "robot/motion.hpp"

namespace sv::fitting {

namespace {

double move_time(const Shape& s, double ppi) {
  if (s.type == PrimType::line) return line_time_s(s.length(), ppi);
  return arc_time_s(s.radius, rad2deg(s.sweep_rad()), ppi);
}

double turn_time(Vec2 u, Vec2 v) { return spin_time_s(rad2deg(std::abs(std::atan2(cross(u, v), dot(u, v))))); }

// The chain's drawing time at `ppi`: each move, and the spin at each joint (the closing one when
// closed), with each line driven forwards or backwards, whichever turns less overall (as the
// router may). A Viterbi pass over the two headings of each line.
double chain_time(const std::vector<const Shape*>& chain, bool closed, double ppi) {
  const size_t n = chain.size();
  if (n == 0) return 0;
  auto heading_in = [&](size_t k, int back) { return chain[k]->start_tangent() * (back ? -1.0 : 1.0); };
  auto heading_out = [&](size_t k, int back) { return chain[k]->end_tangent() * (back ? -1.0 : 1.0); };
  auto states = [&](size_t k) { return chain[k]->type == PrimType::line ? 2 : 1; };
  double moves = 0;
  for (const Shape* s : chain) moves += move_time(*s, ppi);
  double best = INFINITY;
  // A closed chain's first piece is fixed in each of its states in turn, so the closing joint is known.
  for (int first = 0; first < (closed ? states(0) : 1); ++first) {
    double cost[2] = {0, states(0) == 2 ? 0 : INFINITY};
    if (closed) cost[1 - first] = INFINITY;
    for (size_t k = 1; k < n; ++k) {
      double next[2] = {INFINITY, INFINITY};
      for (int b = 0; b < states(k); ++b)
        for (int a = 0; a < 2; ++a)
          if (std::isfinite(cost[a]))
            next[b] = std::min(next[b], cost[a] + turn_time(heading_out(k - 1, a), heading_in(k, b)));
      cost[0] = next[0], cost[1] = next[1];
    }
    for (int a = 0; a < 2; ++a)
      if (std::isfinite(cost[a]))
        best = std::min(best, cost[a] + (closed ? turn_time(heading_out(n - 1, a), heading_in(0, first)) : 0));
  }
  return moves + best;
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
    std::vector<const Shape*> chain;
    for (const Piece& pc : pieces) chain.push_back(&pc.shape);
    const double now = chain_time(chain, closed, ppi);
    double best_gain = 1e-6;
    int best_i = -1, best_j = -1;
    Shape best_shape;
    for (int i = 0; i < n; ++i)
      for (int j = i; j <= i + 2 && j < n; ++j) {
        if (closed && j - i + 1 == n) continue;
        Points run = pts.subspan(pieces[i].i0, pieces[j].i1 - pieces[i].i0 + 1);
        for (const Shape& s : candidates(pieces[i].shape.p0, pieces[j].shape.p1, run, tolerance, p)) {
          if (i == j && s.type == pieces[i].shape.type) continue;  // one piece: only a line for an arc
          std::vector<const Shape*> merged(chain.begin(), chain.begin() + i);
          merged.push_back(&s);
          merged.insert(merged.end(), chain.begin() + j + 1, chain.end());
          if (double gain = now - chain_time(merged, closed, ppi); gain > best_gain) {
            best_gain = gain;
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
