// ListRevisions shows every revision the store's log names, as trees: re-running the pipeline
// into a store starts a new chain and the earlier chain, with its edits, stays listed.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "process.hpp"

using namespace svtest;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("list-revisions: a re-run pipeline leaves the earlier chain and its edits listed", "[e2e][history]") {
  fs::path d = scratch() / "history-trees";
  fs::remove_all(d);
  fs::create_directories(d);
  const std::string cd = "cd " + d.string() + " && ";
  const std::string pipeline = fmt::format("{} {} | {} | {} > /dev/null", bin("sv-skeleton"),
                                           data("lucide_milestone_w3.png"), bin("sv-fit"), bin("sv-route"));
  REQUIRE(run(cd + bin("sv-commit") + " init").status == 0);
  REQUIRE(run(cd + pipeline).status == 0);
  Run edit = run(cd + bin("sv-edit") + " delete-primitive --rev HEAD --primitive-ids p_0001 --note first-try");
  REQUIRE(edit.status == 0);
  const std::string edited = json::parse(edit.out)["revision_id"];
  // The same drawing again with another setting: a new chain from a new skeleton.
  REQUIRE(run(cd + fmt::format("{} --set skeleton.min_speck_area_px=9 {} | {} | {} > /dev/null", bin("sv-skeleton"),
                               data("lucide_milestone_w3.png"), bin("sv-fit"), bin("sv-route")))
              .status == 0);
  Run list = run(cd + bin("sv-commit") + " list-revisions --no-include-metrics");
  REQUIRE(list.status == 0);
  json revs = json::parse(list.out)["revisions"];
  CHECK(revs.size() == 7);  // two chains of three, and the edit
  int roots = 0;
  bool edit_listed = false;
  for (const auto& r : revs) {
    roots += r["parent_revision_id"].is_null();
    edit_listed = edit_listed || r["revision_id"] == edited;
  }
  CHECK(roots == 2);
  CHECK(edit_listed);
}
