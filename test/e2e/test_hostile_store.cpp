// The store as an attacker or an unlucky user leaves it (issue 46): symlinks, FIFOs and devices
// planted in .svrev, revision fields that name files, a scene whose source is a huge file or a
// FIFO, a log that cannot be appended, a read-only store, and writers, gc and fsck at once.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "process.hpp"
#include "store/store.hpp"
#include "tools/tool.hpp"

using namespace svtest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace hostile {
namespace {

constexpr const char* kSecret = "SECRET-CONTENT-4242";

// A store holding the pipeline's four revisions of a small drawing, made once, copied per test.
fs::path store_copy(const std::string& name) {
  static const fs::path tmpl = pipeline_store("hostile-template", "tabler_hexagons_w5.png");
  const fs::path d = scratch() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  fs::copy(tmpl / ".svrev", d / ".svrev", fs::copy_options::recursive);
  return d;
}

Run at(const fs::path& dir, const std::string& cmd) { return run("cd " + dir.string() + " && " + cmd); }

// A file outside the store that a planted symlink points at.
fs::path secret_file(const std::string& name) {
  const fs::path p = scratch() / name;
  spit(p, std::string(kSecret) + "\n");
  return p;
}

std::string head_of(const fs::path& dir) { return sv::Store(dir / ".svrev").head_id(); }

fs::path object_file(const fs::path& dir, const std::string& id) {
  return dir / ".svrev" / "objects" / id.substr(0, 2) / id.substr(2);
}

// One sv-mcp session on these requests (one per line); its replies by id.
std::map<json, json> mcp_session(const fs::path& dir, const std::vector<json>& requests, const std::string& args = "") {
  std::string lines;
  for (const auto& r : requests) lines += r.dump() + "\n";
  const fs::path in = dir / "requests.ndjson";
  spit(in, lines);
  Run r = run(fmt::format("cd {} && timeout 60 {} {} < {}", dir.string(), bin("sv-mcp"), args, in.string()));
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::map<json, json> out;
  for (json& reply : json_lines(r.out)) out[reply["id"]] = reply;
  return out;
}

json rpc_call(int id, const std::string& tool, const json& args = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}};
}

bool empty_dir(const fs::path& d) { return fs::is_empty(d); }

}  // namespace
}  // namespace hostile

using namespace hostile;

TEST_CASE("a symlinked HEAD is damage: never followed, its target never shown", "[e2e][hostile][store]") {
  const fs::path dir = store_copy("hostile-head");
  const fs::path head = dir / ".svrev" / "HEAD";
  fs::remove(head);
  fs::create_symlink(secret_file("head-secret"), head);
  Run status = at(dir, bin("sv-commit") + " status");
  CHECK(status.status == 3);
  CHECK(status.err.find("corrupt_object") != std::string::npos);
  Run fsck = at(dir, bin("sv-commit") + " fsck");
  CHECK(fsck.status == 3);
  CHECK(fsck.out.find("bad HEAD") != std::string::npos);
  auto replies = mcp_session(dir, {rpc_call(1, "ListRevisions"), rpc_call(2, "GetTour")});
  for (int id : {1, 2}) {
    CAPTURE(id);
    CHECK(replies[id]["result"]["isError"] == true);
    CHECK(replies[id]["result"]["structuredContent"]["error"]["code"] == "corrupt_object");
  }
  for (const std::string& text : {status.out + status.err, fsck.out + fsck.err, replies[1].dump(), replies[2].dump()})
    CHECK(text.find(kSecret) == std::string::npos);
}

TEST_CASE("symlinked refs, log, lock, views and cache are never written through", "[e2e][hostile][store]") {
  const fs::path dir = store_copy("hostile-links");
  const fs::path svrev = dir / ".svrev", outside = scratch() / "hostile-outside";
  fs::remove_all(outside);
  fs::create_directories(outside);
  const std::string edit = bin("sv-edit") + " reverse-direction --rev HEAD --primitive-ids p_0001";

  SECTION("refs/heads") {
    fs::copy(svrev / "refs" / "heads", outside, fs::copy_options::recursive);  // what a follower would find
    fs::remove_all(svrev / "refs" / "heads");
    fs::create_directory_symlink(outside, svrev / "refs" / "heads");
    Run e = at(dir, edit);
    CHECK(e.status == 3);
    CHECK(e.err.find("corrupt_object") != std::string::npos);
    Run b = at(dir, bin("sv-commit") + " branch other");
    CHECK(b.status == 3);
    CHECK(!fs::exists(outside / "other"));
    CHECK(at(dir, bin("sv-commit") + " fsck").out.find("bad ref refs/heads") != std::string::npos);
    fs::remove(outside / "main");  // the copy, unchanged: nothing else may be there
  }
  SECTION("the log: the edit is applied, the outside file untouched, a warning says so") {
    const fs::path target = secret_file("log-target");
    fs::rename(svrev / "logs" / "HEAD", scratch() / "hostile-log-kept");
    fs::create_symlink(target, svrev / "logs" / "HEAD");
    Run e = at(dir, edit + " --note WRITTEN-THROUGH");
    INFO(e.out << e.err);
    REQUIRE(e.status == 0);
    const json env = json::parse(e.out);
    CHECK(head_of(dir) == env["revision_id"]);
    CHECK(env["warnings"].dump().find("log could not record it") != std::string::npos);
    CHECK(slurp(target) == std::string(kSecret) + "\n");
  }
  SECTION("the lock: refused, nothing created at its target") {
    fs::remove(svrev / "lock");
    fs::create_symlink(outside / "lockfile", svrev / "lock");
    Run e = at(dir, edit);
    CHECK(e.status == 3);
    CHECK(e.err.find("lock") != std::string::npos);
    CHECK(!fs::exists(outside / "lockfile"));
  }
  SECTION("views and cache: the read answers, nothing is written outside") {
    fs::remove_all(svrev / "views");
    fs::remove_all(svrev / "cache");
    fs::create_directory_symlink(outside, svrev / "views");
    fs::create_directory_symlink(outside, svrev / "cache");
    Run r = at(dir, bin("sv-simulate") + " render --rev HEAD");
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(json::parse(r.out)["warnings"].dump().find("not written into the store") != std::string::npos);
    Run l = at(dir, bin("sv-commit") + " list-revisions --include-metrics");
    CHECK(l.status == 0);
  }
  CHECK(empty_dir(outside));
}

TEST_CASE("a FIFO or /dev/zero in an object's place is corrupt_object at once, never a hang", "[e2e][hostile][store]") {
  const fs::path dir = store_copy("hostile-special");
  const fs::path obj = object_file(dir, head_of(dir));
  fs::remove(obj);
  SECTION("a symlink to /dev/zero") { fs::create_symlink("/dev/zero", obj); }
  SECTION("a FIFO") { REQUIRE(::mkfifo(obj.c_str(), 0644) == 0); }
  // timeout: a hang is exit 124, and fails the checks below instead of the whole run.
  Run show = at(dir, "timeout 20 " + bin("sv-commit") + " show HEAD");
  CHECK(show.status == 3);
  CHECK(show.err.find("corrupt_object") != std::string::npos);
  Run log = at(dir, "timeout 20 " + bin("sv-commit") + " log");
  CHECK(log.status == 0);  // the history lists, the damaged revision marked
  CHECK(log.out.find("UNREADABLE") != std::string::npos);
  auto replies = mcp_session(dir, {rpc_call(1, "GetTour"), {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}});
  CHECK(replies[1]["result"]["structuredContent"]["error"]["code"] == "corrupt_object");
  CHECK(replies[2]["result"] == json::object());
  // gc cannot know what the damaged revision names: it refuses, at once, and leaves the lock free.
  Run gc = at(dir, "timeout 20 " + bin("sv-commit") + " gc --expire 0");
  CHECK(gc.status == 3);
  CHECK(at(dir, "timeout 20 " + bin("sv-commit") + " branch after-gc " + head_of(dir).substr(0, 12)).status != 124);
  Run fsck = at(dir, "timeout 20 " + bin("sv-commit") + " fsck");
  CHECK(fsck.status == 3);
  CHECK(fsck.out.find("not an object") != std::string::npos);
}

TEST_CASE("revision fields are revision names, never paths (command line and MCP)", "[e2e][hostile][store]") {
  const fs::path dir = store_copy("hostile-revs");
  // A valid scene file: read as a path, it would be accepted.
  const fs::path scene = scratch() / "hostile-revs-scene.json";
  REQUIRE(at(dir, bin("sv-commit") + " show HEAD > " + scene.string()).status == 0);
  const std::string missing = (scratch() / "no-such-file.json").string();
  for (const std::string& path : {scene.string(), missing, std::string("/etc/passwd"), std::string("../hostile-revs-scene.json")}) {
    CAPTURE(path);
    Run r = at(dir, bin("sv-diagnose") + " list-primitives --rev '" + path + "'");
    CHECK(r.status == 4);
    CHECK(r.err.find("unknown revision") != std::string::npos);
    Run c = at(dir, bin("sv-simulate") + " compare-revisions --rev HEAD --revision-a '" + path + "'");
    CHECK(c.status == 4);
    CHECK(c.err.find("malformed") == std::string::npos);
  }
  // Every revision field of every tool, over MCP: an existing file and a missing one get the same
  // answer (no probing), and nothing is read.
  std::vector<json> requests;
  std::vector<std::pair<std::string, std::string>> asked;
  int id = 1;
  for (const sv::Tool& t : sv::registry()) {
    const json props = sv::request_schema(t)["properties"];
    for (const char* field : {"revision", "revision_id", "revision_a", "revision_b", "to_revision_id", "from_revision_id",
                              "final_revision_id"}) {
      if (!props.contains(field)) continue;
      for (const std::string& path : {scene.string(), missing}) {
        json args = {{field, path}};
        if (t.name == "Done") args["summary"] = "x";
        if (t.name == "ExportDrawing") args["format"] = "gcode";
        if (std::string(field) == "revision_b") args["revision_a"] = "HEAD";
        requests.push_back(rpc_call(id++, t.name, args));
        asked.emplace_back(t.name + "." + field, path);
      }
    }
  }
  REQUIRE(asked.size() >= 20);
  auto replies = mcp_session(dir, requests);
  for (size_t k = 0; k < asked.size(); ++k) {
    CAPTURE(asked[k].first, asked[k].second);
    const json& env = replies[static_cast<int>(k + 1)]["result"]["structuredContent"];
    CHECK(env["ok"] == false);
    CHECK(env["error"]["code"] == "not_found");
    CHECK(env["error"]["message"].get<std::string>().find("unknown revision") != std::string::npos);
  }
}

TEST_CASE("a scene whose source.path is a huge file, a FIFO or a device is not read", "[e2e][hostile][store]") {
  const fs::path dir = store_copy("hostile-source");
  json scene = json::parse(at(dir, bin("sv-commit") + " show HEAD").out);
  const fs::path huge = scratch() / "huge-source.png", fifo = scratch() / "fifo-source.png";
  REQUIRE(run("truncate -s 3G " + huge.string()).status == 0);  // sparse: costs nothing on disk
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  for (const std::string& path : {huge.string(), fifo.string(), std::string("/dev/zero")}) {
    CAPTURE(path);
    scene["source"]["path"] = path;
    const fs::path file = scratch() / "hostile-source.json";
    spit(file, scene.dump());
    // No store: the path is the only way to the source. /usr/bin/time -f %M: peak kilobytes.
    Run r = run(fmt::format("timeout 30 /usr/bin/time -f 'peak %M' {} get-source-image --no-store --embed-images {}",
                            bin("sv-diagnose"), file.string()));
    INFO(r.err);
    CHECK(r.status != 124);
    CHECK(r.err.find("source image is not in a store and cannot be read") != std::string::npos);
    long peak_kb = 0;
    if (auto p = r.err.rfind("peak "); p != std::string::npos) peak_kb = std::stol(r.err.substr(p + 5));
    CHECK(peak_kb < 256 * 1024);  // nothing of the gigabytes was read
  }
}

TEST_CASE("the ref move is the commit: a log that cannot be appended is a warning on the applied edit",
          "[e2e][hostile][store]") {
  const fs::path dir = store_copy("hostile-log");
  const fs::path log = dir / ".svrev" / "logs" / "HEAD";
  // The injected failure: a folder where the log file is, so opening it for append fails.
  fs::rename(log, dir / "log-kept");
  fs::create_directory(log);
  const std::string before = head_of(dir);
  Run e = at(dir, bin("sv-edit") + " reverse-direction --rev HEAD --primitive-ids p_0001");
  INFO(e.out << e.err);
  REQUIRE(e.status == 0);
  const json env = json::parse(e.out);
  CHECK(env["ok"] == true);
  CHECK(env["parent_revision_id"] == before);
  CHECK(head_of(dir) == env["revision_id"]);
  CHECK(env["warnings"].dump().find("log could not record it") != std::string::npos);
  CHECK(e.err.find("warning: refs/heads/main moved to") != std::string::npos);
  // The same in filter mode, and for a history tool.
  Run s = at(dir, bin("sv-commit") + " show HEAD | " + bin("sv-edit") + " reverse-direction --primitive-ids p_0002 > /dev/null");
  CHECK(s.status == 0);
  Run b = at(dir, bin("sv-commit") + " branch-revision --name side");
  CHECK(b.status == 0);
  CHECK(b.err.find("log could not record it") != std::string::npos);
  // The history still reads; fsck says what is wrong.
  CHECK(at(dir, bin("sv-commit") + " log").status == 0);
  Run f = at(dir, bin("sv-commit") + " fsck");
  CHECK(f.status == 3);
  CHECK(f.out.find("bad log logs/HEAD") != std::string::npos);
}

namespace hostile {
namespace {

// Runs `cmd` (a shell command) with `store_dir` read-only: a read-only bind mount in a mount
// namespace of its own where one can be made (root, or unprivileged user namespaces), else the
// files' write permission taken away (and, for root, whom permissions do not stop, the command
// run as nobody).
Run read_only(const fs::path& store_dir, const std::string& cmd) {
  static const bool namespaces = run("unshare -rm true").status == 0;
  const fs::path script = scratch() / "read-only.sh";
  spit(script, "cd " + store_dir.string() + " && " + cmd + "\n");
  if (namespaces)
    return run(fmt::format("unshare -rm sh -c 'mount --bind {0} {0} && mount -o remount,bind,ro {0} && exec sh {1}'",
                           store_dir.string(), script.string()));
  run("chmod -R a-w " + (store_dir / ".svrev").string());
  Run r = run((::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups sh " : "sh ") + script.string());
  run("chmod -R u+w " + (store_dir / ".svrev").string());
  return r;
}

}  // namespace
}  // namespace hostile

TEST_CASE("a read-only store answers every read tool, its views drawn in memory", "[e2e][hostile][store]") {
  const fs::path dir = store_copy("hostile-readonly");
  REQUIRE(read_only(dir, "touch .svrev/probe").status != 0);  // it is read-only
  const json scene = json::parse(at(dir, bin("sv-commit") + " show HEAD").out);
  const std::string first = scene["primitives"][0]["id"];
  std::vector<json> requests;
  std::vector<std::string> names;
  for (const sv::Tool& t : sv::registry()) {
    if (t.kind != sv::ToolKind::read && t.name != "ListRevisions") continue;
    json args = json::object();
    if (t.name == "GetPrimitive") args = {{"id", first}};
    if (t.name == "ExplainThreshold") args = {{"primitive_id", first}};
    if (t.name == "CompareRevisions") args = {{"revision_a", "HEAD"}};
    if (t.name == "AskOracle") args = {{"question", "what is it?"}};
    if (t.name == "ExportDrawing") args = {{"format", "gcode"}};
    if (t.name == "ListRevisions") args = {{"include_metrics", true}};
    if (t.name == "SimulateEdit") args = {{"edits", {{{"tool", "ReverseDirection"}, {"primitive_ids", {first}}}}}};
    names.push_back(t.name);
    requests.push_back(rpc_call(static_cast<int>(names.size()), t.name, args));
  }
  std::string lines;
  for (const auto& r : requests) lines += r.dump() + "\n";
  spit(dir / "read-tools.ndjson", lines);
  Run served = read_only(dir, bin("sv-mcp") + " < read-tools.ndjson");
  INFO(served.err.substr(0, 3000));
  REQUIRE(served.status == 0);
  std::map<int, json> by_id;
  for (json& r : json_lines(served.out)) by_id[r["id"].get<int>()] = r;
  REQUIRE(by_id.size() == names.size());
  for (size_t k = 0; k < names.size(); ++k) {
    CAPTURE(names[k]);
    const json& res = by_id[static_cast<int>(k + 1)]["result"];
    CHECK(res["isError"] == false);
    CHECK(res["structuredContent"].dump().find("io_error") == std::string::npos);
  }
  // The command line too: a view to --png, or into the store's folder (not writable: a warning).
  const fs::path png = scratch() / "readonly-render.png";
  Run to_png = read_only(dir, bin("sv-simulate") + " render --rev HEAD --png " + png.string());
  CHECK(to_png.status == 0);
  CHECK(fs::file_size(png) > 0);
  Run in_store = read_only(dir, bin("sv-diagnose") + " analyze-coverage --rev HEAD");
  CHECK(in_store.status == 0);
  CHECK(in_store.err.find("not written into the store") != std::string::npos);
  for (const char* c : {"fsck", "log", "status", "show HEAD"}) CHECK(read_only(dir, bin("sv-commit") + " " + c).status == 0);
}

TEST_CASE("gc collects views and caches, and reports what it freed", "[e2e][hostile][store]") {
  const fs::path dir = store_copy("hostile-gc-views");
  for (int i = 0; i < 3; ++i)
    REQUIRE(at(dir, bin("sv-simulate") + " render --rev HEAD" + (i == 0 ? "" : i == 1 ? " --show-ids" : " --color-by draw_order"))
                .status == 0);
  REQUIRE(at(dir, bin("sv-commit") + " list-revisions --include-metrics").status == 0);
  const fs::path views = dir / ".svrev" / "views";
  REQUIRE(!fs::is_empty(views));
  // Young ones stay (an agent may be about to open one); old ones go, whatever --expire says.
  json fresh = json::parse(at(dir, bin("sv-commit") + " --json gc --expire 0").out);
  CHECK(fresh["views_removed"] == 0);
  for (const auto& e : fs::recursive_directory_iterator(dir / ".svrev"))
    if (e.is_regular_file()) fs::last_write_time(e.path(), fs::last_write_time(e.path()) - std::chrono::minutes(2));
  json g = json::parse(at(dir, bin("sv-commit") + " --json gc --expire 0").out);
  CHECK(g["views_removed"].get<int>() >= 2);
  CHECK(g["bytes_freed"].get<long>() > 0);
  CHECK(fs::is_empty(views));
  // The metrics cache of a reachable revision stays; the store is whole.
  CHECK(at(dir, bin("sv-commit") + " fsck").status == 0);
}

TEST_CASE("gc --expire 0 during edits: no edit fails", "[e2e][hostile][store][concurrency]") {
  const fs::path dir = store_copy("hostile-gc-edits");
  std::atomic<bool> done{false};
  int gcs = 0, gc_failures = 0;
  std::thread collector([&] {
    while (!done) {
      gc_failures += at(dir, bin("sv-commit") + " gc --expire 0 >/dev/null").status != 0;
      ++gcs;
    }
  });
  const int edits = kSanitized ? 12 : 40;
  int failed = 0;
  std::string errors;
  for (int i = 0; i < edits; ++i) {
    Run e = at(dir, bin("sv-edit") + fmt::format(" define-region --rev HEAD --name g{} --region {},0,{},20", i, i, i + 20));
    if (e.status != 0) {
      ++failed;
      errors += e.err;
    }
  }
  done = true;
  collector.join();
  std::fprintf(stderr, "gc during edits: %d edits, %d failed; %d gc runs, %d failed\n", edits, failed, gcs, gc_failures);
  INFO(errors);
  CHECK(failed == 0);
  CHECK(gc_failures == 0);
  CHECK(gcs > 0);
  CHECK(at(dir, bin("sv-commit") + " fsck").status == 0);
}

TEST_CASE("fsck while writers write: never a false report", "[e2e][hostile][store][concurrency]") {
  // The short version of scripts/store_stress (8 writers for 30 s): 3 writers for about 3 s.
  const fs::path dir = store_copy("hostile-fsck");
  std::atomic<bool> done{false};
  std::atomic<int> writes{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 3; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; !done; ++i) {
        // Edits racing for HEAD (a conflict is a fine answer) and new branches appearing.
        const std::string cmd = i % 3 == 2 ? fmt::format("{} branch b{}-{} >/dev/null 2>&1", bin("sv-commit"), w, i)
                                           : fmt::format("{} define-region --rev HEAD --name w{}-{} --region 0,0,20,20 "
                                                         ">/dev/null 2>&1",
                                                         bin("sv-edit"), w, i);
        at(dir, cmd);
        ++writes;
      }
    });
  int runs = 0, false_reports = 0;
  std::string reports;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < until || runs < 5) {
    Run f = at(dir, bin("sv-commit") + " fsck");
    ++runs;
    if (f.status != 0) {
      ++false_reports;
      reports += f.out + f.err;
    }
  }
  done = true;
  for (auto& t : writers) t.join();
  std::fprintf(stderr, "fsck during writes: %d runs, %d false reports, %d writes\n", runs, false_reports, writes.load());
  INFO(reports);
  CHECK(false_reports == 0);
  CHECK(writes > 0);
  CHECK(at(dir, bin("sv-commit") + " fsck").status == 0);
}

TEST_CASE("refine reports every step it recorded even when its -o file cannot be written", "[e2e][hostile][store]") {
  const fs::path dir = scratch() / "hostile-refine";
  fs::remove_all(dir);
  fs::create_directories(dir);
  REQUIRE(at(dir, bin("sv-commit") + " init").status == 0);
  REQUIRE(at(dir, fmt::format("{} {} | {} | {} > /dev/null", bin("sv-skeleton"), data("hershey_futural_02_w4.png"),
                              bin("sv-fit"), bin("sv-route")))
              .status == 0);
  Run r = at(dir, bin("sv-edit") + " refine --rev HEAD --json --max-f1-1px-loss 0.3 --max-chamfer-gain 100 -o " +
                     (dir / "no-such-dir" / "out.json").string());
  CHECK(r.status == 3);
  const json env = json::parse(r.out);
  CHECK(env["error"]["code"] == "io_error");
  const json& steps = env["error"]["details"]["steps"];
  REQUIRE(!steps.empty());
  CHECK(env["error"]["details"]["revision_id"] == head_of(dir));
  CHECK(steps.back()["revision_id"] == head_of(dir));
  CHECK(env["error"]["message"].get<std::string>().find("is recorded and HEAD is at it") != std::string::npos);
}
