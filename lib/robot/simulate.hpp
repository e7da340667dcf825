// sv-simulate's library: replay the command stream through the motion model.
#pragma once
#include <map>
#include <utility>

#include "core/scene.hpp"

namespace sv {

struct SimulateOptions {
  bool trace = false;  // add each step's pose samples (1 px apart, farther beyond a million px; 15 degrees)
};

// Replays scene.commands from scene.robot.start at scene.robot.ppi into scene.simulation (a step
// for each command and each pen change before one, with its duration and end pose; notes on what
// a reader should notice; with options.trace the poses along each step; total_s, motion_time_s,
// pen_time_s, ppi) and scene.metrics (times split by kind, counts, lengths).
// motion_time_s is the scorer's est_time_s for the same stream and ppi; pen changes are
// timed separately (robot.pen_time_s each) and added in total_s / draw_time_s.
// Throws Error(invalid_scene) when the scene has no commands or no robot.
void simulate(Scene& scene, const SimulateOptions& options);

// When the robot executes each move (line or arc) and spin of a simulation: command index ->
// {begin, end} in seconds from the start, pen changes included before them.
std::map<size_t, std::pair<double, double>> command_times(const Simulation& simulation);

// A spin the robot turns the long way (over 180 degrees; the firmware turns by the angle it is sent).
bool long_way_spin(const Command& c);

}  // namespace sv
