// Stage 3 of routing: the command stream that draws a tour.
//
// Emission is closed-loop: every command is rounded as the scene serializes it and integrated
// exactly as the robot (and the scorer) will, and the next command is aimed from that pose at
// the primitive's true end point, so rounding never accumulates. Straight legs are driven
// forwards or backwards, whichever the Viterbi pass over the whole tour finds faster. Pen-up
// travel is a straight line (forwards or backwards) or, where that is faster, an arc that does
// one of its two turns on the way (Doodlebot only: a plotter turns for free). Spins too small to matter (below min_spin_deg and moving the next move's
// end by at most drift_px) are skipped, and consecutive collinear drawn lines merge into one
// command (one acceleration ramp instead of two).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "route/trails.hpp"

namespace sv {

struct EmitParams {
  double min_spin_deg = 0.01;
  double drift_px = 0.005;
  double deviation_px = 0;  // > 0: redraw pen-down runs with fewer commands within this (route/simplify.hpp)
  int window = 24;
  std::map<std::string, double> primitive_deviation_px;  // by primitive id: its own deviation_px
};

struct Emission {
  std::vector<Command> commands;
  Pose start;  // the given start, else at the first primitive's start facing along it
};

// `ids[i]` tags the commands that draw shapes[i]; merged lines carry their ids joined by ','.
Emission emit_commands(const std::vector<Shape>& shapes, const std::vector<std::string>& ids,
                       const std::vector<Traversal>& steps, const CostModel& cost, const EmitParams& params,
                       const std::optional<Pose>& start);

}  // namespace sv
