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
// Any command of the stream.
double command_time_s(const Command& c, double ppi);

// Number of pen lifts and drops the stream causes; the pen starts up, a drawing command needs
// it down and a pen-up line needs it up.
int pen_changes(const std::vector<Command>& commands);
// Motion time of every command plus `pen_time_s` per pen change.
double stream_time_s(const std::vector<Command>& commands, double ppi, double pen_time_s);

// Pixels per inch when the drawing's longest side measures `footprint_mm` on paper.
double ppi_for_footprint(double longest_side_px, double footprint_mm = kDefaultFootprintMm);

}  // namespace sv
