// The tool registry as a whole (contract over every tool), the request plumbing, the views'
// labelled grid, and planted defects each found by the right tool at the right place.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "error_code.hpp"
#include "cli/shell.hpp"
#include "cli/tool_shell.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <unistd.h>
#include <opencv2/imgproc.hpp>

#include "core/error.hpp"
#include "core/schema.hpp"
#include "edit/edit.hpp"
#include "tools/edit_session.hpp"
#include "tools/region.hpp"
#include "tools/schema_parts.hpp"
#include "render/figure.hpp"
#include "fit/fit.hpp"
#include "graph/skeletonize.hpp"
#include "skeleton_drawing.hpp"
#include "tools_fixture.hpp"

using namespace svtest;

namespace {


// A request every tool accepts on `s`: its required fields filled from the scene.
json minimal_request(const Tool& t, const Scene& s) {
  std::string first = s.primitives && !s.primitives->empty() ? s.primitives->front().id : "p_0001";
  if (t.name == "GetPrimitive") return {{"id", first}};
  // A revision is named, never a file: without a store, the scene's own id names it.
  if (t.name == "CompareRevisions") {
    Scene copy = s;
    return {{"revision_a", assign_revision_id(copy)}};
  }
  if (t.name == "AskOracle") return {{"question", "what does it depict?"}};
  if (t.name == "ExportDrawing") return {{"format", "view"}};
  if (t.name == "ExplainThreshold")
    return s.primitives && !s.primitives->empty() ? json{{"primitive_id", first}}
                                                  : json{{"region", {{"kind", "rect"}, {"rect", {0, 0, 50, 50}}}}};
  return json::object();
}

std::vector<json> findings_bigger_than_minor(const json& env) {
  std::vector<json> out;
  for (const auto& f : env["findings"])
    if (f["severity"] != "minor") out.push_back(f);
  return out;
}

double dist_to(const json& pt, Vec2 q) { return dist({pt[0].get<double>(), pt[1].get<double>()}, q); }

}  // namespace

TEST_CASE("every registered tool is one complete entry", "[tools]") {
  std::set<std::string> names, subcommands;
  std::set<int> numbers;
  int previous = 0;
  for (const auto& t : registry()) {
    CAPTURE(t.name);
    CHECK(names.insert(t.name).second);
    // Each entry carries its own place: the catalog's 46, then sv's own (47 ApplyEdits, 48
    // TraceImage, 49 ExportDrawing); the registry lists them by it.
    CHECK(numbers.insert(t.number).second);
    CHECK((t.number >= 1 && t.number <= 49));
    CHECK(t.number > previous);
    previous = t.number;
    CHECK(subcommands.insert(t.subcommand).second);
    CHECK(!t.summary.empty());
    CHECK(t.run);
    CHECK((t.executable == "sv-diagnose" || t.executable == "sv-simulate" || t.executable == "sv-edit" ||
           t.executable == "sv-commit"));
    // Read tools are scoped by a region; edits are dry-run-able and carry a note.
    if (t.kind == ToolKind::read) CHECK(request_schema(t)["properties"].contains("region"));
    if (t.kind == ToolKind::edit) {
      CHECK(t.executable == "sv-edit");
      CHECK(request_schema(t)["properties"]["dry_run"]["default"] == false);
      CHECK(request_schema(t)["properties"].contains("note"));
      CHECK(result_schema(t)["properties"].contains("parent_revision_id"));
    }
    if (t.kind == ToolKind::store) CHECK(t.executable == "sv-commit");
    CHECK(result_schema(t)["required"].size() >= 6);
    CHECK(find_tool(t.name) == &t);
    CHECK(find_tool(t.subcommand) == &t);
  }
  // DESIGN §4: 8 inspection, 6 diagnostics, 3 semantic and CompareToReference, 2 suggestion, 5
  // evaluation and GetCurrentRender in sv-diagnose and sv-simulate.
  // ExportDrawing is sv-simulate's too.
  CHECK(scene_tools().size() == 26);
  CHECK(tools_of("sv-diagnose").size() == 20);
  CHECK(tools_of("sv-simulate").size() == 6);
  CHECK(find_tool("render")->name == "GetCurrentRender");
  CHECK(kebab_case("IdentifyExpensiveOperations") == "identify-expensive-operations");
  CHECK(tools_listing("sv-diagnose")["count"] == 20);
  CHECK(man_table("sv-diagnose").find("list-primitives|ListPrimitives") != std::string::npos);
}

namespace {

// The fields of a schema without a one-line description: its properties and array items,
// recursively (through anyOf branches and an object's additionalProperties too), by path.
void undescribed(const json& s, const std::string& path, bool field, std::vector<std::string>& out) {
  if (!s.is_object()) return;
  const std::string doc = s.value("description", "");
  if (field && (doc.empty() || doc.find('\n') != std::string::npos)) out.push_back(path);
  if (s.contains("properties"))
    for (const auto& [k, v] : s["properties"].items()) undescribed(v, path + "." + k, true, out);
  if (s.contains("items")) {
    if (s["items"].is_array())
      for (size_t i = 0; i < s["items"].size(); ++i) undescribed(s["items"][i], path + fmt::format("[{}]", i), true, out);
    else
      undescribed(s["items"], path + "[]", true, out);
  }
  if (s.contains("anyOf"))
    for (const auto& v : s["anyOf"]) undescribed(v, path, false, out);
  if (s.contains("additionalProperties")) undescribed(s["additionalProperties"], path + ".*", false, out);
}

}  // namespace

TEST_CASE("contract: every request and result field of every tool has a one-line description", "[tools][contract]") {
  std::vector<std::string> missing;
  for (const Tool& t : registry()) {
    undescribed(request_schema(t), t.name + " request", false, missing);
    undescribed(result_schema(t), t.name + " result", false, missing);
  }
  undescribed(error_envelope_schema(), "error envelope", false, missing);
  INFO(fmt::format("{}", fmt::join(missing, "\n")));
  CHECK(missing.empty());
  // The check finds a gap where there is one: an item, a member, a description of two lines.
  std::vector<std::string> planted;
  undescribed(schema::object({{"a", schema::array(schema::string(""), "a list")},
                              {"b", schema::object({{"c", schema::number("one\ntwo")}}, {}, "an object")}}),
              "planted", false, planted);
  CHECK(planted == std::vector<std::string>{"planted.a[]", "planted.b.c"});
}

TEST_CASE("contract: every tool on an empty, a one-primitive and a full scene", "[tools][contract]") {
  SceneBuilder one(100, 80, 3);
  one.add(Shape::line({10, 40}, {90, 40}));
  const std::vector<std::pair<std::string, Scene>> scenes = {
      {"empty", Scene{}}, {"one", one.routed()}, {"full", dev_drawing().routed()}};
  for (const auto& entry : scenes) {
    const auto& label = entry.first;  // named, not bound: clang 14 captures no binding
    const auto& s = entry.second;
    for (const Tool* tp : scene_tools()) {
      const Tool& t = *tp;
      CAPTURE(label, t.name);
      json req = minimal_request(t, s);
      if (label == "empty" && t.name == "GetPrimitive") {
        CHECK(code_of([&] { run(t.name, s, req); }) == Code::not_found);
        continue;
      }
      if (label == "empty" && t.name == "ExportDrawing") {  // as sv-simulate, it needs the commands
        CHECK(code_of([&] { run(t.name, s, req); }) == Code::invalid_scene);
        continue;
      }
      ToolResult r;
      json env = run(t.name, s, req, &r);
      CHECK(Schema(result_schema(t)).first_error(env) == "");
      CHECK(env["ok"] == true);
      CHECK(env["tool"] == t.name);
      CHECK(!env["llm_text"].get<std::string>().empty());
      // Deterministic: the same call gives the same envelope.
      CHECK(run(t.name, s, req) == env);
      // Spatial tools draw a picture whenever there is something to draw (AskOracle shows
      // nothing when no oracle is configured, as here).
      if (label == "full" && t.name != "GetConfig" && t.name != "AskOracle") CHECK(!r.images.empty());
    }
  }
}

TEST_CASE("contract: every tool refuses an unknown id with not_found", "[tools][contract]") {
  Scene s = dev_drawing().routed();
  for (const Tool* tp : scene_tools()) {
    const Tool& t = *tp;
    CAPTURE(t.name);
    json req = minimal_request(t, s);
    req["region"] = {{"kind", "primitive_set"}, {"primitive_ids", {"p_9999"}}};
    CHECK(code_of([&] { run(t.name, s, req); }) == Code::not_found);
    req["region"] = {{"kind", "named"}, {"name", "nowhere"}};
    CHECK(code_of([&] { run(t.name, s, req); }) == Code::not_found);
    req["region"] = {{"kind", "vertex_neighborhood"}, {"vertex_id", "v_9999"}};
    CHECK(code_of([&] { run(t.name, s, req); }) == Code::not_found);
  }
  CHECK(code_of([&] { run("GetPrimitive", s, {{"id", "p_9999"}}); }) == Code::not_found);
  CHECK(code_of([&] { run("ExplainThreshold", s, {{"primitive_id", "p_9999"}}); }) == Code::not_found);
  CHECK(code_of([&] { run("CompareRevisions", s, {{"revision_a", "no-such-revision"}}); }) == Code::not_found);
}

TEST_CASE("requests: unknown fields and bad values are refused naming the field", "[tools]") {
  const Tool& t = *find_tool("ListPrimitives");
  try {
    normalize_request(t, {{"limt", 5}});
    FAIL("accepted an unknown field");
  } catch (const Error& e) {
    CHECK(e.code() == Code::invalid_selection);
    CHECK(std::string(e.what()).find("'limt'") != std::string::npos);
  }
  CHECK(code_of([&] { normalize_request(t, {{"limit", -1}}); }) == Code::invalid_selection);
  CHECK(code_of([&] { normalize_request(t, {{"filter", {{"types", {"spline"}}}}}); }) == Code::invalid_selection);
  json filled = normalize_request(t, json::object());
  CHECK(filled["limit"] == 200);
  CHECK(filled["sort_by"] == "draw_order");
  CHECK(region_from_shorthand("10,20,30,40")["rect"] == json({10, 20, 30, 40}));
  CHECK(region_from_shorthand("p_0001,p_0002")["primitive_ids"].size() == 2);
  CHECK(region_from_shorthand("v_0003:12")["radius_px"] == 12);
  CHECK(region_from_shorthand("left_eye")["kind"] == "named");
}

TEST_CASE("requests: tuple fields are checked position by position, roles against the scene schema", "[tools]") {
  // A role outside the scene schema once passed the request check and became a revision that
  // no read could parse (list-revisions failed from then on).
  const Tool& label = *find_tool("LabelSemanticRoles");
  const json roles = scene_schema().root()["definitions"]["primitive"]["properties"]["semantic_role"]["enum"];
  CHECK(request_schema(label)["properties"]["assignments"]["items"]["items"][1]["enum"] == roles);
  try {
    normalize_request(label, {{"assignments", json::array({json::array({"p_0013", "expressive"})})}});
    FAIL("accepted an unknown role");
  } catch (const Error& e) {
    CHECK(e.code() == Code::invalid_selection);
    CHECK(std::string(e.what()).find("/assignments/0/1") != std::string::npos);
  }
  CHECK(code_of([&] { normalize_request(label, {{"assignments", json::array({json::array({"p_0013", "frame", "extra"})})}}); }) == Code::invalid_selection);
  CHECK(code_of([&] { normalize_request(label, {{"assignments", json::array({json::array({"frame", "p_0013"})})}}); }) == Code::invalid_selection);
  CHECK(normalize_request(label, {{"assignments", json::array({json::array({"p_0013", "frame"})})}})["assignments"][0][1] == "frame");
  const Tool& reorder = *find_tool("ReorderTour");
  CHECK(code_of([&] { normalize_request(reorder, {{"full_order", json::array({json::array({"p_0001", "backwards"})})}}); }) == Code::invalid_selection);
  CHECK(code_of([&] { normalize_request(reorder, {{"pinned_positions", json::array({json::array({-1, "p_0001", "forward"})})}}); }) ==
        Code::invalid_selection);
  // In-process callers get the same check: run_tool and apply_edits validate too.
  Scene s = dev_drawing().routed();
  ToolResult r;
  ToolContext ctx{s, nullptr, "0"};
  CHECK(code_of([&] { run_tool(*find_tool("ListPrimitives"), ctx, {{"limit", -1}}, r); }) == Code::invalid_selection);
  const std::vector<EditStep> steps = {
      EditStep{&label, json{{"assignments", json::array({json::array({"p_0001", "expressive"})})}}}};
  CHECK(code_of([&] { apply_edits(ctx, steps); }) == Code::invalid_selection);
}

TEST_CASE("regions scope every finding; named regions come from the scene", "[tools]") {
  Scene s = dev_drawing().routed();
  s.regions.push_back({{"name", "lower_lines"}, {"region", {{"kind", "rect"}, {"rect", {10, 130, 110, 180}}}}});
  json env = run("ListPrimitives", s, {{"region", {{"kind", "named"}, {"name", "lower_lines"}}}});
  std::vector<std::string> ids;
  for (const auto& p : env["primitives"]) ids.push_back(p["id"]);
  CHECK(ids == std::vector<std::string>{"p_0007", "p_0008"});
  json v = run("GetGraph", s, {{"in_region", {{"kind", "vertex_neighborhood"}, {"vertex_id", "v_0001"}, {"radius_px", 5}}}});
  CHECK(v["vertices"].size() == 1);
}

TEST_CASE("a 200-primitive listing fits in a few kilobytes", "[tools]") {
  SceneBuilder b(1000, 1000, 4);
  for (int i = 0; i < 200; ++i) {
    double x = 20 + (i % 20) * 48, y = 20 + (i / 20) * 95;
    if (i % 3 == 0) b.add(Shape::arc({x, y}, {x + 40, y + 30}, 0.3));
    else b.add(Shape::line({x, y}, {x + 40, y + 30}));
  }
  json env = run("ListPrimitives", b.routed());
  CHECK(env["primitives"].size() == 200);
  CHECK(env["llm_text"].get<std::string>().size() < 8192);
}

TEST_CASE("ids left out of a crowded view are named in the warnings", "[tools][view][labels]") {
  SceneBuilder b(512, 160, 3);
  for (int i = 0; i < 100; ++i) {
    const Vec2 a{20.0 + (i % 20) * 24, 20.0 + (i / 20) * 28};
    b.add(Shape::line(a, a + Vec2{10, 10}));
  }
  auto left_out = [](const json& env) {
    for (const auto& w : env["warnings"])
      if (w.get<std::string>().find("ids left out where they would overlap") != std::string::npos) return w.get<std::string>();
    return std::string();
  };
  const std::string said = left_out(run("ListPrimitives", b.routed()));
  CHECK(std::regex_match(said, std::regex("[1-9][0-9]? of 100 ids left out .*")));
  CHECK(left_out(run("GetCurrentRender", b.routed(), {{"show_ids", true}})) == said);
  // Without ids, or where they all fit, nothing is said.
  CHECK(left_out(run("GetCurrentRender", b.routed())).empty());
  CHECK(left_out(run("ListPrimitives", b.routed(), {{"limit", 5}})).empty());
}

TEST_CASE("grid labels sit at the pixel coordinates they name", "[tools][view]") {
  BBox area;
  area.add({-0.5, -0.5});
  area.add({239.5, 199.5});
  View v(area, "grid", 720);
  // One black source pixel at column 100, row 50, and a red dot at image point (150, 100).
  cv::Mat gray(200, 240, CV_8UC1, cv::Scalar(255));
  gray.at<uchar>(50, 100) = 0;
  v.underlay(gray, {0, 0, 0});
  v.dot({150, 100}, {0, 0, 255}, 3);
  cv::Mat img = v.finish();
  const ViewTransform& t = v.transform();
  REQUIRE(v.grid_step() == 50);
  REQUIRE(v.labels().size() == 2 * 5 + 2 * 4);  // x 0..200 (5) on top and bottom, y 0..150 (4) left and right
  for (const auto& l : v.labels()) {
    CAPTURE(l.value, l.edge);
    Vec2 back = t.to_image(l.anchor);
    double named = l.axis == 'x' ? back.x : back.y;
    CHECK(std::abs(named - l.value) <= 0.5 / t.scale + 1e-9);  // a 1-px line sits within half a view pixel
    cv::Point2d c(l.box.x + l.box.width / 2.0, l.box.y + l.box.height / 2.0);
    if (l.axis == 'x') CHECK(std::abs(c.x - l.anchor.x) <= 1.5);
    else CHECK(std::abs(c.y - l.anchor.y) <= 3);
    // The text lies outside the plot, on its edge's side.
    if (l.edge == "top") CHECK(l.box.y + l.box.height <= t.margin);
    if (l.edge == "left") CHECK(l.box.x + l.box.width <= t.margin);
  }
  auto anchor = [&](double value, char axis) {
    for (const auto& l : v.labels())
      if (l.value == value && l.axis == axis) return l.anchor;
    FAIL("no label " << value);
    return cv::Point2d();
  };
  // The source pixel (100, 50) is drawn where the lines labelled x=100 and y=50 cross.
  cv::Point2d px(anchor(100, 'x').x, anchor(50, 'y').y);
  int n = 0;
  cv::Point2d sum;
  for (int y = t.margin; y < t.margin + t.area.height; ++y)
    for (int x = t.margin; x < t.margin + t.area.width; ++x) {
      auto p = img.at<cv::Vec3b>(y, x);
      if (p[0] < 20 && p[1] < 20 && p[2] < 20) sum += cv::Point2d(x, y), ++n;
    }
  REQUIRE(n > 0);
  CHECK(std::abs(sum.x / n - px.x) <= 1.0);
  CHECK(std::abs(sum.y / n - px.y) <= 1.0);
  // The red dot at (150, 100) is centred where x=150 and y=100 cross.
  cv::Mat red;
  cv::inRange(img, cv::Scalar(0, 0, 200), cv::Scalar(80, 80, 255), red);
  cv::Moments m = cv::moments(red, true);
  REQUIRE(m.m00 > 0);
  CHECK(std::abs(m.m10 / m.m00 - anchor(150, 'x').x) <= 1.0);
  CHECK(std::abs(m.m01 / m.m00 - anchor(100, 'y').y) <= 1.0);
}

TEST_CASE("grid steps are round and about 100 view pixels apart (the renderer's rule)", "[tools][view]") {
  CHECK(grid_step_for(1.0) == 100);
  CHECK(grid_step_for(3.0) == 50);
  CHECK(grid_step_for(0.5) == 200);
  CHECK(grid_step_for(12.0) == 10);
}

// ---------------------------------------------------------------- planted defects

TEST_CASE("planted: a deleted primitive is missed ink at its place", "[tools][planted]") {
  SceneBuilder b = dev_drawing();
  json clean = run("AnalyzeCoverage", b.routed());
  CHECK(findings_bigger_than_minor(clean).empty());
  CHECK(clean["f1"].get<double>() > 0.99);
  auto& ps = *b.scene().primitives;
  ps.erase(std::remove_if(ps.begin(), ps.end(), [](const Primitive& p) { return p.id == "p_0007"; }), ps.end());
  json env = run("AnalyzeCoverage", b.routed());
  auto big = findings_bigger_than_minor(env);
  REQUIRE(big.size() == 1);
  CHECK(big[0]["kind"] == "missed_ink");
  CHECK(big[0]["severity"] == "severe");
  CHECK(dist_to(big[0]["location"], {60, 140}) < 3);
  CHECK(big[0]["length_px"].get<double>() == Approx(80).margin(6));
  CHECK(env["recall"].get<double>() < 0.95);
  CHECK(env["precision"].get<double>() > 0.99);
}

TEST_CASE("planted: a primitive shifted by three stroke widths is spurious and missed ink", "[tools][planted]") {
  SceneBuilder b = dev_drawing();
  for (auto& p : *b.scene().primitives)
    if (p.id == "p_0007") p.shape = Shape::line({20, 152}, {100, 152});  // 3 x 4 px down
  json env = run("AnalyzeCoverage", b.routed());
  auto big = findings_bigger_than_minor(env);
  REQUIRE(big.size() == 2);
  std::map<std::string, json> by_kind;
  for (const auto& f : big) by_kind[f["kind"]] = f;
  REQUIRE(by_kind.count("missed_ink"));
  REQUIRE(by_kind.count("spurious_ink"));
  CHECK(dist_to(by_kind["missed_ink"]["location"], {60, 140}) < 3);
  CHECK(dist_to(by_kind["spurious_ink"]["location"], {60, 152}) < 3);
  CHECK(by_kind["spurious_ink"]["nearest_primitive_id"] == "p_0007");
  CHECK(by_kind["missed_ink"]["nearest_primitive_id"] == "p_0007");
}

TEST_CASE("planted: a broken loop is found where it opens", "[tools][planted]") {
  SceneBuilder b = dev_drawing();
  CHECK(run("CheckTopology", b.routed())["findings"].empty());
  // The circle at (170, 60), r 30 becomes an arc from 12 to 348 degrees: open at angle 0.
  Vec2 c{170, 60};
  Shape arc = Shape::arc(c + from_angle(deg2rad(12)) * 30, c + from_angle(deg2rad(348)) * 30, std::tan(deg2rad(336) / 4));
  for (auto& p : *b.scene().primitives)
    if (p.id == "p_0005") p.shape = arc;
  json env = run("CheckTopology", b.routed());
  REQUIRE(env["findings"].size() == 1);
  const json& f = env["findings"][0];
  CHECK(f["kind"] == "broken_loop");
  CHECK(f["primitive_ids"] == json({"p_0005"}));
  CHECK(dist_to(f["location"], {200, 60}) < 2);
  CHECK(f["gap_px"].get<double>() == Approx(60 * std::sin(deg2rad(12))).margin(0.5));
}

TEST_CASE("planted: a line tilted 3 degrees off its parallel is found", "[tools][planted]") {
  SceneBuilder b = dev_drawing();
  CHECK(run("CheckForConsistency", b.routed())["findings"].empty());
  const double a = deg2rad(3);
  for (auto& p : *b.scene().primitives)
    if (p.id == "p_0008") p.shape = Shape::line({60 - 40 * std::cos(a), 170 - 40 * std::sin(a)}, {60 + 40 * std::cos(a), 170 + 40 * std::sin(a)});
  json env = run("CheckForConsistency", b.routed());
  REQUIRE(!env["findings"].empty());
  bool pair_found = false;
  for (const auto& f : env["findings"]) {
    CAPTURE(f.dump());
    // Every finding is about the tilted line, 3 degrees off (horizontal or vertical peers).
    CHECK(std::find(f["primitive_ids"].begin(), f["primitive_ids"].end(), "p_0008") != f["primitive_ids"].end());
    CHECK(f["deviation"].get<double>() == Approx(3).margin(0.01));
    if (f["relation"] == "parallel" && f["primitive_ids"] == json({"p_0007", "p_0008"})) {
      pair_found = true;
      CHECK(dist_to(f["location"], {60, 155}) < 1);
      CHECK(f["suggested_action"] == "snap_exact");
    }
  }
  CHECK(pair_found);
}

TEST_CASE("planted: tremor along a line is likely noise, the rest signal", "[tools][planted]") {
  SceneBuilder b = dev_drawing();
  // A line from (125, 115) to (221, 115) drawn with a 1 px shake every 6 px; the fit followed it.
  Polyline zig, src;
  for (int k = 0; k <= 16; ++k) zig.push_back({125.0 + 6 * k, 115.0 + (k % 2 ? 1.0 : -1.0)});
  std::vector<Shape> pieces;
  std::vector<std::pair<int, int>> spans;
  for (size_t k = 1; k < zig.size(); ++k) {
    pieces.push_back(Shape::line(zig[k - 1], zig[k]));
    int start = static_cast<int>(src.size()) - (src.empty() ? 0 : 1);
    for (int j = src.empty() ? 0 : 1; j <= 6; ++j) src.push_back(zig[k - 1] + (zig[k] - zig[k - 1]) * (j / 6.0));
    spans.push_back({start, static_cast<int>(src.size()) - 1});
  }
  auto tremor = b.add_chain(pieces, src, spans);
  json env = run("IdentifyNoise", b.routed());
  std::set<std::string> noisy;
  for (const auto& v : env["verdicts"]) {
    if (v["verdict"] == "likely_noise") {
      noisy.insert(v["primitive_id"]);
      CHECK(v["proposed_action"] == "smooth");
      CHECK(v["evidence"].size() == 3);
    } else {
      CHECK(v["verdict"] == "likely_signal");
    }
  }
  CHECK(noisy == std::set<std::string>(tremor.begin(), tremor.end()));
  CHECK(env["counts"]["likely_signal"] == 8);
}

TEST_CASE("planted: a reversed circle forces a 180 degree spin, named with its primitives", "[tools][planted]") {
  SceneBuilder b(200, 200, 4);
  // A quarter arc arriving at (100, 100) heading east (an arc cannot be driven backwards), then a
  // circle entered at its top, (100, 100), at 270 degrees: tangent forwards, opposite reversed.
  b.add(Shape::arc({60, 60}, {100, 100}, std::tan(deg2rad(-90) / 4)));
  b.add(Shape::circle({100, 140}, 40));
  json kinds = {{"kinds", {"spin"}}};
  json good = run("IdentifyExpensiveOperations", b.routed({}, 270), kinds);
  for (const auto& op : good["operations"]) CHECK(op["magnitude"].get<double>() < 5);
  json env = run("IdentifyExpensiveOperations", b.routed({"p_0002"}, 270), kinds);
  REQUIRE(!env["operations"].empty());
  const json& top = env["operations"][0];
  CHECK(top["kind"] == "spin");
  CHECK(top["magnitude"].get<double>() == Approx(180).margin(1));
  CHECK(top["after_primitive_id"] == "p_0001");
  CHECK(top["before_primitive_id"] == "p_0002");
  CHECK(dist_to(top["location"], {100, 100}) < 0.5);
  for (size_t i = 1; i < env["operations"].size(); ++i) CHECK(env["operations"][i]["magnitude"].get<double>() < 5);
}

TEST_CASE("the man pages' tool tables are the registry's", "[tools]") {
  for (const std::string exe : {"sv-diagnose", "sv-edit", "sv-simulate", "sv-commit"}) {
    CAPTURE(exe);
    std::ifstream in(std::string(SV_TEST_DATA) + "/../../man/" + exe + ".1");
    std::stringstream page;
    page << in.rdbuf();
    CHECK(page.str().find(man_table(exe)) != std::string::npos);
    CHECK(page.str().find(man_common_options(exe)) != std::string::npos);
  }
}

// A parameter the documentation names that no stage declares is a command that fails as printed
// (sv-skeleton(1) once gave `--set graph.spur_length_px=12`).
TEST_CASE("every stage parameter the man pages and the README name is declared", "[tools][params]") {
  const std::string root = std::string(SV_TEST_DATA) + "/../../";
  std::vector<std::string> docs = {root + "README.md", root + "man/sv.7"};
  for (const auto& f : std::filesystem::directory_iterator(root + "man"))
    if (f.path().extension() == ".1") docs.push_back(f.path().string());
  const std::regex key(R"(\b(skeleton|graph|fit|route)\.[a-z][a-z_0-9]*[a-z0-9]\b)");
  int named = 0;
  for (const std::string& doc : docs) {
    std::ifstream in(doc);
    std::stringstream text;
    text << in.rdbuf();
    const std::string t = text.str();
    REQUIRE(!t.empty());
    for (std::sregex_iterator m(t.begin(), t.end(), key), end; m != end; ++m) {
      const std::string k = m->str();
      if (k == "graph.json") continue;  // a file name in an example
      CAPTURE(doc, k);
      CHECK(sv::find_stage_param(k) != nullptr);
      ++named;
    }
  }
  CHECK(named > 20);
}

TEST_CASE("GetConfig explains each setting with its stage's declaration: doc and unit", "[tools][params]") {
  Scene s = dev_drawing().routed();
  s.config["old.retired_px"] = {{"value", 1}, {"from", "default"}, {"doc", "a key no stage declares any more"}};
  json env = run("GetConfig", s);
  std::map<std::string, json> by_key;
  for (const auto& e : env["entries"]) by_key[e["key"].get<std::string>()] = e;
  REQUIRE(by_key.count("route.snap_px"));
  CHECK(by_key["route.snap_px"]["unit"] == "px");
  CHECK(by_key["route.snap_px"]["doc"] == route_param_table().at("route.snap_px").doc);
  CHECK(by_key["route.pen_time_s"]["unit"] == "s");
  CHECK(by_key["old.retired_px"]["doc"] == "a key no stage declares any more");
  CHECK(by_key["old.retired_px"]["unit"] == "");
}

TEST_CASE("ExplainThreshold names the touch that kept two circles whole", "[tools][junction]") {
  // An 8: circles of radius 50 and 40 touching, 8 px strokes.
  const Vec2 c{130, 130};
  Scene s;
  skeletonize(s, test::Sketch(300, 300).circle(c, 50, 8).circle(c + Vec2{0.6, 0.8} * 90, 40, 8).image(), {});
  s.source->path = "t.png";
  s.source->sha256 = std::string(64, '0');
  fit(s, {});
  REQUIRE(s.primitives->size() == 2);
  const json why = run("ExplainThreshold", s, {{"primitive_id", s.primitives->front().id}});
  const json* touch = nullptr;
  for (const json& e : why["relevant_thresholds"])
    if (e["key"] == "graph.circle_touch_px") touch = &e;
  REQUIRE(touch);
  CHECK((*touch)["measured"].get<double>() <= (*touch)["value"].get<double>());
  CHECK((*touch)["outcome"].get<std::string>().find("touches " + s.primitives->back().id) != std::string::npos);
}
