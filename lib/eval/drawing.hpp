// The drawing as the robot executes it: every command with its time and the primitives around
// it, the pen-down paths by primitive, and what the scene's primitives were fitted to.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/scene.hpp"

namespace sv {

// One command as executed.
struct DrawStep {
  size_t index = 0;
  Command cmd;
  double time_s = 0;
  Pose start, end;
  Polyline path;              // swept path (empty for spins)
  bool pen_down = false;
  std::string after, before;  // travel: the primitives drawn just before and just after
};

struct Drawing {
  bool from_commands = false;  // false: no command stream; strokes are the primitives themselves
  double ppi = 0;
  Robot robot;                 // the scene's robot (a Doodlebot when it has none) at that ppi
  std::vector<DrawStep> steps;
  std::vector<Polyline> strokes;               // pen-down paths
  std::vector<std::pair<std::string, Polyline>> pieces;  // pen-down paths by primitive ("" unknown)
  std::vector<Polyline> pen_up;                // pen-up travel, as the robot moves (a line or an arc)
  std::map<std::string, double> primitive_s;   // drawing time of each primitive
  std::map<std::string, int> draw_index;       // position in the draw order
  double total_s = 0, draw_s = 0, travel_s = 0, spin_s = 0, pen_s = 0;
  int pen_ups = 0;
};

// Pixels per inch the scene's times are computed at (robot.ppi, else its footprint, else 1).
double scene_ppi(const Scene& s);
// The scene's robot, a default Doodlebot when it has none, at scene_ppi: what its times are priced by.
Robot scene_robot(const Scene& s);
// Replays the command stream (or, without one, lays the primitives out in tour or id order).
Drawing drawing_of(const Scene& s);

// The primitive nearest to q within the scope's primitives ("" when there are none).
std::string nearest_primitive(const Scene& s, Vec2 q, double* distance = nullptr);

// Ids in draw order (tour order, then untoured ids in id order).
std::vector<std::string> draw_order(const Scene& s);

}  // namespace sv
