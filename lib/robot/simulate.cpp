#include "robot/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "robot/motion.hpp"
#include "robot/replay.hpp"

namespace sv {

namespace {

constexpr double kMaxTracePoses = 1e6;  // along all the paths of a traced simulation

json pose_json(const Pose& p) {
  return json::array({round_to(p.x, 1e-4), round_to(p.y, 1e-4), round_to(wrap_deg(p.heading_deg), 1e-4)});
}

// What a reader of the step log should notice about a command.
std::vector<std::string> notes_for(const Command& c, const Robot& robot, double stroke_width_px) {
  const bool plotter = robot.plotter();
  std::vector<std::string> notes;
  switch (c.kind) {
    case Command::Kind::spin:
      if (plotter) break;  // the stream's heading only: a plotter does not turn
      if (long_way_spin(c))
        notes.push_back(fmt::format("spin of {:.1f}°: the robot turns the long way ({:.1f}° faces the same way)",
                                    c.degrees, wrap_deg(c.degrees)));
      else if (std::abs(c.degrees) < 1)
        notes.push_back(fmt::format("spin under 1 deg ({:.3f}) still costs {:.3f} s", c.degrees, spin_time_s(c.degrees)));
      break;
    case Command::Kind::line:
      if (c.pen_down && c.distance == 0) notes.push_back("dot: pen touches down without moving");
      if (c.distance < 0 && !plotter) notes.push_back("drives backwards");
      if (!c.pen_down) notes.push_back(fmt::format("pen-up travel {:.0f} px", std::abs(c.distance)));
      if (!c.pen_down && std::abs(c.distance) < stroke_width_px)
        notes.push_back(fmt::format("pen-up shorter than a stroke width ({:.2f} < {:.2f} px): it could be drawn "
                                    "instead, saving a pen lift and drop",
                                    std::abs(c.distance), stroke_width_px));
      break;
    case Command::Kind::arc:
      if (!c.pen_down) notes.push_back(fmt::format("pen-up travel along an arc of {:.0f} px", c.length_px()));
      if (!plotter && c.radius / robot.ppi < kWheelbaseRadiusIn)
        notes.push_back("radius inside the wheelbase: the inner wheel turns backwards");
      break;
  }
  return notes;
}

// The poses along a move: every `spacing` px of its path, or every 15 degrees of a spin (at
// most 48 poses: a turn of more than two full turns is spread over as many).
json trace_of(const Move& m, const Command& c, double spacing) {
  json t = json::array();
  if (m.kind == Command::Kind::spin) {
    int n = std::max(1, static_cast<int>(std::ceil(std::min(std::abs(c.degrees), 720.0) / 15)));
    for (int k = 0; k <= n; ++k)
      t.push_back(pose_json({m.start.x, m.start.y, m.start.heading_deg + c.degrees * k / n}));
    return t;
  }
  // The heading turns in proportion to the distance.
  double total = polyline_length(m.path), done = 0;
  auto at = [&](Vec2 p, double s) {
    double f = total > 0 ? s / total : 1;
    t.push_back(pose_json({p.x, p.y, m.start.heading_deg + (m.end.heading_deg - m.start.heading_deg) * f}));
  };
  at(m.path.front(), 0);
  double next = spacing;
  for (size_t i = 1; i < m.path.size(); ++i) {
    Vec2 a = m.path[i - 1], b = m.path[i];
    double len = dist(a, b);
    for (; next < done + len; next += spacing) at(a + (b - a) * ((next - done) / len), next);
    done += len;
  }
  if (total > 0) at(m.path.back(), total);
  return t;
}

}  // namespace

bool long_way_spin(const Command& c) { return c.kind == Command::Kind::spin && std::abs(c.degrees) > 180; }

std::map<size_t, std::pair<double, double>> command_times(const Simulation& simulation) {
  std::map<size_t, std::pair<double, double>> when;
  double t = 0;
  for (const SimStep& st : simulation.steps) {
    if (st.op != SimStep::Op::pen_up && st.op != SimStep::Op::pen_down) when[st.command] = {t, t + st.duration_s};
    t += st.duration_s;
  }
  return when;
}

void simulate(Scene& scene, const SimulateOptions& options) {
  if (!scene.commands || !scene.robot)
    throw Error(Code::invalid_scene, "simulate: the scene has no command stream; run sv-route first");
  const Robot& robot = *scene.robot;
  if (!(robot.ppi > 0)) throw Error(Code::invalid_scene, "simulate: robot.ppi must be positive");
  const auto& commands = *scene.commands;
  const double stroke_w = stroke_width_of(scene);

  Simulation sim;
  double t_down = 0, t_up = 0, t_spin = 0, len_down = 0, len_up = 0, spin_deg = 0;
  int pen_up_moves = 0, pen_lifts = 0, pen_changes = 0, spins = 0, strokes = 0;
  bool down = false;
  auto add_step = [&](SimStep::Op op, const Move& m, const Pose& end, double dur) {
    sim.steps.push_back({op, static_cast<uint32_t>(m.command), round_to(dur, 1e-6),
                         {round_to(end.x, 1e-4), round_to(end.y, 1e-4), round_to(wrap_deg(end.heading_deg), 1e-4)}});
  };
  const Motion model = motion_of(robot);
  const std::vector<Move> moves = replay_moves(commands, robot.start);
  sim.steps.reserve(2 * moves.size());  // at most a pen change before each move
  // A pose every pixel of the paths, or farther apart when they are longer than kMaxTracePoses px.
  double trace_spacing = 1;
  if (options.trace) {
    double paths = 0;
    for (const Move& m : moves) paths += polyline_length(m.path);
    trace_spacing = std::max(1.0, paths / kMaxTracePoses);
    sim.traces = json::array();
  }
  for (const Move& m : moves) {
    const Command& c = commands[m.command];
    double dur = model.command_s(c);
    if (m.kind != Command::Kind::spin && m.pen_down != down) {
      add_step(m.pen_down ? SimStep::Op::pen_down : SimStep::Op::pen_up, m, m.start, robot.pen_time_s);
      if (options.trace) sim.traces.push_back(nullptr);
      ++pen_changes;
      pen_lifts += !m.pen_down;
      strokes += m.pen_down;
      down = m.pen_down;
    }
    add_step(m.kind == Command::Kind::spin  ? SimStep::Op::spin
             : m.kind == Command::Kind::arc ? SimStep::Op::arc
                                            : SimStep::Op::line,
             m, m.end, dur);
    for (std::string& note : notes_for(c, robot, stroke_w)) sim.notes.emplace_back(sim.steps.size() - 1, std::move(note));
    if (options.trace) sim.traces.push_back(trace_of(m, c, trace_spacing));
    if (m.kind == Command::Kind::spin) {
      t_spin += dur;
      spin_deg += std::abs(c.degrees);
      ++spins;
    } else if (m.pen_down) {
      t_down += dur;
      len_down += polyline_length(m.path);
    } else {
      t_up += dur;
      len_up += polyline_length(m.path);
      ++pen_up_moves;
    }
  }
  double motion = t_down + t_up + t_spin, pen = pen_changes * robot.pen_time_s;
  sim.total_s = round_to(motion + pen, 1e-6);
  sim.motion_time_s = round_to(motion, 1e-6);
  sim.pen_time_s = round_to(pen, 1e-6);
  sim.ppi = round_to(robot.ppi, 1e-4);
  scene.simulation = std::move(sim);
  json prims = {{"line", 0}, {"arc", 0}, {"circle", 0}};
  if (scene.primitives)
    for (const Primitive& p : *scene.primitives) prims[prim_type_name(p.shape.type)] = prims[prim_type_name(p.shape.type)].get<int>() + 1;
  scene.metrics = {{"draw_time_s", round_to(motion + pen, 1e-6)},
                   {"motion_time_s", round_to(motion, 1e-6)},
                   {"pen_down_time_s", round_to(t_down, 1e-6)},
                   {"pen_up_travel_time_s", round_to(t_up, 1e-6)},
                   {"spin_time_s", round_to(t_spin, 1e-6)},
                   {"pen_time_s", round_to(pen, 1e-6)},
                   {"pen_up_moves", pen_up_moves},
                   {"pen_lifts", pen_lifts},
                   {"pen_changes", pen_changes},
                   {"spins", spins},
                   {"spin_total_deg", round_to(spin_deg, 1e-4)},
                   {"strokes", strokes},
                   {"pen_down_length_px", round_to(len_down, 1e-4)},
                   {"pen_up_length_px", round_to(len_up, 1e-4)},
                   {"primitives", std::move(prims)},
                   {"commands", commands.size()},
                   {"ppi", round_to(robot.ppi, 1e-4)}};
}

}  // namespace sv
