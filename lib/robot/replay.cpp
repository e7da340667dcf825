#include "robot/replay.hpp"

#include <algorithm>
#include <cmath>

namespace sv {

namespace {

// The arc's centre and the samples after the start point, computed as the scorer does
// (radians, centre at heading ± 90°, n = ceil(|sweep| r / step) equal angle steps).
Polyline arc_samples(const Pose& p, const Command& c, double step_px) {
  double h = deg2rad(p.heading_deg), sweep = deg2rad(c.degrees), r = c.radius;
  double normal = h + (sweep > 0 ? kPi / 2 : -kPi / 2);
  Vec2 ctr{p.x + r * std::cos(normal), p.y + r * std::sin(normal)};
  double a0 = std::atan2(p.y - ctr.y, p.x - ctr.x);
  int n = std::max(1, static_cast<int>(std::ceil(std::abs(sweep) * std::abs(r) / step_px)));
  Polyline pts;
  pts.reserve(n);
  for (int k = 1; k <= n; ++k) {
    double a = a0 + sweep * k / n;
    pts.push_back(r != 0 ? Vec2{ctr.x + r * std::cos(a), ctr.y + r * std::sin(a)} : Vec2{p.x, p.y});
  }
  return pts;
}

}  // namespace

Pose apply_command(const Pose& p, const Command& c) {
  Pose q = p;
  switch (c.kind) {
    case Command::Kind::spin: q.heading_deg += c.degrees; break;
    case Command::Kind::line: {
      double h = deg2rad(p.heading_deg);
      q.x = p.x + c.distance * std::cos(h);
      q.y = p.y + c.distance * std::sin(h);
      break;
    }
    case Command::Kind::arc: {
      // Only the end point matters; one sample is the exact end.
      Polyline end = arc_samples(p, c, INFINITY);
      q.x = end.back().x;
      q.y = end.back().y;
      q.heading_deg += c.degrees;
      break;
    }
  }
  return q;
}

std::vector<Move> replay_moves(const std::vector<Command>& commands, const Pose& start, double step_px,
                               double max_samples) {
  double swept = 0;
  for (const Command& c : commands)
    if (c.kind == Command::Kind::arc) swept += std::abs(deg2rad(c.degrees) * c.radius);
  step_px = std::max(step_px, swept / max_samples);
  std::vector<Move> moves;
  moves.reserve(commands.size());
  Pose p = start;
  for (size_t i = 0; i < commands.size(); ++i) {
    const Command& c = commands[i];
    Move m;
    m.command = i;
    m.kind = c.kind;
    m.start = p;
    m.pen_down = c.kind != Command::Kind::spin && c.pen_down;
    if (c.kind == Command::Kind::arc) {
      m.path = {{p.x, p.y}};
      Polyline s = arc_samples(p, c, step_px);
      m.path.insert(m.path.end(), s.begin(), s.end());
      p = {s.back().x, s.back().y, p.heading_deg + c.degrees};
    } else {
      p = apply_command(p, c);
      if (c.kind == Command::Kind::line) m.path = {{m.start.x, m.start.y}, {p.x, p.y}};
    }
    m.end = p;
    moves.push_back(std::move(m));
  }
  return moves;
}

Replay replay(const std::vector<Command>& commands, const Pose& start, double step_px) {
  Replay r;
  r.end = start;
  Polyline cur;
  auto lift = [&] {
    if (!cur.empty()) r.strokes.push_back(std::move(cur));
    cur.clear();
  };
  for (Move& m : replay_moves(commands, start, step_px)) {
    r.end = m.end;
    if (m.kind == Command::Kind::spin) {
      r.spin_total_deg += std::abs(commands[m.command].degrees);
    } else if (m.pen_down) {
      if (cur.empty()) cur.push_back(m.path.front());
      cur.insert(cur.end(), m.path.begin() + 1, m.path.end());
    } else {
      lift();
      r.pen_up.emplace_back(m.path.front(), m.path.back());
      ++r.pen_up_moves;
    }
  }
  lift();
  return r;
}

}  // namespace sv
