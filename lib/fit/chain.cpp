#include "fit/chain.hpp"

#include <algorithm>

namespace sv::fitting {

namespace {

// The full curve a piece lies on: its line, or its arc's circle.
struct Support {
  bool is_line = true;
  Vec2 a, dir;  // line
  Vec2 center;  // circle
  double radius = 0;
};

Support support_of(const Shape& s) {
  Support u;
  if (s.type == PrimType::line || !std::isfinite(s.radius)) {
    u.a = s.p0;
    u.dir = unit(s.p1 - s.p0);
    return u;
  }
  u.is_line = false;
  u.center = s.center;
  u.radius = s.radius;
  return u;
}

Vec2 project(const Support& s, Vec2 q) {
  if (s.is_line) return s.a + s.dir * dot(q - s.a, s.dir);
  return s.center + unit(q - s.center) * s.radius;
}

std::vector<Vec2> intersections(const Support& u, const Support& v) {
  if (u.is_line && v.is_line) {
    double den = cross(u.dir, v.dir);
    if (std::abs(den) < 1e-12) return {};
    return {u.a + u.dir * (cross(v.a - u.a, v.dir) / den)};
  }
  if (u.is_line) return line_circle(u.a, u.dir, v.center, v.radius);
  if (v.is_line) return line_circle(v.a, v.dir, u.center, u.radius);
  Vec2 e = v.center - u.center;
  double d = norm(e);
  if (d < 1e-12 || d > u.radius + v.radius || d < std::abs(u.radius - v.radius)) return {};
  e = e / d;
  double along = (u.radius * u.radius - v.radius * v.radius + d * d) / (2 * d);
  double h = std::sqrt(std::max(0.0, u.radius * u.radius - along * along));
  Vec2 m = u.center + e * along;
  return {m + perp(e) * h, m - perp(e) * h};
}

struct Refit {
  Shape shape;
  double max = 0;
};

// The piece refitted between new endpoints a and b (see join_chain).
Refit refit_between(const Shape& free, Vec2 a, Vec2 b, Points pts, const FitParams& p) {
  Refit line{Shape::line(a, b), 0};
  line.max = max_distance(line.shape, pts);
  if (free.type != PrimType::arc || !std::isfinite(free.radius) || line.max <= p.tolerance_px)
    return line;
  auto arc = fit_arc_between(a, b, free.bulge, chord_offset(a, b, free.center), pts);
  if (!arc) return line;
  Refit r{*arc, max_distance(*arc, pts)};
  return r.max < line.max ? r : line;
}

// Where two pieces that continue each other smoothly touch: the foot of the circle's centre
// on the line, or the point of the line of centres on both circles. Identified by the curves
// themselves, it is far better placed than a breakpoint, which the residuals barely pin down
// where a curve leaves its tangent. nullopt when the curves do not touch within tolerance.
std::optional<Vec2> tangent_point(const Support& a, const Support& b, double tol) {
  if (a.is_line && b.is_line) return std::nullopt;
  if (a.is_line || b.is_line) {
    const Support& l = a.is_line ? a : b;
    const Support& c = a.is_line ? b : a;
    Vec2 foot = project(l, c.center);
    if (std::abs(dist(foot, c.center) - c.radius) > tol) return std::nullopt;
    return (foot + project(c, foot)) * 0.5;
  }
  Vec2 e = b.center - a.center;
  if (norm(e) < tol) return std::nullopt;
  e = unit(e);
  // Internally tangent circles touch on the far side of the smaller; externally, between.
  Vec2 on_a[2] = {a.center + e * a.radius, a.center - e * a.radius};
  Vec2 on_b[2] = {b.center + e * b.radius, b.center - e * b.radius};
  Vec2 best_a = on_a[0], best_b = on_b[0];
  double best = INFINITY;
  for (Vec2 x : on_a)
    for (Vec2 y : on_b)
      if (dist(x, y) < best) {
        best = dist(x, y);
        best_a = x;
        best_b = y;
      }
  if (best > tol) return std::nullopt;
  return (best_a + best_b) * 0.5;
}

}  // namespace

std::optional<Vec2> exact_joint(const Shape& a, const Shape& b, Vec2 q, const FitParams& p) {
  Support sa = support_of(a), sb = support_of(b);
  Vec2 ta = a.end_tangent(), tb = b.start_tangent();
  double turn = std::abs(std::atan2(cross(ta, tb), dot(ta, tb)));
  if (turn >= deg2rad(p.join_corner_deg)) {
    auto xs = intersections(sa, sb);
    auto nearest = std::min_element(xs.begin(), xs.end(),
                                    [&](Vec2 x, Vec2 y) { return dist(x, q) < dist(y, q); });
    if (nearest != xs.end() && dist(*nearest, q) <= p.join_max_px) return *nearest;
    return std::nullopt;
  }
  auto t = tangent_point(sa, sb, p.tolerance_px);
  if (t && dist(*t, q) <= 0.5 * std::min(a.length(), b.length())) return t;
  return std::nullopt;
}

Vec2 projected_joint(const Shape& a, const Shape& b, Vec2 q) {
  return (project(support_of(a), q) + project(support_of(b), q)) * 0.5;
}

int join_chain(std::vector<Piece>& pieces, Points pts, bool closed, std::optional<Vec2> start,
               std::optional<Vec2> end, const FitParams& p) {
  const int n = static_cast<int>(pieces.size());
  if (n == 0) return 0;
  ChainPoints cp(pts, closed);
  const bool wraps = closed && n > 1 && !start;
  // Joints J[k] between pieces k-1 and k at breakpoints B[k]; J[0], J[n] are the chain's ends
  // (on a closed chain the same point, B[n] = B[0] + m).
  std::vector<Vec2> J(n + 1);
  std::vector<int> B(n + 1);
  for (int k = 0; k < n; ++k) B[k] = pieces[k].i0;
  B[n] = pieces[n - 1].i1;
  for (int k = 1; k < n; ++k)
    J[k] = projected_joint(pieces[k - 1].shape, pieces[k].shape, cp.at(B[k]));
  if (wraps) {
    J[0] = J[n] = projected_joint(pieces[n - 1].shape, pieces[0].shape, cp.at(B[0]));
  } else if (closed && n > 1) {
    J[0] = J[n] = *start;
  } else {
    J[0] = start ? *start : project(support_of(pieces[0].shape), cp.at(B[0]));
    J[n] = end ? *end : project(support_of(pieces[n - 1].shape), cp.at(B[n]));
  }
  auto piece_max = [&](int k, Vec2 a, Vec2 b, int i0, int i1) {
    return refit_between(pieces[k].shape, a, b, cp.span(i0, i1), p).max;
  };
  // Joint k (k == n: the closing joint, between the last piece and the first) is the exact
  // joint when that keeps both neighbours within tolerance; otherwise whichever of the exact
  // joint and the breakpoint projected (onto either curve or both, averaged) leaves the
  // smaller largest distance. Its breakpoint moves to the point nearest it.
  auto settle = [&](int k) {
    int left = k - 1, right = k % n;
    int prev = B[k - 1], next = k == n ? B[1] + cp.last() : B[k + 1];
    Vec2 before = J[k - 1], after = J[k == n ? 1 : k + 1], q = cp.at(B[k]);
    const Shape& a = pieces[left].shape;
    const Shape& c = pieces[right].shape;
    auto error_at = [&](Vec2 x, int b) {
      return std::max(piece_max(left, before, x, prev, b), piece_max(right, x, after, b, next));
    };
    Vec2 best = J[k];
    int best_b = B[k];
    double best_err = INFINITY;
    if (auto exact = exact_joint(a, c, q, p)) {
      best = *exact;
      best_b = cp.nearest(prev + 1, next - 1, *exact, B[k]);
      best_err = error_at(best, best_b);
    }
    if (best_err > p.tolerance_px) {
      for (Vec2 x :
           {projected_joint(a, c, q), project(support_of(a), q), project(support_of(c), q)}) {
        int b = cp.nearest(prev + 1, next - 1, x, B[k]);
        double err = error_at(x, b);
        if (err < best_err) {
          best = x;
          best_b = b;
          best_err = err;
        }
      }
    }
    J[k] = best;
    B[k] = best_b;
    if (k == n) {
      J[0] = best;
      B[0] = best_b - cp.last();
    }
  };
  for (int k = 1; k < n; ++k) settle(k);
  if (wraps) settle(n);
  for (int k = 0; k < n; ++k) {
    pieces[k].i0 = B[k];
    pieces[k].i1 = B[k + 1];
    pieces[k].shape =
        refit_between(pieces[k].shape, J[k], J[k + 1], cp.span(B[k], B[k + 1]), p).shape;
  }
  return B[0];
}

namespace {

// One pass of absorb_corner_cuts along pieces in order; whether it absorbed any.
bool absorb_cuts_in_order(std::vector<Piece>& pieces, const ChainPoints& cp, const FitParams& p) {
  constexpr size_t kMaxCut = 2;  // short pieces across one corner
  const double min_turn = deg2rad(p.corner_angle_deg);
  auto dir = [](const Piece& pc) { return unit(pc.shape.p1 - pc.shape.p0); };
  auto is_line = [](const Piece& pc) { return pc.shape.type == PrimType::line && pc.shape.length() > 1e-9; };
  // Whether pieces[first, first + cut) are a cut between a and c; if so, a and c meet.
  auto absorb = [&](Piece& a, Piece& c, size_t first, size_t cut) {
    if (!is_line(a) || !is_line(c)) return false;
    double cut_length = 0;
    for (size_t j = first; j < first + cut; ++j) {
      if (pieces[j].shape.type == PrimType::circle || pieces[j].shape.length() <= 1e-9) return false;
      cut_length += pieces[j].shape.length();
    }
    if (cut_length >= std::min(a.shape.length(), c.shape.length())) return false;
    const Vec2 da = dir(a), dc = dir(c);
    const double turn = std::atan2(cross(da, dc), dot(da, dc));
    if (std::abs(turn) < min_turn || std::abs(turn) > kPi - min_turn) return false;
    // The cut turns the same way as the corner where it leaves a and where it enters c.
    if (cross(da, dir(pieces[first])) * turn <= 0 || cross(dir(pieces[first + cut - 1]), dc) * turn <= 0) return false;
    // The lines meet ahead of a and before c, the traced points across the cut stay near the
    // corner's two legs, and some pass near the corner.
    const auto meet = intersections(support_of(a.shape), support_of(c.shape));
    if (meet.empty()) return false;
    const Vec2 x = meet.front();
    if (dot(x - a.shape.p1, da) < 0 || dot(c.shape.p0 - x, dc) < 0) return false;
    const int i0 = pieces[first].i0, i1 = pieces[first + cut - 1].i1;
    for (int i = i0; i <= i1; ++i) {
      const Vec2 q = cp.at(i);
      if (std::min(point_segment_distance(q, a.shape.p0, x), point_segment_distance(q, x, c.shape.p1)) >
          p.corner_cut_px)
        return false;
    }
    const int b = cp.nearest(i0, i1, x, i0);
    if (dist(cp.at(b), x) > p.corner_cut_px) return false;
    a.shape = Shape::line(a.shape.p0, x);
    a.i1 = b;
    c.shape = Shape::line(x, c.shape.p1);
    c.i0 = b;
    return true;
  };
  std::vector<Piece> out{pieces[0]};
  size_t next = 1;
  while (next < pieces.size()) {
    bool absorbed = false;
    for (size_t cut = 1; cut <= kMaxCut && next + cut < pieces.size() && !absorbed; ++cut) {
      Piece a = out.back(), c = pieces[next + cut];
      if (absorb(a, c, next, cut)) {
        out.back() = a;
        out.push_back(c);
        next += cut + 1;
        absorbed = true;
      }
    }
    if (!absorbed) out.push_back(pieces[next++]);
  }
  const bool any = out.size() < pieces.size();
  pieces = std::move(out);
  return any;
}

}  // namespace

int absorb_corner_cuts(std::vector<Piece>& pieces, Points pts, bool closed, bool pinned_start,
                       const FitParams& p) {
  if (pieces.size() < 3) return 0;
  const ChainPoints cp(pts, closed);
  absorb_cuts_in_order(pieces, cp, p);
  if (!closed || pinned_start || pieces.size() < 4) return 0;
  // A cut next to the closing joint: the chain again from its middle piece round to it (the
  // pieces after the closing joint a turn further on), kept only when that absorbs one.
  const int m = cp.last();
  const size_t r = pieces.size() / 2;
  std::vector<Piece> around(pieces.begin() + static_cast<std::ptrdiff_t>(r), pieces.end());
  for (size_t k = 0; k < r; ++k) around.push_back({pieces[k].shape, pieces[k].i0 + m, pieces[k].i1 + m});
  if (!absorb_cuts_in_order(around, cp, p)) return 0;
  const int move = around.front().i0;
  for (Piece& pc : around) pc.i0 -= move, pc.i1 -= move;
  pieces = std::move(around);
  return move;
}

void split_long_arcs(std::vector<Piece>& pieces, Points pts, const FitParams& p) {
  const double max_sweep = deg2rad(p.max_sweep_deg);
  std::vector<Piece> out;
  for (const Piece& pc : pieces) {
    const Shape& s = pc.shape;
    if (s.type != PrimType::arc || std::abs(s.sweep_rad()) <= max_sweep || pc.i1 - pc.i0 < 2) {
      out.push_back(pc);
      continue;
    }
    Vec2 mid = s.at(0.5);
    int cut = pc.i0 + 1;
    for (int k = pc.i0 + 1; k < pc.i1; ++k)
      if (dist(pts[k], mid) < dist(pts[cut], mid)) cut = k;
    double half = std::tan(s.sweep_rad() / 8);
    out.push_back({Shape::arc(s.p0, mid, half), pc.i0, cut});
    out.push_back({Shape::arc(mid, s.p1, half), cut, pc.i1});
  }
  pieces = std::move(out);
}

}  // namespace sv::fitting
