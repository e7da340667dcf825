// The edit tools of sv-edit that change topology, order, stages and bookkeeping, and what every
// edit shares: fresh ids, settling (route and simulation follow the geometry), batches that are
// all or nothing, dry runs.
#include <catch2/catch.hpp>

#include <set>

#include "core/error.hpp"
#include "core/scene_check.hpp"
#include "edit/edit.hpp"
#include "eval/drawing.hpp"
#include "eval/scope.hpp"
#include "robot/replay.hpp"
#include "robot/simulate.hpp"
#include "tools/edit_session.hpp"
#include "tools_fixture.hpp"

using namespace svtest;

namespace {

std::set<std::string> ids_of(const Scene& s) {
  std::set<std::string> out;
  for (const auto& p : *s.primitives) out.insert(p.id);
  return out;
}

// The settled scene is consistent: the tour draws every primitive once, and the command stream
// the route emitted draws exactly the tour.
void check_consistent(const Scene& s) {
  REQUIRE(s.tour);
  std::multiset<std::string> toured;
  for (const auto& t : *s.tour) toured.insert(t.primitive);
  std::set<std::string> ids = ids_of(s);
  CHECK(std::set<std::string>(toured.begin(), toured.end()) == ids);
  CHECK(toured.size() == ids.size());
  std::set<std::string> drawn;
  for (const auto& c : *s.commands)
    if (!c.primitive.empty())
      for (size_t a = 0, b; a <= c.primitive.size(); a = b + 1) {
        b = c.primitive.find(',', a);
        if (b == std::string::npos) b = c.primitive.size();
        drawn.insert(c.primitive.substr(a, b - a));
      }
  CHECK(drawn == ids);
}

}  // namespace

TEST_CASE("DeletePrimitive refuses to disconnect the drawing unless told, and reports the ink lost", "[edit]") {
  Scene s = simulated(dev_drawing().routed());
  // The square's side p_0002 joins p_0001 and p_0003; deleting it leaves the square open but
  // connected; deleting p_0001 and p_0003 too would leave p_0002 on its own.
  EditSession one = edit(s, "DeletePrimitive", {{"primitive_ids", {"p_0002"}}});
  CHECK(one.removed == std::vector<std::string>{"p_0002"});
  CHECK(one.results[0]["coverage_loss_px"].get<int>() == Approx(80).margin(6));
  check_consistent(one.scene);
  CHECK(one.scene.simulation.has_value());  // the simulation was re-run, not left stale
  CHECK(one.after["primitive_count"] == 7);

  SceneBuilder b(200, 100, 3);
  b.add(Shape::line({10, 50}, {60, 50}));
  b.add(Shape::line({60, 50}, {110, 50}));
  b.add(Shape::line({110, 50}, {160, 50}));
  Scene chain = b.routed();
  CHECK(refusal(chain, "DeletePrimitive", {{"primitive_ids", {"p_0002"}}}).code() == Code::no_result);
  EditSession forced =
      edit(chain, "DeletePrimitive", {{"primitive_ids", {"p_0002"}}, {"confirm_no_topology_break", false}});
  CHECK(ids_of(forced.scene) == std::set<std::string>{"p_0001", "p_0003"});
  // Deleting an end of the chain disconnects nothing.
  CHECK(edit(chain, "DeletePrimitive", {{"primitive_ids", {"p_0003"}}}).removed.size() == 1);
  CHECK(refusal(chain, "DeletePrimitive", {{"primitive_ids", {"p_0042"}}}).code() == Code::not_found);
}

TEST_CASE("DeletePrimitive drops the relations naming what it deleted", "[edit]") {
  Scene s = dev_drawing().routed();
  s.relations.push_back({{"kind", "parallel"}, {"primitives", {"p_0007", "p_0008"}}});
  EditSession gone = edit(s, "DeletePrimitive", {{"primitive_ids", {"p_0008"}}});
  CHECK(gone.scene.relations.empty());
  CHECK(check_scene_invariants(gone.scene) == "");
  CHECK(gone.warnings.empty());  // the relation goes with its primitive: a normal outcome
}

TEST_CASE("a deleted id is never handed out again", "[edit]") {
  Scene s = dev_drawing().routed();
  Scene gone = edit(s, "DeletePrimitive", {{"primitive_ids", {"p_0008"}}}).scene;
  EditSession added = edit(gone, "AddPrimitive", {{"spec", {{"type", "line"}, {"p0", {20, 185}}, {"p1", {100, 185}}}}});
  CHECK(added.added == std::vector<std::string>{"p_0009"});
  CHECK(added.results[0]["new_primitive_id"] == "p_0009");
  check_consistent(added.scene);
  // Survivors keep their ids and geometry.
  CHECK(added.changed.empty());
  CHECK(added.removed.empty());
}

TEST_CASE("AddPrimitive: fresh id, placed where asked or routed, bad shapes refused", "[edit]") {
  Scene s = dev_drawing().routed();
  EditSession a = edit(s, "AddPrimitive", {{"spec", {{"type", "arc"}, {"p0", {20, 185}}, {"p1", {100, 185}}, {"bulge", 0.2}}},
                                           {"insert_after_primitive_id", "p_0002"}});
  const std::string id = a.results[0]["new_primitive_id"];
  CHECK(id == "p_0009");
  REQUIRE(a.scene.tour);
  CHECK((*a.scene.tour)[2].primitive == id);  // right after p_0002, as asked
  check_consistent(a.scene);
  CHECK(refusal(s, "AddPrimitive", {{"spec", {{"type", "line"}, {"p0", {5, 5}}, {"p1", {5, 5}}}}}).code() == Code::invalid_selection);
  CHECK(refusal(s, "AddPrimitive", {{"spec", {{"type", "circle"}, {"center", {5, 5}}}}}).code() == Code::invalid_selection);
  // Far off the page (a typo) is refused before the router would spend its time on it.
  CHECK(refusal(s, "AddPrimitive", {{"spec", {{"type", "line"}, {"p0", {0, 0}}, {"p1", {1e300, 0}}}}}).code() ==
        Code::invalid_selection);
  CHECK(refusal(s, "AddPrimitive", {{"spec", {{"type", "line"}, {"p0", {5, 5}}, {"p1", {9, 5}}}},
                                    {"insert_after_primitive_id", "p_0999"}}).code() == Code::not_found);
}

TEST_CASE("ReverseDirection flips the tour step and reports the time it costs", "[edit]") {
  Scene s = dev_drawing().routed();
  EditSession r = edit(s, "ReverseDirection", {{"primitive_ids", {"p_0007"}}});
  CHECK((*r.scene.tour)[6].reverse == true);
  CHECK(r.changed.empty());  // the geometry is the same; only the way it is drawn changed
  const double delta_ms = r.results[0]["draw_time_delta_ms"];
  CHECK(delta_ms == Approx(1000 * (drawing_of(r.scene).total_s - drawing_of(s).total_s)).margin(0.01));
  check_consistent(r.scene);
  // Twice is the identity.
  EditSession back = edit(r.scene, "ReverseDirection", {{"primitive_ids", {"p_0007"}}});
  CHECK(dump_scene(back.scene) == dump_scene(edit(s, "LabelSemanticRoles", json::object({{"assignments", json::array()}})).scene));
}

TEST_CASE("DefineRegion names an area later calls scope to", "[edit]") {
  Scene s = dev_drawing().routed();
  EditSession d = edit(s, "DefineRegion", {{"name", "frame"}, {"region", {{"kind", "rect"}, {"rect", {10, 10, 110, 110}}}}});
  CHECK(d.results[0]["region_id"] == "r_0001");
  Region r = resolve_region(d.scene, {{"kind", "named"}, {"name", "frame"}});
  CHECK(r.contains({50, 50}));
  CHECK(!r.contains({170, 60}));
  // Redefining (when asked to) keeps the id; another name gets the next.
  Scene again = edit(d.scene, "DefineRegion",
                     {{"name", "frame"}, {"region", {{"kind", "rect"}, {"rect", {0, 0, 50, 50}}}}, {"replace", true}})
                    .scene;
  CHECK(again.regions.size() == 1);
  CHECK(again.regions[0]["id"] == "r_0001");
  CHECK(edit(again, "DefineRegion", {{"name", "eye"}, {"region", {{"kind", "primitive_set"}, {"primitive_ids", {"p_0005"}}}}})
            .results[0]["region_id"] == "r_0002");
  CHECK(refusal(s, "DefineRegion", {{"name", "x"}, {"region", {{"kind", "primitive_set"}, {"primitive_ids", {"p_0099"}}}}}).code() ==
        Code::not_found);
}

TEST_CASE("LabelSemanticRoles sets roles and counts the changes", "[edit]") {
  Scene s = dev_drawing().routed();
  EditSession l = edit(s, "LabelSemanticRoles", {{"assignments", json::array({json::array({"p_0001", "frame"}), json::array({"p_0005", "silhouette"})})}});
  CHECK(l.results[0]["updated_count"] == 2);
  CHECK(l.scene.primitive("p_0005")->semantic_role == "silhouette");
  CHECK(l.changed == std::vector<std::string>{"p_0001", "p_0005"});
  CHECK(refusal(s, "LabelSemanticRoles", {{"assignments", json::array({json::array({"p_0077", "frame"})})}}).code() == Code::not_found);
}

TEST_CASE("ReorderTour: a full order exactly, or pins with the rest re-optimized", "[edit]") {
  Scene s = dev_drawing().routed();
  json full = json::array();
  for (const char* id : {"p_0008", "p_0007", "p_0006", "p_0005", "p_0004", "p_0003", "p_0002", "p_0001"})
    full.push_back({id, "forward"});
  EditSession f = edit(s, "ReorderTour", {{"full_order", full}});
  REQUIRE(f.scene.tour->size() == 8);
  CHECK(f.scene.tour->front().primitive == "p_0008");
  CHECK(f.scene.tour->back().primitive == "p_0001");
  check_consistent(f.scene);
  full.erase(full.begin());
  CHECK(refusal(s, "ReorderTour", {{"full_order", full}}).code() == Code::invalid_selection);  // p_0008 left out
  CHECK(refusal(s, "ReorderTour", json::object()).code() == Code::invalid_selection);

  // Pinning p_0008 first: the optimizer's tour around the pin is never slower than the same
  // pin with the rest left in their order.
  json pins = json::array({json::array({0, "p_0008", "reverse"})});
  EditSession opt = edit(f.scene, "ReorderTour", {{"pinned_positions", pins}});
  EditSession fixed = edit(f.scene, "ReorderTour", {{"pinned_positions", pins}, {"rerun_optimizer", false}});
  CHECK(opt.scene.tour->front().primitive == "p_0008");
  CHECK(opt.scene.tour->front().reverse);
  CHECK(fixed.scene.tour->front().primitive == "p_0008");
  CHECK(opt.results[0]["draw_time_after_ms"].get<double>() <= fixed.results[0]["draw_time_after_ms"].get<double>() + 1e-6);
  CHECK(opt.results[0]["draw_time_after_ms"].get<double>() < opt.results[0]["draw_time_before_ms"].get<double>());
  check_consistent(opt.scene);
  CHECK(refusal(s, "ReorderTour", {{"pinned_positions", json::array({json::array({8, "p_0001", "forward"})})}}).code() == Code::invalid_selection);
}

TEST_CASE("ReorderTour with a free start places the robot at the new first stroke, and says what a start costs", "[edit]") {
  Scene s = dev_drawing().routed();
  REQUIRE_FALSE(s.robot->start_fixed);
  json full = json::array();
  for (const char* id : {"p_0008", "p_0007", "p_0006", "p_0005", "p_0004", "p_0003", "p_0002", "p_0001"})
    full.push_back({id, "forward"});
  EditSession f = edit(s, "ReorderTour", {{"full_order", full}});
  // No drive from where the old first stroke began: the robot starts on p_0008.
  const Command& first = f.scene.commands->front();
  CHECK((first.kind == Command::Kind::arc || (first.kind == Command::Kind::line && first.pen_down)));
  CHECK(first.primitive == "p_0008");
  CHECK_FALSE(f.scene.robot->start_fixed);
  CHECK(f.results[0]["start"]["mode"] == "free");
  CHECK(f.results[0]["start"]["first_primitive"] == "p_0008");
  CHECK(f.results[0]["start"]["to_first_stroke_s"] == 0);
  CHECK(f.llm_text.find("start free") != std::string::npos);
  check_consistent(f.scene);
  // A start given with the order: the robot starts there and the way to p_0008 is counted.
  EditSession g = edit(s, "ReorderTour", {{"full_order", full}, {"start", "0,0,0"}});
  CHECK(g.scene.robot->start_fixed);
  CHECK(g.scene.robot->start.x == 0);
  CHECK(g.scene.robot->start.y == 0);
  CHECK(g.results[0]["start"]["mode"] == "fixed");
  CHECK(g.results[0]["start"]["to_first_stroke_s"].get<double>() > 0);
  CHECK(g.results[0]["draw_time_after_ms"].get<double>() > f.results[0]["draw_time_after_ms"].get<double>());
  CHECK(g.llm_text.find("start fixed") != std::string::npos);
  // Later edits keep a fixed start; free stays free.
  EditSession h = edit(g.scene, "ReorderTour", {{"pinned_positions", json::array({json::array({0, "p_0001", "forward"})})}});
  CHECK(h.scene.robot->start_fixed);
  CHECK(h.scene.robot->start.x == 0);
  CHECK(refusal(s, "ReorderTour", {{"full_order", full}, {"start", "here"}}).code() == Code::invalid_selection);
  CHECK(refusal(s, "RerunStage", {{"stage", "vectorize"}, {"start", "free"}}).code() == Code::invalid_selection);
}

TEST_CASE("RerunStage route_optimize never undoes a faster tour, and twice changes nothing", "[edit]") {
  Scene s = simulated(dev_drawing().routed());
  EditSession once = edit(s, "RerunStage", {{"stage", "route_optimize"}});
  CHECK(drawing_of(once.scene).total_s <= drawing_of(s).total_s + 1e-9);
  EditSession twice = edit(once.scene, "RerunStage", {{"stage", "route_optimize"}});
  const json a = to_json(once.scene, false), b = to_json(twice.scene, false);
  CHECK(a["commands"] == b["commands"]);
  CHECK(a["tour"] == b["tour"]);
  CHECK(a["robot"] == b["robot"]);
  CHECK(once.after["f1"] == twice.after["f1"]);
  // An agent's reversal that saves time survives a re-route by a weaker search.
  double best = 0;
  Scene reversed;
  for (const auto& p : *s.primitives) {
    EditSession r = edit(s, "ReverseDirection", {{"primitive_ids", {p.id}}});
    const double saved = drawing_of(s).total_s - drawing_of(r.scene).total_s;
    if (saved > best) best = saved, reversed = r.scene;
  }
  REQUIRE(best > 0);
  EditSession weak = edit(reversed, "RerunStage", {{"stage", "route_optimize"}, {"config_overrides", {{"max_passes", 0}}}});
  CHECK(drawing_of(weak.scene).total_s <= drawing_of(reversed).total_s + 1e-9);
  CHECK(weak.results[0]["start"]["mode"] == "free");
}

TEST_CASE("RerunStage re-routes, refits and keeps the ids of what did not change", "[edit]") {
  Scene s = simulated(dev_drawing().routed());
  // Refitting every edge with the scene's thresholds reproduces the hand-built fit: same ids.
  EditSession v = edit(s, "RerunStage", {{"stage", "vectorize"}});
  CHECK(ids_of(v.scene) == ids_of(s));
  CHECK(v.added.empty());
  check_consistent(v.scene);
  // A huge tolerance in a region merges nothing outside it.
  EditSession r = edit(s, "RerunStage", {{"stage", "route_optimize"}, {"config_overrides", {{"max_passes", 0}}}});
  CHECK(r.scene.config["route.max_passes"]["from"] == "user");
  check_consistent(r.scene);
  // In a region, only the region's primitives move: a scrambled square is put back in order
  // among its own four places while the rest of the tour stays as it was.
  json order = json::array();
  for (const char* id : {"p_0001", "p_0003", "p_0002", "p_0004", "p_0005", "p_0006", "p_0007", "p_0008"})
    order.push_back(json::array({id, "forward"}));
  Scene scrambled = edit(s, "ReorderTour", {{"full_order", order}}).scene;
  EditSession local = edit(scrambled, "RerunStage", {{"stage", "route_optimize"}, {"region", {{"kind", "rect"}, {"rect", {10, 10, 110, 110}}}}});
  check_consistent(local.scene);
  CHECK(drawing_of(local.scene).total_s < drawing_of(scrambled).total_s - 1);
  std::set<std::string> square;
  for (size_t i = 0; i < 8; ++i) {
    const TourStep& t = (*local.scene.tour)[i];
    if (i < 4) square.insert(t.primitive);
    else CHECK((t.primitive == (*scrambled.tour)[i].primitive && t.reverse == (*scrambled.tour)[i].reverse));
  }
  CHECK(square == std::set<std::string>{"p_0001", "p_0002", "p_0003", "p_0004"});
  CHECK(refusal(s, "RerunStage", {{"stage", "vectorize"}, {"config_overrides", {{"no_such_key", 1}}}}).code() ==
        Code::invalid_selection);
  Scene no_source = s;
  no_source.source->path = "/nonexistent/drawing.png";
  CHECK(refusal(no_source, "RerunStage", {{"stage", "skeletonize"}}).code() == Code::no_result);
}

TEST_CASE("RerunStage in a region never gives two primitives one id", "[edit]") {
  // The refit of the region's two edges keeps p_0002 (unchanged) and replaces p_0003 (its shape
  // is off its ink). The replacement's id was once counted from the primitives left outside the
  // region (p_0001), so it got p_0002 a second time; an edit by id then hit both.
  SceneBuilder b(200, 120, 3);
  b.add(Shape::line({10, 20}, {190, 20}));
  b.add(Shape::line({20, 80}, {90, 80}));
  b.add(Shape::line({110, 81.5}, {180, 81.5}), Shape::line({110, 80}, {180, 80}).sample(1.0));
  Scene s = b.routed();
  EditSession v = edit(s, "RerunStage", {{"stage", "vectorize"}, {"region", {{"kind", "rect"}, {"rect", {0, 50, 200, 110}}}}});
  REQUIRE(v.scene.primitives->size() == 3);
  CHECK(ids_of(v.scene).size() == 3);
  CHECK(check_scene_invariants(v.scene) == "");
  CHECK(v.removed == std::vector<std::string>{"p_0003"});
  CHECK(v.added == std::vector<std::string>{"p_0004"});  // after every id the scene had, p_0003 included
  CHECK(v.scene.primitive("p_0002")->shape.p0.x == Approx(20));
  check_consistent(v.scene);
}

TEST_CASE("a batch is all or nothing; SimulateEdit changes nothing", "[edit]") {
  Scene s = dev_drawing().routed();
  const Tool* del = find_tool("DeletePrimitive");
  const Tool* rev = find_tool("ReverseDirection");
  ToolContext ctx{s, nullptr, "0"};
  EditSession both = apply_edits(ctx, {{del, normalize_request(*del, {{"primitive_ids", {"p_0008"}}})},
                                       {rev, normalize_request(*rev, {{"primitive_ids", {"p_0007"}}})}});
  CHECK(both.removed == std::vector<std::string>{"p_0008"});
  CHECK(both.results.size() == 2);
  // The second edit names the primitive the first deleted: the whole batch fails.
  CHECK_THROWS_AS(apply_edits(ctx, {{del, normalize_request(*del, {{"primitive_ids", {"p_0008"}}})},
                                    {rev, normalize_request(*rev, {{"primitive_ids", {"p_0008"}}})}}),
                  Error);
  CHECK(parse_batch({{{"kind", "delete_primitive"}, {"payload", {{"primitive_ids", {"p_0001"}}}}}})[0].tool == del);
  CHECK_THROWS_AS(parse_batch({{{"tool", "ListPrimitives"}}}), Error);  // not an edit

  const std::string before = dump_scene(s);
  json env = run("SimulateEdit", s, {{"edits", {{{"tool", "DeletePrimitive"}, {"primitive_ids", {"p_0008"}}}}},
                                     {"metrics_to_report", {"primitive_count", "pixel_fidelity"}}});
  CHECK(dump_scene(s) == before);
  CHECK(env["before"]["primitive_count"] == 8);
  CHECK(env["after"]["primitive_count"] == 7);
  CHECK(env["after"]["recall"].get<double>() < env["before"]["recall"].get<double>());
  CHECK(env["removed_primitive_ids"] == json{"p_0008"});

  // Coverage findings and semantic roles are measured on both sides; the view is drawn on request.
  Scene tagged = edit(s, "LabelSemanticRoles", {{"assignments", json::array({json::array({"p_0008", "silhouette"})})}}).scene;
  ToolResult r;
  env = run("SimulateEdit", tagged, {{"edits", {{{"tool", "DeletePrimitive"}, {"primitive_ids", {"p_0008"}}}}},
                                     {"metrics_to_report", {"coverage_findings", "semantic_aspects"}},
                                     {"return_render", true}}, &r);
  CHECK(env["after"]["coverage_findings"].get<int>() > env["before"]["coverage_findings"].get<int>());
  CHECK(env["after"]["missed_ink_px"].get<double>() > env["before"]["missed_ink_px"].get<double>() + 10);
  CHECK(env["before"]["semantic_roles"]["silhouette"] == 1);
  CHECK(!env["after"]["semantic_roles"].contains("silhouette"));
  CHECK(env["warnings"].empty());
  REQUIRE(r.images.count("simulation") == 1);
  CHECK(r.images["simulation"].cols > 2 * r.images["simulation"].rows);
  CHECK(run("SimulateEdit", s, {{"edits", {{{"tool", "DeletePrimitive"}, {"primitive_ids", {"p_0008"}}}}}}, &r).is_object());
  CHECK(r.images.empty());
}
