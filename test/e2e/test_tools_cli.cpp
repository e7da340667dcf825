// sv-diagnose as an agent or a person calls it: the catalog listing, requests as options or one
// JSON object, the envelope on stdout, views as PNG files, and the error contract.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/schema.hpp"
#include "process.hpp"
#include "store/store.hpp"
#include "../unit/tools_fixture.hpp"

namespace {

std::string dev_scene_file() {
  static std::string path = [] {
    auto p = svtest::scratch() / "tools-dev.json";
    svtest::spit(p, sv::dump_scene(svtest::dev_drawing().routed()));
    return p.string();
  }();
  return path;
}

std::string diagnose(const std::string& args) { return svtest::bin("sv-diagnose") + " " + args; }

}  // namespace

TEST_CASE("sv-diagnose tools lists every tool it owns with both schemas", "[e2e][tools]") {
  auto r = svtest::run(diagnose("tools"));
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  // 7 inspection + 6 diagnostics + 3 semantic + CompareToReference + 2 suggestion + AskOracle;
  // GetCurrentRender is sv-simulate's
  CHECK(j["count"] == 20);
  REQUIRE(j["tools"].size() == 20);
  for (const auto& t : j["tools"]) {
    CAPTURE(t["name"]);
    CHECK(t["input_schema"]["type"] == "object");
    CHECK(t["output_schema"]["properties"].contains("llm_text"));
    CHECK(!t["description"].get<std::string>().empty());
  }
  // Every executable's tools: 20 here, 5 and ExportDrawing in sv-simulate, 13 mutations +
  // LabelSemanticRoles + SimulateEdit + ApplyEdits in sv-edit, 6 history tools and TraceImage in sv-commit.
  auto all = nlohmann::json::parse(svtest::run(diagnose("tools --all")).out);
  CHECK(all["count"] == 49);
  CHECK(nlohmann::json::parse(svtest::run(svtest::bin("sv-edit") + " tools").out)["count"] == 16);
  CHECK(nlohmann::json::parse(svtest::run(svtest::bin("sv-commit") + " tools").out)["count"] == 7);
  auto man = svtest::run(diagnose("tools --man"));
  CHECK(man.out.find(".TS") == 0);
}

TEST_CASE("sv-diagnose: options from the schema, JSON requests, envelope valid against its schema", "[e2e][tools]") {
  auto r = svtest::run(diagnose("list-primitives --filter.types line --sort-by length_desc --limit 2 --region 10,10,110,110 " +
                                dev_scene_file()));
  REQUIRE(r.status == 0);
  auto env = nlohmann::json::parse(r.out);
  CHECK(env["ok"] == true);
  CHECK(env["primitives"].size() == 2);
  CHECK(env["total_count"] == 4);  // the square's four sides
  auto schema = nlohmann::json::parse(svtest::run(diagnose("list-primitives --schema")).out);
  CHECK(sv::Schema(schema["result"]).first_error(env) == "");
  auto same = svtest::run(diagnose("ListPrimitives --request '{\"filter\": {\"types\": [\"line\"]}, \"sort_by\": "
                                   "\"length_desc\", \"limit\": 2, \"region\": {\"kind\": \"rect\", \"rect\": [10, 10, 110, 110]}}' < " +
                                   dev_scene_file()));
  CHECK(same.out == r.out);
}

TEST_CASE("sv-diagnose: unknown fields exit 2, unknown ids exit 4, with one stderr line", "[e2e][tools]") {
  // Filter mode (a scene file): the line on stderr only; stdout stays empty.
  auto bad = svtest::run(diagnose("list-primitives --limt 3 " + dev_scene_file()));
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("invalid_selection") != std::string::npos);
  CHECK(bad.err.find("limt") != std::string::npos);
  CHECK(svtest::count_lines(bad.err) == 1);
  auto missing = svtest::run(diagnose("get-primitive --id p_9999 " + dev_scene_file()));
  CHECK(missing.status == 4);
  CHECK(missing.out.empty());
  CHECK(missing.err.find("not_found") != std::string::npos);
  auto region = svtest::run(diagnose("check-topology --region p_0001,p_9999 " + dev_scene_file()));
  CHECK(region.status == 4);
  auto other = svtest::run(diagnose("evaluate-revision " + dev_scene_file()));
  CHECK(other.status == 2);  // a tool of sv-simulate
}

TEST_CASE("sv-diagnose writes views: --png, --embed-images, the store's view cache", "[e2e][tools]") {
  auto png = svtest::scratch() / "coverage.png";
  auto r = svtest::run(diagnose("analyze-coverage --png " + png.string() + " " + dev_scene_file()));
  REQUIRE(r.status == 0);
  auto env = nlohmann::json::parse(r.out);
  CHECK(env["images"]["coverage"] == png.string());
  CHECK(svtest::slurp(png).substr(1, 3) == "PNG");
  auto embedded = nlohmann::json::parse(svtest::run(diagnose("get-graph --embed-images " + dev_scene_file())).out);
  CHECK(embedded["images_png_base64"]["graph"].get<std::string>().rfind("iVBORw0KGgo", 0) == 0);

  auto dir = svtest::scratch() / "tools-store";
  std::filesystem::create_directories(dir);
  sv::Store store = sv::Store::init(dir);
  sv::Scene s = svtest::dev_drawing().routed();
  std::string id = store.put_scene(s);
  store.advance_head("", id, "test");
  auto st = svtest::run(diagnose("get-tour --rev HEAD --store " + dir.string()));
  REQUIRE(st.status == 0);
  auto senv = nlohmann::json::parse(st.out);
  CHECK(senv["revision_id"] == id);
  std::string view = senv["images"]["tour"];
  CHECK(view.find(".svrev/views/") != std::string::npos);
  CHECK(std::filesystem::exists(view));
}

TEST_CASE("contract on real drawings: every tool on the pipeline's scene of three dev cases", "[e2e][tools][contract]") {
  for (const std::string name : {"feather_umbrella_w8", "tabler_hexagons_w5", "hand_info-square_w4"}) {
    CAPTURE(name);
    auto scene = svtest::scratch() / (name + ".scene.json");
    auto p = svtest::run(svtest::bin("sv-skeleton") + " --no-store " + svtest::data(name + ".png") + " | " +
                         svtest::bin("sv-fit") + " --no-store | " + svtest::bin("sv-route") + " --no-store | " +
                         svtest::bin("sv-simulate") + " --no-store > " + scene.string());
    REQUIRE(p.status == 0);
    sv::Scene s = sv::parse_scene(svtest::slurp(scene));
    REQUIRE(s.primitives);
    REQUIRE(!s.primitives->empty());
    for (const sv::Tool* tp : svtest::scene_tools()) {
      const sv::Tool& t = *tp;
      CAPTURE(t.name);
      nlohmann::json req = nlohmann::json::object();
      if (t.name == "GetPrimitive") req = {{"id", s.primitives->front().id}};
      if (t.name == "ExplainThreshold") req = {{"primitive_id", s.primitives->front().id}};
      if (t.name == "CompareRevisions") {  // a revision name, never a file: the input's own id
        sv::Scene copy = s;
        req = {{"revision_a", sv::assign_revision_id(copy)}};
      }
      if (t.name == "AskOracle") req = {{"question", "what does it depict?"}};
      if (t.name == "ExportDrawing") req = {{"format", "view"}};
      if (t.executable == "sv-diagnose") {
        auto png = svtest::scratch() / (name + "-" + t.subcommand + ".png");
        auto r = svtest::run(diagnose(t.subcommand + " --request '" + req.dump() + "' --png " + png.string() + " " +
                                      scene.string()));
        REQUIRE(r.status == 0);
        auto env = nlohmann::json::parse(r.out);
        CHECK(sv::Schema(sv::result_schema(t)).first_error(env) == "");
        if (t.name != "GetConfig" && t.name != "AskOracle") CHECK(std::filesystem::exists(png));  // no oracle here
      } else {
        sv::ToolResult out;
        auto env = svtest::run(t.name, s, req, &out);
        CHECK(sv::Schema(sv::result_schema(t)).first_error(env) == "");
        CHECK(!out.images.empty());
      }
    }
  }
}

TEST_CASE("RobotSimulate: the firmware's steps add up to sv-simulate's time; a planted 359 degree spin is the long way",
          "[e2e][tools]") {
  using svtest::bin;
  using svtest::run;
  const auto dir = svtest::scratch() / "robot-simulate";
  std::filesystem::create_directories(dir);
  const std::string simulated = (dir / "simulated.json").string(), view = (dir / "robot.png").string();
  REQUIRE(run(bin("sv-simulate") + " --no-store " + dev_scene_file() + " > " + simulated).status == 0);
  sv::Scene s = sv::parse_scene(svtest::slurp(simulated));
  auto r = run(bin("sv-simulate") + " robot-simulate --no-store --return-trace --png " + view + " " + simulated);
  REQUIRE(r.status == 0);
  auto env = nlohmann::json::parse(r.out);
  CHECK(env["ok"] == true);
  const double total = env["total_time_ms"].get<double>();
  CHECK(total == Approx(s.metrics["draw_time_s"].get<double>() * 1000).margin(1e-3));
  CHECK(total > 0);
  const auto& steps = env["steps"];
  REQUIRE(steps.size() == s.simulation->steps.size());
  double sum = 0;
  for (const auto& st : steps) {
    sum += st["duration_ms"].get<double>();
    if (st["op"] != "pen_up" && st["op"] != "pen_down") CHECK(st["trace"].size() >= 2);
  }
  CHECK(sum == Approx(total).margin(1e-3 * steps.size()));  // each rounded to the microsecond
  CHECK(std::filesystem::file_size(view) > 0);
  CHECK(env["llm_text"].get<std::string>().find("spin") != std::string::npos);

  // The same drawing with a 359 degree spin planted first: one step says the robot goes the long way.
  sv::Command spin;
  spin.kind = sv::Command::Kind::spin;
  spin.degrees = 359;
  s.commands->insert(s.commands->begin(), spin);
  const std::string planted = (dir / "planted.json").string();
  svtest::spit(planted, sv::dump_scene(s));
  r = run(bin("sv-simulate") + " robot-simulate --no-store " + planted);
  REQUIRE(r.status == 0);
  env = nlohmann::json::parse(r.out);
  int long_way = 0;
  for (const auto& st : env["steps"])
    if (st["notes"].dump().find("the robot turns the long way") != std::string::npos) {
      ++long_way;
      CHECK(st["op"] == "spin");
      CHECK(st["notes"].dump().find("359.0°") != std::string::npos);
      CHECK(st["primitive_id"].is_null());
      const double turned = st["end_pose"][2].get<double>() - st["start_pose"][2].get<double>();
      CHECK(std::fmod(turned + 720, 360) == Approx(359).margin(1e-3));
    }
  CHECK(long_way == 1);
  CHECK(env["steps"][0].contains("trace") == false);  // only when asked
}
