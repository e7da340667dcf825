// Integration of a command stream into the paths the robot draws, with exactly the
// semantics of the evaluation scorer (score.py integrate_commands): a spin adds to the
// heading; a line moves its distance along the heading (backwards when negative) and draws
// when pen-down; an arc turns about a centre `radius` to the left of the heading
// (heading + 90°) when degrees > 0, to the right otherwise, and always draws.
#pragma once
#include <utility>
#include <vector>

#include "core/scene.hpp"

namespace sv {

// One command as executed: the poses around it and, for moves, the path swept.
struct Move {
  size_t command = 0;
  Command::Kind kind = Command::Kind::line;
  bool pen_down = false;  // true for drawing lines and for arcs
  Pose start, end;
  Polyline path;  // start point, then samples no farther than step_px apart; empty for spins
};

// The pose after executing `c` from `p` (heading accumulates, it is not wrapped).
Pose apply_command(const Pose& p, const Command& c);
// Paths are sampled every step_px, or more coarsely when their samples together would be more
// than this (16M samples, 256 MiB): one turn of radius 1e6 is 25 million samples at 0.25 px.
constexpr double kMaxPathSamples = 1 << 24;

// Every command as a Move, in order; arcs are the only moves sampled.
std::vector<Move> replay_moves(const std::vector<Command>& commands, const Pose& start,
                               double step_px = 0.25, double max_samples = kMaxPathSamples);

struct Replay {
  // Pen-down paths; a stroke is a maximal run of drawing commands not interrupted by
  // pen-up travel (spins do not interrupt it).
  std::vector<Polyline> strokes;
  std::vector<std::pair<Vec2, Vec2>> pen_up;
  Pose end;
  double spin_total_deg = 0;
  int pen_up_moves = 0;
};

Replay replay(const std::vector<Command>& commands, const Pose& start, double step_px = 0.25);

}  // namespace sv
