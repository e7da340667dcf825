#include "fit/segment.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "robot/motion.hpp"

namespace sv::fitting {

namespace {

// Positions by arc length along a polyline; on a cyclic one, modulo the perimeter.
class ArcLength {
 public:
  ArcLength(Points pts, bool cyclic) : pts_(pts), cyclic_(cyclic) {
    s_.assign(1, 0.0);
    size_t n = pts.size();
    size_t segments = cyclic ? n : n - 1;
    for (size_t k = 0; k < segments; ++k) s_.push_back(s_.back() + dist(pts[k], pts[(k + 1) % n]));
  }
  double total() const { return s_.back(); }
  double of(int k) const { return s_[k]; }
  // nullopt beyond the ends of an open polyline.
  std::optional<Vec2> at(double s) const {
    double L = total();
    if (cyclic_) {
      if (L <= 0) return pts_[0];
      s = std::fmod(s, L);
      if (s < 0) s += L;
    } else if (s < 0 || s > L) {
      return std::nullopt;
    }
    size_t k = std::upper_bound(s_.begin(), s_.end(), s) - s_.begin();
    k = std::clamp<size_t>(k, 1, s_.size() - 1) - 1;
    double len = s_[k + 1] - s_[k];
    double t = len > 0 ? (s - s_[k]) / len : 0;
    Vec2 a = pts_[k], b = pts_[(k + 1) % pts_.size()];
    return a + (b - a) * t;
  }

 private:
  Points pts_;
  bool cyclic_;
  std::vector<double> s_;
};

// Turn of direction at point k between the chords from w before and to w after (radians,
// unsigned); nullopt where the window leaves an open polyline.
std::optional<double> turn_at(const ArcLength& al, Points pts, int k, double w) {
  auto a = al.at(al.of(k) - w), b = al.at(al.of(k) + w);
  if (!a || !b) return std::nullopt;
  Vec2 u = pts[k] - *a, v = *b - pts[k];
  if (norm(u) < 1e-9 || norm(v) < 1e-9) return 0.0;
  return std::abs(std::atan2(cross(u, v), dot(u, v)));
}

}  // namespace

std::vector<Corner> find_corners(Points pts, bool cyclic, const FitParams& p) {
  std::vector<Corner> out;
  int n = static_cast<int>(pts.size());
  if (n < 3) return out;
  ArcLength al(pts, cyclic);
  double w = p.corner_window_px, threshold = deg2rad(p.corner_angle_deg);
  std::vector<double> turn(n, 0.0);
  for (int k = 0; k < n; ++k) turn[k] = turn_at(al, pts, k, w).value_or(0.0);
  double L = al.total();
  auto gap = [&](int a, int b) {
    double d = std::abs(al.of(a) - al.of(b));
    return cyclic ? std::min(d, L - d) : d;
  };
  for (int k = 0; k < n; ++k) {
    if (turn[k] < threshold) continue;
    // Concentrated: over twice the window a corner keeps its turn, an arc doubles it.
    auto wide = turn_at(al, pts, k, 2 * w);
    if (wide && *wide > 1.5 * turn[k]) continue;
    bool is_max = true;
    for (int d = 1; d < n && is_max; ++d) {
      bool any = false;
      for (int j : {k - d, k + d}) {
        if (cyclic)
          j = (j % n + n) % n;
        else if (j < 0 || j >= n)
          continue;
        if (gap(j, k) > w) continue;
        any = true;
        if (turn[j] > turn[k] || (turn[j] == turn[k] && j < k)) is_max = false;
      }
      if (!any) break;
    }
    if (is_max) out.push_back({k, turn[k]});
  }
  return out;
}

std::vector<double> ink_corner_turns(Points pts, bool cyclic, const std::vector<int>& at, double w) {
  std::vector<double> out;
  const int n = static_cast<int>(pts.size());
  if (n < 3) return std::vector<double>(at.size(), 0.0);
  ArcLength al(pts, cyclic);
  const double L = al.total();
  // Open polylines: the chords from as far as the polyline reaches, at most the window.
  auto turn = [&](int k, double win) {
    double s = al.of(k);
    double back = cyclic ? win : std::min(win, s), ahead = cyclic ? win : std::min(win, L - s);
    Vec2 u = pts[k] - *al.at(s - back), v = *al.at(s + ahead) - pts[k];
    if (norm(u) < 1e-9 || norm(v) < 1e-9) return 0.0;
    return std::abs(std::atan2(cross(u, v), dot(u, v)));
  };
  for (int k : at) {
    k = cyclic ? ((k % n) + n) % n : std::clamp(k, 0, n - 1);
    out.push_back(std::max(0.0, 2 * turn(k, w) - turn(k, 2 * w)));
  }
  return out;
}

Segmenter::Segmenter(Points pts, const FitParams& p)
    : pts_(pts), p_(p), moments_(pts), tol_(p.tolerance_px) {}

// The search for breakpoints asks about many spans more than once (half of them, over the
// evaluation drawings): each answer is kept.
bool Segmenter::line_fits(int i, int j) const {
  auto [known, fresh] = line_fits_.try_emplace(span_key(i, j), false);
  if (fresh) known->second = line_within(i, j);
  return known->second;
}

bool Segmenter::line_within(int i, int j) const {
  int n = j - i + 1;
  if (n <= 2) return true;
  // A root-mean-square residual above tolerance means some sample is farther, and so some
  // point: a sample between two points is no farther from a line than both.
  if (moments_.line_sse(i, j) > moments_.samples(i, j) * tol_ * tol_) return false;
  Points span = pts_.subspan(i, n);
  ShapeDistance d(line_segment(fit_line(span), span));
  for (Vec2 q : span)
    if (d(q) > tol_) return false;
  return true;
}

std::optional<Shape> Segmenter::arc_fits(int i, int j, bool geometric) const {
  int n = j - i + 1;
  if (n < 3) return std::nullopt;
  // Kasa's residual is only approximately geometric: screen with a margin.
  auto kasa = moments_.circle_within(i, j, 2.25 * moments_.samples(i, j) * tol_ * tol_);
  if (!kasa) return std::nullopt;
  Points span = pts_.subspan(i, n);
  const double max_sweep = deg2rad(p_.max_sweep_deg), min_sweep = deg2rad(p_.min_arc_sweep_deg);
  // The arc of a circle through the span, its largest point distance (inf if gated out),
  // measured until it passes `stop`, the largest figure it is compared with below.
  auto arc_of = [&](const Circle& c, double stop) -> std::pair<std::optional<Shape>, double> {
    auto arc = arc_on_circle(c, span);
    if (!arc || std::abs(arc->sweep_rad()) > max_sweep || std::abs(arc->sweep_rad()) < min_sweep ||
        sagitta(*arc) < p_.min_arc_sagitta_px)
      return {std::nullopt, INFINITY};
    return {arc, max_distance(*arc, span, stop)};
  };
  auto [arc, worst] = arc_of(*kasa, geometric ? tol_ : 3 * tol_);
  if (arc && worst <= tol_ && !geometric) return arc;
  // Kasa shrinks the radius of short noisy arcs; the geometric fit may still succeed.
  if (arc && worst > 3 * tol_ && !geometric) return std::nullopt;
  auto [refined, refined_worst] = arc_of(refine_circle(span, *kasa), tol_);
  if (refined && refined_worst <= tol_) return refined;
  if (arc && worst <= tol_) return arc;
  return std::nullopt;
}

bool Segmenter::fits(int i, int j, bool lines_only) const {
  if (line_fits(i, j)) return true;
  if (lines_only) return false;
  auto [known, fresh] = arc_fits_.try_emplace(span_key(i, j), false);
  if (fresh) known->second = arc_fits(i, j, false).has_value();
  return known->second;
}

std::optional<Shape> Segmenter::fit_span(int i, int j) const {
  if (line_fits(i, j)) {
    Points span = pts_.subspan(i, j - i + 1);
    return line_segment(fit_line(span), span);
  }
  return arc_fits(i, j, true);
}

int Segmenter::reach_forward(int i, int known_good, int limit, bool lines_only) const {
  int good = known_good, bad = -1, step = 1;
  while (good < limit) {
    int j = std::min(good + step, limit);
    if (!fits(i, j, lines_only)) {
      bad = j;
      break;
    }
    good = j;
    step *= 2;
  }
  if (bad < 0) return good;
  while (bad - good > 1) {
    int mid = good + (bad - good) / 2;
    (fits(i, mid, lines_only) ? good : bad) = mid;
  }
  return good;
}

int Segmenter::reach_backward(int j, int known_good, int limit) const {
  int good = known_good, bad = -1, step = 1;
  while (good > limit) {
    int i = std::max(good - step, limit);
    if (!fits(i, j, false)) {
      bad = i;
      break;
    }
    good = i;
    step *= 2;
  }
  if (bad < 0) return good;
  while (good - bad > 1) {
    int mid = bad + (good - bad) / 2;
    (fits(mid, j, false) ? good : bad) = mid;
  }
  return good;
}

double Segmenter::span_cost(int i, int j, bool as_line) const {
  double sse =
      as_line ? moments_.line_sse(i, j) : p_.arc_cost * tol_ * tol_ + moments_.circle_sse(i, j);
  return std::min(sse / (tol_ * tol_), 1e12);
}

std::vector<int> Segmenter::breakpoints(int i0, int i1) const {
  if (i1 - i0 <= 1) return {i0, i1};
  std::vector<int> forward{i0};
  while (forward.back() < i1)
    forward.push_back(reach_forward(forward.back(), forward.back() + 1, i1, false));
  const size_t K = forward.size() - 1;
  if (K == 1) return forward;
  std::vector<int> backward(K + 1, i0);
  backward[K] = i1;
  for (size_t k = K - 1; k >= 1; --k)
    backward[k] = reach_backward(backward[k + 1], backward[k + 1] - 1, i0);
  return cheapest_cover(forward, backward);
}

static double piece_time_s(const Shape& s, double ppi) {
  if (s.type == PrimType::line || !std::isfinite(s.radius)) return line_time_s(s.length(), ppi);
  return arc_time_s(s.radius, rad2deg(s.sweep_rad()), ppi);
}

double run_time_s(const std::vector<Shape>& shapes, double ppi) {
  double t = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    t += piece_time_s(shapes[i], ppi);
    if (i == 0) continue;
    Vec2 a = shapes[i - 1].end_tangent(), b = shapes[i].start_tangent();
    t += spin_time_s(rad2deg(std::atan2(std::abs(cross(a, b)), dot(a, b))));
  }
  return t;
}

// A cover's pieces, how many are lines and the farthest point from its piece.
struct Segmenter::Cover {
  std::vector<Piece> pieces;
  int lines = 0;
  double farthest = 0;
  std::vector<Shape> shapes() const {
    std::vector<Shape> out;
    for (const Piece& q : pieces) out.push_back(q.shape);
    return out;
  }
};
Segmenter::Cover Segmenter::cover_of(const std::vector<int>& b) const {
  Cover c;
  for (size_t k = 0; k + 1 < b.size(); ++k)
    for (Piece& q : fit_pieces(b[k], b[k + 1])) {
      c.farthest = std::max(c.farthest, max_distance(q.shape, pts_.subspan(q.i0, q.i1 - q.i0 + 1)));
      c.lines += q.shape.type == PrimType::line;
      c.pieces.push_back(std::move(q));
    }
  return c;
}

std::vector<Piece> Segmenter::cover(int i0, int i1) const {
  const std::vector<int> fewest = breakpoints(i0, i1);
  if (!(p_.piece_cost > 0)) {
    std::vector<Piece> out;
    for (size_t k = 0; k + 1 < fewest.size(); ++k) {
      auto pieces = fit_pieces(fewest[k], fewest[k + 1]);
      out.insert(out.end(), pieces.begin(), pieces.end());
    }
    return out;
  }
  Cover few = cover_of(fewest);
  std::optional<Cover> rich = richer_cover(fewest, few);
  return std::move(rich ? rich->pieces : few.pieces);
}

std::optional<Segmenter::Cover> Segmenter::richer_cover(const std::vector<int>& fewest, const Cover& few) const {
  // Other structure shows where the fewest pieces leave points farther than clean ink's own
  // pieces would, and only arcs swallow lines.
  if (few.farthest <= p_.piece_fit_px || few.lines == static_cast<int>(few.pieces.size())) return std::nullopt;
  const int i0 = fewest.front(), i1 = fewest.back();
  // Candidate breakpoints: the fewest cover's own and an even grid (some 192 per span).
  constexpr int kGrid = 192;
  std::vector<int> at(fewest);
  const int stride = std::max(1, (i1 - i0) / kGrid);
  for (int x = i0; x < i1; x += stride) at.push_back(x);
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  const size_t n = at.size();
  std::vector<int> reach_any(n), reach_line(n);
  // Reaches grow with the start (sub-spans of admissible spans are admissible): each search
  // starts from the last one's reach when that still fits.
  for (size_t a = 0; a + 1 < n; ++a) {
    const int i = at[a], any = a ? reach_any[a - 1] : 0, line = a ? reach_line[a - 1] : 0;
    reach_any[a] = reach_forward(i, any > i + 1 && fits(i, any, false) ? any : i + 1, i1, false);
    reach_line[a] = reach_forward(i, line > i + 1 && line_fits(i, line) ? line : i + 1, reach_any[a], true);
  }
  const double piece = p_.piece_cost;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> best(n, kInf);
  std::vector<int> parent(n, -1), count(n, 0);
  best[0] = 0;
  for (size_t c = 1; c < n; ++c)
    for (size_t a = 0; a < c; ++a) {
      if (best[a] == kInf || at[c] > reach_any[a]) continue;
      const double v = best[a] + piece + span_cost(at[a], at[c], at[c] <= reach_line[a]);
      if (v < best[c]) best[c] = v, parent[c] = static_cast<int>(a), count[c] = count[a] + 1;
    }
  double fewest_cost = 0;
  for (size_t k = 0; k + 1 < fewest.size(); ++k)
    fewest_cost += piece + span_cost(fewest[k], fewest[k + 1], line_fits(fewest[k], fewest[k + 1]));
  if (count[n - 1] + 1 <= static_cast<int>(fewest.size()) || !(best[n - 1] < fewest_cost)) return std::nullopt;
  std::vector<int> out;
  for (int c = static_cast<int>(n) - 1; c >= 0; c = parent[c]) out.push_back(at[c]);
  std::reverse(out.begin(), out.end());
  // Only a cover with more lines that brings its farthest point much nearer, and near, is other
  // structure: a noisy stroke has lower residuals in more pieces too, but its farthest wobble
  // stays far. Nor is one the robot draws slower: structure is taken where it costs no time.
  Cover rich = cover_of(out);
  const bool structure = rich.lines > few.lines && rich.farthest <= p_.piece_fit_px &&
                         rich.farthest <= p_.piece_gain * few.farthest;
  const bool no_slower =
      !(p_.robot_ppi > 0) || run_time_s(rich.shapes(), p_.robot_ppi) <= run_time_s(few.shapes(), p_.robot_ppi);
  if (!structure || !no_slower) return std::nullopt;
  return rich;
}

std::vector<int> Segmenter::cheapest_cover(const std::vector<int>& forward,
                                           const std::vector<int>& backward) const {
  const size_t K = forward.size() - 1;
  constexpr size_t kMaxCandidates = 64;  // bounds the work on very loose windows
  std::vector<std::vector<int>> layer(K + 1);
  layer[0] = {forward[0]};
  layer[K] = {forward[K]};
  for (size_t k = 1; k < K; ++k) {
    int lo = std::min(forward[k], backward[k]), hi = std::max(forward[k], backward[k]);
    int stride = std::max<int>(1, (hi - lo + kMaxCandidates) / kMaxCandidates);
    for (int x = lo; x <= hi; x += stride) layer[k].push_back(x);
    layer[k].push_back(forward[k]);
    std::sort(layer[k].begin(), layer[k].end());
    layer[k].erase(std::unique(layer[k].begin(), layer[k].end()), layer[k].end());
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(K + 1);
  std::vector<std::vector<int>> parent(K + 1);
  best[0] = {0.0};
  parent[0] = {-1};
  for (size_t k = 1; k <= K; ++k) {
    const auto& from = layer[k - 1];
    const auto& to = layer[k];
    best[k].assign(to.size(), kInf);
    parent[k].assign(to.size(), -1);
    int limit = to.back();
    int reach_any = -1, reach_line = -1;
    for (size_t a = 0; a < from.size(); ++a) {
      int i = from[a];
      if (best[k - 1][a] == kInf || i >= limit) continue;
      // Reaches grow with i (sub-spans of admissible spans are admissible): two pointers.
      int start_any = (reach_any > i + 1 && fits(i, reach_any, false)) ? reach_any : i + 1;
      reach_any = reach_forward(i, start_any, limit, false);
      int start_line = (reach_line > i + 1 && line_fits(i, reach_line)) ? reach_line : i + 1;
      reach_line = reach_forward(i, start_line, limit, true);
      for (size_t b = 0; b < to.size(); ++b) {
        int j = to[b];
        if (j <= i || j > reach_any) continue;
        double c = best[k - 1][a] + span_cost(i, j, j <= reach_line);
        if (c < best[k][b]) {
          best[k][b] = c;
          parent[k][b] = static_cast<int>(a);
        }
      }
    }
  }
  if (best[K][0] == kInf) return forward;
  std::vector<int> out(K + 1);
  int idx = 0;
  for (size_t k = K; k > 0; --k) {
    out[k] = layer[k][idx];
    idx = parent[k][idx];
  }
  out[0] = layer[0][0];
  return out;
}

std::vector<Piece> Segmenter::fit_pieces(int i, int j) const {
  if (auto s = fit_span(i, j)) return {{*s, i, j}};
  int mid = i + (j - i) / 2;
  auto out = fit_pieces(i, mid);
  auto rest = fit_pieces(mid, j);
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

std::vector<Piece> segment_polyline(const Segmenter& seg, const std::vector<int>& fixed) {
  std::vector<Piece> out;
  for (size_t f = 0; f + 1 < fixed.size(); ++f) {
    if (fixed[f + 1] <= fixed[f]) continue;
    auto pieces = seg.cover(fixed[f], fixed[f + 1]);
    out.insert(out.end(), pieces.begin(), pieces.end());
  }
  return out;
}

}  // namespace sv::fitting
