#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "core/error.hpp"
#include "robot/motion.hpp"
#include "robot/replay.hpp"
#include "robot/simulate.hpp"

using namespace sv;

namespace {

Command line_cmd(double d, bool down = true) {
  Command c;
  c.distance = d;
  c.pen_down = down;
  return c;
}
Command spin_cmd(double deg) {
  Command c;
  c.kind = Command::Kind::spin;
  c.degrees = deg;
  return c;
}
Command arc_cmd(double r, double deg) {
  Command c;
  c.kind = Command::Kind::arc;
  c.radius = r;
  c.degrees = deg;
  return c;
}

}  // namespace

TEST_CASE("motion times match the firmware estimator's formulas", "[robot]") {
  // Values of score.py's command_time (reference §D table).
  CHECK(spin_time_s(180) == Approx(3.273).margin(5e-4));
  CHECK(spin_time_s(-180) == Approx(3.273).margin(5e-4));
  CHECK(spin_time_s(1) == Approx(0.244).margin(5e-4));
  CHECK(spin_time_s(10) == Approx(0.771).margin(5e-4));
  CHECK(spin_time_s(45) == Approx(1.636).margin(5e-4));
  CHECK(spin_time_s(90) == Approx(2.314).margin(5e-4));
  CHECK(spin_time_s(360) == Approx(4.628).margin(5e-4));
  CHECK(spin_time_s(0) == 0);
  CHECK(line_time_s(100, 100) == Approx(1.079).margin(5e-4));
  CHECK(line_time_s(-100, 100) == Approx(1.079).margin(5e-4));
  CHECK(line_time_s(1, 1) == Approx(1.079).margin(5e-4));
  CHECK(line_time_s(1000, 1) == Approx(147.45).margin(5e-3));  // past the ramp: cruising
  CHECK(arc_time_s(100, 90, 100) == Approx(2.680).margin(5e-4));
  CHECK(arc_time_s(293, 90, 100) == Approx(3.273).margin(5e-4));
  CHECK(arc_time_s(1000, -90, 100) == Approx(4.861473).margin(1e-6));  // score.py: 4.861472609
  CHECK(arc_time_s(100, 360, 1) == Approx(61.99).margin(5e-3));
  // Exact trapezoid: 2 v/a + (d - v²/a)/v beyond the ramp, 2 sqrt(d/a) within it.
  CHECK(trapezoid_time_s(10000, 2000, 1000) == Approx(4 + 6000.0 / 2000));
  CHECK(trapezoid_time_s(1000, 2000, 1000) == Approx(2 * std::sqrt(1.0)));
  CHECK(command_time_s(spin_cmd(90), 50) == Approx(spin_time_s(90)));
  CHECK(command_time_s(line_cmd(100), 100) == Approx(line_time_s(100, 100)));
  CHECK(command_time_s(arc_cmd(100, 90), 100) == Approx(arc_time_s(100, 90, 100)));
}

TEST_CASE("physical scale and pen changes", "[robot]") {
  CHECK(ppi_for_footprint(787.4) == Approx(100));
  CHECK(ppi_for_footprint(393.7, 100) == Approx(100));
  std::vector<Command> s = {line_cmd(10), spin_cmd(90), arc_cmd(5, 90), line_cmd(20, false), line_cmd(5)};
  CHECK(pen_changes(s) == 3);  // down, up, down: spins and consecutive drawing keep the state
  double motion = 0;
  for (const auto& c : s) motion += command_time_s(c, 50);
  CHECK(stream_time_s(s, 50, 0.25) == Approx(motion + 3 * 0.25));
}

TEST_CASE("replay integrates a stream as the scorer does", "[robot]") {
  SECTION("arc r=10 +90 from the origin ends at (10, 10) facing +y") {
    Replay r = replay({arc_cmd(10, 90)}, {0, 0, 0});
    CHECK(r.end.x == Approx(10));
    CHECK(r.end.y == Approx(10));
    CHECK(r.end.heading_deg == Approx(90));
    REQUIRE(r.strokes.size() == 1);
    // Centre (0, 10): every sample is 10 from it, and samples are at most 0.25 px apart.
    for (Vec2 p : r.strokes[0]) CHECK(dist(p, {0, 10}) == Approx(10));
    for (size_t i = 1; i < r.strokes[0].size(); ++i) CHECK(dist(r.strokes[0][i - 1], r.strokes[0][i]) <= 0.25);
  }
  SECTION("negative degrees turn about a centre on the right") {
    Replay r = replay({arc_cmd(10, -90)}, {0, 0, 0});
    CHECK(r.end.x == Approx(10));
    CHECK(r.end.y == Approx(-10));
    CHECK(r.end.heading_deg == Approx(-90));
  }
  SECTION("spins do not split strokes, pen-up travel does, negative distance backs up") {
    Replay r = replay({line_cmd(10), spin_cmd(90), line_cmd(10), line_cmd(-5, false), spin_cmd(-90), line_cmd(-3)},
                      {1, 2, 0});
    REQUIRE(r.strokes.size() == 2);
    CHECK(r.strokes[0].size() == 3);
    CHECK(r.strokes[0].back().x == Approx(11));
    CHECK(r.strokes[0].back().y == Approx(12));
    REQUIRE(r.pen_up.size() == 1);
    CHECK(r.pen_up[0].second.y == Approx(7));
    CHECK(r.pen_up_moves == 1);
    CHECK(r.spin_total_deg == Approx(180));
    CHECK(r.end.x == Approx(8));
    CHECK(r.end.y == Approx(7));
  }
  SECTION("apply_command agrees with the sampled replay") {
    std::vector<Command> s = {spin_cmd(33), arc_cmd(17, 250), line_cmd(12), arc_cmd(3, -400)};
    Pose p{5, 6, 7};
    for (const auto& c : s) p = apply_command(p, c);
    Pose q = replay(s, {5, 6, 7}).end;
    CHECK(p.x == Approx(q.x).margin(1e-9));
    CHECK(p.y == Approx(q.y).margin(1e-9));
    CHECK(p.heading_deg == Approx(q.heading_deg));
  }
}

TEST_CASE("a stream whose arcs sweep millions of pixels is sampled within the budget", "[robot]") {
  // Twenty full turns of radius 900,000 px: 4.5e8 samples at 0.25 px (7 GiB), all but free to
  // ask for in a scene of a few hundred bytes.
  const std::vector<Command> s(20, arc_cmd(900000, 360));
  size_t samples = 0;
  for (const Move& m : replay_moves(s, {0, 0, 0})) samples += m.path.size() - 1;
  CHECK(samples <= kMaxPathSamples + s.size());
  CHECK(samples >= kMaxPathSamples);
  const Pose end = replay(s, {0, 0, 0}).end;  // twenty turns back to the start
  CHECK(end.x == Approx(0).margin(1e-3));
  CHECK(end.y == Approx(0).margin(1e-3));
  // A drawing's arcs are far below the budget: sampled every step_px as always.
  CHECK(replay_moves({arc_cmd(100, 90)}, {0, 0, 0})[0].path.size() == 1 + 629);
}

TEST_CASE("simulate times the stream as the scorer and logs every step", "[robot]") {
  Scene s;
  s.source = Source{"x.png", "", 100, 100, 6};
  Robot robot;
  robot.ppi = 100;
  robot.pen_time_s = 0.5;
  robot.start = {0, 0, 0};
  s.robot = robot;
  Command first = line_cmd(100);
  first.primitive = "p_0001";
  s.commands = std::vector<Command>{first, spin_cmd(270), line_cmd(-4, false), arc_cmd(100, 90)};
  simulate(s, {});
  double motion = line_time_s(100, 100) + spin_time_s(270) + line_time_s(4, 100) + arc_time_s(100, 90, 100);
  CHECK(s.metrics["motion_time_s"].get<double>() == Approx(motion).margin(1e-6));
  CHECK(s.metrics["pen_changes"] == 3);
  CHECK(s.metrics["pen_lifts"] == 1);
  CHECK(s.metrics["draw_time_s"].get<double>() == Approx(motion + 1.5).margin(1e-6));
  CHECK(s.metrics["pen_down_time_s"].get<double>() ==
        Approx(line_time_s(100, 100) + arc_time_s(100, 90, 100)).margin(1e-6));
  CHECK(s.metrics["spin_time_s"].get<double>() == Approx(spin_time_s(270)).margin(1e-6));
  CHECK(s.metrics["strokes"] == 2);
  CHECK(s.metrics["pen_up_moves"] == 1);
  CHECK(s.metrics["spins"] == 1);
  CHECK(s.metrics["pen_down_length_px"].get<double>() == Approx(100 + 100 * kPi / 2).margin(1e-3));
  CHECK(s.metrics["commands"] == 4);
  const Simulation& sim = *s.simulation;
  std::vector<std::string> ops;
  for (const SimStep& st : sim.steps) ops.push_back(sim_op_name(st.op));
  CHECK(ops == std::vector<std::string>{"pen_down", "line", "spin", "pen_up", "line", "pen_down", "arc"});
  CHECK((*s.commands)[sim.steps[1].command].primitive == "p_0001");
  const auto notes_of = [&](size_t step) {
    std::string all;
    for (const auto& [i, text] : s.simulation->notes)
      if (i == step) all += text + "\n";
    return all;
  };
  CHECK(notes_of(2) == "spin of 270.0°: the robot turns the long way (-90.0° faces the same way)\n");
  CHECK(notes_of(4).find("pen-up shorter than a stroke width") != std::string::npos);
  CHECK(notes_of(4).find("pen-up travel 4 px") != std::string::npos);
  CHECK(sim.steps[4].end.y == Approx(4));  // backwards while facing -y
  CHECK(sim.total_s == Approx(motion + 1.5).margin(1e-6));

  simulate(s, {true});
  CHECK(s.simulation->traces[1].size() >= 100);
  // A trace of moves longer than a million pixels together has a million poses along them.
  s.commands = std::vector<Command>{line_cmd(4e6), spin_cmd(1e6), line_cmd(-1e6)};
  simulate(s, {true});
  size_t poses = 0;
  for (const json& t : s.simulation->traces) poses += t.is_null() ? 0 : t.size();
  CHECK(poses <= 1000000 + 49 + 3 * 2);
  CHECK(poses >= 1000000);
  CHECK(s.simulation->traces[2].size() == 49);  // the spin: 48 steps of its turn

  Scene empty;
  CHECK_THROWS_AS(simulate(empty, {}), Error);
}

// A robot at 72 px/in with quarter-second pen changes, to run `commands`.
static Scene robot_scene(std::vector<Command> commands) {
  Scene s;
  Robot robot;
  robot.ppi = 72;
  robot.pen_time_s = 0.25;
  s.robot = robot;
  s.commands = std::move(commands);
  return s;
}

TEST_CASE("the step log: its durations add up to the total, a planted 359 degree spin is the long way", "[robot]") {
  Scene s = robot_scene({line_cmd(40), spin_cmd(359), line_cmd(310, false), spin_cmd(-90), arc_cmd(30, 200),
                         spin_cmd(12), line_cmd(25)});
  simulate(s, {true});
  const Simulation& sim = *s.simulation;
  double sum = 0;
  for (const SimStep& st : sim.steps) sum += st.duration_s;
  // Each step and the total are rounded to the microsecond.
  CHECK(sum == Approx(sim.total_s).margin(1e-6 * sim.steps.size()));
  CHECK(sim.total_s == s.metrics["draw_time_s"].get<double>());
  std::vector<std::string> notes(sim.steps.size());
  for (const auto& [i, text] : sim.notes) notes.at(i) += text + "\n";
  int long_way = 0;
  for (size_t i = 0; i < sim.steps.size(); ++i) {
    const SimStep& st = sim.steps[i];
    const bool noted = notes[i].find("the robot turns the long way") != std::string::npos;
    long_way += noted;
    if (st.command == 1 && st.op == SimStep::Op::spin) {
      CHECK(noted);
      CHECK(notes[i].find("spin of 359.0°") != std::string::npos);
      CHECK(notes[i].find("-1.0° faces the same way") != std::string::npos);
    }
    if (st.op == SimStep::Op::line && st.command == 2) CHECK(notes[i].find("pen-up travel 310 px") != std::string::npos);
  }
  CHECK(long_way == 1);  // the 90 and 12 degree spins are the short way
  // Each step's trace runs from where the step before ended (the start, for the first) to its end.
  REQUIRE(sim.traces.size() == sim.steps.size());
  Pose from = s.robot->start;
  for (size_t i = 0; i < sim.steps.size(); ++i) {
    const Pose& end = sim.steps[i].end;
    const json& tr = sim.traces[i];
    if (tr.is_null()) {  // pen lifts and drops do not move
      CHECK(sim.steps[i].op >= SimStep::Op::pen_up);
      CHECK((end.x == from.x && end.y == from.y && end.heading_deg == from.heading_deg));
    } else {
      CHECK(tr.front()[0].get<double>() == Approx(from.x).margin(1e-4));
      CHECK(tr.front()[1].get<double>() == Approx(from.y).margin(1e-4));
      CHECK(tr.back()[0].get<double>() == Approx(end.x).margin(1e-3));
      CHECK(tr.back()[1].get<double>() == Approx(end.y).margin(1e-3));
    }
    from = end;
  }
}

TEST_CASE("a simulation is written as compact records, read back the same, and read from the older form", "[robot]") {
  Command drawn = line_cmd(40);
  drawn.primitive = "p_0001";
  Scene s = robot_scene({drawn, spin_cmd(359), line_cmd(310, false), arc_cmd(30, 200)});
  simulate(s, {});
  const std::string text = dump_scene(s);
  const json doc = json::parse(text);
  const json& steps = doc["simulation"]["steps"];
  REQUIRE(steps.size() == s.simulation->steps.size());
  CHECK(steps[1] == json::parse(fmt::format("[0,\"line\",{},{},{},{}]", json(s.simulation->steps[1].duration_s).dump(),
                                           json(s.simulation->steps[1].end.x).dump(), json(s.simulation->steps[1].end.y).dump(),
                                           json(s.simulation->steps[1].end.heading_deg).dump())));
  CHECK(doc["simulation"]["notes"][0][0] == 2);  // the long-way spin
  // What is read is what was written: the same text, so the same revision id.
  Scene back = parse_scene(text);
  CHECK(dump_scene(back) == text);
  CHECK(canonical_bytes(back) == canonical_bytes(s));
  // A few dozen bytes a step: the whole text is within 64 bytes a step besides the rest.
  Scene bare = s;
  bare.simulation.reset();
  CHECK(text.size() - dump_scene(bare).size() < 64 * s.simulation->steps.size() + 400);

  // Scenes recorded before held a step as an object: read into the same records.
  json old = doc;
  json old_steps = json::array();
  Pose from = s.robot->start;
  for (size_t i = 0; i < steps.size(); ++i) {
    const SimStep& st = s.simulation->steps[i];
    json notes = json::array();
    for (const auto& [at, n] : s.simulation->notes)
      if (at == i) notes.push_back(n);
    old_steps.push_back({{"index", i}, {"command", st.command}, {"op", sim_op_name(st.op)}, {"primitive", nullptr},
                         {"duration_s", st.duration_s}, {"start", {from.x, from.y, from.heading_deg}},
                         {"end", {st.end.x, st.end.y, st.end.heading_deg}}, {"notes", notes}});
    from = st.end;
  }
  old["simulation"]["steps"] = old_steps;
  old["simulation"].erase("notes");
  Scene read_old = scene_from_json(old);
  CHECK(dump_scene(read_old) == text);

  // A step naming a command the scene does not have, or an unknown op, is refused.
  json bad = doc;
  bad["simulation"]["steps"][0][0] = 4;
  CHECK_THROWS_AS(scene_from_json(bad), Error);
  bad = doc;
  bad["simulation"]["steps"][0][1] = "hop";
  CHECK_THROWS_AS(scene_from_json(bad), Error);
  bad = doc;
  bad["simulation"]["notes"] = json::array({json::array({99, "far"})});
  CHECK_THROWS_AS(scene_from_json(bad), Error);
}
