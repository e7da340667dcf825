// Suggestions across processes, as an agent uses them: every candidate SuggestOptimizations
// and every merge MergeSimilarElements prints for the test drawings runs as printed (its
// `command`) and its dry run reports exactly the predicted scoreboard; sv-edit refine in a store leaves one revision per
// step, each with its note, and stays within its budget; what was simulated applies exactly.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <set>

#include <fmt/format.h>

#include <map>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "store/store.hpp"

using namespace svtest;
using nlohmann::json;
namespace fs = std::filesystem;

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

TEST_CASE("SuggestOptimizations within a budget of losses; each prediction listed once, with what it changes",
          "[e2e][suggest]") {
  const auto dir = scratch() / "suggest-budget";
  std::filesystem::create_directories(dir);
  int cut = 0;
  for (const char* name : kDrawings) {
    const auto scene = dir / (std::string(name) + ".json");
    REQUIRE(run(pipeline(name, scene)).status == 0);
    auto suggest = [&](const std::string& args) {
      Run s = run(fmt::format("{} suggest-optimizations --no-store --max-candidates 1000 {} {}", bin("sv-diagnose"), args,
                              scene.string()));
      INFO(name << "\n" << s.err);
      REQUIRE(s.status == 0);
      return json::parse(s.out);
    };
    const json all = suggest(""), tight = suggest("--max-f1-1px-loss 0 --max-chamfer-gain-px 0");
    INFO(name);
    std::set<std::string> predictions;
    for (const json& c : all["candidates"]) {
      // Identical predictions (the scoreboard after, the primitives touched) are one candidate.
      CHECK(predictions.insert(c["predicted_after"].dump() + c["affected_primitive_ids"].dump()).second);
      CHECK(c["affected_primitive_ids"].is_array());
    }
    for (const json& c : tight["candidates"]) {
      CHECK(c["predicted_fidelity_delta"].value("f1_1px", 0.0) >= -1e-9);
      CHECK(c["predicted_fidelity_delta"].value("chamfer_px", 0.0) <= 1e-9);
    }
    CHECK(tight["candidates"].size() <= all["candidates"].size());
    cut += int(all["candidates"].size() - tight["candidates"].size());
  }
  CHECK(cut > 0);  // the budget left something out somewhere
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

// ---------------------------------------------------------------- applying what was simulated

// Applying exactly what was simulated, as an agent does it: a SimulateEdit batch or a
// SuggestOptimizations candidate applied by its apply id gives the predicted metrics and ids; a
// stale id is a conflict that writes nothing; a batch is one MCP call as it is one command; every
// printed command runs as printed; a refused batch names its element; an element names ids an
// earlier one added.
namespace {

// A store holding the pipeline's revisions of a drawing, made once per drawing; a copy per use.
fs::path apply_store(const std::string& name, const std::string& drawing = "tabler_hexagons_w5",
                     const std::string& fit_args = "") {
  static std::map<std::string, fs::path> made;
  const std::string key = drawing + fit_args;
  if (!made.count(key)) {
    fs::path d = scratch() / ("apply-template-" + drawing + (fit_args.empty() ? "" : "-fit-args"));
    fs::create_directories(d);
    const std::string cd = "cd " + d.string() + " && ";
    REQUIRE(run(cd + bin("sv-commit") + " init").status == 0);
    REQUIRE(run(cd + fmt::format("{} {} | {} {} | {} | {} >/dev/null", bin("sv-skeleton"), data(drawing + ".png"),
                                 bin("sv-fit"), fit_args, bin("sv-route"), bin("sv-simulate")))
                .status == 0);
    made[key] = d;
  }
  fs::path d = scratch() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  fs::copy(made[key] / ".svrev", d / ".svrev", fs::copy_options::recursive);
  return d;
}

std::string head_in(const fs::path& dir) { return sv::Store(dir / ".svrev").head_id(); }

// A command as a tool printed it, run in `dir` with this build's executables first on PATH.
Run run_as_printed(const fs::path& dir, const std::string& command) {
  return run(fmt::format("cd {} && PATH={}:$PATH {}", dir.string(), SV_BIN_DIR, command));
}

Run sv_edit(const fs::path& dir, const std::string& args) { return run("cd " + dir.string() + " && " + bin("sv-edit") + " " + args); }

json envelope_of(const Run& r) {
  INFO(r.out << r.err);
  return json::parse(r.out);
}

std::string quoted_json(const json& j) { return "'" + j.dump() + "'"; }

// A refit then a re-route: the two-edit batch of the issue that asked for applying by id.
const json kRefitReroute = json::array({{{"tool", "RefitPolyline"}, {"primitive_ids", {"p_0001"}}, {"force_subdivide", true}},
                                        {{"tool", "RerunStage"}, {"stage", "route_optimize"}}});

// sv-mcp in `dir`, initialized, making these tool calls; their structured results in order.
std::vector<json> mcp_tool_calls(const fs::path& dir, const std::vector<std::pair<std::string, json>>& calls) {
  std::string lines = json{{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"},
                           {"params", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()},
                                       {"clientInfo", {{"name", "sv-tests"}, {"version", "1"}}}}}}
                          .dump() +
                      "\n" + json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump() + "\n";
  for (size_t i = 0; i < calls.size(); ++i)
    lines += json{{"jsonrpc", "2.0"}, {"id", i + 1}, {"method", "tools/call"},
                  {"params", {{"name", calls[i].first}, {"arguments", calls[i].second}}}}
                 .dump() +
             "\n";
  const fs::path in = dir / "calls.ndjson";
  spit(in, lines);
  Run r = run(fmt::format("cd {} && {} < {}", dir.string(), bin("sv-mcp"), in.string()));
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::vector<json> out;
  for (const json& reply : json_lines(r.out))
    if (reply["id"] != 0) out.push_back(reply["result"]["structuredContent"]);
  REQUIRE(out.size() == calls.size());
  return out;
}

}  // namespace

TEST_CASE("ApplyEdits applies a simulated batch exactly, and a stale id is a conflict that writes nothing", "[e2e][apply]") {
  const fs::path dir = apply_store("apply-exact");
  const std::string head = head_in(dir);
  Run sim = sv_edit(dir, "simulate-edit --rev HEAD --request " + quoted_json({{"edits", kRefitReroute}}));
  const json s = envelope_of(sim);
  REQUIRE(sim.status == 0);
  const std::string id = s["apply_id"];
  CHECK(id.substr(0, 12) == head.substr(0, 12));
  CHECK(s["apply"]["apply_id"] == id);
  // The same batch on the same revision has the same id.
  CHECK(envelope_of(sv_edit(dir, "simulate-edit --rev HEAD --request " + quoted_json({{"edits", kRefitReroute}})))["apply_id"] == id);
  const std::string command = s["command"];
  CHECK(command.find("--rev HEAD") != std::string::npos);

  Run applied = run_as_printed(dir, command);
  const json a = envelope_of(applied);
  REQUIRE(applied.status == 0);
  CHECK(a["tool"] == "ApplyEdits");
  CHECK(a["apply_id"] == id);
  CHECK(a["parent_revision_id"] == head);
  CHECK(a["after"]["draw_time_s"] == s["after"]["draw_time_s"]);
  CHECK(a["after"]["f1"] == s["after"]["f1"]);
  CHECK(a["after"]["f1_1px"] == s["after"]["f1_1px"]);
  for (const auto& [k, v] : s["after"].items()) CHECK(a["after"][k] == v);
  CHECK(a["added_primitive_ids"] == s["new_primitive_ids"]);
  CHECK(a["removed_primitive_ids"] == s["removed_primitive_ids"]);
  CHECK(a["changed_primitive_ids"] == s["changed_primitive_ids"]);
  CHECK(head_in(dir) == a["revision_id"]);
  // The one revision records the whole batch.
  CHECK(sv::Store(dir / ".svrev").read_scene(head_in(dir)).revision.parent == head);

  // HEAD has moved: the id is stale, whether the command says HEAD or the revision it was computed on.
  const std::string now = head_in(dir);
  const json fsck = envelope_of(run("cd " + dir.string() + " && " + bin("sv-commit") + " --json fsck"));
  Run stale = run_as_printed(dir, command);
  CHECK(stale.status == 5);
  CHECK(envelope_of(stale)["error"]["code"] == "conflict");
  Run old_rev = sv_edit(dir, "apply-edits --rev " + head.substr(0, 12) + " --request " + quoted_json(s["apply"]));
  CHECK(old_rev.status == 5);
  CHECK(envelope_of(old_rev)["error"]["code"] == "conflict");
  CHECK(head_in(dir) == now);
  CHECK(envelope_of(run("cd " + dir.string() + " && " + bin("sv-commit") + " --json fsck"))["objects"] == fsck["objects"]);

  // Measured on a revision HEAD has left, the printed command names that revision: a conflict too.
  const json past = envelope_of(sv_edit(dir, "simulate-edit --rev " + head.substr(0, 12) + " --request " +
                                                 quoted_json({{"edits", kRefitReroute}})));
  CHECK(past["apply_id"] == id);
  CHECK(past["command"].get<std::string>().find("--rev " + head) != std::string::npos);
  CHECK(run_as_printed(dir, past["command"]).status == 5);

  // An id stated with another batch than the one it was computed for is refused as such.
  json other = s["apply"];
  other["apply_id"] = now.substr(0, 12) + id.substr(12);
  Run mismatch = sv_edit(dir, "apply-edits --rev HEAD --request " + quoted_json(other));
  CHECK(mismatch.status != 0);
  CHECK(envelope_of(mismatch)["error"]["code"] == "invalid_selection");
  CHECK(head_in(dir) == now);
}

TEST_CASE("a batch is one MCP call as it is one command, with the same result", "[e2e][apply]") {
  const fs::path cli = apply_store("apply-cli"), mcp = apply_store("apply-mcp");
  Run c = sv_edit(cli, "refit-polyline --rev HEAD --request " + quoted_json(kRefitReroute));
  const json on_cli = envelope_of(c);
  REQUIRE(c.status == 0);
  const std::vector<json> r = mcp_tool_calls(mcp, {{"SimulateEdit", {{"edits", kRefitReroute}}}, {"ApplyEdits", {{"edits", kRefitReroute}}}});
  const json& sim = r[0];
  const json& on_mcp = r[1];
  INFO(on_mcp.dump().substr(0, 600));
  REQUIRE(on_mcp["ok"] == true);
  CHECK(on_mcp["after"] == on_cli["after"]);
  for (const auto& [k, v] : sim["after"].items()) CHECK(on_mcp["after"][k] == v);
  CHECK(on_mcp["apply_id"] == sim["apply_id"]);
  CHECK(on_mcp["added_primitive_ids"] == on_cli["added_primitive_ids"]);
  CHECK(on_mcp["removed_primitive_ids"] == on_cli["removed_primitive_ids"]);
  CHECK(on_mcp["changed_primitive_ids"] == on_cli["changed_primitive_ids"]);
  const sv::Scene a = sv::Store(cli / ".svrev").read_scene(head_in(cli)), b = sv::Store(mcp / ".svrev").read_scene(head_in(mcp));
  REQUIRE(a.primitives);
  REQUIRE(b.primitives);
  CHECK(sv::to_json(a, false)["primitives"] == sv::to_json(b, false)["primitives"]);
  // Applied by its id over MCP too, once HEAD has moved it is a conflict.
  const json stale = mcp_tool_calls(mcp, {{"ApplyEdits", sim["apply"]}})[0];
  CHECK(stale["ok"] == false);
  CHECK(stale["error"]["code"] == "conflict");
}

TEST_CASE("every command SuggestOptimizations and SimulateEdit print runs as printed in a store", "[e2e][apply]") {
  const char* drawing = "hershey_futural_02_w4";  // one with candidates
  const fs::path dir = apply_store("apply-printed", drawing);
  Run sug = run(fmt::format("cd {} && {} suggest-optimizations --rev HEAD --max-candidates 4", dir.string(), bin("sv-diagnose")));
  const json cands = envelope_of(sug)["candidates"];
  REQUIRE(sug.status == 0);
  REQUIRE(!cands.empty());
  int ran = 0;
  for (const json& c : cands) {
    const std::string cmd = c["request"]["command"];
    INFO(cmd);
    CHECK(cmd.find("--rev HEAD") != std::string::npos);
    CHECK(c["apply_id"] == c["request"]["apply"]["apply_id"]);
    const fs::path copy = apply_store(fmt::format("apply-printed-{}", ran++), drawing);
    Run a = run_as_printed(copy, cmd);
    INFO(a.err);
    REQUIRE(a.status == 0);
    CHECK(envelope_of(a)["after"] == c["predicted_after"]);
  }
  // With the store named by --store, the printed command names it too and runs from anywhere.
  const fs::path elsewhere = scratch() / "apply-elsewhere";
  fs::create_directories(elsewhere);
  const std::string store = (apply_store("apply-by-option") / ".svrev").string();
  Run alt = run(fmt::format("cd {} && {} simulate-edit --store {} --rev HEAD --request {}", elsewhere.string(), bin("sv-edit"),
                            store, quoted_json({{"alternatives", {kRefitReroute, json::array({kRefitReroute[1]})}}})));
  const json rows = envelope_of(alt)["alternatives"];
  REQUIRE(alt.status == 0);
  REQUIRE(rows.size() == 2);
  const std::string cmd = rows[0]["command"];
  CHECK(cmd.find("--store '" + store + "'") != std::string::npos);
  Run a = run_as_printed(elsewhere, cmd);
  INFO(cmd << "\n" << a.err);
  REQUIRE(a.status == 0);
  CHECK(envelope_of(a)["after"] == rows[0]["after"]);
}

TEST_CASE("every merge MergeSimilarElements prints runs as printed in a store and gives the prediction", "[e2e][apply]") {
  // Duplicates deleted (a fit that keeps its out-and-back retraces, fit.retrace_px=0); two arcs of
  // one circle fused (aggressive); duplicates whose deletion would cut the drawing in two
  // (aggressive), refused in the dry run and so printed with no request.
  const std::vector<std::array<std::string, 3>> drawings = {{"hershey_futural_02_w4", "", "--set fit.retrace_px=0"},
                                                            {"hershey_futural_06_w3", " --aggressive", ""},
                                                            {"hershey_scripts_09_w6", " --aggressive", ""}};
  int ran = 0, fused = 0, refused = 0;
  for (const auto& [drawing, args, fit_args] : drawings) {
    const fs::path dir = apply_store("merge-printed-" + drawing, drawing, fit_args);
    const std::string head = head_in(dir);
    Run m = run(fmt::format("cd {} && {} merge-similar-elements --rev HEAD{}", dir.string(), bin("sv-diagnose"), args));
    const json groups = envelope_of(m)["groups"];
    REQUIRE(m.status == 0);
    for (const json& g : groups) {
      INFO(drawing << ": " << g.dump());
      if (!g.contains("request")) {
        CHECK(g["refused"]["message"].get<std::string>().find("disconnect") != std::string::npos);
        CHECK(g["safe"] == false);
        ++refused;
        continue;
      }
      const std::string cmd = g["request"]["command"];
      CHECK(cmd.find("--rev HEAD") != std::string::npos);
      Run a = run_as_printed(dir, cmd + " --dry-run");
      INFO(cmd << "\n" << a.err);
      REQUIRE(a.status == 0);
      const json dry = envelope_of(a);
      CHECK(dry["after"] == g["predicted_after"]);
      // A duplicate goes (the first id: the copy); a merge replaces the whole group by one primitive.
      const bool duplicate = g["merge_kind"] == "deduplicate_overlap";
      std::vector<std::string> gone = duplicate ? std::vector<std::string>{g["primitive_ids"][0]}
                                                : g["primitive_ids"].get<std::vector<std::string>>();
      std::sort(gone.begin(), gone.end());
      CHECK(dry["removed_primitive_ids"] == gone);
      CHECK(dry["added_primitive_ids"].size() == (duplicate ? 0u : 1u));
      CHECK(head_in(dir) == head);
      ++ran;
      if (duplicate) continue;
      // Applied, the new primitive is the predicted replacement.
      Run applied = run_as_printed(dir, cmd);
      const json added = envelope_of(applied)["added_primitive_ids"];
      REQUIRE(applied.status == 0);
      REQUIRE(added.size() == 1);
      const json got = envelope_of(run(fmt::format("cd {} && {} get-primitive --rev HEAD --id {}", dir.string(),
                                                   bin("sv-diagnose"), added[0].get<std::string>())))["detail"];
      for (const auto& [k, v] : g["predicted_replacement"].items()) CHECK(got[k] == v);
      CHECK(std::abs(got["fit_rms_px"].get<double>() - g["fit_rms_px_after"].get<double>()) <= 1e-3);
      ++fused;
    }
  }
  CHECK(ran >= 4);
  CHECK(fused >= 1);
  CHECK(refused >= 1);
}

TEST_CASE("an edit with nothing on standard input in a store says --rev HEAD", "[e2e][apply]") {
  const fs::path dir = apply_store("apply-empty");
  Run r = sv_edit(dir, "reverse-direction --primitive-ids p_0001 < /dev/null");
  CHECK(r.status == 3);
  CHECK(r.err.find("invalid_scene: empty input") != std::string::npos);
  CHECK(r.err.find("pass --rev HEAD") != std::string::npos);
}

TEST_CASE("a refused batch names the element and the edit that failed", "[e2e][apply]") {
  const fs::path dir = apply_store("apply-refused");
  const std::string head = head_in(dir);
  const json batch = json::array({{{"tool", "ReverseDirection"}, {"primitive_ids", {"p_0001"}}},
                                  {{"tool", "DeletePrimitive"}, {"primitive_ids", {"p_0999"}}}});
  for (const std::string& args : {"reverse-direction --rev HEAD --request " + quoted_json(batch),
                                  "apply-edits --rev HEAD --request " + quoted_json({{"edits", batch}})}) {
    INFO(args);
    Run r = sv_edit(dir, args);
    CHECK(r.status != 0);
    const json e = envelope_of(r)["error"];
    CHECK(e["message"].get<std::string>().rfind("edit 1 (DeletePrimitive): ", 0) == 0);
    CHECK(e["message"].get<std::string>().find("p_0999") != std::string::npos);
    CHECK(e["details"]["index"] == 1);
    CHECK(e["details"]["tool"] == "DeletePrimitive");
    CHECK(head_in(dir) == head);
  }
}

TEST_CASE("a batch element names ids an earlier element added", "[e2e][apply]") {
  const fs::path dir = apply_store("apply-refs");
  const json add = {{"tool", "AddPrimitive"}, {"spec", {{"type", "line"}, {"p0", {10, 10}}, {"p1", {40, 12}}}}};
  const json batch = json::array({add, add, {{"tool", "ReverseDirection"}, {"primitive_ids", {"$0.added[0]", "$1.added[0]"}}}});
  Run sim = sv_edit(dir, "simulate-edit --rev HEAD --request " + quoted_json({{"edits", batch}}));
  const json s = envelope_of(sim);
  REQUIRE(sim.status == 0);
  REQUIRE(s["new_primitive_ids"].size() == 2);
  CHECK(s["edits"][2]["tool"] == "ReverseDirection");
  Run a = run_as_printed(dir, s["command"]);
  const json applied = envelope_of(a);
  REQUIRE(a.status == 0);
  for (const auto& [k, v] : s["after"].items()) CHECK(applied["after"][k] == v);
  CHECK(applied["added_primitive_ids"] == s["new_primitive_ids"]);
  // The third element reversed the lines the first two added.
  const std::string text = applied["llm_text"];
  const std::string reversed = text.substr(text.find("reversed"));
  for (const auto& id : s["new_primitive_ids"]) CHECK(reversed.find(id.get<std::string>()) < reversed.find('\n'));
  const std::string head = head_in(dir);
  for (const auto& [ref, says] : std::vector<std::pair<std::string, std::string>>{
           {"$2.added[0]", "does not run before it"}, {"$0.added[3]", "edit 0 added 1 primitive"},
           {"$0.new_id", "not a reference"}}) {
    INFO(ref);
    const json bad = json::array({add, {{"tool", "ReverseDirection"}, {"primitive_ids", {ref}}}, add});
    Run r = sv_edit(dir, "reverse-direction --rev HEAD --request " + quoted_json(bad));
    CHECK(r.status != 0);
    const json e = envelope_of(r)["error"];
    CHECK(e["code"] == "invalid_selection");
    CHECK(e["message"].get<std::string>().find(says) != std::string::npos);
    CHECK(e["message"].get<std::string>().find("edit 1") != std::string::npos);
    CHECK(head_in(dir) == head);
  }
}
