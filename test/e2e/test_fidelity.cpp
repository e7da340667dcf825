// Fidelity against the source's ink across tool processes in store mode: a dot the skeleton
// stage drops when re-run with a larger speck area is missed ink, and the ink reference is
// cached in the store for the next process.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/hash.hpp"
#include "core/scene.hpp"
#include "eval/ink_reference.hpp"
#include "eval/score.hpp"
#include "process.hpp"

using namespace svtest;
using nlohmann::json;

TEST_CASE("planted: a dot dropped upstream costs recall and is missed ink at the dot", "[e2e][planted][fidelity]") {
  const auto dir = scratch() / "dot";
  std::filesystem::create_directories(dir);
  auto sh = [&](const std::string& cmd) { return run("cd " + dir.string() + " && " + cmd); };
  auto tool = [&](const std::string& exe, const std::string& args) {
    Run r = sh(bin(exe) + " " + args);
    INFO(args << "\n" << r.err);
    REQUIRE(r.status == 0);
    return json::parse(r.out);
  };
  // The "i" of the info sign: its dot is a blob of about 4 x 4 px at (256.8, 195.5).
  const std::string name = "hand_info-square_w4";
  const sv::Vec2 dot{256.8, 195.5};
  REQUIRE(sh(bin("sv-commit") + " init").status == 0);
  REQUIRE(sh(fmt::format("{} {} | {} | {} | {} > pipeline.json", bin("sv-skeleton"), data(name + ".png"), bin("sv-fit"),
                         bin("sv-route"), bin("sv-simulate")))
              .status == 0);
  const std::string metrics = "--metrics '[\"recall\", \"f1\"]'";
  auto show_head = [&] { return sv::parse_scene(sh(bin("sv-commit") + " show HEAD").out); };
  // Recall unrounded: a dot weighs 1 px of some 1500.
  auto recall = [&](const sv::Scene& s) {
    return sv::score(s, sv::fidelity_reference(s, nullptr).paths, sv::default_tolerance(sv::stroke_width_of(s)), {}).recall;
  };
  auto dots_at = [&](const sv::Scene& s) {
    return std::count_if(s.graph->vertices.begin(), s.graph->vertices.end(),
                         [&](const sv::Vertex& v) { return v.kind == "dot" && sv::dist(v.p, dot) < 3; });
  };
  const sv::Scene start = show_head();
  json before = tool("sv-simulate", "evaluate-revision --rev HEAD " + metrics);
  CHECK(before["reference"] == "the source image's ink centrelines");
  const std::string sha = sv::sha256_hex(slurp(data(name + ".png")));
  CHECK(std::filesystem::exists(dir / ".svrev" / "cache" / ("ink-" + sha + ".json")));
  CHECK(tool("sv-simulate", "evaluate-revision --rev HEAD " + metrics) == before);  // from the cache, the same

  tool("sv-edit", "rerun-stage --rev HEAD --stage skeletonize --config-overrides '{\"skeleton.min_speck_area_px\": 60}'");
  const sv::Scene head = show_head();
  CHECK(dots_at(start) == 1);
  CHECK(dots_at(head) == 0);  // gone from the graph

  json after = tool("sv-simulate", "evaluate-revision --rev HEAD " + metrics);
  CHECK(after["metrics"]["recall"].get<double>() <= before["metrics"]["recall"].get<double>());
  CHECK(recall(head) < recall(start) - 0.0003);
  json cov = tool("sv-diagnose", "analyze-coverage --rev HEAD");
  bool named = false;
  for (const auto& f : cov["findings"])
    named = named || (f["kind"] == "missed_ink" && sv::dist({f["location"][0].get<double>(), f["location"][1].get<double>()}, dot) < 3);
  CHECK(named);
  CHECK(cov["warnings"].empty());
}
