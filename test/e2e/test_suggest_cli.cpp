// Suggestions across processes, as an agent uses them: every candidate SuggestOptimizations
// prints for the test drawings runs as printed (its `command`, given the scene) and its dry run
// reports exactly the predicted scoreboard; sv-edit refine in a store leaves one revision per
// step, each with its note, and stays within its budget.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "process.hpp"

using namespace svtest;
using nlohmann::json;

namespace {

const char* kDrawings[] = {"feather_shopping-cart_w5", "hand_circle-pause_w10", "hand_info-square_w4", "hanzi_u5165",
                           "hershey_futural_02_w4",    "hershey_scripts_09_w6", "lucide_milestone_w3", "photo_lucide_playing-card_w3",
                           "tabler_circle-letter-x_w8", "tabler_hexagons_w5"};

std::string pipeline(const std::string& name, const std::filesystem::path& out) {
  return fmt::format("{} --no-store {} | {} --no-store | {} --no-store > {}", bin("sv-skeleton"), data(name + ".png"),
                     bin("sv-fit"), bin("sv-route"), out.string());
}

}  // namespace

TEST_CASE("every printed suggestion runs as printed and its dry run gives the prediction", "[e2e][suggest]") {
  const auto dir = scratch() / "suggest";
  std::filesystem::create_directories(dir);
  int checked = 0;
  for (const char* name : kDrawings) {
    const auto scene = dir / (std::string(name) + ".json");
    REQUIRE(run(pipeline(name, scene)).status == 0);
    Run s = run(fmt::format("{} suggest-optimizations --no-store {}", bin("sv-diagnose"), scene.string()));
    INFO(name << "\n" << s.err);
    REQUIRE(s.status == 0);
    const json cands = json::parse(s.out)["candidates"];
    for (const json& c : cands) {
      // The command as printed, with the binaries of this build first on PATH.
      const std::string cmd = c["request"]["command"];
      Run a = run(fmt::format("PATH={}:$PATH {} --dry-run --no-store {}", SV_BIN_DIR, cmd, scene.string()));
      INFO(cmd << "\n" << a.err);
      REQUIRE(a.status == 0);
      CHECK(json::parse(a.out)["after"] == c["predicted_after"]);
      ++checked;
    }
  }
  CHECK(checked > 0);
}

TEST_CASE("sv-edit refine records each step as a revision with its note, within the budget", "[e2e][suggest]") {
  const auto dir = scratch() / "refine";
  std::filesystem::create_directories(dir);
  auto sh = [&](const std::string& cmd) { return run("cd " + dir.string() + " && " + cmd); };
  REQUIRE(sh(bin("sv-commit") + " init").status == 0);
  // The stages record each result in the store; HEAD is the routed scene.
  REQUIRE(sh(fmt::format("{} {} | {} | {} > /dev/null", bin("sv-skeleton"), data("hershey_futural_02_w4.png"), bin("sv-fit"),
                         bin("sv-route")))
              .status == 0);
  // A budget wide enough for steps on this drawing (the default takes none here).
  Run r = sh(bin("sv-edit") + " refine --rev HEAD --json --max-f1-1px-loss 0.3 --max-chamfer-gain 100");
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json out = json::parse(r.out);
  const json& steps = out["steps"];
  REQUIRE(!steps.empty());
  CHECK(out["after"]["draw_time_s"].get<double>() < out["before"]["draw_time_s"].get<double>());
  CHECK(out["before"]["f1"].get<double>() - out["after"]["f1"].get<double>() <= 0.005 + 1e-9);
  CHECK(out["before"]["f1_1px"].get<double>() - out["after"]["f1_1px"].get<double>() <= 0.3 + 1e-9);
  // One revision per step, newest first in the log, each noting its step.
  const json log = json::parse(sh(bin("sv-commit") + " log --json").out);
  const json& revs = log["revisions"];
  REQUIRE(revs.size() >= steps.size() + 1);
  for (size_t k = 0; k < steps.size(); ++k) {
    const json& rev = revs[steps.size() - 1 - k];
    CHECK(rev["revision_id"] == steps[k]["revision_id"]);
    CHECK(rev["note"].get<std::string>().rfind(fmt::format("refine step {}: ", k + 1), 0) == 0);
  }
  CHECK(out["revision_id"] == revs[0]["revision_id"]);
  // A second run, with the default budget, starts it afresh: never slower, and within 0.02 of f1
  // at 1 px and 0.1 px of chamfer.
  Run again = sh(bin("sv-edit") + " refine --rev HEAD --json");
  REQUIRE(again.status == 0);
  const json out2 = json::parse(again.out);
  CHECK(out2["after"]["draw_time_s"].get<double>() <= out2["before"]["draw_time_s"].get<double>());
  CHECK(out2["before"]["f1_1px"].get<double>() - out2["after"]["f1_1px"].get<double>() <= 0.02 + 1e-9);
  CHECK(out2["after"]["chamfer_px"].get<double>() - out2["before"]["chamfer_px"].get<double>() <= 0.1 + 1e-9);
}
