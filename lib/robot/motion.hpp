// The Doodlebot's firmware motion model: how long each command of the stream takes.
//
// A port of the TMC429 estimator the reference pipeline and the evaluation scorer use
// (reference §D): every move is a symmetric trapezoidal velocity profile in microsteps,
// lines cruise at 2000 microsteps/s, turns and arcs at 3200, acceleration 1000 microsteps/s²;
// a wheel is 2.93 in from the robot's centre; one full step moves 0.055 in, 16 microsteps each.
// Pixel distances become inches at `ppi` pixels per inch, so times depend on the drawing's
// physical size (the robot's server scales each drawing to its footprint).
#pragma once
#include <cmath>
#include <vector>

#include "core/scene.hpp"

namespace sv {

constexpr double kLineCruiseSteps = 2000;   // microsteps/s
constexpr double kTurnCruiseSteps = 3200;   // microsteps/s, outer wheel of arcs and spins
constexpr double kAccelSteps = 1000;        // microsteps/s²
constexpr double kWheelbaseRadiusIn = 2.93; // centre to wheel
constexpr double kInchesPerMicrostep = 0.055 / 16;

// Pen lift or drop. The client sends the servo to 45° (down) or 0° (up) and waits for the
// firmware's reply, but neither the servo model nor the firmware's settle delay is documented
// anywhere we can read, so no duration is assumed; callers that know their robot pass one.
constexpr double kDefaultPenTimeS = 0;

// Time of a trapezoidal move over `microsteps` (sign ignored) at cruise `v` and acceleration `a`;
// a triangle when the move is too short to reach cruise. Inline, with line and spin times: the
// route's search prices millions of moves.
inline double trapezoid_time_s(double microsteps, double v, double a) {
  double d = std::abs(microsteps);
  if (d <= 0 || v <= 0 || a <= 0) return 0;
  double ramp = v * v / a;  // acceleration plus deceleration distance
  if (d <= ramp) return 2 * std::sqrt(d / a);
  return 2 * v / a + (d - ramp) / v;
}
// A straight move of `px` pixels (either direction).
inline double line_time_s(double px, double ppi) {
  return trapezoid_time_s(px / ppi / kInchesPerMicrostep, kLineCruiseSteps, kAccelSteps);
}
// An arc of `radius_px` about a centre beside the robot, sweeping `deg` (either sign): the
// outer wheel runs at turn cruise and the inner wheel at the speed that keeps the ratio.
double arc_time_s(double radius_px, double deg, double ppi);
// A turn in place (an arc of radius 0); independent of scale. Both wheels travel the same
// distance at turn cruise, so it is one trapezoid (the arc formula reduces to this exactly).
inline double spin_time_s(double deg) {
  return trapezoid_time_s(2 * kPi * kWheelbaseRadiusIn * std::abs(deg) / 360 / kInchesPerMicrostep,
                          kTurnCruiseSteps, kAccelSteps);
}
// Any command of the stream, on the Doodlebot.
double command_time_s(const Command& c, double ppi);

// An XY pen plotter (robot model "plotter"): the pen moves along the page on two axes, so the
// command stream's spins take no time, and every line or arc is one trapezoidal profile along
// its path in millimetres on paper (pixels at `ppi`), at the drawing speed with the pen down
// and the travel speed with it up, under one acceleration. The defaults (core/scene.hpp) are an
// AxiDraw's: its driver's defaults move the pen down at 25 % and up at 75 % of its 8.6979 in/s
// limit over 110 (50.2 and 150.6 mm/s), accelerate at 75 % of 40 in/s² down and 60 in/s² up
// (762 and 1143 mm/s², here one value, 1000), and the servo's lift or drop is taken as 0.15 s.
inline double plotter_move_s(double px, double ppi, double speed_mm_s, double accel_mm_s2) {
  return trapezoid_time_s(px / ppi * 25.4, speed_mm_s, accel_mm_s2);
}

// The motion model a scene's robot names, at its scale: what every time in sv is priced by.
// Inline: the route's search prices millions of moves through it.
struct Motion {
  double ppi = 1;
  double pen_time_s = 0;  // per pen lift or drop
  bool plotter = false;
  double draw_mm_s = kDefaultPlotterDrawMmS, travel_mm_s = kDefaultPlotterTravelMmS,
         accel_mm_s2 = kDefaultPlotterAccelMmS2;

  // A pen-up straight move of `px` (either direction).
  double travel_s(double px) const {
    return plotter ? plotter_move_s(px, ppi, travel_mm_s, accel_mm_s2) : line_time_s(px, ppi);
  }
  // A drawn straight line of `px`.
  double draw_line_s(double px) const {
    return plotter ? plotter_move_s(px, ppi, draw_mm_s, accel_mm_s2) : line_time_s(px, ppi);
  }
  // An arc of `radius_px` sweeping `deg` (either sign), drawn or (pen up) travel.
  double arc_s(double radius_px, double deg, bool pen_down = true) const {
    return plotter ? plotter_move_s(std::abs(radius_px * deg) * kPi / 180, ppi, pen_down ? draw_mm_s : travel_mm_s,
                                    accel_mm_s2)
                   : arc_time_s(radius_px, deg, ppi);
  }
  // A turn in place by `deg`: free on a plotter.
  double spin_s(double deg) const { return plotter ? 0.0 : spin_time_s(deg); }
  double command_s(const Command& c) const;
  // Every command plus pen_time_s per pen change.
  double stream_s(const std::vector<Command>& commands) const;
};

// The robot's own motion model (its model, scale, pen time and plotter speeds).
Motion motion_of(const Robot& robot);
// Any command of the stream, on the scene's robot: every place that prices a command goes
// through this (or motion_of), so a plotter scene is timed as a plotter everywhere.
double command_time_s(const Command& c, const Robot& robot);

// Number of pen lifts and drops the stream causes; the pen starts up, a drawing command needs
// it down and a pen-up line needs it up.
int pen_changes(const std::vector<Command>& commands);
// Motion time of every command plus `pen_time_s` per pen change, on the Doodlebot.
double stream_time_s(const std::vector<Command>& commands, double ppi, double pen_time_s);
// The same on the scene's robot (its own pen time).
double stream_time_s(const std::vector<Command>& commands, const Robot& robot);

// Pixels per inch when the drawing's longest side measures `footprint_mm` on paper.
double ppi_for_footprint(double longest_side_px, double footprint_mm = kDefaultFootprintMm);

}  // namespace sv
