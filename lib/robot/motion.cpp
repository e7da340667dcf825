#include "robot/motion.hpp"

#include <cmath>

namespace sv {

// Both wheels start and stop together: the outer one travels farther at turn cruise, the
// inner one is scaled down in speed and acceleration so the profiles share their shape; when
// the inner wheel would have to be faster (it never is for radius >= 0) the roles swap.
static double arc_time_in(double radius_in, double deg) {
  deg = std::abs(deg);
  double outer = 2 * kPi * (kWheelbaseRadiusIn + radius_in) * deg / 360 / kInchesPerMicrostep;
  double inner = 2 * kPi * std::abs(radius_in - kWheelbaseRadiusIn) * deg / 360 / kInchesPerMicrostep;
  if (outer <= 0) return 0;
  double t_outer = outer / kTurnCruiseSteps;
  double v_inner = std::abs(inner / t_outer);
  double a_out = kAccelSteps, a_in = kAccelSteps * v_inner / kTurnCruiseSteps;
  if (v_inner > kTurnCruiseSteps) {
    a_in = kAccelSteps;
    a_out = kAccelSteps * kTurnCruiseSteps / v_inner;
  }
  return std::max(trapezoid_time_s(outer, kTurnCruiseSteps, a_out),
                  trapezoid_time_s(inner, v_inner, a_in));
}

double arc_time_s(double radius_px, double deg, double ppi) { return arc_time_in(radius_px / ppi, deg); }

double command_time_s(const Command& c, double ppi) {
  switch (c.kind) {
    case Command::Kind::line: return line_time_s(c.distance, ppi);
    case Command::Kind::spin: return spin_time_s(c.degrees);
    case Command::Kind::arc: return arc_time_s(c.radius, c.degrees, ppi);
  }
  return 0;
}

int pen_changes(const std::vector<Command>& commands) {
  int changes = 0;
  bool down = false;
  for (const Command& c : commands) {
    if (c.kind == Command::Kind::spin) continue;
    bool d = c.pen_down;
    changes += d != down;
    down = d;
  }
  return changes;
}

double stream_time_s(const std::vector<Command>& commands, double ppi, double pen_time_s) {
  double t = 0;
  for (const Command& c : commands) t += command_time_s(c, ppi);
  return t + pen_changes(commands) * pen_time_s;
}

double Motion::command_s(const Command& c) const {
  if (!plotter) return command_time_s(c, ppi);
  switch (c.kind) {
    case Command::Kind::line: return c.pen_down ? draw_line_s(c.distance) : travel_s(c.distance);
    case Command::Kind::spin: return 0;
    case Command::Kind::arc: return arc_s(c.radius, c.degrees, c.pen_down);
  }
  return 0;
}

double Motion::stream_s(const std::vector<Command>& commands) const {
  if (!plotter) return stream_time_s(commands, ppi, pen_time_s);
  double t = 0;
  for (const Command& c : commands) t += command_s(c);
  return t + pen_changes(commands) * pen_time_s;
}

Motion motion_of(const Robot& robot) {
  Motion m;
  m.ppi = robot.ppi;
  m.pen_time_s = robot.pen_time_s;
  m.plotter = robot.plotter();
  m.draw_mm_s = robot.draw_speed_mm_s;
  m.travel_mm_s = robot.travel_speed_mm_s;
  m.accel_mm_s2 = robot.accel_mm_s2;
  return m;
}

double command_time_s(const Command& c, const Robot& robot) { return motion_of(robot).command_s(c); }

double stream_time_s(const std::vector<Command>& commands, const Robot& robot) {
  return motion_of(robot).stream_s(commands);
}

double ppi_for_footprint(double longest_side_px, double footprint_mm) {
  return longest_side_px / (footprint_mm / 25.4);
}

}  // namespace sv
