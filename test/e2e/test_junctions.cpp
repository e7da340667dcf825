// Junction drawings with exact truth (test/data/junctions, from scripts/lib/junctions.py): where
// strokes meet and what they are, end to end through sv-skeleton and sv-fit.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "core/scene.hpp"
#include "graph/stroke_graph.hpp"
#include "process.hpp"

using namespace svtest;

TEST_CASE("a circle with a stem leaving along its tangent is one circle and one line meeting at the contact",
          "[e2e][junctions]") {
  const std::string name = "junctions/circle_tangent_stem_a00_end_w12_228";
  Run r = run(fmt::format("{} --no-store {} | {} --no-store", bin("sv-skeleton"), data(name + ".png"), bin("sv-fit")));
  REQUIRE(r.status == 0);
  const sv::Scene s = sv::parse_scene(r.out);
  REQUIRE(s.primitives);
  REQUIRE(s.graph);
  const auto gt = nlohmann::json::parse(slurp(data(name + ".gt.json")));
  const double half_width = gt["stroke_width_px"].get<double>() / 2;
  const auto& truth = gt["junctions"][0]["point"];
  const sv::Vec2 contact{truth[0].get<double>(), truth[1].get<double>()};
  const auto& gt_circle = gt["primitives"][0];
  REQUIRE(gt_circle["type"] == "circle");

  // The shared stretch of ink is the circle's, whole; the stem is one line.
  REQUIRE(s.primitives->size() == 2);
  const sv::Primitive* circle = nullptr;
  const sv::Primitive* line = nullptr;
  for (const sv::Primitive& p : *s.primitives)
    (p.shape.type == sv::PrimType::circle ? circle : line) = &p;
  REQUIRE(circle);
  REQUIRE(line);
  REQUIRE(line->shape.type == sv::PrimType::line);
  CHECK(sv::dist(circle->shape.center, {gt_circle["center"][0].get<double>(), gt_circle["center"][1].get<double>()}) <
        1.0);
  CHECK(std::abs(circle->shape.radius - gt_circle["radius"].get<double>()) < 1.0);

  // The junction is at the contact, not where the skeleton splits (some 20 px along the stem),
  // and the line starts there.
  const sv::Vertex* junction = nullptr;
  for (const sv::Vertex& v : s.graph->vertices)
    if (v.degree >= 3) junction = &v;
  REQUIRE(junction);
  INFO(fmt::format("junction ({:.1f}, {:.1f}), contact ({:.1f}, {:.1f})", junction->p.x, junction->p.y, contact.x,
                   contact.y));
  CHECK(sv::dist(junction->p, contact) <= half_width);
  CHECK(std::min(sv::dist(line->shape.p0, contact), sv::dist(line->shape.p1, contact)) <= half_width);
}

namespace {

// The case's drawing through sv-skeleton and sv-fit, its truth, and the scene's junctions.
struct Fitted {
  sv::Scene scene;
  nlohmann::json truth;
  std::vector<sv::Vec2> junctions;
};

Fitted fit_case(const std::string& name) {
  Run r = run(fmt::format("{} --no-store {} | {} --no-store", bin("sv-skeleton"), data(name + ".png"), bin("sv-fit")));
  REQUIRE(r.status == 0);
  Fitted f{sv::parse_scene(r.out), nlohmann::json::parse(slurp(data(name + ".gt.json"))), {}};
  REQUIRE(f.scene.primitives);
  REQUIRE(f.scene.graph);
  for (const sv::Vertex& v : f.scene.graph->vertices)
    if (v.degree >= 3) f.junctions.push_back(v.p);
  return f;
}

sv::Vec2 true_meeting(const Fitted& f) {
  const auto& point = f.truth["junctions"][0]["point"];
  return {point[0].get<double>(), point[1].get<double>()};
}

double half_width(const Fitted& f) { return f.truth["stroke_width_px"].get<double>() / 2; }

// All primitives are lines, as many as the truth has.
void check_lines(const Fitted& f) {
  CHECK(f.scene.primitives->size() == f.truth["primitives"].size());
  for (const sv::Primitive& p : *f.scene.primitives) CHECK(p.shape.type == sv::PrimType::line);
}

}  // namespace

TEST_CASE("a K's two arms ending together on its bar are three lines meeting at one point", "[e2e][junctions]") {
  // 8 px strokes, the arms 90 degrees apart: thinning leaves a T for each arm, 3 px apart.
  const Fitted f = fit_case("junctions/k_junction_a90_lineline_w8_304");
  check_lines(f);
  REQUIRE(f.junctions.size() == 1);
  CHECK(sv::dist(f.junctions[0], true_meeting(f)) <= half_width(f));
}

TEST_CASE("3 px strokes crossing at 10 degrees are two lines despite the pinhole where they part", "[e2e][junctions]") {
  // The paper wedge where they part leaves a pinhole that thinning closes a small loop round.
  const Fitted f = fit_case("junctions/x_crossing_a10_lineline_w3_024");
  check_lines(f);
  REQUIRE(f.scene.primitives->size() == 2);
  const sv::Shape &a = (*f.scene.primitives)[0].shape, &b = (*f.scene.primitives)[1].shape;
  sv::Vec2 crossing;
  REQUIRE(sv::graph::intersect({a.p0, sv::unit(a.p1 - a.p0)}, {b.p0, sv::unit(b.p1 - b.p0)}, crossing));
  CHECK(sv::dist(crossing, true_meeting(f)) <= half_width(f));
}

namespace {

// The stroke graph sv-skeleton makes of a junction drawing, with extra options.
sv::Graph graph_of(const std::string& name, const std::string& options = "") {
  Run r = run(fmt::format("{} --no-store {} {}", bin("sv-skeleton"), options, data(name + ".png")));
  REQUIRE(r.status == 0);
  return *sv::parse_scene(r.out).graph;
}

// How far p lies from the graph's edges (a dot's single point included).
double distance_to_graph(const sv::Graph& g, sv::Vec2 p) {
  double best = 1e9;
  for (const sv::Edge& e : g.edges) {
    if (e.points.size() == 1) best = std::min(best, sv::dist(p, e.points[0]));
    for (size_t i = 0; i + 1 < e.points.size(); ++i)
      best = std::min(best, sv::point_segment_distance(p, e.points[i], e.points[i + 1]));
  }
  return best;
}

sv::Vec2 point_of(const nlohmann::json& q) { return {q[0].get<double>(), q[1].get<double>()}; }

// The share of a junction drawing's truth within half a width (the corpus scorer's tolerance)
// of the graph sv-skeleton makes of it, with extra options; and the graph.
double truth_reached(const std::string& name, const std::string& options, sv::Graph* graph = nullptr) {
  const auto gt = nlohmann::json::parse(slurp(data(name + ".gt.json")));
  const double half = gt["stroke_width_px"].get<double>() / 2;
  const sv::Graph g = graph_of(name, options);
  int near = 0, all = 0;
  for (const auto& line : gt["polylines"])
    for (const auto& q : line) near += distance_to_graph(g, point_of(q)) <= half, ++all;
  if (graph) *graph = g;
  return static_cast<double>(near) / all;
}

}  // namespace

TEST_CASE("small loops a 5 px pen filled in beside its stroke are drawn, not dropped", "[e2e][junctions][scribble]") {
  // Telephone cords whose small loops closed into blobs some two widths across: thinning keeps
  // the stroke running past them (or sends a spur into them), and the loops' far sides are lost.
  const std::string name = "junctions/scribble_w5_259";
  const double before = truth_reached(name, "--set graph.filled_loop_diameter_px=0"), now = truth_reached(name, "");
  INFO(fmt::format("truth reached {:.3f} -> {:.3f}", before, now));
  CHECK(now > before + 0.1);
  CHECK(now >= 0.98);
}

TEST_CASE("an 8 px pen's curls keep their filled loops, entered by thinning's spurs, and their tails", "[e2e][junctions][scribble]") {
  // Two telephone cords: each loop closed into a blob round a slit of paper (filled as a sliver),
  // thinning sent a spur into it from the stroke running past, and each cord ends in a short tail.
  const std::string name = "junctions/scribble_w8_247";
  sv::Graph g;
  const double before = truth_reached(name, "--set graph.filled_loop_diameter_px=0"), now = truth_reached(name, "", &g);
  INFO(fmt::format("truth reached {:.3f} -> {:.3f}", before, now));
  CHECK(now > before + 0.05);
  CHECK(now >= 0.98);
  // Every stroke's two ends are drawn to within a width: the cords' tails, under two widths, too.
  const auto gt = nlohmann::json::parse(slurp(data(name + ".gt.json")));
  const double half = gt["stroke_width_px"].get<double>() / 2;
  for (const auto& line : gt["polylines"])
    for (const auto& q : {line.front(), line.back()}) {
      const sv::Vec2 p = point_of(q);
      INFO(fmt::format("stroke end ({:.1f}, {:.1f})", p.x, p.y));
      CHECK(distance_to_graph(g, p) <= 2 * half);
    }
}

TEST_CASE("a zig-zag gone over until it filled in is covered, its teeth too", "[e2e][junctions][scribble]") {
  // A 7 px pen's zig-zag drawn twice, its teeth closer than the pen: one filled mark 3.5 widths
  // across, whose teeth stick out of its core.
  const std::string name = "junctions/scribble_w7_246";
  sv::Graph g;
  const double now = truth_reached(name, "", &g);
  INFO(fmt::format("truth reached {:.3f}", now));
  CHECK(now >= 0.98);
  int covering = 0;
  for (const sv::Edge& e : g.edges)
    if (e.filled) {
      REQUIRE(e.mark);
      CHECK(e.mark->drawn_as == "cover");
      ++covering;
    }
  // A few strokes: its rim, the rings and paths inside, split where its neighbours' strokes join.
  CHECK(covering >= 1);
  CHECK(covering <= 8);
}

namespace {

// Per primitive of the fitted drawing, what ExplainThreshold says each threshold flips at
// (null: no value would change it).
std::map<std::string, std::map<std::string, nlohmann::json>> flips_of(const std::string& name) {
  Run fit = run(fmt::format("{} --no-store {} | {} --no-store", bin("sv-skeleton"), data(name + ".png"), bin("sv-fit")));
  REQUIRE(fit.status == 0);
  const std::string scene = (scratch() / (name.substr(name.find('/') + 1) + ".json")).string();
  spit(scene, fit.out);
  const sv::Scene fitted = sv::parse_scene(fit.out);
  std::map<std::string, std::map<std::string, nlohmann::json>> out;
  for (const sv::Primitive& p : *fitted.primitives) {
    Run why = run(fmt::format("{} explain-threshold --no-store --primitive-id {} {}", bin("sv-diagnose"), p.id, scene));
    REQUIRE(why.status == 0);
    const nlohmann::json result = nlohmann::json::parse(why.out);
    for (const auto& t : result["relevant_thresholds"]) out[p.id][t["key"]] = t["would_change_at"];
  }
  return out;
}

std::optional<sv::TangentRecord> tangent_of(const sv::Graph& g) {
  for (const sv::Vertex& v : g.vertices)
    if (v.tangent) return v.tangent;
  return std::nullopt;
}

}  // namespace

TEST_CASE("ExplainThreshold names the thresholds that drew a small loop, and the values that flip it",
          "[e2e][junctions][scribble][explain]") {
  const std::string name = "junctions/scribble_w5_259";
  auto loops = [&](const std::string& options) {
    std::vector<sv::MarkRecord> out;
    for (const sv::Edge& e : graph_of(name, options).edges)
      if (e.mark && e.mark->loop && std::find(out.begin(), out.end(), *e.mark) == out.end()) out.push_back(*e.mark);
    return out;
  };
  const std::vector<sv::MarkRecord> found = loops("");
  REQUIRE(!found.empty());
  // The loop whose reach flips first: a reach at its flip drops it and no other; just under, all stay.
  const sv::MarkRecord first = *std::min_element(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.flip_reach_px < b.flip_reach_px;
  });
  CHECK(first.unreached >= 1.0 / 3);
  CHECK(first.drawn_as == "outline");
  // The scene rounds to 1e-4 px; the distances compared are float.
  CHECK(loops(fmt::format("--set graph.filled_loop_reach_px={}", first.flip_reach_px - 1e-3)).size() == found.size());
  CHECK(loops(fmt::format("--set graph.filled_loop_reach_px={}", first.flip_reach_px + 1e-3)).size() < found.size());
  // Its diameter flips it too: a loop diameter just over it leaves it to thinning.
  CHECK(loops(fmt::format("--set graph.filled_loop_diameter_px={}", first.diameter_px + 1e-3)).size() < found.size());

  // The tool says so, for the primitives fitted to the loops.
  int named = 0;
  for (auto& [id, flips] : flips_of(name)) {
    if (!flips.count("graph.filled_loop_reach_px")) continue;
    INFO(id);
    CHECK(flips.count("graph.filled_loop_diameter_px") == 1);
    CHECK(flips.count("graph.filled_min_diameter_px") == 1);
    named += std::abs(flips["graph.filled_loop_reach_px"].get<double>() - first.flip_reach_px) < 1e-3;
  }
  CHECK(named >= 1);
}

TEST_CASE("ExplainThreshold names the length at which a K's two junctions stop being one", "[e2e][junctions][explain]") {
  const std::string name = "junctions/k_junction_a90_lineline_w8_304";
  auto junctions = [](const sv::Graph& g) {
    return std::count_if(g.vertices.begin(), g.vertices.end(), [](const sv::Vertex& v) { return v.kind == "junction"; });
  };
  const sv::Graph g = graph_of(name);
  const auto merged = std::find_if(g.vertices.begin(), g.vertices.end(), [](const auto& v) { return v.meeting_link_px > 0; });
  REQUIRE(merged != g.vertices.end());
  const double link = merged->meeting_link_px;
  // Just over the recorded length they stay one junction; at or below it they are two.
  CHECK(junctions(graph_of(name, fmt::format("--set graph.meeting_merge_px={}", link + 1e-3))) == junctions(g));
  CHECK(junctions(graph_of(name, fmt::format("--set graph.meeting_merge_px={}", link - 1e-3))) == junctions(g) + 1);

  int named = 0;
  for (auto& [id, flips] : flips_of(name))
    if (flips.count("graph.meeting_merge_px")) {
      ++named;
      CHECK(std::abs(flips["graph.meeting_merge_px"].get<double>() - link) < 1e-3);
    }
  CHECK(named >= 3);  // the two arms that end there and the bar it lies on
}

TEST_CASE("ExplainThreshold names what kept a circle or an arc whole where a stem meets it tangentially",
          "[e2e][junctions][explain]") {
  // A stem ending on a closed loop fitted as a circle, and a straight stroke leaving an arc.
  for (const std::string name : {"junctions/circle_tangent_stem_a00_end_w12_228", "junctions/tangent_branch_a00_arcline_w8_316"}) {
    INFO(name);
    const std::optional<sv::TangentRecord> t = tangent_of(graph_of(name));
    REQUIRE(t);
    CHECK(t->arc == (name.find("arcline") != std::string::npos));
    CHECK(t->meet_deg < 6);
    // On an arc the stem's line must touch the circle from either side; on a loop it may pass inside.
    const double off = std::max(t->circle_off_px, t->arc ? std::abs(t->line_gap_px) : t->line_gap_px);
    CHECK(tangent_of(graph_of(name, fmt::format("--set graph.tangent_circle_offset_px={}", off + 1e-3))));
    CHECK(!tangent_of(graph_of(name, fmt::format("--set graph.tangent_circle_offset_px={}", off - 1e-3))));
    // The circle (or arc) and the stem both meet at the contact.
    for (auto& [id, flips] : flips_of(name)) {
      INFO(id);
      REQUIRE(flips.count("graph.tangent_circle_offset_px") == 1);
      CHECK(std::abs(flips["graph.tangent_circle_offset_px"].get<double>() - off) < 1e-3);
      // The angles decide loops only; this loop is within them and round enough that neither
      // limit alone would change it.
      CHECK(flips.count("graph.tangent_stem_exact_deg") == (t->arc ? 0 : 1));
      CHECK(flips.count("graph.tangent_stem_max_deg") == (t->arc ? 0 : 1));
      if (!t->arc) CHECK(flips["graph.tangent_stem_max_deg"].is_null());
    }
  }
}
