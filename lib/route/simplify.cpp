#include "route/simplify.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "robot/motion.hpp"

namespace sv {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSampleStep = 0.5;  // px between the checked points of a curved piece
constexpr size_t kTangentStates = 6;  // best states per joint that try a tangent continuation

// One command that may replace legs i..j-1 of a run.
struct Cand {
  int i = 0, j = 0;
  bool line = true;
  bool circle = false;  // a full turn back to where it started
  double bulge = 0;     // arcs, in the direction of travel
  Vec2 center;          // circles
  int turn = 1;         // circles
  double h_in = 0, h_out = 0;
  double time = 0;
  double reach = 0;
  int bits = 1;  // 2: a line that may also be driven backwards
  double value[2] = {INFINITY, INFINITY};
  int from_c[2] = {-1, -1}, from_b[2] = {0, 0};
};

// The arc from a to c through b as a bulge (tan of a quarter of the signed sweep); nullopt
// when the three points are (nearly) collinear.
std::optional<double> bulge_through(Vec2 a, Vec2 b, Vec2 c) {
  double turn = cross(b - a, c - b);
  double chord = dist(a, c);
  if (chord < 1e-9 || std::abs(turn) < 1e-9 * chord * chord) return std::nullopt;
  // Inscribed angle: the sweep is twice the angle between the chord a->c and the tangent at
  // a, which equals the angle a->b->c subtends; compute it from the angle at b.
  double ang_b = std::abs(std::atan2(cross(a - b, c - b), dot(a - b, c - b)));  // in (0, pi)
  double sweep = 2 * (kPi - ang_b);
  if (turn < 0) sweep = -sweep;
  return std::tan(sweep / 4);
}

class RunSimplifier {
 public:
  RunSimplifier(const std::vector<Leg>& legs, size_t a, size_t b, Vec2 p0, const CostModel& cost,
                const SimplifyParams& params)
      : cost_(cost), params_(params) {
    size_t m = b - a;
    for (size_t k = a; k < b; ++k)
      tol_.push_back(params.leg_deviation_px.empty() ? params.deviation_px : params.leg_deviation_px[k]);
    pts_.push_back(p0);
    for (size_t k = a; k < b; ++k) pts_.push_back(legs[k].end);
    for (size_t k = 0; k < m; ++k) {
      const Leg& l = legs[a + k];
      Shape s = l.straight ? Shape::line(pts_[k], pts_[k + 1]) : Shape::arc(pts_[k], pts_[k + 1], l.bulge);
      shapes_.push_back(s);
      straight_.push_back(l.straight);
      dense_.push_back(s.sample(kSampleStep));
      len_.push_back(s.length());
    }
  }

  // The candidates, in order of their end node.
  std::vector<Cand> candidates() const {
    std::vector<Cand> out;
    int m = static_cast<int>(shapes_.size());
    for (int j = 1; j <= m; ++j)
      for (int i = j - 1; i >= std::max(0, j - params_.window); --i) {
        if (j == i + 1) out.push_back(original(i));
        if (tolerance(i, j) <= 0) continue;
        if (j > i + 1 || !straight_[i]) {
          if (auto c = chord(i, j)) out.push_back(*c);
        }
        if (j > i + 1) {
          if (auto c = arc(i, j)) out.push_back(*c);
          if (auto c = circle(i, j)) out.push_back(*c);
        }
      }
    return out;
  }

  Vec2 pt(int k) const { return pts_[k]; }

  // The arc that leaves joint i along heading h_deg (the previous command's, so no spin) and
  // ends on joint j, when legs i..j-1 stay within the deviation of it.
  std::optional<Cand> tangent(int i, int j, double h_deg) const {
    Vec2 chord = pts_[j] - pts_[i];
    double len = norm(chord);
    if (len < 1e-6) return std::nullopt;
    Vec2 u = from_angle(deg2rad(h_deg));
    double phi = std::atan2(cross(u, chord), dot(u, chord));
    if (std::abs(phi) > deg2rad(175.0)) return std::nullopt;  // well below a full turn
    Shape s = Shape::arc(pts_[i], pts_[j], std::tan(phi / 2));
    if (!std::isfinite(s.radius) || s.radius * (1 - std::cos(phi)) < cost_.flat_px) return std::nullopt;
    if (!within(i, j, s, false)) return std::nullopt;
    return finish_arc(i, j, s.bulge);
  }

 private:
  Cand finish_line(int i, int j) const {
    Cand c;
    c.i = i;
    c.j = j;
    c.line = true;
    Vec2 v = pts_[j] - pts_[i];
    c.h_in = c.h_out = rad2deg(angle_of(v));
    c.reach = norm(v);
    c.time = cost_.motion.draw_line_s(c.reach);
    c.bits = cost_.reverse_drive ? 2 : 1;
    return c;
  }

  Cand finish_arc(int i, int j, double bulge) const {
    Shape s = Shape::arc(pts_[i], pts_[j], bulge);
    Cand c;
    c.i = i;
    c.j = j;
    c.line = false;
    c.bulge = bulge;
    c.h_in = rad2deg(angle_of(s.start_tangent()));
    c.h_out = rad2deg(angle_of(s.end_tangent()));
    double sweep = s.sweep_rad();
    c.reach = std::abs(sweep) > kPi ? 2 * s.radius : dist(pts_[i], pts_[j]);
    c.time = cost_.motion.arc_s(s.radius, rad2deg(sweep));
    return c;
  }

  Cand original(int i) const {
    if (straight_[i]) return finish_line(i, i + 1);
    return finish_arc(i, i + 1, shapes_[i].bulge);
  }

  // The deviation a command replacing legs i..j-1 is allowed: the smallest of theirs.
  double tolerance(int i, int j) const { return *std::min_element(tol_.begin() + i, tol_.begin() + j); }

  // Every checked point of legs i..j-1 within the deviation of `s`.
  bool within(int i, int j, const Shape& s, bool candidate_straight) const {
    const double tol = tolerance(i, j);
    const ShapeDistance d(s);
    for (int k = i; k < j; ++k) {
      // The distance to a segment is convex along a straight leg: its ends decide.
      if (straight_[k] && candidate_straight) {
        if (d(pts_[k]) > tol || d(pts_[k + 1]) > tol) return false;
        continue;
      }
      for (Vec2 q : dense_[k])
        if (d(q) > tol) return false;
    }
    return true;
  }

  std::optional<Cand> chord(int i, int j) const {
    if (dist(pts_[i], pts_[j]) < 1e-6) return std::nullopt;
    if (!within(i, j, Shape::line(pts_[i], pts_[j]), true)) return std::nullopt;
    return finish_line(i, j);
  }

  // The point at fraction f of the length of legs i..j-1.
  Vec2 along(int i, int j, double f) const {
    double total = 0;
    for (int k = i; k < j; ++k) total += len_[k];
    double want = total * f, acc = 0;
    for (int k = i; k < j; ++k) {
      if (acc + len_[k] >= want) return shapes_[k].at(len_[k] > 0 ? (want - acc) / len_[k] : 0);
      acc += len_[k];
    }
    return pts_[j];
  }

  // Legs that close on themselves (a circle split at junctions) as one full turn through the
  // points at a third and two thirds of the way.
  std::optional<Cand> circle(int i, int j) const {
    if (dist(pts_[i], pts_[j]) > 1e-6) return std::nullopt;
    Vec2 a = pts_[i], b = along(i, j, 1.0 / 3), c = along(i, j, 2.0 / 3);
    double d = 2 * cross(b - a, c - a);
    if (std::abs(d) < 1e-9) return std::nullopt;
    double a2 = dot(a, a), b2 = dot(b, b), c2 = dot(c, c);
    Vec2 ctr{(a2 * (b.y - c.y) + b2 * (c.y - a.y) + c2 * (a.y - b.y)) / d,
             (a2 * (c.x - b.x) + b2 * (a.x - c.x) + c2 * (b.x - a.x)) / d};
    Shape s = Shape::circle(ctr, dist(a, ctr));
    if (!within(i, j, s, false)) return std::nullopt;
    Cand k;
    k.i = i;
    k.j = j;
    k.line = false;
    k.circle = true;
    k.center = ctr;
    k.turn = cross(b - a, c - b) > 0 ? 1 : -1;
    k.h_in = k.h_out = rad2deg(angle_of(a - ctr)) + 90.0 * k.turn;
    k.reach = 2 * s.radius;
    k.time = cost_.motion.arc_s(s.radius, 360);
    return k;
  }

  // The arc through the run's ends and the point halfway along it.
  std::optional<Cand> arc(int i, int j) const {
    Vec2 mid = along(i, j, 0.5);
    auto b = bulge_through(pts_[i], mid, pts_[j]);
    if (!b || std::abs(*b) > std::tan(deg2rad(350.0) / 4)) return std::nullopt;  // well below a full turn
    Shape s = Shape::arc(pts_[i], pts_[j], *b);
    if (!std::isfinite(s.radius) || s.radius * (1 - std::cos(s.sweep_rad() / 2)) < cost_.flat_px)
      return std::nullopt;
    if (!within(i, j, s, false)) return std::nullopt;
    return finish_arc(i, j, *b);
  }

  const CostModel& cost_;
  const SimplifyParams& params_;
  std::vector<Vec2> pts_;
  std::vector<Shape> shapes_;
  std::vector<bool> straight_;
  std::vector<Polyline> dense_;
  std::vector<double> len_;
  std::vector<double> tol_;  // per leg: the deviation allowed for it
};

std::string join_ids(const std::vector<std::string>& ids, size_t a, size_t b) {
  std::string s;
  for (size_t k = a; k < b; ++k) {
    if (k > a && ids[k] == ids[k - 1]) continue;
    if (!s.empty()) s += ",";
    s += ids[k];
  }
  return s;
}

}  // namespace

SimplifiedLegs simplify_legs(const std::vector<Leg>& legs, const std::vector<std::string>& ids,
                             const CostModel& cost, const SimplifyParams& params, const std::optional<Pose>& start) {
  SimplifiedLegs out;
  // The planned pose before the next leg (heading NaN: free).
  std::optional<Vec2> q;
  double h = kNaN;
  if (start) {
    q = Vec2{start->x, start->y};
    h = start->heading_deg;
  }
  auto in_run = [&](const Leg& l) { return !l.dot && !l.circle; };
  size_t n = legs.size();
  for (size_t a = 0; a < n;) {
    const Leg& first = legs[a];
    if (!in_run(first)) {
      out.legs.push_back(first);
      out.ids.push_back(ids[a]);
      if (first.dot) {
        if (q && dist(*q, first.start) > cost.join_px) h = rad2deg(angle_of(first.start - *q));
      } else {
        h = first.h_out;
      }
      q = first.end;
      ++a;
      continue;
    }
    // The run: legs joined within join_px, neither dots nor circles.
    size_t b = a + 1;
    while (b < n && in_run(legs[b]) && dist(legs[b - 1].end, legs[b].start) <= cost.join_px) ++b;
    Vec2 p0 = q && dist(*q, first.start) <= cost.join_px ? *q : first.start;
    RunSimplifier rs(legs, a, b, p0, cost, params);
    std::vector<Cand> cands = rs.candidates();
    int m = static_cast<int>(b - a);

    // Costs of turning into the run and out of it.
    auto enter = [&](double heading) {
      if (!q) return 0.0;
      double t = cost.transition(*q, h, p0, heading);
      if (dist(*q, p0) > cost.join_px) t -= cost.trip(dist(*q, p0));
      return t;
    };
    auto leave = [&](double heading) {
      if (b >= n) return 0.0;
      const Leg& nx = legs[b];
      Vec2 pm = rs.pt(m);
      double best = INFINITY;
      for (int bit = 0; bit < (nx.straight && cost.reverse_drive ? 2 : 1); ++bit)
        best = std::min(best, cost.transition(pm, heading, nx.start, nx.dot ? kNaN : heading_in(nx, bit)));
      if (dist(pm, nx.start) > cost.join_px) best -= cost.trip(dist(pm, nx.start));
      return best;
    };

    // Shortest path over the joints, node by node: when node j is reached every state ending
    // there is final. Besides the run's own candidates, each of the best states at a node may
    // continue with an arc tangent to the command it ends with (no spin between them).
    std::vector<std::vector<int>> ending(m + 1);
    for (size_t c = 0; c < cands.size(); ++c) ending[cands[c].j].push_back(static_cast<int>(c));
    auto extend = [&](int from, int from_bit, int i, double h, double value) {
      for (int j = i + 1; j <= std::min(m, i + params.window); ++j) {
        auto t = rs.tangent(i, j, h);
        if (!t) continue;
        t->value[0] = value + cost.spin(t->h_in - h) + t->time;
        t->from_c[0] = from;
        t->from_b[0] = from_bit;
        ending[j].push_back(static_cast<int>(cands.size()));
        cands.push_back(*t);
      }
    };
    const bool tangents = params.deviation_px > 0 || std::any_of(params.leg_deviation_px.begin(),
                                                                  params.leg_deviation_px.end(),
                                                                  [](double d) { return d > 0; });
    if (tangents && q && std::isfinite(h) && dist(*q, p0) <= cost.join_px) extend(-1, 0, 0, h, 0.0);
    for (int node = 1; node <= m; ++node) {
      for (int ci : ending[node]) {
        Cand& c = cands[ci];
        if (c.from_c[0] >= 0 || c.value[0] < INFINITY) continue;  // a tangent state: already valued
        for (int bit = 0; bit < c.bits; ++bit) {
          double hin = c.h_in + 180.0 * bit;
          if (c.i == 0) {
            c.value[bit] = enter(hin) + c.time;
            continue;
          }
          for (int p : ending[c.i]) {
            const Cand& pc = cands[p];
            for (int pb = 0; pb < pc.bits; ++pb) {
              double v = pc.value[pb] + cost.spin(hin - pc.h_out - 180.0 * pb) + c.time;
              if (v < c.value[bit]) {
                c.value[bit] = v;
                c.from_c[bit] = p;
                c.from_b[bit] = pb;
              }
            }
          }
        }
      }
      if (!tangents || node == m) continue;
      // Arcs leave forwards: only states whose robot faces along the drawing continue.
      std::vector<int> best = ending[node];
      std::sort(best.begin(), best.end(), [&](int a, int b) {
        return std::tie(cands[a].value[0], a) < std::tie(cands[b].value[0], b);
      });
      if (best.size() > kTangentStates) best.resize(kTangentStates);
      for (int ci : best)
        if (cands[ci].value[0] < INFINITY) extend(ci, 0, node, cands[ci].h_out, cands[ci].value[0]);
    }
    double best = INFINITY;
    int bc = -1, bb = 0;
    for (int c : ending[m])
      for (int bit = 0; bit < cands[c].bits; ++bit) {
        double v = cands[c].value[bit] + leave(cands[c].h_out + 180.0 * bit);
        if (v < best) {
          best = v;
          bc = c;
          bb = bit;
        }
      }
    if (bc < 0) {
      // No finite path: a leg rebuilt from the previous leg's end (within join_px of its own
      // start) may collapse to nothing, an arc of no chord. The run is drawn as it is.
      for (size_t k = a; k < b; ++k) {
        out.legs.push_back(legs[k]);
        out.ids.push_back(ids[k]);
      }
      q = legs[b - 1].end;
      h = legs[b - 1].h_out;
      a = b;
      continue;
    }
    std::vector<std::pair<int, int>> path;
    for (int c = bc, bit = bb; c >= 0;) {
      path.emplace_back(c, bit);
      int pc = cands[c].from_c[bit], pb = cands[c].from_b[bit];
      c = pc;
      bit = pb;
    }
    for (size_t k = path.size(); k-- > 0;) {
      const Cand& c = cands[path[k].first];
      Leg l;
      l.start = rs.pt(c.i);
      l.end = rs.pt(c.j);
      l.reach_px = c.reach;
      l.h_in = c.h_in;
      l.h_out = c.h_out;
      if (c.line) {
        l.straight = true;
      } else if (c.circle) {
        l.circle = true;
        l.center = c.center;
        l.turn = c.turn;
      } else {
        l.bulge = c.bulge;
      }
      out.legs.push_back(l);
      out.ids.push_back(join_ids(ids, a + c.i, a + c.j));
    }
    const Cand& last = cands[bc];
    q = rs.pt(m);
    h = last.h_out + 180.0 * bb;
    a = b;
  }
  return out;
}

}  // namespace sv
