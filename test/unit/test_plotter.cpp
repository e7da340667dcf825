// The XY plotter profile: its motion model, the route that minimizes its time, and the scene
// that records it.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "eval/drawing.hpp"
#include "robot/motion.hpp"
#include "robot/simulate.hpp"
#include "route/route.hpp"
#include "shape_scene.hpp"

using namespace sv;

namespace {

Command pl_line(double d, bool pen_down) {
  Command c;
  c.kind = Command::Kind::line;
  c.distance = d;
  c.pen_down = pen_down;
  return c;
}
Command pl_spin(double deg) {
  Command c;
  c.kind = Command::Kind::spin;
  c.degrees = deg;
  return c;
}
Command pl_arc(double r, double deg) {
  Command c;
  c.kind = Command::Kind::arc;
  c.radius = r;
  c.degrees = deg;
  return c;
}

Robot pl_robot(double ppi) {
  Robot r;
  r.model = "plotter";
  r.ppi = ppi;
  r.pen_time_s = kDefaultPlotterPenTimeS;
  return r;
}

double pl_pen_up_px(const Scene& s) {
  double d = 0;
  for (const Command& c : *s.commands)
    if (!c.pen_down) d += c.length_px();
  return d;
}

double pl_time_of(const Scene& s) { return stream_time_s(*s.commands, *s.robot); }

RouteOptions pl_options() {
  RouteOptions o;
  o.model = "plotter";
  return o;
}

// Five strokes apart from each other (no two ends within a pixel, so each is a pen-down trail of
// its own and only the order and directions change the time): a row of short bars leading away
// from a long bar, and an arc.
std::vector<Shape> pl_scattered() {
  return {Shape::line({10, 10}, {10, 110}),  Shape::line({40, 100}, {40, 80}), Shape::line({70, 20}, {90, 20}),
          Shape::arc({120, 60}, {160, 60}, 0.6), Shape::line({60, 140}, {140, 140})};
}

}  // namespace

TEST_CASE("a plotter's spins take no time; its moves are trapezoids in millimetres", "[robot][plotter]") {
  // 25.4 px per inch: one pixel is one millimetre.
  const Robot r = pl_robot(25.4);
  const Motion m = motion_of(r);
  REQUIRE(m.plotter);
  CHECK(command_time_s(pl_spin(90), r) == 0);
  CHECK(command_time_s(pl_spin(-180), r) == 0);
  CHECK(m.spin_s(45) == 0);
  // Pen-up at 150 mm/s under 1000 mm/s²: the ramp is 150² / 1000 = 22.5 mm.
  CHECK(command_time_s(pl_line(10, false), r) == Approx(2 * std::sqrt(10.0 / 1000)));  // a triangle
  CHECK(command_time_s(pl_line(-100, false), r) == Approx(2 * 150.0 / 1000 + (100 - 22.5) / 150));
  // Pen-down at 50 mm/s: the ramp is 2.5 mm.
  CHECK(command_time_s(pl_line(100, true), r) == Approx(2 * 50.0 / 1000 + (100 - 2.5) / 50));
  CHECK(command_time_s(pl_line(2, true), r) == Approx(2 * std::sqrt(2.0 / 1000)));
  // An arc is its length at the drawing speed, whichever way it turns.
  const double half_turn = kPi * 10;
  CHECK(command_time_s(pl_arc(10, 180), r) == Approx(0.1 + (half_turn - 2.5) / 50));
  CHECK(command_time_s(pl_arc(10, -180), r) == Approx(command_time_s(pl_arc(10, 180), r)));
  // Pixels become millimetres at the robot's ppi: at 50.8 ppi, 200 px are 100 mm.
  CHECK(command_time_s(pl_line(200, true), pl_robot(50.8)) == Approx(command_time_s(pl_line(100, true), r)));
  // Speeds and acceleration are the robot's own.
  Robot fast = r;
  fast.travel_speed_mm_s = 300;
  fast.accel_mm_s2 = 2000;
  CHECK(command_time_s(pl_line(200, false), fast) == Approx(2 * 300.0 / 2000 + (200 - 45.0) / 300));
  // A stream: its moves, plus a lift or drop at every pen change.
  const std::vector<Command> s = {pl_line(100, true), pl_spin(90), pl_line(50, false), pl_spin(-30),
                                  pl_arc(10, 180)};
  double motion = 0;
  for (const Command& c : s) motion += command_time_s(c, r);
  CHECK(stream_time_s(s, r) == Approx(motion + 3 * 0.15));
}

TEST_CASE("the Doodlebot's times are those of its firmware model, through the robot too", "[robot][plotter]") {
  Robot r;
  r.ppi = 60;
  r.pen_time_s = 0.2;
  REQUIRE_FALSE(motion_of(r).plotter);
  for (const Command& c : {pl_line(100, true), pl_line(-40, false), pl_spin(33), pl_arc(80, -120)})
    CHECK(command_time_s(c, r) == command_time_s(c, 60.0));
  const std::vector<Command> s = {pl_line(100, true), pl_spin(90), pl_line(50, false), pl_arc(10, 180)};
  CHECK(stream_time_s(s, r) == stream_time_s(s, 60.0, 0.2));
}

TEST_CASE("a plotter route is the brute-force optimum of pen-up travel and pen changes", "[route][plotter]") {
  const std::vector<Shape> shapes = pl_scattered();
  Scene routed = scene_of_shapes(shapes, 200, 3);
  route(routed, pl_options());
  REQUIRE(routed.robot->plotter());
  const double t = pl_time_of(routed);

  // Every order and direction of the five strokes, emitted as the plotter draws them.
  double best_t = INFINITY, best_px = INFINITY;
  std::vector<int> order(shapes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  do {
    for (int dirs = 0; dirs < 1 << shapes.size(); ++dirs) {
      Scene s = scene_of_shapes(shapes, 200, 3);
      std::vector<TourStep> tour;
      for (size_t k = 0; k < order.size(); ++k)
        tour.push_back({fmt::format("p_{:04d}", order[k] + 1), bool(dirs >> k & 1), 0});
      s.tour = tour;
      emit_tour(s, pl_options());
      best_t = std::min(best_t, pl_time_of(s));
      best_px = std::min(best_px, pl_pen_up_px(s));
    }
  } while (std::next_permutation(order.begin(), order.end()));
  CHECK(t == Approx(best_t).margin(1e-6));
  // Here the fastest tour is also the one that travels least with the pen up.
  CHECK(pl_pen_up_px(routed) == Approx(best_px).margin(1e-3));

  // The Doodlebot's route of the same strokes pays for its turns with pen-up travel: the two
  // profiles choose different tours, and the plotter's travels less.
  Scene doodle = scene_of_shapes(shapes, 200, 3);
  route(doodle, {});
  CHECK(doodle.robot->model == "doodlebot");
  CHECK(pl_pen_up_px(doodle) > pl_pen_up_px(routed) + 1);
  // Timed as a plotter, the Doodlebot's tour is slower than the plotter's own.
  Scene doodle_as_plotter = doodle;
  doodle_as_plotter.robot = routed.robot;
  CHECK(pl_time_of(doodle_as_plotter) > t);
}

TEST_CASE("a plotter route keeps arcs and circles as arc commands, never drives backwards", "[route][plotter]") {
  Scene s = scene_of_shapes({Shape::line({10, 10}, {60, 10}), Shape::arc({60, 10}, {100, 50}, 0.4),
                             Shape::circle({150, 150}, 20), Shape::line({20, 180}, {80, 120})},
                            200, 3);
  route(s, pl_options());
  int arcs = 0;
  for (const Command& c : *s.commands) {
    arcs += c.kind == Command::Kind::arc;
    if (c.kind == Command::Kind::line) CHECK(c.distance >= 0);
  }
  CHECK(arcs == 2);
  simulate(s, {});
  CHECK(s.metrics["spin_time_s"].get<double>() == 0);
  CHECK(s.simulation->total_s == Approx(pl_time_of(s)).margin(1e-5));
  CHECK(s.metrics["pen_time_s"].get<double>() == Approx(0.15 * s.metrics["pen_changes"].get<int>()).margin(1e-6));
}

TEST_CASE("the plotter profile is recorded in the scene and read back", "[route][plotter][scene]") {
  Scene s = scene_of_shapes(pl_scattered(), 200, 3);
  RouteOptions o = pl_options();
  o.travel_speed_mm_s = 250;
  o.accel_mm_s2 = 1500;
  o.pen_time_s = 0.1;
  route(s, o);
  const Scene back = parse_scene(to_json(s).dump());
  REQUIRE(back.robot);
  CHECK(back.robot->model == "plotter");
  CHECK(back.robot->draw_speed_mm_s == kDefaultPlotterDrawMmS);
  CHECK(back.robot->travel_speed_mm_s == 250);
  CHECK(back.robot->accel_mm_s2 == 1500);
  CHECK(back.robot->pen_time_s == 0.1);
  CHECK(s.config.at("route.travel_speed_mm_s")["from"] == "user");
  CHECK(s.config.at("route.draw_speed_mm_s")["from"] == "default");
  // An edit re-routes with the same profile.
  const RouteOptions again = route_options_of(back);
  CHECK(again.model == "plotter");
  CHECK(again.travel_speed_mm_s == 250);
  CHECK(again.pen_time_s == 0.1);
  // The tools' replay prices it as a plotter too.
  CHECK(drawing_of(back).total_s == Approx(stream_time_s(*back.commands, *back.robot)).margin(1e-9));
  CHECK(drawing_of(back).spin_s == 0);

  // A Doodlebot scene records none of it.
  Scene d = scene_of_shapes(pl_scattered(), 200, 3);
  route(d, {});
  const json j = to_json(d);
  CHECK(j["robot"]["model"] == "doodlebot");
  CHECK_FALSE(j["robot"].contains("travel_speed_mm_s"));
  CHECK_FALSE(d.config.contains("route.travel_speed_mm_s"));
}

TEST_CASE("the robot is doodlebot or plotter; speeds are a plotter's", "[route][plotter]") {
  Scene s = scene_of_shapes(pl_scattered(), 200, 3);
  RouteOptions o;
  o.model = "tractor";
  CHECK_THROWS_AS(route(s, o), Error);
  RouteOptions speeds;
  speeds.travel_speed_mm_s = 100;
  CHECK_THROWS_AS(route(s, speeds), Error);
  // A scene naming another robot is refused by its schema.
  route(s, pl_options());
  json j = to_json(s);
  j["robot"]["model"] = "tractor";
  CHECK_THROWS_AS(parse_scene(j.dump()), Error);
}
