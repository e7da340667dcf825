#include "eval/drawing.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "robot/motion.hpp"
#include "robot/replay.hpp"

namespace sv {

double scene_ppi(const Scene& s) {
  if (s.robot && s.robot->ppi > 0) return s.robot->ppi;
  if (s.robot && s.robot->footprint_mm > 0 && s.source)
    return ppi_for_footprint(std::max(s.source->width, s.source->height), s.robot->footprint_mm);
  return 1.0;
}

Robot scene_robot(const Scene& s) {
  Robot r = s.robot ? *s.robot : Robot{};
  r.ppi = scene_ppi(s);
  return r;
}

std::vector<std::string> draw_order(const Scene& s) {
  std::vector<std::string> order;
  if (!s.primitives) return order;
  std::set<std::string> seen;
  if (s.tour)
    for (const auto& t : *s.tour)
      if (s.primitive(t.primitive) && seen.insert(t.primitive).second) order.push_back(t.primitive);
  for (const auto& p : *s.primitives)
    if (seen.insert(p.id).second) order.push_back(p.id);
  return order;
}

namespace {

// Without commands the primitives are what would be drawn: in tour order and direction.
void lay_out_primitives(const Scene& s, Drawing& d) {
  std::map<std::string, const TourStep*> steps;
  if (s.tour)
    for (const auto& t : *s.tour) steps.emplace(t.primitive, &t);
  int i = 0;
  for (const auto& id : draw_order(s)) {
    const Primitive* p = s.primitive(id);
    auto it = steps.find(id);
    double entry = it != steps.end() ? deg2rad(it->second->entry_deg) : 0;
    Shape sh = it != steps.end() && it->second->reverse ? p->shape.reversed() : p->shape;
    d.strokes.push_back(sh.sample(0.5, entry));
    d.pieces.push_back({id, d.strokes.back()});
    d.draw_index[id] = i++;
  }
}

}  // namespace

Drawing drawing_of(const Scene& s) {
  Drawing d;
  d.ppi = scene_ppi(s);
  d.robot = scene_robot(s);
  if (!s.commands || s.commands->empty()) {
    lay_out_primitives(s, d);
    return d;
  }
  d.from_commands = true;
  Pose start = s.robot ? s.robot->start : Pose{};
  std::vector<Move> moves = replay_moves(*s.commands, start, 0.5);
  std::string last_drawn;
  std::vector<size_t> pending;  // travel since the last drawn primitive
  Polyline stroke;
  auto end_stroke = [&] {
    if (stroke.size() > 1) d.strokes.push_back(stroke);
    stroke.clear();
  };
  int index = 0;
  for (const Move& m : moves) {
    const Command& c = (*s.commands)[m.command];
    DrawStep st;
    st.index = m.command;
    st.cmd = c;
    st.time_s = command_time_s(c, d.robot);
    st.start = m.start;
    st.end = m.end;
    st.path = m.path;
    st.pen_down = m.pen_down;
    d.total_s += st.time_s;
    if (m.pen_down) {
      if (!stroke.empty() && dist(stroke.back(), m.path.front()) > 1e-6) end_stroke();
      stroke.insert(stroke.end(), m.path.begin() + (stroke.empty() ? 0 : 1), m.path.end());
      d.pieces.push_back({c.primitive.substr(0, c.primitive.find(',')), m.path});
      d.draw_s += st.time_s;
      // A merged line draws several primitives (ids joined by ','): its time is shared by length.
      const std::vector<std::string> ids = primitive_ids(c.primitive);
      double total_len = 0;
      for (const auto& id : ids) total_len += s.primitive(id) ? s.primitive(id)->shape.length() : 0;
      for (const auto& id : ids) {
        double share = total_len > 0 && s.primitive(id) ? s.primitive(id)->shape.length() / total_len : 1.0 / ids.size();
        d.primitive_s[id] += st.time_s * share;
        if (!d.draw_index.count(id)) d.draw_index[id] = index++;
      }
      if (!ids.empty()) {
        for (size_t k : pending) d.steps[k].before = ids.front();
        pending.clear();
        last_drawn = ids.back();
      }
    } else {
      if (c.kind == Command::Kind::spin) {
        d.spin_s += st.time_s;
      } else {
        end_stroke();
        d.travel_s += st.time_s;
        ++d.pen_ups;
        d.pen_up.push_back(m.path);
      }
      st.after = last_drawn;
      pending.push_back(d.steps.size());
    }
    d.steps.push_back(std::move(st));
  }
  end_stroke();
  // Pen lifts and drops, timed apart from motion (the robot's pen_time_s each).
  bool down = false;
  int changes = 0;
  for (const auto& st : d.steps) {
    if (st.cmd.kind == Command::Kind::spin) continue;
    if (st.pen_down != down) ++changes, down = st.pen_down;
  }
  d.pen_s = changes * (s.robot ? s.robot->pen_time_s : 0);
  d.total_s += d.pen_s;
  return d;
}

std::string nearest_primitive(const Scene& s, Vec2 q, double* distance) {
  std::string best;
  double bd = INFINITY;
  if (s.primitives)
    for (const auto& p : *s.primitives) {
      double d = p.shape.distance_to(q);
      if (d < bd) bd = d, best = p.id;
    }
  if (distance) *distance = bd;
  return best;
}

}  // namespace sv
