// Emission's shortcut pass: fewer, longer commands for the same drawing.
//
// The robot is acceleration-limited: below its 13.75 in ramp a move's time grows like the
// square root of its length and a spin's like the square root of its angle, so every extra
// command and every turn costs. A pen-down run of legs (consecutive primitives drawn without
// lifting the pen) is redrawn with the fastest sequence of line and arc commands whose path
// stays within `deviation_px` of the legs' own path: collinear and near-collinear pieces
// become one line, a turn + short line + turn at a tiny kink becomes part of one line, a
// chain of short lines or arcs that follows a circle becomes one arc (one ramp and one
// sweep instead of a line + spin + line per piece). It is a shortest path over the run's
// joints (candidates spanning up to `window` legs), whose states carry the heading a
// command leaves with, so the spins between commands, into the run and out of it are priced
// by the same motion model as the commands themselves. A state may also continue with the arc
// that leaves along its heading (G1, no spin) when the legs it covers stay within the deviation.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "route/cost.hpp"

namespace sv {

struct SimplifyParams {
  double deviation_px = 0.25;  // 0: keep every leg as it is
  int window = 24;             // legs one command may replace
  // Per leg, when not empty: the deviation allowed for that leg (a command replacing several
  // legs keeps within the smallest of theirs).
  std::vector<double> leg_deviation_px;
};

struct SimplifiedLegs {
  std::vector<Leg> legs;
  std::vector<std::string> ids;  // per leg; a merged leg carries its primitives' ids joined by ','
};

// Simplifies every pen-down run of `legs` (in drawing order, `ids` per leg). Dots and circles
// are kept and end a run; so does a gap wider than cost.join_px. `start` is the robot's pose
// before the first leg, if known.
SimplifiedLegs simplify_legs(const std::vector<Leg>& legs, const std::vector<std::string>& ids,
                             const CostModel& cost, const SimplifyParams& params, const std::optional<Pose>& start);

}  // namespace sv
