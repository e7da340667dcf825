// sv-commit's history tools and the store's safety, from the command line: each tool's result,
// fsck finding flipped bytes, gc keeping what is reachable, edits killed at random moments,
// writers racing for HEAD, and branch names that try to leave the store.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "core/schema.hpp"
#include "raster/png.hpp"
#include "process.hpp"
#include "store/store.hpp"
#include "tools/tool.hpp"

using namespace svtest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A store holding the pipeline's four revisions of a small drawing, made once and copied per test.
fs::path template_store() {
  static fs::path dir = [] {
    fs::path d = scratch() / "history-template";
    fs::create_directories(d);
    std::string cd = "cd " + d.string() + " && ";
    REQUIRE(run(cd + bin("sv-commit") + " init").status == 0);
    Run p = run(cd + fmt::format("{} {} | {} | {} | {} >/dev/null", bin("sv-skeleton"), data("tabler_hexagons_w5.png"),
                                 bin("sv-fit"), bin("sv-route"), bin("sv-simulate")));
    REQUIRE(p.status == 0);
    return d;
  }();
  return dir;
}

fs::path fresh_store(const std::string& name) {
  fs::path d = scratch() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  fs::copy(template_store() / ".svrev", d / ".svrev", fs::copy_options::recursive);
  return d;
}

Run in_dir(const fs::path& dir, const std::string& exe, const std::string& args) {
  return run("cd " + dir.string() + " && " + bin(exe) + " " + args);
}

json envelope(const Run& r) {
  INFO(r.out << r.err);
  return json::parse(r.out);
}

// The result validates against the tool's own published schema.
void check_schema(const std::string& subcommand, const json& env) {
  static std::map<std::string, json> schemas;
  if (!schemas.count(subcommand))
    schemas[subcommand] = json::parse(run(bin("sv-commit") + " " + subcommand + " --schema").out)["result"];
  CHECK(sv::Schema(schemas[subcommand]).first_error(env) == "");
}

std::string head_of(const fs::path& dir) { return sv::Store(dir / ".svrev").head_id(); }

// The pipeline's revisions, oldest first (skeleton, fit, route, simulate).
std::vector<std::string> pipeline_ids(const fs::path& dir) {
  auto revs = envelope(in_dir(dir, "sv-commit", "--json log"))["revisions"];
  std::vector<std::string> out;
  for (auto it = revs.rbegin(); it != revs.rend(); ++it) out.push_back((*it)["revision_id"]);
  return out;
}

// Every object file made `by` older (gc spares unreachable objects younger than its grace).
void age_objects(const fs::path& dir, std::chrono::seconds by) {
  for (const auto& e : fs::recursive_directory_iterator(dir / ".svrev" / "objects"))
    if (e.is_regular_file()) fs::last_write_time(e.path(), fs::last_write_time(e.path()) - by);
}

const json* record_of(const json& revisions, const std::string& id) {
  for (const auto& r : revisions)
    if (r["revision_id"] == id) return &r;
  return nullptr;
}

fs::path object_file(const fs::path& dir, const std::string& id) {
  return dir / ".svrev" / "objects" / id.substr(0, 2) / id.substr(2);
}

void flip_byte(const fs::path& p, size_t at) {
  fs::permissions(p, fs::perms::owner_write, fs::perm_options::add);
  std::string bytes = slurp(p);
  bytes[at % bytes.size()] ^= 0x20;
  spit(p, bytes);
}

}  // namespace

TEST_CASE("the history tools: list, branch, check out, revert, commit, done", "[history]") {
  fs::path dir = fresh_store("history-tools");
  auto ids = pipeline_ids(dir);
  REQUIRE(ids.size() == 4);
  const std::string skel = ids[0], fit = ids[1], route = ids[2], sim = ids[3];

  // ListRevisions: the pipeline's chain with parents, times and metrics.
  auto list = envelope(in_dir(dir, "sv-commit", "list-revisions"));
  check_schema("list-revisions", list);
  CHECK(list["current_revision_id"] == sim);
  REQUIRE(list["revisions"].size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    const json& r = list["revisions"][i];
    CHECK(r["revision_id"] == ids[i]);
    CHECK(r["parent_revision_id"] == (i == 0 ? json(nullptr) : json(ids[i - 1])));
    CHECK(std::regex_match(r["timestamp"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
    CHECK(r["metrics"].is_object());
  }
  CHECK(list["revisions"][0]["created_by_tool"] == "sv-skeleton");
  CHECK(list["revisions"][3]["metrics"]["draw_time_s"].get<double>() > 0);
  CHECK(list["revisions"][3]["metrics"]["f1"].get<double>() > 0.9);
  CHECK(list["revisions"][3]["labels"] == json::array({"main", "HEAD"}));
  CHECK(list["llm_text"].get<std::string>().find(sim.substr(0, 12)) != std::string::npos);
  // The history picture goes to the store's view cache (or --png): one row per revision.
  REQUIRE(list["images"].contains("history"));
  cv::Mat dag = sv::decode_png(slurp(list["images"]["history"].get<std::string>()));
  REQUIRE(!dag.empty());
  CHECK(dag.rows >= 4 * 24);
  // Cached metrics are the same metrics.
  CHECK(envelope(in_dir(dir, "sv-commit", "list-revisions"))["revisions"] == list["revisions"]);
  CHECK(envelope(in_dir(dir, "sv-commit", "list-revisions --no-include-metrics"))["revisions"][3]["metrics"].is_null());

  // An edit on main, then a branch from the simulated revision with an edit of its own.
  Run e1 = in_dir(dir, "sv-edit", "reverse-direction --rev HEAD --primitive-ids p_0001");
  REQUIRE(e1.status == 0);
  const std::string main_edit = envelope(e1)["revision_id"];
  auto br = envelope(in_dir(dir, "sv-commit", "branch-revision --from-revision-id " + sim.substr(0, 10) + " --name exp"));
  check_schema("branch-revision", br);
  CHECK(br["revision_id"] == sim);
  CHECK(br["branch"] == "exp");
  CHECK(envelope(in_dir(dir, "sv-commit", "--json status"))["branch"] == "exp");
  Run again = in_dir(dir, "sv-commit", "branch-revision --name exp");
  CHECK(again.status == 5);
  CHECK(envelope(again)["error"]["code"] == "conflict");
  Run e2 = in_dir(dir, "sv-edit", "reverse-direction --rev HEAD --primitive-ids p_0002");
  REQUIRE(e2.status == 0);
  const std::string exp_edit = envelope(e2)["revision_id"];
  CHECK(sv::Store(dir / ".svrev").branch_id("exp") == exp_edit);
  CHECK(sv::Store(dir / ".svrev").branch_id("main") == main_edit);

  // The tree forks at the simulated revision.
  list = envelope(in_dir(dir, "sv-commit", "list-revisions"));
  REQUIRE(list["revisions"].size() == 6);
  const json& children = (*record_of(list["revisions"], sim))["children"];
  CHECK((children == json::array({main_edit, exp_edit}) || children == json::array({exp_edit, main_edit})));
  CHECK((*record_of(list["revisions"], exp_edit))["parent_revision_id"] == sim);
  CHECK((*record_of(list["revisions"], exp_edit))["created_by_tool"] == "ReverseDirection");
  CHECK((*record_of(list["revisions"], exp_edit))["labels"] == json::array({"exp", "HEAD"}));

  // Checkout: by branch (the tool's field, and the old positional form), by prefix.
  auto co = envelope(in_dir(dir, "sv-commit", "checkout --revision-id main"));
  check_schema("checkout", co);
  CHECK(co["previous_revision_id"] == exp_edit);
  CHECK(co["current_revision_id"] == main_edit);
  CHECK(co["branch"] == "main");
  co = envelope(in_dir(dir, "sv-commit", "checkout exp"));
  CHECK(co["current_revision_id"] == exp_edit);
  CHECK(envelope(in_dir(dir, "sv-commit", "--json status"))["branch"] == "exp");
  Run unknown = in_dir(dir, "sv-commit", "checkout 0123abcd");
  CHECK(unknown.status == 4);

  // Revert keeping history: a new revision on top of HEAD with the target's content.
  auto rv = envelope(in_dir(dir, "sv-commit", "revert --to-revision-id " + sim));
  check_schema("revert", rv);
  const std::string reverted = rv["revision_id"];
  CHECK(reverted != sim);
  CHECK(head_of(dir) == reverted);
  json a = json::parse(in_dir(dir, "sv-commit", "show " + reverted).out), b = json::parse(in_dir(dir, "sv-commit", "show " + sim).out);
  CHECK(a["revision"]["parent"] == exp_edit);
  CHECK(a["revision"]["tool"] == "Revert");
  a.erase("revision");
  b.erase("revision");
  CHECK(a == b);

  // Revert discarding: the branch moves back; what it leaves is kept on reverted/<id>.
  rv = envelope(in_dir(dir, "sv-commit", "revert --to-revision-id " + sim + " --no-keep-branch"));
  CHECK(rv["revision_id"] == sim);
  CHECK(rv["backup_branch"] == "reverted/" + reverted.substr(0, 12));
  sv::Store st(dir / ".svrev");
  CHECK(st.branch_id("exp") == sim);
  CHECK(st.branch_id("reverted/" + reverted.substr(0, 12)) == reverted);
  CHECK(st.log().back().message.find("Revert (discard)") != std::string::npos);
  CHECK(envelope(in_dir(dir, "sv-commit", "list-revisions"))["revisions"].size() == 7);  // nothing lost

  // BranchRevision with the default name.
  br = envelope(in_dir(dir, "sv-commit", "branch-revision --from-revision-id " + route));
  CHECK(br["branch"] == "branch-" + route.substr(0, 8));
  CHECK(head_of(dir) == route);

  // Commit: refused without commands, else the final mark with the command count and metrics.
  Run none = in_dir(dir, "sv-commit", "commit --revision-id " + skel);
  CHECK(none.status == 1);
  CHECK(envelope(none)["error"]["code"] == "no_result");
  CHECK(!envelope(none)["error"]["details"]["reason"].get<std::string>().empty());
  auto cm = envelope(in_dir(dir, "sv-commit", "commit --revision-id " + sim + " --rationale 'the simulated pipeline output'"));
  check_schema("commit", cm);
  CHECK(cm["revision_id"] == sim);
  CHECK(cm["commands_count"].get<int>() > 0);
  CHECK(cm["estimated_time_ms"].get<double>() > 0);
  CHECK(cm["final_metrics"]["f1"].get<double>() > 0.9);
  CHECK(sv::Store(dir / ".svrev").final_id() == sim);
  CHECK(json::parse(in_dir(dir, "sv-commit", "show final").out)["commands"].size() == cm["commands_count"]);

  // Done: the original output may stand; the summary goes to the log.
  auto dn = envelope(in_dir(dir, "sv-commit", "done --final-revision-id " + route.substr(0, 8) + " --summary 'no edit beat the original'"));
  check_schema("done", dn);
  CHECK(dn["accepted"] == true);
  CHECK(dn["final_revision_id"] == route);
  CHECK(sv::Store(dir / ".svrev").final_id() == route);
  auto log = sv::Store(dir / ".svrev").log();
  CHECK(log.back().ref == "refs/tags/final");
  CHECK(log.back().message == "Done: no edit beat the original");
  (void)fit;
  CHECK(in_dir(dir, "sv-commit", "fsck").status == 0);
}

TEST_CASE("sv-commit's man page lists the registry's history tools", "[history]") {
  std::string page = slurp(std::string(SV_TEST_DATA) + "/../../man/sv-commit.1");
  CHECK(page.find(sv::man_table("sv-commit")) != std::string::npos);
}

TEST_CASE("fsck finds a flipped byte in a scene and in a blob", "[history]") {
  fs::path dir = fresh_store("history-fsck");
  Run clean = in_dir(dir, "sv-commit", "--json fsck");
  REQUIRE(clean.status == 0);
  CHECK(envelope(clean)["problems"].empty());
  CHECK(envelope(clean)["scenes"] == 4);
  CHECK(envelope(clean)["blobs"] == 1);

  const std::string sim = head_of(dir);
  const std::string blob = json::parse(in_dir(dir, "sv-commit", "show HEAD").out)["source"]["sha256"];
  for (const std::string& id : {sim, blob}) {
    CAPTURE(id);
    fs::path p = object_file(dir, id);
    std::string before = slurp(p);
    flip_byte(p, before.size() / 2);
    Run bad = in_dir(dir, "sv-commit", "fsck");
    CHECK(bad.status == 3);
    CHECK(bad.out.find(id) != std::string::npos);
    CHECK(bad.err.find("corrupt_object") != std::string::npos);
    Run bad_json = in_dir(dir, "sv-commit", "--json fsck");
    CHECK(bad_json.status == 3);
    CHECK(envelope(bad_json)["ok"] == false);
    CHECK(envelope(bad_json)["error"]["code"] == "corrupt_object");
    spit(p, before);
    CHECK(in_dir(dir, "sv-commit", "fsck").status == 0);
  }
  // A ref naming a missing revision is found too.
  spit(dir / ".svrev" / "refs" / "heads" / "ghost", std::string(64, 'a') + "\n");
  Run ghost = in_dir(dir, "sv-commit", "fsck");
  CHECK(ghost.status == 3);
  CHECK(ghost.out.find("refs/heads/ghost") != std::string::npos);
}

TEST_CASE("gc keeps everything reachable and removes what nothing ever named", "[history]") {
  fs::path dir = fresh_store("history-gc");
  REQUIRE(in_dir(dir, "sv-edit", "reverse-direction --rev HEAD --primitive-ids p_0001").status == 0);
  REQUIRE(in_dir(dir, "sv-commit", "branch-revision --name side").status == 0);
  REQUIRE(in_dir(dir, "sv-edit", "reverse-direction --rev HEAD --primitive-ids p_0002").status == 0);
  auto ids = pipeline_ids(dir);
  REQUIRE(in_dir(dir, "sv-commit", "revert --to-revision-id " + ids[3] + " --no-keep-branch").status == 0);
  REQUIRE(in_dir(dir, "sv-commit", "checkout main").status == 0);
  REQUIRE(in_dir(dir, "sv-commit", "checkout " + ids[2]).status == 0);  // detached
  REQUIRE(in_dir(dir, "sv-edit", "reverse-direction --rev HEAD --primitive-ids p_0003").status == 0);  // only the log names it
  REQUIRE(in_dir(dir, "sv-commit", "checkout main").status == 0);

  sv::Store st(dir / ".svrev");
  const auto before = st.object_ids();
  // Plant: an old orphan scene and blob, a fresh orphan (a writer may be about to name it), a
  // stale temporary file.
  sv::Scene orphan;
  orphan.revision.tool = "planted";
  const std::string old_scene = st.put_scene(orphan), old_blob = st.put_blob("planted bytes");
  sv::Scene young;
  young.revision.tool = "planted young";
  const std::string young_scene = st.put_scene(young);
  const auto two_hours_ago = fs::file_time_type::clock::now() - std::chrono::hours(2);
  for (const auto& id : {old_scene, old_blob}) fs::last_write_time(object_file(dir, id), two_hours_ago);
  fs::path tmp = dir / ".svrev" / "objects" / old_scene.substr(0, 2) / ".tmp-interrupted-XXXXXX";
  spit(tmp, "half a write");
  fs::last_write_time(tmp, two_hours_ago);

  Run g = in_dir(dir, "sv-commit", "--json gc");
  REQUIRE(g.status == 0);
  auto rep = envelope(g);
  CHECK(rep["removed"] == 2);
  CHECK((rep["removed_ids"] == json::array({old_scene, old_blob}) || rep["removed_ids"] == json::array({old_blob, old_scene})));
  CHECK(rep["kept_recent"] == 1);
  CHECK(rep["temp_files_removed"] == 1);
  CHECK(!fs::exists(object_file(dir, old_scene)));
  CHECK(!fs::exists(tmp));
  CHECK(fs::exists(object_file(dir, young_scene)));
  for (const auto& id : before) CHECK(fs::exists(object_file(dir, id)));
  CHECK(in_dir(dir, "sv-commit", "fsck").status == 0);
  for (const auto& e : st.log())
    if (!e.new_id.empty()) CHECK(in_dir(dir, "sv-commit", "show " + e.new_id + " >/dev/null").status == 0);
  // --expire 0 still spares it while a writer may be about to name it (the grace, a minute);
  // past that it goes too, and nothing else.
  rep = envelope(in_dir(dir, "sv-commit", "--json gc --expire 0"));
  CHECK(rep["removed_ids"].empty());
  CHECK(rep["kept_recent"] == 1);
  fs::last_write_time(object_file(dir, young_scene), fs::file_time_type::clock::now() - std::chrono::minutes(2));
  rep = envelope(in_dir(dir, "sv-commit", "--json gc --expire 0"));
  CHECK(rep["removed_ids"] == json::array({young_scene}));
  CHECK(rep["bytes_freed"].get<long>() > 0);
  CHECK(st.object_ids() == before);
  CHECK(in_dir(dir, "sv-commit", "fsck").status == 0);
}

TEST_CASE("edits killed at random moments never corrupt the store", "[history]") {
  fs::path dir = fresh_store("history-crash");
  // The kill lands anywhere in an edit's life: uniform over 1.2 times the measured duration of a
  // whole edit (process start-up alone takes tens of milliseconds), at least 30 ms and at most
  // 120 ms, so some edits die loading, some computing, some writing, and some finish.
  const auto m0 = std::chrono::steady_clock::now();
  REQUIRE(wait_child(spawn({bin("sv-edit"), "reverse-direction", "--rev", "HEAD", "--primitive-ids", "p_0002"}, dir)) == 0);
  const int edit_us = static_cast<int>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - m0).count());
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> delay_us(0, std::clamp(edit_us * 6 / 5, 30000, 120000));  // capped for a loaded machine
  const auto t0 = std::chrono::steady_clock::now();
  int kills = 0, finished = 0, status_failures = 0, head_failures = 0;
  const int rounds = kSanitized ? 80 : 200;  // sanitized, a process takes most of the delays just to start
  for (int i = 0; i < rounds; ++i) {
    std::vector<std::string> argv =
        i % 2 == 0 ? std::vector<std::string>{bin("sv-edit"), "reverse-direction", "--rev", "HEAD", "--primitive-ids", "p_0001"}
                   : std::vector<std::string>{bin("sv-edit"), "define-region", "--rev", "HEAD", "--name", fmt::format("r{}", i),
                                              "--region", "0,0,20,20"};
    Child c = spawn(argv, dir);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    int status = kill_child(c);
    ++kills;
    if (status == 0) ++finished;
    // HEAD names a valid revision after every kill, and sv-commit status works.
    Run s = in_dir(dir, "sv-commit", "--json status");
    if (s.status != 0) ++status_failures;
    try {
      sv::Store st(dir / ".svrev");
      st.read_scene(st.resolve("HEAD"));
    } catch (const std::exception& e) {
      ++head_failures;
      UNSCOPED_INFO("round " << i << ": " << e.what());
    }
  }
  Run f = in_dir(dir, "sv-commit", "--json fsck");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto rep = envelope(f);
  std::fprintf(stderr,
               "crash loop: %d kills over 0-%.0f ms (%d edits finished first), fsck %s (%zu objects, %zu temporary "
               "files, %zu log entries), %.1f s\n",
               kills, delay_us.max() / 1000.0, finished, f.status == 0 ? "clean" : "NOT clean", rep["objects"].get<size_t>(),
               rep["temp_files"].get<size_t>(), rep["log_entries"].get<size_t>(), seconds);
  CHECK(kills == rounds);
  CHECK(status_failures == 0);
  CHECK(head_failures == 0);
  CHECK(f.status == 0);
  CHECK(rep["problems"].empty());
  CHECK(in_dir(dir, "sv-commit", "--json gc --expire 0").status == 0);
  CHECK(in_dir(dir, "sv-commit", "fsck").status == 0);
}

TEST_CASE("eight writers from the same HEAD: one wins, seven conflict", "[history]") {
  fs::path dir = fresh_store("history-race");
  const std::string head = head_of(dir);
  Gate gate;
  std::vector<Child> children;
  for (int i = 0; i < 8; ++i)
    children.push_back(spawn({bin("sv-edit"), "define-region", "--rev", head, "--name", fmt::format("w{}", i), "--region",
                              fmt::format("{},0,{},20", i, i + 20)},
                             dir, &gate));
  gate.open();  // all eight start at once
  int winners = 0, conflicts = 0;
  std::string winner;
  for (const auto& c : children) {
    int status = wait_child(c);
    std::string out = slurp(c.out);
    INFO(out << slurp(c.err));
    if (status == 0) {
      ++winners;
      winner = json::parse(out)["revision_id"];
    } else if (status == 5 && json::parse(out)["error"]["code"] == "conflict") {
      ++conflicts;
    }
  }
  std::fprintf(stderr, "race: %d winner(s), %d conflict(s)\n", winners, conflicts);
  CHECK(winners == 1);
  CHECK(conflicts == 7);
  CHECK(head_of(dir) == winner);
  // A loser that stored its revision before HEAD moved leaves it unreferenced: not a problem,
  // and gc removes exactly those.
  Run f = in_dir(dir, "sv-commit", "--json fsck");
  CHECK(f.status == 0);
  const json rep = envelope(f);
  std::fprintf(stderr, "race: %d unreferenced object(s) left by the losers\n", rep["unreferenced"].get<int>());
  CHECK(rep["unreferenced"].get<int>() <= conflicts);
  age_objects(dir, std::chrono::minutes(2));  // past gc's grace for a writer about to name them
  const json g = envelope(in_dir(dir, "sv-commit", "--json gc --expire 0"));
  CHECK(g["removed"] == rep["unreferenced"]);
  const json clean = envelope(in_dir(dir, "sv-commit", "--json fsck"));
  CHECK(clean["unreferenced"] == 0);
  CHECK(clean["problems"].empty());
}

TEST_CASE("an edit of a revision HEAD has moved past is a conflict", "[history]") {
  fs::path dir = fresh_store("history-stale");
  const std::string old = head_of(dir);
  REQUIRE(in_dir(dir, "sv-edit", "reverse-direction --rev HEAD --primitive-ids p_0001").status == 0);
  const json before = envelope(in_dir(dir, "sv-commit", "--json fsck"));
  Run stale = in_dir(dir, "sv-edit", "reverse-direction --rev " + old + " --primitive-ids p_0002");
  CHECK(stale.status == 5);
  CHECK(envelope(stale)["error"]["code"] == "conflict");
  CHECK(count_lines(stale.err) == 1);
  // Refused before anything was written.
  const json after = envelope(in_dir(dir, "sv-commit", "--json fsck"));
  CHECK(after["objects"] == before["objects"]);
  CHECK(after["unreferenced"] == 0);
}

// One recording rule for every writer: a result goes only on the revision HEAD names. A --rev
// HEAD has moved past is refused before any work, and nothing in the store changes (objects,
// refs, log); the same commands on HEAD record a child of HEAD.
TEST_CASE("a stage, an edit, a batch and refine on a --rev that is not HEAD are conflicts", "[history]") {
  fs::path dir = fresh_store("history-one-rule");
  const std::string old = pipeline_ids(dir)[1];
  const std::string batch = R"( --request '[{"primitive_ids":["p_0001"]},{"primitive_ids":["p_0002"]}]')";
  const std::vector<std::pair<std::string, std::string>> writers = {
      {"sv-route", ""},
      {"sv-edit", "reverse-direction --primitive-ids p_0001"},
      {"sv-edit", "reverse-direction" + batch},
      {"sv-edit", "refine --max-steps 1"},
  };
  for (const auto& [exe, args] : writers) {
    INFO(exe << " " << args);
    const std::string head = head_of(dir);
    const json before = envelope(in_dir(dir, "sv-commit", "--json fsck"));
    const size_t log_lines = sv::Store(dir / ".svrev").log().size();
    Run stale = in_dir(dir, exe, args + " --rev " + old.substr(0, 12));
    CHECK(stale.status == 5);
    CHECK(envelope(stale)["error"]["code"] == "conflict");
    CHECK(count_lines(stale.err) == 1);
    CHECK(head_of(dir) == head);
    const json after = envelope(in_dir(dir, "sv-commit", "--json fsck"));
    CHECK(after["objects"] == before["objects"]);
    CHECK(after["unreferenced"] == 0);
    CHECK(sv::Store(dir / ".svrev").log().size() == log_lines);

    Run ok = in_dir(dir, exe, args + (args.rfind("refine", 0) == 0 ? " --json" : "") + " --rev HEAD");
    REQUIRE(ok.status == 0);
    CHECK(envelope(ok)["revision_id"] == head_of(dir));
    CHECK(head_of(dir) != head);
    CHECK(sv::Store(dir / ".svrev").read_scene(head_of(dir)).revision.parent == head);
  }
}

TEST_CASE("branch names cannot leave the store", "[history]") {
  fs::path dir = fresh_store("history-names");
  auto listing = [&] {
    std::vector<std::string> out;
    // Everything but the captured output of the commands this test runs.
    for (const auto& e : fs::recursive_directory_iterator(scratch())) {
      std::string name = e.path().filename().string();
      if (e.path().parent_path() == scratch() && (name.rfind("run", 0) == 0 || name.rfind("spawn", 0) == 0)) continue;
      out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto before = listing();
  for (const std::string name : {"../../x", "a/../../b", "/abs", "a/", "a//b", ".hidden", "x.lock"}) {
    CAPTURE(name);
    Run tool = in_dir(dir, "sv-commit", "branch-revision --name '" + name + "'");
    CHECK(tool.status == 2);
    CHECK(envelope(tool)["error"]["code"] == "invalid_selection");
    Run old = in_dir(dir, "sv-commit", "--json branch '" + name + "'");
    CHECK(old.status == 2);
  }
  CHECK(listing() == before);
  CHECK(!fs::exists(dir / "x"));
  CHECK(!fs::exists(dir.parent_path() / "x"));
  CHECK(!fs::exists(dir / ".svrev" / "b"));
  // A name with a folder is fine, and is listed.
  REQUIRE(in_dir(dir, "sv-commit", "branch-revision --name ideas/first").status == 0);
  CHECK(envelope(in_dir(dir, "sv-commit", "--json status"))["branch"] == "ideas/first");
}

namespace {

// Stores `doc` as it is (a blob is stored byte for byte): a revision that names its content
// correctly but that sv would never write. Returns its id.
std::string plant_revision(const fs::path& dir, const json& doc) {
  return sv::Store(dir / ".svrev").put_blob(doc.dump());
}

json head_doc(const fs::path& dir) { return json::parse(in_dir(dir, "sv-commit", "show HEAD").out); }

}  // namespace

TEST_CASE("a role outside the scene schema is refused and nothing is written", "[history]") {
  fs::path dir = fresh_store("history-role");
  sv::Store st(dir / ".svrev");
  const std::string head = head_of(dir);
  const auto objects = st.object_ids();
  Run bad = in_dir(dir, "sv-edit", R"(label-semantic-roles --rev HEAD --request '{"assignments":[["p_0013","expressive"]]}')");
  CHECK(bad.status == 2);
  CHECK(envelope(bad)["error"]["code"] == "invalid_selection");
  CHECK(envelope(bad)["error"]["message"].get<std::string>().find("/assignments/0/1") != std::string::npos);
  CHECK(head_of(dir) == head);
  CHECK(st.object_ids() == objects);
  Run good = in_dir(dir, "sv-edit", R"(label-semantic-roles --rev HEAD --request '{"assignments":[["p_0013","frame"]]}')");
  CHECK(good.status == 0);
  CHECK(in_dir(dir, "sv-commit", "list-revisions").status == 0);
  CHECK(in_dir(dir, "sv-commit", "fsck").status == 0);
}

TEST_CASE("an unreadable revision is reported, and the rest of the history still lists", "[history]") {
  fs::path dir = fresh_store("history-unreadable");
  auto ids = pipeline_ids(dir);
  const std::string head = head_of(dir);
  // What the unknown role once made: main moved to a revision no read can parse.
  json doc = head_doc(dir);
  doc["primitives"][0]["semantic_role"] = "expressive";
  doc["revision"] = {{"parent", head}, {"tool", "LabelSemanticRoles"}, {"args", json::array()}, {"note", ""}};
  const std::string bad = plant_revision(dir, doc);
  sv::Store(dir / ".svrev").advance_head(head, bad, "planted");
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    Run list = in_dir(dir, "sv-commit", "list-revisions");
    REQUIRE(list.status == 0);
    json env = envelope(list);
    check_schema("list-revisions", env);
    CHECK(env["revisions"].size() == 5);  // the four readable ones too
    const json* rec = record_of(env["revisions"], bad);
    REQUIRE(rec);
    CHECK((*rec)["problem"].get<std::string>().find("corrupt_object") != std::string::npos);
    CHECK((*rec)["labels"].size() >= 1);
    for (const auto& id : ids) {
      REQUIRE(record_of(env["revisions"], id));
      CHECK(!record_of(env["revisions"], id)->contains("problem"));
    }
    CHECK(!env["warnings"].empty());
    CHECK(list.err.find(bad.substr(0, 12)) != std::string::npos);
    CHECK((*rec)["parent_revision_id"] == head);  // still named by its object: the tree stays whole
    // The log from main reports it and goes on to its parent.
    Run log = in_dir(dir, "sv-commit", "--json log main");
    REQUIRE(log.status == 0);
    CHECK(envelope(log)["revisions"][0]["problem"].is_string());
    CHECK(envelope(log)["revisions"].size() == 5);
    CHECK(envelope(log)["warnings"].size() == 1);
    CHECK(log.err.find("warning") != std::string::npos);
    REQUIRE(in_dir(dir, "sv-commit", "checkout " + ids[2]).status == 0);  // and again, detached
  }
  CHECK(in_dir(dir, "sv-commit", "checkout " + bad).status == 3);  // only a readable revision
  CHECK(in_dir(dir, "sv-commit", "fsck").status == 3);
}

TEST_CASE("fsck checks every stored revision's invariants, not only its hash", "[history]") {
  fs::path dir = fresh_store("history-invariants");
  REQUIRE(in_dir(dir, "sv-commit", "fsck").status == 0);
  json doc = head_doc(dir);
  const std::string missing = "p_0999";
  doc["tour"][0]["primitive"] = missing;
  const std::string planted = plant_revision(dir, doc);
  REQUIRE(in_dir(dir, "sv-commit", "branch planted " + planted).status == 0);
  Run f = in_dir(dir, "sv-commit", "fsck");
  CHECK(f.status == 3);
  CHECK(f.out.find(planted) != std::string::npos);
  // The reader refuses such a scene already (invalid_scene); fsck names the step either way.
  CHECK((f.out.find("tour/0 names primitive " + missing) != std::string::npos ||
         f.out.find("tour step 0 names primitive " + missing) != std::string::npos));
  // Two primitives with one id (what RerunStage once wrote) are found too.
  json twins = head_doc(dir);
  twins["primitives"][1]["id"] = twins["primitives"][0]["id"];
  const std::string dup = plant_revision(dir, twins);
  REQUIRE(in_dir(dir, "sv-commit", "branch twins " + dup).status == 0);
  f = in_dir(dir, "sv-commit", "fsck");
  CHECK(f.status == 3);
  CHECK(f.out.find(dup) != std::string::npos);
}

TEST_CASE("an id is never handed out twice in a history, not even after a revert that discards", "[history]") {
  fs::path dir = fresh_store("history-ids");
  const std::string sim = head_of(dir);
  const std::string line = R"(add-primitive --rev HEAD --request '{"spec":{"type":"line","p0":[4,4],"p1":[40,4]}}')";
  Run first = in_dir(dir, "sv-edit", line);
  REQUIRE(first.status == 0);
  const std::string a = envelope(first)["new_primitive_id"];
  REQUIRE(in_dir(dir, "sv-commit", "revert --to-revision-id " + sim + " --no-keep-branch").status == 0);
  REQUIRE(head_of(dir) == sim);
  Run second = in_dir(dir, "sv-edit", line);
  REQUIRE(second.status == 0);
  const std::string b = envelope(second)["new_primitive_id"];
  CHECK(b != a);
  CHECK(std::stoi(b.substr(2)) > std::stoi(a.substr(2)));
  // On another branch too: the store knows every id its history used.
  REQUIRE(in_dir(dir, "sv-commit", "branch-revision --from-revision-id " + sim + " --name other").status == 0);
  Run third = in_dir(dir, "sv-edit", line);
  REQUIRE(third.status == 0);
  CHECK(std::stoi(envelope(third)["new_primitive_id"].get<std::string>().substr(2)) > std::stoi(b.substr(2)));
  CHECK(in_dir(dir, "sv-commit", "fsck").status == 0);
}

TEST_CASE("RerunStage in a region of a real drawing writes unique ids", "[history]") {
  // The reported case: a refit of the dot and the stem of the i gave two primitives one id.
  fs::path dir = scratch() / "history-rerun-ids";
  fs::create_directories(dir);
  REQUIRE(in_dir(dir, "sv-commit", "init").status == 0);
  REQUIRE(run("cd " + dir.string() + " && " +
              fmt::format("{} {} | {} | {} >/dev/null", bin("sv-skeleton"), data("hand_info-square_w4.png"), bin("sv-fit"),
                          bin("sv-route")))
              .status == 0);
  Run r = in_dir(dir, "sv-edit",
                 R"(rerun-stage --rev HEAD --stage vectorize --region 256,128,384,256 --config-overrides '{"fit.merge_width_ratio":0.42}')");
  REQUIRE(r.status == 0);
  json doc = head_doc(dir);
  std::set<std::string> ids;
  for (const auto& p : doc["primitives"]) CHECK(ids.insert(p["id"].get<std::string>()).second);
  CHECK(in_dir(dir, "sv-commit", "fsck").status == 0);
}
