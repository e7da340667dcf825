// Routing: the order, direction and command stream that draw the primitives fastest.
//
// route() minimizes the robot's draw time — pen-down drawing, pen-up travel, spins and pen
// changes, priced by the firmware motion model at the drawing's physical scale — in three
// stages: cover the primitives with the fewest pen-down trails (route/trails.hpp), order and
// orient the trails (route/order.hpp), emit the commands (route/emit.hpp). The result is never
// slower than the plain nearest-neighbour tour nor than the scene's own tour, and replays onto
// the primitives' geometry.
//
// The start pose is part of the plan. Free (the default), the robot is placed at the first
// stroke facing along it, and every routing or re-emission chooses it again for the stroke then
// first; fixed (given by the user), the robot starts there and the time from it to the first
// stroke counts like any other. scene.robot records which (start_mode).
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/params.hpp"
#include "core/scene.hpp"

namespace sv {

struct RouteOptions {
  double ppi = 0;             // 0: the primitives' longest side measures footprint_mm on paper
  double footprint_mm = kDefaultFootprintMm;
  std::optional<Pose> start;  // a fixed start; none: free (at the first stroke, facing along it)
  double pen_time_s = -1;     // < 0: the robot default (kDefaultPenTimeS; a plotter's kDefaultPlotterPenTimeS)
  // The motion model the route minimizes: "doodlebot" or "plotter" ("": doodlebot). A plotter's
  // speeds and acceleration (<= 0: the defaults of core/scene.hpp).
  std::string model;
  double draw_speed_mm_s = 0, travel_speed_mm_s = 0, accel_mm_s2 = 0;
  // Tuning keys of route_param_table(), with or without the "route." prefix.
  std::map<std::string, double> overrides;
};

// Reads scene.primitives (a primitive's own route_deviation_px, when set, replaces
// route.deviation_px for it); routes pieces of them: a line or arc is split where another
// primitive's end touches its interior (within snap_px), so a line through a T is drawn in two
// tour steps (with t0/t1) and the stem joins it without a pen lift. Writes scene.robot (ppi, footprint, pen time, start pose and mode),
// scene.tour, scene.commands (each drawing command tagged with its primitive id; a merged
// line carries its ids joined by ',') and the config entries route.*. Throws
// Error(invalid_scene) without primitives, Error(invalid_selection) for an unknown or
// out-of-range option or a start off the page.
//
// The search starts from the scene's own tour too, when it has one (an order or reversals an
// agent set): that tour as it stands is a candidate, and its pen-down runs are re-ordered and
// re-oriented like the search's own. Every candidate is judged by the time of the stream it
// emits; the scene's tour stays unless one is faster. The best is then improved again from its
// own runs until that finds nothing faster, so routing a routed scene again with the same
// options changes nothing.
void route(Scene& scene, const RouteOptions& options);

// Re-emits scene.commands for scene.tour as it stands (after the order or a direction was
// edited), with the same scale and options; writes scene.robot and the config as route() does.
// Throws Error(not_found) when the tour names a primitive the scene does not have.
void emit_tour(Scene& scene, const RouteOptions& options);

// Re-emits the tour after an edit, keeping it: steps of primitives that are gone are dropped,
// every other step keeps its place, direction and entry, and the primitives in `place` (and
// any the tour does not name) are taken out and inserted one by one, in the scene's primitive
// order, where they add the least turning and pen-up travel (both directions tried). Without
// a step to keep, the scene is routed afresh (route()). Writes what route() writes.
void route_keeping(Scene& scene, const RouteOptions& options, const std::set<std::string>& place);

// A primitive held at a fixed position of the tour (0-based), drawn in the given direction.
struct PinnedStep {
  size_t position = 0;
  std::string primitive;
  bool reverse = false;
};

// Routes with some steps pinned (whole primitives, one step each: a line through a T is not
// split here): the other primitives keep the scene's tour order as the
// starting point and, when `optimize`, are re-ordered and re-oriented around the pins by local
// search (move one step to another free slot, flip one) on the motion model's time. Throws
// Error(invalid_selection) for a position out of range or taken twice, Error(not_found) for an
// unknown primitive.
void route_with_pins(Scene& scene, const RouteOptions& options, const std::vector<PinnedStep>& pins,
                     bool optimize = true);

// The route.* parameters: the tuning keys --set takes (set_by "--set"), and the scale, pen
// time and (a plotter's) speeds recorded from sv-route's own options.
const ParamTable& route_param_table();

// Every route.* parameter, each member bound to its declaration in route_param_table() (which
// holds the defaults); the integer and flag ones are whole numbers.
struct RouteParams {
  double snap_px = 0, min_spin_deg = 0, drift_px = 0, deviation_px = 0, merge_window = 0, reverse_drive = 0,
         travel_arcs = 0, circle_entries = 0, closed_starts = 0, max_passes = 0, exact_matching_max = 0,
         redraw_lines = 0;
  // Recorded from sv-route's own options (set_by "--ppi", ...) and from snap_px (join_px).
  double ppi = 0, footprint_mm = 0, pen_time_s = 0, draw_speed_mm_s = 0, travel_speed_mm_s = 0, accel_mm_s2 = 0,
         join_px = 0;
};

// The route parameters a scene was routed with (its config "route.*"; where absent, what
// sv-route resolves for the scene without options): the one reading of them every module uses.
RouteParams route_params_of(const Scene& s);

// Fills what `options` leaves unset (model, speeds, pen time) from a plotter robot: re-routing a
// plotter's scene keeps its profile.
void keep_plotter(const Robot& robot, RouteOptions& options);

// A start as sv-route's --start and the tools' `start` take it: "free", or "X,Y,HEADING_DEG" (a
// fixed start). Returns nothing for free; throws Error(invalid_selection) for anything else.
std::optional<Pose> parse_start(const std::string& text);

// What the start costs in a routed scene: how it was chosen, where the robot starts, the stroke
// it draws first and the time of the turns and pen-up travel before that stroke (none with a
// free start: the robot is placed on it).
struct StartCost {
  bool fixed = false;
  Pose pose;
  std::string first_primitive;  // "" when nothing is drawn
  double to_first_stroke_s = 0;
};
StartCost start_cost(const Scene& scene);
// Whether the robot now starts elsewhere, on another stroke, or at another cost to it.
bool start_moved(const StartCost& before, const StartCost& after);
// {"mode", "x", "y", "heading_deg", "first_primitive", "to_first_stroke_s"}
json start_json(const StartCost& c);
// "start free: the robot is placed at the first stroke p_0003 at (12.5, 40) facing 90 deg" or
// "start fixed at (0, 0) facing 0 deg: 2.31 s of turns and pen-up travel to the first stroke p_0003".
std::string start_text(const StartCost& c);

}  // namespace sv
