// The mutation tools tell the truth: an edit keeps what it did not change (the tour, the
// settings outside a region), its counts match its id lists, and an edit that would change
// nothing says so instead of recording a revision.
#include <catch2/catch.hpp>

#include <regex>

#include "core/error.hpp"
#include "tools/edit_session.hpp"
#include "tools_fixture.hpp"

using namespace svtest;

namespace {

const TourStep& step_of(const Scene& s, const std::string& id) {
  for (const TourStep& t : *s.tour)
    if (t.primitive == id) return t;
  FAIL("no tour step for " << id);
  return s.tour->front();
}

std::vector<std::string> order_without(const Scene& s, const std::set<std::string>& skip) {
  std::vector<std::string> out;
  for (const TourStep& t : *s.tour)
    if (!skip.count(t.primitive) && (out.empty() || out.back() != t.primitive)) out.push_back(t.primitive);
  return out;
}

// Five short strokes in a row, left to right, and far below them a line drawn in two halves.
Scene row_and_halves() {
  SceneBuilder b(400, 200, 4);
  for (int k = 0; k < 5; ++k) b.add(Shape::line({20.0 + 60 * k, 30}, {60.0 + 60 * k, 30}));
  Polyline src = join(Shape::line({40, 160}, {120, 160}).sample(1.0), Shape::line({120, 160}, {200, 160}).sample(1.0));
  b.add_chain({Shape::line({40, 160}, {120, 160}), Shape::line({120, 160}, {200, 160})}, src, {{0, 80}, {80, 160}});
  Scene s = b.routed();
  RouteOptions o;
  o.ppi = 100;
  route(s, o);
  return s;
}

}  // namespace

TEST_CASE("a later edit keeps the tour: a reversal survives an unrelated merge", "[edit][truth]") {
  const Scene s = row_and_halves();
  const bool was = step_of(s, "p_0003").reverse;
  EditSession rev = edit(s, "ReverseDirection", {{"primitive_ids", {"p_0003"}}});
  REQUIRE(step_of(rev.scene, "p_0003").reverse == !was);
  EditSession merged = edit(rev.scene, "MergePrimitives", {{"primitive_ids", {"p_0006", "p_0007"}}});
  const std::string id = merged.results[0]["new_primitive_id"];
  // The reversed stroke stays reversed, the others keep their order and directions; only the
  // merged line is placed anew.
  CHECK(step_of(merged.scene, "p_0003").reverse == !was);
  CHECK(order_without(merged.scene, {id}) == order_without(rev.scene, {"p_0006", "p_0007"}));
  for (const char* p : {"p_0001", "p_0002", "p_0004", "p_0005"})
    CHECK(step_of(merged.scene, p).reverse == step_of(rev.scene, p).reverse);
  CHECK(merged.scene.tour->size() == rev.scene.tour->size() - 1);
  // The commands are the kept tour's, re-emitted: every one names a primitive of the scene.
  for (const Command& c : *merged.scene.commands)
    if (!c.primitive.empty()) CHECK(c.primitive.find("p_0006") == std::string::npos);
}

TEST_CASE("RerunStage's summary counts what its id lists hold", "[edit][truth]") {
  // Two halves of one straight edge refit as one line; the stroke beside them refits as it was.
  SceneBuilder b(300, 200, 4);
  b.add(Shape::line({20, 30}, {120, 30}));
  Polyline src = join(Shape::line({40, 160}, {120, 160}).sample(1.0), Shape::line({120, 160}, {200, 160}).sample(1.0));
  b.add_chain({Shape::line({40, 160}, {120, 160}), Shape::line({120, 160}, {200, 160})}, src, {{0, 80}, {80, 160}});
  EditSession out = edit(b.routed(), "RerunStage", {{"stage", "vectorize"}});
  const std::string summary = out.results[0]["summary"];
  std::smatch m;
  REQUIRE(std::regex_search(summary, m, std::regex("(\\d+) primitive\\(s\\) replaced by (\\d+)")));
  CHECK(std::stoul(m[1]) == out.removed.size());
  CHECK(std::stoul(m[2]) == out.added.size());
  CHECK(out.removed.size() == 2);
  CHECK(out.added.size() == 1);
}

TEST_CASE("RerunStage route_optimize works on a scene without a source image", "[edit][truth]") {
  SceneBuilder b(300, 200, 4);
  b.add(Shape::line({20, 30}, {120, 30}));
  b.add(Shape::line({20, 80}, {120, 90}));
  Scene s = b.routed();
  s.source.reset();
  s.graph.reset();
  for (auto& p : *s.primitives) p.edge.clear();
  EditSession out = edit(s, "RerunStage", {{"stage", "route_optimize"}});
  // Only what can be measured is reported, every value a number.
  CHECK(out.after.contains("draw_time_s"));
  CHECK_FALSE(out.after.contains("chamfer_px"));
  for (const auto& [k, v] : out.after.items()) CHECK((v.is_number() && std::isfinite(v.get<double>())));
  for (const auto& [k, v] : out.before.items()) CHECK((v.is_number() && std::isfinite(v.get<double>())));
}

TEST_CASE("SnapEndpoints with nothing within the tolerance refuses instead of recording a revision", "[edit][truth]") {
  SceneBuilder b(200, 100, 4);
  b.add(Shape::line({10, 10}, {50, 10}));
  b.add(Shape::line({80, 10}, {120, 40}));
  Error e = refusal(b.routed(), "SnapEndpoints", json::object());
  CHECK(e.code() == Code::no_result);
  CHECK(std::string(e.what()).find("nothing to snap") != std::string::npos);
}

TEST_CASE("SnapEndpoints closes an end-to-interior (T) near miss", "[edit][truth]") {
  SceneBuilder b(200, 120, 4);
  b.add(Shape::line({20, 50}, {180, 50}));
  b.add(Shape::line({100, 51.2}, {100, 100}));  // the stem stops 1.2 px short of the bar
  EditSession out = edit(b.routed(), "SnapEndpoints", json::object());
  const Shape& stem = out.scene.primitive("p_0002")->shape;
  CHECK(dist(stem.p0, {100, 50}) < 1e-9);
  CHECK(stem.p1 == Vec2{100, 100});
  CHECK(out.scene.primitive("p_0001")->shape.p0 == Vec2{20, 50});  // the bar stays
  CHECK(out.results[0]["max_displacement_px"].get<double>() == Approx(1.2));
}

TEST_CASE("DefineRegion refuses to redefine a name unless told to replace it", "[edit][truth]") {
  SceneBuilder b(200, 100, 4);
  b.add(Shape::line({10, 10}, {50, 10}));
  const json rect = {{"kind", "rect"}, {"rect", {0, 0, 60, 60}}}, other = {{"kind", "rect"}, {"rect", {0, 0, 30, 30}}};
  EditSession first = edit(b.scene(), "DefineRegion", {{"name", "corner"}, {"region", rect}});
  Error e = refusal(first.scene, "DefineRegion", {{"name", "corner"}, {"region", other}});
  CHECK(e.code() == Code::invalid_selection);
  CHECK(std::string(e.what()).find("replace") != std::string::npos);
  EditSession again = edit(first.scene, "DefineRegion", {{"name", "corner"}, {"region", other}, {"replace", true}});
  REQUIRE(again.scene.regions.size() == 1);
  CHECK(again.scene.regions[0]["region"] == other);
  CHECK(again.scene.regions[0]["id"] == first.scene.regions[0]["id"]);
}

TEST_CASE("a smoothed primitive is drawn as smoothed, not redrawn straight within the route's deviation", "[edit][truth]") {
  // A line fitted to points that bow 0.2 px: smoothed into the arc they follow, which the
  // route's default deviation (0.25 px) would otherwise draw as the same straight line.
  SceneBuilder b(200, 100, 4);
  const Shape bow = Shape::arc({20, 50}, {120, 50}, 0.004);
  b.add(Shape::line({20, 50}, {120, 50}), bow.sample(1.0));
  const Scene s = b.routed();
  EditSession out = edit(s, "SmoothPrimitive", {{"primitive_id", "p_0001"}, {"strength", "mild"}, {"target_kind", "arc"}});
  REQUIRE(out.scene.primitive("p_0001")->shape.type == PrimType::arc);
  CHECK(out.scene.primitive("p_0001")->route_deviation_px == 0.0);
  bool arc = false;
  for (const Command& c : *out.scene.commands) arc = arc || (c.kind == Command::Kind::arc && c.primitive == "p_0001");
  CHECK(arc);
  CHECK(s.commands->front().kind == Command::Kind::line);
  // The start is free: the robot is placed along the arc, with no turn before it.
  CHECK(out.scene.commands->size() == 1);
}

TEST_CASE("a region's route override holds in the region only, recorded as the region's", "[edit][truth]") {
  // Two identical zig-zags of short kinked lines: one inside the region, one outside.
  SceneBuilder b(400, 200, 4);
  auto zigzag = [&](double x0, double y) {
    for (int k = 0; k < 6; ++k)
      b.add(Shape::line({x0 + 20 * k, y + (k % 2) * 1.5}, {x0 + 20 * (k + 1), y + ((k + 1) % 2) * 1.5}));
  };
  zigzag(20, 50);
  zigzag(20, 150);
  Scene s = b.routed();
  RouteOptions o;
  o.ppi = 100;
  route(s, o);
  const json region = {{"kind", "rect"}, {"rect", {0, 30, 200, 80}}};
  EditSession out = edit(s, "RerunStage", {{"stage", "route_optimize"}, {"region", region},
                                           {"config_overrides", {{"route.deviation_px", 2.0}}}});
  // The drawing's own setting is untouched; the region's is recorded as such.
  CHECK(out.scene.config["route.deviation_px"] == s.config["route.deviation_px"]);
  bool recorded = false;
  for (const auto& [k, v] : out.scene.config.items())
    if (k.rfind("region:", 0) == 0 && k.find("route.deviation_px") != std::string::npos)
      recorded = v["value"] == 2.0 && v["from"] == "user";
  CHECK(recorded);
  // Inside, the kinks are drawn as fewer commands; outside, the commands are the same.
  auto commands_of = [](const Scene& sc, bool inside) {
    size_t n = 0;
    for (const Command& c : *sc.commands)
      if (!c.primitive.empty() && c.kind != Command::Kind::spin) {
        int id = std::stoi(c.primitive.substr(2, 4));
        n += (id <= 6) == inside;
      }
    return n;
  };
  CHECK(commands_of(out.scene, true) < commands_of(s, true));
  CHECK(commands_of(out.scene, false) == commands_of(s, false));
  for (const Primitive& p : *out.scene.primitives)
    CHECK(p.route_deviation_px.has_value() == (std::stoi(p.id.substr(2)) <= 6));
  // A key that shapes the whole tour cannot be set for a region.
  CHECK(refusal(s, "RerunStage", {{"stage", "route_optimize"}, {"region", region},
                                  {"config_overrides", {{"route.snap_px", 2.0}}}})
            .code() == Code::invalid_selection);
}
