#include <catch2/catch.hpp>

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <set>

#include "core/error.hpp"
#include "edit/edit.hpp"
#include "robot/motion.hpp"
#include "robot/replay.hpp"
#include "robot/simulate.hpp"
#include "route/emit.hpp"
#include "route/order.hpp"
#include "route/route.hpp"
#include "route/simplify.hpp"
#include "shape_scene.hpp"

using namespace sv;

namespace {

Scene scene_of(const std::vector<Shape>& shapes) { return scene_of_shapes(shapes, 300, 4); }

double time_of(const Scene& s) { return stream_time_s(*s.commands, s.robot->ppi, s.robot->pen_time_s); }

double distance_to_strokes(Vec2 q, const std::vector<Polyline>& strokes) {
  double d = INFINITY;
  for (const auto& s : strokes) {
    if (s.size() == 1) d = std::min(d, dist(q, s[0]));
    for (size_t i = 1; i < s.size(); ++i) d = std::min(d, point_segment_distance(q, s[i - 1], s[i]));
  }
  return d;
}

// Largest distance between what the robot draws and the primitives, both ways.
double deviation(const Scene& s) {
  Replay r = replay(*s.commands, s.robot->start, 0.05);
  double worst = 0;
  for (const Primitive& p : *s.primitives)
    for (Vec2 q : p.shape.sample(0.05)) worst = std::max(worst, distance_to_strokes(q, r.strokes));
  for (const auto& st : r.strokes)
    for (Vec2 q : st) {
      double d = INFINITY;
      for (const Primitive& p : *s.primitives) d = std::min(d, p.shape.distance_to(q));
      worst = std::max(worst, d);
    }
  return worst;
}

Shape arc_through(Vec2 c, double r, double a0_deg, double sweep_deg) {
  double a0 = deg2rad(a0_deg), sw = deg2rad(sweep_deg);
  return Shape::arc(c + from_angle(a0) * r, c + from_angle(a0 + sw) * r, std::tan(sw / 4));
}

// A drawing with every case routing handles: a chain of lines with a T junction, arcs joined
// tangentially, a circle through a line's end, a free circle, an open polyline and a dot.
Scene mixed_scene() {
  return scene_of({Shape::line({20, 20}, {120, 20}), Shape::line({120, 20}, {220, 20}),
                   Shape::line({120, 20}, {120, 90}), arc_through({120, 140}, 50, -90, 180),
                   arc_through({120, 240}, 50, -90, -120), Shape::circle({260, 60}, 40),
                   Shape::circle({60, 250}, 30), Shape::line({30, 120}, {60, 160}),
                   Shape::line({60, 160}, {35, 190}), Shape::line({150, 280}, {150, 280})});
}

// A deterministic scatter of n short strokes in a square of `side` px.
std::vector<Shape> scatter(int n, double side, uint32_t seed) {
  auto rnd = [&] { return (seed = seed * 1664525u + 1013904223u) / 4294967296.0; };
  std::vector<Shape> shapes;
  for (int i = 0; i < n; ++i) {
    Vec2 a{20 + rnd() * (side - 40), 20 + rnd() * (side - 40)};
    shapes.push_back(Shape::line(a, a + from_angle(rnd() * 2 * kPi) * (5 + rnd() * 15)));
  }
  return shapes;
}

// A lattice of k x k points joined by short lines to their right and lower neighbours: one
// component whose 4 (k - 2) border vertices that are not corners are odd.
std::vector<Shape> lattice(int k, double step) {
  std::vector<Shape> shapes;
  for (int y = 0; y < k; ++y)
    for (int x = 0; x < k; ++x) {
      Vec2 p{20 + x * step, 20 + y * step};
      if (x + 1 < k) shapes.push_back(Shape::line(p, p + Vec2{step, 0}));
      if (y + 1 < k) shapes.push_back(Shape::line(p, p + Vec2{0, step}));
    }
  return shapes;
}

// Least total cost of pairing all items, by dynamic programming over subsets.
double least_pairing(const std::vector<std::vector<double>>& w) {
  const int n = static_cast<int>(w.size());
  std::vector<double> f(size_t(1) << n, INFINITY);
  f[0] = 0;
  for (uint32_t mask = 1; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) % 2) continue;
    int i = __builtin_ctz(mask);
    for (int j = i + 1; j < n; ++j)
      if (mask >> j & 1) f[mask] = std::min(f[mask], f[mask & ~(1u << i) & ~(1u << j)] + w[i][j]);
  }
  return f.back();
}

// The cost of a pairing, after checking that it pairs every item exactly once.
double pairing_cost(const std::vector<std::vector<double>>& w, const std::vector<std::pair<int, int>>& pairs) {
  std::vector<int> seen;
  double t = 0;
  for (auto [i, j] : pairs) {
    t += w[i][j];
    seen.push_back(i);
    seen.push_back(j);
  }
  std::sort(seen.begin(), seen.end());
  std::vector<int> all(w.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  CHECK(seen == all);
  return t;
}

// Pen-up travel times between random points: the odd vertices' pairing costs.
std::vector<std::vector<double>> travel_costs(int n, uint32_t seed) {
  auto rnd = [&] { return (seed = seed * 1664525u + 1013904223u) / 4294967296.0; };
  std::vector<Vec2> pts;
  for (int i = 0; i < n; ++i) pts.push_back({rnd() * 500, rnd() * 500});
  std::vector<std::vector<double>> w(n, std::vector<double>(n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) w[i][j] = line_time_s(dist(pts[i], pts[j]), 60);
  return w;
}

std::vector<double> spins_of(const Scene& s) {
  std::vector<double> out;
  for (const Command& c : *s.commands)
    if (c.kind == Command::Kind::spin) out.push_back(c.degrees);
  return out;
}

}  // namespace

TEST_CASE("a square of four lines is one stroke with three quarter turns", "[route]") {
  Scene s = scene_of({Shape::line({0, 0}, {100, 0}), Shape::line({100, 0}, {100, 100}),
                      Shape::line({100, 100}, {0, 100}), Shape::line({0, 100}, {0, 0})});
  route(s, {});
  simulate(s, {});
  CHECK(s.metrics["strokes"] == 1);
  CHECK(s.metrics["pen_up_moves"] == 0);
  auto spins = spins_of(s);
  REQUIRE(spins.size() == 3);
  for (double d : spins) CHECK(std::abs(d) == Approx(90));
  CHECK(s.tour->size() == 4);
  CHECK(deviation(s) < 0.01);
}

TEST_CASE("an X drawn as four arms is two straight strokes", "[route]") {
  Scene s = scene_of({Shape::line({50, 50}, {0, 0}), Shape::line({50, 50}, {100, 100}),
                      Shape::line({50, 50}, {0, 100}), Shape::line({100, 0}, {50, 50})});
  route(s, {});
  simulate(s, {});
  CHECK(s.metrics["strokes"] == 2);
  CHECK(s.metrics["pen_up_moves"] == 1);
  // Straight through the crossing: each diagonal is one merged line command, tagged with both arms.
  int drawn = 0;
  for (const Command& c : *s.commands)
    if (c.kind == Command::Kind::line && c.pen_down) {
      ++drawn;
      CHECK(std::abs(c.distance) == Approx(100 * std::sqrt(2.0)).margin(1e-3));
      CHECK(c.primitive.find(',') != std::string::npos);
    }
  CHECK(drawn == 2);
  CHECK(deviation(s) < 0.01);
}

TEST_CASE("a T junction keeps the bar straight and lifts the pen once", "[route]") {
  Scene s = scene_of({Shape::line({0, 50}, {50, 50}), Shape::line({50, 50}, {100, 50}),
                      Shape::line({50, 50}, {50, 100})});
  route(s, {});
  simulate(s, {});
  CHECK(s.metrics["pen_up_moves"] == 1);
  bool bar = false;
  for (const Command& c : *s.commands) bar |= c.kind == Command::Kind::line && c.pen_down && std::abs(std::abs(c.distance) - 100) < 1e-3;
  CHECK(bar);
}

TEST_CASE("a line is split where another line ends on it, whatever comes first in the scene", "[route]") {
  // A circle listed first once shifted which line's own ends were left out of the search, so the
  // stem's end on the bar was ignored and the bar drawn whole, the stem on its own.
  for (bool circle_first : {false, true}) {
    std::vector<Shape> shapes = {Shape::line({0, 50}, {100, 50}), Shape::line({50, 50}, {50, 100})};
    if (circle_first) shapes.insert(shapes.begin(), Shape::circle({250, 250}, 20));
    Scene s = scene_of(shapes);
    route(s, {});
    const std::string bar = circle_first ? "p_0002" : "p_0001";
    std::vector<std::pair<double, double>> parts;
    for (const TourStep& t : *s.tour)
      if (t.primitive == bar) parts.emplace_back(t.t0, t.t1);
    std::sort(parts.begin(), parts.end());
    INFO("circle first: " << circle_first);
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].first == 0);
    CHECK(parts[0].second == Approx(0.5));
    CHECK(parts[1].second == 1);
  }
}

TEST_CASE("a circle touching a line's end is drawn without lifting the pen", "[route]") {
  // The circle passes through (100, 0), where its tangent continues the line: no turn either.
  Scene s = scene_of({Shape::line({0, 0}, {100, 0}), Shape::circle({100, 50}, 50)});
  route(s, {});
  simulate(s, {});
  CHECK(s.metrics["strokes"] == 1);
  CHECK(s.metrics["pen_up_moves"] == 0);
  CHECK(s.metrics["spins"] == 0);
  CHECK(deviation(s) < 0.01);
  // A free circle is entered where the travel meets it tangentially: no turn on arrival.
  Scene f = scene_of({Shape::line({0, 0}, {100, 0}), Shape::circle({200, 100}, 30)});
  route(f, {});
  simulate(f, {});
  CHECK(f.metrics["pen_up_moves"] == 1);
  CHECK(f.metrics["spins"].get<int>() <= 1);
  CHECK(deviation(f) < 0.01);
}

TEST_CASE("route finds the optimum of a small grid of strokes", "[route]") {
  // Three parallel bars and a post: every order and direction, each emitted with its best
  // driving directions, is the search space; the brute-force minimum is the known optimum. The
  // search judges tours with straight pen-up travel (travel arcs come after it), so that is
  // what the brute force emits too.
  std::vector<Shape> shapes = {Shape::line({0, 0}, {100, 0}), Shape::line({0, 30}, {100, 30}),
                               Shape::line({0, 60}, {100, 60}), Shape::line({130, 0}, {130, 60})};
  RouteOptions straight;
  straight.overrides["route.travel_arcs"] = 0;
  Scene best_s = scene_of(shapes);
  route(best_s, straight);
  double routed = time_of(best_s);

  double optimum = INFINITY;
  std::vector<int> order = {0, 1, 2, 3};
  do {
    for (int dirs = 0; dirs < 16; ++dirs) {
      Scene s = scene_of(shapes);
      std::vector<TourStep> tour;
      for (int k = 0; k < 4; ++k) tour.push_back({fmt::format("p_{:04d}", order[k] + 1), bool(dirs >> k & 1), 0});
      s.tour = tour;
      emit_tour(s, straight);
      optimum = std::min(optimum, time_of(s));
    }
  } while (std::next_permutation(order.begin(), order.end()));
  CHECK(routed == Approx(optimum).margin(1e-6));
  CHECK(deviation(best_s) < 0.01);
}

TEST_CASE("route output replays onto the primitives within 0.01 px", "[route]") {
  Scene s = mixed_scene();
  route(s, {});
  CHECK(deviation(s) < 0.01);
  // ...also after the commands are rounded to the scene's precision and read back.
  Scene back = parse_scene(dump_scene(s));
  CHECK(deviation(back) < 0.01);
  simulate(back, {});
  CHECK(back.metrics["primitives"]["circle"] == 2);
  // Every primitive is drawn exactly once.
  std::vector<std::string> ids;
  for (const TourStep& t : *s.tour) ids.push_back(t.primitive);
  std::sort(ids.begin(), ids.end());
  CHECK(ids.size() == s.primitives->size());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
}

TEST_CASE("routing is deterministic", "[route]") {
  Scene a = mixed_scene(), b = mixed_scene();
  route(a, {});
  route(b, {});
  CHECK(dump_scene(a) == dump_scene(b));
}

TEST_CASE("route is never slower than the nearest-neighbour tour", "[route]") {
  // A deterministic scatter of short strokes.
  std::vector<Shape> shapes;
  uint32_t seed = 12345;
  auto rnd = [&] { return (seed = seed * 1664525u + 1013904223u) / 4294967296.0; };
  for (int i = 0; i < 30; ++i) {
    Vec2 a{rnd() * 300, rnd() * 300};
    shapes.push_back(Shape::line(a, a + from_angle(rnd() * 2 * kPi) * (5 + rnd() * 30)));
  }
  // Judged as the search judges tours: with straight pen-up travel.
  RouteOptions straight;
  straight.overrides["route.travel_arcs"] = 0;
  Scene s = scene_of(shapes);
  route(s, straight);
  CostModel cost{{s.robot->ppi, s.robot->pen_time_s}, 1.5, 0.005, true, false};
  TrailSet trails = build_trails(shapes, cost, {});
  TourPlanner planner(trails, shapes, cost, {}, std::nullopt);
  std::vector<std::string> ids;
  for (const Primitive& p : *s.primitives) ids.push_back(p.id);
  Emission nn = emit_commands(shapes, ids, planner.expand(planner.nearest_neighbour()), cost, {}, std::nullopt);
  double nn_time = stream_time_s(nn.commands, s.robot->ppi, 0);
  CHECK(time_of(s) < nn_time);
  CHECK(deviation(s) < 0.01);
}

TEST_CASE("on long tours the improvement follows the changes and still improves the tour", "[route]") {
  // full_sweeps_max = 0 makes this small scatter take the path of a 100,000-primitive drawing:
  // after the first pass, moves are tried only next to what the last pass changed.
  std::vector<Shape> shapes;
  uint32_t seed = 777;
  auto rnd = [&] { return (seed = seed * 1664525u + 1013904223u) / 4294967296.0; };
  for (int i = 0; i < 400; ++i) {
    Vec2 a{rnd() * 1000, rnd() * 1000};
    shapes.push_back(Shape::line(a, a + from_angle(rnd() * 2 * kPi) * (5 + rnd() * 30)));
  }
  CostModel cost{{ppi_for_footprint(1000, kDefaultFootprintMm), kDefaultPenTimeS}, 1.5, 0.005, true};
  TrailSet trails = build_trails(shapes, cost, {});
  OrderParams focused;
  focused.full_sweeps_max = 0;
  TourPlanner whole(trails, shapes, cost, {}, std::nullopt), part(trails, shapes, cost, focused, std::nullopt);
  const Tour nn = whole.nearest_neighbour();
  Tour a = nn, b = nn;
  whole.improve(a);
  part.improve(b);
  std::vector<int> seen;
  for (const Placement& p : b) seen.push_back(p.trail);
  std::sort(seen.begin(), seen.end());
  CHECK(seen.size() == trails.trails.size());
  CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
  CAPTURE(whole.cost(nn), whole.cost(a), part.cost(b));
  CHECK(part.cost(b) < whole.cost(nn));
  CHECK(part.cost(b) == Approx(whole.cost(a)).epsilon(0.05));
  // Improving again from the focused result finds little left to gain.
  Tour c = b;
  whole.improve(c);
  CHECK(whole.cost(c) == Approx(part.cost(b)).epsilon(0.02));
}

TEST_CASE("driving backwards saves the turns of a zigzag", "[route]") {
  std::vector<Shape> zig;
  for (int i = 0; i < 6; ++i) zig.push_back(Shape::line({i % 2 ? 100.0 : 0.0, 10.0 * i}, {i % 2 ? 0.0 : 100.0, 10.0 * (i + 1)}));
  Scene fwd = scene_of(zig), both = scene_of(zig);
  RouteOptions no_reverse;
  no_reverse.overrides["route.reverse_drive"] = 0;
  route(fwd, no_reverse);
  route(both, {});
  simulate(fwd, {});
  simulate(both, {});
  CHECK(both.metrics["spin_total_deg"].get<double>() < 0.2 * fwd.metrics["spin_total_deg"].get<double>());
  CHECK(time_of(both) < time_of(fwd));
  CHECK(deviation(both) < 0.01);
  CHECK(deviation(fwd) < 0.01);
  for (const Command& c : *fwd.commands) CHECK(c.distance >= 0);
}

TEST_CASE("pen-up travel turns on the way where that is faster, and the drawing stays the same", "[route]") {
  // Short strokes at many angles: every trip between them needs two turns when driven straight.
  std::vector<Shape> strokes;
  for (int i = 0; i < 12; ++i) {
    Vec2 a{40.0 + 70 * (i % 4), 40.0 + 70 * (i / 4)};
    strokes.push_back(Shape::line(a, a + from_angle(deg2rad(37.0 * i)) * 30));
  }
  auto routed = [&](const RouteOptions& o) {
    Scene s = scene_of(strokes);
    route(s, o);
    simulate(s, {});
    return s;
  };
  auto travel = [](const Scene& s, Command::Kind kind) {
    return std::count_if(s.commands->begin(), s.commands->end(),
                         [&](const Command& c) { return c.kind == kind && !c.pen_down; });
  };
  RouteOptions straight;
  straight.overrides["route.travel_arcs"] = 0;
  const Scene arcs = routed({}), lines = routed(straight);
  CHECK(travel(arcs, Command::Kind::arc) > 0);
  CHECK(travel(lines, Command::Kind::arc) == 0);
  // One pen-up command per trip either way, each trip no slower: the whole stream is faster.
  CHECK(travel(arcs, Command::Kind::arc) + travel(arcs, Command::Kind::line) == travel(lines, Command::Kind::line));
  CHECK(time_of(arcs) < time_of(lines));
  CHECK(arcs.metrics["pen_up_moves"] == lines.metrics["pen_up_moves"]);
  // The search prices the arcs: the tour it finds without them, emitted with them, is no faster.
  Scene relined = lines;
  RouteOptions with_arcs;
  with_arcs.overrides["route.travel_arcs"] = 1;
  emit_tour(relined, with_arcs);
  CHECK(travel(relined, Command::Kind::arc) > 0);
  CHECK(time_of(arcs) <= time_of(relined) + 1e-9);
  CHECK(deviation(arcs) < 0.01);
  // The scorer's reading: a pen-up arc says so, a drawn one says nothing.
  const json j = to_json(arcs);
  for (const json& c : j["commands"])
    if (c["kind"] == "arc") CHECK((!c.contains("penDown") || c["penDown"] == false));
  const Scene back = scene_from_json(j);
  CHECK(travel(back, Command::Kind::arc) == travel(arcs, Command::Kind::arc));
  // A plotter turns for free: its travel stays straight.
  RouteOptions plotter;
  plotter.model = "plotter";
  CHECK(travel(routed(plotter), Command::Kind::arc) == 0);
}

TEST_CASE("the search prices each pen-up trip as the stream draws it", "[route]") {
  // Two arcs at random places and headings: the stream's time between them (the trip and the
  // turns, arcs of travel where those are faster) is what CostModel::transition says.
  uint32_t seed = 7;
  auto rnd = [&] { return (seed = seed * 1664525u + 1013904223u) / 4294967296.0; };
  CostModel cost{{40, 0}, 1.5, 0.005, true, true};
  int arc_trips = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Shape> shapes;
    for (int k = 0; k < 2; ++k) {
      Vec2 a{rnd() * 400, rnd() * 400}, b = a + from_angle(rnd() * 2 * kPi) * (20 + 60 * rnd());
      shapes.push_back(Shape::arc(a, b, (rnd() < 0.5 ? -1 : 1) * (0.2 + 0.6 * rnd())));  // never flat: arcs drive forwards only
    }
    if (dist(shapes[0].p1, shapes[1].p0) <= cost.join_px) continue;
    const Emission e = emit_commands(shapes, {"a", "b"}, {{0, false, 0}, {1, false, 0}}, cost, {}, std::nullopt);
    double between = 0;
    for (size_t i = 1; i + 1 < e.commands.size(); ++i) between += cost.motion.command_s(e.commands[i]);
    arc_trips += std::any_of(e.commands.begin(), e.commands.end(),
                             [](const Command& c) { return c.kind == Command::Kind::arc && !c.pen_down; });
    const Leg a = make_leg(shapes[0], false, 0, cost.flat_px), b = make_leg(shapes[1], false, 0, cost.flat_px);
    CHECK(between == Approx(cost.transition(a.end, a.h_out, b.start, b.h_in)).margin(2e-3));
  }
  CHECK(arc_trips > 20);
}

TEST_CASE("a given start pose is where the robot starts", "[route]") {
  Scene s = mixed_scene();
  RouteOptions o;
  o.start = Pose{-40, -40, 45};
  route(s, o);
  CHECK(s.robot->start.x == -40);
  CHECK(s.robot->start.heading_deg == 45);
  simulate(s, {});
  CHECK(s.metrics["pen_up_moves"].get<int>() >= 1);
  CHECK(deviation(s) < 0.01);
  // Without one, the robot starts on the first stroke facing along it: no travel first.
  Scene d = mixed_scene();
  route(d, {});
  CHECK(d.commands->front().kind != Command::Kind::spin);
  CHECK((d.commands->front().kind != Command::Kind::line || d.commands->front().pen_down));
}

TEST_CASE("a route started from a hand-made tour is never slower than it", "[route]") {
  uint32_t seed = 99;
  auto rnd = [&] { return (seed = seed * 1664525u + 1013904223u) / 4294967296.0; };
  for (const Scene& base : {mixed_scene(), scene_of(scatter(25, 300, 4242)), scene_of(lattice(4, 30))}) {
    for (int trial = 0; trial < 4; ++trial) {
      // Every primitive once, in a shuffled order and random directions, as an agent might set it.
      Scene s = base;
      std::vector<TourStep> tour;
      for (const Primitive& p : *s.primitives) tour.push_back({p.id, rnd() < 0.5, rnd() * 360 - 180});
      for (size_t i = tour.size(); i > 1; --i) std::swap(tour[i - 1], tour[static_cast<size_t>(rnd() * i)]);
      s.tour = tour;
      emit_tour(s, {});
      const double hand = time_of(s);
      route(s, {});
      CAPTURE(trial, hand, time_of(s));
      CHECK(time_of(s) <= hand + 1e-9);
    }
  }
}

TEST_CASE("route keeps the scene's tour when its search finds nothing faster", "[route]") {
  // A tour the default search found, routed again by a search without improvement passes: the
  // weaker search alone is slower, yet the tour stays as it was.
  Scene s = scene_of(scatter(30, 300, 777));
  route(s, {});
  const std::vector<TourStep> tour = *s.tour;
  const double good = time_of(s);
  RouteOptions weak;
  weak.overrides["route.max_passes"] = 0;
  Scene fresh = scene_of(scatter(30, 300, 777));
  route(fresh, weak);
  REQUIRE(time_of(fresh) > good + 1e-6);
  route(s, weak);
  CHECK(time_of(s) == Approx(good).epsilon(1e-12));
  REQUIRE(s.tour->size() == tour.size());
  for (size_t i = 0; i < tour.size(); ++i) {
    CHECK(s.tour->at(i).primitive == tour[i].primitive);
    CHECK(s.tour->at(i).reverse == tour[i].reverse);
  }
}

TEST_CASE("a tour that does not draw the scene's primitives is no candidate: route draws them all", "[route]") {
  // Left after an edit that took out every primitive the tour named, or naming only some.
  for (std::vector<TourStep> tour : {std::vector<TourStep>{{"p_0099", false, 0}}, std::vector<TourStep>{{"p_0001", true, 0}}}) {
    Scene s = mixed_scene();
    s.tour = tour;
    route(s, {});
    std::set<std::string> drawn;
    for (const TourStep& t : *s.tour) drawn.insert(t.primitive);
    CHECK(drawn.size() == s.primitives->size());
    CHECK(drawn.count("p_0099") == 0);
    Scene fresh = mixed_scene();
    route(fresh, {});
    CHECK(time_of(s) <= time_of(fresh) + 1e-9);
  }
}

TEST_CASE("a second route run changes nothing", "[route]") {
  RouteOptions fixed;
  fixed.start = Pose{-12.34567, 250.5, 33.3333333};
  for (const RouteOptions& o : {RouteOptions{}, fixed})
    for (const Scene& drawn : {mixed_scene(), scene_of(scatter(40, 300, 31)), scene_of(lattice(5, 25))}) {
      Scene s = parse_scene(dump_scene(drawn));  // the primitives as a scene holds them
      route(s, o);
      const std::string once = dump_scene(s);
      // Again in memory, and again from the scene as written.
      route(s, o);
      CHECK(dump_scene(s) == once);
      Scene back = parse_scene(once);
      route(back, o);
      CHECK(dump_scene(back) == once);
      // Again as an edit re-routes it (RerunStage route_optimize): with the options the scene
      // records, its scale as a ppi (so recorded as the user's) and its start as it was chosen.
      Scene edit = parse_scene(once);
      route(edit, route_options_of(edit));
      CHECK(edit.robot->start_fixed == s.robot->start_fixed);
      CHECK(edit.robot->ppi == s.robot->ppi);
      const json a = to_json(edit, false), b = to_json(s, false);
      CHECK(a["commands"] == b["commands"]);
      CHECK(a["tour"] == b["tour"]);
      CHECK(a["robot"]["start"] == b["robot"]["start"]);
    }
}

TEST_CASE("free is never slower than a fixed start", "[route]") {
  uint32_t seed = 2024;
  auto rnd = [&] { return (seed = seed * 1664525u + 1013904223u) / 4294967296.0; };
  for (const Scene& base : {mixed_scene(), scene_of(scatter(30, 300, 5)), scene_of(lattice(4, 40))}) {
    Scene free = base;
    route(free, {});
    CHECK_FALSE(free.robot->start_fixed);
    for (int k = 0; k < 6; ++k) {
      RouteOptions o;
      o.start = Pose{rnd() * 300, rnd() * 300, rnd() * 360 - 180};
      Scene fixed = base;
      route(fixed, o);
      CHECK(fixed.robot->start_fixed);
      CAPTURE(k, time_of(free), time_of(fixed));
      CHECK(time_of(free) <= time_of(fixed) + 1e-9);
      // The way from a fixed start is part of the stream and of what start_cost reports.
      const StartCost c = start_cost(fixed);
      CHECK(c.fixed);
      CHECK(c.first_primitive == fixed.tour->front().primitive);
      CHECK(c.to_first_stroke_s > 0);
      CHECK(start_cost(free).to_first_stroke_s == 0);
    }
  }
}

TEST_CASE("with a free start an edited tour starts at its new first stroke", "[route]") {
  Scene s = mixed_scene();
  route(s, {});
  // Another stroke first, as ReorderTour sets it: the robot is placed there, with no way to it.
  std::rotate(s.tour->begin(), s.tour->begin() + 3, s.tour->end());
  Scene moved = s;
  emit_tour(moved, route_options_of(moved));
  CHECK_FALSE(moved.robot->start_fixed);
  const Command& first = moved.commands->front();
  CHECK((first.kind == Command::Kind::arc || (first.kind == Command::Kind::line && first.pen_down)));
  CHECK(start_cost(moved).to_first_stroke_s == 0);
  // A fixed start stays where it was, and the way from it to the new first stroke counts.
  RouteOptions o;
  o.start = Pose{0, 0, 0};
  Scene fixed = mixed_scene();
  route(fixed, o);
  std::rotate(fixed.tour->begin(), fixed.tour->begin() + 3, fixed.tour->end());
  emit_tour(fixed, route_options_of(fixed));
  CHECK(fixed.robot->start_fixed);
  CHECK(fixed.robot->start.x == 0);
  CHECK(start_cost(fixed).to_first_stroke_s > 0);
}

TEST_CASE("a start is free or X,Y,HEADING and on the page", "[route]") {
  CHECK_FALSE(parse_start("free").has_value());
  auto p = parse_start("10,-2.5,90");
  REQUIRE(p);
  CHECK(p->x == 10);
  CHECK(p->y == -2.5);
  CHECK(p->heading_deg == 90);
  for (const char* bad : {"", "fixed", "1,2", "1,2,3,4", "1,2,nan", "a,b,c"}) CHECK_THROWS_AS(parse_start(bad), Error);
  Scene s = mixed_scene();
  RouteOptions far;
  far.start = Pose{1e7, 0, 0};
  CHECK_THROWS_AS(route(s, far), Error);
}

TEST_CASE("route records its options with provenance and refuses unknown ones", "[route]") {
  Scene s = mixed_scene();
  RouteOptions o;
  o.overrides["snap_px"] = 1.0;
  route(s, o);
  CHECK(s.config["route.snap_px"]["value"] == 1.0);
  CHECK(s.config["route.snap_px"]["from"] == "user");
  CHECK(s.config["route.min_spin_deg"]["from"] == "default");
  CHECK(s.config["route.ppi"]["from"] == "image");
  CHECK(s.robot->ppi == Approx(ppi_for_footprint(s.config["route.ppi"]["value"].get<double>() * 200 / 25.4)).epsilon(1e-3));
  CHECK(s.robot->footprint_mm == 200);
  RouteOptions fixed;
  fixed.ppi = 50;
  route(s, fixed);
  CHECK(s.robot->ppi == 50);
  CHECK(s.config["route.ppi"]["from"] == "user");
  RouteOptions bad;
  bad.overrides["route.bogus"] = 1;
  try {
    route(s, bad);
    FAIL("unknown option accepted");
  } catch (const Error& e) {
    CHECK(e.code() == Code::invalid_selection);
  }
}

TEST_CASE("an empty drawing routes to an empty stream; a scene without primitives is refused", "[route]") {
  Scene s = scene_of({});
  route(s, {});
  CHECK(s.commands->empty());
  CHECK(s.tour->empty());
  CHECK(s.robot->ppi > 0);
  Scene none;
  CHECK_THROWS_AS(route(none, {}), Error);
}

TEST_CASE("emit_tour re-emits an edited tour onto the same geometry", "[route]") {
  Scene s = mixed_scene();
  route(s, {});
  std::reverse(s.tour->begin(), s.tour->end());
  for (TourStep& t : *s.tour) t.reverse = !t.reverse;
  emit_tour(s, {});
  CHECK(deviation(s) < 0.01);
  s.tour->front().primitive = "p_9999";
  CHECK_THROWS_AS(emit_tour(s, {}), Error);
}

TEST_CASE("odd vertices are paired at least total cost", "[route]") {
  uint32_t seed = 7;
  auto rnd = [&] { return (seed = seed * 1664525u + 1013904223u) / 4294967296.0; };
  std::vector<Vec2> pts;
  for (int i = 0; i < 10; ++i) pts.push_back({rnd() * 100, rnd() * 100});
  std::vector<std::vector<double>> w(pts.size(), std::vector<double>(pts.size()));
  for (size_t i = 0; i < pts.size(); ++i)
    for (size_t j = 0; j < pts.size(); ++j) w[i][j] = dist(pts[i], pts[j]);
  // Brute force over all pairings.
  std::function<double(std::vector<int>)> best = [&](std::vector<int> left) {
    if (left.empty()) return 0.0;
    double b = INFINITY;
    for (size_t k = 1; k < left.size(); ++k) {
      std::vector<int> rest;
      for (size_t m = 1; m < left.size(); ++m)
        if (m != k) rest.push_back(left[m]);
      b = std::min(b, w[left[0]][left[k]] + best(rest));
    }
    return b;
  };
  double optimum = best({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto total = [&](const std::vector<std::pair<int, int>>& pairs) {
    double t = 0;
    std::vector<int> seen;
    for (auto [i, j] : pairs) {
      t += w[i][j];
      seen.push_back(i);
      seen.push_back(j);
    }
    std::sort(seen.begin(), seen.end());
    CHECK(seen == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    return t;
  };
  CHECK(total(min_cost_pairing(w, 18)) == Approx(optimum));
  CHECK(total(min_cost_pairing(w, 0)) >= optimum - 1e-9);  // greedy + exchanges: valid, near
}

TEST_CASE("exact pairing equals brute force on small instances and the subset optimum on mid sizes", "[route]") {
  // 2 to 10 items (dynamic programming up to 8, the blossom algorithm above) against brute
  // force; 12 to 18 items (the blossom algorithm) against the optimum over subsets.
  for (int n = 2; n <= 18; n += 2)
    for (uint32_t seed = 1; seed <= (n <= 10 ? 6u : 2u); ++seed) {
      auto w = travel_costs(n, seed * 7919 + static_cast<uint32_t>(n));
      CAPTURE(n, seed);
      CHECK(pairing_cost(w, min_cost_pairing(w, 1000)) == Approx(least_pairing(w)).epsilon(1e-12));
    }
  // Equal costs everywhere, as on a regular grid: Boost 1.74's algorithm never returns on 14 items.
  std::vector<std::vector<double>> same(16, std::vector<double>(16, 1.0));
  CHECK(pairing_cost(same, min_cost_pairing(same, 1000)) == Approx(8.0));
}

TEST_CASE("exact pairing beats or equals the greedy one above 18 odd vertices", "[route]") {
  // Large instances: exact never costs more than greedy with pair exchanges, and less on some.
  int strictly = 0;
  for (int n : {20, 40, 80})
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      auto w = travel_costs(n, seed * 104729 + static_cast<uint32_t>(n));
      const double exact = pairing_cost(w, min_cost_pairing(w, 1000)), greedy = pairing_cost(w, min_cost_pairing(w, 0));
      CAPTURE(n, seed, exact, greedy);
      CHECK(exact <= greedy + 1e-12);
      strictly += exact < greedy - 1e-9;
    }
  CHECK(strictly > 0);
  // A lattice of 112 short strokes: one component with 24 odd vertices, its route no slower exact.
  std::vector<Shape> shapes = lattice(8, 12);
  CostModel cost{{ppi_for_footprint(104, kDefaultFootprintMm), 0}, 1.5, 0.005, true};
  TrailParams exact_params, greedy_params;
  greedy_params.exact_matching_max = 18;
  exact_params.redraw_lines = greedy_params.redraw_lines = false;  // the pairing by trips alone
  TrailSet exact = build_trails(shapes, cost, exact_params), greedy = build_trails(shapes, cost, greedy_params);
  CHECK(exact.components == 1);
  CHECK(exact.odd_vertices == 24);
  CHECK(exact.trails.size() == 12);
  CHECK(greedy.trails.size() == 12);
  Scene a = scene_of(shapes), b = scene_of(shapes);
  RouteOptions greedy_route;
  greedy_route.overrides["route.exact_matching_max"] = 18;
  route(a, {});
  route(b, greedy_route);
  CAPTURE(time_of(a), time_of(b));
  CHECK(time_of(a) <= time_of(b) + 1e-9);
  CHECK(deviation(a) < 0.01);
}

TEST_CASE("transitions cost the same both ways, so reversing a run is exact", "[route]") {
  CostModel cost{{60, 0.1}, 1.5, 0.005, true};
  Vec2 p{10, 20}, q{150, -40};
  for (double h : {0.0, 37.0, 170.0})
    for (double h2 : {-90.0, 5.0, 120.0}) {
      CHECK(cost.transition(p, h, q, h2) == Approx(cost.transition(q, h2 + 180, p, h + 180)));
      CHECK(cost.transition(p, h, p + Vec2{0.5, 0}, h2) == Approx(cost.spin(h2 - h)));
    }
  // Backward travel when it turns less: backing up to a target ahead of the robot's tail
  // costs no turn at all.
  double away = 180 + rad2deg(angle_of(q - p));
  CHECK(cost.transition(p, away, q, away) == Approx(line_time_s(dist(p, q), 60) + 0.2));
}

TEST_CASE("near-collinear pieces are drawn as one line within route.deviation_px", "[route]") {
  // A straight stroke traced as ten pieces that zigzag by 0.1 px: ten lines and nine spins
  // without the shortcut, one line with it.
  std::vector<Shape> shapes;
  for (int i = 0; i < 10; ++i)
    shapes.push_back(Shape::line({20.0 + 20 * i, 50 + (i % 2 ? 0.1 : 0.0)}, {40.0 + 20 * i, 50 + (i % 2 ? 0.0 : 0.1)}));
  Scene exact = scene_of(shapes), merged = scene_of(shapes);
  RouteOptions keep;
  keep.overrides["deviation_px"] = 0;
  route(exact, keep);
  route(merged, {});
  CHECK(exact.commands->size() >= 10);
  REQUIRE(merged.commands->size() == 1);
  CHECK((*merged.commands)[0].primitive.find("p_0001") != std::string::npos);
  CHECK(time_of(merged) < 0.5 * time_of(exact));
  CHECK(deviation(exact) < 0.01);
  CHECK(deviation(merged) <= 0.25 + 0.01);
  CHECK(merged.config.contains("route.deviation_px"));
}

TEST_CASE("a circle split into arcs, or a curve traced as short lines, is drawn as one arc", "[route]") {
  // Four quarter arcs of one circle: one full-turn arc command.
  Scene quarters = scene_of({arc_through({100, 100}, 40, 0, 90), arc_through({100, 100}, 40, 90, 90),
                             arc_through({100, 100}, 40, 180, 90), arc_through({100, 100}, 40, 270, 90)});
  route(quarters, {});
  REQUIRE(quarters.commands->size() == 1);
  CHECK((*quarters.commands)[0].kind == Command::Kind::arc);
  CHECK(std::abs((*quarters.commands)[0].degrees) == Approx(360));
  CHECK(deviation(quarters) <= 0.26);

  // A 90-degree bend of radius 150 px traced as 24 chords (each 0.08 px from the curve): one arc.
  std::vector<Shape> chords;
  for (int i = 0; i < 24; ++i) {
    double a = deg2rad(90.0 * i / 24), b = deg2rad(90.0 * (i + 1) / 24);
    chords.push_back(Shape::line(Vec2{50, 50} + from_angle(a) * 150, Vec2{50, 50} + from_angle(b) * 150));
  }
  Scene curve = scene_of(chords);
  route(curve, {});
  REQUIRE(curve.commands->size() <= 2);
  CHECK((*curve.commands)[0].kind == Command::Kind::arc);
  CHECK(deviation(curve) <= 0.26);
}

TEST_CASE("a curve leaving a line along it is drawn as an arc tangent to the line, without a spin",
          "[route]") {
  // A line, then a quarter bend of radius 100 px traced as 24 chords whose far end sits 0.2 px
  // off the circle: the arc through the bend's ends and middle leaves the line at a small angle
  // (a spin); the arc leaving along the line stays within route.deviation_px of the chords.
  std::vector<Shape> shapes = {Shape::line({0, 100}, {100, 100})};
  Vec2 c{100, 200};
  for (int i = 0; i < 24; ++i) {
    auto at = [&](int k) {
      Vec2 q = c + from_angle(deg2rad(-90.0 + 90.0 * k / 24)) * 100;
      return k == 24 ? q + Vec2{0.2, 0} : q;
    };
    shapes.push_back(Shape::line(at(i), at(i + 1)));
  }
  Scene s = scene_of(shapes);
  route(s, {});
  REQUIRE(s.commands->size() == 2);
  CHECK((*s.commands)[0].kind == Command::Kind::line);
  CHECK((*s.commands)[1].kind == Command::Kind::arc);
  CHECK(spins_of(s).empty());
  CHECK(deviation(s) <= 0.26);
}

TEST_CASE("a run whose tiny pieces collapse when rebuilt end to end is drawn as it is", "[route]") {
  // Two pieces under join_px long start short of where the line before them ends: rebuilt from
  // that end, the second (a looping arc, drawn as refitted: no deviation of its own) has no
  // chord, and no redrawn path crosses it. Taken from a script glyph refitted at a stroke
  // width, where the run vanished from the stream (and the robot's heading after it was read
  // from no command).
  CostModel cost{{60, 0.1}, 1.5, 0.005, true};
  const std::vector<Shape> shapes = {
      Shape::line({178.793, 174.176}, {183.855, 171.254}), Shape::line({183.272, 170.544}, {183.855, 171.254}),
      Shape::arc({183.272, 170.544}, {183.855, 171.254}, -1.51861), Shape::line({183.272, 170.544}, {186.383, 166.195}),
      Shape::line({186.383, 166.195}, {188.014, 160.11})};
  std::vector<Leg> legs;
  const std::vector<std::string> ids = {"p_1", "p_2", "p_3", "p_4", "p_5"};
  for (const Shape& s : shapes) legs.push_back(make_leg(s, false, 0, cost.flat_px));
  SimplifiedLegs out = simplify_legs(legs, ids, cost, {1.0, 24, {1.0, 1.0, 0.0, 1.0, 1.0}}, Pose{170, 175, -73});
  REQUIRE(out.legs.size() == legs.size());
  CHECK(out.ids == ids);
  for (size_t k = 0; k < legs.size(); ++k) {
    CHECK(dist(out.legs[k].start, legs[k].start) < 1e-9);
    CHECK(dist(out.legs[k].end, legs[k].end) < 1e-9);
  }
}

TEST_CASE("a turn from a huge or infinite heading is priced, not looped on forever", "[route][limits]") {
  CostModel cost{{60, 0.1}, 1.5, 0.005, true};
  CHECK(cost.spin(90 + 360.0 * 1e6) == Approx(cost.spin(90)).epsilon(1e-6));
  CHECK(cost.spin(-270) == cost.spin(90));
  CHECK(std::isfinite(cost.spin(1e300)));
  CHECK(std::isnan(cost.spin(INFINITY)));
}
