// Suggestions on planted drawings: the groups MergeSimilarElements finds, the candidate
// SuggestOptimizations ranks first, what SimulateEdit's alternatives report, and that every
// prediction is what applying the printed request gives.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "route/route.hpp"
#include "suggest/candidates.hpp"
#include "suggest/rank.hpp"
#include "tools_fixture.hpp"

using namespace svtest;

namespace {

Scene routed_by_router(SceneBuilder& b) {
  Scene s = b.routed();
  RouteOptions o;
  o.ppi = 100;
  route(s, o);
  return s;
}

json groups_of(const Scene& s, bool aggressive = false) {
  return run("MergeSimilarElements", s, {{"aggressive", aggressive}})["groups"];
}

// Every candidate's request, applied as sv-edit applies it, gives exactly the predicted scoreboard.
void check_predictions(const Scene& s) {
  const json cands = run("SuggestOptimizations", s, {{"max_candidates", 1000}})["candidates"];
  for (const json& c : cands) {
    INFO(c["description"].get<std::string>());
    EditSession applied = svtest::edit(s, c["request"]["tool"], c["request"]["request"]);
    CHECK(applied.after == c["predicted_after"]);
    CHECK(std::lround((applied.after["draw_time_s"].get<double>() - applied.before["draw_time_s"].get<double>()) * 1000) ==
          std::lround(c["predicted_draw_time_delta_ms"].get<double>()));
  }
}

}  // namespace

TEST_CASE("two collinear halves of a line are one fuse_collinear_lines group, safe", "[suggest]") {
  SceneBuilder b(240, 120, 4);
  Polyline src = join(Shape::line({40, 60}, {120, 60}).sample(1.0), Shape::line({120, 60}, {200, 60}).sample(1.0));
  b.add_chain({Shape::line({40, 60}, {120, 60}), Shape::line({120, 60}, {200, 60})}, src, {{0, 80}, {80, 160}});
  const Scene s = routed_by_router(b);
  const json g = groups_of(s);
  REQUIRE(g.size() == 1);
  CHECK(g[0]["merge_kind"] == "fuse_collinear_lines");
  CHECK(std::set<std::string>(g[0]["primitive_ids"].begin(), g[0]["primitive_ids"].end()) ==
        std::set<std::string>{"p_0001", "p_0002"});
  CHECK(g[0]["safe"] == true);
  CHECK(g[0]["predicted_replacement"]["type"] == "line");
  CHECK(g[0]["fit_rms_px_after"].get<double>() < 0.1);
  // Its request merges them into one line (which the router already drew as one move).
  EditSession m = svtest::edit(s, g[0]["request"]["tool"], g[0]["request"]["request"]);
  CHECK(m.scene.primitives->size() == 1);
  CHECK(m.after["draw_time_s"].get<double>() <= m.before["draw_time_s"].get<double>());
  check_predictions(s);
}

TEST_CASE("four arcs of one circle are rebuilt as the circle", "[suggest]") {
  SceneBuilder b(200, 200, 4);
  const Vec2 c{100, 100};
  const double r = 60, q = std::tan(kPi / 8);  // a quarter turn each
  std::vector<Shape> arcs;
  std::vector<std::pair<int, int>> spans;
  Polyline src;
  for (int k = 0; k < 4; ++k) {
    Vec2 a = c + Vec2{r * std::cos(k * kPi / 2), r * std::sin(k * kPi / 2)};
    Vec2 e = c + Vec2{r * std::cos((k + 1) * kPi / 2), r * std::sin((k + 1) * kPi / 2)};
    arcs.push_back(Shape::arc(a, e, q));
    Polyline part = arcs.back().sample(1.0);
    int from = src.empty() ? 0 : static_cast<int>(src.size()) - 1;
    src = src.empty() ? part : join(src, part);
    spans.push_back({from, static_cast<int>(src.size()) - 1});
  }
  b.add_chain(arcs, src, spans);
  const Scene s = routed_by_router(b);
  const json g = groups_of(s);
  REQUIRE(g.size() == 1);
  CHECK(g[0]["merge_kind"] == "rebuild_circle_from_arcs");
  CHECK(g[0]["primitive_ids"].size() == 4);
  CHECK(g[0]["predicted_replacement"]["type"] == "circle");
  CHECK(std::abs(g[0]["predicted_replacement"]["radius"].get<double>() - r) < 0.5);
  CHECK(g[0]["safe"] == true);
  check_predictions(s);
}

TEST_CASE("a doubled stroke is a deduplicate_overlap group that deletes the copy", "[suggest]") {
  SceneBuilder b(240, 120, 4);
  b.add(Shape::line({40, 60}, {200, 60}));
  b.add(Shape::line({60, 60.5}, {180, 60.5}));
  const Scene s = routed_by_router(b);
  const json g = groups_of(s);
  REQUIRE(g.size() == 1);
  CHECK(g[0]["merge_kind"] == "deduplicate_overlap");
  CHECK(g[0]["primitive_ids"] == json({"p_0002", "p_0001"}));
  CHECK(g[0]["request"]["tool"] == "DeletePrimitive");
  CHECK(g[0]["request"]["request"]["primitive_ids"] == json({"p_0002"}));
  CHECK(g[0]["safe"] == true);
  // SuggestOptimizations offers it, and deleting the copy loses no fidelity.
  const json cands = run("SuggestOptimizations", s)["candidates"];
  bool offered = false;
  for (const json& c : cands)
    if (c.value("merge_kind", "") == "deduplicate_overlap") {
      offered = true;
      CHECK(c["predicted_draw_time_delta_ms"].get<double>() < 0);
      CHECK(c["predicted_fidelity_delta"]["f1"].get<double>() >= -0.001);
    }
  CHECK(offered);
}

TEST_CASE("a stroke driven the wrong way round: the top suggestion reverses it", "[suggest]") {
  SceneBuilder b(260, 160, 4);
  b.add(Shape::arc({20, 80}, {100, 80}, 0.2));  // an arc: it cannot be driven backwards
  b.add(Shape::arc({100, 80}, {220, 80}, -0.2));
  // Drawn reversed, the arc starts at its far end: a pen-up there and a turn of about 180 degrees.
  const Scene s = b.routed({"p_0002"});
  const json cands = run("SuggestOptimizations", s)["candidates"];
  REQUIRE(!cands.empty());
  CHECK(cands[0]["edit_kind"] == "reverse_primitive_direction");
  CHECK(cands[0]["target_primitive_ids"] == json({"p_0002"}));
  CHECK(cands[0]["predicted_draw_time_delta_ms"].get<double>() < -1000);
  CHECK(cands[0]["risk"] == "low");
  // Applied by ApplyEdits with its id (no store here: the scene on standard input).
  CHECK(cands[0]["request"]["command"].get<std::string>().rfind("sv-edit apply-edits --request ", 0) == 0);
  CHECK(cands[0]["request"]["apply"]["edits"][0]["tool"] == "ReverseDirection");
  check_predictions(s);
}

TEST_CASE("SimulateEdit ranks alternatives tried from the same revision", "[suggest]") {
  SceneBuilder b(260, 160, 4);
  b.add(Shape::arc({20, 80}, {100, 80}, 0.2));  // an arc: it cannot be driven backwards
  b.add(Shape::arc({100, 80}, {220, 80}, -0.2));
  const Scene s = b.routed({"p_0002"});
  const json r = run("SimulateEdit", s,
                     {{"alternatives",
                       {{{{"tool", "DeletePrimitive"}, {"primitive_ids", {"p_0001"}}}},
                        {{{"tool", "ReverseDirection"}, {"primitive_ids", {"p_0002"}}}},
                        {{{"tool", "DeletePrimitive"}, {"primitive_ids", {"p_0099"}}}}}}});
  const json& t = r["alternatives"];
  REQUIRE(t.size() == 3);
  // The reversal keeps all the ink and saves time: first; deleting ink loses fidelity; the
  // unknown id is refused and ranks last.
  CHECK(t[0]["alternative"] == 1);
  CHECK(t[0]["rank"] == 1);
  CHECK(t[0]["f1_delta"].get<double>() >= -0.001);
  CHECK(t[2]["alternative"] == 2);
  CHECK(t[2].contains("refused"));
  // Each row is what that batch alone gives.
  EditSession rev = svtest::edit(s, "ReverseDirection", {{"primitive_ids", {"p_0002"}}});
  CHECK(t[0]["after"] == rev.after);
  CHECK(r["before"] == rev.before);
}

TEST_CASE("SimulateEdit ranks alternatives within a budget of losses as SuggestOptimizations does", "[suggest]") {
  SceneBuilder b(260, 160, 4);
  b.add(Shape::arc({20, 80}, {100, 80}, 0.2));
  b.add(Shape::arc({100, 80}, {220, 80}, -0.2));
  const Scene s = b.routed({"p_0002"});
  const json alts = {{{{"tool", "DeletePrimitive"}, {"primitive_ids", {"p_0001"}}}},  // faster, loses the ink it drew
                     {{{"tool", "ReverseDirection"}, {"primitive_ids", {"p_0002"}}}},  // faster, loses nothing
                     {{{"tool", "DeletePrimitive"}, {"primitive_ids", {"p_0099"}}}},   // refused
                     {{{"tool", "ReverseDirection"}, {"primitive_ids", {"p_0001"}}}}};
  auto simulate = [&](json budget) {
    budget["alternatives"] = alts;
    return run("SimulateEdit", s, budget);
  };
  auto merit_of = [&](const json& r, const json& row) {
    return suggest::merit({r["before"], row["after"], 1.0}, {"draw_time"});
  };
  const json open = simulate(json::object());
  INFO(open["llm_text"].get<std::string>());
  REQUIRE(open["alternatives"].size() == 4);
  // No budget: all but the refused one ranked, by draw time saved per fidelity lost, best first.
  for (size_t k = 0; k < 3; ++k) {
    const json& row = open["alternatives"][k];
    CHECK(row["rank"] == k + 1);
    CHECK(!row.contains("over_budget"));
    if (k > 0) CHECK(merit_of(open, open["alternatives"][k - 1]) >= merit_of(open, row));
  }
  CHECK(open["alternatives"][0]["alternative"] == 1);
  CHECK(open["alternatives"][3]["alternative"] == 2);
  CHECK(open["alternatives"][3].contains("refused"));
  CHECK(!open["alternatives"][3].contains("rank"));
  CHECK(open["after"] == open["alternatives"][0]["after"]);
  // Deleting the stroke saves the most time and loses f1: a bound on f1 lost takes it out of the
  // rank, marked with the bound it exceeds, after those within it.
  const json deleted = *std::find_if(open["alternatives"].begin(), open["alternatives"].end(),
                                     [](const json& row) { return row["alternative"] == 0; });
  REQUIRE(deleted["f1_delta"].get<double>() < -0.01);
  CHECK(deleted["draw_time_delta_ms"].get<double>() < open["alternatives"][0]["draw_time_delta_ms"].get<double>());
  const json bounded = simulate({{"max_f1_loss", 0.01}});
  const json& rows = bounded["alternatives"];
  REQUIRE(rows.size() == 4);
  CHECK(rows[0]["alternative"] == 1);
  CHECK(rows[0]["rank"] == 1);
  CHECK(rows[1]["alternative"] == 3);
  CHECK(rows[1]["rank"] == 2);
  CHECK(rows[2]["alternative"] == 0);
  CHECK(rows[2]["over_budget"] == json({"max_f1_loss"}));
  CHECK(!rows[2].contains("rank"));
  CHECK(rows[2]["apply"]["edits"] == json({{{"tool", "DeletePrimitive"}, {"primitive_ids", {"p_0001"}}, {"confirm_no_topology_break", true}}}));
  CHECK(rows[3].contains("refused"));
  // The text numbers them as the data does: rank, then the alternative's place in the request.
  const std::string text = bounded["llm_text"];
  CHECK(text.find("\nrank 1: alternative 1: ") != std::string::npos);
  CHECK(text.find("\nrank 2: alternative 3: ") != std::string::npos);
  CHECK(text.find("\nover budget (max_f1_loss): alternative 0: ") != std::string::npos);
  CHECK(text.find("\nrefused: alternative 2: ") != std::string::npos);
  // A budget of no loss at all ranks only what loses nothing.
  const json none = simulate({{"max_f1_loss", 0}, {"max_f1_1px_loss", 0}, {"max_chamfer_gain_px", 0}});
  int ranked = 0;
  for (const json& row : none["alternatives"]) {
    if (!row.contains("rank")) continue;
    ++ranked;
    CHECK(row["f1_delta"].get<double>() >= 0);
    CHECK(row["f1_1px_delta"].get<double>() >= 0);
    CHECK(row["chamfer_px_delta"].get<double>() <= 0);
  }
  CHECK(ranked >= 1);
  CHECK(none["alternatives"][0]["alternative"] == 1);
  // One batch: marked when it exceeds a bound.
  const json one = run("SimulateEdit", s, {{"edits", alts[0]}, {"max_f1_loss", 0}});
  CHECK(one["over_budget"] == json({"max_f1_loss"}));
  CHECK(!run("SimulateEdit", s, {{"edits", alts[1]}, {"max_f1_loss", 0}}).contains("over_budget"));
  // The budget is the very fields SuggestOptimizations takes.
  for (const char* k : {"max_f1_loss", "max_f1_1px_loss", "max_chamfer_gain_px"})
    CHECK(request_schema(*find_tool("SimulateEdit"))["properties"][k] == request_schema(*find_tool("SuggestOptimizations"))["properties"][k]);
}

TEST_CASE("every suggestion's prediction is what applying it gives, on a drawing with every primitive type", "[suggest]") {
  SceneBuilder b = dev_drawing();
  check_predictions(routed_by_router(b));
}

TEST_CASE("two arcs of one circle meeting at both ends are one group", "[suggest]") {
  // Each end of one meets the other: the run is a loop of two, walked once.
  SceneBuilder b(200, 200, 4);
  const double q = std::tan(kPi / 4);  // half turns
  Polyline src = join(Shape::arc({40, 100}, {160, 100}, q).sample(1.0), Shape::arc({160, 100}, {40, 100}, q).sample(1.0));
  const int mid = static_cast<int>(Shape::arc({40, 100}, {160, 100}, q).sample(1.0).size()) - 1;
  b.add_chain({Shape::arc({40, 100}, {160, 100}, q), Shape::arc({160, 100}, {40, 100}, q)}, src,
              {{0, mid}, {mid, static_cast<int>(src.size()) - 1}});
  const json g = groups_of(routed_by_router(b));
  REQUIRE(g.size() == 1);
  CHECK(g[0]["merge_kind"] == "rebuild_circle_from_arcs");
  CHECK(g[0]["primitive_ids"].size() == 2);
}

TEST_CASE("the stage escalations: a stroke refit to a quarter, half or a whole stroke width, the drawing to half "
          "of it, the route to the coverage tolerance and ends joined up to 3 px apart",
          "[suggest]") {
  // One stroke fitted as two pieces with a slight bend between them, and a line on its own.
  SceneBuilder b(300, 200, 4);
  b.add(Shape::line({20, 30}, {120, 30}));
  Polyline src = join(Shape::line({40, 160}, {120, 160}).sample(1.0), Shape::line({120, 160}, {200, 161.5}).sample(1.0));
  b.add_chain({Shape::line({40, 160}, {120, 160}), Shape::line({120, 160}, {200, 161.5})}, src, {{0, 80}, {80, 160}});
  const Scene s = b.routed();
  std::set<std::pair<double, size_t>> refits;  // ratio, primitives named
  std::set<double> reroutes, snaps;
  for (const auto& c : sv::suggest::propose(s, {}, Scope{})) {
    const json& set = c.request.value("config_overrides", json::object());
    if (c.edit_kind == "refit_polyline") refits.insert({set["fit.merge_width_ratio"].get<double>(), c.targets.size()});
    if (c.edit_kind != "reorder_tour") continue;
    if (set.contains("route.deviation_px")) reroutes.insert(set["route.deviation_px"].get<double>());
    if (set.contains("route.snap_px")) snaps.insert(set["route.snap_px"].get<double>());
  }
  // The stroke at a quarter, half and a whole stroke width; the drawing at a quarter and half of it.
  CHECK(refits == std::set<std::pair<double, size_t>>{{0.25, 0}, {0.25, 2}, {0.5, 0}, {0.5, 2}, {1.0, 2}});
  // Half the coverage tolerance (2 px at this stroke width) and all of it.
  CHECK(reroutes == std::set<double>{1.0, 2.0});
  CHECK(snaps == std::set<double>{1.5, 3.0});
  check_predictions(s);
}

TEST_CASE("ranking: of two slower edits the one that also loses fidelity ranks below; a budget bounds each loss",
          "[suggest]") {
  using suggest::Effect;
  const json before = {{"draw_time_s", 100.0}, {"f1", 0.99}, {"f1_1px", 0.95}, {"chamfer_px", 0.4}};
  auto after = [&](double time, double f1, double f1_1px, double chamfer) {
    return Effect{before, {{"draw_time_s", time}, {"f1", f1}, {"f1_1px", f1_1px}, {"chamfer_px", chamfer}}, 1.0};
  };
  const std::vector<std::string> time = {"draw_time"};
  const Effect slower = after(101, 0.99, 0.95, 0.4), slower_and_worse = after(101, 0.936, 0.90, 0.6);
  CHECK(suggest::merit(slower, time) < 0);
  CHECK(suggest::merit(slower_and_worse, time) < suggest::merit(slower, time));
  // A large saving at a small loss outranks a small one at none.
  CHECK(suggest::merit(after(80, 0.988, 0.94, 0.45), time) > suggest::merit(after(99.5, 0.99, 0.95, 0.4), time));

  const Effect saving = after(90, 0.987, 0.93, 0.5);  // loses 0.003 f1, 0.02 f1 at 1 px, +0.1 px chamfer
  CHECK(suggest::fits(saving, {}));
  // A loss equal to the budget fits, though in binary 0.95 - 0.93 exceeds 0.02.
  CHECK(suggest::fits(saving, {0.003, 0.02, 0.1}));
  CHECK_FALSE(suggest::fits(saving, {0.002, std::nullopt, std::nullopt}));
  CHECK_FALSE(suggest::fits(saving, {std::nullopt, 0.01, std::nullopt}));
  CHECK_FALSE(suggest::fits(saving, {std::nullopt, std::nullopt, 0.05}));
  // A gain is never over budget.
  CHECK(suggest::fits(after(90, 0.995, 0.97, 0.3), {0.0, 0.0, 0.0}));
}

TEST_CASE("an apply id names the batch, not how a client spells its numbers", "[suggest][apply]") {
  // JavaScript has one kind of number: an MCP host sends back a printed 2.0 as 2.
  auto id = [](const json& deviation) {
    return apply_id("0123456789abcdef", parse_batch(json::array({{{"tool", "RerunStage"}, {"stage", "route_optimize"},
                                                                  {"config_overrides", {{"route.deviation_px", deviation}}}}})));
  };
  CHECK(id(2.0) == id(2));
  CHECK(id(2.5) != id(2));
}
