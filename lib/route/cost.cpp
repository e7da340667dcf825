#include "route/cost.hpp"

#include <array>
#include <cmath>
#include <limits>

#include "robot/motion.hpp"

namespace sv {

Leg make_leg(const Shape& s, bool reverse, double entry_rad, double flat_px) {
  Leg l;
  if (s.type == PrimType::circle && s.radius < 1e-6) {
    l.dot = true;
    l.start = l.end = s.center;
    l.h_in = l.h_out = std::numeric_limits<double>::quiet_NaN();
    return l;
  }
  if (s.type == PrimType::circle) {
    l.circle = true;
    l.center = s.center;
    l.turn = reverse ? -1 : 1;
    l.start = l.end = s.center + from_angle(entry_rad) * s.radius;
    l.h_in = l.h_out = rad2deg(entry_rad) + 90.0 * l.turn;
    l.reach_px = 2 * s.radius;
    return l;
  }
  Shape t = reverse ? s.reversed() : s;
  l.start = t.p0;
  l.end = t.p1;
  l.reach_px = dist(t.p0, t.p1);
  double sweep = t.sweep_rad();
  bool flat = t.type == PrimType::line || !std::isfinite(t.radius) ||
              t.radius * (1 - std::cos(sweep / 2)) < flat_px;
  if (l.reach_px < 1e-6) {
    l.dot = true;
    l.h_in = l.h_out = std::numeric_limits<double>::quiet_NaN();
  } else if (flat) {
    l.straight = true;
    l.h_in = l.h_out = rad2deg(angle_of(t.p1 - t.p0));
  } else {
    l.bulge = t.bulge;
    l.h_in = rad2deg(angle_of(t.start_tangent()));
    l.h_out = rad2deg(angle_of(t.end_tangent()));
    if (std::abs(sweep) > kPi) l.reach_px = 2 * t.radius;
  }
  return l;
}

// Turning the short way: |deg| wrapped into [0, 180]. Headings here stay within a few turns,
// so a loop beats fmod on this hot path; fmod takes what is not (a heading read from a hostile
// scene: the loop would never end on 1e300 or infinity).
double CostModel::spin(double deg) const {
  double d = std::abs(deg);
  if (d > 3600) d = std::fmod(d, 360.0);
  while (d > 360) d -= 360;
  return motion.spin_s(d > 180 ? 360 - d : d);
}

Travel CostModel::travel(Vec2 p, double h, Vec2 q, double h2) const {
  const double gap = dist(p, q), g = rad2deg(angle_of(q - p));
  const bool free_h = std::isnan(h), free_h2 = std::isnan(h2);
  Travel best{INFINITY};
  for (int t = 0; t < (reverse_drive ? 2 : 1); ++t) {
    const double along = g + 180.0 * t;
    const double turns = (free_h ? 0 : spin(along - h)) + (free_h2 ? 0 : spin(h2 - along));
    if (turns < best.s) best.s = turns, best.back = t == 1;
  }
  best.s += motion.travel_s(gap);  // in this order: the sums stay bit for bit
  if (!travel_arcs || free_h || free_h2) return best;
  // The sweeps of the two single arcs: the chord from p to q halves each one's turn. Sweeps
  // from 1 to 179 degrees, radii up to 2,000 px (where the stream's rounding of the sweep moves
  // the end by under 0.002 px).
  auto consider = [&](double sweep, double before, double after, bool arc_first) {
    const double a = std::abs(sweep);
    if (a < 1 || a > 179) return;
    // An arc turns its sweep no faster than a spin does, and two spins take no less than one
    // through both angles (a spin's time is concave in its angle): a bound that skips most
    // arcs unpriced.
    if (motion.spin_s(std::abs(wrap_deg(before)) + a + std::abs(wrap_deg(after))) >= best.s) return;
    const double turns = spin(before) + spin(after);
    const double r = gap / (2 * std::sin(deg2rad(a) / 2));
    if (r > 2000) return;
    const double t = turns + motion.arc_s(r, sweep, false);
    if (t < best.s) best = {t, false, sweep, arc_first};
  };
  const double sweep_in = 2 * wrap_deg(h2 - g), sweep_out = 2 * wrap_deg(g - h);
  consider(sweep_in, h2 - sweep_in - h, 0, false);
  consider(sweep_out, 0, h2 - (h + sweep_out), true);
  return best;
}

double CostModel::transition(Vec2 p, double h, Vec2 q, double h2) const {
  if (dist(p, q) <= join_px) return std::isnan(h) || std::isnan(h2) ? 0 : spin(h2 - h);
  return travel(p, h, q, h2).s + 2 * motion.pen_time_s;
}

double choose_bits(const std::vector<Leg>& legs, const CostModel& cost, const std::optional<Pose>& start,
                   int first_bit, int last_bit, std::vector<int>* bits) {
  size_t n = legs.size();
  if (bits) bits->assign(n, 0);
  if (n == 0) return 0;
  // best[i][b]: least time up to leg i entered with bit b; from[i][b]: the bit of leg i-1.
  std::vector<std::array<double, 2>> best(n, {INFINITY, INFINITY});
  std::vector<std::array<int, 2>> from(n, {0, 0});
  auto allowed = [&](size_t i, int b) {
    if (b >= cost.bits(legs[i])) return false;
    if (i == 0 && first_bit >= 0 && b != first_bit) return false;
    if (i + 1 == n && last_bit >= 0 && b != last_bit) return false;
    return true;
  };
  for (int b = 0; b < 2; ++b) {
    if (!allowed(0, b)) continue;
    best[0][b] = start ? cost.transition({start->x, start->y}, start->heading_deg, legs[0].start,
                                         heading_in(legs[0], b))
                       : 0;
  }
  for (size_t i = 1; i < n; ++i)
    for (int b = 0; b < 2; ++b) {
      if (!allowed(i, b)) continue;
      for (int a = 0; a < 2; ++a) {
        if (!std::isfinite(best[i - 1][a])) continue;
        double t = best[i - 1][a] + cost.transition(legs[i - 1].end, heading_out(legs[i - 1], a), legs[i].start,
                                                    heading_in(legs[i], b));
        if (t < best[i][b]) {
          best[i][b] = t;
          from[i][b] = a;
        }
      }
    }
  int b = best[n - 1][1] < best[n - 1][0] ? 1 : 0;
  double total = best[n - 1][b];
  if (bits)
    for (size_t i = n; i-- > 0;) {
      (*bits)[i] = b;
      b = from[i][b];
    }
  return total;
}

}  // namespace sv
