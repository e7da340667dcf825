// The one command-line shell: the same option has the same name and meaning on every executable,
// values are read as the field's schema says, and failures print an envelope the tool's own
// schema describes.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cstdio>

#include "core/schema.hpp"
#include "process.hpp"
#include "tools/tool.hpp"

using namespace svtest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A store with a drawing run through all four stages (HEAD routed and simulated), and the
// fitted revision before it.
fs::path shell_store(const std::string& name) {
  fs::path d = scratch() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  std::string cd = "cd " + d.string() + " && ";
  REQUIRE(run(cd + bin("sv-commit") + " init").status == 0);
  REQUIRE(run(cd + fmt::format("{} {} | {} > /dev/null", bin("sv-skeleton"), data("lucide_milestone_w3.png"),
                               bin("sv-fit")))
              .status == 0);
  REQUIRE(run(cd + fmt::format("{} --rev HEAD > /dev/null && {} --rev HEAD > /dev/null", bin("sv-route"),
                               bin("sv-simulate")))
              .status == 0);
  return d;
}

Run in_dir(const fs::path& dir, const std::string& exe, const std::string& args) {
  return run("cd " + dir.string() + " && " + bin(exe) + " " + args);
}

json parse(const Run& r) {
  INFO(r.out << r.err);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("shell: a point is X,Y or [X,Y], a boolean a flag, =VALUE or --no-", "[e2e][shell]") {
  fs::path d = shell_store("shell-values");
  json scene = json::parse(in_dir(d, "sv-commit", "show HEAD").out);
  json line;
  for (const auto& p : scene["primitives"])
    if (p["type"] == "line") line = p;
  REQUIRE(line.is_object());
  const double x = (line["p0"][0].get<double>() + line["p1"][0].get<double>()) / 2;
  const double y = (line["p0"][1].get<double>() + line["p1"][1].get<double>()) / 2;
  const std::string id = line["id"];
  Run plain = in_dir(d, "sv-edit", fmt::format("split-primitive --rev HEAD --primitive-id {} --at {},{} --dry-run", id, x, y));
  Run json_form =
      in_dir(d, "sv-edit", fmt::format("split-primitive --rev HEAD --primitive-id {} --at '[{},{}]' --dry-run", id, x, y));
  REQUIRE(plain.status == 0);
  CHECK(plain.out == json_form.out);
  CHECK(parse(plain)["dry_run"] == true);
  CHECK(parse(plain)["added_primitive_ids"].size() == 2);

  const std::string head = in_dir(d, "sv-commit", "--json status").out;
  // --dry-run=true and --dry-run are the same; --no-dry-run and --dry-run=false record the edit.
  CHECK(in_dir(d, "sv-edit", fmt::format("split-primitive --rev HEAD --primitive-id {} --at 0.5 --dry-run=true", id))
            .status == 0);
  CHECK(in_dir(d, "sv-commit", "--json status").out == head);
  Run maybe = in_dir(d, "sv-edit", fmt::format("split-primitive --rev HEAD --primitive-id {} --at 0.5 --dry-run=maybe", id));
  CHECK(maybe.status == 2);
  CHECK(in_dir(d, "sv-commit", "--json status").out == head);
  Run recorded = in_dir(d, "sv-edit", fmt::format("split-primitive --rev HEAD --primitive-id {} --at 0.5 --no-dry-run", id));
  REQUIRE(recorded.status == 0);
  CHECK(parse(recorded)["revision_id"].is_string());
}

TEST_CASE("shell: --note on every mutation and history tool, kept with the step", "[e2e][shell]") {
  for (const std::string exe : {"sv-edit", "sv-commit"})
    for (const sv::Tool* t : sv::tools_of(exe)) {
      if (t->kind == sv::ToolKind::read) continue;
      CAPTURE(t->name);
      Run help = run(bin(exe) + " " + t->subcommand + " --help");
      CHECK(help.status == 0);
      CHECK(help.out.find("--note") != std::string::npos);
    }
  fs::path d = shell_store("shell-note");
  Run commit = in_dir(d, "sv-commit", "commit HEAD --note 'the clean one'");
  REQUIRE(commit.status == 0);
  CHECK(slurp(d / ".svrev" / "logs" / "HEAD").find("Commit — the clean one") != std::string::npos);
}

TEST_CASE("shell: help names every subcommand; the catalog's names are accepted", "[e2e][shell]") {
  Run help = run(bin("sv-simulate") + " --help");
  REQUIRE(help.status == 0);
  for (const sv::Tool* t : sv::tools_of("sv-simulate")) {
    CAPTURE(t->subcommand);
    CHECK(help.out.find(t->subcommand) != std::string::npos);
  }
  CHECK(help.out.find("--gcode") != std::string::npos);  // and the stage's own options
  Run commit_help = run(bin("sv-commit") + " --help");
  for (const char* c : {"init", "log", "fsck", "gc", "list-revisions", "checkout", "done"}) {
    CAPTURE(c);
    CHECK(commit_help.out.find(c) != std::string::npos);
  }
  fs::path d = shell_store("shell-names");
  CHECK(in_dir(d, "sv-diagnose", "ListPrimitives --rev HEAD").out == in_dir(d, "sv-diagnose", "list-primitives --rev HEAD").out);
  // Options of the executable before or after the subcommand.
  CHECK(in_dir(d, "sv-commit", "--json status").out == in_dir(d, "sv-commit", "status --json").out);
}

TEST_CASE("shell: a failure's envelope has llm_text and human_text and fits the tool's schema", "[e2e][shell]") {
  fs::path d = shell_store("shell-errors");
  const json schema = parse(run(bin("sv-edit") + " delete-primitive --schema"))["result"];
  Run bad = in_dir(d, "sv-edit", "delete-primitive --rev HEAD --primitive-ids p_9999");
  CHECK(bad.status == 4);
  json env = parse(bad);
  CHECK(env["ok"] == false);
  CHECK(sv::Schema(schema).first_error(env) == "");
  const std::string llm = env["llm_text"], human = env["human_text"];
  CHECK(llm.find("p_9999") != std::string::npos);
  CHECK(human.size() > llm.size());
  CHECK(human.find("exit status 4") != std::string::npos);
  // A usage error in store mode is an envelope too.
  Run usage = in_dir(d, "sv-edit", "delete-primitive --rev HEAD --no-such-field 1");
  CHECK(usage.status == 2);
  CHECK(sv::Schema(schema).first_error(parse(usage)) == "");
}

TEST_CASE("shell: SimulateEdit takes the catalog's edit kinds", "[e2e][shell]") {
  fs::path d = shell_store("shell-kinds");
  json scene = json::parse(in_dir(d, "sv-commit", "show HEAD").out);
  const std::string id = scene["primitives"][0]["id"];
  Run r = in_dir(d, "sv-edit",
                 "simulate-edit --rev HEAD --request '{\"edits\": [{\"kind\": \"reverse_primitive_direction\", "
                 "\"payload\": {\"primitive_ids\": [\"" + id + "\"]}}]}'");
  REQUIRE(r.status == 0);
  CHECK(parse(r)["edits"][0]["tool"] == "ReverseDirection");
  CHECK(parse(r)["after"]["draw_time_s"] != parse(r)["before"]["draw_time_s"]);
  Run unknown = in_dir(d, "sv-edit",
                       "simulate-edit --rev HEAD --request '{\"edits\": [{\"kind\": \"shake_it\", \"payload\": {}}]}'");
  CHECK(unknown.status == 2);
}

TEST_CASE("shell: Done refuses a revision the robot cannot draw", "[e2e][shell]") {
  fs::path d = shell_store("shell-done");
  json log = parse(in_dir(d, "sv-commit", "--json log"));
  std::string fitted;
  for (const auto& r : log["revisions"])
    if (r["created_by_tool"] == "sv-fit") fitted = r["revision_id"];
  REQUIRE(!fitted.empty());
  Run done = in_dir(d, "sv-commit", "done " + fitted + " --summary 'not routed'");
  CHECK(done.status == 1);
  CHECK(parse(done)["error"]["code"] == "no_result");
  CHECK(in_dir(d, "sv-commit", "--json status").out.find("final") == std::string::npos);
}

TEST_CASE("shell: the stage's view options are named as render's fields", "[e2e][shell]") {
  fs::path d = shell_store("shell-view-names");
  const fs::path png = d / "view.png";
  Run stage = run("cd " + d.string() + " && " + bin("sv-commit") + " show HEAD | " + bin("sv-simulate") +
                  " --no-store --show-pen-up-paths --show-ids --png " + png.string() + " > /dev/null");
  CHECK(stage.status == 0);
  Run tool = in_dir(d, "sv-simulate", "render --rev HEAD --show-pen-up-paths --show-ids --png " + (d / "r.png").string());
  CHECK(tool.status == 0);
  CHECK(fs::exists(png));
  // The catalog is built only for a command line that may name a tool; the tool is found after
  // options too.
  Run after = in_dir(d, "sv-simulate", "--quiet render --rev HEAD --png " + (d / "after.png").string());
  CHECK(after.status == 0);
  CHECK(fs::exists(d / "after.png"));
  CHECK(run(bin("sv-simulate") + " --pen-up < /dev/null").status == 2);  // the old name is gone
}

TEST_CASE("shell: a tool given another revision reports that revision", "[e2e][shell]") {
  fs::path d = shell_store("shell-revision-id");
  json log = parse(in_dir(d, "sv-commit", "--json log"));
  const std::string routed = log["revisions"][1]["revision_id"];  // the one before HEAD
  for (const std::string& cmd : {"evaluate-revision --revision-id " + routed, "render --revision " + routed,
                                "project-pareto-position --revision-id " + routed}) {
    CAPTURE(cmd);
    Run r = in_dir(d, "sv-simulate", cmd + " --rev HEAD");
    REQUIRE(r.status == 0);
    CHECK(parse(r)["revision_id"] == routed);
  }
  Run tour = in_dir(d, "sv-diagnose", "get-tour --revision " + routed + " --rev HEAD");
  REQUIRE(tour.status == 0);
  CHECK(parse(tour)["revision_id"] == routed);
}

TEST_CASE("an edit's own figures agree with the before/after table, also in a batch", "[e2e][shell]") {
  fs::path d = shell_store("shell-batch-text");
  json scene = json::parse(in_dir(d, "sv-commit", "show HEAD").out);
  const std::string id = scene["primitives"][0]["id"];
  Run r = in_dir(d, "sv-edit",
                 "simulate-edit --rev HEAD --request '{\"edits\": [{\"tool\": \"RerunStage\", \"stage\": \"route_optimize\", "
                 "\"config_overrides\": {\"route.deviation_px\": 2}}, {\"tool\": \"ReverseDirection\", \"primitive_ids\": [\"" +
                     id + "\"]}]}'");
  REQUIRE(r.status == 0);
  json env = parse(r);
  // "re-routed: draw time A s -> B s", then the reversal's "+N ms": B + N equals the table's after.
  const std::string text = env["llm_text"];
  double a = 0, b = 0, delta_ms = 0;
  REQUIRE(std::sscanf(text.c_str() + text.find("draw time"), "draw time %lf s -> %lf s", &a, &b) == 2);
  REQUIRE(std::sscanf(text.c_str() + text.find("draw time", text.find("reversed")), "draw time %lf ms", &delta_ms) == 1);
  CHECK(a == Approx(env["before"]["draw_time_s"].get<double>()).margin(0.01));
  CHECK(b + delta_ms / 1000 == Approx(env["after"]["draw_time_s"].get<double>()).margin(0.01));
}
