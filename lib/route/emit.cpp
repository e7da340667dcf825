#include "route/emit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "robot/replay.hpp"
#include "route/simplify.hpp"

namespace sv {

namespace {

constexpr double kQuantum = 1e-4;  // the scene's rounding of distances and degrees (scene.cpp)

// Appends rounded commands and integrates each exactly as the robot will.
class Emitter {
 public:
  Emitter(const EmitParams& params, Pose start) : params_(params), pose_(start) {}

  Vec2 at() const { return {pose_.x, pose_.y}; }
  double heading() const { return pose_.heading_deg; }

  // Turns to heading `h` unless the turn is below min_spin_deg and would move the end of a
  // move reaching `reach_px` by at most drift_px.
  void turn_to(double h, double reach_px) {
    double d = wrap_deg(h - pose_.heading_deg);
    if (std::abs(d) < params_.min_spin_deg && reach_px * std::abs(std::sin(deg2rad(d))) <= params_.drift_px) return;
    Command c;
    c.kind = Command::Kind::spin;
    c.degrees = round_to(d, kQuantum);
    if (c.degrees != 0) push(std::move(c));
  }

  // Pen-up travel to `q`, where the next leg leaves at heading `need`, the way
  // CostModel::travel plans it from the pose the robot is at. The final turn is left to the leg.
  void travel_to(Vec2 q, double need, const CostModel& cost) {
    const double gap = dist(at(), q);
    const Travel plan = cost.travel(at(), heading(), q, need);
    Command c;
    c.pen_down = false;
    if (plan.sweep == 0) {
      turn_to(rad2deg(angle_of(q - at())) + (plan.back ? 180 : 0), gap);
      c.distance = round_to(plan.back ? -gap : gap, kQuantum);
      if (c.distance != 0) push(std::move(c));
      return;
    }
    if (!plan.arc_first) turn_to(need - plan.sweep, gap);
    // The arc from where the robot stands, along its heading, to q (closed loop: the pose the
    // turn left, not the planned one).
    Vec2 chord = q - at();
    double half = wrap_deg(rad2deg(angle_of(chord)) - heading());
    c.kind = Command::Kind::arc;
    c.degrees = round_to(2 * half, kQuantum);
    c.radius = round_to(norm(chord) / (2 * std::abs(std::sin(deg2rad(half)))), kQuantum);
    push(std::move(c));
  }

  // A drawn line; it extends the previous drawn line when nothing turned in between.
  void draw_line(double distance, const std::string& id) {
    double d = round_to(distance, kQuantum);
    if (d == 0) return;
    if (!commands.empty()) {
      Command& b = commands.back();
      if (b.kind == Command::Kind::line && b.pen_down && b.distance != 0 && (b.distance > 0) == (d > 0)) {
        b.distance = round_to(b.distance + d, kQuantum);
        // Two pieces of one primitive drawn in a row stay one id.
        size_t comma = b.primitive.rfind(',');
        if (b.primitive.substr(comma == std::string::npos ? 0 : comma + 1) != id) b.primitive += "," + id;
        pose_ = apply_command(before_last_, b);
        return;
      }
    }
    Command c;
    c.distance = d;
    c.primitive = id;
    push(std::move(c));
  }

  // A zero-length pen-down line: the robot touches the pen down where it stands.
  void dot(const std::string& id) {
    Command c;
    c.primitive = id;
    push(std::move(c));
  }

  void arc(double radius, double degrees, const std::string& id) {
    Command c;
    c.kind = Command::Kind::arc;
    c.radius = round_to(radius, kQuantum);
    c.degrees = round_to(degrees, kQuantum);
    c.primitive = id;
    push(std::move(c));
  }

  std::vector<Command> commands;

 private:
  void push(Command c) {
    before_last_ = pose_;
    pose_ = apply_command(pose_, c);
    commands.push_back(std::move(c));
  }

  EmitParams params_;
  Pose pose_, before_last_;
};

// Direction from leg i towards the first later leg that starts elsewhere (+x if none).
Vec2 onward(const std::vector<Leg>& legs, size_t i) {
  for (size_t k = i + 1; k < legs.size(); ++k)
    if (dist(legs[k].start, legs[i].start) > 1e-9) return legs[k].start - legs[i].start;
  return {1, 0};
}

}  // namespace

Emission emit_commands(const std::vector<Shape>& shapes, const std::vector<std::string>& ids,
                       const std::vector<Traversal>& steps, const CostModel& cost, const EmitParams& params,
                       const std::optional<Pose>& start) {
  std::vector<Leg> legs;
  std::vector<std::string> leg_ids;
  for (const Traversal& s : steps) {
    legs.push_back(make_leg(shapes[s.prim], s.reverse, s.entry_rad, cost.flat_px));
    leg_ids.push_back(ids[s.prim]);
  }
  // A piece drawn twice (a line drawn again instead of a pen-up trip, route/trails.hpp) keeps
  // its own path both times: a merged command would draw the ink off it twice.
  std::map<int, int> times_drawn;
  for (const Traversal& s : steps) ++times_drawn[s.prim];
  const bool redraws = std::any_of(times_drawn.begin(), times_drawn.end(), [](const auto& t) { return t.second > 1; });
  std::vector<double> leg_deviation;
  bool simplify = params.deviation_px > 0;
  if (!params.primitive_deviation_px.empty() || redraws)
    for (size_t k = 0; k < steps.size(); ++k) {
      auto it = params.primitive_deviation_px.find(leg_ids[k]);
      leg_deviation.push_back(times_drawn[steps[k].prim] > 1                    ? 0.0
                              : it == params.primitive_deviation_px.end() ? params.deviation_px
                                                                          : it->second);
      simplify = simplify || leg_deviation.back() > 0;
    }
  if (simplify) {
    SimplifiedLegs sl = simplify_legs(legs, leg_ids, cost, {params.deviation_px, params.window, leg_deviation}, start);
    legs = std::move(sl.legs);
    leg_ids = std::move(sl.ids);
  }

  // A dot reached without travel is touched in place; any other dot faces along the travel
  // that reaches it, so it is a straight leg of that heading for the Viterbi pass.
  std::vector<int> bit(legs.size(), -1);
  std::vector<Leg> chain;
  std::vector<size_t> where;
  std::optional<Vec2> prev;
  if (start) prev = Vec2{start->x, start->y};
  for (size_t i = 0; i < legs.size(); ++i) {
    Leg& l = legs[i];
    if (l.dot) {
      if (prev && dist(*prev, l.start) <= cost.join_px) continue;
      l.h_in = l.h_out = rad2deg(angle_of(prev ? l.start - *prev : onward(legs, i)));
      l.straight = true;
    }
    chain.push_back(l);
    where.push_back(i);
    prev = l.end;
  }
  std::vector<int> bits;
  choose_bits(chain, cost, start, -1, -1, &bits);
  for (size_t k = 0; k < chain.size(); ++k) bit[where[k]] = bits[k];

  Pose p0;
  if (start) p0 = *start;
  else if (!chain.empty()) p0 = {chain[0].start.x, chain[0].start.y, heading_in(chain[0], bits[0])};
  Emitter em(params, p0);
  for (size_t i = 0; i < legs.size(); ++i) {
    const Leg& l = legs[i];
    const std::string& id = leg_ids[i];
    if (bit[i] < 0) {
      em.dot(id);
      continue;
    }
    if (dist(em.at(), l.start) > cost.join_px) em.travel_to(l.start, heading_in(l, bit[i]), cost);
    if (l.dot) {
      em.dot(id);
    } else if (l.straight) {
      Vec2 v = l.end - em.at();
      double len = norm(v);
      if (len < kQuantum / 2) continue;
      em.turn_to(rad2deg(angle_of(v)) + 180.0 * bit[i], len);
      em.draw_line(bit[i] ? -len : len, id);
    } else if (l.circle) {
      double r = dist(em.at(), l.center);
      em.turn_to(rad2deg(angle_of(em.at() - l.center)) + 90.0 * l.turn, 2 * r);
      em.arc(r, 360.0 * l.turn, id);
    } else {
      // The arc of the primitive's bulge from where the pen is to the primitive's end.
      Vec2 chord = l.end - em.at();
      double c = norm(chord), b = l.bulge;
      if (c < kQuantum / 2) continue;
      double half_sweep = rad2deg(2 * std::atan(b));
      em.turn_to(rad2deg(angle_of(chord)) - half_sweep, std::max(c, l.reach_px));
      em.arc(c * (1 + b * b) / (4 * std::abs(b)), 2 * half_sweep, id);
    }
  }
  return {std::move(em.commands), p0};
}

}  // namespace sv
