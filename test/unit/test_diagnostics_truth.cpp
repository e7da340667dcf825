// Diagnostics that tell the truth: totals that add up to the simulated time, each second
// counted once, findings that reach the primitives they are about, ids filled in, suggestions
// the editing tools accept, and separate marks (the gap between letters, the dot of an i)
// left alone.
#include <catch2/catch.hpp>

#include <set>

#include "robot/motion.hpp"
#include "robot/simulate.hpp"
#include "route/route.hpp"
#include "tools/edit_session.hpp"
#include "tools_fixture.hpp"

using namespace svtest;

namespace {

std::set<std::string> ids_in(const json& list, const char* key = "primitive_id") {
  std::set<std::string> out;
  for (const auto& x : list) out.insert(x[key].get<std::string>());
  return out;
}

// A stem ending 3 px (under a stroke width) short of the bar it heads for.
SceneBuilder near_miss_t() {
  SceneBuilder b(200, 200, 4);
  b.add(Shape::line({20, 40}, {180, 40}));
  b.add(Shape::line({100, 160}, {100, 43}));
  return b;
}

}  // namespace

TEST_CASE("GetTour: a primitive drawn in parts is entered once per part; the totals are the simulated time", "[tools]") {
  SceneBuilder b(240, 200, 4);
  b.add(Shape::circle({70, 100}, 40));
  b.add(Shape::line({150, 60}, {220, 60}));
  Scene s = b.routed();
  // The circle in two halves, the line between them.
  s.tour = std::vector<TourStep>{{"p_0001", false, 0, 0, 0.5}, {"p_0002", false, 0}, {"p_0001", false, 0, 0.5, 1}};
  RouteOptions o;
  o.ppi = 100;
  emit_tour(s, o);
  s = simulated(s);
  const json tour = run("GetTour", s);
  const double total_ms = 1000 * s.metrics["draw_time_s"].get<double>();
  CHECK(tour["total_draw_time_ms"].get<double>() == Approx(total_ms).margin(0.01));
  const double drawing_ms = 1000 * s.metrics["pen_down_time_s"].get<double>();
  CHECK(tour["transition_time_ms"].get<double>() == Approx(total_ms - drawing_ms).margin(0.01));
  REQUIRE(tour["steps"].size() == 3);
  double steps_draw = 0, steps_in = 0;
  for (const auto& st : tour["steps"]) {
    steps_draw += st["draw_time_ms"].get<double>();
    steps_in += st["transition_in"]["time_ms"].get<double>();
  }
  // Each half draws half the circle; the second half is entered from the line.
  CHECK(steps_draw == Approx(drawing_ms).margin(0.01));
  CHECK(steps_in <= tour["transition_time_ms"].get<double>() + 0.01);
  CHECK(tour["steps"][2]["transition_in"]["time_ms"].get<double>() > 0);
}

TEST_CASE("IdentifyExpensiveOperations counts a slow, tight arc once, named by a primitive", "[tools]") {
  Scene s = simulated(dev_drawing().routed());
  const json env = run("IdentifyExpensiveOperations", s, {{"kinds", {"slow_arc", "tight_arc"}}});
  REQUIRE(s.robot);
  double arcs_s = 0;
  for (const auto& c : *s.commands)
    if (c.kind == Command::Kind::arc && c.pen_down) arcs_s += command_time_s(c, s.robot->ppi);
  double listed_ms = 0;
  std::set<std::string> named;
  for (const auto& op : env["operations"]) {
    listed_ms += op["time_ms"].get<double>();
    CHECK(named.insert(op["before_primitive_id"].get<std::string>()).second);  // one entry per arc
    CHECK(s.primitive(op["before_primitive_id"].get<std::string>()));
  }
  CHECK(!named.empty());
  CHECK(listed_ms <= 1000 * arcs_s + 0.01);
}

TEST_CASE("IdentifyExpensiveOperations on a plotter's scene: its travel and arcs, no spins or wheel base", "[tools][plotter]") {
  Scene s = dev_drawing().routed();
  RouteOptions o;
  o.model = "plotter";
  route(s, o);
  simulate(s, {});
  const json env = run("IdentifyExpensiveOperations", s, {{"kinds", {"spin", "pen_up", "slow_arc", "tight_arc"}}});
  int pen_ups = 0;
  for (const auto& op : env["operations"]) {
    CHECK(op["kind"] != "spin");
    CHECK(op["kind"] != "tight_arc");
    pen_ups += op["kind"] == "pen_up";
  }
  CHECK(pen_ups == s.metrics["pen_up_moves"].get<int>());
}

TEST_CASE("has_issue and colour by issue see what the diagnostics find", "[tools]") {
  Scene s = near_miss_t().routed();
  const json topo = run("CheckTopology", s);
  REQUIRE(topo["findings"].size() == 1);
  CHECK(topo["findings"][0]["kind"] == "near_miss_junction");
  const json gaps = run("ListPrimitives", s, {{"filter", {{"has_issue", {"topology_gap"}}}}});
  // The near miss is about the stem and the bar it stops short of.
  REQUIRE(ids_in(gaps["primitives"], "id") == std::set<std::string>{"p_0001", "p_0002"});
  CHECK(gaps["primitives"][0]["issues"] == json({"topology_gap"}));
  CHECK(run("ListPrimitives", s, {{"filter", {{"has_issue", {"broken_loop"}}}}})["primitives"].empty());
  CHECK(run("AnalyzeGeometricFit", s, {{"filter", {{"has_issue", {"topology_gap"}}}}})["reports"].size() == 2);
  // Coloured by issue, the two are drawn red; once the stem meets the bar, neither is.
  auto red_pixels = [](const Scene& scene) {
    ToolResult view;
    run("GetCurrentRender", scene, {{"color_by", "issue"}}, &view);
    const cv::Mat& img = view.images.at("render");
    int n = 0;
    for (int y = 0; y < img.rows; ++y)
      for (int x = 0; x < img.cols; ++x) {
        const cv::Vec3b p = img.at<cv::Vec3b>(y, x);
        n += p[2] > 180 && p[1] < 90 && p[0] < 90;
      }
    return n;
  };
  SceneBuilder joined(200, 200, 4);
  joined.add(Shape::line({20, 40}, {180, 40}));
  joined.add(Shape::line({100, 160}, {100, 40}));
  CHECK(red_pixels(s) > red_pixels(joined.routed()) + 100);
}

TEST_CASE("CheckTopology names the graph vertices of its findings", "[tools]") {
  const json topo = run("CheckTopology", near_miss_t().routed());
  REQUIRE(topo["findings"].size() == 1);
  // The stem's free end (100, 43) is vertex v_0004 of the fixture's graph.
  CHECK(topo["findings"][0]["vertex_ids"] == json({"v_0004"}));
  // A stroke drawn twice: the ends of both source edges.
  SceneBuilder b(200, 200, 4);
  b.add(Shape::line({20, 100}, {180, 100}));
  b.add(Shape::line({40, 100}, {120, 100}));
  const json dup = run("CheckTopology", b.routed());
  REQUIRE(dup["findings"].size() == 1);
  CHECK(dup["findings"][0]["kind"] == "duplicate_edge");
  CHECK(dup["findings"][0]["vertex_ids"] == json({"v_0001", "v_0002", "v_0003", "v_0004"}));
}

TEST_CASE("CheckTopology leaves the gap between two letters alone", "[tools]") {
  // Two upright strokes 8 px (two stroke widths) apart, like the l and the t of a word: their
  // ends point along them, not at each other.
  SceneBuilder b(200, 200, 4);
  b.add(Shape::line({50, 40}, {50, 100}));
  b.add(Shape::line({58, 30}, {58, 100}));
  CHECK(run("CheckTopology", b.routed())["findings"].empty());
}

TEST_CASE("CheckForConsistency suggests snap_exact only with an edit the tools accept", "[tools]") {
  // Two lines 3 degrees off parallel whose source points hold them there (EnforceRelation
  // cannot move them within tolerance), ends 1 px apart, and a mirror pair.
  SceneBuilder b(240, 200, 4);
  const double a = deg2rad(3);
  b.add(Shape::line({20, 20}, {120, 20}));
  b.add(Shape::line({20, 60}, {20 + 100 * std::cos(a), 60 + 100 * std::sin(a)}));
  b.add(Shape::line({20, 120}, {60, 150}));
  b.add(Shape::line({61, 150}, {100, 120}));
  Scene s = b.routed();
  const json env = run("CheckForConsistency", s,
                       {{"relations", {"parallel", "perpendicular", "endpoint_coincident", "symmetry_vertical",
                                       "symmetry_horizontal", "collinear", "tangent_continuity"}}});
  REQUIRE(!env["findings"].empty());
  int snaps = 0;
  for (const auto& f : env["findings"]) {
    CAPTURE(f.dump());
    if (f["suggested_action"] != "snap_exact") continue;
    ++snaps;
    REQUIRE(f["suggested_edit"].is_object());
    json edit = f["suggested_edit"];
    const Tool* t = find_tool(edit["tool"].get<std::string>());
    REQUIRE(t);
    edit.erase("tool");
    ToolContext ctx{s, nullptr, "0"};
    CHECK_NOTHROW(apply_edits(ctx, {{t, normalize_request(*t, edit)}}));
  }
  CHECK(snaps > 0);  // the ends 1 px apart
}

TEST_CASE("IdentifyNoise keeps the round dot of an i; a sliver is still a speck", "[tools]") {
  SceneBuilder b(200, 200, 4);
  b.add(Shape::line({100, 60}, {100, 160}));
  b.add(Shape::line({100, 44.5}, {100, 45.5}), {{100, 45}});  // the dot, 14 px above the stem
  b.add(Shape::line({40, 100}, {41, 100}), {{40.5, 100}});    // a speck
  Scene s = b.routed();
  Graph& g = *s.graph;
  g.edges[1].width_px = 4.5;  // the dot is a round blob a stroke wide
  for (auto& v : g.vertices)
    if (v.id == g.edges[1].v0) v.kind = "dot";
  g.edges[2].width_px = 1;  // the speck is a hair of ink
  const json env = run("IdentifyNoise", s);
  std::map<std::string, std::string> verdict;
  for (const auto& v : env["verdicts"]) verdict[v["primitive_id"]] = v["verdict"];
  CHECK(verdict["p_0002"] == "likely_signal");
  CHECK(verdict["p_0003"] == "likely_noise");
}
